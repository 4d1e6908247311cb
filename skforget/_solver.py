# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The noisy (mini-batch) gradient descent loop.

For noisy gradient descent the solver owns the randomness: the batch order,
the initial draw and every noise vector come from one numpy Generator per
segment (``skforget._validation.segment_rng``, from which output perturbation
also draws its one noise vector), with shapes that depend only on public
numbers, never on the data. It does not care where the rows
live: it asks a *row source* (the in-memory :class:`skforget._rows.Design`, or
another object with the same calls) for ``n_samples`` and ``loss``, for the
clipped gradient sum (``gradient_sum``) and to run a block of noisy steps
(``run_steps``, handed the step sizes, the standard normals and the public
batch layout); the in-memory source runs the block in the Cython kernel
without the GIL and without returning to Python. It returns arrays; the
estimators own validation and fitted attributes.
"""

import math
import time

import joblib
import numpy as np

from skforget import _kernels
from skforget.accounting._cyclic import Segment, step_sizes

LOSS_CODES = {
    "logistic": _kernels.LOGISTIC,
    "squared": _kernels.SQUARED,
    "multinomial": _kernels.MULTINOMIAL,
    "ovr": _kernels.OVR,
}


def effective_n_jobs(n_jobs):
    """Threads that ``n_jobs`` asks for (None is 1, -1 all CPUs, joblib's rule)."""
    return 1 if n_jobs is None else max(1, int(joblib.effective_n_jobs(n_jobs)))


def gradient_sum(design, W, b, out_W=None, out_b=None, *, weight=None, n_jobs=1):
    """Sum over rows of the clipped gradients at ``(W, b)``: one kernel pass.

    Returns ``(G, Gb)`` with ``G`` shaped like ``W`` (K, d) and ``Gb`` like ``b``;
    ``Gb`` is the gradient with respect to the intercept coordinate. ``n_jobs``
    threads sum ranges of rows (see ``skforget._rows.MIN_ROWS_PER_THREAD``).
    """
    K, d = W.shape
    G = np.empty((K, d)) if out_W is None else out_W
    Gb = np.empty(K) if out_b is None else out_b
    design.gradient_sum(W, b, G, Gb, loss_code=LOSS_CODES[design.loss],
                        weight=weight, n_threads=effective_n_jobs(n_jobs))
    return G, Gb


def initial_draw(rng, shape, *, fit_intercept, init_variance):
    """theta_0 ~ N(0, v_0 I): the regulariser's stationary law (CS23 Def. 5.1)."""
    sd = math.sqrt(init_variance)
    W = sd * rng.standard_normal(shape)
    b = sd * rng.standard_normal(shape[0]) if fit_intercept else np.zeros(shape[0])
    return W, b


#: Rows per block of the segment's order: rows are visited in blocks of
#: consecutive rows so that memory is read in long runs (random single rows cost
#: three to four times a sequential pass; blocks of a few hundred rows about
#: 1.3 times), while every batch still spans at least ``_BLOCKS_PER_BATCH``
#: randomly placed blocks.
_MAX_BLOCK = 256
_BLOCKS_PER_BATCH = 32


def _batch_layout(n, n_batches, rng):
    """Public order and batch boundaries of one segment (data-independent).

    With one batch the rows are used in place. Otherwise the rows are cut into
    blocks of consecutive rows whose order a permutation drawn from the
    segment's generator fixes for the whole segment, and the batches are
    ``n_batches`` nearly equal consecutive ranges of that order. Any
    data-independent order is covered by the accounting (the bound takes the
    worst position, privacy-accounting.md Section 12), so the block structure
    is a matter of memory speed and of mixing only.
    """
    if n_batches == 1:
        return np.zeros(0, dtype=np.int64), np.array([0, n], dtype=np.int64)
    block = int(min(_MAX_BLOCK, max(1, n // (n_batches * _BLOCKS_PER_BATCH))))
    n_blocks = -(-n // block)
    starts = rng.permutation(n_blocks).astype(np.int64) * block
    order = (starts[:, None] + np.arange(block, dtype=np.int64)[None, :]).ravel()
    order = order[order < n]
    bounds = np.linspace(0, n, n_batches + 1).round().astype(np.int64)
    return order, bounds


def _noise_chunk(n_coords):
    # Steps per block of standard normals: about 8 MB at a time, so a long
    # segment never holds all its noise in memory.
    return max(1, (1 << 20) // max(1, n_coords))


def run_segment(design, W, b, *, segment, lam, sigma, normaliser, rng,
                fit_intercept, weight=None, verbose=0, callback=None, label="fit",
                on_projection=None, n_jobs=1):
    """Run one segment (``fit``, or the steps of one edit) from ``(W, b)``.

    The segment's schedule (:class:`skforget.accounting.Segment`) is public:
    ``epochs`` passes over ``n_batches`` batches in a fixed order drawn for the
    segment, constant step size, then a ramp epoch (privacy-accounting.md,
    Section 12). Each step is ``theta <- (1 - eta lam) theta - (eta / B) G_batch
    + sqrt(2 eta) sigma xi`` with the public batch normaliser
    ``B = normaliser / E_B`` (``Segment.inverse_batch_normaliser``, the same
    figure the accountant uses); the intercept is an ordinary, regularised
    coordinate. One batch per epoch is full-batch gradient descent.

    The generator is consumed in a fixed order: the segment's permutation (when
    there are several batches), then blocks of standard normals of shape
    ``(steps, K, n_features + 1)``, so a seed reproduces the run exactly whatever
    the block size. The inputs are not modified; returns new arrays.

    ``callback(t, W, b, G, Gb)``, if given, sees every step's iterate and the
    full clipped gradient sum before the update (full batch only; used by the
    data-dependent certificate bookkeeping). It does not change the model.
    ``on_projection(label, seconds, passes)`` is called once, after the first
    half second, with the projected duration of the whole segment.

    ``n_jobs`` threads sum each batch's clipped gradients over contiguous ranges
    of its rows (at most one range per ``MIN_ROWS_PER_THREAD`` rows), added
    in a fixed order: the result depends on ``n_jobs`` only through the order of
    floating-point sums, and is reproducible for a given ``n_jobs``.
    """
    W = np.array(W, dtype=np.float64, order="C", copy=True)
    b = np.array(b, dtype=np.float64, copy=True)
    n_threads = effective_n_jobs(n_jobs)
    K, d = W.shape
    n = design.n_samples
    E = int(segment.n_batches)
    etas = step_sizes(segment)
    T = etas.shape[0]
    order, bounds = _batch_layout(n, E, rng)
    inv_B = segment.inverse_batch_normaliser(normaliser)
    code = LOSS_CODES[design.loss]
    if callback is not None and E != 1:
        raise ValueError("per-step tracking needs full-batch steps (n_batches=1)")
    chunk = 1 if callback is not None else _noise_chunk(K * (d + 1))
    # A source whose steps are slow rounds of messages (a cluster) asks for
    # shorter blocks, so progress and the long-run warning still come early.
    chunk = min(chunk, getattr(design, "max_steps_per_call", chunk))
    if verbose:
        # At most a pass per block, so progress appears while a long run goes
        # on, not only at its end.
        chunk = min(chunk, max(1, E))
    start = time.perf_counter()
    last_report = start
    G = np.empty((K, d))
    Gb = np.empty(K)
    for lo in range(0, T, chunk):
        hi = min(T, lo + chunk)
        noise = rng.standard_normal((hi - lo, K, d + 1))
        if callback is not None:
            gradient_sum(design, W, b, G, Gb, weight=weight, n_jobs=n_threads)
            callback(lo, W, b, G, Gb)
        design.run_steps(W, b, order=order, bounds=bounds, first_batch=lo % E,
                         etas=etas[lo:hi], noise=noise, sigma=sigma, lam=lam,
                         inv_B=inv_B, loss_code=code, fit_intercept=fit_intercept,
                         weight=weight, n_threads=n_threads)
        now = time.perf_counter()
        if on_projection is not None and (now - start >= 0.5 or hi == T):
            on_projection(label, (now - start) / hi * T, T // E)
            on_projection = None
        if verbose and (now - last_report >= 1.0 or hi == T):
            # Public figures only: the gradient and the iterates are functions of
            # the private rows (an iterate is a release of its own).
            last_report = now
            elapsed = now - start
            eta_left = elapsed / hi * (T - hi)
            print(f"[skforget] {label}: epoch {hi / E:.4g}/{T // E}, step {hi}/{T}, "
                  f"{elapsed:.1f} s elapsed, about {eta_left:.1f} s left", flush=True)
    return W, b


def run_noisy_gd(design, W, b, *, steps, learning_rate, lam, sigma, normaliser, rng,
                 fit_intercept, verbose=0, callback=None):
    """Full-batch noisy gradient descent (the source paper's algorithm).

    ``steps`` steps of ``theta <- (1 - eta lam) theta - (eta / N) G(theta) + xi``
    from ``(W, b)``: :func:`run_segment` with one batch, which draws the same
    noise stream. Returns new arrays; the inputs are not modified.
    """
    return run_segment(design, W, b,
                       segment=Segment(1, int(steps), float(learning_rate)),
                       lam=lam, sigma=sigma, normaliser=normaliser, rng=rng,
                       fit_intercept=fit_intercept, verbose=verbose,
                       callback=callback)
