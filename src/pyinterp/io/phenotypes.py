"""Phenotype files as PLINK reads them, and their samples matched to a genotype file's."""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from .names import first_repeat, sample_keys

# Values PLINK reads as missing in a phenotype column (-9 its default code, NA and nan PLINK 2's).
MISSING = frozenset({"-9", "NA", "na", "NaN", "nan", "."})


class Phenotypes(NamedTuple):
    """A phenotype file's samples and columns (values as the text the file holds)."""

    fid: np.ndarray | None  # None when the file has no FID column (a '#IID' header)
    iid: np.ndarray
    columns: dict


class Covariates(NamedTuple):
    """Covariates matched to genotypes: the genotypes' rows that have every one, the design (one
    column per covariate: numbers as they are, a text covariate as the codes 0, 1, ... of its
    sorted levels), their names, the levels of each text covariate by name, and what was read."""

    rows: np.ndarray
    design: np.ndarray
    names: list
    notes: list
    categories: dict


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
        A named tuple: ``fid`` (None without an FID column) and ``iid`` arrays, and ``columns``: a
        dict of the phenotype columns by name, each an array of the file's text (missing values such
        as -9 or NA are kept as text; the command line drops them when it matches the samples).

    Raises
    ------
    ValueError
        When the file has no samples or no phenotype column, a line has another number of fields
        than the header (or the first line), a header starting FID does not go on with IID, column
        names repeat, or a sample (FID, IID) repeats.

    See Also
    --------
    read_plink : The genotypes whose samples the file's rows name.

    Examples
    --------
    >>> from pyinterp.io import read_pheno
    >>> with open("pheno.txt", "w") as f:
    ...     _ = f.write("FID IID bmi\\nf1 s1 21.5\\nf2 s2 -9\\n")
    >>> table = read_pheno("pheno.txt")
    >>> list(table.iid), list(table.columns), list(table.columns["bmi"])
    (['s1', 's2'], ['bmi'], ['21.5', '-9'])

    Without a header the phenotypes are PHENO1, PHENO2, ...; a ``#IID`` header has no FIDs:

    >>> with open("plain.txt", "w") as f:
    ...     _ = f.write("f1 s1 1 0.5\\nf2 s2 2 0.7\\n")
    >>> list(read_pheno("plain.txt").columns)
    ['PHENO1', 'PHENO2']
    >>> with open("iid.txt", "w") as f:
    ...     _ = f.write("#IID case\\ns1 2\\ns2 1\\n")
    >>> table = read_pheno("iid.txt")
    >>> table.fid is None, list(table.iid), list(table.columns["case"])
    (True, ['s1', 's2'], ['2', '1'])

    Line a phenotype up with the samples of a PLINK fileset by their IIDs (here a fileset of 2
    samples and 1 variant, written by hand):

    >>> from pyinterp.io import read_plink
    >>> with open("toy.fam", "w") as f:
    ...     _ = f.write("f2 s2 0 0 2 -9\\nf1 s1 0 0 1 -9\\n")
    >>> with open("toy.bim", "w") as f:
    ...     _ = f.write("1 rs1 0 1000 A G\\n")
    >>> with open("toy.bed", "wb") as f:  # magic bytes, variant-major, then the 2 calls
    ...     _ = f.write(bytes([0x6C, 0x1B, 0x01, 0b0011]))
    >>> G = read_plink("toy")
    >>> row = {iid: k for k, iid in enumerate(table.iid)}
    >>> list(G.sample_ids), table.columns["case"][[row[iid] for iid in G.sample_ids]].tolist()
    (['s2', 's1'], ['1', '2'])
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
    keys = sample_keys(fid, iid)
    repeat = first_repeat(keys)
    if repeat:
        raise ValueError(f"{path}: sample {keys[repeat[1]]} on data rows {repeat[0] + 1} and {repeat[1] + 1}")
    return Phenotypes(fid, iid, {name: table[:, id_columns + k] for k, name in enumerate(names)})


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
    found = _match(samples, table, where)
    matched = found >= 0
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
    notes.insert(0, f"{len(rows)} of the {len(found)} genotyped samples have {name}"
                 + (f"; {unmatched} are not in {where}" if unmatched else "")
                 + (f"; {missing} have it missing" if missing else "")
                 + (f"; {extra} of {where}'s samples are not genotyped" if extra else ""))
    if not len(rows):
        raise ValueError(f"{where}: every matched sample has {name} missing")
    return Phenotype(rows, values[present], task, notes)


def _match(samples, table, where):
    """For each genotyped sample, its row in the table (-1 when absent): by (FID, IID), or by IID
    when either side has no FIDs. No match at all is an error."""
    fid = samples.get("fid")
    by_iid = table.fid is None or fid is None
    position = {key: k for k, key in enumerate(sample_keys(None if by_iid else table.fid, table.iid))}
    keys = sample_keys(None if by_iid else fid, samples["iid"])
    found = np.array([position.get(key, -1) for key in keys])
    if not (found >= 0).any():
        raise ValueError(f"{where}: none of the genotype file's {len(keys)} samples is in it (matched by "
                         f"{'IID' if by_iid else 'FID and IID'}; the genotypes' first is {keys[0]!r}, "
                         f"the file's first {next(iter(position))!r})")
    return found


