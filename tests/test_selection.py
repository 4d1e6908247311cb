# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private hyper-parameter selection (privacy-accounting.md, Section 17).

The accounting is checked against dp_accounting's RepeatAndSelectDpEvent (an
independent implementation of Papernot and Steinke 2022), the law of the
number of runs against its closed forms, and PrivateSearchCV for what it
releases and what it reports.
"""

import math
import pickle
import warnings

import numpy as np
import pytest
from joblib import parallel_config
from scipy import stats
from sklearn.base import clone
from sklearn.model_selection import KFold

from skforget import (
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    PrivacyBudgetWarning,
)
from skforget import accounting as acc
from skforget.accounting._selection import _ORDERS
from skforget.datasets import load_dataset
from skforget.exceptions import UnlearningError
from skforget.model_selection import PrivateSearchCV

dp_rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
dp_event = pytest.importorskip("dp_accounting.dp_event")

# A dense grid for the oracle: its minimum over lambda-hat is then within 1e-6
# of the continuous one that skforget uses in closed form.
ORACLE_ORDERS = list(1.0 + np.geomspace(1e-3, 3e3, 3000))


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("mean", [2.0, 10.0, 100.0])
@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.3])
def test_selection_curve_matches_dp_accounting(shape, mean, rho):
    orders = np.array(ORACLE_ORDERS)
    ours = acc.selection_rdp(orders=orders, rho=rho, mean=mean, shape=shape)
    theirs = dp_rdp._compute_rdp_repeat_and_select(orders, orders * rho, mean,
                                                   shape)
    # Never looser than the oracle, and within 1e-4 of it.
    assert np.all(ours <= theirs * (1 + 1e-9) + 1e-12)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)


@pytest.mark.parametrize("mean,shape,refit_share,score_share", [
    (10.0, 0.0, 0.0, 0.05), (10.0, 0.0, 0.5, 0.0), (5.0, 1.0, 0.3, 0.0),
    (20.0, 0.5, 0.5, 0.0)])
def test_plan_search_total_matches_dp_accounting(refit_share, mean, shape,
                                                 score_share):
    delta = 1e-5
    b = acc.plan_search(epsilon=1.0, delta=delta, mean=mean, shape=shape,
                        refit_share=refit_share, score_share=score_share)
    assert b.epsilon <= 1.0
    ledger = dp_rdp.RdpAccountant(orders=list(_ORDERS))
    run = dp_event.GaussianDpEvent(1.0 / math.sqrt(2.0 * b.run_rho))
    ledger.compose(dp_event.RepeatAndSelectDpEvent(run, mean, shape))
    if refit_share:
        ledger.compose(dp_event.GaussianDpEvent(1.0 / math.sqrt(2.0 * b.refit_rho)))
    assert ledger.get_epsilon(delta) == pytest.approx(b.epsilon, rel=1e-4)
    # The target handed to each run's fit is covered by the selection's rho
    # net of the score's share.
    assert b.score_rho == pytest.approx(score_share * b.run_rho)
    # The estimators calibrate a target by the Gaussian inverse (spec 21.5).
    assert acc.epsilon_to_rho(epsilon=b.run_epsilon, delta=delta,
                              method="gaussian") <= b.run_rho - b.score_rho
    if refit_share:
        # The refit's share of the Rényi budget (Section 17.3)...
        assert b.refit_rho == pytest.approx(
            acc.epsilon_to_rho(epsilon=refit_share, delta=delta), rel=1e-12)
        assert acc.epsilon_to_rho(epsilon=b.refit_epsilon, delta=delta,
                                  method="gaussian") <= b.refit_rho
        # ...handed over as the epsilon of a Gaussian mechanism of that rho
        # (dp_accounting's PLD accountant as the oracle).
        from dp_accounting.pld import pld_privacy_accountant as pld

        accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
        accountant.compose(dp_event.GaussianDpEvent(
            1.0 / math.sqrt(2.0 * b.refit_rho)))
        assert b.refit_epsilon == pytest.approx(accountant.get_epsilon(delta),
                                                abs=1e-4)
    assert b.selection_epsilon <= b.epsilon


def test_plan_search_is_far_below_naive_composition():
    # Papernot and Steinke: mean 10, logarithmic law, total 1 -> about 0.55 per
    # run, against about 0.29 for ten fits composed.
    # In Rényi terms (the selection's own analysis):
    b = acc.plan_search(epsilon=1.0, delta=1e-5, mean=10, shape=0, refit_share=0)
    naive = acc.rho_to_epsilon(rho=acc.epsilon_to_rho(epsilon=1.0, delta=1e-5) / 10,
                               delta=1e-5)
    per_run = acc.rho_to_epsilon(rho=b.run_rho, delta=1e-5)
    assert per_run == pytest.approx(0.5504, abs=2e-3)
    assert naive < 0.3 < per_run
    # The target a run's fit gets is the Gaussian reading of the same rho
    # (spec 21.5), still far above ten fits composed naively under GDP.
    naive_gdp = acc.rho_to_epsilon(rho=acc.epsilon_to_rho(
        epsilon=1.0, delta=1e-5, method="gaussian") / 10, delta=1e-5,
        method="gaussian")
    assert b.run_epsilon == pytest.approx(acc.rho_to_epsilon(
        rho=b.run_rho * (1 - 1e-9), delta=1e-5, method="gaussian"), rel=1e-9)
    assert naive_gdp < 0.3 < b.run_epsilon


def test_one_run_is_the_run_itself():
    orders = np.array([1.5, 4.0, 32.0])
    np.testing.assert_array_equal(
        acc.selection_rdp(orders=orders, rho=0.02, mean=1, shape=0), orders * 0.02)


@pytest.mark.parametrize("shape", [0.0, 1.0, 2.5])
@pytest.mark.parametrize("mean", [1.5, 10.0])
def test_number_of_runs_follows_its_law(shape, mean):
    gamma = acc.repetition_gamma(mean=mean, shape=shape)
    rng = np.random.default_rng(0)
    draws = np.array([acc.sample_repetitions(rng, mean=mean, shape=shape)
                      for _ in range(20000)])
    assert draws.min() >= 1
    assert draws.mean() == pytest.approx(mean, rel=0.05)
    # P(K = 1) in closed form.
    if shape == 0.0:
        p1 = (1 - gamma) / math.log(1 / gamma)
    else:
        p1 = shape * (1 - gamma) / (gamma ** (-shape) - 1)
    assert np.mean(draws == 1) == pytest.approx(p1, abs=0.015)
    if shape == 1.0:  # geometric: gamma = 1 / mean
        assert gamma == pytest.approx(1 / mean, rel=1e-12)


@pytest.mark.parametrize("shape", [0.01, 0.05])
def test_small_shapes_and_means_near_one_are_solved(shape):
    for mean in (1.0 + 1e-7, 1.5, 10.0):
        gamma = acc.repetition_gamma(mean=mean, shape=shape)
        assert 0 < gamma <= 1
        eta_mean = shape * (1 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))
        assert eta_mean == pytest.approx(mean, rel=1e-6)


def test_plan_search_refuses_what_cannot_fit_the_budget():
    with pytest.raises(ValueError, match="too small for a search"):
        acc.plan_search(epsilon=1e-6, delta=1e-5, mean=1000, shape=2.0)
    with pytest.raises(ValueError, match="refit_share"):
        acc.plan_search(epsilon=1.0, delta=1e-5, refit_share=1.0)


# --- the estimator ----------------------------------------------------------


@pytest.fixture(scope="module")
def cancer():
    d = load_dataset("breast_cancer")
    return d.data, d.target


GRID = {"C": [1e-6, 0.03, 0.1, 1.0], "clip_norm": ["auto", 0.25]}


def _search(**kw):
    params = dict(epsilon=1.0, n_candidates=5, random_state=0)
    params.update(kw)
    return PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), GRID, **params)


def test_search_reports_one_figure_within_its_epsilon(cancer):
    X, y = cancer
    s = _search().fit(X, y)
    g = s.privacy_guarantee_
    assert g.epsilon <= 1.0 and g.delta == acc.default_delta(n_samples=len(y))
    # By default the selected run, trained on all rows, is the model.
    assert g.refit_rho == 0 and g.score_rho == pytest.approx(0.05 * g.run_rho)
    # Its own figure is the search's (17.4: one run's does not cover it).
    assert s.best_estimator_.privacy_guarantee_.epsilon == g.epsilon
    assert s.best_estimator_.privacy_guarantee_.rho <= g.run_rho * (1 + 1e-9)
    held = _search(validation_fraction=0.2).fit(X, y)
    assert held.privacy_guarantee_.epsilon <= 1.0
    assert held.best_estimator_.privacy_guarantee_.epsilon <= \
        held.privacy_guarantee_.refit_epsilon * (1 + 1e-9)
    assert "whole search" in str(g) and "does not undo" in str(g)
    assert set(s.best_params_) == set(GRID)
    # Released: the best run only. The number of runs, the other candidates and
    # the winner's position would each void Theorem 17.2 (review 17, F1).
    assert s.cv_results_["params"] == [s.best_params_]
    assert list(s.cv_results_["mean_test_score"]) == [s.best_score_]
    fitted = {k for k in vars(s) if k.endswith("_") and not k.startswith("_")}
    assert fitted == {"best_params_", "best_score_", "cv_results_", "best_estimator_",
                      "privacy_guarantee_", "n_features_in_", "classes_"}
    assert s.predict(X).shape == y.shape
    assert 0 <= s.best_score_ <= 1.5


def test_search_is_reproducible_with_a_seed_and_fresh_without(cancer):
    X, y = cancer
    a, b = _search().fit(X, y), _search().fit(X, y)
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)
    assert a.best_params_ == b.best_params_ and a.privacy_guarantee_.seeded
    c = _search(random_state=None, n_candidates=1).fit(X, y)
    d = _search(random_state=None, n_candidates=1).fit(X, y)
    assert not np.array_equal(c.best_estimator_.coef_, d.best_estimator_.coef_)


def test_the_selection_finds_a_much_better_candidate(cancer):
    # C=1e-9 regularises the model to nothing: the noisy score (std about
    # 0.015 here) tells it from C=0.1 whenever both were tried (geometric law
    # with mean 20: a single run has probability 1/20).
    X, y = cancer
    wins = [PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]),
                            {"C": [1e-9, 0.1]}, epsilon=4.0, n_candidates=20,
                            shape=1.0, random_state=seed).fit(X, y).best_params_["C"]
            for seed in range(5)]
    assert wins.count(0.1) >= 4


def _constant_warning(model):
    """Whether the released model alone gives the constant-class warning."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        model._warn_if_constant()
    return len(said)


