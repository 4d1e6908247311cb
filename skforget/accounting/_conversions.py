# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""From Rényi guarantees to (epsilon, delta) statements, and back.

Every guarantee in skforget is a *rho-coefficient*: ``R_q(P || Q) <= q * rho`` for
every order ``q > 1`` at once (privacy-accounting.md, Section 1). Such a curve is
turned into a readable ``(epsilon, delta)`` figure by minimising a conversion over
the order, so the user never has to pick ``q``.
"""

import functools
import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_ndtr, ndtr

from skforget.accounting._checks import (
    check_choice,
    check_nonnegative,
    check_positive,
    check_probability,
    check_real,
)

CONVERSIONS = ("improved", "classic", "gaussian")
#: Smallest epsilon target :func:`epsilon_to_rho` accepts.
EPSILON_MIN = 1e-12
#: Conversions of a Rényi curve at one order (the Gaussian profile is not one).
ORDER_CONVERSIONS = ("improved", "classic")


def _renyi_method(conversion):
    """The conversion at one Rényi order that stands for ``conversion`` where an
    order is asked for (information only): ``"improved"`` for ``"gaussian"``."""
    return "improved" if conversion == "gaussian" else conversion


def epsilon_at_order(*, order, rdp_epsilon, delta, method="improved"):
    """(epsilon, delta)-DP implied by an (order, rdp_epsilon) Rényi guarantee.

    ``classic`` is Mironov (2017), Proposition 3:
    ``eps = eps_q + ln(1/delta) / (q - 1)``.
    ``improved`` is Balle et al. (2020), Theorem 21 (equivalently Canonne, Kamath
    and Steinke 2020, Proposition 12; Asoodeh et al. 2020):
    ``eps = eps_q + ln((q - 1)/q) - (ln(delta) + ln(q)) / (q - 1)``. It is never
    larger than the classic figure. The result is clamped at 0.

    Parameters
    ----------
    order : float
        Rényi order ``q > 1``.
    rdp_epsilon : float
        Rényi divergence bound at that order, ``>= 0``.
    delta : float
        Target delta in (0, 1).
    method : {"improved", "classic"}, default="improved"
        Which conversion theorem to apply.

    Returns
    -------
    epsilon : float

    Examples
    --------
    >>> from skforget.accounting import epsilon_at_order
    >>> round(epsilon_at_order(order=10, rdp_epsilon=1.0, delta=1e-5), 6)
    1.918011
    """
    q = check_real(order, "order", low=1.0)
    eps_q = check_nonnegative(rdp_epsilon, "rdp_epsilon")
    delta = check_probability(delta, "delta")
    check_choice(method, "method", ORDER_CONVERSIONS)
    return max(0.0, _epsilon_at_order(q, eps_q, delta, method))


def _epsilon_at_order(q, eps_q, delta, method):
    if math.isinf(q):
        return math.inf if eps_q > 0 else 0.0
    if method == "classic":
        return eps_q + math.log(1.0 / delta) / (q - 1.0)
    return eps_q + math.log1p(-1.0 / q) - (math.log(delta) + math.log(q)) / (q - 1.0)


@functools.lru_cache(maxsize=4096)
def _best_order(rho, delta, method):
    """Order minimising the conversion of the curve ``q -> q * rho``.

    Classic has a closed-form optimum (``q* = 1 + sqrt(ln(1/delta)/rho)``). The
    improved conversion is minimised numerically in ``t = ln(q - 1)``: a log grid
    brackets the minimum, bounded Brent refines it. Any order gives a valid
    epsilon, so an approximate search can only cost tightness, never soundness.
    """
    log_inv_delta = math.log(1.0 / delta)
    q_classic = 1.0 + math.sqrt(log_inv_delta / rho)
    if method == "classic":
        return q_classic

    def objective(t):
        q = 1.0 + math.exp(t)
        return _epsilon_at_order(q, q * rho, delta, method)

    centre = math.log(q_classic - 1.0)
    grid = np.linspace(centre - 10.0, centre + 4.0, 57)
    values = [objective(t) for t in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = minimize_scalar(objective, bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-12})
    t_best = res.x if res.fun <= values[i] else grid[i]
    return 1.0 + math.exp(t_best)


def rho_to_epsilon(*, rho, delta, method="improved"):
    """Smallest epsilon such that a rho-coefficient gives (epsilon, delta)-DP.

    Minimises :func:`epsilon_at_order` over the order for the Rényi curve
    ``eps_q = q * rho`` (valid at every ``q > 1``). ``improved`` (default) uses
    Balle et al. (2020), Theorem 21; ``classic`` uses Mironov (2017), Proposition 3,
    whose optimum is ``rho + 2 sqrt(rho ln(1/delta))``. See privacy-accounting.md,
    Section 6.4.

    ``gaussian`` is the exact privacy profile of ``mu``-GDP with
    ``mu = sqrt(2 rho)`` (Dong, Roth and Su 2022, Corollary 2.13; Balle and Wang
    2018, Theorem 8): valid **only** when the two laws are ``sqrt(2 rho)``-GDP, which
    privacy-accounting.md, Section 21 proves for the noisy-GD figure of the records
    present (Corollary 21.4) and which holds for a Gaussian mechanism and for sums
    of such rho (GDP composes as rho adds). A general rho-coefficient does not imply
    it; the accountant, not the user, chooses this method.

    Parameters
    ----------
    rho : float
        The rho-coefficient, ``>= 0``.
    delta : float
        Target delta in (0, 1).
    method : {"improved", "classic", "gaussian"}, default="improved"

    Returns
    -------
    epsilon : float

    Examples
    --------
    >>> from skforget.accounting import rho_to_epsilon
    >>> round(rho_to_epsilon(rho=0.1, delta=1e-5), 6)
    1.914239
    """
    rho = check_nonnegative(rho, "rho")
    delta = check_probability(delta, "delta")
    check_choice(method, "method", CONVERSIONS)
    return _rho_to_epsilon(rho, delta, method)


@functools.lru_cache(maxsize=4096)
def _rho_to_epsilon(rho, delta, method):
    # Cached: every fit and edit converts a handful of figures, and a grid
    # search refits many times with the same targets.
    if rho == 0.0:
        return 0.0
    if math.isinf(rho):
        return math.inf
    if method == "gaussian":
        return _gdp_epsilon(math.sqrt(2.0 * rho), delta)
    q = _best_order(rho, delta, method)
    return max(0.0, _epsilon_at_order(q, q * rho, delta, method))


def optimal_order(*, rho, delta, method="improved"):
    """The Rényi order at which :func:`rho_to_epsilon` attains its minimum.

    Reported for information only (privacy-accounting.md, Section 6.4): the
    guarantee holds at every order. The Gaussian profile is not a conversion at
    one order: for ``method="gaussian"`` the improved conversion's order is
    returned (Section 21.5).

    Parameters
    ----------
    rho : float
        Rényi coefficient ``rho``: ``R_q <= q rho`` at every order ``q > 1``.
    delta : float
        Target ``delta`` of the (epsilon, delta) statement.
    method : {"improved", "classic"}, default="improved"
        Rényi-to-(epsilon, delta) conversion (privacy-accounting.md, Section 6.4).

    Returns
    -------
    order : float

    Examples
    --------
    >>> from skforget.accounting import optimal_order
    >>> round(optimal_order(rho=0.1, delta=1e-5, method="classic"), 4)
    11.7298
    """
    rho = check_positive(rho, "rho")
    delta = check_probability(delta, "delta")
    check_choice(method, "method", CONVERSIONS)
    return _best_order(rho, delta, _renyi_method(method))


def epsilon_to_rho(*, epsilon, delta, method="improved"):
    """Largest rho-coefficient whose conversion is at most (epsilon, delta).

    Classic (Mironov 2017, Prop. 3) has the closed form
    ``rho = (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)))**2``. The improved
    conversion (Balle et al. 2020, Thm 21) is increasing in rho, so the target is
    found by bracketing and Brent's method; the returned value is checked to
    convert back to at most ``epsilon`` (privacy-accounting.md, Section 6.4).
    ``gaussian`` inverts the exact GDP profile (Section 21.5): the largest
    ``mu`` with ``delta_mu(epsilon) <= delta``, returned as ``mu**2 / 2``; use it
    only where :func:`rho_to_epsilon`'s ``gaussian`` method is valid.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta in (0, 1).
    method : {"improved", "classic", "gaussian"}, default="improved"

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import epsilon_to_rho
    >>> round(epsilon_to_rho(epsilon=1.0, delta=1e-5), 8)
    0.0305566
    """
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    check_choice(method, "method", CONVERSIONS)
    if epsilon < EPSILON_MIN:
        # Below it the conversions' roots sit under their float64 resolution
        # (the exact one's refinement would step for ever).
        raise ValueError(f"epsilon={epsilon!r} is below {EPSILON_MIN:g}, the "
                         "smallest target the accountant resolves in float64.")
    return _epsilon_to_rho(epsilon, delta, method)


@functools.lru_cache(maxsize=1024)
def _epsilon_to_rho(epsilon, delta, method):
    log_inv_delta = math.log(1.0 / delta)
    # (sqrt(L + eps) - sqrt(L))^2 without the cancellation, which rounds it
    # to 0 for eps below about 1e-15 L.
    rho_classic = (epsilon / (math.sqrt(log_inv_delta + epsilon)
                              + math.sqrt(log_inv_delta))) ** 2
    if method == "classic":
        # Never a rho whose conversion overshoots the target (by rounding).
        while _rho_to_epsilon(rho_classic, delta, method) > epsilon:
            rho_classic = math.nextafter(rho_classic, 0.0)
        return rho_classic
    if method == "gaussian":
        return _gdp_rho(epsilon, delta, rho_classic)

    def gap(rho):
        return _rho_to_epsilon(rho, delta, method) - epsilon

    # improved <= classic, so the classic rho is a lower bracket.
    lo, hi = rho_classic, 2.0 * rho_classic
    while gap(hi) <= 0.0:
        lo, hi = hi, 2.0 * hi
    rho = brentq(gap, lo, hi, xtol=1e-300, rtol=1e-14, maxiter=500)
    # Never report a rho whose conversion overshoots the target.
    while gap(rho) > 0.0:
        rho = math.nextafter(rho, 0.0) * (1.0 - 1e-13)
    return rho


def _gdp_delta(mu, eps):
    """``delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``, the
    privacy profile of ``mu``-GDP (Dong, Roth and Su 2022, Corollary 2.13)."""
    # scipy.special's ufuncs are what norm.cdf / norm.logcdf evaluate, bit for
    # bit, without scipy.stats' argument handling (30 us a call): every
    # certificate's conversion calls this a few hundred times.
    a = float(ndtr(-eps / mu + mu / 2.0))
    b = math.exp(eps + float(log_ndtr(-eps / mu - mu / 2.0)))
    return a - b


def _gdp_epsilon(mu, delta):
    """Smallest ``eps >= 0`` with ``delta_mu(eps) <= delta`` (the profile falls in
    eps); the root is refined to the side where the profile is at most delta."""
    if _gdp_delta(mu, 0.0) <= delta:
        return 0.0
    hi = mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta)) + 1.0
    while _gdp_delta(mu, hi) > delta:
        hi *= 2.0
    eps = brentq(lambda e: _gdp_delta(mu, e) - delta, 0.0, hi, xtol=1e-15,
                 rtol=1e-15, maxiter=500)
    while _gdp_delta(mu, eps) > delta:  # never report an epsilon below the root
        eps = math.nextafter(eps, math.inf) * (1.0 + 1e-15)
    return eps


def _gdp_rho(epsilon, delta, rho_floor):
    """Largest ``mu**2 / 2`` with ``delta_mu(epsilon) <= delta``; the profile rises
    in ``mu``. ``rho_floor`` (the classic Rényi inverse, which is valid for every
    rho-coefficient and so for GDP) brackets it from below."""
    lo = math.sqrt(2.0 * rho_floor)
    hi = 2.0 * lo
    while _gdp_delta(hi, epsilon) <= delta:
        lo, hi = hi, 2.0 * hi
    mu = brentq(lambda m: _gdp_delta(m, epsilon) - delta, lo, hi, xtol=1e-300,
                rtol=1e-15, maxiter=500)
    rho = mu * mu / 2.0
    while _rho_to_epsilon(rho, delta, "gaussian") > epsilon:
        rho = math.nextafter(rho, 0.0) * (1.0 - 1e-13)
    return rho


def gaussian_epsilon(*, rho, delta):
    """Exact (epsilon, delta) curve of a Gaussian mechanism with rho = mu**2 / 2.

    Balle and Wang (2018), Theorem 8: the privacy profile of two Gaussians at
    distance ``mu`` (in units of the noise std) is
    ``delta(eps) = Phi(-eps/mu + mu/2) - exp(eps) Phi(-eps/mu - mu/2)``, the
    profile of ``mu``-GDP (Dong, Roth and Su 2022, Corollary 2.13). Same value as
    ``rho_to_epsilon(rho=rho, delta=delta, method="gaussian")``, which is where
    the accountant uses it (privacy-accounting.md, Section 21); this name is kept
    for references and audits.

    Parameters
    ----------
    rho : float
        Rho-coefficient of the Gaussian mechanism, ``mu^2 / 2``.
    delta : float
        Target ``delta`` of the (epsilon, delta) statement.

    Returns
    -------
    epsilon : float

    Examples
    --------
    >>> from skforget.accounting import gaussian_epsilon
    >>> round(gaussian_epsilon(rho=0.1, delta=1e-5), 6)
    1.760057
    """
    return rho_to_epsilon(rho=rho, delta=delta, method="gaussian")


def gdp_mu(*, rho):
    """``mu = sqrt(2 rho)`` of a figure that is ``mu``-Gaussian DP.

    privacy-accounting.md, Section 21: the figures of noisy GD (``recipe=
    "tight"``) and of output perturbation are ``sqrt(2 rho)``-GDP (Corollaries
    21.4, 21.5; Dong, Roth and Su 2022), i.e. no test tells the two laws apart
    better than one telling ``N(0, 1)`` from ``N(mu, 1)``. Only meaningful for
    figures whose guarantee records ``conversion="gaussian"``.

    Parameters
    ----------
    rho : float
        The figure's rho-coefficient.

    Returns
    -------
    mu : float

    Examples
    --------
    >>> from skforget.accounting import gdp_mu
    >>> gdp_mu(rho=0.125)
    0.5
    """
    return math.sqrt(2.0 * check_nonnegative(rho, "rho"))


def advantage_bound_dp(*, epsilon, delta):
    """Bound on the advantage (TPR - FPR) of any membership test against an
    ``(epsilon, delta)``-DP release: ``(e^epsilon - 1 + 2 delta) /
    (e^epsilon + 1)``, capped at 1.

    The test's rates satisfy ``TPR <= e^epsilon FPR + delta`` and ``1 - FPR
    <= e^epsilon (1 - TPR) + delta`` (Kairouz, Oh & Viswanath 2015, Theorem
    2.1); the largest ``TPR - FPR`` has both equalities, at ``FPR = (1 -
    delta) / (e^epsilon + 1)``. For a figure that is a Rényi curve with no
    finite rho-coefficient (a private search, Section 17), where
    :func:`advantage_bound` does not apply.

    Parameters
    ----------
    epsilon : float
    delta : float

    Returns
    -------
    advantage : float
        At most 1.

    Examples
    --------
    >>> from skforget.accounting import advantage_bound_dp
    >>> round(advantage_bound_dp(epsilon=1.0, delta=0.0), 4)
    0.4621
    """
    epsilon = check_nonnegative(epsilon, "epsilon")
    delta = check_nonnegative(delta, "delta")
    if math.isinf(epsilon):
        return 1.0
    return min(1.0, (math.expm1(epsilon) + 2.0 * delta) / (math.exp(epsilon) + 1.0))


def advantage_bound(*, rho):
    """Bound on the advantage (TPR - FPR) of any membership test.

    Total variation is at most ``sqrt(KL / 2)`` (Pinsker) and
    ``KL = lim_{q -> 1} R_q <= rho`` for a rho-coefficient, so every test that
    tries to tell the two models apart has ``TPR - FPR <= sqrt(rho / 2)``
    (privacy-accounting.md, Section 6.4), capped at 1.

    Parameters
    ----------
    rho : float
        Rho-coefficient of the two models' divergence.

    Returns
    -------
    advantage : float
        At most 1.

    Examples
    --------
    >>> from skforget.accounting import advantage_bound
    >>> round(advantage_bound(rho=0.01), 4)
    0.0707
    """
    rho = check_nonnegative(rho, "rho")
    return min(1.0, math.sqrt(rho / 2.0))
