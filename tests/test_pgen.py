"""pyinterp.io.read_pgen: PLINK 2 filesets written by pgenlib's own writer from known
ALT counts, with hand-written .pvar / .psam in each layout PLINK 2 reads, decode to those counts;
fits on them equal fits on their float32 copy; plink2 (when installed) agrees through --make-bed;
and every malformed input is refused by a message naming the file and line."""

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pgenlib = pytest.importorskip("pgenlib", reason="pgenlib (pip install pgenlib) writes and reads the .pgen files")

from pyinterp import RandomForestRegressor  # noqa: E402
from pyinterp.io import pgen, read_pgen, read_plink  # noqa: E402

from every_route import assert_same_forest  # noqa: E402

PLINK2 = shutil.which("plink2")
needs_plink2 = pytest.mark.skipif(PLINK2 is None, reason="plink2 is not installed (apt-get install plink2)")


# ---------------------------------------------------------------- writing filesets


def alt_counts(p, n, seed, missing=0.2):
    """(p, n) int8 ALT counts with -9 for missing calls; variant 0 all missing."""
    rng = np.random.default_rng(seed)
    counts = rng.binomial(2, rng.uniform(0.05, 0.6, (p, 1)), size=(p, n)).astype(np.int8)
    counts[rng.random((p, n)) < missing] = -9
    counts[0] = -9
    return counts


def expected(counts):
    """The float32 samples x variants matrix of ALT counts, NaN for missing."""
    return np.where((counts >= 0) & (counts <= 2), counts, np.nan).astype(np.float32).T


def write_pgen(prefix, counts):
    p, n = counts.shape
    writer = pgenlib.PgenWriter(os.fsencode(f"{prefix}.pgen"), n, variant_ct=p, nonref_flags=False)
    writer.append_biallelic_batch(np.ascontiguousarray(counts, dtype=np.int8))
    writer.close()


def write_lines(path, lines):
    Path(path).write_text("".join(line + "\n" for line in lines))


def variant_rows(p):
    """Each variant's columns by name."""
    return [{"CHROM": str(1 + k // 5), "POS": str(1000 * (k + 1)), "ID": f"rs{k}", "REF": "ACGT"[k % 4],
             "ALT": "CGTA"[k % 4], "CM": f"{0.01 * k:g}", "QUAL": ".", "FILTER": "PASS", "INFO": f"AF=0.{k}"}
            for k in range(p)]


def pvar_lines(rows, columns=("CHROM", "POS", "ID", "REF", "ALT"), header=True, meta=()):
    lines = list(meta)
    if header:
        lines.append("#" + "\t".join(columns))
    return lines + ["\t".join(row[c] for c in columns) for row in rows]


def psam_lines(n, header="#FID IID SEX", meta=()):
    lines = list(meta)
    values = {"FID": lambda k: f"fam{k // 3}", "IID": lambda k: f"s{k}", "SID": lambda k: "x",
              "PAT": lambda k: "0", "MAT": lambda k: "0", "SEX": lambda k: "12"[k % 2],
              "PHENO1": lambda k: f"{k / 10:g}"}
    if header is None:  # a .fam's columns
        names = ("FID", "IID", "PAT", "MAT", "SEX", "PHENO1")
    else:
        names = header.lstrip("#").split()
        lines.append("\t".join(header.split()))
    return lines + ["\t".join(values[name](k) for name in names) for k in range(n)]


def fileset(tmp_path, counts, name="g", pvar=None, psam=None):
    """A .pgen of these counts with a .pvar and .psam (default: header lines, FID IID SEX)."""
    prefix = tmp_path / name
    p, n = counts.shape
    write_pgen(prefix, counts)
    write_lines(f"{prefix}.pvar", pvar if pvar is not None else pvar_lines(variant_rows(p)))
    write_lines(f"{prefix}.psam", psam if psam is not None else psam_lines(n))
    return prefix


# ---------------------------------------------------------------- reading what was written


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 130])
def test_calls_are_the_written_alt_counts(tmp_path, n):
    counts = alt_counts(11, n, seed=n)
    G = read_pgen(fileset(tmp_path, counts))
    assert G.shape == (n, 11)
    np.testing.assert_array_equal(np.asarray(G), expected(counts))
    np.testing.assert_array_equal(G.to_numpy(np.float64), expected(counts).astype(np.float64))
    assert np.isnan(np.asarray(G)[:, 0]).all()
    assert list(G.variant_ids) == [f"rs{k}" for k in range(11)]
    assert list(G.sample_ids) == [f"s{k}" for k in range(n)]
    rows = np.arange(n)[::-2]
    np.testing.assert_array_equal(np.asarray(G[rows]), expected(counts)[rows])
    table = G.variant_table
    assert list(table["allele_1"]) == ["CGTA"[k % 4] for k in range(11)]  # ALT is counted
    assert list(table["allele_2"]) == ["ACGT"[k % 4] for k in range(11)]
    assert table["pos"].dtype == np.int64 and list(table["pos"]) == [1000 * (k + 1) for k in range(11)]
    assert all(column.dtype == object for key, column in table.items() if key != "pos")


