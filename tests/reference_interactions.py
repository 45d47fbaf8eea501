"""Plain-Python reference for DWP / LSSFind and weighted FP-growth, the peer side of
bench/compare_interactions.py (loaded through bench/benchkit/peers.py) and checked by
tests/test_reference_interactions.py.

Written the way the pure-Python ``lssfind`` package (behr-group, BSD-3) and its weighted FP-growth
dependency (a pyfpgrowth fork) compute things, from their published description (see
shared/specs/prior-implementations.md section 2 and section 8), not from their code:

* the impurity decrease of every internal node is ``w_t*imp_t - w_l*imp_l - w_r*imp_r`` with
  ``w = node count / root count``;
* every root-to-leaf path is enumerated by a *recursive* walk; the signed path is (feature, -1)
  for a left branch and (feature, +1) for a right one; a feature is kept only at its first
  occurrence among the nodes whose decrease exceeds epsilon (the path depth still counts every
  split);
* a leaf weighs 2^-depth, normalised to sum 1 per tree and divided by the number of trees;
* the prevalent sets come from a weighted FP-tree (float node counts, children kept in a plain
  list and found by a linear scan, a header table of node links, conditional pattern bases and
  recursive mining) run at the lossless threshold min_adjusted / 2**max_order, then filtered by
  the adjusted DWP 2^|S|*DWP(S) >= min_adjusted.

Nothing here is meant to be fast: it is what pyinterp's compiled code is measured against.
"""

from __future__ import annotations

import itertools

__all__ = [
    "impurity_decreases",
    "filtered_paths",
    "weighted_fpgrowth",
    "brute_force_itemsets",
    "lssfind_python",
]


# ---------------------------------------------------------------------------------------------
# Signed, epsilon-filtered leaf paths of a fitted sklearn forest


def impurity_decreases(tree, counts="weighted"):
    """Node-mass-weighted impurity decrease of every node of one sklearn ``tree_`` (0 at leaves).

    counts="weighted" uses ``weighted_n_node_samples`` (the bootstrap multiplicities that sklearn's
    ``impurity`` is computed with); counts="distinct" uses ``n_node_samples`` (distinct rows), as
    the published lssfind / irf code does.
    """
    if counts == "weighted":
        n = tree.weighted_n_node_samples
    elif counts == "distinct":
        n = tree.n_node_samples
    else:
        raise ValueError(f"counts must be 'weighted' or 'distinct', got {counts!r}")
    left = tree.children_left
    right = tree.children_right
    imp = tree.impurity
    root = float(n[0])
    out = [0.0] * tree.node_count
    for t in range(tree.node_count):
        l, r = left[t], right[t]
        if l == -1:
            continue
        out[t] = (n[t] * imp[t] - n[l] * imp[l] - n[r] * imp[r]) / root
    return out


def _tree_paths(tree, epsilon, counts):
    """(signed feature set, 2^-depth) of every leaf of one tree, by a recursive walk."""
    decrease = impurity_decreases(tree, counts)
    left = tree.children_left.tolist()
    right = tree.children_right.tolist()
    feature = tree.feature.tolist()
    leaves = []

    def walk(node, path):
        # path: list of (feature, sign, decrease above epsilon) from the root down to `node`
        if left[node] == -1:
            kept = {}
            for k, sign, significant in path:
                if significant and k not in kept:
                    kept[k] = sign
            leaves.append((frozenset(kept.items()), 2.0 ** (-len(path))))
            return
        k = feature[node]
        significant = decrease[node] > epsilon
        walk(left[node], path + [(k, -1, significant)])
        walk(right[node], path + [(k, +1, significant)])

    walk(0, [])
    return leaves


class _TreeArrays:
    """A pyinterp Tree under scikit-learn's ``tree_`` attribute names."""

    def __init__(self, tree):
        self.children_left, self.children_right = tree.left, tree.right
        self.feature, self.impurity = tree.feature, tree.impurity
        self.weighted_n_node_samples, self.n_node_samples = tree.weighted_n_node_samples, tree.n_node_samples
        self.node_count = tree.node_count


def filtered_trees(estimator):
    """The trees of a fitted sklearn or pyinterp forest under sklearn's ``tree_`` names."""
    if hasattr(estimator, "trees_"):
        return [_TreeArrays(t) for t in estimator.trees_]
    return [e.tree_ for e in estimator.estimators_]


def filtered_paths(estimator, epsilon, counts="weighted"):
    """Signed feature set F_eps and weight of every leaf of a fitted sklearn (or pyinterp) forest.

    Returns a list of (frozenset of (feature, sign), weight); the weights of one tree sum to
    1 / n_trees, so all of them sum to 1. Leaves whose set is empty are included.
    """
    trees = filtered_trees(estimator)
    n_trees = len(trees)
    out = []
    for tree in trees:
        leaves = _tree_paths(tree, epsilon, counts)
        total = sum(w for _, w in leaves)
        for items, w in leaves:
            out.append((items, w / total / n_trees))
    return out


# ---------------------------------------------------------------------------------------------
# Weighted FP-growth


class _Node:
    __slots__ = ("item", "count", "parent", "children", "link")

    def __init__(self, item, count, parent):
        self.item = item
        self.count = count
        self.parent = parent
        self.children = []  # plain list, searched linearly
        self.link = None  # next node holding the same item

    def find_child(self, item):
        for child in self.children:
            if child.item == item:
                return child
        return None


