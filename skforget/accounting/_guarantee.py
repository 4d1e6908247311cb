# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Readable, immutable privacy guarantees attached to fitted models."""

import dataclasses
from dataclasses import dataclass, field

REFERENCES = (
    "[CS23] Chourasia & Shah, Forget Unlearning: Towards True Data-Deletion in "
    "Machine Learning, ICML 2023 (Def. 4.1, Thm 4.3, Def. 5.1, Thm 5.1)",
    "[FMTT18] Feldman, Mironov, Talwar & Thakurta, Privacy Amplification by "
    "Iteration, FOCS 2018 (Lemma 20, Thm 22)",
    "[M17] Mironov, Rényi Differential Privacy, CSF 2017 (Prop. 1, 3)",
    "[BBGHS20] Balle, Barthe, Gaboardi, Hsu & Sato, Hypothesis Testing "
    "Interpretations and Rényi DP, AISTATS 2020 (Thm 21)",
    "skforget privacy-accounting spec, eqs. (5.1)-(5.5), Thms 6.2-6.3",
    "[CMS11] Chaudhuri, Monteleoni & Sarwate, Differentially Private Empirical "
    "Risk Minimization, JMLR 2011 (Cor. 8; output perturbation, spec Section 15)",
    "[DRS22] Dong, Roth & Su, Gaussian Differential Privacy, JRSS-B 2022 "
    "(Lemma 2.9, Cor. 2.13, Thm 3.2, Cor. 3.3); spec Section 21 (Cor. 21.4)",
)

#: Why a guarantee's epsilon uses the conversion it records (spec Section 21).
CONVERSION_NOTES = {
    "gaussian": "exact Gaussian profile of mu = sqrt(2 rho): every figure of "
                "the model (units present, deleted, adaptive requests) is "
                "mu-Gaussian DP, not only a Renyi bound (spec Section 21, "
                "Corollaries 21.4, 21.5; a Gaussian mechanism for output "
                "perturbation, 15.4)",
    "improved": "Renyi curve q * rho converted by Balle et al. 2020, Thm 21 "
                "(spec Section 6.4)",
    "classic": "Renyi curve q * rho converted by Mironov 2017, Prop. 3 "
               "(spec Section 6.4)",
}


def _set_state(obj, state):
    """Restore a frozen slotted dataclass from a state that may lack the
    fields appended since it was pickled (they get their defaults)."""
    fields = dataclasses.fields(obj)
    for f, value in zip(fields[:len(state)], state, strict=True):
        object.__setattr__(obj, f.name, value)
    for f in fields[len(state):]:
        default = f.default if f.default is not dataclasses.MISSING \
            else f.default_factory()
        object.__setattr__(obj, f.name, default)


# What a deletion served without a pass leaves (review findings 6-7).
_REDRAWN = (
    "on the current database at every edit that passes over the data, and kept "
    "with the coefficients, charged to the deletion figure, at a deletion served "
    "without a pass (privacy-accounting.md, Theorem 12.12).")
_NO_PASS = (
    "served without computation: the coefficients are identical to those before "
    "this request. The removed records' protection is the differential "
    "privacy of the model's last release, measured against a model trained "
    "with an empty record in its place; "
    "their influence stays in the coefficients until the next pass over the data "
    "(a replacement, an insertion, a stronger target, or more records awaiting a "
    "pass than max_lazy_records allows).")


def _fmt(x):
    if x == 0:
        return "0"
    if x >= 100 or x < 1e-3:
        return f"{x:.3g}"
    return f"{x:.4g}"


