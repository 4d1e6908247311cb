# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Deletions served without a pass and the default deletion target (issue 25).

privacy-accounting.md, Sections 12.9 (Theorem 12.9, eq. 12.5') and 12.10.
"""

import dataclasses
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skforget import EditRequest, NoisyGDClassifier, NoisyGDRegressor
from skforget import accounting as acc
from skforget._solver import initial_draw, run_noisy_gd
from skforget.accounting._calibration import lazy_records_limit
from skforget.accounting._cyclic import shift_bound
from skforget.exceptions import UnlearningError


def _data(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X @ np.arange(1, d + 1) + rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def data():
    return _data()


def _fit(X, y, **params):
    # The figures of the coefficients alone: the noisy class counts (redrawn
    # at every edit, Section 18.10) are tested in tests/test_prevalence.py.
    params.setdefault("prevalence_share", 0.0)
    return NoisyGDClassifier(classes=[0, 1], random_state=0, **params).fit(X, y)


# --- the accountant -------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [None, "auto"])
def test_a_deletion_the_release_certifies_runs_no_step(data, batch_size):
    X, y = data
    clf = _fit(X, y, batch_size=batch_size)
    plan, g = clf._plan, clf.privacy_guarantee_
    assert plan.deletion_epsilon == plan.epsilon  # the default target (12.10)
    edit = acc.plan_unlearning(plan, g, n_samples=len(y) - 1, n_deleted=1)
    assert edit.steps == 0 and not edit.retrained
    after = acc.guarantee_after_edit(plan, g, steps=0, n_samples=len(y) - 1,
                                     n_deleted=1, n_replaced=0, n_inserted=0,
                                     seeded=True)
    cert = after.deletion
    # Theorem 12.9: the history's figure at the deletion sensitivity, a quarter
    # of the replace-one figure; the records present keep theirs.
    assert cert.without_pass
    assert cert.rho_deletion == pytest.approx(g.rho / 4, rel=1e-12)
    assert after.rho == pytest.approx(g.rho, rel=1e-12)
    assert after.total_steps == g.total_steps
    # One release seen (the fit's), at the deletion sensitivity (Theorem 6.3).
    assert cert.releases_seen == 1
    assert cert.rho_adaptive == pytest.approx(g.rho / 4 + g.rho / 4, rel=1e-12)
    assert cert.n_pending == 1 and cert.rho_pending_group == cert.rho_deletion


def test_a_release_without_a_pass_adds_nothing_to_the_adaptive_sum(data):
    X, y = data
    clf = _fit(X, y, batch_size=None)
    plan, g = clf._plan, clf.privacy_guarantee_
    for k in range(1, 4):
        g = acc.guarantee_after_edit(plan, g, steps=0, n_samples=len(y) - k,
                                     n_deleted=1, n_replaced=0, n_inserted=0,
                                     seeded=True)
        assert g.deletion.releases_seen == 1
        assert g.deletion.n_pending == k
        # k records pending, as one unit: k^2 times the per-unit figure.
        assert g.deletion.rho_pending_group == pytest.approx(
            k * k * g.deletion.rho_deletion, rel=1e-12)
    # A pass after them is a new release; the pending count starts again.
    edit = acc.plan_unlearning(plan, g, n_samples=len(y) - 4, n_deleted=1,
                               max_lazy_records=0)
    assert edit.steps > 0
    g = acc.guarantee_after_edit(plan, g, steps=edit.steps, n_samples=len(y) - 4,
                                 n_deleted=1, n_replaced=0, n_inserted=0,
                                 seeded=True, retrained=edit.retrained)
    assert g.deletion.releases_seen == 1 and g.deletion.n_pending == 0
    assert acc.pending_removals(g) == 0
    g = acc.guarantee_after_edit(plan, g, steps=0, n_samples=len(y) - 5,
                                 n_deleted=1, n_replaced=0, n_inserted=0,
                                 seeded=True)
    assert g.deletion.releases_seen == 2 and g.deletion.n_pending == 1


@pytest.mark.parametrize("n", [500, 2000])
@pytest.mark.parametrize("relation", ["replace", "zero_out"])
def test_the_lazy_figure_is_attained_by_the_exact_gaussian_process(n, relation):
    # The accountant's certificate-only path against the exact divergence,
    # from the plan's public numbers, of the worst case of Section 5.4: a
    # linear loss whose gradient differs by S_del = G in the deleted slot
    # (null record: zero gradient), full batch, point start. Both relations
    # give S_del = G (a quarter of (2G)^2 under replace-one, G^2 under
    # zero-out).
    plan = acc.plan_training(
        loss="logistic", n_samples=n, n_params=6, lam=1.0 / n, row_norm=2**0.5,
        clip_norm=0.5, epsilon=1.0, delta=1e-5, deletion_epsilon=1.0,
        relation=relation, n_batches=1, fit_recipe="worst_case", n_features=5,
        data_norm=1.0)
    g = acc.guarantee_after_fit(plan, steps=plan.fit_steps, seeded=False)
    after = acc.guarantee_after_edit(plan, g, steps=0, n_samples=n - 1, n_deleted=1,
                                     n_replaced=0, n_inserted=0, seeded=False)
    assert after.deletion.without_pass
    c, k, eta = plan.contraction, plan.fit_steps, plan.learning_rate
    mean = eta * plan.gradient_bound / plan.normaliser * (1 - c**k) / (1 - c)
    var = 2 * eta * plan.sigma**2 * (1 - c ** (2 * k)) / (1 - c**2)
    assert after.deletion.rho_deletion == pytest.approx(mean**2 / (2 * var),
                                                        rel=1e-12)


def test_same_noise_coupling_stays_within_the_deletion_sensitivity_drift():
    # Deterministic bound behind Theorem 12.9 (full batch): with the same noise,
    # the run holding the record and the run holding the null record in its
    # slot (a zero row, no intercept: zero gradient) end at most
    # eta S_del / N * (1 - c^T) / (1 - c) apart, S_del = G, half the
    # replace-one drift; a deletion served without a pass releases these same
    # two models again.
    X, y = _data(300, 4, seed=3)
    clf = NoisyGDClassifier(classes=[0, 1], batch_size=None, fit_intercept=False,
                            clip_norm=0.5, max_iter=60, random_state=0).fit(X, y)
    plan = clf._plan
    X0 = X.copy()
    X0[7] = 0.0
    outs = []
    for rows in (X, X0):
        rng = np.random.default_rng(11)
        W, b = initial_draw(rng, (1, X.shape[1]), fit_intercept=False,
                            init_variance=plan.init_variance)
        design = clf._design(rows, y, "logistic", where="X")
        W, b = run_noisy_gd(design, W, b, steps=plan.fit_steps, lam=plan.lam,
                            sigma=plan.sigma, learning_rate=plan.learning_rate,
                            normaliser=plan.normaliser, rng=rng,
                            fit_intercept=False)
        outs.append(W.ravel())
    c = plan.contraction
    bound = plan.learning_rate * plan.gradient_bound / plan.normaliser \
        * (1 - c**plan.fit_steps) / (1 - c)
    dist = np.linalg.norm(outs[0] - outs[1])
    assert 0 < dist <= bound * (1 + 1e-9)


@pytest.mark.parametrize("batch_size", [None, 40, 7])
def test_same_noise_coupling_of_a_removed_record_through_the_estimator(batch_size):
    # The bound above through the estimator's own path, mini-batches too (an
    # audit found the coupling of Section 12.9 tested in full batch only):
    # the fit holding the record and the fit holding the null record in its
    # slot, with the same seed, end within the shift bound at S_del = G, the
    # record's position in its batch being any.
    X, y = _data(300, 4, seed=3)
    # A record whose gradient stays at its clip: a unit row along the data's
    # direction, labelled against it.
    w = X.T @ (2.0 * y - 1.0)
    X[7], y[7] = w / np.linalg.norm(w), 0
    kw = dict(classes=[0, 1], batch_size=batch_size, fit_intercept=False,
              clip_norm=0.5, max_iter=60, random_state=0)
    X0 = X.copy()
    X0[7] = 0.0
    a = NoisyGDClassifier(**kw).fit(X, y)
    b = NoisyGDClassifier(**kw).fit(X0, y)
    plan = a._plan
    assert plan == b._plan
    bound = shift_bound([plan.fit_segment()], lam=plan.lam, beta=plan.beta,
                        sensitivity=plan.gradient_bound, normaliser=plan.normaliser)
    dist = np.linalg.norm(a.coef_ - b.coef_)
    # Within the bound, and near enough to it that a drift three times the
    # accounted one would not pass.
    assert 0.3 * bound < dist <= bound * (1 + 1e-9), dist / bound
    # Half the replace-one drift the plan's sensitivity prices.
    assert plan.sensitivity == pytest.approx(2 * plan.gradient_bound)


def test_a_stronger_target_costs_passes_and_is_met(data):
    X, y = data
    clf = _fit(X, y)
    plan, g = clf._plan, clf.privacy_guarantee_
    edit = acc.plan_unlearning(plan, g, n_samples=len(y) - 1, n_deleted=1,
                               deletion_epsilon=plan.epsilon / 10)
    assert edit.steps > 0
    with pytest.raises(ValueError, match="deletion_epsilon=2.0 must be <= the model's deletion_epsilon"):
        acc.plan_unlearning(plan, g, n_samples=len(y) - 1, n_deleted=1,
                            deletion_epsilon=2.0)
    with pytest.raises(ValueError, match="deletion_epsilon"):
        acc.plan_unlearning(plan, g, n_samples=len(y) - 1, n_deleted=1,
                            deletion_epsilon=-1.0)


def test_replacements_insertions_and_the_papers_recipe_always_pass(data):
    X, y = data
    clf = _fit(X, y)
    plan, g = clf._plan, clf.privacy_guarantee_
    n = len(y)
    for kw in (dict(n_samples=n, n_deleted=0, n_replaced=1),
               dict(n_samples=n + 1, n_deleted=0, n_inserted=1),
               dict(n_samples=n, n_deleted=1, n_inserted=1)):
        assert acc.plan_unlearning(plan, g, **kw).steps > 0
    cs23 = NoisyGDClassifier(classes=[0, 1], recipe="cs23", max_iter=5,
                             random_state=0).fit(X[:300], y[:300])
    assert acc.plan_unlearning(cs23._plan, cs23.privacy_guarantee_,
                               n_samples=299, n_deleted=1).steps > 0


def test_lazy_limit_oracle():
    # eq. 12.5': floor(N lam sqrt(p v0) / G), and at most 1 % of N.
    assert lazy_records_limit(normaliser=200_000, lam=1e-4, n_params=101,
                              init_variance=1.4e-2, gradient_bound=0.5) == 47
    assert lazy_records_limit(normaliser=1000, lam=1e-2, n_params=10,
                              init_variance=1.0, gradient_bound=0.5) == 10
    assert lazy_records_limit(normaliser=99, lam=1.0, n_params=10,
                              init_variance=1.0, gradient_bound=0.5) == 0


@settings(max_examples=25, deadline=None)
def _edit(plan, g, n, kind, **kwargs):
    """One edit of a mixed history, planned then certified by the accountant."""
    counts = {"delete": (1, 0, 0, n - 1), "delete3": (3, 0, 0, n - 3),
              "replace": (0, 1, 0, n), "insert": (0, 0, 2, n + 2),
              "strong": (1, 0, 0, n - 1)}[kind]
    n_del, n_rep, n_ins, m = counts
    target = plan.deletion_epsilon / 8 if kind == "strong" else None
    edit = acc.plan_unlearning(plan, g, n_samples=m, n_deleted=n_del,
                               n_replaced=n_rep, n_inserted=n_ins,
                               deletion_epsilon=target, **kwargs)
    after = acc.guarantee_after_edit(
        plan, g, steps=edit.steps, n_samples=m, n_deleted=n_del, n_replaced=n_rep,
        n_inserted=n_ins, seeded=False, retrained=edit.retrained,
        data_weight=edit.data_weight, n_batches=edit.n_batches)
    return after, m


def _replay_without_zero_steps(plan, fit, edits):
    """The history with its certificate-only edits left out: each passing edit
    replayed from its certificate's public numbers."""
    g = fit
    for cert in edits:
        if cert.steps == 0 and not cert.retrained:
            continue
        g = acc.guarantee_after_edit(
            plan, g, steps=cert.steps, n_samples=cert.n_samples,
            n_deleted=cert.n_deleted, n_replaced=cert.n_replaced,
            n_inserted=cert.n_inserted, seeded=False, retrained=cert.retrained,
            data_weight=cert.data_weight, n_batches=cert.n_batches)
    return g


@settings(deadline=None, max_examples=40)
@given(n=st.integers(300, 5000), eps=st.floats(0.3, 8.0),
       frac=st.floats(0.05, 1.0), batches=st.sampled_from([1, "auto"]),
       relation=st.sampled_from(["replace", "zero_out"]),
       group=st.sampled_from([1, 2]), classes=st.sampled_from([2, 3]),
       recipe=st.sampled_from(["typical", "worst_case"]),
       kinds=st.lists(st.sampled_from(["delete", "delete", "delete", "delete3",
                                       "replace", "insert", "strong"]),
                      min_size=1, max_size=12))
def test_mixed_histories_certify_every_deletion(n, eps, frac, batches, relation,
                                                group, classes, recipe, kinds):
    # Review finding 9: checks independent of the planner's own lazy figure,
    # on random mixed histories (certificate-only edits, continuations,
    # retrainings, full-batch growth past the headroom via insertions, both
    # relations, groups, multiclass).
    plan = acc.plan_training(
        loss="logistic", n_samples=n, n_params=6 * (classes if classes > 2 else 1),
        lam=1.0 / n, row_norm=2**0.5, clip_norm=0.5, epsilon=eps, delta=1e-5,
        deletion_epsilon=eps * frac, relation=relation, group_size=group,
        n_batches=batches, fit_recipe=recipe, n_features=5, data_norm=1.0,
        n_classes=classes, max_edit_size=3)
    fit = g = acc.guarantee_after_fit(plan, steps=plan.fit_steps, seeded=False)
    passes = 1
    for kind in kinds:
        prev = g
        try:
            g, n = _edit(plan, g, n, kind)
        except ValueError:       # an edit that would break the contraction
            continue
        cert = g.deletion
        if cert.without_pass:
            assert kind in ("delete", "delete3", "strong")
            # Theorem 12.9: the previous release's figure at the deletion
            # sensitivity; nothing else changes.
            factor = acc.deletion_factor(plan_relation=relation, n_replaced=0)
            assert cert.rho_deletion == pytest.approx(prev.rho * factor, rel=1e-9)
            target = acc.epsilon_to_rho(
                epsilon=plan.deletion_epsilon / (8 if kind == "strong" else 1),
                delta=plan.delta, method=plan.conversion)
            assert cert.rho_deletion <= target * (1 + 1e-9)
            assert g.rho == prev.rho and g.total_steps == prev.total_steps
            assert cert.releases_seen == passes
            # The pending records as one unit: sensitivity n_pending G against
            # the unit's group_size G (sub-additivity of sqrt(rho), 12.3); up
            # to group_size records are covered by one unit's figure.
            units = max(cert.n_pending, group) / group
            assert cert.rho_pending_group == pytest.approx(
                units**2 * cert.rho_deletion, rel=1e-12)
            assert 0 < cert.n_pending <= plan.lazy_records
        else:
            passes += 1 if cert.steps or cert.retrained else 0
            assert cert.n_pending == 0
            # A pass after certificate-only edits: the same chain as the
            # history without them.
            ref = _replay_without_zero_steps(plan, fit, g.edits)
            assert g.rho == pytest.approx(ref.rho, rel=1e-9)
            assert cert.rho_deletion == pytest.approx(ref.deletion.rho_deletion,
                                                      rel=1e-9)
            if kind != "strong":
                assert cert.rho_deletion <= plan.rho_deletion_target * (1 + 1e-9)
        assert g.rho <= plan.rho_target * (1 + 1e-9)


def test_certificates_pickled_before_the_new_fields_load(data):
    X, y = data
    clf = _fit(X, y)
    clf.partial_unlearn(EditRequest(X, y, delete=[0]))
    cert = clf.privacy_guarantee_.deletion
    fields = dataclasses.fields(cert)
    old = object.__new__(type(cert))
    old.__setstate__(tuple(getattr(cert, f.name) for f in fields[:-4]))
    assert old.n_pending == 0 and old.epsilon_pending_group == 0.0
    # Certificates saved before Theorem 12.12 come from edits that redrew
    # their class statistics: they count as drawn (the conservative reading).
    assert not cert.statistics_drawn and old.statistics_drawn
    assert pickle.loads(pickle.dumps(cert)) == cert


# --- the estimators ----------------------------------------------------------------

def test_partial_unlearn_without_a_pass_reads_no_row(data, monkeypatch):
    X, y = data
    clf = _fit(X, y)
    coef, before = clf.coef_.copy(), clf.privacy_guarantee_
    request = EditRequest(X, y, delete=[3, 4])

    def no_apply(self):
        raise AssertionError("the request was applied")

    for name in ("apply", "_apply_uncommitted", "_compute"):
        monkeypatch.setattr(EditRequest, name, no_apply)
    clf.partial_unlearn(request)
    np.testing.assert_array_equal(clf.coef_, coef)
    cert = clf.privacy_guarantee_.deletion
    assert cert.without_pass and clf.n_unlearn_iter_ == 0
    assert cert.epsilon_deletion <= clf._plan.deletion_epsilon
    assert clf.privacy_guarantee_.epsilon == before.epsilon
    text = str(clf.privacy_guarantee_)
    assert "2 removed records together, as one unit" in text
    # Review findings 6-7: what such a deletion leaves, in plain words.
    assert "the coefficients are identical to those before this request" in text
    assert "measured against a model trained with an empty record in its place" \
        in text
    assert "influence stays in the coefficients until the next pass" in text
    assert "2 records awaiting a pass, together" in text
    assert str(cert).count("coefficients are identical") == 1


def test_the_guarantee_flags_pending_records_unprotected_as_a_group(data):
    # Review finding 6: once the records awaiting a pass exceed the model's
    # epsilon as a group, the printed guarantee says so.
    X, y = data
    clf = _fit(X, y, batch_size=None)
    n = len(y)
    for k in range(8):
        clf.partial_unlearn(EditRequest(X[: n - k], y[: n - k], delete=[n - k - 1]))
        cert = clf.privacy_guarantee_.deletion
        assert cert.without_pass
        text = str(clf.privacy_guarantee_)
        flagged = "not protected as a group" in text
        assert flagged == (cert.epsilon_pending_group > clf.privacy_guarantee_.epsilon)
    assert flagged  # 8 records: 64 times the per-record Renyi figure


def test_plan_unlearn_says_what_partial_unlearn_does(data):
    X, y = data
    clf = _fit(X, y)
    before = pickle.dumps(clf)
    for eps_dd, how in ((None, "without_pass"), (0.05, None)):
        request = EditRequest(X, y, delete=[5])
        plan = clf.plan_unlearn(request, deletion_epsilon=eps_dd)
        assert pickle.dumps(clf) == before  # planning changes nothing
        assert how is None or plan.how == how
        assert plan.fit_passes == clf._plan.fit_epochs
        model = pickle.loads(before)
        model.partial_unlearn(request, deletion_epsilon=eps_dd)
        assert model.privacy_guarantee_.deletion == plan.certificate
        assert model.privacy_guarantee_.deletion.passes == plan.passes
        if eps_dd is not None:
            assert plan.how in ("continue", "retrain") and plan.passes > 0
            assert plan.certificate.epsilon_deletion <= eps_dd
        assert "a refit takes" in str(plan)


def test_pending_records_past_the_limit_pass_over_the_data(data):
    X, y = data
    clf = _fit(X, y, max_lazy_records=3)
    hows = []
    for _ in range(5):
        request = EditRequest(X, y, delete=[0])
        clf.partial_unlearn(request)
        hows.append(clf.privacy_guarantee_.deletion.without_pass)
        X, y = request.apply()
    assert hows == [True, True, True, False, True]
    clf0 = _fit(*data, max_lazy_records=0)
    clf0.partial_unlearn(EditRequest(*data, delete=[0]))
    assert not clf0.privacy_guarantee_.deletion.without_pass


def test_a_bad_request_target_changes_nothing(data):
    X, y = data
    clf = _fit(X, y)
    before = pickle.dumps(clf)
    for bad in (2.0, 0.0, -1.0, float("nan")):
        with pytest.raises(UnlearningError, match="deletion_epsilon"):
            clf.partial_unlearn(EditRequest(X, y, delete=[0]), deletion_epsilon=bad)
        assert pickle.dumps(clf) == before


def test_a_request_on_other_features_is_refused_without_a_pass(data):
    X, y = data
    clf = _fit(X, y)
    before = pickle.dumps(clf)
    with pytest.raises(ValueError, match="features"):
        clf.partial_unlearn(EditRequest(X[:, :3], y, delete=[0]))
    assert pickle.dumps(clf) == before


def test_the_regressor_serves_deletions_without_a_pass_too():
    X, y = _data(2000, 5, seed=1)
    yr = X @ np.arange(1, 6) * 0.3
    reg = NoisyGDRegressor(random_state=0, target_scale=2.0).fit(X, yr)
    coef = reg.coef_.copy()
    reg.partial_unlearn(EditRequest(X, yr, delete=[1]))
    assert reg.privacy_guarantee_.deletion.without_pass
    np.testing.assert_array_equal(reg.coef_, coef)


def test_prediction_certificates_after_a_deletion_without_a_pass(data):
    X, y = data
    clf = _fit(X, y, batch_size=None, clip_norm=0.5)
    r0 = clf.certified_radius(1)
    clf.partial_unlearn(EditRequest(X, y, delete=[0]))
    # The same model, one more record forgotten: the public radius covering
    # the forgotten record cannot shrink.
    assert clf.certified_radius(1) >= r0
    assert clf.certify(X[:50], 0).dtype == bool


# --- in-place requests (the owner's side, no copy of the database) -------------

def test_in_place_apply_equals_the_copy_up_to_row_order():
    X, y = _data(50, 3, seed=4)
    Xc, yc = X.copy(), y.copy()
    delete, replace = [0, 7, 48, 49, 20], [3, 47]
    X_rep, y_rep = np.ones((2, 3)), np.array([1, 0])
    ref = EditRequest(Xc.copy(), yc.copy(), delete=delete, replace=replace,
                      X_replace=X_rep, y_replace=y_rep).apply()
    req = EditRequest(Xc, yc, delete=delete, replace=replace, X_replace=X_rep,
                      y_replace=y_rep, in_place=True)
    X_new, y_new = req.apply()
    assert X_new.base is Xc or np.shares_memory(X_new, Xc)  # a view, no copy
    assert X_new.shape == ref[0].shape
    key = np.c_[X_new, y_new]
    want = np.c_[ref[0], ref[1]]
    np.testing.assert_array_equal(key[np.lexsort(key.T)], want[np.lexsort(want.T)])


def test_a_failed_in_place_edit_puts_every_row_back(data, monkeypatch):
    X, y = data
    clf = _fit(X, y, max_lazy_records=0)
    Xc, yc = X.copy(), y.copy()
    before = pickle.dumps(clf)
    request = EditRequest(Xc, yc, delete=[0, 1999, 500], in_place=True)
    from skforget import _kernels

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(_kernels, "run_steps_dense", boom)
    with pytest.raises(RuntimeError, match="boom"):
        clf.partial_unlearn(request)
    np.testing.assert_array_equal(Xc, X)
    np.testing.assert_array_equal(yc, y)
    assert pickle.dumps(clf) == before
    monkeypatch.undo()
    clf.partial_unlearn(request)           # served, on the in-place edited rows
    X_new, y_new = request.apply()
    assert X_new.shape[0] == len(y) - 3 and np.shares_memory(X_new, Xc)
    assert clf.privacy_guarantee_.n_samples == len(y) - 3


@pytest.mark.parametrize("kwargs,why", [
    (dict(X_insert=np.zeros((1, 5)), y_insert=[0]), "insertion"),
    (dict(sample_weight=np.ones(2000)), "sample weights"),
    (dict(in_place="yes"), "True or False"),
])
def test_in_place_is_refused_where_the_api_cannot_keep_it(data, kwargs, why):
    X, y = data
    kwargs = {"in_place": True, **kwargs}
    with pytest.raises(UnlearningError, match=why):
        EditRequest(X, y, delete=[0], **kwargs)


def test_a_request_cannot_weaken_the_models_deletion_target(data):
    # Review finding 1: a per-request target may only be stronger than the
    # target frozen at fit (Sections 12.10, 16.1); a weaker one is refused and
    # the estimator is left as it was.
    X, y = data
    clf = _fit(X, y, deletion_epsilon=0.1)
    assert clf._plan.deletion_epsilon == pytest.approx(0.1)
    before = pickle.dumps(clf)
    for weaker in (0.5, 1.0):
        with pytest.raises(UnlearningError,
                           match=r"deletion_epsilon=.* only a stronger target"):
            clf.partial_unlearn(EditRequest(X, y, delete=[0]),
                                deletion_epsilon=weaker)
        assert pickle.dumps(clf) == before
        with pytest.raises(UnlearningError, match="only a stronger target"):
            clf.plan_unlearn(EditRequest(X, y, delete=[0]), deletion_epsilon=weaker)
    # The model's own target and a stronger one are served.
    clf.partial_unlearn(EditRequest(X, y, delete=[0]), deletion_epsilon=0.1)
    cert = clf.privacy_guarantee_.deletion
    assert cert.epsilon_deletion <= 0.1 * (1 + 1e-9)


def _holds_row(A, row):
    return bool(np.any(np.all(A == row, axis=1)))


@pytest.mark.parametrize("lazy", [True, False])
def test_an_in_place_edit_leaves_no_deleted_row_in_memory(data, lazy):
    # Review finding 2: after a served in-place edit, neither the owner's
    # buffer (the tail past n_samples_after) nor the request keeps a deleted
    # record; with or without a pass, and whoever applies the request.
    X, y = data
    n = len(y)
    clf = _fit(X, y, max_lazy_records="auto" if lazy else 0)
    Xc, yc = X.copy(), y.copy()
    deleted = [3, n - 1, n - 2, 700]
    request = EditRequest(Xc, yc, delete=deleted, in_place=True)
    clf.partial_unlearn(request)
    assert clf.privacy_guarantee_.deletion.without_pass == lazy
    X_new, y_new = request.apply()      # the user guide's loop
    assert request._undo is None
    for i in deleted:
        assert not _holds_row(Xc, X[i])  # the whole buffer, not only the view
    np.testing.assert_array_equal(Xc[n - len(deleted):], 0)
    np.testing.assert_array_equal(yc[n - len(deleted):], 0)
    kept = np.delete(X, deleted, axis=0)
    key = np.c_[X_new, y_new]
    want = np.c_[kept, np.delete(y, deleted)]
    np.testing.assert_array_equal(key[np.lexsort(key.T)], want[np.lexsort(want.T)])


def test_a_user_apply_of_an_in_place_request_keeps_no_copy():
    X, y = _data(30, 3, seed=5)
    Xc, yc = X.copy(), y.copy()
    request = EditRequest(Xc, yc, delete=[2, 29], replace=[4],
                          X_replace=np.ones((1, 3)), y_replace=[1], in_place=True)
    X_new, y_new = request.apply()
    assert request._undo is None
    for i in (2, 4, 29):
        assert not _holds_row(Xc, X[i])
    np.testing.assert_array_equal(Xc[28:], 0)
    assert X_new.shape == (28, 3) and np.shares_memory(X_new, Xc)


@pytest.mark.parametrize("when", ["before", "after"])
def test_ctrl_c_at_the_commit_keeps_model_and_arrays_together(data, monkeypatch,
                                                              when):
    # Review finding 3: an interrupt as an in-place edit is committed leaves
    # the model and the owner's arrays both edited or both as they were.
    import signal
    X, y = data
    n = len(y)
    clf = _fit(X, y, max_lazy_records=0)
    before = pickle.dumps(clf)
    Xc, yc = X.copy(), y.copy()
    request = EditRequest(Xc, yc, delete=[0, 5, n - 1], in_place=True)
    real = EditRequest._commit_in_place

    def commit_with_ctrl_c(self):
        if when == "before":
            raise KeyboardInterrupt
        real(self)
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(EditRequest, "_commit_in_place", commit_with_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        clf.partial_unlearn(request)
    monkeypatch.undo()
    if when == "before":
        assert pickle.dumps(clf) == before
        np.testing.assert_array_equal(Xc, X)
        np.testing.assert_array_equal(yc, y)
        assert request._undo is None and request._result is None
    else:
        assert clf.privacy_guarantee_.n_samples == n - 3
        assert request._undo is None
        for i in (0, 5, n - 1):
            assert not _holds_row(Xc, X[i])


def test_in_place_refuses_replacements_its_dtype_would_change():
    # Review finding 4: written into an int array, 0.5 would become 0 while
    # the copying path keeps 0.5; the rows trained on must not depend on
    # in_place.
    Xi = np.arange(20).reshape(10, 2)
    yi = np.arange(10) % 2
    with pytest.raises(UnlearningError, match="X_replace's values .* X's dtype int"):
        EditRequest(Xi.copy(), yi.copy(), replace=[1], X_replace=[[0.5, 0.7]],
                    y_replace=[1], in_place=True)
    yr = np.arange(10)                   # an integer regression target
    with pytest.raises(UnlearningError, match="y_replace's values"):
        EditRequest(Xi.astype(float), yr, replace=[1], X_replace=[[0.5, 0.7]],
                    y_replace=[2.5], in_place=True)
    # Values the dtype keeps exactly are written as the copy path has them.
    X_new, _ = EditRequest(Xi.copy(), yi.copy(), replace=[1], X_replace=[[7.0, 8.0]],
                           y_replace=[1], in_place=True).apply()
    np.testing.assert_array_equal(X_new[1], [7, 8])


def test_a_model_pickled_before_max_lazy_records_loads_and_serves(data):
    # Review finding 9: a model pickled before the parameter existed (no
    # max_lazy_records in its state or in its frozen fit parameters) loads
    # with "auto" and serves deletions as a new one does.
    X, y = data
    clf = _fit(X, y)
    state = clf.__getstate__()
    state.pop("max_lazy_records")
    state["_fit_params"] = {k: v for k, v in state["_fit_params"].items()
                            if k != "max_lazy_records"}
    old = object.__new__(type(clf))
    old.__setstate__(state)
    old = pickle.loads(pickle.dumps(old))
    assert old.max_lazy_records == "auto"
    new = pickle.loads(pickle.dumps(clf))
    for model in (old, new):
        model.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert old.privacy_guarantee_.deletion == new.privacy_guarantee_.deletion
    np.testing.assert_array_equal(old.coef_, new.coef_)


def test_the_one_percent_cap_through_the_estimator():
    # On a small database the noise would let a sizeable share of the rows go
    # without a pass (12.5'); the estimator stops at 1 % of the rows.
    X, y = _data(300, 5, seed=2)
    clf = _fit(X, y, batch_size=None)
    assert clf._plan.lazy_records == 3
    pending = []
    for k in range(8):
        m = len(y) - k
        clf.partial_unlearn(EditRequest(X[:m], y[:m], delete=[m - 1]))
        cert = clf.privacy_guarantee_.deletion
        pending.append(cert.n_pending if cert.without_pass else 0)
    assert pending == [1, 2, 3, 0, 1, 2, 3, 0]


def test_output_perturbation_edits_in_place_all_or_nothing(data, monkeypatch):
    # The same contract for the refitting mechanism (_atomic_edit): a failed
    # refit puts the rows back with the model; a served one zeroes the tail.
    from skforget import OutputPerturbationClassifier

    X, y = data
    n = len(y)
    clf = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(X, y)
    before = pickle.dumps(clf)
    Xc, yc = X.copy(), y.copy()
    request = EditRequest(Xc, yc, delete=[1, n - 1], in_place=True)

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    with monkeypatch.context() as patch:
        patch.setattr(OutputPerturbationClassifier, "_release", boom)
        with pytest.raises(RuntimeError, match="boom"):
            clf.partial_unlearn(request)
    assert pickle.dumps(clf) == before
    np.testing.assert_array_equal(Xc, X)
    np.testing.assert_array_equal(yc, y)
    clf.partial_unlearn(request)
    assert request._undo is None
    np.testing.assert_array_equal(Xc[n - 2:], 0)
    assert not _holds_row(Xc, X[1]) and not _holds_row(Xc, X[n - 1])


def test_a_request_may_ask_for_the_models_own_target_by_value():
    """Section 12.12: with class statistics the plan caps its deletion target
    at noisy GD's share (0.944 of 1); a request naming the model's own target
    (1.0, what its guarantee prints) was refused as "stronger targets only"
    (an audit's finding). It is the default; anything above stays refused."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4)) / 2
    y = (X[:, 0] + 0.5 * rng.normal(size=3000) > 0.8).astype(int)
    clf = NoisyGDClassifier(classes=[0, 1], deletion_epsilon=1.0,
                            random_state=0).fit(X, y)
    plan, g = clf._plan, clf.privacy_guarantee_
    assert g.rho_counts > 0 and plan.deletion_epsilon < 1.0 == g.target_deletion_epsilon
    for n_deleted in (1, 40):
        asked = acc.plan_unlearning(plan, g, n_samples=3000 - n_deleted,
                                    n_deleted=n_deleted, deletion_epsilon=1.0)
        default = acc.plan_unlearning(plan, g, n_samples=3000 - n_deleted,
                                      n_deleted=n_deleted)
        assert asked == default
    with pytest.raises(ValueError, match="only a stronger target"):
        acc.plan_unlearning(plan, g, n_samples=2999, n_deleted=1,
                            deletion_epsilon=1.01)
