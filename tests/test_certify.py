# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Prediction certificates: spec oracles, properties, brute-force soundness, refusals.

A counterfactual here is the same training pipeline run with the model's frozen
plan (same normaliser N, sigma, eta, lambda and step counts) and the same noise
streams, on databases without some records. It is built by calling the solver
directly: ``fit`` on fewer rows would re-plan with a different N.
"""

import functools
import itertools
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import normalize

from skforget import (
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    NotCertifiableError,
)
from skforget import accounting as acc
from skforget._rows import make_design
from skforget._solver import initial_draw, run_noisy_gd
from skforget._validation import segment_rng
from skforget.certify import (
    BallTracker,
    HistorySegment,
    ball_step,
    contraction_factors,
    current_size_remove_increments,
    geometric_sum,
    interval_box,
    interval_certify,
    public_radius,
    segments_from_guarantee,
    step_increments,
    topsum_table,
)
from skforget.certify._ball import (
    MODES,
    augmented_row_norms,
    check_step_size,
    clipped_multipliers,
)
from skforget.datasets import load_dataset

# Same slack as the estimators (certificates.md, Section 3.5).
SLACK = 1 + 1e-9

# --- data and counterfactual helpers ---------------------------------------------


@functools.cache
def _split(name):
    d = load_dataset("breast_cancer" if name == "breast_cancer" else "digits")
    X, y = d.data, d.target
    if name == "digits38":
        keep = np.isin(y, [3, 8])
        X, y = X[keep], (y[keep] == 8).astype(int)
    elif name == "digits012":
        keep = np.isin(y, [0, 1, 2])
        X, y = X[keep], y[keep]
    return train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)


def _design(est, X, y):
    y_enc, _, loss, _ = est._encode_targets(np.asarray(y), fit=False)
    return est._design(X, y_enc, loss, where="X")


def _pipeline(est, databases, callbacks=None):
    """Same-seed run of ``est``'s frozen plan over one database per segment."""
    plan, g = est._plan, est.privacy_guarantee_
    steps = [g.fit_steps] + [e.steps for e in g.edits]
    assert len(databases) == len(steps)
    W_shape = np.atleast_2d(est.coef_).shape
    rng = segment_rng(est.random_state, 0)
    W, b = initial_draw(rng, W_shape, fit_intercept=est.fit_intercept,
                        init_variance=plan.init_variance)
    for j, ((X, y), T) in enumerate(zip(databases, steps, strict=True)):
        if j:
            rng = segment_rng(est.random_state, j)
        W, b = run_noisy_gd(_design(est, X, y), W, b, steps=T,
                            learning_rate=plan.learning_rate, lam=plan.lam,
                            sigma=plan.sigma, normaliser=plan.normaliser, rng=rng,
                            fit_intercept=est.fit_intercept,
                            callback=None if callbacks is None else callbacks[j])
    return W, b


def _distance(est, W, b):
    """Per-output distance of ``(W, b)`` to the model's coefficients."""
    W0, b0 = est._theta()
    return np.sqrt(np.sum((W - W0) ** 2, axis=1) + (b - b0) ** 2)


def _predict_with(est, W, b, X):
    """Predictions of the estimator's class with other coefficients."""
    other = pickle.loads(pickle.dumps(est))
    other._set_coefficients(W, b)
    return other.predict(X)


def _gradient_norms(est, X, y):
    """Clipped gradient norms of the rows at the fitted coefficients, (n, K)."""
    design = _design(est, X, y)
    W, b = est._theta()
    norms = augmented_row_norms(design)[:, None]
    return np.abs(clipped_multipliers(design, W, b)) * norms


def _influence_set(est, X, y, query, k):
    """The k rows whose removal moves the margin at ``query`` most towards 0.

    Removing S shifts theta by about H^-1 sum_S g_i / N (H the Hessian of the
    clipped objective), so rows with the most negative sign(m) g_i . H^-1 x_q
    push the margin at x_q towards the boundary (certificates.md, 6.2 item 3).
    """
    design = _design(est, X, y)
    W, b = est._theta()
    rows = np.column_stack([X * design.scale[:, None],
                            np.full(len(X), design.intercept_scaling)])
    z = rows @ np.concatenate([W[0], b])
    p = expit(z)
    slope = p * (1 - p)
    slope[np.abs(p - y) >= design.tau] = 0.0  # clipped rows have a flat multiplier
    N, lam = est._plan.normaliser, est._plan.lam
    H = lam * np.eye(rows.shape[1]) + (rows * slope[:, None]).T @ rows / N
    q = np.append(query, est._intercept_scaling())
    grads = clipped_multipliers(design, W, b)[:, 0][:, None] * rows
    margin = q @ np.concatenate([W[0], b])
    score = np.sign(margin) * grads @ np.linalg.solve(H, q)
    return np.argsort(score)[:k]


def _check_counterfactual(est, W, b, X_test, k, *, mode="remove", tol=None,
                          data_dependent=(False, True)):
    """``(W, b)`` is inside every radius and certified predictions agree."""
    dist = _distance(est, W, b)
    ratios = []
    for dd in data_dependent:
        r = np.atleast_1d(est.certified_radius(k, mode, data_dependent=dd))
        assert np.all(dist <= r * SLACK), (k, mode, dd, dist, r)
        ratios.append(float(np.max(dist / np.maximum(r, 1e-300))))
        if tol is None:
            mask = est.certify(X_test, k, mode, data_dependent=dd)
            same = _predict_with(est, W, b, X_test) == est.predict(X_test)
            assert np.all(same[mask]), (k, mode, dd)
        else:
            lo, hi = est.predict_bounds(X_test, k, mode, data_dependent=dd)
            pred = _predict_with(est, W, b, X_test)
            assert np.all((lo <= pred) & (pred <= hi))
    return max(ratios)


# --- the spec's hand-checkable example (certificates.md, 6.1) ---------------------

X3 = np.array([[1.0], [0.5], [-1.0]])
Y3 = np.array([1.0, 1.0, 0.0])
ROWS3 = np.column_stack([X3, np.ones(3)])


