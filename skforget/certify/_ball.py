# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The contraction ball: how far a same-seed counterfactual run can drift.

Two runs of noisy gradient descent that share every noise vector and start
from the same point, one on ``D`` and one on a neighbour ``D'`` (up to ``k``
records removed, replaced or added), satisfy (certificates.md, Section 3 and
the fixed-normaliser section)::

    ||theta'_{t+1} - theta_{t+1}|| <= rho ||theta'_t - theta_t|| + eta e_t(k)

because the noise cancels, the common part of the step is a ``rho``-contraction
(the clipped GLM gradient is the gradient of a convex smooth surrogate), and
``e_t(k)`` bounds the change of the mean clipped gradient at the *nominal*
iterate. The solver divides gradient sums by the normaliser ``N`` frozen at
fit, so removing ``k`` rows changes the mean gradient by the sum of their
clipped gradients over ``N``: at most ``k G / N``.

This module holds the two forms of the recursion:

* :func:`public_radius`, a closed form over the segments of the history (fit,
  then one segment per ``partial_unlearn``) that needs only public metadata;
* :class:`BallTracker`, the per-step bookkeeping of the data-dependent radius
  of one segment, driven by the solver's callback. Its output is a function of
  the private rows.
"""

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from skforget import accounting
from skforget._validation import warn
from skforget.exceptions import NotCertifiableError

#: Neighbourhoods a certificate can be asked for (certificates.md, Section 1).
MODES = ("remove", "replace", "add", "add_remove")

#: Curvature bound ``beta_phi`` per loss, per output (the kernel's losses are
#: ``log(1 + e^z) - y z`` and ``(z - y)^2 / 2``).
_CURVATURE = {"logistic": 0.25, "ovr": 0.25, "squared": 1.0}

# Above this many coordinates the Gram matrix of the rows is not formed and the
# data-dependent contraction falls back to the public one (it only differs when
# the database outgrew the normaliser or in the add modes).
_MAX_GRAM_DIM = 4096


def check_mode(mode):
    """Return ``mode`` if it names a neighbourhood, else raise ``ValueError``."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}.")
    return mode


def check_loss(loss):
    """Refuse models that Lemma 1 does not cover (the multinomial softmax)."""
    if loss == "multinomial":
        raise NotCertifiableError(
            "Prediction certificates do not cover the multinomial (softmax) model: "
            "its gradient is not a clamped scalar times the row, so the clipped "
            "gradient map is not the gradient of a convex surrogate and the "
            "contraction argument fails (certificates.md, P6 and L5). Fit with "
            "multi_class='ovr' (and a clip_norm) to get certificates.")
    if loss not in _CURVATURE:
        raise NotCertifiableError(f"No prediction certificate for the loss {loss!r}.")
    return loss


def output_gradient_bound(*, loss, row_norm, clip_norm):
    """Bound ``G`` on one output's clipped per-record gradient norm.

    Binary logistic: ``min(L, R)``; squared: ``L``; one-vs-rest: every output is
    a binary logistic model clipped on its own, so ``min(L, R)`` per output
    (the accountant's ``sqrt(C) min(L, R)`` is the joint norm).

    Examples
    --------
    >>> from skforget.certify import output_gradient_bound
    >>> output_gradient_bound(loss="ovr", row_norm=2 ** 0.5, clip_norm=0.5)
    0.5
    """
    check_loss(loss)
    per_output = "logistic" if loss == "ovr" else loss
    return accounting.gradient_bound(loss=per_output, row_norm=row_norm,
                                     clip_norm=clip_norm)


def topsum_table(values, k_max):
    """Sums of the ``k`` largest entries of each column, for ``k = 0..k_max``.

    Parameters
    ----------
    values : ndarray of shape (n, K)
    k_max : int

    Returns
    -------
    table : ndarray of shape (k_max + 1, K)
        ``table[k, c]`` is the sum of the ``min(k, n)`` largest ``values[:, c]``.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.certify import topsum_table
    >>> topsum_table(np.array([[1.0], [3.0], [2.0]]), 4)[:, 0].tolist()
    [0.0, 3.0, 5.0, 6.0, 6.0]
    """
    values = np.asarray(values, dtype=np.float64)
    n, K = values.shape
    table = np.zeros((k_max + 1, K))
    m = min(k_max, n)
    if m == 0:
        return table
    # A partial sort is O(n) per column; only the m largest need ordering.
    top = -np.partition(-values, m - 1, axis=0)[:m]
    top = -np.sort(-top, axis=0)
    table[1:m + 1] = np.cumsum(top, axis=0)
    table[m + 1:] = table[m]
    return table


