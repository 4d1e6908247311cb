# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Calibration: the public numbers a plan is made of, as pure functions.

The default delta, the typical curvature and the initial error that size the
fit (privacy-accounting.md, Section 8.4), the batch counts and batch weights of
the cyclic schedule (Section 12.1 and 12.6), the noise factor that puts the
worst planned history at the target (Section 12.6), and the deletion factor of
Section 6.2. No plan object and no guarantee: :mod:`skforget.accounting._plan`
assembles these into a :class:`TrainingPlan`.
"""

import math

from skforget.accounting._checks import (
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
)
from skforget.accounting._cyclic import Segment, rho_cyclic_present
from skforget.accounting._noisy_gd import (
    LOSS_CURVATURE,
    rho_dp,
    rho_inf,
)
from skforget.accounting._recipes import (
    noise_scale,
    steps_fit,
    steps_unlearn_privacy,
)

#: Epochs per relaxation time ``1 / (eta lam)`` when the batch count is chosen
#: automatically: the noise factor of the cyclic schedule is then about
#: ``1 + 0.9 / 10`` (Section 12.6, Table 12.1) and a deletion takes about
#: ``10 * ln(rho_inf / rho_dd) / 2`` passes.
EPOCHS_PER_RELAXATION = 10
#: Smallest batch the automatic choice makes: below it the per-step work on
#: the parameters (noise, shrinkage) stops being small next to the rows'.
MIN_BATCH = 64
#: Most passes the fit's floor of one relaxation time may ask for (Section
#: 8.4): a bound on the time of a fit whose regulariser is very weak.
MAX_RELAXATION_EPOCHS = 25
#: The default step size leaves this much room for batches to grow (insertions,
#: rounding of batch sizes) before the contraction factor exceeds ``1 - eta lam``.
GROWTH_HEADROOM = 1.1
#: Largest share of the database that may be deleted without a pass over the
#: data (Section 12.9): on small databases the noise rule alone would let a
#: large part of the rows go without the model seeing the change.
LAZY_SHARE = 0.01


def default_delta(*, n_samples):
    """Default delta ``min(1e-5, n ** -1.1)`` (privacy-accounting.md, 10.5).

    Delta must be well below ``1/n``: a mechanism that publishes one random record
    is (0, 1/n)-DP.

    Parameters
    ----------
    n_samples : int
        Number of records ``n``.

    Returns
    -------
    delta : float

    Examples
    --------
    >>> from skforget.accounting import default_delta
    >>> default_delta(n_samples=100)
    1e-05
    """
    n = check_int(n_samples, "n_samples", low=1)
    return min(1e-5, float(n) ** -1.1)


def resolve_delta(delta, *, n_samples):
    """A ``delta`` parameter's value: ``"auto"`` is :func:`default_delta` at
    ``n_samples`` (public), a number is taken as given.

    Parameters
    ----------
    delta : float or "auto"
    n_samples : int
        Number of records ``n``.

    Returns
    -------
    delta : float

    Examples
    --------
    >>> from skforget.accounting import resolve_delta
    >>> resolve_delta("auto", n_samples=100), resolve_delta(1e-6, n_samples=100)
    (1e-05, 1e-06)
    """
    return default_delta(n_samples=n_samples) if delta == "auto" else float(delta)


def typical_curvature(*, loss, data_norm, n_features, n_classes=2):
    """Public stand-in for the data's curvature: ``h_phi R_x^2 / d``.

    The mean eigenvalue of the loss's curvature-weighted second moment of rows
    on the ``data_norm`` sphere in ``d`` dimensions, at ``theta = 0``
    (privacy-accounting.md, Section 8.4): ``h_phi`` is the mean eigenvalue of
    the loss's curvature in its outputs there, ``1/4`` for each logistic
    output, ``1`` for the squared loss and, for the softmax over ``C``
    classes, ``(1 - 1/C) / C`` (the trace ``1 - sum p_k^2`` of ``diag(p) -
    p p^T`` at uniform ``p``, over its ``C`` outputs), not its largest
    eigenvalue ``1/2``. It sets how many steps the fit plans, never a privacy
    figure.

    Examples
    --------
    >>> from skforget.accounting._calibration import typical_curvature
    >>> typical_curvature(loss="logistic", data_norm=1.0, n_features=100)
    0.0025
    >>> round(typical_curvature(loss="multinomial", data_norm=1.0, n_features=100,
    ...                         n_classes=10), 6)
    0.0009
    """
    check_choice(loss, "loss", LOSS_CURVATURE)
    R = check_positive(data_norm, "data_norm")
    d = check_int(n_features, "n_features", low=1)
    if loss == "multinomial":
        C = check_int(n_classes, "n_classes", low=2)
        return (1.0 - 1.0 / C) / C * R * R / d
    return LOSS_CURVATURE[loss] * R * R / d


def curvature_trace(*, loss, row_norm, n_classes=2):
    """Public bound ``T`` on the trace of the data loss's Hessian per record.

    ``n_out h_phi R^2`` at ``theta = 0``, where the logistic curvature is
    largest: ``R^2 / 4`` for the binary logistic loss, ``C R^2 / 4`` for
    one-vs-rest, ``(1 - 1/C) R^2`` for the softmax over ``C`` classes (the
    trace of ``diag(p) - p p^T`` at uniform ``p``), ``R^2`` for the squared
    loss; ``R`` bounds ``||[x, s_b]||``. It caps the number of directions the
    data curve more than ``lambda``, ``T / lambda``, which the default
    regularisation counts (privacy-accounting.md, Section 8.5).

    Examples
    --------
    >>> from skforget.accounting._calibration import curvature_trace
    >>> curvature_trace(loss="logistic", row_norm=1.0)
    0.25
    >>> round(curvature_trace(loss="multinomial", row_norm=1.0, n_classes=10), 6)
    0.9
    """
    h = typical_curvature(loss=loss, data_norm=row_norm, n_features=1,
                          n_classes=n_classes)
    return n_outputs(loss, n_classes) * h


def initial_error(*, loss, n_classes=2, target_bound=1.0):
    """Bound on ``F(0) - min F`` of the clipped surrogate loss, per record.

    At ``theta = 0`` every logistic output is at ``log 2`` and the surrogate
    loss decreases by at most that much (its slope is the clamped one); the
    softmax is at ``log C``; one-vs-rest sums ``C`` binary losses; the squared
    loss is at ``y^2 / 2 <= Y^2 / 2`` for targets bounded by ``Y``
    (privacy-accounting.md, Section 8.4).

    Examples
    --------
    >>> from skforget.accounting._calibration import initial_error
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
    >>> from skforget.accounting._calibration import steps_fit_typical
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
    >>> from skforget.accounting._calibration import auto_batches
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
    >>> from skforget.accounting._calibration import batch_data_weight
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


