# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Parameter constraints shared by the estimators, and noise streams.

This is the only module that imports scikit-learn's private parameter-validation
helpers (the estimators take ``Interval`` and ``StrOptions`` from here), so a
change there touches one file; tests/test_layers.py checks it.
"""

import contextlib
import contextvars
import functools
import hashlib
import itertools
import math
import os
import sys
import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from skforget.exceptions import PrivacyBudgetWarning, PrivacyLeakWarning

# Appended: a filter the user set before importing skforget (to ignore or
# raise these) keeps precedence (a trial's was overridden by the import).
# Once per distinct message: a grid search would otherwise repeat the same
# figure for every one of its fits. Before the next: a PrivacyBudgetWarning
# is a PrivacyLeakWarning.
warnings.simplefilter("once", PrivacyBudgetWarning, append=True)
warnings.simplefilter("always", PrivacyLeakWarning, append=True)

#: Noisy GD only: deletions served without a pass (privacy-accounting.md, 12.9).
LAZY_CONSTRAINTS = {
    "max_lazy_records": [Interval(Integral, 0, None, closed="left"),
                         StrOptions({"auto"})],
}

PRIVACY_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="neither")],
    "delta": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
    "deletion_epsilon": [Interval(Real, 0, None, closed="neither"), None],
    "max_edit_size": [Interval(Integral, 1, None, closed="left")],
    "max_sample_weight": [Interval(Real, 0, None, closed="neither")],
    "group_size": [Interval(Integral, 1, None, closed="left")],
    "relation": [StrOptions({"replace", "zero_out"})],
    "data_norm": [Interval(Real, 0, None, closed="neither")],
    "clip_rows": ["boolean"],
    "clip_norm": [Interval(Real, 0, None, closed="neither"), None],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [Interval(Real, 0, None, closed="neither"),
                          StrOptions({"auto"})],
    "learning_rate": [Interval(Real, 0, None, closed="neither"), None],
    "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                   None],
    "recipe": [StrOptions({"tight", "cs23"})],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
    # As in scikit-learn: a positive count, or -1, -2, ... for all CPUs but some.
    "n_jobs": [Interval(Integral, 1, None, closed="left"),
               Interval(Integral, None, -1, closed="right"), None],
    # A skforget.accounting.PrivacyLedger (privacy-accounting.md, Section 20).
    "ledger": [HasMethods(["spending", "reserve", "settle", "cancel"]), None],
}


_SKFORGET_DIR = os.path.dirname(os.path.abspath(__file__))
# Our context managers run their bodies from contextlib's frames.
_CONTEXTLIB = os.path.abspath(contextlib.__file__)


def _is_library_frame(filename):
    # skforget itself, or the scikit-learn machinery between the user and us
    # (fit decorators, Pipeline, meta-estimators), and joblib's, which runs
    # cross_val_score's folds (a warning pointed into joblib/parallel.py).
    path = os.path.abspath(filename)
    return (path.startswith(_SKFORGET_DIR + os.sep) or path == _CONTEXTLIB
            or f"{os.sep}sklearn{os.sep}" in path or f"{os.sep}joblib{os.sep}" in path)


#: Set while a dry run plans a scikit-learn run's fit (_search_runs), whose
#: warnings the real fit says: a context variable, not a warnings filter, which
#: all threads share (two threads left an "ignore" at the filters' head).
DRY_RUN = contextvars.ContextVar("skforget_dry_run", default=None)


def warn(message, category=UserWarning, stacklevel=1):
    """``warnings.warn`` for skforget's warnings, silent in a dry run;
    ``stacklevel`` counts from the caller, as ``warnings.warn``'s does."""
    if DRY_RUN.get() is None:
        warnings.warn(message, category, stacklevel=stacklevel + 1)


