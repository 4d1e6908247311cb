# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The new records of an edit request: checked against the database's shape and
dtypes, and the IDs they take."""

import numbers

import numpy as np
import scipy.sparse as sp

from skforget._database import _is_frame, check_unique_ids
from skforget._validation import is_missing
from skforget.exceptions import UnlearningError


def _check_frame_block(X, x_name, frame):
    """A block of new records as a DataFrame with ``frame``'s columns and dtypes.

    Raw tables mix strings and numbers, so the block is read column by column;
    an error names the column (and, for categories, the row) at fault.
    """
    import pandas as pd

    columns = list(frame.columns)
    if _is_frame(X):
        missing = [c for c in columns if c not in X.columns]
        extra = [c for c in X.columns if c not in frame.columns]
        if missing or extra:
            which = (f"lacks column {missing[0]!r}" if missing
                     else f"has column {extra[0]!r}, which the database has not")
            raise UnlearningError(f"{x_name} {which}.")
        block = X[columns].reset_index(drop=True)
    else:
        rows = np.asarray(X, dtype=object)
        if rows.ndim != 2:
            raise UnlearningError(f"{x_name} must be 2-D (one row per record), got "
                                  f"shape {rows.shape}.")
        if rows.shape[1] != len(columns):
            raise UnlearningError(f"{x_name} has {rows.shape[1]} feature(s); the "
                                  f"database has {len(columns)}.")
        block = pd.DataFrame(rows, columns=frame.columns)
    for col in columns:
        dtype = frame[col].dtype
        if isinstance(dtype, pd.CategoricalDtype):
            unknown = ~block[col].isin(dtype.categories)
            if unknown.any():
                row = int(np.flatnonzero(unknown.to_numpy())[0])
                # The row and column, never the value (it reaches logs and a
                # requester's audit record).
                raise UnlearningError(
                    f"{x_name} row {row}, column {col!r}: the value is not a "
                    "category of the database's column.")
        kind = getattr(dtype, "kind", "O")
        if kind == "b":
            # astype(bool) makes 0.5, 2, NaN or "no" True without a word.
            values = block[col].to_numpy(dtype=object)
            bad = [not (isinstance(v, bool | np.bool_) or (
                isinstance(v, numbers.Real) and v in (0, 1)) or (
                is_missing(v) and not isinstance(dtype, np.dtype))) for v in values]
            if any(bad):
                raise UnlearningError(
                    f"{x_name} row {bad.index(True)}, column {col!r}: the value is "
                    f"not a boolean, which the database's {dtype} column would "
                    "read otherwise.")
        try:
            cast = block[col].astype(dtype)
        except (TypeError, ValueError, OverflowError):
            raise UnlearningError(
                f"{x_name} column {col!r} cannot be read as the database's "
                f"{dtype}{_why_not_integer(block[col], kind)}.") from None
        if kind in "iu":
            # astype truncates a fraction into integers, and wraps a number
            # outside their range, without a word: the model would learn, and
            # the database keep, another number.
            before = pd.to_numeric(block[col], errors="coerce").to_numpy(
                dtype=float, na_value=np.nan)
            changed = ~np.isnan(before) & (before != cast.to_numpy(
                dtype=float, na_value=np.nan))
            if changed.any():
                row = int(np.flatnonzero(changed)[0])
                what = ("not a whole number, which the database's {} column would "
                        "truncate" if before[row] != np.trunc(before[row]) else
                        "outside the range of the database's {} column")
                raise UnlearningError(f"{x_name} row {row}, column {col!r}: the "
                                      f"value is {what.format(dtype)}.")
        block[col] = cast
    return block


def _why_not_integer(column, kind):
    """Why a new record's value does not fit an integer column, for the two
    causes with a remedy (a trial: a missing age was "cannot be read as
    int64"): the row and the cause, never the value."""
    if kind not in "iu":
        return ""
    import pandas as pd  # a frame's column: pandas is there

    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float,
                                                             na_value=np.nan)
    missing = column.isna().to_numpy()
    if missing.any():
        return (f": row {int(np.flatnonzero(missing)[0])} is missing, and an integer "
                "column holds no missing value (give the Database that column as "
                "float, whose NaN a private pipeline imputes)")
    if np.isinf(values).any():
        return (f": row {int(np.flatnonzero(np.isinf(values))[0])} is infinite, "
                "which is no value (write a missing value as NaN)")
    return ""


