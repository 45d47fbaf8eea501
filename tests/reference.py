"""Brute-force references the engine is checked against."""

import numpy as np

from pyinterp.forest import Tree
from pyinterp.forest.view import sklearn_tree_arrays


def weighted_median(y, w):
    """The first y (in order) whose cumulative weight passes half the total; the midpoint of the
    two y around an exact half (scikit-learn's convention)."""
    order = np.argsort(y, kind="stable")
    y, cum = y[order], np.cumsum(w[order])
    k = int(np.searchsorted(cum, cum[-1] / 2, side="right"))
    return (y[k - 1] + y[k]) / 2 if k > 0 and cum[k - 1] == cum[-1] / 2 else y[k]


def impurity(y, w, criterion, n_classes=None):
    """Weighted node impurity: variance, half Poisson deviance, mean absolute deviation from the
    weighted median, Gini or entropy (log2)."""
    total = w.sum()
    if criterion == "squared_error":
        mean = np.sum(w * y) / total
        return np.sum(w * (y - mean) ** 2) / total
    if criterion == "poisson":
        mean = np.sum(w * y) / total
        positive = y > 0
        return np.sum(w[positive] * y[positive] * np.log(y[positive] / mean)) / total
    if criterion == "absolute_error":
        return np.sum(w * np.abs(y - weighted_median(y, w))) / total
    p = np.bincount(y, weights=w, minlength=n_classes) / total
    if criterion == "gini":
        return 1.0 - np.sum(p**2)
    p = p[p > 0]
    return -np.sum(p * np.log2(p))


def candidate_splits(x):
    """Every split of one feature's values x in scikit-learn's (1.9) search order:
    (threshold, missing_go_to_left, left mask). Midpoints between distinct observed values; with
    missing values (NaN) every boundary sends them right, then every observed row goes left and the
    missing ones right (threshold inf), then every boundary sends them left. Without missing values
    a NaN follows the larger child (ties right)."""
    missing = np.isnan(x)
    values = np.unique(x[~missing])
    cuts = []
    for lo, hi in zip(values[:-1], values[1:]):
        t = lo / 2.0 + hi / 2.0
        if t == hi or not np.isfinite(t):
            t = lo
        cuts.append((t, ~missing & (x <= t)))
    if not missing.any():
        for t, left in cuts:
            yield t, int(left.sum() > (~left).sum()), left
        return
    for t, left in cuts:
        yield t, 0, left
    if len(values):
        yield np.inf, 0, ~missing
    for t, left in cuts:
        yield t, 1, left | missing


def best_split(X, y, w, criterion, min_samples_leaf=1, n_classes=None):
    """Exhaustive search over every feature and every split of candidate_splits.

    Returns (best weighted impurity decrease, set of (feature, threshold, missing_go_to_left)
    achieving it).
    """
    total = w.sum()
    parent = total * impurity(y, w, criterion, n_classes)
    best, argbest = -np.inf, set()
    for j in range(X.shape[1]):
        for t, missing_left, left in candidate_splits(X[:, j]):
            if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                continue
            if criterion == "poisson" and min(np.sum(w[left] * y[left]), np.sum(w[~left] * y[~left])) <= 0:
                continue  # a child predicting 0
            gain = parent - w[left].sum() * impurity(y[left], w[left], criterion, n_classes)
            gain -= w[~left].sum() * impurity(y[~left], w[~left], criterion, n_classes)
            if gain > best + 1e-9 * abs(parent):
                best, argbest = gain, {(j, t, missing_left)}
            elif abs(gain - best) <= 1e-9 * abs(parent):
                argbest.add((j, t, missing_left))
    return best / total, argbest


