# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A record store for a deletion service: records, model and certificates in SQLite.

One file (standard-library :mod:`sqlite3`) holds what a deletion service needs
between requests: the records keyed by ID, the fitted model (or
:class:`~skforget.pipeline.ForgetPipeline`) and the log of edit certificates.
Serving a request updates the three in **one transaction**: if anything fails
or the process dies half-way, SQLite's rollback journal restores the previous
consistent state the next time the file is opened.

The store keeps nothing that the model must not keep, beyond the records
themselves (which the data owner holds anyway) and the public certificates:
no request, no deleted ID, no timestamp, no old model, no category list of a
column. Deleted records are overwritten in the file (``PRAGMA
secure_delete``), not left in free pages.

The model is stored with :mod:`pickle`: open only store files you trust.
"""

import json
import pickle
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import numpy as np

from skforget._database import Database, DatabaseVersion, _is_frame
from skforget._edits import EditRequest
from skforget.accounting import EditCertificate

__all__ = ["RecordStore", "forget"]

SCHEMA = 1


def _py(value):
    """A value SQLite can store: Python scalars, NaN and None as NULL."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, str | int | bytes):
        return value
    if isinstance(value, float):
        return None if value != value else value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"cannot store a value of type {type(value).__name__}")


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
    marks = ", ".join("?" * len(_fields(meta)))
    return f"INSERT INTO records VALUES (NULL, ?, {marks})"


