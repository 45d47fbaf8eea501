"""Rows of any X the forests take, and splits of them: the one home for the hold-out splits of
significance.py's Janitza test and the command line's --holdout."""

from __future__ import annotations

import numpy as np
from sklearn.utils import _safe_indexing

from .io.column_files import ColumnFiles
from .io.h5ad import is_anndata
from .io.packed import is_packed


def take_rows(X, rows):
    """X's rows `rows` in X's own form (packed genotypes, AnnData and dask arrays index
    themselves, lazily for the last; a ColumnFiles reads its files at those rows; arrays, sparse
    matrices and DataFrames through scikit-learn's _safe_indexing)."""
    if isinstance(X, ColumnFiles):
        return X.take_rows(rows)
    if is_packed(X) or is_anndata(X) or hasattr(X, "__dask_graph__"):
        return X[rows]
    return _safe_indexing(X, rows)


def split_rows(y, count, by_class, rng):
    """(chosen, rest), sorted row indices: `count(m)` rows drawn from each class of y's m rows by
    ``rng.permutation`` (from all rows as one group when not by_class)."""
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if by_class else [np.arange(len(y))]
    chosen = np.sort(np.concatenate([rng.permutation(g)[: count(len(g))] for g in groups]))
    return chosen, np.setdiff1d(np.arange(len(y)), chosen)