class _FPTree:
    """Prefix tree of the frequent items of weighted transactions, with a header table."""

    def __init__(self, transactions, weights, min_support):
        support = {}
        for transaction, w in zip(transactions, weights):
            for item in set(transaction):
                support[item] = support.get(item, 0.0) + w
        frequent = {item: s for item, s in support.items() if s >= min_support}
        # most frequent first; ties broken by the item itself so the tree is deterministic
        order = sorted(frequent, key=lambda item: (-frequent[item], item))
        self.rank = {item: r for r, item in enumerate(order)}
        self.order = order
        self.headers = {item: None for item in order}
        self.tails = {}
        self.root = _Node(None, 0.0, None)
        rank = self.rank
        for transaction, w in zip(transactions, weights):
            items = sorted({item for item in transaction if item in rank}, key=rank.__getitem__)
            if items:
                self._insert(items, w)

    def _insert(self, items, w):
        node = self.root
        for item in items:
            child = node.find_child(item)
            if child is None:
                child = _Node(item, w, node)
                node.children.append(child)
                if self.headers[item] is None:
                    self.headers[item] = child
                else:
                    self.tails[item].link = child
                self.tails[item] = child
            else:
                child.count += w
            node = child

    def single_path(self):
        """The nodes of the tree if it is one chain from the root, else None."""
        nodes = []
        node = self.root
        while node.children:
            if len(node.children) > 1:
                return None
            node = node.children[0]
            nodes.append(node)
        return nodes

    def nodes_of(self, item):
        node = self.headers[item]
        while node is not None:
            yield node
            node = node.link


def _mine(tree, suffix, min_support, max_size, out):
    room = None if max_size is None else max_size - len(suffix)
    path = tree.single_path()
    if path is not None:
        # every combination of the chain's items is frequent; its support is the count of its
        # deepest node (counts only shrink going down a chain)
        top = len(path) if room is None else min(room, len(path))
        for size in range(1, top + 1):
            for combo in itertools.combinations(path, size):
                key = tuple(sorted(suffix + tuple(node.item for node in combo)))
                out[key] = combo[-1].count
        return
    for item in reversed(tree.order):  # least frequent first
        support = 0.0
        bases, base_weights = [], []
        for node in tree.nodes_of(item):
            support += node.count
            prefix = []
            parent = node.parent
            while parent.item is not None:
                prefix.append(parent.item)
                parent = parent.parent
            if prefix:
                bases.append(prefix)
                base_weights.append(node.count)
        pattern = suffix + (item,)
        out[tuple(sorted(pattern))] = support
        if (room is None or room > 1) and bases:
            conditional = _FPTree(bases, base_weights, min_support)
            if conditional.order:
                _mine(conditional, pattern, min_support, max_size, out)


def weighted_fpgrowth(transactions, weights, min_support, max_size=None):
    """All itemsets whose total transaction weight is >= min_support.

    transactions: iterable of iterables of sortable hashable items (duplicates within a
    transaction count once); weights: one float per transaction, or None for weight 1.
    Returns {tuple(sorted items): support}.
    """
    transactions = [tuple(t) for t in transactions]
    if weights is None:
        weights = [1] * len(transactions)
    else:
        weights = list(weights)
        if len(weights) != len(transactions):
            raise ValueError("weights must have one entry per transaction")
    if max_size is not None and max_size < 1:
        return {}
    out = {}
    tree = _FPTree(transactions, weights, min_support)
    if tree.order:
        _mine(tree, (), min_support, max_size, out)
    return out


def brute_force_itemsets(transactions, weights, min_support, max_size=None):
    """The same as weighted_fpgrowth, by enumerating every subset of every transaction."""
    transactions = [tuple(t) for t in transactions]
    if weights is None:
        weights = [1] * len(transactions)
    support = {}
    for transaction, w in zip(transactions, weights):
        items = sorted(set(transaction))
        top = len(items) if max_size is None else min(max_size, len(items))
        for size in range(1, top + 1):
            for combo in itertools.combinations(items, size):
                support[combo] = support.get(combo, 0) + w
    return {s: v for s, v in support.items() if v >= min_support}


# ---------------------------------------------------------------------------------------------
# LSSFind


def lssfind_python(estimator, epsilon=0.01, min_adjusted=0.01, max_order=6, counts="weighted", adjusted=True):
    """Prevalent signed interactions of a fitted sklearn forest, as lssfind computes them.

    Returns {tuple of (feature, sign) sorted by feature: value} for every S with |S| <= max_order
    and 2^|S| * DWP(S) >= min_adjusted; value is the adjusted DWP 2^|S| * DWP(S), or the raw
    DWP(S) when adjusted=False.
    """
    paths = filtered_paths(estimator, epsilon, counts)
    transactions = [items for items, _ in paths]
    weights = [w for _, w in paths]
    mined = weighted_fpgrowth(transactions, weights, min_adjusted / 2.0**max_order, max_size=max_order)
    out = {}
    for itemset, dwp in mined.items():
        score = 2.0 ** len(itemset) * dwp
        if score >= min_adjusted:
            out[tuple(sorted(itemset))] = score if adjusted else dwp
    return out
