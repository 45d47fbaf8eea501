"""Readable rules: tree leaves and interactions as text, interaction indicators and predictions
against brute-force walks of the trees."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor as SkRegressor
from sklearn.exceptions import NotFittedError

from hand_trees import Hand, figure_1_trees
from pyinterp import IterativeRandomForest, LSSFind, RandomForestClassifier, RandomForestRegressor
from pyinterp.datasets import make_lss
from pyinterp.forest import tree_rules
from pyinterp.interactions import interaction_rule, signed_paths
from reference import leaf_of, signed_path


def single_tree(X, y, Forest=RandomForestRegressor):
    return Forest(1, bootstrap=False, max_features=None, random_state=0).fit(X, y)


def genes_data():
    # GENE12 splits first (at 3.0/2 + 3.8/2 = 3.4), then GENE40 (0.6/2 + 0.8/2 = 0.7) on its left.
    X = pd.DataFrame({"GENE12": [3.0, 3.0, 3.8, 3.8, 5.0], "GENE40": [0.8, 0.6, 0.8, 0.6, 0.6]})
    return X, np.array([2.31, 0.5, 0.0, 0.0, 0.0])


def test_tree_rules_text_with_names():
    X, y = genes_data()
    rules = tree_rules(single_tree(X, y))
    assert [str(r) for r in rules] == ["GENE12 <= 3.4 and GENE40 <= 0.7 -> 0.5",
                                       "GENE12 <= 3.4 and GENE40 > 0.7 -> 2.31",
                                       "GENE12 > 3.4 -> 0"]
    assert [str(r) for r in tree_rules(single_tree(X.to_numpy(), y))][1] == "x0 <= 3.4 and x1 > 0.7 -> 2.31"
    custom = tree_rules(single_tree(X.to_numpy(), y), feature_names=["a", "b"])
    assert str(custom[2]) == "a > 3.4 -> 0"


def test_tree_rules_keep_the_tightest_bound_per_side():
    X, y = np.arange(1.0, 5.0)[:, None], np.arange(4.0)  # splits 2.5, then 1.5 and 3.5
    assert [str(r) for r in tree_rules(single_tree(X, y))] == [
        "x0 <= 1.5 -> 0", "x0 <= 2.5 and x0 > 1.5 -> 1", "x0 > 2.5 and x0 <= 3.5 -> 2", "x0 > 3.5 -> 3"]


def test_tree_rules_of_a_classifier_and_a_scikit_learn_forest():
    X, y = genes_data()
    labels = np.array(["no", "yes", "no", "no", "no"])
    assert str(tree_rules(single_tree(X, labels, RandomForestClassifier))[0]) == "GENE12 <= 3.4 and GENE40 <= 0.7 -> yes (1.00)"
    sk = SkRegressor(1, bootstrap=False, random_state=0).fit(X, y)
    assert [str(r) for r in tree_rules(sk)] == [str(r) for r in tree_rules(single_tree(X, y))]


def test_exactly_one_tree_rule_holds_per_row_the_leaf_it_reaches():
    rng = np.random.RandomState(0)
    X, y = rng.rand(200, 5), rng.rand(200)
    forest = RandomForestRegressor(3, max_depth=6, random_state=0).fit(X, y)
    for t in range(3):
        tree = forest.trees_[t]
        leaves = np.flatnonzero(tree.left < 0)  # preorder, as the rules
        rules = tree_rules(forest, t, precision=17)
        assert len(rules) == len(leaves)
        holds = np.column_stack([r.holds(X) for r in rules])
        np.testing.assert_array_equal(leaves[holds.argmax(axis=1)], [leaf_of(tree, x) for x in X])
        assert np.all(holds.sum(axis=1) == 1)
        assert [r.value for r in rules] == list(tree.value[leaves, 0])


def test_tree_rules_bad_input():
    with pytest.raises(NotFittedError):
        tree_rules(RandomForestRegressor())
    with pytest.raises(TypeError, match="forest must be"):
        tree_rules("a forest")
    X, y = genes_data()
    with pytest.raises(ValueError, match="tree must be"):
        tree_rules(single_tree(X, y), tree=1)


def test_interaction_rule_on_the_paper_figure_forest():
    hand = Hand(figure_1_trees())  # E[Y|X] = 1(X0 <= .5) 1(X1 <= .5); two trees
    rule = interaction_rule(hand.forest, signed_paths(hand.forest), [(0, -1), (1, -1)])
    assert str(rule) == "x0 <= 0.5 and x1 <= 0.5 -> 1"
    X = np.array([[0.2, 0.3], [0.7, 0.3], [0.2, 0.9], [0.5, 0.5]])
    np.testing.assert_array_equal(rule.indicator(X), [True, False, False, True])
    np.testing.assert_array_equal(rule.predict(X), [1.0, 0.0, 0.0, 1.0])
    assert str(interaction_rule(hand.forest, signed_paths(hand.forest), [(0, 1)])) == "x0 > 0.5 -> 0"


def test_interaction_rule_takes_names_and_refuses_another_forests_paths():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((300, 4)), columns=list("abcd"))
    y = 1.0 * ((X.a > 0) & (X.b > 0))
    forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    paths = signed_paths(forest)
    by_index = interaction_rule(forest, paths, [(0, 1), (1, 1)])
    by_name = interaction_rule(forest, paths, [("a", 1), ("b", 1)])
    assert str(by_name) == str(by_index) and str(by_name).startswith("a > ")
    np.testing.assert_array_equal(by_name.indicator(X), by_index.indicator(X))
    with pytest.raises(ValueError, match="'z', which is not among the features"):
        interaction_rule(forest, paths, [("z", 1), ("b", 1)])
    for other in (RandomForestRegressor(n_estimators=10, max_depth=3, max_features=1, random_state=1).fit(X, y),
                  RandomForestRegressor(n_estimators=5, max_depth=3, random_state=1).fit(X, y)):
        with pytest.raises(ValueError, match="do not belong to this forest"):
            interaction_rule(other, paths, [(0, 1), (1, 1)])


def brute_force_rule(forest, features, epsilon):
    """Per leaf whose F_eps holds the signed set: its tightest bound per signed feature, walked
    from the root; the size-weighted median thresholds; the leaves' values and sizes."""
    codes = {2 * k + (s > 0) for k, s in features}
    bounds, values, weights = [], [], []
    for tree in forest.trees_:
        for leaf in np.flatnonzero(tree.left < 0):
            if not codes <= set(signed_path(tree, leaf, epsilon)):
                continue
            leaf_bounds, node = [], leaf
            path = []
            while tree.parent[node] >= 0:
                path.append((tree.parent[node], node == tree.left[tree.parent[node]]))
                node = tree.parent[node]
            for k, s in features:
                ts = [tree.threshold[q] for q, left in path if tree.feature[q] == k and left == (s < 0)]
                leaf_bounds.append(min(ts) if s < 0 else max(ts))
            bounds.append(leaf_bounds)
            values.append(tree.value[leaf, 0])
            weights.append(tree.weighted_n_node_samples[leaf])
    bounds, weights = np.array(bounds), np.array(weights)
    medians = []
    for j in range(len(features)):
        pairs = sorted(zip(bounds[:, j], weights))
        total, running = weights.sum(), 0.0
        for value, w in pairs:
            running += w
            if running >= total / 2:
                medians.append(value)
                break
    return bounds, np.array(values), weights, np.array(medians)