def _design3(idx):
    idx = list(idx)
    # data_norm=inf: the example's rows are used as they are (no projection).
    return make_design(X3[idx], Y3[idx], loss="logistic", data_norm=np.inf,
                       intercept_scaling=1.0, gradient_bound=0.5)


def _run3(idx, steps, normaliser, callback=None):
    """theta_0 = 0, no noise, lambda = 0.1, eta = 1, L = 0.5 (the spec's example)."""
    W, b = run_noisy_gd(_design3(idx), np.zeros((1, 1)), np.zeros(1), steps=steps,
                        learning_rate=1.0, lam=0.1, sigma=0.0, normaliser=normaliser,
                        rng=np.random.default_rng(0), fit_intercept=True,
                        callback=callback)
    return np.array([W[0, 0], b[0]])


def test_spec_oracle_current_size_normaliser():
    # The spec's numbers use gradients averaged over the rows present (1/|D|);
    # the solver reproduces them with normaliser = |D'| and the current-size
    # functions reproduce the radius and the box.
    np.testing.assert_allclose(_run3([0, 1, 2], 1, 3), [0.310238, 0.149071], atol=1e-6)
    np.testing.assert_allclose(_run3([0, 1, 2], 3, 3), [0.804239, 0.349803], atol=1e-6)
    radii = [0.0]

    def track(t, W, b, G, Gb):
        s = clipped_multipliers(_design3([0, 1, 2]), W, b)
        e = current_size_remove_increments(s, ROWS3, 1, gradient_bound=0.5)
        radii.append(ball_step(radii[-1], 0.9, 1.0, e[1, 0]))

    _run3([0, 1, 2], 3, 3, callback=track)
    np.testing.assert_allclose(radii, [0, 0.252244, 0.475669, 0.658911], atol=1e-6)
    # Retrains without record 0 / 1 / 2.
    np.testing.assert_allclose(_run3([1, 2], 1, 2), [0.28858, 0.04683], atol=1e-5)
    np.testing.assert_allclose(_run3([0, 2], 1, 2), [0.353553, 0.0], atol=1e-6)
    np.testing.assert_allclose(_run3([0, 1], 1, 2), [0.28858, 0.400383], atol=1e-6)
    assert np.linalg.norm(_run3([0, 1], 1, 2) - _run3([0, 1, 2], 1, 3)) == \
        pytest.approx(radii[1], rel=1e-12)  # the ball is attained at t = 1
    theta3 = _run3([0, 1, 2], 3, 3)
    expected = {(1, 2): [0.772799, 0.108404], (0, 2): [0.942681, 0.0],
                (0, 1): [0.64859, 0.890452]}
    distances = {(1, 2): 0.243437, (0, 2): 0.376202, (0, 1): 0.562608}
    for keep, theta in expected.items():
        got = _run3(keep, 3, 2)
        np.testing.assert_allclose(got, theta, atol=1e-6)
        assert np.linalg.norm(got - theta3) == pytest.approx(distances[keep], abs=1e-6)
        assert np.linalg.norm(got - theta3) <= radii[3]
    for steps, lo, hi in [(1, [0.28858, 0.0], [0.353553, 0.400383]),
                          (3, [0.617591, -0.095536], [0.95813, 1.081821])]:
        box = interval_box(_design3([0, 1, 2]), np.zeros((1, 1)), np.zeros(1),
                           steps=steps, learning_rate=1.0, lam=0.1, sigma=0.0,
                           normaliser=None, rng=np.random.default_rng(0),
                           fit_intercept=True, k=1, gradient_bound=0.5)
        np.testing.assert_allclose([box.W_lo[0, 0], box.b_lo[0]], lo, atol=1e-6)
        np.testing.assert_allclose([box.W_hi[0, 0], box.b_hi[0]], hi, atol=1e-6)


def test_fixed_normaliser_oracle():
    # certificates.md, 9.8: with N = 3 frozen, removing a record changes the
    # mean gradient by exactly its clipped gradient / 3. Every gradient of the
    # example is clipped to 0.5, so r_1 = 0.5 / 3, attained by every removal.
    plan_like = dict(learning_rate=1.0, lam=0.1, beta=0.25 * 2, row_norm=2 ** 0.5,
                     normaliser=3, gradient_bound=0.5, n_outputs=1, segment=0)
    tracker = BallTracker(_design3([0, 1, 2]), k_max=1, modes=("remove",), **plan_like)
    radii = [0.0]

    def track(t, W, b, G, Gb):
        tracker.step(t, W, b, G, Gb)
        radii.append(float(tracker.radius["remove"][1, 0]))

    _run3([0, 1, 2], 3, 3, callback=track)
    np.testing.assert_allclose(radii, [0, 1 / 6, 0.316667, 0.451667], atol=1e-6)
    np.testing.assert_allclose(tracker.rho["remove"], [0.9, 0.9])
    # Public closed form k G (1 - (1 - eta lam)^T) / (N lam): the same here.
    assert radii[3] == pytest.approx(0.5 * (1 - 0.9**3) / (3 * 0.1), rel=1e-12)
    theta1, theta3 = _run3([0, 1, 2], 1, 3), _run3([0, 1, 2], 3, 3)
    expected1 = {(1, 2): [0.192387, 0.031220], (0, 2): [0.235702, 0.0],
                 (0, 1): [0.192387, 0.266922]}
    expected3 = {(1, 2): ([0.520128, 0.082126], 0.390346),
                 (0, 2): ([0.638753, 0.0], 0.386972),
                 (0, 1): ([0.479197, 0.657350], 0.447479)}
    for keep in expected1:
        np.testing.assert_allclose(_run3(keep, 1, 3), expected1[keep], atol=1e-6)
        assert np.linalg.norm(_run3(keep, 1, 3) - theta1) == pytest.approx(1 / 6,
                                                                          rel=1e-12)
        theta, dist = expected3[keep]
        np.testing.assert_allclose(_run3(keep, 3, 3), theta, atol=1e-6)
        assert np.linalg.norm(_run3(keep, 3, 3) - theta3) == pytest.approx(dist,
                                                                          abs=1e-6)
        assert dist <= radii[3]
    for steps, lo, hi in [(1, [0.192387, 0.0], [0.310238, 0.266922]),
                          (3, [0.456366, -0.034392], [0.840745, 0.723360])]:
        box = interval_box(_design3([0, 1, 2]), np.zeros((1, 1)), np.zeros(1),
                           steps=steps, learning_rate=1.0, lam=0.1, sigma=0.0,
                           normaliser=3, rng=np.random.default_rng(0),
                           fit_intercept=True, k=1, gradient_bound=0.5)
        np.testing.assert_allclose([box.W_lo[0, 0], box.b_lo[0]], lo, atol=1e-6)
        np.testing.assert_allclose([box.W_hi[0, 0], box.b_hi[0]], hi, atol=1e-6)
        for keep in expected1:
            theta = _run3(keep, steps, 3)
            assert box.W_lo[0, 0] - 1e-12 <= theta[0] <= box.W_hi[0, 0] + 1e-12
            assert box.b_lo[0] - 1e-12 <= theta[1] <= box.b_hi[0] + 1e-12


