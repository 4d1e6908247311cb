# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""PublicScaler: centre and scale with constants fixed before the rows are seen."""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils.validation import FLOAT_DTYPES, check_is_fitted, validate_data

__all__ = ["PublicScaler"]


def _constant(value, name, n_features, *, positive):
    """A parameter as a float array of shape (n_features,); errors name the entry."""
    arr = np.asarray(value, dtype=float) if not isinstance(value, str) else None
    if arr is None or arr.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-D array of one number per "
                         f"feature, got {value!r}.")
    if arr.ndim == 1 and arr.shape[0] != n_features:
        raise ValueError(f"{name} has {arr.shape[0]} entries but X has {n_features} "
                         "features.")
    arr = np.broadcast_to(arr, (n_features,)).astype(float)
    bad = ~np.isfinite(arr) | ((arr <= 0) if positive else False)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        rule = "positive and finite" if positive else "finite"
        where = f"{name}[{j}]" if np.ndim(value) else name
        raise ValueError(f"{where}={float(arr[j])!r} must be {rule}.")
    return arr


class PublicScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Centre and scale features with public constants: ``(X - center) / scale``.

    The counterpart of :class:`~sklearn.preprocessing.StandardScaler` for
    private data: the constants are parameters chosen without looking at the
    training rows (documented ranges, published statistics, a public
    dataset), so ``fit`` learns nothing from the rows and a deletion leaves
    nothing behind in the preprocessing. ``fit`` only checks the constants
    against the number of features.

    Parameters
    ----------
    center : float or array-like of shape (n_features,), default=0.0
        Subtracted from each feature. Must be 0 for sparse input.
    scale : float or array-like of shape (n_features,), default=1.0
        Each feature is divided by it; positive.

    Attributes
    ----------
    center_, scale_ : ndarray of shape (n_features,)
        The constants, one per feature.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    See Also
    --------
    check_public : Which preprocessing a deletion pipeline accepts.
    skforget.datasets.public_scaling : The same map plus unit-norm rows, as a
        function.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.preprocessing import PublicScaler
    >>> ages = np.array([[30.0, 40.0], [60.0, 20.0]])   # age, hours per week
    >>> # Documented ranges: ages 0 to 100, at most 100 hours per week.
    >>> PublicScaler(center=[50, 50], scale=[50, 50]).fit_transform(ages)
    array([[-0.4, -0.2],
           [ 0.2, -0.6]])
    """

    _parameter_constraints: dict = {
        "center": ["array-like", numbers.Real],
        "scale": ["array-like", numbers.Real],
    }

    def __init__(self, center=0.0, scale=1.0):
        self.center = center
        self.scale = scale

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the constants against ``X``'s features; learn nothing from its rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        X = validate_data(self, X, reset=True, accept_sparse=("csr", "csc"),
                          dtype=FLOAT_DTYPES, ensure_all_finite="allow-nan")
        center = _constant(self.center, "center", X.shape[1], positive=False)
        scale = _constant(self.scale, "scale", X.shape[1], positive=True)
        if sp.issparse(X) and np.any(center != 0):
            raise ValueError("center must be 0 for sparse input: centring would make "
                             "the matrix dense.")
        self.center_, self.scale_ = center, scale
        return self

    def transform(self, X):
        """``(X - center_) / scale_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_scaled : {ndarray, sparse matrix} of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, accept_sparse=("csr", "csc"),
                          dtype=FLOAT_DTYPES, ensure_all_finite="allow-nan")
        if sp.issparse(X):
            if np.any(self.center_ != 0):
                raise ValueError("center must be 0 for sparse input.")
            return X @ sp.diags(1.0 / self.scale_)
        return (X - self.center_) / self.scale_

    def inverse_transform(self, X):
        """``X * scale_ + center_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        X_original : {ndarray, sparse matrix} of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, accept_sparse=("csr", "csc"),
                          dtype=FLOAT_DTYPES, ensure_all_finite="allow-nan")
        if sp.issparse(X):
            return X @ sp.diags(self.scale_)
        return X * self.scale_ + self.center_

    def __skforget_public__(self):
        return "center and scale given as constants"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            # Centring would densify a sparse matrix, so only center=0 takes one.
            tags.input_tags.sparse = bool(np.all(np.asarray(self.center, float) == 0))
        except (TypeError, ValueError):
            tags.input_tags.sparse = False
        tags.input_tags.allow_nan = True
        return tags
