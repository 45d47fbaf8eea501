"""Categorical features in the interaction finders and for X that holds category codes already
(CategoryCodes): every forest of a finder's fit reads the codes the finder encoded once; packed
genotypes' covariates, sparse matrices and arrays of codes give the forest the raw categories give."""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from every_route import assert_same_forest, assert_same_table
from sklearn.base import clone

from pyinterp import (CategoryCodes, IterativeRandomForest, LocalLSSFind, LSSFind, RandomForestClassifier,
                      RandomForestRegressor)
from pyinterp.interactions import screen_pairs
from pyinterp.io.packed import PackedGenotypes
from pyinterp.io.packing import pack_counts
from pyinterp.io.phenotypes import adjust_for_covariates

LEVELS = ["north", "south", "west", "east"]


def cohort(n=300, p=12, seed=0):
    """Genotypes, a four-level batch (text) whose effect no threshold on sorted codes separates in
    one split, and y with a genotype interaction."""
    rng = np.random.default_rng(seed)
    G = rng.integers(0, 3, (n, p)).astype(np.float64)
    batch = rng.choice(LEVELS, n)
    y = 2.0 * (G[:, 0] > 0) * (G[:, 1] > 0) + 1.5 * np.isin(batch, ["north", "west"]) + 0.3 * rng.normal(size=n)
    frame = pd.DataFrame(G, columns=[f"g{j}" for j in range(p)])
    frame["batch"] = batch
    codes = np.column_stack([G, np.searchsorted(sorted(LEVELS), batch)]).astype(np.float64)
    return frame, codes, y, CategoryCodes({p: sorted(LEVELS)})


def test_codes_and_raw_categories_give_the_same_forest():
    frame, codes, y, coded = cohort()
    raw = RandomForestRegressor(15, random_state=1, categorical_features=["batch"]).fit(frame, y)
    given = RandomForestRegressor(15, random_state=1, categorical_features=coded).fit(codes, y)
    assert_same_forest(raw, given)
    assert [c.tolist() for c in given.categories_] == [sorted(LEVELS)]
    assert given.is_categorical_.tolist() == [False] * 12 + [True]
    np.testing.assert_array_equal(raw.predict(frame), given.predict(codes))
    assert any(np.any((t.feature == 12) & np.isnan(t.threshold)) for t in given.trees_)
    # by name on a DataFrame of codes
    named = pd.DataFrame(codes, columns=frame.columns)
    by_name = RandomForestRegressor(15, random_state=1, categorical_features=CategoryCodes(
        {"batch": sorted(LEVELS)})).fit(named, y)
    assert_same_forest(by_name, given)


def test_packed_genotypes_with_a_categorical_covariate_and_sparse_codes():
    frame, codes, y, coded = cohort()
    G = codes[:, :12].astype(np.int8)
    packed = PackedGenotypes(pack_counts(G.T), G.shape[0]).with_covariates(codes[:, 12:], names=["batch"])
    dense = RandomForestRegressor(10, random_state=2, categorical_features=coded).fit(codes, y)
    from_packed = RandomForestRegressor(10, random_state=2, categorical_features=CategoryCodes(
        {"batch": sorted(LEVELS)})).fit(packed, y)
    assert_same_forest(from_packed, dense)
    np.testing.assert_array_equal(from_packed.predict(packed), dense.predict(codes))
    from_sparse = RandomForestRegressor(10, random_state=2, categorical_features=coded).fit(sp.csr_matrix(codes), y)
    assert_same_forest(from_sparse, dense)


@pytest.mark.parametrize("bad, message", [
    (4.0, r"column 12 holds 4.0 in row 5, not a code of its 4 categories \(an integer from 0 to 3\)"),
    (1.5, r"column 12 holds 1.5 in row 5"),
    (-1.0, r"column 12 holds -1.0 in row 5"),
])
def test_values_that_are_not_codes_are_refused_at_fit_and_prediction(bad, message):
    _, codes, y, coded = cohort()
    wrong = codes.copy()
    wrong[5, 12] = bad
    with pytest.raises(ValueError, match=message):
        RandomForestRegressor(5, categorical_features=coded).fit(wrong, y)
    forest = RandomForestRegressor(5, random_state=0, categorical_features=coded).fit(codes, y)
    with pytest.raises(ValueError, match=message):
        forest.predict(wrong)
    missing = codes.copy()
    missing[5, 12] = np.nan  # a missing value is not an error
    forest.predict(missing)


def test_category_codes_are_checked_and_behave_as_a_parameter():
    with pytest.raises(TypeError, match="CategoryCodes takes a dict"):
        CategoryCodes(["a", "b"])
    with pytest.raises(ValueError, match="column 'batch' lists a category twice"):
        CategoryCodes({"batch": ["a", "b", "a"]})
    with pytest.raises(ValueError, match="column 0 needs from 1 to 256 categories"):
        CategoryCodes({0: [f"c{i}" for i in range(257)]})
    frame, codes, y, coded = cohort()
    with pytest.raises(ValueError, match="categorical_features names column 13, but X has 13 columns"):
        RandomForestRegressor(5, categorical_features=CategoryCodes({13: ["a"]})).fit(codes, y)
    with pytest.raises(ValueError, match="CategoryCodes names a column twice"):
        RandomForestRegressor(5, categorical_features=CategoryCodes({12: LEVELS, "batch": LEVELS})).fit(
            pd.DataFrame(codes, columns=frame.columns), y)
    with pytest.raises(ValueError, match="must hold category codes"):
        RandomForestRegressor(5, categorical_features=CategoryCodes({"batch": LEVELS})).fit(frame, y)
    forest = RandomForestRegressor(5, random_state=0, categorical_features=coded)
    assert clone(forest).get_params()["categorical_features"] == coded
    assert repr(coded) == "CategoryCodes({12: ['east', 'north', 'south', 'west']})"
    fitted = pickle.loads(pickle.dumps(forest.fit(codes, y)))
    np.testing.assert_array_equal(fitted.predict(codes), forest.predict(codes))


