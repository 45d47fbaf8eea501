"""pyinterp.io.read_vcf: VCF text written here with known GT strings, read as .vcf, gzip and
bgzip .vcf.gz and .bcf, and compared with ALT counts worked out here from those strings (NaN missing);
a forest fitted on the packed calls equals one fitted on their float32 copy, tree for tree."""

import gzip
import re
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

cyvcf2 = pytest.importorskip("cyvcf2", reason="cyvcf2 (MIT, htslib) reads VCF and BCF files; pip install cyvcf2")

from pyinterp import RandomForestRegressor  # noqa: E402

from pyinterp.io import read_vcf  # noqa: E402
from pyinterp.io import vcf as vcf_module  # noqa: E402

from every_route import assert_same_forest  # noqa: E402

HEADER = ("##fileformat=VCFv4.2\n##contig=<ID=1>\n##contig=<ID=2>\n##contig=<ID=X>\n"
          '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
          '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Read depth">\n')


def write_vcf(path, samples, records):
    """records: (chrom, pos, id, ref, alt, calls) with calls a list of GT strings, or of DP values
    for a record without GT (given as ("DP", [...]))."""
    lines = [HEADER + "\t".join(["#CHROM", "POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO", "FORMAT", *samples])]
    for chrom, pos, vid, ref, alt, calls in records:
        fmt, values = ("GT", calls) if isinstance(calls, list) else calls
        assert len(values) == len(samples)
        lines.append("\t".join([chrom, str(pos), vid, ref, alt, ".", ".", ".", fmt, *map(str, values)]))
    Path(path).write_text("\n".join(lines) + "\n")
    return Path(path)


def as_format(path, kind):
    """The VCF text at path as kind: vcf, gz (gzip), bgz (bgzip, pysam) or bcf (written by htslib)."""
    if kind == "vcf":
        return path
    if kind == "gz":
        out = path.with_suffix(".vcf.gz")
        with open(path, "rb") as f, gzip.open(out, "wb") as g:
            shutil.copyfileobj(f, g)
        return out
    if kind == "bgz":
        pysam = pytest.importorskip("pysam", reason="pysam writes bgzip files")
        out = path.with_suffix(".bgz.vcf.gz")
        pysam.tabix_compress(str(path), str(out), force=True)
        assert out.read_bytes()[12:14] == b"BC"  # a BGZF block, not plain gzip
        return out
    out = path.with_suffix(".bcf")
    source = cyvcf2.VCF(str(path))
    writer = cyvcf2.Writer(str(out), source, mode="wb")
    for record in source:
        writer.write_record(record)
    writer.close()
    source.close()
    with gzip.open(out, "rb") as f:
        assert f.read(3) == b"BCF"
    return out


def alt_copies(gt, half_call="missing"):
    """ALT copies of one GT string, as PLINK reads it (worked out from the text, not by the reader)."""
    alleles = [None if a == "." else int(a) for a in re.split(r"[/|]", gt)]
    if len(alleles) == 1:  # haploid: homozygous
        return np.nan if alleles[0] is None else 2.0 * alleles[0]
    if len(alleles) > 2:  # polyploid
        return np.nan
    a, b = alleles
    if a is None and b is None:
        return np.nan
    if a is not None and b is not None:
        return float(a + b)
    known = a if a is not None else b
    return {"missing": np.nan, "haploid": 2.0 * known, "reference": float(known)}[half_call]


def expected_matrix(records, half_call="missing"):
    """(n_samples, n_variants) float32 of ALT copies, NaN missing."""
    columns = [[alt_copies(g, half_call) for g in calls] if isinstance(calls, list) else [np.nan] * len(calls[1])
               for *_, calls in records]
    return np.array(columns, dtype=np.float32).T


DIPLOID = ["0/0", "0/1", "1/0", "1/1", "0|0", "0|1", "1|0", "1|1", "./.", ".|."]
HAPLOID = ["0", "1", "."]


def random_records(n, p, seed, kinds=DIPLOID, chrom="1"):
    rng = np.random.default_rng(seed)
    return [(chrom, 1000 * (j + 1), f"rs{chrom}_{j}", "A", "G", list(rng.choice(kinds, n))) for j in range(p)]


def sample_names(n):
    return [f"s{k}" for k in range(n)]


