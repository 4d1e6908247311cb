# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The operator's command line: ``python -m skforget submit|process|status|show|
audit|forget|serve``. Results go to stdout (``--json``: one JSON document),
progress and errors to stderr."""

import json
import os
import sqlite3
import sys
import time
import warnings

from skforget.store._backends import is_busy
from skforget.store._requests import UnknownRequestError
from skforget.store._store import RecordStore

STORE_HELP = "the store: a SQLite file or a postgresql:// URL"


def add_commands(sub):
    """Add the store commands to the ``python -m skforget`` command line."""

    def command(name, help_text):
        parser = sub.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("--store", required=True, help=STORE_HELP)
        if name != "serve":
            parser.add_argument("--json", action="store_true",
                                help="print one JSON document")
        return parser

    run = command("forget", "delete records by ID now, in one transaction")
    run.add_argument("--id", action="append", required=True, dest="ids",
                     metavar="ID", help="ID of a record to delete (repeat for "
                                        "several, served as one request)")
    show = command("show", "summarise a store: records, version, requests, "
                           "guarantee")
    show.add_argument("--model-out", metavar="FILE",
                      help="also write the stored model's bytes (what an audit "
                           "record's sha256_after hashes) to FILE")
    submit = command("submit", "queue a deletion request (idempotent on retry)")
    submit.add_argument("--request-id", required=True,
                        help="the request's ID in your request tool")
    submit.add_argument("--id", action="append", required=True, dest="ids",
                        metavar="ID", help="ID of a record to delete (repeat)")
    submit.add_argument("--due", metavar="ISO8601",
                        help="due date with its time zone (default: one month "
                             "from now, GDPR Art. 12(3))")
    process = command("process", "serve the queued requests as one edit, "
                                 "earliest due first")
    process.add_argument("--limit", type=int, metavar="N",
                         help="serve at most N requests")
    process.add_argument("--quiet", action="store_true",
                         help="no progress messages on stderr")
    status = command("status", "the status of requests (all when none is named)")
    status.add_argument("request_ids", nargs="*", metavar="REQUEST_ID")
    status.add_argument("--only", choices=["pending", "running", "done", "failed",
                                           "overdue", "late"],
                        help="list only the requests with this status")
    audit = command("audit", "print a request's audit record (JSON), or, with no "
                             "request named, every one finished (JSON Lines)")
    audit.add_argument("request_id", metavar="REQUEST_ID", nargs="?")
    audit.add_argument("--since", metavar="ISO8601",
                       help="with no request named: those finished at or after")
    audit.add_argument("--until", metavar="ISO8601",
                       help="with no request named: those finished before")
    purge = command("purge", "delete the requests finished before a time (their "
                             "named IDs and audit records): export them first")
    purge.add_argument("--before", metavar="ISO8601", required=True)
    serve = command("serve", "run the HTTP entry point (needs skforget[http]); "
                             "the bearer token is read from "
                             "$SKFORGET_HTTP_TOKEN")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)


def _emit(args, data, text):
    if args.json:
        print(json.dumps(data, sort_keys=True))
    else:
        print(text)


def _status_line(s):
    due = ("OVERDUE" if s.overdue else f"LATE (due {s.due_at})" if s.late
           else f"due {s.due_at}")
    extra = f" edit {s.edit}" if s.edit is not None else ""
    reason = f" ({s.reason})" if s.reason else ""
    return f"{s.request_id}\t{s.status}\t{s.n_ids} ID(s)\t{due}{extra}{reason}"


def _forget(store, args):
    certificate = store.forget([store.parse_id(text) for text in args.ids])
    guarantee = store.model().privacy_guarantee_
    _emit(args, {"certificate": certificate.to_dict(),
                 "guarantee": guarantee.to_dict()},
          f"Forgot {len(args.ids)} record(s) in {store.location}.\n{certificate}\n"
          f"{guarantee}")


def _show(store, args):
    database = store.database()
    guarantee = store.model().privacy_guarantee_
    counts = {}
    for s in store.requests():
        counts[s.status] = counts.get(s.status, 0) + 1
    if args.model_out:
        with open(args.model_out, "wb") as f:
            f.write(store.model_bytes())
    queue = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"
    _emit(args, {"location": store.location, "backend": store.backend,
                 "records": database.n_samples,
                 "version": {"number": database.version.number,
                             "token": database.version.token},
                 "edits": len(store.log()), "requests": counts,
                 "guarantee": guarantee.to_dict()},
          f"{store.location}: {database.n_samples} records, {database.version}, "
          f"{len(store.log())} edit(s) served; requests: {queue}.\n{guarantee}")


def _submit(store, args):
    status = store.submit([store.parse_id(text) for text in args.ids],
                          request_id=args.request_id, due_at=args.due)
    note = " (already submitted: recognised, not queued again)" \
        if status.duplicate else ""
    _emit(args, status.to_dict(), _status_line(status) + note)


def _process(store, args):
    start = time.perf_counter()

    def progress(message):
        if not args.quiet:
            print(f"[{time.perf_counter() - start:6.1f} s] {message}", file=sys.stderr,
                  flush=True)

    statuses = store.process(limit=args.limit, progress=progress)
    _emit(args, [s.to_dict() for s in statuses],
          "\n".join(map(_status_line, statuses))
          or "no request finished by this run (none was queued, or another run "
             "served the ones it claimed)")
    return 1 if any(s.status == "failed" for s in statuses) else 0


def _status(store, args):
    unknown = []
    if args.request_ids:
        if args.only:
            raise ValueError("--only lists the requests with a status; name "
                             "requests or give --only, not both.")
        statuses = []
        # One unknown ID does not hide the others' status; it is reported
        # after them, and the exit code says so.
        for r in args.request_ids:
            try:
                statuses.append(store.status(r))
            except UnknownRequestError as exc:
                unknown.append(exc.args[0])
    elif args.only in ("overdue", "late"):
        # Not done and past due; done or failed after it (RequestStatus).
        statuses = [s for s in store.requests() if getattr(s, args.only)]
    else:
        statuses = store.requests(args.only)
    if statuses or not unknown:
        _emit(args, [s.to_dict() for s in statuses],
              "\n".join(map(_status_line, statuses)) or "no request")
    for message in unknown:
        print(f"error: {message}", file=sys.stderr)
    return 1 if unknown else 0


def _audit_cmd(store, args):
    if args.request_id is None:
        # One record per line (JSON Lines): a month's export for a request
        # tool or an archive, streamable and appendable.
        for record in store.audit_records(since=args.since, until=args.until):
            print(json.dumps(record, sort_keys=True))
        return
    if args.since is not None or args.until is not None:
        raise ValueError("--since and --until select among all requests: name "
                         "no request with them.")
    record = store.audit_record(args.request_id)
    print(json.dumps(record, sort_keys=True, indent=None if args.json else 2))


def _serve(store, args):
    from skforget.store._http import serve

    serve(store, host=args.host, port=args.port,
          token=os.environ.get("SKFORGET_HTTP_TOKEN"))


def _purge(store, args):
    n = store.purge_requests(before=args.before)
    _emit(args, {"purged": n, "before": args.before},
          f"purged {n} request(s) finished before {args.before}")


COMMANDS = {"forget": _forget, "show": _show, "submit": _submit,
            "purge": _purge,
            "process": _process, "status": _status, "audit": _audit_cmd,
            "serve": _serve}


def _show_warning(message, category, filename, lineno, file=None, line=None):
    # A warning's location is runpy's under ``python -m``: a cron log wants
    # what it says, on one line.
    print(f"warning ({category.__name__}): {message}", file=sys.stderr)


def run_command(args):
    """Run a store command parsed by :func:`add_commands`; returns the exit code."""
    try:
        store = RecordStore(args.store)
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return COMMANDS[args.command](store, args) or 0
    except Warning as exc:
        # A warning raised as an error (python -W error), in one line: after
        # the commit (the requests are done and recorded) or before the pass
        # (the edit stopped, its requests waiting with it as their reason).
        print(f"warning ({type(exc).__name__}): {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError, TypeError, ImportError, UnknownRequestError,
            sqlite3.OperationalError) as exc:
        if isinstance(exc, BrokenPipeError) or (
                isinstance(exc, sqlite3.OperationalError) and not is_busy(exc)):
            raise
        # sqlite3's "database is locked" met at a commit (a reader held the
        # file past the timeout): retryable, said in one line (the write lock
        # itself is a StoreBusyError, an OSError).
        # UnlearningError is a ValueError: an unknown ID, a refused edit.
        message = exc.args[0] if isinstance(exc, UnknownRequestError) else exc
        print(f"error: {message}", file=sys.stderr)
        return 1
