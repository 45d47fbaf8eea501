"""Genes of variants from a gene range list, as PLINK 1.9's --gene-list and --annotate read one
(glist-hg19, glist-hg38 from PLINK's resources page): one gene per line, "chrom start end name",
whitespace-separated, base-pair positions 1-based and inclusive as in a .bim."""

from __future__ import annotations

import numpy as np

from .lists import field_lines

# PLINK's numeric codes of the chromosomes that are not autosomes, and the other spellings of them.
_CHROMOSOME_CODES = {"23": "X", "24": "Y", "25": "XY", "26": "MT", "M": "MT"}


def chromosome_name(chrom) -> str:
    """One spelling of a chromosome: without a "chr" prefix, PLINK's 23-26 as X, Y, XY and MT."""
    name = str(chrom).strip()
    if name[:3].lower() == "chr":
        name = name[3:]
    name = name.upper()
    return _CHROMOSOME_CODES.get(name, name)


def read_gene_ranges(path):
    """The gene ranges of a gene list: {chromosome: (starts, ends, names)} in the file's order.
    Lines starting with '#' and empty lines are skipped; a line that is not "chrom start end
    name" with integer positions, start <= end, is refused naming the file and line.

    Examples
    --------
    >>> import os, tempfile
    >>> from pyinterp.io.genes import read_gene_ranges
    >>> path = os.path.join(tempfile.mkdtemp(), "glist.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 100 200 GENE1\\nchr1 150 400 GENE2\\nX 10 20 GENE3\\n")
    >>> ranges = read_gene_ranges(path)
    >>> sorted(ranges), ranges["1"][2].tolist()
    (['1', 'X'], ['GENE1', 'GENE2'])
    """
    by_chromosome = {}
    for number, fields in field_lines(path):
        if fields[0].startswith("#"):
            continue
        if len(fields) < 4:
            raise ValueError(f"{path}, line {number}: expected 'chrom start end name', got {' '.join(fields)!r}")
        try:
            start, end = int(fields[1]), int(fields[2])
        except ValueError:
            raise ValueError(f"{path}, line {number}: start and end must be base-pair positions (integers), "
                             f"got {fields[1]!r} and {fields[2]!r}") from None
        if start > end:
            raise ValueError(f"{path}, line {number}: the gene {fields[3]!r} starts at {start}, after its end {end}")
        by_chromosome.setdefault(chromosome_name(fields[0]), []).append((start, end, fields[3]))
    if not by_chromosome:
        raise ValueError(f"{path}: no gene range in it (lines of 'chrom start end name')")
    return {chrom: (np.array([g[0] for g in genes], dtype=np.int64), np.array([g[1] for g in genes], dtype=np.int64),
                    np.array([g[2] for g in genes], dtype=object))
            for chrom, genes in by_chromosome.items()}


def genes_of_variants(chrom, pos, ranges):
    """Per variant (chromosomes and 1-based positions), the genes of ``ranges`` (read_gene_ranges)
    whose range holds it, joined by ';' in the list's order; '' where none does.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.io.genes import genes_of_variants
    >>> ranges = {"1": (np.array([100, 150]), np.array([200, 400]), np.array(["GENE1", "GENE2"], dtype=object))}
    >>> genes_of_variants(["1", "chr1", "1", "2"], [100, 170, 401, 150], ranges).tolist()
    ['GENE1', 'GENE1;GENE2', '', '']
    """
    names = np.array([chromosome_name(c) for c in chrom], dtype=object)
    pos = np.asarray(pos, dtype=np.int64)
    hits = [[] for _ in range(len(pos))]
    for chromosome, (starts, ends, genes) in ranges.items():
        on = np.flatnonzero(names == chromosome)
        if not len(on):
            continue
        order = on[np.argsort(pos[on], kind="stable")]
        sorted_pos = pos[order]
        first = np.searchsorted(sorted_pos, starts, side="left")
        last = np.searchsorted(sorted_pos, ends, side="right")
        for g in np.flatnonzero(last > first):  # genes in the list's order, so each variant's are too
            for variant in order[first[g]:last[g]]:
                hits[variant].append(genes[g])
    return np.array([";".join(h) for h in hits], dtype=object)