def _fit_steps(fit_recipe, *, loss, n_classes, target_bound, lam, beta, p, v0, sigma,
               eta, h, G, c):
    """The fit's steps for the given noise (Section 7 step 5, or 8.4); 0 when the
    privacy noise alone exceeds the utility target (the data cannot improve on
    the noise: the caller then runs one relaxation time and says so)."""
    if fit_recipe == "typical":
        # Stop when the bias of an unfinished fit reaches the noise's Gibbs
        # level in the directions the model's metric counts (Section 8.4).
        # err_0 from theta = 0 plus the initial draw's (M / 2) p v_0.
        target = 0.5 * utility_directions(loss, n_classes, p) * sigma**2
        data_error = initial_error(loss=loss, n_classes=n_classes,
                                   target_bound=target_bound)
        if data_error <= target:
            return 0
        err0 = data_error + 0.5 * (lam + beta) * p * v0
        return steps_fit_typical(init_error=err0, target=target, learning_rate=eta,
                                 lam=lam, curvature=h)
    return steps_fit(gradient_bound=G, lam=lam, n_params=p, init_variance=v0,
                     sigma=sigma, contraction=c)


def output_noise_dominates(*, loss, n_classes, target_bound, sigma, row_norm):
    """Whether an output-perturbation release is mostly noise, from public
    numbers: the noise alone changes a score on a row of the ball by
    ``sigma * row_norm`` (its standard deviation), and half its square reaches
    :func:`initial_error`, the most the data can lower the loss from 0
    (privacy-accounting.md, Section 15.6; noisy GD's rule compares the same
    error with its noise's Gibbs level, Section 8.4). For the squared loss:
    the noise moves a prediction by the targets' bound or more.

    Examples
    --------
    >>> from skforget.accounting._calibration import output_noise_dominates
    >>> kw = dict(loss="squared", n_classes=2, target_bound=1.0, row_norm=2**0.5)
    >>> [output_noise_dominates(sigma=s, **kw) for s in (0.75, 0.2)]
    [True, False]
    """
    error = initial_error(loss=loss, n_classes=n_classes, target_bound=target_bound)
    # Compared without the square, which overflowed to an OverflowError for a
    # huge sigma (clip_norm=1e300, a trial); sigma * row_norm may be inf.
    return sigma * row_norm >= math.sqrt(2.0 * error)


