# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""RecordStore: records, model and certificates updated in one SQLite transaction."""

import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder

from skforget import Database, EditRequest, NoisyGDClassifier, UnlearningError
from skforget.__main__ import main
from skforget.pipeline import ForgetPipeline
from skforget.preprocessing import PublicScaler
from skforget.store import RecordStore, forget
from skforget.store._backends import redact

pd = pytest.importorskip("pandas")

MARKER = "Zyxwv-Only-Person-7"      # a value only the person to delete has


def _people(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "sector": rng.choice(["private", "public", "self"], size=n).astype(object),
        "age": rng.integers(18, 80, size=n).astype(float),
        "hours": rng.integers(5, 80, size=n).astype(np.int64),
        "note": ["-"] * n,
    }, index=pd.Index([f"cust{i:05d}" for i in range(n)], name="person"))
    X.loc["cust00007", "note"] = MARKER
    X.loc["cust00009", "age"] = np.nan                 # a missing value
    y = pd.Series((rng.random(n) < 0.4).astype(int), index=X.index, name="income")
    return X, y


def _pipeline():
    prep = ColumnTransformer(
        [("sector", OneHotEncoder(categories=[["private", "public", "self"]]),
          ["sector"]),
         ("age", PublicScaler(center=45.0, scale=30.0), ["age"]),
         ("hours", PublicScaler(center=40.0, scale=40.0), ["hours"])],
        sparse_threshold=0)
    # The model never sees "note"; the missing age becomes 0 after scaling.
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    prep.transformers[1] = ("age", make_pipeline(
        SimpleImputer(strategy="constant", fill_value=45.0, keep_empty_features=True),
        PublicScaler(center=45.0, scale=30.0)), ["age"])
    return ForgetPipeline([("prep", prep),
                           ("model", NoisyGDClassifier(random_state=3,
                                                       max_edit_size=4))])


def _served_at(location):
    """A store and, beside it, the same database and pipeline kept in memory."""
    db = Database(*_people())
    pipe = _pipeline().fit(db)
    return RecordStore.create(location, db, pipe), db, pipe


@pytest.fixture
def served(tmp_path):
    return _served_at(tmp_path / "service.sqlite")


@pytest.fixture
def served_anywhere(store_location):
    """The same as ``served``, on SQLite and on PostgreSQL."""
    return _served_at(store_location)


def _raw_state(path):
    """Everything in the file, read with plain sqlite3 (no skforget code)."""
    con = sqlite3.connect(path)
    try:
        return {table: con.execute(f"SELECT * FROM {table}").fetchall()
                for table in ("meta", "records", "model", "log")}
    finally:
        con.close()


def _assert_same_database(a, b):
    pd.testing.assert_frame_equal(a.X, b.X)
    pd.testing.assert_series_equal(a.y, b.y)
    assert a.version == b.version


def test_store_round_trips_records_model_and_version(served_anywhere,
                                                     store_location):
    store, db, pipe = served_anywhere
    reopened = RecordStore(store_location)
    _assert_same_database(reopened.database(), db)
    model = reopened.model()
    np.testing.assert_array_equal(model[-1].coef_, pipe[-1].coef_)
    assert model.database_version_ == db.version
    assert reopened.log() == []
    assert str(model.privacy_guarantee_) == str(pipe.privacy_guarantee_)


def test_forget_updates_records_model_and_log_like_the_in_memory_service(
        served_anywhere):
    store, db, pipe = served_anywhere
    certificate = store.forget(["cust00007", "cust00020"])
    # The same request served in memory, same seed.
    request = EditRequest(db, delete=["cust00007", "cust00020"], by="id")
    pipe.partial_unlearn(request)
    expected = request.apply()
    stored = store.database()
    pd.testing.assert_frame_equal(stored.X, expected.X)
    pd.testing.assert_series_equal(stored.y, expected.y)
    assert stored.version.number == 1
    model = store.model()
    np.testing.assert_array_equal(model[-1].coef_, pipe[-1].coef_)
    assert certificate == pipe.privacy_guarantee_.deletion
    assert store.log() == [certificate]
    assert model.database_version_ == stored.version
    # A second edit: a correction and a new person, by ID.
    new = pd.DataFrame({"sector": ["self"], "age": [50.0], "hours": [10],
                        "note": ["new"]}, index=["cust90000"])
    second = store.edit(replace=["cust00003"], X_replace=[["public", 33.0, 40, "c"]],
                        y_replace=[1], X_insert=new, y_insert=[0])
    assert second.index == 2 and (second.n_replaced, second.n_inserted) == (1, 1)
    stored = store.database()
    assert stored.ids[-1] == "cust90000"
    assert stored.X.loc["cust00003"].tolist() == ["public", 33.0, 40, "c"]
    assert stored.X.dtypes.equals(db.X.dtypes)
    assert [c.index for c in store.log()] == [1, 2]


