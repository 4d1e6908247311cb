# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Edit requests: which records of a database to delete, replace and insert."""

import numbers

import numpy as np
import scipy.sparse as sp

from skforget._database import (
    Database,
    _is_frame,
    check_records,
    check_unique_ids,
    ids_to_positions,
)
from skforget._edit_blocks import (
    _check_block,
    _default_index,
    _insert_ids,
    non_finite_row,
    numeric_frame,
)
from skforget._utils import check_weights, no_interrupts
from skforget._validation import label_codes
from skforget.exceptions import (
    UnlearningError,
)


def _default_by(ids, delete, replace):
    """``by`` when the caller gives none: positions, unless the records have
    IDs that are not their positions and the request names records (a trial
    deleted the row at position 539 for the person with ID 539, and the
    certificate said one record was deleted)."""
    names_records = any(v is not None and np.size(v) for v in (delete, replace))
    if ids is None or not names_records or _ids_are_positions(ids):
        return "position"
    raise UnlearningError(
        "Say by='id' or by='position': this database's records have IDs that "
        "are not their row positions (a DataFrame's index, a Database's ids=, "
        "or IDs kept through an earlier edit), so delete= and replace= could "
        "name either. by='id' names records by their IDs, as a person's "
        "request does; by='position' names rows 0 to n_samples - 1.")


def _ids_are_positions(ids):
    return len(ids) == 0 or (np.issubdtype(np.asarray(ids).dtype, np.integer)
                             and _default_index(ids))


def _as_indices(values, name, n_rows):
    """Validate a list of row indices: integers in [0, n_rows), no duplicates."""
    if values is None:
        return np.empty(0, dtype=np.intp)
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        values = [values]
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise UnlearningError(f"{name} must be a 1-D sequence of row indices, got an "
                              f"array of shape {arr.shape}.")
    if arr.size == 0:
        return np.empty(0, dtype=np.intp)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        for pos, value in enumerate(arr.tolist()):
            if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                    or not float(value).is_integer()):
                hint = (" (to name records by ID, pass by='id')"
                        if isinstance(value, str) else "")
                raise UnlearningError(f"{name}[{pos}]={value!r} is not an integer "
                                      f"row index{hint}.")
        arr = arr.astype(np.int64)
    arr = arr.astype(np.intp)
    bad = np.flatnonzero((arr < 0) | (arr >= n_rows))
    if bad.size:
        pos = int(bad[0])
        raise UnlearningError(f"{name}[{pos}]={int(arr[pos])} is out of range for a "
                              f"database of {n_rows} rows (valid: 0 to {n_rows - 1}; "
                              "negative indices are not accepted).")
    order = np.argsort(arr, kind="stable")
    dup = np.flatnonzero(arr[order][1:] == arr[order][:-1])
    if dup.size:
        pos = int(order[dup[0] + 1])
        raise UnlearningError(f"{name}[{pos}]={int(arr[pos])} names a row that "
                              f"{name} already names; each row may be edited once.")
    return arr


class _EditCounts:
    """Public counts of an edit request (in memory or on a sharded database):
    ``_delete`` and ``_replace`` positions, ``X_insert`` rows."""

    @staticmethod
    def size_of(delete, replace, n_insert):
        return len(delete) + len(replace) + (n_insert or 0)

    def _refuse_empty(self, n_insert):
        if self.size_of(self._delete, self._replace, n_insert) == 0:
            raise UnlearningError("the edit request is empty: name rows to delete or "
                                  "replace, or records to insert.")

    @property
    def n_deleted(self):
        return len(self._delete)

    @property
    def n_replaced(self):
        return len(self._replace)

    @property
    def n_inserted(self):
        return 0 if self.X_insert is None else self.X_insert.shape[0]

    @property
    def size(self):
        """Rows the request names (deleted, replaced and inserted)."""
        return self.n_deleted + self.n_replaced + self.n_inserted

    def _check_finite_rows(self):
        """Refuse a missing value in the new rows of a table of numbers, for a
        model that reads the records as they are (a pipeline imputes them,
        and maps the records before its model sees a request)."""
        for name, block in (("X_replace", self.X_replace), ("X_insert", self.X_insert)):
            if block is None or not _is_frame(block) or not numeric_frame(block):
                continue
            row = non_finite_row(block)
            if row is not None:
                raise UnlearningError(
                    f"{name} row {row} contains NaN: the model reads the records "
                    "as they are and takes no missing value (a private "
                    "pipeline's steps impute them).")


