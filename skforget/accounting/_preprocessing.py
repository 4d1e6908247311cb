# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private preprocessing: the figures of privacy-accounting.md, Section 19.

Gaussian histograms and clipped moments (Lemmas 19.1, 19.2), partition
selection as approximate zCDP (Proposition 19.3), its conversion
(Proposition 19.4), the split of one total budget between the preprocessing
and the estimator (Section 19.3) and the composed guarantee of a pipeline
(Theorems 19.5, 19.6). Public numbers only.
"""

import dataclasses
import math
from dataclasses import dataclass

from scipy.stats import norm

from skforget.accounting._calibration import deletion_factor
from skforget.accounting._checks import (
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    check_real,
)
from skforget.accounting._conversions import epsilon_to_rho, rho_to_epsilon

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


def approximate_zcdp_epsilon(*, rho, delta_conversion, delta_selection=0.0):
    """``(epsilon, delta)`` of a ``delta_S``-approximately ``rho``-zCDP mechanism.

    ``epsilon = rho_to_epsilon(rho, delta_c) + ln(1 / (1 - delta_S))`` and
    ``delta = delta_c + delta_S`` (privacy-accounting.md, Proposition 19.4;
    Bun & Steinke 2016, Definition 8.1).

    Parameters
    ----------
    rho : float
        Rho-coefficient of the conditioned mechanism.
    delta_conversion : float
        ``delta_c`` of the Rényi conversion (Section 6.4), in (0, 1).
    delta_selection : float, default=0.0
        ``delta_S``, the bad events' total probability, in [0, 1).

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
    eps = rho_to_epsilon(rho=rho, delta=delta_c) - math.log1p(-delta_s)
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

    def epsilon(self, delta):
        """``(epsilon, delta)`` at a total ``delta`` (Proposition 19.4)."""
        delta = check_probability(delta, "delta")
        if delta <= self.delta_selection:
            raise ValueError(f"delta={delta!r} must exceed the selections' "
                             f"{self.delta_selection!r}.")
        return approximate_zcdp_epsilon(rho=self.rho,
                                        delta_conversion=delta - self.delta_selection,
                                        delta_selection=self.delta_selection)

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


@dataclass(frozen=True)
class PipelineBudget:
    """One total ``(epsilon, delta)`` split between preprocessing and estimator.

    Attributes
    ----------
    epsilon, delta : float
        The total target.
    rho : float
        Rho-coefficient of the whole pipeline at ``delta_conversion``.
    rho_preprocessing : float
        The preprocessing's share of ``rho``.
    delta_conversion : float
        Delta of the Rényi conversion (the estimator's delta).
    delta_selection : float
        Delta left for the partition selections, all columns together.
    estimator_epsilon : float
        Epsilon target of the estimator, at ``delta_conversion``.
    preprocessing_share : float
    """

    epsilon: float
    delta: float
    rho: float
    rho_preprocessing: float
    delta_conversion: float
    delta_selection: float
    estimator_epsilon: float
    preprocessing_share: float


