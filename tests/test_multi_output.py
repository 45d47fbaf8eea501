"""Forests of several outputs (2-d y), as scikit-learn defines them: the criterion's impurity is the
mean of the outputs' impurities, leaves hold every output's value; predictions, probabilities,
out-of-bag values and class weights per output."""

import pickle

import numpy as np
import pytest
from sklearn import ensemble, tree
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils.class_weight import compute_sample_weight
from reference import signed_path
from test_sklearn_parity import assert_same_tree

from pyinterp import RandomForestClassifier, RandomForestRegressor, importance, interactions
from pyinterp.forest import tree_rules
from pyinterp.forest.tree import Tree
from pyinterp.forest.view import sklearn_tree_arrays


def data(n=300, seed=1):
    rng = np.random.default_rng(seed)
    # float32-representable: scikit-learn's trees compare float32(x), so thresholds then agree.
    X = rng.normal(size=(n, 6)).astype(np.float32).astype(np.float64)
    Y = np.c_[X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n), 2 * X[:, 1] + rng.normal(size=n), np.abs(X[:, 3])]
    classes = np.c_[X[:, 0] > 0, (X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5), X[:, 3] + 0.5 * rng.normal(size=n) > 0]
    return X, Y, classes.astype(int)


def one_tree(Forest, **kw):
    return Forest(1, bootstrap=False, max_features=1.0, random_state=0, **kw)


def assert_same_multi_output_tree(sk, ours, n_outputs):
    assert_same_tree(sk.tree_, ours)
    np.testing.assert_allclose(ours.value.reshape(ours.node_count, n_outputs, -1), sk.tree_.value, rtol=1e-12,
                               atol=1e-15)


# Each case gives the same tree for every random_state of scikit-learn (no ties between features).
REGRESSION_CASES = [
    ("squared_error", {"min_samples_leaf": 5}),
    ("squared_error", {"max_depth": 4}),
    ("squared_error", {"max_leaf_nodes": 15}),
    ("absolute_error", {"min_samples_leaf": 5}),
    ("absolute_error", {"max_depth": 4}),
    ("poisson", {"min_samples_leaf": 5}),
    ("poisson", {"max_leaf_nodes": 15}),
]


@pytest.mark.parametrize("criterion, kw", REGRESSION_CASES)
def test_regression_trees_match_scikit_learn_node_for_node(criterion, kw):
    X, Y, _ = data()
    if criterion == "poisson":
        Y = np.exp(Y / 2)
    ours = one_tree(RandomForestRegressor, criterion=criterion, **kw).fit(X, Y)
    for seed in range(3):
        sk = tree.DecisionTreeRegressor(criterion=criterion, random_state=seed, **kw).fit(X, Y)
        assert_same_multi_output_tree(sk, ours.trees_[0], 3)
        np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(ours.feature_importances_, sk.feature_importances_, rtol=1e-9, atol=1e-13)


# (entropy with max_leaf_nodes=15 has two frontier nodes of equal decrease, which the two heaps
# split in opposite orders.)
@pytest.mark.parametrize("criterion, kw", [("gini", {"max_depth": 4}), ("entropy", {"max_depth": 4}),
                                           ("gini", {"max_leaf_nodes": 15})])
def test_classification_trees_match_scikit_learn_node_for_node(criterion, kw):
    X, _, C = data()
    ours = one_tree(RandomForestClassifier, criterion=criterion, **kw).fit(X, C)
    sk = tree.DecisionTreeClassifier(criterion=criterion, random_state=0, **kw).fit(X, C)
    assert_same_multi_output_tree(sk, ours.trees_[0], 3)
    for p, q in zip(ours.predict_proba(X), sk.predict_proba(X), strict=True):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


def brute_impurity(criterion, Y, w):
    """Mean over outputs of each output's impurity of weighted rows (one column per output)."""
    values = []
    for y in Y.T:
        if criterion == "gini":
            p = np.bincount(y, weights=w) / w.sum()
            values.append(1 - (p**2).sum())
        else:
            mean = (w * y).sum() / w.sum()
            values.append((w * (y - mean) ** 2).sum() / w.sum())
    return np.mean(values)


@pytest.mark.parametrize("Forest, criterion", [(RandomForestRegressor, "squared_error"),
                                               (RandomForestClassifier, "gini")])