# --- property tests on small problems (certificates.md, 6.2) ---------------------


def _small(loss, seed, *, n=25, d=3, noise=1.0, k_max=2, modes=("remove",)):
    rng = np.random.default_rng(seed)
    X = normalize(rng.normal(size=(n, d))) * rng.uniform(0.3, 1.0, size=(n, 1))
    w = rng.normal(size=d)
    if loss == "logistic":
        y = (X @ w + 0.3 * rng.normal(size=n) > 0).astype(int)
        y[:2] = [0, 1]
        est = NoisyGDClassifier(C=1.0, clip_norm=0.3, epsilon=5.0, max_iter=60,
                                random_state=seed, certify_k_max=k_max,
                                certify_modes=modes)
    else:
        y = X @ w + 0.1 * rng.normal(size=n)
        est = NoisyGDRegressor(alpha=1.0, clip_norm=0.3, epsilon=5.0, max_iter=60,
                               random_state=seed, certify_k_max=k_max,
                               certify_modes=modes)
    est.fit(X, y)
    if noise != 1.0:
        # Rerun the same seeded pipeline with the noise scaled; the certificate
        # must hold whatever the noise (it cancels in the coupling).
        est._plan = est._plan.__class__(**{
            **{f: getattr(est._plan, f) for f in est._plan.__dataclass_fields__},
            "sigma": est._plan.sigma * noise})
        tracker = est._start_tracking(_design(est, X, y), est._plan, segment=0)
        W, b = _pipeline(est, [(X, y)], callbacks=[tracker.step])
        est._set_coefficients(W, b)
        for name, value in tracker.finish().items():
            setattr(est, name, value)
    return est, X, y


def _trajectory(est, X, y, *, track=False):
    """Iterates theta_0..theta_T of a same-seed run, and the radii r_0..r_T."""
    thetas, radii = [], [np.zeros(est.certify_k_max + 1)]
    tracker = est._start_tracking(_design(est, X, y), est._plan, segment=0) \
        if track else None

    def record(t, W, b, G, Gb):
        thetas.append(np.concatenate([W[0], b]))
        if tracker is not None:
            tracker.step(t, W, b, G, Gb)
            radii.append(tracker.radius["remove"][:, 0].copy())

    W, b = _pipeline(est, [(X, y)], callbacks=[record])
    thetas.append(np.concatenate([W[0], b]))
    return np.array(thetas), np.array(radii)


@pytest.mark.parametrize("loss, seed", [("logistic", 0), ("logistic", 1),
                                        ("squared", 2), ("squared", 3)])
def test_exhaustive_small_subsets_stay_in_the_ball_at_every_step(loss, seed):
    est, X, y = _small(loss, seed)
    nominal, radii = _trajectory(est, X, y, track=True)
    # The tracker run here is the one fit ran.
    np.testing.assert_allclose(radii[-1], est.certified_radii_["remove"], rtol=1e-12)
    public = public_radius(segments_from_guarantee(est.privacy_guarantee_), [1, 2],
                           learning_rate=est._plan.learning_rate, lam=est._plan.lam,
                           beta=est._plan.beta, row_norm=est._plan.row_norm,
                           normaliser=est._plan.normaliser, gradient_bound=0.3)
    assert np.all(radii[-1][1:] <= public * SLACK)
    worst = 0.0
    n = len(X)
    for size in (1, 2):
        for S in itertools.combinations(range(n), size):
            keep = np.setdiff1d(np.arange(n), S)
            other, _ = _trajectory(est, X[keep], y[keep])
            dist = np.linalg.norm(other - nominal, axis=1)
            assert np.all(dist <= radii[:, size] * SLACK + 1e-15), (S, dist, radii)
            worst = max(worst, dist[-1] / radii[-1, size])
    assert 0.05 < worst <= 1.0


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_radius_is_attained_at_the_first_step(loss):
    # r_1(1) = eta max_i ||g_i(theta_0)|| / N, and removing that record moves
    # theta_1 by exactly that much: the radius cannot be shrunk.
    est, X, y = _small(loss, 4, k_max=1)
    est.set_params(max_iter=1).fit(X, y)
    design = _design(est, X, y)
    rng = segment_rng(est.random_state, 0)
    W0, b0 = initial_draw(rng, (1, X.shape[1]), fit_intercept=True,
                          init_variance=est._plan.init_variance)
    norms = np.abs(clipped_multipliers(design, W0, b0))[:, 0] * augmented_row_norms(
        design)
    top = int(np.argmax(norms))
    keep = np.setdiff1d(np.arange(len(X)), [top])
    W, b = _pipeline(est, [(X[keep], y[keep])])
    r1 = est.certified_radius(1, data_dependent=True)
    assert r1 == pytest.approx(est._plan.learning_rate * norms[top]
                               / est._plan.normaliser, rel=1e-12)
    assert _distance(est, W, b)[0] == pytest.approx(r1, rel=1e-10)


