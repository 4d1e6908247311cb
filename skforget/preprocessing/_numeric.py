# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The releases of a numeric column: a log-binned histogram for its range (and,
for a range far from 0, a linear histogram within it), the noisy sums of its
clipped values for its centre and scale (privacy-accounting.md, Sections
19.1-19.2), and the test for a range of one bin. Each function reads the rows
once, through its noisy release; the rest is post-processing.
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
# Index of the zero bin.
ZERO_BIN = K_MAX - K_MIN + 1
# The largest variance floor of the moments: a column spread evenly over its
# range (Section 19.2 (ii)).
VARIANCE_FLOOR_CAP = 1 / 12
# The refinement of a range far from 0 (Section 19.2 (i')): its share of the
# column's rho (taken from the moments'), its equal sub-bins, the records the
# range must hold (in thresholds of the refinement) for it to be tried, and
# the share of them a narrowed range may leave outside.
REFINE_SHARE = 1 / 12
REFINE_BINS = 32
REFINE_MIN_COUNT = 4
REFINE_TAIL = 0.05


def bounds_threshold(rho, relation, group_size, n_bins=N_BINS):
    """Noise of a bounds histogram at ``rho`` and the count a bin must clear.

    An empty bin passes with probability ``BOUNDS_FALSE_BIN / n_bins``: a
    spurious far bin would stretch the range by orders of magnitude.
    """
    sigma = accounting.gaussian_noise_for_rho(
        rho=rho, sensitivity=accounting.histogram_sensitivity(
            relation=relation, group_size=group_size))
    return sigma, sigma * float(norm.isf(BOUNDS_FALSE_BIN / n_bins))


def _bins(values):
    """Bin index of each observed value in the log-binned histogram (Sec. 19.2)."""
    n_mag = ZERO_BIN
    a = np.abs(values)
    with np.errstate(divide="ignore"):
        k = np.floor(np.log2(np.where(a > 0, a, 1.0))).astype(np.int64)
    k = np.clip(k, K_MIN, K_MAX)
    zero = a < 2.0**K_MIN
    idx = np.where(values > 0, n_mag + 1 + (k - K_MIN), n_mag - 1 - (k - K_MIN))
    return np.where(zero, n_mag, idx), 2 * n_mag + 1


def _bin_edges(b):
    n_mag = ZERO_BIN
    if b == n_mag:
        return -(2.0**K_MIN), 2.0**K_MIN
    k = (b - n_mag - 1 if b > n_mag else n_mag - 1 - b) + K_MIN
    low, high = 2.0**k, 2.0 ** (k + 1)
    return (low, high) if b > n_mag else (-high, -low)


def _zero_bin(lo, hi):
    """Whether ``[lo, hi]`` is the edges of the zero bin of :func:`_bins`."""
    return lo == -(2.0**K_MIN) and hi == 2.0**K_MIN


def _single_bin(lo, hi):
    """Whether ``[lo, hi]`` is the edges of one bin of :func:`_bins`."""
    return _zero_bin(lo, hi) or (lo > 0 and hi == 2 * lo) or (hi < 0 and lo == 2 * hi)


def beyond_resolution(lo, hi):
    """Why a released range misses the values' scale (post-processing of its
    edges), or None: it is the zero bin (every |value| below 2**K_MIN looks
    alike), or it reaches an outer bin (values beyond 2**(K_MAX + 1) in size
    are clipped to it)."""
    if _zero_bin(lo, hi):
        return (f"the histogram's zero bin: zeros and values within +-2**{K_MIN} "
                "look alike; if the values are that small, multiply the column "
                "by a public unit")
    if hi >= 2.0 ** (K_MAX + 1) or lo <= -(2.0 ** (K_MAX + 1)):
        return (f"the histogram's outer bin: values beyond 2**{K_MAX + 1} in size "
                "are clipped there; divide the column by a public unit")
    return None


def _noisy_histogram(values, sigma, rng):
    """The released histogram of Lemma 19.1 (the only read of the rows)."""
    observed = values[~np.isnan(values)]
    idx, n_bins = _bins(observed)
    counts = np.bincount(idx, minlength=n_bins).astype(float)
    return counts + sigma * rng.standard_normal(n_bins)


def _unit(values, lo, hi):
    """The observed values clipped to ``[lo, hi]`` and mapped onto ``[0, 1]``
    (missing ones dropped): what the refinement and the moments count."""
    observed = values[~np.isnan(values)]
    return (np.clip(observed, lo, hi) - lo) / (hi - lo)


