# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""RecordStore's request lifecycle and audit records, on SQLite and PostgreSQL.

Every test here takes ``store_location`` (tests/conftest.py), so it runs once
on a SQLite file and once on a PostgreSQL schema.
"""

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from _stores import small_store

from skforget import Database, EditRequest, NoisyGDClassifier
from skforget.accounting import rho_to_epsilon
from skforget.store import (
    RecordStore,
    RequestConflictError,
    StoreBusyError,
    UnknownIDError,
    UnknownRequestError,
)
from skforget.store._requests import one_month_after

pd = pytest.importorskip("pandas")

MARKER = "Zyxwv-Only-Person-7"      # a value only one person has
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def _people(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "sector": rng.choice(["private", "public", "self"], size=n).astype(object),
        "age": rng.uniform(-0.5, 0.5, size=n),
        "hours": rng.integers(0, 2, size=n).astype(np.int64),
        "note": ["-"] * n,
    }, index=pd.Index([f"cust{i:05d}" for i in range(n)], name="person"))
    X.loc["cust00007", "note"] = MARKER
    X.loc["cust00009", "age"] = np.nan
    y = pd.Series((rng.random(n) < 0.4).astype(int), index=X.index, name="income")
    return X, y


def _pipeline(max_edit_size=4):
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from skforget.pipeline import ForgetPipeline

    prep = ColumnTransformer(
        [("sector", OneHotEncoder(categories=[["private", "public", "self"]]),
          ["sector"]),
         ("age", make_pipeline(SimpleImputer(strategy="constant", fill_value=0.0,
                                             keep_empty_features=True)), ["age"]),
         ("hours", "passthrough", ["hours"])], sparse_threshold=0)
    model = NoisyGDClassifier(classes=[0, 1], random_state=3,
                              max_edit_size=max_edit_size)
    return ForgetPipeline([("prep", prep), ("model", model)])


def _ledgered_store(location, tmp_path, epsilon=50.0, **params):
    """A store whose model records into a SharedLedger of its own; edits
    pass over the data (max_lazy_records=0) unless ``params`` say otherwise."""
    from skforget.store import SharedLedger

    X, y = _people()
    db = Database(X, y)
    ledger = SharedLedger(tmp_path / "ledger.sqlite", epsilon=epsilon, delta=1e-5)
    model = _pipeline()
    model.set_params(model__ledger=ledger,
                     **{"model__max_lazy_records": 0, **params})
    return RecordStore.create(location, db, model.fit(db)), ledger


@pytest.fixture
def frame_store(store_location):
    X, y = _people()
    db = Database(X, y)
    pipe = _pipeline().fit(db)
    return RecordStore.create(store_location, db, pipe), db, pipe


def test_reopened_by_location_without_showing_a_password(frame_store,
                                                        store_location):
    store, db, _ = frame_store
    assert "skforget:skforget@" not in repr(store) + store.location
    reopened = RecordStore(store_location)
    assert reopened.backend == store.backend
    assert reopened.database().version == db.version
    with pytest.raises(FileExistsError):
        RecordStore.create(store_location, db, reopened.model())


def test_a_writer_waits_at_most_its_lock_timeout(store_location):
    store = small_store(store_location)
    other = RecordStore(store_location)
    other._backend.lock_timeout = 0.2
    holder = store._backend.connect()
    holder.begin_write()
    try:
        with pytest.raises(StoreBusyError, match="locked by another writer"):
            other.submit(["p1"], request_id="r1")
    finally:
        holder.rollback()
        holder.close()
    with pytest.raises(UnknownRequestError):
        other.status("r1")
    assert other.submit(["p1"], request_id="r1").status == "pending"


def test_integer_ids_and_weights(store_location):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 3)) / 2
    w = rng.uniform(0.5, 2.0, 50)
    db = Database(X, (X[:, 0] > 0).astype(int), sample_weight=w)
    store = RecordStore.create(store_location, db,
                               NoisyGDClassifier(random_state=0).fit(db))
    np.testing.assert_array_equal(store.database().X, X)
    np.testing.assert_array_equal(store.database().sample_weight, w)
    assert store.submit([7, 8], request_id="r1").status == "pending"
    with pytest.raises(TypeError, match="this store's IDs are integers"):
        store.submit(["7"], request_id="r2")
    assert [s.status for s in store.process()] == ["done"]
    assert store.audit_record("r1")["deleted_ids"] == [7, 8]
    kept = store.database()
    assert 7 not in kept.ids.tolist() and kept.n_samples == 48
    np.testing.assert_array_equal(kept.sample_weight, np.delete(w, [7, 8]))


def test_numbered_inserts_never_take_a_deleted_id(store_location):
    # Numbered on from the largest current ID alone, a record inserted after
    # the last one was deleted took its ID and dropped its tombstone: the
    # deleted person's next request then deleted the new person's record.
    store = small_store(store_location, n=40, string_ids=False)   # IDs 0..39
    store.submit([38, 39], request_id="A")
    store.process()
    store.edit(X_insert=np.full((2, 3), 0.45), y_insert=[1, 0])
    ids = store.database().ids.tolist()
    assert ids[-2:] == [40, 41] and 38 not in ids and 39 not in ids
    again = store.submit([39], request_id="A-again")
    assert again.status == "done" and "deleted earlier" in again.reason
    assert store.audit_record("A-again")["already_deleted"] == [
        {"id": 39, "edit": 1, "request_id": "A"}]
    assert store.database().n_samples == 40
    # IDs the caller names are its own: a deleted one inserted again on purpose
    # is present again (its tombstone goes), as before.
    store.edit(X_insert=np.full((1, 3), 0.1), y_insert=[1], insert_ids=[38])
    assert 38 in store.database().ids.tolist()


def test_submit_is_idempotent_and_tells_deleted_from_unknown(frame_store):
    store, _, _ = frame_store
    first = store.submit(["cust00001", "cust00002"], request_id="T-1")
    assert (first.status, first.n_ids, first.duplicate) == ("pending", 2, False)
    assert ISO.match(first.submitted_at) and ISO.match(first.due_at)
    # A retry (IDs in any order) is recognised and queues nothing.
    again = store.submit(["cust00002", "cust00001"], request_id="T-1")
    assert again.duplicate and again.submitted_at == first.submitted_at
    assert len(store.requests()) == 1
    with pytest.raises(RequestConflictError, match="'T-1' was submitted with other"):
        store.submit(["cust00003"], request_id="T-1")
    with pytest.raises(UnknownIDError, match=r"never deleted from it: \['nobody'\]"):
        store.submit(["cust00004", "nobody"], request_id="T-2")
    with pytest.raises(UnknownRequestError):
        store.status("T-2")                        # nothing was queued
    with pytest.raises(ValueError, match="each record ID once"):
        store.submit(["cust00004", "cust00004"], request_id="T-3")
    store.process()
    assert store.status("T-1").status == "done"
    # Served, and retried after that: still recognised, not served twice.
    assert store.submit(["cust00001", "cust00002"], request_id="T-1").duplicate
    assert len(store.log()) == 1
    # A new request naming a deleted ID is told apart from an unknown one.
    late = store.submit(["cust00001"], request_id="T-4")
    assert late.status == "done" and "deleted earlier" in late.reason
    record = store.audit_record("T-4")
    assert record["deleted_ids"] == [] and record["already_deleted"] == [
        {"id": "cust00001", "edit": 1, "request_id": "T-1"}]
    mixed = store.submit(["cust00002", "cust00005"], request_id="T-5")
    assert mixed.status == "pending"
    (served,) = store.process()
    assert served.edit == 2
    record = store.audit_record("T-5")
    assert record["deleted_ids"] == ["cust00005"]
    assert record["already_deleted"][0]["id"] == "cust00002"


def test_process_serves_queued_requests_as_one_edit_earliest_due_first(frame_store):
    store, db, _ = frame_store
    now = datetime.now(timezone.utc)
    store.submit(["cust00010"], request_id="late", due_at=now + timedelta(days=20))
    store.submit(["cust00011", "cust00012"], request_id="soon",
                 due_at=(now + timedelta(days=2)).isoformat())
    store.submit(["cust00013"], request_id="default")
    store.submit(["cust00011"], request_id="overlap")     # same ID, two requests
    assert store.status("default").due_at > store.status("late").due_at
    assert [s.request_id for s in store.requests()] == ["soon", "late", "default",
                                                        "overlap"]
    (first,) = store.process(limit=1)
    assert (first.request_id, first.status, first.edit) == ("soon", "done", 1)
    statuses = store.process()
    assert [s.request_id for s in statuses] == ["late", "default", "overlap"]
    assert all(s.status == "done" for s in statuses)
    # One edit, one certificate for the group.
    assert [s.edit for s in statuses] == [2, 2, None]
    assert len(store.log()) == 2
    assert store.log()[-1].n_deleted == 2
    assert store.database().n_samples == db.n_samples - 4
    assert store.process() == []
    assert store.audit_record("late")["edit_requests"] == ["late", "default"]
    overlap = store.audit_record("overlap")
    assert overlap["deleted_ids"] == [] and "certificate" not in overlap
    assert overlap["already_deleted"] == [
        {"id": "cust00011", "edit": 1, "request_id": "soon"}]


def test_refused_group_is_split_and_a_refused_request_fails(frame_store):
    store, db, _ = frame_store                      # max_edit_size=4
    store.submit([f"cust{i:05d}" for i in range(20, 23)], request_id="a")
    store.submit([f"cust{i:05d}" for i in range(23, 26)], request_id="b")
    store.submit([f"cust{i:05d}" for i in range(30, 35)], request_id="too-big")
    messages = []
    statuses = {s.request_id: s for s in store.process(progress=messages.append)}
    assert statuses["a"].status == statuses["b"].status == "done"
    assert statuses["a"].edit != statuses["b"].edit       # served apart
    failed = statuses["too-big"]
    assert failed.status == "failed" and "max_edit_size=4" in failed.reason
    assert any("refused" in m for m in messages)
    assert store.database().n_samples == db.n_samples - 6
    record = store.audit_record("too-big")
    assert record["status"] == "failed" and record["deleted_ids"] == []
    with pytest.raises(ValueError, match="is pending: it has no audit record"):
        store.submit(["cust00040"], request_id="c")
        store.audit_record("c")


def test_audit_record_is_standalone_and_checkable(frame_store):
    store, _, _ = frame_store
    before = hashlib.sha256(store.model_bytes()).hexdigest()
    store.submit(["cust00007", "cust00008"], request_id="gdpr-1")
    store.submit(["cust00015"], request_id="gdpr-2")
    store.process()
    record = store.audit_record("gdpr-1")
    text = json.dumps(record, allow_nan=False)           # strict JSON
    assert json.loads(text) == record
    assert MARKER not in text                            # no record content
    assert record["format"] == "skforget.audit/1" and record["status"] == "done"
    assert record["deleted_ids"] == record["named_ids"] == ["cust00007", "cust00008"]
    assert record["edit_requests"] == ["gdpr-1", "gdpr-2"]
    for key in ("submitted_at", "due_at", "started_at", "finished_at"):
        assert ISO.match(record[key]), key
    assert record["served_before_due"] is True
    assert record["model"]["sha256_before"] == before
    assert record["model"]["sha256_after"] == hashlib.sha256(
        store.model_bytes()).hexdigest()
    assert record["data_version"]["after"]["number"] == 1
    assert record["data_version"]["after"]["token"] == store.database().version.token
    assert record["records"] == {"before": 60, "after": 57, "deleted_by_edit": 3}
    assert set(record["software"]) == {"skforget", "scikit-learn", "numpy", "scipy",
                                       "python"}
    # The figures are the model's, and agree with the accounting module.
    guarantee = store.model().privacy_guarantee_
    certificate = record["certificate"]
    assert certificate["fields"] == guarantee.deletion.to_dict()
    assert certificate["delta"] == guarantee.delta
    assert certificate["relation"] == guarantee.relation == "replace"
    assert certificate["group_size"] == 1
    per_unit = certificate["per_unit"]
    assert per_unit["epsilon"] == pytest.approx(rho_to_epsilon(
        rho=per_unit["rho"], delta=guarantee.delta, method=guarantee.conversion))
    assert certificate["whole_edit"]["units_removed"] == 3
    # At the default max_lazy_records a deletion the release already
    # certifies leaves the model as it was: said in so many words.
    assert certificate["served_without_a_pass"] is guarantee.deletion.without_pass
    assert certificate["records_awaiting_a_pass"] == guarantee.deletion.n_pending
    assert certificate["adaptive"]["releases_seen"] >= 1
    assert per_unit["tightest_renyi_order"] > 1
    assert record["guarantee_after"]["epsilon"] == guarantee.epsilon
    # The other request of the edit shares the certificate, names its own IDs.
    other = store.audit_record("gdpr-2")
    assert other["certificate"] == certificate and other["deleted_ids"] == [
        "cust00015"]


def test_tombstones_hold_keyed_hashes_not_ids(frame_store):
    store, _, _ = frame_store
    store.submit(["cust00031"], request_id="r")
    store.process()
    con = store._connect()
    try:
        rows = con.all("SELECT id_hash, edit, request_id FROM tombstones")
    finally:
        con.close()
    assert len(rows) == 1 and "cust00031" not in repr(rows)
    assert re.fullmatch(r"[0-9a-f]{64}", rows[0][0])
    # forget() leaves a tombstone too, and a re-inserted ID is present again.
    store.forget(["cust00032"])
    assert store.submit(["cust00032"], request_id="s").status == "done"
    new = _people().__getitem__(0).loc[["cust00001"]].set_axis(["cust00032"])
    store.edit(X_insert=new, y_insert=[1])
    assert store.submit(["cust00032"], request_id="t").status == "pending"


def test_one_month_default_and_explicit_due_dates():
    utc = timezone.utc
    assert one_month_after(datetime(2026, 1, 31, 9, tzinfo=utc)) == datetime(
        2026, 2, 28, 9, tzinfo=utc)
    assert one_month_after(datetime(2026, 12, 15, tzinfo=utc)) == datetime(
        2027, 1, 15, tzinfo=utc)


def test_due_dates_need_a_time_zone(frame_store):
    store, _, _ = frame_store
    with pytest.raises(ValueError, match="time zone"):
        store.submit(["cust00001"], request_id="x", due_at="2026-12-01T00:00:00")
    status = store.submit(["cust00001"], request_id="x",
                          due_at="2026-12-01T01:00:00+01:00")
    assert status.due_at == "2026-12-01T00:00:00Z"
    today = datetime.now(timezone.utc)
    default = datetime.fromisoformat(
        store.submit(["cust00002"], request_id="y").due_at.replace("Z", "+00:00"))
    assert 28 <= (default - today).days <= 31


def test_records_gone_before_process_are_told_apart(frame_store):
    store, db, _ = frame_store
    store.submit(["cust00041"], request_id="forgotten-meanwhile")
    store.submit(["cust00042"], request_id="vanished")
    store.submit(["cust00043"], request_id="fine")
    store.forget(["cust00041"])                    # served directly, first
    store.forget(["cust00042"])
    con = store._connect()          # as if deleted before tombstones existed
    try:
        con.begin_write()
        con.execute("DELETE FROM tombstones WHERE edit = ?", (2,))
        con.commit()
    finally:
        con.close()
    statuses = {s.request_id: s for s in store.process()}
    meanwhile = statuses["forgotten-meanwhile"]
    assert (meanwhile.status, meanwhile.edit) == ("done", None)
    assert store.audit_record("forgotten-meanwhile")["already_deleted"] == [
        {"id": "cust00041", "edit": 1, "request_id": None}]
    vanished = statuses["vanished"]
    assert vanished.status == "failed" and "not deleted by it" in vanished.reason
    assert (statuses["fine"].status, statuses["fine"].edit) == ("done", 3)


def test_concurrent_process_calls_serve_each_request_once(store_location):
    import threading

    from _stores import small_store

    store = small_store(store_location, n=80)
    for k in range(8):
        store.submit([f"p{k}"], request_id=f"r{k}")
    errors, reported = [], []

    def run():
        try:
            reported.extend(s.request_id for s in RecordStore(store_location)
                            .process())
        except Exception as exc:          # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads)
    statuses = store.requests()
    assert all(s.status == "done" for s in statuses)
    log = store.log()
    assert sum(c.n_deleted for c in log) == 8 == 80 - store.database().n_samples
    assert sorted({s.edit for s in statuses}) == [c.index for c in log]
    # Each request is reported by the one call that finished it (a call that
    # claimed it while another served it listed it as done too: audit C6).
    assert sorted(reported) == sorted(f"r{k}" for k in range(8))


def test_output_perturbation_model_is_audited_as_a_refit(store_location):
    from skforget import OutputPerturbationClassifier

    rng = np.random.default_rng(2)
    X = rng.standard_normal((80, 3)) / 2
    db = Database(X, (X[:, 0] > 0).astype(int), ids=[f"q{i}" for i in range(80)])
    model = OutputPerturbationClassifier(classes=[0, 1], random_state=0).fit(db)
    store = RecordStore.create(store_location, db, model)
    store.submit(["q1", "q2"], request_id="op")
    (status,) = store.process()
    assert status.status == "done"
    certificate = store.audit_record("op")["certificate"]
    assert certificate["mechanism"] == "output_perturbation"
    assert certificate["retrained"] is True
    assert certificate["per_unit"]["rho"] == 0
    assert certificate["per_unit"]["tightest_renyi_order"] is None
    json.dumps(store.audit_record("op"), allow_nan=False)


def test_postgres_tests_fail_in_ci_and_skip_locally_without_a_server(monkeypatch):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "store_conftest", Path(__file__).with_name("conftest.py"))
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must test the PostgreSQL"):
        helpers._no_postgres("no server")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="not tested: no server"):
        helpers._no_postgres("no server")


def test_mixed_object_columns_keep_their_types_or_are_refused(store_location):
    X = pd.DataFrame({"a": np.linspace(-0.5, 0.5, 30), "o": [1, "x"] * 15,
                      "b": [True, False] * 15},
                     index=pd.Index([f"i{k}" for k in range(30)]))
    y = pd.Series([0, 1] * 15, index=X.index)
    db = Database(X, y)
    pipe = _pipeline().set_params(prep__transformers=[
        ("a", "passthrough", ["a"])]).fit(db)
    if store_location.startswith("postgresql"):
        # A TEXT column would return the 1 as "1": refused, nothing created.
        with pytest.raises(ValueError, match="column 'o' is stored as text in "
                                             "PostgreSQL but holds a int"):
            RecordStore.create(store_location, db, pipe)
        with pytest.raises(FileNotFoundError):
            RecordStore(store_location)
        return
    stored = RecordStore.create(store_location, db, pipe).database()
    assert stored.X["o"].tolist()[:2] == [1, "x"]
    assert stored.X["b"].dtype == bool


def test_a_ledger_refusal_fails_the_request_and_leaves_the_queue_moving(
        store_location, tmp_path):
    """A model whose ledger refuses the edit (its budget spent) raised
    out of process(): every claimed request stayed running with no reason,
    blocking the queue on every run (service audit C1). The request now fails
    with the ledger's reason, and a later one is served."""
    store, _ = _ledgered_store(store_location, tmp_path, epsilon=1.05)
    n = store.database().n_samples
    store.submit(["cust00001"], request_id="over-budget")
    (status,) = store.process()
    assert status.status == "failed" and "past its budget" in status.reason
    assert store.database().n_samples == n
    assert store.audit_record("over-budget")["deleted_ids"] == []
    # The next run serves (here: refuses, the budget is still spent) the next
    # request instead of finding the queue blocked by the first.
    store.submit(["cust00002"], request_id="next")
    (status,) = store.process()
    assert status.request_id == "next" and status.status == "failed"


