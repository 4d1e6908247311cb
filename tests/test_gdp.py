# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Gaussian differential privacy of noisy GD (privacy-accounting.md, Section 21).

* O11: the exact Gaussian conversion and its inverse against dp_accounting's PLD
  accountant of a Gaussian mechanism (an independent implementation), to 1e-4.
* The calibration: plans, estimators and guarantees use the Gaussian profile for
  the figure of the records present only, and the Rényi conversion for the
  deletion and adaptive figures (21.4).
* Validity: O5 (the exact Gaussian process, where the bound is attained) and a
  non-Gaussian case (1-D clipped logistic, densities on a grid): the exact
  privacy profile of the pair never exceeds that of ``sqrt(2 rho)``-GDP.
"""

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant as pld
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr
from scipy.stats import norm
from sklearn.datasets import make_classification
from sklearn.preprocessing import normalize

import skforget.accounting as acc
from skforget import EditRequest, NoisyGDClassifier, OutputPerturbationClassifier


def _pld_epsilon(mu, delta):
    """epsilon(delta) of a Gaussian mechanism with sensitivity 1 and noise 1/mu,
    from dp_accounting's privacy-loss-distribution accountant."""
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.GaussianDpEvent(1.0 / mu))
    return accountant.get_epsilon(delta)


def _profile(mu, eps):
    """delta_mu(eps) written afresh with scipy.special.ndtr (DRS22 Cor. 2.13)."""
    return ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2)


# --- O11: the conversion against dp_accounting ------------------------------------


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8])
@pytest.mark.parametrize("mu", [0.05, 0.268051123211, 0.7, 1.666030597845717, 4.0])
def test_o11_gaussian_epsilon_matches_dp_accounting(mu, delta):
    ours = acc.rho_to_epsilon(rho=mu * mu / 2, delta=delta, method="gaussian")
    assert ours == pytest.approx(_pld_epsilon(mu, delta), abs=1e-4)
    assert ours == acc.gaussian_epsilon(rho=mu * mu / 2, delta=delta)
    # It is a root of the profile from the side where the profile is <= delta.
    assert _profile(mu, ours) <= delta * (1 + 1e-12)
    assert ours == 0.0 or _profile(mu, ours * (1 - 1e-9)) > delta


@pytest.mark.parametrize("eps, rho", [
    # Section 21.5's table.
    (0.1, 0.00052880069781512), (1.0, 0.0359257023274181), (8.0, 1.38782897647908)])
def test_o11_inverse_matches_dp_accounting_and_the_table(eps, rho):
    got = acc.epsilon_to_rho(epsilon=eps, delta=1e-5, method="gaussian")
    assert got == pytest.approx(rho, rel=1e-9)
    assert got <= rho * (1 + 1e-12) or _profile(math.sqrt(2 * got), eps) <= 1e-5
    # dp_accounting at that noise spends epsilon (to its discretisation).
    assert _pld_epsilon(math.sqrt(2 * got), 1e-5) == pytest.approx(eps, abs=1e-4)
    # Never above the target once converted back.
    assert acc.rho_to_epsilon(rho=got, delta=1e-5, method="gaussian") <= eps


def test_o11_variance_ratio_at_equal_guarantee():
    """Noise variance is proportional to 1/rho (eq. 5.2, 12.6, 15.2): the ratio
    new/old at equal (epsilon, delta) is rho_improved / rho_gaussian, with the
    improved figures pinned by O3 and the Gaussian ones by dp_accounting above."""
    ratios = {eps: acc.epsilon_to_rho(epsilon=eps, delta=1e-5)
              / acc.epsilon_to_rho(epsilon=eps, delta=1e-5, method="gaussian")
              for eps in (0.1, 1.0, 8.0)}
    assert ratios[0.1] == pytest.approx(0.00043299372940180963 / 0.00052880069781512,
                                        rel=1e-6)
    assert ratios[1.0] == pytest.approx(0.030556595197639563 / 0.0359257023274181,
                                        rel=1e-6)
    assert all(r < 0.89 for r in ratios.values())