@pytest.mark.parametrize("block_variants, block_calls", [(3, 1 << 21), (2000, 10), (4, 40), (1, 1), (11, 1 << 21)])
def test_blocks_of_every_size_give_the_same_calls(tmp_path, monkeypatch, block_variants, block_calls):
    counts = alt_counts(11, 13, seed=4)
    monkeypatch.setattr(pgen, "_BLOCK_VARIANTS", block_variants)
    monkeypatch.setattr(pgen, "_BLOCK_CALLS", block_calls)
    np.testing.assert_array_equal(np.asarray(read_pgen(fileset(tmp_path, counts))), expected(counts))


PVAR_LAYOUTS = {
    "header": dict(columns=("CHROM", "POS", "ID", "REF", "ALT")),
    "vcf-like": dict(columns=("CHROM", "POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO"),
                     meta=("##fileformat=VCFv4.3", "##contig=<ID=1,length=248956422>", "##INFO=<ID=AF,Number=A>")),
    "reordered, with CM": dict(columns=("CHROM", "ID", "REF", "ALT", "POS", "CM", "INFO")),
    "other # lines": dict(columns=("CHROM", "POS", "ID", "REF", "ALT"), meta=("# made by hand", "#CHROMOSOME x")),
    "bim order": dict(columns=("CHROM", "ID", "CM", "POS", "ALT", "REF"), header=False),
    "bim order, no CM": dict(columns=("CHROM", "ID", "POS", "ALT", "REF"), header=False),
    "bim order after # lines": dict(columns=("CHROM", "ID", "CM", "POS", "ALT", "REF"), header=False,
                                    meta=("## a comment",)),
}


@pytest.mark.parametrize("layout", PVAR_LAYOUTS)
def test_pvar_layouts(tmp_path, layout):
    counts = alt_counts(7, 6, seed=1)
    rows = variant_rows(7)
    G = read_pgen(fileset(tmp_path, counts, pvar=pvar_lines(rows, **PVAR_LAYOUTS[layout])))
    np.testing.assert_array_equal(np.asarray(G), expected(counts))
    table = G.variant_table
    assert list(table["chrom"]) == [r["CHROM"] for r in rows]
    assert list(table["id"]) == list(G.variant_ids) == [r["ID"] for r in rows]
    assert list(table["pos"]) == [int(r["POS"]) for r in rows]
    assert list(table["allele_1"]) == [r["ALT"] for r in rows]
    assert list(table["allele_2"]) == [r["REF"] for r in rows]
    if "CM" in PVAR_LAYOUTS[layout]["columns"]:
        np.testing.assert_array_equal(table["cm"], [float(r["CM"]) for r in rows])
    else:
        assert "cm" not in table
    assert set(table) <= {"chrom", "id", "pos", "allele_1", "allele_2", "cm"}


