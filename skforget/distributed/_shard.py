# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The worker side: one actor per worker holds that worker's shard of the rows.

A :class:`_Shard` keeps its rows (and their sample weights), maps them with the
public row map once per segment, sums the clipped gradient of a batch when the
driver asks, and stages an edit with a journal until the driver decides it.
"""

import asyncio
import collections

import numpy as np
import scipy.sparse as sp

from skforget._edits import _append_rows, _set_rows
from skforget._utils import check_weights
from skforget._validation import label_codes
from skforget.exceptions import UnlearningError


def _stack(parts):
    if any(sp.issparse(p) for p in parts):
        return sp.vstack([sp.csr_matrix(p) for p in parts], format="csr")
    return np.concatenate([np.asarray(p) for p in parts]) if len(parts) > 1 \
        else np.asarray(parts[0])


def _rows_except(X, drop):
    keep = np.ones(X.shape[0], dtype=bool)
    keep[drop] = False
    return X[keep]  # a copy, for arrays and CSR alike


#: Multiply-adds of a gradient sum done on the worker's event loop itself: a
#: few milliseconds, far below the seconds Dask tolerates a busy loop.
_INLINE_WORK = 1 << 22


class _Map:
    """One row source's map of a shard's rows (a segment of a fit or an edit):
    the kernel's design, the row weights and the mini-batch layout."""

    __slots__ = ("design", "weight", "order", "bounds")

    def __init__(self, design, weight):
        self.design, self.weight = design, weight
        self.order = self.bounds = None