def test_radii_monotone_in_k_and_zero_at_k_zero():
    est, X, y = _small("logistic", 5, k_max=8, modes=MODES)
    for mode in MODES:
        for dd in (False, True):
            r = np.array([est.certified_radius(k, mode, data_dependent=dd)
                          for k in range(9)])
            assert r[0] == 0.0
            assert np.all(np.diff(r) >= 0) and r[-1] > r[1] > 0
    # replace moves k records out and k in: twice the public remove radius.
    assert est.certified_radius(3, "replace") == pytest.approx(
        2 * est.certified_radius(3, "remove"), rel=1e-12)
    # Under N fixed, add_remove is never worse than add (Section 9.2).
    assert est.certified_radius(3, "add_remove") == est.certified_radius(3, "add")


def test_public_closed_form_equals_the_recursion():
    eta, lam, beta, R, N, G = 1.9, 0.02, 0.5, 2**0.5, 455, 0.5
    ks = np.arange(6)
    rho = contraction_factors(ks, mode="remove", learning_rate=eta, lam=lam,
                              beta=beta, row_norm=R, n_samples=N, normaliser=N)
    np.testing.assert_array_equal(rho, 1 - eta * lam)
    # The public factor is the accountant's contraction at data weight |D'|/N.
    for mode, size in [("remove", N), ("replace", N), ("add", N + 5)]:
        got = contraction_factors([5], mode=mode, learning_rate=1.99, lam=lam,
                                  beta=beta, row_norm=R, n_samples=N, normaliser=N)
        assert got[0] == pytest.approx(acc.contraction(
            learning_rate=1.99, lam=lam, beta=beta, data_weight=size / N), rel=1e-15)
    e = step_increments(np.full((N, 1), G), 5, mode="remove", normaliser=N,
                        gradient_bound=G)
    r = np.zeros(6)
    for _ in range(300):
        r = ball_step(r, rho, eta, e[:, 0])
    closed = public_radius([HistorySegment(N, 300, 0)], ks, learning_rate=eta, lam=lam,
                           beta=beta, row_norm=R, normaliser=N, gradient_bound=G)
    np.testing.assert_allclose(closed, r, rtol=1e-12)
    np.testing.assert_allclose(closed, ks * G * (1 - (1 - eta * lam) ** 300)
                               / (N * lam), rtol=1e-12)
    # A history of segments is the same recursion run segment after segment,
    # with the rows deleted later counted in every earlier segment.
    segs = [HistorySegment(N, 300, 7), HistorySegment(N - 5, 40, 2),
            HistorySegment(N - 3, 25, 0)]
    r = np.zeros(6)
    for seg in segs:
        removed = np.minimum(seg.n_samples, ks + seg.removed_later)
        rho_j = contraction_factors(ks, mode="remove", learning_rate=eta, lam=lam,
                                    beta=beta, row_norm=R, n_samples=seg.n_samples,
                                    normaliser=N)
        for _ in range(seg.steps):
            r = ball_step(r, rho_j, eta, removed * G / N)
    common = dict(learning_rate=eta, lam=lam, beta=beta, row_norm=R, normaliser=N,
                  gradient_bound=G)
    np.testing.assert_allclose(public_radius(segs, ks, **common), r, rtol=1e-12)
    # Nothing deleted and k = 0: radius 0; without forgotten rows, k = 0 is 0 too.
    assert public_radius([HistorySegment(N, 300, 0), HistorySegment(N, 40, 0)], [0],
                         **common)[0] == 0.0
    assert public_radius(segs, [0], include_forgotten=False, **common)[0] == 0.0
    assert geometric_sum([1.0, 0.0], 7).tolist() == [7.0, 1.0]


def test_topsum_and_increments():
    v = np.array([[0.1, 3.0], [0.5, 1.0], [0.2, 2.0]])
    np.testing.assert_allclose(topsum_table(v, 4),
                               [[0, 0], [0.5, 3], [0.7, 5], [0.8, 6], [0.8, 6]])
    e = step_increments(v, 2, mode="replace", normaliser=10, gradient_bound=3.0)
    np.testing.assert_allclose(e, [[0, 0], [0.35, 0.6], [0.67, 1.1]])
    e = step_increments(v, 2, mode="add", normaliser=10, gradient_bound=3.0)
    np.testing.assert_allclose(e, [[0, 0], [0.3, 0.3], [0.6, 0.6]])


@pytest.mark.parametrize("noise", [0.0, 5.0, 20.0])
def test_noise_level_does_not_affect_soundness(noise):
    est, X, y = _small("logistic", 6, noise=noise, k_max=3)
    a = _gradient_norms(est, X, y)[:, 0]
    rng = np.random.default_rng(0)
    for k in (1, 2, 3):
        for S in [np.argsort(-a)[:k], rng.choice(len(X), k, replace=False)]:
            keep = np.setdiff1d(np.arange(len(X)), S)
            W, b = _pipeline(est, [(X[keep], y[keep])])
            _check_counterfactual(est, W, b, X, k)
    # The public radius does not see the noise at all.
    quiet, _, _ = _small("logistic", 6, noise=0.0, k_max=3)
    assert est.certified_radius(2) == quiet.certified_radius(2)


def test_replace_and_add_modes_against_copies_of_a_target():
    est, X, y = _small("logistic", 7, n=40, k_max=3, modes=MODES)
    margins = est.decision_function(X)
    a = _gradient_norms(est, X, y)[:, 0]
    top = np.argsort(-a)
    target = int(np.argmax(np.abs(margins)))
    # A copy of the target with the opposite label, scaled to the public bound.
    x_bad = X[target] / np.linalg.norm(X[target])
    y_bad = 1 - y[target]
    for k in (1, 2, 3):
        S = top[:k]
        # replace: the top-gradient records become copies of the target.
        Xr, yr = X.copy(), y.copy()
        Xr[S], yr[S] = x_bad, y_bad
        W, b = _pipeline(est, [(Xr, yr)])
        _check_counterfactual(est, W, b, X, k, mode="replace")
        # replace: label flips of the top-gradient records.
        yf = y.copy()
        yf[S] = 1 - yf[S]
        W, b = _pipeline(est, [(X, yf)])
        _check_counterfactual(est, W, b, X, k, mode="replace")
        # add: k copies of the target with the opposite label.
        Xa = np.vstack([X, np.repeat(x_bad[None], k, axis=0)])
        ya = np.concatenate([y, np.full(k, y_bad)])
        W, b = _pipeline(est, [(Xa, ya)])
        _check_counterfactual(est, W, b, X, k, mode="add")
        _check_counterfactual(est, W, b, X, k, mode="add_remove")
        # add_remove: drop the top-gradient rows and add copies.
        keep = np.setdiff1d(np.arange(len(X)), top[:1])
        Xm = np.vstack([X[keep], np.repeat(x_bad[None], k - 1, axis=0)])
        ym = np.concatenate([y[keep], np.full(k - 1, y_bad)])
        W, b = _pipeline(est, [(Xm, ym)])
        _check_counterfactual(est, W, b, X, k, mode="add_remove")


