# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Record IDs, the versioned Database, and the model's refusal of stale requests."""

import pickle
import warnings

import numpy as np
import pytest

from skforget import (
    Database,
    DatabaseVersion,
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    UnlearningError,
)
from skforget.pipeline import make_private_pipeline

pd = pytest.importorskip("pandas")

IDS = [f"cust{i:05d}" for i in range(8)]


def _frame():
    X = pd.DataFrame({"age": np.arange(20.0, 28.0), "hours": np.arange(8.0) * 5,
                      "sector": ["a", "b", "a", "c", "b", "a", "c", "a"]},
                     index=pd.Index(IDS, name="person"))
    y = pd.Series(np.arange(8) % 2, index=X.index, name="label")
    return X, y


def _numeric_data(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


# --- IDs and apply() -------------------------------------------------------------

def test_apply_keeps_the_index_through_delete_replace_insert():
    X, y = _frame()
    new = pd.DataFrame({"age": [40.0], "hours": [1.0], "sector": ["c"]},
                       index=["cust99999"])
    edit = EditRequest(X, y, delete=["cust00001", "cust00006"], replace=["cust00003"],
                       X_replace=[[33.0, 7.0, "a"]], y_replace=[1],
                       X_insert=new, y_insert=[0], by="id")
    X_new, y_new = edit.apply()
    expected = [i for i in IDS if i not in ("cust00001", "cust00006")] + ["cust99999"]
    assert X_new.index.tolist() == expected
    assert X_new.index.name == "person"
    assert y_new.index.tolist() == expected
    # The replaced record keeps its ID and place; dtypes survive the edit.
    assert X_new.loc["cust00003"].tolist() == [33.0, 7.0, "a"]
    assert y_new.loc["cust00003"] == 1
    assert X_new.dtypes.equals(X.dtypes)
    assert X_new.loc["cust99999", "sector"] == "c"
    # By position, the same edit gives the same database.
    same = EditRequest(X, y, delete=[1, 6], replace=[3],
                       X_replace=[[33.0, 7.0, "a"]], y_replace=[1], X_insert=new,
                       y_insert=[0], by="position").apply()
    pd.testing.assert_frame_equal(same[0], X_new)
    # The caller's database is untouched.
    pd.testing.assert_frame_equal(X, _frame()[0])


def test_integer_ids_are_numbered_on_and_other_ids_must_be_given():
    X, y = _frame()
    Xi = X.reset_index(drop=True)
    X_new, _ = EditRequest(Xi, y.to_numpy(), delete=[2],
                           X_insert=[[1.0, 2.0, "a"], [3.0, 4.0, "b"]],
                           y_insert=[0, 1]).apply()
    assert X_new.index.tolist() == [0, 1, 3, 4, 5, 6, 7, 8, 9]
    with pytest.raises(UnlearningError, match="insert_ids is required"):
        EditRequest(X, y, X_insert=[[1.0, 2.0, "a"]], y_insert=[0])
    X_new, _ = EditRequest(X, y, X_insert=[[1.0, 2.0, "a"]], y_insert=[0],
                           insert_ids=["zed"]).apply()
    assert X_new.index[-1] == "zed"


@pytest.mark.parametrize("kwargs,message", [
    (dict(delete=["nobody"], by="id"), r"delete\[0\]='nobody' is not an ID of the "
                                       "database"),
    (dict(delete=["cust00002", "cust00002"], by="id"),
     r"delete\[1\]='cust00002' names a record that delete\[0\] already names"),
    (dict(delete=["cust00002"], replace=["cust00002"], X_replace=[[1.0, 1.0, "a"]],
          y_replace=[0], by="id"),
     "the record with ID 'cust00002' appears in both delete and replace"),
    (dict(delete=["cust00002"], by="position"),
     r"delete\[0\]='cust00002' is not an integer row index \(to name records by "
     r"ID, pass by='id'\)"),
    # Without by, IDs that are not positions make delete= ambiguous (a trial
    # deleted the row at position 539 for the person with ID 539).
    (dict(delete=["cust00002"]), "Say by='id' or by='position'"),
    (dict(delete=[2]), "Say by='id' or by='position'"),
    # A person with two rows: the index is no key, and still no position.
    (dict(delete=[2], X=lambda X: X.set_axis([X.index[0]] * 2 + list(X.index[2:]))),
     "Say by='id' or by='position'"),
    (dict(delete=[1], by="name"), "by must be 'position' or 'id'"),
    (dict(X_insert=[[1.0, 2.0, "a"]], y_insert=[0], insert_ids=["cust00004"]),
     r"insert_ids\[0\]='cust00004' is already the ID of row 4"),
    (dict(X_insert=[[1.0, 2.0, "a"]], y_insert=[0], insert_ids=["n1", "n2"]),
     "insert_ids must hold one ID per row of X_insert"),
    (dict(X_insert=pd.DataFrame({"age": [1.0], "hours": [2.0]}), y_insert=[0],
          insert_ids=["n1"]), "X_insert lacks column 'sector'"),
    (dict(X_insert=[[1.0, "many", "a"]], y_insert=[0], insert_ids=["n1"]),
     "X_insert column 'hours' cannot be read as the database's float64"),
])
def test_requests_by_id_name_the_entry_at_fault(kwargs, message):
    X, y = _frame()
    kwargs = dict(kwargs)
    if callable(kwargs.get("X")):
        X = kwargs.pop("X")(X)
    with pytest.raises(UnlearningError, match=message):
        EditRequest(X, y, **kwargs)


def test_new_records_with_missing_numbers_go_to_whoever_imputes_them():
    # A trial: on a table of numbers only, an inserted or replacing record
    # with a missing value was refused in edits, though fit and predict of a
    # private pipeline take it (one string column made it pass).
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)},
                     index=pd.Index([f"p{i}" for i in range(400)], name="person"))
    X.loc[X.index[:20], "b"] = np.nan
    y = pd.Series((X["a"] > 0).astype(int), index=X.index)
    new = pd.DataFrame({"a": [0.3], "b": [np.nan]}, index=["p400"])
    db = Database(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_private_pipeline(NoisyGDClassifier(classes=[0, 1]),
                                     epsilon=1.0).fit(db)
        request = EditRequest(db, X_insert=new, y_insert=[1])
        pipe.partial_unlearn(request)
    edited = request.apply()
    assert edited.n_samples == 401 and np.isnan(edited.X.loc["p400", "b"])
    assert pipe.database_version_ == edited.version
    # A model fed the numbers as they are refuses it by name, unchanged.
    db = Database(X.fillna(0.0) / 4, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(db)
    coef = model.coef_.copy()
    with pytest.raises(UnlearningError, match="X_insert row 0 contains NaN: the "
                                              "model reads the records as they are"):
        model.partial_unlearn(EditRequest(db, X_insert=new, y_insert=[1]))
    assert np.array_equal(model.coef_, coef) and db.n_samples == 400
    # Infinity is no value, for anyone.
    with pytest.raises(UnlearningError, match="X_insert row 0 contains an infinite"):
        EditRequest(db, X_insert=new.fillna(np.inf), y_insert=[1])


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_a_sparse_block_names_the_row_of_its_bad_value(fmt):
    # A second reader: a CSC block named the wrong row, a COO one crashed.
    import scipy.sparse as sp

    X = sp.random(10, 3, density=0.6, format="csr", random_state=0)
    y = np.arange(10) % 2
    new = sp.csr_matrix(np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.0],
                                  [0.0, 0.0, np.nan]])).asformat(fmt)
    with pytest.raises(UnlearningError, match="X_insert row 2 contains NaN"):
        EditRequest(X, y, X_insert=new, y_insert=[0, 1, 0])


