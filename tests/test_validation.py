"""Bad input gets a clear exception naming the problem; the caller's arrays are never modified."""

import numpy as np
import pytest

from pyinterp import RandomForestClassifier, RandomForestRegressor, _core


@pytest.fixture
def Xy():
    rng = np.random.RandomState(0)
    return rng.rand(40, 3), rng.rand(40)


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_X(Xy, value):
    clean, y = Xy
    X = clean.copy()
    X[3, 1] = value
    with pytest.raises(ValueError, match="X contains infinity"):
        RandomForestRegressor(n_estimators=2).fit(X, y)
    forest = RandomForestRegressor(n_estimators=2).fit(clean, y)
    with pytest.raises(ValueError, match="X contains infinity"):
        forest.predict(X)


def test_non_finite_y(Xy):
    X, y = Xy
    y[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomForestRegressor(n_estimators=2).fit(X, y)


@pytest.mark.parametrize("X, y, match", [
    (np.ones((5, 2)), np.ones(4), "inconsistent numbers of samples"),
    (np.ones(5), np.ones(5), "2D array"),
    (np.ones((0, 3)), np.ones(0), "0 sample"),
    (np.ones((5, 0)), np.ones(5), "0 feature"),
    (np.array([["a", "b"], ["c", "d"]]), np.ones(2), "could not convert|string"),
])
def test_bad_shapes_and_types(X, y, match):
    with pytest.raises(ValueError, match=match):
        RandomForestRegressor(n_estimators=2).fit(X, y)


def test_wrong_width_at_predict(Xy):
    X, y = Xy
    forest = RandomForestRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="3 features"):
        forest.predict(X[:, :2])


@pytest.mark.parametrize("weights, match", [
    (-np.ones(40), "non-negative"),
    (np.ones(39), "one entry per row"),
    (np.zeros(40), "zero everywhere"),
    (np.full(40, np.nan), "NaN"),
])
def test_bad_sample_weight(Xy, weights, match):
    X, y = Xy
    with pytest.raises(ValueError, match=match):
        RandomForestRegressor(n_estimators=2).fit(X, y, sample_weight=weights)


@pytest.mark.parametrize("params, error, match", [
    (dict(n_estimators=0), ValueError, "n_estimators"),
    (dict(n_estimators=2.5), TypeError, "n_estimators"),
    (dict(max_features=0), ValueError, "max_features"),
    (dict(max_features=4), ValueError, "max_features"),
    (dict(max_features=1.5), ValueError, "max_features"),
    (dict(max_features="auto"), ValueError, "max_features"),
    (dict(min_samples_split=1), ValueError, "min_samples_split"),
    (dict(min_samples_leaf=0), ValueError, "min_samples_leaf"),
    (dict(min_samples_leaf=0.7), ValueError, "min_samples_leaf"),
    (dict(max_depth=0), ValueError, "max_depth"),
    (dict(min_impurity_decrease=-1.0), ValueError, "min_impurity_decrease"),
    (dict(max_samples=0), ValueError, "max_samples"),
    (dict(max_samples=41, bootstrap=False), ValueError, "max_samples"),
    (dict(max_samples=1.2, bootstrap=False), ValueError, "max_samples"),
    (dict(max_samples=2**31), ValueError, "max_samples"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
    (dict(criterion="gini"), ValueError, "criterion"),
    (dict(bootstrap="yes"), TypeError, "bootstrap"),
    (dict(random_state=-1), ValueError, "random_state|Seed"),
])
def test_invalid_hyperparameters(Xy, params, error, match):
    X, y = Xy
    with pytest.raises(error, match=match):
        RandomForestRegressor(n_estimators=2).set_params(**params).fit(X, y)


def test_classifier_rejects_continuous_targets_and_bad_class_weight(Xy):
    X, y = Xy
    with pytest.raises(ValueError, match="Unknown label type|continuous"):
        RandomForestClassifier(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        RandomForestClassifier(n_estimators=2, class_weight="equal").fit(X, y > 0.5)


def test_unfitted_use_raises(Xy):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        RandomForestRegressor().predict(Xy[0])
    with pytest.raises(NotFittedError):
        RandomForestRegressor().trees_


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8, bool])
@pytest.mark.parametrize("order", ["C", "F"])
def test_dtypes_orders_and_read_only_inputs_are_accepted_and_untouched(dtype, order):
    rng = np.random.RandomState(0)
    X = np.asarray(rng.rand(60, 4) * 5, dtype=dtype, order=order)
    y = rng.rand(60)
    w = rng.uniform(0.5, 1.5, 60)
    fw = np.array([1.0, 2.0, 0.5, 1.0])
    originals = [a.copy() for a in (X, y, w, fw)]
    for a in (X, y, w, fw):
        a.setflags(write=False)
    forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y, sample_weight=w, feature_weights=fw)
    forest.predict(X)
    forest.apply(X)
    for a, original in zip((X, y, w, fw), originals):
        np.testing.assert_array_equal(a, original)
    reference = RandomForestRegressor(n_estimators=5, random_state=0).fit(
        np.ascontiguousarray(X, dtype=np.float64), y, sample_weight=w, feature_weights=fw)
    np.testing.assert_array_equal(forest.predict(X), reference.predict(X.astype(np.float64)))


