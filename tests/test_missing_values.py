"""Missing values (NaN) in X: one routing rule (the node's recorded direction) everywhere a row
meets a tree, trees from older pickles, DSTUMP on the observed rows, and the interaction methods
fitted on data with gaps. Node-for-node equality with scikit-learn is in test_sklearn_parity.py,
brute-force optimality of every split in test_tree_structure.py, the out-of-bag importance
measures on missing values in test_importance.py."""

import pickle

import numpy as np
import pytest
from reference import leaf_of
from sklearn import ensemble

from pyinterp import IterativeRandomForest, LocalLSSFind, LSSFind, RandomForestClassifier, RandomForestRegressor
from pyinterp import importance as imp
from pyinterp.datasets import make_lss
from pyinterp.interactions import path_prevalence


def gappy(X, fraction, seed):
    return np.where(np.random.RandomState(seed).rand(*X.shape) < fraction, np.nan, X)


@pytest.fixture
def gappy_regression(regression_data):
    X, y = regression_data
    return gappy(X, 0.1, 3), y


def test_oob_and_every_prediction_route_missing_values_by_the_recorded_direction(gappy_regression):
    X, y = gappy_regression
    forest = RandomForestRegressor(n_estimators=15, min_samples_leaf=3, random_state=0, oob_score=True).fit(X, y)
    trees, counts = forest.trees_, forest.inbag_counts_
    assert any(t.missing_go_to_left[t.left >= 0].any() for t in trees)
    assert any((~t.missing_go_to_left[t.left >= 0].astype(bool)).any() for t in trees)
    leaves = np.array([[leaf_of(t, x) for t in trees] for x in X])
    np.testing.assert_array_equal(forest.apply(X), leaves)
    values = np.array([[t.value[leaf, 0] for t, leaf in zip(trees, row)] for row in leaves])
    np.testing.assert_allclose(forest.predict(X), values.mean(axis=1), rtol=1e-12)
    oob = np.where(counts.T == 0, values, np.nan)
    np.testing.assert_allclose(forest.oob_predict(X), np.nanmean(oob, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(forest.oob_prediction_, forest.oob_predict(X))


def test_missing_values_are_thread_independent_and_survive_pickling(gappy_regression, classification_data):
    X, y = gappy_regression
    Xc, yc = classification_data
    Xc = gappy(Xc, 0.2, 4)
    for Forest, data in ((RandomForestRegressor, (X, y)), (RandomForestClassifier, (Xc, yc))):
        one = Forest(n_estimators=20, random_state=5, n_jobs=1).fit(*data)
        two = Forest(n_estimators=20, random_state=5, n_jobs=2).fit(*data)
        for a, b in zip(one.trees_, two.trees_):
            for name in a.__slots__:
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        again = pickle.loads(pickle.dumps(one))
        np.testing.assert_array_equal(again.apply(data[0]), one.apply(data[0]))


def test_state_without_the_missing_direction_loads_with_the_larger_child(regression_data):
    """Version 2 states (before missing values) derive the direction scikit-learn gives a node
    trained without missing values: towards the child with more rows, ties right."""
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)
    state = forest._forest.__getstate__()
    assert state["version"] == 4
    state["version"] = 2
    for tree in state["trees"]:
        del tree["missing_go_to_left"]
    core = type(forest._forest).from_state(state)
    for t, arrays in zip(forest.trees_, (core.tree(k) for k in range(core.n_trees))):
        split = t.left >= 0
        expected = t.n_node_samples[t.left[split]] > t.n_node_samples[t.right[split]]
        np.testing.assert_array_equal(arrays["missing_go_to_left"][split], expected)
        np.testing.assert_array_equal(arrays["missing_go_to_left"], t.missing_go_to_left)
    state["version"] = 3
    with pytest.raises(ValueError, match="tree has no missing_go_to_left"):
        type(forest._forest).from_state(state)


def test_scikit_learn_forests_on_missing_values_are_read_with_their_directions():
    rng = np.random.RandomState(0)
    X = gappy(rng.rand(300, 5), 0.2, 1)
    y = np.nan_to_num(X[:, 0]) + np.isnan(X[:, 1]) + 0.1 * rng.randn(300)
    sk = ensemble.RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    test = gappy(rng.rand(200, 5), 0.3, 2)
    C, bias = imp.contributions(sk, test)
    np.testing.assert_allclose(C.sum(axis=1) + bias, sk.predict(test), rtol=0, atol=1e-12)
    assert np.all(np.isfinite(imp.mdi_oob(sk, X, y)))


def test_dstump_leaves_out_each_features_missing_rows(regression_data):
    X, y = regression_data
    X = gappy(np.round(X, 2), 0.25, 6)
    X[:, 3] = np.nan
    X[::2, 3] = 0.5  # one observed value: no split
    for split in ("best", "median"):
        for side in ("sum", "left", "max"):
            table = imp.dstump(X, y, split=split, side=side)
            for j in range(X.shape[1]):
                seen = ~np.isnan(X[:, j])
                alone = imp.dstump(X[seen][:, [j]], y[seen], split=split, side=side)
                for name in ("threshold", "sign", "n_left"):
                    np.testing.assert_array_equal(table[name][j], alone[name][0], err_msg=f"{name} {j}")
                for name in ("scores", "impurity_decrease"):  # y is centred on all rows: rounding
                    np.testing.assert_allclose(table[name][j], alone[name][0], rtol=1e-12, err_msg=f"{name} {j}")
    assert table.scores[3] == -np.inf


def test_interaction_methods_fit_on_data_with_gaps():
    X, y, truth = make_lss(n_samples=1500, n_features=10, n_interactions=1, order=2, snr=5, random_state=0)
    X = gappy(X, 0.03, 9)
    find = LSSFind(max_order=3, random_state=0).fit(X, y)
    assert find.minimal_.features == truth
    irf = IterativeRandomForest(n_iterations=2, n_estimators=60, n_bootstraps=4, rit_n_trees=100,
                                max_features=None, style="pyinterp", random_state=0).fit(X, y)  # by stability
    assert irf.interactions_[0].features == truth[0]
    local = LocalLSSFind(n_estimators=30, max_order=3, random_state=0).fit(X, y)
    query = gappy(X[:30], 0.3, 10)
    sets = local.selected_.features
    # A row's prevalence counts its own paths: the leaves its missing values lead it to.
    leaves = local.forest_.apply(query)
    paths = local.paths_
    expected = np.zeros((len(query), len(sets)))
    for i, row in enumerate(leaves):
        for t, leaf in enumerate(row):
            k = np.flatnonzero((paths.tree == t) & (paths.leaf == leaf))[0]
            codes = set(paths.codes[paths.indptr[k]:paths.indptr[k + 1]].tolist())
            for s, features in enumerate(sets):
                expected[i, s] += all((f << 1 | (sign > 0)) in codes for f, sign in features) / len(row)
    np.testing.assert_allclose(path_prevalence(local.forest_, paths, query, sets), expected, rtol=0, atol=1e-12)
