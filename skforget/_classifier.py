# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private logistic regression with certified deletion."""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from skforget._base import _BaseNoisyGD
from skforget.certify import MODES, CertifyMixin
from skforget.exceptions import UnlearningError


class NoisyGDClassifier(CertifyMixin, ClassifierMixin, _BaseNoisyGD):
    """Logistic regression trained by noisy gradient descent, with certified deletion.

    A drop-in replacement for :class:`~sklearn.linear_model.LogisticRegression`
    (L2 penalty; binary, or multinomial for three classes and more) whose
    coefficients are (``epsilon``, ``delta``)-differentially private for every
    training record, and from which records can later be deleted, replaced or
    added with :meth:`partial_unlearn`: a few more noisy steps on the edited data
    make the model ``deletion_epsilon``-indistinguishable from one that never saw
    the removed records, at a fraction of the cost of retraining.

    Training is full-batch noisy gradient descent: per-example gradients clipped
    to ``clip_norm``, L2 regularisation on every coordinate including the
    intercept, Gaussian initialisation and Gaussian noise, with the noise scale,
    step size and step counts planned by :mod:`skforget.accounting` (Chourasia
    and Shah 2023, with the tighter shifted-Rényi accounting of the skforget
    spec). The guarantee assumes ``data_norm``, ``clip_norm`` and the label set
    are public, i.e. chosen without looking at the training rows.

    Read more in the :ref:`User Guide <privacy>`.

    Parameters
    ----------
    C : float, default=0.1
        Inverse regularisation strength, as in ``LogisticRegression``: the
        objective is ``C * sum_i loss_i + ||w||^2 / 2`` (intercept included),
        i.e. ``lambda = 1 / (C * n_samples)`` per sample. Differential privacy
        needs more regularisation than the non-private default of 1.0: the noise
        needed grows as ``lambda`` shrinks.
    multi_class : {"multinomial", "ovr"}, default="multinomial"
        Model for three classes or more: one softmax model (never clipped,
        sensitivity ``sqrt(2) R``), or one binary model per class trained jointly
        in the same steps, each clipped at ``clip_norm`` (sensitivity
        ``sqrt(n_classes) * min(clip_norm, R)``). With a small ``clip_norm``,
        ``"ovr"`` needs less noise; it is also the model prediction certificates
        cover.
    epsilon : float, default=1.0
        DP target for every record present (``(epsilon, delta)``-DP, replace-one).
    delta : float or "auto", default="auto"
        DP failure probability; "auto" is ``min(1e-5, n_samples ** -1.1)``.
    deletion_epsilon : float, default=None
        Deletion target at the same ``delta``: after :meth:`partial_unlearn`, a
        removed record is ``(deletion_epsilon, delta)``-indistinguishable from
        one never seen. None means ``epsilon / 10``. Must not exceed ``epsilon``.
    max_edit_size : int, default=10
        Largest number of rows one edit request may name.
    group_size : int, default=1
        Records per privacy unit (e.g. the rows one person owns).
    relation : {"replace", "zero_out"}, default="replace"
        Neighbouring relation of the guarantee: one unit replaced by arbitrary
        records, or by null records (half the sensitivity).
    data_norm : float, default=1.0
        Public bound on the L2 norm of each row of ``X``.
    clip_rows : bool, default=True
        Project rows with a larger norm onto the ``data_norm`` ball (a per-row,
        data-independent map); if False, such rows raise an error (rows over
        the bound by rounding only, at most ``1e-12`` relative, are projected).
    clip_norm : float, default=None
        Per-example gradient clipping threshold. None: no clipping beyond the
        natural bound of the logistic loss (``R`` binary, ``sqrt(2) R``
        multinomial, ``R = sqrt(data_norm^2 + intercept_scaling^2)``). The
        multinomial model is never clipped; values below its natural bound are
        rejected.
    fit_intercept : bool, default=True
        Fit an intercept (an ordinary, regularised coordinate).
    intercept_scaling : float, default=1.0
        Feature value of the intercept coordinate; ``intercept_`` is this value
        times the coordinate.
    learning_rate : float, default=None
        Step size; None for ``1 / (lambda + beta)``. Must not exceed
        ``2 / (2 lambda + beta)``.
    max_iter : int, default=None
        Number of training steps; None for the accounting recipe ``K_A``. The
        privacy guarantee holds for any value.
    recipe : {"tight", "cs23"}, default="tight"
        Planning of noise and steps: the shifted-Rényi recipe, or the source
        paper's Theorem 5.1 (more noise, more steps; same reported accounting).
    random_state : int, RandomState instance or None, default=None
        Source of the noise. None draws fresh OS entropy, the only setting in
        which the guarantee holds against someone who could guess a seed; an
        integer makes runs reproducible (flagged in the guarantee). Clones share
        the seed: in ``GridSearchCV`` or ``cross_val_score`` every fit would draw
        the same noise, and comparing fits on overlapping rows cancels it, so
        use None whenever the fitted models are released.
    verbose : int, default=0
        Print progress of the noisy gradient steps.
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
    classes_ : ndarray of shape (n_classes,)
        Class labels (treated as public).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts.
    n_iter_ : int
        Noisy steps run by the last ``fit`` or ``partial_unlearn``.
    privacy_guarantee_ : PrivacyGuarantee
        What the current coefficients guarantee, with one certificate per edit.
    certified_radii_ : dict of str to ndarray
        Only with ``certify_k_max > 0``: per tracked mode, the data-dependent
        radius contributed by the current segment (``fit``, or the last
        ``partial_unlearn``) for ``k = 0..certify_k_max`` (one column per class
        for one-vs-rest). A function of the private rows: do not publish it.
        Dropped by the next ``fit`` or edit.
    contraction_factor_ : dict of str to ndarray
        Only with ``certify_k_max > 0``: the contraction factors used for those
        radii (they involve the largest eigenvalue of the rows' Gram matrix;
        sensitive too).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    NoisyGDRegressor : The squared-loss counterpart.
    sklearn.linear_model.LogisticRegression : The non-private model.

    Notes
    -----
    The privacy figures are rho-coefficients of Rényi DP converted to
    ``(epsilon, delta)`` (Balle et al. 2020, Thm 21); the deletion bound is
    ``rho_inf * (1 - eta lambda) ** (2 K_R)`` (privacy amplification by
    iteration, Feldman et al. 2018). Preprocessing fitted on the training rows
    (e.g. a ``StandardScaler`` in a Pipeline) is outside the guarantee.

    References
    ----------
    .. [1] R. Chourasia and N. Shah. Forget Unlearning: Towards True Data-Deletion
       in Machine Learning. ICML 2023.

    Examples
    --------
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.datasets import load_dataset
    >>> data = load_dataset("breast_cancer")  # unit-norm rows, public scaling
    >>> clf = NoisyGDClassifier(C=0.1, clip_norm=0.5, epsilon=1.0, random_state=0)
    >>> clf.fit(data.data, data.target).score(data.data, data.target) > 0.9
    True
    >>> print(clf.privacy_guarantee_)  # doctest: +ELLIPSIS
    (0.9..., 1e-05)-DP for every record present, replace-one ...
    """

    _parameter_constraints: dict = {
        **_BaseNoisyGD._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "multi_class": [StrOptions({"multinomial", "ovr"})],
        "certify_k_max": [Interval(Integral, 0, None, closed="left")],
        "certify_modes": [StrOptions(set(MODES)), tuple, list],
    }
    _y_numeric = False
    _finite_extra = ("C",)

    def __init__(self, C=0.1, *, multi_class="multinomial", epsilon=1.0,
                 delta="auto", deletion_epsilon=None,
                 max_edit_size=10, group_size=1, relation="replace", data_norm=1.0,
                 clip_rows=True, clip_norm=None, fit_intercept=True,
                 intercept_scaling=1.0, learning_rate=None, max_iter=None,
                 recipe="tight", random_state=None, verbose=0,
                 certify_k_max=0, certify_modes=("remove",)):
        self.C = C
        self.multi_class = multi_class
        self.epsilon = epsilon
        self.delta = delta
        self.deletion_epsilon = deletion_epsilon
        self.max_edit_size = max_edit_size
        self.group_size = group_size
        self.relation = relation
        self.data_norm = data_norm
        self.clip_rows = clip_rows
        self.clip_norm = clip_norm
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.recipe = recipe
        self.random_state = random_state
        self.verbose = verbose
        self.certify_k_max = certify_k_max
        self.certify_modes = certify_modes

    def _regularization(self, n_samples):
        return 1.0 / (self.C * n_samples)

    def _encode_targets(self, y, *, fit):
        if fit:
            check_classification_targets(y)
            classes = np.unique(y)
            if len(classes) < 2:
                raise ValueError(
                    "This solver needs samples of at least 2 classes in the data, "
                    f"but the data contains only one class: {classes[0]!r}.")
        else:
            classes = self.classes_
        codes = np.searchsorted(classes, y)
        codes = np.minimum(codes, len(classes) - 1)
        unknown = classes[codes] != y
        if np.any(unknown):
            i = int(np.flatnonzero(unknown)[0])
            raise UnlearningError(f"y[{i}]={y[i]!r} is not one of the classes seen "
                                  f"at fit: {classes.tolist()}.")
        if len(classes) == 2:
            return codes.astype(np.float64), 1, "logistic", {"classes_": classes}
        return (codes.astype(np.float64), len(classes), self.multi_class,
                {"classes_": classes})

    def _check_new_targets(self, edits):
        new_targets = (("y_replace", edits.y_replace), ("y_insert", edits.y_insert))
        for name, values in new_targets:
            if values is None:
                continue
            values = np.asarray(values)
            known = np.isin(values, self.classes_)
            if not np.all(known):
                k = int(np.flatnonzero(~known)[0])
                raise UnlearningError(
                    f"{name}[{k}]={values[k]!r} is not one of the classes seen at fit "
                    f"({self.classes_.tolist()}); the label set is fixed (public).")

    def _set_coefficients(self, W, b):
        self.coef_ = W
        self.intercept_ = b * self._intercept_scaling()

    def decision_function(self, X):
        """Signed distance to the decision boundary (log-odds for binary).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        Z = self._margins(X)
        return Z[:, 0] if Z.shape[1] == 1 else Z

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[idx]

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        if self.multi_class == "ovr":
            p = expit(scores)
            return p / p.sum(axis=1, keepdims=True)
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of the class probabilities (computed stably).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        if self.multi_class == "ovr":
            return np.log(self.predict_proba(X))
        return log_softmax(scores, axis=1)
