# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""From privacy targets to a training plan, and from a run to its guarantee.

These four functions are the only door between the estimators and the privacy
mathematics: :func:`plan_training` turns the user's targets into the batch
count, ``sigma``, ``eta`` and the fit's passes (privacy-accounting.md, Sections
7 and 12); :func:`plan_unlearning` sizes one edit (unlearning steps, or a fresh
retraining when that is no dearer); :func:`guarantee_after_fit` and
:func:`guarantee_after_edit` state what the released model satisfies, computed
from the public history actually run (Sections 6 and 12).

With one batch per pass (``n_batches=1``) the run is the source paper's
full-batch noisy gradient descent and every figure has the closed forms
(5.2)-(5.5); with several batches the figures come from the exact shift-schedule
bound of Section 12 (:mod:`skforget.accounting._cyclic`).
"""

import math
from dataclasses import dataclass

from skforget.accounting._checks import (
    check_choice,
    check_int,
    check_positive,
    check_probability,
)
from skforget.accounting._conversions import (
    CONVERSIONS,
    epsilon_to_rho,
    optimal_order,
    rho_to_epsilon,
)
from skforget.accounting._cyclic import (
    Segment,
    rho_cyclic_present,
    rho_cyclic_removed,
)
from skforget.accounting._guarantee import EditCertificate, PrivacyGuarantee
from skforget.accounting._noisy_gd import (
    LOSS_CURVATURE,
    check_learning_rate,
    contraction,
    cs23_recipe,
    gradient_bound,
    group_factor,
    init_variance,
    max_learning_rate,
    noise_scale,
    rho_adaptive,
    rho_deletion,
    rho_dp,
    rho_inf,
    sensitivity,
    smoothness,
    steps_fit,
    steps_unlearn_privacy,
    steps_unlearn_utility,
)

RECIPES = ("tight", "cs23")
FIT_RECIPES = ("typical", "worst_case")

#: Epochs per relaxation time ``1 / (eta lam)`` when the batch count is chosen
#: automatically: the noise factor of the cyclic schedule is then about
#: ``1 + 0.9 / 10`` (Section 12.6, Table 12.1) and a deletion takes about
#: ``10 * ln(rho_inf / rho_dd) / 2`` passes.
EPOCHS_PER_RELAXATION = 10
#: Smallest batch the automatic choice makes: below it the per-step work on
#: the parameters (noise, shrinkage) stops being small next to the rows'.
MIN_BATCH = 64
#: The default step size leaves this much room for batches to grow (insertions,
#: rounding of batch sizes) before the contraction factor exceeds ``1 - eta lam``.
GROWTH_HEADROOM = 1.1
#: An edit runs at least this many relaxation times when there are several
#: batches: the order changes at each segment, and a shorter segment would let
#: the records' last uses before and after the change crowd together (Table 12.2).
MIN_EDIT_RELAXATIONS = 1.0


def default_delta(*, n_samples):
    """Default delta ``min(1e-5, n ** -1.1)`` (privacy-accounting.md, 10.5).

    Delta must be well below ``1/n``: a mechanism that publishes one random record
    is (0, 1/n)-DP.

    Examples
    --------
    >>> from skforget.accounting import default_delta
    >>> default_delta(n_samples=100)
    1e-05
    """
    n = check_int(n_samples, "n_samples", low=1)
    return min(1e-5, float(n) ** -1.1)


def typical_curvature(*, loss, data_norm, n_features):
    """Public stand-in for the data's curvature: ``beta_phi R_x^2 / d``.

    The mean eigenvalue of the curvature-weighted second moment of rows on the
    ``data_norm`` sphere in ``d`` dimensions (its trace is at most
    ``beta_phi R_x^2``). It sets how many steps the fit plans
    (privacy-accounting.md, Section 8.4), never a privacy figure.

    Examples
    --------
    >>> from skforget.accounting import typical_curvature
    >>> typical_curvature(loss="logistic", data_norm=1.0, n_features=100)
    0.0025
    """
    check_choice(loss, "loss", LOSS_CURVATURE)
    R = check_positive(data_norm, "data_norm")
    d = check_int(n_features, "n_features", low=1)
    return LOSS_CURVATURE[loss] * R * R / d


def initial_error(*, loss, n_classes=2, target_bound=1.0):
    """Bound on ``F(0) - min F`` of the clipped surrogate loss, per record.

    At ``theta = 0`` every logistic output is at ``log 2`` and the surrogate
    loss decreases by at most that much (its slope is the clamped one); the
    softmax is at ``log C``; one-vs-rest sums ``C`` binary losses; the squared
    loss is at ``y^2 / 2 <= Y^2 / 2`` for targets bounded by ``Y``
    (privacy-accounting.md, Section 8.4).

    Examples
    --------
    >>> from skforget.accounting import initial_error
    >>> round(initial_error(loss="logistic"), 6), initial_error(loss="squared")
    (0.693147, 0.5)
    """
    check_choice(loss, "loss", LOSS_CURVATURE)
    if loss == "logistic":
        return math.log(2.0)
    C = check_int(n_classes, "n_classes", low=2)
    if loss == "multinomial":
        return math.log(C)
    if loss == "ovr":
        return C * math.log(2.0)
    Y = check_positive(target_bound, "target_bound")
    return 0.5 * Y * Y


def steps_fit_typical(*, init_error, target, learning_rate, lam, curvature):
    """Training steps at the typical curvature (privacy-accounting.md, 8.4).

    ``ceil(ln(err_0 / target) / (eta (lam + h)))``: the steps after which the
    error of a direction of curvature ``h`` has decayed from ``err_0`` to the
    target, for ``h`` the public :func:`typical_curvature`; ``h = 0`` is the
    worst case (only the regulariser contracts). Utility only: privacy holds
    for any number of steps.

    Examples
    --------
    >>> from skforget.accounting import steps_fit_typical
    >>> steps_fit_typical(init_error=1.0, target=0.01, learning_rate=1.0,
    ...                   lam=0.01, curvature=0.09)
    47
    """
    err0 = check_positive(init_error, "init_error")
    target = check_positive(target, "target")
    eta = check_positive(learning_rate, "learning_rate")
    lam = check_positive(lam, "lam")
    h = float(curvature)
    if err0 <= target:
        return 0  # the noise alone exceeds the target (the caller decides)
    return max(1, int(math.ceil(math.log(err0 / target) / (eta * (lam + h)))))


def auto_batches(*, n_samples, learning_rate, lam, epochs_per_relaxation=None,
                 min_batch=None):
    """Batches per pass chosen from public numbers (privacy-accounting.md, 12.6).

    ``E = floor(1 / (r eta lam))`` so that one relaxation time of the
    regulariser spans ``r`` passes (default 10), with batches of at least
    ``min_batch`` rows (default 64); 1 (full batch) when that leaves fewer than
    two batches.

    Examples
    --------
    >>> from skforget.accounting import auto_batches
    >>> auto_batches(n_samples=10**6, learning_rate=2.0, lam=1e-5)
    5000
    >>> auto_batches(n_samples=500, learning_rate=2.0, lam=0.05)
    1
    """
    n = check_int(n_samples, "n_samples", low=1)
    eta = check_positive(learning_rate, "learning_rate")
    lam = check_positive(lam, "lam")
    r = EPOCHS_PER_RELAXATION if epochs_per_relaxation is None else \
        check_positive(epochs_per_relaxation, "epochs_per_relaxation")
    b_min = MIN_BATCH if min_batch is None else check_int(min_batch, "min_batch",
                                                          low=1)
    E = int(min(math.floor(1.0 / (r * eta * lam)), n // b_min))
    return E if E >= 2 else 1


def batch_data_weight(n_samples, n_batches, normaliser, normaliser_batches=None):
    """Largest batch divided by the batch normaliser ``B = N / E_B``.

    Batches are ``E`` nearly equal ranges of the rows (sizes differ by at most
    one), so the largest holds ``ceil(n / E)`` rows; with one batch this is
    ``n / N``. ``E_B`` (``normaliser_batches``) defaults to ``E``; an edit
    that runs more batches than the fit keeps the fit's (Section 12.1).

    Examples
    --------
    >>> from skforget.accounting import batch_data_weight
    >>> batch_data_weight(1000, 10, 1000), batch_data_weight(1090, 1, 1000)
    (1.0, 1.09)
    >>> batch_data_weight(1200, 11, 1000, normaliser_batches=10)
    1.1
    """
    n = check_int(n_samples, "n_samples", low=0)
    E = check_int(n_batches, "n_batches", low=1)
    N = check_positive(normaliser, "normaliser")
    E_B = E if normaliser_batches is None else check_int(
        normaliser_batches, "normaliser_batches", low=1)
    if E == 1 and E_B == 1:
        return n / N
    return math.ceil(n / E) * E_B / N


def edit_batches(n_samples, n_batches, normaliser):
    """Batches per pass for a segment on ``n_samples`` rows (Section 12.1).

    The fit's count, unless the edited database would make a batch exceed the
    step size's headroom (``GROWTH_HEADROOM`` times the batch normaliser
    ``B = N / E``): then more batches, each within it. The normaliser ``B``, and
    so the per-step drift bound ``eta S / B``, never changes; one batch stays
    one (full batch: the data weight ``n / N`` enters the contraction).
    """
    n = check_int(n_samples, "n_samples", low=0)
    E = check_int(n_batches, "n_batches", low=1)
    if E == 1:
        return 1
    cap = max(1, int(math.floor(GROWTH_HEADROOM * normaliser / E)))
    return max(E, -(-n // cap))


@dataclass(frozen=True, slots=True)
class TrainingPlan:
    """Public constants of one private training run (privacy-accounting.md, 7, 12).

    Produced by :func:`plan_training`; the solver runs it, the guarantee
    functions account for it. Nothing in it depends on the rows. The estimators
    add the public weighting (``sample_weight_bound``: the bound each sample
    weight was clipped at, 0 without sample weights; ``class_weights``: one
    weight per class code; ``weight_bound``: what row weights were divided by
    to lie in [0, 1], Section 4.4).
    """

    loss: str
    recipe: str
    relation: str
    group_size: int
    conversion: str
    epsilon: float
    delta: float
    deletion_epsilon: float
    rho_target: float
    rho_deletion_target: float
    row_norm: float
    clip_norm: float | None
    gradient_bound: float
    sensitivity: float
    lam: float
    beta: float
    learning_rate: float
    contraction: float
    sigma: float
    init_variance: float
    normaliser: int
    n_params: int
    max_edit_size: int
    rho_inf: float
    fit_steps: int
    unlearn_steps_privacy: int
    unlearn_steps_utility: int
    noise_dominated: bool = False
    n_batches: int = 1
    fit_epochs: int = 0
    fit_data_weight: float = 1.0
    noise_factor: float = 1.0
    typical_curvature: float = 0.0
    fit_recipe: str = "worst_case"
    min_edit_epochs: int = 1
    edit_mode: str = "continue"
    sample_weight_bound: float = 0.0
    class_weights: tuple = ()
    weight_bound: float = 1.0

    @property
    def unlearn_steps(self):
        """``K_R = max(K_R^priv, K_R^util)`` for an edit of ``max_edit_size``."""
        return max(self.unlearn_steps_privacy, self.unlearn_steps_utility)

    @property
    def batch_size(self):
        """The batch normaliser ``B = N / E`` (rows per batch at fit)."""
        return self.normaliser / self.n_batches

    def fit_segment(self):
        """The fit's public schedule (a :class:`Segment`)."""
        return self.segment(self.n_batches, self.fit_steps, self.fit_data_weight)

    def segment(self, n_batches, steps, data_weight=1.0):
        """Public schedule of ``steps`` steps over ``n_batches`` batches per pass.

        Every segment of the plan keeps the fit's batch normaliser
        ``B = N / E`` (``normaliser_batches = self.n_batches``), also when an
        edit runs more batches than the fit (Section 12.1): the solver and the
        accountant build their segments here, so they divide by the same ``B``.
        """
        E = check_int(n_batches, "n_batches", low=1)
        return Segment(E, check_int(steps, "steps", low=0) // E, self.learning_rate,
                       float(data_weight), normaliser_batches=self.n_batches)

    def data_weight(self, n_samples, n_batches):
        """Largest batch of ``n_batches`` on ``n_samples`` rows over ``B``."""
        return batch_data_weight(n_samples, n_batches, self.normaliser,
                                 normaliser_batches=self.n_batches)


