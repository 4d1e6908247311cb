# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tuning a pipeline with private preprocessing (privacy-accounting.md,
Theorem 17.5): the statistics released once, the estimator's runs on the
mapped rows, one figure for all of it."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from skforget import (
    Database,
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    PrivacyBudgetWarning,
)
from skforget import accounting as acc
from skforget.accounting import PrivacyLedger
from skforget.accounting._selection import _ORDERS
from skforget.exceptions import UnlearningError
from skforget.model_selection import PrivateSearchCV
from skforget.pipeline import PrivatePipeline, make_private_pipeline
from skforget.preprocessing import PrivateTableEncoder

dp_rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
dp_event = pytest.importorskip("dp_accounting.dp_event")

SHARES = {"preprocessing_share": 0.25, "selection_share": 0.1}


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 1500
    X = pd.DataFrame({"age": rng.integers(18, 90, n).astype(float),
                      "job": rng.choice(["a", "b", "c", None], n),
                      "x": rng.normal(size=n)})
    y = ((X["age"] > 50) ^ (rng.random(n) < 0.1)).astype(int).to_numpy()
    target = 3.0 * X["x"].to_numpy() + 0.05 * X["age"].to_numpy() + 100.0 \
        + rng.normal(size=n)
    return X, y, target


def _search(estimator=None, **kw):
    kw.setdefault("n_candidates", 3)
    kw.setdefault("random_state", 0)
    est = estimator if estimator is not None else NoisyGDClassifier(classes=[0, 1])
    return PrivateSearchCV(make_private_pipeline(est),
                           {"estimator__C": [0.1, 1.0]}, epsilon=1.0, **kw)


@pytest.mark.parametrize("conversion", ["gaussian", "improved"])
@pytest.mark.parametrize("refit_share,score_share", [(0.0, 0.05), (0.5, 0.0)])
def test_the_plan_matches_dp_accounting(conversion, refit_share, score_share):
    """Theorem 17.5's total: a Gaussian release of the statistics, repeat and
    select, the refit, composed as Rényi curves outside the selections'
    events (delta_S), against dp_accounting's RDP accountant."""
    delta = 1e-5
    shares = {**SHARES, "estimator_conversion": conversion}
    b = acc.plan_search(epsilon=1.0, delta=delta, mean=10.0, shape=0.0,
                        refit_share=refit_share, score_share=score_share,
                        pipeline=shares)
    split = acc.split_private_pipeline(epsilon=1.0, delta=delta, **shares)
    # The statistics get what an untuned pipeline at (1, delta) gives them.
    assert b.preprocessing_rho == split.rho_preprocessing
    assert b.delta_selection == split.delta_selection
    oracle = dp_rdp.RdpAccountant(orders=list(_ORDERS))
    oracle.compose(dp_event.GaussianDpEvent(1 / math.sqrt(2 * b.preprocessing_rho)))
    oracle.compose(dp_event.RepeatAndSelectDpEvent(
        dp_event.GaussianDpEvent(1 / math.sqrt(2 * b.run_rho)), 10.0, 0.0))
    if refit_share:
        oracle.compose(dp_event.GaussianDpEvent(1 / math.sqrt(2 * b.refit_rho)))
    d_s = b.delta_selection
    expected = oracle.get_epsilon(delta - d_s) - math.log1p(-d_s)
    assert b.epsilon == pytest.approx(expected, rel=1e-4)
    assert b.epsilon <= 1.0
    # Without the statistics' release the runs would get more: they pay it.
    plain = acc.plan_search(epsilon=1.0, delta=delta, mean=10.0, shape=0.0,
                            refit_share=refit_share, score_share=score_share)
    assert b.run_rho < plain.run_rho
    # The refit is an estimator's, at delta less the selections' (17.5).
    if refit_share:
        assert acc.epsilon_to_rho(epsilon=b.refit_epsilon, delta=delta - d_s,
                                  method="gaussian") <= b.refit_rho
    assert b.selection_epsilon <= b.epsilon


