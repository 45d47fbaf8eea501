"""ColumnFiles (pyinterp.io.column_files): X's columns in .bed and .npy files, read block by block
where a feature-parallel fit opens them. Here, without a cluster: what a ColumnFiles reads of
its files, how it cuts them into blocks, what each block opens, and the refusals. The fits on a
LocalCluster are in tests/test_feature_parallel.py."""

import numpy as np
import pytest

from pyinterp import RandomForestRegressor
from pyinterp.importance import dstump
from pyinterp._validation import mapped_file
from pyinterp.io import ColumnFiles, PackedGenotypes, read_plink
from pyinterp.io.column_files import FileBlock

bed_reader = pytest.importorskip("bed_reader")


def genotypes(n, p, seed):
    rng = np.random.default_rng(seed)
    G = rng.binomial(2, rng.uniform(0.05, 0.5, p), size=(n, p)).astype(np.float32)
    G[rng.random((n, p)) < 0.05] = np.nan
    return G


def write_bed(path, G, first=0, iids=None):
    n, p = G.shape
    iids = [f"s{k}" for k in range(n)] if iids is None else iids
    bed_reader.to_bed(path, G, properties={"sid": [f"rs{first + k}" for k in range(p)], "iid": iids})
    return str(path)


@pytest.fixture
def files(tmp_path):
    """Two .bed filesets and a .npy of the same 30 samples, and the X they make in memory."""
    parts = [genotypes(30, 7, 0), genotypes(30, 5, 1)]
    beds = [write_bed(tmp_path / f"chr{k + 1}.bed", G, first=7 * k) for k, G in enumerate(parts)]
    values = np.random.default_rng(2).normal(size=(30, 4)).astype(np.float32)
    npy = str(tmp_path / "expression.npy")
    np.save(npy, values)
    return beds, npy, np.hstack([*parts, values])


def test_shape_names_and_dtype_are_the_files_side_by_side(files):
    beds, npy, X = files
    genomes = ColumnFiles(beds)
    assert genomes.shape == (30, 12) and genomes.dtype == np.float32
    assert genomes.feature_names.tolist() == [f"rs{k}" for k in range(12)]
    assert genomes.sample_ids.tolist() == [f"s{k}" for k in range(30)]
    both = ColumnFiles([*beds, npy], rows=[3, 1, 2])
    assert both.shape == (3, 16) and both.feature_names is None
    assert both.sample_ids.tolist() == ["s3", "s1", "s2"]
    mask = np.zeros(30, bool)
    mask[[4, 9]] = True
    assert ColumnFiles(npy, rows=mask).rows.tolist() == [4, 9]
    assert np.dtype(ColumnFiles(npy).dtype) == np.float32 and ColumnFiles(npy).feature_names is None


def test_covariates_are_the_last_columns_and_one_more_block(files):
    beds, npy, X = files
    C = np.arange(6.0).reshape(3, 2)
    with_c = ColumnFiles(beds, rows=[3, 1, 2]).with_covariates(C, names=["age", "PC1"])
    assert with_c.shape == (3, 14) and with_c.dtype == np.float64
    assert with_c.feature_names.tolist()[-3:] == ["rs11", "age", "PC1"]
    last = with_c.blocks(2)[-1]
    assert (last.first, last.end) == (12, 14) and last.open() is with_c._covariates
    np.testing.assert_array_equal(last.open(), C)
    assert ColumnFiles(npy).with_covariates(np.ones(30)).covariate_names.tolist() == ["c0"]
    pd = pytest.importorskip("pandas")  # a DataFrame's columns (a Series' name) name the covariates
    named = ColumnFiles(beds, rows=[3, 1, 2]).with_covariates(pd.DataFrame({"age": C[:, 0], "PC1": C[:, 1]}))
    assert named.feature_names.tolist()[-3:] == ["rs11", "age", "PC1"]
    np.testing.assert_array_equal(named._covariates, C)
    assert ColumnFiles(npy).with_covariates(pd.Series(np.ones(30), name="sex")).covariate_names.tolist() == ["sex"]
    assert ColumnFiles(npy).with_covariates(pd.Series(np.ones(30))).covariate_names.tolist() == ["c0"]
    with pytest.raises(ValueError, match=r"covariates must have one row per sample \(3\)"):
        ColumnFiles(beds, rows=[3, 1, 2]).with_covariates(np.ones((30, 1)))
    with pytest.raises(ValueError, match="covariates must be finite"):
        ColumnFiles(npy).with_covariates(np.full(30, np.nan))
    with pytest.raises(ValueError, match=r"not variant IDs: \['rs3'\]"):
        ColumnFiles(beds).with_covariates(np.ones(30), names=["rs3"])
    with pytest.raises(ValueError, match="these files have covariates already"):
        with_c.with_covariates(C)


