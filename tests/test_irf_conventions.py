"""IterativeRandomForest's two conventions (style="R", R iRF 3.0's; style="pyinterp"), each checked
against values counted by hand on small forests."""

import itertools

import numpy as np
import pytest

from pyinterp import IterativeRandomForest
from pyinterp.interactions import encode, random_intersection_trees
from pyinterp.interactions.irf import BootstrapLeaves, _prevalences, rit_levels


@pytest.mark.parametrize("depth", [2, 3, 4, 6])
def test_rit_depth_is_the_number_of_paths_a_leaf_intersects(depth):
    """R's RIT(depth=d) intersects d paths per leaf. Path i = {0..29} minus {i} (i < 20): a leaf
    that intersected k distinct paths has 30 - k items, so the largest loss is the depth."""
    sets = [[j for j in range(30) if j != i] for i in range(20)]
    for root_sets in (1, 2):
        found = random_intersection_trees(sets, depth=rit_levels(depth, root_sets), root_sets=root_sets,
                                          n_children=1, min_size=1, n_trees=3000, random_state=0)
        assert max(30 - len(s) for s in found) == depth
    assert rit_levels(1, 2) == 1  # R's depth 1 and 2 both stop at the root of two paths


def test_prevalence_row_sets_by_hand():
    """Three leaves with paths {a,b}, {a}, {b,c}, 4 / 2 / 3 rows, 3 / 1 / 0 of class 1; only the
    first leaf predicts class 1. R shares out rows (class 1: 3+1+0 = 4, other: 1+1+3 = 5);
    pyinterp shares out the rows of class-1 leaves (4) and of the other leaves (2+3 = 5)."""
    a, b, c = 0, 2, 4
    indptr, codes = np.array([0, 2, 3, 5]), np.array([a, b, a, b, c], dtype=np.int32)
    size, positive, is1 = np.array([4.0, 2, 3]), np.array([3.0, 1, 0]), np.array([True, False, False])
    queries = [(a, b), (a,), (c,)]
    prev1, prev0, prec = _prevalences(queries, indptr, codes, positive, size - positive, positive)  # R
    np.testing.assert_allclose(prev1, [3 / 4, 4 / 4, 0 / 4])
    np.testing.assert_allclose(prev0, [1 / 5, 2 / 5, 3 / 5])
    np.testing.assert_allclose(prec, [3 / 4, 4 / 6, 0 / 3])
    prev1, prev0, prec = _prevalences(queries, indptr, codes, size * is1, size * ~is1, positive)  # pyinterp
    np.testing.assert_allclose(prev1, [4 / 4, 4 / 4, 0 / 4])
    np.testing.assert_allclose(prev0, [0 / 5, 2 / 5, 3 / 5])
    np.testing.assert_allclose(prec, [3 / 4, 4 / 6, 0 / 3])


def tiny_regression(n=16, p=3):
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(n, p))
    y = np.round(2 * (X[:, 0] < 0.5) * (X[:, 1] < 0.5) + rng.uniform(size=n), 1)
    y[:4] = np.median(y)  # rows on the cut: class 1 for R (y >= cut), not for pyinterp (y > cut)
    return X, y


def count_by_hand(forest, X, z, cut, min_node_size, oob_only):
    """Per (tree, leaf): rows and class-1 rows, walking every row down every tree."""
    out = {}
    inbag = forest.inbag_counts_
    for t, tree in enumerate(forest.trees_):
        for i, x in enumerate(X):
            if oob_only and inbag[t, i] > 0:
                continue
            node = 0
            while tree.left[node] >= 0:
                node = tree.left[node] if x[tree.feature[node]] <= tree.threshold[node] else tree.right[node]
            size, pos = out.get((t, node), (0, 0))
            out[(t, node)] = (size + 1, pos + z[i])
        for leaf in np.flatnonzero(tree.left < 0):
            size, pos = out.setdefault((t, leaf), (0, 0))
            if oob_only and size < min_node_size:
                out[(t, leaf)] = (0, 0)
    return out


