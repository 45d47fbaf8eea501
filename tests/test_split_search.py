"""The split search behind its seam (src/_core/forest/split_search.hpp), one node at a time:
_core.find_split runs the search the parameters choose on the given rows, so a second search can be
checked against the exact one on the same nodes. The exact search's split of random nodes (ties,
missing values, weights, leaf limits, every criterion) is the brute-force best."""

import numpy as np
import pytest
from reference import best_split, impurity

from pyinterp import _core

CRITERIA = {"squared_error": _core.Criterion.squared_error, "poisson": _core.Criterion.poisson,
            "absolute_error": _core.Criterion.absolute_error, "gini": _core.Criterion.gini,
            "entropy": _core.Criterion.entropy}


def params(criterion, p, min_samples_leaf=1, seed=0):
    out = _core.ForestParams()
    out.criterion = CRITERIA[criterion]
    out.max_features = p
    out.min_samples_leaf = min_samples_leaf
    out.seed = seed
    return out


def search(X, y, w, rows, criterion, **kw):
    classes = criterion in ("gini", "entropy")
    return _core.find_split(X, None if classes else y, y.astype(np.int32) if classes else None, 3 if classes else 0,
                            w, rows, params(criterion, X.shape[1], **kw))


def decrease(left, y, w, criterion):
    n_classes = 3 if criterion in ("gini", "entropy") else None
    gain = w.sum() * impurity(y, w, criterion, n_classes)
    for side in (left, ~left):
        gain -= w[side].sum() * impurity(y[side], w[side], criterion, n_classes)
    return gain / w.sum()


@pytest.mark.parametrize("criterion", list(CRITERIA))
@pytest.mark.parametrize("min_samples_leaf", [1, 4])
def test_exact_search_finds_the_brute_force_best_split_of_each_node(criterion, min_samples_leaf):
    rng = np.random.RandomState(7)
    n, p = 80, 4
    X = np.round(rng.rand(n, p) * 8) / 8  # ties within columns
    X[rng.rand(n, p) < 0.1] = np.nan
    if criterion in ("gini", "entropy"):
        y = (np.nan_to_num(X[:, 0]) > 0.5) + (np.nan_to_num(X[:, 1]) > 0.3) * (rng.rand(n) < 0.8)
    else:
        y = np.abs(np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 2]) * 2 + 0.3 * rng.randn(n))
    w = rng.uniform(0.5, 2.0, n)
    checked = 0
    for trial in range(8):
        rows = np.sort(rng.choice(n, size=rng.randint(10, 40), replace=False)).astype(np.uint32)
        found = search(X, y, w, rows, criterion, min_samples_leaf=min_samples_leaf, seed=trial)
        n_classes = 3 if criterion in ("gini", "entropy") else None
        best, argbest = best_split(X[rows], y[rows], w[rows], criterion, min_samples_leaf, n_classes)
        if found["feature"] < 0:
            assert not argbest or best <= 1e-12
            continue
        left = found["left"]
        assert min_samples_leaf <= left.sum() <= len(rows) - min_samples_leaf
        assert decrease(left, y[rows], w[rows], criterion) == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert found["feature"] in {j for j, _, _ in argbest}
        checked += 1
    assert checked >= 6


def test_find_split_refuses_bad_nodes_by_name():
    X, y = np.random.RandomState(0).rand(20, 3), np.random.RandomState(1).rand(20)
    for rows, message in [([3, 2], "increasing"), ([0, 20], "increasing"), ([], "at least one row")]:
        with pytest.raises(ValueError, match=message):
            _core.find_split(X, y, None, 0, None, np.array(rows, dtype=np.uint32), params("squared_error", 3))
    with pytest.raises(ValueError, match="criterion does not match"):
        _core.find_split(X, y, None, 0, None, np.arange(20, dtype=np.uint32), params("gini", 3))


def same_trees(a, b):
    sa, sb = a.__getstate__(), b.__getstate__()
    assert len(sa["trees"]) == len(sb["trees"])
    for ta, tb in zip(sa["trees"], sb["trees"]):
        assert ta.keys() == tb.keys()
        for field in ta:
            np.testing.assert_array_equal(ta[field], tb[field], err_msg=field)


