# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""From privacy targets to a training plan, and from a plan to an edit's plan.

:func:`plan_training` turns the user's targets into the batch count, ``sigma``,
``eta`` and the fit's passes (privacy-accounting.md, Sections 7 and 12);
:func:`plan_unlearning` sizes one edit (unlearning steps, or a fresh retraining
when that is no dearer). The numbers they are built from are in
:mod:`skforget.accounting._calibration`; what a run earns is stated by
:mod:`skforget.accounting._history`. The estimators reach the
mathematics through these two modules, and also read the bounds of
:mod:`skforget.accounting._noisy_gd` directly (sensitivity, smoothness and
gradient bounds for the row map and the certificates).

With one batch per pass (``n_batches=1``) the run is the source paper's
full-batch noisy gradient descent and every figure has the closed forms
(5.2)-(5.5); with several batches the figures come from the exact shift-schedule
bound of Section 12 (:mod:`skforget.accounting._cyclic`).
"""

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

from skforget.accounting._calibration import (
    GROWTH_HEADROOM,
    _edit_mode,
    _fit_epochs,
    _fit_steps,
    _noise_factor,
    auto_batches,
    batch_data_weight,
    deletion_factor,
    edit_batches,
    lazy_records_limit,
    typical_curvature,
)
from skforget.accounting._checks import (
    check_choice,
    check_int,
    check_positive,
    check_probability,
)
from skforget.accounting._conversions import (
    CONVERSIONS,
    epsilon_to_rho,
)
from skforget.accounting._cyclic import (
    Segment,
    rho_cyclic_present,
    rho_cyclic_removed,
)
from skforget.accounting._noisy_gd import (
    check_learning_rate,
    contraction,
    gradient_bound,
    max_learning_rate,
    rho_dp,
    rho_inf,
    sensitivity,
    smoothness,
)
from skforget.accounting._prevalence import count_deletion_factor
from skforget.accounting._runs import (
    MIN_EDIT_RELAXATIONS,
    _Run,
    _check_batches_contract,
    _cs23_run,
    _tight_run,
)
from skforget.accounting._recipes import (
    cs23_recipe,
    init_variance,
    noise_scale,
    steps_unlearn_privacy,
    steps_unlearn_utility,
)

RECIPES = ("tight", "cs23")


def dp_conversion(*, recipe):
    """The conversion of the DP figure of the records present for a recipe.

    ``"gaussian"`` for ``recipe="tight"``: its figures are ``sqrt(2 rho)``-GDP
    (privacy-accounting.md, Section 21, Corollaries 21.4 and 21.5), so the exact
    Gaussian profile converts them and calibrates the noise and the edits.
    ``"improved"`` for ``recipe="cs23"``, planned by the source paper's Rényi
    theorem (21.4).

    Parameters
    ----------
    recipe : {"tight", "cs23"}

    Returns
    -------
    conversion : str

    Examples
    --------
    >>> from skforget.accounting import dp_conversion
    >>> dp_conversion(recipe="tight")
    'gaussian'
    """
    check_choice(recipe, "recipe", RECIPES)
    return "gaussian" if recipe == "tight" else "improved"
FIT_RECIPES = ("typical", "worst_case")



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
    def lazy_records(self):
        """Records the model may remove without a pass (eq. 12.5')."""
        return lazy_records_limit(normaliser=self.normaliser, lam=self.lam,
                                  n_params=self.n_params,
                                  init_variance=self.init_variance,
                                  gradient_bound=self.gradient_bound)

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


def plan_training(*, loss, n_samples, n_params, lam, row_norm, clip_norm, epsilon,
                  delta, deletion_epsilon, max_edit_size=1, relation="replace",
                  group_size=1, learning_rate=None, recipe="tight",
                  conversion="auto", fit_steps=None, n_classes=2, n_batches=1,
                  fit_recipe="worst_case", n_features=None, data_norm=None,
                  target_bound=1.0):
    """Plan a private training run from public numbers and privacy targets.

    privacy-accounting.md, Sections 7 and 12: the (epsilon, delta) targets become
    rho-coefficients (by the exact Gaussian profile for ``recipe="tight"``,
    privacy-accounting.md, Section 21; by the improved Rényi conversion of
    Section 6.4 for ``recipe="cs23"``); then
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
    conversion : {"auto", "gaussian", "improved", "classic"}, default="auto"
        Conversion of both targets and of every figure of the model.
        ``"auto"`` is :func:`dp_conversion` of the recipe. ``"gaussian"`` is
        refused with ``recipe="cs23"`` (Section 21.4).
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
    (539, 107)
    """
    check_choice(recipe, "recipe", RECIPES)
    check_choice(conversion, "conversion", ("auto",) + CONVERSIONS)
    if conversion == "auto":
        conversion = dp_conversion(recipe=recipe)
    if conversion == "gaussian" and recipe == "cs23":
        raise ValueError(
            "conversion='gaussian' needs recipe='tight': the cs23 recipe is "
            "planned by a Rényi theorem (privacy-accounting.md, Section 21.4).")
    if recipe == "cs23" and group_size != 1:
        # The paper's recipe calibrates for one record: a group's figure
        # would exceed the target (epsilon 1.42 at group_size=2, a reading
        # of session 13), so it is refused rather than reported above it.
        raise ValueError(
            f"recipe='cs23' is the source paper's single-record recipe; "
            f"group_size={group_size!r} needs recipe='tight', which calibrates "
            "the noise for the group.")
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
    # Deletion figures are sqrt(2 rho)-GDP too (Corollary 21.5).
    rho_dd = epsilon_to_rho(epsilon=deletion_epsilon, delta=delta, method=conversion)
    h_typ = 0.0
    if fit_recipe == "typical":
        if n_features is None or data_norm is None:
            raise ValueError("fit_recipe='typical' needs n_features and data_norm.")
        h_typ = typical_curvature(loss=loss, data_norm=data_norm,
                                  n_features=n_features, n_classes=n_classes)

    if recipe == "cs23":
        run = _cs23_run(learning_rate=learning_rate, n_batches=n_batches,
                        fit_steps=fit_steps, rho_target=rho_target, rho_dd=rho_dd,
                        G=G, S=S, lam=lam, beta=beta, N=N, p=p, r=r)
    else:
        run = _tight_run(learning_rate=learning_rate, n_batches=n_batches,
                         fit_steps=fit_steps, fit_recipe=fit_recipe, loss=loss,
                         n_classes=n_classes, target_bound=target_bound, h_typ=h_typ,
                         relation=relation, rho_target=rho_target, rho_dd=rho_dd,
                         G=G, S=S, lam=lam, beta=beta, N=N, p=p, r=r, g=g)
    E, eta, c, sigma, epochs = run.E, run.eta, run.c, run.sigma, run.epochs
    return TrainingPlan(
        loss=loss, recipe=recipe, relation=relation, group_size=g,
        conversion=conversion, epsilon=epsilon, delta=delta,
        deletion_epsilon=deletion_epsilon, rho_target=rho_target,
        rho_deletion_target=rho_dd, row_norm=float(row_norm),
        clip_norm=None if clip_norm is None else float(clip_norm), gradient_bound=G,
        sensitivity=S, lam=lam, beta=beta, learning_rate=eta, contraction=c,
        sigma=sigma, init_variance=run.v0, normaliser=N, n_params=p,
        max_edit_size=r, rho_inf=run.r_inf, fit_steps=epochs * E,
        noise_dominated=run.noise_dominated, unlearn_steps_privacy=run.k_priv,
        unlearn_steps_utility=run.k_util, n_batches=E, fit_epochs=epochs,
        fit_data_weight=run.weight, noise_factor=run.F, typical_curvature=h_typ,
        fit_recipe=fit_recipe, min_edit_epochs=run.min_edit_epochs,
        edit_mode=run.mode,
    )


@dataclass(frozen=True, slots=True)
class EditPlan:
    """How one edit is served: ``steps`` noisy steps from the current model, or
    (``retrained``) a fresh start on the edited data. Public numbers only.

    ``steps == 0`` without retraining is a certificate-only edit (Section 12.9):
    the release already meets the deletion target and no row is read."""

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
        if cert.steps == 0 and not cert.retrained:
            continue  # certificate-only: the release did not change (12.9)
        chain = [_cert_segment(plan, cert)] if cert.retrained else \
            chain + [_cert_segment(plan, cert)]
    return chain


def _removed_since(edits, drew):
    """Records removed by the latest edits, back to the last one for which
    ``drew(cert)`` holds."""
    removed = 0
    for cert in reversed(edits):
        if drew(cert):
            break
        removed += cert.n_deleted + cert.n_replaced
    return removed


def pending_removals(guarantee):
    """Records removed by the certificate-only edits since the last pass over
    the data (Section 12.9), from the public history."""
    return _removed_since(guarantee.edits, lambda c: c.steps or c.retrained)


def statistics_age(guarantee):
    """Records removed since the released class statistics were drawn: by
    the edits served without a pass that kept them (Theorem 12.12), from the
    public history. The statistics' prediction certificates are evaluated
    that many records further away (certificates.md, 9.10-9.12). Equal to
    :func:`pending_removals` except for edits saved before 12.12, which
    redrew their statistics without a pass."""
    return _removed_since(getattr(guarantee, "edits", ()),
                          lambda c: c.statistics_drawn)


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
                    n_replaced=0, n_inserted=0, steps=None, deletion_epsilon=None,
                    max_lazy_records="auto"):
    """How to serve one edit (privacy-accounting.md, Sections 7 and 12.5).

    The continuation runs the fewest noisy steps (whole passes with several
    batches, at least ``plan.min_edit_epochs``) after which the removed units'
    deletion figure is at most the target (eq. 5.5, or Section 12.5) and the DP
    figure of the units present at most the plan's target, and at least the
    utility count ``K_R^util`` (Lemma 8.3). When training afresh on the edited
    data takes no more passes than that, or the plan's ``edit_mode`` is
    ``"retrain"`` (its noise covers the fit alone), the edit is served by
    retraining instead: the removed units then have no influence at all.

    Before either, a pure deletion is served without any pass (``steps=0``,
    Section 12.9) when the current release already meets the deletion target
    for the removed units (Theorem 12.9) and the records removed without a pass
    since the last one stay within ``max_lazy_records`` (eq. 12.5').

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
    deletion_epsilon : float or None, default=None
        This edit's deletion target at the plan's delta, at most the plan's
        ``deletion_epsilon`` (only stronger per request); None: the plan's.
    max_lazy_records : "auto" or int, default="auto"
        Records that may be removed without a pass since the last one:
        ``plan.lazy_records`` (eq. 12.5'), or a count (0: every edit passes
        over the data).

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
    n_ins = check_int(n_inserted, "n_inserted", low=0)
    nominal = getattr(previous, "target_deletion_epsilon", None)
    if deletion_epsilon is not None and nominal is not None and plan.deletion_epsilon \
            < check_positive(deletion_epsilon, "deletion_epsilon") <= nominal:
        # The model's own target, which the plan caps at noisy GD's share
        # (12.12): asked by value, it is the default (an audit's finding).
        deletion_epsilon = None
    plan = _with_deletion_target(plan, deletion_epsilon)
    # A deletion served without a pass keeps the class statistics too, so its
    # figure (12.6) is held to the whole release's target, which the budget
    # split may have capped in the plan at noisy GD's share (12.12); a
    # request's own target is at most the plan's and is used as given.
    lazy_target = plan.rho_deletion_target
    if deletion_epsilon is None:
        lazy_target = max(lazy_target, epsilon_to_rho(
            epsilon=getattr(previous, "target_deletion_epsilon",
                            plan.deletion_epsilon),
            delta=plan.delta, method=plan.conversion))
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
    removed = n_del + n_rep
    lazy = _lazy_plan(plan, previous, E, weight, n_del, n_rep, n_ins,
                      max_lazy_records, lazy_target)
    if lazy is not None:
        return lazy
    if plan.edit_mode == "retrain":
        # The noise was calibrated for the fit alone (Section 12.6): every edit
        # trains afresh, which also costs no more passes than unlearning would.
        return _retrain_plan(plan, previous, n, E, weight)
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


def check_deletion_target(plan, deletion_epsilon):
    """One request's deletion target, checked against a fitted plan's: a
    positive number no larger than the target frozen at fit (Sections 12.10,
    16.1; only a stronger target per request).

    Parameters
    ----------
    plan : TrainingPlan
        The fitted model's plan.
    deletion_epsilon : float
        The request's target.

    Returns
    -------
    deletion_epsilon : float

    Examples
    --------
    >>> from skforget.accounting import check_deletion_target, plan_training
    >>> plan = plan_training(loss="logistic", n_samples=10000, n_params=21,
    ...                      lam=0.01, row_norm=2 ** 0.5, clip_norm=1.0,
    ...                      epsilon=1.0, delta=1e-5, deletion_epsilon=0.5)
    >>> check_deletion_target(plan, 0.1)
    0.1
    """
    eps = check_positive(deletion_epsilon, "deletion_epsilon")
    if eps > plan.deletion_epsilon:  # frozen at fit (16.1): only stronger (12.10)
        raise ValueError(
            f"deletion_epsilon={deletion_epsilon!r} must be <= the model's "
            f"deletion_epsilon={plan.deletion_epsilon!r}: a request may ask for "
            "only a stronger target than the one frozen at fit.")
    return eps


def _with_deletion_target(plan, deletion_epsilon):
    """The plan with one edit's deletion target (Section 12.10), checked."""
    if deletion_epsilon is None:
        return plan
    eps = check_deletion_target(plan, deletion_epsilon)
    return dataclasses.replace(
        plan, deletion_epsilon=eps,
        rho_deletion_target=epsilon_to_rho(epsilon=eps, delta=plan.delta,
                                           method=plan.conversion))