# --- brute force on real data ------------------------------------------------------


@pytest.mark.parametrize("name, clip", [("breast_cancer", None), ("breast_cancer", 0.5),
                                        ("digits38", 0.5), ("digits38", None)])
def test_brute_force_removals_never_flip_a_certified_prediction(name, clip):
    X, X_test, y, y_test = _split(name)
    est = NoisyGDClassifier(C=0.1, clip_norm=clip, random_state=0, certify_k_max=5)
    est.fit(X, y)
    n = len(X)
    a = _gradient_norms(est, X, y)[:, 0]
    W0, b0 = initial_draw(segment_rng(0, 0), (1, X.shape[1]), fit_intercept=True,
                          init_variance=est._plan.init_variance)
    a0 = np.abs(clipped_multipliers(_design(est, X, y), W0, b0))[:, 0]
    rng = np.random.default_rng(1)
    for k in range(1, 6):
        r_dd = est.certified_radius(k, data_dependent=True)
        assert 0 < r_dd <= est.certified_radius(k)
        # The least-slack certified test query is the influence attack's target.
        mask = est.certify(X_test, k)
        slack = np.abs(est.decision_function(X_test)) - np.where(mask, 0, np.inf)
        target = X_test[int(np.argmin(slack))]
        removals = [np.argsort(-a)[:k], np.argsort(-a0)[:k],
                    _influence_set(est, X, y, target, k),
                    *(rng.choice(n, k, replace=False) for _ in range(8))]
        for S in removals:
            keep = np.setdiff1d(np.arange(n), S)
            W, b = _pipeline(est, [(X[keep], y[keep])])
            _check_counterfactual(est, W, b, X_test, k)
    # Certificates are not empty: most test predictions survive k = 1.
    assert est.certify(X_test, 1).mean() > 0.8


def test_one_vs_rest_per_output_radii():
    X, X_test, y, y_test = _split("digits012")
    est = NoisyGDClassifier(C=0.1, multi_class="ovr", clip_norm=0.5, random_state=0,
                            certify_k_max=3).fit(X, y)
    assert est.certified_radii_["remove"].shape == (4, 3)
    assert est.certified_radius(2, data_dependent=True).shape == (3,)
    lo, hi = est.decision_function_bounds(X_test, k=2)
    assert lo.shape == hi.shape == (len(X_test), 3)
    scores = est.decision_function(X_test)
    assert np.all((lo < scores) & (scores < hi))
    a = _gradient_norms(est, X, y).max(axis=1)
    rng = np.random.default_rng(2)
    for k in (1, 2, 3):
        for S in [np.argsort(-a)[:k], rng.choice(len(X), k, replace=False)]:
            keep = np.setdiff1d(np.arange(len(X)), S)
            W, b = _pipeline(est, [(X[keep], y[keep])])
            _check_counterfactual(est, W, b, X_test, k)
    assert est.certify(X_test, 1).mean() > 0.8


def test_regressor_bounds_contain_counterfactual_predictions(regression_data):
    X, y = regression_data
    X_test = X[:50]
    est = NoisyGDRegressor(alpha=5.0, random_state=0, certify_k_max=4).fit(X, y)
    residual = np.abs(est.predict(X) - y)
    rng = np.random.default_rng(3)
    for k in (1, 4):
        for S in [np.argsort(-residual)[:k], rng.choice(len(X), k, replace=False)]:
            keep = np.setdiff1d(np.arange(len(X)), S)
            W, b = _pipeline(est, [(X[keep], y[keep])])
            _check_counterfactual(est, W, b, X_test, k, tol=0.1)
    lo, hi = est.predict_bounds(X_test, 4)
    width = (hi - lo) / 2
    assert np.array_equal(est.certify(X_test, 4, tol=0.1), width <= 0.1)
    assert not hasattr(est, "decision_function_bounds")
    assert not hasattr(NoisyGDClassifier(), "predict_bounds")


# --- forgetting after partial_unlearn ----------------------------------------------


def _edit_ids(ids, request, next_id):
    """Record identities after an edit: kept rows, new versions, insertions."""
    keep = np.setdiff1d(np.arange(len(ids)), request._delete)
    new = ids[keep].copy()
    pos = np.searchsorted(keep, request._replace)
    fresh = np.arange(next_id, next_id + len(pos) + request.n_inserted)
    new[pos] = fresh[:len(pos)]
    return np.concatenate([new, fresh[len(pos):]]), next_id + len(fresh)


