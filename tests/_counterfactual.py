"""The same run on a neighbouring database, for certificate tests.

certificates.md 2.1: a prediction certificate bounds the released margin of
the run that a fitted model's own plan, normaliser ``N``, step noise and
statistics noise would have made on the database without some rows. This
helper replays it: the same seed's initial draw and steps on the remaining
rows, then the class statistics (of the kind the model's guarantee records)
from their own stream, and the released intercept they give.
"""

import copy

import numpy as np

from skforget._solver import initial_draw
from skforget._validation import segment_rng


def same_noise_counterfactual(clf, X, y, drop):
    """A copy of ``clf`` refitted by the same run on ``X, y`` without the rows
    ``drop`` (binary models)."""
    keep = np.setdiff1d(np.arange(len(y)), drop)
    Xi, yi = X[keep], y[keep]
    plan = clf._plan
    cf = copy.deepcopy(clf)
    design = cf._design(Xi, yi.astype(np.float64), plan.loss, where="X")
    rng = segment_rng(clf.random_state, 0)
    W0, b0 = initial_draw(rng, clf.coef_.shape, fit_intercept=True,
                          init_variance=plan.init_variance)
    W, b, _ = cf._run_segment(design, W0, b0, plan=plan, steps=plan.fit_steps,
                              segment=0, rng=rng)
    with cf._fit_hyperparameters():
        cf._redraw_counts(lambda: design.class_counts(2),
                          clf.privacy_guarantee_.count_noise, segment=0,
                          exact_moments=lambda u: design.class_moments(2, u),
                          coef=W,
                          statistics=clf.privacy_guarantee_.class_statistics)
        cf._set_coefficients(W, b)
    return cf
