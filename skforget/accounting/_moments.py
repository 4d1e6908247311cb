# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The default threshold of a binary model from its class score moments.

``LogisticRegression()`` decides for the error. A private model's trained
intercept is penalised and clipped, so its raw threshold gives one-class models
on rare-class tables, and the offset ``-logit p_hat`` (Section 18.3) decides
for the balanced error instead. The error-minimising threshold of a Gaussian
model of the scores with a shared variance (Fisher's rule, on the one
direction the model chose) needs the class counts, the class means of the
score and its pooled variance: the class counts and class sums of the rows
(18.11) and one more number, the sum of the squared scores along the released
direction, released jointly with Gaussian noise after the coefficients
(privacy-accounting.md, Section 18.12: Definition 18.15, Lemma 18.16,
Proposition 18.17, Theorem 18.18, eqs. 18.7-18.9, and the certificates'
interval bound). Pure functions of public numbers, except
:func:`noisy_class_moments`, which adds the noise to statistics it is given.
"""

import math

import numpy as np

from skforget.accounting._checks import check_int, check_nonnegative, check_positive
from skforget.accounting._prevalence import (
    COUNT_FLOOR,
    _binary_counts,
    noisy_class_statistics,
)


def unit_direction(coef):
    """``u = w / ||w||`` of a binary model's coefficients (``0`` for ``w = 0``):
    the direction whose squared scores Definition 18.15 sums."""
    w = np.asarray(coef, dtype=np.float64).ravel()
    top = float(np.max(np.abs(w))) if w.size else 0.0
    if top == 0.0:
        return np.zeros_like(w), 0.0
    # Scaled by the largest entry first: the norm of a tiny w would otherwise
    # be computed from subnormal squares, and u could exceed unit norm.
    v = w / top
    v_norm = float(np.linalg.norm(v))
    return v / v_norm, top * v_norm


def noisy_class_moments(counts, sums, square, *, noise_scale, data_norm, rng):
    """Release the class counts, class sums and pooled sum of squared scores
    with Gaussian noise (Definition 18.15): ``(n + Z_0, S + R Z_1, Q + R^2
    Z_2)``, ``Z ~ N(0, sigma^2 I)``, drawn in that order from one stream.

    Parameters
    ----------
    counts : array-like of shape (2,)
        Exact records per class of the current database.
    sums : array-like of shape (2, n_features)
        Exact sums of each class's mapped rows.
    square : float
        Exact sum over the rows of ``(u^T a(x) x)^2`` along the released
        unit direction ``u`` (:func:`unit_direction`).
    noise_scale : float
        ``sigma_m`` from :func:`~skforget.accounting.count_noise_scale` with
        ``statistics="class_moments"``.
    data_norm : float
        The public row bound ``R``.
    rng : numpy.random.Generator
        A noise stream used for nothing else (Section 10.3).

    Returns
    -------
    noisy_counts : ndarray of shape (2,)
    noisy_sums : ndarray of shape (2, n_features)
    noisy_square : float
    """
    R = check_positive(data_norm, "data_norm")
    noisy_counts, noisy_sums = noisy_class_statistics(
        counts, sums, noise_scale=noise_scale, data_norm=R, rng=rng)
    noisy_square = float(square) + R * R * float(rng.normal(0.0, noise_scale))
    return noisy_counts, noisy_sums, noisy_square


def _moments(noisy_counts, noisy_sums, u, floor):
    n = _binary_counts(noisy_counts, floor, "the class-moment threshold")
    P = np.asarray(noisy_sums, dtype=np.float64) @ u
    return n, P


def _score_model(noisy_counts, noisy_sums, noisy_square, coef, floor):
    """``(n, mu, v)`` of the Gaussian model of the scores (eq. 18.8): the
    floored counts, the class means along ``u`` and the pooled variance."""
    u, _ = unit_direction(coef)
    n, P = _moments(noisy_counts, noisy_sums, u, floor)
    v = max(0.0, float(noisy_square) - float(np.sum(P * P / n))) / float(n.sum())
    return n, P / n, v


def _threshold_from(mu0, mu1, v, log_ratio, R):
    """Eq. (18.7) clipped to ``[-R, R]`` (the caller handles ``mu1 <= mu0``)."""
    shift = v * log_ratio
    t = (mu0 + mu1) / 2.0
    if shift != 0.0:
        with np.errstate(over="ignore", divide="ignore"):
            t = t + shift / (mu1 - mu0)
    return float(min(max(t, -R), R))


def moment_threshold(noisy_counts, noisy_sums, noisy_square, coef, *, data_norm,
                     floor=COUNT_FLOOR):
    """Threshold ``tau`` on the score ``u^T a(x) x`` (Section 18.12, eqs.
    18.7 and 18.8): the error-minimising threshold of a Gaussian model of the
    scores with a shared variance, from the noisy class moments. A public
    function of released numbers; the released intercept is ``-||w|| tau``.

    With ``n_k = max(n~_k, m_0)``, ``P_k = u^T S~_k``, ``mu_k = P_k / n_k`` and
    ``v = max(0, Q~ - sum_k P_k^2 / n_k) / (n_0 + n_1)``: ``tau = (mu_0 +
    mu_1) / 2 + v log(n_0 / n_1) / (mu_1 - mu_0)`` clipped to ``[-R, R]`` when
    ``mu_1 > mu_0``; otherwise the more frequent class everywhere (``R`` if
    ``n_0 >= n_1``, else ``-R``).

    Parameters
    ----------
    noisy_counts : array-like of shape (2,)
    noisy_sums : array-like of shape (2, n_features)
    noisy_square : float
    coef : array-like of shape (n_features,)
        The released coefficients ``w`` (their direction ``u``).
    data_norm : float
    floor : float, default=1.0

    Returns
    -------
    tau : float

    Examples
    --------
    >>> from skforget.accounting import moment_threshold
    >>> # class 0: scores -1/2 (90 rows), class 1: +1/2 (10 rows); v = 0
    >>> moment_threshold([90.0, 10.0], [[-45.0, 0.0], [5.0, 0.0]], 25.0,
    ...                  [1.0, 0.0], data_norm=1.0)
    0.0
    """
    R = check_positive(data_norm, "data_norm")
    return _model_threshold(*_score_model(noisy_counts, noisy_sums, noisy_square,
                                          coef, floor), R)


def _model_threshold(n, mu, v, R):
    """Eq. (18.7) of the score model ``(n, mu, v)``, clipped to ``[-R, R]``;
    the more frequent class everywhere when the means are not ordered."""
    if not mu[1] > mu[0]:
        return R if n[0] >= n[1] else -R
    return _threshold_from(mu[0], mu[1], v, math.log(n[0] / n[1]), R)


def moment_predicted_share(noisy_counts, noisy_sums, noisy_square, coef, *,
                           data_norm, floor=COUNT_FLOOR):
    """Share of the rows that :func:`moment_threshold`'s Gaussian model of
    the scores puts on each side of its threshold (Section 18.6, Proposition
    18.8's estimate on the data): a public function of released numbers, so
    it costs no privacy.

    With ``n_k``, ``mu_k`` and ``v`` as in :func:`moment_threshold` and
    ``pi_k = n_k / (n_0 + n_1)``, the share of rows predicted class 1 is
    ``sum_k pi_k P(X_k > tau)``, ``X_k ~ N(mu_k, v)`` truncated to ``[-R,
    R]`` where the rows' scores lie (a step at ``mu_k`` when ``v = 0``); at
    the fallback to the more frequent class, or a threshold clipped to ``+-R``,
    it is 0 or 1. It describes the model of the scores, not the rows: a
    skewed score's tail can hold more or fewer rows than the Gaussian's.

    Parameters
    ----------
    noisy_counts : array-like of shape (2,)
    noisy_sums : array-like of shape (2, n_features)
    noisy_square : float
    coef : array-like of shape (n_features,)
    data_norm : float
    floor : float, default=1.0

    Returns
    -------
    shares : ndarray of shape (2,)
        Estimated shares of the rows predicted class 0 and class 1.

    Examples
    --------
    >>> from skforget.accounting import moment_predicted_share
    >>> # class 0: scores -1/2 (90 rows), class 1: +1/2 (10 rows); v = 0
    >>> moment_predicted_share([90.0, 10.0], [[-45.0, 0.0], [5.0, 0.0]], 25.0,
    ...                        [1.0, 0.0], data_norm=1.0)
    array([0.9, 0.1])
    """
    R = check_positive(data_norm, "data_norm")
    n, mu, v = _score_model(noisy_counts, noisy_sums, noisy_square, coef, floor)
    tau = _model_threshold(n, mu, v, R)
    if abs(tau) >= R:
        # The fallback, or a threshold clipped to the ball's edge: every row
        # (``|u^T x| <= R``) is on one side (a second reader: the Gaussian's
        # tail beyond R read as 8 % of the rows).
        one = 0.0 if tau >= R else 1.0
    else:
        one = float(np.dot(n / n.sum(), [_share_above(tau, m, v, R) for m in mu]))
    return np.array([1.0 - one, one])


def _share_above(tau, mean, var, R):
    """``P(X > tau)`` for ``X ~ N(mean, var)`` truncated to ``[-R, R]``, where
    the scores of rows in the ball lie; a point mass at ``mean`` clipped to
    the interval when ``var = 0`` or when the interval holds no mass."""
    sd = math.sqrt(var)
    if sd > 0:
        def cdf(t):
            return 0.5 * math.erfc(-(t - mean) / (sd * math.sqrt(2.0)))
        inside = cdf(R) - cdf(-R)
        if inside > 0.0:
            return min(1.0, max(0.0, (cdf(R) - cdf(tau)) / inside))
    return float(min(max(mean, -R), R) > tau)


def _corners(f, a, b):
    """Range of a map monotone in each argument over the box ``a x b``."""
    vals = [f(x, y) for x in a for y in b]
    return min(vals), max(vals)


def direction_change_bound(coef_norm, radius):
    """Largest ``||u' - u||`` between the unit directions of ``w`` and of any
    ``w'`` with ``||w' - w|| <= r`` (certificates.md 9.12): the chord of the
    largest angle, ``sin theta = r / ||w||``, i.e. ``sqrt(2 - 2 sqrt(1 - (r /
    ||w||)^2))``; ``2`` when ``r >= ||w||`` (``w'`` may point anywhere)."""
    w_norm = check_nonnegative(coef_norm, "coef_norm")
    r = check_nonnegative(radius, "radius")
    if r >= w_norm:
        return 2.0
    ratio = r / w_norm
    # 2 - 2 sqrt(1 - t^2) written without cancellation: 2 t^2 / (1 + sqrt(1 - t^2)).
    return math.sqrt(2.0 * ratio * ratio / (1.0 + math.sqrt(1.0 - ratio * ratio)))


def counterfactual_moments(noisy_counts, noisy_sums, noisy_square, coef, k, *,
                           radius, n_records, data_norm, floor=COUNT_FLOOR):
    """Intervals holding the counterfactual run's floored counts, projected
    class sums and square (certificates.md 9.12): the same noise, a database
    that differs in up to ``k`` records, coefficients within ``radius``.

    Returns
    -------
    (n_lo, n_hi), (P_lo, P_hi), (Q_lo, Q_hi) : pairs of ndarray of shape (2,)
        (floats for ``Q``)
    """
    R = check_positive(data_norm, "data_norm")
    k = check_int(k, "k")
    n_rec = check_nonnegative(n_records, "n_records")
    u, w_norm = unit_direction(coef)
    r = check_nonnegative(radius, "radius")
    e_u = direction_change_bound(w_norm, r) if w_norm > 0 else 2.0
    # The sine of the largest angle between w and a point of B(w, r).
    s_u = min(1.0, r / w_norm) if w_norm > 0 else 1.0
    raw = np.asarray(noisy_counts, dtype=np.float64)
    _binary_counts(raw, floor, "the class-moment threshold")
    sums = np.asarray(noisy_sums, dtype=np.float64)
    P = sums @ u
    # (u' - u)^T S~ + u'^T a, ||a|| <= 2kR: a record in one database only
    # moves its class sum by R, a replaced one by 2R (18.11).
    e = e_u * np.linalg.norm(sums, axis=1) + 2.0 * k * R
    # A record in both moves its square by at most R^2 sin(angle) <= R^2 s_u;
    # the records in one database only by at most k R^2 in total (removed rows
    # lower it, added rows raise it, at most k of each).
    e_q = s_u * R * R * n_rec + k * R * R
    q = float(noisy_square)
    return ((np.maximum(raw - k, floor), np.maximum(raw + k, floor)),
            (P - e, P + e), (q - e_q, q + e_q))


def threshold_change_bound(noisy_counts, noisy_sums, noisy_square, coef, k, *,
                           radius, n_records, data_norm, floor=COUNT_FLOOR):
    """Largest move ``delta_tau(k, r)`` of :func:`moment_threshold` between
    this run and the same run (same noise) on a database that differs in up
    to ``k`` records, whose coefficients lie within ``radius`` of ``coef``
    (certificates.md, 9.12; privacy-accounting.md, 18.12).

    The counterfactual direction moves by ``e_u``
    (:func:`direction_change_bound`); each noisy count by ``k`` (floored),
    each projected sum by ``e_u ||S_k|| + 2 k R``, the square by ``min(1, r
    / ||w||) R^2 n + k R^2`` (:func:`counterfactual_moments`). Interval
    arithmetic over those boxes (every map involved is monotone in each
    argument on them, or has its least value at 0) bounds
    the counterfactual's threshold; when its class means may not be ordered,
    or the clip and fallback may apply, the whole ``[-R, R]``. At most ``2 R``.

    Parameters
    ----------
    noisy_counts : array-like of shape (2,)
    noisy_sums : array-like of shape (2, n_features)
    noisy_square : float
    coef : array-like of shape (n_features,)
    k : int
    radius : float
        Bound on ``||w' - w||`` (the certificate's radius; 0 for a model
        whose coefficients the edit does not move).
    n_records : int
        Number of records of the current database (public), a bound on the
        records both databases hold.
    data_norm : float
    floor : float, default=1.0

    Returns
    -------
    bound : float
    """
    R = check_positive(data_norm, "data_norm")
    tau = moment_threshold(noisy_counts, noisy_sums, noisy_square, coef,
                           data_norm=R, floor=floor)
    (n_lo, n_hi), (P_lo, P_hi), (Q_lo, Q_hi) = counterfactual_moments(
        noisy_counts, noisy_sums, noisy_square, coef, k, radius=radius,
        n_records=n_records, data_norm=R, floor=floor)
    mu = [_corners(lambda p, m: p / m, (P_lo[j], P_hi[j]), (n_lo[j], n_hi[j]))
          for j in (0, 1)]
    gap_lo, gap_hi = mu[1][0] - mu[0][1], mu[1][1] - mu[0][0]
    whole = max(R - tau, tau + R)
    if not gap_lo > 0:
        return whole
    # sum_k P_k^2 / n_k: P^2 is least at 0 when its interval holds 0.
    sq_lo = np.where((P_lo <= 0) & (P_hi >= 0), 0.0,
                     np.minimum(P_lo * P_lo, P_hi * P_hi))
    sq_hi = np.maximum(P_lo * P_lo, P_hi * P_hi)
    num_lo = max(0.0, Q_lo - float(np.sum(sq_hi / n_lo)))
    num_hi = max(0.0, Q_hi - float(np.sum(sq_lo / n_hi)))
    v_lo, v_hi = num_lo / float(n_hi.sum()), num_hi / float(n_lo.sum())
    kappa = (v_lo / gap_hi, v_hi / gap_lo)
    logs = (math.log(n_lo[0] / n_hi[1]), math.log(n_hi[0] / n_lo[1]))
    shifts = [a * b for a in kappa for b in logs]
    t_lo = (mu[0][0] + mu[1][0]) / 2.0 + min(shifts)
    t_hi = (mu[0][1] + mu[1][1]) / 2.0 + max(shifts)
    if not (math.isfinite(t_lo) and math.isfinite(t_hi)):
        return whole
    t_lo, t_hi = min(max(t_lo, -R), R), min(max(t_hi, -R), R)
    return float(max(t_hi - tau, tau - t_lo, 0.0))
