"""Public ranges and category lists given to the private steps (``bounds=``,
``categories=``; privacy-accounting.md, Section 19.2): what they change in the
releases, what the figures say, and the refusals."""

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skforget import Database, EditRequest, NoisyGDClassifier
from skforget.accounting import histogram_sensitivity, moments_sensitivity
from skforget.exceptions import CoarseRangeWarning
from skforget.pipeline import make_private_pipeline
from skforget.preprocessing import (
    PrivateOneHotEncoder,
    PrivateSimpleImputer,
    PrivateStandardScaler,
    PrivateTableEncoder,
)


def _frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "mass": rng.normal(4200, 800, n),
        "depth": rng.normal(17, 2, n),
        "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n, p=[.6, .38, .02]),
        "sex": rng.choice(["female", "male"], n).astype(object),
    }, index=[f"p{i}" for i in range(n)])
    y = pd.Series((X["mass"] > 4200).astype(int), index=X.index)
    return X, y


class _Spy:
    """Records the rho of every Gaussian release the steps draw, by kind."""

    def __init__(self, monkeypatch, relation="replace", group_size=1):
        import skforget.preprocessing._numeric as num
        import skforget.preprocessing._private as mod

        self.spent = []
        h = histogram_sensitivity(relation=relation, group_size=group_size)
        m = moments_sensitivity(relation=relation, group_size=group_size)
        for module, name, sens, pos in [(num, "_noisy_histogram", h, -2),
                                        (num, "_noisy_sub_histogram", h, -2),
                                        (num, "_noisy_sums", m, -2),
                                        (mod, "_noisy_counts", h, -1)]:
            monkeypatch.setattr(module, name, self._wrap(getattr(module, name), name,
                                                         sens, pos))

    def _wrap(self, func, name, sensitivity, position):
        def wrapped(*args):
            sigma = args[position]
            self.spent.append((name, sensitivity**2 / (2 * sigma**2)))
            return func(*args)
        return wrapped

    def kinds(self):
        return [k for k, _ in self.spent]

    def rho(self):
        return math.fsum(r for _, r in self.spent)


def test_a_public_range_replaces_the_histograms_and_gives_the_moments_the_share(
        monkeypatch):
    X, _ = _frame()
    spy = _Spy(monkeypatch)
    scaler = PrivateStandardScaler(rho=0.2, bounds={"mass": (2500, 6500)},
                                   random_state=0).fit(X[["mass", "depth"]])
    # "mass": one release (its moments at the column's whole rho); "depth":
    # its log histogram, then moments (and perhaps a refinement).
    assert spy.kinds()[0] == "_noisy_sums"
    assert spy.spent[0][1] == pytest.approx(0.1, rel=1e-12)
    assert "_noisy_histogram" in spy.kinds()[1:]
    assert spy.rho() == pytest.approx(scaler.privacy_guarantee_.rho, rel=1e-12)
    assert scaler.privacy_guarantee_.rho == pytest.approx(0.2, rel=1e-12)
    assert scaler.bounds_[0].tolist() == [2500.0, 6500.0]
    # Values outside the given range are clipped to it.
    out = scaler.transform(pd.DataFrame({"mass": [100.0, 2500.0, 1e9],
                                         "depth": [17.0] * 3}))
    assert out[0, 0] == out[1, 0] and out[2, 0] == pytest.approx(
        (6500 - scaler.center_[0]) / scaler.scale_[0])
    # The imputer takes the same constants.
    spy.spent.clear()
    imputer = PrivateSimpleImputer(rho=0.2, bounds={0: (2500, 6500)},
                                   random_state=0).fit(X[["mass"]].to_numpy())
    assert spy.kinds() == ["_noisy_sums"]
    assert 2500 <= imputer.statistics_[0] <= 6500


def test_a_public_range_is_never_called_coarse():
    # A range of one octave, given by the user, is what they said: no warning
    # (a private range of one octave warns, Section 19.2 (iv)).
    X = pd.DataFrame({"v": np.random.default_rng(0).uniform(1.0, 2.0, 3000)})
    with pytest.warns(CoarseRangeWarning):
        PrivateStandardScaler(rho=0.5, random_state=0).fit(X)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoarseRangeWarning)
        scaler = PrivateStandardScaler(rho=0.5, bounds={"v": (1.0, 2.0)},
                                       random_state=0).fit(X)
    assert abs(scaler.center_[0] - 1.5) < 0.05