class EditRequest(_EditCounts):
    """A batch of edits to a database: deletions, replacements and insertions.

    The request names records of the *current* database (the one the model
    was fitted on, or the one returned by the previous edit), by position or
    by ID, and carries the new records. It is validated when built, and
    :meth:`apply` returns the edited database: replaced records stay in place,
    deleted ones are removed and inserted ones come last; a DataFrame keeps its
    index (the record IDs). The request belongs to the caller, who owns the
    data; estimators read it and never keep it.

    Built on a :class:`Database`, the request carries the database's version:
    a model fitted on that database refuses it unless it is the model's
    current version, and :meth:`apply` returns the next version.

    Parameters
    ----------
    X : {array-like, sparse matrix, DataFrame, Database}
        The current database, of shape (n_samples, n_features). A DataFrame's
        index holds the record IDs; a :class:`Database` holds records,
        targets, IDs and version.
    y : array-like of shape (n_samples,), default=None
        Its targets (omit them when ``X`` is a :class:`Database`).
    delete : sequence of int or of IDs, default=None
        Records to remove.
    replace : sequence of int or of IDs, default=None
        Records to overwrite with ``X_replace`` / ``y_replace``. The old
        record counts as deleted; the ID stays.
    X_replace, y_replace : array-like, default=None
        The replacing records, one per entry of ``replace``.
    X_insert, y_insert : array-like, default=None
        New records to add.
    by : {"position", "id"} or None, default=None
        Whether ``delete`` and ``replace`` hold row positions (0 to
        ``n_samples - 1``) or record IDs (a DataFrame's index, or the IDs of
        a :class:`Database`). None: positions where the records' IDs are
        their positions (no IDs, the default index, a new ``Database``);
        where they are not (IDs from an index or ``ids=``, or kept through an
        earlier edit), ``delete`` or ``replace`` without ``by`` is refused,
        since ``delete=[539]`` could name either the record with ID 539 or
        the row at position 539.
    insert_ids : sequence, default=None
        IDs of the inserted records. Default: ``X_insert``'s index if it is a
        DataFrame with a non-default index; otherwise, when the IDs are
        integers, the next integers after the largest current ID.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the current database's records (finite, nonnegative) when
        it is given as arrays; a :class:`Database` carries its own. None: every
        record weighs 1.
    sample_weight_replace, sample_weight_insert : array-like, default=None
        Weights of the replacing and inserted records; required when the
        database has weights.
    in_place : bool, default=False
        Let :meth:`apply` edit ``X`` and ``y`` in place instead of copying
        them: the replacing records are written over the replaced rows, the
        last kept rows move into the deleted rows' places, and ``apply``
        returns views of the first ``n_samples_after`` rows (``O(r d)`` work
        for ``r`` edited rows, no copy of the database; the kept rows' order
        changes). For NumPy arrays (writeable ``X`` of 2 dimensions, ``y`` of
        one) without insertions or sample weights, and replacements whose
        values ``X``'s and ``y``'s dtypes keep exactly. A ``partial_unlearn``
        that passes over the data applies the request this way and, if it
        fails or is interrupted, puts every row back with the model: the
        caller's arrays end as they were. Once the edit is served (or
        ``apply`` is called by the owner), the rows past ``n_samples_after``,
        which held the deleted records and stale copies of the moved ones, are
        overwritten with zeros and the request keeps no copy of any row. The
        returned views keep the whole original buffer alive: ``X_new.copy()``
        frees it.

    Attributes
    ----------
    n_deleted, n_replaced, n_inserted : int
    size : int
        Total records the request names (deleted + replaced + inserted).
    n_samples_before, n_samples_after : int
    version : DatabaseVersion or None
        Version of the database the request was built on (None without a
        :class:`Database`).

    Examples
    --------
    >>> import numpy as np
    >>> from skforget import EditRequest
    >>> X = np.arange(8.0).reshape(4, 2)
    >>> y = np.array([0, 1, 0, 1])
    >>> edit = EditRequest(X, y, delete=[1], X_insert=[[9.0, 9.0]], y_insert=[1])
    >>> X_new, y_new = edit.apply()
    >>> X_new.tolist(), y_new.tolist()
    ([[0.0, 1.0], [4.0, 5.0], [6.0, 7.0], [9.0, 9.0]], [0, 0, 1, 1])

    By ID on a DataFrame, whose index survives the edit:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [31, 45, 27]}, index=["ann", "bob", "eve"])
    >>> X_new, y_new = EditRequest(df, [0, 1, 0], delete=["bob"], by="id").apply()
    >>> X_new.index.tolist()
    ['ann', 'eve']
    """

    def __init__(self, X, y=None, *, delete=None, replace=None, X_replace=None,
                 y_replace=None, X_insert=None, y_insert=None, by=None,
                 insert_ids=None, sample_weight=None, sample_weight_replace=None,
                 sample_weight_insert=None, in_place=False):
        database = None
        if isinstance(X, Database):
            if y is not None:
                raise UnlearningError("y is given twice: a Database holds its targets, "
                                      "so build the request as EditRequest(database, "
                                      "...).")
            if sample_weight is not None:
                raise UnlearningError("sample_weight is given twice: a Database holds "
                                      "its records' weights.")
            database = X
            sample_weight = X.sample_weight
            X, y, ids, lookup = X.X, X.y, X._ids, X._lookup
        else:
            if y is None:
                raise UnlearningError("y is missing: give the database's targets, "
                                      "EditRequest(X, y, ...), or a skforget.Database.")
            X = check_records(X, y)
            # A DataFrame's index holds the IDs. A non-unique one (after a
            # concat, say) is no key: such a request names rows by position and
            # apply() numbers the rows afresh, as before record IDs existed.
            ids = (np.asarray(X.index) if _is_frame(X)
                   and (by == "id" or X.index.is_unique) else None)
            lookup = None
        n = X.shape[0]
        if by is None:
            # A frame's index names its records even where it is not unique
            # (a person with two rows): positions only if it is the default.
            by = _default_by(np.asarray(X.index) if _is_frame(X) else ids,
                             delete, replace)
        if by not in ("position", "id"):
            raise UnlearningError(f"by must be 'position' or 'id', got {by!r}.")
        if ids is not None and lookup is None and (by == "id" or X_insert is not None):
            lookup = check_unique_ids(ids, "X.index")
        if by == "id":
            if ids is None:
                raise UnlearningError("by='id' needs record IDs: give a DataFrame (its "
                                      "index holds the IDs) or a skforget.Database "
                                      "built with ids=.")
            self._delete = ids_to_positions(delete, "delete", lookup)
            self._replace = ids_to_positions(replace, "replace", lookup)
        else:
            self._delete = _as_indices(delete, "delete", n)
            self._replace = _as_indices(replace, "replace", n)
        both = np.intersect1d(self._delete, self._replace)
        if both.size:
            which = (f"the record with ID {ids[both[0]]!r}" if by == "id"
                     else f"row {int(both[0])}")
            raise UnlearningError(f"{which} appears in both delete and replace.")
        X_replace, y_replace = _check_block(X_replace, y_replace, "X_replace",
                                            "y_replace", len(self._replace), X)
        # A scalar has no rows: _check_block's 2-D check names it.
        n_insert = None if X_insert is None or np.ndim(X_insert) == 0 \
            else np.shape(X_insert)[0]
        X_insert_raw = X_insert
        X_insert, y_insert = _check_block(X_insert, y_insert, "X_insert", "y_insert",
                                          n_insert, X)
        self._refuse_empty(n_insert)
        if ids is None and insert_ids is not None:
            raise UnlearningError("insert_ids is given but the database has no IDs: "
                                  "use a DataFrame or a skforget.Database.")
        self._weights, self._weights_replace, self._weights_insert = _check_weights(
            sample_weight, sample_weight_replace, sample_weight_insert, n,
            len(self._replace), n_insert or 0)
        self._new_ids = (None if ids is None else
                         _insert_ids(insert_ids, X_insert_raw, n_insert or 0, ids,
                                     lookup))
        self.X, self.y = X, y
        self.X_replace, self.y_replace = X_replace, y_replace
        self.X_insert, self.y_insert = X_insert, y_insert
        self._database = database
        # The next version's token is drawn now: two requests built on the same
        # version lead to two versions the model can tell apart.
        self._version_after = None if database is None else database.version.successor()
        self._ids = ids
        self._result = None
        self._in_place = _check_in_place(in_place, X, y, database, ids,
                                         self.n_inserted, self._weights,
                                         X_replace, y_replace)
        self._undo = None

    @property
    def delete(self):
        """Positions of deleted rows (a copy)."""
        return self._delete.copy()

    @property
    def replace(self):
        """Positions of replaced rows (a copy)."""
        return self._replace.copy()

    @property
    def n_samples_before(self):
        return self.X.shape[0]

    @property
    def n_samples_after(self):
        return self.n_samples_before - self.n_deleted + self.n_inserted

    @property
    def version(self):
        """Version of the database the request names, or None."""
        return None if self._database is None else self._database.version

    @property
    def version_after(self):
        """Version of the database :meth:`apply` returns, or None."""
        return self._version_after

    @property
    def sample_weight(self):
        """Weights of the current database's records, or None (all 1)."""
        return self._weights

    @property
    def sample_weight_after(self):
        """Weights of the edited database's records, or None (all 1): kept rows
        keep theirs, replaced rows take ``sample_weight_replace``, inserted rows
        come last with ``sample_weight_insert``."""
        if self._weights is None:
            return None
        keep = np.ones(len(self._weights), dtype=bool)
        keep[self._delete] = False
        kept = np.flatnonzero(keep)
        w = self._weights[kept].copy()
        if len(self._replace):
            w[np.searchsorted(kept, self._replace)] = self._weights_replace
        if self.n_inserted:
            w = np.concatenate([w, self._weights_insert])
        return w

    def apply(self):
        """The edited database; computed once, then cached.

        Returns
        -------
        database : Database
            When the request was built on a :class:`Database`: the next
            version, with the IDs of the records kept and inserted. It
            unpacks as ``X_new, y_new``.
        X_new, y_new : same container types as ``X`` and ``y``
            Otherwise. A DataFrame (and a Series ``y``) keeps the IDs in its
            index. With ``in_place=True``: views of the first
            ``n_samples_after`` rows of ``X`` and ``y``, whose remaining rows
            (those that held deleted or moved records) are overwritten with
            zeros.
        """
        if self._result is None:
            self._result = self._compute()
            # Called by the owner, not from inside partial_unlearn: nothing
            # will restore the rows, so the copies of the overwritten rows are
            # dropped and the dead tail is zeroed now (review finding 2).
            self._commit_in_place()
        return self._result

    def _apply_uncommitted(self):
        """:meth:`apply` for ``partial_unlearn``: an in-place edit stays
        undoable (:meth:`_restore`) until :meth:`_commit_in_place`."""
        if self._result is None:
            self._result = self._compute()
        return self._result

    def _compute(self):
        if self._in_place:
            return self._apply_in_place()
        X, y = self.X, self.y
        n = X.shape[0]
        keep = np.ones(n, dtype=bool)
        keep[self._delete] = False
        kept = np.flatnonzero(keep)
        # Position of every replaced row among the kept rows.
        pos = np.searchsorted(kept, self._replace)
        X_new = _take_rows(X, kept)
        y_new = _take_rows(y, kept)
        if len(self._replace):
            X_new = _set_rows(X_new, pos, self.X_replace)
            y_new = _set_rows(y_new, pos, self.y_replace)
        if self.n_inserted:
            X_new = _append_rows(X_new, self.X_insert, self._new_ids)
            y_new = _append_rows(y_new, self.y_insert, self._new_ids)
        ids_new = None
        if self._ids is None:
            # No IDs: rows are numbered afresh, as before record IDs existed.
            X_new, y_new = (_renumber(X_new), _renumber(y_new))
        else:
            ids_new = self._ids[kept]
            if self.n_inserted:
                ids_new = _concat_ids(ids_new, np.asarray(self._new_ids))
            if hasattr(y_new, "iloc") and not _is_frame(y_new):
                y_new = y_new.set_axis(X_new.index if _is_frame(X_new) else ids_new)
        if self._database is None:
            return X_new, y_new
        return Database(X_new, y_new, ids=None if _is_frame(X_new) else ids_new,
                        version=self._version_after,
                        sample_weight=self.sample_weight_after)

    def _apply_in_place(self):
        """Replace, then move the last kept rows into the deleted rows' places;
        the rows overwritten (the replaced rows, the holes) and the tail rows
        past ``n_samples_after`` are kept until :meth:`_commit_in_place` so
        that :meth:`_restore` can put them back."""
        X, y = self.X, self.y
        n, m = X.shape[0], self.n_samples_after
        deleted = np.sort(self._delete)
        holes = deleted[deleted < m]
        dead_tail = np.zeros(n - m, dtype=bool)
        dead_tail[deleted[deleted >= m] - m] = True
        movers = m + np.flatnonzero(~dead_tail)
        touched = np.concatenate([self._replace, holes])
        self._undo = (touched, X[touched].copy(), y[touched].copy(),
                      X[m:].copy(), y[m:].copy())
        if len(self._replace):
            X[self._replace] = _dense(self.X_replace)
            y[self._replace] = np.asarray(self.y_replace)
        X[holes] = X[movers]
        y[holes] = y[movers]
        return X[:m], y[:m]

    def _restore(self):
        """Undo an in-place edit not yet committed (a failed edit changes
        nothing). Ctrl-C cannot leave it half done."""
        with no_interrupts():
            if self._undo is None:
                return
            touched, X_old, y_old, X_tail, y_tail = self._undo
            m = self.X.shape[0] - len(X_tail)
            self.X[touched] = X_old
            self.y[touched] = y_old
            self.X[m:] = X_tail
            self.y[m:] = y_tail
            self._undo, self._result = None, None

    def _commit_in_place(self):
        """Once an in-place edit is served: overwrite the rows past
        ``n_samples_after`` (the deleted records at the tail, and the stale
        copies of the rows moved into the holes) with zeros, and drop the
        copies of the overwritten rows, so that neither the owner's buffer nor
        this request keeps a deleted record (review finding 2)."""
        if self._undo is None:
            return
        m = self.n_samples_after
        self.X[m:] = 0
        self.y[m:] = 0
        self._undo = None

    def __repr__(self):
        version = "" if self.version is None else f", version={self.version.number}"
        return (f"EditRequest(n_samples={self.n_samples_before}, "
                f"delete={self.n_deleted}, replace={self.n_replaced}, "
                f"insert={self.n_inserted}{version})")