@pytest.mark.parametrize("held_out", [None, 0.2])
def test_candidates_print_and_warn_nothing(cancer, capsys, held_out):
    # A candidate's printed plan and its warnings are outputs of a run that is
    # never released: one line or warning per run counts the runs (the seeds
    # below draw 2 to 39 runs), and the constant-class warning states a hidden
    # model's margin. Only the released model's are shown.
    X, y = cancer
    grid = {"C": [1e-9, 1e-6, "auto"]}   # most candidates predict one class
    for seed in range(6):
        s = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], verbose=1), grid,
                            epsilon=1.0, validation_fraction=held_out,
                            random_state=seed)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            s.fit(X, y)
        printed = capsys.readouterr().out
        model = s.best_estimator_
        # The refit runs silent too: its plan is a function of the selection,
        # and it would print before the search commits (an interrupt then
        # cancelled the search's ledger entry after its output had left).
        assert printed.count("noisy steps") == 0
        assert len(said) == _constant_warning(model)
        assert model.verbose == 1   # the user's setting, for later edits


def test_a_failed_search_leaves_the_search_and_its_ledger_as_they_were(
        cancer, monkeypatch):
    # The refit interrupted: the new selection must not sit beside the old
    # model, and the ledger must not record the search.
    from skforget import PrivacyLedger

    X, y = cancer
    ledger = PrivacyLedger(epsilon=10.0, delta=1e-5)
    s = _search(validation_fraction=0.2, ledger=ledger).fit(X, y)
    before, entries = dict(vars(s)), list(ledger.entries)
    fit = NoisyGDClassifier.fit

    def interrupted_refit(self, X_, y_, *args, **kw):
        if len(y_) == len(y):   # the refit reads every row; candidates 80 %
            raise KeyboardInterrupt("injected in the refit")
        return fit(self, X_, y_, *args, **kw)

    monkeypatch.setattr(NoisyGDClassifier, "fit", interrupted_refit)
    with pytest.raises(KeyboardInterrupt):
        s.set_params(random_state=1).fit(X, y)
    s.set_params(random_state=0)
    assert vars(s).keys() == before.keys()
    assert all(vars(s)[k] is v for k, v in before.items() if k.endswith("_"))
    assert list(ledger.entries) == entries