def step_increments(norms, k_max, *, mode, normaliser, gradient_bound):
    """Data-dependent drift ``e_t(k)``, ``k = 0..k_max``, fixed normaliser ``N``.

    ``norms[i, c] = ||g_ic(theta_t)||`` are the clipped gradient norms of the
    current rows at the nominal iterate (certificates.md, Section 9.2):

    * remove: ``TopSum_k(norms) / N``;
    * replace: ``(TopSum_k(norms) + k G) / N``;
    * add, add_remove: ``k G / N`` (any record's clipped gradient is at most
      ``G``, so removing ``b`` and adding ``k - b`` is never worse than adding
      ``k``).

    Parameters
    ----------
    norms : ndarray of shape (n, K)
    k_max : int
    mode : {"remove", "replace", "add", "add_remove"}
    normaliser : int
        The frozen normaliser ``N``.
    gradient_bound : float
        Per-output bound ``G`` on a clipped gradient norm.

    Returns
    -------
    e : ndarray of shape (k_max + 1, K)

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.certify import step_increments
    >>> step_increments(np.array([[0.5], [0.2]]), 2, mode="remove", normaliser=4,
    ...                 gradient_bound=0.5)[:, 0].tolist()
    [0.0, 0.125, 0.175]
    """
    check_mode(mode)
    norms = np.asarray(norms, dtype=np.float64)
    ks = np.arange(k_max + 1, dtype=np.float64)[:, None]
    if mode in ("add", "add_remove"):
        return np.broadcast_to(ks * gradient_bound / normaliser,
                               (k_max + 1, norms.shape[1])).copy()
    top = topsum_table(norms, k_max)
    if mode == "replace":
        top = top + ks * gradient_bound
    return top / normaliser


def current_size_remove_increments(multipliers, rows, k_max, *, gradient_bound):
    """Spec's original remove drift, for the *current-size* normaliser.

    With gradients averaged over the rows actually present (``1/|D|``; the
    variant privacy-accounting.md 10.1 allows but skforget's solver does not
    use), ``e_t(k) = min(2 k G / n, TopSum_k(||g_i - gbar||) / (n - k))``
    (certificates.md, Section 3.2). Kept to check the spec's oracle numbers.

    Parameters
    ----------
    multipliers : ndarray of shape (n, K)
        Clipped loss derivatives ``s_ic`` at the nominal iterate.
    rows : ndarray of shape (n, p)
        Augmented rows ``[a_i x_i, s_b]``.
    k_max : int
        Must be below ``n``.
    gradient_bound : float

    Returns
    -------
    e : ndarray of shape (k_max + 1, K)
    """
    s = np.asarray(multipliers, dtype=np.float64)
    rows = np.asarray(rows, dtype=np.float64)
    n = rows.shape[0]
    if k_max >= n:
        raise ValueError(f"k_max={k_max} must be below n={n} rows.")
    gbar = rows.T @ s / n  # (p, K)
    q = rows @ gbar  # x_i . gbar_c
    sq = np.einsum("ij,ij->i", rows, rows)[:, None]
    dev = np.sqrt(np.maximum(0.0, s * s * sq - 2.0 * s * q
                             + np.sum(gbar * gbar, axis=0)[None, :]))
    ks = np.arange(k_max + 1, dtype=np.float64)[:, None]
    return np.minimum(2.0 * ks * gradient_bound / n,
                      topsum_table(dev, k_max) / (n - ks))