@pytest.mark.parametrize("kind", ["vcf", "gz", "bgz", "bcf"])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 130])
def test_calls_are_the_alt_copies_written(tmp_path, n, kind):
    # diploid (phased and not), missing, haploid (chrX), half-calls and a polyploid call
    records = random_records(n, 9, seed=n)
    records += random_records(n, 3, seed=n + 1000, kinds=HAPLOID, chrom="X")
    records[0] = records[0][:5] + (["1/1"] * n,)
    records[1] = records[1][:5] + (["./."] * n,)  # every call missing
    records.append(("2", 5, "rs_half", "C", "T", list(np.resize(["0/.", "./1", "1|.", ".|0", "0/1"], n))))
    records.append(("2", 6, "rs_mixed", "C", "T", list(np.resize(["0/0/1", "1", "0|1", "./.", "1/1"], n))))
    path = as_format(write_vcf(tmp_path / "g.vcf", sample_names(n), records), kind)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*more than two alleles")
        G = read_vcf(path, half_call="missing")
    expected = expected_matrix(records)
    assert G.shape == (n, len(records))
    assert np.isnan(expected).any() and (expected == 2).any() and (expected == 1).any()
    np.testing.assert_array_equal(np.asarray(G), expected)
    np.testing.assert_array_equal(G.to_numpy(np.float64), expected.astype(np.float64))
    rows = np.arange(n)[::-2]
    np.testing.assert_array_equal(np.asarray(G[rows]), expected[rows])
    assert list(G.sample_ids) == sample_names(n)
    assert list(G.variant_ids) == [r[2] for r in records]


def test_phase_is_dropped_and_haploid_calls_count_twice(tmp_path):
    records = [("1", 10, "rs1", "A", "G", ["0|1", "1|0", "0/1", "1|1"]),
               ("X", 20, "rsX", "C", "T", ["0", "1", ".", "0/1"])]
    G = read_vcf(write_vcf(tmp_path / "g.vcf", ["a", "b", "c", "d"], records))
    np.testing.assert_array_equal(np.asarray(G), np.array([[1, 0], [1, 2], [1, np.nan], [2, 1]], dtype=np.float32))


@pytest.mark.parametrize("mode, expected", [("missing", [np.nan, np.nan, np.nan, np.nan, 0]),
                                            ("haploid", [0, 2, 2, 0, 0]),
                                            ("reference", [0, 1, 1, 0, 0])])
def test_half_calls_read_as_plinks_vcf_half_call(tmp_path, mode, expected):
    records = [("1", 10, "rs1", "A", "G", ["0/.", "./1", "1|.", ".|0", "0/0"])]
    G = read_vcf(write_vcf(tmp_path / "g.vcf", sample_names(5), records), half_call=mode)
    np.testing.assert_array_equal(np.asarray(G)[:, 0], np.array(expected, dtype=np.float32))


def test_half_calls_refused_by_default(tmp_path):
    records = [("1", 10, "rs1", "A", "G", ["0/0", "0/1"]), ("1", 20, "rs2", "A", "G", ["0/1", "./1"])]
    path = write_vcf(tmp_path / "half.vcf", ["a", "b"], records)
    with pytest.raises(ValueError, match=r"half\.vcf: record 2 \(1:20, ID rs2\), sample 'b': half-call GT \./1.*"
                                         r"half_call='missing'"):
        read_vcf(path)
    with pytest.raises(ValueError, match="half_call must be one of"):
        read_vcf(path, half_call="drop")


def test_polyploid_calls_are_missing_with_a_warning(tmp_path):
    records = [("1", 10, "rs1", "A", "G", ["0/0/1", "0/1", "1/1/1"]), ("1", 20, "rs2", "A", "G", ["0/1", "1", "0/0"])]
    with pytest.warns(UserWarning, match="2 calls of more than two alleles \\(in 1 record\\)"):
        G = read_vcf(write_vcf(tmp_path / "g.vcf", ["a", "b", "c"], records))
    np.testing.assert_array_equal(np.asarray(G), np.array([[np.nan, 1], [1, 2], [np.nan, 0]], dtype=np.float32))