def _fit_steps(fit_recipe, *, loss, n_classes, target_bound, lam, beta, p, v0, sigma,
               eta, h, G, c):
    """The fit's steps for the given noise (Section 7 step 5, or 8.4); 0 when the
    privacy noise alone exceeds the utility target (the data cannot improve on
    the noise: the caller then runs one relaxation time and says so)."""
    if fit_recipe == "typical":
        # Gibbs level p sigma^2 / 2 as the target; err_0 from theta = 0 plus the
        # initial draw's (M / 2) p v_0 (Section 8.4).
        target = 0.5 * p * sigma**2
        data_error = initial_error(loss=loss, n_classes=n_classes,
                                   target_bound=target_bound)
        if data_error <= target:
            return 0
        err0 = data_error + 0.5 * (lam + beta) * p * v0
        return steps_fit_typical(init_error=err0, target=target, learning_rate=eta,
                                 lam=lam, curvature=h)
    return steps_fit(gradient_bound=G, lam=lam, n_params=p, init_variance=v0,
                     sigma=sigma, contraction=c)


def _fit_epochs(k_fit, fit_steps, E):
    """Whole passes for ``k_fit`` steps (at least 2 with several batches: the
    ramp epoch and one before it), or the user's ``fit_steps``."""
    if fit_steps is not None:
        return check_int(fit_steps, "fit_steps", low=1)
    if E == 1:
        return max(1, k_fit)
    return max(2, int(math.ceil(k_fit / E)))