def contraction_factors(ks, *, mode, learning_rate, lam, beta, row_norm, n_samples,
                        normaliser, gram_norm=None):
    """Contraction ``rho_k`` of the counterfactual run's noiseless step.

    The counterfactual data term is ``(1/N) sum_{D'} c_i x_i x_i^T`` with
    ``c_i in [0, beta_phi]``, so (certificates.md, Lemma 2, with ``N`` fixed)
    ``rho_k = max(|1 - eta lam|, |1 - eta (lam + beta w_k)|)`` where ``beta =
    beta_phi R^2`` and ``w_k = Gram(D') / (R^2 N)``. Publicly
    ``Gram(D') <= |D'| R^2`` with ``|D'| <= n`` (remove, replace) or
    ``n + k`` (add, add_remove); with ``gram_norm = lambda_max(X^T X)`` of the
    current rows, also ``Gram(D') <= gram_norm + (added) R^2``. With ``gram_norm``
    None this is :func:`skforget.accounting.contraction` at ``data_weight =
    |D'| / N``.

    Parameters
    ----------
    ks : array-like of int
    mode : {"remove", "replace", "add", "add_remove"}
    learning_rate, lam, beta, row_norm : float
        ``eta``, ``lambda``, ``beta_phi R^2`` and ``R`` of the plan.
    n_samples : int
        Rows of the segment's database.
    normaliser : int
        The frozen normaliser ``N``.
    gram_norm : float or None
        Largest eigenvalue of the segment's augmented Gram matrix (private).

    Returns
    -------
    rho : ndarray of shape (len(ks),)

    Examples
    --------
    >>> from skforget.certify import contraction_factors
    >>> contraction_factors([0, 5], mode="remove", learning_rate=1.0, lam=0.1,
    ...                     beta=0.5, row_norm=2 ** 0.5, n_samples=3,
    ...                     normaliser=3).tolist()
    [0.9, 0.9]
    """
    check_mode(mode)
    ks = np.asarray(ks, dtype=np.float64)
    added = np.zeros_like(ks) if mode == "remove" else ks
    size = n_samples + (added if mode in ("add", "add_remove") else 0.0)
    weight = np.asarray(size, dtype=np.float64) * np.ones_like(ks)
    if gram_norm is not None:
        weight = np.minimum(weight, gram_norm / row_norm**2 + added)
    weight = weight / normaliser
    shrink = 1.0 - learning_rate * lam
    return np.maximum(abs(shrink), np.abs(1.0 - learning_rate * (lam + beta * weight)))


def geometric_sum(rho, steps):
    """``sum_{t < steps} rho^t``, accurate when ``rho`` is close to 1.

    Examples
    --------
    >>> from skforget.certify import geometric_sum
    >>> geometric_sum([0.5, 1.0], 3).tolist()
    [1.75, 3.0]
    """
    rho = np.asarray(rho, dtype=np.float64)
    out = np.full(rho.shape, float(steps))
    with np.errstate(divide="ignore", invalid="ignore"):
        # 1 - rho^K via expm1 keeps the digits when eta lam is 1e-4 or smaller.
        closed = -np.expm1(steps * np.log(rho)) / (1.0 - rho)
    regular = (rho != 1.0) & (rho > 0.0)
    out[regular] = closed[regular]
    out[rho == 0.0] = 1.0 if steps > 0 else 0.0
    return out


def ball_step(radius, rho, learning_rate, increment):
    """One step of the radius recursion ``r <- rho r + eta e``.

    Examples
    --------
    >>> from skforget.certify import ball_step
    >>> ball_step(0.0, 0.9, 1.0, 0.25)
    0.25
    """
    return rho * radius + learning_rate * increment


@dataclass(frozen=True, slots=True)
class HistorySegment:
    """Public record of one segment of the training history.

    Attributes
    ----------
    n_samples : int
        Rows of the database the segment ran on.
    steps : int
        Noisy steps run.
    removed_later : int
        Rows deleted (or replaced: the old version counts) by the edits that
        followed this segment; they were present in it at most.
    n_batches : int
        Batches per pass (1: full-batch steps; otherwise ``steps / n_batches``
        passes, the last a ramp, privacy-accounting.md Section 12).
    normaliser_batches : int
        ``E_B`` of the batch normaliser ``B = N / E_B`` the solver divided each
        batch by: the fit's batch count in every segment (0 means
        ``n_batches``). An edit that grew the database runs more batches than
        the fit but keeps the fit's ``B`` (Section 12.1).
    """

    n_samples: int
    steps: int
    removed_later: int
    n_batches: int = 1
    normaliser_batches: int = 0


