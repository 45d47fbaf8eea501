"""In-bag counts, out-of-bag sets and out-of-bag predictions."""

import re
import warnings

import numpy as np
import pytest
from reference import leaf_of
from sklearn import ensemble
from sklearn.metrics import accuracy_score, r2_score

from pyinterp import RandomForestClassifier, RandomForestRegressor


@pytest.mark.parametrize("max_samples", [None, 0.5, 37, 2.5, 1000])
def test_bootstrap_draws_max_samples_rows_with_replacement(regression_data, max_samples):
    """As in scikit-learn 1.9, with bootstrap an int may exceed n and a fraction 1."""
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=20, max_samples=max_samples, random_state=0).fit(X, y)
    counts = forest.inbag_counts_
    expected = {None: len(y), 0.5: len(y) // 2, 37: 37, 2.5: 5 * len(y) // 2, 1000: 1000}[max_samples]
    assert counts.shape == (20, len(y)) and counts.dtype == np.uint32
    assert np.all(counts.sum(axis=1) == expected)
    assert counts.max() > 1  # with replacement
    for tree, c in zip(forest.trees_, counts):
        assert tree.n_node_samples[0] == np.count_nonzero(c)
        assert tree.weighted_n_node_samples[0] == c.sum()


def test_subsampling_without_replacement(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=20, bootstrap=False, max_samples=0.6, oob_score=True,
                                   random_state=0).fit(X, y)
    counts = forest.inbag_counts_
    assert set(np.unique(counts)) == {0, 1}
    assert np.all(counts.sum(axis=1) == round(0.6 * len(y)))
    assert np.all(RandomForestRegressor(n_estimators=2, bootstrap=False).fit(X, y).inbag_counts_ == 1)


def test_oob_predictions_average_the_trees_that_did_not_see_the_row(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=30, oob_score=True, random_state=0).fit(X, y)
    trees, counts = forest.trees_, forest.inbag_counts_
    expected = np.empty(len(y))
    for i, x in enumerate(X):
        values = [t.value[leaf_of(t, x), 0] for t, c in zip(trees, counts[:, i]) if c == 0]
        expected[i] = np.mean(values)
    np.testing.assert_allclose(forest.oob_prediction_, expected, rtol=1e-12)
    assert forest.oob_score_ == pytest.approx(r2_score(y, expected))


def test_classifier_oob_decision_function_and_score(classification_data):
    X, y = classification_data
    forest = RandomForestClassifier(n_estimators=40, oob_score=True, random_state=0).fit(X, y)
    proba = forest.oob_decision_function_
    assert proba.shape == (len(y), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert forest.oob_score_ == pytest.approx(accuracy_score(y, forest.classes_[proba.argmax(axis=1)]))
    assert forest.oob_score_ > 0.8


def test_oob_score_takes_a_metric(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=30, oob_score=lambda a, b: -np.mean((a - b) ** 2),
                                   random_state=0).fit(X, y)
    assert forest.oob_score_ == pytest.approx(-np.mean((y - forest.oob_prediction_) ** 2))


# scikit-learn 1.9's texts (sklearn/ensemble/_forest.py, _bootstrap.py), asserted on both libraries.
SKLEARN_NO_OOB = ("Some inputs do not have OOB scores. This probably means too few trees were used to compute any "
                  "reliable OOB estimates.")
SKLEARN_OOB_NEEDS_BOOTSTRAP = "Out of bag estimation only available if bootstrap=True"


@pytest.mark.parametrize("Forest, SkForest, data", [
    (RandomForestRegressor, ensemble.RandomForestRegressor, "regression_data"),
    (RandomForestClassifier, ensemble.RandomForestClassifier, "classification_data"),
])
def test_rows_never_out_of_bag_warn_as_scikit_learn_and_are_nan(Forest, SkForest, data, request):
    """scikit-learn's warning, then the row count; pyinterp's values for those rows are NaN and
    left out of oob_score_ (scikit-learn's are 0 and scored: docs/user/forests.md, "Differences")."""
    X, y = request.getfixturevalue(data)
    with pytest.warns(UserWarning, match=re.escape(SKLEARN_NO_OOB)):
        SkForest(n_estimators=2, oob_score=True, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match=re.escape(SKLEARN_NO_OOB) + rf" \d+ of {len(y)} rows were in the bag of "
                      "every tree: their out-of-bag predictions are NaN and left out of oob_score_."):
        forest = Forest(n_estimators=2, oob_score=True, random_state=0).fit(X, y)
    never = (forest.inbag_counts_ > 0).all(axis=0)
    assert never.any()
    if Forest is RandomForestRegressor:
        assert np.all(np.isnan(forest.oob_prediction_[never]))
        assert forest.oob_score_ == r2_score(y[~never], forest.oob_prediction_[~never])
    else:
        proba = forest.oob_decision_function_
        assert np.all(np.isnan(proba[never]))
        assert forest.oob_score_ == accuracy_score(y[~never], forest.classes_[proba[~never].argmax(axis=1)])


@pytest.mark.parametrize("Forest, SkForest", [(RandomForestRegressor, ensemble.RandomForestRegressor),
                                              (RandomForestClassifier, ensemble.RandomForestClassifier)])
def test_oob_without_bootstrap_raises_scikit_learns_error(classification_data, Forest, SkForest):
    X, y = classification_data
    with pytest.raises(ValueError, match=re.escape(SKLEARN_OOB_NEEDS_BOOTSTRAP)):
        SkForest(bootstrap=False, oob_score=True).fit(X, y)
    for max_samples in (None, 1.0, len(y)):  # no row left out of any tree
        with pytest.raises(ValueError, match=re.escape(SKLEARN_OOB_NEEDS_BOOTSTRAP) + r" \(or, in pyinterp, with "
                           "max_samples below the number of rows"):
            Forest(bootstrap=False, oob_score=True, max_samples=max_samples).fit(X, y)
    assert np.isfinite(Forest(20, bootstrap=False, oob_score=True, max_samples=0.5, random_state=0).fit(X, y).oob_score_)


@pytest.mark.parametrize("max_samples", [0.5, 0.333, 2.5, 0.03, 0.001])
@pytest.mark.parametrize("weighted", [False, True])
def test_max_samples_fraction_draws_as_scikit_learn(classification_data, max_samples, weighted):
    """A fraction of n, or of the sum of the row weights (class weights included), truncated; with
    scikit-learn's warning, word for word, when that leaves few draws."""
    X, y = classification_data
    w = np.random.RandomState(0).uniform(0.1, 3, len(y)) if weighted else None
    kw = dict(n_estimators=3, max_samples=max_samples, class_weight={0: 1.0, 1: 2.5, 2: 0.5} if weighted else None,
              random_state=0)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        sk = ensemble.RandomForestClassifier(**kw).fit(X, y, sample_weight=w)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        forest = RandomForestClassifier(**kw).fit(X, y, sample_weight=w)
    assert [len(rows) for rows in sk.estimators_samples_] == forest.inbag_counts_.sum(axis=1).tolist()
    texts = [str(m.message) for m in theirs if "fractional value" in str(m.message)]
    assert texts == [str(m.message) for m in ours]
    if max_samples == 0.001:
        assert texts  # the warning case is covered


def test_oob_predict_after_fit_equals_the_oob_score_pass(regression_data, classification_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=30, oob_score=True, random_state=0, n_jobs=2).fit(X, y)
    plain = RandomForestRegressor(n_estimators=30, random_state=0).fit(X, y)
    np.testing.assert_array_equal(plain.oob_predict(X), forest.oob_prediction_)
    X, y = classification_data
    forest = RandomForestClassifier(n_estimators=30, oob_score=True, random_state=0).fit(X, y)
    np.testing.assert_array_equal(forest.oob_predict_proba(X), forest.oob_decision_function_)


def test_oob_predict_needs_the_training_rows(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=f"X has {len(y) - 1} rows; out-of-bag predictions are for the {len(y)}"):
        forest.oob_predict(X[1:])
    with pytest.raises(ValueError, match="features"):
        forest.oob_predict(X[:, 1:])


def test_oob_score_on_named_columns_warns_nothing():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.rand(80, 3), columns=["a", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forest = RandomForestRegressor(n_estimators=30, oob_score=True, random_state=0).fit(frame, rng.rand(80))
        np.testing.assert_array_equal(forest.oob_predict(frame), forest.oob_prediction_)


def test_out_of_bag_leaves_are_the_leaves_of_the_trees_that_did_not_draw_the_row(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=20, random_state=0, n_jobs=2).fit(X, y)
    leaves = forest._forest.apply_oob(X, 2)
    out = forest.inbag_counts_.T == 0
    assert out.any() and (~out).any()
    np.testing.assert_array_equal(leaves, np.where(out, forest.apply(X), -1))
    np.testing.assert_array_equal(forest._forest.apply_oob(X, 1), leaves)
    with pytest.raises(ValueError, match="out-of-bag leaves need the training rows"):
        forest._forest.apply_oob(X[1:], 1)


# -- out-of-bag rows routed as the trees grow --------------------------------------------------


def _oob_cases(regression_data, classification_data, tmp_path):
    X, y = regression_data
    Xc, yc = classification_data
    rng = np.random.RandomState(3)
    holes = np.where(rng.rand(*X.shape) < 0.15, np.nan, X)
    weights = rng.randint(0, 3, size=len(y)).astype(float)  # rows drawn with weight 0: neither in bag nor out
    path = tmp_path / "X.npy"
    np.save(path, np.asfortranarray(X))
    sparse = pytest.importorskip("scipy.sparse").csc_matrix(np.where(X < 0.5, 0.0, X))
    return {
        "depth-first": (RandomForestRegressor, {}, X, y, None),
        "missing values": (RandomForestRegressor, {}, holes, y, None),
        "best-first": (RandomForestRegressor, dict(max_leaf_nodes=12), holes, y, None),
        "min_impurity_decrease": (RandomForestRegressor, dict(min_impurity_decrease=0.01), X, y, None),
        "subsample, zero weights": (RandomForestRegressor, dict(bootstrap=False, max_samples=0.6), X, y, weights),
        "sparse": (RandomForestRegressor, {}, sparse, y, None),
        "int8": (RandomForestRegressor, dict(min_samples_leaf=3), (X * 3).astype(np.int8), y, None),
        "memory-mapped": (RandomForestRegressor, {}, np.load(path, mmap_mode="r"), y, None),
        "two outputs": (RandomForestRegressor, {}, X, np.c_[y, y ** 2], None),
        "classes": (RandomForestClassifier, {}, holes, yc, weights),
        "entropy, best-first": (RandomForestClassifier, dict(criterion="entropy", max_leaf_nodes=9), Xc, yc, None),
    }


@pytest.mark.parametrize("case", ["depth-first", "missing values", "best-first", "min_impurity_decrease",
                                  "subsample, zero weights", "sparse", "int8", "memory-mapped", "two outputs",
                                  "classes", "entropy, best-first"])
def test_leaves_recorded_during_the_fit_are_the_leaves_a_descent_finds(regression_data, classification_data,
                                                                      tmp_path, case):
    Forest, kw, X, y, weights = _oob_cases(regression_data, classification_data, tmp_path)[case]
    forest = Forest(n_estimators=25, random_state=0, n_jobs=2, keep_oob_leaves=True, **kw)  # as iRF keeps them
    forest.fit(X, y, sample_weight=weights)
    core, Xv = forest._forest, forest._checked_rows(X)
    assert core.has_oob_leaves
    recorded, descended = core.predict_oob(Xv, 2, training=True), core.predict_oob(Xv, 2)
    np.testing.assert_array_equal(recorded[0], descended[0])
    np.testing.assert_array_equal(recorded[1], descended[1])
    leaves = core.apply_oob(Xv, 1, training=True)
    np.testing.assert_array_equal(leaves, core.apply_oob(Xv, 2))
    np.testing.assert_array_equal(leaves, np.where(forest.inbag_counts_.T == 0, forest.apply(X), -1))


def test_recorded_leaves_serve_the_fit_only(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=20, oob_score=True, random_state=0).fit(X, y)
    assert not forest._forest.has_oob_leaves  # freed once oob_score_ is computed: as large as the in-bag counts
    kept = RandomForestRegressor(n_estimators=20, oob_score=True, random_state=0, keep_oob_leaves=True).fit(X, y)
    assert kept._forest.has_oob_leaves
    np.testing.assert_array_equal(kept.oob_prediction_, forest.oob_prediction_)
    # Other rows of the same shape are run down the trees, never answered from the recorded leaves.
    other = X[::-1].copy()
    np.testing.assert_array_equal(kept.oob_predict(other), forest.oob_predict(other))
    assert not np.array_equal(kept.oob_predict(other), kept.oob_prediction_)
    kept._forest.drop_oob_leaves()
    assert not kept._forest.has_oob_leaves
    np.testing.assert_array_equal(kept.oob_predict(X), forest.oob_prediction_)


def test_pruned_forests_record_no_leaves(regression_data):
    """Pruning renumbers the nodes after growth: out-of-bag rows of a pruned forest are run down it."""
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=20, ccp_alpha=0.01, oob_score=True, random_state=0,
                                   keep_oob_leaves=True)
    forest.fit(X, y)
    assert not forest._forest.has_oob_leaves
    np.testing.assert_array_equal(forest.oob_predict(X), forest.oob_prediction_)


def test_joined_forests_keep_recorded_leaves_only_if_every_part_has_them(regression_data):
    from pyinterp import _core

    X, y = regression_data
    parts = []
    for keep in (True, True, False):
        forest = RandomForestRegressor(n_estimators=5, random_state=len(parts), keep_oob_leaves=keep)
        parts.append(forest.fit(X, y)._forest)
    both = _core.join_forests(parts[:2])
    assert both.has_oob_leaves and not _core.join_forests(parts).has_oob_leaves
    Xv = np.asfortranarray(X)
    np.testing.assert_array_equal(both.apply_oob(Xv, 1, training=True), both.apply_oob(Xv, 1))


@pytest.mark.parametrize("oob", [False, True])
def test_leaf_sums_count_and_weigh_the_rows_reaching_each_leaf(regression_data, oob):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=15, max_features=3, random_state=0, keep_oob_leaves=True).fit(X, y)
    core, Xv = forest._forest, forest._checked_rows(X)
    weight = np.random.RandomState(0).rand(len(y))
    leaves = core.apply_oob(Xv) if oob else core.apply(Xv)
    offsets = np.cumsum(core.node_counts) - core.node_counts
    assert list(core.node_counts) == [t.node_count for t in forest.trees_]
    node = (leaves + offsets)[leaves >= 0]
    expected_count = np.bincount(node, minlength=core.node_counts.sum())
    expected_sum = np.bincount(node, weights=np.broadcast_to(weight[:, None], leaves.shape)[leaves >= 0],
                               minlength=core.node_counts.sum())
    for training in (False, True):
        for threads in (1, 3):
            count, total = core.leaf_sums(Xv, weight, threads, oob=oob, training=training)
            np.testing.assert_array_equal(count, expected_count)
            np.testing.assert_array_equal(total, expected_sum)  # each leaf sums its rows in order
    with pytest.raises(ValueError, match="weight must have shape"):
        core.leaf_sums(Xv, weight[1:], oob=oob)


def test_node_values_are_the_trees_values(classification_data):
    X, y = classification_data
    forest = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    trees = np.array([0, 3, 3, 1], dtype=np.int64)
    nodes = np.array([0, 5, 2, forest.trees_[1].node_count - 1], dtype=np.int64)
    np.testing.assert_array_equal(forest._forest.node_values(trees, nodes),
                                  [forest.trees_[t].value[k] for t, k in zip(trees, nodes)])
    for bad in ([4], [-1]):
        with pytest.raises(ValueError, match="outside the forest"):
            forest._forest.node_values(np.array(bad, dtype=np.int64), np.array([0], dtype=np.int64))
    with pytest.raises(ValueError, match="outside the forest"):
        forest._forest.node_values(np.array([0], dtype=np.int64), np.array([10**6], dtype=np.int64))