def user_stacklevel():
    """``stacklevel`` for ``warnings.warn`` that points at the caller's own line.

    Counts the frames, from the caller of this function outwards, that belong to
    skforget or scikit-learn; a fixed stacklevel would point inside a decorator
    that differs between scikit-learn versions.
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and _is_library_frame(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


_MODEL_SELECTION = f"{os.sep}sklearn{os.sep}model_selection{os.sep}"
_CALIBRATION = f"{os.sep}sklearn{os.sep}calibration.py"


def sklearn_caller():
    """Which scikit-learn meta-estimator runs this fit, from the call stack
    (public: the caller's code): "calibration" (``CalibratedClassifierCV``),
    "model_selection" (``GridSearchCV``, ``cross_val_score``, ...) or None."""
    frame = sys._getframe(1)
    found = None
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if path.endswith(_CALIBRATION):
            return "calibration"
        if _MODEL_SELECTION in path:
            found = "model_selection"
        frame = frame.f_back
    return found


def _enclosing_search(frame):
    """The search object whose ``fit`` is on the stack above ``frame``."""
    frame = frame.f_back
    while frame is not None:
        if frame.f_code.co_name == "fit" and _MODEL_SELECTION in \
                os.path.abspath(frame.f_code.co_filename):
            search = frame.f_locals.get("self")
            if hasattr(search, "refit"):
                return search
        frame = frame.f_back
    return None


class Level(NamedTuple):
    """One scikit-learn level a fit runs in (public: the caller's arguments).
    ``kind`` says how its folds are drawn (:func:`_split_kind`): "partition"
    (every record held out exactly once, by position or a permutation drawn
    without the rows: ``KFold``, ``LeaveOneOut``), "positional" (positions or
    such a permutation, a record possibly in every fit: ``ShuffleSplit``,
    ``RepeatedKFold``, ``TimeSeriesSplit``, ``LeavePOut``), "labels" (they read
    ``y``: a stratified splitter, or ``cv=<int>`` for a classifier) or
    "unknown" (groups, index lists, other classes, a meta-estimator whose
    fits are not read: ``validation_curve``, ``CalibratedClassifierCV``,
    ``RFECV``, ...). ``in_fold``: a fold's fit, not a search's refit on its
    input. ``varies``, ``halving``: the search's grid sets a fit's figure, or
    it is a successive-halving iteration."""

    n_candidates: int
    n_splits: int
    refit: bool
    kind: str
    in_fold: bool
    name: str
    varies: bool = False
    halving: bool = False
    owner: str = ""
    ident: int = 0
    token: tuple = ()
    accept: frozenset = frozenset()

    @property
    def unseen(self):
        """A placeholder for a dispatcher this stack does not show."""
        return self.name in UNSEEN_SPLITTERS


class ModelSelectionFits(NamedTuple):
    """The innermost :class:`Level` a fit runs in, and the kinds of the
    enclosing ones (``outer``)."""

    n_candidates: int
    n_splits: int
    refit: bool
    split: str
    in_fold: bool
    splitter: str = ""
    outer: tuple = ()
    varies: bool = False
    halving: bool = False
    owner: str = ""

    def fits_per_record(self, group_size=1):
        """How many of this level's fits train on one unit, at most: a
        partition holds one record out once per candidate (not a unit of
        several records, which it may spread over the folds)."""
        held_out = self.n_candidates if self.split == "partition" and \
            group_size == 1 else 0
        return self.n_candidates * self.n_splits - held_out + int(self.refit)

    def composes(self):
        """Whether the fits' figures add as one statement (20.4): folds drawn
        without the rows at every level this fit runs in."""
        kinds = ((self.split,) if self.in_fold else ()) + self.outer
        return all(kind in ("partition", "positional") for kind in kinds)


_STRATIFIED = ("StratifiedKFold", "RepeatedStratifiedKFold", "StratifiedShuffleSplit",
               "StratifiedGroupKFold")


def _split_kind(cv, estimator, y):
    """``(kind, name)`` for the splitter ``cv`` (as given to a search, or
    resolved by ``check_cv``) over ``estimator`` (see :class:`Level`), and the
    splitter in words. Exact classes only: a subclass may draw its folds
    otherwise."""
    from sklearn import model_selection as ms

    if cv is None or isinstance(cv, Integral):
        # check_cv's rule: a classifier on binary or multiclass targets gets a
        # StratifiedKFold, anything else a KFold (read from the type of y,
        # whose values only the labels' kind decides).
        from sklearn.base import is_classifier
        from sklearn.utils.multiclass import type_of_target

        stratified = is_classifier(estimator) and y is not None and \
            type_of_target(y) in ("binary", "multiclass")
        given = f"cv={5 if cv is None else int(cv)}"
        return (("labels", f"{given} for a classifier, which scikit-learn makes a "
                 "StratifiedKFold") if stratified else ("partition", given))
    name = type(cv).__name__
    if type(cv) in (ms.KFold, ms.LeaveOneOut):
        return "partition", name
    if type(cv) in (ms.ShuffleSplit, ms.RepeatedKFold, ms.TimeSeriesSplit,
                    ms.LeavePOut):
        return "positional", name
    if name == "_SubsampleMetaSplitter":
        # A halving search's iteration: a random subsample of its folds'
        # training rows, drawn without the rows (resample by position).
        kind, base = _split_kind(getattr(cv, "base_cv", None), estimator, y)
        return ("positional" if kind in ("partition", "positional") else kind), base
    return ("labels" if name in _STRATIFIED else "unknown"), name


_UNSEEN = "a splitter this process cannot see"
_DISPATCHED = "a splitter joblib's dispatch thread cannot see"
#: The names a level takes when its dispatcher is not on this stack.
UNSEEN_SPLITTERS = (_UNSEEN, _DISPATCHED)

#: scikit-learn modules that run a fit on its input as given (wrappers,
#: pipelines, utilities), where no level is read.
_PASSING = tuple(f"{os.sep}sklearn{os.sep}{part}" for part in (
    "base.py", "pipeline.py", f"compose{os.sep}", f"utils{os.sep}",
    f"externals{os.sep}", f"frozen{os.sep}", "_config.py",
    f"model_selection{os.sep}_split.py"))
#: Functions of a search's or cross-validation's modules that pass a fit on.
_PASSING_FUNCTIONS = frozenset({
    "_run_search", "cross_val_score", "<listcomp>",
    "_warn_or_raise_about_fit_failures", "_insert_error_scores", "_score",
    "_aggregate_score_dicts", "_normalize_score_results", "_fit_and_score"})
_SEARCH_FILE = f"{_MODEL_SELECTION}_search"
_VALIDATION_FILE = f"{_MODEL_SELECTION}_validation.py"


def _candidates(search):
    """A search's number of candidates, before it runs them (0 where its
    grid does not say: successive halving)."""
    from sklearn.model_selection import ParameterGrid

    if "Halving" in type(search).__name__:
        return 0
    if getattr(search, "param_grid", None) is not None:
        return len(ParameterGrid(search.param_grid))
    return int(getattr(search, "n_iter", 0) or 0)


def _search_level(search, n_candidates, n_splits, cv, y, in_fold):
    estimator = getattr(search, "estimator", None)
    kind, name = _split_kind(cv, estimator, y)
    given = getattr(search, "cv", None)
    if given is None or isinstance(given, Integral):   # as the user wrote it
        name = _split_kind(given, estimator, y)[1]
    # A splitter of unknown kind may count private groups: not kept.
    n_splits = int(n_splits or 0) if kind != "unknown" else 0
    return Level(int(n_candidates), n_splits,
                 getattr(search, "refit", False) is not False, kind, in_fold, name,
                 _varies_the_figure(search), "Halving" in type(search).__name__,
                 type(search).__name__, id(search))


def _unseen(owner, name=None, accept=frozenset()):
    """A level whose splitter this stack does not show, of a search ("search")
    or a cross-validation ("cross-validation"): a fold's frame whose
    dispatcher is in another thread or process (``_UNSEEN``; ``accept``: the
    tokens of the cross-validation levels its fold's estimator carries), or a
    fold's clone made in joblib's dispatch thread (``_DISPATCHED``)."""
    return Level(1, 0, False, "unknown", True, name or _UNSEEN, owner=owner,
                 accept=accept)


_READS = itertools.count()


def _carried_tokens(estimator):
    """The tokens of the cross-validation levels read where ``estimator`` (a
    fold's, as its dispatcher cloned it) and its parameters were cloned: each
    object's innermost cross-validation level, if read. Those alone were
    drawn by that fold's dispatcher; an inherited one was not (the sixth
    reading passed a stale model as a parameter, whose clone inherited its
    token, then fitted the stale model's own clone)."""
    objects = [estimator]
    try:
        objects += list(estimator.get_params(deep=True).values())
    except Exception:  # noqa: BLE001 - an object without parameters
        pass
    tokens = set()
    for obj in objects:
        levels = getattr(obj, "__dict__", {}).get("_selection_context", ())
        first = next((level for level in levels
                      if level.owner == "cross-validation"), None)
        if first is not None and first.token:
            tokens.add(first.token)
    return frozenset(tokens)


def _levels(frame):
    """The scikit-learn levels on the stack from ``frame`` up, innermost
    first (:class:`Level`). A search's fold fits and its ``fit`` are one
    level; a scikit-learn frame that is neither a level nor passing a fit on
    is a level of kind "unknown" (fail-closed)."""
    levels, seen = [], set()
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        name = frame.f_code.co_name
        local = frame.f_locals
        if f"{os.sep}sklearn{os.sep}" not in path or any(p in path for p in _PASSING):
            pass
        elif _SEARCH_FILE in path:
            search = local.get("self")
            if name == "<genexpr>" and not any(
                    f.f_code.co_name == "evaluate_candidates" for f in _above(frame)):
                # A fold's clone made where joblib dispatches it from a thread
                # of its own: its search is the base clone's (inherited).
                levels.append(_unseen("search", _DISPATCHED))
            elif name == "evaluate_candidates" and id(search) not in seen:
                seen.add(id(search))
                levels.append(_search_level(
                    search, len(local.get("candidate_params") or ()),
                    local.get("n_splits", getattr(search, "n_splits_", 0)),
                    local.get("cv"), local.get("y"), True))
            elif name == "fit" and hasattr(search, "_run_search") \
                    and id(search) not in seen:
                # After its candidates, the search's refit on its input; before
                # them, the clone its folds' clones are made from (whose
                # context they inherit where joblib dispatches them from a
                # thread of its own). The number of splits is a local of
                # ``fit`` before scikit-learn 1.9, its ``n_splits_`` since.
                seen.add(id(search))
                refit = "all_candidate_params" in local
                levels.append(_search_level(
                    search, len(local["all_candidate_params"]) if refit
                    else _candidates(search),
                    local.get("n_splits", getattr(search, "n_splits_", 0)),
                    local.get("cv_orig", search.cv), local.get("y"), not refit))
        elif path.endswith(_VALIDATION_FILE):
            cand, split = local.get("candidate_progress"), local.get("split_progress")
            if name == "_fit_and_score" and cand and split:
                # A search's fold fit in a worker: scikit-learn >= 1.7 passes
                # the search as ``caller`` (before, its ``fit`` is above, in
                # this process only).
                search = local.get("caller") or _enclosing_search(frame)
                if search is None:
                    levels.append(_unseen("search"))
                elif id(search) not in seen:
                    seen.add(id(search))
                    levels.append(_search_level(search, cand[1], split[1],
                                                search.cv, local.get("y"), True))
            elif name in ("cross_validate", "cross_val_predict") and \
                    hasattr(local.get("cv"), "get_n_splits"):
                cv = local["cv"]
                kind, label = _split_kind(cv, local.get("estimator"), local.get("y"))
                try:   # the caller's splitter, with the caller's arguments
                    n = int(cv.get_n_splits(local.get("X"), local.get("y"),
                                            local.get("groups")))
                except Exception:  # noqa: BLE001 - a size we cannot read
                    n, kind = 0, "unknown"
                level = Level(1, n if kind != "unknown" else 0, False, kind, True,
                              label, owner="cross-validation", ident=id(cv),
                              token=(os.getpid(), next(_READS)))
                # The fold frames below it (its dispatch, its fit) are its own.
                for i in range(len(levels) - 1, -1, -1):
                    if levels[i].owner == "cross-validation" and levels[i].unseen:
                        levels[i] = level
                        break
                else:
                    levels.append(level)
            elif name in ("_fit_and_score", "_fit_and_predict", "<genexpr>") and \
                    not (levels and levels[-1].owner == "cross-validation"
                         and levels[-1].unseen):
                # A cross-validation's fold (its fit, or its dispatch at clone
                # time), whose frame must be above, else in another thread.
                levels.append(_unseen("cross-validation", _DISPATCHED) if
                              name == "<genexpr>" else _unseen(
                                  "cross-validation", _UNSEEN,
                                  _carried_tokens(local.get("estimator"))))
            elif name not in _PASSING_FUNCTIONS:
                levels.append(Level(1, 0, False, "unknown", True, f"{name}()"))
        elif not (name in ("fit", "_fit") and type(local.get("self")).__name__
                  == "FixedThresholdClassifier"):
            # Any other scikit-learn meta-estimator (calibration, RFECV,
            # validation_curve, ...): its fits are not read here.
            owner = type(local.get("self")).__name__ if "self" in local else name
            levels.append(Level(1, 0, False, "unknown", True, owner))
        frame = frame.f_back
    return levels


def _above(frame):
    frame = frame.f_back
    while frame is not None:
        yield frame
        frame = frame.f_back


def _key(level):
    return level.owner, level.name, level.kind, level.ident


def _resolve(levels, known):
    """``levels`` with each level this stack could not see replaced by its
    dispatcher's level from ``known`` (a clone's context), then the rest of
    ``known``: a search's fold by the innermost search level, if read (a
    search's base clone leads its folds' contexts); a cross-validation's fold
    by the cross-validation level whose token its fold's estimator carries
    (read when that dispatcher cloned it). A cross-validation fold's clone
    made in joblib's dispatch thread is never resolved, and what is not
    resolved stays of unknown kind: an inherited level need not be the
    dispatcher (a stale one, an enclosing cross-validation's). Fail-closed."""
    pool, out = list(known), []
    for level in levels:
        if level.owner == "cross-validation" and level.name == _UNSEEN:
            # Only a level its fold's estimator carries was read by that
            # fold's dispatcher (fifth reading: a stale one, inherited by a
            # clone user code made inside the fold, was taken for it).
            match = next((c for c in pool if c.owner == "cross-validation"
                          and c.token and c.token in level.accept), None)
        elif level.owner == "search" and level.unseen:
            match = next((c for c in pool if c.in_fold
                          and c.owner != "cross-validation"), None)
        else:
            match = None
        if match is not None:
            pool.remove(match)
            if not match.unseen:
                level = match
        out.append(level)
    keys = {_key(level) for level in out}
    return out + [level for level in pool if _key(level) not in keys]


def selection_context(inherited=()):
    """The levels a clone is made in (:class:`Level`, innermost first), read
    at clone time in the thread that makes it, then those of the object
    cloned (``inherited``: made by an enclosing level, perhaps in another
    process, or the search's base clone when joblib dispatches a fold's clone
    from a thread of its own, which it then stands for). A fit in a worker
    process or thread reads the levels that dispatched it from here
    (Section 20.4); a fit consumes its clone's context."""
    return tuple(_resolve(_levels(sys._getframe(2)), inherited))


def consumes_selection_context(fit):
    """A ``fit`` that reads its clone-time context and drops it: a fitted
    model carries none (a stale context refused or allowed later fits)."""
    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        try:
            return fit(self, *args, **kwargs)
        finally:
            self.__dict__.pop("_selection_context", None)
    return wrapper


class SelectionContextMixin:
    """Keeps, on a clone scikit-learn makes, the levels it was made in
    (:func:`selection_context`): a worker process or thread fitting the clone
    cannot see the levels that dispatched it, and its ledger must refuse a
    fit that one of them makes unaccountable (Section 20.4). Private state of
    an unfitted clone (splitter classes and public counts), dropped by its
    own fit."""

    def __sklearn_clone__(self):
        clone = super().__sklearn_clone__()
        context = selection_context(self.__dict__.get("_selection_context", ()))
        if context:
            clone.__dict__["_selection_context"] = context
        return clone


def model_selection_fits(context=()):
    """The scikit-learn levels running this fit, read from the call stack and
    from its clone-time ``context`` (:func:`selection_context`), as a
    :class:`ModelSelectionFits` of the innermost with the kinds of the
    enclosing ones; None outside them."""
    now = _levels(sys._getframe(1))
    if not now:
        # No scikit-learn level runs this fit: a context kept by an unfitted
        # parameter of a fitted meta-estimator is not this fit's (a plain
        # fit of such a model was labelled a fold's).
        return None
    levels = _resolve(now, context)
    first = levels[0]
    return ModelSelectionFits(first.n_candidates, first.n_splits, first.refit,
                              first.kind, first.in_fold, first.name,
                              tuple(level.kind for level in levels[1:]
                                    if level.in_fold),
                              first.varies, first.halving, first.owner)


def model_selection_label(context=()):
    """Where a fit runs, for its ledger entry's label: " (a fit of a
    GridSearchCV: 2 candidate(s) x 3 split(s) + a refit)", or "" outside
    scikit-learn's model selection. Public: the caller's own arguments (a
    trial's auditor saw a grid's fits as anonymous lines)."""
    fits = model_selection_fits(context)
    if fits is None:
        return ""
    if not fits.n_splits:
        if fits.splitter in UNSEEN_SPLITTERS:
            return f" (a fit in scikit-learn model selection, from {fits.splitter})"
        return f" (a fit of scikit-learn's {fits.splitter})"
    who = fits.owner or ("scikit-learn search" if fits.n_candidates > 1
                         or fits.refit else "cross-validation")
    return (f" (a fit of a {who}: {fits.n_candidates} candidate(s) x "
            f"{fits.n_splits} split(s){' + a refit' if fits.refit else ''})")


#: Parameters whose value sets a fit's target figure: a search that varies one
#: fits candidates at several figures, and this fit's alone cannot bound them.
_FIGURE_PARAMETERS = frozenset({
    "epsilon", "delta", "deletion_epsilon", "prevalence_share", "class_weight",
    "recipe", "relation", "group_size", "max_edit_size", "rho", "selection_share",
    "preprocessing_share"})


def candidates_known_ahead(search):
    """Whether a scikit-learn search runs all its candidates in one batch,
    known before its first fit: grid and random search, not a search of its
    own ``_run_search`` (batches one after another) nor successive halving."""
    from sklearn.model_selection import GridSearchCV, RandomizedSearchCV

    return type(search)._run_search in (GridSearchCV._run_search,
                                        RandomizedSearchCV._run_search)


def _varies_the_figure(search):
    """Whether a scikit-learn search's candidates may fit at other figures
    than this one (read from its public grid or distributions): a parameter
    that sets a figure, estimators as values (each its own), or a search of
    its own ``_run_search``, whose batches its counts do not hold."""
    grids = getattr(search, "param_grid", None) or getattr(
        search, "param_distributions", None) or []
    for grid in (grids if isinstance(grids, list | tuple) else [grids]):
        for key in getattr(grid, "keys", lambda: ())():
            values = grid[key] if isinstance(grid[key], list | tuple) else ()
            if key.rsplit("__", 1)[-1] in _FIGURE_PARAMETERS or any(
                    hasattr(v, "get_params") for v in values):
                return True
    return "Halving" not in type(search).__name__ and \
        not candidates_known_ahead(search)


_PIPELINE = f"{os.sep}sklearn{os.sep}pipeline.py"

#: Checks run when a private estimator is fitted inside a plain scikit-learn
#: Pipeline, each called as ``check(pipeline, estimator)``. The pipelines
#: layer registers its own (this leaf module imports nothing of ours).
ENCLOSING_PIPELINE_CHECKS = []

#: Readers of the private preprocessing released in the same fit as the
#: estimator, each called as ``reader(pipeline, estimator)`` and returning
#: ``(label, rho, delta_excluded)`` from public parameters, or None. The
#: pipelines layer registers its own; an estimator's model-selection warning
#: then states the whole pipeline's figure, not its own share.
ENCLOSING_PREPROCESSING = []


def enclosing_pipeline():
    """The scikit-learn ``Pipeline`` whose ``fit`` runs this call, if any
    (read from the call stack: public, the caller's code)."""
    frame = sys._getframe(1)
    while frame is not None:
        if os.path.abspath(frame.f_code.co_filename).endswith(_PIPELINE):
            obj = frame.f_locals.get("self")
            if obj is not None and hasattr(obj, "steps"):
                return obj
        frame = frame.f_back
    return None


def check_finite_params(estimator, names):
    """Reject infinite values, which ``Interval(..., None)`` lets through."""
    for name in names:
        value = getattr(estimator, name)
        if isinstance(value, Real) and not np.isfinite(value):
            raise ValueError(f"The '{name}' parameter of {type(estimator).__name__} "
                             f"must be finite, got {value!r}.")


def check_finite_targets(y, error=ValueError):
    """Refuse a regression target that is not finite, by index: no bound
    covers it, and scikit-learn's ``assume_finite=True`` skips its own check."""
    bad = ~np.isfinite(y)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise error(f"y[{i}]={float(y[i])} is not finite: no privacy bound covers "
                    "it. Impute or drop it with a public rule first.")


def is_missing(value):
    """Whether one cell or label is missing: None, NaN, ``pandas.NA`` or
    ``NaT`` (pandas is optional, so its markers are recognised by type)."""
    return (value is None or (isinstance(value, float) and math.isnan(value))
            or type(value).__name__ in ("NAType", "NaTType"))


def check_labels_present(y, error=ValueError, name="y"):
    """Refuse a class label that is missing, by index (not by value).

    A missing label is no label: scikit-learn's own checks stop on it with
    "Input contains NaN", or a ``TypeError`` from comparing ``pandas.NA`` or
    None with the other labels, and name no record.
    """
    values = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
    values = values.ravel() if isinstance(values, np.ndarray) else np.asarray(
        values, dtype=object).ravel()
    if values.dtype.kind == "f":
        bad = np.isnan(values)
    elif values.dtype.kind == "O":
        bad = np.fromiter((is_missing(v) for v in values), dtype=bool,
                          count=values.size)
    else:
        return
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise error(f"{name}[{i}] is missing: every record needs its label. Drop "
                    "such records, or label them, with a public rule first.")


def label_codes(classes, y):
    """Each label's position in the sorted ``classes``, and which labels are
    not among them. Labels of another type than the classes (strings in a
    pandas object column against ``classes=[0, 1]``) cannot be sorted
    together, so they are then looked up one by one."""
    try:
        codes = np.minimum(np.searchsorted(classes, y), len(classes) - 1)
        return codes, classes[codes] != y
    except TypeError:
        index = {c: k for k, c in enumerate(classes.tolist())}
        codes = np.array([index.get(v, -1) for v in np.asarray(y).tolist()],
                         dtype=np.intp)
        return np.maximum(codes, 0), codes < 0


def fixed_errstate(func=None):
    """Floating-point events ignored, whatever the caller has set.

    A context manager (``with fixed_errstate():``), or a decorator
    (``@fixed_errstate``), around everything that touches private rows (the
    row map, ``fit``, ``partial_unlearn``, ``plan``, a pipeline's edits). The
    row map reaches subnormal and zero factors on purpose, and one extreme but
    finite target may overflow when divided by a public scale (the kernel clamps
    the residual): under a caller's ``np.errstate(all="raise")``, or warnings
    turned into errors, such a record would raise where a benign one does
    not, an event whose occurrence depends on the data. Results are checked by
    construction instead (finite norms, clamped residuals, finite thresholds;
    privacy-accounting.md, Section 16.2).
    """
    if func is not None:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with fixed_errstate():
                return func(*args, **kwargs)
        return wrapper
    return np.errstate(all="ignore")


def resolve_deletion_epsilon(epsilon, deletion_epsilon):
    """``deletion_epsilon=None`` means ``epsilon`` (privacy-accounting.md,
    Section 12.10: a deleted record no more exposed than a present one)."""
    return epsilon if deletion_epsilon is None else deletion_epsilon


def check_delta(delta, n_samples):
    """Warn when delta is not well below 1/n: such a delta permits leaking a record."""
    if delta >= 1.0 / n_samples:
        warn(
            f"delta={delta!r} is not below 1/n_samples = {1.0 / n_samples:.3g}: a "
            "mechanism that publishes a random training record satisfies such a "
            "guarantee. Use delta='auto' (min(1e-5, n**-1.1)).",
            PrivacyLeakWarning,
            stacklevel=user_stacklevel(),
        )


#: The stream of a private preprocessing step (Section 19): apart from the
#: estimator's streams 0 and 1, so that equal integer seeds on a step and its
#: estimator never give both the same noise (second reading of 21.7).
PREPROCESSING_STREAM = 2
#: The stream of a private pipeline's release of a regressor's target centre
#: and scale (Section 19.6), drawn from its first private step's seed.
TARGET_STREAM = 3


#: What :func:`noise_key` calls a RandomState: its draws cannot be named
#: before they happen (a release may draw from it several times, and a later
#: state may equal another release's), so a ledger refuses it.
UNNAMED_NOISE = "noise from a RandomState"


def noise_key(random_state, segment, stream=0):
    """A name of the noise :func:`segment_rng` draws for these arguments, or
    None for fresh entropy (``random_state=None``).

    Two releases with one name draw the same noise: releases on overlapping
    rows can then be compared to cancel it, and no composition covers them
    together (privacy-accounting.md, 10.3, 20.4), so a ledger refuses the
    second. An integer seed is named by a hash, not written as it is (though
    all 2**32 seeds can be tried: a ledger holding seeded releases is as
    secret as the seed); a ``RandomState`` is :data:`UNNAMED_NOISE`.
    """
    if random_state is None:
        return None
    if isinstance(random_state, np.random.RandomState):
        return UNNAMED_NOISE
    digest = hashlib.sha256(f"int {int(random_state)}".encode()).hexdigest()[:16]
    return f"seeded noise {digest}, segment {segment}, stream {stream}"


def pipeline_noise(seeds, private, final, target, segment=0):
    """The names (:func:`noise_key`) of the seeded noise one release of a
    pipeline draws: each private step's stream, the final step's, and the
    targets' (the first private step's seed, Section 19.6) when it releases
    them; ``seeds`` maps step names to the user's random_state, ``segment``
    is 0 at fit and ``"pipeline edit i"`` at the i-th edit, whose streams
    derive from the user's seeds and ``i`` (``_utils.edit_seed``)."""
    keys = [noise_key(seeds[name], segment, PREPROCESSING_STREAM)
            for name in private]
    keys.append(noise_key(seeds[final], segment))
    if target and private:
        keys.append(noise_key(seeds[private[0]], segment, TARGET_STREAM))
    return tuple(k for k in keys if k is not None)


def check_distinct_seeds(seeds):
    """Refuse private steps whose seeds draw the same noise: one integer, or
    two RandomStates in one state (a clone of one). One RandomState object
    shared by two steps is drawn from in turn, so its noise differs.
    ``seeds``: ``(name, random_state)`` pairs (privacy-accounting.md, 10.3)."""
    seen = {}
    for name, seed in seeds:
        if seed is None:
            continue
        if isinstance(seed, np.random.RandomState):
            kind, keys, pos, has_gauss, cached = seed.get_state()
            key = ("state", np.asarray(keys).tobytes(), pos, has_gauss, cached)
        else:
            key = ("int", int(seed))
        earlier = seen.get(key)
        if earlier is not None and (key[0] == "int" or earlier[1] is not seed):
            raise ValueError(
                f"The private steps {earlier[0]!r} and {name!r} are given the same "
                "random_state: their statistics would draw the same noise, which "
                "no figure covers. Give each its own seed, or random_state=None.")
        seen[key] = (name, seed)


def segment_rng(random_state, segment, stream=0):
    """Independent noise stream for one segment of the training history.

    An integer seed gives one reproducible stream per segment (fit is 0, the
    i-th ``partial_unlearn`` is i) derived from public counters, so no noise
    vector is ever reused (privacy-accounting.md, 10.3). ``None`` draws fresh OS
    entropy: the setting in which the privacy guarantee holds. A ``RandomState``
    instance is consumed as scikit-learn estimators do. ``stream`` separates
    releases of one segment (0: the noisy steps; 1: the noisy class counts,
    Section 18.3; :data:`PREPROCESSING_STREAM`: a private preprocessing
    step's releases, Section 19; :data:`TARGET_STREAM`: a pipeline's target
    release, 19.6), so a pipeline's estimator and its private step may share
    an integer seed; two private steps may not (:func:`check_distinct_seeds`).
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.RandomState):
        entropy = [int(v) for v in random_state.randint(0, 2**32, size=4)]
    else:
        entropy = int(random_state)
    key = (segment,) if stream == 0 else (segment, stream)
    seq = np.random.SeedSequence(entropy=entropy, spawn_key=key)
    return np.random.Generator(np.random.PCG64(seq))