def test_a_request_finished_within_the_second_after_its_due_time_is_late(
        frame_store, monkeypatch):
    """Times are kept to the second: a due date is cut down, a request's end
    rounded up, so one finished at 00.7 is never on time for a date due at
    00.2 (both were cut down: served_before_due was true; red team F6)."""
    import skforget.store._requests as requests

    store, _, _ = frame_store
    store.submit(["cust00001"], request_id="tight",
                 due_at="2026-12-01T00:00:00.200000+00:00")
    assert store.status("tight").due_at == "2026-12-01T00:00:00Z"
    monkeypatch.setattr(requests, "_now", lambda: datetime(
        2026, 12, 1, 0, 0, 0, 700000, tzinfo=timezone.utc))
    assert store.status("tight").overdue
    store.process()
    done = store.status("tight")
    assert done.finished_at == "2026-12-01T00:00:01Z" and done.late
    assert store.audit_record("tight")["served_before_due"] is False
    assert requests.iso(datetime(2026, 1, 1, 0, 0, 5, tzinfo=timezone.utc),
                        up=True) == "2026-01-01T00:00:05Z"


def test_due_dates_sort_as_times_and_name_their_field(frame_store):
    """A year under 1000 (a typo) was written unpadded by strftime ("226-12"),
    sorted after every other date and was never overdue (service audit C4)."""
    store, _, _ = frame_store
    status = store.submit(["cust00001"], request_id="typo",
                          due_at="0226-12-01T00:00:00Z")
    assert status.due_at == "0226-12-01T00:00:00Z" and status.overdue
    store.submit(["cust00002"], request_id="later", due_at="2030-01-01T00:00:00Z")
    assert [s.request_id for s in store.process(limit=1)] == ["typo"]
    # Served after its date: no longer overdue, but late, in the status as in
    # the audit record (a new user's trial saw it only in the latter).
    served = store.status("typo")
    assert served.status == "done" and not served.overdue and served.late
    assert served.to_dict()["late"] is True
    assert store.audit_record("typo")["served_before_due"] is False
    assert not store.status("later").late
    with pytest.raises(ValueError, match=r"due_at='soon' is not an ISO 8601"):
        store.submit(["cust00003"], request_id="bad", due_at="soon")
    for limit in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="limit must be a positive integer"):
            store.process(limit=limit)
    assert store.status("later").status == "pending"


