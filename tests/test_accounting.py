# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Oracles O1-O8 of privacy-accounting.md (Section 11) and input validation."""

import json
import math

import numpy as np
import pytest

from skforget import accounting as acc

RTOL = 1e-9

# --- O1: canonical plan (binary logistic) ------------------------------------
N, P, LAM, L, RHO, RHO_DD = 10000, 21, 0.01, 1.0, 0.1, 0.01
R = math.sqrt(2.0)
ETA = 1.0 / (LAM + 0.5)
C = 1.0 - ETA * LAM
SIGMA = 0.004450159723945581


def o1_quantities():
    G = acc.gradient_bound(loss="logistic", row_norm=R, clip_norm=L)
    S = acc.sensitivity(gradient_bound=G, relation="replace")
    beta = acc.smoothness(loss="logistic", row_norm=R)
    eta = acc.default_learning_rate(lam=LAM, beta=beta)
    c = acc.contraction(learning_rate=eta, lam=LAM, beta=beta)
    sigma = acc.noise_scale(rho=RHO, sensitivity=S, normaliser=N, learning_rate=eta,
                            contraction=c)
    v0 = acc.init_variance(sigma=sigma, learning_rate=eta, lam=LAM)
    r_inf = acc.rho_inf(sensitivity=S, normaliser=N, learning_rate=eta, sigma=sigma,
                        contraction=c)
    return dict(G=G, S=S, beta=beta, eta=eta, c=c, sigma=sigma, v0=v0, r_inf=r_inf)


def test_o1_canonical_plan():
    q = o1_quantities()
    assert q["G"] == 1.0 and q["S"] == 2.0
    assert q["beta"] == pytest.approx(0.5, rel=RTOL)
    assert q["eta"] == pytest.approx(1.9607843137254901, rel=RTOL)
    assert q["c"] == pytest.approx(0.9803921568627451, rel=RTOL)
    assert q["sigma"] == pytest.approx(0.004450159723945581, rel=RTOL)
    s2 = 2 * q["eta"] * q["sigma"] ** 2
    assert s2 == pytest.approx(7.766243752402904e-05, rel=RTOL)
    assert q["eta"] * q["S"] / N == pytest.approx(0.000392156862745098, rel=RTOL)
    assert q["r_inf"] == pytest.approx(0.1, rel=RTOL)
    assert q["v0"] == pytest.approx(0.002, rel=RTOL)
    k_a = acc.steps_fit(gradient_bound=q["G"], lam=LAM, n_params=P,
                        init_variance=q["v0"], sigma=q["sigma"], contraction=q["c"])
    k_priv = acc.steps_unlearn_privacy(rho_inf=q["r_inf"], rho_target=RHO_DD,
                                       contraction=q["c"])
    k_util = acc.steps_unlearn_utility(edit_size=1, sensitivity=q["S"], group_size=1,
                                       normaliser=N, lam=LAM, beta=q["beta"],
                                       sigma=q["sigma"], n_params=P, contraction=q["c"])
    assert (k_a, k_priv, k_util, max(k_priv, k_util)) == (591, 59, 36, 59)
    rho_dp = acc.rho_dp(rho_inf=q["r_inf"], contraction=q["c"], steps=k_a)
    assert 10 * rho_dp == pytest.approx(0.9999834680191142, rel=RTOL)
    rho_del = acc.rho_deletion(rho_inf=q["r_inf"], contraction=q["c"], steps=59)
    assert 10 * rho_del == pytest.approx(0.09664507603782349, rel=RTOL)
    assert acc.rho_to_epsilon(rho=0.1, delta=1e-5) == pytest.approx(1.9142388320035977,
                                                                    rel=RTOL)
    assert acc.rho_to_epsilon(rho=0.1, delta=1e-5, method="classic") == pytest.approx(
        2.2459660262893473, rel=RTOL)
    assert acc.rho_to_epsilon(rho=rho_del, delta=1e-5) == pytest.approx(
        0.5357481774642692, rel=RTOL)
    assert acc.advantage_bound(rho=rho_del) == pytest.approx(0.06951441434617121,
                                                             rel=RTOL)
    group = acc.group_factor(group_size=5) * q["r_inf"]
    assert acc.steps_unlearn_privacy(rho_inf=group, rho_target=RHO_DD,
                                     contraction=q["c"]) == 140
    chourasia = q["S"] ** 2 / (LAM * q["sigma"] ** 2 * N**2)
    assert chourasia == pytest.approx(0.2019801980198024, rel=RTOL)
    zero_out = acc.rho_inf(
        sensitivity=acc.sensitivity(gradient_bound=1.0, relation="zero_out"),
        normaliser=N, learning_rate=q["eta"], sigma=q["sigma"], contraction=q["c"])
    assert zero_out == pytest.approx(0.025, rel=RTOL)
    assert acc.rho_two_phase(rho_inf=q["r_inf"], contraction=q["c"],
                             steps=59) == pytest.approx(0.010698461199938062, rel=RTOL)


