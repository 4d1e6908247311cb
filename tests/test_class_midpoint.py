"""The class-mean midpoint of ``class_weight="balanced"`` (binary models).

privacy-accounting.md, Section 18.11: the sensitivity of the class counts and
class sums (Lemma 18.12) by property tests and attainment, the release's law
and its noise stream, same-noise coupling tests of the deletion argument
(Theorem 18.14: a real and a reference run release identical statistics after
the edit, by every edit path), the certificates' widening (certificates.md,
9.11) against same-noise counterfactuals, and the decisions it fixes where the
offset of 18.3 fails.
"""

import math
import pickle
import warnings

import numpy as np
import pytest
from _counterfactual import same_noise_counterfactual
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import balanced_accuracy_score

from skforget import EditRequest, NoisyGDClassifier, OutputPerturbationClassifier
from skforget import accounting as acc
from skforget._rows import class_sums, project_rows
from skforget._validation import segment_rng
from skforget.certify import interval_certify


def _rare_table(n=4000, d=8, p=0.05, seed=0, shift=2.5):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < p).astype(int)
    X = rng.normal(size=(n, d))
    X[:, 0] += shift * y
    X[:, 1] += 1.5  # not centred: the mean score is not 0
    X /= np.linalg.norm(X, axis=1).max()
    return X, y


def _stats(X, y, R=1.0, u=None):
    """V(D) of Definition 18.11 for binary labels (rows mapped into the ball)."""
    rows, scale, _ = project_rows(np.asarray(X, dtype=np.float64), R)
    u = np.ones(len(y)) if u is None else np.asarray(u, dtype=np.float64)
    V = np.zeros((2, 1 + rows.shape[1]))
    for k in (0, 1):
        sel = y == k
        V[k, 0] = u[sel].sum()
        V[k, 1:] = (u[sel, None] * rows[sel] * scale[sel, None]).sum(axis=0) / R
    return V.ravel()


# --- Lemma 18.12 ------------------------------------------------------------------
def test_sensitivity_closed_forms():
    assert acc.class_statistics_sensitivity(relation="replace") == pytest.approx(2.0)
    assert acc.class_statistics_sensitivity(relation="zero_out") == \
        pytest.approx(math.sqrt(2.0))
    assert acc.class_statistics_sensitivity(relation="replace", group_size=3) == \
        pytest.approx(6.0)
    for relation in ("replace", "zero_out"):
        counts = acc.count_noise_scale(rho_counts=0.01, relation=relation)
        means = acc.count_noise_scale(rho_counts=0.01, relation=relation,
                                      statistics="class_means")
        assert means == pytest.approx(math.sqrt(2.0) * counts, rel=1e-15)
    with pytest.raises(ValueError, match="statistics"):
        acc.count_noise_scale(rho_counts=0.01, statistics="means")
    # The numbers of 18.13: sqrt(2) times 18.2's 25.58 and 18.09 records.
    b = acc.prevalence_budget(epsilon=1.0, delta=1e-5, share=0.05,
                              statistics="class_means")
    assert round(b.noise_scale, 2) == 36.18
    z = acc.prevalence_budget(epsilon=1.0, delta=1e-5, share=0.05,
                              relation="zero_out", statistics="class_means")
    assert round(z.noise_scale, 2) == 25.58


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), g=st.integers(1, 3),
       relation=st.sampled_from(["replace", "zero_out"]),
       d=st.integers(1, 5), scale=st.floats(0.1, 10.0))
def test_lemma_18_12_bound_holds(seed, g, relation, d, scale):
    """Neighbouring databases (a unit of g records replaced, or zeroed out),
    rows of any norm (mapped into the ball) and any labels: the statistics
    move by at most Delta_c."""
    rng = np.random.default_rng(seed)
    n, R = 12, 1.0
    X = rng.normal(size=(n, d)) * scale
    y = rng.integers(0, 2, n)
    unit = rng.choice(n, g, replace=False)
    X2, y2 = X.copy(), y.copy()
    u2 = np.ones(n)
    if relation == "replace":
        X2[unit] = rng.normal(size=(g, d)) * scale
        y2[unit] = rng.integers(0, 2, g)
    else:
        u2[unit] = 0.0
    gap = np.linalg.norm(_stats(X, y, R) - _stats(X2, y2, R, u2))
    bound = acc.class_statistics_sensitivity(relation=relation, group_size=g)
    assert gap <= bound * (1 + 1e-12)


