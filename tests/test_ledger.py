# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy ledger (privacy-accounting.md, Section 20).

Composition is checked against dp_accounting's RdpAccountant (Gaussian and
repeat-and-select events) to 1e-4; the estimators are checked to refuse before
any training pass and to record what their guarantee reports; the ledger's
identity is checked through clone, pickle, skops and GridSearchCV with one and
two worker processes.
"""

import copy
import math
import os
import pickle
import re
import signal
import threading
import warnings

import joblib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

import skforget._noisy_gd as noisy_gd_module
import skforget._output_perturbation as op_module
from skforget import (
    CoarseRangeWarning,
    Database,
    EditRequest,
    LedgerUnreachableError,
    NoisyGDClassifier,
    NoisyGDRegressor,
    OutputPerturbationClassifier,
    PrivacyBudgetExceeded,
    PrivacyBudgetWarning,
    PrivacyLedger,
    PrivacyLeakWarning,
)
from skforget import accounting as acc
from skforget.model_selection import PrivateSearchCV
from skforget.pipeline import make_private_pipeline
from skforget.store import SharedLedger

dp_rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
dp_event = pytest.importorskip("dp_accounting.dp_event")

DELTA = 1e-5
# A dense oracle grid: its minimum is within 1e-6 of the continuous one.
ORACLE_ORDERS = list(1.0 + np.geomspace(1e-3, 3e3, 3000))


def _gaussian(rho):
    return dp_event.GaussianDpEvent(1.0 / math.sqrt(2.0 * rho))


# --- composition ---------------------------------------------------------------
@pytest.mark.parametrize("rhos", [[0.03], [0.03] * 10, [1e-4, 0.02, 0.3],
                                  [0.5, 0.5, 2.0], list(np.geomspace(1e-5, 0.1, 7))])
def test_gaussian_releases_compose_like_dp_accounting(rhos):
    ledger = PrivacyLedger(epsilon=1e6, delta=DELTA)
    oracle = dp_rdp.RdpAccountant(orders=ORACLE_ORDERS)
    for i, rho in enumerate(rhos):
        ledger.spend(f"release {i}", rho=rho)
        oracle.compose(_gaussian(rho))
    assert ledger.total.epsilon == pytest.approx(oracle.get_epsilon(DELTA), rel=1e-4)
    # Never looser than the oracle's grid (a continuous minimum).
    assert ledger.total.epsilon <= oracle.get_epsilon(DELTA) * (1 + 1e-9)


@pytest.mark.parametrize("rhos", [[0.03], [0.03] * 10, [1e-4, 0.02, 0.3]])
def test_gaussian_entries_compose_as_gdp(rhos):
    """Section 20.2: Gaussian entries add mu^2 and convert exactly (the PLD
    accountant of dp_accounting is the oracle); one Rényi entry makes the
    total Rényi again, and the Gaussian reading is never above the Rényi one."""
    pld = pytest.importorskip("dp_accounting.pld.pld_privacy_accountant")
    ledger = PrivacyLedger(epsilon=1e6, delta=DELTA)
    oracle = pld.PLDAccountant()
    for i, rho in enumerate(rhos):
        ledger.spend(f"release {i}", rho=rho, gaussian=True)
        oracle.compose(_gaussian(rho))
    assert ledger.total.epsilon == pytest.approx(oracle.get_epsilon(DELTA), rel=1e-3)
    renyi = acc.rho_to_epsilon(rho=sum(rhos), delta=DELTA)
    assert ledger.total.epsilon < renyi
    ledger.spend("a Rényi release", rho=1e-6)
    assert ledger.total.epsilon >= renyi


def test_a_fit_at_the_budget_fits_the_ledger():
    """An estimator planned for (epsilon, delta) spends exactly epsilon of a
    ledger at delta (both read the Gaussian profile), and the ledger's
    remaining_epsilon plans a second fit that fits exactly."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    X /= np.linalg.norm(X, axis=1).max()
    y = (X[:, 0] > 0).astype(int)
    ledger = PrivacyLedger(epsilon=2.0, delta=DELTA)
    NoisyGDClassifier(classes=[0, 1], delta=DELTA, ledger=ledger).fit(X, y)
    assert ledger.total.epsilon == pytest.approx(1.0, rel=1e-6)
    eps = ledger.remaining_epsilon
    NoisyGDClassifier(classes=[0, 1], delta=DELTA, epsilon=eps, ledger=ledger).fit(X, y)
    assert ledger.total.epsilon <= 2.0
    with pytest.raises(acc.PrivacyBudgetExceeded):
        NoisyGDClassifier(classes=[0, 1], delta=DELTA, epsilon=0.01,
                          ledger=ledger).fit(X, y)


@pytest.mark.parametrize("mean,shape,refit_share", [(10.0, 0.0, 0.0),
                                                    (5.0, 1.0, 0.5)])
def test_a_search_and_fits_compose_like_dp_accounting(mean, shape, refit_share):
    budget = acc.plan_search(epsilon=1.0, delta=DELTA, mean=mean, shape=shape,
                             refit_share=refit_share)
    ledger = PrivacyLedger(epsilon=100.0, delta=DELTA)
    ledger.spend("fit", rho=0.02)
    ledger.spend("search", curve=acc.search_curve(budget))
    ledger.spend("edit", rho=0.005)
    oracle = dp_rdp.RdpAccountant(orders=list(acc.LEDGER_ORDERS))
    oracle.compose(_gaussian(0.02))
    oracle.compose(dp_event.RepeatAndSelectDpEvent(_gaussian(budget.run_rho), mean,
                                                   shape))
    if refit_share:
        oracle.compose(_gaussian(budget.refit_rho))
    oracle.compose(_gaussian(0.005))
    assert ledger.total.epsilon == pytest.approx(oracle.get_epsilon(DELTA), rel=1e-4)
    # The search alone is what it reports.
    alone = PrivacyLedger(epsilon=100.0, delta=DELTA)
    alone.spend("search", curve=acc.search_curve(budget))
    assert alone.total.epsilon == pytest.approx(budget.epsilon, rel=1e-9)


def test_curves_add_never_epsilon_delta_pairs():
    # Ten fits of epsilon 1: 3.57 order by order, not 10 (Section 20.2).
    rho = acc.epsilon_to_rho(epsilon=1.0, delta=DELTA)
    ledger = PrivacyLedger(epsilon=5.0, delta=DELTA)
    for i in range(10):
        ledger.spend(f"fit {i}", rho=rho)
    assert ledger.total.epsilon == pytest.approx(3.5713267063, rel=1e-9)
    with pytest.raises(PrivacyBudgetExceeded, match="past its budget of 5"):
        for i in range(10):
            ledger.spend(f"more {i}", rho=rho)
    assert ledger.total.epsilon <= 5.0