def test_o1_plan_training_matches_the_pieces():
    plan = acc.plan_training(loss="logistic", n_samples=N, n_params=P, lam=LAM,
                             row_norm=R, clip_norm=L, epsilon=RHO * 10, delta=1e-5,
                             deletion_epsilon=RHO_DD * 10, learning_rate=ETA)
    # plan_training takes (epsilon, delta) targets: O3 covers those numbers.
    assert plan.sensitivity == 2.0 and plan.gradient_bound == 1.0
    assert plan.learning_rate == pytest.approx(1.9607843137254901, rel=RTOL)
    assert plan.rho_inf == pytest.approx(plan.rho_target, rel=RTOL)


# --- O2: the paper's recipe --------------------------------------------------
def test_o2_paper_recipe():
    paper = acc.cs23_recipe(rho=0.1, rho_deletion_target=0.01, gradient_bound=1.0,
                            lam=LAM, beta=0.5, normaliser=N, n_params=P, edit_size=1)
    assert paper["learning_rate"] == pytest.approx(0.9803921568627451, rel=RTOL)
    assert paper["sigma"] == pytest.approx(0.006324555320336759, rel=RTOL)
    assert paper["init_variance"] == pytest.approx(0.004019704433497537, rel=RTOL)
    assert paper["fit_steps"] == 2385
    assert paper["unlearn_steps_privacy"] == 470
    assert paper["unlearn_steps_utility"] == 1131
    c = acc.contraction(learning_rate=paper["learning_rate"], lam=LAM, beta=0.5)
    r_inf = acc.rho_inf(sensitivity=2.0, normaliser=N,
                        learning_rate=paper["learning_rate"], sigma=paper["sigma"],
                        contraction=c)
    assert r_inf == pytest.approx(0.04975490196078449, rel=RTOL)
    assert 10 * acc.rho_deletion(rho_inf=r_inf, contraction=c,
                                 steps=470) == pytest.approx(4.728961456514548e-05,
                                                             rel=RTOL)
    assert acc.steps_unlearn_privacy(rho_inf=r_inf, rho_target=0.01,
                                     contraction=c) == 82


def test_o2_cs23_plan_reports_the_tight_accounting():
    plan = acc.plan_training(loss="logistic", n_samples=N, n_params=P, lam=LAM,
                             row_norm=R, clip_norm=L, epsilon=1.0, delta=1e-5,
                             deletion_epsilon=0.1, recipe="cs23")
    assert plan.learning_rate == pytest.approx(1 / (2 * 0.51), rel=RTOL)
    # The paper's noise is larger, so the accounted level is below the target.
    assert plan.rho_inf < plan.rho_target
    with pytest.raises(ValueError, match="learning_rate"):
        acc.plan_training(loss="logistic", n_samples=N, n_params=P, lam=LAM,
                          row_norm=R, clip_norm=L, epsilon=1.0, delta=1e-5,
                          deletion_epsilon=0.1, recipe="cs23", learning_rate=0.5)


# --- O3: (epsilon, delta) targets ---------------------------------------------
def test_o3_epsilon_delta_targets():
    rho = acc.epsilon_to_rho(epsilon=1.0, delta=1e-5)
    assert rho == pytest.approx(0.030556595197639563, rel=1e-6)
    assert acc.rho_to_epsilon(rho=rho, delta=1e-5) <= 1.0
    assert acc.optimal_order(rho=rho, delta=1e-5) == pytest.approx(17.81, abs=0.01)
    assert acc.epsilon_to_rho(epsilon=1.0, delta=1e-5, method="classic") == \
        pytest.approx(0.0208199383395355, rel=RTOL)
    assert acc.epsilon_to_rho(epsilon=0.1, delta=1e-5) == pytest.approx(
        0.00043299372940180963, rel=1e-6)
    # O3 is the improved conversion's oracle; the default Gaussian calibration
    # (Section 21) has its own oracle O11 in tests/test_gdp.py.
    plan = acc.plan_training(loss="logistic", n_samples=N, n_params=P, lam=LAM,
                             row_norm=R, clip_norm=L, epsilon=1.0, delta=1e-5,
                             deletion_epsilon=0.1, learning_rate=ETA,
                             conversion="improved")
    assert plan.sigma == pytest.approx(0.008050504895075037, rel=1e-6)
    assert (plan.fit_steps, plan.unlearn_steps_privacy, plan.unlearn_steps) == \
        (531, 108, 108)