def test_records_without_gt_are_kept_missing_with_a_warning(tmp_path):
    records = [("1", 10, "rs1", "A", "G", ["0/1", "1/1"]), ("1", 20, "rs2", "A", "G", ("DP", [3, 4])),
               ("1", 30, ".", "A", "G", ("DP", [5, 6])), ("1", 40, "rs4", "A", "G", ["1/1", "0/0"])]
    with pytest.warns(UserWarning, match=r"g\.vcf: 2 records without a GT field, every call read as missing.*rs2 \(1:20\), 1:30:A:G \(1:30\)"):
        G = read_vcf(write_vcf(tmp_path / "g.vcf", ["a", "b"], records))
    np.testing.assert_array_equal(np.asarray(G), np.array([[1, np.nan, np.nan, 2], [2, np.nan, np.nan, 0]],
                                                          dtype=np.float32))


@pytest.mark.parametrize("kind", ["vcf", "bcf"])
def test_multiallelic_records_are_refused_by_name(tmp_path, kind):
    records = [("1", 10, "rs1", "A", "G", ["0/1", "1/1"]), ("2", 200, "rs_multi", "A", "C,T", ["0/2", "1/1"]),
               ("1", 30, "rs3", "A", "G", ["0/1", "1/1"])]
    path = as_format(write_vcf(tmp_path / "multi.vcf", ["a", "b"], records), kind)
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}: record 2 \(2:200, ID rs_multi\) is multi-allelic "
                                         r"\(REF A, ALT C,T\).*bcftools norm -m -any"):
        read_vcf(path)


def test_allele_beyond_the_records_alleles_is_refused(tmp_path):
    records = [("1", 10, "rs1", "A", "G", ["0/1", "0/2"])]
    with pytest.raises(ValueError, match=r"record 1 \(1:10, ID rs1\), sample 'b': GT 0/2 names allele 2, but the "
                                         r"record has 1 ALT allele"):
        read_vcf(write_vcf(tmp_path / "g.vcf", ["a", "b"], records))
    records = [("1", 10, "rs1", "A", ".", ["0/0", "0|1"])]
    with pytest.raises(ValueError, match=r"sample 'b': GT 0\|1 names allele 1, but the record has 0 ALT alleles"):
        read_vcf(write_vcf(tmp_path / "g.vcf", ["a", "b"], records))


def test_names_and_tables(tmp_path):
    records = [("1", 10, "rs1", "A", "G", ["0/1", "1/1", "0/0"]), ("2", 20, ".", "CT", "C", ["0/0", "./.", "1|1"]),
               ("X", 3_000_000_000, "rs3;rs3b", "G", "A", ["1", "0", "0/1"]),
               ("1", 40, ".", "T", ".", ["0/0", "0", "./."])]  # no ALT: kept, allele 1 '.'
    G = read_vcf(write_vcf(tmp_path / "g.vcf", ["ana", "bob", "cyd"], records))
    ids = ["rs1", "2:20:CT:C", "rs3;rs3b", "1:40:T:."]
    assert list(G.variant_ids) == ids and list(G.sample_ids) == ["ana", "bob", "cyd"]
    table = G.variant_table
    assert set(table) == {"chrom", "id", "pos", "allele_1", "allele_2"}
    assert list(table["chrom"]) == ["1", "2", "X", "1"] and list(table["id"]) == ids
    assert table["pos"].dtype == np.int64 and list(table["pos"]) == [10, 20, 3_000_000_000, 40]
    assert list(table["allele_1"]) == ["G", "C", "A", "."] and list(table["allele_2"]) == ["A", "CT", "G", "T"]
    for name in ("chrom", "id", "allele_1", "allele_2"):
        assert table[name].dtype == object and all(type(v) is str for v in table[name])
    assert G.sample_table["fid"] is None and list(G.sample_table["iid"]) == ["ana", "bob", "cyd"]
    assert G.sample_table["iid"].dtype == object
    np.testing.assert_array_equal(np.asarray(G)[:, 3], np.array([0, 0, np.nan], dtype=np.float32))
    # the names follow a selection of variants
    assert list(G[:, [2, 0]].variant_table["allele_1"]) == ["A", "G"]


@pytest.mark.parametrize("ids, first, second", [(("rs1", "rs2", "rs1"), "1:10", "1:30"),
                                                ((".", "rs2", "."), "1:10", "1:30"),
                                                (("1:10:A:G", "rs2", "."), "1:10", "1:30")])
