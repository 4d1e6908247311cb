# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Edit requests: which rows of a database to delete, replace and insert."""

import numbers

import numpy as np
import scipy.sparse as sp

from skforget.exceptions import UnlearningError


def _n_rows(X):
    return X.shape[0]


def _is_frame(X):
    return hasattr(X, "iloc") and hasattr(X, "columns")


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
            if isinstance(value, bool) or not float(value).is_integer():
                raise UnlearningError(f"{name}[{pos}]={value!r} is not an integer "
                                      "row index.")
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


def _check_block(X, y, x_name, y_name, n_expected, n_features):
    """Check a block of new records against the database's shape.

    Returns the block as arrays (sparse matrices and DataFrames are kept).
    """
    if X is None and y is None:
        if n_expected:
            raise UnlearningError(f"{x_name} and {y_name} are required: they hold the "
                                  f"{n_expected} new record(s).")
        return None, None
    if X is None or y is None:
        missing = x_name if X is None else y_name
        raise UnlearningError(f"{missing} is missing: give both {x_name} and {y_name}.")
    if not hasattr(y, "iloc"):
        y = np.asarray(y)
    if sp.issparse(X) or _is_frame(X):
        shape = X.shape
    else:
        X = np.asarray(X)
        shape = X.shape
        if X.dtype.kind not in "biuf":
            raise UnlearningError(f"{x_name} must be numeric, got dtype {X.dtype}.")
    if len(shape) != 2:
        raise UnlearningError(f"{x_name} must be 2-D (one row per record), got shape "
                              f"{shape}.")
    if n_expected is not None and shape[0] != n_expected:
        raise UnlearningError(f"{x_name} has {shape[0]} row(s) but {n_expected} "
                              "record(s) are named.")
    if shape[1] != n_features:
        raise UnlearningError(f"{x_name} has {shape[1]} feature(s); the database has "
                              f"{n_features}.")
    y_len = len(y) if not np.isscalar(y) else 1
    if np.ndim(y) != 1 or y_len != shape[0]:
        raise UnlearningError(f"{y_name} must be 1-D with one entry per row of "
                              f"{x_name} ({shape[0]}), got shape {np.shape(y)}.")
    values = X.data if sp.issparse(X) else np.asarray(X, dtype=float)
    bad = ~np.isfinite(np.asarray(values, dtype=float))
    if bad.any():
        row = (int(np.searchsorted(X.indptr, np.flatnonzero(bad)[0], side="right") - 1)
               if sp.issparse(X) else int(np.argwhere(bad)[0][0]))
        raise UnlearningError(f"{x_name} row {row} contains NaN or infinity.")
    return X, y


