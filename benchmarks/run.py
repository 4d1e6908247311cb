# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Run the benchmark suite: ``python benchmarks/run.py [--smoke]``.

The full run (tens of minutes on two cores) writes markdown tables, PNG plots
(if matplotlib is installed), the raw numbers and the machine they came from
to ``benchmarks/results/``. ``--smoke`` runs every scenario on small inputs in
well under two minutes, writes to a temporary directory, and skips the
diffprivlib comparison (saying so); CI runs it to keep the suite working. Its
numbers are not meaningful.

Scenarios (one module each): kernel (issue 2), fit, fit_sizes (the fit's
length and time at 5,000 to 1,000,000 rows; also writes fit_sizes.md/.json),
privacy_utility, unlearn (issue 4), audit, imbalanced (issue 14), scale (issue
16: n_jobs, memmap, Dask), output_perturbation (issue 17), decisions (issue 23:
real tables at defaults and prototypes of the levers; also writes
decisions.md/.json), search (issue 26: PrivateSearchCV against the untuned
defaults), gdp (issue 26: the exact Gaussian calibration against the Rényi one;
also writes gdp.md/.json), deletion_stream (issue 25: streams of deletion
requests against refits), small_fit (issue 23,
item 5: fit time on 500-5,000-row tables against LogisticRegression),
thresholds (issues 23 and 24: binary decision rules at epsilon 1 and 8, the
prototype of privacy-accounting.md Section 18.12), large_epsilon (issue 23,
item 4: the default regularisation above epsilon = 1, accuracy and deletion
cost; also writes large_epsilon.md/.json), regression_alpha (NoisyGDRegressor's
alpha="auto" on real regression tables; also writes regression_alpha.md/.json),
regression_length (NoisyGDRegressor's fit length on ten regression tables; also
writes regression_length.md/.json), multinomial_clip (issue 23: the clipped
softmax of Lemma 4.5 on multiclass tables; also writes multinomial_clip.md/.json),
private_regression (a regressor from eleven raw tables through
make_private_pipeline, Section 19.6; also writes private_regression.md/.json),
constant_warning (issue 23: which binary fits at defaults say they predict
nearly one class, Section 18.6).
The exit status is non-zero if any scenario failed, including a full run that could
not set up diffprivlib.
"""

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, ROOT, Section, machine_info, write_json  # noqa: E402

SCENARIOS = (
    "kernel", "fit", "fit_sizes", "privacy_utility", "unlearn", "audit",
    "imbalanced", "scale", "output_perturbation", "decisions", "search", "gdp",
    "deletion_stream",
    "small_fit", "thresholds", "large_epsilon", "regression_alpha",
    "regression_length", "multinomial_clip", "private_regression",
    "constant_warning",
)


def _module(name):
    return __import__(f"bench_{name}")


def _machine_summary(info):
    blas = info["blas"]
    blas_txt = ", ".join(f"{b['internal_api']} {b['version']} ({b['library']}, "
                         f"{b['num_threads']} threads)" for b in blas
                         if b.get("user_api") == "blas") if isinstance(blas, list) \
        else str(blas)
    v = info["versions"]
    return (f"{info['date']}, {info['cpu_model']}, {info['cpu_count']} cores, "
            f"{info['memory_gib']} GiB; {info['platform']}; Python {info['python']}; "
            + ", ".join(f"{k} {val}" for k, val in v.items() if val)
            + f"; kernel build {info['skforget_kernel_build']}; BLAS: {blas_txt}; "
            f"git {info['git_commit']}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="small inputs, < 2 minutes, for CI")
    parser.add_argument("--out", type=Path, default=None,
                        help="output directory (default: benchmarks/results for a "
                             "full run, a temporary directory for --smoke)")
    parser.add_argument("--only", default=",".join(SCENARIOS),
                        help="comma-separated scenarios to run "
                             f"(default: all of {','.join(SCENARIOS)})")
    parser.add_argument("--diffprivlib", action=argparse.BooleanOptionalAction,
                        default=None, help="compare with diffprivlib in its own "
                        "virtualenv (default: yes for the full run, no for --smoke)")
    args = parser.parse_args(argv)
    names = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(names) - set(SCENARIOS))
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; choose from {SCENARIOS}")
    out = args.out or (Path(tempfile.mkdtemp(prefix="skforget-bench-smoke-"))
                       if args.smoke else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    info = machine_info()
    kind = "SMOKE run (small inputs; numbers not meaningful)" if args.smoke \
        else "full run"
    command = "python benchmarks/run.py " + " ".join(argv if argv is not None
                                                      else sys.argv[1:])
    print(f"skforget benchmarks, {kind}; results in {out}")
    print("machine: " + _machine_summary(info) + "\n")

    sections, started = [], time.perf_counter()
    for name in names:
        print(f"== {name} ==", flush=True)
        t0 = time.perf_counter()
        kwargs = {"smoke": args.smoke, "out_dir": out,
                  "log": lambda *a: print(*a, flush=True)}
        if name in ("privacy_utility", "decisions"):
            kwargs["diffprivlib"] = args.diffprivlib
        try:
            section = _module(name).run(**kwargs)
        except Exception:
            tb = traceback.format_exc()
            print("\n" + "!" * 78 + f"\nSCENARIO {name} FAILED:\n{tb}" + "!" * 78,
                  flush=True)
            section = Section(name, f"{name} (FAILED)", f"```\n{tb}```", failed=True)
        section.data["seconds"] = time.perf_counter() - t0
        sections.append(section)
        print(f"\n## {section.title}\n\n{section.markdown}\n", flush=True)
        print(f"({name}: {section.data['seconds']:.0f} s)\n", flush=True)

    total = time.perf_counter() - started
    failed = [s.name for s in sections if s.failed]
    lines = [
        f"# skforget benchmark results ({kind})",
        "",
        f"Command: `{command.strip()}` (from the repository root), "
        f"{total / 60:.1f} minutes.",
        "",
        f"Machine: {_machine_summary(info)}. Details in `machine.json`, raw "
        "numbers in `results.json`. Timings on this machine drift over a run; "
        "every comparison below was measured side by side in one run "
        "(interleaved rounds, medians).",
        "",
    ]
    if failed:
        lines += [f"**FAILED scenarios: {', '.join(failed)}** (see below).", ""]
    for s in sections:
        lines += [f"## {s.title}", "", s.markdown, ""]
        lines += [f"![{p}]({p})" for p in s.plots] + [""]
    (out / "results.md").write_text("\n".join(lines))
    write_json(out / "machine.json", info)
    write_json(out / "results.json", {
        "kind": "smoke" if args.smoke else "full", "command": command.strip(),
        "seconds": total, "failed": failed, "machine": info,
        "sections": {s.name: {"title": s.title, "failed": s.failed,
                              "notes": s.notes, "plots": s.plots, **s.data}
                     for s in sections}})
    try:
        where = out.relative_to(ROOT)
    except ValueError:
        where = out
    print(f"wrote {where}/results.md, results.json, machine.json"
          + (f" and {len(sum((s.plots for s in sections), []))} plot(s)"))
    print(f"total {total / 60:.1f} min")
    if failed:
        print("\n" + "!" * 78 + f"\nFAILED: {', '.join(failed)}\n" + "!" * 78)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
