# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private preprocessing: statistics of the rows released with Gaussian noise.

Each transformer's fitted state is a function of its noisy releases and public
numbers only (privacy-accounting.md, Section 19): bounds from a log-binned
histogram, centre and scale from clipped moments, category sets from a
partition selection. Their cost is a rho-coefficient (plus a delta for the
selections) that :class:`~skforget.pipeline.ForgetPipeline` adds to the
estimator's.
"""

import functools
import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from skforget import accounting
from skforget._release import release_spending, releasing_atomically, warn_about_release
from skforget._utils import named_few
from skforget._validation import (
    PREPROCESSING_STREAM,
    PRIVACY_CONSTRAINTS,
    Interval,
    SelectionContextMixin,
    StrOptions,
    consumes_selection_context,
    noise_key,
    segment_rng,
)
from skforget.exceptions import CoarseRangeWarning
from skforget.preprocessing._categorical import (
    _column_rngs,
    _noisy_counts,
    warn_if_no_category_kept,
    warn_if_numbers_as_categories,
)
from skforget.preprocessing._columns import (
    _as_categories,
    _as_float,
    _check_input,
    _column,
    _input_names,
    _labels,
    _n_rows_cols,
    _names_of,
    check_bounds,
    check_categories,
    public_by_column,
    time_kind,
)
from skforget.preprocessing._numeric import (
    BOUNDS_SHARE,
    REFINE_SHARE,
    _single_bin,
    beyond_resolution,
    bounds_threshold,
    private_column,
)

__all__ = ["PrivateOneHotEncoder", "PrivateSimpleImputer", "PrivateStandardScaler"]

INFREQUENT = "infrequent"

_COMMON = {
    # 0 for a step that releases nothing (every column's categories given):
    # refused at fit when a column would release (_check_shares).
    "rho": [Interval(Real, 0, None, closed="left")],
    "relation": [StrOptions({"replace", "zero_out"})],
    "group_size": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "ledger": PRIVACY_CONSTRAINTS["ledger"],
}


def _atomic(fit):
    """A failed ``fit`` leaves the step exactly as it was; with a ``ledger``
    its releases are checked and reserved there before the first statistic
    (privacy-accounting.md, Section 20.1: its ``rho`` and selection
    ``delta``, Gaussian mechanisms outside the selections' events)."""
    @functools.wraps(fit)
    @consumes_selection_context
    def wrapper(self, *args, **kwargs):
        # Warnings about the released statistics wait until the fit (an
        # enclosing pipeline's, when there is one) has succeeded (20.3).
        self._validate_params()
        with releasing_atomically(self), release_spending(
                self.ledger, f"{type(self).__name__}.fit",
                self.__dict__.get("_selection_context", ()), owner=self, rho=self.rho,
                delta=float(getattr(self, "delta", 0.0)), gaussian=True,
                relation=self.relation, group_size=self.group_size,
                noise=(noise_key(self.random_state, 0, PREPROCESSING_STREAM),)):
            return fit(self, *args, **kwargs)
    return wrapper


class _PrivateStep(SelectionContextMixin, TransformerMixin, BaseEstimator):
    """Shared parameters, input checks and the private-step protocol."""

    def __skforget_private__(self):
        check_is_fitted(self, "privacy_guarantee_")
        return self.privacy_guarantee_

    #: Parameters added since the first release, with the value that keeps an
    #: older pickle's behaviour: a ledger records nowhere, no constant given.
    _added_params = {"ledger": None}

    def __setstate__(self, state):
        super().__setstate__({**self._added_params, **state})

    def _public_needs(self, X):
        """``(releasing, selecting)``: how many columns of ``X`` a fit would
        release a Gaussian statistic of, and select the categories of, read
        from its schema and the public constants alone, the step unchanged
        (privacy-accounting.md, 19.2, 19.3). Every column of a numeric step
        releases its moments."""
        return _n_rows_cols(X)[2], 0

    def _check_shares(self, releasing, selecting):
        """Refuse, before any release, a ``rho`` or ``delta`` of 0 (a step
        that a pipeline's split gave nothing, 19.3) when a column releases."""
        # A pipeline splits its budget at fit for the constants then given: a
        # step it gave 0 is refitted by an edit with that 0.
        again = (" In a pipeline (which gives 0 to a step that releases nothing "
                 "for the constants given at fit), fit the pipeline again: its "
                 "split follows the constants in force.")
        if releasing and self.rho == 0:
            raise ValueError(
                f"{type(self).__name__}: rho=0, but {releasing} column(s) release "
                "statistics (only categorical columns whose categories are given "
                "release nothing). Give rho > 0, or those columns' categories."
                + again)
        if selecting and getattr(self, "delta", None) == 0:
            raise ValueError(
                f"{type(self).__name__}: delta=0, but the categories of {selecting} "
                "column(s) are selected, which needs delta > 0. Give delta > 0, or "
                "those columns' categories." + again)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.non_deterministic = True
        return tags

    def _guarantee(self, columns, histogram_share=1.0, rho_replace=None):
        # Against a replaced unit (Theorem 19.6): histograms x2 under zero-out.
        # What the columns spent: less than rho when every category is given.
        rho = math.fsum(r for _, r, _ in columns)
        rho_replace = rho_replace or accounting.replacement_rho(
            histogram_rho=rho * histogram_share, relation=self.relation,
            moments_rho=rho * (1 - histogram_share))
        return accounting.release_guarantee(columns=columns, relation=self.relation,
                                            group_size=self.group_size,
                                            rho_replace=rho_replace)


class _NumericStep(_PrivateStep):
    # Every column releases its moments: rho = 0 is never a numeric step's.
    _parameter_constraints: dict = {**_COMMON, "add_indicator": ["boolean"],
                                    "bounds": [dict, None],
                                    "rho": [Interval(Real, 0, None, closed="neither")]}
    _added_params = {"ledger": None, "bounds": None}

    def __init__(self, rho=0.01, *, bounds=None, relation="replace", group_size=1,
                 add_indicator=False, random_state=None, ledger=None):
        self.rho = rho
        self.bounds = bounds
        self.relation = relation
        self.group_size = group_size
        self.add_indicator = add_indicator
        self.random_state = random_state
        self.ledger = ledger

    def _fit_columns(self, X, rng):
        """Release each column's range, centre and scale; returns the centres,
        the scales, the log histogram's range of each column and whether a bin
        of it cleared the threshold (released numbers: what the coarse-range
        warning reads)."""
        X = _check_input(self, X, reset=True)
        names = _input_names(self)
        given = public_by_column(self.bounds, names, "bounds", _labels(self, X))
        public = [None if b is None else check_bounds(b, name)
                  for b, name in zip(given, names, strict=True)]
        self._check_shares(X.shape[1], 0)
        # Which columns are dates or durations (public: their dtypes), read
        # as seconds: a transform must get them so again.
        self._time_columns = tuple(time_kind(_column(X, j))
                                   for j in range(X.shape[1]))
        columns = [_as_float(_column(X, j), names[j]) for j in range(X.shape[1])]
        rho_col = self.rho / len(columns)
        rngs = _column_rngs(rng, len(columns))
        bounds, centre, scale, octaves, cleared = [], [], [], [], []
        for values, given, rng in zip(columns, public, rngs, strict=True):
            lo, hi, c, s, octave, kept = private_column(
                values, rho_col, self.relation, self.group_size, rng, bounds=given)
            # A public range is the user's: no octave to warn about.
            octaves.append(None if given is not None else octave)
            cleared.append(kept)
            bounds.append((lo, hi))
            centre.append(c)
            scale.append(s)
        self.bounds_ = np.array(bounds, dtype=float).reshape(-1, 2)
        # Against a replaced unit the histograms count twice under zero-out
        # (Theorem 19.6): the figure takes the path that gave them the most,
        # on the columns whose range is estimated (a public one has none).
        estimated = sum(b is None for b in public) / len(public)
        self.privacy_guarantee_ = self._guarantee(
            [(n, rho_col, 0.0) for n in names],
            (BOUNDS_SHARE + REFINE_SHARE) * estimated)
        return (np.array(centre, dtype=float), np.array(scale, dtype=float), octaves,
                cleared)

    def _read(self, X):
        check_is_fitted(self, "privacy_guarantee_")
        X = _check_input(self, X, reset=False)
        names = _input_names(self)
        columns = [_column(X, j) for j in range(X.shape[1])]
        # Pickled before the kinds were kept: not checked.
        kinds = self.__dict__.get("_time_columns") or [None] * len(columns)
        for col, name, kind in zip(columns, names, kinds, strict=True):
            now = time_kind(col)
            if kind is not None and now != kind:
                # A trial's dates given as integer years at predict were read
                # as seconds since 1970: every prediction became one class.
                raise ValueError(
                    f"Column {name!r} was {kind or 'numbers'} at fit and is "
                    f"{now or f'of dtype {col.dtype}'} now: dates and durations "
                    "are read as seconds, so the same values in another type "
                    "mean something else. Give the column the type it had at "
                    "fit (pd.to_datetime, pd.to_timedelta).")
        return np.column_stack([_as_float(col, name) for col, name
                                in zip(columns, names, strict=True)]).reshape(X.shape)

    def _with_indicator(self, out, values):
        if self.add_indicator:
            out = np.hstack([out, np.isnan(values).astype(float)])
        return out

    def get_feature_names_out(self, input_features=None):
        """Input names, then ``missingindicator_<name>`` if ``add_indicator``.

        Parameters
        ----------
        input_features : array-like of str, default=None

        Returns
        -------
        names : ndarray of str
        """
        check_is_fitted(self, "privacy_guarantee_")
        names = [c for c, _, _ in self.privacy_guarantee_.columns]
        if input_features is not None:
            names = [str(c) for c in input_features]
        if self.add_indicator:
            names = names + [f"missingindicator_{c}" for c in names]
        return np.asarray(names, dtype=object)


class PrivateStandardScaler(_NumericStep):
    """Standardise numbers with a privately estimated range, centre and scale.

    For each column (privacy-accounting.md, Section 19.2): a log-binned
    histogram of the values with Gaussian noise gives a range ``[lo, hi]``
    (the lowest and highest bins whose noisy count clears a threshold that an
    empty bin passes with probability 1e-3); a range within a factor 4 on one
    side of zero, which a column of years or heights fills a sliver of, is
    narrowed by a second histogram of 32 equal sub-bins within it when that
    shows nearly all the records in a small part (a twelfth of the column's
    budget, from the moments'). Then noisy sums of the values clipped to that
    range give the mean and standard deviation.
    ``transform`` clips to ``[lo, hi]``, centres and scales; a missing value
    becomes 0 (the private mean) and, with ``add_indicator``, a 1 in an extra
    column. Nothing of the rows but
    these releases is kept.

    Parameters
    ----------
    rho : float, default=0.01
        Rho-coefficient (zCDP) of all the releases, spread equally over the
        columns (a third for the range, the rest for the refinement and the
        moments). From an ``(epsilon, delta)`` target:
        ``skforget.accounting.epsilon_to_rho``.
    bounds : dict or None, default=None
        Public ranges ``{column: (lo, hi)}`` (a DataFrame's column label, or an
        array's position) known without the table: a codebook's, a measurement's
        physical range. Such a column skips the range's histograms (its moments
        take its whole share) and its values are clipped to the range given. A
        range read off the rows is outside every figure (privacy-accounting.md,
        Section 19.2).
    relation : {"replace", "zero_out"}, default="replace"
        Neighbouring relation, as the estimators define it.
    group_size : int, default=1
        Records per privacy unit.
    add_indicator : bool, default=False
        Append one column per feature, 1 where the value is missing.
    random_state : int, RandomState instance or None, default=None
        Noise source; None (fresh entropy) is the setting in which the
        guarantee holds, an integer must stay secret.
    ledger : skforget.PrivacyLedger or None, default=None
        Where ``fit`` checks and records its releases (``rho`` and the
        selections' ``delta``) before the first statistic; inside a private
        pipeline that records, the pipeline's entry holds them instead.

    Attributes
    ----------
    bounds_ : ndarray of shape (n_features, 2)
        The released range of each column.
    center_, scale_ : ndarray of shape (n_features,)
    privacy_guarantee_ : ReleaseGuarantee
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    See Also
    --------
    PrivateTableEncoder : One private step per column, chosen by dtype.
    PublicScaler : The same map with public constants (no privacy cost).

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.preprocessing import PrivateStandardScaler
    >>> X = np.random.default_rng(0).normal(40, 10, size=(5000, 1))
    >>> scaler = PrivateStandardScaler(rho=0.5, random_state=0).fit(X)
    >>> scaler.bounds_.tolist()
    [[8.0, 128.0]]
    >>> bool(abs(scaler.center_[0] - 40) < 1)
    True
    """

    @_atomic
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release each column's range, centre and scale.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numbers; NaN (or None, pandas.NA) is missing.
        y : None
            Ignored.

        Returns
        -------
        self : PrivateStandardScaler
        """
        return self._fit(X, segment_rng(self.random_state, 0, PREPROCESSING_STREAM))

    def _fit(self, X, rng):
        self.center_, self.scale_, octaves, cleared = self._fit_columns(X, rng)
        self._warn_if_coarse(octaves, cleared)
        return self

    def _warn_if_coarse(self, octaves, cleared):
        """Name the columns whose log histogram kept one bin, or its outer one.

        Read from the released histograms' ranges and public numbers only (the
        bins are public). A refinement may narrow such a range further (a year
        column within [1024, 2048]); the warning names the octave, which is
        what clipped the values outside it.
        """
        coarse = [j for j, octave in enumerate(octaves) if octave is not None
                  and (_single_bin(*octave) or beyond_resolution(*octave))]
        if not coarse:
            return
        names = [c for c, _, _ in self.privacy_guarantee_.columns]
        _, need = bounds_threshold(self.rho / len(names) * BOUNDS_SHARE,
                                   self.relation, self.group_size)
        def entry(j):
            text = f"{names[j]!r} [{octaves[j][0]:.6g}, {octaves[j][1]:.6g}]"
            lo, hi = self.bounds_[j]
            if (lo, hi) != tuple(octaves[j]):
                text += f" (narrowed within it to [{lo:.6g}, {hi:.6g}])"
            if not cleared[j]:
                # The range of no bin that stood out: where noise peaked.
                return (f"{text} (no bin cleared its noise threshold: the "
                        "largest noisy bin's, which need not hold a value)")
            why = beyond_resolution(*octaves[j])
            return text if why is None else f"{text} ({why})"

        # No bin cleared: the range is where noise peaked, which may hold no
        # value of the column, leaving it constant (trial 18, F10).
        guessed = [names[j] for j in coarse if not cleared[j]]
        one = len(guessed) == 1
        lead = (f"no bin of the log histogram of {named_few(map(repr, guessed))} "
                "stood out from its noise, so "
                + ("its range is a guess that may hold none of its values, and "
                   "the column is then constant" if one else "their ranges are "
                   "guesses that may hold none of their values, and those columns "
                   "are then constant")
                + " after clipping. More generally, " if guessed else "")
        warn_about_release(
            f"{type(self).__name__}: {lead}the private range of {len(coarse)} of "
            f"{len(names)} column(s) is a single bin of the log histogram, or "
            f"reaches its outer bin: "
            f"{named_few(map(entry, coarse))}. Values outside it are clipped to its "
            "ends: unless "
            "a column's values do lie within that factor of two (or at 0), it "
            f"keeps little more than its sign or octave. At this budget a bin "
            f"needs about {need:.0f} records to be kept; give the "
            "preprocessing more budget (rho, or make_private_pipeline's "
            "preprocessing_share) or, where you know them without the table, "
            "public ranges (bounds={column: (lo, hi)}).",
            CoarseRangeWarning)

    def transform(self, X):
        """``(clip(X, lo, hi) - center_) / scale_``; missing values become 0.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_scaled : ndarray of shape (n_samples, n_features[ * 2])
        """
        values = self._read(X)
        clipped = np.clip(values, self.bounds_[:, 0], self.bounds_[:, 1])
        out = np.nan_to_num((clipped - self.center_) / self.scale_, nan=0.0)
        return self._with_indicator(out, values)


class PrivateSimpleImputer(_NumericStep):
    """Replace missing numbers by a privately estimated mean.

    The mean of each column is released as in :class:`PrivateStandardScaler`
    (range from a noisy log histogram unless given, then the noisy mean of the
    values clipped to it; privacy-accounting.md, Section 19.2). ``transform`` keeps
    observed values as they are and fills missing ones with it.

    Parameters
    ----------
    rho : float, default=0.01
        Rho-coefficient of all the releases, spread equally over the columns.
    bounds : dict or None, default=None
        Public ranges ``{column: (lo, hi)}`` known without the table: the
        mean is estimated within the range given (no histogram), and observed
        values are kept as they are.
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1
    add_indicator : bool, default=False
        Append one column per feature, 1 where the value is missing.
    random_state : int, RandomState instance or None, default=None
    ledger : skforget.PrivacyLedger or None, default=None
        Where ``fit`` checks and records its releases (``rho`` and the
        selections' ``delta``) before the first statistic; inside a private
        pipeline that records, the pipeline's entry holds them instead.

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features,)
        The fill value of each column.
    bounds_ : ndarray of shape (n_features, 2)
    privacy_guarantee_ : ReleaseGuarantee
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.preprocessing import PrivateSimpleImputer
    >>> X = np.random.default_rng(0).normal(40, 10, size=(5000, 1))
    >>> X[::10] = np.nan
    >>> imputer = PrivateSimpleImputer(rho=0.5, random_state=0).fit(X)
    >>> bool(abs(imputer.statistics_[0] - 40) < 1)
    True
    >>> bool(np.isnan(imputer.transform(X)).any())
    False
    """

    @_atomic
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release each column's fill value.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : PrivateSimpleImputer
        """
        rng = segment_rng(self.random_state, 0, PREPROCESSING_STREAM)
        self.statistics_, *_ = self._fit_columns(X, rng)
        return self

    def transform(self, X):
        """Missing values replaced by ``statistics_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_filled : ndarray of shape (n_samples, n_features[ * 2])
        """
        values = self._read(X)
        out = np.where(np.isnan(values), self.statistics_, values)
        return self._with_indicator(out, values)


