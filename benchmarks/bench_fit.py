# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private fit against scikit-learn's LogisticRegression and Ridge.

Time and test accuracy (R^2 for regression; balanced accuracy too) on six
classification datasets (among them the issue-12 target: 1M x 100 rows on the
unit sphere, a planted unit-norm model, 10% of labels flipped, 80/20 split)
and a 200000 x 100 synthetic regression, split 75/25 (stratified, fixed seed)
otherwise. Four models per dataset, fitted in interleaved rounds:

* scikit-learn with its defaults (``LogisticRegression(max_iter=1000)``,
  ``Ridge()``): the non-private reference;
* scikit-learn at the tuned configuration's regularisation (same ``C`` /
  ``alpha``): the same objective without noise;
* skforget with its defaults at ``epsilon=1`` (``delta`` "auto"; the public
  label set given): what a new user gets;
* skforget with hyper-parameters chosen once per dataset, at ``epsilon=1``, by
  the benchmark's author (not tuned per run; tuning them on private data would
  cost privacy that the figures do not include).

The issue-12 targets are judged in the table: on the planted 1M set the
defaults fit in <= 2x LogisticRegression's time within 1 point of its accuracy;
on Adult in <= 3x within 1.5 points.
"""

import sys
import warnings

import _data
import numpy as np
from _common import (
    Section,
    fmt_time,
    interleaved_times,
    md_table,
    pyplot,
    save_figure,
    scenario_main,
)
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import balanced_accuracy_score

from skforget import NoisyGDClassifier, NoisyGDRegressor

EPSILON = 1.0

# Chosen once, at epsilon=1 (see the module docstring); the fast solver's
# calibration study (issue 12) moved adult to C=0.1 and digits to C=0.002.
CLASSIFIER_PARAMS = {
    "breast_cancer": dict(C=0.1, clip_norm=0.5),
    "digits": dict(C=0.002, intercept_scaling=0.1),
    "mnist5000": dict(C=0.01, intercept_scaling=0.1),
    "adult": dict(C=0.1, clip_norm=0.5),
    "synthetic": dict(C=0.01),
    "planted1m": dict(C=0.03),
}
REGRESSOR_PARAMS = {"synthetic_regression": dict(alpha=1000.0)}

# Issue-12 targets for the defaults: (time ratio to LogisticRegression, points
# of accuracy below it).
TARGETS = {"planted1m": (2.0, 1.0), "adult": (3.0, 1.5)}

# Smoke runs subsample the larger sets so the suite finishes in CI quickly.
SMOKE_SIZES = {"mnist5000": 1000, "adult": 4000, "synthetic": 20_000,
               "synthetic_regression": 20_000, "planted1m": 20_000}


def load_split(name, *, smoke):
    data = _data.load(name, max_samples=SMOKE_SIZES.get(name) if smoke else None)
    return data, _data.split(data)


def _mean_sd(values):
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.3f} ± {values.std():.3f}"


def bench_dataset(name, *, smoke, n_seeds):
    regression = name in REGRESSOR_PARAMS
    params = (REGRESSOR_PARAMS if regression else CLASSIFIER_PARAMS)[name]
    data, (X_tr, X_te, y_tr, y_te) = load_split(name, smoke=smoke)
    if regression:
        base = Ridge()
        same = Ridge(alpha=params["alpha"])
    else:
        base = LogisticRegression(max_iter=1000)
        same = LogisticRegression(max_iter=1000, C=params["C"])
    # Fitted models are scored after the timing: only fitting is timed.
    models = {"sklearn": [], "sklearn_same": [], "skforget": [],
              "skforget_defaults": []}
    seeds = iter(range(10**6))
    public = {} if regression else {"classes": np.unique(data.y)}

    def fit_private(key, extra):
        cls = NoisyGDRegressor if regression else NoisyGDClassifier
        model = cls(epsilon=EPSILON, random_state=next(seeds), **public, **extra)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # long-plan notices
            models[key].append(model.fit(X_tr, y_tr))

    def fit_base():
        models["sklearn"].append(clone(base).fit(X_tr, y_tr))

    def fit_same():
        models["sklearn_same"].append(clone(same).fit(X_tr, y_tr))

    times = interleaved_times(
        {"sklearn": fit_base, "sklearn_same": fit_same,
         "skforget": lambda: fit_private("skforget", params),
         "skforget_defaults": lambda: fit_private("skforget_defaults", {})},
        repeats=n_seeds, warmup=0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    scores = {k: [m.score(X_te, y_te) for m in v] for k, v in models.items()}
    balanced = {} if regression else {
        k: [balanced_accuracy_score(y_te, m.predict(X_te)) for m in v]
        for k, v in models.items()}
    passes = {k: [int(np.ravel(m.n_iter_)[0]) for m in models[k]]
              for k in ("skforget", "skforget_defaults")}
    plans = {k: models[k][0]._plan for k in ("skforget", "skforget_defaults")}
    return {
        "dataset": name, "task": data.task, "n_train": X_tr.shape[0],
        "n_features": X_tr.shape[1], "sparse": data.sparse,
        "n_classes": None if regression else int(np.unique(data.y).size),
        "public": data.public, "params": params, "epsilon": EPSILON,
        "scores": scores, "balanced_accuracy": balanced,
        "median_fit_seconds": med, "skforget_passes": passes,
        "batches": {k: p.n_batches for k, p in plans.items()},
        "regularization": {k: p.lam for k, p in plans.items()},
        "time_ratio_skforget_over_sklearn": med["skforget"] / med["sklearn"],
        "time_ratio_defaults_over_sklearn":
            med["skforget_defaults"] / med["sklearn"],
        "base_model": type(base).__name__,
    }


def _verdict(r):
    """The issue-12 target for a dataset's defaults, judged on this run."""
    if r["dataset"] not in TARGETS:
        return ""
    max_ratio, max_gap = TARGETS[r["dataset"]]
    ratio = r["time_ratio_defaults_over_sklearn"]
    gap = 100 * (np.mean(r["scores"]["sklearn"])
                 - np.mean(r["scores"]["skforget_defaults"]))
    ok = ratio <= max_ratio and gap <= max_gap
    return (f"{'met' if ok else 'NOT met'} (<= {max_ratio:g}x, <= {max_gap:g} pt: "
            f"{ratio:.2f}x, {gap:.2f} pt)")


