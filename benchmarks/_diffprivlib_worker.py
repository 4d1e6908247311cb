# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fit diffprivlib's LogisticRegression on one dataset; runs in its own venv.

diffprivlib 0.6.6 needs scikit-learn < 1.8, so bench_privacy_utility.py runs
this script with the interpreter of ``benchmarks/.venv-diffprivlib`` and talks
to it through files: an ``.npz`` with the split and the grid in, a JSON with the
test accuracies out (and, when the input holds ``return_proba``, the test
rows' class probabilities, which bench_decisions.py scores). It imports neither
skforget nor anything from this directory, so it runs unchanged in that
environment.

Usage: python _diffprivlib_worker.py INPUT.npz OUTPUT.json
"""

import json
import sys
import time
import warnings


def main(in_path, out_path):
    import diffprivlib
    import numpy as np
    import sklearn
    from diffprivlib.models import LogisticRegression

    d = np.load(in_path)
    X_tr, y_tr, X_te, y_te = d["X_train"], d["y_train"], d["X_test"], d["y_test"]
    epsilons, seeds, Cs = d["epsilons"], d["seeds"], d["Cs"]
    data_norm = float(d["data_norm"])
    max_iter = int(d["max_iter"])
    want_proba = "return_proba" in d.files
    accuracy, proba = {}, {}
    seen = set()
    start = time.perf_counter()
    for C in Cs:
        grid, proba_grid = [], []
        for eps in epsilons:
            row, proba_row = [], []
            for seed in seeds:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    # data_norm is public (rows have unit norm by construction),
                    # so diffprivlib never estimates it from the data.
                    model = LogisticRegression(epsilon=float(eps),
                                               data_norm=data_norm, C=float(C),
                                               max_iter=max_iter,
                                               random_state=int(seed))
                    model.fit(X_tr, y_tr)
                seen.update(f"{w.category.__name__}: {str(w.message)[:160]}"
                            for w in caught)
                row.append(float(model.score(X_te, y_te)))
                if want_proba:
                    proba_row.append(model.predict_proba(X_te).tolist())
            grid.append(row)
            proba_grid.append(proba_row)
        accuracy[repr(float(C))] = grid
        if want_proba:
            proba[repr(float(C))] = proba_grid
    out = {
        "accuracy": accuracy,
        **({"proba": proba} if want_proba else {}),
        "seconds": time.perf_counter() - start,
        "warnings": sorted(seen),
        "versions": {"diffprivlib": diffprivlib.__version__,
                     "scikit-learn": sklearn.__version__, "numpy": np.__version__,
                     "python": sys.version.split()[0]},
    }
    with open(out_path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
