# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""ForgetPipeline: public preprocessing only, edits on raw records by ID."""

import json
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, TransformerMixin, clone, is_classifier
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    Normalizer,
    OneHotEncoder,
    StandardScaler,
)
from sklearn.utils.estimator_checks import parametrize_with_checks

from skforget import (
    Database,
    DataDependentStepError,
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    UnlearningError,
)
from skforget.pipeline import ForgetPipeline, make_forget_pipeline
from skforget.preprocessing import PublicScaler, check_public

pd = pytest.importorskip("pandas")

SECTORS = ["private", "public", "self", "without-pay"]
CENTER, SCALE = [45.0, 40.0], [30.0, 40.0]


def _people(n=150, seed=0):
    """A raw table: one categorical and two numeric columns, indexed by person ID."""
    rng = np.random.default_rng(seed)
    sector = rng.choice(SECTORS[:3], size=n).astype(object)
    sector[7] = "without-pay"                       # the only one in that sector
    X = pd.DataFrame({"sector": sector,
                      "age": rng.integers(18, 80, size=n).astype(float),
                      "hours": rng.integers(5, 80, size=n).astype(float)},
                     index=pd.Index([f"cust{i:05d}" for i in range(n)], name="id"))
    score = (X["age"] - 45) / 30 + (X["sector"] == "public") - 0.5
    y = pd.Series((score + 0.5 * rng.standard_normal(n) > 0).astype(int),
                  index=X.index, name="label")
    return X, y


def _preprocessing():
    return ColumnTransformer(
        [("sector", OneHotEncoder(categories=[SECTORS]), ["sector"]),
         ("numeric", PublicScaler(center=CENTER, scale=SCALE), ["age", "hours"])],
        sparse_threshold=0)


def _pipeline(estimator):
    return ForgetPipeline([("prep", _preprocessing()), ("model", estimator)])


ESTIMATORS = [NoisyGDClassifier(C=0.3, random_state=7, max_edit_size=5),
              NoisyGDRegressor(alpha=3.0, random_state=7, max_edit_size=5)]


# --- the pipeline equals the estimator on transformed data ----------------------

@pytest.mark.parametrize("estimator", ESTIMATORS, ids=["classifier", "regressor"])
def test_pipeline_deletes_by_id_and_equals_the_estimator_on_transformed_data(
        estimator):
    X, y = _people()
    db = Database(X, y)
    pipe = _pipeline(clone(estimator)).fit(db)
    T = _preprocessing().fit(X)                      # public: same map, fitted apart
    reference = clone(estimator).fit(T.transform(X), y.to_numpy())
    np.testing.assert_array_equal(pipe[-1].coef_, reference.coef_)

    new = pd.DataFrame({"sector": ["public"], "age": [33.0], "hours": [38.0]},
                       index=["cust99999"])
    request = EditRequest(db, delete=["cust00007", "cust00100"],
                          replace=["cust00003"],
                          X_replace=[["self", 70.0, 10.0]], y_replace=[1],
                          X_insert=new, y_insert=[0], by="id")
    pipe.partial_unlearn(request)
    db1 = request.apply()
    # The IDs survive the edit; the deleted people are gone.
    expected = [i for i in X.index if i not in ("cust00007", "cust00100")]
    assert db1.ids.tolist() == expected + ["cust99999"]
    assert db1.X.loc["cust00003"].tolist() == ["self", 70.0, 10.0]
    assert db1.y.index.equals(db1.X.index)

    # Same seed: the estimator on the transformed data, edited by position.
    positions = [X.index.get_loc("cust00007"), X.index.get_loc("cust00100")]
    transformed_request = EditRequest(
        T.transform(X), y.to_numpy(), delete=positions,
        replace=[X.index.get_loc("cust00003")],
        X_replace=T.transform(request.X_replace), y_replace=[1],
        X_insert=T.transform(new), y_insert=[0])
    # Editing then transforming gives the transformed edited database.
    np.testing.assert_array_equal(transformed_request.apply()[0],
                                  T.transform(db1.X))
    np.testing.assert_array_equal(transformed_request.apply()[1], db1.y.to_numpy())
    reference.partial_unlearn(transformed_request)
    np.testing.assert_array_equal(pipe[-1].coef_, reference.coef_)
    np.testing.assert_array_equal(pipe[-1].intercept_, reference.intercept_)
    np.testing.assert_array_equal(pipe.predict(db1.X),
                                  reference.predict(T.transform(db1.X)))

    # A second request, by ID on the new version, keeps them equal.
    request2 = EditRequest(db1, delete=["cust99999"], by="id")
    pipe.partial_unlearn(request2)
    reference.partial_unlearn(EditRequest(T.transform(db1.X), db1.y.to_numpy(),
                                          delete=[len(expected)]))
    np.testing.assert_array_equal(pipe[-1].coef_, reference.coef_)
    assert pipe.database_version_ == request2.version_after
    guarantee = pipe.privacy_guarantee_
    assert len(guarantee.edits) == 2
    assert guarantee.edits == reference.privacy_guarantee_.edits


