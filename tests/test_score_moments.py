"""The default error threshold of a binary model (class score moments).

privacy-accounting.md, Section 18.12: the sensitivity of the class moments
along any direction (Lemma 18.16) by property tests and attainment, the
release's law and noise stream, the threshold (eqs. 18.7-18.9) against its
closed form, its fallback and clip, the certificates' interval bound
(certificates.md 9.12) against exact same-noise counterfactuals, the deletion
argument (Theorem 18.18) with shared noise by every edit path, and the
decisions it gives against ``LogisticRegression()`` and the offset it
replaces.
"""

import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _counterfactual import same_noise_counterfactual
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score

from skforget import EditRequest, NoisyGDClassifier, OutputPerturbationClassifier
from skforget import accounting as acc
from skforget._rows import class_sums, make_design, project_rows, score_squares
from skforget._validation import segment_rng
from skforget.accounting import counterfactual_moments, direction_change_bound
from skforget.certify import interval_certify


def _table(n=4000, d=8, p=0.1, seed=0, shift=2.0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < p).astype(int)
    X = rng.normal(size=(n, d))
    X[:, 0] += shift * y
    X[:, 1] += 1.5  # not centred: the mean score is not 0
    X /= np.linalg.norm(X, axis=1).max()
    return X, y


def _moments(X, y, u, R=1.0, present=None):
    """M_u(D) of Definition 18.15 for binary labels (rows mapped into the ball;
    ``present`` 0 marks a null record)."""
    rows, scale, _ = project_rows(np.asarray(X, dtype=np.float64), R)
    rows = rows * scale[:, None]
    present = np.ones(len(y)) if present is None else np.asarray(present, float)
    M = np.zeros((2, 1 + rows.shape[1]))
    for k in (0, 1):
        sel = y == k
        M[k, 0] = present[sel].sum()
        M[k, 1:] = (present[sel, None] * rows[sel]).sum(axis=0) / R
    square = float(np.sum(present * (rows @ u) ** 2)) / R ** 2
    return np.concatenate([M.ravel(), [square]])


def _unit(rng, d):
    u = rng.normal(size=d)
    return u / np.linalg.norm(u)


def _edited(clf, X, y, delete, **kw):
    clf.partial_unlearn(EditRequest(X=X, y=y, delete=np.asarray(delete)), **kw)
    return clf


# --- Lemma 18.16 --------------------------------------------------------------------
def test_sensitivity_and_deletion_factors_closed_forms():
    assert acc.class_moments_sensitivity(relation="replace") == \
        pytest.approx(math.sqrt(5.0))
    assert acc.class_moments_sensitivity(relation="zero_out", group_size=2) == \
        pytest.approx(2 * math.sqrt(3.0))
    f = acc.count_deletion_factor
    assert f(relation="replace", n_replaced=0, statistics="class_moments") == \
        pytest.approx(3 / 5)
    assert f(relation="replace", n_replaced=1, statistics="class_moments") == \
        pytest.approx(1.0)
    assert f(relation="zero_out", n_replaced=0, statistics="class_moments") == \
        pytest.approx(1.0)
    assert f(relation="zero_out", n_replaced=2, statistics="class_moments") == \
        pytest.approx(5 / 3)
    for relation in ("replace", "zero_out"):
        means = acc.count_noise_scale(rho_counts=0.01, relation=relation,
                                      statistics="class_means")
        moments = acc.count_noise_scale(rho_counts=0.01, relation=relation,
                                        statistics="class_moments")
        ratio = math.sqrt(5 / 4) if relation == "replace" else math.sqrt(3 / 2)
        assert moments == pytest.approx(ratio * means, rel=1e-15)
    with pytest.raises(ValueError, match="statistics"):
        f(relation="replace", n_replaced=0, statistics="moments")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), g=st.integers(1, 3),
       relation=st.sampled_from(["replace", "zero_out"]),
       d=st.integers(1, 5), scale=st.floats(0.1, 10.0), zero_u=st.booleans())
def test_lemma_18_16_bound_holds_for_every_direction(seed, g, relation, d, scale,
                                                     zero_u):
    rng = np.random.default_rng(seed)
    n = 12
    X = rng.normal(size=(n, d)) * scale
    y = rng.integers(0, 2, n)
    u = np.zeros(d) if zero_u else _unit(rng, d)
    unit = rng.choice(n, g, replace=False)
    X2, y2, present = X.copy(), y.copy(), np.ones(n)
    if relation == "replace":
        X2[unit] = rng.normal(size=(g, d)) * scale
        y2[unit] = rng.integers(0, 2, g)
    else:
        present[unit] = 0.0
    gap = np.linalg.norm(_moments(X, y, u) - _moments(X2, y2, u, present=present))
    bound = acc.class_moments_sensitivity(relation=relation, group_size=g)
    assert gap <= bound * (1 + 1e-12)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), g=st.integers(1, 3),
       relation=st.sampled_from(["replace", "zero_out"]), d=st.integers(1, 5),
       log_scale=st.floats(-3.0, 12.0), layout=st.sampled_from(
           ["float64", "float32", "csr"]), data_norm=st.sampled_from([0.5, 1.0, 3.0]))
