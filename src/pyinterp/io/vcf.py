"""VCF and BCF files (.vcf, .vcf.gz, .bcf) read through cyvcf2 into packed genotypes."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from .packed import PackedGenotypes
from .names import select_samples
from .packing import pack_counts

# Calls decoded before a block is packed: at most this many variants, and about this many calls in all
# (the int8 block is one byte a call; pack_counts's temporaries are about ten more: some 10 MB).
_BLOCK_VARIANTS = 2000
_BLOCK_CALLS = 1 << 20
_HALF_CALL_MODES = ("error", "missing", "haploid", "reference")
_NAMED = 3  # variants or calls a warning or an error names before "..."


def read_vcf(path, *, samples=None, half_call="error"):
    """Read the GT calls of a VCF or BCF file as packed genotypes counting the ALT allele.

    Each call becomes its number of ALT alleles (0, 1 or 2), as ``plink2 --vcf FILE --make-bed``
    writes it: the ALT allele is allele 1 (the .bim's fifth column) and REF allele 2, so
    ``np.asarray(G)`` holds ALT counts with NaN for missing calls, and the forests read the calls
    packed two bits each (a quarter of a byte a call). Records are read a block at a time and each
    block is packed at once: the whole file is never held as one byte or a float a call.

    The calls follow PLINK's import (PLINK 1.9 ``--vcf`` and PLINK 2 ``--vcf``) with its default
    options:

    - Phase is dropped: ``0|1`` and ``1|0`` are heterozygous like ``0/1`` (a .bed has no phase).
    - A haploid call (chrX or chrY of a male, chrM: ``0`` or ``1`` alone) counts as homozygous:
      ``1`` is 2 ALT copies, ``0`` is none, ``.`` is missing. PLINK stores haploid calls so.
    - A missing call (``./.``, ``.|.``, ``.``) is missing.
    - A half-call (``0/.``, ``./1``) is an error naming the variant and sample, as PLINK's
      ``--vcf-half-call`` default; ``half_call`` chooses another of PLINK's readings.
    - A call of more than two alleles (``0/0/1``) is missing, as PLINK codes polyploid calls;
      a warning counts them.
    - A record whose FORMAT has no GT is kept with every call missing, as PLINK keeps it (its
      ``--vcf-require-gt`` drops such records); a warning counts and names them.
    - A multi-allelic record (two or more ALT alleles) is refused with ValueError naming it, as
      ``plink2 --make-bed`` refuses it (a .bed holds two alleles a variant): split such records
      into biallelic ones first (``bcftools norm -m -any``) or drop them (``bcftools view -M2``,
      ``plink2 --max-alleles 2``). A record with no ALT (ALT ``.``) is kept, allele 1 ``.``.

    Parameters
    ----------
    path : str or path-like
        A .vcf, .vcf.gz (bgzip or gzip) or .bcf file: anything cyvcf2 (htslib) opens.
    samples : list of str, optional
        The sample IDs to keep, as the header names them; kept in the file's order whatever the
        list's order. An ID the file does not have is a ValueError. Default: every sample.
    half_call : {"error", "missing", "haploid", "reference"}, default="error"
        How to read a call with one allele missing (``0/.``), as PLINK's ``--vcf-half-call``:
        refuse it, make it missing, read the known allele as a haploid call (``1/.`` is 2 ALT
        copies), or read the missing allele as REF (``1/.`` is 1 ALT copy).

    Returns
    -------
    PackedGenotypes
        n samples x p variants (the records, in file order), counting ALT copies. Named by the ID
        column (``variant_ids``; an ID ``.`` becomes ``CHROM:POS:REF:ALT``, and IDs must then be
        unique) and the header's sample names (``sample_ids``), with ``G.sample_table`` ({"fid":
        None, "iid": names}) and ``G.variant_table`` ({"chrom", "id", "allele_1" (ALT), "allele_2"
        (REF)} as object arrays of str, "pos" as int64).

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        A file cyvcf2 cannot read (its message follows the file's name), a header with no samples,
        no records, a multi-allelic record, a GT allele beyond the record's alleles, a half-call
        (with ``half_call="error"``), duplicate variant IDs, an unknown sample in ``samples``.
    ImportError
        cyvcf2 is not installed.

    See Also
    --------
    read_plink : The PLINK 1 fileset ``plink2 --vcf FILE --make-bed`` writes, read in place.
    PackedGenotypes : What it returns, and how the estimators read it.

    Notes
    -----
    Memory: the packed calls (n / 4 bytes a variant) are collected a block at a time and joined
    once at the end (the number of records is not known before), so the peak is twice the packed
    result, plus one block of int8 counts (at most 2,000 variants and about a million calls: 1 MB)
    and pack_counts's temporaries for it (about ten bytes a call: 10 MB), plus the variant table's
    strings (some 300 bytes a variant). The whole file is never one byte or a float a call.

    Examples
    --------
    This needs cyvcf2 (``pip install cyvcf2``, or the extra ``pip install "interptrees[genomics]"``);
    the lines that need it are skipped when the examples are tested. A VCF of 3 samples and 3
    records in the current directory:

    >>> import numpy as np
    >>> from pyinterp.io import read_vcf
    >>> with open("toy.vcf", "w") as f:
    ...     _ = f.write("##fileformat=VCFv4.2\\n##contig=<ID=1>\\n##contig=<ID=X>\\n"
    ...                 '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\\n'
    ...                 "#CHROM\\tPOS\\tID\\tREF\\tALT\\tQUAL\\tFILTER\\tINFO\\tFORMAT\\tana\\tbob\\tcyd\\n"
    ...                 "1\\t1000\\trs10\\tA\\tG\\t.\\t.\\t.\\tGT\\t0/0\\t0|1\\t1/1\\n"
    ...                 "1\\t2000\\t.\\tC\\tT\\t.\\t.\\t.\\tGT\\t./.\\t1|1\\t0/1\\n"
    ...                 "X\\t3000\\trs30\\tG\\tA\\t.\\t.\\t.\\tGT\\t1\\t0/1\\t0\\n")
    >>> G = read_vcf("toy.vcf")  # doctest: +SKIP
    >>> G  # doctest: +SKIP
    PackedGenotypes(3 samples x 3 variants, counting allele 1)
    >>> list(G.variant_ids), list(G.sample_ids)  # doctest: +SKIP
    (['rs10', '1:2000:C:T', 'rs30'], ['ana', 'bob', 'cyd'])

    ALT copies, NaN for the missing call; the haploid calls of X (``1``, ``0``) count 2 and 0:

    >>> np.asarray(G)  # doctest: +SKIP
    array([[ 0., nan,  2.],
           [ 1.,  2.,  1.],
           [ 2.,  1.,  0.]], dtype=float32)
    >>> list(G.variant_table["allele_1"]), list(G.variant_table["allele_2"])  # doctest: +SKIP
    (['G', 'T', 'A'], ['A', 'C', 'G'])

    Some of the samples, kept in the file's order:

    >>> G = read_vcf("toy.vcf", samples=["cyd", "ana"])  # doctest: +SKIP
    >>> list(G.sample_ids), np.asarray(G)[:, 0]  # doctest: +SKIP
    (['ana', 'cyd'], array([0., 2.], dtype=float32))
    """
    try:
        import cyvcf2
    except ImportError:
        raise ImportError("read_vcf needs cyvcf2 (MIT licence; its wheels carry htslib): pip install cyvcf2") from None
    if half_call not in _HALF_CALL_MODES:
        raise ValueError(f"half_call must be one of {', '.join(map(repr, _HALF_CALL_MODES))}, got {half_call!r}")
    path = Path(os.fspath(path))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (expected a .vcf, .vcf.gz or .bcf file)")
    try:
        vcf = cyvcf2.VCF(str(path))
    except Exception as e:  # cyvcf2 raises OSError or a bare Exception, htslib's details go to stderr
        if path.stat().st_size == 0:
            raise ValueError(f"{path}: empty file (expected a VCF or BCF file)") from e
        hint = "; a malformed header line or a duplicated sample name" if "header" in str(e) else ""
        raise ValueError(f"{path}: cyvcf2 cannot read it as a VCF or BCF file ({e}{hint})") from e
    try:
        return _read(vcf, path, samples, half_call)
    finally:
        vcf.close()


def _read(vcf, path, samples, half_call):
    names, subset = list(vcf.samples), None
    if not names:
        raise ValueError(f"{path}: no samples (its header line names no sample columns: a sites-only VCF has no "
                         "genotypes)")
    if samples is not None:
        rows = select_samples(names, samples, path)
        names = [names[k] for k in rows]
        if len(names) < len(vcf.samples):
            if any("," in s for s in names):  # htslib takes the selection as one comma-separated string
                subset = rows
            else:  # htslib then decodes only these samples' calls
                vcf.set_samples(names)
                if list(vcf.samples) != names:  # htslib keeps the header's order: checked, not assumed
                    raise RuntimeError(f"{path}: cyvcf2 selected samples {list(vcf.samples)[:5]}, expected {names[:5]}")
    n = len(names)
    block = max(1, min(_BLOCK_VARIANTS, _BLOCK_CALLS // n))
    counts = np.empty((block, n), dtype=np.int8)
    packed, fill = [], 0
    chrom, pos, ids, ref, alt = [], [], [], [], []
    no_gt, polyploid = [], [0, 0]  # records without GT; polyploid calls and the records holding them
    seen = {}
    records = iter(vcf)
    record = 0
    while True:
        try:
            v = next(records)
        except StopIteration:
            break
        except Exception as e:
            after = f" (after {chrom[-1]}:{pos[-1]})" if chrom else ""
            raise ValueError(f"{path}: record {record + 1}{after} cannot be parsed: {e}") from e
        record += 1
        c, p, r, alts = v.CHROM, v.start + 1, v.REF, v.ALT  # not v.POS: a C int, wrong past 2**31 - 1
        where = f"record {record} ({c}:{p}"
        if len(alts) > 1:
            raise ValueError(f"{path}: {where}, ID {v.ID or '.'}) is multi-allelic (REF {r}, ALT {','.join(alts)}); a "
                             ".bed holds two alleles a variant, so plink2 --make-bed refuses it too: split it into "
                             "biallelic records (bcftools norm -m -any) or drop such records (bcftools view -M2)")
        a = alts[0] if alts else "."
        name = v.ID or f"{c}:{p}:{r}:{a}"
        if name in seen:
            first_record, first_chrom, first_pos = seen[name]
            raise ValueError(f"{path}: variant ID {name!r} at record {first_record} ({first_chrom}:{first_pos}) and "
                             f"{where}); IDs must be unique (bcftools annotate --set-id or plink2 --set-all-var-ids "
                             "can rename them)")
        seen[name] = (record, c, p)
        chrom.append(c)
        pos.append(p)
        ids.append(name)
        ref.append(r)
        alt.append(a)
        row = counts[fill]
        if "GT" in v.FORMAT:
            try:
                gt = v.genotype.array()
            except Exception as e:
                raise ValueError(f"{path}: {where}, ID {name}): cyvcf2 cannot read its GT field ({e})") from e
            if subset is not None:
                gt = gt[subset]
            bad = _alt_counts(gt, len(alts), half_call, row, polyploid)
            if bad is not None:
                sample, problem = bad
                raise ValueError(f"{path}: {where}, ID {name}), sample {names[sample]!r}: {problem}")
        else:
            row[:] = -1
            no_gt.append(f"{name} ({c}:{p})")
        fill += 1
        if fill == block:
            packed.append(pack_counts(counts))
            fill = 0
    if fill:
        packed.append(pack_counts(counts[:fill]))
    del counts
    if not ids:
        raise ValueError(f"{path}: no variants (the file has a header and {n} samples but no records)")
    calls = packed[0] if len(packed) == 1 else np.concatenate(packed)
    del packed
    if no_gt:
        shown = ", ".join(no_gt[:_NAMED]) + (", ..." if len(no_gt) > _NAMED else "")
        warnings.warn(f"{path}: {_count(len(no_gt), 'record')} without a GT field, every call read as missing (as "
                      f"PLINK reads them): {shown}", stacklevel=3)
    if polyploid[0]:
        warnings.warn(f"{path}: {_count(polyploid[0], 'call')} of more than two alleles (in "
                      f"{_count(polyploid[1], 'record')}) read as missing, as PLINK reads them", stacklevel=3)
    variant_table = {"chrom": np.array(chrom, dtype=object), "id": np.array(ids, dtype=object),
                     "pos": np.array(pos, dtype=np.int64), "allele_1": np.array(alt, dtype=object),
                     "allele_2": np.array(ref, dtype=object)}
    iid = np.array(names, dtype=object)
    return PackedGenotypes(calls, n, variant_ids=variant_table["id"], sample_ids=iid,
                           sample_table={"fid": None, "iid": iid}, variant_table=variant_table)


def _call_table(half_call):
    """ALT copies of a call of at most two alleles a and b, at [(a + 2) * 4 + b + 2] for a, b in -2..1.

    -1 is an allele left missing (``.``), -2 no allele (past the call's end: ``b`` of a haploid
    call). -1 in the table is a missing call, -3 a half-call to refuse.
    """
    table = np.full(16, -1, dtype=np.int8)
    for a in (-1, 0, 1):
        for b in (-2, -1, 0, 1):
            if b == -2:  # haploid: homozygous, as PLINK stores it
                value = -1 if a == -1 else 2 * a
            elif a >= 0 and b >= 0:
                value = a + b
            elif a == b:  # ./.
                value = -1
            else:  # 0/., ./1
                known = max(a, b)
                value = {"error": -3, "missing": -1, "haploid": 2 * known, "reference": known}[half_call]
            table[(a + 2) * 4 + b + 2] = value
    return table


_CALL_TABLES = {mode: _call_table(mode) for mode in _HALF_CALL_MODES}
_HALF = -3


def _alt_counts(gt, n_alt, half_call, out, polyploid):
    """ALT copies of each call, from cyvcf2's genotype array, into out (int8, -1 missing).

    gt is (n_samples, ploidy + 1) int16: allele indices (-1 a missing allele, -2 past the call's
    end) and a last column of phase flags, ignored. Returns None, or (sample, problem) for a call
    that cannot be read.
    """
    alleles = gt[:, :-1]
    if alleles.max() > n_alt:
        k = int(np.flatnonzero((alleles > n_alt).any(axis=1))[0])
        return k, (f"GT {_gt_text(gt[k])} names allele {int(alleles[k].max())}, but the record has "
                   f"{n_alt} ALT allele{'s' if n_alt != 1 else ''}")
    index = alleles[:, 0] + 2
    index *= 4
    index += alleles[:, 1] + 2 if alleles.shape[1] > 1 else 0
    np.take(_CALL_TABLES[half_call], index, out=out, mode="clip")  # clip: below -2 is no allele
    if half_call == "error" and out.min() == _HALF:
        k = int(np.flatnonzero(out == _HALF)[0])
        return k, (f"half-call GT {_gt_text(gt[k])} (one allele missing): PLINK refuses these too; pass "
                   "half_call='missing', 'haploid' or 'reference' to read them as PLINK's --vcf-half-call does")
    if alleles.shape[1] > 2:  # a call of three or more alleles is missing, as PLINK reads it
        more = (alleles[:, 2:] != -2).any(axis=1)
        if more.any():
            out[more] = -1
            polyploid[0] += int(more.sum())
            polyploid[1] += 1
    return None


def _count(k, what):
    return f"{k} {what}{'' if k == 1 else 's'}"


def _gt_text(row):
    """A call as the VCF spells it, from its row of cyvcf2's genotype array."""
    return ("|" if row[-1] else "/").join("." if a == -1 else str(int(a)) for a in row[:-1] if a != -2)