def _edit_mode(*, E, epochs, eta, lam, beta, S, N, rho, rho_dd, c, relation,
               min_edit_epochs, weight, sigma_fb):
    """``"retrain"`` when training afresh costs no more passes than the
    shortest continuation that could serve a deletion; else ``"continue"``.

    The continuation is sized at the stationary noise (the noise it would need),
    for the cheapest edit there is, one deleted unit (Section 12.7).
    """
    factor = deletion_factor(plan_relation=relation, n_replaced=0)
    if E == 1:
        r_inf = rho_inf(sensitivity=S, normaliser=N, learning_rate=eta,
                        sigma=sigma_fb, contraction=c)
        cont = max(1, steps_unlearn_privacy(rho_inf=r_inf * factor,
                                            rho_target=rho_dd, contraction=c))
        return "retrain" if epochs <= cont else "continue"
    if epochs <= min_edit_epochs:
        return "retrain"
    relax = 1.0 / (E * eta * lam)
    # Deletion passes at the full-batch rate (Section 12.5: within a few % of it).
    deletion = math.log(max(1.0, rho * factor / rho_dd)) / (2.0 * E * eta * lam)
    return "retrain" if epochs <= max(min_edit_epochs, deletion, relax) else \
        "continue"


def _check_batches_contract(N, E, weight, *, eta, lam, beta):
    """Refuse a batch layout whose largest batch is too large for the step size
    (every step must contract, Lemma 3.1: ``eta (lam + beta w) < 2``), saying
    what to change in the user's terms."""
    if eta * (lam + beta * weight) < 2.0:
        return
    limit = (2.0 / eta - lam) / beta  # largest batch / average that contracts
    sizes = f"{N // E}" if N % E == 0 else f"{N // E} and {N // E + 1}"
    rows = (math.floor(1.0 / (limit - 1.0)) + 1) if limit > 1.0 else None
    hint = (f"use batches of at least {rows} rows (batch_size={rows} or more, or "
            "batch_size='auto')" if rows is not None else
            "use batch_size='auto' or full batches (batch_size=None)")
    raise ValueError(
        f"{E} batches on {N} rows hold {sizes} rows each: the largest is "
        f"{weight:.3g} times their average {N / E:.3g}, while the step size "
        f"learning_rate={eta:.4g} contracts only for batches up to {limit:.3g} "
        f"times the average (privacy-accounting.md, Lemma 3.1). To fix it, {hint}, "
        "or give a smaller learning_rate.")


def _noise_factor(*, mode, E, epochs, eta, lam, beta, S, N, rho, c, min_edit_epochs,
                  weight, sigma_fb):
    """``F = sigma^2 / sigma_fb^2`` that puts the worst planned history at the
    target (Section 12.6). ``rho*`` is proportional to ``1 / sigma^2``, so one
    evaluation at the full-batch noise gives ``F``.

    * ``"retrain"``: the only history is the fit itself (every edit trains
      afresh), so ``F`` is its own figure over the target, below 1 for a fit
      shorter than the relaxation time.
    * ``"continue"``: the worst of the fit and of a long history followed by the
      shortest edit segment allowed; 1 for full batch (the stationary level
      (5.2) bounds every history, Section 6.1).
    """
    common = dict(lam=lam, beta=beta, sigma=sigma_fb, sensitivity=S, normaliser=N)
    if mode == "retrain":
        if E == 1:
            r_inf = rho_inf(sensitivity=S, normaliser=N, learning_rate=eta,
                            sigma=sigma_fb, contraction=c)
            return rho_dp(rho_inf=r_inf, contraction=c, steps=epochs) / rho
        return rho_cyclic_present([Segment(E, epochs, eta, weight)], **common) / rho
    if E == 1:
        return 1.0
    return _calibrate_cyclic(E=E, eta=eta, lam=lam, beta=beta, S=S, N=N, rho=rho,
                             fit_epochs=epochs, min_edit_epochs=min_edit_epochs,
                             data_weight=weight)


#: Length, in relaxation times, of the long segment that stands for "a model
#: at its stationary law" when the noise factor is calibrated (Section 12.6):
#: after it every earlier epoch's weight is below exp(-40).
_STATIONARY_RELAXATIONS = 20


def _calibrate_cyclic(*, E, eta, lam, beta, S, N, rho, fit_epochs, min_edit_epochs,
                      data_weight):
    """Noise factor ``F = sigma^2 / sigma_fb^2`` for the cyclic schedule.

    ``rho*`` is proportional to ``1 / sigma^2``, so one evaluation at the
    full-batch noise gives ``F``. The worst of the histories an estimator can
    reach (Section 12.6): the fit itself; one long segment (a long fit, or a
    long continuation whose start no longer matters); and a long segment
    followed by an edit of the shortest length allowed, or of five times it
    (a continuation's length is set by the deletion target, so it can exceed
    the minimum). Any other history is checked when an edit is planned, and
    served by retraining if it would exceed the target (Section 12.5).
    """
    c = 1.0 - eta * lam
    sigma_fb = noise_scale(rho=rho, sensitivity=S, normaliser=N, learning_rate=eta,
                           contraction=c)
    relax = 1.0 / (E * eta * lam)  # epochs per relaxation time
    long = max(fit_epochs, int(math.ceil(_STATIONARY_RELAXATIONS * relax)), 2)
    common = dict(lam=lam, beta=beta, sigma=sigma_fb, sensitivity=S, normaliser=N)
    stationary = Segment(E, long, eta, data_weight)
    histories = [[Segment(E, fit_epochs, eta, data_weight)], [stationary]]
    histories += [[stationary, Segment(E, m, eta, data_weight)]
                  for m in (min_edit_epochs, 5 * min_edit_epochs)]
    worst = max(rho_cyclic_present(h, **common) for h in histories)
    # The relative margin keeps the planned figures at or below the target
    # after the rounding of the bound's own arithmetic.
    return max(worst, rho) / rho * (1.0 + 1e-9)