def test_lemma_18_16_holds_for_the_librarys_own_statistics(seed, g, relation, d,
                                                           log_scale, layout,
                                                           data_norm):
    """The bound above checks a copy of Definition 18.15; this one reads the
    statistics the estimators release, through make_design and
    Design.class_moments (rows of any norm, float32, CSR; a unit replaced, or
    zeroed out, i.e. absent from the neighbour's design)."""
    rng = np.random.default_rng(seed)
    n = 12
    X = rng.normal(size=(n, d)) * 10.0 ** log_scale
    X[rng.random(n) < 0.2] = 0.0
    y = rng.integers(0, 2, n)
    unit = rng.choice(n, g, replace=False)
    if relation == "replace":
        X2, y2 = X.copy(), y.copy()
        X2[unit] = rng.normal(size=(g, d)) * 10.0 ** rng.uniform(-3, 12)
        y2[unit] = rng.integers(0, 2, g)
    else:
        keep = np.setdiff1d(np.arange(n), unit)
        X2, y2 = X[keep], y[keep]
    u = _unit(rng, d)

    def released(rows, labels):
        rows = {"float64": rows, "float32": rows.astype(np.float32),
                "csr": sp.csr_matrix(rows)}[layout]
        design = make_design(rows, labels, loss="logistic", data_norm=data_norm,
                             intercept_scaling=1.0, gradient_bound=1.0)
        sums, square = design.class_moments(2, u)
        return np.concatenate([design.class_counts(2), sums.ravel() / data_norm,
                               [square / data_norm**2]])

    gap = np.linalg.norm(released(X, y) - released(X2, y2))
    bound = acc.class_moments_sensitivity(relation=relation, group_size=g)
    assert gap <= bound * (1 + 1e-6)


def test_lemma_18_16_is_attained():
    u = np.array([1.0, 0.0])
    # Replace-one: a row R u of class 0 replaced by an orthogonal row of class 1.
    gap = np.linalg.norm(_moments(np.array([[1.0, 0.0]]), np.array([0]), u)
                         - _moments(np.array([[0.0, 1.0]]), np.array([1]), u))
    assert gap == pytest.approx(math.sqrt(5.0), rel=1e-12)
    # Zero-out: the row R u against the null record.
    x = np.array([[1.0, 0.0]])
    gap = np.linalg.norm(_moments(x, np.array([0]), u)
                         - _moments(x, np.array([0]), u, present=[0]))
    assert gap == pytest.approx(math.sqrt(3.0), rel=1e-12)


