# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private hyper-parameter selection: repeat a private run a random number of
times and release the best (privacy-accounting.md, Section 17).

Pure functions of public numbers. The selection's Rényi curve is Papernot and
Steinke (ICLR 2022), Theorem 2, specialised to runs whose guarantee is a
rho-coefficient (Theorem 17.2); the search's total adds the refit's curve.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from skforget.accounting._checks import (
    check_nonnegative,
    check_positive,
    check_probability,
    check_real,
)
from skforget.accounting._conversions import (
    _epsilon_at_order,
    epsilon_to_rho,
    rho_to_epsilon,
)
from skforget.accounting._pipeline import split_private_pipeline
from skforget.accounting._preprocessing import gaussian_noise_for_rho

#: Orders at which selection curves are evaluated: a log grid from 1 + 1e-4 to
#: 1e6, dense enough that the minimum over the grid is within 1e-4 relative of
#: the continuous one for the curves of Theorem 17.2 (tested).
_ORDERS = 1.0 + np.geomspace(1e-4, 1e6, 4000)


#: Largest mean number of runs and shape of their law (Section 17.2): beyond
#: them the float arithmetic of gamma, not the law, would decide K.
MAX_MEAN_RUNS = 1e4
MAX_SHAPE = 100.0
#: Smallest mean other than 1: closer to 1, K >= 1 is so rare under the
#: untruncated law that drawing it would take millions of draws.
MIN_MEAN_RUNS = 1.001


def _check_law(mean, shape):
    mean = check_real(mean, "mean", low=1.0, low_open=False)
    shape = check_nonnegative(shape, "shape")
    if math.isinf(shape):
        raise ValueError("shape=inf (Poisson) is not supported: use a truncated "
                         "negative binomial shape >= 0 (0: logarithmic, 1: geometric).")
    return mean, shape


def _check_sampled_law(mean, shape):
    """The laws a search may draw from (Section 17.2)."""
    mean, shape = _check_law(mean, shape)
    if mean > MAX_MEAN_RUNS or shape > MAX_SHAPE or 1.0 < mean < MIN_MEAN_RUNS:
        raise ValueError(f"mean={mean!r} and shape={shape!r}: the law of the number "
                         f"of runs is supported for a mean of 1 or from "
                         f"{MIN_MEAN_RUNS:g} up to {MAX_MEAN_RUNS:g} runs, and a "
                         f"shape up to {MAX_SHAPE:g}.")
    return mean, shape


def _tnb_mean(gamma, shape):
    """``E[K]`` of the truncated negative binomial ``D_{shape, gamma}``
    (``1 - gamma**shape`` as ``-expm1(shape log gamma)``: no cancellation for
    small shapes)."""
    if shape == 0.0:
        return (1.0 - gamma) / (gamma * math.log(1.0 / gamma))
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


def repetition_gamma(*, mean, shape):
    """Parameter ``gamma`` of the truncated negative binomial law with the given
    mean and shape ``eta`` (privacy-accounting.md, Section 17.2).

    ``E[K] = eta (1 - gamma) / (gamma (1 - gamma**eta))`` for ``eta > 0`` and
    ``(1 - gamma) / (gamma log(1/gamma))`` for ``eta = 0`` (logarithmic); both
    decrease in ``gamma`` from infinity to 1.

    Examples
    --------
    >>> from skforget.accounting import repetition_gamma
    >>> g = repetition_gamma(mean=10, shape=1)   # geometric: E[K] = 1/gamma
    >>> round(g, 12)
    0.1
    """
    mean, shape = _check_law(mean, shape)
    if mean == 1.0:
        return 1.0
    return brentq(lambda g: _tnb_mean(g, shape) - mean, 1e-300, 1.0 - 1e-15,
                  xtol=1e-300, rtol=1e-15, maxiter=1000)