rhos = st.lists(st.floats(1e-6, 0.5), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(rhos=rhos, budget=st.floats(0.5, 20.0), extra=st.floats(1e-6, 0.5))
def test_composition_properties(rhos, budget, extra):
    ledger = PrivacyLedger(epsilon=1e6, delta=DELTA)
    for i, r in enumerate(rhos):
        ledger.spend(str(i), rho=r)
    total = ledger.total.epsilon
    # Order-free, monotone, one conversion of the summed rho.
    shuffled = PrivacyLedger(epsilon=1e6, delta=DELTA)
    for i, r in enumerate(reversed(rhos)):
        shuffled.spend(str(i), rho=r)
    assert shuffled.total.epsilon == pytest.approx(total, rel=1e-12)
    assert total == pytest.approx(acc.rho_to_epsilon(rho=sum(rhos), delta=DELTA),
                                  rel=1e-12)
    assert total >= max(acc.rho_to_epsilon(rho=r, delta=DELTA) for r in rhos)
    if len(rhos) > 1:
        assert total < sum(acc.rho_to_epsilon(rho=r, delta=DELTA) for r in rhos)
    # Remaining: spending it fits, a hair more does not.
    capped = PrivacyLedger(epsilon=budget, delta=DELTA)
    for i, r in enumerate(rhos):
        if not capped.would_exceed(rho=r):
            capped.spend(str(i), rho=r)
    assert capped.total.epsilon <= budget
    rem = capped.remaining_rho
    # What remains is for a release of the kind the ledger holds: Rényi here,
    # Gaussian while it is empty (the estimators' default kind).
    kind = {"gaussian": not capped.entries}
    assert not capped.would_exceed(rho=rem, **kind)
    if rem > 0:
        assert capped.would_exceed(rho=rem * (1 + 1e-6) + 1e-15, **kind)
        eps = capped.remaining_epsilon
        assert acc.epsilon_to_rho(epsilon=eps, delta=DELTA) <= rem
    else:
        assert capped.would_exceed(rho=1e-12) or capped.total.epsilon == budget


entry_kinds = st.lists(st.tuples(
    st.sampled_from(["gaussian", "renyi", "excluded", "curve"]),
    st.floats(1e-5, 0.3), st.floats(1e-9, 1e-6)), min_size=1, max_size=6)


def _spend(ledger, i, kind, rho, delta):
    if kind == "gaussian":
        ledger.spend(f"e{i}", rho=rho, gaussian=True)
    elif kind == "renyi":
        ledger.spend(f"e{i}", rho=rho)
    elif kind == "excluded":
        ledger.spend(f"e{i}", rho=rho, delta=delta)
    else:   # a curve above q*rho, as a selection's (Section 17.2)
        ledger.spend(f"e{i}", curve=lambda q, r=rho: q * r + 2 * r)


@settings(max_examples=60, deadline=None)
@given(entries=entry_kinds)
def test_mixed_entries_compose_order_free_and_monotone(entries):
    """An audit of the tests found the composition properties checked on
    Rényi entries only, where the estimators record Gaussian ones, pipelines
    entries with excluded events, and searches curves. With all four kinds:
    the total does not depend on the order, never falls when an entry is
    added, is at least every entry's own figure (and, for one kind, at most
    their sum), and excluded events are converted as Proposition 19.4 says."""
    totals = []
    ledger = PrivacyLedger(epsilon=1e6, delta=DELTA)
    for i, entry in enumerate(entries):
        _spend(ledger, i, *entry)
        totals.append(ledger.total)
    assert all(b.epsilon >= a.epsilon * (1 - 1e-9)
               for a, b in zip(totals, totals[1:], strict=False))
    reordered = PrivacyLedger(epsilon=1e6, delta=DELTA)
    for i, entry in reversed(list(enumerate(entries))):
        _spend(reordered, i, *entry)
    total = ledger.total
    assert reordered.total.epsilon == pytest.approx(total.epsilon, rel=1e-9)
    # Excluded events: the curve converts at the delta they leave, plus
    # ln(1 / (1 - their delta)) (Proposition 19.4).
    excluded = sum(d for kind, _, d in entries if kind == "excluded")
    plain = PrivacyLedger(epsilon=1e6, delta=DELTA - excluded)
    for i, (kind, rho, d) in enumerate(entries):
        _spend(plain, i, "renyi" if kind == "excluded" else kind, rho, d)
    assert total.delta == DELTA
    assert total.epsilon == pytest.approx(plain.total.epsilon - math.log1p(-excluded),
                                          rel=1e-9)
    alone = []
    for kind, rho, d in entries:
        single = PrivacyLedger(epsilon=1e6, delta=DELTA)
        _spend(single, 0, kind, rho, d)
        alone.append(single.total.epsilon)
    assert total.epsilon >= max(alone) * (1 - 1e-9)
    if len({kind for kind, _, _ in entries}) == 1 and entries[0][0] != "excluded":
        # One kind: never above adding the entries' own figures. (Mixed, a
        # Gaussian entry read by the Rényi conversion can end above that
        # sum, which holds at a delta per entry, not at the ledger's one.)
        assert total.epsilon <= sum(alone) * (1 + 1e-9)


def test_concurrent_reservations_never_pass_the_budget():
    rho = acc.epsilon_to_rho(epsilon=1.0, delta=DELTA)
    ledger = PrivacyLedger(epsilon=2.0, delta=DELTA)
    fits = sum(1 for k in range(1, 20) if acc.rho_to_epsilon(
        rho=k * rho, delta=DELTA) <= 2.0)
    outcomes = []

    def worker():
        try:
            with ledger.spending("fit", rho=rho):
                pass
            outcomes.append(True)
        except PrivacyBudgetExceeded:
            outcomes.append(False)

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(outcomes) == fits == len(ledger.entries)
    assert ledger.total.epsilon <= 2.0


def test_a_failed_release_is_cancelled_and_mismatches_refused():
    ledger = PrivacyLedger(epsilon=2.0, delta=DELTA)
    with pytest.raises(RuntimeError, match="boom"):
        with ledger.spending("fit", rho=0.01):
            raise RuntimeError("boom")
    assert ledger.entries == ()
    ledger.spend("fit", rho=0.01, relation="zero_out", group_size=2)
    with pytest.raises(PrivacyBudgetExceeded, match="relation='replace'"):
        ledger.spend("other", rho=0.01, relation="replace", group_size=2)
    with pytest.raises(PrivacyBudgetExceeded, match="units of 1"):
        ledger.spend("other", rho=0.01, group_size=1)
    ledger.spend("same", rho=0.01)  # the ledger's own relation and unit
    assert [e.relation for e in ledger.entries] == ["zero_out", "zero_out"]
    with pytest.raises(ValueError, match="curve"):
        ledger.spend("bad", curve=[1.0, 2.0])


# --- estimators ------------------------------------------------------------------
@pytest.fixture
def counted(monkeypatch):
    """Count the training passes (noisy GD segments, certified solves)."""
    calls = []
    run, solve = noisy_gd_module.run_segment, op_module.solve_certified

    def count_run(*args, **kwargs):
        calls.append("run_segment")
        return run(*args, **kwargs)

    def count_solve(*args, **kwargs):
        calls.append("solve_certified")
        return solve(*args, **kwargs)

    monkeypatch.setattr(noisy_gd_module, "run_segment", count_run)
    monkeypatch.setattr(op_module, "solve_certified", count_solve)
    return calls


def _model(cls=NoisyGDClassifier, **kw):
    # Edits that pass over the data (a deletion the model already certifies
    # runs no step and releases no new coefficients: tested on its own below).
    if cls is not OutputPerturbationClassifier:
        kw.setdefault("max_lazy_records", 0)
    if cls is NoisyGDRegressor:
        return cls(delta=DELTA, target_scale=1.0, **kw)
    return cls(classes=[0, 1], delta=DELTA, **kw)


def test_a_deletion_without_a_pass_records_nothing(binary_data):
    """Theorems 12.9 and 12.12: a deletion the model already certifies
    re-releases the same coefficients, and the same class statistics when the
    model has them, so it spends nothing; the next edit that passes over the
    data draws them afresh and records its release."""
    X, y = binary_data
    for share in (0.0, "auto"):
        ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
        model = NoisyGDClassifier(classes=[0, 1], delta=DELTA, ledger=ledger,
                                  class_weight=None if share == 0.0 else "balanced",
                                  prevalence_share=share, random_state=0).fit(X, y)
        assert (model.privacy_guarantee_.rho_counts > 0) == (share == "auto")
        model.partial_unlearn(EditRequest(X, y, delete=[0]))
        assert model.privacy_guarantee_.deletion.without_pass
        assert len(ledger.entries) == 1
        model.partial_unlearn(EditRequest(X[1:], y[1:], delete=[0]),
                              deletion_epsilon=0.05)
        g = model.privacy_guarantee_
        assert not g.deletion.without_pass
        assert len(ledger.entries) == 2
        assert ledger.entries[-1].rho == pytest.approx(
            acc.release_rho(g, model._plan), rel=1e-12)


def test_an_edit_records_its_own_term_only_beside_the_release_before_it(binary_data):
    """Section 20.1: the edit's term from the previous model composes only
    with that model's release; a ledger that does not hold it (given after
    the fit, or record() of a model made without it) gets the edited model's
    whole figure (an audit's finding: 0.57 recorded for a 0.96-DP model)."""
    X, y = binary_data
    edit = EditRequest(X, y, delete=[0, 5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        late = PrivacyLedger(epsilon=10.0, delta=DELTA)
        model = _model(random_state=0, max_lazy_records=0).fit(X, y)
        model.set_params(ledger=late)
        model.partial_unlearn(edit)
        g = model.privacy_guarantee_
        assert acc.release_rho(g, model._plan) < g.rho
        assert [e.rho for e in late.entries] == [g.rho]
        # The next edit composes beside the release this ledger now holds.
        model.partial_unlearn(EditRequest(*edit.apply(), delete=[0]))
        g2 = model.privacy_guarantee_
        assert late.entries[-1].rho == acc.release_rho(g2, model._plan) < g2.rho
        # record(): the whole figure, also after a deletion without a pass
        # (fresh noise: a seeded model's cannot be named after the fact).
        for lazy in (0, "auto"):
            made = _model(random_state=None, max_lazy_records=lazy).fit(X, y)
            made.partial_unlearn(edit)
            kept = PrivacyLedger(epsilon=10.0, delta=DELTA)
            kept.record("made elsewhere", made)
            assert [e.rho for e in kept.entries] == [made.privacy_guarantee_.rho]
        # A ledger that holds the fit: the edit's own term.
        both = PrivacyLedger(epsilon=10.0, delta=DELTA)
        model = _model(random_state=0, max_lazy_records=0, ledger=both).fit(X, y)
        model.partial_unlearn(edit)
        g = model.privacy_guarantee_
        assert both.entries[-1].rho == acc.release_rho(g, model._plan) < g.rho


@pytest.mark.parametrize("cls", [NoisyGDClassifier, NoisyGDRegressor,
                                 OutputPerturbationClassifier])
def test_fit_and_edits_record_what_the_model_reports(cls, binary_data,
                                                     regression_data):
    X, y = regression_data if cls is NoisyGDRegressor else binary_data
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    model = _model(cls, ledger=ledger, random_state=0).fit(X, y)
    g = model.privacy_guarantee_
    assert [e.rho for e in ledger.entries] == [g.rho]
    assert ledger.entries[0].label == f"{cls.__name__}.fit"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.partial_unlearn(EditRequest(X, y, delete=[0, 5]))
    g = model.privacy_guarantee_
    edit = ledger.entries[1]
    assert edit.label == f"{cls.__name__}.partial_unlearn"
    assert edit.rho == acc.release_rho(g, model._plan)
    if cls is OutputPerturbationClassifier:
        assert edit.rho == g.rho  # a refit is a fresh release
    else:
        # Theorem 6.3's term for this release, at the DP sensitivity: the
        # next edit's adaptive figure counts it (times the deletion factor).
        assert 0 < edit.rho <= g.rho
    # Both releases are GDP (Section 21), so their sum converts exactly.
    assert all(e.gaussian for e in ledger.entries)
    assert ledger.total.epsilon == pytest.approx(acc.rho_to_epsilon(
        rho=sum(e.rho for e in ledger.entries), delta=DELTA, method="gaussian"))


@pytest.mark.parametrize("cls", [NoisyGDClassifier, OutputPerturbationClassifier])
def test_refused_before_any_training_pass_model_unchanged(cls, binary_data,
                                                          counted):
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=0.5, delta=DELTA)
    model = _model(cls, epsilon=1.0, ledger=ledger)
    with pytest.raises(PrivacyBudgetExceeded, match=f"{cls.__name__}.fit would "
                       r"spend epsilon [\d.]+ alone .* past its budget of 0.5"):
        model.fit(X, y)
    assert counted == [] and ledger.entries == ()
    assert not hasattr(model, "coef_") and not hasattr(model, "_fit_params")
    # A fitted model: the edit is refused before any pass, nothing changes.
    model.set_params(epsilon=0.3).fit(X, y)
    assert len(ledger.entries) == 1 and counted
    counted.clear()
    small = PrivacyLedger(epsilon=0.01, delta=DELTA)
    model.set_params(ledger=small)
    state = pickle.dumps((model.coef_, model.intercept_, model.privacy_guarantee_))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # It says what a refused deletion means for the person who asked.
        with pytest.raises(PrivacyBudgetExceeded, match=r"partial_unlearn.*The "
                           r"edit was not made: the records it would delete are "
                           r"still in the model.*withdraw this model"):
            model.partial_unlearn(EditRequest(X, y, delete=[1]))
    assert counted == [] and small.entries == () and len(ledger.entries) == 1
    assert pickle.dumps((model.coef_, model.intercept_,
                         model.privacy_guarantee_)) == state


def test_a_failed_fit_cancels_its_reservation(binary_data, monkeypatch):
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=5.0, delta=DELTA)

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(noisy_gd_module, "run_segment", broken)
    with pytest.raises(KeyboardInterrupt):
        _model(ledger=ledger).fit(X, y)
    assert ledger.entries == ()


def test_plan_and_frozen_parameters(binary_data):
    X, y = binary_data
    first = PrivacyLedger(epsilon=10.0, delta=DELTA)
    model = _model(ledger=first)
    model.plan(X, y)
    assert first.entries == ()  # planning spends nothing
    model.fit(X, y)
    # Frozen at fit like every parameter, by identity (deepcopy returns it).
    assert model._fit_params["ledger"] is first
    # Not frozen for edits: a new ledger records the edit, without the
    # warning that set_params changed a frozen parameter.
    second = PrivacyLedger(epsilon=10.0, delta=DELTA)
    model.set_params(ledger=second)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        model.partial_unlearn(EditRequest(X, y, delete=[2]))
    assert not [w for w in rec if "set_params changed" in str(w.message)]
    assert len(first.entries) == 1 and len(second.entries) == 1
    model.set_params(ledger=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.partial_unlearn(EditRequest(X[1:], y[1:], delete=[3]))
    assert len(second.entries) == 1
    with pytest.raises(ValueError, match="ledger"):
        _model(ledger="not a ledger").fit(X, y)


# --- identity: clone, pickle, skops, searches ----------------------------------------
def test_clone_and_deepcopy_keep_the_ledger(binary_data):
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    model = _model(ledger=ledger)
    assert copy.deepcopy(ledger) is ledger and copy.copy(ledger) is ledger
    assert clone(model).ledger is ledger
    clone(model).fit(X, y)
    clone(model).fit(X, y)
    assert len(ledger.entries) == 2


def test_a_pickled_in_memory_ledger_is_a_snapshot(binary_data, counted):
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    model = _model(ledger=ledger).fit(X, y)
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded.ledger is not ledger and loaded.ledger is loaded._fit_params["ledger"]
    assert [e.rho for e in loaded.ledger.entries] == [e.rho for e in ledger.entries]
    counted.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(LedgerUnreachableError, match="SharedLedger"):
            loaded.partial_unlearn(EditRequest(X, y, delete=[0]))
        assert counted == []
        assert "pickled snapshot" in str(loaded.ledger)
        loaded.ledger.resume()
        loaded.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert len(loaded.ledger.entries) == 2 and len(ledger.entries) == 1


def test_an_in_memory_ledger_through_skops_is_a_snapshot(binary_data):
    sio = pytest.importorskip("skops.io")
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    data = sio.dumps(_model(ledger=ledger).fit(X, y))
    loaded = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    assert loaded.ledger is loaded._fit_params["ledger"]
    assert [e.rho for e in loaded.ledger.entries] == [e.rho for e in ledger.entries]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(LedgerUnreachableError):
            loaded.partial_unlearn(EditRequest(X, y, delete=[0]))
        loaded.ledger.resume().spend("by hand", rho=0.001)
    assert len(loaded.ledger.entries) == 2 and len(ledger.entries) == 1


def test_shared_ledger_survives_pickle_and_skops(binary_data, tmp_path):
    sio = pytest.importorskip("skops.io")
    X, y = binary_data
    path = tmp_path / "ledger.sqlite"
    ledger = SharedLedger(path, epsilon=10.0, delta=DELTA)
    model = _model(ledger=ledger).fit(X, y)
    for loaded in (pickle.loads(pickle.dumps(model)),
                   sio.loads(sio.dumps(model), trusted=sio.get_untrusted_types(
                       data=sio.dumps(model)))):
        assert isinstance(loaded.ledger, SharedLedger)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            loaded.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert len(ledger.entries) == 3
    assert [e.label for e in SharedLedger(path).entries] == [
        "NoisyGDClassifier.fit"] + ["NoisyGDClassifier.partial_unlearn"] * 2
    with pytest.raises(ValueError, match="epsilon=10.0, not 3"):
        SharedLedger(path, epsilon=3.0, delta=DELTA)
    with pytest.raises(ValueError, match="give its budget"):
        SharedLedger(tmp_path / "new.sqlite")


def _grid(ledger, n_jobs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyBudgetWarning)
        # Folds drawn without the rows: stratified ones are refused (below).
        return GridSearchCV(_model(ledger=ledger), {"C": [0.1, 1.0]},
                            cv=KFold(3, shuffle=True, random_state=0), n_jobs=n_jobs)


def test_a_release_is_recorded_once(binary_data):
    """ledger.record of a release the ledger holds is refused (a trial
    recorded one pipeline twice and the ledger added both); a model's new
    release, made without the ledger, may be recorded."""
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    model = _model().fit(X, y)
    ledger.record("model", model)
    with pytest.raises(ValueError, match="already in this ledger"):
        ledger.record("model again", model)
    assert len(ledger.entries) == 1
    fitted_with = _model(ledger=ledger).fit(X, y)
    with pytest.raises(ValueError, match="recording it again would count it twice"):
        ledger.record("fitted with it", fitted_with)
    assert len(ledger.entries) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.partial_unlearn(EditRequest(X, y, delete=[0]))
    ledger.record("model after its edit", model)
    assert len(ledger.entries) == 3
    # A private pipeline's and a search's releases are one entry each, which
    # they, their estimator and their refitted model hold (a second reader).
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_private_pipeline(_model(ledger=ledger), epsilon=1.0).fit(frame, y)
        search = PrivateSearchCV(_model(ledger=ledger), {"C": [0.1, 1.0]},
                                 epsilon=1.0, delta=DELTA).fit(X, y)
    assert len(ledger.entries) == 5
    from sklearn.preprocessing import Normalizer

    from skforget.pipeline import make_forget_pipeline

    public = make_forget_pipeline(Normalizer(), _model(ledger=ledger)).fit(X, y)
    assert len(ledger.entries) == 6
    for fitted in (pipe, pipe[-1], search, search.best_estimator_, public):
        with pytest.raises(ValueError, match="already in this ledger|selected"):
            ledger.record("again", fitted)
    assert len(ledger.entries) == 6


def test_grid_search_in_process_records_every_fit(binary_data):
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=100.0, delta=DELTA)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        _grid(ledger, 1).fit(X, y)
    assert len(ledger.entries) == 2 * 3 + 1  # and the refit
    # Each entry says what it was part of (an auditor saw anonymous lines).
    assert {e.label for e in ledger.entries} == {
        "NoisyGDClassifier.fit (a fit of a GridSearchCV: 2 candidate(s) x 3 "
        "split(s) + a refit)"}
    said = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
    assert any("2 candidate(s) x 3 split(s) and a refit on all rows, 5 of them "
               "train on each record" in m and "The ledger given records each fit"
               in m for m in said)
    # What the ledger will add, and that it checks them all before the first
    # (a trial sized a ledger by the per-record figure; the search was
    # refused at its refit with 98 % spent). Said once per run (scikit-learn's
    # per-fit catch_warnings repeated it for every fit).
    assert len(said) == 1
    spent = re.search(r"It adds all 7 fits \(at most epsilon ([0-9.]+) at its "
                      r"delta 1e-05\) and, as they run one after another here, "
                      r"plans them all before the first", said[0])
    assert spent is not None
    assert float(spent.group(1)) >= ledger.total.epsilon * (1 - 1e-3)
    # At the ledger's delta, not the fit's: a smaller one reads the same fits
    # as a larger epsilon (a second reader: 2.95 said, 3.38 reached at 1e-7).
    strict = PrivacyLedger(epsilon=100.0, delta=1e-7)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        _grid(strict, 1).fit(X, y)
    said = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
    spent = re.search(r"at most epsilon ([0-9.]+) at its delta 1e-07", said[0])
    assert float(spent.group(1)) >= strict.total.epsilon * (1 - 1e-3)


def test_a_search_run_here_is_checked_whole_before_its_first_fit(binary_data):
    """A search or cross-validation whose fits run one after another in this
    thread is one planned operation: past the budget, nothing of it is
    recorded (a trial's search was refused at its refit, 98 % spent)."""
    from sklearn.model_selection import cross_val_predict, cross_val_score

    X, y = binary_data
    ledger = PrivacyLedger(epsilon=2.0, delta=DELTA)   # one fit, not seven
    assert not ledger.would_exceed(rho=acc.epsilon_to_rho(
        epsilon=1.0, delta=DELTA, method="gaussian"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # scikit-learn's error_score=np.nan turns each refusal into a failed
        # fit: every fit of the run is refused, the search raises.
        with pytest.raises(ValueError, match="All the 6 fits failed") as err:
            _grid(ledger, 1).fit(X, y)
        search = _grid(ledger, 1).set_params(error_score="raise")
        with pytest.raises(PrivacyBudgetExceeded) as raised:
            search.fit(X, y)
    assert ledger.entries == ()
    text = str(raised.value)
    assert text in str(err.value)
    assert text.startswith("The run of 7 fits of NoisyGDClassifier.fit (a fit of a "
                           "GridSearchCV: 2 candidate(s) x 3 split(s) + a refit) "
                           "would spend epsilon")
    assert "planned together before the first" in text
    assert "nothing of the run recorded" in text
    # The epsilon it advises for each fit lets the whole search through.
    each = float(re.search(r"room for 7 fits of epsilon ([0-9.]+) each at "
                           r"delta 1e-05", text).group(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.set_params(estimator__epsilon=each).fit(X, y)
    assert len(ledger.entries) == 7
    assert ledger.total.epsilon <= 2.0
    # Another run of the same search is a run of its own, checked again.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(PrivacyBudgetExceeded, match="The run of 7 fits"):
            search.fit(X, y)
    assert len(ledger.entries) == 7
    # A cross-validation likewise, and cross_val_predict (which has no
    # error_score); fits that do fit are recorded as before.
    for cv_call in (cross_val_score, cross_val_predict):
        small = PrivacyLedger(epsilon=1.5, delta=DELTA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises((ValueError, PrivacyBudgetExceeded),
                               match="The run of 3 fits of NoisyGDClassifier.fit"):
                cv_call(_model(ledger=small), X, y,
                        cv=KFold(3, shuffle=True, random_state=0),
                        **({"error_score": "raise"} if cv_call is cross_val_score
                           else {}))
        assert small.entries == ()
        large = PrivacyLedger(epsilon=10.0, delta=DELTA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cv_call(_model(ledger=large), X, y,
                    cv=KFold(3, shuffle=True, random_state=0))
        assert len(large.entries) == 3


@pytest.mark.parametrize("grid", [{"C": [0.1, 1.0]}, {"max_iter": [5, 200]}])
def test_a_run_is_planned_fit_by_fit_so_its_check_is_exact(binary_data, grid):
    """Each fit's figure depends on its hyper-parameters (C, max_iter) and its
    rows' number: m times the first fit's figure refused runs that fit and
    passed runs that did not (a second reader). The run's check plans every
    fit: a budget just above what the run records lets it through, one just
    below refuses it before its first fit; with its fits in worker threads it
    is checked fit by fit, its refit included."""
    from joblib import parallel_config

    X, y = binary_data

    def grid_search(ledger, grid=grid, refit=False):
        # Without a refit the run's fits are known before it (a refit is of
        # the candidate the scores choose: it counts at the smallest).
        return GridSearchCV(_model(ledger=ledger), grid, error_score="raise",
                            refit=refit, cv=KFold(3, shuffle=True, random_state=0))

    def spent(grid=grid, refit=False):
        reference = PrivacyLedger(epsilon=100.0, delta=DELTA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grid_search(reference, grid, refit).fit(X, y)
        return reference

    reference = spent()
    assert len(reference.entries) == 6
    assert len({e.rho for e in reference.entries}) > 1   # the figures differ
    for budget, fits in [(reference.total.epsilon * 1.001, True),
                         (reference.total.epsilon * 0.999, False)]:
        ledger = PrivacyLedger(epsilon=budget, delta=DELTA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if fits:
                grid_search(ledger).fit(X, y)
            else:
                with pytest.raises(PrivacyBudgetExceeded,
                                   match="planned together before the first"):
                    grid_search(ledger).fit(X, y)
        assert len(ledger.entries) == (6 if fits else 0)
    # Fits in worker threads are checked one at a time; the refit, on this
    # thread, is not planned as the whole run on top of the folds recorded.
    one = {key: values[:1] for key, values in grid.items()}
    reference = spent(one, refit=True)
    threaded = PrivacyLedger(epsilon=reference.total.epsilon * 1.001, delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with parallel_config(backend="threading"):
            grid_search(threaded, one, refit=True).set_params(n_jobs=2).fit(X, y)
    assert len(threaded.entries) == 4


def test_planning_a_run_leaves_no_trace_and_reads_every_split(binary_data):
    """Second reading of the planned run: a dry run silences skforget's
    warnings through a context variable, never through the warnings filters
    that every thread shares (an "ignore" was left at their head by two runs
    in two threads); the splitter is copied before it splits again, so a
    RandomState it was given is not advanced; every split is planned (one
    that lacks a class plans another figure); and a spent ledger is said so."""
    from sklearn.model_selection import ShuffleSplit, cross_val_score

    import skforget._validation as validation

    X, y = binary_data
    seen = {"dry": [], "real": []}

    class Probe(NoisyGDClassifier):
        def fit(self, X, y=None, sample_weight=None):
            dry = validation.DRY_RUN.get() is not None
            seen["dry" if dry else "real"].append(list(warnings.filters))
            return super().fit(X, y, sample_weight)

    probe = Probe(classes=[0, 1], delta=DELTA, max_lazy_records=0,
                  ledger=PrivacyLedger(epsilon=100.0, delta=DELTA))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyBudgetWarning)
        GridSearchCV(probe, {"C": [0.1, 1.0]}, cv=KFold(3, shuffle=True,
                                                       random_state=0)).fit(X, y)
    # The dry runs happen inside the first fold's fit, under its filters.
    assert len(seen["dry"]) == 2 * 3 + 2
    assert all(f == seen["real"][0] for f in seen["dry"])
    states = []
    for ledger in (None, PrivacyLedger(epsilon=100.0, delta=DELTA)):
        rs = np.random.RandomState(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cross_val_score(_model(ledger=ledger), X, y,
                            cv=ShuffleSplit(3, test_size=0.25, random_state=rs))
        states.append(rs.randint(10**9))
    assert states[0] == states[1]
    # One record of a third label, which the last fold holds out: that fold
    # plans (and reserves) the two-class figure.
    y3 = np.array(y)
    y3[-1] = 2
    kf = KFold(5)
    reference = PrivacyLedger(epsilon=100.0, delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cross_val_score(NoisyGDClassifier(delta=DELTA, ledger=reference), X, y3,
                        cv=kf)
    assert len({e.rho for e in reference.entries}) == 2
    exact = PrivacyLedger(epsilon=reference.total.epsilon * 1.00001, delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cross_val_score(NoisyGDClassifier(delta=DELTA, ledger=exact), X, y3, cv=kf,
                        error_score="raise")
    assert len(exact.entries) == 5
    spent = PrivacyLedger(epsilon=1.0, delta=DELTA)
    spent.spend("all of it", rho=spent.remaining_rho, gaussian=True)
    assert spent.remaining(3) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(PrivacyBudgetExceeded, match="no room left"):
            cross_val_score(_model(ledger=spent), X, y, cv=KFold(3),
                            error_score="raise")
    assert len(spent.entries) == 1


def test_a_runs_refit_is_counted_whichever_candidate_it_takes(binary_data):
    """A search whose candidates are curves (PrivateSearchCV at two epsilons)
    counted its refit at the first candidate's curve (every rho is 0), and
    refused a run the fit-by-fit checks admit: refused ahead only if the run
    is refused whichever candidate the refit takes."""
    X, y = binary_data

    def search(ledger, choose):
        inner = PrivateSearchCV(_model(), {"C": [0.1, 1.0]}, epsilon=1.0,
                                delta=DELTA, n_candidates=2, ledger=ledger)
        return GridSearchCV(inner, {"epsilon": [2.0, 0.5]}, error_score="raise",
                            cv=KFold(3, shuffle=True, random_state=0),
                            refit=lambda results: choose)

    totals = []
    for choose in (1, 0):
        ledger = PrivacyLedger(epsilon=1e3, delta=DELTA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search(ledger, choose).fit(X, y)
        totals.append(ledger.total.epsilon)
    assert totals[0] < totals[1]
    between = PrivacyLedger(epsilon=sum(totals) / 2, delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search(between, 1).fit(X, y)
    assert len(between.entries) == 7
    below = PrivacyLedger(epsilon=totals[0] * 0.999, delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(PrivacyBudgetExceeded, match="whichever candidate"):
            search(below, 1).fit(X, y)
    assert below.entries == ()


def test_a_run_too_large_to_plan_says_it_checks_fit_by_fit(binary_data):
    """Past 200 dry runs the run is checked fit by fit, and its refit's
    warning no longer says the run was planned (a third reader: 170 fits were
    recorded after the refit's warning had promised nothing would be)."""
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=1e3, delta=DELTA)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        GridSearchCV(_model(ledger=ledger), {"C": list(np.geomspace(0.1, 10, 10))},
                     cv=KFold(20)).fit(X, y)
    assert len(ledger.entries) == 201
    said = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
    assert said and all("checks them one at a time" in m and "plans them all"
                        not in m for m in said)


def test_runs_whose_candidates_are_not_known_ahead_are_checked_fit_by_fit(
        binary_data):
    """A search of one's own ``_run_search`` (its batches come one after
    another, as in scikit-optimize) and a plain Pipeline whose steps release
    are not planned whole: no refusal of a run that fits, and the warning
    says the ledger checks one fit at a time."""
    from sklearn.model_selection import ParameterGrid
    from sklearn.pipeline import make_pipeline

    from skforget.preprocessing import PrivateStandardScaler

    X, y = binary_data

    class Batches(GridSearchCV):
        def _run_search(self, evaluate_candidates):
            for params in ParameterGrid(self.param_grid):
                evaluate_candidates([params])

    reference = PrivacyLedger(epsilon=100.0, delta=DELTA)
    kf = KFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # No refit: its candidate, chosen by noisy scores, sets its figure.
        Batches(_model(ledger=reference), {"C": [0.1, 1.0]}, cv=kf,
                refit=False).fit(X, y)
    assert len(reference.entries) == 6
    ledger = PrivacyLedger(epsilon=reference.total.epsilon * 1.001, delta=DELTA)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        Batches(_model(ledger=ledger), {"C": [0.1, 1.0]}, cv=kf,
                refit=False).fit(X, y)
    assert len(ledger.entries) == 6
    said = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
    assert said and all("checks them one at a time" in m for m in said)
    # Its counts are a batch's: this fit's figure, bound neither way (it said
    # "at most" for one batch of the run's two), and each text once a run.
    assert all("It adds all 3 fits (epsilon" in m and "if each is at this fit's "
               "figure" in m for m in said)
    assert len(said) == len(set(said)) == 1
    both = PrivacyLedger(epsilon=100.0, delta=DELTA)
    pipe = make_pipeline(PrivateStandardScaler(rho=0.05, ledger=both),
                         _model(ledger=both))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        GridSearchCV(pipe, {"noisygdclassifier__C": [0.1, 1.0]}, cv=kf).fit(X, y)
    assert len(both.entries) == 14
    said = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning
            and "model selection" in str(w.message)]
    assert said and all("plans them all" not in m for m in said)


def test_each_distinct_warning_of_a_run_is_said(binary_data):
    """Candidates of other figures say their own warning (a grid over two
    estimators at epsilon 0.3 and 3 said only the first's figure)."""
    X, y = binary_data
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        GridSearchCV(_model(epsilon=0.3), {"epsilon": [0.3, 3.0]},
                     cv=KFold(3, shuffle=True, random_state=0)).fit(X, y)
    said = {str(w.message) for w in rec if w.category is PrivacyBudgetWarning}
    assert any("(0.3, 1e-05)-DP alone" in m for m in said)
    assert any("(3, 1e-05)-DP alone" in m for m in said)
    assert len(said) == len([w for w in rec if w.category is PrivacyBudgetWarning])


def test_a_search_run_warns_once_and_points_at_the_callers_line(binary_data):
    from sklearn.model_selection import cross_val_score

    X, y = binary_data
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cross_val_score(_model(), X, y, cv=KFold(4, shuffle=True, random_state=0))
    said = [w for w in rec if w.category is PrivacyBudgetWarning]
    # Once for the run (scikit-learn's per-fit catch_warnings repeated it for
    # each fold), at this line (it pointed into joblib/parallel.py).
    assert len(said) == 1
    assert said[0].filename == __file__


def test_grid_search_in_worker_processes(binary_data, tmp_path):
    X, y = binary_data
    in_memory = PrivacyLedger(epsilon=100.0, delta=DELTA)
    # The workers' copies cannot reach this ledger: every fit refuses, clearly.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="All the 6 fits failed") as err:
            _grid(in_memory, 2).fit(X, y)
    assert "LedgerUnreachableError" in str(err.value)
    assert "SharedLedger" in str(err.value)
    assert in_memory.entries == ()
    shared = SharedLedger(tmp_path / "grid.sqlite", epsilon=100.0, delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _grid(shared, 2).fit(X, y)
    assert len(shared.entries) == 7
    # (a worker of scikit-learn < 1.7 cannot see the search, its class or
    # its refit)
    assert all("2 candidate(s) x 3 split(s)" in e.label for e in shared.entries)
    rho = shared.entries[-1].rho
    assert shared.total.epsilon == pytest.approx(acc.rho_to_epsilon(
        rho=sum(e.rho for e in shared.entries), delta=DELTA, method="gaussian"))
    assert rho > 0


def test_private_search_records_one_curve(binary_data):
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=3.0, delta=DELTA)
    search = PrivateSearchCV(_model(ledger=ledger), {"C": [0.1, 1.0]}, epsilon=1.0,
                             delta=DELTA, n_candidates=3, validation_fraction=0.2,
                             random_state=0)
    search.fit(X, y)
    assert [e.label for e in ledger.entries] == ["PrivateSearchCV.fit"]
    assert ledger.total.epsilon == pytest.approx(search.privacy_guarantee_.epsilon,
                                                 rel=1e-9)
    assert search.best_estimator_.ledger is ledger
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.partial_unlearn(EditRequest(X, y, delete=[4]))
    assert len(ledger.entries) == 2
    # Its edits record the refit's figure, fixed before the search: the
    # terms of the refitted model's own plan depend on the selection (an
    # audit saw 0.0035 to 0.0085 over a grid).
    budget = search.privacy_guarantee_
    assert ledger.entries[-1].rho == pytest.approx(budget.refit_rho, rel=1e-12)
    assert ledger.entries[-1].rho >= search.best_estimator_.privacy_guarantee_.rho
    # A search that would not fit is refused before its first run.
    small = PrivacyLedger(epsilon=0.5, delta=DELTA)
    refused = PrivateSearchCV(_model(), {"C": [0.1]}, epsilon=1.0, delta=DELTA,
                              n_candidates=3, ledger=small)
    with pytest.raises(PrivacyBudgetExceeded, match="PrivateSearchCV.fit"):
        refused.fit(X, y)
    assert small.entries == () and not hasattr(refused, "best_estimator_")


def test_str_lists_the_parts(binary_data):
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=4.0, delta=DELTA)
    _model(ledger=ledger).fit(X, y)
    ledger.spend("private means", rho=0.001)
    text = str(ledger)
    assert text.startswith("Privacy ledger: budget (4, 1e-05); spent (")
    # Each entry with the time it was recorded (a trial's auditor could not
    # trace the printout back to the work).
    assert re.search(r"1\. NoisyGDClassifier\.fit \(\d{4}-\d\d-\d\dT\d\d:\d\d:"
                     r"\d\dZ\): epsilon", text)
    assert re.search(r"2\. private means \(.*Z\): epsilon", text)
    assert all(e.recorded_at for e in ledger.entries)
    old = acc.LedgerEntry.from_dict({k: v for k, v in ledger.entries[0].to_dict()
                                     .items() if k != "recorded_at"})
    assert old.recorded_at == ""
    assert f"remaining: epsilon {ledger.remaining_epsilon:.4g}" in text


def test_check_reads_a_public_plan(binary_data):
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=1.4, delta=DELTA)
    fit_plan = _model(epsilon=1.0).plan(X, y)
    budget = acc.plan_search(epsilon=1.0, delta=DELTA)
    assert not ledger.would_exceed(fit_plan)
    assert not ledger.would_exceed(budget)
    ledger.spend("a first fit", rho=acc.epsilon_to_rho(epsilon=1.0, delta=DELTA))
    # The plan's target bounds what its fit records: 1 and 1 make 1.46 > 1.4.
    assert ledger.would_exceed(fit_plan)
    with pytest.raises(PrivacyBudgetExceeded, match="the release would spend"):
        ledger.check(budget)
    with pytest.raises(ValueError, match="not both"):
        ledger.check(fit_plan, rho=0.1)
    assert len(ledger.entries) == 1


@pytest.mark.parametrize("k", [1, 3, 10])
def test_remaining_for_k_equal_releases(k):
    # Gaussian releases: each of k models planned for remaining(k) (by the
    # Gaussian inverse, as the estimators plan) fills the budget exactly.
    ledger = PrivacyLedger(epsilon=2.0, delta=DELTA)
    ledger.spend("fit", rho=0.02, gaussian=True)
    each = ledger.remaining(k)
    rho = acc.epsilon_to_rho(epsilon=each, delta=DELTA, method="gaussian")
    for i in range(k):
        ledger.spend(f"fold {i}", rho=rho, gaussian=True)
    assert ledger.total.epsilon <= 2.0
    assert ledger.total.epsilon == pytest.approx(2.0, rel=1e-6)
    # Rényi entries: the same targets still fit (the Gaussian inverse gives
    # the larger rho), with room to spare.
    renyi = PrivacyLedger(epsilon=2.0, delta=DELTA)
    renyi.spend("fit", rho=0.02)
    each = renyi.remaining(k)
    for i in range(k):
        renyi.spend(f"fold {i}", rho=acc.epsilon_to_rho(epsilon=each, delta=DELTA,
                                                        method="gaussian"))
    assert renyi.total.epsilon <= 2.0
    with pytest.raises(ValueError, match="positive integer"):
        ledger.remaining(0)


@settings(max_examples=30, deadline=None)
@given(rho=st.floats(1e-5, 2.0), delta=st.sampled_from([1e-3, 1e-5, 1e-8]))
def test_the_grid_conversion_is_within_1e_4_of_the_continuous_one(rho, delta):
    # A general curve (here zero) sends the conversion to the grid (20.2).
    continuous = PrivacyLedger(epsilon=1e6, delta=delta)
    continuous.spend("fit", rho=rho)
    grid = PrivacyLedger(epsilon=1e6, delta=delta)
    grid.spend("fit", rho=rho)
    grid.spend("nothing", curve=np.zeros(acc.LEDGER_ORDERS.size))
    assert continuous.total.epsilon <= grid.total.epsilon
    assert grid.total.epsilon == pytest.approx(continuous.total.epsilon, rel=1e-4)


def test_to_dict_is_json_ready():
    import json

    ledger = PrivacyLedger(epsilon=2.0, delta=DELTA)
    ledger.spend("fit", rho=0.01)
    ledger.spend("search", curve=acc.search_curve(acc.plan_search(epsilon=0.5,
                                                                  delta=DELTA)))
    out = json.loads(json.dumps(ledger.to_dict()))
    assert out["total_epsilon"] == ledger.total.epsilon
    assert [e["label"] for e in out["entries"]] == ["fit", "search"]
    assert len(out["entries"][1]["curve"]) == acc.LEDGER_ORDERS.size


def test_an_audit_spends_nothing_on_the_estimators_ledger(binary_data):
    from skforget.audit import audit_dp

    X, y = binary_data
    ledger = PrivacyLedger(epsilon=1.0, delta=DELTA)
    clf = OutputPerturbationClassifier(classes=[0, 1], epsilon=0.9, delta=DELTA,
                                       ledger=ledger)
    res = audit_dp(clf, X[:100], y[:100], n_trials=4, random_state=0)
    assert res.epsilon_certified > 0 and ledger.entries == ()
    assert clf.ledger is ledger  # the user's estimator is untouched


# --- releases with excluded events (private preprocessing) ----------------------
def _raw_table(n=600, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.integers(18, 90, n).astype(float),
                      "job": rng.choice(["a", "b", "c"], n)})
    return X, (X["age"] > 50).astype(int).to_numpy()


def test_a_pipeline_fit_refused_for_a_label_spends_nothing():
    # A trial: a label outside the public label set was refused by the
    # estimator after the private steps had drawn, and the ledger kept the
    # whole release (0.83). It is checked before anything is drawn now.
    X, y = _raw_table()
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    pipe = make_private_pipeline(
        NoisyGDClassifier(classes=[0, 1], ledger=ledger), epsilon=1.0, delta=DELTA)
    bad = y.copy()
    bad[7] = 2
    with pytest.raises(ValueError, match=r"y\[7\] \(of type int64\) is not one "
                                         r"of the classes given in classes"):
        pipe.fit(X, bad)
    assert not ledger.entries
    assert not hasattr(pipe.named_steps["preprocess"], "n_features_in_")
    # A label array of another shape gets fit's own message, not a
    # flattened index (a second reader).
    with pytest.raises(ValueError, match="y should be a 1d array"):
        pipe.fit(X, np.column_stack([y, y]))
    # The estimator's sample weights too (a trial: a negative weight was
    # refused after the draw, and the ledger charged the release).
    n = len(y)
    for weights, said in ((np.r_[1.0, -1.0, np.ones(n - 2)], r"sample_weight\[1\]"),
                          (np.full(n, np.nan), r"sample_weight\[0\] is NaN"),
                          (np.ones(n - 1), "one weight per row")):
        with pytest.raises(ValueError, match=said):
            pipe.fit(X, y, estimator__sample_weight=weights)
    assert not ledger.entries
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    assert len(ledger.entries) == 1


def test_a_pipeline_runs_warning_reads_the_ledgers_figure():
    # A trial: the warning said "at most epsilon 2.42 at its delta 1e-05" of
    # five pipeline fits, and the ledger recorded 2.52 (their selections' delta
    # was added on top of the ledger's instead of taken out of it), so a
    # ledger sized by the warning refused the run.
    from sklearn.model_selection import cross_val_score
    X, y = _raw_table()
    runs = {}
    for budget in (50.0, None):
        # Sized at the printed figure itself (rounded up: a second reader's
        # ledger at a figure rounded to nearest refused the run).
        ledger = PrivacyLedger(epsilon=budget or runs[50.0], delta=DELTA)
        pipe = make_private_pipeline(
            NoisyGDClassifier(classes=[0, 1], ledger=ledger), epsilon=1.0,
            delta=DELTA)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            cross_val_score(pipe, X, y, cv=KFold(5, shuffle=True, random_state=0),
                            error_score="raise")
        said = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
        spent = re.search(r"It adds all 5 fits \(at most epsilon ([0-9.]+) at its "
                          r"delta 1e-05\)", said[0])
        assert float(spent.group(1)) == pytest.approx(ledger.total.epsilon, rel=1e-2)
        assert float(spent.group(1)) >= ledger.total.epsilon
        assert len(ledger.entries) == 5
        runs[budget] = float(spent.group(1))
    # Selections whose deltas alone fill the ledger's are said to, not read
    # as a figure (fits in threads: checked one at a time, not planned).
    ledger = PrivacyLedger(epsilon=50.0, delta=3e-6)
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1], ledger=ledger),
                                 epsilon=1.0, delta=DELTA)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with joblib.parallel_backend("threading"), \
                pytest.raises(PrivacyBudgetExceeded):
            cross_val_score(pipe, X, y, cv=KFold(5, shuffle=True, random_state=0),
                            error_score="raise", n_jobs=2)
    said = [str(w.message) for w in rec if w.category is PrivacyBudgetWarning]
    assert any("their excluded events alone would take its delta 3e-06" in m
               for m in said)
    assert 1 <= len(ledger.entries) <= 2


@pytest.mark.parametrize("gaussian", [False, True])
def test_excluded_events_are_spent_like_proposition_19_4(gaussian):
    # An entry holding outside events of probability d is converted at
    # delta - d and pays ln(1 / (1 - d)) (Proposition 19.4); the deltas of
    # several entries add (Bun & Steinke 2016, Lemma 8.3).
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)
    ledger.spend("selection", rho=0.01, delta=1e-6, gaussian=gaussian)
    ledger.spend("fit", rho=0.02, delta=2e-6, gaussian=gaussian)
    method = "gaussian" if gaussian else "improved"
    expected = (acc.rho_to_epsilon(rho=0.03, delta=DELTA - 3e-6, method=method)
                - math.log1p(-3e-6))
    assert ledger.total.epsilon == pytest.approx(expected, rel=1e-12)
    assert ledger.total.epsilon > acc.rho_to_epsilon(rho=0.03, delta=DELTA,
                                                     method=method)
    # A release whose events would use up the budget's delta is refused
    # (nothing of delta left for the conversion: no statement at all).
    assert ledger.would_exceed(rho=0.0, delta=DELTA - 3e-6)
    assert not ledger.would_exceed(rho=0.0, delta=1e-6)
    with pytest.raises(PrivacyBudgetExceeded):
        ledger.spend("more selections", rho=1e-9, delta=DELTA)
    assert len(ledger.entries) == 2


def test_a_private_pipeline_records_one_release_with_its_selections():
    # Before: only the estimator's fit reached the ledger (0.78 of a pipeline
    # at epsilon 1), and the statistics and their selections' delta never did.
    X, y = _raw_table()
    ledger = PrivacyLedger(epsilon=3.0, delta=DELTA)
    est = NoisyGDClassifier(classes=[0, 1], random_state=0, ledger=ledger)
    pipe = make_private_pipeline(est, epsilon=1.0, delta=DELTA, random_state=0)
    pipe.fit(X, y)
    g = pipe.privacy_guarantee_
    (entry,) = ledger.entries
    assert entry.rho == g.rho and entry.delta == g.delta_selection > 0
    assert entry.label == "PrivatePipeline.fit" and not entry.reserved
    assert ledger.total.epsilon == pytest.approx(g.epsilon, rel=1e-12)
    assert pipe._final_estimator.get_params()["ledger"] is ledger
    assert f"outside events of probability {g.delta_selection:.3g}" in str(ledger)
    # An edit re-estimates and retrains: one more release of the same size.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pipe.partial_unlearn(EditRequest(X, y, delete=[3]))
    assert [e.label for e in ledger.entries] == ["PrivatePipeline.fit",
                                                 "PrivatePipeline.partial_unlearn"]
    assert ledger.entries[1].delta == pipe.privacy_guarantee_.delta_selection
    # What the selections have taken of the delta is shown: a store's ledger
    # refused its tenth pipeline release while saying epsilon remained.
    taken = ledger.entries[0].delta + ledger.entries[1].delta
    assert (f"excluded events have taken {taken:.3g} of the delta {DELTA:.3g}"
            in str(ledger).splitlines()[0])
    # record() of a pipeline fitted without the ledger spends its delta too
    # (fresh noise: a seeded pipeline's cannot be named after the fact).
    other = PrivacyLedger(epsilon=3.0, delta=DELTA)
    fresh = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]), epsilon=1.0,
                                  delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fresh.fit(X, y)
    other.record("pipeline", fresh)
    assert other.total.epsilon == pytest.approx(fresh.privacy_guarantee_.epsilon,
                                                rel=1e-12)
    with pytest.raises(ValueError, match="cannot be named after the fact"):
        other.record("seeded pipeline", pipe)


def test_a_pipeline_past_the_budget_is_refused_before_any_statistic():
    X, y = _raw_table()
    ledger = PrivacyLedger(epsilon=0.5, delta=DELTA)
    est = NoisyGDClassifier(classes=[0, 1], random_state=0, ledger=ledger)
    pipe = make_private_pipeline(est, epsilon=1.0, delta=DELTA, random_state=0)
    with pytest.raises(PrivacyBudgetExceeded, match="PrivatePipeline.fit"):
        pipe.fit(X, y)
    assert ledger.entries == ()
    assert not hasattr(pipe.named_steps["preprocess"], "numeric_columns_")
    assert not hasattr(est, "coef_") and est.get_params()["ledger"] is ledger
    # Within the budget, then an edit that no longer fits: refused, unchanged.
    pipe.set_params(epsilon=0.4).fit(X, y)
    state = pickle.dumps((est.coef_, pipe.privacy_guarantee_.rho))
    with pytest.raises(PrivacyBudgetExceeded, match="partial_unlearn"):
        pipe.partial_unlearn(EditRequest(X, y, delete=[3]))
    assert len(ledger.entries) == 1
    assert pickle.dumps((est.coef_, pipe.privacy_guarantee_.rho)) == state


def test_an_empty_ledger_has_room_for_a_fit_at_its_own_budget(binary_data):
    # remaining_rho was capped at the Rényi inverse of the budget (0.0306 at
    # (1, 1e-5)), so an empty ledger offered epsilon 0.915 although a default
    # fit at epsilon 1 (rho 0.0359, Gaussian) fits (second reading, 21.7).
    ledger = PrivacyLedger(epsilon=1.0, delta=DELTA)
    assert ledger.remaining_rho == pytest.approx(
        acc.epsilon_to_rho(epsilon=1.0, delta=DELTA, method="gaussian"), rel=1e-9)
    assert ledger.remaining_epsilon == pytest.approx(1.0, rel=1e-6)
    X, y = binary_data
    _model(epsilon=1.0, ledger=ledger).fit(X, y)
    assert ledger.total.epsilon <= 1.0


# --- one rule for failures after the draw (Section 20.3) -------------------------
def _one_feature_table(n=300):
    """One weak feature, 30% positives: at a small epsilon many seeds release a
    model that predicts one class on the whole ball (and warn about it)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(n, 1))
    return X, (X[:, 0] + rng.normal(0.0, 1.0, n) > 0.8).astype(int)


def _first_constant_seed(make, X, y):
    for seed in range(40):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            make(seed).fit(X, y)
        if any("for every row" in str(r.message) for r in rec):
            return seed
    raise AssertionError("no seed gave a constant model")


@pytest.mark.parametrize("cls", [NoisyGDClassifier, OutputPerturbationClassifier])
def test_a_warning_about_the_release_raised_as_an_error_finds_it_recorded(cls):
    """The constant-model warning quotes the noisy coefficients' margin. Raised
    inside the ledger's block (a filter set to "error"), it cancelled the entry
    of a release whose numbers the exception then carried (audit A4): every
    retry drew fresh noise and none was counted. Now the warning is emitted
    after the entry is recorded, and the model is left fitted (as
    scikit-learn leaves one under an error-raising ConvergenceWarning)."""
    X, y = _one_feature_table()

    def make(seed, ledger=None):
        return cls(classes=[0, 1], epsilon=0.3, delta=DELTA, random_state=seed,
                   ledger=ledger)

    seed = _first_constant_seed(make, X, y)
    ledger = PrivacyLedger(epsilon=5.0, delta=DELTA)
    model = make(seed, ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Said from public numbers before the release (output perturbation's
        # noise at this size): not the warning this test is about.
        warnings.filterwarnings("ignore", message="At epsilon=")
        with pytest.raises(UserWarning, match="outweighs its coefficients"):
            model.fit(X, y)
    (entry,) = ledger.entries
    assert not entry.reserved and entry.label == f"{cls.__name__}.fit"
    assert entry.rho == model.privacy_guarantee_.rho
    reference = make(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference.fit(X, y)
    np.testing.assert_array_equal(model.coef_, reference.coef_)


@pytest.mark.parametrize("cls", [NoisyGDClassifier, OutputPerturbationClassifier])
def test_a_public_warning_raised_as_an_error_stops_an_edit_before_any_spending(
        cls, binary_data, counted):
    """The label-set warning of an edit is decided from public numbers: it is
    said before the pass, so an error-raising filter stops the edit before any
    noise. Output perturbation said it after its release was recorded, and
    its ledger gained an edit that never happened (audit A5)."""
    db = Database(*binary_data)
    ledger = PrivacyLedger(epsilon=5.0, delta=DELTA)
    model = _model(cls, random_state=0, ledger=ledger)
    model.set_params(classes=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(db)
    before = pickle.dumps((model.coef_, model.intercept_, model.privacy_guarantee_))
    counted.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(PrivacyLeakWarning, match="label set"):
            model.partial_unlearn(EditRequest(db, delete=[0]))
    assert counted == [] and len(ledger.entries) == 1
    assert pickle.dumps((model.coef_, model.intercept_,
                         model.privacy_guarantee_)) == before


@pytest.mark.parametrize("cls", [NoisyGDClassifier, OutputPerturbationClassifier])
def test_a_failure_before_the_release_is_committed_records_nothing(
        cls, binary_data, monkeypatch):
    """An interrupt after the draw but before the new state is committed
    leaves the model as it was and shows nothing of the draw: both mechanisms
    cancel the entry (output perturbation recorded it, audit A5), a fit and an
    in-place edit alike (the caller's rows are restored)."""
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=5.0, delta=DELTA)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(cls, "_set_coefficients", interrupted)
        with pytest.raises(KeyboardInterrupt):
            _model(cls, random_state=0, ledger=ledger).fit(X, y)
    assert ledger.entries == ()
    Xw, yw = X.copy(), y.copy()
    model = _model(cls, random_state=0, ledger=ledger).fit(Xw, yw)
    with monkeypatch.context() as patch:
        patch.setattr(EditRequest, "_commit_in_place", interrupted)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            with pytest.raises(KeyboardInterrupt):
                model.partial_unlearn(EditRequest(Xw, yw, delete=[3], in_place=True))
    assert [e.label for e in ledger.entries] == [f"{cls.__name__}.fit"]
    np.testing.assert_array_equal(Xw, X)


def test_a_pipelines_range_warning_raised_as_an_error_finds_it_recorded():
    """A CoarseRangeWarning names released bounds; raised inside the
    pipeline's ledger block it cancelled the pipeline's entry (audit A4)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 2000
    X = pd.DataFrame({"flag": (rng.random(n) < 0.97).astype(float),
                      "age": rng.normal(40, 10, n)})
    y = (X["age"] > 40).astype(int).to_numpy()
    ledger = PrivacyLedger(epsilon=3.0, delta=DELTA)
    est = NoisyGDClassifier(classes=[0, 1], random_state=0, ledger=ledger)
    pipe = make_private_pipeline(est, epsilon=0.3, delta=DELTA, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(CoarseRangeWarning, match="'flag'"):
            pipe.fit(X, y)
    (entry,) = ledger.entries
    assert entry.label == "PrivatePipeline.fit" and not entry.reserved
    assert entry.rho == pipe.privacy_guarantee_.rho
    assert hasattr(est, "coef_") and est.get_params()["ledger"] is ledger


@pytest.mark.parametrize("refit", [False, True])
def test_a_searchs_released_warning_raised_as_an_error_finds_it_recorded(refit):
    """The released run's warnings (a candidate's, or the refit's, which
    depend on the selection) are shown once the search's curve is recorded;
    the candidates' stay hidden (Section 17.2). The selected model keeps the
    ledger for its edits."""
    X, y = _one_feature_table()
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)
    for seed in range(40):
        search = PrivateSearchCV(
            NoisyGDClassifier(classes=[0, 1]), {"C": [0.1, 1.0]}, epsilon=0.3,
            delta=DELTA, n_candidates=2, refit=refit, random_state=seed,
            ledger=ledger)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            search.fit(X, y)
        if any("for every row" in str(r.message) for r in rec):
            break
    else:
        raise AssertionError("no seed released a constant model")
    # The same seed again, to release the same model: the ledger would refuse
    # a second search with it (the same noise, Section 20.4), so a new one.
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)
    search.set_params(ledger=ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="for every row"):
            search.fit(X, y)
    assert len(ledger.entries) == 1
    assert ledger.entries[-1].label == "PrivateSearchCV.fit"
    assert not ledger.entries[-1].reserved
    assert search.best_estimator_.get_params()["ledger"] is ledger


@pytest.mark.parametrize("cls", [NoisyGDClassifier, OutputPerturbationClassifier])
def test_an_interrupt_at_the_commit_records_the_release(cls, binary_data,
                                                        monkeypatch):
    """Ctrl-C during an in-place edit's commit is held back and delivered
    after it: the model and the caller's rows are the new ones, so the
    release was made and is recorded (it was cancelled, under-counting)."""
    X, y = binary_data
    X, y = X.copy(), y.copy()
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)
    model = _model(cls, random_state=0, ledger=ledger).fit(X, y)
    coef = model.coef_.copy()
    commit = EditRequest._commit_in_place

    def ctrl_c_during_commit(self):
        os.kill(os.getpid(), signal.SIGINT)
        return commit(self)

    monkeypatch.setattr(EditRequest, "_commit_in_place", ctrl_c_during_commit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(KeyboardInterrupt):
            model.partial_unlearn(EditRequest(X, y, delete=[0, 1], in_place=True))
    assert not np.array_equal(model.coef_, coef)
    assert (X[-2:] == 0).all()
    assert [(e.label, e.reserved) for e in ledger.entries] == [
        (f"{cls.__name__}.fit", False), (f"{cls.__name__}.partial_unlearn", False)]


def test_a_ledger_that_cannot_record_a_made_release_says_so_and_keeps_it_counted(
        binary_data):
    class Failing(PrivacyLedger):
        def settle(self, entry_id, **final):
            raise OSError("disk full")

    X, y = binary_data
    ledger = Failing(epsilon=50.0, delta=DELTA)
    model = _model(random_state=0, ledger=ledger)
    with pytest.raises(LedgerUnreachableError, match="release was made.*disk full"):
        model.fit(X, y)
    assert hasattr(model, "coef_")
    (entry,) = ledger.entries
    assert entry.reserved and ledger.total.rho == pytest.approx(
        model.privacy_guarantee_.rho)


def test_a_shared_ledger_is_never_recreated_by_its_copies(binary_data, tmp_path,
                                                         monkeypatch):
    """A relative path was kept as given, and an unpickled copy re-created a
    missing file: a model loaded by a job in another directory (cron runs in
    $HOME) charged a fresh, full budget (service audit S1)."""
    X, y = binary_data
    monkeypatch.chdir(tmp_path)
    ledger = SharedLedger("ledger.sqlite", epsilon=5.0, delta=DELTA)
    assert ledger.path == str(tmp_path / "ledger.sqlite")
    model = _model(random_state=0, ledger=ledger).fit(X, y)
    blob = pickle.dumps(model)
    elsewhere = tmp_path / "cron"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    copy_ = pickle.loads(blob)
    assert copy_.get_params()["ledger"].total.n_entries == 1    # the same file
    (tmp_path / "ledger.sqlite").rename(tmp_path / "moved.sqlite")
    gone = pickle.loads(blob)
    with pytest.raises(LedgerUnreachableError, match="never recreated"):
        gone.partial_unlearn(EditRequest(X, y, delete=[0]))
    with pytest.raises(LedgerUnreachableError):
        copy_.fit(X, y)
    assert not (tmp_path / "ledger.sqlite").exists()
    assert not any(elsewhere.iterdir())
    # A pickle of an older version holds the relative path: read from the
    # working directory, refused by name when missing (not a ValueError).
    old = pickle.loads(blob)
    old.get_params()["ledger"].path = "ledger.sqlite"
    with pytest.raises(LedgerUnreachableError, match="'ledger.sqlite' cannot be "):
        pickle.loads(pickle.dumps(old)).fit(X, y)


def test_a_nested_commit_counts_for_the_outer_call(monkeypatch):
    """A pipeline does not undo its estimator's edit: an interrupt after the
    estimator committed (inside the pipeline's edit) must keep the edit's
    entry, as must one after a PrivatePipeline's inner fit (second reading:
    ignoring nested commits under-counted both)."""
    X, y = _raw_table()
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)
    est = NoisyGDClassifier(classes=[0, 1], random_state=0, ledger=ledger)
    pipe = make_private_pipeline(est, epsilon=1.0, delta=DELTA, random_state=0)
    target = type(pipe)
    real_fit = target.__mro__[1].fit            # ForgetPipeline.fit

    def fit_then_interrupt(self, *args, **kwargs):
        real_fit(self, *args, **kwargs)
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(target.__mro__[1], "fit", fit_then_interrupt)
        with pytest.raises(KeyboardInterrupt):
            pipe.fit(X, y)
    assert [(e.label, e.reserved) for e in ledger.entries] == [
        ("PrivatePipeline.fit", False)]


def test_an_interrupt_as_a_committed_block_unwinds_keeps_its_entry():
    """An interrupt delivered as release_spending's block unwinds, after the
    object's restore block committed (PrivateSearchCV.fit's order), cancelled
    the entry of a search that kept its result (second reading)."""
    from skforget._release import mark_committed, release_spending, releasing

    ledger = PrivacyLedger(epsilon=5.0, delta=DELTA)
    with pytest.raises(KeyboardInterrupt):
        with releasing(), release_spending(ledger, "search", rho=0.01):
            mark_committed()
            raise KeyboardInterrupt
    assert [(e.label, e.reserved) for e in ledger.entries] == [("search", False)]
    with pytest.raises(KeyboardInterrupt):
        with releasing(), release_spending(ledger, "not yet", rho=0.01):
            raise KeyboardInterrupt
    assert len(ledger.entries) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_copy_of_an_in_memory_ledger_refuses(binary_data, tmp_path):
    """Section 20.5: a fork copies an in-memory ledger without pickling it, and
    the child's records would stay in the child (an audit saw two forked fits
    at epsilon = 1 each pass a budget of 1.5, the parent's ledger empty). The
    child refuses before any pass; a SharedLedger records from any process."""
    X, y = binary_data
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    shared = SharedLedger(str(tmp_path / "ledger.sqlite"), epsilon=10.0, delta=DELTA)
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if both behave
        code = 1
        try:
            try:
                _model(ledger=ledger, random_state=0).fit(X, y)
            except LedgerUnreachableError:
                _model(ledger=shared, random_state=0).fit(X, y)
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert ledger.entries == () and len(shared.entries) == 1
    _model(ledger=ledger, random_state=0).fit(X, y)   # the parent records
    assert len(ledger.entries) == 1


def test_private_steps_in_a_plain_pipeline_say_the_ledger_misses_them(binary_data):
    """Section 20.4: a private step in a scikit-learn Pipeline releases its
    statistics before the estimator, outside the estimator's ledger; the
    warning says so, and record() enters the step (it raised before)."""
    from sklearn.pipeline import make_pipeline

    from skforget.preprocessing import PrivateStandardScaler

    X, y = binary_data
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    # The step draws fresh noise: a seeded one cannot be recorded by hand.
    pipe = make_pipeline(PrivateStandardScaler(rho=0.05),
                         _model(ledger=ledger, random_state=0))
    with pytest.warns(PrivacyLeakWarning, match="record it with ledger.record"):
        pipe.fit(X, y)
    assert [e.label for e in ledger.entries] == ["NoisyGDClassifier.fit"]
    step = pipe.steps[0][1]
    ledger.record("scaler", step)
    # Gaussian mechanisms outside its selections' events: composed as GDP.
    assert ledger.entries[-1].rho == step.privacy_guarantee_.rho
    assert ledger.entries[-1].gaussian


def test_settling_a_reservation_that_is_gone_says_so():
    """Section 20.3: a reservation whose entries were reset or replaced
    before its release settled was dropped without a word (an audit's
    finding): the release was made and counted nowhere."""
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    entry = ledger.reserve("a release", rho=0.01)
    ledger._entries = []   # another process reset the account meanwhile
    with pytest.raises(LedgerUnreachableError, match="recorded nowhere"):
        ledger.settle(entry)
    kept = ledger.reserve("another", rho=0.01)
    ledger.settle(kept)
    assert [e.label for e in ledger.entries] == ["another"]


def test_a_private_step_records_its_release_on_its_own_ledger(binary_data):
    """Section 20.1: a private preprocessing step with ``ledger=`` checks and
    reserves its ``rho`` and selection ``delta`` before its first statistic
    (an audit's finding: outside a pipeline its statistics reached no
    ledger); inside a private pipeline that records, the pipeline's one entry
    composes them and the step's own recording is off."""
    pd = pytest.importorskip("pandas")
    from sklearn.pipeline import make_pipeline

    from skforget.preprocessing import PrivateOneHotEncoder, PrivateStandardScaler

    X, y = binary_data
    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA)
    PrivateStandardScaler(rho=0.05, random_state=0, ledger=ledger).fit(X)
    entry = ledger.entries[-1]
    assert (entry.label, entry.rho, entry.delta, entry.gaussian) == (
        "PrivateStandardScaler.fit", 0.05, 0.0, True)
    cats = pd.DataFrame({"c": np.where(y == 1, "a", "b")})
    PrivateOneHotEncoder(rho=0.05, delta=1e-7, ledger=ledger).fit(cats)
    assert (ledger.entries[-1].rho, ledger.entries[-1].delta) == (0.05, 1e-7)
    # Past the budget: refused before any statistic, the step unfitted.
    small = PrivacyLedger(epsilon=0.1, delta=DELTA)
    refused = PrivateStandardScaler(rho=0.05, ledger=small)
    with pytest.raises(PrivacyBudgetExceeded, match="PrivateStandardScaler.fit"):
        refused.fit(X)
    assert small.entries == () and not hasattr(refused, "center_")
    # A plain Pipeline: the step and the estimator each record, and the leak
    # warning no longer names the step as missing from the ledger.
    both = PrivacyLedger(epsilon=10.0, delta=DELTA)
    pipe = make_pipeline(PrivateStandardScaler(rho=0.05, random_state=0, ledger=both),
                         _model(ledger=both, random_state=0))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        pipe.fit(X, y)
    assert [e.label for e in both.entries] == ["PrivateStandardScaler.fit",
                                               "NoisyGDClassifier.fit"]
    assert not any("record each" in str(r.message) or "give each" in str(r.message)
                   for r in rec)
    # A private pipeline that records: one entry, the step's ledger restored.
    one = PrivacyLedger(epsilon=10.0, delta=DELTA)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    private = make_private_pipeline(_model(ledger=one, random_state=0), epsilon=1.0,
                                    delta=DELTA, random_state=0)
    private.set_params(preprocess__ledger=one)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        private.fit(frame, y)
    assert len(one.entries) == 1
    assert private.named_steps["preprocess"].ledger is one


# --- seeded noise (Sections 10.3, 20.4) ---------------------------------------
def acc_noise_key(seed, segment):
    from skforget._validation import noise_key

    return noise_key(seed, segment)


def _unit_rows(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("cls", [NoisyGDClassifier, OutputPerturbationClassifier])
def test_a_ledger_refuses_a_second_release_of_the_same_seeded_noise(cls):
    """Two fits with random_state=0 draw the same noise: on neighbouring rows
    their difference cancels it, and no composition covers the pair. The
    ledger recorded both as independent releases; it now refuses the second
    before its pass, and the estimator stays unfitted."""
    X, y = _unit_rows()
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)
    first = cls(classes=[0, 1], random_state=0, max_lazy_records=0, ledger=ledger) \
        if cls is NoisyGDClassifier else cls(classes=[0, 1], random_state=0,
                                             ledger=ledger)
    first.fit(X, y)
    # Its own edit draws segment 1's noise: recorded.
    first.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert len(ledger.entries) == 2
    second = clone(first)
    with pytest.raises(PrivacyBudgetExceeded, match=r"would draw the same noise as "
                       rf"{cls.__name__}\.fit \(the same seed, segment 0, stream 0"):
        second.fit(X[1:], y[1:])
    assert not hasattr(second, "coef_") and len(ledger.entries) == 2
    # Another seed, or fresh entropy, is recorded.
    clone(first).set_params(random_state=1).fit(X[1:], y[1:])
    clone(first).set_params(random_state=None).fit(X[1:], y[1:])
    clone(first).set_params(random_state=None).fit(X[2:], y[2:])
    assert len(ledger.entries) == 5


def test_a_random_state_with_a_ledger_is_refused_and_grid_clones_are_caught():
    """A RandomState's draws cannot be named before they happen (a release
    may draw from it several times; a clone copies its state): with a ledger
    it is refused before any pass. GridSearchCV clones an integer-seeded
    estimator into fits of the same noise: run one after another, the search
    is refused before its first fit, nothing recorded (before, the first fit
    was recorded and the others refused one by one)."""
    X, y = _unit_rows()
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)
    model = NoisyGDClassifier(classes=[0, 1], random_state=np.random.RandomState(0),
                              ledger=ledger)
    with pytest.raises(PrivacyBudgetExceeded, match="from a RandomState"):
        model.fit(X, y)
    assert not hasattr(model, "coef_") and ledger.entries == ()
    grid = PrivacyLedger(epsilon=50.0, delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(NoisyGDClassifier(classes=[0, 1], random_state=0,
                                                ledger=grid),
                              {"C": [0.1, 1.0]},
                              cv=KFold(2, shuffle=True, random_state=0),
                              error_score=np.nan, refit=False)
        with pytest.raises(ValueError, match="All the 4 fits failed") as err:
            search.fit(X, y)
    assert "The run of 4 fits of NoisyGDClassifier.fit" in str(err.value)
    assert "would draw the same noise" in str(err.value)
    assert grid.entries == ()
    NoisyGDClassifier(classes=[0, 1], random_state=0, ledger=grid).fit(X, y)
    assert len(grid.entries) == 1
    # A model recorded after the fact cannot name its seeded noise.
    seeded = NoisyGDClassifier(classes=[0, 1], random_state=3).fit(X, y)
    with pytest.raises(ValueError, match="cannot be named after the fact"):
        grid.record("later", seeded)
    # Names given by hand are checked like an estimator's.
    from skforget._validation import noise_key

    name = grid.entries[0].noise
    assert grid.would_exceed(rho=0.001, noise=name)
    with pytest.raises(PrivacyBudgetExceeded, match="same noise"):
        grid.check(rho=0.001, noise=name)
    grid.spend("by hand", rho=0.001, noise=(noise_key(99, 0),))
    with pytest.raises(PrivacyBudgetExceeded, match="same noise"):
        grid.spend("again", rho=0.001, noise=(noise_key(99, 0),))


def test_private_steps_given_one_seed_are_refused_with_or_without_a_ledger():
    pd = pytest.importorskip("pandas")
    from skforget.pipeline import ForgetPipeline
    from skforget.preprocessing import PrivateStandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    y = (X["a"] > 0).astype(int)
    steps = [("one", PrivateStandardScaler(rho=0.01, random_state=4)),
             ("two", PrivateStandardScaler(rho=0.01, random_state=4)),
             ("model", NoisyGDClassifier(classes=[0, 1]))]
    with pytest.raises(ValueError, match="'one' and 'two' are given the same "
                       "random_state"):
        ForgetPipeline(steps).fit(X, y)
    steps[1][1].set_params(random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ForgetPipeline(steps).fit(X, y)


def test_seeded_pipelines_and_searches_name_their_noise():
    rng = np.random.default_rng(0)
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"a": rng.normal(size=400), "b": rng.choice(["u", "v"], 400)})
    y = (X["a"] > 0).astype(int)
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)

    def pipe():
        return make_private_pipeline(NoisyGDClassifier(classes=[0, 1], random_state=0,
                                                       ledger=ledger),
                                     epsilon=1.0, random_state=0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = pipe().fit(X, y)
        first.partial_unlearn(EditRequest(X, y, delete=[3]))   # edit seeds
        assert len(ledger.entries) == 2
        assert all(e.noise for e in ledger.entries)
        assert ledger.entries[0].noise != ledger.entries[1].noise
        with pytest.raises(PrivacyBudgetExceeded, match="same noise"):
            pipe().fit(X, y)
        search = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), {"C": [0.1, 1.0]},
                                 epsilon=1.0, n_candidates=2, random_state=5,
                                 ledger=ledger)
        search.fit(X[["a"]].to_numpy() / 4, y)
        with pytest.raises(PrivacyBudgetExceeded, match="segment search"):
            clone(search).fit(X[["a"]].to_numpy() / 4, y)
    assert len(ledger.entries) == 3


