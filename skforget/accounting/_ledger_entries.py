# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""A privacy ledger's records: one entry per release, the composed total, and
the one conversion of a sum of Rényi curves to (epsilon, delta)
(privacy-accounting.md, Sections 20.1-20.2)."""

import dataclasses
import math
import uuid

import numpy as np

from skforget.accounting._conversions import optimal_order, rho_to_epsilon
from skforget.accounting._selection import _ORDERS, approximate_curve_epsilon

__all__ = ["ORDERS", "LedgerEntry", "LedgerTotal"]

#: The orders at which general curves are stored and composed (Section 20.2).
ORDERS = _ORDERS



@dataclasses.dataclass(frozen=True)
class LedgerEntry:
    """One release recorded in a :class:`PrivacyLedger`.

    Attributes
    ----------
    label : str
        What the release was (``"NoisyGDClassifier.fit"``, ...).
    rho : float
        Its rho-coefficient part: ``q * rho`` at every order ``q``.
    curve : tuple of float or None
        A further Rényi curve on :data:`ORDERS` (a private search), or None.
    relation : str
        Neighbouring relation of the figure.
    group_size : int
        Records per privacy unit.
    reserved : bool
        True while the release is under way (counted all the same).
    id : str
        Key of the entry.
    gaussian : bool
        The release is ``sqrt(2 rho)``-GDP (Section 21), outside its excluded
        events when ``delta`` is positive.
    delta : float
        Probability of the release's excluded events: its figure holds
        conditionally on an event of probability at least ``1 - delta``
        (approximate zCDP, Bun & Steinke 2016, Definition 8.1; a private
        category selection, Proposition 19.3). 0 for an exact figure.
    recorded_at : str
        When the release was checked and reserved, UTC ISO 8601 to the
        second (empty for an entry recorded before the field existed): what
        an auditor reads the ledger against.
    noise : tuple of str
        Names of the seeded noise the release drew (a hash of the seed, its
        segment and stream: ``skforget._validation.noise_key``); empty for
        fresh entropy. All 2**32 integer seeds can be tried against a hash:
        a ledger holding seeded releases is as secret as the seed.
    """

    label: str
    rho: float
    # Thousands of values for a search: not in the repr (to_dict keeps it).
    curve: tuple | None = dataclasses.field(repr=False)
    relation: str | None
    group_size: int | None
    reserved: bool = False
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)
    gaussian: bool = False
    delta: float = 0.0
    noise: tuple = ()
    recorded_at: str = ""

    def epsilon(self, delta):
        """The entry's figure alone at ``delta`` (information only)."""
        return _convert(self.rho, None if self.curve is None
                        else np.asarray(self.curve), delta, self.gaussian,
                        self.delta)[0]

    def to_dict(self):
        """Plain ``dict`` of the fields (JSON-ready)."""
        out = dataclasses.asdict(self)
        out["curve"] = None if self.curve is None else list(self.curve)
        out["noise"] = list(self.noise)
        return out

    @classmethod
    def from_dict(cls, data):
        """Inverse of :meth:`to_dict`."""
        data = dict(data)
        if data.get("curve") is not None:
            data["curve"] = tuple(float(v) for v in data["curve"])
        data["noise"] = tuple(data.get("noise", ()))   # recorded before it existed
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class LedgerTotal:
    """The composed figure of a ledger's entries (Section 20.2).

    Attributes
    ----------
    epsilon, delta : float
        (epsilon, delta)-DP of all releases together, for every unit.
    order : float
        Rényi order of the conversion (info).
    rho : float
        Sum of the entries' rho-coefficients.
    curve : ndarray or None
        Sum of the entries' general curves on :data:`ORDERS` (None if none).
    n_entries : int
        Entries composed (reservations included).
    """

    epsilon: float
    delta: float
    order: float
    rho: float
    curve: np.ndarray | None
    n_entries: int

    def rdp(self, orders):
        """The total Rényi curve at ``orders`` (general curves interpolated
        on :data:`ORDERS`, which may only be evaluated inside the grid)."""
        q = np.asarray(orders, dtype=np.float64)
        out = q * self.rho
        if self.curve is not None:
            out = out + np.interp(q, ORDERS, self.curve)
        return out

    def __str__(self):
        return (f"({self.epsilon:.4g}, {self.delta:.3g})-DP in all over "
                f"{self.n_entries} release(s)")


def _convert(rho, curve, delta, gaussian=False, delta_excluded=0.0):
    """(epsilon, order) of ``q rho + curve(q)`` at ``delta`` (Section 20.2): on
    the grid with a curve; for a rho-coefficient alone continuous in ``q``, or
    by the exact Gaussian profile (order inf) when ``gaussian``: every release
    composed is ``sqrt(2 rho_i)``-GDP, so the whole is ``sqrt(2 rho)``-GDP
    (Dong, Roth and Su 2022, Cor. 3.3). ``delta_excluded``: the releases'
    excluded events' total probability (their deltas add, Bun & Steinke 2016,
    Lemma 8.3): converted at ``delta - delta_excluded``, plus ``ln(1 / (1 -
    delta_excluded))`` (Proposition 19.4; infinite when nothing is left)."""
    if delta_excluded >= delta:
        return math.inf, math.nan
    if curve is not None:
        return approximate_curve_epsilon(rdp=ORDERS * rho + curve, delta=delta,
                                         delta_excluded=delta_excluded)
    shift, rest = -math.log1p(-delta_excluded), delta - delta_excluded
    if rho == 0.0:
        return shift, math.inf
    if gaussian:
        return rho_to_epsilon(rho=rho, delta=rest, method="gaussian") + shift, math.inf
    return (rho_to_epsilon(rho=rho, delta=rest) + shift,
            optimal_order(rho=rho, delta=rest))
