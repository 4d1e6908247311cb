# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The clipped-gradient kernel against a straightforward NumPy reference.

Every build the machine can run is checked (the portable one always, the
AVX2 + FMA one where the CPU has it), for every loss, dense and CSR, float64 and
float32, with block tails (row counts that are not a multiple of four).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit, softmax

from skforget import _gd_fast

BUILDS = [_gd_fast]
if _gd_fast.cpu_has_avx2_fma():
    from skforget import _gd_fast_avx2

    BUILDS.append(_gd_fast_avx2)

LOSSES = {"logistic": _gd_fast.LOGISTIC, "squared": _gd_fast.SQUARED,
          "multinomial": _gd_fast.MULTINOMIAL, "ovr": _gd_fast.OVR}


def reference(X, y, scale, tau, W, b, s_b, loss):
    """Two BLAS passes and the loss derivative, clamped row by row."""
    X = X.toarray() if sp.issparse(X) else X
    X = X.astype(np.float64)
    Z = scale[:, None] * (X @ W.T) + s_b * b
    if loss in ("logistic", "squared"):
        R = (expit(Z[:, 0]) if loss == "logistic" else Z[:, 0]) - y
        R = np.clip(R, -tau, tau)[:, None]
    else:
        onehot = np.eye(W.shape[0])[y.astype(int)]
        if loss == "ovr":
            R = np.clip(expit(Z) - onehot, -tau[:, None], tau[:, None])
        else:
            R = softmax(Z, axis=1) - onehot
    return (R * scale[:, None]).T @ X, s_b * R.sum(axis=0)


def problem(n, d, loss, rng, *, n_classes=3, margin_scale=1.0):
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.5] = 0.0  # sparse enough for CSR to skip entries
    norms = np.linalg.norm(X, axis=1)
    scale = np.minimum(1.0, 1.0 / np.maximum(norms, 1e-300))
    K = n_classes if loss in ("multinomial", "ovr") else 1
    if loss in ("multinomial", "ovr"):
        y = rng.integers(0, K, size=n).astype(np.float64)
    elif loss == "logistic":
        y = rng.integers(0, 2, size=n).astype(np.float64)
    else:
        y = rng.normal(size=n)
    s_b = 0.7
    tau = 0.4 / np.sqrt((scale * norms) ** 2 + s_b**2)
    W = margin_scale * rng.normal(size=(K, d))
    b = margin_scale * rng.normal(size=K)
    return X, y, scale, tau, W, b, s_b


def run(kernel, X, y, scale, tau, W, b, s_b, loss):
    K, d = W.shape
    G, Gb = np.full((K, d), np.nan), np.full(K, np.nan)
    if sp.issparse(X):
        kernel.clipped_gradient_csr(X.data, X.indices, X.indptr, y, scale, tau, W, b,
                                    s_b, LOSSES[loss], G, Gb)
    else:
        kernel.clipped_gradient_dense(X, y, scale, tau, W, b, s_b, LOSSES[loss], G, Gb)
    return G, Gb


