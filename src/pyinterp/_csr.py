"""Collections of integer sets as CSR arrays (indptr, items) and back, for the core's set kernels."""

from __future__ import annotations

import itertools

import numpy as np


def to_csr(rows, dtype=np.int32):
    """Sequences of integers -> (indptr int64, concatenated items of ``dtype``)."""
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    return indptr, np.fromiter(itertools.chain.from_iterable(rows), dtype=dtype, count=int(indptr[-1]))


def take_rows(indptr, items, rows):
    """The CSR rows ``rows`` (in that order) of (indptr, items), gathered without a Python loop."""
    starts, lengths = indptr[rows], indptr[np.asarray(rows) + 1] - indptr[rows]
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out, items[np.repeat(starts - out[:-1], lengths) + np.arange(out[-1])]


def unique_rows(indptr, items, dtype=np.int32):
    """Each CSR row's distinct items in ascending order, as (indptr int64, items of ``dtype``),
    without a Python loop over the rows."""
    row = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    order = np.lexsort((items, row))
    row, items = row[order], items[order]
    keep = np.ones(items.size, dtype=bool)
    keep[1:] = (row[1:] != row[:-1]) | (items[1:] != items[:-1])
    out = np.zeros(len(indptr), dtype=np.int64)
    np.cumsum(np.bincount(row[keep], minlength=len(indptr) - 1), out=out[1:])
    return out, items[keep].astype(dtype)


def to_tuples(indptr, items) -> list:
    """CSR arrays -> one tuple of Python ints per row."""
    flat, bounds = items.tolist(), indptr.tolist()
    return [tuple(flat[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
