"""Per-sample path prevalence (LocalLSSFind, Vuk, Ihlo & Behr 2025): the fraction of trees whose
leaf reached by x has S in its F_eps."""

from __future__ import annotations

import numpy as np

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
    X = check_rows(view, X)
    return leaf_rows(paths, view.core.apply(X, resolve_n_threads(n_jobs)))


def path_prevalence(forest, paths: SignedPaths, X, sets, *, n_jobs=None) -> np.ndarray:
    """(n_samples, n_sets): for each row of X, the fraction of trees whose leaf has S in F_eps.

    ``paths`` must come from ``signed_paths(forest, ...)``; the forest may be pyinterp's or a
    fitted scikit-learn forest."""
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
