"""iRF's default style "rules": RIT on both sides of the cut and the table's tiers (issue 53)."""


import numpy as np
import pytest

from pyinterp import IterativeRandomForest
from pyinterp.interactions import NoInteractionWarning
from pyinterp.interactions.rule_tiers import CLOSURE, FILTERED, NESTED, RULE, rule_tiers

A, B, C, D = (0, -1), (1, -1), (2, -1), (3, -1)


def _columns(prevalence, direction=None, passing=None, fsd=None):
    n = len(prevalence)
    ok = np.ones(n, bool) if passing is None else np.asarray(passing)
    return {"prevalence": np.asarray(prevalence, float), "stability": np.where(ok, 1.0, 0.4),
            "sta_fsd": np.ones(n), "sta_mip": np.ones(n), "fsd": np.full(n, 0.3) if fsd is None else np.asarray(fsd),
            "direction": np.ones(n, int) if direction is None else np.asarray(direction)}


def test_tiers_put_a_rule_above_its_parts_and_its_extensions():
    # {A, B, C} holds 0.9 of the paths holding {A, B}: the pair is a part of the triple;
    # {A, B, C, D} holds 0.3 of the triple's paths: D is an extension the paths do not need.
    features = [(A, B), (A, B, C), (A, B, C, D), (C, D)]
    tiers = rule_tiers(features, _columns([0.5, 0.45, 0.135, 0.2]))
    assert tiers.tolist() == [NESTED, RULE, NESTED, RULE]


def test_tiers_at_the_closure_ratio_and_across_directions():
    at, below = CLOSURE * 0.5, np.nextafter(CLOSURE * 0.5, 0)
    assert rule_tiers([(A, B), (A, B, C)], _columns([0.5, at])).tolist() == [NESTED, RULE]
    assert rule_tiers([(A, B), (A, B, C)], _columns([0.5, below])).tolist() == [RULE, NESTED]
    # Sets of opposite directions are not nested, whatever their features.
    assert rule_tiers([(A, B), (A, B, C)], _columns([0.5, 0.5], direction=[1, -1])).tolist() == [RULE, RULE]


def test_the_other_side_of_two_rules_leaves_tier_0():
    # y high when x0 and x1 are low or when x2 and x3 are low; low when x0 and x2 are high, and
    # when x1 and x3 are: each set is made of the other sides of the other direction's items.
    # The rules' features co-occur on the paths (fsd 0.4), the other sides' do not (0.05).
    features = [(A, B), (C, D), ((0, 1), (2, 1)), ((1, 1), (3, 1)), ((0, 1), (1, -1)), ((7, 1), (8, 1))]
    columns = _columns([0.5, 0.5, 0.6, 0.4, 0.3, 0.2], direction=[1, 1, -1, -1, -1, -1],
                       fsd=[0.4, 0.4, 0.05, 0.05, 0.5, 0.01])
    # x0+ & x1- holds x1- (no rule below the cut holds x1+): not made of other sides, it stays; so
    # does x7+ & x8+, which shares no feature.
    assert rule_tiers(features, columns).tolist() == [RULE, RULE, NESTED, NESTED, RULE, RULE]
    # The smaller fsd per added feature loses, whichever the direction.
    columns["fsd"] = np.array([0.04, 0.04, 0.5, 0.5, 0.5, 0.01])
    assert rule_tiers(features, columns).tolist() == [NESTED, NESTED, RULE, RULE, RULE, RULE]
    # Per added feature: a pair's 0.3 beats a triple's 0.5 (0.25 per added feature).
    triple = [(A, B), ((0, 1), (5, 1), (6, 1)), ((5, -1), (6, -1))]
    columns = _columns([0.5, 0.5, 0.5], direction=[1, -1, 1], fsd=[0.3, 0.5, 0.3])
    assert rule_tiers(triple, columns).tolist() == [RULE, NESTED, RULE]
    # Unsigned sets have no other side.
    unsigned = [((0, 0), (1, 0)), ((0, 0), (2, 0))]
    assert rule_tiers(unsigned, _columns([0.5, 0.4], direction=[1, -1], fsd=[0.4, 0.0])).tolist() == [RULE, RULE]


def test_tiers_of_sets_that_fail_the_filters():
    columns = _columns([0.5, 0.45], passing=[True, False])
    assert rule_tiers([(A, B), (A, B, C)], columns).tolist() == [RULE, FILTERED]  # a failing set nests nothing
    columns["sta_mip"] = np.array([np.nan, 0.96])
    columns["stability"] = np.array([1.0, 1.0])
    assert rule_tiers([(A, B), (A, B, C)], columns).tolist() == [FILTERED, RULE]  # NaN fails
    # A rule gains precision over its parts in more than MIP_SHARE (0.95) of the bootstraps; R asks half.
    columns["sta_mip"] = np.array([0.94, 0.96])
    assert rule_tiers([(A, B), (C, D)], columns).tolist() == [FILTERED, RULE]
    assert rule_tiers([(A, B), (C, D)], columns, mip_share=0.5).tolist() == [RULE, RULE]


