"""Reading a user's table for the command line: CSV, TSV (any of them compressed), Parquet and .npz
through pandas / numpy, then X and y with every problem reported as a one-line DataError that
names the rows and columns involved."""

from __future__ import annotations

import bz2
import csv
import gzip
import importlib.util
import lzma
import zipfile
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

COMPRESSION = {".gz", ".bz2", ".xz", ".zst", ".zip"}  # pandas infers these from the name
SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
LISTED = 8  # names and rows quoted in a message before "... (N in all)"


class DataError(Exception):
    """A problem with the user's file or arguments: printed as one line, exit status 1."""


class Data(NamedTuple):
    X: object  # a DataFrame of numeric columns (simulated data: an ndarray)
    y: np.ndarray
    names: list
    task: str  # "regression" or "classification"
    notes: list  # what was read differently from the plain case, and why
    always: tuple = ()  # columns searched at every split (covariates, --covar-mode always)
    genes: dict = None  # --genes: {variant name: its genes, ';'-joined} for the variants in a gene
    categories: object = None  # CategoryCodes of X's columns of category codes (text covariates), by name


def listing(items, limit=LISTED) -> str:
    items = [str(i) for i in items]
    more = f", ... ({len(items)} in all)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _pandas(path):
    try:
        import pandas
    except ImportError:
        raise DataError(f"reading {path} needs pandas: pip install 'interptrees[cli]'") from None
    return pandas


def kind_of(path) -> str:
    """The format suffix under any compression suffix: '.csv', '.tsv', '.parquet', '.npz', ..."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in COMPRESSION:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def read_table(path, target, *, sep=None, allow_pickle=False):
    """The file as a DataFrame (for .npz with a 2-D X: X's columns and the target array) and notes."""
    if not Path(path).is_file():
        raise DataError(f"{path}: no such file")
    pd = _pandas(path)
    kind = kind_of(path)
    notes = []
    try:
        if kind in (".parquet", ".pq"):
            if importlib.util.find_spec("pyarrow") is None:
                raise DataError("reading Parquet needs pyarrow: pip install 'interptrees[parquet]'")
            frame = pd.read_parquet(path)
        elif kind == ".npz":
            frame = _read_npz(pd, path, target, allow_pickle, notes)
        else:
            if sep is None:
                sep = SEPARATORS.get(kind) or _sniffed_separator(path)
            # sep=None: the python engine sniffs the delimiter of an unknown text format; it also
            # takes regular expressions. Before pandas 3.0 the C engine rounds the last bit of some
            # floats unless asked to parse them exactly (3.0 does by default and deprecates asking),
            # and the python engine always does: a separator is sniffed here when it can be.
            c_engine = sep is not None and len(sep) == 1
            exact = {"float_precision": "round_trip"} if c_engine and int(pd.__version__.split(".")[0]) < 3 else {}
            frame = pd.read_csv(path, sep=sep, engine="c" if c_engine else "python", **exact)
            # pandas renames a repeated header name (a, a.1): the file's own first line says which
            header = pd.read_csv(path, sep=sep, engine="c" if c_engine else "python", header=None, nrows=1, dtype=str)
            names, counts = np.unique(header.iloc[0].dropna().to_numpy(dtype=str), return_counts=True)
            if (counts > 1).any():
                raise DataError(f"{path}: column {names[counts > 1][0]!r} is named {counts.max()} times in the "
                                "header; give every column its own name")
    except DataError:
        raise
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not text in UTF-8 ({e.reason} at byte {e.start}); a compressed file must end "
                        f"in {', '.join(sorted(COMPRESSION))}") from None
    except (ValueError, OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, pd.errors.ParserError,
            pd.errors.EmptyDataError) as e:  # EOFError, zlib.error, LZMAError: a damaged compressed file
        raise DataError(f"{path}: cannot be read as {kind.lstrip('.') or 'delimited text'}: {_first_line(e)}") from None
    if frame.shape[0] == 0:
        raise DataError(f"{path}: no rows of data, only a header")
    if frame.shape[1] > 0 and str(frame.columns[0]).startswith("Unnamed: 0"):
        frame = frame.set_index(frame.columns[0]).rename_axis(None)
        notes.append("the first column has no header: read as row names (pandas' to_csv writes them so)")
    return frame, notes


