# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The fit's run of a training plan: batches, noise and passes for a recipe.

:func:`_tight_run` (the shifted-Rényi recipe with the exact shift schedule of
Section 12) and :func:`_cs23_run` (the source paper's Theorem 5.1) turn the
targets into the run that :func:`skforget.accounting.plan_training` records;
:func:`_check_batches_contract` is the contraction check both use.
"""

import math
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
    relaxation_passes,
)
from skforget.accounting._checks import check_int
from skforget.accounting._noisy_gd import (
    check_learning_rate,
    contraction,
    max_learning_rate,
    rho_inf,
)
from skforget.accounting._recipes import (
    cs23_recipe,
    init_variance,
    noise_scale,
    steps_unlearn_privacy,
    steps_unlearn_utility,
)

#: An edit runs at least this many relaxation times when there are several
#: batches: the order changes at each segment, and a shorter segment would let
#: the records' last uses before and after the change crowd together (Table 12.2).
MIN_EDIT_RELAXATIONS = 1.0


class _Run(NamedTuple):
    """The numbers of a planned run that its recipe decides."""

    E: int
    eta: float
    c: float
    sigma: float
    v0: float
    r_inf: float
    F: float
    weight: float
    epochs: int
    noise_dominated: bool
    k_priv: int
    k_util: int
    min_edit_epochs: int
    mode: str


def _cs23_run(*, learning_rate, n_batches, fit_steps, rho_target, rho_dd, G, S, lam,
              beta, N, p, r):
    """The source paper's recipe (:func:`cs23_recipe`), full batch."""
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
    noise_dominated = k_fit == 0
    epochs = _fit_epochs(k_fit if k_fit else 1, fit_steps, 1,
                         relaxation_epochs=relaxation_passes(1, eta, lam))
    min_edit_epochs, mode = 1, "continue"
    return _Run(E, eta, c, sigma, v0, r_inf, F, weight, epochs, noise_dominated,
                k_priv, k_util, min_edit_epochs, mode)


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


def _tight_run(*, learning_rate, n_batches, fit_steps, fit_recipe, loss, n_classes,
               target_bound, h_typ, relation, rho_target, rho_dd, G, S, lam, beta, N,
               p, r, g):
    """The tight recipe: step size, batches, then the noise and the fit's
    length at their fixed point (Sections 7 and 12.6)."""
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
    relax = relaxation_passes(E, eta, lam)
    min_edit_epochs = 1 if E == 1 else max(2, int(math.ceil(
        MIN_EDIT_RELAXATIONS * relax)))
    # The fit's length depends on sigma (its utility target is the Gibbs
    # level of the output directions) and sigma on the fit's length and on
    # how edits will be served (Section 12.6): a short fit that every edit
    # retrains needs less noise. The edit mode is decided once, at the
    # full-batch noise; then a few rounds reach the fixed point of (sigma,
    # length), and the final sigma is computed from the final length.

    # The floor of one relaxation time serves directions flatter than the
    # typical curvature, which decisions need; the squared loss's risk weighs
    # a direction's bias by its curvature, and a longer fit's noise (in a
    # retrain plan) costs every direction: its floor is the ramp's (8.4).
    floor = 0.0 if loss == "squared" else relax

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
                               fit_steps, E, relaxation_epochs=floor), True
        return _fit_epochs(k, fit_steps, E, relaxation_epochs=floor), False

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
    return _Run(E, eta, c, sigma, v0, r_inf, F, weight, epochs, noise_dominated,
                k_priv, k_util, min_edit_epochs, mode)