def test_a_shared_ledger_keeps_the_noise_names(tmp_path):
    X, y = _unit_rows()
    path = tmp_path / "ledger.sqlite"
    NoisyGDClassifier(classes=[0, 1], random_state=7,
                      ledger=SharedLedger(path, epsilon=50.0, delta=DELTA)).fit(X, y)
    reopened = SharedLedger(path, epsilon=50.0, delta=DELTA)
    (name,) = reopened.entries[0].noise
    # The seed is named by a hash, never written as it is.
    assert name == acc_noise_key(7, 0) and name.endswith(", segment 0, stream 0")
    assert "random_state" not in name and "int 7" not in name
    with pytest.raises(PrivacyBudgetExceeded, match="same noise"):
        NoisyGDClassifier(classes=[0, 1], random_state=7, ledger=reopened).fit(X, y)
    # An entry recorded before noise names existed reads as fresh noise.
    old = acc.LedgerEntry.from_dict({k: v for k, v in
                                     reopened.entries[0].to_dict().items()
                                     if k != "noise"})
    assert old.noise == ()


def test_a_ledger_says_when_selections_exhaust_its_delta():
    """Each private category selection spends a delta; their sum reaching
    the ledger's left no statement, and the refusal said epsilon 'inf' and
    '94.5 remaining' without naming delta."""
    ledger = PrivacyLedger(epsilon=100.0, delta=1e-5)
    for i in range(3):
        ledger.spend(f"pipeline {i}", rho=0.01, delta=3e-6)
    with pytest.raises(PrivacyBudgetExceeded, match=r"excluded events to 1.2e-05, "
                       r"at or above the ledger's delta 1e-05.*selection_share"):
        ledger.spend("pipeline 3", rho=0.01, delta=3e-6)
    assert len(ledger.entries) == 3
    ledger.spend("a model without selections", rho=0.01)   # delta 0: fits


