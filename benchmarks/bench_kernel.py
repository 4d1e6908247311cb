# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""One noisy-GD gradient step against one BLAS pass (issue 2).

Noisy gradient descent is bound by memory: a step must read every row once to
form the margins and once more to form the gradient, unless the two passes
are fused. skforget's kernel fuses them, so its floor is a single read of X,
which is exactly what one ``X @ w`` BLAS call costs. Three contenders on the
same array, in interleaved rounds:

* ``kernel``: one ``skforget._kernels.clipped_gradient_*`` call (margins, clamped
  logistic derivative, i.e. per-example clipping, and the gradient sum);
* ``X @ w``: one matrix-vector product (OpenBLAS gemv for dense rows, SciPy's
  CSR matvec for sparse rows), the speed-of-memory reference;
* ``NumPy step``: the straightforward step, ``z = X @ w``, elementwise
  sigmoid/clip, ``g = X.T @ r``: two passes plus temporaries.

Targets (dense float64, 200000 x 100, one thread): ``kernel / X@w <= 1.0`` and
``NumPy / kernel >= 2.5``.

With two threads BLAS splits its passes itself; the kernel runs on two row
blocks from a thread pool (it releases the GIL) and the two partial sums are
added. (The estimators' ``n_jobs`` now does this inside the kernel with
OpenMP; ``bench_scale.py`` measures it.) SciPy's CSR matvec is
single-threaded whatever the thread limit.
"""

import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from _common import (
    Section,
    fmt_time,
    interleaved_times,
    md_table,
    pyplot,
    save_figure,
    scenario_main,
)
from scipy.special import expit

from skforget import _kernels

TARGET_VS_BLAS = 1.0
TARGET_VS_NUMPY = 2.5
CLIP_NORM = 0.5
CSR_DENSITY = 0.1


def make_problem(n, d, *, layout, dtype, seed=0):
    """Unit-norm rows, binary labels, finite clip thresholds, a random model."""
    rng = np.random.default_rng(seed)
    if layout == "dense":
        X = rng.standard_normal((n, d))
    else:
        X = sp.random(n, d, density=CSR_DENSITY, format="csr", random_state=rng,
                      data_rvs=rng.standard_normal)
        X.sort_indices()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel()) if sp.issparse(X) \
        else np.linalg.norm(X, axis=1)
    norms[norms == 0] = 1.0
    X = sp.diags(1.0 / norms) @ X if sp.issparse(X) else X / norms[:, None]
    X = X.astype(dtype)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        X.sort_indices()
    else:
        X = np.ascontiguousarray(X)
    s_b = 1.0
    return {
        "X": X,
        "y": (rng.random(n) < 0.5).astype(np.float64),
        "scale": np.ones(n),
        # Clip threshold on the loss derivative: L / ||[x, s_b]|| (Lemma 2.1).
        "tau": np.full(n, CLIP_NORM / np.sqrt(1.0 + s_b**2)),
        "W": 0.3 * rng.standard_normal((1, d)),
        "b": np.array([0.1]),
        "s_b": s_b,
    }


def kernel_call(p, X=None, y=None, scale=None, tau=None, G=None, Gb=None):
    """One kernel pass over (a block of) the rows."""
    X = p["X"] if X is None else X
    y = p["y"] if y is None else y
    scale = p["scale"] if scale is None else scale
    tau = p["tau"] if tau is None else tau
    G = np.empty_like(p["W"]) if G is None else G
    Gb = np.empty(1) if Gb is None else Gb
    if sp.issparse(X):
        _kernels.clipped_gradient_csr(X.data, X.indices, X.indptr, y, scale, tau,
                                      p["W"], p["b"], p["s_b"], _kernels.LOGISTIC, G,
                                      Gb)
    else:
        _kernels.clipped_gradient_dense(X, y, scale, tau, p["W"], p["b"], p["s_b"],
                                        _kernels.LOGISTIC, G, Gb)
    return G, Gb


def numpy_step(p):
    """The straightforward step: two passes over X and a few temporaries."""
    X = p["X"]
    w = p["W"][0].astype(X.dtype)
    z = (X @ w).astype(np.float64) * p["scale"] + p["s_b"] * p["b"][0]
    r = np.clip(expit(z) - p["y"], -p["tau"], p["tau"]) * p["scale"]
    g = X.T @ r.astype(X.dtype)
    return g, p["s_b"] * r.sum()


class BlockedKernel:
    """The kernel on row blocks in a thread pool (it runs without the GIL)."""

    def __init__(self, p, n_threads):
        self.p = p
        n = p["X"].shape[0]
        edges = np.linspace(0, n, n_threads + 1).astype(int)
        self.blocks = []
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            # Dense row slices are views; CSR slices are copies made here, once,
            # outside the timed region.
            self.blocks.append(dict(
                X=p["X"][lo:hi], y=p["y"][lo:hi], scale=p["scale"][lo:hi],
                tau=p["tau"][lo:hi], G=np.empty_like(p["W"]), Gb=np.empty(1)))
        self.pool = ThreadPoolExecutor(max_workers=n_threads)

    def __call__(self):
        parts = list(self.pool.map(lambda blk: kernel_call(self.p, **blk),
                                   self.blocks))
        return sum(g for g, _ in parts), sum(gb for _, gb in parts)

    def close(self):
        self.pool.shutdown()


def _contenders(p, w, blocked=None):
    """The three timed calls on problem ``p`` (``blocked``: threaded kernel)."""
    X = p["X"]
    return {
        "kernel": blocked if blocked is not None else (lambda: kernel_call(p)),
        "matvec": lambda: X @ w,
        "numpy": lambda: numpy_step(p),
    }


def run(*, smoke=False, out_dir=None, log=print):
    from threadpoolctl import threadpool_limits

    n, d = (20_000, 100) if smoke else (200_000, 100)
    repeats = 7 if smoke else 61
    threads = (1, 2)
    rows, data = [], []
    for layout in ("dense", "csr"):
        for dtype in (np.float64, np.float32):
            p = make_problem(n, d, layout=layout, dtype=dtype)
            X = p["X"]
            w = p["W"][0].astype(X.dtype)
            # Sanity: the kernel computes what the NumPy step computes.
            G, Gb = kernel_call(p)
            g_ref, gb_ref = numpy_step(p)
            tol = 1e-9 if dtype == np.float64 else 1e-4
            if not np.allclose(G[0], g_ref, rtol=tol, atol=tol * n):
                raise AssertionError(f"kernel and NumPy step disagree ({layout}, "
                                     f"{np.dtype(dtype).name})")
            nbytes = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
                      if sp.issparse(X) else X.nbytes)
            for t in threads:
                blocked = BlockedKernel(p, t) if t > 1 else None
                with threadpool_limits(limits=t):
                    times = interleaved_times(_contenders(p, w, blocked),
                                              repeats=repeats, warmup=2,
                                              warmup_seconds=0.2 if smoke else 2.0)
                if blocked is not None:
                    blocked.close()
                med = {k: float(np.median(v)) for k, v in times.items()}
                # Ratios of calls made in the same round (adjacent in time) are
                # robust to the host's slow drifts; report their median and IQR.
                paired_blas = times["kernel"] / times["matvec"]
                paired_numpy = times["numpy"] / times["kernel"]
                r_blas = float(np.median(paired_blas))
                r_numpy = float(np.median(paired_numpy))
                iqr_blas = np.percentile(paired_blas, [25, 75]).tolist()
                iqr_numpy = np.percentile(paired_numpy, [25, 75]).tolist()
                rec = dict(layout=layout, dtype=np.dtype(dtype).name, threads=t,
                           n=n, d=d, density=CSR_DENSITY if layout == "csr" else 1.0,
                           median_seconds=med, kernel_over_matvec=r_blas,
                           numpy_over_kernel=r_numpy,
                           kernel_over_matvec_iqr=iqr_blas,
                           numpy_over_kernel_iqr=iqr_numpy,
                           kernel_gb_per_s=nbytes / med["kernel"] / 1e9,
                           repeats=repeats,
                           quartiles={k: np.percentile(v, [25, 75]).tolist()
                                      for k, v in times.items()})
                data.append(rec)
                rows.append([layout, rec["dtype"], str(t), fmt_time(med["kernel"]),
                             fmt_time(med["matvec"]), fmt_time(med["numpy"]),
                             f"{r_blas:.2f} ({iqr_blas[0]:.2f}-{iqr_blas[1]:.2f})",
                             f"{r_numpy:.2f} ({iqr_numpy[0]:.2f}-{iqr_numpy[1]:.2f})",
                             f"{rec['kernel_gb_per_s']:.1f}"])
                log(f"  kernel {layout:5s} {rec['dtype']:7s} {t} thread(s): "
                    f"kernel/X@w {r_blas:.2f}, NumPy/kernel {r_numpy:.2f}")

    head = next(r for r in data if r["layout"] == "dense" and r["dtype"] == "float64"
                and r["threads"] == 1)
    met_blas = head["kernel_over_matvec"] <= TARGET_VS_BLAS
    met_numpy = head["numpy_over_kernel"] >= TARGET_VS_NUMPY
    md = [
        f"One gradient step on a {n} x {d} array (CSR: density {CSR_DENSITY}); "
        f"{repeats} interleaved rounds after a warm-up; times are medians, ratios "
        "are medians (interquartile range) of the ratios within each round, "
        "which cancels the host's drifts. Logistic loss with per-example "
        f"clipping (clip_norm={CLIP_NORM}), one output. `X @ w` is OpenBLAS gemv "
        "for dense rows and SciPy's (single-threaded) CSR matvec for sparse rows. "
        "The two-thread kernel runs on two row blocks from a thread pool; the "
        "solver itself uses one thread.",
        "",
        md_table(["layout", "dtype", "threads", "kernel", "one X @ w",
                  "NumPy step", "kernel / X@w", "NumPy / kernel", "kernel GB/s"],
                 rows),
        "",
        f"**Issue 2 targets** (dense float64, {n} x {d}, one thread): "
        f"kernel / X@w = **{head['kernel_over_matvec']:.2f}** (target <= "
        f"{TARGET_VS_BLAS}: {'met' if met_blas else 'NOT met'}); NumPy step / kernel "
        f"= **{head['numpy_over_kernel']:.2f}** (target >= {TARGET_VS_NUMPY}: "
        f"{'met' if met_numpy else 'NOT met'}).",
    ]
    section = Section("kernel", "Kernel step vs one BLAS pass (issue 2)",
                      "\n".join(md), {"cases": data, "targets": {
                          "kernel_over_matvec_max": TARGET_VS_BLAS,
                          "numpy_over_kernel_min": TARGET_VS_NUMPY,
                          "met_kernel_over_matvec": met_blas,
                          "met_numpy_over_kernel": met_numpy}})
    plt = pyplot()
    if plt is not None and out_dir is not None:
        labels = [f"{r['layout']}\n{r['dtype']}\n{r['threads']}T" for r in data]
        x = np.arange(len(data))
        fig, ax = plt.subplots(figsize=(9, 3.8))
        ax.bar(x - 0.2, [r["kernel_over_matvec"] for r in data], 0.4,
               label="kernel / one X@w (lower is better)")
        ax.bar(x + 0.2, [r["numpy_over_kernel"] for r in data], 0.4,
               label="NumPy step / kernel (higher is better)")
        ax.axhline(TARGET_VS_BLAS, color="C0", ls="--", lw=1)
        ax.axhline(TARGET_VS_NUMPY, color="C1", ls="--", lw=1)
        ax.set_xticks(x, labels, fontsize=8)
        ax.set_ylabel("time ratio")
        ax.set_title(f"Gradient step on {n}x{d}: ratios (dashed: targets)")
        ax.legend(fontsize=8)
        section.plots.append(save_figure(fig, out_dir, "kernel_ratios.png"))
    return section


def main(argv=None):
    return scenario_main(run, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
