"""PLINK 1 .bed files read in place (pyinterp.io.read_plink, PackedGenotypes; the core's packed
layout in src/_core/data/). Files are written by bed-reader's own writer (to_bed), and every
estimator and measure that takes X gives on the packed calls exactly what it gives on the same
genotypes as a float32 array with NaN for missing calls (bed-reader's read of the file)."""

import os
import warnings

import numpy as np
import pytest
from conftest import mapped_kb
from every_route import assert_same_forest, check_every_route
from sklearn.model_selection import train_test_split

from pyinterp import LSSFind, RandomForestRegressor, _core
from pyinterp import importance as imp
from pyinterp._validation import mapped_file
from pyinterp.io import PackedGenotypes, read_plink

bed_reader = pytest.importorskip("bed_reader", reason="bed-reader (the test extras) writes and reads the .bed files")


def genotypes(n, p, seed, missing=0.03):
    rng = np.random.default_rng(seed)
    G = rng.binomial(2, rng.uniform(0.05, 0.5, p), size=(n, p)).astype(np.float32)
    G[rng.random((n, p)) < missing] = np.nan
    return G


def write(tmp_path, G, name="g", **properties):
    path = tmp_path / f"{name}.bed"
    n, p = G.shape
    props = {"sid": [f"rs{k}" for k in range(p)], "iid": [f"s{k}" for k in range(n)], **properties}
    bed_reader.to_bed(path, G, properties=props)
    return path


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 130])
@pytest.mark.parametrize("count_a2", [False, True])
def test_calls_decode_as_bed_reader_reads_them(tmp_path, n, count_a2):
    G = genotypes(n, 11, seed=n, missing=0.2)
    G[:, 0] = np.nan  # all missing
    path = write(tmp_path, G)
    X = read_plink(path, count_a2=count_a2)
    expected = bed_reader.open_bed(path, count_A1=not count_a2).read(dtype="float32")
    assert X.shape == (n, 11)
    np.testing.assert_array_equal(np.asarray(X), expected)
    np.testing.assert_array_equal(X.to_numpy(np.float64), expected.astype(np.float64))
    rows = np.arange(n)[::-2]
    np.testing.assert_array_equal(np.asarray(X[rows]), expected[rows])
    assert list(X.variant_ids) == [f"rs{k}" for k in range(11)]
    assert list(X[rows].sample_ids) == [f"s{k}" for k in rows]


def test_fileset_tables_and_names(tmp_path):
    G = genotypes(6, 3, seed=1)
    path = write(tmp_path, G, fid=["f1"] * 6, chromosome=["1", "1", "X"], bp_position=[10, 20, 30],
                 allele_1=["A", "C", "G"], allele_2=["G", "T", "A"], sex=[1, 2, 0, 1, 2, 1])
    for given in (path, tmp_path / "g", tmp_path / "g.bim", str(tmp_path / "g.fam")):
        X = read_plink(given)
        assert list(X.variant_table["chrom"]) == ["1", "1", "X"] and list(X.variant_table["pos"]) == [10, 20, 30]
        assert list(X.variant_table["allele_1"]) == ["A", "C", "G"]
        assert list(X.sample_table["sex"]) == ["1", "2", "0", "1", "2", "1"]
        assert X.variant_table["pos"].dtype == np.int64 and X.variant_table["cm"].dtype == np.float64


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
@pytest.mark.parametrize("count_a2", [False, pytest.param(True, marks=pytest.mark.heavy)])  # one under ASan
def test_every_estimator_and_measure_equals_the_float32_copy(tmp_path, count_a2):
    """Either allele counted (with allele 2, the heterozygous calls once read as missing values
    wherever the core read a value back: thresholds, predictions, every measure)."""
    G = genotypes(203, 40, seed=2)
    G[:, 5] = 1.0  # constant
    G[:, 6] = np.where(np.arange(203) % 2 == 0, np.nan, 2.0)  # one value and missing calls
    rng = np.random.default_rng(0)
    y = 1.0 * (np.nan_to_num(G[:, 0]) == 2) * (np.nan_to_num(G[:, 1]) > 0) + 0.3 * rng.standard_normal(203)
    yc = (y > 0.5).astype(int)
    X = read_plink(write(tmp_path, G), count_a2=count_a2)
    D = bed_reader.open_bed(tmp_path / "g.bed", count_A1=not count_a2).read(dtype="float32")
    check_every_route(X, D, y, yc, X.variant_ids)
    # a subset of the file's samples (repacked by the core) as well
    rows = rng.permutation(203)[:150]
    check_every_route(X[rows], D[rows], y[rows], yc[rows], X.variant_ids)


