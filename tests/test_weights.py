# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""sample_weight and class_weight (privacy-accounting.md, Section 4.4)."""

import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import normalize

from skforget import (
    Database,
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    OutputPerturbationClassifier,
    UnlearningError,
)


@pytest.fixture
def data():
    X, y = make_classification(n_samples=400, n_features=6, n_informative=4,
                               weights=[0.8], random_state=0)
    return normalize(X), y


def test_uniform_weights_at_the_bound_equal_a_scaled_c(data):
    # The accounting oracle for bounded weights: weights are divided by their
    # public bound W and lambda by W, so weights all equal to W give exactly the
    # unweighted run at C * W (same seed, same noise, bit for bit), and the
    # privacy figures do not change (the weights cost no extra noise).
    X, y = data
    for batch_size in (None, 50):
        kw = dict(classes=[0, 1], random_state=0, batch_size=batch_size)
        a = NoisyGDClassifier(C=0.1, max_sample_weight=2.0, **kw)
        a.fit(X, y, sample_weight=np.full(len(y), 2.0))
        b = NoisyGDClassifier(C=0.2, **kw).fit(X, y)
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.intercept_, b.intercept_)
        assert a.privacy_guarantee_.sensitivity == b.privacy_guarantee_.sensitivity
        assert a.privacy_guarantee_.epsilon == b.privacy_guarantee_.epsilon


def test_weights_above_the_bound_count_as_the_bound(data):
    X, y = data
    w = np.ones(len(y))
    w[:10] = 2.0
    w_big = w.copy()
    w_big[:10] = 50.0
    kw = dict(classes=[0, 1], C=0.1, max_sample_weight=2.0, random_state=3)
    a = NoisyGDClassifier(**kw).fit(X, y, sample_weight=w)
    b = NoisyGDClassifier(**kw).fit(X, y, sample_weight=w_big)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_sample_weight_equals_duplication_without_noise(data):
    # In the non-private limit the weighted objective C sum w_i l_i + |w|^2/2
    # equals the objective on the rows repeated w_i times; both runs converge to
    # the same minimiser (clip_norm=None: no clipping of the logistic loss).
    X, y = data
    w = np.ones(len(y), dtype=int)
    w[::7] = 2
    X_dup, y_dup = np.repeat(X, w, axis=0), np.repeat(y, w)
    # No prevalence offset: it counts records, not weights (as scikit-learn's
    # "balanced" does), so it would tell the two apart on purpose.
    kw = dict(classes=[0, 1], C=1.0, epsilon=1e9, clip_norm=None, batch_size=None,
              max_iter=3000, random_state=0, prevalence_share=0.0)
    a = NoisyGDClassifier(max_sample_weight=2.0, **kw).fit(X, y,
                                                           sample_weight=w)
    b = NoisyGDClassifier(**kw).fit(X_dup, y_dup)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-3, atol=1e-6)
    # ...and the weights really matter: without them the model differs by far
    # more than that tolerance.
    c = NoisyGDClassifier(**kw).fit(X, y)
    assert np.max(np.abs(a.coef_ - c.coef_)) > 30 * np.max(np.abs(a.coef_ - b.coef_))


def test_regressor_takes_sample_weight(data):
    X, _ = data
    rng = np.random.default_rng(0)
    y = X @ rng.normal(size=X.shape[1])
    w = rng.uniform(0, 1, len(y))
    kw = dict(alpha=1.0, epsilon=100.0, random_state=0)
    reg = NoisyGDRegressor(**kw).fit(X, y, sample_weight=w)
    assert reg.score(X, y, sample_weight=w) > 0.5
    assert reg._plan.sample_weight_bound == 1.0
    assert not np.allclose(reg.coef_, NoisyGDRegressor(**kw).fit(X, y).coef_)


def test_class_weight_moves_the_threshold_like_logistic_regression(data):
    # Up-weighting the minority raises its predicted share, as in
    # LogisticRegression, and without noise the coefficients follow its
    # objective (intercept_scaling=10 makes the intercept's penalty lambda/100,
    # close to LogisticRegression's unpenalised one).
    X, y = data
    weights = {0: 1.0, 1: 4.0}
    kw = dict(classes=[0, 1], C=1.0, epsilon=1e9, clip_norm=None, batch_size=None,
              intercept_scaling=10.0, max_iter=4000, random_state=0)
    # The raw threshold, as LogisticRegression's (the default would offset it
    # by the noisy prevalence, which public weights replace).
    plain = NoisyGDClassifier(prevalence_share=0.0, **kw).fit(X, y)
    weighted = NoisyGDClassifier(class_weight=weights, **kw).fit(X, y)
    lr = LogisticRegression(C=1.0, class_weight=weights).fit(X, y)
    lr_plain = LogisticRegression(C=1.0).fit(X, y)
    share = [np.mean(m.predict(X) == 1) for m in (plain, weighted, lr_plain, lr)]
    assert share[1] > share[0] + 0.05 and share[3] > share[2] + 0.05
    assert abs(share[1] - share[3]) < 0.03
    np.testing.assert_allclose(weighted.decision_function(X), lr.decision_function(X),
                               atol=0.05 * np.abs(lr.decision_function(X)).max())
    # At epsilon = 1 the shift survives the noise.
    noisy = [np.mean(NoisyGDClassifier(classes=[0, 1], class_weight=cw,
                                       random_state=s).fit(X, y).predict(X) == 1)
             for cw in (None, weights) for s in range(3)]
    assert np.mean(noisy[3:]) > np.mean(noisy[:3])


