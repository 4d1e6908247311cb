# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy-utility curves against diffprivlib's LogisticRegression.

Test accuracy at epsilon from 0.1 to 10, several noise seeds per point, on the
same splits for:

* skforget ``NoisyGDClassifier``: ``(epsilon, delta)``-DP with
  ``delta = min(1e-5, n^-1.1)``, replace-one records, Rényi accounting of
  noisy gradient descent; records can later be deleted with a certificate;
* diffprivlib 0.6.6 ``LogisticRegression``: pure ``epsilon``-DP (``delta = 0``)
  by objective perturbation (Chaudhuri, Monteleoni and Sarwate 2011); one-vs-rest
  with ``epsilon / n_classes`` per class for multiclass; no deletion. Run with
  ``data_norm=1`` (public; rows have unit norm), at skforget's ``C`` and at its
  own default ``C=1``, ``max_iter=1000``.

At equal epsilon diffprivlib's guarantee is the formally stronger one
(``delta = 0`` against ``delta <= 1e-5``): what is compared is accuracy at equal
epsilon, with that difference stated, not equal guarantees.

diffprivlib 0.6.6 requires scikit-learn < 1.8, which conflicts with the
scikit-learn skforget is tested against, so this script creates its own
virtualenv, ``benchmarks/.venv-diffprivlib`` (``pip install "scikit-learn<1.8"
diffprivlib==0.6.6 numpy``), and runs ``_diffprivlib_worker.py`` there, passing
data through ``.npz`` files in a temporary directory. If the venv cannot be
created the full run fails loudly; the smoke run skips diffprivlib and says so.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import _data
import numpy as np
import scipy.sparse as sp
from _common import Section, md_table, pyplot, save_figure, scenario_main
from bench_fit import CLASSIFIER_PARAMS
from sklearn.linear_model import LogisticRegression

from skforget import NoisyGDClassifier

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-diffprivlib"
REQUIREMENTS = ["scikit-learn<1.8", "diffprivlib==0.6.6", "numpy"]
DIFFPRIVLIB_C_DEFAULT = 1.0
MAX_ITER = 1000


class DiffprivlibUnavailable(RuntimeError):
    """The diffprivlib virtualenv could not be created or used."""


def _venv_python():
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _probe(python):
    """Versions inside the venv, or None if diffprivlib does not import there."""
    code = ("import json, diffprivlib, sklearn, numpy; print(json.dumps({"
            "'diffprivlib': diffprivlib.__version__, "
            "'scikit-learn': sklearn.__version__}))")
    res = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                         timeout=300)
    if res.returncode != 0:
        return None
    versions = json.loads(res.stdout.strip().splitlines()[-1])
    return versions if versions["diffprivlib"] == "0.6.6" else None


def ensure_venv(log=print):
    """The venv's interpreter, creating the venv on first use."""
    python = _venv_python()
    if python.exists() and _probe(python):
        return python
    log(f"  creating {VENV.relative_to(HERE.parent)} and installing "
        + " ".join(REQUIREMENTS) + " (diffprivlib 0.6.6 needs scikit-learn<1.8, so "
        "it gets its own virtualenv) ...")
    steps = [[sys.executable, "-m", "venv", "--clear", str(VENV)],
             [str(python), "-m", "pip", "install", "--quiet",
              "--disable-pip-version-check", *REQUIREMENTS]]
    for cmd in steps:
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        except (OSError, subprocess.SubprocessError) as exc:
            raise DiffprivlibUnavailable(f"{' '.join(cmd)} failed: {exc}") from exc
        if res.returncode != 0:
            tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-15:])
            raise DiffprivlibUnavailable(
                f"{' '.join(cmd)} exited with {res.returncode}:\n{tail}")
    if not _probe(python):
        raise DiffprivlibUnavailable(f"diffprivlib 0.6.6 does not import in {VENV}")
    return python