# --- the release and the threshold ---------------------------------------------------
def test_release_law_and_units():
    rng = np.random.default_rng(0)
    counts, sums = np.array([100.0, 20.0]), np.array([[3.0, -1.0], [0.5, 0.2]])
    draws = [acc.noisy_class_moments(counts, sums, 7.0, noise_scale=4.0,
                                      data_norm=2.0, rng=rng) for _ in range(4000)]
    n = np.array([c for c, _, _ in draws])
    s = np.array([v for _, v, _ in draws])
    q = np.array([w for _, _, w in draws])
    assert n.std(axis=0) == pytest.approx([4.0, 4.0], rel=0.06)
    assert s.std(axis=0) == pytest.approx(np.full((2, 2), 8.0), rel=0.06)  # x R
    assert q.mean() == pytest.approx(7.0, abs=1.0)
    assert q.std() == pytest.approx(16.0, rel=0.06)  # x R^2
    # The same stream as a release of the counts and sums alone, then one draw.
    a = acc.noisy_class_moments(counts, sums, 7.0, noise_scale=4.0, data_norm=2.0,
                                rng=np.random.default_rng(5))
    b = acc.noisy_class_statistics(counts, sums, noise_scale=4.0, data_norm=2.0,
                                   rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_threshold_closed_form_fallback_and_clip():
    rng = np.random.default_rng(1)
    # Scores along u: class 0 ~ N(-0.2, 0.01), class 1 ~ N(0.3, 0.01), 900 / 100.
    s0, s1 = rng.normal(-0.2, 0.1, 900), rng.normal(0.3, 0.1, 100)
    X = np.zeros((1000, 2))
    X[:, 0] = np.concatenate([s0, s1])
    X[:, 1] = rng.normal(0.0, 0.05, 1000)
    y = np.repeat([0, 1], [900, 100])
    w = np.array([3.0, 0.0])
    counts = np.bincount(y).astype(float)
    sums = class_sums(X, np.ones(1000), y, 2)
    square = score_squares(X, np.ones(1000), [1.0, 0.0])
    tau = acc.moment_threshold(counts, sums, square, w, data_norm=1.0)
    mu = np.array([s0.mean(), s1.mean()])
    v = (np.sum((s0 - mu[0]) ** 2) + np.sum((s1 - mu[1]) ** 2)) / 1000
    assert tau == pytest.approx(mu.mean() + v * math.log(9) / (mu[1] - mu[0]),
                                rel=1e-9)
    # The Gaussian model's error-minimising threshold, close to the empirical one.
    grid = np.linspace(-0.5, 0.6, 2201)
    errors = [np.sum(s0 > t) + np.sum(s1 <= t) for t in grid]
    assert abs(tau - grid[int(np.argmin(errors))]) < 0.05
    # The scale of w does not matter; its sign does (then the means are not
    # ordered: the more frequent class everywhere).
    assert acc.moment_threshold(counts, sums, square, 10 * w, data_norm=1.0) == \
        pytest.approx(tau, rel=1e-12)
    assert acc.moment_threshold(counts, sums, square, -w, data_norm=1.0) == 1.0
    assert acc.moment_threshold(counts[::-1], sums, square, -w,
                                data_norm=1.0) == -1.0
    assert acc.moment_threshold(counts, sums, square, 0 * w, data_norm=1.0) == 1.0
    # A nearly unordered pair of means puts tau beyond the ball: clipped.
    close = sums.copy()
    close[1, 0] = close[0, 0] / 900 * 100 + 1e-6
    assert acc.moment_threshold(counts, close, square, w, data_norm=1.0) == 1.0
    # Equal counts: the midpoint, whatever the variance (no prior to weigh).
    assert acc.moment_threshold([50.0, 50.0], [[-10.0, 1.0], [15.0, 1.0]], 9.0,
                                w, data_norm=1.0) == pytest.approx(0.05)


def _threshold_of(X, y, w, noise_n, noise_s, noise_q, R, present=None):
    """The threshold of the same run (same noise) on a database: Definition
    18.15 and eqs. 18.7-18.8 computed from the rows."""
    u, _ = acc.unit_direction(w)
    M = _moments(X, y, u, R, present)
    d = X.shape[1]
    counts = M[[0, d + 1]] + noise_n
    sums = np.vstack([M[1:d + 1], M[d + 2:2 * d + 2]]) * R + R * noise_s
    square = M[-1] * R * R + R * R * noise_q
    return acc.moment_threshold(counts, sums, square, w, data_norm=R), \
        (counts, sums, square)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(4, 60), d=st.integers(1, 4),
       k=st.integers(1, 3), sigma=st.sampled_from([0.0, 0.5, 3.0, 20.0]),
       R=st.sampled_from([0.5, 1.0, 2.0]), replace=st.booleans(),
       r_scale=st.sampled_from([0.0, 0.01, 0.3, 3.0]))
def test_threshold_change_bound_holds(seed, n, d, k, sigma, R, replace, r_scale):
    """certificates.md 9.12: the same noise, a database differing in up to k
    records (deleted against null records, or replaced), and any w' within r
    of w: the counterfactual's threshold lies within delta_tau(k, r)."""
    rng = np.random.default_rng(seed)
    k = min(k, n)
    X = rng.normal(size=(n, d))
    X[:, 0] += rng.normal() * rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    w = rng.normal(size=d) * rng.choice([0.1, 1.0, 10.0])
    noise_n, noise_s = rng.normal(0, sigma, 2), rng.normal(0, sigma, (2, d))
    noise_q = rng.normal(0, sigma)
    tau, (counts, sums, square) = _threshold_of(X, y, w, noise_n, noise_s,
                                                noise_q, R)
    r = r_scale * float(np.linalg.norm(w))
    bound = acc.threshold_change_bound(counts, sums, square, w, k, radius=r,
                                       n_records=n, data_norm=R)
    assert bound <= 2 * R * (1 + 1e-12)
    for _ in range(5):
        unit = rng.choice(n, k, replace=False)
        X2, y2, present = X.copy(), y.copy(), np.ones(n)
        if replace:
            X2[unit] = rng.normal(size=(k, d)) * rng.choice([0.1, 3.0])
            y2[unit] = rng.integers(0, 2, k)
        else:
            present[unit] = 0.0
        step = rng.normal(size=d)
        w2 = w + step / np.linalg.norm(step) * r * rng.random()
        tau2, _ = _threshold_of(X2, y2, w2, noise_n, noise_s, noise_q, R, present)
        assert abs(tau2 - tau) <= bound * (1 + 1e-9) + 1e-12