def test_every_run_is_planned_within_the_selection(cancer, monkeypatch):
    X, y = cancer
    seen = []
    fit = NoisyGDClassifier.fit

    def spy(self, *args, **kw):
        out = fit(self, *args, **kw)
        seen.append((self.epsilon, self.privacy_guarantee_.rho, self.random_state))
        return out

    monkeypatch.setattr(NoisyGDClassifier, "fit", spy)
    s = _search(random_state=None).fit(X, y)
    budget = s.privacy_guarantee_
    assert len(seen) >= 1  # no refit: the selected run is kept
    assert all(rho <= budget.run_rho - budget.score_rho for _, rho, _ in seen)
    assert all(seed is None for *_, seed in seen)  # fresh noise for every fit
    seen.clear()
    s = _search(random_state=None, validation_fraction=0.2).fit(X, y)
    budget = s.privacy_guarantee_
    runs, refit = seen[:-1], seen[-1]
    assert all(rho <= budget.run_rho for _, rho, _ in runs)
    assert refit[1] <= budget.refit_rho


def test_search_refuses_what_it_sets_or_cannot_score(cancer):
    X, y = cancer
    for name in ("epsilon", "relation", "group_size", "classes", "clip_rows"):
        with pytest.raises(ValueError, match="sets the candidates' epsilon"):
            PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]),
                            {name: [1, 2]}).fit(X, y)
    with pytest.raises(ValueError, match="does not have"):
        PrivateSearchCV(NoisyGDClassifier(), {"alpha": [1, 2]}).fit(X, y)
    # A drawn verbose reached set_params twice: a TypeError that named nothing.
    with pytest.raises(ValueError, match="names verbose: the candidates run "
                       "with verbose=0"):
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]),
                        {"verbose": [0, 1]}).fit(X, y)
    with pytest.raises(ValueError, match="public label set"):
        PrivateSearchCV(NoisyGDClassifier(), {"C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="public target_scale"):
        PrivateSearchCV(NoisyGDRegressor(), {"alpha": [1.0]},
                        target_bound=1.0).fit(X, y * 1.0)
    y_nan = y * 1.0
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        PrivateSearchCV(NoisyGDRegressor(target_scale=1.0), {"alpha": [1.0]},
                        target_bound=1.0).fit(X, y_nan)
    with pytest.raises(ValueError, match="group_size=2"):
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], group_size=2), {"C": [1.0]},
                        validation_fraction=0.2).fit(X, y)
    with pytest.raises(ValueError, match="target_bound is required"):
        PrivateSearchCV(NoisyGDRegressor(target_scale=1.0),
                        {"alpha": [1.0]}).fit(X, y * 1.0)
    # A drawn target_scale=None let a candidate read the targets (and the
    # released run warned about them); a drawn data_norm with clip_rows=False
    # could refuse a row at a later run, part-way through the search.
    with pytest.raises(ValueError, match="sets the candidates' epsilon"):
        PrivateSearchCV(NoisyGDRegressor(target_scale=1.0), {"target_scale": [None]},
                        target_bound=1.0).fit(X, y * 1.0)
    with pytest.raises(ValueError, match="draws data_norm while"):
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], clip_rows=False),
                        {"data_norm": [0.5, 1.0]}).fit(X, y)


def test_regressor_search(cancer):
    X, y = cancer
    target = X @ np.linspace(-1, 1, X.shape[1])
    s = PrivateSearchCV(NoisyGDRegressor(target_scale=1.0),
                        {"alpha": [0.1, 1.0, 10.0]},
                        target_bound=1.0, n_candidates=3, random_state=0)
    s.fit(X, target)
    assert s.privacy_guarantee_.epsilon <= 1.0
    assert np.isfinite(s.predict(X)).all()


