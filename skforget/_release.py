# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a call that releases a private output does once it has succeeded.

A public call that draws noise (``fit``, ``partial_unlearn`` of an estimator,
a pipeline or a search) runs inside :func:`releasing`. Two things wait for
it to succeed, with its new state committed (privacy-accounting.md, Section
20.3):

* the ledger entries reserved by :func:`release_spending` are recorded (and
  cancelled if the call fails, when nothing of the release has left it);
* warnings about the released output (:func:`warn_about_release`: a
  constant model's margin, a coarse private range) are emitted, after the
  record. A warnings filter that raises one as an error then finds the
  release recorded and the estimator fitted, as scikit-learn leaves an
  estimator fitted under a ``ConvergenceWarning`` raised as an error; had it
  been raised inside the ledger's block, the entry would have been cancelled
  while the exception's text carried numbers of the noisy output.

Warnings about the configuration (a label set read from the rows, an
adaptive figure over the target) are decided from public numbers before the
first draw and emitted at once, so such a filter stops the call before
anything is spent. Nested calls (an estimator's ``fit`` inside a pipeline's)
share the outermost call's record.

The entries are cancelled only if the call fails before its new state is in
place (:func:`mark_committed`), when nothing of the release has left it; a
failure after that records them. The context is a :mod:`contextvars`
variable: each thread starts without one (on free-threaded Python builds
that let threads inherit the context, a thread started inside a releasing
call would share its record).
"""

import contextvars
import math
from contextlib import contextmanager

import numpy as np

from skforget import accounting
from skforget._marks import FITTED_BY, TUNED_BY_SKLEARN
from skforget._search_runs import (
    check_whole_run,
    checked_whole,
    first_warning,
    in_dry_run,
    stop_dry_run,
)
from skforget._stack import enclosing_pipelines, sklearn_meta_estimator
from skforget._utils import no_interrupts, restore_on_error
from skforget._validation import (
    ENCLOSING_PIPELINE_CHECKS,
    ENCLOSING_PREPROCESSING,
    UNNAMED_NOISE,
    UNSEEN_SPLITTERS,
    enclosing_pipeline,
    model_selection_fits,
    sklearn_caller,
    user_stacklevel,
    warn,
)
from skforget.accounting import (
    LedgerUnreachableError,
    PrivacyBudgetExceeded,
    UnaccountableReleaseError,
)
from skforget.accounting._ledger import Spent
from skforget.exceptions import PrivacyBudgetWarning

_CURRENT = contextvars.ContextVar("skforget_release", default=None)


class _Pending:
    """The outermost releasing call's deferred ledger entries and warnings."""

    def __init__(self, rollback):
        self.entries = []    # (ledger, entry_id, final figure)
        self.warnings = []   # (message, category)
        self.committed = False
        self.depth = 0       # releasing calls nested in the outermost one
        self.rollback = rollback

    def cancel(self):
        # Newest first, as nested blocks would have unwound.
        for ledger, entry_id, _ in reversed(self.entries):
            ledger.cancel(entry_id)

    def settle(self):
        for ledger, entry_id, final in self.entries:
            ledger.settle(entry_id, **final)


@contextmanager
def releasing(*, own=False, rollback=False):
    """Run a public call that may release: on success, record its ledger
    entries, then emit its warnings about the released output; on failure,
    cancel the entries and drop the warnings.

    Parameters
    ----------
    own : bool, default=False
        Keep this call's record apart from an enclosing call's (a search's
        candidate runs, whose warnings the search records and shows only for
        the released run). By default a nested call shares the enclosing
        record.
    rollback : bool, default=False
        This call discards, on failure, whatever its nested calls committed
        (a record store's transaction and the in-memory model it edited):
        their :func:`mark_committed` then does not count, only this call's
        own does. By default a nested call's commit counts for the whole call
        (a pipeline does not undo its estimator's edit), so that a failure
        after it records the release: an over-count, never an under-count.
    """
    current = _CURRENT.get()
    if current is not None and not own:
        current.depth += 1
        try:
            yield
        finally:
            current.depth -= 1
        return
    pending = _Pending(rollback)
    token = _CURRENT.set(pending)
    try:
        yield
    except BaseException:
        _CURRENT.reset(token)
        # Committed (an interrupt delivered at the end of the commit, a
        # failure in the cleanup after it): the release was made, recorded.
        # Not committed: nothing of it left the call, cancelled. If the
        # ledger fails here too, the entries stay reserved, which counts them,
        # and the first error is the one raised.
        with no_interrupts():
            try:
                (pending.settle if pending.committed else pending.cancel)()
            except Exception:  # noqa: BLE001, S110
                pass
        raise
    _CURRENT.reset(token)
    try:
        with no_interrupts():
            pending.settle()
    except Exception as exc:
        raise LedgerUnreachableError(
            "The release was made (the model holds its new state), but the "
            f"ledger could not record it ({type(exc).__name__}: {exc}). Its "
            "reservation is still counted against the budget.") from exc
    for message, category in pending.warnings:
        warn(message, category, stacklevel=user_stacklevel())


def mark_committed():
    """Say that the outermost releasing call's new state is in place (its
    fitted attributes, an in-place request's rows, a sharded database's new
    version, a record store's transaction): from here a failure records its
    entries instead of cancelling them. Called at the end of the block that
    restores the object on error, so an interrupt between the two
    over-counts (the object is restored, the entry kept), never
    under-counts. A nested call's commit (an estimator's inside a pipeline's)
    counts for the outermost call, unless that call rolls its nested calls
    back on failure (``releasing(rollback=True)``, a record store's serving
    transaction), which then marks its own commit."""
    pending = _CURRENT.get()
    if pending is not None and (pending.depth == 0 or not pending.rollback):
        pending.committed = True


@contextmanager
def releasing_atomically(*objects):
    """:func:`releasing` around ``restore_on_error(*objects)``, the commit
    marked (:func:`mark_committed`) when the block ends normally, inside the
    restore block: the common form of a ``fit`` that draws noise."""
    with releasing(), restore_on_error(*objects):
        yield
        mark_committed()


def refuse_unaccountable_folds(label, context=()):
    """Refuse a ledgered release made inside scikit-learn model selection or
    calibration unless its folds, at every level it runs in, are drawn
    without the rows (:meth:`ModelSelectionFits.composes`): a splitter that
    reads the labels or groups moves other records between folds when one
    record changes, so the fits' figures do not add, and one that cannot be
    read may (privacy-accounting.md, Section 20.4). Before any pass."""
    if sklearn_caller() == "calibration":
        raise UnaccountableReleaseError(
            f"{label} is a fit of CalibratedClassifierCV, whose folds read the "
            "labels (a StratifiedKFold) and whose calibrator is fitted on exact "
            "scores of private rows: no ledger figure covers it "
            "(privacy-accounting.md, Section 20.4). Calibrate a fitted model on "
            "public rows: CalibratedClassifierCV(FrozenEstimator(model)).")
    size = model_selection_fits(context)
    if size is None or size.composes():
        return
    meta = sklearn_meta_estimator() if sklearn_caller() is None else None
    if meta is not None:
        # Not model selection: no splitter to blame (a trial read "on folds
        # from _fit_single_estimator()" for a VotingClassifier).
        raise UnaccountableReleaseError(
            f"{label} is a fit of scikit-learn's {meta}, which may fit several "
            "models on shared rows and use exact statistics of them or of the "
            "rows: no ledger figure covers what it makes of them "
            "(privacy-accounting.md, Section 20.4). Fit the private model "
            "directly (a multiclass model is one private model).")
    where = (f"folds drawn by reading the labels ({size.splitter})"
             if size.split == "labels" and size.in_fold else
             f"folds from {size.splitter}" if size.in_fold and
             size.split == "unknown" else "an enclosing model selection whose "
             "folds it cannot tell are drawn without the rows")
    raise UnaccountableReleaseError(
        f"{label} is a fit of scikit-learn model selection on {where}. A splitter "
        "that reads the labels or groups (StratifiedKFold, what cv=<int> gives a "
        "classifier; GroupKFold; ...) moves other records between folds when one "
        "record changes, so each fit's training rows differ by several records, "
        "not one, and no ledger figure covers the fits together; a level whose "
        "fits cannot be read here (validation_curve, learning_curve, "
        "permutation_test_score, CalibratedClassifierCV, RFECV and other "
        "meta-estimators, index lists, other splitters) is refused alike "
        "(privacy-accounting.md, Section 20.4). Draw the folds without the "
        f"rows at every level, e.g. cv=KFold(n_splits={size.n_splits or 5}, "
        "shuffle=True, random_state=0), or tune with "
        "skforget.model_selection.PrivateSearchCV." + (
            " If this is cross_val_score, cross_validate or cross_val_predict "
            "with n_jobs > 1, give it pre_dispatch=\"all\" as well: a fold that "
            "joblib clones in a thread of its own cannot show its splitter, even "
            "a KFold." if size.splitter in UNSEEN_SPLITTERS else ""))


@contextmanager
def release_spending(ledger, label, context=(), *, owner=None, **figure):
    """Reserve a planned release on ``ledger`` (None: no ledger) before the
    block's data pass; cancel it if the block raises. Inside
    :func:`releasing`, the entry is recorded when the outermost call
    succeeds; outside, when the block does (``ledger.spending``). Yields a
    dict in which the block may put the final figure (``"rho"``,
    ``"curve"``, ``"delta"``). ``owner``: the object releasing (a dry run
    of a scikit-learn run's fit stops here, :mod:`._search_runs`)."""
    stop_dry_run(owner, ledger, figure)
    if ledger is None:
        yield Spent()
        return
    refuse_unaccountable_folds(label, context)
    if UNNAMED_NOISE in figure.get("noise", ()):
        raise PrivacyBudgetExceeded(
            f"{label} draws its noise from a RandomState, whose draws a ledger "
            "cannot name before they happen, so a second release of the same "
            "noise could not be refused (privacy-accounting.md, 20.4). With a "
            "ledger, give random_state=None or an integer seed.")
    check_whole_run(ledger, label, owner, context, _isolated)
    pending = _CURRENT.get()
    if pending is None:
        with ledger.spending(label, **figure) as final:
            yield final
        return
    entry_id = ledger.reserve(label, **figure)
    final = Spent()
    final.entry_id = entry_id
    try:
        yield final
    except BaseException:
        if pending.committed:
            # Committed already (an interrupt delivered as this block unwinds,
            # after the object's restore block exited): the outermost call
            # records it.
            pending.entries.append((ledger, entry_id, final))
        else:
            ledger.cancel(entry_id)
        raise
    pending.entries.append((ledger, entry_id, final))


def _isolated(fn):
    """``fn()`` outside the current releasing call (a dry run's fits must not
    join its record)."""
    def run():
        _CURRENT.set(None)
        return fn()
    return contextvars.copy_context().run(run)


def holds_previous(model):
    """Whether ``model``'s ledger holds the entry of its latest release
    (read once per edit, before its pass)."""
    ledger = getattr(model, "ledger", None)
    return ledger is not None and ledger.holds(getattr(model, "_ledger_entry", None))


def edit_figure(model, conditional, whole, holds):
    """What a model's edit records on its ledger (privacy-accounting.md,
    Section 20.1): ``conditional``, the edit's own term from the previous
    model, only when the ledger ``holds`` that model's release
    (:func:`holds_previous`); else ``whole``, the edited model's DP figure
    (a ledger given after the fit, or one that holds none of its
    releases). A model a search refitted records its search's refit figure,
    fixed before the search (its selected hyper-parameters, which set its
    terms, are the search's output)."""
    fixed = getattr(model, "_ledger_fixed_rho", None)
    if fixed is not None:
        return max(fixed, whole)
    return conditional if holds else whole


def note_entry(model, spent, *, fit=False):
    """Keep the key of the ledger entry a release was recorded as (public:
    a random id), for the next edit's :func:`edit_figure`; a ``fit`` also
    ends what a search fixed for the model's edits."""
    model.__dict__.pop("_ledger_entry", None)
    if fit:
        model.__dict__.pop("_ledger_fixed_rho", None)
    if spent.entry_id is not None:
        model._ledger_entry = spent.entry_id


def warn_about_release(message, category=UserWarning):
    """Warn about a released output once its release is recorded: at the end
    of the outermost :func:`releasing` call, or now outside one."""
    pending = _CURRENT.get()
    if pending is None:
        warn(message, category, stacklevel=user_stacklevel())
    else:
        pending.warnings.append((message, category))


def _no_composition(size, group, reading):
    """The warning's sentence for fits whose folds are not drawn without the
    rows at every level (:meth:`ModelSelectionFits.composes`, Section 20.4),
    with what folds drawn without them would compose to (``reading(m)``: the
    figure of ``m`` fits)."""
    if size.in_fold and size.split == "labels":
        why = f"Its folds were drawn by reading the labels ({size.splitter})"
    elif size.in_fold and size.split == "unknown":
        why = (f"Its folds come from {size.splitter}, which this process cannot "
               "tell are drawn without the rows")
    else:
        why = ("An enclosing model selection draws its folds in a way this "
               "process cannot tell is without the rows")
    text = (f"{why}: one record can then move other records between folds, so "
            "the fits' figures do not add, and no figure covers the fits together")
    if size.n_splits and not size.outer:
        alt = size._replace(split="partition").fits_per_record(group)
        epsilon, delta = reading(alt)
        text += (f" (with folds drawn without the rows, cv=KFold(n_splits="
                 f"{size.n_splits}, shuffle=True, random_state=0), {alt} of these "
                 f"fits would train on each {'record' if group == 1 else 'unit'}: "
                 f"epsilon {epsilon:.3g} at delta {delta:.2g})")
    return text


def _significant(x, bound):
    """``x`` to three significant digits, rounded up after "at most " and down
    after "at least ": a ledger sized at an "at most" figure rounded to
    nearest refused the run it was sized for (a second reader)."""
    if not math.isfinite(x) or x <= 0.0 or bound.strip() not in ("at most", "at least"):
        return f"{x:.3g}"
    unit = 10.0 ** (math.floor(math.log10(x)) - 2)
    steps = x / unit
    # No tolerance: a figure a rounding error above a printed one would
    # still be refused by a ledger sized at it.
    steps = math.ceil(steps) if bound.strip() == "at most" else math.floor(steps)
    return f"{steps * unit:.3g}"


def _warn_meta_estimator(estimator, meta, rho, delta):
    """A scikit-learn meta-estimator outside model selection fits the model
    (:func:`skforget._stack.sklearn_meta_estimator`): it may fit several on
    shared rows and use exact statistics of them or of the rows (a trial:
    ``RFE``, ``BaggingClassifier``, ``AdaBoostClassifier``, ``SelfTraining``,
    ``TransformedTargetRegressor`` ran in silence, each model printing its own
    figure)."""
    one, one_delta = accounting.approximate_zcdp_epsilon(
        rho=rho, delta_conversion=delta, method=estimator._dp_conversion())
    warn(f"{type(estimator).__name__}.fit runs inside scikit-learn's {meta}, "
         "which may fit several models on these rows (one per class or output, "
         "bootstrap, boosting round or feature subset) and use exact statistics "
         "of them or of the rows (errors, scores, a target transformer's mean): "
         f"this fit's ({one:.3g}, {one_delta:.2g})-DP figure covers this one model, "
         f"not what {meta} makes of them, and no deletion certificate of the "
         "models undoes that. Fit the private model directly (a multiclass model "
         "is one private model), or pass ledger=skforget.PrivacyLedger(epsilon, "
         "delta) to record every fit.",
         PrivacyBudgetWarning, stacklevel=user_stacklevel())


def warn_about_callers(estimator, rho, delta, curve=None, excluded=0.0,
                       ledger=None):
    """Warn about what the scikit-learn code running ``estimator``'s fit does
    to the guarantee, read from the call stack (public): a plain ``Pipeline``
    gets the pipelines layer's checks (steps fitted on the rows);
    ``GridSearchCV`` and ``cross_val_score`` fit many models on shared rows
    and compare exact validation scores, and ``CalibratedClassifierCV`` fits
    a calibrator on exact scores, none of which the per-model figure covers.
    ``rho`` is the fit's planned rho-coefficient (public); a private search
    gives its whole Rényi ``curve`` on ``LEDGER_ORDERS`` instead (its runs'
    own warnings are not shown, Section 17.2), plus ``q rho`` and events of
    probability ``excluded`` for a pipeline's statistics (Theorem 17.5)."""
    if in_dry_run():
        return   # a run's fit planned ahead (_search_runs): not the user's
    pipeline = enclosing_pipeline() if curve is None else None
    # Every pipeline before the model, nested or around a wrapper (a trial's
    # scaler one level up went unsaid).
    for outer in enclosing_pipelines(estimator) if curve is None else ():
        for check in ENCLOSING_PIPELINE_CHECKS:
            check(outer, estimator)
    meta = sklearn_meta_estimator() if curve is None else None
    if meta is not None:
        estimator.__dict__[FITTED_BY] = meta   # its edits say it too
        _warn_meta_estimator(estimator, meta, rho, delta)
    caller = sklearn_caller()
    if caller is None:
        return
    # The fit's own conversion (Section 21: GDP composes as rho adds, so ten
    # fits are 10 rho under it too); a search's curve is a Rényi one.
    method = "improved" if curve is not None else estimator._dp_conversion()
    name = type(estimator).__name__
    # A search records where its estimator's or a private step's ledger is
    # (it passes the one it resolved; a second reader saw "Pass ledger=").
    ledger = ledger if ledger is not None else getattr(estimator, "ledger", None)
    releaser = estimator
    # Inside a pipeline with private preprocessing, one fit releases the
    # statistics too: the figure is the pipeline's (Theorem 19.5), read by its
    # conversion (Section 21.7), never the estimator's share alone; its ledger
    # records the release while the estimator's own recording is off.
    for read in ENCLOSING_PREPROCESSING if pipeline is not None else ():
        found = read(pipeline, estimator)
        if found is not None:
            label, rho_pre, excluded, ledger = found
            releaser = pipeline
            name = f"{label} (its private preprocessing and {name})"
            rho, method = rho + rho_pre, accounting.pipeline_conversion(method)
            break

    def reading(m, at=delta):
        """``(epsilon, delta)`` of ``m`` such fits, converted at ``at`` (the
        fit's delta; a ledger's own): ``m rho`` outside excluded events of
        total probability ``m excluded`` (Proposition 19.4, Lemma 21.7; no
        statement, infinite, once that reaches 1), or ``m`` curves added order
        by order (Section 20.2)."""
        if m * excluded >= 1.0:
            return math.inf, 1.0
        if curve is not None:
            return accounting.approximate_curve_epsilon(
                rdp=m * (np.asarray(curve) + accounting.LEDGER_ORDERS * rho),
                delta=at + m * excluded, delta_excluded=m * excluded)[0], \
                at + m * excluded
        return accounting.approximate_zcdp_epsilon(
            rho=m * rho, delta_conversion=at, delta_selection=m * excluded,
            method=method)

    one, one_delta = reading(1)
    if caller == "calibration":
        warn(
            f"{name}.fit runs inside CalibratedClassifierCV, which fits a "
            "calibrator on exact scores of private rows (and, with "
            "cross-validation, several private fits on shared rows): the "
            f"calibrated model is not covered by this fit's ({one:.3g}, "
            f"{one_delta:.2g})-DP figure, nor by any other. Calibrate on public "
            "data: CalibratedClassifierCV(FrozenEstimator(model)) fitted on "
            "public rows keeps the guarantee.",
            PrivacyBudgetWarning, stacklevel=user_stacklevel())
        return
    size = model_selection_fits(estimator.__dict__.get("_selection_context", ()))
    if size is None:   # a wrapper that fits once on its input (FixedThreshold...)
        return
    if size.refit and not size.in_fold and size.n_candidates > 1:
        # A search's refit: its hyper-parameters were chosen from exact scores
        # of the rows, which its edits say (_edits.tuned_caveat; a trial's
        # GridSearchCV model certified deletions without a word of it).
        estimator.__dict__[TUNED_BY_SKLEARN] = size.owner or "search"
    group = int(estimator.get_params().get("group_size", 1) or 1)
    at_least = ""
    if not size.n_splits:
        many, fits = 10, "10 such fits"
    else:
        n_cand, n_splits, refit = size.n_candidates, size.n_splits, size.refit
        # A record is trained by every fit but those of the folds holding it
        # out: once per candidate when the folds partition the rows (not a
        # unit of several records, which they may spread over the folds).
        many = size.fits_per_record(group)
        # Successive halving counts one iteration's candidates here; a grid
        # over a figure's parameter fits others at larger figures (an audit's
        # finding: "epsilon 1.45" said where 9.14 was spent); an enclosing
        # model selection repeats this level's fits.
        iteration, varies = size.halving, size.varies
        fits = (f"this {'iteration' if iteration else 'one'} makes {n_cand} "
                f"candidate(s) x {n_splits} split(s)"
                + ((" and a refit on its rows" if size.outer else
                    " and a refit on all rows") if refit else "")
                + (f", {many} of them train on each record (its fold holds it "
                   "out once per candidate)" if size.split == "partition"
                   and group == 1 else f", {many} fits")
                + (" at this fit's figure" if varies else "")
                + (" inside an enclosing model selection, which repeats them"
                   if size.outer else ""))
        # Other candidates' figures may be larger or smaller: with them the
        # figure is this fit's, bound neither way (a second reader: "at
        # least 9.4" said where 6.04 was spent).
        at_least = "at least " if (iteration or size.outer) and not varies else ""
    total, total_delta = reading(many)
    recorded = ("The ledger given records each fit's figure as it runs, not "
                "the choice made from exact scores. " if ledger is not None
                else "Pass ledger=skforget.PrivacyLedger(epsilon, delta) "
                "(skforget.store.SharedLedger with n_jobs > 1) to record every "
                "fit and refuse those past a budget. ")
    if ledger is not None and size.n_splits:
        # It checks one fit at a time and adds every fit (it cannot see which
        # rows each trained on): a trial sized a ledger by the per-record
        # figure and had its search refused at the refit, 98 % spent.
        n_all = size.n_candidates * size.n_splits + int(size.refit)
        # At the ledger's delta, which its total is read at (a smaller one
        # reads the same fits as a larger epsilon: a second reader's 2.95
        # said where a ledger at delta 1e-7 reached 3.38).
        # The ledger takes its releases' excluded events out of its delta
        # and converts at the rest (Proposition 19.4): so does this figure (a
        # trial: "at most 2.42" said of a pipeline's run, 2.52 recorded).
        at = float(ledger.delta)
        rest = at - n_all * excluded
        spent = reading(n_all, rest)[0] if rest > 0.0 else math.inf
        bound = at_least or ("" if size.varies else "at most ")
        recorded += (f"It adds all {n_all} fits (" + (
            f"{bound}epsilon {_significant(spent, bound)} at its delta {at:.2g}"
            if math.isfinite(spent) else
            f"their excluded events alone would take its delta {at:.2g}")
            + (", if each is at this fit's figure" if size.varies else "") + ") ")
        if checked_whole(estimator.__dict__.get("_selection_context", ()),
                         releaser):
            # Its fits run here, one after another: planned together first
            # (_search_runs), so a budget short of them spends nothing.
            recorded += ("and, as they run one after another here, plans them "
                         "all before the first where it can read their figures "
                         "ahead" + (" (the refit at whichever candidate the "
                                    "scores choose)" if size.refit else "")
                         + ": if they would pass its budget, every one is "
                         "refused, nothing recorded. ")
        else:
            recorded += ("and checks them one at a time: a budget short of that "
                         "refuses a fit after the others have spent theirs. ")
    seeds = [estimator.get_params().get("random_state")]
    if pipeline is not None:    # its private steps draw from their own seeds
        seeds += [value for key, value in pipeline.get_params().items()
                  if key.endswith("random_state")]
    if any(seed is not None for seed in seeds):
        # Every clone draws the same noise (an integer seed, or a RandomState
        # copied by clone): models on overlapping rows can be compared to
        # cancel it, and the composition the figures add by assumes
        # independent noise (privacy-accounting.md, Section 10.3). The seed
        # itself is not shown: the guarantee holds while it is secret.
        shared = ("With a given random_state every fit draws the same noise, so "
                  "no figure covers the fits together; with random_state=None "
                  f"their Rényi figures would add ({fits}: epsilon "
                  f"{at_least}{total:.3g} at delta {total_delta:.2g})")
    else:
        shared = ("The fits share rows and their Rényi figures add "
                  f"({fits}: epsilon {at_least}{total:.3g} at delta "
                  f"{total_delta:.2g})")
    # A search's refit trains on all rows, but it is one of the search's fits:
    # whether they add as one figure is the folds' question (a trial read "16
    # fits: epsilon 4.75, pass ledger=" after fifteen warnings that no figure
    # covered them, and the ledger then refused the search).
    searched = size._replace(in_fold=True) if size.n_splits else size
    if not searched.composes():
        shared, recorded = _no_composition(searched, group, reading), (
            "A ledger refuses these fits (UnaccountableReleaseError). "
            if ledger is not None else "")
    text = (
        f"{name}.fit runs inside scikit-learn's model selection (GridSearchCV, "
        f"cross_val_score, ...). Each fit is ({one:.3g}, {one_delta:.2g})-DP "
        f"alone. {shared}, and the exact validation scores that choose between "
        f"them are covered by no figure. {recorded}"
        "skforget.model_selection.PrivateSearchCV tunes with one figure for "
        "the whole search (privacy-accounting.md, Sections 17 and 20).")
    if first_warning(text):   # once per run and text
        warn(text, PrivacyBudgetWarning, stacklevel=user_stacklevel())