class EditRequest:
    """A batch of edits to a database: deletions, replacements and insertions.

    The request names rows of the *current* database ``(X, y)`` (the one the
    model was fitted on, or the one returned by the previous edit) and carries
    the new records. It is validated when built, and :meth:`apply` returns the
    edited database: replaced rows stay in place, deleted rows are removed and
    inserted rows come last. The request belongs to the caller, who owns the
    data; estimators read it and never keep it.

    Parameters
    ----------
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        The current database.
    y : array-like of shape (n_samples,)
        Its targets.
    delete : sequence of int, default=None
        Rows of ``X`` to remove.
    replace : sequence of int, default=None
        Rows of ``X`` to overwrite with ``X_replace`` / ``y_replace``. The old
        record counts as deleted.
    X_replace, y_replace : array-like, default=None
        The replacing records, one per index in ``replace``.
    X_insert, y_insert : array-like, default=None
        New records to add.

    Attributes
    ----------
    n_deleted, n_replaced, n_inserted : int
    size : int
        Total rows the request names (deleted + replaced + inserted).
    n_samples_before, n_samples_after : int

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
    """

    def __init__(self, X, y, *, delete=None, replace=None, X_replace=None,
                 y_replace=None, X_insert=None, y_insert=None):
        if not (sp.issparse(X) or _is_frame(X)):
            X = np.asarray(X)
        if sp.issparse(X) and X.format != "csr":
            X = X.tocsr()
        if len(X.shape) != 2:
            raise UnlearningError(f"X must be 2-D, got shape {X.shape}.")
        n, d = X.shape
        if np.ndim(y) != 1 or len(y) != n:
            raise UnlearningError(f"y must be 1-D with one entry per row of X ({n}), "
                                  f"got shape {np.shape(y)}.")
        self._delete = _as_indices(delete, "delete", n)
        self._replace = _as_indices(replace, "replace", n)
        both = np.intersect1d(self._delete, self._replace)
        if both.size:
            raise UnlearningError(f"row {int(both[0])} appears in both delete and "
                                  "replace.")
        X_replace, y_replace = _check_block(X_replace, y_replace, "X_replace",
                                            "y_replace", len(self._replace), d)
        n_insert = None if X_insert is None else np.shape(X_insert)[0]
        X_insert, y_insert = _check_block(X_insert, y_insert, "X_insert", "y_insert",
                                          n_insert, d)
        if self.size_of(self._delete, self._replace, n_insert) == 0:
            raise UnlearningError("the edit request is empty: name rows to delete or "
                                  "replace, or records to insert.")
        self.X, self.y = X, y
        self.X_replace, self.y_replace = X_replace, y_replace
        self.X_insert, self.y_insert = X_insert, y_insert
        self._result = None

    @staticmethod
    def size_of(delete, replace, n_insert):
        return len(delete) + len(replace) + (n_insert or 0)

    @property
    def delete(self):
        """Indices of deleted rows (a copy)."""
        return self._delete.copy()

    @property
    def replace(self):
        """Indices of replaced rows (a copy)."""
        return self._replace.copy()

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
        return self.n_deleted + self.n_replaced + self.n_inserted

    @property
    def n_samples_before(self):
        return self.X.shape[0]

    @property
    def n_samples_after(self):
        return self.n_samples_before - self.n_deleted + self.n_inserted

    def apply(self):
        """The edited database ``(X_new, y_new)``; computed once, then cached.

        Returns
        -------
        X_new : same container type as ``X``
        y_new : same container type as ``y``
        """
        if self._result is None:
            self._result = self._compute()
        return self._result

    def _compute(self):
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
            X_new = _append_rows(X_new, self.X_insert)
            y_new = _append_rows(y_new, self.y_insert)
        return X_new, y_new

    def __repr__(self):
        return (f"EditRequest(n_samples={self.n_samples_before}, "
                f"delete={self.n_deleted}, replace={self.n_replaced}, "
                f"insert={self.n_inserted})")


def _take_rows(A, rows):
    if _is_frame(A) or hasattr(A, "iloc"):
        return A.iloc[rows].reset_index(drop=True)
    if sp.issparse(A):
        return A[rows]
    return np.asarray(A)[rows]


def _set_rows(A, pos, values):
    if hasattr(A, "iloc"):
        vals = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
        A.iloc[pos] = vals
        return A
    if sp.issparse(A):
        lil = A.tolil(copy=True)
        vals = sp.csr_matrix(values)
        for k, p in enumerate(pos):
            lil[p] = vals[k]
        return lil.tocsr()
    # A is a fresh array from _take_rows, so it may be written in place.
    values = np.asarray(values)
    dtype = np.result_type(A.dtype, values.dtype)
    if dtype != A.dtype:
        A = A.astype(dtype)
    A[pos] = values
    return A


def _append_rows(A, values):
    if hasattr(A, "iloc"):
        import pandas as pd

        if not hasattr(values, "iloc"):
            values = (pd.DataFrame(np.asarray(values), columns=A.columns)
                      if hasattr(A, "columns") else pd.Series(np.asarray(values),
                                                              name=A.name))
        return pd.concat([A, values], ignore_index=True)
    if sp.issparse(A):
        return sp.vstack([A, sp.csr_matrix(values, dtype=A.dtype)], format="csr")
    values = np.asarray(values)
    return np.concatenate([A, values.astype(np.result_type(A.dtype, values.dtype))])
