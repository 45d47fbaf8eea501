"""categorical_features: columns split into two sets of categories (Breiman's ordering), as
scikit-learn 1.10's decision trees split them. Checked against a brute force over every split of
the categories, against scikit-learn's trees where it has them, and through every reader of a tree."""

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from pyinterp import RandomForestClassifier, RandomForestRegressor, _core
from pyinterp.forest import tree_rules
from pyinterp.importance import mdi_oob, shap_interaction_values, shap_values


def _categorical_data(n=300, levels=(5, 4, 6), seed=0, missing=0.0, classes=False):
    """Integer category codes per column, y a non-ordinal function of them plus noise."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, k, n) for k in levels]).astype(np.float64)
    effect = [rng.normal(size=k) for k in levels]
    signal = sum(effect[j][X[:, j].astype(int)] for j in range(len(levels)))
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    y = signal + 0.5 * rng.normal(size=n)
    if classes:
        y = (y > np.median(y)).astype(int)
    return X, y


def _weighted_impurity_times_weight(y, w, criterion):
    """N_t I_t of a node's rows: the criterion's impurity times the node's weight."""
    W = w.sum()
    if criterion == "squared_error":
        mean = (w * y).sum() / W
        return (w * (y - mean) ** 2).sum()
    if criterion == "poisson":  # half deviance; the y log y terms cancel between a node and its children
        S = (w * y).sum()
        return -S * np.log(S / W) if S > 0 else 0.0
    p = np.array([w[y == c].sum() for c in (0, 1)]) / W
    if criterion == "gini":
        return W * (1.0 - (p ** 2).sum())
    nz = p[p > 0]
    return -W * (nz * np.log2(nz)).sum()


def _best_categorical_decrease(x, y, w, criterion):
    """The largest N_t I_t - N_l I_l - N_r I_r over every split of x's categories, with its
    missing rows on either side (brute force over all subsets)."""
    present = np.unique(x[~np.isnan(x)])
    missing = np.isnan(x)
    whole = _weighted_impurity_times_weight(y, w, criterion)
    best = -np.inf
    for r in range(len(present) + 1):
        for subset in itertools.combinations(present, r):
            for missing_left in (False, True):
                left = np.isin(x, subset) | (missing & missing_left)
                if left.all() or not left.any():
                    continue
                best = max(best, whole - _weighted_impurity_times_weight(y[left], w[left], criterion)
                           - _weighted_impurity_times_weight(y[~left], w[~left], criterion))
    return best


def _node_rows(forest, X, tree=0):
    indicator, starts = forest.decision_path(X)
    path = indicator[:, starts[tree]:starts[tree + 1]].tocsc()
    return [path[:, k].nonzero()[0] for k in range(path.shape[1])]


def _sides(tree, node, x):
    """Rows going left at a categorical node, by its left set and missing_go_to_left."""
    return np.where(np.isnan(x), bool(tree.missing_go_to_left[node]), np.isin(x, tree.left_set(node)))


@pytest.mark.parametrize("criterion,classes", [("squared_error", False), ("poisson", False), ("gini", True),
                                               ("entropy", True)])
@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_every_node_takes_the_best_split_of_the_categories(criterion, classes, missing):
    """Every node of a tree grown on all rows and all features splits where a brute force over
    every subset of every column's categories (missing rows on either side) drops the impurity
    most, and its left set and missing side make that split."""
    X, y = _categorical_data(n=160, levels=(5, 4, 6), seed=1, missing=missing, classes=classes)
    if criterion == "poisson":
        y = np.exp(y / 2)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    Forest = RandomForestClassifier if classes else RandomForestRegressor
    forest = Forest(1, criterion=criterion, bootstrap=False, max_features=1.0, max_depth=4, random_state=0,
                    categorical_features=[0, 1, 2]).fit(X, y, sample_weight=w)
    tree = forest.trees_[0]
    root_w = w.sum()
    checked = 0
    for node, rows in enumerate(_node_rows(forest, X)):
        if tree.feature[node] < 0:
            continue
        assert np.isnan(tree.threshold[node]) and tree.category_split[node] >= 0
        best = max(_best_categorical_decrease(X[rows, j], y[rows], w[rows], criterion) for j in range(3))
        left = _sides(tree, node, X[rows, tree.feature[node]])
        made = (_weighted_impurity_times_weight(y[rows], w[rows], criterion)
                - _weighted_impurity_times_weight(y[rows][left], w[rows][left], criterion)
                - _weighted_impurity_times_weight(y[rows][~left], w[rows][~left], criterion))
        assert made == pytest.approx(best, rel=1e-9, abs=1e-9)
        assert tree.impurity_decrease[node] * root_w == pytest.approx(best, rel=1e-7, abs=1e-9)
        checked += 1
    assert checked >= 5