def run(*, smoke=False, out_dir=None, log=print):
    names = list(CLASSIFIER_PARAMS) + list(REGRESSOR_PARAMS)
    n_seeds = 1 if smoke else 3
    results, rows, reg_rows, publics = [], [], [], []
    for name in names:
        r = bench_dataset(name, smoke=smoke, n_seeds=n_seeds)
        results.append(r)
        s, t = r["scores"], r["median_fit_seconds"]
        shape = f"{r['n_train']} x {r['n_features']}" + (" CSR" if r["sparse"] else "")
        bal = r["balanced_accuracy"]
        if r["task"] == "regression":
            reg_rows.append([
                name, shape, f"{np.mean(s['sklearn']):.3f}", fmt_time(t["sklearn"]),
                f"{np.mean(s['sklearn_same']):.3f}",
                _mean_sd(s["skforget_defaults"]), fmt_time(t["skforget_defaults"]),
                _mean_sd(s["skforget"]), fmt_time(t["skforget"]),
                str(int(np.median(r["skforget_passes"]["skforget"]))),
                f"{r['time_ratio_skforget_over_sklearn']:.2g}"])
        else:
            rows.append([
                name, str(r["n_classes"]), shape,
                f"{np.mean(s['sklearn']):.3f} ({np.mean(bal['sklearn']):.3f})",
                fmt_time(t["sklearn"]),
                f"{_mean_sd(s['skforget_defaults'])} "
                f"({np.mean(bal['skforget_defaults']):.3f})",
                fmt_time(t["skforget_defaults"]),
                f"{r['time_ratio_defaults_over_sklearn']:.2g}",
                f"{_mean_sd(s['skforget'])} ({np.mean(bal['skforget']):.3f})",
                fmt_time(t["skforget"]),
                str(int(np.median(r["skforget_passes"]["skforget_defaults"]))) + " / "
                + str(int(np.median(r["skforget_passes"]["skforget"]))),
                _verdict(r)])
        publics.append(f"* **{name}**: {r['public']}.")
        log(f"  fit {name}: sklearn {np.mean(s['sklearn']):.3f} "
            f"({fmt_time(t['sklearn'])}), skforget defaults "
            f"{np.mean(s['skforget_defaults']):.3f} "
            f"({fmt_time(t['skforget_defaults'])}), tuned {np.mean(s['skforget']):.3f}"
            f" ({fmt_time(t['skforget'])}) {_verdict(r)}")
    params = "; ".join(f"{k}: " + ", ".join(f"{a}={b}" for a, b in v.items())
                       for k, v in {**CLASSIFIER_PARAMS, **REGRESSOR_PARAMS}.items())
    md = [
        f"Test accuracy (balanced accuracy in brackets; regression: R²) and median "
        f"fit time over {n_seeds} interleaved round(s); skforget at epsilon="
        f"{EPSILON}, delta='auto' (min(1e-5, n^-1.1)), one noise seed per round "
        "(mean ± sd over seeds). 'defaults' is NoisyGDClassifier(classes=..., "
        "epsilon=1) with nothing else set; 'tuned' uses the configuration below. "
        "'passes' are over the training rows (defaults / tuned).",
        "",
        md_table(["dataset", "classes", "train rows x features",
                  "LogisticRegression acc (bal.)", "its fit time",
                  f"skforget defaults eps={EPSILON:g} acc (bal.)", "its fit time",
                  "time / sklearn", "skforget tuned acc (bal.)", "its fit time",
                  "passes", "issue-12 target"], rows),
        "",
        md_table(["dataset", "train rows x features", "Ridge R²", "its fit time",
                  "Ridge same alpha R²", f"skforget defaults eps={EPSILON:g} R²",
                  "its fit time", "skforget tuned R²", "its fit time", "passes",
                  "time tuned / sklearn"], reg_rows),
        "",
        f"skforget tuned hyper-parameters (chosen once, at epsilon=1): {params}.",
        "",
        "Preprocessing, with what was treated as public:",
        "",
        *publics,
    ]
    section = Section("fit", "Fit vs scikit-learn (time and accuracy)",
                      "\n".join(md), {"datasets": results})
    plt = pyplot()
    if plt is not None and out_dir is not None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        x = np.arange(len(results))
        labels = [r["dataset"].replace("_", "\n") for r in results]
        for off, key, lab in ((-0.3, "sklearn", "sklearn (defaults)"),
                              (-0.1, "sklearn_same", "sklearn (same C / alpha)"),
                              (0.1, "skforget_defaults",
                               f"skforget defaults eps={EPSILON:g}"),
                              (0.3, "skforget", f"skforget tuned eps={EPSILON:g}")):
            axes[0].bar(x + off, [np.mean(r["scores"][key]) for r in results], 0.2,
                        yerr=[np.std(r["scores"][key]) for r in results], label=lab)
        axes[0].set_xticks(x, labels, fontsize=7)
        axes[0].set_ylabel("test accuracy (R² for regression)")
        axes[0].set_ylim(0, 1)
        axes[0].legend(fontsize=7)
        for off, key, lab in ((-0.25, "sklearn", "sklearn (defaults)"),
                              (0.0, "skforget_defaults", "skforget defaults"),
                              (0.25, "skforget", "skforget tuned")):
            axes[1].bar(x + off, [r["median_fit_seconds"][key] for r in results],
                        0.25, label=lab)
        axes[1].set_yscale("log")
        axes[1].set_xticks(x, labels, fontsize=7)
        axes[1].set_ylabel("fit time (s)")
        axes[1].legend(fontsize=7)
        fig.suptitle("Fit: skforget vs scikit-learn")
        section.plots.append(save_figure(fig, out_dir, "fit_accuracy_time.png"))
    return section


def main(argv=None):
    return scenario_main(run, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