def test_unit_direction_of_tiny_coefficients_has_unit_norm():
    """A tiny w's norm from subnormal squares would leave ||u|| above 1 and a
    row's square above R^2 (Lemma 18.16's bound): scaled first, it is 1."""
    for w in ([1e-160, 1e-160], [3e-170, -4e-170, 1e-175], [5.0, 0.0]):
        u, norm = acc.unit_direction(w)
        assert abs(np.linalg.norm(u) - 1.0) <= 4e-16
        assert norm == pytest.approx(math.hypot(*w[:2]) if len(w) == 2 else 5e-170,
                                     rel=1e-12)
    u, norm = acc.unit_direction([0.0, 0.0])
    assert norm == 0.0 and not u.any()


def test_direction_change_bound_is_the_largest_chord():
    rng = np.random.default_rng(3)
    for _ in range(20):
        W, r = rng.uniform(0.1, 5.0), rng.uniform(0.0, 6.0)
        bound = direction_change_bound(W, r)
        w = np.array([W, 0.0])
        phi = np.linspace(0, 2 * np.pi, 20001)
        w2 = w + r * np.column_stack([np.cos(phi), np.sin(phi)])
        chords = np.linalg.norm(w2 / np.linalg.norm(w2, axis=1)[:, None]
                                - [1.0, 0.0], axis=1)
        assert chords.max() <= bound * (1 + 1e-12)
        assert chords.max() >= bound * (1 - 1e-6)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 40), d=st.integers(1, 4),
       k=st.integers(1, 3), replace=st.booleans(),
       r_scale=st.sampled_from([0.0, 0.05, 0.5, 2.0]))
def test_counterfactual_boxes_hold_the_counterfactual(seed, n, d, k, replace,
                                                      r_scale):
    rng = np.random.default_rng(seed)
    k = min(k, n)
    X, y = rng.normal(size=(n, d)), rng.integers(0, 2, n)
    w = rng.normal(size=d)
    noise_n, noise_s, noise_q = rng.normal(0, 2, 2), rng.normal(0, 2, (2, d)), 0.3
    _, (counts, sums, square) = _threshold_of(X, y, w, noise_n, noise_s, noise_q, 1.0)
    r = r_scale * float(np.linalg.norm(w))
    (n_lo, n_hi), (P_lo, P_hi), (Q_lo, Q_hi) = counterfactual_moments(
        counts, sums, square, w, k, radius=r, n_records=n, data_norm=1.0)
    unit = rng.choice(n, k, replace=False)
    X2, y2, present = X.copy(), y.copy(), np.ones(n)
    if replace:
        X2[unit], y2[unit] = rng.normal(size=(k, d)), rng.integers(0, 2, k)
    else:
        present[unit] = 0.0
    step = rng.normal(size=d)
    w2 = w + step / np.linalg.norm(step) * r * rng.random()
    _, (c2, s2, q2) = _threshold_of(X2, y2, w2, noise_n, noise_s, noise_q, 1.0,
                                    present)
    u2, _ = acc.unit_direction(w2)
    tol = 1e-9 * (1 + np.abs(s2 @ u2))
    c2 = np.maximum(c2, 1.0)
    assert np.all(c2 >= n_lo - 1e-9) and np.all(c2 <= n_hi + 1e-9)
    assert np.all(s2 @ u2 >= P_lo - tol) and np.all(s2 @ u2 <= P_hi + tol)
    assert Q_lo - 1e-9 <= q2 <= Q_hi + 1e-9


def test_counterfactual_boxes_are_attained():
    """Each widening is needed: a replaced record moves a projected sum by
    2kR, and rows at 45 degrees between the two directions move the square
    by nearly e_u R^2 n."""
    R, u = 1.0, np.array([1.0, 0.0])
    # Projected sum: the row R u of class 1 replaced by -R u, same class.
    X, y = np.array([[R, 0.0], [0.0, 0.5]]), np.array([1, 0])
    (_, _), (P_lo, P_hi), _ = counterfactual_moments(
        [1.0, 1.0], class_sums(X, np.ones(2), y, 2), 1.0, u, 1, radius=0.0,
        n_records=2, data_norm=R)
    moved = class_sums(-X[:1], np.ones(1), y[:1], 2) @ u
    assert moved[1] == pytest.approx(P_lo[1], abs=1e-12)
    # Square: n rows on the bisector of u and u', the tangent direction change.
    W, r, n = 2.0, 0.02, 50
    theta = math.asin(r / W)
    u2 = np.array([math.cos(theta), math.sin(theta)])
    half = theta / 2 - math.pi / 4
    bis = np.array([math.cos(half), math.sin(half)])
    rows = np.tile(bis * R, (n, 1))
    q, q2 = score_squares(rows, np.ones(n), u), score_squares(rows, np.ones(n), u2)
    _, _, (Q_lo, Q_hi) = counterfactual_moments(
        [n, 1.0], np.zeros((2, 2)), q, W * u, 0, radius=r, n_records=n, data_norm=R)
    assert abs(q2 - q) <= (Q_hi - q) * (1 + 1e-12)
    assert abs(q2 - q) >= 0.99 * (Q_hi - q)