def _noisy_sub_histogram(values, lo, hi, sigma, rng):
    """The released histogram of ``REFINE_BINS`` equal sub-bins of ``[lo, hi]``
    (Lemma 19.1; values outside are clipped into the end bins, missing ones
    are in none): the only read of the rows by the refinement."""
    u = _unit(values, lo, hi)
    idx = np.minimum((u * REFINE_BINS).astype(np.int64), REFINE_BINS - 1)
    counts = np.bincount(idx, minlength=REFINE_BINS).astype(float)
    return counts + sigma * rng.standard_normal(REFINE_BINS)


def _noisy_sums(values, lo, hi, sigma, rng):
    """The released sums of Lemma 19.2 (the only read of the rows)."""
    u = _unit(values, lo, hi)
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
    if noisy[ZERO_BIN] > sigma * float(norm.isf(ZERO_ANCHOR)):
        lo, hi = min(lo, -(2.0**K_MIN)), max(hi, 2.0**K_MIN)
    return lo, hi


def _far_from_zero(lo, hi):
    """Whether ``[lo, hi]`` lies within a factor of 4 on one side of 0: a range
    of one or two octaves, where a column's spread can be a sliver of the
    range (years, latitudes, lab values; Section 19.2 (i'))."""
    return (lo > 0 and hi <= 4 * lo) or (hi < 0 and lo >= 4 * hi)


def _narrowed(noisy, sigma, threshold, lo, hi):
    """The refined range from the released sub-histogram (post-processing,
    Section 19.2 (i')), or ``(lo, hi)``.

    The sub-bins whose noisy count clears ``threshold`` span ``w`` bins; the
    range keeps ``w`` more on each side, and narrows only if that is at most
    half of ``[lo, hi]`` and the noisy count left outside is at most
    ``REFINE_TAIL`` of the noisy total plus two standard deviations of its
    noise. A sparse tail clears no bin, so without the last test a peaked
    column with broad shoulders would lose them; the test only refuses
    shoulders that are evidently large, so at a small budget a narrowed range
    can still clip a real tail, whose values then sit at its ends.
    """
    kept = np.flatnonzero(noisy > threshold)
    if kept.size == 0:
        return lo, hi
    width = int(kept[-1] - kept[0] + 1)
    a = max(0, int(kept[0]) - width)
    b = min(REFINE_BINS - 1, int(kept[-1]) + width)
    inside = b - a + 1
    if 2 * inside > REFINE_BINS:
        return lo, hi
    outside = math.fsum(noisy[:a]) + math.fsum(noisy[b + 1:])
    allowed = (REFINE_TAIL * math.fsum(noisy)
               + 2.0 * sigma * math.sqrt(REFINE_BINS - inside))
    if outside > allowed:
        return lo, hi
    step = (hi - lo) / REFINE_BINS
    return lo + a * step, lo + (b + 1) * step


def _private_range(values, rho_col, relation, group_size, rng, target=False):
    """``lo, hi`` of a column, the share of ``rho_col`` they spent, the log
    histogram's own range (which :func:`_single_bin` tests), whether a bin
    cleared the threshold (else the range is the largest noisy bin's), and
    the released log histogram.

    Lemma 19.1: the log histogram (``BOUNDS_SHARE``) gives ``[lo, hi]``; a
    range far from 0 is refined by a linear histogram within it
    (``REFINE_SHARE``, taken from the moments'), tried when the first
    histogram's kept bins hold ``REFINE_MIN_COUNT`` times the count a sub-bin
    must clear. Both tests read released counts and public numbers only, and
    either way the moments get the rest of ``rho_col``: the column's figure is
    the same whichever path its releases took (Section 19.2 (i')). For a
    regressor's ``target`` (Section 19.6) a range that cleared is refined
    whenever the records could fill a sub-bin, and one that did not is not
    refined (the caller decides what the rest of ``rho_col`` buys).
    """
    sigma, threshold = bounds_threshold(rho_col * BOUNDS_SHARE, relation,
                                        group_size)
    noisy = _noisy_histogram(values, sigma, rng)
    cleared = bool(np.any(noisy > threshold))
    lo, hi = _bounds_from_histogram(noisy, sigma, threshold)
    if not _far_from_zero(lo, hi) or (target and not cleared):
        return lo, hi, BOUNDS_SHARE, (lo, hi), cleared, noisy
    sigma_r, threshold_r = bounds_threshold(rho_col * REFINE_SHARE, relation,
                                            group_size, REFINE_BINS)
    # A target's refinement is tried whenever its records could clear a
    # sub-bin (their number is public under both relations): below that a
    # lone sub-bin above the threshold is noise, and the range would narrow
    # onto it.
    if (len(values) < threshold_r if target else
            math.fsum(noisy[noisy > threshold]) < REFINE_MIN_COUNT * threshold_r):
        return lo, hi, BOUNDS_SHARE, (lo, hi), cleared, noisy
    sub = _noisy_sub_histogram(values, lo, hi, sigma_r, rng)
    return (*_narrowed(sub, sigma_r, threshold_r, lo, hi),
            BOUNDS_SHARE + REFINE_SHARE, (lo, hi), cleared, noisy)