@pytest.mark.parametrize("routing", [False, True])
def test_weighted_pipeline_fits_and_unlearns_like_the_estimator(routing):
    # A Database's weights reach the final step (as <step>__sample_weight, or
    # routed as sample_weight), and a request's records keep theirs when the
    # pipeline maps them.
    X, y = _people()
    w = np.random.default_rng(3).uniform(0.2, 3.0, X.shape[0])
    db = Database(X, y, sample_weight=w)
    est = NoisyGDClassifier(C=0.3, random_state=7, max_edit_size=5)
    T = _preprocessing().fit(X)
    with sklearn.config_context(enable_metadata_routing=routing):
        if routing:
            est.set_fit_request(sample_weight=True)
        pipe = _pipeline(clone(est)).fit(db)
        reference = clone(est).fit(T.transform(X), y.to_numpy(), sample_weight=w)
    np.testing.assert_array_equal(pipe[-1].coef_, reference.coef_)
    assert pipe[-1].privacy_guarantee_ == reference.privacy_guarantee_

    new = pd.DataFrame({"sector": ["public"], "age": [33.0], "hours": [38.0]},
                       index=["cust99999"])
    request = EditRequest(db, delete=["cust00007"], replace=["cust00003"],
                          X_replace=[["self", 70.0, 10.0]], y_replace=[1],
                          sample_weight_replace=[2.5], X_insert=new, y_insert=[0],
                          sample_weight_insert=[0.5], by="id")
    pipe.partial_unlearn(request)
    reference.partial_unlearn(EditRequest(
        T.transform(X), y.to_numpy(), delete=[7], replace=[3],
        X_replace=T.transform(request.X_replace), y_replace=[1],
        X_insert=T.transform(new), y_insert=[0], sample_weight=w,
        sample_weight_replace=[2.5], sample_weight_insert=[0.5]))
    np.testing.assert_array_equal(pipe[-1].coef_, reference.coef_)
    np.testing.assert_array_equal(request.apply().sample_weight,
                                  np.r_[np.delete(np.where(np.arange(150) == 3, 2.5,
                                                           w), 7), 0.5])


def test_database_weights_and_step_weights_are_not_both_given():
    X, y = _people()
    db = Database(X, y, sample_weight=np.ones(X.shape[0]))
    pipe = _pipeline(NoisyGDClassifier(random_state=0))
    with pytest.raises(ValueError, match="model__sample_weight is given twice"):
        pipe.fit(db, model__sample_weight=np.ones(X.shape[0]))
    assert not hasattr(pipe, "public_preprocessing_")


def test_deleting_the_only_member_of_a_category_leaves_no_trace_in_preprocessing():
    X, y = _people()
    db = Database(X, y)
    pipe = _pipeline(NoisyGDClassifier(random_state=0)).fit(db)
    encoder = pipe.named_steps["prep"].named_transformers_["sector"]
    before = [list(c) for c in encoder.categories_]
    request = EditRequest(db, delete=["cust00007"], by="id")   # the "without-pay" one
    pipe.partial_unlearn(request)
    # The category list is the public constant, not what the rows contained.
    assert [list(c) for c in encoder.categories_] == before == [SECTORS]
    assert "without-pay" not in set(request.apply().X["sector"])


def test_guarantee_says_which_steps_were_public_and_how():
    X, y = _people()
    pipe = _pipeline(NoisyGDClassifier(random_state=0)).fit(X, y)
    guarantee = pipe.privacy_guarantee_
    assert guarantee.preprocessing == (
        ("prep/sector", "OneHotEncoder: categories given as constants"),
        ("prep/numeric", "PublicScaler: center and scale given as constants"),
    )
    assert pipe.public_preprocessing_ == guarantee.preprocessing
    text = str(guarantee)
    assert ("Preprocessing inside the guarantee, all public:\n"
            "  prep/sector: OneHotEncoder: categories given as constants\n"
            "  prep/numeric: PublicScaler: center and scale given as constants"
            ) in text
    assert json.loads(json.dumps(guarantee.to_dict()))["preprocessing"][0] == [
        "prep/sector", "OneHotEncoder: categories given as constants"]
    # The bare estimator's guarantee has no preprocessing, and says none.
    bare = pipe[-1].privacy_guarantee_
    assert bare.preprocessing == () and "Preprocessing" not in str(bare)
    assert bare.epsilon == guarantee.epsilon


# --- data-fitted preprocessing is refused ---------------------------------------

class _Custom(TransformerMixin, BaseEstimator):
    def fit(self, X, y=None):
        self.mean_ = np.mean(X, axis=0)
        return self

    def transform(self, X):
        return X - self.mean_


class _DeclaredPublic(_Custom):
    def __init__(self, offset=1.0):
        self.offset = offset

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.asarray(X, dtype=float) - self.offset

    def __skforget_public__(self):
        return f"offset {self.offset} given as a constant" if self.offset else None


class _MyEncoder(OneHotEncoder):
    pass


def _ct(*parts, **kwargs):
    kwargs.setdefault("sparse_threshold", 0)
    return ColumnTransformer(list(parts), **kwargs)


NUM = ["age", "hours"]
CAT = ["sector"]
REFUSED = [
    (_ct(("sector", OneHotEncoder(categories=[SECTORS]), CAT),
         ("num", StandardScaler(), NUM)),
     r"'prep/num' \(StandardScaler\) is not public: it learns the mean and standard "
     r"deviation.*Instead: skforget.preprocessing.PublicScaler\(center=..., "
     r"scale=...\)"),
    (_ct(("sector", OneHotEncoder(), CAT), ("num", PublicScaler(), NUM)),
     r"'prep/sector' \(OneHotEncoder\) is not public: categories=\"auto\" learns "
     r"the categories present.*Instead: give the categories as constants"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS], min_frequency=2), CAT),
         ("num", PublicScaler(), NUM)),
     "min_frequency=2 counts how often each category occurs"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS], max_categories=3), CAT),
         ("num", PublicScaler(), NUM)),
     "max_categories=3 counts"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS]), CAT),
         ("num", PublicScaler(), NUM), sparse_threshold=0.3),
     r"'prep' \(ColumnTransformer\) is not public: sparse_threshold=0.3 chooses a "
     r"sparse or dense output.*Instead: sparse_threshold=0"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS]), CAT),
         ("num", PublicScaler(), lambda X: ["age", "hours"])),
     "the columns of 'num' are chosen by <lambda>, a function that may read the "
     "rows"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS]), CAT),
         ("num", make_pipeline(SimpleImputer(), PublicScaler()), NUM)),
     r"'prep/num/simpleimputer' \(SimpleImputer\) is not public: strategy=\"mean\" "
     "computes the fill value"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS]), CAT),
         ("num", SimpleImputer(strategy="constant", fill_value=0.0), NUM)),
     "keep_empty_features=False drops the features that are missing in every row"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS]), CAT),
         remainder=KBinsDiscretizer()),
     r"'prep/remainder' \(KBinsDiscretizer\) is not public: it learns bin edges"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS]), CAT),
         ("num", FunctionTransformer(np.log1p, np.expm1), NUM)),
     "with check_inverse=True, fit runs func and inverse_func on the rows"),
    (_ct(("sector", OneHotEncoder(categories=[SECTORS]), CAT),
         ("num", _Custom(), NUM)),
     r"skforget cannot tell whether _Custom learns from the rows.*defining "
     r"_Custom.__skforget_public__\(self\).*FrozenEstimator"),
    (_ct(("sector", _MyEncoder(categories=[SECTORS]), CAT)),
     "skforget cannot tell whether _MyEncoder learns"),
    (_ct(("num", _DeclaredPublic(offset=0.0), NUM)),
     r"_DeclaredPublic.__skforget_public__\(\) says this configuration learns from "
     "the rows"),
    (_ct(("num", FeatureUnion([("a", PublicScaler()), ("b", StandardScaler())]),
          NUM)),
     r"'prep/num/b' \(StandardScaler\)"),
]