class RecordStore:
    """A SQLite file with the records, the model's state and the certificates.

    Create it once with :meth:`create` from a :class:`~skforget.Database` and
    a model fitted on it; open it later with ``RecordStore(path)``; serve
    requests by ID with :meth:`forget` or :meth:`edit`, each in one
    transaction.

    Parameters
    ----------
    path : str or path-like
        An existing store file.

    Attributes
    ----------
    path : Path

    See Also
    --------
    forget : Serve a deletion request against a store file (also ``python -m
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
    >>> certificate = store.forget(["p3", "p17"])
    >>> certificate.n_deleted, store.database().n_samples, len(store.log())
    (2, 58, 1)
    """

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no record store at {self.path}; create one with "
                                    "RecordStore.create(path, database, model).")
        with closing(self._connect()) as con:
            self._meta = self._read_meta(con)

    # --- creation ---------------------------------------------------------------
    @classmethod
    def create(cls, path, database, model):
        """Write a new store: the records, the fitted model and an empty log.

        Parameters
        ----------
        path : str or path-like
            A file that does not exist yet.
        database : Database
            The records (a DataFrame or a dense array) with their IDs.
        model : estimator or ForgetPipeline
            Fitted on ``database`` (``model.fit(database)``), so that its
            ``database_version_`` is the database's version.

        Returns
        -------
        store : RecordStore
        """
        path = Path(path)
        if not isinstance(database, Database):
            raise TypeError("database must be a skforget.Database, got "
                            f"{type(database).__name__}.")
        version = getattr(model, "database_version_", None)
        if version != database.version:
            raise ValueError(
                f"The model serves {version or 'plain arrays'}, not the database's "
                f"{database.version}: fit it on this database, model.fit(database), "
                "before storing them together.")
        if path.exists():
            raise FileExistsError(f"{path} exists; a store is created in a new file.")
        meta = cls._describe(database)
        con = sqlite3.connect(path, isolation_level=None)
        try:
            cls._pragmas(con)
            con.execute("BEGIN IMMEDIATE")
            con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            # id has no declared type, so an ID is stored as given (int or str).
            con.execute(f"CREATE TABLE records (seq INTEGER PRIMARY KEY, "
                        f"id UNIQUE NOT NULL, {', '.join(_fields(meta))})")
            con.execute("CREATE TABLE model (one INTEGER PRIMARY KEY CHECK (one = 1), "
                        "version INTEGER, token TEXT, state BLOB, guarantee TEXT)")
            con.execute("CREATE TABLE log (edit INTEGER PRIMARY KEY, version_before "
                        "INTEGER, version_after INTEGER, certificate TEXT)")
            con.executemany("INSERT INTO meta VALUES (?, ?)",
                            [(k, json.dumps(v)) for k, v in meta.items()])
            rows = cls._rows(database, meta, range(database.n_samples))
            con.executemany(_insert_sql(meta), rows)
            con.execute("INSERT INTO model VALUES (1, ?, ?, ?, ?)",
                        cls._model_row(model))
            con.execute("COMMIT")
        except BaseException:
            con.close()
            path.unlink(missing_ok=True)
            raise
        con.close()
        return cls(path)

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
        ids = np.asarray(database.ids)
        y = np.asarray(y)
        w = database.sample_weight if meta.get("weighted") else None
        frame = meta["kind"] == "frame"
        for i in positions:
            values = X.iloc[i].tolist() if frame else X[i].tolist()
            weight = () if w is None else (float(w[i]),)
            try:
                yield (_py(ids[i]), _py(y[i]), *weight, *map(_py, values))
            except TypeError as exc:
                raise ValueError(f"record {ids[i]!r}: {exc}") from None

    @staticmethod
    def _model_row(model):
        version = model.database_version_
        guarantee = getattr(model, "privacy_guarantee_", None)
        return (version.number, version.token,
                pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL),
                None if guarantee is None else json.dumps(guarantee.to_dict()))

    # --- reading ----------------------------------------------------------------
    def _connect(self):
        con = sqlite3.connect(self.path, isolation_level=None)
        self._pragmas(con)
        return con

    @staticmethod
    def _pragmas(con):
        # Overwrite deleted records instead of leaving them in free pages, and
        # keep the rollback journal (a WAL would hold old pages after commit).
        con.execute("PRAGMA secure_delete = ON")
        con.execute("PRAGMA journal_mode = DELETE")

    @staticmethod
    def _read_meta(con):
        try:
            meta = {k: json.loads(v) for k, v in con.execute("SELECT * FROM meta")}
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"not a skforget record store: {exc}") from None
        if meta.get("schema") != SCHEMA:
            raise ValueError(f"store schema {meta.get('schema')!r}; this skforget "
                             f"reads schema {SCHEMA}.")
        return meta

    def _read_version(self, con):
        number, token = con.execute("SELECT version, token FROM model").fetchone()
        return DatabaseVersion(token=token, number=number)

    def _read_database(self, con):
        meta = self._meta
        rows = con.execute(f"SELECT id, {', '.join(_fields(meta))} FROM records "
                           "ORDER BY seq").fetchall()
        ids = [r[0] for r in rows]
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

        names = [c["name"] for c in meta["columns"]]
        X = pd.DataFrame.from_records(values, columns=names,
                                      index=pd.Index(ids, name=meta["index_name"]))
        for spec in meta["columns"]:
            # NULL comes back as None, which astype turns into NaN for floats.
            X[spec["name"]] = X[spec["name"]].astype(spec["dtype"])
        y = pd.Series(y, index=X.index, name=meta["target_name"])
        return Database(X, y, sample_weight=w, version=version)

    def _read_model(self, con):
        (state,) = con.execute("SELECT state FROM model").fetchone()
        model = pickle.loads(state)
        stored = self._read_version(con)
        if model.database_version_ != stored:
            raise ValueError(f"inconsistent store: the model serves "
                             f"{model.database_version_}, the records are {stored}.")
        return model

    def database(self):
        """The current records, their IDs and version.

        Returns
        -------
        database : Database
        """
        with closing(self._connect()) as con:
            return self._read_database(con)

    def model(self):
        """The current model (unpickled from the store).

        Returns
        -------
        model : estimator or ForgetPipeline
        """
        with closing(self._connect()) as con:
            return self._read_model(con)

    def log(self):
        """The certificates of the edits served, oldest first.

        Returns
        -------
        certificates : list of EditCertificate
        """
        with closing(self._connect()) as con:
            rows = con.execute("SELECT certificate FROM log ORDER BY edit").fetchall()
        return [EditCertificate(**json.loads(r[0])) for r in rows]

    def parse_id(self, text):
        """An ID typed on a command line, as the store keys it (int or str)."""
        if self._meta["id_kind"] == "int":
            try:
                return int(text)
            except ValueError:
                raise ValueError(f"ID {text!r} is not an integer; this store's IDs "
                                 "are integers.") from None
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
        the model and the log are written and committed together. Any
        failure before the commit (an unknown ID, the model refusing the
        edit, an error or a crash while writing) leaves the store as it was.

        Parameters
        ----------
        delete, replace, X_replace, y_replace, X_insert, y_insert, insert_ids
            As in :class:`~skforget.EditRequest`, with records named by ID.
        sample_weight_replace, sample_weight_insert : array-like, default=None
            The new records' weights, required when the stored records carry
            weights (a store created from a :class:`~skforget.Database` with
            ``sample_weight``).

        Returns
        -------
        certificate : EditCertificate
        """
        con = self._connect()
        try:
            # IMMEDIATE: no other writer between reading the version and the
            # commit, so two services cannot both serve the same version.
            con.execute("BEGIN IMMEDIATE")
            database = self._read_database(con)
            model = self._read_model(con)
            request = EditRequest(database, delete=delete, replace=replace,
                                  X_replace=X_replace, y_replace=y_replace,
                                  X_insert=X_insert, y_insert=y_insert, by="id",
                                  insert_ids=insert_ids,
                                  sample_weight_replace=sample_weight_replace,
                                  sample_weight_insert=sample_weight_insert)
            model.partial_unlearn(request)
            edited = request.apply()
            self._write_records(con, request, edited)
            self._write_model(con, model)
            certificate = model.privacy_guarantee_.deletion
            self._write_log(con, certificate, request)
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        finally:
            con.close()
        return certificate

    def _write_records(self, con, request, edited):
        old_ids = np.asarray(request._ids)
        new_ids = np.asarray(edited.ids)
        con.executemany("DELETE FROM records WHERE id = ?",
                        [(_py(i),) for i in old_ids[request.delete]])
        position = {_py(i): k for k, i in enumerate(new_ids)}
        replaced = [position[_py(i)] for i in old_ids[request.replace]]
        inserted = range(len(new_ids) - request.n_inserted, len(new_ids))
        sets = ", ".join(f"{f} = ?" for f in _fields(self._meta))
        con.executemany(f"UPDATE records SET {sets} WHERE id = ?",
                        [(*row[1:], row[0])
                         for row in self._rows(edited, self._meta, replaced)])
        con.executemany(_insert_sql(self._meta),
                        self._rows(edited, self._meta, inserted))
        (count,) = con.execute("SELECT COUNT(*) FROM records").fetchone()
        if count != edited.n_samples:
            raise RuntimeError(f"the store would hold {count} records after the edit, "
                               f"not {edited.n_samples}; nothing was written.")

    def _write_model(self, con, model):
        con.execute("UPDATE model SET version = ?, token = ?, state = ?, guarantee = ?",
                    self._model_row(model))

    def _write_log(self, con, certificate, request):
        con.execute("INSERT INTO log VALUES (?, ?, ?, ?)",
                    (certificate.index, request.version.number,
                     request.version_after.number,
                     json.dumps(certificate.to_dict())))

    def __repr__(self):
        return f"RecordStore({str(self.path)!r})"


def forget(store, ids):
    """Serve a deletion request by ID against a store file.

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
    if isinstance(ids, str | int):
        ids = [ids]
    return store.forget(list(ids))


def add_commands(sub):
    """Add ``forget`` and ``show`` to the ``python -m skforget`` command line."""
    run = sub.add_parser("forget", help="delete records by ID from a record store, "
                                        "in one transaction")
    run.add_argument("--store", required=True, help="the store file (SQLite)")
    run.add_argument("--id", action="append", required=True, dest="ids",
                     metavar="ID", help="ID of a record to delete (repeat for "
                                        "several, served as one request)")
    show = sub.add_parser("show", help="summarise a record store: records, version, "
                                       "guarantee")
    show.add_argument("--store", required=True, help="the store file (SQLite)")


def run_command(args):
    """Run a store command parsed by :func:`add_commands`; returns the exit code."""
    try:
        store = RecordStore(args.store)
        if args.command == "forget":
            certificate = store.forget([store.parse_id(text) for text in args.ids])
            print(f"Forgot {len(args.ids)} record(s) in {store.path}.")
            print(certificate)
        else:
            database = store.database()
            print(f"{store.path}: {database.n_samples} records, {database.version}, "
                  f"{len(store.log())} edit(s) served.")
        print(store.model().privacy_guarantee_)
    except (OSError, ValueError) as exc:
        # UnlearningError is a ValueError: an unknown ID, a refused edit.
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