# --- O4: conversions at one order and their ordering ---------------------------
def test_o4_conversions_at_one_order():
    assert acc.epsilon_at_order(order=10, rdp_epsilon=1, delta=1e-5,
                                method="classic") == pytest.approx(2.2792139405522476,
                                                                   rel=RTOL)
    assert acc.epsilon_at_order(order=10, rdp_epsilon=1,
                                delta=1e-5) == pytest.approx(1.9180106367839718,
                                                             rel=RTOL)
    assert acc.rho_to_epsilon(rho=0.1, delta=1e-5) == pytest.approx(1.9142388320035977,
                                                                    rel=1e-7)
    assert acc.gaussian_epsilon(rho=0.1, delta=1e-5) == pytest.approx(1.760057,
                                                                      abs=1e-6)


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8])
@pytest.mark.parametrize("rho", [1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0, 5.0])
def test_o4_exact_below_improved_below_classic(rho, delta):
    exact = acc.gaussian_epsilon(rho=rho, delta=delta)
    improved = acc.rho_to_epsilon(rho=rho, delta=delta)
    classic = acc.rho_to_epsilon(rho=rho, delta=delta, method="classic")
    assert exact <= improved <= classic
    assert classic == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)),
                                    rel=1e-12)


@pytest.mark.parametrize("eps", [0.05, 0.3, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-4, 1e-6, 1e-9])
def test_epsilon_to_rho_round_trip(eps, delta):
    rho = acc.epsilon_to_rho(epsilon=eps, delta=delta)
    assert acc.rho_to_epsilon(rho=rho, delta=delta) <= eps
    assert acc.rho_to_epsilon(rho=rho * (1 + 1e-6), delta=delta) > eps * (1 - 1e-9)


# --- O5: exact Gaussian process: the bound is attained -------------------------
O5 = [  # start, K_A, K_R, exact, bound
    ("point", 1, 0, 0.5, 0.5),
    ("point", 10, 0, 4.587865153825113, 4.587865153825113),
    ("point", 100, 0, 9.499495346825434, 9.499495346825432),
    ("point", 100, 10, 1.1549168638499745, 1.154978218610409),
    ("point", 1000, 20, 0.1404183879436288, 0.1404183879436288),
    ("init", 1, 0, 0.095, 0.5),
    ("init", 10, 0, 4.030087856710408, 4.587865153825113),
    ("init", 100, 10, 1.1549168637509135, 1.154978218610409),
]


def _exact_rho_1d(start, k_a, k_r, c, b, s2, v0):
    """Closed form of the 1-D linear-loss process: theta <- c theta + u + N(0, s2)."""
    T = k_a + k_r
    m = b * (1 - c**k_a) / (1 - c) * c**k_r
    V = (c ** (2 * T) * (v0 if start == "init" else 0.0)
         + s2 * (1 - c ** (2 * T)) / (1 - c**2))
    return m * m / (2 * V)


@pytest.mark.parametrize("start,k_a,k_r,exact,bound", O5)
def test_o5_exact_gaussian_process(start, k_a, k_r, exact, bound):
    lam, eta, sigma, S, n = 0.2, 0.5, 1.0, 2.0, 1
    c = 1 - eta * lam
    assert c == pytest.approx(0.9)
    v0 = acc.init_variance(sigma=sigma, learning_rate=eta, lam=lam)
    assert v0 == pytest.approx(5.2631578947368425, rel=RTOL)
    b, s2 = eta * S / n, 2 * eta * sigma**2
    assert (b, s2) == (1.0, 1.0)
    r_inf = acc.rho_inf(sensitivity=S, normaliser=n, learning_rate=eta, sigma=sigma,
                        contraction=c)
    got_exact = _exact_rho_1d(start, k_a, k_r, c, b, s2, v0)
    # The spec's bound column: (5.3) while the unit is present, (5.5) after.
    got_bound = (acc.rho_dp(rho_inf=r_inf, contraction=c, steps=k_a) if k_r == 0
                 else acc.rho_deletion(rho_inf=r_inf, contraction=c, steps=k_r))
    joint = acc.rho_joint(rho_inf=r_inf, contraction=c, steps_present=k_a,
                          steps_absent=k_r)
    assert got_exact == pytest.approx(exact, rel=1e-12)
    assert got_bound == pytest.approx(bound, rel=1e-12)
    assert got_exact <= joint * (1 + 1e-12) <= got_bound * (1 + 2e-12)
    if start == "point":
        # From a fixed start the process attains (5.4) exactly: no better bound
        # exists for this algorithm (Section 5.4).
        assert got_exact == pytest.approx(joint, rel=1e-12)