def _lss_signed(n, p, seed):
    """y = 1(x0, x1 low) - 1(x2, x3, x4 low) + noise: a rule that lowers y."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, p))
    signal = (X[:, :2] < 0.54).all(axis=1) - (X[:, 2:5] < 0.66).all(axis=1).astype(float)
    return X, signal + 0.3 * rng.standard_normal(n)


@pytest.fixture(scope="module")
def signed_fit():
    X, y = _lss_signed(1000, 20, 0)
    params = {"n_iterations": 2, "n_estimators": 100, "n_bootstraps": 4, "rit_n_trees": 100, "random_state": 0,
              "n_jobs": 2}
    return X, y, params, IterativeRandomForest(**params).fit(X, y)


def test_default_finds_a_rule_that_lowers_y_with_its_signs(signed_fit):
    X, y, params, model = signed_fit
    table = model.interactions_
    top = list(zip(table.features, table["direction"]))[:2]
    assert top == [((A, B), 1), ((C, D, (4, -1)), -1)]  # raises y; lowers y, found below the cut
    assert (table["tier"][:2] == RULE).all()
    assert (np.diff(table["tier"]) >= 0).all()  # ordered by tier
    for tier in np.unique(table["tier"]):  # then the rules by cpe, the others by stability, then cpe
        stability = table["stability"][table["tier"] == tier] if tier else np.zeros((table["tier"] == 0).sum())
        cpe = np.nan_to_num(table["cpe"][table["tier"] == tier], nan=-np.inf)
        assert (np.diff(stability) <= 0).all()
        assert (np.diff(cpe)[np.diff(stability) == 0] <= 0).all()
    assert (table["stability"][table["tier"] > 0] < 1).any()  # the order by stability was tested
    # R's order, with the class of interest's leaves only (R iRF 3.0), does not report it with its signs.
    r = IterativeRandomForest(**params, style="R").fit(X, y).interactions_
    assert ((C, D, (4, -1)), -1) not in list(zip(r.features, r["direction"]))
    assert (r["direction"] == 1).all()


def test_both_sides_keep_the_class_side_as_it_is(signed_fit):
    # The other side's RIT draws from its own streams: the class of interest's rows are those of
    # rit_leaves="class", set for set and score for score.
    X, y, params, _ = signed_fit
    both = IterativeRandomForest(**params, style="R", rit_leaves="both").fit(X, y).interactions_
    one = IterativeRandomForest(**params, style="R").fit(X, y).interactions_
    high = both["direction"] == 1
    assert [f for f, h in zip(both.features, high) if h] == one.features
    for column in one.columns:  # the tiers too: they nest sets of one direction
        np.testing.assert_array_equal(both[column][high], one[column])
    assert (~high).any()


def test_flipped_leaves_swap_the_sides(signed_fit):
    X, y, _, model = signed_fit
    run = model.bootstrap(X, y, 0)
    leaves, other = run.leaves, run.leaves.flipped()
    np.testing.assert_array_equal(other.positive, leaves.size - leaves.positive)
    np.testing.assert_array_equal(other.is1, ~leaves.is1)
    np.testing.assert_array_equal(other.mass1, leaves.mass0)
    np.testing.assert_array_equal(other.flipped().positive, leaves.positive)
    assert run.other_interactions and len(leaves.positive) == len(other.positive)


def test_default_is_the_same_for_any_number_of_threads(signed_fit):
    X, y, params, model = signed_fit
    again = IterativeRandomForest(**{**params, "n_jobs": 1}).fit(X, y).interactions_
    assert again.features == model.interactions_.features
    for column in again.columns:
        np.testing.assert_array_equal(again[column], model.interactions_[column])


def test_an_empty_table_says_why():
    rng = np.random.RandomState(0)
    X = rng.rand(300, 6)
    params = {"n_iterations": 1, "n_estimators": 30, "n_bootstraps": 2, "rit_n_trees": 50, "random_state": 0}
    with pytest.warns(NoInteractionWarning, match="single splits separate the target"):
        model = IterativeRandomForest(**params, max_features=None).fit(X, (X[:, 0] > 0.5).astype(int))
    assert len(model.interactions_) == 0 and "tier" in model.interactions_.columns
    X, y = _lss_signed(400, 6, 1)
    with pytest.warns(NoInteractionWarning, match="found no 6 or more features that recur together on the paths "
                                                  "of either side, or no bootstrap could score"):
        IterativeRandomForest(**params, rit_min_size=6).fit(X, y)
