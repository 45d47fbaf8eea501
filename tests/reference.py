"""Brute-force references the engine is checked against."""

import numpy as np


def impurity(y, w, criterion, n_classes=None):
    """Weighted node impurity: variance, Gini or entropy (log2)."""
    total = w.sum()
    if criterion == "squared_error":
        mean = np.sum(w * y) / total
        return np.sum(w * (y - mean) ** 2) / total
    p = np.bincount(y, weights=w, minlength=n_classes) / total
    if criterion == "gini":
        return 1.0 - np.sum(p**2)
    p = p[p > 0]
    return -np.sum(p * np.log2(p))


def best_split(X, y, w, criterion, min_samples_leaf=1, n_classes=None):
    """Exhaustive search over every feature and every midpoint between distinct values.

    Returns (best weighted impurity decrease, set of (feature, threshold) achieving it).
    """
    total = w.sum()
    parent = total * impurity(y, w, criterion, n_classes)
    best, argbest = -np.inf, set()
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for lo, hi in zip(values[:-1], values[1:]):
            t = lo / 2.0 + hi / 2.0
            left = X[:, j] <= t
            if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                continue
            gain = parent - w[left].sum() * impurity(y[left], w[left], criterion, n_classes)
            gain -= w[~left].sum() * impurity(y[~left], w[~left], criterion, n_classes)
            if gain > best + 1e-9 * abs(parent):
                best, argbest = gain, {(j, t)}
            elif abs(gain - best) <= 1e-9 * abs(parent):
                argbest.add((j, t))
    return best / total, argbest


def leaf_of(tree, x):
    node = 0
    while tree.left[node] >= 0:
        node = tree.left[node] if x[tree.feature[node]] <= tree.threshold[node] else tree.right[node]
    return node
