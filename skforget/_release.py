# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a call that releases a private output does once it has succeeded.

A public call that draws noise (``fit``, ``partial_unlearn`` of an estimator,
a pipeline or a search) runs inside :func:`releasing`. Two things wait for
it to succeed, with its new state committed (privacy-accounting.md, Section
20.3):

* the ledger entries reserved by :func:`release_spending` are recorded (and
  cancelled if the call fails, when nothing of the release has left it);
* warnings about the released output (:func:`warn_about_release`: a
  constant model's margin, a coarse private range) are emitted, after the
  record. A warnings filter that raises one as an error then finds the
  release recorded and the estimator fitted, as scikit-learn leaves an
  estimator fitted under a ``ConvergenceWarning`` raised as an error; had it
  been raised inside the ledger's block, the entry would have been cancelled
  while the exception's text carried numbers of the noisy output.

Warnings about the configuration (a label set read from the rows, an
adaptive figure over the target) are decided from public numbers before the
first draw and emitted at once, so such a filter stops the call before
anything is spent. Nested calls (an estimator's ``fit`` inside a pipeline's)
share the outermost call's record.

The entries are cancelled only if the call fails before its new state is in
place (:func:`mark_committed`), when nothing of the release has left it; a
failure after that records them. The context is a :mod:`contextvars`
variable: each thread starts without one (on free-threaded Python builds
that let threads inherit the context, a thread started inside a releasing
call would share its record).
"""

import contextvars
import warnings
from contextlib import contextmanager

from skforget._utils import no_interrupts, restore_on_error
from skforget._validation import user_stacklevel
from skforget.accounting import LedgerUnreachableError
from skforget.accounting._ledger import Spent

_CURRENT = contextvars.ContextVar("skforget_release", default=None)


class _Pending:
    """The outermost releasing call's deferred ledger entries and warnings."""

    def __init__(self, rollback):
        self.entries = []    # (ledger, entry_id, final figure)
        self.warnings = []   # (message, category)
        self.committed = False
        self.depth = 0       # releasing calls nested in the outermost one
        self.rollback = rollback

    def cancel(self):
        # Newest first, as nested blocks would have unwound.
        for ledger, entry_id, _ in reversed(self.entries):
            ledger.cancel(entry_id)

    def settle(self):
        for ledger, entry_id, final in self.entries:
            ledger.settle(entry_id, **final)


@contextmanager
def releasing(*, own=False, rollback=False):
    """Run a public call that may release: on success, record its ledger
    entries, then emit its warnings about the released output; on failure,
    cancel the entries and drop the warnings.

    Parameters
    ----------
    own : bool, default=False
        Keep this call's record apart from an enclosing call's (a search's
        candidate runs, whose warnings the search records and shows only for
        the released run). By default a nested call shares the enclosing
        record.
    rollback : bool, default=False
        This call discards, on failure, whatever its nested calls committed
        (a record store's transaction and the in-memory model it edited):
        their :func:`mark_committed` then does not count, only this call's
        own does. By default a nested call's commit counts for the whole call
        (a pipeline does not undo its estimator's edit), so that a failure
        after it records the release: an over-count, never an under-count.
    """
    current = _CURRENT.get()
    if current is not None and not own:
        current.depth += 1
        try:
            yield
        finally:
            current.depth -= 1
        return
    pending = _Pending(rollback)
    token = _CURRENT.set(pending)
    try:
        yield
    except BaseException:
        _CURRENT.reset(token)
        # Committed (an interrupt delivered at the end of the commit, a
        # failure in the cleanup after it): the release was made, recorded.
        # Not committed: nothing of it left the call, cancelled. If the
        # ledger fails here too, the entries stay reserved, which counts them,
        # and the first error is the one raised.
        with no_interrupts():
            try:
                (pending.settle if pending.committed else pending.cancel)()
            except Exception:  # noqa: BLE001, S110
                pass
        raise
    _CURRENT.reset(token)
    try:
        with no_interrupts():
            pending.settle()
    except Exception as exc:
        raise LedgerUnreachableError(
            "The release was made (the model holds its new state), but the "
            f"ledger could not record it ({type(exc).__name__}: {exc}). Its "
            "reservation is still counted against the budget.") from exc
    for message, category in pending.warnings:
        warnings.warn(message, category, stacklevel=user_stacklevel())


def mark_committed():
    """Say that the outermost releasing call's new state is in place (its
    fitted attributes, an in-place request's rows, a sharded database's new
    version, a record store's transaction): from here a failure records its
    entries instead of cancelling them. Called at the end of the block that
    restores the object on error, so an interrupt between the two
    over-counts (the object is restored, the entry kept), never
    under-counts. A nested call's commit (an estimator's inside a pipeline's)
    counts for the outermost call, unless that call rolls its nested calls
    back on failure (``releasing(rollback=True)``, a record store's serving
    transaction), which then marks its own commit."""
    pending = _CURRENT.get()
    if pending is not None and (pending.depth == 0 or not pending.rollback):
        pending.committed = True


@contextmanager
def releasing_atomically(*objects):
    """:func:`releasing` around ``restore_on_error(*objects)``, the commit
    marked (:func:`mark_committed`) when the block ends normally, inside the
    restore block: the common form of a ``fit`` that draws noise."""
    with releasing(), restore_on_error(*objects):
        yield
        mark_committed()


@contextmanager
def release_spending(ledger, label, **figure):
    """Reserve a planned release on ``ledger`` (None: no ledger) before the
    block's data pass; cancel it if the block raises. Inside
    :func:`releasing`, the entry is recorded when the outermost call
    succeeds; outside, when the block does (``ledger.spending``). Yields a
    dict in which the block may put the final figure (``"rho"``,
    ``"curve"``, ``"delta"``)."""
    if ledger is None:
        yield Spent()
        return
    pending = _CURRENT.get()
    if pending is None:
        with ledger.spending(label, **figure) as final:
            yield final
        return
    entry_id = ledger.reserve(label, **figure)
    final = Spent()
    final.entry_id = entry_id
    try:
        yield final
    except BaseException:
        if pending.committed:
            # Committed already (an interrupt delivered as this block unwinds,
            # after the object's restore block exited): the outermost call
            # records it.
            pending.entries.append((ledger, entry_id, final))
        else:
            ledger.cancel(entry_id)
        raise
    pending.entries.append((ledger, entry_id, final))


def edit_figure(model, conditional, whole):
    """What a model's edit records on its ledger (privacy-accounting.md,
    Section 20.1): ``conditional``, the edit's own term from the previous
    model, only when the ledger holds that model's release; else
    ``whole``, the edited model's DP figure (a ledger given after the fit,
    or one that holds none of its releases). A model a search refitted
    records its search's refit figure, fixed before the search (its
    selected hyper-parameters, which set its terms, are the search's
    output)."""
    fixed = getattr(model, "_ledger_fixed_rho", None)
    if fixed is not None:
        return max(fixed, whole)
    ledger = getattr(model, "ledger", None)
    if ledger is not None and ledger.holds(getattr(model, "_ledger_entry", None)):
        return conditional
    return whole


def note_entry(model, spent, *, fit=False):
    """Keep the key of the ledger entry a release was recorded as (public:
    a random id), for the next edit's :func:`edit_figure`; a ``fit`` also
    ends what a search fixed for the model's edits."""
    model.__dict__.pop("_ledger_entry", None)
    if fit:
        model.__dict__.pop("_ledger_fixed_rho", None)
    if spent.entry_id is not None:
        model._ledger_entry = spent.entry_id


def warn_about_release(message, category=UserWarning):
    """Warn about a released output once its release is recorded: at the end
    of the outermost :func:`releasing` call, or now outside one."""
    pending = _CURRENT.get()
    if pending is None:
        warnings.warn(message, category, stacklevel=user_stacklevel())
    else:
        pending.warnings.append((message, category))
