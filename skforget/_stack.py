# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Who runs a private fit, read from the call stack (public: the caller's code).

:func:`enclosing_pipelines` finds every scikit-learn ``Pipeline`` whose
preprocessing comes before the fitted model, nested or around a wrapper (an
ordinary ``Pipeline`` checked only the one whose last step was the model: a
trial's ``StandardScaler`` one level up, or before a ``OneVsRestClassifier``,
went unsaid). :func:`sklearn_meta_estimator` names a scikit-learn
meta-estimator outside model selection and calibration that fits the model
(``BaggingClassifier``, ``OneVsRestClassifier``, ``RFE``,
``TransformedTargetRegressor``, ...): several fits on shared rows, or exact
statistics of them or of the rows, which no per-model figure covers. The
model-selection and calibration callers are :func:`skforget._validation.
sklearn_caller`'s.
"""

import os
import sys

_SKLEARN = f"{os.sep}sklearn{os.sep}"
_PIPELINE = f"{_SKLEARN}pipeline.py"

#: Parts of scikit-learn whose frames are not a meta-estimator of the fit:
#: the pipeline (checked on its own), model selection and calibration
#: (sklearn_caller's), the base classes, utilities and frozen estimators.
_NOT_META = (_PIPELINE, f"{_SKLEARN}model_selection{os.sep}",
             f"{_SKLEARN}calibration.py", f"{_SKLEARN}base.py",
             f"{_SKLEARN}utils{os.sep}", f"{_SKLEARN}frozen{os.sep}")

#: Meta-estimators that fit the model once on their input and use only what it
#: released (its coefficients): post-processing, covered by the fit's figure.
RELEASED_ONLY = frozenset({"SelectFromModel"})


def _frames(depth):
    frame = sys._getframe(depth + 1)
    while frame is not None:
        yield frame
        frame = frame.f_back


def enclosing_pipelines(estimator):
    """Every scikit-learn ``Pipeline`` whose ``fit`` runs this call and whose
    last step leads to ``estimator``: it is ``estimator``, or an object whose
    own method runs between that ``fit`` and this call (a nested pipeline, a
    meta-estimator fitting a clone). Innermost first."""
    seen = {id(estimator)}
    found = []
    for frame in _frames(1):
        obj = frame.f_locals.get("self")
        if obj is None:
            continue
        if os.path.abspath(frame.f_code.co_filename).endswith(_PIPELINE) and \
                getattr(obj, "steps", None) and id(obj.steps[-1][1]) in seen \
                and all(obj is not p for p in found):
            found.append(obj)
        seen.add(id(obj))
    return found


def sklearn_meta_estimator():
    """The class name of the innermost scikit-learn meta-estimator outside
    model selection, calibration and pipelines whose method runs this call,
    or None; one that only reads the fitted model (:data:`RELEASED_ONLY`) is
    passed over."""
    for frame in _frames(1):
        path = os.path.abspath(frame.f_code.co_filename)
        if _SKLEARN not in path or any(part in path for part in _NOT_META):
            continue
        obj = frame.f_locals.get("self")
        if obj is None or not type(obj).__module__.startswith("sklearn.") \
                or not hasattr(obj, "get_params"):
            continue
        if type(obj).__name__ not in RELEASED_ONLY:
            return type(obj).__name__
    return None
