"""Write tests/data/legacy_models_main.pkl: models pickled by the pre-issue-22 layout.

Run once on main at 460f5ad (``python tests/data/make_legacy_pickle.py
tests/data/legacy_models_main.pkl``), before the modules were renamed, so the
pickle names the old module paths (``skforget._classifier``,
``skforget._op_estimators``, ``skforget._report``, ...). Kept so the file can be
regenerated on that commit; tests/test_legacy_pickle.py only reads it.
"""
import pickle
import re
import sys

import numpy as np
from sklearn.datasets import make_classification, make_regression

from skforget import (
    EditRequest,
    NoisyGDClassifier,
    NoisyGDRegressor,
    OutputPerturbationClassifier,
    OutputPerturbationRegressor,
)


def main(path):
    X, y = make_classification(n_samples=120, n_features=4, n_informative=3,
                               n_redundant=0, n_classes=3, random_state=0)
    X = X / np.linalg.norm(X, axis=1).max()
    Xr, yr = make_regression(n_samples=120, n_features=4, random_state=0)
    Xr = Xr / np.linalg.norm(Xr, axis=1).max()
    yr = yr / np.abs(yr).max()
    clf = NoisyGDClassifier(random_state=0, classes=[0, 1, 2]).fit(X, y)
    clf.partial_unlearn(EditRequest(X, y, delete=[0, 1]))
    yb = (y > 0).astype(int)
    models = {
        "NoisyGDClassifier": clf,
        "NoisyGDRegressor": NoisyGDRegressor(random_state=0).fit(Xr, yr),
        "OutputPerturbationClassifier": OutputPerturbationClassifier(
            random_state=0, classes=[0, 1]).fit(X, yb),
        "OutputPerturbationRegressor": OutputPerturbationRegressor(
            random_state=0).fit(Xr, yr),
        "FitPlan": NoisyGDClassifier(random_state=0, classes=[0, 1, 2]).plan(X, y),
    }
    probe = {"X": X[:10], "Xr": Xr[:10]}
    expected = {
        name: (m.decision_function(X[:10]) if "Classifier" in name
               else m.predict(Xr[:10]))
        for name, m in models.items() if name != "FitPlan"
    }
    blob = pickle.dumps({"models": models, "probe": probe, "expected": expected},
                        protocol=4)
    with open(path, "wb") as f:
        f.write(blob)
    print(len(blob), sorted(set(re.findall(rb"skforget[\w.]*", blob))))


if __name__ == "__main__":
    main(sys.argv[1])
