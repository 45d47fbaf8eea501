"""TreeSHAP values and interaction values: against shap's TreeExplainer on scikit-learn forests,
against the brute-force Shapley formulas (reference_shap.py) on small trees, additivity, missing
values, sparse X, determinism across n_jobs, and input errors."""

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from reference import sk_trees
from reference_shap import shapley_interactions, shapley_values
from sklearn.ensemble import RandomForestClassifier as SkClassifier
from sklearn.ensemble import RandomForestRegressor as SkRegressor

import pyinterp
from pyinterp import _core
from pyinterp import importance as imp


def _data(n=200, p=6, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, p)
    y = X[:, 0] * X[:, 1] + np.sin(4 * X[:, 2]) + 0.1 * rng.randn(n)
    return X, y


def _fit(kind, estimator, max_depth, n_estimators=20, X=None, y=None):
    if X is None:
        X, y = _data()
    if kind == "classification":
        y = np.digitize(y, np.quantile(y, [0.4, 0.7]))
    return estimator(n_estimators=n_estimators, max_depth=max_depth, random_state=0).fit(X, y), X


def _predict(forest, X):
    return forest.predict_proba(X) if hasattr(forest, "classes_") else forest.predict(X)


def _shap_layout(values):
    """shap's output as (rows, ..., outputs): older versions return a list per class."""
    return np.stack(values, axis=-1) if isinstance(values, list) else np.asarray(values)


@pytest.mark.parametrize("kind", ["regression", "classification"])
@pytest.mark.parametrize("max_depth", [3, None])
def test_values_equal_shap(kind, max_depth):
    shap = pytest.importorskip("shap")
    estimator = SkRegressor if kind == "regression" else SkClassifier
    forest, X = _fit(kind, estimator, max_depth)
    rows = X[:60]
    values, expected = imp.shap_values(forest, rows)
    explainer = shap.TreeExplainer(forest)
    reference = _shap_layout(explainer.shap_values(rows, check_additivity=False))
    assert values.shape == reference.shape
    np.testing.assert_allclose(values, reference, rtol=0, atol=1e-9)
    np.testing.assert_allclose(expected, explainer.expected_value, rtol=0, atol=1e-9)
    np.testing.assert_allclose(values.sum(axis=1) + expected, _predict(forest, rows), rtol=0, atol=1e-10)


@pytest.mark.parametrize("kind", ["regression", "classification"])
@pytest.mark.parametrize("max_depth", [3, None])
def test_interaction_values_equal_shap(kind, max_depth):
    shap = pytest.importorskip("shap")
    estimator = SkRegressor if kind == "regression" else SkClassifier
    forest, X = _fit(kind, estimator, max_depth, n_estimators=5)
    rows = X[:8]
    values = imp.shap_interaction_values(forest, rows)
    reference = _shap_layout(shap.TreeExplainer(forest).shap_interaction_values(rows))
    assert values.shape == reference.shape
    np.testing.assert_allclose(values, reference, rtol=0, atol=1e-9)
    np.testing.assert_allclose(values.sum(axis=2), imp.shap_values(forest, rows)[0], rtol=0, atol=1e-10)


def _brute_force_cases():
    X, y = _data(n=120, p=5, seed=3)
    Xn = X.copy()
    Xn[np.random.RandomState(4).rand(*X.shape) < 0.15] = np.nan  # routed by missing_go_to_left
    return [
        ("regression", pyinterp.RandomForestRegressor, X, y, X),
        ("classification", pyinterp.RandomForestClassifier, X, y, X),
        ("regression", pyinterp.RandomForestRegressor, Xn, y, Xn),
        ("regression", SkRegressor, X, y, X),
    ]


