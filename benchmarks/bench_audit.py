# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Membership-inference audit of deletion and of DP, next to the certificates.

For each privacy level, :mod:`skforget.audit` releases many models (one noise
seed each) from two worlds and measures how well the canary's margin tells them
apart, giving an empirical lower confidence bound on epsilon:

* **deletion**: ``fit`` on the data plus a worst-case canary, then
  ``partial_unlearn`` of the canary, against the same pipeline with a stand-in
  record (the canary's features with the other label) in its slot; compared
  with the certificate's ``epsilon_deletion``;
* **DP**: the same two worlds right after ``fit``, compared with the model's
  ``epsilon``;
* **control**: a deliberately broken unlearner that runs the K_R steps but
  releases its old coefficients (and the genuine certificate). The audit must
  flag it, which shows it has the power to see a deletion that does not happen.

The canary points along the direction in which the data vary least, with the
minority label, and has norm ``data_norm``: there the model forgets only
through regularisation and noise (see :func:`skforget.audit.make_canary`).

* **mini-batches**: the same two audits with ``batch_size=32`` (the cyclic
  schedule of the spec's Section 12, a different mechanism from full batch).
* **hostile canary**: the attack that broke an earlier build (a finite row of
  1e200 whose squared norm overflowed and skipped clipping; 300 models per
  world separated the worlds perfectly, empirical epsilon >= 3.52 against a
  certified 0.99), against the default regressor and a one-vs-rest classifier
  with ``clip_norm=0.1``, the record present at ``fit`` or inserted by an edit.
"""

import sys
import warnings

import _data
import numpy as np
from _common import Section, md_table, pyplot, save_figure, scenario_main
from bench_fit import CLASSIFIER_PARAMS

from skforget import NoisyGDClassifier, NoisyGDRegressor
from skforget.audit import (
    Canary,
    _epsilon_from_rates,
    audit_deletion,
    audit_dp,
    clopper_pearson,
)
from skforget.exceptions import PrivacyLeakWarning

DATASET = "breast_cancer"
MODE_NAMES = {"dp": "DP", "deletion": "deletion", "insert": "DP after insert"}
CONFIDENCE = 0.95


class LazyUnlearner(NoisyGDClassifier):
    """Broken on purpose: runs partial_unlearn, then restores the old coefficients.

    It reports the genuine deletion certificate while releasing a model that
    still carries the deleted record's full trace; used as the audit's control.
    """

    def partial_unlearn(self, edits):
        coef, intercept = self.coef_, self.intercept_
        super().partial_unlearn(edits)
        self.coef_, self.intercept_ = coef, intercept
        return self


class ReparametrisedUnlearner(NoisyGDRegressor):
    """A user who raises ``clip_norm`` between ``fit`` and an edit (issue 21).

    The edit must still run with the values frozen at fit; an earlier build
    clipped the edit's gradients at 1000 with the fit's noise, and 300 models
    per world read empirical epsilon >= 3.69 against a certified 1.00.
    """

    def partial_unlearn(self, edits):
        self.set_params(clip_norm=1000.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return super().partial_unlearn(edits)


def audit_ceiling(n_eval, delta, confidence=CONFIDENCE):
    """Largest lower bound an audit of this size can show (zero errors)."""
    each = 1.0 - (1.0 - confidence) / 2.0
    _, hi = clopper_pearson(0, n_eval, confidence=each)
    return float(_epsilon_from_rates(hi, hi, delta))


def hostile_data():
    """Small public-scale data and the hostile canaries of the attack."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 2))
    X /= 1.5 * np.linalg.norm(X, axis=1, keepdims=True)
    y_reg = X @ np.array([0.5, -0.3]) + 0.05 * rng.standard_normal(200)
    y_clf = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.2)
    huge = np.array([1e200, 0.0])
    benign = np.array([0.5, 0.0])
    return [
        ("regressor, row [1e200, 0], target 1e6", NoisyGDRegressor, {},
         X, y_reg, Canary(x=huge, y=1e6, x_reference=benign, y_reference=0.0)),
        ("one-vs-rest clip_norm=0.1, row [1e200, 0]", NoisyGDClassifier,
         {"multi_class": "ovr", "clip_norm": 0.1, "classes": [0, 1, 2]},
         X, y_clf, Canary(x=huge, y=2, x_reference=benign, y_reference=0)),
        ("regressor, clip_norm raised to 1000 by set_params, target +-1000",
         ReparametrisedUnlearner, {}, X, y_reg,
         Canary(x=benign, y=1000.0, x_reference=benign, y_reference=-1000.0)),
    ]


def run(*, smoke=False, out_dir=None, log=print):
    data = _data.load(DATASET)
    X, y = data.X, data.y
    params = dict(CLASSIFIER_PARAMS[DATASET], max_edit_size=1)
    epsilons = [10.0] if smoke else [1.0, 4.0, 10.0]
    n_trials = 100 if smoke else 1000
    configs = [("DP (present canary)", "dp", eps, NoisyGDClassifier, {})
               for eps in epsilons]
    configs += [("deletion", "deletion", eps, NoisyGDClassifier, {})
                for eps in epsilons]
    # The cyclic mini-batch schedule is its own mechanism (Section 12 of the
    # spec): audited separately, the canary at a random batch position.
    mini = {"batch_size": 32}
    configs += [(f"{what} (mini-batches of 32)", mode, eps, NoisyGDClassifier, mini)
                for what, mode in (("DP (present canary)", "dp"),
                                   ("deletion", "deletion"))
                for eps in epsilons[-2:]]
    # The control claims a strong deletion certificate (deletion_epsilon=0.1)
    # while keeping the canary's whole trace, so even a small audit sees it.
    configs.append(("control: unlearner that does not forget (deletion_epsilon="
                    "0.1)", "deletion", epsilons[-1], LazyUnlearner,
                    {"deletion_epsilon": 0.1}))
    configs = [(label, mode, eps, cls, extra, X, y, None)
               for label, mode, eps, cls, extra in configs]
    # The hostile-input attack: 300 models per world, as in the review.
    for label, cls, extra, Xh, yh, canary in hostile_data():
        # A parameter changed after fit can only reach an edit.
        vias = ("insert",) if cls is ReparametrisedUnlearner else ("fit", "insert")
        for via in vias:
            configs.append((f"hostile canary ({via}): {label}", f"dp-{via}", 1.0,
                            cls, extra, Xh, yh, canary))
    results, rows = [], []
    for label, mode, eps, cls, extra, Xa, ya, canary in configs:
        est = cls(epsilon=eps, **(params if canary is None else {}), **extra)
        kw = dict(n_trials=n_trials if canary is None else (60 if smoke else 300),
                  confidence=CONFIDENCE, random_state=0, n_jobs=2)
        if canary is not None:
            audit = audit_dp
            kw.update(canary=canary, via=mode.split("-")[1])
        else:
            audit = audit_dp if mode == "dp" else audit_deletion
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PrivacyLeakWarning)
            res = audit(est, Xa, ya, **kw)
        flagged = any(issubclass(w.category, PrivacyLeakWarning) for w in caught)
        rec = {"label": label, "epsilon_target": eps, "estimator": cls.__name__,
               **res.to_dict(), "warning_issued": flagged,
               "ceiling": audit_ceiling(res.test.n_in, res.delta)}
        results.append(rec)
        lo, hi = res.epsilon_interval
        verdict = ("below the certificate" if not res.violated else
                   "VIOLATION flagged (as it must be)" if cls is LazyUnlearner
                   else "**VIOLATION: bug**")
        rows.append([label, f"{eps:g}", f"{res.epsilon_certified:.3g}",
                     f"{res.epsilon_lower:.3g}", f"{res.epsilon_estimate:.3g}",
                     f"[{lo:.3g}, {hi:.3g}]", f"{res.test.fpr:.3f}",
                     f"{res.test.fnr:.3f}", verdict])
        log(f"  audit {label} eps={eps:g}: empirical >= {res.epsilon_lower:.3g}, "
            f"certified {res.epsilon_certified:.3g}"
            + (" VIOLATION" if res.violated else ""))
    genuine = [r for r in results if r["estimator"] != LazyUnlearner.__name__]
    bug = [r for r in genuine if r["violated"]]
    ceiling = results[0]["ceiling"]
    md = [
        f"{DATASET} ({X.shape[0]} rows + the canary), skforget "
        + ", ".join(f"{k}={v}" for k, v in params.items())
        + f", delta={results[0]['delta']:.0e}; {n_trials} released models per "
        f"world (half choose the threshold, half measure it), statistic: the "
        f"canary's margin. 'empirical' is a {CONFIDENCE:.0%} lower confidence "
        "bound (Clopper-Pearson on FPR and FNR, jointly); the interval is that of "
        "the epsilon this test witnesses, not a bound on the true epsilon.",
        "",
        md_table(["audited", "epsilon (target)", "certified epsilon",
                  "empirical epsilon >=", "estimate", "interval", "FPR", "FNR",
                  "verdict"], rows),
        "",
        "The hostile-canary rows audit the attack that broke an earlier build: "
        "200 synthetic rows in 2-D with public scaling, the canary a finite row "
        "[1e200, 0] (its squared norm overflows float64), 300 models per world "
        "(60 in the smoke run). On that build the regressor row read empirical "
        "epsilon >= 3.52 against a certified 0.99.",
        "",
        f"With {results[0]['n_trials'] // 2} evaluation models per world, no audit "
        f"of this size can show more than epsilon ~ {ceiling:.2g} even with zero "
        "errors: the empirical figures are lower bounds by construction, and a "
        "gap to the certificate says the certified bound was not reached by this "
        "canary and this test, not that it is loose.",
        "",
        ("**No genuine configuration exceeded its certificate.**" if not bug else
         "**BUG: a genuine configuration exceeded its certificate: "
         + ", ".join(f"{r['label']} eps={r['epsilon_target']:g}" for r in bug)
         + ". Report it.**"),
    ]
    section = Section("audit", "Audit: empirical epsilon vs certified epsilon",
                      "\n".join(md), {"audits": results, "dataset": DATASET,
                                      "params": params})
    section.failed = bool(bug)
    plt = pyplot()
    if plt is not None and out_dir is not None:
        fig, ax = plt.subplots(figsize=(6.5, 3.8))
        for mode, marker in (("dp", "o"), ("deletion", "s"), ("insert", "^")):
            pts = [r for r in genuine if r["mode"] == mode]
            ax.errorbar([r["epsilon_certified"] for r in pts],
                        [r["epsilon_lower"] for r in pts],
                        marker=marker, ls="none",
                        label=f"{MODE_NAMES[mode]}: empirical lower bound")
        ctrl = [r for r in results if r["estimator"] == LazyUnlearner.__name__]
        ax.plot([r["epsilon_certified"] for r in ctrl],
                [r["epsilon_lower"] for r in ctrl], "rx", ms=9,
                label="control (broken unlearner)")
        top = max(max(r["epsilon_certified"] for r in results), ceiling) * 1.3
        grid = np.linspace(0, top, 200)
        ax.plot(grid, grid, "k--", lw=1, label="certified bound (y = x)")
        ax.axhline(ceiling, color="grey", ls=":", lw=1, label="audit-size ceiling")
        ax.set_xlabel("certified epsilon")
        ax.set_ylabel(f"empirical epsilon ({CONFIDENCE:.0%} lower bound)")
        # The same symmetric-log scale on both axes keeps y = x a straight line
        # and shows certificates from 0.1 to 10 and empirical zeros together.
        for axis in (ax.set_xscale, ax.set_yscale):
            axis("symlog", linthresh=0.1)
        ax.set_xlim(0, top)
        ax.set_ylim(-0.02, top)
        ax.set_title(f"Audit on {DATASET}: must stay below y = x")
        ax.legend(fontsize=7)
        section.plots.append(save_figure(fig, out_dir, "audit.png"))
    return section


def main(argv=None):
    return scenario_main(run, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