def test_public_categories_release_nothing_and_keep_every_listed_value(monkeypatch):
    X, _ = _frame()
    spy = _Spy(monkeypatch)
    enc = PrivateOneHotEncoder(
        rho=0.2, delta=1e-6, random_state=0,
        categories={"island": ["Torgersen", "Biscoe", "Dream", "Atlantis"]},
    ).fit(X[["island", "sex"]])
    # Only "sex" is counted, at the whole rho and delta.
    assert spy.kinds() == ["_noisy_counts"]
    assert spy.spent[0][1] == pytest.approx(0.2, rel=1e-12)
    assert enc.privacy_guarantee_.rho == pytest.approx(0.2, rel=1e-12)
    assert enc.privacy_guarantee_.delta_selection == pytest.approx(1e-6)
    assert dict((c, (r, d)) for c, r, d in enc.privacy_guarantee_.columns)[
        "island"] == (0.0, 0.0)
    # Listed values are kept however rare (Torgersen, 2 %), or absent
    # (Atlantis); a value not listed goes to "infrequent".
    assert enc.categories_[0].tolist() == ["Atlantis", "Biscoe", "Dream", "Torgersen"]
    assert np.isnan(enc.thresholds_[0]) and np.isfinite(enc.thresholds_[1])
    out = enc.transform(pd.DataFrame({"island": ["Torgersen", "Mars"],
                                      "sex": ["male", "male"]}))
    assert out[0, :5].tolist() == [0, 0, 0, 1, 0]
    assert out[1, :5].tolist() == [0, 0, 0, 0, 1]


def test_every_column_listed_spends_nothing(monkeypatch):
    X, _ = _frame()
    spy = _Spy(monkeypatch)
    enc = PrivateOneHotEncoder(
        rho=0.2, random_state=0,
        categories={"island": ["Biscoe", "Dream"], "sex": ["female", "male", None]},
    ).fit(X[["island", "sex"]])
    assert spy.spent == []
    assert enc.privacy_guarantee_.rho == 0.0
    assert enc.privacy_guarantee_.rho_replace == 0.0
    assert enc.privacy_guarantee_.delta_selection == 0.0
    # None listed is the missing value's category.
    assert enc.categories_[1].tolist() == ["<missing>", "female", "male"]


def test_the_table_encoder_spreads_rho_over_the_columns_that_release(monkeypatch):
    X, _ = _frame()
    for relation in ("replace", "zero_out"):
        spy = _Spy(monkeypatch, relation=relation)
        enc = PrivateTableEncoder(
            rho=0.3, delta=1e-6, relation=relation, random_state=0,
            bounds={"mass": (2500, 6500)}, categories={"island": ["Biscoe"]},
        ).fit(X)
        # mass, depth and sex release, 0.1 each; island nothing.
        by_column = {c: r for c, r, _ in enc.privacy_guarantee_.columns}
        assert by_column["island"] == 0.0
        for c in ("mass", "depth", "sex"):
            assert by_column[c] == pytest.approx(0.1, rel=1e-12)
        assert spy.rho() == pytest.approx(0.3, rel=1e-12)
        assert enc.privacy_guarantee_.rho == pytest.approx(0.3, rel=1e-12)
        assert enc.privacy_guarantee_.rho_replace >= enc.privacy_guarantee_.rho
        assert enc.privacy_guarantee_.delta_selection == pytest.approx(1e-6)
        assert enc.get_feature_names_out().tolist()[2:4] == [
            "island_Biscoe", "island_infrequent"]
        monkeypatch.undo()


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), public_num=st.lists(st.booleans(), min_size=2,
                                                          max_size=2),
       public_cat=st.lists(st.booleans(), min_size=2, max_size=2),
       rho=st.floats(1e-3, 2.0), relation=st.sampled_from(["replace", "zero_out"]),
       group_size=st.integers(1, 3))