def test_prefixes_in_mean_order_find_what_threshold_splits_on_codes_miss():
    """A category effect that is not monotone in the codes: one categorical split separates it,
    a threshold on the codes needs several."""
    x = np.repeat(np.arange(6.0), 20)
    y = np.isin(x, [1, 2, 5]).astype(float)
    X = x[:, None]
    cat = RandomForestRegressor(1, bootstrap=False, max_depth=1, categorical_features=[0]).fit(X, y)
    num = RandomForestRegressor(1, bootstrap=False, max_depth=1).fit(X, y)
    assert cat.trees_[0].left_set(0).tolist() == [0, 3, 4]  # the low-mean categories go left
    np.testing.assert_array_equal(cat.predict(X), y)
    assert not np.array_equal(num.predict(X), y)


def test_categories_absent_from_a_node_go_right_and_unseen_ones_are_missing():
    x = np.repeat([0.0, 1.0, 2.0], 30)
    y = (x == 1).astype(float)
    X = x[:, None]
    forest = RandomForestRegressor(1, bootstrap=False, max_depth=1, categorical_features=[0]).fit(X, y)
    tree = forest.trees_[0]
    assert tree.left_set(0).tolist() == [0, 2]
    # Category 3 never reached the node (as the code of a training category absent from the node's
    # rows): it is in no left set and goes right.
    core = forest._forest
    assert core.apply(np.array([[3.0]]), 1)[0, 0] == tree.right[0]
    # Through the estimator, a value the training X lacked is a missing value.
    assert forest.apply(np.array([[7.0]]))[0, 0] == (tree.left[0] if tree.missing_go_to_left[0] else tree.right[0])


def test_string_and_pandas_categories_with_names():
    rng = np.random.default_rng(3)
    n = 240
    frame = pd.DataFrame({"tissue": pd.Categorical(rng.choice(["blood", "brain", "liver", "lung"], n)),
                          "age": rng.normal(50, 10, n), "batch": pd.Categorical(rng.choice(["b1", "b2", "b3"], n))})
    y = frame["tissue"].isin(["blood", "liver"]).to_numpy() * 2.0 + (frame["batch"] == "b2") + rng.normal(0, .1, n)
    by_dtype = RandomForestRegressor(10, categorical_features="from_dtype", random_state=0).fit(frame, y)
    np.testing.assert_array_equal(by_dtype.is_categorical_, [True, False, True])
    by_name = RandomForestRegressor(10, categorical_features=["tissue", "batch"], random_state=0).fit(frame, y)
    np.testing.assert_array_equal(by_name.is_categorical_, [True, False, True])
    assert [c.tolist() for c in by_name.categories_] == [["blood", "brain", "liver", "lung"], ["b1", "b2", "b3"]]
    assert by_name.feature_names_in_.tolist() == ["tissue", "age", "batch"]
    # The same forest from the codes of the categories as numbers.
    codes = np.column_stack([frame["tissue"].cat.codes, frame["age"], frame["batch"].cat.codes])
    numeric = RandomForestRegressor(10, categorical_features=[0, 2], random_state=0).fit(codes.astype(float), y)
    np.testing.assert_array_equal(numeric.predict(codes.astype(float)), by_name.predict(frame))
    # Unseen categories are missing values; "from_dtype" on an array means none.
    new = frame.head(3).copy()
    new["batch"] = pd.Categorical(["b9", "b1", "b9"])
    assert np.isfinite(by_name.predict(new)).all()
    assert RandomForestRegressor(2, categorical_features="from_dtype").fit(codes, y).is_categorical_ is None


