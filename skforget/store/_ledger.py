# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A privacy ledger kept in a SQLite file, shared by every process that opens it.

Design
------
:class:`~skforget.accounting.PrivacyLedger` routes every read and change
through ``_transact(fn)``, a pure function of the entries run under a lock.
Here that lock is a SQLite ``BEGIN IMMEDIATE`` transaction on the file: a
check and its reservation are one transaction, whichever process or thread
runs them (privacy-accounting.md, Section 20.3 and 20.5). A pickled copy holds
the path and the budget only, so a clone, a pickle or a joblib worker reopens
the same account. Only public numbers are stored: labels and Rényi figures.
"""

import json
import os
import pathlib
import sqlite3

from skforget.accounting import LedgerUnreachableError, PrivacyLedger
from skforget.accounting._ledger import LedgerEntry
from skforget.store._backends import begin_immediate


class LedgerFileError(LedgerUnreachableError, FileNotFoundError):
    """A :class:`SharedLedger`'s file cannot be opened (moved, deleted, a
    share not mounted). Nothing is recorded and nothing run; an OSError too,
    so that a deletion service leaves the request queued for a retry rather
    than failing it for good."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS budget (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
    "data TEXT NOT NULL)",
)


class SharedLedger(PrivacyLedger):
    """A :class:`~skforget.accounting.PrivacyLedger` kept in a SQLite file.

    Every copy (``clone``, ``pickle``, ``skops``, a worker process of
    ``GridSearchCV(n_jobs=2)``) opens the same file, so all of them record into
    one account; checking a planned release and reserving it is one
    transaction (privacy-accounting.md, Section 20.5). The file holds the
    budget, the labels and the Rényi figures: public numbers only.

    Parameters
    ----------
    path : str or os.PathLike
        The ledger's file, created if missing (with ``epsilon`` and
        ``delta``). Kept as an absolute path: a copy opened from another
        working directory (a model loaded by a cron job) reaches the same
        file. A copy (a pickle, a clone) never creates the file: if it is
        gone, every use raises :class:`~skforget.accounting.
        LedgerUnreachableError`, before any data pass, rather than start a
        fresh budget.
    epsilon, delta : float or None, default=None
        The budget. For a new file both are required; for an existing one they
        may be omitted (read from the file) and must otherwise equal the
        file's.
    relation, group_size : default=None
        As for :class:`~skforget.accounting.PrivacyLedger` (stored in the file
        when given at creation).
    timeout : float, default=60
        Seconds to wait for another process's transaction.

    Examples
    --------
    >>> import os, tempfile
    >>> from skforget.store import SharedLedger
    >>> path = os.path.join(tempfile.mkdtemp(), "ledger.sqlite")
    >>> ledger = SharedLedger(path, epsilon=2.0, delta=1e-5)
    >>> ledger.spend("a count", rho=0.01)
    >>> SharedLedger(path).total.n_entries
    1
    """

    def __init__(self, path, epsilon=None, delta=None, *, relation=None,
                 group_size=None, timeout=60.0):
        self.path = os.path.abspath(os.fsdecode(path))
        self.timeout = float(timeout)
        stored = self._read_budget()
        if stored is None:
            if epsilon is None or delta is None:
                raise ValueError(f"{self.path!r} holds no ledger yet: give its "
                                 "budget, epsilon and delta.")
            super().__init__(epsilon, delta, relation=relation,
                             group_size=group_size)
            self._write_budget()
            return
        given = {"epsilon": epsilon, "delta": delta, "relation": relation,
                 "group_size": group_size}
        for key, value in given.items():
            if value is not None and value != stored[key]:
                raise ValueError(
                    f"{self.path!r} is a ledger with {key}={stored[key]!r}, not "
                    f"{value!r}: a budget is fixed when its ledger is created.")
        self._reopened = True   # its budget was said when it was created
        super().__init__(stored["epsilon"], stored["delta"],
                         relation=stored["relation"],
                         group_size=stored["group_size"])

    # --- the file ----------------------------------------------------------------
    def _connect(self, create=False):
        # Only __init__ creates the file: a ledger deleted or moved since, or a
        # copy opened elsewhere, must not silently become a fresh, full budget.
        if create:
            con = sqlite3.connect(self.path, timeout=self.timeout,
                                  isolation_level=None)
        else:
            try:
                # An old pickle may hold a relative path: read from here.
                uri = pathlib.Path(os.path.abspath(self.path)).as_uri()
                con = sqlite3.connect(f"{uri}?mode=rw", uri=True,
                                      timeout=self.timeout, isolation_level=None)
            except sqlite3.OperationalError as exc:
                raise LedgerFileError(
                    f"The ledger file {self.path!r} cannot be opened ({exc}): a "
                    "SharedLedger is never recreated by its copies, which would "
                    "start a fresh budget. Restore the file, or give the model "
                    "its ledger again (set_params(ledger=...)).") from exc
        for statement in _SCHEMA:
            con.execute(statement)
        return con

    def _read_budget(self):
        if not os.path.exists(self.path):
            return None
        con = self._connect()
        try:
            rows = dict(con.execute("SELECT key, value FROM budget").fetchall())
        finally:
            con.close()
        return None if "epsilon" not in rows else {
            k: json.loads(rows[k]) for k in ("epsilon", "delta", "relation",
                                             "group_size")}

    def _write_budget(self):
        con = self._connect(create=True)
        try:
            con.execute("BEGIN IMMEDIATE")
            present = con.execute("SELECT COUNT(*) FROM budget").fetchone()[0]
            if not present:
                con.executemany(
                    "INSERT INTO budget (key, value) VALUES (?, ?)",
                    [(k, json.dumps(getattr(self, k)))
                     for k in ("epsilon", "delta", "relation", "group_size")])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            con.close()
        if present:  # another process created it meanwhile: it must agree
            SharedLedger(self.path, self.epsilon, self.delta,
                         relation=self.relation, group_size=self.group_size)

    def _transact(self, fn):
        con = self._connect()
        try:
            # Another process holding the ledger past the timeout is
            # transient, as the store's own lock (nothing was recorded).
            begin_immediate(con, f"the ledger {self.path!r}")
            entries = [LedgerEntry.from_dict(json.loads(row[0])) for row in
                       con.execute("SELECT data FROM entries ORDER BY seq")]
            result, new = fn(list(entries))
            if new is not None:
                con.execute("DELETE FROM entries")
                con.executemany("INSERT INTO entries (data) VALUES (?)",
                                [(json.dumps(e.to_dict()),) for e in new])
            con.execute("COMMIT")
            return result
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        finally:
            con.close()

    # --- identity ----------------------------------------------------------------
    def _pickled_as_snapshot(self):
        # Every copy, pickled or forked, records into the one file.
        return False

    def __getstate__(self):
        return {"path": self.path, "timeout": self.timeout, "epsilon": self.epsilon,
                "delta": self.delta, "relation": self.relation,
                "group_size": self.group_size}

    def __setstate__(self, state):
        # A copy reopens the file it was made from, and never creates one:
        # unpickling succeeds (the model stays usable for predictions), and
        # every release then raises LedgerUnreachableError if the file is gone.
        path = os.fsdecode(state["path"])
        if not os.path.exists(path):
            self.path, self.timeout = path, float(state["timeout"])
            self._reopened = True
            PrivacyLedger.__init__(self, state["epsilon"], state["delta"],
                                   relation=state["relation"],
                                   group_size=state["group_size"])
            return
        self.__init__(path, state["epsilon"], state["delta"],
                      relation=state["relation"], group_size=state["group_size"],
                      timeout=state["timeout"])

    def __repr__(self):
        return (f"SharedLedger({self.path!r}, epsilon={self.epsilon!r}, "
                f"delta={self.delta!r})")