# --- the estimator -------------------------------------------------------------------
def test_default_releases_class_moments_and_their_intercept():
    X, y = _table()
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    g = clf.privacy_guarantee_
    assert g.class_statistics == "class_moments"
    assert g.count_noise == pytest.approx(acc.count_noise_scale(
        rho_counts=g.rho_counts, statistics="class_moments"), rel=1e-12)
    assert g.epsilon <= 1.0 * (1 + 1e-9)
    assert "squared scores" in str(g)
    # One stream of their own: the counts, the sums (x R), the square (x R^2),
    # the square along the released coefficients' direction.
    rng = segment_rng(0, 0, stream=1)
    rows, scale, _ = project_rows(X, 1.0)
    noise_n = rng.normal(0.0, g.count_noise, 2)
    noise_s = rng.normal(0.0, g.count_noise, (2, X.shape[1]))
    noise_q = rng.normal(0.0, g.count_noise)
    u, norm = acc.unit_direction(clf.coef_[0])
    np.testing.assert_allclose(clf.noisy_class_count_, np.bincount(y) + noise_n,
                               rtol=1e-15)
    np.testing.assert_allclose(clf.noisy_class_sum_,
                               class_sums(rows, scale, y, 2) + noise_s, atol=1e-12)
    assert clf.noisy_score_square_ == pytest.approx(
        score_squares(rows, scale, u) + noise_q, abs=1e-9)
    # intercept_ = -||w|| tau exactly (eq. 18.9); the trained one is kept apart.
    tau = acc.moment_threshold(clf.noisy_class_count_, clf.noisy_class_sum_,
                               clf.noisy_score_square_, clf.coef_[0], data_norm=1.0)
    assert clf.intercept_[0] == -norm * tau
    assert clf._trained_intercept[0] != clf.intercept_[0]
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_[0]
                               - norm * tau, atol=1e-12)
    # What the ball certificate multiplies its radius by: ||x~|| (9.12).
    _, norms = clf._margins(X, return_norms=True)
    np.testing.assert_allclose(norms, np.linalg.norm(X, axis=1), rtol=1e-12)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))


def test_defaults_decide_like_logistic_regression():
    """Issue 23: the error threshold keeps LogisticRegression()'s accuracy
    where the offset of 18.3 (decisions for the balanced error) lost it, and
    never gives the one-class model of the raw threshold."""
    X, y = _table(n=30000, p=0.06, shift=2.5)
    Xt, yt = _table(n=30000, p=0.06, shift=2.5, seed=1)
    lr = LogisticRegression().fit(X, y)
    acc_lr = lr.score(Xt, yt)
    bal_lr = balanced_accuracy_score(yt, lr.predict(Xt))
    for seed in range(3):
        m = NoisyGDClassifier(classes=[0, 1], random_state=seed).fit(X, y)
        pred = m.predict(Xt)
        assert np.mean(pred == yt) >= acc_lr - 0.01
        assert balanced_accuracy_score(yt, pred) >= bal_lr - 0.02
        assert 0.01 < pred.mean() < 0.2
        offset = NoisyGDClassifier(classes=[0, 1], random_state=seed)
        offset = offset.fit(X, y)
        # The offset's rule on the same model: the trained intercept minus
        # logit p_hat, for the balanced error (what the default was).
        b = offset._trained_intercept[0] + acc.prevalence_offset(
            offset.noisy_class_count_)
        pred_offset = (Xt @ offset.coef_[0] + b > 0).astype(int)
        assert np.mean(pred == yt) > np.mean(pred_offset == yt) + 0.02


