# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivatePipeline and make_private_pipeline: one total budget for private
preprocessing and the estimator (privacy-accounting.md, Section 19)."""

import dataclasses
import inspect
import math
from numbers import Real

import numpy as np
from sklearn.base import is_regressor
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import _num_samples

from skforget import accounting
from skforget._database import unwrap_database
from skforget._linear import _same_value
from skforget._public import (
    private_step_names,
    register_pipeline_class,
    split_preprocessing,
)
from skforget._release import mark_committed, releasing, warn_about_release
from skforget._utils import atomic_tree
from skforget._validation import (
    TARGET_STREAM,
    Interval,
    StrOptions,
    check_finite_targets,
    segment_rng,
    user_stacklevel,
    warn,
)
from skforget.exceptions import UnlearningError
from skforget.pipeline._forget import ForgetPipeline
from skforget.preprocessing import PrivateTableEncoder
from skforget.preprocessing._columns import _first_bad, _n_rows_cols
from skforget.preprocessing._numeric import (
    BOUNDS_SHARE,
    beyond_resolution,
    bounds_threshold,
    private_column,
)

__all__ = ["PrivatePipeline", "make_private_pipeline"]

#: A regressor's released target scale, in the target's released standard
#: deviations: most targets then lie within +-1 after centring, where the
#: clipped squared loss fits them unclipped (Section 19.6).
TARGET_SPREADS = 2.0
#: The target's least weight in the preprocessing share, in columns; it
#: weighs as many as the table has when they are more, i.e. half the share:
#: its centre enters every prediction, a feature's statistics one input
#: (measured on 796 regression tables, Section 19.6).
TARGET_COLUMNS = 4


class PipelineShare(float):
    """An estimator's ``epsilon`` or ``delta`` that a private pipeline wrote
    from its total (:meth:`PrivatePipeline._set_split`), told apart from a
    number the user gave: a float, kept by ``clone``, ``get_params`` and
    pickling, so a clone of a fitted pipeline is not mistaken for one whose
    estimator was given its own budget."""

    __slots__ = ()


def stated_budget(estimator):
    """``{name: value}`` of the estimator's ``epsilon`` and ``delta`` that are
    neither their defaults nor a pipeline's share: numbers the user gave,
    which a private pipeline replaces by its split."""
    params = estimator.get_params()
    defaults = inspect.signature(type(estimator).__init__).parameters
    # Kept beside the parameters too (older pickles; skops writes floats).
    split = estimator.__dict__.get("_pipeline_split", {})
    # As the user wrote them: a grid's numpy values print as np.float64(...).
    return {name: params[name].item() if isinstance(params[name], np.generic)
            else params[name] for name in ("epsilon", "delta")
            if name in defaults and params[name] != defaults[name].default
            and not isinstance(params[name], PipelineShare)
            and not (name in split and params[name] == split[name])}


class PrivatePipeline(ForgetPipeline):
    """A :class:`ForgetPipeline` with private preprocessing and one total budget.

    At ``fit`` the total ``(epsilon, delta)`` is split by
    :func:`skforget.accounting.split_private_pipeline`: the private steps
    (:mod:`skforget.preprocessing`'s ``Private*`` transformers) get
    ``preprocessing_share`` of its rho-coefficient and ``selection_share`` of
    its delta, the estimator is planned for the rest; their relation and group
    size are set to the estimator's. ``privacy_guarantee_`` is then the
    composed guarantee (privacy-accounting.md, Theorem 19.5), at most the
    target, with its parts listed. ``partial_unlearn`` re-estimates every
    statistic with fresh noise and retrains the estimator (Theorem 19.6).
    The split is decided once, at ``fit``, and kept for every edit: an
    edit after ``set_params`` changed it (a step's ``rho``, the estimator,
    the total or a share) is refused. A
    regressor given neither ``target_offset`` nor ``target_scale`` is fitted
    with a private centre and scale of the targets, released from the
    preprocessing share like a column's (Section 19.6).

    Parameters
    ----------
    steps : list of (str, estimator) tuples
        Private or public transformers, then a skforget estimator.
    epsilon : float, default=1.0
        Total target epsilon of preprocessing and model together.
    delta : float or "auto", default="auto"
        Total target delta; "auto" is ``min(1e-5, n**-1.1)``.
    preprocessing_share : float, default=0.25
        Share of the rho-coefficient spent on the private steps; 0 when no
        column releases a statistic (every column's categories given) and no
        regressor's target is released: the estimator then gets the whole
        budget.
    selection_share : float, default=0.1
        Share of ``delta`` left to the partition selections; 0 when no column
        selects (a table of numbers, or every category list given).
    transform_input, memory, verbose
        As for :class:`ForgetPipeline`.

    Attributes
    ----------
    budget_ : PipelineBudget
        The split.
    target_epsilon_ : float
    privacy_guarantee_ : PipelineGuarantee
    pipeline_edits_ : tuple of PipelineEdit
        One certificate per edit.
    target_offset_, target_scale_ : float
        The released centre and scale a regressor's targets were fitted with
        (regressors given neither; the latest fit or edit's).

    See Also
    --------
    make_private_pipeline : Build one for a raw table.
    """

    _parameter_constraints: dict = {
        **Pipeline._parameter_constraints,
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither"), StrOptions({"auto"})],
        "preprocessing_share": [Interval(Real, 0, 1, closed="neither")],
        "selection_share": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(self, steps, *, epsilon=1.0, delta="auto", preprocessing_share=0.25,
                 selection_share=0.1, transform_input=None, memory=None,
                 verbose=False):
        super().__init__(steps, transform_input=transform_input, memory=memory,
                         verbose=verbose)
        self.epsilon = epsilon
        self.delta = delta
        self.preprocessing_share = preprocessing_share
        self.selection_share = selection_share

    def fit(self, X, y=None, **params):
        """Split the budget, then fit as :meth:`ForgetPipeline.fit`.

        Parameters
        ----------
        X : DataFrame, array-like or Database
            Raw training records.
        y : array-like of shape (n_samples,), default=None
        **params : dict
            As for :meth:`ForgetPipeline.fit`.

        Returns
        -------
        self : PrivatePipeline
        """
        self._validate_params()
        split = self._plan_split(X, y)
        # Not the split this fit plans (a clone of a pipeline loaded from a
        # format that writes PipelineShare as a float), nor what
        # make_private_pipeline already said (a second reader).
        plan = {"epsilon": split[0].estimator_epsilon,
                "delta": split[0].delta_conversion}
        given = {name: value for name, value in
                 stated_budget(self._final_estimator).items()
                 if not math.isclose(float(value), plan[name], rel_tol=1e-12)}
        if given and given != self.__dict__.get("_budget_said"):
            # set_params or a search over estimator__epsilon: the number would
            # be replaced without a word, and a grid over it searches nothing (a
            # trial).
            text = ", ".join(f"{name}={value!r}" for name, value in given.items())
            warn(f"{type(self).__name__}.fit: the estimator's {text} is replaced by "
                 "its part of the pipeline's total (epsilon="
                 f"{float(self.epsilon):g}), which covers the preprocessing and the "
                 "model together. Set the pipeline's epsilon (a search over "
                 "estimator__epsilon searches nothing; search over epsilon).",
                 UserWarning, stacklevel=user_stacklevel())
        with releasing(), atomic_tree(self):
            self._set_split(*split)
            super().fit(X, y, **params)
            self.budget_ = split[0]
            self.target_epsilon_ = float(self.epsilon)
            mark_committed()
        return self

    def _plan_split(self, X, y, statistics=None):
        """Check the table and split the total from public numbers, before
        anything is set or drawn (Sections 19.3, 19.6): ``(budget, private,
        release, updates)``, what :meth:`_set_split` applies. ``statistics``:
        the ``(rho, delta_S)`` a search planned for them (Theorem 17.5)."""
        _, private = split_preprocessing(self)
        if not private:
            raise ValueError("A PrivatePipeline needs at least one private step "
                             "(skforget.preprocessing.Private*); use ForgetPipeline "
                             "for public preprocessing only.")
        # Any 2-D table (lists of rows too), read as the private steps read it.
        table, n, n_columns = _n_rows_cols(unwrap_database(X, y)[0])
        if n_columns == 0:
            raise ValueError(f"X has {n} rows but no columns: a private pipeline "
                             "needs at least one column to fit.")
        delta = accounting.resolve_delta(self.delta, n_samples=n)
        est = self._final_estimator
        conversion = getattr(est, "_dp_conversion", lambda: "improved")()
        needs = self._public_needs(table, private)
        released = sum(r for r, _ in needs.values())
        # A share that no release can spend (every column's categories given;
        # no categorical column) goes to the estimator: the schema and the
        # constants are public, so the split stays a function of public
        # numbers (Section 19.3). A search planned its own (Theorem 17.5).
        own = statistics is None
        budget = accounting.split_private_pipeline(
            epsilon=self.epsilon, delta=delta,
            preprocessing_share=(self.preprocessing_share if released or not own
                                 or _scales_target(est) else 0.0),
            selection_share=(self.selection_share if not own or any(
                s for _, s in needs.values()) else 0.0),
            estimator_conversion=conversion)
        if statistics is not None:   # a search's (Theorem 17.5): (rho, delta_S)
            budget = dataclasses.replace(budget, rho_preprocessing=statistics[0],
                                         delta_selection=statistics[1])
        unit = {k: v for k, v in est.get_params().items()
                if k in ("relation", "group_size")}
        # A regressor given neither target_offset nor target_scale gets a
        # private centre and scale, the target weighing as many columns as the
        # table, at least TARGET_COLUMNS, of the share (Section 19.6); the
        # figure is fixed here, with the relation of the fit.
        weight = max(TARGET_COLUMNS, released)
        rho_target = (budget.rho_preprocessing * weight / (released + weight)
                      if _scales_target(est) else 0.0)
        # Its replace figure counts the histograms at the most a path spends
        # on them: all of rho_target when the first finds no range (19.6).
        release = (rho_target, _pooled_replace_rho(rho_target,
                                                   unit.get("relation", "replace")))
        # From public numbers, before any statistic: a filter raising it as an
        # error stops the fit before anything is spent (Section 20.3).
        self._warn_if_noise_dominates(n, n_columns, budget.rho_preprocessing
                                      - rho_target, private, unit)
        # Each share is spread over the steps that can spend it; a step that
        # releases nothing gets 0, which its fit checks (19.2).
        releasing = [name for name in private if needs[name][0]]
        selecting = [name for name in private if needs[name][1]]
        updates = {}
        for name in private:
            keys = self.named_steps[name].get_params()
            update = {"rho": ((budget.rho_preprocessing - rho_target) / len(releasing)
                              if name in releasing else 0.0),
                      **{k: v for k, v in unit.items() if k in keys}}
            if "delta" in keys:
                update["delta"] = (budget.delta_selection / len(selecting)
                                   if name in selecting else 0.0)
            if "data_norm" in keys and "data_norm" in est.get_params():
                update["data_norm"] = est.get_params()["data_norm"]
            updates[name] = update
        return budget, private, release, updates

    def _public_needs(self, table, private):
        """``{step: (releasing, selecting)}`` column counts of the private
        steps, from the table's schema and the public constants (19.3). A
        step after another reads that step's output, whose schema only its
        fit gives: it is counted as releasing and selecting what it may."""
        first = self.steps[0][0]
        needs = {}
        for name in private:
            step = self.named_steps[name]
            count = getattr(step, "_public_needs", None)
            if name == first and count is not None:
                needs[name] = count(table)
            else:
                needs[name] = (1, int("delta" in step.get_params()))
        return needs

    def _set_split(self, budget, private, release, updates):
        """Give the estimator and the private steps their parts of the split
        (the values of :meth:`_plan_split`)."""
        self._target_release = release
        self.__dict__.pop("target_scale_", None)
        self.__dict__.pop("target_offset_", None)
        # Marked as a pipeline's part, not the user's number: another fit,
        # a clone or another make_private_pipeline replaces it silently. The
        # values are kept beside them too, for a file format that writes a
        # float subclass as a float (skops).
        split = {"epsilon": PipelineShare(budget.estimator_epsilon),
                 "delta": PipelineShare(budget.delta_conversion)}
        self._final_estimator.set_params(**split)
        self._final_estimator.__dict__["_pipeline_split"] = split
        for name in private:
            self.named_steps[name].set_params(**updates[name])
        # What the edits' refits must still find (_check_units_since_fit): the
        # steps' parts and the pipeline's total (the estimator is checked by
        # the step's token, ForgetPipeline._check_step_unchanged).
        self._split_fitted = (
            {name: dict(updates[name]) for name in private},
            {k: getattr(self, k) for k in self._SPLIT_PARAMS})

    _FIXED_SINCE_FIT = (*ForgetPipeline._FIXED_SINCE_FIT, "epsilon", "delta")

    #: The pipeline's own parameters that decide the split of the total.
    _SPLIT_PARAMS = ("epsilon", "delta", "preprocessing_share", "selection_share")

    def _own_estimator_params(self):
        """The targets' released centre and scale (Section 19.6), checked by
        :meth:`_check_units_since_fit` itself."""
        return ("target_offset", "target_scale") if "target_scale_" in \
            self.__dict__ else ()

    def _check_units_since_fit(self):
        """Also refuse an edit after the split was changed since fit: a
        private step's part (``preprocess__rho=1.0`` re-estimated the
        statistics at it, 6.7 spent under a stated 1; a trial), or the
        pipeline's total or shares, which an edit does not split again; a
        released target's centre and scale set by hand. (Another estimator,
        ``set_params(estimator=...)``, 50.0 spent, is refused by the step's
        token.)"""
        super()._check_units_since_fit()
        if "target_scale_" in self.__dict__ and not _scales_target(
                self._final_estimator):
            # The fit released the targets' centre and scale and each edit
            # releases them again; a public pair set since would be replaced
            # by the release in silence (a trial).
            raise UnlearningError(
                "The estimator's target_offset or target_scale was set since the "
                "pipeline was fitted, where it released a private centre and "
                "scale of the targets, which each edit releases again "
                "(privacy-accounting.md, Section 19.6). Set them back to their "
                "defaults to serve the edit, or fit the pipeline again to use "
                "the public ones.")
        fitted = self.__dict__.get("_split_fitted")
        if fitted is None:
            return   # pickled before the split was recorded
        parts, own = fitted
        for name, part in parts.items():
            now = self.named_steps[name].get_params()
            for key, before in part.items():
                if not _same_value(before, now.get(key)):
                    raise UnlearningError(
                        f"{name}__{key}={now.get(key)!r} was set since the pipeline "
                        f"was fitted, where the split of its total gave {before!r}: "
                        "an edit re-estimates the statistics at it, outside the "
                        f"pipeline's guarantee. Set {name}__{key}={before!r} again "
                        "to serve the edit, or set the pipeline's epsilon or "
                        "preprocessing_share and fit again.")
        for key, before in own.items():
            if not _same_value(before, getattr(self, key)):
                raise UnlearningError(
                    f"{key}={getattr(self, key)!r} was set since the pipeline was "
                    f"fitted with {key}={before!r}: an edit retrains under the "
                    "fit's split, which it would no longer state. Set "
                    f"{key}={before!r} again to serve the edit, or fit again.")

    @staticmethod
    def _changed_since_fit(param, before, now):
        """Also the estimator's ``epsilon`` or ``delta``: its refit would spend
        that number, past the pipeline's total, which its guarantee and
        ``epsilon`` still state (a second reader: 1.0 stated, 5.04 spent)."""
        if param not in ("epsilon", "delta"):
            return ForgetPipeline._changed_since_fit(param, before, now)
        return (f"The estimator's {param}={now!r} was set since the pipeline was "
                f"fitted, where its part of the total was {before:.6g}: an edit "
                f"would retrain at it. Set estimator__{param}={before!r} again to "
                "serve the edit, or set the pipeline's total and fit again.")

    def _releases_target(self):
        """Whether a fit releases the regressor's target centre and scale."""
        return _scales_target(self._final_estimator)

    def _own_releases(self):
        rho, rho_replace = self.__dict__.get("_target_release", (0.0, 0.0))
        return (("target", rho, 0.0, rho_replace),) if rho else ()

    def _fit_steps(self, X, y, **params):
        """Release the target's centre and scale (Section 19.6), then fit every
        step with them as the regressor's ``target_offset`` and
        ``target_scale``."""
        target = self._release_target(X, y)
        if target is None:
            return super()._fit_steps(X, y, **params)
        est = self._final_estimator
        unit = est.get_params()
        est.set_params(target_offset=target[0], target_scale=target[1])
        try:
            super()._fit_steps(X, y, **params)
        finally:
            est.set_params(target_scale=unit["target_scale"],
                           target_offset=unit["target_offset"])
        self.target_offset_, self.target_scale_ = target
        return self

    def _release_target(self, X, y):
        """The regressor's private ``(target_offset, target_scale)``
        (Section 19.6), or None when the pipeline releases none."""
        rho = self.__dict__.get("_target_release", (0.0, 0.0))[0]
        if not rho:
            return None
        unit = self._final_estimator.get_params()
        # Refused before anything is drawn: targets that no bound covers.
        if y is None:
            raise ValueError("A regressor needs its targets y.")
        try:
            values = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("A regressor's targets y must be numbers: "
                             f"y[{_first_bad(y)}] is not one.") from None
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]   # a column, as the estimator takes it
        if values.ndim != 1 or len(values) != _num_samples(X):
            raise ValueError(f"y must hold one number per record of X (a 1-D "
                             f"array or one column): shape {values.shape} for "
                             f"{_num_samples(X)} records.")
        check_finite_targets(values)
        first = self.named_steps[private_step_names(self)[0]]
        rng = segment_rng(first.get_params().get("random_state"), 0, TARGET_STREAM)
        # A pipeline pickled before the pooled path fixed a replace figure
        # for histograms at 5/12 of rho: under zero-out it does not cover a
        # second histogram, which its edits then do not draw.
        relation = unit.get("relation", "replace")
        pooled = (self.__dict__["_target_release"][1]
                  >= _pooled_replace_rho(rho, relation) * (1 - 1e-12))
        _, _, centre, spread, octave, cleared = private_column(
            values, rho, relation, unit.get("group_size", 1), rng, target=True,
            pooled=pooled)
        why = beyond_resolution(*octave) if cleared else None
        if why is not None:
            # Targets of 1e17, or all below 1e-3, in one edge bin: the released
            # centre and scale are the bin's, not the targets' (a function of
            # the release, so no privacy cost; shown once it is recorded).
            warn_about_release(
                f"PrivatePipeline: the targets' private range is {why}. The "
                "regressor's centre and scale are then that bin's, which may "
                "fit the targets badly.", UserWarning)
        if not cleared:
            # No bin of the target's histogram cleared its threshold: the
            # range is the largest noisy bin's, at this budget possibly 2**50
            # away. The targets are then fitted as they are (post-processing
            # of the release; Section 19.6).
            centre, scale = 0.0, 1.0
            # Shown once the release is recorded (it reads the release).
            warn_about_release(
                "PrivatePipeline: at this budget no bin of the targets' private "
                "histogram stood out from its noise, so the regressor is fitted on "
                "the targets as they are, which it may fit badly. Give it a public "
                "target_offset and target_scale (the centre and half-width of the "
                "quantity's known range), or the pipeline a larger epsilon or "
                "preprocessing_share.", UserWarning)
        elif not unit.get("fit_intercept", True):
            # A model through the origin keeps 0 as the targets' origin.
            centre, scale = 0.0, TARGET_SPREADS * max(spread, abs(centre))
        else:
            scale = TARGET_SPREADS * spread
        return float(centre), float(scale)

    def _warn_if_noise_dominates(self, n, n_columns, rho_steps, private, unit):
        """Warn when, from public numbers alone (rows, columns, the split), each
        column's private histogram carries noise of more than an eighth of the
        rows: the released bounds, centres and category lists are then likely
        mostly noise, and the model with them (measured: breast cancer, 398
        training rows x 30 columns at epsilon=1, balanced accuracy from 0.85
        to 0.94 over 10 splits, median 0.88, against 0.93 with public
        constants: user guide, pipelines). A rule on public
        numbers, so it costs no privacy; it cannot see every failure."""
        # A column gets its step's share split over the columns that release
        # (a listed one does not), and its bounds BOUNDS_SHARE of that
        # (Sections 19.2, 19.3); the noise of one count, or of the moments
        # when every releasing column's range is given:
        given = [self.named_steps[name].get_params() for name in private]
        n_listed = sum(len(p.get("categories") or {}) for p in given)
        n_ranges = sum(len(p.get("bounds") or {}) for p in given)
        n_release = n_columns - n_listed
        if n_release <= 0:
            return
        rho = rho_steps / len(private) / n_release
        relation, g = unit.get("relation", "replace"), unit.get("group_size", 1)
        if n_ranges < n_release:
            sigma, _ = bounds_threshold(rho * BOUNDS_SHARE, relation, g)
        else:
            sigma = accounting.gaussian_noise_for_rho(
                rho=rho, sensitivity=accounting.moments_sensitivity(
                    relation=relation, group_size=g))
        if sigma > n / 8.0:
            warn(
                f"On {n} rows and {n_columns} columns at epsilon={self.epsilon:g}, "
                f"each column's private statistics carry noise of about "
                f"{sigma:.0f} records, more than an eighth of the rows: the "
                "private preprocessing is likely mostly noise, and the model with "
                "it. Give the pipeline a larger epsilon or preprocessing_share, "
                "fewer columns, or the ranges and categories you know without the "
                "table (make_private_pipeline(bounds=..., categories=...)).",
                UserWarning, stacklevel=user_stacklevel())