@pytest.mark.parametrize("attack", ["top", "random"])
def test_forgetting_certificate_after_partial_unlearn(attack):
    X, X_test, y, y_test = _split("breast_cancer")
    est = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0, certify_k_max=3)
    est.fit(X, y)
    rng = np.random.default_rng(4)
    a = _gradient_norms(est, X, y)[:, 0]
    first = np.argsort(-a)[:4] if attack == "top" else rng.choice(len(X), 4, False)
    # Edit 1: delete three rows, replace one, insert two; edit 2: delete two.
    x_new = X[first[:1]] * 0.5
    req1 = EditRequest(X, y, delete=first[1:], replace=first[:1], X_replace=x_new,
                       y_replace=1 - y[first[:1]], X_insert=X_test[:2],
                       y_insert=y_test[:2])
    ids0 = np.arange(len(X))
    removed = set(ids0[first].tolist())  # the replaced row's old version too
    est.partial_unlearn(req1)
    X1, y1 = req1.apply()
    ids1, nxt = _edit_ids(ids0, req1, len(X))
    assert est._certified_segment == 1
    a1 = _gradient_norms(est, X1, y1)[:, 0]
    second = np.argsort(-a1)[:2] if attack == "top" else rng.choice(len(X1), 2, False)
    req2 = EditRequest(X1, y1, delete=second)
    removed |= set(ids1[second].tolist())
    est.partial_unlearn(req2)
    X2, y2 = req2.apply()
    ids2, _ = _edit_ids(ids1, req2, nxt)
    segs = segments_from_guarantee(est.privacy_guarantee_)
    assert [s.removed_later for s in segs] == [6, 2, 0]
    a2 = _gradient_norms(est, X2, y2)[:, 0]
    dbs = [(X, y, ids0), (X1, y1, ids1), (X2, y2, ids2)]
    for k in (0, 2, 3):
        future = set(ids2[np.argsort(-a2)[:k]].tolist()) if attack == "top" else \
            set(ids2[rng.choice(len(X2), k, False)].tolist())
        gone = removed | future
        cf = [(Xj[~np.isin(idj, list(gone))], yj[~np.isin(idj, list(gone))])
              for Xj, yj, idj in dbs]
        W, b = _pipeline(est, cf)
        _check_counterfactual(est, W, b, X_test, k)
    # Public forgetting radius: the deleted rows' fit-time radius, contracted.
    r0 = est.certified_radius(0)
    assert r0 > 0 and r0 == est.certified_radius(0, include_forgotten=True)
    assert est.certified_radius(0, include_forgotten=False) == 0.0
    fresh = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0).fit(X, y)
    assert r0 < fresh.certified_radius(6)


def test_forgetting_radius_decays_with_the_unlearning_steps():
    X, X_test, y, _ = _split("breast_cancer")
    est = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0).fit(X, y)
    r_fit = est.certified_radius(5)
    est.partial_unlearn(EditRequest(X, y, delete=[0, 1, 2, 3, 4]))
    rho = 1 - est._plan.learning_rate * est._plan.lam
    assert est.certified_radius(0) == pytest.approx(
        rho ** est.privacy_guarantee_.deletion.steps * r_fit, rel=1e-12)
    assert est.certify(X_test, 0).mean() >= est.certify(X_test, 5).mean()


# --- API, statelessness and refusals -----------------------------------------------


def test_certified_k_agrees_with_certify():
    X, X_test, y, _ = _split("digits38")
    est = NoisyGDClassifier(C=0.1, clip_norm=None, random_state=0,
                            certify_k_max=10).fit(X, y)
    for dd in (False, True):
        ks = est.certified_k(X_test, data_dependent=dd)
        assert ks.min() >= 0 and ks.max() > 1
        for k in range(0, 12 if not dd else 11):
            np.testing.assert_array_equal(est.certify(X_test, k, data_dependent=dd),
                                          ks >= k)
    reg = NoisyGDRegressor(alpha=5.0, batch_size=None, random_state=0).fit(
        X, y.astype(float))
    ks = reg.certified_k(X_test, tol=0.05)
    for k in (0, 1, 3):
        np.testing.assert_array_equal(reg.certify(X_test, k, tol=0.05), ks >= k)


def test_sparse_and_dense_queries_agree():
    X, X_test, y, _ = _split("breast_cancer")
    est = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.certify(sp.csr_matrix(X_test), 3),
                                  est.certify(X_test, 3))
    csr = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0,
                            certify_k_max=3).fit(sp.csr_matrix(X), y)
    dense = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0,
                              certify_k_max=3).fit(X, y)
    np.testing.assert_allclose(csr.certified_radii_["remove"],
                               dense.certified_radii_["remove"], rtol=1e-9)


def test_data_dependent_radii_are_dropped_not_carried():
    X, _, y, _ = _split("breast_cancer")
    est = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0)
    est.fit(X, y)
    # Default: no bookkeeping, no extra attribute.
    assert not hasattr(est, "certified_radii_")
    est.set_params(certify_k_max=2).fit(X, y)
    assert est._certified_segment == 0 and set(est.certified_radii_) == {"remove"}
    est.set_params(certify_k_max=0)
    est.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert est.certified_radii_ == {} and est._certified_segment == 1
    with pytest.raises(NotCertifiableError, match="certify_k_max"):
        est.certified_radius(1, data_dependent=True)
    blob = pickle.dumps(est)
    assert all(row.tobytes() not in blob for row in X)


def test_refuses_the_multinomial_model(multiclass_data):
    X, y = multiclass_data
    clf = NoisyGDClassifier(random_state=0).fit(X, y)
    with pytest.raises(NotCertifiableError, match="multi_class='ovr'"):
        clf.certify(X, 1)
    with pytest.raises(NotCertifiableError, match="multi_class='ovr'"):
        clf.certified_radius(1)
    before = clf.coef_.copy()
    with pytest.raises(NotCertifiableError, match="multi_class='ovr'"):
        clf.set_params(certify_k_max=2).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, before)  # the failed fit changed nothing


class _EarlyStopping(NoisyGDClassifier):
    def __init__(self, early_stopping=True, clip_norm=0.5, random_state=0):
        super().__init__(clip_norm=clip_norm, random_state=random_state)
        self.early_stopping = early_stopping


def test_refuses_early_stopping(binary_data):
    X, y = binary_data
    with pytest.raises(NotCertifiableError, match="fixed number of steps"):
        _EarlyStopping().fit(X, y).certify(X, 1)
    assert _EarlyStopping(early_stopping=False).fit(X, y).certify(X, 1).any()
    clf = NoisyGDClassifier(random_state=0).fit(X, y)
    clf.n_iter_ -= 1  # what a run that stopped one step early would record
    with pytest.raises(NotCertifiableError, match="stops early"):
        clf.certify(X, 1)


def test_refuses_a_regulariser_that_does_not_shrink():
    with pytest.raises(NotCertifiableError, match="learning_rate \\* lambda"):
        check_step_size(learning_rate=2.0, lam=0.5)
    with pytest.raises(NotCertifiableError):
        check_step_size(learning_rate=1.0, lam=0.0)
    check_step_size(learning_rate=1.0, lam=0.5)