def test_a_tombstone_key_kept_outside_the_store(store_location, monkeypatch):
    """With the key in the store, whoever holds the store (or a backup) can
    test any guessed ID for "deleted here" (service audit S2). A key kept
    outside leaves only a fingerprint; the store then serves requests only
    with the key, and reads statuses and audit records without it."""
    import hmac

    X, y = _people()
    db = Database(X, y)
    key = bytes(range(32))
    monkeypatch.delenv("SKFORGET_TOMBSTONE_KEY", raising=False)
    store = RecordStore.create(store_location, db, _pipeline().fit(db),
                               tombstone_key=key)
    store.submit(["cust00003"], request_id="t1")
    store.process()
    assert store._meta["tombstone_key"] is None
    con = store._connect()
    try:
        meta = dict(con.all("SELECT * FROM meta"))
        (stored,) = [row[0] for row in con.all("SELECT id_hash FROM tombstones")]
    finally:
        con.close()
    assert json.loads(meta["tombstone_key"]) is None
    assert key.hex() not in json.dumps(meta)
    assert stored == hmac.new(key, b"str:cust00003", hashlib.sha256).hexdigest()
    # Without the key: readable, but no request is hashed or served.
    plain = RecordStore(store_location)
    assert plain.status("t1").status == "done"
    assert plain.audit_record("t1")["deleted_ids"] == ["cust00003"]
    with pytest.raises(ValueError, match="keeps its tombstone key outside it"):
        plain.submit(["cust00004"], request_id="t2")
    # A wrong key is refused when the store is opened; the right one, given or
    # from the environment, answers "deleted earlier".
    with pytest.raises(ValueError, match="not the tombstone key"):
        RecordStore(store_location, tombstone_key=bytes(32))
    monkeypatch.setenv("SKFORGET_TOMBSTONE_KEY", key.hex())
    again = RecordStore(store_location)
    assert again.submit(["cust00003"], request_id="t3").status == "done"
    with pytest.raises(ValueError, match="at least 16 bytes"):
        RecordStore(store_location, tombstone_key="abcd")
    # A server that could answer no submission is refused at start.
    from skforget.store import http_app

    monkeypatch.delenv("SKFORGET_TOMBSTONE_KEY")
    with pytest.raises(ValueError, match="keeps its tombstone key outside"):
        http_app(RecordStore(store_location))


