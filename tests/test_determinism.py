"""One random_state gives bit-identical results for any number of workers, and the seed convention."""

import numpy as np
import pytest

from pyinterp import RandomForestClassifier, RandomForestRegressor


def forest_arrays(forest):
    return [getattr(t, f) for t in forest.trees_ for f in t.__slots__] + [forest.inbag_counts_]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_same_forest_for_any_n_jobs(Forest, weighted, regression_data, classification_data):
    X, y = regression_data if Forest is RandomForestRegressor else classification_data
    fw = np.linspace(0.1, 1.0, X.shape[1]) if weighted else None
    fits = [Forest(n_estimators=25, max_features=3, random_state=7, n_jobs=j).fit(X, y, feature_weights=fw)
            for j in (1, 2, 3, -1, 2, 2)]
    reference = forest_arrays(fits[0])
    for other in fits[1:]:
        for a, b in zip(reference, forest_arrays(other)):
            np.testing.assert_array_equal(a, b)
    predictions = [f.set_params(n_jobs=1).predict(X) for f in fits]
    for p in predictions[1:]:
        np.testing.assert_array_equal(p, predictions[0])


def test_random_state_changes_the_forest_and_is_reproducible(regression_data):
    X, y = regression_data
    a = RandomForestRegressor(n_estimators=5, random_state=1).fit(X, y).predict(X)
    b = RandomForestRegressor(n_estimators=5, random_state=1).fit(X, y).predict(X)
    c = RandomForestRegressor(n_estimators=5, random_state=2).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_trees_are_independent_streams(regression_data):
    """Tree t of a 10-tree forest equals tree t of a 3-tree forest with the same seed."""
    X, y = regression_data
    small = RandomForestRegressor(n_estimators=3, random_state=4).fit(X, y)
    large = RandomForestRegressor(n_estimators=10, random_state=4).fit(X, y)
    for a, b in zip(small.trees_, large.trees_):
        np.testing.assert_array_equal(a.threshold, b.threshold)


def test_seed_convention():
    """docs/dev/seeds.md: an int is the root seed; a RandomState gives one draw and
    advances by it; Python-side draws come from RandomState(root)."""
    from pyinterp._seeds import python_rng, root_seed

    assert root_seed(7) == 7
    rs = np.random.RandomState(3)
    expected = np.random.RandomState(3).randint(2**31 - 1)
    assert root_seed(rs) == expected
    assert root_seed(rs) != expected  # the RandomState advanced
    np.testing.assert_array_equal(python_rng(5).permutation(20), np.random.RandomState(5).permutation(20))
    with pytest.raises(ValueError, match="random_state|seed"):
        root_seed("zero")


def test_irf_bootstraps_are_joblib_units_with_the_same_result_on_processes():
    """iRF's bootstraps run as joblib units: a process backend gives the same interactions."""
    from joblib import parallel_config

    from pyinterp import IterativeRandomForest
    from pyinterp.datasets import make_lss

    X, y, _ = make_lss(n_samples=200, n_features=8, n_interactions=1, order=2, snr=5, random_state=0)
    kw = dict(n_iterations=2, n_estimators=20, n_bootstraps=3, bootstrap_n_estimators=10, rit_n_trees=20,
              random_state=0, n_jobs=2)
    threads = IterativeRandomForest(**kw).fit(X, y)
    with parallel_config(backend="loky"):
        processes = IterativeRandomForest(**kw).fit(X, y)
    assert repr(list(threads.interactions_)) == repr(list(processes.interactions_))


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_predictions_read_n_jobs_as_it_is_now(Forest, regression_data, classification_data):
    """As in scikit-learn, n_jobs set after fit is what predict, apply and decision_path use: the
    same values with 1 or 2 threads, and a bad n_jobs refused at the call."""
    X, y = regression_data if Forest is RandomForestRegressor else classification_data
    forest = Forest(n_estimators=10, random_state=0, n_jobs=1).fit(X, y)
    one = forest.predict(X), forest.apply(X), forest.decision_path(X)[0].toarray()
    two = forest.set_params(n_jobs=2).predict(X), forest.apply(X), forest.decision_path(X)[0].toarray()
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    forest.set_params(n_jobs=0)
    for call in (forest.predict, forest.apply, forest.decision_path):
        with pytest.raises(ValueError, match="n_jobs must be None or a non-zero integer, got 0"):
            call(X)
