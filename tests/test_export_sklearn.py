"""to_sklearn() and estimators_: pyinterp's trees as fitted scikit-learn trees, node for node, so
scikit-learn's own predict / apply / decision_path, export_text and shap read them."""

import numpy as np
import pytest
from conftest import SKLEARN_NAN_TREES
from sklearn import ensemble
from sklearn.tree import DecisionTreeRegressor, export_text

from pyinterp import RandomForestClassifier, RandomForestRegressor


@pytest.fixture(params=["regression", "classification"])
def fitted(request, regression_data, classification_data):
    X, y = regression_data if request.param == "regression" else classification_data
    X = X.astype(np.float32)  # scikit-learn's trees compare X as float32
    X[::7, 1] = np.nan
    Forest = RandomForestRegressor if request.param == "regression" else RandomForestClassifier
    return Forest(n_estimators=7, max_features=2, random_state=0).fit(X, y), X, y


def test_exported_forest_predicts_applies_and_routes_as_pyinterp(fitted):
    forest, X, y = fitted
    sk = forest.to_sklearn()
    assert isinstance(sk, (ensemble.RandomForestRegressor, ensemble.RandomForestClassifier))
    assert len(sk.estimators_) == len(forest) == 7
    np.testing.assert_array_equal(sk.apply(X), forest.apply(X))
    if hasattr(forest, "classes_"):
        np.testing.assert_allclose(sk.predict_proba(X), forest.predict_proba(X), rtol=1e-12)
        np.testing.assert_array_equal(sk.predict(X), forest.predict(X))
    else:
        np.testing.assert_allclose(sk.predict(X), forest.predict(X), rtol=1e-12)
    # Before 1.8, scikit-learn's decision_path ignores the missing-value routing its own apply() follows.
    rows = slice(None) if SKLEARN_NAN_TREES else ~np.isnan(X).any(axis=1)
    assert (sk.decision_path(X[rows])[0] != forest.decision_path(X[rows])[0]).nnz == 0
    np.testing.assert_allclose(sk.feature_importances_, forest.feature_importances_, rtol=1e-10)
    for tree, mine in zip(sk.estimators_, forest.trees_):
        split = mine.left >= 0
        np.testing.assert_array_equal(tree.tree_.feature[split], mine.feature[split])
        np.testing.assert_array_equal(tree.tree_.threshold[split], mine.threshold[split])
        np.testing.assert_array_equal(tree.tree_.n_node_samples, mine.n_node_samples)


def test_estimators_is_a_lazy_list_of_fitted_trees(fitted):
    forest, X, y = fitted
    trees = forest.estimators_
    assert len(trees) == 7 and len(list(forest)) == 7
    np.testing.assert_array_equal(forest[-1].apply(X), forest.apply(X)[:, -1])
    np.testing.assert_array_equal(trees[2].tree_.feature, np.where(forest.trees_[2].feature < 0, -2, forest.trees_[2].feature))
    assert [t.tree_.node_count for t in trees[1:3]] == [t.node_count for t in forest.trees_[1:3]]
    with pytest.raises(IndexError):
        trees[7]
    text = export_text(forest[0], max_depth=2)
    assert "feature_" in text and "<=" in text


def test_unfitted_forest_has_no_estimators():
    with pytest.raises(AttributeError):
        RandomForestRegressor().estimators_


def test_shap_reads_the_exported_forest(regression_data):
    shap = pytest.importorskip("shap")
    X, y = regression_data
    X = X.astype(np.float32)
    forest = RandomForestRegressor(n_estimators=5, max_features=2, random_state=0).fit(X, y)
    values = shap.TreeExplainer(forest.to_sklearn()).shap_values(X[:20])
    np.testing.assert_allclose(values.sum(axis=1) + shap.TreeExplainer(forest.to_sklearn()).expected_value,
                               forest.predict(X[:20]), rtol=1e-5, atol=1e-6)
    assert isinstance(forest[0], DecisionTreeRegressor)
