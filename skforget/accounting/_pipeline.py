# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A pipeline's budget: the figures of privacy-accounting.md, Sections 19.3-19.4.

The split of one total budget between private preprocessing and the estimator
(Section 19.3), the composed guarantee of a pipeline (Theorem 19.5) and the
certificate of an edit served by re-estimation and retraining (Theorem 19.6),
each read by the Gaussian profile when the estimator's figures are GDP
(Corollary 21.9). Public numbers only.
"""

import dataclasses
import math
from dataclasses import dataclass

from skforget.accounting._calibration import deletion_factor
from skforget.accounting._checks import (
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    check_real,
)
from skforget.accounting._conversions import epsilon_to_rho, rho_to_epsilon
from skforget.accounting._guarantee import caveat_lines
from skforget.accounting._preprocessing import (
    _fmt,
    approximate_zcdp_epsilon,
    replacement_rho,
)


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
    conversion : {"gaussian", "improved"}
        How the total reads ``rho``: the Gaussian profile when the estimator's
        figures are GDP (Corollary 21.9, item 2), else the Rényi conversion.
    """

    epsilon: float
    delta: float
    rho: float
    rho_preprocessing: float
    delta_conversion: float
    delta_selection: float
    estimator_epsilon: float
    preprocessing_share: float
    conversion: str = "improved"


def pipeline_conversion(estimator_conversion):
    """The conversion of a pipeline's total (privacy-accounting.md, 21.7).

    ``"gaussian"`` when the estimator's own figures are GDP (its conversion is
    ``"gaussian"``: Corollaries 21.4, 21.5), so that the pipeline is
    approximately GDP (Corollary 21.9, item 2); ``"improved"`` otherwise (a
    Rényi bound only, Proposition 19.4).

    Parameters
    ----------
    estimator_conversion : str

    Returns
    -------
    conversion : {"gaussian", "improved"}

    Examples
    --------
    >>> from skforget.accounting import pipeline_conversion
    >>> pipeline_conversion("gaussian"), pipeline_conversion("improved")
    ('gaussian', 'improved')
    """
    return "gaussian" if estimator_conversion == "gaussian" else "improved"