def test_blocks_cut_each_file_and_never_cross_one(files):
    beds, npy, _ = files
    X = ColumnFiles([*beds, npy])
    assert [(b.first, b.end) for b in X.blocks(1)] == [(0, 7), (7, 12), (12, 16)]
    # ceil(16 / 3) = 6 columns at most: chr1's 7 in two blocks, the others whole
    assert [(b.first, b.end) for b in X.blocks(3)] == [(0, 4), (4, 7), (7, 12), (12, 16)]
    assert [(b.c0, b.c1) for b in X.blocks(3)] == [(0, 4), (4, 7), (0, 5), (0, 4)]
    cut = ColumnFiles([*beds, npy], block_columns=2).blocks(5)
    assert [b.end - b.first for b in cut] == [2, 2, 1, 2, 2, 1, 2, 2, 2]
    assert cut[-1].end == 16


@pytest.mark.parametrize("rows", [None, [0, 1, 2, 3, 4, 5], [8, 2, 29, 2]])
def test_each_block_opens_its_columns_of_the_rows(files, rows):
    """A .bed block as packed genotypes (read in place, or a repacked subset), a .npy block as a
    map of its file (all rows or a run of them) or as a copy of the rows asked for."""
    beds, npy, X = files
    files_X = ColumnFiles([*beds, npy], rows=rows)
    expected = X if rows is None else X[rows]
    for block in files_X.blocks(4):
        opened = block.open()
        np.testing.assert_array_equal(np.asarray(opened, dtype=np.float32), expected[:, block.first:block.end])
        if block.kind == "npy":
            assert (mapped_file(opened) is not None) == (rows is None or rows == list(range(6)))


@pytest.mark.parametrize("count_a2", [False, True])
def test_a_bed_blocks_read_of_some_rows_reads_only_the_bytes_holding_them(files, monkeypatch, count_a2):
    """A .bed block's read (the split columns a prediction reads in runs of rows) gives the file's
    values at those rows and columns, reading of each variant only the bytes (4 calls each) that
    span those rows, and sends them packed: a run of rows costs its share of the file, not every
    sample's calls, and two bits a value."""
    import os

    beds, _, X = files
    G = X[:, :7] if not count_a2 else 2 - X[:, :7]
    sizes, real = [], os.preadv
    monkeypatch.setattr(os, "preadv", lambda fd, buffers, where: sizes.append(sum(b.nbytes for b in buffers))
                        or real(fd, buffers, where))
    for rows, start, stop, spanned in [(None, 9, 17, 3), (None, 0, 30, 8), (None, 28, 29, 1),
                                       ([8, 2, 29, 2], 0, 4, 8), ([8, 2, 29, 2], 1, 2, 1), ([5, 6, 7, 4], 0, 4, 1)]:
        block = ColumnFiles(beds[0], rows=rows, count_a2=count_a2).blocks(1)[0]
        sizes.clear()
        got = block.read(np.array([0, 2, 3, 6]), start, stop)
        assert isinstance(got, PackedGenotypes) and got._calls.shape == (4, spanned)  # sent as they are read
        want = (G if rows is None else G[rows])[start:stop][:, [0, 2, 3, 6]]
        np.testing.assert_array_equal(np.asarray(got), want)
        assert np.asarray(got).dtype == np.float32
        # bytes 9 // 4 to 16 // 4 of each variant for rows 9-16; whole variants 2 and 3 in one read
        assert sum(sizes) == 4 * spanned and len(sizes) == (3 if spanned == 8 else 4), (rows, start, stop, sizes)


