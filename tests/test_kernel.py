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
    if loss == "multinomial":
        # At or above sqrt(2) the threshold never binds (Lemma 4.5 (v)): the
        # plain softmax; the clipped one is tested against a solver below.
        tau = np.full(n, 2.0)
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


# --- the clipped softmax (privacy-accounting.md, Lemma 4.5) ---------------------------

def _softmax_residual(kernel, z, y, tau):
    """The kernel's residual ``q* - e_y`` for one row of margins ``z``: a
    one-feature row ``x = 1`` with ``W = z`` and no intercept."""
    K = len(z)
    G = np.zeros((K, 1))
    Gb = np.zeros(K)
    kernel.clipped_gradient_dense(np.ones((1, 1)), np.array([float(y)]), np.ones(1),
                                  np.array([tau]), np.ascontiguousarray(z[:, None]),
                                  np.zeros(K), 0.0, kernel.MULTINOMIAL, G, Gb)
    return G[:, 0]


def _clipped_objective(v, z, y):
    """``<q - e_y, z> + H(q)`` at ``q = v + e_y``: the value of (4.5)."""
    q = v.copy()
    q[y] += 1.0
    q = np.clip(q, 0.0, 1.0)
    return float(v @ z - np.sum(np.where(q > 0, q * np.log(np.where(q > 0, q, 1)), 0)))


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
def test_clipped_softmax_is_the_constrained_maximiser(kernel):
    """Lemma 4.5 (ii): the residual is q* - e_y, q* the maximiser of
    <q, z> + H(q) over the simplex within distance tau of e_y, as a general
    constrained solver (SLSQP, from two starts) finds it."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(3)
    checked = 0
    # SLSQP fails on some draws (more or fewer with scipy's build): draw until
    # 30 cases were checked, so that the check never rests on a few.
    for _ in range(200):
        if checked == 30:
            break
        K = int(rng.choice([3, 5, 8]))
        z = rng.normal(0.0, float(rng.choice([0.5, 3.0, 20.0])), K)
        y = int(rng.integers(K))
        tau = float(rng.choice([0.05, 0.3, 0.8, 1.3]))
        v = _softmax_residual(kernel, z, y, tau)
        e = np.eye(K)[y]

        def negative(q, z=z):
            return -(q @ z - np.sum(q * np.log(np.maximum(q, 1e-300))))

        cons = [{"type": "eq", "fun": lambda q: q.sum() - 1.0},
                {"type": "ineq", "fun": lambda q, e=e, tau=tau:
                 tau**2 - np.sum((q - e) ** 2)}]
        best = min((minimize(negative, start, constraints=cons, bounds=[(0, 1)] * K,
                             method="SLSQP", options={"ftol": 1e-15, "maxiter": 2000})
                    for start in (np.full(K, 1.0 / K), 0.9 * e + 0.1 / K)),
                   key=lambda r: r.fun)
        if not best.success:   # the solver's own failure, not a check
            continue
        checked += 1
        np.testing.assert_allclose(v + e, best.x, atol=2e-5)
        # No point of the feasible set does better than the kernel's (the
        # solver maximises <q, z> + H(q), which is (4.5) plus z_y).
        value = _clipped_objective(v, z, y) + z[y]
        assert value >= -best.fun - 1e-9 * (1 + abs(best.fun))
    assert checked >= 30


def _ball_reference(z, y, tau, start):
    """Lemma 4.5's KKT point to 40 digits: ``r_k = W(exp(t_k))``, ``t_k =
    z_k + mu [k = y] + c'``, with ``sum r = mu`` and ``||r / mu - e_y|| =
    tau``, solved by mpmath's Newton from ``start = (c', log mu)``."""
    mpmath = pytest.importorskip("mpmath")   # a test dependency (pyproject)
    with mpmath.workdps(40):
        z = [mpmath.mpf(float(v)) for v in z - np.max(z)]
        tau = mpmath.mpf(tau)

        def roots(c, u):
            mu = mpmath.exp(u)
            return [mpmath.lambertw(mpmath.exp(zk + (mu if k == y else 0) + c)).real
                    for k, zk in enumerate(z)], mu

        def equations(c, u):
            r, mu = roots(c, u)
            return [mpmath.fsum(r) - mu,
                    mpmath.fsum((rk / mu - (1 if k == y else 0)) ** 2
                                for k, rk in enumerate(r)) - tau ** 2]

        c, u = mpmath.findroot(equations, (mpmath.mpf(start[0]), mpmath.mpf(start[1])))
        r, mu = roots(c, u)
        q = np.array([float(rk / mu) for rk in r])
    q[y] -= 1.0
    return q


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
def test_clipped_softmax_is_exact_to_rounding(kernel):
    """Where the ball binds, the kernel's residual is Lemma 4.5's KKT point to
    rounding: within 1e-12 of a 40-digit solution, on rows of 3 to 30
    classes (the 2-D Newton's residual tests are 1e-14; a row it cannot
    certify goes to the bracketed solver, 1e-13 in log mu). The residual
    tests, not the Lambert refinement's stopping rule, certify the point: a
    refinement stopped at 1e-2 passes here too, only slower."""
    rng = np.random.default_rng(17)
    checked = 0
    while checked < 40:
        K = int(rng.choice([3, 4, 10, 30]))
        z = rng.normal(0.0, float(rng.choice([0.5, 2.0, 8.0])), K)
        y = int(rng.integers(K))
        tau = float(10.0 ** rng.uniform(-4, 0.14))
        if np.linalg.norm(softmax(z) - np.eye(K)[y]) <= tau:
            continue
        v = _softmax_residual(kernel, z, y, tau)
        q = v + np.eye(K)[y]
        zz = z - np.max(z)
        j = max((k for k in range(K) if k != y), key=lambda k: q[k])
        if min(q[y], q[j]) < 1e-200:
            continue
        # The multiplier and constant the kernel's point implies: the start.
        mu = ((np.log(q[y]) - zz[y]) - (np.log(q[j]) - zz[j])) / (q[j] + 1 - q[y])
        c = np.log(mu * q[j]) + mu * q[j] - zz[j]
        reference = _ball_reference(z, y, tau, (c, np.log(mu)))
        np.testing.assert_allclose(v, reference, rtol=0, atol=1e-12)
        checked += 1


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
def test_clipped_softmax_with_margins_hundreds_apart(kernel):
    """A class whose margin lies hundreds below the others: roots started at
    the naive clip sent Halley where f e overflowed, its -0.0 step passed for
    converged, and the kernel returned the naive clip (a second reader: 20 of
    2,290 binding rows at margin scale 300), jumping by 0.18 for a margin
    moved by 0.1, against Lemma 4.5's 1/2-Lipschitz residual."""
    y, tau = 2, 0.5
    z = np.array([0.0, -50.0, -800.0])
    v = _softmax_residual(kernel, z, y, tau)
    q = v + np.eye(3)[y]
    zz = z - z.max()
    mu = ((np.log(q[y]) - zz[y]) - (np.log(q[1]) - zz[1])) / (q[1] + 1 - q[y])
    c = np.log(mu * q[1]) + mu * q[1] - zz[1]
    # Within 1e-9 (the bracketed solver's 1e-13 in log mu, where Newton cannot
    # certify such a row); the naive clip was 0.13 away.
    np.testing.assert_allclose(v, _ball_reference(z, y, tau, (c, np.log(mu))),
                               rtol=0, atol=1e-9)
    previous = None
    for A in np.linspace(600.0, 900.0, 601):
        w = _softmax_residual(kernel, np.array([0.0, -50.0, -A]), y, tau)
        if previous is not None:
            assert np.linalg.norm(w - previous[1]) <= \
                0.5 * (A - previous[0]) * (1 + 1e-7) + 1e-12
        previous = (A, w)


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
def test_clipped_softmax_stays_in_small_balls_and_finite(kernel):
    """The residual's norm is at most tau to a few ulps *relative to tau*, also
    for tiny tau (projecting q and subtracting e_y again rounded q_y near 1,
    an excess of eps / tau relative: 5e-13 at tau = 1e-4, beyond the
    rounding margin of the sensitivity); it meets the KKT conditions of
    Lemma 4.5 to the same relative accuracy (log q_k + mu q_k - z_k is one
    constant over k != y); margins 1e308 apart give a finite residual (0 when
    it is not a number), never NaN."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        K = int(rng.choice([3, 5, 12, 70]))
        z = rng.normal(0.0, float(rng.choice([1.0, 5.0, 40.0])), K)
        y = int(rng.integers(K))
        tau = float(10.0 ** rng.uniform(-7, -2))
        v = _softmax_residual(kernel, z, y, tau)
        assert np.linalg.norm(v) <= tau * (1 + 8 * np.finfo(float).eps)
        q = v + np.eye(K)[y]
        if np.linalg.norm(softmax(z) - np.eye(K)[y]) > tau and q.min() > 1e-250:
            # Stationarity: log q_k + mu q_k - z_k equal over k != y, with the
            # multiplier mu from the label's equation against the largest one.
            others = [k for k in range(K) if k != y]
            j = max(others, key=lambda k: q[k])
            mu = ((np.log(q[y]) - z[y]) - (np.log(q[j]) - z[j])) / (q[j] + 1 - q[y])
            if 0 < mu < 1e12:
                lhs = np.log(q[others]) + mu * q[others] - z[others]
                assert np.ptp(lhs) <= 1e-6 * (1 + abs(lhs).max())
    for z, y in (([1e308, -1e308, 0.0], 2), ([0.0, 1e20, -1e20], 2),
                 ([1e308, 1e308, -1e308], 2)):
        for tau in (1e-6, 0.5, 1.4):
            v = _softmax_residual(kernel, np.array(z), y, tau)
            assert np.all(np.isfinite(v)) and np.linalg.norm(v) <= tau


@pytest.mark.parametrize("kernel", BUILDS, ids=lambda m: m.__name__.split(".")[-1])
def test_clipped_softmax_properties(kernel):
    """Lemma 4.5 (iii)-(v) and the gradient of a convex function: the
    residual lies in the tau ball and sums to 0 with q = v + e_y >= 0; it is
    the softmax's inside the ball and for tau >= sqrt(2); it is 1/2-Lipschitz
    in the margins; it is the derivative of the objective value (4.5) along
    random directions, which is convex along lines."""
    rng = np.random.default_rng(4)
    for _ in range(300):
        K = int(rng.integers(2, 9))
        z = rng.normal(0.0, float(rng.choice([0.3, 2.0, 30.0])), K)
        y = int(rng.integers(K))
        tau = float(rng.uniform(0.01, 1.6))
        v = _softmax_residual(kernel, z, y, tau)
        q = v + np.eye(K)[y]
        assert np.linalg.norm(v) <= tau * (1 + 1e-12)
        assert abs(v.sum()) <= 1e-12 and q.min() >= -1e-15
        plain = softmax(z) - np.eye(K)[y]
        if np.linalg.norm(plain) <= tau or tau >= np.sqrt(2):
            np.testing.assert_allclose(v, plain, rtol=1e-12, atol=1e-15)
        d = rng.normal(size=K)
        d /= np.linalg.norm(d)
        for h in (1e-3, 0.5, 5.0):
            w = _softmax_residual(kernel, z + h * d, y, tau)
            assert np.linalg.norm(w - v) <= 0.5 * h * (1 + 1e-7) + 1e-12
        if np.max(np.abs(z)) < 50:
            h = 1e-5
            up = _clipped_objective(_softmax_residual(kernel, z + h * d, y, tau),
                                    z + h * d, y)
            down = _clipped_objective(_softmax_residual(kernel, z - h * d, y, tau),
                                      z - h * d, y)
            mid = _clipped_objective(v, z, y)
            assert abs((up - down) / (2 * h) - v @ d) <= 1e-5
            assert up + down >= 2 * mid - 1e-9   # convex along the line
