# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""The driver side: the sharded database, its edit requests, the calls to shards.

:class:`ShardedDatabase` places one :class:`~skforget.distributed._shard._Shard`
actor per worker and hands the estimators a row source
(:class:`~skforget.distributed._row_source._ClusterRows`);
:class:`ShardedEditRequest` routes an edit to the shards by their public sizes,
stages it there and settles it once the driver has decided. How the pieces
talk is described in :mod:`skforget.distributed`.
"""

import asyncio
import collections
import contextlib
import math
import secrets
import threading

import numpy as np
import scipy.sparse as sp

from skforget._database import DatabaseVersion
from skforget._edits import _EditCounts, check_new_weights
from skforget._utils import (
    check_sample_weight,
    no_interrupts,
)
from skforget._validation import warn
from skforget.distributed._row_source import _ClusterRows
from skforget.distributed._shard import _Shard, _stack
from skforget.exceptions import UnlearningError

__all__ = ["ShardedDatabase", "ShardedEditRequest"]


def _distributed():
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "skforget.distributed needs Dask: pip install 'skforget[dask]'") from exc
    return distributed


def is_dask_collection(X):
    """Whether ``X`` is a dask array (checked without importing dask)."""
    return type(X).__module__.split(".")[0] == "dask"


def _direct_route(client, worker):
    """Whether the driver talks to the workers straight (fast) or through the
    scheduler: the client's ``direct_to_workers`` if set; if unset (Dask's
    default), straight when a worker answers within a few seconds, so that a
    deployment that exposes only the scheduler still works. Probed once per
    client (every fit on dask arrays builds a database)."""
    if client.direct_to_workers is not None:
        return bool(client.direct_to_workers)
    if client.id not in _ROUTES:

        async def probe():
            try:
                await asyncio.wait_for(client.rpc(worker).identity(), _PROBE_SECONDS)
                return True
            except Exception:  # noqa: BLE001 - any failure: use the scheduler
                return False

        _ROUTES[client.id] = client.sync(probe)
    return _ROUTES[client.id]


#: How long the driver waits for a worker to answer before relaying through
#: the scheduler (an unreachable address may otherwise hang for the connect
#: timeout), and the answer per client.
_PROBE_SECONDS = 5.0
_ROUTES = {}
#: Seconds a new ShardedDatabase waits for a worker before refusing a cluster
#: that has none.
_WORKER_WAIT = 10.0


class _Shards:
    """The database's actors, called straight on the workers holding them.

    Each call goes over the client's connection pool to the worker's
    ``actor_execute`` handler (the one Dask's actor proxies use), or through
    the scheduler when the driver cannot reach the workers (``direct``), and
    every call to several shards is one coroutine on the client's event loop
    (see "How the calls travel" in :mod:`skforget.distributed`).
    """

    def __init__(self, client, futures, addresses, direct):
        self.client = client
        self._futures = futures  # holding them keeps the actors alive
        self._keys = [f.key for f in futures]
        self._addresses = list(addresses)
        self._direct = direct

    def __len__(self):
        return len(self._keys)

    async def call(self, s, method, *args):
        """One method call on shard ``s``, awaited on the client's loop.

        The arguments travel as one pickle (protocol 5: arrays as out-of-band
        frames, no copy): per argument ``to_serialize`` frames made a step
        with small coefficients 0.4-0.7 ms dearer on the benchmark machine.
        """
        from distributed.protocol import to_serialize
        from distributed.protocol.serialize import ToPickle

        address = self._addresses[s]
        # An in-process comm hands messages over unserialised, and older Dask
        # (2024.1) then leaves ToPickle wrapped: send what its actors send.
        args = ([to_serialize(a) for a in args] if address.startswith("inproc")
                else ToPickle(list(args)))
        msg = dict(function=method, actor=self._keys[s], args=args, kwargs={})
        try:
            if self._direct:
                reply = await self.client.rpc(address).actor_execute(**msg)
            else:
                reply = await self.client.scheduler.proxy(
                    msg=dict(msg, op="actor_execute"), worker=address)
        except OSError as exc:   # the worker is unreachable (dead, or gone)
            raise self._lost(s, exc) from exc
        if reply["status"] != "OK":
            exc = reply["exception"]
            if isinstance(exc, KeyError) and self._keys[s] in str(exc):
                # The worker runs, but restarted without the shard's actor.
                raise self._lost(s, exc) from exc
            raise exc
        return reply["result"]

    def _lost(self, s, exc):
        """The error for a shard whose worker left or restarted: its rows are
        gone with it (a trial read a bare OSError or KeyError)."""
        return RuntimeError(
            f"Shard {s} (on worker {self._addresses[s]}) cannot be reached or "
            f"no longer holds its rows ({type(exc).__name__}): its worker left "
            "the cluster or restarted, and a ShardedDatabase keeps each shard on "
            "one worker only. Build the ShardedDatabase again from the source "
            "rows; the model and its guarantee are as they were.")

    async def call_all(self, method, args):
        """``method`` on the shards ``args`` names, with ``args[s]`` for shard
        ``s``; the results in that order. Waits for every call, so none is
        still running when an error is raised (a rollback must come after)."""
        out = await asyncio.gather(*[self.call(s, method, *a)
                                     for s, a in args.items()],
                                   return_exceptions=True)
        for s, r in zip(args, out, strict=True):
            if isinstance(r, asyncio.CancelledError):
                # One call cancelled under a running round (its worker left).
                raise RuntimeError(f"the call {method!r} to shard {s} was "
                                   "cancelled: did its worker leave the cluster?")
            if isinstance(r, BaseException):
                raise r
        return out

    def each(self, *args):
        """The same arguments for every shard, for :meth:`call_all`."""
        return dict.fromkeys(range(len(self)), args)

    def map(self, method, args=None):
        """:meth:`call_all` from the driver's thread (every shard, without
        arguments, if ``args`` is None)."""
        return self.run(self.call_all, method, self.each() if args is None else args)

    def run(self, coroutine_function, *args):
        return self.client.sync(coroutine_function, *args)

    def close(self):
        for f in self._futures:
            f.release()
        self._futures, self._keys, self._addresses = [], [], []


class ShardedDatabase:
    """Training records held on the workers of a Dask cluster.

    The rows are split into contiguous shards, one per worker (a dask
    array's follow its blocks: one block is one shard), each kept in
    memory by an actor on that worker; the driver keeps only the public shard
    sizes and the :class:`~skforget.DatabaseVersion`. Fit an estimator with
    ``est.fit(database)`` and serve edits with
    ``est.partial_unlearn(database.edit(...))``: the results equal those of the
    same rows in memory, up to the order of floating-point sums.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask array of shape (n_samples, n_features)
        Rows. A dask array's blocks are computed on the workers and never pass
        through the driver.
    y : array-like or dask array of shape (n_samples,)
        Targets (class labels or regression targets).
    sample_weight : array-like or dask array of shape (n_samples,), default=None
        A weight per record (finite, nonnegative), held with the record on its
        worker; estimators fitted on the database use them as ``fit``'s
        ``sample_weight``, and edits carry the new records' weights.
    client : distributed.Client, default=None
        The cluster; None uses the current default client.

    Attributes
    ----------
    shard_sizes : tuple of int
        Rows per shard, in row order (public counts).
    weighted : bool
        Whether the records carry sample weights.
    version : DatabaseVersion
        Current version; a model fitted on the database serves requests built
        on this version only.

    Examples
    --------
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> from skforget import NoisyGDClassifier
    >>> from skforget.distributed import ShardedDatabase
    >>> cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
    ...                        protocol="tcp", host="127.0.0.1",
    ...                        dashboard_address=None)
    >>> client = Client(cluster)
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((400, 3)) / 3
    >>> y = (X[:, 0] > 0).astype(int)
    >>> db = ShardedDatabase(X, y, client=client)
    >>> db.shard_sizes
    (200, 200)
    >>> clf = NoisyGDClassifier(classes=[0, 1], random_state=0).fit(db)
    >>> clf = clf.partial_unlearn(db.edit(delete=[5, 300]))
    >>> db.n_samples
    398
    >>> db.close(); client.close(); cluster.close()
    """

    def __init__(self, X, y, *, sample_weight=None, client=None):
        distributed = _distributed()
        self.client = client if client is not None else distributed.default_client()
        if not (sp.issparse(X) or is_dask_collection(X)):
            X = np.asarray(X)
        if not is_dask_collection(y):
            y = np.asarray(y)
        workers = sorted(self.client.scheduler_info()["workers"])
        if not workers:
            # Workers (re)registering with the scheduler leave it empty for a
            # moment (seen in CI under load): wait a little before refusing.
            try:
                self.client.wait_for_workers(1, timeout=_WORKER_WAIT)
            except (TimeoutError, OSError):
                pass
            workers = sorted(self.client.scheduler_info()["workers"])
        if not workers:
            raise ValueError("the Dask cluster has no workers")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        if y.ndim != 1:
            # As an estimator's fit in memory (y of shape (n, 1) reached the
            # kernel: "Buffer has wrong number of dimensions", a trial).
            raise ValueError(f"y must be 1-D (one target per row), got shape "
                             f"{y.shape}: pass y.ravel() for a column.")
        if any(math.isnan(v) for v in (*X.shape[:1], *y.shape[:1])):
            raise ValueError("X or y is a dask array of unknown chunk sizes: call "
                             "compute_chunk_sizes() on it first.")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}.")
        columns = [X, y]
        if sample_weight is not None:
            if is_dask_collection(sample_weight):
                # Checked where the rows live, when a fit maps them.
                if sample_weight.shape != (X.shape[0],):
                    raise ValueError(f"sample_weight must have shape ({X.shape[0]},), "
                                     f"got {sample_weight.shape}.")
            else:
                sample_weight = check_sample_weight(sample_weight, X.shape[0])
            columns.append(sample_weight)
        self._direct = _direct_route(self.client, workers[0])
        if is_dask_collection(X):
            groups = self._dask_groups(columns, workers)
        else:
            groups = self._array_groups(columns, workers)
        workers = workers[:len(groups)]
        futures = [self.client.submit(_Shard, *parts, workers=[w], actor=True,
                                      allow_other_workers=False, pure=False)
                   for w, parts in zip(workers, groups, strict=True)]
        for f in futures:
            f.result()  # raises here if a shard could not be built
        self._shards = _Shards(self.client, futures, workers, self._direct)
        self.n_features = int(X.shape[1])
        self.weighted = sample_weight is not None
        self.shard_sizes = tuple(int(shape[0]) for shape in self._shards.map("shape"))
        self.version = DatabaseVersion.new()
        # Whether a deletion has shifted positions since the rows were loaded
        # (edit's by="position" guard).
        self._rows_moved = False
        # The driver's record of the edits (see _Shard): the last committed
        # attempt, whether a shard may hold a journal to settle, and what is
        # running (row sources read the rows; an edit changes them).
        self._committed = None
        self._aborted = collections.deque(maxlen=16)
        self._unsettled = False
        self._lock = threading.Lock()
        self._readers = {}     # thread -> reads running in it
        self._editor = None    # the thread serving an edit

    def _array_groups(self, columns, workers):
        """Per worker, its contiguous slice of every column (rows, targets and
        weights), scattered straight to it."""
        X = columns[0]
        columns = [X.tocsr() if sp.issparse(X) else X,
                   *(np.asarray(c) for c in columns[1:])]
        cuts = np.linspace(0, X.shape[0], min(len(workers), X.shape[0]) + 1)
        cuts = cuts.round().astype(np.int64)
        # hash=False: another database scattering the same rows must not share
        # (and, when this one releases them, lose) their keys.
        kw = dict(direct=self._direct, hash=False)
        return [[[self.client.scatter(c[lo:hi], workers=[w], **kw)] for c in columns]
                for w, lo, hi in zip(workers, cuts[:-1], cuts[1:], strict=False)]

    def _dask_groups(self, columns, workers):
        """Per worker, its contiguous run of blocks of every column; the
        targets and weights are cut as the rows are."""
        import dask.array as da

        X = columns[0]
        if len(X.chunks[1]) != 1:
            X = X.rechunk({1: -1})
        cut = []
        for c in columns[1:]:
            if not is_dask_collection(c):
                c = da.from_array(np.asarray(c), chunks=(X.chunks[0],))
            elif c.chunks[0] != X.chunks[0]:
                c = c.rechunk((X.chunks[0],))
            cut.append(c)
        blocks = [self.client.compute(list(c.to_delayed().ravel())) for c in [X, *cut]]
        # Block i goes to worker floor(first_row_i * workers / n): contiguous
        # runs of blocks, cut from the block sizes only.
        starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]])
        owner = (starts * len(workers)) // max(1, X.shape[0])
        return [[[b for b, o in zip(col, owner, strict=True) if o == k]
                 for col in blocks]
                for k in range(len(workers)) if np.any(owner == k)]

    @property
    def n_samples(self):
        return int(sum(self.shard_sizes))

    @property
    def shape(self):
        return (self.n_samples, self.n_features)

    @property
    def offsets(self):
        """First row of each shard, and the total, from the public sizes."""
        return np.concatenate([[0], np.cumsum(self.shard_sizes)]).astype(np.int64)

    def edit(self, *, delete=None, replace=None, X_replace=None, y_replace=None,
             X_insert=None, y_insert=None, sample_weight_replace=None,
             sample_weight_insert=None, by=None):
        """A request to delete, replace or insert records, by current position.

        Returns a :class:`ShardedEditRequest` for ``partial_unlearn``; the
        database changes only when that call succeeds. On a weighted database
        the new records carry theirs (``sample_weight_replace``,
        ``sample_weight_insert``).

        A sharded database holds no record IDs: rows are named by their
        position in its *current* row order, which every deletion shifts.
        After its first deletion, ``delete`` and ``replace`` need
        ``by="position"``, the caller's statement that the positions were
        read from an ID map kept up to date through the edits (a trial's two
        erasure requests by load-time position removed the wrong person), as
        :class:`~skforget.EditRequest` asks on an in-memory database.
        """
        return ShardedEditRequest(self, delete=delete, replace=replace,
                                  X_replace=X_replace, y_replace=y_replace,
                                  X_insert=X_insert, y_insert=y_insert,
                                  sample_weight_replace=sample_weight_replace,
                                  sample_weight_insert=sample_weight_insert, by=by)

    def _check_names(self, delete, replace, by):
        """The ``by`` guard of :meth:`edit` (and of a request built directly):
        after a deletion, rows are named by position knowingly."""
        self._check_open()
        if by not in (None, "position"):
            raise ValueError(
                f"by={by!r}: a ShardedDatabase names rows by position only (it "
                "holds no record IDs); keep your ID -> position map up to date "
                "through the edits and pass by='position'.")
        named = any(v is not None and np.size(v) for v in (delete, replace))
        if by is None and self._rows_moved and named:
            raise ValueError(
                "This database has served a deletion, so the rows after each "
                "deleted one have moved: a position read when the data were "
                "loaded may now name another person. Name rows by their current "
                "position, from an ID -> position map kept up to date through "
                "the edits, and say so with by='position'.")

    def gather(self):
        """Every row and target, collected on the driver (for checks only)."""
        parts = self._rows()
        return _stack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def gather_sample_weight(self):
        """Every record's weight, collected on the driver (for checks only), or
        None if the records carry none."""
        if not self.weighted:
            return None
        return np.concatenate([p[2] for p in self._rows()])

    def _rows(self):
        with self._reading():
            return self._shards.map("rows")

    def close(self):
        """Release the actors and their rows."""
        self._shards.close()
        self._closed = True

    def _check_open(self):
        """A closed database has no rows to read or edit (a trial read
        'sample_weight is zero for every row' and an IndexError)."""
        if self.__dict__.get("_closed"):
            raise ValueError("This ShardedDatabase was closed: its rows were "
                             "released from the workers. Build it again.")

    def __repr__(self):
        weighted = ", weighted" if self.weighted else ""
        return (f"ShardedDatabase(n_samples={self.n_samples}, n_features="
                f"{self.n_features}, shards={len(self.shard_sizes)}{weighted}, "
                f"{self.version})")

    # --- used by the estimators ------------------------------------------------
    def _row_source(self, spec, *, loss, n_jobs, exclusive, shard_sizes=None):
        sizes = self.shard_sizes if shard_sizes is None else shard_sizes
        return _ClusterRows(self._shards, sizes, spec, loss=loss, n_jobs=n_jobs,
                            exclusive=exclusive)

    @contextlib.contextmanager
    def _reading(self):
        """Read the rows (a fit, a plan, a gather): any number at once, none
        while an edit is being served. Yields whether this read is alone."""
        claimed = False
        try:
            with no_interrupts():
                alone = self._claim(edit=False)
                claimed = True
            self._settle()
            yield alone
        finally:
            if claimed:
                with no_interrupts():
                    self._unclaim(edit=False)

    def _claim(self, edit):
        """Claim the database for an edit (alone) or a read (with others).

        A claim is held by a thread. One left by an interrupted operation of
        this thread (a thread runs one operation at a time) or by a thread that
        has ended is stale and dropped; the shards are then settled before
        they are used. Returns, for a read, whether no other read runs.
        """
        self._check_open()
        me = threading.get_ident()
        alive = {t.ident for t in threading.enumerate()}
        with self._lock:
            if self._editor is not None and (self._editor == me
                                             or self._editor not in alive):
                self._editor = None
                self._unsettled = True
            for t in [t for t in self._readers if t == me or t not in alive]:
                del self._readers[t]
            if self._editor is not None:
                raise UnlearningError(
                    "An edit is being served on this database" + (
                        "." if edit else "; read it once the edit is done."))
            if edit:
                if self._readers:
                    raise UnlearningError("The database is being read (a fit is "
                                          "running on it); serve the edit once it "
                                          "is done.")
                self._editor = me
                return True
            alone = not self._readers
            self._readers[me] = 1
            return alone

    def _unclaim(self, edit):
        me = threading.get_ident()
        with self._lock:
            if edit:
                if self._editor == me:
                    self._editor = None
            else:
                self._readers.pop(me, None)

    def _settle(self):
        """Make every shard hold the rows of the last committed edit, if an
        interrupted round may have left one otherwise (call it holding a
        claim)."""
        if self._unsettled:
            self._shards.map("settle", self._shards.each(self._committed,
                                                         list(self._aborted)))
            self._unsettled = False


class ShardedEditRequest(_EditCounts):
    """Deletions, replacements and insertions on a :class:`ShardedDatabase`.

    Built by :meth:`ShardedDatabase.edit`. Positions refer to the database's
    current row order; each is routed to the shard holding it by the public
    shard sizes. New records are appended to the last shard, so the edited
    rows are in the order :meth:`skforget.EditRequest.apply` gives them.
    """

    _skforget_sharded = True

    def __init__(self, database, *, delete=None, replace=None, X_replace=None,
                 y_replace=None, X_insert=None, y_insert=None,
                 sample_weight_replace=None, sample_weight_insert=None, by=None):
        database._check_names(delete, replace, by)
        n, d = database.shape
        self.database = database
        # The database as the request was built on it: a request names rows of
        # that version only (_stage refuses it on any other).
        self.version = database.version
        self._n_before = n
        self._offsets = database.offsets
        self._delete, _ = self._positions(delete, n, "delete")
        self._replace, order = self._positions(replace, n, "replace")
        both = np.intersect1d(self._delete, self._replace)
        if both.size:
            raise ValueError(f"Row {int(both[0])} is both deleted and replaced.")
        X_replace, y_replace = self._records(
            X_replace, y_replace, len(self._replace), d, "replace")
        self.X_insert, self.y_insert = self._records(
            X_insert, y_insert, None, d, "insert")
        w_replace, self.w_insert = check_new_weights(
            database.weighted, sample_weight_replace, sample_weight_insert,
            len(self._replace), self.n_inserted)
        self._refuse_empty(self.n_inserted)
        # The new records in the order of their (sorted) positions.
        self.X_replace, self.y_replace, self.w_replace = (
            None if v is None else v[order] for v in (X_replace, y_replace, w_replace))
        self.version_after = database.version.successor()
        self._done = False

    @staticmethod
    def _positions(values, n, name):
        if values is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        pos = np.asarray(values)
        if pos.ndim != 1 or (pos.size and pos.dtype.kind not in "iu"):
            raise ValueError(f"{name} must be a 1-D list of row positions.")
        pos = pos.astype(np.int64)
        bad = (pos < 0) | (pos >= n)
        if np.any(bad):
            raise ValueError(f"{name}[{int(np.flatnonzero(bad)[0])}]="
                             f"{int(pos[bad][0])} is not a row of a database of "
                             f"{n} rows.")
        uniq, counts = np.unique(pos, return_counts=True)
        if np.any(counts > 1):
            raise ValueError(f"{name} names row {int(uniq[counts > 1][0])} twice.")
        order = np.argsort(pos, kind="stable")
        return pos[order], order

    @staticmethod
    def _records(X, y, n_expected, d, name):
        if X is None and y is None:
            if n_expected:
                raise ValueError(f"X_{name} and y_{name} are needed for {name}.")
            return None, None
        if X is None or y is None:
            raise ValueError(f"X_{name} and y_{name} must be given together.")
        X = X.tocsr() if sp.issparse(X) else np.atleast_2d(np.asarray(X))
        y = np.asarray(y).reshape(-1)
        if X.shape[1] != d or X.shape[0] != y.shape[0] or (
                n_expected is not None and X.shape[0] != n_expected):
            raise ValueError(
                f"X_{name} must have shape ({n_expected or y.shape[0]}, {d}) and "
                f"y_{name} one entry per row; got {X.shape} and {y.shape}.")
        values = X.data if sp.issparse(X) else X
        if not np.all(np.isfinite(values)):
            raise ValueError(f"X_{name} holds a value that is not finite.")
        return X, y

    @property
    def n_samples_before(self):
        return self._n_before

    @property
    def n_samples_after(self):
        return self.n_samples_before - self.n_deleted + self.n_inserted

    def routes(self):
        """Per shard: ``(delete, replace, replace_index)`` local positions, from
        the public shard sizes only (``replace_index`` picks the new rows)."""
        offsets = self._offsets
        out = []
        for s in range(len(offsets) - 1):
            lo, hi = offsets[s], offsets[s + 1]
            dl = self._delete[(self._delete >= lo) & (self._delete < hi)] - lo
            sel = np.flatnonzero((self._replace >= lo) & (self._replace < hi))
            out.append((dl, self._replace[sel] - lo, sel))
        return out

    # --- used by the estimators: stage, then commit or roll back --------------
    # An edit is served as: _stage (claim the database, stage on the shards),
    # the estimator's unlearning steps, then _commit (the decision, recorded
    # together with the model's new state) and _release; or _abort. The
    # estimator calls _abort on any error after _stage was entered.
    def _stage(self):
        db = self.database
        if self._done:
            raise UnlearningError("This request has already been served.")
        with no_interrupts():
            db._claim(edit=True)
            self._claimed, self._attempt = threading.get_ident(), None
        db._settle()
        if self.version != db.version:
            raise UnlearningError(
                f"The request was built on {self.version}, but the database is now "
                f"at {db.version}: build the request again on the current "
                "database.")
        self._attempt = secrets.token_hex(8)
        last = len(db.shard_sizes) - 1
        edits, sizes = {}, list(db.shard_sizes)
        for s, (dl, rp, sel) in enumerate(self.routes()):
            if not (len(dl) or len(rp) or (s == last and self.n_inserted)):
                continue
            Xr, yr, wr = ((None, None, None) if not len(rp) else
                          (self.X_replace[sel], self.y_replace[sel],
                           None if self.w_replace is None else self.w_replace[sel]))
            ins = s == last and self.n_inserted
            edits[s] = (self._attempt, db._committed, dl, rp, Xr, yr,
                        self.X_insert if ins else None,
                        self.y_insert if ins else None, wr,
                        self.w_insert if ins else None)
        db._unsettled = True  # until the edit is committed or rolled back
        for s, size in zip(edits, db._shards.map("stage", edits), strict=True):
            sizes[s] = int(size)
        self.shard_sizes_after = tuple(sizes)

    def _commit(self):
        """Decide the edit, on the driver alone: plain assignments, made by
        the estimator with Ctrl-C held back together with its own new state.
        The shards keep the previous rows in their journal until
        :meth:`_release` drops them."""
        db = self.database
        db._committed = self._attempt
        db.shard_sizes = self.shard_sizes_after
        db.version = self.version_after
        db._rows_moved = db._rows_moved or bool(len(self._delete))
        self._done = True

    def _release(self):
        """After the commit: drop the journals now, so the previous rows (a
        deleted person's among them) leave the workers' memory, then free the
        database (held until then, so no other edit can interleave)."""
        db = self.database
        try:
            db._settle()
        except BaseException as exc:  # the edit is served regardless
            # An interrupt too: it is the caller's to see, but after the
            # commit it must not read as an edit that failed (a trial).
            warn(
                f"The edit is served, but the workers could not drop the previous "
                f"rows yet ({type(exc).__name__}); they are dropped before the next "
                "read or edit of the database.", RuntimeWarning, stacklevel=3)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._free()

    def _abort(self):
        """Undo a staged edit that will not be committed, on every shard, and
        free the database. Called while an error is being raised: a shard that
        cannot roll back now is settled before the next read or edit
        (``_unsettled`` stays set), and the error that caused the abort is the
        one the caller sees."""
        if getattr(self, "_claimed", None) != threading.get_ident():
            return  # not staged by this call (or already freed)
        db = self.database
        try:
            if self._attempt is not None:
                with no_interrupts():
                    db._aborted.append(self._attempt)
                    db._unsettled = True
                try:
                    db._shards.map("rollback", db._shards.each(self._attempt))
                    db._unsettled = False
                except Exception:  # noqa: BLE001, S110 - settled later, see above
                    pass
        finally:
            self._free()

    def _free(self):
        with no_interrupts():
            self.database._unclaim(edit=True)
            self._claimed = None

    def __repr__(self):
        return (f"ShardedEditRequest(n_samples={self.n_samples_before}, "
                f"delete={self.n_deleted}, replace={self.n_replaced}, "
                f"insert={self.n_inserted}, version={self.version.number})")


