"""pyinterp forests as fitted scikit-learn forests, for the tools that read those (shap's
TreeExplainer, sklearn.tree.export_text / plot_tree, treeinterpreter): the same trees, node for
node, built from the core's node arrays. scikit-learn is imported only when a forest is exported."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from .._validation import resolve_max_features

def sklearn_tree(arrays, n_features, n_classes):
    """A fitted scikit-learn ``Tree`` of one tree's node arrays. n_classes: per output, the number
    of classes (1 for regression); the node values hold each output's at a stride of the most."""
    from sklearn.tree._tree import NODE_DTYPE, TREE_LEAF, TREE_UNDEFINED, Tree

    left = arrays["left"]
    if (arrays["category_split"] >= 0).any():
        raise ValueError("this tree splits on categories (categorical_features), which scikit-learn's trees cannot "
                         "hold before 1.10 and its forests not at all: it has no scikit-learn form")
    split = left >= 0
    nodes = np.zeros(left.shape[0], dtype=NODE_DTYPE)
    nodes["left_child"] = np.where(split, left, TREE_LEAF)
    nodes["right_child"] = np.where(split, arrays["right"], TREE_LEAF)
    nodes["feature"] = np.where(split, arrays["feature"], TREE_UNDEFINED)
    nodes["threshold"] = np.where(split, arrays["threshold"], float(TREE_UNDEFINED))
    nodes["impurity"] = arrays["impurity"]
    nodes["n_node_samples"] = arrays["n_node_samples"]
    nodes["weighted_n_node_samples"] = arrays["weighted_n_node_samples"]
    nodes["missing_go_to_left"] = arrays["missing_go_to_left"]
    n_classes = np.asarray(n_classes, dtype=np.intp)
    tree = Tree(n_features, n_classes, len(n_classes))
    # Regression leaves hold the mean, classification leaves the class fractions (scikit-learn >= 1.4);
    # scikit-learn's values are (nodes, outputs, most classes), as the core lays them out.
    values = np.ascontiguousarray(arrays["value"], dtype=np.float64).reshape(left.shape[0], len(n_classes), -1)
    tree.__setstate__({"max_depth": int(arrays["depth"].max()), "node_count": int(left.shape[0]),
                       "nodes": nodes, "values": values})
    return tree


def _fitted_attributes(est, forest):
    """The fitted attributes scikit-learn's trees and forests share, copied from the pyinterp forest."""
    est.n_features_in_ = forest.n_features_in_
    est.n_outputs_ = forest.n_outputs_
    if hasattr(forest, "classes_"):
        est.classes_ = forest.classes_
        est.n_classes_ = forest.n_classes_
    if hasattr(forest, "feature_names_in_"):
        est.feature_names_in_ = forest.feature_names_in_
    return est


def _sklearn_criterion(forest):
    """scikit-learn 1.9 deprecates friedman_mse as the squared_error it always equalled."""
    return "squared_error" if forest.criterion == "friedman_mse" else forest.criterion


def sklearn_estimator(forest, index):
    """Tree ``index`` of a fitted pyinterp forest as a fitted scikit-learn decision tree."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    classifier = hasattr(forest, "classes_")
    Estimator = DecisionTreeClassifier if classifier else DecisionTreeRegressor
    est = Estimator(criterion=_sklearn_criterion(forest), max_depth=forest.max_depth,
                    min_samples_split=forest.min_samples_split, min_samples_leaf=forest.min_samples_leaf,
                    min_weight_fraction_leaf=forest.min_weight_fraction_leaf, max_features=forest.max_features,
                    max_leaf_nodes=forest.max_leaf_nodes, min_impurity_decrease=forest.min_impurity_decrease,
                    ccp_alpha=forest.ccp_alpha, monotonic_cst=forest.monotonic_cst)
    n_classes = np.atleast_1d(forest.n_classes_) if classifier else [1] * forest.n_outputs_
    est.tree_ = sklearn_tree(forest._forest.tree(index), forest.n_features_in_, n_classes)
    est.max_features_ = resolve_max_features(forest.max_features, forest.n_features_in_, forest.n_features_in_)
    return _fitted_attributes(est, forest)


class TreeEstimators(Sequence):
    """A fitted pyinterp forest's ``estimators_``: tree i as a fitted scikit-learn decision tree,
    built when first read."""

    def __init__(self, forest):
        self._forest = forest
        self._built = {}

    def __len__(self):
        return self._forest._forest.n_trees

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]  # negative indices, and IndexError out of range
        if i not in self._built:
            self._built[i] = sklearn_estimator(self._forest, i)
        return self._built[i]


class CarriedInbag:
    """The in-bag counts of an export's trees, which hold while the scikit-learn forest holds those
    trees: a refit replaces (or, with warm_start, extends) its ``estimators_``, whose rows its own
    random_states then give."""

    def __init__(self, inbag, trees):
        self.inbag, self.trees = inbag, trees

    def of(self, forest):
        """The counts, or None once ``forest`` holds other trees."""
        trees = getattr(forest, "estimators_", None)
        return self.inbag if trees is self.trees and len(trees) == len(self.inbag) else None


def _drawn_rows(forest, carried):
    """scikit-learn's ``_get_estimators_indices`` for an export, so its ``estimators_samples_``
    gives the rows pyinterp drew (as pyinterp's does) rather than draws from tree random_states;
    after a refit, scikit-learn's own."""
    inbag = carried.of(forest)
    if inbag is None:
        yield from type(forest)._get_estimators_indices(forest)
        return
    rows = np.arange(inbag.shape[1])
    for counts in inbag:
        yield np.repeat(rows, counts)


def to_sklearn(forest):
    """A fitted scikit-learn RandomForestRegressor / RandomForestClassifier with the same trees.

    It carries what scikit-learn's fitted forest carries for its out-of-bag sets, in the form
    pyinterp has them: pyinterp draws rows differently, so no tree random_state regenerates them;
    the in-bag counts travel as ``_pyinterp_inbag`` (read by pyinterp's out-of-bag measures before
    any regeneration) and back ``estimators_samples_``, until a refit replaces the trees. The
    out-of-bag attributes are copied."""
    from sklearn import ensemble

    classifier = hasattr(forest, "classes_")
    Forest = ensemble.RandomForestClassifier if classifier else ensemble.RandomForestRegressor
    params = {name: getattr(forest, name) for name in ("n_estimators", "max_depth", "min_samples_split",
                                                       "min_samples_leaf", "min_weight_fraction_leaf", "max_features",
                                                       "max_leaf_nodes", "min_impurity_decrease", "bootstrap",
                                                       "oob_score", "n_jobs", "random_state", "ccp_alpha",
                                                       "max_samples", "monotonic_cst")}
    if classifier:
        params["class_weight"] = forest.class_weight
    out = Forest(criterion=_sklearn_criterion(forest), **params)
    out.estimators_ = list(forest.estimators_)
    out.estimator_ = out.estimators_[0].__class__(**out.estimators_[0].get_params())
    inbag = forest._forest.inbag
    out._n_samples = forest._forest.n_samples
    out._n_samples_bootstrap = int(inbag[0].sum()) if forest.bootstrap else None
    out._pyinterp_inbag = CarriedInbag(inbag, out.estimators_)
    out._get_estimators_indices = partial(_drawn_rows, out, out._pyinterp_inbag)
    for name in ("oob_score_", "oob_prediction_", "oob_decision_function_"):
        if hasattr(forest, name):
            setattr(out, name, getattr(forest, name))
    return _fitted_attributes(out, forest)
