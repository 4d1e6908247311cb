# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Audit records: what an auditor reads, without skforget, about one request.

An audit record is a plain JSON object written once, in the transaction that
serves (or refuses) the request, and never rewritten. Every privacy figure in
it is copied from the model's :class:`~skforget.accounting.EditCertificate`
and :class:`~skforget.accounting.PrivacyGuarantee`, or computed by a public
function of :mod:`skforget.accounting` (the Rényi order at which a figure is
tightest); nothing is derived here. It holds no record content: the IDs the
requester named, counts, the model's SHA-256 and public figures only.
"""

import math
import platform

FORMAT = "skforget.audit/1"

RELATIONS = {
    "replace": "replace-one: a database and the same database with one privacy "
               "unit's records swapped for any others",
    "zero_out": "zero-out: a database and the same database with one privacy "
                "unit's records replaced by records that contribute nothing",
}


def versions():
    """The versions of the software that served the request."""
    from importlib.metadata import version

    import numpy
    import scipy
    import sklearn

    # The installed distribution's version (the service layer does not
    # import the package root, tests/test_layers.py).
    return {"skforget": version("skforget"), "scikit-learn": sklearn.__version__,
            "numpy": numpy.__version__, "scipy": scipy.__version__,
            "python": platform.python_version()}


def plain(value):
    """Strict JSON: non-finite floats become strings ("inf")."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _figure(rho, epsilon, delta, method):
    from skforget.accounting import gdp_mu, optimal_order

    order = (optimal_order(rho=rho, delta=delta, method=method)
             if 0 < rho < math.inf else None)
    return {"rho": rho, "epsilon": epsilon, "delta": delta,
            "tightest_renyi_order": order,
            # Corollary 21.5: mu-GDP with mu = sqrt(2 rho) under "gaussian".
            "mu": gdp_mu(rho=rho) if method == "gaussian" and rho < math.inf
            else None}


def certificate_section(certificate, guarantee, tuned=None):
    """The deletion certificate with the guarantee's delta, relation and unit;
    ``tuned``: what a search's choice of the model's hyper-parameters keeps
    (``skforget._marks.tuned_caveat``), which the certificate does not undo."""
    delta, method = guarantee.delta, guarantee.conversion
    removed = certificate.n_deleted + certificate.n_replaced
    return {
        "edit": certificate.index,
        "mechanism": guarantee.mechanism,
        "relation": guarantee.relation,
        "relation_meaning": RELATIONS.get(guarantee.relation, guarantee.relation),
        "group_size": guarantee.group_size,
        "group_size_meaning": "records per privacy unit: each figure is per unit "
                              "of this many records",
        "delta": delta,
        "conversion": method,
        "renyi_orders": "every order q > 1: Renyi divergence R_q <= q * rho",
        # Corollary 21.5 (privacy-accounting.md): each figure is
        # sqrt(2 rho)-GDP when the guarantee's conversion is "gaussian".
        "mu": _figure(certificate.rho_deletion, certificate.epsilon_deletion,
                      delta, method)["mu"],
        "mu_note": (getattr(guarantee, "conversion_note", "")
                    if method == "gaussian" else
                    "not reported: the certificate bounds the Renyi curve by "
                    "q * rho, which does not imply mu-Gaussian DP"),
        "per_unit": _figure(certificate.rho_deletion, certificate.epsilon_deletion,
                            delta, method),
        "whole_edit": {"units_removed": max(1, removed),
                       **_figure(certificate.rho_deletion_batch,
                                 certificate.epsilon_deletion_batch, delta,
                                 method)},
        "adaptive": {"releases_seen": certificate.releases_seen,
                     **_figure(certificate.rho_adaptive,
                               certificate.epsilon_adaptive, delta, method)},
        "retrained": certificate.retrained,
        "noisy_steps": certificate.steps,
        # A deletion the release already certified (Theorem 12.9): the model
        # is unchanged and the records' influence stays until the next pass.
        "served_without_a_pass": bool(getattr(certificate, "without_pass", False)),
        "records_awaiting_a_pass": int(getattr(certificate, "n_pending", 0)),
        "records_after": certificate.n_samples,
        "statement": str(certificate),
        "not_covered": [tuned] if tuned else [],
        "fields": certificate.to_dict(),
    }


def _guarantee_section(guarantee, tuned=None):
    return {"epsilon": guarantee.epsilon, "delta": guarantee.delta,
            "rho": guarantee.rho, "relation": guarantee.relation,
            "conversion": guarantee.conversion,
            "conversion_note": getattr(guarantee, "conversion_note", ""),
            "group_size": guarantee.group_size,
            # Its first line; a pipeline's ends by introducing its parts,
            # which the record lists instead.
            "statement": str(guarantee).split("\n", 1)[0].removesuffix(" Parts:"),
            **({"parts": [{"name": name, "rho": rho, "delta_selection": d}
                          for name, rho, d in guarantee.parts]}
               if hasattr(guarantee, "parts") else {}),
            # What the figures above do not cover, as the guarantee says it
            # (the statement keeps its first line only): a pipeline's are its
            # estimator's and its seeds' (read through the guarantee, never
            # assumed covered).
            "seeded": bool(getattr(guarantee, "noise_seeded", guarantee.seeded)),
            "label_set_public": guarantee.label_set_public,
            "target_scale_public": guarantee.target_scale_public,
            "caveats": list(guarantee.caveats) + ([tuned] if tuned else []),
            "references": list(guarantee.references)}


def _request_section(row, finished_at):
    return {"request_id": row["request_id"], "submitted_at": row["submitted_at"],
            "due_at": row["due_at"], "started_at": row.get("started_at"),
            "finished_at": finished_at, "attempts": row.get("attempts", 0),
            "served_before_due": finished_at <= row["due_at"]}


def served_record(*, row, group, deleted_ids, already_deleted, served, finished_at,
                  store):
    """The record of a request served by an edit (``served``: from the store)."""
    version = {"before": {"number": served["version_before"].number,
                          "token": served["version_before"].token},
               "after": {"number": served["version_after"].number,
                         "token": served["version_after"].token}}
    return plain({
        "format": FORMAT,
        "status": "done",
        **_request_section(row, finished_at),
        "named_ids": row["ids"],
        "deleted_ids": deleted_ids,
        "already_deleted": already_deleted,
        "edit_requests": group,
        "records": {"before": served["n_before"], "after": served["n_after"],
                    "deleted_by_edit": served["n_before"] - served["n_after"]},
        "data_version": version,
        "model": {"sha256_before": served["sha256_before"],
                  "sha256_after": served["sha256_after"],
                  "hashed": "the pickled model as stored (RecordStore.model_bytes)"},
        "certificate": certificate_section(served["certificate"],
                                           served["guarantee"], served.get("tuned")),
        "guarantee_after": _guarantee_section(served["guarantee"],
                                              served.get("tuned")),
        "store": store,
        "software": versions(),
    })


def unserved_record(*, row, status, reason, already_deleted, finished_at, store):
    """The record of a request that needed no edit, or that was refused."""
    return plain({
        "format": FORMAT,
        "status": status,
        "reason": reason,
        **_request_section(row, finished_at),
        "named_ids": row["ids"],
        "deleted_ids": [],
        "already_deleted": already_deleted,
        "store": store,
        "software": versions(),
    })