def test_the_figure_is_what_the_releases_cost_whatever_is_given(
        seed, public_num, public_cat, rho, relation, group_size):
    # Property: for any choice of public columns, the reported rho is exactly
    # the sum of what the drawn noise costs, at most the step's rho, and equal
    # to it unless nothing is released.
    X, _ = _frame(300, seed=seed % 1000)
    bounds = {c: (0.0, 10000.0) for c, p in zip(["mass", "depth"], public_num) if p}
    cats = {c: ["a", "b"] for c, p in zip(["island", "sex"], public_cat) if p}
    with pytest.MonkeyPatch.context() as mp:
        spy = _Spy(mp, relation=relation, group_size=group_size)
        enc = PrivateTableEncoder(rho=rho, relation=relation, group_size=group_size,
                                  bounds=bounds, categories=cats,
                                  random_state=seed).fit(X)
    reported = enc.privacy_guarantee_.rho
    assert spy.rho() == pytest.approx(reported, rel=1e-9, abs=1e-15)
    assert reported <= rho * (1 + 1e-12)
    assert reported == pytest.approx(rho, rel=1e-9)  # numbers always release
    assert spy.kinds().count("_noisy_histogram") == 2 - sum(public_num)
    assert spy.kinds().count("_noisy_counts") == 2 - sum(public_cat)


@pytest.mark.parametrize("kwargs, match", [
    (dict(bounds={"island": (0, 1)}), "'island', which is one-hot encoded"),
    (dict(categories={"mass": [1, 2]}), "'mass', which is read as numbers"),
    (dict(bounds={"weight": (0, 1)}), "bounds names column 'weight', which X does not"),
    (dict(categories={7: ["a"]}), "categories names column 7"),
    (dict(bounds={"mass": (5, 5)}), "column 'mass' give one value .* drop it"),
    (dict(bounds={"mass": (6, 5)}), "column 'mass' must be finite with lo < hi"),
    (dict(bounds={"mass": (0, np.inf)}), "column 'mass' must be finite"),
    (dict(bounds={"mass": 5}), "column 'mass' must be a pair"),
    (dict(categories={"sex": "male"}), "column 'sex' must be a list"),
    (dict(categories={"sex": []}), "column 'sex' is empty"),
    (dict(bounds={"mass": (-1e308, 1e308)}), "a finite width hi - lo"),
    (dict(bounds={"mass": "12"}), "column 'mass' must be a pair"),
    (dict(bounds={"mass": (True, 2)}), "column 'mass' must be a pair"),
    (dict(bounds={0: (0, 1)}), "bounds names column 0, which X does not have"),
    (dict(categories={"sex": iter(["male"])}), "column 'sex' must be a list"),
    (dict(categories={"sex": {"male": 1}}), "column 'sex' must be a list"),
    (dict(categories={"sex": np.array("male")}), "column 'sex' must be a list"),
])
def test_bad_constants_are_refused_before_any_release(kwargs, match, monkeypatch):
    X, _ = _frame(500)
    enc = PrivateTableEncoder(rho=0.1, random_state=0).fit(X)
    before = pickle.dumps(enc)
    spy = _Spy(monkeypatch)
    with pytest.raises(ValueError, match=match):
        enc.set_params(**kwargs).fit(X)
    assert spy.spent == []
    enc.set_params(bounds=None, categories=None)
    assert pickle.dumps(enc) == before


def test_a_pipeline_keeps_the_constants_through_a_deletion_and_a_clone():
    X, y = _frame(3000)
    bounds = {"mass": (2500, 6500)}
    cats = {"island": ["Biscoe", "Dream", "Torgersen"]}
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1], random_state=0),
                                 epsilon=1.0, bounds=bounds, categories=cats,
                                 random_state=0)
    assert clone(pipe).steps[0][1].get_params()["bounds"] == bounds
    db = Database(X, y)
    pipe.fit(db)
    g = pipe.privacy_guarantee_
    assert g.epsilon <= 1.0 + 1e-9
    enc = pipe.steps[0][1]
    assert enc.scaler_.bounds_[0].tolist() == [2500.0, 6500.0]
    assert enc.encoder_.categories_[0].tolist() == ["Biscoe", "Dream", "Torgersen"]
    # Deletion re-estimates the private statistics with fresh noise and keeps
    # the given constants.
    old_centre = enc.scaler_.center_.copy()
    pipe.partial_unlearn(EditRequest(db, delete=["p1", "p2"], by="id"))
    enc = pipe.steps[0][1]
    assert enc.scaler_.bounds_[0].tolist() == [2500.0, 6500.0]
    assert enc.encoder_.categories_[0].tolist() == ["Biscoe", "Dream", "Torgersen"]
    assert not np.array_equal(enc.scaler_.center_, old_centre)
    assert pipe.privacy_guarantee_.epsilon <= 1.0 + 1e-9