def _check_block(X, y, x_name, y_name, n_expected, database):
    """Check a block of new records against the database's shape.

    Returns the block as arrays (sparse matrices are kept; with a DataFrame
    database, the block becomes a DataFrame with its columns and dtypes).
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
    n_features = database.shape[1]
    frame = _is_frame(database)
    if frame:
        X = _check_frame_block(X, x_name, database)
        shape = X.shape
    elif sp.issparse(X) or _is_frame(X):
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
    if frame and not numeric_frame(X):
        # Raw records (strings, categories) are checked after preprocessing, by
        # the model that trains on them.
        return X, y
    # A frame's missing values are a pipeline's to impute, as at fit (a trial:
    # an all-numeric raw table refused them in edits only); a model fed the
    # frame directly refuses them when it reads the request
    # (EditRequest._check_finite_rows). Infinity is never a value.
    row = non_finite_row(X, allow_nan=frame)
    if row is not None:
        raise UnlearningError(f"{x_name} row {row} contains "
                              f"{'an infinite value' if frame else 'NaN or infinity'}.")
    return X, y


def numeric_frame(X):
    """Whether every column of the frame ``X`` holds numbers (or booleans)."""
    return all(X[c].dtype.kind in "biuf" for c in X.columns)


def non_finite_row(X, *, allow_nan=False):
    """The first row of numeric ``X`` holding a non-finite value (only an
    infinite one with ``allow_nan``), or None."""
    if sp.issparse(X):
        X = X.tocsr()   # indptr names the rows in CSR only (a second reader)
        values = np.asarray(X.data, dtype=float)
    elif hasattr(X, "to_numpy"):
        # pandas' nullable columns hold pd.NA, which numpy cannot cast.
        values = X.to_numpy(dtype=float, na_value=np.nan)
    else:
        values = np.asarray(X, dtype=float)
    bad = np.isinf(values) if allow_nan else ~np.isfinite(values)
    if not bad.any():
        return None
    if sp.issparse(X):
        return int(np.searchsorted(X.indptr, np.flatnonzero(bad)[0], side="right") - 1)
    return int(np.argwhere(bad)[0][0])


def _insert_ids(insert_ids, X_insert, n_insert, ids, lookup):
    """IDs of the inserted records: given, from ``X_insert``'s index, or numbered on.

    Integer IDs continue from the largest current one; other IDs must be given.
    A new ID may not be one of the database's (replace that record instead).
    """
    if not n_insert:
        if insert_ids is not None and len(insert_ids):
            raise UnlearningError("insert_ids is given but no record is inserted.")
        return None
    if insert_ids is not None:
        new = np.asarray(insert_ids)
        if new.ndim != 1 or len(new) != n_insert:
            raise UnlearningError(f"insert_ids must hold one ID per row of X_insert "
                                  f"({n_insert}), got shape {new.shape}.")
        name = "insert_ids"
    elif _is_frame(X_insert) and not _default_index(X_insert.index):
        new, name = np.asarray(X_insert.index), "X_insert.index"
    elif ids.dtype.kind in "iu" or len(ids) == 0:
        start = int(ids.max()) + 1 if len(ids) else 0
        return np.arange(start, start + n_insert)
    else:
        raise UnlearningError(
            "insert_ids is required: the database's IDs are not integers, so new "
            "records cannot be numbered on. Name them with insert_ids=[...] or give "
            "X_insert an index.")
    check_unique_ids(new, name)
    for k, value in enumerate(new.tolist()):
        if value in lookup:
            raise UnlearningError(f"{name}[{k}]={value!r} is already the ID of row "
                                  f"{lookup[value]}; replace that record instead.")
    return new


def _default_index(index):
    return np.array_equal(np.asarray(index), np.arange(len(index)))
