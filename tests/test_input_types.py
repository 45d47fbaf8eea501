"""X as genomic data comes: compact dtypes (int8 genotypes, uint8, int16, bool, float32) read as they
are, scipy.sparse CSR / CSC read without densifying, read-only memory maps whose pages are handed
back as they are encoded. Every form gives bit-identical results to the same values as a dense
float64 array, and the caller's arrays are never modified."""

import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from pyinterp import IterativeRandomForest, LSSFind, RandomForestClassifier, RandomForestRegressor
from pyinterp import importance as imp
from pyinterp._validation import mapped_file

from every_route import assert_same_forest


def genotypes(n, p, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.choice(np.array([0, 1, 2], dtype=np.int8), size=(n, p), p=[0.5, 0.35, 0.15])
    y = 1.5 * X[:, 0] - X[:, 1] * (X[:, 2] > 0) + 0.3 * rng.randn(n)
    return X, y


def counts(n, p, density, seed=0):
    """Sparse count-like data: mostly zeros, a few negative values so zero is not the smallest code."""
    rng = np.random.RandomState(seed)
    X = sp.random(n, p, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.poisson(3.0, k) - (rng.rand(k) < 0.1) * 5.0)
    dense = X.toarray()
    y = dense[:, 0] + 2.0 * (dense[:, 1] > 1) * (dense[:, 2] > 0) + 0.2 * rng.randn(n)
    return X, dense, y


def assert_same_readings(X, X64, y, kw):
    """A regression forest fitted on X equals the one fitted on X64, the same values as dense
    float64, and so does everything read from X: predictions, leaves, paths, out-of-bag values,
    every importance measure and DSTUMP."""
    a, b = RandomForestRegressor(**kw).fit(X, y), RandomForestRegressor(**kw).fit(X64, y)
    assert_same_forest(a, b, inbag=True)
    assert a.oob_score_ == b.oob_score_
    np.testing.assert_array_equal(a.predict(X), b.predict(X64))
    np.testing.assert_array_equal(a.apply(X), b.apply(X64))
    assert (a.decision_path(X)[0] != b.decision_path(X64)[0]).nnz == 0
    np.testing.assert_array_equal(a.oob_predict(X), b.oob_predict(X64))
    for measure in (imp.mdi_oob, imp.naive_oob, imp.ufi):
        np.testing.assert_array_equal(measure(a, X, y), measure(b, X64, y))
    np.testing.assert_array_equal(imp.permutation_oob(a, X, y, random_state=0),
                                  imp.permutation_oob(b, X64, y, random_state=0))
    np.testing.assert_array_equal(imp.contributions(a, X)[0], imp.contributions(b, X64)[0])
    stumps_a, stumps_b = imp.dstump(X, y), imp.dstump(X64, y)
    np.testing.assert_array_equal(stumps_a.scores, stumps_b.scores)
    np.testing.assert_array_equal(stumps_a.threshold, stumps_b.threshold)


def frozen(X):
    """A copy to check X against after the call (data, and for sparse X its index arrays)."""
    if sp.issparse(X):
        return X.format, X.data.copy(), X.indices.copy(), X.indptr.copy()
    return X.copy()


def assert_unchanged(X, before):
    if sp.issparse(X):
        assert X.format == before[0]
        for now, then in zip((X.data, X.indices, X.indptr), before[1:]):
            np.testing.assert_array_equal(now, then)
    else:
        np.testing.assert_array_equal(X, before)


# -- compact dtypes ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.bool_, np.float32])
def test_compact_dtypes_give_the_forest_of_the_same_values_as_float64(dtype):
    X, y = genotypes(300, 12)
    if dtype is np.bool_:
        X = X > 0
    elif dtype is np.int16:
        X = X.astype(np.int16) * 300 - 200  # values beyond one byte, negative ones too
    Xt = np.asarray(X, dtype=dtype)
    X64 = Xt.astype(np.float64)
    assert_same_readings(Xt, X64, y, dict(n_estimators=30, max_features=4, random_state=3, oob_score=True))


def byte_columns(dtype, n, seed=0):
    """Columns for every path of the byte encoder: consecutive values from 0, consecutive values
    shifted, values with gaps, one value, a range too wide for per-value scans, the type's extremes."""
    rng = np.random.RandomState(seed)
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    low, high = (0, 1) if info is None else (info.min, info.max)
    value_sets = [[0, 1, 2], [1, 2], [0, 2], [low, high], [3], list(range(max(low, -20), max(low, -20) + 12)),
                  [low, 0, high], list(range(low, high + 1))]
    if info is not None and low < 0:
        value_sets.append([-1, 0, 1])
    columns = [rng.choice(np.array(v, dtype=np.int64), size=n) for v in value_sets]
    X = np.column_stack([columns[j % len(columns)] for j in range(37)]).astype(dtype)  # 37: 32 + a ragged block
    y = X[:, :3].astype(float) @ [1.0, -2.0, 0.5] + rng.randn(n)
    return X, y


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_])
@pytest.mark.parametrize("layout", ["C", "F", "strided rows", "sliced columns", "reversed"])
def test_byte_columns_give_the_forest_of_the_same_values_as_float64(dtype, layout):
    """1-byte X is transposed and ranked without a conversion (16 columns at a time where rows are
    contiguous); n = 203 leaves a ragged group of rows."""
    X, y = byte_columns(dtype, 406 if layout == "strided rows" else 203)
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "strided rows":
        X, y = X[::2], y[::2]
    elif layout == "sliced columns":
        X = np.column_stack([X, X[:, :5]])[:, 3:]  # rows longer than the columns read
    elif layout == "reversed":
        X, y = X[::-1, ::-1], y[::-1]  # negative strides
    assert_same_readings(X, X.astype(np.float64), y, dict(n_estimators=20, max_features=6, random_state=4, oob_score=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_small_integer_floats_are_ranked_as_by_the_sort(dtype):
    """Float columns whose values are integers in [-128, 255] (and NaN) are ranked by counting; the
    same columns shifted by 1000 take the sort and must give the same trees, thresholds 1000 apart."""
    X, y = byte_columns(np.int8, 300, seed=5)
    X = X.astype(dtype)
    X[np.random.RandomState(6).rand(*X.shape) < 0.05] = np.nan
    X[:, -1] = np.linspace(-1.0, 1.0, len(X))  # one column of real values: sorted either way
    shifted = X.copy()
    shifted[:, :-1] += 1000
    kw = dict(n_estimators=20, max_features=6, random_state=2)
    a, b = RandomForestRegressor(**kw).fit(X, y), RandomForestRegressor(**kw).fit(shifted, y)
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for name in ta.__slots__:
            if name != "threshold":
                np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name), err_msg=name)
        split = (ta.feature >= 0) & (ta.feature < X.shape[1] - 1)
        np.testing.assert_array_equal(ta.threshold[split] + 1000, tb.threshold[split])


