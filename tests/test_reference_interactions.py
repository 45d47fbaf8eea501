"""The plain-Python peers of bench/compare_interactions.py (tests/reference_interactions.py): its
weighted FP-growth against brute-force enumeration, and its LSSFind against the values lssfind's
own tests publish."""

import random

import pytest
from reference_interactions import brute_force_itemsets, lssfind_python, weighted_fpgrowth


def assert_same(got, want, tol=1e-12):
    assert got.keys() == want.keys()
    assert all(abs(got[k] - want[k]) <= tol for k in got)


def test_weighted_example():
    tx = [(1, 2), (1, 3), (1,), (2, 3), (1, 2, 3)]
    w = [0.2, 0.15, 0.1, 0.5, 0.05]
    want = {(1,): 0.5, (2,): 0.75, (3,): 0.7, (2, 3): 0.55}
    assert_same(weighted_fpgrowth(tx, w, 0.3), want)
    assert_same(brute_force_itemsets(tx, w, 0.3), want)


def test_unweighted_example():
    tx = [(1, 2)] * 3 + [(1, 3)] * 2 + [(1,)] + [(2, 3)] * 5
    want = {(2, 3): 5, (1, 2): 3, (2,): 8, (3,): 7, (1, 3): 2, (1,): 6}
    assert_same(weighted_fpgrowth(tx, None, 2), want)
    assert_same(brute_force_itemsets(tx, None, 2), want)


@pytest.mark.parametrize("trial", range(40))
def test_fpgrowth_equals_brute_force(trial):
    """Weighted (odd trials) and unweighted transactions, with a size cap in half of them."""
    rng = random.Random(trial)
    n_items = rng.randint(3, 12)
    n_tx = rng.randint(1, 60)
    tx = [rng.sample(range(n_items), rng.randint(0, min(n_items, 8))) for _ in range(n_tx)]
    if trial % 2:
        w = [rng.random() for _ in tx]
        min_support = rng.uniform(0.02, 0.4) * sum(w)
    else:
        w = None
        min_support = rng.randint(1, max(1, n_tx // 3))
    max_size = None if trial % 4 < 2 else rng.randint(1, 4)
    assert_same(weighted_fpgrowth(tx, w, min_support, max_size), brute_force_itemsets(tx, w, min_support, max_size))


def test_signed_feature_items():
    tx = [frozenset({(0, -1), (1, +1)}), frozenset({(1, +1)}), frozenset({(0, -1), (2, -1), (1, +1)})]
    w = [0.5, 0.25, 0.25]
    assert_same(weighted_fpgrowth(tx, w, 0.25), brute_force_itemsets(tx, w, 0.25))


def test_lssfind_published_forest():
    """lssfind's own weighting (distinct row counts) reproduces the adjusted DWPs its 0.1.1 tests
    (tests/test_lssfind.py) expect, to their 7 decimals."""
    from sklearn.datasets import make_regression
    from sklearn.ensemble import RandomForestRegressor

    X, y = make_regression(n_features=4, n_informative=2, random_state=0, shuffle=False)
    rf = RandomForestRegressor(random_state=0).fit(X, y)
    published = {
        ((1, -1),): 1.0, ((1, +1),): 1.0,
        ((0, +1), (1, -1)): 0.9975, ((0, -1), (1, -1)): 0.9975,
        ((0, -1),): 0.99, ((0, +1),): 0.99,
        ((0, -1), (1, +1)): 0.9825, ((0, +1), (1, +1)): 0.9825,
    }
    got = lssfind_python(rf, epsilon=1, min_adjusted=0.5, max_order=6, counts="distinct")
    assert_same(got, published, tol=5e-8)