def test_a_store_failure_after_the_models_edit_records_no_release(
        store_location, tmp_path, monkeypatch):
    """The model's ledger entry was recorded by partial_unlearn, before the
    store's commit: a failure in between rolled the store back, kept the
    charge, and the retry charged again (service audit C2). The entry is now
    recorded with the store's commit (privacy-accounting.md, 20.3)."""
    from skforget.store import _store as store_module

    store, ledger = _ledgered_store(store_location, tmp_path)
    store.submit(["cust00001"], request_id="r1")

    def disk_full(*args, **kwargs):
        raise OSError("disk full while writing the log")

    with monkeypatch.context() as patch:
        patch.setattr(store_module.RecordStore, "_write_log", disk_full)
        with pytest.raises(OSError, match="disk full"):
            store.process()
        with pytest.raises(OSError, match="disk full"):
            store.forget(["cust00002"])
    assert ledger.total.n_entries == 1 and store.log() == []
    (status,) = store.process()
    assert status.status == "done"
    assert [(e.label, e.reserved) for e in ledger.entries] == [
        ("NoisyGDClassifier.fit", False),
        ("NoisyGDClassifier.partial_unlearn", False)]


def test_forget_names_an_id_deleted_earlier_and_request_ids_stay_addressable(
        frame_store):
    """forget() of an ID the store deleted said "not an ID of the database",
    as for one never known (service audit L5); a request ID ending in
    "/audit" could not be read back over HTTP (L3)."""
    from skforget.exceptions import UnlearningError

    store, _, _ = frame_store
    store.submit(["cust00004"], request_id="first")
    store.process()
    with pytest.raises(UnlearningError, match=r"'cust00004', which this store "
                       r"deleted earlier \(edit 1, request 'first'\)"):
        store.forget(["cust00004"])
    with pytest.raises(ValueError, match="may not end in '/audit'"):
        store.submit(["cust00005"], request_id="DSR-1/audit")
    assert len(store.log()) == 1


