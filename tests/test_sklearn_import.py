"""Importing scikit-learn forests in one core call (Forest.from_sklearn_trees) gives the trees the
per-tree conversion gives (forest/view.py::sklearn_tree_arrays, the reference) and scikit-learn's
predictions; signed paths read from their node arrays in place (SklearnTrees) are those of that
copy, bit for bit; the in-bag counts regenerated in the core (_core.sklearn_inbag) are the rows
scikit-learn drew, bit for bit."""

import inspect
import itertools

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from pyinterp import _core
from pyinterp.forest.view import forest_view, sklearn_node_arrays, sklearn_tree_arrays
from pyinterp.importance import mdi_oob
from pyinterp.interactions import signed_paths


def data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(300, 6))
    X[rng.uniform(size=X.shape) < 0.05] = np.nan  # missing values: missing_go_to_left is read
    y = np.nan_to_num(X[:, 0]) + (np.nan_to_num(X[:, 1]) > 0.5) + 0.1 * rng.randn(300)
    return X, y


@pytest.mark.parametrize("n_jobs", [None, 2])  # the import runs on the forest's own n_jobs
@pytest.mark.parametrize("kind", ["regression", "binary", "four classes"])
def test_one_call_import_equals_the_per_tree_conversion(kind, n_jobs):
    X, y = data()
    if kind == "regression":
        rf = RandomForestRegressor(12, max_depth=8, random_state=0).fit(X, y)
    else:
        labels = (y > np.median(y)).astype(int) if kind == "binary" else np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75]))
        rf = RandomForestClassifier(12, class_weight="balanced", random_state=0).fit(X, labels)
    view = forest_view(rf.set_params(n_jobs=n_jobs), len(y))
    for i, est in enumerate(rf.estimators_):
        expected, got = sklearn_tree_arrays(est), view.core.tree(i)
        assert set(got) == set(expected)
        for name, array in expected.items():
            assert got[name].dtype == array.dtype and got[name].shape == array.shape, name
            np.testing.assert_array_equal(got[name], array, err_msg=name)
    pred = view.core.predict(X.astype(np.float32))
    expected = rf.predict(X) if kind == "regression" else rf.predict_proba(X)
    np.testing.assert_allclose(pred if kind != "regression" else pred[:, 0], expected, rtol=1e-12, atol=1e-12)


def without(arrays, name):
    return {key: a for key, a in arrays.items() if key != name}


def shortened(arrays, name):
    return {**arrays, name: arrays[name][:-1]}


def share_a_child(arrays):
    """The root's right child replaced by a child of the next split node: that node has two parents."""
    left, right = arrays["children_left"], arrays["children_right"]
    second = np.flatnonzero(left >= 0)[1]
    right[0] = right[second]


def layouts(arrays):
    """The node arrays as other dtypes and layouts (converted), and as strided views of wider buffers."""
    yield {name: a.astype(np.int32) if a.dtype == np.intp else np.asfortranarray(a) for name, a in arrays.items()}
    yield {name: np.repeat(a, 3, axis=0)[::3] for name, a in arrays.items()}


def test_one_call_import_refuses_malformed_trees():
    X, y = data()
    t = RandomForestRegressor(2, max_depth=3, random_state=0).fit(X, y).estimators_[0].tree_
    arrays = sklearn_node_arrays(t)
    inbag = np.zeros(1, dtype=np.uint32)
    assert _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [arrays], inbag).n_trees == 1
    for name in arrays:  # the arrays cross by name: each one missing is named
        with pytest.raises(ValueError, match=f"has no {name}"):
            _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [without(arrays, name)], inbag)
    with pytest.raises(ValueError, match="mapping"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [tuple(arrays.values())], inbag)
    backwards = {**arrays, "children_left": t.children_left.copy()}
    backwards["children_left"][0] = 0  # the root its own child: traversal would loop
    with pytest.raises(ValueError, match="node 0: children must be later nodes"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [backwards], inbag)
    with pytest.raises(ValueError, match="node 0: children must be later nodes"):  # one bad tree among several, built on threads
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [arrays] * 3 + [backwards],
                                        np.zeros(4, np.uint32), n_threads=2)
    with pytest.raises(ValueError, match=r"feature \d+ is outside \[0, \d+\)"):
        _core.Forest.from_sklearn_trees("squared_error", int(t.feature.max()), 0, 1, [arrays], inbag)  # too few features
    with pytest.raises(ValueError, match="length"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [shortened(arrays, "children_left")], inbag)
    with pytest.raises(ValueError, match="inbag"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [arrays], np.zeros(3, dtype=np.uint32))


