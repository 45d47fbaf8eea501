"""Importing scikit-learn forests in one core call (Forest.from_sklearn_trees) gives the trees the
per-tree conversion gives (forest/view.py::sklearn_tree_arrays, the reference) and scikit-learn's
predictions."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from pyinterp import _core
from pyinterp.forest.view import forest_view, sklearn_tree_arrays


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


def test_one_call_import_refuses_malformed_trees():
    X, y = data()
    t = RandomForestRegressor(2, max_depth=3, random_state=0).fit(X, y).estimators_[0].tree_
    arrays = [t.children_left, t.children_right, t.feature, t.threshold, t.missing_go_to_left, t.n_node_samples,
              t.weighted_n_node_samples, t.impurity, t.value[:, 0, :]]
    inbag = np.zeros(1, dtype=np.uint32)
    assert _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [tuple(arrays)], inbag).n_trees == 1
    with pytest.raises(ValueError, match="9 arrays"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [tuple(arrays[:8])], inbag)
    backwards = arrays.copy()
    backwards[0] = t.children_left.copy()
    backwards[0][0] = 0  # the root its own child: traversal would loop
    with pytest.raises(ValueError, match="node links"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [tuple(backwards)], inbag)
    with pytest.raises(ValueError, match="node links"):  # one bad tree among several, built on threads
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [tuple(arrays)] * 3 + [tuple(backwards)],
                                        np.zeros(4, np.uint32), n_threads=2)
    with pytest.raises(ValueError, match="node links"):
        _core.Forest.from_sklearn_trees("squared_error", int(t.feature.max()), 0, 1, [tuple(arrays)], inbag)  # too few features
    with pytest.raises(ValueError, match="length"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [tuple([arrays[0][:-1]] + arrays[1:])], inbag)
    with pytest.raises(ValueError, match="inbag"):
        _core.Forest.from_sklearn_trees("squared_error", 6, 0, 1, [tuple(arrays)], np.zeros(3, dtype=np.uint32))
