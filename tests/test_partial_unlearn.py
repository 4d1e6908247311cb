# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""partial_unlearn: statelessness, atomicity, sequences, law of the result, utility."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import chi2, norm
from sklearn.model_selection import train_test_split

from skforget import (
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    UnlearningError,
)
from skforget import accounting as acc
from skforget.datasets import load_dataset

# --- statelessness -------------------------------------------------------------

# database_version_: the database's random token and edit count (public, not
# derived from the rows), None when fitted on plain arrays.
PUBLIC_FITTED = {"coef_", "intercept_", "n_iter_", "n_unlearn_iter_",
                 "n_features_in_", "privacy_guarantee_", "database_version_",
                 "_plan"}


def _assert_no_row_in(blob, X):
    for i, row in enumerate(np.asarray(X)):
        assert row.tobytes() not in blob, f"training row {i} found in the pickle"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pickles_hold_no_training_row(binary_data, dtype):
    X, y = binary_data
    X = X.astype(dtype)
    clf = NoisyGDClassifier(random_state=0).fit(X, y)
    _assert_no_row_in(pickle.dumps(clf), X)
    request = EditRequest(X, y, delete=[0, 1, 2], replace=[5],
                          X_replace=X[[6]] * 0.5, y_replace=y[[6]],
                          X_insert=X[[7]] * 0.25, y_insert=y[[7]])
    clf.partial_unlearn(request)
    blob = pickle.dumps(clf)
    _assert_no_row_in(blob, X)
    _assert_no_row_in(blob, request.apply()[0])
    # Only coefficients and public metadata are kept.
    fitted = {k for k in vars(clf) if k.endswith("_") and not k.startswith("__")}
    assert fitted | {"_plan"} == PUBLIC_FITTED | {"classes_"}
    private = {k for k in vars(clf) if k.startswith("_")}
    assert private == {"_plan", "_fit_params", "_auto_rules"}
    assert isinstance(clf._auto_rules, int)   # the version of public rules
    # The hyper-parameters frozen at fit: the user's own public values.
    params = clf.get_params(deep=False)
    assert clf._fit_params.keys() == params.keys()
    assert all(params[k] == v for k, v in clf._fit_params.items())
    plan_values = [getattr(clf._plan, f) for f in clf._plan.__dataclass_fields__]
    # Plan fields are public scalars or the user's own class weights.
    assert all(v is None or isinstance(v, (int, float, str))
               or (isinstance(v, tuple) and all(isinstance(c, float) for c in v))
               for v in plan_values)
    g = clf.privacy_guarantee_.to_dict()
    flat = [v for v in g.values() if not isinstance(v, list)]
    flat += [v for e in g["edits"] for v in e.values()] + g["references"]
    assert all(v is None or isinstance(v, (int, float, str, bool)) for v in flat)


def test_regressor_pickle_holds_no_target_or_row(regression_data):
    X, y = regression_data
    reg = NoisyGDRegressor(clip_norm=0.25, random_state=0).fit(X, y)
    reg.partial_unlearn(EditRequest(X, y, delete=[3]))
    blob = pickle.dumps(reg)
    _assert_no_row_in(blob, X)
    assert y.tobytes()[:64] not in blob


# --- atomicity ---------------------------------------------------------------------


def _fitted(binary_data, **params):
    X, y = binary_data
    return NoisyGDClassifier(max_edit_size=5, random_state=0, **params).fit(X, y)


@pytest.mark.parametrize("make_request,message", [
    (lambda X, y: EditRequest(X[:-1], y[:-1], delete=[0]),
     "database of 299 rows, but the model's current database has 300"),
    (lambda X, y: EditRequest(X, y, delete=list(range(6))),
     "edits 6 rows, more than max_edit_size=5"),
    (lambda X, y: EditRequest(X, y, X_insert=X[:1], y_insert=[7]),
     r"y_insert\[0\] \(of type int64\) is not one of the classes"),
    (lambda X, y: EditRequest(X, y, replace=[4], X_replace=X[:1], y_replace=[2]),
     r"y_replace\[0\] \(of type int64\) is not one of the classes"),
    (lambda X, y: EditRequest(X[:, :3], y, delete=[0]), "features"),
])
def test_invalid_request_changes_nothing(binary_data, make_request, message):
    X, y = binary_data
    clf = _fitted(binary_data)
    before = pickle.dumps(clf)
    with pytest.raises(ValueError, match=message):
        clf.partial_unlearn(make_request(X, y))
    assert pickle.dumps(clf) == before