def split_private_pipeline(*, epsilon, delta, preprocessing_share=0.25,
                           selection_share=0.1, estimator_conversion="improved"):
    """Split one ``(epsilon, delta)`` between private preprocessing and the estimator.

    ``delta_S = selection_share * delta`` for the partition selections,
    ``delta_c = delta - delta_S``; ``rho = epsilon_to_rho(epsilon - ln(1/(1 -
    delta_S)), delta_c)``; the preprocessing gets ``preprocessing_share * rho``
    and the estimator is planned for the rest, as an epsilon at ``delta_c``
    (privacy-accounting.md, Section 19.3). By Theorem 19.5 the composed figure
    is then at most the target.

    Parameters
    ----------
    epsilon : float
        Total target epsilon, > 0.
    delta : float
        Total target delta, in (0, 1).
    preprocessing_share : float, default=0.25
        Share of ``rho`` for the preprocessing, in (0, 1).
    selection_share : float, default=0.1
        Share of ``delta`` for the partition selections, in [0, 1).
    estimator_conversion : {"improved", "classic", "gaussian"}, default="improved"
        The conversion the estimator calibrates its target with: its epsilon
        is the reading of its share of ``rho`` by that conversion, so that the
        estimator's own inverse gives it at most that share (the Gaussian
        inverse gives the largest rho of every conversion, Section 21.5).

    Returns
    -------
    budget : PipelineBudget

    Examples
    --------
    >>> from skforget.accounting import split_private_pipeline
    >>> b = split_private_pipeline(epsilon=1.0, delta=1e-5)
    >>> round(b.rho_preprocessing, 7), round(b.estimator_epsilon, 5)
    (0.0075521, 0.85536)
    """
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    share = check_real(preprocessing_share, "preprocessing_share", low=0.0, high=1.0)
    sel = check_real(selection_share, "selection_share", low=0.0, high=1.0,
                     low_open=False)
    delta_s = sel * delta
    delta_c = delta - delta_s
    eps_c = epsilon + math.log1p(-delta_s)
    if eps_c <= 0:
        raise ValueError(f"epsilon={epsilon!r} is too small for delta={delta!r}.")
    rho = epsilon_to_rho(epsilon=eps_c, delta=delta_c)
    rho_pre = share * rho
    # Shaded: epsilon_to_rho inverts rho_to_epsilon by bisection.
    eps_est = rho_to_epsilon(rho=(1.0 - share) * rho, delta=delta_c,
                             method=estimator_conversion) * (1 - 1e-9)
    return PipelineBudget(epsilon=epsilon, delta=delta, rho=rho,
                          rho_preprocessing=rho_pre, delta_conversion=delta_c,
                          delta_selection=delta_s, estimator_epsilon=eps_est,
                          preprocessing_share=share)


@dataclass(frozen=True)
class PipelineEdit:
    """Certificate of one edit of a pipeline with private preprocessing.

    The edit re-estimated every statistic with fresh noise and retrained the
    estimator from a fresh start (privacy-accounting.md, Theorem 19.6): the
    removed records' deletion divergence is 0.

    Attributes
    ----------
    index : int
        1-based number of the edit since ``fit``.
    n_deleted, n_replaced, n_inserted, n_samples : int
    retrained : bool
        Always True.
    rho_deletion : float
        0.
    releases_seen : int
        Releases an adaptive requester could have seen before the edit.
    rho_adaptive, epsilon_adaptive, delta_adaptive : float
        Against a requester adapting to those releases (Theorem 19.6).
    """

    index: int
    n_deleted: int
    n_replaced: int
    n_inserted: int
    n_samples: int
    releases_seen: int
    rho_adaptive: float
    epsilon_adaptive: float
    delta_adaptive: float
    retrained: bool = True
    rho_deletion: float = 0.0

    # Read like an EditCertificate's (the record store's audit): nothing of
    # the removed records is left, whole edit included; no noisy step is run.
    epsilon_deletion = 0.0
    rho_deletion_batch = 0.0
    epsilon_deletion_batch = 0.0
    steps = 0

    def to_dict(self):
        """Plain ``dict`` of the fields (JSON-serialisable)."""
        return dataclasses.asdict(self)

    def __str__(self):
        return (f"Edit {self.index}: {self.n_deleted} deleted, {self.n_replaced} "
                f"replaced, {self.n_inserted} inserted ({self.n_samples} records "
                "now). Statistics re-estimated with fresh noise and the model "
                "retrained from a fresh start: the removed records have no "
                "influence on either (Rényi divergence 0); against requests "
                f"adapted to {self.releases_seen} earlier release(s): "
                f"({_fmt(self.epsilon_adaptive)}, {self.delta_adaptive:.3g}).")


