"""n_jobs: each batch's clipped gradient summed by threads over row ranges.

Threads change only the order of floating-point sums, so the coefficients must
match one thread to rounding, and a given n_jobs must reproduce itself exactly.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

from skforget import (
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    _kernels,
    _rows,
    _solver,
)


def _classification(n, d, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((n_classes, d))
    y = rng.integers(0, n_classes, n)
    X = centers[y] + rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1).max(), y

LOSSES = [(1, _kernels.LOGISTIC), (3, _kernels.MULTINOMIAL), (3, _kernels.OVR),
          (1, _kernels.SQUARED)]


def _problem(n, d, K, *, sparse, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if sparse:
        X = sp.random(n, d, density=0.3, format="csr", random_state=seed,
                      dtype=dtype)
    else:
        X = (rng.standard_normal((n, d)) / np.sqrt(d)).astype(dtype)
    y = rng.integers(0, max(2, K), n).astype(np.float64)
    scale = rng.uniform(0.5, 1.0, n)
    tau = rng.uniform(0.2, 2.0, n)
    weight = rng.uniform(0.0, 1.0, n)
    return X, y, scale, tau, weight


def _steps(X, y, scale, tau, weight, K, loss, *, n_batches, n_threads, min_rows=0):
    n, d = X.shape
    rng = np.random.default_rng(1)
    order = (np.zeros(0, np.int64) if n_batches == 1
             else rng.permutation(n).astype(np.int64))
    bounds = np.linspace(0, n, n_batches + 1).round().astype(np.int64)
    T = 3 * n_batches
    noise = rng.standard_normal((T, K, d + 1))
    W, b = np.zeros((K, d)), np.zeros(K)
    common = (y, scale, tau, weight, order, bounds, 0, np.full(T, 0.5), noise, 0.01,
              0.1, n_batches / n, 1.0, loss, True, W, b, n_threads, min_rows)
    if sp.issparse(X):
        _kernels.run_steps_csr(X.data, X.indices, X.indptr, *common)
    else:
        _kernels.run_steps_dense(X, *common)
    return np.hstack([W, b[:, None]])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("K, loss", LOSSES)
@pytest.mark.parametrize("n_batches", [1, 3])
def test_threads_match_one_thread_to_rounding(sparse, dtype, K, loss, n_batches):
    X, y, scale, tau, weight = _problem(403, 7, K, sparse=sparse, dtype=dtype)
    if loss in (_kernels.LOGISTIC, _kernels.SQUARED):
        y = np.minimum(y, 1.0)
    ref = _steps(X, y, scale, tau, weight, K, loss, n_batches=n_batches,
                 n_threads=1)
    for n_threads in (2, 3, 5):
        got = _steps(X, y, scale, tau, weight, K, loss, n_batches=n_batches,
                     n_threads=n_threads)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
        again = _steps(X, y, scale, tau, weight, K, loss, n_batches=n_batches,
                       n_threads=n_threads)
        np.testing.assert_array_equal(again, got)


def test_more_threads_than_rows_is_fine():
    X, y, scale, tau, weight = _problem(3, 4, 1, sparse=False, dtype=np.float64)
    y = np.minimum(y, 1.0)
    ref = _steps(X, y, scale, tau, weight, 1, _kernels.LOGISTIC, n_batches=1,
                 n_threads=1)
    got = _steps(X, y, scale, tau, weight, 1, _kernels.LOGISTIC, n_batches=1,
                 n_threads=8)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True])
def test_small_batches_stay_on_one_thread(sparse):
    # Under the public threshold a batch is not split: bit-identical results.
    X, y, scale, tau, weight = _problem(400, 6, 3, sparse=sparse, dtype=np.float64)
    ref = _steps(X, y, scale, tau, weight, 3, _kernels.MULTINOMIAL, n_batches=4,
                 n_threads=1)
    got = _steps(X, y, scale, tau, weight, 3, _kernels.MULTINOMIAL, n_batches=4,
                 n_threads=4, min_rows=101)
    np.testing.assert_array_equal(got, ref)
    split = _steps(X, y, scale, tau, weight, 3, _kernels.MULTINOMIAL, n_batches=4,
                   n_threads=4, min_rows=50)
    assert not np.array_equal(split, ref)  # the batches of 100 rows were split
    # Sums in another order: rounding of the largest terms (tau spans the
    # clipped softmax's rows too, whose residuals reach tau).
    np.testing.assert_allclose(split, ref, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_sum_threads(sparse, monkeypatch):
    from skforget._rows import make_design

    X, y, _, _, weight = _problem(999, 5, 3, sparse=sparse, dtype=np.float64)
    design = make_design(X, y, loss="multinomial", data_norm=1.0,
                         intercept_scaling=1.0, gradient_bound=2.0)
    W = np.random.default_rng(2).standard_normal((3, 5))
    b = np.ones(3)
    G1, Gb1 = _solver.gradient_sum(design, W, b, weight=weight)
    monkeypatch.setattr(_rows, "MIN_ROWS_PER_THREAD", 10)
    G2, Gb2 = _solver.gradient_sum(design, W, b, weight=weight, n_jobs=3)
    np.testing.assert_allclose(G2, G1, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(Gb2, Gb1, rtol=1e-12, atol=1e-13)


def test_kernel_rejects_bad_thread_counts():
    X, y, scale, tau, weight = _problem(10, 3, 1, sparse=False, dtype=np.float64)
    with pytest.raises(ValueError, match="n_threads"):
        _steps(X, y, scale, tau, weight, 1, _kernels.LOGISTIC, n_batches=1,
               n_threads=0)
    with pytest.raises(ValueError, match="min_rows"):
        _steps(X, y, scale, tau, weight, 1, _kernels.LOGISTIC, n_batches=1,
               n_threads=2, min_rows=-1)


def _rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


@pytest.mark.parametrize("batch_size", [None, 300])
def test_estimators_n_jobs_match_one_job(batch_size, monkeypatch):
    # A low threshold so that small data is split (the rule is tested above).
    monkeypatch.setattr(_rows, "MIN_ROWS_PER_THREAD", 64)
    X, y = _classification(1500, 6, 3)
    params = dict(classes=[0, 1, 2], epsilon=2.0, random_state=0,
                  batch_size=batch_size, max_iter=20)
    one = NoisyGDClassifier(n_jobs=1, **params).fit(X, y)
    two = NoisyGDClassifier(n_jobs=2, **params).fit(X, y)
    assert not np.array_equal(two.coef_, one.coef_)  # the threads did split
    assert _rel(two.coef_, one.coef_) < 1e-12
    assert _rel(two.intercept_, one.intercept_) < 1e-12
    request = EditRequest(X, y, delete=[3, 17])
    one.partial_unlearn(request)
    two.partial_unlearn(request)
    assert _rel(two.coef_, one.coef_) < 1e-12


def test_regressor_csr_n_jobs(monkeypatch):
    monkeypatch.setattr(_rows, "MIN_ROWS_PER_THREAD", 64)
    rng = np.random.default_rng(0)
    X = sp.random(2000, 20, density=0.2, format="csr", random_state=0)
    y = np.clip(X @ rng.standard_normal(20) * 0.3, -1, 1)
    params = dict(random_state=0, batch_size=None, max_iter=30)
    one = NoisyGDRegressor(n_jobs=None, **params).fit(X, y)
    all_cpus = NoisyGDRegressor(n_jobs=-1, **params).fit(X, y)
    three = NoisyGDRegressor(n_jobs=3, **params).fit(X, y)
    assert _rel(all_cpus.coef_, one.coef_) < 1e-12
    assert _rel(three.coef_, one.coef_) < 1e-12
    assert three.privacy_guarantee_ == one.privacy_guarantee_


@pytest.mark.parametrize("Est", [NoisyGDClassifier, NoisyGDRegressor])
def test_bad_n_jobs_is_refused(Est):
    X, y = _classification(50, 3, 2)
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        Est(n_jobs=0).fit(X, y)


def test_default_threshold_splits_large_full_batches():
    # No monkeypatching: 2 x MIN_ROWS_PER_THREAD rows engage two threads.
    n = 2 * _rows.MIN_ROWS_PER_THREAD + 10
    X, y = _classification(n, 5, 2, seed=1)
    params = dict(classes=[0, 1], random_state=0, batch_size=None, max_iter=4)
    one = NoisyGDClassifier(n_jobs=1, **params).fit(X, y)
    two = NoisyGDClassifier(n_jobs=2, **params).fit(X, y)
    assert not np.array_equal(two.coef_, one.coef_)
    assert _rel(two.coef_, one.coef_) < 1e-12
    # Batches under the threshold stay on one thread: bit-identical.
    params["batch_size"] = 1000
    one = NoisyGDClassifier(n_jobs=1, **params).fit(X, y)
    two = NoisyGDClassifier(n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(two.coef_, one.coef_)
