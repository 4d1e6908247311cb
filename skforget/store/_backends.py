# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The two SQL backends of a record store: SQLite (a file) and PostgreSQL (a URL).

The store's logic (:mod:`skforget.store._store`, :mod:`skforget.store._requests`)
is written once, in portable SQL with ``?`` placeholders, against the small
:class:`Connection` interface below. A dialect supplies what differs:

* how to connect, and what "the store exists" means (a file; a ``meta`` table);
* placeholders (``?`` or ``%s``) and column types (SQLite keeps values
  untyped, PostgreSQL needs a type per column: ``BLOB``/``BYTEA``, ...);
* the write lock that serialises writers: ``BEGIN IMMEDIATE`` on SQLite,
  ``LOCK TABLE meta IN SHARE ROW EXCLUSIVE MODE`` on PostgreSQL (readers are
  never blocked, writers wait for each other).
"""

import sqlite3
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

_URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(location):
    """True when ``location`` names a PostgreSQL database rather than a file."""
    return isinstance(location, str) and location.startswith(_URL_SCHEMES)


#: Seconds a writer waits for another's write lock before giving up
#: (:class:`StoreBusyError`); the HTTP entry point waits less.
LOCK_TIMEOUT = 60.0


class StoreBusyError(TimeoutError):
    """Another process held the store's write lock longer than this one would
    wait. Nothing was written; the call may be retried (every write of the
    store is idempotent or checked)."""

    def __init__(self, location):
        super().__init__(f"{location} is locked by another writer; nothing was "
                         "written, retry later.")


def is_busy(exc):
    """Whether ``exc`` says another writer held the store: the write lock not
    taken in time, or SQLite's "database is locked" (or busy), also met at a
    commit. Transient: the call may be retried."""
    return isinstance(exc, StoreBusyError) or (
        isinstance(exc, sqlite3.OperationalError)
        and ("locked" in str(exc) or "busy" in str(exc)))


def begin_immediate(con, display):
    """SQLite's write transaction, taken within the connection's timeout: a
    writer holding the file past it is :class:`StoreBusyError` (transient,
    nothing written), naming ``display``. The store's and a SharedLedger's."""
    try:
        con.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise StoreBusyError(display) from None
        raise


def redact(url):
    """A URL without its password, for messages and ``repr``: the one after
    the user (``user:pw@host``) and libpq's ``password=`` parameter."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    secret = any(key == "password" for key, _ in query)
    if parts.password is None and not secret:
        return url   # as given: re-assembled, postgresql:///db lost its "//"
    if parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)
        user = netloc[0].split(":", 1)[0]
        parts = parts._replace(netloc=f"{user}:***@{netloc[1]}")
    if secret:
        parts = parts._replace(query=urlencode(
            [(key, "***" if key == "password" else value) for key, value in query],
            safe="*/"))
    out = urlunsplit(parts)
    if url.startswith(f"{parts.scheme}://") and not out.startswith(
            f"{parts.scheme}://"):
        out = f"{parts.scheme}://{out[len(parts.scheme) + 1:]}"
    return out


class Connection:
    """One connection, with explicit transactions and ``?`` placeholders."""

    def __init__(self, raw, dialect):
        self.raw = raw
        self.dialect = dialect
        self.in_transaction = False

    def execute(self, sql, params=()):
        return self.dialect.execute(self.raw, sql, params)

    def executemany(self, sql, rows):
        self.dialect.executemany(self.raw, sql, rows)

    def one(self, sql, params=()):
        return self.execute(sql, params).fetchone()

    def all(self, sql, params=()):
        return self.execute(sql, params).fetchall()

    def begin_write(self, locked=True):
        """Start a transaction that no other writer can interleave with."""
        self.dialect.begin_write(self, locked)
        self.in_transaction = True

    def begin_read(self):
        """Start a transaction that reads one consistent state."""
        self.dialect.begin_read(self)
        self.in_transaction = True

    def commit(self):
        self.execute("COMMIT")
        self.in_transaction = False

    def rollback(self):
        if self.in_transaction:
            self.in_transaction = False
            self.execute("ROLLBACK")

    def close(self):
        try:
            self.rollback()
        finally:
            self.raw.close()


class SQLite:
    """A store in one SQLite file (standard-library :mod:`sqlite3`)."""

    name = "sqlite"
    blob = "BLOB"
    database_error = sqlite3.DatabaseError

    def __init__(self, path):
        self.path = Path(path)
        self.display = str(self.path)
        self.lock_timeout = LOCK_TIMEOUT

    def exists(self):
        return self.path.is_file()

    def connect(self, create=False):
        raw = sqlite3.connect(self.path, isolation_level=None,
                              timeout=self.lock_timeout)
        # Overwrite deleted records instead of leaving them in free pages, and
        # keep the rollback journal (a WAL would hold old pages after commit).
        raw.execute("PRAGMA secure_delete = ON")
        raw.execute("PRAGMA journal_mode = DELETE")
        return Connection(raw, self)

    def discard(self):
        """Remove a store whose creation failed."""
        self.path.unlink(missing_ok=True)

    @staticmethod
    def execute(raw, sql, params):
        return raw.execute(sql, params)

    @staticmethod
    def executemany(raw, sql, rows):
        raw.executemany(sql, rows)

    @staticmethod
    def begin_write(con, locked):
        begin_immediate(con, con.dialect.display)

    @staticmethod
    def begin_read(con):
        con.execute("BEGIN")

    @staticmethod
    def tables(con):
        return {r[0] for r in con.all("SELECT name FROM sqlite_master "
                                      "WHERE type = 'table'")}

    @staticmethod
    def id_column(meta):
        # No declared type: an ID is stored as given (int or str).
        return "seq INTEGER PRIMARY KEY, id UNIQUE NOT NULL"

    @staticmethod
    def column_types(meta):
        return [""] * (1 + bool(meta.get("weighted")) + len(meta["columns"]))

    @staticmethod
    def checked(meta, rows):
        """Rows as the store will write them: SQLite keeps any value's type."""
        return rows