def segments_from_guarantee(guarantee):
    """The public segment history of a model, from its ``privacy_guarantee_``.

    Segment 0 is ``fit`` (``N`` rows, ``fit_steps``), segment ``j`` the
    ``j``-th ``partial_unlearn`` (the edited size and its steps). The history
    starts again at the last edit served by retraining from a fresh start: the
    same pipeline on fewer records starts afresh there too, from the same draw.

    Parameters
    ----------
    guarantee : PrivacyGuarantee

    Returns
    -------
    segments : list of HistorySegment

    Examples
    --------
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.certify import segments_from_guarantee
    >>> from skforget.datasets import load_dataset
    >>> d = load_dataset("breast_cancer")
    >>> clf = NoisyGDClassifier(clip_norm=0.5, random_state=0).fit(d.data, d.target)
    >>> seg, = segments_from_guarantee(clf.privacy_guarantee_)
    >>> seg.n_samples, seg.n_batches, seg.normaliser_batches, seg.removed_later
    (569, 1, 1, 0)
    """
    sizes = [guarantee.normaliser] + [e.n_samples for e in guarantee.edits]
    steps = [guarantee.fit_steps] + [e.steps for e in guarantee.edits]
    removed = [e.n_deleted + e.n_replaced for e in guarantee.edits]
    later = [int(sum(removed[j:])) for j in range(len(sizes))]
    batches = [int(getattr(guarantee, "n_batches", 1))]
    batches += [int(getattr(e, "n_batches", 1)) for e in guarantee.edits]
    start = max([0] + [i + 1 for i, e in enumerate(guarantee.edits)
                       if getattr(e, "retrained", False)])
    E_B = batches[0]  # the fit's: every segment keeps its batch normaliser
    return [HistorySegment(int(n), int(K), r, E, E_B)
            for n, K, r, E in zip(sizes, steps, later, batches, strict=True)][start:]


