# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Deletion requests: a queue with due dates, served as one edit, audited.

A request moves through ``pending`` (queued by :meth:`RecordStore.submit`),
``running`` (claimed by :meth:`RecordStore.process`) and ``done`` or
``failed``. Serving is two transactions:

1. *claim*: the queued requests are marked ``running`` (visible to
   :meth:`~RecordStore.status`) and committed;
2. *serve*: under the store's write lock the claimed requests still
   ``running`` are re-read, their records deleted by **one** edit (one
   ``partial_unlearn``, one certificate for the group), and the records, the
   model, the log, the tombstones and every request's ``done`` mark and audit
   record are committed together.

A process killed after 1 leaves requests ``running``; the next ``process()``
claims them again (a request's ``attempts`` counts the claims). Because a
request's ``done`` mark commits with its edit, a request is never served
twice, and a request whose edit did not commit is never marked done.

Tombstones. A deleted ID is remembered so that a later request naming it is
told "deleted earlier" rather than "unknown". The tombstone is an HMAC-SHA256
of the ID under a random key kept in the store (``tombstone_key``), never the
ID: the table of deletions lists nobody, cannot be matched against another
store's, and tells apart only an ID its reader already knows. The ID a
requester named stays in that request's row and audit record, which must say
what was deleted.
"""

import calendar
import dataclasses
import hashlib
import hmac
import json
import numbers
import time
import unicodedata
from datetime import datetime, timedelta, timezone

from skforget._release import mark_committed, releasing
from skforget._utils import no_interrupts
from skforget.accounting import LedgerUnreachableError, PrivacyBudgetExceeded
from skforget.exceptions import UnlearningError
from skforget.store import _audit
from skforget.store._ledger import LedgerFileError

#: What refuses an edit before any data pass and leaves the model as it was:
#: the request fails with the reason (public numbers) instead of staying
#: claimed and blocking the queue.
_REFUSALS = (UnlearningError, PrivacyBudgetExceeded, LedgerUnreachableError)


class _Refused(Exception):
    """An edit refused inside the serving transaction: (reason, the requests
    it would have served, those naming unknown IDs, where each ID was)."""

STATUSES = ("pending", "running", "done", "failed")


class UnknownIDError(ValueError):
    """A request names IDs the store never held (nor deleted).

    Attributes
    ----------
    unknown : list
        The IDs not in the store and never deleted from it.
    """

    def __init__(self, unknown):
        self.unknown = list(unknown)
        super().__init__(f"not in the store and never deleted from it: "
                         f"{self.unknown!r}; nothing was queued.")


class RequestConflictError(ValueError):
    """A request ID was submitted again with other record IDs."""


class UnknownRequestError(LookupError):
    """No request with this request ID was submitted to the store."""


def _now():
    return datetime.now(timezone.utc)


def iso(moment, up=False):
    """UTC ISO 8601, to the second: ``2026-11-25T17:42:34Z``. The year has
    four digits whatever the platform's ``strftime`` does (glibc writes year
    226 as ``226``), so that the strings sort as the times do. ``up``: a
    fraction of a second counts as the next second (a request's end, and the
    clock it is compared with: one finished at 00.7 is not on time for a date
    due at 00.2; due dates are cut down, ends rounded up)."""
    m = moment.astimezone(timezone.utc)
    if up and m.microsecond:
        m = m.replace(microsecond=0) + timedelta(seconds=1)
    return (f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:"
            f"{m.second:02d}Z")


def parse_time(value, name="due_at"):
    """A timezone-aware datetime, or an ISO 8601 string with its offset
    (``name``: the parameter an error names)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{name}={value!r} is not an ISO 8601 time (e.g. "
                             "'2026-12-24T00:00:00Z').") from None
    if not isinstance(value, datetime):
        raise TypeError(f"{name} must be a datetime or an ISO 8601 string, got "
                        f"{type(value).__name__}.")
    if value.tzinfo is None:
        raise ValueError(f"{name} must carry its time zone (e.g. "
                         "'2026-12-24T00:00:00Z'): a naive time is ambiguous.")
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:   # 9999-12-31T23:59:59-05:00 is past year 9999 in UTC
        raise ValueError(f"{name}={value.isoformat()!r} is outside the times UTC "
                         "can state (years 1 to 9999).") from None