@settings(max_examples=60, deadline=None)
@given(rho=st.floats(1e-6, 20.0), delta=st.sampled_from([1e-3, 1e-5, 1e-7, 1e-10]))
def test_gaussian_below_improved_and_round_trip(rho, delta):
    gauss = acc.rho_to_epsilon(rho=rho, delta=delta, method="gaussian")
    assert gauss <= acc.rho_to_epsilon(rho=rho, delta=delta)
    if gauss > 1e-6:
        back = acc.epsilon_to_rho(epsilon=gauss, delta=delta, method="gaussian")
        assert back == pytest.approx(rho, rel=1e-7)
        assert acc.rho_to_epsilon(rho=back, delta=delta, method="gaussian") <= gauss
        # Gaussian inverse gives the largest rho of every conversion (21.5).
        assert back >= acc.epsilon_to_rho(epsilon=gauss, delta=delta) * (1 - 1e-9)


def test_a_composed_rho_converts_like_one_gaussian():
    """GDP composes as rho adds (DRS22 Cor. 3.3): a count release of rho_n and a
    fit of rho_gd convert as one Gaussian of rho_n + rho_gd (Section 21.4, 7)."""
    rho_n, rho_gd = 0.00152783, 0.0343
    mu = math.sqrt(2 * (rho_n + rho_gd))
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_event.ComposedDpEvent([
        dp_event.GaussianDpEvent(1 / math.sqrt(2 * rho_n)),
        dp_event.GaussianDpEvent(1 / math.sqrt(2 * rho_gd))]))
    ours = acc.rho_to_epsilon(rho=acc.rho_compose(rhos=[rho_n, rho_gd]), delta=1e-5,
                              method="gaussian")
    assert ours == pytest.approx(accountant.get_epsilon(1e-5), abs=1e-4)
    assert ours == pytest.approx(_pld_epsilon(mu, 1e-5), abs=1e-4)


def test_conversion_choices():
    assert acc.gdp_mu(rho=0.125) == 0.5
    assert acc.dp_conversion(recipe="tight") == "gaussian"
    assert acc.dp_conversion(recipe="cs23") == "improved"
    with pytest.raises(ValueError, match="method"):
        acc.epsilon_at_order(order=10, rdp_epsilon=1.0, delta=1e-5, method="gaussian")
    # Information only: the Rényi order of the improved conversion.
    assert acc.optimal_order(rho=0.1, delta=1e-5, method="gaussian") == \
        acc.optimal_order(rho=0.1, delta=1e-5)


# --- The calibration -----------------------------------------------------------

N, P, LAM, R, L, ETA = 10000, 21, 0.01, 2 ** 0.5, 1.0, 1 / 0.51
SIGMA_O3 = 0.008050504895075037   # O3, improved conversion
RHO_O3 = 0.030556595197639563


def test_plan_calibrates_the_dp_target_only_to_the_gaussian_profile():
    plan = acc.plan_training(loss="logistic", n_samples=N, n_params=P, lam=LAM,
                             row_norm=R, clip_norm=L, epsilon=1.0, delta=1e-5,
                             deletion_epsilon=0.1, learning_rate=ETA)
    rho_g = acc.epsilon_to_rho(epsilon=1.0, delta=1e-5, method="gaussian")
    assert plan.conversion == "gaussian"
    assert plan.rho_target == rho_g
    # sigma^2 = S^2 (2 - eta lam) / (4 lam rho N^2) (5.2): O3's sigma rescaled.
    assert plan.sigma == pytest.approx(SIGMA_O3 * math.sqrt(RHO_O3 / rho_g), rel=1e-6)
    # The deletion target by the same profile (Corollary 21.5): Section 21.5's
    # table, K_R^priv by eq. 5.5's recipe.
    assert plan.rho_deletion_target == pytest.approx(0.00052880069781512, rel=1e-9)
    c = 1 - ETA * LAM
    k = math.ceil(math.log(plan.rho_inf / plan.rho_deletion_target)
                  / (2 * math.log(1 / c)))
    assert plan.unlearn_steps_privacy == k
    cs23 = acc.plan_training(loss="logistic", n_samples=N, n_params=P, lam=LAM,
                             row_norm=R, clip_norm=L, epsilon=1.0, delta=1e-5,
                             deletion_epsilon=0.1, recipe="cs23")
    assert cs23.conversion == "improved"
    with pytest.raises(ValueError, match="cs23"):
        acc.plan_training(loss="logistic", n_samples=N, n_params=P, lam=LAM,
                          row_norm=R, clip_norm=L, epsilon=1.0, delta=1e-5,
                          deletion_epsilon=0.1, recipe="cs23", conversion="gaussian")