def test_a_fit_reads_a_block_as_it_reads_the_file_itself(files):
    """What a block opens fits the forest the file's own columns fit (the core's mapped and
    packed routes), so the feature-parallel fit starts from the same codes."""
    beds, _, X = files
    y = np.nan_to_num(X[:, 2]) + np.nan_to_num(X[:, 8])
    block = ColumnFiles(beds).blocks(1)[1]
    kw = dict(n_estimators=3, random_state=0)
    a = RandomForestRegressor(**kw).fit(block.open(), y)
    b = RandomForestRegressor(**kw).fit(read_plink(beds[1]), y)
    np.testing.assert_array_equal(a.predict(block.open()), b.predict(read_plink(beds[1])))


def test_bad_files_and_arguments_are_refused_by_name(files, tmp_path):
    beds, npy, _ = files
    with pytest.raises(FileNotFoundError, match="missing"):
        ColumnFiles(str(tmp_path / "missing.npy"))
    (tmp_path / "x.csv").write_text("1,2\n")
    with pytest.raises(ValueError, match=r"x\.csv is neither a PLINK \.bed nor a \.npy"):
        ColumnFiles([npy, str(tmp_path / "x.csv")])
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"cube\.npy holds a 3-d array"):
        ColumnFiles(str(tmp_path / "cube.npy"))
    np.save(tmp_path / "words.npy", np.array([["a"]]))
    with pytest.raises(ValueError, match=r"words\.npy holds a 2-d array of <U1"):
        ColumnFiles(str(tmp_path / "words.npy"))
    np.save(tmp_path / "short.npy", np.zeros((29, 2)))
    with pytest.raises(ValueError, match=r"short\.npy has 29 rows \(samples\) where .*chr1\.bed has 30"):
        ColumnFiles([beds[0], str(tmp_path / "short.npy")])
    other = write_bed(tmp_path / "other.bed", genotypes(30, 2, 3), iids=[f"s{k}" for k in range(29)] + ["t"])
    with pytest.raises(ValueError, match=r"other\.bed's samples differ from .*chr1\.bed's: row 29 is '0 t' there "
                                         r"and '0 s29' in the first"):
        ColumnFiles([beds[0], other])
    with pytest.raises(ValueError, match=r"variant 'rs0' is in .*chr1\.bed and again in .*chr1\.bed"):
        ColumnFiles([beds[0], beds[0]])
    again = write_bed(tmp_path / "again.bed", genotypes(30, 2, 4), first=8)
    with pytest.raises(ValueError, match=r"variant 'rs8' is in .*chr2\.bed and again in .*again\.bed"):
        ColumnFiles([*beds, again])
    with pytest.raises(ValueError, match="rows must be indices of the files' 30 rows"):
        ColumnFiles(npy, rows=[0, 30])
    with pytest.raises(ValueError, match="one entry per row of the files. 30 rows"):
        ColumnFiles(npy, rows=np.ones(3, bool))
    with pytest.raises(ValueError, match="rows must be a 1-d array"):
        ColumnFiles(npy, rows=[[0]])
    with pytest.raises(ValueError, match="rows selects no sample"):
        ColumnFiles(npy, rows=np.zeros(30, bool))
    with pytest.raises(ValueError, match="block_columns must be a positive integer"):
        ColumnFiles(npy, block_columns=0)
    with pytest.raises(ValueError, match="paths must name at least one file"):
        ColumnFiles([])


def test_a_file_changed_after_the_columnfiles_was_made_is_refused_where_it_opens(files, tmp_path):
    _, npy, _ = files
    block = ColumnFiles(npy).blocks(1)[0]
    np.save(npy, np.zeros((31, 4), np.float32))
    with pytest.raises(ValueError, match=r"expression\.npy changed since the ColumnFiles was made: it now holds 31"):
        block.open()
    gone = FileBlock(str(tmp_path / "gone.npy"), "npy", 0, 1, 30, 0, None, False, np.dtype(np.float32))
    with pytest.raises(FileNotFoundError, match=r"gone\.npy cannot be read on .*same path on every Dask worker"):
        gone.open()