def _dense(block):
    return np.asarray(block.toarray() if sp.issparse(block) else block)


def _fits(values, dtype):
    """Whether ``values`` can be written into an array of ``dtype`` unchanged."""
    values = _dense(values)
    if np.can_cast(values.dtype, dtype, "safe"):
        return True
    try:
        with np.errstate(all="ignore"):
            return bool(np.array_equal(values.astype(dtype), values))
    except (TypeError, ValueError, OverflowError):
        return False


def _check_in_place(in_place, X, y, database, ids, n_insert, weights,
                    X_replace=None, y_replace=None):
    """Whether :meth:`EditRequest.apply` may edit ``X`` and ``y`` in place."""
    if not isinstance(in_place, bool | np.bool_):
        raise UnlearningError(f"in_place must be True or False, got {in_place!r}.")
    if not in_place:
        return False
    if database is not None or ids is not None:
        why = "a Database or DataFrame keeps record IDs"
    elif not (isinstance(X, np.ndarray) and isinstance(y, np.ndarray)):
        why = "X and y must be NumPy arrays"
    elif not (X.flags.writeable and y.flags.writeable):
        why = "X and y must be writeable"
    elif n_insert:
        why = "an insertion grows the database"
    elif weights is not None:
        why = "sample weights move with their records"
    elif X_replace is not None and not _fits(X_replace, X.dtype):
        # Written into X as they are: a cast that changes values would make
        # the rows trained on depend on in_place (review finding 4).
        why = (f"X_replace's values (dtype {_dense(X_replace).dtype}) would be "
               f"changed by X's dtype {X.dtype}")
    elif y_replace is not None and not _fits(y_replace, y.dtype):
        why = (f"y_replace's values (dtype {np.asarray(y_replace).dtype}) would "
               f"be changed by y's dtype {y.dtype}")
    else:
        return True
    raise UnlearningError(f"in_place=True is not possible here: {why}; build the "
                          "request with in_place=False (apply() then copies).")