def test_non_request_is_rejected(binary_data):
    clf = _fitted(binary_data)
    with pytest.raises(TypeError, match="EditRequest"):
        clf.partial_unlearn([0, 1])


def test_unfitted_estimator_cannot_unlearn(binary_data):
    X, y = binary_data
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        NoisyGDClassifier().partial_unlearn(EditRequest(X, y, delete=[0]))


@pytest.mark.parametrize("where", ["solver", "accountant", "interrupt"])
def test_failure_mid_way_changes_nothing(binary_data, monkeypatch, where):
    X, y = binary_data
    # Every deletion passes over the data (none is served by the fit's DP alone).
    clf = _fitted(binary_data, max_lazy_records=0)
    before = pickle.dumps(clf)
    from skforget import _kernels, _noisy_gd, _solver

    calls = {"n": 0}
    real_steps = _kernels.run_steps_dense

    def failing_steps(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise (KeyboardInterrupt if where == "interrupt"
                   else RuntimeError("boom"))
        return real_steps(*args, **kwargs)

    def failing_guarantee(*args, **kwargs):
        raise RuntimeError("accountant failed")

    if where == "accountant":
        monkeypatch.setattr(_noisy_gd.accounting, "guarantee_after_edit",
                            failing_guarantee)
    else:
        # One step per call into the kernel, so the failure is mid-segment.
        monkeypatch.setattr(_solver, "_noise_chunk", lambda n_coords: 1)
        monkeypatch.setattr(_kernels, "run_steps_dense", failing_steps)
    with pytest.raises((RuntimeError, KeyboardInterrupt)):
        clf.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert pickle.dumps(clf) == before
    if where != "accountant":
        assert calls["n"] == 3  # the solver really was running when it failed


# --- sequences of requests ---------------------------------------------------------


def test_fifty_requests_in_a_row(binary_data):
    X, y = binary_data
    rng = np.random.default_rng(0)
    clf = NoisyGDClassifier(max_edit_size=3, random_state=1).fit(X, y)
    plan = clf._plan
    n_steps, accuracy = [plan.fit_steps], []
    for i in range(50):
        n = len(X)
        kind = i % 3
        if kind == 0:
            request = EditRequest(X, y, delete=rng.choice(n, 2, replace=False))
        elif kind == 1:
            j = int(rng.integers(n))
            request = EditRequest(X, y, replace=[j], X_replace=-X[[j]],
                                  y_replace=1 - y[[j]])
        else:
            request = EditRequest(X, y, X_insert=X[:1] * 0.9, y_insert=y[:1])
        assert clf.partial_unlearn(request) is clf
        X, y = request.apply()
        n_steps.append(clf.n_unlearn_iter_ * plan.n_batches)
        assert clf.privacy_guarantee_.deletion.steps == n_steps[-1]
        accuracy.append(clf.score(X, y))
        g = clf.privacy_guarantee_
        assert len(g.edits) == i + 1 and g.deletion.index == i + 1
        assert g.n_samples == len(X)
        assert g.rho <= plan.rho_inf * (1 + 1e-12)
        assert g.deletion.epsilon_deletion <= plan.deletion_epsilon + 1e-9
    g = clf.privacy_guarantee_
    assert [e.index for e in g.edits] == list(range(1, 51))
    # The history since the last retraining (an edit served from a fresh start
    # starts it again; privacy-accounting.md, 12.7).
    start = max([0] + [i + 1 for i, e in enumerate(g.edits) if e.retrained])
    assert g.total_steps == sum(n_steps[start:])
    assert [e.n_deleted for e in g.edits[:3]] == [2, 0, 0]
    assert [e.n_replaced for e in g.edits[:3]] == [0, 1, 0]
    assert [e.n_inserted for e in g.edits[:3]] == [0, 0, 1]
    # The adaptive figure grows with the releases an adaptive requester saw
    # (compared within one kind of edit: a deleted record is certified against
    # the null record, a replaced one against its replacement, 4x the Rényi
    # figure; an insertion removes nothing and certifies nothing).
    for kind in (0, 1):
        adaptive = [e.rho_adaptive for e in g.edits[kind::3]]
        assert all(b > a for a, b in zip(adaptive[:-1], adaptive[1:], strict=True))
    assert all(e.rho_adaptive == 0 and e.rho_deletion == 0 for e in g.edits[2::3])
    assert all(r.rho_adaptive > d.rho_adaptive
               for d, r in zip(g.edits[0::3], g.edits[1::3], strict=False))
    # Single releases fluctuate with the DP noise (n = 300); the stream keeps the
    # accuracy of a fresh private fit (about 0.78 here) on average.
    assert np.mean(accuracy) > 0.7


def test_unlearning_with_sparse_database(binary_data):
    X, y = binary_data
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.2, 0.0, X))
    dense = NoisyGDClassifier(random_state=4).fit(Xs.toarray(), y)
    sparse = NoisyGDClassifier(random_state=4).fit(Xs, y)
    dense.partial_unlearn(EditRequest(Xs.toarray(), y, delete=[3, 8]))
    sparse.partial_unlearn(EditRequest(Xs, y, delete=[3, 8]))
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-9, atol=1e-12)


