# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Beyond one core and one machine: threads, memmap and Dask (issue 16).

Three questions, each answered side by side in one run (interleaved rounds,
medians):

* ``n_jobs``: seconds per full-batch noisy step with ``n_jobs=2`` against
  ``n_jobs=1``, on 2,000,000 x 50 dense rows and on a CSR set (1,000,000 x
  2,000, 20 nonzeros per row). Target: ``n_jobs=2`` faster (ratio < 1).
* ``numpy.memmap``: the same step on the rows read through a memory map (file
  in the page cache) against the rows in memory. Expected: about 1.
* Dask: the per-step overhead of the cluster row source on a 2-worker
  ``LocalCluster`` (worker threads in this process, and worker processes; TCP
  on 127.0.0.1), measured on a small database so that the gradient work is
  negligible: seconds per step on the cluster minus seconds per step in
  memory. Target: <= 5 ms.

The machine is shared: with another process busy on one of its two cores, a
second thread mostly waits for it, so the ``n_jobs`` ratio is a floor on what
two free cores give.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from _common import Section, fmt_time, interleaved_times, md_table, scenario_main

from skforget import _kernels
from skforget._rows import make_design
from skforget._solver import LOSS_CODES

TARGET_THREADS = 1.0
TARGET_DASK_MS = 5.0
MAP = dict(loss="logistic", data_norm=1.0, intercept_scaling=1.0,
           gradient_bound=0.5)