def test_the_statistics_are_released_once_whatever_the_number_of_runs(
        table, monkeypatch):
    """Refitted in every run, K hidden runs would exclude K events of
    probability delta_S, and K is unbounded (17.4): one release."""
    X, y, _ = table
    calls = []
    fit = PrivateTableEncoder.fit

    def counted(self, *args, **kwargs):
        calls.append(1)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(PrivateTableEncoder, "fit", counted)
    s = _search(n_candidates=20).fit(X, y)
    assert len(calls) == 1
    assert isinstance(s.best_estimator_, PrivatePipeline)
    assert set(s.best_params_) == {"estimator__C"}


def test_the_released_pipeline_spends_what_the_plan_priced(table):
    """The statistics inside the released pipeline cost exactly the plan's
    preprocessing rho, their selections at most its delta; the selected run
    at most a run's rho; the search's figure is the pipeline's."""
    X, y, _ = table
    s = _search().fit(X, y)
    b = s.privacy_guarantee_
    g = s.best_estimator_.privacy_guarantee_
    stats = [(rho, d) for name, rho, d in g.parts if name != "estimator"]
    assert math.fsum(r for r, _ in stats) == pytest.approx(b.preprocessing_rho,
                                                           rel=1e-12)
    assert math.fsum(d for _, d in stats) <= b.delta_selection * (1 + 1e-12)
    assert s.best_estimator_[-1].privacy_guarantee_.rho <= b.run_rho - b.score_rho
    assert (g.epsilon, g.delta) == (b.epsilon, b.delta)
    assert g.selected_by_search and b.epsilon <= 1.0
    assert "selected over these statistics" in str(g)
    assert "re-estimates" not in str(g)
    assert s.predict(X).shape == (len(y),)
    assert s.n_features_in_ == X.shape[1]


def test_a_selected_pipeline_refuses_edits_before_drawing(table):
    X, y, _ = table
    db = Database(X, y)
    s = _search().fit(db)
    pipe = s.best_estimator_
    before = pipe.named_steps["preprocess"].__dict__.copy()
    coef = pipe[-1].coef_.copy()
    for target in (pipe, s):
        with pytest.raises(UnlearningError, match="PrivateSearchCV selected"):
            target.partial_unlearn(EditRequest(db, delete=[3]))
    np.testing.assert_array_equal(pipe[-1].coef_, coef)
    assert pipe.named_steps["preprocess"].__dict__.keys() == before.keys()


def test_a_refitted_pipeline_serves_deletions_and_the_ledger_sees_all(table):
    X, y, _ = table
    db = Database(X, y)
    ledger = PrivacyLedger(epsilon=3.0, delta=1e-5)
    s = _search(NoisyGDClassifier(classes=[0, 1], ledger=ledger),
                validation_fraction=0.2, random_state=None).fit(db)
    b = s.privacy_guarantee_
    # One entry: the statistics (rho), the search's curve, the selections'
    # excluded events; read back, the search's own figure.
    (entry,) = ledger.entries
    assert entry.rho == b.preprocessing_rho and entry.delta == b.delta_selection
    assert ledger.total.epsilon == pytest.approx(b.epsilon, rel=1e-9)
    pipe = s.best_estimator_
    assert not pipe.privacy_guarantee_.selected_by_search
    # Its estimator says the pipeline serves its edits (a second reader read
    # "No records deleted yet; partial_unlearn will certify ...").
    assert pipe[-1].privacy_guarantee_.retrained_by_pipeline
    with pytest.warns(PrivacyBudgetWarning, match="hyper-parameters"):
        s.partial_unlearn(EditRequest(db, delete=[3]))
    assert pipe.privacy_guarantee_.deletion is not None
    assert pipe.privacy_guarantee_.deletion.n_deleted == 1
    assert len(ledger.entries) == 2
    # Its figures are the pipeline's share: a clone refitted says nothing of
    # a budget written on its estimator.
    from sklearn.base import clone

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        clone(pipe).set_params(estimator__ledger=None).fit(X, y)
    assert not [w for w in rec if "is replaced by its part" in str(w.message)]


