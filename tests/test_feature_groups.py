"""Feature groups (several probes of one gene count as one feature) and names everywhere: group
paths against the brute-force reading of every tree, group DWP against sums over those paths,
LSSFind and iRF finding interactions between genes measured by several probes, importances summed
per group, and pandas column names on every result that names features."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from reference import signed_path, signed_path_every

from pyinterp import IterativeRandomForest, LSSFind, RandomForestRegressor
from pyinterp import importance as imp
from pyinterp.interactions import dwp, prevalent_sets, signed_paths

M, P = -1, 1


def probes(n=600, seed=0):
    """Two genes measured by three noisy probes each, plus noise columns; y = 1{a low & b low}
    (a rule on the genes), so each probe alone carries only part of the rule."""
    rng = np.random.RandomState(seed)
    a, b = rng.rand(n), rng.rand(n)
    columns = {f"a{i}": a + 0.05 * rng.randn(n) for i in range(3)}
    columns.update({f"b{i}": b + 0.05 * rng.randn(n) for i in range(3)})
    columns.update({f"noise{i}": rng.rand(n) for i in range(4)})
    X = pd.DataFrame(columns)
    y = ((a < 0.5) & (b < 0.5)).astype(float) + 0.1 * rng.randn(n)
    genes = ["A"] * 3 + ["B"] * 3 + [f"noise{i}" for i in range(4)]
    return X, y, genes


@pytest.fixture(scope="module")
def probe_forest():
    X, y, genes = probes()
    return RandomForestRegressor(n_estimators=20, max_features=4, random_state=0).fit(X, y), X, y, genes


@pytest.mark.parametrize("reading", ["after_filter", "literal", "every"])
def test_group_paths_match_the_reference_reading_of_every_tree(probe_forest, reading):
    forest, X, y, genes = probe_forest
    paths = signed_paths(forest, 0.002, first_occurrence=reading, feature_groups=genes, n_jobs=2)
    index = [["A", "B", "noise0", "noise1", "noise2", "noise3"].index(g) for g in genes]
    assert paths.names == ("A", "B", "noise0", "noise1", "noise2", "noise3")
    expected = [signed_path_every(t, leaf, 0.002, index) if reading == "every"
                else signed_path(t, leaf, 0.002, reading == "literal", index)
                for t in forest.trees_ for leaf in np.flatnonzero(t.left < 0)]
    assert [list(paths.codes[paths.indptr[r]:paths.indptr[r + 1]]) for r in range(len(paths))] == expected
    # Groups merge features: paths over groups differ from the per-probe ones.
    per_probe = signed_paths(forest, 0.002, first_occurrence=reading)
    assert not np.array_equal(per_probe.codes >> 1, paths.codes >> 1)


def test_singleton_groups_are_the_features(probe_forest):
    forest, X, y, genes = probe_forest
    alone = signed_paths(forest, 0.002, feature_groups=list(range(X.shape[1])))
    plain = signed_paths(forest, 0.002)
    np.testing.assert_array_equal(alone.codes, plain.codes)
    np.testing.assert_array_equal(alone.indptr, plain.indptr)
    assert plain.names == tuple(X.columns)


def test_group_dwp_is_the_weight_of_the_group_paths_containing_the_set(probe_forest):
    forest, X, y, genes = probe_forest
    paths = signed_paths(forest, 0.01, feature_groups=genes)
    sets = [(("A", M),), (("A", M), ("B", M)), (("A", P), ("B", M)), ((0, M), (1, M), (2, P))]
    got = dwp(forest, sets, 0.01, feature_groups=genes)
    index = {name: i for i, name in enumerate(paths.names)}
    for s, value in zip(sets, got):
        codes = {2 * (index[k] if isinstance(k, str) else k) + (sign > 0) for k, sign in s}
        brute = sum(w for r, w in enumerate(paths.weight)
                    if codes <= set(paths.codes[paths.indptr[r]:paths.indptr[r + 1]].tolist()))
        assert value == pytest.approx(brute, rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(dwp(paths, sets), got, rtol=1e-12)  # from the paths themselves, names included
    assert got[1] > 0.2  # the rule: both genes low


def test_prevalent_group_sets_are_named_by_group(probe_forest):
    forest, X, y, genes = probe_forest
    table = prevalent_sets(forest, 0.05, 2, 0.01, feature_groups=genes)
    assert (("A", M), ("B", M)) in [record.names for record in table]
    assert all(name in ("A", "B", "noise0", "noise1", "noise2", "noise3") for r in table for name, _ in r.names)


def test_lssfind_finds_the_gene_pair_from_probes():
    X, y, genes = probes(seed=1)
    plain = LSSFind(n_estimators=50, max_features=None, random_state=0).fit(X, y)
    grouped = LSSFind(n_estimators=50, max_features=None, random_state=0).fit(X, y, feature_groups=genes)
    assert [record.names for record in grouped.minimal_] == [(("A", M), ("B", M))]
    # Per probe, the rule's prevalence is split among the probes that carry it.
    pair = grouped.dwp([(("A", M), ("B", M))])[0]
    best_probe_pair = max(plain.dwp([((i, M), (j, M)) for i, j in itertools.product(range(3), range(3, 6))]))
    assert pair > best_probe_pair
    assert grouped.paths_.names[:2] == ("A", "B")


def test_irf_reports_group_interactions():
    X, y, genes = probes(seed=2)
    kw = dict(n_iterations=2, n_estimators=40, n_bootstraps=4, style="pyinterp", random_state=0)  # ranked by stability
    irf = IterativeRandomForest(**kw).fit(X, y, feature_groups=genes)
    top = irf.interactions_[0]
    assert top.names == (("A", M), ("B", M))
    assert top.stability == 1.0
    assert irf.feature_groups_.names[:2] == ("A", "B")
    np.testing.assert_array_equal(irf.feature_groups_.index, [0, 0, 0, 1, 1, 1, 2, 3, 4, 5])
    # The redone bootstrap reads the same groups.
    run = irf.bootstrap(X, y, 0)
    assert run.leaves.paths.names == irf.feature_groups_.names


def test_importances_summed_per_group(probe_forest):
    forest, X, y, genes = probe_forest
    values = imp.mdi_oob(forest, X, y)
    groups = imp.group(values, genes)
    assert groups.names == ("A", "B", "noise0", "noise1", "noise2", "noise3")
    np.testing.assert_array_equal(groups.values, [values[:3].sum(), values[3:6].sum(), *values[6:]])
    contributions, _ = imp.contributions(forest, X.iloc[:5])
    per_gene = imp.group(contributions, genes).values
    assert per_gene.shape == (5, 6)
    np.testing.assert_allclose(per_gene.sum(axis=1), contributions.sum(axis=1), rtol=1e-12)


def test_bad_groups_and_names_are_named(probe_forest):
    forest, X, y, genes = probe_forest
    with pytest.raises(ValueError, match="feature_groups must have one group name per column"):
        signed_paths(forest, feature_groups=genes[:-1])
    with pytest.raises(ValueError, match="feature_groups must have one group name per column"):
        LSSFind(n_estimators=5).fit(X, y, feature_groups=genes + ["extra"])
    with pytest.raises(TypeError, match="feature_groups must hold hashable"):
        imp.group(np.ones(X.shape[1]), [{"gene": 1}] * X.shape[1])
    with pytest.raises(TypeError, match="feature_groups must be a sequence"):
        IterativeRandomForest(n_iterations=1, n_estimators=5, n_bootstraps=1).fit(X, y, feature_groups="A")
    with pytest.raises(ValueError, match="'gene_z', which is not among"):
        dwp(forest, [(("gene_z", M),)])


# -- names everywhere ----------------------------------------------------------------------------


def test_signed_sets_by_column_name(probe_forest):
    forest, X, y, genes = probe_forest
    by_name = dwp(forest, [(("a0", M), ("b1", M)), (("noise2", P),)])
    by_index = dwp(forest, [((0, M), (4, M)), ((8, P),)])
    np.testing.assert_array_equal(by_name, by_index)
    lss = LSSFind(n_estimators=10, random_state=0).fit(X, y)
    np.testing.assert_array_equal(lss.dwp([(("a0", M), ("b1", M))]), lss.dwp([((0, M), (4, M))]))


def test_irf_names_and_column_checks():
    X, y, _ = probes(seed=3)
    irf = IterativeRandomForest(n_iterations=1, n_estimators=20, n_bootstraps=2, random_state=0).fit(X, y)
    assert list(irf.forest_.feature_names_in_) == list(X.columns)
    assert all(name in X.columns for record in irf.interactions_ for name, _ in record.names)
    frame = irf.interactions_.to_frame()
    assert list(frame["names"]) == [record.names for record in irf.interactions_]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(irf.predict(X), irf.forest_.predict(X))
        imp.mdi_oob(irf.forest_, X, y)
    with pytest.raises(ValueError, match="feature names"):
        irf.predict(X[X.columns[::-1]])
