# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy of full-batch noisy gradient descent: constants and bounds.

Design
------
One Noisy-GD step on segment ``j`` (fit is segment 0, each ``partial_unlearn`` a
later one) is::

    theta <- theta - eta * (lam * theta + gbar_j(theta)) + N(0, 2 eta sigma^2 I)
    gbar_j(theta) = (1/N) * sum_{i in D_j} clip_L(grad loss_i(theta))

with a public normaliser ``N`` frozen at fit. For a generalised linear model the
clipped gradient is the gradient of a convex, ``beta``-smooth, ``G``-Lipschitz
surrogate (privacy-accounting.md, Lemma 2.1), so the noiseless step is a
``c``-contraction (Lemma 3.1) and two runs whose data differ in one privacy unit
drift apart by at most ``b = eta * S / N`` per step. The shifted Rényi divergence
argument (privacy amplification by iteration; Feldman, Mironov, Talwar, Thakurta
2018, Lemma 20 and Theorem 22; with contraction as in Balle, Barthe, Gaboardi,
Geumlek 2019 and Altschuler and Talwar 2022) then bounds the Rényi divergence of
the two final models by ``q * rho`` at every order (Section 5, eq. 5.1). With
constant ``b``, noise variance ``s^2 = 2 eta sigma^2`` and ``c``:

* ``rho_inf = b^2 (1 + c) / (2 s^2 (1 - c))`` (eq. 5.2), the stationary level;
* ``rho_dp(T) = rho_inf (1 - c^T) / (1 + c^T)`` while the unit is present (5.3);
* ``rho_del(K) = rho_inf c^(2K)`` K steps after it left (5.5).