def _dense(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = np.empty((n, d))
    for lo in range(0, n, 200_000):  # bounded temporaries
        hi = min(n, lo + 200_000)
        X[lo:hi] = rng.standard_normal((hi - lo, d)) / math.sqrt(d)
    return X, (rng.random(n) < 0.5).astype(float)


def _csr(n, d, nnz_per_row, seed=0):
    rng = np.random.default_rng(seed)
    indptr = np.arange(0, (n + 1) * nnz_per_row, nnz_per_row, dtype=np.int64)
    # Distinct sorted columns per row: a random offset plus a fixed stride.
    stride = d // nnz_per_row
    start = rng.integers(0, stride, n)
    indices = (start[:, None] + stride * np.arange(nnz_per_row)[None, :]).ravel()
    data = rng.standard_normal(n * nnz_per_row) / math.sqrt(nnz_per_row)
    X = sp.csr_matrix((data, indices.astype(np.int64), indptr), shape=(n, d))
    return X, (rng.random(n) < 0.5).astype(float)


def _stepper(design, n_threads, steps, d):
    """``steps`` full-batch noisy steps from a fixed start (a fresh copy)."""
    n = design.n_samples
    noise = np.random.default_rng(1).standard_normal((steps, 1, d + 1))
    order, bounds = np.zeros(0, np.int64), np.array([0, n], np.int64)
    etas = np.full(steps, 0.5)

    def run():
        W, b = np.zeros((1, d)), np.zeros(1)
        design.run_steps(W, b, order=order, bounds=bounds, first_batch=0, etas=etas,
                         noise=noise, sigma=0.01, lam=1e-3, inv_B=1.0 / n,
                         loss_code=LOSS_CODES["logistic"], fit_intercept=True,
                         n_threads=n_threads)
    return run


def _threads_case(name, X, y, *, steps, repeats, log):
    design = make_design(X, y, **MAP)
    d = X.shape[1]
    t = interleaved_times({"1": _stepper(design, 1, steps, d),
                           "2": _stepper(design, 2, steps, d)}, repeats=repeats)
    one, two = (float(np.median(t[k])) / steps for k in ("1", "2"))
    log(f"  {name}: n_jobs=1 {fmt_time(one)}/step, n_jobs=2 {fmt_time(two)}/step")
    return {"case": name, "n_jobs_1": one, "n_jobs_2": two, "ratio": two / one}


def _memmap_case(X, y, *, steps, repeats, log):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.dat"
        mm = np.memmap(path, dtype=X.dtype, mode="w+", shape=X.shape)
        mm[:] = X
        mm.flush()
        del mm
        mm = np.memmap(path, dtype=X.dtype, mode="r", shape=X.shape)
        on_disk = make_design(mm, y, **MAP)
        assert np.shares_memory(on_disk.X, mm)
        in_memory = make_design(X, y, **MAP)
        d = X.shape[1]
        t = interleaved_times({"memory": _stepper(in_memory, 1, steps, d),
                               "memmap": _stepper(on_disk, 1, steps, d)},
                              repeats=repeats)
        del on_disk, mm
    mem, mapped = (float(np.median(t[k])) / steps for k in ("memory", "memmap"))
    log(f"  memmap: in memory {fmt_time(mem)}/step, memmap {fmt_time(mapped)}/step")
    return {"in_memory": mem, "memmap": mapped, "ratio": mapped / mem}


def _dask_case(*, processes, steps, repeats, log):
    """Per-step cost of the cluster row source on a 2-worker LocalCluster:
    worker threads in this process, or worker processes (TCP on 127.0.0.1
    either way)."""
    import distributed

    from skforget.distributed import ShardedDatabase

    X, y = _dense(2000, 20)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=processes, protocol="tcp",
        host="127.0.0.1", dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        db = ShardedDatabase(X, y, client=client)
        # What an estimator sends: the public row map and label encoding.
        spec = dict(MAP, classes=None, error="fit", clip_rows=True,
                    weighting=dict(sample_weight_bound=0.0, class_weights=(),
                                   weight_bound=1.0))
        cluster_rows = db._row_source(spec, loss="logistic", n_jobs=1, exclusive=True)
        in_memory = make_design(X, y, **MAP)
        t = interleaved_times({"memory": _stepper(in_memory, 1, steps, 20),
                               "cluster": _stepper(cluster_rows, 1, steps, 20)},
                              repeats=repeats, warmup=2)
        cluster_rows.release()
        db.close()
    finally:
        client.close()
        cluster.close()
    mem, dist = (float(np.median(t[k])) / steps for k in ("memory", "cluster"))
    workers = "processes" if processes else "threads"
    log(f"  dask ({workers}): {fmt_time(dist)}/step on 2 workers, "
        f"{fmt_time(mem)} in memory")
    return {"workers": workers, "rows": X.shape[0], "per_step": dist,
            "in_memory_per_step": mem, "overhead_ms": (dist - mem) * 1e3}


def _blas_control(repeats, log):
    """A control for how much a second thread can give right now: OpenBLAS
    matrix product (compute-bound, well parallelised) on 1 and 2 threads."""
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).random((1200, 1200))

    def product(threads):
        def run():
            with threadpool_limits(threads, user_api="blas"):
                a @ a
        return run

    t = interleaved_times({"1": product(1), "2": product(2)}, repeats=repeats)
    one, two = (float(np.median(t[k])) for k in ("1", "2"))
    log(f"  control, BLAS 1200 x 1200 product: 1 thread {fmt_time(one)}, "
        f"2 threads {fmt_time(two)}")
    return {"case": "control: BLAS 1200 x 1200 matrix product", "n_jobs_1": one,
            "n_jobs_2": two, "ratio": two / one, "control": True}


def _threads_cases(n_dense, n_csr, d_csr, steps, repeats, log=print):
    X, y = _dense(n_dense, 50)
    out = [_blas_control(repeats, log),
           _threads_case(f"dense {n_dense} x 50", X, y, steps=steps,
                         repeats=repeats, log=log)]
    del X
    Xs, ys = _csr(n_csr, d_csr, 20)
    out.append(_threads_case(f"CSR {n_csr} x {d_csr}, 20 nnz/row", Xs, ys,
                             steps=steps, repeats=repeats, log=log))
    return out


def _threads_in_subprocess(policy, params, log):
    """The n_jobs cases in a fresh process whose OpenMP runtime starts with
    ``OMP_WAIT_POLICY=policy`` (read once, when the runtime loads)."""
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    done = subprocess.run([sys.executable, __file__, "--threads-json",
                           json.dumps(params)], env=env, capture_output=True,
                          text=True, check=True)
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    for r in rows:
        r["omp_wait_policy"] = policy or "default"
        log(f"  {r['case']} (OMP_WAIT_POLICY={r['omp_wait_policy']}): n_jobs=1 "
            f"{fmt_time(r['n_jobs_1'])}/step, n_jobs=2 {fmt_time(r['n_jobs_2'])}/step")
    return rows


