# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A scikit-learn search or cross-validation run as one planned operation.

A ledger checks each release before its pass; the fits of a
``GridSearchCV`` or a ``cross_val_score`` are releases of their own, so a
ledger checking them one by one refused the fit that crossed its budget
after the others had spent theirs (a trial's search was refused at its
refit, 98 % spent). Where the run's fits go one after another on the thread
that called it (``n_jobs=1``, the default), its frame is on each fold fit's
stack, and the first release that the fold's own estimator makes on a ledger
first plans every fit of the run and checks their sum (privacy-accounting.md,
Section 20.3, "A scikit-learn run checked whole"): each fit's figure is what
that fit plans, found by a *dry run* of it (a clone with the candidate's
parameters, fitted on each split's rows up to its reservation, where it
stops: validation and planning only, no noise drawn, nothing recorded). Past the
budget, that fit and every later release of the run on the ledger are
refused before their pass, nothing recorded. The refit's candidate is not
known before the run: the run is refused ahead only if it is refused
whichever candidate the refit takes, so an early refusal is one the
fit-by-fit checks would also make.

The run is named by its joblib ``Parallel``, which scikit-learn makes once
per call of a search's ``fit``, of ``cross_validate`` or of
``cross_val_predict``: held weakly, it names this run and no later one. The
same name says each distinct warning about a run once (scikit-learn's
per-fit ``catch_warnings`` defeats Python's once-per-location rule).

Fits in worker threads or processes do not see the run's frame and are
checked one at a time, as are runs whose fits take fit parameters, whose
search is not scikit-learn's grid or random search (successive halving, a
``_run_search`` of one's own: their candidates are not all known before the
first fit), runs inside an enclosing model selection, runs of more than
``_MAX_PLANNED`` dry runs, and fits whose releases are made by a part of the
fitted object (a plain ``Pipeline`` of ledgered steps).
"""

import copy
import math
import os
import sys
import threading
import weakref
from typing import NamedTuple

import numpy as np

from skforget import accounting
from skforget._validation import (
    _PASSING,
    _SEARCH_FILE,
    _VALIDATION_FILE,
    DRY_RUN,
    candidates_known_ahead,
    model_selection_fits,
)
from skforget.accounting import PrivacyBudgetExceeded

#: Per run (its ``Parallel``, weakly): {"verdicts": {id(ledger): (ledger,
#: refusal or None)}, "warned": set of texts}.
_RUNS = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()

_CROSS_VALIDATION = ("cross_validate", "cross_val_predict")
_FOLD_FUNCTIONS = ("_fit_and_score", "_fit_and_predict")
#: Dry runs beyond which a run is checked fit by fit (candidates x splits +
#: refits; LeaveOneOut on a large table has a split per row).
_MAX_PLANNED = 200


class _Planned(BaseException):
    """Stops a dry run at its first reservation, with what it would reserve
    (a BaseException: no ``except Exception`` on the way may take it)."""

    def __init__(self, owner, ledger, figure):
        super().__init__()
        self.owner, self.ledger, self.figure = owner, ledger, figure


def stop_dry_run(owner, ledger, figure):
    """At a reservation (``release_spending``): in a dry run, stop here and
    give the figure; otherwise do nothing."""
    if DRY_RUN.get() is not None:
        raise _Planned(owner, ledger, figure)


def in_dry_run():
    """Whether this call is a dry run's (its warnings are not the user's)."""
    return DRY_RUN.get() is not None


class _Run(NamedTuple):
    parallel: object     # the run's name
    fold: object         # the fold frame fitting the object, or None (a refit)
    evaluate: object     # a search's evaluate_candidates frame, or None
    top: object          # the search's fit, cross_validate or cross_val_predict
    exact: bool = True   # its candidates all known before its first fit


def _locate(owner=None):
    """The sequential run on this thread's stack, or None: a fold frame (its
    estimator ``owner``, if given), then the run's frame, with only the
    run's own scikit-learn frames between them."""
    frame, fold, evaluate = sys._getframe(1), None, None
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if f"{os.sep}sklearn{os.sep}" in path and not any(p in path for p in _PASSING):
            name, local = frame.f_code.co_name, frame.f_locals
            validation, search = path.endswith(_VALIDATION_FILE), _SEARCH_FILE in path
            if validation and name in _FOLD_FUNCTIONS:
                if fold is None and (owner is None or local.get("estimator") is owner):
                    fold = frame
            elif search and name == "evaluate_candidates":
                evaluate = evaluate or frame
            elif search and name == "fit" and hasattr(local.get("self"), "_run_search"):
                if "parallel" not in local:
                    return None
                return _Run(local["parallel"], fold, evaluate, frame,
                            candidates_known_ahead(local["self"]))
            elif validation and name in _CROSS_VALIDATION:
                return _Run(local.get("parallel"), fold, None, frame) \
                    if "parallel" in local else None
            elif not (search or validation):
                return None   # another meta-estimator's frame first
        frame = frame.f_back
    return None


