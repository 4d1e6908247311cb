# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""From privacy targets to a training plan, and from a run to its guarantee.

These four functions are the only door between the estimators and the privacy
mathematics: :func:`plan_training` turns the user's targets into ``sigma``,
``eta``, ``K_A`` and ``K_R`` (privacy-accounting.md, Section 7);
:func:`plan_unlearning` sizes one edit; :func:`guarantee_after_fit` and
:func:`guarantee_after_edit` state what the released model satisfies, computed
from the step counts actually run (Section 6).
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
from skforget.accounting._guarantee import EditCertificate, PrivacyGuarantee
from skforget.accounting._noisy_gd import (
    check_learning_rate,
    contraction,
    cs23_recipe,
    default_learning_rate,
    gradient_bound,
    group_factor,
    init_variance,
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


@dataclass(frozen=True, slots=True)
class TrainingPlan:
    """Public constants of one private training run (privacy-accounting.md, 7).

    Produced by :func:`plan_training`; the solver runs it, the guarantee
    functions account for it. Nothing in it depends on the rows.
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

    @property
    def unlearn_steps(self):
        """``K_R = max(K_R^priv, K_R^util)`` for an edit of ``max_edit_size``."""
        return max(self.unlearn_steps_privacy, self.unlearn_steps_utility)


def plan_training(*, loss, n_samples, n_params, lam, row_norm, clip_norm, epsilon,
                  delta, deletion_epsilon, max_edit_size=1, relation="replace",
                  group_size=1, learning_rate=None, recipe="tight",
                  conversion="improved", fit_steps=None, n_classes=2):
    """Plan a private training run from public numbers and privacy targets.

    privacy-accounting.md, Section 7: the (epsilon, delta) targets become
    rho-coefficients (Section 6.4, improved conversion by default); then
    ``beta = beta_phi R^2``, ``eta = 1/(lam + beta)`` unless given,
    ``c = 1 - eta lam``, ``sigma^2 = S^2 (2 - eta lam) / (4 lam rho N^2)`` (so that
    ``rho_inf`` equals the target), ``v_0``, ``K_A`` (utility), ``K_R^priv`` (the
    deletion target, eq. 5.5) and ``K_R^util`` (Lemma 8.3). ``recipe="cs23"``
    uses the source paper's Theorem 5.1 instead (Section 9).

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
        Step size; ``None`` for ``1/(lam + beta)``.
    recipe : {"tight", "cs23"}, default="tight"
    conversion : {"improved", "classic"}, default="improved"
    fit_steps : int or None, default=None
        Override of ``K_A``; privacy holds for any number of steps.
    n_classes : int, default=2
        Number of classes, for the one-vs-rest sensitivity.

    Returns
    -------
    plan : TrainingPlan

    Examples
    --------
    >>> from skforget.accounting import plan_training
    >>> plan = plan_training(loss="logistic", n_samples=10000, n_params=21,
    ...                      lam=0.01, row_norm=2 ** 0.5, clip_norm=1.0,
    ...                      epsilon=1.0, delta=1e-5, deletion_epsilon=0.1)
    >>> plan.fit_steps, plan.unlearn_steps
    (531, 108)
    """
    check_choice(recipe, "recipe", RECIPES)
    check_choice(conversion, "conversion", CONVERSIONS)
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

    if recipe == "cs23":
        if learning_rate is not None:
            raise ValueError("learning_rate must be None with recipe='cs23', which "
                             "fixes eta = 1 / (2 (lam + beta)).")
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
    else:
        if learning_rate is None:
            eta = default_learning_rate(lam=lam, beta=beta)
        else:
            eta = check_learning_rate(learning_rate=learning_rate, lam=lam, beta=beta)
        c = contraction(learning_rate=eta, lam=lam, beta=beta)
        sigma = noise_scale(rho=rho_target, sensitivity=S, normaliser=N,
                            learning_rate=eta, contraction=c)
        v0 = init_variance(sigma=sigma, learning_rate=eta, lam=lam)
        r_inf = rho_inf(sensitivity=S, normaliser=N, learning_rate=eta, sigma=sigma,
                        contraction=c)
        k_fit = steps_fit(gradient_bound=G, lam=lam, n_params=p, init_variance=v0,
                          sigma=sigma, contraction=c)
        k_priv = steps_unlearn_privacy(rho_inf=r_inf, rho_target=rho_dd, contraction=c)
        k_util = steps_unlearn_utility(edit_size=r, sensitivity=S, group_size=g,
                                       normaliser=N, lam=lam, beta=beta, sigma=sigma,
                                       n_params=p, contraction=c)
    if fit_steps is not None:
        k_fit = check_int(fit_steps, "fit_steps", low=1)
    return TrainingPlan(
        loss=loss, recipe=recipe, relation=relation, group_size=g,
        conversion=conversion, epsilon=epsilon, delta=delta,
        deletion_epsilon=deletion_epsilon, rho_target=rho_target,
        rho_deletion_target=rho_dd, row_norm=float(row_norm),
        clip_norm=None if clip_norm is None else float(clip_norm), gradient_bound=G,
        sensitivity=S, lam=lam, beta=beta, learning_rate=eta, contraction=c,
        sigma=sigma, init_variance=v0, normaliser=N, n_params=p, max_edit_size=r,
        rho_inf=r_inf, fit_steps=k_fit, unlearn_steps_privacy=k_priv,
        unlearn_steps_utility=k_util,
    )


def _edit_contraction(plan, previous, n_samples):
    """Worst contraction over the history once the database has ``n_samples``.

    Under the fixed normaliser the data term of segment ``j`` is
    ``beta n_j / N``-smooth, so an insertion beyond ``2N`` (default step size)
    slows the contraction (Lemma 3.1); the accountant then uses the worst factor
    over all steps (uniformisation, Section 5.3). A factor >= 1 voids the bounds.
    """
    c_j = contraction(learning_rate=plan.learning_rate, lam=plan.lam, beta=plan.beta,
                      data_weight=n_samples / plan.normaliser)
    c_bar = max(previous.contraction, c_j)
    if c_bar >= 1.0:
        raise ValueError(
            f"an edit leaving {n_samples} rows is too large for a model fitted on "
            f"{plan.normaliser}: noisy gradient descent with learning_rate="
            f"{plan.learning_rate:.4g} no longer contracts (privacy-accounting.md, "
            "Section 10.1). Fit a new model on the edited data."
        )
    return c_bar


def plan_unlearning(plan, previous, *, n_samples, edit_size, steps=None):
    """Number of noisy steps ``K_R`` for one edit (Section 7 steps 6-8).

    ``K_R = max(K_R^priv, K_R^util)`` computed with the worst contraction over the
    history (Section 10.1) and the actual edit size (public). ``steps`` overrides
    the count; the guarantee is then computed from whatever is run.

    Parameters
    ----------
    plan : TrainingPlan
    previous : PrivacyGuarantee
        Guarantee of the model the edit starts from.
    n_samples : int
        Size of the edited database.
    edit_size : int
        Rows the edit names (deleted + replaced + inserted).
    steps : int or None

    Returns
    -------
    steps : int
    """
    n = check_int(n_samples, "n_samples", low=0)
    r = check_int(edit_size, "edit_size", low=0)
    c_bar = _edit_contraction(plan, previous, n)
    if steps is not None:
        return check_int(steps, "steps", low=0)
    r_inf = rho_inf(sensitivity=plan.sensitivity, normaliser=plan.normaliser,
                    learning_rate=plan.learning_rate, sigma=plan.sigma,
                    contraction=c_bar)
    k_priv = steps_unlearn_privacy(rho_inf=r_inf, rho_target=plan.rho_deletion_target,
                                   contraction=c_bar)
    if plan.recipe == "cs23":
        return max(k_priv, plan.unlearn_steps_privacy, plan.unlearn_steps_utility)
    k_util = steps_unlearn_utility(
        edit_size=max(r, 1), sensitivity=plan.sensitivity,
        group_size=plan.group_size, normaliser=plan.normaliser, lam=plan.lam,
        beta=plan.beta, sigma=plan.sigma, n_params=plan.n_params, contraction=c_bar)
    return max(k_priv, k_util)


def _dp_fields(plan, rho, rho_inf_value):
    eps = rho_to_epsilon(rho=rho, delta=plan.delta, method=plan.conversion)
    order = optimal_order(rho=rho, delta=plan.delta, method=plan.conversion) \
        if rho > 0 else math.inf
    return {"epsilon": eps, "rho": rho, "rho_inf": rho_inf_value, "order": order}


def guarantee_after_fit(plan, *, steps, seeded):
    """Guarantee of the model released by ``fit`` after ``steps`` steps.

    Every record present: ``R_q <= q rho_dp(K_A)`` at every order (eq. 5.3;
    privacy-accounting.md Section 6.1), converted at the plan's delta (Section 6.4).

    Parameters
    ----------
    plan : TrainingPlan
    steps : int
        Steps actually run.
    seeded : bool
        Whether the noise came from an integer seed.

    Returns
    -------
    guarantee : PrivacyGuarantee
    """
    T = check_int(steps, "steps")
    rho = rho_dp(rho_inf=plan.rho_inf, contraction=plan.contraction, steps=T)
    return PrivacyGuarantee(
        **_dp_fields(plan, rho, plan.rho_inf),
        delta=plan.delta, relation=plan.relation, group_size=plan.group_size,
        conversion=plan.conversion, target_epsilon=plan.epsilon,
        target_deletion_epsilon=plan.deletion_epsilon, noise_scale=plan.sigma,
        learning_rate=plan.learning_rate, regularization=plan.lam,
        clip_norm=plan.clip_norm, row_norm=plan.row_norm,
        gradient_bound=plan.gradient_bound, sensitivity=plan.sensitivity,
        normaliser=plan.normaliser, contraction=plan.contraction, fit_steps=T,
        total_steps=T, n_samples=plan.normaliser, edits=(), seeded=bool(seeded),
        recipe=plan.recipe,
    )


def guarantee_after_edit(plan, previous, *, steps, n_samples, n_deleted, n_replaced,
                         n_inserted, seeded):
    """Guarantee of the model released after one ``partial_unlearn``.

    * Records present: ``rho_dp`` of the whole history (eq. 5.3 with the
      uniformised constants of Section 5.3), never above ``rho_inf``.
    * Records removed by this edit: ``rho_inf c^(2 K_R)`` (eq. 5.5, Theorem 6.2),
      per unit; the whole edit as one unit costs ``(r/g)^2`` times more (6.2).
    * Against a requester that adapted to the ``s`` releases before the edit:
      ``rho_del + sum_t rho_dp(T_t)`` (Theorem 6.3; CS23 Theorem 4.3).

    Parameters
    ----------
    plan : TrainingPlan
    previous : PrivacyGuarantee
        Guarantee of the model the edit started from.
    steps : int
        ``K_R`` steps actually run on the edited database.
    n_samples : int
        Size of the edited database.
    n_deleted, n_replaced, n_inserted : int
        Composition of the edit.
    seeded : bool
        Whether this segment's noise came from an integer seed.

    Returns
    -------
    guarantee : PrivacyGuarantee
    """
    K = check_int(steps, "steps")
    n = check_int(n_samples, "n_samples")
    n_del = check_int(n_deleted, "n_deleted")
    n_rep = check_int(n_replaced, "n_replaced")
    n_ins = check_int(n_inserted, "n_inserted")
    c_bar = _edit_contraction(plan, previous, n)
    r_inf = rho_inf(sensitivity=plan.sensitivity, normaliser=plan.normaliser,
                    learning_rate=plan.learning_rate, sigma=plan.sigma,
                    contraction=c_bar)
    total = previous.total_steps + K
    rho = rho_dp(rho_inf=r_inf, contraction=c_bar, steps=total)
    r_del = rho_deletion(rho_inf=r_inf, contraction=c_bar, steps=K)
    removed = n_del + n_rep
    batch = r_del * group_factor(group_size=max(removed, plan.group_size)) \
        / group_factor(group_size=plan.group_size)
    segments = [previous.fit_steps] + [e.steps for e in previous.edits]
    releases = [rho_dp(rho_inf=r_inf, contraction=c_bar, steps=s) for s in segments]
    r_adapt = rho_adaptive(rho_deletion=r_del, rho_releases=releases)

    def eps(value):
        return rho_to_epsilon(rho=value, delta=plan.delta, method=plan.conversion)

    cert = EditCertificate(
        index=len(previous.edits) + 1, n_deleted=n_del, n_replaced=n_rep,
        n_inserted=n_ins, n_samples=n, steps=K, rho_deletion=r_del,
        epsilon_deletion=eps(r_del), rho_deletion_batch=batch,
        epsilon_deletion_batch=eps(batch), releases_seen=len(segments),
        rho_adaptive=r_adapt, epsilon_adaptive=eps(r_adapt),
    )
    fields = {f: getattr(previous, f) for f in PrivacyGuarantee.__dataclass_fields__}
    fields.update(_dp_fields(plan, rho, r_inf))
    fields.update(contraction=c_bar, total_steps=total, n_samples=n,
                  edits=previous.edits + (cert,),
                  seeded=previous.seeded or bool(seeded))
    return PrivacyGuarantee(**fields)
