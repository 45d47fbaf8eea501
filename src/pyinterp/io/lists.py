"""Sample and variant lists as PLINK's --keep / --remove and --extract / --exclude read them."""

from __future__ import annotations

import os

import numpy as np

from .names import sample_keys


def read_sample_list(path):
    """The samples a --keep or --remove file names: "FID IID" per line (more fields are ignored),
    or one IID per line. Returns (fid or None, iid) arrays of text.

    Examples
    --------
    >>> import tempfile, os
    >>> from pyinterp.io.lists import read_sample_list
    >>> path = os.path.join(tempfile.mkdtemp(), "keep.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("f1 s1\\nf2 s2\\n")
    >>> fid, iid = read_sample_list(path)
    >>> list(fid), list(iid)
    (['f1', 'f2'], ['s1', 's2'])
    """
    lines = field_lines(path)
    widths = {len(fields) for _, fields in lines}
    if widths == {1}:
        return None, np.array([fields[0] for _, fields in lines], dtype=object)
    short = next(((number, fields) for number, fields in lines if len(fields) < 2), None)
    if short:
        raise ValueError(f"{path}, line {short[0]}: one field where the other lines give FID and IID")
    return (np.array([fields[0] for _, fields in lines], dtype=object),
            np.array([fields[1] for _, fields in lines], dtype=object))


def read_variant_list(path):
    """The variant IDs an --extract or --exclude file names: the first field of each line.

    Examples
    --------
    >>> import tempfile, os
    >>> from pyinterp.io.lists import read_variant_list
    >>> path = os.path.join(tempfile.mkdtemp(), "snps.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("rs1\\nrs7\\n")
    >>> list(read_variant_list(path))
    ['rs1', 'rs7']
    """
    return np.array([fields[0] for _, fields in field_lines(path)], dtype=object)


def samples_in(samples, listed):
    """A boolean mask of a genotype file's samples (its sample_table) that a sample list
    (read_sample_list) names, by FID and IID, or by IID when either side has no FIDs."""
    fid, iid = listed
    by_iid = fid is None or samples.get("fid") is None
    wanted = set(sample_keys(None if by_iid else fid, iid))
    return np.array([key in wanted for key in sample_keys(None if by_iid else samples["fid"], samples["iid"])],
                    dtype=bool)


def field_lines(path):
    """(line number, its whitespace-separated fields) of each line of a text file that has any;
    a file with none is refused."""
    path = os.fspath(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [(number, line.split()) for number, line in enumerate(f, 1) if line.split()]
    if not lines:
        raise ValueError(f"{path}: empty")
    return lines