def test_unlearning_is_reproducible_with_a_seed(multiclass_data):
    X, y = multiclass_data
    models = []
    for _ in range(2):
        clf = NoisyGDClassifier(random_state=3, max_lazy_records=0).fit(X, y)
        clf.partial_unlearn(EditRequest(X, y, delete=[10, 11]))
        models.append(clf.coef_)
    np.testing.assert_array_equal(*models)
    # Each segment draws a fresh stream: the edit's noise is not fit's noise.
    refit = NoisyGDClassifier(random_state=3).fit(X, y)
    assert not np.array_equal(refit.coef_, models[0])


def test_oversized_insertion_is_refused(binary_data):
    X, y = binary_data
    clf = NoisyGDClassifier(max_edit_size=1000, random_state=0).fit(X[:100], y[:100])
    before = pickle.dumps(clf)
    big = EditRequest(X[:100], y[:100], X_insert=X[100:], y_insert=y[100:])
    with pytest.raises(UnlearningError, match="no longer contracts"):
        clf.partial_unlearn(big)
    assert pickle.dumps(clf) == before


def test_rows_over_the_bound_in_an_edit_follow_clip_rows(binary_data):
    X, y = binary_data
    strict = NoisyGDClassifier(clip_rows=False, random_state=0).fit(X, y)
    request = EditRequest(X, y, X_insert=3 * X[:1], y_insert=y[:1])
    with pytest.raises(ValueError, match="Row 300 of the edited database"):
        strict.partial_unlearn(request)
    lenient = NoisyGDClassifier(random_state=0).fit(X, y)
    lenient.partial_unlearn(request)
    assert lenient.privacy_guarantee_.deletion.n_inserted == 1


# --- the law of the unlearned model (exactly Gaussian case) ---------------------------


def _gaussian_law(X, y, plan, rows_fit, rows_unlearn, k_fit, k_unlearn):
    """Mean, covariance of theta = [w, b] and the worst per-step probability that
    clipping would act, for squared loss without clipping (linear dynamics)."""
    Xt = np.column_stack([X, np.ones(len(X))])
    p = Xt.shape[1]
    eta, lam, N = plan.learning_rate, plan.lam, plan.normaliser
    s2 = 2 * eta * plan.sigma**2
    tau = plan.clip_norm / np.linalg.norm(Xt, axis=1)
    mu, cov, worst = np.zeros(p), plan.init_variance * np.eye(p), 0.0
    for rows, k in ((rows_fit, k_fit), (rows_unlearn, k_unlearn)):
        A = (1 - eta * lam) * np.eye(p) - eta / N * Xt[rows].T @ Xt[rows]
        c = eta / N * Xt[rows].T @ y[rows]
        for _ in range(k):
            resid = Xt[rows] @ mu - y[rows]
            sd = np.sqrt(np.einsum("ij,jk,ik->i", Xt[rows], cov, Xt[rows]))
            worst = max(worst, float(np.max(2 * norm.sf((tau[rows] - np.abs(resid))
                                                        / sd))))
            mu, cov = A @ mu + c, A @ cov @ A.T + s2 * np.eye(p)
    return mu, cov, worst


