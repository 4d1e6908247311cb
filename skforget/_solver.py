# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The noisy gradient descent loop.

The solver owns the randomness: the initial draw and every noise vector come
from one numpy Generator per segment, with shapes that depend only on the
public model size, never on the data. It calls the Cython kernel once per step
and returns arrays; the estimators own validation and fitted attributes.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from skforget import _kernels

LOSS_CODES = {
    "logistic": _kernels.LOGISTIC,
    "squared": _kernels.SQUARED,
    "multinomial": _kernels.MULTINOMIAL,
    "ovr": _kernels.OVR,
}


@dataclass(frozen=True)
class Design:
    """Training rows prepared for the kernel (lives for one fit or edit only).

    Attributes
    ----------
    X : ndarray of shape (n, d) or CSR matrix
        The caller's rows, not copied when already float and C-contiguous.
    y : ndarray of shape (n,)
        float64 targets: {0, 1} labels, class codes, or regression targets.
    scale : ndarray of shape (n,)
        Public row-norm factors ``min(1, data_norm / ||x_i||)``.
    tau : ndarray of shape (n,)
        Clip thresholds on the loss derivative, ``L / ||[a_i x_i, s_b]||``.
    intercept_scaling : float
        Feature value ``s_b`` of the intercept coordinate (0 without intercept).
    loss : str
    """

    X: object
    y: np.ndarray
    scale: np.ndarray
    tau: np.ndarray
    intercept_scaling: float
    loss: str

    @property
    def n_samples(self):
        return self.X.shape[0]


def row_sq_norms(X):
    """Squared L2 norm of every row, accumulated in float64."""
    if sp.issparse(X):
        return _kernels.row_sq_norms_csr(X.data, X.indptr)
    return _kernels.row_sq_norms_dense(X)


def make_design(X, y, *, scale, sq_norms, loss, intercept_scaling, clip_norm):
    """Bundle validated rows with their per-row factors and clip thresholds.

    ``clip_norm=None`` (or the softmax loss, which is never clipped) gives
    infinite thresholds. Clip thresholds use the row norms after the row-norm
    bound, so ``||clipped gradient|| <= clip_norm`` holds exactly (Lemma 2.1).
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    if clip_norm is None or loss == "multinomial":
        tau = np.full(X.shape[0], np.inf)
    else:
        aug = scale * scale * sq_norms + intercept_scaling**2
        with np.errstate(divide="ignore"):
            tau = np.where(aug > 0, clip_norm / np.sqrt(aug), np.inf)
    return Design(X=X, y=y, scale=np.ascontiguousarray(scale, dtype=np.float64),
                  tau=tau, intercept_scaling=float(intercept_scaling), loss=loss)


def gradient_sum(design, W, b, out_W=None, out_b=None):
    """Sum over rows of the clipped gradients at ``(W, b)``: one kernel pass.

    Returns ``(G, Gb)`` with ``G`` shaped like ``W`` (K, d) and ``Gb`` like ``b``;
    ``Gb`` is the gradient with respect to the intercept coordinate.
    """
    K, d = W.shape
    G = np.empty((K, d)) if out_W is None else out_W
    Gb = np.empty(K) if out_b is None else out_b
    code = LOSS_CODES[design.loss]
    X = design.X
    if sp.issparse(X):
        _kernels.clipped_gradient_csr(X.data, X.indices, X.indptr, design.y,
                                      design.scale, design.tau, W, b,
                                      design.intercept_scaling, code, G, Gb)
    else:
        _kernels.clipped_gradient_dense(X, design.y, design.scale, design.tau, W, b,
                                        design.intercept_scaling, code, G, Gb)
    return G, Gb


def initial_draw(rng, shape, *, fit_intercept, init_variance):
    """theta_0 ~ N(0, v_0 I): the regulariser's stationary law (CS23 Def. 5.1)."""
    sd = math.sqrt(init_variance)
    W = sd * rng.standard_normal(shape)
    b = sd * rng.standard_normal(shape[0]) if fit_intercept else np.zeros(shape[0])
    return W, b


def run_noisy_gd(design, W, b, *, steps, learning_rate, lam, sigma, normaliser, rng,
                 fit_intercept, verbose=0, callback=None):
    """Run ``steps`` noisy gradient steps from ``(W, b)``; returns new arrays.

    Each step is ``theta <- (1 - eta lam) theta - (eta / N) G(theta) + xi`` with
    ``G`` the clipped gradient sum over the current rows, ``N`` the public
    normaliser frozen at fit, and fresh ``xi ~ N(0, 2 eta sigma^2 I)``. The
    intercept coordinate is an ordinary, regularised coordinate
    (privacy-accounting.md, 10.2). The inputs are not modified.

    ``callback(t, W, b, G, Gb)``, if given, sees the nominal iterate and its
    clipped gradient sum at every step, before the update (read-only; used by
    the data-dependent certificate bookkeeping).
    """
    W = np.array(W, dtype=np.float64, order="C", copy=True)
    b = np.array(b, dtype=np.float64, copy=True)
    shrink = 1.0 - learning_rate * lam
    step = learning_rate / normaliser
    noise_sd = math.sqrt(2.0 * learning_rate) * sigma
    G = np.empty_like(W)
    Gb = np.empty_like(b)
    report = max(1, steps // 10)
    for t in range(steps):
        gradient_sum(design, W, b, G, Gb)
        if callback is not None:
            callback(t, W, b, G, Gb)
        W *= shrink
        W -= step * G
        W += noise_sd * rng.standard_normal(W.shape)
        if fit_intercept:
            b *= shrink
            b -= step * Gb
            b += noise_sd * rng.standard_normal(b.shape)
        if verbose and ((t + 1) % report == 0 or t + 1 == steps):
            grad_norm = math.sqrt(float(np.sum(G * G) + np.sum(Gb * Gb))) / normaliser
            print(f"[skforget] step {t + 1}/{steps}: |mean clipped gradient| = "
                  f"{grad_norm:.4g}, |theta| = {float(np.linalg.norm(W)):.4g}")
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):
        raise FloatingPointError("noisy gradient descent produced non-finite "
                                 "coefficients; check learning_rate and the inputs.")
    return W, b