@pytest.mark.parametrize("style", ["R", "pyinterp"])
def test_bootstrap_leaves_count_by_hand(style):
    """R: the bootstrap forest is fitted on the resample's distinct rows, and a leaf counts the rows
    out-of-bag for its tree (min_node_size drops smaller leaves); y >= median is class 1. pyinterp:
    every resampled row, repeats included, in every tree; y > median."""
    X, y = tiny_regression()
    cut = np.median(y)
    model = IterativeRandomForest(n_iterations=1, n_estimators=5, max_depth=2, n_bootstraps=2, rit_n_trees=20,
                                  min_node_size=2, style=style, random_state=0).fit(X, y)
    assert model.cut_ == cut
    run = model.bootstrap(X, y, 1)
    drawn = model._resample(y, int(model.bootstrap_seeds_[1, 0]))
    expected_rows = np.unique(drawn) if style == "R" else drawn
    np.testing.assert_array_equal(run.rows, expected_rows)
    assert run.forest.inbag_counts_.shape[1] == len(expected_rows)
    z = (y >= cut) if style == "R" else (y > cut)
    counts = count_by_hand(run.forest, X[run.rows], z[run.rows], cut, 2, style == "R")
    leaves = run.leaves
    for r in range(len(leaves.paths)):
        size, pos = counts[(int(leaves.paths.tree[r]), int(leaves.paths.leaf[r]))]
        assert (leaves.size[r], leaves.positive[r]) == (size, pos)
    value = {(t, leaf): tree.value[leaf, 0] for t, tree in enumerate(run.forest.trees_) for leaf in range(tree.node_count)}
    is1 = np.array([value[(int(t), int(leaf))] > cut for t, leaf in zip(leaves.paths.tree, leaves.paths.leaf)])
    np.testing.assert_array_equal(leaves.is1, is1)
    mass1, mass0 = (leaves.positive, leaves.size - leaves.positive) if style == "R" else (leaves.size * is1,
                                                                                       leaves.size * ~is1)
    np.testing.assert_array_equal(leaves.mass1, mass1)
    np.testing.assert_array_equal(leaves.mass0, mass0)


def scores_by_hand(leaves, candidates):
    """cpe, fsd, mip, prevalence, precision of each candidate on one bootstrap, from the leaves."""
    paths = [set(leaves.paths.codes[a:b].tolist()) for a, b in zip(leaves.paths.indptr[:-1], leaves.paths.indptr[1:])]

    def prev(s):
        inside = np.array([set(s) <= p for p in paths])
        m1, m0, pos = leaves.mass1[inside].sum(), leaves.mass0[inside].sum(), leaves.positive[inside].sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            return m1 / leaves.mass1.sum(), m0 / leaves.mass0.sum(), np.float64(pos) / (m1 + m0)

    out = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for s in candidates:
            p1, p0, pr = prev(s)
            fsd = np.log(p1) - sum(np.log(prev((j,))[0]) for j in s)
            mip = min(np.log(pr) - np.log(prev(sub)[2]) for sub in itertools.combinations(s, len(s) - 1))
            out.append(dict(prevalence=p1, precision=pr, cpe=np.log(p1) - np.log(p0), fsd=fsd, mip=mip))
    return out