def assert_matches_reference(kernel, X, *args):
    G, Gb = run(kernel, X, *args)
    G_ref, Gb_ref = reference(X, *args)
    np.testing.assert_allclose(G, G_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(Gb, Gb_ref, rtol=1e-10, atol=1e-12)
    return G, Gb


def as_layout(X, layout, dtype):
    X = np.ascontiguousarray(X, dtype=dtype)
    if layout == "dense":
        return X
    Xs = sp.csr_matrix(X)
    if layout == "csr64":
        Xs.indices = Xs.indices.astype(np.int64)
        Xs.indptr = Xs.indptr.astype(np.int64)
    return Xs


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("layout", ["dense", "csr", "csr64"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 3, 4, 203])
def test_kernel_matches_numpy_reference(kernel, loss, layout, dtype, n):
    rng = np.random.default_rng(n)
    X, y, scale, tau, W, b, s_b = problem(n, 17, loss, rng)
    Xk = as_layout(X, layout, dtype)
    # float32 rows are widened as they are read: the reference sees the same
    # float32 values in float64, so both dtypes meet the same tolerance.
    assert_matches_reference(kernel, Xk, y, scale, tau, W, b, s_b, loss)


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("empty", ["some rows", "all rows"])
def test_csr_rows_without_nonzeros(kernel, loss, empty):
    # Empty rows (and a matrix with no stored entry at all) still contribute
    # their intercept term, and the sparse loops never read past a row.
    rng = np.random.default_rng(2)
    X, y, scale, tau, W, b, s_b = problem(11, 5, loss, rng)
    X[::3 if empty == "some rows" else 1] = 0.0
    Xs = sp.csr_matrix(X)
    assert Xs.nnz < X.size and (empty == "some rows") == (Xs.nnz > 0)
    assert_matches_reference(kernel, Xs, y, scale, tau, W, b, s_b, loss)


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
@pytest.mark.parametrize("loss", ["logistic", "ovr", "multinomial"])
def test_saturated_margins_stay_finite_and_exact(kernel, loss):
    # Margins in the thousands: the sigmoid and softmax saturate without
    # overflow, and the residuals are exactly those of the reference.
    rng = np.random.default_rng(0)
    X, y, scale, tau, W, b, s_b = problem(41, 9, loss, rng, margin_scale=2000.0)
    G, Gb = assert_matches_reference(kernel, X, y, scale, tau, W, b, s_b, loss)
    assert np.all(np.isfinite(G)) and np.all(np.isfinite(Gb))


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
@pytest.mark.parametrize("loss", ["logistic", "squared", "ovr"])
def test_each_row_contributes_at_most_the_clip_norm(kernel, loss):
    # Clamping the loss derivative at tau_i = L / ||[a_i x_i, s_b]|| is
    # per-example clipping: one row's gradient (coefficients and intercept
    # together) has norm <= L, per output.
    rng = np.random.default_rng(1)
    X, y, scale, tau, W, b, s_b = problem(64, 6, loss, rng, margin_scale=5.0)
    X *= 3.0  # rows over the bound, mapped back by scale
    scale = np.minimum(1.0, 1.0 / np.linalg.norm(X, axis=1))
    tau = 0.4 / np.sqrt((scale * np.linalg.norm(X, axis=1)) ** 2 + s_b**2)
    worst = 0.0
    for i in range(X.shape[0]):
        G, Gb = run(kernel, X[i:i + 1], y[i:i + 1], scale[i:i + 1], tau[i:i + 1],
                    W, b, s_b, loss)
        per_output = np.sqrt((G**2).sum(axis=1) + Gb**2)
        worst = max(worst, per_output.max())
    assert worst <= 0.4 * (1 + 1e-12)
    assert worst > 0.39  # the bound is reached: these rows are clipped


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
def test_kernel_rejects_inconsistent_shapes(kernel):
    rng = np.random.default_rng(2)
    X, y, scale, tau, W, b, s_b = problem(10, 4, "logistic", rng)
    G, Gb = np.empty((1, 4)), np.empty(1)
    with pytest.raises(ValueError, match="one entry per row"):
        kernel.clipped_gradient_dense(X, y[:-1], scale, tau, W, b, s_b,
                                      kernel.LOGISTIC, G, Gb)
    with pytest.raises(ValueError, match="shape"):
        kernel.clipped_gradient_dense(X, y, scale, tau, W, b, s_b, kernel.LOGISTIC,
                                      np.empty((1, 5)), Gb)
    with pytest.raises(ValueError, match="loss code"):
        kernel.clipped_gradient_dense(X, y, scale, tau, np.vstack([W, W]),
                                      np.r_[b, b], s_b, kernel.LOGISTIC,
                                      np.empty((2, 4)), np.empty(2))


# --- the step loop: whole blocks of noisy steps in one call --------------------


def reference_steps(X, y, scale, tau, weight, order, bounds, first, etas, noise,
                    sigma, lam, inv_B, s_b, loss, fit_intercept, W, b):
    """The step loop in NumPy: batch rows through ``order``, then the update."""
    W, b = W.copy(), b.copy()
    E = len(bounds) - 1
    rows = np.arange(X.shape[0]) if order.size == 0 else order
    for t, eta in enumerate(etas):
        j = (first + t) % E
        idx = rows[bounds[j]:bounds[j + 1]]
        if weight.size:
            G, Gb = _weighted_reference(X[idx], y[idx], scale[idx], tau[idx],
                                        weight[idx], W, b, s_b, loss)
        else:
            G, Gb = reference(X[idx], y[idx], scale[idx], tau[idx], W, b, s_b, loss)
        sd = np.sqrt(2 * eta) * sigma
        W = (1 - eta * lam) * W - eta * inv_B * G + sd * noise[t, :, :-1]
        if fit_intercept:
            b = (1 - eta * lam) * b - eta * inv_B * Gb + sd * noise[t, :, -1]
    return W, b


def _weighted_reference(X, y, scale, tau, w, W, b, s_b, loss):
    """Row by row: each row's clipped derivative times its weight."""
    G = np.zeros_like(W)
    Gb = np.zeros_like(b)
    for i in range(X.shape[0]):
        row = X[i:i + 1]
        g, gb = reference(row, y[i:i + 1], scale[i:i + 1], tau[i:i + 1], W, b, s_b,
                          loss)
        G += w[i] * g
        Gb += w[i] * gb
    return G, Gb


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda k: k.__name__.rsplit(".")[-1])
@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("layout", ["dense64", "dense32", "csr64", "csr32"])
@pytest.mark.parametrize("batches,weighted,fit_intercept",
                         [(1, False, True), (5, False, True), (7, True, False),
                          (3, True, True)])
