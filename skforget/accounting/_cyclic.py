# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy of cyclic mini-batch noisy gradient descent with a final ramp.

Design
------
A segment (``fit``, or the steps of one ``partial_unlearn``) makes ``m`` epochs
over ``E`` batches in a fixed, data-independent order (a random permutation drawn
for the segment): ``m - 1`` epochs at a constant step size ``eta``, then one
*ramp* epoch whose step sizes fall linearly from ``eta`` to ``eta / E``. The
model is released only at the end of a segment. One step on batch ``j`` is::

    theta <- (1 - eta_k lam) theta - (eta_k / B) sum_{i in batch j} clip(grad_i)
             + N(0, 2 eta_k sigma^2 I),

with the public batch normaliser ``B = N / E_B`` (``E_B = E`` except in an
edit that grew the database, :class:`Segment`). A privacy unit sits in one batch
per epoch, so two runs that differ in it drift apart by ``b_k = eta_k S / B`` at
its steps and by 0 elsewhere; every step contracts by ``c_k = 1 - eta_k lam``
(privacy-accounting.md, Lemma 3.1, with the batch's data term).

The shifted-Rényi argument (Feldman, Mironov, Talwar, Thakurta 2018, Lemma 20
and Theorem 22; privacy-accounting.md Section 5.1) bounds the Rényi divergence
of the two releases by ``q rho*``, where ``rho*`` is the least energy of a shift
schedule. Section 12 of the spec solves that problem exactly: in the
coordinates ``tau_k = sum_{i<=k} w_i^2 s_i^2`` (noise "time") and
``Bc_k = sum_{i<=k} w_i b_i`` (accumulated shift, ``w_k = prod_{j>k} c_j``) the
optimum is the lower convex hull of the points just before each use of the unit,
from the origin to ``(tau_T, Bc_T)``, and ``rho* = sum (dBc)^2 / (2 dtau)`` over
its pieces (Theorem 12.1).

The position of the unit in the order is not known in advance, so the bound is
the maximum over positions. Within the last segment in which the unit is present
the order is fixed, so every position is evaluated exactly; uses in earlier
segments are *lumped* at the end of their epoch with their largest possible
weight, which Lemma 12.2 shows can only increase ``rho*``; so the bound holds for
any data-independent order in earlier segments, and the per-segment
permutations need not be remembered.

Everything here is a function of public numbers.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np

from skforget.accounting._checks import check_int, check_positive
from skforget.accounting._hull import hull_pieces

# Epochs older than this many relaxation times (1/(eta lam) steps) before the
# window of exact evaluation are merged into one lumped point: their weight is
# below exp(-2 * 40) and merging them only delays their shift (Lemma 12.2).
_HISTORY_RELAXATIONS = 40.0


@dataclass(frozen=True, slots=True)
class Segment:
    """Public schedule of one segment: ``epochs`` epochs over ``n_batches``
    batches, the last a ramp, at constant step size ``learning_rate``.

    ``normaliser_batches`` is ``E_B``, the batch count that fixes the batch
    normaliser ``B = N / E_B`` (0, the default, means ``n_batches``). An edit
    that grows the database past the step size's headroom runs more batches
    than the fit, ``E' > E``, but keeps the fit's normaliser, ``E_B = E``:
    the solver and the accountant must divide by the same ``B``
    (privacy-accounting.md, Section 12.1).

    ``data_weight`` bounds the rows of any batch of the segment divided by
    ``B`` (1 when batches hold ``N / E`` rows; larger after insertions): the
    batch's data term is then ``beta * data_weight``-smooth and a step contracts
    by ``max(|1 - eta lam|, |1 - eta (lam + beta w)|)`` (Lemma 3.1).
    """

    n_batches: int
    epochs: int
    learning_rate: float
    data_weight: float = 1.0
    normaliser_batches: int = 0

    @property
    def steps(self):
        return self.n_batches * self.epochs

    def inverse_batch_normaliser(self, normaliser):
        """``1 / B = E_B / N``: what a batch's clipped gradient sum is scaled by,
        and what one unit's drift ``eta S / B`` is proportional to."""
        E_B = self.normaliser_batches or self.n_batches
        return E_B / float(normaliser)


def step_sizes(segment):
    """Step sizes of one segment: constant, then a linear ramp to ``eta / E``.

    With one batch per epoch (full batch) the ramp epoch is one step at ``eta``:
    the schedule is plain gradient descent.

    Examples
    --------
    >>> from skforget.accounting._cyclic import Segment, step_sizes
    >>> step_sizes(Segment(n_batches=4, epochs=2, learning_rate=1.0)).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.75, 0.5, 0.25]
    """
    E = check_int(segment.n_batches, "n_batches", low=1)
    m = check_int(segment.epochs, "epochs", low=1)
    eta = check_positive(segment.learning_rate, "learning_rate")
    ramp = eta * (E - np.arange(E, dtype=np.float64)) / E
    return np.concatenate([np.full((m - 1) * E, eta), ramp])


def _hull_energy(tau_pts, bc_pts, tau_end, bc_end):
    """Least energy of a path from (0, 0) to ``(tau_end, bc_end)`` that stays at
    or below the obstacle points (Theorem 12.1), for each row.

    ``tau_pts``, ``bc_pts``: (P, m) obstacle points with strictly increasing
    ``tau`` in each row, all before ``tau_end``. The optimal path is the lower
    convex hull of the origin, the points and the end, built by Andrew's
    monotone chain in one pass over the points (compiled: :mod:`._hull`), and
    the energy is ``sum (dBc)^2 / (2 dtau)`` over its pieces.
    """
    P = tau_pts.shape[0]
    zero = np.zeros((P, 1))
    xs = np.ascontiguousarray(np.concatenate(
        [zero, tau_pts, np.reshape(tau_end, (P, 1))], axis=1), dtype=np.float64)
    ys = np.ascontiguousarray(np.concatenate(
        [zero, bc_pts, np.reshape(bc_end, (P, 1))], axis=1), dtype=np.float64)
    return hull_pieces(xs, ys).sum(axis=1)


def _epoch_summary(etas, c, sigma, b_scale):
    """For one epoch relative to its end: contraction, noise time, largest
    weighted drift ``max_k w_k b_k`` (the lump of Lemma 12.2)."""
    # w_k relative to the epoch's end: product of the later contractions.
    w = np.ones_like(c)
    if len(c) > 1:
        w[:-1] = np.cumprod(c[::-1])[::-1][1:]
    s2 = 2.0 * etas * sigma * sigma
    lump = float(np.max(w * etas)) * b_scale
    return float(np.prod(c)), float(np.sum(w * w * s2)), lump


def _contractions(segment, etas, lam, beta):
    """``c_k = max(|1 - eta_k lam|, |1 - eta_k (lam + beta w)|)`` (Lemma 3.1)."""
    w = float(segment.data_weight)
    return np.maximum(np.abs(1.0 - etas * lam), np.abs(1.0 - etas * (lam + beta * w)))


def _bound(segments, present, *, lam, beta, sigma, sensitivity, normaliser):
    """``max over positions of rho*`` for a unit present in the segments flagged
    by ``present`` (a contiguous run that starts at the first segment), released
    at the end of the last segment.

    A pure function of public numbers, remembered for the latest histories: a
    plan evaluates the same long stationary history for each candidate length
    of the fit (Section 12.6), and repeated fits with the same public numbers
    (cross-validation, a search) plan alike."""
    try:
        key = (tuple(segments), tuple(bool(p) for p in present), float(lam),
               float(beta), float(sigma), float(sensitivity), float(normaliser))
    except (TypeError, ValueError):
        key = None
    if key is None:
        return _bound_uncached(segments, present, lam=lam, beta=beta, sigma=sigma,
                               sensitivity=sensitivity, normaliser=normaliser)
    return _bound_cached(*key)


@functools.lru_cache(maxsize=256)
def _bound_cached(segments, present, lam, beta, sigma, sensitivity, normaliser):
    return _bound_uncached(list(segments), list(present), lam=lam, beta=beta,
                           sigma=sigma, sensitivity=sensitivity, normaliser=normaliser)


def _bound_uncached(segments, present, *, lam, beta, sigma, sensitivity, normaliser):
    lam = check_positive(lam, "lam")
    beta = float(beta)
    sigma = check_positive(sigma, "sigma")
    S = check_positive(sensitivity, "sensitivity")
    N = check_positive(normaliser, "normaliser")
    if not segments or not present[0]:
        raise ValueError("the unit must be present from the first segment.")
    last = max(i for i, p in enumerate(present) if p)
    E = segments[last].n_batches
    inv_B = segments[last].inverse_batch_normaliser(N)
    # Steps of the exact window: the last present segment and every later one.
    window = [step_sizes(s) for s in segments[last:]]
    eta_w = np.concatenate(window)
    n_exact = window[0].shape[0]
    c_w = np.concatenate([_contractions(s, e, lam, beta)
                          for s, e in zip(segments[last:], window, strict=True)])
    if np.any(c_w <= 0.0) or np.any(c_w >= 1.0):
        raise ValueError("every step must contract: 0 < c_k < 1 (Lemma 3.1); the "
                         "step size or a batch's size is too large.")
    # w_k = prod_{j>k} c_j over the window, in log space (no underflow).
    logc = np.log(c_w)
    tail = np.concatenate([np.cumsum(logc[::-1])[::-1][1:], [0.0]])
    w = np.exp(tail)
    w_start = math.exp(float(np.sum(logc)))  # weight of the window's start
    s2 = 2.0 * eta_w * sigma * sigma
    tau_w = np.cumsum(w * w * s2)
    wb = w[:n_exact] * eta_w[:n_exact] * (S * inv_B)

    # Earlier segments (all present): one lumped point per epoch, Lemma 12.2.
    lump_tau, lump_bc = [], []
    tau0 = 0.0  # noise time accumulated before the window (grows backwards)
    bc_before = 0.0
    weight = w_start
    relax_steps = 1.0 / (max(s.learning_rate for s in segments) * lam)
    budget = _HISTORY_RELAXATIONS * relax_steps
    pieces = []  # (tau increment, lump) per epoch, newest first
    used = 0.0
    merged_lump = 0.0
    for seg in reversed(segments[:last]):
        etas = step_sizes(seg)
        cs = _contractions(seg, etas, lam, beta)
        if np.any(cs >= 1.0):
            raise ValueError("every step must contract: 0 < c_k < 1 (Lemma 3.1).")
        b_scale = S * seg.inverse_batch_normaliser(N)
        # Every epoch but the last (the ramp) has the same steps, so the same
        # summary: computed once (the same floats as epoch by epoch).
        summaries = {}
        for e in reversed(range(seg.epochs)):
            key = e == seg.epochs - 1
            if key not in summaries:
                sl = slice(e * seg.n_batches, (e + 1) * seg.n_batches)
                summaries[key] = _epoch_summary(etas[sl], cs[sl], sigma, b_scale)
            contraction, dtau, lump = summaries[key]
            if used > budget:
                merged_lump += weight * lump  # merged into the oldest kept point
            else:
                pieces.append((weight * weight * dtau, weight * lump))
            used += seg.n_batches
            weight *= contraction
    # Build the lumped points oldest first; tau counts from the oldest kept epoch.
    pieces.reverse()
    acc_tau = 0.0
    for i, (dtau, lump) in enumerate(pieces):
        acc_tau += dtau
        # The lump is a jump at the epoch's last step; the obstacle point sits
        # just before it, at (almost) the epoch's full noise time. Placing it at
        # the full noise time only delays the jump further (Lemma 12.2).
        lump_tau.append(acc_tau)
        lump_bc.append(bc_before)
        bc_before += lump + (merged_lump if i == 0 else 0.0)
    if not pieces:
        bc_before += merged_lump
    tau0 = acc_tau
    # Exact window: a unit at position p uses step p + e E of each epoch e of
    # the last present segment (same position in every epoch).
    m_exact = segments[last].epochs
    positions = np.arange(E)
    uses = positions[:, None] + E * np.arange(m_exact)[None, :]  # (E, m)
    wb_uses = wb[uses]
    bc_uses = bc_before + np.concatenate(
        [np.zeros((E, 1)), np.cumsum(wb_uses, axis=1)[:, :-1]], axis=1)
    tau_uses = tau0 + np.where(uses > 0, tau_w[np.maximum(uses - 1, 0)], 0.0)
    tau_pts = np.concatenate([np.tile(lump_tau, (E, 1)), tau_uses], axis=1) \
        if lump_tau else tau_uses
    bc_pts = np.concatenate([np.tile(lump_bc, (E, 1)), bc_uses], axis=1) \
        if lump_bc else bc_uses
    bc_end = bc_before + wb_uses.sum(axis=1)
    tau_end = np.full(E, tau0 + tau_w[-1])
    return float(_hull_energy(tau_pts, bc_pts, tau_end, bc_end).max())


def rho_cyclic_present(segments, *, lam, beta, sigma, sensitivity, normaliser):
    """Rényi bound for a unit present throughout (privacy-accounting.md, 12.4).

    ``R_q(theta_T || theta'_T) <= q rho`` at every order ``q > 1`` for the
    release at the end of the last segment, whatever the unit's position in each
    segment's order and whenever it arrived (a unit present in fewer steps is
    covered: ``rho*`` is monotone in the drifts, Lemma 12.2).

    Parameters
    ----------
    segments : sequence of Segment
        The public history, oldest first.
    lam, beta, sigma : float
        Regularisation, smoothness bound ``beta_phi R^2`` and noise scale.
    sensitivity : float
        ``S`` of one unit's clipped gradient sum.
    normaliser : float
        ``N``; the batch normaliser is ``N / n_batches``.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import Segment, rho_cyclic_present
    >>> fb = [Segment(n_batches=1, epochs=591, learning_rate=1 / 0.51)]
    >>> round(10 * rho_cyclic_present(fb, lam=0.01, beta=0.5,
    ...                               sigma=0.004450159723945581,
    ...                               sensitivity=2, normaliser=10000), 9)
    0.999983468
    """
    return _bound(list(segments), [True] * len(segments), lam=lam, beta=beta,
                  sigma=sigma, sensitivity=sensitivity, normaliser=normaliser)


def rho_cyclic_removed(segments, n_present, *, lam, beta, sigma, sensitivity,
                       normaliser):
    """Rényi bound for a unit removed after the first ``n_present`` segments.

    The deletion statement of privacy-accounting.md Theorem 6.2 for the cyclic
    schedule (Section 12.5): the unit is present in ``segments[:n_present]``
    (the last of them evaluated exactly per position, earlier ones lumped) and
    absent from the rest, whose noise absorbs its shift.

    Parameters
    ----------
    lam, beta, sigma, sensitivity, normaliser : float
        The regularisation strength ``lambda``; the loss's smoothness ``beta``
        (:func:`smoothness`); the noise scale ``sigma`` (a step adds ``N(0, 2 eta
        sigma^2 I)``); the sensitivity ``S`` (:func:`sensitivity`); the normaliser
        ``N`` of the gradient sum.
    segments : list of Segment
        The history, oldest first.
    n_present : int
        Segments in which the unit was present (the first ``n_present``).

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import Segment, rho_cyclic_removed
    >>> fb = [Segment(1, 591, 1 / 0.51), Segment(1, 59, 1 / 0.51)]
    >>> round(10 * rho_cyclic_removed(fb, 1, lam=0.01, beta=0.5,
    ...                               sigma=0.004450159723945581,
    ...                               sensitivity=2, normaliser=10000), 6)
    0.096643
    """
    n_present = check_int(n_present, "n_present", low=1)
    segments = list(segments)
    if n_present > len(segments):
        raise ValueError("n_present exceeds the number of segments.")
    present = [i < n_present for i in range(len(segments))]
    return _bound(segments, present, lam=lam, beta=beta, sigma=sigma,
                  sensitivity=sensitivity, normaliser=normaliser)


def shift_bound(segments, *, lam, beta, sensitivity, normaliser):
    """Largest distance two shared-noise runs can end apart (Section 12.3).

    With the same start, the same orders and the same noise, two runs whose
    databases differ in one unit end within ``Bc_T = sum_k w_k b_k`` of each
    other (the deterministic coupling that Theorem 12.1 starts from); this is
    its maximum over the unit's position in the last segment, earlier segments
    lumped (Lemma 12.2). With one batch it is :func:`coupling_distance` on the
    full-batch drifts. Tests use it to check that no input moves a run further
    than the accountant assumes.

    Examples
    --------
    >>> from skforget.accounting._cyclic import Segment, shift_bound
    >>> round(shift_bound([Segment(1, 100, 1.0)], lam=0.1, beta=0.5,
    ...                   sensitivity=2.0, normaliser=100), 4)
    0.2
    """
    segments = list(segments)
    lam = check_positive(lam, "lam")
    S = check_positive(sensitivity, "sensitivity")
    N = check_positive(normaliser, "normaliser")
    total = 0.0
    for seg in segments[:-1]:
        etas = step_sizes(seg)
        cs = _contractions(seg, etas, lam, float(beta))
        b_scale = S * seg.inverse_batch_normaliser(N)
        for e in range(seg.epochs):
            sl = slice(e * seg.n_batches, (e + 1) * seg.n_batches)
            contraction, _, lump = _epoch_summary(etas[sl], cs[sl], 1.0, b_scale)
            total = contraction * total + lump
    last = segments[-1]
    E = last.n_batches
    etas = step_sizes(last)
    cs = _contractions(last, etas, lam, float(beta))
    w = np.ones_like(cs)
    w[:-1] = np.cumprod(cs[::-1])[::-1][1:]
    wb = (w * etas * (S * last.inverse_batch_normaliser(N))).reshape(last.epochs, E)
    return float(np.prod(cs) * total + wb.sum(axis=0).max())