def test_deletion_through_the_search(cancer):
    """Deletions are certified on a refitted model only (17.4): the default
    mode releases the selected run, whose noise was chosen with the records
    present, so its edits are refused, through the search or directly."""
    X, y = cancer
    s = _search(validation_fraction=0.2).fit(X, y)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        s.partial_unlearn(EditRequest(X, y, delete=[0, 1]))
    # Said once (by the model), with the selection's figure.
    tuned = [str(w.message) for w in said
             if "chosen by a PrivateSearchCV" in str(w.message)]
    assert len(tuned) == 1
    assert f"{s.privacy_guarantee_.selection_epsilon:.4g}" in tuned[0]
    assert s.best_estimator_.privacy_guarantee_.deletion.n_deleted == 2
    # Directly on the model too (a record store edits it so), after its checks.
    X2, y2 = np.delete(X, [0, 1], axis=0), np.delete(y, [0, 1])
    with pytest.warns(PrivacyBudgetWarning, match="chosen by a PrivateSearchCV"):
        s.best_estimator_.partial_unlearn(EditRequest(X2, y2, delete=[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)
        with pytest.raises(UnlearningError, match="rows"):   # refused first
            s.best_estimator_.partial_unlearn(EditRequest(X, y, delete=[0]))
    no_refit = _search(refit=False, validation_fraction=0.2).fit(X, y)
    with pytest.raises(ValueError, match="refit=True"):
        no_refit.partial_unlearn(EditRequest(X, y, delete=[0]))
    selected = _search().fit(X, y)
    # Its own figure is the search's: one run's does not cover it.
    g = selected.best_estimator_.privacy_guarantee_
    assert g.selected_by_search and not s.best_estimator_.privacy_guarantee_ \
        .selected_by_search
    assert (g.epsilon, g.delta) == (selected.privacy_guarantee_.epsilon,
                                    selected.privacy_guarantee_.delta)
    # Every figure it reports is the search's: its rho is one run's (about
    # half the search), so neither the advantage nor mu may be read from it,
    # and a ledger records the search, not the run (an audit's finding: the
    # advantage read 0.069 for a search whose figure gives 0.124).
    from skforget import PrivacyLedger

    assert g.advantage == acc.advantage_bound_dp(epsilon=g.epsilon, delta=g.delta)
    assert g.advantage > acc.advantage_bound(rho=g.rho) and g.mu is None
    with pytest.raises(ValueError, match="Record the search instead"):
        PrivacyLedger(epsilon=10.0, delta=1e-5).record("model",
                                                       selected.best_estimator_)
    assert "refuses edits" in str(g) and "will certify" not in str(g)
    before = selected.best_estimator_.coef_.copy()
    with pytest.raises(UnlearningError, match="selected with the records present"):
        selected.partial_unlearn(EditRequest(X, y, delete=[0]))
    with pytest.raises(UnlearningError, match="selected with the records present"):
        selected.best_estimator_.partial_unlearn(EditRequest(X, y, delete=[0]))
    np.testing.assert_array_equal(selected.best_estimator_.coef_, before)
    assert selected.best_estimator_.privacy_guarantee_.edits == ()
    # A pickled selected run stays refused.
    again = pickle.loads(pickle.dumps(selected.best_estimator_))
    with pytest.raises(UnlearningError):
        again.partial_unlearn(EditRequest(X, y, delete=[0]))


def test_the_sampler_draws_the_law_exactly_and_bounds_it():
    """Section 17.2: K comes from numpy's logarithmic-series and negative
    binomial samplers (K = 0 rejected), not from an inverted float CDF,
    whose error drew a law off the accounted one; laws the float arithmetic
    would decide are refused; a large shape does not overflow."""
    for mean, shape in ((2e4, 0.0), (10.0, 101.0), (1.0005, 0.0), (1.0005, 1.0)):
        with pytest.raises(ValueError, match="supported for a mean of 1"):
            acc.sample_repetitions(np.random.default_rng(0), mean=mean, shape=shape)
        with pytest.raises(ValueError, match="supported for a mean of 1"):
            acc.plan_search(epsilon=1.0, delta=1e-5, mean=mean, shape=shape)
    assert acc.sample_repetitions(np.random.default_rng(0), mean=1.0,
                                  shape=0.0) == 1
    rng = np.random.default_rng(1)
    draws = [acc.sample_repetitions(rng, mean=1000.0, shape=100.0)
             for _ in range(200)]
    assert 900 < np.mean(draws) < 1100
    # The pmf of the logarithmic law at k = 1..4, against 2e5 draws.
    gamma = acc.repetition_gamma(mean=10.0, shape=0.0)
    draws = np.random.default_rng(2).logseries(1 - gamma, size=200_000)
    ours = np.array([acc.sample_repetitions(np.random.default_rng(s), mean=10.0,
                                            shape=0.0) for s in range(4000)])
    for k in range(1, 5):
        pmf = (1 - gamma) ** k / (k * math.log(1 / gamma))
        assert np.mean(draws == k) == pytest.approx(pmf, abs=0.004)
        assert np.mean(ours == k) == pytest.approx(pmf, abs=0.03)


def test_a_column_target_scores_as_one_target_per_record(cancer):
    """A column vector y would have made the scorer compare every prediction
    with every target, a sensitivity of up to 2 / n: it is read as 1-d."""
    import pandas as pd

    X, y = cancer
    flat = _search().fit(X, y)
    with pytest.warns(Warning, match="column-vector y"):
        column = _search().fit(X, pd.DataFrame({"target": y}))
    assert column.best_score_ == flat.best_score_
    assert column.best_params_ == flat.best_params_


def test_a_selected_run_stays_refused_across_pickles_and_a_fresh_fit_clears_it(
        cancer):
    """A search pickled before selected runs refused edits marks its model's
    guarantee when loaded (no refit on a validation split: the model is the
    selected run); the user's own fit of the model is a run of its own."""
    import dataclasses

    def as_before_the_fix(search):   # the run's own guarantee, unmarked
        model = search.best_estimator_
        model.privacy_guarantee_ = dataclasses.replace(
            model.privacy_guarantee_, selected_by_search=False)

    X, y = cancer
    s = _search().fit(X, y)
    as_before_the_fix(s)
    loaded = pickle.loads(pickle.dumps(s))
    assert loaded.best_estimator_.privacy_guarantee_.selected_by_search
    with pytest.raises(UnlearningError, match="selected with the records present"):
        loaded.partial_unlearn(EditRequest(X, y, delete=[0]))
    refit = _search(validation_fraction=0.2).fit(X, y)
    assert not pickle.loads(pickle.dumps(refit)).best_estimator_ \
        .privacy_guarantee_.selected_by_search
    part = _search(validation_fraction=0.2, refit=False).fit(X, y)
    as_before_the_fix(part)
    with pytest.raises(UnlearningError, match="selected with the records present"):
        pickle.loads(pickle.dumps(part)).best_estimator_.partial_unlearn(
            EditRequest(X, y, delete=[0]))
    model = loaded.best_estimator_
    model.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert model.privacy_guarantee_.deletion.n_deleted == 1


def test_every_record_a_run_would_refuse_is_refused_before_the_first_run(
        cancer, monkeypatch):
    """Section 17.4: a label outside the classes or (clip_rows=False) a row
    beyond data_norm, wherever the split puts it, and a non-finite target
    whatever scikit-learn's assume_finite, stop the search before any run."""
    import sklearn

    X, y = cancer
    runs = []
    fit = NoisyGDClassifier.fit
    monkeypatch.setattr(NoisyGDClassifier, "fit",
                        lambda self, *a, **k: runs.append(1) or fit(self, *a, **k))
    bad = np.asarray(y).copy()
    bad[-1] = 7
    for vf in (None, 0.2):
        with pytest.raises(ValueError, match=r"y\[568\] is not one of"):
            _search(validation_fraction=vf).fit(X, bad)
    wide = np.asarray(X, dtype=float) / np.linalg.norm(X, axis=1).max()
    wide[3] *= 2.0
    with pytest.raises(ValueError, match=r"Row 3 of X has an L2 norm above data_norm"):
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], clip_rows=False),
                        {"C": [0.1, 1.0]}, validation_fraction=0.2,
                        random_state=0).fit(wide, y)
    assert runs == []
    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(300, 4)) / 3
    yr = Xr[:, 0] * 0.5
    yr[7] = np.nan
    with sklearn.config_context(assume_finite=True):
        with pytest.raises(ValueError, match="NaN"):
            PrivateSearchCV(NoisyGDRegressor(target_scale=1.0), {"alpha": [1.0]},
                            target_bound=1.0, random_state=0).fit(Xr, yr)


