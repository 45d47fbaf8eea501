"""pyinterp.importance against definitions computed node by node, and its invariants."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier as SkClassifier
from sklearn.ensemble import RandomForestRegressor as SkRegressor
from sklearn.ensemble._forest import _generate_unsampled_indices

import pyinterp
from pyinterp import importance as imp
from reference import mdi_oob_per_tree, naive_oob_per_tree, one_hot, saabas, sk_trees, ufi_per_tree


@pytest.fixture(params=["regression", "classification", "regression with NaN", "classification with NaN"])
def task(request, regression_data, classification_data):
    """The data sets, also with 10% of X missing: every row then follows its trees' recorded
    missing-value directions, in the engine and in the node-by-node references alike."""
    X, y = regression_data if request.param.startswith("regression") else classification_data
    if request.param.endswith("NaN"):
        X = np.where(np.random.RandomState(7).rand(*X.shape) < 0.1, np.nan, X)
    if request.param.startswith("regression"):
        return X, y, pyinterp.RandomForestRegressor, 1
    return X, y, pyinterp.RandomForestClassifier, 3


def test_contributions_sum_to_prediction(task):
    X, y, Forest, n_values = task
    f = Forest(n_estimators=20, random_state=0).fit(X, y)
    C, bias = imp.contributions(f, X)
    pred = f.predict(X) if n_values == 1 else f.predict_proba(X)
    assert C.shape == ((len(X), X.shape[1]) if n_values == 1 else (len(X), X.shape[1], n_values))
    np.testing.assert_allclose(C.sum(axis=1) + bias, pred, rtol=0, atol=1e-12)


def test_contributions_match_path_walk(task):
    X, y, Forest, n_values = task
    f = Forest(n_estimators=5, random_state=1, max_depth=6).fit(X, y)
    C, _ = imp.contributions(f, X[:40])
    expected = np.mean([[saabas(t, x, X.shape[1]) for x in X[:40]] for t in f.trees_], axis=0)
    np.testing.assert_allclose(C.reshape(expected.shape), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_proposition_8_2_1_inbag_mdi_from_contributions(task, seed, weighted):
    """MDI(k, T) = sum_i c_i w_i f_{T,k}(x_i) . y_i / sum_i c_i w_i over the in-bag rows."""
    X, y, Forest, n_values = task
    w = np.random.RandomState(seed).uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    # Subsampled without replacement, so the weights weigh the tree's rows (with bootstrap they
    # would only choose them).
    f = Forest(n_estimators=1, random_state=seed, min_samples_leaf=3, bootstrap=False,
               max_samples=0.7).fit(X, y, sample_weight=w if weighted else None)
    C, _ = imp.contributions(f, X)
    C = C.reshape(len(X), X.shape[1], n_values)
    Y = one_hot(np.searchsorted(f.classes_, y) if n_values > 1 else y, n_values)
    mass = f.inbag_counts_[0] * w
    from_contributions = np.einsum("i,ikv,iv->k", mass, C, Y) / mass.sum()
    np.testing.assert_allclose(from_contributions, imp.mdi(f, normalize=False), rtol=0, atol=1e-10)


def test_mdi_equals_sklearn_feature_importances(regression_data, classification_data):
    for (X, y), Sk in ((regression_data, SkRegressor), (classification_data, SkClassifier)):
        s = Sk(n_estimators=25, random_state=0, min_samples_leaf=2).fit(X, y)
        np.testing.assert_allclose(imp.mdi(s), s.feature_importances_, rtol=0, atol=1e-12)


def test_mdi_normalised_equals_forest_attribute_and_raw_is_tree_mean(task):
    X, y, Forest, _ = task
    f = Forest(n_estimators=10, random_state=0).fit(X, y)
    np.testing.assert_array_equal(imp.mdi(f), f.feature_importances_)
    raw = np.mean([np.bincount(t.feature[t.left >= 0], t.impurity_decrease[t.left >= 0], X.shape[1]) for t in f.trees_], axis=0)
    np.testing.assert_allclose(imp.mdi(f, normalize=False), raw, rtol=0, atol=1e-15)


def reference_oob(trees, inbag, X, Y, per_tree):
    scores = [per_tree(t, X, Y, inbag[k] == 0) for k, t in enumerate(trees) if np.any(inbag[k] == 0)]
    scores = np.array(scores)
    return scores.mean(axis=0), scores.std(axis=0, ddof=1) / np.sqrt(len(scores))


def test_oob_measures_match_definitions_on_pyinterp_forests(task):
    X, y, Forest, n_values = task
    f = Forest(n_estimators=12, random_state=3, min_samples_leaf=2).fit(X, y)
    Y = one_hot(np.searchsorted(f.classes_, y) if n_values > 1 else y, n_values)
    p = X.shape[1]
    variance = lambda rows: np.mean(np.sum(rows**2, axis=1)) - np.sum(rows.mean(axis=0) ** 2)  # noqa: E731
    gini = lambda rows: 1 - np.sum(rows.mean(axis=0) ** 2)  # noqa: E731
    cases = {
        imp.mdi_oob: lambda t, X, Y, oob: mdi_oob_per_tree(t, X, Y, oob, p),
        imp.naive_oob: lambda t, X, Y, oob: naive_oob_per_tree(t, X, Y, oob, p, gini if n_values > 1 else variance),
        imp.ufi: lambda t, X, Y, oob: ufi_per_tree(t, X, Y, oob, p),
    }
    for fn, per_tree in cases.items():
        mean, std = fn(f, X, y, return_std=True)
        ref_mean, ref_std = reference_oob(f.trees_, f.inbag_counts_, X, Y, per_tree)
        np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=1e-12, err_msg=fn.__name__)
        np.testing.assert_allclose(std, ref_std, rtol=1e-9, atol=1e-15, err_msg=fn.__name__)


def test_mdi_oob_on_sklearn_forest_uses_sklearn_oob_sets(task):
    X, y, _, n_values = task
    Sk = SkRegressor if n_values == 1 else SkClassifier
    s = Sk(n_estimators=10, random_state=0, min_samples_leaf=2).fit(X, y)
    trees = sk_trees(s, n_values)
    Y = one_hot(np.searchsorted(s.classes_, y) if n_values > 1 else y, n_values)
    inbag = np.ones((len(trees), len(X)), dtype=int)
    for k, e in enumerate(s.estimators_):
        extra = (None,) if "sample_weight" in inspect.signature(_generate_unsampled_indices).parameters else ()
        inbag[k, _generate_unsampled_indices(e.random_state, len(X), len(X), *extra)] = 0
    X32 = X.astype(np.float32)
    ref, _ = reference_oob(trees, inbag, X32, Y, lambda t, X, Y, oob: mdi_oob_per_tree(t, X, Y, oob, X.shape[1]))
    np.testing.assert_allclose(imp.mdi_oob(s, X, y), ref, rtol=0, atol=1e-12)


def test_oob_measures_are_identical_for_any_n_jobs(task):
    X, y, Forest, _ = task
    f = Forest(n_estimators=30, random_state=0).fit(X, y)
    for fn in (imp.mdi_oob, imp.naive_oob, imp.ufi):
        a = fn(f, X, y, return_std=True, n_jobs=1)
        for n_jobs in (2, 3, -1):
            b = fn(f, X, y, return_std=True, n_jobs=n_jobs)
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])
    a = imp.permutation_oob(f, X, y, n_repeats=2, random_state=5, n_jobs=1)
    np.testing.assert_array_equal(a, imp.permutation_oob(f, X, y, n_repeats=2, random_state=5, n_jobs=3))


def test_mdi_oob_debiases_noise_features_in_deep_trees():
    """Thesis Table 8.1 in small: in deep trees MDI credits the many-valued noise features, MDI-oob not."""
    rng = np.random.RandomState(0)
    n = 600
    X = np.column_stack([rng.randint(0, 2, n), rng.randint(0, 2, n)] + [rng.rand(n) for _ in range(8)])
    y = (rng.rand(n) < 0.3 + 0.4 * (X[:, 0] == 1)).astype(int)
    f = pyinterp.RandomForestClassifier(n_estimators=100, max_features=3, random_state=0).fit(X, y)
    m, oob = imp.mdi(f, normalize=False), imp.mdi_oob(f, X, y)
    assert np.argmax(oob) == 0
    # Under MDI the continuous noise features get about as much credit as the signal (ratio ~1
    # over seeds; which noise feature tops it depends on the seed), under MDI-oob a tenth.
    assert m[2:].mean() > 0.5 * m[0]
    assert oob[2:].max() < 0.25 * oob[0]


def test_permutation_oob_is_zero_for_unused_features_and_finds_signal(regression_data):
    X, y = regression_data
    X = np.column_stack([X, np.full(len(X), 3.0)])  # a constant column is never split on
    f = pyinterp.RandomForestRegressor(n_estimators=30, random_state=0).fit(X, y)
    mean, std = imp.permutation_oob(f, X, y, n_repeats=3, random_state=0, return_std=True)
    assert mean[-1] == 0.0 and std[-1] == 0.0
    assert set(np.argsort(mean)[-2:]) == {0, 1}


def test_permutation_oob_single_tree_matches_manual_shuffle_bounds(classification_data):
    """Misclassification increases lie in [-1, 1] and the mean over repeats is averaged correctly."""
    X, y = classification_data
    f = pyinterp.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    one = imp.permutation_oob(f, X, y, n_repeats=1, random_state=1)
    many = imp.permutation_oob(f, X, y, n_repeats=8, random_state=1)
    assert np.all(np.abs(one) <= 1) and np.all(np.abs(many) <= 1)
    assert not np.array_equal(one, many)


def brute_force_stump(x, y, w):
    """Best CART split on one feature by enumerating thresholds; returns (decrease, threshold)."""
    total = w.sum()
    mean = np.sum(w * y) / total
    var = np.sum(w * (y - mean) ** 2) / total
    best, best_t = -np.inf, None
    values = np.unique(x)
    for lo, hi in zip(values[:-1], values[1:]):
        left = x <= lo
        gain = var
        for side in (left, ~left):
            ws = w[side]
            m = np.sum(ws * y[side]) / ws.sum()
            gain -= ws.sum() / total * np.sum(ws * (y[side] - m) ** 2) / ws.sum()
        if gain > best:
            best, best_t = gain, lo / 2 + hi / 2
    return best, best_t


@pytest.mark.parametrize("weighted", [False, True])
def test_dstump_best_matches_brute_force(weighted):
    rng = np.random.RandomState(0)
    X = np.column_stack([rng.rand(80), rng.randint(0, 5, 80), rng.rand(80) ** 3, np.ones(80)])
    y = X[:, 0] + 0.5 * X[:, 1] + rng.randn(80)
    w = rng.uniform(0.1, 3, 80) if weighted else np.ones(80)
    res = imp.dstump(X, y, sample_weight=w if weighted else None)
    for j in range(3):
        gain, t = brute_force_stump(X[:, j], y, w)
        assert res.scores[j] == pytest.approx(gain, rel=1e-10, abs=1e-14)
        assert res.threshold[j] == t
        assert res.n_left[j] == np.sum(X[:, j] <= t)
    assert res.scores[3] == -np.inf and np.isnan(res.threshold[3])
    assert list(res.ranking[-1:]) == [3]


def test_dstump_median_left_is_the_papers_estimator():
    rng = np.random.RandomState(1)
    X, y = rng.rand(101, 30), rng.randn(101)
    res = imp.dstump(X, y, split="median", side="left")
    for j in range(30):
        order = np.argsort(X[:, j])
        assert res.scores[j] == pytest.approx(-np.var(y[order[:50]], ddof=1), rel=1e-10)
        assert res.n_left[j] == 50
    np.testing.assert_array_equal(res.ranking, np.argsort(-res.scores, kind="stable"))
    np.testing.assert_array_equal(res.select(3), res.ranking[:3])


def test_dstump_invariances_and_ties():
    rng = np.random.RandomState(2)
    X, y = rng.rand(60, 10), rng.randn(60)
    base = imp.dstump(X, y, split="median", side="sum")
    transformed = imp.dstump(np.exp(3 * X), y + 7.0, split="median", side="sum")  # monotone x, shifted y
    np.testing.assert_allclose(transformed.scores, base.scores, rtol=1e-9)
    np.testing.assert_array_equal(transformed.ranking, base.ranking)
    # Ties: the median boundary moves to the nearest edge of the tie run (lower edge on ties).
    x = np.array([0, 1, 2, 2, 2, 2, 3, 4, 5, 6], dtype=float)
    res = imp.dstump(x[:, None], np.arange(10.0), split="median", side="sum")
    assert res.n_left[0] == 6 and res.threshold[0] == 2.5
    # Integer weights are row repetitions.
    counts = rng.randint(1, 4, 60)
    weighted = imp.dstump(X, y, sample_weight=counts)
    repeated = imp.dstump(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    np.testing.assert_allclose(weighted.scores, repeated.scores, rtol=1e-10)


def test_dstump_of_a_dask_array_is_its_chunks_measured_apart_as_in_memory():
    """Each chunk of columns measured where Dask computes it (here its local threads; on a cluster
    in tests/test_feature_parallel.py): the table of the whole X, to the bit, whatever the chunks;
    each chunk checked as an X in memory is."""
    da = pytest.importorskip("dask.array")
    rng = np.random.RandomState(3)
    X = np.column_stack([rng.rand(90, 5), rng.randint(0, 3, (90, 4)), np.ones(90)])
    X[rng.rand(*X.shape) < 0.05] = np.nan
    y, w = X[:, 1] * 3 + rng.randn(90), rng.uniform(0, 2, 90)
    y = np.nan_to_num(y)
    for kw in ({}, {"split": "median", "side": "left"}, {"side": "max"}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the constant column's -inf
            here = imp.dstump(X, y, sample_weight=w, **kw)
            for chunks in ((90, 3), (30, 10), (45, (1, 6, 3))):
                there = imp.dstump(da.from_array(X, chunks=chunks), y, sample_weight=w, **kw)
                for field in ("scores", "ranking", "threshold", "impurity_decrease", "sign", "n_left"):
                    np.testing.assert_array_equal(here[field], there[field], err_msg=f"{field} {chunks}")
    ints = rng.randint(-3, 100, (90, 4)).astype(np.int32)  # converted to float64 as in memory
    here, there = imp.dstump(ints, y), imp.dstump(da.from_array(ints, chunks=(90, 2)), y)
    np.testing.assert_array_equal(here.threshold, there.threshold)
    np.testing.assert_array_equal(here.scores, there.scores)
    calls = rng.randint(0, 3, (40, 6)).astype(np.int8)
    calls[5, 4] = -127
    with pytest.warns(UserWarning, match="holds -127, bed-reader's code for a missing genotype call") as caught:
        imp.dstump(da.from_array(calls, chunks=(40, 2)), rng.rand(40))
    assert caught[0].filename == __file__  # the warning points at the caller
    big = np.zeros((40, 3), dtype=np.int64)
    big[0, 2] = 2**53 + 1
    with pytest.raises(ValueError, match="X holds integers beyond \\+-2\\*\\*53"):
        imp.dstump(da.from_array(big, chunks=(40, 1)), rng.rand(40))
    with pytest.raises(TypeError, match="X holds <U1 values; a feature-parallel fit reads numbers"):
        imp.dstump(da.from_array(np.full((40, 2), "a")), rng.rand(40))
    with pytest.raises(ValueError, match="X has 1 row\\(s\\): DSTUMP needs at least 2"):
        imp.dstump(da.zeros((1, 3)), [1.0])


def test_dstump_recovers_linear_support():
    rng = np.random.RandomState(0)
    n, p, s = 1024, 200, 10
    X = rng.rand(n, p)
    y = X[:, :s].sum(axis=1) / np.sqrt(s) + 0.1 * rng.randn(n)
    assert set(imp.dstump(X, y).select(s)) == set(range(s))


def test_bad_inputs(regression_data, classification_data):
    X, y = regression_data
    f = pyinterp.RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        imp.mdi_oob(f, X[:, :3], y)
    with pytest.raises(ValueError, match="training rows"):
        imp.mdi_oob(f, X[:50], y[:50])
    with pytest.raises(ValueError, match="inconsistent"):
        imp.ufi(f, X, y[:10])
    with pytest.raises(ValueError, match="NaN"):
        imp.naive_oob(f, X, np.where(np.arange(len(y)) == 3, np.nan, y))
    with pytest.raises(ValueError, match="y must hold numbers for regression"):  # as the forests' fit says
        imp.mdi_oob(f, X, np.array(["a"] * len(y)))
    with pytest.raises(ValueError, match="n_repeats"):
        imp.permutation_oob(f, X, y, n_repeats=0)
    nob = pyinterp.RandomForestRegressor(n_estimators=3, bootstrap=False).fit(X, y)
    with pytest.raises(ValueError, match="out-of-bag"):
        imp.mdi_oob(nob, X, y)
    with pytest.raises(ValueError, match="out-of-bag|training rows"):
        imp.mdi_oob(SkRegressor(n_estimators=3, bootstrap=False).fit(X, y), X, y)
    with pytest.raises(TypeError, match="forest must be"):
        imp.mdi(object())
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        imp.mdi(pyinterp.RandomForestRegressor())
    Xc, yc = classification_data
    fc = pyinterp.RandomForestClassifier(n_estimators=5, random_state=0).fit(Xc, yc)
    with pytest.raises(ValueError, match="not trained on"):
        imp.mdi_oob(fc, Xc, np.where(yc == 2, 7, yc))
    with pytest.raises(ValueError, match="split"):
        imp.dstump(X, y, split="mean")
    with pytest.raises(ValueError, match="side"):
        imp.dstump(X, y, side="right")
    with pytest.raises(ValueError, match="X contains infinity"):
        imp.dstump(np.where(X > 0.99, np.inf, X), y)
    with pytest.raises(ValueError, match="inconsistent"):
        imp.dstump(X, y[:5])


def test_inputs_are_not_modified(regression_data):
    X, y = regression_data
    X.flags.writeable = False
    y.flags.writeable = False
    f = pyinterp.RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    Xc, yc = X.copy(), y.copy()
    imp.mdi_oob(f, X, y)
    imp.permutation_oob(f, X, y)
    imp.contributions(f, X)
    imp.dstump(X, y)
    np.testing.assert_array_equal(X, Xc)
    np.testing.assert_array_equal(y, yc)


def test_every_measure_accepts_sklearn_forests(task):
    X, y, _, n_values = task
    Sk = SkRegressor if n_values == 1 else SkClassifier
    s = Sk(n_estimators=8, random_state=0, criterion="entropy" if n_values > 1 else "squared_error").fit(X, y)
    for fn in (imp.mdi_oob, imp.naive_oob, imp.ufi, imp.permutation_oob):
        out = fn(s, X, y)
        assert out.shape == (X.shape[1],) and np.all(np.isfinite(out)), fn.__name__
    C, bias = imp.contributions(s, X)
    pred = s.predict(X) if n_values == 1 else s.predict_proba(X)
    np.testing.assert_allclose(C.sum(axis=1) + bias, pred, rtol=0, atol=1e-12)
