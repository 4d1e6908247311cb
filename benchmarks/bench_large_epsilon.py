# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The default regularisation where it grows: accuracy and deletion cost.

privacy-accounting.md, Section 8.5: noisy GD's ``C="auto"`` grows as rho above
the rho of epsilon = 1, and the softmax's also as the number of records above
4,000 (``coef_norm_growth``). This measures, side by side in the same round
for each noise seed, on real tables (``_tables.py``, the split and
representation of ``bench_decisions.py``), at every epsilon where the default
grows (at epsilon = 1 only diamonds, the one multiclass table above 4,000
training rows):

* **grown**: ``NoisyGDClassifier(epsilon=eps)`` at its defaults;
* **epsilon=1 rule**: the same with ``C`` set to the default without the growth
  (the grown default's ``C`` divided by ``coef_norm_growth(rho, n_samples)``)
  and the ``prevalence_share`` the defaults spent (an explicit ``C`` would
  otherwise spend none), so that only the regularisation differs.

Per arm: test accuracy, balanced accuracy, AUC (one-vs-rest for multiclass)
and the share of majority-class predictions; the fit's time and passes; then a
stream of single-record deletions (``partial_unlearn``, ``EditRequest`` in
place, as ``bench_deletion_stream.py``): the plan's edit mode and
``lazy_records`` (deletions served without a pass, Section 12.10), how many
requests passed over the data, and the median time per request against the
fit's (a refit's) time. Medians over seeds.

Run: ``python benchmarks/bench_large_epsilon.py --out-dir benchmarks/results``.
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
from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score
from sklearn.model_selection import train_test_split

from skforget import EditRequest, NoisyGDClassifier
from skforget.accounting import coef_norm_growth, default_delta, epsilon_to_rho

EPSILONS = (1.0, 4.0, 8.0)
TABLES = ("cells", "adult", "hpc", "digits", "mnist5000", "diamonds")
SMOKE_TABLES = ("biopsy",)
SEEDS = 3
REQUESTS = 30


def _quiet(call, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args)


def _scores(model, X, y, majority):
    pred = model.predict(X)
    if len(model.classes_) == 2:
        auc = roc_auc_score(y, model.decision_function(X))
    else:
        auc = roc_auc_score(y, model.predict_proba(X), multi_class="ovr")
    return {"accuracy": accuracy_score(y, pred),
            "balanced_accuracy": balanced_accuracy_score(y, pred), "auc": auc,
            "majority_share": float(np.mean(pred == majority))}


def _arm(params, X, y, X_te, y_te, majority, requests, seed):
    """Fit, score, then a stream of single-record deletions."""
    model = NoisyGDClassifier(random_state=seed, **params)
    start = time.perf_counter()
    _quiet(model.fit, X, y)
    fit_seconds = time.perf_counter() - start
    out = {**_scores(model, X_te, y_te, majority), "fit_seconds": fit_seconds,
           "passes": int(np.ravel(model.n_iter_)[0]),
           "edit_mode": model._plan.edit_mode,
           "lazy_records": int(model._plan.lazy_records),
           "regularization": model.privacy_guarantee_.regularization}
    rng = np.random.default_rng(1000 + seed)
    Xc, yc = X.copy(), y.copy()
    seconds, with_pass = [], 0
    for _ in range(requests):
        request = EditRequest(Xc, yc, delete=rng.choice(len(yc), 1, replace=False),
                              in_place=True)
        start = time.perf_counter()
        _quiet(model.partial_unlearn, request)
        seconds.append(time.perf_counter() - start)
        with_pass += model.privacy_guarantee_.deletion.passes > 0
        Xc, yc = request.apply()
    out.update(unlearn_median=float(np.median(seconds)),
               unlearn_mean=float(np.mean(seconds)), requests_with_pass=with_pass,
               refit_over_unlearn=fit_seconds / float(np.mean(seconds)))
    return out


