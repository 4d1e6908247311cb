# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What one release of a model or a search records on a privacy ledger
(privacy-accounting.md, Section 20.1): a search's whole Rényi curve, and the
rho-coefficient of a model's latest release given the one before it.
"""

from skforget.accounting._selection import _total_rdp


def search_curve(budget):
    """The Rényi curve of a whole private search on :data:`ORDERS`, from its
    public :class:`~skforget.accounting.SearchBudget`: Theorem 17.2 for the
    selection plus the refit's ``q rho_refit`` (Section 17.3)."""
    return _total_rdp(budget.run_rho, budget.refit_rho, budget.mean, budget.shape)


def release_rho(guarantee, plan=None):
    """Rho-coefficient of the latest release of a model, given the one before
    it (Section 20.1): the model's DP figure after a fit or an output-
    perturbation refit; after a noisy-GD edit, the DP figure of the edit's
    steps alone from a common start (eq. 5.3, or 12.4 for one segment), at
    the plan's sensitivity and the history's contraction, plus the
    rho-coefficient of any noisy class counts the guarantee says were
    released with the edit (``rho_counts``, Section 18.3).

    Parameters
    ----------
    guarantee : PrivacyGuarantee
        The model's guarantee after the release.
    plan : TrainingPlan or None
        The noisy-GD plan (needed after an edit by noisy GD).

    Returns
    -------
    rho : float
    """
    cert = guarantee.deletion
    if cert is None or guarantee.mechanism != "noisy_gd":
        return guarantee.rho
    if plan is None:
        raise ValueError("release_rho needs the training plan after a noisy-GD edit.")
    from skforget.accounting._plan import _cert_segment, _rho_present
    rho = _rho_present(plan, [_cert_segment(plan, cert)], guarantee.contraction)[0]
    # Noisy class counts released afresh with the edit (Section 18.3), when
    # the guarantee composes them into its rho (18.2).
    rho += getattr(guarantee, "rho_counts", 0.0)
    # The one-segment figure never exceeds the figure of the whole history
    # since the last (re)training, which contains that segment.
    return min(rho, guarantee.rho)


def _shown(name):
    """A noise name as a message shows it: its segment and stream, not the
    hash of the seed (Section 20.4)."""
    return name.split(", ", 1)[-1]


def noise_refusal(entries, entry):
    """Why ``entry`` may not join ``entries`` for the seeded noise it draws
    (Section 20.4), or None: two of its own parts, or it and a recorded
    release, would draw the same noise, which no composition covers."""
    names = list(entry.noise)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        return (f"{entry.label}: two of its parts would draw the same noise (the "
                f"same seed, {_shown(twice[0])}), which no figure covers "
                "(privacy-accounting.md, 10.3, 20.4). Give each step its own seed, "
                "or random_state=None.")
    for earlier in entries:
        shared = sorted(set(names) & set(earlier.noise))
        if shared:
            return (f"{entry.label} would draw the same noise as {earlier.label} "
                    f"(the same seed, {_shown(shared[0])}): two releases with equal "
                    "noise can be compared to cancel it, and no figure covers them "
                    "together (privacy-accounting.md, 10.3, 20.4). Use "
                    "random_state=None, or a seed no recorded release used.")
    return None
