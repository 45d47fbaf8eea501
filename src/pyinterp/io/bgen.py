"""BGEN files (.bgen, UK Biobank's format): genotype probabilities read with the bgen package and
made hardcalls as ``plink2 --bgen FILE ref-first --make-bed`` makes them, packed."""

from __future__ import annotations

import functools
import gzip
import numbers
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from .packed import PackedGenotypes
from .names import first_repeat, select_samples
from .packing import pack_counts

# Calls packed at a time: at most _BLOCK_VARIANTS variants and about _BLOCK_CALLS calls (one int8
# each). Probabilities are decoded a variant at a time (float32, and float64 temporaries: under 200
# bytes a sample), so the peak is the packed result, one block of int8 calls and one variant.
_BLOCK_VARIANTS = 2000
_BLOCK_CALLS = 1 << 21

# plink2's dosage grid (plink2_common.h): one allele copy is 16384 (kDosageMid), half a copy 8192.
_ONE = 16384
_HALF = 8192
# plink2 reads --hard-call-threshold X as int(X * (1 + kSmallEpsilon) * 16384), kSmallEpsilon 2^-44.
_SMALL_EPSILON = 2.0 ** -44
# The bgen package hands probabilities over as float32: k / (2^bits - 1) gives k back exactly up to
# 21 bits (two float32 roundings, |error| <= k * 2^-23 < 0.25). Above, the dosage is worked out from
# the float32 values (plink2 itself stops at 28 bits).
_EXACT_BITS = 21
_TABLE_BITS = 16  # up to here, the call of each m comes from a table (at most 131,071 bytes)
_MAGICS = (b"bgen", b"\0\0\0\0")  # bytes 16-19; the spec lets older writers leave them zero


