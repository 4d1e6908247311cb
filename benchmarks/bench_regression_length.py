# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The fit's length of NoisyGDRegressor on real regression tables.

privacy-accounting.md, Section 8.4: the typical recipe stops a fit when the
bias of the unfinished fit reaches the noise's Gibbs level in the directions
the model's metric counts. For a classifier those are its output scores (the
bias moves every decision the same way); issue 23's third round set that for
every loss, which made regressors' fits longer. For the squared loss the
metric is the risk itself, to which every coefficient's noise adds as the
bias does: its target counts every coefficient again. This measures the two
side by side, held-out R^2 of ``NoisyGDRegressor(alpha="auto")`` with

* the target at the output direction (one; the rule of issue 23's third
  round), and
* the target at every coefficient (the library's rule for the squared loss),

next to ``LinearRegression()``, at epsilon 1 and 8, the same split and noise
seeds for both arms (interleaved), on the ten tables of
``bench_regression_alpha.py``, prepared as there (its ``prepared``).

Run: ``python benchmarks/bench_regression_length.py --out-dir
benchmarks/results`` (about 3 minutes on 2 cores).
"""

import warnings

import numpy as np
from _common import md_table, table_scenario
from bench_regression_alpha import TABLES, prepared
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from skforget import NoisyGDRegressor
from skforget.accounting import _calibration

EPSILONS = (1.0, 8.0)
SEEDS = 7
ARMS = ("output direction", "every coefficient")


class _OutputDirection:
    """The fit's target at the output direction for every loss (the rule of
    issue 23's third round)."""

    def __enter__(self):
        self._before = _calibration.utility_directions
        _calibration.utility_directions = (
            lambda loss, n_classes, n_params: _calibration.n_outputs(loss, n_classes))

    def __exit__(self, *exc):
        _calibration.utility_directions = self._before


def run_table(name, *, epsilons, seeds, log):
    X_tr, X_te, y_tr, y_te, half = prepared(name)
    ols = r2_score(y_te, LinearRegression().fit(X_tr, y_tr).predict(X_te))
    log(f"  {name}: {len(y_tr)} training rows, {X_tr.shape[1]} features, "
        f"OLS R2 {ols:.3f}")
    out = {"n_train": len(y_tr), "n_features": X_tr.shape[1], "ols_r2": ols}
    for eps in epsilons:
        r2 = {a: [] for a in ARMS}
        passes = {a: [] for a in ARMS}
        for seed in range(seeds):
            for arm in (ARMS if seed % 2 == 0 else ARMS[::-1]):   # interleaved
                model = NoisyGDRegressor(alpha="auto", epsilon=eps,
                                         target_scale=half, random_state=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if arm == ARMS[0]:
                        with _OutputDirection():
                            model.fit(X_tr, y_tr)
                    else:
                        model.fit(X_tr, y_tr)
                r2[arm].append(r2_score(y_te, model.predict(X_te)))
                passes[arm].append(int(model.n_iter_[0]))
        out[str(eps)] = {"r2": r2, "passes": passes}
    return out


def markdown(per_table, seeds):
    rows = []
    wins = {eps: [0, 0] for eps in EPSILONS}
    for name, res in per_table.items():
        for eps in EPSILONS:
            block = res[str(eps)]
            med = {a: float(np.median(block["r2"][a])) for a in ARMS}
            d = med[ARMS[1]] - med[ARMS[0]]
            wins[eps][0 if d < -0.005 else 1] += abs(d) > 0.005
            rows.append([name, res["n_train"], res["n_features"], f"{eps:g}",
                         f"{res['ols_r2']:.3f}"]
                        + [f"{med[a]:.3f} ({block['passes'][a][0]})" for a in ARMS]
                        + [f"{d:+.3f}"])
    head = ["table", "rows", "features", "epsilon", "LinearRegression",
            "target at the output direction", "at every coefficient (the library)",
            "change"]
    summary = "; ".join(
        f"epsilon {eps:g}: every coefficient better by more than 0.005 on "
        f"{w[1]} table(s), worse on {w[0]}" for eps, w in wins.items())
    return "\n".join([
        f"Held-out R^2, medians over {seeds} noise seeds (both arms on the same "
        "split and seeds, interleaved); in parentheses the passes of the fit "
        f"(seed 0). {summary}.", "", md_table(head, rows)])


run, main = table_scenario(
    "regression_length", "NoisyGDRegressor's fit length (Section 8.4)", TABLES,
    run_table, markdown, seeds=SEEDS, epsilons=EPSILONS, smoke_table="prestige",
    smoke_epsilons=EPSILONS)


if __name__ == "__main__":
    raise SystemExit(main(__doc__))
