# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private fit against scikit-learn's LogisticRegression and Ridge.

Time and test accuracy (R^2 for regression) on five classification datasets
and a 200000 x 100 synthetic regression, each split 75/25 (stratified, fixed
seed). Three models per dataset, fitted in interleaved rounds:

* scikit-learn with its defaults (``LogisticRegression(max_iter=1000)``,
  ``Ridge()``): the non-private reference;
* scikit-learn at skforget's regularisation (same ``C`` / ``alpha``): the same
  objective without noise, which separates the cost of regularisation from the
  cost of privacy;
* skforget at ``epsilon=1`` (``delta`` "auto"), one fit per noise seed.

skforget's hyper-parameters were chosen once per dataset, at ``epsilon=1``, by
the benchmark's author, and are not tuned per run; tuning them on private data
would cost privacy that the figures do not include.
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

from skforget import NoisyGDClassifier, NoisyGDRegressor

EPSILON = 1.0

# Chosen once, at epsilon=1 (see the module docstring).
CLASSIFIER_PARAMS = {
    "breast_cancer": dict(C=0.1, clip_norm=0.5),
    "digits": dict(C=0.005, intercept_scaling=0.1),
    "mnist5000": dict(C=0.01, intercept_scaling=0.1),
    "adult": dict(C=0.02, clip_norm=0.5),
    "synthetic": dict(C=0.0005),
}
REGRESSOR_PARAMS = {"synthetic_regression": dict(alpha=1000.0)}

# Smoke runs subsample the larger sets so the suite finishes in CI quickly.
SMOKE_SIZES = {"mnist5000": 1000, "adult": 4000, "synthetic": 20_000,
               "synthetic_regression": 20_000}


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
    models = {"sklearn": [], "sklearn_same": [], "skforget": []}
    seeds = iter(range(10**6))

    def fit_private():
        cls = NoisyGDRegressor if regression else NoisyGDClassifier
        model = cls(epsilon=EPSILON, random_state=next(seeds), **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # long-plan notices
            models["skforget"].append(model.fit(X_tr, y_tr))

    def fit_base():
        models["sklearn"].append(clone(base).fit(X_tr, y_tr))

    def fit_same():
        models["sklearn_same"].append(clone(same).fit(X_tr, y_tr))

    times = interleaved_times({"sklearn": fit_base, "sklearn_same": fit_same,
                               "skforget": fit_private}, repeats=n_seeds, warmup=0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    scores = {k: [m.score(X_te, y_te) for m in v] for k, v in models.items()}
    steps = [m.n_iter_ for m in models["skforget"]]
    return {
        "dataset": name, "task": data.task, "n_train": X_tr.shape[0],
        "n_features": X_tr.shape[1], "sparse": data.sparse,
        "n_classes": None if regression else int(np.unique(data.y).size),
        "public": data.public, "params": params, "epsilon": EPSILON,
        "scores": scores, "median_fit_seconds": med, "skforget_steps": steps,
        "time_ratio_skforget_over_sklearn": med["skforget"] / med["sklearn"],
        "base_model": type(base).__name__,
    }


def run(*, smoke=False, out_dir=None, log=print):
    names = list(CLASSIFIER_PARAMS) + list(REGRESSOR_PARAMS)
    n_seeds = 1 if smoke else 3
    results, rows, reg_rows, publics = [], [], [], []
    for name in names:
        r = bench_dataset(name, smoke=smoke, n_seeds=n_seeds)
        results.append(r)
        s, t = r["scores"], r["median_fit_seconds"]
        shape = f"{r['n_train']} x {r['n_features']}" + (" CSR" if r["sparse"] else "")
        row = [name, shape,
               f"{np.mean(s['sklearn']):.3f}", fmt_time(t["sklearn"]),
               f"{np.mean(s['sklearn_same']):.3f}",
               _mean_sd(s["skforget"]), fmt_time(t["skforget"]),
               str(int(np.median(r["skforget_steps"]))),
               f"{r['time_ratio_skforget_over_sklearn']:.2g}"]
        (reg_rows if r["task"] == "regression" else rows).append(
            row[:1] + ([str(r["n_classes"])] if r["task"] != "regression" else []) +
            row[1:])
        publics.append(f"* **{name}**: {r['public']}.")
        log(f"  fit {name}: sklearn {np.mean(s['sklearn']):.3f}, skforget "
            f"{np.mean(s['skforget']):.3f}, time ratio "
            f"{r['time_ratio_skforget_over_sklearn']:.1f}")
    params = "; ".join(f"{k}: " + ", ".join(f"{a}={b}" for a, b in v.items())
                       for k, v in {**CLASSIFIER_PARAMS, **REGRESSOR_PARAMS}.items())
    md = [
        f"Test accuracy (regression: R²) and median fit time over {n_seeds} "
        f"interleaved round(s); skforget at epsilon={EPSILON}, delta='auto' "
        f"(min(1e-5, n^-1.1)), one noise seed per round (mean ± sd over seeds). "
        "'same C' is scikit-learn at skforget's regularisation: the gap between "
        "it and skforget is the price of privacy, the gap between the defaults "
        "and 'same C' the price of the regularisation privacy needs.",
        "",
        md_table(["dataset", "classes", "train rows x features",
                  "LogisticRegression acc", "its fit time", "LR same C acc",
                  f"skforget eps={EPSILON:g} acc", "skforget fit time", "steps K_A",
                  "time skforget / sklearn"], rows),
        "",
        md_table(["dataset", "train rows x features", "Ridge R²", "its fit time",
                  "Ridge same alpha R²", f"skforget eps={EPSILON:g} R²",
                  "skforget fit time", "steps K_A", "time skforget / sklearn"],
                 reg_rows),
        "",
        f"skforget hyper-parameters (chosen once, at epsilon=1): {params}.",
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
        for off, key, lab in ((-0.25, "sklearn", "sklearn (defaults)"),
                              (0.0, "sklearn_same", "sklearn (same C / alpha)"),
                              (0.25, "skforget", f"skforget eps={EPSILON:g}")):
            axes[0].bar(x + off, [np.mean(r["scores"][key]) for r in results], 0.25,
                        yerr=[np.std(r["scores"][key]) for r in results], label=lab)
        axes[0].set_xticks(x, labels, fontsize=7)
        axes[0].set_ylabel("test accuracy (R² for regression)")
        axes[0].set_ylim(0, 1)
        axes[0].legend(fontsize=7)
        axes[1].bar(x - 0.2, [r["median_fit_seconds"]["sklearn"] for r in results],
                    0.4, label="sklearn (defaults)")
        axes[1].bar(x + 0.2, [r["median_fit_seconds"]["skforget"] for r in results],
                    0.4, label=f"skforget eps={EPSILON:g}")
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
