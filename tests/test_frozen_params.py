# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What an edit computes is fixed at fit (privacy-accounting.md, Section 16).

``set_params`` between ``fit`` and ``partial_unlearn`` used to change the row
map and the clipping of the edit while the noise and every privacy figure came
from the plan frozen at fit: with ``clip_norm`` raised a thousandfold, two
same-seed edits on neighbouring databases ended 2.5 times further apart than
the accountant's own bound. Now an edit runs with the values in force at fit
(and says which ones it set aside), predictions and certificates use them too,
and a refit takes the new ones. Also here: weight bounds whose product
overflows, batch layouts the step size cannot contract, and the warning on
edits that only a row count can check.
"""

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from skforget import (
    Database,
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    OutputPerturbationClassifier,
    OutputPerturbationRegressor,
)
from skforget.accounting._cyclic import shift_bound

UNVERSIONED = "The model was fitted on plain arrays"


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= 1.2 * np.linalg.norm(X, axis=1, keepdims=True)
    y_bin = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    y_multi = np.digitize(X[:, 0], [-0.2, 0.2])
    y_reg = X @ np.arange(1.0, d + 1) / d
    return X, y_bin, y_multi, y_reg


X, Y_BIN, Y_MULTI, Y_REG = _data()

# (factory, targets, parameter changes that must not reach the edit)
CASES = {
    "noisy-gd binary": (
        lambda: NoisyGDClassifier(classes=[0, 1], random_state=0, max_iter=6),
        Y_BIN,
        dict(clip_norm=1000.0, data_norm=5.0, intercept_scaling=3.0,
             fit_intercept=False, clip_rows=False, epsilon=8.0, C=100.0,
             class_weight={0: 5.0, 1: 1.0}, learning_rate=0.01, batch_size=7,
             deletion_epsilon=0.01, max_edit_size=1, relation="zero_out")),
    "noisy-gd ovr": (
        lambda: NoisyGDClassifier(classes=[0, 1, 2], multi_class="ovr",
                                  random_state=0, max_iter=6, batch_size=None),
        Y_MULTI,
        dict(multi_class="multinomial", clip_norm=1000.0, data_norm=0.1,
             group_size=3)),
    "noisy-gd regressor": (
        lambda: NoisyGDRegressor(random_state=0, max_iter=6),
        Y_REG,
        dict(clip_norm=1000.0, target_scale=0.001, alpha=1e-6, data_norm=3.0,
             max_sample_weight=1e6)),
    "output perturbation classifier": (
        lambda: OutputPerturbationClassifier(classes=[0, 1], random_state=0),
        Y_BIN,
        dict(clip_norm=1000.0, data_norm=5.0, epsilon=8.0, tol=1e-2,
             fit_intercept=False)),
    "output perturbation regressor": (
        lambda: OutputPerturbationRegressor(random_state=0),
        Y_REG,
        dict(clip_norm=1000.0, target_scale=0.001, alpha=1e-6)),
}


def _request(y, **kw):
    return EditRequest(Database(X, y), delete=[3, 9], replace=[0],
                       X_replace=X[[1]] * 0.5, y_replace=y[[1]], **kw)


def _served(model, y, **changes):
    est = copy.deepcopy(model)
    est.set_params(**changes)
    db = Database(X, y)
    est.database_version_ = db.version  # the model serves this database
    request = EditRequest(db, delete=[3, 9], replace=[0], X_replace=X[[1]] * 0.5,
                          y_replace=y[[1]])
    est.partial_unlearn(request)
    return est, request


@pytest.mark.parametrize("case", CASES)
def test_edit_after_set_params_is_the_edit_of_the_fitted_model(case):
    factory, y, changes = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = factory().fit(X, y)
    reference, _ = _served(model, y)
    for name, value in changes.items():
        with pytest.warns(UserWarning, match=rf"set_params changed {name}=") as rec:
            est, _ = _served(model, y, **{name: value})
        assert any(re.search(rf"\(now {re.escape(repr(value))}\)", str(w.message))
                   for w in rec), name
        # Bit for bit the edit of the model as fitted, with the same guarantee.
        np.testing.assert_array_equal(est.coef_, reference.coef_, err_msg=name)
        np.testing.assert_array_equal(est.intercept_, reference.intercept_)
        assert est.privacy_guarantee_ == reference.privacy_guarantee_, name
        # The user's value stays set; a refit (clone) would use it.
        assert est.get_params()[name] == value
        assert clone(est).get_params()[name] == value


@pytest.mark.parametrize("case", CASES)
def test_predictions_use_the_fitted_row_map(case):
    factory, y, changes = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = factory().fit(X, y)
    Xt = np.vstack([X, 3.0 * X[:5]])  # some rows over the bound
    before = model.predict(Xt)
    scores = (model.predict_proba(Xt) if hasattr(model, "predict_proba")
              else model.predict(Xt))
    model.set_params(**changes)
    np.testing.assert_array_equal(model.predict(Xt), before)
    np.testing.assert_array_equal(model.predict_proba(Xt) if hasattr(
        model, "predict_proba") else model.predict(Xt), scores)


def test_frozen_values_survive_in_place_mutation():
    # A dict passed as a parameter and mutated after fit is a change too.
    weights = {0: 1.0, 1: 2.0}
    model = NoisyGDClassifier(classes=[0, 1], class_weight=weights, random_state=0,
                              max_iter=5).fit(X, Y_BIN)
    reference, _ = _served(model, Y_BIN)
    mutated = copy.deepcopy(model)
    mutated.class_weight[1] = 50.0
    with pytest.warns(UserWarning, match="class_weight="):
        est, _ = _served(mutated, Y_BIN)
    np.testing.assert_array_equal(est.coef_, reference.coef_)


def test_free_parameters_pass_silently():
    model = NoisyGDClassifier(classes=[0, 1], random_state=0, max_iter=5).fit(X, Y_BIN)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _served(model, Y_BIN, verbose=0, n_jobs=1, certify_k_max=0)


def test_a_failed_edit_after_set_params_changes_nothing():
    model = NoisyGDRegressor(random_state=0, max_iter=5).fit(X, Y_REG)
    model.set_params(clip_norm=1000.0)
    before = pickle.dumps(model)
    bad = EditRequest(X[:10], Y_REG[:10], delete=[0])  # another database's size
    with pytest.raises(ValueError, match="rows"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.partial_unlearn(bad)
    assert pickle.dumps(model) == before
    assert model.clip_norm == 1000.0


@pytest.mark.parametrize("batch_size", [None, 6])
def test_coupling_across_an_edit_after_set_params(batch_size):
    # The audit's reproducer: raise clip_norm after fit, then replace row 0 by
    # a record whose target is +1000 in one world and -1000 in the other. With
    # the same noise the two edited models must stay within the distance the
    # accountant allows for the edit's segment (it was 2.5x over before).
    model = NoisyGDRegressor(random_state=7, max_iter=20, batch_size=batch_size)
    model.fit(X, Y_REG)
    results = []
    for target in (1000.0, -1000.0):
        est = copy.deepcopy(model)
        est.set_params(clip_norm=1000.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.partial_unlearn(EditRequest(X, Y_REG, replace=[0],
                                            X_replace=X[[0]], y_replace=[target]))
        results.append(est)
    a, b = results
    plan, cert = a._plan, a.privacy_guarantee_.deletion
    seg = plan.segment(cert.n_batches, cert.steps, cert.data_weight)
    bound = shift_bound([seg], lam=plan.lam, beta=plan.beta,
                            sensitivity=plan.sensitivity, normaliser=plan.normaliser)
    theta = [np.r_[np.ravel(e._theta()[0]), e._theta()[1]] for e in (a, b)]
    gap = np.linalg.norm(theta[0] - theta[1])
    assert 0 < gap <= bound * (1 + 1e-9), (gap, bound)


@pytest.mark.parametrize("factory", [
    lambda **kw: NoisyGDClassifier(classes=[0, 1], **kw),
    lambda **kw: OutputPerturbationClassifier(classes=[0, 1], **kw),
])
@pytest.mark.parametrize("C", ["auto", 1.0])
def test_an_overflowing_weight_bound_is_refused_by_name(factory, C):
    est = factory(C=C, max_sample_weight=1e300, class_weight={0: 1e10, 1: 1.0})
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match=r"max_sample_weight=1e\+300 times the "
                                         r"largest class_weight"):
        est.fit(X, Y_BIN, sample_weight=np.ones(len(X)))
    assert pickle.dumps(est) == before


def test_a_regularisation_that_underflows_is_refused_by_name():
    with pytest.raises(ValueError, match=r"C=1e\+307 on 60 rows gives lambda=0"):
        NoisyGDClassifier(classes=[0, 1], C=1e307).fit(X, Y_BIN)


def test_batches_too_uneven_for_the_step_size_say_what_to_change():
    X_odd, y_odd = _data(n=601)[:2]
    est = NoisyGDClassifier(classes=[0, 1], batch_size=2)
    with pytest.raises(ValueError, match=r"hold 2 and 3 rows each.*batch_size=(\d+) "
                                         r"or more") as info:
        est.fit(X_odd, y_odd)
    assert not hasattr(est, "coef_")
    suggested = int(re.search(r"batch_size=(\d+) or more", str(info.value))[1])
    NoisyGDClassifier(classes=[0, 1], batch_size=suggested).fit(X_odd, y_odd)


def test_edits_on_plain_arrays_warn_that_only_sizes_are_checked():
    model = NoisyGDClassifier(classes=[0, 1], random_state=0, max_iter=5)
    model.fit(X, Y_BIN)
    with pytest.warns(UserWarning, match=UNVERSIONED):
        model.partial_unlearn(EditRequest(X, Y_BIN, delete=[0]))
    db = Database(X, Y_BIN)
    model.fit(db)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.partial_unlearn(EditRequest(db, delete=[0]))


def test_a_pipeline_edit_warns_once_on_plain_frames():
    pd = pytest.importorskip("pandas")
    from skforget.pipeline import ForgetPipeline
    from skforget.preprocessing import PublicScaler

    frame = pd.DataFrame(X, columns=list("abcd"))
    pipe = ForgetPipeline([("scale", PublicScaler(center=0.0, scale=1.0)),
                           ("clf", NoisyGDClassifier(classes=[0, 1], max_iter=5))])
    pipe.fit(frame, Y_BIN)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        pipe.partial_unlearn(EditRequest(frame, Y_BIN, delete=[0]))
    assert sum(UNVERSIONED in str(w.message) for w in rec) == 1


# --- from the second reading (review 21) -----------------------------------


@pytest.mark.parametrize("factory", [
    # Every deletion passes over the rows (a deletion served without a pass
    # reads none, privacy-accounting.md 12.9).
    lambda: NoisyGDClassifier(classes=[0, 1], max_iter=5, max_lazy_records=0),
    lambda: OutputPerturbationClassifier(classes=[0, 1]),
])
@pytest.mark.parametrize("value", [np.nan, np.inf])
@pytest.mark.parametrize("lone", [False, True])
def test_assume_finite_cannot_smuggle_nan_or_inf_rows(factory, value, lone):
    import sklearn

    Xb = X.copy()
    if lone:
        # The entry alone in its row (audit 13a): the norm's scaled pass once
        # skipped a NaN there and called the row a zero row.
        Xb[7] = 0.0
    Xb[7, 2] = value
    est = factory()
    with sklearn.config_context(assume_finite=True):
        for Xfit in (Xb, sp.csr_matrix(Xb), Xb.astype(np.float32)):
            with pytest.raises(ValueError, match="Row 7 of X holds NaN or infinite"):
                est.fit(Xfit, Y_BIN)
        assert not hasattr(est, "coef_")
        est.fit(X, Y_BIN)
        # A request's own records are checked when it is built; the rows it
        # was built on reach the row map.
        with pytest.raises(ValueError, match="NaN or infinity"):
            EditRequest(X, Y_BIN, replace=[0], X_replace=Xb[[7]], y_replace=[1])
        before = pickle.dumps(est)
        with pytest.raises(ValueError, match="Row 6 of the edited database holds"):
            est.partial_unlearn(EditRequest(Xb, Y_BIN, delete=[0]))
        assert pickle.dumps(est) == before


def test_nan_and_inf_refusals_name_the_row():
    # scikit-learn's own refusal names the input; the row is added.
    Xb = X.copy()
    Xb[7, 2] = np.nan
    for Xfit in (Xb, sp.csr_matrix(Xb)):
        est = NoisyGDClassifier(classes=[0, 1])
        with pytest.raises(ValueError,
                           match=r"(?s)contains NaN.*The first is row 7 of X"):
            est.fit(Xfit, Y_BIN)
        assert not hasattr(est, "coef_")
    y = Y_REG.copy()
    y[4] = np.inf
    with pytest.raises(ValueError, match=r"contains infinity.*The first is y\[4\]"):
        NoisyGDRegressor(target_scale=1.0).fit(X, y)
    fitted = NoisyGDClassifier(classes=[0, 1], max_iter=3).fit(X, Y_BIN)
    with pytest.raises(ValueError, match=r"The first is row 7 of X"):
        fitted.predict(Xb)


def _as_pickled_before_freezing(model):
    state = dict(model.__dict__)
    del state["_fit_params"]
    old = object.__new__(type(model))
    old.__dict__.update(state)
    return pickle.loads(pickle.dumps(old))


def test_models_pickled_before_freezing_recover_or_refuse():
    model = NoisyGDRegressor(random_state=0, max_iter=5).fit(X, Y_REG)
    reference, _ = _served(model, Y_REG)
    # Parameters that agree with the plan are taken as the fit's.
    old = _as_pickled_before_freezing(model)
    assert old._fit_params == model._fit_params
    old.set_params(clip_norm=1000.0)
    with pytest.warns(UserWarning, match="clip_norm="):
        est, _ = _served(old, Y_REG)
    np.testing.assert_array_equal(est.coef_, reference.coef_)
    # Changed before pickling: nothing records the fit's values; refused.
    changed = copy.deepcopy(model)
    changed.set_params(clip_norm=1000.0)
    old = _as_pickled_before_freezing(changed)
    assert old._fit_params is None
    with pytest.raises(ValueError, match="Fit it again"):
        _served(old, Y_REG)


def test_interval_certificates_replay_the_fitted_values():
    from skforget.certify import interval_certify

    model = NoisyGDClassifier(classes=[0, 1], clip_norm=0.5, max_iter=3,
                              batch_size=None, random_state=0).fit(X, Y_BIN)
    before = interval_certify(model, X, Y_BIN, X, k=1)
    model.set_params(data_norm=100.0, clip_norm=10.0, random_state=5,
                     fit_intercept=False)
    np.testing.assert_array_equal(interval_certify(model, X, Y_BIN, X, k=1), before)


def test_plan_and_pipelines_ignore_the_caller_errstate():
    from skforget.pipeline import ForgetPipeline
    from skforget.preprocessing import PublicScaler

    reg = NoisyGDRegressor(target_scale=1e10)
    y = Y_REG.copy()
    y[0] = 1e-300
    expected = reg.plan(X, y)
    with np.errstate(all="raise"):
        got = reg.plan(X, y)
    assert (got.n_batches, got.steps, got.noise_scale) == \
        (expected.n_batches, expected.steps, expected.noise_scale)
    Xh = X.copy()
    Xh[0] = [1.234e-300, 1e10, 0.0, 0.0]
    pipe = ForgetPipeline([("scale", PublicScaler(center=0.0, scale=1e10)),
                           ("clf", NoisyGDClassifier(classes=[0, 1], max_iter=5,
                                                     random_state=0))])
    reference = copy.deepcopy(pipe).fit(Xh, Y_BIN)
    with np.errstate(all="raise"):
        pipe.fit(Xh, Y_BIN)
        pipe.partial_unlearn(EditRequest(Xh, Y_BIN, replace=[1], X_replace=Xh[[0]],
                                         y_replace=[0]))
    reference.partial_unlearn(EditRequest(Xh, Y_BIN, replace=[1],
                                          X_replace=Xh[[0]], y_replace=[0]))
    np.testing.assert_array_equal(pipe[-1].coef_, reference[-1].coef_)


@pytest.mark.parametrize("factory", [NoisyGDRegressor, OutputPerturbationRegressor])
def test_an_overflowing_target_raises_nothing_under_warnings_as_errors(factory):
    y = Y_REG.copy()
    y[3] = 1e308
    est = factory(target_scale=0.5, random_state=0)
    reference = copy.deepcopy(est).fit(X, y)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error", RuntimeWarning)
        est.fit(X, y)
    np.testing.assert_array_equal(est.coef_, reference.coef_)


def test_an_underflowing_weight_bound_is_refused_by_name():
    est = NoisyGDClassifier(classes=[0, 1], max_sample_weight=1e-200,
                            class_weight={0: 1e-200, 1: 1e-200})
    with pytest.raises(ValueError, match="positive, finite"):
        est.fit(X, Y_BIN, sample_weight=np.ones(len(X)))


def test_plan_leaves_a_fitted_model_untouched():
    model = NoisyGDClassifier(classes=[0, 1], random_state=0, max_iter=5)
    model.fit(X, Y_BIN)
    model.set_params(data_norm=3.0)
    state = dict(model.__dict__)
    model.plan(X[:30], Y_BIN[:30])
    assert model.__dict__.keys() == state.keys()
    assert all(model.__dict__[k] is v for k, v in state.items())


def test_raising_certify_k_max_after_a_minibatch_fit_does_not_block_edits():
    model = NoisyGDClassifier(classes=[0, 1], random_state=0, max_iter=5,
                              batch_size=10).fit(X, Y_BIN)
    model.set_params(certify_k_max=3)
    with pytest.warns(UserWarning, match="served without it"):
        model.partial_unlearn(EditRequest(X, Y_BIN, delete=[0]))
    assert model.privacy_guarantee_.deletion.n_deleted == 1


def test_pandas_label_sets_are_not_reported_as_changed():
    pd = pytest.importorskip("pandas")
    model = NoisyGDClassifier(classes=pd.Series([0, 1]), random_state=0,
                              max_iter=5).fit(X, Y_BIN)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _served(model, Y_BIN)


def test_group_and_adaptive_figures_are_in_plain_sight():
    from skforget import PrivacyBudgetWarning

    Xs, ys = X, Y_BIN
    model = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(Xs, ys)
    crossed = False
    for _ in range(12):
        request = EditRequest(Xs, ys, delete=[0, 1, 2])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            model.partial_unlearn(request)
        Xs, ys = request.apply()
        g = model.privacy_guarantee_
        text = str(g)
        assert "3 removed records together" in text
        assert f"{g.deletion.epsilon_deletion_batch:.4g}"[:4] in text
        over = g.deletion.epsilon_adaptive > g.target_epsilon
        warned = any(issubclass(w.category, PrivacyBudgetWarning) for w in rec)
        assert warned == over and ("exceeds the model's target" in text) == over
        crossed |= over
    assert crossed  # the stream is long enough to cross