def split_private_pipeline(*, epsilon, delta, preprocessing_share=0.25,
                           selection_share=0.1, estimator_conversion="improved"):
    """Split one ``(epsilon, delta)`` between private preprocessing and the estimator.

    ``delta_S = selection_share * delta`` for the partition selections,
    ``delta_c = delta - delta_S``; ``rho = epsilon_to_rho(epsilon - ln(1/(1 -
    delta_S)), delta_c)`` by the pipeline's conversion
    (:func:`pipeline_conversion`: the Gaussian profile when the estimator's
    figures are GDP, Corollary 21.9); the preprocessing gets
    ``preprocessing_share * rho`` and the estimator is planned for the rest,
    as an epsilon at ``delta_c`` (privacy-accounting.md, Section 19.3). By
    Theorem 19.5 (Lemma 21.7 for the Gaussian profile) the composed figure is
    then at most the target.

    Parameters
    ----------
    epsilon : float
        Total target epsilon, > 0.
    delta : float
        Total target delta, in (0, 1).
    preprocessing_share : float, default=0.25
        Share of ``rho`` for the preprocessing, in [0, 1) (0: the
        preprocessing releases nothing, every column's categories given).
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
    >>> g = split_private_pipeline(epsilon=1.0, delta=1e-5,
    ...                            estimator_conversion="gaussian")
    >>> g.conversion, round(g.rho, 5), round(g.estimator_epsilon, 5)
    ('gaussian', 0.03547, 0.85419)
    """
    epsilon = check_positive(epsilon, "epsilon")
    delta = check_probability(delta, "delta")
    share = check_real(preprocessing_share, "preprocessing_share", low=0.0, high=1.0,
                       low_open=False)
    sel = check_real(selection_share, "selection_share", low=0.0, high=1.0,
                     low_open=False)
    delta_s = sel * delta
    delta_c = delta - delta_s
    eps_c = epsilon + math.log1p(-delta_s)
    if eps_c <= 0:
        raise ValueError(f"epsilon={epsilon!r} is too small for delta={delta!r}.")
    conversion = pipeline_conversion(estimator_conversion)
    rho = epsilon_to_rho(epsilon=eps_c, delta=delta_c, method=conversion)
    rho_pre = share * rho
    # Shaded: epsilon_to_rho inverts rho_to_epsilon by bisection.
    eps_est = rho_to_epsilon(rho=(1.0 - share) * rho, delta=delta_c,
                             method=estimator_conversion) * (1 - 1e-9)
    return PipelineBudget(epsilon=epsilon, delta=delta, rho=rho,
                          rho_preprocessing=rho_pre, delta_conversion=delta_c,
                          delta_selection=delta_s, estimator_epsilon=eps_est,
                          preprocessing_share=share, conversion=conversion)


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
    conversion : {"gaussian", "improved"}
        How ``rho`` was converted: the Gaussian profile when the estimator's
        figures are GDP (the pipeline is then ``delta_selection``-
        approximately ``sqrt(2 rho)``-GDP, Corollary 21.9), else the Rényi
        conversion (Proposition 19.4).
    seeded : bool
        Some step or the estimator drew its noise from an integer
        ``random_state``: the figures hold only while it stays secret and is
        not used again for a fit on other data.
    selected_by_search : bool
        The estimator is the run a ``PrivateSearchCV`` selected over this
        pipeline's statistics (Theorem 17.5): ``epsilon`` and ``delta`` are
        the search's, and edits are refused (17.4).
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
    conversion: str = "improved"
    seeded: bool = False
    selected_by_search: bool = False

    # Read like a PrivacyGuarantee's (the record store's audit).
    mechanism = "private_pipeline"

    # What the composed figure does not cover is what the estimator's does not
    # (the label set, the target scale), and any step's or its seed.
    @property
    def label_set_public(self):
        return getattr(self.estimator, "label_set_public", True)

    @property
    def target_scale_public(self):
        return getattr(self.estimator, "target_scale_public", True)

    @property
    def noise_seeded(self):
        return bool(self.seeded or getattr(self.estimator, "seeded", False))

    @property
    def caveats(self):
        """What the figure does not cover, one sentence each; [] if nothing."""
        return caveat_lines(seeded=self.noise_seeded,
                            label_set_public=self.label_set_public,
                            target_scale_public=self.target_scale_public)

    @property
    def conversion_note(self):
        """Why the conversion applies (the record store's audit)."""
        if self.selected_by_search:
            return ("The figure of the PrivateSearchCV that selected the model over "
                    "these statistics: a Rényi curve outside the selections' events, "
                    "converted by Proposition 19.4 (privacy-accounting.md, Theorem "
                    "17.5).")
        if self.conversion != "gaussian":
            return ("Rényi bound q*rho outside the selections' events, converted "
                    "by Proposition 19.4 (privacy-accounting.md, Section 19).")
        return (f"sqrt(2 rho)-GDP outside the category selections' events of "
                f"probability {self.delta_selection:.3g} (privacy-accounting.md, "
                "Corollary 21.9), converted by Lemma 21.7.")

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
        how = (f"(Rényi: q*{_fmt(self.rho)} at every order q > 1"
               + (f", outside events of probability {self.delta_selection:.3g}"
                  if self.delta_selection else "") + ")")
        if self.selected_by_search:
            how = ("(the PrivateSearchCV's figure: the model is the run it "
                   "selected over these statistics, Theorem 17.5; edits are refused)")
        lines = [f"({_fmt(self.epsilon)}, {self.delta:.3g})-DP for every {unit} "
                 f"present, {relation}, preprocessing and model together {how}. "
                 "Parts:"]
        lines.extend(f"  {name}: rho={_fmt(rho)}" + (f", delta={d:.3g}" if d else "")
                     for name, rho, d in self.parts[:-1])
        lines.append(f"  estimator: rho={_fmt(self.parts[-1][1])} (its target, for "
                     f"every release above; this model: {_fmt(self.estimator.rho)})")
        cert = self.deletion
        if self.selected_by_search:
            lines[-1] = lines[-1].replace(" (its target, for every release above;",
                                          " (one candidate run's target, not the "
                                          "model's figure;")
        elif cert is None:
            lines.append("No records deleted yet; partial_unlearn re-estimates every "
                         "statistic with fresh noise and retrains the model, so "
                         "deleted records will have no influence on either.")
        elif cert.n_deleted + cert.n_replaced == 0:
            lines.append(
                f"Last edit (edit {cert.index}): {cert.n_inserted} inserted, no "
                "record removed; statistics re-estimated with fresh noise and the "
                "model retrained from a fresh start.")
        else:
            lines.append(
                f"Deleted records (edit {cert.index}: {cert.n_deleted} deleted, "
                f"{cert.n_replaced} replaced, {cert.n_inserted} inserted): statistics "
                "re-estimated with fresh noise and the model retrained from a fresh "
                "start, so they have no influence on either; against requests "
                f"adapted to {cert.releases_seen} earlier release(s): "
                f"({_fmt(cert.epsilon_adaptive)}, {cert.delta_adaptive:.3g}).")
            if self.target_epsilon is not None and \
                    cert.epsilon_adaptive > self.target_epsilon:
                # As an estimator's text says it (a trial found the pipeline's
                # silent while its edit warned).
                lines.append(
                    f"The adaptive figure ({_fmt(cert.epsilon_adaptive)}) exceeds "
                    f"the pipeline's target epsilon {_fmt(self.target_epsilon)}: a "
                    "requester who chose requests after seeing the "
                    f"{cert.releases_seen} earlier releases learns more about the "
                    "deleted records than a fresh fit would reveal about a present "
                    "one. A new fit on the current database restarts the count.")
        for path, how in self.public_preprocessing:
            lines.append(f"  public step {path}: {how}")
        lines.extend(self.caveats)
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
                               target_epsilon=None, preprocessing_rho_replace=None,
                               seeded=False):
    """The guarantee of private preprocessing followed by an estimator (Thm 19.5).

    ``rho`` is the sum of the parts' rho-coefficients and the estimator's
    bound uniform in the releases (:func:`estimator_rho_bound`; Theorem 18.3,
    order by order), the selections' deltas add (Bun & Steinke 2016, Lemma
    8.3), and Proposition 19.4 converts; by the Gaussian profile (Lemma 21.7)
    when the estimator's figures are GDP (Corollary 21.9, item 2).

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
    seeded : bool, default=False
        A preprocessing step drew from an integer ``random_state`` (the
        estimator's own flag is read from its guarantee).

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
    conversion = pipeline_conversion(getattr(estimator_guarantee, "conversion",
                                             "improved"))
    eps, delta = approximate_zcdp_epsilon(rho=rho, delta_conversion=delta_conversion,
                                          delta_selection=delta_s, method=conversion)
    selected = getattr(estimator_guarantee, "selected_by_search", False)
    if selected:
        # The run a search selected over these statistics: no run's figure
        # covers it, the search's does (Theorem 17.5), statistics included.
        eps, delta = estimator_guarantee.epsilon, estimator_guarantee.delta
    return PipelineGuarantee(epsilon=eps, delta=delta, rho=rho,
                             delta_conversion=float(delta_conversion),
                             delta_selection=delta_s, parts=parts,
                             relation=estimator_guarantee.relation,
                             group_size=estimator_guarantee.group_size,
                             estimator=estimator_guarantee,
                             public_preprocessing=tuple(public_preprocessing),
                             edits=tuple(edits), target_epsilon=target_epsilon,
                             rho_replace=rho_replace, conversion=conversion,
                             seeded=bool(seeded) or getattr(estimator_guarantee,
                                                            "seeded", False),
                             selected_by_search=selected)


def pipeline_edit_certificate(*, index, rho_releases, delta_selections, delta,
                              n_deleted, n_replaced, n_inserted, n_samples,
                              rho_replace_releases=None, conversion="improved"):
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
    conversion : {"improved", "gaussian"}, default="improved"
        The pipeline's (``PipelineGuarantee.conversion``): with
        ``"gaussian"`` the chain of releases is approximately GDP (Corollary
        21.9, item 3) and Lemma 21.7 converts.

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
    if not n_deleted and not n_replaced:
        # Nothing removed, nothing to protect against adapted requests (as
        # an estimator's insertion reports 0; a trial read 2.155 of none).
        rho_adaptive = 0.0
    if not rho_adaptive:
        eps = 0.0
    elif delta_s >= delta:
        eps = math.inf
    else:
        eps, _ = approximate_zcdp_epsilon(rho=rho_adaptive,
                                          delta_conversion=delta - delta_s,
                                          delta_selection=delta_s,
                                          method=pipeline_conversion(conversion))
    return PipelineEdit(index=check_int(index, "index", low=1),
                        n_deleted=int(n_deleted), n_replaced=int(n_replaced),
                        n_inserted=int(n_inserted), n_samples=int(n_samples),
                        releases_seen=len(rhos), rho_adaptive=rho_adaptive,
                        epsilon_adaptive=eps, delta_adaptive=delta)
