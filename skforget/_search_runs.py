# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A scikit-learn search or cross-validation run as one planned operation.

A ledger checks each release before its pass; the fits of a
``GridSearchCV`` or a ``cross_val_score`` are releases of their own, so a
ledger checking them one by one refused the fit that crossed its budget
after the others had spent theirs (a trial's search was refused at its
refit, 98 % spent). Where the run's fits go one after another on the thread
that called it (``n_jobs=1``, the default), its frame is on each fit's
stack, and the first fit that reserves on a ledger checks all of the run's
fits together first (privacy-accounting.md, Section 20.4): past the budget,
that fit and every later one of the run are refused before their pass, so
nothing of the run is recorded. Worker threads and processes do not see the
run's frame; their fits are checked one at a time, as before.

The run is named by its joblib ``Parallel``, which scikit-learn makes once
per call of a search's ``fit``, of ``cross_validate`` or of
``cross_val_predict``: held weakly, it names this run and no later one. The
same name says a run's warning once (scikit-learn's per-fit
``catch_warnings`` defeats Python's once-per-location rule).
"""

import math
import os
import sys
import threading
import weakref

import numpy as np

from skforget import accounting
from skforget._validation import (
    _PASSING,
    _SEARCH_FILE,
    _VALIDATION_FILE,
    model_selection_fits,
)
from skforget.accounting import PrivacyBudgetExceeded

#: Per run (its ``Parallel``, weakly): {"verdicts": {(id(ledger), label):
#: (ledger, refusal or None)}, "warned": set of names}.
_RUNS = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()

_CROSS_VALIDATION = ("cross_validate", "cross_val_predict")


def sequential_run():
    """The joblib ``Parallel`` of the innermost scikit-learn search or
    cross-validation whose frame is on this thread's stack, or None.

    Found only where its fits run on this stack, one after another: a fit in
    a worker thread or process does not see it, and a scikit-learn frame
    that is neither (another meta-estimator) stops the search."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if f"{os.sep}sklearn{os.sep}" in path and not any(p in path for p in _PASSING):
            name, local = frame.f_code.co_name, frame.f_locals
            if (_SEARCH_FILE in path and name == "fit"
                    and hasattr(local.get("self"), "_run_search")) or (
                    path.endswith(_VALIDATION_FILE) and name in _CROSS_VALIDATION):
                return local.get("parallel")
            if _SEARCH_FILE not in path and not path.endswith(_VALIDATION_FILE):
                return None
        frame = frame.f_back
    return None


def whole_run(context=()):
    """``(run, fits)``: the sequential run this fit belongs to and its number
    of fits, when the run can be checked whole; None otherwise.

    Checked whole: a search with a grid or a number of draws (not successive
    halving, whose later iterations are not known yet), or a
    cross-validation, whose candidates all share this fit's figure (a grid
    over ``epsilon`` does not), at the outermost level (an enclosing model
    selection repeats the run), with folds drawn without the rows (others
    are refused anyway)."""
    size = model_selection_fits(context)
    if size is None or not size.n_splits or size.halving or size.varies \
            or size.outer or not size.composes():
        return None
    run = sequential_run()
    if run is None:
        return None
    return run, size.n_candidates * size.n_splits + int(size.refit)


def _scaled_curve(curve, m):
    if curve is None:
        return None
    values = curve(accounting.LEDGER_ORDERS) if callable(curve) else curve
    return m * np.asarray(values, dtype=np.float64)


def _floor3(x):
    """``x`` rounded down to three significant digits (an advised epsilon
    must not round up past what fits)."""
    if not x > 0 or math.isinf(x):
        return f"{x:.3g}"
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return f"{math.floor(x / step) * step:.3g}"


def check_whole_run(ledger, label, context, figure):
    """Before the first release of ``label`` on ``ledger`` in a run that can
    be checked whole (:func:`whole_run`), check all of its fits together;
    raise :class:`PrivacyBudgetExceeded` (nothing recorded) if they would not
    fit, and again at every later fit of the run. ``figure``: the keywords of
    one fit's reservation (``rho``, ``curve``, ``gaussian``, ``delta``,
    ``noise``, ``relation``, ``group_size``); the fits of one run share it
    (their hyper-parameters do not set it), so ``m`` fits compose to ``m``
    times it (privacy-accounting.md, 20.2)."""
    found = whole_run(context)
    if found is None:
        return
    run, m = found
    key = (id(ledger), label)
    with _LOCK:
        state = _RUNS.setdefault(run, {"verdicts": {}, "warned": set()})
        seen = state["verdicts"].get(key)
        if seen is None:
            refusal = _refusal(ledger, label, m, figure)
            # The ledger is held with its verdict: its id names no other.
            state["verdicts"][key] = seen = (ledger, refusal)
    refusal = seen[1]
    if refusal is not None:
        raise type(refusal)(str(refusal))


def _refusal(ledger, label, m, figure):
    """The refusal of ``m`` such fits on ``ledger`` now, or None."""
    whole = f"All {m} fits of {label}"
    noise = tuple(k for k in figure.get("noise", ()) if k is not None)
    if noise and m > 1:
        return PrivacyBudgetExceeded(
            f"{whole} would draw the same seeded noise (one integer "
            "random_state, copied by clone into every fit): two releases with "
            "equal noise can be compared to cancel it, and no figure covers "
            "them together (privacy-accounting.md, 10.3, 20.4). Refused before "
            "the first fit, nothing recorded: give random_state=None.")
    delta = float(figure.get("delta", 0.0) or 0.0)
    if m * delta >= 1.0:
        return None   # no statement at all; the fits' own checks refuse them
    try:
        ledger.check(rho=m * float(figure.get("rho") or 0.0),
                     curve=_scaled_curve(figure.get("curve"), m),
                     relation=figure.get("relation"),
                     group_size=figure.get("group_size"), label=whole,
                     gaussian=bool(figure.get("gaussian", False)),
                     delta=m * delta, noise=noise)
    except PrivacyBudgetExceeded as exc:
        each = ledger.remaining(m)
        return type(exc)(
            f"{exc} Refused before the first fit, nothing recorded: each of "
            f"the {m} fits may spend epsilon {_floor3(each)} at delta "
            f"{ledger.delta:.2g} (give the estimator that epsilon), or tune "
            "with skforget.model_selection.PrivateSearchCV, which spends one "
            "figure for the whole search.")
    return None


def first_warning(name):
    """Whether the warning ``name`` gives about the sequential run this fit
    belongs to is said now: once per run, and always where no run is on
    this stack (a worker's fit)."""
    run = sequential_run()
    if run is None:
        return True
    with _LOCK:
        state = _RUNS.setdefault(run, {"verdicts": {}, "warned": set()})
        if name in state["warned"]:
            return False
        state["warned"].add(name)
    return True