def test_a_non_finite_error_scores_as_a_miss():
    """Lemma 17.1: a utility stays in [0, 1] whatever reaches the scorer."""
    s = PrivateSearchCV(NoisyGDRegressor(target_scale=1.0), {"alpha": [1.0]},
                        target_bound=1.0)

    class Model(NoisyGDRegressor):
        def predict(self, X):
            return np.array([0.0, np.nan, np.inf, 0.5])

    u = s._utilities(Model(), None, np.array([0.25, 0.0, 0.0, 0.5]))
    np.testing.assert_array_equal(u, [0.75, 0.0, 0.0, 1.0])


def test_a_seeded_search_leaves_no_derived_seed_on_its_model(cancer):
    """The run's derived seed would replay its noise from the model alone."""
    X, y = cancer
    for vf in (None, 0.2):
        s = _search(validation_fraction=vf).fit(X, y)
        assert s.privacy_guarantee_.seeded
        model = s.best_estimator_
        assert model.random_state is None
        assert model._fit_params["random_state"] is None


def test_search_keeps_no_training_row_and_clones(cancer):
    X, y = cancer
    s = _search().fit(X, y)
    blob = pickle.dumps(s)
    assert all(row.tobytes() not in blob for row in np.asarray(X))
    assert clone(s).get_params()["param_distributions"] == GRID


def test_scipy_distributions_are_drawn(cancer):
    X, y = cancer
    s = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]),
                        {"C": stats.loguniform(1e-3, 1.0)}, n_candidates=3,
                        random_state=0).fit(X, y)
    assert 1e-3 <= s.best_params_["C"] <= 1.0