# --- O6: sensitivities ---------------------------------------------------------
def test_o6_sensitivities():
    assert acc.sensitivity(gradient_bound=acc.gradient_bound(
        loss="logistic", row_norm=R, clip_norm=0.7)) == pytest.approx(1.4)
    assert acc.sensitivity(gradient_bound=0.7, relation="zero_out") == 0.7
    ovr = acc.gradient_bound(loss="ovr", row_norm=R, clip_norm=1.0, n_classes=3)
    assert acc.sensitivity(gradient_bound=ovr) == pytest.approx(3.4641016151377544,
                                                                rel=RTOL)
    soft = acc.gradient_bound(loss="multinomial", row_norm=math.sqrt(2))
    assert acc.sensitivity(gradient_bound=soft) == pytest.approx(4.0, rel=RTOL)
    assert acc.sensitivity(gradient_bound=soft, relation="zero_out") == \
        pytest.approx(2.0, rel=RTOL)
    assert acc.group_factor(group_size=5) == 25.0
    one = acc.rho_inf(sensitivity=acc.sensitivity(gradient_bound=1.0), normaliser=N,
                      learning_rate=ETA, sigma=SIGMA, contraction=C)
    five = acc.rho_inf(sensitivity=acc.sensitivity(gradient_bound=1.0, group_size=5),
                       normaliser=N, learning_rate=ETA, sigma=SIGMA, contraction=C)
    assert five == pytest.approx(25 * one, rel=RTOL)
    assert acc.gradient_bound(loss="logistic", row_norm=R) == R
    assert acc.gradient_bound(loss="squared", row_norm=R, clip_norm=3.0) == 3.0


# --- O7: varying normaliser ----------------------------------------------------
def test_o7_varying_normaliser():
    segments = [(10000, 591), (9990, 60), (9985, 60)]
    n_min = min(n for n, _ in segments)
    T = sum(k for _, k in segments)
    r_bar = acc.rho_inf(sensitivity=2.0, normaliser=n_min, learning_rate=ETA,
                        sigma=SIGMA, contraction=C)
    assert acc.rho_dp(rho_inf=r_bar, contraction=C, steps=T) == pytest.approx(
        0.10030052232037742, rel=RTOL)
    drifts = np.concatenate([np.full(k, ETA * 2.0 / n) for n, k in segments])
    rho, feasible = acc.rho_step_sequence(
        drifts=drifts, noise_variances=np.full(T, 2 * ETA * SIGMA**2),
        contractions=np.full(T, C))
    assert feasible
    assert rho == pytest.approx(0.1002513031804314, rel=RTOL)
    assert acc.rho_deletion(rho_inf=r_bar, contraction=C, steps=60) == pytest.approx(
        0.009317153491672383, rel=RTOL)


def test_step_sequence_reduces_to_closed_forms():
    b, s2 = ETA * 2 / N, 2 * ETA * SIGMA**2
    r_inf = acc.rho_inf(sensitivity=2.0, normaliser=N, learning_rate=ETA, sigma=SIGMA,
                        contraction=C)
    for t0, k in [(5, 0), (100, 0), (591, 59), (20, 300)]:
        drifts = np.r_[np.full(t0, b), np.zeros(k)]
        rho, feasible = acc.rho_step_sequence(
            drifts=drifts, noise_variances=np.full(t0 + k, s2),
            contractions=np.full(t0 + k, C))
        assert feasible
        assert rho == pytest.approx(acc.rho_joint(rho_inf=r_inf, contraction=C,
                                                  steps_present=t0, steps_absent=k),
                                    rel=1e-9)


def test_step_sequence_flags_an_infeasible_schedule():
    # A unit absent first and present last (drift increasing) breaks the
    # monotone-shift condition of (5.1).
    drifts = np.r_[np.zeros(50), np.full(5, 1.0)]
    _, feasible = acc.rho_step_sequence(drifts=drifts, noise_variances=np.ones(55),
                                        contractions=np.full(55, 0.5))
    assert not feasible


# --- O8: adaptive requests -------------------------------------------------------
def test_composition_adds_rho():
    assert acc.rho_compose(rhos=[]) == 0.0
    assert acc.rho_compose(rhos=[0.1, 0.2, 0.3]) == pytest.approx(0.6)
    assert acc.rho_adaptive(rho_deletion=0.05, rho_releases=[0.1, 0.2]) == \
        pytest.approx(0.05 + acc.rho_compose(rhos=[0.1, 0.2]))
    with pytest.raises(ValueError, match=r"rhos\[1\]"):
        acc.rho_compose(rhos=[0.1, -0.2])


