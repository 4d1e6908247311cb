# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A versioned database: the data owner's records, their IDs and a version.

A model can only check a request against what it keeps, and it keeps no rows.
A :class:`Database` carries a :class:`DatabaseVersion`: a counter of the edits
applied since it was created, and a random token drawn for each version (when
the database is created, and when a request that produces the next version is
built). A model fitted on it keeps those two public values and refuses a
request built on any other database, a stale copy of the same size, or a
version it never served (two requests built on the same version lead to two
versions with the same number and different tokens). The token is random,
never a digest of the rows: it says nothing about them.
"""

import numbers
import secrets
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from skforget._utils import check_weights
from skforget._validation import user_stacklevel, warn
from skforget.exceptions import UnlearningError


def _is_frame(X):
    return hasattr(X, "iloc") and hasattr(X, "columns")


def _as_id(value):
    """A lookup key: numpy scalars become the Python scalars ``tolist`` gives."""
    return value.item() if isinstance(value, np.generic) else value


def _describe(value):
    return repr(_as_id(value))


@dataclass(frozen=True, slots=True)
class DatabaseVersion:
    """Which database, and which version of it, a request or a model refers to.

    Attributes
    ----------
    token : str
        Random hexadecimal string (:func:`secrets.token_hex`) drawn for this
        version alone. It tells two databases, or two versions with the same
        number, apart and carries no information about their rows.
    number : int
        Number of edits applied since the database was created.

    Examples
    --------
    >>> from skforget import DatabaseVersion
    >>> v = DatabaseVersion(token="9f2c41e07a6b3d58", number=2)
    >>> str(v)
    'version 2 (token 9f2c41e07a6b3d58)'
    >>> v.successor().number
    3
    """

    token: str
    number: int

    def __post_init__(self):
        if not isinstance(self.token, str) or not self.token:
            raise ValueError(f"token must be a non-empty str, got {self.token!r}.")
        number = self.number
        if (not isinstance(number, numbers.Integral) or isinstance(number, bool)
                or number < 0):
            raise ValueError(f"number must be a non-negative int, got {self.number!r}.")

    @classmethod
    def new(cls):
        """Version 0 of a new database, with a fresh random token."""
        return cls(token=secrets.token_hex(8), number=0)

    def successor(self):
        """The version after one more edit, with a fresh token."""
        return DatabaseVersion(token=secrets.token_hex(8), number=self.number + 1)

    def __str__(self):
        return f"version {self.number} (token {self.token})"


def check_unique_ids(ids, where):
    """Map each ID to its position; refuse duplicate or unhashable IDs."""
    lookup = {}
    for pos, value in enumerate(ids.tolist()):
        try:   # NaN, NaT and pd.NA equal nothing: never deletable by ID
            missing = bool(value != value)
        except TypeError:   # pd.NA has no truth value
            missing = True
        if missing:
            raise UnlearningError(f"{where}[{pos}]={value!r} is not a valid record "
                                  "ID (a missing value matches no request).")
        try:
            first = lookup.setdefault(value, pos)
        except TypeError:
            raise UnlearningError(f"{where}[{pos}]={value!r} is not a valid record ID "
                                  "(IDs must be hashable: str or int).") from None
        if first != pos:
            raise UnlearningError(f"{where} holds the ID {value!r} twice (rows {first} "
                                  f"and {pos}); record IDs must be unique.")
    return lookup


class Database:
    """The data owner's records, their IDs and a version.

    A database value that :class:`EditRequest` accepts in place of ``(X, y)``
    and whose requests' :meth:`EditRequest.apply` returns the next version.
    Fit a model on it (``model.fit(db)``, also for a
    :class:`~skforget.pipeline.ForgetPipeline`) and the model keeps its
    :class:`DatabaseVersion`; ``partial_unlearn`` then
    refuses a request built on any database other than the model's current
    one, whatever its size. The model keeps only the version, never the rows.

    The database holds references to ``X`` and ``y``, not copies: do not modify
    them in place (edit through requests).

    Parameters
    ----------
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        The records. A DataFrame's index holds their IDs.
    y : array-like of shape (n_samples,)
        Their targets. A Series with the default index is re-indexed by the
        IDs; any other index must equal them.
    ids : array-like of shape (n_samples,), default=None
        Record IDs (unique, hashable) when ``X`` is not a DataFrame. Default:
        ``0, 1, ..., n_samples - 1``, which then stay with their records
        through later edits (they are IDs, not positions).
    version : DatabaseVersion, default=None
        To restore a saved database with its version (a record store does
        this). Default: version 0 with a new random token.
    sample_weight : array-like of shape (n_samples,), default=None
        A weight per record (finite, nonnegative), part of the record: fits and
        edits on this database use it. None: every record weighs 1.

    Attributes
    ----------
    X, y : the records and targets
    sample_weight : ndarray of shape (n_samples,) or None
    ids : Index or ndarray of shape (n_samples,)
        The IDs: ``X.index`` for a DataFrame, otherwise a read-only array.
    version : DatabaseVersion
    n_samples : int

    Examples
    --------
    >>> import numpy as np
    >>> from skforget import Database, EditRequest
    >>> db = Database(np.eye(3), [0, 1, 0], ids=["ann", "bob", "eve"])
    >>> db.version.number
    0
    >>> db2 = EditRequest(db, delete=["bob"], by="id").apply()
    >>> db2.ids.tolist(), db2.version.number
    (['ann', 'eve'], 1)
    >>> X, y = db2                       # unpacks like (X, y)
    """

    def __init__(self, X, y, *, ids=None, version=None, sample_weight=None):
        X = check_records(X, y)
        sample_weight = check_weights(sample_weight, X.shape[0], "sample_weight")
        n = X.shape[0]
        if _is_frame(X):
            if ids is not None:
                raise UnlearningError("ids is given for a DataFrame, whose index holds "
                                      "the IDs: set the index instead "
                                      "(X.set_index(...)).")
            id_array = np.asarray(X.index)
        elif ids is None:
            id_array = np.arange(n)
        else:
            id_array = np.asarray(ids)
            if id_array.ndim != 1 or len(id_array) != n:
                raise UnlearningError(f"ids must be 1-D with one ID per row of X "
                                      f"({n}), got shape {id_array.shape}.")
        self._lookup = check_unique_ids(id_array, "X.index" if _is_frame(X) else "ids")
        if hasattr(y, "iloc") and _is_frame(X):
            y = _align_targets(y, X.index)
        elif not hasattr(y, "iloc"):
            y = np.asarray(y)
        if version is None:
            version = DatabaseVersion.new()
        elif not isinstance(version, DatabaseVersion):
            raise TypeError("version must be a skforget.DatabaseVersion, got "
                            f"{type(version).__name__}.")
        id_array = id_array.copy()
        id_array.setflags(write=False)
        self.X, self.y, self._ids, self.version = X, y, id_array, version
        self.sample_weight = sample_weight

    @property
    def ids(self):
        return self.X.index if _is_frame(self.X) else self._ids

    @property
    def n_samples(self):
        return self.X.shape[0]

    def positions(self, ids, name="ids"):
        """Positions of the records with these IDs (errors name the unknown ID).

        Parameters
        ----------
        ids : sequence of hashable
        name : str, default="ids"
            How the caller's argument is called, for error messages.

        Returns
        -------
        positions : ndarray of int
        """
        return ids_to_positions(ids, name, self._lookup)

    def __iter__(self):
        # ``X, y = db`` as with the tuple that apply() returns without a Database.
        return iter((self.X, self.y))

    def __repr__(self):
        return (f"Database(n_samples={self.n_samples}, version={self.version.number}, "
                f"token={self.version.token!r})")


def check_records(X, y):
    """``X`` as a 2-D array, CSR matrix or DataFrame, with one target per row."""
    if not (sp.issparse(X) or _is_frame(X)):
        X = np.asarray(X)
    if sp.issparse(X) and X.format != "csr":
        X = X.tocsr()
    if len(X.shape) != 2:
        raise UnlearningError(f"X must be 2-D, got shape {X.shape}.")
    n = X.shape[0]
    if np.ndim(y) != 1 or len(y) != n:
        raise UnlearningError(f"y must be 1-D with one entry per row of X ({n}), "
                              f"got shape {np.shape(y)}.")
    return X


def _align_targets(y, index):
    """A target Series indexed by the record IDs."""
    if y.index.equals(index):
        return y
    default = np.array_equal(np.asarray(y.index), np.arange(len(y)))
    if not default:
        raise UnlearningError("y's index differs from X's: give y with the same index "
                              "(the record IDs) or with the default one.")
    return y.set_axis(index)


def ids_to_positions(values, name, lookup):
    """Positions of the IDs in ``values``; errors name the entry at fault."""
    if values is None:
        return np.empty(0, dtype=np.intp)
    if isinstance(values, str | bytes) or np.ndim(values) == 0:
        values = [values]
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) \
        else values
    if arr.ndim != 1:
        raise UnlearningError(f"{name} must be a 1-D sequence of record IDs, got an "
                              f"array of shape {arr.shape}.")
    out = np.empty(len(arr), dtype=np.intp)
    seen = {}
    for k, value in enumerate(arr.tolist()):
        try:
            pos = lookup.get(value)
        except TypeError:
            pos = None
        if pos is None:
            raise UnlearningError(f"{name}[{k}]={value!r} is not an ID of the "
                                  "database.")
        if pos in seen:
            raise UnlearningError(f"{name}[{k}]={value!r} names a record that "
                                  f"{name}[{seen[pos]}] already names; each record "
                                  "may be edited once.")
        seen[pos] = k
        out[k] = pos
    return out


def database_weights(X, sample_weight):
    """The sample weights of ``fit(X, y, sample_weight)`` or of ``fit(database)``
    (a Database carries its own; giving them twice is an error)."""
    if isinstance(X, Database) and X.sample_weight is not None:
        if sample_weight is not None:
            raise ValueError("sample_weight is given twice: the Database holds the "
                             "records' weights.")
        return X.sample_weight
    return sample_weight


def unwrap_database(X, y):
    """``(X, y, version)`` from ``fit(X, y)`` or ``fit(database)``.

    ``version`` is the database's :class:`DatabaseVersion`, or None for plain
    arrays (the model then checks later requests by size only).
    """
    if isinstance(X, Database):
        if y is not None:
            raise ValueError("y is given twice: a Database holds its targets, so fit "
                             "with fit(database).")
        return X.X, X.y, X.version
    return X, y, None


def check_version(requested, current, *, warn_unversioned=True):
    """Refuse a request built on any database but the model's current one.

    Parameters
    ----------
    requested : DatabaseVersion or None
        The request's (None: built on plain arrays).
    current : DatabaseVersion or None
        The model's (None: fitted on plain arrays, so only sizes are checked).
    warn_unversioned : bool, default=True
        Warn when neither has a version: nothing then tells the request's
        arrays from other arrays of the same size. False where the caller has
        already checked (a ``ForgetPipeline`` hands its final step a request
        on arrays it has just mapped from a checked one).
    """
    if requested is None and current is None:
        if warn_unversioned:
            warn(
                "The model was fitted on plain arrays or a DataFrame, not on a "
                "skforget.Database, so it checks an edit request by the number of "
                "rows only: a request built on other rows of the same size is "
                "accepted, and records that differ from the ones "
                "trained on would be certified as kept, not as replaced. Fit on a "
                "skforget.Database and build each request on the database the "
                "previous apply() returned: every request is then checked against "
                "the model's version.", UserWarning, stacklevel=user_stacklevel())
        return
    if current is None:
        raise UnlearningError(
            f"The request was built on {requested}, but the model was fitted on "
            "plain arrays (or a DataFrame, not a Database) and cannot tell whether "
            "that is its current database. Fit it on the Database, "
            "model.fit(database), so it can check every request.")
    if requested is None:
        raise UnlearningError(
            f"The model serves {current}, but the request was built on plain arrays. "
            "Build it on the database that the previous request's apply() returned "
            "(EditRequest(database, ...)) so the model can check it is current.")
    if requested == current:
        return
    if requested.number < current.number:
        why = (f"stale: the model has served {current.number - requested.number} "
               "edit(s) since (or it is another database)")
    elif requested.number > current.number:
        why = ("ahead of the model: it was applied without being served by this "
               "model (or it is another database)")
    else:
        why = ("another database, or a version this model never served (another "
               "request built on the same version was applied instead)")
    raise UnlearningError(
        f"The request was built on {requested}, but the model's current database is "
        f"{current}; the request is {why}, whatever its size. Build it on the "
        "database that the last served request's apply() returned.")
