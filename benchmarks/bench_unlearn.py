# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""partial_unlearn against retraining from scratch (issues 4 and 12).

A model is fitted once; then 1, 10 or 100 random rows are deleted, either by
``partial_unlearn`` or by fitting a new model on the edited data, with the same
privacy parameters (epsilon, delta, deletion_epsilon, C, clip_norm,
max_edit_size=100, which the 100-row case needs). ``partial_unlearn`` serves the
edit with unlearning passes from the current model, or by retraining from a
fresh start when the accountant finds that no dearer (the "served by" column;
privacy-accounting.md, Section 12.7). Both timings include producing the
edited database (``request.apply()``), which partial_unlearn does internally.
Each round runs the two contenders back to back (interleaved), on a fresh copy
of the fitted model, and ratios are taken of medians.

Configurations: the skforget defaults on a 200000-row synthetic set (where the
fit takes a few passes and every edit retrains), the same set with strong
regularisation (C=0.003, where the fit is long enough for unlearning to be
cheaper), and digits (small, full batch). Two deletion targets: the default
``deletion_epsilon = epsilon / 10`` and ``deletion_epsilon = epsilon``. Target
of issue 12: at least 10x cheaper than refitting for 1-10 rows, n >= 100k, at
the default deletion_epsilon.
"""

import copy
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

from skforget import EditRequest, NoisyGDClassifier

TARGET = 10.0
EPSILON = 1.0
EDIT_SIZES = (1, 10, 100)
PARAMS = {
    "synthetic (defaults)": dict(classes=[0, 1]),
    "synthetic (C=0.003)": dict(classes=[0, 1], C=0.003),
    "digits": dict(classes=list(range(10)), C=0.002, intercept_scaling=0.1),
}


def _datasets(smoke):
    """(name, X_train, X_test, y_train, y_test); synthetic: 200000 training rows."""
    n_train = 20_000 if smoke else 200_000
    syn = _data.make_synthetic(n_train + n_train // 4)
    split = _data.split(syn, test_size=n_train // 4)
    yield ("synthetic (defaults)", *split, syn.public)
    yield ("synthetic (C=0.003)", *split, syn.public)
    dig = _data.load("digits")
    yield ("digits", *_data.split(dig), dig.public)


def _bench_edit(fitted, params, request, X_te, y_te, *, rounds):
    """Time partial_unlearn and a retrain for one request, interleaved."""
    seeds = iter(range(1, 10**6))
    # Models are kept and scored after the timing, so only the work of
    # unlearning / retraining is timed.
    models = {"unlearn": [], "retrain": []}

    def unlearn(model):
        models["unlearn"].append(model.partial_unlearn(request))

    def retrain():
        X_new, y_new = request.apply()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            model = NoisyGDClassifier(random_state=next(seeds), **params)
            models["retrain"].append(model.fit(X_new, y_new))

    # The copy of the fitted model is made outside the timed region; its noise
    # seed is fixed, so give every round its own.
    def setup(which):
        if which != "unlearn":
            return None
        model = copy.deepcopy(fitted)
        model.set_params(random_state=next(seeds))
        return model

    times = interleaved_times({"unlearn": unlearn, "retrain": retrain},
                              repeats=rounds, warmup=0, setup=setup)
    med = {k: float(np.median(v)) for k, v in times.items()}
    acc = {k: [m.score(X_te, y_te) for m in v] for k, v in models.items()}
    passes_unlearn = int(models["unlearn"][-1].n_unlearn_iter_)
    passes_retrain = int(np.ravel(models["retrain"][-1].n_iter_)[0])
    cert = models["unlearn"][-1].privacy_guarantee_.deletion
    return {
        "passes_unlearn": passes_unlearn, "passes_retrain": passes_retrain,
        "served_by": "retraining" if cert.retrained else "unlearning",
        "step_ratio": passes_retrain / max(passes_unlearn, 1),
        "median_seconds": med, "wall_ratio": med["retrain"] / med["unlearn"],
        "accuracy_unlearn": acc["unlearn"], "accuracy_retrain": acc["retrain"],
        "epsilon_deletion_per_record": cert.epsilon_deletion,
        "epsilon_deletion_batch": cert.epsilon_deletion_batch,
    }


def bench_config(name, X, X_te, y, y_te, *, deletion_epsilon, rounds):
    params = dict(epsilon=EPSILON, deletion_epsilon=deletion_epsilon,
                  max_edit_size=max(EDIT_SIZES), **PARAMS[name])
    fitted = NoisyGDClassifier(random_state=0, **params).fit(X, y)
    rng = np.random.default_rng(0)
    out = []
    for r in EDIT_SIZES:
        request = EditRequest(X, y, delete=rng.choice(X.shape[0], r, replace=False))
        rec = _bench_edit(fitted, params, request, X_te, y_te, rounds=rounds)
        out.append({
            "dataset": name, "n_samples": X.shape[0], "n_features": X.shape[1],
            "deletion_epsilon": deletion_epsilon, "rows_deleted": r, **rec,
            "fit_passes": int(np.ravel(fitted.n_iter_)[0]),
            "edit_mode": fitted._plan.edit_mode, "rounds": rounds,
            "params": {k: (list(v) if isinstance(v, (list, tuple)) else v)
                       for k, v in params.items()},
        })
    return out


def run(*, smoke=False, out_dir=None, log=print):
    results, rows, publics = [], [], []
    for name, X, X_te, y, y_te, public in _datasets(smoke):
        publics.append(f"* **{name}**: {public}.")
        rounds = 1 if smoke else (3 if name.startswith("synthetic") else 7)
        for frac in (0.1, 1.0):
            for rec in bench_config(name, X, X_te, y, y_te,
                                    deletion_epsilon=EPSILON * frac, rounds=rounds):
                results.append(rec)
                small = rec["rows_deleted"] <= 10
                verdict = ("" if not small else
                           "met" if min(rec["wall_ratio"], rec["step_ratio"]) >= TARGET
                           else "NOT met")
                rows.append([
                    name, f"{rec['n_samples']} x {rec['n_features']}",
                    f"{rec['deletion_epsilon']:g}", str(rec["rows_deleted"]),
                    rec["served_by"],
                    str(rec["passes_unlearn"]), str(rec["passes_retrain"]),
                    f"{rec['step_ratio']:.1f}",
                    fmt_time(rec["median_seconds"]["unlearn"]),
                    fmt_time(rec["median_seconds"]["retrain"]),
                    f"{rec['wall_ratio']:.1f}", verdict,
                    f"{np.mean(rec['accuracy_unlearn']):.3f}",
                    f"{np.mean(rec['accuracy_retrain']):.3f}",
                    f"{rec['epsilon_deletion_per_record']:.3g}",
                ])
                log(f"  unlearn {name} eps_dd={rec['deletion_epsilon']:g} "
                    f"r={rec['rows_deleted']}: steps {rec['step_ratio']:.1f}x, wall "
                    f"{rec['wall_ratio']:.1f}x")
    md = [
        f"epsilon={EPSILON:g}, delta='auto', max_edit_size={max(EDIT_SIZES)}; one "
        "fitted model per configuration, then per edit size the median over "
        "interleaved rounds of partial_unlearn (on a fresh copy) and of a fit "
        "from scratch on the edited data. 'passes' = passes over the rows of "
        "partial_unlearn and of the retrain; 'passes ratio' = retrain / "
        "partial_unlearn; 'wall' ratio = retrain time / partial_unlearn time; the "
        f"target (>= {TARGET:g}x for 1-10 rows) is judged on both. Test accuracy "
        "is on held-out rows; the last column is the certificate of each deleted "
        "record (retraining certifies 0).",
        "",
        md_table(["configuration", "rows x features", "deletion_epsilon",
                  "rows deleted", "served by", "passes", "retrain passes",
                  "passes ratio", "partial_unlearn", "retrain", "wall ratio",
                  f">= {TARGET:g}x?", "acc unlearned", "acc retrained",
                  "certified eps_deletion"], rows),
        "",
        "Why the 10x target is out of reach once fits are fast: unlearning a "
        "record needs K_R^priv = ln(rho_inf_del / rho_dd) / (2 ln(1/c)) steps "
        "(eq. 5.5; the deleted record may sit in a direction only the "
        "regulariser contracts, and the bound is attained there, Section 5.4), "
        "about 1.4 relaxation times 1/(eta lam) at deletion_epsilon = epsilon / "
        "10. A fit needs the steps in which the data's own curvature h "
        "contracts, ln(err0 / target) / (eta (lam + h)) (Section 8.4), which is "
        "far fewer when h >> lam, as it is for useful regularisation on large "
        "data. So partial_unlearn serves such edits by retraining (never dearer "
        "than a refit, and certifying 0), and is cheaper than a refit only when "
        "the fit itself is long (strong regularisation, small data).",
        "",
        *publics,
    ]
    section = Section("unlearn", "partial_unlearn vs retraining (issues 4, 12)",
                      "\n".join(md), {"configs": results, "target": TARGET})
    plt = pyplot()
    if plt is not None and out_dir is not None:
        fig, ax = plt.subplots(figsize=(10, 3.8))
        x = np.arange(len(results))
        ax.bar(x - 0.2, [r["step_ratio"] for r in results], 0.4, label="passes ratio")
        ax.bar(x + 0.2, [r["wall_ratio"] for r in results], 0.4, label="wall ratio")
        ax.axhline(TARGET, color="k", ls="--", lw=1, label=f"target {TARGET:g}x")
        ax.set_xticks(x, [f"{r['dataset']}\neps_dd={r['deletion_epsilon']:g}\n"
                          f"{r['rows_deleted']} row(s)" for r in results], fontsize=6)
        ax.set_ylabel("retrain / partial_unlearn")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        ax.set_title(f"Deleting rows: retraining cost over unlearning cost "
                     f"(epsilon={EPSILON:g})")
        section.plots.append(save_figure(fig, out_dir, "unlearn_vs_retrain.png"))
    return section


def main(argv=None):
    return scenario_main(run, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
