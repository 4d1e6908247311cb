# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared scaffolding of the census benchmarks (the tables of
``bench_rdatasets_sweep.py``): size bands, paired arms of the private
pipeline, and the command line that runs a census and writes its results.
"""

import argparse
import contextlib
import sys
import time
import warnings

import numpy as np
from _common import RESULTS, machine_info, write_json
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import train_test_split

from skforget import NoisyGDClassifier
from skforget.pipeline import make_private_pipeline


def band(n, bands):
    """The label of the size band ``(lo, hi)`` of ``bands`` holding ``n``."""
    for lo, hi in bands:
        if n >= lo and (hi is None or n < hi):
            return f"{lo}-{hi - 1}" if hi else f">= {lo}"
    return None


def paired_arms(X, y, *, rounds, epsilon, arms, arm_context, read=None):
    """Fit ``make_private_pipeline(NoisyGDClassifier(classes=...))`` once per
    arm and round, every arm on the same stratified 75/25 split and noise
    seeds (interleaved), inside ``arm_context(arm)``; record balanced
    accuracy, accuracy, fit seconds and ``read(pipeline)`` (under "value")."""
    classes = sorted(set(y))
    out = {str(a): {"balanced": [], "accuracy": [], "seconds": [], "value": []}
           for a in arms}
    for r in range(rounds):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                                  random_state=r, stratify=y)
        for arm in arms:
            with warnings.catch_warnings(), arm_context(arm):
                warnings.simplefilter("ignore")
                pipe = make_private_pipeline(
                    NoisyGDClassifier(classes=classes, random_state=r),
                    epsilon=epsilon, random_state=r + 1000)
                start = time.perf_counter()
                pipe.fit(X_tr, y_tr)
                seconds = time.perf_counter() - start
                pred = pipe.predict(X_te)
                value = None if read is None else read(pipe)
            rec = out[str(arm)]
            rec["balanced"].append(balanced_accuracy_score(y_te, pred))
            rec["accuracy"].append(accuracy_score(y_te, pred))
            rec["seconds"].append(seconds)
            rec["value"].append(value)
    return {"n_rows": len(y), "n_classes": len(classes), "arms": out}


@contextlib.contextmanager
def patched(module, name, value):
    """``module.name = value`` for the block (a private constant a census
    compares against its previous value)."""
    before = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, before)


def mean_change(pairs, key, *, counts=True):
    """Mean change of ``key`` (in points) and, with ``counts``, the tables
    losing / gaining more than a point, over ``(old, new)`` arm records."""
    d = np.array([np.mean(new[key]) - np.mean(old[key]) for old, new in pairs])
    text = f"{100 * d.mean():+.2f}"
    return f"{text} ({np.sum(d < -0.01)} / {np.sum(d > 0.01)})" if counts else text


def paired_report(title, script, argv, machine, rounds, errors, what, table):
    """The report of a census of paired arms: title, command, machine, what
    the columns say (``what``), and the table."""
    from bench_rdatasets_sweep import machine_line

    return "\n".join([
        f"# {title}\n",
        f"Command: `python benchmarks/{script} {' '.join(argv)}`".rstrip() + "\n",
        machine_line(machine),
        f"Census tables of `bench_rdatasets_sweep.py`, private pipeline at its "
        f"defaults, means over {rounds} round(s) (split and noise seeds shared by "
        f"the arms). {what} "
        f"Tables that raised: {sum(len(e) for e in errors.values())}.\n",
        table,
    ])


def census_main(argv, description, *, run, markdown, stem, epsilons=(None,),
                keep=None):
    """Parse ``--rounds``, ``--limit`` and ``--smoke``; run ``run(X, y,
    rounds, epsilon)`` on every census table (``keep(y)`` selects them) at
    each of ``epsilons``, reporting errors rather than hiding them; print
    ``markdown(results, machine, argv, rounds, errors)`` and, on a full run,
    write ``results/<stem>.md`` and ``.json``."""
    from bench_rdatasets_sweep import tables

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    argv_text = sys.argv[1:] if argv is None else list(argv)
    rounds = 1 if args.smoke else args.rounds
    enough = 2 if args.smoke else args.limit
    results = {str(eps): {} for eps in epsilons}
    errors = {str(eps): {} for eps in epsilons}
    for eps in epsilons:
        found = 0
        for name, X, y in tables(None):
            if keep is not None and not keep(y):
                continue
            try:
                results[str(eps)][name] = run(X, y, rounds, eps)
            except Exception as exc:   # reported, not hidden
                errors[str(eps)][name] = (f"{type(exc).__name__}: "
                                          f"{str(exc).splitlines()[0][:160]}")
            print(eps, name, errors[str(eps)].get(name, "ok"), flush=True)
            found += 1
            if enough and found >= enough:
                break
    machine = machine_info()
    text = markdown(results, machine, argv_text, rounds, errors)
    print(text)
    if not (args.smoke or args.limit):
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"{stem}.md").write_text(text)
        write_json(RESULTS / f"{stem}.json",
                   {"machine": machine, "rounds": rounds, "results": results,
                    "errors": errors})
    return 0