def _two_scaler_pipeline(a, b):
    from skforget.pipeline import ForgetPipeline
    from skforget.preprocessing import PrivateStandardScaler

    return ForgetPipeline([("one", PrivateStandardScaler(rho=0.01, random_state=a)),
                           ("two", PrivateStandardScaler(rho=0.01, random_state=b)),
                           ("model", NoisyGDClassifier(classes=[0, 1]))])


def _two_columns():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    return X, (X["a"] > 0).astype(int)


def test_a_seeded_private_step_is_not_recorded_by_hand():
    from skforget.preprocessing import PrivateStandardScaler

    X, _ = _two_columns()
    ledger = PrivacyLedger(epsilon=50.0, delta=DELTA)
    with pytest.raises(ValueError, match="cannot be named after the fact"):
        ledger.record("step", PrivateStandardScaler(rho=0.01, random_state=3).fit(X))


def test_random_states_of_private_steps_are_told_apart_by_state():
    X, y = _two_columns()
    shared = np.random.RandomState(1)       # one object, drawn from in turn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _two_scaler_pipeline(shared, shared).fit(X, y)
        with pytest.raises(ValueError, match="same random_state"):
            _two_scaler_pipeline(np.random.RandomState(1),
                                 np.random.RandomState(1)).fit(X, y)