class PrivateOneHotEncoder(_PrivateStep):
    """One-hot encode categories chosen by private partition selection.

    For each column, the values present get a count plus Gaussian noise and
    only those whose noisy count exceeds a threshold are released
    (privacy-accounting.md, Proposition 19.3): a value held by few records is
    never shown. Each released category gets one output column and every
    other value (rare at ``fit``, or never seen) goes to one ``infrequent``
    column: the two cannot be told apart without the unreleased values,
    which are private. A missing value is the category ``"<missing>"``.
    Values are compared as strings.

    Parameters
    ----------
    rho : float, default=0.01
        Rho-coefficient of the noisy counts, spread equally over the columns
        whose categories are not given (0 allowed when every column's are).
    delta : float, default=1e-7
        Probability of the selections' bad event (a value only the changed
        unit holds is released), spread equally over the columns; it sets the
        threshold ``g + sigma * isf(delta / g)`` (0 allowed when every
        column's categories are given).
    categories : dict or None, default=None
        Public category lists ``{column: [values]}`` (a DataFrame's column
        label, or an array's position) known without the table: a form's
        options, a codebook. Such a column releases nothing (its share of
        ``rho`` and ``delta`` goes to the others) and keeps every value listed,
        however rare; a value not listed goes to ``infrequent``. Values are
        compared as strings (``[1, 2]`` matches 1 and "1", not 1.0); ``None``
        listed is the missing value. A list read off the rows is outside every
        figure (privacy-accounting.md, Section 19.2).
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1
    random_state : int, RandomState instance or None, default=None
    ledger : skforget.PrivacyLedger or None, default=None
        Where ``fit`` checks and records its releases (``rho`` and the
        selections' ``delta``) before the first statistic; inside a private
        pipeline that records, the pipeline's entry holds them instead.

    Attributes
    ----------
    categories_ : list of ndarray
        The released (or given) categories of each column, sorted.
    thresholds_ : ndarray of shape (n_features,)
        The selection threshold of each column (public: from rho and delta;
        NaN for a column whose categories were given).
    privacy_guarantee_ : ReleaseGuarantee
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.preprocessing import PrivateOneHotEncoder
    >>> X = np.array([["a"]] * 3000 + [["b"]] * 2000 + [["rare"]] * 3, dtype=object)
    >>> enc = PrivateOneHotEncoder(rho=0.5, random_state=0).fit(X)
    >>> enc.categories_[0].tolist()
    ['a', 'b']
    >>> enc.transform([["rare"], ["new"], ["a"]])
    array([[0., 0., 1.],
           [0., 0., 1.],
           [1., 0., 0.]])
    """

    _parameter_constraints: dict = {
        **_COMMON, "delta": [Interval(Real, 0, 1, closed="left")],
        "categories": [dict, None]}
    _added_params = {"ledger": None, "categories": None}

    def __init__(self, rho=0.01, *, delta=1e-7, categories=None, relation="replace",
                 group_size=1, random_state=None, ledger=None):
        self.rho = rho
        self.delta = delta
        self.categories = categories
        self.relation = relation
        self.group_size = group_size
        self.random_state = random_state
        self.ledger = ledger

    @_atomic
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the categories of each column.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : PrivateOneHotEncoder
        """
        return self._fit(X, segment_rng(self.random_state, 0, PREPROCESSING_STREAM))

    def _public_needs(self, X):
        X, _, _ = _n_rows_cols(X)
        listed = public_by_column(self.categories, _names_of(self, X), "categories",
                                  _labels(self, X))
        unlisted = sum(c is None for c in listed)
        return unlisted, unlisted

    def _fit(self, X, rng):
        X = _check_input(self, X, reset=True)
        names = _input_names(self)
        n_cols = X.shape[1]
        public = [None if c is None else check_categories(c, name) for c, name in zip(
            public_by_column(self.categories, names, "categories",
                             _labels(self, X)), names, strict=True)]
        # A listed column releases nothing (Section 19.2): rho and delta go to
        # the columns whose categories are selected.
        n_private = sum(c is None for c in public)
        self._check_shares(n_private, n_private)
        rho_col = self.rho / max(n_private, 1)
        delta_col = self.delta / max(n_private, 1)
        sigma, tau = accounting.partition_selection(
            rho=rho_col, delta=delta_col, relation=self.relation,
            group_size=self.group_size) if n_private else (None, np.nan)
        seeds = rng.integers(0, 2**32, size=(n_cols, 4))
        categories, spent = [], []
        for j, given in enumerate(public):
            if given is not None:
                categories.append(given)
                spent.append((names[j], 0.0, 0.0))
                continue
            noisy = _noisy_counts(_as_categories(_column(X, j)),
                                  [int(w) for w in seeds[j]], sigma)
            categories.append(np.array(sorted(v for v, c in noisy.items() if c > tau),
                                       dtype=object))
            spent.append((names[j], rho_col, delta_col))
        self.categories_ = categories
        self.thresholds_ = np.array([np.nan if c is not None else tau for c in public])
        self.privacy_guarantee_ = self._guarantee(spent)
        selected = [j for j, c in enumerate(public) if c is None]
        warn_if_no_category_kept(type(self).__name__, [names[j] for j in selected],
                                 [categories[j] for j in selected], tau)
        warn_if_numbers_as_categories(type(self).__name__,
                                      [names[j] for j in selected],
                                      [categories[j] for j in selected])
        return self

    def transform(self, X):
        """One column per released category, then one ``infrequent`` column.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_onehot : ndarray of shape (n_samples, n_output_features)
        """
        check_is_fitted(self, "privacy_guarantee_")
        X = _check_input(self, X, reset=False)
        blocks = []
        for j, cats in enumerate(self.categories_):
            values = _as_categories(_column(X, j))
            block = np.zeros((values.shape[0], len(cats) + 1))
            pos = np.searchsorted(cats, values) if len(cats) else \
                np.zeros(values.shape[0], dtype=int)
            pos = np.minimum(pos, max(len(cats) - 1, 0))
            hit = (cats[pos] == values) if len(cats) else \
                np.zeros(values.shape[0], dtype=bool)
            block[np.flatnonzero(hit), pos[hit]] = 1.0
            block[~hit, len(cats)] = 1.0
            blocks.append(block)
        return np.hstack(blocks) if blocks else np.zeros((X.shape[0], 0))

    def get_feature_names_out(self, input_features=None):
        """``<column>_<category>`` per released category, then
        ``<column>_infrequent``.

        Parameters
        ----------
        input_features : array-like of str, default=None

        Returns
        -------
        names : ndarray of str
        """
        check_is_fitted(self, "privacy_guarantee_")
        names = [c for c, _, _ in self.privacy_guarantee_.columns]
        if input_features is not None:
            names = [str(c) for c in input_features]
        out = []
        for name, cats in zip(names, self.categories_, strict=True):
            out.extend(f"{name}_{c}" for c in cats)
            out.append(f"{name}_{INFREQUENT}")
        return np.asarray(out, dtype=object)