@pytest.mark.parametrize("prep,message", REFUSED)
def test_data_fitted_preprocessing_is_refused_and_nothing_changes(prep, message):
    X, y = _people()
    pipe = ForgetPipeline([("prep", prep), ("model", NoisyGDClassifier())])
    params = pipe.get_params(deep=False)
    with pytest.raises(DataDependentStepError, match=message):
        pipe.fit(X, y)
    assert not hasattr(pipe[-1], "coef_")
    assert not hasattr(pipe, "public_preprocessing_")
    assert not hasattr(prep, "transformers_")
    assert pipe.get_params(deep=False) == params


def test_pipeline_memory_is_refused():
    X, y = _people()
    pipe = ForgetPipeline([("prep", _preprocessing()), ("model", NoisyGDClassifier())],
                          memory="/tmp/skforget-cache-should-not-exist")
    with pytest.raises(DataDependentStepError, match="memory caches the fitted steps"):
        pipe.fit(X, y)
    with pytest.raises(DataDependentStepError, match="memory caches"):
        check_public(make_pipeline(Normalizer(), memory="/tmp/x"))


@pytest.mark.parametrize("prep,how", [
    (_ct(("num", FrozenEstimator(StandardScaler().fit(pd.DataFrame(
        {"age": [40.0, 50.0], "hours": [40.0, 30.0]}))), NUM)),
     "FrozenEstimator(StandardScaler): fitted elsewhere and frozen; public if the "
     "data it was fitted on is public"),
    (_ct(("num", _DeclaredPublic(offset=2.0), NUM)),
     "_DeclaredPublic: offset 2.0 given as a constant"),
    (_ct(("num", make_pipeline(
        SimpleImputer(strategy="constant", fill_value=0.0, keep_empty_features=True),
        FunctionTransformer(np.log1p), Normalizer()), make_column_selector(
        dtype_include=np.number))),
     "SimpleImputer: constant fill_value=0.0, all features kept"),
    (_ct(("cat", OneHotEncoder(categories=[SECTORS], drop="first"), CAT),
         remainder="passthrough"),
     "OneHotEncoder: categories given as constants, drop='first' of those lists"),
])
def test_public_preprocessing_is_accepted_and_described(prep, how):
    X, y = _people()
    pipe = ForgetPipeline([("prep", prep),
                           ("model", NoisyGDClassifier(random_state=0))]).fit(X, y)
    assert how in dict(pipe.public_preprocessing_).values()
    request = EditRequest(X, y, delete=["cust00001"], by="id")
    pipe.partial_unlearn(request)
    assert len(pipe.privacy_guarantee_.edits) == 1


def test_check_public_lists_every_leaf():
    steps = check_public(make_pipeline(
        FunctionTransformer(np.log1p), Normalizer(), "passthrough"))
    assert steps == (
        ("pipeline/functiontransformer",
         "FunctionTransformer: stateless function log1p (assumed to map each row on "
         "its own)"),
        ("pipeline/normalizer",
         "Normalizer: stateless (each row divided by its own norm)"),
        ("pipeline/passthrough", "passthrough (values used as given)"),
    )
    with pytest.raises(DataDependentStepError, match="'scaler' .StandardScaler."):
        check_public(StandardScaler(), name="scaler")


def test_steps_set_after_fit_are_checked_again():
    X, y = _people()
    pipe = _pipeline(NoisyGDClassifier(random_state=0)).fit(X, y)
    coef = pipe[-1].coef_.copy()
    pipe.set_params(prep__numeric=StandardScaler())
    with pytest.raises(DataDependentStepError, match="prep/numeric"):
        pipe.partial_unlearn(EditRequest(X, y, delete=[0], by="position"))
    np.testing.assert_array_equal(pipe[-1].coef_, coef)


# --- the pipeline API -----------------------------------------------------------

