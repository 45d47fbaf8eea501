"""Every ColumnSource of the core's data layer (src/_core/data/column_source.hpp) on the same values
gives the same codes and so the same trees: X in memory (dense of each dtype and layout, CSC, CSR
read as CSC) and memory-mapped X read from its file in panels (C and Fortran order, several panels)
or through the map (strided). The forest fitted on each source, its thresholds read back from that
source, and DSTUMP's thresholds equal those of the dense float64 array."""

import os

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import mapped_kb

from pyinterp import RandomForestClassifier, RandomForestRegressor, _core
from pyinterp import importance as imp
from pyinterp._validation import mapped_file

from every_route import assert_same_forest


def values(n, p, seed):
    """Small integers (the byte sources take them) with a few missing values in a float copy."""
    rng = np.random.RandomState(seed)
    G = rng.choice(np.array([0, 1, 2], dtype=np.int8), size=(n, p), p=[0.5, 0.3, 0.2])
    y = 1.5 * G[:, 0] - G[:, 1] * (G[:, 2] > 0) + 0.3 * rng.randn(n)
    return G, y


def mapped(tmp_path, name, X, order):
    path = tmp_path / f"{name}.npy"
    np.save(path, np.asarray(X, order=order))
    mm = np.load(path, mmap_mode="r")
    assert mapped_file(mm) is not None
    return mm