def test_node_impurities_are_the_mean_over_outputs_of_their_rows(Forest, criterion):
    """Every node of a bootstrap forest records the in-bag weight, values and impurity of the rows
    that reach it, the impurity the mean of the outputs' (checked by brute force)."""
    X, Y, C = data(n=200)
    targets = Y if criterion == "squared_error" else C
    forest = Forest(3, criterion=criterion, max_depth=5, random_state=2).fit(X, targets)
    paths, offsets = forest.decision_path(X)
    paths = paths.tocsc()
    for t, tr in enumerate(forest.trees_):
        counts = forest.inbag_counts_[t].astype(float)
        for node in range(tr.node_count):
            rows = paths[:, offsets[t] + node].nonzero()[0]
            w = counts[rows]
            assert tr.weighted_n_node_samples[node] == pytest.approx(w.sum())
            assert tr.impurity[node] == pytest.approx(brute_impurity(criterion, targets[rows], w), abs=1e-12)
            if criterion == "squared_error":
                np.testing.assert_allclose(tr.value[node], (w @ Y[rows]) / w.sum(), rtol=1e-12, atol=1e-14)


def test_forests_predict_as_well_as_scikit_learn_on_every_output():
    """Held-out scores per output, averaged over seeds (one seed's spread is about 0.02)."""
    X, Y, C = data(n=800, seed=3)
    train, test = slice(0, 500), slice(500, None)
    scores = {"ours": [], "sk": []}
    for seed in range(4):
        for name, Regressor, Classifier in (("ours", RandomForestRegressor, RandomForestClassifier),
                                            ("sk", ensemble.RandomForestRegressor, ensemble.RandomForestClassifier)):
            r2 = r2_score(Y[test], Regressor(60, random_state=seed).fit(X[train], Y[train]).predict(X[test]),
                          multioutput="raw_values")
            predicted = Classifier(60, random_state=seed).fit(X[train], C[train]).predict(X[test])
            accuracy = [accuracy_score(C[test, k], predicted[:, k]) for k in range(3)]
            scores[name].append(np.r_[r2, accuracy])
    np.testing.assert_allclose(np.mean(scores["ours"], axis=0), np.mean(scores["sk"], axis=0), atol=0.025)


def test_shapes_follow_scikit_learn():
    X, Y, C = data()
    Cs = [C[:, 0], C[:, 1].astype(str), C[:, 2]]  # outputs with their own labels
    labels = np.c_[Cs[0], Cs[1], Cs[2]].astype(object)
    for y in (Y, C, labels):
        ours = (RandomForestRegressor if y is Y else RandomForestClassifier)(5, random_state=0).fit(X, y)
        sk = (ensemble.RandomForestRegressor if y is Y else ensemble.RandomForestClassifier)(5, random_state=0).fit(X, y)
        assert ours.n_outputs_ == sk.n_outputs_ == 3
        assert ours.predict(X[:4]).shape == sk.predict(X[:4]).shape == (4, 3)
        assert ours.predict(X[:4]).dtype == sk.predict(X[:4]).dtype
        if y is not Y:
            assert ours.n_classes_ == sk.n_classes_ == [2, 3, 2]
            for a, b in zip(ours.classes_, sk.classes_, strict=True):
                np.testing.assert_array_equal(a, b)
            assert [p.shape for p in ours.predict_proba(X[:4])] == [p.shape for p in sk.predict_proba(X[:4])]
            assert [p.shape for p in ours.predict_log_proba(X[:4])] == [(4, 2), (4, 3), (4, 2)]
            assert set(ours.predict(X).ravel()) <= set(y.ravel())


def test_a_column_vector_y_warns_and_is_one_output():
    X, Y, C = data()
    for Forest, y in ((RandomForestRegressor, Y[:, 0]), (RandomForestClassifier, C[:, 1])):
        flat = Forest(5, random_state=0).fit(X, y)
        with pytest.warns(DataConversionWarning, match="A column-vector y was passed"):
            column = Forest(5, random_state=0).fit(X, y[:, None])
        assert column.n_outputs_ == 1 and column.predict(X).shape == (len(y),)
        np.testing.assert_array_equal(column.predict(X), flat.predict(X))


