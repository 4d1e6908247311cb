"""Training and unlearning on a Dask cluster (skforget.distributed).

Dask is an optional extra (``skforget[dask]``, also in the ``test`` extra), so
these tests are skipped only where it is not installed. A sharded database must
give the in-memory results for the same seed and row order, up to the order of
floating-point sums, and a failed edit must leave database and model as they
were.
"""

import contextlib
import dataclasses
import pickle
import signal
import threading

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from skforget import EditRequest, NoisyGDClassifier, NoisyGDRegressor  # noqa: E402
from skforget.distributed import ShardedDatabase, _shard  # noqa: E402
from skforget.distributed import _database as skd  # noqa: E402
from skforget.distributed._row_source import _ClusterRows  # noqa: E402
from skforget.distributed._shard import _Shard  # noqa: E402
from skforget.exceptions import UnlearningError  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
        host="127.0.0.1", dashboard_address=None)
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


@pytest.fixture
def sharded(client):
    """Build sharded databases on the test cluster; closed after the test."""
    made = []

    def make(X, y, **kwargs):
        db = ShardedDatabase(X, y, client=client, **kwargs)
        made.append(db)
        return db

    yield make
    for db in made:
        db.close()


def _data(n=600, d=5, n_classes=2, sparse=False, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * 0.6  # some rows over data_norm=1
    y = rng.integers(0, n_classes, n)
    X[np.arange(n), y % d] += 1.0
    if sparse:
        X = sp.csr_matrix(X * (rng.random((n, d)) < 0.6))
    return X, y


def _rel(a, b):
    return np.max(np.abs(np.asarray(a) - b)) / np.max(np.abs(b))


CASES = [
    (NoisyGDClassifier, dict(classes=[0, 1]), 2, False),
    # Noisy class counts (Section 18.10): summed over the shards, noised on
    # the driver, redrawn on the edited shards.
    (NoisyGDClassifier, dict(classes=[0, 1], class_weight="balanced"), 2, False),
    # The class moments of the default error threshold (Section 18.12), the
    # squared scores summed shard by shard along the released direction.
    (NoisyGDClassifier, dict(classes=[0, 1], prevalence_share=0.05), 2, False),
    (NoisyGDClassifier, dict(classes=[0, 1, 2]), 3, True),
    (NoisyGDClassifier, dict(classes=[0, 1, 2], multi_class="ovr"), 3, False),
    # A public target scale: the shards divide by it, as fit does in memory (and
    # the guarantees then agree: nothing is read to check the targets' scale).
    (NoisyGDRegressor, dict(target_scale=2.0), 2, True),
]


@pytest.mark.parametrize("Est, params, n_classes, sparse", CASES)
@pytest.mark.parametrize("batch_size", [None, 60])
def test_fit_and_edits_match_in_memory(sharded, Est, params, n_classes, sparse,
                                       batch_size):
    X, y = _data(n_classes=n_classes, sparse=sparse)
    db = sharded(X, y)
    assert db.shard_sizes == (300, 300)
    kw = dict(params, random_state=3, batch_size=batch_size, max_iter=8)
    on_cluster = Est(**kw).fit(db)
    in_memory = Est(**kw).fit(X, y)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
    assert _rel(on_cluster.intercept_, in_memory.intercept_) < 1e-12
    assert on_cluster.database_version_ == db.version
    assert on_cluster.privacy_guarantee_ == in_memory.privacy_guarantee_

    new = dict(X_replace=X[7:8], y_replace=y[:1], X_insert=X[10:12],
               y_insert=y[:2])
    on_cluster.partial_unlearn(db.edit(delete=[3, 450], replace=[299], **new))
    request = EditRequest(X, y, delete=[3, 450], replace=[299], **new)
    in_memory.partial_unlearn(request)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
    if "noisy_class_count_" in in_memory.__dict__:
        np.testing.assert_array_equal(on_cluster.noisy_class_count_,
                                      in_memory.noisy_class_count_)
        assert on_cluster.privacy_guarantee_.rho_counts > 0
    if "noisy_score_square_" in in_memory.__dict__:
        assert _rel(on_cluster.noisy_score_square_,
                    in_memory.noisy_score_square_) < 1e-12
        assert _rel(on_cluster.intercept_, in_memory.intercept_) < 1e-12
    # The rows moved as EditRequest.apply() moves them, shard-locally.
    X_new, y_new = request.apply()
    X_got, y_got = db.gather()
    X_got, X_new = (M.toarray() if sp.issparse(M) else M for M in (X_got, X_new))
    np.testing.assert_array_equal(X_got, X_new)
    np.testing.assert_array_equal(y_got, y_new)
    assert db.shard_sizes == (299, 301)  # inserts join the last shard
    assert on_cluster.database_version_ == db.version
    assert db.version.number == 1


def test_reproducible_for_a_fixed_layout_and_keeps_no_rows(sharded):
    X, y = _data()
    db = sharded(X, y)
    kw = dict(classes=[0, 1], random_state=0, batch_size=100, max_iter=5)
    a = NoisyGDClassifier(**kw).fit(db)
    b = NoisyGDClassifier(**kw).fit(db)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not any(isinstance(v, ShardedDatabase | _ClusterRows)
                   for v in vars(a).values())
    assert len(pickle.dumps(a)) < 20_000


def test_dask_arrays(sharded):
    X, y = _data(n=800)
    Xd = da.from_array(X, chunks=(200, 5))
    yd = da.from_array(y, chunks=200)
    kw = dict(classes=[0, 1], random_state=0, batch_size=None, max_iter=5)
    on_cluster = NoisyGDClassifier(**kw).fit(Xd, yd)
    in_memory = NoisyGDClassifier(**kw).fit(X, y)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
    assert on_cluster.database_version_ is None
    db = sharded(Xd, yd)
    assert db.shard_sizes == (400, 400)  # two blocks per worker, in order
    np.testing.assert_array_equal(db.gather()[0], X)


WEIGHTED = [
    (NoisyGDClassifier, dict(classes=[0, 1], class_weight={0: 1.0, 1: 3.0}), 2,
     False),
    (NoisyGDClassifier, dict(classes=[0, 1, 2], class_weight={2: 0.5}), 3, True),
    (NoisyGDRegressor, dict(target_scale=2.0), 2, False),
]


@pytest.mark.parametrize("Est, params, n_classes, sparse", WEIGHTED)
@pytest.mark.parametrize("batch_size", [None, 60])
def test_weighted_fit_and_edits_match_in_memory(sharded, Est, params, n_classes, sparse,
                                                batch_size):
    # Sample and class weights are per-record maps with public bounds, so the
    # shards weight their own rows: the same model as in memory, before and
    # after an edit whose new records bring their weights.
    X, y = _data(n_classes=n_classes, sparse=sparse)
    w = np.random.default_rng(5).uniform(0.0, 3.0, X.shape[0])
    w[::7] = 6.0  # over max_sample_weight=4: counted as 4, on both sides
    kw = dict(params, random_state=2, batch_size=batch_size, max_iter=6,
              max_sample_weight=4.0)
    db = sharded(X, y, sample_weight=w)
    assert db.weighted and "weighted" in repr(db)
    on_cluster = Est(**kw).fit(db)
    in_memory = Est(**kw).fit(X, y, sample_weight=w)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
    assert on_cluster.privacy_guarantee_ == in_memory.privacy_guarantee_

    new = dict(X_replace=X[7:8], y_replace=y[:1], X_insert=X[10:12],
               y_insert=y[:2], sample_weight_replace=[0.25],
               sample_weight_insert=[2.0, 5.0])
    on_cluster.partial_unlearn(db.edit(delete=[3, 450], replace=[299], **new))
    request = EditRequest(X, y, delete=[3, 450], replace=[299], sample_weight=w,
                          **new)
    in_memory.partial_unlearn(request)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
    assert on_cluster.privacy_guarantee_ == in_memory.privacy_guarantee_
    np.testing.assert_array_equal(db.gather_sample_weight(),
                                  request.sample_weight_after)


def test_a_request_built_on_an_older_version_is_refused(sharded):
    # Two models on one database: once one has served an edit, a request built
    # on the version before it names rows of a database that is gone.
    X, y = _data()
    db = sharded(X, y)
    kw = dict(classes=[0, 1], random_state=0, batch_size=None, max_iter=3)
    a, b = NoisyGDClassifier(**kw).fit(db), NoisyGDClassifier(**kw).fit(db)
    for_a = db.edit(replace=[3], X_replace=X[:1], y_replace=y[:1])
    for_b = db.edit(replace=[5], X_replace=X[:1], y_replace=y[:1])
    a.partial_unlearn(for_a)
    before = (b.coef_.copy(), b.privacy_guarantee_, db.version, db.gather()[0])
    with pytest.raises(UnlearningError, match="build the request again"):
        b.partial_unlearn(for_b)
    np.testing.assert_array_equal(b.coef_, before[0])
    assert (b.privacy_guarantee_, db.version) == before[1:3]
    np.testing.assert_array_equal(db.gather()[0], before[3])
    with pytest.raises(UnlearningError, match="empty"):
        db.edit()


def test_after_a_deletion_rows_are_named_by_position_knowingly(sharded):
    # A trial: two erasure requests by load-time positions (539, then 700)
    # were both served, and the second removed the row then at 700 (the one
    # loaded at 701), leaving person 700 in the database.
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            max_iter=3).fit(db)
    clf.partial_unlearn(db.edit(delete=[5]))   # the first: positions as loaded
    clf.partial_unlearn(db.edit(X_insert=X[:1], y_insert=y[:1]))   # no names
    with pytest.raises(ValueError, match="has served a deletion.*by='position'"):
        db.edit(delete=[7])
    with pytest.raises(ValueError, match="has served a deletion"):
        db.edit(replace=[7], X_replace=X[:1], y_replace=y[:1])
    with pytest.raises(ValueError, match="holds no record IDs"):
        db.edit(delete=[7], by="id")
    # Built directly, a request is checked alike (a second reader); an edit
    # naming no row needs no statement.
    with pytest.raises(ValueError, match="has served a deletion"):
        skd.ShardedEditRequest(db, delete=[7])
    db.edit(delete=[], X_insert=X[:1], y_insert=y[:1])
    version = db.version
    clf.partial_unlearn(db.edit(delete=[7], by="position"))
    assert db.version.number == version.number + 1
    np.testing.assert_array_equal(db.gather()[0][:8], np.delete(X, [5, 8], 0)[:8])