def test_only_the_estimators_parameters_may_be_drawn(table):
    X, y, target = table
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]))
    for bad, match in [({"preprocess__row_scale": [1.0]}, "draws only its estimator"),
                       ({"epsilon": [1.0]}, "draws only its estimator"),
                       ({"estimator__epsilon": [0.5]},
                        r"names \['estimator__epsilon'\]: the search sets"),
                       ({"estimator__classes": [[0, 1]]}, "the search sets"),
                       ({"estimator__alpha": [1.0]},
                        r"names \['estimator__alpha'\], which NoisyGDClassifier")]:
        with pytest.raises(ValueError, match=match):
            PrivateSearchCV(pipe, bad, epsilon=1.0).fit(X, y)
    reg = make_private_pipeline(NoisyGDRegressor())
    for name in ("estimator__target_offset", "estimator__fit_intercept"):
        with pytest.raises(ValueError, match="target_offset and fit_intercept"):
            PrivateSearchCV(reg, {name: [0.0]}, epsilon=1.0,
                            target_bound=5.0).fit(X, target)


def test_a_regressors_released_target_is_read_once(table):
    X, _, target = table
    s = PrivateSearchCV(make_private_pipeline(NoisyGDRegressor()),
                        {"estimator__alpha": [0.01, 1.0]}, epsilon=1.0,
                        target_bound=5.0, n_candidates=3, random_state=0)
    s.fit(X, target)
    pipe = s.best_estimator_
    # The pipeline's, as after its own fit; the estimator keeps its own.
    assert abs(pipe.target_offset_ - np.mean(target)) < 3 * np.std(target)
    assert pipe[-1].get_params()["target_scale"] is None
    assert s.score(X, target) > 0.3


def test_a_seeded_search_replays_and_keeps_the_users_seeds(table):
    X, y, _ = table
    a = _search(random_state=5).fit(X, y)
    b = _search(random_state=5).fit(X, y)
    assert a.best_score_ == b.best_score_
    np.testing.assert_array_equal(a.best_estimator_[-1].coef_,
                                  b.best_estimator_[-1].coef_)
    pipe = a.best_estimator_
    # The derived seeds would replay the statistics' noise from the model.
    assert pipe.named_steps["preprocess"].random_state is None
    assert pipe[-1].random_state is None
    assert set(pipe.random_states_.values()) == {None}


def test_inside_cross_val_score_it_warns_with_the_whole_figure(table):
    from sklearn.model_selection import cross_val_score

    X, y, _ = table
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cross_val_score(_search(random_state=None), X, y, cv=2)
    said = [str(w.message) for w in rec
            if issubclass(w.category, PrivacyBudgetWarning)]
    assert said and all(m.startswith("PrivateSearchCV.fit runs inside")
                        for m in said)
    assert "Each fit is (1, 1e-05)-DP alone" in said[0]
    # A ledger held by the estimator records the searches: the warning says
    # what it adds, not "Pass ledger=" (a second reader).
    from sklearn.model_selection import KFold

    ledger = PrivacyLedger(epsilon=50.0, delta=1e-5)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cross_val_score(_search(NoisyGDClassifier(classes=[0, 1], ledger=ledger),
                                random_state=None), X, y,
                        cv=KFold(2, shuffle=True, random_state=0))
    said = [str(w.message) for w in rec
            if issubclass(w.category, PrivacyBudgetWarning)]
    assert len(ledger.entries) == 2
    assert "It adds all 2 fits" in said[0] and "Pass ledger=" not in said[0]


