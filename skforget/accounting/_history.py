# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A model's guarantee, from the public history actually run.

:func:`guarantee_after_fit` and :func:`guarantee_after_edit` state what the
released model satisfies (privacy-accounting.md, Sections 6 and 12), from the
plan and the segments run, never from the rows. They read the history with the
same helpers :func:`~skforget.accounting.plan_unlearning` sizes an edit with,
so a planned edit and its certificate agree.
"""

import math

from skforget.accounting._calibration import deletion_factor, edit_batches
from skforget.accounting._checks import check_int
from skforget.accounting._conversions import optimal_order, rho_to_epsilon
from skforget.accounting._cyclic import rho_cyclic_removed
from skforget.accounting._guarantee import (
    CONVERSION_NOTES,
    EditCertificate,
    PrivacyGuarantee,
)
from skforget.accounting._noisy_gd import (
    group_factor,
    rho_adaptive,
    rho_deletion,
    rho_dp,
)
from skforget.accounting._prevalence import rho_counts_adaptive
from skforget.accounting._plan import (
    EditPlan,
    _cert_segment,
    _check_contracts,
    _history_after,
    _rho_present,
    lazy_deletion_rho,
    pending_removals,
)


def _dp_fields(plan, rho, rho_inf_value):
    # Corollary 21.4: with conversion "gaussian" the figure is sqrt(2 rho)-GDP.
    eps = rho_to_epsilon(rho=rho, delta=plan.delta, method=plan.conversion)
    order = optimal_order(rho=rho, delta=plan.delta, method=plan.conversion) \
        if rho > 0 else math.inf
    return {"epsilon": eps, "rho": rho, "rho_inf": rho_inf_value, "order": order}


def guarantee_after_fit(plan, *, steps, seeded, label_set_public=True,
                        target_scale_public=True, rho_counts=0.0, count_noise=0.0,
                        target_epsilon=None, class_statistics="counts",
                        target_deletion_epsilon=None):
    """Guarantee of the model released by ``fit`` after ``steps`` steps.

    Every record present: ``R_q <= q rho`` at every order, with ``rho`` from
    eq. 5.3 (one batch) or Section 12.4 (several; ``steps`` is then a whole
    number of passes), plus the rho-coefficient of the noisy class counts
    released with the model when there are any (Theorem 18.4 (i)), converted
    at the plan's delta (Section 6.4).

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
    rho_counts : float, default=0.0
        Rho-coefficient of the noisy class counts released with the model
        (Proposition 18.2); 0 when none are.
    count_noise : float, default=0.0
        Their noise scale, in records.
    target_epsilon : float or None
        The whole release's target when it differs from the plan's (the plan
        then calibrates noisy GD to what the counts leave, Section 18.2).
    class_statistics : {"counts", "class_means", "class_moments"}, default="counts"
        What the ``rho_counts`` release holds (Sections 18.3, 18.11).
    target_deletion_epsilon : float or None
        The whole release's deletion target when it differs from the plan's
        (which the split caps at noisy GD's share): the target of a deletion
        served without a pass, whose figure includes the kept statistics'
        (Section 12.12, "Planning").

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
        **_dp_fields(plan, rho + rho_counts, r_inf + rho_counts),
        delta=plan.delta, relation=plan.relation, group_size=plan.group_size,
        conversion=plan.conversion,
        target_epsilon=plan.epsilon if target_epsilon is None else target_epsilon,
        target_deletion_epsilon=plan.deletion_epsilon if target_deletion_epsilon
        is None else float(target_deletion_epsilon), noise_scale=plan.sigma,
        learning_rate=plan.learning_rate, regularization=plan.lam,
        clip_norm=plan.clip_norm, row_norm=plan.row_norm,
        gradient_bound=plan.gradient_bound, sensitivity=plan.sensitivity,
        normaliser=plan.normaliser, contraction=plan.contraction, fit_steps=T,
        total_steps=T, n_samples=plan.normaliser, edits=(), seeded=bool(seeded),
        recipe=plan.recipe, label_set_public=bool(label_set_public),
        target_scale_public=bool(target_scale_public),
        n_batches=E, fit_data_weight=plan.fit_data_weight,
        noise_factor=plan.noise_factor, rho_counts=float(rho_counts),
        count_noise=float(count_noise),
        conversion_note=CONVERSION_NOTES[plan.conversion],
        class_statistics=str(class_statistics),
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
      start; with no step (a certificate-only edit), the history's figure at
      the deletion sensitivity (Theorem 12.9). The whole edit as one unit
      costs ``(r/g)^2`` times more (6.2); so do the records removed without a
      pass since the last one, as one unit (12.9).
    * Against a requester that adapted to the ``s`` releases before the edit:
      ``rho_del + sum_t rho_dp(T_t)`` (Theorem 6.3; CS23 Theorem 4.3), the
      releases' figures at the deletion sensitivity, plus one count term per
      release when the model releases noisy class counts (eq. 18.3).

    The noisy class statistics of the previous guarantee (``rho_counts``) are
    redrawn with fresh noise on the edited database by an edit that runs
    steps: they add to the DP figure (Theorem 18.4 (i)) and nothing to the
    deletion figure (Theorem 18.4 (ii)). A certificate-only edit keeps them
    with the coefficients: its deletion figure then includes theirs at the
    deletion sensitivity (Theorem 12.12, in :func:`lazy_deletion_rho`).

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
    lazy = K == 0 and not retrained
    if retrained or removed == 0:
        # Retrained: the new model's law depends on the edited data only. Nothing
        # removed: there is no deletion to certify.
        r_del = 0.0
    elif lazy:
        # No step: the release is the previous one (Theorem 12.9).
        r_del = lazy_deletion_rho(plan, previous, n_rep)
    elif E == 1:
        r_del = rho_deletion(rho_inf=r_inf * factor, contraction=c_bar, steps=K)
    else:
        # Not retrained, so the chain is the history before the edit plus the
        # edit's segment: the unit is present in all but the last.
        r_del = rho_cyclic_removed(
            chain, len(chain) - 1, lam=plan.lam, beta=plan.beta,
            sigma=plan.sigma, sensitivity=plan.sensitivity * math.sqrt(factor),
            normaliser=plan.normaliser)
    def as_group(records):
        return r_del * group_factor(group_size=max(records, plan.group_size)) \
            / group_factor(group_size=plan.group_size)

    batch = as_group(removed)
    pending = pending_removals(previous) + removed if lazy else 0
    # Each release the requester saw is, given the one before it, a run from a
    # common start on databases differing in the unit (Theorem 6.3).
    history = [plan.segment(plan.n_batches, previous.fit_steps,
                            previous.fit_data_weight)]
    # A certificate-only edit re-releases the previous model: it adds nothing.
    history += [_cert_segment(plan, e) for e in previous.edits
                if e.steps or e.retrained]
    releases = [_rho_present(plan, [s], c_bar)[0] * factor for s in history]
    r_adapt = rho_adaptive(rho_deletion=r_del, rho_releases=releases) if removed \
        else 0.0
    if removed:
        # One statistics term per release that drew them (eq. 18.3): the fit
        # and every edit that passed over the data; a certificate-only edit
        # re-releases the pair it kept and adds nothing (Theorem 12.12). Edits
        # of a guarantee saved before 12.12 count as drawn: they redrew.
        r_adapt += rho_counts_adaptive(
            rho_counts=previous.rho_counts, relation=plan.relation,
            n_replaced=n_rep,
            releases_seen=1 + sum(e.statistics_drawn for e in previous.edits),
            statistics=previous.class_statistics)

    def eps(value):
        # Corollary 21.5: sqrt(2 rho)-GDP too under conversion "gaussian".
        return rho_to_epsilon(rho=value, delta=plan.delta, method=plan.conversion)

    cert = EditCertificate(
        index=len(previous.edits) + 1, n_deleted=n_del, n_replaced=n_rep,
        n_inserted=n_ins, n_samples=n, steps=K, rho_deletion=r_del,
        epsilon_deletion=eps(r_del), rho_deletion_batch=batch,
        epsilon_deletion_batch=eps(batch), releases_seen=len(history),
        rho_adaptive=r_adapt, epsilon_adaptive=eps(r_adapt),
        retrained=bool(retrained), data_weight=weight, n_batches=E,
        n_pending=pending, rho_pending_group=as_group(pending) if pending else 0.0,
        epsilon_pending_group=eps(as_group(pending)) if pending else 0.0,
        statistics_drawn=not lazy,
    )
    fields = {f: getattr(previous, f) for f in PrivacyGuarantee.__dataclass_fields__}
    fields.update(_dp_fields(plan, rho + previous.rho_counts,
                             r_inf + previous.rho_counts))
    total = sum(s.steps for s in chain)
    fields.update(contraction=c_bar, total_steps=total, n_samples=n,
                  edits=previous.edits + (cert,),
                  seeded=previous.seeded or bool(seeded))
    return PrivacyGuarantee(**fields)