@dataclass(frozen=True, slots=True)
class EditCertificate:
    """Deletion certificate of one ``partial_unlearn`` call.

    All figures are rho-coefficients (``R_q <= q * rho`` at every order ``q > 1``)
    and their (epsilon, delta) conversions at the guarantee's delta.

    Attributes
    ----------
    index : int
        1-based number of the edit since ``fit``.
    n_deleted, n_replaced, n_inserted : int
        Rows removed, replaced (the old version counts as deleted) and added.
    n_samples : int
        Size of the edited database.
    steps : int
        Noisy gradient steps run on the edited database (``K_R``).
    rho_deletion, epsilon_deletion : float
        Per privacy unit removed by this edit, non-adaptive requests (Thm 6.2).
    rho_deletion_batch, epsilon_deletion_batch : float
        The whole edit treated as one unit (``r**2`` times the per-unit figure).
    releases_seen : int
        Releases an adaptive requester could have seen before this edit.
    rho_adaptive, epsilon_adaptive : float
        Per unit, against a requester that adapts to those releases (Thm 6.3).
    retrained : bool
        True when the edit was served by training afresh on the edited data (a
        new initial draw and fresh noise): the removed records then have no
        influence at all on the new model (``rho_deletion = 0``). The estimator
        retrains when that costs no more passes than the unlearning steps.
    data_weight : float
        Largest batch of the edit's steps divided by the batch normaliser
        (public; enters the contraction, Lemma 3.1).
    n_batches : int
        Batches per pass of the edit's steps (the fit's, or more when the edited
        database would make a batch outgrow the step size's headroom).
    n_pending : int
        For an edit served without a pass over the data (``steps == 0``, not
        retrained: the release already met the deletion target, Theorem
        12.9): records removed without a pass since the last one, this edit's
        included; 0 otherwise.
    rho_pending_group, epsilon_pending_group : float
        Those ``n_pending`` records together, as one unit (``n_pending**2``
        times the per-unit figure); 0 when ``n_pending`` is 0.
    statistics_drawn : bool
        Whether the release after this edit drew its class statistics afresh
        (a model that releases none: vacuously True). An edit served without
        a pass keeps those of the last pass and charges them to its deletion
        figure instead (privacy-accounting.md, Theorem 12.12). True for the
        edits of a certificate pickled before the field existed: those
        redrew them.
    """

    index: int
    n_deleted: int
    n_replaced: int
    n_inserted: int
    n_samples: int
    steps: int
    rho_deletion: float
    epsilon_deletion: float
    rho_deletion_batch: float
    epsilon_deletion_batch: float
    releases_seen: int
    rho_adaptive: float
    epsilon_adaptive: float
    retrained: bool = False
    data_weight: float = 1.0
    n_batches: int = 1
    n_pending: int = 0
    rho_pending_group: float = 0.0
    epsilon_pending_group: float = 0.0
    statistics_drawn: bool = True

    def __setstate__(self, state):
        # A certificate pickled before a field was added lacks it (fields are
        # only ever appended): it gets the field's default.
        _set_state(self, state)

    @property
    def without_pass(self):
        """True when the edit ran no step: the release already certified the
        removed records (Theorem 12.9) and no row was read."""
        return self.steps == 0 and not self.retrained \
            and self.n_deleted + self.n_replaced > 0

    @property
    def n_edited(self):
        """Total rows named by the edit."""
        return self.n_deleted + self.n_replaced + self.n_inserted

    @property
    def passes(self):
        """Passes over the edited database (``steps / n_batches``)."""
        return self.steps // self.n_batches

    def to_dict(self):
        """Plain ``dict`` of the fields (JSON-serialisable)."""
        return dataclasses.asdict(self)

    def __str__(self):
        if self.n_deleted + self.n_replaced == 0:
            return (
                f"Edit {self.index}: {self.n_inserted} inserted ({self.n_samples} rows "
                "now), "
                + ("refitted from scratch with fresh noise"
                   if self.retrained and self.steps == 0 else
                   f"{self.steps} noisy steps"
                   + (" from a fresh start" if self.retrained else ""))
                + "; no record removed, so no deletion to certify."
            )
        if self.without_pass:
            return (
                f"Edit {self.index}: {self.n_deleted} deleted ({self.n_samples} rows "
                f"now), {_NO_PASS} Each removed record: epsilon "
                f"{_fmt(self.epsilon_deletion)} (Theorem 12.9; 12.12 with class "
                "statistics kept)"
                + (f"; the edit's {self.n_deleted} records together: epsilon "
                   f"{_fmt(self.epsilon_deletion_batch)}" if self.n_deleted > 1
                   else "")
                + (f"; the {self.n_pending} records awaiting a pass, together: "
                   f"epsilon {_fmt(self.epsilon_pending_group)}"
                   if self.n_pending > 1 else "")
                + f"; against requests adapted to {self.releases_seen} earlier "
                f"release(s): epsilon {_fmt(self.epsilon_adaptive)}."
            )
        if self.retrained:
            # Output perturbation runs no noisy steps: its edits are refits.
            how = ("refitted from scratch with fresh noise" if self.steps == 0 else
                   f"retrained from a fresh start in {self.steps} noisy steps")
            return (
                f"Edit {self.index}: {self.n_deleted} deleted, {self.n_replaced} "
                f"replaced, {self.n_inserted} inserted ({self.n_samples} rows now); "
                f"{how}: the "
                "removed records have no influence on the new model; against "
                f"requests adapted to {self.releases_seen} earlier release(s): "
                f"epsilon {_fmt(self.epsilon_adaptive)}."
            )
        return (
            f"Edit {self.index}: {self.n_deleted} deleted, {self.n_replaced} replaced, "
            f"{self.n_inserted} inserted ({self.n_samples} rows now), {self.steps} "
            f"noisy steps. Each removed record: Rényi q*{_fmt(self.rho_deletion)} "
            f"(epsilon {_fmt(self.epsilon_deletion)} at the guarantee's delta) from "
            "never having been seen; "
            + (f"the edit's {self.n_deleted + self.n_replaced} removed records "
               f"together: epsilon {_fmt(self.epsilon_deletion_batch)}; "
               if self.n_deleted + self.n_replaced > 1 else "")
            + f"against requests adapted to {self.releases_seen} earlier release(s): "
            f"epsilon {_fmt(self.epsilon_adaptive)}."
        )