def _check_weights(weights, replace, insert, n, n_replace, n_insert):
    """Weights of the database and of the new records, consistently present."""
    weights = check_weights(weights, n, "sample_weight")
    return (weights, *check_new_weights(weights is not None, replace, insert,
                                        n_replace, n_insert))


def check_new_weights(weighted, replace, insert, n_replace, n_insert):
    """The weights of replacing and inserted records: required when the
    database's records carry weights (``weighted``), refused when they don't.
    Returns ``(replace, insert)`` checked (None where there are none)."""
    if not weighted:
        for name, value in (("sample_weight_replace", replace),
                            ("sample_weight_insert", insert)):
            if value is not None:
                raise UnlearningError(f"{name} is given but the database has no "
                                      "sample weights: give sample_weight too.")
        return None, None
    out = []
    for name, value, count in (("sample_weight_replace", replace, n_replace),
                               ("sample_weight_insert", insert, n_insert)):
        if count and value is None:
            raise UnlearningError(f"{name} is required: the database's records "
                                  f"carry weights, and {count} new record(s) need "
                                  "theirs.")
        out.append(check_weights(value, count, name) if count else None)
    return tuple(out)


def check_new_targets(edits, classes=None):
    """Refuse a request's new record whose target the model cannot take,
    naming it (``y_insert[k]``, ``y_replace[k]``): a label outside
    ``classes`` (a classifier's fixed label set), or, with ``classes=None``,
    a target that is not a finite number (a regressor's). Checked before any
    plan or pass: a refit would otherwise name the record's row in the edited
    database, after part of the edit had run."""
    for name in ("y_replace", "y_insert"):
        values = getattr(edits, name)
        if values is None:
            continue
        if classes is not None:
            values = np.asarray(values)
            unknown = label_codes(np.asarray(classes), values.ravel())[1]
            if np.any(unknown):
                k = int(np.flatnonzero(unknown)[0])
                raise UnlearningError(
                    f"{name}[{k}] (of type {type(values[k]).__name__}) is not one "
                    f"of the classes of the model ({np.asarray(classes).tolist()}); "
                    "the label set is fixed at fit.")
            continue
        try:
            values = np.asarray(values, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise UnlearningError(f"{name} holds targets that are not numbers.") \
                from None
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            k = int(bad[0])
            raise UnlearningError(
                f"{name}[{k}]={float(values[k])!r} is not a finite target.")


def _renumber(A):
    return A.reset_index(drop=True) if hasattr(A, "iloc") else A


def _concat_ids(a, b):
    if a.dtype.kind != b.dtype.kind:
        a, b = a.astype(object), b.astype(object)
    return np.concatenate([a, b])


def _take_rows(A, rows):
    if hasattr(A, "iloc"):
        # Positions, keeping the index (the record IDs); a copy, written below.
        return A.iloc[rows].copy()
    if sp.issparse(A):
        return A[rows]
    return np.asarray(A)[rows]


def _set_rows(A, pos, values):
    if _is_frame(A):
        # Column by column, so mixed tables keep each column's dtype.
        for j in range(A.shape[1]):
            A.iloc[pos, j] = values.iloc[:, j].to_numpy()
        return A
    if hasattr(A, "iloc"):
        vals = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
        A.iloc[pos] = vals
        return A
    if sp.issparse(A):
        vals = sp.csr_matrix(values)
        # Promoted like arrays: integer rows must not truncate new values.
        lil = A.astype(np.result_type(A.dtype, vals.dtype)).tolil()
        for k, p in enumerate(pos):
            lil[p] = vals[k]
        return lil.tocsr()
    # A is a fresh array from _take_rows, so it may be written in place; rows
    # given sparse join a dense table densely.
    values = values.toarray() if sp.issparse(values) else np.asarray(values)
    dtype = np.result_type(A.dtype, values.dtype)
    if dtype != A.dtype:
        A = A.astype(dtype)
    A[pos] = values
    return A


def _append_rows(A, values, ids):
    if hasattr(A, "iloc"):
        import pandas as pd

        if ids is None:
            index = pd.RangeIndex(len(A), len(A) + len(values))
        else:
            index = pd.Index(ids, name=A.index.name)
        if _is_frame(A):
            values = values.set_axis(index) if _is_frame(values) else pd.DataFrame(
                np.asarray(values), columns=A.columns, index=index)
        else:
            vals = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(
                values)
            values = pd.Series(vals, name=A.name, index=index)
        return pd.concat([A, values])
    if sp.issparse(A):
        values = sp.csr_matrix(values)
        return sp.vstack([A, values], format="csr",
                         dtype=np.result_type(A.dtype, values.dtype))
    values = values.toarray() if sp.issparse(values) else np.asarray(values)
    return np.concatenate([A, values.astype(np.result_type(A.dtype, values.dtype))])
