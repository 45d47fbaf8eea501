"""max_leaf_nodes (best-first growth) and ccp_alpha (cost-complexity pruning) on bootstrap
forests: budgets, nesting, determinism, and what the interpretation methods read. Node-for-node
equality with scikit-learn is in test_sklearn_parity.py."""

import numpy as np
import pytest
from reference import mdi_oob_per_tree

from pyinterp import RandomForestClassifier, RandomForestRegressor
from pyinterp.forest.tree import derived_fields
from pyinterp.importance import mdi_oob
from pyinterp.interactions import signed_paths


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.rand(300, 8)
    y = 3 * X[:, 0] + np.sin(6 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.3 * rng.randn(300)
    return X, y


def leaves(tree):
    return int(np.sum(tree.left < 0))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_max_leaf_nodes_bounds_every_tree(data, n_jobs):
    X, y = data
    forest = RandomForestRegressor(n_estimators=8, max_leaf_nodes=11, max_features=0.5, random_state=0,
                                   n_jobs=n_jobs).fit(X, y)
    assert [leaves(t) for t in forest.trees_] == [11] * 8
    reference = RandomForestRegressor(n_estimators=8, max_leaf_nodes=11, max_features=0.5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(forest.predict(X), reference.predict(X))


def test_a_budget_beyond_any_tree_grows_the_full_tree(data):
    """2^70 leaves (clamped to what a tree can hold) never binds: without bootstrap every leaf
    holds one row of distinct y, as in depth-first growth."""
    X, y = data
    forest = RandomForestRegressor(n_estimators=3, bootstrap=False, max_leaf_nodes=2**70, random_state=0).fit(X, y)
    assert [leaves(t) for t in forest.trees_] == [len(y)] * 3
    np.testing.assert_allclose(forest.predict(X), y, rtol=1e-12)


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_larger_alpha_prunes_to_nested_subtrees(data, Forest):
    X, y = data
    y = y if Forest is RandomForestRegressor else (y > np.median(y)).astype(int)
    counts = []
    for alpha in (0.0, 1e-4, 1e-3, 1e-2, 1e9):
        forest = Forest(n_estimators=4, ccp_alpha=alpha, max_features=0.5, random_state=0).fit(X, y)
        counts.append([t.node_count for t in forest.trees_])
        for tree in forest.trees_:
            derived = derived_fields(tree.left, tree.right, tree.weighted_n_node_samples, tree.impurity)
            np.testing.assert_allclose(tree.impurity_decrease, derived["impurity_decrease"], rtol=1e-9, atol=1e-15)
            np.testing.assert_array_equal(tree.depth, derived["depth"])
    counts = np.array(counts)
    assert np.all(np.diff(counts, axis=0) <= 0) and np.any(np.diff(counts, axis=0) < 0)
    assert np.all(counts[-1] == 1)  # an alpha beyond every branch's leaves only the root


def test_pruning_alpha_scales_with_the_squared_targets(data):
    """The core fits y beyond 2^256 scaled by a power of two: ccp_alpha is scaled with it."""
    X, y = data
    kw = dict(n_estimators=3, max_features=0.5, random_state=0)
    base = RandomForestRegressor(ccp_alpha=1e-3, **kw).fit(X, y)
    big = RandomForestRegressor(ccp_alpha=np.ldexp(1e-3, 600), **kw).fit(X, np.ldexp(y, 300))
    assert [t.node_count for t in big.trees_] == [t.node_count for t in base.trees_]
    np.testing.assert_array_equal(big.predict(X), np.ldexp(base.predict(X), 300))


@pytest.mark.parametrize("kw", [dict(max_leaf_nodes=9), dict(ccp_alpha=2e-3)])
def test_interpretation_reads_grown_and_pruned_trees(data, kw):
    """MDI-oob equals its definition (thesis eq. 8.20) walked node by node on best-first numbered
    and pruned trees; signed paths have one row per leaf."""
    X, y = data
    forest = RandomForestRegressor(n_estimators=6, max_features=0.5, random_state=0, **kw).fit(X, y)
    per_tree = [mdi_oob_per_tree(t, X, y[:, None], counts == 0, X.shape[1])
                for t, counts in zip(forest.trees_, forest.inbag_counts_)]
    np.testing.assert_allclose(mdi_oob(forest, X, y), np.mean(per_tree, axis=0), rtol=0, atol=1e-12)
    assert len(signed_paths(forest)) == sum(leaves(t) for t in forest.trees_)


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_min_node_size_splits_only_nodes_of_more_draws(data, Forest):
    """ranger's min.node.size: every split node holds more than min_node_size in-bag draws (repeats
    counted), some leaf of the unlimited forest does not, and 1 or None limit nothing."""
    X, y = data
    target = y if Forest is RandomForestRegressor else (y > np.median(y)).astype(int)
    free = Forest(n_estimators=5, random_state=0).fit(X, target)
    for size in (None, 1):
        same = Forest(n_estimators=5, random_state=0, min_node_size=size).fit(X, target)
        for a, b in zip(same.trees_, free.trees_, strict=True):
            np.testing.assert_array_equal(a.threshold, b.threshold)
    limited = Forest(n_estimators=5, random_state=0, min_node_size=10).fit(X, target)
    for tree in limited.trees_:
        assert np.all(tree.weighted_n_node_samples[tree.left >= 0] > 10)
    assert sum(t.node_count for t in limited.trees_) < sum(t.node_count for t in free.trees_)
    assert any(np.any(t.weighted_n_node_samples[t.left >= 0] <= 10) for t in free.trees_)


@pytest.mark.parametrize("name, value", [("max_leaf_nodes", 1), ("max_leaf_nodes", 2.5), ("ccp_alpha", -0.1),
                                         ("min_node_size", 0), ("min_node_size", 2.5), ("keep_oob_leaves", "yes")])
def test_bad_growth_parameters_are_named(data, name, value):
    X, y = data
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        RandomForestRegressor(**{name: value}).fit(X, y)


@pytest.mark.parametrize("Forest, criterion", [(RandomForestRegressor, "squared_error"),
                                               (RandomForestRegressor, "poisson"),
                                               (RandomForestRegressor, "absolute_error"),
                                               (RandomForestClassifier, "gini")])
def test_monotonic_constraints_hold_everywhere(data, Forest, criterion):
    """On bootstrap forests of every criterion, along every constrained feature from random
    starting points, the prediction (a classifier's probability of its second class) moves only
    the constrained way."""
    X, y = data
    if criterion == "poisson":
        y = np.exp(y / 2)
    elif Forest is RandomForestClassifier:
        y = (y > np.median(y)).astype(int)
    cst = [1, -1, 0, 1, 0, 0, -1, 0]
    forest = Forest(n_estimators=20, criterion=criterion, monotonic_cst=cst, max_features=0.5,
                    random_state=0).fit(X, y)
    predict = forest.predict if Forest is RandomForestRegressor else (lambda Z: forest.predict_proba(Z)[:, 1])
    grid = np.linspace(-0.1, 1.1, 60)
    starts = np.random.RandomState(1).rand(15, X.shape[1])
    for j, sign in enumerate(cst):
        if sign == 0:
            continue
        for start in starts:
            Z = np.tile(start, (len(grid), 1))
            Z[:, j] = grid
            assert np.all(sign * np.diff(predict(Z)) >= -1e-12), (j, sign)


def test_monotonic_constraints_are_checked_as_scikit_learn(data):
    X, y = data
    with pytest.raises(ValueError, match="monotonic_cst has shape 3 but the input data X has 8 features"):
        RandomForestRegressor(monotonic_cst=[1, 0, 0]).fit(X, y)
    with pytest.raises(ValueError, match="monotonic_cst must be None or an array-like of -1, 0 or 1"):
        RandomForestRegressor(monotonic_cst=[2] + [0] * 7).fit(X, y)
    with pytest.raises(ValueError, match="not supported with multiclass classification"):
        RandomForestClassifier(monotonic_cst=[1] + [0] * 7).fit(X, np.digitize(y, [0.5, 1.5]))
    with pytest.raises(ValueError, match="monotonic_cst does not support missing values"):
        RandomForestRegressor(monotonic_cst=[1] + [0] * 7).fit(np.where(X > 0.95, np.nan, X), y)


def splits_from(tree, node=0):
    """The tree below `node` as nested (feature, threshold, n_node_samples, left, right), None at
    leaves: its shape and splits, whatever order its nodes were numbered in."""
    if tree.left[node] < 0:
        return None
    return (int(tree.feature[node]), float(tree.threshold[node]), int(tree.n_node_samples[node]),
            splits_from(tree, tree.left[node]), splits_from(tree, tree.right[node]))


def within(part, whole):
    """Whether every split of `part` is the split of the node at the same place in `whole`."""
    if part is None:
        return True
    return whole is not None and part[:3] == whole[:3] and within(part[3], whole[3]) and within(part[4], whole[4])


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_a_nodes_split_does_not_depend_on_the_growth_order(data, Forest):
    """A node draws its candidates from a stream of its own (its tree's index and its path), so
    best-first growth makes the nodes depth-first growth makes, split as they are there. With two
    of eight features a node, the draws differ from node to node: before the streams were per
    node, one tree's draws ran on across its nodes in growth order and no two orders agreed."""
    X, y = data
    y = y if Forest is RandomForestRegressor else (y > np.median(y)).astype(int)
    kw = dict(n_estimators=6, max_features=2, random_state=3)
    depth_first = Forest(**kw).fit(X, y)
    unbounded = Forest(max_leaf_nodes=2**40, **kw).fit(X, y)
    budget = Forest(max_leaf_nodes=9, **kw).fit(X, y)
    for full, best_first, small in zip(depth_first.trees_, unbounded.trees_, budget.trees_):
        whole = splits_from(full)
        assert splits_from(best_first) == whole
        np.testing.assert_array_equal(np.sort(best_first.impurity_decrease), np.sort(full.impurity_decrease))
        assert leaves(small) == 9 and within(splits_from(small), whole)


def test_the_seam_finds_the_root_split_of_the_tree_of_its_index(data):
    """_core.find_split draws as the root of tree `first_tree` does: without bootstrap the root of
    every tree is found from the same rows, and the seam gives each tree's root split."""
    from pyinterp import _core
    from pyinterp._seeds import root_seed

    X, y = data
    forest = RandomForestRegressor(n_estimators=5, max_features=1, bootstrap=False, random_state=4).fit(X, y)
    roots = [int(t.feature[0]) for t in forest.trees_]
    assert len(set(roots)) > 1  # one candidate a node: the roots differ from tree to tree
    params = _core.ForestParams()
    params.max_features = 1
    params.seed = root_seed(4)
    rows = np.arange(len(y), dtype=np.uint32)
    for t, feature in enumerate(roots):
        params.first_tree = t
        assert _core.find_split(X, y, None, 0, None, rows, params)["feature"] == feature
