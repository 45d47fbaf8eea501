"""warm_start: growing a fitted forest from k to K trees gives exactly the forest that fitting K
trees at once gives (tree t's stream depends on t alone), for any k, number of steps and n_jobs;
errors and warnings as scikit-learn's, which the same test runs beside."""

import warnings

import numpy as np
import pytest
from sklearn import ensemble

from pyinterp import RandomForestClassifier, RandomForestRegressor
from pyinterp import importance as imp

from every_route import assert_same_forest


@pytest.mark.parametrize("steps", [(10,), (1, 10), (3, 4, 10), (9, 10)])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_growing_in_steps_equals_growing_at_once(regression_data, classification_data, steps, n_jobs):
    for Forest, (X, y) in ((RandomForestRegressor, regression_data), (RandomForestClassifier, classification_data)):
        at_once = Forest(n_estimators=10, max_features=2, oob_score=True, random_state=3).fit(X, y)
        grown = Forest(max_features=2, oob_score=True, random_state=3, warm_start=True, n_jobs=n_jobs)
        for k in steps:
            grown.set_params(n_estimators=k).fit(X, y)
            assert len(grown.trees_) == k
        assert_same_forest(grown, at_once, inbag=True)
        assert grown.oob_score_ == at_once.oob_score_  # recomputed over every tree
        np.testing.assert_array_equal(grown.predict(X), at_once.predict(X))
        np.testing.assert_array_equal(imp.mdi_oob(grown, X, y), imp.mdi_oob(at_once, X, y))


def test_scikit_learn_has_the_same_property(regression_data):
    """The reference behaviour the test above asks of pyinterp."""
    X, y = regression_data
    at_once = ensemble.RandomForestRegressor(n_estimators=6, random_state=3).fit(X, y)
    grown = ensemble.RandomForestRegressor(n_estimators=2, random_state=3, warm_start=True).fit(X, y)
    grown.set_params(n_estimators=6).fit(X, y)
    np.testing.assert_array_equal(grown.predict(X), at_once.predict(X))


def test_errors_and_warnings_say_what_scikit_learns_say(regression_data):
    X, y = regression_data
    for Forest in (RandomForestRegressor, ensemble.RandomForestRegressor):
        forest = Forest(n_estimators=5, random_state=0, warm_start=True).fit(X, y)
        with pytest.raises(ValueError, match=r"n_estimators=3 must be larger or equal to len\(estimators_\)=5 "
                                             r"when warm_start==True"):
            forest.set_params(n_estimators=3).fit(X, y)
        with pytest.warns(UserWarning, match="Warm-start fitting without increasing n_estimators does not fit new "
                                             "trees."):
            forest.set_params(n_estimators=5).fit(X, y)


def test_warm_start_off_refits_and_mismatched_data_is_refused(regression_data, classification_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)
    first = forest.trees_[0].feature.copy()
    forest.set_params(n_estimators=6, random_state=1).fit(X, y)  # warm_start=False: a new forest
    assert len(forest.trees_) == 6 and not np.array_equal(forest.trees_[0].feature, first)
    forest.set_params(warm_start=True, n_estimators=8)
    with pytest.raises(ValueError, match="same rows"):
        forest.fit(X[:-1], y[:-1])
    Xc, yc = classification_data
    clf = RandomForestClassifier(n_estimators=3, random_state=0, warm_start=True).fit(Xc, yc)
    with pytest.raises(ValueError, match="same classes"):
        clf.set_params(n_estimators=5).fit(Xc, np.where(yc == yc[0], "other", yc.astype(str)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.fit(Xc, yc)  # the same classes: fine
    assert len(clf.trees_) == 5
