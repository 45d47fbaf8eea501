"""DWP and prevalent_sets: paper 001's exact examples, lssfind's published values, the per-tree
bound of Theorem 1 and brute-force enumeration over the leaves' signed paths."""

import itertools

import numpy as np
import pytest
from hand_trees import Hand, figure_1_trees
from sklearn.datasets import make_regression
from sklearn.ensemble import RandomForestRegressor as SkRegressor

import pyinterp
from pyinterp.datasets import make_lss
from pyinterp.interactions import dwp, prevalent_sets, signed_paths

M, P = -1, 1


def test_figure_1_exact():
    forest = Hand(figure_1_trees()).forest
    got = dwp(forest, [[(0, M), (1, M)], [(0, M), (1, P)], [(0, M)], [], [(0, M), (0, P)]])
    np.testing.assert_array_equal(got, [1 / 4, 1 / 8, 3 / 8, 1.0, 0.0])


def test_figure_1_fitted():
    """Noiseless grid of E[Y|X] = 1(X0 <= .5) 1(X1 <= .5); the roots split X0 in a fraction f of trees."""
    g = (np.arange(100) + 0.5) / 100
    X = np.array(list(itertools.product(g, g)))
    y = ((X[:, 0] <= .5) & (X[:, 1] <= .5)).astype(float)
    forest = pyinterp.RandomForestRegressor(n_estimators=200, bootstrap=False, max_features=None,
                                            random_state=0).fit(X, y)
    f = np.mean([t.feature[0] == 0 for t in forest.trees_])
    got = dwp(forest, [[(0, M), (1, M)], [(0, M), (1, P)], [(0, M)]], epsilon=0.01)
    np.testing.assert_allclose(got, [1 / 4, f / 4, (1 + f) / 4], atol=1e-12)
    np.testing.assert_allclose(got, [1 / 4, 1 / 8, 3 / 8], atol=0.02)


def test_lssfind_published_values():
    """lssfind's tests/test_lssfind.py on a scikit-learn forest, epsilon = 1, adjusted DWP >= 0.5."""
    X, y = make_regression(n_features=4, n_informative=2, random_state=0, shuffle=False)
    rf = SkRegressor(random_state=0).fit(X, y)
    distinct = prevalent_sets(rf, 0.5 / 8, max_order=3, epsilon=1.0, node_counts="distinct")
    found = {r.features: r.adjusted_dwp for r in distinct if r.adjusted_dwp >= 0.5}
    expected = {((1, M),): 1.0, ((1, P),): 1.0, ((0, M), (1, M)): 0.9975, ((0, P), (1, M)): 0.9975,
                ((0, M),): 0.99, ((0, P),): 0.99, ((0, M), (1, P)): 0.9825, ((0, P), (1, P)): 0.9825}
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        assert found[key] == pytest.approx(value, abs=1e-4)
    # With in-bag weighted node sizes (pyinterp's default) the two values the issue names agree too.
    weighted = dwp(rf, [[(1, M)], [(0, P), (1, M)]], epsilon=1.0) * [2, 4]
    np.testing.assert_allclose(weighted, [1.0, 0.9975], atol=1e-4)


def test_proof_of_concept_binary():
    """y = X0 X1 + X2 X3 on binary features, no epsilon cut: DWP({0+, 1+}) = 1/4 exactly."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(4000, 10)).astype(float)
    y = X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3]
    forest = pyinterp.RandomForestRegressor(n_estimators=30, max_features=None, random_state=0).fit(X, y)
    got = dwp(forest, [[(0, P), (1, P)], [(2, P), (3, P)], [(0, M), (1, M)]], epsilon=0.0)
    np.testing.assert_allclose(got, [0.25, 0.25, 0.0], atol=1e-9)


def brute_force_prevalent(paths, min_dwp, max_order):
    total = {}
    for r in range(len(paths)):
        codes = paths.codes[paths.indptr[r]:paths.indptr[r + 1]]
        for k in range(1, min(len(codes), max_order) + 1):
            for c in itertools.combinations(codes.tolist(), k):
                total[c] = total.get(c, 0.0) + paths.weight[r]
    return {tuple((c >> 1, 1 if c & 1 else -1) for c in key): v for key, v in total.items() if v >= min_dwp - 1e-12}


@pytest.mark.parametrize("weight", ["depth", "samplesize"])
def test_prevalent_sets_equal_enumeration_and_dwp(weight):
    X, y, _ = make_lss(n_samples=400, n_features=8, n_interactions=2, order=2, snr=2, random_state=1)
    forest = pyinterp.RandomForestRegressor(n_estimators=20, max_features=0.5, random_state=2).fit(X, y)
    paths = signed_paths(forest, 0.005, weight=weight)
    table = prevalent_sets(paths, 0.01, max_order=3)
    expected = brute_force_prevalent(paths, 0.01, 3)
    got = {r.features: r.dwp for r in table}
    assert got.keys() == expected.keys()
    np.testing.assert_allclose([got[k] for k in expected], list(expected.values()), rtol=1e-12)
    np.testing.assert_allclose(dwp(paths, table.features), table["dwp"], rtol=1e-12)
    np.testing.assert_array_equal(dwp(paths, table.features, n_jobs=2), dwp(paths, table.features))
    with pytest.raises(ValueError, match="weight applied when the SignedPaths were read"):
        dwp(paths, table.features, weight="depth")  # the paths' own weight stands: an option would be ignored
    with pytest.raises(ValueError, match="first_occurrence, weight applied"):
        prevalent_sets(paths, 0.01, weight="depth", first_occurrence=True)
    np.testing.assert_allclose(table["adjusted_dwp"], table["dwp"] * 2.0 ** np.array([len(f) for f in table.features]))
    rho = table["rho"]
    assert np.all(np.diff(rho) <= 1e-10)  # ranked by LSSrank's rho (ties within float noise)


def test_theorem_1_bound_for_every_mined_set():
    X, y, _ = make_lss(n_samples=600, n_features=10, n_interactions=2, order=2, snr=5, random_state=0)
    forest = pyinterp.RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    paths = signed_paths(forest, 0.0)
    table = prevalent_sets(paths, 1e-4, max_order=4)
    assert len(table) > 50
    from pyinterp.interactions.dwp import matches

    indptr, rows = matches(paths, table.features)
    for i, features in enumerate(table.features):
        r = rows[indptr[i]:indptr[i + 1]]
        per_tree = np.bincount(paths.tree[r], weights=2.0 ** -paths.depth[r], minlength=10)
        assert np.all(per_tree <= 2.0 ** -len(features) + 1e-12)
    assert np.all(table["adjusted_dwp"] <= 1 + 1e-12)


def test_sklearn_and_names_and_errors():
    pd = pytest.importorskip("pandas")
    X, y, _ = make_lss(n_samples=300, n_features=5, n_interactions=1, order=2, snr=5, random_state=0)
    frame = pd.DataFrame(X, columns=[f"g{i}" for i in range(5)])
    forest = SkRegressor(n_estimators=10, random_state=0).fit(frame, y)
    table = prevalent_sets(forest, 0.1, max_order=2)
    assert table[0].names[0][0].startswith("g")
    assert set(table.to_frame().columns) >= {"interaction", "order", "dwp", "adjusted_dwp", "rho"}
    with pytest.raises(ValueError, match="min_dwp"):
        prevalent_sets(forest, 0.0)
    with pytest.raises(ValueError, match="max_order"):
        prevalent_sets(forest, 0.1, max_order=0)
    with pytest.raises(ValueError, match="signed feature"):
        dwp(forest, [[(0, 2)]])