def test_a_commit_interrupted_or_failing_after_it_applied_keeps_the_release(
        store_location, tmp_path, monkeypatch):
    """An interrupt, or an error of a COMMIT the server had applied, between
    the store's commit and its mark cancelled the ledger entry of an edit the
    store holds (second reading of 5910f1b). The mark now precedes the commit:
    such a failure over-counts, never under-counts."""
    from skforget.store import _backends

    store, ledger = _ledgered_store(store_location, tmp_path)
    real = _backends.Connection.commit
    fired = []

    def commit_then_fail(self):
        real(self)
        if getattr(self, "_edit", False) and not fired:
            fired.append(True)
            raise KeyboardInterrupt

    serve = RecordStore._serve

    def marked_serve(self, con, *args, **kwargs):
        con._edit = True
        return serve(self, con, *args, **kwargs)

    monkeypatch.setattr(_backends.Connection, "commit", commit_then_fail)
    monkeypatch.setattr(RecordStore, "_serve", marked_serve)
    with pytest.raises(KeyboardInterrupt):
        store.forget(["cust00002"])
    assert len(store.log()) == 1
    assert [(e.label, e.reserved) for e in ledger.entries] == [
        ("NoisyGDClassifier.fit", False),
        ("NoisyGDClassifier.partial_unlearn", False)]