def test_replacements_in_any_order_land_on_their_rows(sharded):
    X, y = _data()
    w = np.linspace(0.5, 1.5, 600)
    db = sharded(X, y, sample_weight=w)
    kw = dict(classes=[0, 1], random_state=0, batch_size=None, max_iter=3)
    on_cluster = NoisyGDClassifier(**kw).fit(db)
    in_memory = NoisyGDClassifier(**kw).fit(X, y, sample_weight=w)
    new = dict(replace=[450, 2], X_replace=np.full((2, 5), [[9.0], [1.0]]),
               y_replace=[1, 0], sample_weight_replace=[0.25, 0.75])
    on_cluster.partial_unlearn(db.edit(**new))
    request = EditRequest(X, y, sample_weight=w, **new)
    in_memory.partial_unlearn(request)
    X_new, y_new = request.apply()
    X_got, y_got = db.gather()
    np.testing.assert_array_equal(X_got[[2, 450]], [[1.0] * 5, [9.0] * 5])
    np.testing.assert_array_equal(X_got, X_new)
    np.testing.assert_array_equal(y_got, y_new)
    np.testing.assert_array_equal(db.gather_sample_weight(),
                                  request.sample_weight_after)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12


@pytest.mark.parametrize("sparse", [False, True])
def test_edits_on_integer_tables_keep_fractional_values(sharded, sparse):
    # Integer rows and targets are promoted as in memory, not truncated
    # (audit 13a: 0.7 used to train as 0 on the cluster).
    rng = np.random.default_rng(0)
    X = rng.integers(-1, 2, size=(40, 3))
    y = rng.integers(-2, 3, size=40)
    X = sp.csr_matrix(X) if sparse else X
    new = dict(replace=[2], X_replace=[[0.4, 0.6, -0.9]], y_replace=[1.9],
               X_insert=[[0.1, -0.2, 0.3]], y_insert=[0.7])
    db = sharded(X, y)
    kw = dict(target_scale=1.0, random_state=0, max_iter=3, max_lazy_records=0)
    on_cluster = NoisyGDRegressor(**kw).fit(db)
    on_cluster.partial_unlearn(db.edit(**new))
    X_new, y_new = EditRequest(X, y, **new).apply()
    X_got, y_got = db.gather()
    dense = (lambda A: A.toarray()) if sparse else np.asarray
    np.testing.assert_array_equal(dense(X_new)[[2, -1]],
                                  [[0.4, 0.6, -0.9], [0.1, -0.2, 0.3]])
    np.testing.assert_array_equal(y_new[[2, -1]], [1.9, 0.7])
    np.testing.assert_array_equal(dense(X_got), dense(X_new))
    np.testing.assert_array_equal(y_got, y_new)


