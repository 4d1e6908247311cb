# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private preprocessing: the figures of privacy-accounting.md, Section 19.

Gaussian histograms and clipped moments (Lemmas 19.1, 19.2), partition
selection as approximate zCDP (Proposition 19.3) and its conversion
(Proposition 19.4; Lemma 21.7 for the Gaussian profile), and the guarantee of
a step's releases (Section 19.2). The pipeline's split and composed figures
are in ``_pipeline.py``. Public numbers only.
"""

import math
from dataclasses import dataclass

from scipy.stats import norm

from skforget.accounting._checks import (
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    check_real,
)
from skforget.accounting._conversions import rho_to_epsilon

RELATIONS = ("replace", "zero_out")


def _fmt(x):
    return f"{x:.3g}" if (x >= 100 or x < 1e-3) else f"{x:.4g}"


def histogram_sensitivity(*, relation="replace", group_size=1):
    """L2 sensitivity of a histogram with at most one bin per record (Lemma 19.1).

    ``sqrt(2) g`` under ``"replace"``, ``g`` under ``"zero_out"``
    (privacy-accounting.md, Lemma 19.1, from Lemma 18.1). Also the sensitivity
    of the value counts behind a partition selection (Proposition 19.3).

    Parameters
    ----------
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1
        Records per privacy unit ``g``.

    Returns
    -------
    sensitivity : float

    Examples
    --------
    >>> from skforget.accounting import histogram_sensitivity
    >>> round(histogram_sensitivity(relation="replace"), 6)
    1.414214
    """
    check_choice(relation, "relation", RELATIONS)
    g = check_int(group_size, "group_size", low=1)
    return math.sqrt(2.0) * g if relation == "replace" else float(g)


def moments_sensitivity(*, relation="replace", group_size=1):
    """L2 sensitivity of the sums ``(u, u**2, 1)`` of a clipped column (Lemma 19.2).

    ``sqrt(3) g`` under both relations (privacy-accounting.md, Lemma 19.2).

    Parameters
    ----------
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1

    Returns
    -------
    sensitivity : float

    Examples
    --------
    >>> from skforget.accounting import moments_sensitivity
    >>> round(moments_sensitivity(group_size=2), 6)
    3.464102
    """
    check_choice(relation, "relation", RELATIONS)
    g = check_int(group_size, "group_size", low=1)
    return math.sqrt(3.0) * g


def gaussian_noise_for_rho(*, rho, sensitivity):
    """Noise of a Gaussian release with rho-coefficient ``rho``: ``Delta/sqrt(2 rho)``.

    Inverse of ``rho = Delta**2 / (2 sigma**2)`` (Mironov 2017, Proposition 7;
    privacy-accounting.md, (18.1) and (19.1)).

    Parameters
    ----------
    rho : float
        Target rho-coefficient, > 0.
    sensitivity : float
        L2 sensitivity ``Delta`` of the released sum, > 0.

    Returns
    -------
    sigma : float

    Examples
    --------
    >>> from skforget.accounting import gaussian_noise_for_rho
    >>> gaussian_noise_for_rho(rho=0.5, sensitivity=1.0)
    1.0
    """
    rho = check_positive(rho, "rho")
    sensitivity = check_positive(sensitivity, "sensitivity")
    return sensitivity / math.sqrt(2.0 * rho)


def rho_gaussian(*, noise_scale, sensitivity):
    """Rho-coefficient of a Gaussian release: ``Delta**2 / (2 sigma**2)``.

    The Rényi curve of the Gaussian mechanism is exactly ``q Delta**2 /
    (2 sigma**2)`` (Mironov 2017, Proposition 7; privacy-accounting.md,
    Proposition 18.2 and (19.1)).

    Parameters
    ----------
    noise_scale : float
        Standard deviation ``sigma`` of the noise on each coordinate, > 0.
    sensitivity : float
        L2 sensitivity ``Delta``, >= 0.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import rho_gaussian
    >>> rho_gaussian(noise_scale=2.0, sensitivity=2.0)
    0.5
    """
    sigma = check_positive(noise_scale, "noise_scale")
    sensitivity = check_nonnegative(sensitivity, "sensitivity")
    return sensitivity**2 / (2.0 * sigma**2)


def replacement_rho(*, histogram_rho=0.0, moments_rho=0.0, relation="replace"):
    """Rho of Gaussian releases against a replaced unit (Theorem 19.6).

    A release calibrated for ``relation`` has ``rho = Delta**2 / (2 sigma**2)``;
    against a replace pair its ``Delta`` is the replace-one sensitivity,
    whatever ``relation``: ``sqrt(2) g`` for a histogram or the counts of a
    selection (Lemma 19.1), ``g`` under zero-out, so twice the rho; ``sqrt(3)
    g`` for the moments under both relations (Lemma 19.2), the same rho
    (privacy-accounting.md, Theorem 19.6).

    Parameters
    ----------
    histogram_rho : float, default=0.0
        Rho of the histograms and selection counts, under ``relation``.
    moments_rho : float, default=0.0
        Rho of the moments, under ``relation``.
    relation : {"replace", "zero_out"}, default="replace"

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from skforget.accounting import replacement_rho
    >>> replacement_rho(histogram_rho=0.01, moments_rho=0.02, relation="zero_out")
    0.04
    """
    check_choice(relation, "relation", RELATIONS)
    hist = check_nonnegative(histogram_rho, "histogram_rho")
    moments = check_nonnegative(moments_rho, "moments_rho")
    return (2.0 if relation == "zero_out" else 1.0) * hist + moments


def partition_selection_delta(*, noise_scale, threshold, group_size=1):
    """The delta of Gaussian partition selection: ``g * sf((tau - g) / sigma)``.

    A value held only by the changed unit (at most ``g`` such values, each
    counted at most ``g`` times) is selected with probability at most
    ``sf((tau - g) / sigma)`` (privacy-accounting.md, Proposition 19.3).

    Parameters
    ----------
    noise_scale : float
        ``sigma`` of the noise on each count, > 0.
    threshold : float
        ``tau``: a value is selected when its noisy count exceeds it.
    group_size : int, default=1

    Returns
    -------
    delta : float

    Examples
    --------
    >>> from skforget.accounting import partition_selection_delta
    >>> f"{partition_selection_delta(noise_scale=1.0, threshold=5.0):.3e}"
    '3.167e-05'
    """
    sigma = check_positive(noise_scale, "noise_scale")
    tau = check_real(threshold, "threshold")
    g = check_int(group_size, "group_size", low=1)
    return min(1.0, g * float(norm.sf((tau - g) / sigma)))


def partition_selection(*, rho, delta, relation="replace", group_size=1):
    """Noise and threshold of a partition selection with figures ``(rho, delta)``.

    ``sigma = Delta / sqrt(2 rho)`` with ``Delta`` of
    :func:`histogram_sensitivity`, and ``tau = g + sigma * isf(delta / g)``, the
    smallest threshold whose :func:`partition_selection_delta` is ``delta``
    (privacy-accounting.md, Proposition 19.3).

    Parameters
    ----------
    rho : float
        Rho-coefficient of the counts, > 0.
    delta : float
        Probability bound of the selection's bad event, in (0, 1).
    relation : {"replace", "zero_out"}, default="replace"
    group_size : int, default=1

    Returns
    -------
    sigma, threshold : float

    Examples
    --------
    >>> from skforget.accounting import partition_selection
    >>> sigma, tau = partition_selection(rho=0.01, delta=1e-6)
    >>> round(sigma, 4), round(tau, 2)
    (10.0, 48.53)
    """
    delta = check_probability(delta, "delta")
    sensitivity = histogram_sensitivity(relation=relation, group_size=group_size)
    sigma = gaussian_noise_for_rho(rho=rho, sensitivity=sensitivity)
    g = int(group_size)
    return sigma, g + sigma * float(norm.isf(delta / g))


def approximate_zcdp_epsilon(*, rho, delta_conversion, delta_selection=0.0,
                             method="improved"):
    """``(epsilon, delta)`` of a ``delta_S``-approximately ``rho``-zCDP mechanism.

    ``epsilon = rho_to_epsilon(rho, delta_c) + ln(1 / (1 - delta_S))`` and
    ``delta = delta_c + delta_S`` (privacy-accounting.md, Proposition 19.4;
    Bun & Steinke 2016, Definition 8.1). With ``method="gaussian"`` the
    mechanism must be ``delta_S``-approximately ``sqrt(2 rho)``-GDP
    (Definition 21.6), and the Gaussian profile converts (Lemma 21.7).

    Parameters
    ----------
    rho : float
        Rho-coefficient of the conditioned mechanism.
    delta_conversion : float
        ``delta_c`` of the Rényi conversion (Section 6.4), in (0, 1).
    delta_selection : float, default=0.0
        ``delta_S``, the bad events' total probability, in [0, 1).
    method : {"improved", "gaussian"}, default="improved"
        The conversion of the conditioned mechanism's ``rho``: the Rényi one
        (Section 6.4), or the Gaussian profile for an approximately GDP
        mechanism (Section 21.7).

    Returns
    -------
    epsilon, delta : float

    Examples
    --------
    >>> from skforget.accounting import approximate_zcdp_epsilon, rho_to_epsilon
    >>> eps, delta = approximate_zcdp_epsilon(rho=0.03, delta_conversion=9e-6,
    ...                                       delta_selection=1e-6)
    >>> delta
    1e-05
    >>> bool(eps > rho_to_epsilon(rho=0.03, delta=9e-6))
    True
    """
    delta_c = check_probability(delta_conversion, "delta_conversion")
    delta_s = check_real(delta_selection, "delta_selection", low=0.0, high=1.0,
                         low_open=False)
    eps = rho_to_epsilon(rho=rho, delta=delta_c, method=method) - math.log1p(-delta_s)
    return eps, delta_c + delta_s


@dataclass(frozen=True)
class ReleaseGuarantee:
    """Figures of a private preprocessing step's releases (Section 19.2).

    Attributes
    ----------
    rho : float
        Rho-coefficient of all its releases together (they add, Theorem 18.3).
    delta_selection : float
        Total probability of the partition selections' bad events
        (Proposition 19.3; 0 for a scaler or an imputer).
    relation : {"replace", "zero_out"}
    group_size : int
    columns : tuple of (str, float, float)
        ``(column, rho, delta_selection)`` per input column.
    rho_replace : float
        Rho of the same releases against a replaced unit, which Theorem 19.6
        uses under zero-out (:func:`replacement_rho`); ``rho`` under replace.
    """

    rho: float
    delta_selection: float
    relation: str
    group_size: int
    columns: tuple
    rho_replace: float | None = None
    #: Gaussian mechanisms outside the selections' events (Corollary 21.9):
    #: a ledger composes the step as GDP (``PrivacyLedger.record``).
    conversion = "gaussian"

    def epsilon(self, delta):
        """``(epsilon, delta)`` at a total ``delta``: the releases are
        ``delta_S``-approximately ``sqrt(2 rho)``-GDP (Corollary 21.9, item 1),
        converted by Lemma 21.7."""
        delta = check_probability(delta, "delta")
        if delta <= self.delta_selection:
            raise ValueError(f"delta={delta!r} must exceed the selections' "
                             f"{self.delta_selection!r}.")
        return approximate_zcdp_epsilon(rho=self.rho,
                                        delta_conversion=delta - self.delta_selection,
                                        delta_selection=self.delta_selection,
                                        method="gaussian")

    def __str__(self):
        eps, delta = self.epsilon(max(1e-5, 2 * self.delta_selection))
        return (f"Releases of {len(self.columns)} column(s): ({_fmt(eps)}, "
                f"{delta:.3g})-DP (Rényi: q*{_fmt(self.rho)} at every order q > 1"
                + (f", outside events of probability {self.delta_selection:.3g}"
                   if self.delta_selection else "") + ").")


def release_guarantee(*, columns, relation, group_size, rho_replace=None):
    """The guarantee of a step's releases: ``rho`` and ``delta`` add (Thm 18.3,
    Bun & Steinke 2016 Lemma 8.3; privacy-accounting.md, Section 19.2).

    Parameters
    ----------
    columns : sequence of (str, float, float)
        ``(column, rho, delta_selection)``.
    relation : {"replace", "zero_out"}
    group_size : int
    rho_replace : float, default=None
        Of the same releases against a replaced unit (:func:`replacement_rho`);
        None: the largest of Lemmas 19.1 and 19.2, ``replacement_rho(
        histogram_rho=rho, relation=relation)``.

    Returns
    -------
    guarantee : ReleaseGuarantee

    Examples
    --------
    >>> from skforget.accounting import release_guarantee
    >>> release_guarantee(columns=[("a", 0.01, 0.0), ("b", 0.02, 1e-7)],
    ...                   relation="replace", group_size=1).delta_selection
    1e-07
    """
    check_choice(relation, "relation", RELATIONS)
    columns = tuple((str(c), check_nonnegative(r, "rho"),
                     check_nonnegative(d, "delta_selection")) for c, r, d in columns)
    rho = math.fsum(r for _, r, _ in columns)
    rho_replace = (replacement_rho(histogram_rho=rho, relation=relation)
                   if rho_replace is None else
                   max(rho, check_nonnegative(rho_replace, "rho_replace")))
    return ReleaseGuarantee(rho=rho,
                            delta_selection=math.fsum(d for _, _, d in columns),
                            relation=relation,
                            group_size=check_int(group_size, "group_size", low=1),
                            columns=columns, rho_replace=rho_replace)
