# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact solve of the clipped, L2-regularised objective, to a certified tolerance.

Output perturbation (privacy-accounting.md, Section 15) needs a point whose
gradient norm is at most a public tolerance ``tau``: by strong convexity it is
then within ``tau / lam`` of the minimiser (Lemma 15.2), which the accountant
adds to the sensitivity. This module minimises

    F(theta) = (1/N) sum_i w_i l~_i(theta) + (lam / 2) ||theta||^2

for the surrogate losses of Lemma 2.1 (the clipped gradient field is the
gradient of a convex, smooth loss: Huber-type for the squared loss, a logistic
loss continued linearly past its clip point), on the rows of a
:class:`~skforget._rows.Design` (already mapped onto the public ball; the
thresholds ``tau_i`` are the kernel's). The gradient is the noisy-GD kernel's
clipped gradient sum (:func:`skforget._solver.gradient_sum`); NumPy adds what
the kernel does not compute, the surrogate's value (for the line search) and
its curvature (for Newton-CG). It runs L-BFGS, polishes with Newton-CG
steps, and *certifies* by recomputing the gradient in float64 with a public
bound on the rounding error of that evaluation (Section 15.3). If the
certificate fails it falls back to a public number of plain gradient steps
that provably end within ``tau / lam`` of the minimiser (Theorem 15.2a): the
solve never fails for a data-dependent reason.

Like the noisy-GD solver it does not care where the rows came from; it never
stores them, and returns only the parameter.
"""

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit, log_expit, logsumexp, softmax
from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

from skforget._solver import gradient_sum
from skforget.accounting._output_perturbation import certified_solve_bounds


class CertificationError(ArithmeticError):
    """The solve did not reach the certified gradient tolerance."""


def _augmented_rows(design):
    """The mapped rows ``a_i x_i`` in float64 (dense copy, or CSR)."""
    X = design.X
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(design.scale) @ X.astype(np.float64))
    return np.asarray(X, dtype=np.float64) * design.scale[:, None]


class _Objective:
    """Value, gradient and Hessian-vector products of ``F`` for one design."""

    def __init__(self, design, *, lam, n_outputs, weight, normaliser, fit_intercept):
        self.X = _augmented_rows(design)
        self.y = design.y
        self.tau = design.tau
        self.s_b = design.intercept_scaling if fit_intercept else 0.0
        self.fit_intercept = fit_intercept
        self.loss = design.loss
        self.lam = float(lam)
        self.k = int(n_outputs)
        self.d = self.X.shape[1]
        self.N = float(normaliser)
        n = self.X.shape[0]
        self.design = design
        self.weight = weight
        self.w = np.ones(n) if weight is None else np.asarray(weight, np.float64)
        if self.loss in ("ovr", "multinomial"):
            codes = self.y.astype(np.intp)
            self.Y = np.zeros((n, self.k))
            self.Y[np.arange(n), codes] = 1.0
        else:
            self.Y = self.y[:, None]

    @property
    def dim(self):
        return self.k * (self.d + int(self.fit_intercept))

    def split(self, theta):
        theta = theta.reshape(self.k, -1)
        W = theta[:, :self.d]
        b = theta[:, self.d] if self.fit_intercept else np.zeros(self.k)
        return W, b

    def _margins(self, theta):
        W, b = self.split(theta)
        Z = self.X @ W.T
        return np.asarray(Z) + b * self.s_b

    def _pieces(self, Z):
        """Per-row loss values ``(n,)``, clipped derivatives ``(n, k)`` and
        curvatures (``(n, k)``, or the softmax probabilities)."""
        tau = self.tau[:, None]
        if self.loss == "squared":
            r = Z - self.Y
            inside = np.abs(r) <= tau
            value = np.where(inside, 0.5 * r * r, tau * np.abs(r) - 0.5 * tau * tau)
            return value.sum(axis=1), np.clip(r, -tau, tau), inside.astype(float)
        if self.loss == "multinomial":
            P = softmax(Z, axis=1)
            value = logsumexp(Z, axis=1) - np.sum(Z * self.Y, axis=1)
            return value, P - self.Y, P
        # Logistic (binary, or each one-vs-rest output): with s = 2y - 1 and
        # u = s z, the loss is softplus(-u) with derivative -s sigmoid(-u), whose
        # magnitude is clamped at tau_i; past the clamp point u_c the loss
        # continues linearly (Lemma 2.1's Phi).
        s = 2.0 * self.Y - 1.0
        u = s * Z
        mag = expit(-u)
        clamped = mag > tau
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            # u_c solves sigmoid(-u_c) = tau (only used where tau < 1).
            t = np.clip(np.broadcast_to(tau, u.shape), 1e-300, 1.0)
            u_c = np.log1p(-t) - np.log(t)
            linear = -log_expit(u_c) + tau * (u_c - u)
        value = np.where(clamped, linear, -log_expit(u))
        value = np.where(np.broadcast_to(tau, u.shape) > 0, value, 0.0)
        psi = -s * np.minimum(mag, tau)
        curv = np.where(clamped, 0.0, mag * expit(u))
        return value.sum(axis=1), psi, curv

    def _pullback(self, R):
        """``(1/N) [X~^T R]`` as a flat parameter-shaped vector."""
        GW = np.asarray(self.X.T @ R).T / self.N
        if not self.fit_intercept:
            return GW.ravel()
        Gb = self.s_b * R.sum(axis=0) / self.N
        return np.column_stack([GW, Gb]).ravel()

    def value(self, theta):
        value, _, _ = self._pieces(self._margins(theta))
        return float(self.w @ value) / self.N + 0.5 * self.lam * float(theta @ theta)

    def grad(self, theta):
        """The clipped gradient by the noisy-GD kernel (one fused pass): the
        certificate checks the very field noisy GD steps along."""
        W, b = self.split(theta)
        G, Gb = gradient_sum(self.design, np.ascontiguousarray(W), np.array(b),
                             weight=self.weight)
        if self.fit_intercept:
            G = np.column_stack([G, Gb])
        return G.ravel() / self.N + self.lam * theta

    def numpy_grad(self, theta):
        """The same gradient from :meth:`_pieces` (tests pin the two together)."""
        _, psi, _ = self._pieces(self._margins(theta))
        return self._pullback(psi * self.w[:, None]) + self.lam * theta

    def value_and_grad(self, theta):
        return self.value(theta), self.grad(theta)

    def hessp_operator(self, theta):
        """Generalised Hessian at ``theta`` as a LinearOperator (Newton-CG)."""
        Z = self._margins(theta)
        _, _, curv = self._pieces(Z)
        w = self.w[:, None]

        def matvec(v):
            V = self._margins(np.asarray(v).ravel())  # linear in v
            if self.loss == "multinomial":
                P = curv
                PV = P * V
                M = PV - P * PV.sum(axis=1, keepdims=True)
            else:
                M = curv * V
            return self._pullback(M * w) + self.lam * np.asarray(v).ravel()

        return LinearOperator((self.dim, self.dim), matvec=matvec, dtype=np.float64)


def solve_certified(design, *, lam, n_outputs, normaliser, tolerance, gradient_bound,
                    beta, row_norm, weight=None, fit_intercept=True, max_iter=1000):
    """Minimise ``F`` to a point within ``tolerance / lam`` of the minimiser.

    Never fails for a data-dependent reason (Section 15.3, Theorem 15.2a):
    a fast path (L-BFGS, then Newton-CG) is accepted if the float64
    certificate ``||theta|| <= B`` and ``||grad F|| + e_pub <= tolerance``
    holds; otherwise plain gradient descent at ``1 / (lam + beta)`` runs from 0
    for the public number ``K`` of steps of
    :func:`~skforget.accounting._output_perturbation.certified_solve_bounds`
    (stopping early only at a point that passes the certificate), which lands within
    ``tolerance / lam`` of the minimiser whatever the data. The running time,
    not the result's guarantee, depends on the data.

    Parameters
    ----------
    design : Design
        Mapped rows, targets, clip thresholds and intercept scaling.
    lam : float
        L2 strength on every coordinate.
    n_outputs : int
        Rows of the coefficient matrix (1 binary/regression, classes otherwise).
    normaliser : int
        ``N``, the database size.
    tolerance : float
        Absolute gradient tolerance ``tau`` the accountant assumed.
    gradient_bound, beta, row_norm : float
        Per-record gradient bound ``G``, smoothness ``beta`` and augmented
        row norm ``R`` (public: they fix ``B``, ``e_pub`` and ``K``).
    weight : ndarray of shape (n,) or None
        Row weights in [0, 1].
    fit_intercept : bool, default=True
    max_iter : int, default=1000
        Iteration budget of the fast path only (L-BFGS; the Newton-CG polish
        takes at most ``min(50, max_iter)`` steps).

    Returns
    -------
    W : ndarray of shape (n_outputs, n_features)
    b : ndarray of shape (n_outputs,)

    Raises
    ------
    CertificationError
        If the public precondition ``e_pub <= tolerance / 2`` fails (a
        function of public numbers only; the estimators check it first).
    """
    obj = _Objective(design, lam=lam, n_outputs=n_outputs, weight=weight,
                     normaliser=normaliser, fit_intercept=fit_intercept)
    target = float(tolerance)
    dim = obj.dim
    norm_bound, err, steps = certified_solve_bounds(
        n_samples=obj.X.shape[0], n_params=dim, gradient_bound=gradient_bound,
        row_norm=row_norm, lam=lam, beta=beta, tolerance=target)
    if steps is None:
        raise CertificationError(
            f"the float64 rounding bound {err:.3g} exceeds half the tolerance "
            f"{target:.3g}")

    def certified(theta):
        g = obj.grad(theta)
        ok = (float(np.linalg.norm(theta)) <= norm_bound
              and float(np.linalg.norm(g)) + err <= target)
        return ok, g

    # Neither a floating-point warning nor an exception may decide the outcome
    # (a record of 1e200 must not turn a release into an error under
    # warnings-as-errors, nor announce itself with a RuntimeWarning): the whole
    # solve runs under np.errstate(all="ignore"), which holds for this thread
    # only (a warnings filter would hold for every thread, and two solves in
    # two threads left an "ignore" at the head of the filters: a second
    # reader), and any failure of the fast path falls back to the public
    # K-step descent, which never fails (so how the release is computed never
    # depends on a record's values, only its time does).
    with np.errstate(all="ignore"):
        try:
            theta, ok = _fast_path(obj, certified, target=target, dim=dim,
                                   max_iter=max_iter)
        except Exception:  # noqa: BLE001 - any failure means: use the fallback
            theta, ok = None, False
        if not ok:
            theta = _fallback_descent(obj, certified, lam=lam, beta=beta,
                                      steps=steps)
    W, b = obj.split(theta)
    return np.ascontiguousarray(W), np.array(b, dtype=np.float64)


def _fast_path(obj, certified, *, target, dim, max_iter):
    """L-BFGS, then Newton-CG polish; returns ``(theta, certified?)``."""
    theta = np.zeros(dim)
    # L-BFGS-B calls BLAS on vectors of the parameter's size, where threads
    # only add synchronisation (tenfold slower on a busy two-core machine);
    # the gradient's pass over the rows is memory-bound either way.
    with threadpool_limits(limits=1, user_api="blas"):
        res = minimize(obj.value_and_grad, theta, jac=True, method="L-BFGS-B",
                       options={"maxiter": int(max_iter), "maxcor": 20,
                                "ftol": 0.0, "gtol": 0.25 * target / np.sqrt(dim)})
    theta = res.x
    ok, g = certified(theta) if np.all(np.isfinite(theta)) else (False, None)
    # L-BFGS stalls when the objective's decrease falls below float64 resolution;
    # Newton-CG steps accepted on the gradient norm alone finish the job (the
    # objective is strongly convex and piecewise twice differentiable).
    for _ in range(min(50, int(max_iter)) if g is not None else 0):
        if ok:
            break
        H = obj.hessp_operator(theta)
        step, _ = cg(H, -g, rtol=1e-3, maxiter=max(50, 2 * dim))
        g_norm = float(np.linalg.norm(g))
        for alpha in (1.0, 0.5, 0.25, 0.125, 0.0625):
            trial = theta + alpha * step
            g_trial = obj.grad(trial)
            if np.linalg.norm(g_trial) < g_norm:
                theta = trial
                break
        else:
            break
        ok, g = certified(theta)
    return theta, bool(ok)


def _fallback_descent(obj, certified, *, lam, beta, steps):
    """Theorem 15.2a: ``steps`` (public ``K``) plain GD steps from 0.

    The step ``fl(theta - fl(eta g))`` is the one the theorem's rounding
    analysis covers; an early stop is only at a certified point.
    """
    eta = 1.0 / (lam + beta)
    theta = np.zeros(obj.dim)
    for _ in range(steps):
        ok, g = certified(theta)
        if ok:
            break
        theta = theta - eta * g
    return theta