def test_strided_views_equal_copies():
    rng = np.random.RandomState(0)
    big = rng.rand(200, 10)
    view = big[::2, 1::3]
    y = rng.rand(100)
    a = RandomForestRegressor(n_estimators=5, random_state=0).fit(view, y)
    b = RandomForestRegressor(n_estimators=5, random_state=0).fit(np.ascontiguousarray(view), y)
    np.testing.assert_array_equal(a.predict(view), b.predict(view))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_core_refuses_infinite_values_itself(dtype, bad):
    """The engine checks X too (the estimators validate first; direct callers of the core may not)."""
    X = np.random.RandomState(0).rand(40, 5).astype(dtype)
    X[17, 3] = bad
    params = RandomForestRegressor(n_estimators=2)._params(40, 5, 5)
    with pytest.raises(ValueError, match=r"X contains infinity \(column 3\)"):
        _core.fit_forest(X, np.ones(40), None, 0, None, None, params)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.bool_])
def test_plain_rows_skip_sklearns_checks_only_where_they_would_return_X_silently(Xy, dtype):
    """validate_data hands a plain ndarray of rows straight back (its checks cost 0.6 ms, a small
    TreeSHAP call's whole core time) only where scikit-learn's validate_data returns that very array
    without a warning; every other input still goes through scikit-learn, with its errors."""
    import warnings

    from sklearn.utils.validation import validate_data as sk_validate_data

    from pyinterp._validation import FOREST_X, _plain_rows, validate_data

    X, y = Xy
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    rows = (X[:5] * 3).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sk_validate_data(forest, rows, reset=False, **FOREST_X) is rows
    assert _plain_rows(forest, rows, "no_validation", False, dict(FOREST_X))
    assert validate_data(forest, rows, reset=False, **FOREST_X) is rows
    # not taken: another width, infinity, a fit, other checks, names seen at fit, a subclass of ndarray
    assert not _plain_rows(forest, rows[:, :2], "no_validation", False, dict(FOREST_X))
    assert not _plain_rows(forest, rows, "no_validation", True, dict(FOREST_X))
    assert not _plain_rows(forest, rows, "no_validation", False, {**FOREST_X, "ensure_all_finite": True})
    assert not _plain_rows(forest, np.ma.MaskedArray(rows), "no_validation", False, dict(FOREST_X))
    if rows.dtype.kind == "f":
        with_inf = rows.copy()
        with_inf[1, 2] = np.inf
        assert not _plain_rows(forest, with_inf, "no_validation", False, dict(FOREST_X))
        with pytest.raises(ValueError, match="X contains infinity"):
            forest.predict(with_inf)
        with_nan = rows.copy()
        with_nan[0, 0] = np.nan
        assert _plain_rows(forest, with_nan, "no_validation", False, dict(FOREST_X))
    pd = pytest.importorskip("pandas")
    named = RandomForestRegressor(n_estimators=2, random_state=0).fit(pd.DataFrame(X, columns=list("abc")), y)
    assert not _plain_rows(named, rows, "no_validation", False, dict(FOREST_X))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        named.predict(rows)
