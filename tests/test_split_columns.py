"""forest/split_columns.py without a cluster: the forest renumbered to the columns it splits on
descends those columns as the original descends the whole X; results widen back with zeros; a
dask array (its own threaded scheduler here) is read at those columns a run of rows at a time.
The ColumnFiles route, on a LocalCluster, is in tests/test_feature_parallel.py."""

import numpy as np
import pytest

from pyinterp import RandomForestClassifier, RandomForestRegressor, _core
from pyinterp.forest import split_columns
from pyinterp.forest.split_columns import SplitColumns, narrowed_forest, split_features


def data(n=200, p=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[rng.random((n, p)) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 2]) + np.nan_to_num(X[:, 17]) * (np.nan_to_num(X[:, 9]) > 0) + rng.normal(size=n)
    return X, y


def test_the_narrowed_forest_descends_the_split_columns_as_the_forest_does_X():
    X, y = data()
    forest = RandomForestRegressor(8, max_features=0.2, max_depth=4, random_state=1).fit(X, y)
    used = split_features(forest._forest)
    splits = np.concatenate([t.feature[t.left >= 0] for t in forest.trees_])
    assert used.tolist() == sorted(set(splits.tolist())) and len(used) < X.shape[1]
    narrow = narrowed_forest(forest._forest, used)
    assert narrow.n_features == len(used)
    Xu = np.ascontiguousarray(X[:, used])
    np.testing.assert_array_equal(narrow.predict(Xu), forest._forest.predict(X))
    np.testing.assert_array_equal(narrow.apply(Xu), forest._forest.apply(X))
    values, base = _core.shap_values(narrow, Xu, 1, False, "walk")
    wide, wide_base = _core.shap_values(forest._forest, X, 1, False, "walk")
    np.testing.assert_array_equal(values, wide[:, used])
    assert not wide[:, np.setdiff1d(np.arange(X.shape[1]), used)].any() and np.array_equal(base, wide_base)
    # the narrowed forest's thresholds and node values are the original's
    for a, b in zip(narrow.__getstate__()["trees"], forest._forest.__getstate__()["trees"]):
        np.testing.assert_array_equal(a["threshold"], b["threshold"])
        np.testing.assert_array_equal(used[a["feature"][a["left"] >= 0]], b["feature"][b["left"] >= 0])


def test_widen_places_the_split_columns_and_zeros_elsewhere():
    X, y = data()
    X, y = X[:, :6], np.nan_to_num(X[:, 2]) + np.nan_to_num(X[:, 4])
    forest = RandomForestRegressor(3, max_features=1, max_depth=1, random_state=0).fit(X, y)

    class Rows:  # a stand-in with the shape and dtype SplitColumns reads
        shape, dtype = X.shape, X.dtype

    columns = SplitColumns(forest._forest, Rows())
    u = len(columns.features)
    wide = columns.widen(np.arange(2 * u * u, dtype=float).reshape(2, u, u), axes=(1, 2))
    assert wide.shape == (2, 6, 6)
    np.testing.assert_array_equal(wide[:, columns.features[:, None], columns.features[None, :]],
                                  np.arange(2 * u * u).reshape(2, u, u))
    assert wide.sum() == np.arange(2 * u * u).sum()
    np.testing.assert_array_equal(columns.widen(np.ones(u), axes=(0,)) != 0, np.isin(np.arange(6), columns.features))
    with pytest.raises(ValueError, match="X has 5 features, but the forest was fitted on 6"):
        class Narrow(Rows):
            shape = (200, 5)
        SplitColumns(forest._forest, Narrow())


def test_a_forest_that_splits_on_nothing_reads_no_column():
    X = np.random.default_rng(0).normal(size=(50, 4))
    forest = RandomForestClassifier(3, random_state=0).fit(X, np.zeros(50, dtype=int))
    assert split_features(forest._forest).size == 0
    narrow = narrowed_forest(forest._forest, split_features(forest._forest))
    np.testing.assert_array_equal(narrow.predict(np.zeros((5, 1))), forest._forest.predict(X[:5]))