The bounds are attained by a linear loss (Section 5.4), so no better worst-case
statement exists for this algorithm at the same public constants. Every quantity
below is a function of public numbers only: nothing derived from the rows may
enter a reported guarantee.
"""

import math

import numpy as np

from skforget.accounting._checks import (
    check_choice,
    check_contraction,
    check_int,
    check_nonnegative,
    check_positive,
)

#: Curvature bound ``beta_phi = sup phi''`` of each loss as a function of the
#: margin (privacy-accounting.md, Section 1; Böhning 1992 for the softmax).
LOSS_CURVATURE = {"logistic": 0.25, "squared": 1.0, "multinomial": 0.5, "ovr": 0.25}
RELATIONS = ("replace", "zero_out")


# --------------------------------------------------------------------------
# Sensitivity, smoothness, step size, contraction (Sections 2-4)
# --------------------------------------------------------------------------


#: Relative distance below the softmax's natural bound ``sqrt(2) R`` within
#: which a ``clip_norm`` means the plain softmax (a value computed as
#: ``sqrt(2) R`` by other arithmetic must not switch on the clipped loss).
SOFTMAX_CUTOVER = 1e-12


def gradient_bound(*, loss, row_norm, clip_norm=None, n_classes=2):
    """Per-record bound ``G`` on the norm of a clipped gradient.

    privacy-accounting.md, Sections 4.2-4.3 (Lemma 2.1 (iv)):

    * ``"logistic"`` (binary): ``min(L, R)``; clipping is inactive when ``L >= R``
      because ``|sigmoid(z) - y| < 1``. ``clip_norm=None`` means ``G = R``.
    * ``"squared"``: ``L``; the residual is unbounded, so clipping is required.
    * ``"multinomial"`` (softmax, joint parameter): ``sqrt(2) R`` because
      ``||p - e_y|| <= sqrt(2)``; with ``clip_norm`` ``L`` below it (by more
      than ``SOFTMAX_CUTOVER`` relative), ``L``: the
      record's loss is then the clipped softmax of Lemma 4.5 (Section 4.5), a
      convex, equally smooth surrogate whose gradient has norm at most ``L``.
    * ``"ovr"`` (``C`` binary logistic models trained jointly, each clipped at
      ``L``): ``sqrt(C) min(L, R)`` for the joint parameter (Section 4.3).

    Parameters
    ----------
    loss : {"logistic", "squared", "multinomial", "ovr"}
    row_norm : float
        Public bound ``R`` on the norm of an augmented row ``[x, s_b]``.
    clip_norm : float or None
        Per-record clipping threshold ``L``.
    n_classes : int, default=2
        Number of classes ``C`` (one-vs-rest only).

    Returns
    -------
    G : float

    Examples
    --------
    >>> from skforget.accounting import gradient_bound
    >>> gradient_bound(loss="logistic", row_norm=2 ** 0.5, clip_norm=1.0)
    1.0
    """
    check_choice(loss, "loss", LOSS_CURVATURE)
    R = check_positive(row_norm, "row_norm")
    L = None if clip_norm is None else check_positive(clip_norm, "clip_norm")
    if loss == "logistic":
        return R if L is None else min(L, R)
    if loss == "ovr":
        C = check_int(n_classes, "n_classes", low=2)
        return math.sqrt(C) * (R if L is None else min(L, R))
    if loss == "squared":
        if L is None:
            raise ValueError("clip_norm is required for the squared loss: its "
                             "gradient is unbounded without clipping.")
        return L
    natural = math.sqrt(2.0) * R
    # Within SOFTMAX_CUTOVER of the natural bound the kernel runs the plain
    # softmax (make_design), whose gradients reach sqrt(2) R itself: G must too.
    return natural if L is None or L >= natural * (1.0 - SOFTMAX_CUTOVER) else L


def sensitivity(*, gradient_bound, relation="replace", group_size=1):
    """Sensitivity ``S`` of the clipped gradient sum for one privacy unit.

    privacy-accounting.md, Section 4.1: replacing a unit of ``g`` records by
    arbitrary valid records moves the sum by at most ``S = 2 g G``
    (``"replace"``, the source paper's bounded relation); replacing it by null
    records (zero gradient, still counted in the normaliser; Kairouz et al. 2021)
    by at most ``S = g G`` (``"zero_out"``). Every bound is proportional to
    ``S**2``, so a group of ``g`` records costs ``g**2`` times one record.

    Parameters
    ----------
    gradient_bound : float
        Per-record bound ``G`` on a clipped gradient (:func:`gradient_bound`).
    relation : {"replace", "zero_out"}, default="replace"
        Neighbouring relation: a unit replaced by arbitrary records, or by null
        ones.
    group_size : int, default=1
        Records per privacy unit ``g``.

    Returns
    -------
    S : float

    Examples
    --------
    >>> from skforget.accounting import sensitivity
    >>> sensitivity(gradient_bound=1.0, relation="replace", group_size=5)
    10.0
    """
    G = check_positive(gradient_bound, "gradient_bound")
    check_choice(relation, "relation", RELATIONS)
    g = check_int(group_size, "group_size", low=1)
    return (2.0 if relation == "replace" else 1.0) * g * G


def smoothness(*, loss, row_norm):
    """Smoothness ``beta = beta_phi R^2`` of each per-record surrogate loss.

    privacy-accounting.md, Lemma 2.1 (ii): the clipped GLM loss is
    ``beta_phi ||x||^2``-smooth with ``beta_phi = 1/4`` (logistic, and each
    block of one-vs-rest), ``1`` (squared), ``1/2`` (softmax, Böhning 1992).

    Parameters
    ----------
    loss : {"logistic", "squared", "multinomial", "ovr"}
    row_norm : float
        Public bound ``R`` on the norm of an augmented row.

    Returns
    -------
    beta : float

    Examples
    --------
    >>> from skforget.accounting import smoothness
    >>> smoothness(loss="logistic", row_norm=2 ** 0.5)
    0.5000000000000001
    """
    check_choice(loss, "loss", LOSS_CURVATURE)
    R = check_positive(row_norm, "row_norm")
    return LOSS_CURVATURE[loss] * R * R


def max_learning_rate(*, lam, beta):
    """Largest accepted step size ``2 / (2 lam + beta)``.

    privacy-accounting.md, Lemma 3.1 and Section 3: for ``eta`` up to this value the
    noiseless step contracts at exactly ``c = 1 - eta lam``, which is what every
    formula of the accountant assumes.

    Parameters
    ----------
    lam, beta : float
        The regularisation strength ``lambda``; the loss's smoothness ``beta``
        (:func:`smoothness`).

    Returns
    -------
    learning_rate : float
    """
    lam = check_positive(lam, "lam")
    beta = check_nonnegative(beta, "beta")
    return 2.0 / (2.0 * lam + beta)


def default_learning_rate(*, lam, beta):
    """Default step size ``1 / (lam + beta)`` (privacy-accounting.md, Section 3).

    It gives ``c = 1 - 1/kappa``, satisfies the utility lemma's ``eta <= 1/M`` and
    keeps ``c_j = 1 - eta lam`` for every segment with ``n_j <= 2N``.

    Parameters
    ----------
    lam, beta : float
        The regularisation strength ``lambda``; the loss's smoothness ``beta``
        (:func:`smoothness`).

    Returns
    -------
    learning_rate : float

    Examples
    --------
    >>> from skforget.accounting import default_learning_rate
    >>> default_learning_rate(lam=0.01, beta=0.5)
    1.9607843137254901
    """
    lam = check_positive(lam, "lam")
    beta = check_nonnegative(beta, "beta")
    return 1.0 / (lam + beta)


def check_learning_rate(*, learning_rate, lam, beta, name="learning_rate"):
    """Validate a step size: ``0 < eta <= 2 / (2 lam + beta)`` (Section 3).

    Raises a ValueError, naming ``name``, for a step size above the bound.

    Parameters
    ----------
    learning_rate, lam, beta : float
        The step size ``eta``; the regularisation strength ``lambda``; the loss's
        smoothness ``beta`` (:func:`smoothness`).
    name : str, default="learning_rate"
        Name the error message gives the step size.

    Returns
    -------
    learning_rate : float
    """
    eta_max = max_learning_rate(lam=lam, beta=beta)
    eta = check_positive(learning_rate, name)
    if eta > eta_max * (1.0 + 1e-12):
        raise ValueError(
            f"{name}={eta!r} is above 2 / (2 * lam + beta) = {eta_max!r}, the largest "
            "step for which noisy gradient descent contracts at rate 1 - eta * lam "
            "(privacy-accounting.md, Lemma 3.1). Leave it at None for 1/(lam+beta)."
        )
    return eta


def contraction(*, learning_rate, lam, beta, data_weight=1.0):
    """Lipschitz constant ``c`` of the noiseless step (Lemma 3.1).

    ``c = max(|1 - eta lam|, |1 - eta (lam + beta_j)|)`` with
    ``beta_j = beta * n_j / N`` (``data_weight = n_j / N`` under the fixed
    normaliser). It equals ``1 - eta lam`` iff ``eta <= 2/(2 lam + beta_j)``.

    Parameters
    ----------
    learning_rate, lam, beta : float
        The step size ``eta``; the regularisation strength ``lambda``; the loss's
        smoothness ``beta`` (:func:`smoothness`).
    data_weight : float, default=1.0
        Largest batch over the batch normaliser (1 when a batch holds ``N / E``
        rows; larger after insertions).

    Returns
    -------
    c : float

    Examples
    --------
    >>> from skforget.accounting import contraction
    >>> contraction(learning_rate=1 / 0.51, lam=0.01, beta=0.5)
    0.9803921568627451
    """
    eta = check_positive(learning_rate, "learning_rate")
    lam = check_positive(lam, "lam")
    beta = check_nonnegative(beta, "beta")
    w = check_nonnegative(data_weight, "data_weight")
    return max(abs(1.0 - eta * lam), abs(1.0 - eta * (lam + beta * w)))


def _log_inv(c):
    """``ln(1/c)`` for a contraction factor in (0, 1).

    Callers pass the rounded ``c = 1 - eta lam``; the relative error of this
    logarithm is then about ``1e-16 / (eta lam)``, negligible for any accepted
    plan, and step counts are re-checked against the bounds they serve.
    """
    return -math.log(c)


# --------------------------------------------------------------------------
# The core bound and its closed forms (Section 5)
# --------------------------------------------------------------------------


def rho_inf(*, sensitivity, normaliser, learning_rate, sigma, contraction):
    """Stationary rho-coefficient ``rho_inf`` (privacy-accounting.md, eq. 5.2).

    ``rho_inf = b^2 (1 + c) / (2 s^2 (1 - c))`` with drift ``b = eta S / N`` and
    per-step noise variance ``s^2 = 2 eta sigma^2``: the limit of (5.1) for a unit
    present in infinitely many steps. With ``c = 1 - eta lam`` it equals
    ``S^2 (2 - eta lam) / (4 lam sigma^2 N^2)``.

    Parameters
    ----------
    sensitivity, normaliser, learning_rate, sigma, contraction : float
        The sensitivity ``S`` (:func:`sensitivity`); the normaliser ``N`` of the
        gradient sum; the step size ``eta``; the noise scale ``sigma`` (a step adds
        ``N(0, 2 eta sigma^2 I)``); the contraction ``c`` of a step
        (:func:`contraction`).

    Returns
    -------
    rho_inf : float

    Examples
    --------
    >>> from skforget.accounting import rho_inf
    >>> round(rho_inf(sensitivity=2, normaliser=10000, learning_rate=1 / 0.51,
    ...               sigma=0.004450159723945581, contraction=1 - 0.01 / 0.51), 12)
    0.1
    """
    S = check_positive(sensitivity, "sensitivity")
    N = check_positive(normaliser, "normaliser")
    eta = check_positive(learning_rate, "learning_rate")
    sigma = check_positive(sigma, "sigma")
    c = check_contraction(contraction)
    b = eta * S / N
    s2 = 2.0 * eta * sigma * sigma
    return b * b * (1.0 + c) / (2.0 * s2 * (1.0 - c))


def rho_dp(*, rho_inf, contraction, steps):
    """DP of a unit present in all ``steps`` steps (privacy-accounting.md, eq. 5.3).

    ``rho_dp(T) = rho_inf (1 - c^T) / (1 + c^T)``, increasing in ``T`` towards
    ``rho_inf``: the model can be trained and unlearned any number of times without
    re-spending the DP budget (privacy-accounting.md, Section 6.1, from (5.1)).

    Parameters
    ----------
    rho_inf, contraction : float
        The stationary level ``rho_inf`` (:func:`rho_inf`); the contraction ``c`` of
        a step (:func:`contraction`).
    steps : int
        Steps ``T`` run with the unit present.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import rho_dp
    >>> round(10 * rho_dp(rho_inf=0.1, contraction=1 - 0.01 / 0.51, steps=591), 12)
    0.999983468019
    """
    r = check_nonnegative(rho_inf, "rho_inf")
    c = check_contraction(contraction)
    T = check_int(steps, "steps")
    cT = c**T
    return r * (1.0 - cT) / (1.0 + cT)


def rho_joint(*, rho_inf, contraction, steps_present, steps_absent):
    """Unit present for ``T0`` steps, then absent for ``K`` (eq. 5.4).

    ``rho = rho_inf c^(2K) (1 - c^T0)^2 / (1 - c^(2(T0 + K)))``.

    Parameters
    ----------
    rho_inf, contraction : float
        The stationary level ``rho_inf`` (:func:`rho_inf`); the contraction ``c`` of
        a step (:func:`contraction`).
    steps_present : int
        Steps ``T0`` with the unit present.
    steps_absent : int
        Steps ``K`` after it left.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import rho_joint
    >>> rho_joint(rho_inf=1.0, contraction=0.5, steps_present=1, steps_absent=0)
    0.3333333333333333
    """
    r = check_nonnegative(rho_inf, "rho_inf")
    c = check_contraction(contraction)
    T0 = check_int(steps_present, "steps_present")
    K = check_int(steps_absent, "steps_absent")
    if T0 == 0:
        return 0.0
    return r * c ** (2 * K) * (1.0 - c**T0) ** 2 / (1.0 - c ** (2 * (T0 + K)))


def rho_deletion(*, rho_inf, contraction, steps):
    """Deletion guarantee ``K`` steps after a unit left (eq. 5.5, Theorem 6.2).

    ``rho_del(K) = sup_T0 rho_joint(T0, K) = rho_inf c^(2K)``: the model released
    after the edit is Rényi-indistinguishable, at every order, from the same
    pipeline run on a database that never held the unit (CS23 Def. 4.1), whatever
    the unit's history before. Later releases never do worse (chain rule: after
    the edit both runs apply the same Markov kernels), which is where statelessness
    matters.

    Parameters
    ----------
    rho_inf, contraction : float
        The stationary level ``rho_inf`` (:func:`rho_inf`); the contraction ``c`` of
        a step (:func:`contraction`).
    steps : int
        Steps ``K`` run since the unit left.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import rho_deletion
    >>> round(10 * rho_deletion(rho_inf=0.1, contraction=1 - 0.01 / 0.51, steps=59), 12)
    0.096645076038
    """
    r = check_nonnegative(rho_inf, "rho_inf")
    c = check_contraction(contraction)
    K = check_int(steps, "steps")
    return r * c ** (2 * K)


def rho_two_phase(*, rho_inf, contraction, steps):
    """Looser deletion bound by coupling then absorbing the shift (Section 5.2).

    ``rho_inf c^(2K) / (1 - c^(2K))``; kept as a reference point only (undefined at
    ``K = 0``). Use :func:`rho_deletion`.

    Parameters
    ----------
    rho_inf, contraction : float
        The stationary level ``rho_inf`` (:func:`rho_inf`); the contraction ``c`` of
        a step (:func:`contraction`).
    steps : int
        Steps ``K`` since the unit left (at least 1).

    Returns
    -------
    rho : float
    """
    r = check_nonnegative(rho_inf, "rho_inf")
    c = check_contraction(contraction)
    K = check_int(steps, "steps", low=1)
    return r * c ** (2 * K) / (1.0 - c ** (2 * K))


def coupling_distance(*, drifts, contractions):
    """Distance of two runs driven by the same noise (Section 5.2, coupling).

    With the same start and the same noise vectors, two runs whose step maps
    are ``c_k``-Lipschitz and differ by at most ``b_k`` (one unit replaced) stay
    within ``||theta_T - theta'_T|| <= sum_k w_k b_k``, ``w_k = prod_{j>k} c_j``:
    the deterministic W-infinity coupling that the shifted-Rényi argument
    starts from (Lemma 3.1 and the drift bound of Section 4). For constant
    ``b`` and ``c`` it is ``b (1 - c^T) / (1 - c) <= S / (N lam)``. Tests use it
    to check, row by row and input by input, that no record moves a run further
    than the accountant assumes.

    Parameters
    ----------
    drifts : array-like of shape (T,)
        ``b_k = eta_k S_k / N_k`` for the steps in which the unit differs, 0
        elsewhere.
    contractions : array-like of shape (T,)
        ``c_k`` of each step.

    Returns
    -------
    distance : float

    Examples
    --------
    >>> from skforget.accounting import coupling_distance
    >>> coupling_distance(drifts=[1.0, 1.0, 1.0], contractions=[0.5, 0.5, 0.5])
    1.75
    """
    b = np.asarray(drifts, dtype=np.float64)
    c = np.asarray(contractions, dtype=np.float64)
    if b.ndim != 1 or b.shape != c.shape:
        raise ValueError("drifts and contractions must be 1-D of the same length.")
    if np.any(b < 0) or not np.all(np.isfinite(b)):
        raise ValueError("drifts must be finite and nonnegative.")
    if np.any(c < 0) or np.any(c > 1):
        raise ValueError("contractions must lie in [0, 1].")
    total = 0.0
    for k in range(len(b)):
        total = c[k] * total + b[k]
    return float(total)


def rho_compose(*, rhos):
    """Rényi composition: ``sum(rhos)`` (Mironov 2017, Proposition 1).

    Releasing several mechanisms' outputs about the same record, each possibly
    chosen after seeing the previous ones, satisfies the sum of their
    rho-coefficients at every order: e.g. the fits of a hyper-parameter search
    that all used the record, or the releases an adaptive requester saw.

    Parameters
    ----------
    rhos : iterable of float
        Rho-coefficients of the mechanisms composed.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import rho_compose
    >>> rho_compose(rhos=[0.01, 0.02, 0.03])
    0.06
    """
    total = 0.0
    for i, value in enumerate(rhos):
        total += check_nonnegative(value, f"rhos[{i}]")
    return total


def rho_adaptive(*, rho_deletion, rho_releases):
    """Deletion under an ``s``-adaptive requester (privacy-accounting.md, Thm 6.3).

    ``rho = rho_del + sum_t rho_dp(T_t)`` over the ``s`` releases the requester saw
    before the edit (CS23 Theorem 4.3 with Rényi composition at a fixed order,
    :func:`rho_compose`); no change of order is needed.

    Parameters
    ----------
    rho_deletion : float
        Deletion figure of the edit (:func:`rho_deletion`).
    rho_releases : sequence of float
        Figures of the releases the requester saw before the edit, at the deletion
        sensitivity.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import rho_adaptive
    >>> rho = rho_adaptive(rho_deletion=0.00966450760378235, rho_releases=[0.1] * 3)
    >>> round(rho, 12)
    0.309664507604
    """
    r = check_nonnegative(rho_deletion, "rho_deletion")
    return r + rho_compose(rhos=rho_releases)


def group_factor(*, group_size):
    """Factor ``g^2`` by which every rho grows for a group of ``g`` records.

    All bounds are proportional to ``S^2`` and ``S`` is linear in the number of
    records that change (Section 4.1, 6.2 "per record vs per batch").

    Parameters
    ----------
    group_size : int
        Records per privacy unit ``g``.

    Returns
    -------
    factor : float
    """
    g = check_int(group_size, "group_size", low=1)
    return float(g * g)


def rho_step_sequence(*, drifts, noise_variances, contractions):
    """General bound (5.1) on an explicit sequence of steps.

    For steps ``k = 1..T`` with drift bounds ``b_k``, noise variances ``s_k^2`` and
    contraction factors ``c_k``, with ``w_k = prod_{j > k} c_j``::

        rho = (1/2) (sum_k w_k b_k)^2 / (sum_k w_k^2 s_k^2)

    valid when the induced shifts ``z_k = c_k z_{k-1} + b_k - a_k`` stay
    non-negative, ``a_k = w_k s_k^2 (sum w b) / (sum w^2 s^2)`` (Feldman et al.
    2018, Theorem 22, with the optimal shift schedule; privacy-accounting.md
    Section 5.1).

    Parameters
    ----------
    drifts : sequence of float
        Drift bounds ``b_k``.
    noise_variances : sequence of float
        Noise variances ``s_k^2``.
    contractions : sequence of float
        Contraction factors ``c_k``.

    Returns
    -------
    rho : float
    feasible : bool
        ``False`` when a shift turns negative; the caller must then use the
        uniformised bound of Section 5.3 instead.
    """
    b = np.asarray(drifts, dtype=float)
    s2 = np.asarray(noise_variances, dtype=float)
    c = np.asarray(contractions, dtype=float)
    if not (b.ndim == s2.ndim == c.ndim == 1 and len(b) == len(s2) == len(c)):
        raise ValueError("drifts, noise_variances and contractions must be 1-D "
                         "sequences of the same length.")
    if len(b) == 0:
        return 0.0, True
    if np.any(b < 0) or not np.all(np.isfinite(b)):
        raise ValueError("drifts must be finite and >= 0.")
    if np.any(s2 <= 0) or not np.all(np.isfinite(s2)):
        raise ValueError("noise_variances must be finite and > 0.")
    if np.any(c < 0) or np.any(c >= 1):
        raise ValueError("contractions must lie in [0, 1).")
    # w_k = prod_{j>k} c_j, computed from the end to avoid overflow of 1/c.
    w = np.ones_like(c)
    w[:-1] = np.cumprod(c[::-1])[::-1][1:]
    wb = float(np.sum(w * b))
    ws = float(np.sum(w * w * s2))
    rho = 0.5 * wb * wb / ws
    a = w * s2 * wb / ws
    z, feasible = 0.0, True
    scale = max(float(np.max(b)), 1e-300)
    for k in range(len(b)):
        z = c[k] * z + b[k] - a[k]
        if z < -1e-9 * scale:
            feasible = False
            break
    return rho, feasible