def public_radius(segments, ks, *, mode="remove", learning_rate, lam, beta, row_norm,
                  normaliser, gradient_bound, include_forgotten=True):
    """Data-independent radius after a history of segments, for each ``k``.

    certificates.md, Section 9.3: over segments ``j``,
    ``r <- rho_j^K_j r + eta e_j (1 - rho_j^K_j) / (1 - rho_j)`` with
    ``e_j = (removed_j + added) G / N``, where ``removed_j = min(n_j, k + F_j)``
    (remove, replace) or ``min(n_j, F_j)`` (add, add_remove), ``added = k``
    except in remove mode, and ``F_j`` the rows deleted by later edits (0 with
    ``include_forgotten=False``). Single segment, remove mode, ``rho = 1 - eta
    lam``: ``r = k G (1 - (1 - eta lam)^T) / (N lam)``. A segment of several
    batches bounds a coupled run that keeps every remaining row in its batch,
    not a retrain, which draws its layout from its own row count: the
    estimators' certificates refuse such models (certificates.md, L4).

    Parameters
    ----------
    segments : list of HistorySegment
    ks : array-like of int
        Budgets.
    mode : {"remove", "replace", "add", "add_remove"}, default="remove"
    learning_rate, lam, beta, row_norm : float
        ``eta``, ``lambda``, ``beta_phi R^2`` and ``R``.
    normaliser : int
    gradient_bound : float
        Per-output ``G``.
    include_forgotten : bool, default=True
        Also cover the rows deleted by the edits of the history.

    Returns
    -------
    radius : ndarray of shape (len(ks),)

    Examples
    --------
    >>> from skforget.certify import HistorySegment, public_radius
    >>> r = public_radius([HistorySegment(100, 50, 0)], [0, 1, 2], learning_rate=1.0,
    ...                   lam=0.01, beta=0.5, row_norm=2 ** 0.5, normaliser=100,
    ...                   gradient_bound=0.5)
    >>> [round(float(v), 6) for v in r]
    [0.0, 0.197497, 0.394994]
    """
    check_mode(mode)
    ks = np.asarray(ks, dtype=np.float64).reshape(-1)
    r = np.zeros_like(ks)
    for seg in segments:
        forgotten = seg.removed_later if include_forgotten else 0
        if mode in ("remove", "replace"):
            removed = np.minimum(seg.n_samples, ks + forgotten)
        else:
            removed = np.minimum(seg.n_samples, forgotten) * np.ones_like(ks)
        added = np.zeros_like(ks) if mode == "remove" else ks
        e = (removed + added) * gradient_bound / normaliser
        E = int(getattr(seg, "n_batches", 1))
        E_B = int(getattr(seg, "normaliser_batches", 0)) or E

        def rho_at(eta, E=E, E_B=E_B, seg=seg):
            # A batch holds at most ceil(n / E) rows of a normaliser N / E_B.
            size = -(-seg.n_samples // E) * E_B
            return contraction_factors(ks, mode=mode, learning_rate=eta, lam=lam,
                                       beta=beta, row_norm=row_norm, n_samples=size,
                                       normaliser=normaliser)

        if E == 1:
            rho = rho_at(learning_rate)
            r = rho**seg.steps * r + learning_rate * e * geometric_sum(rho, seg.steps)
            continue
        # Several batches: the k records sit in some batches of each pass, one
        # use each, so a pass adds at most (largest weight of a step) * eta_t
        # * k G / B = ... * E_B e; the constant passes, then the ramp pass.
        epochs = seg.steps // E
        rho = rho_at(learning_rate)
        c_pass = rho**E
        inc = learning_rate * E_B * e
        r = c_pass ** (epochs - 1) * r + inc * geometric_sum(c_pass, epochs - 1)
        etas = learning_rate * (E - np.arange(E)) / E
        rhos = np.stack([rho_at(eta) for eta in etas])  # (E, len(ks))
        after = np.ones_like(rhos)
        after[:-1] = np.cumprod(rhos[::-1], axis=0)[::-1][1:]
        r = np.prod(rhos, axis=0) * r + E_B * e * np.max(etas[:, None] * after, axis=0)
    return r


def augmented_row_norms(design):
    """``||[a_i x_i, s_b]||`` for every row of a solver design."""
    return design.aug_norms


def gram_norm(design):
    """Largest eigenvalue of ``sum_i x_i x_i^T`` over the augmented rows.

    Returns None when the Gram matrix would be too large to form; callers then
    use the public bound ``n R^2``.
    """
    X = design.X
    n, d = X.shape
    if n == 0:
        return 0.0
    if d + 1 > _MAX_GRAM_DIM:
        return None
    scaled = (sp.diags(design.scale) @ X) if sp.issparse(X) else \
        X * design.scale[:, None]
    gram = np.zeros((d + 1, d + 1))
    block = scaled.T @ scaled
    gram[:d, :d] = block.toarray() if sp.issparse(block) else block
    col = np.asarray(scaled.sum(axis=0)).reshape(-1) * design.intercept_scaling
    gram[:d, d] = col
    gram[d, :d] = col
    gram[d, d] = n * design.intercept_scaling**2
    return float(np.linalg.eigvalsh(gram)[-1])


def clipped_derivative(Z, design):
    """Clipped loss derivatives ``psi_ic(z_ic)`` at margins ``Z`` of shape (n, K).

    The kernel's map (certificates.md, Section 1): loss derivative, then clamp at
    ``+-tau_i``. It is non-decreasing in each margin, which the interval box
    relies on.
    """
    if design.loss == "squared":
        D = Z - design.y[:, None]
    elif design.loss == "logistic":
        D = expit(Z) - design.y[:, None]
    else:  # one-vs-rest: output c is a binary model for class c
        D = expit(Z) - (design.y[:, None] == np.arange(Z.shape[1])[None, :])
    tau = design.tau[:, None]
    return np.clip(D, -tau, tau)


def clipped_multipliers(design, W, b):
    """Clipped loss derivatives of every row at ``(W, b)``, shape ``(n, K)``."""
    Z = np.asarray(design.X @ W.T, dtype=np.float64)
    Z = Z * design.scale[:, None] + design.intercept_scaling * b[None, :]
    return clipped_derivative(Z, design)


class BallTracker:
    """Data-dependent radius bookkeeping for one segment (solver callback).

    At every step the solver passes the nominal iterate; the tracker computes the
    clipped gradient norms of the current rows there (one extra pass over the
    rows), their top-``k`` sums for every ``k <= k_max``, and advances
    ``r <- rho_k r + eta e_t(k)`` from ``r = 0`` for each requested mode. The
    result is the segment's own contribution to the radius; for ``fit`` it is
    the whole radius. It is a function of the private rows (sensitive).

    Parameters
    ----------
    design : Design
        The segment's rows, as given to the solver.
    k_max : int
    modes : tuple of str
    learning_rate, lam, beta, row_norm : float
    normaliser : int
    gradient_bound : float
        Per-output ``G``.
    n_outputs : int
    segment : int
        0 for ``fit``, ``j`` for the ``j``-th ``partial_unlearn``.
    """

    def __init__(self, design, *, k_max, modes, learning_rate, lam, beta, row_norm,
                 normaliser, gradient_bound, n_outputs, segment):
        self.design = design
        self.k_max = int(k_max)
        self.modes = tuple(modes)
        self.learning_rate = float(learning_rate)
        self.normaliser = normaliser
        self.gradient_bound = float(gradient_bound)
        self.n_outputs = int(n_outputs)
        self.segment = int(segment)
        self.row_norms = augmented_row_norms(design)
        big_lambda = gram_norm(design)
        ks = np.arange(self.k_max + 1)

        def factors(gram):
            return {mode: contraction_factors(
                ks, mode=mode, learning_rate=learning_rate, lam=lam, beta=beta,
                row_norm=row_norm, n_samples=design.n_samples,
                normaliser=normaliser, gram_norm=gram) for mode in self.modes}

        self.rho = factors(big_lambda)
        # Whether to warn is read from the public factors (no Gram norm): the
        # private ones depend on the rows' directions, and a warning is an
        # output the certificate's figures do not cover.
        if any(np.any(rho >= 1.0) for rho in factors(None).values()):
            warn(
                "The counterfactual step may not contract for some budgets "
                "(learning_rate too large for the database size): the "
                "certified radii can grow with the number of steps.", UserWarning,
                stacklevel=4)
        self.radius = {mode: np.zeros((self.k_max + 1, self.n_outputs))
                       for mode in self.modes}
        self._need_norms = any(m in ("remove", "replace") for m in self.modes)

    def step(self, t, W, b, G, Gb):
        """Advance the radii by one step from the nominal iterate ``(W, b)``."""
        norms = np.zeros((0, self.n_outputs))  # the add modes need no row
        if self._need_norms and self.design.n_samples:
            norms = np.abs(clipped_multipliers(self.design, W, b)) \
                * self.row_norms[:, None]
        for mode in self.modes:
            e = step_increments(norms, self.k_max, mode=mode,
                                normaliser=self.normaliser,
                                gradient_bound=self.gradient_bound)
            self.radius[mode] = ball_step(self.radius[mode], self.rho[mode][:, None],
                                          self.learning_rate, e)

    def finish(self):
        """Fitted attributes: radii and contraction factors of this segment."""
        squeeze = self.n_outputs == 1
        radii = {m: (r[:, 0] if squeeze else r).copy() for m, r in self.radius.items()}
        return {"certified_radii_": radii,
                "contraction_factor_": {m: r.copy() for m, r in self.rho.items()},
                "_certified_segment": self.segment}


class ClearingTracker:
    """Drops data-dependent radii of an earlier segment (never carried over)."""

    def __init__(self, segment):
        self.segment = int(segment)

    def step(self, t, W, b, G, Gb):
        """Nothing to record."""

    def finish(self):
        """Empty radii: the current segment has no data-dependent bookkeeping."""
        return {"certified_radii_": {}, "contraction_factor_": {},
                "_certified_segment": self.segment}


def check_step_size(*, learning_rate, lam):
    """Refuse a plan whose regulariser does not shrink (P3: ``0 < eta lam < 1``)."""
    if not (lam > 0 and 0 < learning_rate * lam < 1 and math.isfinite(lam)):
        raise NotCertifiableError(
            f"Prediction certificates need lambda > 0 and 0 < learning_rate * lambda "
            f"< 1 (got lambda={lam!r}, learning_rate={learning_rate!r}): the "
            "regulariser must shrink every coordinate, intercept included.")