def test_pvar_columns_after_format_and_unknown_columns_are_ignored(tmp_path):
    counts = alt_counts(3, 4, seed=2)
    lines = ["#CHROM\tPOS\tID\tREF\tALT\tEXTRA\tFORMAT\tPOS"]  # a VCF's sample named POS after FORMAT
    lines += [f"2\t{k + 5}\tv{k}\tA\tT\tz\tGT\t0/1" for k in range(3)]
    G = read_pgen(fileset(tmp_path, counts, pvar=lines))
    assert list(G.variant_table["pos"]) == [5, 6, 7] and list(G.variant_ids) == ["v0", "v1", "v2"]


def test_dot_ids_become_chrom_pos_ref_alt(tmp_path):
    counts = alt_counts(3, 4, seed=2)
    lines = ["#CHROM\tPOS\tID\tREF\tALT", "1\t10\t.\tA\tG", "1\t10\trs9\tA\tT", "X\t7\t.\tAC\t."]
    G = read_pgen(fileset(tmp_path, counts, pvar=lines))
    assert list(G.variant_ids) == ["1:10:A:G", "rs9", "X:7:AC:."]
    assert list(G.variant_table["id"]) == list(G.variant_ids)


PSAM_LAYOUTS = {
    "#FID IID SEX": ("#FID IID SEX", (), ["fid", "iid", "sex"]),
    "#IID SEX": ("#IID SEX", (), ["fid", "iid", "sex"]),
    "#IID": ("#IID", (), ["fid", "iid"]),
    "#FID IID PAT MAT SEX PHENO1 after ## lines": ("#FID IID PAT MAT SEX PHENO1", ("##source=hand", "# note"),
                                                   ["fid", "iid", "pat", "mat", "sex", "pheno1"]),
    "#IID SID SEX": ("#IID SID SEX", (), ["fid", "iid", "sid", "sex"]),
    ".fam columns": (None, (), ["fid", "iid", "pat", "mat", "sex", "pheno1"]),
}


@pytest.mark.parametrize("layout", PSAM_LAYOUTS)
def test_psam_layouts(tmp_path, layout):
    header, meta, keys = PSAM_LAYOUTS[layout]
    n = 7
    counts = alt_counts(4, n, seed=3)
    G = read_pgen(fileset(tmp_path, counts, psam=psam_lines(n, header, meta)))
    np.testing.assert_array_equal(np.asarray(G), expected(counts))
    table = G.sample_table
    assert list(table) == keys
    assert list(G.sample_ids) == list(table["iid"]) == [f"s{k}" for k in range(n)]
    has_fid = header is None or header.startswith("#FID")
    if has_fid:
        assert list(table["fid"]) == [f"fam{k // 3}" for k in range(n)]
    else:
        assert table["fid"] is None
    if "sex" in table:
        assert list(table["sex"]) == ["12"[k % 2] for k in range(n)]
    assert all(column.dtype == object for column in table.values() if column is not None)


def test_psam_phenotype_names_are_lower_case_and_a_clash_keeps_its_spelling(tmp_path):
    counts = alt_counts(2, 3, seed=0)
    lines = ["#IID\tSEX\tHeight\tSex\tfid", "a\t1\t1.7\tm\tx", "b\t2\t1.6\tf\ty", "c\tNA\tNA\tNA\tz"]
    G = read_pgen(fileset(tmp_path, counts, psam=lines))
    table = G.sample_table
    assert table["fid"] is None
    assert list(table["height"]) == ["1.7", "1.6", "NA"] and list(table["sex"]) == ["1", "2", "NA"]
    assert list(table["Sex"]) == ["m", "f", "NA"] and list(table["fid_5"]) == ["x", "y", "z"]