def sources(G, tmp_path):
    """(name, X) pairs holding G's values, one per source the core builds codes from."""
    F = G.astype(np.float64)
    wide = np.zeros((G.shape[0], 2 * G.shape[1]), dtype=np.float64)
    wide[:, ::2] = F
    yield "float64 C", F
    yield "float64 F", np.asfortranarray(F)
    yield "float64 strided", wide[:, ::2]
    yield "float32", F.astype(np.float32)
    yield "int16", G.astype(np.int16)
    for dtype in (np.int8, np.uint8):
        yield f"{np.dtype(dtype).name} C", G.astype(dtype)
        yield f"{np.dtype(dtype).name} F", np.asfortranarray(G.astype(dtype))
    yield "csc", sp.csc_matrix(F)
    yield "csr", sp.csr_matrix(F)
    yield "memmap float64 C", mapped(tmp_path, "fc", F, "C")
    yield "memmap float64 F", mapped(tmp_path, "ff", F, "F")
    yield "memmap float64 strided", mapped(tmp_path, "fw", wide, "C")[:, ::2]
    yield "memmap int8 C", mapped(tmp_path, "gc", G, "C")
    yield "memmap int8 F", mapped(tmp_path, "gf", G, "F")


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc/self/maps")
@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_the_codes_of_a_mapped_X_beyond_the_memory_budget_go_to_a_file_and_fit_the_same_trees(tmp_path, monkeypatch):
    """A memory-mapped X whose codes would pass PYINTERP_CODES_MEMORY keeps them in an unlinked
    file in TMPDIR, mapped shared: the same codes and trees, bytes counted in file_bytes, and
    nothing left in the folder. A budget that is not a number, or a folder that cannot take the
    file, is refused by name."""
    rng = np.random.RandomState(7)
    F = rng.standard_normal((300, 90)).astype(np.float32)  # 2-byte codes
    F[:, :30] = rng.randint(0, 3, (300, 30))                # 2-bit codes
    F[:, 30:40] = rng.randint(0, 50, (300, 10))             # 1-byte codes
    F[rng.rand(300, 90) < 0.05] = np.nan
    y = np.nan_to_num(F[:, 0]) * np.nan_to_num(F[:, 50]) + np.nan_to_num(F[:, 35]) + 0.3 * rng.randn(300)
    kw = dict(n_estimators=4, random_state=0, max_features=20, oob_score=True)
    reference = RandomForestRegressor(**kw).fit(F, y)
    folder = tmp_path / "codes"
    folder.mkdir()
    for order in "CF":
        X = mapped(tmp_path, order, F, order)
        heap = _core.ColumnCodes(X, 2, mapped_file(X))
        assert heap.file_bytes == 0
        monkeypatch.setenv("TMPDIR", str(folder))
        monkeypatch.setenv("PYINTERP_CODES_MEMORY", str(heap.nbytes - 1))
        in_file = _core.ColumnCodes(X, 2, mapped_file(X))
        assert in_file.file_bytes == in_file.nbytes >= heap.nbytes
        held = [line for line in open("/proc/self/maps") if str(folder) in line]
        assert len(held) == 1 and "(deleted)" in held[0] and " rw-s " in held[0]
        assert list(folder.iterdir()) == []
        forest = RandomForestRegressor(**kw).fit(X, y)
        assert_same_forest(forest, reference)
        assert forest.oob_score_ == reference.oob_score_
        del in_file
        assert not [line for line in open("/proc/self/maps") if str(folder) in line]
        monkeypatch.delenv("PYINTERP_CODES_MEMORY")
    monkeypatch.setenv("PYINTERP_CODES_MEMORY", "a lot")
    with pytest.raises(ValueError, match="PYINTERP_CODES_MEMORY must be a number of bytes"):
        RandomForestRegressor(**kw).fit(X, y)
    monkeypatch.setenv("PYINTERP_CODES_MEMORY", "0")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "absent"))
    with pytest.raises(RuntimeError, match="cannot make a file for X's codes in .*absent"):
        RandomForestRegressor(**kw).fit(X, y)
    monkeypatch.setenv("TMPDIR", str(folder))
    assert_same_forest(RandomForestRegressor(**kw).fit(F, y), reference)  # in memory: no file


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_every_source_gives_the_trees_of_the_dense_float64_values(tmp_path):
    # p = 600: a C-ordered float64 file is read in 512-column panels, a Fortran one in 32-column
    # panels per thread, so each mapped source is read in several panels.
    G, y = values(120, 600, seed=0)
    F = G.astype(np.float64)
    kw = dict(n_estimators=4, random_state=0, max_features=60, oob_score=True)
    reference = RandomForestRegressor(**kw).fit(F, y)
    reference_c = RandomForestClassifier(n_estimators=3, random_state=1, max_features=60).fit(F, y > 0)
    stumps = imp.dstump(F, y)
    seen = set()
    for name, X in sources(G, tmp_path):
        seen.add(name)
        np.testing.assert_array_equal(X.toarray() if sp.issparse(X) else np.asarray(X), G, err_msg=name)
        forest = RandomForestRegressor(**kw).fit(X, y)
        assert_same_forest(forest, reference)
        assert forest.oob_score_ == reference.oob_score_, name
        assert_same_forest(RandomForestClassifier(n_estimators=3, random_state=1, max_features=60).fit(X, y > 0),
                           reference_c)
        if not sp.isspmatrix_csr(X):
            np.testing.assert_array_equal(imp.dstump(X, y).threshold, stumps.threshold, err_msg=name)
        codes = _core.ColumnCodes(X.tocsc() if sp.issparse(X) else X, 2, mapped_file(X))
        assert codes.shape == G.shape
    assert len(seen) == 16