def test_sklearn_model_selection_says_what_it_spends(cancer):
    from sklearn.model_selection import GridSearchCV, ShuffleSplit, cross_val_score

    from skforget import OutputPerturbationClassifier, PrivacyBudgetWarning

    X, y = cancer
    kf3 = KFold(3, shuffle=True, random_state=0)   # folds drawn without the rows
    # The figure the search spends: 2 candidates x 3 splits and a refit, of
    # which each record trains 2 x 2 + 1 (its fold holds it out once).
    with pytest.warns(PrivacyBudgetWarning, match=r"2 candidate\(s\) x 3 split\(s\) "
                      r"and a refit on all rows, 5 of them train on each record "
                      r"\(its fold holds it out once per candidate\): epsilon") as rec:
        GridSearchCV(NoisyGDClassifier(classes=[0, 1]), {"C": [0.1, 1.0]},
                     cv=kf3).fit(X, y)
    assert any("PrivateSearchCV" in str(w.message) and "ledger=" in str(w.message)
               for w in rec)
    # The refit counts them too (scikit-learn 1.9 keeps the splits in
    # n_splits_: the refit fell back to "10 such fits").
    assert not any("such fits" in str(w.message) for w in rec)
    with pytest.warns(PrivacyBudgetWarning, match=r"1 candidate\(s\) x 2 split"):
        cross_val_score(OutputPerturbationClassifier(classes=[0, 1]), X, y,
                        cv=KFold(2, shuffle=True, random_state=0))
    # Another splitter (which may train on a record in every fit): every fit.
    with pytest.warns(PrivacyBudgetWarning, match=r"1 candidate\(s\) x 3 split"
                      r"\(s\), 3 fits: epsilon"):
        cross_val_score(NoisyGDClassifier(classes=[0, 1]), X, y,
                        cv=ShuffleSplit(3, test_size=0.3, random_state=0))
    # A grid over epsilon fits candidates at other figures: each candidate's
    # fits say theirs, "at this fit's figure", bound neither way (an audit's
    # finding: a grid over [0.5, 4] said 1.45 where its fits spent 9.14; a
    # second reader's: "at least 9.4" where 6.04 was spent); and successive
    # halving counts one iteration here: "at least".
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        GridSearchCV(NoisyGDClassifier(classes=[0, 1]), {"epsilon": [0.5, 4.0]},
                     cv=kf3).fit(X, y)
    said = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
    for one in ("(0.5", "(4, "):
        assert any(m.split("Each fit is ")[1].startswith(one) and
                   "5 of them train on each record (its fold holds it out once "
                   "per candidate) at this fit's figure: epsilon " in m
                   and "at least" not in m for m in said)
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV

    with pytest.warns(PrivacyBudgetWarning, match=r"this iteration makes .* "
                      r"epsilon at least"):
        HalvingGridSearchCV(NoisyGDClassifier(classes=[0, 1]),
                            {"C": [0.01, 0.1, 1.0, 10.0]}, factor=2,
                            cv=kf3).fit(X, y)
    # Neither a plain fit nor the private search warns.
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)
        NoisyGDClassifier(classes=[0, 1]).fit(X, y)
        _search(n_candidates=2).fit(X, y)


@pytest.mark.parametrize("seed", [0, np.random.RandomState(0)])
def test_model_selection_with_a_seed_says_no_figure_covers_the_fits(cancer, seed):
    # Every clone draws the same noise: the fits cannot be composed as
    # independent mechanisms, and the warning must not say their figures add.
    from sklearn.model_selection import cross_val_score

    from skforget import PrivacyBudgetWarning

    X, y = cancer
    kf2 = KFold(2, shuffle=True, random_state=5)   # folds drawn without the rows
    with pytest.warns(PrivacyBudgetWarning) as rec:
        cross_val_score(NoisyGDClassifier(classes=[0, 1], random_state=seed), X, y,
                        cv=kf2)
    text = str(rec[0].message)
    assert "every fit draws the same noise, so no figure covers the fits " \
        "together; with random_state=None their Rényi figures would add (this one " \
        "makes 1 candidate(s) x 2 split(s), 1 of them train on each record" in text
    assert "random_state=0" not in text      # the seed is not shown
    with pytest.warns(PrivacyBudgetWarning) as rec:
        cross_val_score(NoisyGDClassifier(classes=[0, 1]), X, y, cv=kf2)
    assert "same noise" not in str(rec[0].message)
    assert "The fits share rows and their Rényi figures add" in str(rec[0].message)
    # A pipeline whose private steps alone are seeded draws their same noise.
    from skforget.pipeline import make_private_pipeline

    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]), epsilon=1.0,
                                 random_state=seed)
    with pytest.warns(PrivacyBudgetWarning) as rec:
        cross_val_score(pipe, X, y, cv=kf2)
    assert any("every fit draws the same noise" in str(w.message) for w in rec)


def test_calibrating_a_private_model_on_private_rows_warns(cancer):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    X, y = cancer
    with pytest.warns(PrivacyBudgetWarning, match="CalibratedClassifierCV"):
        CalibratedClassifierCV(NoisyGDClassifier(classes=[0, 1]), cv=2).fit(X, y)
    model = NoisyGDClassifier(classes=[0, 1]).fit(X[:300], y[:300])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)
        # Calibrated on rows treated as public, the fitted model frozen.
        CalibratedClassifierCV(FrozenEstimator(model)).fit(X[300:], y[300:])


def test_a_pipeline_with_private_preprocessing_is_tuned_on_a_clone():
    # Refused until its statistics were released once, outside the runs
    # (Theorem 17.5; tests/test_selection_pipeline.py): the pipeline given is
    # left unfitted, as scikit-learn's searches leave their estimator.
    pd = pytest.importorskip("pandas")
    from skforget.pipeline import PrivatePipeline, make_private_pipeline

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(18, 90, 600).astype(float),
                      "hours": rng.normal(40, 8, 600)})
    target = X["age"].to_numpy() / 90.0
    pipe = make_private_pipeline(NoisyGDRegressor(target_scale=1.0), epsilon=1.0)
    search = PrivateSearchCV(pipe, {"estimator__alpha": [0.1, 1.0]},
                             target_bound=1.0, n_candidates=2).fit(X, target)
    assert isinstance(search.best_estimator_, PrivatePipeline)
    assert search.best_params_["estimator__alpha"] in (0.1, 1.0)
    assert not hasattr(pipe.named_steps["preprocess"], "numeric_columns_")
    assert not hasattr(pipe, "budget_")


def test_a_search_on_a_database_serves_its_requests_and_ends_a_pipeline(cancer):
    """Two findings of a sweep: a search fitted on a Database dropped its
    version, so its refitted model refused every request built on it; and a
    ForgetPipeline ending in a search raised a TypeError for its guarantee."""
    from sklearn.preprocessing import FunctionTransformer

    from skforget import Database
    from skforget.pipeline import ForgetPipeline

    X, y = cancer
    db = Database(X, y)
    s = _search(validation_fraction=0.2, n_candidates=2).fit(db)
    assert s.best_estimator_.database_version_ == db.version
    with pytest.warns(PrivacyBudgetWarning):
        s.partial_unlearn(EditRequest(db, delete=[0]))
    pipe = ForgetPipeline([("id", FunctionTransformer()),
                           ("search", _search(validation_fraction=0.2,
                                              n_candidates=2))]).fit(X, y)
    assert pipe.privacy_guarantee_ is pipe[-1].privacy_guarantee_


