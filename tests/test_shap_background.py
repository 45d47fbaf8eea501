"""Attributions read from leaf pattern tables or by walks, against background rows and
path-dependent: both equal the brute-force games (reference_shap.py) for Shapley values, Banzhaf
values and interaction values, and each other; results do not depend on the threads; the
algorithm's bad uses are refused by name. The comparisons with shap are in test_shap.py."""

import numpy as np
import pytest
from reference import sk_trees
from reference_shap import shapley_interactions, shapley_values
from sklearn.ensemble import RandomForestClassifier as SkClassifier

import pyinterp
from pyinterp import importance as imp


def _case(classes=False, p=5, max_depth=4, n_estimators=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((300, p))
    X[rng.random(X.shape) < 0.1] = np.nan  # routed by missing_go_to_left, in the patterns too
    y = np.nan_to_num(X[:, 0] * X[:, 1]) + np.nan_to_num(X[:, 2]) + 0.1 * rng.standard_normal(300)
    if classes:
        forest = pyinterp.RandomForestClassifier(n_estimators=n_estimators, max_depth=max_depth, random_state=0)
        return forest.fit(X, np.digitize(y, [-0.5, 0.5])), X
    return pyinterp.RandomForestRegressor(n_estimators=n_estimators, max_depth=max_depth, random_state=0).fit(X, y), X


def _per_value(reference, classes):
    return reference if classes else reference[..., 0]


@pytest.mark.parametrize("classes", [False, True])
@pytest.mark.parametrize("algorithm", ["patterns", "walk"])
def test_equal_brute_force(classes, algorithm):
    forest, X = _case(classes)
    p = X.shape[1]
    rows, background = X[:3], X[100:115]
    shapley, expected = imp.shap_values(forest, rows, background=background, algorithm=algorithm)
    banzhaf, banzhaf_expected = imp.banzhaf_values(forest, rows, background=background, algorithm=algorithm)
    interactions = imp.shap_interaction_values(forest, rows, background=background, algorithm=algorithm)
    for i, x in enumerate(rows):
        phi, empty = shapley_values(forest.trees_, x, p, background=background)
        np.testing.assert_allclose(shapley[i], _per_value(phi, classes), rtol=0, atol=1e-13)
        np.testing.assert_allclose(expected, _per_value(empty, classes), rtol=0, atol=1e-14)
        beta, _ = shapley_values(forest.trees_, x, p, background=background, banzhaf=True)
        np.testing.assert_allclose(banzhaf[i], _per_value(beta, classes), rtol=0, atol=1e-13)
        index = shapley_interactions(forest.trees_, x, p, background=background)
        np.testing.assert_allclose(interactions[i], _per_value(index, classes), rtol=0, atol=1e-13)
    np.testing.assert_array_equal(banzhaf_expected, expected)
    # Banzhaf values are not efficient: here they do not sum to the prediction, Shapley's do.
    prediction = forest.predict_proba(rows) if classes else forest.predict(rows)
    np.testing.assert_allclose(shapley.sum(axis=1) + expected, prediction, rtol=0, atol=1e-12)
    assert np.abs(banzhaf.sum(axis=1) + expected - prediction).max() > 1e-3
    np.testing.assert_allclose(interactions.sum(axis=2), shapley, rtol=0, atol=1e-13)


@pytest.mark.parametrize("classes", [False, True])
@pytest.mark.parametrize("algorithm", ["patterns", "walk"])
def test_path_dependent_equal_brute_force(classes, algorithm):
    # Without background rows the pattern tables come from the covers (PatternTree::path_tables).
    forest, X = _case(classes, max_depth=None)
    p = X.shape[1]
    values, expected = imp.banzhaf_values(forest, X[:4], algorithm=algorithm)
    shapley, shapley_expected = imp.shap_values(forest, X[:4], algorithm=algorithm)
    np.testing.assert_array_equal(expected, shapley_expected)
    for i, x in enumerate(X[:4]):
        beta, _ = shapley_values(forest.trees_, x, p, banzhaf=True)
        np.testing.assert_allclose(values[i], _per_value(beta, classes), rtol=0, atol=1e-13)
        phi, _ = shapley_values(forest.trees_, x, p)
        np.testing.assert_allclose(shapley[i], _per_value(phi, classes), rtol=0, atol=1e-13)


def test_scikit_learn_forest_equals_brute_force():
    rng = np.random.default_rng(3)
    X = rng.random((200, 5)).astype(np.float32).astype(float)  # scikit-learn compares float32(x)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0.8).astype(int)
    forest = SkClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    trees = sk_trees(forest, 2)
    for algorithm in ("patterns", "walk"):
        values, _ = imp.banzhaf_values(forest, X[:3], background=X[50:70], algorithm=algorithm)
        interactions = imp.shap_interaction_values(forest, X[:3], background=X[50:70], algorithm=algorithm)
        for i, x in enumerate(X[:3]):
            beta, _ = shapley_values(trees, x, 5, background=X[50:70], banzhaf=True)
            np.testing.assert_allclose(values[i], beta, rtol=0, atol=1e-13)
            index = shapley_interactions(trees, x, 5, background=X[50:70])
            np.testing.assert_allclose(interactions[i], index, rtol=0, atol=1e-13)


@pytest.mark.parametrize("max_depth", [2, 6, None])
def test_algorithms_agree_on_wider_forests(max_depth):
    # p = 12 (too many features for the brute force): patterns, walk and the per-tree choice agree.
    forest, X = _case(p=12, max_depth=max_depth, n_estimators=8, seed=4)
    rows, background = X[:60], X[150:250]
    walked = imp.shap_values(forest, rows, background=background, algorithm="walk")[0]
    try:
        patterned = imp.shap_values(forest, rows, background=background, algorithm="patterns")[0]
    except ValueError as error:  # fully grown trees may have paths beyond the tables' width
        assert max_depth is None and "distinct features on its path" in str(error)
    else:
        np.testing.assert_allclose(patterned, walked, rtol=0, atol=1e-13)
    auto = imp.shap_values(forest, rows, background=background)[0]
    np.testing.assert_allclose(auto, walked, rtol=0, atol=1e-13)
    path = [imp.shap_values(forest, rows, algorithm=a)[0] for a in ("walk", "auto")]
    np.testing.assert_allclose(path[1], path[0], rtol=0, atol=1e-13)
    pairs = imp.shap_interaction_values(forest, rows[:5], background=background)
    np.testing.assert_allclose(pairs.sum(axis=2), walked[:5], rtol=0, atol=1e-13)
    np.testing.assert_allclose(pairs, pairs.transpose(0, 2, 1), rtol=0, atol=0)


@pytest.mark.parametrize("algorithm", ["auto", "patterns", "walk"])
def test_identical_for_any_n_jobs(algorithm):
    forest, X = _case(p=8, max_depth=5, n_estimators=10, seed=5)
    rows, background = X[:50], X[100:200]
    one = imp.shap_values(forest, rows, background=background, algorithm=algorithm, n_jobs=1)[0]
    pairs = imp.shap_interaction_values(forest, rows[:9], background=background, algorithm=algorithm, n_jobs=1)
    path = imp.shap_values(forest, rows, algorithm=algorithm, n_jobs=1)[0]
    for n_jobs in (2, 3):
        many = imp.shap_values(forest, rows, background=background, algorithm=algorithm, n_jobs=n_jobs)[0]
        np.testing.assert_array_equal(many, one)
        np.testing.assert_array_equal(imp.shap_values(forest, rows, algorithm=algorithm, n_jobs=n_jobs)[0], path)
        np.testing.assert_array_equal(
            imp.shap_interaction_values(forest, rows[:9], background=background, algorithm=algorithm, n_jobs=n_jobs),
            pairs)


def test_bad_uses_are_refused_by_name():
    forest, X = _case()
    with pytest.raises(ValueError, match="path-dependent interaction values are walked"):
        imp.shap_interaction_values(forest, X[:2], algorithm="patterns")
    with pytest.raises(ValueError, match="'algorithm' parameter of banzhaf_values must be"):
        imp.banzhaf_values(forest, X[:2], background=X[:5], algorithm="fast")
    with pytest.raises(ValueError, match="background has 3 features"):
        imp.shap_interaction_values(forest, X[:2], background=X[:5, :3])
    rng = np.random.default_rng(0)
    Xw = rng.standard_normal((400, 40))
    deep = pyinterp.RandomForestRegressor(n_estimators=2, max_features=1.0, random_state=0)
    deep.fit(Xw, rng.standard_normal(400))
    for background in (Xw[:10], None):
        with pytest.raises(ValueError, match=r"a leaf with \d+ distinct features on its path; leaf patterns take"):
            imp.shap_values(deep, Xw[:2], background=background, algorithm="patterns")


@pytest.mark.parametrize("algorithm", ["patterns", "walk"])
def test_categorical_splits_and_repeated_features_equal_brute_force(algorithm):
    # Categorical splits take the patterns' scalar test; p = 3 at depth 6 makes features split
    # again below themselves (a leaf's pattern bit is then the AND of its splits).
    rng = np.random.default_rng(6)
    X = np.column_stack([rng.integers(0, 6, 400), rng.standard_normal(400), rng.standard_normal(400)])
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.where(np.isin(X[:, 0], [1, 4]), 1.0, 0.0) + np.nan_to_num(X[:, 1] * X[:, 2]) + 0.1 * rng.standard_normal(400)
    forest = pyinterp.RandomForestRegressor(n_estimators=3, max_depth=6, categorical_features=[0], random_state=0)
    forest.fit(X, y)
    rows, background = X[:5], X[200:230]
    values, _ = imp.shap_values(forest, rows, background=background, algorithm=algorithm)
    interactions = imp.shap_interaction_values(forest, rows, background=background, algorithm=algorithm)
    for i, x in enumerate(rows):
        phi, _ = shapley_values(forest.trees_, x, 3, background=background)
        np.testing.assert_allclose(values[i], phi[:, 0], rtol=0, atol=1e-13)
        index = shapley_interactions(forest.trees_, x, 3, background=background)
        np.testing.assert_allclose(interactions[i], index[..., 0], rtol=0, atol=1e-13)


def test_rows_in_tiles_equal_rows_alone():
    # Rows are tested 8 at a time and counted in blocks of 512 background rows: any row count
    # (tiles cut short, one row) gives each row the values it has alone.
    forest, X = _case(p=6, max_depth=5, n_estimators=4, seed=7)
    background = X[100:1137]  # not a multiple of the tile or the block
    together = imp.shap_values(forest, X[:13], background=background, algorithm="patterns")[0]
    for i in (0, 7, 8, 12):
        alone = imp.shap_values(forest, X[i:i + 1], background=background, algorithm="patterns")[0]
        np.testing.assert_allclose(alone[0], together[i], rtol=0, atol=1e-15)