def test_nullable_numbers_in_a_new_record_are_read_as_missing():
    # A second reader: pandas' Float64 / Int64 columns hold pd.NA, which the
    # missing-value check could not cast (a bare TypeError).
    X = pd.DataFrame({"a": pd.array([0.1, 0.2, 0.3, 0.4], dtype="Float64"),
                      "b": pd.array([1, 2, 3, 4], dtype="Int64")})
    y = np.array([0, 1, 0, 1])
    new = pd.DataFrame({"a": pd.array([pd.NA], dtype="Float64"),
                        "b": pd.array([pd.NA], dtype="Int64")})
    request = EditRequest(X, y, X_insert=new, y_insert=[1])
    assert request.n_inserted == 1
    with pytest.raises(UnlearningError, match="X_insert row 0 contains NaN: the "
                                              "model reads the records"):
        request._check_finite_rows()


@pytest.mark.parametrize("value,cause", [
    (np.nan, r"row 0 is missing, and an integer column holds no missing value"),
    (np.inf, r"row 0 is infinite, which is no value \(write a missing value as NaN"),
])
def test_a_new_integer_value_that_cannot_be_one_says_why(value, cause):
    X, y = _frame()
    X["age"] = X["age"].astype("int64")
    with pytest.raises(UnlearningError, match="X_insert column 'age' cannot be read "
                                              "as the database's int64: " + cause):
        EditRequest(X, y, X_insert=pd.DataFrame({"age": [value], "hours": [1.0],
                                                 "sector": ["a"]}),
                    y_insert=[0], insert_ids=["n1"])