def _state(run):
    return _RUNS.setdefault(run.parallel, {"verdicts": {}, "warned": set()})


def checked_whole(context, releaser):
    """Whether the run of this fit, whose release ``releaser`` makes, is
    checked whole (for the warning's words)."""
    size = model_selection_fits(context)
    if size is None or size.outer or not size.composes():
        return False
    run = _locate(releaser)
    if run is None or run.parallel is None or not run.exact:
        return False
    if run.fold is None:   # a refit: its run was planned at a fold, or not
        with _LOCK:
            return any(v[2] for v in _state(run)["verdicts"].values())
    return _fit_params_free(run) and _plan_shape(run) is not None


def first_warning(text):
    """Whether ``text``, a warning about the sequential run this fit belongs
    to, is said now: once per run and text (candidates of other figures say
    their own), always where no run is on this stack (a worker's fit)."""
    run = _locate()
    if run is None or run.parallel is None:
        return True
    with _LOCK:
        warned = _state(run)["warned"]
        if text in warned:
            return False
        warned.add(text)
    return True


def _fit_params_free(run):
    params = run.fold.f_locals.get("fit_params")
    return not params or all(v is None for v in dict(params).values())


def check_whole_run(ledger, label, owner, context, isolate):
    """Before the first release a sequential run's fold estimator ``owner``
    makes on ``ledger``, plan every fit of the run and refuse (raise
    :class:`PrivacyBudgetExceeded`, nothing recorded) if their sum would
    pass the budget; every later release of a refused run on the ledger is
    refused too. ``isolate`` runs a function outside the current releasing
    call. (A dry run never gets here: :func:`stop_dry_run` comes first.)"""
    size = model_selection_fits(context)
    if size is None or size.outer or not size.composes():
        return
    run = _locate(owner)
    if run is None or run.parallel is None or not run.exact:
        return
    with _LOCK:
        seen = _state(run)["verdicts"].get(id(ledger))
    if seen is None:
        if run.fold is None or not _fit_params_free(run):
            return   # a refit (its run was planned at a fold, or not at all)
        planned, refusal = isolate(lambda: _verdict(ledger, label, owner, run))
        with _LOCK:
            # The ledger is held with its verdict: its id names no other.
            seen = _state(run)["verdicts"].setdefault(
                id(ledger), (ledger, refusal, planned))
    refusal = seen[1]
    if refusal is not None:
        raise type(refusal)(str(refusal))


def _plan_shape(run):
    """``(base, candidates, refit, splits)`` of the run, or None where its
    fits cannot all be planned ahead (more than ``_MAX_PLANNED`` dry runs)."""
    top = run.top.f_locals
    search = top.get("self") if run.evaluate is not None else None
    if search is not None:
        base = top.get("base_estimator")
        candidates = list(run.evaluate.f_locals.get("candidate_params") or ())
        refit = search.refit is not False
    else:
        base, candidates, refit = top.get("estimator"), [{}], False
    if base is None or not candidates:
        return None
    limit = _MAX_PLANNED // len(candidates) - int(refit)
    splits = _splits(run, limit)
    if not splits:
        return None
    return base, candidates, refit, splits


def _splits(run, limit):
    """The run's training index arrays, or None past ``limit`` of them."""
    evaluate = run.evaluate.f_locals if run.evaluate else {}
    top = run.top.f_locals
    given = evaluate.get("cv_splits", top.get("splits", top.get("indices")))
    if isinstance(given, list):
        return [train for train, _ in given] if len(given) <= limit else None
    cv = evaluate.get("cv") or top.get("cv")
    fold = run.fold.f_locals
    if not hasattr(cv, "split") or limit < 1:
        return None
    # Only splitters that draw without the rows get here (composes()): a copy
    # splits again, so a RandomState the user gave it is not advanced, and
    # NumPy's global generator (random_state=None) is put back. Without a
    # seed the copy's folds are other folds of the same sizes.
    state = np.random.get_state()
    try:
        out = []
        for train, _ in copy.deepcopy(cv).split(fold.get("X"), fold.get("y")):
            out.append(train)
            if len(out) > limit:
                return None
        return out
    finally:
        np.random.set_state(state)


