"""Same trees as scikit-learn where the algorithm is the same, and the same accuracy elsewhere."""

import numpy as np
import pytest
from conftest import SKLEARN_NAN_TREES, load_shared
from reference import best_split
from sklearn import datasets, ensemble
from sklearn.model_selection import train_test_split

from pyinterp import RandomForestClassifier, RandomForestRegressor
from pyinterp.forest.tree import derived_fields


def assert_same_tree(sk_tree, tree):
    internal = sk_tree.children_left >= 0
    assert tree.node_count == sk_tree.node_count
    np.testing.assert_array_equal(tree.left, sk_tree.children_left)
    np.testing.assert_array_equal(tree.right, sk_tree.children_right)
    np.testing.assert_array_equal(tree.feature, np.where(internal, sk_tree.feature, -1))
    np.testing.assert_array_equal(tree.threshold, np.where(internal, sk_tree.threshold, 0.0))
    np.testing.assert_array_equal(tree.missing_go_to_left, np.where(internal, sk_tree.missing_go_to_left, 0))
    np.testing.assert_array_equal(tree.n_node_samples, sk_tree.n_node_samples)
    np.testing.assert_allclose(tree.weighted_n_node_samples, sk_tree.weighted_n_node_samples, rtol=1e-12)
    np.testing.assert_allclose(tree.impurity, sk_tree.impurity, rtol=1e-9, atol=1e-12)
    derived = derived_fields(sk_tree.children_left, sk_tree.children_right, sk_tree.weighted_n_node_samples,
                             sk_tree.impurity)
    np.testing.assert_allclose(tree.impurity_decrease, derived["impurity_decrease"], rtol=1e-8, atol=1e-13)
    np.testing.assert_array_equal(tree.parent, derived["parent"])
    np.testing.assert_array_equal(tree.depth, derived["depth"])