def _pg_type(dtype):
    try:
        kind = np.dtype(dtype).kind
    except TypeError:
        try:   # pandas' nullable Int64, Float64, boolean (kinds i, f, b)
            import pandas as pd

            kind = pd.api.types.pandas_dtype(dtype).kind
        except (ImportError, TypeError):
            return "TEXT"
    return {"b": "BOOLEAN", "i": "BIGINT", "u": "BIGINT",
            "f": "DOUBLE PRECISION"}.get(kind, "TEXT")


class PostgreSQL:
    """A store in a PostgreSQL database (client: ``psycopg`` 3).

    The store's tables live in the connection's current schema: one store per
    database, or per schema with ``?options=-csearch_path%3Dname`` in the URL.
    """

    name = "postgresql"
    blob = "BYTEA"

    def __init__(self, url):
        try:
            import psycopg
        except ImportError:
            raise ImportError("a PostgreSQL store needs psycopg 3: pip install "
                              "'skforget[postgres]'") from None
        self._psycopg = psycopg
        self.database_error = psycopg.DatabaseError
        self.url = url
        self.display = redact(url)
        self.lock_timeout = LOCK_TIMEOUT

    def connect(self, create=False):
        try:
            raw = self._psycopg.connect(self.url, autocommit=True)
        except self._psycopg.OperationalError as exc:
            # An OSError, as for a file that cannot be opened; libpq's message
            # names the host and the user, never the password.
            raise ConnectionError(f"cannot connect to {self.display}: "
                                  f"{str(exc).strip()}") from None
        return Connection(raw, self)

    def exists(self):
        con = self.connect()
        try:
            return "meta" in self.tables(con)
        finally:
            con.close()

    def discard(self):
        """Nothing to remove: a failed creation rolled its tables back."""

    @staticmethod
    def execute(raw, sql, params):
        return raw.execute(sql.replace("?", "%s"), tuple(params))

    @staticmethod
    def executemany(raw, sql, rows):
        with raw.cursor() as cur:
            cur.executemany(sql.replace("?", "%s"), [tuple(r) for r in rows])

    def begin_write(self, con, locked):
        con.execute("BEGIN")
        if not locked:
            return
        # Self-conflicting: one writer at a time; plain reads go on. A writer
        # waits at most lock_timeout for it, as SQLite's does (without one an
        # HTTP submission waited for as long as an edit held it).
        milliseconds = max(1, round(1000 * self.lock_timeout))
        con.execute(f"SET LOCAL lock_timeout = {milliseconds}")
        try:
            con.execute("LOCK TABLE meta IN SHARE ROW EXCLUSIVE MODE")
        except self._psycopg.errors.LockNotAvailable:
            con.execute("ROLLBACK")
            raise StoreBusyError(self.display) from None

    @staticmethod
    def begin_read(con):
        con.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    @staticmethod
    def tables(con):
        return {r[0] for r in con.all(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()")}

    @staticmethod
    def id_column(meta):
        kind = "BIGINT" if meta["id_kind"] == "int" else "TEXT"
        return f"seq BIGINT PRIMARY KEY, id {kind} UNIQUE NOT NULL"

    @staticmethod
    def column_types(meta):
        weight = ["DOUBLE PRECISION"] if meta.get("weighted") else []
        return [_pg_type(meta["target_dtype"]), *weight,
                *(_pg_type(c["dtype"]) for c in meta["columns"])]

    @classmethod
    def checked(cls, meta, rows):
        """Rows ``(id, target, [weight], values...)``, refusing a value that a
        ``TEXT`` column would silently turn into a string (an ``object``
        column holding numbers): it would come back with another type."""
        text = [k for k, kind in enumerate(cls.column_types(meta)) if kind == "TEXT"]
        names = _names(meta)
        for row in rows:
            for k in text:
                value = row[1 + k]
                if value is not None and not isinstance(value, str):
                    raise ValueError(
                        f"record {row[0]!r}: {names[k]} is stored as text in "
                        f"PostgreSQL but holds a {type(value).__name__} here; "
                        "give the column one type (e.g. .astype(str)).")
            yield row


def _names(meta):
    weight = ["the weight"] if meta.get("weighted") else []
    return ["the target", *weight, *(f"column {c['name']!r}" for c in meta["columns"])]


def open_backend(location):
    """The dialect for a path (SQLite) or a ``postgresql://`` URL."""
    if is_url(location):
        return PostgreSQL(location)
    return SQLite(location)
