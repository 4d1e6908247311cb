# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Small helpers every layer may use: weight checks, a Ctrl-C guard, shared docs.

A leaf module, like scikit-learn's ``sklearn.utils``: it imports nothing of
skforget but the exceptions, so the records, the cluster code and the
estimators can all share these without importing one another.
"""

import inspect
import signal
import textwrap
import threading
from contextlib import contextmanager

import numpy as np
from sklearn.base import BaseEstimator

from skforget.exceptions import UnlearningError


def check_weights(weights, n, name, *, per="record", error=UnlearningError,
                  offset=0):
    """``weights`` as a read-only float64 array of ``n`` finite, nonnegative
    entries (None passes through); errors (of type ``error``) name ``name``
    and the row (``offset`` + its position: a shard names database rows), and
    say what one weight is ``per``."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or len(w) != n:
        raise error(f"{name} must be 1-D with one weight per {per} ({n}), "
                    f"got shape {w.shape}.")
    bad = np.flatnonzero(~(np.isfinite(w) & (w >= 0)))
    if bad.size:
        i = int(bad[0])
        # The index, not the value: on a cluster the text reaches a driver
        # whose user need not hold the weights (a trial).
        kind = "NaN" if np.isnan(w[i]) else "infinite" if np.isinf(w[i]) \
            else "negative"
        raise error(f"{name}[{offset + i}] is {kind}: a weight must be finite "
                    "and nonnegative.")
    w = w.copy()
    w.setflags(write=False)
    return w


def check_sample_weight(sample_weight, n):
    """``sample_weight`` of ``fit`` as float64: one finite, nonnegative weight
    per row (the error names the row, :func:`check_weights`), not all zero."""
    w = check_weights(sample_weight, n, "sample_weight", per="row of X",
                      error=ValueError)
    if n:
        check_some_weight(np.any(w > 0))
    return w


def check_some_weight(any_positive):
    """Refuse weights that are zero for every row, as scikit-learn does
    (``any_positive``: whether some weight is positive, wherever it was read)."""
    if not any_positive:
        raise ValueError("sample_weight is zero for every row: there is nothing to "
                         "fit (as in scikit-learn, all-zero weights are refused).")


def edit_seed(random_state, index):
    """The noise source of the ``index``-th refit of a pipeline: a fresh,
    independent stream from the public counter for an integer seed
    (privacy-accounting.md, 19.4; 128 bits of state, so no two edits share
    noise), the same generator (consumed further) for a RandomState, None for
    None."""
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return random_state
    seq = np.random.SeedSequence(entropy=int(random_state), spawn_key=(index,))
    return np.random.RandomState(np.random.MT19937(seq))


@contextmanager
def restore_on_error(*objects):
    """Restore every attribute of each of ``objects`` if the block raises.

    Fitted attributes are only ever replaced, never mutated in place (as in
    scikit-learn), so a shallow snapshot of each ``__dict__`` undoes a failed
    call exactly: an estimator, a preprocessing step, or every step of a
    pipeline is left as it was.
    """
    snapshots = [(obj, dict(obj.__dict__)) for obj in objects]
    try:
        yield
    except BaseException:
        for obj, state in snapshots:
            obj.__dict__.clear()
            obj.__dict__.update(state)
        raise


def _estimators_in(est, seen):
    """``est`` and every estimator reachable through its parameters."""
    if id(est) in seen or not isinstance(est, BaseEstimator):
        return
    seen[id(est)] = est
    for value in est.get_params(deep=False).values():
        if isinstance(value, list | tuple):
            for item in value:
                for part in (item if isinstance(item, tuple) else (item,)):
                    _estimators_in(part, seen)
        else:
            _estimators_in(value, seen)


@contextmanager
def atomic_tree(pipeline):
    """Restore the pipeline and every step in it if the block raises.

    scikit-learn's ``fit`` replaces fitted attributes rather than mutating
    them, so shallow snapshots of every estimator's ``__dict__`` undo a
    failed fit exactly (the same argument as for the estimators).
    """
    seen = {}
    _estimators_in(pipeline, seen)
    with restore_on_error(*seen.values()):
        yield


@contextmanager
def no_interrupts():
    """Hold Ctrl-C back for the few assignments that must happen together (a
    decision recorded in two places), then deliver it.

    Python raises KeyboardInterrupt between any two bytecodes of the main
    thread; inside this block the signal is only noted, and raised when the
    block ends. Other threads never receive it, so there it does nothing.
    """
    previous = (signal.getsignal(signal.SIGINT)
                if threading.current_thread() is threading.main_thread() else None)
    if previous is None:  # not the main thread, or a handler set outside Python
        yield
        return
    pending = []
    signal.signal(signal.SIGINT, lambda *args: pending.append(args))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pending and callable(previous):
            previous(*pending[0])


def fill_doc(obj, **blocks):
    """Put shared text into ``obj``'s docstring: each ``{name}`` becomes
    ``blocks[name]``; returns ``obj``.

    The one way skforget shares docstring text (parameters that two estimators
    or two functions have in common). The docstring (:func:`inspect.cleandoc`)
    and every block (:func:`textwrap.dedent`, so one numpydoc entry keeps its
    description indented under its name) are dedented first: a placeholder
    written at the docstring's indentation receives the block at the same
    indentation on every Python version. ``str.replace``, not ``format``,
    because docstrings hold literal braces.
    """
    if obj.__doc__:  # None under python -OO
        doc = inspect.cleandoc(obj.__doc__)
        for name, block in blocks.items():
            doc = doc.replace(f"{{{name}}}", textwrap.dedent(block).strip("\n"))
        obj.__doc__ = doc
    return obj


def named_few(names, k=5):
    """``names`` for a message: the first ``k``, and how many more."""
    names = list(names)
    more = f" and {len(names) - k} more" if len(names) > k else ""
    return ", ".join(names[:k]) + more
