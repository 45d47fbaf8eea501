"""Signed leaf paths F_eps: hand-built trees with known answers (paper 001 Fig. 1), both
first-occurrence readings, weights, and fitted forests against a node-by-node reference."""

import numpy as np
import pytest
from hand_trees import Hand, figure_1_trees
from reference import signed_path, signed_path_every, sk_trees
from sklearn.ensemble import RandomForestRegressor as SkRegressor

import pyinterp
from pyinterp.interactions import decode, distinct_paths, encode, signed_paths


def test_figure_1_paths_weights_and_epsilon():
    forest = Hand(figure_1_trees()).forest
    tree = forest.trees_[0]
    np.testing.assert_allclose(tree.impurity_decrease[:2], [1 / 16, 1 / 8])
    p = signed_paths(forest, 0.01)
    assert [p.path(r) for r in range(len(p))] == [
        ((0, -1), (1, -1)), ((0, -1), (1, 1)), ((0, 1),),
        ((0, -1), (1, -1)), ((0, 1), (1, -1)), ((1, 1),),
    ]
    np.testing.assert_array_equal(p.weight, [1 / 8, 1 / 8, 1 / 4] * 2)
    np.testing.assert_array_equal(p.depth, [2, 2, 1] * 2)
    np.testing.assert_array_equal(p.tree, [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(p.leaf, [2, 3, 4] * 2)
    assert repr(p) == "SignedPaths(6 leaves of 2 trees, 10 signed features)"
    # 1/16 < eps < 1/8 removes the roots only.
    p = signed_paths(forest, 0.1)
    assert [p.path(r) for r in range(3)] == [((1, -1),), ((1, 1),), ()]
    # Within-node scale: the second split's decrease is 1/4, so eps = 0.2 keeps it.
    p = signed_paths(forest, 0.2, impurity_scale="within_node")
    assert [p.path(r) for r in range(3)] == [((1, -1),), ((1, 1),), ()]
    assert len(signed_paths(forest, 0.2).codes) == 0
    p = signed_paths(forest, 0.01, weight="samplesize")
    np.testing.assert_array_equal(p.weight, [1 / 8, 1 / 8, 1 / 4] * 2)


def test_first_occurrence_readings():
    # Root splits X0 with a tiny decrease, its left child splits X0 again with a large one.
    tree = ([0, 0, -1, -1, -1], [1, 2, -1, -1, -1], [4, 3, -1, -1, -1],
            [1, .9, .45, .45, .1], [.2, .2, 0, 0, 0.19], [0, 0, 0, 1, 0])
    forest = Hand([tree], n_features=1).forest
    filtered = signed_paths(forest, 0.05)
    literal = signed_paths(forest, 0.05, first_occurrence="literal")
    assert [filtered.path(r) for r in range(3)] == [((0, -1),), ((0, 1),), ()]
    assert [literal.path(r) for r in range(3)] == [(), (), ()]
    # Without an epsilon cut both readings keep the root's sign only.
    assert signed_paths(forest, 0.0).path(1) == ((0, -1),)
    # "every" keeps both sides of X0 on the left-then-right path, the repeated left side once.
    every = signed_paths(forest, 0.0, first_occurrence="every")
    assert [every.path(r) for r in range(3)] == [((0, -1),), ((0, -1), (0, 1)), ((0, 1),)]
    every = signed_paths(forest, 0.05, first_occurrence="every")
    assert [every.path(r) for r in range(3)] == [((0, -1),), ((0, 1),), ()]


@pytest.mark.parametrize("literal", [False, True])
def test_fitted_forests_match_reference(regression_data, literal):
    X, y = regression_data
    reading = "literal" if literal else "after_filter"
    for forest in (pyinterp.RandomForestRegressor(n_estimators=8, random_state=0).fit(X, y),
                   SkRegressor(n_estimators=8, random_state=0).fit(X, y)):
        p = signed_paths(forest, 0.002, first_occurrence=reading, n_jobs=2)
        trees = forest.trees_ if hasattr(forest, "trees_") else sk_trees(forest, 1)
        expected = [signed_path(t, leaf, 0.002, literal) for t in trees for leaf in np.flatnonzero(t.left < 0)]
        assert [list(p.codes[p.indptr[r]:p.indptr[r + 1]]) for r in range(len(p))] == expected
        per_tree = np.bincount(p.tree, weights=p.weight)
        np.testing.assert_allclose(per_tree, 1 / len(trees), rtol=1e-12)  # full binary trees
        # At most one sign per feature on a path.
        for r in range(len(p)):
            features = p.codes[p.indptr[r]:p.indptr[r + 1]] >> 1
            assert len(set(features)) == len(features)


def test_every_occurrence_matches_reference(regression_data):
    X, y = regression_data
    for forest in (pyinterp.RandomForestRegressor(n_estimators=8, random_state=0).fit(X, y),
                   SkRegressor(n_estimators=8, random_state=0).fit(X, y)):
        p = signed_paths(forest, 0.002, first_occurrence="every", n_jobs=2)
        first = signed_paths(forest, 0.002)
        trees = forest.trees_ if hasattr(forest, "trees_") else sk_trees(forest, 1)
        expected = [signed_path_every(t, leaf, 0.002) for t in trees for leaf in np.flatnonzero(t.left < 0)]
        assert [list(p.codes[p.indptr[r]:p.indptr[r + 1]]) for r in range(len(p))] == expected
        # The first occurrences are among them, and the features are the same.
        both_signs = 0
        for r in range(len(p)):
            every_codes, first_codes = (set(q.codes[q.indptr[r]:q.indptr[r + 1]].tolist()) for q in (p, first))
            assert first_codes <= every_codes and {c >> 1 for c in first_codes} == {c >> 1 for c in every_codes}
            both_signs += len(every_codes) > len({c >> 1 for c in every_codes})
        assert both_signs > 0


def test_figure_1_distinct_paths():
    forest = Hand(figure_1_trees()).forest
    indptr, codes, weight = distinct_paths(forest, 0.01)
    rows = [decode(codes[a:b]) for a, b in zip(indptr[:-1], indptr[1:])]
    # First occurrences in tree order; the shared path ((0,-1),(1,-1)) sums 1/8 from each tree.
    assert rows == [((0, -1), (1, -1)), ((0, -1), (1, 1)), ((0, 1),), ((0, 1), (1, -1)), ((1, 1),)]
    np.testing.assert_array_equal(weight, [1 / 4, 1 / 8, 1 / 4, 1 / 8, 1 / 4])


@pytest.mark.parametrize("epsilon", [0.0, 0.01])
def test_distinct_paths_sum_the_leaves(regression_data, epsilon):
    X, y = regression_data
    rf = pyinterp.RandomForestRegressor(n_estimators=20, max_features=0.5, random_state=0).fit(X, y)
    p = signed_paths(rf, epsilon, weight="samplesize")
    want = {}
    for r in range(len(p)):
        key = tuple(p.codes[p.indptr[r]:p.indptr[r + 1]])
        want[key] = want.get(key, 0.0) + p.weight[r]
    indptr, codes, weight = distinct_paths(rf, epsilon, weight="samplesize", n_jobs=1)
    got = {tuple(codes[a:b]): w for a, b, w in zip(indptr[:-1], indptr[1:], weight)}
    assert list(got) == list(want)  # first-occurrence order
    np.testing.assert_allclose(list(got.values()), list(want.values()), rtol=1e-13)
    for n_jobs in (2, 3):
        again = distinct_paths(rf, epsilon, weight="samplesize", n_jobs=n_jobs)
        for a, b in zip(again, (indptr, codes, weight)):
            np.testing.assert_array_equal(a, b)


def test_theorem_1_bound_per_tree(regression_data):
    """Sum over a tree's leaves of 2^-D 1{S in F_eps} <= 2^-|S| for every S that occurs."""
    X, y = regression_data
    forest = pyinterp.RandomForestRegressor(n_estimators=5, random_state=1).fit(X, y)
    p = signed_paths(forest, 0.001)
    for t in range(5):
        rows = np.flatnonzero(p.tree == t)
        paths = [set(p.codes[p.indptr[r]:p.indptr[r + 1]]) for r in rows]
        candidates = {frozenset(c) for s in paths for c in ([a] for a in s)}
        candidates |= {frozenset(s) for s in paths if 0 < len(s) <= 3}
        for S in candidates:
            mass = sum(2.0 ** -p.depth[r] for r, s in zip(rows, paths) if S <= s)
            assert mass <= 2.0 ** -len(S) + 1e-12


def test_codes_and_errors():
    assert decode(encode([(3, 1), (0, -1)])) == ((0, -1), (3, 1))
    np.testing.assert_array_equal(encode([(2, -1), (1, 1)]), [3, 4])
    with pytest.raises(ValueError, match="signed feature"):
        encode([(1, 0)])
    forest = Hand(figure_1_trees()).forest
    with pytest.raises(ValueError, match="weight"):
        signed_paths(forest, weight="leaves")
    with pytest.raises(ValueError, match="epsilon"):
        signed_paths(forest, -1.0)
    with pytest.raises(ValueError, match="first_occurrence"):
        signed_paths(forest, first_occurrence="last")