def test_int8_is_read_without_a_float_copy():
    """numpy allocations are traced; the core's are not. A float64 copy of X would be 8x its size."""
    X, y = genotypes(2000, 2500)  # 5 MB as int8, 40 MB as float64
    forest = RandomForestRegressor(n_estimators=2, max_features=10, random_state=0)
    tracemalloc.start()
    try:
        forest.fit(X, y)
        forest.predict(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < X.nbytes, peak


def test_genotype_classifier_matches_its_float_version():
    X, y = genotypes(400, 30, seed=2)
    labels = np.where(y > np.median(y), "case", "control")
    kw = dict(n_estimators=10, random_state=1, class_weight="balanced")
    a = RandomForestClassifier(**kw).fit(X, labels)
    b = RandomForestClassifier(**kw).fit(X.astype(float), labels)
    assert_same_forest(a, b, inbag=True)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X.astype(float)))


# -- sparse X ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sparse_fit_and_every_reader_equal_the_dense_matrix(fmt, index_dtype):
    X, dense, y = counts(250, 40, 0.15)
    X = X.asformat(fmt)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    before = frozen(X)
    assert_same_readings(X, dense, y, dict(n_estimators=30, max_features=8, random_state=7, oob_score=True))
    assert_unchanged(X, before)


def test_sparse_edge_columns_and_non_canonical_input():
    """An all-zero column, a column without zeros, explicit zeros, -0.0, unsorted indices and
    duplicate entries (which sum, as scipy defines them); the caller's matrix stays as it was."""
    rng = np.random.RandomState(0)
    dense = np.where(rng.rand(120, 6) < 0.3, rng.randint(-3, 4, size=(120, 6)), 0).astype(float)
    dense[:, 2] = 0.0
    dense[:, 3] = rng.rand(120) + 1.0
    y = dense[:, 0] - dense[:, 3] + 0.1 * rng.randn(120)
    # Per row: each stored value split into two duplicates, explicit zeros and one -0.0 added, order shuffled.
    data, indices, indptr = [], [], [0]
    for i, row in enumerate(dense):
        cols = np.flatnonzero(row)
        entries = [(j, row[j] / 2) for j in cols] * 2 + [(4, 0.0)] * int(rng.rand() < 0.1) + [(2, -0.0)] * (i == 5)
        for k in rng.permutation(len(entries)):
            indices.append(entries[k][0])
            data.append(entries[k][1])
        indptr.append(len(indices))
    X = sp.csr_matrix((np.array(data), np.array(indices, dtype=np.int32), np.array(indptr)), shape=dense.shape)
    assert not X.has_canonical_format
    before = frozen(X)
    kw = dict(n_estimators=8, random_state=2, max_features=None)
    assert_same_forest(RandomForestRegressor(**kw).fit(X, y), RandomForestRegressor(**kw).fit(X.toarray(), y),
                       inbag=True)
    np.testing.assert_array_equal(X.toarray(), dense)
    assert_unchanged(X, before)


