# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy ledger of one dataset (privacy-accounting.md, Section 20).

Design
------
An entry is one release made from the dataset: a rho-coefficient ``rho``
(``R_q <= q rho``) and, for mechanisms whose curve is not linear (a private
search, Section 17), a curve on the fixed grid ``ORDERS``. Entries add order by
order (Theorem 20.1) and the sum is converted to (epsilon, delta) once, at the
ledger's delta (Section 20.2).

Every change goes through :meth:`PrivacyLedger._transact`, which runs a pure
function of the entries under the storage's lock: here a thread lock around a
list; :class:`skforget.store.SharedLedger` overrides it with a SQLite
transaction, so that processes share one account. A planned release is checked
and reserved in one such step (:meth:`PrivacyLedger.reserve`), then settled or
cancelled (Section 20.3).

``copy.deepcopy`` (hence scikit-learn's ``clone``) returns the ledger itself;
pickling an in-memory ledger gives a *snapshot* that refuses to record until
:meth:`PrivacyLedger.resume` (Section 20.5).
"""

import contextlib
import dataclasses
import math
import os
import threading
import warnings
from datetime import datetime, timezone

import numpy as np
from scipy.optimize import brentq

from skforget.accounting._checks import (
    check_nonnegative,
    check_positive,
    check_probability,
)
from skforget.accounting._conversions import epsilon_to_rho
from skforget.accounting._ledger_entries import (
    ORDERS,
    LedgerEntry,
    LedgerTotal,
    _convert,
)
from skforget.accounting._releases import noise_refusal, search_curve
from skforget.accounting._selection import _target_within


# The ledger's errors live here (the accounting imports nothing of ours); the
# package re-exports them at its top level.
class PrivacyBudgetExceeded(ValueError):
    """A planned release would take a privacy ledger past its budget.

    Raised by :class:`~skforget.accounting.PrivacyLedger` and by estimators
    given ``ledger=``, from the public plan and before any training pass: the
    estimator and the ledger are left exactly as they were. The message gives
    the figure the release would spend, the total it would reach and what
    remains (privacy-accounting.md, Section 20.3).
    """


#: A ledger's delta above this is said to be meaningless for a table of
#: records (a trial gave delta=0.5 without a word).
LARGE_DELTA = 1e-3


#: What a refused edit means for the person who asked (a new-user trial read
#: only "what remains ... for one more fit").
_EDIT_REFUSED = (
    " The edit was not made: the records it would delete are still in the "
    "model. A deletion publishes a new model, which spends from the same budget "
    "as every release on these records; to honour it, either give the account a "
    "larger budget (a new ledger: what was spent stays spent), or withdraw this "
    "model and delete the records from your data without publishing a new one. "
    "Size a ledger for deletions by this figure per edit; a model's "
    "deletions served without a pass (max_lazy_records) spend nothing.")


class UnaccountableReleaseError(PrivacyBudgetExceeded):
    """A release whose figure does not add to a ledger's as one statement.

    Its neighbouring relation or privacy unit differs from the ledger's, or it
    is a fit of scikit-learn model selection whose folds were drawn by reading
    the labels (``StratifiedKFold``, the default ``cv=<int>`` of a
    classifier): one record's label then moves others between folds, so the
    fits' training sets differ by more than that record and their figures do
    not add (privacy-accounting.md, Section 20.4). Raised before any training
    pass; a subclass of :class:`PrivacyBudgetExceeded`, which code catching
    refusals already handles.
    """


class LedgerUnreachableError(RuntimeError):
    """A release cannot be recorded in the ledger it names.

    Raised when the ledger is a pickled copy of an in-memory
    :class:`~skforget.accounting.PrivacyLedger` (a model loaded from disk, a
    worker process of ``GridSearchCV(n_jobs > 1)``): what it recorded would
    never reach the original. Nothing is run. Use
    :class:`skforget.store.SharedLedger` to share an account between
    processes, or ``ledger.resume()`` to make the copy the account.
    """


_RELATIONS = ("replace", "zero_out")


def _epsilon_within(rho, delta):
    """The largest epsilon target whose rho fits in ``rho`` (0 when none
    does: a share too small to plan anything)."""
    if rho <= 0.0:
        return 0.0
    try:
        return _target_within(rho, delta)
    except ValueError:
        return 0.0


def _refuse_selected(guarantee, label):
    """A selected run's rho is one run's; the release is the search's (17.4)."""
    if getattr(guarantee, "selected_by_search", False):
        raise ValueError(
            f"{label}: this model is the run a PrivateSearchCV selected; its rho "
            "is one run's, and the release is the search's. Record the search "
            "instead (ledger.record(label, search)), or check its figure.")


def _sum(entries):
    rho = math.fsum(e.rho for e in entries)
    curves = [np.asarray(e.curve) for e in entries if e.curve is not None]
    gaussian = all(e.gaussian and e.curve is None for e in entries)
    delta_excluded = math.fsum(e.delta for e in entries)
    return (rho, (np.sum(curves, axis=0) if curves else None), gaussian,
            delta_excluded)


class Spent(dict):
    """A spending block's final figure (``"rho"``, ``"curve"``, ``"delta"``)
    and its ledger entry's key, ``entry_id`` (None without a ledger)."""

    entry_id = None


def ledger_spending(ledger, label, *, rho=None, curve=None, relation=None,
                    group_size=None, gaussian=False, delta=0.0):
    """``ledger.spending(...)``, or a no-op context when ``ledger`` is None.

    The one call a private estimator or transformer with a ``ledger=None``
    parameter needs around its data passes, once its release's figure is
    planned (privacy-accounting.md, Section 20.3): it raises
    :class:`PrivacyBudgetExceeded` before the block if the release would not
    fit, records it when the block succeeds (with the final figure the block
    may put in the yielded dict as ``"rho"`` / ``"curve"``) and cancels the
    reservation if the block raises. The block should therefore end where the
    new state is in place, and say nothing computed from the noisy output
    (a warning, a message) before it ends: an exception carrying such text
    would cancel a release it reveals. (skforget's own estimators record when
    their public call has succeeded, then warn, Section 20.3.)

    Examples
    --------
    >>> from skforget.accounting import PrivacyLedger, ledger_spending
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-5)
    >>> with ledger_spending(ledger, "private means", rho=0.001):
    ...     pass  # the data pass
    >>> len(ledger.entries)
    1
    >>> with ledger_spending(None, "no ledger", rho=0.001):
    ...     pass
    """
    if ledger is None:
        return contextlib.nullcontext({})
    return ledger.spending(label, rho=rho, curve=curve, relation=relation,
                           group_size=group_size, gaussian=gaussian, delta=delta)


class PrivacyLedger:
    """The privacy account of one dataset, against a budget.

    Composes the Rényi curves of every release made from the dataset (fits,
    edits, private preprocessing, private searches) order by order, converts
    the sum once to (epsilon, delta), and refuses a planned release that would
    take it past the budget (privacy-accounting.md, Section 20). Estimators take
    it as ``ledger=``: they check their planned figure before any training
    pass, raise :class:`~skforget.accounting.PrivacyBudgetExceeded` (the
    estimator unchanged) if it would not fit, and record it when they succeed.

    ``clone`` and ``copy.deepcopy`` return the ledger itself, so every fit of a
    scikit-learn search in this process records here. Pickling makes a
    *snapshot* that refuses to record (:meth:`resume` takes it over); to share
    one account between processes (``GridSearchCV(n_jobs=2)``), use
    :class:`skforget.store.SharedLedger`.

    Parameters
    ----------
    epsilon : float
        Budget epsilon of all releases together.
    delta : float
        Budget delta; the total is converted at this delta.
    relation : {"replace", "zero_out"} or None, default=None
        Neighbouring relation of every entry (None: the first entry's).
    group_size : int or None, default=None
        Records per privacy unit of every entry (None: the first entry's).

    Attributes
    ----------
    entries : tuple of LedgerEntry
        The releases recorded (and reserved), oldest first.
    total : LedgerTotal
        Their composed figure.
    remaining_rho, remaining_epsilon : float
        What one more release may still spend (Section 20.3): one of the
        kind the ledger holds, Gaussian while every entry is (an empty ledger
        included), Rényi otherwise.

    Examples
    --------
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.accounting import PrivacyLedger
    >>> from skforget.datasets import load_dataset
    >>> d = load_dataset("breast_cancer")
    >>> ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)
    >>> model = NoisyGDClassifier(classes=[0, 1], epsilon=1.0, delta=1e-5,
    ...                           ledger=ledger).fit(d.data, d.target)
    >>> round(ledger.total.epsilon, 3) <= 1.0
    True
    >>> ledger.would_exceed(rho=ledger.remaining_rho * 1.01)
    True
    """

    def __init__(self, epsilon, delta, *, relation=None, group_size=None):
        self.epsilon = check_positive(epsilon, "epsilon")
        if math.isinf(self.epsilon):
            raise ValueError("epsilon must be finite.")
        self.delta = check_probability(delta, "delta")
        reopened = self.__dict__.pop("_reopened", False)
        if self.delta > LARGE_DELTA and not reopened:
            # Said when a budget is set, not when a copy or a SharedLedger
            # file reopens it; at the line that set it (a subclass's __init__
            # calls this one).
            level = 2 if type(self).__init__ is PrivacyLedger.__init__ else 3
            warnings.warn(
                f"A ledger with delta={self.delta:.3g}: a delta is the chance that "
                "the releases' figure fails outright, and one this large allows "
                "about a record in 1/delta to be exposed. Take delta well below "
                "1/n for n records (the estimators' default is min(1e-5, "
                "n**-1.1)).", UserWarning, stacklevel=level)
        if relation is not None and relation not in _RELATIONS:
            raise ValueError(f"relation must be one of {_RELATIONS} or None, got "
                             f"{relation!r}.")
        if group_size is not None and not (isinstance(group_size, int | np.integer)
                                           and group_size >= 1):
            raise ValueError(f"group_size must be a positive int or None, got "
                             f"{group_size!r}.")
        self.relation = relation
        self.group_size = None if group_size is None else int(group_size)
        self._entries = []
        self._lock = threading.RLock()
        self._snapshot = False
        self._pid = os.getpid()

    # --- identity ------------------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        # scikit-learn's clone deep-copies parameters that are not estimators:
        # every clone must record into this same account (Section 20.5).
        return self

    def __getstate__(self):
        with self._lock:
            state = {k: v for k, v in self.__dict__.items() if k != "_lock"}
            # Reservations under way here are counted as spent in the copy.
            state["_entries"] = [dataclasses.replace(e, reserved=False)
                                 for e in self._entries]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._snapshot = self._pickled_as_snapshot()
        self._pid = os.getpid()

    def _pickled_as_snapshot(self):
        """Whether an unpickled copy is a snapshot (in memory: yes)."""
        return True

    def resume(self):
        """Make this pickled copy the account, recording from now on.

        Only for a snapshot whose original is gone (a model reloaded from
        disk with its ledger): a copy in a worker process must not be resumed,
        its records would never reach the original.

        Returns
        -------
        self : PrivacyLedger
        """
        self._snapshot = False
        self._pid = os.getpid()
        return self

    # --- storage (overridden by skforget.store.SharedLedger) ----------------
    def _transact(self, fn):
        """Run ``fn(entries) -> (result, new_entries or None)`` atomically."""
        with self._lock:
            result, new = fn(list(self._entries))
            if new is not None:
                self._entries = list(new)
            return result

    # --- reading -------------------------------------------------------------
    @property
    def entries(self):
        """The releases recorded and reserved, oldest first."""
        return tuple(self._transact(lambda entries: (entries, None)))

    @property
    def total(self):
        """:class:`LedgerTotal` of all entries (reservations included)."""
        return self._total(self.entries)

    def _total(self, entries):
        rho, curve, gaussian, delta_excluded = _sum(entries)
        eps, order = _convert(rho, curve, self.delta, gaussian, delta_excluded)
        return LedgerTotal(epsilon=eps, delta=self.delta, order=order, rho=rho,
                           curve=curve, n_entries=len(entries))

    def _remaining(self, entries):
        def excess(r):
            # Exactly as a check of a release of rho-coefficient r computes it.
            # A further Gaussian release, if every release so far is one.
            probe = LedgerEntry(label="", rho=r, curve=None, relation=None,
                                group_size=None,
                                gaussian=all(e.gaussian for e in entries))
            return self._total(list(entries) + [probe]).epsilon - self.epsilon

        if excess(0.0) >= 0.0:
            return 0.0
        # The Gaussian inverse is the largest rho of every conversion (21.5):
        # the Rényi one would cap a Gaussian ledger below what still fits.
        hi = epsilon_to_rho(epsilon=self.epsilon, delta=self.delta, method="gaussian")
        if excess(hi) <= 0.0:
            return hi
        r = brentq(excess, 0.0, hi, xtol=1e-300, rtol=1e-12, maxiter=500)
        while r > 0.0 and excess(r) > 0.0:  # never past the budget
            r *= 1.0 - 1e-9
        return r

    @property
    def remaining_rho(self):
        """Largest rho-coefficient one more release may have (Section 20.3)."""
        return self._remaining(self.entries)

    @property
    def remaining_epsilon(self):
        """Largest epsilon target, at the ledger's delta, of a release that
        still fits: a model planned for ``(remaining_epsilon, delta)`` fits."""
        return _epsilon_within(self.remaining_rho, self.delta)

    def remaining(self, k=1):
        """Largest epsilon target, at the ledger's delta, of each of ``k``
        equal releases that still fit together.

        The ``k`` rho-coefficients add, so each gets ``remaining_rho / k``
        exactly (Section 20.3), e.g. the folds of a cross-validation planned
        ahead.

        Parameters
        ----------
        k : int, default=1
            Number of releases.

        Returns
        -------
        epsilon : float
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}.")
        return _epsilon_within(self.remaining_rho / int(k), self.delta)

    # --- checking ------------------------------------------------------------
    def _new_entry(self, label, rho, curve, relation, group_size, reserved,
                   gaussian=False, delta=0.0, noise=()):
        rho = check_nonnegative(0.0 if rho is None else rho, "rho")
        if math.isinf(rho):
            raise ValueError("rho must be finite.")
        delta = check_nonnegative(delta, "delta")
        if not delta < 1.0:
            raise ValueError(f"delta must be below 1, got {delta!r}.")
        if curve is not None:
            values = np.asarray(curve(ORDERS) if callable(curve) else curve,
                                dtype=np.float64)
            if values.shape != ORDERS.shape or not np.all(np.isfinite(values)) \
                    or np.any(values < 0):
                raise ValueError(
                    f"curve must give {ORDERS.size} finite, nonnegative values, "
                    "one per order of skforget.accounting.LEDGER_ORDERS.")
            curve = tuple(float(v) for v in values)
        if relation is not None and relation not in _RELATIONS:
            raise ValueError(f"relation must be one of {_RELATIONS}, got "
                             f"{relation!r}.")
        return LedgerEntry(label=str(label), rho=rho, curve=curve,
                           relation=relation,
                           group_size=None if group_size is None else int(group_size),
                           reserved=reserved, gaussian=bool(gaussian) and curve is None,
                           delta=float(delta),
                           noise=tuple(str(k) for k in noise if k is not None),
                           recorded_at=datetime.now(timezone.utc).strftime(
                               "%Y-%m-%dT%H:%M:%SZ"))

    def _resolve(self, entries, entry):
        """``entry`` with the ledger's relation and unit where it gives none."""
        relation = self.relation or (entries[0].relation if entries else None)
        group = self.group_size or (entries[0].group_size if entries else None)
        return dataclasses.replace(
            entry, relation=entry.relation or relation or "replace",
            group_size=entry.group_size or group or 1)

    def _refusal(self, entries, entry):
        """The reason ``entry`` (resolved) may not join ``entries``, or None:
        a :class:`PrivacyBudgetExceeded` to raise."""
        relation = self.relation or (entries[0].relation if entries else None)
        group = self.group_size or (entries[0].group_size if entries else None)
        if relation is not None and entry.relation != relation:
            return UnaccountableReleaseError(
                f"{entry.label} is accounted under relation={entry.relation!r}, the "
                f"ledger under {relation!r}: the two figures do not add as one "
                f"statement (privacy-accounting.md, Section 20.4). Give it "
                f"relation={relation!r}, or keep its releases in a ledger of "
                "their own.")
        if group is not None and entry.group_size != group:
            return UnaccountableReleaseError(
                f"{entry.label} is accounted for units of {entry.group_size} "
                f"record(s), the ledger for units of {group}: the figures do not "
                f"add as one statement (privacy-accounting.md, 20.4). Give it "
                f"group_size={group}, or keep its releases in a ledger of their "
                "own.")
        reason = self._budget_refusal(entries, entry)
        return None if reason is None else PrivacyBudgetExceeded(reason)

    def _budget_refusal(self, entries, entry):
        """The reason ``entry`` would exceed the budget, as text, or None."""
        reason = noise_refusal(entries, entry)
        if reason is not None:
            return reason
        after = self._total(entries + [entry])
        excluded = math.fsum(e.delta for e in entries) + entry.delta
        if math.isinf(after.epsilon) and entry.delta > 0 and excluded >= self.delta:
            # Each private category selection spends a delta (Prop. 19.3):
            # their sum reaching the ledger's delta leaves no statement.
            return (f"{entry.label}'s category selections would take the "
                    f"probability of the releases' excluded events to "
                    f"{excluded:.3g}, at or above the ledger's delta "
                    f"{self.delta:.3g}: no (epsilon, delta) statement is then left "
                    "(privacy-accounting.md, 19.1, 20.2). A new ledger with a larger "
                    "delta (a ledger's budget is fixed), or releases that take less: "
                    "make_private_pipeline's selection_share, or its categories= "
                    "for the columns whose categories you know (no selection).")
        if after.epsilon > self.epsilon:
            before = self._total(entries)
            alone = entry.epsilon(self.delta)
            return (f"{entry.label} would spend epsilon {alone:.4g} "
                    f"alone and take the ledger from epsilon {before.epsilon:.4g} to "
                    f"{after.epsilon:.4g} at delta {self.delta:.3g}, past its "
                    f"budget of {self.epsilon:.4g} (composed as Section 20.2 says). "
                    f"What remains: epsilon {self._remaining_eps(entries):.4g} "
                    "for one more fit" + (
                        "; a search's curve costs more at the same epsilon: "
                        "accounting.largest_search_epsilon(ledger, ...) says how "
                        "large a search fits." if entry.curve is not None else ".")
                    + (_EDIT_REFUSED if ".partial_unlearn" in entry.label else ""))
        return None

    def _remaining_eps(self, entries):
        return _epsilon_within(self._remaining(entries), self.delta)

    @staticmethod
    def _figure(plan, rho, curve):
        """``(rho, curve)`` of a public plan: a ``SearchBudget`` (its curve), a
        ``PrivacyGuarantee`` or ``PipelineGuarantee`` (its ``rho``, and its
        selections' delta), or a target (``epsilon``, ``delta``) such as a
        ``FitPlan``'s (its rho-coefficient bounds what the fit records)."""
        if plan is None:
            return rho, curve, None, None
        if rho is not None or curve is not None:
            raise ValueError("Give a plan, or rho / curve, not both.")
        if hasattr(plan, "get_params"):
            # An estimator or a pipeline (a trial's): its figure needs the
            # rows' number, which only its plan has read.
            raise TypeError(
                f"A plan, not a {type(plan).__name__}: pass estimator.plan(X, y) "
                "for a model; a private pipeline checks its release against its "
                "ledger in fit, before any statistic (or pass rho= and delta= of "
                "its split: accounting.split_private_pipeline).")
        _refuse_selected(plan, "A plan")
        if hasattr(plan, "run_rho"):   # with a pipeline's statistics (17.5)
            return (plan.preprocessing_rho, search_curve(plan), False,
                    plan.delta_selection)
        if hasattr(plan, "rho"):
            return (plan.rho, None, getattr(plan, "conversion", "") == "gaussian",
                    float(getattr(plan, "delta_selection", 0.0)))
        # An estimator's (epsilon, delta) target: the Gaussian inverse gives
        # the largest rho of every conversion (Section 21.5), so it bounds
        # what the fit records whatever its recipe; read as a Rényi figure.
        return (epsilon_to_rho(epsilon=plan.epsilon, delta=plan.delta,
                               method="gaussian"), None, False, 0.0)

    def would_exceed(self, plan=None, *, rho=None, curve=None, relation=None,
                     group_size=None, gaussian=False, delta=0.0, noise=()):
        """Whether a release with this figure would be refused now.

        Parameters
        ----------
        plan : SearchBudget, PrivacyGuarantee, FitPlan or None, default=None
            A public plan to read the figure from, instead of ``rho`` /
            ``curve``: a search's whole curve, a guarantee's ``rho``, or the
            rho-coefficient of a plan's (epsilon, delta) target, an upper
            bound of what its fit records (``estimator.plan(X, y)``).
        rho : float, default=None
            Its rho-coefficient.
        curve : array-like or callable, default=None
            A further Rényi curve: values on :data:`LEDGER_ORDERS`, or a
            function of the orders.
        relation, group_size : default=None
            Its neighbouring relation and unit (None: the ledger's).
        gaussian : bool, default=False
            Whether the release is ``sqrt(2 rho)``-GDP (Section 21).
        delta : float, default=0.0
            Probability of the release's excluded events (approximate zCDP,
            such as a private category selection, Proposition 19.3).
        noise : tuple of str, default=()
            Names of the seeded noise it draws (Section 20.4).

        Returns
        -------
        bool
        """
        rho, curve, from_plan, plan_delta = self._figure(plan, rho, curve)
        entry = self._new_entry("the release", rho, curve, relation, group_size,
                                False, gaussian if from_plan is None else from_plan,
                                delta if plan_delta is None else plan_delta, noise)
        return self._transact(
            lambda e: (self._refusal(e, self._resolve(e, entry)) is not None, None))

    def check(self, plan=None, *, rho=None, curve=None, relation=None,
              group_size=None, label="the release", gaussian=False, delta=0.0,
              noise=()):
        """Raise :class:`~skforget.accounting.PrivacyBudgetExceeded` if a
        release with this figure would be refused (see :meth:`would_exceed`)."""
        rho, curve, from_plan, plan_delta = self._figure(plan, rho, curve)
        entry = self._new_entry(label, rho, curve, relation, group_size, False,
                                gaussian if from_plan is None else from_plan,
                                delta if plan_delta is None else plan_delta, noise)
        reason = self._transact(
            lambda e: (self._refusal(e, self._resolve(e, entry)), None))
        if reason is not None:
            raise reason

    # --- recording -----------------------------------------------------------
    def _check_reachable(self, label):
        # A fork copies it unpickled: a child's records stay in the child.
        forked = self._pickled_as_snapshot() and self._pid != os.getpid()
        if forked or self._snapshot:
            how = ("copied into a forked process (multiprocessing, a preforking "
                   "server)" if forked else "pickled (a model loaded from disk, "
                   "or a worker process of joblib / GridSearchCV(n_jobs > 1))")
            raise LedgerUnreachableError(
                f"{label} cannot record into this ledger: it is an in-memory "
                f"PrivacyLedger {how}, and what it records would never reach the "
                "original. Share one account between processes with "
                "skforget.store.SharedLedger(path, ...); if this copy is now the "
                "account (the original is gone), call ledger.resume().")

    def reserve(self, label, *, rho=None, curve=None, relation=None,
                group_size=None, gaussian=False, delta=0.0, noise=()):
        """Check a planned release and count it, in one atomic step.

        Returns the entry's id for :meth:`settle` or :meth:`cancel`.
        Raises :class:`~skforget.accounting.PrivacyBudgetExceeded` (nothing
        recorded) if it would exceed the budget. ``delta`` is the probability
        of the release's excluded events (see :meth:`would_exceed`);
        ``noise``, the names of the seeded noise it draws (a release sharing
        one with a recorded entry is refused).
        """
        self._check_reachable(label)
        entry = self._new_entry(label, rho, curve, relation, group_size, True,
                                gaussian, delta, noise)

        def step(entries):
            resolved = self._resolve(entries, entry)
            reason = self._refusal(entries, resolved)
            if reason is not None:
                return reason, None
            return None, entries + [resolved]

        reason = self._transact(step)
        if reason is not None:
            raise reason
        return entry.id

    def settle(self, entry_id, *, rho=None, curve=None, delta=None):
        """Record a reserved release as done, with its final figure (the
        planned one if not given; ``delta``: its excluded events' final
        probability, the planned one if None)."""
        self._check_reachable("settle")
        final = None if rho is None and curve is None else self._new_entry(
            "", rho, curve, None, None, False)
        final_delta = None if delta is None else self._new_entry(
            "", 0.0, None, None, None, False, delta=delta).delta

        def step(entries):
            out = []
            for e in entries:
                if e.id == entry_id:
                    e = dataclasses.replace(e, reserved=False) if final is None \
                        else dataclasses.replace(e, reserved=False, rho=final.rho,
                                                 curve=final.curve)
                    if final_delta is not None:
                        e = dataclasses.replace(e, delta=final_delta)
                out.append(e)
            return (None if any(e.id == entry_id for e in entries) else "gone"), out

        if self._transact(step) == "gone":  # reset or replaced since (an audit)
            raise LedgerUnreachableError(
                f"The reservation {entry_id} is gone from this ledger (its entries "
                "were reset or replaced): the release was made and is recorded "
                "nowhere; enter it with ledger.spend(...).")

    def cancel(self, entry_id):
        """Remove a reservation whose release did not happen."""
        self._transact(lambda entries: (None, [e for e in entries
                                               if e.id != entry_id]))

    @contextlib.contextmanager
    def spending(self, label, *, rho=None, curve=None, relation=None,
                 group_size=None, gaussian=False, delta=0.0, noise=()):
        """Reserve on entry, record on success, cancel on an exception.

        Yields a dict; setting ``"rho"`` / ``"curve"`` / ``"delta"`` in it
        records that final figure instead of the planned one.
        """
        entry_id = self.reserve(label, rho=rho, curve=curve, relation=relation,
                                group_size=group_size, gaussian=gaussian,
                                delta=delta, noise=noise)
        final = Spent()
        final.entry_id = entry_id
        try:
            yield final
        except BaseException:
            self.cancel(entry_id)
            raise
        self.settle(entry_id, **final)

    def spend(self, label, *, rho=None, curve=None, relation=None, group_size=None,
              gaussian=False, delta=0.0, noise=()):
        """Check and record a release made elsewhere (a mechanism skforget
        does not run). Raises :class:`PrivacyBudgetExceeded` if it would not
        fit, and records nothing then. ``delta``: the probability of its
        excluded events, if its figure holds only outside some (approximate
        zCDP); ``noise``: names of the seeded noise it drew (Section 20.4)."""
        self.settle(self.reserve(label, rho=rho, curve=curve, relation=relation,
                                 group_size=group_size, gaussian=gaussian,
                                 delta=delta, noise=noise))

    def holds(self, entry_id):
        """Whether an entry of this id is recorded or reserved here."""
        return entry_id is not None and any(e.id == entry_id for e in self.entries)

    def record(self, label, model):
        """Record a fitted skforget model, pipeline or search made without this ledger
        at its whole figure (``privacy_guarantee_``), not the last edit's (20.1).
        A release this ledger holds already (the model's latest, fitted or
        edited with the ledger or recorded) is refused: it would count twice."""
        g = model.privacy_guarantee_
        _refuse_selected(g, label)
        # A pipeline without private steps releases its estimator's model.
        held = (model, getattr(model, "_final_estimator", None))
        if any(self.holds(getattr(m, "__dict__", {}).get("_ledger_entry"))
               for m in held):
            # A trial recorded one pipeline twice, and the ledger added both.
            raise ValueError(
                f"{label}: this model's latest release is already in this ledger "
                "(fitted or edited with it, or recorded): recording it again "
                "would count it twice.")
        params = model.get_params() if hasattr(model, "get_params") else {}
        if getattr(g, "noise_seeded", getattr(g, "seeded", False)) or any(
                v is not None for k, v in params.items()
                if k.rsplit("__", 1)[-1] == "random_state"):
            raise ValueError(
                f"{label}: this model's noise came from a given random_state, which "
                "cannot be named after the fact, so a later release of the same "
                "noise could not be refused (Section 20.4). Fit it with ledger=, "
                "or with random_state=None.")
        if hasattr(g, "run_rho"):  # a SearchBudget (a pipeline's, 17.5)
            entry = self.reserve(label, curve=search_curve(g), rho=g.preprocessing_rho,
                                 delta=g.delta_selection, relation=g.relation,
                                 group_size=g.group_size)
        else:
            # A pipeline's figure holds outside its category selections'
            # events (Proposition 19.3): their delta is spent too.
            entry = self.reserve(label, rho=g.rho, relation=g.relation,
                                 group_size=g.group_size,
                                 gaussian=getattr(g, "conversion", "") == "gaussian",
                                 delta=float(getattr(g, "delta_selection", 0.0)))
        self.settle(entry)
        if hasattr(model, "__dict__"):
            model.__dict__["_ledger_entry"] = entry   # its release, recorded

    def to_dict(self):
        """The budget, the total and every entry as a JSON-ready ``dict``
        (general curves as lists on :data:`LEDGER_ORDERS`)."""
        entries = self.entries
        total = self._total(entries)
        return {"epsilon": self.epsilon, "delta": self.delta,
                "relation": self.relation, "group_size": self.group_size,
                "total_epsilon": total.epsilon, "total_rho": total.rho,
                "order": total.order,
                "remaining_epsilon": self._remaining_eps(entries),
                "entries": [e.to_dict() for e in entries]}

    # --- words -----------------------------------------------------------------
    def __repr__(self):
        return (f"{type(self).__name__}(epsilon={self.epsilon!r}, "
                f"delta={self.delta!r})")

    def __str__(self):
        entries = self.entries
        total = self._total(entries)
        excluded = math.fsum(e.delta for e in entries)
        lines = [f"Privacy ledger: budget ({self.epsilon:.4g}, {self.delta:.3g}); "
                 f"spent ({total.epsilon:.4g}, {self.delta:.3g}) over "
                 f"{len(entries)} release(s), Rényi curves composed order by order; "
                 f"remaining: epsilon {self._remaining_eps(entries):.4g} for one more "
                 "release" + (
                     f" without category selections, whose excluded events have "
                     f"taken {excluded:.3g} of the delta {self.delta:.3g} (each "
                     "private pipeline's release takes its own; listed categories "
                     "take none)" if excluded else "") + "."]
        for i, e in enumerate(entries, 1):
            kind = (f"Rényi q*{e.rho:.4g}" if e.curve is None
                    else "repeat-and-select curve" + (
                        f" + q*{e.rho:.4g}" if e.rho else ""))
            if e.delta:  # spent from the budget's delta (Section 20.2)
                kind += f", outside events of probability {e.delta:.3g}"
            when = f" ({e.recorded_at})" if e.recorded_at else ""
            lines.append(f"  {i}. {e.label}{when}: epsilon {e.epsilon(self.delta):.4g} "
                         f"alone ({kind})" + (" [under way]" if e.reserved else ""))
        if self._snapshot:
            lines.append("  (a pickled snapshot: it refuses to record; see resume())")
        return "\n".join(lines)