class _Shard:
    """One worker's rows, resident in a Dask actor between calls.

    All methods run on the worker. Positions are local to the shard; the row
    map and the targets' encoding are computed here, from public parameters.
    Each row source keeps its own map (``source`` token), so two fits reading
    the same rows cannot mix their clipping or weighting.

    An edit is staged under an attempt token with the previous rows in a
    journal. The driver decides every attempt (commit or roll back) on its
    side; a shard that missed the decision (an interrupted round) is brought
    in line by :meth:`settle` before the database is read or edited again.
    """

    def __init__(self, X_parts, y_parts, w_parts=None):
        self.X = _stack(list(X_parts))
        self.y = np.concatenate([np.asarray(p) for p in y_parts])
        self.w = None if w_parts is None else np.concatenate(
            [np.asarray(p, dtype=np.float64) for p in w_parts])
        self._journal = None
        # Attempts rolled back: a stage that reaches the worker after its own
        # rollback (an interrupted driver) must not apply.
        self._rolled_back = collections.deque(maxlen=256)
        self._maps = {}
        # Row sources released: a prepare that arrives late must not map again.
        self._released = collections.deque(maxlen=256)

    def shape(self):
        return self.X.shape

    def prepare(self, source, offset, spec, exclusive):
        """Validate and map this shard's rows for one segment (rows
        ``offset ...`` of the database, named so in errors). ``exclusive``:
        no other source can be reading (an edit's segment, under the edit's
        claim), so maps left by interrupted ones go.

        Returns whether a record has a positive weight (True if unweighted).
        """
        if source in self._released:
            raise UnlearningError("this row source was released")
        if exclusive:
            self._maps.clear()
        from sklearn.utils import check_array

        from skforget._rows import canonical_csr, make_design, row_weights

        where = f"the rows {offset}..{offset + self.X.shape[0] - 1} of the database"
        try:
            # NaN and inf pass here: make_design's row check names their row
            # in the database (first_row below).
            X = check_array(self.X, accept_sparse="csr",
                            dtype=[np.float64, np.float32], order="C",
                            ensure_min_samples=0, ensure_all_finite=False,
                            input_name="X")
        except (TypeError, ValueError):
            # A fixed sentence, never the library's text, which may quote
            # values (a trial's traceback carried 'alice@example.com'; a
            # complex array's, the whole shard): it goes to the driver, whose
            # user need not hold the rows.
            raise ValueError(f"X holds values that are not real numbers (text, "
                             f"complex or other objects) ({where}; the values "
                             "stay on the worker).") from None
        if sp.issparse(X):
            X = canonical_csr(X, where=where)
        y = self._encode(self.y, spec["classes"], offset, spec["error"])
        if spec["classes"] is None:
            # The regressor's public origin and scale (as _encode_targets).
            y = (y - spec.get("target_offset", 0.0)) / spec.get("target_scale", 1.0)
        design = make_design(X, y, loss=spec["loss"], data_norm=spec["data_norm"],
                             intercept_scaling=spec["intercept_scaling"],
                             gradient_bound=spec["gradient_bound"],
                             clip_rows=spec["clip_rows"], where="the database",
                             first_row=offset)
        weighting = spec["weighting"]
        if weighting["sample_weight_bound"] and self.w is None:
            raise ValueError("the model weights its records but the database's "
                             "records carry no sample weights")
        w = None
        if weighting["sample_weight_bound"]:
            # Named by database row, like the targets (dask arrays' weights are
            # first seen here).
            w = check_weights(self.w, len(self.w), "sample_weight", error=ValueError,
                              offset=offset)
        self._maps[source] = _Map(design, row_weights(w, y, **weighting))
        return w is None or bool(np.any(w > 0))

    @staticmethod
    def _encode(y, classes, offset, error):
        if classes is None:
            try:
                y = np.asarray(y, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"y holds a target that is not a number in the "
                                 f"rows {offset}..{offset + len(y) - 1} of the "
                                 "database (the value stays on the worker)."
                                 ) from None
            bad = ~np.isfinite(y)
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"y[{offset + i}] is not finite.")
            return y
        classes = np.asarray(classes)
        codes, unknown = label_codes(classes, y)
        if np.any(unknown):
            i = int(np.flatnonzero(unknown)[0])
            kind = type(np.asarray(y[i]).item()).__name__
            raise (UnlearningError if error == "unlearn" else ValueError)(
                f"y[{offset + i}] (of type {kind}) is not one of the classes "
                f"{classes.tolist()}.")
        return codes.astype(np.float64)

    def class_counts(self, source, n_classes):
        """Records per class code in this shard (Section 18.1's counts, before
        the driver adds the noise)."""
        return self._maps[source].design.class_counts(n_classes)

    def class_moments(self, source, n_classes, direction):
        """This shard's class sums and squared scores along ``direction``, in
        one read (Sections 18.11 and 18.12, before the driver adds the
        noise)."""
        return self._maps[source].design.class_moments(n_classes, direction)

    def set_layout(self, source, order, bounds):
        m = self._maps[source]
        m.order = np.ascontiguousarray(order, dtype=np.int64)
        m.bounds = np.asarray(bounds, dtype=np.int64)

    async def gradient(self, source, W, b, loss_code, batch, n_threads):
        """This shard's clipped gradient sum (all rows, or its part of a batch).

        A coroutine, so Dask runs it on the worker's event loop: a small shard
        is summed there at once (a hop to a thread would cost more than the
        sum), a large one in a thread so the loop stays responsive.
        """
        m = self._maps[source]
        X = m.design.X
        if batch is None:
            rows, span = X.shape[0], {}
        else:
            lo, hi = int(m.bounds[batch]), int(m.bounds[batch + 1])
            rows, span = hi - lo, dict(order=m.order, lo=lo, hi=hi)
        per_row = X.nnz / max(1, X.shape[0]) if sp.issparse(X) else X.shape[1]
        if rows * per_row * W.shape[0] <= _INLINE_WORK:
            return self._gradient(m, W, b, loss_code, n_threads, span)
        return await asyncio.to_thread(self._gradient, m, W, b, loss_code,
                                       n_threads, span)

    @staticmethod
    def _gradient(m, W, b, loss_code, n_threads, span):
        G = np.empty_like(W)
        Gb = np.empty_like(b)
        m.design.gradient_sum(W, b, G, Gb, loss_code=loss_code, weight=m.weight,
                              n_threads=n_threads, **span)
        return G, Gb

    def release(self, source):
        """Drop a row source's map once its segment is done."""
        self._released.append(source)
        self._maps.pop(source, None)

    def settle(self, committed, aborted):
        """Bring a journal left by an interrupted round in line with the
        driver's decision: keep the edit of the ``committed`` attempt, undo
        any other; and refuse the ``aborted`` attempts' stages still on the
        way."""
        self._rolled_back.extend(a for a in aborted if a not in self._rolled_back)
        self._settle(committed)

    def _settle(self, committed):
        if self._journal is not None:
            if self._journal[0] != committed:
                self.X, self.y, self.w = self._journal[1:]
            self._journal = None

    def stage(self, attempt, committed, delete, replace, X_replace, y_replace,
              X_insert, y_insert, w_replace=None, w_insert=None):
        """Apply an edit, keeping the previous rows in the journal under the
        attempt's token."""
        if attempt in self._rolled_back:
            raise UnlearningError("this edit attempt was rolled back")
        self._settle(committed)
        # No fit reads during an edit: the maps of interrupted ones (and the
        # rows they hold) go now.
        self._maps.clear()
        X, y, w = self.X, self.y, self.w
        kept = np.setdiff1d(np.arange(X.shape[0]), delete)
        pos = np.searchsorted(kept, replace)
        X_new, y_new = _rows_except(X, delete), np.delete(y, delete)
        w_new = None if w is None else np.delete(w, delete)
        if w_new is not None and len(replace):
            w_new[pos] = w_replace
        if w_new is not None and X_insert is not None:
            w_new = np.concatenate([w_new, np.asarray(w_insert, dtype=np.float64)])
        # The in-memory request's row edits, dtype promotion included: integer
        # rows or targets must not truncate the new values.
        if len(replace):
            X_new = _set_rows(X_new, pos, X_replace)
            y_new = _set_rows(y_new, pos, np.asarray(y_replace))
        if X_insert is not None and X_insert.shape[0]:
            X_new = _append_rows(X_new, X_insert, None)
            y_new = _append_rows(y_new, np.asarray(y_insert), None)
        self._journal = (attempt, X, y, w)
        self.X, self.y, self.w = X_new, y_new, w_new
        return X_new.shape[0]

    def rollback(self, attempt):
        self._rolled_back.append(attempt)
        if self._journal is not None and self._journal[0] == attempt:
            self.X, self.y, self.w = self._journal[1:]
            self._journal = None

    def rows(self):
        return self.X, self.y, self.w