def test_a_private_steps_ledger_records_the_search(table):
    """PrivatePipeline.fit records into a private step's ledger when the
    estimator has none; a search over it recorded nothing (a second reading's
    finding) and the released pipeline lost the step's ledger."""
    X, y, _ = table
    ledger = PrivacyLedger(epsilon=3.0, delta=1e-5)
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]))
    pipe.set_params(preprocess__ledger=ledger)
    s = PrivateSearchCV(pipe, {"estimator__C": [0.1, 1.0]}, epsilon=1.0,
                        n_candidates=2).fit(X, y)
    (entry,) = ledger.entries
    assert entry.label == "PrivateSearchCV.fit"
    assert ledger.total.epsilon == pytest.approx(s.privacy_guarantee_.epsilon,
                                                 rel=1e-9)
    assert s.best_estimator_.named_steps["preprocess"].ledger is ledger


@pytest.mark.parametrize("validation_fraction", [None, 0.2])
def test_a_fitted_pipeline_search_pickles(table, validation_fraction):
    # Unpickling assigned the search's figure to the pipeline's read-only
    # guarantee (AttributeError); the selected run is its final step.
    import pickle

    X, y, _ = table
    s = _search(validation_fraction=validation_fraction, refit=False).fit(X, y)
    back = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(back.predict(X), s.predict(X))
    g = back.best_estimator_.privacy_guarantee_
    assert g.selected_by_search and g.epsilon == s.privacy_guarantee_.epsilon


def test_clip_rows_false_is_refused_before_any_statistic(table, monkeypatch):
    X, y, _ = table
    drawn = []
    fit = PrivateTableEncoder.fit
    monkeypatch.setattr(PrivateTableEncoder, "fit",
                        lambda self, *a, **k: drawn.append(1) or fit(self, *a, **k))
    s = _search(NoisyGDClassifier(classes=[0, 1], clip_rows=False))
    with pytest.raises(ValueError, match="clip_rows=False"):
        s.fit(X, y)
    assert not drawn and not hasattr(s, "best_estimator_")


@pytest.mark.parametrize("where", ["run", "refit"])
def test_a_search_failing_after_the_statistics_records_nothing(table, monkeypatch,
                                                               where):
    """The statistics' own fit commits as it ends; a later failure (the
    second run, or the refit on all rows) left the whole search's entry in
    the ledger although nothing was released."""
    import skforget.model_selection._search as search_module

    X, y, _ = table
    ledger = PrivacyLedger(epsilon=3.0, delta=1e-5)
    fit_recorded, calls = search_module._fit_recorded, []

    def failing(model, X_, y_):
        calls.append(len(y_))
        if (len(calls) == 2) if where == "run" else (len(y_) == len(y)):
            raise RuntimeError("injected")
        return fit_recorded(model, X_, y_)

    monkeypatch.setattr(search_module, "_fit_recorded", failing)
    s = _search(NoisyGDClassifier(classes=[0, 1], ledger=ledger),
                validation_fraction=0.2, random_state=3, n_candidates=10)
    with pytest.raises(RuntimeError, match="injected"):
        s.fit(X, y)
    assert len(calls) >= 2 if where == "run" else calls[-1] == len(y)
    assert ledger.entries == () and not hasattr(s, "best_estimator_")


def test_a_frozen_public_step_before_the_private_one(table):
    # A FrozenEstimator has no fit_transform: the statistics are fitted as
    # Pipeline.fit fits them (fit, then transform).
    from sklearn.frozen import FrozenEstimator
    from sklearn.preprocessing import FunctionTransformer

    X, y, _ = table
    frozen = FrozenEstimator(FunctionTransformer().fit(X))
    pipe = PrivatePipeline([("public", frozen),
                            ("preprocess", PrivateTableEncoder()),
                            ("estimator", NoisyGDClassifier(classes=[0, 1]))])
    s = PrivateSearchCV(pipe, {"estimator__C": [0.1, 1.0]}, epsilon=1.0,
                        n_candidates=2, random_state=0).fit(X, y)
    assert s.predict(X).shape == (len(y),)
    assert s.best_estimator_.named_steps["preprocess"].numeric_columns_