def test_sparse_interaction_methods_equal_dense():
    X, dense, y = counts(300, 15, 0.3, seed=4)
    kw = dict(n_estimators=30, random_state=0, max_features=5)
    a, b = LSSFind(**kw).fit(X, y), LSSFind(**kw).fit(dense, y)
    assert a.minimal_.features == b.minimal_.features
    np.testing.assert_array_equal(a.interactions_["dwp"], b.interactions_["dwp"])
    kw = dict(n_estimators=20, n_iterations=2, n_bootstraps=3, random_state=0)
    a, b = IterativeRandomForest(**kw).fit(X, y), IterativeRandomForest(**kw).fit(dense, y)
    assert a.interactions_.features == b.interactions_.features
    np.testing.assert_array_equal(a.interactions_["stability"], b.interactions_["stability"])


def test_sparse_classifier_matches_dense():
    X, dense, y = counts(200, 20, 0.2, seed=1)
    labels = (y > np.median(y)).astype(int)
    kw = dict(n_estimators=10, random_state=4)
    a, b = RandomForestClassifier(**kw).fit(X, labels), RandomForestClassifier(**kw).fit(dense, labels)
    assert_same_forest(a, b, inbag=True)
    assert_same_forest(a, RandomForestClassifier(**kw, n_jobs=2).fit(X, labels), inbag=True)
    np.testing.assert_array_equal(a.predict_proba(X.tocsc()), b.predict_proba(dense))


def test_sparse_bad_input_is_named():
    X, dense, y = counts(50, 5, 0.4)
    X = X.astype(np.float64)
    X.data[0] = np.nan
    with pytest.raises(ValueError, match="X is sparse and holds NaN"):
        RandomForestRegressor(n_estimators=2).fit(X, y)
    X.data[0] = np.inf
    with pytest.raises(ValueError, match="X"):
        RandomForestRegressor(n_estimators=2).fit(X, y)
    forest = RandomForestRegressor(n_estimators=2).fit(dense, y)
    bad = sp.csr_matrix(dense)
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="X is sparse and holds NaN"):
        forest.predict(bad)


# -- memory-mapped X -----------------------------------------------------------------------------


