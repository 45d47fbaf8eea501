"""Weighted candidate-feature sampling: frequencies follow the weights, zero never drawn."""

import numpy as np
import pytest
from scipy import stats

from pyinterp import RandomForestRegressor


def test_single_candidate_frequencies_follow_the_weights():
    rng = np.random.RandomState(0)
    X = rng.rand(50, 8)
    y = rng.rand(50)
    weights = np.array([1.0, 2.0, 3.0, 4.0, 0.0, 5.0, 0.5, 8.0])
    forest = RandomForestRegressor(n_estimators=4000, max_features=1, max_depth=1, random_state=0)
    forest.fit(X, y, feature_weights=weights)
    roots = np.array([t.feature[0] for t in forest.trees_])
    observed = np.bincount(roots, minlength=8)
    assert observed[4] == 0
    positive = weights > 0
    expected = weights[positive] / weights.sum() * len(roots)
    assert stats.chisquare(observed[positive], expected).pvalue > 1e-3


def test_zero_weight_features_are_never_split_on(regression_data):
    X, y = regression_data
    weights = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    forest = RandomForestRegressor(n_estimators=20, max_features=3, random_state=0)
    forest.fit(X, y, feature_weights=weights)
    used = np.unique(np.concatenate([t.feature[t.left >= 0] for t in forest.trees_]))
    assert set(used) <= {1, 3, 4}
    assert forest.feature_importances_[[0, 2, 5]].sum() == 0


def test_max_features_is_capped_at_the_positive_weights(regression_data):
    X, y = regression_data
    weights = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    forest = RandomForestRegressor(n_estimators=5, max_features=None, random_state=0, bootstrap=False)
    forest.fit(X, y, feature_weights=weights)
    used = np.unique(np.concatenate([t.feature[t.left >= 0] for t in forest.trees_]))
    assert set(used) == {4, 5}


def test_uniform_weights_equal_no_weights(regression_data):
    X, y = regression_data
    a = RandomForestRegressor(n_estimators=5, max_features=2, random_state=0).fit(X, y)
    b = RandomForestRegressor(n_estimators=5, max_features=2, random_state=0).fit(X, y, feature_weights=np.ones(6))
    # Different samplers (shuffle vs sum tree), same distribution: both use every feature.
    for f in (a, b):
        used = np.unique(np.concatenate([t.feature[t.left >= 0] for t in f.trees_]))
        assert len(used) == 6


def test_feature_weights_scale_free_and_large_p():
    rng = np.random.RandomState(0)
    p = 200_000
    X = rng.rand(40, p).astype(np.float32)
    y = X[:, 7] + 0.01 * rng.rand(40)
    w = np.full(p, 1e-5)
    w[7] = 1.0
    forest = RandomForestRegressor(n_estimators=20, max_features=50, random_state=0, n_jobs=2)
    forest.fit(X, y, feature_weights=w * 1e300)
    roots = [t.feature[0] for t in forest.trees_]
    assert np.mean(np.array(roots) == 7) > 0.9


@pytest.mark.parametrize("bad, match", [
    (np.ones(5), "one entry per feature"),
    (-np.ones(6), "non-negative"),
    (np.zeros(6), "zero everywhere"),
    (np.array([1, 1, 1, np.nan, 1, 1.0]), "NaN"),
])
def test_bad_feature_weights(regression_data, bad, match):
    X, y = regression_data
    with pytest.raises(ValueError, match=match):
        RandomForestRegressor(n_estimators=2).fit(X, y, feature_weights=bad)