def test_argument_errors(binary_data, regression_data):
    X, y = binary_data
    clf = NoisyGDClassifier(random_state=0, certify_k_max=2).fit(X, y)
    with pytest.raises(ValueError, match="mode must be one of"):
        clf.certify(X, 1, mode="delete")
    with pytest.raises(ValueError, match="non-negative integer"):
        clf.certify(X, -1)
    with pytest.raises(ValueError, match="non-negative integer"):
        clf.certify(X, 1.5)
    with pytest.raises(ValueError, match="regressors only"):
        clf.certify(X, 1, tol=0.1)
    with pytest.raises(NotCertifiableError, match="exceeds certify_k_max=2"):
        clf.certify(X, 3, data_dependent=True)
    with pytest.raises(NotCertifiableError, match="'replace'"):
        clf.certify(X, 1, mode="replace", data_dependent=True)
    with pytest.raises(ValueError, match="mode must be one of"):
        NoisyGDClassifier(certify_modes=("remove", "forget")).fit(X, y)
    reg = NoisyGDRegressor(random_state=0).fit(*regression_data)
    with pytest.raises(ValueError, match="needs tol"):
        reg.certify(regression_data[0], 1)
    with pytest.raises(ValueError, match="needs tol"):
        reg.certified_k(regression_data[0])


# --- the interval box as a comparison ----------------------------------------------


def test_interval_box_collapses_to_the_run_at_k_zero_and_contains_retrains():
    X, X_test, y, _ = _split("breast_cancer")
    est = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0, max_iter=8)
    est.fit(X, y)
    design = _design(est, X, y)
    plan = est._plan

    def box(k):
        rng = segment_rng(0, 0)
        W0, b0 = initial_draw(rng, (1, X.shape[1]), fit_intercept=True,
                              init_variance=plan.init_variance)
        return interval_box(design, W0, b0, steps=8, learning_rate=plan.learning_rate,
                            lam=plan.lam, sigma=plan.sigma,
                            normaliser=plan.normaliser, rng=rng, fit_intercept=True,
                            k=k, gradient_bound=0.5)

    W, b = est._theta()
    point = box(0)
    np.testing.assert_allclose(point.W_lo, W, atol=1e-12)
    np.testing.assert_allclose(point.W_hi, W, atol=1e-12)
    wide = box(3)
    a = _gradient_norms(est, X, y)[:, 0]
    for S in [np.argsort(-a)[:3], np.array([0, 1, 2])]:
        keep = np.setdiff1d(np.arange(len(X)), S)
        W2, b2 = _pipeline(est, [(X[keep], y[keep])])
        assert np.all((wide.W_lo - 1e-12 <= W2) & (W2 <= wide.W_hi + 1e-12))
        assert np.all((wide.b_lo - 1e-12 <= b2) & (b2 <= wide.b_hi + 1e-12))
    # Short runs: the box certifies; full-length runs: it is vacuous, the ball is not.
    assert interval_certify(est, X, y, X_test, k=1).mean() > 0.5
    full = NoisyGDClassifier(C=0.1, clip_norm=0.5, random_state=0).fit(X, y)
    assert interval_certify(full, X, y, X_test, k=1).mean() < 0.05
    assert full.certify(X_test, 1).mean() > 0.9
    with pytest.raises(ValueError, match="not the rows"):
        interval_certify(est, X, 1 - y, X_test, k=1)
    with pytest.raises(NotCertifiableError, match="integer random_state"):
        interval_certify(NoisyGDClassifier(clip_norm=0.5).fit(X, y), X, y, X_test, 1)


def test_slack_and_ties_are_never_certified(binary_data):
    X, y = binary_data
    clf = NoisyGDClassifier(fit_intercept=False, random_state=0).fit(X, y)
    # A zero row has margin exactly 0: a tie, never certified, even at k = 0.
    X_tie = np.vstack([np.zeros(X.shape[1]), X[:3]])
    assert clf.certified_radius(0) == 0.0
    assert clf.certify(X_tie, 0).tolist() == [False, True, True, True]
    assert clf.certified_k(X_tie)[0] == -1
    # The bounds are widened beyond the exact range m +- r ||x|| (Section 3.5):
    # at t = 1 that range is attained, so rounding must not certify its ends.
    r = clf.certified_radius(3)
    lo, hi = clf.decision_function_bounds(X[:20], 3)
    m = clf.decision_function(X[:20])
    exact = r * np.linalg.norm(X[:20], axis=1)
    assert np.all(lo < m - exact * (1 + 5e-10)) and np.all(hi > m + exact * (1 + 5e-10))


@pytest.mark.parametrize("params", [{"intercept_scaling": 3.0},
                                    {"fit_intercept": False},
                                    {"data_norm": 0.5, "clip_norm": None}])
def test_intercept_and_row_bound_variants(params, binary_data):
    # The ball lives in the solver's coordinates (coef_, intercept_ / s_b) and
    # queries use ||[a x, s_b]||; rows over data_norm are projected.
    X, y = binary_data
    X = X * np.linspace(0.2, 1.0, len(X))[:, None]
    est = NoisyGDClassifier(C=0.3, random_state=0, certify_k_max=3,
                            **{"clip_norm": 0.5, **params}).fit(X, y)
    a = _gradient_norms(est, X, y)[:, 0]
    rng = np.random.default_rng(5)
    for k in (1, 3):
        for S in [np.argsort(-a)[:k], rng.choice(len(X), k, replace=False)]:
            keep = np.setdiff1d(np.arange(len(X)), S)
            W, b = _pipeline(est, [(X[keep], y[keep])])
            _check_counterfactual(est, W, b, X, k)
    assert est.certify(X, 1).mean() > 0.5