def sample_repetitions(rng, *, mean, shape):
    """Draw the number of runs ``K >= 1`` from ``D_{shape, gamma}`` (Section 17.2)
    with numpy's samplers (``rng``: a numpy Generator).

    ``eta = 0``: the logarithmic series law, ``P(K = k) ∝ (1 - gamma)^k / k``
    (``Generator.logseries``). ``eta > 0``: the negative binomial law of the
    failures before ``eta`` successes of probability ``gamma``,
    ``P(K = k) ∝ C(k + eta - 1, k) (1 - gamma)^k``, with ``K = 0`` rejected
    (``Generator.negative_binomial``, drawn in batches sized by
    ``P(K >= 1)``). No cumulative sum is formed: an inverted float CDF drew
    a law off the accounted one by up to ``3e-9`` in total variation.
    """
    mean, shape = _check_sampled_law(mean, shape)
    if mean == 1.0:
        return 1
    gamma = repetition_gamma(mean=mean, shape=shape)
    if shape == 0.0:
        return int(rng.logseries(1.0 - gamma))
    positive = -math.expm1(shape * math.log(gamma))   # P(K >= 1)
    batch = int(min(1 << 20, max(16, math.ceil(4.0 / positive))))
    while True:
        draws = rng.negative_binomial(shape, gamma, size=batch)
        kept = draws[draws >= 1]
        if kept.size:
            return int(kept[0])


def selection_rdp(*, orders, rho, mean, shape):
    """Rényi curve of repeat-and-select over runs with rho-coefficient ``rho``.

    privacy-accounting.md, Theorem 17.2 (Papernot and Steinke 2022, Thm. 2):
    ``eps_A(q) = q rho + log(E[K]) / (q - 1) + (1 + eta) c(rho, gamma)``, with
    ``c = min_{l >= 1} (l - 1) rho + log(1/gamma) / l`` in closed form, then the
    monotone envelope ``min_{q' >= q} eps_A(q')`` over the given orders (Rényi
    divergence does not decrease with the order).

    Parameters
    ----------
    orders : array-like of float
        Orders ``q > 1``, increasing.
    rho : float
        Rho-coefficient of one run (Lemma 17.1).
    mean : float
        ``E[K] >= 1``, the mean number of runs.
    shape : float
        ``eta >= 0`` of the truncated negative binomial law (0: logarithmic,
        1: geometric).

    Returns
    -------
    rdp : ndarray
        ``eps_A`` at each order.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.accounting import selection_rdp
    >>> selection_rdp(orders=np.array([2.0, 8.0]), rho=0.01, mean=1, shape=1)
    array([0.02, 0.08])
    """
    q = np.asarray(orders, dtype=np.float64)
    if q.ndim != 1 or np.any(q <= 1.0) or np.any(np.diff(q) <= 0):
        raise ValueError("orders must be an increasing 1-D array of values > 1.")
    rho = check_nonnegative(rho, "rho")
    mean, shape = _check_law(mean, shape)
    if mean == 1.0:
        return q * rho  # one run: K = 1 always
    log_inv_gamma = math.log(1.0 / repetition_gamma(mean=mean, shape=shape))
    if rho > 0.0 and log_inv_gamma >= rho:
        c = 2.0 * math.sqrt(rho * log_inv_gamma) - rho
    else:
        c = log_inv_gamma
    eps = q * rho + math.log(mean) / (q - 1.0) + (1.0 + shape) * c
    return np.minimum.accumulate(eps[::-1])[::-1]


def rdp_curve_epsilon(*, orders, rdp, delta):
    """Smallest epsilon over the orders of a Rényi curve, by the improved
    conversion (Balle et al. 2020, Thm. 21; privacy-accounting.md, 6.4).

    Returns ``(epsilon, order)``.
    """
    delta = check_probability(delta, "delta")
    q = np.asarray(orders, dtype=np.float64)
    # The improved conversion of _epsilon_at_order, vectorised over the orders.
    values = (np.asarray(rdp, dtype=np.float64) + np.log1p(-1.0 / q)
              - (math.log(delta) + np.log(q)) / (q - 1.0))
    i = int(np.argmin(values))
    # Report the scalar function's value at the best order (one code path for
    # every figure of the package).
    best = _epsilon_at_order(float(q[i]), float(np.asarray(rdp)[i]), delta,
                             "improved")
    return max(0.0, best), float(q[i])


