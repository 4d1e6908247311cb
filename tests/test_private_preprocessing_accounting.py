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
       share=st.floats(0.01, 0.99), sel=st.floats(0.0, 0.9))
def test_split_never_exceeds_target(eps, log_delta, share, sel):
    delta = 10.0 ** log_delta
    b = split_private_pipeline(epsilon=eps, delta=delta, preprocessing_share=share,
                               selection_share=sel)
    rho_est = epsilon_to_rho(epsilon=b.estimator_epsilon, delta=b.delta_conversion)
    total, total_delta = approximate_zcdp_epsilon(
        rho=b.rho_preprocessing + rho_est, delta_conversion=b.delta_conversion,
        delta_selection=b.delta_selection)
    assert total <= eps * (1 + 1e-9)
    assert total_delta <= delta * (1 + 1e-12)


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="preprocessing_share"):
        split_private_pipeline(epsilon=1.0, delta=1e-5, preprocessing_share=1.0)
    with pytest.raises(ValueError, match="relation"):
        histogram_sensitivity(relation="add")
    with pytest.raises(ValueError, match="delta"):
        partition_selection(rho=0.1, delta=0.0)
