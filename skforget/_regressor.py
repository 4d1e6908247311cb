# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private ridge-type regression with certified deletion."""

from numbers import Integral, Real

from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from skforget._linear import _PrivateRegressorMixin
from skforget._noisy_gd import _BaseNoisyGD
from skforget.certify._ball import MODES
from skforget.certify._mixin import CertifyMixin


class NoisyGDRegressor(CertifyMixin, _PrivateRegressorMixin, RegressorMixin,
                       _BaseNoisyGD):
    """Ridge-type regression by noisy gradient descent, with certified deletion.

    A drop-in replacement for :class:`~sklearn.linear_model.Ridge` whose
    coefficients are (``epsilon``, ``delta``)-differentially private for every
    training record, and from which records can later be deleted, replaced or
    added with :meth:`partial_unlearn`.

    The loss is the squared error with per-example gradient clipping at
    ``clip_norm``: for a linear model this is exactly a Huber loss whose
    threshold on the residual is ``clip_norm / ||[x, s_b]||`` (privacy-
    accounting.md, Lemma 2.1), so large residuals are down-weighted. Targets
    should therefore live on a public scale comparable to ``clip_norm``
    (divide them by a public constant, never by a statistic of the data).

    Read more in the :ref:`User Guide <privacy>`.

    Parameters
    ----------
    alpha : float, default=10.0
        Regularisation strength, as in ``Ridge``: the objective is
        ``||y - Xw||^2 + alpha ||w||^2`` (intercept included, squared loss
        clipped), i.e. ``lambda = alpha / n_samples`` per sample. Differential
        privacy usually needs ``alpha`` of the order of ``sqrt(n_samples)``.
    epsilon : float, default=1.0
        DP target for every record present.
    delta : float or "auto", default="auto"
        DP failure probability; "auto" is ``min(1e-5, n_samples ** -1.1)``.
    deletion_epsilon : float, default=None
        Deletion target at the same ``delta``; None means ``epsilon / 10``.
    max_edit_size : int, default=10
        Largest number of rows one edit request may name.
    max_sample_weight : float, default=1.0
        Public bound on ``sample_weight``: larger weights count as the bound.
        Row weights are divided by it (times the largest class weight), so each
        record's influence, hence the noise, is that of the unweighted model,
        and ``C`` / ``alpha`` are scaled to keep their scikit-learn meaning
        (privacy-accounting.md, Section 4.4). Set it to the largest weight a
        record can have (2 for a record that counts twice).
    group_size : int, default=1
        Records per privacy unit.
    relation : {"replace", "zero_out"}, default="replace"
        Neighbouring relation of the guarantee.
    data_norm : float, default=1.0
        Public bound on the L2 norm of each row of ``X``.
    clip_rows : bool, default=True
        Project rows over ``data_norm`` onto its ball; if False, raise (rows
        over it by rounding only, at most ``1e-12`` relative, are projected).
    clip_norm : float, default=1.0
        Per-example gradient clipping threshold (required: the squared loss has
        unbounded gradients).
    target_scale : float or None, default=None
        Public constant the targets are divided by before fitting (predictions,
        ``coef_`` and ``intercept_`` are in the original units). The clipped
        squared loss fits residuals up to about ``clip_norm / ||[x, s_b]||``
        unclipped, so targets should be of order 1 after scaling: use the
        known range of the quantity (100 for a score between 0 and 350), never
        a statistic of the training targets. With None the targets are used as
        they are, and the estimator checks whether most of them lie more than
        ten times beyond that reach: if so it warns (``PrivacyLeakWarning``),
        and either way the guarantee notes that the targets were read for this
        check (``target_scale_public=False``). On a
        :class:`~skforget.distributed.ShardedDatabase` the targets never reach
        the driver: None then means 1 and nothing is checked.
    fit_intercept : bool, default=True
        Fit an intercept (regularised, unlike ``Ridge``: the guarantee needs
        strong convexity in every direction).
    intercept_scaling : float, default=1.0
        Feature value of the intercept coordinate.
    learning_rate : float, default=None
        Step size; None for ``2 / (2 lambda + 1.1 beta)``, the largest the
        contraction analysis allows with room for batches to grow by 10%.
    max_iter : int, default=None
        Passes over the data (epochs) of ``fit``; None for the accounting's
        recipe (privacy-accounting.md, Section 8.4). With ``batch_size=None`` a
        pass is one step.
    batch_size : int, "auto" or None, default="auto"
        Rows per mini-batch. "auto" chooses the number of batches from public
        numbers (full batch for small data or when ``certify_k_max > 0``);
        None is full-batch noisy gradient descent (privacy-accounting.md,
        Section 12).
    recipe : {"tight", "cs23"}, default="tight"
        Planning of noise and steps.
    random_state : int, RandomState instance or None, default=None
        Source of the noise (None: fresh OS entropy). An integer makes runs
        reproducible; clones (``GridSearchCV``, ``cross_val_score``) then share
        the noise, so use None whenever the fitted models are released.
    verbose : int, default=0
        Print progress of the noisy gradient steps.
    n_jobs : int or None, default=None
        Threads that sum the clipped gradients of each batch, over contiguous
        ranges of its rows (OpenMP in the compiled kernel; builds without
        OpenMP run the ranges one after the other). None means 1, -1 all
        CPUs (joblib's rule). A batch of ``m`` rows uses
        ``min(n_jobs, m // 8192)`` threads (at least one), so mini-batches
        smaller than that run on one thread: starting and joining threads costs
        every step. The coefficients match ``n_jobs=1`` up to the order of
        floating-point sums (about 1e-15 relative per step) and are
        reproducible for a given ``n_jobs``; the privacy guarantee does not
        depend on it.
    certify_k_max : int, default=0
        Largest budget ``k`` for which ``fit`` and ``partial_unlearn`` track the
        data-dependent radius of the prediction certificates (one extra pass
        over the rows per step). 0 turns the tracking off; :meth:`certify` with
        the public radius needs no tracking.
    certify_modes : str or tuple of str, default=("remove",)
        Neighbourhoods tracked when ``certify_k_max > 0``: any of ``"remove"``,
        ``"replace"``, ``"add"``, ``"add_remove"``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_ : ndarray of shape (1,)
        Passes over the data run by ``fit``.
    n_unlearn_iter_ : int
        Passes run by the last :meth:`partial_unlearn` (only after an edit).
    database_version_ : DatabaseVersion or None
        Version of the :class:`~skforget.Database` the model is current with
        (None when fitted on plain arrays).
    privacy_guarantee_ : PrivacyGuarantee
        What the current coefficients guarantee, with one certificate per edit.
    certified_radii_ : dict of str to ndarray
        Only with ``certify_k_max > 0``: per tracked mode, the data-dependent
        radius contributed by the current segment (``fit``, or the last
        ``partial_unlearn``) for ``k = 0..certify_k_max``. A function of
        the private rows: do not publish it. Dropped by the next ``fit`` or edit.
    contraction_factor_ : dict of str to ndarray
        Only with ``certify_k_max > 0``: the contraction factors used for those
        radii (they involve the largest eigenvalue of the rows' Gram matrix;
        sensitive too).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)

    See Also
    --------
    NoisyGDClassifier : The logistic-loss counterpart.
    sklearn.linear_model.Ridge : The non-private model.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget import NoisyGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 3)) / np.sqrt(3)
    >>> y = X @ np.array([1.0, -0.5, 0.25]) + 0.05 * rng.standard_normal(2000)
    >>> reg = NoisyGDRegressor(alpha=5.0, epsilon=2.0, target_scale=1.0,
    ...                        random_state=0).fit(X, y)
    >>> reg.score(X, y) > 0.5
    True

    Targets on a larger public scale (a score between 0 and 350, say) are
    divided by a public constant; predictions come back in the original units:

    >>> reg = NoisyGDRegressor(alpha=5.0, epsilon=2.0, target_scale=100.0,
    ...                        random_state=0).fit(X, 100 * y)
    >>> reg.score(X, 100 * y) > 0.5
    True
    """

    _parameter_constraints: dict = {
        **_BaseNoisyGD._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "target_scale": [Interval(Real, 0, None, closed="neither"), None],
        "certify_k_max": [Interval(Integral, 0, None, closed="left")],
        "certify_modes": [StrOptions(set(MODES)), tuple, list],
    }
    _finite_extra = ("alpha", "target_scale")

    def __init__(self, alpha=10.0, *, epsilon=1.0, delta="auto", deletion_epsilon=None,
                 max_edit_size=10, max_sample_weight=1.0, group_size=1,
                 relation="replace", data_norm=1.0, clip_rows=True, clip_norm=1.0,
                 target_scale=None, fit_intercept=True, intercept_scaling=1.0,
                 learning_rate=None, max_iter=None, batch_size="auto", recipe="tight",
                 random_state=None, verbose=0, n_jobs=None, certify_k_max=0,
                 certify_modes=("remove",)):
        self.alpha = alpha
        self.epsilon = epsilon
        self.delta = delta
        self.deletion_epsilon = deletion_epsilon
        self.max_edit_size = max_edit_size
        self.max_sample_weight = max_sample_weight
        self.group_size = group_size
        self.relation = relation
        self.data_norm = data_norm
        self.clip_rows = clip_rows
        self.clip_norm = clip_norm
        self.target_scale = target_scale
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.recipe = recipe
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.certify_k_max = certify_k_max
        self.certify_modes = certify_modes