def test_lemma_18_12_is_attained():
    x = np.array([[0.6, 0.8]])
    # Replace-one: a row of norm R replaced by its opposite in the same class.
    gap = np.linalg.norm(_stats(x, np.array([1])) - _stats(-x, np.array([1])))
    assert gap == pytest.approx(2.0, rel=1e-12)
    # Zero-out: a row of norm R against the null record.
    gap = np.linalg.norm(_stats(x, np.array([0])) - _stats(x, np.array([0]), u=[0]))
    assert gap == pytest.approx(math.sqrt(2.0), rel=1e-12)


# --- the release ---------------------------------------------------------------------
def test_release_law_and_units():
    rng = np.random.default_rng(0)
    counts, sums = np.array([100.0, 20.0]), np.array([[3.0, -1.0], [0.5, 0.2]])
    draws = [acc.noisy_class_statistics(counts, sums, noise_scale=4.0, data_norm=2.5,
                                        rng=rng) for _ in range(4000)]
    n = np.array([c for c, _ in draws])
    s = np.array([v for _, v in draws])
    assert n.mean(axis=0) == pytest.approx(counts, abs=0.4)
    assert n.std(axis=0) == pytest.approx([4.0, 4.0], rel=0.06)
    assert s.mean(axis=0) == pytest.approx(sums, abs=0.4)
    # Sums carry the noise in units of the row bound.
    assert s.std(axis=0) == pytest.approx(np.full((2, 2), 10.0), rel=0.06)
    assert abs(np.corrcoef(n[:, 0], s[:, 0, 0])[0, 1]) < 0.06


