# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivateSearchCV: repeat-and-select tuning of a private estimator.

Design
------
One candidate run fits a clone with hyper-parameters drawn from public
distributions and scores it with Gaussian noise. By default (Lemma 17.1b) it
fits on all rows and scores on the same rows, the score taking
``SCORE_SHARE`` of the run's rho-coefficient; the selected run is then the
released model, trained on every row, and no refit is needed. With a
``validation_fraction`` (Lemma 17.1) it fits on a training part fixed before
the data are read and scores on the other part at no extra cost (a record is
in one part only); the refit on all rows then composes with the selection
(17.3). The number of runs is random (truncated negative binomial, Theorem
17.2) and only the best run is released.

Only the split may be public. The number of runs, the candidates, the score
noise and the runs' noise come from secret generators (fresh entropy unless
``random_state`` is given, which the guarantee then flags), and nothing but
the best run is released: Theorem 17.2 covers the best run's output alone, and
the number of runs or the winner's position would reveal more (a second
reading measured delta 50 times the claim when the number of runs was shown).
The search's running time grows with the number of runs; like every timing,
it is outside the guarantee (privacy-accounting.md, 16.3 and 17.4).
"""

import dataclasses
import math
import threading
import warnings
from numbers import Real

import numpy as np
from sklearn import config_context
from sklearn.base import (
    BaseEstimator,
    MetaEstimatorMixin,
    _fit_context,
    clone,
    is_classifier,
    is_regressor,
)
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import _safe_split, available_if
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    column_or_1d,
    indexable,
)

from skforget import accounting
from skforget._database import Database, unwrap_database
from skforget._marks import (
    PIPELINE_STEP,
    check_not_pipeline_step,
    check_not_selected,
)
from skforget._release import (
    mark_committed,
    note_entry,
    release_spending,
    releasing,
    warn_about_callers,
    warn_about_release,
)
from skforget._rows import project_rows
from skforget._utils import restore_on_error
from skforget._validation import (
    HasMethods,
    Interval,
    SelectionContextMixin,
    StrOptions,
    consumes_selection_context,
    noise_key,
)
from skforget.model_selection._pipelines import (
    final_step_search,
    fit_statistics,
    pipeline_ledger,
    pipeline_shares,
    private_pipeline,
    release_pipeline,
)
from skforget.model_selection._stated import (
    check_stated_budget,
    refuse_sklearn_names,
)

#: Parameters the search sets itself (the budget and the noise), and those
#: that change what a run's rho means or can make a run fail on the rows: they
#: are taken from the estimator as given, never drawn. A drawn
#: ``target_scale=None`` would let a candidate read the targets (and warn).
_RESERVED = ("epsilon", "delta", "random_state", "relation", "group_size",
             "classes", "clip_rows", "target_scale", "ledger")

#: Share of each run's rho-coefficient spent on scoring it on its own rows
#: (privacy-accounting.md, Lemma 17.1b): the score's noise, 1 / (N sqrt(2 *
#: 0.05 rho_run)), is below a percent of accuracy from about 3000 rows at
#: epsilon = 1, while the fit keeps 95 % of the run's budget.
SCORE_SHARE = 0.05


def _best_has(name):
    def check(self):
        if "best_estimator_" in self.__dict__:
            return hasattr(self.best_estimator_, name)
        # Unfitted: offered when the estimator has it, and calling it raises
        # NotFittedError (as scikit-learn's searches do), not AttributeError.
        getattr(self.estimator, name)
        return True
    return check


#: Python's warning filters are process-wide (before 3.14's context-aware
#: warnings): two searches recording their runs' warnings in two threads
#: would restore each other's filters mid-run and show a hidden run's
#: warnings. Searches hold this lock while a run's warnings are recorded;
#: other code changing the filters in another thread meanwhile is outside
#: what it can guard (Section 17.2).
_RECORDING = threading.RLock()


def _fit_recorded(model, X, y):
    """Fit one run of the search and return its warnings, recorded rather
    than shown: a run's record is its own (``own=True``), so they come back
    here when its fit ends, and :func:`_show` re-emits the released run's
    once the search is recorded."""
    with _RECORDING, warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with releasing(own=True):
            model.fit(X, y)
    return said


def _mark_selected(model, budget):
    """The selected run itself is the model: no run's figure or deletion
    certificate covers it (17.4). Its guarantee quotes the search's figure,
    and marks it selected, so that its edits are refused
    (:func:`~skforget._marks.check_not_selected`)."""
    model.privacy_guarantee_ = dataclasses.replace(
        model.privacy_guarantee_, epsilon=budget.epsilon, delta=budget.delta,
        selected_by_search=True)


def _show(said):
    """Re-emit the released run's warnings (recorded while it ran) once the
    search is recorded (Section 20.3). That its noise dominates is said of
    the returned model, with the run's epsilon named as the search's share:
    silenced, a search returned models of R^2 -10 without a word."""
    for w in said:
        message = str(w.message)
        if issubclass(w.category, UserWarning) and message.startswith("At epsilon="):
            warn_about_release(
                "PrivateSearchCV: the returned model is mostly noise. Its run "
                "had the search's share of the budget: " + message[0].lower()
                + message[1:] + " In a search: a larger epsilon, fewer "
                "candidates (n_candidates), or candidates that regularise more.",
                w.category)
            continue
        if "runs inside scikit-learn's model selection" in message:
            continue   # a run's figure; the search says its own (17.2)
        warn_about_release(w.message, w.category)


def _draw(value, rng):
    """One draw of a candidate value from the secret generator ``rng``:
    uniform over a list, or ``rvs`` of a scipy distribution (with
    replacement: Theorem 17.2 needs every run)."""
    if hasattr(value, "rvs"):
        return value.rvs(random_state=rng)
    return value[int(rng.integers(len(value)))]


class PrivateSearchCV(SelectionContextMixin, MetaEstimatorMixin, BaseEstimator):
    """Tune a private estimator with a guarantee that covers the search.

    Random search by repeat-and-select (Papernot and Steinke, ICLR 2022): the
    search runs a random number ``K`` of candidates (mean ``n_candidates``,
    truncated negative binomial law), each a private fit on a training part
    scored privately on a validation part, releases only the best one, and
    returns it. The whole search is (``epsilon``, ``delta``)-DP for every
    record; with a mean of 10 candidates a total epsilon of 1 leaves each run
    about 0.49 (0.29 by naive composition of 10 fits) (privacy-accounting.md,
    Section 17). By default every candidate is trained on all rows and scored
    on them with noise, and the selected run is the model; it refuses edits
    (its noise was chosen with the records present, Section 17.4). With
    ``validation_fraction`` candidates are scored on a held-out part and the
    selected hyper-parameters refitted on all rows: that model serves
    deletions.

    Parameters
    ----------
    estimator : estimator
        A skforget estimator (``NoisyGDClassifier``, ``NoisyGDRegressor``, the
        output-perturbation estimators). Its ``epsilon``, ``delta`` and
        ``random_state`` are set by the search: give the total budget and the
        seed to the search (an ``epsilon`` or ``delta`` written on the
        estimator, or on the pipeline below, is refused when below the
        search's, replaced with a warning otherwise). Or a
        :class:`~skforget.pipeline.PrivatePipeline` (from
        :func:`~skforget.pipeline.make_private_pipeline`) for a raw table: its
        private statistics are released once, on all rows, at the share an
        untuned pipeline gives them, and only its estimator's parameters
        (``"estimator__C"``) are drawn and run on the rows mapped with them;
        ``best_estimator_`` is then a fitted pipeline (privacy-accounting.md,
        Theorem 17.5).
    param_distributions : dict
        Parameter names to lists (drawn uniformly, with replacement) or scipy
        distributions (``rvs``). Fixed before looking at the data: a grid chosen
        from the data leaks what the guarantee does not cover.
    epsilon : float, default=1.0
        Total epsilon of the search (selection and refit).
    delta : float or "auto", default="auto"
        Total delta; "auto" is ``min(1e-5, n ** -1.1)``.
    n_candidates : float, default=10
        Mean number of candidate runs.
    shape : float, default=0.0
        ``eta`` of the law of the number of runs: 0 logarithmic (the default;
        least privacy per candidate), 1 geometric; larger values concentrate
        ``K`` around its mean at a higher privacy price.
    validation_fraction : float in (0, 1) or None, default=None
        None: candidates are trained on all rows and scored on them, the
        score's noise taking 5 % of each run's budget (``SCORE_SHARE``). A
        float: the share of the rows, chosen at random before the data are
        read, held out to score candidates trained on the rest.
    refit : bool, default=True
        With a ``validation_fraction``: refit the selected hyper-parameters on
        all rows with ``refit_share`` of ``epsilon``; without refit,
        ``best_estimator_`` is the selected run, trained on the training part
        only. Without a ``validation_fraction`` the selected run already saw
        every row and is returned as it is.
    refit_share : float in [0, 1), default=0.5
        Share of ``epsilon`` given to the refit (with a
        ``validation_fraction`` and ``refit=True`` only).
    target_bound : float, default=None
        Regressors only: public bound ``b`` of the absolute error that still
        counts; each validation record scores ``1 - min(|y - y_hat| / b, 1)``.
        Classifiers score accuracy.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the number of runs, the candidates and all the noise:
        reproducible, and the guarantee then assumes the seed is secret (it
        says ``seeded``). None (production) draws fresh entropy.
    verbose : int, default=0
        Print the plan (never the number of runs, a candidate or a score: only
        the best run is released). The candidates run with ``verbose=0``
        whatever the estimator's, and their warnings are recorded: only the
        released model's are shown (Section 17.2).
    ledger : PrivacyLedger or None, default=None
        A :class:`~skforget.accounting.PrivacyLedger` of the training data
        (None: the estimator's ``ledger``, if any). The whole search's Rényi
        curve (Section 17.3) is checked against its budget before any run
        (:class:`~skforget.accounting.PrivacyBudgetExceeded` otherwise) and
        recorded as one entry once the search succeeds; the candidates are
        inside that curve and record nothing themselves. ``best_estimator_``
        gets the ledger, so its later edits are recorded too
        (privacy-accounting.md, Section 20).

    Attributes
    ----------
    best_estimator_ : estimator
        The selected hyper-parameters refitted on all rows (or the selected
        run without refit).
    best_params_ : dict
        The selected hyper-parameters.
    best_score_ : float
        The selected run's noisy score (part of the best run's output): the
        largest of several noisy means, it overstates the model's score and
        may fall outside [0, 1].
    cv_results_ : dict
        The released run only: ``params``, ``mean_test_score`` and
        ``rank_test_score``, one row each. How many runs there were, which
        candidates they tried and how they scored are never released.
    privacy_guarantee_ : SearchBudget
        The whole search's figure, with the refit's and the selection's parts.

    Examples
    --------
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.datasets import load_dataset
    >>> from skforget.model_selection import PrivateSearchCV
    >>> d = load_dataset("breast_cancer")
    >>> search = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]),
    ...                          {"C": [0.01, 0.1, 1.0]}, epsilon=1.0,
    ...                          random_state=0).fit(d.data, d.target)
    >>> search.privacy_guarantee_.epsilon <= 1.0
    True
    >>> search.best_params_["C"] in (0.01, 0.1, 1.0)
    True

    A raw table, its preprocessing private too, under the same total:

    >>> import pandas as pd
    >>> from skforget.pipeline import make_private_pipeline
    >>> frame = pd.DataFrame(d.data[:, :3], columns=["a", "b", "c"])
    >>> search = PrivateSearchCV(
    ...     make_private_pipeline(NoisyGDClassifier(classes=[0, 1])),
    ...     {"estimator__C": [0.1, 1.0]}, epsilon=1.0,
    ...     random_state=0).fit(frame, d.target)
    >>> search.privacy_guarantee_.epsilon <= 1.0
    True
    >>> search.best_estimator_.predict(frame).shape
    (569,)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "partial_unlearn"])],
        "param_distributions": [dict],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "n_candidates": [Interval(Real, 1, accounting.MAX_MEAN_RUNS, closed="both")],
        "shape": [Interval(Real, 0, accounting.MAX_SHAPE, closed="both")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "refit": ["boolean"],
        "refit_share": [Interval(Real, 0, 1, closed="left")],
        "target_bound": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "ledger": [HasMethods(["spending", "reserve", "settle", "cancel"]), None],
    }

    def __new__(cls, *args, **kwargs):
        refuse_sklearn_names(kwargs)
        return super().__new__(cls)

    def __init__(self, estimator, param_distributions, *, epsilon=1.0, delta="auto",
                 n_candidates=10, shape=0.0, validation_fraction=None, refit=True,
                 refit_share=0.5, target_bound=None, random_state=None, verbose=0,
                 ledger=None):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.n_candidates = n_candidates
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.refit_share = refit_share
        self.target_bound = target_bound
        self.random_state = random_state
        self.verbose = verbose
        self.ledger = ledger

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("ledger", None)  # pickled before it existed
        model = self.__dict__.get("best_estimator_")
        refitted = self.validation_fraction is not None and self.refit
        if model is not None and not refitted:
            # Pickled before selected runs refused edits (17.4): without a
            # refit on a validation split the model is the selected run (a
            # pipeline's final step, whose guarantee makes the pipeline's).
            _mark_selected(getattr(model, "_final_estimator", model),
                           self.privacy_guarantee_)

    def _check_inputs(self, n, estimator, distributions, pipeline=None):
        """Refuse what the search cannot price; return ``(n_val, params)``,
        the validation part's size (0: none) and the estimator's parameters
        (``estimator`` and ``distributions``: a ``pipeline``'s final step's,
        17.5)."""
        # Behind a pipeline, its statistics map the rows into the estimator's
        # data_norm ball once, for every run; when they include the targets'
        # centre and scale, the intercept decides how they are read (19.6).
        released = pipeline is not None and pipeline._releases_target()
        fixed = () if pipeline is None else ("data_norm",) + (
            ("target_offset", "fit_intercept") if released else ())
        # Named as the user wrote them (a pipeline's with its step's prefix).
        prefix = "" if pipeline is None else f"{pipeline.steps[-1][0]}__"
        reserved = sorted(prefix + name for name in
                          set(distributions) & set(_RESERVED + fixed))
        if reserved:
            raise ValueError(
                f"param_distributions names {reserved}: the search sets the "
                "candidates' epsilon, delta and random_state itself (the total "
                "is the search's epsilon), and relation, group_size, classes, "
                "clip_rows and target_scale define what one run's figure means "
                "(and, behind a pipeline's statistics, data_norm, target_offset "
                "and fit_intercept how the rows and targets are mapped): set them "
                "on the estimator.")
        if "verbose" in distributions:
            # A drawn verbose reached set_params twice (a trial's TypeError).
            raise ValueError(
                f"param_distributions names {prefix}verbose: the candidates run "
                "with verbose=0 (what they print would tell how many ran and "
                "which); set the search's verbose to see its plan.")
        params = estimator.get_params()
        unknown = sorted(prefix + name for name in set(distributions) - set(params))
        if unknown:
            raise ValueError(f"param_distributions names {unknown}, which "
                             f"{type(estimator).__name__} does not have.")
        if params.get("clip_rows") is False and "data_norm" in \
                distributions:
            # The rows are checked against the estimator's data_norm before
            # any run; a drawn one could refuse a row part-way through.
            raise ValueError(
                "param_distributions draws data_norm while the estimator has "
                "clip_rows=False: a candidate with a smaller data_norm would "
                "refuse a row part-way through the search. Keep clip_rows=True, "
                "or fix data_norm on the estimator.")
        for name, values in distributions.items():
            if not hasattr(values, "rvs") and (isinstance(values, str)
                                                or len(values) == 0):
                raise ValueError(f"param_distributions[{name!r}] must be a "
                                 "non-empty list or a scipy distribution.")
        if not ("epsilon" in params and hasattr(estimator, "partial_unlearn")):
            raise TypeError("PrivateSearchCV tunes skforget's private estimators; "
                            f"got {type(estimator).__name__}.")
        if is_classifier(estimator) and params.get("classes") is None:
            raise ValueError(
                "Pass the public label set on the estimator (classes=[...]): "
                "every candidate would otherwise read it from the rows, which no "
                "figure of the search covers.")
        if is_regressor(estimator) and not released and params.get(
                "target_scale", 1.0) is None:
            raise ValueError(
                "Pass a public target_scale on the estimator: without one every "
                "candidate reads the targets to decide whether to warn, which no "
                "figure of the search covers.")
        if is_regressor(estimator) and self.target_bound is None:
            raise ValueError(
                "target_bound is required for a regressor: the public bound of the "
                "absolute error that still counts in the validation score (each "
                "record scores 1 - min(|y - y_hat| / target_bound, 1)).")
        if self.validation_fraction is None:
            return 0, params
        if int(params.get("group_size", 1)) > 1:
            # A person's rows could fall on both sides of the random split,
            # and Lemma 17.1 prices a unit on one side only.
            raise ValueError(
                f"validation_fraction={self.validation_fraction!r} with group_size="
                f"{params['group_size']}: a person's rows could land in both the "
                "training and the validation part, which Lemma 17.1 does not "
                "price. Leave validation_fraction=None (candidates are scored on "
                "their own rows, Lemma 17.1b).")
        n_val = int(math.ceil(self.validation_fraction * n))
        if not (1 <= n_val < n):
            raise ValueError(f"validation_fraction={self.validation_fraction!r} "
                             f"leaves {n - n_val} training rows of {n}.")
        return n_val, params

    def _check_all_records(self, X, y, base):
        """Refuse, before the first run, every record a run or the refit would
        refuse: the error would otherwise depend on which runs or which part
        of the split read it (Section 17.4). Finiteness is checked whatever
        scikit-learn's ``assume_finite``: a NaN target gave every run's score
        NaN on the database that held it, and a released NaN score."""
        with config_context(assume_finite=False):
            if X is not None:   # None: a pipeline's raw rows, mapped later
                X = check_array(X, accept_sparse="csr", dtype="numeric")
            if is_regressor(self.estimator):
                check_array(np.asarray(y, dtype=np.float64), ensure_2d=False,
                            input_name="y")
        classes = base.get("classes")
        if is_classifier(self.estimator) and classes is not None:
            y_arr = np.asarray(y)
            known = np.isin(y_arr, np.asarray(classes))
            if not known.all():
                i = int(np.flatnonzero(~known)[0])
                raise ValueError(
                    f"y[{i}] is not one of the estimator's classes; every label "
                    f"must be ({int((~known).sum())} label(s) outside in all).")
        if base.get("clip_rows") is False and X is not None:
            # The runs' own refusal of a row beyond data_norm, once for all
            # rows: a run or the refit would raise it part-way through.
            project_rows(X, float(base.get("data_norm", 1.0)), clip_rows=False)

    def _utilities(self, model, X, y):
        """Per-record utility in [0, 1] (Lemma 17.1)."""
        pred = model.predict(X)
        if is_classifier(model):
            return (np.asarray(pred) == np.asarray(y)).astype(np.float64)
        # No floating-point warning: one per run would count the runs. A
        # non-finite error counts as a miss: u stays in [0, 1] (Lemma 17.1)
        # whatever reaches here, and the scores keep a total order.
        with np.errstate(all="ignore"):
            err = np.abs(np.asarray(y, dtype=np.float64) - pred) / self.target_bound
            return np.where(np.isfinite(err), 1.0 - np.minimum(err, 1.0), 0.0)

    @consumes_selection_context
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Run the private search and refit the selected hyper-parameters.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features) \
                or Database
            Training rows (a :class:`~skforget.Database` without sample
            weights, ``y`` omitted, is unpacked).
        y : array-like of shape (n_samples,), default=None
            Targets.

        Returns
        -------
        self : object
        """
        if isinstance(X, Database):
            if X.sample_weight is not None:
                raise ValueError("PrivateSearchCV does not take sample weights; "
                                 "pass a Database without them.")
            X, y, version = unwrap_database(X, y)
        else:
            version = None
        if hasattr(X, "_row_source") and not isinstance(X, Database):
            raise ValueError("PrivateSearchCV does not take a ShardedDatabase: "
                             "its runs read the rows in memory.")
        if y is None:
            raise ValueError("PrivateSearchCV.fit needs y (or a Database, which "
                             "carries its targets).")
        X, y = indexable(X, y)
        # One target per record: a column vector would make the scorer compare
        # every prediction with every target (an n x n table), and one record
        # could then move a score by up to 2 / n instead of 1 / n.
        y = column_or_1d(y, warn=True)
        n = len(y)
        # A pipeline with private preprocessing: its statistics are released
        # once, and its estimator's parameters drawn (Theorem 17.5).
        pipeline = private_pipeline(self.estimator)
        step, estimator, distributions = (
            final_step_search(pipeline, self.param_distributions)
            if pipeline is not None
            else (None, self.estimator, self.param_distributions))
        n_val, base = self._check_inputs(
            n, estimator, distributions,
            pipeline=pipeline)
        # Every row and target checked once, before any run: an error that
        # depended on the data must not stop the search part-way. A pipeline's
        # rows are checked by its private steps, before any run.
        self._check_all_records(None if pipeline is not None else X, y, base)
        delta = accounting.resolve_delta(self.delta, n_samples=n)
        check_stated_budget(self, pipeline, estimator, delta)
        held_out = n_val > 0
        refits = held_out and self.refit
        budget = accounting.plan_search(
            epsilon=float(self.epsilon), delta=delta, mean=float(self.n_candidates),
            shape=float(self.shape),
            refit_share=float(self.refit_share) if refits else 0.0,
            score_share=0.0 if held_out else SCORE_SHARE,
            pipeline=(None if pipeline is None
                      else pipeline_shares(pipeline, estimator)))
        # The split may be public (Lemma 17.1 only needs it fixed before the
        # rows are read). The number of runs, the candidates, the score noise
        # and the runs' noise are secret: Theorem 17.2 covers the best run's
        # output only, and the number of runs or the winner's position would
        # reveal more (each run's score then counts as if composed).
        # Inside GridSearchCV or cross_val_score: the search's own figure, from
        # public numbers, before any run (Section 20.3).
        group = int(base.get("group_size", 1))
        ledger = self.ledger if self.ledger is not None else (
            base.get("ledger") if pipeline is None
            else pipeline_ledger(pipeline, estimator))
        warn_about_callers(self, budget.preprocessing_rho,
                           delta - budget.delta_selection,
                           curve=accounting.search_curve(budget),
                           excluded=budget.delta_selection, ledger=ledger)
        seeded = self.random_state is not None
        entropy = (int(check_random_state(self.random_state).randint(2**31))
                   if seeded else None)
        # Named by the entropy every draw of the search derives from: a ledger
        # refuses a second search of the same noise (Section 20.4).
        drawn = (noise_key(entropy, "search"),)
        split_rng, count_rng, draw_rng, noise, seeds, step_seeds = (
            np.random.default_rng(s)
            for s in np.random.SeedSequence(entropy).spawn(6))

        def seed_steps():   # a private step's noise (Theorem 17.5)
            return int(step_seeds.integers(2**31)) if seeded else None
        order = split_rng.permutation(n)
        val, train = np.sort(order[:n_val]), np.sort(order[n_val:])
        k = accounting.sample_repetitions(
            count_rng, mean=float(self.n_candidates), shape=float(self.shape))
        if self.verbose:
            print(f"[skforget] PrivateSearchCV: a random number of candidate runs "
                  f"(mean {self.n_candidates:g}), each planned for epsilon "
                  f"{budget.run_epsilon:.4g}; {budget}")
        # The whole search's curve, reserved before the first run and
        # recorded as one entry (privacy-accounting.md, Section 20.1).
        # rollback: the statistics' own fit commits as it ends; a later failure
        # still releases nothing, and records nothing (Section 20.3).
        with releasing(rollback=True), release_spending(
                ledger, "PrivateSearchCV.fit", self.__dict__.get(
                    "_selection_context", ()), owner=self,
                curve=accounting.search_curve(budget),
                rho=budget.preprocessing_rho, delta=budget.delta_selection,
                relation=base.get("relation", "replace"), group_size=group,
                noise=drawn) as spent, \
                restore_on_error(self):
            # A failed search (a refit interrupted, a warning raised as an
            # error) leaves the object as it was, and records nothing.
            rows, pre, target = X, None, None
            if pipeline is not None:
                pre, rows, target = fit_statistics(
                    pipeline, X, y, epsilon=float(self.epsilon), delta=delta,
                    seeds=seed_steps, statistics=(budget.preprocessing_rho,
                                                  budget.delta_selection))
                if target is not None:
                    estimator = clone(estimator).set_params(
                        target_offset=target[0], target_scale=target[1])
            if held_out:
                X_train, y_train = _safe_split(estimator, rows, y, train)
                X_val, y_val = _safe_split(estimator, rows, y, val)
            else:  # no copy: every run reads all rows
                X_train = X_val = rows
                y_train = y_val = y
            self._search(rows, y, X_train, y_train, X_val, y_val, n, n_val, budget,
                         delta, held_out, refits, seeded, k, draw_rng, noise, seeds,
                         group, base, estimator, distributions, step)
            if pipeline is not None:
                self.best_estimator_ = release_pipeline(
                    pipeline, pre, self.best_estimator_, target, version)
                if hasattr(self.best_estimator_, "n_features_in_"):
                    self.n_features_in_ = self.best_estimator_.n_features_in_
            if refits and version is not None:
                # The refit read every row of the Database: its edits are
                # checked against that version, as a model fitted on it.
                self.best_estimator_.database_version_ = version
            if ledger is not None and step is not None and refits:
                # A refitted pipeline's edits record their own releases (19.4).
                self.best_estimator_.set_params(**{f"{step}__ledger": ledger})
            elif ledger is not None and "ledger" in self.best_estimator_.get_params(
                    deep=False):
                # Its later edits are releases too (ledger is not frozen), at
                # the refit's figure, fixed before the search: the terms of
                # its own plan depend on the selection (Section 20.1).
                self.best_estimator_.set_params(ledger=ledger)
                if budget.refit_rho > 0:
                    self.best_estimator_._ledger_fixed_rho = budget.refit_rho
            if ledger is not None:
                # The release is this entry: ledger.record of the search or of
                # its refitted model would count it again (a second reader).
                for part in (self, getattr(self, "best_estimator_", None)):
                    if part is not None:
                        note_entry(part, spent)
            # Fitted on its own: no longer an enclosing pipeline's step.
            self.__dict__.pop(PIPELINE_STEP, None)
            mark_committed()
        return self

    def _search(self, X, y, X_train, y_train, X_val, y_val, n, n_val, budget,
                delta, held_out, refits, seeded, k, draw_rng, noise, seeds, group,
                base, estimator, distributions, step):
        """The runs, the selection and the refit (Sections 17.1-17.3). A
        pipeline's (``step``: its final step's name; Theorem 17.5): the runs
        and the refit are its ``estimator``'s, on the mapped rows (``X``)."""
        # Candidates and the refit record nothing: the search's curve covers them.
        quiet = {"ledger": None} if "ledger" in base else {}
        # Lemma 17.1: held-out rows are scored at the run's rho at no extra
        # cost; Lemma 17.1b: the fit's own rows at the score's share of it.
        sigma_score = accounting.search_score_noise(
            budget=budget, n_scored=n_val if held_out else n, group_size=group,
            held_out=held_out)
        # A run's printed plan and its warnings are outputs of the run: shown
        # for every candidate they would count the runs and describe models
        # that are never released (a constant model's margin, a class count),
        # which Theorem 17.2 does not cover. Candidates run silent; only the
        # released run's warnings are shown (Section 17.2).
        # Every step's ``verbose`` (a pipeline's too): each would print per run.
        loud = {name: value for name, value
                in estimator.get_params(deep=True).items()
                if name.split("__")[-1] == "verbose"}
        silent = dict.fromkeys(loud, 0)
        best = None
        for _ in range(k):
            params = {name: _draw(values, draw_rng)
                      for name, values in sorted(distributions.items())}
            est = clone(estimator).set_params(
                **params, **quiet, **silent, epsilon=budget.run_epsilon,
                delta=delta,
                random_state=int(seeds.integers(2**31)) if seeded else None)
            said = _fit_recorded(est, X_train, y_train)
            rho = est.privacy_guarantee_.rho
            if not rho <= budget.run_rho - budget.score_rho:
                raise RuntimeError(
                    f"A candidate reports rho={rho:.6g}, above the "
                    f"{budget.run_rho - budget.score_rho:.6g} the selection was "
                    "planned for: please report this.")
            score = float(np.mean(self._utilities(est, X_val, y_val))
                          + noise.normal(0.0, sigma_score))
            if best is None or score > best[0]:
                best = (score, params, est, said)
        score, params, model, said = best
        # Released: the best run only (its parameters, model and score).
        named = {f"{step}__{key}" if step else key: value
                 for key, value in params.items()}
        self.best_params_ = named
        self.best_score_ = score
        self.cv_results_ = {"params": [named], "mean_test_score": np.array([score]),
                            "rank_test_score": np.array([1], dtype=np.int32)}
        if refits:
            # Silent too: its printed plan is a function of the selection,
            # and printed before the search commits (20.3).
            # A pipeline's: the estimator on all rows mapped through the
            # statistics the selection read (Theorem 17.5), at delta less
            # their selections'.
            model = clone(estimator).set_params(
                **params, **quiet, **silent, epsilon=budget.refit_epsilon,
                delta=delta - budget.delta_selection,
                random_state=int(seeds.integers(2**31)) if seeded else None)
            # Its warnings depend on the selected parameters (its plan's
            # length, a constant model): shown once the search is recorded
            # (Section 20.3), like a candidate's.
            said = _fit_recorded(model, X, y)
            if not model.privacy_guarantee_.rho <= budget.refit_rho:
                raise RuntimeError(
                    f"The refit reports rho={model.privacy_guarantee_.rho:.6g}, "
                    f"above the {budget.refit_rho:.6g} it was planned for: please "
                    "report this.")
        model.set_params(**loud)   # the user's, for the model's later edits
        if not refits:
            _mark_selected(model, budget)
        else:
            # Its edits, through the search, directly or by a record store,
            # say what the choice keeps, and its audit records too (17.4).
            model.tuned_by_search_ = {
                "epsilon": budget.epsilon, "delta": budget.delta,
                "selection_epsilon": budget.selection_epsilon}
        if seeded:
            # The run's derived seed would replay its noise from the model (or
            # its pickle) alone: the model keeps the user's own random_state,
            # from which its edits draw, in its parameters and in those it
            # froze at fit.
            own = estimator.get_params().get("random_state")
            model.set_params(random_state=own)
            if isinstance(getattr(model, "_fit_params", None), dict):
                model._fit_params = {**model._fit_params, "random_state": own}
        _show(said)
        self.best_estimator_ = model
        self.privacy_guarantee_ = dataclasses.replace(
            budget, seeded=seeded, relation=base.get("relation", "replace"),
            group_size=group)
        if hasattr(model, "n_features_in_") and not step:   # a pipeline's: its own
            self.n_features_in_ = model.n_features_in_
        if hasattr(model, "classes_"):
            self.classes_ = model.classes_

    # --- delegation to the selected model ---------------------------------
    @available_if(_best_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_best_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``best_estimator_``."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(_best_has("score"))
    def score(self, X, y):
        """``best_estimator_.score(X, y)`` (not private: X, y are yours)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)

    @available_if(_best_has("partial_unlearn"))
    def partial_unlearn(self, edits, **unlearn_params):
        """Serve an edit request on the refitted ``best_estimator_``.

        Only a search with ``validation_fraction`` and ``refit=True`` has one:
        without a validation part the released model is the selected run,
        whose noise was chosen with the records present, and edits are
        refused. ``unlearn_params`` (for instance ``deletion_epsilon``) go to
        the estimator's ``partial_unlearn``.

        The model is certified against a run with the same hyper-parameters;
        the choice of those hyper-parameters keeps what the selection saw of
        the deleted records, bounded by ``privacy_guarantee_.selection_epsilon``
        (privacy-accounting.md, 17.4). The refitted model carries that figure
        (``tuned_by_search_``): its edits warn with it however they are made
        (through the search, on ``best_estimator_``, by a record store, whose
        audit records state it).
        """
        check_is_fitted(self, "best_estimator_")
        if self.validation_fraction is not None and not self.refit:
            raise ValueError("Without refit, best_estimator_ was trained on the "
                             "search's training part only; fit with refit=True "
                             "to serve deletions on the whole database.")
        check_not_selected(self.best_estimator_)
        check_not_pipeline_step(self, edits)   # a pipeline's step: through it
        # The model says, once the request passed its checks, what the choice
        # of its hyper-parameters keeps (its tuned_by_search_ mark, 17.4).
        self.best_estimator_.partial_unlearn(edits, **unlearn_params)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.input_tags.sparse = inner.input_tags.sparse
        return tags
