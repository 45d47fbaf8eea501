"""to_sklearn() and estimators_: pyinterp's trees as fitted scikit-learn trees, node for node, so
scikit-learn's own predict / apply / decision_path, export_text and shap read them."""

import pickle

import numpy as np
import pytest
from conftest import SKLEARN_NAN_TREES
from reference_shap import shapley_values
from sklearn import ensemble
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor, export_text

from pyinterp import RandomForestClassifier, RandomForestRegressor, importance


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
    # the same doubles: a sum over the trees in order, then one division (issue 52.12: 70 of 500
    # rows differed by an ulp when pyinterp multiplied by 1 / n_trees)
    if hasattr(forest, "classes_"):
        np.testing.assert_array_equal(sk.predict_proba(X), forest.predict_proba(X))
    np.testing.assert_array_equal(sk.predict(X), forest.predict(X))
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
    assert isinstance(trees[0], DecisionTreeClassifier if hasattr(forest, "classes_") else DecisionTreeRegressor)
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


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")  # heavy rows are drawn by every tree
@pytest.mark.parametrize("kind", ["regression", "classification", "weighted", "subsampled"])
def test_out_of_bag_measures_of_the_export_are_the_forests(kind, regression_data, classification_data):
    """The export carries the rows each tree was fitted on (pyinterp draws them differently from
    scikit-learn, so no tree random_state regenerates them): every out-of-bag measure of the export
    is the forest's, call after call, before and after pickling, and the export has the fitted
    attributes scikit-learn's own forest of the same parameters has."""
    classifier = kind == "classification"
    X, y = classification_data if classifier else regression_data
    X = X.astype(np.float32).astype(np.float64)  # scikit-learn's trees compare X as float32
    w = np.random.RandomState(0).uniform(0.2, 3.0, len(y)) if kind == "weighted" else None
    kw = dict(n_estimators=25, max_features=2, oob_score=True, random_state=0,
              max_samples={"weighted": 0.8, "subsampled": 0.6}.get(kind), bootstrap=kind != "subsampled")
    forest = (RandomForestClassifier if classifier else RandomForestRegressor)(**kw).fit(X, y, sample_weight=w)
    export = forest.to_sklearn()
    for sk in (export, pickle.loads(pickle.dumps(export))):
        for measure in (importance.mdi_oob, importance.naive_oob, importance.ufi):
            expected = measure(forest, X, y)
            np.testing.assert_array_equal(measure(sk, X, y), expected)
            np.testing.assert_array_equal(measure(sk, X, y), expected)  # nothing drawn from a global RNG
        np.testing.assert_array_equal(importance.permutation_oob(sk, X, y, n_repeats=2, random_state=0),
                                      importance.permutation_oob(forest, X, y, n_repeats=2, random_state=0))
        for theirs, ours in zip(sk.estimators_samples_, forest.estimators_samples_, strict=True):
            np.testing.assert_array_equal(theirs, ours)
        assert sk.oob_score_ == forest.oob_score_
        oob = "oob_decision_function_" if classifier else "oob_prediction_"
        np.testing.assert_array_equal(getattr(sk, oob), getattr(forest, oob))
    if forest.bootstrap:  # scikit-learn refuses max_samples without bootstrap
        fitted = type(export)(**export.get_params()).fit(X, y, sample_weight=w)
        # _sample_weight only regenerates scikit-learn's draws, which the carried counts replace.
        expected = {name for name in vars(fitted) if name.endswith("_") or name.startswith("_n_samples")}
        assert expected <= set(vars(export))
        assert (export._n_samples, export._n_samples_bootstrap) == (fitted._n_samples, fitted._n_samples_bootstrap)


@pytest.mark.parametrize("kind", ["regression", "classification", "monotonic regression", "monotonic classification"])
def test_shap_of_the_export_is_pyinterps_shap(kind, regression_data, classification_data):
    shap = pytest.importorskip("shap")
    classifier = "classification" in kind
    X, y = classification_data if classifier else regression_data
    X = X.astype(np.float32)
    kw = dict(n_estimators=6, max_features=3, random_state=0)
    if "monotonic" in kind:
        kw["monotonic_cst"] = [1, -1, 0, 0, 0, 0]
        y = (y > 0).astype(int) if classifier else y  # scikit-learn's constraints: binary classes only
    forest = (RandomForestClassifier if classifier else RandomForestRegressor)(**kw).fit(X, y)
    values, expected_value = importance.shap_values(forest, X[:40])
    explainer = shap.TreeExplainer(forest.to_sklearn())
    np.testing.assert_allclose(explainer.shap_values(X[:40]), values, rtol=0, atol=1e-9)
    np.testing.assert_allclose(explainer.expected_value, expected_value, rtol=0, atol=1e-9)


def test_shap_of_a_multi_output_export_is_the_shapley_value_of_each_output(regression_data):
    """pyinterp's shap_values reads one output; shap reads the export's every output, which must
    be each output's Shapley values of the forest's trees (brute force over the 2^6 subsets)."""
    shap = pytest.importorskip("shap")
    X, y = regression_data
    X = X.astype(np.float32)
    Y = np.column_stack([y, 3 * X[:, 2] - y])
    forest = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, Y)
    explainer = shap.TreeExplainer(forest.to_sklearn())
    values = explainer.shap_values(X[:5])
    assert values.shape == (5, 6, 2)
    for i, x in enumerate(X[:5].astype(np.float64)):
        phi, base = shapley_values(forest.trees_, x, 6)
        np.testing.assert_allclose(values[i], phi, rtol=0, atol=1e-9)
        np.testing.assert_allclose(explainer.expected_value, base, rtol=0, atol=1e-9)


def test_plot_tree_draws_every_node_of_an_exported_tree(classification_data):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.tree import plot_tree

    X, y = classification_data
    forest = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X.astype(np.float32), y)
    tree = forest.to_sklearn().estimators_[1]
    fig, ax = plt.subplots()
    try:
        annotations = plot_tree(tree, ax=ax)
    finally:
        plt.close(fig)
    nodes = [a.get_text() for a in annotations if "samples = " in a.get_text()]  # not the root's True / False
    assert len(nodes) == tree.tree_.node_count == forest.trees_[1].node_count
    root = forest.trees_[1]
    assert nodes[0].startswith(f"x[{root.feature[0]}] <= {root.threshold[0]:.3f}")


def test_treeinterpreter_reads_an_exported_classifier(classification_data):
    """treeinterpreter's Saabas decomposition of the export is pyinterp's contributions. (Its
    regressor path fails under numpy 2 on scikit-learn's own forests, so only classifiers.)"""
    ti = pytest.importorskip("treeinterpreter.treeinterpreter")
    X, y = classification_data
    X = X.astype(np.float32)
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    prediction, bias, contributions = ti.predict(forest.to_sklearn(), X[:30])
    ours, base = importance.contributions(forest, X[:30])
    np.testing.assert_allclose(prediction, forest.predict_proba(X[:30]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(contributions, ours, rtol=0, atol=1e-12)
    np.testing.assert_allclose(bias, np.broadcast_to(base, bias.shape), rtol=0, atol=1e-12)