def plan_training(*, loss, n_samples, n_params, lam, row_norm, clip_norm, epsilon,
                  delta, deletion_epsilon, max_edit_size=1, relation="replace",
                  group_size=1, learning_rate=None, recipe="tight",
                  conversion="improved", fit_steps=None, n_classes=2, n_batches=1,
                  fit_recipe="worst_case", n_features=None, data_norm=None,
                  target_bound=1.0):
    """Plan a private training run from public numbers and privacy targets.

    privacy-accounting.md, Sections 7 and 12: the (epsilon, delta) targets become
    rho-coefficients (Section 6.4, improved conversion by default); then
    ``beta = beta_phi R^2``, the step size (``2 / (2 lam + 1.1 beta)``, the
    largest Lemma 3.1 allows with 10% headroom for batches that grow, unless
    given), the batches per pass ``E`` (given, or :func:`auto_batches` when
    ``n_batches="auto"``), the noise ``sigma`` that makes the worst
    guarantee over the planned histories equal the target (closed form (5.2)
    for ``E = 1``; Section 12.6 for ``E > 1``), ``v_0``, the fit's steps
    (``fit_recipe``: ``"worst_case"`` for Section 7 step 5, ``"typical"`` for
    the typical-curvature count of Section 8.4) rounded up to whole passes,
    and for full batch the unlearning steps ``K_R^priv`` (eq. 5.5) and
    ``K_R^util`` (Lemma 8.3) of an edit of ``max_edit_size`` deletions.
    ``recipe="cs23"`` uses the source paper's Theorem 5.1 instead (Section 9;
    full batch only).

    Parameters
    ----------
    loss : {"logistic", "squared", "multinomial", "ovr"}
    n_samples : int
        Database size at fit, which becomes the frozen normaliser ``N``.
    n_params : int
        Number of trained coordinates ``p`` (``C * p`` for the softmax model).
    lam : float
        L2 regularisation on every coordinate, intercept included.
    row_norm : float
        Public bound ``R`` on the augmented row norm.
    clip_norm : float or None
        Per-record clipping threshold ``L``.
    epsilon, delta : float
        DP target for records present.
    deletion_epsilon : float
        Deletion target (at the same delta), ``<= epsilon``.
    max_edit_size : int, default=1
        Rows an edit may name; sizes the utility step count.
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1
        Records per privacy unit.
    learning_rate : float or None, default=None
        Step size (the constant-phase one with several batches).
    recipe : {"tight", "cs23"}, default="tight"
    conversion : {"improved", "classic"}, default="improved"
    fit_steps : int or None, default=None
        Override of the fit's length, in passes over the data (epochs); with one
        batch a pass is one step. Privacy holds for any length.
    n_classes : int, default=2
        Number of classes, for the one-vs-rest sensitivity.
    n_batches : int or "auto", default=1
        Batches per pass ``E``; 1 is full-batch gradient descent.
    fit_recipe : {"worst_case", "typical"}, default="worst_case"
        How the fit's length is planned when ``fit_steps`` is None.
    n_features, data_norm : int, float, default=None
        Needed by ``fit_recipe="typical"`` (:func:`typical_curvature`).
    target_bound : float, default=1.0
        Public bound on regression targets (``fit_recipe="typical"``, squared
        loss).

    Returns
    -------
    plan : TrainingPlan

    Examples
    --------
    >>> from skforget.accounting import plan_training
    >>> plan = plan_training(loss="logistic", n_samples=10000, n_params=21,
    ...                      lam=0.01, row_norm=2 ** 0.5, clip_norm=1.0,
    ...                      epsilon=1.0, delta=1e-5, deletion_epsilon=0.1,
    ...                      learning_rate=1 / 0.51)
    >>> plan.fit_steps, plan.unlearn_steps
    (531, 108)
    """
    check_choice(recipe, "recipe", RECIPES)
    check_choice(conversion, "conversion", CONVERSIONS)
    check_choice(fit_recipe, "fit_recipe", FIT_RECIPES)
    N = check_int(n_samples, "n_samples", low=1)
    p = check_int(n_params, "n_params", low=1)
    lam = check_positive(lam, "lam")
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    deletion_epsilon = check_positive(deletion_epsilon, "deletion_epsilon")
    if deletion_epsilon > epsilon:
        raise ValueError(
            f"deletion_epsilon={deletion_epsilon!r} must be <= epsilon={epsilon!r}: "
            "every record is already epsilon-DP, so a weaker deletion target would "
            "certify nothing (CS23 Theorem 5.1 assumes eps_dd <= eps_dp)."
        )
    r = check_int(max_edit_size, "max_edit_size", low=1)
    g = check_int(group_size, "group_size", low=1)
    G = gradient_bound(loss=loss, row_norm=row_norm, clip_norm=clip_norm,
                       n_classes=n_classes)
    S = sensitivity(gradient_bound=G, relation=relation, group_size=g)
    beta = smoothness(loss=loss, row_norm=row_norm)
    rho_target = epsilon_to_rho(epsilon=epsilon, delta=delta, method=conversion)
    rho_dd = epsilon_to_rho(epsilon=deletion_epsilon, delta=delta, method=conversion)
    h_typ = 0.0
    if fit_recipe == "typical":
        if n_features is None or data_norm is None:
            raise ValueError("fit_recipe='typical' needs n_features and data_norm.")
        h_typ = typical_curvature(loss=loss, data_norm=data_norm,
                                  n_features=n_features)

    if recipe == "cs23":
        if learning_rate is not None:
            raise ValueError("learning_rate must be None with recipe='cs23', which "
                             "fixes eta = 1 / (2 (lam + beta)).")
        if n_batches not in (1, "auto"):
            raise ValueError("recipe='cs23' is the source paper's full-batch "
                             "algorithm; use n_batches=1.")
        E = 1
        paper = cs23_recipe(rho=rho_target, rho_deletion_target=rho_dd,
                            gradient_bound=G, lam=lam, beta=beta, normaliser=N,
                            n_params=p, edit_size=r)
        eta = paper["learning_rate"]
        c = contraction(learning_rate=eta, lam=lam, beta=beta)
        sigma = paper["sigma"]
        v0 = paper["init_variance"]
        k_fit = paper["fit_steps"]
        k_priv = paper["unlearn_steps_privacy"]
        k_util = paper["unlearn_steps_utility"]
        r_inf = rho_inf(sensitivity=S, normaliser=N, learning_rate=eta, sigma=sigma,
                        contraction=c)
        F = 1.0
        weight = 1.0
    else:
        if learning_rate is None:
            eta = max_learning_rate(lam=lam, beta=beta * GROWTH_HEADROOM)
        else:
            eta = check_learning_rate(learning_rate=learning_rate, lam=lam, beta=beta)
        c = contraction(learning_rate=eta, lam=lam, beta=beta)
        if n_batches == "auto":
            E = auto_batches(n_samples=N, learning_rate=eta, lam=lam)
        else:
            E = check_int(n_batches, "n_batches", low=1)
            if E > N:
                raise ValueError(f"n_batches={E} exceeds n_samples={N}.")
        weight = batch_data_weight(N, E, N)
        _check_batches_contract(N, E, weight, eta=eta, lam=lam, beta=beta)
        sigma_fb = noise_scale(rho=rho_target, sensitivity=S, normaliser=N,
                               learning_rate=eta, contraction=c)
        min_edit_epochs = 1 if E == 1 else max(2, int(math.ceil(
            MIN_EDIT_RELAXATIONS / (E * eta * lam))))
        # The fit's length depends on sigma (its utility target is the Gibbs
        # level) and sigma on the fit's length and on how edits will be served
        # (Section 12.6): a short fit that every edit retrains needs less noise.
        # The edit mode is decided once, at the full-batch noise; then a few
        # rounds reach the fixed point of (sigma, length), and the final sigma
        # is computed from the final length.
        def length(sig):
            v = init_variance(sigma=sig, learning_rate=eta, lam=lam)
            k = _fit_steps(fit_recipe, loss=loss, n_classes=n_classes,
                           target_bound=target_bound, lam=lam, beta=beta, p=p, v0=v,
                           sigma=sig, eta=eta, h=h_typ, G=G, c=c)
            # A recipe of 0 steps means the privacy noise alone already exceeds
            # the utility target: the model would be the initial draw, pure
            # noise. Run one relaxation time 1/ln(1/c) instead, and say why.
            if k == 0:
                return _fit_epochs(max(1, int(math.ceil(1.0 / -math.log(c)))),
                                   fit_steps, E), True
            return _fit_epochs(k, fit_steps, E), False

        epochs, noise_dominated = length(sigma_fb)
        mode = _edit_mode(E=E, epochs=epochs, eta=eta, lam=lam, beta=beta, S=S, N=N,
                          rho=rho_target, rho_dd=rho_dd, c=c, relation=relation,
                          min_edit_epochs=min_edit_epochs, weight=weight,
                          sigma_fb=sigma_fb)
        factor_args = dict(mode=mode, E=E, eta=eta, lam=lam, beta=beta, S=S, N=N,
                           rho=rho_target, c=c, min_edit_epochs=min_edit_epochs,
                           weight=weight, sigma_fb=sigma_fb)
        F_new = _noise_factor(epochs=epochs, **factor_args)
        for _ in range(6):
            new_epochs, noise_dominated = length(sigma_fb * math.sqrt(F_new))
            if new_epochs == epochs:
                break
            epochs = new_epochs
            F_new = _noise_factor(epochs=epochs, **factor_args)
        F = F_new
        sigma = sigma_fb * math.sqrt(F)
        v0 = init_variance(sigma=sigma, learning_rate=eta, lam=lam)
        k_fit = epochs * E
        r_inf = rho_inf(sensitivity=S, normaliser=N, learning_rate=eta, sigma=sigma,
                        contraction=c)
        # Planned for the costlier kind of edit (a replacement); deletions alone
        # need fewer steps (deletion_factor), decided per edit.
        k_priv = steps_unlearn_privacy(
            rho_inf=r_inf * deletion_factor(plan_relation=relation, n_replaced=1),
            rho_target=rho_dd, contraction=c)
        k_util = steps_unlearn_utility(edit_size=r, sensitivity=S, group_size=g,
                                       normaliser=N, lam=lam, beta=beta, sigma=sigma,
                                       n_params=p, contraction=c)
    if recipe == "cs23":
        noise_dominated = k_fit == 0
        epochs = _fit_epochs(k_fit if k_fit else 1, fit_steps, 1)
        min_edit_epochs, mode = 1, "continue"
    return TrainingPlan(
        loss=loss, recipe=recipe, relation=relation, group_size=g,
        conversion=conversion, epsilon=epsilon, delta=delta,
        deletion_epsilon=deletion_epsilon, rho_target=rho_target,
        rho_deletion_target=rho_dd, row_norm=float(row_norm),
        clip_norm=None if clip_norm is None else float(clip_norm), gradient_bound=G,
        sensitivity=S, lam=lam, beta=beta, learning_rate=eta, contraction=c,
        sigma=sigma, init_variance=v0, normaliser=N, n_params=p, max_edit_size=r,
        rho_inf=r_inf, fit_steps=epochs * E, noise_dominated=noise_dominated,
        unlearn_steps_privacy=k_priv, unlearn_steps_utility=k_util, n_batches=E,
        fit_epochs=epochs, fit_data_weight=weight, noise_factor=F,
        typical_curvature=h_typ, fit_recipe=fit_recipe,
        min_edit_epochs=min_edit_epochs, edit_mode=mode,
    )