@pytest.mark.parametrize("case", range(4))
def test_equal_brute_force_shapley(case):
    kind, estimator, X, y, rows = _brute_force_cases()[case]
    forest, _ = _fit(kind, estimator, max_depth=4, n_estimators=3, X=X, y=y)
    p = X.shape[1]
    n_values = len(forest.classes_) if kind == "classification" else 1
    trees = sk_trees(forest, n_values) if estimator is SkRegressor else forest.trees_
    rows = rows[:6]
    values, expected = imp.shap_values(forest, rows)
    interactions = imp.shap_interaction_values(forest, rows)
    for i, x in enumerate(rows):
        phi, empty = shapley_values(trees, x, p)
        index = shapley_interactions(trees, x, p)
        if n_values == 1:
            phi, empty, index = phi[:, 0], empty[0], index[..., 0]
        np.testing.assert_allclose(values[i], phi, rtol=0, atol=1e-12)
        np.testing.assert_allclose(expected, empty, rtol=0, atol=1e-12)
        np.testing.assert_allclose(interactions[i], index, rtol=0, atol=1e-12)
    np.testing.assert_allclose(values.sum(axis=1) + expected, _predict(forest, rows), rtol=0, atol=1e-10)


@pytest.mark.parametrize("kind", ["regression", "classification"])
def test_deep_trees_in_batched_walks_equal_brute_force(kind):
    # fully grown trees on 9 features: paths repeat features (merged elements) and the rule is sized
    # by the widest path's distinct features, not the depth; 11 rows walk as 8, 2 and 1
    X, y = _data(n=160, p=9, seed=11)
    forest, _ = _fit(kind, pyinterp.RandomForestRegressor if kind == "regression" else pyinterp.RandomForestClassifier,
                     max_depth=None, n_estimators=2, X=X, y=y)
    assert max(tree.max_depth for tree in forest.trees_) > X.shape[1]
    n_values = len(forest.classes_) if kind == "classification" else 1
    rows = X[:11]
    values, _ = imp.shap_values(forest, rows, algorithm="walk")
    interactions = imp.shap_interaction_values(forest, rows)
    for i, x in enumerate(rows):
        phi, _ = shapley_values(forest.trees_, x, X.shape[1])
        index = shapley_interactions(forest.trees_, x, X.shape[1])
        if n_values == 1:
            phi, index = phi[:, 0], index[..., 0]
        np.testing.assert_allclose(values[i], phi, rtol=0, atol=1e-12)
        np.testing.assert_allclose(interactions[i], index, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(values[i], imp.shap_values(forest, rows[i:i + 1], algorithm="walk")[0][0])
        np.testing.assert_array_equal(interactions[i], imp.shap_interaction_values(forest, rows[i:i + 1])[0])


def test_sparse_and_narrow_dtypes_equal_dense():
    rng = np.random.RandomState(5)
    X = (rng.rand(150, 6) < 0.4) * rng.randint(1, 5, size=(150, 6))
    y = X[:, 0] * X[:, 1] + X[:, 2] + rng.rand(150)
    forest = pyinterp.RandomForestRegressor(n_estimators=10, random_state=0).fit(X.astype(float), y)
    dense, expected = imp.shap_values(forest, X.astype(float))
    for other in (sp.csr_matrix(X.astype(float)), sp.csc_matrix(X.astype(float)), X.astype(np.int8)):
        values, e = imp.shap_values(forest, other)
        np.testing.assert_array_equal(values, dense)
        assert e == expected
    np.testing.assert_array_equal(
        imp.shap_interaction_values(forest, sp.csr_matrix(X[:5].astype(float))),
        imp.shap_interaction_values(forest, X[:5].astype(float)),
    )


@pytest.mark.parametrize("kind", ["regression", "classification"])
def test_identical_for_any_n_jobs(kind):
    estimator = pyinterp.RandomForestRegressor if kind == "regression" else pyinterp.RandomForestClassifier
    forest, X = _fit(kind, estimator, max_depth=None, n_estimators=8)
    rows = X[:70]
    one, e1 = imp.shap_values(forest, rows, n_jobs=1)
    for n_jobs in (2, 3, -1):
        many, e2 = imp.shap_values(forest, rows, n_jobs=n_jobs)
        np.testing.assert_array_equal(many, one)
        np.testing.assert_array_equal(e2, e1)
    np.testing.assert_array_equal(
        imp.shap_interaction_values(forest, rows[:5], n_jobs=3), imp.shap_interaction_values(forest, rows[:5], n_jobs=1)
    )
    light = imp.shap_interaction_importance(forest, rows, n_jobs=1)
    light3 = imp.shap_interaction_importance(forest, rows, n_jobs=3)
    for a, b in zip(np.atleast_1d(light), np.atleast_1d(light3)):
        np.testing.assert_array_equal(a.toarray(), b.toarray())


@pytest.mark.parametrize("kind", ["regression", "classification"])
def test_interaction_importance_is_mean_abs(kind):
    estimator = pyinterp.RandomForestRegressor if kind == "regression" else pyinterp.RandomForestClassifier
    forest, X = _fit(kind, estimator, max_depth=5, n_estimators=4)
    rows = X[:70]  # more than one block of rows
    full = np.abs(imp.shap_interaction_values(forest, rows)).mean(axis=0)
    light = imp.shap_interaction_importance(forest, rows)
    if kind == "regression":
        assert sp.issparse(light) and light.shape == (6, 6)
        np.testing.assert_allclose(light.toarray(), full, rtol=1e-12, atol=1e-15)
    else:
        assert len(light) == 3
        for c, matrix in enumerate(light):
            np.testing.assert_allclose(matrix.toarray(), full[..., c], rtol=1e-12, atol=1e-15)


def test_bad_inputs():
    forest, X = _fit("regression", pyinterp.RandomForestRegressor, max_depth=3, n_estimators=3)
    for fn in (imp.shap_values, imp.shap_interaction_values, imp.shap_interaction_importance):
        with pytest.raises(ValueError, match="features"):
            fn(forest, X[:, :3])
        with pytest.raises(ValueError, match="X contains infinity"):
            fn(forest, np.where(X > 0.99, np.inf, X))
        with pytest.raises(TypeError, match="forest must be"):
            fn(object(), X)
        with pytest.raises(ValueError, match="n_jobs"):
            fn(forest, X, n_jobs="two")
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        imp.shap_values(pyinterp.RandomForestRegressor(), X)


def _interventional_case(kind, estimator, seed=7, p=6):
    X, y = _data(n=150, p=p, seed=seed)
    X[np.random.RandomState(seed).rand(*X.shape) < 0.1] = np.nan  # routed by missing_go_to_left
    forest, _ = _fit(kind, estimator, max_depth=5, n_estimators=3, X=X, y=y)
    return forest, X


@pytest.mark.parametrize("kind", ["regression", "classification"])
@pytest.mark.parametrize("estimator", [pyinterp.RandomForestRegressor, SkRegressor])
def test_interventional_equals_brute_force(kind, estimator):
    if kind == "classification":
        estimator = pyinterp.RandomForestClassifier if estimator is pyinterp.RandomForestRegressor else SkClassifier
    forest, X = _interventional_case(kind, estimator)
    if estimator in (SkRegressor, SkClassifier):
        X = np.nan_to_num(X, nan=0.5)  # scikit-learn's trees here were grown without missing values
    n_values = len(forest.classes_) if kind == "classification" else 1
    sklearn_forest = estimator in (SkRegressor, SkClassifier)
    trees = sk_trees(forest, n_values) if sklearn_forest else forest.trees_
    rows, background = X[:4], X[100:112]
    if sklearn_forest:  # scikit-learn compares float32(x) with its thresholds
        rows, background = rows.astype(np.float32).astype(float), background.astype(np.float32).astype(float)
    values, expected = imp.shap_values(forest, rows, background=background)
    for i, x in enumerate(rows):
        phi, empty = shapley_values(trees, x, X.shape[1], background=background)
        if n_values == 1:
            phi, empty = phi[:, 0], empty[0]
        np.testing.assert_allclose(values[i], phi, rtol=0, atol=1e-13)
        np.testing.assert_allclose(expected, empty, rtol=0, atol=1e-14)
    np.testing.assert_allclose(values.sum(axis=1) + expected, _predict(forest, rows), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["regression", "classification"])
@pytest.mark.parametrize("max_depth", [3, None])
def test_interventional_equals_shap(kind, max_depth):
    # shap's interventional code keeps node values, thresholds and path weights in float32
    # (tree_shap.h: struct Node, pos_lst, memoized_weights), so it agrees to ~1e-8 only; the exact
    # reference is the brute force above.
    shap = pytest.importorskip("shap")
    estimator = SkRegressor if kind == "regression" else SkClassifier
    forest, X = _fit(kind, estimator, max_depth)
    rows, background = X[:30], X[100:140]
    values, expected = imp.shap_values(forest, rows, background=background)
    explainer = shap.TreeExplainer(forest, data=background, feature_perturbation="interventional")
    reference = _shap_layout(explainer.shap_values(rows, check_additivity=False))
    assert values.shape == reference.shape
    np.testing.assert_allclose(values, reference, rtol=0, atol=1e-6)
    np.testing.assert_allclose(expected, explainer.expected_value, rtol=0, atol=1e-12)
    np.testing.assert_allclose(values.sum(axis=1) + expected, _predict(forest, rows), rtol=0, atol=1e-12)


def test_interventional_identical_for_any_n_jobs_and_input_form():
    forest, X = _interventional_case("regression", pyinterp.RandomForestRegressor)
    X = np.nan_to_num(X)
    one, e1 = imp.shap_values(forest, X[:40], background=X[60:90], n_jobs=1)
    for n_jobs in (2, 3):
        many, e2 = imp.shap_values(forest, X[:40], background=X[60:90], n_jobs=n_jobs)
        np.testing.assert_array_equal(many, one)
        assert e2 == e1
    sparse_values, e3 = imp.shap_values(forest, sp.csr_matrix(X[:40]), background=sp.csc_matrix(X[60:90]))
    np.testing.assert_array_equal(sparse_values, one)
    assert e3 == e1


def _top_pairs(full, k):
    """The k entries [a, b], a < b, of a (p, p) matrix with the largest |value|, ties by (a, b)."""
    a, b = np.triu_indices(full.shape[0], 1)
    order = np.lexsort((b, a, -np.abs(full[a, b])))[:k]
    return np.stack([a[order], b[order]], axis=1), full[a[order], b[order]]


@pytest.mark.parametrize("kind", ["regression", "classification"])
@pytest.mark.parametrize("k", [1, 5, 15])
def test_top_interactions_equal_the_full_tensor(kind, k):
    estimator = pyinterp.RandomForestRegressor if kind == "regression" else pyinterp.RandomForestClassifier
    X, y = _data(n=200, p=8)
    # max_depth 2: a row has few nonzero pairs, so k = 15 reaches the zero-valued fill
    forest, _ = _fit(kind, estimator, max_depth=2 if k == 15 else 5, n_estimators=4, X=X, y=y)
    rows = X[:20]
    full = imp.shap_interaction_values(forest, rows)
    pairs, values = imp.shap_top_interactions(forest, rows, k=k)
    if kind == "regression":
        full, pairs, values = full[..., None], pairs[..., None], values[..., None]
    assert pairs.shape == (20, k, 2, full.shape[-1]) and values.shape == (20, k, full.shape[-1])
    for i in range(len(rows)):
        for c in range(full.shape[-1]):
            want_pairs, want_values = _top_pairs(full[i, ..., c], k)
            np.testing.assert_array_equal(pairs[i, ..., c], want_pairs)
            np.testing.assert_array_equal(values[i, :, c], want_values)
    if k == 15:
        assert (values == 0).any()  # the fill was exercised
    np.testing.assert_array_equal(imp.shap_top_interactions(forest, rows, k=k, n_jobs=3)[1], values.squeeze(-1)
                                  if kind == "regression" else values)


def test_interventional_and_top_k_bad_inputs():
    forest, X = _fit("regression", pyinterp.RandomForestRegressor, max_depth=3, n_estimators=3)
    with pytest.raises(ValueError, match="background has 3 features"):
        imp.shap_values(forest, X, background=X[:, :3])
    with pytest.raises(ValueError, match="background: Found array with 0 sample"):
        imp.shap_values(forest, X, background=X[:0])
    with pytest.raises(ValueError, match="background contains infinity"):
        imp.shap_values(forest, X, background=np.where(X > 0.99, np.inf, X))
    with pytest.raises(ValueError, match="'k'"):
        imp.shap_top_interactions(forest, X, k=0)
    with pytest.raises(ValueError, match=r"k must be at most p \(p - 1\) / 2 = 15"):
        imp.shap_top_interactions(forest, X, k=16)


def test_refitted_sklearn_forest_is_read_again():
    # the structure-only import of a scikit-learn forest is kept per forest object while its trees
    # are the same objects; a refit replaces them
    forest, X = _fit("regression", SkRegressor, max_depth=4, n_estimators=5)
    first, e1 = imp.shap_values(forest, X[:10])
    forest.set_params(max_depth=2).fit(X, X[:, 0])
    again, e2 = imp.shap_values(forest, X[:10])
    np.testing.assert_allclose(again.sum(axis=1) + e2, forest.predict(X[:10]), rtol=0, atol=1e-12)
    assert not np.allclose(again, first)


@pytest.mark.parametrize("max_depth", [3, None])
def test_rows_sharing_walks_equal_rows_alone(max_depth):
    # rows that take the same branches of a shallow tree share its walks; one row at a time shares
    # nothing: the results are bit-identical
    X, y = _data(n=300, p=6)
    forest, _ = _fit("classification", pyinterp.RandomForestClassifier, max_depth, n_estimators=6, X=X, y=y)
    rows = X[:40]
    values = imp.shap_values(forest, rows, algorithm="walk")[0]
    light = imp.shap_interaction_importance(forest, rows)
    pairs, top = imp.shap_top_interactions(forest, rows, k=6)
    alone = np.concatenate([imp.shap_values(forest, rows[i:i + 1], algorithm="walk")[0] for i in range(len(rows))])
    np.testing.assert_array_equal(values, alone)
    # values group rows over chunks of up to 1024: rows on either side of a chunk's edge
    many = np.random.RandomState(1).rand(1100, X.shape[1])
    chunked = imp.shap_values(forest, many, algorithm="walk")[0]
    for i in (0, 1, 1023, 1024, 1099):
        np.testing.assert_array_equal(chunked[i], imp.shap_values(forest, many[i:i + 1], algorithm="walk")[0][0])
    # read from leaf pattern tables instead (tiles of 8 rows, 128 rows a task): the same values to
    # rounding, bit-identical row by row
    tables = imp.shap_values(forest, many, algorithm="patterns")[0]
    np.testing.assert_allclose(tables, chunked, rtol=0, atol=1e-15)
    for i in (0, 7, 8, 127, 128, 1099):
        np.testing.assert_array_equal(tables[i], imp.shap_values(forest, many[i:i + 1], algorithm="patterns")[0][0])
    full = np.concatenate([imp.shap_interaction_values(forest, rows[i:i + 1]) for i in range(len(rows))])
    np.testing.assert_array_equal(imp.shap_interaction_values(forest, rows), full)
    for c, matrix in enumerate(light):
        np.testing.assert_allclose(matrix.toarray(), np.abs(full[..., c]).mean(axis=0), rtol=1e-13, atol=1e-16)
    for i in range(len(rows)):
        for c in range(full.shape[-1]):
            want_pairs, want_values = _top_pairs(full[i, ..., c], 6)
            np.testing.assert_array_equal(pairs[i, ..., c], want_pairs)
            np.testing.assert_array_equal(top[i, :, c], want_values)


def test_interaction_tensor_beyond_memory_is_refused_by_name():
    # n x p x p values past this machine's memory: a clear error naming X and the light forms,
    # before anything is allocated
    from pyinterp._validation import physical_memory

    p = 1000
    X, y = np.random.RandomState(0).rand(40, p), np.arange(40.0)
    forest = SkRegressor(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    rows = np.zeros((physical_memory() // (8 * p * p) + 1, p))
    from pyinterp import OutputTooLarge

    with pytest.raises(OutputTooLarge, match=rf"^X's {len(rows)} rows x {p} x {p} features' interaction values take "
                                             r"[\d.]+ GiB, more than .*; explain fewer rows .*shap_interaction_importance"):
        imp.shap_interaction_values(forest, rows)
    assert imp.shap_interaction_values(forest, rows[:2]).shape == (2, p, p)


def _fresh(forest):
    """The same trees in a new core forest, which keeps nothing from earlier calls."""
    return pickle.loads(pickle.dumps(forest))


def test_what_calls_keep_with_the_forest_changes_no_value():
    # a call keeps each tree's summary and leaf tables with the forest (Forest::derived); every later
    # call, of any kind and row count, equals the same call on a copy that keeps nothing
    X, y = _data(n=400, p=8)
    forest, _ = _fit("classification", pyinterp.RandomForestClassifier, 4, n_estimators=12, X=X, y=y)
    assert _core.shap_kept_table_bytes(forest._forest) == 0
    background = X[300:340]
    calls = [
        lambda f, rows: imp.shap_values(f, rows, algorithm="patterns")[0],
        lambda f, rows: imp.banzhaf_values(f, rows)[0],
        lambda f, rows: imp.shap_values(f, rows)[0],
        lambda f, rows: imp.shap_values(f, rows, algorithm="walk")[0],
        lambda f, rows: imp.shap_values(f, rows, background=background)[0],
        lambda f, rows: imp.shap_interaction_values(f, rows),
        lambda f, rows: imp.shap_values(f, rows, algorithm="patterns")[0],
        lambda f, rows: imp.banzhaf_values(f, rows, algorithm="patterns")[0],
    ]
    for rows in (X[:1], X[:100], X[5:7]):
        for call in calls:
            np.testing.assert_array_equal(call(forest, rows), call(_fresh(forest), rows))
    kept = _core.shap_kept_table_bytes(forest._forest)
    assert 0 < kept <= 32 << 20
    assert _core.shap_kept_table_bytes(_fresh(forest)._forest) == 0


def test_kept_tables_stop_at_their_budget():
    # 30 trees of 12 classes at depth 10 need more than 32 MB of tables: those past it are made
    # again each call, with the same values
    rng = np.random.RandomState(0)
    X, y = rng.rand(3000, 10), rng.randint(0, 12, 3000)
    forest = pyinterp.RandomForestClassifier(n_estimators=30, max_depth=10, random_state=0).fit(X, y)
    rows = X[:20]
    first = imp.shap_values(forest, rows, algorithm="patterns")[0]
    kept = _core.shap_kept_table_bytes(forest._forest)
    assert 16 << 20 < kept <= 32 << 20
    np.testing.assert_array_equal(imp.shap_values(forest, rows, algorithm="patterns")[0], first)
    assert _core.shap_kept_table_bytes(forest._forest) == kept
    np.testing.assert_array_equal(imp.shap_values(_fresh(forest), rows, algorithm="patterns")[0], first)


def test_calls_from_several_threads_share_what_is_kept():
    # Python threads calling on one forest at once (the core releases the GIL): the first to need a
    # tree's tables makes them, the others wait and read them
    X, y = _data(n=400, p=8)
    forest, _ = _fit("regression", pyinterp.RandomForestRegressor, 5, n_estimators=16, X=X, y=y)
    want = imp.shap_values(_fresh(forest), X[:50])[0]
    want_banzhaf = imp.banzhaf_values(_fresh(forest), X[:50])[0]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: (imp.banzhaf_values if i % 2 else imp.shap_values)(forest, X[:50])[0], range(8)))
    for i, values in enumerate(got):
        np.testing.assert_array_equal(values, want_banzhaf if i % 2 else want)