def test_a_target_offset_moves_the_targets_on_the_workers_too(sharded):
    # The workers used to divide by target_scale without subtracting the
    # offset (second reading 13): the intercept was off by the offset.
    X, _ = _data()
    y = 100.0 + 20.0 * X[:, 0]
    kw = dict(target_scale=20.0, target_offset=100.0, random_state=0, max_iter=3,
              max_lazy_records=0)
    db = sharded(X, y)
    on_cluster = NoisyGDRegressor(**kw).fit(db)
    in_memory = NoisyGDRegressor(**kw).fit(X, y)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
    assert on_cluster.intercept_ == pytest.approx(in_memory.intercept_, abs=1e-9)
    on_cluster.partial_unlearn(db.edit(delete=[3]))
    in_memory.partial_unlearn(EditRequest(X, y, delete=[3]))
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12


def test_fits_at_once_keep_their_own_row_maps_and_edits_wait(client, sharded):
    # Each fit maps the rows with its own clipping and weighting; an edit is
    # refused while a fit reads the rows, and a fit while an edit is served.
    from concurrent.futures import ThreadPoolExecutor

    X, y = _data()
    db = sharded(X, y)
    params = [dict(data_norm=0.5), dict(data_norm=5.0, class_weight={1: 3.0})]
    kws = [dict(p, classes=[0, 1], random_state=0, batch_size=100, max_iter=40)
           for p in params]
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(lambda kw: NoisyGDClassifier(**kw).fit(db), kws))
    for kw, model in zip(kws, together, strict=True):
        alone = NoisyGDClassifier(**kw).fit(X, y)
        assert _rel(model.coef_, alone.coef_) < 1e-12
    clf = together[0]
    # A read, then an edit, held by another (live) thread.
    for edit, refused, message in [
            (False, lambda: clf.partial_unlearn(db.edit(delete=[0])),
             "being read"),
            (True, lambda: NoisyGDClassifier(**kws[0]).fit(db),
             "edit is being served")]:
        with _claim_held_by_another_thread(db, edit):
            with pytest.raises(UnlearningError, match=message):
                refused()
    clf.partial_unlearn(db.edit(delete=[0]))
    assert db.n_samples == 599


@contextlib.contextmanager
def _claim_held_by_another_thread(db, edit):
    held, done = threading.Event(), threading.Event()

    def hold():
        db._claim(edit=edit)
        held.set()
        done.wait()
        db._unclaim(edit=edit)

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _maps_held(client, db):
    """Row maps the database's shards hold (each holds a copy of its rows)."""
    keys = set(db._shards._keys)

    def count(dask_worker):
        return sum(len(a._maps) for k, a in dask_worker.state.actors.items()
                   if k in keys)

    return sum(client.run(count).values())


def test_row_maps_do_not_outlive_their_fit_or_an_edit(client, sharded):
    # A map holds the shard's rows: one left by a failed or interrupted fit must
    # not keep a record the next edit deletes.
    X, y = _data()
    db = sharded(X, np.where(np.arange(600) == 450, 7, y))
    with pytest.raises(ValueError, match=r"y\[450\] \(of type int\) is not one of"):
        NoisyGDClassifier(classes=[0, 1]).fit(db)   # shard 1 fails, shard 0 maps
    assert _maps_held(client, db) == 0
    clf = NoisyGDClassifier(classes=[0, 1, 7], random_state=0, max_iter=2).fit(db)
    spec = dict(data_norm=1.0, intercept_scaling=1.0, gradient_bound=1.0,
                loss="multinomial", classes=[0, 1, 7], error="fit",
                clip_rows=True, weighting=dict(sample_weight_bound=0.0,
                                               class_weights=(), weight_bound=1.0))
    left = db._row_source(spec, loss="multinomial", n_jobs=1, exclusive=False)
    assert _maps_held(client, db) == 2          # as if its fit was interrupted
    clf.partial_unlearn(db.edit(delete=[0]))
    assert _maps_held(client, db) == 0
    # A prepare that arrives after its source was released maps nothing.
    left.release()
    with pytest.raises(UnlearningError, match="released"):
        db._shards.map("prepare", {0: (left._token, 0, spec, False)})


def test_ctrl_c_at_the_decision_keeps_model_and_database_together(client, sharded,
                                                                  monkeypatch):
    # An interrupt landing as the edit is decided is delivered after the model
    # and the database have both taken it: never one without the other.
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            max_iter=3).fit(db)
    real = skd.ShardedEditRequest._commit

    def commit_then_ctrl_c(self):
        real(self)
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(skd.ShardedEditRequest, "_commit", commit_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        clf.partial_unlearn(db.edit(delete=[5]))
    monkeypatch.undo()
    assert clf.database_version_ == db.version and db.version.number == 1
    np.testing.assert_array_equal(db.gather()[0], np.delete(X, 5, axis=0))
    assert _maps_held(client, db) == 0
    clf.partial_unlearn(db.edit(by="position", delete=[0]))
    assert db.n_samples == 598


def test_ctrl_c_after_the_decision_says_the_edit_is_served(client, sharded,
                                                         monkeypatch):
    # A trial: an interrupt while the workers dropped a served edit's journals
    # reached the caller as a bare KeyboardInterrupt, as if the edit had failed.
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            max_iter=3).fit(db)

    real_commit, real_settle, decided = (skd.ShardedEditRequest._commit,
                                         skd.ShardedDatabase._settle, [])

    def commit(self):
        real_commit(self)
        decided.append(True)

    def settle(self):
        if decided:   # the round after the decision, which drops the journals
            raise KeyboardInterrupt
        real_settle(self)

    monkeypatch.setattr(skd.ShardedEditRequest, "_commit", commit)
    monkeypatch.setattr(skd.ShardedDatabase, "_settle", settle)
    with pytest.warns(RuntimeWarning, match="The edit is served"):
        with pytest.raises(KeyboardInterrupt):
            clf.partial_unlearn(db.edit(delete=[5]))
    monkeypatch.undo()
    assert clf.database_version_ == db.version and db.n_samples == 599
    np.testing.assert_array_equal(db.gather()[0], np.delete(X, 5, axis=0))


def test_a_stage_still_on_the_way_after_a_settle_is_refused(sharded):
    X, y = _data(n=10)
    db = sharded(X, y)
    db._aborted.append("attempt-9")     # its rollback never reached shard 1
    db._unsettled = True
    db._settle()
    none = np.zeros(0, np.int64)
    with pytest.raises(UnlearningError, match="rolled back"):
        db._shards.map("stage", {1: ("attempt-9", None, np.array([0]), none,
                                     None, None, None, None)})
    np.testing.assert_array_equal(db.gather()[0], X)


def test_claims_left_by_interrupted_operations_are_dropped(sharded):
    # A claim stays with its thread: one left behind by an interrupt (the same
    # thread comes back) or by a thread that has ended does not lock the
    # database, and the shards are settled before they are used again.
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            max_iter=3).fit(db)
    db._claim(edit=True)                     # as if interrupted mid-edit
    clf.partial_unlearn(db.edit(delete=[0]))
    db._claim(edit=False)                    # as if interrupted mid-fit
    clf.partial_unlearn(db.edit(by="position", delete=[0]))
    gone = threading.Thread(target=db._claim, kwargs=dict(edit=True))
    gone.start()
    gone.join()                              # its thread has ended
    clf.partial_unlearn(db.edit(by="position", delete=[0]))
    np.testing.assert_array_equal(db.gather()[0], X[3:])
    assert db.shard_sizes == (297, 300) and clf.database_version_ == db.version


def test_journals_left_by_interrupted_rounds_are_settled(sharded, monkeypatch):
    # The driver decides every edit; a shard that missed a commit or a rollback
    # (an interrupt, a worker error) is brought in line before the next read
    # or edit, so rows, sizes and version always agree.
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            max_iter=3).fit(db)
    # 1. The round that drops a committed edit's journals fails: the edit
    #    is served all the same, and the journals go at the next read.
    real_settle = _Shard.settle
    monkeypatch.setattr(_Shard, "settle", lambda self, committed: 1 / 0)
    with pytest.warns(RuntimeWarning, match="edit is served"):
        clf.partial_unlearn(db.edit(delete=[1, 400]))
    monkeypatch.setattr(_Shard, "settle", real_settle)
    assert db.shard_sizes == (299, 299) and clf.database_version_ == db.version
    X1 = np.delete(X, [1, 400], axis=0)
    np.testing.assert_array_equal(db.gather()[0], X1)
    # 2. A failed edit whose rollback fails too: the caller sees the first
    #    error, and the next read restores the rows.
    _fail_shards_after(monkeypatch, 2, "lost at step 2")
    monkeypatch.setattr(_Shard, "rollback", lambda self, attempt: 1 / 0)
    version = db.version
    with pytest.raises(RuntimeError, match="lost at step 2"):
        clf.partial_unlearn(db.edit(by="position", delete=[0], X_insert=X[:2],
                                    y_insert=y[:2]))
    monkeypatch.undo()
    assert db.version == version and db.shard_sizes == (299, 299)
    np.testing.assert_array_equal(db.gather()[0], X1)
    clf.partial_unlearn(db.edit(by="position", delete=[0]))
    np.testing.assert_array_equal(db.gather()[0], X1[1:])


def test_a_workers_refusal_names_rows_not_values(sharded, client):
    # A trial: a worker's refusal carried a cell ('alice@example.com'), a
    # record's weight or a row's exact norm to the driver, whose user need
    # not hold the rows.
    import dask.array as da

    X, y = _data()
    cells = X.astype(object)
    cells[450, 2] = "alice@example.com"
    with pytest.raises(ValueError, match=r"X holds values that are not real "
                       r"numbers .* \(the rows 300..599 of the database") as said:
        NoisyGDClassifier(classes=[0, 1]).fit(sharded(cells, y))
    assert "alice" not in str(said.value)
    # scikit-learn's text for complex data quotes the array (a second reader).
    wild = X.astype(complex)
    wild[450, 2] = 0.3 + 0.7j
    with pytest.raises(ValueError, match="not real numbers") as said:
        NoisyGDClassifier(classes=[0, 1]).fit(sharded(wild, y))
    assert "j" not in str(said.value).split("(")[0] and "0.7" not in str(said.value)
    far = X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    far[450] = [0.123456789, 2.5, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="Row 450 of the database has an L2 norm "
                       "above data_norm") as said:
        NoisyGDClassifier(classes=[0, 1], clip_rows=False).fit(sharded(far, y))
    assert "2.5" not in str(said.value) and "0.1234" not in str(said.value)
    nan = X.copy()
    nan[451, 1] = np.nan   # named by its row in the database, not the shard's
    with pytest.raises(ValueError, match="Row 451 of the database holds NaN"):
        NoisyGDClassifier(classes=[0, 1]).fit(sharded(nan, y))
    w = np.ones(600)
    w[450] = -3.14159
    with pytest.raises(ValueError, match=r"sample_weight\[450\] is negative") as said:
        NoisyGDClassifier(classes=[0, 1]).fit(
            da.from_array(X, chunks=(300, 5)), da.from_array(y, chunks=300),
            sample_weight=da.from_array(w, chunks=300))
    assert "3.14" not in str(said.value)
    targets = y.astype(object)
    targets[450] = "bob"
    with pytest.raises(ValueError, match="y holds a target that is not a "
                       "number") as said:
        NoisyGDRegressor(target_scale=1.0).fit(sharded(X, targets))
    assert "bob" not in str(said.value)


def test_a_shard_whose_worker_is_gone_is_named():
    # A trial: after a worker died, every call failed with a bare OSError
    # ("Timed out trying to connect") or KeyError('_Shard-...'). Its own
    # cluster, whose client gives up connecting after a second.
    import dask

    X, y = _data()
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                     processes=False, dashboard_address=None) as lc, \
            distributed.Client(lc, set_as_default=False) as c:
        db = ShardedDatabase(X, y, client=c)
        clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                                max_iter=3).fit(db)
        before = (clf.coef_.copy(), clf.privacy_guarantee_, db.version)
        db._shards._addresses[1] = "tcp://127.0.0.1:9"   # nobody listens there
        with pytest.raises(RuntimeError, match="Shard 1 .* cannot be reached or "
                           "no longer holds its rows.*Build the ShardedDatabase "
                           "again"):
            clf.partial_unlearn(db.edit(delete=[3]))
        np.testing.assert_array_equal(clf.coef_, before[0])
        assert (clf.privacy_guarantee_, db.version) == before[1:]


def test_misuse_of_a_database_says_why(client):
    # A trial: a closed database was refused as "sample_weight is zero for
    # every row" or an IndexError; y of shape (n, 1) was accepted and the fit
    # failed in the kernel; unknown dask chunk sizes read "X has nan rows".
    import dask.array as da

    X, y = _data()
    with pytest.raises(ValueError, match=r"y must be 1-D.*\(600, 1\)"):
        ShardedDatabase(X, y[:, None], client=client)
    unknown = da.from_array(X, chunks=300)[da.from_array(y, chunks=300) >= 0]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        ShardedDatabase(unknown, y, client=client)
    db = ShardedDatabase(X, y, client=client)
    clf = NoisyGDClassifier(classes=[0, 1], batch_size=None, max_iter=3).fit(db)
    db.close()
    for call in (lambda: NoisyGDClassifier(classes=[0, 1]).fit(db), db.gather,
                 lambda: clf.partial_unlearn(db.edit(delete=[1]))):
        with pytest.raises(ValueError, match="ShardedDatabase was closed"):
            call()


def test_weighted_database_errors_and_rollback(sharded):
    X, y = _data()
    w = np.ones(600)
    with pytest.raises(ValueError, match=r"sample_weight\[5\] is negative"):
        sharded(X, y, sample_weight=np.where(np.arange(600) == 5, -1, w))
    with pytest.raises(ValueError, match="zero for every row"):
        sharded(X, y, sample_weight=np.zeros(600))
    db = sharded(X, y, sample_weight=w * 2)
    plain = sharded(X, y)
    with pytest.raises(ValueError, match="holds its records' weights"):
        NoisyGDClassifier(classes=[0, 1]).fit(db, sample_weight=w)
    with pytest.raises(UnlearningError, match="sample_weight_replace is required"):
        db.edit(replace=[1], X_replace=X[:1], y_replace=y[:1])
    with pytest.raises(UnlearningError, match="has no sample weights"):
        plain.edit(X_insert=X[:1], y_insert=y[:1], sample_weight_insert=[1.0])
    with pytest.raises(UnlearningError, match=r"sample_weight_insert\[0\]"):
        db.edit(X_insert=X[:1], y_insert=y[:1], sample_weight_insert=[np.nan])
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, max_iter=3).fit(db)
    assert clf.privacy_guarantee_.n_samples == 600
    # A failed edit restores the weights with the rows.
    with pytest.raises(UnlearningError, match="not one of the classes"):
        clf.partial_unlearn(db.edit(delete=[0], X_insert=X[:1], y_insert=[5],
                                    sample_weight_insert=[3.0]))
    np.testing.assert_array_equal(db.gather_sample_weight(), w * 2)
    assert plain.gather_sample_weight() is None


def test_a_stage_arriving_after_its_rollback_does_not_apply(sharded):
    # An interrupted driver rolls back while its stage message may still be on
    # the way: the shard refuses a stage whose attempt it has rolled back, so
    # the rows cannot change behind the driver's back.
    X, y = _data(n=10)
    db = sharded(X, y)
    none = np.zeros(0, np.int64)
    db._shards.map("rollback", {0: ("attempt-1",)})
    with pytest.raises(UnlearningError, match="rolled back"):
        db._shards.map("stage", {0: ("attempt-1", None, np.array([0]), none,
                                     None, None, None, None)})
    np.testing.assert_array_equal(db.gather()[0], X)
    # A new attempt of the same edit goes through.
    assert db._shards.map("stage", {0: ("attempt-2", None, np.array([0]), none,
                                        None, None, None, None)}) == [4]
    db._shards.map("rollback", {0: ("attempt-2",)})
    np.testing.assert_array_equal(db.gather()[0], X)


def test_weighted_dask_arrays(client):
    X, y = _data(n=800)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 800)
    kw = dict(classes=[0, 1], random_state=0, batch_size=None, max_iter=5)
    chunks = dict(chunks=200)
    on_cluster = NoisyGDClassifier(**kw).fit(
        da.from_array(X, chunks=(200, 5)), da.from_array(y, **chunks),
        sample_weight=da.from_array(w, chunks=100))
    in_memory = NoisyGDClassifier(**kw).fit(X, y, sample_weight=w)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
    with pytest.raises(ValueError, match="zero for every row"):
        NoisyGDClassifier(**kw).fit(da.from_array(X, chunks=(200, 5)),
                                    da.from_array(y, **chunks),
                                    sample_weight=da.zeros(800, chunks=200))
    # Weights held in dask arrays are checked where they live, named by row.
    bad = da.from_array(np.where(np.arange(800) == 450, np.inf, w), chunks=200)
    with pytest.raises(ValueError, match=r"sample_weight\[450\] is infinite"):
        NoisyGDClassifier(**kw).fit(da.from_array(X, chunks=(200, 5)),
                                    da.from_array(y, **chunks), sample_weight=bad)


@pytest.mark.parametrize("direct", [True, False])
def test_calls_straight_to_the_workers_or_through_the_scheduler(cluster, direct):
    # A client made with direct_to_workers=False cannot reach the workers: the
    # shards' calls are relayed by the scheduler, with the same results.
    X, y = _data()
    # A sharded edit always passes over the rows (privacy-accounting.md
    # 12.9): the in-memory one must too, to be compared.
    kw = dict(classes=[0, 1], random_state=0, batch_size=100, max_iter=4,
              max_lazy_records=0)
    in_memory = NoisyGDClassifier(**kw).fit(X, y)
    with distributed.Client(cluster.scheduler_address, direct_to_workers=direct,
                            set_as_default=False) as c:
        db = ShardedDatabase(X, y, client=c)
        try:
            assert db._shards._direct is direct
            on_cluster = NoisyGDClassifier(**kw).fit(db)
            assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
            on_cluster.partial_unlearn(db.edit(delete=[4]))
            in_memory.partial_unlearn(EditRequest(X, y, delete=[4]))
            assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
        finally:
            db.close()


def test_an_in_process_cluster():
    # Client(processes=False) talks over in-process comms, which hand messages
    # over unserialised (Dask 2024.1 then leaves ToPickle wrapped).
    X, y = _data()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  processes=False, dashboard_address=":0") as lc, \
            distributed.Client(lc, set_as_default=False) as c:
        assert lc.scheduler_address.startswith("inproc")
        db = ShardedDatabase(X, y, client=c)
        try:
            kw = dict(classes=[0, 1], random_state=0, batch_size=100, max_iter=4,
                      max_lazy_records=0)
            on_cluster = NoisyGDClassifier(**kw).fit(db)
            in_memory = NoisyGDClassifier(**kw).fit(X, y)
            assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
            on_cluster.partial_unlearn(db.edit(delete=[4, 500]))
            in_memory.partial_unlearn(EditRequest(X, y, delete=[4, 500]))
            assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12
        finally:
            db.close()


def test_the_route_to_the_workers(client, monkeypatch):
    # Unset direct_to_workers (Dask's default): straight when a worker answers,
    # through the scheduler when it does not (only the scheduler is exposed);
    # probed once per client.
    assert client.direct_to_workers is None
    # The workers' addresses as they answer now (the client's cached
    # scheduler_info() was once seen empty in CI, a race with registration).
    worker = sorted(client.run(lambda: None))[0]
    monkeypatch.setattr(skd, "_ROUTES", {})
    assert skd._direct_route(client, "tcp://127.0.0.1:9") is False
    assert skd._direct_route(client, worker) is False  # the answer is kept
    monkeypatch.setattr(skd, "_ROUTES", {})
    assert skd._direct_route(client, worker) is True


def _record_threads(monkeypatch):
    """Wrap the shards' gradient sum to note whether it ran on an event loop."""
    import asyncio

    on_loop, real = [], _Shard._gradient

    def spy(*args):
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:
            on_loop.append(False)
        return real(*args)

    monkeypatch.setattr(_Shard, "_gradient", staticmethod(spy))
    return on_loop


@pytest.mark.parametrize("inline", [True, False])
def test_large_shards_sum_in_a_thread_with_the_same_result(sharded, monkeypatch,
                                                           inline):
    # Small sums run on the worker's event loop (a thread hop would cost more
    # than the sum); large ones in a thread, so the loop stays responsive.
    X, y = _data(sparse=not inline)
    on_loop = _record_threads(monkeypatch)
    if not inline:
        monkeypatch.setattr(_shard, "_INLINE_WORK", 10)
    db = sharded(X, y)
    kw = dict(classes=[0, 1], random_state=1, batch_size=None, max_iter=4)
    on_cluster = NoisyGDClassifier(**kw).fit(db)
    assert on_loop and set(on_loop) == {inline}
    in_memory = NoisyGDClassifier(**kw).fit(X, y)
    assert _rel(on_cluster.coef_, in_memory.coef_) < 1e-12


def _fail_shards_after(monkeypatch, n_calls, message, rows=None):
    """Make the shards' gradient sums raise after ``n_calls`` calls (on the
    shard with ``rows`` rows only, if given); returns the list of calls."""
    real, calls = _Shard._gradient, []

    def failing(m, *args):
        calls.append(1)
        if len(calls) > n_calls and rows in (None, m.design.X.shape[0]):
            raise RuntimeError(message)
        return real(m, *args)

    monkeypatch.setattr(_Shard, "_gradient", staticmethod(failing))
    return calls


def test_a_shard_failing_mid_run_changes_nothing(sharded, monkeypatch):
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            max_iter=5).fit(db)
    before = (clf.coef_.copy(), clf.intercept_.copy(),
              clf.privacy_guarantee_, db.version, db.shard_sizes)
    calls = _fail_shards_after(monkeypatch, 4, "shard 0 lost its memory",
                               rows=299)  # step 3, on shard 0
    with pytest.raises(RuntimeError, match="shard 0 lost its memory"):
        clf.partial_unlearn(db.edit(delete=[1, 400]))
    monkeypatch.undo()
    assert len(calls) >= 5
    np.testing.assert_array_equal(clf.coef_, before[0])
    np.testing.assert_array_equal(clf.intercept_, before[1])
    assert (clf.privacy_guarantee_, db.version, db.shard_sizes) == before[2:]
    np.testing.assert_array_equal(db.gather()[0], X)
    clf.partial_unlearn(db.edit(delete=[1]))
    assert db.n_samples == X.shape[0] - 1


def test_a_failed_run_leaves_the_callers_coefficients(sharded, monkeypatch):
    # The steps of one call run on copies, written back when all are done.
    X, y = _data()
    db = sharded(X, y)
    spec = dict(data_norm=1.0, intercept_scaling=1.0, gradient_bound=1.0,
                loss="logistic", classes=[0, 1], error="fit", clip_rows=True,
                weighting=dict(sample_weight_bound=0.0, class_weights=(),
                               weight_bound=1.0))
    rows = db._row_source(spec, loss="logistic", n_jobs=1, exclusive=True)
    calls = _fail_shards_after(monkeypatch, 4, "lost at step 3")
    W, b = np.full((1, 5), 0.5), np.full(1, 0.25)
    with pytest.raises(RuntimeError, match="lost at step 3"):
        rows.run_steps(W, b, order=np.zeros(0, np.int64),
                       bounds=np.array([0, 600]), first_batch=0,
                       etas=np.full(5, 0.5), noise=np.ones((5, 1, 6)),
                       sigma=0.1, lam=0.01, inv_B=1 / 600, loss_code=0,
                       fit_intercept=True)
    assert len(calls) > 4
    np.testing.assert_array_equal(W, 0.5)
    np.testing.assert_array_equal(b, 0.25)


@pytest.mark.parametrize("batch_size", [None, 100])
def test_plan_times_a_pass_on_the_cluster(sharded, batch_size):
    # The plan depends on public numbers only (it equals the in-memory one);
    # its time is one pass over the shards, and the estimator is untouched.
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], batch_size=batch_size)
    before = dict(vars(clf))
    on_cluster = clf.plan(db)
    assert vars(clf) == before
    in_memory = clf.plan(X, y)
    for field in dataclasses.fields(on_cluster):
        if "seconds" not in field.name:
            assert (getattr(on_cluster, field.name)
                    == getattr(in_memory, field.name)), field.name
    assert on_cluster.seconds_per_pass > 0
    assert on_cluster.expected_seconds == pytest.approx(
        on_cluster.seconds_per_pass * on_cluster.passes)
    as_dask = clf.plan(da.from_array(X, chunks=(200, 5)),
                       da.from_array(y, chunks=200))
    assert (as_dask.steps, as_dask.noise_scale) == (in_memory.steps,
                                                    in_memory.noise_scale)
    with pytest.raises(ValueError, match="certify_k_max"):
        NoisyGDClassifier(classes=[0, 1], certify_k_max=2).plan(db)
    assert db.version.number == 0 and db.shard_sizes == (300, 300)


def test_routing_uses_public_counts(sharded):
    X, y = _data(n=10)
    db = sharded(X, y)
    request = db.edit(delete=[0, 6], replace=[4, 5], X_replace=X[:2],
                      y_replace=y[:2], X_insert=X[:1], y_insert=y[:1])
    (d0, r0, s0), (d1, r1, s1) = request.routes()
    assert d0.tolist() == [0] and r0.tolist() == [4] and s0.tolist() == [0]
    assert d1.tolist() == [1] and r1.tolist() == [0] and s1.tolist() == [1]
    assert request.n_samples_after == 9
    with pytest.raises(ValueError, match="delete"):
        db.edit(delete=[10])
    with pytest.raises(ValueError, match="twice"):
        db.edit(delete=[1, 1])
    with pytest.raises(ValueError, match="both deleted and replaced"):
        db.edit(delete=[1], replace=[1], X_replace=X[:1], y_replace=y[:1])
    with pytest.raises(ValueError, match="X_insert"):
        db.edit(X_insert=X[:1, :3], y_insert=y[:1])


@pytest.mark.parametrize("exc", [RuntimeError("worker lost"), KeyboardInterrupt()])
def test_failed_unlearning_changes_nothing(sharded, monkeypatch, exc):
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, batch_size=None,
                            max_iter=5).fit(db)
    before = (clf.coef_.copy(), clf.privacy_guarantee_, db.version,
              db.shard_sizes)
    real = _ClusterRows.run_steps
    calls = []

    def failing(self, W, b, **kw):
        calls.append(1)
        real(self, W, b, **{**kw, "etas": kw["etas"][:1],
                            "noise": kw["noise"][:1]})
        raise exc

    monkeypatch.setattr(_ClusterRows, "run_steps", failing)
    with pytest.raises(type(exc)):
        clf.partial_unlearn(db.edit(delete=[1, 400], X_insert=X[:1],
                                    y_insert=y[:1]))
    assert calls
    monkeypatch.undo()
    np.testing.assert_array_equal(clf.coef_, before[0])
    assert clf.privacy_guarantee_ == before[1]
    assert (db.version, db.shard_sizes) == before[2:]
    X_got, y_got = db.gather()
    np.testing.assert_array_equal(X_got, X)
    np.testing.assert_array_equal(y_got, y)
    # The database still serves the next request.
    clf.partial_unlearn(db.edit(delete=[1]))
    assert db.n_samples == X.shape[0] - 1


