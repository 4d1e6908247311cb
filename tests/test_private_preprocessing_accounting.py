"""Figures of privacy-accounting.md, Section 19, against closed forms,
dp_accounting and an empirical frequency."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, norm

from skforget.accounting import (
    approximate_zcdp_epsilon,
    epsilon_to_rho,
    gaussian_noise_for_rho,
    histogram_sensitivity,
    moments_sensitivity,
    partition_selection,
    partition_selection_delta,
    pipeline_edit_certificate,
    release_guarantee,
    rho_gaussian,
    rho_to_epsilon,
    split_private_pipeline,
)


@pytest.mark.parametrize("relation, g, expected", [
    ("replace", 1, math.sqrt(2)), ("zero_out", 1, 1.0),
    ("replace", 3, 3 * math.sqrt(2)), ("zero_out", 4, 4.0)])
def test_histogram_sensitivity(relation, g, expected):
    assert histogram_sensitivity(relation=relation, group_size=g) == \
        pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("relation", ["replace", "zero_out"])
def test_moments_sensitivity_is_sqrt3_g_and_attained(relation):
    assert moments_sensitivity(relation=relation, group_size=2) == \
        pytest.approx(2 * math.sqrt(3))
    # Attained: an observed value at the top against a missing one.
    assert np.linalg.norm([1.0, 1.0, 1.0]) == pytest.approx(math.sqrt(3))


def test_rho_gaussian_matches_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    sigma, delta_ = 7.3, math.sqrt(2)
    rho = rho_gaussian(noise_scale=sigma, sensitivity=delta_)
    orders = [1.5, 2.0, 8.0, 64.0]
    acc = rdp.RdpAccountant(orders)
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=sigma / delta_))
    for order, value in zip(orders, acc._rdp, strict=True):
        assert value == pytest.approx(order * rho, rel=1e-9)
    assert gaussian_noise_for_rho(rho=rho, sensitivity=delta_) == pytest.approx(sigma)


def test_partition_selection_threshold_inverts_delta():
    sigma, tau = partition_selection(rho=0.004, delta=3e-7, relation="zero_out",
                                     group_size=2)
    assert sigma == pytest.approx(2 / math.sqrt(0.008))
    assert partition_selection_delta(noise_scale=sigma, threshold=tau,
                                     group_size=2) == pytest.approx(3e-7, rel=1e-9)
    assert 2 * norm.sf((tau - 2) / sigma) == pytest.approx(3e-7, rel=1e-9)


def test_partition_selection_empirical_frequency():
    # A value held by one record is selected with probability sf((tau - 1)/sigma).
    sigma, tau = 1.0, 2.5
    rng = np.random.default_rng(0)
    draws = 200_000
    hits = int(np.sum(1 + rng.normal(0, sigma, draws) > tau))
    p = partition_selection_delta(noise_scale=sigma, threshold=tau)
    assert binomtest(hits, draws, p).pvalue > 1e-4


def test_approximate_zcdp_conversion():
    eps, delta = approximate_zcdp_epsilon(rho=0.05, delta_conversion=1e-6,
                                          delta_selection=1e-3)
    assert delta == pytest.approx(1e-6 + 1e-3)
    assert eps == pytest.approx(rho_to_epsilon(rho=0.05, delta=1e-6)
                                + math.log(1 / (1 - 1e-3)))


def test_split_oracle():
    b = split_private_pipeline(epsilon=1.0, delta=1e-5)
    assert b.delta_conversion == pytest.approx(9e-6)
    assert b.delta_selection == pytest.approx(1e-6)
    assert b.rho == pytest.approx(epsilon_to_rho(epsilon=1 + math.log1p(-1e-6),
                                                 delta=9e-6))
    assert b.rho_preprocessing == pytest.approx(0.25 * b.rho)
    assert round(b.rho, 7) == 0.0302084
    assert round(b.estimator_epsilon, 5) == 0.85536


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.05, 20), log_delta=st.floats(-12, -3),
       share=st.floats(0.01, 0.99), sel=st.floats(0.0, 0.9),
       conversion=st.sampled_from(["improved", "gaussian"]))
def test_split_never_exceeds_target(eps, log_delta, share, sel, conversion):
    delta = 10.0 ** log_delta
    b = split_private_pipeline(epsilon=eps, delta=delta, preprocessing_share=share,
                               selection_share=sel, estimator_conversion=conversion)
    assert b.conversion == conversion
    rho_est = epsilon_to_rho(epsilon=b.estimator_epsilon, delta=b.delta_conversion,
                             method=conversion)
    assert rho_est <= (1 - share) * b.rho * (1 + 1e-9)
    total, total_delta = approximate_zcdp_epsilon(
        rho=b.rho_preprocessing + rho_est, delta_conversion=b.delta_conversion,
        delta_selection=b.delta_selection, method=conversion)
    assert total <= eps * (1 + 1e-9)
    assert total_delta <= delta * (1 + 1e-12)


def test_gaussian_split_against_dp_accounting():
    # Corollary 21.9 (2): outside the selections' events the pipeline is
    # sqrt(2 rho)-GDP, so its rho is read by the Gaussian profile at delta_c and
    # Lemma 21.7 adds ln(1 / (1 - delta_S)): the PLD accountant of one
    # Gaussian mechanism of that rho gives the same epsilon (oracle O11).
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    b = split_private_pipeline(epsilon=1.0, delta=1e-5,
                               estimator_conversion="gaussian")
    assert b.rho == pytest.approx(epsilon_to_rho(
        epsilon=1 + math.log1p(-1e-6), delta=9e-6, method="gaussian"))
    # 17 % more rho than the Rényi reading of the same target (Section 21.7).
    assert b.rho / split_private_pipeline(epsilon=1.0, delta=1e-5).rho > 1.17
    # The conditioned mechanism: the preprocessing's Gaussian releases, then the
    # estimator's (GDP, Corollary 21.4), composed.
    rho_est = epsilon_to_rho(epsilon=b.estimator_epsilon, delta=b.delta_conversion,
                             method="gaussian")
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-5)
    for part in (b.rho_preprocessing, rho_est):
        acc.compose(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(2.0 * part)))
    oracle = acc.get_epsilon(b.delta_conversion) - math.log1p(-b.delta_selection)
    assert oracle == pytest.approx(1.0, abs=1e-4)
    eps, delta = approximate_zcdp_epsilon(
        rho=b.rho, delta_conversion=b.delta_conversion,
        delta_selection=b.delta_selection, method="gaussian")
    assert eps == pytest.approx(oracle, abs=1e-4) and eps <= 1.0 + 1e-9
    assert delta == pytest.approx(1e-5)


def test_releases_and_edit_figures_read_by_the_gaussian_profile():
    g = release_guarantee(columns=[("a", 0.01, 0.0), ("b", 0.02, 1e-7)],
                          relation="replace", group_size=1)
    eps, delta = g.epsilon(1e-5)
    assert eps == pytest.approx(rho_to_epsilon(rho=0.03, delta=1e-5 - 1e-7,
                                               method="gaussian")
                                - math.log1p(-1e-7))
    kw = dict(index=2, rho_releases=[0.03, 0.03], delta_selections=[1e-6, 1e-6],
              delta=1e-5, n_deleted=1, n_replaced=0, n_inserted=0, n_samples=9)
    renyi = pipeline_edit_certificate(**kw)
    gauss = pipeline_edit_certificate(**kw, conversion="gaussian")
    assert gauss.epsilon_adaptive == pytest.approx(
        rho_to_epsilon(rho=0.06, delta=8e-6, method="gaussian") - math.log1p(-2e-6))
    assert gauss.epsilon_adaptive < renyi.epsilon_adaptive


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="preprocessing_share"):
        split_private_pipeline(epsilon=1.0, delta=1e-5, preprocessing_share=1.0)
    with pytest.raises(ValueError, match="relation"):
        histogram_sensitivity(relation="add")
    with pytest.raises(ValueError, match="delta"):
        partition_selection(rho=0.1, delta=0.0)
