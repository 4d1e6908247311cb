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
)


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

    @property
    def n_edited(self):
        """Total rows named by the edit."""
        return self.n_deleted + self.n_replaced + self.n_inserted

    def to_dict(self):
        """Plain ``dict`` of the fields (JSON-serialisable)."""
        return dataclasses.asdict(self)

    def __str__(self):
        return (
            f"Edit {self.index}: {self.n_deleted} deleted, {self.n_replaced} replaced, "
            f"{self.n_inserted} inserted ({self.n_samples} rows now), {self.steps} "
            f"noisy steps. Each removed record: Rényi q*{_fmt(self.rho_deletion)} "
            f"(epsilon {_fmt(self.epsilon_deletion)} at the guarantee's delta) from "
            f"never having been seen; the edit's "
            f"{max(1, self.n_deleted + self.n_replaced)} removed record(s) together: "
            f"epsilon {_fmt(self.epsilon_deletion_batch)}; "
            f"against requests adapted to {self.releases_seen} earlier release(s): "
            f"epsilon {_fmt(self.epsilon_adaptive)}."
        )


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
    conversion : {"improved", "classic"}
        RDP to (epsilon, delta) conversion used.
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
    references : tuple of str
        The results the figures rest on.
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
    references: tuple = field(default=REFERENCES, repr=False)

    @property
    def deletion(self):
        """Certificate of the latest edit, or None right after ``fit``."""
        return self.edits[-1] if self.edits else None

    @property
    def advantage(self):
        """Bound on TPR - FPR of any membership test on a present record."""
        from skforget.accounting._conversions import advantage_bound

        return advantage_bound(rho=self.rho)

    def __str__(self):
        relation = {"replace": "replace-one", "zero_out": "zero-out"}[self.relation]
        unit = ("record" if self.group_size == 1
                else f"group of {self.group_size} records")
        lines = [
            f"({_fmt(self.epsilon)}, {self.delta:.3g})-DP for every {unit} present, "
            f"{relation} (Rényi: q*{_fmt(self.rho)} at every order q > 1); "
            f"membership advantage <= {_fmt(self.advantage)}."
        ]
        cert = self.deletion
        if cert is None:
            lines.append(
                "No records deleted yet; partial_unlearn will certify "
                f"deleted records at ({_fmt(self.target_deletion_epsilon)}, "
                f"{self.delta:.3g})."
            )
        else:
            lines.append(
                f"Deleted records (edit {cert.index}: {cert.n_deleted} deleted, "
                f"{cert.n_replaced} replaced, {cert.n_inserted} inserted, "
                f"{cert.steps} steps): ({_fmt(cert.epsilon_deletion)}, "
                f"{self.delta:.3g})-indistinguishable from never having been seen "
                f"(Rényi: q*{_fmt(cert.rho_deletion)} at every order q > 1); "
                f"against requests adapted to {cert.releases_seen} earlier "
                f"release(s): ({_fmt(cert.epsilon_adaptive)}, {self.delta:.3g})."
            )
        if self.seeded:
            lines.append("Noise drawn from an integer random_state: the guarantee "
                         "holds only while that seed stays secret.")
        return "\n".join(lines)

    def __repr__(self):
        return (f"PrivacyGuarantee(epsilon={self.epsilon:.6g}, delta={self.delta:.3g}, "
                f"relation={self.relation!r}, edits={len(self.edits)})")

    def to_dict(self):
        """Plain ``dict`` of every field (JSON-serialisable)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["edits"] = [e.to_dict() for e in self.edits]
        out["references"] = list(self.references)
        return out