def test_steps_pickled_before_the_constants_load_without_them():
    X, _ = _frame(500)
    for step in (PrivateStandardScaler(rho=0.1, random_state=0).fit(X[["mass"]]),
                 PrivateOneHotEncoder(rho=0.1, random_state=0).fit(X[["sex"]]),
                 PrivateTableEncoder(rho=0.1, random_state=0).fit(X)):
        state = step.__getstate__()
        state.pop("bounds", None)
        state.pop("categories", None)
        old = type(step).__new__(type(step))
        old.__setstate__(state)
        params = old.get_params()
        assert params.get("bounds") is None and params.get("categories") is None
        np.testing.assert_array_equal(old.transform(X[step.feature_names_in_]),
                                      step.transform(X[step.feature_names_in_]))


def test_a_pipeline_with_every_category_given_states_no_selection_event():
    X, y = _frame(2000)
    cats = {"island": ["Biscoe", "Dream", "Torgersen"], "sex": ["female", "male"]}
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1], random_state=0),
                                 epsilon=1.0, categories=cats, random_state=0)
    g = pipe.fit(X, y).privacy_guarantee_
    assert g.delta_selection == 0.0 and g.epsilon <= 1.0 + 1e-9
    assert "outside events" not in str(g)
    assert "island: rho=0\n" in str(g)


def test_keys_are_labels_on_frames_and_positions_on_arrays():
    X, _ = _frame(1000)
    # After a drop, an integer label is not a position: a frame's keys are
    # its labels (a position read as a label clipped the wrong column).
    frame = X[["mass", "depth"]].set_axis([0, 4], axis=1)
    scaler = PrivateStandardScaler(rho=0.5, bounds={4: (10.0, 30.0)},
                                   random_state=0).fit(frame)
    assert scaler.bounds_[1].tolist() == [10.0, 30.0]
    assert scaler.bounds_[0].tolist() != [10.0, 30.0]
    # An array's columns are positions, or x<j>; both at once are refused.
    array = X[["mass", "depth"]].to_numpy()
    for key in (1, "x1"):
        scaler = PrivateStandardScaler(rho=0.5, bounds={key: (10.0, 30.0)},
                                       random_state=0).fit(array)
        assert scaler.bounds_[1].tolist() == [10.0, 30.0]
    with pytest.raises(ValueError, match="gives column 'x1' twice"):
        PrivateStandardScaler(rho=0.5, bounds={1: (0, 1), "x1": (0, 2)}).fit(array)
    # Through the table encoder, on an array, by position.
    enc = PrivateTableEncoder(rho=0.5, bounds={1: (10.0, 30.0)},
                              random_state=0).fit(array)
    assert enc.scaler_.bounds_[1].tolist() == [10.0, 30.0]
    enc = PrivateTableEncoder(rho=0.5, categories={0: ["Biscoe"], "x1": ["male"]},
                              random_state=0).fit(
        X[["island", "sex"]].to_numpy(dtype=object))
    assert [c.tolist() for c in enc.encoder_.categories_] == [["Biscoe"], ["male"]]
    # A table encoder on such a frame, numbers and categories.
    frame = X.set_axis([0, 2, 5, 7], axis=1)
    enc = PrivateTableEncoder(rho=0.5, bounds={2: (10.0, 30.0)},
                              categories={7: ["male"]}, random_state=0).fit(frame)
    assert enc.scaler_.bounds_[1].tolist() == [10.0, 30.0]
    assert [c.tolist() for c in enc.encoder_.categories_][1] == ["male"]
    # A set is a list of values too.
    enc = PrivateOneHotEncoder(rho=0.1, categories={"sex": {"male", "female"}},
                               random_state=0).fit(X[["sex"]])
    assert enc.categories_[0].tolist() == ["female", "male"]