def test_a_deletion_without_a_pass_reads_no_row():
    """Theorem 12.12: a deletion served without a pass keeps the fit's
    statistics with its coefficients and reads no row. Two requests whose rows
    and labels differ everywhere (same shape, same positions deleted) leave
    bit-identical models, equal to the fitted one."""
    X, y = _table(n=3000, p=0.2)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=3).fit(X, y)
    drop = np.array([int(np.flatnonzero(y == 1)[0]), 5, 17])
    other = np.random.default_rng(1)
    X2 = other.normal(scale=50.0, size=X.shape)
    y2 = other.integers(0, 2, size=len(y))
    names = ("coef_", "intercept_", "noisy_class_count_", "noisy_class_sum_",
             "noisy_score_square_")
    released = [tuple(np.copy(getattr(clf, n)) for n in names)]
    for rows, labels in ((X, y), (X2, y2)):
        model = pickle.loads(pickle.dumps(clf))
        _edited(model, rows, labels, drop)
        assert model.privacy_guarantee_.deletion.without_pass
        released.append(tuple(getattr(model, n) for n in names))
    for a, b, c in zip(*released, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("how", ["continue", "retrain"])
def test_deletion_redraws_the_moments_on_the_edited_rows(how):
    """Theorem 18.18 (ii): after an edit, the statistics are the edited
    database's along the released direction, plus the segment's fresh noise;
    so a real and a reference run with the same coefficients release the
    same statistics (their databases' moments are equal along every
    direction)."""
    X, y = _table(n=3000, p=0.2)
    kw = dict(classes=[0, 1], random_state=3, max_lazy_records=0)
    if how == "continue":
        kw["max_iter"] = 300
    request = {"deletion_epsilon": 1e-4} if how == "retrain" else {}
    clf = NoisyGDClassifier(**kw).fit(X, y)
    first = clf.noisy_score_square_
    drop = [int(np.flatnonzero(y == 1)[0]), 5]
    _edited(clf, X, y, drop, **request)
    cert = clf.privacy_guarantee_.deletion
    assert {"retrain": cert.retrained,
            "continue": cert.steps > 0 and not cert.retrained}[how]
    keep = np.setdiff1d(np.arange(len(y)), drop)
    g = clf.privacy_guarantee_
    rng = segment_rng(3, 1, stream=1)
    noise_n = rng.normal(0.0, g.count_noise, 2)
    noise_s = rng.normal(0.0, g.count_noise, (2, X.shape[1]))
    noise_q = rng.normal(0.0, g.count_noise)
    rows, scale, _ = project_rows(X[keep], 1.0)
    u, norm = acc.unit_direction(clf.coef_[0])
    np.testing.assert_allclose(clf.noisy_class_count_,
                               np.bincount(y[keep]) + noise_n, rtol=1e-15)
    np.testing.assert_allclose(clf.noisy_class_sum_,
                               class_sums(rows, scale, y[keep], 2) + noise_s,
                               atol=1e-12)
    assert clf.noisy_score_square_ == pytest.approx(
        score_squares(rows, scale, u) + noise_q, abs=1e-9)
    assert clf.noisy_score_square_ != first
    assert clf.intercept_[0] == -norm * clf._threshold()
    # The reference database: the deleted rows held null records (zero rows
    # add nothing to any coordinate, whatever the direction).
    X_ref = X.copy()
    X_ref[drop] = 0.0
    rows_r, scale_r, _ = project_rows(X_ref, 1.0)
    assert score_squares(rows_r, scale_r, u) == pytest.approx(
        score_squares(rows, scale, u), rel=1e-12)
    # The adaptive figure charges the fit's release at the deletion factor 3/5.
    assert cert.rho_adaptive >= cert.rho_deletion + 0.6 * g.rho_counts * (1 - 1e-12)


@pytest.mark.parametrize("class_weight, name, shift", [
    (None, "noisy_score_square_", 50.0), ("balanced", "noisy_class_sum_", 3.0)])
def test_continuation_never_reads_the_statistics(monkeypatch, class_weight, name,
                                                 shift):
    """G4 with shared noise: two models whose fits differ only in the noise
    of their class statistics (the moments of 18.12, or the midpoint's class
    sums of 18.11) are bitwise equal after a continuation edit."""
    from skforget._tasks import _PrivateClassifierMixin

    X, y = _table(n=3000, p=0.1)
    kw = dict(classes=[0, 1], random_state=1, max_lazy_records=0,
              class_weight=class_weight)
    a = NoisyGDClassifier(**kw).fit(X, y)
    orig = _PrivateClassifierMixin._redraw_counts

    def other_fit_noise(self, exact_counts, noise_scale, *, segment, **kw):
        orig(self, exact_counts, noise_scale, segment=segment, **kw)
        if segment == 0:
            setattr(self, name, getattr(self, name) + shift)

    monkeypatch.setattr(_PrivateClassifierMixin, "_redraw_counts", other_fit_noise)
    b = NoisyGDClassifier(**kw).fit(X, y)
    monkeypatch.setattr(_PrivateClassifierMixin, "_redraw_counts", orig)
    assert a.intercept_[0] != b.intercept_[0]
    for m in (a, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            _edited(m, X, y, [0])
    assert a.privacy_guarantee_.deletion.steps > 0
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


def test_auto_spends_on_large_tables_with_the_default_C_only():
    X, y = _table(n=450, p=0.3)
    small = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    assert small.privacy_guarantee_.rho_counts == 0  # 450 < 20 sigma_m
    assert not hasattr(small, "noisy_score_square_")
    X, y = _table(n=2000, p=0.3)
    assert NoisyGDClassifier(classes=[0, 1], random_state=0).fit(
        X, y).privacy_guarantee_.rho_counts > 0
    assert NoisyGDClassifier(classes=[0, 1], random_state=0, C=0.5).fit(
        X, y).privacy_guarantee_.rho_counts == 0


def test_fallback_is_visible_and_warned():
    """Scores that carry no class information: when the noisy class means are
    not ordered the threshold falls back to the more frequent class, a model
    constant on the ball, and says so."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 4))
    X /= np.linalg.norm(X, axis=1).max()
    y = (rng.random(5000) < 0.1).astype(int)
    for seed in range(10):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            clf = NoisyGDClassifier(classes=[0, 1], random_state=seed).fit(X, y)
        if clf._threshold() == 1.0:
            assert any("for every row" in str(w.message) for w in rec)
            assert np.all(clf.predict(X) == 0)
            return
    pytest.fail("no seed fell back on a table without signal")



def test_predicted_share_is_the_gaussian_models_and_a_public_function():
    """Section 18.6's estimate: the share of the Gaussian model of the scores
    above the threshold, from the released moments alone."""
    rng = np.random.default_rng(3)
    s0, s1 = rng.normal(-0.2, 0.1, 900), rng.normal(0.1, 0.1, 100)
    X = np.column_stack([np.concatenate([s0, s1]), rng.normal(0.0, 0.05, 1000)])
    y = np.repeat([0, 1], [900, 100])
    w = np.array([2.0, 0.0])
    counts = np.bincount(y).astype(float)
    sums = class_sums(X, np.ones(1000), y, 2)
    square = score_squares(X, np.ones(1000), [1.0, 0.0])
    tau = acc.moment_threshold(counts, sums, square, w, data_norm=1.0)
    shares = acc.moment_predicted_share(counts, sums, square, w, data_norm=1.0)
    mu = np.array([s0.mean(), s1.mean()])
    v = (np.sum((s0 - mu[0]) ** 2) + np.sum((s1 - mu[1]) ** 2)) / 1000
    draws = np.concatenate([rng.normal(mu[0], math.sqrt(v), 900_000),
                            rng.normal(mu[1], math.sqrt(v), 100_000)])
    assert shares.sum() == pytest.approx(1.0)
    assert shares[1] == pytest.approx(np.mean(draws > tau), abs=2e-3)
    # Close to the rows' own share here, where the scores are Gaussian.
    assert shares[1] == pytest.approx(np.mean(X[:, 0] > tau), abs=0.02)
    # v = 0: a step at each class mean; unordered means: the fallback's class.
    assert acc.moment_predicted_share([90.0, 10.0], [[-45.0, 0.0], [5.0, 0.0]],
                                      25.0, [1.0, 0.0], data_norm=1.0) == \
        pytest.approx([0.9, 0.1])
    assert acc.moment_predicted_share(counts, sums, square, -w,
                                      data_norm=1.0).tolist() == [1.0, 0.0]
    assert acc.moment_predicted_share(counts[::-1], sums, square, -w,
                                      data_norm=1.0).tolist() == [0.0, 1.0]


def test_predicted_share_reads_scores_inside_the_ball():
    # A second reader: a threshold clipped to R gave the Gaussian's tail
    # beyond R (8 %) as rows predicted class 1, though no row lies there.
    counts = np.array([1000.0, 100.0])
    sums = np.array([[0.0, 0.0], [10.0, 0.0]])
    square = 0.5 * counts.sum() + float(np.sum(sums[:, 0] ** 2 / counts))
    w = np.array([1.0, 0.0])
    assert acc.moment_threshold(counts, sums, square, w, data_norm=1.0) == 1.0
    assert acc.moment_predicted_share(counts, sums, square, w,
                                      data_norm=1.0).tolist() == [1.0, 0.0]
    # Inside the ball the Gaussian is truncated to [-R, R]: with means 0 and
    # 0.1 and a variance of 0.02 the threshold sits inside, and the share is
    # the truncated one (larger than the untruncated tail, whose mass beyond
    # +-R is put back on the interval).
    square = 0.02 * counts.sum() + float(np.sum(sums[:, 0] ** 2 / counts))
    tau = acc.moment_threshold(counts, sums, square, w, data_norm=1.0)
    assert 0.4 < tau < 0.6
    sd = math.sqrt(0.02)
    Phi = lambda t, m: 0.5 * math.erfc(-(t - m) / (sd * math.sqrt(2.0)))  # noqa: E731
    want = sum(p * (Phi(1.0, m) - Phi(tau, m)) / (Phi(1.0, m) - Phi(-1.0, m))
               for p, m in ((1000 / 1100, 0.0), (100 / 1100, 0.1)))
    got = acc.moment_predicted_share(counts, sums, square, w, data_norm=1.0)[1]
    assert got == pytest.approx(want, rel=1e-12)


def test_the_ball_check_sees_a_threshold_clipped_to_the_edge_whatever_the_rounding():
    # A second reader: with tau = R the margin is 0 up to rounding, and one
    # model in five rounded below 0 and was not said to be one class.
    X, y = _table(n=600, p=0.3)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, prevalence_share=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    w = clf.coef_.ravel()
    for b in (-np.linalg.norm(w) * (1 - 1e-15), -np.linalg.norm(w)):
        clf.intercept_ = np.array([b])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            clf._warn_if_constant()
        assert any("for every row of norm" in str(r.message) and "ball's edge" in
                   str(r.message) for r in rec)
    clf.intercept_ = np.array([-np.linalg.norm(w) * (1 - 1e-6)])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        clf._warn_if_constant()
    assert not any("for every row of norm" in str(r.message) for r in rec)


def _nearly_one_class(seed=0):
    """A weak signal and 5 % positives on a few thousand rows: at epsilon = 1
    the threshold lies beyond nearly every row but not every point of the ball."""
    return _table(n=3000, d=8, p=0.05, seed=seed, shift=0.6)


def test_a_model_nearly_constant_on_its_rows_says_so():
    X, y = _nearly_one_class()
    warned = 0
    for seed in range(6):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            clf = NoisyGDClassifier(classes=[0, 1], random_state=seed).fit(X, y)
        texts = [str(w.message) for w in rec if "predicts class" in str(w.message)]
        shares = acc.moment_predicted_share(
            clf.noisy_class_count_, clf.noisy_class_sum_, clf.noisy_score_square_,
            clf.coef_.ravel(), data_norm=1.0)
        near = any("nearly every row it was trained on" in t for t in texts)
        ball = any("for every row" in t for t in texts)
        # One warning at most, and the estimate's when the ball's is not given.
        assert not (near and ball)
        assert near == (not ball and shares.min() < 0.01)
        if near:
            warned += 1
            assert "class 0 for nearly every row" in texts[0]
            assert np.mean(clf.predict(X) == 0) > 0.97
    assert warned >= 2


def test_a_model_that_gives_both_classes_does_not_warn():
    X, y = _table(n=4000, p=0.3, shift=2.0)
    for seed in range(3):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            clf = NoisyGDClassifier(classes=[0, 1], random_state=seed).fit(X, y)
        assert not [w for w in rec if "predicts class" in str(w.message)]
        assert 0.1 < np.mean(clf.predict(X)) < 0.5


def test_the_estimate_warns_again_after_an_edit():
    X, y = _nearly_one_class()
    for seed in range(12):
        clf = NoisyGDClassifier(classes=[0, 1], random_state=seed,
                                max_lazy_records=0).fit(X, y)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            _edited(clf, X, y, [0, 1])
        shares = acc.moment_predicted_share(
            clf.noisy_class_count_, clf.noisy_class_sum_, clf.noisy_score_square_,
            clf.coef_.ravel(), data_norm=1.0)
        if shares.min() < 0.01 and clf._threshold() < 1.0:
            assert any("nearly every row it was trained on" in str(w.message)
                       for w in rec)
            return
    pytest.fail("no edit left a model nearly constant on its rows")


# --- certificates.md 9.12 ------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 3])
def test_ball_bounds_contain_the_same_noise_counterfactual(k):
    X, y = _table(n=2000, p=0.3, shift=3.0)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            clip_norm=0.5, epsilon=4.0).fit(X, y)
    assert clf.privacy_guarantee_.class_statistics == "class_moments"
    query = X[:80]
    lo, hi = clf.decision_function_bounds(query, k=k)
    mask = clf.certify(query, k=k)
    assert mask.any()
    rng = np.random.default_rng(0)
    pos = np.flatnonzero(y == 1)
    for _ in range(5):
        drop = rng.choice(pos, k, replace=False)
        cf = same_noise_counterfactual(clf, X, y, drop)
        m = cf.decision_function(query)
        assert np.all(lo <= m) and np.all(m <= hi)
        assert np.all(cf.predict(query)[mask] == clf.predict(query)[mask])
        r = float(np.linalg.norm(cf.coef_ - clf.coef_))
        assert abs(cf._threshold() - clf._threshold()) <= \
            clf._threshold_change(k, r)[0] * (1 + 1e-9)


def test_box_certificate_contains_the_counterfactual():
    X, y = _table(n=2000, p=0.3, shift=3.0)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            clip_norm=0.5, max_iter=5, epsilon=4.0).fit(X, y)
    assert clf._threshold() is not None
    query = X[:80]
    mask = interval_certify(clf, X, y, query, k=1)
    assert mask.any()
    for i in list(np.flatnonzero(y == 1)[:4]) + [0, 1]:
        cf = same_noise_counterfactual(clf, X, y, [i])
        assert np.all(cf.predict(query)[mask] == clf.predict(query)[mask])


# --- the other estimator --------------------------------------------
def test_output_perturbation_releases_moments_at_every_refit():
    X, y = _table(n=3000, p=0.1)
    clf = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(X, y)
    assert clf.privacy_guarantee_.class_statistics == "class_moments"
    first = clf.noisy_score_square_
    assert clf.intercept_[0] == -acc.unit_direction(clf.coef_)[1] * clf._threshold()
    _edited(clf, X, y, [0, 1])
    assert clf.noisy_score_square_ != first
    assert clf.intercept_[0] == -acc.unit_direction(clf.coef_)[1] * clf._threshold()
    assert clf.privacy_guarantee_.deletion.rho_deletion == 0.0