@pytest.mark.parametrize("kind", ["best-first, max_samples", "entropy, sample weights"])
def test_one_call_import_of_other_growth_and_weights(kind):
    X, y = data(1)
    if kind.startswith("best-first"):
        rf = RandomForestRegressor(8, max_leaf_nodes=40, max_samples=0.4, random_state=2).fit(X, y)
    else:
        labels = np.digitize(y, np.quantile(y, [0.3, 0.6]))
        weights = np.random.RandomState(3).uniform(0.2, 2.0, len(y))
        rf = RandomForestClassifier(8, criterion="entropy", random_state=3).fit(X, labels, sample_weight=weights)
    view = forest_view(rf, len(y))
    for i, est in enumerate(rf.estimators_):
        expected, got = sklearn_tree_arrays(est), view.core.tree(i)
        for name, array in expected.items():
            assert got[name].dtype == array.dtype, name
            np.testing.assert_array_equal(got[name], array, err_msg=name)


def test_one_call_import_reads_any_layout_and_dtype():
    # The node arrays are read in place whatever their strides; other dtypes are converted.
    X, y = data()
    t = RandomForestRegressor(1, max_depth=6, random_state=0).fit(X, y).estimators_[0].tree_
    arrays = sklearn_node_arrays(t)
    inbag = np.zeros(1, dtype=np.uint32)
    base = _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [arrays], inbag).tree(0)
    for variant in layouts(arrays):
        got = _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [variant], inbag).tree(0)
        for name in base:
            np.testing.assert_array_equal(got[name], base[name], err_msg=name)
    leaf_with_child = {name: a.copy() for name, a in arrays.items()}
    leaf = int(np.flatnonzero(t.children_left < 0)[0])
    leaf_with_child["children_right"][leaf] = leaf + 1
    with pytest.raises(ValueError, match=r"a leaf \(left child -1\) with a right child"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [leaf_with_child], inbag)
    shared = {name: a.copy() for name, a in arrays.items()}
    share_a_child(shared)
    with pytest.raises(ValueError, match="another node's child|no split reaches"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [shared], inbag)


def sklearn_draws(seed, n, n_draws, weights=None):
    from sklearn.ensemble import _forest as skf
    extra = (weights,) if "sample_weight" in inspect.signature(skf._generate_sample_indices).parameters else ()
    return np.bincount(skf._generate_sample_indices(seed, n, n_draws, *extra), minlength=n)


