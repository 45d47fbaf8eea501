"""Weighted candidate-feature sampling: frequencies follow the weights, zero never drawn."""

import numpy as np
import pytest
from scipy import stats

from pyinterp import RandomForestRegressor


@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e300])  # the sampler's fixed point is scale-free
def test_single_candidate_frequencies_follow_the_weights(scale):
    rng = np.random.RandomState(0)
    X = rng.rand(50, 8)
    y = rng.rand(50)
    weights = np.array([1.0, 2.0, 3.0, 4.0, 0.0, 5.0, 0.5, 8.0])
    forest = RandomForestRegressor(n_estimators=4000, max_features=1, max_depth=1, random_state=0)
    forest.fit(X, y, feature_weights=weights * scale)
    roots = np.array([t.feature[0] for t in forest.trees_])
    observed = np.bincount(roots, minlength=8)
    assert observed[4] == 0
    positive = weights > 0
    expected = weights[positive] / weights.sum() * len(roots)
    assert stats.chisquare(observed[positive], expected).pvalue > 1e-3


@pytest.mark.parametrize("p", [9, 65, 513])  # one feature past a full 8-ary tree of 1, 2 or 3 levels
def test_root_frequencies_follow_the_weights_past_a_power_of_8(p):
    rng = np.random.RandomState(p)
    X = rng.rand(30, p)
    y = rng.rand(30)
    weights = rng.pareto(1.0, p) + 0.01
    weights[-1] = weights.sum()  # the last feature, alone in its subtree, draws half the roots
    forest = RandomForestRegressor(n_estimators=3000, max_features=1, max_depth=1, random_state=0)
    forest.fit(X, y, feature_weights=weights)
    observed = np.bincount([t.feature[0] for t in forest.trees_], minlength=p)
    expected = weights / weights.sum() * len(forest.trees_)
    large = expected >= 5  # the cells of fewer expected roots pooled into one
    cells_o, cells_e = observed[large], expected[large]
    if (~large).any():
        cells_o, cells_e = np.append(cells_o, observed[~large].sum()), np.append(cells_e, expected[~large].sum())
    assert observed[-1] > 0.4 * len(forest.trees_)
    assert stats.chisquare(cells_o, cells_e).pvalue > 1e-3


def test_a_weight_far_below_the_largest_is_still_drawn(regression_data):
    """Every positive weight keeps at least one unit of the sampler's fixed point: with max_features
    None both positive features are candidates at every node, however small the second weight."""
    X, y = regression_data
    weights = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 1e-300])
    forest = RandomForestRegressor(n_estimators=5, max_features=None, random_state=0, bootstrap=False)
    forest.fit(X, y, feature_weights=weights)
    used = np.unique(np.concatenate([t.feature[t.left >= 0] for t in forest.trees_]))
    assert set(used) == {4, 5}


@pytest.mark.parametrize("weights", [
    [1.0, 2.0, 3.0, 4.0, 0.0, 5.0, 0.5, 8.0],  # spread
    [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 50.0],  # one feature holds 50/56 of the mass (iRF-like)
])
def test_two_candidates_are_drawn_without_replacement_in_proportion_to_the_weights(weights):
    """Binary feature j disagrees with the two-class y on 2 (7 - j) < 16 rows of each class, so its split
    beats feature i's for i < j and a stump's root holds the larger of its two candidates:
    P(max = j) = sum over i < j of P({i, j} drawn), with P({a, b}) = w_a w_b / W (1 / (W - w_a) +
    1 / (W - w_b)) for draws without replacement in proportion to the weights."""
    y = np.repeat([0.0, 1.0], 32)
    X = np.tile(y[:, None], (1, 8))
    for j in range(8):
        flips = 2 * (7 - j)
        X[:flips, j], X[32:32 + flips, j] = 1.0, 0.0
    w = np.array(weights)
    forest = RandomForestRegressor(n_estimators=4000, max_features=2, max_depth=1, bootstrap=False, random_state=0)
    forest.fit(X, y, feature_weights=w)
    observed = np.bincount([t.feature[0] for t in forest.trees_], minlength=8)
    W = w.sum()
    pair = lambda a, b: w[a] * w[b] / W * (1 / (W - w[a]) + 1 / (W - w[b]))  # noqa: E731
    expected = np.array([sum(pair(i, j) for i in range(j)) for j in range(8)]) * len(forest.trees_)
    assert observed[4] == 0 and observed[0] == 0  # feature 0 is never the larger of two
    large = expected >= 5  # the cells of fewer expected trees pooled into one, if there are any
    cells_o, cells_e = observed[large], expected[large]
    if expected[~large].sum() > 0:
        cells_o, cells_e = np.append(cells_o, observed[~large].sum()), np.append(cells_e, expected[~large].sum())
    assert stats.chisquare(cells_o, cells_e).pvalue > 1e-3


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
