"""Phenotype files as PLINK reads them, and their samples matched to a genotype file's."""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

# Values PLINK reads as missing in a phenotype column (-9 its default code, NA and nan PLINK 2's).
MISSING = frozenset({"-9", "NA", "na", "NaN", "nan", "."})


class Phenotypes(NamedTuple):
    """A phenotype file's samples and columns (values as the text the file holds)."""

    fid: np.ndarray | None  # None when the file has no FID column (a '#IID' header)
    iid: np.ndarray
    columns: dict


class Phenotype(NamedTuple):
    """One phenotype matched to genotypes: the genotypes' rows that have it, their values, and
    what was read, as sentences for a report."""

    rows: np.ndarray
    values: np.ndarray
    task: str  # "regression" or "classification"
    notes: list


def read_pheno(path):
    """Read a phenotype or covariate file in PLINK's format.

    Whitespace-separated columns: FID and IID, then one column per phenotype. A header line
    starting ``FID IID`` or ``#FID IID`` names the columns; ``#IID`` (or ``IID``) starts a header
    of a file without FIDs; without a header the columns are named PHENO1, PHENO2, ... as PLINK 2
    names them.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    Phenotypes
        ``fid`` (None without an FID column) and ``iid`` arrays, and ``columns``: a dict of the
        phenotype columns by name, each an array of the file's text.

    Examples
    --------
    >>> import tempfile, os
    >>> from pyinterp.io import read_pheno
    >>> path = os.path.join(tempfile.mkdtemp(), "pheno.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("FID IID bmi\\nf1 s1 21.5\\nf2 s2 -9\\n")
    >>> table = read_pheno(path)
    >>> list(table.iid), list(table.columns), list(table.columns["bmi"])
    (['s1', 's2'], ['bmi'], ['21.5', '-9'])
    """
    path = os.fspath(path)
    rows, header, first = [], None, True
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if first:
                first = False
                if fields[0] in ("FID", "#FID", "IID", "#IID"):
                    if fields[0] in ("FID", "#FID") and (len(fields) < 2 or fields[1] != "IID"):
                        raise ValueError(f"{path}, line {number}: a header starting {fields[0]} must go on with IID")
                    header = fields
                    continue
                header = ["FID", "IID"] + [f"PHENO{k}" for k in range(1, len(fields) - 1)]
            if len(fields) != len(header):
                raise ValueError(f"{path}, line {number}: {len(fields)} fields where the "
                                 f"{'header' if header[0] != 'FID' or header[2:3] != ['PHENO1'] else 'first line'} has "
                                 f"{len(header)}")
            rows.append(fields)
    if header is None or not rows:
        raise ValueError(f"{path}: no samples")
    has_fid = header[0] in ("FID", "#FID")
    id_columns = 2 if has_fid else 1
    if len(header) <= id_columns:
        raise ValueError(f"{path}: no phenotype column beside the sample IDs")
    table = np.array(rows, dtype=object)
    names = header[id_columns:]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: column names repeat: {', '.join(sorted({n for n in names if names.count(n) > 1}))}")
    fid = table[:, 0] if has_fid else None
    iid = table[:, id_columns - 1]
    keys = _keys(fid, iid)
    seen = {}
    for row, key in enumerate(keys, 1):
        if key in seen:
            raise ValueError(f"{path}: sample {key} on data rows {seen[key]} and {row}")
        seen[key] = row
    return Phenotypes(fid, iid, {name: table[:, id_columns + k] for k, name in enumerate(names)})


def _keys(fid, iid):
    return list(iid) if fid is None else [f"{a} {b}" for a, b in zip(fid, iid)]


def match_phenotype(samples, table, name, where):
    """The phenotype `name` of `table` for a genotype file's samples (its sample_table: a dict
    with "iid" and "fid"), by (FID, IID), or by IID when either side has no FIDs (fid None).

    Missing values (-9, NA, nan, .) drop their samples. A column of 0, 1 and 2 holding a 2 (or
    only 0s) is PLINK's case/control coding: 1 control, 2 case, 0 missing; it becomes classes 0
    (control) and 1 (case). Other integer columns of at most 20 values are classes too (as the
    command line reads a table's target), other numbers quantitative, and text classes. Every
    dropped sample is counted in the notes; no match at all is an error.
    """
    if name not in table.columns:
        raise ValueError(f"{where}: no phenotype {name!r}; its columns are {', '.join(table.columns)}")
    fid = samples.get("fid")
    by_iid = table.fid is None or fid is None
    position = {key: k for k, key in enumerate(_keys(None if by_iid else table.fid, table.iid))}
    by_fam = _keys(None if by_iid else fid, samples["iid"])
    found = np.array([position.get(key, -1) for key in by_fam])
    matched = found >= 0
    if not matched.any():
        example = by_fam[0]
        raise ValueError(f"{where}: none of the genotype file's {len(by_fam)} samples is in it (matched by "
                         f"{'IID' if by_iid else 'FID and IID'}; the genotypes' first is {example!r}, "
                         f"the file's first {next(iter(position))!r})")
    text = table.columns[name][found[matched]]
    present = np.array([v not in MISSING for v in text])
    notes = []
    numbers = _as_numbers(text[present])
    task = "regression"
    if numbers is not None:
        values = np.full(len(text), np.nan)
        values[present] = numbers
        distinct = set(np.unique(numbers).tolist())
        if distinct <= {0.0, 1.0, 2.0} and (2.0 in distinct or distinct == {0.0}):
            coded_missing = present & (values == 0.0)
            present &= ~coded_missing
            values = values - 1.0  # 0 control, 1 case (integers below)
            task = "classification"
            notes.append(f"{name} read as case/control in PLINK's coding (1 control, 2 case, 0 missing): class 1 is "
                         f"the cases ({int((values[present] == 1).sum())}), class 0 the controls "
                         f"({int((values[present] == 0).sum())})")
        elif np.all(numbers == np.round(numbers)) and len(distinct) <= 20:
            task = "classification"
        if task == "classification":
            values = np.where(present, values, 0).astype(np.int64)
    else:
        values = text.astype(str)
        task = "classification"
    rows = np.flatnonzero(matched)[present]
    unmatched, missing = int((~matched).sum()), int((~present).sum())
    extra = len(table.iid) - int(matched.sum())
    notes.insert(0, f"{len(rows)} of the {len(by_fam)} genotyped samples have {name}"
                 + (f"; {unmatched} are not in {where}" if unmatched else "")
                 + (f"; {missing} have it missing" if missing else "")
                 + (f"; {extra} of {where}'s samples are not genotyped" if extra else ""))
    if not len(rows):
        raise ValueError(f"{where}: every matched sample has {name} missing")
    return Phenotype(rows, values[present], task, notes)


def _as_numbers(text):
    try:
        return np.array([float(v) for v in text])
    except ValueError:
        return None