def test_mapped_sources_read_missing_values_as_in_memory(tmp_path):
    G, y = values(200, 70, seed=1)
    F = G.astype(np.float64)
    F[np.random.RandomState(2).rand(*F.shape) < 0.1] = np.nan
    kw = dict(n_estimators=4, random_state=0, max_features=20)
    reference = RandomForestRegressor(**kw).fit(F, y)
    for order in "CF":
        assert_same_forest(RandomForestRegressor(**kw, n_jobs=2).fit(mapped(tmp_path, order, F, order), y), reference)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_is_encoded_in_panels_and_gives_the_dense_trees(index_dtype):
    """A CSR X is read in place, its columns copied out as CSC a panel of about 2^22 entries at a
    time (two panels here, split inside the matrix): the codes take the bytes of the CSC's and the
    trees are the dense array's."""
    rng = np.random.RandomState(4)
    X = sp.random(3000, 3000, density=0.5, format="csr", random_state=4, data_rvs=lambda k: rng.randint(1, 6, k))
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    assert X.nnz > 2**22
    D = X.toarray()
    y = D[:, 0] - D[:, 2999] * (D[:, 1500] > 2) + rng.randn(3000)
    assert _core.ColumnCodes(X, 2, None).nbytes == _core.ColumnCodes(X.tocsc(), 2, None).nbytes
    kw = dict(n_estimators=2, max_features=300, max_depth=6, random_state=0)
    assert_same_forest(RandomForestRegressor(**kw).fit(X, y), RandomForestRegressor(**kw).fit(D, y))


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="reads /proc/self/smaps")
def test_a_mapped_genotype_file_stays_out_of_memory_and_its_codes_take_two_bits(tmp_path):
    """A read-only mapped int8 .npy is read in panels with pread, by the fit and by DSTUMP: none of
    its pages become the process's (the check for bed-reader's -127 once read it all through the map: validation makes
    the memmap a plain view), and the codes of its 0/1/2 columns take 2 bits a genotype."""
    G, y = values(403, 700, seed=3)
    X = mapped(tmp_path, "g", G, "C")
    reference = RandomForestRegressor(n_estimators=3, max_features=40, random_state=0).fit(G, y)
    assert_same_forest(RandomForestRegressor(n_estimators=3, max_features=40, random_state=0).fit(X, y), reference)
    np.testing.assert_array_equal(imp.dstump(X, y).scores, imp.dstump(G, y).scores)  # DSTUMP reads panels too
    assert mapped_kb(tmp_path / "g.npy") == 0
    assert _core.ColumnCodes(X, 2, mapped_file(X)).nbytes == 700 * ((403 + 3) // 4)


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_sparse_columns_keep_their_entries_alone_and_give_the_dense_trees():
    """A CSC column whose entries take at most half of its dense codes' memory is kept as them
    (4 bytes of row and the code each; every other row has the zero's code), read by a cursor that
    moves forward with a node's rows: the trees and out-of-bag routes are those of the dense array.
    Denser columns, and a column without absent entries, keep dense codes."""
    rng = np.random.RandomState(5)
    n, p = 12001, 120
    counts = sp.random(n, p, density=0.003, format="csc", random_state=5, data_rvs=lambda k: rng.poisson(2, k) + 1.0)
    dense_columns = np.column_stack([rng.rand(n), rng.randint(0, 3, n) * (rng.rand(n) < 0.5), rng.rand(n) + 1])
    X = sp.hstack([dense_columns, counts]).tocsc()  # the last of these three has no absent entries
    D = X.toarray()
    y = 2 * D[:, 0] + (D[:, 3] > 0) + D[:, 4] * (D[:, 5] > 1) + 0.1 * rng.randn(n)
    stored = np.diff(X.indptr)[3:]
    assert stored.max() * 5 * 8 <= (n + 3) // 4  # an eighth of even 2-bit dense codes
    assert _core.ColumnCodes(X).nbytes == 2 * n + (n + 3) // 4 + 2 * n + int(np.sum(stored * 5))
    assert _core.ColumnCodes(D).nbytes > 20 * _core.ColumnCodes(X).nbytes / 2
    for Forest, target in ((RandomForestRegressor, y), (RandomForestClassifier, np.digitize(y, [0.8, 1.6]))):
        kw = dict(n_estimators=6, random_state=1, max_features=12, oob_score=True, min_samples_leaf=2)
        reference = Forest(**kw).fit(D, target)
        for form in (X, X.tocsr()):
            forest = Forest(**kw).fit(form, target)
            assert_same_forest(forest, reference)
            assert forest.oob_score_ == reference.oob_score_


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_sparse_columns_searched_from_their_entries_give_the_dense_trees(criterion):
    """Classification searches a sparse column in a node of more rows than it has entries from the
    entries alone, the zero's bin taking the rest of the node's weight per class: with whole
    weights (bootstrap counts, integer sample weights) that rest is exact, so the trees are the
    dense array's, with and without leaf-size limits; explicit zeros stored as entries and
    fractional weights (searched over the node's rows) too. X is CSR, so small nodes list their
    rows' entries per column, and descendants read their ancestor's lists (depth first; best
    first, with max_leaf_nodes, every node lists its own)."""
    rng = np.random.RandomState(8)
    n, p = 6000, 60
    X = sp.random(n, p, density=0.01, format="csr", random_state=8, data_rvs=lambda k: rng.poisson(2, k) + 1.0)
    X.data[::7] = 0.0  # explicit zeros: entries with the zero's code
    D = X.toarray()
    y = np.digitize(D[:, 0] + 2 * (D[:, 1] > 0) * (D[:, 2] > 0) + rng.randn(n), [0.5, 1.5, 2.5])
    cases = [dict(), dict(min_samples_leaf=3), dict(bootstrap=False, max_features=7), dict(max_leaf_nodes=60)]
    weights = [None, rng.randint(1, 4, n).astype(float), rng.rand(n) + 0.5, None]
    for kw, w in zip(cases + cases[:2], weights + weights[1:3]):
        kw = dict(dict(n_estimators=4, random_state=2, max_features=9, criterion=criterion), **kw)
        reference = RandomForestClassifier(**kw).fit(D, y, sample_weight=w)
        assert_same_forest(RandomForestClassifier(**kw).fit(X, y, sample_weight=w), reference)


@pytest.mark.parametrize("criterion", ["squared_error", "poisson"])
def test_sparse_columns_searched_from_their_entries_sum_the_dense_bins_in_regression(criterion):
    """Regression searches a sparse column from the node's entries too: the rows between them (the
    zero's bin) are summed in position order, the order the gather over the node's rows adds them
    in, so every bin, and every tree, is the dense array's bit for bit, at any weights, with
    explicit zeros stored as entries, leaf-size limits, lists (CSR) and lookups (CSC)."""
    rng = np.random.RandomState(10)
    n, p = 6000, 60
    X = sp.random(n, p, density=0.01, format="csr", random_state=10, data_rvs=lambda k: rng.poisson(2, k) + 1.0)
    X.data[::7] = 0.0
    D = X.toarray()
    y = np.exp(0.3 * D[:, 0] + (D[:, 1] > 0) * (D[:, 2] > 0) + 0.1 * rng.randn(n)) + rng.rand(n) / 3
    cases = [dict(), dict(min_samples_leaf=3), dict(bootstrap=False, max_features=7), dict(max_leaf_nodes=60)]
    weights = [None, rng.randint(1, 4, n).astype(float), rng.rand(n) + 0.5, None]
    for kw, w in zip(cases + cases[:2], weights + weights[1:3]):
        kw = dict(dict(n_estimators=3, random_state=2, max_features=9, criterion=criterion), **kw)
        reference = RandomForestRegressor(**kw).fit(D, y, sample_weight=w)
        for form in (X, X.tocsc()):
            assert_same_forest(RandomForestRegressor(**kw).fit(form, y, sample_weight=w), reference)


def test_csr_entries_codes_list_a_node_and_codes_of_another_matrix_are_not_trusted(monkeypatch):
    """Codes built from a CSR X also hold its entries' codes in X's order (those of the columns
    stored sparse, at their widest code's width; found block of rows by block of rows), which a
    node's lists take. Codes built from another matrix (here the CSC form) hold none, and a fit of
    the CSR given them reads the columns instead: both fits grow the dense array's trees."""
    rng = np.random.RandomState(9)
    n, p = 5000, 40
    X = sp.random(n, p, density=0.02, format="csr", random_state=9, data_rvs=lambda k: rng.poisson(3, k) + 1.0)
    X = X.tolil()
    X[:, 0] = rng.rand(n, 1)  # dense codes: its entries' places hold none
    X[rng.choice(n, 600, replace=False), 5] = np.arange(1.0, 601.0)[:, None]  # 601 codes: 2 bytes each
    X = X.tocsr()
    D = X.toarray()
    y = (D[:, 0] + (D[:, 1] > 2) + (D[:, 2] > 0) * (D[:, 3] > 0) > 1.2).astype(int)
    csr, csc = _core.ColumnCodes(X, 2), _core.ColumnCodes(X.tocsc(), 2)
    assert csr.nbytes == csc.nbytes + 2 * X.nnz
    import pyinterp.forest.estimators as estimators

    fit_forest = estimators._core.fit_forest
    kw = dict(n_estimators=3, random_state=0, max_features=8)
    reference = RandomForestClassifier(**kw).fit(D, y)
    for codes in (csr, csc):
        monkeypatch.setattr(estimators._core, "fit_forest", lambda *a, **k: fit_forest(*a, codes=codes, **k))
        assert_same_forest(RandomForestClassifier(**kw).fit(X, y), reference)
