# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The public output-perturbation estimators (classifier and regressor)."""

from numbers import Real

from sklearn.base import ClassifierMixin, RegressorMixin

from skforget._output_perturbation import _BaseOutputPerturbation
from skforget._tasks import (
    _MIN_TARGET_SCALE,
    _PrivateClassifierMixin,
    _PrivateRegressorMixin,
)
from skforget._utils import fill_doc
from skforget._validation import Interval, StrOptions

_COMMON_PARAMETERS = """\
    epsilon : float, default=1.0
        DP target for every record present (``(epsilon, delta)``-DP under
        ``relation``).
    delta : float or "auto", default="auto"
        DP failure probability; "auto" is ``min(1e-5, n_samples ** -1.1)``.
    max_edit_size : int, default=10
        Largest number of rows one edit request may name.
    max_sample_weight : float, default=1.0
        Public bound on ``sample_weight`` (larger weights count as the bound),
        as for the noisy-GD estimators (privacy-accounting.md, Section 4.4).
    group_size : int, default=1
        Records per privacy unit (e.g. the rows one person owns).
    relation : {"replace", "zero_out"}, default="replace"
        Neighbouring relation of the guarantee: one unit replaced by arbitrary
        records, or by null records (half the sensitivity).
    data_norm : float, default=1.0
        Public bound on the L2 norm of each row of ``X``.
    clip_rows : bool, default=True
        Project rows with a larger norm onto the ``data_norm`` ball; if False,
        such rows raise an error."""

_SOLVER_PARAMETERS = """\
    tol : float, default=1e-3
        Relative gradient tolerance ``t`` of the solve: it stops once
        ``||grad F|| <= t * S / N`` is certified in float64 (``S`` the
        sensitivity of the clipped gradient sum), which puts it within
        ``t * S / (N lambda)`` of the exact minimiser; the noise is calibrated
        to the sensitivity ``(1 + 2 t) S / (N lambda)``
        (privacy-accounting.md, Section 15.3). At most 0.5. Whether ``tol`` is
        attainable is decided from public numbers before the solve (the
        float64 rounding bound must be below half ``t * S / N``; otherwise a
        ``ValueError`` names ``tol``): never by the rows.
    max_iter : int, default=1000
        Iteration budget of the fast solver (L-BFGS, then Newton-CG). If it
        does not certify the tolerance, a public number of plain gradient
        steps follows that provably ends within ``t * S / (N lambda)`` of the
        minimiser, so the release never fails or changes law because of the
        data (Theorem 15.2a); ``max_iter`` only trades time. The iterations
        actually run are not reported: they depend on the rows, and so does
        the wall-clock time of ``fit`` and ``partial_unlearn``, a side channel
        the guarantee does not cover.
    random_state : int, RandomState instance or None, default=None
        Source of the noise. None draws fresh OS entropy, the only setting in
        which the guarantee holds against someone who could guess a seed; an
        integer makes runs reproducible (flagged in the guarantee).
    verbose : int, default=0
        Print the public numbers of each release (never the solver's
        iteration count).
    ledger : PrivacyLedger or None, default=None
        A :class:`~skforget.accounting.PrivacyLedger` of the training data:
        ``fit`` and ``partial_unlearn`` check their planned figure against its
        budget before any training pass (raising
        :class:`~skforget.accounting.PrivacyBudgetExceeded`, the model
        unchanged, if it would not fit) and record it when they succeed
        (privacy-accounting.md, Section 20). Not frozen at ``fit``: an edit
        records into the ledger set at the time. Clones share it; for
        ``GridSearchCV(n_jobs > 1)`` use :class:`skforget.store.SharedLedger`."""