def read_bgen(path, *, sample_path=None, hard_call_threshold=0.1, samples=None):
    """Read a BGEN file's genotype probabilities as hardcalls: packed genotypes counting ALT.

    The file is read with the bgen package (``pip install bgen``; MIT licence, numpy its only
    dependency; it writes no index or metafile: a bgenix ``.bgi`` index beside the file is opened
    by it but not needed, the variants being read in order), a variant at a time, and the calls are
    packed a block of variants at a time into two bits a call: the result takes a quarter byte a
    call, plus one block of one-byte calls and one variant's probabilities while reading. Layouts 1
    and 2 (BGEN v1.1, v1.2 and v1.3), 1 to 32 bits a probability, uncompressed, zlib or zstd,
    phased or unphased, haploid and diploid samples are read.

    Each probability becomes a hardcall as ``plink2 --bgen FILE ref-first --make-bed`` makes it
    (plink2_import.cc: Bgen13GenoToPgenThread, Bgen11GenoToPgenThread; the rule behind
    ``--hard-call-threshold``, https://www.cog-genomics.org/plink/2.0/input#dosage_import_settings):

    - **Counted allele.** The BGEN record's second allele is ALT and counted (allele 1 of the
      result, as the .bim's fifth column of ``plink2 --bgen FILE ref-first``), the first is REF
      (allele 2), as ``read_pgen`` and ``read_vcf`` count ALT. For a file whose first allele is
      ALT (plink2's ``ref-last``), ``G.count_a2 = True`` counts it, or use ``2 - np.asarray(G)``.
    - **Dosage.** The stored integers of a sample (probabilities k / (2^bits - 1)) give a dosage on
      plink2's grid of 1/16384 copy, D = floor((16384 m + 2^(bits-1)) / (2^bits - 1)) (D = 16384 m
      at 1 bit), with m = 2 k(AA) + k(AB) unphased, k(hap 1) + k(hap 2) phased, 2 k(A) for a
      haploid sample: D counts the first allele, 2 copies = 32768. Layout 1 stores P(AA), P(AB),
      P(BB) as 16-bit integers u over 32768; D = round((16384 u(AB) + 32768 u(BB)) / (u(AA) +
      u(AB) + u(BB))) counts the second allele (ties to even when the three sum to 32768, up
      otherwise, as plink2 rounds).
    - **Hardcall.** The call is the nearest count when D lies within T of a multiple of 16384
      (D mod 16384 <= T or >= 16384 - T), with T = int(hard_call_threshold * (1 + 2^-44) * 16384)
      (1638 for the default 0.1: D within 1638/16384 = 0.09998 copies of 0, 1 or 2); any other
      sample is a missing call. Phased samples are called on their total dosage, and their phase dropped (a
      .bed has none).
    - **Missing calls.** A sample with its missing bit set, ploidy 0, or (layout 1) all three
      probabilities zero is missing.
    - **Haploid samples** (ploidy 1: chrX of males, chrY, chrMT) count their allele twice, as
      plink2 and a .bed store haploid calls (D from 2 k(A): P(A) = 0.97 reads as 0 ALT copies,
      P(A) = 0.5 as 1).
    - **Refused**, as plink2 cannot read them into a .bed either, with ValueError naming the
      variant: multi-allelic variants (plink2 2.00a3 skips them with a warning; a .bed holds two
      alleles), ploidy above 2 (plink2 refuses the file), unphased probabilities of a diploid
      sample summing above 1 (plink2: malformed). plink2 refuses 29 to 32 bits; they are read here
      (from float32 values, as 22 to 28 bits are: a dosage within about 2^-22 copies of a
      threshold may then be called otherwise than plink2 would).

    Sample IDs come from ``sample_path`` when given, else from the IDs the BGEN embeds, else from
    the Oxford .sample file beside it (the same stem with .sample); plink2 uses --sample over
    embedded IDs the same way. A .sample has a header line naming its columns and a line of
    column types (0, D, C, P, B); its first column is ID_1, and when the second is named ID_2 the
    two are FID and IID, otherwise the first is the IID (QCTOOL v2's one-ID .sample). Variant IDs
    are the rsID, or the variant ID field when the rsID is empty or '.', or else
    CHROM:POS:REF:ALT; they and the sample IIDs must be unique.

    Parameters
    ----------
    path : str or path-like
        The .bgen file.
    sample_path : str or path-like, optional
        An Oxford .sample file naming the BGEN's samples in its order (one row each after the two
        header lines). Default: the BGEN's embedded IDs, or the .sample beside it.
    hard_call_threshold : float, default=0.1
        plink2's ``--hard-call-threshold``: how far (in allele copies) a dosage may lie from 0, 1
        or 2 and still be called; 0 <= value < 0.5.
    samples : list of str, optional
        The IIDs of the samples to keep, kept in the file's order whatever the list's order. An
        IID the file does not have is a ValueError. Default: every sample.

    Returns
    -------
    PackedGenotypes
        n samples x p variants (in file order), counting ALT copies (NaN in ``np.asarray(G)`` for a
        missing call), named by the variant IDs (``variant_ids``) and the IIDs (``sample_ids``).
        ``G.variant_table`` holds chrom, id, allele_1 (ALT, the record's second allele) and
        allele_2 (REF, its first) as object arrays of str, and pos as int64. ``G.sample_table``
        holds fid (ID_1 of a two-ID .sample, otherwise None) and iid, plus a .sample's other
        columns by lower-case name (missing, sex, phenotypes), as strings.

    Raises
    ------
    FileNotFoundError
        No file at ``path`` or ``sample_path``.
    ValueError
        Not a BGEN (its bytes 16-19 are not 'bgen'), a header or variant the bgen package cannot
        read (a truncated or damaged file, naming the variant), no sample IDs anywhere, a .sample
        whose rows or fields do not fit, duplicate IIDs or variant IDs, a multi-allelic variant,
        ploidy above 2, an unknown sample in ``samples``, a threshold out of range.
    ImportError
        The bgen package is not installed.

    See Also
    --------
    read_plink : The PLINK 1 fileset ``plink2 --bgen FILE ref-first --make-bed`` writes, read in place.
    PackedGenotypes : What it returns, and how the estimators read it.

    Notes
    -----
    Memory: the packed calls (n / 4 bytes a variant) are allocated once and filled a block at a
    time; on top are one block of int8 calls (at most 2,000 variants and about 2 million calls) and
    one variant's probabilities and their temporaries (under 200 bytes a sample: 46 MiB in all at
    200,000 samples x 200 variants, 9.5 MiB of it the result), plus the variant table's strings.
    The bit depth of each layout 2 variant, which the package does not report, is read from the
    file (the block's byte of it, or its lengths), and the stored integers are recovered from the
    package's float32 probabilities with it; the call of each integer comes from a table (up to 16
    bits) or plink2's arithmetic.

    Examples
    --------
    This needs the bgen package (``pip install bgen``, or the extra ``pip install
    "interptrees[genomics]"``), which also writes the toy file below; the lines that need it are
    skipped when the examples are tested. A BGEN of 3 samples and 2 variants in the current
    directory, each variant's rows P(AA), P(AB), P(BB) of a sample:

    >>> import numpy as np
    >>> from pyinterp.io import read_bgen
    >>> from bgen import BgenWriter  # doctest: +SKIP
    >>> with BgenWriter("toy.bgen", 3, samples=["s1", "s2", "s3"]) as writer:  # doctest: +SKIP
    ...     writer.add_variant("v1", "rs1", "1", 1000, ["A", "G"], np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1.]]))
    ...     writer.add_variant("v2", ".", "1", 2000, ["C", "T"],
    ...                        np.array([[0.96, 0.04, 0], [0.5, 0.5, 0], [np.nan] * 3]))
    >>> G = read_bgen("toy.bgen")  # doctest: +SKIP
    >>> G  # doctest: +SKIP
    PackedGenotypes(3 samples x 2 variants, counting allele 1)
    >>> list(G.variant_ids), list(G.variant_table["allele_1"]), list(G.sample_ids)  # doctest: +SKIP
    (['rs1', 'v2'], ['G', 'T'], ['s1', 's2', 's3'])

    Copies of the second allele; of v2's, 0.04 is called 0, 0.5 is not called, and s3 is missing:

    >>> np.asarray(G)  # doctest: +SKIP
    array([[ 0.,  0.],
           [ 1., nan],
           [ 2., nan]], dtype=float32)

    With a stricter threshold 0.04 copies is no longer within it:

    >>> np.asarray(read_bgen("toy.bgen", hard_call_threshold=0.01))[0]  # doctest: +SKIP
    array([ 0., nan], dtype=float32)
    """
    try:
        import bgen
    except ImportError:
        raise ImportError("read_bgen reads .bgen files with the bgen package (MIT licence), which is not installed: "
                          "pip install bgen") from None
    if not hasattr(bgen, "BgenReader"):
        raise ImportError(f"read_bgen needs the bgen package (pip install bgen), but 'import bgen' found "
                          f"{getattr(bgen, '__file__', bgen)!r}, which shadows it")
    threshold = _threshold_units(hard_call_threshold)
    path = Path(os.fspath(path))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (expected a .bgen file)")
    header = _read_header(path)
    n = header["n_samples"]
    if sample_path is not None:
        sample_path = Path(os.fspath(sample_path))
        if not sample_path.is_file():
            raise FileNotFoundError(f"{sample_path}: no such file (expected an Oxford .sample file)")
    elif not header["has_sample_ids"]:
        beside = path.with_suffix(".sample")
        if not beside.is_file():
            raise ValueError(f"{path}: the BGEN embeds no sample IDs and there is no {beside.name} beside it; pass "
                             "sample_path= (an Oxford .sample file with a row per sample, in the BGEN's order)")
        sample_path = beside
    try:
        reader = bgen.BgenReader(str(path), delay_parsing=True)
    except Exception as e:  # the C++ reader raises ValueError, RuntimeError or OSError
        raise ValueError(f"{path}: the bgen package cannot read its header ({_message(e)}); the file is truncated or "
                         "damaged") from e
    try:
        if sample_path is not None:
            table = _read_sample_file(sample_path, path, n)
        else:
            table = _embedded_samples(reader, path, n)
        rows = None if samples is None else select_samples(table["iid"], samples, path,
                                                           listed="sample IDs (IIDs)", one="IID")
        if rows is not None:
            table = {key: None if column is None else column[rows] for key, column in table.items()}
        with open(path, "rb") as raw:
            calls, variants = _read(reader, raw, path, header, rows, threshold)
    finally:
        reader.close()
    n_kept = len(table["iid"])
    return PackedGenotypes(calls, n_kept, variant_ids=variants["id"], sample_ids=table["iid"], sample_table=table,
                           variant_table=variants)


