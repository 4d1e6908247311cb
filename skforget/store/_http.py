# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""An HTTP entry point for a request tool's erasure webhook (plain ASGI).

Four routes, JSON in and out:

* ``POST /requests`` with ``{"request_id": ..., "ids": [...], "due_at": ...}``
  (``due_at`` optional) queues a request: 202, or 200 when the same request was
  submitted before (``"duplicate": true``); 409 when the request ID was used
  with other IDs; 422 with ``"unknown"`` when an ID is neither in the store
  nor deleted from it.
* ``GET /requests/{request_id}``: the request's status (404 if unknown).
* ``GET /requests/{request_id}/audit``: its audit record once done or failed
  (409 before that).
* ``GET /audit?since=...&until=...``: the audit records of every request
  finished in that window (both optional, ISO 8601 with an offset), in the
  order they were finished (``RecordStore.audit_records``).

Requests are served by ``python -m skforget process`` (or
:meth:`RecordStore.process`), not by the web process. With a token, every
request must carry ``Authorization: Bearer <token>`` (401 otherwise). Bodies
over ``max_body`` bytes are refused (413). No dependency beyond a server:
``pip install 'skforget[http]'`` installs uvicorn.
"""

import asyncio
import copy
import hmac
import json
import logging
import urllib.parse

from skforget.store._backends import is_busy
from skforget.store._requests import (
    RequestConflictError,
    UnknownIDError,
    UnknownRequestError,
)

LOOPBACK = ("127.0.0.1", "::1", "localhost")


class _HTTPError(Exception):
    def __init__(self, code, message, **extra):
        super().__init__(message)
        self.code, self.body = code, {"error": message, **extra}


def _authorised(scope, token):
    if token is None:
        return True
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return hmac.compare_digest(value, f"Bearer {token}".encode())
    return False


async def _read_body(receive, max_body):
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _HTTPError(400, "the client disconnected")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_body:
            raise _HTTPError(413, f"the body is over {max_body} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _waiting_at_most(store, seconds):
    """The store as the server uses it: a writer waits at most ``seconds`` for
    another's write lock, then the client gets 503 (the server's threads would
    otherwise all wait behind one edit, reads included)."""
    view = copy.copy(store)
    view._backend = copy.copy(store._backend)
    view._backend.lock_timeout = float(seconds)
    return view


def _submit(store, body):
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):   # RecursionError: nested too deeply
        raise _HTTPError(400, "the body is not JSON (or is nested too deeply)") \
            from None
    if not isinstance(payload, dict) or not isinstance(payload.get("ids"), list):
        raise _HTTPError(400, 'expected {"request_id": "...", "ids": [...]} '
                              '(and optionally "due_at")')
    unknown = sorted(set(payload) - {"request_id", "ids", "due_at"})
    if unknown:
        # A misspelt "due_at" would otherwise queue the request with the
        # default due date, silently.
        raise _HTTPError(400, f"unknown field(s) {', '.join(map(repr, unknown))}: "
                              'expected "request_id", "ids" and optionally "due_at"')
    try:
        status = store.submit(payload["ids"], request_id=payload.get("request_id"),
                              due_at=payload.get("due_at"))
    except UnknownIDError as exc:
        raise _HTTPError(422, str(exc), unknown=exc.unknown) from None
    except RequestConflictError as exc:
        raise _HTTPError(409, str(exc)) from None
    except (ValueError, TypeError) as exc:
        raise _HTTPError(400, str(exc)) from None
    return (200 if status.duplicate else 202), status.to_dict()


def _get(store, path):
    rest = path[len("/requests/"):]
    audit = rest.endswith("/audit")
    request_id = rest[:-len("/audit")] if audit else rest
    try:
        if not audit:
            return 200, store.status(request_id).to_dict()
        status = store.status(request_id)
        if status.status not in ("done", "failed"):
            raise _HTTPError(409, f"request {request_id!r} is {status.status}: no "
                                  "audit record yet", status=status.status)
        return 200, store.audit_record(request_id)
    except UnknownRequestError as exc:
        raise _HTTPError(404, exc.args[0]) from None


def _export(store, query_string):
    try:
        query = urllib.parse.parse_qs(query_string.decode("ascii"),
                                      strict_parsing=bool(query_string))
    except (UnicodeDecodeError, ValueError):
        raise _HTTPError(400, "the query must be since=...&until=...") from None
    unknown = sorted(set(query) - {"since", "until"})
    if unknown or any(len(values) > 1 for values in query.values()):
        raise _HTTPError(400, f"the query takes since and until once each, got "
                              f"{sorted(query)}")
    try:
        return 200, store.audit_records(**{k: v[0] for k, v in query.items()})
    except (ValueError, TypeError) as exc:
        raise _HTTPError(400, str(exc)) from None


#: Shortest bearer token accepted (characters).
MIN_TOKEN_LENGTH = 16


def _check_token(token):
    """Refuse a token that does not protect: an empty one (an exported but
    unset ``SKFORGET_HTTP_TOKEN``) let a header ``Authorization: Bearer ``
    read every audit record on a public interface."""
    if token is None:
        return
    if not isinstance(token, str) or len(token) < MIN_TOKEN_LENGTH or any(
            c.isspace() or not c.isprintable() for c in token):
        raise ValueError(
            f"the HTTP token must be a string of at least {MIN_TOKEN_LENGTH} "
            "characters without spaces or control characters (an empty "
            "SKFORGET_HTTP_TOKEN is a missing secret, not a token); make one with "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'.")


def http_app(store, *, token=None, max_body=65536, lock_timeout=5.0):
    """An ASGI application serving a store's request queue over HTTP.

    Parameters
    ----------
    store : RecordStore
    token : str, default=None
        The bearer token every request must carry: at least 16 characters,
        no spaces or control characters (e.g. ``secrets.token_urlsafe(32)``).
        None: no authentication (for a server reachable from loopback only).
    max_body : int, default=65536
        Largest request body accepted, in bytes.
    lock_timeout : float, default=5.0
        Seconds a submission waits for the store's write lock, which an edit
        (``process``) holds while it runs; then the client gets 503 with
        ``Retry-After`` and nothing is written.

    Returns
    -------
    app : callable
        ``app(scope, receive, send)``, for any ASGI server (uvicorn, ...).
    """
    # A store whose tombstone key is kept outside it and was opened without
    # the key could answer no submission: a server misconfiguration, refused
    # here rather than answered to clients as their error.
    store._tombstone_key()
    _check_token(token)
    if not (isinstance(lock_timeout, (int, float)) and 0 < lock_timeout < 1e6):
        raise ValueError(f"lock_timeout={lock_timeout!r} must be a positive number "
                         "of seconds (below 1e6).")
    store = _waiting_at_most(store, lock_timeout)

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        try:
            if not _authorised(scope, token):
                raise _HTTPError(401, "a valid bearer token is required")
            if path == "/requests":
                if method != "POST":
                    raise _HTTPError(405, "POST a request here")
                body = await _read_body(receive, max_body)
                status, result = await asyncio.to_thread(_submit, store, body)
            elif path == "/audit":
                if method != "GET":
                    raise _HTTPError(405, "GET the audit records here")
                status, result = await asyncio.to_thread(
                    _export, store, scope.get("query_string", b""))
            elif path.startswith("/requests/") and len(path) > len("/requests/"):
                if method != "GET":
                    raise _HTTPError(405, "GET a request's status or audit record")
                status, result = await asyncio.to_thread(_get, store, path)
            else:
                raise _HTTPError(404, "routes: POST /requests, GET "
                                      "/requests/{id}, GET /requests/{id}/audit, "
                                      "GET /audit?since=...&until=...")
        except _HTTPError as exc:
            status, result = exc.code, exc.body
        except Exception as exc:
            if is_busy(exc):
                # Another process held the store's write lock past the timeout:
                # calls are idempotent and may be retried (service guide).
                status, result = 503, {"error": "the store is busy (locked by "
                                                "another process); retry"}
            else:
                # No detail in the response: a message could name a store's
                # internals.
                logging.getLogger(__name__).exception("internal error: %s %s",
                                                      method, path)
                status, result = 500, {"error": "internal error; see the server's "
                                                "log"}
        payload = json.dumps(result, sort_keys=True).encode()
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(payload)).encode())]
        if status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        if status == 503:
            headers.append((b"retry-after", b"5"))
        await send({"type": "http.response.start", "status": status,
                    "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    return app


def serve(store, *, host="127.0.0.1", port=8000, token=None):
    """Run :func:`http_app` under uvicorn (``python -m skforget serve``)."""
    try:
        import uvicorn
    except ImportError:
        raise ImportError("the HTTP entry point needs a server: pip install "
                          "'skforget[http]'") from None
    if token is None and host not in LOOPBACK:
        raise ValueError(f"refusing to serve on {host} without a token: set "
                         "SKFORGET_HTTP_TOKEN, or serve on 127.0.0.1 only.")
    uvicorn.run(http_app(store, token=token), host=host, port=port,
                access_log=False, log_level="warning")
