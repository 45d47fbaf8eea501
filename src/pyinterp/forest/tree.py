"""A fitted tree's node arrays: the read-only view of one tree, and the one derivation of the fields
that follow from the others (parent, depth, impurity decrease) for trees built outside the engine.

The node fields are declared once, in the core (``_core.Forest.tree_fields``, from
src/_core/forest/tree.hpp); this module reads their names from there."""

from __future__ import annotations

import numpy as np

from .. import _core

TREE_FIELDS = _core.Forest.tree_fields


class Tree:
    """One fitted tree as read-only arrays, one entry per node.

    What a fitted forest's ``trees_`` holds, and what every measure of pyinterp reads. Node 0 is
    the root and a node's children come after it: nodes are in depth-first preorder, except in
    trees grown best-first (``max_leaf_nodes``), whose nodes are numbered in the order they were
    made. A Tree's attributes cannot be reassigned, and a fitted forest's arrays are not
    writeable (they are the core's, not copies).

    A leaf has ``left == right == feature == -1``. Rows with ``x[feature] <= threshold`` go left;
    a missing value (NaN) goes left where ``missing_go_to_left`` is 1. As in scikit-learn, a split
    searched over rows with missing values sends them to the side that scores better (threshold
    +inf: the rows with a value left, the missing ones right), and a split whose training rows had
    none sends them to the child with more rows (ties right).
    A split on a categorical feature has ``threshold`` NaN and ``category_split`` s >= 0 (-1
    elsewhere): rows whose category code is in its left set (row s of ``left_categories``, 256
    bits as four uint64 words; ``left_set(node)`` lists them) go left, other categories right,
    missing values as above.

    Parameters
    ----------
    arrays : mapping of str to ndarray
        The node arrays by name: each attribute below, ``left_categories`` optional (without it,
        no categorical splits). A missing name is a ``ValueError``; the arrays are kept as they
        are, neither copied nor checked. Fitted forests build their Trees from their core's
        arrays; trees built elsewhere can be given so too.

    Attributes
    ----------
    feature : ndarray of int32, shape (node_count,)
        The feature a node splits on; -1 at leaves.
    threshold : ndarray of float64, shape (node_count,)
        The split threshold, a midpoint between neighbouring values of the node's rows; NaN for a
        categorical split, 0 at leaves.
    missing_go_to_left : ndarray of uint8, shape (node_count,)
        1 where missing values go left, else 0.
    category_split : ndarray of int32, shape (node_count,)
        For a split on categories, its row of ``left_categories``; -1 elsewhere.
    left, right : ndarray of int32, shape (node_count,)
        The children (scikit-learn's ``children_left`` and ``children_right``); -1 at leaves.
    parent : ndarray of int32, shape (node_count,)
        The parent node; -1 at the root. Not in scikit-learn.
    depth : ndarray of int32, shape (node_count,)
        The node's depth, 0 at the root. Not in scikit-learn.
    n_node_samples : ndarray of int32, shape (node_count,)
        The distinct in-bag training rows in the node (a row drawn several times counts once).
    weighted_n_node_samples : ndarray of float64, shape (node_count,)
        The sum of the node's in-bag row weights: the draw counts with bootstrap (the sample and
        class weights chose the rows), the sample and class weights without, times each tree's
        class balance under ``class_weight="balanced_subsample"``.
    impurity : ndarray of float64, shape (node_count,)
        The node's impurity under the forest's criterion.
    impurity_decrease : ndarray of float64, shape (node_count,)
        ``(N_t I_t - N_l I_l - N_r I_r) / N_root`` with weighted node sizes N and impurities I of
        the node and its children (0 at leaves): scikit-learn's ``min_impurity_decrease``
        quantity, whose sum per feature is the tree's MDI. Not in scikit-learn.
    value : ndarray of float64, shape (node_count, n_values)
        Shape (node_count, 1) for regression (the mean, or the median under
        ``absolute_error``) and (node_count, n_classes) for classification (weighted class
        fractions); with several outputs, (node_count, n_outputs x stride): output k's values
        in columns [k * stride, (k + 1) * stride), stride 1 for regression and the most classes
        of any output for classification (``reshape(node_count, n_outputs, -1)`` gives
        scikit-learn's layout).
    left_categories : ndarray of uint64, shape (n_categorical_splits, 4)
        The left set of each categorical split: 256 bits (codes 0 to 255), as four words.

    See Also
    --------
    pyinterp.forest.tree_rules : The tree's leaves as readable rules.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> forest = RandomForestRegressor(5, max_depth=2, random_state=0).fit(X, X[:, 0])
    >>> tree = forest.trees_[0]
    >>> tree
    Tree(node_count=7, n_leaves=4, max_depth=2)
    >>> tree.feature.tolist(), tree.left.tolist(), tree.right.tolist()
    ([0, 0, -1, -1, 2, -1, -1], [1, 2, -1, -1, 5, -1, -1], [4, 3, -1, -1, 6, -1, -1])
    >>> np.round(tree.threshold[tree.left >= 0], 2).tolist()
    [0.39, -0.89, -0.76]
    >>> np.round(tree.value[:, 0], 2).tolist()  # node means
    [-0.06, -0.55, -1.5, -0.2, 1.35, 2.91, 1.22]
    >>> tree.parent.tolist(), tree.depth.tolist()
    ([-1, 0, 1, 1, 0, 4, 4], [0, 1, 2, 2, 1, 2, 2])
    >>> np.round(tree.impurity_decrease, 3).tolist()
    [0.695, 0.248, 0.0, 0.0, 0.053, 0.0, 0.0]
    >>> tree.feature[0] = 1
    Traceback (most recent call last):
        ...
    ValueError: assignment destination is read-only
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
        """The number of nodes, splits and leaves (the length of every node array).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> X = np.random.default_rng(0).normal(size=(100, 3))
        >>> tree = RandomForestRegressor(5, max_depth=2, random_state=0).fit(X, X[:, 0]).trees_[0]
        >>> tree.node_count, len(tree.feature)
        (7, 7)
        """
        return int(self.feature.shape[0])

    @property
    def n_leaves(self) -> int:
        """The number of leaves (nodes without children).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> X = np.random.default_rng(0).normal(size=(100, 3))
        >>> tree = RandomForestRegressor(5, max_leaf_nodes=5, random_state=0).fit(X, X[:, 0]).trees_[0]
        >>> tree.n_leaves, tree.node_count
        (5, 9)
        """
        return int(np.count_nonzero(self.left < 0))

    @property
    def max_depth(self) -> int:
        """The depth of the deepest node (0 for a tree of one leaf).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> X = np.random.default_rng(0).normal(size=(100, 3))
        >>> tree = RandomForestRegressor(5, max_depth=3, random_state=0).fit(X, X[:, 0]).trees_[0]
        >>> tree.max_depth
        3
        """
        return int(self.depth.max())

    def left_set(self, node) -> np.ndarray:
        """The category codes a categorical split at ``node`` sends left.

        Code k stands for the k-th category of the split feature: the fitted estimator's
        ``categories_[i][k]`` for its i-th categorical column. The node's other categories, and
        categories its training rows lacked, go right.

        Parameters
        ----------
        node : int
            A node index of this tree.

        Returns
        -------
        codes : ndarray of int64
            The codes of the left set, ascending.

        Raises
        ------
        ValueError
            If ``node`` is not a split on categories (``category_split[node] < 0``).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> tissue = rng.choice(["blood", "brain", "liver", "lung"], size=200)
        >>> X = np.column_stack([tissue, rng.normal(size=200)]).astype(object)
        >>> y = np.isin(tissue, ["blood", "liver"]) + rng.normal(scale=0.1, size=200)
        >>> forest = RandomForestRegressor(20, categorical_features=[0], random_state=0).fit(X, y)
        >>> tree = forest.trees_[0]
        >>> tree.left_set(0).tolist()
        [1, 3]
        >>> forest.categories_[0][tree.left_set(0)].tolist()
        ['brain', 'lung']
        """
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