def draws_weighted():  # scikit-learn 1.7+ draws rows in proportion to the sample weights
    from sklearn.ensemble import _forest as skf
    return "sample_weight" in inspect.signature(skf._generate_sample_indices).parameters


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 255, 256, 257, 1000, 65536, 65537])
def test_core_inbag_draws_are_scikit_learns_bit_for_bit(n):
    # numpy's legacy RandomState (MT19937, masked rejection; choice(p) for weights) reproduced.
    seeds = np.array([0, 1, 7, 12345, 2**31 - 2, 2**32 - 1], dtype=np.uint32)
    for n_draws in (n, max(1, n // 3), 2 * n + 1):
        got = _core.sklearn_inbag(seeds, n, n_draws)
        assert got.shape == (len(seeds), n) and got.dtype == np.uint32
        for t, seed in enumerate(seeds):
            np.testing.assert_array_equal(got[t], sklearn_draws(int(seed), n, n_draws))
    if not draws_weighted():
        return
    weights = np.random.RandomState(n).uniform(0, 3, n)
    weights[::4] = 0.0  # rows of weight 0 are never drawn
    if weights.sum() == 0:
        weights[-1] = 1.0
    cdf = (weights / np.sum(weights)).cumsum()
    cdf /= cdf[-1]
    got = _core.sklearn_inbag(seeds, n, n, cdf, n_threads=2)
    for t, seed in enumerate(seeds):
        np.testing.assert_array_equal(got[t], sklearn_draws(int(seed), n, n, weights))


@pytest.mark.parametrize("n_jobs", [1, 3])
@pytest.mark.parametrize("kind", ["plain", "max_samples", "sample weights", "balanced"])
def test_inbag_counts_are_the_rows_scikit_learn_drew(kind, n_jobs):
    X, y = data(2)
    labels = (y > np.median(y)).astype(int)
    if kind == "plain":
        rf = RandomForestRegressor(10, max_depth=3, random_state=4).fit(X, y)
    elif kind == "max_samples":
        rf = RandomForestRegressor(10, max_depth=3, max_samples=0.37, random_state=5).fit(X, y)
    elif kind == "sample weights":
        w = np.random.RandomState(6).uniform(0, 2, len(y))
        rf = RandomForestRegressor(10, max_depth=3, random_state=6).fit(X, y, sample_weight=w)
    else:
        rf = RandomForestClassifier(10, max_depth=3, class_weight="balanced", random_state=7).fit(X, labels)
    inbag = forest_view(rf.set_params(n_jobs=n_jobs), len(y)).core.inbag
    for t, rows in enumerate(rf.estimators_samples_):  # scikit-learn's own record of its draws
        np.testing.assert_array_equal(inbag[t], np.bincount(rows, minlength=len(y)))


def path_readings(trees, n_threads=1, groups=None, n_groups=0):
    """Every signed-path reading of a core forest or of scikit-learn trees in place."""
    out = []
    for first, weight, scale, counts in itertools.product(_core.FirstOccurrence.__members__.values(),
                                                          _core.LeafWeight.__members__.values(),
                                                          _core.DecreaseScale.__members__.values(),
                                                          _core.NodeCounts.__members__.values()):
        for epsilon in (0.0, 0.01):
            args = (trees, epsilon, first, weight, scale, counts, n_threads, groups, n_groups)
            out.append(_core.signed_paths(*args))
            out.append(dict(zip(("indptr", "codes", "weight"), _core.distinct_signed_paths(*args))))
    return out


@pytest.mark.parametrize("kind", ["regression", "four classes", "best-first, max_samples"])
def test_paths_read_in_place_are_the_core_copys_bit_for_bit(kind):
    X, y = data(4)
    if kind == "regression":
        rf = RandomForestRegressor(6, max_depth=9, random_state=0).fit(X, y)
    elif kind == "four classes":
        rf = RandomForestClassifier(6, random_state=1).fit(X, np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75])))
    else:
        rf = RandomForestRegressor(6, max_leaf_nodes=30, max_samples=0.5, random_state=2).fit(X, y)
    in_place = forest_view(rf, in_place=True).core  # no copy kept yet: the arrays in place
    copy = forest_view(rf).core
    assert isinstance(copy, _core.Forest) and isinstance(in_place, _core.SklearnTrees)
    assert forest_view(rf, in_place=True).core is copy  # a copy kept for other readings is walked instead
    assert (in_place.n_features, in_place.n_trees) == (6, 6)
    groups = np.array([0, 0, 1, 2, 1, 2], dtype=np.int32)
    for got, expected in zip(path_readings(in_place, 2) + path_readings(in_place, 1, groups, 3),
                             path_readings(copy) + path_readings(copy, 1, groups, 3), strict=True):
        assert got.keys() == expected.keys()
        for key in expected:
            assert got[key].dtype == expected[key].dtype, key
            np.testing.assert_array_equal(got[key], expected[key], err_msg=key)
    # and through the public reading, which takes the in-place route for scikit-learn forests
    public = signed_paths(rf, 0.0, weight="samplesize")
    np.testing.assert_array_equal(public.weight, _core.signed_paths(
        copy, 0.0, _core.FirstOccurrence.after_filter, _core.LeafWeight.samplesize, _core.DecreaseScale.weighted,
        _core.NodeCounts.weighted)["weight"])


def test_paths_in_place_read_any_layout_and_refuse_malformed_trees():
    X, y = data()
    t = RandomForestRegressor(1, max_depth=6, random_state=0).fit(X, y).estimators_[0].tree_
    arrays = sklearn_node_arrays(t)
    base = path_readings(_core.SklearnTrees(6, 1, [arrays]))
    for variant in layouts(arrays):
        for got, expected in zip(path_readings(_core.SklearnTrees(6, 1, [variant])), base, strict=True):
            for key in expected:
                np.testing.assert_array_equal(got[key], expected[key], err_msg=key)

    def bad(edit, n_features=6):
        edited = {name: a.copy() for name, a in arrays.items()}
        edit(edited)
        trees = _core.SklearnTrees(n_features, 1, [arrays, edited])  # shapes pass; links are read later
        for reading in (_core.signed_paths, _core.distinct_signed_paths):
            with pytest.raises(ValueError, match="scikit-learn trees: node "):
                reading(trees, 0.0, _core.FirstOccurrence.after_filter, _core.LeafWeight.depth,
                        _core.DecreaseScale.weighted, _core.NodeCounts.weighted, 2)

    leaf = int(np.flatnonzero(t.children_left < 0)[0])
    bad(lambda a: a["children_left"].__setitem__(0, 0))  # the root its own child
    bad(lambda a: a["children_right"].__setitem__(leaf, leaf + 1))  # a leaf with one child
    bad(lambda a: a["children_left"].__setitem__(0, len(a["children_left"])))  # past the last node
    bad(lambda a: a["children_right"].__setitem__(0, a["children_left"][0]))  # both children one node
    bad(share_a_child)  # a node that is two nodes' child (and a subtree no split reaches)
    bad(lambda a: None, n_features=int(t.feature.max()))  # a feature past n_features

    def joined(a):  # every node's children both the next node: 2^depth visits of a 7-node array
        n = 7
        for name in a:
            a[name] = a[name][:n].copy()
        a["children_left"][:] = np.r_[np.arange(1, n), -1]
        a["children_right"][:] = a["children_left"]
        a["feature"][:] = np.r_[np.zeros(n - 1, dtype=np.intp), -2]
    bad(joined)
    with pytest.raises(ValueError, match="has no value"):
        _core.SklearnTrees(6, 1, [without(arrays, "value")])
    with pytest.raises(ValueError, match="length"):
        _core.SklearnTrees(6, 1, [shortened(arrays, "children_left")])
    with pytest.raises(ValueError, match="shapes"):
        _core.SklearnTrees(6, 2, [arrays])  # a regression tree holds one value per node