@pytest.mark.heavy  # the sanitizer job fits packed calls with covariates in test_cli_genotypes.py
@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_covariates_beside_the_calls_equal_the_float64_copy(tmp_path):
    """Packed calls with dense covariates after them: every route equals np.asarray's float64
    matrix (the calls read in place, the covariates as numbers), also on a subset of samples."""
    G = genotypes(181, 30, seed=3)
    rng = np.random.default_rng(1)
    pcs = rng.standard_normal((181, 3))
    y = pcs[:, 0] + 1.0 * (np.nan_to_num(G[:, 0]) == 2) * (np.nan_to_num(G[:, 1]) > 0) + 0.3 * rng.standard_normal(181)
    yc = (y > 0.5).astype(int)
    X = read_plink(write(tmp_path, G)).with_covariates(pcs, names=["PC1", "PC2", "PC3"])
    D = np.asarray(X)
    assert D.dtype == np.float64 and X.shape == (181, 33)
    np.testing.assert_array_equal(D, np.column_stack([G.astype(np.float64), pcs]))
    names = [f"rs{k}" for k in range(30)] + ["PC1", "PC2", "PC3"]
    assert list(X.feature_names) == names
    check_every_route(X, D, y, yc, names)
    rows = rng.permutation(181)[:120]
    check_every_route(X[rows], D[rows], y[rows], yc[rows], names)
    copied = X[rows].copy()
    np.testing.assert_array_equal(np.asarray(copied), D[rows])
    assert list(copied.feature_names) == names
    kw = dict(n_estimators=8, max_features=2, random_state=0)
    a = RandomForestRegressor(always_split_features=["PC1", "PC2", "PC3"], **kw).fit(X, y)
    b = RandomForestRegressor(always_split_features=[30, 31, 32], **kw).fit(D, y)
    assert_same_forest(a, b)
    assert a.feature_importances_[30:].sum() > 0.3


def test_covariate_columns_select_and_check():
    calls = np.array([[0b11100100], [0b00011011]], dtype=np.uint8)
    X = PackedGenotypes(calls, 4, variant_ids=["rs1", "rs2"]).with_covariates(np.arange(8.0).reshape(4, 2))
    assert list(X.feature_names) == ["rs1", "rs2", "c0", "c1"]
    np.testing.assert_array_equal(np.asarray(X[[2, 0], [1, 3]]), np.asarray(X)[[2, 0]][:, [1, 3]])
    assert X[:, [0, 1]]._covariates is None and X[:, [0, 1]].shape == (4, 2)
    with pytest.raises(IndexError, match="covariate columns come after the variants"):
        X[:, [2, 0]]
    np.testing.assert_array_equal(X[1:3, 2:], [[2.0, 3.0], [4.0, 5.0]])
    with pytest.raises(ValueError, match="covariates already"):
        X.with_covariates(np.zeros((4, 1)))
    G = X[:, [0, 1]]
    with pytest.raises(ValueError, match="one row per sample"):
        G[:2].with_covariates(np.zeros((4, 1)))
    with pytest.raises(ValueError, match="finite"):
        G.with_covariates([np.nan, 1, 2, 3])
    with pytest.raises(ValueError, match="not variant IDs"):
        G.with_covariates(np.zeros(4), names=["rs1"])
    assert "and 2 covariates" in repr(X)
    X._covariates = np.zeros((4, 2))  # C order: the core refuses it rather than read it wrongly
    with pytest.raises(ValueError, match="Fortran-ordered float64"):
        RandomForestRegressor(2).fit(X, np.arange(4.0))