def caveat_lines(*, seeded, label_set_public=True, target_scale_public=True):
    """What a guarantee's figure does not cover, one sentence each: a given
    seed, a label set or a target scale read from the rows."""
    lines = []
    if seeded:
        lines.append("Noise drawn from a given random_state (an integer or a "
                     "RandomState, whose state at fit the model keeps): the "
                     "guarantee holds only while that seed, and the model's "
                     "pickle, stay secret, and a fit with the same seed on other "
                     "data draws the same noise (two such releases are not "
                     "covered).")
    if not label_set_public:
        lines.append("The label set was read from the training labels and is "
                     "not covered, and edits keep it (a deleted record's label "
                     "stays in classes_): pass classes=... to make it public.")
    if not target_scale_public:
        lines.append("No public target_scale: the targets were read to decide "
                     "whether to warn about their scale (one bit, not covered); "
                     "pass target_scale=... to make it public.")
    return lines


@dataclass(frozen=True, slots=True)
class PrivacyGuarantee:
    """What a fitted or unlearned model guarantees, in numbers and in words.

    Build it with :func:`skforget.accounting.guarantee_after_fit` and
    :func:`skforget.accounting.guarantee_after_edit`; estimators expose it as
    ``privacy_guarantee_``. Every number comes from those functions, which cite
    the result they apply. ``str()`` gives the statement in plain words and
    :meth:`to_dict` a serialisable record.

    Attributes
    ----------
    epsilon, delta : float
        (epsilon, delta)-DP for every record present in the current database,
        under ``relation`` (replace-one by default).
    rho : float
        The same statement as a Rényi curve: ``R_q <= q * rho`` for all ``q > 1``.
    rho_inf : float
        Stationary level, which ``rho`` never exceeds however many edits follow.
    order : float
        Rényi order at which the conversion to ``epsilon`` is tightest (info).
    relation : {"replace", "zero_out"}
        Neighbouring relation. ``"replace"``: one record swapped for any other.
    group_size : int
        Records per privacy unit (one person's rows).
    conversion : {"gaussian", "improved", "classic"}
        Conversion of every ``rho`` to ``epsilon`` (the edits' too).
        ``"gaussian"``: the figures are ``sqrt(2 rho)``-GDP (privacy-accounting.md,
        Section 21) and ``epsilon`` is the exact Gaussian profile.
    target_epsilon, target_deletion_epsilon : float
        The targets the run was planned for.
    noise_scale, learning_rate, regularization : float
        ``sigma`` (per-step noise ``N(0, 2 eta sigma^2)``), ``eta`` and ``lambda``.
    clip_norm : float or None
        Per-record gradient clipping threshold ``L`` (None: not clipped).
    row_norm : float
        Public bound ``R`` on the augmented row norm, enforced on every row.
    gradient_bound, sensitivity : float
        ``G`` and ``S`` of the accountant.
    normaliser : int
        Public gradient normaliser ``N`` (database size at fit, then frozen).
    contraction : float
        Contraction factor ``c`` of one noiseless step (worst over the history).
    fit_steps, total_steps : int
        Steps of ``fit`` and of the whole history.
    n_samples : int
        Size of the current database.
    edits : tuple of EditCertificate
        One certificate per ``partial_unlearn`` call, oldest first.
    seeded : bool
        True when the noise came from an integer ``random_state``: the guarantee
        then assumes that seed is secret.
    recipe : {"tight", "cs23"}
        How noise and step counts were planned.
    label_set_public : bool
        False when a classifier read its label set from the training labels
        instead of a public ``classes``: the figures then do not cover the
        label set (one record with a rare label changes the model's shape).
    target_scale_public : bool
        False when a regressor was fitted without a public ``target_scale``:
        it then read the targets to decide whether to warn that they lie far
        outside what clipping fits, one bit the figures do not cover.
    n_batches : int
        Batches per pass over the data (1: full-batch gradient descent).
    fit_data_weight : float
        Largest batch of the fit divided by the batch normaliser.
    noise_factor : float
        ``sigma^2`` divided by the full-batch noise for the same target
        (privacy-accounting.md, Section 12.6); 1 for full batch.
    references : tuple of str
        The results the figures rest on.
    preprocessing : tuple of (str, str)
        Preprocessing inside the guarantee, one ``(step, why it is public)``
        pair per step (set by :class:`~skforget.pipeline.ForgetPipeline`;
        empty for a bare estimator).
    selected_by_search : bool
        The model is the run a :class:`~skforget.model_selection.PrivateSearchCV`
        selected (no validation part): ``epsilon`` and ``delta`` are then the
        search's, which cover it; the other figures describe one run, which
        does not (privacy-accounting.md, 17.4).
    retrained_by_pipeline : bool
        The model is a private pipeline's final step, fitted by the pipeline
        on its current records: the pipeline's edits retrain it (Theorem
        19.6), so its own deletion figure does not describe them; the text
        says so in place of "No records deleted yet".
    mechanism : {"noisy_gd", "output_perturbation"}
        How the model was released: noisy gradient descent, or one certified
        solve plus Gaussian noise (privacy-accounting.md, Section 15; the step
        fields are then 0, ``noise_scale`` is the standard deviation of the
        noise added to the coefficients and every edit is a refit).
    tol : float
        Output perturbation only: the relative gradient tolerance ``t`` of the
        certified solve (the sensitivity is ``(1 + 2t) S / (N lambda)``).
    rho_counts : float
        Rho-coefficient of the noisy class counts released with the model
        (privacy-accounting.md, Section 18), included in ``rho``; 0 when the
        model releases none. Redrawn with fresh noise at every edit that
        passes over the data, kept at one served without a pass (Theorem 12.12).
    count_noise : float
        Standard deviation of the noise on each class count, in records.
    conversion_note : str
        Why ``conversion`` is valid for this figure (the theorem it rests on).
    class_statistics : {"counts", "class_means", "class_moments"}
        What the ``rho_counts`` release holds: the class counts behind the
        prevalence offset (Section 18.3), or the class counts and the class
        sums of the rows behind the class-mean midpoint of
        ``class_weight="balanced"`` (Section 18.11; ``count_noise`` is then
        also the noise on each coordinate of a sum, in units of the row bound),
        or those and the pooled sum of squared scores behind the default error
        threshold (Section 18.12; in units of the squared row bound).
    """

    epsilon: float
    delta: float
    rho: float
    rho_inf: float
    order: float
    relation: str
    group_size: int
    conversion: str
    target_epsilon: float
    target_deletion_epsilon: float
    noise_scale: float
    learning_rate: float
    regularization: float
    clip_norm: float | None
    row_norm: float
    gradient_bound: float
    sensitivity: float
    normaliser: int
    contraction: float
    fit_steps: int
    total_steps: int
    n_samples: int
    edits: tuple = ()
    seeded: bool = False
    recipe: str = "tight"
    label_set_public: bool = True
    target_scale_public: bool = True
    n_batches: int = 1
    fit_data_weight: float = 1.0
    noise_factor: float = 1.0
    references: tuple = field(default=REFERENCES, repr=False)
    preprocessing: tuple = ()
    mechanism: str = "noisy_gd"
    tol: float = 0.0
    rho_counts: float = 0.0
    count_noise: float = 0.0
    conversion_note: str = ""
    class_statistics: str = "counts"
    selected_by_search: bool = False
    retrained_by_pipeline: bool = False

    def __setstate__(self, state):
        # A guarantee pickled before a field was added (fields are only ever
        # appended) lacks it: it gets the field's default, which describes the
        # older models (e.g. mechanism="noisy_gd").
        _set_state(self, state)

    @property
    def deletion(self):
        """Certificate of the latest edit, or None right after ``fit``."""
        return self.edits[-1] if self.edits else None

    @property
    def adaptive_exceeds_target(self):
        """Whether the latest edit's figure against adaptive requests has
        passed the target epsilon the model was planned for."""
        cert = self.deletion
        return cert is not None and cert.epsilon_adaptive > self.target_epsilon

    @property
    def mu(self):
        """``sqrt(2 rho)`` when the figure is ``mu``-GDP (``conversion ==
        "gaussian"``, Section 21), else None: a Rényi bound alone does not
        imply it."""
        from skforget.accounting._conversions import gdp_mu

        if self.selected_by_search:   # the search's figure: a Rényi curve
            return None
        return gdp_mu(rho=self.rho) if self.conversion == "gaussian" else None

    @property
    def advantage(self):
        """Bound on TPR - FPR of any membership test on a present record."""
        from skforget.accounting._conversions import advantage_bound, advantage_bound_dp

        if self.selected_by_search:
            # ``rho`` is one run's; the model's figure is the search's
            # (epsilon, delta), whose curve has no rho-coefficient (17.4).
            return advantage_bound_dp(epsilon=self.epsilon, delta=self.delta)
        return advantage_bound(rho=self.rho)

    @property
    def caveats(self):
        """What the figure does not cover, one sentence each (a given seed, a
        label set or target scale read from the rows); [] when it covers all."""
        return caveat_lines(seeded=self.seeded,
                            label_set_public=self.label_set_public,
                            target_scale_public=self.target_scale_public)

    def __str__(self):
        relation = {"replace": "replace-one", "zero_out": "zero-out"}[self.relation]
        unit = ("record" if self.group_size == 1
                else f"group of {self.group_size} records")
        caveats = self.caveats
        if self.selected_by_search:
            return "\n".join([
                f"({_fmt(self.epsilon)}, {self.delta:.3g})-DP for every {unit} "
                f"present, {relation}: the figure of the PrivateSearchCV that "
                "selected this model among its candidate runs (privacy-"
                "accounting.md, 17.4). Its noise was chosen with the records "
                "present, so one run's figure does not cover it, and it refuses "
                "edits.", *caveats])
        lines = [
            f"({_fmt(self.epsilon)}, {self.delta:.3g})-DP for every {unit} present, "
            f"{relation} (Rényi: q*{_fmt(self.rho)} at every order q > 1"
            + (f"; {_fmt(self.mu)}-Gaussian DP" if self.mu is not None else "")
            + f"); membership advantage <= {_fmt(self.advantage)}."
        ]
        cert = self.deletion
        if cert is not None and cert.n_deleted + cert.n_replaced == 0:
            lines.append(f"Last edit (edit {cert.index}): {cert.n_inserted} "
                         "inserted, no record removed.")
        elif cert is None and self.retrained_by_pipeline:
            lines.append(
                "Trained by a private pipeline on its current records: the "
                "pipeline serves every edit by re-estimating its statistics and "
                "retraining this model with fresh noise, and its "
                "privacy_guarantee_ states what each edit certifies.")
        elif cert is None and self.mechanism == "output_perturbation":
            lines.append("No records deleted yet; partial_unlearn refits with fresh "
                         "noise, so deleted records will have no influence on the "
                         "new model.")
        elif cert is None:
            lines.append(
                # At most: a model with class statistics serves deletions at
                # a cap a little below its target (the statistics' share,
                # Section 12.12), which plan_unlearn prints (a trial read two
                # targets).
                "No records deleted yet; partial_unlearn will certify "
                f"deleted records at ({_fmt(self.target_deletion_epsilon)}, "
                f"{self.delta:.3g}) or better."
            )
        elif cert.without_pass:
            alone = cert.epsilon_pending_group > self.epsilon
            lines.append(
                f"Deleted records (edit {cert.index}: {cert.n_deleted} deleted), "
                f"{_NO_PASS} Each removed record: ({_fmt(cert.epsilon_deletion)}, "
                f"{self.delta:.3g}) (Rényi: q*{_fmt(cert.rho_deletion)}; "
                + ("Theorems 12.9 and 12.12: the class statistics released with "
                   "the coefficients are kept too and counted in this figure"
                   if self.rho_counts > 0 else "Theorem 12.9")
                + ")"
                + (f"; the {cert.n_deleted} removed records together, as one unit: "
                   f"({_fmt(cert.epsilon_deletion_batch)}, {self.delta:.3g})"
                   if cert.n_deleted > 1 else "")
                # One record awaiting a pass is the record above: said once.
                + (f"; the {cert.n_pending} records awaiting a pass, together: "
                   f"({_fmt(cert.epsilon_pending_group)}, {self.delta:.3g})"
                   + (", above the model's epsilon: records awaiting a pass are "
                      "not protected as a group" if alone else "")
                   if cert.n_pending > 1 else "")
                + f"; against requests adapted to {cert.releases_seen} earlier "
                f"release(s): ({_fmt(cert.epsilon_adaptive)}, {self.delta:.3g}).")
        elif cert.retrained:
            how = ("refitted from scratch with fresh noise" if cert.steps == 0 else
                   f"retrained from a fresh start in {cert.steps} steps")
            lines.append(
                f"Deleted records (edit {cert.index}: {cert.n_deleted} deleted, "
                f"{cert.n_replaced} replaced, {cert.n_inserted} inserted): the model "
                f"was {how}, so they "
                "have no influence on it; against requests adapted to "
                f"{cert.releases_seen} earlier release(s): "
                f"({_fmt(cert.epsilon_adaptive)}, {self.delta:.3g})."
            )
        else:
            removed = cert.n_deleted + cert.n_replaced
            together = (f"; the {removed} removed records together, as one unit: "
                        f"({_fmt(cert.epsilon_deletion_batch)}, {self.delta:.3g})"
                        if removed > 1 else "")
            lines.append(
                f"Deleted records (edit {cert.index}: {cert.n_deleted} deleted, "
                f"{cert.n_replaced} replaced, {cert.n_inserted} inserted, "
                f"{cert.steps} steps): ({_fmt(cert.epsilon_deletion)}, "
                f"{self.delta:.3g})-indistinguishable from never having been seen "
                f"(Rényi: q*{_fmt(cert.rho_deletion)} at every order q > 1)"
                f"{together}; "
                f"against requests adapted to {cert.releases_seen} earlier "
                f"release(s): ({_fmt(cert.epsilon_adaptive)}, {self.delta:.3g})."
            )
        if self.adaptive_exceeds_target:
            lines.append(
                f"The adaptive figure ({_fmt(cert.epsilon_adaptive)}) exceeds the "
                f"model's target epsilon {_fmt(self.target_epsilon)}: a requester "
                f"who chose requests after seeing the {cert.releases_seen} earlier "
                "releases learns more about the deleted records than a fresh model "
                "would reveal about a present one. A new fit on the current "
                "database restarts the count.")
        if self.rho_counts > 0 and self.class_statistics == "class_means":
            lines.append(
                "Included: the class counts and the class sums of the rows behind "
                "the balanced intercept (the midpoint of the class means), "
                f"released with Gaussian noise of {self.count_noise:.3g} records "
                "(and as many times data_norm on each coordinate of a sum; "
                f"Rényi: q*{_fmt(self.rho_counts)} of the figure above), redrawn "
                f"{_REDRAWN}")
        elif self.rho_counts > 0 and self.class_statistics == "class_moments":
            lines.append(
                "Included: the class counts, the class sums of the rows and the "
                "sum of their squared scores behind the intercept (the threshold "
                "of a Gaussian model of the scores), released with Gaussian noise "
                f"of {self.count_noise:.3g} records (as many times data_norm on "
                "each coordinate of a sum and data_norm**2 on the square; "
                f"Rényi: q*{_fmt(self.rho_counts)} of the figure above), redrawn "
                f"{_REDRAWN}")
        elif self.rho_counts > 0:
            lines.append(
                "Included: the class counts behind the intercepts' offset or shift, "
                "released "
                f"with Gaussian noise of {self.count_noise:.3g} records "
                f"(Rényi: q*{_fmt(self.rho_counts)} of the figure above), redrawn "
                f"{_REDRAWN}")
        if self.preprocessing:
            lines.append("Preprocessing inside the guarantee, all public:")
            lines.extend(f"  {path}: {how}" for path, how in self.preprocessing)
        lines.extend(caveats)
        return "\n".join(lines)

    def __repr__(self):
        return (f"PrivacyGuarantee(epsilon={self.epsilon:.6g}, delta={self.delta:.3g}, "
                f"relation={self.relation!r}, edits={len(self.edits)})")

    def to_dict(self):
        """Plain ``dict`` of every field (JSON-serialisable)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["edits"] = [e.to_dict() for e in self.edits]
        out["references"] = list(self.references)
        out["preprocessing"] = [list(step) for step in self.preprocessing]
        return out
