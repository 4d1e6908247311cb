# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Prediction certificates: which predictions no deletion of ``k`` records changes.

The estimators expose the certificates as methods (``certify``,
``certified_k``, ``certified_radius``, ``decision_function_bounds`` /
``predict_bounds``); this module holds the mathematics behind them
(certificates.md):

* the **contraction ball** (:func:`public_radius`, :class:`BallTracker`): every
  same-seed run on a database with up to ``k`` records removed, replaced or
  added ends within a radius ``r(k)`` of the fitted coefficients, so a
  prediction whose margin exceeds ``r(k) ||x||`` cannot change;
* the **interval box** of abstract gradient training (:func:`interval_box`,
  :func:`interval_certify`), kept as a comparison: it is vacuous after a few
  tens of steps on these models.

Everything follows the solver's fixed normaliser ``N``: removing ``k`` rows
changes the mean clipped gradient by at most ``k G / N``.
"""

from skforget.certify._ball import (
    BallTracker,
    HistorySegment,
    ball_step,
    contraction_factors,
    current_size_remove_increments,
    geometric_sum,
    output_gradient_bound,
    public_radius,
    segments_from_guarantee,
    step_increments,
    topsum_table,
)
from skforget.certify._interval import (
    Box,
    box_margin_bounds,
    interval_box,
    interval_certify,
)

__all__ = [
    "BallTracker",
    "Box",
    "HistorySegment",
    "ball_step",
    "box_margin_bounds",
    "contraction_factors",
    "current_size_remove_increments",
    "geometric_sum",
    "interval_box",
    "interval_certify",
    "output_gradient_bound",
    "public_radius",
    "segments_from_guarantee",
    "step_increments",
    "topsum_table",
]
