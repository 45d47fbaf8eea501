"""LSSFind / LSSrank / LocalLSSFind (paper 001 Algorithm 1, thesis section 10.1, Vuk, Ihlo & Behr
2025): the scikit-learn contract, recovery on LSS data, the find and rank tables against DWP and a
brute-force enumeration of the leaves' signed paths, minimal sets, per-sample path prevalence
against a direct computation from apply, and parameter errors."""

import itertools
import pickle
import warnings
from collections import Counter

import numpy as np
import pytest

from pyinterp import importance
from sklearn.datasets import make_regression
from sklearn.ensemble import RandomForestRegressor as SkRegressor
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import check_estimator

from pyinterp.datasets import make_lss
from pyinterp.interactions import (LocalLSSFind, LSSFind, NoInteractionWarning, dwp, minimal, path_prevalence,
                                   prevalent_sets, signed_paths)

M, P = -1, 1
SLACK = 1e-12

# As for the forests (tests/test_sklearn_contract.py): a bootstrap draws rows, so a weight of 2 is
# not the same as a repeated row, and predict is the forest's.
EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": "bootstrap: weights are not repetitions",
    "check_sample_weight_equivalence_on_sparse_data": "bootstrap: weights are not repetitions",
}


def assert_tables_equal(a, b):
    assert a.features == b.features
    assert a.columns == b.columns
    for c in a.columns:
        np.testing.assert_array_equal(a[c], b[c])


def brute_force_dwp(paths, max_order):
    """DWP of every signed set of size <= max_order contained in some leaf's F_eps."""
    total = {}
    for r in range(len(paths)):
        path = paths.path(r)
        for k in range(1, min(len(path), max_order) + 1):
            for s in itertools.combinations(path, k):
                total[s] = total.get(s, 0.0) + paths.weight[r]
    return total


def leaf_paths(model, X):
    """For each row of X, the F_eps of the leaf it reaches in every tree (from forest_.apply)."""
    p = model.paths_
    row_of = {(int(t), int(leaf)): r for r, (t, leaf) in enumerate(zip(p.tree, p.leaf))}
    leaves = model.forest_.apply(X)
    return [[set(p.path(row_of[t, int(leaf)])) for t, leaf in enumerate(row)] for row in leaves]


def direct_prevalence(model, X, sets):
    per_row = leaf_paths(model, X)
    return np.array([[np.mean([set(s) <= path for path in trees]) for s in sets] for trees in per_row])


# ---------------------------------------------------------------------------------------------
# scikit-learn contract, pickling, pandas


@pytest.mark.filterwarnings("ignore::pyinterp.interactions.NoInteractionWarning")  # its small random data
@pytest.mark.parametrize("Estimator", [LSSFind, LocalLSSFind])
def test_check_estimator(Estimator):
    check_estimator(Estimator(n_estimators=10, random_state=0), expected_failed_checks=EXPECTED_FAILURES)


@pytest.fixture(scope="module")
def lss_frame():
    pd = pytest.importorskip("pandas")
    X, y, truth = make_lss(n_samples=400, n_features=6, n_interactions=1, order=2, snr=5, random_state=0)
    return pd.DataFrame(X, columns=[f"gene_{c}" for c in "abcdef"]), y, truth


@pytest.mark.parametrize("Estimator", [LSSFind, LocalLSSFind])
def test_pickle_round_trip(Estimator, lss_frame):
    df, y, _ = lss_frame
    model = Estimator(n_estimators=30, mode="rank", combine="union", random_state=0) if Estimator is LocalLSSFind \
        else Estimator(n_estimators=30, mode="rank", random_state=0)
    model.fit(df, y)
    clone = pickle.loads(pickle.dumps(model))
    assert len(model.interactions_) > 1
    assert_tables_equal(model.interactions_, clone.interactions_)
    assert_tables_equal(model.selected_, clone.selected_)
    assert clone.minimal_.features == model.minimal_.features
    assert clone.interactions_[0] == model.interactions_[0]  # records still work after unpickling
    assert clone.interactions_[0].names[0][0].startswith("gene_")
    np.testing.assert_array_equal(clone.predict(df), model.predict(df))
    if Estimator is LocalLSSFind:
        for a, b in zip(model.local_interactions(df.iloc[:20]), clone.local_interactions(df.iloc[:20])):
            assert_tables_equal(a, b)