def _gaussian_renyi(q, mu1, cov1, mu2, cov2):
    """R_q(N(mu1, cov1) || N(mu2, cov2)) (Gil, Alajaji, Linder 2013)."""
    cov_q = q * cov2 + (1 - q) * cov1
    if np.min(np.linalg.eigvalsh(cov_q)) <= 0:
        return np.inf
    dm = mu1 - mu2
    _, ld_q = np.linalg.slogdet(cov_q)
    _, ld_1 = np.linalg.slogdet(cov1)
    _, ld_2 = np.linalg.slogdet(cov2)
    return (q / 2 * dm @ np.linalg.solve(cov_q, dm)
            - (ld_q - (1 - q) * ld_1 - q * ld_2) / (2 * (q - 1)))


def test_unlearned_model_has_the_predicted_gaussian_law():
    # Squared loss with clip_norm far above every residual the run can reach:
    # the iterates are exactly Gaussian (the clipping probability is checked to be
    # below 1e-12 at every step), so the law of the unlearned model and of the
    # reference that never saw the deleted row are known in closed form.
    rng = np.random.default_rng(0)
    n = 400
    X = rng.uniform(-1, 1, (n, 2))
    X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    y = np.clip(X @ np.array([0.8, -0.5]) + 0.1 * rng.standard_normal(n), -1, 1)
    deleted = [0]
    params = dict(alpha=200.0, clip_norm=4.0, epsilon=1.0, deletion_epsilon=0.1)
    samples = []
    for seed in range(1500):
        reg = NoisyGDRegressor(random_state=seed, **params).fit(X, y)
        reg.partial_unlearn(EditRequest(X, y, delete=deleted))
        samples.append(np.r_[reg.coef_, reg.intercept_])
    samples = np.array(samples)
    plan, cert = reg._plan, reg.privacy_guarantee_.deletion
    everyone, kept = np.arange(n), np.arange(1, n)
    mu, cov, worst = _gaussian_law(X, y, plan, everyone, kept, plan.fit_steps,
                                   cert.steps)
    mu_ref, cov_ref, worst_ref = _gaussian_law(X, y, plan, kept, kept, plan.fit_steps,
                                               cert.steps)
    assert max(worst, worst_ref) < 1e-12

    # Monte Carlo mean and covariance agree with the closed form.
    m = len(samples)
    diff = samples.mean(axis=0) - mu
    t2 = m * diff @ np.linalg.solve(cov, diff)
    assert t2 < chi2.ppf(1 - 1e-4, df=3)
    root = np.linalg.cholesky(np.linalg.inv(cov))
    white = root.T @ np.cov(samples.T) @ root
    assert np.max(np.abs(white - np.eye(3))) < 6 * np.sqrt(2 / m)

    # The exact divergence from the never-saw reference respects the certificate.
    checked = 0
    for q in (1.5, 2.0, 5.0, 10.0):
        for a, b in (((mu, cov), (mu_ref, cov_ref)), ((mu_ref, cov_ref), (mu, cov))):
            exact = _gaussian_renyi(q, a[0], a[1], b[0], b[1])
            if np.isfinite(exact):
                checked += 1
                assert exact <= q * cert.rho_deletion
    assert checked >= 6
    # And the divergence is real (the deleted row did move the model).
    assert _gaussian_renyi(2.0, mu, cov, mu_ref, cov_ref) > 0


def test_gaussian_renyi_matches_quadrature_in_one_dimension():
    from scipy.integrate import quad

    m1, v1, m2, v2, q = 0.3, 1.2, -0.1, 1.5, 3.0
    integrand = lambda t: norm.pdf(t, m1, np.sqrt(v1)) ** q * norm.pdf(  # noqa: E731
        t, m2, np.sqrt(v2)) ** (1 - q)
    numeric = np.log(quad(integrand, -30, 30, epsabs=1e-14)[0]) / (q - 1)
    closed = _gaussian_renyi(q, np.array([m1]), np.array([[v1]]), np.array([m2]),
                             np.array([[v2]]))
    assert closed == pytest.approx(numeric, rel=1e-9)