def test_relabelled_categories_give_the_same_forest():
    """Breiman's order depends on the categories' means, not their codes: renaming the categories
    (any permutation of the codes) leaves every prediction as it was."""
    X, y = _categorical_data(n=300, seed=4)
    rng = np.random.default_rng(5)
    relabelled = X.copy()
    for j, k in enumerate((5, 4, 6)):
        relabelled[:, j] = rng.permutation(k)[X[:, j].astype(int)]
    a = RandomForestRegressor(30, categorical_features=[0, 1, 2], random_state=7).fit(X, y)
    b = RandomForestRegressor(30, categorical_features=[0, 1, 2], random_state=7).fit(relabelled, y)
    np.testing.assert_allclose(a.predict(X), b.predict(relabelled), rtol=0, atol=1e-12)


def test_thread_count_pickle_and_recorded_out_of_bag_leaves():
    X, y = _categorical_data(n=300, seed=6, missing=0.1)
    kw = dict(n_estimators=25, categorical_features=[0, 1], random_state=3, oob_score=True)
    one = RandomForestRegressor(n_jobs=1, **kw).fit(X, y)
    two = RandomForestRegressor(n_jobs=2, **kw).fit(X, y)
    for a, b in zip(one.trees_, two.trees_):
        for name in ("feature", "category_split", "left", "missing_go_to_left", "left_categories"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    # The leaves recorded as the trees grew (the builder routes out-of-bag rows by codes) are
    # those a descent finds (by categories): bootstrap leaves some categories out of some nodes.
    np.testing.assert_array_equal(one.oob_prediction_, one.oob_predict(X))
    again = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(again.predict(X), one.predict(X))
    np.testing.assert_array_equal(again.trees_[3].left_categories, one.trees_[3].left_categories)


@pytest.mark.parametrize("Forest,classes", [(RandomForestRegressor, False), (RandomForestClassifier, True)])
def test_attributions_and_out_of_bag_measures_follow_the_category_routes(Forest, classes):
    X, y = _categorical_data(n=200, seed=8, missing=0.1, classes=classes)
    forest = Forest(15, categorical_features=[0, 2], max_depth=5, random_state=0).fit(X, y)
    predicted = forest.predict_proba(X) if classes else forest.predict(X)
    values, expected = shap_values(forest, X[:40])
    np.testing.assert_allclose(values.sum(axis=1) + expected, predicted[:40], atol=1e-10)
    interactions = shap_interaction_values(forest, X[:10])
    np.testing.assert_allclose(interactions.sum(axis=2), values[:10], atol=1e-10)
    background_values, background_expected = shap_values(forest, X[:20], background=X[50:80])
    np.testing.assert_allclose(background_values.sum(axis=1) + background_expected, predicted[:20], atol=1e-10)
    scores = mdi_oob(forest, X, y)
    assert scores.shape == (3,) and np.isfinite(scores).all()


def test_signed_paths_read_the_category_splits_as_sides():
    """Signed paths read a categorical split's side as a threshold's: '-' the left side (the
    low-mean categories). An interaction of a category set and a threshold is found, and
    path_prevalence routes rows as predict does; interaction_rule refuses the categorical feature."""
    from pyinterp.interactions import dwp, interaction_rule, path_prevalence, signed_paths

    rng = np.random.default_rng(16)
    n = 600
    X = np.column_stack([rng.integers(0, 6, n), rng.normal(size=n), rng.normal(size=n)]).astype(float)
    y = (np.isin(X[:, 0], [1, 4]) & (X[:, 1] > 0)).astype(float) + 0.05 * rng.normal(size=n)
    forest = RandomForestRegressor(50, categorical_features=[0], max_features=1.0, random_state=0).fit(X, y)
    paths = signed_paths(forest)
    pair, other = [(0, 1), (1, 1)], [(0, -1), (1, 1)]
    scores = dwp(forest, [pair, other, [(2, 1)]])
    assert scores[0] > 4 * max(scores[1], scores[2])
    prevalence = path_prevalence(forest, paths, X, [pair])
    inside = np.isin(X[:, 0], [1, 4]) & (X[:, 1] > 0)
    assert prevalence[inside, 0].mean() > 0.9 > 0.1 > prevalence[~inside, 0].mean()
    with pytest.raises(ValueError, match="categorical feature"):
        interaction_rule(forest, paths, pair)
    assert np.isfinite(interaction_rule(forest, paths, [(1, 1)]).thresholds).all()  # a threshold feature: a rule


def test_rules_name_the_categories():
    rng = np.random.default_rng(9)
    tissue = rng.choice(["blood", "brain", "liver", "lung"], 200)
    X = np.column_stack([tissue, rng.normal(size=200)]).astype(object)
    y = np.isin(tissue, ["blood", "liver"]).astype(float)
    forest = RandomForestRegressor(1, bootstrap=False, max_depth=1, categorical_features=[0]).fit(X, y)
    rules = tree_rules(forest, 0)
    assert [str(r) for r in rules] == ["x0 in {brain, lung} -> 0", "x0 in {blood, liver} -> 1"]
    codes = forest._category_encoder.transform(X)
    np.testing.assert_array_equal(rules[1].holds(codes), y == 1)


def test_pruning_and_best_first_growth_keep_the_category_splits():
    X, y = _categorical_data(n=300, seed=10)
    for kw in ({"ccp_alpha": 0.01}, {"max_leaf_nodes": 6}):
        forest = RandomForestRegressor(5, categorical_features=[0, 1, 2], random_state=0, **kw).fit(X, y)
        leaves = forest.apply(X)
        by_leaves = np.mean([t.value[leaves[:, k], 0] for k, t in enumerate(forest.trees_)], axis=0)
        np.testing.assert_allclose(forest.predict(X), by_leaves, atol=1e-12)
        assert any((t.category_split >= 0).any() for t in forest.trees_)


def test_the_state_is_checked_when_loaded():
    X, y = _categorical_data(n=100, seed=11)
    forest = RandomForestRegressor(2, categorical_features=[0], random_state=0, max_depth=3).fit(X, y)
    state = forest._forest.__getstate__()
    tree = state["trees"][0]
    node = int(np.flatnonzero(tree["category_split"] >= 0)[0])
    tree["category_split"][node] = len(tree["left_categories"])  # names no set
    with pytest.raises(ValueError, match="left_categories"):
        _core.Forest.from_state(state)
    tree["category_split"][node] = -1  # a NaN threshold on a threshold split
    with pytest.raises(ValueError, match="threshold must be a number"):
        _core.Forest.from_state(state)
    tree["left_categories"] = tree["left_categories"][:, :3]
    with pytest.raises(ValueError, match="shape"):
        _core.Forest.from_state(state)
    # A state without the categorical fields (pickled before them) loads as threshold splits.
    plain = RandomForestRegressor(2, random_state=0, max_depth=3).fit(X, y)._forest.__getstate__()
    for t in plain["trees"]:
        del t["category_split"], t["left_categories"]
    _core.Forest.from_state(plain)


def test_bad_requests_are_refused_by_name():
    X, y = _categorical_data(n=120, seed=12)
    with pytest.raises(ValueError, match="two classes"):
        RandomForestClassifier(2, categorical_features=[0]).fit(X, np.arange(120) % 3)
    with pytest.raises(ValueError, match="categorical_features needs one output"):
        RandomForestRegressor(2, criterion="absolute_error", categorical_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match="categorical_features needs one output"):
        RandomForestRegressor(2, categorical_features=[0]).fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="monotonic"):
        RandomForestRegressor(2, categorical_features=[0], monotonic_cst=[1, 0, 0]).fit(X, y)
    with pytest.raises(ValueError, match="at most 256"):
        RandomForestRegressor(2, categorical_features=[0]).fit(np.arange(300.0)[:, None], np.arange(300.0))
    with pytest.raises(ValueError, match="categorical_features names column 5"):
        RandomForestRegressor(2, categorical_features=[5]).fit(X, y)
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="dense array or a DataFrame"):
        RandomForestRegressor(2, categorical_features=[0]).fit(sp.csr_matrix(X), y)
    forest = RandomForestRegressor(2, categorical_features=[0], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="no scikit-learn form"):
        forest.to_sklearn()
    # The core checks the codes it is given: integers in [0, 256).
    params = _core.ForestParams()
    params.n_estimators, params.n_draws, params.max_features = 1, 120, 3
    params.categorical_features = [1]
    bad = X.copy()
    bad[5, 1] = 2.5
    with pytest.raises(ValueError, match=r"categorical feature 1: value 2\.5.*row 5"):
        _core.fit_forest(bad, y, None, 0, None, None, params)


