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
    left out of oob_score_ (scikit-learn's are 0 and scored: README's differences)."""
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
