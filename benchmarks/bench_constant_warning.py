# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""When does a binary model at defaults say it predicts nearly one class?

privacy-accounting.md, Section 18.6: a model constant on the whole ball of
rows warns from its coefficients alone, and a model with the default threshold
(the class moments of Section 18.12) also warns when the Gaussian model of the
scores behind that threshold puts under 1 % of the rows on one side
(``accounting.moment_predicted_share``), a function of released numbers.

This benchmark counts, on the binary real tables of ``_tables.py`` (split,
standardised and normalised as in ``bench_thresholds.py``; and AER's HMDA, a
new-user trial's table, 2,380 rows with 12 % denied), at epsilon = 1 and
defaults, over splits x noise seeds, the fits by the share of the training rows
that the model gives its less predicted class (counted on the rows: what the
warning estimates) and by the warning they raised: the ball's (Proposition
18.8), the estimate's, or none. A good warning is raised on the fits under 1 %
and never on those at 2 % or more. ``LogisticRegression()``'s own share on
the first split is listed beside them: where it predicts nearly one class too,
the private model doing so is no failure of privacy, but still worth saying.
"""

import sys
import warnings

import numpy as np
from _common import Section, md_table, scenario_main
from _tables import load_table, represent
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skforget import NoisyGDClassifier

TABLES = ("biopsy", "cells", "caravan", "lending_club", "default", "adult",
          "flights", "cells_rare", "adult_rare", "hmda")
SMOKE_TABLES = ("biopsy",)
BANDS = ("under 1 %", "1-2 %", "2 % or more")


def _band(share):
    return BANDS[0] if share < 0.01 else BANDS[1] if share < 0.02 else BANDS[2]


def _which_warning(records):
    texts = [str(w.message) for w in records if "predicts class" in str(w.message)]
    if not texts:
        return "none"
    return "ball" if "for every row" in texts[0] else "estimate"


def run_table(name, splits, seeds, log):
    table = load_table(name)
    y_all = np.searchsorted(table.classes, table.y)
    counts = {(b, w): 0 for b in BANDS for w in ("ball", "estimate", "none")}
    lr_share = None
    for split in splits:
        idx_tr, _ = train_test_split(np.arange(table.n_samples), test_size=0.25,
                                     random_state=split, stratify=y_all)
        X, _ = represent(table, idx_tr, "standardised")
        X_tr, y_tr = X[idx_tr], y_all[idx_tr]
        if lr_share is None:
            p = LogisticRegression().fit(X_tr, y_tr).predict(X_tr).mean()
            lr_share = min(p, 1.0 - p)
        for seed in seeds:
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                m = NoisyGDClassifier(classes=[0, 1],
                                      random_state=1000 * split + seed).fit(X_tr, y_tr)
            p = float(np.mean(m.predict(X_tr) == 1))
            counts[(_band(min(p, 1.0 - p)), _which_warning(rec))] += 1
    log(f"  {name}: " + ", ".join(f"{b}/{w} {c}" for (b, w), c in counts.items() if c))
    return {"n_train": len(y_tr), "positives": float(y_tr.mean()),
            "lr_share": float(lr_share),
            "counts": {f"{b}|{w}": c for (b, w), c in counts.items()}}


def run(*, smoke=False, out_dir=None, log=print, tables=None, seeds=None):
    names = tables.split(",") if isinstance(tables, str) else \
        (SMOKE_TABLES if smoke else TABLES)
    splits = range(1 if smoke else 3)
    seeds = range(1 if smoke else (seeds or 4))
    per_table = {name: run_table(name, splits, seeds, log) for name in names}
    rows, totals = [], {}
    for name, r in per_table.items():
        c = r["counts"]
        cells = []
        for b in BANDS:
            n = sum(c[f"{b}|{w}"] for w in ("ball", "estimate", "none"))
            hit = c[f"{b}|ball"] + c[f"{b}|estimate"]
            totals[b] = [x + y for x, y in zip(totals.get(b, [0, 0, 0]),
                                               (n, hit, c[f"{b}|ball"]))]
            cells.append(f"{hit} ({c[f'{b}|ball']}) / {n}")
        rows.append([f"{name} ({r['n_train']}, {r['positives']:.1%})",
                     f"{r['lr_share']:.2%}", *cells])
    rows.append(["all", "", *(f"{totals[b][1]} ({totals[b][2]}) / {totals[b][0]}"
                              for b in BANDS)])
    text = "\n".join([
        f"Epsilon = 1, defaults; {len(splits)} splits x {len(seeds)} noise seeds "
        "per table. Columns: the share of the training rows the model gives its "
        "less predicted class; cells: fits warned (of them by the ball check) / "
        "fits in that band. `LR share`: `LogisticRegression()`'s share on the "
        "first split.", "",
        md_table(["table (n train, positives)", "LR share", *BANDS], rows), ""])
    return Section("constant_warning",
                   "Nearly one class: the warning from released statistics "
                   "(Section 18.6)", text,
                   {"splits": len(splits), "seeds": len(seeds), "tables": per_table})


def _add_arguments(parser):
    parser.add_argument("--tables", default=None,
                        help="comma-separated subset of " + ",".join(TABLES))
    parser.add_argument("--seeds", type=int, default=None)


def main(argv=None):
    return scenario_main(run, __doc__, argv, add_arguments=_add_arguments)


if __name__ == "__main__":
    sys.exit(main())