def test_same_iid_in_two_families_or_with_two_sids_is_two_samples(tmp_path):
    counts = alt_counts(2, 2, seed=0)
    G = read_pgen(fileset(tmp_path, counts, psam=["#FID\tIID", "f1\ts1", "f2\ts1"]))
    assert list(G.sample_ids) == ["s1", "s1"] and list(G.sample_table["fid"]) == ["f1", "f2"]
    G = read_pgen(fileset(tmp_path, counts, psam=["#IID\tSID", "s1\ta", "s1\tb"]))
    assert list(G.sample_table["sid"]) == ["a", "b"]


def test_paths(tmp_path):
    counts = alt_counts(3, 5, seed=6)
    prefix = fileset(tmp_path, counts, name="my.data.v2")
    for given in (prefix, str(prefix), Path(f"{prefix}.pgen"), f"{prefix}.pvar", Path(f"{prefix}.psam")):
        G = read_pgen(given)
        np.testing.assert_array_equal(np.asarray(G), expected(counts))


def test_pgenlib_dosages_read_as_their_hardcalls(tmp_path):
    dosages = np.array([[0.0, 0.05, 0.1, 0.11, 0.5, 0.9, 1.0, 1.1, 1.11, 1.5, 1.9, 1.95, 2.0, -9.0]])
    n = dosages.shape[1]
    prefix = tmp_path / "dos"
    writer = pgenlib.PgenWriter(os.fsencode(f"{prefix}.pgen"), n, variant_ct=1, nonref_flags=False,
                                dosage_present=True)
    writer.append_dosages(dosages[0])
    writer.close()
    write_lines(f"{prefix}.pvar", pvar_lines(variant_rows(1)))
    write_lines(f"{prefix}.psam", psam_lines(n))
    G = read_pgen(prefix)
    nan = np.nan  # within 0.1 of a count: that count; farther: missing
    np.testing.assert_array_equal(np.asarray(G)[:, 0], [0, 0, 0, nan, nan, 1, 1, 1, nan, nan, 2, 2, 2, nan])


# ---------------------------------------------------------------- fits


def test_forest_on_packed_calls_equals_forest_on_float32_copy(tmp_path):
    n, p = 157, 30
    counts = alt_counts(p, n, seed=9, missing=0.05)
    counts[5] = 1  # constant
    G = read_pgen(fileset(tmp_path, counts))
    D = np.asarray(G)
    filled = np.nan_to_num(D)
    y = filled[:, 1] + 2 * filled[:, 2] * filled[:, 3] + np.random.default_rng(0).normal(0, 0.3, n)
    kw = dict(n_estimators=10, random_state=0, max_features=0.5)
    a, b = RandomForestRegressor(**kw).fit(G, y), RandomForestRegressor(**kw).fit(D, y)
    assert_same_forest(a, b)
    assert list(a.feature_names_in_) == [f"rs{k}" for k in range(p)]
    np.testing.assert_array_equal(a.predict(G), b.predict(D))
    np.testing.assert_array_equal(a.predict(G[::3]), b.predict(D[::3]))
    assert max(t.node_count for t in a.trees_) > 5  # the trees split


# ---------------------------------------------------------------- plink2 agrees


