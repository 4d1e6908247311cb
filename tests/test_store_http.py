# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The HTTP entry point, against a real server (uvicorn) on 127.0.0.1."""

import json
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from _stores import small_store

from skforget.store import UnknownRequestError, http_app

uvicorn = pytest.importorskip("uvicorn")

TOKEN = "s3cret-token-0123456"


@pytest.fixture
def server(store_location):
    store = small_store(store_location)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(http_app(store, token=TOKEN, max_body=4096),
                            log_level="warning", access_log=False)
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]},
                              daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "no server"
        time.sleep(0.05)
    yield store, f"http://127.0.0.1:{sock.getsockname()[1]}"
    srv.should_exit = True
    thread.join(timeout=30)
    assert not thread.is_alive()
    sock.close()


def _call(base, path, body=None, token=TOKEN, raw=None):
    data = raw if raw is not None else (None if body is None
                                        else json.dumps(body).encode())
    request = urllib.request.Request(base + path, data=data,
                                     method="GET" if data is None else "POST")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_webhook_submits_polls_and_reads_the_audit_record(server):
    store, base = server
    code, status = _call(base, "/requests", {"request_id": "DSR-1",
                                             "ids": ["p1", "p2"]})
    assert code == 202 and status["status"] == "pending"
    code, status = _call(base, "/requests", {"request_id": "DSR-1",
                                             "ids": ["p2", "p1"]})
    assert code == 200 and status["duplicate"] is True
    assert _call(base, "/requests", {"request_id": "DSR-1", "ids": ["p3"]})[0] == 409
    code, body = _call(base, "/requests", {"request_id": "DSR-2",
                                           "ids": ["nobody"]})
    assert code == 422 and body["unknown"] == ["nobody"]
    assert _call(base, "/requests/DSR-1")[1]["status"] == "pending"
    code, body = _call(base, "/requests/DSR-1/audit")
    assert code == 409 and body["status"] == "pending"
    store.process()                              # the operator's cron job
    assert _call(base, "/requests/DSR-1")[1]["status"] == "done"
    code, record = _call(base, "/requests/DSR-1/audit")
    assert code == 200 and record == store.audit_record("DSR-1")
    assert record["deleted_ids"] == ["p1", "p2"]
    assert _call(base, "/requests/DSR-9")[0] == 404


def test_webhook_refuses_bad_requests(server):
    _, base = server
    assert _call(base, "/requests/DSR-1", token=None)[0] == 401
    assert _call(base, "/requests/DSR-1", token="wrong")[0] == 401
    assert _call(base, "/requests", raw=b"not json")[0] == 400
    assert _call(base, "/requests", {"ids": "p1"})[0] == 400
    assert _call(base, "/requests", raw=b"x" * 5000)[0] == 413
    assert _call(base, "/elsewhere")[0] == 404
    # A misspelt "due_at" queued the request with the default date, silently.
    code, body = _call(base, "/requests", {"request_id": "DSR-2", "ids": ["p1"],
                                           "due": "2026-12-01T00:00:00Z"})
    assert code == 400 and "unknown field(s) 'due'" in body["error"]
    assert _call(base, "/requests/DSR-2")[0] == 404
    # Inputs that reached the database or the JSON parser's recursion limit
    # and answered 500 (service audit L1) are named with a 400.
    assert _call(base, "/requests", raw=b"[" * 2000 + b"]" * 2000)[0] == 400
    code, body = _call(base, "/requests", {"request_id": "DSR-3", "ids": ["p\x001"]})
    assert code == 400 and "NUL" in body["error"]
    assert _call(base, "/requests/DSR-3")[0] == 404


def test_a_busy_store_answers_503_with_retry_after(tmp_path, monkeypatch):
    """SQLite's "database is locked" (another process serving an edit past the
    timeout) answered a bare 500, though the guide calls it retryable."""
    import asyncio
    import sqlite3

    store = small_store(str(tmp_path / "s.sqlite"))

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store, "submit", locked)
    app = http_app(store)
    body = json.dumps({"request_id": "DSR-1", "ids": ["p1"]}).encode()
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app({"type": "http", "method": "POST", "path": "/requests",
                     "headers": []}, receive, send))
    start, reply = sent
    assert start["status"] == 503 and (b"retry-after", b"5") in start["headers"]
    assert "busy" in json.loads(reply["body"])["error"]