def _printable(text):
    """No control, format or surrogate character (Unicode categories C*)."""
    return not any(unicodedata.category(c).startswith("C") for c in text)


def one_month_after(moment):
    """The same day of the next month (or its last day): GDPR Art. 12(3)."""
    year, month = moment.year + moment.month // 12, moment.month % 12 + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


@dataclasses.dataclass(frozen=True)
class RequestStatus:
    """Where a deletion request stands.

    Attributes
    ----------
    request_id : str
    status : {"pending", "running", "done", "failed"}
    n_ids : int
        Record IDs the request named.
    submitted_at, due_at : str
        UTC ISO 8601. ``due_at`` defaults to one month after submission.
    started_at, finished_at : str or None
        The last claim by :meth:`RecordStore.process`, and the commit of the
        edit that served the request (or of its refusal).
    edit : int or None
        The edit that served the request (its certificate's ``index``); None
        when no record was left to delete or the request failed.
    attempts : int
        Times the request was claimed (more than 1: a process serving it died
        or was refused and retried).
    reason : str or None
        Why a request failed, or why it needed no edit.
    duplicate : bool
        Set by :meth:`RecordStore.submit` when the request was already
        submitted with the same IDs: recognised, not queued again.
    """

    request_id: str
    status: str
    n_ids: int
    submitted_at: str
    due_at: str
    started_at: str | None = None
    finished_at: str | None = None
    edit: int | None = None
    attempts: int = 0
    reason: str | None = None
    duplicate: bool = False

    @property
    def overdue(self):
        """Not done or failed, and past its due date."""
        return (self.status in ("pending", "running")
                and iso(_now(), up=True) > self.due_at)

    @property
    def late(self):
        """Done or failed after its due date (a missed deadline stays visible
        once the request is finished, not only in its audit record)."""
        return self.finished_at is not None and self.finished_at > self.due_at

    def to_dict(self):
        """Plain ``dict`` of the fields, ``overdue`` and ``late``
        (JSON-serialisable)."""
        return {**dataclasses.asdict(self), "overdue": self.overdue,
                "late": self.late}


_COLUMNS = ("request_id", "ids", "status", "reason", "submitted_at", "due_at",
            "started_at", "finished_at", "attempts", "edit")


def _row(values):
    row = dict(zip(_COLUMNS, values, strict=True))
    row["ids"] = json.loads(row["ids"])
    return row


def _status(row, duplicate=False):
    return RequestStatus(
        request_id=row["request_id"], status=row["status"], n_ids=len(row["ids"]),
        submitted_at=row["submitted_at"], due_at=row["due_at"],
        started_at=row["started_at"], finished_at=row["finished_at"],
        edit=row["edit"], attempts=row["attempts"], reason=row["reason"],
        duplicate=duplicate)


def record_id(value, id_kind):
    """``value`` as the store keeps a record ID of kind ``id_kind`` ("int" or
    "str"), or a refusal naming it: every ID written or asked for, so that
    one store never holds both kinds (a string ID on an integer store made
    every ID read back a string, and every later request fail)."""
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if id_kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, str)
    if not ok:
        kind = "integers" if id_kind == "int" else "strings"
        raise TypeError(f"record ID {value!r}: this store's IDs are {kind}.")
    # What a database column can hold, on both backends: a 64-bit integer, a
    # string without NUL (PostgreSQL refuses it).
    if isinstance(value, int) and not -2**63 <= value < 2**63:
        raise ValueError(f"record ID {value!r} is outside the 64-bit integers a "
                         "store's IDs are.")
    if isinstance(value, str) and "\x00" in value:
        raise ValueError(f"record ID {value!r} holds a NUL character.")
    return value


