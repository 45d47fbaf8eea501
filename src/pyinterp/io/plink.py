"""PLINK 1 binary filesets (.bed / .bim / .fam), the .bed memory-mapped and read in place."""

from __future__ import annotations

import array
import os
from pathlib import Path

import numpy as np

from .names import first_repeat
from .packed import PackedGenotypes

_MAGIC = b"\x6c\x1b"
_VARIANT_MAJOR = 1
_FAM_FIELDS = ("fid", "iid", "father", "mother", "sex", "phenotype")
_BIM_FIELDS = ("chrom", "id", "cm", "pos", "allele_1", "allele_2")
_BIM_NUMBERS = {"cm": (float, "cM position (column 3)"), "pos": (int, "base-pair position (column 4)")}


def read_plink(path, *, count_a2=False):
    """Open a PLINK 1 binary fileset: genotypes read in place, samples and variants by name.

    The .bed is memory-mapped, not loaded: the forests read its two-bit calls where they lie, so a
    fit on every sample needs about the file's size in memory (its pages, shared with the page
    cache) plus the trees. A fit on a subset of the samples (``G[rows]``) and a selection of
    variants (``G[:, cols]``) read the file with pread instead, into a copy of those calls alone
    (two bits each), so the file's pages do not become the process's. Every file is checked before
    use: the .bed's magic bytes and variant-major mode, its size against the .fam's and .bim's row
    counts, each row's fields, and unique sample (FID, IID) and variant IDs; a problem raises
    ValueError naming the file and line.

    Parameters
    ----------
    path : str or path-like
        The fileset's prefix, or the path of its .bed, .bim or .fam (the others lie beside it with
        the same stem).
    count_a2 : bool, default=False
        Count allele 2 (the .bim's sixth column) instead of allele 1 (its fifth), as PLINK's and
        bed-reader's ``count_A1`` option.

    Returns
    -------
    PackedGenotypes
        n samples (the .fam's rows) x p variants (the .bim's), named by the .bim's variant IDs and
        the .fam's IIDs, with the two files as dicts of arrays: ``G.sample_table`` (fid, iid,
        father, mother, sex, phenotype, as strings) and ``G.variant_table`` (chrom, id, allele_1,
        allele_2 as strings, cm as float, pos as int).

    Raises
    ------
    FileNotFoundError
        When one of the three files is missing.
    ValueError
        When a file does not hold what it should (see above); the message names the file and line.

    See Also
    --------
    PackedGenotypes : What it returns, and how the estimators read it.
    read_pheno : A phenotype or covariate file for the same samples.
    read_pgen : The PLINK 2 fileset (.pgen / .pvar / .psam).

    Examples
    --------
    A fileset of 3 samples and 2 variants, written by hand in the current directory: the .bed is
    the magic bytes 0x6c 0x1b, the mode byte 0x01 (variant-major), then each variant's calls two
    bits a sample from the low bits (0b00 homozygous for allele 1, 0b01 missing, 0b10
    heterozygous, 0b11 homozygous for allele 2), one byte per 4 samples:

    >>> import numpy as np
    >>> from pyinterp.io import read_plink
    >>> with open("toy.fam", "w") as f:
    ...     _ = f.write("f1 s1 0 0 1 -9\\nf2 s2 0 0 2 -9\\nf3 s3 0 0 1 -9\\n")
    >>> with open("toy.bim", "w") as f:
    ...     _ = f.write("1 rs10 0 1000 A G\\n1 rs20 0 2000 C T\\n")
    >>> with open("toy.bed", "wb") as f:  # rs10: 2, 1, missing; rs20: 0, 0, 2
    ...     _ = f.write(bytes([0x6C, 0x1B, 0x01, 0b010000 | 0b1000, 0b001111]))
    >>> G = read_plink("toy")  # or "toy.bed", "toy.bim", "toy.fam"
    >>> G
    PackedGenotypes(3 samples x 2 variants, counting allele 1)
    >>> list(G.variant_ids), list(G.sample_ids)
    (['rs10', 'rs20'], ['s1', 's2', 's3'])
    >>> np.asarray(G)
    array([[ 2.,  0.],
           [ 1.,  0.],
           [nan,  2.]], dtype=float32)
    >>> G.variant_table["pos"].tolist(), G.sample_table["fid"].tolist()
    ([1000, 2000], ['f1', 'f2', 'f3'])
    >>> np.asarray(read_plink("toy", count_a2=True))[:, 0]  # copies of G instead of A
    array([ 0.,  1., nan], dtype=float32)
    """
    bed, bim, fam = _fileset(path)
    fam_table = _read_table(fam, _FAM_FIELDS, "FID IID father mother sex phenotype")
    bim_table = _read_table(bim, _BIM_FIELDS, "chromosome ID cM position allele_1 allele_2", _BIM_NUMBERS,
                            shared=("chrom", "allele_1", "allele_2"))
    n, p = len(fam_table["iid"]), len(bim_table["id"])
    if n == 0:
        raise ValueError(f"{fam}: no samples")
    if p == 0:
        raise ValueError(f"{bim}: no variants")
    _check_unique(fam, [f"{a} {b}" for a, b in zip(fam_table["fid"], fam_table["iid"])], "sample (FID IID)",
                  "plink --update-ids")
    _check_unique(bim, bim_table["id"], "variant ID", "plink2 --set-all-var-ids")
    width = (n + 3) // 4
    with open(bed, "rb") as f:
        header = f.read(3)
    if len(header) < 3 or header[:2] != _MAGIC:
        raise ValueError(f"{bed}: not a PLINK 1 .bed (its first bytes are {header.hex() or 'missing'}, a .bed starts "
                         "with 6c1b)")
    if header[2] != _VARIANT_MAJOR:
        raise ValueError(f"{bed}: sample-major .bed (mode byte {header[2]:#04x}), a layout of PLINK before 1.0; "
                         "rewrite it with plink --bfile ... --make-bed")
    size, expected = os.path.getsize(bed), 3 + p * width
    if size != expected:
        what = "truncated" if size < expected else "longer than its .fam and .bim say"
        raise ValueError(f"{bed}: {what}: {size} bytes, but {n} samples ({fam.name}) x {p} variants ({bim.name}) "
                         f"take 3 + {p} x {width} = {expected} bytes")
    calls = np.memmap(bed, dtype=np.uint8, mode="r", offset=3, shape=(p, width))
    return PackedGenotypes(calls, n, count_a2=count_a2, variant_ids=bim_table["id"], sample_ids=fam_table["iid"],
                           sample_table=fam_table, variant_table=bim_table)