_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _sniffed_separator(path):
    """The separator of a text file's first line as the python engine would sniff it (csv.Sniffer),
    or None to leave it to that engine (an unknown compression, or no single-character one)."""
    suffix = Path(path).suffix.lower()
    if suffix in COMPRESSION and suffix not in _OPENERS:
        return None
    try:
        with _OPENERS.get(suffix, open)(path, "rt", encoding="utf-8", newline="") as f:
            line = f.readline()
        return csv.Sniffer().sniff(line).delimiter
    except (csv.Error, OSError, UnicodeDecodeError, EOFError, zlib.error, lzma.LZMAError):
        return None


def _first_line(error) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _read_npz(pd, path, target, allow_pickle, notes):
    """A 2-D array 'X' (columns named by 'feature_names' when present) with the target array, or
    equal-length 1-D arrays, one per column."""
    arrays, skipped = {}, []
    with np.load(path, allow_pickle=allow_pickle) as archive:
        for key in archive.files:
            try:
                arrays[key] = archive[key]
            except ValueError:  # an object array, stored as a pickle
                skipped.append(key)
    if skipped:
        if target in skipped:
            raise DataError(f"{path}: array {target!r} is stored as Python objects (a pickle); read it only from a "
                            "file you trust, with --allow-pickle")
        notes.append(f"not read: {listing(skipped)}, stored as Python objects (pickles); --allow-pickle reads "
                     "them from a file you trust")
    X = arrays.pop("X", None)
    if X is None or X.ndim != 2:
        columns = {k: v for k, v in arrays.items() if v.ndim == 1}
        if X is not None or len(columns) != len(arrays) or len({len(v) for v in columns.values()}) > 1:
            shapes = listing(f"{k} {v.shape}" for k, v in (({} if X is None else {"X": X}) | arrays).items())
            raise DataError(f"{path}: expected a 2-D array 'X' with 1-D target arrays, or 1-D arrays of one length "
                            f"(one per column); found {shapes}")
        return pd.DataFrame(columns)
    names = arrays.pop("feature_names", None)
    names = [f"x{j}" for j in range(X.shape[1])] if names is None else [str(n) for n in names]
    if len(names) != X.shape[1]:
        raise DataError(f"{path}: {len(names)} feature_names for the {X.shape[1]} columns of X")
    if target not in arrays:
        raise DataError(f"{path}: no array named {target!r} for --target; its arrays are "
                        f"{listing(['X', *arrays, *skipped])}")
    if target in names:
        raise DataError(f"{path}: {target!r} is both a target array and a column of X")
    y = arrays.pop(target)
    if y.shape != (X.shape[0],):
        raise DataError(f"{path}: array {target!r} has shape {y.shape}; X has {X.shape[0]} rows")
    if arrays:
        notes.append(f"not used as features: {listing(arrays)} (the features are X's columns)")
    frame = pd.DataFrame(X, columns=names)
    frame[target] = y
    return frame


def split_target(frame, target, *, task="auto", index_col=None, drop=()) -> Data:
    """X (numeric columns) and y from a DataFrame, with the task decided from y unless given."""
    import pandas as pd  # read_table has checked it is there

    notes = []
    if index_col is not None:
        frame = frame.set_index(_column(frame, index_col, "--index-col")).rename_axis(None)
    for name in drop:
        _column(frame, name, "--drop")
    if target is None:
        raise DataError("give --target COLUMN: the column to explain")
    target = _column(frame, target, "--target")
    if target in drop:
        raise DataError(f"--drop names the target {target!r}")
    X = frame.drop(columns=[target, *drop])
    if X.shape[1] == 0:
        raise DataError(f"no feature columns are left beside the target {target!r}")
    text = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]  # bool counts as numeric
    y, task = _target(frame[target], target, task, frame)
    X, categories = _categories(X, text, frame, task == "classification" and len(np.unique(y)) > 2, notes)
    X = X.astype({c: np.float64 for c in X.columns if pd.api.types.is_bool_dtype(X[c])})  # one dtype with floats
    values = X.to_numpy(dtype=np.float64)
    infinite = np.isinf(values)
    if infinite.any():
        rows, cols = np.nonzero(infinite)
        raise DataError(f"infinite values in column{'s' if len(set(cols)) > 1 else ''} "
                        f"{listing(repr(X.columns[j]) for j in dict.fromkeys(cols))} ({_rows(frame, rows)}): "
                        "the forests take an empty cell (NaN) for a missing value, not infinity")
    missing = np.isnan(values)
    if missing.any():
        counts = missing.sum(axis=0)
        where = listing(f"{X.columns[j]} ({counts[j]})" for j in np.flatnonzero(counts))
        notes.append(f"{int(counts.sum())} missing cells, in {where}: the trees send them down the side each split "
                     "recorded for missing values (scikit-learn's rule)")
    return Data(X, y, [str(c) for c in X.columns], task, notes, categories=categories)


