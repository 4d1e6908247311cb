# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Exact checks of the cyclic mini-batch accountant (privacy-accounting.md, Sec. 12).

Independent of the accountant's own code paths wherever possible:

* the optimal shift schedule of Theorem 12.1 is solved as a generic convex
  program in the original variables ``a_k`` (SLSQP), and by a separate
  lower-hull routine written here;
* exact Gaussian processes (1-D quadratic losses ``h th^2 / 2 - v th`` with a
  curvature per batch in ``[0, beta w]``, so the maps are ``c_k``-Lipschitz and
  the runs are Gaussian with equal variances, ``R_q = q m^2 / (2 V)``) are run
  with the cyclic + ramp schedule over multi-segment histories, with a new
  position of the unit in every segment and deletions, and must stay at or
  below ``rho_cyclic_present`` / ``rho_cyclic_removed``;
* the solver itself (``run_segment``, noise off) on a 1-D linear-quadratic
  problem must move two neighbouring runs apart by exactly the drift recursion
  the accountant assumes, and never more than ``max_p sum_k w_k b_k``;
* the planner: every figure it reports stays within the plan's targets.

Written by a second, independent reader of Section 12. It found three faults,
now fixed and pinned here: edits that run more batches than the fit were run
with ``B' = N / E'`` but accounted with the fit's ``B``
(test_edit_with_insertions_runs_the_contraction_it_accounts); growth past the
step size's headroom raised the DP figure above the target
(test_insertions_never_push_dp_above_target); the noise factor did not cover
one long continuation (test_every_continuation_length_is_covered_by_the_noise_factor).
"""

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from skforget import accounting as A
from skforget.accounting import (
    Segment,
    rho_cyclic_present,
    rho_cyclic_removed,
)
from skforget.accounting._cyclic import _hull_energy, step_sizes

# ----------------------------------------------------------------- references


def spec_etas(E, epochs, eta):
    """Section 12.1: constant eta for epochs - 1 passes, then eta (E - i) / E."""
    return np.array([eta] * ((epochs - 1) * E) + [eta * (E - i) / E for i in range(E)])


def spec_contraction(etas, lam, beta, w):
    return np.maximum(np.abs(1 - etas * lam), np.abs(1 - etas * (lam + beta * w)))


def steps_of(segs, *, lam, beta, sigma, S, N, positions, present):
    """(b, c, s2) of a history; ``positions[i]`` is an int (the segment's fixed
    order) or one position per epoch (any data-independent order)."""
    bs, cs, s2s = [], [], []
    for (E, m, eta, w), pos, here in zip(segs, positions, present, strict=True):
        et = spec_etas(E, m, eta)
        b = np.zeros_like(et)
        if here:
            per_epoch = [pos] * m if np.isscalar(pos) else list(pos)
            for e, p in enumerate(per_epoch):
                b[e * E + p] = et[e * E + p] * S * E / N
        bs.append(b)
        cs.append(spec_contraction(et, lam, beta, w))
        s2s.append(2 * et * sigma**2)
    return np.concatenate(bs), np.concatenate(cs), np.concatenate(s2s)


def rho_qp(b, c, s2):
    """Theorem 12.1's problem as stated in (12.1), solved generically:
    min sum a_k^2 / (2 s_k^2) s.t. z_k = c_k z_{k-1} + b_k - a_k >= 0, z_T = 0,
    a_k >= 0 (variables u_k = a_k / s_k)."""
    T = len(b)
    s = np.sqrt(s2)
    L = np.zeros((T, T))
    for k in range(T):
        L[k, k] = 1.0
        for i in range(k - 1, -1, -1):
            L[k, i] = L[k, i + 1] * c[i + 1]
    zb = L @ b
    M = L * s[None, :]
    scale = np.abs(zb).max()
    cons = [{"type": "ineq", "fun": lambda u: (zb[:-1] - M[:-1] @ u) / scale,
             "jac": lambda u: -M[:-1] / scale},
            {"type": "eq", "fun": lambda u: np.array([zb[-1] - M[-1] @ u]) / scale,
             "jac": lambda u: -M[-1:] / scale}]
    u0 = np.zeros(T)
    u0[-1] = zb[-1] / M[-1, -1]
    res = minimize(lambda u: 0.5 * u @ u, u0, jac=lambda u: u, method="SLSQP",
                   constraints=cons, bounds=[(0, None)] * T,
                   options={"ftol": 1e-16, "maxiter": 1000})
    return res.fun


def rho_hull(b, c, s2):
    """Theorem 12.1 by a plain lower hull (independent of ``_hull_energy``)."""
    logc = np.log(c)
    w = np.exp(np.concatenate([np.cumsum(logc[::-1])[::-1][1:], [0.0]]))
    tau = np.concatenate([[0.0], np.cumsum(w * w * s2)])
    bc = np.concatenate([[0.0], np.cumsum(w * b)])
    pts = sorted([(0.0, 0.0)] + [(tau[k], bc[k]) for k in range(len(b)) if b[k] > 0]
                 + [(tau[-1], bc[-1])])
    hull = []
    for p in pts:
        while len(hull) >= 2:
            (ax, ay), (bx, by) = hull[-2], hull[-1]
            if (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax) > 0:
                break
            hull.pop()
        hull.append(p)
    return sum((y1 - y0) ** 2 / (2 * (x1 - x0))
               for (x0, y0), (x1, y1) in zip(hull[:-1], hull[1:], strict=True)
               if x1 > x0)


def exact_gaussian(mult, drift, s2, v0=0.0):
    m, V = 0.0, v0
    for a, d, s in zip(mult, drift, s2, strict=True):
        m = a * m + d
        V = a * a * V + s
    return m * m / (2 * V)


def problem(kappa, eta_rule):
    beta = 0.5
    lam = beta / (kappa - 1)
    eta = {"1/M": 1 / (lam + beta), "default": 2 / (2 * lam + 1.1 * beta),
           "max": 2 / (2 * lam + beta)}[eta_rule]
    return lam, beta, eta


def accountant(segs, n_present, **kw):
    S_ = [Segment(*s) for s in segs]
    if n_present == len(segs):
        return rho_cyclic_present(S_, **kw)
    return rho_cyclic_removed(S_, n_present, **kw)


# ------------------------------------------------------------------ schedule


@pytest.mark.parametrize("E, m", [(1, 1), (1, 5), (4, 1), (4, 3), (7, 2)])
def test_step_sizes_are_the_spec_schedule(E, m):
    assert np.array_equal(step_sizes(Segment(E, m, 0.7)), spec_etas(E, m, 0.7))


# ------------------------------------------------------- Theorem 12.1 (QP)


def test_hull_matches_generic_convex_program_on_random_sequences():
    rng = np.random.default_rng(0)
    for _ in range(16):
        T = int(rng.integers(2, 25))
        b = rng.exponential(1, T) * (rng.random(T) < 0.5)
        b[rng.integers(T)] += 1.0
        c = rng.uniform(0.3, 0.999, T)
        s2 = rng.uniform(0.05, 2, T)
        qp = rho_qp(b, c, s2)
        assert rho_hull(b, c, s2) == pytest.approx(qp, rel=1e-7)
        # the library's vectorised hull on the same obstacle points
        w = np.exp(np.concatenate([np.cumsum(np.log(c)[::-1])[::-1][1:], [0.0]]))
        tau = np.concatenate([[0.0], np.cumsum(w * w * s2)])
        bc = np.concatenate([[0.0], np.cumsum(w * b)])
        uses = np.flatnonzero(b > 0)
        got = _hull_energy(tau[uses][None, :], bc[uses][None, :],
                           np.array([tau[-1]]), np.array([bc[-1]]))[0]
        assert got == pytest.approx(qp, rel=1e-7)


@pytest.mark.parametrize("kappa, eta_rule, E, m, absent", [
    (20, "default", 1, 6, 0), (20, "default", 3, 4, 0), (50, "1/M", 5, 2, 0),
    (10, "max", 4, 3, 2), (200, "default", 6, 2, 1), (5, "default", 2, 8, 3),
])
def test_exact_window_equals_convex_program(kappa, eta_rule, E, m, absent):
    """One present segment (every position), then ``absent`` ramp-ended passes."""
    lam, beta, eta = problem(kappa, eta_rule)
    N, sigma, S = 10.0 * E, 0.4, 2.0
    segs = [(E, m, eta, 1.0)] + [(E, 1, eta, 0.9)] * absent
    kw = dict(lam=lam, beta=beta, sigma=sigma, sensitivity=S, normaliser=N)
    want = max(rho_qp(*steps_of(segs, lam=lam, beta=beta, sigma=sigma, S=S, N=N,
                                positions=[p] * len(segs),
                                present=[True] + [False] * absent))
               for p in range(E))
    assert accountant(segs, 1, **kw) == pytest.approx(want, rel=1e-7)


# --------------------------------------------------- Lemma 12.2 (lumping)


def test_lumped_bound_covers_every_position_sequence():
    """Earlier segments get a position per epoch (any order, ramps included);
    the exact optimum of the full step sequence never exceeds the bound."""
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(40):
        kappa = float(rng.choice([5, 20, 100]))
        lam, beta, eta = problem(kappa, str(rng.choice(["1/M", "default"])))
        E = int(rng.integers(2, 7))
        N, sigma, S = 10.0 * E, 0.3, 2.0
        segs = [(E, int(rng.integers(1, 4)), eta, float(rng.choice([1.0, 1.1, 0.6])))
                for _ in range(int(rng.integers(2, 4)))]
        n_present = int(rng.integers(2, len(segs) + 1))
        present = [i < n_present for i in range(len(segs))]
        kw = dict(lam=lam, beta=beta, sigma=sigma, sensitivity=S, normaliser=N)
        bound = accountant(segs, n_present, **kw)
        for mode in range(4):
            pos = []
            for i, (E_, m, _, _) in enumerate(segs):
                if i == n_present - 1 or i >= n_present:
                    pos.append(None)
                elif mode == 0:
                    pos.append([int(x) for x in rng.integers(0, E_, m)])
                elif mode == 1:
                    pos.append([E_ - 1] * m)  # last batch of every epoch
                elif mode == 2:
                    pos.append([0] * (m - 1) + [E_ - 1])
                else:
                    pos.append([E_ - 1 if e % 2 == 0 else 0 for e in range(m)])
            for p in range(E):
                full = [p if x is None else x for x in pos]
                got = rho_hull(*steps_of(segs, lam=lam, beta=beta, sigma=sigma, S=S,
                                         N=N, positions=full, present=present))
                worst = max(worst, got / bound)
    assert worst <= 1 + 1e-9
    assert worst > 0.5  # the check is not vacuous


def test_groups_across_positions_cost_at_most_g_squared():
    """A unit of g records at distinct positions (ramp included): rho* of the
    summed drifts <= g^2 max_p rho*(p) (sqrt(rho*) is sublinear in the drifts)."""
    lam, beta, eta = problem(20, "default")
    for E, m in ((5, 1), (5, 3), (8, 2)):
        et = spec_etas(E, m, eta)
        c, s2 = 1 - et * lam, 2 * et * 0.3**2
        pats = []
        for p in range(E):
            b = np.zeros_like(et)
            b[p::E] = et[p::E]
            pats.append(b)
        single = max(rho_hull(b, c, s2) for b in pats)
        for g in (2, 3):
            for combo in itertools.combinations(range(E), g):
                assert rho_hull(sum(pats[i] for i in combo), c, s2) <= \
                    g * g * single * (1 + 1e-12)


# ------------------------------------------------- exact Gaussian processes


def gaussian_history(segs, *, lam, sigma, S, N, pos, present, H):
    mult, drift, s2 = [], [], []
    for i, (E, m, eta, _w) in enumerate(segs):
        et = spec_etas(E, m, eta)
        j = np.arange(len(et)) % E
        mult.append(1 - et * (lam + H[i][j]))
        d = np.zeros_like(et)
        if present[i]:
            d[j == pos[i]] = et[j == pos[i]] * S * E / N
        drift.append(d)
        s2.append(2 * et * sigma**2)
    return np.concatenate(mult), np.concatenate(drift), np.concatenate(s2)


def test_full_batch_linear_loss_attains_the_bound():
    """Oracle O1/O9: with one batch and a point start the bound is exact."""
    lam, beta, eta = 0.01, 0.5, 1 / 0.51
    sigma, S, N = 0.004450159723945581, 2.0, 10000.0
    for T0, K in ((591, 0), (100, 30), (5, 59)):
        segs = [(1, T0, eta, 1.0)] + ([(1, K, eta, 1.0)] if K else [])
        bound = accountant(segs, 1, lam=lam, beta=beta, sigma=sigma, sensitivity=S,
                           normaliser=N)
        mult, drift, s2 = gaussian_history(
            segs, lam=lam, sigma=sigma, S=S, N=N, pos=[0] * len(segs),
            present=[True] + [False] * (len(segs) - 1),
            H=[np.zeros(1)] * len(segs))
        assert exact_gaussian(mult, drift, s2) == pytest.approx(bound, rel=1e-9)
    assert 10 * rho_cyclic_present([Segment(1, 591, eta)], lam=lam, beta=beta,
                                   sigma=sigma, sensitivity=S, normaliser=N) == \
        pytest.approx(0.9999834680191142, rel=1e-12)


def test_exact_gaussian_histories_stay_below_the_bound():
    """Multi-segment histories, a fresh position per segment, deletions, curvature
    per batch in [0, beta w] (zero, random, extreme, and the value making a map 0),
    point and stationary starts."""
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(120):
        kappa = float(rng.choice([10, 50, 200]))
        lam, beta, eta = problem(kappa, str(rng.choice(["1/M", "default"])))
        E = int(rng.integers(1, 9))
        N, sigma, S = float(E * rng.integers(5, 30)), float(rng.uniform(0.05, 1)), 2.0
        relax = 1 / (E * eta * lam)
        n_segs = int(rng.integers(1, 5))
        segs = [(E, int(rng.integers(1, max(2, int(2 * relax)) + 1)), eta,
                 float(rng.choice([1.0, 1.1, 0.8]))) for _ in range(n_segs)]
        n_present = int(rng.integers(1, len(segs) + 1))
        present = [i < n_present for i in range(len(segs))]
        bound = accountant(segs, n_present, lam=lam, beta=beta, sigma=sigma,
                           sensitivity=S, normaliser=N)
        for trial in range(6):
            pos = [int(rng.integers(0, E)) for _ in segs]
            if trial == 0:
                pos = [E - 1] * len(segs)
            H = []
            for (E_, _m, et, w) in segs:
                H.append([np.zeros(E_), rng.uniform(0, beta * w, E_),
                          np.full(E_, min(beta * w, 1 / et - lam)),
                          rng.choice([0.0, beta * w], E_)][trial % 4])
            parts = gaussian_history(segs, lam=lam, sigma=sigma, S=S, N=N, pos=pos,
                                     present=present, H=H)
            for v0 in (0.0, sigma**2 / (lam * (1 - eta * lam / 2))):
                worst = max(worst, exact_gaussian(*parts, v0=v0) / bound)
    assert worst <= 1 + 1e-9
    assert worst > 0.99  # linear loss, point start: the bound is (nearly) attained


def test_exact_gaussian_adversarial_curvature():
    """Maximise the exact divergence over each batch's curvature in [0, beta w]."""
    rng = np.random.default_rng(3)
    for kappa, E, segs_m, n_present in ((20, 4, (6, 2, 3), 2), (50, 5, (4, 3), 2),
                                        (10, 3, (5, 2, 2), 3)):
        lam, beta, eta = problem(kappa, "default")
        N, sigma, S = 10.0 * E, 0.2, 2.0
        segs = [(E, m, eta, 1.1) for m in segs_m]
        present = [i < n_present for i in range(len(segs))]
        bound = accountant(segs, n_present, lam=lam, beta=beta, sigma=sigma,
                           sensitivity=S, normaliser=N)
        for pos in ([E - 1] * len(segs), [0, E - 1, 1][:len(segs)]):
            def neg(x, E=E, segs=segs, lam=lam, sigma=sigma, S=S, N=N, pos=pos,
                    present=present, bound=bound):
                H = [x[i * E:(i + 1) * E] for i in range(len(segs))]
                return -exact_gaussian(*gaussian_history(
                    segs, lam=lam, sigma=sigma, S=S, N=N, pos=pos, present=present,
                    H=H)) / bound
            x0 = rng.uniform(0, beta * 1.1, E * len(segs))
            res = minimize(neg, x0, method="L-BFGS-B",
                           bounds=[(0, beta * 1.1)] * (E * len(segs)))
            assert -res.fun <= 1 + 1e-9