@dataclass(frozen=True)
class SearchBudget:
    """The public plan of a private search (privacy-accounting.md, 17.3).

    Attributes
    ----------
    epsilon, delta : float
        The whole search's (epsilon, delta): selection and refit together.
    run_epsilon : float
        Target of each candidate's fit, alone: its rho-coefficient is
        ``run_rho - score_rho`` at most.
    run_rho, refit_rho : float
        Rho-coefficients of one run (fit and score) and of the refit (0
        without refit).
    score_rho : float
        Part of ``run_rho`` spent on a noisy score computed on the fit's own
        rows (0 when candidates are scored on held-out rows, Lemma 17.1).
    refit_epsilon : float
        The refit's target at ``delta``, a hair below its share of
        ``epsilon`` so that rounding cannot take it past ``refit_rho``
        (0 without refit).
    selection_epsilon : float
        The selection's figure alone, at ``delta``: what the choice of
        hyper-parameters reveals about any record, which deleting the record
        from the refitted model does not undo (17.4).
    mean, shape, gamma : float
        Law of the number of runs ``K`` (never released).
    order : float
        Rényi order at which the total converts best (info).
    preprocessing_rho : float
        Rho-coefficient of a private pipeline's statistics, released once
        before the runs (Theorem 17.5; 0 for an estimator).
    delta_selection : float
        Probability of the excluded events of those statistics' category
        selections (Theorem 17.5; 0 for an estimator): the total holds
        outside them. A refit is planned at ``delta`` less this.
    relation : {"replace", "zero_out"}
        Neighbouring relation of the runs (the estimator's).
    group_size : int
        Records per privacy unit (the estimator's).
    seeded : bool
        True when the search's noise came from a given ``random_state``.
    """

    epsilon: float
    delta: float
    run_epsilon: float
    run_rho: float
    refit_epsilon: float
    refit_rho: float
    selection_epsilon: float
    mean: float
    shape: float
    gamma: float
    order: float
    score_rho: float = 0.0
    preprocessing_rho: float = 0.0
    delta_selection: float = 0.0
    relation: str = "replace"
    group_size: int = 1
    seeded: bool = False

    def to_dict(self):
        """The plan as a JSON-ready dict."""
        return dict(self.__dict__)

    def __str__(self):
        refit = (f"; the refit on all rows spends epsilon {self.refit_epsilon:.4g} "
                 "of it" if self.refit_rho else "")
        if self.preprocessing_rho:
            refit = (f"; the pipeline's private statistics (rho "
                     f"{self.preprocessing_rho:.4g}) are released once, before the "
                     "runs, which map the rows with them") + refit
        relation = {"replace": "replace-one", "zero_out": "zero-out"}[self.relation]
        unit = ("record" if self.group_size == 1
                else f"group of {self.group_size} records")
        seeded = (" The noise came from a given random_state: the guarantee holds "
                  "only while it stays secret." if self.seeded else "")
        return (f"({self.epsilon:.4g}, {self.delta:.3g})-DP for the whole search, "
                f"every {unit} present, {relation}: a random number of candidate "
                f"runs (mean "
                f"{self.mean:g}, truncated negative binomial shape {self.shape:g}), "
                f"each planned for epsilon {self.run_epsilon:.4g}, of which only the "
                f"best is released (Papernot and Steinke 2022){refit}. The choice of "
                f"hyper-parameters alone is ({self.selection_epsilon:.4g}, "
                f"{self.delta:.3g})-DP; deleting a record from the model does not "
                f"undo it.{seeded}")


