# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Privacy accounting for noisy gradient descent with certified deletion.

Pure functions of public numbers (no data arrays). Every privacy figure that
skforget reports is computed here, by a function that cites the result it
applies; see ``privacy-accounting.md`` for the derivations.
"""

from skforget.accounting._calibration import (
    default_delta,
    deletion_factor,
)
from skforget.accounting._conversions import (
    advantage_bound,
    epsilon_at_order,
    epsilon_to_rho,
    gaussian_epsilon,
    optimal_order,
    rho_to_epsilon,
)
from skforget.accounting._cyclic import (
    Segment,
    rho_cyclic_present,
    rho_cyclic_removed,
)
from skforget.accounting._guarantee import EditCertificate, PrivacyGuarantee
from skforget.accounting._history import guarantee_after_edit, guarantee_after_fit
from skforget.accounting._noisy_gd import (
    check_learning_rate,
    contraction,
    coupling_distance,
    default_learning_rate,
    gradient_bound,
    group_factor,
    max_learning_rate,
    rho_adaptive,
    rho_compose,
    rho_deletion,
    rho_dp,
    rho_inf,
    rho_joint,
    rho_step_sequence,
    rho_two_phase,
    sensitivity,
    smoothness,
)
from skforget.accounting._output_perturbation import (
    OutputPerturbationPlan,
    guarantee_after_output_perturbation,
    minimizer_sensitivity,
    output_perturbation_noise,
    plan_output_perturbation,
    rho_adaptive_release,
    rho_output_perturbation,
)
from skforget.accounting._plan import (
    TrainingPlan,
    lazy_deletion_rho,
    pending_removals,
    plan_training,
    plan_unlearning,
)
from skforget.accounting._recipes import (
    cs23_recipe,
    default_regularization,
    init_variance,
    noise_scale,
    steps_fit,
    steps_unlearn_privacy,
    steps_unlearn_utility,
)
from skforget.accounting._selection import (
    SearchBudget,
    plan_search,
    repetition_gamma,
    sample_repetitions,
    selection_rdp,
)

__all__ = [
    "EditCertificate",
    "OutputPerturbationPlan",
    "PrivacyGuarantee",
    "SearchBudget",
    "Segment",
    "TrainingPlan",
    "advantage_bound",
    "check_learning_rate",
    "contraction",
    "coupling_distance",
    "cs23_recipe",
    "default_delta",
    "default_learning_rate",
    "default_regularization",
    "deletion_factor",
    "epsilon_at_order",
    "epsilon_to_rho",
    "gaussian_epsilon",
    "gradient_bound",
    "group_factor",
    "guarantee_after_edit",
    "guarantee_after_fit",
    "guarantee_after_output_perturbation",
    "init_variance",
    "max_learning_rate",
    "minimizer_sensitivity",
    "noise_scale",
    "optimal_order",
    "output_perturbation_noise",
    "plan_output_perturbation",
    "plan_search",
    "plan_training",
    "plan_unlearning",
    "lazy_deletion_rho",
    "pending_removals",
    "repetition_gamma",
    "rho_adaptive",
    "rho_adaptive_release",
    "rho_compose",
    "rho_cyclic_present",
    "rho_cyclic_removed",
    "rho_deletion",
    "rho_dp",
    "rho_inf",
    "rho_joint",
    "rho_output_perturbation",
    "rho_step_sequence",
    "rho_to_epsilon",
    "rho_two_phase",
    "sample_repetitions",
    "selection_rdp",
    "sensitivity",
    "smoothness",
    "steps_fit",
    "steps_unlearn_privacy",
    "steps_unlearn_utility",
]