def _dry_figure(base, params, X, y, train, ledger):
    """What a fit of ``base`` with ``params`` on rows ``train`` reserves on
    ``ledger``: a figure dict, {} for none (it fails first, or releases on no
    ledger), or None when it cannot be told (a part of it releases first)."""
    from sklearn.base import clone
    from sklearn.utils import _safe_indexing

    estimator = clone(base)
    if params:
        estimator.set_params(**clone(params, safe=False))
    X_train = _safe_indexing(X, train)
    y_train = None if y is None else _safe_indexing(y, train)
    # skforget's warnings are silent in a dry run (_validation.warn: a
    # context variable, where a warnings filter would be every thread's);
    # scikit-learn's own, if any, are the real fit's too.
    token = DRY_RUN.set(estimator)
    try:
        estimator.fit(X_train, y_train)
    except _Planned as planned:
        if planned.owner is not estimator:
            return None
        return planned.figure if planned.ledger is ledger else {}
    except Exception:  # noqa: BLE001 - the real fit fails alike, releasing nothing
        return {}
    finally:
        DRY_RUN.reset(token)
    return None   # trained without a reservation: not a fit this reads


def _verdict(ledger, label, owner, run):
    """``(planned, refusal)``: whether the whole run on ``ledger`` could be
    planned, and its refusal or None."""
    from sklearn.utils.validation import _num_samples

    shape = _plan_shape(run)
    if shape is None:
        return False, None
    base, candidates, refit, splits = shape
    fold = run.fold.f_locals
    X, y = fold.get("X"), fold.get("y")
    # Every split is planned: a split's rows may change its fit's figure
    # beyond their number (a label set read from them, a class a fold lacks).
    parts, refits = [], []
    for params in candidates:
        for train in splits:
            got = _dry_figure(base, params, X, y, train, ledger)
            if got is None:
                return False, None
            parts.append(got)
        if refit:
            got = _dry_figure(base, params, X, y, np.arange(_num_samples(X)),
                              ledger)
            if got is None:
                return False, None
            refits.append(got)
    parts = [p for p in parts if p]
    m = len(splits) * len(candidates) + int(refit)
    whole = f"The run of {m} fits of {label}"
    # The scores choose the refit's candidate: refused ahead only if the run
    # is refused whichever it is (a candidate whose refit fails counts 0).
    endings = [[r] if r else [] for r in refits] or [[]]
    if not parts:
        return False, None
    refusals = [_refusal(ledger, whole, m, parts + end, owner, refit)
                for end in endings]
    if any(r is _UNPLANNED for r in refusals):
        return False, None
    return True, (None if any(r is None for r in refusals) else refusals[0])


def _floor3(x):
    """``x`` (positive) rounded down to three significant digits (an advised
    epsilon must not round up past what fits)."""
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return f"{math.floor(x / step) * step:.3g}"


#: What _refusal gives for parts that do not compose as one figure.
_UNPLANNED = object()


def _refusal(ledger, whole, m, parts, owner, refit):
    """The refusal of the composed ``parts`` on ``ledger`` now, None, or
    ``_UNPLANNED`` where they do not compose as one figure."""
    for key in ("relation", "group_size"):
        if len({p.get(key) for p in parts}) > 1:
            return _UNPLANNED   # candidates accounted apart: each fit says so
    curves = [p.get("curve") for p in parts if p.get("curve") is not None]
    curve = None if not curves else sum(
        np.asarray(c(accounting.LEDGER_ORDERS) if callable(c) else c, dtype=float)
        for c in curves)
    delta = math.fsum(float(p.get("delta") or 0.0) for p in parts)
    if delta >= 1.0:
        return _UNPLANNED   # no statement at all; the fits' own checks refuse them
    gaussian = all(p.get("gaussian", False) for p in parts)
    try:
        ledger.check(rho=math.fsum(float(p.get("rho") or 0.0) for p in parts),
                     curve=curve, relation=parts[0].get("relation"),
                     group_size=parts[0].get("group_size"), label=whole,
                     gaussian=gaussian, delta=delta,
                     noise=tuple(k for p in parts for k in p.get("noise", ())
                                 if k is not None))
    except PrivacyBudgetExceeded as exc:
        text = (f"{exc} Its fits were planned together before the first "
                + ("(and refused whichever candidate its refit takes) "
                   if refit else "")
                + "and all are refused, nothing of the run recorded.")
        plain = type(exc) is PrivacyBudgetExceeded and curve is None \
            and delta == 0.0 and gaussian and hasattr(owner, "_dp_conversion") \
            and "same noise" not in str(exc)
        each = ledger.remaining(m) if plain else 0.0
        if each > 0.0:
            # At the ledger's delta: a fit's own (delta="auto" is 1e-5 up to
            # 35,000 rows) reads the same epsilon as a larger figure.
            text += (f" The ledger has room for {m} fits of epsilon "
                     f"{_floor3(each)} each at delta {ledger.delta:.2g} "
                     f"(ledger.remaining({m})): the estimator given "
                     f"epsilon={_floor3(each)}, delta={ledger.delta:.2g} fits "
                     "them all.")
        elif plain:
            text += " The ledger has no room left for another such fit."
        return type(exc)(text)
    return None