def test_categorical_columns_refuse_unknown_categories():
    X, y = _frame()
    X["sector"] = X["sector"].astype("category")
    with pytest.raises(UnlearningError, match=r"X_insert row 1, column 'sector': the "
                                              "value is not a category"):
        EditRequest(X, y, X_insert=[[1.0, 2.0, "a"], [1.0, 2.0, "zz"]],
                    y_insert=[0, 1], insert_ids=["n1", "n2"])


def test_by_id_needs_unique_ids():
    X, y = _frame()
    X.index = ["a", "b", "a", "c", "d", "e", "f", "g"]
    with pytest.raises(UnlearningError, match="X.index holds the ID 'a' twice "
                                              r"\(rows 0 and 2\)"):
        EditRequest(X, y.to_numpy(), delete=["b"], by="id")
    # By position the duplicated index is no key, and rows are renumbered as
    # before record IDs existed; without by= it is refused (a second reader:
    # a person with two rows made delete=[539] a position, silently).
    with pytest.raises(UnlearningError, match="Say by='id' or by='position'"):
        EditRequest(X, y.to_numpy(), delete=[1])
    X_new, _ = EditRequest(X, y.to_numpy(), delete=[1], by="position").apply()
    assert X_new.index.tolist() == list(range(7))
    with pytest.raises(UnlearningError, match="by='id' needs record IDs"):
        EditRequest(np.zeros((3, 2)), [0, 1, 0], delete=[1], by="id")


# --- the Database value ------------------------------------------------------------

def test_database_ids_follow_their_records_and_versions_count_edits():
    X, y = _numeric_data(n=6, d=2)
    db = Database(X, y)
    assert db.ids.tolist() == list(range(6))
    assert db.version.number == 0 and len(db.version.token) == 16
    db1 = EditRequest(db, delete=[1, 2]).apply()
    db2 = EditRequest(db1, delete=[3], X_insert=X[:1], y_insert=[1], by="id").apply()
    assert db1.ids.tolist() == [0, 3, 4, 5]
    assert db2.ids.tolist() == [0, 4, 5, 6]
    assert (db1.version.number, db2.version.number) == (1, 2)
    # Each version has its own random token.
    assert len({db.version.token, db1.version.token, db2.version.token}) == 3
    X2, y2 = db2
    np.testing.assert_array_equal(X2, np.vstack([X[[0, 4, 5]], X[:1]]))
    np.testing.assert_array_equal(y2, np.r_[y[[0, 4, 5]], 1])
    with pytest.raises(UnlearningError, match=r"delete\[0\]=3 is not an ID"):
        EditRequest(db2, delete=[3], by="id")
    # Two databases with the same rows are still two databases.
    assert Database(X, y).version.token != db.version.token


def test_database_validation_names_the_field():
    X, y = _frame()
    unhashable = np.empty(2, dtype=object)
    unhashable[0], unhashable[1] = [1], [2]
    with pytest.raises(UnlearningError, match=r"ids\[0\]=\[1\] is not a valid record "
                                              "ID"):
        Database(np.zeros((2, 2)), [0, 1], ids=unhashable)
    with pytest.raises(UnlearningError, match="ids must be 1-D with one ID per row"):
        Database(np.zeros((2, 2)), [0, 1], ids=["a"])
    with pytest.raises(UnlearningError, match=r"ids holds the ID 'a' twice \(rows 0 "
                                              "and 1\\)"):
        Database(np.zeros((2, 2)), [0, 1], ids=["a", "a"])
    with pytest.raises(UnlearningError, match="ids is given for a DataFrame"):
        Database(X, y, ids=IDS)
    with pytest.raises(UnlearningError, match="y's index differs from X's"):
        Database(X, y.set_axis(list("abcdefgh")))
    with pytest.raises(UnlearningError, match="y is given twice"):
        EditRequest(Database(X, y), y, delete=[0])
    with pytest.raises(UnlearningError, match="y is missing"):
        EditRequest(X, delete=[0])
    with pytest.raises(ValueError, match="number must be a non-negative int"):
        DatabaseVersion(token="ab", number=-1)
    # A Series with the default index is re-indexed by the IDs.
    db = Database(X, y.reset_index(drop=True))
    assert db.y.index.equals(X.index)


