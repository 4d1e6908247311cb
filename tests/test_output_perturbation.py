# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Output perturbation (privacy-accounting.md, Section 15): oracle O10, the exact
Gaussian curve, coupling of neighbouring solves (hostile rows too), the
certified tolerance, and deletion by refit."""

import math

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

RHO_O3 = 0.0305565951976365  # (epsilon, delta) = (1, 1e-5), improved conversion

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


def test_plan_uses_the_noisy_gd_sensitivity_and_tolerance():
    plan = acc.plan_output_perturbation(
        loss="logistic", n_samples=10000, n_params=21, lam=0.01, row_norm=2 ** 0.5,
        clip_norm=1.0, epsilon=1.0, delta=1e-5)
    assert plan.sensitivity == acc.sensitivity(gradient_bound=1.0) == 2.0
    assert plan.tolerance == pytest.approx(2e-7, rel=1e-12)
    assert plan.sigma == pytest.approx(0.08106441238018465, rel=1e-9)
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
    assert g.rho == pytest.approx(acc.epsilon_to_rho(epsilon=1.0, delta=g.delta),
                                  rel=1e-9)
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
                           beta=plan.beta)
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


@settings(max_examples=25, deadline=None)
@given(n=st.integers(10, 60), d=st.integers(1, 5), C=st.floats(0.05, 50.0),
       clip=st.floats(0.05, 2.0), scale=st.sampled_from([1e-3, 1.0, 1e3, 1e150]),
       seed=st.integers(0, 2 ** 16))
def test_coupling_property(n, d, C, clip, scale, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 2, n)
    make = lambda **kw: OutputPerturbationClassifier(  # noqa: E731
        C=C, classes=[0, 1], clip_norm=clip, **kw)
    i = int(rng.integers(n))
    dist, bound = _coupled_distance(make, X, y, i, rng.normal(size=d) * scale,
                                    1 - y[i])
    assert dist <= bound * (1 + 1e-9)


# --- the certified tolerance -------------------------------------------------------


def test_solver_output_is_within_the_certified_tolerance(data):
    X, y = data
    design = make_design(X, y.astype(float), loss="logistic", data_norm=1.0,
                         intercept_scaling=1.0, gradient_bound=0.5)
    lam, tau = 1e-3, 1e-3 * 1.0 / len(y)
    W, b = solve_certified(design, lam=lam, n_outputs=1, normaliser=len(y),
                           tolerance=tau, gradient_bound=0.5, beta=0.5)
    obj = _Objective(design, lam=lam, n_outputs=1, weight=None, normaliser=len(y),
                     fit_intercept=True)
    theta = np.concatenate([W.ravel(), b])
    assert np.linalg.norm(obj.grad(theta)) <= tau
    # Lemma 15.2 against a much tighter solve: within tau / lam of the minimiser.
    W2, b2 = solve_certified(design, lam=lam, n_outputs=1, normaliser=len(y),
                             tolerance=tau * 1e-3, gradient_bound=0.5, beta=0.5)
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


def test_uncertifiable_solve_raises_and_changes_nothing(data):
    X, y = data
    clf = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(X, y)
    before = dict(clf.__dict__)
    clf.set_params(tol=1e-12, max_iter=1)
    with pytest.raises(UnlearningError, match="tol"):
        clf.partial_unlearn(EditRequest(X, y, delete=[0]))
    after = {k: v for k, v in clf.__dict__.items() if k not in ("tol", "max_iter")}
    assert after.keys() == {k for k in before if k not in ("tol", "max_iter")}
    assert all(after[k] is before[k] for k in after)
    fresh = OutputPerturbationClassifier(classes=[0, 1], tol=1e-12, max_iter=1)
    with pytest.raises(ValueError, match="max_iter=1"):
        fresh.fit(X, y)
    assert not hasattr(fresh, "coef_")


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
                           beta=plan.beta)
    noise = segment_rng(3, 1).standard_normal((1, 7)) * plan.sigma
    # The new model is the solve on the edited rows plus a fresh draw: the
    # deleted rows enter nowhere.
    np.testing.assert_allclose(_theta(clf), np.concatenate([W.ravel(), b]) +
                               noise.ravel(), rtol=0, atol=1e-9 * plan.sigma + 1e-12)
    assert not np.allclose(noise, segment_rng(3, 0).standard_normal((1, 7)))


def test_refit_certificates_and_adaptive_figure(data):
    X, y = data
    db = Database(X, y)
    clf = OutputPerturbationClassifier(classes=[0, 1], epsilon=2.0).fit(db)
    rho = clf.privacy_guarantee_.rho
    req = EditRequest(db, delete=[1])
    clf.partial_unlearn(req)
    g = clf.privacy_guarantee_
    cert = g.deletion
    assert cert.retrained and cert.steps == 0
    assert cert.rho_deletion == 0.0 and cert.epsilon_deletion == 0.0
    assert cert.releases_seen == 1
    # A deleted unit against the null record: (S_del / S)^2 = 1/4 (Theorem 15.4).
    assert cert.rho_adaptive == pytest.approx(rho / 4, rel=1e-9)
    assert g.epsilon == pytest.approx(2.0, rel=1e-6)  # records present: the target
    assert "refitted from scratch with fresh noise" in str(g)
    assert "refitted from scratch" in str(cert)
    # Second edit, a replacement, on the version the first one produced.
    db1 = req.apply()
    assert clf.database_version_ == db1.version
    clf.partial_unlearn(EditRequest(db1, replace=[0], X_replace=X[:1],
                                    y_replace=y[:1]))
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