def test_o8_adaptive():
    r_del = acc.rho_deletion(rho_inf=0.1, contraction=C, steps=59)
    assert r_del == pytest.approx(0.00966450760378235, rel=RTOL)
    r_adapt = acc.rho_adaptive(rho_deletion=r_del, rho_releases=[0.1] * 3)
    assert r_adapt == pytest.approx(0.3096645076037824, rel=RTOL)
    assert acc.rho_to_epsilon(rho=r_adapt, delta=1e-5) == pytest.approx(
        3.5983534003457787, rel=RTOL)


# --- P4: monotonicity and recipes reproducing their targets -----------------------
def test_p4_monotonicity():
    steps = np.arange(0, 1000, 37)
    dp = [acc.rho_dp(rho_inf=0.1, contraction=C, steps=int(t)) for t in steps]
    assert np.all(np.diff(dp) > 0) and dp[-1] < 0.1
    dele = [acc.rho_deletion(rho_inf=0.1, contraction=C, steps=int(t)) for t in steps]
    assert np.all(np.diff(dele) < 0)
    ks = [acc.steps_unlearn_privacy(rho_inf=0.1, rho_target=t, contraction=C)
          for t in np.geomspace(1e-6, 0.2, 60)]
    assert np.all(np.diff(ks) <= 0) and ks[-1] == 0
    sig = [acc.noise_scale(rho=r, sensitivity=2, normaliser=N, learning_rate=ETA,
                           contraction=C) for r in np.geomspace(1e-4, 10, 30)]
    assert np.all(np.diff(sig) < 0)


@pytest.mark.parametrize("target", [0.05, 0.01, 1e-3, 1e-5, 1e-9])
@pytest.mark.parametrize("c", [0.5, 0.9, 0.999, 1 - 1e-5])
def test_p4_unlearning_recipe_hits_its_target_after_rounding(target, c):
    k = acc.steps_unlearn_privacy(rho_inf=0.1, rho_target=target, contraction=c)
    assert acc.rho_deletion(rho_inf=0.1, contraction=c, steps=k) <= target
    assert k == 0 or acc.rho_deletion(rho_inf=0.1, contraction=c, steps=k - 1) > target


def test_contraction_and_learning_rate_rules():
    beta = 0.5
    assert acc.contraction(learning_rate=ETA, lam=LAM, beta=beta) == pytest.approx(C)
    eta_max = acc.max_learning_rate(lam=LAM, beta=beta)
    assert acc.contraction(learning_rate=eta_max, lam=LAM,
                           beta=beta) == pytest.approx(1 - eta_max * LAM)
    # Past 2/(2 lam + beta) the other eigenvalue dominates (Lemma 3.1).
    eta = 1.5 * eta_max
    assert acc.contraction(learning_rate=eta, lam=LAM, beta=beta) == pytest.approx(
        abs(1 - eta * (LAM + beta)))
    # Under the fixed normaliser, doubling the data keeps c for eta = 1/M.
    assert acc.contraction(learning_rate=ETA, lam=LAM, beta=beta,
                           data_weight=2.0) == pytest.approx(C)
    assert acc.contraction(learning_rate=ETA, lam=LAM, beta=beta,
                           data_weight=3.0) > C


# --- guarantees built from a run ----------------------------------------------------
def _plan(**kw):
    args = dict(loss="logistic", n_samples=1000, n_params=11, lam=0.01, row_norm=R,
                clip_norm=1.0, epsilon=1.0, delta=1e-5, deletion_epsilon=0.1)
    args.update(kw)
    return acc.plan_training(**args)


