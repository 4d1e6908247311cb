# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The record store: records, model and certificates updated in one transaction.

A store holds what a deletion service needs between requests: the records
keyed by ID, the fitted model (or :class:`~skforget.pipeline.ForgetPipeline`),
the log of edit certificates, the queue of deletion requests with their audit
records, and tombstones of deleted IDs (keyed hashes, see
:mod:`skforget.store._requests`). Serving a request updates all of them in
**one transaction**: if anything fails or the process dies half-way, the
database's rollback restores the previous consistent state.

The model is stored with :mod:`pickle`: open only stores you trust.
"""

import hashlib
import hmac
import json
import os
import pickle
import re
import secrets
import sqlite3

import numpy as np

from skforget._database import Database, DatabaseVersion, _is_frame
from skforget._edit_blocks import _default_index
from skforget._edits import EditRequest
from skforget._marks import is_selected, tuned_caveat
from skforget._release import releasing
from skforget.accounting import EditCertificate, PipelineEdit
from skforget.exceptions import UnlearningError
from skforget.store._backends import open_backend
from skforget.store._requests import RequestsMixin, record_id
from skforget.store._values import _converter, _py

__all__ = ["RecordStore", "forget"]

#: Schema written by this version. 1: records, model, log (skforget 0.1 before
#: the request lifecycle); 2 adds requests and tombstones. Older stores are
#: migrated when opened.
SCHEMA = 2


def _certificate(fields):
    """A logged certificate rebuilt: a pipeline's edit (its own fields, which
    an estimator's certificate has not) or an estimator's."""
    if "delta_adaptive" in fields:
        return PipelineEdit(**fields)
    return EditCertificate(**fields)


def _column_spec(name, series):
    dtype = series.dtype
    kind = getattr(dtype, "kind", "O")
    if str(dtype) == "category":
        # The category list may name categories only deleted people had; the
        # store keeps the values alone.
        return {"name": name, "dtype": "object"}
    if kind in "biufM" or str(dtype) in ("object", "str", "string"):
        return {"name": name, "dtype": str(dtype)}
    raise ValueError(f"column {name!r} has dtype {dtype}, which the store does not "
                     "keep (numbers, booleans, strings, dates).")


def _fields(meta):
    """The records table's columns after ``id``: the target, the weight if the
    records carry weights, then one column per feature."""
    weight = ["w"] if meta.get("weighted") else []
    return ["y", *weight, *(f"c{j}" for j in range(len(meta["columns"])))]


def _insert_sql(meta):
    names = ", ".join(["seq", "id", *_fields(meta)])
    marks = ", ".join("?" * (2 + len(_fields(meta))))
    return f"INSERT INTO records ({names}) VALUES ({marks})"


def _request_tables(dialect):
    """DDL of the tables schema 2 adds (portable SQL)."""
    return [
        # One row per request: the IDs the requester named (JSON), its state
        # and, once served or failed, its audit record (JSON).
        "CREATE TABLE requests (request_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, "
        "ids TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, "
        "submitted_at TEXT NOT NULL, due_at TEXT NOT NULL, started_at TEXT, "
        "finished_at TEXT, attempts INTEGER NOT NULL, edit INTEGER, audit TEXT)",
        # One row per deleted ID: a keyed hash of the ID, never the ID.
        "CREATE TABLE tombstones (id_hash TEXT PRIMARY KEY, edit INTEGER, "
        "request_id TEXT)",
    ]


def _sha256(data):
    return hashlib.sha256(bytes(data)).hexdigest()


#: Where the command line, the HTTP entry point and ``RecordStore(location)``
#: read a tombstone key kept outside the store (hex).
TOMBSTONE_KEY_ENV = "SKFORGET_TOMBSTONE_KEY"


def _key_bytes(key, source):
    """A tombstone key given as bytes or hex, at least 16 bytes."""
    if isinstance(key, str):
        try:
            key = bytes.fromhex(key.strip())
        except ValueError:
            raise ValueError(f"{source} must be bytes or a hex string.") from None
    if not isinstance(key, bytes | bytearray) or len(key) < 16:
        raise ValueError(f"{source} must hold at least 16 bytes (32 hex digits); "
                         "draw one with secrets.token_hex(32).")
    return bytes(key)


def _key_check(key):
    """The fingerprint a store keeps of an outside key: an HMAC of a constant,
    which tells a wrong key and reveals nothing of the right one."""
    return hmac.new(key, b"skforget tombstone key check", hashlib.sha256).hexdigest()


def _check_storable(model):
    """Refuse, at create, a model that could serve no deletion: a search (its
    released model is what serves them), the run a search selected (it
    refuses every edit, 17.4), or one whose ledger is in memory (the store
    pickles the model, and the copy of such a ledger refuses to record)."""
    if hasattr(model, "param_distributions") and hasattr(model, "best_estimator_"):
        raise TypeError(
            "A PrivateSearchCV is not stored: store the model it released, "
            "search.best_estimator_, from a search with validation_fraction=... "
            "and refit=True (the selected run of its default mode refuses "
            "deletions).")
    if is_selected(model):
        raise ValueError(
            "This model is the run a PrivateSearchCV selected (no "
            "validation_fraction, or refit=False): it refuses every deletion, so "
            "a store could serve none. Store the refitted model of a search with "
            "validation_fraction=... and refit=True.")
    params = model.get_params(deep=True) if hasattr(model, "get_params") else {}
    for name, value in params.items():
        if name.rsplit("__", 1)[-1] == "ledger" and getattr(
                value, "_pickled_as_snapshot", lambda: False)():
            raise ValueError(
                f"The model's {name} is an in-memory PrivacyLedger: the store "
                "keeps a pickled copy of the model, whose ledger would refuse to "
                "record its deletions. Give it a skforget.store.SharedLedger "
                "(a file every copy records into) before storing it.")


class RecordStore(RequestsMixin):
    """Records, model, certificates and deletion requests in one database.

    Create it once with :meth:`create` from a :class:`~skforget.Database` and
    a model fitted on it; open it later with ``RecordStore(location)``. Serve
    deletion requests through the queue (:meth:`submit`, :meth:`process`,
    :meth:`status`, :meth:`audit_record`), or directly by ID with
    :meth:`forget` or :meth:`edit`; every change is one transaction.

    Parameters
    ----------
    location : str or path-like
        An existing store: a SQLite file, or a ``postgresql://`` URL (needs
        ``pip install 'skforget[postgres]'``). A store written by an older
        skforget is migrated to the current schema when opened.
    tombstone_key : bytes, str or None, default=None
        For a store created with its tombstone key kept outside it
        (:meth:`create`): the key (bytes, or hex), checked against the
        store's fingerprint of it. None reads the environment variable
        ``SKFORGET_TOMBSTONE_KEY``; without either, requests, ``forget`` and
        ``edit`` are refused with a clear error while statuses, audit records
        and the model stay readable.

    Attributes
    ----------
    path : Path or None
        The SQLite file (None for PostgreSQL).
    location : str
        The file, or the URL without its password.
    backend : {"sqlite", "postgresql"}

    See Also
    --------
    forget : Serve a deletion request against a store (also ``python -m
        skforget forget --store FILE --id ID``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from skforget import Database, NoisyGDClassifier
    >>> from skforget.store import RecordStore
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 3)) / 2
    >>> db = Database(X, (X[:, 0] > 0).astype(int),
    ...               ids=[f"p{i}" for i in range(60)])
    >>> model = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(db)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "service.sqlite"
    >>> store = RecordStore.create(path, db, model)
    >>> store.submit(["p3", "p17"], request_id="ticket-1").status
    'pending'
    >>> [s.status for s in store.process()]
    ['done']
    >>> store.database().n_samples, len(store.log())
    (58, 1)
    >>> store.audit_record("ticket-1")["deleted_ids"]
    ['p3', 'p17']
    """

    def __init__(self, location, *, tombstone_key=None):
        self._backend = open_backend(location)
        if not self._backend.exists():
            raise FileNotFoundError(f"no record store at {self._backend.display}; "
                                    "create one with RecordStore.create(location, "
                                    "database, model).")
        try:
            con = self._connect()
        except self._backend.database_error as exc:
            # A file that is not a database fails at the connection's first
            # statement, before the meta table is looked for; a locked one is
            # a store another process writes (its own error, retryable).
            if isinstance(exc, sqlite3.OperationalError):
                raise
            raise ValueError(f"not a skforget record store: {exc}") from None
        try:
            self._meta = self._read_meta(con)
            if self._meta.get("schema") != SCHEMA:
                self._migrate(con)
        finally:
            con.close()
        self._external_key = self._open_key(tombstone_key)

    def _open_key(self, given):
        """The tombstone key kept outside the store (checked), or None."""
        if self._meta.get("tombstone_key") is not None:
            if given is not None:
                raise ValueError(f"{self.location} keeps its tombstone key inside "
                                 "it: open it without tombstone_key.")
            return None
        source = "tombstone_key"
        if given is None:
            given, source = os.environ.get(TOMBSTONE_KEY_ENV), TOMBSTONE_KEY_ENV
            if given is None:
                return None
        key = _key_bytes(given, source)
        if not hmac.compare_digest(_key_check(key),
                                   self._meta.get("tombstone_key_check", "")):
            raise ValueError(f"{source} is not the tombstone key of "
                             f"{self.location} (its fingerprint differs).")
        return key

    @property
    def path(self):
        return getattr(self._backend, "path", None)

    @property
    def location(self):
        return self._backend.display

    @property
    def backend(self):
        return self._backend.name

    # --- creation ---------------------------------------------------------------
    @classmethod
    def create(cls, location, database, model, *, tombstone_key=None):
        """Write a new store: the records, the fitted model and an empty log.

        Parameters
        ----------
        location : str or path-like
            A file that does not exist yet, or a ``postgresql://`` URL whose
            current schema holds no store yet.
        database : Database
            The records (a DataFrame or a dense array) with their IDs.
        model : estimator or ForgetPipeline
            Fitted on ``database`` (``model.fit(database)``), so that its
            ``database_version_`` is the database's version.
        tombstone_key : bytes, str or None, default=None
            None draws a random key kept in the store. A key (at least 16
            bytes, or their hex) is kept **outside** it: the store holds only
            a fingerprint (an HMAC of a constant under the key), so whoever
            holds the store or a backup cannot test a guessed ID for "deleted
            here"; every later opening that serves requests needs the key
            (``RecordStore(location, tombstone_key=...)`` or the environment
            variable ``SKFORGET_TOMBSTONE_KEY``, which the command line and
            the HTTP entry point read). Keep it as you keep other secrets: a
            lost key loses the "deleted earlier" answers, never a record.

        Returns
        -------
        store : RecordStore
        """
        backend = open_backend(location)
        if not isinstance(database, Database):
            raise TypeError("database must be a skforget.Database, got "
                            f"{type(database).__name__}.")
        _check_storable(model)
        version = getattr(model, "database_version_", None)
        if version != database.version:
            raise ValueError(
                f"The model serves {version or 'plain arrays'}, not the database's "
                f"{database.version}: fit it on this database, model.fit(database), "
                "before storing them together.")
        if backend.exists():
            raise FileExistsError(f"{backend.display} exists; a store is created in "
                                  "a new file (or an empty database schema).")
        meta = cls._describe(database)
        if tombstone_key is None:
            meta["tombstone_key"] = secrets.token_hex(32)
        else:
            key = _key_bytes(tombstone_key, "tombstone_key")
            meta["tombstone_key"] = None
            meta["tombstone_key_check"] = _key_check(key)
        con = backend.connect(create=True)
        try:
            con.begin_write(locked=False)
            cls._create_tables(con, meta)
            con.executemany("INSERT INTO meta VALUES (?, ?)",
                            [(k, json.dumps(v)) for k, v in meta.items()])
            rows = con.dialect.checked(
                meta, cls._rows(database, meta, range(database.n_samples)))
            con.executemany(_insert_sql(meta),
                            ((seq, *row) for seq, row in enumerate(rows, 1)))
            con.execute("INSERT INTO model VALUES (1, ?, ?, ?, ?)",
                        cls._model_row(model))
            con.commit()
        except BaseException:
            con.close()
            backend.discard()
            raise
        con.close()
        return cls(location, tombstone_key=tombstone_key)

    @staticmethod
    def _create_tables(con, meta):
        dialect = con.dialect
        columns = ", ".join(f"{name} {kind}".rstrip() for name, kind in
                            zip(_fields(meta), dialect.column_types(meta),
                                strict=True))
        for ddl in [
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
            f"CREATE TABLE records ({dialect.id_column(meta)}, {columns})",
            "CREATE TABLE model (one INTEGER PRIMARY KEY CHECK (one = 1), "
            f"version INTEGER, token TEXT, state {dialect.blob}, guarantee TEXT)",
            "CREATE TABLE log (edit INTEGER PRIMARY KEY, version_before "
            "INTEGER, version_after INTEGER, certificate TEXT)",
            *_request_tables(dialect),
        ]:
            con.execute(ddl)

    def _migrate(self, con):
        """Bring a schema-1 store (no requests, no tombstones) to schema 2."""
        con.begin_write()
        meta = self._read_meta(con)
        if meta.get("schema") == 1:
            for ddl in _request_tables(con.dialect):
                con.execute(ddl)
            key = secrets.token_hex(32)
            con.execute("INSERT INTO meta VALUES (?, ?)",
                        ("tombstone_key", json.dumps(key)))
            con.execute("UPDATE meta SET value = ? WHERE key = ?",
                        (json.dumps(SCHEMA), "schema"))
            meta.update(schema=SCHEMA, tombstone_key=key)
        elif meta.get("schema") != SCHEMA:
            raise ValueError(f"store schema {meta.get('schema')!r}; this skforget "
                             f"reads schemas 1 and {SCHEMA}.")
        con.commit()
        self._meta = meta

    @staticmethod
    def _describe(database):
        X, y = database.X, database.y
        if _is_frame(X):
            columns = [_column_spec(c, X[c]) for c in X.columns]
            kind, index_name = "frame", X.index.name
        elif hasattr(X, "toarray"):
            raise ValueError("the store keeps dense records: give a DataFrame or an "
                             "array, not a sparse matrix.")
        else:
            columns = [{"name": j, "dtype": str(X.dtype)} for j in range(X.shape[1])]
            kind, index_name = "array", None
        ids = np.asarray(database.ids)
        id_kind = "int" if ids.dtype.kind in "iu" else "str"
        if id_kind == "str" and not all(isinstance(i, str) for i in ids.tolist()):
            raise ValueError("record IDs must all be integers or all be strings.")
        return {"schema": SCHEMA, "kind": kind, "columns": columns,
                "index_name": index_name, "id_kind": id_kind,
                "target_name": getattr(y, "name", None),
                "target_dtype": str(np.asarray(y).dtype),
                "weighted": database.sample_weight is not None}

    @staticmethod
    def _rows(database, meta, positions):
        X, y = database.X, database.y
        ids = np.asarray(database.ids, dtype=object)
        y = np.asarray(y)
        w = database.sample_weight if meta.get("weighted") else None
        frame = meta["kind"] == "frame"
        # The target, then each column: each refuses what it would not return
        # as it was (a bool or a date in text, a fraction in integers).
        names = ["the target", *(f"column {c['name']!r}" for c in meta["columns"])]
        convert = [_converter(spec) for spec in
                   (meta["target_dtype"], *(c["dtype"] for c in meta["columns"]))]
        # Column by column: a row of a frame (X.iloc[i]) takes one dtype for
        # all its cells, and made a category of integers 2.0 beside a float.
        cells = ([X.iloc[:, j].to_numpy(dtype=object) for j in range(X.shape[1])]
                 if frame else None)
        for i in positions:
            rid = record_id(ids[i], meta["id_kind"])
            values = [y[i], *([c[i] for c in cells] if frame else X[i].tolist())]
            weight = () if w is None else (float(w[i]),)
            row = []
            for name, value, to_db in zip(names, values, convert, strict=True):
                try:
                    row.append(to_db(value))
                except TypeError as exc:
                    raise ValueError(f"record {rid!r}, {name}: cannot store {exc}.") \
                        from None
            yield (rid, row[0], *weight, *row[1:])

    @staticmethod
    def _model_row(model):
        version = model.database_version_
        guarantee = getattr(model, "privacy_guarantee_", None)
        return (version.number, version.token,
                pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL),
                None if guarantee is None else json.dumps(guarantee.to_dict()))

    # --- reading ----------------------------------------------------------------
    def _connect(self):
        return self._backend.connect()

    def _read_meta(self, con):
        try:
            if "meta" not in con.dialect.tables(con):
                raise ValueError("no meta table")
            meta = {k: json.loads(v) for k, v in con.all("SELECT * FROM meta")}
        except (self._backend.database_error, ValueError) as exc:
            raise ValueError(f"not a skforget record store: {exc}") from None
        if meta.get("schema") not in (1, SCHEMA):
            raise ValueError(f"store schema {meta.get('schema')!r}; this skforget "
                             f"reads schemas 1 and {SCHEMA}.")
        return meta

    def _read_version(self, con):
        number, token = con.one("SELECT version, token FROM model")
        return DatabaseVersion(token=token, number=number)

    def _read_database(self, con):
        meta = self._meta
        rows = con.all(f"SELECT id, {', '.join(_fields(meta))} FROM records "
                       "ORDER BY seq")
        # One kind of ID, as written (record_id): a mixed column fails here
        # rather than turn every ID into a string.
        ids = np.array([r[0] for r in rows],
                       dtype=np.int64 if meta["id_kind"] == "int" else object)
        y = np.array([r[1] for r in rows], dtype=meta["target_dtype"])
        first = 3 if meta.get("weighted") else 2
        w = (np.array([r[2] for r in rows], dtype=np.float64) if meta.get("weighted")
             else None)
        values = [r[first:] for r in rows]
        version = self._read_version(con)
        if meta["kind"] == "array":
            dtype = meta["columns"][0]["dtype"] if meta["columns"] else "float64"
            X = np.array(values, dtype=float).astype(dtype, copy=False).reshape(
                len(rows), len(meta["columns"]))
            return Database(X, y, ids=np.asarray(ids), sample_weight=w,
                            version=version)
        import pandas as pd

        index = pd.Index(ids, name=meta["index_name"])
        columns = {}
        for k, spec in enumerate(meta["columns"]):
            # Each column from its own values, with no inference across rows
            # (an object column of 1 and None would become 1.0 and NaN); NULL
            # comes back as None, which astype turns into NaN for floats.
            cells = [r[k] for r in values]
            if spec["dtype"] == "object":
                # A missing text cell was NaN in the frame written (None would
                # be an unknown category to a fitted one-hot encoder).
                cells = [np.nan if v is None else v for v in cells]
            column = pd.Series(cells, index=index, dtype=object)
            columns[spec["name"]] = column.astype(spec["dtype"])
        X = pd.DataFrame(columns, index=index)
        y = pd.Series(y, index=X.index, name=meta["target_name"])
        return Database(X, y, sample_weight=w, version=version)

    def _read_state(self, con):
        (state,) = con.one("SELECT state FROM model")
        return bytes(state)

    def _read_model(self, con, state=None):
        model = pickle.loads(self._read_state(con) if state is None else state)
        stored = self._read_version(con)
        if model.database_version_ != stored:
            raise ValueError(f"inconsistent store: the model serves "
                             f"{model.database_version_}, the records are {stored}.")
        return model

    def _reading(self, read):
        con = self._connect()
        try:
            con.begin_read()
            return read(con)
        finally:
            con.close()

    def _writing(self, write):
        """``write(con)`` in one write transaction, committed if it returns
        (closed without a commit, a failed one writes nothing)."""
        con = self._connect()
        try:
            con.begin_write()
            result = write(con)
            con.commit()
            return result
        finally:
            con.close()

    def database(self):
        """The current records, their IDs and version.

        Returns
        -------
        database : Database
        """
        return self._reading(self._read_database)

    def model(self):
        """The current model (unpickled from the store).

        Returns
        -------
        model : estimator or ForgetPipeline
        """
        return self._reading(self._read_model)

    def model_bytes(self):
        """The model as stored (pickle bytes): what an audit record's
        ``sha256_after`` is the SHA-256 of.

        Returns
        -------
        state : bytes
        """
        return self._reading(self._read_state)

    def log(self):
        """The certificates of the edits served, oldest first.

        Returns
        -------
        certificates : list of EditCertificate or PipelineEdit
            A pipeline with private preprocessing logs
            :class:`~skforget.accounting.PipelineEdit` certificates.
        """
        rows = self._reading(
            lambda con: con.all("SELECT certificate FROM log ORDER BY edit"))
        return [_certificate(json.loads(r[0])) for r in rows]

    def parse_id(self, text):
        """An ID typed on a command line, as the store keys it (int or str)."""
        if self._meta["id_kind"] == "int":
            # ASCII digits only: int() also reads "7_0" as 70, " 7 " and
            # other scripts' digits as 7, and a typo must not name another record.
            if re.fullmatch(r"-?[0-9]+", text) is None:
                raise ValueError(f"ID {text!r} is not an integer; this store's IDs "
                                 "are integers (digits 0-9 only).")
            return int(text)
        return text

    # --- serving ------------------------------------------------------------------
    def forget(self, ids):
        """Delete the records with these IDs: records, model and log in one transaction.

        Parameters
        ----------
        ids : sequence of IDs

        Returns
        -------
        certificate : EditCertificate
            The deletion certificate, also appended to :meth:`log`.
        """
        return self.edit(delete=ids)

    def edit(self, *, delete=None, replace=None, X_replace=None, y_replace=None,
             X_insert=None, y_insert=None, insert_ids=None,
             sample_weight_replace=None, sample_weight_insert=None):
        """Serve an edit by ID in one transaction.

        The records are read, an :class:`~skforget.EditRequest` (``by="id"``)
        is built on them, the model unlearns in memory, and then the records,
        the model, the log and the tombstones of the deleted IDs are written
        and committed together. Any failure before the commit (an unknown ID,
        the model refusing the edit, an error or a crash while writing) leaves
        the store as it was.

        Parameters
        ----------
        delete, replace, X_replace, y_replace, X_insert, y_insert, insert_ids
            As in :class:`~skforget.EditRequest`, with records named by ID.
            Records inserted without IDs (no ``insert_ids``, no index of
            their own) on an integer store are numbered past every current
            and every deleted ID: a deleted ID is never given to a new record
            unless you name it.
        sample_weight_replace, sample_weight_insert : array-like, default=None
            The new records' weights, required when the stored records carry
            weights (a store created from a :class:`~skforget.Database` with
            ``sample_weight``).

        Returns
        -------
        certificate : EditCertificate
        """
        self._tombstone_key()
        # The model's ledger entry is recorded once the store has committed
        # (privacy-accounting.md, 20.3): a failure before leaves it uncounted.
        with releasing(rollback=True):
            con = self._connect()
            try:
                # A write lock: no other writer between reading the version and
                # the commit, so two services cannot both serve the same version.
                con.begin_write()
                self._refuse_deleted_earlier(con, delete=delete, replace=replace)
                # New IDs of the store's kind, before any pass over the rows
                # (those read from X_insert's index are checked as written).
                if insert_ids is not None and len(insert_ids):
                    self._check_ids(list(insert_ids))
                elif self._numbered(X_insert):
                    # np.shape: a sparse block has no len().
                    insert_ids = self._next_ids(con, np.shape(X_insert)[0])
                served = self._serve(con, dict(
                    delete=delete, replace=replace, X_replace=X_replace,
                    y_replace=y_replace, X_insert=X_insert, y_insert=y_insert,
                    insert_ids=insert_ids,
                    sample_weight_replace=sample_weight_replace,
                    sample_weight_insert=sample_weight_insert))
                self._commit_release(con)
            finally:
                con.close()
        return served["certificate"]

    def _numbered(self, X_insert):
        """Whether the store numbers ``X_insert``'s records itself: an integer
        store, and no IDs given (no ``insert_ids``, no index of their own)."""
        if X_insert is None or self._meta["id_kind"] != "int" or \
                len(np.shape(X_insert)) != 2:
            return False   # (a block of another shape: EditRequest says so)
        return not (_is_frame(X_insert) and not _default_index(X_insert.index))

    def _next_ids(self, con, n):
        """``n`` integer IDs no record of this store ever had: on from the
        largest current one, past every ID whose tombstone says it was deleted.
        Numbering on from the largest current ID alone gave a deleted last
        record's ID to a new person and dropped its tombstone, so that the
        deleted person's next request deleted the new record."""
        largest = con.one("SELECT MAX(id) FROM records")
        candidate = 0 if largest is None or largest[0] is None else int(largest[0]) + 1
        ids = []
        while len(ids) < n:
            if con.one("SELECT 1 FROM tombstones WHERE id_hash = ?",
                       (self._id_hash(candidate),)) is None:
                ids.append(candidate)
            candidate += 1
        return ids

    def _refuse_deleted_earlier(self, con, **named):
        """Name an ID this store deleted earlier (the request would otherwise
        say it is not an ID of the database, as for one never known)."""
        for name, ids in named.items():
            if ids is None:
                continue
            if np.ndim(ids) == 0:       # one ID, a numpy scalar included
                ids = [ids]
            # Checked (type, range, NUL) before any query names them.
            for i in self._check_ids(ids):
                where = self._where(con, i)
                if isinstance(where, tuple):
                    request = "" if where[2] is None else f", request {where[2]!r}"
                    raise UnlearningError(
                        f"{name} names {i!r}, which this store deleted earlier "
                        f"(edit {where[1]}{request}): it is no longer a record.")

    def _serve(self, con, edit, request_of=None):
        """Serve ``edit`` (EditRequest keywords, by ID) inside the caller's
        write transaction; returns what an audit record needs."""
        database = self._read_database(con)
        state_before = self._read_state(con)
        model = self._read_model(con, state_before)
        request = EditRequest(database, by="id", **edit)
        # A warning the model raises before its pass is a gate an error filter
        # may close (a tuned model's edit, Section 20.3 (3)): raised as an
        # error here, it rolls the edit back (the requests wait, _serve_group).
        model.partial_unlearn(request)
        edited = request.apply()
        self._write_records(con, request, edited)
        state_after = self._write_model(con, model)
        guarantee = model.privacy_guarantee_
        certificate = guarantee.deletion
        self._write_log(con, certificate, request)
        deleted = np.asarray(request._ids)[request.delete].tolist()
        inserted = np.asarray(edited.ids)[edited.n_samples - request.n_inserted:]
        # A deleted ID inserted again is present again: no longer a tombstone.
        con.executemany("DELETE FROM tombstones WHERE id_hash = ?",
                        [(self._id_hash(i),) for i in inserted.tolist()])
        request_of = request_of or {}
        con.executemany("INSERT INTO tombstones VALUES (?, ?, ?)",
                        [(self._id_hash(i), certificate.index, request_of.get(i))
                         for i in deleted])
        return {"certificate": certificate, "guarantee": guarantee,
                "tuned": tuned_caveat(model),
                "version_before": request.version, "version_after": edited.version,
                "n_before": database.n_samples, "n_after": edited.n_samples,
                "sha256_before": _sha256(state_before),
                "sha256_after": _sha256(state_after)}

    def _write_records(self, con, request, edited):
        old_ids = np.asarray(request._ids)
        new_ids = np.asarray(edited.ids)
        con.executemany("DELETE FROM records WHERE id = ?",
                        [(_py(i),) for i in old_ids[request.delete]])
        position = {_py(i): k for k, i in enumerate(new_ids)}
        replaced = [position[_py(i)] for i in old_ids[request.replace]]
        inserted = range(len(new_ids) - request.n_inserted, len(new_ids))
        sets = ", ".join(f"{f} = ?" for f in _fields(self._meta))
        checked = con.dialect.checked
        con.executemany(f"UPDATE records SET {sets} WHERE id = ?",
                        [(*row[1:], row[0]) for row in checked(
                            self._meta, self._rows(edited, self._meta, replaced))])
        (last,) = con.one("SELECT COALESCE(MAX(seq), 0) FROM records")
        con.executemany(_insert_sql(self._meta),
                        ((seq, *row) for seq, row in enumerate(checked(
                            self._meta, self._rows(edited, self._meta, inserted)),
                            last + 1)))
        (count,) = con.one("SELECT COUNT(*) FROM records")
        if count != edited.n_samples:
            raise RuntimeError(f"the store would hold {count} records after the edit, "
                               f"not {edited.n_samples}; nothing was written.")

    def _write_model(self, con, model):
        row = self._model_row(model)
        con.execute("UPDATE model SET version = ?, token = ?, state = ?, guarantee = ?",
                    row)
        return row[2]

    def _write_log(self, con, certificate, request):
        con.execute("INSERT INTO log VALUES (?, ?, ?, ?)",
                    (certificate.index, request.version.number,
                     request.version_after.number,
                     json.dumps(certificate.to_dict())))

    def __repr__(self):
        return f"RecordStore({self.location!r})"


def forget(store, ids):
    """Serve a deletion request by ID against a store.

    The Python entry point of ``python -m skforget forget --store FILE --id ID``.

    Parameters
    ----------
    store : str, path-like or RecordStore
    ids : sequence of IDs, or one ID

    Returns
    -------
    certificate : EditCertificate
    """
    if not isinstance(store, RecordStore):
        store = RecordStore(store)
    if isinstance(ids, str) or not hasattr(ids, "__iter__"):
        ids = [ids]         # one ID, a numpy scalar included
    return store.forget(list(ids))