def run(smoke=False, out_dir=None, log=print):
    if smoke:
        n_dense, n_csr, steps, repeats, dask_steps = 100_000, 50_000, 3, 3, 20
    else:
        n_dense, n_csr, steps, repeats, dask_steps = 2_000_000, 1_000_000, 5, 7, 200
    d_csr = 2000
    load_before = os.getloadavg()[0]
    log(f"  kernel build: {_kernels.kernel.__name__}, OpenMP "
        f"{'on' if _kernels.kernel.openmp_enabled() else 'off'}; load average "
        f"{load_before:.2f}")
    params = dict(n_dense=n_dense, n_csr=n_csr, d_csr=d_csr, steps=steps,
                  repeats=repeats)
    threads = [r for policy in (None, "PASSIVE")
               for r in _threads_in_subprocess(policy, params, log)]
    X, y = _dense(n_dense, 50)
    memmap = _memmap_case(X, y, steps=steps, repeats=repeats, log=log)
    del X
    try:
        import distributed  # noqa: F401

        dask = [_dask_case(processes=p, steps=dask_steps, repeats=repeats, log=log)
                for p in (False, True)]
    except ImportError:
        dask = None
    load_after = os.getloadavg()[0]

    md = ["Seconds per full-batch noisy step (logistic loss), medians of "
          f"{repeats} interleaved rounds of {steps} steps. The machine is shared: "
          f"1-minute load average {load_before:.2f} before the scenario and "
          f"{load_after:.2f} after it, on {os.cpu_count()} cores. GNU OpenMP "
          "spins while it waits by default; OMP_WAIT_POLICY=PASSIVE makes idle "
          "threads sleep instead (each row from its own process). The control "
          "row, an OpenBLAS matrix product on 1 and 2 threads measured in the "
          "same process, shows how much a second core could give at the time.",
          "",
          md_table(["rows", "OMP_WAIT_POLICY", "n_jobs=1", "n_jobs=2",
                    "ratio 2/1 (target < 1)"],
                   [[r["case"], r["omp_wait_policy"], fmt_time(r["n_jobs_1"]),
                     fmt_time(r["n_jobs_2"]), f"{r['ratio']:.2f}"]
                    for r in threads]), "",
          md_table(["rows", "in memory", "numpy.memmap", "ratio"],
                   [[f"dense {n_dense} x 50", fmt_time(memmap["in_memory"]),
                     fmt_time(memmap["memmap"]), f"{memmap['ratio']:.2f}"]]), ""]
    if dask is None:
        md.append("Dask backend: not measured (dask[distributed] not installed).")
    else:
        md += ["Dask backend: 2 workers on a LocalCluster (TCP on 127.0.0.1), "
               f"2000 x 20 rows, medians of {repeats} rounds of {dask_steps} "
               "steps; the overhead is the step on the cluster minus the step "
               "in memory.", "",
               md_table(["workers", "per step on the cluster", "per step in memory",
                         "overhead per step (target <= 5 ms)"],
                        [[r["workers"], fmt_time(r["per_step"]),
                          fmt_time(r["in_memory_per_step"]),
                          f"{r['overhead_ms']:.2f} ms"] for r in dask])]
    met_threads = all(r["ratio"] < TARGET_THREADS for r in threads
                      if not r.get("control"))
    met_dask = dask is None or all(r["overhead_ms"] <= TARGET_DASK_MS for r in dask)
    return Section("scale", "Threads, memmap and Dask (issue 16)", "\n".join(md),
                   {"threads": threads, "memmap": memmap, "dask": dask,
                    "load_average": [load_before, load_after],
                    "targets": {"n_jobs_ratio_max": TARGET_THREADS,
                                "dask_overhead_ms_max": TARGET_DASK_MS,
                                "met_threads": met_threads, "met_dask": met_dask}})


def main(argv=None):
    return scenario_main(run, __doc__, argv)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--threads-json":
        rows = _threads_cases(**json.loads(sys.argv[2]), log=lambda *a: None)
        print(json.dumps(rows))
        sys.exit(0)
    sys.exit(main())