@pytest.fixture
def data():
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    return normalize(X), y


@pytest.mark.parametrize("batch_size", [None, 50])
def test_guarantee_records_its_conversion_for_every_figure(data, batch_size):
    X, y = data
    clf = NoisyGDClassifier(epsilon=1.0, deletion_epsilon=0.5, batch_size=batch_size,
                            classes=[0, 1], random_state=None).fit(X, y)
    g = clf.privacy_guarantee_
    assert g.conversion == "gaussian" and "Corollaries 21.4, 21.5" in g.conversion_note
    assert g.epsilon == acc.rho_to_epsilon(rho=g.rho, delta=g.delta, method="gaussian")
    assert g.epsilon <= 1.0
    assert g.mu == pytest.approx(math.sqrt(2 * g.rho))
    assert "Gaussian DP" in str(g)
    clf.partial_unlearn(EditRequest(X, y, delete=[0, 1]))
    g2 = clf.privacy_guarantee_
    cert = g2.deletion
    assert g2.conversion == "gaussian"
    assert g2.epsilon == acc.rho_to_epsilon(rho=g2.rho, delta=g2.delta,
                                            method="gaussian") <= 1.0
    for rho, eps in ((cert.rho_deletion, cert.epsilon_deletion),
                     (cert.rho_adaptive, cert.epsilon_adaptive)):
        assert eps == acc.rho_to_epsilon(rho=rho, delta=g2.delta, method="gaussian")
    if not cert.retrained:
        assert cert.epsilon_deletion <= 0.5


def test_cs23_and_output_perturbation_conversions(data):
    X, y = data
    g = NoisyGDClassifier(epsilon=1.0, recipe="cs23", batch_size=None,
                          classes=[0, 1]).fit(X, y).privacy_guarantee_
    assert g.conversion == "improved" and g.mu is None
    assert g.epsilon == acc.rho_to_epsilon(rho=g.rho, delta=g.delta)
    op = OutputPerturbationClassifier(epsilon=1.0, classes=[0, 1]).fit(X, y)
    g = op.privacy_guarantee_
    # A Gaussian mechanism: exactly sqrt(2 rho)-GDP (Sections 15.4, 21.4).
    assert g.conversion == "gaussian"
    assert g.epsilon == pytest.approx(_pld_epsilon(math.sqrt(2 * g.rho), g.delta),
                                      abs=1e-4)


# --- Validity: O5 (exact Gaussian process) ---------------------------------------

# privacy-accounting.md, O5: c = 0.9, b = 1, s^2 = 1, v_0 = 5.2631578947368425.
O5 = dict(c=0.9, b=1.0, s2=1.0, v0=5.2631578947368425, rho_inf=0.5 * 1.9 / 0.1)


@pytest.mark.parametrize("start, k_a, k_r", [
    ("point", 1, 0), ("point", 10, 0), ("point", 100, 0), ("point", 100, 10),
    ("point", 1000, 20), ("init", 1, 0), ("init", 10, 0), ("init", 100, 10)])