def test_calls_are_read_in_place(tmp_path):
    G = genotypes(101, 30, seed=3)
    X = read_plink(write(tmp_path, G))
    assert isinstance(X._calls, np.memmap)
    assert _core.ColumnCodes(X).nbytes == 0
    assert _core.ColumnCodes(X[::2]).nbytes == 30 * ((51 + 3) // 4)  # a subset is repacked, still two bits
    assert _core.ColumnCodes(np.asarray(X)).nbytes == 30 * ((101 + 3) // 4)  # dense genotypes: 2-bit codes too


def test_rows_index_like_an_array(tmp_path):
    G = genotypes(20, 4, seed=4)
    X = read_plink(write(tmp_path, G))
    D = np.asarray(X)
    for key in (slice(3, 15, 4), [-1, 0, 5], np.arange(20) % 3 == 0, np.array([2, 2, 7])):
        np.testing.assert_array_equal(np.asarray(X[key]), D[key])
        np.testing.assert_array_equal(np.asarray(X[key, :]), D[key])
    np.testing.assert_array_equal(np.asarray(X[::2][[1, 3]]), D[::2][[1, 3]])
    for variants in (slice(1, 3), [3, 0], np.array([True, False, False, True]), -1):
        picked = X[::3, variants]
        np.testing.assert_array_equal(np.asarray(picked), D[::3][:, np.atleast_1d(np.arange(4)[variants])])
        np.testing.assert_array_equal(picked.variant_ids, np.atleast_1d(X.variant_ids[variants]))
        np.testing.assert_array_equal(picked.variant_table["pos"], np.atleast_1d(X.variant_table["pos"][variants]))
    assert isinstance(X[:, 1:3]._calls, np.memmap)  # a slice stays in place
    Xa, Xb, ya, yb = train_test_split(X, np.arange(20), random_state=0)
    np.testing.assert_array_equal(np.asarray(Xa), D[ya])
    for bad in ([20], np.ones(3, dtype=bool), [0.5], (slice(None), 4), (slice(None), slice(2, 2)), (0, 1, 2)):
        with pytest.raises(IndexError):
            X[bad]


def test_names_are_checked_as_a_dataframe_s_columns(tmp_path):
    G = genotypes(40, 5, seed=5)
    X = read_plink(write(tmp_path, G))
    forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, np.arange(40.0))
    assert list(forest.feature_names_in_) == [f"rs{k}" for k in range(5)]
    other = read_plink(write(tmp_path, G, name="h", sid=["rs0", "rs1", "rsX", "rs3", "rs4"]))
    with pytest.raises(ValueError, match="column 2 is 'rsX' where fit had 'rs2'"):
        forest.predict(other)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        forest.predict(np.asarray(X))
    plain = RandomForestRegressor(n_estimators=3, random_state=0).fit(np.asarray(X), np.arange(40.0))
    with pytest.warns(UserWarning, match="X has feature names, but RandomForestRegressor was fitted without"):
        plain.predict(X)
    with pytest.raises(ValueError, match="X has 4 features, but RandomForestRegressor is expecting 5"):
        forest.predict(PackedGenotypes(np.zeros((4, 10), np.uint8), 40))
    with pytest.raises(ValueError, match="y"):
        RandomForestRegressor().fit(X, np.arange(39.0))
    with pytest.raises(ValueError, match="requires y to be passed"):
        RandomForestRegressor().fit(X, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forest.predict(X)


def bad_fileset(tmp_path, G=None):
    path = write(tmp_path, genotypes(10, 3, seed=6) if G is None else G)
    return path, path.with_suffix(".bim"), path.with_suffix(".fam")


def test_bad_files_are_named_with_what_was_expected(tmp_path):
    bed, bim, fam = bad_fileset(tmp_path)
    data = bed.read_bytes()
    assert len(data) == 3 + 3 * 3
    bed.write_bytes(data[:-1])
    with pytest.raises(ValueError, match=r"g\.bed: truncated: 11 bytes, but 10 samples \(g\.fam\) x 3 variants"):
        read_plink(bed)
    bed.write_bytes(data + b"\0")
    with pytest.raises(ValueError, match="longer than its .fam and .bim say"):
        read_plink(bed)
    bed.write_bytes(b"PK" + data[2:])
    with pytest.raises(ValueError, match=r"g\.bed: not a PLINK 1 \.bed \(its first bytes are 504b01"):
        read_plink(bed)
    bed.write_bytes(b"")
    with pytest.raises(ValueError, match="first bytes are missing"):
        read_plink(bed)
    bed.write_bytes(data[:2] + b"\0" + data[3:])
    with pytest.raises(ValueError, match="sample-major"):
        read_plink(bed)
    bed.write_bytes(data)
    fam_text = fam.read_text()
    fam.write_text(fam_text + "extra s99 0 0 1\n")
    with pytest.raises(ValueError, match=r"g\.fam, line 11: expected 6 fields \(FID IID father mother sex phenotype\)"):
        read_plink(bed)
    lines = fam_text.splitlines()
    fam.write_text("\n".join(lines[:4] + [lines[2]] + lines[5:]) + "\n")
    with pytest.raises(ValueError, match=r"g\.fam: sample \(FID IID\) '.* s2' on rows 3 and 5"):
        read_plink(bed)
    fam.write_text(fam_text)
    bim_text = bim.read_text().splitlines()
    bim.write_text("\n".join([bim_text[0], bim_text[1].replace("rs1", "rs0"), bim_text[2]]) + "\n")
    with pytest.raises(ValueError, match=r"variant ID 'rs0' on rows 1 and 2.*set-all-var-ids"):
        read_plink(bed)
    fields = bim_text[2].split("\t")
    fields[3] = "12x"
    bim.write_text("\n".join(bim_text[:2] + ["\t".join(fields)]) + "\n")
    with pytest.raises(ValueError, match=r"g\.bim, line 3: base-pair position \(column 4\) must be a number, "
                                         r"got '12x'"):
        read_plink(bed)
    bim.write_text("")
    with pytest.raises(ValueError, match=r"g\.bim: no variants"):
        read_plink(bed)
    bim.unlink()
    with pytest.raises(FileNotFoundError, match=r"g\.bim: no such file"):
        read_plink(bed)


def test_malformed_objects_raise_instead_of_reading_out_of_bounds():
    with pytest.raises(ValueError, match=r"calls must be a uint8 array of shape \(n_variants >= 1, 3\)"):
        PackedGenotypes(np.zeros((2, 2), np.uint8), 9)
    with pytest.raises(ValueError, match="rows must be sample indices in"):
        PackedGenotypes(np.zeros((2, 3), np.uint8), 9, rows=[9])
    with pytest.raises(ValueError, match="variant_ids must have one entry per variant"):
        PackedGenotypes(np.zeros((2, 3), np.uint8), 9, variant_ids=["a"])
    G = PackedGenotypes(np.zeros((2, 3), np.uint8), 9)
    G._rows = np.array([0, 9])  # state changed behind the object's back: the core checks it again
    with pytest.raises(ValueError, match="X's rows must be sample indices of its file"):
        RandomForestRegressor(n_estimators=2).fit(G, [0.0, 1.0])
    G._rows, G._calls = None, np.zeros((2, 2), np.uint8)
    with pytest.raises(ValueError, match=r"n_file_samples \+ 3\) // 4 bytes per variant"):
        RandomForestRegressor(n_estimators=2).fit(G, np.zeros(9))
    with pytest.raises(ValueError, match="copy"):
        np.asarray(PackedGenotypes(np.zeros((2, 3), np.uint8), 9), copy=False)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 131])
