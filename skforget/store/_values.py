# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""How a record's values are stored: each column refuses a value it would not
give back as it was, so that the records served are those the model trained
on."""

import functools

import numpy as np

from skforget._validation import is_missing


def _py(value):
    """A value SQLite can store: Python scalars; None, NaN, pandas.NA and NaT
    as NULL."""
    if isinstance(value, np.generic):
        value = value.item()
    if is_missing(value):
        return None
    if isinstance(value, int) and not -2**63 <= value < 2**63:
        raise TypeError("an integer outside the 64-bit integers a database "
                        "column holds")
    if isinstance(value, str | int | float | bytes):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"a value of type {type(value).__name__}")


def _text_value(value):
    """A value of a text (``object`` or string) column as stored, refusing the
    types it would not come back as: a bool is stored as 1, a date as its ISO
    string, so the records served would no longer be those trained on."""
    if is_missing(value):
        return None
    if isinstance(value, bool | np.bool_):
        raise TypeError("a bool in a text column, read back as 1 or 0; give the "
                        "column a boolean dtype (.astype('boolean') keeps missing "
                        "values)")
    if hasattr(value, "isoformat") and not isinstance(value, str):
        raise TypeError("a date in a text column, read back as a string; give the "
                        "column a datetime dtype")
    return _py(value)


def _integer_value(value, nullable=False, bounds=None):
    """A value of an integer column as stored, refusing a fraction: the
    column is read back with its dtype, which would truncate (SQLite) or round
    (PostgreSQL) it, and the records served would no longer be those the
    model was just trained on; a missing value too, unless the dtype holds
    one (pandas' ``Int64``): NumPy's integers would not read it back."""
    stored = _py(value)
    if stored is None and not nullable:
        raise TypeError("a missing value in an integer column, which cannot read "
                        "it back; give the column a float or 'Int64' dtype")
    if isinstance(stored, float) and not stored.is_integer():
        # The record and column are named by the caller; the value is not
        # repeated (errors reach logs and audit records).
        raise TypeError("a fraction in an integer column, which would read it "
                        "back truncated or rounded; give the column a float dtype")
    if bounds is not None and isinstance(stored, int | float) and \
            not bounds[0] <= stored <= bounds[1]:
        # A float of 2**63 came back as -2**63 (SQLite) or failed to store
        # (PostgreSQL); a uint8 column wraps 300 to 44.
        raise TypeError(f"a number outside the range of its {bounds[2]} column, "
                        "which would not read it back")
    return stored


def _boolean_value(value, nullable=False):
    """A value of a boolean column as stored, refusing numbers but 0 and 1
    (and a missing value unless the dtype holds one: pandas' ``boolean``)."""
    stored = _py(value)
    if stored is None and not nullable:
        raise TypeError("a missing value in a bool column, which cannot read it "
                        "back; give the column the 'boolean' dtype")
    if isinstance(stored, int | float) and stored not in (0, 1):
        raise TypeError("a number other than 0 and 1 in a boolean column, which "
                        "would read it back as True")
    return stored


def _converter(spec):
    """How a value of a column of dtype ``spec`` is stored: text columns and
    number columns refuse what they would not return as it was."""
    if spec in ("object", "str", "string"):
        return _text_value
    try:
        dtype, nullable = np.dtype(spec), False
    except TypeError:   # a pandas extension dtype ("Int64", "boolean", ...)
        import pandas as pd

        dtype, nullable = pd.api.types.pandas_dtype(spec), True
    kind = getattr(dtype, "kind", "O")
    if kind in "iu":
        info = np.iinfo(getattr(dtype, "numpy_dtype", dtype))
        return functools.partial(_integer_value, nullable=nullable,
                                 bounds=(int(info.min), int(info.max), str(dtype)))
    if kind == "b":
        return functools.partial(_boolean_value, nullable=nullable)
    return _py