def test_out_of_bag_values_per_output():
    X, Y, C = data()
    forest = RandomForestRegressor(30, oob_score=True, random_state=0).fit(X, Y)
    assert forest.oob_prediction_.shape == Y.shape
    assert forest.oob_score_ == pytest.approx(r2_score(Y, forest.oob_prediction_))
    # Brute force: each row's mean over the trees that did not draw it.
    leaves = forest.apply(X)
    expected = np.zeros_like(Y)
    for i in range(len(X)):
        out = np.flatnonzero(forest.inbag_counts_[:, i] == 0)
        expected[i] = np.mean([forest.trees_[t].value[leaves[i, t]] for t in out], axis=0)
    np.testing.assert_allclose(forest.oob_prediction_, expected, rtol=1e-12)

    binary = C[:, [0, 2]]  # multilabel-indicator: scikit-learn's subset accuracy, layout (n, classes, outputs)
    ours = RandomForestClassifier(30, oob_score=True, random_state=0).fit(X, binary)
    sk = ensemble.RandomForestClassifier(30, oob_score=True, random_state=0).fit(X, binary)
    assert ours.oob_decision_function_.shape == sk.oob_decision_function_.shape == (len(X), 2, 2)
    predicted = np.argmax(ours.oob_decision_function_, axis=1)
    assert ours.oob_score_ == pytest.approx(accuracy_score(binary, predicted))
    assert ours.oob_score_ == pytest.approx(sk.oob_score_, abs=0.05)
    for p, q in zip(ours.oob_predict_proba(X), np.moveaxis(ours.oob_decision_function_, -1, 0), strict=True):
        np.testing.assert_array_equal(p, q)

    message = "Got multiclass-multioutput while only the following are supported"
    for Forest in (RandomForestClassifier, ensemble.RandomForestClassifier):
        with pytest.raises(ValueError, match=message):
            Forest(5, oob_score=True).fit(X, C)


def test_class_weight_per_output_is_the_product_of_the_outputs_weights():
    X, _, C = data()
    weights = [{0: 1.0, 1: 2.0}, {0: 1.0, 1: 0.5, 2: 3.0}, {0: 2.0, 1: 1.0}]
    for class_weight in (weights, "balanced"):
        a = RandomForestClassifier(10, class_weight=class_weight, random_state=0).fit(X, C)
        b = RandomForestClassifier(10, random_state=0).fit(X, C, sample_weight=compute_sample_weight(class_weight, C))
        for p, q in zip(a.predict_proba(X), b.predict_proba(X), strict=True):
            np.testing.assert_array_equal(p, q)
    for bad, message in ((weights[0], "For multi-output, class_weight should be a list of dicts"),
                         (weights[:2], "number of elements in class_weight should match number of outputs")):
        for Forest in (RandomForestClassifier, ensemble.RandomForestClassifier):
            with pytest.raises(ValueError, match=message):
                Forest(5, class_weight=bad).fit(X, C)
    with pytest.raises(ValueError, match="finite weight >= 0"):
        RandomForestClassifier(5, class_weight=[weights[0], {0: 1.0, 1: -1.0, 2: 1.0}, weights[2]]).fit(X, C)


def test_balanced_subsample_weighs_each_tree_by_the_product_over_outputs():
    X, _, C = data()
    forest = RandomForestClassifier(4, class_weight="balanced_subsample", random_state=0).fit(X, C)
    for t, tr in enumerate(forest.trees_):
        counts = forest.inbag_counts_[t]
        drawn = np.repeat(np.arange(len(X)), counts)
        per_row = compute_sample_weight("balanced", C[drawn])  # scikit-learn's per-tree weights
        assert tr.weighted_n_node_samples[0] == pytest.approx(per_row.sum(), rel=1e-12)


def test_monotonic_constraints_are_refused_with_several_outputs():
    X, Y, _ = data()
    for Forest in (RandomForestRegressor, ensemble.RandomForestRegressor):
        with pytest.raises(ValueError, match="Monotonicity constraints are not supported with multiple outputs"):
            Forest(5, monotonic_cst=[1, 0, 0, 0, 0, 0]).fit(X, Y)


def test_warm_start_threads_and_pickles_keep_the_forest():
    X, Y, C = data()
    for Forest, y in ((RandomForestRegressor, Y), (RandomForestClassifier, C)):
        at_once = Forest(12, random_state=4).fit(X, y)
        grown = Forest(5, random_state=4, warm_start=True, n_jobs=2).fit(X, y)
        grown.set_params(n_estimators=12).fit(X, y)
        restored = pickle.loads(pickle.dumps(grown))
        for other in (grown, restored):
            np.testing.assert_array_equal(np.asarray(other.predict(X)), np.asarray(at_once.predict(X)))
            for a, b in zip(other.trees_, at_once.trees_, strict=True):
                np.testing.assert_array_equal(a.value, b.value)
    grown = RandomForestClassifier(2, warm_start=True).fit(X, C)
    with pytest.raises(ValueError, match="warm_start adds trees for the same classes"):
        grown.set_params(n_estimators=3).fit(X, C[:, :2])