def utility_directions(loss, n_classes, n_params):
    """Directions whose noise the typical fit's length is set against
    (Section 8.4): a classifier's output scores, one per class (binary: one),
    since the bias of an unfinished fit lies along them and moves every
    decision the same way, while the noise spreads over all coefficients; for
    the squared loss every coefficient, since its metric is the risk itself,
    to which the noise of every coefficient adds as the bias does.

    Examples
    --------
    >>> from skforget.accounting._calibration import utility_directions
    >>> utility_directions("multinomial", 10, 650), utility_directions("squared", 2, 24)
    (10, 24)
    """
    return int(n_params) if loss == "squared" else n_outputs(loss, n_classes)


def n_outputs(loss, n_classes):
    """Scores a model of this loss releases per row: one per class for the
    softmax and one-vs-rest, else one (binary logistic, squared loss)."""
    return int(n_classes) if loss in ("multinomial", "ovr") else 1


def relaxation_passes(n_batches, learning_rate, lam):
    """Passes per relaxation time ``1 / (eta lam)`` of the regulariser, with
    ``n_batches`` steps a pass: ``1 / (E eta lam)`` (Sections 8.4 and 12.6)."""
    return 1.0 / (n_batches * learning_rate * lam)


def _fit_epochs(k_fit, fit_steps, E, *, relaxation_epochs):
    """Whole passes for ``k_fit`` steps, or the user's ``fit_steps``.

    With several batches, at least one relaxation time of the regulariser
    (``relaxation_epochs = 1 / (E eta lam)`` passes; 0 for the squared loss,
    whose floor is the ramp's 2 passes, Section 8.4), at most
    ``MAX_RELAXATION_EPOCHS`` and never under 2 (the ramp epoch and one before
    it): directions flatter than the typical curvature converge only at the
    regulariser's rate (Section 8.4). ``auto_batches`` makes that about
    ``EPOCHS_PER_RELAXATION`` passes, more when batches reach their minimum
    size, as at large epsilon, where the regulariser is weak and the
    optimiser, not the noise, limits the model."""
    if fit_steps is not None:
        return check_int(fit_steps, "fit_steps", low=1)
    if E == 1:
        return max(1, k_fit)
    floor = max(2, min(MAX_RELAXATION_EPOCHS, int(math.ceil(relaxation_epochs))))
    return max(floor, int(math.ceil(k_fit / E)))


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
    relax = relaxation_passes(E, eta, lam)
    # Deletion passes at the full-batch rate (Section 12.5: within a few % of it).
    deletion = math.log(max(1.0, rho * factor / rho_dd)) / (2.0 * E * eta * lam)
    return "retrain" if epochs <= max(min_edit_epochs, deletion, relax) else \
        "continue"


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
    relax = relaxation_passes(E, eta, lam)
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


