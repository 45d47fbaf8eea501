"""The feature-parallel fit on a real Dask cluster (distributed.LocalCluster, two worker processes):
a dask array X chunked by columns stays on the workers that computed its chunks, each chunk a
ColumnBlock answering the driver's asks; the forest is the one a single process fits on the whole
X, bit for bit."""

import functools
import warnings

import numpy as np
import pytest

from pyinterp import RandomForestClassifier, RandomForestRegressor
from pyinterp._distributed import _workers

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


def test_a_regressor_on_a_dask_array_is_the_forest_of_the_whole_X(client, monkeypatch):
    """Calls are awaited in slices of POLL seconds, between which the blocks' workers are looked
    at: with POLL a millisecond, most waits time out and resume, and the forest is the same."""
    from pyinterp.forest import feature_parallel

    monkeypatch.setattr(feature_parallel, "POLL", 0.001)
    X, y = genotypes()
    local = RandomForestRegressor(5, max_features=0.3, oob_score=True, random_state=0).fit(X, y)
    parted = RandomForestRegressor(5, max_features=0.3, oob_score=True, random_state=0, keep_oob_leaves=True)
    parted_X = da.from_array(X, chunks=(X.shape[0], 25))
    parted.fit(parted_X, y)
    same_forests(local, parted)
    # The out-of-bag measures read the leaves the fit recorded, not X: equal to those of the
    # in-memory X descended through the same trees.
    from pyinterp.importance import mdi_oob, naive_oob, ufi

    unrecorded = RandomForestRegressor(5, max_features=0.3, random_state=0).fit(parted_X, y)
    for measure in (mdi_oob, naive_oob, ufi):
        np.testing.assert_array_equal(measure(parted, parted_X, y), measure(local, X, y), err_msg=measure.__name__)
        # without recorded leaves, X's split columns are read (the whole X is never here)
        np.testing.assert_array_equal(measure(unrecorded, parted_X, y), measure(local, X, y), err_msg=measure.__name__)
    with pytest.raises(ValueError, match=r"X has shape \(399, 90\), but the forest was fitted on \(400, 90\)"):
        mdi_oob(parted, parted_X[1:], y[1:])
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
    # int64 chunks are read as float64 on the workers, as validate_data converts them here
    wide = RandomForestClassifier(**kw).fit(X.astype(np.int64), y)
    same_forests(RandomForestClassifier(**kw).fit(values.astype(np.int64), y), wide)