def test_deleted_record_is_erased_from_the_file(served):
    store, _, _ = served
    assert MARKER.encode() in store.path.read_bytes()
    store.forget(["cust00007"])
    assert MARKER.encode() not in store.path.read_bytes()
    assert not store.path.with_name(store.path.name + "-journal").exists()
    # The log and the model keep no ID of the deleted record.
    con = sqlite3.connect(store.path)
    log_text = con.execute("SELECT certificate FROM log").fetchone()[0]
    guarantee_text = con.execute("SELECT guarantee FROM model").fetchone()[0]
    con.close()
    assert "cust00007" not in log_text and "cust00007" not in guarantee_text


@pytest.mark.parametrize("step", ["_write_model", "_write_log"])
def test_failure_between_steps_leaves_the_previous_state(served, monkeypatch, step):
    store, db, pipe = served
    store.forget(["cust00001"])
    before = _raw_state(store.path)
    database_before, log_before = store.database(), store.log()
    reached = []

    def fail(self, con, *args):
        # The records (and, for _write_log, the model) are already written
        # inside the transaction when this step fails.
        reached.append(con.execute("SELECT COUNT(*) FROM records").fetchone()[0])
        raise RuntimeError(f"injected failure in {step}")

    monkeypatch.setattr(RecordStore, step, fail)
    with pytest.raises(RuntimeError, match="injected failure"):
        store.forget(["cust00002", "cust00003"])
    assert reached == [db.n_samples - 3]               # the deletes were written
    monkeypatch.undo()
    assert _raw_state(store.path) == before
    reopened = RecordStore(store.path)
    _assert_same_database(reopened.database(), database_before)
    assert reopened.log() == log_before
    assert reopened.model().database_version_ == database_before.version
    # The store still serves requests.
    assert reopened.forget(["cust00002"]).index == 2