#: Relative margin between a run's planned rho-coefficient and the one the
#: selection is analysed at: the estimators meet their target up to rounding
#: (a few ulps), which must not push a run over the analysis.
_TARGET_MARGIN = 1e-9


def _target_within(rho, delta):
    """An epsilon target whose rho-coefficient is at most ``rho (1 - 1e-9)``: a
    run planned for it is covered by the analysis at ``rho`` even after the
    estimator's rounding. The estimators calibrate a target by the Gaussian
    inverse (privacy-accounting.md, 21.5), which gives the largest rho of every
    conversion, so the target is found with it: a run with a Rényi conversion
    (``recipe="cs23"``) then gets at most ``rho`` too."""
    rho = rho * (1.0 - _TARGET_MARGIN)
    eps = rho_to_epsilon(rho=rho, delta=delta, method="gaussian")
    if eps == 0.0:
        raise ValueError(
            f"A run's share rho={rho:.3g} is too small for a search: it is "
            f"(0, {delta:.3g})-DP already, so no epsilon target > 0 plans it. "
            "Raise epsilon or lower the mean number of runs.")
    while epsilon_to_rho(epsilon=eps, delta=delta, method="gaussian") > rho:
        eps *= 1.0 - 1e-12
    return eps


def _total_rdp(run_rho, refit_rho, mean, shape):
    return (selection_rdp(orders=_ORDERS, rho=run_rho, mean=mean, shape=shape)
            + _ORDERS * refit_rho)


def approximate_curve_epsilon(*, rdp, delta, delta_excluded=0.0):
    """``(epsilon, order)`` of a Rényi curve on the search grid that holds
    outside events of probability ``delta_excluded``: the conversion of 6.4
    at ``delta - delta_excluded``, minimised over the orders, plus
    ``ln(1 / (1 - delta_excluded))`` (privacy-accounting.md, Proposition
    19.4 for a general curve, Theorem 17.5). Infinite when nothing of
    ``delta`` is left.

    Examples
    --------
    >>> import numpy as np
    >>> from skforget.accounting import approximate_curve_epsilon
    >>> from skforget.accounting._selection import _ORDERS
    >>> e0, _ = approximate_curve_epsilon(rdp=_ORDERS * 0.03, delta=1e-5)
    >>> e1, _ = approximate_curve_epsilon(rdp=_ORDERS * 0.03, delta=1e-5,
    ...                                   delta_excluded=1e-6)
    >>> bool(e1 > e0)
    True
    """
    delta = check_probability(delta, "delta")
    delta_excluded = check_nonnegative(delta_excluded, "delta_excluded")
    if delta_excluded >= delta:
        return math.inf, math.nan
    eps, order = rdp_curve_epsilon(orders=_ORDERS, rdp=rdp,
                                   delta=delta - delta_excluded)
    return eps - math.log1p(-delta_excluded), order


def search_score_noise(*, budget, n_scored, group_size=1, held_out=False):
    """Noise of a candidate run's released score (Lemmas 17.1 and 17.1b).

    The score is the mean over ``n_scored`` records of a utility in
    ``[0, 1]``, so one privacy unit of ``group_size`` records moves it by at
    most ``group_size / n_scored``; it is released at the run's whole
    ``run_rho`` when the records are a held-out part (Lemma 17.1: they are not
    in the fit) and at ``score_rho`` when they are the fit's own (Lemma 17.1b:
    the score's share of the run). The noise is the Gaussian mechanism's
    :func:`gaussian_noise_for_rho` at that sensitivity and rho.

    Parameters
    ----------
    budget : SearchBudget
        The search's plan (:func:`plan_search`).
    n_scored : int
        Records the score averages over: the held-out part, or all of them.
    group_size : int, default=1
        Records per privacy unit.
    held_out : bool, default=False
        Whether the scored records are a held-out part.

    Returns
    -------
    sigma : float

    Examples
    --------
    >>> from skforget.accounting import plan_search, search_score_noise
    >>> b = plan_search(epsilon=1.0, delta=1e-5, refit_share=0.0,
    ...                 score_share=0.05)
    >>> sigma = search_score_noise(budget=b, n_scored=1000)
    >>> round(sigma * 1000 * (2 * b.score_rho) ** 0.5, 12)
    1.0
    """
    n_scored = check_positive(n_scored, "n_scored")
    rho = budget.run_rho if held_out else budget.score_rho
    return gaussian_noise_for_rho(rho=rho, sensitivity=group_size / n_scored)