def deletion_factor(*, plan_relation, n_replaced):
    """Ratio of the deletion figure's ``S^2`` to the DP figure's (Section 6.2).

    A deleted unit is compared with the same pipeline in which its slot held the
    null record from the start (zero gradient): the drift difference is at most
    ``g G``, a quarter of the replace-one ``(2 g G)^2`` in Rényi terms. A replaced
    unit is compared with its replacement in the slot from the start:
    ``2 g G`` whatever the DP relation.
    """
    del_factor = 2.0 if n_replaced > 0 else 1.0
    dp_factor = 2.0 if plan_relation == "replace" else 1.0
    return (del_factor / dp_factor) ** 2


@dataclass(frozen=True, slots=True)
class EditPlan:
    """How one edit is served: ``steps`` noisy steps from the current model, or
    (``retrained``) a fresh start on the edited data. Public numbers only."""

    steps: int
    retrained: bool
    data_weight: float
    n_batches: int = 1


def _segments(plan, guarantee):
    """The public history of the current model since its last (re)training, as
    :class:`Segment` objects (with one batch a segment's epochs are its steps)."""
    chain = [plan.segment(plan.n_batches, guarantee.fit_steps,
                          guarantee.fit_data_weight)]
    for cert in guarantee.edits:
        chain = [_cert_segment(plan, cert)] if cert.retrained else \
            chain + [_cert_segment(plan, cert)]
    return chain


