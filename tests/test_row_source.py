"""The solver's row-source boundary: it does not care where rows live.

A row source answers ``n_samples``, ``loss``, ``gradient_sum`` and
``run_steps``; the generator, the noise, the step sizes and the batch layout
stay with the solver. A source whose rows sit in two shards, each with its own
public row map computed locally, must give the in-memory result up to the
order of floating-point sums.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from skforget._rows import make_design
from skforget._solver import LOSS_CODES, run_segment
from skforget.accounting import Segment

MAP = dict(data_norm=1.0, intercept_scaling=1.0, gradient_bound=1.0)


class TwoShards:
    """Rows split in two; one gradient message per shard per step."""

    def __init__(self, X, y, cut, loss):
        self.parts = [make_design(X[:cut], y[:cut], loss=loss, **MAP),
                      make_design(X[cut:], y[cut:], loss=loss, **MAP)]
        self.n_samples = X.shape[0]
        self.loss = loss
        self.messages = 0

    def gradient_sum(self, W, b, G, Gb, *, loss_code, weight=None, n_threads=1):
        assert weight is None
        G[:], Gb[:] = 0.0, 0.0
        for part in self.parts:
            g, gb = np.empty_like(G), np.empty_like(Gb)
            part.gradient_sum(W, b, g, gb, loss_code=loss_code)
            self.messages += 1
            G += g
            Gb += gb

    def run_steps(self, W, b, *, order, bounds, first_batch, etas, noise, sigma,
                  lam, inv_B, loss_code, fit_intercept, weight=None, n_threads=1):
        assert bounds.shape[0] == 2 and order.shape[0] == 0  # full batch
        G, Gb = np.empty_like(W), np.empty_like(b)
        for t, eta in enumerate(etas):
            self.gradient_sum(W, b, G, Gb, loss_code=loss_code, weight=weight)
            shrink, step, sd = 1.0 - eta * lam, eta * inv_B, math.sqrt(2 * eta) * sigma
            W[:] = shrink * W - step * G + sd * noise[t, :, :-1]
            if fit_intercept:
                b[:] = shrink * b - step * Gb + sd * noise[t, :, -1]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss, K", [("logistic", 1), ("multinomial", 3),
                                     ("squared", 1)])
def test_sharded_source_matches_in_memory(sparse, loss, K):
    rng = np.random.default_rng(0)
    n, d = 500, 6
    X = rng.standard_normal((n, d)) * 0.6  # some rows over data_norm=1
    y = rng.integers(0, 2 if K == 1 else K, n).astype(float)
    if sparse:
        X = sp.csr_matrix(X * (rng.random((n, d)) < 0.5))
    segment = Segment(1, 40, 0.5)
    run = dict(segment=segment, lam=0.01, sigma=0.05, normaliser=n,
               fit_intercept=True)
    W0 = rng.standard_normal((K, d))
    b0 = rng.standard_normal(K)
    in_memory = run_segment(make_design(X, y, loss=loss, **MAP), W0, b0,
                            rng=np.random.default_rng(7), **run)
    shards = TwoShards(X, y, 313, loss)
    sharded = run_segment(shards, W0, b0, rng=np.random.default_rng(7), **run)
    assert shards.messages == 2 * 40
    for got, ref in zip(sharded, in_memory, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_over_part_of_an_order(sparse):
    # What a shard computes for its part of a mini-batch.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 4)) * 0.7
    y = rng.integers(0, 3, 200).astype(float)
    if sparse:
        X = sp.csr_matrix(X * (rng.random((200, 4)) < 0.5))
    design = make_design(X, y, loss="multinomial", **MAP)
    order = rng.permutation(200).astype(np.int64)
    W, b = rng.standard_normal((3, 4)), rng.standard_normal(3)
    G, Gb = np.empty((3, 4)), np.empty(3)
    code = LOSS_CODES["multinomial"]
    design.gradient_sum(W, b, G, Gb, loss_code=code, order=order, lo=50, hi=120)
    rows = order[50:120]
    part = make_design(X[rows], y[rows], loss="multinomial", **MAP)
    G_ref, Gb_ref = np.empty((3, 4)), np.empty(3)
    part.gradient_sum(W, b, G_ref, Gb_ref, loss_code=code)
    np.testing.assert_allclose(G, G_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Gb, Gb_ref, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="lo=150, hi=120"):
        design.gradient_sum(W, b, G, Gb, loss_code=code, order=order, lo=150, hi=120)
    with pytest.raises(ValueError, match="out of range"):
        design.gradient_sum(W, b, G, Gb, loss_code=code, order=order + 1, lo=0,
                            hi=200)
