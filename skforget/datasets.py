# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Small real datasets, prepared the way the user guide recommends.

Differential privacy needs every row inside a public ball (``data_norm``), and
any preprocessing inside the guarantee must not be fitted on the training rows.
These loaders centre and scale features with constants that are treated as
public (per-feature statistics a data owner could publish, or pixel ranges),
then project each row onto the unit sphere with a per-row map. They ship with
scikit-learn, so the demo and examples need no download.
"""

import numpy as np
from sklearn import datasets as _sk
from sklearn.preprocessing import normalize
from sklearn.utils import Bunch

__all__ = ["load_dataset", "public_scaling"]

DATASETS = ("breast_cancer", "digits")


def public_scaling(X, *, center, scale):
    """``(X - center) / scale`` then unit-norm rows: a fixed, per-row map.

    ``center`` and ``scale`` must be public constants (never statistics of the
    training rows); the row normalisation is data-independent.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    center, scale : array-like of shape (n_features,) or float

    Returns
    -------
    X_scaled : ndarray of shape (n_samples, n_features)
        Rows of unit L2 norm (zero rows stay zero).

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.datasets import public_scaling
    >>> public_scaling(np.array([[3.0, 4.0]]), center=0.0, scale=1.0).tolist()
    [[0.6, 0.8]]
    """
    scale = np.where(np.asarray(scale, dtype=float) > 0, scale, 1.0)
    return normalize((np.asarray(X, dtype=float) - center) / scale)


def load_dataset(name):
    """Load a bundled dataset with rows scaled for private training.

    * ``"breast_cancer"``: 569 rows, 30 features, 2 classes. Features are
      standardised with per-feature means and standard deviations that this
      demo treats as published population statistics.
    * ``"digits"``: 1797 rows, 64 pixels in [0, 16], 10 classes. Pixels are
      divided by 16 (public range) and centred at the mean image, treated as
      public.

    Parameters
    ----------
    name : {"breast_cancer", "digits"}

    Returns
    -------
    data : Bunch
        ``data`` (unit-norm rows), ``target``, ``target_names``, ``name`` and
        ``preprocessing`` (a sentence saying what was treated as public).

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.datasets import load_dataset
    >>> d = load_dataset("breast_cancer")
    >>> d.data.shape, bool(np.allclose(np.linalg.norm(d.data, axis=1), 1.0))
    ((569, 30), True)
    """
    if name == "breast_cancer":
        raw = _sk.load_breast_cancer()
        X = public_scaling(raw.data, center=raw.data.mean(axis=0),
                           scale=raw.data.std(axis=0))
        note = ("features standardised with per-feature means and standard "
                "deviations treated as public constants, rows normalised to unit "
                "L2 norm")
    elif name == "digits":
        raw = _sk.load_digits()
        pixels = raw.data / 16.0
        X = public_scaling(pixels, center=pixels.mean(axis=0), scale=1.0)
        note = ("pixels divided by their public range (16) and centred at a mean "
                "image treated as public, rows normalised to unit L2 norm")
    else:
        raise ValueError(f"name must be one of {DATASETS}, got {name!r}.")
    return Bunch(data=X, target=raw.target, target_names=raw.target_names,
                 name=name, preprocessing=note)