def test_crash_between_steps_is_rolled_back_when_the_file_is_reopened(served):
    store, _, _ = served
    before = _raw_state(store.path)
    # A separate process writes the records, then dies without any cleanup
    # (os._exit: no rollback, no close) before the model is written.
    child = textwrap.dedent(f"""
        import os
        from skforget.store import RecordStore

        def crash(self, con, model):
            n = con.execute("SELECT COUNT(*) FROM records").fetchone()[0]
            print("records in the transaction:", n, flush=True)
            # A one-page cache makes SQLite spill the modified pages into the
            # file (after journalling the originals), as a large edit would.
            con.execute("PRAGMA cache_size = 1")
            con.execute("SELECT * FROM records").fetchall()
            con.execute("SELECT * FROM model").fetchall()
            with open({str(store.path)!r}, "rb") as f:
                print("in the file:", b"cust00004" in f.read(), flush=True)
            os._exit(17)

        RecordStore._write_model = crash
        RecordStore({str(store.path)!r}).forget(["cust00004", "cust00005"])
    """)
    result = subprocess.run([sys.executable, "-c", child], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 17, result.stderr
    assert "records in the transaction: 78" in result.stdout
    journal = store.path.with_name(store.path.name + "-journal")
    assert journal.exists()                            # the crash left it behind
    # The half-written edit reached the file itself: cust00004 was erased there.
    assert "in the file: False" in result.stdout
    assert b"cust00004" not in store.path.read_bytes()
    reopened = RecordStore(store.path)               # rolls the journal back
    database = reopened.database()
    assert database.n_samples == 80 and "cust00004" in database.ids
    assert reopened.log() == []
    assert _raw_state(store.path) == before
    assert reopened.forget(["cust00004"]).index == 1
    assert not journal.exists()


def test_refused_requests_change_nothing(served):
    store, _, _ = served
    before = _raw_state(store.path)
    with pytest.raises(UnlearningError, match=r"delete\[1\]='nobody' is not an ID"):
        store.forget(["cust00001", "nobody"])
    with pytest.raises(UnlearningError, match="more than max_edit_size=4"):
        store.forget([f"cust{i:05d}" for i in range(10, 15)])
    with pytest.raises(UnlearningError, match=r"X_insert row 0 \(ID 'n1'\) cannot be "
                                              "preprocessed"):
        store.edit(X_insert=[["astronaut", 30.0, 10, "-"]], y_insert=[0],
                   insert_ids=["n1"])
    assert _raw_state(store.path) == before


def test_create_checks_its_inputs(tmp_path):
    X, y = _people()
    db = Database(X, y)
    with pytest.raises(ValueError, match="The model serves plain arrays, not the "
                                         "database's version 0"):
        RecordStore.create(tmp_path / "a.sqlite", db, _pipeline().fit(X, y))
    with pytest.raises(ValueError, match="not the database's"):
        RecordStore.create(tmp_path / "a.sqlite", db,
                           _pipeline().fit(Database(X, y)))
    assert not (tmp_path / "a.sqlite").exists()
    (tmp_path / "b.sqlite").write_text("x")
    with pytest.raises(FileExistsError, match="exists"):
        RecordStore.create(tmp_path / "b.sqlite", db, _pipeline().fit(db))
    with pytest.raises(FileNotFoundError, match="no record store at"):
        RecordStore(tmp_path / "missing.sqlite")
    with pytest.raises(ValueError, match="not a skforget record store"):
        RecordStore(tmp_path / "b.sqlite")
    import scipy.sparse as sp

    sparse = Database(sp.csr_matrix(np.eye(4)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="dense records"):
        RecordStore.create(tmp_path / "c.sqlite", sparse,
                           NoisyGDClassifier().fit(sparse))
    assert not (tmp_path / "c.sqlite").exists()


def test_weighted_records_keep_their_weights_through_the_store(tmp_path):
    # A store made from a weighted Database keeps the weights with the records:
    # a deletion is served like the in-memory service (it used to be refused:
    # the rebuilt request carried no weights), and new records bring theirs.
    X, y = _people()
    w = np.random.default_rng(4).uniform(0.5, 2.0, X.shape[0])
    db = Database(X, y, sample_weight=w)
    pipe = _pipeline().fit(db)
    store = RecordStore.create(tmp_path / "weighted.sqlite", db, pipe)
    np.testing.assert_array_equal(store.database().sample_weight, w)

    store.forget(["cust00007"])
    request = EditRequest(db, delete=["cust00007"], by="id")
    pipe.partial_unlearn(request)
    db = request.apply()
    np.testing.assert_array_equal(store.model()[-1].coef_, pipe[-1].coef_)
    np.testing.assert_array_equal(store.database().sample_weight, db.sample_weight)

    new = X.loc[["cust00003"]].set_axis(["cust90000"])
    before = _raw_state(store.path)
    with pytest.raises(UnlearningError, match="sample_weight_insert is required"):
        store.edit(X_insert=new, y_insert=[1])
    assert _raw_state(store.path) == before
    store.edit(replace=["cust00004"], X_replace=X.loc[["cust00005"]], y_replace=[0],
               sample_weight_replace=[3.0], X_insert=new, y_insert=[1],
               sample_weight_insert=[0.25])
    stored = store.database()
    assert stored.sample_weight[stored.ids.tolist().index("cust00004")] == 3.0
    assert stored.sample_weight[-1] == 0.25 and stored.ids[-1] == "cust90000"
    # Reopened from the file, as a new process would.
    np.testing.assert_array_equal(RecordStore(store.path).database().sample_weight,
                                  stored.sample_weight)


def test_array_store_with_integer_ids(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 3)) / 2
    db = Database(X, (X[:, 0] > 0).astype(int))
    model = NoisyGDClassifier(random_state=0).fit(db)
    store = RecordStore.create(tmp_path / "arr.sqlite", db, model)
    np.testing.assert_array_equal(store.database().X, X)
    assert forget(store.path, 7).n_deleted == 1
    assert 7 not in store.database().ids.tolist()
    assert store.parse_id("12") == 12
    with pytest.raises(ValueError, match="ID 'x' is not an integer"):
        store.parse_id("x")


def test_command_line_serves_a_deletion(served, capsys):
    store, _, _ = served
    assert main(["forget", "--store", str(store.path), "--id", "cust00011",
                 "--id", "cust00012"]) == 0
    out = capsys.readouterr().out
    assert "Forgot 2 record(s)" in out and "Edit 1: 2 deleted" in out
    assert "Preprocessing inside the guarantee" in out
    assert main(["forget", "--store", str(store.path), "--id", "cust00011"]) == 1
    assert ("error: delete names 'cust00011', which this store deleted earlier "
            "(edit 1)") in capsys.readouterr().err
    assert main(["show", "--store", str(store.path)]) == 0
    assert "78 records, version 1" in capsys.readouterr().out
    # The real entry point, in a fresh interpreter.
    result = subprocess.run([sys.executable, "-m", "skforget", "forget", "--store",
                             str(store.path), "--id", "cust00013"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Edit 2: 1 deleted" in result.stdout
    assert store.database().n_samples == 77


def test_schema_1_store_is_migrated_when_opened(served):
    # A store as skforget wrote it before the request lifecycle (schema 1):
    # records, model and log only.
    store, _, _ = served
    store.forget(["cust00001"])
    con = sqlite3.connect(store.path)
    con.execute("DROP TABLE requests")
    con.execute("DROP TABLE tombstones")
    con.execute("DELETE FROM meta WHERE key = 'tombstone_key'")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    con.commit()
    con.close()
    before = _raw_state(store.path)
    migrated = RecordStore(store.path)
    after = _raw_state(store.path)
    assert {k: v for k, v in after.items() if k != "meta"} == {
        k: v for k, v in before.items() if k != "meta"}
    meta = dict(after["meta"])
    assert meta["schema"] == "2" and len(meta["tombstone_key"]) == 66   # JSON hex
    # The old log and records are served on; the queue works.
    assert [c.index for c in migrated.log()] == [1]
    assert migrated.submit(["cust00002"], request_id="r1").status == "pending"
    (status,) = migrated.process()
    assert (status.status, status.edit) == ("done", 2)
    # An ID deleted before the migration left no tombstone: it reads as unknown.
    with pytest.raises(ValueError, match="never deleted from it"):
        migrated.submit(["cust00001"], request_id="r2")
    assert RecordStore(store.path).log()[-1].index == 2        # opened again: no-op


def test_an_integer_id_typed_on_the_command_line_is_digits_only(tmp_path):
    """int() reads "7_0" as 70 and " 7 " or Arabic-Indic "٧" as 7: a typo on
    the command line must not name another record (service audit C3)."""
    from _stores import small_store

    store = small_store(str(tmp_path / "s.sqlite"), string_ids=False)
    assert store.parse_id("7") == 7 and store.parse_id("-3") == -3
    for text in ("7_0", " 7 ", "\u0667", "7.0", "+7", ""):
        with pytest.raises(ValueError, match="is not an integer"):
            store.parse_id(text)
    # An ID no database column holds is named, not an overflow from the driver.
    with pytest.raises(ValueError, match="outside the 64-bit integers"):
        store.submit([2**63], request_id="big")
    with pytest.raises(TypeError, match="this store's IDs are integers"):
        store.forget(["7"])
    store.forget(np.int64(7))                 # one ID as a numpy scalar
    assert len(store.log()) == 1


def test_a_password_given_as_a_parameter_is_not_shown():
    # A new user's trial: libpq's ?password= form was shown in repr,
    # location, `show` and the connection error (user:pw@ was hidden).
    url = "postgresql://alice@127.0.0.1:1/db?sslmode=disable&password=s3cr%2Bt"
    assert redact(url) == ("postgresql://alice@127.0.0.1:1/db"
                           "?sslmode=disable&password=***")
    assert redact("postgresql://alice:pw@h/db?password=x").count("***") == 2
    assert redact("postgresql://h/db?passfile=/p") == "postgresql://h/db?passfile=/p"
    # A socket URL is shown as given: it was re-assembled as postgresql:/db
    # with its host's slashes escaped (trial finding).
    socket = "postgresql:///db?host=/var/run/postgresql"
    assert redact(socket) == socket
    assert redact(f"{socket}&password=x") == f"{socket}&password=***"
    pytest.importorskip("psycopg")
    with pytest.raises(ConnectionError) as caught:
        RecordStore(url)
    assert "s3cr" not in str(caught.value) and "***" in str(caught.value)