@pytest.fixture(scope="module")
def lss_fit():
    X, y, truth = make_lss(n_samples=300, n_features=6, n_interactions=1, order=2, snr=5, random_state=0)
    X = pd.DataFrame(X, columns=[f"GENE{j}" for j in range(6)])
    return X, y, truth, LSSFind(n_estimators=10, max_order=2, random_state=0).fit(X, y)


def test_lssfind_rule_equals_brute_force(lss_fit):
    X, y, truth, lss = lss_fit
    assert lss.minimal_.features == truth
    rule = lss.rule(lss.minimal_[0])
    bounds, values, weights, medians = brute_force_rule(lss.forest_, truth[0], lss.epsilon)
    np.testing.assert_array_equal(rule.leaf_bounds, bounds)
    np.testing.assert_array_equal(rule.thresholds, medians)
    assert rule.value == pytest.approx(np.average(values, weights=weights), rel=1e-12)
    Xa = X.to_numpy()
    inside = np.array([all((x[k] <= t) if s < 0 else (x[k] > t) for (k, s), t in zip(truth[0], medians)) for x in Xa])
    np.testing.assert_array_equal(rule.indicator(X), inside)
    predicted = [sum(w * v for b, v, w in zip(bounds, values, weights)
                     if all((x[k] <= t) if s < 0 else (x[k] > t) for (k, s), t in zip(truth[0], b))) / weights.sum()
                 for x in Xa[:50]]
    np.testing.assert_allclose(rule.predict(X.iloc[:50]), predicted, rtol=1e-12)
    assert str(rule) == f"GENE0 <= {medians[0]:.4g} and GENE1 <= {medians[1]:.4g} -> {rule.value:.4g}"
    # The cell's rows: the forest's value estimates their mean response.
    assert rule.value == pytest.approx(y[rule.indicator(X)].mean(), rel=0.1)