def test_lssfind_encodes_once_and_its_forest_reads_the_codes():
    frame, codes, y, coded = cohort()
    kw = dict(n_estimators=20, random_state=4, max_order=2)
    raw = LSSFind(**kw, categorical_features=["batch"]).fit(frame, y)
    given = LSSFind(**kw, categorical_features=coded).fit(codes, y)
    assert raw.forest_.categorical_features == coded
    assert_same_forest(raw.forest_, given.forest_)
    assert_same_table(raw.interactions_, given.interactions_, list(frame.columns))
    assert "batch-" in [raw.interactions_.label(f) for f in raw.interactions_.features]
    np.testing.assert_array_equal(raw.predict(frame), given.predict(codes))
    assert [c.tolist() for c in raw.categories_] == [sorted(LEVELS)]
    local = LocalLSSFind(**kw, categorical_features=["batch"]).fit(frame, y)
    tables = local.local_interactions(frame.iloc[:3])
    coded_tables = LocalLSSFind(**kw, categorical_features=coded).fit(codes, y).local_interactions(codes[:3])
    for a, b in zip(tables, coded_tables, strict=True):
        assert_same_table(a, b, list(frame.columns))


def test_irf_bootstraps_read_the_categories_of_the_whole_fit():
    """A bootstrap that draws no row of a category still reads every row's code as the fit does;
    refitting a bootstrap from the raw X redoes it exactly."""
    frame, codes, y, coded = cohort(n=120)
    frame.loc[frame.index[:2], "batch"] = "rare"  # two rows: absent from most bootstraps
    codes[:2, 12] = 4
    levels = sorted([*LEVELS, "rare"])
    codes[:, 12] = np.searchsorted(levels, frame["batch"])
    coded = CategoryCodes({12: levels})
    kw = dict(n_iterations=2, n_estimators=20, n_bootstraps=4, rit_n_trees=20, random_state=5)
    raw = IterativeRandomForest(**kw, categorical_features=["batch"]).fit(frame, y)
    given = IterativeRandomForest(**kw, categorical_features=coded).fit(codes, y)
    assert_same_forest(raw.forest_, given.forest_)
    assert_same_table(raw.interactions_, given.interactions_, list(frame.columns))
    np.testing.assert_array_equal(raw.predict(frame), given.predict(codes))
    absent = [b for b in range(4) if not np.isin([0, 1], raw.bootstrap(frame, y, b).rows).any()]
    assert absent, "no bootstrap without the rare rows: the check below would not test them"
    run = raw.bootstrap(frame, y, absent[0])
    assert run.forest.categorical_features == coded  # the whole fit's categories, not the bootstrap's
    again = given.bootstrap(codes, y, absent[0])
    assert_same_forest(run.forest, again.forest)


def test_classifiers_take_them_too():
    frame, codes, y, coded = cohort()
    labels = (y > np.median(y)).astype(int)
    model = IterativeRandomForest(n_iterations=1, n_estimators=30, n_bootstraps=2, rit_n_trees=10, random_state=0,
                                  task="classification", categorical_features=["batch"]).fit(frame, labels)
    assert model.forest_.categorical_features == coded
    assert model.predict_proba(frame).shape == (len(y), 2)
    direct = RandomForestClassifier(10, random_state=0, categorical_features=["batch"]).fit(frame, labels)
    assert direct.score(frame, labels) > 0.8


def test_screen_pairs_adjusts_for_a_categorical_covariate_through_indicators():
    frame, codes, y, coded = cohort()
    found = screen_pairs(frame, y, n_features=20, always_split_features=["batch"], categorical_features=["batch"])
    assert all(12 not in f for f, _ in [(tuple(k for k, _ in r.features), r) for r in found.scan.interactions])
    indicators = np.column_stack([codes[:, 12] == c for c in (1, 2, 3)]).astype(float)
    residuals = y - np.column_stack([np.ones(len(y)), indicators]) @ np.linalg.lstsq(
        np.column_stack([np.ones(len(y)), indicators]), y, rcond=None)[0]
    np.testing.assert_allclose(adjust_for_covariates(y, codes[:, 12:], [0]), residuals, atol=1e-12)
    plain = screen_pairs(codes[:, :12], residuals, n_features=20)
    top = found.scan.interactions[:5]
    assert top.features == plain.scan.interactions[:5].features
    np.testing.assert_allclose(top["pvalue"], plain.scan.interactions[:5]["pvalue"], rtol=1e-9)
    assert tuple(k for k, _ in top.features[0]) == (0, 1)