class OutputPerturbationClassifier(_PrivateClassifierMixin, ClassifierMixin,
                                   _BaseOutputPerturbation):
    """Logistic regression by output perturbation (DP-ERM), deletion by refit.

    Solves L2-regularised logistic regression with clipped per-example
    gradients (the same objective as :class:`NoisyGDClassifier`) to a
    certified tolerance, then adds Gaussian noise calibrated to the
    sensitivity of the minimiser, ``(1 + 2 tol) S / (n lambda)`` (Chaudhuri,
    Monteleoni and Sarwate 2011). One certified solve, no noisy passes; that
    is not always the faster fit: in the user guide's benchmark
    (``benchmarks/results/output_perturbation.md``) it took about half noisy
    GD's time on a softmax model (digits) but 3.5 to 6.6 times as long on
    binary ones, and a deletion, a full refit, 11 to 42 times a noisy-GD
    ``partial_unlearn`` on small tables. :meth:`partial_unlearn` takes the same
    :class:`~skforget.EditRequest` as the noisy-GD estimators and refits on
    the edited data with fresh noise, so removed records have no influence on
    the new model. At equal privacy the noise is as large as noisy GD's in
    flat directions of the loss and larger where the data curve it, so noisy
    GD is usually more accurate; see the user guide's "Which estimator should
    I use".

    Read more in the :ref:`User Guide <which_estimator>`.

    Parameters
    ----------
    C : float or "auto", default="auto"
        Inverse regularisation strength, as in ``LogisticRegression`` and
        :class:`NoisyGDClassifier` (``lambda = 1 / (C * n_samples)``); "auto"
        is the public rule of privacy-accounting.md, Section 8.5, without the
        growth above ``epsilon=1`` or with the number of records that noisy
        GD's default has (this mechanism's noise grows as ``1 / lambda**2`` in
        every direction).
    classes : array-like of shape (n_classes,), default=None
        The public label set (None reads it from the labels, with a
        :class:`~skforget.PrivacyLeakWarning`).
    class_weight : dict or "balanced", default=None
        Public weight of each class (binary: record weights; three classes or
        more: a public shift of the intercepts, as for
        :class:`NoisyGDClassifier`), or "balanced" for binary models: decisions
        for the balanced error at the midpoint of the two class means of the
        rows, from class counts and sums released with ``prevalence_share``
        (as for :class:`NoisyGDClassifier`; refused for three classes or more,
        where only :class:`NoisyGDClassifier` releases the counts it needs).
    prevalence_share : float in [0, 1) or "auto", default="auto"
        Share of the budget a binary model spends on its class statistics,
        released with Gaussian noise at every release (fit and every refit;
        under "auto", each on a table that meets its size rule):
        by default the class counts, class sums and squared scores of the
        error threshold that sets the intercept, as for
        :class:`NoisyGDClassifier` (privacy-accounting.md, Section 18.12).
    multi_class : {"multinomial", "ovr"}, default="multinomial"
        Model for three classes or more (sensitivities as for
        :class:`NoisyGDClassifier`).
    {common}
    clip_norm : float, "auto" or None, default="auto"
        Per-example gradient clipping threshold, as for
        :class:`NoisyGDClassifier` ("auto": ``0.5 * data_norm`` per logistic
        output, none for the softmax).
    fit_intercept : bool, default=True
        Fit an intercept (an ordinary, regularised coordinate).
    intercept_scaling : float or "auto", default="auto"
        Feature value of the intercept coordinate ("auto": ``data_norm``,
        ``0.1 * data_norm`` for the softmax).
    {solver}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients (minimiser plus noise).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts (including ``intercept_offset_``).
    C_ : float
        The ``C`` the latest fit or refit solved with: ``C`` when given, else
        what ``"auto"`` resolved to, ``1 / (N * lambda * W)`` of the latest
        release's public plan (``N`` its rows, ``lambda`` its penalty per
        sample, ``W`` the public weight bound; as for
        :class:`NoisyGDClassifier`). ``C=C_`` refits with the same penalty. A
        function of public numbers only (privacy-accounting.md, Section 8.5);
        a refit after an edit keeps it (Section 15.5).
    noisy_class_count_ : ndarray of shape (2,)
        Only for a binary model that spends ``prevalence_share``: the class
        counts of the current database plus Gaussian noise, redrawn at every
        refit.
    noisy_class_sum_ : ndarray of shape (2, n_features)
        With ``noisy_class_count_``: each class's sum of rows plus Gaussian
        noise, redrawn at every refit.
    noisy_score_square_ : float
        Only for the default error threshold (no ``class_weight``): the sum of
        the rows' squared scores along ``coef_ / ||coef_||`` plus Gaussian
        noise, redrawn at every refit.
    intercept_offset_ : float
        Only with ``noisy_class_count_``: ``intercept_`` minus the solved
        intercept.
    database_version_ : DatabaseVersion or None
        Version of the :class:`~skforget.Database` the model is current with.
    privacy_guarantee_ : PrivacyGuarantee
        What the current coefficients guarantee (``mechanism`` is
        ``"output_perturbation"``), with one certificate per edit.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    NoisyGDClassifier : Noisy gradient descent with certified unlearning.
    OutputPerturbationRegressor : The squared-loss counterpart.

    References
    ----------
    .. [1] K. Chaudhuri, C. Monteleoni and A. Sarwate. Differentially Private
       Empirical Risk Minimization. JMLR 12, 2011.

    Examples
    --------
    >>> from skforget import EditRequest, OutputPerturbationClassifier
    >>> from skforget.datasets import load_dataset
    >>> data = load_dataset("breast_cancer")  # unit-norm rows, public scaling
    >>> clf = OutputPerturbationClassifier(classes=[0, 1], epsilon=1.0,
    ...                                    random_state=0)
    >>> clf.fit(data.data, data.target).score(data.data, data.target) > 0.8
    True
    >>> clf.partial_unlearn(EditRequest(data.data, data.target, delete=[3]))
    OutputPerturbationClassifier(classes=[0, 1], random_state=0)
    >>> clf.privacy_guarantee_.deletion.rho_deletion
    0.0
    """

    _parameter_constraints: dict = {
        **_BaseOutputPerturbation._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "multi_class": [StrOptions({"multinomial", "ovr"})],
        "classes": ["array-like", None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "prevalence_share": [Interval(Real, 0, 1, closed="left"),
                             StrOptions({"auto"})],
        "clip_norm": [Interval(Real, 0, None, closed="neither"), None,
                      StrOptions({"auto"})],
    }
    _finite_extra = ("C",)

    def __init__(self, C="auto", *, classes=None, class_weight=None,
                 prevalence_share="auto",
                 multi_class="multinomial", epsilon=1.0, delta="auto",
                 max_edit_size=10, max_sample_weight=1.0, group_size=1,
                 relation="replace", data_norm=1.0, clip_rows=True,
                 clip_norm="auto", fit_intercept=True, intercept_scaling="auto",
                 tol=1e-3, max_iter=1000, random_state=None, verbose=0,
                 ledger=None):
        self.C = C
        self.classes = classes
        self.class_weight = class_weight
        self.prevalence_share = prevalence_share
        self.multi_class = multi_class
        self.epsilon = epsilon
        self.delta = delta
        self.max_edit_size = max_edit_size
        self.max_sample_weight = max_sample_weight
        self.group_size = group_size
        self.relation = relation
        self.data_norm = data_norm
        self.clip_rows = clip_rows
        self.clip_norm = clip_norm
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.ledger = ledger


class OutputPerturbationRegressor(_PrivateRegressorMixin, RegressorMixin,
                                  _BaseOutputPerturbation):
    """Ridge-type regression by output perturbation (DP-ERM), deletion by refit.

    Solves the squared loss with per-example gradient clipping (a Huber-type
    loss, as in :class:`NoisyGDRegressor`) plus ``alpha ||w||^2`` to a
    certified tolerance, then adds Gaussian noise calibrated to the
    sensitivity of the minimiser (Chaudhuri, Monteleoni and Sarwate 2011).
    :meth:`partial_unlearn` refits on the edited data with fresh noise.

    Read more in the :ref:`User Guide <which_estimator>`.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Regularisation strength, as in ``Ridge`` and :class:`NoisyGDRegressor`
        (``lambda = alpha / n_samples``, intercept included). ``"auto"``
        balances the noise of the released coefficients against the bias
        from public numbers (privacy-accounting.md, Section 8.5, rules 5).
    {common}
    clip_norm : float, default=1.0
        Per-example gradient clipping threshold (required: the squared loss has
        unbounded gradients).
    target_scale : float or None, default=None
        Public constant the targets are divided by before fitting, as in
        :class:`NoisyGDRegressor` (predictions and coefficients stay in the
        original units); None uses them as they are, checks whether most lie
        far beyond what clipping fits (warning if so) and records in the
        guarantee that the targets were read for that check. At least 1e-200.
    target_offset : float, default=0.0
        Public constant subtracted from the targets before ``target_scale``
        divides them, as in :class:`NoisyGDRegressor`.
    fit_intercept : bool, default=True
        Fit an intercept (regularised, like every coordinate).
    intercept_scaling : float, default=1.0
        Feature value of the intercept coordinate.
    {solver}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    alpha_ : float
        The ``alpha`` the latest fit or refit solved with: ``alpha`` when
        given, else what ``"auto"`` resolved to, ``N * lambda * W`` of the
        latest release's public plan (as for :class:`NoisyGDRegressor`).
        ``alpha=alpha_`` refits with the same penalty. A function of public
        numbers only (privacy-accounting.md, Section 8.5); a refit after an
        edit keeps it, as it keeps ``N * lambda`` (Sections 8.5, 15.5).
    database_version_ : DatabaseVersion or None
        Version of the :class:`~skforget.Database` the model is current with.
    privacy_guarantee_ : PrivacyGuarantee
        What the current coefficients guarantee, with one certificate per edit.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)

    See Also
    --------
    NoisyGDRegressor : Noisy gradient descent with certified unlearning.
    OutputPerturbationClassifier : The logistic-loss counterpart.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget import OutputPerturbationRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 3)) / np.sqrt(3)
    >>> y = X @ np.array([1.0, -0.5, 0.25]) + 0.05 * rng.standard_normal(20000)
    >>> reg = OutputPerturbationRegressor(alpha=50.0, epsilon=2.0, target_scale=1.0,
    ...                                   random_state=0)
    >>> reg.fit(X, y).score(X, y) > 0.5
    True
    >>> reg.privacy_guarantee_.mechanism
    'output_perturbation'
    """

    _parameter_constraints: dict = {
        **_BaseOutputPerturbation._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "clip_norm": [Interval(Real, 0, None, closed="neither"), None],
        "target_scale": [Interval(Real, _MIN_TARGET_SCALE, None, closed="left"), None],
        "target_offset": [Real],
    }
    _finite_extra = ("alpha", "target_scale", "target_offset")

    def __init__(self, alpha="auto", *, epsilon=1.0, delta="auto", max_edit_size=10,
                 max_sample_weight=1.0, group_size=1, relation="replace",
                 data_norm=1.0, clip_rows=True, clip_norm=1.0, target_scale=None,
                 target_offset=0.0, fit_intercept=True, intercept_scaling=1.0,
                 tol=1e-3, max_iter=1000, random_state=None, verbose=0, ledger=None):
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.max_edit_size = max_edit_size
        self.max_sample_weight = max_sample_weight
        self.group_size = group_size
        self.relation = relation
        self.data_norm = data_norm
        self.clip_rows = clip_rows
        self.clip_norm = clip_norm
        self.target_scale = target_scale
        self.target_offset = target_offset
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.ledger = ledger


for _cls in (OutputPerturbationClassifier, OutputPerturbationRegressor):
    fill_doc(_cls, common=_COMMON_PARAMETERS, solver=_SOLVER_PARAMETERS)
