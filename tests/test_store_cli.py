# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The operator's command line: submit, process, status, show, audit (--json),
and a closed pipe."""

import hashlib
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from _stores import small_store

from skforget.__main__ import main
from skforget.store import RecordStore, UnknownRequestError


@pytest.fixture
def location(store_location):
    small_store(store_location)
    return store_location


def _json(capsys, argv, code=0):
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


def test_operator_commands_with_json(location, capsys, tmp_path):
    s = ["--store", location]
    status = _json(capsys, ["submit", *s, "--request-id", "T-1", "--id", "p1",
                            "--id", "p2", "--json"])
    assert (status["status"], status["n_ids"], status["duplicate"]) == (
        "pending", 2, False)
    assert _json(capsys, ["submit", *s, "--request-id", "T-1", "--id", "p2",
                          "--id", "p1", "--json"])["duplicate"] is True
    _json(capsys, ["submit", *s, "--request-id", "T-2", "--id", "p3", "--due",
                   "2030-01-01T00:00:00Z", "--json"])
    assert main(["submit", *s, "--request-id", "T-3", "--id", "nobody"]) == 1
    assert "never deleted from it: ['nobody']" in capsys.readouterr().err
    listed = _json(capsys, ["status", *s, "--json"])
    assert [r["request_id"] for r in listed] == ["T-1", "T-2"]
    assert main(["process", *s, "--json"]) == 0
    out, err = capsys.readouterr()
    assert [r["status"] for r in json.loads(out)] == ["done", "done"]
    assert "claimed 2 request(s)" in err and "edit 1 committed" in err  # progress
    assert _json(capsys, ["status", *s, "T-2", "--json"])[0]["edit"] == 1
    assert main(["status", *s]) == 0
    assert "T-1\tdone\t2 ID(s)" in capsys.readouterr().out
    # An unknown request ID does not hide the others' status: they are
    # listed, the unknown one is named on stderr, and the exit code is 1.
    assert main(["status", *s, "T-1", "T-9", "T-2"]) == 1
    out, err = capsys.readouterr()
    assert "T-1\tdone" in out and "T-2\tdone" in out
    assert "no request 'T-9'" in err
    assert [r["request_id"] for r in _json(capsys, ["status", *s, "T-9", "T-2",
                                                    "--json"], code=1)] == ["T-2"]
    assert main(["status", *s, "T-9"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "no request 'T-9'" in err
    assert main(["status", *s, "T-1", "--only", "done"]) == 1
    assert "name requests or give --only, not both" in capsys.readouterr().err
    model_file = tmp_path / "model.pickle"
    shown = _json(capsys, ["show", *s, "--json", "--model-out", str(model_file)])
    assert (shown["records"], shown["edits"], shown["requests"]) == (
        37, 1, {"done": 2})
    record = _json(capsys, ["audit", *s, "T-1", "--json"])
    assert record["deleted_ids"] == ["p1", "p2"]
    # The auditor checks the model they were given against the record.
    assert record["model"]["sha256_after"] == hashlib.sha256(
        model_file.read_bytes()).hexdigest()
    assert main(["audit", *s, "T-9"]) == 1
    assert "error: no request 'T-9'" in capsys.readouterr().err
    # forget and show keep working, with or without --json.
    forgot = _json(capsys, ["forget", *s, "--id", "p5", "--json"])
    assert forgot["certificate"]["index"] == 2
    assert main(["show", *s]) == 0
    assert "36 records" in capsys.readouterr().out


def test_quiet_process_prints_no_progress(location, capsys):
    store = RecordStore(location)
    store.submit(["p1"], request_id="ok")
    assert main(["process", "--store", location, "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "ok\tdone" in out and err == ""


@pytest.mark.parametrize("command", [["status"], ["audit", "T-1"], ["show"]])
def test_closed_pipe_exits_0_without_traceback(tmp_path, command):
    path = tmp_path / "s.sqlite"
    store = small_store(path, n=200, string_ids=False)
    for k in range(5):
        store.submit([k], request_id=f"T-{k}")
    store.process()
    # The reader is gone before the command writes (``... | head -0``).
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run([sys.executable, "-m", "skforget", *command[:1],
                                 "--store", str(path), *command[1:]], stdout=write,
                                stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert result.returncode == 0 and result.stderr == ""


def test_an_unreachable_database_is_an_error_not_a_traceback(tmp_path, capsys):
    pytest.importorskip("psycopg")
    url = f"postgresql://svc:hunter2@/nodb?host={tmp_path}&port=1"
    assert main(["status", "--store", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cannot connect to postgresql://svc:***@/nodb")
    assert "hunter2" not in err


def test_process_with_nothing_to_serve_says_so(tmp_path, capsys):
    from _stores import small_store

    from skforget.__main__ import main as cli

    store = small_store(str(tmp_path / "s.sqlite"))
    assert cli(["process", "--store", str(store.path)]) == 0
    out = capsys.readouterr()
    assert "no request finished by this run" in out.out
    assert "no request queued" in out.err


def test_a_locked_store_is_an_error_line_not_a_traceback(tmp_path, capsys,
                                                         monkeypatch):
    # A new user's trial: SQLite's "database is locked" printed a traceback.
    store = small_store(str(tmp_path / "s.sqlite"))
    holder = RecordStore(store.path)._backend.connect()
    holder.begin_write()
    monkeypatch.setattr("skforget.store._backends.LOCK_TIMEOUT", 0.2)
    try:
        assert main(["submit", "--store", str(store.path), "--request-id", "r1",
                     "--id", "p1"]) == 1
    finally:
        holder.rollback()
        holder.close()
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "locked by another writer" in err

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(RecordStore, "process", locked)
    assert main(["process", "--store", str(store.path)]) == 1
    assert capsys.readouterr().err == "error: database is locked\n"


def test_the_listing_marks_a_request_served_after_its_date():
    from skforget.store._cli import _status_line
    from skforget.store._requests import RequestStatus

    late = RequestStatus("DSR-1", "done", 2, "2026-01-01T00:00:00Z",
                         "2026-02-01T00:00:00Z", finished_at="2026-02-03T00:00:00Z")
    on_time = RequestStatus("DSR-2", "done", 2, "2026-01-01T00:00:00Z",
                            "2026-02-01T00:00:00Z",
                            finished_at="2026-01-15T00:00:00Z")
    assert "LATE (due 2026-02-01T00:00:00Z)" in _status_line(late)
    assert "LATE" not in _status_line(on_time)


def test_audit_records_export_in_order_within_a_window(location, capsys,
                                                       monkeypatch):
    """The bulk export a privacy team files monthly: every finished request's
    record, in the order they were finished, within a window, as JSON Lines
    on the command line; pending requests have none."""
    from datetime import datetime, timezone

    import skforget.store._requests as requests

    def at(day):
        moment = datetime(2026, 11, day, 12, tzinfo=timezone.utc)
        monkeypatch.setattr(requests, "_now", lambda: moment)

    store = RecordStore(location)
    for day, (request_id, ids) in zip((1, 2, 3), [("A", ["p1"]), ("B", ["p2"]),
                                                  ("C", ["p1"])], strict=True):
        at(day)
        store.submit(ids, request_id=request_id)   # C: p1 deleted already
        store.process()
    at(4)
    store.submit(["p3"], request_id="pending")
    every = store.audit_records()
    assert [r["request_id"] for r in every] == ["A", "B", "C"]
    assert every[0] == store.audit_record("A")
    since = store.audit_records(since="2026-11-02T00:00:00+00:00")
    assert [r["request_id"] for r in since] == ["B", "C"]
    window = store.audit_records(since=datetime(2026, 11, 1, tzinfo=timezone.utc),
                                 until="2026-11-02T12:00:00Z")
    assert [r["request_id"] for r in window] == ["A"]
    with pytest.raises(ValueError, match="since must carry its time zone"):
        store.audit_records(since=datetime(2026, 11, 1))
    with pytest.raises(ValueError, match="is after until"):
        store.audit_records(since="2026-11-03T00:00:00Z", until="2026-11-02T00:00:00Z")
    s = ["--store", location]
    assert main(["audit", *s, "--since", "2026-11-02T00:00:00Z"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == since
    assert main(["audit", *s, "A", "--since", "2026-11-02T00:00:00Z"]) == 1
    assert "name no request" in capsys.readouterr().err
    assert main(["audit", *s, "--until", "yesterday"]) == 1
    assert "until='yesterday' is not an ISO 8601 time" in capsys.readouterr().err
    # Within one second (times are to the second), the edits' order, not the
    # submissions': the model hashes chain (trial finding).
    at(5)
    store.process()   # the pending one
    store.submit(["p4"], request_id="E-submitted-first", due_at="2026-12-20T00:00:00Z")
    store.submit(["p5"], request_id="E-due-first", due_at="2026-12-10T00:00:00Z")
    store.process(limit=1)
    store.process()
    last = store.audit_records(since="2026-11-05T00:00:00Z")
    assert [r["request_id"] for r in last][-2:] == ["E-due-first", "E-submitted-first"]
    assert last[-1]["model"]["sha256_before"] == last[-2]["model"]["sha256_after"]


def test_warnings_read_as_one_line_and_overdue_requests_are_listed(
        location, capsys, monkeypatch):
    # Trial findings: under ``python -m`` a warning's location was runpy's
    # ("<frozen runpy>:88: CoarseRangeWarning: ..."), useless in a cron log;
    # and status could not list the overdue requests.
    import warnings as _warnings

    from skforget.exceptions import CoarseRangeWarning
    from skforget.store import _cli

    def show(store, args):
        _warnings.warn("a released range is one bin", CoarseRangeWarning)
        return 0

    monkeypatch.setitem(_cli.COMMANDS, "show", show)
    s = ["--store", location]
    assert main(["show", *s]) == 0
    err = capsys.readouterr().err
    assert err == "warning (CoarseRangeWarning): a released range is one bin\n"
    monkeypatch.undo()
    store = RecordStore(location)
    store.submit(["p1"], request_id="old", due_at="2020-01-01T00:00:00Z")
    store.submit(["p2"], request_id="new", due_at="2999-01-01T00:00:00Z")
    listed = _json(capsys, ["status", *s, "--only", "overdue", "--json"])
    assert [r["request_id"] for r in listed] == ["old"]
    assert main(["process", *s, "--quiet"]) == 0
    capsys.readouterr()
    listed = _json(capsys, ["status", *s, "--only", "late", "--json"])
    assert [r["request_id"] for r in listed] == ["old"]
    assert _json(capsys, ["status", *s, "--only", "overdue", "--json"]) == []


def test_a_retention_purge_after_the_export(location, capsys, monkeypatch):
    """The guide told a team to drop old requests from the table themselves
    (trial finding): purge_requests deletes the finished requests before a
    time (their named IDs and audit records), after they were exported;
    pending ones stay, and the tombstones keep answering."""
    from datetime import datetime, timezone

    import skforget.store._requests as requests

    def at(day):
        moment = datetime(2026, 11, day, 12, tzinfo=timezone.utc)
        monkeypatch.setattr(requests, "_now", lambda: moment)

    store = RecordStore(location)
    at(1)
    store.submit(["p1"], request_id="A")
    store.process()
    at(3)
    store.submit(["p2"], request_id="B")
    store.process()
    store.submit(["p3"], request_id="pending")
    exported = store.audit_records(until="2026-11-02T00:00:00Z")
    assert [r["request_id"] for r in exported] == ["A"]
    s = ["--store", location]
    assert _json(capsys, ["purge", *s, "--before", "2026-11-02T00:00:00Z",
                          "--json"]) == {"purged": 1,
                                         "before": "2026-11-02T00:00:00Z"}
    assert [r.request_id for r in store.requests()] == ["B", "pending"]
    with pytest.raises(UnknownRequestError):
        store.status("A")
    if not location.startswith("postgresql"):
        # The named ID is gone from the file (SQLite overwrites freed pages).
        with open(location, "rb") as f:
            assert b'"p1"' not in f.read()
    # The tombstone still answers: p1 was deleted earlier.
    again = store.submit(["p1"], request_id="A-again")
    assert again.status == "done" and "deleted earlier" in again.reason
    assert store.purge_requests(before="2026-11-02T00:00:00Z") == 0
    with pytest.raises(ValueError, match="before must carry its time zone"):
        store.purge_requests(before=datetime(2026, 11, 2))
    assert main(["purge", *s, "--before", "tomorrow"]) == 1
    assert "before='tomorrow' is not an ISO 8601 time" in capsys.readouterr().err


def test_a_warning_raised_as_an_error_is_one_line_and_the_request_waits(
        tmp_path, capsys):
    # python -W error -m skforget process: a warning the model gives before
    # its pass stops the edit (the operator's filter), said in one line (it
    # was a traceback), and the request waits with it as its reason (it
    # stayed running with none).
    import warnings

    import numpy as np

    from skforget import Database, NoisyGDClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3)) / 2
    db = Database(X, (X[:, 0] > 0).astype(int), ids=[f"p{i}" for i in range(40)])
    path = str(tmp_path / "s.sqlite")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        RecordStore.create(path, db, NoisyGDClassifier(random_state=0).fit(db))
    assert main(["submit", "--store", path, "--request-id", "R1", "--id", "p1"]) == 0
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["process", "--store", path]) == 1
    err = capsys.readouterr().err
    assert "warning (PrivacyLeakWarning): This model's label set" in err
    assert "Traceback" not in err
    status = RecordStore(path).status("R1")
    assert status.status == "running" and "PrivacyLeakWarning" in status.reason


def test_a_file_that_is_not_a_database_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("garbage, not SQLite\n" * 20)
    assert main(["status", "--store", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: not a skforget record store") and \
        "Traceback" not in err
    with pytest.raises(ValueError, match="not a skforget record store"):
        RecordStore(bad)