def run_diffprivlib(python, X_tr, X_te, y_tr, y_te, *, epsilons, seeds, Cs):
    """Accuracies from the worker: {C: array (n_eps, n_seeds)}, plus metadata."""
    dense = [x.toarray() if sp.issparse(x) else np.asarray(x) for x in (X_tr, X_te)]
    with tempfile.TemporaryDirectory(prefix="skforget-bench-") as tmp:
        inp, out = Path(tmp) / "input.npz", Path(tmp) / "output.json"
        np.savez(inp, X_train=dense[0], X_test=dense[1], y_train=y_tr, y_test=y_te,
                 epsilons=np.asarray(epsilons, float), seeds=np.asarray(seeds),
                 Cs=np.asarray(Cs, float), data_norm=1.0, max_iter=MAX_ITER)
        res = subprocess.run([str(python), str(HERE / "_diffprivlib_worker.py"),
                              str(inp), str(out)], capture_output=True, text=True,
                             timeout=3600)
        if res.returncode != 0:
            tail = "\n".join(res.stderr.strip().splitlines()[-15:])
            raise DiffprivlibUnavailable(f"the diffprivlib worker failed:\n{tail}")
        result = json.loads(out.read_text())
    result["accuracy"] = {float(k): np.asarray(v)
                          for k, v in result["accuracy"].items()}
    return result


def _cell(values):
    values = np.asarray(values)
    return f"{values.mean():.3f} ± {values.std():.3f}"