register_pipeline_class(PrivatePipeline)


def _pooled_replace_rho(rho, relation):
    """The target part's rho against a replaced unit: its histograms at the
    most a path spends on them, all of ``rho`` (Section 19.6)."""
    return accounting.replacement_rho(histogram_rho=rho, moments_rho=0.0,
                                      relation=relation)


def _scales_target(est):
    """Whether the pipeline releases the final step's target centre and scale:
    a regressor given neither (public parameters only, Section 19.6)."""
    params = est.get_params()
    return (is_regressor(est) and "target_scale" in params
            and params["target_scale"] is None
            and params.get("target_offset", 0.0) == 0.0)


def make_private_pipeline(estimator, *, epsilon=1.0, delta="auto",
                          preprocessing_share=0.25, selection_share=0.1,
                          bounds=None, categories=None, add_indicator=False,
                          random_state=None):
    """A private pipeline for a raw table: no constant written by hand.

    Numeric columns are standardised with a privately estimated range, centre
    and scale, other columns one-hot encoded over privately selected
    categories (rare and unseen values share an ``infrequent`` column),
    missing values imputed by the private mean (numbers) or kept as a
    category; rows are then scaled into the estimator's ``data_norm`` ball
    (:class:`~skforget.preprocessing.PrivateTableEncoder`). One total
    ``(epsilon, delta)`` is split between the preprocessing and the estimator
    (:func:`skforget.accounting.split_private_pipeline`), and the returned
    pipeline's ``privacy_guarantee_`` is the composed figure
    (privacy-accounting.md, Section 19). Deletion by index label works as for
    :class:`ForgetPipeline`: the statistics are re-estimated with fresh noise
    and the model retrained. A regressor's targets are centred and scaled with
    private statistics too, unless its ``target_offset`` or ``target_scale``
    is given.

    Parameters
    ----------
    estimator : skforget estimator
        Its ``epsilon`` and ``delta`` are set by the split at ``fit`` (values
        given to it are replaced, with a warning); its
        ``relation``, ``group_size`` and ``data_norm`` are passed to the
        preprocessing.
    epsilon : float, default=1.0
        Total target epsilon.
    delta : float or "auto", default="auto"
        Total target delta; "auto" is ``min(1e-5, n**-1.1)``.
    preprocessing_share : float, default=0.25
        Share of the budget's rho-coefficient spent on the preprocessing; 0
        when no column releases a statistic (every column's categories
        given) and no regressor's target is released: the estimator then
        gets the whole budget.
    selection_share : float, default=0.1
        Share of ``delta`` left to the category selections; 0 when no column
        selects (a table of numbers, or every category list given).
    bounds : dict or None, default=None
        Public ranges ``{column: (lo, hi)}`` of numeric columns that you know
        without the table (a codebook's, a measurement's physical range): no
        range is estimated for them, and their centre and scale get the
        column's whole share. On small tables this is where most of the
        statistics' error goes.
    categories : dict or None, default=None
        Public category lists ``{column: [values]}`` of the other columns,
        known without the table (a form's options): no selection, every
        listed value kept however rare, and the column's share goes to the
        rest. Constants read off the rows are outside every figure
        (privacy-accounting.md, Section 19.2).
    add_indicator : bool, default=False
        Missingness indicator columns for the numeric columns.
    random_state : int, RandomState instance or None, default=None
        Noise of the preprocessing (the estimator keeps its own).

    Returns
    -------
    pipeline : PrivatePipeline

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skforget import Database, EditRequest, NoisyGDClassifier
    >>> from skforget.pipeline import make_private_pipeline
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"age": rng.integers(18, 90, 4000).astype(float),
    ...                   "job": rng.choice(["a", "b", None], 4000)})
    >>> y = (X["age"] > 50).astype(int)
    >>> pipe = make_private_pipeline(
    ...     NoisyGDClassifier(classes=[0, 1], random_state=0), epsilon=1.0,
    ...     random_state=0)
    >>> db = Database(X, y)
    >>> pipe = pipe.fit(db)
    >>> round(pipe.privacy_guarantee_.epsilon, 3) <= 1.0
    True
    >>> pipe = pipe.partial_unlearn(EditRequest(db, delete=[3], by="id"))
    >>> pipe.privacy_guarantee_.deletion.rho_deletion
    0.0
    """
    params = estimator.get_params()
    if "epsilon" not in params:
        raise TypeError("make_private_pipeline needs a skforget estimator, whose "
                        "epsilon and delta the pipeline sets from its total "
                        f"budget; got {type(estimator).__name__}.")
    given = stated_budget(estimator)
    if given:
        # The user's number would otherwise be replaced without a word (the
        # pipeline's total is what it spends, Section 19.3).
        text = ", ".join(f"{name}={value!r}" for name, value in given.items())
        warn(
            f"make_private_pipeline: the estimator's {text} will be replaced at "
            f"fit by its part of the pipeline's total (epsilon={epsilon!r}, "
            f"delta={delta!r}), which covers the preprocessing and the model "
            "together. Give the total budget to make_private_pipeline.",
            UserWarning, stacklevel=2)
    encoder = PrivateTableEncoder(
        relation=params.get("relation", "replace"),
        group_size=params.get("group_size", 1),
        data_norm=params.get("data_norm", 1.0), add_indicator=add_indicator,
        bounds=bounds, categories=categories, random_state=random_state)
    pipe = PrivatePipeline([("preprocess", encoder), ("estimator", estimator)],
                           epsilon=epsilon, delta=delta,
                           preprocessing_share=preprocessing_share,
                           selection_share=selection_share)
    if given:   # said here: its fit does not say it again (a clone will)
        pipe._budget_said = given
    return pipe
