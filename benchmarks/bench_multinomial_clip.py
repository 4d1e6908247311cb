# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The clipped softmax (privacy-accounting.md, Lemma 4.5) on real multiclass tables.

``NoisyGDClassifier(clip_norm=L)`` with ``L`` below the softmax's natural bound
``sqrt(2) R`` trains the clipped softmax: a convex surrogate whose per-record
gradient norm is at most ``L``, so the noise (and the default regularisation)
follow the smaller sensitivity. Side by side in the same round for each noise
seed (``_tables.py``, the split and representation of ``bench_decisions.py``):
the softmax unclipped (``clip_norm=None``, the default before the clipped
softmax), the default (``clip_norm="auto"``: ``data_norm`` for noisy GD's
softmax) and ``clip_norm=0.5 * data_norm``; held-out accuracy,
balanced accuracy, the share of majority-class predictions, fit time, and
``LogisticRegression()`` for reference. Medians over seeds.

Run: ``python benchmarks/bench_multinomial_clip.py --out-dir benchmarks/results``.
"""

import time
import warnings

import numpy as np
from _common import (
    Section,
    add_table_arguments,
    md_table,
    run_per_table,
    scenario_main,
    skipped_note,
    write_standalone,
)
from _data import MissingDataset
from _tables import MAX_ROWS, load_table, represent
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import train_test_split

from skforget import NoisyGDClassifier

TABLES = ("beps", "digits", "hpc", "mnist5000", "diamonds")
#: The first arm is the reference of the "vs" columns.
ARMS = {"unclipped (clip_norm=None)": None, "default (clip_norm=data_norm=1)": "auto",
        "clip_norm=0.5": 0.5}
SEEDS = 5


def run_table(name, *, epsilons, seeds, log, max_rows=MAX_ROWS):
    table = load_table(name, max_rows=max_rows)
    y_all = np.searchsorted(table.classes, table.y)
    idx_tr, idx_te = train_test_split(np.arange(table.n_samples), test_size=0.25,
                                      random_state=0, stratify=y_all)
    X, _ = represent(table, idx_tr, "standardised")
    X_tr, X_te, y_tr, y_te = X[idx_tr], X[idx_te], y_all[idx_tr], y_all[idx_te]
    classes = np.arange(len(table.classes))
    majority = int(np.bincount(y_tr).argmax())
    lr = LogisticRegression(max_iter=3000).fit(X_tr, y_tr).predict(X_te)
    out = {"n_train": len(y_tr), "n_classes": len(classes),
           "lr": {"accuracy": accuracy_score(y_te, lr),
                  "balanced_accuracy": balanced_accuracy_score(y_te, lr)}}
    log(f"  {name}: {len(y_tr)} rows, {len(classes)} classes")
    for eps in epsilons:
        per = {arm: [] for arm in ARMS}
        for seed in range(seeds):
            order = list(ARMS) if seed % 2 == 0 else list(ARMS)[::-1]
            for arm in order:   # interleaved
                model = NoisyGDClassifier(classes=classes, epsilon=eps,
                                          random_state=seed, clip_norm=ARMS[arm])
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X_tr, y_tr)
                seconds = time.perf_counter() - start
                pred = model.predict(X_te)
                per[arm].append({
                    "accuracy": accuracy_score(y_te, pred),
                    "balanced_accuracy": balanced_accuracy_score(y_te, pred),
                    "majority_share": float(np.mean(pred == majority)),
                    "fit_seconds": seconds,
                    "gradient_bound": model._plan.gradient_bound})
        out[str(eps)] = per
    return out


def _med(records, key):
    return float(np.median([r[key] for r in records]))


def markdown(per_table, epsilons, seeds):
    rows = []
    for name, res in per_table.items():
        for eps in epsilons:
            base = res[str(eps)][next(iter(ARMS))]
            for arm, recs in res[str(eps)].items():
                rows.append([
                    name if arm == next(iter(ARMS)) else "", f"{eps:g}", arm,
                    f"{_med(recs, 'accuracy'):.3f}",
                    f"{100 * (_med(recs, 'accuracy') - _med(base, 'accuracy')):+.1f}",
                    f"{_med(recs, 'balanced_accuracy'):.3f}",
                    f"{_med(recs, 'majority_share'):.3f}",
                    f"{1e3 * _med(recs, 'fit_seconds'):.3g} ms",
                    f"{_med(recs, 'fit_seconds') / _med(base, 'fit_seconds'):.1f}x",
                    f"{res['lr']['accuracy']:.3f}"])
    head = ["table", "epsilon", "model", "accuracy", "vs unclipped (points)",
            "balanced acc", "majority share", "fit", "fit vs unclipped",
            "LogisticRegression() acc"]
    return "\n".join([
        f"`NoisyGDClassifier(epsilon=eps, clip_norm=...)`, multinomial; medians "
        f"over {seeds} noise seeds, the arms interleaved in each round. "
        "`clip_norm` below the natural bound `sqrt(2) R` selects the clipped "
        "softmax of Lemma 4.5; the default clips at `data_norm` (Section 4.5).", "",
        md_table(head, rows)])


def run(*, smoke=False, out_dir=None, log=print, tables=None, seeds=None):
    names = tables.split(",") if isinstance(tables, str) else \
        (("beps",) if smoke else TABLES)
    seeds = int(seeds) if seeds else (1 if smoke else SEEDS)
    epsilons = (1.0,) if smoke else (0.3, 1.0, 8.0)
    section = Section("multinomial_clip",
                      "The clipped softmax on multiclass tables (Lemma 4.5)")
    per_table, skipped = run_per_table(
        names, lambda name: run_table(name, epsilons=epsilons, seeds=seeds, log=log,
                                      max_rows=600 if smoke else MAX_ROWS),
        skip=MissingDataset)
    section.markdown = markdown(per_table, epsilons, seeds) + skipped_note(skipped)
    section.data = {"tables": per_table, "skipped": skipped}
    if out_dir is not None and not smoke:
        write_standalone(out_dir, "multinomial_clip", section)
    return section


def _add_arguments(parser):
    add_table_arguments(parser, "multinomial_clip", TABLES)


if __name__ == "__main__":
    raise SystemExit(scenario_main(run, __doc__, add_arguments=_add_arguments))