def run(*, smoke=False, out_dir=None, log=print, diffprivlib=None):
    """``diffprivlib``: None for the default (full run yes, smoke run no)."""
    use_dpl = (not smoke) if diffprivlib is None else diffprivlib
    names = ["breast_cancer"] if smoke else ["breast_cancer", "digits", "adult",
                                             "mnist5000"]
    epsilons = np.array([0.3, 3.0]) if smoke else np.geomspace(0.1, 10, 9)
    seeds = list(range(2 if smoke else 5))
    section = Section("privacy_utility", "Privacy-utility curves vs diffprivlib")
    python, dpl_versions = None, None
    if use_dpl:
        try:
            python = ensure_venv(log)
            dpl_versions = _probe(python)
        except DiffprivlibUnavailable as exc:
            # Not a silent skip: the section is marked failed and run.py exits
            # non-zero after printing this.
            msg = ("DIFFPRIVLIB COMPARISON FAILED: could not set up "
                   f"{VENV}:\n{exc}")
            log("\n" + "!" * 78 + "\n" + msg + "\n" + "!" * 78)
            section.failed = True
            section.notes.append(msg)
    else:
        note = ("diffprivlib SKIPPED in the smoke run (it needs its own virtualenv "
                "with scikit-learn<1.8); the full run `python benchmarks/run.py` "
                "compares against it.")
        log("  " + note)
        section.notes.append(note)

    results, md = [], []
    for name in names:
        data = _data.load(name)
        X_tr, X_te, y_tr, y_te = _data.split(data)
        params = CLASSIFIER_PARAMS[name]
        acc = np.zeros((len(epsilons), len(seeds)))
        for i, eps in enumerate(epsilons):
            for j, seed in enumerate(seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    model = NoisyGDClassifier(epsilon=float(eps), random_state=seed,
                                              **params).fit(X_tr, y_tr)
                acc[i, j] = model.score(X_te, y_te)
        delta = model.privacy_guarantee_.delta
        base = LogisticRegression(max_iter=1000).fit(X_tr, y_tr).score(X_te, y_te)
        same = LogisticRegression(max_iter=1000, C=params["C"]).fit(
            X_tr, y_tr).score(X_te, y_te)
        majority = np.bincount(y_te).max() / len(y_te)
        rec = {"dataset": name, "n_train": X_tr.shape[0], "epsilons": epsilons,
               "seeds": seeds, "skforget": acc, "skforget_delta": delta,
               "skforget_params": params, "sklearn_default": base,
               "sklearn_same_C": same, "majority": majority, "public": data.public}
        if python is not None:
            Cs = [params["C"], DIFFPRIVLIB_C_DEFAULT]
            try:
                dpl = run_diffprivlib(python, X_tr, X_te, y_tr, y_te,
                                      epsilons=epsilons, seeds=seeds, Cs=Cs)
            except (DiffprivlibUnavailable, subprocess.SubprocessError) as exc:
                msg = f"DIFFPRIVLIB RUN FAILED on {name}: {exc}"
                log("\n" + "!" * 78 + "\n" + msg + "\n" + "!" * 78)
                section.failed = True
                section.notes.append(msg)
            else:
                rec["diffprivlib"] = {str(C): dpl["accuracy"][float(C)] for C in Cs}
                rec["diffprivlib_warnings"] = dpl["warnings"]
                rec["diffprivlib_seconds"] = dpl["seconds"]
        results.append(rec)
        headers = ["epsilon", f"skforget (delta={delta:.0e})"]
        dpl_cols = sorted(rec.get("diffprivlib", {}), key=float)
        headers += [f"diffprivlib C={float(C):g} (delta=0)" for C in dpl_cols]
        rows = []
        for i, eps in enumerate(epsilons):
            rows.append([f"{eps:.3g}", _cell(acc[i])]
                        + [_cell(rec["diffprivlib"][C][i]) for C in dpl_cols])
        md += [f"**{name}** ({X_tr.shape[0]} training rows; skforget "
               + ", ".join(f"{k}={v}" for k, v in params.items())
               + f"). Non-private LogisticRegression: {base:.3f} (defaults), "
               f"{same:.3f} (C={params['C']}); majority class {majority:.3f}.",
               "", md_table(headers, rows), ""]
        at1 = int(np.argmin(abs(epsilons - 1)))
        same_c = rec.get("diffprivlib", {}).get(str(params["C"]))
        log(f"  privacy-utility {name}: skforget at eps={epsilons[at1]:g} "
            f"{acc[at1].mean():.3f}"
            + (f", diffprivlib (same C) {same_c[at1].mean():.3f}"
               if same_c is not None else ""))

    intro = [
        f"Test accuracy, mean ± sd over {len(seeds)} noise seeds, on a 75/25 "
        "stratified split. skforget: (epsilon, delta)-DP for every record, "
        "delta as stated, hyper-parameters of the fit benchmark (chosen once at "
        "epsilon=1, held fixed). diffprivlib 0.6.6 LogisticRegression: pure "
        "epsilon-DP (delta=0) by objective perturbation, data_norm=1, at "
        f"skforget's C and at its default C=1, max_iter={MAX_ITER}; multiclass is "
        "one-vs-rest with epsilon/n_classes per class. At equal epsilon, "
        "diffprivlib's guarantee is formally stronger (delta=0); the table "
        "compares accuracy at equal epsilon, not equal guarantees. diffprivlib "
        "offers no deletion.",
    ]
    if dpl_versions:
        intro.append(f"diffprivlib ran in its own virtualenv ({VENV.name}: "
                     + ", ".join(f"{k} {v}" for k, v in dpl_versions.items()) + ").")
    intro += [f"**{n}**" for n in section.notes]
    section.markdown = "\n\n".join(intro) + "\n\n" + "\n".join(md)
    section.data = {"datasets": results, "diffprivlib_versions": dpl_versions,
                    "notes": section.notes}
    plt = pyplot()
    if plt is not None and out_dir is not None:
        cols = min(2, len(results))
        rows_ = int(np.ceil(len(results) / cols))
        fig, axes = plt.subplots(rows_, cols, figsize=(5.2 * cols, 3.6 * rows_),
                                 squeeze=False)
        for ax, rec in zip(axes.ravel(), results, strict=False):
            m, s = rec["skforget"].mean(axis=1), rec["skforget"].std(axis=1)
            ax.plot(epsilons, m, "o-", label="skforget")
            ax.fill_between(epsilons, m - s, m + s, alpha=0.25)
            for C, a in rec.get("diffprivlib", {}).items():
                ax.errorbar(epsilons, a.mean(axis=1), yerr=a.std(axis=1),
                            marker="s", ms=3, capsize=2,
                            label=f"diffprivlib C={float(C):g}")
            ax.axhline(rec["sklearn_default"], color="k", ls="--", lw=1,
                       label="sklearn (not private)")
            ax.axhline(rec["majority"], color="grey", ls=":", lw=1,
                       label="majority class")
            ax.set_xscale("log")
            ax.set_xlabel("epsilon")
            ax.set_ylabel("test accuracy")
            ax.set_title(rec["dataset"])
            ax.legend(fontsize=7)
        for ax in axes.ravel()[len(results):]:
            ax.set_visible(False)
        fig.tight_layout()
        section.plots.append(save_figure(fig, out_dir, "privacy_utility.png"))
    return section


def _add_arguments(parser):
    parser.add_argument("--diffprivlib", action=argparse.BooleanOptionalAction,
                        default=None, help="compare with diffprivlib (default: "
                        "yes for the full run, no for the smoke run)")


def main(argv=None):
    return scenario_main(run, __doc__, argv, add_arguments=_add_arguments)


if __name__ == "__main__":
    sys.exit(main())
