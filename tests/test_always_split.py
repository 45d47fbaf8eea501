"""always_split_features (ranger's always.split.variables): columns searched at every node besides
the max_features drawn from the others."""

import pickle

import numpy as np
import pandas as pd
import pytest

from pyinterp import RandomForestClassifier, RandomForestRegressor, _core
from pyinterp._validation import resolve_max_features
from pyinterp.io import PackedGenotypes
from pyinterp.io.packing import pack_counts


def _data(n=400, p=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = 2.0 * X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.standard_normal(n)
    return X, y


def _node_rows(forest, X, tree):
    """Row indices reaching each node of tree `tree` (all rows: bootstrap is off)."""
    indicator, starts = forest.decision_path(X)
    path = indicator[:, starts[tree]:starts[tree + 1]].tocsc()
    return [path[:, k].nonzero()[0] for k in range(path.shape[1])]


def _best_decrease(x, y):
    """The largest drop in the sum of squares of y over the splits of x (brute force)."""
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    best = 0.0
    total = ((ys - ys.mean()) ** 2).sum()
    for k in range(1, len(xs)):
        if xs[k] == xs[k - 1]:
            continue
        left, right = ys[:k], ys[k:]
        best = max(best, total - ((left - left.mean()) ** 2).sum() - ((right - right.mean()) ** 2).sum())
    return best


def test_every_node_weighs_the_always_features():
    """Brute force at every node: the split taken drops the squared error at least as much as the
    best split of each always-split column there; without them, some node's split does not."""
    X, y = _data(n=300)
    always = [0, 5]

    def violations(forest):
        tree, bad = forest.trees_[0], 0
        for node, rows in enumerate(_node_rows(forest, X, 0)):
            if tree.feature[node] < 0:
                continue
            ys = y[rows]
            lo = rows[X[rows, tree.feature[node]] <= tree.threshold[node]]
            hi = np.setdiff1d(rows, lo)
            taken = ((ys - ys.mean()) ** 2).sum() - ((y[lo] - y[lo].mean()) ** 2).sum() \
                - ((y[hi] - y[hi].mean()) ** 2).sum()
            best = max(_best_decrease(X[rows, j], ys) for j in always)
            bad += taken < best * (1 - 1e-9) - 1e-9
        return bad

    kw = dict(n_estimators=1, max_features=1, bootstrap=False, random_state=4, max_depth=6)
    assert violations(RandomForestRegressor(always_split_features=always, **kw).fit(X, y)) == 0
    assert violations(RandomForestRegressor(**kw).fit(X, y)) > 0


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_all_candidates_either_way_make_the_same_partition(Forest):
    """Every column searched at every node, whether two come from always_split_features or all are
    drawn: the same partition of the training rows, so the same predictions on them."""
    X, y = _data()
    target = y if Forest is RandomForestRegressor else (y > 0).astype(int)
    kw = dict(n_estimators=4, max_features=None, bootstrap=False, random_state=2)
    a = Forest(**kw).fit(X, target)
    b = Forest(always_split_features=[3, 7], **kw).fit(X, target)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_fractions_count_the_other_columns():
    assert resolve_max_features("sqrt", 102, 100, basis=100) == 10
    assert resolve_max_features(0.5, 102, 100, basis=100) == 50
    assert resolve_max_features(None, 102, 100, basis=100) == 100
    assert resolve_max_features(101, 102, 100, basis=100) == 100  # an int is clamped to the drawable
    assert resolve_max_features("log2", 2, 0, basis=0) == 1  # every column always split: 1, never drawn
    X, y = _data(p=4)
    forest = RandomForestRegressor(5, max_features="sqrt", always_split_features=[0, 1, 2, 3], random_state=0)
    assert forest.fit(X, y).score(X, y) > 0.8


def test_names_masks_and_bad_values():
    X, y = _data(p=5)
    df = pd.DataFrame(X, columns=["pc1", "pc2", "g1", "g2", "g3"])
    kw = dict(n_estimators=5, max_features=1, random_state=0)
    by_name = RandomForestRegressor(always_split_features=["pc1", "pc2"], **kw).fit(df, y)
    by_index = RandomForestRegressor(always_split_features=[1, 0], **kw).fit(X, y)
    by_mask = RandomForestRegressor(always_split_features=[True, True, False, False, False], **kw).fit(X, y)
    np.testing.assert_array_equal(by_name.predict(df), by_index.predict(X))
    np.testing.assert_array_equal(by_mask.predict(X), by_index.predict(X))
    assert RandomForestRegressor(always_split_features="pc1", **kw).fit(df, y).n_features_in_ == 5
    for bad, match in (([5], "always_split_features names column 5, but X has 5 columns"),
                       (["pc9"], "always_split_features names column 'pc9', which is not a column index or name"),
                       ([0, 0], "always_split_features names a column twice"),
                       ([True, False], "always_split_features: a boolean mask needs one entry per column")):
        with pytest.raises(ValueError, match=match):
            RandomForestRegressor(always_split_features=bad, **kw).fit(df, y)
    with pytest.raises(ValueError, match="not a column index of X"):  # names need named columns
        RandomForestRegressor(always_split_features=["pc1"], **kw).fit(X, y)


def test_core_refuses_bad_always_features():
    X, y = _data(p=3)
    p = _core.ForestParams()
    p.n_draws, p.max_features = len(y), 1
    for bad, match in (([3], "feature 3 is out of range"), ([1, 0], "ascending and distinct")):
        p.always_features = bad
        with pytest.raises(ValueError, match=match):
            _core.fit_forest(X, y, None, 0, None, None, p)
    p.always_features = [0, 2]
    assert pickle.loads(pickle.dumps(p)).always_features == [0, 2]


def test_weights_threads_and_packed_genotypes():
    """A zero feature weight does not keep an always-split column out; results do not depend on
    the threads; packed genotypes fit as their float32 copy does."""
    rng = np.random.default_rng(1)
    n, p = 240, 9
    G = rng.integers(0, 3, size=(n, p)).astype(np.float32)
    G[rng.random((n, p)) < 0.03] = np.nan
    y = np.nan_to_num(G[:, 0]) + (np.nan_to_num(G[:, 1]) == 2) + 0.3 * rng.standard_normal(n)
    weights = np.ones(p)
    weights[0] = 0.0
    kw = dict(n_estimators=6, max_features=2, always_split_features=[0], random_state=5)
    forest = RandomForestRegressor(**kw).fit(G, y, feature_weights=weights)
    assert np.any(forest.trees_[0].feature == 0)
    one = RandomForestRegressor(n_jobs=1, **kw).fit(G, y)
    two = RandomForestRegressor(n_jobs=2, **kw).fit(G, y)
    np.testing.assert_array_equal(one.predict(G), two.predict(G))
    calls = pack_counts(np.where(np.isnan(G), -9, G).T.astype(np.int8))
    packed = RandomForestRegressor(**kw).fit(PackedGenotypes(calls, n), y)
    np.testing.assert_array_equal(packed.predict(PackedGenotypes(calls, n)), one.predict(G))