def test_partial_unlearn_exists_only_when_the_final_step_has_it():
    assert hasattr(_pipeline(NoisyGDClassifier()), "partial_unlearn")
    plain = ForgetPipeline([("prep", _preprocessing()), ("lr", LogisticRegression())])
    assert not hasattr(plain, "partial_unlearn")
    X, y = _people()
    plain.fit(X, y)
    assert plain.score(X, y) > 0.5
    assert not hasattr(plain, "privacy_guarantee_")


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=["classifier", "regressor"])
def test_certificates_on_raw_records_equal_the_estimators(estimator):
    X, y = _people()
    db = Database(X, y)
    # A deletion target below the default: the forgetting certificate at k=0
    # below is about a model that has run steps without the record (one
    # served without a pass still holds its influence, privacy-accounting.md
    # 12.9).
    # Full batch: certificates need it (certificates.md, L4).
    pipe = _pipeline(clone(estimator).set_params(
        deletion_epsilon=0.1, batch_size=None)).fit(db)
    request = EditRequest(db, delete=["cust00007"], by="id")
    pipe.partial_unlearn(request)
    T = _preprocessing().fit(X)
    final, rows = pipe[-1], request.apply().X
    Xt = T.transform(rows)
    tol = {} if is_classifier(final) else {"tol": 0.5}
    assert pipe.certified_radius(2, "replace") == final.certified_radius(2, "replace")
    np.testing.assert_array_equal(pipe.certify(rows, 2, **tol),
                                  final.certify(Xt, 2, **tol))
    np.testing.assert_array_equal(pipe.certified_k(rows, **tol),
                                  final.certified_k(Xt, **tol))
    # With k=0 after the deletion: the forgetting certificate, on raw records
    # (a continuation leaves the deleted record a small residual radius, so a
    # few predictions near the boundary may stay uncertified).
    at_zero = pipe.certify(rows, 0, **tol)
    np.testing.assert_array_equal(at_zero, final.certify(Xt, 0, **tol))
    assert at_zero.mean() > 0.9
    bounds = "decision_function_bounds" if is_classifier(final) else "predict_bounds"
    other = "predict_bounds" if is_classifier(final) else "decision_function_bounds"
    for got, want in zip(getattr(pipe, bounds)(rows, 1),
                         getattr(final, bounds)(Xt, 1), strict=True):
        np.testing.assert_array_equal(got, want)
    assert not hasattr(pipe, other)
    plain = ForgetPipeline([("prep", _preprocessing()),
                            ("model", LogisticRegression())])
    assert not hasattr(plain, "certify") and not hasattr(plain, "certified_radius")


def test_make_forget_pipeline_names_steps_and_slices_like_pipeline():
    pipe = make_forget_pipeline(_preprocessing(), NoisyGDClassifier())
    assert isinstance(pipe, ForgetPipeline) and isinstance(pipe, Pipeline)
    assert [name for name, _ in pipe.steps] == ["columntransformer",
                                                "noisygdclassifier"]
    assert isinstance(pipe[:1], ForgetPipeline)
    assert clone(pipe).get_params()["memory"] is None


def test_stale_request_is_refused_by_the_pipeline_whatever_its_size():
    X, y = _people()
    db0 = Database(X, y)
    pipe = _pipeline(NoisyGDClassifier(random_state=0)).fit(db0)
    first = EditRequest(db0, delete=["cust00002"], X_insert=X.iloc[[3]].set_axis(
        ["cust77777"]), y_insert=[1], by="id")
    pipe.partial_unlearn(first)
    coef, version = pipe[-1].coef_.copy(), pipe.database_version_
    for stale in (EditRequest(db0, delete=["cust00005"], by="id"),
                  EditRequest(first.apply().X, first.apply().y, delete=[4],
                              by="position")):
        with pytest.raises(UnlearningError, match="stale|plain arrays"):
            pipe.partial_unlearn(stale)
        np.testing.assert_array_equal(pipe[-1].coef_, coef)
        assert pipe.database_version_ == version


def test_record_the_preprocessing_cannot_map_is_named_and_nothing_changes():
    X, y = _people()
    db = Database(X, y)
    pipe = _pipeline(NoisyGDClassifier(random_state=0)).fit(db)
    coef = pipe[-1].coef_.copy()
    new = pd.DataFrame({"sector": ["public", "astronaut"], "age": [30.0, 40.0],
                        "hours": [20.0, 30.0]}, index=["new1", "new2"])
    request = EditRequest(db, X_insert=new, y_insert=[0, 1], by="id")
    with pytest.raises(UnlearningError, match=r"X_insert row 1 \(ID 'new2'\) cannot "
                                              "be preprocessed: .*astronaut"):
        pipe.partial_unlearn(request)
    np.testing.assert_array_equal(pipe[-1].coef_, coef)
    assert pipe.database_version_ == db.version
    # A row the preprocessing maps to NaN is named by the estimator's check.
    nan_row = pd.DataFrame({"sector": ["self"], "age": [np.nan], "hours": [1.0]},
                           index=["new3"])
    with pytest.raises(UnlearningError, match="X_insert row 0 contains NaN"):
        pipe.partial_unlearn(EditRequest(db, X_insert=nan_row, y_insert=[0]))
    np.testing.assert_array_equal(pipe[-1].coef_, coef)


def test_failed_fit_leaves_a_fitted_pipeline_as_it_was():
    X, y = _people()
    pipe = _pipeline(NoisyGDClassifier(random_state=0)).fit(X, y)
    prep = pipe.named_steps["prep"]
    fitted = prep.transformers_
    coef, public = pipe[-1].coef_.copy(), pipe.public_preprocessing_
    X_bad = X.rename(columns={"hours": "weekly_hours"})
    with pytest.raises(ValueError):
        pipe.fit(X_bad, np.full(len(X), np.nan))
    assert pipe.named_steps["prep"].transformers_ is fitted
    assert list(pipe.named_steps["prep"].feature_names_in_) == list(X.columns)
    np.testing.assert_array_equal(pipe[-1].coef_, coef)
    assert pipe.public_preprocessing_ == public


def test_pickled_pipeline_holds_no_training_row_and_no_id():
    X, y = _people()
    X["age"] += 0.123456789                   # values that cannot appear by chance
    db = Database(X, y)
    pipe = _pipeline(NoisyGDClassifier(random_state=0)).fit(db)
    request = EditRequest(db, delete=["cust00011"], by="id")
    pipe.partial_unlearn(request)
    blob = pickle.dumps(pipe)
    for value in X["age"]:
        assert np.float64(value).tobytes() not in blob
    for person in X.index[:50]:
        assert person.encode() not in blob
    assert pickle.loads(blob).predict(X.iloc[:5]).shape == (5,)