def test_o5_exact_tradeoff_is_above_the_claimed_gdp(start, k_a, k_r):
    c, b, s2, v0 = O5["c"], O5["b"], O5["s2"], O5["v0"]
    T = k_a + k_r
    m = b * (1 - c ** k_a) / (1 - c) * c ** k_r
    V = (c ** (2 * T)) * (v0 if start == "init" else 0.0) \
        + s2 * (1 - c ** (2 * T)) / (1 - c * c)
    bound = acc.rho_joint(rho_inf=O5["rho_inf"], contraction=c, steps_present=k_a,
                          steps_absent=k_r)
    mu_exact, mu_claim = abs(m) / math.sqrt(V), math.sqrt(2 * bound)
    # (F1): the pair is exactly G_{mu_exact}; the claim is G_{mu_claim}.
    assert mu_exact <= mu_claim * (1 + 1e-12)
    if start == "point" and k_r == 0:
        assert mu_exact == pytest.approx(mu_claim, rel=1e-12)  # attained
    # The exact profile of the pair, from the two Gaussians by quadrature-free
    # Neyman-Pearson, at the claimed epsilon of several deltas.
    for delta in (1e-2, 1e-5, 1e-9):
        eps = acc.rho_to_epsilon(rho=bound, delta=delta, method="gaussian")
        exact = (norm.sf(eps * math.sqrt(V) / abs(m) - abs(m)
                         / (2 * math.sqrt(V)))
                 - math.exp(eps) * norm.sf(eps * math.sqrt(V) / abs(m)
                                           + abs(m) / (2 * math.sqrt(V))))
        assert exact <= delta * (1 + 1e-9)


# --- Validity: a non-Gaussian pair (clipped logistic on a grid) -------------------

from test_accounting_properties import (  # noqa: E402
    P3_L,
    P3_LAM,
    P3_N,
    P3_R,
    P3_XS,
    P3_YS,
    _clipped_logistic_step,
    _evolve,
    _kernel,
    _p3_setup,
)


def _grid_profile(p, q, h, eps):
    """delta(eps) = integral of (p - e^eps q)_+ (the exact profile of the pair)."""
    return h * np.maximum(p[None, :] - np.exp(eps)[:, None] * q[None, :], 0).sum(1)


@pytest.mark.slow
def test_clipped_logistic_profile_below_the_gdp_profile():
    """Theorem 21.3 on a pair whose laws are not Gaussian: at every step the exact
    privacy profile (both orders) is at most delta_mu of mu = sqrt(2 rho_joint).
    Checking every epsilon of a fine grid checks the whole tradeoff curve (F5)."""
    beta = acc.smoothness(loss="logistic", row_norm=P3_R)
    M = P3_LAM + beta
    eps_grid = np.linspace(0.0, 6.0, 121)
    worst, checked = 0.0, 0
    for relation in ("replace", "zero_out"):
        for eta in (1 / M, acc.max_learning_rate(lam=P3_LAM, beta=beta)):
            for target in (1.0, 0.1):
                cfg = _p3_setup(relation, eta, target)
                grid, h, c = cfg["grid"], cfg["grid"][1] - cfg["grid"][0], cfg["c"]
                opts = dict(L=P3_L, N=P3_N, eta=cfg["eta"], lam=P3_LAM)
                with_unit = _clipped_logistic_step(P3_XS + [1.0], P3_YS + [0.0], **opts)
                if relation == "replace":
                    without = _clipped_logistic_step(P3_XS + [1.0], P3_YS + [1.0],
                                                     **opts)
                else:
                    without = _clipped_logistic_step(P3_XS, P3_YS, **opts)
                k_w = _kernel(grid, with_unit, cfg["s"])
                k_o = _kernel(grid, without, cfg["s"])
                k_a, k_r = 30, 15
                laws = _evolve(grid, cfg["p0"], (k_w, k_o), k_o, k_a, k_r)
                for k, p, q, _, _ in laws:
                    ka, kr = min(k, k_a), max(0, k - k_a)
                    rho = acc.rho_joint(rho_inf=cfg["r_inf"], contraction=c,
                                        steps_present=ka, steps_absent=kr)
                    mu = math.sqrt(2 * rho)
                    claim = np.array([_profile(mu, e) for e in eps_grid])
                    for a, b_ in ((p, q), (q, p)):
                        exact = _grid_profile(a, b_, h, eps_grid)
                        live = claim > 1e-9
                        bound = claim[live] * (1 + 1e-6) + 1e-12
                        assert np.all(exact[live] <= bound), (relation, eta, target, k)
                        assert np.all(exact[~live] <= 1e-9 + 1e-12)
                        worst = max(worst, float(np.max(exact[live] / claim[live])))
                        checked += int(live.sum())
    assert checked > 5000
    # Close to the worst case, so the check has power.
    assert 0.3 < worst <= 1.0 + 1e-6
