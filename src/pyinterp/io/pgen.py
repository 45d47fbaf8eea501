"""PLINK 2 filesets (.pgen / .pvar / .psam): hardcalls read with pgenlib into packed genotypes."""

from __future__ import annotations

import gzip
import io
import os
from pathlib import Path

import numpy as np

from .packed import PackedGenotypes
from .names import first_repeat
from .packing import pack_counts

# Variants read at a time: at most _BLOCK_VARIANTS, and at most _BLOCK_CALLS calls (one int8 each in
# pgenlib's buffer; pack_counts makes about a dozen bytes of temporaries a call on top).
_BLOCK_VARIANTS = 2000
_BLOCK_CALLS = 1 << 21

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"
_PVAR_COLUMNS = ("POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO", "CM")  # after #CHROM, any order
_PVAR_REQUIRED = ("POS", "ID", "REF", "ALT")
_BIM_LAYOUTS = {6: ("CHROM", "ID", "CM", "POS", "ALT", "REF"), 5: ("CHROM", "ID", "POS", "ALT", "REF")}
_FAM_LAYOUT = ("FID", "IID", "PAT", "MAT", "SEX", "PHENO1")  # plink2's names for a headerless .psam


def read_pgen(path):
    """Read a PLINK 2 fileset's hardcalls into packed genotypes, samples and variants by name.

    The .pgen is read with pgenlib (``pip install pgenlib``), a block of variants at a time, into
    two-bit calls as a PLINK 1 .bed holds them: the result takes a quarter byte a call, plus one
    block of one-byte calls while reading. The .pvar and .psam are parsed by the rules of PLINK 2
    (https://www.cog-genomics.org/plink/2.0/formats#pvar and #psam), and everything is checked
    first: each line's fields, integer positions, unique sample (FID, IID) and variant IDs, and the
    .pgen's sample and variant counts against the .psam's and .pvar's rows; a problem raises
    ValueError naming the file (and the line).

    - **Counted allele.** A call is the count of the ALT allele: allele 1 is ALT and allele 2 REF,
      as ``plink2 --make-bed`` writes them into a .bim's fifth and sixth columns, so the genotypes
      equal those of ``read_plink`` on that .bed.
    - **Multi-allelic variants** (an ALT with a comma) are refused, naming the first: plink2
      --make-bed refuses them too, and counting ALT1 alone would read an ALT2 homozygote as
      homozygous REF. Split them (``plink2 --pfile P --make-pgen multiallelics=- --out Q``) or
      drop them (``--max-alleles 2``) first.
    - **Dosages** are not read: only the hardcalls every .pgen stores. Data imported as dosages
      (from BGEN, or a VCF's DS field) holds the hardcalls derived at import (plink2's
      ``--hard-call-threshold``, default 0.1, as pgenlib's writer): a dosage within 0.1 of 0, 1
      or 2 reads as that count, any other as a missing call.
    - **.pvar.** Lines starting with '#' before the first variant are header lines (the '##'
      lines of a VCF); a line whose first field is ``#CHROM`` ends them and names the columns:
      POS, ID, REF and ALT are required, QUAL, FILTER, INFO and CM optional, in any order (others
      are ignored). Without that line the columns are a .bim's, CHROM ID CM POS ALT REF, or
      CHROM ID POS ALT REF when the first line has five fields. An ID of '.' becomes
      CHROM:POS:REF:ALT. A zstd-compressed .pvar.zst is read when the ``zstandard`` package is
      installed, and refused with what to do otherwise; gzip is read as well.
    - **.psam.** A header line starting with ``#FID`` or ``#IID`` (after any other '#' lines)
      names the columns: FID (first, or absent), IID (required), SID, PAT, MAT, SEX, and any
      others phenotypes. Without one the columns are a .fam's, named as plink2 names them: FID
      IID PAT MAT SEX PHENO1.

    Parameters
    ----------
    path : str or path-like
        The fileset's prefix, or the path of its .pgen, .pvar (or .pvar.zst) or .psam (the others
        lie beside it with the same prefix; a prefix takes the .pvar, or else the .pvar.zst).

    Returns
    -------
    PackedGenotypes
        n samples (the .psam's rows) x p variants (the .pvar's), counting ALT alleles, named by
        the .pvar's IDs and the .psam's IIDs. ``G.variant_table`` holds chrom, id, allele_1 (ALT),
        allele_2 (REF) as strings, pos as int64, and cm as float64 when the .pvar has a CM column.
        ``G.sample_table`` holds the .psam's columns by lower-case name as strings (fid, iid, sid,
        pat, mat, sex and the phenotypes), with "fid" None when the .psam has no FID column.

    Raises
    ------
    ImportError
        When pgenlib is not installed.
    FileNotFoundError
        When a file of the fileset is missing.
    ValueError
        When a file does not hold what it should (see above), or a variant is multi-allelic.

    See Also
    --------
    read_plink : The PLINK 1 fileset (.bed / .bim / .fam), read in place.
    PackedGenotypes : What it returns, and how the estimators read it.

    Examples
    --------
    This needs pgenlib (``pip install pgenlib``, or the extra ``pip install "interptrees[genomics]"``),
    which also writes the toy .pgen below; the lines that need it are skipped when the examples are
    tested. A fileset of 3 samples and 2 variants in the current directory:

    >>> import numpy as np
    >>> from pyinterp.io import read_pgen
    >>> import pgenlib  # doctest: +SKIP
    >>> alt_counts = np.array([[2, 1, -9], [0, 0, 2]], dtype=np.int8)  # 2 variants x 3 samples
    >>> writer = pgenlib.PgenWriter(b"toy.pgen", 3, variant_ct=2, nonref_flags=False)  # doctest: +SKIP
    >>> writer.append_biallelic_batch(alt_counts)  # doctest: +SKIP
    >>> writer.close()  # doctest: +SKIP
    >>> with open("toy.pvar", "w") as f:
    ...     _ = f.write("##fileformat=VCFv4.2\\n#CHROM\\tPOS\\tID\\tREF\\tALT\\n"
    ...                 "1\\t1000\\trs10\\tG\\tA\\n1\\t2000\\t.\\tT\\tC\\n")
    >>> with open("toy.psam", "w") as f:
    ...     _ = f.write("#IID\\tSEX\\ns1\\t1\\ns2\\t2\\ns3\\tNA\\n")

    Open it by its prefix (or the path of any of its three files):

    >>> G = read_pgen("toy")  # doctest: +SKIP
    >>> G  # doctest: +SKIP
    PackedGenotypes(3 samples x 2 variants, counting allele 1)
    >>> list(G.variant_ids), list(G.variant_table["allele_1"]), list(G.sample_ids)  # doctest: +SKIP
    (['rs10', '1:2000:T:C'], ['A', 'C'], ['s1', 's2', 's3'])

    ALT copies, NaN for the missing call; the .psam had no FID column:

    >>> np.asarray(G)  # doctest: +SKIP
    array([[ 2.,  0.],
           [ 1.,  0.],
           [nan,  2.]], dtype=float32)
    >>> G.sample_table["fid"] is None, list(G.sample_table["sex"])  # doctest: +SKIP
    (True, ['1', '2', 'NA'])
    """
    try:
        import pgenlib
    except ImportError:
        raise ImportError("read_pgen reads .pgen files with pgenlib, which is not installed: pip install pgenlib") \
            from None
    pgen, pvar, psam = _fileset(path)
    samples = _read_psam(psam)
    variants = _read_pvar(pvar)
    n, p = len(samples["iid"]), len(variants["id"])
    try:
        reader = pgenlib.PgenReader(os.fsencode(pgen))
    except (RuntimeError, ValueError, OSError) as error:
        raise ValueError(f"{pgen}: not a readable .pgen ({_message(error)})") from None
    try:
        n_pgen, p_pgen = reader.get_raw_sample_ct(), reader.get_variant_ct()
        if n_pgen != n:
            raise ValueError(f"{pgen}: {n_pgen} samples, but {psam.name} lists {n}; the .psam must have one row "
                             "per sample of the .pgen, in its order")
        if p_pgen != p:
            raise ValueError(f"{pgen}: {p_pgen} variants, but {pvar.name} lists {p}; the .pvar must have one row "
                             "per variant of the .pgen, in its order")
        calls = np.empty((p, (n + 3) // 4), dtype=np.uint8)
        step = max(1, min(_BLOCK_VARIANTS, _BLOCK_CALLS // n))
        block = np.empty((min(step, p), n), dtype=np.int8)
        for start in range(0, p, step):
            stop = min(start + step, p)
            counts = block[:stop - start]
            try:
                reader.read_range(start, stop, counts)  # ALT1 counts 0/1/2, -9 missing
            except (RuntimeError, ValueError) as error:
                raise ValueError(f"{pgen}: reading variants {start + 1} to {stop} of {p} failed "
                                 f"({_message(error)}); the file is truncated or damaged") from None
            pack_counts(counts, out=calls[start:stop])
    finally:
        reader.close()
    return PackedGenotypes(calls, n, variant_ids=variants["id"], sample_ids=samples["iid"], sample_table=samples,
                           variant_table=variants)


def _message(error):
    detail = error.args[0] if error.args else str(error)
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    return str(detail).strip().removeprefix("Error: ")


def _fileset(path):
    path = Path(os.fspath(path))
    name = path.name
    given_pvar = None
    for ext in (".pvar.zst", ".pgen", ".pvar", ".psam"):
        if name.endswith(ext) and len(name) > len(ext):
            if ext.startswith(".pvar"):
                given_pvar = path
            path = path.with_name(name[:-len(ext)])
            break
    stem = str(path)
    pgen, psam = Path(stem + ".pgen"), Path(stem + ".psam")
    pvar = given_pvar or Path(stem + ".pvar")
    if given_pvar is None and not pvar.is_file() and Path(stem + ".pvar.zst").is_file():
        pvar = Path(stem + ".pvar.zst")
    for f in (pgen, pvar, psam):
        if not f.is_file():
            hint = ""
            legacy = {".pvar": ".bim", ".psam": ".fam"}.get(f.suffix)
            if legacy and Path(stem + legacy).is_file():
                hint = (f"; there is a {Path(stem + legacy).name}: a .pgen with a .bim and .fam (plink2 --bpfile) "
                        f"reads here with them copied to {Path(stem).name}.pvar and .psam, whose formats take them")
            raise FileNotFoundError(f"{f}: no such file (a PLINK 2 fileset is a .pgen, a .pvar or .pvar.zst and a "
                                    f".psam with one prefix{hint})")
    return pgen, pvar, psam


def _open_text(path):
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == _ZSTD_MAGIC:
        try:
            import zstandard
        except ImportError:
            raise ValueError(f"{path}: compressed with zstd, which needs the zstandard package (pip install "
                             f"zstandard); or decompress it first: zstd -d {path} (writing it without .zst beside "
                             "it), or plink2 --pfile PREFIX vzs --make-pgen --out NEW to rewrite the fileset") from None
        return io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True),
                                encoding="utf-8", errors="replace")
    if magic[:2] == _GZIP_MAGIC:
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _late_hash(path, number, line, header):
    return ValueError(f"{path}, line {number}: starts with '#' after the {'header line' if header else 'rows'}; "
                      f"'#' lines are allowed only before the first row: {line.strip()[:80]!r}")


def _field_count(path, number, line, fields, width, meaning):
    if len(fields) != width:
        raise ValueError(f"{path}, line {number}: expected {width} fields ({meaning}), got {len(fields)}: "
                         f"{line.strip()[:80]!r}")


def _read_pvar(path):
    columns = None  # name -> field index
    width = meaning = None
    header = False
    chrom, pos, ids, ref, alt, cm, lines = [], [], [], [], [], [], []
    multi = []
    with _open_text(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if fields[0].startswith("#"):
                if columns is not None:
                    raise _late_hash(path, number, line, header)
                if fields[0] == "#CHROM":
                    columns, width, meaning = _pvar_header(path, number, fields), len(fields), " ".join(fields)
                    header = True
                continue
            if columns is None:  # no #CHROM line: a .bim's columns
                if len(fields) not in _BIM_LAYOUTS:
                    raise ValueError(f"{path}, line {number}: expected 6 fields (a .pvar without a #CHROM header line "
                                     "has a .bim's columns: CHROM ID CM POS ALT REF) or 5 (CHROM ID POS ALT REF), got "
                                     f"{len(fields)}: {line.strip()[:80]!r}")
                layout = _BIM_LAYOUTS[len(fields)]
                columns = {name: k for k, name in enumerate(layout)}
                width, meaning = len(fields), "no #CHROM line, so a .bim's columns: " + " ".join(layout)
            _field_count(path, number, line, fields, width, meaning)
            chrom.append(fields[0])
            value = fields[columns["POS"]]
            try:
                pos.append(int(value))
            except ValueError:
                raise ValueError(f"{path}, line {number}: POS must be an integer (a base-pair position), got "
                                 f"{value!r}") from None
            if "CM" in columns:
                value = fields[columns["CM"]]
                try:
                    cm.append(float(value))
                except ValueError:
                    raise ValueError(f"{path}, line {number}: CM must be a number (a centimorgan position), got "
                                     f"{value!r}") from None
            ids.append(fields[columns["ID"]])
            ref.append(fields[columns["REF"]])
            alt.append(fields[columns["ALT"]])
            lines.append(number)
            if "," in alt[-1]:
                multi.append(number)
    if not ids:
        raise ValueError(f"{path}: no variants")
    if multi:
        k = lines.index(multi[0])
        raise ValueError(f"{path}, line {multi[0]}: variant {ids[k]!r} is multi-allelic (ALT {alt[k]!r}; "
                         f"{len(multi)} such variant{'s' if len(multi) > 1 else ''} in all). Hardcalls count one "
                         "ALT allele, as a .bed does, and plink2 --make-bed refuses these too: split them "
                         "(plink2 --pfile PREFIX --make-pgen multiallelics=- --out NEW) or drop them "
                         "(plink2 --pfile PREFIX --max-alleles 2 --make-pgen --out NEW)")
    made = {k for k, v in enumerate(ids) if v == "."}
    for k in made:
        ids[k] = f"{chrom[k]}:{pos[k]}:{ref[k]}:{alt[k]}"
    repeat = first_repeat(ids)
    if repeat:
        i, k = repeat
        origin = " (made from CHROM:POS:REF:ALT for an ID of '.')" if k in made or i in made else ""
        raise ValueError(f"{path}: variant ID {ids[k]!r}{origin} on lines {lines[i]} and {lines[k]}; IDs must be "
                         "unique (plink2 --set-all-var-ids or --rm-dup can rename or drop them)")
    table = {"chrom": np.array(chrom, dtype=object), "id": np.array(ids, dtype=object),
             "pos": np.array(pos, dtype=np.int64), "allele_1": np.array(alt, dtype=object),
             "allele_2": np.array(ref, dtype=object)}
    if "CM" in columns:
        table["cm"] = np.array(cm, dtype=np.float64)
    return table


def _pvar_header(path, number, fields):
    columns = {"CHROM": 0}
    for k, name in enumerate(fields[1:], 1):
        if name == "FORMAT":  # a VCF as .pvar: sample columns follow
            break
        if name in _PVAR_COLUMNS:
            if name in columns:
                raise ValueError(f"{path}, line {number}: column {name} named twice in the #CHROM header line")
            columns[name] = k
    missing = [name for name in _PVAR_REQUIRED if name not in columns]
    if missing:
        raise ValueError(f"{path}, line {number}: the #CHROM header line has no {', '.join(missing)} column; "
                         f"POS, ID, REF and ALT are required (it names {' '.join(fields)[:80]!r})")
    return columns


def _read_psam(path):
    names = None
    rows, lines = [], []
    header = False
    with _open_text(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if fields[0].startswith("#"):
                if names is not None:
                    raise _late_hash(path, number, line, header)
                if fields[0] in ("#FID", "#IID"):
                    names, header = _psam_header(path, number, fields), True
                    meaning = " ".join(fields)
                continue
            if names is None:  # no #FID / #IID line: a .fam's columns
                names = list(_FAM_LAYOUT)
                meaning = "no #FID or #IID header line, so a .fam's columns: FID IID PAT MAT SEX PHENO1"
            _field_count(path, number, line, fields, len(names), meaning)
            rows.append(fields)
            lines.append(number)
    if not rows:
        raise ValueError(f"{path}: no samples")
    columns = [np.array(column, dtype=object) for column in zip(*rows)]
    table = {"fid": None, "iid": None}
    for k, (name, column) in enumerate(zip(names, columns), 1):
        key = name.lower()
        if name not in ("FID", "IID") and key in table:  # "Sex" beside SEX keeps its own spelling
            key = name if name not in table else f"{name}_{k}"
        table[key] = column
    for k, iid in enumerate(table["iid"]):
        if iid == "0":
            raise ValueError(f"{path}, line {lines[k]}: IID '0' is not a sample ID (PLINK reads 0 as a missing ID)")
    labels = [name for name in ("FID", "IID", "SID") if name in names]
    parts = [columns[names.index(name)] for name in labels]
    what = f"sample ({', '.join(labels)})"
    keys = list(zip(*parts))
    repeat = first_repeat(keys)
    if repeat:
        i, k = repeat
        raise ValueError(f"{path}: {what} {' '.join(keys[k])!r} on lines {lines[i]} and {lines[k]}; sample IDs must "
                         "be unique (plink2 --update-ids can rename them)")
    return table


def _psam_header(path, number, fields):
    names = ["FID" if fields[0] == "#FID" else "IID"]
    for name in fields[1:]:
        if name == "FID":
            raise ValueError(f"{path}, line {number}: FID must be the first column (#FID), not a later one")
        if name in names:
            raise ValueError(f"{path}, line {number}: column {name} named twice in the header line")
        names.append(name)
    if "IID" not in names:
        raise ValueError(f"{path}, line {number}: the header line has no IID column ({' '.join(fields)[:80]!r})")
    return names