def test_a_search_in_sklearn_model_selection_warns_with_its_own_figure(cancer):
    """Inside cross_val_score the only warning was the released run's, with a
    run's figure (0.487 per fit, 0.888 in all where the searches spent 2.47):
    the search now says its own, and its runs' stay hidden."""
    from sklearn.model_selection import cross_val_score

    X, y = cancer
    search = _search(random_state=None, n_candidates=2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cross_val_score(search, X, y, cv=KFold(3, shuffle=True, random_state=0))
    said = [str(w.message) for w in rec if issubclass(w.category, PrivacyBudgetWarning)]
    assert said and all(m.startswith("PrivateSearchCV.fit runs inside") for m in said)
    from skforget.model_selection._search import SCORE_SHARE

    # As the search plans it: no validation part, so no refit, and the score
    # on the run's own rows taking its share.
    budget = acc.plan_search(epsilon=1.0, delta=1e-5, mean=2.0, refit_share=0.0,
                             score_share=SCORE_SHARE)
    # Each record is trained by 2 of the 3 folds' searches.
    total = acc._selection.rdp_curve_epsilon(
        orders=acc.LEDGER_ORDERS, rdp=2 * acc.search_curve(budget), delta=1e-5)[0]
    assert "Each fit is (1, 1e-05)-DP alone" in said[0]
    assert f"2 of them train on each record (its fold holds it out once per " \
        f"candidate): epsilon {total:.3g} at delta 1e-05" in said[0]


def test_the_released_score_carries_the_noise_lemma_17_1b_prices(cancer):
    # An audit replaced score_rho by run_rho in the score's noise (a score 20
    # times the accounted rho) and every test of this file still passed. With
    # one candidate (no selection) the released run is the model, so the
    # released score minus the model's own mean utility is the noise drawn:
    # its spread must be search_score_noise's, g / (N sqrt(2 s rho_run)).
    X, y = cancer
    X, y = X[:200], y[:200]
    noise = []
    for seed in range(150):
        s = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), {"C": [0.1]},
                            epsilon=1.0, n_candidates=1, random_state=seed).fit(X, y)
        noise.append(s.best_score_ - np.mean(s._utilities(s.best_estimator_, X, y)))
    g = s.privacy_guarantee_
    budget = acc.plan_search(epsilon=1.0, delta=g.delta, mean=1.0, refit_share=0.0,
                             score_share=g.score_rho / g.run_rho)
    sigma = acc.search_score_noise(budget=budget, n_scored=200)
    assert sigma == pytest.approx(1 / (200 * math.sqrt(2 * g.score_rho)), rel=1e-9)
    assert g.score_rho == pytest.approx(0.05 * g.run_rho)
    # 150 draws: the sample deviation is within 15 % of sigma with probability
    # above 0.99 (chi-square), and the noise centred.
    assert 0.85 * sigma < np.std(noise) < 1.15 * sigma, (np.std(noise), sigma)
    assert abs(np.mean(noise)) < 4 * sigma / math.sqrt(150)
    held = acc.search_score_noise(budget=budget, n_scored=40, group_size=2,
                                  held_out=True)
    assert held == pytest.approx(2 / (40 * math.sqrt(2 * budget.run_rho)), rel=1e-9)


def test_a_returned_model_that_is_mostly_noise_says_so(cancer):
    # Trial finding: the run's advice that its noise dominates was silenced,
    # and a search returned models of R^2 far below 0 without a word. It is
    # the returned model's, said once, naming the run's share of the budget.
    X, _ = cancer
    target = X @ np.linspace(-1, 1, X.shape[1])
    for held_out in (None, 0.2):
        s = PrivateSearchCV(NoisyGDRegressor(target_scale=1.0), {"alpha": [1e-4]},
                            target_bound=1.0, n_candidates=3, random_state=0,
                            validation_fraction=held_out)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            s.fit(X, target)
        noisy = [str(w.message) for w in said if "mostly noise" in str(w.message)]
        assert len(noisy) == 1, [str(w.message) for w in said]
        assert "the search's share of the budget: at epsilon=" in noisy[0]
        assert s.best_estimator_._plan.noise_dominated


def test_sklearn_folds_that_read_the_labels_are_said_to_compose_to_no_figure(cancer):
    # cv=<int> makes a classifier's folds a StratifiedKFold, which moves other
    # records between folds when one record's label changes: the fits'
    # figures do not add (privacy-accounting.md, 20.4).
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score

    X, y = cancer
    for cv, said in [(3, "cv=3 for a classifier, which scikit-learn makes a "
                      "StratifiedKFold"),
                     (StratifiedKFold(3), "StratifiedKFold")]:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            GridSearchCV(NoisyGDClassifier(classes=[0, 1]), {"C": [0.1, 1.0]},
                         cv=cv).fit(X, y)
        # Said once: the fits run one after another in this thread.
        assert len([w for w in rec if w.category is PrivacyBudgetWarning]) == 1
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            with parallel_config(backend="threading"):
                GridSearchCV(NoisyGDClassifier(classes=[0, 1]), {"C": [0.1, 1.0]},
                             cv=cv, n_jobs=2).fit(X, y)
        texts = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
        # In worker threads every fit says it, and the refit (in this thread)
        # says the same (it said "7 fits: epsilon ..., pass ledger=", which a
        # ledger then refused: a new-user trial).
        assert len(texts) == 7 and len(set(texts)) == 1
        text = texts[-1]
        assert f"folds were drawn by reading the labels ({said})" in text
        assert "no figure covers the fits together" in text
        assert "Rényi figures add" not in text and "Pass ledger=" not in text
        assert "cv=KFold(n_splits=3, shuffle=True, random_state=0), 5 of these " \
            "fits would train on each record" in text
    # A regressor's cv=<int> is a KFold: a partition of positions.
    from skforget import NoisyGDRegressor

    with pytest.warns(PrivacyBudgetWarning, match="1 of them train on each record"):
        cross_val_score(NoisyGDRegressor(target_scale=1.0), X, y.astype(float), cv=2)