def test_pack_counts_gives_the_calls_bed_reader_reads(tmp_path, n):
    from pyinterp.io.packing import pack_counts

    rng = np.random.default_rng(n)
    counts = rng.integers(0, 3, size=(6, n)).astype(np.int8)
    counts[rng.random(counts.shape) < 0.2] = rng.choice([-9, -127, 3, -1])
    expected = np.where((counts >= 0) & (counts <= 2), counts, np.nan).T.astype(np.float32)
    np.testing.assert_array_equal(np.asarray(PackedGenotypes(pack_counts(counts), n)), expected)
    bed_reader.to_bed(tmp_path / "p.bed", expected)  # the same calls through bed-reader's writer
    assert (tmp_path / "p.bed").read_bytes()[3:] == pack_counts(counts).tobytes()
    out = np.zeros((8, (n + 3) // 4), np.uint8)
    pack_counts(counts, out=out[1:7])
    assert not out[0].any() and not out[7].any() and (out[1:7] == pack_counts(counts)).all()
    with pytest.raises(ValueError, match="counts must be a 2-d integer array"):
        pack_counts(counts.astype(float))


def test_tables_follow_selections_and_are_checked():
    calls = np.zeros((3, 2), np.uint8)
    G = PackedGenotypes(calls, 6, variant_table={"pos": np.array([5, 7, 9])},
                        sample_table={"fid": None, "iid": np.array([f"s{i}" for i in range(6)], dtype=object)})
    assert list(G[:, [2, 0]].variant_table["pos"]) == [9, 5]
    assert list(G[[1, 4]].sample_table["iid"]) == [f"s{i}" for i in range(6)]  # the file's samples
    np.testing.assert_array_equal(G[[1, 4]].file_rows, [1, 4])
    with pytest.raises(ValueError, match=r"variant_table\['pos'\] has 2 entries for 3"):
        PackedGenotypes(calls, 6, variant_table={"pos": [1, 2]})


def test_bed_reader_s_int8_missing_code_is_named_not_split_on_silently(tmp_path):
    G = genotypes(60, 5, seed=7, missing=0.1)
    path = write(tmp_path, G)
    int8 = bed_reader.open_bed(path).read(dtype="int8")
    assert int8.min() == -127
    y = np.arange(60.0)
    for fit in (lambda X: RandomForestRegressor(n_estimators=2).fit(X, y), lambda X: imp.dstump(X, y),
                lambda X: LSSFind(n_estimators=2).fit(X, y)):
        with pytest.warns(UserWarning, match="holds -127, bed-reader's code for a missing genotype call"):
            fit(int8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RandomForestRegressor(n_estimators=2).fit(np.where(int8 < 0, 0, int8), y)
        RandomForestRegressor(n_estimators=2).fit(read_plink(path), y)


def test_a_bed_cut_short_after_it_was_opened_is_refused_not_read(tmp_path):
    G = genotypes(50, 8, seed=8)
    path = write(tmp_path, G)
    X = read_plink(path)
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, np.arange(50.0))
    with open(path, "r+b") as f:  # truncated in place: the mapped pages past its end would be SIGBUS
        f.truncate(3 + 8 * 13 - 20)
    for call in (lambda: forest.predict(X), lambda: RandomForestRegressor(n_estimators=2).fit(X, np.arange(50.0)),
                 lambda: np.asarray(X), lambda: imp.dstump(X, np.arange(50.0))):
        with pytest.raises(ValueError, match=r"g\.bed: 87 bytes now, 107 when it was opened"):
            call()
    other = read_plink(write(tmp_path, G, name="h"))
    before = RandomForestRegressor(n_estimators=2, random_state=0).fit(other, np.arange(50.0))
    (tmp_path / "h.bed").unlink()  # deleted, not cut short: the mapped file stays readable
    assert_same_forest(RandomForestRegressor(n_estimators=2, random_state=0).fit(other, np.arange(50.0)), before)


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="reads /proc/self/smaps")
def test_a_subset_of_samples_is_read_with_pread_not_through_the_map(tmp_path):
    """A subset's fit, copies (of a subset: repacked) and a selection of variants read the .bed with
    pread, so none of its pages become the process's, and they equal the reads through the map."""
    G = genotypes(90, 300, seed=9)
    path = write(tmp_path, G)
    X = read_plink(path)
    rows = np.random.default_rng(0).permutation(90)[:61]
    y = np.nan_to_num(G[rows, 3]) + np.arange(61) % 3
    forest = RandomForestRegressor(n_estimators=3, max_features=50, random_state=0).fit(X[rows], y)
    picked = np.array([0, 1, 2, 7, 7, 299, 150, 151])  # runs, a repeat, the file's last variant
    taken = X[rows][:, picked]
    compact = X[rows].copy(n_jobs=2)
    whole = X.copy()
    predicted = forest.predict(compact)  # a copy is read in memory, not through the map
    assert mapped_kb(path) == 0
    np.testing.assert_array_equal(predicted, forest.predict(G[rows]))
    assert_same_forest(forest, RandomForestRegressor(n_estimators=3, max_features=50, random_state=0)
                       .fit(G[rows], y))
    np.testing.assert_array_equal(taken._calls, np.asarray(X._calls)[picked])
    np.testing.assert_array_equal(np.asarray(X[:, ::2][:, [0, 3, 4]]), G[:, [0, 6, 8]])  # variants apart in the file
    assert compact._rows is None and compact._calls.shape == (300, (61 + 3) // 4)
    np.testing.assert_array_equal(np.asarray(compact), G[rows])
    np.testing.assert_array_equal(compact.sample_ids, X.sample_ids[rows])
    np.testing.assert_array_equal(compact.sample_table["iid"], X.sample_table["iid"][rows])
    assert_same_forest(forest, RandomForestRegressor(n_estimators=3, max_features=50, random_state=0).fit(compact, y))
    assert not isinstance(whole._calls, np.memmap) and whole._mapped_file is None
    np.testing.assert_array_equal(np.asarray(whole), G)
    np.testing.assert_array_equal(whole.sample_ids, X.sample_ids)
    again = compact.copy()
    assert again._calls is not compact._calls
    np.testing.assert_array_equal(again._calls, compact._calls)


def test_a_subsets_repacked_calls_beyond_the_memory_budget_go_to_a_file(tmp_path, monkeypatch):
    """The calls a subset of samples is repacked into are codes too: past PYINTERP_CODES_MEMORY
    they go to a file in TMPDIR (code_arena.hpp), with the same trees."""
    G = genotypes(90, 300, seed=9)
    X = read_plink(write(tmp_path, G))
    rows = np.random.default_rng(1).permutation(90)[:61]
    y = np.nan_to_num(G[rows, 3]) + np.arange(61) % 3
    kw = dict(n_estimators=3, max_features=50, random_state=0)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("PYINTERP_CODES_MEMORY", "0")
    codes = _core.ColumnCodes(X[rows], 1, mapped_file(X[rows]))
    assert codes.file_bytes == codes.nbytes == 300 * ((61 + 3) // 4)
    assert_same_forest(RandomForestRegressor(**kw).fit(X[rows], y), RandomForestRegressor(**kw).fit(G[rows], y))


def test_a_bed_replaced_at_its_path_is_still_read_from_the_mapped_file(tmp_path):
    """pread opens the path: after another file took it, the subset's reads go through the map,
    which holds the file the genotypes were read from."""
    G = genotypes(40, 12, seed=10)
    path = write(tmp_path, G)
    X = read_plink(path)
    rows = np.arange(0, 40, 3)
    write(tmp_path, genotypes(40, 12, seed=11), name="other")
    os.replace(tmp_path / "other.bed", path)
    assert X[rows]._calls_position() is None
    np.testing.assert_array_equal(np.asarray(X[rows][:, [4, 1]]), G[rows][:, [4, 1]])
    y = np.arange(len(rows), dtype=float)
    assert_same_forest(RandomForestRegressor(n_estimators=2, random_state=0).fit(X[rows], y),
                       RandomForestRegressor(n_estimators=2, random_state=0).fit(G[rows], y))
