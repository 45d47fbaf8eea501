"""read_bgen: BGEN files written byte by byte here (layouts 1 and 2, 1 to 32 bits, uncompressed,
zlib and zstd, phased and unphased, ploidy 0 to 2, missing samples) from known stored integers,
read and compared with the hardcalls worked out here by plink2's rule; plink2 --bgen ... --make-bed
(when installed) agrees; fits on the packed calls equal fits on their float32 copy; every malformed
input is refused by a message naming the file and the variant, sample or line."""

import doctest
import gzip
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

bgen = pytest.importorskip("bgen", reason="the bgen package (pip install bgen) reads .bgen files for read_bgen")

from pyinterp import RandomForestRegressor  # noqa: E402
from pyinterp.io import read_plink  # noqa: E402

from pyinterp.io import bgen as bgen_module  # noqa: E402
from pyinterp.io import read_bgen  # noqa: E402

from every_route import assert_same_forest  # noqa: E402

PLINK2 = shutil.which("plink2")
needs_plink2 = pytest.mark.skipif(PLINK2 is None, reason="plink2 is not installed (apt-get install plink2)")
try:
    import zstandard
except ImportError:
    zstandard = None
COMPRESSIONS = ["none", "zlib", pytest.param("zstd", marks=pytest.mark.skipif(
    zstandard is None, reason="zstandard (pip install zstandard) writes the zstd blocks by hand"))]
NAN = np.nan

# ---------------------------------------------------------------- writing BGEN files byte by byte
# https://www.well.ox.ac.uk/~gav/bgen_format/spec/latest.html