def test_duplicate_ids_are_refused(tmp_path, ids, first, second):
    records = [("1", 10, ids[0], "A", "G", ["0/1"]), ("1", 20, ids[1], "A", "G", ["0/1"]),
               ("1", 30 if ids[2] != "." else 10, ids[2], "A", "G", ["0/1"])]
    if ids[2] == ".":
        second = "1:10"
    path = write_vcf(tmp_path / "dups.vcf", ["a"], records)
    with pytest.raises(ValueError, match=rf"dups\.vcf: variant ID '[^']+' at record 1 \({first}\) and record 3 "
                                         rf"\({second}\); IDs must be unique"):
        read_vcf(path)


@pytest.mark.parametrize("kind", ["vcf", "bcf"])
def test_samples_keep_the_files_order(tmp_path, kind):
    records = random_records(11, 7, seed=3)
    path = as_format(write_vcf(tmp_path / "g.vcf", sample_names(11), records), kind)
    expected = expected_matrix(records)
    G = read_vcf(path, samples=["s9", "s2", "s5", "s2"])
    assert list(G.sample_ids) == ["s2", "s5", "s9"] and list(G.sample_table["iid"]) == ["s2", "s5", "s9"]
    np.testing.assert_array_equal(np.asarray(G), expected[[2, 5, 9]])
    np.testing.assert_array_equal(np.asarray(read_vcf(path, samples=sample_names(11)[::-1])), expected)


def test_samples_named_with_a_comma(tmp_path):
    names = ["smith,ann", "s1", "jones,bo", "s3"]
    records = random_records(4, 5, seed=4)
    path = write_vcf(tmp_path / "g.vcf", names, records)
    G = read_vcf(path, samples=["jones,bo", "smith,ann"])
    assert list(G.sample_ids) == ["smith,ann", "jones,bo"]
    np.testing.assert_array_equal(np.asarray(G), expected_matrix(records)[[0, 2]])


def test_unknown_or_no_samples_are_refused(tmp_path):
    path = write_vcf(tmp_path / "few.vcf", ["a", "b"], [("1", 10, "rs1", "A", "G", ["0/1", "1/1"])])
    with pytest.raises(ValueError, match=r"few\.vcf: 2 of the samples asked for are not in the file: 'c', 'd' \(it "
                                         r"has 2 samples: 'a', 'b'\)"):
        read_vcf(path, samples=["a", "c", "d"])
    with pytest.raises(ValueError, match=r"few\.vcf: samples is empty"):
        read_vcf(path, samples=[])
    with pytest.raises(ValueError, match="samples must be a list of sample IDs, got the string 'a'"):
        read_vcf(path, samples="a")


def test_files_that_are_not_vcfs(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"absent\.vcf: no such file"):
        read_vcf(tmp_path / "absent.vcf")
    empty = tmp_path / "empty.vcf"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"empty\.vcf: empty file"):
        read_vcf(empty)
    text = tmp_path / "notes.vcf"
    text.write_text("these are not genotypes\n1 2 3\n")
    with pytest.raises(ValueError, match=r"notes\.vcf: cyvcf2 cannot read it as a VCF or BCF file"):
        read_vcf(text)
    binary = tmp_path / "noise.bcf"
    binary.write_bytes(np.random.default_rng(0).integers(0, 256, 3000, dtype=np.uint8).tobytes())
    with pytest.raises(ValueError, match=r"noise\.bcf: cyvcf2 cannot read it as a VCF or BCF file"):
        read_vcf(binary)
    dup = tmp_path / "dup_samples.vcf"
    dup.write_text(HEADER + "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ts1\ts1\n")
    with pytest.raises(ValueError, match=r"dup_samples\.vcf: cyvcf2 cannot read it.*duplicated sample name"):
        read_vcf(dup)


def test_headers_without_samples_or_records(tmp_path):
    sites = tmp_path / "sites.vcf"
    sites.write_text(HEADER + "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n1\t10\trs1\tA\tG\t.\t.\t.\n")
    with pytest.raises(ValueError, match=r"sites\.vcf: no samples"):
        read_vcf(sites)
    header_only = write_vcf(tmp_path / "header_only.vcf", ["a", "b"], [])
    for path in (header_only, as_format(header_only, "bcf")):
        with pytest.raises(ValueError, match=rf"{re.escape(path.name)}: no variants"):
            read_vcf(path)