# --- utility -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name,params,seeds", [
    ("breast_cancer", dict(C=0.1, clip_norm=0.5), 150),
    ("digits", dict(C=0.01, intercept_scaling=0.1), 40),
])
def test_accuracy_after_deleting_one_percent_matches_retraining(name, params, seeds):
    data = load_dataset(name)
    X, X_test, y, y_test = train_test_split(data.data, data.target, test_size=0.25,
                                            random_state=0, stratify=data.target)
    n_delete = max(1, round(0.01 * len(X)))
    unlearned, retrained = [], []
    for seed in range(seeds):
        est = NoisyGDClassifier(max_edit_size=n_delete, random_state=seed, **params)
        est.fit(X, y)
        forget = np.random.default_rng(seed).choice(len(X), n_delete, replace=False)
        request = EditRequest(X, y, delete=forget)
        est.partial_unlearn(request)
        unlearned.append(est.score(X_test, y_test))
        X_left, y_left = request.apply()
        fresh = NoisyGDClassifier(max_edit_size=n_delete, random_state=10_000 + seed,
                                  **params).fit(X_left, y_left)
        retrained.append(fresh.score(X_test, y_test))
    gap = np.mean(retrained) - np.mean(unlearned)
    assert gap <= 0.005, (np.mean(unlearned), np.mean(retrained))
    assert np.mean(unlearned) > (0.9 if name == "breast_cancer" else 0.7)


def test_guarantee_after_unlearning_matches_the_accountant(binary_data):
    X, y = binary_data
    clf = NoisyGDClassifier(C=0.1, deletion_epsilon=0.1, random_state=0).fit(X, y)
    before = clf.privacy_guarantee_
    request = EditRequest(X, y, delete=[1, 2, 3])
    clf.partial_unlearn(request)
    plan = clf._plan
    edit = acc.plan_unlearning(plan, before, n_samples=297, n_deleted=3)
    steps = edit.steps
    assert not edit.retrained
    assert clf.n_unlearn_iter_ == steps // plan.n_batches
    assert clf.n_iter_.tolist() == [plan.fit_epochs]  # the fit's, unchanged
    assert clf.privacy_guarantee_ == acc.guarantee_after_edit(
        plan, before, steps=steps, n_samples=297, n_deleted=3, n_replaced=0,
        n_inserted=0, seeded=True)
    assert clf.privacy_guarantee_.deletion.epsilon_deletion <= 0.1 + 1e-9
    text = str(clf.privacy_guarantee_.deletion)
    assert text.startswith("Edit 1: 3 deleted, 0 replaced, 0 inserted (297 rows now)")
    assert f"{steps} noisy steps" in text and "3 removed records together" in text


def test_one_record_is_not_said_to_be_a_group(binary_data):
    # A trial read "the 1 removed record together, as one unit" and "the 1
    # record awaiting a pass, together", each the per-record figure again.
    X, y = binary_data
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    clf.partial_unlearn(EditRequest(X, y, delete=[3], by="position"))
    cert = clf.privacy_guarantee_.deletion
    text = str(clf.privacy_guarantee_)
    assert "Each removed record" in text
    assert "together" not in text.split("Each removed record")[1].split(
        "against requests")[0]
    if cert.without_pass:
        assert cert.n_pending == 1
    assert "record(s) together" not in str(cert)


def test_the_deletion_target_is_said_once_as_a_bound(binary_data):
    # A trial read two targets for one model: the guarantee's "will certify
    # deleted records at (1, ...)" and plan_unlearn's 0.94 (a share goes to
    # the class statistics). The guarantee's is a bound, the plan's the cap.
    X, y = binary_data
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    assert "will certify deleted records at (1, 1e-05) or better" in str(
        clf.privacy_guarantee_)
    plan = clf.plan_unlearn(EditRequest(X, y, delete=[3], by="position"))
    assert plan.deletion_epsilon <= 1.0
    assert "the model's target or below it" in str(plan)