def test_a_dask_array_is_read_at_its_split_columns_in_runs(monkeypatch):
    da = pytest.importorskip("dask.array")
    from pyinterp.importance import contributions, permutation_oob, shap_values

    X, y = data(n=300)
    forest = RandomForestRegressor(6, max_features=0.3, random_state=2).fit(X, y)
    lazy = da.from_array(X, chunks=(100, 7))
    read = []
    real_read = SplitColumns.read

    def counted(self, start, stop):
        read.append((start, stop))
        return real_read(self, start, stop)

    monkeypatch.setattr(SplitColumns, "read", counted)
    monkeypatch.setattr(split_columns, "RUN_BYTES", 64 * 8 * len(split_features(forest._forest)))
    np.testing.assert_array_equal(forest.predict(lazy), forest.predict(X))
    assert read == [(0, 64), (64, 128), (128, 192), (192, 256), (256, 300)]
    for got, want in zip(contributions(forest, lazy), contributions(forest, X)):
        np.testing.assert_array_equal(got, want)
    got, want = shap_values(forest, lazy, algorithm="walk"), shap_values(forest, X, algorithm="walk")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(permutation_oob(forest, lazy, y, random_state=0),
                                  permutation_oob(forest, X, y, random_state=0))
    # integer columns the core does not read as they are (int32) come as float64
    ints = da.from_array(np.arange(300 * 30, dtype=np.int32).reshape(300, 30), chunks=(300, 10))
    assert SplitColumns(forest._forest, ints).read(0, 2).dtype == np.float64