def plan_search(*, epsilon, delta, mean=10.0, shape=0.0, refit_share=0.5,
                score_share=0.0, pipeline=None):
    """Split a total (epsilon, delta) between repeat-and-select and a refit.

    privacy-accounting.md, Section 17.3: the refit gets the rho-coefficient of
    ``refit_share * epsilon`` alone (none if ``refit_share`` is 0), and each
    candidate run the largest rho-coefficient whose total curve (Theorem 17.2
    plus the refit's, composed order by order) converts to at most ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Total epsilon of the search.
    delta : float
        Its delta.
    mean : float, default=10
        Mean number of candidate runs.
    shape : float, default=0
        ``eta`` of the truncated negative binomial law (0: logarithmic).
    refit_share : float in [0, 1), default=0.5
        Share of ``epsilon`` given to the refit on all rows (0: no refit).
    score_share : float in [0, 1), default=0
        Share of each run's rho-coefficient spent on a noisy score of the
        run's own rows (Lemma 17.1b); 0 when runs are scored on held-out rows.
    pipeline : dict, default=None
        For a pipeline with private preprocessing (Theorem 17.5): its
        ``preprocessing_share``, ``selection_share`` and
        ``estimator_conversion``, as :func:`split_private_pipeline` takes
        them. The statistics get the rho and delta an untuned pipeline at
        ``(epsilon, delta)`` gives them, released once; a refit is the
        estimator's at ``refit_share * epsilon`` (at ``delta`` less the
        selections'), and the runs get the rest.

    Returns
    -------
    SearchBudget

    Examples
    --------
    >>> from skforget.accounting import plan_search
    >>> b = plan_search(epsilon=1.0, delta=1e-5, mean=10, refit_share=0.0)
    >>> round(b.run_epsilon, 2), b.epsilon <= 1.0
    (0.5, True)
    """
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    mean, shape = _check_sampled_law(mean, shape)
    # Below 1: the candidate runs need part of the budget.
    refit_share = check_real(refit_share, "refit_share", low=0.0, high=1.0,
                             low_open=False)
    score_share = check_real(score_share, "score_share", low=0.0, high=1.0,
                             low_open=False)
    rho_pre = excluded = 0.0
    if pipeline is not None:
        if not isinstance(pipeline, dict):
            # A trial passed the pipeline itself, as the guide's wording let it.
            raise TypeError(
                "pipeline must be the dict of a pipeline's split, e.g. "
                "{'preprocessing_share': 0.25, 'selection_share': 0.1, "
                "'estimator_conversion': 'gaussian'} (make_private_pipeline's "
                f"defaults), not a {type(pipeline).__name__}.")
        # Theorem 17.5: the statistics as an untuned pipeline's, released once;
        # a refit is the estimator's, on the rows mapped through them.
        split = split_private_pipeline(epsilon=epsilon, delta=delta, **pipeline)
        rho_pre, excluded = split.rho_preprocessing, split.delta_selection
    if refit_share > 0:
        refit_rho = epsilon_to_rho(epsilon=refit_share * epsilon,
                                   delta=delta - excluded)
        refit_epsilon = _target_within(refit_rho, delta - excluded)
    else:
        refit_rho = refit_epsilon = 0.0

    def total(run_rho, refit_rho=refit_rho):
        return approximate_curve_epsilon(
            rdp=_total_rdp(run_rho, refit_rho, mean, shape) + _ORDERS * rho_pre,
            delta=delta, delta_excluded=excluded)

    if total(1e-300)[0] > epsilon:
        raise ValueError(
            f"epsilon={epsilon!r} is too small for a search with a mean of {mean:g} "
            f"runs and refit_share={refit_share!r}: the selection's fixed cost "
            "(log E[K] and the law's tail)"
            + (" with the pipeline's statistics" if pipeline is not None else "")
            + " alone exceeds it. Lower the mean number of runs or the refit's "
            "share, or raise epsilon.")
    hi = epsilon_to_rho(epsilon=epsilon, delta=delta)
    run_rho = brentq(lambda r: total(r)[0] - epsilon, 1e-300, hi, xtol=1e-300,
                     rtol=1e-12, maxiter=500)
    while total(run_rho)[0] > epsilon:  # never overshoot the target
        run_rho *= 1.0 - 1e-9
    eps_total, order = total(run_rho)
    # What the choice alone reveals: the statistics it read and the runs.
    selection = total(run_rho, 0.0)[0]
    return SearchBudget(
        epsilon=eps_total, delta=delta,
        run_epsilon=_target_within((1.0 - score_share) * run_rho, delta),
        run_rho=run_rho, score_rho=score_share * run_rho,
        refit_epsilon=refit_epsilon,
        refit_rho=refit_rho, selection_epsilon=selection, mean=mean, shape=shape,
        gamma=repetition_gamma(mean=mean, shape=shape), order=order,
        preprocessing_rho=rho_pre, delta_selection=excluded)