def test_only_forest_methods_and_dstump_take_a_columnfiles(files, monkeypatch):
    from pyinterp import SkinnyTreesRegressor

    beds, npy, X = files
    files_X = ColumnFiles(npy)
    y = X[:, 12]
    forest = RandomForestRegressor(3, random_state=0).fit(X[:, 12:], y)
    with pytest.raises(TypeError, match="X is a ColumnFiles, which only pyinterp's forests read .* and "
                                        "pyinterp.importance.dstump"):
        SkinnyTreesRegressor().fit(files_X, y)
    with pytest.raises(ValueError, match="monotonic_cst has shape 3 but the input data X has 4 features"):
        RandomForestRegressor(3, monotonic_cst=[1, 0, 0]).fit(files_X, y)
    with pytest.raises(ValueError, match="Found input variables with inconsistent numbers of samples: \\[30, 29\\]"):
        RandomForestRegressor(3).fit(files_X, y[:29])
    distributed = pytest.importorskip("distributed")

    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "get_client", no_client)
    with pytest.raises(ValueError, match="a ColumnFiles X is fitted feature-parallel .* no Client is running"):
        RandomForestRegressor(3).fit(files_X, y)
    # A forest fitted in memory reads a ColumnFiles' split columns on the cluster too.
    with pytest.raises(ValueError, match="a ColumnFiles X is read by the Dask workers .* no Client is running"):
        forest.predict(files_X)


@pytest.mark.parametrize("weighted", [False, True])
def test_dstump_reads_a_columnfiles_block_by_block_here_as_in_memory(files, monkeypatch, weighted):
    """Without a Dask client DSTUMP opens the blocks here, one after the other, each at most
    BLOCK_BYTES (here a few columns): the table of the same values in memory, to the bit, whatever
    the blocks. rows= selects samples (a .npy read at them is a copy, a .bed's repacked)."""
    from pyinterp import _column_map

    monkeypatch.setattr(_column_map, "_client", lambda: None)
    beds, npy, X = files
    rows = np.flatnonzero(np.random.default_rng(7).random(30) < 0.8)
    y = np.nan_to_num(X[rows, 2]) - X[rows, 13] + np.random.default_rng(8).normal(size=len(rows))
    w = np.random.default_rng(9).random(len(rows)) if weighted else None
    opened = []
    monkeypatch.setattr(FileBlock, "open", lambda self, _open=FileBlock.open: opened.append(self) or _open(self))
    for budget, blocks in ((1 << 30, 3), (len(rows) * 12 * 3, 7)):  # one block a file; 3 columns at most
        monkeypatch.setattr(_column_map, "BLOCK_BYTES", budget)
        opened.clear()
        for kw in ({}, {"split": "median", "side": "left"}):
            here, there = dstump(X[rows], y, sample_weight=w, **kw), dstump(ColumnFiles([*beds, npy], rows=rows),
                                                                              y, sample_weight=w, **kw)
            for field in ("scores", "ranking", "threshold", "impurity_decrease", "sign", "n_left"):
                np.testing.assert_array_equal(here[field], there[field], err_msg=field)
        assert len(opened) == 2 * blocks
    with pytest.raises(ValueError, match="inconsistent numbers of samples: \\[30, 29\\]"):
        dstump(ColumnFiles(npy), X[:29, 13])


def test_take_rows_reads_the_files_at_rows_of_x(files):
    """take_rows picks rows of X (after the files' own rows=), repeats and order kept, covariates
    at the same rows; its blocks open those values."""
    beds, npy, X = files
    C = np.arange(60.0).reshape(30, 2)
    base = ColumnFiles([*beds, npy], rows=np.arange(29, -1, -1)).with_covariates(C[::-1], names=["age", "PC1"])
    picked = base.take_rows([3, 0, 3, 28])
    assert picked.shape == (4, 18) and picked.rows.tolist() == [26, 29, 26, 1]
    assert picked.sample_ids.tolist() == ["s26", "s29", "s26", "s1"]
    opened = np.hstack([np.asarray(b.open(), dtype=np.float64) for b in picked.blocks(n_workers=2)])
    np.testing.assert_array_equal(opened, np.hstack([X, C])[[26, 29, 26, 1]])
    np.testing.assert_array_equal(base.take_rows(np.arange(30) < 2).rows, [29, 28])
    with pytest.raises(ValueError, match="rows must be indices of X's 30 rows"):
        base.take_rows([30])
    with pytest.raises(ValueError, match="rows selects no sample"):
        base.take_rows([])