def _cert_segment(plan, cert):
    return plan.segment(cert.n_batches, cert.steps, cert.data_weight)


def _full_batch_contraction(plan, guarantee, data_weight):
    """Worst contraction over the history (uniformisation, Section 5.3)."""
    weights = [guarantee.fit_data_weight] + [e.data_weight for e in guarantee.edits]
    weights.append(data_weight)
    return max(contraction(learning_rate=plan.learning_rate, lam=plan.lam,
                           beta=plan.beta, data_weight=w) for w in weights)


def _check_contracts(plan, data_weight):
    c = contraction(learning_rate=plan.learning_rate, lam=plan.lam, beta=plan.beta,
                    data_weight=data_weight)
    return c < 1.0


def plan_unlearning(plan, previous, *, n_samples, edit_size=None, n_deleted=None,
                    n_replaced=0, n_inserted=0, steps=None):
    """How to serve one edit (privacy-accounting.md, Sections 7 and 12.5).

    The continuation runs the fewest noisy steps (whole passes with several
    batches, at least ``plan.min_edit_epochs``) after which the removed units'
    deletion figure is at most the target (eq. 5.5, or Section 12.5) and the DP
    figure of the units present at most the plan's target, and at least the
    utility count ``K_R^util`` (Lemma 8.3). When training afresh on the edited
    data takes no more passes than that, or the plan's ``edit_mode`` is
    ``"retrain"`` (its noise covers the fit alone), the edit is served by
    retraining instead: the removed units then have no influence at all.

    Parameters
    ----------
    plan : TrainingPlan
    previous : PrivacyGuarantee
        Guarantee of the model the edit starts from.
    n_samples : int
        Size of the edited database.
    edit_size : int, default=None
        Rows the edit names; with ``n_deleted`` None they are all counted as
        deletions (the planning default).
    n_deleted, n_replaced, n_inserted : int
        Composition of the edit.
    steps : int or None
        Override: run exactly this many steps (passes with several batches) of
        continuation; the guarantee is then computed from what is run.

    Returns
    -------
    edit : EditPlan
    """
    n = check_int(n_samples, "n_samples", low=0)
    if n_deleted is None:
        n_deleted = check_int(edit_size if edit_size is not None else 0,
                              "edit_size", low=0)
    n_del = check_int(n_deleted, "n_deleted", low=0)
    n_rep = check_int(n_replaced, "n_replaced", low=0)
    check_int(n_inserted, "n_inserted", low=0)
    E = edit_batches(n, plan.n_batches, plan.normaliser)
    weight = plan.data_weight(n, E)
    if not _check_contracts(plan, weight):
        raise ValueError(
            f"an edit leaving {n} rows is too large for a model fitted on "
            f"{plan.normaliser}: its batches would hold {weight:.3g} times the batch "
            f"normaliser and noisy gradient descent with learning_rate="
            f"{plan.learning_rate:.4g} no longer contracts (privacy-accounting.md, "
            "Section 10.1). Fit a new model on the edited data.")
    if steps is not None:
        return EditPlan(steps=check_int(steps, "steps", low=0) * E, retrained=False,
                        data_weight=weight, n_batches=E)
    if plan.edit_mode == "retrain":
        # The noise was calibrated for the fit alone (Section 12.6): every edit
        # trains afresh, which also costs no more passes than unlearning would.
        return _retrain_plan(plan, previous, n, E, weight)
    removed = n_del + n_rep
    try:
        if E == 1:
            k = _full_batch_unlearn_steps(plan, previous, n, weight, removed, n_rep)
        else:
            k = _cyclic_unlearn_epochs(plan, previous, E, weight, removed, n_rep) * E
    except _NoContinuation:
        # No continuation meets the deletion target: retraining does (its
        # deletion figure is 0).
        return _retrain_plan(plan, previous, n, E, weight)
    edit = EditPlan(steps=k, retrained=False, data_weight=weight, n_batches=E)
    if plan.recipe != "cs23" and plan.fit_epochs * E <= k:
        return _retrain_plan(plan, previous, n, E, weight)
    # The records present must stay within the DP target too: the calibration
    # covers the histories of Section 12.6, and a database grown past the
    # step size's headroom (full batch) or an unusual history may not be
    # among them (Section 12.7).
    if _rho_after(plan, previous, edit)[0] > plan.rho_target * (1 + 1e-9):
        return _retrain_plan(plan, previous, n, E, weight)
    return edit


def _retrain_plan(plan, previous, n, E, weight):
    """Serve an edit by training afresh on the ``n`` edited rows (Section 12.7).

    The fit's number of passes when its DP figure on the edited database is
    within the target; else the largest number of passes that is (a database
    grown past the step size's headroom contracts more slowly); a ValueError
    when even the shortest fresh run is over the target.
    """
    low = 1 if E == 1 else 2

    def run(passes):
        return EditPlan(steps=passes * E, retrained=True, data_weight=weight,
                        n_batches=E)

    def within(passes):
        return _rho_after(plan, previous, run(passes))[0] <= \
            plan.rho_target * (1 + 1e-9)

    hi = max(low, plan.fit_epochs)
    if within(hi):
        return run(hi)
    if not within(low):
        raise ValueError(
            f"an edit leaving {n} rows cannot be served within the privacy target: "
            f"the database has grown to {weight:.3g} times what a batch of the fit "
            "held, and even a short fresh run on it would exceed epsilon="
            f"{plan.epsilon:g} (privacy-accounting.md, Section 12.7). Fit a new "
            "model on the edited data.")
    return run(_last_true(within, low, hi))


