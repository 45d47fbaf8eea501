"""A fitted tree's node arrays: the read-only view of one tree, and the one derivation of the fields
that follow from the others (parent, depth, impurity decrease) for trees built outside the engine.

The node fields are declared once, in the core (``_core.Forest.tree_fields``, from
src/_core/forest/tree.hpp); this module reads their names from there."""

from __future__ import annotations

import numpy as np

from .. import _core

TREE_FIELDS = _core.Forest.tree_fields


class Tree:
    """One fitted tree as read-only arrays, one entry per node in depth-first preorder.

    A leaf has ``left == right == feature == -1``. Rows with ``x[feature] <= threshold`` go left;
    a missing value (NaN) goes left where ``missing_go_to_left`` is 1. As in scikit-learn, a split
    searched over rows with missing values sends them to the side that scores better (threshold
    +inf: the rows with a value left, the missing ones right), and a split whose training rows had
    none sends them to the child with more rows (ties right).
    A split on a categorical feature has ``threshold`` NaN and ``category_split`` s >= 0 (-1
    elsewhere): rows whose category code is in its left set (row s of ``left_categories``, 256
    bits as four uint64 words; ``left_set(node)`` lists them) go left, other categories right,
    missing values as above.
    ``impurity_decrease`` is ``(N_t I_t - N_l I_l - N_r I_r) / N_root`` with weighted node sizes N.
    ``value`` has shape (node_count, 1) for regression (the mean) and (node_count, n_classes) for
    classification (weighted class fractions); with several outputs, (node_count, n_outputs x
    stride): output k's values in columns [k * stride, (k + 1) * stride), stride 1 for regression
    and the most classes of any output for classification (``reshape(node_count, n_outputs, -1)``
    gives scikit-learn's layout).
    """

    __slots__ = (*TREE_FIELDS, "left_categories")

    def __init__(self, arrays):
        missing = [name for name in TREE_FIELDS if name not in arrays]
        if missing:
            raise ValueError(f"arrays lacks the node fields {missing} (a Tree needs {list(TREE_FIELDS)})")
        for name in TREE_FIELDS:
            object.__setattr__(self, name, arrays[name])
        sets = arrays.get("left_categories")
        object.__setattr__(self, "left_categories", np.zeros((0, 4), np.uint64) if sets is None else sets)

    def __setattr__(self, name, value):
        raise AttributeError("Tree is read-only")

    @property
    def node_count(self) -> int:
        return int(self.feature.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.left < 0))

    @property
    def max_depth(self) -> int:
        return int(self.depth.max())

    def left_set(self, node) -> np.ndarray:
        """The category codes a categorical split at ``node`` sends left, ascending (the estimator's
        ``categories_`` names them)."""
        s = int(self.category_split[node])
        if s < 0:
            raise ValueError(f"node {node} is not a split on categories")
        return category_codes(self.left_categories[s])

    def __repr__(self):
        return f"Tree(node_count={self.node_count}, n_leaves={self.n_leaves}, max_depth={self.max_depth})"


def category_codes(words) -> np.ndarray:
    """The category codes of a left set given as its four uint64 words (a row of a tree's
    ``left_categories``), ascending."""
    return np.flatnonzero(np.unpackbits(np.asarray(words).astype("<u8").view(np.uint8), bitorder="little"))


def forest_state(criterion, n_features, n_classes, n_samples, trees, inbag, n_outputs=1):
    """The mapping ``_core.Forest.from_state`` reads, for forests built outside the engine: trees as
    dicts of node arrays (``TREE_FIELDS``), inbag as (n_trees * n_samples) in-bag counts."""
    return {"version": _core.Forest.state_version, "criterion": criterion, "n_features": int(n_features),
            "n_classes": int(n_classes), "n_outputs": int(n_outputs), "n_samples": int(n_samples),
            "trees": list(trees), "inbag": inbag}


def derived_fields(left, right, weighted_n_node_samples, impurity):
    """parent, depth and impurity_decrease of a tree given by its child links (preorder, -1 at
    leaves), weighted node sizes and impurities: what the engine records as it grows a tree, for
    trees built elsewhere (scikit-learn's, hand-written ones). Returns a dict of the three arrays."""
    left = np.asarray(left, dtype=np.int32)
    right = np.asarray(right, dtype=np.int32)
    w = np.asarray(weighted_n_node_samples, dtype=np.float64)
    imp = np.asarray(impurity, dtype=np.float64)
    n = left.shape[0]
    split = left >= 0
    nodes = np.flatnonzero(split).astype(np.int32)
    parent = np.full(n, -1, dtype=np.int32)
    parent[left[split]] = nodes
    parent[right[split]] = nodes
    depth = np.zeros(n, dtype=np.int32)
    frontier, level = np.zeros(1, dtype=np.int32), 0
    while frontier.size:  # one level per pass, each node touched once
        frontier = frontier[split[frontier]]
        level += 1
        frontier = np.concatenate([left[frontier], right[frontier]])
        depth[frontier] = level
    return {"parent": parent, "depth": depth, "impurity_decrease": _core.impurity_decreases(left, right, w, imp)}