def test_what_the_released_pipeline_says_it_used(table):
    """Its budget_ states the split as used (the statistics' part, the
    estimator's target), a ledger refuses to price a selected run as if it
    were the search (one run's rho), and data_norm, which the statistics map
    the rows with, is not drawn (second reading, L2-L4)."""
    X, y, _ = table
    s = _search().fit(X, y)
    pipe = s.best_estimator_
    b = pipe.budget_
    assert b.estimator_epsilon == pipe[-1].epsilon == s.privacy_guarantee_.run_epsilon
    assert b.rho == pytest.approx(pipe.privacy_guarantee_.rho, rel=1e-12)
    with pytest.raises(ValueError, match="Record the search instead"):
        PrivacyLedger(epsilon=0.7, delta=1e-5).would_exceed(pipe.privacy_guarantee_)
    assert PrivacyLedger(epsilon=0.7, delta=1e-5).would_exceed(s.privacy_guarantee_)
    with pytest.raises(ValueError, match="data_norm"):
        PrivateSearchCV(make_private_pipeline(NoisyGDClassifier(classes=[0, 1])),
                        {"estimator__data_norm": [1.0, 4.0]}).fit(X, y)


@settings(max_examples=60, deadline=None)
@given(epsilon=st.floats(0.3, 8.0), log_delta=st.floats(-9.0, -4.0),
       share=st.floats(0.05, 0.6), selection=st.floats(0.0, 0.5),
       mean=st.sampled_from([1.0, 2.0, 10.0, 50.0]), shape=st.sampled_from([0.0, 1.0]),
       refit=st.sampled_from([0.0, 0.3, 0.7]),
       conversion=st.sampled_from(["gaussian", "improved"]))
def test_the_plan_never_exceeds_its_target(epsilon, log_delta, share, selection, mean,
                                           shape, refit, conversion):
    """Whatever the shares and the law: the total (17.5) at most the target, the
    statistics an untuned pipeline's, the refit an estimator's target within
    its rho, and dp_accounting's reading of the same events no smaller than
    the plan's by more than its grid error."""
    delta = 10.0 ** log_delta
    shares = {"preprocessing_share": share, "selection_share": selection,
              "estimator_conversion": conversion}
    try:
        b = acc.plan_search(epsilon=epsilon, delta=delta, mean=mean, shape=shape,
                            refit_share=refit, score_share=0.0 if refit else 0.05,
                            pipeline=shares)
    except ValueError as exc:   # too small a budget for the law: said, not planned
        assert "too small" in str(exc)
        event("refused: too small")
        return
    event("planned")
    assert b.epsilon <= epsilon and b.delta == delta
    split = acc.split_private_pipeline(epsilon=epsilon, delta=delta, **shares)
    assert (b.preprocessing_rho, b.delta_selection) == (split.rho_preprocessing,
                                                         split.delta_selection)
    assert acc.epsilon_to_rho(epsilon=b.run_epsilon, delta=delta,
                              method="gaussian") <= b.run_rho - b.score_rho
    if refit:
        assert acc.epsilon_to_rho(epsilon=b.refit_epsilon,
                                  delta=delta - b.delta_selection,
                                  method="gaussian") <= b.refit_rho
    assert b.selection_epsilon <= b.epsilon
    # On every 20th order of the plan's grid: the oracle's minimum can only be
    # larger, and stays within a few percent.
    oracle = dp_rdp.RdpAccountant(orders=list(_ORDERS[::20]))
    oracle.compose(dp_event.GaussianDpEvent(1 / math.sqrt(2 * b.preprocessing_rho)))
    run = dp_event.GaussianDpEvent(1 / math.sqrt(2 * b.run_rho))
    oracle.compose(run if mean == 1.0 else
                   dp_event.RepeatAndSelectDpEvent(run, mean, shape))
    if refit:
        oracle.compose(dp_event.GaussianDpEvent(1 / math.sqrt(2 * b.refit_rho)))
    d_s = b.delta_selection
    theirs = oracle.get_epsilon(delta - d_s) - math.log1p(-d_s)
    assert b.epsilon * (1 - 1e-4) <= theirs <= b.epsilon * 1.05