# --- PublicScaler ---------------------------------------------------------------

@parametrize_with_checks([PublicScaler(), PublicScaler(center=0.5, scale=2.0)])
def test_public_scaler_is_a_scikit_learn_transformer(estimator, check):
    check(estimator)


def test_public_scaler_maps_with_the_constants_only():
    X = np.array([[10.0, 1.0], [30.0, 3.0]])
    scaler = PublicScaler(center=[20.0, 0.0], scale=[10.0, 2.0]).fit(X)
    np.testing.assert_allclose(scaler.transform(X), [[-1.0, 0.5], [1.0, 1.5]])
    np.testing.assert_allclose(scaler.inverse_transform(scaler.transform(X)), X)
    # Fitting on other rows gives the same map: nothing is learned from them.
    other = PublicScaler(center=[20.0, 0.0], scale=[10.0, 2.0]).fit(X[::-1] * 7)
    np.testing.assert_array_equal(other.transform(X), scaler.transform(X))
    import scipy.sparse as sp

    sparse = PublicScaler(scale=[10.0, 2.0]).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(sparse.transform(sp.csr_matrix(X)).toarray(),
                               X / [10.0, 2.0])


@pytest.mark.parametrize("params,message", [
    (dict(scale=[1.0, 0.0]), r"scale\[1\]=0.0 must be positive and finite"),
    (dict(scale=-2.0), "scale=-2.0 must be positive and finite"),
    (dict(center=[1.0, np.inf]), r"center\[1\]=inf must be finite"),
    (dict(center=[1.0, 2.0, 3.0]), "center has 3 entries but X has 2 features"),
])
def test_public_scaler_errors_name_the_parameter(params, message):
    scaler = PublicScaler(**params)
    with pytest.raises(ValueError, match=message):
        scaler.fit(np.ones((3, 2)))
    assert not hasattr(scaler, "scale_")


def test_check_public_recurses_into_a_forget_pipeline():
    # ForgetPipeline registers itself with the allow-list (skforget._public
    # imports nothing above it): its steps are checked one by one.
    assert check_public(make_forget_pipeline(Normalizer())) == (
        ("forgetpipeline/normalizer",
         "Normalizer: stateless (each row divided by its own norm)"),)
    with pytest.raises(DataDependentStepError, match="StandardScaler"):
        check_public(make_forget_pipeline(StandardScaler()))


def test_plan_on_a_pipeline_maps_raw_records_and_changes_nothing():
    from sklearn.frozen import FrozenEstimator
    from sklearn.preprocessing import StandardScaler

    from skforget.pipeline import make_forget_pipeline
    from skforget.preprocessing import PublicScaler

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)) * 5
    y = (X[:, 0] > 0).astype(int)
    public = StandardScaler().fit(rng.normal(size=(50, 4)) * 5)
    pipe = make_forget_pipeline(PublicScaler(center=0.0, scale=5.0),
                                FrozenEstimator(public),
                                NoisyGDClassifier(classes=[0, 1]))
    before = pickle.dumps(pipe)
    plan = pipe.plan(X, y)
    assert pickle.dumps(pipe) == before
    expected = NoisyGDClassifier(classes=[0, 1]).plan(
        public.transform(X / 5.0), y)
    assert (plan.n_samples, plan.n_batches, plan.steps, plan.noise_scale) == (
        expected.n_samples, expected.n_batches, expected.steps, expected.noise_scale)
    bad = make_forget_pipeline(StandardScaler(), NoisyGDClassifier(classes=[0, 1]))
    with pytest.raises(DataDependentStepError):
        bad.plan(X, y)


def test_a_plain_pipeline_with_a_data_fitted_step_warns():
    # The silent mistake of issue 24: a StandardScaler fitted on the training
    # rows in an ordinary Pipeline is outside the guarantee.
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer, StandardScaler

    from skforget import OutputPerturbationClassifier, PrivacyLeakWarning
    from skforget.pipeline import make_forget_pipeline

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    for final in (NoisyGDClassifier(classes=[0, 1]),
                  OutputPerturbationClassifier(classes=[0, 1])):
        with pytest.warns(PrivacyLeakWarning,
                          match=r"'standardscaler'.*ForgetPipeline"):
            make_pipeline(StandardScaler(), final).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        make_pipeline(PublicScaler(center=0.0, scale=3.0), Normalizer(),
                      NoisyGDClassifier(classes=[0, 1])).fit(X, y)
        make_forget_pipeline(PublicScaler(center=0.0, scale=3.0),
                             NoisyGDClassifier(classes=[0, 1])).fit(X, y)


