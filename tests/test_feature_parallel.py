"""The feature-parallel fit on a real Dask cluster (distributed.LocalCluster, two worker processes):
a dask array X chunked by columns stays on the workers that computed its chunks, each chunk a
ColumnBlock answering the driver's asks; the forest is the one a single process fits on the whole
X, bit for bit."""

import numpy as np
import pytest

from pyinterp import RandomForestClassifier, RandomForestRegressor

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_class=distributed.Nanny) as cluster, distributed.Client(cluster) as client:
        yield client


def same_forests(a, b):
    sa, sb = a._forest.__getstate__(), b._forest.__getstate__()
    assert len(sa["trees"]) == len(sb["trees"])
    for ta, tb in zip(sa["trees"], sb["trees"]):
        for field in ta:
            np.testing.assert_array_equal(ta[field], tb[field], err_msg=field)
    np.testing.assert_array_equal(sa["inbag"], sb["inbag"])


def genotypes(n=400, p=90, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.binomial(2, rng.uniform(0.05, 0.5, p), size=(n, p)).astype(np.float32)
    X[rng.rand(n, p) < 0.02] = np.nan
    signal = np.nan_to_num(X[:, 5]) * np.nan_to_num(X[:, 60]) + np.nan_to_num(X[:, 33]) + rng.randn(n)
    return X, signal


def test_a_regressor_on_a_dask_array_is_the_forest_of_the_whole_X(client):
    X, y = genotypes()
    local = RandomForestRegressor(5, max_features=0.3, oob_score=True, random_state=0).fit(X, y)
    parted = RandomForestRegressor(5, max_features=0.3, oob_score=True, random_state=0)
    parted.fit(da.from_array(X, chunks=(X.shape[0], 25)), y)
    same_forests(local, parted)
    assert parted.oob_score_ == local.oob_score_
    assert parted.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(parted.feature_importances_, local.feature_importances_)
    np.testing.assert_array_equal(parted.predict(X), local.predict(X))


def test_a_classifier_made_on_the_workers_is_the_forest_of_the_whole_X(client):
    """The chunks are computed on the workers (dask's random arrays, chunked by rows and
    rechunked): this process never holds X; the same values computed here fit the same trees."""
    X = da.random.RandomState(4).randint(0, 3, size=(300, 64), chunks=(100, 16)).astype(np.int8)
    values = X.compute()
    y = np.where(values[:, 3] + values[:, 40] > 2, "case", "control")
    kw = dict(n_estimators=10, max_features="sqrt", criterion="entropy", min_samples_leaf=2, random_state=3)
    local = RandomForestClassifier(**kw).fit(values, y)
    parted = RandomForestClassifier(**kw).fit(X, y)
    same_forests(local, parted)
    assert parted.classes_.tolist() == ["case", "control"]
    np.testing.assert_array_equal(parted.predict_proba(values), local.predict_proba(values))


def test_the_blocks_are_spread_over_the_workers_and_only_rows_travel(client):
    from pyinterp import _core
    from pyinterp.forest.feature_parallel import fit_forest_columns

    X, y = genotypes(n=600, p=120)
    params = _core.ForestParams()
    params.n_estimators, params.n_draws, params.max_features, params.seed = 4, 600, 40, 1
    made = []
    forest = fit_forest_columns(da.from_array(X, chunks=(600, 30)), y, None, 0, None, None, params, blocks_out=made)
    same = _core.fit_forest(X, y, None, 0, None, None, params)
    for ta, tb in zip(same.__getstate__()["trees"], forest.__getstate__()["trees"]):
        np.testing.assert_array_equal(ta["threshold"], tb["threshold"])
    blocks = made[0]
    assert blocks.bounds == [0, 30, 60, 90, 120]
    assert all(len(held) == 1 for held in blocks.workers)
    assert len({held[0] for held in blocks.workers}) == 2
    # Per tree a block receives the row weights and, per level, the rows of the nodes it is asked
    # about (4 bytes a row) and little else: never its columns.
    levels = sum(int(t["depth"].max()) for t in forest.__getstate__()["trees"])
    assert (blocks.bytes_sent > 0).all()
    assert (blocks.bytes_sent < 4 * (600 * 8 + 3 * levels * 600 * 4)).all()


def test_a_dask_X_without_a_cluster_or_with_categories_is_refused_by_name(monkeypatch):
    import distributed as dist

    X = da.zeros((20, 4), chunks=(20, 2))
    y = np.arange(20.0)

    def no_client():
        raise ValueError("No global client found")
    monkeypatch.setattr(dist, "get_client", no_client)
    with pytest.raises(ValueError, match="no Client is running"):
        RandomForestRegressor(2).fit(X, y)
    with pytest.raises(ValueError, match="categorical_features needs X's values"):
        RandomForestRegressor(2, categorical_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        RandomForestRegressor(2).fit(X, y[:-1])
    with pytest.raises(TypeError, match="reads numbers"):
        RandomForestRegressor(2).fit(da.from_array(np.array([["a"] * 4] * 20, dtype=object), chunks=(20, 2)), y)
    with pytest.raises(ValueError, match="max_leaf_nodes grows a tree best-first"):
        from pyinterp.forest.feature_parallel import DaskBlocks  # noqa: F401 (the refusal comes first)
        monkeypatch.undo()
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster, distributed.Client(cluster):
            RandomForestRegressor(2, max_leaf_nodes=4).fit(X, y)


def test_a_worker_killed_mid_fit_raises_naming_its_columns(monkeypatch):
    """A block's codes die with its worker: the fit raises, naming the columns, and does not hang."""
    import os
    import threading
    import time

    from pyinterp import _core
    from pyinterp.forest import feature_parallel

    made = []
    make = feature_parallel.DaskBlocks.__init__

    def recorded(self, *args, **kwargs):
        make(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(feature_parallel.DaskBlocks, "__init__", recorded)
    X, y = genotypes(n=1000, p=90)
    params = _core.ForestParams()
    params.n_estimators, params.n_draws, params.max_features = 100, 1000, 20
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_class=distributed.Nanny) as cluster, \
            distributed.Client(cluster) as client:  # the default client while it lives
        def kill_one_mid_fit():
            while not made or made[0].bytes_sent.sum() < 5e5:
                time.sleep(0.02)
            with pytest.raises(Exception):  # the worker dies before it answers
                client.run(os._exit, 1, workers=[made[0].workers[0][0]])
        killer = threading.Thread(target=kill_one_mid_fit, daemon=True)
        killer.start()
        with pytest.raises(RuntimeError, match=r"the worker holding columns \[0, 45\) of X left the cluster"):
            feature_parallel.fit_forest_columns(da.from_array(X, chunks=(1000, 45)), y, None, 0, None, None, params,
                                                client=client)
        killer.join(timeout=30)