def plink2(*args, cwd):
    done = subprocess.run([PLINK2, *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@needs_plink2
@pytest.mark.parametrize("n", [1, 5, 130])
@pytest.mark.parametrize("layouts", ["headers", "bim and fam order"])
def test_plink2_make_bed_reads_the_same(tmp_path, n, layouts):
    counts = alt_counts(23, n, seed=n)
    rows = variant_rows(23)
    if layouts == "headers":
        prefix = fileset(tmp_path, counts, pvar=pvar_lines(rows, ("CHROM", "POS", "ID", "REF", "ALT", "CM")))
    else:
        prefix = fileset(tmp_path, counts, pvar=pvar_lines(rows, ("CHROM", "ID", "CM", "POS", "ALT", "REF"), False),
                         psam=psam_lines(n, None))
    plink2("--pfile", prefix.name, "--make-bed", "--out", "bed", cwd=tmp_path)
    G, B = read_pgen(prefix), read_plink(tmp_path / "bed")
    np.testing.assert_array_equal(np.asarray(G), np.asarray(B))
    np.testing.assert_array_equal(np.asarray(G), expected(counts))
    for key in ("chrom", "id", "pos", "allele_1", "allele_2", "cm"):
        np.testing.assert_array_equal(G.variant_table[key], B.variant_table[key], err_msg=key)
    assert list(G.sample_ids) == list(B.sample_ids)
    np.testing.assert_array_equal(G.sample_table["fid"], B.sample_table["fid"])
    np.testing.assert_array_equal(G.sample_table["sex"], B.sample_table["sex"])


@needs_plink2
def test_plink2_dosage_import_reads_as_its_hardcalls(tmp_path):
    ds = [["0.05", "0.5", "1.08", "1.2", "1.95", "."], ["2", "0", "0.11", "0.1", "1.89", "1"]]
    vcf = ["##fileformat=VCFv4.2", '##FORMAT=<ID=DS,Number=A,Type=Float,Description="dosage">',
           "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ta\tb\tc\td\te\tf"]
    vcf += [f"1\t{100 * (k + 1)}\td{k}\tA\tG\t.\t.\t.\tDS\t" + "\t".join(row) for k, row in enumerate(ds)]
    write_lines(tmp_path / "ds.vcf", vcf)
    plink2("--vcf", "ds.vcf", "dosage=DS", "--make-pgen", "--out", "ds", cwd=tmp_path)
    plink2("--pfile", "ds", "--make-bed", "--out", "ds_bed", cwd=tmp_path)
    G = read_pgen(tmp_path / "ds")
    nan = np.nan
    np.testing.assert_array_equal(np.asarray(G).T, [[0, nan, 1, nan, 2, nan], [2, 0, nan, 0, nan, 1]])
    np.testing.assert_array_equal(np.asarray(G), np.asarray(read_plink(tmp_path / "ds_bed")))


def write_multiallelic(tmp_path):
    """m1 REF G, ALT A,T: samples 0/1, 2/2, ./. ; m2 biallelic: 0/0, 0/1, 1/1."""
    prefix = tmp_path / "ma"
    writer = pgenlib.PgenWriter(os.fsencode(f"{prefix}.pgen"), 3, variant_ct=2, nonref_flags=False,
                                allele_ct_limit=3)
    codes = np.array([[0, 1, 2, 2, -9, -9], [0, 0, 0, 1, 1, 1]], dtype=np.int32)
    writer.append_alleles_batch(codes, allele_cts=np.array([3, 2], dtype=np.uint32))
    writer.close()
    write_lines(f"{prefix}.pvar", ["#CHROM\tPOS\tID\tREF\tALT", "1\t10\tm1\tG\tA,T", "1\t20\tm2\tC\tT"])
    write_lines(f"{prefix}.psam", ["#IID", "s1", "s2", "s3"])
    return prefix


def test_multiallelic_variants_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match=r"ma\.pvar, line 2: variant 'm1' is multi-allelic \(ALT 'A,T'; 1 such "
                                         r"variant in all\).*multiallelics=-.*--max-alleles 2"):
        read_pgen(write_multiallelic(tmp_path))


@needs_plink2
def test_plink2_refuses_them_too_and_its_split_reads_per_alt(tmp_path):
    prefix = write_multiallelic(tmp_path)
    done = subprocess.run([PLINK2, "--pfile", "ma", "--make-bed", "--out", "mb"], cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode != 0 and "cannot contain multiallelic variants" in done.stdout + done.stderr
    plink2("--pfile", prefix.name, "--make-pgen", "multiallelics=-", "--out", "split", cwd=tmp_path)
    G = read_pgen(tmp_path / "split")
    assert list(G.variant_ids) == ["1:10:G:A", "1:10:G:T", "m2"]
    nan = np.nan
    np.testing.assert_array_equal(np.asarray(G).T, [[1, 0, nan], [0, 2, nan], [0, 1, 2]])


# ---------------------------------------------------------------- refusals


def test_count_mismatches_name_both_files(tmp_path):
    counts = alt_counts(6, 5, seed=0)
    prefix = fileset(tmp_path, counts, pvar=pvar_lines(variant_rows(5)))
    with pytest.raises(ValueError, match=r"g\.pgen: 6 variants, but g\.pvar lists 5; the \.pvar must have one row"):
        read_pgen(prefix)
    prefix = fileset(tmp_path, counts, psam=psam_lines(7))
    with pytest.raises(ValueError, match=r"g\.pgen: 5 samples, but g\.psam lists 7; the \.psam must have one row"):
        read_pgen(prefix)


def test_garbage_and_truncated_pgen_name_the_file(tmp_path):
    counts = alt_counts(40, 50, seed=0)
    prefix = fileset(tmp_path, counts)
    whole = Path(f"{prefix}.pgen").read_bytes()
    Path(f"{prefix}.pgen").write_bytes(b"not a pgen at all, just text " * 4)
    with pytest.raises(ValueError, match=r"g\.pgen: not a readable \.pgen \(.*magic number"):
        read_pgen(prefix)
    Path(f"{prefix}.pgen").write_bytes(whole[:7])
    with pytest.raises(ValueError, match=r"g\.pgen: not a readable \.pgen \(.*too small"):
        read_pgen(prefix)
    Path(f"{prefix}.pgen").write_bytes(whole[:-30])
    with pytest.raises(ValueError, match=r"g\.pgen: reading variants 1 to 40 of 40 failed \(.*\); the file is "
                                         r"truncated or damaged"):
        read_pgen(prefix)
    Path(f"{prefix}.pgen").write_bytes(b"")
    with pytest.raises(ValueError, match=r"g\.pgen: not a readable \.pgen"):
        read_pgen(prefix)


HEADER = "#CHROM\tPOS\tID\tREF\tALT"
BAD_PVARS = {
    "short line": ([HEADER, "1\t10\trs0\tA\tG", "1\t20\trs1\tA"],
                   r"g\.pvar, line 3: expected 5 fields \(#CHROM POS ID REF ALT\), got 4: '1\\t20\\trs1\\tA'"),
    "long line": ([HEADER, "1\t10\trs0\tA\tG", "1\t20\trs1\tA\tG\t.\t."], r"g\.pvar, line 3: expected 5 fields"),
    "position not a number": ([HEADER, "1\t10\trs0\tA\tG", "1\t2e5\trs1\tA\tG"],
                              r"g\.pvar, line 3: POS must be an integer \(a base-pair position\), got '2e5'"),
    "no REF column": (["#CHROM\tPOS\tID\tALT", "1\t10\trs0\tG", "1\t20\trs1\tG"],
                      r"g\.pvar, line 1: the #CHROM header line has no REF column; POS, ID, REF and ALT are required"),
    "column twice": (["#CHROM\tPOS\tID\tREF\tALT\tPOS", "1\t10\trs0\tA\tG\t10", "1\t20\trs1\tA\tG\t20"],
                     r"g\.pvar, line 1: column POS named twice"),
    "# line after the rows": ([HEADER, "1\t10\trs0\tA\tG", "#CHROM\tPOS\tID\tREF\tALT", "1\t20\trs1\tA\tG"],
                              r"g\.pvar, line 3: starts with '#' after the header line"),
    "bim order with 4 fields": (["1\trs0\t10\tA", "1\trs1\t20\tA"],
                                r"g\.pvar, line 1: expected 6 fields \(a \.pvar without a #CHROM header line has a "
                                r"\.bim's columns: CHROM ID CM POS ALT REF\) or 5"),
    "bim order, fields change": (["1\trs0\t0\t10\tA\tG", "1\trs1\t20\tA\tG"],
                                 r"g\.pvar, line 2: expected 6 fields \(no #CHROM line, so a \.bim's columns"),
    "cM not a number": (["1\trs0\tzero\t10\tA\tG", "1\trs1\t0\t20\tA\tG"],
                        r"g\.pvar, line 1: CM must be a number \(a centimorgan position\), got 'zero'"),
    "duplicate ID": (["##x", HEADER, "1\t10\trs0\tA\tG", "1\t20\trs0\tA\tG"],
                     r"g\.pvar: variant ID 'rs0' on lines 3 and 4; IDs must be unique \(plink2 --set-all-var-ids"),
    "duplicate made ID": ([HEADER, "1\t10\t.\tA\tG", "1\t10\t1:10:A:G\tA\tG"],
                          r"g\.pvar: variant ID '1:10:A:G' \(made from CHROM:POS:REF:ALT for an ID of '\.'\) on "
                          r"lines 2 and 3"),
    "multi-allelic": ([HEADER, "1\t10\trs0\tA\tG", "1\t20\trs1\tA\tG,T"],
                      r"g\.pvar, line 3: variant 'rs1' is multi-allelic \(ALT 'G,T'; 1 such variant in all\)"),
    "no variants": (["##fileformat=VCFv4.3", HEADER], r"g\.pvar: no variants"),
}


@pytest.mark.parametrize("case", BAD_PVARS)
def test_bad_pvar_lines_are_refused_by_file_and_line(tmp_path, case):
    lines, message = BAD_PVARS[case]
    with pytest.raises(ValueError, match=message):
        read_pgen(fileset(tmp_path, alt_counts(2, 3, seed=0), pvar=lines))


BAD_PSAMS = {
    "short line": (["#FID\tIID\tSEX", "f\ta\t1", "f\tb", "f\tc\t2"],
                   r"g\.psam, line 3: expected 3 fields \(#FID IID SEX\), got 2: 'f\\tb'"),
    ".fam with 5 fields": (["f a 0 0 1 -9", "f b 0 0 2", "f c 0 0 1 -9"],
                           r"g\.psam, line 2: expected 6 fields \(no #FID or #IID header line, so a \.fam's columns"),
    "no IID column": (["#FID\tSEX", "f\t1", "f\t2", "f\t1"], r"g\.psam, line 1: the header line has no IID column"),
    "FID not first": (["#IID\tFID", "a\tf", "b\tf", "c\tf"], r"g\.psam, line 1: FID must be the first column"),
    "column twice": (["#IID\tSEX\tSEX", "a\t1\t1", "b\t1\t1", "c\t1\t1"], r"g\.psam, line 1: column SEX named twice"),
    "IID 0": (["#IID", "a", "0", "c"], r"g\.psam, line 3: IID '0' is not a sample ID"),
    "# line after the rows": (["#IID", "a", "#IID", "b", "c"], r"g\.psam, line 3: starts with '#' after the header"),
    "duplicate FID IID": (["##c", "#FID\tIID", "f1\ta", "f2\ta", "f1\ta"],
                          r"g\.psam: sample \(FID, IID\) 'f1 a' on lines 3 and 5; sample IDs must be unique"),
    "duplicate IID": (["#IID\tSEX", "a\t1", "b\t1", "b\t2"], r"g\.psam: sample \(IID\) 'b' on lines 3 and 4"),
    "duplicate IID SID": (["#IID\tSID", "a\tx", "a\ty", "a\tx"],
                          r"g\.psam: sample \(IID, SID\) 'a x' on lines 2 and 4"),
    "duplicate in .fam": (["f a 0 0 1 -9", "f b 0 0 2 -9", "f a 0 0 1 -9"],
                          r"g\.psam: sample \(FID, IID\) 'f a' on lines 1 and 3"),
    "no samples": (["#IID\tSEX"], r"g\.psam: no samples"),
}


@pytest.mark.parametrize("case", BAD_PSAMS)
def test_bad_psam_lines_are_refused_by_file_and_line(tmp_path, case):
    lines, message = BAD_PSAMS[case]
    with pytest.raises(ValueError, match=message):
        read_pgen(fileset(tmp_path, alt_counts(2, 3, seed=0), psam=lines))


@pytest.mark.parametrize("missing", [".pgen", ".pvar", ".psam"])
def test_missing_files_are_named(tmp_path, missing):
    prefix = fileset(tmp_path, alt_counts(2, 3, seed=0))
    os.remove(f"{prefix}{missing}")
    with pytest.raises(FileNotFoundError, match=rf"g\{missing}: no such file \(a PLINK 2 fileset is a \.pgen"):
        read_pgen(prefix)


def test_a_missing_pvar_beside_a_bim_says_how_to_read_it(tmp_path):
    counts = alt_counts(2, 3, seed=0)
    prefix = fileset(tmp_path, counts)
    os.rename(f"{prefix}.pvar", f"{prefix}.bim")
    with pytest.raises(FileNotFoundError, match=r"there is a g\.bim: .*copied to g\.pvar"):
        read_pgen(prefix)
    shutil.copy(f"{prefix}.bim", f"{prefix}.pvar")  # its #CHROM header reads either way
    np.testing.assert_array_equal(np.asarray(read_pgen(prefix)), expected(counts))


def zstd_compress(path):
    if shutil.which("zstd"):
        subprocess.run(["zstd", "-q", "--rm", str(path)], check=True)
    else:
        zstandard = pytest.importorskip("zstandard", reason="neither zstd nor zstandard compresses the .pvar")
        Path(f"{path}.zst").write_bytes(zstandard.ZstdCompressor().compress(Path(path).read_bytes()))
        os.remove(path)
    return Path(f"{path}.zst")


def test_zstd_pvar_without_zstandard_is_refused_with_what_to_do(tmp_path, monkeypatch):
    prefix = fileset(tmp_path, alt_counts(2, 3, seed=0))
    packed = zstd_compress(f"{prefix}.pvar")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard raises ImportError
    for given in (prefix, packed):
        with pytest.raises(ValueError, match=r"g\.pvar\.zst: compressed with zstd, which needs the zstandard package "
                                             r"\(pip install zstandard\); or decompress it first: zstd -d "):
            read_pgen(given)


def test_zstd_pvar_is_read_with_zstandard(tmp_path):
    pytest.importorskip("zstandard", reason="zstandard reads .pvar.zst")
    counts = alt_counts(5, 6, seed=0)
    prefix = fileset(tmp_path, counts)
    packed = zstd_compress(f"{prefix}.pvar")
    for given in (prefix, packed):
        G = read_pgen(given)
        np.testing.assert_array_equal(np.asarray(G), expected(counts))
        assert list(G.variant_ids) == [f"rs{k}" for k in range(5)]


def test_gzip_pvar_is_read(tmp_path):
    counts = alt_counts(5, 6, seed=0)
    prefix = fileset(tmp_path, counts)
    text = Path(f"{prefix}.pvar").read_bytes()
    with gzip.open(f"{prefix}.pvar", "wb") as f:
        f.write(text)
    assert list(read_pgen(prefix).variant_ids) == [f"rs{k}" for k in range(5)]


def test_without_pgenlib_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    prefix = fileset(tmp_path, alt_counts(2, 3, seed=0))
    monkeypatch.setitem(sys.modules, "pgenlib", None)
    with pytest.raises(ImportError, match=r"pip install pgenlib"):
        read_pgen(prefix)
