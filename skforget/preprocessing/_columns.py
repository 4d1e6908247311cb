# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Reading a table's columns for the private steps (pandas optional): numbers
as float64 with NaN for missing, categories as strings, errors that name the
column and the row but never the value."""

import math
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import _check_feature_names, _check_n_features

from skforget._validation import is_missing

#: The category a missing value becomes.
MISSING = "<missing>"


def _n_rows_cols(X):
    if not hasattr(X, "shape") or len(X.shape) != 2:
        X = np.asarray(X, dtype=object)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (rows by columns), got shape {X.shape}.")
    return X, X.shape[0], X.shape[1]


def _column(X, j):
    return X.iloc[:, j] if hasattr(X, "iloc") else np.asarray(X)[:, j]


def _input_names(est):
    names = getattr(est, "feature_names_in_", None)
    if names is None:
        # A sub-step of a table encoder fitted on an array names its columns
        # by their position in the whole table, as the user does.
        positions = est.__dict__.get("_positions")
        return [f"x{j}" for j in (positions if positions is not None
                                  else range(est.n_features_in_))]
    return [str(c) for c in names]


def _names_of(est, X):
    """The names :func:`_input_names` gives ``X``'s columns once ``est`` is
    fitted on it, read without fitting: a DataFrame's labels when all are
    strings (scikit-learn's feature names), else ``x<j>``."""
    labels = list(X.columns) if hasattr(X, "columns") else []
    if labels and all(isinstance(c, str) for c in labels):
        return labels
    positions = est.__dict__.get("_positions")
    return [f"x{j}" for j in (positions if positions is not None
                              else range(X.shape[1]))]


def is_time_dtype(dtype):
    """Dates, durations and periods: numbers of seconds (:func:`_as_float`)."""
    return (getattr(dtype, "kind", None) in ("M", "m")
            or type(dtype).__name__ == "PeriodDtype")


def time_kind(col):
    """"dates" or "durations" for a column read as seconds, else ""."""
    dtype = getattr(col, "dtype", None)
    if not is_time_dtype(dtype):
        return ""
    return "durations" if getattr(dtype, "kind", None) == "m" else "dates"


def _seconds(col):
    """Dates as seconds since 1970-01-01 UTC (a period from its start), and
    durations as seconds; missing (NaT) -> NaN. A public per-row map: the
    column is then a number like any other (privacy-accounting.md, 19.3)."""
    dtype = col.dtype
    if type(dtype).__name__ == "PeriodDtype":
        col, dtype = col.dt.start_time, col.dt.start_time.dtype
    if getattr(dtype, "tz", None) is not None:
        col = col.dt.tz_convert("UTC").dt.tz_localize(None)
    # Microseconds: nanoseconds wrap past 1677-2262 (9999-12-31 read as
    # 1816); microseconds hold +-290,000 years.
    unit = "datetime64[us]" if dtype.kind == "M" else "timedelta64[us]"
    ticks = np.asarray(col).astype(unit)
    values = ticks.astype(np.int64).astype(np.float64) / 1e6
    values[np.isnat(ticks)] = np.nan
    return values


def _as_float(col, name):
    """A column as float64 (missing -> NaN); errors name the column and row."""
    if is_time_dtype(getattr(col, "dtype", None)):
        return _seconds(col)
    try:
        if hasattr(col, "to_numpy"):
            values = col.to_numpy(dtype=float, na_value=np.nan)
        else:
            values = np.array([np.nan if is_missing(v) else v for v in col],
                              dtype=float) if col.dtype == object \
                else np.asarray(col, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"Column {name!r} is not numeric ({_row(col, _first_bad(col))}"
                         " is not a number): a column read as numbers holds numbers "
                         "or missing values. A column of categories is one-hot "
                         "encoded when its dtype is not numeric (PrivateOneHotEncoder)."
                         ) from None
    bad = np.isinf(values)
    if bad.any():
        raise ValueError(f"Column {name!r} has an infinite value in "
                         f"{_row(col, int(np.flatnonzero(bad)[0]))}; use NaN for a "
                         "missing value.")
    return values


def _row(col, i):
    """``row i``, with its index label when a frame's index names the rows."""
    index = getattr(col, "index", None)
    if index is None or type(index).__name__ == "RangeIndex":
        return f"row {i}"
    label = index[i]
    # A numpy scalar's repr is "np.int64(1)": the label as the user wrote it.
    label = label.item() if isinstance(label, np.generic) else label
    return f"row {i} (index {label!r})"


def _first_bad(col):
    """Position of the first value neither a number nor missing (not the value)."""
    values = col.to_numpy(dtype=object) if hasattr(col, "to_numpy") else col
    for i, v in enumerate(values):
        if is_missing(v):
            continue
        try:
            float(v)
        except (TypeError, ValueError):
            return i
    return 0


def _as_categories(col):
    values = col.to_numpy(dtype=object) if hasattr(col, "to_numpy") \
        else np.asarray(col, dtype=object)
    return np.array([MISSING if is_missing(v) else str(v) for v in values],
                    dtype=object)


def _check_input(est, X, *, reset):
    X, _, n_cols = _n_rows_cols(X)
    _check_feature_names(est, X, reset=reset)
    _check_n_features(est, X, reset=reset)
    if reset and X.shape[0] < 1:
        raise ValueError("X has no rows.")
    return X


def _labels(est, X):
    """A DataFrame's column labels, by which ``bounds=`` and ``categories=``
    name its columns (an integer label too: scikit-learn names such a
    frame's columns x<j>, and after a ``drop`` label and position differ);
    None for an array, and for a table encoder's sub-step, which is given
    the encoder's names."""
    if hasattr(X, "columns") and "_positions" not in est.__dict__:
        return list(X.columns)
    return None


def public_by_column(given, names, parameter, labels=None):
    """A dict of public constants keyed by column, as one entry per column
    (None where none is given): ``bounds=`` and ``categories=``
    (privacy-accounting.md, Section 19.2). Keys are a DataFrame's labels
    (``labels``), else names (``x<j>``) or positions. A key that names no
    column is refused, naming it, before any release."""
    out = [None] * len(names)
    if given is None:
        return out
    if not isinstance(given, dict):
        raise TypeError(f"{parameter} must be a dict from column name to a public "
                        f"constant, got {type(given).__name__}.")
    shown = names if labels is None else [str(c) for c in labels]
    index = {}
    for j, name in enumerate(shown):
        index.setdefault(name, j)   # a repeated label names its first column
    for key, value in given.items():
        if labels is None and isinstance(key, Integral) and not isinstance(key, bool):
            j = int(key) if 0 <= int(key) < len(names) else None
        else:
            j = index.get(str(key))
        if j is None:
            raise ValueError(f"{parameter} names column {key!r}, which X does not have "
                             f"(its columns: {', '.join(map(repr, shown[:10]))}"
                             f"{', ...' if len(shown) > 10 else ''}).")
        if out[j] is not None:
            raise ValueError(f"{parameter} gives column {shown[j]!r} twice.")
        out[j] = value
    return out


def check_bounds(value, name):
    """A public range ``(lo, hi)`` of finite numbers, ``lo < hi``, whose width
    is finite too (``hi - lo`` overflowing to inf made the scale NaN or inf
    according to the rows: a bit outside the figure)."""
    pair = (isinstance(value, (tuple, list, np.ndarray)) and len(value) == 2
            and all(isinstance(v, Real) and not isinstance(v, (bool, np.bool_))
                    for v in value))
    if not pair:
        raise ValueError(f"bounds for column {name!r} must be a pair (lo, hi) of "
                         f"numbers (dates and durations in seconds), got {value!r}.")
    lo, hi = float(value[0]), float(value[1])
    if lo == hi:
        raise ValueError(f"bounds for column {name!r} give one value ({lo!r}): a "
                         "column known to hold one value tells a model nothing; "
                         "drop it.")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi
            and math.isfinite(hi - lo)):
        raise ValueError(f"bounds for column {name!r} must be finite with lo < hi "
                         f"and a finite width hi - lo, got ({lo!r}, {hi!r}).")
    return lo, hi


def check_categories(value, name):
    """A public category list as the sorted strings values are compared as
    (``None`` or NaN listed: the category a missing value becomes)."""
    # A list, not an iterator (consumed by the first fit, an edit's refit then
    # found it empty) nor a mapping (read as its keys).
    if isinstance(value, (set, frozenset)):
        value = list(value)
    if (isinstance(value, (str, bytes, Mapping)) or hasattr(value, "__next__")
            or not hasattr(value, "__len__") or np.ndim(value) != 1):
        raise ValueError(f"categories for column {name!r} must be a list of values, "
                         f"got {value!r}.")
    values = sorted(set(_as_categories(np.asarray(list(value), dtype=object))))
    if not values:
        raise ValueError(f"categories for column {name!r} is empty; leave the column "
                         "out of categories to have them selected privately.")
    return np.array(values, dtype=object)