def test_pandas_names_carry_through(lss_frame):
    df, y, truth = lss_frame
    model = LocalLSSFind(n_estimators=30, max_order=3, random_state=0).fit(df, y)
    assert list(model.feature_names_in_) == list(df.columns)
    assert model.minimal_.features == truth
    for record in model.interactions_:
        assert record.names == tuple((df.columns[k], s) for k, s in record.features)
    frame = model.interactions_.to_frame()
    assert "gene_a- & gene_b-" in list(frame["interaction"])
    assert list(frame["interaction"]) == [" & ".join(f"{df.columns[k]}{'+' if s > 0 else '-'}" for k, s in f)
                                          for f in model.interactions_.features]
    # Inside the rule region (a, b small) the true interaction is local, with the column names.
    inside = df.iloc[[0]].copy()
    inside[["gene_a", "gene_b"]] = 0.05
    table = model.local_interactions(inside)[0]
    assert table[0].names == (("gene_a", M), ("gene_b", M))
    # The inner forest knows the names: the estimator's and the forest's own predictions,
    # importances and local interactions read the data frame without a warning; renamed columns are
    # refused by the estimator.
    assert list(model.forest_.feature_names_in_) == list(df.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(model.predict(df), model.forest_.predict(df))
        importance.mdi_oob(model.forest_, df, y)
        model.local_interactions(df.iloc[:5])
    renamed = df.rename(columns={"gene_a": "other"})
    for method in (model.predict, model.local_interactions):
        with pytest.raises(ValueError, match="feature names should match"):
            method(renamed)


# ---------------------------------------------------------------------------------------------
# LSSFind and LSSrank on LSS data


@pytest.fixture(scope="module", params=[(1, 3, 0), (1, 3, 1), (2, 2, 0), (2, 2, 1)], ids=lambda p: "K%dL%d-seed%d" % p)
def lss_fits(request):
    K, L, seed = request.param
    X, y, truth = make_lss(n_samples=1000, n_features=20, n_interactions=K, order=L, snr=5, random_state=seed)
    find = LSSFind(max_order=L + 1, random_state=seed).fit(X, y)
    rank = LSSFind(max_order=L + 1, mode="rank", random_state=seed).fit(X, y)
    return X, y, truth, find, rank


def test_minimal_is_the_true_interactions(lss_fits):
    _, _, truth, find, rank = lss_fits
    assert sorted(find.minimal_.features) == sorted(truth)
    assert rank.minimal_.features == find.minimal_.features  # the same forest and the same find test


def test_find_table(lss_fits):
    _, _, _, find, _ = lss_fits
    table = find.interactions_
    assert len(table) >= 1 and table.columns == ["dwp", "adjusted_dwp", "rho"]
    assert_tables_equal(table, find.selected_)
    sizes = np.array([len(f) for f in table.features])
    assert np.all(sizes <= find.max_order)
    assert np.all(table["adjusted_dwp"] >= 1 - find.eta - SLACK)
    assert np.all(np.diff(table["rho"]) <= 1e-10)
    np.testing.assert_allclose(table["adjusted_dwp"], 2.0**sizes * table["dwp"], rtol=0, atol=SLACK)
    np.testing.assert_allclose(table["rho"], np.log2(table["dwp"]) / sizes, rtol=0, atol=SLACK)
    assert all(list(f) == sorted(f) and len({k for k, _ in f}) == len(f) for f in table.features)


def test_rank_table(lss_fits):
    _, _, _, find, rank = lss_fits
    table = rank.interactions_
    min_dwp = 2.0 ** -(rank.max_order + 1)
    assert set(table.features) >= set(find.selected_.features)
    assert len(table) > len(find.selected_)
    assert np.all(np.diff(table["rho"]) <= 1e-10)
    assert np.all(table["dwp"] >= min_dwp - SLACK)
    assert_tables_equal(rank.selected_, find.selected_)
    # Find mode's eq. (11) threshold is lossless: its table is rank's rows passing the find test.
    passing = table.select(table["adjusted_dwp"] >= 1 - rank.eta - SLACK)
    assert set(passing.features) == set(find.interactions_.features)


def test_rank_table_is_every_prevalent_set(lss_fits):
    """Exactly the sets with |S| <= max_order and DWP >= min_dwp, by enumerating the leaves' paths."""
    _, _, _, _, rank = lss_fits
    min_dwp = 2.0 ** -(rank.max_order + 1)
    expected = brute_force_dwp(rank.paths_, rank.max_order)
    clear = {s: v for s, v in expected.items() if abs(v - min_dwp) > 1e-9}
    got = dict(zip(rank.interactions_.features, rank.interactions_["dwp"]))
    assert {s for s, v in clear.items() if v >= min_dwp} == {s for s in got if s in clear}
    for s, v in got.items():
        assert v == pytest.approx(expected[s], abs=SLACK)


def test_table_values_are_dwp(lss_fits):
    _, _, _, find, rank = lss_fits
    for model in (find, rank):
        sets = model.interactions_.features
        np.testing.assert_allclose(model.dwp(sets), model.interactions_["dwp"], rtol=0, atol=SLACK)
        np.testing.assert_allclose(dwp(model.forest_, sets, model.epsilon), model.interactions_["dwp"],
                                   rtol=0, atol=SLACK)
    # A set holding both signs of a feature never occurs; the empty set is on every path.
    np.testing.assert_allclose(find.dwp([[(0, M), (0, P)], []]), [0.0, 1.0], rtol=0, atol=SLACK)


def test_explicit_min_dwp(lss_fits):
    X, y, _, _, rank = lss_fits
    high = LSSFind(max_order=rank.max_order, mode="rank", min_dwp=0.2, random_state=rank.random_state).fit(X, y)
    assert np.all(high.interactions_["dwp"] >= 0.2 - SLACK)
    expected = rank.interactions_.select(rank.interactions_["dwp"] >= 0.2 + 1e-9).features
    assert set(expected) <= set(high.interactions_.features) <= set(rank.interactions_.features)


def test_same_seed_same_tables_for_any_n_jobs():
    X, y, _ = make_lss(n_samples=600, n_features=10, n_interactions=2, order=2, snr=2, random_state=3)
    fits = [LocalLSSFind(n_estimators=40, mode="rank", combine="union", random_state=7, n_jobs=n).fit(X, y)
            for n in (1, 2)]
    a, b = fits
    assert_tables_equal(a.interactions_, b.interactions_)
    assert_tables_equal(a.selected_, b.selected_)
    assert a.minimal_.features == b.minimal_.features
    np.testing.assert_array_equal(a.paths_.codes, b.paths_.codes)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    for ta, tb in zip(a.local_interactions(X[:30]), b.local_interactions(X[:30])):
        assert_tables_equal(ta, tb)
    other = LocalLSSFind(n_estimators=40, mode="rank", random_state=8).fit(X, y)  # the seed does matter
    assert other.paths_.weight.shape != a.paths_.weight.shape or not np.array_equal(other.paths_.weight,
                                                                                    a.paths_.weight)


# ---------------------------------------------------------------------------------------------
# minimal()


def test_minimal_union_example():
    """Paper 001's example 1(X1 <= .5) + 1(X2 < .5, X3 < .5): five union signed interactions, the
    first three minimal (the spec's erratum: the paper's maximal sets would be the last two)."""
    unions = [((1, M),), ((1, P),), ((2, M), (3, M)), ((1, M), (2, M), (3, M)), ((1, P), (2, M), (3, M))]
    assert minimal(unions) == unions[:3]
    assert minimal(unions[::-1]) == unions[:3][::-1]  # the given order is kept


@pytest.mark.parametrize("sets, expected", [
    ([], []),
    ([((0, M),), ((0, M), (1, P)), ((0, M), (1, P), (2, M))], [((0, M),)]),
    ([((0, M),), ((0, P), (1, P))], [((0, M),), ((0, P), (1, P))]),  # the sign is part of the feature
    ([((0, M), (1, M)), ((1, M), (2, M)), ((0, M), (1, M), (2, M))], [((0, M), (1, M)), ((1, M), (2, M))]),
    ([((0, M), (1, M)), ((1, M), (0, M))], [((0, M), (1, M))]),  # one set given twice: kept once
])
def test_minimal_hand_examples(sets, expected):
    assert minimal(sets) == expected


# ---------------------------------------------------------------------------------------------
# LocalLSSFind and path prevalence


@pytest.fixture(scope="module")
def local_fit():
    X, y, truth = make_lss(n_samples=1000, n_features=20, n_interactions=2, order=2, snr=5, random_state=0)
    model = LocalLSSFind(max_order=3, random_state=0).fit(X, y)
    query = np.vstack([X[:40], np.full((3, 20), 0.5)])
    query[40, :2], query[40, 2:4] = 0.05, 0.95  # inside the first rule only
    query[41, :4] = 0.95  # outside both rules
    query[42, :4] = 0.05  # inside both
    return model, query, truth


def test_path_prevalence_is_direct_count(local_fit):
    model, query, _ = local_fit
    sets = model.selected_.features + [((0, P),), ((0, M), (0, P)), ((5, M), (6, P))]
    got = path_prevalence(model.forest_, model.paths_, query, sets)
    np.testing.assert_array_equal(got, direct_prevalence(model, query, sets))
    assert np.all(got[:, sets.index(((0, M), (0, P)))] == 0)


def test_local_intersection_tables(local_fit):
    model, query, truth = local_fit
    tables = model.local_interactions(query)
    assert len(tables) == len(query)
    selected = dict(zip(model.selected_.features, model.selected_["adjusted_dwp"]))
    pp = direct_prevalence(model, query, list(selected))
    min_pp = model.min_path_prevalence
    for i, table in enumerate(tables):
        assert table.columns == ["adjusted_dwp", "path_prevalence", "score"]
        assert set(table.features) <= set(selected)
        # every selected set local to the row is there, with its direct prevalence
        assert set(table.features) == {s for s, v in zip(selected, pp[i]) if v >= min_pp}
        np.testing.assert_array_equal(table["path_prevalence"], [pp[i][list(selected).index(s)] for s in table.features])
        np.testing.assert_array_equal(table["adjusted_dwp"], [selected[s] for s in table.features])
        assert np.all(table["path_prevalence"] >= min_pp - SLACK)
        np.testing.assert_array_equal(table["score"], table["adjusted_dwp"] * table["path_prevalence"])
        assert np.all(np.diff(table["score"]) <= 1e-10)
    first, second = sorted(truth)
    assert tables[40].features == [first] and tables[40][0].path_prevalence == 1.0
    assert len(tables[41]) == 0
    assert set(tables[42].features) == {first, second}
    assert sum(len(t) for t in tables[:40]) > 0


def test_local_union_tables(local_fit):
    model, query, _ = local_fit
    intersection = model.local_interactions(query)
    union = LocalLSSFind(**{**model.get_params(), "combine": "union"})
    union.__dict__.update({k: v for k, v in model.__dict__.items() if k.endswith("_")})  # same fitted forest
    tables = union.local_interactions(query)
    min_pp = model.min_path_prevalence
    per_row = leaf_paths(model, query)
    for i, (table, inner) in enumerate(zip(tables, intersection)):
        assert set(table.features) >= set(inner.features)
        # every set of size <= max_order on at least min_pp of the row's leaf paths, exactly
        counts = Counter(s for path in per_row[i] for k in range(1, model.max_order + 1)
                         for s in itertools.combinations(sorted(path), k))
        n_trees = len(per_row[i])
        expected = {s for s, c in counts.items() if c / n_trees >= min_pp}
        assert set(table.features) == expected | set(inner.features)
        direct = direct_prevalence(model, query[[i]], table.features)[0] if len(table) else np.empty(0)
        np.testing.assert_allclose(table["path_prevalence"], direct, rtol=0, atol=SLACK)
        sizes = np.array([len(f) for f in table.features])
        np.testing.assert_allclose(table["adjusted_dwp"], 2.0**sizes * model.dwp(table.features), rtol=0, atol=1e-9)
        np.testing.assert_array_equal(table["score"], table["adjusted_dwp"] * table["path_prevalence"])
        assert np.all(np.diff(table["score"]) <= 1e-10)
    assert len(tables[41]) > len(intersection[41]) == 0


def test_path_prevalence_on_a_scikit_learn_forest():
    """lssfind's published local value."""
    X, y = make_regression(n_features=4, n_informative=2, random_state=0, shuffle=False)
    rf = SkRegressor(random_state=0).fit(X, y)
    paths = signed_paths(rf, 1.0)
    assert path_prevalence(rf, paths, np.zeros((1, 4)), [[(1, M)]]) == pytest.approx(0.71, abs=1e-12)


def test_paths_of_another_forest_are_refused(local_fit):
    model, query, _ = local_fit
    small = LSSFind(n_estimators=5, random_state=0).fit(query, np.arange(len(query), dtype=float))
    for forest, paths in ((model.forest_, small.paths_), (small.forest_, model.paths_)):
        with pytest.raises(ValueError, match="do not belong"):
            path_prevalence(forest, paths, query, [[(0, M)]])
    assert len(small.interactions_) == 0  # y = row number: no Boolean rule


def test_an_empty_find_says_how_close_the_best_set_came():
    """Find mode passing no set warns with the set of highest 2^|S| DWP among those mined; rank
    mode, and a find that passes a set, do not warn."""
    rng = np.random.default_rng(3)
    X, y = rng.uniform(size=(300, 8)), rng.normal(size=300)
    with pytest.warns(NoInteractionWarning, match=r"none of up to 2 signed features reached 2\^\|S\| DWP >= 1 - eta = "
                                                  r"0.99 \(no set reached even the mining threshold") as caught:
        LSSFind(n_estimators=30, max_order=2, random_state=0).fit(X, y)
    assert caught[0].message.best is None
    with pytest.warns(NoInteractionWarning, match=r"LSSFind found no set: none of up to 3 signed features reached "
                                                  r"2\^\|S\| DWP >= 1 - eta = 0.99 \(the highest was") as caught:
        lss = LSSFind(n_estimators=30, max_order=3, random_state=0).fit(X, y)
    assert caught[0].filename == __file__  # the caller's line
    mined = prevalent_sets(lss.paths_, lss._mining_threshold(), 3)
    k = int(np.argmax(mined["adjusted_dwp"]))
    assert caught[0].message.best == (mined.label(mined.features[k]), mined["adjusted_dwp"][k]) and len(mined) > 1
    assert mined["adjusted_dwp"][k] < 0.99
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoInteractionWarning)
        LSSFind(n_estimators=30, random_state=0, mode="rank").fit(X, y)
        Xl, yl, _ = make_lss(n_samples=300, n_features=6, n_interactions=1, order=2, snr=20, random_state=0)
        assert len(LSSFind(n_estimators=30, random_state=0).fit(Xl, yl).interactions_)


