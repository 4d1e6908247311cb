# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The releases of a numeric column: a log-binned histogram for its range, the
noisy sums of its clipped values for its centre and scale (privacy-accounting.md,
Sections 19.1-19.2), and the test for a range of one bin. Each function reads
the rows once, through its noisy release; the rest is post-processing.
"""

import math

import numpy as np
from scipy.stats import norm

from skforget import accounting

# Log bins of the bounds histogram (privacy-accounting.md, Section 19.2).
K_MIN, K_MAX = -10, 50
# Probability that some empty bin of a column passes the bounds threshold.
BOUNDS_FALSE_BIN = 1e-3
# Share of a numeric column's rho spent on its bounds (the rest: moments).
BOUNDS_SHARE = 1 / 3
# Probability that a column without zeros has its range stretched to 0 by the
# zero bin's noise (privacy-accounting.md, Section 19.2 (i)).
ZERO_ANCHOR = 1e-2
# Number of bins: +-[2^k, 2^(k+1)) for K_MIN <= k <= K_MAX, and the zero bin.
N_BINS = 2 * (K_MAX - K_MIN + 1) + 1


def bounds_threshold(rho, relation, group_size):
    """Noise of the bounds histogram at ``rho`` and the count a bin must clear.

    An empty bin passes with probability ``BOUNDS_FALSE_BIN / n_bins``: a
    spurious far bin would stretch the range by orders of magnitude.
    """
    sigma = accounting.gaussian_noise_for_rho(
        rho=rho, sensitivity=accounting.histogram_sensitivity(
            relation=relation, group_size=group_size))
    return sigma, sigma * float(norm.isf(BOUNDS_FALSE_BIN / N_BINS))


def _bins(values):
    """Bin index of each observed value in the log-binned histogram (Sec. 19.2)."""
    n_mag = K_MAX - K_MIN + 1
    a = np.abs(values)
    with np.errstate(divide="ignore"):
        k = np.floor(np.log2(np.where(a > 0, a, 1.0))).astype(np.int64)
    k = np.clip(k, K_MIN, K_MAX)
    zero = a < 2.0**K_MIN
    idx = np.where(values > 0, n_mag + 1 + (k - K_MIN), n_mag - 1 - (k - K_MIN))
    return np.where(zero, n_mag, idx), 2 * n_mag + 1


def _bin_edges(b):
    n_mag = K_MAX - K_MIN + 1
    if b == n_mag:
        return -(2.0**K_MIN), 2.0**K_MIN
    k = (b - n_mag - 1 if b > n_mag else n_mag - 1 - b) + K_MIN
    low, high = 2.0**k, 2.0 ** (k + 1)
    return (low, high) if b > n_mag else (-high, -low)


def _single_bin(lo, hi):
    """Whether ``[lo, hi]`` is the edges of one bin of :func:`_bins`."""
    if lo == -(2.0**K_MIN) and hi == 2.0**K_MIN:
        return True
    return (lo > 0 and hi == 2 * lo) or (hi < 0 and lo == 2 * hi)


def _noisy_histogram(values, sigma, rng):
    """The released histogram of Lemma 19.1 (the only read of the rows)."""
    observed = values[~np.isnan(values)]
    idx, n_bins = _bins(observed)
    counts = np.bincount(idx, minlength=n_bins).astype(float)
    return counts + sigma * rng.standard_normal(n_bins)


def _noisy_sums(values, lo, hi, sigma, rng):
    """The released sums of Lemma 19.2 (the only read of the rows)."""
    observed = values[~np.isnan(values)]
    u = (np.clip(observed, lo, hi) - lo) / (hi - lo)
    # Correctly rounded sums: the release does not depend on the rows' order.
    sums = np.array([math.fsum(u), math.fsum(u * u), float(u.size)])
    return sums + sigma * rng.standard_normal(3)


def _bounds_from_histogram(noisy, sigma, threshold):
    """``lo, hi`` from the released histogram (post-processing, Section 19.2 (i)).

    The edges of the lowest and highest bins that clear ``threshold`` (else of
    the largest bin), then 0 joined to the range when the zero bin clears the
    lower ``sigma * isf(ZERO_ANCHOR)``. Zero is the one value real columns pile
    up on (no spending, no event, a count of none), and a range of positive
    octaves clipped the zeros into its lowest bin, merging "none" with "a
    little" (AER's CreditCard: balanced accuracy 0.83 against 0.91 with it). A
    false anchor costs at most half the resolution of a positive range, where
    a false far bin costs orders of magnitude: hence the lower threshold.
    """
    kept = np.flatnonzero(noisy > threshold)
    if kept.size == 0:
        kept = np.array([int(np.argmax(noisy))])
    lo, hi = _bin_edges(int(kept[0]))[0], _bin_edges(int(kept[-1]))[1]
    if noisy[K_MAX - K_MIN + 1] > sigma * float(norm.isf(ZERO_ANCHOR)):
        lo, hi = min(lo, -(2.0**K_MIN)), max(hi, 2.0**K_MIN)
    return lo, hi


def _private_bounds(values, rho, relation, group_size, rng):
    """Lemma 19.1: lo, hi from the noisy log histogram (a third of the column's
    rho, ``BOUNDS_SHARE``)."""
    sigma, threshold = bounds_threshold(rho, relation, group_size)
    return _bounds_from_histogram(_noisy_histogram(values, sigma, rng), sigma,
                                  threshold)


def _private_moments(values, lo, hi, rho, relation, group_size, rng):
    """Lemma 19.2: centre and scale from the noisy sums of (u, u^2, 1)."""
    sigma = accounting.gaussian_noise_for_rho(
        rho=rho, sensitivity=accounting.moments_sensitivity(
            relation=relation, group_size=group_size))
    noisy = _noisy_sums(values, lo, hi, sigma, rng)
    m = max(noisy[2], 1.0)
    mean = min(max(noisy[0] / m, 0.0), 1.0)
    # Floor: twice the noise of the sum of squares, divided by the count.
    var = max(noisy[1] / m - mean * mean, 2.0 * sigma / m, 1e-4)
    return lo + (hi - lo) * mean, (hi - lo) * math.sqrt(min(var, 0.25))