def pack_bits(values, bits):
    """Values of `bits` bits each, the first in the lowest bits, as little-endian bytes."""
    total = 0
    for k, value in enumerate(values):
        assert 0 <= value < (1 << bits)
        total |= int(value) << (k * bits)
    return total.to_bytes((len(values) * bits + 7) // 8, "little")


def text2(value):
    data = value.encode()
    return struct.pack("<H", len(data)) + data


def compress(data, compression):
    if compression == "zlib":
        return zlib.compress(data)
    return zstandard.ZstdCompressor().compress(data)


class Variant:
    """A biallelic (unless alleles says otherwise) variant with each sample's stored integers.

    samples: layout 2, a list of (ploidy, missing, values): values the stored integers (2 for
    an unphased diploid: k(AA), k(AB); 2 phased: k(hap 1 = A), k(hap 2 = A); 1 haploid: k(A);
    none for ploidy 0); layout 1, a list of (u(AA), u(AB), u(BB)) over 32768.
    """

    def __init__(self, samples, bits=8, phased=False, varid="", rsid=".", chrom="1", pos=1, alleles=("A", "G")):
        self.samples, self.bits, self.phased = samples, bits, phased
        self.varid, self.rsid, self.chrom, self.pos, self.alleles = varid, rsid, chrom, pos, tuple(alleles)

    def record(self, layout, compression):
        n = len(self.samples)
        head = struct.pack("<I", n) if layout == 1 else b""
        head += text2(self.varid) + text2(self.rsid) + text2(self.chrom) + struct.pack("<I", self.pos)
        if layout == 2:
            head += struct.pack("<H", len(self.alleles))
        for allele in self.alleles:
            head += struct.pack("<I", len(allele)) + allele.encode()
        if layout == 1:
            body = b"".join(struct.pack("<3H", *triple) for triple in self.samples)
            if compression == "none":
                return head + body
            data = zlib.compress(body)
            return head + struct.pack("<I", len(data)) + data
        ploidies = [ploidy for ploidy, _, _ in self.samples]
        body = struct.pack("<IHBB", n, len(self.alleles), min(ploidies), max(ploidies))
        body += bytes(ploidy | (0x80 if missing else 0) for ploidy, missing, _ in self.samples)
        body += bytes([int(self.phased), self.bits])
        body += pack_bits([v for _, _, values in self.samples for v in values], self.bits)
        if compression == "none":
            return head + struct.pack("<I", len(body)) + body
        data = compress(body, compression)
        return head + struct.pack("<II", len(data) + 4, len(body)) + data


def write_bgen(path, variants, sample_ids=None, n=None, layout=2, compression="zlib", magic=b"bgen", free=b"hand"):
    n = len(variants[0].samples) if n is None else n
    code = {"none": 0, "zlib": 1, "zstd": 2}[compression]
    flags = code | (layout << 2) | ((1 << 31) if sample_ids is not None else 0)
    header = struct.pack("<III", 20 + len(free), len(variants), n) + magic + free + struct.pack("<I", flags)
    samples = b""
    if sample_ids is not None:
        ids = b"".join(text2(s) for s in sample_ids)
        samples = struct.pack("<II", 8 + len(ids), len(sample_ids)) + ids
    body = b"".join(v.record(layout, compression) for v in variants)
    Path(path).write_bytes(struct.pack("<I", len(header) + len(samples)) + header + samples + body)
    return Path(path)


def write_sample_file(path, iids, fids=None, extra=()):
    """An Oxford .sample: two header lines, then ID_1 ID_2 missing [extra columns] per sample."""
    names = ["ID_1", "ID_2", "missing"] if fids is not None else ["ID_1", "missing"]
    types = ["0", "0", "0"] if fids is not None else ["0", "0"]
    for name, kind, _ in extra:
        names.append(name)
        types.append(kind)
    lines = [" ".join(names), " ".join(types)]
    for k, iid in enumerate(iids):
        row = ([fids[k]] if fids is not None else []) + [iid, "0"] + [values[k] for _, _, values in extra]
        lines.append(" ".join(row))
    Path(path).write_text("\n".join(lines) + "\n")
    return Path(path)


# ---------------------------------------------------------------- the rule, worked out here

THRESHOLD_UNITS = {0.1: 1638, 0.0: 0, 0.2: 3276, 0.05: 819, 0.49: 8028}  # int(t * 16384), as plink2 takes it


def plink2_dosage(m, bits):
    """plink2's dosage of allele A (16384 a copy) from m stored units of 1 / (2^bits - 1) (0 <= m <= 2 d)."""
    if bits == 1:
        return 16384 * m
    return (16384 * m + 2 ** (bits - 1)) // (2 ** bits - 1)


def called(dosage, units):
    """The count of the allele the dosage counts, or NaN when not within units of 0, 1 or 2 copies."""
    rest = dosage % 16384
    if units < rest < 16384 - units:
        return NAN
    return float((dosage + 8192) // 16384)


def alt_copies(variant, units=1638):
    """ALT (second allele) copies of each sample of a layout 2 variant, by plink2's rule."""
    out = []
    for ploidy, missing, values in variant.samples:
        if missing or ploidy == 0:
            out.append(NAN)
            continue
        if ploidy == 1:
            m = 2 * values[0]
        elif variant.phased:
            m = values[0] + values[1]
        else:
            m = 2 * values[0] + values[1]
        out.append(2.0 - called(plink2_dosage(m, variant.bits), units))
    return out


def alt_copies_v11(variant, units=1638):
    """Layout 1: dosage of B rounded as plink2 rounds it (ties to even at a sum of 32768, up otherwise)."""
    out = []
    for u_aa, u_ab, u_bb in variant.samples:
        total = u_aa + u_ab + u_bb
        if total == 0:
            out.append(NAN)
            continue
        numer = 16384 * u_ab + 32768 * u_bb
        whole, rest = divmod(numer, total)
        if 2 * rest > total or (2 * rest == total and (total != 32768 or whole % 2)):
            whole += 1
        out.append(called(whole, units))
    return out


def expected_matrix(variants, units=1638, layout=2):
    rule = alt_copies if layout == 2 else alt_copies_v11
    return np.array([rule(v, units) for v in variants], dtype=np.float32).T


def split_m(m, bits, phased, rng):
    """Stored integers of a diploid sample whose m (2 k(AA) + k(AB), or k1 + k2) is given."""
    d = 2 ** bits - 1
    if phased:
        k1 = int(rng.integers(max(0, m - d), min(d, m) + 1))
        return [k1, m - k1]
    k_aa = int(rng.integers(max(0, m - d), m // 2 + 1))  # k(AB) = m - 2 k(AA) <= d - k(AA)
    return [k_aa, m - 2 * k_aa]


def boundary_ms(bits, units=1638):
    """m values on both sides of every hardcall boundary (dosage T, T + 1, 16384 - T - 1, ...)."""
    d = 2 ** bits - 1
    edges = [units, 16384 - units - 1, 16384 + units, 32768 - units - 1, 0, 16384, 32768]
    out = set()
    for edge in edges:  # the largest m whose dosage is <= edge, and the next
        lo = max((m for m in range(0, 2 * d + 1) if plink2_dosage(m, bits) <= edge), default=0) if d < 4096 else \
            _largest_m(edge, bits)
        out.update(m for m in (lo - 1, lo, lo + 1, lo + 2) if 0 <= m <= 2 * d)
    return sorted(out)


def _largest_m(edge, bits):
    d = 2 ** bits - 1
    m = edge * d // 16384
    while m < 2 * d and plink2_dosage(m + 1, bits) <= edge:
        m += 1
    while m > 0 and plink2_dosage(m, bits) > edge:
        m -= 1
    return m


def random_variant(n, bits, rng, phased=False, ploidies=(2,), missing=0.1, pos=1, near=0.5, units=1638, **kw):
    """n samples of random ploidy, half of the diploid ones placed next to a hardcall boundary."""
    d = 2 ** bits - 1
    edges = boundary_ms(bits, units)
    samples = []
    for _ in range(n):
        ploidy = int(rng.choice(ploidies))
        is_missing = bool(rng.random() < missing)
        if ploidy == 0:
            samples.append((0, is_missing, []))
        elif ploidy == 1:
            samples.append((1, is_missing, [0] if is_missing else [int(rng.integers(0, d + 1))]))
        elif is_missing:
            samples.append((2, True, [0, 0]))
        else:
            m = int(rng.choice(edges)) if rng.random() < near else int(rng.integers(0, 2 * d + 1))
            samples.append((2, False, split_m(m, bits, phased, rng)))
    return Variant(samples, bits=bits, phased=phased, pos=pos, **kw)


def variant_set(n, seed):
    """Unphased at many depths, phased, mixed ploidy, ploidy 0, all missing: rsIDs r0, r1, ..."""
    rng = np.random.default_rng(seed)
    specs = [dict(bits=b) for b in (1, 2, 3, 5, 8, 10, 12, 16, 17, 20, 21)]
    specs += [dict(bits=8, phased=True), dict(bits=16, phased=True), dict(bits=8, ploidies=(0, 1, 2)),
              dict(bits=16, phased=True, ploidies=(1, 2)), dict(bits=8, ploidies=(1,)), dict(bits=8, ploidies=(0,)),
              dict(bits=4, phased=True, ploidies=(0,)), dict(bits=8, missing=1.0)]
    return [random_variant(n, rng=rng, pos=100 * (j + 1), rsid=f"r{j}", alleles=("ACGT"[j % 4], "CGTA"[j % 4]),
                           **spec) for j, spec in enumerate(specs)]


def names(n):
    return [f"s{k}" for k in range(n)]


# ---------------------------------------------------------------- reading what was written


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 130])
def test_calls_are_plink2s_hardcalls_of_the_stored_probabilities(tmp_path, n, compression):
    variants = variant_set(n, seed=n)
    G = read_bgen(write_bgen(tmp_path / "g.bgen", variants, sample_ids=names(n), compression=compression))
    expected = expected_matrix(variants)
    assert G.shape == (n, len(variants))
    np.testing.assert_array_equal(np.asarray(G), expected)
    np.testing.assert_array_equal(G.to_numpy(np.float64), expected.astype(np.float64))
    rows = np.arange(n)[::-2]
    np.testing.assert_array_equal(np.asarray(G[rows]), expected[rows])
    assert np.isnan(expected[:, -1]).all()
    if n >= 9:
        assert {0.0, 1.0, 2.0} <= set(expected[~np.isnan(expected)].tolist()) and np.isnan(expected[:, :-1]).any()
    assert list(G.sample_ids) == names(n) and G.sample_table["fid"] is None
    table = G.variant_table
    assert list(table["id"]) == list(G.variant_ids) == [f"r{j}" for j in range(len(variants))]
    assert list(table["allele_1"]) == [v.alleles[1] for v in variants]  # the second allele (ALT) is counted
    assert list(table["allele_2"]) == [v.alleles[0] for v in variants]
    assert table["pos"].dtype == np.int64 and list(table["pos"]) == [v.pos for v in variants]
    assert list(table["chrom"]) == ["1"] * len(variants)
    assert all(column.dtype == object for key, column in table.items() if key != "pos")


@pytest.mark.parametrize("bits", [1, 2, 3, 8, 12, 15, 16, 17, 21])
@pytest.mark.parametrize("threshold", [0.1, 0.0, 0.05, 0.2, 0.49])
def test_each_side_of_every_threshold_boundary(tmp_path, bits, threshold):
    units = THRESHOLD_UNITS[threshold]
    rng = np.random.default_rng(bits)
    ms = boundary_ms(bits, units)
    variants = [Variant([(2, False, split_m(m, bits, phased, rng)) for m in ms], bits=bits, phased=phased,
                        rsid=f"v{phased}") for phased in (False, True)]
    G = read_bgen(write_bgen(tmp_path / "t.bgen", variants, sample_ids=names(len(ms))),
                  hard_call_threshold=threshold)
    expected = expected_matrix(variants, units)
    np.testing.assert_array_equal(np.asarray(G), expected)
    assert not np.isnan(expected).all() and (bits < 7 or np.isnan(expected).any())  # coarse grids call all


def test_the_default_threshold_in_numbers(tmp_path):
    # 16 bits: P(AB) = k / 65535, so the ALT dosage of (AA, AB) = (65535 - k, k) is k / 65535 copies
    ks = [0, 6553, 6554, 32767, 58981, 58982, 65535]
    variants = [Variant([(2, False, [65535 - k, k]) for k in ks], bits=16, rsid="x")]
    X = np.asarray(read_bgen(write_bgen(tmp_path / "x.bgen", variants, sample_ids=names(len(ks)))))[:, 0]
    # REF dosage 16384 (2 - k / 65535) on plink2's grid, D = floor(exact + 0.5 + 1 / 131070): k = 6553
    # (0.099992 ALT copies) gives 31130, 1638 short of 2 copies: called 0; k = 6554 (0.100008) gives
    # 31129: not called. k = 58981 (0.899992) gives 18023, 1639 past 1 copy: not called; 58982
    # (0.900008) gives 18022: called 1.
    np.testing.assert_array_equal(X, [0, 0, NAN, NAN, NAN, 1, 1])


@pytest.mark.parametrize("bits", [22, 24, 28, 32])
def test_deep_probabilities_away_from_the_boundaries(tmp_path, bits):
    d = 2 ** bits - 1
    rng = np.random.default_rng(bits)
    ms = [0, 2 * d, d, d // 20, d // 4, d * 3 // 2, 2 * d - d // 50, 2 * d - d // 7]
    variants = [Variant([(2, False, split_m(m, bits, False, rng)) for m in ms], bits=bits, rsid="deep")]
    X = np.asarray(read_bgen(write_bgen(tmp_path / "d.bgen", variants, sample_ids=names(len(ms)))))[:, 0]
    np.testing.assert_array_equal(X, [2, 0, 1, 2, NAN, NAN, 0, NAN])
    np.testing.assert_array_equal(X, expected_matrix(variants)[:, 0])


@pytest.mark.parametrize("compression", ["none", "zlib"])
@pytest.mark.parametrize("n", [1, 4, 7, 130])
def test_layout_1(tmp_path, n, compression):
    rng = np.random.default_rng(n)
    fixed = [(0, 0, 0), (32768, 0, 0), (0, 32768, 0), (0, 0, 32768), (29490, 3278, 0), (29491, 3277, 0),
             (29492, 3276, 0), (16384, 16384, 0), (1, 1, 0), (3, 1, 0), (1, 3, 0), (100, 0, 0), (60000, 60000, 60000),
             (0, 40000, 4000), (30000, 1, 2)]
    variants = []
    for j in range(6):
        triples = []
        for _ in range(n):
            if rng.random() < 0.5:
                triples.append(fixed[int(rng.integers(len(fixed)))])
            else:
                a = int(rng.integers(0, 32769))
                b = int(rng.integers(0, 32769 - a))
                triples.append((a, b, 32768 - a - b) if rng.random() < 0.7 else (a, b, int(rng.integers(0, 9))))
        variants.append(Variant(triples, rsid=f"w{j}", pos=j + 1))
    variants.append(Variant([fixed[k % len(fixed)] for k in range(n)], rsid="fixed", pos=10))
    write_sample_file(tmp_path / "v11.sample", names(n), fids=[f"f{k}" for k in range(n)])
    G = read_bgen(write_bgen(tmp_path / "v11.bgen", variants, layout=1, compression=compression))
    np.testing.assert_array_equal(np.asarray(G), expected_matrix(variants, layout=1))
    assert list(G.sample_ids) == names(n) and list(G.sample_table["fid"]) == [f"f{k}" for k in range(n)]


def test_layout_1_ties_round_as_plink2_rounds_them(tmp_path):
    # dosage of B = (16384 u(AB) + 32768 u(BB)) / total: 1/65536 of a 16384th rounds to even at a
    # total of 32768, up otherwise; a sample whose three values are all 0 is missing
    triples = [(32767, 1, 0), (32765, 3, 0), (32763, 5, 0), (1, 1, 0), (0, 0, 0), (3276, 0, 0)]
    variants = [Variant(triples, rsid="t")]
    X = np.asarray(read_bgen(write_bgen(tmp_path / "t.bgen", variants, layout=1, sample_ids=names(6)),
                             hard_call_threshold=0.0))[:, 0]
    # 0.5 -> 0 (even), 1.5 -> 2 (even), 2.5 -> 2 (even): all within 0 of a count only for the first
    np.testing.assert_array_equal(X, [0, NAN, NAN, NAN, NAN, 0])


@pytest.mark.parametrize("block_variants, block_calls", [(3, 1 << 21), (2000, 10), (4, 40), (1, 1), (17, 1 << 21)])
def test_blocks_of_every_size_give_the_same_calls(tmp_path, monkeypatch, block_variants, block_calls):
    variants = variant_set(13, seed=4)
    path = write_bgen(tmp_path / "g.bgen", variants, sample_ids=names(13))
    monkeypatch.setattr(bgen_module, "_BLOCK_VARIANTS", block_variants)
    monkeypatch.setattr(bgen_module, "_BLOCK_CALLS", block_calls)
    np.testing.assert_array_equal(np.asarray(read_bgen(path)), expected_matrix(variants))


@pytest.mark.parametrize("compression", [None, "zlib", "zstd"])
@pytest.mark.parametrize("n, ploidy, phased", [(5, 2, False), (1, 2, False), (4, 1, False), (3, 2, True), (9, 1, True)])
def test_bit_depth_is_read_from_the_file(tmp_path, compression, n, ploidy, phased):
    path = tmp_path / "b.bgen"
    rng = np.random.default_rng(n)
    width = (2 if phased else ploidy + 1) * (ploidy if phased else 1)
    with bgen.BgenWriter(path, n, samples=names(n), compression=compression) as writer:
        for bits in range(1, 33):
            probs = rng.dirichlet(np.ones(width // ploidy if phased else width), size=n * (ploidy if phased else 1))
            writer.add_variant(f"v{bits}", f"r{bits}", "1", bits, ["A", "C"], probs.reshape(n, width),
                               ploidy=ploidy, phased=phased, bit_depth=bits)
    header = bgen_module._read_header(path)
    with bgen.BgenReader(str(path)) as reader, open(path, "rb") as raw:
        for bits, var in enumerate(reader, 1):
            found = bgen_module._bit_depth(raw, var, header, n, n * ploidy)
            if compression == "zstd" and n * ploidy < 8:  # lengths leave several depths open
                assert found in (None, bits)
            else:
                assert found == bits


def test_zstd_files_of_the_package_writer_read_as_their_zlib_twins(tmp_path):
    rng = np.random.default_rng(3)
    n = 40
    probs = {bits: rng.dirichlet([1, 1, 1], size=n) for bits in (3, 8, 16, 20)}
    probs[8][:5] = [[0.97, 0.03, 0], [0.91, 0.09, 0], [0.89, 0.11, 0], [0.0, 0.05, 0.95], [np.nan] * 3]
    G = {}
    for compression in ("zlib", "zstd", None):
        path = tmp_path / f"{compression}.bgen"
        with bgen.BgenWriter(path, n, samples=names(n), compression=compression) as writer:
            for bits, p in probs.items():
                writer.add_variant(f"v{bits}", f"r{bits}", "2", bits, ["G", "T"], p, bit_depth=bits)
        G[compression] = np.asarray(read_bgen(path))
    np.testing.assert_array_equal(G["zstd"], G["zlib"])
    np.testing.assert_array_equal(G[None], G["zlib"])
    np.testing.assert_array_equal(G["zlib"][:5, 1], [0, 0, NAN, 2, NAN])


# ---------------------------------------------------------------- samples and variants by name


def two_variants(n):
    return [Variant([(2, False, [255, 0])] * n, rsid="a"), Variant([(2, False, [0, 0])] * n, rsid="b", pos=2)]


def test_samples_from_a_sample_file_beside_the_bgen_or_given(tmp_path):
    n = 5
    path = write_bgen(tmp_path / "cohort.v3.bgen", two_variants(n))  # no embedded IDs
    write_sample_file(tmp_path / "cohort.v3.sample", names(n), fids=[f"f{k}" for k in range(n)],
                      extra=[("sex", "D", ["1", "2", "1", "NA", "2"]), ("BMI", "C", ["20", "21", "NA", "23", "24"])])
    G = read_bgen(path)
    assert list(G.sample_ids) == names(n)
    table = G.sample_table
    assert list(table) == ["fid", "iid", "missing", "sex", "bmi"]
    assert list(table["fid"]) == [f"f{k}" for k in range(n)] and list(table["sex"])[3] == "NA"
    assert all(column.dtype == object for column in table.values())
    np.testing.assert_array_equal(np.asarray(G), [[0, 2]] * n)
    other = write_sample_file(tmp_path / "elsewhere.sample", [f"q{k}" for k in range(n)])  # one ID column
    G = read_bgen(path, sample_path=other)
    assert list(G.sample_ids) == [f"q{k}" for k in range(n)] and G.sample_table["fid"] is None


def test_a_given_sample_file_names_samples_over_embedded_ids(tmp_path):
    path = write_bgen(tmp_path / "e.bgen", two_variants(3), sample_ids=["x", "y", "z"])
    write_sample_file(tmp_path / "e.sample", ["a", "b", "c"])
    assert list(read_bgen(path).sample_ids) == ["x", "y", "z"]  # embedded IDs before the .sample beside
    given = read_bgen(path, sample_path=tmp_path / "e.sample")
    assert list(given.sample_ids) == ["a", "b", "c"]


def test_gzipped_and_tab_separated_sample_files(tmp_path):
    path = write_bgen(tmp_path / "g.bgen", two_variants(3))
    text = "ID_1\tID_2\tmissing\n0\t0\t0\nf1\ta\t0\nf2\tb\t0\nf3\tc\t0.1\n"
    with gzip.open(tmp_path / "g.sample.gz", "wt") as f:
        f.write(text)
    G = read_bgen(path, sample_path=tmp_path / "g.sample.gz")
    assert list(G.sample_ids) == ["a", "b", "c"] and list(G.sample_table["missing"]) == ["0", "0", "0.1"]


def test_samples_select_by_iid_in_file_order(tmp_path):
    n = 7
    variants = variant_set(n, seed=11)
    path = write_bgen(tmp_path / "g.bgen", variants)
    write_sample_file(tmp_path / "g.sample", names(n), fids=[f"f{k}" for k in range(n)])
    G = read_bgen(path, samples=["s5", "s1", "s5", "s6"])
    rows = [1, 5, 6]
    assert G.shape == (3, len(variants))
    np.testing.assert_array_equal(np.asarray(G), expected_matrix(variants)[rows])
    assert list(G.sample_ids) == ["s1", "s5", "s6"] and list(G.sample_table["fid"]) == ["f1", "f5", "f6"]


def test_variant_ids_fall_back_to_the_variant_id_then_chrom_pos_ref_alt(tmp_path):
    samples = [(2, False, [0, 0])] * 2
    variants = [Variant(samples, varid="SNP1", rsid="rs1"), Variant(samples, varid="SNP2", rsid=".", pos=5),
                Variant(samples, varid="", rsid="", chrom="X", pos=7, alleles=("AC", "A")),
                Variant(samples, varid=".", rsid=".", chrom="2", pos=9, alleles=("G", "T"))]
    G = read_bgen(write_bgen(tmp_path / "v.bgen", variants, sample_ids=["a", "b"]))
    assert list(G.variant_ids) == ["rs1", "SNP2", "X:7:AC:A", "2:9:G:T"]
    assert list(G.variant_table["chrom"]) == ["1", "1", "X", "2"]


# ---------------------------------------------------------------- fits


def test_forest_on_packed_calls_equals_forest_on_float32_copy(tmp_path):
    n, p = 157, 30
    rng = np.random.default_rng(9)
    variants = [random_variant(n, 8, rng, missing=0.05, near=0.2, rsid=f"rs{j}", pos=j + 1) for j in range(p)]
    G = read_bgen(write_bgen(tmp_path / "f.bgen", variants, sample_ids=names(n)))
    D = np.asarray(G)
    filled = np.nan_to_num(D)
    y = filled[:, 1] + 2 * filled[:, 2] * filled[:, 3] + rng.normal(0, 0.3, n)
    kw = dict(n_estimators=10, random_state=0, max_features=0.5)
    a, b = RandomForestRegressor(**kw).fit(G, y), RandomForestRegressor(**kw).fit(D, y)
    assert_same_forest(a, b)
    assert list(a.feature_names_in_) == [f"rs{k}" for k in range(p)]
    np.testing.assert_array_equal(a.predict(G), b.predict(D))
    np.testing.assert_array_equal(a.predict(G[::3]), b.predict(D[::3]))
    assert max(t.node_count for t in a.trees_) > 5 and np.isnan(D).any()


# ---------------------------------------------------------------- plink2 agrees


def plink2(*args, cwd):
    done = subprocess.run([PLINK2, *args, "--memory", "1024", "--threads", "1"], cwd=cwd, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def plink2_variants(n, bits, seed):
    rng = np.random.default_rng(seed)
    specs = [dict(), dict(), dict(phased=True), dict(ploidies=(1, 2)), dict(phased=True, ploidies=(1, 2)),
             dict(ploidies=(1,)), dict(missing=0.5), dict(near=1.0), dict(near=1.0, phased=True),
             dict(ploidies=(0, 1, 2)), dict(phased=True, ploidies=(0, 2))]
    return [random_variant(n, bits, rng, pos=1000 * (j + 1), rsid=f"rs{j}", alleles=("ACGT"[j % 4], "CGTA"[j % 4]),
                           **spec) for j, spec in enumerate(specs)]


@needs_plink2
@pytest.mark.parametrize("bits", [8, 16])
@pytest.mark.parametrize("n", [1, 5, 130])
def test_plink2_make_bed_reads_the_same(tmp_path, bits, n):
    variants = plink2_variants(n, bits, seed=n + bits)
    path = write_bgen(tmp_path / "g.bgen", variants, sample_ids=names(n))
    plink2("--bgen", "g.bgen", "ref-first", "--make-bed", "--out", "bed", cwd=tmp_path)
    G, B = read_bgen(path), read_plink(tmp_path / "bed")
    np.testing.assert_array_equal(np.asarray(G), np.asarray(B))
    np.testing.assert_array_equal(np.asarray(G), expected_matrix(variants))
    for key in ("id", "pos", "allele_1", "allele_2", "chrom"):
        np.testing.assert_array_equal(G.variant_table[key], B.variant_table[key], err_msg=key)
    assert list(G.sample_ids) == list(B.sample_ids)


@needs_plink2
@pytest.mark.parametrize("threshold", [0.0, 0.2, 0.49])
@pytest.mark.parametrize("bits, compression", [(8, "zlib"), (16, "zstd"), (3, "none"), (20, "zlib")])
def test_plink2_hard_call_threshold_and_compressions_read_the_same(tmp_path, threshold, bits, compression):
    if compression == "zstd" and zstandard is None:
        pytest.skip("zstandard (pip install zstandard) writes the zstd blocks by hand")
    variants = [random_variant(40, bits, np.random.default_rng(j), units=THRESHOLD_UNITS[threshold], near=0.8,
                               rsid=f"t{j}", pos=j + 1, phased=j == 1, ploidies=(1, 2) if j == 2 else (2,))
                for j in range(4)]
    path = write_bgen(tmp_path / "t.bgen", variants, compression=compression)
    write_sample_file(tmp_path / "t.sample", names(40), fids=["0"] * 40)
    plink2("--bgen", "t.bgen", "ref-first", "--sample", "t.sample", "--hard-call-threshold", str(threshold),
           "--make-bed", "--out", "bed", cwd=tmp_path)
    G = read_bgen(path, hard_call_threshold=threshold)
    np.testing.assert_array_equal(np.asarray(G), np.asarray(read_plink(tmp_path / "bed")))
    np.testing.assert_array_equal(np.asarray(G), expected_matrix(variants, THRESHOLD_UNITS[threshold]))


@needs_plink2
def test_plink2_reads_layout_1_the_same(tmp_path):
    rng = np.random.default_rng(1)
    triples = []
    for _ in range(60):
        a = int(rng.integers(0, 32769))
        b = int(rng.integers(0, 32769 - a))
        triples.append((a, b, 32768 - a - b) if rng.random() < 0.6 else (a, b, int(rng.integers(0, 3000))))
    triples[:6] = [(0, 0, 0), (32767, 1, 0), (32765, 3, 0), (29491, 3277, 0), (29490, 3278, 0), (1, 1, 0)]
    variants = [Variant(triples, rsid="a"), Variant(triples[::-1], rsid="b", pos=2)]
    path = write_bgen(tmp_path / "v11.bgen", variants, layout=1, sample_ids=names(60))
    plink2("--bgen", "v11.bgen", "ref-first", "--make-bed", "--out", "bed", cwd=tmp_path)
    np.testing.assert_array_equal(np.asarray(read_bgen(path)), np.asarray(read_plink(tmp_path / "bed")))


# ---------------------------------------------------------------- a shipped example file


def example_files():
    """BGEN files of the reading package's own test data: the installed bgen wheel ships none, so
    these are looked for in the folder PYINTERP_BGEN_EXAMPLES names (the bgen repository's
    tests/data: example.<bits>bits.bgen with example.sample)."""
    folder = os.environ.get("PYINTERP_BGEN_EXAMPLES")
    shipped = [p for p in Path(bgen.__file__).parent.rglob("*.bgen")]
    found = shipped + (sorted(Path(folder).glob("example*.bgen")) if folder else [])
    return found or [pytest.param(None, marks=pytest.mark.skip(
        reason="the bgen wheel ships no example .bgen; set PYINTERP_BGEN_EXAMPLES to its repository's tests/data"))]


def float_rule(probs, ploidy, phased, units=1638):
    """The rule on the package's float32 probabilities (exact to 20 bits at this threshold)."""
    out = np.full(len(ploidy), NAN)
    for s, (row, pl) in enumerate(zip(probs, ploidy)):
        if pl == 0 or np.isnan(row[0]):
            continue
        if pl == 1:
            m = 2 * row[0]
        elif phased:
            m = row[0] + row[2]
        else:
            m = 2 * row[0] + row[1]
        out[s] = 2.0 - called(int(np.floor(16384 * float(m) + 0.5)), units)
    return out


@pytest.mark.parametrize("path", example_files())
def test_example_file_of_the_package(path, tmp_path):
    sample = path.with_suffix(".sample") if path.with_suffix(".sample").exists() else path.with_name("example.sample")
    with bgen.BgenReader(str(path)) as reader:
        has_ids = reader.header.has_sample_ids
        layout = reader.header.layout
        expected = []
        for var in reader:
            probs = var.probabilities.astype(np.float64)
            if layout == 1:
                variant = Variant([tuple(int(round(x * 32768)) for x in row) if not np.isnan(row[0]) else (0, 0, 0)
                                   for row in probs])
                expected.append(alt_copies_v11(variant))
            else:
                expected.append(float_rule(probs, var.ploidy, var.is_phased))
    G = read_bgen(path, sample_path=None if has_ids else sample)
    np.testing.assert_array_equal(np.asarray(G), np.array(expected, dtype=np.float32).T)
    if PLINK2 is not None and "32bits" not in path.name:
        extra = [] if has_ids else ["--sample", str(sample)]
        plink2("--bgen", str(path), "ref-first", *extra, "--make-bed", "--out", "bed", cwd=tmp_path)
        np.testing.assert_array_equal(np.asarray(G), np.asarray(read_plink(tmp_path / "bed")))


# ---------------------------------------------------------------- the docstring's example


def test_docstring_example_runs(monkeypatch):
    import pyinterp.io

    monkeypatch.setattr(pyinterp.io, "read_bgen", read_bgen, raising=False)  # its home once moved there
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(read_bgen, "read_bgen", globs={})
    assert tests and tests[0].examples
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


# ---------------------------------------------------------------- refusals


def test_missing_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.bgen: no such file \(expected a \.bgen file\)"):
        read_bgen(tmp_path / "nope.bgen")
    path = write_bgen(tmp_path / "g.bgen", two_variants(2), sample_ids=["a", "b"])
    with pytest.raises(FileNotFoundError, match=r"nope\.sample: no such file \(expected an Oxford \.sample file\)"):
        read_bgen(path, sample_path=tmp_path / "nope.sample")


def test_not_a_bgen_or_cut_short(tmp_path):
    path = write_bgen(tmp_path / "g.bgen", variant_set(20, seed=1), sample_ids=names(20))
    whole = path.read_bytes()
    path.write_bytes(b"##fileformat=VCFv4.2\n#CHROM\tPOS\tID\n")
    with pytest.raises(ValueError, match=r"g\.bgen: not a BGEN file \(bytes 16-19 are b'v4\.2', where a BGEN has "
                                         r"b'bgen'\)"):
        read_bgen(path)
    path.write_bytes(whole[:11])
    with pytest.raises(ValueError, match=r"g\.bgen: 11 bytes, too short to be a BGEN file"):
        read_bgen(path)
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"g\.bgen: 0 bytes, too short"):
        read_bgen(path)
    path.write_bytes(whole[:40])
    with pytest.raises(ValueError, match=r"g\.bgen: not a readable BGEN file \(its header gives a header length of "
                                         r"24 and a first variant at byte \d+, in a file of 40 bytes\)"):
        read_bgen(path)
    path.write_bytes(whole[:-25])
    with pytest.raises(ValueError, match=r"g\.bgen: variant 19 of 19 \(1:1900\), ID r18: its genotype probabilities "
                                         r"cannot be read \(.*\); the file is truncated or damaged"):
        read_bgen(path)
    path.write_bytes(whole[:len(whole) * 2 // 3])
    with pytest.raises(ValueError, match=r"g\.bgen: .*variant \d+ of 19.*the file is truncated"):
        read_bgen(path)
    path.write_bytes(whole)
    with bgen.BgenReader(str(path)) as reader:
        ends = [var.next_variant_offset for var in reader]
    path.write_bytes(whole[:ends[9]])  # cut between two variants
    with pytest.raises(ValueError, match=r"g\.bgen: variant 11 of 19 cannot be read \(bgen is truncated - the header "
                                         r"lists 19 variants, but only 10 could be read\); the file is truncated"):
        read_bgen(path)
    damaged = bytearray(whole)
    block = ends[3] + 2 + 2 + len("r4") + 2 + len("1") + 4 + 2 + 2 * (4 + 1)  # variant 5's genotype block
    damaged[block + 8:block + 12] = b"\xff" * 4  # the zlib stream's header, after its two lengths
    path.write_bytes(bytes(damaged))
    with pytest.raises(ValueError, match=r"g\.bgen: variant 5 of 19 \(1:500\), ID r4: its genotype probabilities "
                                         r"cannot be read \(.*\); the file is truncated or damaged"):
        read_bgen(path)


def test_unknown_layouts_are_refused(tmp_path):
    path = write_bgen(tmp_path / "g.bgen", two_variants(2), sample_ids=["a", "b"])
    data = bytearray(path.read_bytes())
    data[24] = (data[24] & 0b11) | (3 << 2)  # the flags follow the 20-byte header and 4 bytes of free data
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"g\.bgen: layout 3 with compression code 1 is not a BGEN v1\.1, v1\.2 or "
                                         r"v1\.3 file"):
        read_bgen(path)


def test_sample_file_rows_and_fields_must_fit(tmp_path):
    path = write_bgen(tmp_path / "g.bgen", two_variants(3))
    write_sample_file(tmp_path / "g.sample", names(4), fids=list("wxyz"))
    with pytest.raises(ValueError, match=r"g\.sample: 4 samples, but g\.bgen has 3; the \.sample must have one row per "
                                         r"sample of the BGEN, in its order"):
        read_bgen(path)
    (tmp_path / "g.sample").write_text("ID_1 ID_2 missing\n0 0 0\nf a 0\nf b\nf c 0\n")
    with pytest.raises(ValueError, match=r"g\.sample, line 4: expected 3 fields \(ID_1 ID_2 missing\), got 2: 'f b'"):
        read_bgen(path)
    (tmp_path / "g.sample").write_text("ID_1 ID_2 missing\nf a 0\nf b 0\nf c 0\n")
    with pytest.raises(ValueError, match=r"g\.sample, line 2: the second header line of a \.sample gives each column's "
                                         r"type \(0, D, C, P or B\)"):
        read_bgen(path)
    (tmp_path / "g.sample").write_text("ID_1 ID_2 missing\n")
    with pytest.raises(ValueError, match=r"g\.sample: not an Oxford \.sample file"):
        read_bgen(path)


def test_duplicate_sample_ids_are_refused(tmp_path):
    path = write_bgen(tmp_path / "d.bgen", two_variants(4), sample_ids=["a", "b", "c", "b"])
    with pytest.raises(ValueError, match=r"d\.bgen: sample ID 'b' is sample 2 and sample 4 of the IDs the BGEN embeds; "
                                         r"sample IDs must be unique"):
        read_bgen(path)
    write_sample_file(tmp_path / "d.sample", ["x", "y", "x", "z"], fids=["1", "2", "3", "4"])
    with pytest.raises(ValueError, match=r"d\.sample: IID 'x' is on line 3 and on line 5; sample IDs must be unique"):
        read_bgen(path, sample_path=tmp_path / "d.sample")


def test_no_sample_ids_anywhere(tmp_path):
    path = write_bgen(tmp_path / "anon.bgen", two_variants(2))
    with pytest.raises(ValueError, match=r"anon\.bgen: the BGEN embeds no sample IDs and there is no anon\.sample "
                                         r"beside it; pass sample_path="):
        read_bgen(path)


def test_unknown_or_badly_given_samples(tmp_path):
    path = write_bgen(tmp_path / "g.bgen", two_variants(5), sample_ids=names(5))
    with pytest.raises(ValueError, match=r"g\.bgen: 2 of the samples asked for are not in the file: 'x', 'y' \(it has "
                                         r"5 samples: 's0', 's1', 's2', \.\.\.\)"):
        read_bgen(path, samples=["s1", "x", "y"])
    with pytest.raises(ValueError, match=r"samples must be a list of sample IDs \(IIDs\), got the string 's1'"):
        read_bgen(path, samples="s1")
    with pytest.raises(ValueError, match=r"g\.bgen: samples is empty"):
        read_bgen(path, samples=[])


def test_duplicate_variant_ids_name_both(tmp_path):
    samples = [(2, False, [0, 0])] * 2
    variants = [Variant(samples, rsid="rs1", pos=10), Variant(samples, rsid="rs2", pos=20),
                Variant(samples, rsid="rs1", chrom="2", pos=30)]
    with pytest.raises(ValueError, match=r"g\.bgen: variant ID 'rs1' is variant 1 \(1:10\) and variant 3 \(2:30\); IDs "
                                         r"must be unique"):
        read_bgen(write_bgen(tmp_path / "g.bgen", variants, sample_ids=["a", "b"]))
    variants = [Variant(samples, rsid="", pos=10), Variant(samples, rsid="1:10:A:G", pos=11)]
    with pytest.raises(ValueError, match=r"variant ID '1:10:A:G' is variant 1 \(1:10\) and variant 2 \(1:11\)"):
        read_bgen(write_bgen(tmp_path / "g.bgen", variants, sample_ids=["a", "b"]))


def test_multi_allelic_variants_are_refused_by_name(tmp_path):
    samples = [(2, False, [0, 0, 0, 0, 0])] * 2  # 3 alleles, diploid: 6 genotypes, 5 stored
    variants = [two_variants(2)[0], Variant(samples, rsid="tri", pos=5, alleles=("A", "C", "T"))]
    with pytest.raises(ValueError, match=r"g\.bgen: variant 2 of 2 \(1:5\), ID tri, has 3 alleles \(A,C,T\); a \.bed "
                                         r"holds two alleles a variant, and plink2 skips such variants"):
        read_bgen(write_bgen(tmp_path / "g.bgen", variants, sample_ids=["a", "b"]))


def test_ploidy_above_2_is_refused(tmp_path):
    samples = [(2, False, [0, 0]), (3, False, [0, 0, 0])]
    with pytest.raises(ValueError, match=r"g\.bgen: variant 1 of 1 \(1:1\), ID poly: sample 2 has ploidy 3; hardcalls "
                                         r"hold at most two allele copies, and plink2 refuses ploidy above 2 too"):
        read_bgen(write_bgen(tmp_path / "g.bgen", [Variant(samples, rsid="poly")], sample_ids=["a", "b"]))


def test_probabilities_summing_above_one_are_refused(tmp_path):
    samples = [(2, False, [100, 100]), (2, False, [200, 100])]
    with pytest.raises(ValueError, match=r"g\.bgen: variant 1 of 1 \(1:1\), ID bad, sample 2: P\(AA\) \+ P\(AB\) = "
                                         r"1\.17647 > 1 \(stored 8-bit values 200 \+ 100 > 255\); plink2 refuses such "
                                         r"files as malformed"):
        read_bgen(write_bgen(tmp_path / "g.bgen", [Variant(samples, rsid="bad")], sample_ids=["a", "b"]))


def test_a_wrong_bit_depth_is_caught_not_used(tmp_path, monkeypatch):
    variants = [random_variant(20, 16, np.random.default_rng(0), near=0.0, missing=0.0, rsid="x")]
    path = write_bgen(tmp_path / "g.bgen", variants, sample_ids=names(20))
    monkeypatch.setattr(bgen_module, "_bit_depth", lambda *args: 8)  # as if the block's lengths were misread
    with pytest.raises(ValueError, match=r"g\.bgen: variant 1 of 1 \(1:1\), ID x: its probabilities are not "
                                         r"multiples of 1/255, though its genotype block gives 8 bits a value; the "
                                         r"file is damaged or not laid out as the BGEN spec says"):
        read_bgen(path)


@pytest.mark.parametrize("value", [-0.01, 0.5, 0.6, float("nan"), "0.1", True, None])
def test_threshold_must_be_plink2s(tmp_path, value):
    path = write_bgen(tmp_path / "g.bgen", two_variants(2), sample_ids=["a", "b"])
    with pytest.raises(ValueError, match=r"hard_call_threshold must be .*from 0 to below 0\.5"):
        read_bgen(path, hard_call_threshold=value)


def test_without_the_bgen_package_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    path = write_bgen(tmp_path / "g.bgen", two_variants(2), sample_ids=["a", "b"])
    monkeypatch.setitem(sys.modules, "bgen", None)
    with pytest.raises(ImportError, match=r"read_bgen reads \.bgen files with the bgen package \(MIT licence\), which "
                                          r"is not installed: pip install bgen"):
        read_bgen(path)