def test_interaction_rule_of_the_same_trees_in_scikit_learn(lss_fit):
    X, y, truth, lss = lss_fit
    sk = lss.forest_.to_sklearn()
    rule, peer = lss.rule(truth[0]), interaction_rule(sk, signed_paths(sk, lss.epsilon), truth[0])
    np.testing.assert_array_equal(peer.leaf_bounds, rule.leaf_bounds)
    assert str(peer) == str(rule)
    np.testing.assert_array_equal(peer.predict(X), rule.predict(X))
    np.testing.assert_array_equal(peer.indicator(X), rule.indicator(X))


def test_lssfind_rule_arguments(lss_fit):
    X, y, truth, lss = lss_fit
    by_index = lss.rule(0)
    assert by_index.features == lss.interactions_[0].features
    assert lss.rule([("GENE0", -1), ("GENE1", -1)]).features == truth[0]
    assert str(lss.rule(truth[0], precision=2)).startswith("GENE0 <= 0.")
    with pytest.raises(IndexError, match="not a row"):
        lss.rule(len(lss.interactions_))
    with pytest.raises(TypeError, match="interaction must be"):
        lss.rule("GENE0")
    with pytest.raises(ValueError, match="no leaf's path contains"):
        lss.rule([(0, -1), (0, 1)])
    with pytest.raises(ValueError, match="feature names"):
        lss.rule(0).indicator(X.iloc[:, :3])
    with pytest.raises(NotFittedError):
        LSSFind().rule(0)
    grouped = LSSFind(n_estimators=5, max_order=2, random_state=0).fit(X, y, feature_groups=list("aabbcc"))
    with pytest.raises(ValueError, match="feature groups"):
        grouped.rule(0)


def test_irf_rule_classification_values_are_class_fractions():
    rng = np.random.RandomState(1)
    X = rng.rand(400, 5)
    y = np.where((X[:, 0] > 0.5) & (X[:, 1] > 0.5), "case", "control")
    irf = IterativeRandomForest(2, 30, n_bootstraps=3, bootstrap_n_estimators=30, rit_n_trees=20, class_id="case",
                                random_state=0).fit(X, y)
    top = irf.interactions_[0]
    assert top.features == ((0, 1), (1, 1))
    rule = irf.rule(top)
    assert str(rule).startswith("x0 > 0.") and " and x1 > 0." in str(rule)
    assert rule.value > 0.9  # leaves inside the cell are mostly "case"
    inside = rule.indicator(X)
    assert (y[inside] == "case").mean() > 0.9 and (y[~inside] == "case").mean() < 0.1
    unsigned = IterativeRandomForest(2, 30, n_bootstraps=2, rit_n_trees=10, signed=False, style="pyinterp",
                                     random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="unsigned"):
        unsigned.rule(0)
