"""Private class prevalence: noisy class statistics and the intercept.

privacy-accounting.md, Section 18 (18.1-18.3, 18.6, 18.10, 18.12): the budget
split against closed forms and dp_accounting, the counts' law and their own
noise stream, a same-noise coupling test of the deletion argument (18.3 (ii)),
the decisions they fix, the whole-ball constant-classifier check and the
refusals. The release of the default error threshold itself (the class
moments of 18.12) is tested in ``test_score_moments.py``; the offset of 18.3
survives for models pickled before it.
"""

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.metrics import balanced_accuracy_score

from skforget import EditRequest, NoisyGDClassifier, OutputPerturbationClassifier
from skforget import accounting as acc
from skforget._tasks import AUTO_PREVALENCE_SHARE
from skforget._validation import segment_rng

dp_rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
dp_event = pytest.importorskip("dp_accounting.dp_event")


def _rare_table(n=4000, d=8, p=0.04, seed=0):
    """A table whose positives are rare but separable: the score ranks well."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < p).astype(int)
    X = rng.normal(size=(n, d))
    X[:, 0] += 2.5 * y
    X /= np.linalg.norm(X, axis=1).max()
    return X, y


# --- the accounting ---------------------------------------------------------------
def test_budget_closed_forms():
    # The numbers printed in Section 18.2.
    b = acc.prevalence_budget(epsilon=1.0, delta=1e-5, share=0.05)
    assert b.rho == pytest.approx(0.0305565951976365, rel=1e-12)
    assert b.rho_counts == pytest.approx(0.05 * b.rho, rel=1e-15)
    assert b.rho_training + b.rho_counts == pytest.approx(b.rho, rel=1e-15)
    assert b.noise_scale == pytest.approx(math.sqrt(2) / math.sqrt(2 * b.rho_counts))
    assert round(b.noise_scale, 2) == 25.58
    assert round(b.epsilon_training, 5) == 0.97248
    zero = acc.prevalence_budget(epsilon=1.0, delta=1e-5, share=0.05,
                                 relation="zero_out")
    assert round(zero.noise_scale, 2) == 18.09
    group = acc.prevalence_budget(epsilon=1.0, delta=1e-5, share=0.05, group_size=3)
    assert group.noise_scale == pytest.approx(3 * b.noise_scale)


@pytest.mark.parametrize("relation,n_replaced,factor", [
    ("replace", 0, 0.5), ("replace", 2, 1.0), ("zero_out", 0, 1.0),
    ("zero_out", 1, 2.0)])
def test_count_deletion_factor(relation, n_replaced, factor):
    # Lemma 18.1's deletion sensitivities over the DP ones, squared.
    assert acc.count_deletion_factor(relation=relation,
                                     n_replaced=n_replaced) == factor


@pytest.mark.parametrize("share", [0.01, 0.05, 0.3])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 8.0])
def test_split_matches_dp_accounting(share, epsilon):
    """Counts (a Gaussian mechanism) then noisy GD at its rho: dp_accounting's
    Renyi accountant, composing the two, lands on the target."""
    delta = 1e-5
    b = acc.prevalence_budget(epsilon=epsilon, delta=delta, share=share)
    orders = list(1.0 + np.geomspace(1e-3, 3e3, 4000))
    ledger = dp_rdp.RdpAccountant(orders=orders)
    # noise multiplier = sigma / sensitivity
    ledger.compose(dp_event.GaussianDpEvent(b.noise_scale / math.sqrt(2.0)))
    ledger.compose(dp_event.GaussianDpEvent(1.0 / math.sqrt(2.0 * b.rho_training)))
    assert ledger.get_epsilon(delta) == pytest.approx(epsilon, rel=1e-4)


@given(share=st.floats(0.001, 0.9), epsilon=st.floats(0.05, 20.0),
       g=st.integers(1, 5), relation=st.sampled_from(["replace", "zero_out"]))
@settings(max_examples=60, deadline=None)
def test_split_never_exceeds_the_target(share, epsilon, g, relation):
    b = acc.prevalence_budget(epsilon=epsilon, delta=1e-6, share=share,
                              relation=relation, group_size=g)
    total = acc.rho_to_epsilon(rho=b.rho_training + b.rho_counts, delta=1e-6)
    assert total <= epsilon * (1 + 1e-9)
    # The noise gives exactly the counts' share (eq. 18.1).
    sens = acc.count_sensitivity(relation=relation, group_size=g)
    assert sens**2 / (2 * b.noise_scale**2) == pytest.approx(b.rho_counts, rel=1e-12)


def test_offset_and_its_change_bound():
    assert acc.prevalence_offset([900.0, 100.0]) == pytest.approx(math.log(9))
    # The floor m_0 = 1: a negative noisy count reads as one record.
    assert acc.prevalence_offset([-5.0, 100.0]) == pytest.approx(-math.log(100))
    with pytest.raises(ValueError, match="binary"):
        acc.prevalence_offset([1.0, 2.0, 3.0])
    assert acc.offset_change_bound([10.0, 20.0], 0) == 0.0


@given(n0=st.floats(-100, 5000), n1=st.floats(-100, 5000), k=st.integers(0, 40),
       d0=st.floats(-1, 1), d1=st.floats(-1, 1))
@settings(max_examples=400, deadline=None)
def test_offset_change_bound_holds(n0, n1, k, d0, d1):
    counts = np.array([n0, n1])
    moved = counts + k * np.array([d0, d1])
    change = abs(acc.prevalence_offset(moved) - acc.prevalence_offset(counts))
    assert change <= acc.offset_change_bound(counts, k) * (1 + 1e-12) + 1e-12


# --- the estimator ------------------------------------------------------------------
def test_guarantee_composes_counts_and_training():
    X, y = _rare_table()
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    g = clf.privacy_guarantee_
    # The estimator's own conversion (exact Gaussian, Section 21): GDP
    # composes as rho adds, so the split is read with it (18.10).
    assert g.conversion == "gaussian"
    b = acc.prevalence_budget(epsilon=1.0, delta=g.delta, share=AUTO_PREVALENCE_SHARE,
                              method="gaussian", statistics="class_moments")
    assert g.rho_counts == pytest.approx(b.rho_counts)
    assert g.count_noise == pytest.approx(b.noise_scale)
    assert g.target_epsilon == 1.0
    assert g.epsilon <= 1.0 + 1e-9
    off = NoisyGDClassifier(classes=[0, 1], prevalence_share=0.0,
                            random_state=0).fit(X, y)
    # The training part is planned for what the counts leave.
    assert g.rho - g.rho_counts <= b.rho_training * (1 + 1e-9)
    assert off.privacy_guarantee_.rho_counts == 0.0
    assert not hasattr(off, "noisy_class_count_")
    assert "class counts" in str(g) and "class counts" not in str(
        off.privacy_guarantee_)


def test_counts_come_from_their_own_stream():
    X, y = _rare_table()
    clf = NoisyGDClassifier(classes=[0, 1], random_state=7).fit(X, y)
    sigma = clf.privacy_guarantee_.count_noise
    noise = segment_rng(7, 0, stream=1).normal(0.0, sigma, size=2)
    exact = np.bincount(y, minlength=2)
    np.testing.assert_allclose(clf.noisy_class_count_, exact + noise, rtol=1e-15)
    # The steps' noise does not depend on the statistics' stream: the
    # coefficients are those of the same plan run without them.
    no_counts = NoisyGDClassifier(classes=[0, 1], random_state=7).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, no_counts.coef_)
    # The released intercept is the trained one plus the offset.
    W, b = clf._theta()
    assert clf.intercept_[0] == pytest.approx(
        b[0] * clf._intercept_scaling() + clf.intercept_offset_)


def test_count_noise_has_the_planned_law():
    rng = np.random.default_rng(1)
    draws = np.array([acc.noisy_class_counts([100, 10], noise_scale=25.0, rng=rng)
                      for _ in range(4000)])
    assert abs(draws[:, 0].mean() - 100) < 4 * 25 / math.sqrt(4000)
    assert draws.std(axis=0) == pytest.approx([25.0, 25.0], rel=0.06)
    assert abs(np.corrcoef(draws.T)[0, 1]) < 0.06


@pytest.mark.parametrize("retrain", [False, True])
def test_deletion_coupling_counts_equal_reference(retrain):
    """18.3 (ii) with shared noise: the real run (record present at fit, then
    deleted) and the reference run (a different record in its slot from the
    start, then deleted) release identical counts after the edit, although
    their fits' counts differed: nothing of the fit's counts survives."""
    X, y = _rare_table(n=1200)
    i = int(np.flatnonzero(y == 1)[0])
    X_ref, y_ref = X.copy(), y.copy()
    X_ref[i], y_ref[i] = X[0], 0  # the slot holds another record in the reference
    # An edit that passes over the data (a deletion served without one keeps
    # the fit's counts: test_a_deletion_without_a_pass_keeps_the_counts).
    kw = dict(classes=[0, 1], random_state=3, max_edit_size=1 if retrain else 10,
              prevalence_share=0.05, max_lazy_records=0)
    real = NoisyGDClassifier(**kw).fit(X, y)
    ref = NoisyGDClassifier(**kw).fit(X_ref, y_ref)
    assert not np.allclose(real.noisy_class_count_, ref.noisy_class_count_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        real.partial_unlearn(EditRequest(X, y, delete=[i]))
        ref.partial_unlearn(EditRequest(X_ref, y_ref, delete=[i]))
    np.testing.assert_array_equal(real.noisy_class_count_, ref.noisy_class_count_)
    assert not real.privacy_guarantee_.deletion.without_pass
    # The deletion certificate is noisy GD's alone (Theorems 18.4 (ii), 18.18);
    # the adaptive one adds the fit's release at the deletion factor 3/5.
    cert = real.privacy_guarantee_.deletion
    g = real.privacy_guarantee_
    without = NoisyGDClassifier(**{**kw, "prevalence_share": 0.0})
    assert cert.releases_seen == 1
    assert cert.rho_adaptive >= cert.rho_deletion + 0.6 * g.rho_counts * (1 - 1e-12)
    assert without.get_params()["prevalence_share"] == 0.0


def test_adaptive_figure_adds_one_count_term_per_release():
    X, y = _rare_table(n=3000)
    # Passes over the data (a certificate-only edit is tested below).
    kw = dict(classes=[0, 1], random_state=0, max_lazy_records=0)
    clf = NoisyGDClassifier(**kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for _ in range(3):
            clf.partial_unlearn(EditRequest(X, y, delete=[0]))
            X, y = X[1:], y[1:]
    cert = clf.privacy_guarantee_.deletion
    g = clf.privacy_guarantee_
    # Recompute the same certificate without counts: the difference is one
    # statistics term per earlier release, at the deletion factor 3/5.
    plan = clf._plan
    previous = acc.PrivacyGuarantee(**{
        **{f: getattr(g, f) for f in acc.PrivacyGuarantee.__dataclass_fields__},
        "edits": g.edits[:-1], "rho_counts": 0.0})
    bare = acc.guarantee_after_edit(
        plan, previous, steps=cert.steps, n_samples=cert.n_samples,
        n_deleted=1, n_replaced=0, n_inserted=0, seeded=True,
        retrained=cert.retrained, data_weight=cert.data_weight,
        n_batches=cert.n_batches).deletion
    assert cert.releases_seen == 3
    assert cert.rho_adaptive - bare.rho_adaptive == pytest.approx(
        3 * 0.6 * g.rho_counts, rel=1e-9)
    assert cert.rho_deletion == bare.rho_deletion


def test_a_deletion_without_a_pass_keeps_the_counts():
    """Theorem 12.12: a deletion served without a pass re-releases the fit's
    pair, coefficients and statistics bit for bit, spends nothing on the
    ledger, and its certificate charges the kept statistics at the deletion
    factor (3/5 for the class moments) on top of Theorem 12.9's figure; the
    adaptive figure counts them once per release that drew them."""
    from skforget import PrivacyLedger

    X, y = _rare_table(n=3000)
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=4, delta=1e-5,
                            ledger=ledger).fit(X, y)
    fitted = {name: np.copy(getattr(clf, name)) for name in (
        "coef_", "intercept_", "_trained_intercept", "noisy_class_count_",
        "noisy_class_sum_", "noisy_score_square_")}
    entries = len(ledger.entries)
    before = clf.privacy_guarantee_
    i = int(np.flatnonzero(y == 1)[0])
    clf.partial_unlearn(EditRequest(X, y, delete=[i]))
    clf.partial_unlearn(EditRequest(np.delete(X, i, 0), np.delete(y, i),
                                    delete=[0, 1]))
    g = clf.privacy_guarantee_
    assert g.deletion.without_pass and clf.n_unlearn_iter_ == 0
    assert not g.deletion.statistics_drawn
    for name, value in fitted.items():
        np.testing.assert_array_equal(getattr(clf, name), value)
    assert len(ledger.entries) == entries  # an identity re-release spends nothing
    # The certificate: Theorem 12.9's figure of the coefficients alone plus
    # the kept statistics' at the deletion sensitivity (eq. 12.6).
    alone = acc.PrivacyGuarantee(**{
        **{f: getattr(before, f) for f in acc.PrivacyGuarantee.__dataclass_fields__},
        "rho_counts": 0.0})
    theta = acc.lazy_deletion_rho(clf._plan, alone)
    assert theta > 0
    assert g.deletion.rho_deletion == pytest.approx(theta + 0.6 * g.rho_counts,
                                                    rel=1e-12)
    # The three records awaiting a pass, as one unit: 3**2 times the figure.
    assert g.deletion.n_pending == 3
    assert g.deletion.rho_pending_group == pytest.approx(
        9 * g.deletion.rho_deletion, rel=1e-12)
    # Adaptive: the fit's release (coefficients and statistics) counted once
    # more, not the first certificate-only edit's identical re-release.
    assert g.deletion.rho_adaptive == pytest.approx(
        g.deletion.rho_deletion + theta + 0.6 * g.rho_counts, rel=1e-9)
    # The printed guarantee cites the theorem that covers the kept statistics;
    # a model without statistics cites Theorem 12.9 alone.
    assert "Theorems 12.9 and 12.12" in str(g)
    plain = NoisyGDClassifier(classes=[0, 1], random_state=4, delta=1e-5,
                              prevalence_share=0.0).fit(X, y)
    plain.partial_unlearn(EditRequest(X, y, delete=[i]))
    assert plain.privacy_guarantee_.deletion.without_pass
    assert "Theorem 12.9)" in str(plain.privacy_guarantee_)
    assert "12.12" not in str(plain.privacy_guarantee_)


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_zero_out_deletion_without_a_pass_meets_the_whole_target(class_weight):
    """Theorem 12.12, "Planning": under zero_out the figure (12.6) of a
    deletion served without a pass is the DP figure itself (deletion factor
    1 for the coefficients and for every kind of statistics), which meets the
    default target epsilon_dd = epsilon of the whole release exactly, not the
    plan's capped share (every such deletion would otherwise retrain); a
    request for a stronger target gets a pass."""
    X, y = _rare_table(n=4000, p=0.2)
    clf = NoisyGDClassifier(classes=[0, 1], relation="zero_out", random_state=0,
                            class_weight=class_weight).fit(X, y)
    g = clf.privacy_guarantee_
    assert g.rho_counts > 0 and g.target_deletion_epsilon == 1.0
    assert clf._plan.deletion_epsilon < 1.0  # the plan's share
    clf.partial_unlearn(EditRequest(X, y, delete=[0]))
    cert = clf.privacy_guarantee_.deletion
    assert cert.without_pass
    assert cert.rho_deletion == pytest.approx(g.rho, rel=1e-9)
    assert cert.epsilon_deletion <= 1.0 + 1e-9
    clf.partial_unlearn(EditRequest(X[1:], y[1:], delete=[0]),
                        deletion_epsilon=0.9)
    assert not clf.privacy_guarantee_.deletion.without_pass


def test_the_default_threshold_fixes_the_one_class_model():
    from sklearn.linear_model import LogisticRegression

    X, y = _rare_table(n=6000)
    Xt, yt = _rare_table(n=6000, seed=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = NoisyGDClassifier(classes=[0, 1], prevalence_share=0.0,
                                random_state=0).fit(X, y)
    # (Nearly) one class on the data: the threshold is lost, not the direction.
    assert balanced_accuracy_score(yt, raw.predict(Xt)) < 0.51
    assert np.mean(raw.predict(Xt) == 0) > 0.998
    # One class on the data, but not on the whole ball: the coefficients alone
    # cannot show it, so no warning says so (the gap the default closes).
    assert not any("for every row" in str(w.message) for w in caught)
    # Shorter, its coefficients are so small that it gives class 0 on the whole
    # ball, which they show alone (Section 18.6): the fit says so.
    with pytest.warns(UserWarning, match="predicts class 0 for every row"):
        NoisyGDClassifier(classes=[0, 1], prevalence_share=0.0, max_iter=3,
                          random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no constant-model warning
        clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    lr = LogisticRegression().fit(X, y)
    assert balanced_accuracy_score(yt, clf.predict(Xt)) >= \
        balanced_accuracy_score(yt, lr.predict(Xt)) - 0.02
    assert clf.score(Xt, yt) >= lr.score(Xt, yt) - 0.01
    # "balanced" decides at the class-mean midpoint instead (Section 18.11).
    balanced = NoisyGDClassifier(classes=[0, 1], class_weight="balanced",
                                 random_state=0).fit(X, y)
    assert hasattr(balanced, "noisy_class_sum_")
    assert balanced_accuracy_score(yt, balanced.predict(Xt)) > 0.75
    # Public weights set the decision themselves: no counts are spent.
    public = NoisyGDClassifier(classes=[0, 1], class_weight={1: 10.0},
                               random_state=0).fit(X, y)
    assert not hasattr(public, "noisy_class_count_")
    assert public.privacy_guarantee_.rho_counts == 0.0


def test_whole_ball_criterion_is_exact():
    X, y = _rare_table(n=2000, p=0.3)
    clf = NoisyGDClassifier(classes=[0, 1], prevalence_share=0.0,
                            random_state=0).fit(X, y)
    w = np.linalg.norm(clf.coef_)
    for b, warns in [(1.01 * w, True), (0.99 * w, False), (-0.99 * w, False),
                     (-w, True)]:
        clf.intercept_ = np.array([b])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            clf._warn_if_constant()
        assert any("for every row" in str(r.message) for r in rec) == warns, b
        if warns:  # and the predictions agree on the ball's extreme points
            u = clf.coef_[0] / w
            preds = clf.predict(np.vstack([u, -u]))
            assert preds[0] == preds[1]


def test_multiclass_uses_no_counts_unless_balanced():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    X /= np.linalg.norm(X, axis=1).max()
    y = rng.integers(0, 3, 600)
    clf = NoisyGDClassifier(classes=[0, 1, 2], random_state=0).fit(X, y)
    assert clf.privacy_guarantee_.rho_counts == 0.0
    assert not hasattr(clf, "noisy_class_count_")
    # Output perturbation releases no counts: a multiclass "balanced" is
    # refused before anything, naming what to do (Section 18.14).
    est = OutputPerturbationClassifier(classes=[0, 1, 2], class_weight="balanced")
    with pytest.raises(ValueError, match=r"NoisyGDClassifier.*1 / \(n_classes"):
        est.fit(X, y)
    assert not hasattr(est, "coef_") and not hasattr(est, "classes_")
    fitted = clone(clf).fit(X, y)
    before = dict(fitted.__dict__)
    fitted.set_params(class_weight="balanced", prevalence_share=0.0)
    with pytest.raises(ValueError, match="prevalence_share > 0"):
        fitted.fit(X, y)
    assert fitted.__dict__.keys() == before.keys()
    np.testing.assert_array_equal(fitted.coef_, before["coef_"])


def test_auto_spends_no_counts_with_an_explicit_C():
    """Section 18.11: the offset assumes the calibrated intercept of the
    default penalty; with an explicit C, "auto" keeps the raw threshold (and
    all of the budget for training), an explicit share still spends."""
    X, y = _rare_table(n=6000, p=0.05)
    kw = dict(classes=[0, 1], random_state=0, C=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        auto = NoisyGDClassifier(**kw).fit(X, y)
        forced = NoisyGDClassifier(**kw, prevalence_share=0.05).fit(X, y)
    assert not hasattr(auto, "noisy_class_count_")
    assert auto.privacy_guarantee_.rho_counts == 0.0
    assert hasattr(forced, "noisy_class_count_")
    default = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    assert hasattr(default, "noisy_class_count_")


def test_auto_spends_counts_only_where_their_noise_is_small():
    from skforget._tasks import AUTO_MIN_ROWS_PER_NOISE

    for n in (300, 700, 760, 3000):
        X, y = _rare_table(n=n, p=0.3)
        clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
        sigma = acc.prevalence_budget(epsilon=1.0, delta=1e-5,
                                      share=AUTO_PREVALENCE_SHARE, method="gaussian",
                                      statistics="class_moments").noise_scale
        spends = n >= AUTO_MIN_ROWS_PER_NOISE * sigma
        assert hasattr(clf, "noisy_class_count_") == spends, n
        assert (clf.privacy_guarantee_.rho_counts > 0) == spends
        # Asked for, balance is always served.
        bal = NoisyGDClassifier(classes=[0, 1], class_weight="balanced",
                                random_state=0).fit(X, y)
        assert bal.privacy_guarantee_.rho_counts > 0
        assert bal.privacy_guarantee_.epsilon <= 1.0 + 1e-9


def test_balanced_needs_a_share():
    X, y = _rare_table(n=800)
    est = NoisyGDClassifier(classes=[0, 1], class_weight="balanced",
                            prevalence_share=0.0)
    with pytest.raises(ValueError, match="prevalence_share > 0"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    with pytest.raises(ValueError, match="prevalence_share"):
        NoisyGDClassifier(prevalence_share=1.0).fit(X, y)


def test_share_is_frozen_and_pickles():
    X, y = _rare_table(n=1500)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    sigma = clf.privacy_guarantee_.count_noise
    clf.set_params(prevalence_share=0.5)
    with pytest.warns(UserWarning, match="prevalence_share"):
        clf.partial_unlearn(EditRequest(X, y, delete=[3]))
    assert clf.privacy_guarantee_.count_noise == sigma
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(back.noisy_class_count_, clf.noisy_class_count_)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("C", [1e-3, "auto"])
def test_continuation_never_reads_the_fits_counts(monkeypatch, seed, C):
    """G4 of 18.9 with shared noise: two models whose fits differ ONLY in the
    count noise (as a real and a reference run's fit counts differ) are
    bitwise equal after a *continuation* edit (steps and edit counts share
    their noise). Fails if any step reads the offset or the counts, even
    through a rounding."""
    from skforget._tasks import _PrivateClassifierMixin

    X, y = _rare_table(n=3000, p=0.1, seed=seed)
    # max_lazy_records=0: the edit passes over the data (a deletion served
    # without a pass would run no step and test nothing here).
    kw = dict(classes=[0, 1], random_state=seed, max_iter=300, C=C,
              max_lazy_records=0, prevalence_share=0.05)
    a = NoisyGDClassifier(**kw).fit(X, y)
    orig = _PrivateClassifierMixin._redraw_counts

    def other_fit_counts(self, exact_counts, noise_scale, *, segment, **kw):
        orig(self, exact_counts, noise_scale, segment=segment, **kw)
        if not segment:  # other noise at fit, as a reference run's
            rng = np.random.default_rng(10_000 + seed)
            self.noisy_class_count_ = self.noisy_class_count_ + rng.normal(
                0.0, noise_scale, 2)
            self.noisy_score_square_ += rng.normal(0.0, noise_scale)

    monkeypatch.setattr(_PrivateClassifierMixin, "_redraw_counts", other_fit_counts)
    b = NoisyGDClassifier(**kw).fit(X, y)
    monkeypatch.setattr(_PrivateClassifierMixin, "_redraw_counts", orig)
    assert a.intercept_offset_ != b.intercept_offset_
    assert a.intercept_[0] != b.intercept_[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for m in (a, b):
            m.partial_unlearn(EditRequest(X, y, delete=[0]))
    cert = a.privacy_guarantee_.deletion
    assert cert.steps > 0 and not cert.retrained  # the path under test
    np.testing.assert_array_equal(a.noisy_class_count_, b.noisy_class_count_)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.slow
def test_edit_counts_are_fresh_and_have_the_planned_law():
    """Empirical check of the count release at fit and after an edit:
    residuals N(0, sigma_n^2), independent across releases (a reused or
    'updated' fit noise would give correlation 1)."""
    from scipy import stats

    X, y = _rare_table(n=1000, p=0.2)
    res_fit, res_edit = [], []
    for seed in range(300):
        # An edit that passes over the data draws fresh statistics (one
        # served without a pass keeps them, Theorem 12.12).
        clf = NoisyGDClassifier(classes=[0, 1], random_state=seed, max_iter=2,
                                class_weight="balanced", max_lazy_records=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.fit(X, y)
            sigma = clf.privacy_guarantee_.count_noise
            res_fit.append((clf.noisy_class_count_ - np.bincount(y)) / sigma)
            clf.partial_unlearn(EditRequest(X, y, delete=[0, 1, 2]))
        res_edit.append((clf.noisy_class_count_ - np.bincount(y[3:])) / sigma)
    res_fit, res_edit = np.array(res_fit), np.array(res_edit)
    for r in (res_fit, res_edit):
        assert stats.kstest(r.ravel(), "norm").pvalue > 1e-3
    for k in range(2):
        assert abs(np.corrcoef(res_fit[:, k], res_edit[:, k])[0, 1]) < 0.25


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_margin_bounds_contain_the_same_noise_counterfactual(class_weight):
    """certificates.md 2.1 / 9.11 / 9.12: decision_function_bounds(k=1,
    remove) contains the margin of the SAME run (same plan, same N, same step
    and statistics noise) on the database without any one record, with the
    error threshold (None) and with the class-mean midpoint ("balanced")."""
    import copy

    from skforget._rows import class_sums, project_rows, score_squares
    from skforget._solver import initial_draw

    X, y = _rare_table(n=400, p=0.2)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            clip_norm=0.5, class_weight=class_weight,
                            prevalence_share=0.05).fit(X, y)
    query = X[:60]
    lo, hi = clf.decision_function_bounds(query, k=1)
    assert clf.certify(query, k=1).any()
    plan = clf._plan
    for i in list(np.flatnonzero(y == 1)[:3]) + [0, 1, 2]:
        Xi, yi = np.delete(X, i, axis=0), np.delete(y, i)
        cf = copy.deepcopy(clf)
        design = cf._design(Xi, yi.astype(np.float64), plan.loss, where="X")
        rng = segment_rng(0, 0)
        W0, b0 = initial_draw(rng, clf.coef_.shape, fit_intercept=True,
                              init_variance=plan.init_variance)
        W, b, _ = cf._run_segment(design, W0, b0, plan=plan, steps=plan.fit_steps,
                                  segment=0, rng=rng)
        rows, scale, _ = project_rows(Xi, 1.0)
        cf._redraw_counts(lambda: np.bincount(yi, minlength=2).astype(float),
                          clf.privacy_guarantee_.count_noise, segment=0,
                          exact_moments=lambda u: (class_sums(rows, scale, yi, 2),
                                                   score_squares(rows, scale, u)),
                          coef=W, statistics=clf.privacy_guarantee_.class_statistics)
        cf._set_coefficients(W, b)
        m = cf.decision_function(query)
        assert np.all(lo <= m) and np.all(m <= hi), i
        # The statistics moved within the bound the widening is made of.
        if class_weight is None:
            r = float(np.linalg.norm(cf.coef_ - clf.coef_))
            assert abs(cf._threshold() - clf._threshold()) <= \
                clf._threshold_change(1, r)[0] * (1 + 1e-9)
        else:
            move = np.linalg.norm(cf._midpoint() - clf._midpoint())
            assert 0 < move <= clf._midpoint_change(1) + 1e-12


@pytest.mark.parametrize("class_weight, p, epsilon, share", [
    (None, 0.25, 1.0, 0.05),
    # A rare class (12 records) whose statistics move far when 4 of them go:
    # evaluated at k=0 instead of k + 4, this bound misses 4 of the margins.
    ("balanced", 0.02, 8.0, 0.5)])
def test_forgetting_bounds_cover_the_statistics_a_deletion_kept(class_weight, p,
                                                                 epsilon, share):
    """certificates.md 9.11-9.12 with Theorem 12.12: after deletions served
    without a pass the model keeps the fit's statistics, drawn on rows that
    included the deleted ones, so the forgetting certificate (k=0, rows
    deleted by earlier edits included) must contain the same-noise run that
    never saw them, statistics and all; the statistics' change bound is
    evaluated that many records away."""
    from _counterfactual import same_noise_counterfactual

    X, y = _rare_table(n=600, p=p)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            clip_norm=0.5, class_weight=class_weight,
                            epsilon=epsilon, prevalence_share=share).fit(X, y)
    drop = sorted(np.flatnonzero(y == 1)[:4].tolist(), reverse=True)
    for j, row in enumerate(drop):
        clf.partial_unlearn(EditRequest(np.delete(X, drop[:j], axis=0),
                                        np.delete(y, drop[:j]), delete=[row]))
        assert clf.privacy_guarantee_.deletion.without_pass
    assert acc.statistics_age(clf.privacy_guarantee_) == 4
    query = X[:300]
    lo, hi = clf.decision_function_bounds(query, k=0)
    m = same_noise_counterfactual(clf, X, y, drop).decision_function(query)
    assert np.all(lo <= m) and np.all(m <= hi)
    # Without the rows deleted by earlier edits the bound is that of k=0:
    # the released margin itself (the counterfactual deleted them too).
    lo0, hi0 = clf.decision_function_bounds(query, k=0, include_forgotten=False)
    np.testing.assert_allclose(lo0, clf.decision_function(query), rtol=1e-6,
                               atol=1e-9)


def test_no_intercept_no_counts():
    X, y = _rare_table(n=3000)
    clf = NoisyGDClassifier(classes=[0, 1], fit_intercept=False,
                            random_state=0).fit(X, y)
    assert clf.privacy_guarantee_.rho_counts == 0.0
    assert not hasattr(clf, "noisy_class_count_") and clf.intercept_[0] == 0.0
    est = NoisyGDClassifier(classes=[0, 1], fit_intercept=False,
                            class_weight="balanced")
    with pytest.raises(ValueError, match="fit_intercept=True"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


def test_plan_reports_the_whole_target():
    X, y = _rare_table(n=3000)
    p = NoisyGDClassifier(classes=[0, 1]).plan(X, y)
    assert p.epsilon == 1.0
    with pytest.raises(ValueError, match=r"deletion_epsilon=2.0 must be <= epsilon=1"):
        NoisyGDClassifier(classes=[0, 1], deletion_epsilon=2.0).fit(X, y)


def test_public_class_weights_use_the_class_mean_rule():
    """Section 18.5 (b2) with C="auto": lambda_auto times mean/max of the
    class weights; an explicit C keeps scikit-learn's meaning (4.4)."""
    X, y = _rare_table(n=3000)
    cw = {0: 1.0, 1: 9.0}
    plain = NoisyGDClassifier(classes=[0, 1], prevalence_share=0.0,
                              random_state=0).fit(X, y)
    weighted = NoisyGDClassifier(classes=[0, 1], class_weight=cw,
                                 random_state=0).fit(X, y)
    assert weighted._plan.lam == pytest.approx(plain._plan.lam * 5.0 / 9.0,
                                               rel=1e-12)
    assert weighted.privacy_guarantee_.epsilon <= 1.0 + 1e-9
    explicit = NoisyGDClassifier(classes=[0, 1], class_weight=cw, C=2.0,
                                 random_state=0).fit(X, y)
    assert explicit._plan.lam == pytest.approx(1.0 / (2.0 * 3000) / 9.0, rel=1e-12)


def test_output_perturbation_releases_counts_at_every_refit():
    from skforget import OutputPerturbationClassifier

    X, y = _rare_table(n=3000)
    clf = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(X, y)
    g = clf.privacy_guarantee_
    # The estimator's own conversion (exact Gaussian, Section 21): GDP
    # composes as rho adds, so the split is read with it (18.10).
    assert g.conversion == "gaussian"
    b = acc.prevalence_budget(epsilon=1.0, delta=g.delta, share=AUTO_PREVALENCE_SHARE,
                              method="gaussian", statistics="class_moments")
    assert g.rho_counts == pytest.approx(b.rho_counts)
    assert g.epsilon <= 1.0 + 1e-9 and g.target_epsilon == 1.0
    noise = segment_rng(0, 0, stream=1).normal(0.0, b.noise_scale, size=2)
    np.testing.assert_allclose(clf.noisy_class_count_,
                               np.bincount(y, minlength=2) + noise, rtol=1e-15)
    raw = OutputPerturbationClassifier(classes=[0, 1], prevalence_share=0.0,
                                       random_state=0).fit(X, y)
    assert balanced_accuracy_score(y, clf.predict(X)) > \
        balanced_accuracy_score(y, raw.predict(X)) + 0.1
    # A refit redraws the counts on the edited database with the next stream.
    clf.partial_unlearn(EditRequest(X, y, delete=[0, 1]))
    noise = segment_rng(0, 1, stream=1).normal(0.0, b.noise_scale, size=2)
    np.testing.assert_allclose(
        clf.noisy_class_count_, np.bincount(y[2:], minlength=2) + noise, rtol=1e-15)
    cert = clf.privacy_guarantee_.deletion
    bare = raw.partial_unlearn(EditRequest(X, y, delete=[0, 1])) \
        .privacy_guarantee_.deletion
    assert cert.rho_deletion == 0.0
    # One term for the one earlier release, at the deletion factor 3/5;
    # the noisy-GD-free part differs only by the plan's smaller target.
    assert cert.rho_adaptive > 0.6 * g.rho_counts
    assert bare.rho_adaptive > 0


def _statistics_part(clf, cert):
    """The class statistics' share of an output-perturbation refit's adaptive
    figure: the whole figure less the coefficients' terms (Theorem 15.4)."""
    from skforget.accounting._calibration import deletion_factor
    from skforget.accounting._noisy_gd import rho_adaptive
    from skforget.accounting._output_perturbation import rho_adaptive_release

    f = deletion_factor(plan_relation="replace", n_replaced=0)
    terms = [rho_adaptive_release(
        sensitivity=e.sensitivity, deletion_sensitivity=e.sensitivity * math.sqrt(f),
        normaliser=e.normaliser, lam=e.lam, sigma=e.sigma, tol=e.tol)
        for e in clf._release_plans[:-1]]
    return cert.rho_adaptive - rho_adaptive(rho_deletion=0.0, rho_releases=terms)


def test_output_perturbation_adaptive_keeps_statistics_of_larger_databases():
    # "auto" spends on class moments only from about 528 rows at epsilon=1: a
    # fit on 535 rows releases them, a refit on 525 does not. A later
    # deletion still owes the fit's moments their term (eq. 18.3): they were
    # computed on a database that held the deleted record (an audit's
    # finding: the two latest releases had none, and the term was dropped).
    from skforget import OutputPerturbationClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(535, 3)) / 3
    y = (X[:, 0] + 0.3 * rng.normal(size=535) > 0.4).astype(int)
    clf = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(X, y)
    rho_m = clf.privacy_guarantee_.rho_counts
    assert rho_m > 0
    first = EditRequest(X, y, delete=list(range(10)))
    clf.partial_unlearn(first)
    assert clf.privacy_guarantee_.rho_counts == 0.0
    X1, y1 = first.apply()
    clf.partial_unlearn(EditRequest(X1, y1, delete=[0]))
    owed = rho_m * acc.count_deletion_factor(relation="replace", n_replaced=0,
                                             statistics="class_moments")
    assert _statistics_part(clf, clf.privacy_guarantee_.deletion) == \
        pytest.approx(owed, rel=1e-9)
    # One more deletion: still the fit's term alone (the refits had none).
    X2, y2 = EditRequest(X1, y1, delete=[0]).apply()
    ref = pickle.loads(pickle.dumps(clf))
    ref.partial_unlearn(EditRequest(X2, y2, delete=[0]))
    assert _statistics_part(ref, ref.privacy_guarantee_.deletion) == \
        pytest.approx(owed, rel=1e-9)
    # A model pickled before each release's statistics were kept charges
    # every earlier release the most any release of the model spends, at the
    # largest factor of any kind: never less than the exact record.
    old = pickle.loads(pickle.dumps(clf))
    del old._release_statistics
    old.partial_unlearn(EditRequest(X2, y2, delete=[0]))
    assert _statistics_part(old, old.privacy_guarantee_.deletion) >= 3 * owed