@pytest.mark.parametrize("group_size", [1, 3])
def test_the_figure_against_a_replaced_unit_is_what_the_releases_cost(
        monkeypatch, group_size):
    # Theorem 19.6 under zero-out: histograms and counts count twice against a
    # replaced unit, moments once. A public range has no histogram, so a
    # scaler whose ranges are all given states its rho, not the 17/12 of an
    # estimated range.
    X, _ = _frame(1000)
    for bounds in ({"mass": (0, 1e4), "depth": (0, 40)}, {"mass": (0, 1e4)}, None):
        spy = _Spy(monkeypatch, relation="zero_out", group_size=group_size)
        enc = PrivateTableEncoder(rho=0.3, relation="zero_out", random_state=0,
                                  group_size=group_size, bounds=bounds,
                                  categories={"island": ["Biscoe"]}).fit(X)
        cost = math.fsum(r if k == "_noisy_sums" else 2 * r for k, r in spy.spent)
        g = enc.privacy_guarantee_
        assert g.rho_replace >= cost * (1 - 1e-12)
        if bounds is not None and len(bounds) == 2:
            assert enc.scaler_.privacy_guarantee_.rho_replace == pytest.approx(
                enc.scaler_.privacy_guarantee_.rho, rel=1e-12)
        monkeypatch.undo()


def test_the_noise_warning_counts_only_the_columns_that_release():
    # From public numbers: listed columns release nothing, and given ranges
    # leave only the moments' noise; a table whose every column is given
    # warns of nothing (it warned, and pointed at PublicScaler).
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({f"c{i}": rng.choice(["a", "b"], n) for i in range(20)})
    X["v"] = rng.normal(size=n)
    y = (X["v"] > 0).astype(int)

    def noise_warnings(**kw):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            make_private_pipeline(NoisyGDClassifier(classes=[0, 1]), epsilon=1.0,
                                  **kw).fit(X, y)
        return [str(r.message) for r in rec if "mostly noise" in str(r.message)]

    said = noise_warnings()
    assert len(said) == 1 and "make_private_pipeline(bounds=..., categories=...)" \
        in said[0]
    listed = {f"c{i}": ["a", "b"] for i in range(20)}
    assert noise_warnings(categories=listed) == []
    assert noise_warnings(categories=listed, bounds={"v": (-5, 5)}) == []


def test_a_search_over_a_pipeline_keeps_the_constants_and_cannot_draw_them():
    from skforget.model_selection import PrivateSearchCV

    X, y = _frame(2000)
    cats = {"island": ["Biscoe", "Dream", "Torgersen"]}
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]), epsilon=1.0,
                                 categories=cats, bounds={"mass": (2500, 6500)})
    s = PrivateSearchCV(pipe, {"estimator__C": [0.1, 1.0]}, epsilon=1.0,
                        n_candidates=2, validation_fraction=0.2,
                        random_state=0).fit(X, y)
    enc = s.best_estimator_.steps[0][1]
    assert enc.encoder_.categories_[0].tolist() == cats["island"]
    assert enc.scaler_.bounds_[0].tolist() == [2500.0, 6500.0]
    assert s.privacy_guarantee_.epsilon <= 1.0 + 1e-9
    with pytest.raises(ValueError, match="preprocess__bounds"):
        PrivateSearchCV(pipe, {"preprocess__bounds": [None, {"mass": (0, 1)}]},
                        epsilon=1.0).fit(X, y)


def test_a_replacement_under_zero_out_with_every_category_listed():
    # Edit certificates when no release has a selection event, against a
    # replaced unit (the figure Theorem 19.6 states): finite and within what
    # the pipeline reports for its releases.
    X, y = _frame(2000)
    cats = {"island": ["Biscoe", "Dream", "Torgersen"], "sex": ["female", "male"]}
    db = Database(X, y)
    pipe = make_private_pipeline(
        NoisyGDClassifier(classes=[0, 1], relation="zero_out", random_state=0),
        epsilon=1.0, categories=cats, bounds={"mass": (2500, 6500)},
        random_state=0).fit(db)
    new = X.iloc[[0]].copy()
    new.index = ["new"]
    pipe.partial_unlearn(EditRequest(db, delete=["p3"], X_insert=new,
                                     y_insert=y.iloc[[0]].set_axis(["new"]),
                                     by="id"))
    cert = pipe.privacy_guarantee_.deletion
    assert math.isfinite(cert.epsilon_adaptive) and cert.epsilon_adaptive > 0
    assert pipe.privacy_guarantee_.delta_selection == 0.0
    assert pipe.steps[0][1].encoder_.categories_[1].tolist() == ["female", "male"]