def assert_same_tree_up_to_ties(sk_tree, tree, X, y, criterion, min_samples_leaf):
    """Walks both trees together. Where they split differently, both splits must be exact ties
    (brute force); such subtrees are not compared further. Returns the number of nodes compared."""
    compared, n_classes = 0, int(y.max()) + 1
    stack = [(0, 0, np.ones(len(y), bool))]
    while stack:
        a, b, rows = stack.pop()
        compared += 1
        assert tree.n_node_samples[b] == sk_tree.n_node_samples[a] == rows.sum()
        assert tree.impurity[b] == pytest.approx(sk_tree.impurity[a], rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(tree.value[b], sk_tree.value[a, 0], rtol=1e-12)
        sk_leaf, leaf = sk_tree.children_left[a] < 0, tree.left[b] < 0
        assert sk_leaf == leaf
        if leaf:
            continue
        ours = (tree.feature[b], tree.threshold[b], tree.missing_go_to_left[b])
        theirs = (sk_tree.feature[a], sk_tree.threshold[a], sk_tree.missing_go_to_left[a])
        if ours != theirs:
            _, argbest = best_split(X[rows].astype(float), y[rows], np.ones(rows.sum()), criterion,
                                    min_samples_leaf=min_samples_leaf, n_classes=n_classes)
            assert ours in argbest and theirs in argbest
            continue
        x = X[:, ours[0]]
        left = rows & np.where(np.isnan(x), bool(ours[2]), x <= ours[1])
        stack += [(sk_tree.children_left[a], tree.left[b], left), (sk_tree.children_right[a], tree.right[b], rows & ~left)]
    return compared


def with_missing(X, fraction, seed):
    """X with a fraction of its entries missing, one column missing 30% and constant otherwise
    (scikit-learn then never splits on it), and one column without missing values."""
    if fraction == 0:
        return X
    rng = np.random.RandomState(seed + 100)
    out = np.where(rng.rand(*X.shape) < fraction, np.nan, X).astype(X.dtype)
    out[:, -1] = np.where(rng.rand(len(X)) < 0.3, np.nan, 1.0)
    out[:, 0] = X[:, 0]
    return out


@pytest.mark.parametrize("missing", [0.0, 0.15])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_trees_match_node_for_node(seed, missing):
    if missing and not SKLEARN_NAN_TREES:
        pytest.skip("scikit-learn < 1.8 splits nodes with missing values differently (scikit-learn#32274)")
    rng = np.random.RandomState(seed)
    X = rng.rand(500, 8).astype(np.float32)  # float32: scikit-learn's own precision, so thresholds are equal
    y = X[:, 0] * 2 + np.sin(6 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.1 * rng.randn(500)
    X = with_missing(X, missing, seed)
    kw = dict(n_estimators=3, bootstrap=False, max_features=None, min_samples_leaf=10, random_state=seed)
    sk = ensemble.RandomForestRegressor(**kw).fit(X, y)
    ours = RandomForestRegressor(**kw).fit(X, y)
    for sk_est, tree in zip(sk.estimators_, ours.trees_):
        assert_same_tree(sk_est.tree_, tree)
    np.testing.assert_allclose(ours.feature_importances_, sk.feature_importances_, rtol=1e-8)
    # Test rows miss values in every column, the ones fitted without missing values included.
    test_rng = np.random.RandomState(seed + 7)
    X_test = np.where(test_rng.rand(300, 8) < missing, np.nan, test_rng.rand(300, 8)).astype(np.float32)
    for rows in (X, X_test):
        np.testing.assert_allclose(ours.predict(rows), sk.predict(rows), rtol=1e-12)
        np.testing.assert_array_equal(ours.apply(rows), sk.apply(rows))
        np.testing.assert_array_equal(ours.decision_path(rows)[0].toarray(), sk.decision_path(rows)[0].toarray())


@pytest.mark.parametrize("missing", [0.0, 0.15])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_classification_trees_match_node_for_node(criterion, missing):
    if missing and not SKLEARN_NAN_TREES:
        pytest.skip("scikit-learn < 1.8 splits nodes with missing values differently (scikit-learn#32274)")
    rng = np.random.RandomState(0)
    X = rng.rand(600, 6).astype(np.float32)
    y = ((X[:, 0] + 0.3 * rng.randn(600) > 0.5).astype(int) + (X[:, 1] + 0.3 * rng.randn(600) > 0.6))
    X = with_missing(X, missing, 0)
    kw = dict(n_estimators=2, criterion=criterion, bootstrap=False, max_features=None, min_samples_leaf=15,
              random_state=0)
    sk = ensemble.RandomForestClassifier(**kw).fit(X, y)
    ours = RandomForestClassifier(**kw).fit(X, y)
    for sk_est, tree in zip(sk.estimators_, ours.trees_):
        compared = assert_same_tree_up_to_ties(sk_est.tree_, tree, X, y, criterion, 15)
        assert compared >= 0.5 * sk_est.tree_.node_count


def _scores(make_model, X, y, seeds):
    out = []
    for seed in seeds:
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
        out.append(make_model(seed).fit(Xtr, ytr).score(Xte, yte))
    return np.array(out)


def _check_parity(ours, theirs, X, y, n_seeds=5):
    """Same splits for both. Ours may not trail by more than two standard errors of the paired
    difference: a regression guard that identical algorithms pass with probability ~0.98
    (bench/parity_forest.py reports the one-standard-error figures on more seeds)."""
    diff = _scores(ours, X, y, range(n_seeds)) - _scores(theirs, X, y, range(n_seeds))
    se = diff.std(ddof=1) / np.sqrt(n_seeds)
    assert diff.mean() >= -2 * se, (diff.mean(), se)


@pytest.mark.parametrize("name", ["diabetes", "friedman1"])
def test_regression_accuracy_parity(name):
    if name == "diabetes":
        X, y = datasets.load_diabetes(return_X_y=True)
    else:
        X, y = datasets.make_friedman1(n_samples=600, noise=1.0, random_state=0)
    kw = dict(n_estimators=100, max_features=0.33, n_jobs=2)
    _check_parity(lambda s: RandomForestRegressor(random_state=s, **kw),
                  lambda s: ensemble.RandomForestRegressor(random_state=s, **kw), X, y)


@pytest.mark.parametrize("name", ["breast_cancer", "wine", "digits"])
def test_classification_accuracy_parity(name):
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    kw = dict(n_estimators=100, n_jobs=2)
    _check_parity(lambda s: RandomForestClassifier(random_state=s, **kw),
                  lambda s: ensemble.RandomForestClassifier(random_state=s, **kw), X, y)


@pytest.mark.parametrize("name", ["allaml.npz", "colon.npz"])
def test_genomic_accuracy_parity(name):
    d = load_shared(name)
    kw = dict(n_estimators=200, n_jobs=2)
    _check_parity(lambda s: RandomForestClassifier(random_state=s, **kw),
                  lambda s: ensemble.RandomForestClassifier(random_state=s, **kw), d["X"], d["y"], n_seeds=10)