def _fileset(path):
    path = Path(os.fspath(path))
    stem = path.with_suffix("") if path.suffix in (".bed", ".bim", ".fam") else path
    files = tuple(stem.with_name(stem.name + ext) for ext in (".bed", ".bim", ".fam"))
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(f"{f}: no such file (a PLINK 1 fileset is a .bed, a .bim and a .fam with one stem)")
    return files


def _read_table(path, fields, meaning, numbers=None, shared=()):
    """The whitespace-separated table's columns by field: numbers ({field: (type, what)}) as
    float64 or int64 arrays, the rest as arrays of str, one object per distinct value of the
    `shared` fields (a .bim's chromosomes and alleles repeat: a million rows of them would
    otherwise hold a million strings each)."""
    numbers = numbers or {}
    kinds = [numbers.get(name) for name in fields]
    columns = [array.array("d" if kind[0] is float else "q") if kind else [] for kind in kinds]
    seen = [{} if name in shared else None for name in fields]
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != len(fields):
                raise ValueError(f"{path}, line {number}: expected {len(fields)} fields ({meaning}), got "
                                 f"{len(parts)}: {line.strip()[:80]!r}")
            for column, kind, values, value in zip(columns, kinds, seen, parts):
                if kind:
                    try:
                        column.append(kind[0](value))
                    except (ValueError, OverflowError):  # not a number, or beyond int64
                        raise ValueError(f"{path}, line {number}: {kind[1]} must be a number, got {value!r}") from None
                else:
                    column.append(value if values is None else values.setdefault(value, value))
    return {name: np.array(column, dtype=np.float64 if kind[0] is float else np.int64) if kind
            else np.array(column, dtype=object) for name, kind, column in zip(fields, kinds, columns)}


def _check_unique(path, ids, what, rename):
    repeat = first_repeat(ids)
    if repeat:
        i, j = repeat
        raise ValueError(f"{path}: {what} {ids[j]!r} on rows {i + 1} and {j + 1}; names must be unique ({rename} "
                         "can rename them)")