# ------------------------------------------------- noise factor, oracles


def test_rho_is_exactly_proportional_to_inverse_variance():
    segs = [Segment(7, 30, 1.5, 1.0), Segment(7, 5, 1.5, 1.05), Segment(7, 9, 1.5, 0.9)]
    vals = [rho_cyclic_present(segs, lam=0.004, beta=0.5, sigma=s, sensitivity=2,
                               normaliser=700) * s * s for s in (1e-3, 0.05, 1.0, 30.0)]
    assert np.ptp(vals) <= 1e-12 * vals[0]


@pytest.mark.parametrize("kappa, E, epochs, F", [
    (1000, 100, 120, 1.0734), (100, 10, 120, 1.0328), (1000, 10, 1201, 1.0033),
])
def test_design_note_ramp_oracles(kappa, E, epochs, F):
    """fast-training-notes.md Sections 5 and 11 (eta = 1/M, N = 1e6, S = 2)."""
    lam, beta, eta = problem(kappa, "1/M")
    rho = A.epsilon_to_rho(epsilon=1.0, delta=1e-5)
    N, S = 1e6, 2.0
    sigma = math.sqrt(S**2 * (2 - eta * lam) / (4 * lam * rho * N**2))
    got = rho_cyclic_present([Segment(E, epochs, eta)], lam=lam, beta=beta,
                             sigma=sigma, sensitivity=S, normaliser=N) / rho
    assert got == pytest.approx(F, abs=6e-5)