def test_database_token_is_random_not_a_digest_of_the_rows():
    X, y = _numeric_data(n=10)
    tokens = {Database(X, y).version.token for _ in range(20)}
    assert len(tokens) == 20
    assert all(len(t) == 16 and int(t, 16) >= 0 for t in tokens)


# --- the model checks the version -----------------------------------------------------

def _snapshot(model):
    return (np.copy(model.coef_), np.copy(model.intercept_), model.privacy_guarantee_,
            model.database_version_)


def _assert_unchanged(model, snap):
    np.testing.assert_array_equal(model.coef_, snap[0])
    np.testing.assert_array_equal(model.intercept_, snap[1])
    assert model.privacy_guarantee_ is snap[2]
    assert model.database_version_ == snap[3]


@pytest.mark.parametrize("Estimator", [NoisyGDClassifier, NoisyGDRegressor])
def test_stale_request_is_refused_whatever_its_size(Estimator):
    X, y = _numeric_data()
    db0 = Database(X, y)
    model = Estimator(random_state=0).fit(db0)
    assert model.database_version_ == db0.version
    first = EditRequest(db0, delete=[5], X_insert=X[:1] * 0.5, y_insert=y[:1])
    model.partial_unlearn(first)
    db1 = first.apply()
    assert db1.n_samples == db0.n_samples            # same size, other rows
    assert model.database_version_ == db1.version
    snap = _snapshot(model)
    branch = EditRequest(db0, delete=[9], X_insert=X[1:2] * 0.5, y_insert=y[1:2])
    stale = {
        # Built before the edit the model served, same size as the current one.
        "stale, same size": (EditRequest(db0, delete=[7]),
                             r"built on version 0 \(token .*\), but the model's "
                             r"current database is version 1 .* the request is "
                             r"stale: the model has served 1 edit\(s\) since"),
        # Another request on the same version, applied but never served: same
        # version number and size, other rows.
        "other branch, same size": (EditRequest(branch.apply(), delete=[7],
                                                by="position"),
                                    "a version this model never served"),
        "other branch, smaller": (
            EditRequest(EditRequest(db0, delete=[1]).apply(), delete=[7],
                        by="position"),
            "a version this model never served"),
        "other database, same size": (EditRequest(Database(X, y), delete=[7]),
                                      "or it is another database"),
        "plain arrays, same size": (EditRequest(db1.X, db1.y, delete=[7]),
                                    "the request was built on plain arrays"),
    }
    assert branch.apply().n_samples == db1.n_samples
    for _name, (request, message) in stale.items():
        with pytest.raises(UnlearningError, match=message):
            model.partial_unlearn(request)
        _assert_unchanged(model, snap)
    # The current database is served.
    model.partial_unlearn(EditRequest(db1, delete=[7], by="id"))
    assert model.database_version_.number == 2


def test_request_applied_without_the_model_is_refused_as_ahead():
    X, y = _numeric_data()
    db0 = Database(X, y)
    model = NoisyGDClassifier(random_state=0).fit(db0)
    db1 = EditRequest(db0, delete=[0]).apply()      # never served
    with pytest.raises(UnlearningError, match="ahead of the model"):
        model.partial_unlearn(EditRequest(db1, delete=[1], by="position"))


def test_unbound_model_refuses_versioned_requests_and_keeps_size_checks():
    X, y = _numeric_data()
    model = NoisyGDClassifier(random_state=0).fit(X, y)
    assert model.database_version_ is None
    snap = _snapshot(model)
    with pytest.raises(UnlearningError, match="fitted on plain arrays"):
        model.partial_unlearn(EditRequest(Database(X, y), delete=[0]))
    _assert_unchanged(model, snap)
    model.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert model.database_version_ is None


def test_fit_on_a_database_equals_fit_on_its_arrays():
    X, y = _numeric_data()
    db = Database(X, y)
    a = NoisyGDClassifier(random_state=3).fit(db)
    b = NoisyGDClassifier(random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="y is given twice"):
        NoisyGDClassifier().fit(db, y)
    # The pickle holds the version (token and count), no row.
    blob = pickle.dumps(a)
    assert db.version.token.encode() in blob
    for row in X:
        assert row.tobytes() not in blob