def _last_true(pred, lo, hi):
    """Largest ``m`` in ``[lo, hi)`` with ``pred(m)`` for a predicate that is
    true at ``lo``, false at ``hi`` and monotone in between (bisection)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _edit_contraction(plan, previous, data_weight, retrained, n_batches):
    """Contraction the accountant uses for the history after an edit: the
    plan's with several batches (every batch within the headroom), else the
    worst over the history (Section 5.3), or over the fresh run alone."""
    if n_batches != 1:
        return plan.contraction
    if retrained:
        return max(plan.contraction, contraction(
            learning_rate=plan.learning_rate, lam=plan.lam, beta=plan.beta,
            data_weight=data_weight))
    return _full_batch_contraction(plan, previous, data_weight)


def _history_after(plan, previous, edit):
    """The public history after serving ``edit`` (the segments since the last
    (re)training) and the contraction the accountant uses for it."""
    segment = plan.segment(edit.n_batches, edit.steps, edit.data_weight)
    chain = [segment] if edit.retrained else _segments(plan, previous) + [segment]
    c_bar = _edit_contraction(plan, previous, edit.data_weight, edit.retrained,
                              edit.n_batches)
    return chain, c_bar


def _rho_after(plan, previous, edit):
    """``(rho, rho_inf)`` of the records present after serving ``edit``."""
    return _rho_present(plan, *_history_after(plan, previous, edit))


class _NoContinuation(Exception):
    """No number of continuation passes meets the targets."""


def _full_batch_unlearn_steps(plan, previous, n, weight, removed, n_replaced):
    c_bar = _full_batch_contraction(plan, previous, weight)
    r_inf = rho_inf(sensitivity=plan.sensitivity, normaliser=plan.normaliser,
                    learning_rate=plan.learning_rate, sigma=plan.sigma,
                    contraction=c_bar)
    factor = deletion_factor(plan_relation=plan.relation, n_replaced=n_replaced)
    k_priv = steps_unlearn_privacy(rho_inf=r_inf * factor,
                                   rho_target=plan.rho_deletion_target,
                                   contraction=c_bar) if removed else 0
    if plan.recipe == "cs23":
        return max(k_priv, plan.unlearn_steps_privacy, plan.unlearn_steps_utility)
    k_util = steps_unlearn_utility(
        edit_size=max(removed, 1), sensitivity=plan.sensitivity,
        group_size=plan.group_size, normaliser=plan.normaliser, lam=plan.lam,
        beta=plan.beta, sigma=plan.sigma, n_params=plan.n_params, contraction=c_bar)
    return max(k_priv, k_util, 1)


def _cyclic_unlearn_epochs(plan, previous, E, weight, removed, n_replaced):
    history = _segments(plan, previous)
    eta = plan.learning_rate
    common = dict(lam=plan.lam, beta=plan.beta, sigma=plan.sigma,
                  normaliser=plan.normaliser)
    s_del = plan.sensitivity * math.sqrt(
        deletion_factor(plan_relation=plan.relation, n_replaced=n_replaced))

    # Only the deletion figure decides the length: it falls as the edit gets
    # longer (more noise after the removed unit's last use), whereas the DP
    # figure of the units present need not be monotone in it, so it is
    # checked once, on the length found (plan_unlearning).
    def ok(m):
        hist = history + [plan.segment(E, m * E, weight)]
        return rho_cyclic_removed(hist, len(history), sensitivity=s_del,
                                  **common) <= plan.rho_deletion_target

    lo = plan.min_edit_epochs
    if not removed or ok(lo):
        return lo
    # Beyond a hundred relaxation times the shift of a removed unit is below
    # exp(-200) of its start: no target is out of reach unless the plan is
    # inconsistent.
    limit = max(lo, int(math.ceil(100.0 / (E * eta * plan.lam))))
    hi = lo * 2
    while not ok(hi):
        if hi >= limit:
            raise _NoContinuation
        hi = min(hi * 2, limit)
    return _last_true(lambda m: not ok(m), lo, hi) + 1


def _dp_fields(plan, rho, rho_inf_value):
    eps = rho_to_epsilon(rho=rho, delta=plan.delta, method=plan.conversion)
    order = optimal_order(rho=rho, delta=plan.delta, method=plan.conversion) \
        if rho > 0 else math.inf
    return {"epsilon": eps, "rho": rho, "rho_inf": rho_inf_value, "order": order}


def _rho_present(plan, chain, c_bar):
    """DP figure of the units present after ``chain`` (Sections 6.1 and 12.4)."""
    if plan.n_batches == 1:
        r_inf = rho_inf(sensitivity=plan.sensitivity, normaliser=plan.normaliser,
                        learning_rate=plan.learning_rate, sigma=plan.sigma,
                        contraction=c_bar)
        total = sum(s.steps for s in chain)
        return rho_dp(rho_inf=r_inf, contraction=c_bar, steps=total), r_inf
    rho = rho_cyclic_present(chain, lam=plan.lam, beta=plan.beta, sigma=plan.sigma,
                             sensitivity=plan.sensitivity, normaliser=plan.normaliser)
    r_inf = rho_inf(sensitivity=plan.sensitivity, normaliser=plan.normaliser,
                    learning_rate=plan.learning_rate, sigma=plan.sigma,
                    contraction=plan.contraction) * plan.noise_factor
    return rho, max(r_inf, rho)


def guarantee_after_fit(plan, *, steps, seeded, label_set_public=True,
                        target_scale_public=True):
    """Guarantee of the model released by ``fit`` after ``steps`` steps.

    Every record present: ``R_q <= q rho`` at every order, with ``rho`` from
    eq. 5.3 (one batch) or Section 12.4 (several; ``steps`` is then a whole
    number of passes), converted at the plan's delta (Section 6.4).

    Parameters
    ----------
    plan : TrainingPlan
    steps : int
        Steps actually run.
    seeded : bool
        Whether the noise came from an integer seed.
    label_set_public : bool, default=True
        False when the label set was read from the training labels.
    target_scale_public : bool, default=True
        False when no public target scale was given and the targets were read
        to decide whether to warn about their scale.

    Returns
    -------
    guarantee : PrivacyGuarantee
    """
    T = check_int(steps, "steps")
    E = plan.n_batches
    if T % E:
        raise ValueError(f"steps={T} is not a whole number of passes of {E} batches.")
    chain = [plan.segment(E, T, plan.fit_data_weight)]
    rho, r_inf = _rho_present(plan, chain, plan.contraction)
    if E == 1:
        rho = rho_dp(rho_inf=plan.rho_inf, contraction=plan.contraction, steps=T)
        r_inf = plan.rho_inf
    return PrivacyGuarantee(
        **_dp_fields(plan, rho, r_inf),
        delta=plan.delta, relation=plan.relation, group_size=plan.group_size,
        conversion=plan.conversion, target_epsilon=plan.epsilon,
        target_deletion_epsilon=plan.deletion_epsilon, noise_scale=plan.sigma,
        learning_rate=plan.learning_rate, regularization=plan.lam,
        clip_norm=plan.clip_norm, row_norm=plan.row_norm,
        gradient_bound=plan.gradient_bound, sensitivity=plan.sensitivity,
        normaliser=plan.normaliser, contraction=plan.contraction, fit_steps=T,
        total_steps=T, n_samples=plan.normaliser, edits=(), seeded=bool(seeded),
        recipe=plan.recipe, label_set_public=bool(label_set_public),
        target_scale_public=bool(target_scale_public),
        n_batches=E, fit_data_weight=plan.fit_data_weight,
        noise_factor=plan.noise_factor,
    )


def guarantee_after_edit(plan, previous, *, steps, n_samples, n_deleted, n_replaced,
                         n_inserted, seeded, retrained=False, data_weight=None,
                         n_batches=None):
    """Guarantee of the model released after one ``partial_unlearn``.

    * Records present: the DP figure of the history since the last
      (re)training (eq. 5.3 with the uniformised constants of Section 5.3 for
      one batch; Section 12.4 for several), never above the plan's target.
    * Records removed by this edit: ``rho_inf' c^(2 K_R)`` (eq. 5.5, Theorem 6.2)
      or Section 12.5, per unit, with the deletion sensitivity of
      :func:`deletion_factor` (a deleted unit against the null record, a replaced
      one against its replacement); 0 when the edit retrained from a fresh
      start. The whole edit as one unit costs ``(r/g)^2`` times more (6.2).
    * Against a requester that adapted to the ``s`` releases before the edit:
      ``rho_del + sum_t rho_dp(T_t)`` (Theorem 6.3; CS23 Theorem 4.3), the
      releases' figures at the deletion sensitivity.

    Parameters
    ----------
    plan : TrainingPlan
    previous : PrivacyGuarantee
        Guarantee of the model the edit started from.
    steps : int
        Steps actually run for the edit.
    n_samples : int
        Size of the edited database.
    n_deleted, n_replaced, n_inserted : int
        Composition of the edit.
    seeded : bool
        Whether this segment's noise came from an integer seed.
    retrained : bool, default=False
        Whether the edit retrained from a fresh start.
    data_weight : float or None
        Largest batch over the batch normaliser; None computes it from
        ``n_samples``.
    n_batches : int or None
        Batches per pass of the edit; None for :func:`edit_batches`.

    Returns
    -------
    guarantee : PrivacyGuarantee
    """
    K = check_int(steps, "steps")
    n = check_int(n_samples, "n_samples")
    n_del = check_int(n_deleted, "n_deleted")
    n_rep = check_int(n_replaced, "n_replaced")
    n_ins = check_int(n_inserted, "n_inserted")
    E = edit_batches(n, plan.n_batches, plan.normaliser) if n_batches is None \
        else check_int(n_batches, "n_batches", low=1)
    if K % E:
        raise ValueError(f"steps={K} is not a whole number of passes of {E} batches.")
    weight = plan.data_weight(n, E) if data_weight is None else float(data_weight)
    if not _check_contracts(plan, weight):
        raise ValueError(
            f"an edit leaving {n} rows is too large for a model fitted on "
            f"{plan.normaliser}: noisy gradient descent with learning_rate="
            f"{plan.learning_rate:.4g} no longer contracts (privacy-accounting.md, "
            "Section 10.1). Fit a new model on the edited data.")
    edit = EditPlan(steps=K, retrained=bool(retrained), data_weight=weight,
                    n_batches=E)
    chain, c_bar = _history_after(plan, previous, edit)
    rho, r_inf = _rho_present(plan, chain, c_bar)
    factor = deletion_factor(plan_relation=plan.relation, n_replaced=n_rep)
    removed = n_del + n_rep
    if retrained or removed == 0:
        # Retrained: the new model's law depends on the edited data only. Nothing
        # removed: there is no deletion to certify.
        r_del = 0.0
    elif E == 1:
        r_del = rho_deletion(rho_inf=r_inf * factor, contraction=c_bar, steps=K)
    else:
        # Not retrained, so the chain is the history before the edit plus the
        # edit's segment: the unit is present in all but the last.
        r_del = rho_cyclic_removed(
            chain, len(chain) - 1, lam=plan.lam, beta=plan.beta,
            sigma=plan.sigma, sensitivity=plan.sensitivity * math.sqrt(factor),
            normaliser=plan.normaliser)
    batch = r_del * group_factor(group_size=max(removed, plan.group_size)) \
        / group_factor(group_size=plan.group_size)
    # Each release the requester saw is, given the one before it, a run from a
    # common start on databases differing in the unit (Theorem 6.3).
    history = [plan.segment(plan.n_batches, previous.fit_steps,
                            previous.fit_data_weight)]
    history += [_cert_segment(plan, e) for e in previous.edits]
    releases = [_rho_present(plan, [s], c_bar)[0] * factor for s in history]
    r_adapt = rho_adaptive(rho_deletion=r_del, rho_releases=releases) if removed \
        else 0.0

    def eps(value):
        return rho_to_epsilon(rho=value, delta=plan.delta, method=plan.conversion)

    cert = EditCertificate(
        index=len(previous.edits) + 1, n_deleted=n_del, n_replaced=n_rep,
        n_inserted=n_ins, n_samples=n, steps=K, rho_deletion=r_del,
        epsilon_deletion=eps(r_del), rho_deletion_batch=batch,
        epsilon_deletion_batch=eps(batch), releases_seen=len(history),
        rho_adaptive=r_adapt, epsilon_adaptive=eps(r_adapt),
        retrained=bool(retrained), data_weight=weight, n_batches=E,
    )
    fields = {f: getattr(previous, f) for f in PrivacyGuarantee.__dataclass_fields__}
    fields.update(_dp_fields(plan, rho, r_inf))
    total = sum(s.steps for s in chain)
    fields.update(contraction=c_bar, total_steps=total, n_samples=n,
                  edits=previous.edits + (cert,),
                  seeded=previous.seeded or bool(seeded))
    return PrivacyGuarantee(**fields)
