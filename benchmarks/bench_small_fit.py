# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fit time on small real tables against LogisticRegression (issue 23, item 5).

On the real tables of ``_tables.py`` with 500 to 5,000 training rows (rows
standardised on the training split and normalised to unit norm, as in
``bench_decisions.py``), interleaved rounds of:

* ``LogisticRegression()`` (lbfgs, scikit-learn's defaults);
* ``NoisyGDClassifier(epsilon=1)`` at defaults, **first fit**: the planner's
  remembered bounds are cleared before it, so the fit pays its whole plan (what
  a new process pays for its first model of a given size);
* the same estimator again with another seed (**repeat**): a refit, a
  cross-validation fold of the same size or a search candidate, whose plan is a
  pure function of the same public numbers and is remembered.

``LogisticRegression()`` is timed twice per round, with its BLAS threads as
they come and limited to one (``threadpoolctl``), and the faster of the two
is its time: on a shared 2-core machine OpenBLAS's threads made its digits fit
18x slower (237 ms against 13.7 ms on one thread), which flattered the ratio.
The private fits run on one thread (``n_jobs=None``).

Reported: medians over the rounds, and each private fit's time as a ratio to
``LogisticRegression()``'s in the same round (median of the ratios). Issue 23
asks for at most 2x at 1k-5k rows. Before the planner's hull was built row by
row (this session), a first fit on cells (1,514 rows) cost 13.6x.
"""

import sys
import time
import warnings

import numpy as np
from _common import Section, md_table, scenario_main
from _tables import load_table, represent
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from skforget import NoisyGDClassifier
from skforget.accounting import _cyclic

TABLES = ("biopsy", "beps", "cells_rare", "digits", "cells", "hpc", "mnist5000",
          "caravan")
SMOKE_TABLES = ("biopsy",)
ROUNDS = 25


def _timed(fn):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()
    return time.perf_counter() - start


def run_table(name, rounds, log):
    table = load_table(name)
    y_all = np.searchsorted(table.classes, table.y)
    idx_tr, _ = train_test_split(np.arange(table.n_samples), test_size=0.25,
                                 random_state=0, stratify=y_all)
    X, _ = represent(table, idx_tr, "standardised")
    X_tr, y_tr = X[idx_tr], y_all[idx_tr]
    classes = list(range(len(table.classes)))
    times = {"LogisticRegression()": [], "first fit": [], "repeat": []}
    for r in range(rounds):
        threads = _timed(lambda: LogisticRegression().fit(X_tr, y_tr))
        with threadpool_limits(1):
            one = _timed(lambda: LogisticRegression().fit(X_tr, y_tr))
        times["LogisticRegression()"].append(min(threads, one))
        _cyclic._bound_cached.cache_clear()
        times["first fit"].append(_timed(lambda r=r: NoisyGDClassifier(
            classes=classes, random_state=r).fit(X_tr, y_tr)))
        times["repeat"].append(_timed(lambda r=r: NoisyGDClassifier(
            classes=classes, random_state=r + 1000).fit(X_tr, y_tr)))
    lr = np.array(times["LogisticRegression()"])
    out = {"n_train": len(y_tr), "n_features": X.shape[1], "n_classes": len(classes),
           "seconds": {k: float(np.median(v)) for k, v in times.items()},
           "ratio": {k: float(np.median(np.array(v) / lr))
                     for k, v in times.items() if k != "LogisticRegression()"},
           "raw": times}
    log(f"  {name}: {len(y_tr)} rows, first fit {out['ratio']['first fit']:.2f}x, "
        f"repeat {out['ratio']['repeat']:.2f}x LogisticRegression()")
    return out


def run(*, smoke=False, out_dir=None, log=print, tables=None):
    names = tables.split(",") if isinstance(tables, str) else \
        (SMOKE_TABLES if smoke else TABLES)
    rounds = 2 if smoke else ROUNDS
    per_table = {name: run_table(name, rounds, log) for name in names}
    rows = []
    for name, r in per_table.items():
        s, q = r["seconds"], r["ratio"]
        rows.append([f"{name} ({r['n_train']} x {r['n_features']}, "
                     f"{r['n_classes']} classes)",
                     f"{1000 * s['LogisticRegression()']:.1f}",
                     f"{1000 * s['first fit']:.1f}", f"{q['first fit']:.2f}x",
                     f"{1000 * s['repeat']:.1f}", f"{q['repeat']:.2f}x",
                     "yes" if q["first fit"] <= 2.0 else "no"])
    markdown = "\n".join([
        f"Medians over {rounds} interleaved rounds; milliseconds and ratios to "
        "`LogisticRegression()` in the same round (the faster of its fits with "
        "its BLAS threads and on one thread). 'first fit' clears the "
        "planner's remembered bounds before it; 'repeat' is another seed on "
        "the same table (its plan remembered). 'at most 2x': the first fit.", "",
        md_table(["table", "LR ms", "first fit ms", "ratio", "repeat ms", "ratio",
                  "at most 2x"], rows)])
    return Section("small_fit", "Fit time on small tables (issue 23, item 5)",
                   markdown, {"rounds": rounds, "tables": per_table})


def _add_arguments(parser):
    parser.add_argument("--tables", default=None,
                        help="comma-separated subset of " + ",".join(TABLES))


def main(argv=None):
    return scenario_main(run, __doc__, argv, add_arguments=_add_arguments)


if __name__ == "__main__":
    sys.exit(main())