def test_guarantee_after_fit_and_edits():
    plan = _plan()
    g = acc.guarantee_after_fit(plan, steps=plan.fit_steps, seeded=False)
    assert g.epsilon <= 1.0 and g.rho <= plan.rho_target
    assert g.rho == pytest.approx(acc.rho_dp(rho_inf=plan.rho_inf,
                                             contraction=plan.contraction,
                                             steps=plan.fit_steps), rel=RTOL)
    assert g.deletion is None and "No records deleted yet" in str(g)
    history = [g]
    for i in range(3):
        edit = acc.plan_unlearning(plan, history[-1], n_samples=999 - i,
                                   n_deleted=1)
        assert not edit.retrained  # the worst-case fit is far longer
        history.append(acc.guarantee_after_edit(
            plan, history[-1], steps=edit.steps, n_samples=999 - i, n_deleted=1,
            n_replaced=0, n_inserted=0, seeded=False))
    last = history[-1]
    assert len(last.edits) == 3 and last.n_samples == 997
    assert last.total_steps == plan.fit_steps + sum(e.steps for e in last.edits)
    cert = last.deletion
    assert cert.epsilon_deletion <= 0.1 + 1e-12
    # A deleted record is compared with the null record: S_del = G, a quarter
    # of the replace-one figure (privacy-accounting.md, 6.2).
    factor = acc.deletion_factor(plan_relation="replace", n_replaced=0)
    assert factor == 0.25
    assert cert.rho_deletion == pytest.approx(
        acc.rho_deletion(rho_inf=factor * plan.rho_inf, contraction=plan.contraction,
                         steps=cert.steps), rel=RTOL)
    assert acc.rho_deletion(rho_inf=factor * plan.rho_inf,
                            contraction=plan.contraction,
                            steps=cert.steps - 1) > plan.rho_deletion_target
    # DP of present records never exceeds the stationary level, however many edits.
    assert all(h.rho <= plan.rho_inf for h in history)
    assert [h.rho for h in history] == sorted(h.rho for h in history)
    # Adaptive figure: deletion plus the DP of each release seen before the edit.
    releases = [plan.fit_steps] + [e.steps for e in last.edits[:-1]]
    expected = cert.rho_deletion + sum(
        factor * acc.rho_dp(rho_inf=plan.rho_inf, contraction=plan.contraction,
                            steps=s) for s in releases)
    assert cert.releases_seen == 3
    assert cert.rho_adaptive == pytest.approx(expected, rel=RTOL)
    text = str(last)
    assert "replace-one" in text and "Deleted records (edit 3" in text
    record = json.loads(json.dumps(last.to_dict()))
    assert record["edits"][2]["steps"] == cert.steps
    with pytest.raises(AttributeError):
        last.epsilon = 0.0


def test_batch_figure_scales_with_edit_size():
    plan = _plan(max_edit_size=5)
    g = acc.guarantee_after_fit(plan, steps=plan.fit_steps, seeded=True)
    e = acc.guarantee_after_edit(plan, g, steps=10, n_samples=995, n_deleted=4,
                                 n_replaced=1, n_inserted=0, seeded=True)
    cert = e.deletion
    assert cert.rho_deletion_batch == pytest.approx(25 * cert.rho_deletion, rel=RTOL)
    assert "secret" in str(e)


def test_edit_beyond_contraction_is_refused():
    plan = _plan(learning_rate=None)
    g = acc.guarantee_after_fit(plan, steps=10, seeded=False)
    beta = plan.beta
    # data weight at which 1 - eta (lam + beta w) reaches -1
    w = (2.0 / plan.learning_rate - plan.lam) / beta
    with pytest.raises(ValueError, match="no longer contracts"):
        acc.plan_unlearning(plan, g, n_samples=int(w * plan.normaliser) + 10,
                            edit_size=1)
    # Between the step size's 10% headroom and the limit the worst factor is
    # used (uniformisation).
    n_big = int(1.105 * plan.normaliser)
    assert n_big < w * plan.normaliser
    edit = acc.plan_unlearning(plan, g, n_samples=n_big, n_deleted=0,
                               n_inserted=int(0.105 * plan.normaliser))
    e = acc.guarantee_after_edit(plan, g, steps=edit.steps, n_samples=n_big,
                                 n_deleted=0, n_replaced=0, n_inserted=1, seeded=False,
                                 retrained=edit.retrained)
    assert e.contraction > plan.contraction and e.rho_inf > plan.rho_inf


