# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-row checks of the clipped gradients, shared by the hostile-input and the
property-based tests: rows mapped exactly as the fitted estimator maps them,
then the kernel run on one row at a time."""

import numpy as np

from skforget._solver import gradient_sum


def mapped_design(est, X, y):
    """The solver's design of ``(X, y)`` for the fitted estimator ``est``."""
    Xv, yv = est._validate_rows(X, y, reset=False, y_numeric=est._y_numeric)
    y_enc, _, loss, _ = est._encode_targets(yv, fit=False)
    return est._design(Xv, y_enc, loss, where="X")


def per_row_gradient_norms(design, W, b):
    """Norm of each row's clipped gradient at ``(W, b)``, per output: (n, K)."""
    out = []
    for i in range(design.n_samples):
        one = type(design)(X=design.X[i:i + 1], y=design.y[i:i + 1],
                           scale=design.scale[i:i + 1], tau=design.tau[i:i + 1],
                           aug_norms=design.aug_norms[i:i + 1],
                           intercept_scaling=design.intercept_scaling,
                           loss=design.loss)
        G, Gb = gradient_sum(one, W, b)
        out.append(np.sqrt(np.sum(G * G, axis=1) + Gb * Gb))
    return np.array(out).reshape(design.n_samples, -1)