def test_r_style_candidates_stability_and_order_by_hand():
    """R style: the candidates are one RIT's sets on the selected forest; each column averages the
    bootstraps whose RIT found something and where cpe, fsd and mip are finite; a set no bootstrap
    keeps has no row (as in R's summary); order by cpe."""
    X, y = tiny_regression(60, 5)
    model = IterativeRandomForest(n_iterations=2, n_estimators=8, max_depth=None, n_bootstraps=5, rit_n_trees=60,
                                  rit_depth=3, style="R", random_state=4).fit(X, y)
    z = (y >= model.cut_).astype(float)
    candidates = sorted(set(BootstrapLeaves(model.forest_, X, z, model).rit(model, seed=model.rit_seed_)))
    runs = [model.bootstrap(X, y, b) for b in range(5)]
    per_run = [scores_by_hand(run.leaves, candidates) for run in runs]
    kept = {s: [b for b, run in enumerate(runs)
                if run.interactions and all(np.isfinite(per_run[b][i][k]) for k in ("cpe", "fsd", "mip"))]
            for i, s in enumerate(candidates)}
    table = model.interactions_
    codes = [tuple(int(c) for c in encode(f)) for f in table.features]
    assert sorted(codes) == [s for s in candidates if kept[s]] and len(codes) > 3
    assert any(0 < len(b) < 5 for b in kept.values())  # the filter is exercised
    for row, s in enumerate(codes):
        i = candidates.index(s)
        assert table["stability"][row] == pytest.approx(np.mean([s in set(runs[b].interactions) for b in kept[s]]))
        for name in ("prevalence", "precision", "cpe", "fsd", "mip"):
            assert table[name][row] == pytest.approx(np.mean([per_run[b][i][name] for b in kept[s]]))
        assert table["sta_cpe"][row] == pytest.approx(np.mean([per_run[b][i]["cpe"] > 0 for b in kept[s]]))
    cpe = np.nan_to_num(table["cpe"], nan=-np.inf)
    assert np.all(np.diff(cpe) <= 0)


def test_pyinterp_style_scores_the_union_over_every_bootstrap():
    X, y = tiny_regression()
    model = IterativeRandomForest(n_iterations=1, n_estimators=8, max_depth=3, n_bootstraps=4, rit_n_trees=40,
                                  rit_depth=3, style="pyinterp", random_state=2).fit(X, y)
    runs = [model.bootstrap(X, y, b) for b in range(4)]
    found = [set(r.interactions) for r in runs]
    codes = [tuple(int(c) for c in encode(f)) for f in model.interactions_.features]
    assert set(codes) == set().union(*found)
    np.testing.assert_array_equal(model.interactions_["stability"], [np.mean([s in f for f in found]) for s in codes])
    stability = model.interactions_["stability"]
    assert np.all(np.diff(stability) <= 0)


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
@pytest.mark.parametrize("task, kwargs, largest_leaf_split", [
    ("regression", {}, 5),  # R iRF's forests: ranger's min.node.size 5 for regression
    ("regression", {"style": "pyinterp"}, 1),  # grown to purity
    ("classification", {}, 1),  # ranger's min.node.size 1 for classification
    ("regression", {"forest_min_node_size": 10}, 10),
])
def test_forest_nodes_of_at_most_min_node_size_draws_are_not_split(task, kwargs, largest_leaf_split):
    """ranger counts a node's in-bag draws, repeats included, and splits it only above min.node.size:
    every split node of every forest (iterations and bootstraps) weighs more, and nodes of that
    weight or less whose rows differ stay leaves."""
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(200, 5))
    y = X[:, 0] * X[:, 1] + 0.3 * rng.randn(200)
    if task == "classification":
        y = (y > np.median(y)).astype(int)
    model = IterativeRandomForest(n_iterations=1, n_estimators=6, n_bootstraps=1, rit_n_trees=10, task=task,
                                  random_state=0, **kwargs).fit(X, y)
    for forest in (model.forest_, model.bootstrap(X, y, 0).forest):
        trees = [e.tree_ for e in forest.estimators_]
        split_weights = np.concatenate([t.weighted_n_node_samples[t.children_left >= 0] for t in trees])
        assert split_weights.min() > largest_leaf_split
        impure_leaves = np.concatenate([t.weighted_n_node_samples[(t.children_left < 0) & (t.impurity > 0)]
                                        for t in trees])
        if largest_leaf_split > 1:
            assert (impure_leaves <= largest_leaf_split).sum() > 10
        else:
            assert split_weights.min() <= 5  # small nodes split on
