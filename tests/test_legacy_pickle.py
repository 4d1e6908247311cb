# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Models pickled before the modules were renamed (issue 22) still load.

tests/data/legacy_models_main.pkl was written by tests/data/make_legacy_pickle.py
on main at 460f5ad, so it names the old module paths (``skforget._classifier``,
``skforget._op_estimators``, ``skforget._report``, ``skforget.accounting._plan``).
A RecordStore file holds the same kind of bytes, so this is the promise that an
existing store keeps working after an upgrade.
"""

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification

import skforget
from skforget import EditRequest

LEGACY = Path(__file__).parent / "data" / "legacy_models_main.pkl"


@pytest.fixture(scope="module")
def legacy():
    return pickle.loads(LEGACY.read_bytes())


@pytest.mark.parametrize("name", [
    "NoisyGDClassifier", "NoisyGDRegressor",
    "OutputPerturbationClassifier", "OutputPerturbationRegressor",
])
def test_legacy_model_unpickles_to_the_public_class(legacy, name):
    model = legacy["models"][name]
    assert type(model) is getattr(skforget, name)
    if "Classifier" in name:
        got = model.decision_function(legacy["probe"]["X"])
    else:
        got = model.predict(legacy["probe"]["Xr"])
    np.testing.assert_array_equal(got, legacy["expected"][name])
    assert model.privacy_guarantee_.epsilon > 0


def test_legacy_model_can_still_unlearn(legacy):
    # The data of tests/data/make_legacy_pickle.py, after its one deletion.
    X, y = make_classification(n_samples=120, n_features=4, n_informative=3,
                               n_redundant=0, n_classes=3, random_state=0)
    X, y = X[2:] / np.linalg.norm(X, axis=1).max(), y[2:]
    model = pickle.loads(pickle.dumps(legacy["models"]["NoisyGDClassifier"]))
    before = model.coef_.copy()
    model.partial_unlearn(EditRequest(X, y, delete=[0]))
    assert len(model.privacy_guarantee_.edits) == 2
    assert not np.array_equal(model.coef_, before)


def test_legacy_fit_plan_unpickles(legacy):
    assert type(legacy["models"]["FitPlan"]) is skforget.FitPlan


def test_a_fresh_interpreter_unpickles_without_importing_skforget_first():
    # What a RecordStore does when it opens a file: pickle.loads is the first
    # thing to touch skforget, through the old module paths.
    code = ("import pickle, sys; d = pickle.loads(open(sys.argv[1], 'rb').read()); "
            "print(sorted(type(m).__module__ for m in d['models'].values()))")
    out = subprocess.run([sys.executable, "-c", code, str(LEGACY)], check=True,
                         capture_output=True, text=True).stdout
    assert "skforget" in out


def test_every_old_path_names_a_module_that_moved():
    from skforget._legacy import MOVED_MODULES

    package = Path(skforget.__file__).parent
    for old, new in MOVED_MODULES.items():
        assert sys.modules[old] is sys.modules[new]
        assert not (package / f"{old.split('.')[-1]}.py").exists()