class RequestsMixin:
    """The request lifecycle of :class:`~skforget.store.RecordStore`."""

    @staticmethod
    def _commit_release(con):
        """Commit a serving transaction and mark the release it holds as made
        (privacy-accounting.md, 20.3): marked first, so a commit that fails,
        or whose outcome is unknown, over-counts, and no interrupt falls
        between."""
        with no_interrupts():
            mark_committed()
            con.commit()

    # --- IDs ----------------------------------------------------------------------
    def _tombstone_key(self):
        """The key of the tombstones' HMAC; refused, before any change, by a
        store that keeps it outside and was opened without it."""
        stored = self._meta["tombstone_key"]
        key = bytes.fromhex(stored) if stored is not None else self._external_key
        if key is None:
            raise ValueError(
                f"{self.location} keeps its tombstone key outside it: open it with "
                "RecordStore(location, tombstone_key=...) or set the environment "
                "variable SKFORGET_TOMBSTONE_KEY to serve or submit requests.")
        return key

    def _id_hash(self, record_id):
        key = self._tombstone_key()
        text = f"{self._meta['id_kind']}:{record_id}".encode()
        return hmac.new(key, text, hashlib.sha256).hexdigest()

    def _check_ids(self, ids):
        if isinstance(ids, str | int) or getattr(ids, "ndim", None) == 0:
            ids = [ids]   # one ID (a numpy scalar included)
        ids = list(ids)
        if not ids:
            raise ValueError("a request names at least one record ID.")
        checked = [record_id(i, self._meta["id_kind"]) for i in ids]
        if len(set(checked)) != len(checked):
            raise ValueError("a request names each record ID once.")
        return checked

    def _where(self, con, record_id):
        """'present', ('deleted', edit, request_id) or None (never known)."""
        if con.one("SELECT 1 FROM records WHERE id = ?", (record_id,)) is not None:
            return "present"
        tomb = con.one("SELECT edit, request_id FROM tombstones WHERE id_hash = ?",
                       (self._id_hash(record_id),))
        return None if tomb is None else ("deleted", *tomb)

    def _read_request(self, con, request_id):
        values = con.one(f"SELECT {', '.join(_COLUMNS)} FROM requests "
                         "WHERE request_id = ?", (request_id,))
        return None if values is None else _row(values)

    def _store_info(self):
        return {"backend": self.backend}

    # --- lifecycle ------------------------------------------------------------------
    def submit(self, ids, *, request_id, due_at=None):
        """Queue a deletion request; a retry with the same IDs is recognised.

        Parameters
        ----------
        ids : sequence of IDs, or one ID
            The records to delete, by ID.
        request_id : str
            The request's ID in your request tool (a ticket number). Submitting
            it again with the same IDs returns its status (``duplicate=True``)
            and queues nothing; with other IDs it raises
            :class:`RequestConflictError`.
        due_at : datetime or str, default=None
            When the request must be served by (timezone-aware, or ISO 8601
            with an offset). Default: one month after submission (GDPR Art.
            12(3)). :meth:`process` serves the earliest due first.

        Returns
        -------
        status : RequestStatus
            ``pending``, or ``done`` at once when every ID was deleted earlier.

        Raises
        ------
        UnknownIDError
            Some ID is neither in the store nor deleted from it: nothing is
            queued. An ID deleted earlier is accepted and reported in the
            audit record as already deleted.
        """
        self._tombstone_key()
        if not isinstance(request_id, str) or not request_id or len(request_id) > 200:
            raise ValueError("request_id must be a non-empty string of at most 200 "
                             "characters.")
        if request_id.endswith("/audit") or not _printable(request_id):
            # GET /requests/{id}/audit could not tell it from a status; a line
            # break or tab would forge lines of the CLI's tab-separated
            # listing, a lone surrogate fail to encode.
            raise ValueError(f"request_id {request_id!r} may not end in '/audit' "
                             "or hold a control character or a lone surrogate.")
        ids = self._check_ids(ids)
        now = _now()
        due = one_month_after(now) if due_at is None else parse_time(due_at)
        con = self._connect()
        try:
            con.begin_write()
            row = self._read_request(con, request_id)
            if row is not None:
                if sorted(map(str, row["ids"])) != sorted(map(str, ids)):
                    raise RequestConflictError(
                        f"request {request_id!r} was submitted with other record "
                        f"IDs ({len(row['ids'])} ID(s), status {row['status']}); "
                        "a request ID names one request.")
                return _status(row, duplicate=True)
            where = {i: self._where(con, i) for i in ids}
            unknown = [i for i in ids if where[i] is None]
            if unknown:
                raise UnknownIDError(unknown)
            (last,) = con.one("SELECT COALESCE(MAX(seq), 0) FROM requests")
            row = {"request_id": request_id, "ids": ids, "status": "pending",
                   "reason": None, "submitted_at": iso(now), "due_at": iso(due),
                   "started_at": None, "finished_at": None, "attempts": 0,
                   "edit": None}
            audit = None
            if all(w != "present" for w in where.values()):
                row.update(status="done", finished_at=iso(now),
                           reason="every record named was deleted earlier")
                audit = _audit.unserved_record(
                    row=row, status="done", reason=row["reason"],
                    already_deleted=self._deleted_earlier(where),
                    finished_at=row["finished_at"], store=self._store_info())
            con.execute(
                "INSERT INTO requests (request_id, seq, ids, status, reason, "
                "submitted_at, due_at, started_at, finished_at, attempts, edit, "
                "audit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (request_id, last + 1, json.dumps(ids), row["status"], row["reason"],
                 row["submitted_at"], row["due_at"], None, row["finished_at"], 0,
                 None, None if audit is None else json.dumps(audit)))
            con.commit()
        finally:
            con.close()
        return _status(row)

    @staticmethod
    def _deleted_earlier(where):
        return [{"id": i, "edit": w[1], "request_id": w[2]}
                for i, w in where.items() if isinstance(w, tuple)]

    def status(self, request_id):
        """The status of one request.

        Returns
        -------
        status : RequestStatus

        Raises
        ------
        UnknownRequestError
            No request with this ID was submitted.
        """
        row = self._reading(lambda con: self._read_request(con, request_id))
        if row is None:
            raise UnknownRequestError(f"no request {request_id!r} in this store.")
        return _status(row)

    def requests(self, status=None):
        """Every request (or those with this status), earliest due first.

        Returns
        -------
        statuses : list of RequestStatus
        """
        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}.")
        rows = self._reading(lambda con: con.all(
            f"SELECT {', '.join(_COLUMNS)} FROM requests ORDER BY due_at, seq"))
        return [_status(r) for r in map(_row, rows)
                if status is None or r["status"] == status]

    def audit_record(self, request_id):
        """The audit record of a request that is done or failed.

        A plain, JSON-serialisable ``dict`` written when the request was served
        and never rewritten: the request (IDs named, submission, due and
        completion times in UTC ISO 8601), the records deleted, the other
        requests served by the same edit, the data version and the model's
        SHA-256 before and after, the deletion certificate (epsilon, delta,
        rho at every Rényi order, relation, group size, whole-edit and adaptive
        figures) and the software versions. See the user guide's service page.

        Returns
        -------
        record : dict
        """
        found = self._reading(lambda con: con.one(
            "SELECT status, audit FROM requests WHERE request_id = ?",
            (request_id,)))
        if found is None:
            raise UnknownRequestError(f"no request {request_id!r} in this store.")
        if found[1] is None:
            raise ValueError(f"request {request_id!r} is {found[0]}: it has no audit "
                             "record until it is done or failed.")
        return json.loads(found[1])

    def audit_records(self, *, since=None, until=None):
        """The audit records of every request done or failed, in the order they
        were finished (within a second, the edits'): the bulk export for a
        request tool or an archive, each record as :meth:`audit_record`
        returns it.

        Parameters
        ----------
        since, until : datetime or str, default=None
            Only requests finished at or after ``since`` and before ``until``
            (timezone-aware, or ISO 8601 with its offset; compared to the
            second, as the store records times).

        Returns
        -------
        records : list of dict
        """
        window = [(op, iso(parse_time(value, name))) for name, op, value in
                  (("since", ">=", since), ("until", "<", until))
                  if value is not None]
        if len(window) == 2 and window[0][1] > window[1][1]:
            raise ValueError(f"since={window[0][1]} is after until="
                             f"{window[1][1]}: the window holds no time.")
        where = "".join(f" AND finished_at {op} ?" for op, _ in window)
        rows = self._reading(lambda con: con.all(
            f"SELECT audit FROM requests WHERE audit IS NOT NULL{where} "
            # Times are to the second: within one, the edits' order (a failed
            # request has none), so that the model hashes chain.
            "ORDER BY finished_at, COALESCE(edit, -1), seq",
            tuple(value for _, value in window)))
        return [json.loads(row[0]) for row in rows]

    def purge_requests(self, *, before):
        """Delete the requests finished (done or failed) before ``before``:
        their rows hold the IDs their requesters named and their audit
        records, which a retention policy may not keep. Export them first
        (:meth:`audit_records` with ``until=before``). Pending and running
        requests stay; the tombstones keep answering "deleted earlier"
        without the rows; a purged request ID may be submitted again, as a
        new request. On PostgreSQL the freed rows stay on disk until a
        ``VACUUM`` (SQLite overwrites them: ``secure_delete``).

        Parameters
        ----------
        before : datetime or str
            Timezone-aware, or ISO 8601 with its offset.

        Returns
        -------
        n_purged : int
            Requests deleted.
        """
        limit = iso(parse_time(before, "before"))
        where = "WHERE audit IS NOT NULL AND finished_at < ?"

        def purge(con):
            n = int(con.one(f"SELECT COUNT(*) FROM requests {where}", (limit,))[0])
            con.execute(f"DELETE FROM requests {where}", (limit,))
            return n
        return self._writing(purge)

    def process(self, *, limit=None, progress=None):
        """Serve the queued requests as one edit, earliest due first.

        Parameters
        ----------
        limit : int, default=None
            Serve at most this many requests (the earliest due).
        progress : callable, default=None
            Called with a one-line message (counts and request IDs only) at
            each stage; the command line prints them on stderr.

        Returns
        -------
        statuses : list of RequestStatus
            The requests this call finished (``done`` or ``failed``), earliest
            due first. A request another process finished meanwhile (it
            claimed the same ``running`` request, as a run after a crash
            does) is not listed. A warning about the released model comes
            after the store's commit (privacy-accounting.md, 20.3): if a
            warning filter turns it into an error, the requests are already
            done and recorded, and :meth:`status` reads them.
        """
        self._tombstone_key()
        if limit is not None and (isinstance(limit, bool) or not isinstance(
                limit, numbers.Integral) or limit < 1):
            raise ValueError(f"limit must be a positive integer or None, got "
                             f"{limit!r}.")
        say = progress or (lambda message: None)
        claimed = self._claim(limit)
        if not claimed:
            say("no request queued")
            return []
        say(f"claimed {len(claimed)} request(s)")
        finished = set()
        self._serve_group(claimed, say, finished)
        if not finished:
            say("another run finished the claimed request(s)")
        return [self.status(r) for r in claimed if r in finished]

    def _claim(self, limit):
        con = self._connect()
        try:
            con.begin_write()
            rows = con.all("SELECT request_id FROM requests WHERE status IN "
                           "('pending', 'running') ORDER BY due_at, seq")
            claimed = [r[0] for r in rows][:limit]
            con.executemany("UPDATE requests SET status = 'running', started_at = ?, "
                            "attempts = attempts + 1 WHERE request_id = ?",
                            [(iso(_now()), r) for r in claimed])
            con.commit()
        finally:
            con.close()
        return claimed

    def _serve_group(self, claimed, say, finished):
        """Serve the claimed requests still running, as one edit; on refusal,
        split the group (earliest due first) until single requests fail.
        Adds to ``finished`` the request IDs this call marks done or failed."""
        start = time.perf_counter()
        try:
            # The model's ledger entry is recorded once the store has committed
            # the edit (privacy-accounting.md, 20.3): a refusal, or a failure
            # before the commit, leaves nothing recorded.
            with releasing(rollback=True):
                served = self._serve_once(claimed, say, finished)
        except LedgerFileError as exc:
            # Not a refusal: the requests wait (running, with the reason) and
            # the next process() claims them again; failed, each would have
            # needed a new request, and a person's erasure its resubmission.
            self._note_waiting(claimed, f"waiting for the ledger: {exc}")
            raise
        except Warning as exc:
            # A warning the model gives before its pass, raised as an error by
            # the caller's filters (python -W error): their choice to stop the
            # edit (privacy-accounting.md, 20.3). The requests wait with it as
            # their reason, rather than running without one.
            self._note_waiting(claimed, "stopped by a warning raised as an error "
                               f"({type(exc).__name__}): {exc}")
            raise
        except _Refused as refusal:
            refused, serve, failed, where = refusal.args
            for r in failed:
                self._fail(r["request_id"], self._unknown_reason(r, where), finished)
            if len(serve) == 1:
                say(f"request {serve[0]['request_id']} refused by the model")
                self._fail(serve[0]["request_id"], str(refused), finished)
            else:
                half = len(serve) // 2
                say(f"the model refused the edit; serving {half} and "
                    f"{len(serve) - half} request(s) apart")
                self._serve_group([r["request_id"] for r in serve[:half]], say,
                                  finished)
                self._serve_group([r["request_id"] for r in serve[half:]], say,
                                  finished)
            return
        if served is not None:
            say(f"edit {served['certificate'].index} committed in "
                f"{time.perf_counter() - start:.1f} s")

    def _serve_once(self, claimed, say, finished):
        """One write transaction: the edit of the requests still running and
        their outcomes, committed together; raises :class:`_Refused` (nothing
        written) when the model or its ledger refuses the edit."""
        con = self._connect()
        try:
            con.begin_write()
            rows = [r for r in (self._read_request(con, q) for q in claimed)
                    if r is not None and r["status"] == "running"]
            where = {i: self._where(con, i) for r in rows for i in r["ids"]}
            failed = [r for r in rows if any(where[i] is None for i in r["ids"])]
            serve = [r for r in rows if r not in failed]
            delete, request_of = [], {}
            for r in serve:
                for i in r["ids"]:
                    if where[i] == "present" and i not in request_of:
                        request_of[i] = r["request_id"]
                        delete.append(i)
            served = None
            if delete:
                say(f"serving {len(serve)} request(s) as one edit: "
                    f"{len(delete)} record(s)")
                try:
                    served = self._serve(con, {"delete": delete}, request_of)
                except LedgerFileError:
                    raise   # not a refusal: the requests wait (_serve_group)
                except _REFUSALS as exc:
                    # Refused before any data pass (the model, or its ledger's
                    # budget): a recorded outcome, not a queue left blocked.
                    raise _Refused(exc, serve, failed, where) from exc
            self._finish(con, serve, failed, where, served)
            self._commit_release(con)
            finished.update(r["request_id"] for r in (*serve, *failed))
        finally:
            con.close()
        return served

    def _finish(self, con, serve, failed, where, served):
        finished = iso(_now(), up=True)

        def deleted_by_edit(row):
            return [i for i in row["ids"] if where[i] == "present"]

        # The requests the edit served: those that named a record it deleted.
        group = [r["request_id"] for r in serve if deleted_by_edit(r)]
        updates = []
        for r in serve:
            mine = {i: where[i] for i in r["ids"]}
            deleted, edit, reason = deleted_by_edit(r), None, None
            if deleted:
                edit = served["certificate"].index
                audit = _audit.served_record(
                    row=r, group=group, deleted_ids=deleted,
                    already_deleted=self._deleted_earlier(mine), served=served,
                    finished_at=finished, store=self._store_info())
            else:
                reason = "every record named was deleted earlier"
                audit = _audit.unserved_record(
                    row=r, status="done", reason=reason,
                    already_deleted=self._deleted_earlier(mine),
                    finished_at=finished, store=self._store_info())
            updates.append(("done", reason, finished, edit, json.dumps(audit),
                            r["request_id"]))
        for r in failed:
            reason = self._unknown_reason(r, where)
            updates.append(("failed", reason, finished, None,
                            json.dumps(self._failure_record(r, reason, finished)),
                            r["request_id"]))
        con.executemany("UPDATE requests SET status = ?, reason = ?, finished_at = ?, "
                        "edit = ?, audit = ? WHERE request_id = ?", updates)

    @staticmethod
    def _unknown_reason(row, where):
        unknown = [i for i in row["ids"] if where[i] is None]
        return (f"{len(unknown)} record ID(s) no longer in the store and not "
                "deleted by it")

    def _failure_record(self, row, reason, finished):
        return _audit.unserved_record(row=row, status="failed", reason=reason,
                                      already_deleted=[], finished_at=finished,
                                      store=self._store_info())

    def _note_waiting(self, request_ids, reason):
        self._writing(lambda con: con.executemany(
            "UPDATE requests SET reason = ? WHERE request_id = ? AND status = "
            "'running'", [(reason, r) for r in request_ids]))

    def _fail(self, request_id, reason, finished_ids):
        def fail(con):
            row = self._read_request(con, request_id)
            if row is None or row["status"] != "running":
                return False
            finished = iso(_now(), up=True)
            con.execute("UPDATE requests SET status = 'failed', reason = ?, "
                        "finished_at = ?, audit = ? WHERE request_id = ?",
                        (reason, finished,
                         json.dumps(self._failure_record(row, reason, finished)),
                         request_id))
            return True
        if self._writing(fail):
            finished_ids.add(request_id)
