# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Argument checks for the accounting functions.

The accountant is called with numbers only, so its checks are plain: each error
names the keyword argument that is wrong and the range it must lie in.
"""

import math
from numbers import Integral, Real


def check_real(value, name, *, low=None, high=None, low_open=True, high_open=True):
    """Return ``value`` as a float after checking it lies in the given range."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN.")
    bad_low = low is not None and (value <= low if low_open else value < low)
    bad_high = high is not None and (value >= high if high_open else value > high)
    if bad_low or bad_high:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        raise ValueError(f"{name} must be in {left}{lo}, {hi}{right}, got {value!r}.")
    return value


def check_positive(value, name):
    """A finite real number > 0."""
    value = check_real(value, name, low=0.0)
    if math.isinf(value):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return value


def check_nonnegative(value, name):
    """A real number >= 0 (``inf`` allowed)."""
    return check_real(value, name, low=0.0, low_open=False, high_open=False)


def check_probability(value, name):
    """A real number in the open interval (0, 1)."""
    return check_real(value, name, low=0.0, high=1.0)


def check_int(value, name, *, low=0):
    """An integer >= ``low``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    value = int(value)
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}.")
    return value


def check_contraction(value, name="contraction"):
    """A contraction factor c in [0, 1)."""
    return check_real(value, name, low=0.0, high=1.0, low_open=False)


def check_choice(value, name, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}.")
    return value