def test_the_blocks_are_spread_over_the_workers_and_only_rows_travel(client):
    from pyinterp import _core
    from pyinterp.forest.feature_parallel import fit_forest_columns

    n = 20_000
    X, y = genotypes(n=n, p=66)
    params = _core.ForestParams()
    params.n_estimators, params.n_draws, params.max_features, params.seed = 4, n, 4, 1
    params.max_depth, params.record_oob_leaves = 6, True
    made = []
    forest = fit_forest_columns(da.from_array(X, chunks=(n, 17)), y, None, 0, None, None, params, blocks_out=made)
    same = _core.fit_forest(X, y, None, 0, None, None, params)
    for ta, tb in zip(same.__getstate__()["trees"], forest.__getstate__()["trees"]):
        for field in ta:
            np.testing.assert_array_equal(ta[field], tb[field], err_msg=field)
    blocks = made[0]
    assert blocks.bounds == [0, 17, 34, 51, 66]
    assert all(len(held) == 1 for held in blocks.workers)
    assert len({held[0] for held in blocks.workers}) == 2
    # Per tree a block receives the row weights (8 bytes a row) and out-of-bag rows (4 bytes
    # each), then per level the partitions it has not made, a bit per row and out-of-bag row, and
    # its nodes' ranges, values and candidates: never its columns, nor each node's rows (4 bytes
    # a row per level: 4 x 24 x 12,600 bytes beyond this bound).
    levels = sum(int(t["depth"].max()) for t in forest.__getstate__()["trees"])
    nodes = sum(len(t["threshold"]) for t in forest.__getstate__()["trees"])
    assert levels == 4 * 6
    per_node = 2 * 8 + 8 + 2 * 8 + 8 + 8 * params.max_features + 4 * 8  # ranges, values, bounds, candidates, moves
    assert (blocks.bytes_sent > 4 * 8 * n).all()
    assert (blocks.bytes_sent < 4 * 12 * n + levels * (2 * n // 8 + 16 * 8) + nodes * per_node).all()
    # Answers: a bit per candidate, a few splits per node, a bit per row parted
    assert (blocks.bytes_received < levels * (2 * n // 8 + 16 * 8) + nodes * (8 + 21 * 3 + 8)).all()


def test_the_blocks_draw_weighted_candidates_and_always_features_as_the_builder(client):
    """Each block draws its nodes' candidates itself (feature weights, always_features and the
    seed reach it), so the trees are those of one process."""
    from pyinterp import _core
    from pyinterp.forest.feature_parallel import fit_forest_columns

    X, y = genotypes(n=500, p=90)
    weights = np.random.RandomState(2).uniform(0.0, 1.0, 90)
    weights[[5, 33, 60]] = [3.0, 0.0, 3.0]
    params = _core.ForestParams()
    params.n_estimators, params.n_draws, params.max_features, params.seed = 4, 500, 5, 8
    params.always_features = [2, 71]
    forest = fit_forest_columns(da.from_array(X, chunks=(500, 23)), y, None, 0, None, weights, params)
    same = _core.fit_forest(X, y, None, 0, None, weights, params)
    for ta, tb in zip(same.__getstate__()["trees"], forest.__getstate__()["trees"]):
        for field in ta:
            np.testing.assert_array_equal(ta[field], tb[field], err_msg=field)
    features = np.concatenate([t["feature"] for t in forest.__getstate__()["trees"]])
    assert 33 not in features and {2, 5, 60, 71} <= set(features)


def test_a_dask_X_without_a_cluster_is_refused_by_name(monkeypatch):
    import distributed as dist

    X = da.zeros((20, 4), chunks=(20, 2))
    y = np.arange(20.0)

    def no_client():
        raise ValueError("No global client found")
    monkeypatch.setattr(dist, "get_client", no_client)
    with pytest.raises(ValueError, match="no Client is running"):
        RandomForestRegressor(2).fit(X, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        RandomForestRegressor(2).fit(X, y[:-1])
    with pytest.raises(TypeError, match="reads numbers"):
        RandomForestRegressor(2).fit(da.from_array(np.array([["a"] * 4] * 20, dtype=object), chunks=(20, 2)), y)


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


def test_columnfiles_fit_from_bed_and_npy_files_as_in_memory(client, tmp_path):
    """X in two .bed filesets and a .npy, each block opened by the worker it is given (the files
    never reach this process): the forest of the same values in memory, named by the variant IDs
    when every file is a .bed."""
    bed_reader = pytest.importorskip("bed_reader")
    from pyinterp.io import ColumnFiles

    parts = [np.ascontiguousarray(genotypes(n=300, p=90, seed=s)[0][:, :40]) for s in (1, 2)]
    beds = []
    for k, G in enumerate(parts):
        beds.append(str(tmp_path / f"chr{k + 1}.bed"))
        bed_reader.to_bed(beds[-1], G, properties={"sid": [f"rs{40 * k + j}" for j in range(40)],
                                                   "iid": [f"s{i}" for i in range(300)]})
    values = np.random.default_rng(3).normal(size=(300, 20)).astype(np.float32)
    np.save(tmp_path / "expression.npy", values)
    rows = np.flatnonzero(np.random.default_rng(4).random(300) < 0.8)  # the samples with a phenotype
    X = np.hstack([*parts, values])[rows]
    y = np.nan_to_num(X[:, 3]) * np.nan_to_num(X[:, 55]) + X[:, 90] + np.random.default_rng(5).normal(size=len(rows))
    kw = dict(n_estimators=6, max_features=0.3, oob_score=True, random_state=2)
    local = RandomForestRegressor(**kw).fit(X, y)
    files = ColumnFiles([*beds, str(tmp_path / "expression.npy")], rows=rows, block_columns=30)
    parted = RandomForestRegressor(**kw).fit(files, y)
    same_forests(local, parted)
    assert parted.oob_score_ == local.oob_score_ and not hasattr(parted, "feature_names_in_")
    # Covariates after the variants, one more block, split on at every node (always_split_features
    # by name, as with PackedGenotypes.with_covariates).
    labels = np.where(y > np.median(y), "case", "control")
    C = np.random.default_rng(6).normal(size=(len(rows), 2))
    genomes = ColumnFiles(beds, rows=rows).with_covariates(C, names=["age", "PC1"])
    clf = RandomForestClassifier(4, always_split_features=["age"], random_state=0).fit(genomes, labels)
    in_memory = RandomForestClassifier(4, always_split_features=[80], random_state=0)
    same_forests(in_memory.fit(np.hstack([X[:, :80], C]), labels), clf)
    assert clf.feature_names_in_.tolist() == [f"rs{j}" for j in range(80)] + ["age", "PC1"]


@pytest.mark.heavy  # workers near their memory limits: not under the sanitizers
def test_columnfiles_larger_than_each_worker_fit_within_the_memory_limits(tmp_path):
    """A 480 MB X in a .npy file on two workers limited to 400 MB each: a worker opens its half
    of the columns and keeps their codes (a byte a value, 60 MB), read from the file in panels;
    the fit equals the one in this process and no worker is restarted."""
    from pyinterp.io import ColumnFiles

    n, p = 24_000, 5_000
    path = str(tmp_path / "X.npy")
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, p))
    rng = np.random.default_rng(0)
    for start in range(0, n, 2_000):
        X[start:start + 2_000] = rng.integers(0, 3, size=(2_000, p), dtype=np.int8)
    X.flush()
    X = np.load(path, mmap_mode="r")
    assert X.nbytes > 400e6
    y = X[:, 17] * X[:, 4_321] + X[:, 2_500] + rng.normal(size=n)
    kw = dict(n_estimators=2, max_features=50, max_depth=6, random_state=0)
    local = RandomForestRegressor(**kw).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="400MB", worker_class=distributed.Nanny) as cluster, \
            distributed.Client(cluster) as client:
        started = set(_workers(client))
        parted = RandomForestRegressor(**kw).fit(ColumnFiles(path), y)
        # predictions read the split columns with pread, never through the map (whose pages
        # would stay resident in the workers, which Dask would pause and restart)
        np.testing.assert_array_equal(parted.predict(ColumnFiles(path)), local.predict(X))
        assert set(_workers(client)) == started  # none died or restarted
    same_forests(local, parted)


def test_X_too_large_for_the_workers_is_refused_before_anything_is_computed(tmp_path):
    """A dask array's chunks stay on the workers beside their codes, so all of X must fit their
    memory; a ColumnFiles block keeps only its codes (and rows it copies): each is checked against
    the room Dask leaves (70 % of a 2 GB limit) before a chunk is computed or a file opened."""
    from pyinterp.io import ColumnFiles

    path = str(tmp_path / "X.npy")
    np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(40_000, 50_000))  # 8 GB, sparse on disk
    y = np.arange(40_000.0)
    scattered = np.arange(0, 40_000, 2)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="2GB") as cluster, distributed.Client(cluster):
        with pytest.raises(MemoryError, match=r"X \(8\.00 GB\) and its column codes \(at least 0\.50 GB\) do not fit "
                                              r"the 1 Dask workers: they may hold 1\.40 GB.*ColumnFiles"):
            RandomForestRegressor(2).fit(da.zeros((40_000, 50_000), dtype=np.float32, chunks=(40_000, 5_000)), y)
        with pytest.raises(MemoryError, match=r"X's blocks given to Dask worker .* need at least 4\.25 GB .* Dask acts "
                                              r"on its data at 1\.40 GB \(70% of its 2\.00 GB limit\)"):
            RandomForestRegressor(2).fit(ColumnFiles(path, rows=scattered), y[scattered])
        # Read in place with all rows, the same file needs only its codes: 0.50 GB.
        assert ColumnFiles(path).blocks(1)[0].least_memory() == 10_000 * 50_000


