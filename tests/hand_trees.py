"""Forests built from hand-written node arrays, for exact answers (paper 001 Fig. 1)."""

import numpy as np

import pyinterp
from pyinterp import _core
from pyinterp.forest.tree import derived_fields, forest_state


class Hand:
    """A pyinterp regressor whose core forest is built from node arrays."""

    def __init__(self, trees, n_features=2):
        state = forest_state("squared_error", n_features, 0, 1, [self._tree(*t) for t in trees],
                             np.zeros(len(trees), dtype=np.uint32))
        self.forest = pyinterp.RandomForestRegressor()
        self.forest._forest = _core.Forest.from_state(state)
        self.forest.n_features_in_ = n_features

    @staticmethod
    def _tree(feature, left, right, weight, impurity, value):
        arrays = {"feature": np.array(feature, dtype=np.int32), "left": np.array(left, dtype=np.int32),
                  "right": np.array(right, dtype=np.int32), "weighted_n_node_samples": np.array(weight, float),
                  "impurity": np.array(impurity, float), "value": np.array(value, float)}
        n = len(feature)
        arrays["threshold"] = np.where(arrays["left"] >= 0, 0.5, 0.0)
        arrays["missing_go_to_left"] = np.zeros(n, np.uint8)
        arrays["n_node_samples"] = np.ones(n, np.int32)
        arrays.update(derived_fields(arrays["left"], arrays["right"], arrays["weighted_n_node_samples"], arrays["impurity"]))
        return arrays


def figure_1_trees():
    """E[Y|X] = 1(X0 <= .5) 1(X1 <= .5), n = infinity: tree A splits X0 first, tree B X1 first."""
    a = ([0, 1, -1, -1, -1], [1, 2, -1, -1, -1], [4, 3, -1, -1, -1],
         [1, .5, .25, .25, .5], [3 / 16, 1 / 4, 0, 0, 0], [.25, .5, 1, 0, 0])
    b = ([1, 0, -1, -1, -1], *a[1:])
    return [a, b]