def test_balanced_uses_private_counts_and_bad_weights_are_named(data):
    # "balanced" reads the class counts through the noisy release of Section
    # 18, for two classes and for three or more (18.14).
    X, y = data
    clf = NoisyGDClassifier(classes=[0, 1], class_weight="balanced",
                            random_state=0).fit(X, y)
    assert clf.privacy_guarantee_.rho_counts > 0
    assert clf.privacy_guarantee_.epsilon <= 1.0 + 1e-9
    y3 = np.where(X[:, 0] > 0.3, 2, y)
    multi = NoisyGDClassifier(classes=[0, 1, 2], class_weight="balanced",
                              random_state=0).fit(X, y3)
    assert multi.privacy_guarantee_.rho_counts > 0
    assert len(multi.noisy_class_count_) == 3
    with pytest.raises(ValueError, match="not one of the classes"):
        NoisyGDClassifier(classes=[0, 1], class_weight={2: 3.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"class_weight\[1\]"):
        NoisyGDClassifier(classes=[0, 1], class_weight={1: -1.0}).fit(X, y)


@pytest.mark.parametrize("bad,match", [
    (-1.0, r"sample_weight\[5\] is negative: a weight must be finite"),
    (np.nan, r"sample_weight\[5\] is NaN"),
    (np.inf, r"sample_weight\[5\] is infinite"),
])
def test_bad_weights_name_the_row_and_change_nothing(data, bad, match):
    X, y = data
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    before = pickle.dumps(clf)
    w = np.ones(len(y))
    w[5] = bad
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y, sample_weight=w)
    assert pickle.dumps(clf) == before
    with pytest.raises(ValueError, match="one weight per row"):
        clf.fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="zero for every row"):
        clf.fit(X, y, sample_weight=np.zeros(len(y)))
    assert pickle.dumps(clf) == before


def test_weighted_grid_search_with_metadata_routing(data):
    X, y = data
    w = np.where(y == 1, 1.0, 0.5)
    seen = []

    class Spy(NoisyGDClassifier):
        def fit(self, X, y=None, sample_weight=None):
            seen.append(sample_weight)
            return super().fit(X, y, sample_weight=sample_weight)

    with sklearn.config_context(enable_metadata_routing=True):
        est = Spy(classes=[0, 1], random_state=0).set_fit_request(sample_weight=True)
        scorer = make_scorer(accuracy_score).set_score_request(sample_weight=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            search = GridSearchCV(est, {"C": [0.05, 0.5]}, scoring=scorer, cv=3)
            search.fit(X, y, sample_weight=w)
    assert len(seen) == 2 * 3 + 1
    assert all(s is not None and set(np.unique(s)) <= {0.5, 1.0} for s in seen)
    assert search.best_params_["C"] in (0.05, 0.5)


def test_edits_carry_the_records_weights(data):
    X, y = data
    w = np.where(y == 1, 1.0, 0.25)
    db = Database(X, y, sample_weight=w)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(db)
    assert clf._plan.sample_weight_bound == 1.0
    request = EditRequest(db, delete=[0, 1], X_insert=X[:2], y_insert=y[:2],
                          sample_weight_insert=[1.0, 0.5])
    clf.partial_unlearn(request)
    db2 = request.apply()
    np.testing.assert_array_equal(db2.sample_weight,
                                  np.r_[w[2:], [1.0, 0.5]])
    with pytest.raises(UnlearningError, match="sample_weight_insert is required"):
        EditRequest(db2, X_insert=X[:1], y_insert=y[:1])
    # Arrays work too, weights given alongside; a request without the weights a
    # weighted model needs is refused, and the model is left as it was.
    plain = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y,
                                                                  sample_weight=w)
    before = pickle.dumps(plain)
    with pytest.raises(UnlearningError, match="fitted with sample weights"):
        plain.partial_unlearn(EditRequest(X, y, delete=[3]))
    assert pickle.dumps(plain) == before
    plain.partial_unlearn(EditRequest(X, y, delete=[3], sample_weight=w))
    with pytest.raises(UnlearningError, match="fitted without"):
        NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y).partial_unlearn(
            EditRequest(X, y, delete=[3], sample_weight=w))


def test_class_weights_survive_edits_and_set_params(data):
    # The class weights an edit uses are the fit's (public, kept in the plan),
    # not whatever class_weight says later.
    X, y = data
    clf = NoisyGDClassifier(classes=[0, 1], class_weight={1: 3.0}, C=0.1,
                            random_state=0).fit(X, y)
    assert clf._plan.class_weights == (1.0, 3.0) and clf._plan.weight_bound == 3.0
    clf.set_params(class_weight=None)
    clf.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert clf._plan.class_weights == (1.0, 3.0)