def match_covariates(samples, table, names, where):
    """Covariates `names` of `table` (all its columns when None) for a genotype file's samples,
    matched as match_phenotype matches. A sample missing any covariate (-9, NA, nan, .) or absent
    from the file is dropped and counted; a numeric column is used as it is, a text column (batch,
    sex as letters) as the codes of its levels (at most 256), which the forests split as
    categories and adjust_for_covariates turns into indicators.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.io.phenotypes import Phenotypes, match_covariates
    >>> table = Phenotypes(None, np.array(["s1", "s2", "s3"], dtype=object),
    ...                    {"pc1": np.array(["0.5", "NA", "-1"], dtype=object),
    ...                     "batch": np.array(["a", "b", "b"], dtype=object)})
    >>> covariates = match_covariates({"iid": np.array(["s3", "s1", "s2"], dtype=object)}, table, None, "c.txt")
    >>> covariates.rows, covariates.names, covariates.categories
    (array([0, 1]), ['pc1', 'batch'], {'batch': ['a', 'b']})
    >>> covariates.design
    array([[-1. ,  1. ],
           [ 0.5,  0. ]])
    """
    names = list(table.columns) if names is None else list(names)
    unknown = [n for n in names if n not in table.columns]
    if unknown:
        raise ValueError(f"{where}: no covariate {', '.join(map(repr, unknown))}; its columns are "
                         f"{', '.join(table.columns)}")
    found = _match(samples, table, where)
    keep = found >= 0
    text = {n: table.columns[n][np.where(keep, found, 0)] for n in names}
    for n in names:
        keep &= np.array([v not in MISSING for v in text[n]])
    if not keep.any():
        raise ValueError(f"{where}: no genotyped sample has every covariate ({', '.join(names)})")
    from ..forest.categories import MAX_CATEGORIES  # here: the forest package imports this one

    design, categories = [], {}
    for n in names:
        values = text[n][keep]
        numbers = _as_numbers(values)
        if numbers is None:
            levels, numbers = np.unique(values.astype(str), return_inverse=True)
            if len(levels) > MAX_CATEGORIES:
                raise ValueError(f"{where}: covariate {n!r} has {len(levels)} levels; a categorical covariate may have "
                                 f"at most {MAX_CATEGORIES}")
            categories[n] = levels.tolist()
        design.append(np.asarray(numbers, dtype=np.float64))
    absent, missing = int((found < 0).sum()), int(((found >= 0) & ~keep).sum())
    notes = [f"{int(keep.sum())} of the {len(found)} genotyped samples have every covariate of {where} "
             f"({', '.join(names)})" + (f"; {absent} are not in it" if absent else "")
             + (f"; {missing} miss one" if missing else "")]
    design = np.column_stack(design) if design else np.empty((int(keep.sum()), 0))
    return Covariates(np.flatnonzero(keep), design, names, notes, categories)


def adjust_for_covariates(values, design, categorical=None):
    """The residuals of `values` after least squares on `design` with an intercept: the phenotype
    with the covariates' share removed (for a case/control phenotype, of a linear probability
    model), the response a forest on the genotypes then explains. `categorical` (indices of
    design columns) marks columns of category codes, which enter as indicators of their codes but
    the first. See bench/studies/covariate_default.py for why this is the command line's way with
    covariates.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.io.phenotypes import adjust_for_covariates
    >>> adjust_for_covariates(np.array([1.0, 2.0, 4.0]), np.array([[0.0], [1.0], [2.0]])).round(3)
    array([ 0.167, -0.333,  0.167])
    >>> batch = np.array([[0.0], [0.0], [1.0], [1.0], [2.0]])  # codes: three levels, not a slope
    >>> adjust_for_covariates(np.array([1.0, 2.0, 4.0, 6.0, 3.0]), batch, categorical=[0]).round(3)
    array([-0.5,  0.5, -1. ,  1. ,  0. ])
    """
    design = np.column_stack([np.ones(len(values)), as_indicators(design, categorical)[0]])
    if np.linalg.matrix_rank(design) < design.shape[1]:
        raise ValueError("the covariates are collinear (or one is constant) among the samples kept; leave one out "
                         "with --covar-name")
    coefficients = np.linalg.lstsq(design, values.astype(np.float64), rcond=None)[0]
    return values - design @ coefficients


def as_indicators(design, categorical):
    """The design with each column of category codes (`categorical`: their indices) replaced by
    indicators of its codes but the first present, and where each new column comes from: (source
    column, code), the code None for a column kept as it is.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.io.phenotypes import as_indicators
    >>> design, origin = as_indicators(np.array([[0.5, 2.0], [1.5, 0.0], [2.5, 1.0]]), [1])
    >>> design
    array([[0.5, 0. , 1. ],
           [1.5, 0. , 0. ],
           [2.5, 1. , 0. ]])
    >>> origin
    [(0, None), (1, 1), (1, 2)]
    """
    design = np.asarray(design, dtype=np.float64)
    coded = set(np.asarray(categorical if categorical is not None else [], dtype=np.int64).tolist())
    columns, origin = [], []
    for j in range(design.shape[1]):
        if j not in coded:
            columns.append(design[:, [j]])
            origin.append((j, None))
            continue
        codes = np.unique(design[:, j])[1:]
        columns.append((design[:, [j]] == codes).astype(np.float64))
        origin.extend((j, int(c)) for c in codes)
    return (np.hstack(columns) if columns else design), origin


def indicator_names(names, categories, origin):
    """The names of as_indicators' columns (`origin`): a kept column's own, a level's
    "name=level" (`categories`: {name: its levels}).

    Examples
    --------
    >>> from pyinterp.io.phenotypes import indicator_names
    >>> indicator_names(["pc1", "batch"], {"batch": ["a", "b", "c"]}, [(0, None), (1, 1), (1, 2)])
    ['pc1', 'batch=b', 'batch=c']
    """
    return [names[j] if code is None else f"{names[j]}={categories[names[j]][code]}" for j, code in origin]


def _as_numbers(text):
    try:
        return np.array([float(v) for v in text])
    except ValueError:
        return None