def test_a_private_steps_ledger_records_the_pipelines_releases():
    """The steps' ledger gets the whole release, fit and edits (an edit's
    derived seeds used to be refused there as RandomStates), and an edit
    checks the seeds of fit, whatever set_params says now."""
    X, y = _two_columns()
    own = PrivacyLedger(epsilon=50.0, delta=DELTA)
    fitted = _two_scaler_pipeline(1, 2)
    fitted.set_params(one__ledger=own)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted.fit(X, y)
        fitted.partial_unlearn(EditRequest(X, y, delete=[0]))
        assert [e.label for e in own.entries] == ["ForgetPipeline.fit",
                                                  "ForgetPipeline.partial_unlearn"]
        fitted.set_params(two__random_state=1)
        fitted.partial_unlearn(EditRequest(X.iloc[1:], y.iloc[1:], delete=[0],
                                           by="position"))
    assert len(own.entries) == 3


def test_fits_on_folds_that_read_the_labels_are_refused_by_a_ledger(binary_data):
    """A StratifiedKFold (what cv=<int> gives a classifier) moves other
    records between folds when one record's label changes: each fold fit's
    training rows then differ by several records, and their figures do not
    add (privacy-accounting.md, 20.4). A ledger refuses such fits before any
    pass; folds drawn without the rows are recorded."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from skforget import UnaccountableReleaseError

    X, y = binary_data
    # The fact the refusal rests on: one flipped label moves others.
    def folds(labels):
        out = np.empty(len(labels), dtype=int)
        for k, (_, test) in enumerate(StratifiedKFold(3).split(X, labels)):
            out[test] = k
        return out

    moved = 0
    for i in range(30):
        flipped = y.copy()
        flipped[i] = 1 - flipped[i]
        changed = folds(y) != folds(flipped)
        changed[i] = False
        moved = max(moved, changed.sum())
    assert moved >= 1
    ledger = PrivacyLedger(epsilon=100.0, delta=DELTA)
    for cv in (3, StratifiedKFold(3, shuffle=True, random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(UnaccountableReleaseError,
                               match="folds drawn by reading the labels"):
                cross_val_score(_model(ledger=ledger), X, y, cv=cv,
                                error_score="raise")
            with pytest.raises(ValueError, match="All the 6 fits failed") as err:
                GridSearchCV(_model(ledger=ledger), {"C": [0.1, 1.0]},
                             cv=cv).fit(X, y)
        assert "UnaccountableReleaseError" in str(err.value)
        assert "cv=KFold(n_splits=3, shuffle=True, random_state=0)" in str(err.value)
    assert ledger.entries == ()
    # A subclass of the budget refusal: code catching refusals still does.
    assert issubclass(UnaccountableReleaseError, PrivacyBudgetExceeded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cross_val_score(_model(ledger=ledger), X, y,
                        cv=KFold(3, shuffle=True, random_state=0))
    assert len(ledger.entries) == 3


def test_a_relation_or_unit_mismatch_is_its_own_refusal(binary_data):
    # Budget trial #6: a relation mismatch was raised as "budget exceeded".
    from skforget import UnaccountableReleaseError

    ledger = PrivacyLedger(epsilon=10.0, delta=DELTA, relation="replace",
                           group_size=1)
    with pytest.raises(UnaccountableReleaseError, match="relation='replace'"):
        ledger.spend("a zero-out fit", rho=0.01, relation="zero_out")
    with pytest.raises(UnaccountableReleaseError, match="group_size=1"):
        ledger.spend("a group fit", rho=0.01, group_size=2)
    assert ledger.entries == ()


def test_every_fold_fit_a_ledger_cannot_account_for_is_refused(binary_data, tmp_path):
    """Second reader (session 18): fits on label-reading folds were recorded
    through cross_val_predict, validation_curve, learning_curve,
    permutation_test_score, CalibratedClassifierCV, worker processes of
    cross_validate, group splitters, a StratifiedKFold subclass, a list of
    its splits and an outer stratified cross-validation. Refused, fail-closed:
    a level whose folds cannot be read is refused too (Section 20.4)."""
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import BaggingClassifier
    from sklearn.feature_selection import RFECV
    from sklearn.model_selection import (
        FixedThresholdClassifier,
        GroupKFold,
        StratifiedKFold,
        cross_val_predict,
        cross_val_score,
        cross_validate,
        learning_curve,
        permutation_test_score,
        validation_curve,
    )

    from skforget import UnaccountableReleaseError

    X, y = binary_data
    groups = np.arange(len(y)) % 17

    class Mine(StratifiedKFold):
        pass

    ledger = PrivacyLedger(epsilon=1000.0, delta=DELTA)
    kf = KFold(3, shuffle=True, random_state=0)
    model = _model(ledger=ledger)
    calls = {
        "cross_val_predict": lambda: cross_val_predict(model, X, y, cv=3),
        "validation_curve": lambda: validation_curve(
            model, X, y, param_name="C", param_range=[0.1, 1.0], cv=3,
            error_score="raise"),
        "learning_curve": lambda: learning_curve(model, X, y, cv=3,
                                                 train_sizes=[0.5, 1.0],
                                                 error_score="raise"),
        "permutation_test_score": lambda: permutation_test_score(
            model, X, y, cv=kf, n_permutations=2),
        "calibration": lambda: CalibratedClassifierCV(model, cv=3).fit(X, y),
        "GroupKFold": lambda: cross_val_score(model, X, y, groups=groups,
                                              cv=GroupKFold(3), error_score="raise"),
        "subclass": lambda: cross_val_score(model, X, y, cv=Mine(3),
                                            error_score="raise"),
        "index lists": lambda: cross_val_score(
            model, X, y, cv=list(StratifiedKFold(3).split(X, y)), error_score="raise"),
        "outer stratified": lambda: cross_val_score(
            GridSearchCV(model, {"C": [0.1, 1.0]}, cv=kf, error_score="raise"),
            X, y, cv=3, error_score="raise"),
        # Meta-estimators outside model selection whose fits are not read.
        "RFECV": lambda: RFECV(model, cv=kf).fit(X, y),
        "bagging": lambda: BaggingClassifier(model, n_estimators=2).fit(X, y),
    }
    for name, call in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(UnaccountableReleaseError):
                call()
        assert ledger.entries == (), name
    # A worker process or thread cannot see the levels that dispatched its
    # fit: the clone it fits keeps them, read where it was made (an inner
    # search's workers under a stratified outer level were recorded).
    shared = SharedLedger(tmp_path / "cv.sqlite", epsilon=100.0, delta=DELTA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for outer_jobs, inner_jobs in ((2, 1), (1, 2)):
            with pytest.raises(UnaccountableReleaseError):
                cross_val_score(GridSearchCV(_model(ledger=shared), {"C": [0.1, 1.0]},
                                             cv=kf, n_jobs=inner_jobs,
                                             error_score="raise"),
                                X, y, cv=3, n_jobs=outer_jobs, error_score="raise")
            assert shared.entries == ()
        # Clones joblib makes in a thread of its own (past pre_dispatch)
        # cannot show their splitter: refused, unless every clone is made in
        # the calling thread.
        scores = cross_val_score(_model(ledger=shared), X, y, n_jobs=2,
                                 cv=KFold(10, shuffle=True, random_state=0))
        assert 0 < np.isnan(scores).sum() < 10
        # The refusal names the way out (a new-user trial read only "use
        # KFold", which it had).
        with pytest.raises(UnaccountableReleaseError, match=r"\(a fit in "
                           r"scikit-learn model selection, from a splitter this "
                           r"process cannot see\).*give it pre_dispatch=\"all\""):
            cross_val_score(_model(ledger=SharedLedger(
                tmp_path / "hint.sqlite", epsilon=100.0, delta=DELTA)), X, y,
                n_jobs=2, cv=KFold(10, shuffle=True, random_state=0),
                error_score="raise")
        recorded = len(shared.entries)
        assert recorded == 10 - np.isnan(scores).sum()
        cross_val_score(_model(ledger=shared), X, y, cv=kf, n_jobs=2,
                        pre_dispatch="all")
    assert len(shared.entries) == recorded + 3
    # Fourth reading: a stale context on a fitted search's unfitted estimator,
    # and a cross-validation inside another's fold, were taken for the
    # dispatcher of folds cloned in joblib's thread.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stale = cross_validate(GridSearchCV(_model(ledger=shared), {"C": [0.1, 1.0]},
                                            cv=kf), X, y, cv=kf,
                               return_estimator=True)["estimator"][0]
        before = len(shared.entries)
        with pytest.raises(ValueError, match="All the 10 fits failed") as err:
            cross_val_score(stale.estimator, X, y, n_jobs=2, cv=StratifiedKFold(10))
        assert "UnaccountableReleaseError" in str(err.value)
        assert len(shared.entries) == before

        class Wrapper(ClassifierMixin, BaseEstimator):
            def __init__(self, est=None):
                self.est = est

            def fit(self, X, y):
                cross_val_score(self.est, X, y, cv=StratifiedKFold(10), n_jobs=2,
                                error_score="raise")
                self.classes_ = np.unique(y)
                return self

        with pytest.raises(UnaccountableReleaseError):
            cross_validate(Wrapper(_model(ledger=shared)), X, y, cv=kf,
                           error_score="raise")
        assert len(shared.entries) == before

        # Fifth reading: user code fitting its own clone of that stale model
        # inside a fold (not a parameter the fold's dispatcher cloned).
        class UsesStale(ClassifierMixin, BaseEstimator):
            def fit(self, X, y):
                clone(stale.estimator).fit(X, y)
                self.classes_ = np.unique(y)
                return self

        with pytest.raises(UnaccountableReleaseError):
            cross_val_score(UsesStale(), X, y, cv=StratifiedKFold(10), n_jobs=2,
                            pre_dispatch="all", error_score="raise")
        assert len(shared.entries) == before

        # Sixth reading: the stale model passed as a parameter too, whose
        # dispatcher's clone inherits its token.
        class CarriesStale(ClassifierMixin, BaseEstimator):
            def __init__(self, model=None):
                self.model = model

            def fit(self, X, y):
                clone(stale.estimator).fit(X, y)
                self.classes_ = np.unique(y)
                return self

        with pytest.raises(UnaccountableReleaseError):
            cross_val_score(CarriesStale(stale.estimator), X, y, n_jobs=2,
                            cv=StratifiedKFold(10), pre_dispatch="all",
                            error_score="raise")
        assert len(shared.entries) == before
        # Fitted on its own, it is one plain fit, labelled as one.
        clone(stale.estimator).fit(X, y)
    assert shared.entries[-1].label == "NoisyGDClassifier.fit"
    # One fit on its input, wrapped: recorded, and no model-selection warning.
    recorded = len(shared.entries)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyBudgetWarning)
        FixedThresholdClassifier(_model(ledger=shared), threshold=0.3).fit(X, y)
    assert len(shared.entries) == recorded + 1
    # A fit consumes its clone's context: no fitted model carries one.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(_model(), {"C": [0.1, 1.0]}, cv=kf).fit(X, y)
    assert "_selection_context" not in search.best_estimator_.__dict__
    # Folds drawn without the rows at every level compose: recorded, nested
    # too (every fit's figure added, an upper bound).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cross_val_score(GridSearchCV(model, {"C": [0.1, 1.0]}, cv=kf), X, y, cv=kf)
    assert len(ledger.entries) == 3 * (2 * 3 + 1)


def test_a_ledger_says_a_delta_too_large_to_mean_anything():
    # A new-user trial gave PrivacyLedger(1.0, 0.5) without a word.
    with pytest.warns(UserWarning, match=r"delta=0.5: a delta is the chance"):
        PrivacyLedger(1.0, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PrivacyLedger(1.0, 1e-5)
        PrivacyLedger(1.0, 1e-3)


def test_a_large_delta_is_said_once_when_the_budget_is_set(tmp_path):
    # A second reader: every reopen and unpickle of a SharedLedger said it
    # again, pointing at skforget's own line (and under -W error could not
    # reopen the file).
    with pytest.warns(UserWarning, match="delta=0.01") as said:
        SharedLedger(tmp_path / "l.sqlite", epsilon=1.0, delta=0.01)
    assert said[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = SharedLedger(tmp_path / "l.sqlite")
        pickle.loads(pickle.dumps(again))
