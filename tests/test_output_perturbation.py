# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Output perturbation (privacy-accounting.md, Section 15): oracle O10, the exact
Gaussian curve, coupling of neighbouring solves (hostile rows too), the
certified tolerance, and deletion by refit."""

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2
from sklearn.datasets import make_classification
from sklearn.preprocessing import normalize

from skforget import (
    Database,
    EditRequest,
    NoisyGDClassifier,
    OutputPerturbationClassifier,
    OutputPerturbationRegressor,
    UnlearningError,
)
from skforget import accounting as acc
from skforget._erm import _Objective, solve_certified
from skforget._rows import make_design
from skforget._validation import segment_rng
from skforget.accounting._output_perturbation import certified_solve_bounds

RHO_O3 = 0.0305565951976365  # (epsilon, delta) = (1, 1e-5), improved conversion
# The same target by the exact Gaussian profile (spec 21.5; oracle O11, pinned
# against dp_accounting in tests/test_gdp.py): the default since Section 21.
RHO_O11 = 0.0359257023274181

# --- oracle O10 ------------------------------------------------------------------


def test_oracle_o10_noise_scale_matches_the_closed_form():
    common = dict(normaliser=10000, lam=0.01, tol=1e-3)
    assert acc.epsilon_to_rho(epsilon=1.0, delta=1e-5) == pytest.approx(RHO_O3,
                                                                        rel=1e-9)
    assert acc.minimizer_sensitivity(sensitivity=2.0, **common) == \
        pytest.approx(0.02004, rel=1e-12)
    sigma = acc.output_perturbation_noise(sensitivity=2.0, rho=RHO_O3, **common)
    assert sigma == pytest.approx(0.08106441238018465, rel=1e-12)
    # Closed form (15.2): sigma = (1 + 2t) S / (N lam sqrt(2 rho)).
    assert sigma == pytest.approx(1.002 * 2.0 / (100.0 * math.sqrt(2 * RHO_O3)),
                                  rel=1e-12)
    # Zero-out halves the sensitivity, hence sigma.
    assert acc.output_perturbation_noise(sensitivity=1.0, rho=RHO_O3, **common) == \
        pytest.approx(0.040532206190092325, rel=1e-12)
    # And rho comes back from (Delta, sigma).
    assert acc.rho_output_perturbation(sensitivity=2.0, sigma=sigma, **common) == \
        pytest.approx(RHO_O3, rel=1e-12)


def test_oracle_o10_gaussian_column_is_what_the_estimators_release():
    # Section 15.7's second column (trial 26, F5): the estimators convert by
    # the exact Gaussian profile, so the table's figures at RHO_O11 are the
    # ones a plan and a fitted model report.
    common = dict(normaliser=10000, lam=0.01, tol=1e-3)
    assert acc.epsilon_to_rho(epsilon=1.0, delta=1e-5, method="gaussian") == \
        pytest.approx(RHO_O11, rel=1e-9)
    sigma = acc.output_perturbation_noise(sensitivity=2.0, rho=RHO_O11, **common)
    assert sigma == pytest.approx(0.07476185796171528, rel=1e-12)
    assert acc.output_perturbation_noise(sensitivity=1.0, rho=RHO_O11, **common) == \
        pytest.approx(0.03738092898085764, rel=1e-12)
    assert acc.rho_output_perturbation(sensitivity=2.0, sigma=sigma, **common) == \
        pytest.approx(RHO_O11, rel=1e-12)
    assert 0.02 ** 2 / (2 * RHO_O11) == pytest.approx(0.005567044957876355, rel=1e-12)
    assert 3 * RHO_O11 * (0.502 / 1.002) ** 2 == \
        pytest.approx(0.027051946075865568, rel=1e-12)
    plan = acc.plan_output_perturbation(
        loss="logistic", n_samples=10000, n_params=21, lam=0.01,
        row_norm=2 ** 0.5, clip_norm=1.0, epsilon=1.0, delta=1e-5)
    assert plan.sigma == pytest.approx(sigma, rel=1e-12)


def test_plan_uses_the_noisy_gd_sensitivity_and_tolerance():
    plan = acc.plan_output_perturbation(
        loss="logistic", n_samples=10000, n_params=21, lam=0.01, row_norm=2 ** 0.5,
        clip_norm=1.0, epsilon=1.0, delta=1e-5, conversion="improved")
    assert plan.sensitivity == acc.sensitivity(gradient_bound=1.0) == 2.0
    assert plan.tolerance == pytest.approx(2e-7, rel=1e-12)
    assert plan.sigma == pytest.approx(0.08106441238018465, rel=1e-9)
    # Default: the exact Gaussian calibration (15.2 at rho of O11).
    default = acc.plan_output_perturbation(
        loss="logistic", n_samples=10000, n_params=21, lam=0.01, row_norm=2 ** 0.5,
        clip_norm=1.0, epsilon=1.0, delta=1e-5)
    assert default.conversion == "gaussian"
    assert default.sigma == pytest.approx(
        1.002 * 2.0 / (100.0 * math.sqrt(2 * RHO_O11)), rel=1e-9)
    ovr = acc.plan_output_perturbation(
        loss="ovr", n_samples=10000, n_params=63, lam=0.01, row_norm=2 ** 0.5,
        clip_norm=1.0, epsilon=1.0, delta=1e-5, n_classes=3, relation="zero_out",
        group_size=2)
    assert ovr.sensitivity == pytest.approx(2 * math.sqrt(3), rel=1e-12)
    with pytest.raises(ValueError, match="tol"):
        acc.minimizer_sensitivity(sensitivity=1.0, normaliser=10, lam=1.0, tol=0.6)


def test_noisy_gd_flat_spread_equals_output_perturbation_variance():
    # Section 15.6: at equal rho, noisy GD's stationary variance along a flat
    # direction, 2 eta sigma^2 / (1 - c^2), is (S / (N lam))^2 / (2 rho).
    S, N, lam, beta = 2.0, 10000, 0.01, 0.5
    eta = 1.0 / (lam + beta)
    c = acc.contraction(learning_rate=eta, lam=lam, beta=beta)
    sigma_gd = acc.noise_scale(rho=RHO_O3, sensitivity=S, normaliser=N,
                               learning_rate=eta, contraction=c)
    v_gd = 2 * eta * sigma_gd ** 2 / (1 - (1 - eta * lam) ** 2)
    sigma_op = acc.output_perturbation_noise(sensitivity=S, normaliser=N, lam=lam,
                                             rho=RHO_O3, tol=0.0)
    assert v_gd == pytest.approx(sigma_op ** 2, rel=1e-9)
    assert v_gd == pytest.approx(0.006545231846232321, rel=1e-9)


# --- fitted models -----------------------------------------------------------------


@pytest.fixture
def data():
    X, y = make_classification(n_samples=300, n_features=6, n_informative=4,
                               random_state=0)
    return normalize(X), y


def _theta(est):
    W, b = est._theta()
    return np.concatenate([W.ravel(), b]) if est.fit_intercept else W.ravel()


@pytest.mark.parametrize("relation", ["replace", "zero_out"])
def test_reported_rho_is_the_exact_gaussian_figure(data, relation):
    X, y = data
    clf = OutputPerturbationClassifier(C=2.0, classes=[0, 1], clip_norm=0.5,
                                       relation=relation, epsilon=1.0,
                                       random_state=0).fit(X, y)
    g = clf.privacy_guarantee_
    n, R = X.shape[0], math.hypot(1.0, 1.0)
    G = min(0.5, R)
    S = (2.0 if relation == "replace" else 1.0) * G
    lam = 1.0 / (2.0 * n)
    delta_l2 = (1 + 2e-3) * S / (n * lam)
    # The mechanism is Gaussian: R_q = q Delta^2 / (2 sigma^2) exactly.
    assert g.rho == pytest.approx(delta_l2 ** 2 / (2 * g.noise_scale ** 2), rel=1e-12)
    assert g.rho == pytest.approx(acc.epsilon_to_rho(epsilon=1.0, delta=g.delta,
                                                     method="gaussian"), rel=1e-9)
    assert g.epsilon == pytest.approx(1.0, rel=1e-6)
    assert g.mechanism == "output_perturbation" and g.tol == 1e-3
    assert (g.sensitivity, g.regularization) == (pytest.approx(S), pytest.approx(lam))


def test_released_noise_is_gaussian_with_the_planned_scale(data):
    X, y = data
    est = OutputPerturbationClassifier(C=2.0, classes=[0, 1], clip_norm=0.5)
    est.fit(X, y)
    plan = est._plan
    design = make_design(X, y.astype(float), loss="logistic", data_norm=1.0,
                         intercept_scaling=1.0, gradient_bound=0.5)
    W, b = solve_certified(design, lam=plan.lam, n_outputs=1, normaliser=len(y),
                           tolerance=plan.tolerance, gradient_bound=0.5,
                           beta=plan.beta, row_norm=plan.row_norm)
    centre = np.concatenate([W.ravel(), b])
    z = np.array([_theta(est.set_params(random_state=s).fit(X, y)) - centre
                  for s in range(150)]) / plan.sigma
    # Sum of squares of 150 * 7 standard normals: two-sided 99.9 % interval;
    # the coordinates are uncorrelated (noise is isotropic).
    k = z.size
    assert chi2.ppf(0.0005, k) < np.sum(z * z) < chi2.ppf(0.9995, k)
    assert np.all(np.abs(np.corrcoef(z.T) - np.eye(z.shape[1])) < 0.35)


# --- coupling: same noise, neighbouring data -------------------------------------

HOSTILE = {
    "1e200": [1e200, 0.0, 0.0, 0.0],
    "overflowing": [np.finfo(float).max, -np.finfo(float).max, 0.0, 1.0],
    "subnormal": [5e-324, 0.0, 0.0, 0.0],
    "far label flip": [0.0, 0.0, 0.0, -1.0],
}


def _coupled_distance(make, X, y, i, x_new, y_new):
    """Distance of two releases with the same noise on databases differing in
    row ``i`` (the noise cancels: it is the distance of the solves)."""
    X2, y2 = X.copy(), y.copy()
    X2[i], y2[i] = x_new, y_new
    a = make(random_state=7).fit(X, y)
    b = make(random_state=7).fit(X2, y2)
    assert a._plan.l2_sensitivity == b._plan.l2_sensitivity
    return float(np.linalg.norm(_theta(a) - _theta(b))), a._plan.l2_sensitivity


MODELS = {
    "logistic": (lambda **kw: OutputPerturbationClassifier(
        C=5.0, classes=[0, 1], clip_norm=0.3, **kw), 2),
    "multinomial": (lambda **kw: OutputPerturbationClassifier(
        C=5.0, classes=[0, 1, 2], **kw), 3),
    "ovr": (lambda **kw: OutputPerturbationClassifier(
        C=5.0, classes=[0, 1, 2], multi_class="ovr", clip_norm=0.4, **kw), 3),
    "squared": (lambda **kw: OutputPerturbationRegressor(
        alpha=0.2, clip_norm=0.5, **kw), None),
}


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("row", list(HOSTILE))
def test_coupling_of_neighbouring_solves_within_the_sensitivity(model, row):
    make, k = MODELS[model]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4)) * 0.3
    y = rng.integers(0, k, 40) if k else rng.normal(size=40) * 3.0
    y_new = (k - 1 if k else -50.0)
    dist, bound = _coupled_distance(make, X, y, 5, np.array(HOSTILE[row]), y_new)
    assert dist <= bound * (1 + 1e-9)
    # Not vacuous: the replaced record moves the solve a visible fraction of
    # the bound (weak regularisation, few rows).
    assert dist > 1e-3 * bound


def test_coupling_zero_out_against_the_null_record():
    # zero_out: the neighbour holds a null record (zero row, no intercept:
    # zero gradient); the accountant's sensitivity is half the replace-one.
    # The record lies along a direction no other row touches and its residual
    # stays clipped: the worst case of Theorem 15.1, so the bound is attained
    # up to the tolerance term.
    rng = np.random.default_rng(1)
    X = np.zeros((50, 3))
    X[:, :2] = normalize(rng.normal(size=(50, 2)))
    X[0] = [0.0, 0.0, 1.0]
    y = X @ np.array([4.0, -2.0, 0.0])
    y[0] = 1000.0
    make = lambda **kw: OutputPerturbationRegressor(  # noqa: E731
        alpha=0.05, clip_norm=0.5, relation="zero_out", fit_intercept=False, **kw)
    dist, bound = _coupled_distance(make, X, y, 0, np.zeros(3), 0.0)
    assert dist <= bound * (1 + 1e-9)
    assert dist == pytest.approx(bound / 1.002, rel=1e-3)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(10, 60), d=st.integers(1, 5), C=st.floats(0.05, 50.0),
       clip=st.floats(0.05, 2.0), scale=st.sampled_from([1e-3, 1.0, 1e3, 1e150]),
       seed=st.integers(0, 2 ** 16),
       model=st.sampled_from(["binary", "multinomial", "ovr", "squared"]))
def test_coupling_property(n, d, C, clip, scale, seed, model):
    # Every model (an audit found the binary one alone drawn here): a row and
    # its label or target replaced by any other, the solves stay within the
    # plan's sensitivity.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if model == "squared":
        y = rng.normal(size=n)
        make = lambda **kw: OutputPerturbationRegressor(  # noqa: E731
            alpha=1.0 / C, clip_norm=clip, target_scale=1.0, **kw)
        y_new = float(rng.normal() * scale)
    else:
        k = 2 if model == "binary" else 3
        y = rng.integers(0, k, n)
        multi = {} if model == "binary" else {"multi_class": model}
        clip_norm = None if model == "multinomial" else clip
        make = lambda **kw: OutputPerturbationClassifier(  # noqa: E731
            C=C, classes=list(range(k)), clip_norm=clip_norm, **multi, **kw)
        y_new = int(rng.integers(k))
    i = int(rng.integers(n))
    dist, bound = _coupled_distance(make, X, y, i, rng.normal(size=d) * scale, y_new)
    assert dist <= bound * (1 + 1e-9)


# --- the certified tolerance -------------------------------------------------------


def test_solver_output_is_within_the_certified_tolerance(data):
    X, y = data
    design = make_design(X, y.astype(float), loss="logistic", data_norm=1.0,
                         intercept_scaling=1.0, gradient_bound=0.5)
    lam, tau = 1e-3, 1e-3 * 1.0 / len(y)
    W, b = solve_certified(design, lam=lam, n_outputs=1, normaliser=len(y),
                           tolerance=tau, gradient_bound=0.5, beta=0.5,
                           row_norm=2 ** 0.5)
    obj = _Objective(design, lam=lam, n_outputs=1, weight=None, normaliser=len(y),
                     fit_intercept=True)
    theta = np.concatenate([W.ravel(), b])
    assert np.linalg.norm(obj.grad(theta)) <= tau
    # Lemma 15.2 against a much tighter solve: within tau / lam of the minimiser.
    W2, b2 = solve_certified(design, lam=lam, n_outputs=1, normaliser=len(y),
                             tolerance=tau * 1e-3, gradient_bound=0.5, beta=0.5,
                           row_norm=2 ** 0.5)
    gap = np.linalg.norm(theta - np.concatenate([W2.ravel(), b2]))
    assert gap <= (tau + tau * 1e-3) / lam


@pytest.mark.parametrize("loss,k,G", [("logistic", 1, 0.3), ("squared", 1, 0.5),
                                      ("multinomial", 3, 2.0), ("ovr", 3, 0.4)])
@pytest.mark.parametrize("sparse", [False, True])
def test_surrogate_value_integrates_the_kernels_clipped_gradient(loss, k, G, sparse):
    # The solver's gradient is the noisy-GD kernel's clipped gradient; its
    # value (for the line search) and the NumPy gradient must be the same
    # surrogate of Lemma 2.1, or the solve would minimise something else.
    from scipy.optimize import approx_fprime
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(3)
    n, d = 200, 4
    X = rng.normal(size=(n, d)) * rng.uniform(0.05, 3.0, size=(n, 1))
    X[0] = [1e200, 0.0, 0.0, 0.0]
    y = rng.normal(size=n) * 3 if loss == "squared" else \
        rng.integers(0, max(k, 2), n).astype(float)
    design = make_design(csr_matrix(X) if sparse else X, y, loss=loss, data_norm=1.0,
                         intercept_scaling=0.5, gradient_bound=G)
    obj = _Objective(design, lam=1e-2, n_outputs=k, weight=rng.uniform(0, 1, n),
                     normaliser=n, fit_intercept=True)
    for scale in (0.1, 3.0, 30.0):
        theta = rng.normal(size=obj.dim) * scale
        np.testing.assert_allclose(obj.grad(theta), obj.numpy_grad(theta),
                                   rtol=1e-10, atol=1e-14)
        fd = approx_fprime(theta, obj.value, 1e-7)
        np.testing.assert_allclose(obj.grad(theta), fd, rtol=0, atol=2e-5)
        # Every per-record gradient is within G: the mean is too.
        assert np.linalg.norm(obj.grad(theta) - obj.lam * theta) <= G * (1 + 1e-12)


def test_tolerance_below_the_public_rounding_bound_is_refused_before_the_solve(data):
    # Section 15.3's precondition is a function of public numbers: a tol the
    # float64 check cannot certify is refused (naming tol) whatever the rows,
    # and the estimator is left as it was.
    X, y = data
    clf = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(X, y)
    before = dict(clf.__dict__)
    for rows, labels in ((X, y), (X[::-1], 1 - y), (np.zeros_like(X), y)):
        fresh = OutputPerturbationClassifier(classes=[0, 1], tol=1e-15)
        with pytest.raises(ValueError, match="tol=1e-15"):
            fresh.fit(rows, labels)
        assert not hasattr(fresh, "coef_")
    assert clf.__dict__.keys() == before.keys()
    assert all(clf.__dict__[k] is before[k] for k in before)


@pytest.mark.parametrize("param, value, shown, lam", [
    ("clip_norm", 1e160, "clip_norm=1e+160", "lambda=inf"),
    ("data_norm", 1e-160, "data_norm=1e-160", "lambda=0.0"),
])
def test_an_unrepresentable_default_lambda_names_the_users_parameters(
        param, value, shown, lam):
    # Trial 26, F4: the regressor's alpha="auto" overflows (a huge clip_norm) or
    # underflows (a tiny data_norm); the refusal said "lam must be finite" or
    # "lam must be in (0.0, inf)", naming the planner's internal argument.
    rng = np.random.default_rng(0)
    X = normalize(rng.normal(size=(60, 3)))
    y = X @ np.array([0.5, -0.2, 0.1])
    reg = OutputPerturbationRegressor(target_scale=1.0, random_state=0).fit(X, y)
    reg.set_params(**{param: value})
    before = dict(reg.__dict__)
    with pytest.raises(ValueError, match="alpha='auto'") as info:
        reg.fit(X, y)
    message = str(info.value)
    assert shown in message and lam in message and "lam must" not in message
    # Refused before the solve, and the fitted model is left as it was.
    assert reg.__dict__.keys() == before.keys()
    assert all(reg.__dict__[k] is before[k] for k in before)
    fresh = OutputPerturbationRegressor(target_scale=1.0, **{param: value})
    with pytest.raises(ValueError, match=re.escape(shown)):
        fresh.fit(X, y)
    assert not hasattr(fresh, "coef_")


@pytest.mark.parametrize("params", [dict(alpha=1.0, clip_norm=1e300),
                                    dict(alpha=1e300), dict(alpha=1e-300)])
def test_a_plan_float64_cannot_carry_names_the_parameters(params):
    # A helper's follow-up to trial 26: alpha=1e300 divided by a noise of 0
    # once the solve was done, clip_norm=1e300 reached "rho must not be NaN"
    # (and an OverflowError in the noise warning).
    rng = np.random.default_rng(0)
    X = normalize(rng.normal(size=(60, 3)))
    y = X @ np.array([0.5, -0.2, 0.1])
    reg = OutputPerturbationRegressor(target_scale=1.0, random_state=0).fit(X, y)
    reg.set_params(**params)
    before = dict(reg.__dict__)
    with pytest.raises(ValueError, match=r"alpha=.* gives a sensitivity of .* "
                       "which float64 cannot carry"):
        reg.fit(X, y)
    assert all(reg.__dict__[k] is before[k] for k in before)
    # The public helpers themselves take such numbers.
    from skforget.accounting._calibration import output_noise_dominates
    from skforget.accounting._output_perturbation import certified_solve_bounds

    assert output_noise_dominates(loss="squared", n_classes=2, target_bound=1.0,
                                  sigma=1e300, row_norm=2.0)
    _, _, steps = certified_solve_bounds(
        n_samples=60, n_params=4, gradient_bound=1.0, row_norm=1.0, lam=1e300,
        beta=1.0, tolerance=1e-3)
    assert steps == 2   # one contraction to the tolerance, and the formula's +1


# --- deletion by refit -------------------------------------------------------------


def test_partial_unlearn_refits_on_the_edited_data_with_fresh_noise(data):
    X, y = data
    clf = OutputPerturbationClassifier(C=2.0, classes=[0, 1], clip_norm=0.5,
                                       random_state=3).fit(X, y)
    clf.partial_unlearn(EditRequest(X, y, delete=[4, 10]))
    X2, y2 = np.delete(X, [4, 10], axis=0), np.delete(y, [4, 10])
    plan = clf._plan
    assert plan.normaliser == len(y2) and plan.lam == pytest.approx(1 / (2 * len(y2)))
    design = make_design(X2, y2.astype(float), loss="logistic", data_norm=1.0,
                         intercept_scaling=1.0, gradient_bound=0.5)
    W, b = solve_certified(design, lam=plan.lam, n_outputs=1, normaliser=len(y2),
                           tolerance=plan.tolerance, gradient_bound=0.5,
                           beta=plan.beta, row_norm=plan.row_norm)
    noise = segment_rng(3, 1).standard_normal((1, 7)) * plan.sigma
    # The new model is the solve on the edited rows plus a fresh draw: the
    # deleted rows enter nowhere.
    np.testing.assert_allclose(_theta(clf), np.concatenate([W.ravel(), b]) +
                               noise.ravel(), rtol=0, atol=1e-9 * plan.sigma + 1e-12)
    assert not np.allclose(noise, segment_rng(3, 0).standard_normal((1, 7)))


def test_refit_certificates_and_adaptive_figure(data):
    X, y = data
    db = Database(X, y)
    # No class statistics: the figures below are the solve's alone (the
    # statistics' terms are tested with them, test_score_moments.py).
    clf = OutputPerturbationClassifier(classes=[0, 1], epsilon=2.0,
                                       prevalence_share=0.0).fit(db)
    rho = clf.privacy_guarantee_.rho
    req = EditRequest(db, delete=[1])
    clf.partial_unlearn(req)
    g = clf.privacy_guarantee_
    cert = g.deletion
    assert cert.retrained and cert.steps == 0
    assert cert.rho_deletion == 0.0 and cert.epsilon_deletion == 0.0
    assert cert.releases_seen == 1
    # A deleted unit against the null record: S_del = S / 2, but the tolerance
    # term keeps the relation's S (Theorem 15.4 (iii)):
    # rho ((1/2 + 2t) / (1 + 2t))^2, slightly more than rho / 4.
    t = clf.privacy_guarantee_.tol
    assert cert.rho_adaptive == pytest.approx(
        rho * ((0.5 + 2 * t) / (1 + 2 * t)) ** 2, rel=1e-9)
    assert cert.rho_adaptive > rho / 4
    assert g.epsilon == pytest.approx(2.0, rel=1e-6)  # records present: the target
    assert "refitted from scratch with fresh noise" in str(g)
    assert "refitted from scratch" in str(cert)
    # Second edit, a replacement, on the version the first one produced.
    db1 = req.apply()
    assert clf.database_version_ == db1.version
    clf.partial_unlearn(EditRequest(db1, replace=[0], X_replace=X[:1],
                                    y_replace=y[:1], by="position"))
    cert2 = clf.privacy_guarantee_.deletion
    assert cert2.index == 2 and cert2.releases_seen == 2
    # A replaced unit against its replacement: (S_del / S)^2 = 1.
    assert cert2.rho_adaptive == pytest.approx(2 * rho, rel=1e-9)
    # A stale request is refused, as for noisy GD.
    with pytest.raises(UnlearningError):
        clf.partial_unlearn(EditRequest(db1, delete=[2]))


def test_output_perturbation_is_less_accurate_than_noisy_gd_when_curvature_dominates():
    # Section 15.6, measured: with weak regularisation (C=1, lambda = 1/3000)
    # the data's curvature damps noisy GD's noise but not output
    # perturbation's, at equal epsilon (5 seeds: 0.78 against 0.54).
    X, y = make_classification(n_samples=3000, n_features=10, n_informative=6,
                               random_state=4)
    X = normalize(X)
    scores = {}
    for name, cls in (("op", OutputPerturbationClassifier),
                      ("gd", NoisyGDClassifier)):
        scores[name] = np.mean([cls(classes=[0, 1], C=1.0, epsilon=0.3,
                                    random_state=s).fit(X, y).score(X, y)
                                for s in range(5)])
    assert scores["gd"] > scores["op"] + 0.1


def test_pickle_holds_no_training_row_nor_solver_state(data):
    import pickle

    X, y = data
    clf = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(X, y)
    clf.partial_unlearn(EditRequest(X, y, delete=[0]))
    blob = pickle.dumps(clf)
    for i, row in enumerate(X):
        assert row.tobytes() not in blob, f"training row {i} found in the pickle"
    # No data-dependent solver output (iteration count, gradient norm).
    assert not any(k.startswith("n_iter") for k in vars(clf))


def test_forget_pipeline_serves_output_perturbation(data):
    from skforget.pipeline import make_forget_pipeline
    from skforget.preprocessing import PublicScaler

    X, y = data
    pipe = make_forget_pipeline(PublicScaler(center=0.0, scale=2.0),
                                OutputPerturbationClassifier(classes=[0, 1],
                                                             random_state=0))
    pipe.fit(X, y).partial_unlearn(EditRequest(X, y, delete=[3]))
    g = pipe.privacy_guarantee_
    assert g.deletion.retrained and g.deletion.rho_deletion == 0.0
    assert g.preprocessing and g.mechanism == "output_perturbation"


def test_guarantees_pickled_before_the_new_fields_still_load(data):
    import pickle

    from skforget.accounting import PrivacyGuarantee

    X, y = data
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    g = clf.privacy_guarantee_
    assert pickle.loads(pickle.dumps(g)) == g
    # An older pickle's state ends before ``mechanism`` and ``tol``.
    old = PrivacyGuarantee.__new__(PrivacyGuarantee)
    old.__setstate__(g.__getstate__()[:-2])
    assert (old.mechanism, old.tol) == ("noisy_gd", 0.0)
    assert str(old) == str(g)
    clf.privacy_guarantee_ = old
    clf.partial_unlearn(EditRequest(X, y, delete=[0]))  # edits still served
    assert clf.privacy_guarantee_.mechanism == "noisy_gd"


# --- no refusal that depends on the data (Section 15.3, Theorem 15.2a) ----------------


def _flip_pair(seed, n=200, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.1 * rng.normal(size=n) > 0).astype(int)
    y2 = y.copy()
    y2[0] = 1 - y2[0]
    return X, y, y2


def test_a_fast_solver_failing_on_one_neighbour_still_releases_on_both(monkeypatch):
    # Review 15, cx3: whether the fast path (L-BFGS, Newton) converges depends
    # on the data; the old solver then refused on one side of a neighbouring
    # pair only (unbounded privacy loss). Simulate the worst case, a fast path
    # that breaks down exactly when row 0 has label 1: both sides must still
    # release, through the public fallback of Theorem 15.2a.
    import skforget._erm as erm

    real = erm.minimize

    def flaky(fun, x0, **kw):
        res = real(fun, x0, **kw)
        if fun.__self__.y[0] == 1.0:
            res.x = np.full_like(res.x, np.nan)
        return res

    monkeypatch.setattr(erm, "minimize", flaky)
    X, y, y2 = _flip_pair(0)
    thetas = []
    for labels in (y, y2):
        clf = OutputPerturbationClassifier(C=0.5, classes=[0, 1], random_state=0)
        thetas.append(_theta(clf.fit(X, labels)))
        assert np.all(np.isfinite(thetas[-1]))
    # Real runs with the fast path cut short release on both sides too.
    for labels in (y, y2):
        clf = OutputPerturbationClassifier(C=0.5, classes=[0, 1], max_iter=1,
                                           random_state=0).fit(X, labels)
        assert np.all(np.isfinite(_theta(clf)))


@pytest.mark.parametrize("loss", ["logistic", "squared", "multinomial"])
def test_fallback_descent_lands_within_tau_over_lambda(loss):
    # Theorem 15.2a: with the fast path cut to one iteration, the returned point
    # is within tau / lam of the minimiser (checked against a tight solve).
    rng = np.random.default_rng(7)
    n, d, k = 150, 4, (3 if loss == "multinomial" else 1)
    X = normalize(rng.normal(size=(n, d)))
    y = (rng.normal(size=n) if loss == "squared"
         else rng.integers(0, max(k, 2), n).astype(float))
    G = 0.5 if loss != "multinomial" else 2.0  # softmax: sqrt(2) R, R = sqrt(2)
    design = make_design(X, y, loss=loss, data_norm=1.0, intercept_scaling=1.0,
                         gradient_bound=G)
    beta = {"logistic": 0.5, "squared": 2.0, "multinomial": 2.0}[loss]
    lam, tau = 0.02, 1e-3 * 2 * G / n
    kw = dict(lam=lam, n_outputs=k, normaliser=n, gradient_bound=G, beta=beta,
              row_norm=2 ** 0.5)
    _, e_pub, K = certified_solve_bounds(
        n_samples=n, n_params=k * (d + 1), gradient_bound=G, row_norm=2 ** 0.5,
        lam=lam, beta=beta, tolerance=tau)
    assert K is not None and e_pub <= tau / 2
    W, b = solve_certified(design, tolerance=tau, max_iter=1, **kw)
    W2, b2 = solve_certified(design, tolerance=tau * 1e-4, **kw)
    gap = np.linalg.norm(np.concatenate([W.ravel(), b]) -
                         np.concatenate([W2.ravel(), b2]))
    assert gap <= (tau + tau * 1e-4) / lam
    # The fallback alone (no fast path at all) meets the same bound.
    from skforget._erm import _fallback_descent
    obj = _Objective(design, lam=lam, n_outputs=k, weight=None, normaliser=n,
                     fit_intercept=True)
    theta = _fallback_descent(obj, lambda th: (False, obj.grad(th)), lam=lam,
                              beta=beta, steps=K)
    W3, b3 = obj.split(theta)
    gap = np.linalg.norm(np.concatenate([W3.ravel(), b3]) -
                         np.concatenate([W2.ravel(), b2]))
    assert gap <= (tau + tau * 1e-4) / lam


def test_refusal_does_not_depend_on_the_data_cx2():
    # Review 15, cx2: a public tol between the old, private rounding bounds
    # e(theta_D) and e(theta_D') released on D and refused on D'. The bound is
    # now public: both neighbours get the same outcome.
    from skforget._erm import _Objective as Obj
    rng = np.random.default_rng(0)
    n = 20
    X = rng.normal(size=(n, 2))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.01
    y = (X[:, 0] > 0).astype(int)
    y2 = y.copy()
    y2[0] = 1 - y2[0]
    u = 2.0 ** -53
    old_e = []
    for labels in (y, y2):
        est = OutputPerturbationClassifier(C=50.0, classes=[0, 1], tol=1e-6,
                                           random_state=0).fit(X, labels)
        plan = est._plan
        design = est._design(X, labels.astype(float), "logistic", where="X")
        W, b = solve_certified(design, lam=plan.lam, n_outputs=1, normaliser=n,
                               tolerance=1e-9 * plan.sensitivity / n,
                               gradient_bound=plan.gradient_bound, beta=plan.beta,
                               row_norm=plan.row_norm)
        th = np.concatenate([W.ravel(), b])
        assert Obj(design, lam=plan.lam, n_outputs=1, weight=None, normaliser=n,
                   fit_intercept=True).dim == 3
        # The pre-review bound, with the private ||theta||.
        old_e.append(4 * (n + 3 + 2) * u * (plan.gradient_bound + (
            plan.lam + plan.beta) * np.linalg.norm(th)))
    assert old_e[0] != old_e[1]
    t = 0.5 * (old_e[0] + old_e[1]) / (plan.sensitivity / n)
    outcomes = []
    for labels in (y, y2):
        try:
            OutputPerturbationClassifier(C=50.0, classes=[0, 1], tol=t,
                                         random_state=0).fit(X, labels)
            outcomes.append("released")
        except ValueError as exc:
            assert "tol=" in str(exc)
            outcomes.append("refused")
    assert outcomes[0] == outcomes[1]


def test_certified_solve_bounds_closed_form():
    # e_pub = 4u[(n + 2)(G + R) + (p + 4)(lam + beta) B], B = (2G + tau)/lam,
    # K = ceil(ln(G / (tau - e)) / ln(1 / (1 - lam/(lam + beta)))) + 1.
    n, p, G, R, lam, beta, tau = 10000, 21, 1.0, 2 ** 0.5, 0.01, 0.5, 2e-7
    B, e, K = certified_solve_bounds(n_samples=n, n_params=p, gradient_bound=G,
                                         row_norm=R, lam=lam, beta=beta,
                                         tolerance=tau)
    u = 2.0 ** -53
    assert B == pytest.approx((2 * G + tau) / lam, rel=1e-15)
    assert e == pytest.approx(4 * u * ((n + 2) * (G + R) + (p + 4) * (lam + beta) * B),
                              rel=1e-14)
    c = 1 - lam / (lam + beta)
    assert K == math.ceil(math.log(G / (tau - e)) / math.log(1 / c)) + 1
    assert c ** (K - 1) * G <= tau - e
    # The precondition is public and monotone: a large n fails it at this tau.
    assert certified_solve_bounds(n_samples=10 ** 9, n_params=p,
                                      gradient_bound=G, row_norm=R, lam=lam,
                                      beta=beta, tolerance=tau)[2] is None


# --- refits on the frozen plan; the adaptive figure (Theorem 15.4) -------------------


def _cx5_data(n=500, d=3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, (X[:, 0] > 0).astype(int)


def _adaptive_term(plan, factor):
    return acc.rho_adaptive_release(
        sensitivity=plan.sensitivity,
        deletion_sensitivity=plan.sensitivity * math.sqrt(factor),
        normaliser=plan.normaliser, lam=plan.lam, sigma=plan.sigma, tol=plan.tol)


def test_refit_uses_the_plan_frozen_at_fit_cx5():
    # Review 15, cx5: set_params(epsilon=0.5) after fit made the refits release
    # at another target while the adaptive figure assumed the fit's (73 times
    # too small). Refits now reuse the fit's plan whatever set_params changed.
    X, y = _cx5_data()
    clf = OutputPerturbationClassifier(C=1.0, classes=[0, 1], epsilon=8.0,
                                       random_state=0).fit(X, y)
    p0 = clf._plan
    changed = dict(epsilon=0.5, C=100.0, tol=0.25, relation="zero_out",
                   clip_norm=0.1, data_norm=3.0, group_size=2)
    clf.set_params(**changed)
    req = EditRequest(X, y, delete=[0])
    clf.partial_unlearn(req)
    p1 = clf._plan
    for field in ("epsilon", "delta", "tol", "relation", "group_size", "clip_norm",
                  "row_norm", "sensitivity", "rho_target"):
        assert getattr(p1, field) == getattr(p0, field), field
    assert p1.normaliser == p0.normaliser - 1
    assert p1.normaliser * p1.lam == pytest.approx(p0.normaliser * p0.lam, rel=1e-12)
    assert p1.sigma == pytest.approx(p0.sigma, rel=1e-12)
    assert clf.get_params()["epsilon"] == 0.5 and clf.C == 100.0  # the user's values
    clf.partial_unlearn(EditRequest(X[1:], y[1:], delete=[0]))
    p2 = clf._plan
    assert p2.sigma == pytest.approx(p0.sigma, rel=1e-12)
    cert = clf.privacy_guarantee_.edits[-1]
    assert cert.releases_seen == 2
    # (15.3): the sum over the stored plans of the fit and the first refit,
    # plus (18.3) one count term per release when the model spends counts.
    expected = _adaptive_term(p0, 0.25) + _adaptive_term(p1, 0.25) \
        + 2 * 0.5 * clf.privacy_guarantee_.rho_counts
    assert cert.rho_adaptive == pytest.approx(expected, rel=1e-9)
    # At least the reviewer's sum_t rho_t (S_del / S)^2 over the actual releases.
    rhos = [acc.rho_output_perturbation(sensitivity=p.sensitivity,
                                        normaliser=p.normaliser, lam=p.lam,
                                        sigma=p.sigma, tol=p.tol) for p in (p0, p1)]
    assert cert.rho_adaptive >= sum(rhos) / 4


def test_adaptive_term_certifies_the_tolerance_with_the_relations_sensitivity_cx4():
    # Review 15, cx4: the tolerance term tau = t S / N is set with S, not S_del;
    # scaling rho by (S_del / S)^2 understated a deletion under replace by
    # ((1 + 4t) / (1 + 2t))^2 = 2.25 at t = 1/2.
    rng = np.random.default_rng(0)
    n, d = 2000, 3
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(3)
    y = X @ np.array([1.0, -0.5, 0.25])
    for t in (1e-3, 0.5):
        reg = OutputPerturbationRegressor(alpha=50.0, tol=t, random_state=0,
                                          delta=1e-5, target_scale=1.0).fit(X, y)
        g0 = reg.privacy_guarantee_
        reg.partial_unlearn(EditRequest(X, y, delete=[3]))
        cert = reg.privacy_guarantee_.edits[-1]
        S, Nlam, sig = g0.sensitivity, g0.normaliser * g0.regularization, g0.noise_scale
        triangle = (S / 2 + 2 * t * S) ** 2 / (2 * sig ** 2 * Nlam ** 2)
        assert cert.rho_adaptive == pytest.approx(triangle, rel=1e-9)
        assert cert.rho_adaptive / (g0.rho / 4) == pytest.approx(
            ((1 + 4 * t) / (1 + 2 * t)) ** 2, rel=1e-9)


def test_rho_adaptive_release_closed_form():
    # Oracle O10's adaptive row: 3 releases, deletion under replace.
    plan = acc.plan_output_perturbation(loss="logistic", n_samples=10000, n_params=21,
                                        lam=0.01, row_norm=2 ** 0.5, clip_norm=1.0,
                                        epsilon=1.0, delta=1e-5, conversion="improved")
    term = _adaptive_term(plan, 0.25)
    assert 3 * term == pytest.approx(0.02300902451439991, rel=1e-12)
    # A replacement (S_del = S) gives back the release's own rho exactly.
    assert _adaptive_term(plan, 1.0) == pytest.approx(RHO_O3, rel=1e-12)


# --- Lemma 15.5: nothing of the plan depends on N ----------------------------------


@pytest.mark.parametrize("make", [
    lambda: OutputPerturbationClassifier(C=2.0, classes=[0, 1], random_state=0),
    lambda: OutputPerturbationClassifier(C="auto", classes=[0, 1], random_state=0),
    lambda: OutputPerturbationRegressor(alpha=50.0, target_scale=1.0, random_state=0),
    lambda: OutputPerturbationRegressor(alpha="auto", target_scale=1.0,
                                        random_state=0),
])
def test_lemma_15_5_plan_constants_do_not_depend_on_the_database_size(make, data):
    X, y = data
    est = make().fit(X, y)
    p0 = est._plan
    est.partial_unlearn(EditRequest(X, y, delete=[0, 5, 9]))
    p1 = est._plan
    assert p1.normaliser == p0.normaliser - 3
    for f in (lambda p: p.normaliser * p.lam, lambda p: p.tolerance / p.lam,
              lambda p: p.sigma, lambda p: p.l2_sensitivity):
        assert f(p1) == pytest.approx(f(p0), rel=1e-12)


def test_deleting_a_unit_moves_the_minimiser_by_at_most_s_del_over_n_lambda(data):
    # Lemma 15.5's consequence: D (n rows, lam_n) against D minus one record
    # (n - 1 rows, lam_{n-1}, same N lam): ||theta*_D - theta*_D-u|| <= G / (N lam).
    X, y = data
    C, G = 2.0, 0.5
    thetas = []
    for rows, labels in ((X, y), (X[1:], y[1:])):
        design = make_design(rows, labels.astype(float), loss="logistic",
                             data_norm=1.0, intercept_scaling=1.0, gradient_bound=G)
        m = len(labels)
        W, b = solve_certified(design, lam=1 / (C * m), n_outputs=1, normaliser=m,
                               tolerance=1e-8 / m, gradient_bound=G, beta=0.5,
                               row_norm=2 ** 0.5)
        thetas.append(np.concatenate([W.ravel(), b]))
    slack = 2 * 1e-8 * C  # two tolerances tau / lam
    assert np.linalg.norm(thetas[0] - thetas[1]) <= G * C + slack  # G / (N lam)
    assert np.linalg.norm(thetas[0] - thetas[1]) > 0


@pytest.mark.parametrize("strict", ["warnings-as-errors", "errstate-raise"])
def test_an_extreme_target_can_neither_refuse_a_release_nor_announce_itself(strict):
    # Review 15b, N1: neighbours differing in one target, 0 against 1e200 (finite,
    # clamped by the surrogate). Under the strictest floating-point settings a
    # caller can choose, both release, and neither emits a warning: the outcome
    # and the messages are the same for both.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = X @ np.array([1.0, -0.5, 0.25])
    for y0 in (0.0, 1e200):
        yy = y.copy()
        yy[0] = y0
        est = OutputPerturbationRegressor(alpha=50.0, target_scale=1.0,
                                          random_state=0)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            if strict == "warnings-as-errors":
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    est.fit(X, yy)
            else:
                with np.errstate(all="raise"):
                    est.fit(X, yy)
        assert np.all(np.isfinite(est.coef_))
        assert not [w for w in record if issubclass(w.category, RuntimeWarning)]


def test_a_release_that_is_mostly_noise_says_so_from_public_numbers():
    # Trial finding: OutputPerturbationRegressor(alpha=1) on diabetes gave R^2
    # -200 without a word, where noisy GD warns. The rule reads the plan only
    # (Section 15.6): the same for any rows of the same size.
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1).max()
    kw = dict(target_offset=152.0, target_scale=200.0, random_state=0)

    def noisy(est, XX, yy):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            est.fit(XX, yy)
        return [str(w.message) for w in rec if "mostly noise" in str(w.message)]

    said = noisy(OutputPerturbationRegressor(alpha=1.0, **kw), X, y)
    assert len(said) == 1 and "alpha='auto'" in said[0]
    # Other rows of the same size: the same words.
    assert noisy(OutputPerturbationRegressor(alpha=1.0, **kw), X[::-1] * 0.5,
                 -y) == said
    assert noisy(OutputPerturbationRegressor(**kw), X, y) == []
    assert noisy(OutputPerturbationRegressor(alpha=1.0, epsilon=1e4, **kw),
                 X, y) == []
    # The rule: half the squared score noise on the ball against F(0) - min F.
    from skforget.accounting._calibration import initial_error

    est = OutputPerturbationClassifier(C=1e3, classes=[0, 1], random_state=0)
    said = noisy(est, X, (y > 140).astype(int))
    p = est._plan
    assert said and 0.5 * (p.sigma * p.row_norm) ** 2 >= initial_error(
        loss="logistic")
    est = OutputPerturbationClassifier(classes=[0, 1], random_state=0)
    assert noisy(est, X, (y > 140).astype(int)) == []
    p = est._plan
    assert 0.5 * (p.sigma * p.row_norm) ** 2 < initial_error(loss="logistic")