def run_table(name, *, epsilons, seeds, requests, log, max_rows=MAX_ROWS):
    table = load_table(name, max_rows=max_rows)
    classes = np.arange(len(table.classes))
    y_all = np.searchsorted(table.classes, table.y)
    idx_tr, idx_te = train_test_split(np.arange(table.n_samples), test_size=0.25,
                                      random_state=0, stratify=y_all)
    X, _ = represent(table, idx_tr, "standardised")
    X_tr, X_te, y_tr, y_te = X[idx_tr], X[idx_te], y_all[idx_tr], y_all[idx_te]
    majority = int(np.bincount(y_tr).argmax())
    delta = default_delta(n_samples=len(y_tr))
    log(f"  {name}: {len(y_tr)} training rows, {X.shape[1]} features, "
        f"{len(classes)} classes")
    out = {}
    for eps in epsilons:
        # The softmax's default grows with the table's size too (8.5).
        growth = coef_norm_growth(
            epsilon_to_rho(epsilon=eps, delta=delta, method="gaussian"),
            n_samples=len(y_tr) if len(classes) > 2 else None)
        if growth == 1.0:   # the default does not grow: one arm would repeat the other
            continue
        probe = NoisyGDClassifier(epsilon=eps, classes=classes, max_iter=1)
        _quiet(probe.fit, X_tr, y_tr)
        g = probe.privacy_guarantee_
        share = g.rho_counts / (g.rho_counts + probe._plan.rho_target)
        c_rule1 = 1.0 / (g.regularization * growth * len(y_tr))
        arms = {"grown": {"epsilon": eps, "classes": classes},
                "epsilon=1 rule": {"epsilon": eps, "classes": classes, "C": c_rule1,
                                   "prevalence_share": round(share, 12)}}
        per = {label: [] for label in arms}
        for seed in range(seeds):
            order = list(arms) if seed % 2 == 0 else list(arms)[::-1]
            for label in order:   # interleaved
                per[label].append(_arm(arms[label], X_tr, y_tr, X_te, y_te,
                                       majority, requests, seed))
        out[str(eps)] = {"growth": growth, "arms": per}
        log(f"    epsilon {eps:g}: growth {growth:.2f}")
    return {"n_train": int(len(y_tr)), "n_features": int(X.shape[1]),
            "n_classes": int(len(classes)), "epsilons": out}


def _med(records, key):
    return float(np.median([r[key] for r in records]))


def markdown(per_table, seeds, requests):
    rows = []
    for name, res in per_table.items():
        for eps, block in res["epsilons"].items():
            for label, recs in block["arms"].items():
                modes = sorted({r["edit_mode"] for r in recs})
                rows.append([
                    name if label == "grown" else "", f"{float(eps):g}", label,
                    f"{_med(recs, 'regularization'):.3g}",
                    f"{_med(recs, 'accuracy'):.3f}",
                    f"{_med(recs, 'balanced_accuracy'):.3f}",
                    f"{_med(recs, 'auc'):.3f}", f"{_med(recs, 'majority_share'):.3f}",
                    f"{_med(recs, 'passes'):.0f}", "/".join(modes),
                    f"{_med(recs, 'lazy_records'):.0f}",
                    f"{_med(recs, 'requests_with_pass'):.0f} / {requests}",
                    f"{1e3 * _med(recs, 'fit_seconds'):.3g} ms",
                    f"{1e3 * _med(recs, 'unlearn_median'):.3g} / "
                    f"{1e3 * _med(recs, 'unlearn_mean'):.3g} ms",
                    f"{_med(recs, 'refit_over_unlearn'):.1f}x"])
    head = ["table", "epsilon", "default", "lambda", "acc", "bal acc", "AUC",
            "majority", "passes", "edit mode", "lazy records",
            "requests with a pass", "fit", "request median / mean",
            "fit / mean request"]
    return "\n".join([
        f"`NoisyGDClassifier(epsilon=eps)` at its defaults (**grown**, Section 8.5) "
        "against the same with `C` set to the default without the growth "
        f"(**epsilon=1 rule**); medians over {seeds} noise seed(s), both arms in "
        f"each round; then {requests} single-record deletions per model. "
        "`fit / mean request` is the arm's own fit time over its mean request "
        "time (the mean counts the requests that pass over the data; the median "
        "request makes no pass in either arm). A shorter fit lowers the ratio "
        "too: compare the fit and request columns.",
        "", md_table(head, rows)])


def run(*, smoke=False, out_dir=None, log=print, tables=None, seeds=None):
    names = tables.split(",") if isinstance(tables, str) else \
        (SMOKE_TABLES if smoke else TABLES)
    seeds = int(seeds) if seeds else (1 if smoke else SEEDS)
    requests = 3 if smoke else REQUESTS
    epsilons = (8.0,) if smoke else EPSILONS
    section = Section("large_epsilon",
                      "The default regularisation above epsilon = 1 (Section 8.5)")
    per_table, skipped = run_per_table(
        names, lambda name: run_table(name, epsilons=epsilons, seeds=seeds,
                                      requests=requests, log=log,
                                      max_rows=2000 if smoke else MAX_ROWS),
        skip=MissingDataset)
    section.markdown = markdown(per_table, seeds, requests) + skipped_note(skipped)
    section.data = {"tables": per_table, "skipped": skipped}
    if out_dir is not None and not smoke:
        write_standalone(out_dir, "large_epsilon", section)
    return section


def _add_arguments(parser):
    add_table_arguments(parser, "large_epsilon", TABLES)


def main(argv=None):
    return scenario_main(run, __doc__, argv, add_arguments=_add_arguments)


if __name__ == "__main__":
    import sys

    sys.exit(main())