# ------------------------------------------- what runs is what is accounted


@pytest.mark.parametrize("E, m, n, N", [(1, 6, 40, 40), (4, 3, 40, 40), (5, 2, 43, 40),
                                        (6, 4, 37, 40)])
def test_solver_drift_matches_the_accounted_recursion(E, m, n, N):
    """Squared loss, 1-D rows all equal to 1 (the largest curvature a batch can
    have), no clipping, noise off: two runs whose targets differ in one row move
    apart exactly by m_k = (1 - eta_k (lam + n_b / B)) m_{k-1} + eta_k Delta / B
    at the row's batch, with B = N / E and the accountant's step sizes; and by no
    more than max_p sum_k w_k b_k with the accountant's c_k."""
    from skforget._rows import make_design
    from skforget._solver import _batch_layout, run_segment

    lam, beta = 0.05, 1.0
    eta = 2 / (2 * lam + 1.1 * beta)
    w = math.ceil(n / E) * E / N if E > 1 else n / N
    seg = Segment(E, m, eta, w)
    X = np.ones((n, 1))
    y = np.linspace(-0.5, 0.5, n)
    row, delta = n // 3, 0.25
    y2 = y.copy()
    y2[row] += delta
    out = []
    for yy in (y, y2):
        design = make_design(X, yy, loss="squared", data_norm=1.0,
                             intercept_scaling=0.0,
                             gradient_bound=1e6)
        W, _ = run_segment(design, np.zeros((1, 1)), np.zeros(1), segment=seg, lam=lam,
                           sigma=0.0, normaliser=N, rng=np.random.default_rng(5),
                           fit_intercept=False)
        out.append(W[0, 0])
    order, bounds = _batch_layout(n, E, np.random.default_rng(5))
    if E == 1:
        order = np.arange(n)
    batch_of = np.empty(n, dtype=int)
    sizes = np.diff(bounds)
    for j in range(E):
        batch_of[order[bounds[j]:bounds[j + 1]]] = j
    B = N / E
    etas = spec_etas(E, m, eta)
    mdiff = 0.0
    for k, et in enumerate(etas):
        j = k % E
        mdiff = (1 - et * (lam + sizes[j] / B)) * mdiff + \
            (et * delta / B if batch_of[row] == j else 0.0)
    assert abs(out[0] - out[1]) == pytest.approx(abs(mdiff), rel=1e-9, abs=1e-15)
    c = spec_contraction(etas, lam, beta, w)
    wts = np.exp(np.concatenate([np.cumsum(np.log(c)[::-1])[::-1][1:], [0.0]]))
    coupling = max(np.sum((wts * etas * delta / B)[p::E]) for p in range(E))
    assert abs(out[0] - out[1]) <= coupling * (1 + 1e-12)


