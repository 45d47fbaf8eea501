"""Property tests (issue 22, point 3) of the C++ bindings against brute-force Python references on
small random inputs: signed paths against a walk up the trees' node arrays, DWP against summing leaf
weights over those walks, match_sets / match_sums against subset tests, RIT against the family of
intersections of the input sets, and the forest's own invariants (apply / decision_path, in-bag
counts, impurity decreases). Frequent itemsets are covered in test_itemsets.py. Examples are
derandomized so CI runs the same ones every time."""

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import signed_path, signed_path_every

from pyinterp import RandomForestClassifier, RandomForestRegressor, _core
from pyinterp._csr import take_rows, to_csr, to_tuples
from pyinterp.interactions import dwp, random_intersection_trees, signed_paths

SETTINGS = dict(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def forests(draw, classifier=None):
    """A small fitted forest on integer-valued data (ties, repeated features along paths)."""
    n = draw(st.integers(5, 40))
    p = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.RandomState(seed)
    X = rng.randint(0, draw(st.integers(2, 6)), size=(n, p)).astype(np.float64)
    classify = draw(st.booleans()) if classifier is None else classifier
    kw = dict(n_estimators=draw(st.integers(1, 4)), max_depth=draw(st.sampled_from([None, 1, 3])),
              bootstrap=draw(st.booleans()), max_features=None, random_state=seed)
    if classify:
        return RandomForestClassifier(**kw).fit(X, rng.randint(0, 3, n)), X
    return RandomForestRegressor(**kw).fit(X, X @ rng.rand(p) + rng.rand(n)), X


def leaves(tree):
    return np.flatnonzero(tree.left < 0)


@settings(**SETTINGS)
@given(forests(), st.sampled_from([0.0, 0.01, 0.1]), st.sampled_from(["after_filter", "literal", "every"]))
def test_signed_paths_are_the_walks_up_the_node_arrays(fitted, epsilon, first_occurrence):
    forest, _ = fitted
    paths = signed_paths(forest, epsilon, first_occurrence=first_occurrence)
    expected = []
    for t, tree in enumerate(forest.trees_):
        for leaf in leaves(tree):
            codes = (signed_path_every(tree, leaf, epsilon) if first_occurrence == "every"
                     else signed_path(tree, leaf, epsilon, literal=first_occurrence == "literal"))
            expected.append((t, leaf, codes, tree.depth[leaf]))
    assert len(paths) == len(expected)
    for row, (t, leaf, codes, depth) in enumerate(expected):
        assert (paths.tree[row], paths.leaf[row], paths.depth[row]) == (t, leaf, depth)
        assert paths.codes[paths.indptr[row]:paths.indptr[row + 1]].tolist() == codes
        assert paths.weight[row] == np.ldexp(1.0, -int(depth)) / len(forest.trees_)


@settings(**SETTINGS)
@given(forests(), st.data())
def test_dwp_sums_the_leaf_weights_of_the_paths_holding_the_set(fitted, data):
    forest, X = fitted
    p = X.shape[1]
    signed = st.tuples(st.integers(0, p - 1), st.sampled_from([-1, 1]))
    sets = data.draw(st.lists(st.lists(signed, max_size=3), min_size=1, max_size=5))
    epsilon = data.draw(st.sampled_from([0.0, 0.05]))
    expected = np.zeros(len(sets))
    for tree in forest.trees_:
        for leaf in leaves(tree):
            codes = set(signed_path(tree, leaf, epsilon))
            for i, s in enumerate(sets):
                if {2 * k + (sign > 0) for k, sign in s} <= codes:
                    expected[i] += np.ldexp(1.0, -int(tree.depth[leaf])) / len(forest.trees_)
    np.testing.assert_allclose(dwp(forest, sets, epsilon), expected, rtol=1e-12, atol=1e-15)


code_sets = st.lists(st.frozensets(st.integers(0, 12), max_size=6), min_size=0, max_size=12)
# Queries may name codes no row holds (negative, or past the rows' largest) and, over a wide
# universe, more than the 64 distinct codes match_sums indexes by bits (it then merges lists).
query_sets = st.one_of(st.lists(st.frozensets(st.integers(-1, 14), max_size=6), max_size=12),
                       st.lists(st.frozensets(st.integers(0, 200), min_size=1, max_size=9), min_size=8, max_size=16))


@settings(**SETTINGS)
@given(code_sets, query_sets, st.integers(1, 3), st.integers(1, 2))
def test_match_sets_and_sums_are_subset_tests(rows, queries, m, n_threads):
    indptr, codes = to_csr([sorted(r) for r in rows])
    q_indptr, q_codes = to_csr([sorted(q) for q in queries])
    values = np.random.RandomState(len(rows)).rand(len(rows), m)
    found_indptr, found = _core.match_sets(indptr, codes, q_indptr, q_codes)
    sums = _core.match_sums(indptr, codes, q_indptr, q_codes, values, n_threads)
    assert sums.shape == (len(queries), m)
    for i, q in enumerate(queries):
        holding = [r for r, row in enumerate(rows) if q <= row]
        assert found[found_indptr[i]:found_indptr[i + 1]].tolist() == holding
        in_row_order = np.zeros(m)
        for r in holding:
            in_row_order = in_row_order + values[r]
        np.testing.assert_array_equal(sums[i], in_row_order)


def test_match_sums_over_more_than_64_query_codes_merges_posting_lists():
    rng = np.random.RandomState(0)
    rows = [sorted(rng.choice(90, size=rng.randint(1, 30), replace=False).tolist()) for _ in range(300)]
    queries = [sorted(rng.choice(90, size=rng.randint(1, 3), replace=False).tolist()) for _ in range(60)]
    queries += [[k] for k in range(70)] + [[]]  # 70 codes: past the bits' 64
    values = rng.rand(len(rows), 2)
    few = _core.match_sums(*to_csr(rows), *to_csr(queries[:20]), values, 2)  # fewer than 64 codes
    many = _core.match_sums(*to_csr(rows), *to_csr(queries), values, 2)
    np.testing.assert_array_equal(few, many[:20])
    for i, q in enumerate(queries):
        expected = np.zeros(2)
        for r, row in enumerate(rows):
            if set(q) <= set(row):
                expected = expected + values[r]
        np.testing.assert_array_equal(many[i], expected)


def intersection_family(sets, at_least):
    """Every intersection of at least `at_least` of the sets (as sorted tuples)."""
    family = set()
    for r in range(at_least, len(sets) + 1):
        for chosen in itertools.combinations(sets, r):
            family.add(tuple(sorted(frozenset.intersection(*chosen))))
    return family


@settings(**SETTINGS)
@given(code_sets, st.data())
def test_take_rows_gathers_the_chosen_rows_in_order(rows, data):
    picks = data.draw(st.lists(st.integers(0, max(len(rows) - 1, 0)), max_size=2 * len(rows)))
    indptr, codes = take_rows(*to_csr([sorted(r) for r in rows]), np.array(picks, dtype=np.intp))
    assert to_tuples(indptr, codes) == [tuple(sorted(rows[i])) for i in picks]
    assert indptr.dtype == np.int64 and codes.dtype == np.int32


@settings(**SETTINGS)
@given(st.lists(st.frozensets(st.integers(0, 9), min_size=1, max_size=6), min_size=1, max_size=7),
       st.integers(1, 6), st.sampled_from([1.0, 1.5, 2.0]), st.integers(1, 3), st.sampled_from([1, 2]),
       st.sampled_from(["leaves", "nodes"]), st.integers(0, 2**31 - 1))
def test_rit_reports_intersections_of_drawn_sets(sets, depth, n_children, min_size, root_sets, report, seed):
    """Sets are drawn with replacement, so a report is the intersection of one or more distinct
    input sets (a repeated draw intersects nothing new): it lies in the brute-force family of
    intersections, is closed (the intersection of every input set holding it), has at least
    min_size items, and is counted at most once per tree."""
    n_trees = 30
    found = random_intersection_trees([sorted(s) for s in sets], depth=depth, n_children=n_children,
                                      min_size=min_size, n_trees=n_trees, root_sets=root_sets, report=report,
                                      random_state=seed)
    family = intersection_family(sets, 1)
    for items, count in found.items():
        assert items in family
        assert items == tuple(sorted(frozenset.intersection(*[s for s in sets if set(items) <= s])))
        assert len(items) >= min_size
        assert 1 <= count <= n_trees
    if report == "nodes" and root_sets == 1 and depth == 1 and all(len(s) >= min_size for s in sets):
        # each tree reports the one set it drew
        assert sum(found.values()) == n_trees and all(frozenset(items) in sets for items in found)


@settings(**SETTINGS)
@given(st.frozensets(st.integers(0, 9), min_size=1, max_size=6), st.integers(1, 8), st.integers(1, 5),
       st.sampled_from(["leaves", "nodes"]), st.sampled_from([1, 2]))
def test_rit_of_identical_sets_reports_that_set_in_every_tree(items, n_sets, depth, report, root_sets):
    found = random_intersection_trees([sorted(items)] * n_sets, depth=depth, min_size=1, n_trees=25,
                                      report=report, root_sets=root_sets, random_state=0)
    assert found == {tuple(sorted(items)): 25}


@settings(**SETTINGS)
@given(forests())
def test_forest_invariants(fitted):
    forest, X = fitted
    leaves_of = forest.apply(X)
    indicator, offsets = forest.decision_path(X)
    indicator = indicator.toarray().astype(bool)
    n = len(X)
    for t, tree in enumerate(forest.trees_):
        # apply and decision_path: each row's path is its leaf and the leaf's ancestors
        for i in range(n):
            on_path, node = set(), leaves_of[i, t]
            assert tree.left[node] < 0
            while node >= 0:
                on_path.add(node)
                node = tree.parent[node]
            assert set(np.flatnonzero(indicator[i, offsets[t]:offsets[t + 1]])) == on_path
        # in-bag counts: n_draws rows drawn per tree (all rows once without bootstrap)
        counts = forest.inbag_counts_[t]
        assert counts.sum() == n
        if not forest.bootstrap:
            assert np.all(counts == 1)
        # impurity decreases: (N_t I_t - N_l I_l - N_r I_r) / N_root >= 0 at splits, 0 at leaves,
        # and they telescope: their sum is the root's weighted impurity minus the leaves'
        N, imp = tree.weighted_n_node_samples, tree.impurity
        split = tree.left >= 0
        assert np.all(tree.impurity_decrease[~split] == 0)
        assert np.all(tree.impurity_decrease[split] >= -1e-12 * max(imp[0], 1e-300))
        left, right = tree.left[split], tree.right[split]
        np.testing.assert_allclose(tree.impurity_decrease[split],
                                   (N[split] * imp[split] - N[left] * imp[left] - N[right] * imp[right]) / N[0],
                                   rtol=1e-9, atol=1e-12)
        leaves_part = np.sum(N[~split] * imp[~split])
        np.testing.assert_allclose(tree.impurity_decrease.sum(), (N[0] * imp[0] - leaves_part) / N[0],
                                   rtol=1e-9, atol=1e-12)
        # a node's weight is its children's sum
        np.testing.assert_allclose(N[split], N[left] + N[right], rtol=1e-12)
