# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Output perturbation against noisy GD, side by side (issue 17).

:class:`~skforget.OutputPerturbationClassifier` (one certified solve plus one
Gaussian vector; deletion by refit) and :class:`~skforget.NoisyGDClassifier`
(noisy passes; deletion by ``partial_unlearn``) with the same privacy
parameters (epsilon, delta='auto', relation, clip_norm="auto", C="auto", each
resolved by the estimator's own rule, privacy-accounting.md, Section 8.5: the
resolved lambda and clip_norm of both are reported, since they can differ) on the
bundled breast_cancer and digits sets and a 200000 x 100 synthetic set (20000 rows
with ``--smoke``). Measured, in one run:

* fit time (interleaved rounds, medians) and held-out accuracy at epsilon=1;
* held-out accuracy for epsilon in 0.1 .. 10 (mean over seeds), with the lambda
  each default resolved to;
* the cost of deleting one record: the output-perturbation refit against
  noisy GD's ``partial_unlearn`` (interleaved, fresh copies);
* the noise: at equal rho and lambda, output perturbation's per-coordinate
  variance ``sigma^2`` against noisy GD's stationary spread in a flat direction
  ``S^2 / (2 lam^2 rho N^2)`` (privacy-accounting.md, Section 15.6), and the
  spread of the released coefficients over seeds for both.

Run alone: ``python benchmarks/bench_output_perturbation.py [--smoke] [--out DIR]``
(``--out`` writes ``output_perturbation.md`` / ``.json`` with the machine).
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
    machine_info,
    md_table,
    scenario_main,
    write_json,
)

from skforget import EditRequest, NoisyGDClassifier, OutputPerturbationClassifier

EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
CONTENDERS = {"output perturbation": OutputPerturbationClassifier,
              "noisy GD": NoisyGDClassifier}


