"""Forests built from hand-written node arrays, for exact answers (paper 001 Fig. 1)."""

import numpy as np

import pyinterp
from pyinterp import _core


class Hand:
    """A pyinterp regressor whose core forest is built from node arrays."""

    def __init__(self, trees, n_features=2):
        state = (1, n_features, 0, 1, [self._tree(*t) for t in trees], np.zeros(len(trees), dtype=np.uint32))
        self.forest = pyinterp.RandomForestRegressor()
        self.forest._forest = _core.Forest.from_state(state)
        self.forest.n_features_in_ = n_features

    @staticmethod
    def _tree(feature, left, right, weight, impurity, value):
        feature, left, right = (np.array(a, dtype=np.int32) for a in (feature, left, right))
        n = len(feature)
        parent = np.full(n, -1, dtype=np.int32)
        depth = np.zeros(n, dtype=np.int32)
        for k in range(n):
            if left[k] >= 0:
                parent[[left[k], right[k]]] = k
                depth[[left[k], right[k]]] = depth[k] + 1
        w, imp = np.array(weight, float), np.array(impurity, float)
        decrease = np.zeros(n)
        split = left >= 0
        decrease[split] = (w[split] * imp[split] - w[left[split]] * imp[left[split]] - w[right[split]] * imp[right[split]]) / w[0]
        threshold = np.where(split, 0.5, 0.0)
        return (feature, threshold, left, right, parent, depth, np.ones(n, np.int32), w, imp, decrease, np.array(value, float))


def figure_1_trees():
    """E[Y|X] = 1(X0 <= .5) 1(X1 <= .5), n = infinity: tree A splits X0 first, tree B X1 first."""
    a = ([0, 1, -1, -1, -1], [1, 2, -1, -1, -1], [4, 3, -1, -1, -1],
         [1, .5, .25, .25, .5], [3 / 16, 1 / 4, 0, 0, 0], [.25, .5, 1, 0, 0])
    b = ([1, 0, -1, -1, -1], *a[1:])
    return [a, b]