def test_plan_sees_the_weights_fit_would_use(data):
    # Weights divide lambda by their public bound, so the plan changes with
    # them, whether they come with the call or with a Database.
    X, y = data
    w = np.where(y == 1, 2.0, 0.5)
    clf = NoisyGDClassifier(classes=[0, 1], C=1.0, max_sample_weight=4.0,
                            random_state=0)
    fitted = clone(clf).fit(X, y, sample_weight=w)
    for plan in (clf.plan(X, y, sample_weight=w),
                 clf.plan(Database(X, y, sample_weight=w))):
        assert plan.regularization == fitted._plan.lam
        assert plan.steps == fitted._plan.fit_steps
    assert clf.plan(X, y).regularization == 4.0 * fitted._plan.lam
    assert not hasattr(clf, "n_features_in_")


@pytest.mark.parametrize("make", [
    lambda **kw: NoisyGDClassifier(**kw),
    lambda **kw: NoisyGDClassifier(multi_class="ovr", **kw),
    lambda **kw: OutputPerturbationClassifier(**kw),
])
def test_multiclass_class_weights_shift_the_decision_not_the_training(make):
    """privacy-accounting.md 18.13: three classes or more are trained as
    without weights, and the released intercepts carry the public shift
    (log w - mean log w) / 2, through every edit; the figures are the
    unweighted model's."""
    from sklearn.datasets import make_classification
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.preprocessing import normalize

    X, y = make_classification(n_samples=1500, n_features=6, n_informative=4,
                               n_classes=3, weights=[0.75, 0.2, 0.05],
                               class_sep=2.0, random_state=0)
    X = normalize(X)
    dbs = [Database(X, y), Database(X, y)]
    p = np.bincount(y) / len(y)
    cw = {c: 1.0 / (3 * p[c]) for c in range(3)}
    log_w = np.log([cw[c] for c in range(3)])
    shift = (log_w - log_w.mean()) / 2
    plain = make(classes=[0, 1, 2], random_state=0).fit(dbs[0])
    weighted = make(classes=[0, 1, 2], random_state=0, class_weight=cw).fit(dbs[1])
    for _ in range(2):
        np.testing.assert_array_equal(weighted.coef_, plain.coef_)
        np.testing.assert_allclose(weighted.intercept_ - plain.intercept_, shift,
                                   rtol=0, atol=1e-12)
        assert weighted.privacy_guarantee_.rho == plain.privacy_guarantee_.rho
        assert weighted._plan.class_weights == ()
        requests = [EditRequest(db, delete=[1, 2, 3], by="position") for db in dbs]
        plain.partial_unlearn(requests[0])
        weighted.partial_unlearn(requests[1])
        dbs = [r.apply() for r in requests]
    X_all, y_all = dbs[0].X, dbs[0].y
    assert balanced_accuracy_score(y_all, weighted.predict(X_all)) > \
        balanced_accuracy_score(y_all, plain.predict(X_all))


def test_a_multiclass_model_pickled_with_record_weights_keeps_them():
    """A model fitted before 18.13 weighs its records (its plan holds the
    class weights): unpickled, it gets no shift and its edits keep weighting."""
    import dataclasses

    from sklearn.datasets import make_classification
    from sklearn.preprocessing import normalize

    X, y = make_classification(n_samples=600, n_features=6, n_informative=4,
                               n_classes=3, random_state=1)
    X = normalize(X)
    cw = {0: 1.0, 1: 2.0, 2: 4.0}
    model = NoisyGDClassifier(classes=[0, 1, 2], random_state=0,
                              class_weight=cw).fit(X, y)
    # What an older fit left: the plan weighs records by class.
    model._plan = dataclasses.replace(model._plan, class_weights=(0.25, 0.5, 1.0),
                                      weight_bound=4.0)
    model._set_coefficients(*model._theta())
    assert model._class_shift() == 0.0
    trained = model.__dict__.get("_trained_intercept")
    assert trained is None or np.array_equal(model.intercept_, trained)


def test_the_multiclass_shift_is_frozen_at_fit():
    """set_params(class_weight=...) after fit changed the shift the model
    predicts with (and None or "balanced" made predict raise), while its
    intercept_ kept the one of fit (second reading of a31f904)."""
    from sklearn.preprocessing import normalize

    X, y = make_classification(n_samples=600, n_features=6, n_informative=4,
                               n_classes=3, random_state=2)
    X = normalize(X)
    model = NoisyGDClassifier(classes=[0, 1, 2], random_state=0,
                              class_weight={0: 1.0, 1: 2.0, 2: 8.0}).fit(X, y)
    before = model.decision_function(X)
    np.testing.assert_allclose(before, X @ model.coef_.T + model.intercept_,
                               atol=1e-12)
    for other in ({0: 8.0, 1: 1.0, 2: 1.0}, None, "balanced"):
        model.set_params(class_weight=other)
        np.testing.assert_array_equal(model.decision_function(X), before)
