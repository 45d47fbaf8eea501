"""Property tests of the extension boundary: any valid array layout, dtype and shape fits, never
crashes, predicts what its own trees say, and leaves the inputs untouched."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reference import leaf_of

from pyinterp import RandomForestClassifier, RandomForestRegressor

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32)


@st.composite
def problems(draw):
    n = draw(st.integers(2, 40))
    p = draw(st.integers(1, 6))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    X = draw(hnp.arrays(dtype, (n, p), elements=finite))
    if draw(st.booleans()):
        X = np.asfortranarray(X)
    if draw(st.booleans()):  # a strided view
        X = np.repeat(X, 2, axis=0)[::2]
    y = draw(hnp.arrays(np.float64, n, elements=st.floats(-100, 100)))
    w = draw(st.one_of(st.none(), hnp.arrays(np.float64, n, elements=st.floats(0.01, 10))))
    return X, y, w


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.integers(1, 4), st.booleans(), st.integers(0, 2**31 - 1))
def test_regressor_predicts_what_its_trees_say(problem, max_depth, bootstrap, seed):
    X, y, w = problem
    copies = [X.copy(), y.copy(), None if w is None else w.copy()]
    forest = RandomForestRegressor(n_estimators=3, max_depth=max_depth, bootstrap=bootstrap, random_state=seed,
                                   n_jobs=2).fit(X, y, sample_weight=w)
    trees = forest.trees_
    manual = np.array([[t.value[leaf_of(t, x), 0] for t in trees] for x in X.astype(np.float64)]).mean(axis=1)
    np.testing.assert_allclose(forest.predict(X), manual, rtol=1e-12, atol=1e-12)
    assert np.all(forest.apply(X) >= 0)
    for tree in trees:
        assert tree.max_depth <= max_depth
        assert np.all(tree.impurity >= 0)
    np.testing.assert_array_equal(X, copies[0])
    np.testing.assert_array_equal(y, copies[1])
    if w is not None:
        np.testing.assert_array_equal(w, copies[2])


@settings(max_examples=40, deadline=None)
@given(problems(), st.integers(1, 5), st.sampled_from(["gini", "entropy"]))
def test_classifier_probabilities_are_distributions(problem, n_classes, criterion):
    X, y, w = problem
    labels = (np.abs(y).astype(int)) % n_classes
    forest = RandomForestClassifier(n_estimators=3, criterion=criterion, random_state=0).fit(X, labels, sample_weight=w)
    proba = forest.predict_proba(X)
    assert proba.shape == (len(X), len(np.unique(labels)))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all(proba >= 0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_dstump_best_split_matches_exhaustive_search(problem):
    from pyinterp.importance import dstump

    X, y, w = problem
    copies = [X.copy(), y.copy(), None if w is None else w.copy()]
    res = dstump(X, y, sample_weight=w)
    weights = np.ones(len(y)) if w is None else w
    Xd = X.astype(np.float64)
    for j in range(X.shape[1]):
        values = np.unique(Xd[:, j])
        total, mean = weights.sum(), np.sum(weights * y) / weights.sum()
        parent = np.sum(weights * (y - mean) ** 2)
        gains = []
        for lo in values[:-1]:
            left = Xd[:, j] <= lo
            sse = sum(np.sum(weights[s] * (y[s] - np.sum(weights[s] * y[s]) / weights[s].sum()) ** 2) for s in (left, ~left))
            gains.append((parent - sse) / total)
        if not gains:
            assert res.scores[j] == -np.inf
            continue
        assert res.scores[j] == pytest.approx(max(gains), rel=1e-7, abs=1e-9 * (1 + parent / total))
        assert res.n_left[j] >= 1 and res.n_left[j] < len(y)
    np.testing.assert_array_equal(X, copies[0])
    np.testing.assert_array_equal(y, copies[1])


@st.composite
def crowded_columns(draw):
    """Finite float64 values of any magnitude (subnormals, -0.0, near the overflow limit) in
    clusters of consecutive floats 1 to 1000 ulps apart, each value once plus up to 100 repeats,
    shuffled. Values whose top 32 key bits agree are ordered by a second sort in the encoding:
    runs of up to 64 by comparison, longer ones by radix."""
    clusters = []
    for _ in range(draw(st.integers(1, 4))):
        base = draw(st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False))
        size = draw(st.integers(1, 150))
        step = draw(st.sampled_from([1, 2, 1000]))
        bits = np.array([base]).view(np.int64)[0] + step * np.arange(size, dtype=np.int64)
        clusters.append(bits.view(np.float64))
    values = np.concatenate(clusters + [np.array(draw(st.lists(st.sampled_from([0.0, -0.0, 5e-324, -5e-324]))))])
    rng = np.random.RandomState(draw(st.integers(0, 2**32 - 1)))
    rows = np.concatenate([np.arange(len(values)), rng.randint(len(values), size=draw(st.integers(1, 100)))])
    return values[rng.permutation(rows)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_columns())
def test_a_full_tree_separates_every_distinct_value(x):
    """Grown to purity on one column with y = the rank of x among its distinct values, a tree
    must give every training row its own y back: this holds only if the column's codes order
    the values exactly (a misordered code makes some threshold route a row to the wrong side)."""
    _, y = np.unique(x, return_inverse=True)
    forest = RandomForestRegressor(n_estimators=1, bootstrap=False, max_features=None, random_state=0)
    forest.fit(x[:, None], y.astype(float))
    np.testing.assert_array_equal(forest.predict(x[:, None]), y)