def test_multiclass_balanced_shifts_by_the_released_counts():
    # Section 18.14: the public-weight shift of 18.13 with scikit-learn's
    # n / (K n_c) read from the noisy counts; the solver never reads it, and
    # every edit that passes over the data draws the counts again.
    from skforget import NotCertifiableError
    from skforget._tasks import BALANCED_FLOOR_NOISE, CLASS_SHIFT

    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.where(X[:, 0] > 0.25, 2, np.where(X[:, 1] > 0.3, 1, 0))
    clf = NoisyGDClassifier(classes=[0, 1, 2], class_weight="balanced",
                            max_lazy_records=0, random_state=0).fit(X, y)
    g = clf.privacy_guarantee_
    assert g.rho_counts > 0 and g.class_statistics == "counts"
    assert g.epsilon <= 1.0 + 1e-9
    counts = clf.noisy_class_count_
    floor = max(1.0, BALANCED_FLOOR_NOISE * g.count_noise)
    log_w = -np.log(np.maximum(counts, floor))
    shift = CLASS_SHIFT * (log_w - log_w.mean())
    np.testing.assert_allclose(clf.intercept_ - clf._trained_intercept, shift,
                               atol=1e-12)
    # The rare classes gain: more of their predictions than unshifted.
    trained = np.argmax(X @ clf.coef_.T + clf._trained_intercept, axis=1)
    assert np.mean(clf.predict(X) == 2) > np.mean(trained == 2)
    ovr = NoisyGDClassifier(classes=[0, 1, 2], class_weight="balanced",
                            multi_class="ovr", clip_norm=0.5, batch_size=None,
                            random_state=0).fit(X, y)
    assert len(ovr.noisy_class_count_) == 3
    from skforget.certify import interval_certify

    with pytest.raises(NotCertifiableError, match="18.14"):
        ovr.certify(X[:3], k=1)
    with pytest.raises(NotCertifiableError, match="18.14"):
        interval_certify(ovr, X, y, X[:3], k=1)
    # The paper's recipe calibrates one record: a group is refused, not
    # reported above its target (a reading of session 13).
    with pytest.raises(ValueError, match="single-record recipe"):
        NoisyGDClassifier(classes=[0, 1, 2], recipe="cs23", group_size=2).fit(X, y)
    clf.partial_unlearn(EditRequest(X, y, delete=[0, 1]))
    assert not np.array_equal(clf.noisy_class_count_, counts)   # fresh noise
    assert clf.privacy_guarantee_.epsilon <= 1.0 + 1e-9


def test_multiclass_balanced_warns_when_a_count_is_mostly_noise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.array([0] * 53 + [1] * 2 + [2] * 5)
    with pytest.warns(UserWarning, match="mostly noise"):
        NoisyGDClassifier(classes=[0, 1, 2], class_weight="balanced",
                          random_state=0).fit(X, y)


def test_a_threshold_at_the_balls_edge_is_said_in_words():
    # Trial 18, F2: a threshold clipped to the ball's edge (Section 18.12)
    # leaves a margin of 0 up to rounding, and the warning read "outweighs its
    # coefficients by 2.22e-16".
    X, y = _rare_table(n=2000)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    R = float(clf.data_norm)
    for excess, said in [(0.0, "decision threshold lies at the ball's edge"),
                         (3e-17, "decision threshold lies at the ball's edge"),
                         (0.25, "by 0.25 there")]:
        clf.intercept_ = np.array([-np.linalg.norm(clf.coef_) * R - excess])
        with pytest.warns(UserWarning, match="predicts class 0 for every row") as rec:
            clf._warn_if_constant()
        text = " ".join(str(w.message) for w in rec)
        assert said in text and "e-1" not in text.split("coefficients")[1][:40]