# ---------------------------------------------------------------------------------------------
# Errors


@pytest.fixture(scope="module")
def small_data():
    X, y, _ = make_lss(n_samples=200, n_features=6, n_interactions=1, order=2, snr=5, random_state=0)
    return X, y


@pytest.mark.parametrize("params, error, match", [
    (dict(mode="bogus"), ValueError, "mode"),
    (dict(eta=1.0), ValueError, "eta"),
    (dict(eta=1.5), ValueError, "eta"),
    (dict(eta=-0.1), ValueError, "eta"),
    (dict(eta="small"), TypeError, "eta"),
    (dict(epsilon=-0.01), ValueError, "epsilon"),
    (dict(epsilon=float("nan")), TypeError, "epsilon"),
    (dict(max_order=0), ValueError, "max_order"),
    (dict(max_order=2.0), TypeError, "max_order"),
    (dict(min_dwp=0), ValueError, "min_dwp"),
    (dict(min_dwp=1.5), ValueError, "min_dwp"),
    (dict(mode="rank", min_dwp=0.0), ValueError, "min_dwp"),
])
@pytest.mark.parametrize("Estimator", [LSSFind, LocalLSSFind])
def test_bad_parameters(Estimator, params, error, match, small_data):
    with pytest.raises(error, match=match):
        Estimator(n_estimators=3, **params).fit(*small_data)