def largest_search_epsilon(ledger, *, delta, mean=10.0, shape=0.0, refit_share=0.0,
                           score_share=0.05, pipeline=None):
    """The largest total epsilon a search planned so could spend in ``ledger``.

    A ledger's ``remaining_epsilon`` is what one more *fit* may target; a
    search's curve (Theorem 17.2, with a pipeline's statistics Theorem 17.5)
    costs more at the same epsilon. This bisects on the search's total,
    planned by :func:`plan_search` with the same arguments, for the largest
    one the ledger would take now (``ledger.would_exceed``), to a relative
    ``1e-4``; 0 when none fits.

    Parameters
    ----------
    ledger : PrivacyLedger
        The dataset's ledger (anything with ``would_exceed(plan)``).
    delta : float
        The search's own delta (its runs are planned at it; the ledger reads
        the curve at its own).
    mean, shape, refit_share, score_share, pipeline
        As for :func:`plan_search`. ``PrivateSearchCV``'s default mode is
        ``refit_share=0, score_share=0.05``; with a ``validation_fraction``
        and a refit, ``refit_share`` (0.5) and ``score_share=0``.

    Returns
    -------
    epsilon : float

    Examples
    --------
    After a fit whose figure is Gaussian (GDP composes it exactly), a
    search's Rényi curve makes the ledger read everything by the Rényi
    conversion, so the search may spend less than a fit could:

    >>> from skforget.accounting import (PrivacyLedger, epsilon_to_rho,
    ...                                  largest_search_epsilon)
    >>> ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    >>> ledger.spend("fit", rho=epsilon_to_rho(epsilon=1.0, delta=1e-5,
    ...                                        method="gaussian"), gaussian=True)
    >>> round(ledger.remaining_epsilon, 2), round(largest_search_epsilon(
    ...     ledger, delta=1e-5), 2)
    (1.66, 1.31)
    """
    def fits(epsilon):
        try:
            budget = plan_search(epsilon=epsilon, delta=delta, mean=mean, shape=shape,
                                 refit_share=refit_share, score_share=score_share,
                                 pipeline=pipeline)
        except ValueError:   # too small for the law's fixed cost
            return False
        return not ledger.would_exceed(budget)

    # lo always fits (or is 0), hi never does: doubling, then bisection.
    lo, hi = 0.0, 1.0
    while fits(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return lo
    while hi - lo > 1e-4 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo
