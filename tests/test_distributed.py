"""pyinterp on a real Dask cluster (distributed.LocalCluster, two worker processes): every unit of
work sent to the workers gives the result of one process bit for bit; a worker killed mid-fit is
recovered; X reaches each worker once. Also combine, which needs no cluster."""

import contextlib
import copy
import os
import pickle

import numpy as np
import pytest

import pyinterp
from pyinterp import (DLBCD, IterativeRandomForest, LSSFind, RandomForestClassifier, RandomForestRegressor,
                      SkinnyTreesRegressor, _core, combine)
from pyinterp._distributed import _workers
from pyinterp.datasets import make_collinear_dictionary, make_correlated_linear
from pyinterp.skinny import fit_budget

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")
dask_config = pytest.importorskip("dask.config")


def local_cluster(default=True):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_class=distributed.Nanny) as cluster, \
            distributed.Client(cluster, set_as_default=default) as client:
        yield client


@pytest.fixture(scope="module")
def client():
    yield from local_cluster()


@pytest.fixture
def forgetful_client():
    """Dask's active memory manager drops the copies of broadcast data that few waiting tasks need,
    every 2 s by default; every 20 ms here, so a worker killed mid-fit often takes the only copy.
    Not the default client: the other tests' ``dask()`` keeps using ``client``. One cluster per
    test: a nanny may fail to start the killed worker's successor on a loaded machine (CI waited
    for it forever), and the next kill would then take the last worker.
    """
    with dask_config.set({"distributed.scheduler.active-memory-manager.interval": "20ms"}):
        yield from local_cluster(default=False)


def dask():
    return joblib.parallel_backend("dask")


def same_forest(a, b):
    """Two core forests, tree for tree and node for node, with the same in-bag counts."""
    sa, sb = a.__getstate__(), b.__getstate__()
    assert len(sa["trees"]) == len(sb["trees"])
    for ta, tb in zip(sa["trees"], sb["trees"]):
        for field in ta:
            np.testing.assert_array_equal(ta[field], tb[field], err_msg=field)
    np.testing.assert_array_equal(sa["inbag"], sb["inbag"])
    return True


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.rand(300, 12)
    y = X[:, 0] + 2 * (X[:, 1] > 0.5) * X[:, 2] + 0.1 * rng.randn(300)
    return X, y, (y > np.median(y)).astype(int)


# -- forests -----------------------------------------------------------------------------------

def test_chunks_of_trees_joined_are_the_forest_fitted_at_once(data):
    """The claim the cluster path rests on, in one process: tree t depends on (seed, t) only."""
    X, y, _ = data
    params = RandomForestRegressor(10, random_state=7, max_features=0.5)._params(*X.shape, X.shape[1])
    at_once = _core.fit_forest(X, y, None, 0, None, None, params)
    parts = []
    for first, count in ((0, 3), (3, 3), (6, 4)):
        chunk = pickle.loads(pickle.dumps(params))
        chunk.first_tree, chunk.n_estimators = first, count
        parts.append(_core.fit_forest(X, y, None, 0, None, None, chunk, codes=_core.ColumnCodes(X)))
    assert same_forest(at_once, _core.join_forests(parts))


def test_codes_of_another_X_are_refused(data):
    X, y, _ = data
    params = RandomForestRegressor(2, random_state=0)._params(*X.shape, X.shape[1])
    with pytest.raises(ValueError, match="encoded columns are not those of X"):
        _core.fit_forest(X, y, None, 0, None, None, params, codes=_core.ColumnCodes(X[:, :5]))


def test_forest_params_pickle_every_field():
    """Chunks reach workers as pickles (and copy.copy goes through the same state): a field left out
    grows another forest there (max_leaf_nodes, ccp_alpha and monotonic_cst once were)."""
    params = RandomForestRegressor(
        7, criterion="absolute_error", bootstrap=False, max_samples=0.5, max_features=3, min_samples_split=4,
        min_samples_leaf=2, min_weight_fraction_leaf=0.01, max_depth=6, max_leaf_nodes=9, ccp_alpha=1e-3,
        min_impurity_decrease=1e-4, random_state=11, n_jobs=2)._params(100, 12, 12)
    params.monotonic_cst = [1, -1] + [0] * 10
    params.balanced_subsample, params.first_tree, params.min_weight_split = True, 3, 6.0
    params.record_oob_leaves, params.always_features, params.categorical_features = True, [2, 5], [7, 9]
    params.column_blocks = 3
    fields = [name for name in dir(params) if not name.startswith("_")]
    for copied in (pickle.loads(pickle.dumps(params)), copy.copy(params)):
        assert {f: getattr(copied, f) for f in fields} == {f: getattr(params, f) for f in fields}
    default = _core.ForestParams()
    assert [f for f in fields if getattr(params, f) == getattr(default, f)] == []  # every field exercised


@pytest.mark.parametrize("Forest, kwargs", [
    (RandomForestRegressor, {"max_features": 0.5, "oob_score": True}),
    (RandomForestRegressor, {"max_leaf_nodes": 9, "ccp_alpha": 1e-4, "monotonic_cst": [1] + [0] * 11,
                             "always_split_features": [0, 3], "max_features": 2}),
    (RandomForestClassifier, {"class_weight": "balanced_subsample", "max_samples": 0.7, "oob_score": True}),
])
def test_forest_on_the_cluster_is_the_local_forest(client, data, Forest, kwargs):
    X, y, labels = data
    target = y if Forest is RandomForestRegressor else labels
    weights = np.linspace(0.5, 2.0, len(y))
    local = Forest(23, random_state=5, n_jobs=2, **kwargs).fit(X, target, sample_weight=weights)
    with dask():
        remote = Forest(23, random_state=5, **kwargs).fit(X, target, sample_weight=weights)
    assert same_forest(local._forest, remote._forest)
    assert getattr(remote, "oob_score_", None) == getattr(local, "oob_score_", None)


def test_categorical_features_on_the_cluster_give_the_local_forest(client, data):
    X, y, labels = data
    X = np.column_stack([np.floor(X[:, 0] * 6), X[:, 1:]])  # column 0 as six categories
    local = RandomForestClassifier(23, categorical_features=[0], random_state=5, n_jobs=2).fit(X, labels)
    with dask():
        remote = RandomForestClassifier(23, categorical_features=[0], random_state=5).fit(X, labels)
    assert any((t.category_split >= 0).any() for t in local.trees_)
    assert same_forest(local._forest, remote._forest)


def test_packed_genotypes_on_the_cluster_give_the_local_forest_and_irf(client, tmp_path):
    bed_reader = pytest.importorskip("bed_reader", reason="bed-reader (the test extras) writes the .bed")
    from pyinterp.io import read_plink

    rng = np.random.default_rng(0)
    G = rng.binomial(2, 0.3, size=(300, 40)).astype(np.float32)
    G[rng.random(G.shape) < 0.02] = np.nan
    bed_reader.to_bed(tmp_path / "g.bed", G)
    X = read_plink(tmp_path / "g.bed")  # a memory map, pickled to the workers as its packed calls
    y = np.nan_to_num(G[:, 0]) * (np.nan_to_num(G[:, 1]) > 0) + rng.standard_normal(300)
    local = RandomForestRegressor(20, random_state=1, max_features=0.5, n_jobs=2).fit(X, y)
    local_irf = IterativeRandomForest(n_estimators=10, n_bootstraps=2, random_state=0).fit(X, y)
    with dask():
        remote = RandomForestRegressor(20, random_state=1, max_features=0.5).fit(X, y)
        remote_irf = IterativeRandomForest(n_estimators=10, n_bootstraps=2, random_state=0).fit(X, y)
    assert same_forest(local._forest, remote._forest)
    assert same_forest(local_irf.forest_._forest, remote_irf.forest_._forest)
    assert local_irf.interactions_.features == remote_irf.interactions_.features


def test_a_fit_inside_a_task_on_a_worker_stays_on_that_worker(client, data):
    """A user's own task (a cross-validation fold the backend distributes) fits with the worker's
    threads instead of sending its data on to the cluster from there."""
    X, y, _ = data

    def fold():
        from pyinterp._distributed import cluster_threads

        with joblib.parallel_backend("dask"):
            return cluster_threads(), RandomForestRegressor(6, random_state=2).fit(X, y)._forest

    threads, forest = client.submit(fold).result()
    assert threads == 0
    assert same_forest(forest, RandomForestRegressor(6, random_state=2).fit(X, y)._forest)
    with dask():
        from pyinterp._distributed import cluster_threads
        assert cluster_threads() == 2


def test_warm_start_on_the_cluster_continues_the_streams(client, data):
    X, y, _ = data
    local = RandomForestRegressor(12, random_state=3).fit(X, y)
    grown = RandomForestRegressor(5, random_state=3, warm_start=True).fit(X, y)
    with dask():
        grown.set_params(n_estimators=12).fit(X, y)
    assert same_forest(local._forest, grown._forest)


def codes_counter():
    """A function for client.run: the worker then counts the ColumnCodes it builds, in _core.built
    (nested, so that cloudpickle sends it by value)."""
    def install():
        original, built = _core.ColumnCodes, []

        def counting(*args, **kwargs):
            built.append(1)
            return original(*args, **kwargs)

        _core.ColumnCodes, _core.built = counting, built

    return install


def test_X_reaches_each_worker_once_and_is_encoded_once_there(client, data):
    X, y, _ = data
    X = np.ascontiguousarray(np.tile(X, (1, 20)))  # 576 kB: a copy per task would be seen
    scattered = []
    scatter = client.scatter

    def counting_scatter(payload, *args, **kwargs):
        scattered.append(payload)
        return scatter(payload, *args, **kwargs)

    client.run(codes_counter())
    client.scatter = counting_scatter
    incoming = {w: len(log) for w, log in client.run(lambda dask_worker: list(dask_worker.transfer_incoming_log)).items()}
    try:
        with dask():
            RandomForestRegressor(16, random_state=0, max_features=0.1).fit(X, y)  # 8 chunks on 2 workers
    finally:
        del client.scatter
    # X sent once to each worker (a copy under a key of its own)
    sent = [a for payload in scattered for a in payloads(payload)]
    big = [a for a in sent if isinstance(a, np.ndarray) and a.nbytes >= X.nbytes]
    assert len(big) == len(_workers(client)) and all(a is X for a in big)
    # each worker received at most one copy by transfer besides the broadcast, and encoded X at most once
    logs = client.run(lambda dask_worker: list(dask_worker.transfer_incoming_log))
    for worker, log in logs.items():
        copies = sum(1 for entry in log[incoming[worker]:] if entry["total"] >= X.nbytes)
        assert copies <= 1
    built = client.run(lambda: len(_core.built))
    assert set(built.values()) <= {0, 1} and sum(built.values()) >= 1  # the scheduler may give one worker every chunk


@contextlib.contextmanager
def a_worker_killed(client, marker):
    """Within: the first task that starts executing on the cluster kills its worker process (its
    nanny starts a new one, which the fit need not wait for). Checks, after, that it happened."""
    class KillOnFirstTask(distributed.WorkerPlugin):  # defined here: cloudpickle sends it by value
        def __init__(self, marker):
            self.marker = marker

        def transition(self, key, start, finish, **kwargs):
            if finish != "executing":
                return
            try:  # created atomically: of two workers starting tasks at once, one is killed
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return
            os._exit(1)

    client.register_plugin(KillOnFirstTask(str(marker)), name="kill")
    try:
        with joblib.parallel_backend("dask", client=client):
            yield
    finally:
        client.unregister_worker_plugin("kill")
    assert marker.exists()


@pytest.mark.heavy
@pytest.mark.parametrize("round", range(3))  # the lost copy was the only one in 4 of 4 rounds before the fix
def test_a_worker_killed_mid_fit_is_recovered_with_the_same_forest(forgetful_client, data, tmp_path, round):
    client = forgetful_client
    X, y, _ = data
    local = RandomForestRegressor(40, random_state=11).fit(X, y)
    with a_worker_killed(client, tmp_path / "killed"):
        remote = RandomForestRegressor(40, random_state=11).fit(X, y)
    assert same_forest(local._forest, remote._forest)


@pytest.mark.heavy
def test_a_worker_killed_mid_irf_is_recovered_with_the_same_result(forgetful_client, data, tmp_path):
    """iRF sends X and y once for all its forests and bootstraps: a later stage finds them lost
    and sends them again."""
    client = forgetful_client
    X, y, _ = data
    params = dict(n_iterations=3, n_estimators=20, n_bootstraps=4, rit_n_trees=50, random_state=2)
    local = IterativeRandomForest(**params, n_jobs=2).fit(X, y)
    with a_worker_killed(client, tmp_path / "killed"):
        remote = IterativeRandomForest(**params).fit(X, y)
    assert repr(irf_result(remote)) == repr(irf_result(local))
    assert same_forest(local.forest_._forest, remote.forest_._forest)


# -- permutation importance --------------------------------------------------------------------

@pytest.mark.parametrize("task", ["regression", "classification"])
def test_permutation_oob_on_the_cluster_is_the_local_one(client, data, task):
    X, y, labels = data
    Forest, target = (RandomForestRegressor, y) if task == "regression" else (RandomForestClassifier, labels)
    forest = Forest(15, random_state=1, max_features=0.5).fit(X, target)
    weights = np.linspace(1.0, 2.0, len(y))
    local = pyinterp.importance.permutation_oob(forest, X, target, n_repeats=3, random_state=6, sample_weight=weights,
                                                return_std=True, n_jobs=2)
    with dask():
        remote = pyinterp.importance.permutation_oob(forest, X, target, n_repeats=3, random_state=6,
                                                     sample_weight=weights, return_std=True)
    np.testing.assert_array_equal(remote[0], local[0])
    np.testing.assert_array_equal(remote[1], local[1])
    assert np.count_nonzero(local[0]) > 3
    # a dask array X read for runs of trees (a tree a run), each run's columns scored on the workers
    import dask.array as da
    from pyinterp.forest import split_columns

    with pytest.MonkeyPatch.context() as patch, dask():
        patch.setattr(split_columns, "trees_bytes", lambda: 1)
        parted = pyinterp.importance.permutation_oob(forest, da.from_array(X, chunks=(len(X), 7)), target,
                                                     n_repeats=3, random_state=6, sample_weight=weights)
    np.testing.assert_array_equal(parted, local[0])


# -- iRF, LSSFind ------------------------------------------------------------------------------

def irf_result(irf):
    return (irf.interactions_.to_frame().to_dict("list"), irf.selected_iteration_, irf.oob_errors_.tolist(),
            irf.importances_.tolist(), irf.bootstrap_seeds_.tolist())


def payloads(payload):
    """The objects of one client.scatter call: a list's, a dict's values (pyinterp names its keys),
    or the one object."""
    return list(payload.values()) if isinstance(payload, dict) else payload if isinstance(payload, list) else [payload]


def scatter_log(client):
    """client.scatter wrapped to record what it sends; returns the list (restore with del)."""
    sent, scatter = [], client.scatter

    def recording(payload, *args, **kwargs):
        sent.extend(payloads(payload))
        return scatter(payload, *args, **kwargs)

    client.scatter = recording
    return sent


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_irf_on_the_cluster_is_the_local_irf_and_sends_X_once(client, data, task):
    X, y, labels = data
    target = y if task == "regression" else labels
    params = dict(n_iterations=3, n_estimators=20, n_bootstraps=4, rit_n_trees=50, task=task, random_state=2)
    local = IterativeRandomForest(**params, n_jobs=2).fit(X, target)
    sent = scatter_log(client)
    try:
        with dask():
            remote = IterativeRandomForest(**params).fit(X, target)
    finally:
        del client.scatter
    assert repr(irf_result(remote)) == repr(irf_result(local))  # repr: NaN scores compare equal
    assert same_forest(local.forest_._forest, remote.forest_._forest)
    assert sum(a is X for a in sent) == len(_workers(client))  # once per worker


def test_lssfind_on_the_cluster_is_the_local_lssfind(client, data):
    X, y, _ = data
    local = LSSFind(n_estimators=30, random_state=4).fit(X, y)
    with dask():
        remote = LSSFind(n_estimators=30, random_state=4).fit(X, y)
    assert same_forest(local.forest_._forest, remote.forest_._forest)
    assert repr(remote.interactions_.to_frame().to_dict("list")) == repr(local.interactions_.to_frame().to_dict("list"))


# -- DL-BCD restarts, Skinny Trees budget trials -----------------------------------------------

def test_dlbcd_restarts_on_the_cluster_are_the_local_ones(client):
    D = make_collinear_dictionary(4, 0.5)
    X = np.random.RandomState(3).laplace(size=(200, 4)) @ D.T
    params = dict(tau=0.5, init="l1", n_restarts=5, max_iter=30, random_state=1)
    local = DLBCD(**params, n_jobs=2).fit(X)
    with dask():
        remote = DLBCD(**params).fit(X)
    for name in ("components_", "objective_history_", "restart_objectives_", "l1_components_"):
        np.testing.assert_array_equal(getattr(remote, name), getattr(local, name), err_msg=name)
    assert len(set(np.round(local.restart_objectives_, 12))) > 1  # the restarts differ: streams are per restart


def test_fit_budget_trials_on_the_cluster_are_the_local_ones(client):
    X, y, _ = make_correlated_linear(150, 20, correlation=0.5, random_state=5)
    base = SkinnyTreesRegressor(n_trees=3, depth=2, batch_size=32, max_epochs=15, lambda2=0.5)
    kw = dict(max_features=8, n_trials=3, random_state=0,
              param_distributions={"temperature": [0.01, 0.03], "learning_rate": [0.05, 0.1]})
    local = fit_budget(base, X, y, n_jobs=2, **kw)
    with dask():
        remote = fit_budget(base, X, y, **kw)
    np.testing.assert_array_equal(remote.budget_search_.val_score, local.budget_search_.val_score)
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))


# -- combine -----------------------------------------------------------------------------------

def test_combine_is_the_forest_of_all_trees(data):
    X, y, labels = data
    a = RandomForestClassifier(4, random_state=1).fit(X, labels)
    b = RandomForestClassifier(6, random_state=2, max_features=3).fit(X, labels)
    both = combine(a, b)
    assert both.n_estimators == 10 and both._forest.n_trees == 10
    np.testing.assert_array_equal(both.inbag_counts_, np.vstack([a.inbag_counts_, b.inbag_counts_]))
    proba = (4 * a.predict_proba(X) + 6 * b.predict_proba(X)) / 10
    np.testing.assert_allclose(both.predict_proba(X), proba, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(both.classes_, a.classes_)
    assert not hasattr(both, "oob_score_")


def test_combine_refuses_what_it_can_tell_is_not_the_same_data(data):
    X, y, labels = data
    reg = RandomForestRegressor(3, random_state=1).fit(X, y)
    with pytest.raises(ValueError, match="same seed"):
        combine(reg, RandomForestRegressor(3, random_state=1).fit(X, y))
    with pytest.raises(ValueError, match="rows x"):
        combine(reg, RandomForestRegressor(3, random_state=2).fit(X[:100], y[:100]))
    with pytest.raises(TypeError, match="one kind"):
        combine(reg, RandomForestClassifier(3, random_state=2).fit(X, labels))
    with pytest.raises(ValueError, match="classes"):
        combine(RandomForestClassifier(3, random_state=1).fit(X, labels),
                RandomForestClassifier(3, random_state=2).fit(X, labels + 1))
    pd = pytest.importorskip("pandas")
    named = [RandomForestRegressor(3, random_state=k).fit(pd.DataFrame(X, columns=[f"{prefix}{j}" for j in range(12)]), y)
             for k, prefix in ((3, "a"), (4, "b"))]
    with pytest.raises(ValueError, match="feature names"):
        combine(*named)
    with pytest.raises(ValueError, match="feature names"):
        combine(reg, named[0])
    with pytest.raises(TypeError, match="pyinterp forests"):
        combine(reg, object())
    with pytest.raises(ValueError, match="at least one"):
        combine()


def test_combine_of_forests_with_other_streams_is_not_one_fit_but_warm_start_is(data):
    X, y, _ = data
    ten = RandomForestRegressor(10, random_state=4).fit(X, y)
    grown = RandomForestRegressor(4, random_state=4, warm_start=True).fit(X, y).set_params(n_estimators=10).fit(X, y)
    assert same_forest(ten._forest, grown._forest)
    assert pyinterp.combine(grown, RandomForestRegressor(2, random_state=5).fit(X, y))._forest.n_trees == 12


# -- X held by every worker for the whole fit, read in place; data that cannot fit refused ---------

class Arrivals(distributed.WorkerPlugin):
    """Logs the bytes of every key that comes into a worker's memory by broadcast or by transfer."""

    def setup(self, worker):
        self.worker = worker
        worker.pyinterp_arrivals = []

    def transition(self, key, start, finish, **kwargs):
        task = self.worker.state.tasks.get(key)
        if finish == "memory" and start not in ("executing", "long-running") and task is not None:  # not a result
            self.worker.pyinterp_arrivals.append(task.nbytes)


def test_X_comes_to_each_worker_once_for_a_whole_irf_fit_and_is_read_in_place(forgetful_client, data):
    """Dask's active memory manager (every 20 ms here) drops the replicas no waiting task needs:
    before the pins, X came 2-4 times to each worker during one iRF fit and was encoded each time,
    beside an aligned copy of the misaligned buffer Dask delivers it in."""
    client = forgetful_client
    X, y, _ = data
    X = np.ascontiguousarray(np.tile(X, (1, 20)))  # 576 kB
    params = dict(n_iterations=3, n_estimators=20, n_bootstraps=4, rit_n_trees=50, random_state=2)
    local = IterativeRandomForest(**params, n_jobs=2).fit(X, y)
    client.register_plugin(Arrivals(), name="arrivals")

    client.run(codes_counter())
    with joblib.parallel_backend("dask", client=client):
        remote = IterativeRandomForest(**params).fit(X, y)
    assert repr(irf_result(remote)) == repr(irf_result(local))
    arrivals = client.run(lambda dask_worker: [b for b in dask_worker.pyinterp_arrivals if b >= X.nbytes])
    assert [len(a) for a in arrivals.values()] == [1, 1]
    # the iterations' forests encoded X once per worker (the bootstraps encode their resamples)
    assert set(client.run(lambda: len(_core.built)).values()) <= {0, 1}

    def aligned_copies():
        from pyinterp import _distributed
        return [ref().shape for ref, _ in list(_distributed._aligned_copy._entries.values()) if ref() is not None]

    assert not any(len(shape) == 2 for shapes in client.run(aligned_copies).values() for shape in shapes)
    assert not any(client.run(lambda: len(__import__("pyinterp._distributed")._distributed._pins)).values())


def _row_sum(X, k):
    return float(X[k].sum())


def test_a_worker_without_its_copy_gets_the_data_again(client, data):
    """A worker that joined or restarted after the data were sent has no pinned copy: its unit
    raises LostData and run_units sends the data again (the outer call's handle then names the new
    copies), with the same results."""
    from pyinterp import _distributed

    X = data[0]
    with dask():
        with _distributed.data_on_workers(X):
            first = _distributed._sent.get()[id(X)][1].key
            client.run(lambda: _distributed._pins.clear())  # as on workers that joined since
            sums = list(_distributed.run_units(_row_sum, (X,), [(k,) for k in range(6)]))
            again = _distributed._sent.get()[id(X)][1].key
            assert all(n == 1 for n in client.run(lambda: len(_distributed._pins)).values())
    assert sums == [float(X[k].sum()) for k in range(6)]
    assert again != first
    assert not any(client.run(lambda: len(_distributed._pins)).values())
    unpinned = pickle.loads(pickle.dumps(_distributed.Pinned(_distributed.PIN_PREFIX + "gone", X)))
    assert unpinned._obj is None
    with pytest.raises(_distributed.LostData, match="holds no copy"):
        client.submit(lambda p: p.resolve(), unpinned, pure=False).result()


@pytest.fixture(scope="module")
def small_workers():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="2GB") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


def test_X_too_large_for_a_worker_is_refused_before_it_is_sent(small_workers, data):
    """A 3 GB X on 4 GB workers used to be spilled, sent again while the workers restarted, and
    the fit failed after minutes with errors about futures: now it says why before sending."""
    client = small_workers
    # 1.6 GB (np.zeros: pages never touched), codes >= 0.1 GB; spilling starts at 1.4 GB. The limit
    # leaves room for a worker of the sanitizer build, whose memory the nanny also watches.
    X = np.zeros((25_000, 16_000), dtype=np.float32)
    y = np.arange(25_000) % 2.0
    sent = scatter_log(client)
    try:
        with joblib.parallel_backend("dask", client=client):
            with pytest.raises(MemoryError, match=r"training data \(1\.60 GB\) and its column codes \(at least "
                                                  r"0\.10 GB\) do not fit .* limit is 2\.00 GB.*70%.*1\.40 GB"
                                                  r".*feature-parallel"):
                RandomForestRegressor(2, random_state=0).fit(X, y)
            assert not sent
            X, y, _ = data  # data that fits gives the local forest
            remote = RandomForestRegressor(6, random_state=3).fit(X, y)
    finally:
        del client.scatter
    assert same_forest(remote._forest, RandomForestRegressor(6, random_state=3).fit(X, y)._forest)


def test_a_dask_array_is_refused_not_loaded_whole(data):
    da = pytest.importorskip("dask.array")
    X, y, _ = data
    from pyinterp import SkinnyTreesRegressor

    # The forests, iRF and LSSFind fit a dask X feature-parallel (tests/test_feature_parallel.py);
    # the others refuse it.
    with pytest.raises(TypeError, match=r"X is a dask Array, which pyinterp would load whole.*X\.compute\(\)"):
        SkinnyTreesRegressor().fit(da.from_array(X, chunks=(100, 4)), y)
    for X_given in (X, da.from_array(X, chunks=(300, 4))):
        with pytest.raises(TypeError, match=r"y is a dask Array"):
            RandomForestRegressor(2).fit(X_given, da.from_array(y, chunks=100))
    # A forest's predictions read only its split columns of a dask X, by its own graph.
    forest = RandomForestRegressor(2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(forest.predict(da.from_array(X, chunks=(100, 4))), forest.predict(X))
    lss = LSSFind(n_estimators=2, random_state=0).fit(X, y)  # its forest reads the split columns too
    np.testing.assert_array_equal(lss.predict(da.from_array(X, chunks=(100, 4))), lss.predict(X))