def test_step_loop_matches_numpy(kernel, loss, layout, batches, weighted,
                                 fit_intercept):
    rng = np.random.default_rng(11)
    n, d = 43, 6
    X, y, scale, tau, W, b, s_b = problem(n, d, loss, rng)
    dtype = np.float32 if layout.endswith("32") else np.float64
    X = X.astype(dtype)
    if not fit_intercept:
        b = np.zeros_like(b)
    order = (np.zeros(0, np.int64) if batches == 1
             else rng.permutation(n).astype(np.int64))
    bounds = np.linspace(0, n, batches + 1).round().astype(np.int64)
    weight = rng.uniform(0, 2, n) if weighted else np.zeros(0)
    T = 2 * batches + 1
    etas = rng.uniform(0.1, 1.0, T)
    noise = rng.normal(size=(T, W.shape[0], d + 1))
    args = dict(sigma=0.3, lam=0.05, inv_B=batches / n, s_b=s_b)
    W_ref, b_ref = reference_steps(X.astype(np.float64), y, scale, tau, weight,
                                   order, bounds, 2, etas, noise, args["sigma"],
                                   args["lam"], args["inv_B"], s_b, loss,
                                   fit_intercept, W, b)
    W_out, b_out = W.copy(), b.copy()
    common = (y, scale, tau, weight, order, bounds, 2, etas, noise, args["sigma"],
              args["lam"], args["inv_B"], s_b, LOSSES[loss], fit_intercept,
              W_out, b_out)
    if layout.startswith("csr"):
        Xs = sp.csr_matrix(X)
        kernel.run_steps_csr(Xs.data, Xs.indices, Xs.indptr, *common)
    else:
        kernel.run_steps_dense(X, *common)
    np.testing.assert_allclose(W_out, W_ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(b_out, b_ref, rtol=1e-9, atol=1e-11)


def test_step_loop_refuses_inconsistent_schedules():
    rng = np.random.default_rng(0)
    X, y, scale, tau, W, b, s_b = problem(10, 3, "logistic", rng)
    etas = np.ones(2)
    noise = np.zeros((2, 1, 4))
    ok = dict(order=np.zeros(0, np.int64), bounds=np.array([0, 10], np.int64))

    def call(order, bounds, noise=noise):
        _gd_fast.run_steps_dense(X, y, scale, tau, np.zeros(0), order, bounds, 0,
                                 etas, noise, 0.1, 0.1, 0.1, s_b, LOSSES["logistic"],
                                 True, W.copy(), b.copy())

    call(**ok)
    with pytest.raises(ValueError, match="bounds must run from 0"):
        call(ok["order"], np.array([0, 9], np.int64))
    with pytest.raises(ValueError, match="out of range"):
        call(np.arange(1, 11, dtype=np.int64), ok["bounds"])
    with pytest.raises(ValueError, match="noise must have shape"):
        call(**ok, noise=np.zeros((2, 1, 3)))
    with pytest.raises(ValueError, match="permutation"):
        call(np.arange(5, dtype=np.int64), ok["bounds"])
