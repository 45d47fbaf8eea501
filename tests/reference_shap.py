"""Brute-force Shapley values and Shapley interaction indices of a forest, over every subset of
features, for the path-dependent value function of TreeSHAP (Lundberg et al. 2020): v(S) is the
tree's prediction when the features in S are known and the others are averaged over the children
by their covers (weighted_n_node_samples); and for interventional TreeSHAP, where v(S) is the mean
prediction over background rows that take the row's values on S. Only for small p: 2**p subsets."""

from itertools import combinations
from math import factorial

import numpy as np

from reference import child_of, leaf_of


def tree_value(tree, x, known):
    """E[f(x) | x_S] of one tree (known: the set S): (n_values,)."""

    def at(node):
        if tree.left[node] < 0:
            return tree.value[node]
        if tree.feature[node] in known:
            return at(child_of(tree, node, x[tree.feature[node]]))
        left, right = tree.left[node], tree.right[node]
        cover = tree.weighted_n_node_samples
        return (cover[left] * at(left) + cover[right] * at(right)) / cover[node]

    return at(0)


def subset_values(trees, x, p):
    """v(S) of the mean over trees for every subset S of range(p), keyed by frozenset."""
    return {
        frozenset(s): np.mean([tree_value(t, x, set(s)) for t in trees], axis=0)
        for size in range(p + 1)
        for s in combinations(range(p), size)
    }


def interventional_subset_values(trees, x, background, p):
    """v(S) of interventional TreeSHAP for every subset S: the mean over the background rows r and
    the trees of the prediction at the row that takes x on S and r elsewhere."""

    def value(known):
        rows = np.array(background, dtype=float)
        rows[:, known] = x[known]
        return np.mean([[t.value[leaf_of(t, z)] for t in trees] for z in rows], axis=(0, 1))

    return {frozenset(s): value(list(s)) for size in range(p + 1) for s in combinations(range(p), size)}


def _games(trees, x, p, background):
    return subset_values(trees, x, p) if background is None else interventional_subset_values(trees, x, background, p)


def shapley_values(trees, x, p, background=None, banzhaf=False):
    """(phi (p, n_values), v(empty set)) by the Shapley formula over all subsets (banzhaf: every
    coalition weighted 1 / 2^(p-1)); path-dependent v(S), or interventional against the background
    rows when given."""
    v = _games(trees, x, p, background)
    phi = np.zeros((p,) + v[frozenset()].shape)
    for i in range(p):
        others = [k for k in range(p) if k != i]
        for size in range(p):
            weight = 0.5 ** (p - 1) if banzhaf else factorial(size) * factorial(p - size - 1) / factorial(p)
            for s in combinations(others, size):
                s = frozenset(s)
                phi[i] += weight * (v[s | {i}] - v[s])
    return phi, v[frozenset()]


def shapley_interactions(trees, x, p, background=None, banzhaf=False):
    """(p, p, n_values): off the diagonal half the Shapley interaction index
    sum_S |S|! (p - |S| - 2)! / (p - 1)! * (v(S+ij) - v(S+i) - v(S+j) + v(S)) (banzhaf: weight
    1 / 2^(p-2)), on it the value minus the row's off-diagonal entries (Lundberg et al. 2020, eqs. of
    Section 4.2); path-dependent, or against the background rows when given."""
    v = _games(trees, x, p, background)
    phi, _ = shapley_values(trees, x, p, background, banzhaf)
    out = np.zeros((p, p) + phi.shape[1:])
    for i in range(p):
        for j in range(p):
            if i == j:
                continue
            others = [k for k in range(p) if k not in (i, j)]
            for size in range(p - 1):
                shapley = factorial(size) * factorial(p - size - 2) / (2 * factorial(p - 1))
                weight = 0.5 ** (p - 1) if banzhaf else shapley
                for s in combinations(others, size):
                    s = frozenset(s)
                    out[i, j] += weight * (v[s | {i, j}] - v[s | {i}] - v[s | {j}] + v[s])
        out[i, i] = phi[i] - out[i].sum(axis=0)
    return out
