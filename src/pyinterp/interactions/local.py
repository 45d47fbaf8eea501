"""Per-sample path prevalence (LocalLSSFind, Vuk, Ihlo & Behr 2025): the fraction of trees whose
leaf reached by x has S in its F_eps."""

from __future__ import annotations

import numpy as np

from ..forest.estimators import reads_split_columns
from ..forest.view import check_rows, forest_view
from .._validation import resolve_n_threads
from .dwp import matches
from .paths import SignedPaths


def leaf_rows(paths: SignedPaths, leaves: np.ndarray) -> np.ndarray:
    """Path rows of the (n_samples, n_trees) leaf ids returned by a forest's apply (or apply_oob,
    whose -1 entries, the in-bag ones, stay -1)."""
    n_trees = leaves.shape[1]
    n_nodes = int(paths.leaf.max()) + 1 if len(paths) else 0
    # Every tree has a leaf, so paths of this forest cover trees 0..n_trees-1 and its leaf ids.
    if not len(paths) or int(paths.tree.max()) + 1 != n_trees or (leaves.size and int(leaves.max()) >= n_nodes):
        raise ValueError("the signed paths do not belong to this forest")
    lookup = np.full((n_trees, n_nodes + 1), -1, dtype=np.int64)  # the last column: leaf id -1
    lookup[paths.tree, paths.leaf] = np.arange(len(paths))
    rows = lookup[np.arange(n_trees), leaves]
    if np.any((rows < 0) & (leaves >= 0)):
        raise ValueError("the signed paths do not belong to this forest")
    return rows


def sample_rows(forest, paths: SignedPaths, X, n_jobs=None) -> np.ndarray:
    """(n_samples, n_trees): the path row of the leaf each row of X reaches in each tree."""
    view = forest_view(forest, multi_output=True)  # leaves only: no node values or responses
    threads = resolve_n_threads(n_jobs)
    if reads_split_columns(view.estimator, X):  # its split columns, in runs of rows
        return leaf_rows(paths, np.concatenate(view.estimator._descended(X, lambda core, rows: core.apply(rows,
                                                                                                        threads))))
    return leaf_rows(paths, view.core.apply(check_rows(view, X), threads))


def path_prevalence(forest, paths: SignedPaths, X, sets, *, n_jobs=None) -> np.ndarray:
    """Per-sample path prevalence: for each row of X, the fraction of trees whose leaf has S in F_eps.

    The local measure of LocalLSSFind (Vuk, Ihlo and Behr 2025): a row's path prevalence of a
    signed set S is the share of the forest's trees in which the leaf the row reaches has every
    (feature, sign) of S on its signed path, read as ``paths`` read it (epsilon, first
    occurrence). Rows inside an interaction's region score near 1, rows outside near 0.

    Parameters
    ----------
    forest : fitted forest
        A fitted pyinterp or scikit-learn random forest.
    paths : SignedPaths
        The forest's signed paths, ``signed_paths(forest, ...)``; paths of another forest are
        refused.
    X : array-like of shape (n_samples, n_features)
        The rows to score, in the forest's columns (for a pyinterp forest also a dask array or
        :class:`~pyinterp.io.ColumnFiles`, read at the columns it splits on).
    sets : sequence of signed sets
        Each a sequence of (feature index, sign) pairs, sign -1 or +1.
    n_jobs : int, default=None
        Threads for finding each row's leaves; None: one.

    Returns
    -------
    ndarray of shape (n_samples, n_sets)
        The path prevalence of each set for each row, in [0, 1].

    Raises
    ------
    ValueError
        If ``paths`` do not belong to ``forest`` or X has the wrong number of columns.

    See Also
    --------
    LocalLSSFind : Finds the sets of high local prevalence.
    dwp : The forest-wide, depth-weighted prevalence.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.forest import RandomForestRegressor
    >>> from pyinterp.interactions import path_prevalence, signed_paths
    >>> X = np.random.default_rng(0).standard_normal((300, 4))
    >>> y = 1.0 * ((X[:, 0] > 0) & (X[:, 1] > 0))
    >>> forest = RandomForestRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    >>> rows = np.array([[1.0, 1.0, 0.0, 0.0], [-1.0, 1.0, 0.0, 0.0]])
    >>> prevalence = path_prevalence(forest, signed_paths(forest), rows, [[(0, 1), (1, 1)], [(0, -1)]])
    >>> np.round(prevalence, 2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return prevalence_at(paths, sample_rows(forest, paths, X, n_jobs), sets)


def prevalence_at(paths: SignedPaths, rows: np.ndarray, sets) -> np.ndarray:
    """Path prevalence of each set for samples given by their (n_samples, n_trees) path rows."""
    indptr, matched = matches(paths, sets)
    contains = np.zeros((len(paths), len(indptr) - 1), dtype=bool)
    contains[matched, np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))] = True
    out = np.empty((rows.shape[0], contains.shape[1]))
    block = max(1, 2**24 // max(1, contains.shape[1] * rows.shape[1]))  # ~16 MB of indicators at a time
    for start in range(0, rows.shape[0], block):
        out[start:start + block] = contains[rows[start:start + block]].mean(axis=1)
    return out