def test_export_to_scikit_learn_keeps_every_output():
    X, Y, C = data()
    for Forest, y in ((RandomForestRegressor, Y), (RandomForestClassifier, C)):
        ours = Forest(4, max_depth=4, random_state=0).fit(X, y)
        sk = ours.to_sklearn()
        assert sk.n_outputs_ == 3
        np.testing.assert_allclose(np.asarray(sk.predict(X)), np.asarray(ours.predict(X)), rtol=1e-12)
        if Forest is RandomForestClassifier:
            for p, q in zip(sk.predict_proba(X), ours.predict_proba(X), strict=True):
                np.testing.assert_allclose(p, q, rtol=1e-12)
        assert "feature_0" in tree.export_text(ours.estimators_[0])


def test_mdi_reads_several_outputs_and_the_per_row_measures_refuse_them():
    X, Y, C = data()
    forest = RandomForestRegressor(5, random_state=0).fit(X, Y)
    np.testing.assert_allclose(importance.mdi(forest), forest.feature_importances_)
    message = (r"forest has 3 outputs; this function reads single-output forests \(it scores, explains or prints one "
               r"response per row or leaf\): fit one forest per output, or use what reads several \(mdi / "
               r"feature_importances_, signed paths, DWP, path prevalence and their miners\)")
    for call in (lambda: importance.mdi_oob(forest, X, Y[:, 0]), lambda: importance.contributions(forest, X),
                 lambda: importance.shap_values(forest, X), lambda: tree_rules(forest)):
        with pytest.raises(ValueError, match=message):
            call()


def test_signed_paths_and_dwp_of_several_outputs_read_scikit_learns_impurity_decrease():
    """Paths read only the splits, the recorded impurity decrease (the mean of the outputs', as
    scikit-learn's multi-output tree records it) and the leaf depths: a multi-output tree's paths
    are the reference's on scikit-learn's own tree, DWP sums their depth weights 2^-D, and path
    prevalence reads the leaf scikit-learn routes each row to."""
    X, Y, _ = data()
    ours = one_tree(RandomForestRegressor, min_samples_leaf=5).fit(X, Y)
    sk = tree.DecisionTreeRegressor(min_samples_leaf=5, random_state=0).fit(X, Y)
    arrays = sklearn_tree_arrays(sk)  # sk's impurities; the value (first output) is not read
    theirs = Tree({**arrays, "value": arrays["value"].reshape(-1, 1)})
    leaves = np.flatnonzero(theirs.left < 0)
    expected = [signed_path(theirs, leaf, 0.05) for leaf in leaves]
    paths = interactions.signed_paths(ours, 0.05)
    assert [list(paths.codes[paths.indptr[r]:paths.indptr[r + 1]]) for r in range(len(paths))] == expected
    assert 0 < sum(map(len, expected)) < sum(theirs.depth[leaves])  # the filter drops some splits, not all
    sets = [[(int(theirs.feature[0]), -1)], [(1, 1), (2, -1)]]
    want = [sum(2.0 ** -theirs.depth[leaf] for leaf, codes in zip(leaves, expected)
                if set(interactions.encode(s)) <= set(codes)) for s in sets]
    np.testing.assert_allclose(interactions.dwp(ours, sets, 0.05), want, rtol=1e-12)
    # Per-row prevalence: whether the leaf scikit-learn routes each row to holds the set.
    reached = {leaf: codes for leaf, codes in zip(leaves, expected)}
    want = [[float(set(interactions.encode(s)) <= set(reached[leaf])) for s in sets] for leaf in sk.apply(X[:20])]
    np.testing.assert_array_equal(interactions.path_prevalence(ours, paths, X[:20], sets), want)


def test_states_before_version_4_load_as_one_output():
    X, Y, _ = data()
    state = RandomForestRegressor(3, random_state=0).fit(X, Y[:, 0])._forest.__getstate__()
    Forest = type(RandomForestRegressor(1).fit(X[:10], Y[:10, 0])._forest)
    del state["n_outputs"]
    with pytest.raises(ValueError, match="corrupt forest state: no n_outputs"):
        Forest.from_state(state)
    state["version"] = 3
    assert Forest.from_state(state).n_outputs == 1