def test_midpoint_closed_form_and_floor():
    c = acc.class_midpoint([4.0, -3.0], [[4.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(c, [0.5, 1.0])  # the negative count reads as 1
    with pytest.raises(ValueError, match="binary"):
        acc.class_midpoint([1.0, 2.0, 3.0], np.zeros((3, 2)))


@settings(max_examples=300, deadline=None)
@given(n0=st.floats(-30, 300), n1=st.floats(-30, 300), k=st.integers(0, 6),
       seed=st.integers(0, 2**31 - 1), R=st.floats(0.1, 5.0))
def test_midpoint_change_bound_holds(n0, n1, k, seed, R):
    """certificates.md 9.11: counts moved by at most k, sums by at most 2kR
    (with the same noise), the midpoint moves by at most delta_c(k)."""
    rng = np.random.default_rng(seed)
    counts = np.array([n0, n1])
    sums = rng.normal(size=(2, 3)) * 20 * R
    bound = acc.midpoint_change_bound(counts, sums, k, data_norm=R)
    c = acc.class_midpoint(counts, sums)
    for _ in range(20):
        e = rng.integers(-k, k + 1, size=2)
        a = rng.normal(size=(2, 3))
        a *= (2 * k * R * rng.random((2, 1))) / np.maximum(
            np.linalg.norm(a, axis=1, keepdims=True), 1e-300)
        moved = acc.class_midpoint(counts + e, sums + a)
        assert np.linalg.norm(moved - c) <= bound * (1 + 1e-12) + 1e-12
    if k == 0:
        assert bound == 0.0


# --- the estimator ------------------------------------------------------------------
def test_balanced_releases_class_means_and_their_intercept():
    X, y = _rare_table()
    clf = NoisyGDClassifier(classes=[0, 1], class_weight="balanced",
                            random_state=0).fit(X, y)
    g = clf.privacy_guarantee_
    assert g.class_statistics == "class_means"
    assert g.count_noise == pytest.approx(acc.count_noise_scale(
        rho_counts=g.rho_counts, statistics="class_means"), rel=1e-12)
    assert g.epsilon <= 1.0 * (1 + 1e-9)
    assert "class sums" in str(g)
    # The noise comes from its own stream, counts first, then the sums (x R).
    rng = segment_rng(0, 0, stream=1)
    rows, scale, _ = project_rows(X, 1.0)
    noise_n = rng.normal(0.0, g.count_noise, 2)
    noise_s = rng.normal(0.0, g.count_noise, (2, X.shape[1]))
    np.testing.assert_allclose(clf.noisy_class_count_, np.bincount(y) + noise_n,
                               rtol=1e-15)
    np.testing.assert_allclose(clf.noisy_class_sum_,
                               class_sums(rows, scale, y, 2) + noise_s, atol=1e-12)
    # intercept_ = -w^T c exactly (eq. 18.6); the trained one is kept apart.
    c = acc.class_midpoint(clf.noisy_class_count_, clf.noisy_class_sum_)
    assert clf.intercept_[0] == -float(clf.coef_[0] @ c)
    assert clf._trained_intercept[0] != clf.intercept_[0]
    np.testing.assert_allclose(clf.decision_function(X),
                               (X - c) @ clf.coef_[0], atol=1e-12)
    # What the ball certificate multiplies its radius by (certificates.md
    # 9.11): ||x~ - c||, the intercept coordinate no longer in the margin (an
    # upper bound by at most the rounding of the expansion).
    _, norms = clf._margins(X, return_norms=True)
    exact = np.linalg.norm(X - c, axis=1)
    assert np.all(norms >= exact * (1 - 1e-12))
    np.testing.assert_allclose(norms, exact, rtol=1e-7, atol=1e-7)
    # The default releases the class moments of its error threshold (18.12).
    default = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    assert default.privacy_guarantee_.class_statistics == "class_moments"
    assert default._midpoint() is None and default._threshold() is not None
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))


def _offset_predictions(clf, X):
    """What the offset of 18.3 (the default before 18.12) decides with the
    model's trained intercept and its noisy counts: ``-logit p_hat`` added."""
    b = clf._trained_intercept[0] + acc.prevalence_offset(clf.noisy_class_count_)
    return (X @ clf.coef_[0] + b > 0).astype(int)


def test_midpoint_fixes_the_over_correcting_offset():
    """A strongly penalised intercept (small C) is far from logit p: the
    offset of 18.3 overshoots to a model that predicts the rare class
    everywhere, the midpoint does not read the trained intercept."""
    X, y = _rare_table(n=6000, seed=1)
    Xt, yt = _rare_table(n=6000, seed=2)
    kw = dict(classes=[0, 1], C=1e-2, random_state=0, prevalence_share=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        default = NoisyGDClassifier(**kw).fit(X, y)
        mid = NoisyGDClassifier(**kw, class_weight="balanced").fit(X, y)
    assert _offset_predictions(default, Xt).mean() > 0.9
    assert balanced_accuracy_score(yt, mid.predict(Xt)) > 0.75
    # At the default penalty the fit runs long enough for its intercept to
    # converge (Section 8.4), and the offset no longer under-corrects: the
    # midpoint decides as well as the offset there (Section 18.11).
    kw.pop("C")
    default = NoisyGDClassifier(**kw).fit(X, y)
    mid = NoisyGDClassifier(**kw, class_weight="balanced").fit(X, y)
    assert balanced_accuracy_score(yt, mid.predict(Xt)) >= \
        balanced_accuracy_score(yt, _offset_predictions(default, Xt)) - 0.01 > 0.85


def _edited(clf, X, y, delete, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf.partial_unlearn(EditRequest(X, y, delete=delete), **kw)
    return clf


@pytest.mark.parametrize("how", ["continue", "retrain"])
def test_deletion_coupling_statistics_equal_reference(how):
    """Theorem 18.14 (ii) with shared noise, by every edit path: the real run
    (record present at fit, then deleted) and the reference run (another
    record in its slot, then deleted) release identical class statistics
    after the edit, although their fits' differed."""
    X, y = _rare_table(n=3000, p=0.2)
    i = int(np.flatnonzero(y == 1)[0])
    X_ref, y_ref = X.copy(), y.copy()
    X_ref[i], y_ref[i] = -X[3], 0
    kw = dict(classes=[0, 1], random_state=3, class_weight="balanced",
              max_lazy_records=0)
    if how == "continue":
        kw["max_iter"] = 300  # a refit dearer than the continuation
    # A very strong deletion target costs more passes than a refit: retrain.
    request = {"deletion_epsilon": 1e-4} if how == "retrain" else {}
    real = NoisyGDClassifier(**kw).fit(X, y)
    ref = NoisyGDClassifier(**kw).fit(X_ref, y_ref)
    assert not np.allclose(real.noisy_class_sum_, ref.noisy_class_sum_)
    _edited(real, X, y, [i], **request)
    _edited(ref, X_ref, y_ref, [i], **request)
    cert = real.privacy_guarantee_.deletion
    assert {"retrain": cert.retrained,
            "continue": cert.steps > 0 and not cert.retrained}[how]
    np.testing.assert_array_equal(real.noisy_class_count_, ref.noisy_class_count_)
    np.testing.assert_array_equal(real.noisy_class_sum_, ref.noisy_class_sum_)
    # The adaptive figure charges the fit's release at the deletion factor.
    g = real.privacy_guarantee_
    assert cert.rho_adaptive >= cert.rho_deletion + 0.5 * g.rho_counts * (1 - 1e-12)


def test_a_deletion_without_a_pass_keeps_the_statistics_within_their_charge():
    """Theorem 12.12 by a same-noise coupling: the kept release is the fit's
    (the exact statistics of the database that held the removed rows plus the
    fit's noise); the reference release on the edited database with the same
    noise differs from it by the removed rows' contribution alone, at most
    r * Delta_del = r * sqrt(2) in noise units, which is what the certificate
    charges: (Delta_del / sigma)^2 / 2 per record, 0.5 * rho_counts."""
    X, y = _rare_table(n=3000, p=0.2)
    clf = NoisyGDClassifier(classes=[0, 1], class_weight="balanced",
                            random_state=4).fit(X, y)
    coef, trained = clf.coef_.copy(), clf._trained_intercept.copy()
    intercept = clf.intercept_.copy()
    drop = [5, 7, int(np.flatnonzero(y == 1)[0])]
    _edited(clf, X, y, drop)
    g = clf.privacy_guarantee_
    assert g.deletion.without_pass and clf.n_unlearn_iter_ == 0
    np.testing.assert_array_equal(clf.coef_, coef)
    np.testing.assert_array_equal(clf._trained_intercept, trained)
    np.testing.assert_array_equal(clf.intercept_, intercept)
    rng = segment_rng(4, 0, stream=1)  # the fit's statistics stream
    noise_n = rng.normal(0.0, g.count_noise, 2)
    noise_s = rng.normal(0.0, g.count_noise, (2, X.shape[1]))
    rows, scale, _ = project_rows(X, 1.0)
    np.testing.assert_allclose(clf.noisy_class_count_, np.bincount(y) + noise_n,
                               rtol=1e-15)
    np.testing.assert_allclose(clf.noisy_class_sum_,
                               class_sums(rows, scale, y, 2) + noise_s, atol=1e-12)
    keep = np.setdiff1d(np.arange(len(y)), drop)
    reference = np.concatenate([
        np.bincount(y[keep], minlength=2) + noise_n,
        (class_sums(rows[keep], scale[keep], y[keep], 2) + noise_s).ravel()])
    kept = np.concatenate([clf.noisy_class_count_, clf.noisy_class_sum_.ravel()])
    distance = np.linalg.norm(kept - reference)  # in records (R = 1)
    assert 0.5 < distance <= len(drop) * math.sqrt(2.0) * (1 + 1e-12)
    # Gaussian closed form: the pair's divergence is q * distance^2 / (2
    # sigma^2) at most (r sqrt 2)^2 / (2 sigma^2) = r^2 * 0.5 * rho_counts.
    per_record = 1.0 / g.count_noise ** 2
    assert per_record == pytest.approx(0.5 * g.rho_counts, rel=1e-12)
    assert distance ** 2 / (2 * g.count_noise ** 2) <= \
        len(drop) ** 2 * per_record * (1 + 1e-12)
    alone = acc.PrivacyGuarantee(**{
        **{f: getattr(g, f) for f in acc.PrivacyGuarantee.__dataclass_fields__},
        "rho_counts": 0.0, "edits": ()})
    assert g.deletion.rho_deletion == pytest.approx(
        acc.lazy_deletion_rho(clf._plan, alone) + per_record, rel=1e-12)
    assert g.deletion.rho_deletion_batch == pytest.approx(
        9 * g.deletion.rho_deletion, rel=1e-12)


# --- certificates.md 9.11 -------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 3])
def test_ball_bounds_contain_the_same_noise_counterfactual(k):
    X, y = _rare_table(n=500, p=0.25)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            clip_norm=0.5, class_weight="balanced").fit(X, y)
    query = X[:80]
    lo, hi = clf.decision_function_bounds(query, k=k)
    mask = clf.certify(query, k=k)
    assert mask.any()
    rng = np.random.default_rng(0)
    pos = np.flatnonzero(y == 1)
    for _ in range(6):
        drop = rng.choice(pos, k, replace=False)  # moves the rare class's mean most
        cf = same_noise_counterfactual(clf, X, y, drop)
        m = cf.decision_function(query)
        assert np.all(lo <= m) and np.all(m <= hi)
        assert np.all(cf.predict(query)[mask] == clf.predict(query)[mask])
        move = np.linalg.norm(cf._midpoint() - clf._midpoint())
        assert 0 < move <= clf._midpoint_change(k) * (1 + 1e-12)
    # Without the midpoint's widening (the offset's formula) the bounds would
    # be narrower: the widening is what covers the class statistics.
    assert clf._offset_change(k, np.zeros(1)).min() > 0


def test_box_certificate_contains_the_counterfactual():
    X, y = _rare_table(n=400, p=0.25)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            clip_norm=0.5, max_iter=5,
                            class_weight="balanced").fit(X, y)
    query = X[:80]
    mask = interval_certify(clf, X, y, query, k=1)
    assert mask.any()
    for i in list(np.flatnonzero(y == 1)[:4]) + [0, 1]:
        cf = same_noise_counterfactual(clf, X, y, [i])
        assert np.all(cf.predict(query)[mask] == clf.predict(query)[mask])


# --- the other estimator and the warnings ---------------------------------------------
def test_output_perturbation_uses_the_midpoint_at_every_refit():
    X, y = _rare_table(n=3000, p=0.1)
    clf = OutputPerturbationClassifier(classes=[0, 1], class_weight="balanced",
                                       random_state=0).fit(X, y)
    assert clf.privacy_guarantee_.class_statistics == "class_means"
    first = clf.noisy_class_sum_.copy()
    assert clf.intercept_[0] == -float(clf.coef_[0] @ clf._midpoint())
    _edited(clf, X, y, [0, 1])
    assert not np.allclose(clf.noisy_class_sum_, first)
    assert clf.intercept_[0] == -float(clf.coef_[0] @ clf._midpoint())
    assert clf.privacy_guarantee_.deletion.rho_deletion == 0.0


def test_small_tables_warn_that_the_means_are_noise():
    X, y = _rare_table(n=300, p=0.2)
    with pytest.warns(UserWarning, match="mostly noise"):
        NoisyGDClassifier(classes=[0, 1], class_weight="balanced",
                          random_state=0).fit(X, y)
    X, y = _rare_table(n=20000, p=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        NoisyGDClassifier(classes=[0, 1], class_weight="balanced",
                          random_state=0).fit(X, y)