def deletion_factor(*, plan_relation, n_replaced):
    """Ratio of the deletion figure's ``S^2`` to the DP figure's (Section 6.2).

    A deleted unit is compared with the same pipeline in which its slot held the
    null record from the start (zero gradient): the drift difference is at most
    ``g G``, a quarter of the replace-one ``(2 g G)^2`` in Rényi terms. A replaced
    unit is compared with its replacement in the slot from the start:
    ``2 g G`` whatever the DP relation.

    Parameters
    ----------
    plan_relation : {"replace", "zero_out"}
        Neighbouring relation of the DP figure.
    n_replaced : int
        Units the edit replaces (0: deletions only).

    Returns
    -------
    factor : float
    """
    del_factor = 2.0 if n_replaced > 0 else 1.0
    dp_factor = 2.0 if plan_relation == "replace" else 1.0
    return (del_factor / dp_factor) ** 2


def deletion_rho_between_records(rho_deletion, rho_before=None):
    """Rho bounding two runs whose deleted unit's slot held two different units
    before the same deletion (privacy-accounting.md, Section 6.2, "Two
    records deleted"): Theorem 6.2's argument with the drift difference
    ``2 g G`` in place of ``g G``, four times the per-unit deletion figure
    ``rho_deletion`` (measured against the null record); class statistics a
    deletion served without a pass keeps grow by a factor 2 (counts, Lemma
    18.1; counts and class sums, Lemma 18.12) or ``5/3`` (class moments,
    Lemma 18.16), under four. Under the replace-one relation the two runs are
    neighbours up to the edit, which post-processes that release on identical
    records: ``rho_before``, the DP figure of the release just before the
    edit, bounds them too, and the smaller of the two is returned. What an
    audit whose stand-in is another record (``reference="replace"``) must stay
    below.

    Parameters
    ----------
    rho_deletion : float
        The edit's per-unit deletion figure (``EditCertificate.rho_deletion``).
    rho_before : float, default=None
        Under ``relation="replace"`` only: the guarantee's ``rho`` before the
        edit. None: not used.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import deletion_rho_between_records
    >>> deletion_rho_between_records(0.01)
    0.04
    >>> deletion_rho_between_records(0.01, rho_before=0.0359)
    0.0359
    """
    rho = 4.0 * check_nonnegative(rho_deletion, "rho_deletion")
    if rho_before is not None:
        rho = min(rho, check_nonnegative(rho_before, "rho_before"))
    return rho


def lazy_records_limit(*, normaliser, lam, n_params, init_variance, gradient_bound):
    """Records an estimator may remove without a pass over the data (Section 12.9).

    Removing ``r`` records of clipped gradient at most ``G`` moves the
    regularised minimiser by at most ``r G / (N lam)`` (Lemma 8.3); the model
    already carries privacy noise of norm about ``sqrt(p v_0)``. Deletions are
    served without a pass while the records removed since the last pass stay
    within ``r_lazy = floor(N lam sqrt(p v_0) / G)`` and 1% of ``N`` (eq.
    12.5'): a sizing rule from public numbers, not a certified statement.

    Examples
    --------
    >>> from skforget.accounting._calibration import lazy_records_limit
    >>> lazy_records_limit(normaliser=200_000, lam=1e-4, n_params=101,
    ...                    init_variance=1.4e-2, gradient_bound=0.5)
    47
    >>> lazy_records_limit(normaliser=60, lam=0.1, n_params=5,
    ...                    init_variance=1.0, gradient_bound=0.5)
    0
    """
    N = check_positive(normaliser, "normaliser")
    lam = check_positive(lam, "lam")
    p = check_int(n_params, "n_params", low=1)
    v0 = check_positive(init_variance, "init_variance")
    G = check_positive(gradient_bound, "gradient_bound")
    return int(min(math.floor(N * lam * math.sqrt(p * v0) / G),
                   math.floor(LAZY_SHARE * N)))