def test_warm_start_keeps_the_categories():
    X, y = _categorical_data(n=150, seed=13)
    forest = RandomForestRegressor(5, categorical_features=[0], warm_start=True, random_state=0).fit(X, y)
    forest.set_params(n_estimators=8).fit(X, y)
    assert len(forest.trees_) == 8
    fewer = X.copy()
    fewer[:, 0] = np.minimum(fewer[:, 0], 2)
    with pytest.raises(ValueError, match="same categories"):
        forest.set_params(n_estimators=10).fit(fewer, y)


_SKLEARN_HAS_CATEGORIES = "categorical_features" in DecisionTreeRegressor().get_params()


@pytest.mark.skipif(not _SKLEARN_HAS_CATEGORIES,
                    reason=f"scikit-learn {sklearn.__version__} has no categorical splits (1.10 adds them)")
@pytest.mark.parametrize("classes", [False, True])
@pytest.mark.parametrize("missing", [0.0, 0.1])
@pytest.mark.parametrize("max_depth", [4, None])
def test_trees_equal_scikit_learns_categorical_trees(classes, missing, max_depth):
    """scikit-learn's DecisionTree*(categorical_features=...) on all rows and features: node for
    node the same feature and left set where the nodes are large enough for no two splits to tie
    (depth 4), and the same predictions on the training rows at any depth; on rows with unseen
    categories too at depth 4 (deeper, nodes of two rows tie between features, which each library
    breaks by its own feature order, and the unseen rows follow the missing side of the choice)."""
    X, y = _categorical_data(n=300, levels=(7, 3, 12), seed=14, missing=missing, classes=classes)
    # scikit-learn compares X as float32: a column it represents exactly
    X = np.column_stack([X, np.random.default_rng(15).normal(size=len(y)).astype(np.float32)])
    ours = (RandomForestClassifier if classes else RandomForestRegressor)(
        1, bootstrap=False, max_features=1.0, max_depth=max_depth, categorical_features=[0, 1, 2],
        random_state=0).fit(X, y)
    theirs = (DecisionTreeClassifier if classes else DecisionTreeRegressor)(
        max_depth=max_depth, categorical_features=[0, 1, 2], random_state=0).fit(X, y)
    predict = (lambda f, rows: f.predict_proba(rows)) if classes else (lambda f, rows: f.predict(rows))
    np.testing.assert_allclose(predict(ours, X), predict(theirs, X), atol=1e-12)
    if max_depth is None:
        return
    tree, t = ours.trees_[0], theirs.tree_
    split = tree.left >= 0
    np.testing.assert_array_equal(np.flatnonzero(split), np.flatnonzero(t.children_left >= 0))
    np.testing.assert_array_equal(tree.feature[split], t.feature[split])
    rows_of = _node_rows(ours, X)
    for node in np.flatnonzero(split & (tree.category_split >= 0)):
        bits = np.unpackbits(t._left_cat_bitset[node].astype("<u4").view(np.uint8), bitorder="little")
        # The categories the node's rows hold: scikit-learn also sends some it lacks left (their mean
        # is taken as 0 and sorted among the others'); pyinterp sends every absent category right.
        present = np.unique(X[rows_of[node], tree.feature[node]])
        present = present[~np.isnan(present)].astype(int)
        np.testing.assert_array_equal(np.intersect1d(tree.left_set(node), present),
                                      np.intersect1d(np.flatnonzero(bits), present), err_msg=f"node {node}")
    new = X.copy()
    new[::7, 0] = 40.0  # unseen in training: missing for both
    np.testing.assert_allclose(predict(ours, new), predict(theirs, new), atol=1e-12)