def test_a_released_warning_raised_as_an_error_comes_after_the_commit(
        frame_store, monkeypatch):
    """Section 20.3: a warning about the edited model is emitted after the
    store's commit, so an error filter cannot undo what was served: the
    request is done and recorded, and status() reads it."""
    import warnings

    from skforget._release import warn_about_release

    store, _, _ = frame_store
    original = NoisyGDClassifier.partial_unlearn

    def edit_then_warn(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        warn_about_release("about the released model", UserWarning)
        return out

    monkeypatch.setattr(NoisyGDClassifier, "partial_unlearn", edit_then_warn)
    store.submit(["cust00003"], request_id="W-1")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with pytest.raises(UserWarning, match="about the released model"):
            store.process()
    status = store.status("W-1")
    assert status.status == "done" and status.edit is not None
    assert store.audit_record("W-1")["deleted_ids"] == ["cust00003"]
    assert "cust00003" not in store.database().ids.tolist()


def test_a_models_warning_raised_as_an_error_stops_the_edit_with_a_reason(
        store_location):
    """A warning the model gives before its pass (a label set read from the
    rows; an edit of a tuned model, Section 20.3 (3)) is a gate an error
    filter may close: nothing is written, and the requests wait with the
    warning as their reason; they ran on with no reason, failing every run
    the same way (red team F4). Without the filter the next run serves them."""
    import warnings

    from skforget.exceptions import PrivacyLeakWarning

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3)) / 2
    db = Database(X, (X[:, 0] > 0).astype(int), ids=[f"p{i}" for i in range(40)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = NoisyGDClassifier(random_state=0).fit(db)   # no classes=
    store = RecordStore.create(store_location, db, model)
    store.submit(["p1"], request_id="L-1")
    store.submit(["p2"], request_id="L-2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(PrivacyLeakWarning, match="label set was read"):
            store.process()
    for request in ("L-1", "L-2"):
        status = store.status(request)
        assert status.status == "running" and status.reason.startswith(
            "stopped by a warning raised as an error (PrivacyLeakWarning)")
    assert store.database().n_samples == 40 and not store.log()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store.process()
    assert [store.status(r).status for r in ("L-1", "L-2")] == ["done", "done"]


def test_a_deletion_served_without_a_pass_says_so_in_its_audit_record(
        store_location):
    # Trial finding: the record said "done", 0 noisy steps and a statement in
    # words, but no field said the model was left as it was.
    import pandas as pd

    from skforget import EditRequest
    from skforget.store._audit import certificate_section

    rng = np.random.default_rng(0)
    n = 5000
    X = pd.DataFrame(rng.normal(size=(n, 4)) / 3, columns=list("abcd"),
                     index=[f"p{i}" for i in range(n)])
    y = pd.Series((X["a"] > 0).astype(int), index=X.index)
    db = Database(X, y)
    model = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(db)
    store = RecordStore.create(store_location, db, model)
    coef = store.model().coef_.copy()
    store.submit(["p1"], request_id="r1")
    store.process()
    cert = store.audit_record("r1")["certificate"]
    assert cert["served_without_a_pass"] is True
    assert cert["records_awaiting_a_pass"] == 1 and cert["noisy_steps"] == 0
    np.testing.assert_array_equal(store.model().coef_, coef)
    # With max_lazy_records=0 every deletion passes over the data.
    model = NoisyGDClassifier(classes=[0, 1], random_state=0, max_lazy_records=0)
    edited = model.fit(db).partial_unlearn(EditRequest(db, delete=["p1"], by="id"))
    section = certificate_section(edited.privacy_guarantee_.deletion,
                                  edited.privacy_guarantee_)
    assert section["served_without_a_pass"] is False
    assert section["records_awaiting_a_pass"] == 0


def test_an_unavailable_ledger_leaves_the_request_waiting_not_failed(
        store_location, tmp_path):
    """A ledger file gone (a share not mounted, a restored backup) failed the
    request for good, so that a person's erasure needed resubmitting; a
    locked one raised sqlite3's own error (trial findings). Both are faults
    of the machine: the request waits, with the reason, and the next
    process() serves it."""
    import os
    import sqlite3

    from skforget.store import StoreBusyError
    from skforget.store._ledger import LedgerFileError

    store, ledger = _ledgered_store(store_location, tmp_path)
    path = ledger.path
    os.rename(path, f"{path}.away")
    store.submit(["cust00001"], request_id="erase-1")
    with pytest.raises(LedgerFileError, match="cannot be opened") as info:
        store.process()
    assert isinstance(info.value, OSError)
    status = store.status("erase-1")
    assert status.status == "running" and status.reason.startswith(
        "waiting for the ledger")
    os.rename(f"{path}.away", path)
    (status,) = store.process()
    assert status.status == "done" and status.reason is None
    # A ledger another process holds past the ledger's timeout: the store's
    # own busy error, nothing recorded, the request served afterwards.
    n_entries = len(ledger.entries)
    store.submit(["cust00002"], request_id="erase-2")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    model = store.model()
    model.set_params(model__ledger=type(ledger)(path, timeout=0.05))
    try:
        with pytest.raises(StoreBusyError, match="the ledger"):
            model.partial_unlearn(EditRequest(store.database(),
                                              delete=["cust00003"], by="id"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(ledger.entries) == n_entries
    (status,) = store.process()
    assert status.request_id == "erase-2" and status.status == "done"