def test_paths_in_place_keep_the_code_budget():
    # Without node depths the cheap bound is loose, so budgets between the true count and it are
    # decided by the counting walk: the reading is refused exactly when its codes exceed max_codes.
    X, y = data()
    rf = RandomForestRegressor(4, random_state=0).fit(X, y)
    in_place = forest_view(rf, in_place=True).core
    args = (in_place, 0.0, _core.FirstOccurrence.every, _core.LeafWeight.depth, _core.DecreaseScale.weighted,
            _core.NodeCounts.weighted, 1, None, 0)
    codes = len(_core.signed_paths(*args)["codes"])
    assert len(_core.signed_paths(*args, codes)["codes"]) == codes
    assert len(_core.distinct_signed_paths(*args, codes)[1]) <= codes
    for reading in (_core.signed_paths, _core.distinct_signed_paths):
        with pytest.raises(_core.TooManyPathCodes, match=f"{codes} codes"):
            reading(*args, codes - 1)


@pytest.mark.parametrize("kind", ["regression", "binary, sample weights", "four classes, entropy"])
def test_out_of_bag_measures_in_place_are_the_copys_bit_for_bit(kind):
    X, y = data(5)
    weights = None
    if kind == "regression":
        rf, target = RandomForestRegressor(8, max_depth=7, random_state=0).fit(X, y), y
    elif kind.startswith("binary"):
        target = (y > np.median(y)).astype(int)
        weights = np.random.RandomState(1).uniform(0.2, 2.0, len(y))
        rf = RandomForestClassifier(8, random_state=1).fit(X, target, sample_weight=weights)
    else:
        target = np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75]))
        rf = RandomForestClassifier(8, criterion="entropy", random_state=2).fit(X, target)
    in_place, copy = forest_view(rf, len(y), in_place=True).core, forest_view(rf, len(y)).core
    assert isinstance(in_place, _core.SklearnTrees) and isinstance(copy, _core.Forest)
    np.testing.assert_array_equal(in_place.inbag, copy.inbag)
    Xf = X.astype(np.float32)  # scikit-learn compares float32(x) <= threshold
    labels = y if kind == "regression" else target.astype(np.int32)
    for measure in _core.OobMeasure.__members__.values():
        for n_threads in (1, 3):
            got = _core.oob_importance(in_place, Xf, labels, weights, measure, n_threads)
            expected = _core.oob_importance(copy, Xf, labels, weights, measure, 1)
            for a, b in zip(got, expected, strict=True):
                np.testing.assert_array_equal(a, b)
    # the public measures take the in-place route, and give what they gave through the copy
    got = mdi_oob(rf, X, target, sample_weight=weights, return_std=True)
    expected = _core.oob_importance(copy, Xf, labels, None if weights is None else weights / np.mean(weights),
                                    _core.OobMeasure.mdi_oob, 1)[:2]
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_out_of_bag_measures_in_place_refuse_malformed_trees():
    X, y = data()
    rf = RandomForestRegressor(3, max_depth=4, random_state=0).fit(X, y)
    trees = [sklearn_node_arrays(est.tree_) for est in rf.estimators_]
    bad = {name: a.copy() for name, a in trees[2].items()}
    bad["children_right"][0] = 0  # the root its own right child: routing would loop
    inbag = forest_view(rf, len(y)).core.inbag.ravel()
    forest = _core.SklearnTrees.with_inbag("squared_error", 6, 0, len(y), trees[:2] + [bad], inbag)
    with pytest.raises(ValueError, match="node 0: children must be later nodes"):
        _core.oob_importance(forest, X, y, None, _core.OobMeasure.mdi_oob, 2)
    with pytest.raises(ValueError, match="inbag"):
        _core.SklearnTrees.with_inbag("squared_error", 6, 0, len(y), trees, inbag[:-1])
    with pytest.raises(ValueError, match="inconsistent"):
        _core.SklearnTrees.with_inbag("gini", 6, 0, len(y), trees, inbag)