# --- validation: every argument named ---------------------------------------------
@pytest.mark.parametrize("func,kwargs,name", [
    (acc.epsilon_to_rho, dict(epsilon=0.0, delta=1e-5), "epsilon"),
    (acc.epsilon_to_rho, dict(epsilon=-1.0, delta=1e-5), "epsilon"),
    (acc.epsilon_to_rho, dict(epsilon=1.0, delta=0.0), "delta"),
    (acc.epsilon_to_rho, dict(epsilon=1.0, delta=1.0), "delta"),
    (acc.epsilon_to_rho, dict(epsilon=1.0, delta=1e-5, method="exact"), "method"),
    (acc.rho_to_epsilon, dict(rho=-0.1, delta=1e-5), "rho"),
    (acc.rho_to_epsilon, dict(rho=0.1, delta=2.0), "delta"),
    (acc.epsilon_at_order, dict(order=1.0, rdp_epsilon=1.0, delta=1e-5), "order"),
    (acc.epsilon_at_order, dict(order=2.0, rdp_epsilon=-1.0, delta=1e-5),
     "rdp_epsilon"),
    (acc.check_learning_rate, dict(learning_rate=5.0, lam=0.01, beta=0.5),
     "learning_rate"),
    (acc.check_learning_rate, dict(learning_rate=-1.0, lam=0.01, beta=0.5),
     "learning_rate"),
    (acc.contraction, dict(learning_rate=1.0, lam=0.0, beta=0.5), "lam"),
    (acc.rho_dp, dict(rho_inf=0.1, contraction=1.0, steps=3), "contraction"),
    (acc.rho_dp, dict(rho_inf=0.1, contraction=0.9, steps=-1), "steps"),
    (acc.rho_deletion, dict(rho_inf=-0.1, contraction=0.9, steps=1), "rho_inf"),
    (acc.noise_scale, dict(rho=0.0, sensitivity=2, normaliser=10, learning_rate=1,
                           contraction=0.9), "rho"),
    (acc.noise_scale, dict(rho=0.1, sensitivity=2, normaliser=0, learning_rate=1,
                           contraction=0.9), "normaliser"),
    (acc.sensitivity, dict(gradient_bound=1.0, relation="add"), "relation"),
    (acc.sensitivity, dict(gradient_bound=1.0, group_size=0), "group_size"),
    (acc.gradient_bound, dict(loss="hinge", row_norm=1.0), "loss"),
    (acc.gradient_bound, dict(loss="squared", row_norm=1.0), "clip_norm"),
    (acc.gradient_bound, dict(loss="logistic", row_norm=0.0), "row_norm"),
    (acc.steps_unlearn_privacy, dict(rho_inf=0.1, rho_target=0.0, contraction=0.9),
     "rho_target"),
    (acc.cs23_recipe, dict(rho=0.01, rho_deletion_target=0.1, gradient_bound=1,
                           lam=0.01, beta=0.5, normaliser=10, n_params=2,
                           edit_size=1), "rho_deletion_target"),
    (acc.default_delta, dict(n_samples=0), "n_samples"),
])
def test_invalid_inputs_name_the_argument(func, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        func(**kwargs)


def test_plan_rejects_deletion_epsilon_above_epsilon():
    with pytest.raises(ValueError, match="deletion_epsilon"):
        _plan(deletion_epsilon=2.0)


def test_steps_fit_with_an_exact_contraction():
    # c = 0: the noiseless map reaches its fixed point in one step.
    assert acc.steps_fit(gradient_bound=1, lam=1, n_params=1, init_variance=0,
                         sigma=0.01, contraction=0.0) == 1
    assert acc.steps_fit(gradient_bound=1e-3, lam=1, n_params=1, init_variance=0,
                         sigma=1.0, contraction=0.0) == 0


def test_default_delta():
    assert acc.default_delta(n_samples=100) == 1e-5
    assert acc.default_delta(n_samples=200000) == pytest.approx(200000**-1.1)


@pytest.mark.parametrize("loss,n_classes", [("logistic", 2), ("ovr", 4),
                                            ("multinomial", 3), ("multinomial", 10)])
def test_typical_curvature_is_the_mean_hessian_eigenvalue_at_zero(loss, n_classes):
    """Section 8.4: h is the mean eigenvalue of the loss's Hessian at theta = 0
    for rows spread evenly on the data_norm sphere (second moment R^2 I / d):
    for the softmax the trace of diag(p) - p p^T at uniform p over its C
    outputs, not its largest eigenvalue 1/2."""
    from skforget.accounting._calibration import typical_curvature

    d, R = 7, 1.5
    second_moment = (R * R / d) * np.eye(d)
    if loss == "multinomial":
        p = np.full(n_classes, 1.0 / n_classes)
        outputs = np.diag(p) - np.outer(p, p)
    else:   # one or C logistic outputs at sigmoid(0) = 1/2
        outputs = 0.25 * np.eye(1 if loss == "logistic" else n_classes)
    hessian = np.kron(outputs, second_moment)
    assert typical_curvature(loss=loss, data_norm=R, n_features=d,
                             n_classes=n_classes) == \
        pytest.approx(np.trace(hessian) / hessian.shape[0], rel=1e-12)


@pytest.mark.parametrize("loss,n_classes,n_out", [("logistic", 2, 1), ("ovr", 4, 4),
                                                  ("multinomial", 3, 3),
                                                  ("multinomial", 10, 10),
                                                  ("squared", 2, None)])
def test_typical_fit_targets_the_noise_of_the_output_directions(loss, n_classes,
                                                                n_out):
    """Section 8.4: the typical fit of a classifier stops when the error from
    theta = 0 has decayed, at the typical curvature, to the Gibbs level of the
    n_out output directions, n_out sigma^2 / 2 (not the p sigma^2 / 2 of all
    coordinates); the squared loss's metric is the risk itself, and its fit
    counts every coefficient (n_out None: p)."""
    from skforget.accounting._calibration import initial_error

    d = 11
    p = d if loss in ("logistic", "squared") else d * n_classes
    plan = acc.plan_training(loss=loss, n_samples=2000, n_params=p, n_classes=n_classes,
                             lam=0.01, row_norm=1.0, clip_norm=1.0, epsilon=1.0,
                             delta=1e-5, deletion_epsilon=0.5, fit_recipe="typical",
                             n_features=d, data_norm=1.0)
    err0 = (initial_error(loss=loss, n_classes=n_classes)
            + 0.5 * (plan.lam + plan.beta) * p * plan.init_variance)
    rate = plan.learning_rate * (plan.lam + plan.typical_curvature)
    want = math.ceil(math.log(err0 / (0.5 * (n_out or p) * plan.sigma**2)) / rate)
    assert plan.n_batches == 1 and plan.fit_steps == want
    # The squared loss releases one score per row: against it, a shorter fit.
    outputs = math.ceil(math.log(err0 / (0.5 * (n_out or 1) * plan.sigma**2)) / rate)
    every = math.ceil(math.log(err0 / (0.5 * p * plan.sigma**2)) / rate)
    assert outputs > every and want == (every if n_out is None else outputs)


def test_batched_fit_runs_one_relaxation_time_of_the_regulariser():
    """Section 8.4: with several batches the fit runs at least one relaxation
    time 1 / (E eta lam) of the regulariser, at most MAX_RELAXATION_EPOCHS
    passes, never under 2; a longer typical length or the user's max_iter
    prevail."""
    from skforget.accounting._calibration import MAX_RELAXATION_EPOCHS, _fit_epochs

    assert MAX_RELAXATION_EPOCHS == 25
    assert _fit_epochs(5, None, 100, relaxation_epochs=37.2) == 25
    # Past ten passes the floor still follows the relaxation time (large
    # epsilon: batches at their minimum size, a weak regulariser).
    assert _fit_epochs(5, None, 100, relaxation_epochs=17.2) == 18
    assert _fit_epochs(5, None, 100, relaxation_epochs=3.2) == 4
    assert _fit_epochs(5, None, 100, relaxation_epochs=0.4) == 2
    assert _fit_epochs(3100, None, 100, relaxation_epochs=37.2) == 31
    assert _fit_epochs(5, 3, 100, relaxation_epochs=37.2) == 3
    assert _fit_epochs(5, None, 1, relaxation_epochs=37.2) == 5
    plan = acc.plan_training(loss="logistic", n_samples=200000, n_params=21,
                             lam=1e-5, row_norm=1.0, clip_norm=1.0, epsilon=8.0,
                             delta=1e-6, deletion_epsilon=4.0, fit_recipe="typical",
                             n_features=20, data_norm=1.0, n_batches="auto")
    relax = 1.0 / (plan.n_batches * plan.learning_rate * plan.lam)
    assert plan.n_batches > 1 and relax >= 10
    assert plan.fit_epochs >= min(MAX_RELAXATION_EPOCHS, math.ceil(relax))
    # Not the squared loss: its risk weighs a flat direction's bias by its
    # small curvature, while a longer retraining plan adds noise to all.
    sq = acc.plan_training(loss="squared", n_samples=200000, n_params=21,
                           lam=1e-5, row_norm=1.0, clip_norm=1.0, epsilon=8.0,
                           delta=1e-6, deletion_epsilon=4.0, fit_recipe="typical",
                           n_features=20, data_norm=1.0, n_batches="auto")
    assert sq.n_batches > 1 and 1.0 / (sq.n_batches * sq.learning_rate * sq.lam) >= 10
    assert sq.fit_epochs < 10


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.01])
def test_the_dp_advantage_bound_is_the_largest_gap_of_the_dp_region(epsilon, delta):
    # Oracle: the largest TPR - FPR over a fine grid of FPR, with TPR the
    # largest the two (epsilon, delta) inequalities allow.
    fpr = np.linspace(0.0, 1.0, 200001)
    a = math.exp(epsilon)
    tpr = np.minimum.reduce([np.ones_like(fpr), a * fpr + delta,
                             1.0 - ((1.0 - fpr) - delta) / a])
    assert acc.advantage_bound_dp(epsilon=epsilon, delta=delta) == pytest.approx(
        float(np.max(tpr - fpr)), abs=1e-5)