def _private_moments(values, lo, hi, rho, relation, group_size, rng):
    """Lemma 19.2: centre and scale from the noisy sums of (u, u^2, 1)."""
    sigma = accounting.gaussian_noise_for_rho(
        rho=rho, sensitivity=accounting.moments_sensitivity(
            relation=relation, group_size=group_size))
    noisy = _noisy_sums(values, lo, hi, sigma, rng)
    m = max(noisy[2], 1.0)
    mean = min(max(noisy[0] / m, 0.0), 1.0)
    # Floor: twice the noise of the sum of squares, divided by the count, but
    # never above 1/12, the variance of values spread evenly over the range:
    # where the noise hides the variance, the range is all that is known, and
    # 1/4 would assume every value at an end of it (Section 19.2 (ii)).
    var = max(noisy[1] / m - mean * mean, min(2.0 * sigma / m, VARIANCE_FLOOR_CAP),
              1e-4)
    return lo + (hi - lo) * mean, (hi - lo) * math.sqrt(min(var, 0.25))


def _pooled_range(values, first, rho_col, relation, group_size, rng):
    """A target's range from two log histograms (Section 19.6, stage two).

    When the first histogram (``BOUNDS_SHARE`` of ``rho_col``) found no range,
    the rest of ``rho_col`` buys a second one instead of the moments; their
    inverse-variance mean is a log histogram released at all of ``rho_col``
    (the Gaussian mechanism's precisions add), read by the column's
    threshold. Without moments, the centre and spread are the range's: its
    midpoint and a quarter of its width (the target scale is then its
    half-width).
    """
    sigma_2, _ = bounds_threshold(rho_col * (1.0 - BOUNDS_SHARE), relation,
                                  group_size)
    second = _noisy_histogram(values, sigma_2, rng)
    # Precisions are 2 rho / Delta^2, so the inverse-variance weights are the
    # rho shares, and the mean is a histogram at all of rho_col, read at the
    # column's threshold there (an empty bin passes with probability 1e-3: a
    # lower one, a false bin at 0.05, kept ranges holding no target in 4 % of
    # fits on 120 to 200 spread-out targets, a second reader measured).
    noisy = BOUNDS_SHARE * first + (1.0 - BOUNDS_SHARE) * second
    sigma, threshold = bounds_threshold(rho_col, relation, group_size)
    cleared = bool(np.any(noisy > threshold))
    lo, hi = _bounds_from_histogram(noisy, sigma, threshold)
    return lo, hi, (lo + hi) / 2.0, (hi - lo) / 4.0, (lo, hi), cleared


def private_column(values, rho_col, relation, group_size, rng, target=False,
                   pooled=False, bounds=None):
    """A column's released ``(lo, hi, centre, scale, octave, cleared)`` at
    ``rho_col``: :func:`_private_range`, then :func:`_private_moments` with the
    rest of ``rho_col`` (Section 19.2; a scaler's column, a regressor's
    ``target``, 19.6). A target whose first histogram found no range spends
    that rest on a second one (:func:`_pooled_range`) when ``pooled`` (its
    figure was fixed for a path that may spend all of ``rho_col`` on
    histograms). A public range (``bounds``, the user's) replaces the
    histograms, and the moments take all of ``rho_col``."""
    if bounds is not None:
        lo, hi = bounds
        c, s = _private_moments(values, lo, hi, rho_col, relation, group_size, rng)
        return lo, hi, c, s, (lo, hi), True
    lo, hi, spent, octave, cleared, first = _private_range(
        values, rho_col, relation, group_size, rng, target)
    if target and pooled and not cleared:
        return _pooled_range(values, first, rho_col, relation, group_size, rng)
    c, s = _private_moments(values, lo, hi, rho_col * (1 - spent), relation,
                            group_size, rng)
    return lo, hi, c, s, octave, cleared