def test_listed_values_are_compared_as_the_columns_strings():
    # Section 19.2: values compared as str(v). A list that matches nothing
    # sends every row to "infrequent" (the rows cannot be read to say so).
    col = pd.DataFrame({"c": pd.Series([1, 2, 2, None], dtype=object)})
    enc = PrivateOneHotEncoder(rho=0.1, categories={"c": [1, 2, None]},
                               random_state=0).fit(col)
    assert enc.categories_[0].tolist() == ["1", "2", "<missing>"]
    assert enc.transform(col)[:, :3].sum(axis=0).tolist() == [1, 2, 1]
    floats = pd.DataFrame({"c": pd.Series([1.0, 2.0], dtype=object)})
    enc = PrivateOneHotEncoder(rho=0.1, categories={"c": [1, 2]},
                               random_state=0).fit(floats)
    assert enc.transform(floats)[:, -1].tolist() == [1.0, 1.0]  # infrequent
    flags = pd.DataFrame({"c": [True, False]})
    enc = PrivateOneHotEncoder(rho=0.1, categories={"c": [False, True]},
                               random_state=0).fit(flags)
    assert enc.transform(flags)[:, :2].tolist() == [[0, 1], [1, 0]]
    # NaN and pandas.NA listed are the missing value's category, as None.
    for missing in (np.nan, pd.NA):
        enc = PrivateOneHotEncoder(rho=0.1, categories={"c": ["a", missing]},
                                   random_state=0).fit(col)
        assert enc.categories_[0].tolist() == ["<missing>", "a"]


def test_an_imputer_with_a_public_range_in_a_forget_pipeline_serves_a_deletion():
    from skforget.pipeline import ForgetPipeline

    X, y = _frame(2000)
    db = Database(X[["mass", "depth"]], y)
    pipe = ForgetPipeline([
        ("impute", PrivateSimpleImputer(rho=0.05, bounds={"mass": (2000, 7000)})),
        ("model", NoisyGDClassifier(classes=[0, 1], data_norm=1e4, random_state=0)),
    ]).fit(db)
    imputer = pipe.named_steps["impute"]
    assert imputer.bounds_[0].tolist() == [2000.0, 7000.0]
    assert 2000 <= imputer.statistics_[0] <= 7000
    pipe.partial_unlearn(EditRequest(db, delete=["p5"], by="id"))
    assert pipe.named_steps["impute"].bounds_[0].tolist() == [2000.0, 7000.0]
    assert pipe.privacy_guarantee_.deletion.n_samples == 1999


def test_shares_no_release_can_spend_go_to_the_estimator():
    # Trials (budget #9, sweep #3, second reader F5): with every categorical
    # column listed the pipeline kept its split, so 15 % of epsilon went
    # unspent (the estimator at 0.854 where the whole 1 was free).
    from skforget.accounting import PrivacyLedger, split_private_pipeline

    X, y = _frame(2000)
    cats = {"island": ["Biscoe", "Dream", "Torgersen"], "sex": ["female", "male"]}
    est = NoisyGDClassifier(classes=[0, 1], random_state=0)
    whole = split_private_pipeline(epsilon=1.0, delta=1e-5, preprocessing_share=0.0,
                                   selection_share=0.0,
                                   estimator_conversion=est._dp_conversion())
    nominal = split_private_pipeline(epsilon=1.0, delta=1e-5,
                                     estimator_conversion=est._dp_conversion())

    # Listed columns only: the whole budget goes to the estimator.
    ledger = PrivacyLedger(1.0, 1e-5)
    pipe = make_private_pipeline(clone(est).set_params(ledger=ledger), epsilon=1.0,
                                 categories=cats, random_state=0)
    pipe.fit(X[["island", "sex"]], y)
    assert pipe[-1].epsilon == pytest.approx(whole.estimator_epsilon, rel=1e-12)
    assert pipe[-1].epsilon > 0.999 > nominal.estimator_epsilon
    assert pipe[-1].delta == 1e-5
    assert pipe[0].rho == 0.0 and pipe[0].delta == 0.0
    g = pipe.privacy_guarantee_
    assert g.epsilon <= 1.0 + 1e-9 and g.delta <= 1e-5
    # The ledger reserved what the split gave (nothing refused at its budget)
    # and recorded the composed figure.
    assert ledger.total.epsilon == pytest.approx(g.epsilon, rel=1e-9)

    # Numbers only: no selection, so the whole delta is the conversion's.
    pipe = make_private_pipeline(clone(est), epsilon=1.0, random_state=0)
    pipe.fit(X[["mass", "depth"]], y)
    assert pipe[-1].delta == 1e-5 and pipe[0].delta == 0.0
    assert pipe.privacy_guarantee_.delta_selection == 0.0
    assert pipe[0].rho == pytest.approx(whole.rho * 0.25, rel=1e-12)

    # A column that releases keeps the nominal split.
    pipe = make_private_pipeline(clone(est), epsilon=1.0, random_state=0)
    pipe.fit(X, y)
    assert pipe[-1].epsilon == pytest.approx(nominal.estimator_epsilon, rel=1e-12)
    assert pipe[0].rho == pytest.approx(nominal.rho_preprocessing, rel=1e-12)
    assert pipe[0].delta == pytest.approx(nominal.delta_selection, rel=1e-12)


