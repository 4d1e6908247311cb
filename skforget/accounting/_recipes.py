# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Recipes for noisy gradient descent: from targets to sigma, K_A and K_R.

privacy-accounting.md, Section 7 (and 8.5 for the default regularisation):
the noise scale that puts the stationary level at the target, the initial
draw's variance, the fit's steps and the unlearning steps for a deletion target
and for utility, and the source paper's recipe kept as a compatibility mode.
They invert the bounds of :mod:`skforget.accounting._noisy_gd`.
"""

import math

from skforget.accounting._checks import (
    check_contraction,
    check_int,
    check_nonnegative,
    check_positive,
)
from skforget.accounting._noisy_gd import _log_inv, rho_deletion

#: Coefficient norm, in units of ``1 / data_norm``, that the default
#: regularisation balances the privacy noise against (Section 8.5).
DEFAULT_COEF_NORM = 2.0
#: The squared loss's (``"auto"`` rules 5): targets scaled into [-1, 1] by
#: ``target_scale``, predictions of about half that scale (Section 8.5).
SQUARED_COEF_NORM = 0.5
#: The rho of (epsilon, delta) = (1, 1e-5) under the Gaussian profile (21.5):
#: above it, noisy GD's nominal coefficient norm grows as sqrt(rho / RHO_REFERENCE).
RHO_REFERENCE = 0.03592570232741472
#: The largest growth of the nominal norm (reached near epsilon = 27 at
#: delta = 1e-5): at 64, the near non-private fit (epsilon = 1e4) no longer
#: converged in scikit-learn's class-weight check (privacy-accounting.md, 8.5).
MAX_COEF_NORM_GROWTH = 16.0
#: Above this many records, noisy GD's softmax default lets its nominal norm
#: grow as ``n_samples / N_REFERENCE`` (Section 8.5; measured on 642 tables).
N_REFERENCE = 4000.0
MECHANISMS = ("noisy_gd", "output_perturbation")


def coef_norm_growth(rho, *, mechanism="noisy_gd", n_samples=None):
    """Factor by which the default's nominal coefficient norm grows.

    ``min(16, max(1, sqrt(rho / RHO_REFERENCE)) * max(1, n_samples /
    N_REFERENCE))`` for noisy GD, whose noise in the data's curved directions
    grows as ``1 / lambda``; 1 for output perturbation, whose noise grows as
    ``1 / lambda**2`` in every direction (privacy-accounting.md, Section 8.5).
    The factor in ``n_samples`` is the softmax's (the caller passes
    ``n_samples`` for it only): measured on the multiclass tables of a
    642-table census, where the largest tables gained most from it, while
    the binary ones did not move.

    Parameters
    ----------
    rho : float
        DP target ``rho`` of the fit.
    mechanism : {"noisy_gd", "output_perturbation"}, default="noisy_gd"
        Whose default.
    n_samples : float or None, default=None
        Number of records (public), for the growth with the table's size;
        None for none.

    Returns
    -------
    growth : float
        In ``[1, 16]``.

    Examples
    --------
    >>> from skforget.accounting import coef_norm_growth
    >>> coef_norm_growth(0.03), round(coef_norm_growth(1.387828976), 2)
    (1.0, 6.22)
    >>> coef_norm_growth(1.387828976, mechanism="output_perturbation")
    1.0
    >>> coef_norm_growth(0.03, n_samples=2000), coef_norm_growth(0.03, n_samples=40000)
    (1.0, 10.0)
    """
    rho = check_positive(rho, "rho")
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism={mechanism!r} is not one of {MECHANISMS}.")
    sizes = 1.0 if n_samples is None else max(
        1.0, check_positive(n_samples, "n_samples") / N_REFERENCE)
    if mechanism == "output_perturbation":
        return 1.0
    # At and below the reference (up to the last bits of its root, which
    # differ between builds) the epsilon = 1 rule holds exactly.
    budget = (1.0 if rho <= RHO_REFERENCE * (1 + 1e-9)
              else math.sqrt(rho / RHO_REFERENCE))
    return min(MAX_COEF_NORM_GROWTH, budget * sizes)


def default_regularization(*, sensitivity, n_params, rho, n_samples, data_norm=1.0,
                           coef_norm=None, mechanism="noisy_gd",
                           grow_with_samples=False, curvature_trace=None):
    """Default L2 strength ``lambda`` from public numbers (Section 8.5).

    The expected excess risk of the private model is about the Gibbs level
    ``p sigma^2 / 2 ~ p S^2 / (4 lam rho N^2)`` plus the regularisation bias
    ``lam ||theta||^2 / 2``; with a nominal coefficient norm
    ``Theta = coef_norm / data_norm`` the sum is least at
    ``lam = S sqrt(p / (2 rho)) / (Theta N)``, i.e. ``C = 1 / (lam N)`` grows with
    epsilon and shrinks with the number of parameters and the sensitivity.
    For noisy GD, ``Theta`` itself grows above the ``rho`` of ``epsilon = 1``
    (:func:`coef_norm_growth`), so ``C`` grows as ``rho`` there, and, with
    ``grow_with_samples`` (the softmax's default), above ``N_REFERENCE``
    records as ``N``.

    Parameters
    ----------
    sensitivity, n_params : float or int
        The sensitivity ``S`` (:func:`sensitivity`); the number of parameters ``p``.
    rho : float
        DP target ``rho``.
    n_samples : float
        Number of records ``N``.
    data_norm : float, default=1.0
        Public bound on the norm of a row.
    coef_norm : float or None, default=None
        Nominal coefficient norm ``Theta``, in units of ``1 / data_norm``; None for
        2, grown with ``rho`` as ``mechanism`` says.
    mechanism : {"noisy_gd", "output_perturbation"}, default="noisy_gd"
        Whose default: :func:`coef_norm_growth` (an explicit ``coef_norm`` is used
        as given).
    grow_with_samples : bool, default=False
        Let the nominal norm grow with ``n_samples`` too (noisy GD's softmax,
        Section 8.5).
    curvature_trace : float or None, default=None
        Public bound ``T`` on the trace of the data loss's Hessian
        (:func:`~skforget.accounting._calibration.curvature_trace`). Given,
        the noise's cost counts the directions the data curve, not all ``p``
        (Section 8.5, "Directions the data do not curve"): ``lambda`` is
        also at most ``(S^2 T / (rho N^2 Theta^2))**(1/3)`` for noisy GD, and
        that cube root itself for output perturbation, whose noise on the
        released coefficients costs the data loss ``T / lambda^2``, not a
        Gibbs level. None: every parameter counts.

    Returns
    -------
    lam : float

    Examples
    --------
    >>> from skforget.accounting import default_regularization
    >>> round(default_regularization(sensitivity=1.0, n_params=31, rho=0.03,
    ...                              n_samples=1000), 6)
    0.011365
    >>> round(default_regularization(sensitivity=1.0, n_params=31, rho=1.0,
    ...                              n_samples=1000), 7)
    0.0003731
    """
    S = check_positive(sensitivity, "sensitivity")
    p = check_int(n_params, "n_params", low=1)
    rho = check_positive(rho, "rho")
    N = check_positive(n_samples, "n_samples")
    R = check_positive(data_norm, "data_norm")
    growth = coef_norm_growth(   # validates mechanism
        rho, mechanism=mechanism, n_samples=N if grow_with_samples else None)
    theta = (DEFAULT_COEF_NORM * growth if coef_norm is None
             else check_positive(coef_norm, "coef_norm")) / R
    lam = S * math.sqrt(p / (2.0 * rho)) / (theta * N)
    if curvature_trace is None:
        return lam
    T = check_positive(curvature_trace, "curvature_trace")
    lam_T = (S * S * T / (rho * N * N * theta * theta)) ** (1.0 / 3.0)
    if mechanism == "output_perturbation":
        # Isotropic noise of variance ~ S^2 / (2 rho lam^2 N^2) on the
        # released coefficients costs the data loss T / 2 times it: the
        # balance with the bias lam Theta^2 / 2 is least at the cube root
        # itself (Section 8.5, rules 5).
        return lam_T
    # The noise's share of the data loss counts a direction of curvature h by
    # h / (h + lambda), whose slope in lambda bounds the balance's optimum by
    # both roots: counting every parameter, and counting 2 T / lambda
    # directions, the cube root (Section 8.5).
    return min(lam, lam_T)


def noise_scale(*, rho, sensitivity, normaliser, learning_rate, contraction):
    """Noise scale ``sigma`` that makes ``rho_inf`` equal the target ``rho``.

    Inverts (5.2): ``sigma^2 = b^2 (1 + c) / (4 eta rho (1 - c))`` with
    ``b = eta S / N``; for ``c = 1 - eta lam`` this is
    ``S^2 (2 - eta lam) / (4 lam rho N^2)`` (privacy-accounting.md, Section 7
    step 3). Then ``rho_dp(T) < rho`` for every number of steps.

    Parameters
    ----------
    sensitivity, normaliser, learning_rate, contraction : float
        The sensitivity ``S`` (:func:`sensitivity`); the normaliser ``N`` of the
        gradient sum; the step size ``eta``; the contraction ``c`` of a step
        (:func:`contraction`).
    rho : float
        Target stationary level ``rho_inf``.

    Returns
    -------
    sigma : float

    Examples
    --------
    >>> from skforget.accounting import noise_scale
    >>> round(noise_scale(rho=0.1, sensitivity=2, normaliser=10000,
    ...                   learning_rate=1 / 0.51, contraction=1 - 0.01 / 0.51), 12)
    0.004450159724
    """
    rho = check_positive(rho, "rho")
    S = check_positive(sensitivity, "sensitivity")
    N = check_positive(normaliser, "normaliser")
    eta = check_positive(learning_rate, "learning_rate")
    c = check_contraction(contraction)
    b = eta * S / N
    return math.sqrt(b * b * (1.0 + c) / (4.0 * eta * rho * (1.0 - c)))


def init_variance(*, sigma, learning_rate, lam):
    """Variance ``v_0 = sigma^2 / (lam (1 - eta lam / 2))`` of the initial draw.

    The stationary law of the step applied to the regulariser alone (CS23
    Def. 5.1; privacy-accounting.md Section 1). Any data-independent start keeps
    the privacy statements valid; ``v_0`` only enters the utility recipe.

    Parameters
    ----------
    sigma, learning_rate, lam : float
        The noise scale ``sigma`` (a step adds ``N(0, 2 eta sigma^2 I)``); the step
        size ``eta``; the regularisation strength ``lambda``.

    Returns
    -------
    v0 : float
    """
    sigma = check_positive(sigma, "sigma")
    eta = check_positive(learning_rate, "learning_rate")
    lam = check_positive(lam, "lam")
    return sigma * sigma / (lam * (1.0 - eta * lam / 2.0))


def steps_fit(*, gradient_bound, lam, n_params, init_variance, sigma, contraction):
    """Training steps ``K_A`` (privacy-accounting.md, Section 7 step 5).

    ``K_A = ceil( ln((G^2 + lam^2 p v_0) / (2 lam sigma^2 p)) / ln(1/c) )`` (0 if
    the argument is <= 1) makes the transient of Corollary 8.2 at most
    ``kappa sigma^2 p``, so ``E[excess risk] <= 2 kappa sigma^2 p``. Privacy does
    not depend on it (Section 6.1).

    Parameters
    ----------
    gradient_bound, lam, n_params, init_variance, sigma, contraction : float or int
        The clipped-gradient bound ``G`` (:func:`gradient_bound`); the
        regularisation strength ``lambda``; the number of parameters ``p``; the
        initial draw's variance ``v_0`` (:func:`init_variance`); the noise scale
        ``sigma`` (a step adds ``N(0, 2 eta sigma^2 I)``); the contraction ``c`` of
        a step (:func:`contraction`).

    Returns
    -------
    steps : int

    Examples
    --------
    >>> from skforget.accounting import steps_fit
    >>> steps_fit(gradient_bound=1, lam=0.01, n_params=21, init_variance=0.002,
    ...           sigma=0.004450159723945581, contraction=1 - 0.01 / 0.51)
    591
    """
    G = check_positive(gradient_bound, "gradient_bound")
    lam = check_positive(lam, "lam")
    p = check_int(n_params, "n_params", low=1)
    v0 = check_nonnegative(init_variance, "init_variance")
    sigma = check_positive(sigma, "sigma")
    c = check_contraction(contraction)
    arg = (G * G + lam * lam * p * v0) / (2.0 * lam * sigma * sigma * p)
    if arg <= 1.0:
        return 0
    if c == 0.0:  # one step reaches the fixed point of the noiseless map
        return 1
    return int(math.ceil(math.log(arg) / _log_inv(c)))


def steps_unlearn_privacy(*, rho_inf, rho_target, contraction):
    """Unlearning steps ``K_R^priv`` for a deletion target (Section 7 step 6).

    The smallest ``K`` with ``rho_del(K) = rho_inf c^(2K) <= rho_target``, i.e.
    ``ceil(ln(rho_inf / rho_target) / (2 ln(1/c)))``, 0 if
    ``rho_target >= rho_inf`` (DP alone already meets the target). The rounding
    is checked against (5.5) itself so the recipe reproduces its target.

    Parameters
    ----------
    rho_inf, contraction : float
        The stationary level ``rho_inf`` (:func:`rho_inf`); the contraction ``c`` of
        a step (:func:`contraction`).
    rho_target : float
        Deletion target ``rho_dd``.

    Returns
    -------
    steps : int

    Examples
    --------
    >>> from skforget.accounting import steps_unlearn_privacy
    >>> steps_unlearn_privacy(rho_inf=0.1, rho_target=0.01, contraction=1 - 0.01 / 0.51)
    59
    """
    r = check_nonnegative(rho_inf, "rho_inf")
    target = check_positive(rho_target, "rho_target")
    c = check_contraction(contraction)
    if target >= r:
        return 0
    if c == 0.0:
        return 1
    K = max(0, int(math.ceil(math.log(r / target) / (2.0 * _log_inv(c)))))
    while K > 0 and rho_deletion(rho_inf=r, contraction=c, steps=K - 1) <= target:
        K -= 1
    while rho_deletion(rho_inf=r, contraction=c, steps=K) > target:
        K += 1
    return K


def steps_unlearn_utility(*, edit_size, sensitivity, group_size, normaliser, lam,
                          beta, sigma, n_params, contraction):
    """Unlearning steps ``K_R^util`` that restore the utility level (Section 7, step 7).

    ``K_R^util = ceil( 2 ln( sqrt(2) + r S_1 / (N sqrt(lam kappa sigma^2 p)) )
    / ln(1/c) )`` with ``S_1 = S / g`` the per-record change of the clipped sum and
    ``lam kappa = lam + beta``: after an edit of ``r`` records the expected excess
    risk is back below ``2 kappa sigma^2 p`` (Lemma 8.3). Guidance, not a
    guarantee.

    Parameters
    ----------
    sensitivity, normaliser, lam, beta, sigma, n_params, contraction : float or int
        The sensitivity ``S`` (:func:`sensitivity`); the normaliser ``N`` of the
        gradient sum; the regularisation strength ``lambda``; the loss's smoothness
        ``beta`` (:func:`smoothness`); the noise scale ``sigma`` (a step adds ``N(0,
        2 eta sigma^2 I)``); the number of parameters ``p``; the contraction ``c``
        of a step (:func:`contraction`).
    edit_size : int
        Records the edit names, ``r``.
    group_size : int
        Records per privacy unit ``g``.

    Returns
    -------
    steps : int

    Examples
    --------
    >>> from skforget.accounting import steps_unlearn_utility
    >>> steps_unlearn_utility(edit_size=1, sensitivity=2, group_size=1,
    ...     normaliser=10000, lam=0.01, beta=0.5, sigma=0.004450159723945581,
    ...     n_params=21, contraction=1 - 0.01 / 0.51)
    36
    """
    r = check_int(edit_size, "edit_size", low=0)
    S = check_positive(sensitivity, "sensitivity")
    g = check_int(group_size, "group_size", low=1)
    N = check_positive(normaliser, "normaliser")
    lam = check_positive(lam, "lam")
    beta = check_nonnegative(beta, "beta")
    sigma = check_positive(sigma, "sigma")
    p = check_int(n_params, "n_params", low=1)
    c = check_contraction(contraction)
    if c == 0.0:
        return 1
    arg = math.sqrt(2.0) + r * (S / g) / (N * math.sqrt((lam + beta) * sigma**2 * p))
    return int(math.ceil(2.0 * math.log(arg) / _log_inv(c)))


def cs23_recipe(*, rho, rho_deletion_target, gradient_bound, lam, beta, normaliser,
                n_params, edit_size):
    """The source paper's recipe (Chourasia and Shah 2023, Theorem 5.1).

    Written with ``rho = eps_dp / q`` and ``rho_dd = eps_dd / q``:
    ``eta = 1/(2M)``, ``sigma^2 = 4 L^2 / (lam rho n^2)``,
    ``K_A = ceil(4 kappa ln(rho n^2 / (4 d)))``,
    ``K_R = ceil(4 kappa ln(rho / rho_dd))`` and the utility count
    ``ceil(4 kappa ln max(5 kappa, 8 rho r^2 / d))`` (privacy-accounting.md,
    Section 9). Kept as a compatibility mode: the guarantee skforget reports for a
    run planned this way is still computed by (5.1)-(5.5), and is far below the
    paper's target (oracle O2).

    Parameters
    ----------
    gradient_bound, lam, beta, normaliser, n_params : float or int
        The clipped-gradient bound ``G`` (:func:`gradient_bound`); the
        regularisation strength ``lambda``; the loss's smoothness ``beta``
        (:func:`smoothness`); the normaliser ``N`` of the gradient sum; the number
        of parameters ``p``.
    rho : float
        DP target ``rho``.
    rho_deletion_target : float
        Deletion target ``rho_dd``.
    edit_size : int
        Records an edit removes, ``r``.

    Returns
    -------
    plan : dict
        ``learning_rate``, ``sigma``, ``init_variance``, ``fit_steps``,
        ``unlearn_steps_privacy``, ``unlearn_steps_utility``.
    """
    rho = check_positive(rho, "rho")
    rho_dd = check_positive(rho_deletion_target, "rho_deletion_target")
    if rho_dd > rho:
        raise ValueError(f"rho_deletion_target={rho_dd!r} must be <= rho={rho!r}: "
                         "CS23 Theorem 5.1 assumes eps_dd <= eps_dp.")
    G = check_positive(gradient_bound, "gradient_bound")
    lam = check_positive(lam, "lam")
    beta = check_nonnegative(beta, "beta")
    N = check_positive(normaliser, "normaliser")
    d = check_int(n_params, "n_params", low=1)
    r = check_int(edit_size, "edit_size", low=0)
    M = lam + beta
    kappa = M / lam
    eta = 1.0 / (2.0 * M)
    sigma2 = 4.0 * G * G / (lam * rho * N * N)
    sigma = math.sqrt(sigma2)

    def ceil_pos(x):
        return max(0, int(math.ceil(x)))

    return {
        "learning_rate": eta,
        "sigma": sigma,
        "init_variance": init_variance(sigma=sigma, learning_rate=eta, lam=lam),
        "fit_steps": ceil_pos(4.0 * kappa * math.log(rho * N * N / (4.0 * d))),
        "unlearn_steps_privacy": ceil_pos(4.0 * kappa * math.log(rho / rho_dd)),
        "unlearn_steps_utility": ceil_pos(
            4.0 * kappa * math.log(max(5.0 * kappa, 8.0 * rho * r * r / d))),
    }