def test_read_only_memmap_fits_the_in_memory_forest_and_stays_readable(tmp_path):
    X, y = genotypes(500, 300)
    path = tmp_path / "g.npy"
    np.save(path, X)
    for order in ("C", "F"):
        np.save(path, np.asarray(X, order=order))
        mm = np.load(path, mmap_mode="r")
        kw = dict(n_estimators=5, random_state=0, max_features=30)
        assert_same_forest(RandomForestRegressor(**kw).fit(mm, y), RandomForestRegressor(**kw).fit(X, y), inbag=True)
        for part in (np.s_[:, 7:200], np.s_[40:, :], np.s_[::-1, ::2]):  # offsets, strides read through the map
            assert_same_forest(RandomForestRegressor(**kw).fit(mm[part], y[part[0]]),
                               RandomForestRegressor(**kw).fit(X[part], y[part[0]]), inbag=True)
        np.testing.assert_array_equal(mm, X)  # pages handed back are read again from the file
    np.testing.assert_array_equal(np.load(path), X)


def test_a_memmap_whose_file_was_replaced_is_read_through_its_map(tmp_path):
    """pread opens the path: once another file took it, the map (which holds the old file) is read."""
    X, y = genotypes(300, 200)
    path = tmp_path / "g.npy"
    np.save(path, X)
    mm = np.load(path, mmap_mode="r")
    assert mapped_file(mm[:, 5:]) == (str(path), mm.offset + 5 * mm.itemsize)
    np.save(tmp_path / "other.npy", X[::-1])
    os.replace(tmp_path / "other.npy", path)
    assert mapped_file(mm) is None
    kw = dict(n_estimators=3, random_state=0, max_features=30)
    assert_same_forest(RandomForestRegressor(**kw).fit(mm, y), RandomForestRegressor(**kw).fit(X, y), inbag=True)


def test_copy_on_write_memmap_keeps_the_callers_changes(tmp_path):
    """A mode "c" map holds the caller's private changes in its pages: they must not be released."""
    X, y = genotypes(400, 600)
    path = tmp_path / "g.npy"
    np.save(path, X)
    mm = np.load(path, mmap_mode="c")
    mm[:, 3] = 2
    mm[17, 590] = -1
    expected = np.array(mm)
    RandomForestRegressor(n_estimators=2, random_state=0).fit(mm, y)
    np.testing.assert_array_equal(mm, expected)


def test_memmap_is_encoded_without_its_pages_becoming_resident(tmp_path):
    """A fit on a 160 MB memory-mapped float64 matrix whose codes take 20 MB: the columns are read
    from the file in panels, not through the map (reading them through it, the map's pages would
    become resident: 170 MB). Measured in a process of its own, from before the fit."""
    path = tmp_path / "big.npy"
    rng = np.random.RandomState(0)
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(2000, 10000))
    for j in range(0, 10000, 500):
        X[:, j:j + 500] = rng.randint(0, 3, size=(2000, 500))
    X.flush()
    del X
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        from pyinterp import RandomForestRegressor

        def resident_mb():
            with open("/proc/self/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024

        y = np.random.RandomState(0).randn(2000)
        RandomForestRegressor(n_estimators=1, random_state=0).fit(np.zeros((50, 3)), y[:50])  # imports
        mm = np.load(sys.argv[1], mmap_mode="r")
        before = resident_mb()
        RandomForestRegressor(n_estimators=1, max_depth=2, max_features=10, random_state=0).fit(mm, y)
        print(resident_mb() - before)
        """
    )
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True)
    growth = float(out.stdout)
    assert growth < 100, f"peak resident memory grew by {growth:.0f} MB for a 160 MB map"


@pytest.mark.parametrize("shape", [(10,), (2, 3, 4)])
def test_memmap_of_the_wrong_rank_is_named(tmp_path, shape):
    np.save(tmp_path / "x.npy", np.zeros(shape, dtype=np.int8))
    mm = np.load(tmp_path / "x.npy", mmap_mode="r")
    with pytest.raises(ValueError, match="2D|2-d|dim"):
        RandomForestRegressor(n_estimators=2).fit(mm, np.zeros(shape[0]))