def test_a_pipeline_search_recorded_after_the_fact_counts_its_statistics(table):
    # ledger.record reads the search's figure: the statistics' rho and their
    # selections' delta with the selection's curve, as the search's own entry.
    X, y, _ = table
    s = _search(random_state=None).fit(X, y)
    ledger = PrivacyLedger(epsilon=5.0, delta=1e-5)
    ledger.record("tuned pipeline", s)
    (entry,) = ledger.entries
    b = s.privacy_guarantee_
    assert (entry.rho, entry.delta) == (b.preprocessing_rho, b.delta_selection)
    assert ledger.total.epsilon == pytest.approx(b.epsilon, rel=1e-9)


@pytest.mark.parametrize("gaussian", [False, True])
@pytest.mark.parametrize("kind", ["default", "held_out", "pipeline"])
def test_the_largest_search_a_ledger_takes(gaussian, kind):
    """A trial's ledger said 1.04 remained, and searches at 1.0 and 0.9 were
    refused: remaining_epsilon is a fit's. largest_search_epsilon is the
    boundary of what the ledger takes, for the search as it will be planned."""
    delta = 1e-5
    ledger = PrivacyLedger(epsilon=2.0, delta=delta)
    ledger.spend("earlier fit", rho=acc.epsilon_to_rho(
        epsilon=1.0, delta=delta, method="gaussian" if gaussian else "improved"),
        gaussian=gaussian)
    plan = {"default": dict(refit_share=0.0, score_share=0.05),
            "held_out": dict(refit_share=0.5, score_share=0.0),
            "pipeline": dict(refit_share=0.0, score_share=0.05, pipeline={
                **SHARES, "estimator_conversion": "gaussian"})}[kind]
    eps = acc.largest_search_epsilon(ledger, delta=delta, **plan)
    assert 0.0 < eps
    assert not ledger.would_exceed(acc.plan_search(epsilon=eps, delta=delta,
                                                   **plan))
    assert ledger.would_exceed(acc.plan_search(epsilon=eps * 1.001, delta=delta,
                                               **plan))
    # Nearly full: only a search whose runs are nearly pure noise still fits.
    full = PrivacyLedger(epsilon=1.0, delta=delta)
    full.spend("nearly all", rho=acc.epsilon_to_rho(epsilon=1.0, delta=delta) * 0.999)
    assert acc.largest_search_epsilon(full, delta=delta, **plan) < 0.01 * eps


def test_a_refused_search_and_a_pipeline_passed_whole_are_told_what_to_do():
    # Trial findings: a refused search was told "what remains" for a fit
    # (1.052, where the largest search that fitted was 0.59), and passing the
    # pipeline itself as plan_search's pipeline= raised an internal TypeError.
    delta = 1e-5
    ledger = PrivacyLedger(epsilon=2.0, delta=delta)
    ledger.spend("earlier fit", rho=acc.epsilon_to_rho(epsilon=1.5, delta=delta))
    plan = acc.plan_search(epsilon=1.0, delta=delta)
    with pytest.raises(acc.PrivacyBudgetExceeded,
                       match=r"for one more fit; a search's curve costs more.*"
                             r"largest_search_epsilon"):
        ledger.check(plan)
    with pytest.raises(acc.PrivacyBudgetExceeded, match=r"for one more fit\.$"):
        ledger.check(rho=acc.epsilon_to_rho(epsilon=1.5, delta=delta))
    with pytest.raises(TypeError, match="pipeline must be the dict of a pipeline's"):
        acc.plan_search(epsilon=1.0, delta=delta,
                        pipeline=make_private_pipeline(NoisyGDClassifier()))


def test_a_ledger_asked_about_a_pipeline_object_says_what_it_takes():
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    for obj in (make_private_pipeline(NoisyGDClassifier()), NoisyGDClassifier()):
        with pytest.raises(TypeError, match=r"A plan, not a .*estimator.plan\(X, y\)"):
            ledger.would_exceed(obj)
