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
from scipy.stats import norm

from skforget.accounting._checks import (
    check_choice,
    check_nonnegative,
    check_positive,
    check_probability,
    check_real,
)

CONVERSIONS = ("improved", "classic")


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
    check_choice(method, "method", CONVERSIONS)
    return max(0.0, _epsilon_at_order(q, eps_q, delta, method))


def _epsilon_at_order(q, eps_q, delta, method):
    if math.isinf(q):
        return math.inf if eps_q > 0 else 0.0
    if method == "classic":
        return eps_q + math.log(1.0 / delta) / (q - 1.0)
    return eps_q + math.log1p(-1.0 / q) - (math.log(delta) + math.log(q)) / (q - 1.0)


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

    Parameters
    ----------
    rho : float
        The rho-coefficient, ``>= 0``.
    delta : float
        Target delta in (0, 1).
    method : {"improved", "classic"}, default="improved"

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
    q = _best_order(rho, delta, method)
    return max(0.0, _epsilon_at_order(q, q * rho, delta, method))


def optimal_order(*, rho, delta, method="improved"):
    """The Rényi order at which :func:`rho_to_epsilon` attains its minimum.

    Reported for information only (privacy-accounting.md, Section 6.4): the
    guarantee holds at every order.

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
    return _best_order(rho, delta, method)


def epsilon_to_rho(*, epsilon, delta, method="improved"):
    """Largest rho-coefficient whose conversion is at most (epsilon, delta).

    Classic (Mironov 2017, Prop. 3) has the closed form
    ``rho = (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)))**2``. The improved
    conversion (Balle et al. 2020, Thm 21) is increasing in rho, so the target is
    found by bracketing and Brent's method; the returned value is checked to
    convert back to at most ``epsilon`` (privacy-accounting.md, Section 6.4).

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta in (0, 1).
    method : {"improved", "classic"}, default="improved"

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
    return _epsilon_to_rho(epsilon, delta, method)


@functools.lru_cache(maxsize=1024)
def _epsilon_to_rho(epsilon, delta, method):
    log_inv_delta = math.log(1.0 / delta)
    rho_classic = (math.sqrt(log_inv_delta + epsilon) - math.sqrt(log_inv_delta)) ** 2
    if method == "classic":
        return rho_classic

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


def gaussian_epsilon(*, rho, delta):
    """Exact (epsilon, delta) curve of a Gaussian mechanism with rho = mu**2 / 2.

    Balle and Wang (2018), Theorem 8: the privacy profile of two Gaussians at
    distance ``mu`` (in units of the noise std) is
    ``delta(eps) = Phi(-eps/mu + mu/2) - exp(eps) Phi(-eps/mu - mu/2)``. Its
    Rényi curve is exactly ``q * rho`` with ``rho = mu**2 / 2``, so this is the
    smallest epsilon any conversion of a rho-coefficient could hope to reach. It is
    a reference (tests, audits), never a reported guarantee: a general
    rho-coefficient does not imply the Gaussian profile.

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
    rho = check_nonnegative(rho, "rho")
    delta = check_probability(delta, "delta")
    if rho == 0.0:
        return 0.0
    mu = math.sqrt(2.0 * rho)

    def profile(eps):
        a = norm.cdf(-eps / mu + mu / 2.0)
        b = math.exp(eps + norm.logcdf(-eps / mu - mu / 2.0))
        return a - b - delta

    if profile(0.0) <= 0.0:
        return 0.0
    hi = rho_to_epsilon(rho=rho, delta=delta, method="classic") + 1.0
    return brentq(profile, 0.0, hi, xtol=1e-14, rtol=1e-14)


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
