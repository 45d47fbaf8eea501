"""Every recorded node field against a direct recomputation from the training rows."""

import numpy as np
import pytest
from reference import best_split, impurity, leaf_of

from pyinterp import RandomForestClassifier, RandomForestRegressor


@pytest.mark.parametrize("criterion", ["squared_error", "gini", "entropy"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_root_split_is_the_brute_force_best(criterion, weighted, missing):
    rng = np.random.RandomState(3)
    X = np.round(rng.rand(60, 4) * 10) / 10  # ties within columns on purpose
    if criterion == "squared_error":
        y = X[:, 1] + 0.3 * rng.randn(60)
        Forest, n_classes = RandomForestRegressor, None
    else:
        y = ((X[:, 2] > 0.5) + (X[:, 0] > 0.3)).astype(int)
        Forest, n_classes = RandomForestClassifier, 3
    w = rng.uniform(0.5, 2.0, 60) if weighted else np.ones(60)
    X[np.random.RandomState(5).rand(60, 4) < missing] = np.nan
    forest = Forest(n_estimators=1, criterion=criterion, max_depth=1, bootstrap=False, max_features=None,
                    random_state=0).fit(X, y, sample_weight=w if weighted else None)
    tree = forest.trees_[0]
    gain, argbest = best_split(X, y, w, criterion, n_classes=n_classes)
    assert (tree.feature[0], tree.threshold[0], tree.missing_go_to_left[0]) in argbest
    assert tree.impurity_decrease[0] == pytest.approx(gain, rel=1e-10)


@pytest.mark.parametrize("missing", [0.0, 0.15])
@pytest.mark.parametrize("min_samples_leaf", [1, 7])
@pytest.mark.parametrize("criterion", ["squared_error", "gini", "entropy"])
def test_every_split_is_the_best_for_its_node(regression_data, criterion, min_samples_leaf, missing):
    """With missing values too: each split is a best one among scikit-learn's candidates (both
    sides for the missing rows at every boundary, and observed | missing), its direction included."""
    X, y = regression_data
    X = np.round(X, 2)
    X[np.random.RandomState(4).rand(*X.shape) < missing] = np.nan
    if criterion == "squared_error":
        Forest, n_classes = RandomForestRegressor, None
    else:  # noisy 3-class labels: long same-class runs, which the classification scan skips
        Forest, n_classes = RandomForestClassifier, 3
        y = np.digitize(y + 0.3 * np.random.RandomState(0).randn(len(y)), [0.8, 1.6])
    forest = Forest(n_estimators=1, criterion=criterion, bootstrap=False, max_features=None,
                    min_samples_leaf=min_samples_leaf, random_state=1).fit(X, y)
    tree = forest.trees_[0]
    paths = forest.decision_path(X)[0].toarray().astype(bool)
    internal = np.flatnonzero(tree.left >= 0)
    # The first nodes, plus every small node: those stop their search once a candidate makes the
    # best split of their rows (up to 8 rows in classification, 32 in regression), which must
    # still be a best split over all features.
    small = internal[tree.n_node_samples[internal] <= 40]
    assert len(small) >= 10 or min_samples_leaf > 1
    for node in np.union1d(internal[:40], small):
        rows = paths[:, node]
        gain, argbest = best_split(X[rows], y[rows], np.ones(rows.sum()), criterion,
                                   min_samples_leaf=min_samples_leaf, n_classes=n_classes)
        assert (tree.feature[node], tree.threshold[node], tree.missing_go_to_left[node]) in argbest
        assert tree.impurity_decrease[node] * len(y) / rows.sum() == pytest.approx(gain, rel=1e-9)
    assert np.all(tree.n_node_samples[tree.left < 0] >= min_samples_leaf)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_node_fields_match_the_rows_that_reach_them(task, regression_data, classification_data):
    X, y = regression_data if task == "regression" else classification_data
    rng = np.random.RandomState(5)
    sw = rng.uniform(0.5, 1.5, len(y))
    Forest = RandomForestRegressor if task == "regression" else RandomForestClassifier
    criterion = "squared_error" if task == "regression" else "gini"
    forest = Forest(n_estimators=3, max_features=2, min_samples_leaf=3, random_state=0).fit(X, y, sample_weight=sw)
    indicator, offsets = forest.decision_path(X)
    indicator = indicator.toarray().astype(bool)
    for t, tree in enumerate(forest.trees_):
        counts = forest.inbag_counts_[t].astype(float)
        w = counts  # with bootstrap the sample weights chose the rows; the tree weighs the draws
        inbag = counts > 0
        n = tree.node_count
        assert np.all(tree.parent[0] == -1) and np.all(tree.depth[0] == 0)
        internal = tree.left >= 0
        # Preorder numbering with the left child first, consistent parent/depth links.
        assert np.all(tree.left[internal] == np.flatnonzero(internal) + 1)
        assert np.all(tree.parent[tree.left[internal]] == np.flatnonzero(internal))
        assert np.all(tree.parent[tree.right[internal]] == np.flatnonzero(internal))
        assert np.all(tree.depth[1:] == tree.depth[tree.parent[1:]] + 1)
        assert np.all(tree.feature[~internal] == -1) and np.all(tree.right[~internal] == -1)
        for node in range(n):
            rows = indicator[:, offsets[t] + node] & inbag
            assert tree.n_node_samples[node] == rows.sum()
            assert tree.weighted_n_node_samples[node] == pytest.approx(w[rows].sum(), rel=1e-12)
            assert tree.impurity[node] == pytest.approx(
                impurity(y[rows], w[rows], criterion, n_classes=3), rel=1e-9, abs=1e-12)
            if task == "regression":
                assert tree.value[node, 0] == pytest.approx(np.average(y[rows], weights=w[rows]), rel=1e-12)
            else:
                expected = np.bincount(y[rows], weights=w[rows], minlength=3) / w[rows].sum()
                np.testing.assert_allclose(tree.value[node], expected, rtol=1e-12)
        root = tree.weighted_n_node_samples[0]
        wi = tree.weighted_n_node_samples * tree.impurity
        expected = np.zeros(n)
        expected[internal] = (wi[internal] - wi[tree.left[internal]] - wi[tree.right[internal]]) / root
        np.testing.assert_array_equal(tree.impurity_decrease, expected)
        assert np.all(tree.impurity_decrease >= -1e-12)


def test_thresholds_route_training_rows_like_the_fit(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    tree = forest.trees_[0]
    leaves = forest.apply(X)[:, 0]
    assert all(leaf_of(tree, x) == leaf for x, leaf in zip(X, leaves))
    # Grown to purity: every in-bag row's leaf predicts that row exactly.
    inbag = forest.inbag_counts_[0] > 0
    np.testing.assert_allclose(tree.value[leaves[inbag], 0], y[inbag])


def test_thresholds_lie_midway_between_neighbouring_values():
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    y = np.array([0.0, 0.0, 10.0, 10.0])
    tree = RandomForestRegressor(n_estimators=1, bootstrap=False, random_state=0).fit(X, y).trees_[0]
    assert tree.threshold[0] == 2.0
    assert tree.node_count == 3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("run", [8, 3000])
def test_values_a_few_ulps_apart_keep_their_order(dtype, tied, run):
    """Columns are ranked through words that keep only the upper 32 bits of a float64's order
    key beside the row index; values equal there must still be ordered by their full value,
    with equal values tied. Here runs of `run` values 1 + j/512 + r ulp (r < run) share those
    bits: short runs are ordered by comparison sort, the single run of all 3000 by radix sort.
    (A float32 key fits the word whole: no runs, the same order.)"""
    n = 3000
    k = np.random.RandomState(0).permutation(n) // (2 if tied else 1)
    ulp = np.finfo(dtype).eps
    x = (dtype(1) + (k // run).astype(dtype) * dtype(1 / 512) + (k % run).astype(dtype) * ulp).astype(dtype)
    assert len(np.unique(x)) == len(np.unique(k))
    cut = 701
    y = (k >= cut).astype(float)
    forest = RandomForestRegressor(n_estimators=1, bootstrap=False, max_depth=1, max_features=None)
    X = np.column_stack([x, np.zeros(n, dtype)])
    assert X.dtype == dtype
    tree = forest.fit(X, y).trees_[0]
    assert tree.feature[0] == 0 and tree.impurity[tree.left[0]] == tree.impurity[tree.right[0]] == 0.0
    assert x[k == cut - 1][0] <= tree.threshold[0] < x[k == cut][0]


def test_limits_are_respected(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=3, max_depth=4, min_samples_split=30, min_samples_leaf=5,
                                   random_state=0).fit(X, y)
    for tree in forest.trees_:
        internal = tree.left >= 0
        assert tree.max_depth <= 4
        assert np.all(tree.n_node_samples[internal] >= 30)
        assert np.all(tree.n_node_samples[~internal] >= 5)
    forest = RandomForestRegressor(n_estimators=3, min_weight_fraction_leaf=0.1, random_state=0).fit(X, y)
    for tree in forest.trees_:
        leaf_weight = tree.weighted_n_node_samples[tree.left < 0]
        assert np.all(leaf_weight >= 0.1 * tree.weighted_n_node_samples[0] - 1e-9)
    stop = 0.01
    forest = RandomForestRegressor(n_estimators=3, min_impurity_decrease=stop, random_state=0).fit(X, y)
    for tree in forest.trees_:
        assert np.all(tree.impurity_decrease[tree.left >= 0] >= stop - 1e-15)


def test_pure_nodes_are_leaves():
    X = np.arange(20, dtype=float).reshape(-1, 1)
    y = np.r_[np.zeros(10), np.ones(10)]
    tree = RandomForestClassifier(n_estimators=1, bootstrap=False, random_state=0).fit(X, y).trees_[0]
    assert tree.node_count == 3 and tree.threshold[0] == 9.5
    assert np.all(tree.impurity[1:] == 0.0)


def test_impurity_decrease_has_one_formula_for_grown_and_imported_trees(regression_data):
    """The engine's recorded decreases, and derived_fields on the same node arrays (the path of
    trees built elsewhere), are (N_t I_t - N_l I_l - N_r I_r) / N_root to the bit; bad links are refused."""
    from pyinterp import _core
    from pyinterp.forest.tree import derived_fields

    X, y = regression_data
    for tree in RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y).trees_:
        w, imp, left, right = tree.weighted_n_node_samples, tree.impurity, tree.left, tree.right
        split = left >= 0
        expected = np.zeros(len(left))
        expected[split] = (w[split] * imp[split] - w[left[split]] * imp[left[split]]
                           - w[right[split]] * imp[right[split]]) / w[0]
        np.testing.assert_array_equal(tree.impurity_decrease, expected)
        derived = derived_fields(left, right, w, imp)
        for name in ("impurity_decrease", "parent", "depth"):
            np.testing.assert_array_equal(derived[name], getattr(tree, name), err_msg=name)
    for left, right in [([0, -1, -1], [2, -1, -1]), ([1, -1, -1], [-1, -1, -1]), ([1, -1, -1], [3, -1, -1])]:
        with pytest.raises(ValueError, match="node links"):
            _core.impurity_decreases(left, right, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="right must have shape"):
        _core.impurity_decreases([1, -1, -1], [2, -1], np.ones(3), np.ones(3))
