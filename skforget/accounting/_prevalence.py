# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private class prevalence: noisy class counts and the intercept offset.

A binary classifier trained by noisy gradient descent is shrunk towards zero
(strong regularisation, clipped gradients), so on a table with a rare class its
released intercept outweighs its coefficients and it predicts one class
everywhere, although its scores rank well. The counts of the two classes,
released with Gaussian noise and a small share of the same privacy budget,
give the offset ``-logit p_hat`` that turns its decisions into decisions for
the balanced error (privacy-accounting.md, Section 18: the count mechanism
18.1, its composition with noisy GD 18.2, the offset and why it is redrawn at
every edit that runs steps 18.3, and kept by one that does not, 12.12). Pure functions of public numbers, except
:func:`noisy_class_counts`, which adds the noise to counts it is given.
"""

import math
from dataclasses import dataclass

import numpy as np

from skforget.accounting._checks import check_int, check_nonnegative, check_positive
from skforget.accounting._conversions import epsilon_to_rho, rho_to_epsilon
from skforget.accounting._preprocessing import (
    gaussian_noise_for_rho,
    histogram_sensitivity,
)

#: Public floor ``m_0`` on a noisy count before it enters the offset (18.3): a
#: class whose noisy count falls below one record is read as one record.
COUNT_FLOOR = 1.0


@dataclass(frozen=True, slots=True)
class PrevalenceBudget:
    """One target ``(epsilon, delta)`` split between the counts and noisy GD.

    Attributes
    ----------
    rho : float
        The whole target as a rho-coefficient (Section 6.4).
    rho_counts : float
        The counts' share, ``share * rho`` (Proposition 18.2).
    rho_training : float
        What is left for noisy gradient descent, ``(1 - share) * rho``.
    epsilon_training : float
        ``rho_training`` converted at the same ``delta``: the target the
        noisy-GD planner calibrates to.
    noise_scale : float
        Standard deviation of the Gaussian noise on each count, in records:
        ``Delta_n / sqrt(2 rho_counts)`` (eq. 18.1).
    """

    rho: float
    rho_counts: float
    rho_training: float
    epsilon_training: float
    noise_scale: float


def count_sensitivity(*, relation, group_size=1):
    """L2 sensitivity ``Delta_n`` of the class-count vector (Lemma 18.1).

    Every record adds 1 to the count of its class. Replacing a unit of ``g``
    records moves up to ``g`` from one class to another (``sqrt(2) g``);
    zeroing it out removes up to ``g`` (``g``). Both are attained.

    Parameters
    ----------
    relation : {"replace", "zero_out"}
    group_size : int, default=1

    Returns
    -------
    sensitivity : float

    Examples
    --------
    >>> from skforget.accounting import count_sensitivity
    >>> round(count_sensitivity(relation="replace"), 6)
    1.414214
    """
    # The count vector is a histogram over the classes: one bin per record.
    return histogram_sensitivity(relation=relation, group_size=group_size)


def count_deletion_factor(*, relation, n_replaced, statistics="counts"):
    """``(Delta^del / Delta)^2``: the class statistics' rho at the deletion
    sensitivity over their DP rho (Section 18.1, "Deletion sensitivity";
    Lemmas 18.12 and 18.16).

    A deleted unit is compared with the null record in its slot, a replaced
    one with its replacement, whatever the relation. For the counts (``g``
    against ``sqrt(2) g``) and the class means (``sqrt(2)`` times both) the
    factor is ``1/2`` for a deletion under ``"replace"`` (against ``1/4`` for
    the gradient sum, :func:`deletion_factor`), ``1`` for a replacement under
    ``"replace"`` or a deletion under ``"zero_out"``, and ``2`` for a
    replacement under ``"zero_out"``. For the class moments of Section 18.12
    (``sqrt(3) g`` against ``sqrt(5) g``): ``3/5``, ``1``, ``1`` and ``5/3``.

    Parameters
    ----------
    relation : {"replace", "zero_out"}
    n_replaced : int
        Units the edit replaces (0: deletions only).
    statistics : {"counts", "class_means", "class_moments"}, default="counts"

    Returns
    -------
    factor : float
    """
    replaced = check_int(n_replaced, "n_replaced") > 0
    count_sensitivity(relation=relation)  # validates the relation
    if statistics == "class_moments":
        # Squared sensitivities 5 (replace) and 3 (zero_out) in units of g^2,
        # divided exactly (through sqrt they round off 1 under zero_out).
        class_moments_sensitivity(relation=relation)
        return (5.0 if replaced else 3.0) / (5.0 if relation == "replace" else 3.0)
    _check_statistics(statistics)
    dp_sq = 2.0 if relation == "replace" else 1.0
    return (2.0 if replaced else 1.0) / dp_sq


#: What a prevalence share can buy: the counts (18.1), the counts and class
#: sums of the class-mean midpoint (18.11), or those and the pooled squared
#: score of the error threshold (18.12).
STATISTICS = ("counts", "class_means", "class_moments")


def _check_statistics(statistics):
    if statistics not in STATISTICS:
        raise ValueError(f"statistics must be one of {STATISTICS}, got "
                         f"{statistics!r}.")
    return statistics


def class_statistics_noise_sensitivity(*, statistics, relation, group_size=1):
    """The sensitivity of the release ``statistics`` names: Lemma 18.1
    (counts), 18.12 (class means) or 18.16 (class moments)."""
    if _check_statistics(statistics) == "counts":
        return count_sensitivity(relation=relation, group_size=group_size)
    if statistics == "class_means":
        return class_statistics_sensitivity(relation=relation, group_size=group_size)
    return class_moments_sensitivity(relation=relation, group_size=group_size)


def prevalence_budget(*, epsilon, delta, share, relation="replace", group_size=1,
                      method="improved", statistics="counts"):
    """Split a target ``(epsilon, delta)`` between the class counts and noisy GD.

    Theorem 18.3 (Rényi composition, order by order; Mironov 2017, Prop. 1):
    a count release with rho-coefficient ``rho_n`` followed by noisy GD planned
    for ``rho_gd`` (whose law does not depend on the counts) is a
    ``rho_n + rho_gd`` rho-coefficient, converted once (Section 6.4). Giving
    the counts ``share * rho`` of ``rho = epsilon_to_rho(epsilon, delta)``
    therefore keeps the whole release at the target, with no ``delta`` spent
    twice.

    Parameters
    ----------
    epsilon, delta : float
        The whole release's target.
    share : float
        Public share of ``rho`` spent on the counts, in ``(0, 1)``.
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1
    method : {"improved", "classic", "gaussian"}, default="improved"
        Conversion to ``(epsilon, delta)`` (Sections 6.4, 21).
    statistics : {"counts", "class_means", "class_moments"}, default="counts"
        What the share is spent on: the class counts of Section 18.1, the
        class counts and class sums of the rows of Section 18.11 (sensitivity
        ``sqrt(2)`` times the counts', Lemma 18.12), for the class-mean
        midpoint of ``class_weight="balanced"``, or those and the pooled sum
        of squared scores of Section 18.12 (Lemma 18.16), for the default
        error threshold.

    Returns
    -------
    budget : PrevalenceBudget

    Examples
    --------
    >>> from skforget.accounting import prevalence_budget
    >>> b = prevalence_budget(epsilon=1.0, delta=1e-5, share=0.05)
    >>> round(b.epsilon_training, 5), round(b.noise_scale, 2)
    (0.97248, 25.58)
    """
    share = float(share)
    if not 0.0 < share < 1.0:
        raise ValueError(f"share must lie strictly between 0 and 1, got {share!r}.")
    rho = epsilon_to_rho(epsilon=epsilon, delta=delta, method=method)
    rho_counts = share * rho
    rho_training = rho - rho_counts
    return PrevalenceBudget(
        rho=rho, rho_counts=rho_counts, rho_training=rho_training,
        epsilon_training=rho_to_epsilon(rho=rho_training, delta=delta, method=method),
        noise_scale=count_noise_scale(rho_counts=rho_counts, relation=relation,
                                      group_size=group_size, statistics=statistics))


def count_noise_scale(*, rho_counts, relation="replace", group_size=1,
                      statistics="counts"):
    """Noise ``sigma = Delta / sqrt(2 rho)`` of the class statistics' release.

    The Gaussian mechanism's Rényi curve is exactly ``q Delta^2 / (2
    sigma^2)`` (Propositions 18.2 and 18.13; Mironov 2017, Prop. 7), with
    ``Delta`` the counts' sensitivity (Lemma 18.1) or, for
    ``statistics="class_means"``, that of the counts and class sums
    (:func:`class_statistics_sensitivity`, Lemma 18.12) or, for
    ``statistics="class_moments"``, that of the class moments
    (:func:`class_moments_sensitivity`, Lemma 18.16).

    Parameters
    ----------
    rho_counts : float
        Target rho-coefficient of the release, positive.
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1
    statistics : {"counts", "class_means", "class_moments"}, default="counts"

    Returns
    -------
    sigma : float
        In records (counts) and in units of ``data_norm`` (sums).
    """
    rho_counts = check_positive(rho_counts, "rho_counts")
    delta = class_statistics_noise_sensitivity(
        statistics=statistics, relation=relation, group_size=group_size)
    return gaussian_noise_for_rho(rho=rho_counts, sensitivity=delta)


def class_statistics_sensitivity(*, relation, group_size=1):
    """L2 sensitivity ``Delta_c`` of the class counts and class sums (Lemma 18.12).

    A record adds ``(1, a(x) x / R)`` to its class's block (``||a(x) x|| <=
    R``, the public row map). Replacing a unit of ``g`` records moves the
    statistics by at most ``2 g`` (``sqrt(2)`` times the counts' ``Delta_n``);
    zeroing it out by at most ``sqrt(2) g``. Both are attained. The deletion
    sensitivities are ``sqrt(2)`` times the counts' too, so
    :func:`count_deletion_factor` applies unchanged.

    Parameters
    ----------
    relation : {"replace", "zero_out"}
    group_size : int, default=1

    Returns
    -------
    sensitivity : float

    Examples
    --------
    >>> from skforget.accounting import class_statistics_sensitivity
    >>> class_statistics_sensitivity(relation="replace")
    2.0
    """
    count_sensitivity(relation=relation, group_size=group_size)  # validates
    g = check_int(group_size, "group_size")
    return 2.0 * g if relation == "replace" else math.sqrt(2.0) * g


def class_moments_sensitivity(*, relation, group_size=1):
    """L2 sensitivity ``Delta_m`` of the class moments along any fixed unit
    direction (Lemma 18.16).

    A record adds ``(1, a(x) x / R)`` to its class's block and ``(u^T a(x)
    x)^2 / R^2 in [0, 1]`` to one pooled coordinate. Replacing a unit of ``g``
    records moves them by at most ``sqrt(5) g`` (the class block's ``2 g`` of
    Lemma 18.12 and ``g`` on the square); zeroing it out by at most ``sqrt(3)
    g``, for every direction with ``||u|| <= 1``. Both are attained when
    ``||u|| = 1`` and there are two features or more.

    Parameters
    ----------
    relation : {"replace", "zero_out"}
    group_size : int, default=1

    Returns
    -------
    sensitivity : float

    Examples
    --------
    >>> from skforget.accounting import class_moments_sensitivity
    >>> round(class_moments_sensitivity(relation="replace"), 6)
    2.236068
    """
    count_sensitivity(relation=relation, group_size=group_size)  # validates
    g = check_int(group_size, "group_size")
    return (math.sqrt(5.0) if relation == "replace" else math.sqrt(3.0)) * g


def rho_counts_adaptive(*, rho_counts, relation, n_replaced, releases_seen,
                        statistics="counts"):
    """The counts' part of the adaptive deletion figure (eq. 18.3).

    Against a requester that saw ``s`` earlier releases, each of which carried
    a fresh count release on a database that held the unit, the chain rule of
    Theorem 6.3 adds ``rho_n^del = factor * rho_n`` per release
    (:func:`count_deletion_factor`); the counts of the release after the edit
    add nothing (Theorem 18.4 (ii): fresh noise on the edited database, whose
    counts equal the reference database's).

    Parameters
    ----------
    rho_counts : float
        The counts' DP rho-coefficient per release.
    relation : {"replace", "zero_out"}
    n_replaced : int
    releases_seen : int
    statistics : {"counts", "class_means", "class_moments"}, default="counts"
        The kind of release (its deletion factor, :func:`count_deletion_factor`).

    Returns
    -------
    rho : float
    """
    rho_counts = check_nonnegative(rho_counts, "rho_counts")
    s = check_int(releases_seen, "releases_seen")
    return s * rho_counts * count_deletion_factor(
        relation=relation, n_replaced=n_replaced, statistics=statistics)


def noisy_class_counts(counts, *, noise_scale, rng):
    """Release ``counts + N(0, noise_scale^2 I)`` (Definition 18.1).

    Parameters
    ----------
    counts : array-like of shape (n_classes,)
        Exact class counts of the current database.
    noise_scale : float
        ``sigma_n`` from :func:`count_noise_scale`.
    rng : numpy.random.Generator
        A noise stream used for nothing else (Section 10.3).

    Returns
    -------
    noisy : ndarray of shape (n_classes,)
    """
    counts = np.asarray(counts, dtype=np.float64)
    return counts + rng.normal(0.0, check_positive(noise_scale, "noise_scale"),
                               size=counts.shape)


def _binary_counts(noisy_counts, floor, what="the prevalence offset"):
    """The two noisy counts floored at the public ``m_0`` (18.3), refusing any
    other number of classes for ``what`` is computed from them."""
    n = np.maximum(np.asarray(noisy_counts, dtype=np.float64), float(floor))
    if n.shape != (2,):
        raise ValueError(f"{what} is defined for binary models only, "
                         f"got {n.shape[0] if n.ndim == 1 else n.shape} counts.")
    return n


def prevalence_offset(noisy_counts, *, floor=COUNT_FLOOR):
    """Offset ``o = log p_hat_0 - log p_hat_1 = -logit p_hat`` of a binary
    model's intercept (Section 18.3), a public function of the noisy counts.

    ``p_hat_k = max(n_k, m_0) / sum_j max(n_j, m_0)``. Added to a calibrated
    model's log-odds, it moves the decision from the error rate to the
    balanced error rate: for a logistic model with an intercept this is the
    shift that class weights ``n / (2 n_k)`` make in the maximum-likelihood
    intercept when the model is well specified (the prior correction of
    Manski and Lerman 1977; King and Zeng 2001). Not shrunk towards 0 by its
    noise: measured, shrinking by one standard error cost a rare-class table
    6 points of balanced accuracy (the private model's scores are shrunk, so
    its decisions move with small changes of the intercept).

    Parameters
    ----------
    noisy_counts : array-like of shape (2,)
    floor : float, default=1.0
        Public floor ``m_0 >= 1``.

    Returns
    -------
    offset : float

    Examples
    --------
    >>> from skforget.accounting import prevalence_offset
    >>> round(prevalence_offset([900.0, 100.0]), 4)
    2.1972
    """
    n = _binary_counts(noisy_counts, floor)
    return float(math.log(n[0]) - math.log(n[1]))


def offset_change_bound(noisy_counts, k, *, floor=COUNT_FLOOR):
    """Largest change of :func:`prevalence_offset` when up to ``k`` records are
    added to and up to ``k`` removed from each class, with the same noise.

    Used by prediction certificates (certificates.md, Section 9.10): the same
    run on a neighbouring database draws the same count noise, so each count
    moves by at most ``k`` either way, and ``log max(n, m_0)`` by at most
    ``log(max(n + k, m_0) / max(n - k, m_0))``.

    Parameters
    ----------
    noisy_counts : array-like of shape (2,)
    k : int
    floor : float, default=1.0

    Returns
    -------
    bound : float
    """
    n = np.asarray(noisy_counts, dtype=np.float64)
    _binary_counts(n, floor)
    k = check_int(k, "k")
    hi = np.maximum(n + k, floor)
    lo = np.maximum(n - k, floor)
    return float(np.sum(np.log(hi) - np.log(lo)))


def noisy_class_statistics(counts, sums, *, noise_scale, data_norm, rng):
    """Release class counts and class sums of the rows with Gaussian noise
    (Definition 18.11): ``(n + Z_0, S + R Z_1)``, ``Z ~ N(0, sigma^2 I)``.

    Parameters
    ----------
    counts : array-like of shape (n_classes,)
        Exact records per class of the current database.
    sums : array-like of shape (n_classes, n_features)
        Exact sums of each class's mapped rows ``a(x) x``.
    noise_scale : float
        ``sigma_c`` from :func:`count_noise_scale` with
        ``statistics="class_means"`` (records, and units of ``data_norm``).
    data_norm : float
        The public row bound ``R``.
    rng : numpy.random.Generator
        A noise stream used for nothing else (Section 10.3).

    Returns
    -------
    noisy_counts : ndarray of shape (n_classes,)
    noisy_sums : ndarray of shape (n_classes, n_features)
    """
    sums = np.asarray(sums, dtype=np.float64)
    R = check_positive(data_norm, "data_norm")
    # The counts' draws first, exactly as a release of the counts alone.
    noisy_counts = noisy_class_counts(counts, noise_scale=noise_scale, rng=rng)
    noisy_sums = sums + R * rng.normal(0.0, noise_scale, size=sums.shape)
    return noisy_counts, noisy_sums


def class_midpoint(noisy_counts, noisy_sums, *, floor=COUNT_FLOOR):
    """Midpoint ``(m_0 + m_1) / 2`` of the two class means of the mapped rows,
    ``m_k = S_k / max(n_k, m_0)`` (Section 18.11): the released intercept of a
    ``class_weight="balanced"`` model is ``-w^T`` this, the threshold a
    shared-variance Gaussian model of the scores puts at the balanced error.
    A public function of the noisy statistics.

    Parameters
    ----------
    noisy_counts : array-like of shape (2,)
    noisy_sums : array-like of shape (2, n_features)
    floor : float, default=1.0

    Returns
    -------
    midpoint : ndarray of shape (n_features,)

    Examples
    --------
    >>> from skforget.accounting import class_midpoint
    >>> class_midpoint([4.0, 2.0], [[4.0, 0.0], [0.0, 2.0]]).tolist()
    [0.5, 0.5]
    """
    n = _binary_counts(noisy_counts, floor, "the class-mean midpoint")
    S = np.asarray(noisy_sums, dtype=np.float64)
    return (S[0] / n[0] + S[1] / n[1]) / 2.0


def midpoint_change_bound(noisy_counts, noisy_sums, k, *, data_norm,
                          floor=COUNT_FLOOR):
    """Largest move of :func:`class_midpoint` (in norm) on a database that
    differs in up to ``k`` records, with the same noise (certificates.md 9.11).

    Each noisy count moves by at most ``k``, each class sum by at most ``2 k
    R``; with ``n = max(n_k, m_0)`` and ``n^+- = max(n_k +- k, m_0)``, class
    ``k``'s mean moves by at most ``2kR / n^- + ||S_k|| max(1/n^- - 1/n, 1/n
    - 1/n^+)``, and the midpoint by half the sum.

    Parameters
    ----------
    noisy_counts : array-like of shape (2,)
    noisy_sums : array-like of shape (2, n_features)
    k : int
    data_norm : float
    floor : float, default=1.0

    Returns
    -------
    bound : float
    """
    n = _binary_counts(noisy_counts, floor, "the class-mean midpoint")
    raw = np.asarray(noisy_counts, dtype=np.float64)
    k = check_int(k, "k")
    R = check_positive(data_norm, "data_norm")
    norms = np.linalg.norm(np.asarray(noisy_sums, dtype=np.float64), axis=1)
    lo = np.maximum(raw - k, floor)
    hi = np.maximum(raw + k, floor)
    move = 2.0 * k * R / lo + norms * np.maximum(1.0 / lo - 1.0 / n, 1.0 / n - 1.0 / hi)
    return float(np.sum(move) / 2.0)