def _message(error):
    text = str(error).strip() or type(error).__name__
    return text


def _threshold_units(value):
    """plink2's integer T for --hard-call-threshold value (plink2.cc: 'hard-call-threshold')."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"hard_call_threshold must be a number from 0 to below 0.5, got {value!r}")
    value = float(value)
    if value < 0.0 or value >= 0.5 - _SMALL_EPSILON:
        raise ValueError(f"hard_call_threshold must be from 0 to below 0.5 (plink2's --hard-call-threshold), got "
                         f"{value!r}")
    return int(value * ((1 + _SMALL_EPSILON) * _ONE))


def _read_header(path):
    """The first 20 bytes and the flags (spec: https://www.well.ox.ac.uk/~gav/bgen_format/spec/latest.html)."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        start = f.read(20)
        if len(start) < 20:
            raise ValueError(f"{path}: {size} bytes, too short to be a BGEN file (its header alone is 24 bytes or "
                             "more)")
        offset, header_length, n_variants, n_samples = struct.unpack("<4I", start[:16])
        magic = start[16:20]
        if magic not in _MAGICS:
            raise ValueError(f"{path}: not a BGEN file (bytes 16-19 are {magic!r}, where a BGEN has b'bgen')")
        if header_length < 20 or header_length > offset or offset + 4 > size:
            raise ValueError(f"{path}: not a readable BGEN file (its header gives a header length of {header_length} "
                             f"and a first variant at byte {offset + 4}, in a file of {size} bytes); the file is "
                             "truncated or damaged")
        f.seek(header_length)
        flags = f.read(4)
    if len(flags) < 4:
        raise ValueError(f"{path}: the BGEN header is cut short; the file is truncated or damaged")
    flags = int.from_bytes(flags, "little")
    compression, layout = flags & 3, (flags >> 2) & 15
    if layout not in (1, 2) or compression == 3 or (layout == 1 and compression == 2):
        raise ValueError(f"{path}: layout {layout} with compression code {compression} is not a BGEN v1.1, v1.2 or "
                         "v1.3 file (layout 1 or 2; none, zlib or zstd), which is what can be read (plink2 too); "
                         "convert it with qctool first")
    if n_variants == 0:
        raise ValueError(f"{path}: no variants (the BGEN header counts 0)")
    if n_samples == 0:
        raise ValueError(f"{path}: no samples (the BGEN header counts 0)")
    return {"n_variants": n_variants, "n_samples": n_samples, "layout": layout, "compression": compression,
            "has_sample_ids": bool(flags >> 31)}


def _embedded_samples(reader, path, n):
    try:
        names = list(reader.samples)
    except Exception as e:
        raise ValueError(f"{path}: the bgen package cannot read its sample IDs ({_message(e)}); the file is truncated "
                         "or damaged") from e
    if len(names) != n:
        raise ValueError(f"{path}: the BGEN embeds {len(names)} sample IDs for {n} samples")
    iid = np.array(names, dtype=object)
    _check_unique(iid, lambda k: f"sample {k + 1}", f"{path}: sample ID", " of the IDs the BGEN embeds")
    return {"fid": None, "iid": iid}


def _check_unique(ids, where, what, origin):
    repeat = first_repeat(ids)
    if repeat:
        i, j = repeat
        raise ValueError(f"{what} {ids[j]!r} is {where(i)} and {where(j)}{origin}; sample IDs must be unique")


def _open_text(path):
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    if gzipped:
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _read_sample_file(path, bgen_path, n):
    """An Oxford .sample file (https://www.cog-genomics.org/plink/2.0/formats#sample), as plink2 reads it."""
    header = types = None
    rows, lines = [], []
    with _open_text(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if header is None:
                header, header_line = fields, number
                continue
            if types is None:
                bad = [t for t in fields if t not in ("0", "D", "C", "P", "B")]
                if len(fields) != len(header) or bad:
                    raise ValueError(f"{path}, line {number}: the second header line of a .sample gives each "
                                     f"column's type (0, D, C, P or B), one for each of the {len(header)} columns of "
                                     f"line {header_line}; got {line.strip()[:80]!r}")
                types = fields
                continue
            if len(fields) != len(header):
                raise ValueError(f"{path}, line {number}: expected {len(header)} fields ({' '.join(header)[:60]}), got "
                                 f"{len(fields)}: {line.strip()[:80]!r}")
            rows.append(fields)
            lines.append(number)
    if types is None:
        raise ValueError(f"{path}: not an Oxford .sample file (it needs a header line naming the columns, a line of "
                         "their types and a row per sample)")
    if len(rows) != n:
        raise ValueError(f"{path}: {len(rows)} samples, but {bgen_path.name} has {n}; the .sample must have one row "
                         "per sample of the BGEN, in its order")
    columns = [np.array(column, dtype=object) for column in zip(*rows)]
    two_ids = len(header) > 1 and header[1] == "ID_2"
    table = {"fid": columns[0] if two_ids else None, "iid": columns[1] if two_ids else columns[0]}
    for k, (name, column) in enumerate(zip(header, columns)):
        if k < 1 + two_ids:
            continue
        key = name.lower()
        if key in table:
            key = name if name not in table else f"{name}_{k + 1}"
        table[key] = column
    _check_unique(table["iid"], lambda k: f"on line {lines[k]}", f"{path}: IID", "")
    return table


def _read(reader, raw, path, header, rows, threshold):
    n, p, layout = header["n_samples"], header["n_variants"], header["layout"]
    n_kept = n if rows is None else len(rows)
    calls = np.empty((p, (n_kept + 3) // 4), dtype=np.uint8)
    step = max(1, min(_BLOCK_VARIANTS, _BLOCK_CALLS // n_kept))
    block = np.empty((min(step, p), n_kept), dtype=np.int8)
    chrom, pos, ids, ref, alt = [], [], [], [], []
    seen = {}
    variants = iter(reader)
    fill = start = 0
    for k in range(p):
        where = f"variant {k + 1} of {p}"
        try:
            var = next(variants)
            alleles, c, bp = var.alleles, var.chrom, var.pos
            where += f" ({c}:{bp})"
            rsid, varid = var.rsid, var.varid
        except StopIteration:
            raise ValueError(f"{path}: the header counts {p} variants, but the file ends after {k}; the file is "
                             "truncated") from None
        except Exception as e:
            raise ValueError(f"{path}: {where} cannot be read ({_message(e)}); the file is truncated or "
                             "damaged") from e
        if len(alleles) != 2:
            shown = ",".join(alleles) if alleles else "none"
            raise ValueError(f"{path}: {where}, ID {rsid or varid or '.'}, has {len(alleles)} alleles ({shown}); a "
                             ".bed holds two alleles a variant, and plink2 skips such variants (multi-allelic ones "
                             "with a warning): drop them first (bgenix -g FILE -excl-rsids ID ..., or qctool "
                             "-excl-rsids)")
        name = rsid if rsid not in ("", ".") else varid if varid not in ("", ".") else \
            f"{c}:{bp}:{alleles[0]}:{alleles[1]}"
        if name in seen:
            first, first_where = seen[name]
            raise ValueError(f"{path}: variant ID {name!r} is variant {first + 1} ({first_where}) and variant {k + 1} "
                             f"({c}:{bp}); IDs must be unique (plink2 --set-all-var-ids or qctool can rename them)")
        seen[name] = (k, f"{c}:{bp}")
        chrom.append(c)
        pos.append(bp)
        ids.append(name)
        ref.append(alleles[0])
        alt.append(alleles[1])
        try:
            ploidy, phased = var.ploidy, var.is_phased
            top = ploidy.max(initial=0)
            probs = var.probabilities if top > 0 else None  # ploidy 0 everywhere: every call missing
        except Exception as e:
            raise ValueError(f"{path}: {where}, ID {name}: its genotype probabilities cannot be read "
                             f"({_message(e)}); the file is truncated or damaged") from e
        if top > 2:
            s = int(np.argmax(ploidy > 2))
            raise ValueError(f"{path}: {where}, ID {name}: sample {s + 1} has ploidy {int(ploidy[s])}; hardcalls hold "
                             "at most two allele copies, and plink2 refuses ploidy above 2 too")
        row = block[fill]
        if probs is None:
            row[:] = -1
            problem = None
        elif layout == 1:
            problem = _layout1_counts(probs if rows is None else probs[rows], threshold, row)
        else:
            bits = _bit_depth(raw, var, header, n, int(ploidy.sum(dtype=np.int64)))
            if rows is not None:
                probs, ploidy = probs[rows], ploidy[rows]
            problem = _layout2_counts(probs, ploidy, phased, bits, threshold, row)
        if problem is not None:
            sample, text = problem
            if sample is None:
                raise ValueError(f"{path}: {where}, ID {name}: {text}")
            sample = sample if rows is None else int(rows[sample])
            raise ValueError(f"{path}: {where}, ID {name}, sample {sample + 1}: {text}")
        fill += 1
        if fill == len(block) or k == p - 1:
            pack_counts(block[:fill], out=calls[start:start + fill])
            start += fill
            fill = 0
    table = {"chrom": np.array(chrom, dtype=object), "id": np.array(ids, dtype=object),
             "pos": np.array(pos, dtype=np.int64), "allele_1": np.array(alt, dtype=object),
             "allele_2": np.array(ref, dtype=object)}
    return calls, table


def _bit_depth(raw, var, header, n, stored):
    """Bits a probability of this layout 2 variant, from the file: None when it cannot be told.

    The genotype block follows the variant's identifying data; uncompressed, its byte 13 + N is
    the bit depth; compressed, its second 4 bytes are the decompressed length, 10 + N +
    ceil(bits * stored / 8), which fixes the bits once 8 or more values are stored (a biallelic
    variant stores one value per allele copy, missing samples included).
    """
    if stored == 0:
        return None
    start = var.fileoffset + 2 + 2 + 2 + 4 + 2
    start += sum(len(s.encode("utf-8")) for s in (var.varid, var.rsid, var.chrom))
    start += sum(4 + len(a.encode("utf-8")) for a in var.alleles)
    raw.seek(start)
    head = raw.read(8)
    if len(head) < 8:
        return None
    length, size = struct.unpack("<2I", head)
    compression = header["compression"]
    if compression == 0:
        raw.seek(start + 4 + 9 + n)
        byte = raw.read(1)
        return byte[0] if byte else None
    payload = size - 10 - n
    fits = [bits for bits in range(1, 33) if (bits * stored + 7) // 8 == payload]
    if len(fits) == 1:
        return fits[0]
    if compression == 1 and length > 4:
        try:
            data = zlib.decompressobj().decompress(raw.read(length - 4), 10 + n)
        except zlib.error:
            return None
        return data[9 + n] if len(data) >= 10 + n else None
    return None


def _layout2_counts(probs, ploidy, phased, bits, threshold, out):
    """ALT copies of one layout 2 variant into out (int8, -1 missing) by plink2's rule.

    Returns None, or (sample index or None, problem) for a variant that cannot be read.
    """
    missing = np.isnan(probs[:, 0])
    haploid = None
    if ploidy.min(initial=2) < 2:
        haploid = ploidy == 1
        missing |= ploidy == 0
    first = probs[:, 0]
    other = probs[:, 2] if phased and probs.shape[1] > 2 else probs[:, 1]
    if bits is not None and bits <= _EXACT_BITS:
        scale = (1 << bits) - 1
        k1, k2 = first * scale, other * scale
        drift = max(_drift(k1), _drift(k2))  # rounds k1, k2 in place
        if drift > 0.25:
            return None, (f"its probabilities are not multiples of 1/{scale}, though its genotype block gives {bits} "
                          "bits a value; the file is damaged or not laid out as the BGEN spec says")
        np.fmax(k1, 0.0, out=k1)  # NaN (missing; hap 2 of a haploid sample) to 0
        np.fmax(k2, 0.0, out=k2)
        if haploid is not None:
            k2[haploid | missing] = 0.0  # a haploid sample counts its one allele twice
        if not phased:
            over = k1 + k2 > scale
            if over.any():
                s = int(np.argmax(over))
                return s, (f"P(AA) + P(AB) = {(k1[s] + k2[s]) / scale:.6g} > 1 (stored {bits}-bit values "
                           f"{int(k1[s])} + {int(k2[s])} > {scale}); plink2 refuses such files as malformed")
            k1 *= 2
        elif haploid is not None:
            k1[haploid] *= 2
        k1 += k2  # m: 2 k(AA) + k(AB), k(hap 1) + k(hap 2), or 2 k(A)
        m = k1.astype(np.intp)
        if bits <= _TABLE_BITS:
            np.take(_call_table(bits, threshold), m, out=out)
        else:
            _calls((m * _ONE + (1 << (bits - 1))) // scale, missing, threshold, out, count_first=True)
    else:
        first = np.where(missing, 0.0, first)
        other = np.where(missing if haploid is None else missing | haploid, 0.0, other)
        if not phased:
            over = first + other > 1 + 1e-6
            if over.any():
                s = int(np.argmax(over))
                return s, f"P(AA) + P(AB) = {first[s] + other[s]:.6g} > 1; plink2 refuses such files as malformed"
        m = (first if phased else 2 * first) + other
        if haploid is not None:
            m[haploid] = 2 * first[haploid]
        dosage = np.clip(np.floor(m * _ONE + 0.5), 0, 2 * _ONE).astype(np.int64)
        _calls(dosage, missing, threshold, out, count_first=True)
    out[missing] = -1
    return None


def _drift(values):
    """Largest distance of the values (NaN skipped) from the integers they are rounded to in place."""
    rounded = np.rint(values)
    rounded -= values
    np.abs(rounded, out=rounded)
    worst = np.fmax.reduce(rounded, initial=0.0)
    np.rint(values, out=values)
    return float(worst)


@functools.lru_cache(maxsize=16)
def _call_table(bits, threshold):
    """ALT copies (or -1) for each m = 0 .. 2 (2^bits - 1) on this grid: plink2's dosage and hardcall."""
    scale = (1 << bits) - 1
    m = np.arange(2 * scale + 1, dtype=np.int64)
    dosage = m * _ONE if bits == 1 else (m * _ONE + (1 << (bits - 1))) // scale
    table = np.empty(len(m), dtype=np.int8)
    _calls(dosage, np.zeros(len(m), dtype=bool), threshold, table, count_first=True)
    return table


def _layout1_counts(probs, threshold, out):
    """ALT copies of one layout 1 (BGEN v1.1) variant: P(AA), P(AB), P(BB) as 16-bit integers over 32768."""
    missing = np.isnan(probs[:, 0])
    u = np.rint(np.where(missing[:, None], 0.0, probs) * 32768).astype(np.int64)
    numer = _ONE * u[:, 1] + 2 * _ONE * u[:, 2]
    total = u.sum(axis=1)
    dosage = (numer + total // 2) // np.maximum(total, 1)  # plink2 rounds half up, but half to even at 32768
    even = total == 2 * _ONE
    dosage[even] = (numer[even] + _ONE) // (2 * _ONE) - (numer[even] % (4 * _ONE) == _ONE)
    _calls(dosage, missing, threshold, out, count_first=False)
    return None


def _calls(dosage, missing, threshold, out, count_first):
    """Hardcalls from dosages on plink2's grid (16384 a copy): the count when within threshold of one."""
    rest = dosage & (_ONE - 1)
    called = ((rest <= threshold) | (rest >= _ONE - threshold)) & ~missing
    count = (dosage + _HALF) >> 14
    if count_first:  # dosage of the first allele (REF): ALT copies are the rest
        count = 2 - count
    np.copyto(out, np.where(called, count, -1), casting="unsafe")