def test_a_forget_pipelines_step_is_edited_through_the_pipeline_only():
    # A trial: an edit of pipe[-1] on the mapped rows was accepted, the
    # pipeline's database version stayed behind, and a request built on the
    # old records then went through the pipeline and trained again on the
    # record the first edit had certified as removed.
    from sklearn.preprocessing import Normalizer

    rng = np.random.RandomState(0)
    X = rng.randn(300, 4)
    y = (X[:, 0] > 0).astype(int)
    db = Database(X, y)
    pipe = ForgetPipeline([("n", Normalizer()), ("m", NoisyGDClassifier(
        classes=[0, 1], max_lazy_records=0, random_state=0))]).fit(db)
    Xt = pipe[:-1].transform(db.X)
    before = (pipe[-1].coef_.copy(), pipe[-1].privacy_guarantee_)
    for model in (pipe[-1], pickle.loads(pickle.dumps(pipe[-1]))):
        for call in (model.partial_unlearn, model.plan_unlearn):
            with pytest.raises(UnlearningError, match="final step of a "
                               "ForgetPipeline: edit through the pipeline"):
                call(EditRequest(Xt, y, delete=[5]))
    assert np.array_equal(pipe[-1].coef_, before[0])
    assert pipe[-1].privacy_guarantee_ == before[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.partial_unlearn(EditRequest(db, delete=[5], by="position"))
    assert pipe[-1].privacy_guarantee_.n_samples == 299
    # Fitted again on its own, the step serves its own edits.
    alone = pipe[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone.fit(Xt, y)
        alone.partial_unlearn(EditRequest(Xt, y, delete=[5]))
    assert alone.privacy_guarantee_.n_samples == 299


def test_a_pipelines_step_edited_or_refitted_elsewhere_stops_the_pipeline():
    # A second reader: a nested ForgetPipeline or a PrivateSearchCV as the
    # final step took a direct edit, and a step refitted on its own
    # (pipe[-1].fit) or swapped in (set_params) then served one; either way
    # a request on the pipeline's old records was accepted after.
    from sklearn.preprocessing import Normalizer

    from skforget.model_selection import PrivateSearchCV

    rng = np.random.RandomState(0)
    X = rng.randn(300, 4)
    y = (X[:, 0] > 0).astype(int)

    def model():
        return NoisyGDClassifier(classes=[0, 1], max_lazy_records=0, random_state=0)

    search = PrivateSearchCV(model(), {"C": [0.1, 1.0]}, validation_fraction=0.3,
                             random_state=0)
    for step in (ForgetPipeline([("m", model())]), search):
        db = Database(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = ForgetPipeline([("n", Normalizer()), ("s", step)]).fit(db)
        Xt = pipe[:-1].transform(X)
        with pytest.raises(UnlearningError, match="final step of a ForgetPipeline"):
            pipe[-1].partial_unlearn(EditRequest(Xt, y, delete=[5]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.partial_unlearn(EditRequest(db, delete=[5], by="position"),
                                 deletion_epsilon=0.2)
        with pytest.raises(TypeError, match="deletion_epsilom.*NoisyGDClassifier "
                           "takes deletion_epsilon"):
            pipe.partial_unlearn(EditRequest(db, delete=[6], by="position"),
                                 deletion_epsilom=0.2)
    for change in ("refit", "swap"):
        db = Database(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = ForgetPipeline([("n", Normalizer()), ("m", model())]).fit(db)
            Xt = pipe[:-1].transform(X)
            if change == "refit":
                pipe[-1].fit(Xt, y)
            else:
                pipe.set_params(m=model().fit(Xt, y))
            pipe[-1].partial_unlearn(EditRequest(Xt, y, delete=[5]))  # its own
        with pytest.raises(UnlearningError, match="final step was refitted or "
                           "replaced"):
            pipe.partial_unlearn(EditRequest(db, delete=[7], by="position"))


def test_the_step_token_follows_fits_copies_and_failures():
    # A second reader: a search step fitted on its own still served the outer
    # pipeline; a copy sharing the step, or a step swapped back after a refit,
    # kept the token; a step's failed fit dropped its mark.
    import copy

    from sklearn.preprocessing import Normalizer

    from skforget.model_selection import PrivateSearchCV

    rng = np.random.RandomState(0)
    X = rng.randn(300, 4)
    y = (X[:, 0] > 0).astype(int)

    def pipeline(step, db):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ForgetPipeline([("n", Normalizer()), ("s", step)]).fit(db)

    search = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1], random_state=0),
                             {"C": [0.1, 1.0]}, validation_fraction=0.3,
                             random_state=0)
    db = Database(X, y)
    pipe = pipeline(search, db)
    Xt = pipe[:-1].transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe[-1].fit(Xt, y)                       # the search, on its own
    with pytest.raises(UnlearningError, match="refitted or replaced"):
        pipe.partial_unlearn(EditRequest(db, delete=[5], by="position"))
    # A failed fit of the step keeps its mark: the pipeline still edits.
    db = Database(X, y)
    pipe = pipeline(ForgetPipeline([("m", NoisyGDClassifier(classes=[0, 1]))]), db)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            pipe[-1].fit(Xt, np.full(300, 7))
        pipe.partial_unlearn(EditRequest(db, delete=[5], by="position"))
    # A shallow copy shares the step: once the copy serves an edit, the
    # original's token is stale.
    db = Database(X, y)
    pipe = pipeline(NoisyGDClassifier(classes=[0, 1], random_state=0), db)
    twin = copy.copy(pipe)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        twin.partial_unlearn(EditRequest(db, replace=[5], X_replace=X[:1],
                                         y_replace=y[:1], by="position"))
    with pytest.raises(UnlearningError, match="refitted or replaced"):
        pipe.partial_unlearn(EditRequest(db, replace=[6], X_replace=X[:1],
                                         y_replace=y[:1], by="position"))


def test_a_forget_pipeline_previews_an_edit():
    # Its step's plan_unlearn is refused on its own; the pipeline previews it.
    from sklearn.preprocessing import Normalizer

    rng = np.random.RandomState(0)
    X = rng.randn(300, 4)
    y = (X[:, 0] > 0).astype(int)
    db = Database(X, y)
    pipe = ForgetPipeline([("n", Normalizer()), ("m", NoisyGDClassifier(
        classes=[0, 1], random_state=0))]).fit(db)
    before = pipe[-1].privacy_guarantee_
    plan = pipe.plan_unlearn(EditRequest(db, delete=[5], by="position"),
                             deletion_epsilon=0.5)
    expected = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(
        pipe[:-1].transform(X), y).plan_unlearn(
            EditRequest(pipe[:-1].transform(X), y, delete=[5]), deletion_epsilon=0.5)
    assert plan == expected
    assert pipe[-1].privacy_guarantee_ == before   # a preview changes nothing
    with pytest.raises(ValueError, match="deletion_epsilon=5.0 must be <="):
        pipe.plan_unlearn(EditRequest(db, delete=[5], by="position"),
                          deletion_epsilon=5.0)


def test_an_edit_after_a_data_fitted_step_says_the_step_keeps_the_records():
    # Only the fit warned: a deletion months later certified the model's
    # coefficients without a word that the scaler fitted before it still
    # held the deleted records.
    from sklearn.preprocessing import StandardScaler

    from skforget import OutputPerturbationClassifier, PrivacyLeakWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    for final in (NoisyGDClassifier(classes=[0, 1], random_state=0),
                  OutputPerturbationClassifier(classes=[0, 1], random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe = make_pipeline(StandardScaler(), PublicScaler(),
                                 final).fit(X, y)
        model = pickle.loads(pickle.dumps(pipe[-1]))   # edited much later
        Xt = pipe[:-1].transform(X)
        with pytest.warns(PrivacyLeakWarning, match=r"after step\(s\) "
                          r"'standardscaler' that learned.*covers this model only"):
            model.partial_unlearn(EditRequest(Xt, y, delete=[3]))
        # Fitted again on its own, it certifies its own edits in silence.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(Xt, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            model.partial_unlearn(EditRequest(Xt, y, delete=[3]))


def test_scikit_learn_wrappers_around_a_private_model_are_said():
    # A trial: a scaler one level up (a nested Pipeline, or before a
    # OneVsRestClassifier) went unsaid, and RFE, Bagging, AdaBoost,
    # SelfTraining and TransformedTargetRegressor (whose scaler keeps the
    # exact mean of the targets) ran in silence, every model printing its own
    # figure.
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.ensemble import BaggingClassifier
    from sklearn.feature_selection import RFE, SelectFromModel
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import StandardScaler

    from skforget import PrivacyLeakWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)) / 3
    y = (X[:, 0] > 0).astype(int)
    t = X @ np.array([1.0, -1.0, 0.5, 0.0]) + 2.0

    def clf():
        return NoisyGDClassifier(classes=[0, 1], random_state=0)

    nested = Pipeline([("s", StandardScaler()), ("p", Pipeline([("m", clf())]))])
    with pytest.warns(PrivacyLeakWarning, match="'s' .StandardScaler. is not public"):
        nested.fit(X, y)
    model = nested[-1][-1]
    with pytest.warns(PrivacyLeakWarning, match=r"after step\(s\) 's' that learned"):
        model.partial_unlearn(EditRequest(nested[0].transform(X), y, delete=[3]))
    with pytest.warns(PrivacyLeakWarning, match="'standardscaler'"):
        make_pipeline(StandardScaler(), OneVsRestClassifier(clf())).fit(X, y)
    for meta, target, name in (
            (BaggingClassifier(clf(), n_estimators=2, random_state=0), y,
             "BaggingClassifier"),
            (RFE(clf(), n_features_to_select=2), y, "RFE"),
            (TransformedTargetRegressor(regressor=NoisyGDRegressor(target_scale=1.0),
                                        transformer=StandardScaler()), t,
             "TransformedTargetRegressor")):
        with pytest.warns(PrivacyLeakWarning, match=f"runs inside scikit-learn's "
                          f"{name}, which may fit several models"):
            meta.fit(X, target)
        # Its model says it at each edit too (a second reader: a deletion
        # from TransformedTargetRegressor.regressor_ certified in silence
        # while the transformer kept the exact mean of the targets).
        if name == "BaggingClassifier":
            continue   # its models were fitted with bootstrap weights
        inner = getattr(meta, "estimator_", None) or meta.regressor_
        with pytest.warns(PrivacyLeakWarning, match=f"was fitted by scikit-learn's "
                          f"{name}: what {name} made"):
            inner.partial_unlearn(EditRequest(
                X[:, meta.support_] if name == "RFE" else X, target, delete=[3]))
    # With a ledger they are refused, naming the meta-estimator, not a
    # splitter ("on folds from _fit_single_estimator()", a trial read).
    from sklearn.ensemble import VotingClassifier

    from skforget import PrivacyLedger, UnaccountableReleaseError

    ledger = PrivacyLedger(epsilon=10.0, delta=1e-3)
    with pytest.raises(UnaccountableReleaseError, match="a fit of scikit-learn's "
                       "VotingClassifier, which may fit several models"):
        VotingClassifier([("a", NoisyGDClassifier(classes=[0, 1], ledger=ledger))]
                         ).fit(X, y)
    assert not ledger.entries
    # Fitting once and reading the released coefficients only is covered.
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        SelectFromModel(clf()).fit(X, y)
        make_pipeline(PublicScaler(), clf()).fit(X, y)


def test_a_scikit_learn_searchs_refit_says_its_choice_at_every_edit():
    # A trial: GridSearchCV's best_estimator_ carried no mark of the choice
    # made from exact scores; its deletions certified without a caveat.
    from sklearn.model_selection import GridSearchCV

    from skforget import PrivacyBudgetWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)) / 3
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(NoisyGDClassifier(classes=[0, 1], random_state=0),
                              {"C": [0.1, 1.0]}, cv=2).fit(X, y)
    model = pickle.loads(pickle.dumps(search.best_estimator_))
    with pytest.warns(PrivacyBudgetWarning, match="chosen by scikit-learn's "
                      "GridSearchCV from exact scores"):
        model.partial_unlearn(EditRequest(X, y, delete=[3]))
    # Neither do cross-validation's fold models nor a one-candidate grid's
    # refit (no choice was made; a second reader's mutation).
    from sklearn.model_selection import cross_validate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = cross_validate(NoisyGDClassifier(classes=[0, 1], random_state=0),
                            X, y, cv=2, return_estimator=True, return_indices=True)
        one = GridSearchCV(NoisyGDClassifier(classes=[0, 1], random_state=0),
                           {"C": [1.0]}, cv=2).fit(X, y).best_estimator_
    rows = [cv["indices"]["train"][k] for k in range(2)] + [np.arange(len(y))]
    for fitted, train in zip((*cv["estimator"], one), rows):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            fitted.partial_unlearn(EditRequest(X[train], y[train], delete=[3]))
        assert not [w for w in said if "chosen by" in str(w.message)]
    # One fit of the same model outside a search says nothing of the kind.
    alone = NoisyGDClassifier(classes=[0, 1], C=1.0, random_state=0).fit(X, y)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        alone.partial_unlearn(EditRequest(X, y, delete=[3]))
    assert not [w for w in said if "chosen by" in str(w.message)]


def test_a_plain_pipeline_warns_after_importing_the_estimators_only():
    # The check that a scikit-learn Pipeline's fitted preprocessing leaves the
    # guarantee was registered by importing skforget.pipeline: a user who
    # imported the estimators alone got no warning. A fresh interpreter
    # imports nothing else.
    import subprocess
    import sys

    code = (
        "import warnings, numpy as np\n"
        "from sklearn.pipeline import make_pipeline\n"
        "from sklearn.preprocessing import StandardScaler\n"
        "from skforget import NoisyGDRegressor, PrivacyLeakWarning\n"
        "X = np.random.default_rng(0).normal(size=(200, 3))\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    make_pipeline(StandardScaler(), NoisyGDRegressor()).fit(X, X[:, 0])\n"
        "print(sum(issubclass(x.category, PrivacyLeakWarning) and\n"
        "          'outside its guarantee' in str(x.message) for x in w))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "1"


def test_a_warning_filter_set_before_the_import_is_kept():
    # Trial finding: importing skforget put its filters in front, overriding
    # a user's "ignore" (or "error") set before the import. They are
    # appended now; a budget warning is still shown once per message.
    import subprocess
    import sys

    # (A filter naming skforget's categories needs skforget imported: the
    # case is a filter on every warning, set first.)
    code = (
        "import warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from skforget.exceptions import PrivacyLeakWarning, PrivacyBudgetWarning\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.warn('leak', PrivacyLeakWarning)\n"
        "print(len(w))\n"
        "warnings.resetwarnings()\n"
        "import importlib, skforget._validation as v\n"
        "importlib.reload(v)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    for _ in range(3):\n"
        "        warnings.warn('same', PrivacyBudgetWarning)\n"
        "    for _ in range(2):\n"
        "        warnings.warn('leak', PrivacyLeakWarning)\n"
        "print(len(w))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["0", "3"]


def test_a_function_of_the_whole_column_is_refused_as_not_public():
    """A FunctionTransformer is assumed to map each row on its own; one that
    computes column statistics was listed as public in the guarantee (a
    trial). The first rows transformed alone and among others tell."""
    from sklearn.preprocessing import FunctionTransformer

    from skforget.exceptions import DataDependentStepError
    from skforget.pipeline import make_forget_pipeline

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    standardise = FunctionTransformer(lambda D: (D - D.mean(axis=0)) / D.std(axis=0))
    pipe = make_forget_pipeline(standardise, NoisyGDClassifier(classes=[0, 1]))
    with pytest.raises(DataDependentStepError, match="'functiontransformer'.*changes "
                                                     "with the other rows"):
        pipe.fit(X, y)
    assert not hasattr(pipe, "public_preprocessing_")
    assert not hasattr(pipe[-1], "coef_")
    # Row by row, the same kind of step passes.
    rowwise = FunctionTransformer(lambda D: D / (1.0 + np.abs(D)))
    make_forget_pipeline(rowwise, NoisyGDClassifier(classes=[0, 1])).fit(X, y)


def test_the_row_check_reads_only_assumed_steps_to_their_rounding():
    """Third reading: float32 products sum rows in blocks whose order changes
    with the rows' number (a FrozenEstimator of a PCA fitted on public rows
    was refused), and a column of text before the step stopped the check (a
    column-mean function after it passed)."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.decomposition import PCA
    from sklearn.frozen import FrozenEstimator
    from sklearn.preprocessing import FunctionTransformer

    from skforget.exceptions import DataDependentStepError
    from skforget.pipeline import make_forget_pipeline

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 60)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    public = FrozenEstimator(PCA(20).fit(rng.normal(size=(500, 60)).astype(np.float32)))
    W = rng.normal(size=(60, 20)).astype(np.float32)
    for step in (public, FunctionTransformer(lambda D: D @ W)):
        make_forget_pipeline(step, NoisyGDClassifier(classes=[0, 1])).fit(X, y)
    frame = pd.DataFrame({"name": [f"p{i}" for i in range(300)],
                          "a": X[:, 0].astype(float), "b": X[:, 1].astype(float)})
    keep = ColumnTransformer([("keep", "passthrough", ["name", "a", "b"])],
                             sparse_threshold=0,
                             verbose_feature_names_out=False).set_output(
                                 transform="pandas")
    centre = FunctionTransformer(lambda D: D[["a", "b"]] - D[["a", "b"]].mean())
    pipe = make_forget_pipeline(keep, centre, NoisyGDClassifier(classes=[0, 1]))
    with pytest.raises(DataDependentStepError, match="'functiontransformer'"):
        pipe.fit(frame, y)


def test_no_warnings_filter_is_changed_while_fitting():
    """The warnings filters are every thread's: two threads entering and
    leaving a catch_warnings out of order left an "ignore" at their head that
    silenced every later warning of the process (a second and a third reader,
    in the dry runs, the row check and the output perturbation solve). Only
    the command line (one thread) and PrivateSearchCV's recording, under its
    lock, may use one."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "skforget"
    users = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "catch_warnings":
                users.add(str(path.relative_to(root)))
    assert users == {"store/_cli.py", "model_selection/_search.py"}