def test_the_no_contraction_warning_reads_public_numbers_only():
    """Whether the counterfactual step may fail to contract is decided from the
    public factors: rows all along one direction and rows spread out (same n,
    d and parameters) warn alike, though their private Gram norms differ."""
    import warnings

    from skforget import NoisyGDClassifier

    rng = np.random.default_rng(0)
    n, d = 300, 5
    y = rng.integers(0, 2, n)
    aligned = np.outer(np.ones(n), np.eye(d)[0]) * 0.99
    spread = rng.normal(size=(n, d))
    spread *= 0.99 / np.linalg.norm(spread, axis=1, keepdims=True)
    said = []
    for X in (aligned, spread):
        est = NoisyGDClassifier(classes=[0, 1], certify_k_max=60,
                                certify_modes=("add",), batch_size=None,
                                random_state=0)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            est.fit(X, y)
        said.append(sorted(str(w.message) for w in rec if "contract" in str(w.message)))
    assert said[0] == said[1] and len(said[0]) == 1


def test_a_multiclass_class_weight_shift_is_in_every_certificate():
    """A multiclass model's class weights shift its released intercepts by a
    public constant (privacy-accounting.md, 18.13), the same for every run:
    the ball's bounds and the interval box's certified classes must carry it.
    Rows whose prediction the shift changes are among those checked."""
    X, X_test, y, _ = _split("digits012")
    cw = {0: 0.2, 1: 1.0, 2: 5.0}
    est = NoisyGDClassifier(C=0.1, multi_class="ovr", clip_norm=0.5, random_state=0,
                            max_iter=8, class_weight=cw).fit(X, y)
    plain = NoisyGDClassifier(C=0.1, multi_class="ovr", clip_norm=0.5,
                              random_state=0, max_iter=8).fit(X, y)
    np.testing.assert_array_equal(est.coef_, plain.coef_)
    shift = est.intercept_ - plain.intercept_
    assert np.any(est.predict(X_test) != plain.predict(X_test))
    lo, hi = est.decision_function_bounds(X_test, k=1)
    scores = est.decision_function(X_test)
    assert np.all((lo < scores) & (scores < hi))
    s_b = est._intercept_scaling()
    for S in (np.array([0, 1, 2]), np.array([5])):
        keep = np.setdiff1d(np.arange(len(X)), S)
        W, b = _pipeline(est, [(X[keep], y[keep])])
        # The counterfactual run's released scores, shift included.
        Z = est._validate_rows(X_test, reset=False) @ W.T + b * s_b + shift
        counterfactual = est.classes_[Z.argmax(axis=1)]
        for certified in (est.certify(X_test, len(S)),
                          interval_certify(est, X, y, X_test, k=len(S))):
            assert certified.any()
            assert np.array_equal(counterfactual[certified],
                                  est.predict(X_test)[certified])


@pytest.mark.parametrize("params", [
    {},                                               # the moments threshold
    {"class_weight": "balanced"},                     # the class-mean midpoint
    {"prevalence_share": 0},                          # the raw intercept
])
def test_the_interval_box_at_k_zero_is_the_released_margin(params):
    """At k = 0 the box is the run, so its bounds must be the released
    margins, every public offset included: the prevalence threshold, the
    midpoint, a multiclass model's class-weight shift (18.13)."""
    from skforget.certify._interval import _interval_margin_bounds

    X, X_test, y, _ = _split("breast_cancer")
    est = NoisyGDClassifier(clip_norm=0.5, random_state=0, max_iter=6,
                            batch_size=None, **params).fit(X, y)
    lo, hi = _interval_margin_bounds(est, X, y, X_test, 0)
    scores = est.decision_function(X_test)
    np.testing.assert_allclose(lo[:, 0], scores, atol=1e-9)
    np.testing.assert_allclose(hi[:, 0], scores, atol=1e-9)
    X3, X3_test, y3, _ = _split("digits012")
    ovr = NoisyGDClassifier(C=0.1, multi_class="ovr", clip_norm=0.5, random_state=0,
                            max_iter=6, batch_size=None,
                            class_weight={0: 0.2, 1: 1.0, 2: 5.0}).fit(X3, y3)
    lo, hi = _interval_margin_bounds(ovr, X3, y3, X3_test, 0)
    np.testing.assert_allclose(lo, ovr.decision_function(X3_test), atol=1e-9)
    np.testing.assert_allclose(hi, ovr.decision_function(X3_test), atol=1e-9)


def test_a_model_trained_in_batches_is_not_certified():
    """certificates.md, L4: a same-seed run on a database with k records fewer
    draws its batch layout from its own row count, so the other rows change
    batches and the radius does not bound the distance. An audit measured a
    removed record moving the run 57 times the certified radius at
    batch_size=64, with certified predictions flipping: refused, with the
    way to full batch."""
    X, X_test, y, _ = _split("breast_cancer")
    batched = NoisyGDClassifier(C=0.1, clip_norm=0.5, batch_size=64,
                                random_state=0).fit(X, y)
    assert batched._plan.n_batches > 1
    for call in (lambda: batched.certify(X_test, 1),
                 lambda: batched.certified_radius(1),
                 lambda: batched.decision_function_bounds(X_test, 1)):
        with pytest.raises(NotCertifiableError, match="full-batch training"):
            call()
    full = NoisyGDClassifier(C=0.1, clip_norm=0.5, batch_size=None,
                             random_state=0).fit(X, y)
    assert full.certify(X_test, 1).mean() > 0.5


def test_float32_queries_are_certified_on_float64_margins():
    """certificates.md, L6: the certificate's slack is about 1e-12, and
    float32 margins round by up to 1e-7 (an audit measured 3.7e-7): a query's
    bounds and certificates are the same whatever its dtype."""
    X, X_test, y, _ = _split("breast_cancer")
    est = NoisyGDClassifier(C=0.1, clip_norm=0.5, batch_size=None,
                            random_state=0).fit(X, y)
    lo64, hi64 = est.decision_function_bounds(X_test, 2)
    lo32, hi32 = est.decision_function_bounds(X_test.astype(np.float32), 2)
    np.testing.assert_array_equal(lo32, est.decision_function_bounds(
        X_test.astype(np.float32).astype(np.float64), 2)[0])
    assert np.max(np.abs(lo32 - lo64)) < 1e-6 and np.max(np.abs(hi32 - hi64)) < 1e-6