def test_a_broken_record_is_named(tmp_path):
    path = write_vcf(tmp_path / "broken.vcf", ["a", "b"], [("1", 10, "rs1", "A", "G", ["0/1", "1/1"]),
                                                           ("1", 20, "rs2", "A", "G", ["0/1", "1/1"])])
    path.write_text(path.read_text() + "1\tthirty\trs3\tA\tG\t.\t.\t.\tGT\t0/1\t0/0\n")
    with pytest.raises(ValueError, match=r"broken\.vcf: record 3 \(after 1:20\) cannot be parsed"):
        read_vcf(path)
    path.write_text(path.read_text().replace("thirty", "30").replace("GT\t0/1\t0/0", "GT\t0/1"))
    with pytest.raises(ValueError, match=r"broken\.vcf: record 3 \(after 1:20\) cannot be parsed"):
        read_vcf(path)


@pytest.mark.parametrize("p", [1, 6, 7, 8, 20])
def test_blocks_are_packed_one_at_a_time(tmp_path, monkeypatch, p):
    n = 10
    records = random_records(n, p, seed=p)
    path = write_vcf(tmp_path / "g.vcf", sample_names(n), records)
    shapes, pack_counts = [], vcf_module.pack_counts

    def recording(counts, out=None):
        shapes.append(np.asarray(counts).shape)
        return pack_counts(counts, out)

    monkeypatch.setattr(vcf_module, "pack_counts", recording)
    monkeypatch.setattr(vcf_module, "_BLOCK_VARIANTS", 3)
    G = read_vcf(path)
    np.testing.assert_array_equal(np.asarray(G), expected_matrix(records))
    assert shapes == [(3, n)] * (p // 3) + ([(p % 3, n)] if p % 3 else [])
    # and by calls: a block of about _BLOCK_CALLS calls for many samples
    shapes.clear()
    monkeypatch.setattr(vcf_module, "_BLOCK_VARIANTS", 2000)
    monkeypatch.setattr(vcf_module, "_BLOCK_CALLS", 25)
    np.testing.assert_array_equal(np.asarray(read_vcf(path)), expected_matrix(records))
    assert shapes and all(rows == 2 for rows, _ in shapes[:-1]) and sum(rows for rows, _ in shapes) == p


def test_forest_on_the_packed_calls_equals_the_float32_copy(tmp_path):
    n, p = 130, 40
    records = random_records(n, p, seed=7, kinds=DIPLOID + ["0/0"] * 6 + ["0/1"] * 3)
    records += random_records(n, 5, seed=8, kinds=HAPLOID + ["0"], chrom="X")
    records = [(c, k + 1, f"v{k}", r, a, g) for k, (c, _, _, r, a, g) in enumerate(records)]
    path = as_format(write_vcf(tmp_path / "g.vcf", sample_names(n), records), "gz")
    G = read_vcf(path)
    D = np.asarray(G)
    np.testing.assert_array_equal(D, expected_matrix(records))
    rng = np.random.default_rng(0)
    y = np.nan_to_num(D[:, 3]) * 1.5 - np.nan_to_num(D[:, 10]) * np.nan_to_num(D[:, 20]) + rng.normal(0, 0.3, n)
    kw = dict(n_estimators=10, random_state=0, max_features=0.5)
    a, b = RandomForestRegressor(**kw).fit(G, y), RandomForestRegressor(**kw).fit(D, y)
    assert_same_forest(a, b)
    assert all(len(t.feature) > 3 for t in a.trees_)  # trees that split
    assert any(np.isnan(D[:, f]).any() for t in a.trees_ for f in t.feature[t.feature >= 0])  # on missing calls
    assert list(a.feature_names_in_) == [f"v{k}" for k in range(p + 5)]
    np.testing.assert_array_equal(a.predict(G), b.predict(D))
    np.testing.assert_array_equal(a.predict(G[::3]), b.predict(D[::3]))


def test_without_cyvcf2_the_error_says_what_to_install(tmp_path, monkeypatch):
    path = write_vcf(tmp_path / "g.vcf", ["a"], [("1", 10, "rs1", "A", "G", ["0/1"])])
    monkeypatch.setitem(sys.modules, "cyvcf2", None)  # as if it were not installed
    with pytest.raises(ImportError, match="read_vcf needs cyvcf2.*pip install cyvcf2"):
        read_vcf(path)
