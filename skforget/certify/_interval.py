# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The interval box of abstract gradient training, for comparison only.

Wicker, Sosnin et al. (*Certificates of Differential Privacy and Unlearning for
Gradient-Based Training*) propagate per-coordinate bounds ``[l_t, u_t]`` on the
parameters of every admissible counterfactual run. Specialised to skforget's
linear models (certificates.md, Section 4): the clipped loss derivative is
monotone in the margin, so its range over the box is exact; the sum over rows
is bounded per coordinate, dropping the ``k`` most favourable rows. Interval
arithmetic forgets that the gradient and the parameter move together, so the
box grows each step where the ball contracts; beyond a few tens of steps it is
vacuous. skforget certifies with the ball; this module exists to measure that
claim (and to reproduce the spec's oracle).

Unlike the ball, the box needs the training rows and the realised noise: it
replays the seeded noise stream of the run.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from skforget._rows import project_rows
from skforget._solver import initial_draw
from skforget._validation import segment_rng
from skforget.certify._ball import (
    check_loss,
    check_mode,
    clipped_derivative,
    output_gradient_bound,
    topsum_table,
)
from skforget.certify._mixin import check_no_count_shift
from skforget.exceptions import NotCertifiableError


@dataclass(frozen=True, slots=True)
class Box:
    """Per-coordinate bounds on the parameters, in the solver's layout.

    Attributes
    ----------
    W_lo, W_hi : ndarray of shape (K, d)
    b_lo, b_hi : ndarray of shape (K,)
        Bounds on the intercept coordinate (``intercept_ = s_b * b``).
    """

    W_lo: np.ndarray
    b_lo: np.ndarray
    W_hi: np.ndarray
    b_hi: np.ndarray


def _augmented(design):
    X = design.X.toarray() if sp.issparse(design.X) else np.asarray(design.X)
    rows = np.empty((X.shape[0], X.shape[1] + 1))
    rows[:, :-1] = X * design.scale[:, None]
    rows[:, -1] = design.intercept_scaling
    return rows


def _topsum(values, k):
    """Sum of the ``k`` largest entries of each column."""
    return topsum_table(values, k)[k]


def _mean_gradient_range(U, L, k, *, mode, normaliser, gradient_bound):
    """Bounds on the counterfactual mean clipped gradient, per coordinate.

    ``U`` / ``L`` bound each row's clipped gradient from above / below over the
    box. Fixed normaliser ``N``: removing up to ``k`` rows can raise a
    coordinate's sum by the ``k`` largest ``max(-U, 0)`` and lower it by the
    ``k`` largest ``max(L, 0)``; each added record moves it by at most ``G``.
    ``normaliser=None`` is the spec's current-size variant (remove mode only):
    ``(sum U - BottomSum_k(U)) / (n - k)``.
    """
    n = U.shape[0]
    if normaliser is None:
        if mode != "remove" or k >= n:
            raise ValueError("the current-size box is defined for mode='remove' "
                             "and k < n only.")
        up = (U.sum(axis=0) + _topsum(-U, k)) / (n - k)
        low = (L.sum(axis=0) - _topsum(L, k)) / (n - k)
        return up, low
    up = U.sum(axis=0)
    low = L.sum(axis=0)
    if mode in ("remove", "replace"):
        up = up + _topsum(np.maximum(-U, 0.0), k)
        low = low - _topsum(np.maximum(L, 0.0), k)
    if mode != "remove":
        # add_remove: dropping b rows gains at most b G, as adding them would.
        up = up + k * gradient_bound
        low = low - k * gradient_bound
    return up / normaliser, low / normaliser


def interval_box(design, W0, b0, *, steps, learning_rate, lam, sigma, normaliser,
                 rng, fit_intercept, k, mode="remove", gradient_bound):
    """Propagate the AGT interval box through a run of noisy gradient descent.

    Consumes ``rng`` exactly as :func:`skforget._solver.run_segment` does with
    one batch (full-batch steps), so
    with the segment's seeded stream the box contains the nominal run and
    every same-seed run on a neighbour of the design's rows. With ``k = 0`` it
    collapses to the nominal trajectory.

    Parameters
    ----------
    design : Design
        The rows the run used.
    W0, b0 : ndarray
        Start of the run.
    steps : int
    learning_rate, lam, sigma : float
    normaliser : int or None
        Frozen ``N``; None for the spec's current-size variant (remove only).
    rng : numpy.random.Generator
        The segment's noise stream, positioned after the initial draw.
    fit_intercept : bool
    k : int
    mode : {"remove", "replace", "add", "add_remove"}, default="remove"
    gradient_bound : float
        Per-output ``G``.

    Returns
    -------
    box : Box

    Examples
    --------
    >>> import numpy as np
    >>> from skforget._rows import make_design
    >>> from skforget.certify import interval_box
    >>> X = np.array([[1.0], [0.5], [-1.0]])
    >>> design = make_design(X, np.array([1.0, 1.0, 0.0]), loss="logistic",
    ...                      data_norm=1.0, intercept_scaling=1.0,
    ...                      gradient_bound=0.5)
    >>> box = interval_box(design, np.zeros((1, 1)), np.zeros(1), steps=1,
    ...                    learning_rate=1.0, lam=0.1, sigma=0.0, normaliser=3,
    ...                    rng=np.random.default_rng(0), fit_intercept=True, k=1,
    ...                    gradient_bound=0.5)
    >>> [round(float(box.W_lo[0, 0]), 6), round(float(box.W_hi[0, 0]), 6)]
    [0.192387, 0.310238]
    """
    check_mode(mode)
    shrink = 1.0 - learning_rate * lam
    if shrink < 0:
        raise NotCertifiableError("the interval box needs learning_rate * lam <= 1.")
    rows = _augmented(design)
    abs_rows = np.abs(rows)
    W0 = np.atleast_2d(np.asarray(W0, dtype=np.float64))
    K, d = W0.shape
    b0 = np.asarray(b0, dtype=np.float64).reshape(K)
    lo = np.column_stack([W0, b0])
    hi = lo.copy()
    noise_sd = np.sqrt(2.0 * learning_rate) * sigma
    n_coords = d + 1 if fit_intercept else d
    for _ in range(steps):
        centre = (lo + hi) / 2.0
        half = (hi - lo) / 2.0
        z_mid = rows @ centre.T
        z_rad = abs_rows @ half.T
        # psi is non-decreasing in the margin: its range over the box is exact.
        s_lo = clipped_derivative(z_mid - z_rad, design)
        s_hi = clipped_derivative(z_mid + z_rad, design)
        s_mid = (s_lo + s_hi) / 2.0
        s_half = (s_hi - s_lo) / 2.0
        d_up = np.empty_like(lo)
        d_low = np.empty_like(lo)
        for c in range(K):
            U = s_mid[:, c:c + 1] * rows + s_half[:, c:c + 1] * abs_rows
            L = s_mid[:, c:c + 1] * rows - s_half[:, c:c + 1] * abs_rows
            d_up[c], d_low[c] = _mean_gradient_range(
                U, L, k, mode=mode, normaliser=normaliser,
                gradient_bound=gradient_bound)
        # One row of d + 1 standard normals per output and step, the intercept
        # entry last (drawn and unused without an intercept), as the solver does.
        noise = noise_sd * rng.standard_normal((K, d + 1))
        if not fit_intercept:
            noise[:, d] = 0.0
        new_lo = shrink * lo - learning_rate * d_up + noise
        new_hi = shrink * hi - learning_rate * d_low + noise
        lo[:, :n_coords] = new_lo[:, :n_coords]
        hi[:, :n_coords] = new_hi[:, :n_coords]
    return Box(W_lo=lo[:, :d].copy(), b_lo=lo[:, d].copy(), W_hi=hi[:, :d].copy(),
               b_hi=hi[:, d].copy())


def box_margin_bounds(box, rows):
    """Exact range of the margins ``x^T theta_c`` over the box.

    Parameters
    ----------
    box : Box
    rows : ndarray of shape (m, d + 1)
        Augmented query rows ``[a x, s_b]``.

    Returns
    -------
    lo, hi : ndarray of shape (m, K)
    """
    lo = np.column_stack([box.W_lo, box.b_lo])
    hi = np.column_stack([box.W_hi, box.b_hi])
    mid = rows @ ((lo + hi) / 2.0).T
    rad = np.abs(rows) @ ((hi - lo) / 2.0).T
    return mid - rad, mid + rad


def box_coef_norms(box):
    """Least and largest ``||w'||`` over the box, per output: each coordinate
    at its interval's point nearest to 0 (0 when the interval holds it), or
    farthest from 0."""
    lo, hi = np.abs(box.W_lo), np.abs(box.W_hi)
    near = np.where((box.W_lo <= 0) & (box.W_hi >= 0), 0.0, np.minimum(lo, hi))
    return (np.sqrt(np.sum(near ** 2, axis=1)),
            np.sqrt(np.sum(np.maximum(lo, hi) ** 2, axis=1)))


def interval_certify(estimator, X, y, X_query, k, mode="remove"):
    """Certify predictions of a fitted classifier with the AGT interval box.

    A comparison for :meth:`~skforget.NoisyGDClassifier.certify` (the contraction
    ball): it replays the training run on the training rows with the model's
    seeded noise, so it needs ``X, y`` and an integer ``random_state``, and it
    covers models straight out of ``fit`` only. Expect it to certify nothing
    beyond a few tens of steps (certificates.md, Section 4).

    Parameters
    ----------
    estimator : NoisyGDClassifier
        Fitted with an integer ``random_state`` and no ``partial_unlearn`` since.
    X, y : array-like
        The training rows and labels given to ``fit``.
    X_query : array-like
        Rows whose predictions are to be certified.
    k : int
    mode : {"remove", "replace", "add", "add_remove"}, default="remove"

    Returns
    -------
    certified : ndarray of bool of shape (n_queries,)

    Examples
    --------
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.certify import interval_certify
    >>> from skforget.datasets import load_dataset
    >>> d = load_dataset("breast_cancer")
    >>> clf = NoisyGDClassifier(clip_norm=0.5, max_iter=3, batch_size=None,
    ...                         random_state=0)
    >>> clf = clf.fit(d.data, d.target)
    >>> float(interval_certify(clf, d.data, d.target, d.data, k=1).mean()) > 0.5
    True
    """
    lo, hi = _interval_margin_bounds(estimator, X, y, X_query, k, mode)
    tol = 1e-9 * (np.abs(lo) + np.abs(hi)) + 1e-12
    lo, hi = lo - tol, hi + tol
    if lo.shape[1] == 1:
        return (lo[:, 0] > 0) | (hi[:, 0] < 0)
    top = lo.argmax(axis=1)  # the only class that can beat every other
    lo_top = lo[np.arange(len(lo)), top]
    others = hi.copy()
    others[np.arange(len(hi)), top] = -np.inf
    return lo_top > others.max(axis=1)


def _interval_margin_bounds(estimator, X, y, X_query, k, mode="remove"):
    """Bounds ``(lo, hi)``, of shape (n_queries, n_outputs), on the released
    margins (``decision_function``, every public offset and shift included)
    of every same-seed run on a neighbour: at ``k = 0`` both are the model's
    own margins (:func:`interval_certify` adds a rounding slack)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    check_mode(mode)
    plan = estimator._plan
    check_loss(plan.loss)
    if not hasattr(estimator, "classes_"):
        raise NotCertifiableError("interval_certify is for classifiers.")
    check_no_count_shift(estimator)
    g = estimator.privacy_guarantee_
    if g.edits:
        raise NotCertifiableError("interval_certify covers a model straight out of "
                                  "fit; this one has served edits since.")
    # The seed, intercept and row map in force at fit (set_params since does
    # not change what is replayed).
    seed = estimator._param("random_state")
    fit_intercept = estimator._param("fit_intercept")
    if not isinstance(seed, (int, np.integer)):
        raise NotCertifiableError("interval_certify replays the training noise, so "
                                  "it needs an integer random_state.")
    if plan.n_batches > 1:
        raise NotCertifiableError("interval_certify replays full-batch steps; this "
                                  f"model ran {plan.n_batches} batches per pass "
                                  "(fit with batch_size=None).")
    X, y = estimator._validate_rows(X, y, reset=False,
                                    y_numeric=estimator._y_numeric)
    y_enc, n_outputs, loss, _ = estimator._encode_targets(y, fit=False)
    design = estimator._design(X, y_enc, loss, where="X")
    rng = segment_rng(seed, 0)
    W0, b0 = initial_draw(rng, (n_outputs, X.shape[1]),
                          fit_intercept=fit_intercept,
                          init_variance=plan.init_variance)
    G = output_gradient_bound(loss=loss, row_norm=plan.row_norm,
                              clip_norm=plan.clip_norm)
    box = interval_box(design, W0, b0, steps=g.fit_steps,
                       learning_rate=plan.learning_rate, lam=plan.lam,
                       sigma=plan.sigma, normaliser=plan.normaliser, rng=rng,
                       fit_intercept=fit_intercept, k=k, mode=mode,
                       gradient_bound=G)
    W, b = estimator._theta()
    slack = 1e-9 * (np.abs(W).max() + np.abs(b).max()) + 1e-12
    if (np.any(W < box.W_lo - slack) or np.any(W > box.W_hi + slack)
            or np.any(b < box.b_lo - slack) or np.any(b > box.b_hi + slack)):
        raise ValueError("The fitted coefficients are outside the replayed box: X, y "
                         "are not the rows this model was fitted on.")
    query = estimator._validate_rows(X_query, reset=False, order=None)
    query, scale, _ = project_rows(query, estimator._param("data_norm"),
                                   clip_rows=True)
    query = query.toarray() if sp.issparse(query) else np.asarray(query)
    mapped = np.asarray(query, dtype=np.float64) * scale[:, None]
    mid = estimator._midpoint()  # a classifier's (checked above)
    tau = estimator._threshold()
    if tau is not None:
        # Error threshold (certificates.md, 9.12): the released margin is
        # w^T x~ - ||w|| tau, with no intercept term; the same run on a
        # neighbouring database with any w' of the box has a threshold within
        # delta_tau(k, r) of tau, r the box's largest distance to w, and
        # ||w'|| tau' ranges over the product of the two intervals.
        lo, hi = box_margin_bounds(box, np.column_stack(
            [mapped, np.zeros(len(query))]))
        w = np.atleast_2d(np.asarray(estimator.coef_, dtype=np.float64))[0]
        far = np.maximum(np.abs(box.W_hi[0] - w), np.abs(w - box.W_lo[0]))
        move = float(estimator._threshold_change(k, float(np.linalg.norm(far)))[0])
        corners = [float(a[0]) * t for a in box_coef_norms(box)
                   for t in (tau - move, tau + move)]
        lo, hi = lo - max(corners), hi - min(corners)
    elif mid is not None:
        # Class-mean midpoint (certificates.md, 9.11): the released margin is
        # w^T (x~ - c), with no intercept term; the same run on a neighbouring
        # database moves c by at most delta_c(k), which any w' of the box
        # turns into at most max ||w'|| delta_c(k).
        lo, hi = box_margin_bounds(box, np.column_stack(
            [mapped - mid[None, :], np.zeros(len(query))]))
        move = box_coef_norms(box)[1][None, :] * estimator._midpoint_change(k)
        lo, hi = lo - move, hi + move
    else:
        lo, hi = box_margin_bounds(box, np.column_stack(
            [mapped, np.full(len(query), estimator._intercept_scaling())]))
        # The released margins carry the intercept offset: the prevalence
        # offset, which the same run on a neighbouring database moves by at
        # most _offset_change(k) (its count noise is the same draw;
        # certificates.md, Section 9.10), and a multiclass model's shift by
        # public class weights (privacy-accounting.md 18.13), the same for
        # every run (by noisy counts, 18.14, it is refused above).
        change = (estimator._offset_change(k)
                  if "noisy_class_count_" in estimator.__dict__ else 0.0)
        offset = estimator._intercept_offset()
        lo, hi = lo + offset - change, hi + offset + change
    return lo, hi
