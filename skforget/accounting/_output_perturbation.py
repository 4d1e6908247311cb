# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy of output perturbation: one certified solve plus one Gaussian vector.

Design
------
The released model is ``theta_hat + N(0, sigma^2 I)`` where ``theta_hat`` is
any point at which the gradient of the ``lam``-strongly convex objective has
norm at most the public tolerance ``tau = tol * S / N`` (privacy-accounting.md,
Section 15). Two facts give the sensitivity of ``theta_hat``:

* the exact minimisers on neighbouring databases are at most ``S / (N lam)``
  apart (Theorem 15.1; Chaudhuri, Monteleoni and Sarwate 2011, Cor. 8);
* a point with gradient norm ``<= tau`` is within ``tau / lam`` of the
  minimiser (Lemma 15.2, strong convexity),

so ``Delta = (1 + 2 tol) S / (N lam)`` (eq. 15.1), and the Gaussian mechanism
has the exact Rényi curve ``R_q = q Delta^2 / (2 sigma^2)`` (Proposition 15.3;
Mironov 2017, Prop. 7). Deletion refits on the edited data with fresh noise
(Theorem 15.4): the removed records have no influence on the new model. Every
function here is of public numbers only.
"""

import math
from dataclasses import dataclass

from skforget.accounting._calibration import deletion_factor
from skforget.accounting._checks import (
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    check_real,
)
from skforget.accounting._conversions import (
    CONVERSIONS,
    epsilon_to_rho,
    optimal_order,
    rho_to_epsilon,
)
from skforget.accounting._guarantee import (
    CONVERSION_NOTES,
    EditCertificate,
    PrivacyGuarantee,
)
from skforget.accounting._noisy_gd import (
    SOFTMAX_CUTOVER,
    gradient_bound,
    rho_adaptive,
    sensitivity,
    smoothness,
)
from skforget.accounting._prevalence import STATISTICS, rho_counts_adaptive

#: Largest relative tolerance accepted: beyond it the tolerance term would
#: dominate the sensitivity it is added to.
MAX_TOL = 0.5


def minimizer_sensitivity(*, sensitivity, normaliser, lam, tol=0.0):
    """L2 sensitivity ``Delta`` of a certified minimiser (eq. 15.1).

    privacy-accounting.md, Theorem 15.1 and Lemma 15.2: exact minimisers of
    ``(1/N) sum_i l_i(theta) + (lam/2) ||theta||^2`` on neighbouring databases
    are at most ``S / (N lam)`` apart, and a point whose gradient norm is at
    most ``tau = tol * S / N`` lies within ``tau / lam`` of the minimiser, so
    ``Delta = (1 + 2 tol) S / (N lam)``.

    Parameters
    ----------
    sensitivity : float
        ``S`` of the clipped gradient sum (:func:`sensitivity`).
    normaliser : int
        ``N``, the size of the database the solve runs on.
    lam : float
        Strong convexity ``lam`` of the objective (the L2 strength applied).
    tol : float, default=0.0
        Relative gradient tolerance ``t`` in [0, 0.5].

    Returns
    -------
    Delta : float

    Examples
    --------
    >>> from skforget.accounting import minimizer_sensitivity
    >>> round(minimizer_sensitivity(sensitivity=2.0, normaliser=10000, lam=0.01,
    ...                             tol=1e-3), 12)
    0.02004
    """
    S = check_positive(sensitivity, "sensitivity")
    N = check_int(normaliser, "normaliser", low=1)
    lam = check_positive(lam, "lam")
    t = check_real(tol, "tol", low=0.0, high=MAX_TOL, low_open=False,
                   high_open=False)
    return (1.0 + 2.0 * t) * S / (N * lam)


def output_perturbation_noise(*, sensitivity, normaliser, lam, rho, tol=0.0):
    """Noise scale ``sigma`` of output perturbation for a target ``rho``.

    privacy-accounting.md, Section 15.4, eq. (15.2): the Gaussian mechanism
    ``theta_hat + N(0, sigma^2 I)`` with L2 sensitivity ``Delta`` (eq. 15.1,
    :func:`minimizer_sensitivity`) satisfies ``R_q <= q Delta^2 / (2 sigma^2)``
    at every order ``q > 1`` (Mironov 2017, Prop. 7; the curve is attained), so
    ``sigma = Delta / sqrt(2 rho)``. Chaudhuri, Monteleoni and Sarwate (2011)
    for the sensitivity.

    Parameters
    ----------
    sensitivity, normaliser, lam, tol
        As in :func:`minimizer_sensitivity`.
    rho : float
        Target rho-coefficient (``epsilon_to_rho`` of an (epsilon, delta) target).

    Returns
    -------
    sigma : float

    Examples
    --------
    >>> from skforget.accounting import output_perturbation_noise
    >>> round(output_perturbation_noise(sensitivity=2.0, normaliser=10000,
    ...       lam=0.01, rho=0.0305565951976365, tol=1e-3), 12)
    0.08106441238
    """
    rho = check_positive(rho, "rho")
    delta_l2 = minimizer_sensitivity(sensitivity=sensitivity, normaliser=normaliser,
                                     lam=lam, tol=tol)
    return delta_l2 / math.sqrt(2.0 * rho)


def rho_output_perturbation(*, sensitivity, normaliser, lam, sigma, tol=0.0):
    """Rho-coefficient of one output-perturbation release (eq. 15.2).

    privacy-accounting.md, Proposition 15.3: ``rho = Delta^2 / (2 sigma^2)`` with
    ``Delta`` of eq. (15.1) (:func:`minimizer_sensitivity`); the Gaussian
    mechanism's Rényi divergence is exactly ``q ||mu - mu'||^2 / (2 sigma^2)``
    (Mironov 2017, Prop. 7), so the figure is attained by a pair of databases
    whose certified minimisers are ``Delta`` apart.

    Parameters
    ----------
    sensitivity, normaliser : float
        The sensitivity ``S`` (:func:`sensitivity`); the normaliser ``N`` of the
        gradient sum.
    lam : float
        Regularisation strength ``lambda`` of the objective.
    sigma : float
        Standard deviation of the Gaussian noise added to the minimiser.
    tol : float, default=0.0
        Certified tolerance ``tau`` of the solve (eq. 15.1).

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import rho_output_perturbation
    >>> rho_output_perturbation(sensitivity=2.0, normaliser=10000, lam=0.01,
    ...                         sigma=0.02004, tol=1e-3)
    0.5
    """
    sigma = check_positive(sigma, "sigma")
    delta_l2 = minimizer_sensitivity(sensitivity=sensitivity, normaliser=normaliser,
                                     lam=lam, tol=tol)
    return delta_l2 * delta_l2 / (2.0 * sigma * sigma)


#: Unit roundoff of float64.
_U = 2.0 ** -53


def certified_solve_bounds(*, n_samples, n_params, gradient_bound, row_norm, lam, beta,
                           tolerance):
    """Public bounds of the certified solve: ball, rounding error, fallback steps.

    privacy-accounting.md, Section 15.3 (rounding bound and Theorem 15.2a).
    Every point the solver evaluates lies in the public ball
    ``||theta|| <= B = (2 G + tau) / lam`` (``||theta*|| <= G / lam``); on it
    the float64 gradient is within

        e_pub = 4 u [(n + 2)(G + R) + (p + 4)(lam + beta) B]

    of the exact one (recursive or any-tree summation of ``n`` vectors of norm
    ``<= G``, Higham 2002 Sec. 4.2; margins of ``p`` terms through the
    ``beta``-Lipschitz clipped derivative; the transcendental functions to a
    few ulp times ``R``; the fallback's update). If ``e_pub <= tau / 2``, plain
    gradient descent at ``eta = 1 / (lam + beta)`` from 0 for

        K = ceil(ln(G / (tau - e_pub)) / ln(1 / (1 - eta lam))) + 1

    steps ends within ``tau / lam`` of the minimiser, in float64, whatever the
    data (Theorem 15.2a); so the release never fails for a data-dependent
    reason. Nothing here reads a row: ``n`` is the database size.

    Parameters
    ----------
    n_samples, n_params : int
        ``n`` (rows of the solve) and ``p`` (coordinates of the parameter).
    gradient_bound, row_norm : float
        ``G`` (per record, joint over outputs) and ``R`` (augmented row norm).
    lam, beta : float
        Strong convexity and smoothness ``beta = beta_phi R^2`` of the loss part.
    tolerance : float
        The absolute gradient tolerance ``tau = t S / N``.

    Returns
    -------
    norm_bound : float
        ``B``.
    rounding_bound : float
        ``e_pub``.
    fallback_steps : int or None
        ``K``, or None when ``e_pub > tau / 2`` (the precondition fails: the
        estimator refuses the plan, naming ``tol``, before the solve).

    Examples
    --------
    >>> from skforget.accounting._output_perturbation import certified_solve_bounds
    >>> B, e, K = certified_solve_bounds(n_samples=10000, n_params=21,
    ...     gradient_bound=1.0, row_norm=2 ** 0.5, lam=0.01, beta=0.5, tolerance=2e-7)
    >>> round(B, 6), e < 1e-7, K
    (200.00002, True, 780)
    """
    n = check_int(n_samples, "n_samples", low=1)
    p = check_int(n_params, "n_params", low=1)
    G = check_positive(gradient_bound, "gradient_bound")
    R = check_positive(row_norm, "row_norm")
    lam = check_positive(lam, "lam")
    beta = check_nonnegative(beta, "beta")
    tau = check_positive(tolerance, "tolerance")
    B = (2.0 * G + tau) / lam
    e = 4.0 * _U * ((n + 2) * (G + R) + (p + 4) * (lam + beta) * B)
    if not e <= 0.5 * tau:
        return B, e, None
    eta = 1.0 / (lam + beta)
    if eta * lam < 1.0:
        contraction = -math.log1p(-eta * lam)  # ln(1 / (1 - eta lam)) > 0
    else:
        # lam so far above beta that 1 - eta lam rounds to 0 (alpha=1e300 raised
        # "math domain error", a trial): ln((lam + beta) / beta) exactly.
        contraction = math.log1p(lam / beta) if beta > 0.0 else math.inf
    steps = math.ceil(math.log(G / (tau - e)) / contraction) + 1
    return B, e, max(steps, 1)


def rho_adaptive_release(*, sensitivity, deletion_sensitivity, normaliser, lam, sigma,
                         tol=0.0):
    """One earlier release's term in the adaptive figure of a refit.

    privacy-accounting.md, Theorem 15.4 (iii): an earlier release ``theta_hat +
    N(0, sigma^2 I)`` seen by the requester, compared on the database with the
    unit and the one without it (or with its replacement). The exact minimisers
    are at most ``S_del / (N lam)`` apart (Theorem 15.1 with the deletion's
    ``S_del``, Lemma 15.5 for the change of size), but each certified point may
    lie anywhere within ``tau / lam = t S / (N lam)`` of its minimiser, with the
    *relation's* ``S`` (the tolerance was set with it), so the centres are at
    most ``(S_del + 2 t S) / (N lam)`` apart and the Gaussian mechanism gives

        rho_t = (S_del + 2 t S)^2 / (2 sigma^2 (N lam)^2).

    (Scaling ``rho`` by ``(S_del / S)^2`` instead would understate pure
    deletions under ``replace`` by ``((1 + 4t) / (1 + 2t))^2``.)

    Parameters
    ----------
    sensitivity : float
        The relation's ``S`` the release was calibrated with.
    deletion_sensitivity : float
        ``S_del`` of the edited unit (``S sqrt(deletion_factor)``).
    normaliser, lam, sigma, tol
        ``N``, ``lam``, ``sigma`` and ``t`` of that release.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import rho_adaptive_release
    >>> rho_adaptive_release(sensitivity=2.0, deletion_sensitivity=1.0,
    ...     normaliser=10000, lam=0.01, sigma=0.5, tol=0.5)
    0.0018
    """
    S = check_positive(sensitivity, "sensitivity")
    S_del = check_positive(deletion_sensitivity, "deletion_sensitivity")
    N = check_int(normaliser, "normaliser", low=1)
    lam = check_positive(lam, "lam")
    sigma = check_positive(sigma, "sigma")
    t = check_real(tol, "tol", low=0.0, high=MAX_TOL, low_open=False,
                   high_open=False)
    distance = (S_del + 2.0 * t * S) / (N * lam)
    return distance * distance / (2.0 * sigma * sigma)


@dataclass(frozen=True, slots=True)
class OutputPerturbationPlan:
    """Public constants of one output-perturbation release (Section 15).

    Produced by :func:`plan_output_perturbation`; nothing in it depends on the
    rows. ``tolerance`` is the absolute gradient tolerance ``tau = tol S / N``
    the solver must certify; ``l2_sensitivity`` is ``Delta`` (eq. 15.1). The
    estimators add the public weighting, as for noisy GD (Section 4.4).
    """

    loss: str
    relation: str
    group_size: int
    conversion: str
    epsilon: float
    delta: float
    rho_target: float
    row_norm: float
    clip_norm: float | None
    gradient_bound: float
    sensitivity: float
    beta: float
    lam: float
    tol: float
    tolerance: float
    l2_sensitivity: float
    sigma: float
    normaliser: int
    n_params: int
    max_edit_size: int
    sample_weight_bound: float = 0.0
    class_weights: tuple = ()
    weight_bound: float = 1.0


def plan_output_perturbation(*, loss, n_samples, n_params, lam, row_norm, clip_norm,
                             epsilon, delta, tol=1e-3, relation="replace",
                             group_size=1, n_classes=2, max_edit_size=1,
                             conversion="gaussian"):
    """Plan one output-perturbation release from public numbers (Section 15).

    The (epsilon, delta) target becomes ``rho`` by the exact Gaussian profile
    (the release is a Gaussian mechanism, so ``sqrt(2 rho)``-GDP: Sections 15.4
    and 21.4); ``G`` and ``S``
    are noisy GD's (Sections 4.1-4.3); the noise is
    :func:`output_perturbation_noise` at the database size ``N = n_samples``.

    Parameters
    ----------
    loss : {"logistic", "squared", "multinomial", "ovr"}
    n_samples : int
        Size of the database the solve runs on (the normaliser ``N``).
    n_params : int
        Number of coordinates of the released parameter.
    lam : float
        L2 strength applied to every coordinate.
    row_norm : float
        Public bound ``R`` on the augmented row norm.
    clip_norm : float or None
        Per-record clipping threshold ``L``.
    epsilon, delta : float
        DP target.
    tol : float, default=1e-3
        Relative gradient tolerance ``t`` (``tau = t S / N``).
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1
    n_classes : int, default=2
        For the one-vs-rest sensitivity.
    max_edit_size : int, default=1
        Rows an edit request may name (checked by the estimator).
    conversion : {"gaussian", "improved", "classic"}, default="gaussian"
        Conversion of the release's figure and of the adaptive figure of later
        refits (both ``sqrt(2 rho)``-GDP: Gaussian mechanisms composed, Section
        21.5's Corollary 21.5).

    Returns
    -------
    plan : OutputPerturbationPlan

    Examples
    --------
    >>> from skforget.accounting import plan_output_perturbation
    >>> plan = plan_output_perturbation(
    ...     loss="logistic", n_samples=10000, n_params=21, lam=0.01,
    ...     row_norm=2 ** 0.5, clip_norm=1.0, epsilon=1.0, delta=1e-5)
    >>> round(plan.sigma, 9), plan.tolerance
    (0.074761858, 2e-07)
    """
    check_choice(conversion, "conversion", CONVERSIONS)
    N = check_int(n_samples, "n_samples", low=1)
    p = check_int(n_params, "n_params", low=1)
    lam = check_positive(lam, "lam")
    eps = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    t = check_real(tol, "tol", low=0.0, high=MAX_TOL, low_open=False,
                   high_open=False)
    g = check_int(group_size, "group_size", low=1)
    if loss == "multinomial" and clip_norm is not None:
        # The softmax's natural bound, as the accountant defines it.
        natural = gradient_bound(loss=loss, row_norm=row_norm)
        if clip_norm < natural * (1.0 - SOFTMAX_CUTOVER):
            raise ValueError(
                f"clip_norm={clip_norm!r} is below sqrt(2) * row_norm = "
                f"{natural!r}: output perturbation solves the softmax loss itself, "
                "whose gradient is not clipped (the clipped softmax of "
                "privacy-accounting.md, Lemma 4.5, is noisy gradient descent's). "
                "Use clip_norm=None.")
    G = gradient_bound(loss=loss, row_norm=row_norm, clip_norm=clip_norm,
                       n_classes=n_classes)
    S = sensitivity(gradient_bound=G, relation=relation, group_size=g)
    rho = epsilon_to_rho(epsilon=eps, delta=delta, method=conversion)
    sigma = output_perturbation_noise(sensitivity=S, normaliser=N, lam=lam, rho=rho,
                                      tol=t)
    return OutputPerturbationPlan(
        loss=loss, relation=relation, group_size=g, conversion=conversion,
        epsilon=eps, delta=delta, rho_target=rho, row_norm=float(row_norm),
        clip_norm=None if clip_norm is None else float(clip_norm), gradient_bound=G,
        sensitivity=S, beta=smoothness(loss=loss, row_norm=row_norm), lam=lam, tol=t,
        tolerance=t * S / N,
        l2_sensitivity=minimizer_sensitivity(sensitivity=S, normaliser=N, lam=lam,
                                             tol=t),
        sigma=sigma, normaliser=N, n_params=p,
        max_edit_size=check_int(max_edit_size, "max_edit_size", low=1))


def _release_rho(plan):
    return rho_output_perturbation(sensitivity=plan.sensitivity,
                                   normaliser=plan.normaliser, lam=plan.lam,
                                   sigma=plan.sigma, tol=plan.tol)


def guarantee_after_output_perturbation(plan, *, seeded, label_set_public=True,
                                        target_scale_public=True, previous=None,
                                        earlier=None, n_deleted=0, n_replaced=0,
                                        n_inserted=0, rho_counts=0.0,
                                        count_noise=0.0, target_epsilon=None,
                                        class_statistics="counts",
                                        earlier_statistics=None,
                                        statistics_bound=0.0):
    """Guarantee of one output-perturbation release: a fit, or a refit serving
    an edit (privacy-accounting.md, Theorem 15.4).

    * Records present: ``rho`` of eq. (15.2) at the plan's ``N``, ``lam``,
      ``sigma`` (Proposition 15.3), converted at the plan's delta.
    * After an edit (``previous`` given): the removed units have no influence
      on the refitted model, ``rho_deletion = 0`` (``retrained=True``); against
      a requester that adapted to the ``s`` earlier releases, the sum over
      them of :func:`rho_adaptive_release` (Theorem 15.4 (iii), Theorem 6.3),
      each with its own stored plan.

    Parameters
    ----------
    plan : OutputPerturbationPlan
        The plan of the release (the refit's, for an edit).
    seeded : bool
        Whether the noise came from an integer seed.
    label_set_public, target_scale_public : bool, default=True
        False when the label set, or the targets' scale, was read from the data
        (:func:`guarantee_after_fit`).
    previous : PrivacyGuarantee or None
        Guarantee of the model the edit replaces; None for ``fit``.
    earlier : sequence of OutputPerturbationPlan or None
        The plans of every release before this refit (the fit's first); None
        (a model pickled before they were kept) repeats ``plan``.
    n_deleted, n_replaced, n_inserted : int
        Composition of the edit.
    rho_counts, count_noise : float, default=0.0
        Rho-coefficient and noise of the noisy class counts released with the
        model (Section 18.10): added to the records-present figure (Theorem
        18.4 (i)); the adaptive figure adds one term per earlier release that
        carried them (eq. 18.3; under "auto" a release below the size rule
        carries none: ``earlier_statistics``).
    target_epsilon : float or None
        The whole release's target when the plan got what the counts leave.
    class_statistics : {"counts", "class_means", "class_moments"}, default="counts"
        What the ``rho_counts`` release holds (Sections 18.3, 18.11).
    earlier_statistics : sequence of (float, str) or None
        ``(rho_counts, class_statistics)`` of every release before this refit,
        in the order of ``earlier``: each is charged with its own figure and
        kind (eq. 18.3). None (a model pickled before they were kept) charges
        every earlier release the largest of ``rho_counts``, the previous
        release's and ``statistics_bound``, at the largest deletion factor of
        any kind.
    statistics_bound : float, default=0.0
        With ``earlier_statistics=None``: the figure a release of this model
        spends on class statistics when it spends any (public, from the
        frozen parameters), so that a release without them after one with
        them cannot hide the earlier ones.

    Returns
    -------
    guarantee : PrivacyGuarantee
    """
    rho = _release_rho(plan) + rho_counts
    eps = rho_to_epsilon(rho=rho, delta=plan.delta, method=plan.conversion)
    order = optimal_order(rho=rho, delta=plan.delta, method=plan.conversion)
    fields = dict(
        epsilon=eps, delta=plan.delta, rho=rho, rho_inf=rho, order=order,
        relation=plan.relation, group_size=plan.group_size,
        conversion=plan.conversion,
        target_epsilon=plan.epsilon if target_epsilon is None else target_epsilon,
        target_deletion_epsilon=0.0, noise_scale=plan.sigma, learning_rate=0.0,
        regularization=plan.lam, clip_norm=plan.clip_norm, row_norm=plan.row_norm,
        gradient_bound=plan.gradient_bound, sensitivity=plan.sensitivity,
        normaliser=plan.normaliser, contraction=0.0, fit_steps=0, total_steps=0,
        n_samples=plan.normaliser, edits=(), seeded=bool(seeded),
        label_set_public=bool(label_set_public),
        target_scale_public=bool(target_scale_public), mechanism="output_perturbation",
        tol=plan.tol, rho_counts=float(rho_counts), count_noise=float(count_noise),
        conversion_note=CONVERSION_NOTES[plan.conversion],
        class_statistics=str(class_statistics))
    if previous is None:
        return PrivacyGuarantee(**fields)
    n_del = check_int(n_deleted, "n_deleted")
    n_rep = check_int(n_replaced, "n_replaced")
    n_ins = check_int(n_inserted, "n_inserted")
    check_nonnegative(previous.rho, "previous.rho")
    removed = n_del + n_rep
    factor = deletion_factor(plan_relation=plan.relation, n_replaced=n_rep)
    if earlier is None:  # a model pickled before the history was kept
        earlier = (plan,) * (1 + len(previous.edits))
    releases_seen = len(earlier)
    # Sum over every earlier release with its own stored constants: the
    # requester saw each release, and one release's figure (say the largest
    # times the count) need not bound another's made under other constants.
    terms = [rho_adaptive_release(
        sensitivity=e.sensitivity,
        deletion_sensitivity=e.sensitivity * math.sqrt(factor),
        normaliser=e.normaliser, lam=e.lam, sigma=e.sigma, tol=e.tol)
        for e in earlier]
    r_adapt = rho_adaptive(rho_deletion=0.0, rho_releases=terms) if removed else 0.0
    if removed and earlier_statistics is not None:
        # Each earlier release with its own statistics: under "auto" a release
        # on a database below the size rule has none, and the ones before it
        # still counted the unit (eq. 18.3).
        if len(earlier_statistics) != releases_seen:
            raise ValueError(
                f"earlier_statistics has {len(earlier_statistics)} entries for "
                f"{releases_seen} earlier releases.")
        r_adapt += math.fsum(rho_counts_adaptive(
            rho_counts=r, relation=plan.relation, n_replaced=n_rep,
            releases_seen=1, statistics=kind) for r, kind in earlier_statistics)
    elif removed:
        # A model pickled before the releases' statistics were kept: every
        # earlier release is charged the largest figure any of its releases
        # can have, at the largest factor of any kind (a release without
        # statistics records neither, so the latest two cannot tell).
        r_adapt += max(rho_counts_adaptive(
            rho_counts=max(rho_counts, previous.rho_counts, statistics_bound),
            relation=plan.relation, n_replaced=n_rep, releases_seen=releases_seen,
            statistics=kind) for kind in STATISTICS)
    cert = EditCertificate(
        index=len(previous.edits) + 1, n_deleted=n_del, n_replaced=n_rep,
        n_inserted=n_ins, n_samples=plan.normaliser, steps=0, rho_deletion=0.0,
        epsilon_deletion=0.0, rho_deletion_batch=0.0, epsilon_deletion_batch=0.0,
        releases_seen=releases_seen, rho_adaptive=r_adapt,
        epsilon_adaptive=rho_to_epsilon(rho=r_adapt, delta=plan.delta,
                                        method=plan.conversion),
        retrained=True)
    fields.update(edits=previous.edits + (cert,),
                  seeded=previous.seeded or bool(seeded),
                  label_set_public=previous.label_set_public,
                  target_scale_public=previous.target_scale_public,
                  preprocessing=previous.preprocessing)
    return PrivacyGuarantee(**fields)
