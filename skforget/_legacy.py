# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Old module paths of classes that pickles name, for models saved before a move.

A pickle names each object's class by module path, and a RecordStore file
keeps its model pickled, so a class that moves to another module would no
longer unpickle. Each moved module's old path is registered in ``sys.modules``
as an alias of the module that now holds its classes (issue 22 renamed the
estimator modules). Nothing imports the old paths in the code; only pickles
do. tests/test_legacy_pickle.py loads a pickle written before the move.
"""

import importlib
import sys

#: Old module path -> the module that holds its classes now.
MOVED_MODULES = {
    "skforget._base": "skforget._noisy_gd",
    "skforget._classifier": "skforget._noisy_gd_estimators",
    "skforget._op_estimators": "skforget._output_perturbation_estimators",
    "skforget._regressor": "skforget._noisy_gd_estimators",
    "skforget._report": "skforget._fit_plan",
}


def install():
    """Make every old path resolve to its new module (idempotent)."""
    for old, new in MOVED_MODULES.items():
        sys.modules.setdefault(old, importlib.import_module(new))
