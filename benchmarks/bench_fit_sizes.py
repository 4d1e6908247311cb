# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fit length and time against the number of rows, at the defaults.

On the planted problem of ``_data.make_planted`` (rows uniform on the unit
sphere in 100 dimensions, labels from a planted linear model, here without
flips) at 5 000 to 1 000 000 rows, 80/20 split: ``NoisyGDClassifier()`` at
its defaults (``epsilon=1``, ``batch_size="auto"``, ``C="auto"``) against
``LogisticRegression()`` in interleaved rounds. Reported: the plan's batches
per pass and passes (privacy-accounting.md, Sections 8.4 and 12.6), the edit
mode, median fit times, their ratio within each round (median), and test
accuracy. This is the table of the user guide's performance page.

Run: ``python benchmarks/bench_fit_sizes.py --out-dir benchmarks/results``.
"""

import sys
import warnings

import numpy as np
from _common import Section, md_table, scenario_main, timed, write_standalone
from _data import make_planted, split
from sklearn.linear_model import LogisticRegression

from skforget import NoisyGDClassifier

SIZES = (5_000, 50_000, 200_000, 1_000_000)
SMOKE_SIZES = (5_000,)
ROUNDS = 3


def run_size(n, rounds, log):
    X_tr, X_te, y_tr, y_te = split(make_planted(n, flip=0.0))
    private, lr, ratios, acc_p, acc_lr = [], [], [], [], []
    for r in range(rounds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m_lr, t_lr = timed(lambda: LogisticRegression().fit(X_tr, y_tr))
            m_p, t_p = timed(lambda r=r: NoisyGDClassifier(
                classes=[0, 1], random_state=r).fit(X_tr, y_tr))
        lr.append(t_lr)
        private.append(t_p)
        ratios.append(t_p / t_lr)
        acc_p.append(m_p.score(X_te, y_te))
        acc_lr.append(m_lr.score(X_te, y_te))
    plan = m_p._plan
    out = {"n_train": len(y_tr), "n_batches": int(plan.n_batches),
           "passes": int(plan.fit_epochs), "edit_mode": plan.edit_mode,
           "fit_seconds": float(np.median(private)),
           "lr_seconds": float(np.median(lr)), "ratio": float(np.median(ratios)),
           "accuracy": float(np.median(acc_p)), "lr_accuracy": float(np.median(acc_lr))}
    log(f"  {n} rows: {out['passes']} passes of {out['n_batches']} batches, "
        f"{out['ratio']:.2f}x LogisticRegression()")
    return out


def run(*, smoke=False, out_dir=None, log=print):
    sizes = SMOKE_SIZES if smoke else SIZES
    rounds = 1 if smoke else ROUNDS
    per_size = {str(n): run_size(n, rounds, log) for n in sizes}
    rows = [[f"{int(n):,}".replace(",", " "), r["n_batches"], r["passes"],
             r["edit_mode"], f"{r['fit_seconds']:.2f} s", f"{r['lr_seconds']:.2f} s",
             f"{r['ratio']:.2f}x", f"{r['accuracy']:.3f} ({r['lr_accuracy']:.3f})"]
            for n, r in per_size.items()]
    markdown = "\n".join([
        f"Medians over {rounds} interleaved rounds; the planted problem without "
        "flips, 100 features, 80/20 split; `epsilon=1` and every other parameter "
        "at its default.", "",
        md_table(["rows", "batches per pass", "passes", "edit mode", "fit",
                  "LogisticRegression()", "ratio", "accuracy (LR)"], rows)])
    section = Section("fit_sizes", "Fit length and time against the number of rows",
                      markdown, {"rounds": rounds, "sizes": per_size})
    if out_dir is not None and not smoke:
        write_standalone(out_dir, "fit_sizes", section)
    return section


def _add_arguments(parser):
    parser.add_argument("--out-dir", default=None,
                        help="write fit_sizes.md and fit_sizes.json there")


def main(argv=None):
    return scenario_main(run, __doc__, argv, add_arguments=_add_arguments)


if __name__ == "__main__":
    sys.exit(main())