def test_the_count_is_per_unit_and_at_least_inside_a_nested_search(cancer):
    # Second reader (session 18), F4, F5: a partition spreads a unit of
    # several records over the folds (every fit may train on part of it), and
    # an enclosing cross-validation repeats the inner search's fits.
    from sklearn.model_selection import GridSearchCV, cross_val_score

    X, y = cancer
    kf3 = KFold(3, shuffle=True, random_state=0)
    with pytest.warns(PrivacyBudgetWarning, match=r"2 candidate\(s\) x 3 split\(s\) "
                      r"and a refit on all rows, 7 fits: epsilon"):
        GridSearchCV(NoisyGDClassifier(classes=[0, 1], group_size=2),
                     {"C": [0.1, 1.0]}, cv=kf3).fit(X, y)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cross_val_score(GridSearchCV(NoisyGDClassifier(classes=[0, 1]),
                                     {"C": [0.1, 1.0]}, cv=kf3), X, y, cv=kf3)
    said = {str(w.message) for w in rec if w.category is PrivacyBudgetWarning}
    assert any("a refit on its rows, 5 of them train on each record (its fold holds "
               "it out once per candidate) inside an enclosing model selection, "
               "which repeats them: epsilon at least" in m for m in said)
    assert not any("refit on all rows" in m for m in said)


def test_a_budget_written_on_the_estimator_is_not_silently_replaced():
    """The search's epsilon is what it spends in all: one written on the
    estimator (or a private pipeline's total) below it would be spent past
    what its author wrote, and is refused before any run; one above it is
    replaced with a warning; a seed there does not seed the search (a new-user
    trial wrote epsilon=0.1 on the pipeline and released a model at 1.0)."""
    from skforget.pipeline import make_private_pipeline

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3)) / 2
    y = (X[:, 0] > 0).astype(int)
    grid = {"C": [0.1, 1.0]}
    with pytest.raises(ValueError, match=r"NoisyGDClassifier has epsilon=0.1, "
                       r"below the search's epsilon=1.*pass epsilon=0.1 to "
                       "PrivateSearchCV"):
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], epsilon=0.1),
                        grid).fit(X, y)
    with pytest.raises(ValueError, match="has delta=1e-09, below the search's"):
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], delta=1e-9),
                        grid).fit(X, y)
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]), epsilon=0.1)
    with pytest.raises(ValueError, match="PrivatePipeline has epsilon=0.1"):
        PrivateSearchCV(pipe, {"estimator__C": [0.1, 1.0]}).fit(X, y)
    with pytest.warns(UserWarning, match=r"epsilon=2.0 is replaced by the "
                      r"search's figures; the search spends its own epsilon=1"):
        search = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], epsilon=2.0),
                                 grid, random_state=0).fit(X, y)
    assert search.privacy_guarantee_.epsilon <= 1.0
    # Written on a pipeline's estimator: its part of each candidate's total
    # replaces it (a second reader found it replaced without a word).
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]), epsilon=1.0)
    pipe.set_params(estimator__epsilon=5.0)
    with pytest.warns(UserWarning, match=r"the estimator's epsilon=5.0 in "
                      r"PrivatePipeline is replaced by its part"):
        PrivateSearchCV(pipe, {"estimator__C": [0.1, 1.0]},
                        random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match=r"random_state=3 does not seed the "
                      "search"):
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], random_state=3),
                        grid).fit(X, y)
    # Written on the search, or left at the defaults: nothing to say; nor for
    # a fitted pipeline, whose estimator holds its share of the split.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message="PrivateSearchCV:")
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), grid, epsilon=0.5,
                        random_state=3).fit(X, y)
        # The same figure written on both: nothing replaced.
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], epsilon=0.5), grid,
                        epsilon=0.5, random_state=3).fit(X, y)
        fitted = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]),
                                       random_state=0).fit(X, y)
        PrivateSearchCV(fitted, {"estimator__C": [0.1, 1.0]},
                        random_state=3).fit(X, y)
        # Its estimator taken out holds the pipeline's share, not a number
        # its author wrote: nothing to say of it either.
        PrivateSearchCV(clone(fitted[-1]), grid, random_state=3).fit(X, y)
        # An earlier search's model: its epsilon is that search's run's, not
        # its author's (a second reader saw it refused).
        first = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), grid,
                                random_state=3).fit(X, y)
        PrivateSearchCV(first.best_estimator_, grid, random_state=4).fit(X, y)


@pytest.mark.parametrize("name,instead", [
    ("param_grid", "param_distributions"), ("n_iter", "n_candidates, the mean"),
    ("cv", "no folds"), ("scoring", "no scorer: classifiers score accuracy"),
    ("n_jobs", "no parallel candidates")])
def test_a_scikit_learn_search_parameter_names_what_is_there_instead(name,
                                                                    instead):
    # A new-user trial met bare "unexpected keyword argument" errors.
    with pytest.raises(TypeError, match=rf"PrivateSearchCV has no {name}= \(a "
                       rf"scikit-learn search's\): {instead}"):
        PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), **{name: 3})
    search = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), {"C": [1.0]})
    assert clone(search).get_params()["param_distributions"] == {"C": [1.0]}
    assert pickle.loads(pickle.dumps(search)).n_candidates == 10
