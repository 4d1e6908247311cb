# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The driver side of a fit on a cluster: the row source the solver runs on.

:class:`_ClusterRows` offers the solver the same calls as the in-memory
``skforget._rows.Design`` (``n_samples``, ``gradient_sum``, ``run_steps``):
one message per worker per step, a block of steps as one coroutine on the
client's event loop, the shards' sums added in shard order on the driver.
"""

import math
import secrets

import numpy as np

from skforget._utils import check_some_weight


class _ClusterRows:
    """The solver's row source for a :class:`ShardedDatabase`.

    A step is one message per worker; the shards' partial sums are added in
    shard order on the driver, so a fixed shard layout reproduces itself. The
    steps of one ``run_steps`` call run as one coroutine on the client's event
    loop, on copies of the coefficients that are written back when they are
    all done: an interrupted call leaves the caller's arrays as they were.
    """

    #: Steps per run_steps call: the solver's progress report and long-run
    #: warning come between calls, so after a few dozen rounds of messages.
    max_steps_per_call = 64

    def __init__(self, shards, shard_sizes, spec, *, loss, n_jobs, exclusive):
        self.loss = loss
        self._offsets = np.concatenate([[0], np.cumsum(shard_sizes)]).astype(np.int64)
        self.n_samples = int(self._offsets[-1])
        self._shards = shards
        self._n_threads = n_jobs
        self._layout = None
        # This source's maps on the shards, apart from any other source's.
        self._token = secrets.token_hex(8)
        try:
            weighted = shards.map("prepare", {
                s: (self._token, int(self._offsets[s]), spec, exclusive)
                for s in range(len(shards))})
            if spec["error"] == "fit":
                check_some_weight(any(weighted))
        except BaseException:
            self.release(quiet=True)  # the shards that did map their rows
            raise

    def release(self, quiet=False):
        """Drop this source's maps on the shards (``quiet``: best effort, on
        the way out of an error; a map left behind goes with the next
        exclusive read or edit)."""
        try:
            self._shards.map("release", self._shards.each(self._token))
        except Exception:  # noqa: BLE001
            if not quiet:
                raise

    def class_counts(self, n_classes):
        """Records per class code over every shard (exact; the caller adds the
        noise of Section 18.1 on the driver)."""
        parts = self._shards.map("class_counts",
                                 self._shards.each(self._token, n_classes))
        return np.sum(list(parts), axis=0).astype(np.float64)

    def class_moments(self, n_classes, direction=None):
        """Sums of each class's mapped rows and, along ``direction``, of their
        squared scores over every shard, each shard reading its rows once
        (float64, summed shard by shard; the caller adds the noise of
        Sections 18.11 and 18.12 on the driver)."""
        if direction is not None:
            direction = np.asarray(direction, dtype=np.float64)
        parts = list(self._shards.map(
            "class_moments", self._shards.each(self._token, n_classes, direction)))
        sums = np.sum([p[0] for p in parts], axis=0).astype(np.float64)
        return sums, float(np.sum([p[1] for p in parts]))

    async def _sum(self, W, b, G, Gb, loss_code, batch):
        parts = await self._shards.call_all(
            "gradient", self._shards.each(self._token, W, b, loss_code, batch,
                                          self._n_threads))
        G[:] = parts[0][0]
        Gb[:] = parts[0][1]
        for g, gb in parts[1:]:
            G += g
            Gb += gb

    def gradient_sum(self, W, b, G, Gb, *, loss_code, weight=None, n_threads=1):
        if weight is not None:
            raise ValueError("row weights are not supported on a ShardedDatabase")
        self._shards.run(self._sum, W, b, G, Gb, loss_code, None)

    def _send_layout(self, order, bounds):
        layouts = {}
        for s in range(len(self._shards)):
            lo, hi = self._offsets[s], self._offsets[s + 1]
            mine = np.flatnonzero((order >= lo) & (order < hi))
            layouts[s] = (self._token, order[mine] - lo, np.searchsorted(mine, bounds))
        self._shards.map("set_layout", layouts)
        self._layout = order

    def run_steps(self, W, b, *, order, bounds, first_batch, etas, noise, sigma,
                  lam, inv_B, loss_code, fit_intercept, weight=None, n_threads=1):
        if weight is not None:
            raise ValueError("row weights are not supported on a ShardedDatabase")
        E = bounds.shape[0] - 1
        if E > 1 and self._layout is not order:
            self._send_layout(order, bounds)
        W_, b_ = W.copy(), b.copy()
        self._shards.run(self._steps, W_, b_, E, first_batch, etas, noise, sigma,
                         lam, inv_B, loss_code, fit_intercept)
        W[:] = W_
        b[:] = b_

    async def _steps(self, W, b, E, first_batch, etas, noise, sigma, lam, inv_B,
                     loss_code, fit_intercept):
        K, d = W.shape
        G, Gb = np.empty((K, d)), np.empty(K)
        for t in range(etas.shape[0]):
            eta = float(etas[t])
            await self._sum(W, b, G, Gb, loss_code,
                            None if E == 1 else (first_batch + t) % E)
            shrink, step = 1.0 - eta * lam, eta * inv_B
            sd = math.sqrt(2.0 * eta) * sigma
            W[:] = shrink * W - step * G + sd * noise[t, :, :d]
            if fit_intercept:
                b[:] = shrink * b - step * Gb + sd * noise[t, :, d]