def _datasets(smoke):
    for name in ("breast_cancer", "digits"):
        d = _data.load(name)
        yield name, *_data.split(d), d.public
    n = 20_000 if smoke else 200_000
    syn = _data.make_synthetic(n + n // 4)
    yield "synthetic", *_data.split(syn, test_size=n // 4), syn.public


def _params(y):
    classes = sorted(np.unique(y).tolist())
    extra = {"intercept_scaling": 0.1} if len(classes) > 2 else {}
    return dict(classes=classes, max_edit_size=1, **extra)


def _resolved(model):
    """The regularisation and clipping a fitted model's defaults resolved to."""
    g = model.privacy_guarantee_
    return {"lambda": float(g.regularization),
            "clip_norm": None if g.clip_norm is None else float(g.clip_norm)}


def _fmt_clip(clip):
    return "none" if clip is None else f"{clip:.3g}"


def _fit(cls, X, y, seed, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return cls(random_state=seed, **params).fit(X, y)


def _noise(X, y, params, seeds):
    """Predicted and measured per-coordinate spread at epsilon=1 (Section 15.6)."""
    models = {k: [_fit(c, X, y, s, epsilon=1.0, **params) for s in seeds]
              for k, c in CONTENDERS.items()}
    op, gd = models["output perturbation"][0], models["noisy GD"][0]
    g = op.privacy_guarantee_
    rho, lam, S, N = g.rho, g.regularization, g.sensitivity, g.normaliser
    flat = S * S / (2 * lam * lam * rho * N * N)

    def spread(ms):
        coefs = np.array([np.concatenate([np.ravel(m.coef_), np.ravel(m.intercept_)
                                          / max(m._intercept_scaling(), 1e-300)])
                          for m in ms])
        return float(np.mean(np.var(coefs, axis=0, ddof=1)))

    return {
        "lambda_equal": bool(np.isclose(lam, gd.privacy_guarantee_.regularization)),
        "rho_op": rho, "rho_gd": gd.privacy_guarantee_.rho,
        "sigma2_op": g.noise_scale ** 2, "gd_flat_spread_theory": flat,
        "measured_spread_op": spread(models["output perturbation"]),
        "measured_spread_gd": spread(models["noisy GD"]),
        "gd_noise_factor": gd.privacy_guarantee_.noise_factor,
    }


def _configs(smoke):
    """(label, X, X_te, y, y_te, public, C): the default regularisation on
    every set, and scikit-learn's C=1 (weak for DP) on the small ones."""
    for name, X, X_te, y, y_te, public in _datasets(smoke):
        yield name, X, X_te, y, y_te, public, "auto"
        if name != "synthetic":
            yield f"{name} (C=1)", X, X_te, y, y_te, public, 1.0


def _time_fits(X, y, params, rounds):
    fitted = {}

    def fitter(key):
        def f():
            fitted[key] = _fit(CONTENDERS[key], X, y, 0, epsilon=1.0, **params)
        return f

    times = interleaved_times({k: fitter(k) for k in CONTENDERS}, repeats=rounds,
                              warmup=1)
    return {k: float(np.median(v)) for k, v in times.items()}, fitted


def _time_deletions(fitted, request, rounds):
    """One record deleted from fresh copies of the fitted models, interleaved."""
    seeds = iter(range(1, 10 ** 6))
    served = {}

    def deleter(key):
        def f(model):
            served[key] = model.partial_unlearn(request)
        return f

    def setup(key):
        return copy.deepcopy(fitted[key]).set_params(random_state=next(seeds))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        times = interleaved_times({k: deleter(k) for k in CONTENDERS},
                                  repeats=rounds, warmup=0, setup=setup)
    return {k: float(np.median(v)) for k, v in times.items()}, served


def run(*, smoke=False, out_dir=None, log=print, out=None):
    rounds = 1 if smoke else 5
    records, fit_rows, acc_rows, del_rows, noise_rows, publics = [], [], [], [], [], []
    for name, X, X_te, y, y_te, public, C in _configs(smoke):
        if C == "auto":
            publics.append(f"* **{name}**: {public}.")
        params = dict(_params(y), C=C)
        # Small test sets (143 rows for breast_cancer): more seeds.
        seeds = range(1 if smoke else 3 if name == "synthetic" else 10)
        rec = {"dataset": name, "C": C, "n_train": X.shape[0],
               "n_features": X.shape[1]}
        med, fitted = _time_fits(X, y, params, rounds)
        acc1 = {k: fitted[k].score(X_te, y_te) for k in CONTENDERS}
        rec["fit_seconds"] = med
        rec["fit_accuracy_eps1"] = acc1
        rec["lambda"] = fitted["output perturbation"].privacy_guarantee_.regularization
        rec["resolved_eps1"] = {k: _resolved(fitted[k]) for k in CONTENDERS}
        res = rec["resolved_eps1"]
        fit_rows.append([name, f"{X.shape[0]} x {X.shape[1]}",
                         f"{res['output perturbation']['lambda']:.3g}",
                         f"{res['noisy GD']['lambda']:.3g}",
                         _fmt_clip(res["output perturbation"]["clip_norm"]),
                         _fmt_clip(res["noisy GD"]["clip_norm"]),
                         fmt_time(med["output perturbation"]),
                         fmt_time(med["noisy GD"]),
                         f"{med['noisy GD'] / med['output perturbation']:.2f}",
                         f"{acc1['output perturbation']:.3f}",
                         f"{acc1['noisy GD']:.3f}"])
        log(f"  {name}: fit OP {fmt_time(med['output perturbation'])}, "
            f"GD {fmt_time(med['noisy GD'])}")
        acc = {k: [] for k in CONTENDERS}
        lams = {k: [] for k in CONTENDERS}
        for eps in EPSILONS:
            for k, cls in CONTENDERS.items():
                models = [_fit(cls, X, y, s, epsilon=eps, **params) for s in seeds]
                acc[k].append(float(np.mean([m.score(X_te, y_te) for m in models])))
                lams[k].append(_resolved(models[0])["lambda"])
        rec["accuracy_by_epsilon"] = {"epsilons": list(EPSILONS), **acc}
        rec["lambda_by_epsilon"] = {"epsilons": list(EPSILONS), **lams}
        for i, eps in enumerate(EPSILONS):
            op_a, gd_a = acc["output perturbation"][i], acc["noisy GD"][i]
            acc_rows.append([name, f"{eps:g}",
                             f"{lams['output perturbation'][i]:.3g}",
                             f"{lams['noisy GD'][i]:.3g}",
                             f"{op_a:.3f}", f"{gd_a:.3f}",
                             "output perturbation" if op_a > gd_a + 0.005 else
                             "noisy GD" if gd_a > op_a + 0.005 else "tie"])
        request = EditRequest(X, y, delete=[int(X.shape[0] // 2)])
        dmed, served = _time_deletions(fitted, request, rounds)
        gd_cert = served["noisy GD"].privacy_guarantee_.deletion
        rec["deletion_seconds"] = dmed
        rec["gd_deletion_served_by"] = "retraining" if gd_cert.retrained \
            else "unlearning"
        rec["gd_deletion_epsilon"] = gd_cert.epsilon_deletion
        del_rows.append([name, fmt_time(dmed["output perturbation"]),
                         fmt_time(dmed["noisy GD"]), rec["gd_deletion_served_by"],
                         f"{dmed['noisy GD'] / dmed['output perturbation']:.2f}",
                         "0", f"{gd_cert.epsilon_deletion:.3g}"])
        if name != "synthetic":  # many fits: the small sets only
            nz = _noise(X, y, params, range(3 if smoke else 12))
            rec["noise"] = nz
            ratio = nz["measured_spread_op"] / nz["measured_spread_gd"]
            noise_rows.append([name, "yes" if nz["lambda_equal"] else "no",
                               f"{nz['sigma2_op']:.3g}",
                               f"{nz['gd_flat_spread_theory']:.3g}",
                               f"{nz['sigma2_op'] / nz['gd_flat_spread_theory']:.4f}",
                               f"{nz['measured_spread_op']:.3g}",
                               f"{nz['measured_spread_gd']:.3g}", f"{ratio:.1f}"])
        records.append(rec)
    md = [
        "Same privacy parameters for both (epsilon, delta='auto', replace-one, "
        "clip_norm='auto', C='auto', max_edit_size=1), each default resolved by "
        "the estimator's own rule (Section 8.5; the lambda and clip columns give "
        "what each resolved to: 'none' is no clipping); "
        f"{'1 seed' if smoke else '10 seeds (3 on synthetic)'} per accuracy, "
        f"{rounds} interleaved round(s) per "
        "timing (medians). Held-out accuracy.",
        "",
        "**Fit at epsilon=1**",
        "",
        md_table(["configuration", "rows x features", "lambda OP",
                  "lambda noisy GD", "clip OP", "clip noisy GD", "fit OP",
                  "fit noisy GD",
                  "GD / OP time", "acc OP", "acc noisy GD"], fit_rows),
        "",
        "**Accuracy against epsilon**",
        "",
        md_table(["dataset", "epsilon", "lambda OP", "lambda noisy GD", "acc OP",
                  "acc noisy GD", "better"], acc_rows),
        "",
        "**Deleting one record** (output perturbation: refit with fresh noise; "
        "noisy GD: partial_unlearn, which continues or retrains)",
        "",
        md_table(["dataset", "OP refit", "noisy GD partial_unlearn",
                  "GD served by", "GD / OP time", "OP eps_deletion",
                  "GD eps_deletion"], del_rows),
        "",
        "**Noise at equal rho** (epsilon=1): output perturbation's "
        "per-coordinate variance sigma^2 = (1 + 2 tol)^2 S^2 / (2 lam^2 rho N^2) "
        "against noisy GD's stationary spread in a flat direction, S^2 / (2 "
        "lam^2 rho N^2) (privacy-accounting.md, Section 15.6; the ratio is the "
        "tolerance factor 1.002^2 = 1.004), then the variance of the released "
        "coefficients over seeds, averaged over coordinates (noisy GD's is "
        "smaller where the data curve the loss; mini-batch fits also carry the "
        "noise factor of Section 12.6). The theory columns use output "
        "perturbation's lambda; where the two defaults resolve to different "
        "lambdas ('same lambda' no), the measured spreads compare the two "
        "defaults, not the two mechanisms at equal lambda.",
        "",
        md_table(["dataset", "same lambda", "sigma^2 OP",
                  "GD flat spread (theory)", "ratio",
                  "measured spread OP", "measured spread GD", "OP / GD"],
                 noise_rows),
        "",
        "How to read it: where the two resolve about the same lambda and lambda "
        "dominates the data's curvature, noisy GD's noise is at the "
        "flat-direction level too and the two mechanisms spread their "
        "coefficients alike; output perturbation releases the exact minimiser "
        "while noisy GD's short fit carries optimisation error and the "
        "mini-batch noise factor. Where the defaults differ (the lambda and "
        "clip columns), the accuracies compare the two defaults, not the two "
        "mechanisms. With weak regularisation (C=1) the data's curvature damps "
        "noisy GD's noise (Section 15.6). Which is ahead, and by how much time, "
        "is in the 'better' and 'GD / OP time' columns of this run. Output "
        "perturbation's deletion always certifies 0 and its guarantee is an "
        "exact Gaussian figure; noisy GD's continuation certifies "
        "deletion_epsilon.",
        "",
        *publics,
    ]
    section = Section("output_perturbation",
                      "Output perturbation vs noisy GD (issue 17)", "\n".join(md),
                      {"configs": records, "epsilons": list(EPSILONS)})
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        info = machine_info()
        (out / "output_perturbation.md").write_text(
            f"# {section.title}\n\nCommand: `python benchmarks/"
            f"bench_output_perturbation.py{' --smoke' if smoke else ''} --out "
            f"{out}`.\n\nMachine: {info['date']}, {info['cpu_model']}, "
            f"{info['cpu_count']} cores, {info['memory_gib']} GiB; Python "
            f"{info['python']}; " + ", ".join(f"{k} {v}" for k, v in
                                             info["versions"].items() if v)
            + f"; git {info['git_commit']}.\n\n{section.markdown}\n")
        write_json(out / "output_perturbation.json",
                   {"machine": info, **section.data})
    return section


def _add_arguments(parser):
    from pathlib import Path

    parser.add_argument("--out", type=Path, default=None,
                        help="write output_perturbation.md/.json here")


if __name__ == "__main__":
    sys.exit(scenario_main(run, __doc__, add_arguments=_add_arguments))
