# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The release of a categorical column: noisy counts of the values present,
each value's noise a function of the column's stream and the value, and the
partition selection that keeps the values whose noisy count clears the
threshold (privacy-accounting.md, Proposition 19.3); then what the released
category list alone tells the user.
"""

import hashlib

import numpy as np

from skforget._release import warn_about_release
from skforget._utils import named_few
from skforget.preprocessing._columns import MISSING


def _column_rngs(rng, n):
    """One independent generator per column, from the step's stream ``rng``."""
    return [np.random.default_rng([int(a), int(b)])
            for a, b in rng.integers(0, 2**63, size=(n, 2))]


def _value_noise(seed_words, value, sigma):
    """Noise of one category's count, a function of the column's stream and the
    value itself, so neighbouring tables draw the same noise for a value they
    share (independent across values: a 128-bit hash seeds each draw)."""
    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"),
                             digest_size=16).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    return sigma * np.random.default_rng(seed_words + words).standard_normal()


def _noisy_counts(column, words, sigma):
    """The noisy counts of the values present (Proposition 19.3), by value."""
    values, counts = np.unique(column, return_counts=True)
    return {v: c + _value_noise(words, v, sigma)
            for v, c in zip(values, counts, strict=True)}


def warn_if_no_category_kept(step, names, categories, threshold):
    """Name the columns of which partition selection kept no category: each
    is then one constant ``infrequent`` column, which is what an ID, free
    text, or numbers stored as text become. Read from the released lists and
    the public threshold only (post-processing), shown once it is recorded."""
    empty = [name for name, cats in zip(names, categories, strict=True)
             if len(cats) == 0]
    if not empty:
        return
    warn_about_release(
        f"{step}: no category of {len(empty)} column(s) was held by enough records "
        f"to be kept ({named_few(map(repr, empty))}); each becomes one constant "
        f"'infrequent' column and tells the model nothing. At this budget a "
        f"category needs about {threshold:.0f} records. Such a column is "
        "often an ID or free text (better dropped), or numbers stored as text "
        "(give it a numeric dtype: the schema is public); otherwise its "
        "categories are too rare for this budget.",
        UserWarning)


def _number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def warn_if_numbers_as_categories(step, names, categories):
    """Name the columns whose kept categories are all numbers (three or
    more): a column of numbers read as categories, most often because the
    table reached the step as an object array (``df.values``), whose every
    column is then one-hot encoded. Read from the released lists only
    (post-processing), shown once it is recorded."""
    numeric = [name for name, cats in zip(names, categories, strict=True)
               if len(kept := [c for c in cats if c != MISSING]) >= 3
               and all(_number(c) for c in kept)]
    if not numeric:
        return
    warn_about_release(
        f"{step}: the categories kept for {len(numeric)} column(s) are all "
        f"numbers ({named_few(map(repr, numeric))}): if such a column holds "
        "quantities, give it a numeric dtype (it is then scaled, not one-hot "
        "encoded; the schema is public). An object array, such as a DataFrame's "
        ".values, reads every column as categories: pass the DataFrame.",
        UserWarning)