BLOCKED_CASES = {
    "squared error, 3 of 12": ("squared_error", dict(max_features=3)),
    "every feature, leaf limits": ("squared_error", dict(max_features=12, min_samples_leaf=3)),
    "one feature a node": ("squared_error", dict(max_features=1, max_depth=8)),
    "absolute error": ("absolute_error", dict(max_features=2, max_depth=6)),
    "poisson": ("poisson", dict(max_features=4)),
    "gini": ("gini", dict(max_features=2)),
    "entropy": ("entropy", dict(max_features=5, min_weight_fraction_leaf=0.02)),
    "pruned": ("squared_error", dict(max_features=2, ccp_alpha=0.002)),
    "always, monotonic": ("squared_error", dict(max_features=2, always_features=[0, 7],
                                                monotonic_cst=[1] + [0] * 10 + [-1])),
    "categorical": ("squared_error", dict(max_features=3, categorical_features=[4])),
    "feature weights": ("squared_error", dict(max_features=2, feature_weights=True)),
    "best-first": ("squared_error", dict(max_features=3, max_leaf_nodes=12, min_samples_leaf=2)),
    "best-first, classes": ("gini", dict(max_features=2, max_leaf_nodes=9, always_features=[7],
                                         min_impurity_decrease=0.001)),
}


@pytest.mark.parametrize("case", list(BLOCKED_CASES))
@pytest.mark.parametrize("n_blocks", [2, 5])
def test_a_fit_over_column_blocks_grows_the_exact_searchs_trees(case, n_blocks):
    """The feature-parallel fit in one process (LocalBlocks): the columns cut into blocks, each
    encoded, searched and parted apart; the trees grown level by level, a node's candidates drawn
    from its own stream and offered with the blocks' answers in draw order, then renumbered in
    preorder. Node for node they are the exact search's depth-first trees (ties, missing values,
    small nodes that stop at their best split, leaf limits, pruning, the always-split features,
    monotonic constraints, categories, feature weights), or with max_leaf_nodes its best-first
    trees (a split's children searched together), and the out-of-bag rows reach the same leaves."""
    criterion, kw = BLOCKED_CASES[case]
    rng = np.random.RandomState(3)
    n, p = 160, 12
    X = np.round(rng.rand(n, p) * 6) / 6  # ties within columns
    X[rng.rand(n, p) < 0.05] = np.nan
    X[:, 4] = rng.randint(0, 5, n)  # categories (kept whole: no NaN)
    signal = np.nan_to_num(X[:, 0]) + 2 * (X[:, 4] % 2) * np.nan_to_num(X[:, 2]) + 0.3 * rng.randn(n)
    classes = criterion in ("gini", "entropy")
    y = (signal > np.median(signal)).astype(np.int32) + classes * (signal > np.quantile(signal, 0.8))
    y = y.astype(np.int32) if classes else np.abs(signal)
    feature_weights = rng.uniform(0.1, 1.0, p) if kw.pop("feature_weights", False) else None
    params = _core.ForestParams()
    params.criterion = CRITERIA[criterion]
    params.n_estimators, params.n_draws, params.seed, params.n_threads = 6, n, 9, 2
    params.record_oob_leaves = True
    for name, value in kw.items():
        setattr(params, name, value)
    w = rng.uniform(0.5, 2.0, n)
    forests = []
    for blocks in (0, n_blocks):
        params.column_blocks = blocks
        forests.append(_core.fit_forest(X, None if classes else y, y if classes else None, 3 if classes else 0, w,
                                        feature_weights, params))
    same_trees(*forests)
    assert sum(len(t["left"]) for t in forests[0].__getstate__()["trees"]) > 60
    assert forests[0].has_oob_leaves == ("ccp_alpha" not in kw) == forests[1].has_oob_leaves
    np.testing.assert_array_equal(forests[0].apply_oob(X, 1, True), forests[1].apply_oob(X, 1, True))


def test_column_blocks_refuse_a_csr_X():
    from scipy import sparse

    X = sparse.random(40, 6, density=0.3, format="csr", random_state=0)
    params = _core.ForestParams()
    params.max_features, params.n_draws, params.column_blocks = 2, 40, 2
    with pytest.raises(ValueError, match="column_blocks needs X dense"):
        _core.fit_forest(X, np.arange(40.0), None, 0, None, None, params)