@pytest.mark.parametrize("params, error, match", [
    (dict(combine="both"), ValueError, "combine"),
    (dict(min_path_prevalence=0), ValueError, "min_path_prevalence"),
    (dict(min_path_prevalence=1.5), ValueError, "min_path_prevalence"),
    (dict(min_path_prevalence=None), TypeError, "min_path_prevalence"),
])
def test_bad_local_parameters(params, error, match, small_data):
    X, y = small_data
    with pytest.raises(error, match=match):  # at fit, as scikit-learn estimators do
        LocalLSSFind(n_estimators=3, **params).fit(X, y)
    model = LocalLSSFind(n_estimators=3).fit(X, y).set_params(**params)
    with pytest.raises(error, match=match):  # and when changed afterwards
        model.local_interactions(X[:2])


def test_bad_X(small_data):
    X, y = small_data
    bad = X.copy()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="X contains infinity"):
        LSSFind(n_estimators=3).fit(bad, y)
    model = LocalLSSFind(n_estimators=3, random_state=0).fit(X, y)
    for method in (model.predict, model.local_interactions):
        with pytest.raises(ValueError, match="X contains infinity"):
            method(bad)
        with pytest.raises(ValueError, match="X has 5 features, but LocalLSSFind is expecting 6"):
            method(X[:, :5])
    for method in ("predict", "dwp", "local_interactions"):
        with pytest.raises(NotFittedError):
            getattr(LocalLSSFind(), method)(X if method != "dwp" else [[(0, M)]])