# ------------------------------------------------------------- the planner


def _plan(N, d, eps, n_batches="auto", lam_factor=1.0, max_edit_size=None,
          relation="replace"):
    delta = A.default_delta(n_samples=N)
    S = A.sensitivity(gradient_bound=0.5, relation=relation)
    rho = A.epsilon_to_rho(epsilon=eps, delta=delta)
    lam = lam_factor * A.default_regularization(sensitivity=S, n_params=d + 1, rho=rho,
                                                n_samples=N)
    return A.plan_training(loss="logistic", n_samples=N, n_params=d + 1, lam=lam,
                           row_norm=math.sqrt(2), clip_norm=0.5, epsilon=eps,
                           delta=delta, deletion_epsilon=eps / 10,
                           max_edit_size=max_edit_size or max(1, N // 100),
                           relation=relation, n_batches=n_batches,
                           fit_recipe="typical", n_features=d, data_norm=1.0)


def _serve(plan, g, n, n_del, n_rep, n_ins):
    ep = A.plan_unlearning(plan, g, n_samples=n, n_deleted=n_del, n_replaced=n_rep,
                           n_inserted=n_ins)
    extra = {"n_batches": ep.n_batches} if hasattr(ep, "n_batches") else {}
    return A.guarantee_after_edit(plan, g, steps=ep.steps, n_samples=n,
                                  n_deleted=n_del, n_replaced=n_rep, n_inserted=n_ins,
                                  seeded=False, retrained=ep.retrained,
                                  data_weight=ep.data_weight, **extra)


@pytest.mark.parametrize("N, d, eps, n_batches, relation", [
    (500, 20, 1.0, "auto", "replace"), (20000, 100, 0.3, 7, "replace"),
    (3000, 10, 1.0, "auto", "zero_out"), (100000, 20, 1.0, "auto", "replace"),
    (2000, 20, 3.0, 1, "replace"),
])
def test_deletion_streams_stay_within_targets(N, d, eps, n_batches, relation):
    """Deletions and replacements only: no edit is refused, every DP figure is at
    most the target and every deletion figure at most the deletion target."""
    plan = _plan(N, d, eps, n_batches, relation=relation, max_edit_size=5)
    g = A.guarantee_after_fit(plan, steps=plan.fit_steps, seeded=False)
    assert g.rho <= plan.rho_target * (1 + 1e-9)
    rng = np.random.default_rng(N)
    n = N
    for _ in range(8):
        n_rep = int(rng.integers(0, 2))
        n_del = int(rng.integers(0 if n_rep else 1, 4))
        n -= n_del
        g = _serve(plan, g, n, n_del, n_rep, 0)
        assert g.rho <= plan.rho_target * (1 + 1e-9)
        assert g.edits[-1].rho_deletion <= plan.rho_deletion_target * (1 + 1e-9)


@pytest.mark.parametrize("N, d, eps, n_batches, lam_factor", [
    (1000, 5, 3.0, 1, 30.0), (20000, 20, 1.0, "auto", 1.0),
    (3000, 20, 1.0, "auto", 1.0),
])
def test_insertions_never_push_dp_above_target(N, d, eps, n_batches, lam_factor):
    """Insert-only streams: an edit is either refused or leaves every DP figure
    within the target (the 10 % headroom of the default step size must not turn
    into a silent excess once the batches grow past it)."""
    plan = _plan(N, d, eps, n_batches, lam_factor)
    g = A.guarantee_after_fit(plan, steps=plan.fit_steps, seeded=False)
    n = N
    for _ in range(40):
        n += plan.max_edit_size
        try:
            g = _serve(plan, g, n, 0, 0, plan.max_edit_size)
        except ValueError:
            break
        assert g.rho <= plan.rho_target * (1 + 1e-9), (n / N, g.rho / plan.rho_target)


def test_every_continuation_length_is_covered_by_the_noise_factor():
    """Section 12.6: sigma^2 = F sigma_fb^2 is meant to put the worst planned
    history at the target; a continuation may be long (the deletion target decides
    its length), so one long segment at the plan's sigma must be within it too."""
    plan = A.plan_training(loss="logistic", n_samples=500, n_params=101,
                           lam=0.0015006529579568526, row_norm=math.sqrt(2),
                           clip_norm=0.5, epsilon=3.0, delta=1e-5, deletion_epsilon=3.0,
                           max_edit_size=5, n_batches="auto", fit_recipe="typical",
                           n_features=100, data_norm=1.0)
    assert plan.n_batches > 1 and plan.edit_mode == "continue"
    relax = 1 / (plan.n_batches * plan.learning_rate * plan.lam)
    common = dict(lam=plan.lam, beta=plan.beta, sigma=plan.sigma,
                  sensitivity=plan.sensitivity, normaliser=plan.normaliser)
    E, eta, w = plan.n_batches, plan.learning_rate, plan.fit_data_weight
    fit = Segment(E, plan.fit_epochs, eta, w)
    for m in (plan.min_edit_epochs, int(3 * relax), int(20 * relax)):
        assert rho_cyclic_present([fit, Segment(E, m, eta, w)], **common) <= \
            plan.rho_target * (1 + 1e-9), m
    assert rho_cyclic_present([Segment(E, int(20 * relax), eta, w)], **common) <= \
        plan.rho_target * (1 + 1e-9)
    # and the edit that found no continuation on the first version is served
    g = A.guarantee_after_fit(plan, steps=plan.fit_steps, seeded=False)
    g = _serve(plan, g, 499, 3, 1, 1)
    g = _serve(plan, g, 497, 2, 2, 0)
    assert g.rho <= plan.rho_target * (1 + 1e-9)


def test_edit_with_insertions_runs_the_contraction_it_accounts():
    """An edit that grows the database: the solver, called the way the estimator
    calls it for that EditPlan, must contract two runs started apart by no more
    than the product of the c_k the accountant uses for that edit (data weight
    of the EditPlan, step sizes of its Segment). Squared loss, 1-D rows equal
    to 1 (the largest curvature the batches can have), noise off, no clipping."""
    from skforget._rows import make_design
    from skforget._solver import run_segment

    N, E, lam = 40, 10, 0.01
    plan = A.plan_training(loss="squared", n_samples=N, n_params=1, lam=lam,
                           row_norm=1.0, clip_norm=1.0, epsilon=1.0, delta=1e-5,
                           deletion_epsilon=0.1, max_edit_size=9, n_batches=E,
                           fit_recipe="worst_case")
    g = A.guarantee_after_fit(plan, steps=plan.fit_steps, seeded=False)
    n = N - 1 + 9
    ep = A.plan_unlearning(plan, g, n_samples=n, n_deleted=1, n_replaced=0,
                           n_inserted=9)
    E_edit = getattr(ep, "n_batches", plan.n_batches)
    seg = Segment(E_edit, ep.steps // E_edit, plan.learning_rate, ep.data_weight)
    design = make_design(np.ones((n, 1)), np.zeros(n), loss="squared", data_norm=1.0,
                         intercept_scaling=0.0, gradient_bound=1e9)
    ends = []
    for start in (0.0, 1.0):
        W, _ = run_segment(design, np.full((1, 1), start), np.zeros(1),
                           segment=plan.segment(E_edit, ep.steps),
                           lam=lam, sigma=0.0, normaliser=N,
                           rng=np.random.default_rng(0), fit_intercept=False)
        ends.append(W[0, 0])
    etas = spec_etas(E_edit, seg.epochs, plan.learning_rate)
    lipschitz = np.prod(spec_contraction(etas, lam, plan.beta, ep.data_weight))
    assert abs(ends[1] - ends[0]) <= lipschitz * (1 + 1e-9)


# --- the planner's speed paths are the same numbers (issue 23, item 5) -----------
def _python_hull_energy(tau_pts, bc_pts, tau_end, bc_end):
    """The monotone chain in Python floats (IEEE double), as the planner ran it
    before it was compiled: the reference the compiled hull must equal."""
    P, m = tau_pts.shape
    out = np.empty(P)
    for r in range(P):
        xs = [0.0] + tau_pts[r].tolist() + [float(tau_end[r])]
        ys = [0.0] + bc_pts[r].tolist() + [float(bc_end[r])]
        hx, hy = [], []
        for px, py in zip(xs, ys, strict=True):
            while len(hx) >= 2:
                ax, ay, bx, by = hx[-2], hy[-2], hx[-1], hy[-1]
                if (bx - ax) * (py - ay) - (by - ay) * (px - ax) <= 0.0:
                    hx.pop()
                    hy.pop()
                else:
                    break
            hx.append(px)
            hy.append(py)
        pieces = np.zeros(m + 1)
        for i in range(len(hx) - 1):
            dx, dy = hx[i + 1] - hx[i], hy[i + 1] - hy[i]
            pieces[i] = dy * dy / (2.0 * dx)
        out[r] = pieces.sum()
    return out


@pytest.mark.parametrize("seed", range(5))
def test_compiled_hull_is_bitwise_the_python_chain(seed):
    """The compiled hull (no contraction, no reassociation) performs the
    Python expressions' operations in their order: the same floats, on points
    with collinear runs, exact ties and many rows too."""
    from skforget.accounting import _cyclic

    rng = np.random.default_rng(seed)
    for trial in range(60):
        P = int(rng.integers(1, 12)) if trial % 10 else int(rng.integers(40, 300))
        # Long rows too: a stationary history's window has hundreds of epochs.
        m = int(rng.integers(1, 90)) if trial % 7 else int(rng.integers(500, 3000))
        tau = np.cumsum(rng.uniform(0.01, 1.0, (P, m)), axis=1)
        bc = np.cumsum(rng.choice([0.0, 0.5, 1.0], (P, m)), axis=1)  # ties
        tau_end = tau[:, -1] + rng.uniform(0.01, 1.0, P)
        bc_end = bc[:, -1] + rng.uniform(0.0, 2.0, P)
        np.testing.assert_array_equal(_cyclic._hull_energy(tau, bc, tau_end, bc_end),
                                      _python_hull_energy(tau, bc, tau_end, bc_end))
    with pytest.raises(ValueError, match="same shape"):
        _cyclic.hull_pieces(np.zeros((2, 3)), np.zeros((2, 4)))


def test_remembered_bounds_equal_fresh_ones():
    """The bound is remembered by its public arguments only: a cache hit is
    the value a fresh evaluation gives, and different arguments miss."""
    from skforget.accounting import _cyclic

    segs = [Segment(3, 40, 1.2), Segment(3, 7, 1.2)]
    kw = dict(lam=0.01, beta=0.5, sigma=0.3, sensitivity=1.0, normaliser=1500)
    _cyclic._bound_cached.cache_clear()
    first = rho_cyclic_present(segs, **kw)
    again = rho_cyclic_present(segs, **kw)
    fresh = _cyclic._bound_uncached(segs, [True, True], **kw)
    assert first == again == fresh
    assert _cyclic._bound_cached.cache_info().hits >= 1
    other = rho_cyclic_present(segs, **{**kw, "sigma": 0.31})
    assert other < first