@pytest.mark.heavy  # a worker killed for memory: not under the sanitizers
def test_a_worker_killed_for_memory_while_making_blocks_raises_not_hangs(tmp_path):
    """Real-valued columns take 2-byte codes, beyond the 2-bit floor the check before the fit can
    count on: the only worker passes its limit while encoding, its nanny restarts it, and Dask
    never finishes (nor fails) the block. The fit notices the worker gone and raises."""
    from pyinterp.io import ColumnFiles

    n, p = 20_000, 5_000
    path = str(tmp_path / "X.npy")
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, p))
    rng = np.random.default_rng(0)
    for start in range(0, n, 2_000):
        X[start:start + 2_000] = rng.normal(size=(2_000, p))
    X.flush()
    del X
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="350MB", worker_class=distributed.Nanny) as cluster, \
            distributed.Client(cluster):
        with pytest.raises(RuntimeError, match=r"1 of the 1 Dask workers left the cluster while X's blocks were made "
                                               r"\(out of memory\? the limits are 0\.35 GB\); the blocks of columns "
                                               r"\[0, 5000\) were not made"):
            RandomForestRegressor(2, random_state=0).fit(ColumnFiles(path), np.arange(n, dtype=float))


# -- after the fit: the measures that run rows down the trees read X's split columns ---------------


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
@pytest.mark.parametrize("with_npy", [True, False])
def test_every_measure_of_rows_reads_columnfiles_where_they_are(client, tmp_path, monkeypatch, with_npy):
    """A forest fitted on .bed and .npy files and covariates: predictions, leaves, paths,
    out-of-bag values, contributions, SHAP and permutation importance take the same ColumnFiles
    (only the columns the splits use are read, by the workers, a run of rows at a time) and equal
    those of the same values in memory, bit for bit; runs of three rows give the same answers.
    Of .bed files alone (and covariates) the split columns stay packed genotypes here."""
    bed_reader = pytest.importorskip("bed_reader")
    from pyinterp import importance
    from pyinterp.forest import split_columns
    from pyinterp.interactions import path_prevalence, signed_paths
    from pyinterp.io import ColumnFiles, PackedGenotypes

    G, _ = genotypes(n=240, p=90, seed=7)
    bed = str(tmp_path / "chr1.bed")
    bed_reader.to_bed(bed, np.ascontiguousarray(G[:, :40]), properties={"sid": [f"rs{j}" for j in range(40)],
                                                  "iid": [f"s{i}" for i in range(240)]})
    values = np.random.default_rng(8).normal(size=(240, 20)).astype(np.float32)
    np.save(tmp_path / "expression.npy", values)
    paths = [bed, str(tmp_path / "expression.npy")] if with_npy else [bed]
    rows = np.flatnonzero(np.random.default_rng(9).random(240) < 0.9)
    C = np.random.default_rng(10).normal(size=(len(rows), 1))
    X = np.hstack([G[:, :40], values] if with_npy else [G[:, :40]])[rows]
    X = np.hstack([X, C])
    pair = (3, 45) if with_npy else (3, 12)
    y = (np.nan_to_num(X[:, pair[0]]) * np.nan_to_num(X[:, pair[1]]) + X[:, -1]
         + np.random.default_rng(11).normal(size=len(rows)))
    files = ColumnFiles(paths, rows=rows, block_columns=15).with_covariates(C)
    assert files.packed != with_npy
    kw = dict(n_estimators=6, max_features=0.3, max_depth=5, random_state=4)
    local = RandomForestRegressor(**kw).fit(X, y)
    parted = RandomForestRegressor(**kw).fit(files, y)
    same_forests(local, parted)
    used = split_columns.split_features(parted._forest)
    assert 0 < len(used) < X.shape[1]  # some columns are never read
    run = split_columns.SplitColumns(parted._forest, files).read(0, 5)
    assert isinstance(run, PackedGenotypes) == files.packed and used[-1] == X.shape[1] - 1  # the covariate too

    def check(runs=False):
        # SHAP's algorithm="auto" picks per tree by the rows in the call: in runs, equal to rounding
        near = functools.partial(np.testing.assert_allclose, rtol=1e-9, atol=1e-12) if runs else \
            np.testing.assert_array_equal
        np.testing.assert_array_equal(parted.predict(files), local.predict(X))
        np.testing.assert_array_equal(parted.apply(files), local.apply(X))
        a, b = parted.decision_path(files), local.decision_path(X)
        assert (a[0] != b[0]).nnz == 0 and np.array_equal(a[1], b[1])
        np.testing.assert_array_equal(parted.oob_predict(files), local.oob_predict(X))
        for got, want in zip(importance.contributions(parted, files), importance.contributions(local, X)):
            np.testing.assert_array_equal(got, want)
        for measure in (importance.shap_values, importance.banzhaf_values):
            for got, want in zip(measure(parted, files), measure(local, X)):
                near(got, want, err_msg=measure.__name__)
        background = ColumnFiles(paths, rows=rows[:30]).with_covariates(C[:30])
        for given in (background, X[:30]):  # on the cluster, or in memory
            got = importance.shap_values(parted, files, background=given)
            want = importance.shap_values(local, X, background=X[:30])
            np.testing.assert_allclose(got[0], want[0], rtol=0, atol=1e-12)
            assert got[1] == want[1]
        near(importance.shap_interaction_values(parted, files), importance.shap_interaction_values(local, X))
        got = importance.shap_interaction_importance(parted, files)
        np.testing.assert_allclose(got.toarray(), importance.shap_interaction_importance(local, X).toarray(),
                                   rtol=1e-12, atol=0)
        for got, want in zip(importance.shap_top_interactions(parted, files, k=3),
                             importance.shap_top_interactions(local, X, k=3)):
            near(got, want)
        np.testing.assert_array_equal(importance.permutation_oob(parted, files, y, random_state=1),
                                      importance.permutation_oob(local, X, y, random_state=1))
        rule = [[(pair[0], 1), (pair[1], 1)]]
        np.testing.assert_array_equal(path_prevalence(parted, signed_paths(parted), files, rule),
                                      path_prevalence(local, signed_paths(local), X, rule))

    check()
    # a row here: a float64 value per split column, or (packed) two bits a call and 8 bytes for C
    row_bytes = split_columns.SplitColumns(parted._forest, files).row_bytes
    assert row_bytes == (-(-(len(used) - 1) // 4) + 8 if files.packed else len(used) * 8)
    monkeypatch.setattr(split_columns, "RUN_BYTES", 40 * row_bytes)  # runs of 40 rows
    check(runs=True)
    # permutation importance reads the split columns a few trees at a time (packed, of a .bed)
    monkeypatch.setattr(split_columns, "trees_bytes", lambda: 2 * len(y) * row_bytes // len(used))
    runs = split_columns.SplitColumns(parted._forest, files)._tree_runs(parted._forest.__getstate__()["trees"],
                                                                        split_columns.trees_bytes())
    assert len(runs) > 1
    np.testing.assert_array_equal(importance.permutation_oob(parted, files, y, random_state=1),
                                  importance.permutation_oob(local, X, y, random_state=1))
    # Refusals name what differs.
    short = ColumnFiles([bed], rows=rows).with_covariates(C) if with_npy else ColumnFiles([bed], rows=rows)
    with pytest.raises(ValueError, match=f"X has {short.shape[1]} features, but the forest was fitted on {X.shape[1]}"):
        parted.predict(short)
    with pytest.raises(ValueError, match="k must be at most"):
        importance.shap_top_interactions(parted, files, k=len(used) * (len(used) - 1) // 2 + 1)


def test_a_classifier_on_a_dask_array_explains_and_predicts_it_in_runs(client, monkeypatch):
    """A dask array's split columns are computed by its own graph, a run of rows at a time: the
    classifier's probabilities, leaves and SHAP values are those of the array in memory."""
    from pyinterp import importance
    from pyinterp.forest import split_columns

    X, signal = genotypes(n=300, p=90, seed=12)
    y = np.where(signal > np.median(signal), "case", "control")
    parted_X = da.from_array(X, chunks=(300, 23))
    kw = dict(n_estimators=5, max_features=0.4, min_samples_leaf=3, random_state=6)
    local = RandomForestClassifier(**kw).fit(X, y)
    parted = RandomForestClassifier(**kw).fit(parted_X, y)
    monkeypatch.setattr(split_columns, "RUN_BYTES", 1_000)
    np.testing.assert_array_equal(parted.predict_proba(parted_X), local.predict_proba(X))
    np.testing.assert_array_equal(parted.predict(parted_X[100:]), local.predict(X[100:]))
    np.testing.assert_array_equal(parted.apply(parted_X), local.apply(X))
    got, want = importance.shap_values(parted, parted_X[:40]), importance.shap_values(local, X[:40])
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(importance.mdi_oob(parted, parted_X, y), importance.mdi_oob(local, X, y))


def test_a_call_to_a_worker_paused_too_long_raises_naming_its_columns(monkeypatch):
    """A block's worker that Dask keeps paused never answers: after PAUSED_PATIENCE the call
    raises, naming the block's columns and the workers' limits; a worker that resumes resets it."""
    from pyinterp.forest import feature_parallel

    class Unanswered:
        def result(self, timeout):
            raise TimeoutError

    blocks = object.__new__(feature_parallel.DaskBlocks)
    blocks.client, blocks.workers, blocks.bounds = None, [["tcp://a"]], [0, 25]
    monkeypatch.setattr(feature_parallel, "POLL", 0.001)
    monkeypatch.setattr(feature_parallel, "PAUSED_PATIENCE", 0.05)
    monkeypatch.setattr(feature_parallel, "_workers", lambda client: {"tcp://a": {"status": "paused",
                                                                                   "memory_limit": 2e9}})
    with pytest.raises(feature_parallel._Stalled, match=r"columns \[0, 25\) of X has been paused for 0 s.*\(2.00 GB\)"):
        blocks._answer(0, Unanswered())
    # gone from the cluster: lost, as when killed
    monkeypatch.setattr(feature_parallel, "_workers", lambda client: {})
    with pytest.raises(RuntimeError, match=r"the worker holding columns \[0, 25\) of X left the cluster"):
        blocks._answer(0, Unanswered())


def test_monotonic_constraints_fit_feature_parallel_as_in_memory(client):
    """monotonic_cst reaches every block (the bounds travel with the asks): the constrained trees
    of a dask X are those of X in memory; X with missing values is refused as in memory, once
    the blocks have read their columns, naming the first column with one."""
    X = np.ascontiguousarray(genotypes(n=300, p=90, seed=13)[0][:, :40])
    complete = np.nan_to_num(X)
    y = complete[:, 3] - complete[:, 30] + np.random.default_rng(14).normal(size=300)
    cst = np.zeros(40, dtype=int)
    cst[[3, 30]] = [1, -1]
    kw = dict(n_estimators=4, max_features=0.5, monotonic_cst=cst, random_state=5)
    local = RandomForestRegressor(**kw).fit(complete, y)
    parted = RandomForestRegressor(**kw).fit(da.from_array(complete, chunks=(300, 10)), y)
    same_forests(local, parted)
    grid = np.tile(complete[:1], (3, 1))
    grid[:, 3] = [0, 1, 2]
    assert np.all(np.diff(parted.predict(grid)) >= 0)
    first = int(np.flatnonzero(np.isnan(X).any(axis=0))[0])
    with pytest.raises(ValueError, match=rf"X contains NaN \(column {first} first\): monotonic_cst does not "
                                         r"support missing values"):
        RandomForestRegressor(**kw).fit(da.from_array(X, chunks=(300, 10)), y)
    with pytest.raises(ValueError, match="monotonic_cst does not support missing values"):
        RandomForestRegressor(**kw).fit(X, y)


def test_best_first_trees_grow_feature_parallel_as_in_memory(client):
    """max_leaf_nodes: the trees grow best-first over the blocks (a split's two children searched
    and parted in one round of asks), node for node the trees of X in memory."""
    X, y = genotypes(n=300, p=90, seed=15)
    kw = dict(n_estimators=4, max_features=0.3, max_leaf_nodes=11, random_state=8)
    local = RandomForestRegressor(**kw).fit(X, y)
    parted = RandomForestRegressor(**kw).fit(da.from_array(X, chunks=(300, 30)), y)
    same_forests(local, parted)
    assert all(int((t.left < 0).sum()) == 11 for t in parted.trees_)


def test_category_codes_fit_feature_parallel_and_are_checked_where_they_are(client, tmp_path):
    """categorical_features=CategoryCodes: the columns hold codes already, so nothing is encoded
    here; the blocks check them (a value that is no code is refused, naming its column and row,
    as CodeChecker refuses it in memory), the trees split on category sets as in memory, and
    predictions from the files check the codes they read."""
    bed_reader = pytest.importorskip("bed_reader")
    from pyinterp import CategoryCodes
    from pyinterp.io import ColumnFiles

    G = np.ascontiguousarray(genotypes(n=300, p=90, seed=16)[0][:, :30])
    bed = str(tmp_path / "chr1.bed")
    bed_reader.to_bed(bed, G, properties={"sid": [f"rs{j}" for j in range(30)], "iid": [f"s{i}" for i in range(300)]})
    rng = np.random.default_rng(17)
    batch = rng.integers(0, 4, 300).astype(float)
    C = np.column_stack([rng.normal(size=300), batch])
    y = np.nan_to_num(G[:, 2]) + 2.0 * np.isin(batch, [1, 3]) + rng.normal(scale=0.5, size=300)
    codes = CategoryCodes({"batch": ["b0", "b1", "b2", "b3"]})
    kw = dict(n_estimators=4, max_features=0.5, random_state=9, categorical_features=codes)
    files = ColumnFiles(bed).with_covariates(C, names=["age", "batch"])
    parted = RandomForestRegressor(**kw).fit(files, y)
    X = np.hstack([G, C])
    local = RandomForestRegressor(**{**kw, "categorical_features": CategoryCodes({31: codes.categories["batch"]})})
    same_forests(local.fit(X, y), parted)
    assert parted.is_categorical_.tolist() == [False] * 31 + [True]
    assert any((t.feature[t.left >= 0] == 31).any() for t in parted.trees_)
    np.testing.assert_array_equal(parted.predict(files), local.predict(X))
    np.testing.assert_array_equal(parted.predict(X), local.predict(X))  # in memory too
    wrong = C.copy()
    wrong[7, 1] = 4.0
    with pytest.raises(ValueError, match=r"column 31 \('batch'\) holds 4.0 in row 7, not a code of its 4 categories"):
        RandomForestRegressor(**kw).fit(ColumnFiles(bed).with_covariates(wrong, names=["age", "batch"]), y)
    with pytest.raises(ValueError, match=r"column 31 \('batch'\) holds 4.0 in row 7"):
        parted.predict(ColumnFiles(bed).with_covariates(wrong, names=["age", "batch"]))
    with pytest.raises(ValueError, match=r"column 2 \('rs2'\) is a column of X's files.*CategoryCodes"):
        RandomForestRegressor(4, categorical_features=[2, 31]).fit(files, y)


def test_categorical_columns_to_encode_fit_feature_parallel_as_in_memory(client, tmp_path):
    """categorical_features naming columns to encode: a dask array's are read here alone (n x k
    values) to find their categories, then encoded chunk by chunk where the chunks are; a
    ColumnFiles' covariates are encoded here. The categories, trees and predictions are those of
    the same values in memory, an unseen value routes as missing as it does there, and neither
    the caller's X nor its covariates change."""
    bed_reader = pytest.importorskip("bed_reader")
    from pyinterp.io import ColumnFiles

    G = genotypes(n=300, p=90, seed=18)[0][:, :40]
    rng = np.random.default_rng(19)
    tissue = rng.choice([3.0, 7.0, 11.0, 20.0], 300)  # labels, not codes
    X = np.column_stack([G[:, :20], tissue, G[:, 20:]]).astype(np.float32)
    y = np.nan_to_num(G[:, 2]) + 2.0 * np.isin(tissue, [7.0, 20.0]) + rng.normal(scale=0.5, size=300)
    kw = dict(n_estimators=4, max_features=0.5, random_state=5, categorical_features=[20])
    local = RandomForestRegressor(**kw).fit(X, y)
    lazy = da.from_array(X, chunks=(300, 8))
    parted = RandomForestRegressor(**kw).fit(lazy, y)
    same_forests(local, parted)
    assert parted.categories_[0].tolist() == [3.0, 7.0, 11.0, 20.0]
    assert any((t.feature[t.left >= 0] == 20).any() for t in parted.trees_)
    unseen = X.copy()
    unseen[:50, 20] = 5.0
    for rows in (X, unseen):
        np.testing.assert_array_equal(parted.predict(da.from_array(rows, chunks=(100, 8))), local.predict(rows))
        np.testing.assert_array_equal(parted.predict(rows), local.predict(rows))
    assert np.array_equal(np.asarray(lazy), X, equal_nan=True) and set(X[:, 20].tolist()) == {3.0, 7.0, 11.0, 20.0}
    # integers: encoded in float64, as in memory
    ints = np.nan_to_num(X).astype(np.int16)
    same_forests(RandomForestRegressor(**kw).fit(ints, y),
                 RandomForestRegressor(**kw).fit(da.from_array(ints, chunks=(300, 8)), y))
    # a ColumnFiles' covariates, by name
    bed = str(tmp_path / "chr1.bed")
    bed_reader.to_bed(bed, np.ascontiguousarray(G[:, :20]), properties={"sid": [f"rs{j}" for j in range(20)]})
    C = np.column_stack([rng.normal(size=300), tissue])
    files = ColumnFiles(bed).with_covariates(C, names=["age", "tissue"])
    kw["categorical_features"] = ["tissue"]
    in_files = RandomForestRegressor(**kw).fit(files, y)
    stacked = np.hstack([G[:, :20], C])
    same_forests(RandomForestRegressor(**{**kw, "categorical_features": [21]}).fit(stacked, y), in_files)
    np.testing.assert_array_equal(in_files.predict(files), in_files.predict(stacked))
    assert in_files.is_categorical_.tolist() == [False] * 21 + [True]
    assert np.array_equal(files._covariates, C)


def test_dstump_measures_each_block_where_its_columns_are(client, tmp_path, monkeypatch):
    """DSTUMP of a dask array made on the workers, and of .bed and .npy files every worker opens
    (never this process: its FileBlock.open raises), is the table of the same values in memory."""
    bed_reader = pytest.importorskip("bed_reader")
    from pyinterp import _column_map
    from pyinterp.importance import dstump
    from pyinterp.io import ColumnFiles
    from pyinterp.io.column_files import FileBlock

    fields = ("scores", "ranking", "threshold", "impurity_decrease", "sign", "n_left")
    calls = da.random.RandomState(7).binomial(2, 0.3, size=(300, 70), chunks=(100, 20)).astype(np.float32)
    X = da.where(da.random.RandomState(8).random_sample((300, 70), chunks=(100, 20)) < 0.05, np.nan, calls)
    values = X.compute()
    y = np.nan_to_num(values[:, 8]) + np.random.default_rng(0).normal(size=300)
    w = np.random.default_rng(1).random(300)
    here, there = dstump(values, y, sample_weight=w), dstump(X, y, sample_weight=w)
    for field in fields:
        np.testing.assert_array_equal(here[field], there[field], err_msg=field)
    G = np.ascontiguousarray(genotypes(n=300, p=90, seed=6)[0][:, 40:])
    bed = str(tmp_path / "g.bed")
    bed_reader.to_bed(bed, G, properties={"iid": [f"s{i}" for i in range(300)]})
    np.save(tmp_path / "e.npy", values[:, :20])
    rows = np.flatnonzero(np.random.default_rng(2).random(300) < 0.7)
    monkeypatch.setattr(FileBlock, "open", lambda self: pytest.fail("a block was opened here"))
    monkeypatch.setattr(_column_map, "BLOCK_BYTES", 4 * 12 * len(rows))  # 4 columns a block: 19 blocks
    for kw in ({}, {"split": "median", "side": "left"}):
        here = dstump(np.hstack([G, values[:, :20]])[rows], y[rows], **kw)
        there = dstump(ColumnFiles([bed, str(tmp_path / "e.npy")], rows=rows), y[rows], **kw)
        for field in fields:
            np.testing.assert_array_equal(here[field], there[field], err_msg=field)


def same_tables(a, b):
    assert a.features == b.features and a.columns == b.columns
    for name in a.columns:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_irf_and_lssfinds_fit_their_forests_where_the_columns_are_as_in_memory(client):
    """iRF's reweighted and bootstrap forests, and LSSFind's, fitted feature-parallel on a dask
    array made on the workers: the tables, weights and predictions of the same values in memory.
    Style "pyinterp" sums the bootstrap leaves over all their rows (their split columns read in
    runs of rows); the default reads the out-of-bag leaves the fits recorded."""
    from pyinterp import IterativeRandomForest
    from pyinterp.interactions import LocalLSSFind, LSSFind

    X = da.random.RandomState(11).random_sample((300, 24), chunks=(300, 8))
    values = X.compute()
    y = ((values[:, 1] > 0.5) & (values[:, 2] > 0.5)) + ((values[:, 5] < 0.4) & (values[:, 9] < 0.4)) \
        + 0.2 * np.random.default_rng(0).normal(size=300)
    for kw in (dict(n_iterations=2, n_bootstraps=2), dict(n_iterations=1, n_bootstraps=2, style="pyinterp")):
        kw.update(n_estimators=10, random_state=4)
        local, parted = IterativeRandomForest(**kw).fit(values, y), IterativeRandomForest(**kw).fit(X, y)
        same_tables(local.interactions_, parted.interactions_)
        assert len(local.interactions_) > 5
        np.testing.assert_array_equal(local.feature_weights_, parted.feature_weights_)
        np.testing.assert_array_equal(local.oob_errors_, parted.oob_errors_)
        np.testing.assert_array_equal(local.predict(values), parted.predict(X))
    kw = dict(n_estimators=10, random_state=5, mode="rank")
    local, parted = LSSFind(**kw).fit(values, y), LSSFind(**kw).fit(X, y)
    same_tables(local.interactions_, parted.interactions_)
    np.testing.assert_array_equal(local.predict(values), parted.predict(X))
    # LocalLSSFind: fitted as LSSFind, each row of X sent down the trees by its split columns
    kw = dict(n_estimators=10, random_state=5)
    local, parted = LocalLSSFind(**kw).fit(values, y), LocalLSSFind(**kw).fit(X, y)
    here, there = local.local_interactions(values[:30]), parted.local_interactions(X[:30])
    assert sum(len(t) for t in here) > 0
    for a, b in zip(here, there, strict=True):
        same_tables(a, b)


def test_irf_reads_its_bootstraps_from_the_files_at_their_rows(client, tmp_path, monkeypatch):
    """A ColumnFiles (.bed at some samples, covariates after) taken at each bootstrap's rows: the
    files are read by the workers only (FileBlock.open fails here), and the iRF is the one of the
    same values in memory, named by the variant IDs."""
    bed_reader = pytest.importorskip("bed_reader")
    from pyinterp import IterativeRandomForest
    from pyinterp.io import ColumnFiles
    from pyinterp.io.column_files import FileBlock

    G = np.ascontiguousarray(genotypes(n=360, p=90, seed=9)[0][:, :40])
    bed = str(tmp_path / "g.bed")
    bed_reader.to_bed(bed, G, properties={"sid": [f"rs{j}" for j in range(40)],
                                          "iid": [f"s{i}" for i in range(360)]})
    rows = np.flatnonzero(np.random.default_rng(1).random(360) < 0.9)
    C = np.random.default_rng(2).normal(size=(len(rows), 2))
    values = np.hstack([G[rows], C])
    g = np.nan_to_num(values)
    labels = np.where((g[:, 3] > 0) & (g[:, 17] > 0) | (C[:, 1] > 1), "case", "control")
    monkeypatch.setattr(FileBlock, "open", lambda self: pytest.fail("a block was opened here"))
    kw = dict(n_iterations=2, n_estimators=20, n_bootstraps=2, class_id="case", random_state=6)
    warnings.filterwarnings("ignore", "IterativeRandomForest found no rule")  # 2 bootstraps
    local = IterativeRandomForest(**kw).fit(values, labels)
    parted = IterativeRandomForest(**kw).fit(ColumnFiles(bed, rows=rows).with_covariates(C, ["age", "PC1"]), labels)
    same_tables(local.interactions_, parted.interactions_)
    assert parted.feature_names_in_[-1] == "PC1" and "rs3+ & rs17+" in parted.interactions_.label(
        parted.interactions_.features[0])