def listing_levels(categories) -> str:
    """{column: its levels} as a report lists them: 'batch (3 levels: a, b, c); sex (2 levels: F, M)'."""
    return "; ".join(f"{c} ({len(levels)} level{'' if len(levels) == 1 else 's'}: {listing(levels, 5)})"
                     for c, levels in categories.items())


def _categories(X, text, frame, many_classes, notes):
    """X with its text columns as the codes of their sorted levels, split as categories, and their
    CategoryCodes (None without any); with more than two classes, which no split of categories by
    their mean serves, as indicators of their levels instead. A column mixing numbers and text, or
    holding a different text on every row (row names), is refused by name."""
    import pandas as pd

    from ..forest import CategoryCodes
    from ..forest.categories import MAX_CATEGORIES
    from ..io.phenotypes import as_indicators, indicator_names

    levels = {}
    for c in text:
        present = X[c][X[c].notna()]
        parsed = pd.to_numeric(present.astype(str), errors="coerce").notna()
        numbers, words = present[parsed], present[~parsed]
        if len(numbers) and len(words):
            raise DataError(f"column {c!r} is not numeric ({_row(frame, words.index[0])} of {c!r} holds "
                            f"{words.iloc[0]!r} beside numbers such as {numbers.iloc[0]!r}); correct those cells, or "
                            f"leave the column out with --drop {c}")
        values = present.astype(str)
        distinct = np.unique(values.to_numpy())
        if len(values) >= 2 and len(distinct) == len(values):
            raise DataError(f"column {c!r} is not numeric and holds a different text on every row "
                            f"({_row(frame, values.index[0])} holds {values.iloc[0]!r}): row names? name them with "
                            f"--index-col {c}, or leave the column out with --drop {c}")
        if len(distinct) > MAX_CATEGORIES:
            raise DataError(f"column {c!r} is not numeric and has {len(distinct)} levels; a column of categories may "
                            f"have at most {MAX_CATEGORIES}: leave it out with --drop {c}")
        levels[c] = distinct.tolist()
    if not levels:
        return X, None
    X = X.copy()
    for c, names in levels.items():
        present = X[c].notna()
        X[c] = np.where(present, np.searchsorted(names, X[c].astype(str)), np.nan)
    listed = listing_levels(levels)
    if not many_classes:
        notes.append(f"text columns split as categories (a set of levels to each side): {listed}")
        return X, CategoryCodes(levels)
    coded = [X.columns.get_loc(c) for c in levels]
    design, origin = as_indicators(X.to_numpy(dtype=np.float64), coded)
    names = [str(n) for n in indicator_names(list(X.columns), levels, origin)]
    notes.append(f"text columns as indicators of their levels (a split on a set of levels needs a number or two "
                 f"classes): {listed}")
    return pd.DataFrame(design, index=X.index, columns=names), None


def _column(frame, name, option):
    if name in frame.columns:
        return name
    raise DataError(f"{option}: no column named {name!r}; the columns are {listing(frame.columns)}")


def _row(frame, label) -> str:
    """How a person finds a row: its label when the file has row names, else its data row number
    (the first row after the header is 1)."""
    if _numbered(frame):
        return f"data row {frame.index.get_loc(label) + 1}"
    return f"row {label!r}"


def _numbered(frame) -> bool:
    import pandas as pd

    return frame.index.equals(pd.RangeIndex(len(frame)))


def _rows(frame, positions) -> str:
    positions = sorted(set(int(i) for i in positions))
    if _numbered(frame):
        return f"data row{'s' if len(positions) > 1 else ''} {listing(i + 1 for i in positions)}"
    return f"row{'s' if len(positions) > 1 else ''} {listing(repr(frame.index[i]) for i in positions)}"


def _target(column, name, task, frame):
    import pandas as pd

    missing = column.isna().to_numpy()
    if missing.any():
        raise DataError(f"the target {name!r} is empty in {_rows(frame, np.flatnonzero(missing))}: every row needs a "
                        "target value (drop those rows, or fill them in)")
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    if task == "auto":
        values = column.to_numpy()
        few_integers = numeric and np.all(values == np.round(values)) and len(np.unique(values)) <= 20
        task = "regression" if numeric and not few_integers else "classification"
    if task == "regression":
        if not numeric:
            raise DataError(f"the target {name!r} is not numeric ({column.iloc[0]!r} in {_row(frame, column.index[0])}); "
                            "regression needs numbers: use --task classification")
        return column.to_numpy(dtype=np.float64), task
    return column.to_numpy(), task