def child_of(tree, node, value):
    """The child a row with this value of the node's feature goes to (NaN: the recorded side; a
    category split, NaN threshold: left for the codes in its left set)."""
    if np.isnan(value):
        goes_left = bool(tree.missing_go_to_left[node])
    elif np.isnan(tree.threshold[node]):
        words = tree.left_categories[tree.category_split[node]]
        code = int(value) if 0 <= value < 64 * len(words) and value == int(value) else -1
        goes_left = code >= 0 and bool((int(words[code // 64]) >> (code % 64)) & 1)
    else:
        goes_left = value <= tree.threshold[node]
    return tree.left[node] if goes_left else tree.right[node]


def leaf_of(tree, x):
    node = 0
    while tree.left[node] >= 0:
        node = child_of(tree, node, x[tree.feature[node]])
    return node


def saabas(tree, x, n_features):
    """f_{T,k}(x) for every feature k: (n_features, n_values), walking the tree node by node."""
    out = np.zeros((n_features, tree.value.shape[1]))
    node = 0
    while tree.left[node] >= 0:
        k = tree.feature[node]
        child = child_of(tree, node, x[k])
        out[k] += tree.value[child] - tree.value[node]
        node = child
    return out


def one_hot(y, n_values):
    """Targets as rows of n_values entries: one-hot classes, or the value itself for regression."""
    if n_values == 1:
        return np.asarray(y, dtype=float)[:, None]
    return np.eye(n_values)[y]


def mdi_oob_per_tree(tree, X, Y, oob, n_features):
    """Thesis eq. (8.20) for one tree, straight from the definition."""
    total = np.zeros(n_features)
    for i in np.flatnonzero(oob):
        total += saabas(tree, X[i], n_features) @ Y[i]
    return total / oob.sum()


def node_rows(tree, X, rows):
    """For every node, the boolean mask of `rows` passing through it."""
    masks = np.zeros((len(tree.left), len(X)), dtype=bool)
    for i in rows:
        node = 0
        masks[0, i] = True
        while tree.left[node] >= 0:
            node = child_of(tree, node, X[i, tree.feature[node]])
            masks[node, i] = True
    return masks


def naive_oob_per_tree(tree, X, Y, oob, n_features, impurity_fn):
    """Node impurity decreases recomputed on OOB rows; impurity_fn(Y_rows) -> impurity."""
    masks = node_rows(tree, X, np.flatnonzero(oob))
    total = np.zeros(n_features)
    for t in np.flatnonzero(tree.left >= 0):
        l, r = tree.left[t], tree.right[t]
        if not masks[l].any() or not masks[r].any():
            continue
        gain = sum(sign * masks[c].sum() * impurity_fn(Y[masks[c]]) for sign, c in ((1, t), (-1, l), (-1, r)))
        total[tree.feature[t]] += gain / oob.sum()
    return total


def ufi_per_tree(tree, X, Y, oob, n_features):
    """Zhou-Hooker mixed impurity E'|y|^2 - <mu, mu'> (= 1 - sum p p' for one-hot targets)."""
    masks = node_rows(tree, X, np.flatnonzero(oob))
    w = tree.weighted_n_node_samples
    total = np.zeros(n_features)

    def mixed(c):
        rows = Y[masks[c]]
        return np.mean(np.sum(rows**2, axis=1)) - tree.value[c] @ rows.mean(axis=0)

    for t in np.flatnonzero(tree.left >= 0):
        l, r = tree.left[t], tree.right[t]
        if not masks[l].any() or not masks[r].any():
            continue
        total[tree.feature[t]] += (w[t] * mixed(t) - w[l] * mixed(l) - w[r] * mixed(r)) / w[0]
    return total


def signed_path(tree, leaf, epsilon, literal=False, groups=None):
    """F_eps of one leaf as sorted codes (2k left, 2k + 1 right), from the root down; with groups
    (the group index of each feature), k is the split feature's group."""
    nodes = [leaf]
    while tree.parent[nodes[-1]] >= 0:
        nodes.append(tree.parent[nodes[-1]])
    nodes.reverse()
    seen, codes = set(), []
    for node, child in zip(nodes[:-1], nodes[1:]):
        k = tree.feature[node] if groups is None else groups[tree.feature[node]]
        passes = tree.impurity_decrease[node] > epsilon
        if k in seen or (not passes and not literal):
            continue
        seen.add(k)
        if passes:
            codes.append(2 * k + (child == tree.right[node]))
    return sorted(codes)


def signed_path_every(tree, leaf, epsilon, groups=None):
    """Every (feature, side) of the leaf's nodes with decrease > epsilon, once each, as sorted codes
    (features replaced by their group index with groups)."""
    codes, node = set(), leaf
    while tree.parent[node] >= 0:
        parent = tree.parent[node]
        if tree.impurity_decrease[parent] > epsilon:
            k = tree.feature[parent] if groups is None else groups[tree.feature[parent]]
            codes.add(2 * k + (node == tree.right[parent]))
        node = parent
    return sorted(codes)


def sk_trees(forest, n_values):
    """scikit-learn's trees as pyinterp Tree views, through the adapter under test."""
    trees = []
    for e in forest.estimators_:
        arrays = sklearn_tree_arrays(e)
        arrays["value"] = arrays["value"].reshape(-1, n_values)
        trees.append(Tree(arrays))
    return trees