@dataclass(frozen=True)
class PipelineGuarantee:
    """Guarantee of a pipeline: private preprocessing composed with the estimator.

    Attributes
    ----------
    epsilon, delta : float
        The composed figure (Theorem 19.5, Proposition 19.4).
    rho : float
        ``sum`` of the parts' rho-coefficients.
    delta_conversion, delta_selection : float
        ``delta = delta_conversion + delta_selection``.
    parts : tuple of (str, float, float)
        ``(name, rho, delta_selection)`` of each part, the estimator last with
        its bound uniform in the releases (Theorem 19.5).
    relation : str
    group_size : int
    estimator : PrivacyGuarantee
        The estimator's own guarantee on its input rows; its ``rho`` (this
        fit's, which depends on the releases) is for information only.
    public_preprocessing : tuple of (str, str)
        Public steps, as for :class:`~skforget.pipeline.ForgetPipeline`.
    edits : tuple of PipelineEdit
    target_epsilon : float or None
        The total target, when the pipeline was built from one.
    rho_replace : float or None
        Rho of the same releases against a replaced unit, parts scaled to
        their replace-one sensitivity (Theorem 19.6); ``rho`` under replace.
    """

    epsilon: float
    delta: float
    rho: float
    delta_conversion: float
    delta_selection: float
    parts: tuple
    relation: str
    group_size: int
    estimator: object
    public_preprocessing: tuple = ()
    edits: tuple = ()
    target_epsilon: float | None = None
    rho_replace: float | None = None

    # Read like a PrivacyGuarantee's (the record store's audit).
    conversion = "improved"
    mechanism = "private_pipeline"

    @property
    def deletion(self):
        """Certificate of the latest edit, or None right after ``fit``."""
        return self.edits[-1] if self.edits else None

    @property
    def references(self):
        """The results the figures rest on."""
        return (*self.estimator.references,
                "privacy-accounting.md, Section 19 (Theorems 19.5, 19.6)",
                "M. Bun, T. Steinke, Concentrated Differential Privacy, TCC 2016, "
                "Definition 8.1 and Lemma 8.3")

    def __str__(self):
        relation = {"replace": "replace-one", "zero_out": "zero-out"}[self.relation]
        unit = ("record" if self.group_size == 1
                else f"group of {self.group_size} records")
        lines = [f"({_fmt(self.epsilon)}, {self.delta:.3g})-DP for every {unit} "
                 f"present, {relation}, preprocessing and model together "
                 f"(Rényi: q*{_fmt(self.rho)} at every order q > 1, outside events "
                 f"of probability {self.delta_selection:.3g}). Parts:"]
        lines.extend(f"  {name}: rho={_fmt(rho)}" + (f", delta={d:.3g}" if d else "")
                     for name, rho, d in self.parts[:-1])
        lines.append(f"  estimator: rho={_fmt(self.parts[-1][1])} (its target, for "
                     f"every release above; this model: {_fmt(self.estimator.rho)})")
        cert = self.deletion
        if cert is None:
            lines.append("No records deleted yet; partial_unlearn re-estimates every "
                         "statistic with fresh noise and retrains the model, so "
                         "deleted records will have no influence on either.")
        else:
            lines.append(
                f"Deleted records (edit {cert.index}: {cert.n_deleted} deleted, "
                f"{cert.n_replaced} replaced, {cert.n_inserted} inserted): statistics "
                "re-estimated with fresh noise and the model retrained from a fresh "
                "start, so they have no influence on either; against requests "
                f"adapted to {cert.releases_seen} earlier release(s): "
                f"({_fmt(cert.epsilon_adaptive)}, {cert.delta_adaptive:.3g}).")
        for path, how in self.public_preprocessing:
            lines.append(f"  public step {path}: {how}")
        return "\n".join(lines)

    def to_dict(self):
        """Plain ``dict`` (the estimator's guarantee as its own ``to_dict``)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["estimator"] = self.estimator.to_dict()
        out["parts"] = [list(p) for p in self.parts]
        out["public_preprocessing"] = [list(p) for p in self.public_preprocessing]
        out["edits"] = [e.to_dict() for e in self.edits]
        return out


def estimator_rho_bound(estimator_guarantee):
    """The estimator's rho-coefficient, uniformly in the releases (Thm 19.5).

    The estimator's realised rho depends on the releases (through the number
    of one-hot columns the selections chose, for instance), so the chain rule
    needs its supremum over them: the rho its target ``(epsilon, delta)``
    allows under its own conversion, ``epsilon_to_rho(target_epsilon, delta,
    method=conversion)``, which every plan meets (privacy-accounting.md,
    Theorem 19.5); the realised value if ever larger.

    Parameters
    ----------
    estimator_guarantee : PrivacyGuarantee
        Its ``target_epsilon``, ``delta``, ``conversion`` and ``rho`` are read.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from skforget.accounting import epsilon_to_rho, estimator_rho_bound
    >>> g = SimpleNamespace(target_epsilon=0.85536, delta=9e-6,
    ...                     conversion="improved", rho=0.0194)
    >>> estimator_rho_bound(g) == epsilon_to_rho(epsilon=0.85536, delta=9e-6)
    True
    """
    g = estimator_guarantee
    bound = epsilon_to_rho(epsilon=g.target_epsilon, delta=g.delta,
                           method=getattr(g, "conversion", "improved"))
    return max(bound, float(g.rho))


def compose_pipeline_guarantee(*, parts, estimator_guarantee, delta_conversion,
                               public_preprocessing=(), edits=(),
                               target_epsilon=None, preprocessing_rho_replace=None):
    """The guarantee of private preprocessing followed by an estimator (Thm 19.5).

    ``rho`` is the sum of the parts' rho-coefficients and the estimator's
    bound uniform in the releases (:func:`estimator_rho_bound`; Theorem 18.3,
    order by order), the selections' deltas add (Bun & Steinke 2016, Lemma
    8.3), and Proposition 19.4 converts.

    Parameters
    ----------
    parts : sequence of (str, float, float)
        ``(name, rho, delta_selection)`` of each preprocessing release.
    estimator_guarantee : PrivacyGuarantee
        Its target, ``relation`` and ``group_size`` are read; its realised
        ``rho`` is kept for information (``PipelineGuarantee.estimator``).
    delta_conversion : float
    public_preprocessing : tuple, default=()
    edits : tuple of PipelineEdit, default=()
    target_epsilon : float, default=None
    preprocessing_rho_replace : float, default=None
        The parts' rho against a replaced unit (``ReleaseGuarantee.rho_replace``
        summed); None: :func:`replacement_rho` of all parts as histograms. The
        estimator's is scaled by :func:`deletion_factor` (Section 6.2).

    Returns
    -------
    guarantee : PipelineGuarantee
    """
    parts = tuple((str(n), check_nonnegative(r, "rho"),
                   check_nonnegative(d, "delta_selection")) for n, r, d in parts)
    rho_pre = math.fsum(r for _, r, _ in parts)
    relation = estimator_guarantee.relation
    pre_replace = (replacement_rho(histogram_rho=rho_pre, relation=relation)
                   if preprocessing_rho_replace is None
                   else max(rho_pre, check_nonnegative(preprocessing_rho_replace,
                                                       "preprocessing_rho_replace")))
    rho_est = estimator_rho_bound(estimator_guarantee)
    parts += (("estimator", rho_est, 0.0),)
    rho = math.fsum(r for _, r, _ in parts)
    rho_replace = pre_replace + rho_est * deletion_factor(plan_relation=relation,
                                                          n_replaced=1)
    delta_s = math.fsum(d for _, _, d in parts)
    eps, delta = approximate_zcdp_epsilon(rho=rho, delta_conversion=delta_conversion,
                                          delta_selection=delta_s)
    return PipelineGuarantee(epsilon=eps, delta=delta, rho=rho,
                             delta_conversion=float(delta_conversion),
                             delta_selection=delta_s, parts=parts,
                             relation=estimator_guarantee.relation,
                             group_size=estimator_guarantee.group_size,
                             estimator=estimator_guarantee,
                             public_preprocessing=tuple(public_preprocessing),
                             edits=tuple(edits), target_epsilon=target_epsilon,
                             rho_replace=rho_replace)


def pipeline_edit_certificate(*, index, rho_releases, delta_selections, delta,
                              n_deleted, n_replaced, n_inserted, n_samples,
                              rho_replace_releases=None):
    """Certificate of an edit served by re-estimation and retraining (Thm 19.6).

    Deletion divergence 0; against a requester adapting to the earlier
    releases, the sum of their rho-coefficients at the deletion sensitivity
    (``rho_releases`` for deletions, a zero-out pair; ``rho_replace_releases``
    once a unit is replaced, a replace pair whatever the relation), with the
    sum of their
    selections' deltas (Theorem 6.3 with ``rho_del = 0``; Bun & Steinke 2016,
    Lemma 8.3), converted by Proposition 19.4 at the total ``delta`` of the
    pipeline's guarantee: ``epsilon = rho_to_epsilon(rho, delta - delta_S) +
    ln(1/(1 - delta_S))``, infinite (no statement at that delta) once the
    selections' deltas add up to ``delta``.

    Parameters
    ----------
    index : int
        1-based number of the edit.
    rho_releases, delta_selections : sequence of float
        Of each release the requester could have seen (the fit and the
        earlier edits).
    delta : float
        Total delta of the pipeline's guarantee.
    n_deleted, n_replaced, n_inserted, n_samples : int
    rho_replace_releases : sequence of float, default=None
        Of each release against a replaced unit (``PipelineGuarantee.
        rho_replace``); required when ``n_replaced > 0``.

    Returns
    -------
    certificate : PipelineEdit

    Examples
    --------
    >>> from skforget.accounting import pipeline_edit_certificate
    >>> cert = pipeline_edit_certificate(
    ...     index=2, rho_releases=[0.03, 0.03], delta_selections=[1e-6, 1e-6],
    ...     delta=1e-5, n_deleted=1, n_replaced=0, n_inserted=0, n_samples=99)
    >>> cert.rho_deletion, round(cert.rho_adaptive, 6), cert.releases_seen
    (0.0, 0.06, 2)
    """
    rhos = [check_nonnegative(r, "rho_releases") for r in rho_releases]
    if n_replaced:
        if rho_replace_releases is None:
            raise ValueError("rho_replace_releases is needed when n_replaced > 0: a "
                             "replaced unit is compared with a replace pair.")
        replaced = [check_nonnegative(r, "rho_replace_releases")
                    for r in rho_replace_releases]
        if len(replaced) != len(rhos):
            raise ValueError("rho_releases and rho_replace_releases differ in "
                             "length.")
        rhos = [max(r, q) for r, q in zip(rhos, replaced, strict=True)]
    deltas = [check_nonnegative(d, "delta_selections") for d in delta_selections]
    if len(rhos) != len(deltas):
        raise ValueError("rho_releases and delta_selections differ in length.")
    delta = check_probability(delta, "delta")
    rho_adaptive, delta_s = math.fsum(rhos), math.fsum(deltas)
    if delta_s >= delta:
        eps = math.inf
    else:
        eps, _ = approximate_zcdp_epsilon(rho=rho_adaptive,
                                          delta_conversion=delta - delta_s,
                                          delta_selection=delta_s)
    return PipelineEdit(index=check_int(index, "index", low=1),
                        n_deleted=int(n_deleted), n_replaced=int(n_replaced),
                        n_inserted=int(n_inserted), n_samples=int(n_samples),
                        releases_seen=len(rhos), rho_adaptive=rho_adaptive,
                        epsilon_adaptive=eps, delta_adaptive=delta)
