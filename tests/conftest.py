# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
import os

# scikit-learn's common checks include an array-API check that is skipped unless
# SciPy's array API mode is on; turn it on so that check runs instead of skipping.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.preprocessing import normalize  # noqa: E402


@pytest.fixture
def binary_data():
    X, y = make_classification(n_samples=300, n_features=8, n_informative=5,
                               random_state=0)
    return normalize(X), y


@pytest.fixture
def multiclass_data():
    X, y = make_classification(n_samples=400, n_features=10, n_informative=6,
                               n_classes=3, random_state=1)
    return normalize(X), y


@pytest.fixture
def regression_data():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(400, 5)) / np.sqrt(5)
    y = X @ np.array([1.0, -0.5, 0.25, 0.0, 0.8]) + 0.05 * rng.standard_normal(400)
    return X, y