def _post(app, body):
    import asyncio

    sent = []

    async def receive():
        return {"type": "http.request", "body": json.dumps(body).encode(),
                "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app({"type": "http", "method": "POST", "path": "/requests",
                     "headers": []}, receive, send))
    start, reply = sent
    return start["status"], dict(start["headers"]), json.loads(reply["body"])


def test_a_submission_behind_an_edit_waits_at_most_its_lock_timeout(store_location):
    """A new user's trial: on PostgreSQL a submission waited without limit
    while another process held the write lock (as process() does for a whole
    edit), and waiting submissions took every server thread, reads too. It
    now waits at most lock_timeout on both backends, then gets 503 with
    Retry-After, and nothing is written."""
    store = small_store(store_location)
    app = http_app(store, lock_timeout=0.3)
    holder = store._backend.connect()
    holder.begin_write()   # another writer, mid-edit
    try:
        start = time.monotonic()
        code, headers, body = _post(app, {"request_id": "DSR-1", "ids": ["p1"]})
        assert code == 503 and headers[b"retry-after"] == b"5", body
        assert "busy" in body["error"] and time.monotonic() - start < 10
    finally:
        holder.rollback()
        holder.close()
    with pytest.raises(UnknownRequestError):
        store.status("DSR-1")   # nothing was queued
    assert _post(app, {"request_id": "DSR-1", "ids": ["p1"]})[0] == 202
    # The user's store keeps its own timeout: the server waits on a copy.
    assert store._backend.lock_timeout == 60.0
    for bad in (0, -1.0, float("nan"), "5"):
        with pytest.raises(ValueError, match="lock_timeout"):
            http_app(store, lock_timeout=bad)


def test_serve_command_refuses_a_public_host_without_token(tmp_path, capsys,
                                                          monkeypatch):
    from skforget.__main__ import main

    small_store(tmp_path / "s.sqlite")
    monkeypatch.delenv("SKFORGET_HTTP_TOKEN", raising=False)
    assert main(["serve", "--store", str(tmp_path / "s.sqlite"), "--host",
                 "0.0.0.0"]) == 1
    assert "without a token" in capsys.readouterr().err


@pytest.mark.parametrize("token", ["", "   ", "short-token", "a token with spaces",
                                   "tab\tinside-a-long-token", 12345678901234567])
def test_a_token_that_does_not_protect_is_refused(tmp_path, capsys, monkeypatch,
                                                  token):
    # An exported but empty SKFORGET_HTTP_TOKEN served on 0.0.0.0 and let
    # "Authorization: Bearer " read every audit record.
    from skforget.__main__ import main

    store = small_store(tmp_path / "s.sqlite")
    with pytest.raises(ValueError, match="at least 16 characters"):
        http_app(store, token=token)
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: pytest.fail("served"))
    if isinstance(token, str):
        monkeypatch.setenv("SKFORGET_HTTP_TOKEN", token)
        assert main(["serve", "--store", str(tmp_path / "s.sqlite"), "--host",
                     "0.0.0.0"]) == 1
        assert "at least 16 characters" in capsys.readouterr().err


def test_the_audit_records_of_a_window_in_one_call(server):
    """A request tool's monthly pull: every finished request's record, in
    order, with the window's bounds checked as a due date is."""
    store, base = server
    for request_id, ids in [("E-1", ["p1"]), ("E-2", ["p2"])]:
        assert _call(base, "/requests", {"request_id": request_id, "ids": ids})[0] \
            == 202
        store.process()
    _call(base, "/requests", {"request_id": "E-3", "ids": ["p3"]})  # pending
    code, records = _call(base, "/audit")
    assert code == 200 and records == store.audit_records()
    assert [r["request_id"] for r in records] == ["E-1", "E-2"]
    code, records = _call(base, "/audit?since=2999-01-01T00:00:00%2B00:00")
    assert code == 200 and records == []
    code, body = _call(base, "/audit?since=2026-01-01")
    assert code == 400 and "since must carry its time zone" in body["error"]
    assert _call(base, "/audit?from=2026-01-01T00:00:00Z")[0] == 400
    assert _call(base, "/audit", token="wrong")[0] == 401
    assert _call(base, "/audit", body={})[0] == 405