def test_permutation_importance_reads_runs_of_trees_whose_columns_fit(monkeypatch):
    """Permutation importance needs each tree's split columns of all rows together: a feature-
    parallel X is read for runs of consecutive trees whose columns of all rows fit the budget
    (a tree alone even past it), never the whole forest's at once; each tree draws from its own
    stream as in the whole forest, so the importances, with and without a cluster's threads, are
    those of the whole X to the bit."""
    da = pytest.importorskip("dask.array")
    from pyinterp.importance import permutation_oob

    X, y = data(n=300, p=60)
    w = np.random.default_rng(1).random(300)
    forest = RandomForestRegressor(9, max_features=0.2, max_depth=3, random_state=4).fit(X, y)
    lazy = da.from_array(X, chunks=(100, 15))
    columns = SplitColumns(forest._forest, lazy)
    per_tree = [set(t.feature[t.left >= 0].tolist()) for t in forest.trees_]
    budget = 300 * 8 * 9  # nine float64 columns of all rows
    runs = columns._tree_runs(forest._forest.__getstate__()["trees"], budget)
    assert runs[0][0] == 0 and runs[-1][1] == 9 and all(a[1] == b[0] for a, b in zip(runs, runs[1:]))
    assert len(runs) > 2
    for first, stop in runs:  # greedy: each run fits (or is one tree), and the next tree would not
        assert stop - first == 1 or len(set().union(*per_tree[first:stop])) <= 9
        assert stop == 9 or len(set().union(*per_tree[first:stop + 1])) > 9
    read = []
    monkeypatch.setattr(SplitColumns, "read_all",
                        lambda self, what: read.append(self.features) or self.read(0, self.n_rows))
    monkeypatch.setattr(split_columns, "trees_bytes", lambda: budget)
    want = permutation_oob(forest, X, y, sample_weight=w, random_state=3, return_std=True)
    got = permutation_oob(forest, lazy, y, sample_weight=w, random_state=3, return_std=True)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert [f.tolist() for f in read] == [sorted(set().union(*per_tree[a:b])) for a, b in runs]
    assert np.count_nonzero(want[0]) > 3
    read.clear()
    monkeypatch.setattr(split_columns, "trees_bytes", lambda: 1)  # a tree a run
    got = permutation_oob(forest, lazy, y, sample_weight=w, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(got, want[0])
    assert len(read) == 9


def test_recorded_oob_leaves_in_runs_are_those_a_fit_records():
    X, y = data(n=150)
    kept = RandomForestRegressor(7, max_features=0.3, keep_oob_leaves=True, random_state=3).fit(X, y)
    core = RandomForestRegressor(7, max_features=0.3, random_state=3).fit(X, y)._forest
    assert not core.has_oob_leaves
    for start, stop in [(0, 40), (40, 41), (41, 150)]:
        core.record_oob_leaves(X[start:stop], start, 2)
    oob = core.inbag.reshape(7, 150).T == 0
    # the leaves now serve the training rows as a fit's recorded ones do
    got = core.apply_oob(np.zeros_like(X), training=True)
    np.testing.assert_array_equal(got, kept._forest.apply_oob(X))
    assert (got[oob] >= 0).all() and (got[~oob] == -1).all()
    with pytest.raises(ValueError, match="not among the training rows"):
        core.record_oob_leaves(X[:10], 141, 1)
    with pytest.raises(ValueError):
        core.record_oob_leaves(X[:10, :5], 0, 1)


def test_out_of_bag_measures_of_a_dask_array_record_its_leaves_in_runs(monkeypatch):
    """Without leaves recorded at fit, the out-of-bag measures record them now, reading the split
    columns a run of rows at a time (4 bytes per tree and row kept), unless all rows' split columns
    take fewer bytes; either way the values are those of the whole X, and the forest is unchanged."""
    da = pytest.importorskip("dask.array")
    from pyinterp.importance import mdi_oob, naive_oob, ufi

    X, y = data(n=300)
    lazy = da.from_array(X, chunks=(100, 7))
    reads = []
    real_read, real_read_all = SplitColumns.read, SplitColumns.read_all
    monkeypatch.setattr(SplitColumns, "read", lambda self, a, b: reads.append((a, b)) or real_read(self, a, b))
    monkeypatch.setattr(SplitColumns, "read_all", lambda self, what: reads.append("all") or real_read_all(self, what))
    deep = RandomForestRegressor(20, max_features=0.3, random_state=2).fit(X, y)  # leaves 80 bytes a row
    monkeypatch.setattr(split_columns, "RUN_BYTES", 64 * 8 * len(split_features(deep._forest)))
    for measure in (mdi_oob, naive_oob, ufi):
        reads.clear()
        np.testing.assert_array_equal(measure(deep, lazy, y), measure(deep, X, y), err_msg=measure.__name__)
        assert reads == [(0, 64), (64, 128), (128, 192), (192, 256), (256, 300)]
    reads.clear()
    np.testing.assert_array_equal(deep.oob_predict(lazy), deep.oob_predict(X))
    assert len(reads) == 5 and not deep._forest.has_oob_leaves
    # 200 stumps split on a few columns: their values (8 bytes each) are fewer bytes than 800 leaves
    stumps = RandomForestRegressor(200, max_depth=1, max_features=0.3, random_state=2).fit(X, y)
    assert len(split_features(stumps._forest)) * 8 < 4 * 200
    reads.clear()
    np.testing.assert_array_equal(mdi_oob(stumps, lazy, y), mdi_oob(stumps, X, y))
    np.testing.assert_array_equal(stumps.oob_predict(lazy), stumps.oob_predict(X))
    assert reads == ["all", (0, 300)] * 2
    with pytest.raises(ValueError, match="X has 299 rows but the forest was trained on 300"):
        ufi(deep, lazy[1:], y[1:])


def test_reads_waiting_on_workers_paused_too_long_raise(monkeypatch):
    """Dask never runs a task on a paused worker: a read waiting on a cluster whose workers all
    stay paused (memory past the pause fraction) raises after PAUSED_PATIENCE, naming it."""
    distributed = pytest.importorskip("distributed")
    from pyinterp.forest import feature_parallel

    def never(futures, timeout):
        raise TimeoutError

    monkeypatch.setattr(distributed, "wait", never)
    monkeypatch.setattr(feature_parallel, "POLL", 0.001)
    monkeypatch.setattr(feature_parallel, "PAUSED_PATIENCE", 0.05)
    status = {"status": "paused"}
    monkeypatch.setattr(split_columns, "_workers", lambda client: {"tcp://a": {**status, "memory_limit": 5e8}})
    with pytest.raises(RuntimeError, match=r"paused for 0 s: their memory passed Dask's pause fraction of their "
                                           r"limit \(0.50 GB\)"):
        split_columns._wait(None, [])
    # running workers: it keeps waiting (here until the test stops it)
    calls = []

    def running(client):
        calls.append(1)
        if len(calls) > 50:
            raise KeyboardInterrupt
        return {"tcp://a": {"status": "running", "memory_limit": 5e8}}

    monkeypatch.setattr(split_columns, "_workers", running)
    with pytest.raises(KeyboardInterrupt):
        split_columns._wait(None, [])
