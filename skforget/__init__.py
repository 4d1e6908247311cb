# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""skforget: differentially private linear models with certified deletion.

Train scikit-learn-compatible linear models by noisy (mini-batch) gradient
descent, and delete, replace or insert records later with a certificate that
the result is indistinguishable from a model that never saw the removed records.
"""

# Imported for its registration: a scikit-learn Pipeline whose fitted
# preprocessing leaves the guarantee warns whatever else the user imported.
import skforget._public  # noqa: F401
from skforget._database import Database, DatabaseVersion
from skforget._edits import EditRequest
from skforget._fit_plan import FitPlan, UnlearnPlan
from skforget._legacy import install as _install_legacy_paths
from skforget._noisy_gd_estimators import NoisyGDClassifier, NoisyGDRegressor
from skforget._output_perturbation_estimators import (
    OutputPerturbationClassifier,
    OutputPerturbationRegressor,
)
from skforget.accounting import (
    EditCertificate,
    LedgerUnreachableError,
    PrivacyBudgetExceeded,
    PrivacyGuarantee,
    PrivacyLedger,
    UnaccountableReleaseError,
)
from skforget.exceptions import (
    CoarseRangeWarning,
    DataDependentStepError,
    NotCertifiableError,
    PrivacyBudgetWarning,
    PrivacyLeakWarning,
    UnlearningError,
)

__version__ = "0.1.0.dev0"

_install_legacy_paths()

__all__ = [
    "CoarseRangeWarning",
    "DataDependentStepError",
    "Database",
    "DatabaseVersion",
    "EditCertificate",
    "EditRequest",
    "FitPlan",
    "LedgerUnreachableError",
    "UnlearnPlan",
    "NoisyGDClassifier",
    "NoisyGDRegressor",
    "NotCertifiableError",
    "OutputPerturbationClassifier",
    "OutputPerturbationRegressor",
    "PrivacyGuarantee",
    "PrivacyBudgetExceeded",
    "PrivacyBudgetWarning",
    "PrivacyLedger",
    "PrivacyLeakWarning",
    "UnaccountableReleaseError",
    "UnlearningError",
    "__version__",
]