@pytest.mark.parametrize("step, kwargs", [
    (PrivateTableEncoder, {"rho": 0.0}),
    (PrivateTableEncoder, {"delta": 0.0}),
    (PrivateOneHotEncoder, {"rho": 0.0}),
    (PrivateOneHotEncoder, {"delta": 0.0}),
])
def test_a_share_of_zero_is_refused_when_a_column_releases(step, kwargs, monkeypatch):
    X, _ = _frame(300)
    X = X[["mass"]] if step is PrivateStandardScaler else \
        X[["island"]] if step is PrivateOneHotEncoder else X
    spy = _Spy(monkeypatch)
    s = step(random_state=0, **kwargs)
    before = dict(s.__dict__)
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=f"{type(s).__name__}: {name}=0, but"):
        s.fit(X)
    assert s.__dict__ == before and spy.spent == []
    # Nothing to release: 0 is the step's figure, and accepted.
    if step is not PrivateStandardScaler:
        listed = {c: sorted(X[c].unique()) for c in X
                  if not pd.api.types.is_numeric_dtype(X[c])}
        if step is PrivateTableEncoder and name == "rho":
            X = X[list(listed)]
        fitted = step(random_state=0, categories=listed, **kwargs).fit(X)
        assert fitted.privacy_guarantee_.rho == 0.0 or name == "delta"


def test_a_numeric_step_never_takes_rho_zero_and_an_edit_says_to_fit_again():
    # Second reader (session 18), F2, F3: a numeric step releases every
    # column's moments, so rho=0 is refused by validation; a pipeline split
    # at fit for listed categories refuses an edit after the list is cleared,
    # and says to fit again (giving the step rho by hand would take the
    # pipeline past its target).
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = _frame(600)
    for step in (PrivateStandardScaler, PrivateSimpleImputer):
        with pytest.raises(InvalidParameterError, match="'rho' parameter"):
            step(rho=0.0).fit(X[["mass"]])
    cats = {"island": ["Biscoe", "Dream", "Torgersen"], "sex": ["female", "male"]}
    pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1], random_state=0),
                                 epsilon=1.0, categories=cats, random_state=0)
    table = X[["island", "sex"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(table, y)
    before, coef = pipe.privacy_guarantee_, pipe[-1].coef_.copy()
    pipe.set_params(preprocess__categories=None)
    from skforget import UnlearningError

    with pytest.raises(UnlearningError, match="fit the pipeline again"):
        pipe.partial_unlearn(EditRequest(table, y, delete=[0], by="position"))
    assert pipe.privacy_guarantee_ == before
    np.testing.assert_array_equal(pipe[-1].coef_, coef)


def test_a_rényi_read_pipeline_reserves_what_it_reports():
    # Second reader (session 18), F1: the reservation read a cs23 estimator's
    # target by the Gaussian inverse (epsilon 1.092 reserved for a pipeline
    # reporting 1.0), refusing it in a ledger of 1.08.
    from skforget.accounting import PrivacyLedger

    X, y = _frame(600)
    cats = {"island": ["Biscoe", "Dream", "Torgersen"], "sex": ["female", "male"]}
    ledger = PrivacyLedger(1.0 + 1e-6, 1e-5)
    pipe = make_private_pipeline(
        NoisyGDClassifier(classes=[0, 1], recipe="cs23", random_state=0,
                          ledger=ledger),
        epsilon=1.0, delta=1e-5, categories=cats, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X[["island", "sex"]], y)
    assert ledger.total.epsilon == pytest.approx(pipe.privacy_guarantee_.epsilon,
                                                 rel=1e-9)