def test_bad_targets_roll_back_and_stale_requests_are_refused(sharded):
    X, y = _data()
    db = sharded(X, y)
    clf = NoisyGDClassifier(classes=[0, 1], random_state=0, max_iter=3).fit(db)
    with pytest.raises(UnlearningError, match="not one of the classes"):
        clf.partial_unlearn(db.edit(X_insert=X[:1], y_insert=[5]))
    np.testing.assert_array_equal(db.gather()[1], y)
    stale = db.edit(delete=[0])
    clf.partial_unlearn(db.edit(delete=[2]))
    with pytest.raises(UnlearningError, match="stale|version"):
        clf.partial_unlearn(stale)
    assert db.n_samples == X.shape[0] - 1


def test_clear_errors(sharded):
    X, y = _data()
    db = sharded(X, y)
    with pytest.raises(ValueError, match="public label set"):
        NoisyGDClassifier().fit(db)
    with pytest.raises(ValueError, match="certify_k_max"):
        NoisyGDClassifier(classes=[0, 1], certify_k_max=2).fit(db)
    with pytest.raises(ValueError, match="sample_weight"):
        NoisyGDClassifier(classes=[0, 1]).fit(db, sample_weight=np.ones(600))
    with pytest.raises(ValueError, match="y is given twice"):
        NoisyGDClassifier(classes=[0, 1]).fit(db, y)
    bad = sharded(X, np.where(np.arange(600) == 450, 7, y))
    with pytest.raises(ValueError, match=r"y\[450\] \(of type int\) is not one of"):
        NoisyGDClassifier(classes=[0, 1]).fit(bad)


def test_output_perturbation_refuses_a_sharded_database(sharded):
    from skforget import OutputPerturbationClassifier

    X, y = _data(n=200)
    db = sharded(X, y)
    with pytest.raises(TypeError, match="ShardedDatabase"):
        OutputPerturbationClassifier(classes=[0, 1]).fit(db)



def test_a_ledger_on_a_cluster_records_what_in_memory_records(sharded):
    from skforget import PrivacyBudgetExceeded, PrivacyLedger

    X, y = _data()
    db = sharded(X, y)
    # Passes over the data in memory too (a sharded request always passes).
    kw = dict(classes=[0, 1], random_state=3, max_iter=8, delta=1e-5,
              max_lazy_records=0)
    on_cluster, in_memory = (PrivacyLedger(epsilon=10.0, delta=1e-5)
                             for _ in range(2))
    model = NoisyGDClassifier(ledger=on_cluster, **kw).fit(db)
    reference = NoisyGDClassifier(ledger=in_memory, **kw).fit(X, y)
    model.partial_unlearn(db.edit(delete=[3, 450]))
    reference.partial_unlearn(EditRequest(X, y, delete=[3, 450]))
    assert [e.rho for e in on_cluster.entries] == [e.rho for e in in_memory.entries]
    # Refused before the edit runs: the shards keep their version and rows.
    version, coef = db.version, model.coef_.copy()
    model.set_params(ledger=PrivacyLedger(epsilon=1e-3, delta=1e-5))
    with pytest.raises(PrivacyBudgetExceeded):
        model.partial_unlearn(db.edit(by="position", delete=[5]))
    assert db.version == version and db.n_samples == 598
    np.testing.assert_array_equal(model.coef_, coef)


def test_a_sharded_request_is_never_served_without_a_pass(sharded):
    # Review finding 9: the staged shards must take the edit, so a sharded
    # request always passes over the data, even where the same model on
    # arrays would serve the deletion by its DP alone (Theorem 12.9).
    X, y = _data()
    params = dict(classes=[0, 1], random_state=0, batch_size=None, max_iter=3)
    local = NoisyGDClassifier(**params).fit(X, y)
    local.partial_unlearn(EditRequest(X, y, delete=[5]))
    assert local.privacy_guarantee_.deletion.without_pass
    db = sharded(X, y)
    clf = NoisyGDClassifier(**params).fit(db)
    request = db.edit(delete=[5])
    assert clf.plan_unlearn(request).steps > 0
    clf.partial_unlearn(request)
    cert = clf.privacy_guarantee_.deletion
    assert not cert.without_pass and cert.steps > 0
    assert db.n_samples == len(y) - 1


def test_a_database_waits_for_workers_registering():
    # A cluster whose workers are (re)starting has none for a moment (seen in
    # CI under load): the database waits for one instead of refusing at once.
    with distributed.LocalCluster(n_workers=0, processes=False,
                                  dashboard_address=None) as lc, \
            distributed.Client(lc, set_as_default=False) as c:
        timer = threading.Timer(1.0, lc.scale, args=(1,))
        timer.start()
        try:
            db = ShardedDatabase(np.zeros((10, 2)), np.zeros(10), client=c)
        finally:
            timer.join()
        assert db.shape == (10, 2)
        db.close()


def test_a_private_search_refuses_a_sharded_database_by_name(sharded):
    from skforget.model_selection import PrivateSearchCV

    X, y = _data()
    search = PrivateSearchCV(NoisyGDClassifier(classes=[0, 1]), {"C": [0.1, 1.0]})
    with pytest.raises(ValueError, match="does not take a ShardedDatabase"):
        search.fit(sharded(X, y))
    assert not hasattr(search, "best_estimator_")