def lazy_deletion_rho(plan, previous, n_replaced=0):
    """Deletion figure of a unit removed now without a pass (eq. 12.6): the
    present units' figure of the history at the deletion sensitivity (eq.
    12.4, Theorem 12.9) plus the kept class statistics' at theirs (Theorem
    12.12; 0 for a model that releases none)."""
    chain = _segments(plan, previous)
    c_bar = plan.contraction if plan.n_batches != 1 else \
        _full_batch_contraction(plan, previous, previous.fit_data_weight)
    factor = deletion_factor(plan_relation=plan.relation, n_replaced=n_replaced)
    kept = previous.rho_counts * count_deletion_factor(
        relation=plan.relation, n_replaced=n_replaced,
        statistics=previous.class_statistics) if previous.rho_counts else 0.0
    return _rho_present(plan, chain, c_bar)[0] * factor + kept


def _lazy_plan(plan, previous, E, weight, n_del, n_rep, n_ins, max_lazy_records,
               rho_target):
    """A certificate-only plan (Section 12.9), or None when the edit must pass
    over the data: it replaces or inserts records, the paper's recipe is in
    use, too many records would then await a pass, or the release does not
    meet the deletion target."""
    if n_rep or n_ins or not n_del or plan.recipe == "cs23":
        return None
    limit = plan.lazy_records if isinstance(max_lazy_records, str) and \
        max_lazy_records == "auto" else check_int(max_lazy_records,
                                                  "max_lazy_records", low=0)
    if pending_removals(previous) + n_del > limit:
        return None
    # The relative slack of the other target checks: under "zero_out" the
    # figure (12.6) of a fit with class statistics is the DP figure itself,
    # equal to the default target up to rounding (Section 12.12, "Planning").
    if lazy_deletion_rho(plan, previous) > rho_target * (1 + 1e-9):
        return None
    return EditPlan(steps=0, retrained=False, data_weight=weight, n_batches=E)


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
    if edit.steps == 0 and not edit.retrained:
        chain = _segments(plan, previous)  # certificate-only (12.9)
    else:
        chain = [segment] if edit.retrained else \
            _segments(plan, previous) + [segment]
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


def _rho_present(plan, chain, c_bar):
    """DP figure of the units present after ``chain`` (Sections 6.1 and 12.4).

    A pure function of public numbers, remembered: a stream of edits served
    without a pass asks for the same history's figure at every request."""
    return _rho_present_cached(plan, tuple(chain), c_bar)


@functools.lru_cache(maxsize=256)
def _rho_present_cached(plan, chain, c_bar):
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


