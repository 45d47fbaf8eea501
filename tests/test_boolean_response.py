"""Enhancer-style binary responses (thesis section 10.4, eqs. 10.2-10.4)."""

import numpy as np
import pytest

from pyinterp.datasets import make_boolean_response

ALPHA = 0.1**0.25


def region(X, interaction, alpha=ALPHA):
    """Rows where every signed feature of the interaction holds (independent oracle)."""
    masks = [X[:, k] > np.quantile(X[:, k], 1 - alpha) if sign > 0 else X[:, k] <= np.quantile(X[:, k], alpha)
             for k, sign in interaction]
    return np.all(masks, axis=0)


@pytest.fixture(scope="module")
def uniform_X():
    return np.random.RandomState(0).uniform(size=(200_000, 10))


def test_and_rule(uniform_X):
    y, interactions = make_boolean_response(uniform_X, "and", random_state=1)
    assert y.dtype == np.int64 and y.shape == (len(uniform_X),) and set(np.unique(y)) <= {0, 1}
    (interaction,) = interactions
    columns = [k for k, _ in interaction]
    assert len(set(columns)) == 4 and columns == sorted(columns)
    assert all(sign == 1 for _, sign in interaction)
    inside = region(uniform_X, interaction)
    assert inside.mean() == pytest.approx(ALPHA**4, abs=0.003)  # 10% of rows
    assert not y[~inside].any()
    assert y[inside].mean() == pytest.approx(0.8, abs=0.015)


def test_or_rule(uniform_X):
    y, interactions = make_boolean_response(uniform_X, "or", random_state=2)
    first, second = interactions
    assert [k for k, _ in first] == [k for k, _ in second]  # same features, opposite signs
    assert all(s1 == -s2 for (_, s1), (_, s2) in zip(first, second))
    assert sorted(s for _, s in first) == [-1, -1, 1, 1]
    inside = [region(uniform_X, s) for s in interactions]
    for mask in inside:
        assert mask.mean() == pytest.approx(ALPHA**4, abs=0.003)
    # alpha > 1/2: both regions hold where all four columns lie between q(1 - alpha) and q(alpha)
    either = inside[0] | inside[1]
    assert either.mean() == pytest.approx(2 * ALPHA**4 - (2 * ALPHA - 1) ** 4, abs=0.004)
    assert not y[~either].any()
    assert y[either].mean() == pytest.approx(0.8, abs=0.015)


def test_add_rule(uniform_X):
    y, interactions = make_boolean_response(uniform_X, "add", random_state=3)
    first, second = interactions
    assert len(first) == len(second) == 3 and not {k for k, _ in first} & {k for k, _ in second}
    inside = [region(uniform_X, s) for s in interactions]
    for mask in inside:
        assert mask.mean() == pytest.approx(ALPHA**3, abs=0.003)
    count = inside[0].astype(int) + inside[1]
    assert not y[count == 0].any()
    assert y[count == 1].mean() == pytest.approx(0.4, abs=0.015)
    assert y[count == 2].mean() == pytest.approx(0.8, abs=0.03)


def test_thresholds_and_ties():
    # alpha = 1/2 on 0..8 puts both quantiles at 4: '-' is X <= 4 and '+' is X > 4
    up = np.arange(9.0)
    X = np.column_stack([up, up, 8 - up, 8 - up])
    y, interactions = make_boolean_response(X, "or", features=[0, 1, 2, 3], alpha=0.5, beta=1.0, random_state=0)
    np.testing.assert_array_equal(y, [1, 1, 1, 1, 0, 1, 1, 1, 1])
    assert interactions == [((0, -1), (1, -1), (2, 1), (3, 1)), ((0, 1), (1, 1), (2, -1), (3, -1))]
    # alpha = 0.3 on 0..9: '+' is X > 6.3
    X = np.tile(np.arange(10.0)[:, None], (1, 6))
    y, _ = make_boolean_response(X, "and", features=[0, 1, 2, 3], alpha=0.3, beta=1.0)
    np.testing.assert_array_equal(y, [0] * 7 + [1] * 3)
    y, _ = make_boolean_response(X, "add", features=range(6), alpha=0.3, beta=0.5)
    np.testing.assert_array_equal(y, [0] * 7 + [1] * 3)  # P = 2 beta = 1 in both regions


def test_given_features_map_to_x1_x2():
    X = np.random.RandomState(0).uniform(size=(50, 8))
    _, interactions = make_boolean_response(X, "or", features=[5, 2, 7, 0])
    # X1 = column 5, X2 = 2, X3 = 7, X4 = 0; each tuple sorted by column
    assert interactions == [((0, 1), (2, -1), (5, -1), (7, 1)), ((0, -1), (2, 1), (5, 1), (7, -1))]
    _, interactions = make_boolean_response(X, "add", features=np.array([7, 6, 5, 4, 3, 2]))
    assert interactions == [((5, 1), (6, 1), (7, 1)), ((2, 1), (3, 1), (4, 1))]
    assert all(isinstance(k, int) for s in interactions for k, _ in s)


def test_random_state():
    X = np.random.RandomState(0).uniform(size=(500, 20))
    y1, s1 = make_boolean_response(X, "add", random_state=7)
    y2, s2 = make_boolean_response(X, "add", random_state=np.random.RandomState(7))
    np.testing.assert_array_equal(y1, y2)
    assert s1 == s2
    assert make_boolean_response(X, "add", random_state=8)[1] != s1


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(rule="xor"), ValueError, "rule must be 'and', 'or' or 'add', got 'xor'"),
        (dict(rule="add", X=np.zeros((10, 5))), ValueError, "rule 'add' uses 6 columns, X has 5"),
        (dict(X=np.zeros(10)), ValueError, "2D array"),
        (dict(X=np.full((10, 6), np.nan)), ValueError, "NaN"),
        (dict(alpha=0.0), ValueError, r"alpha must be in \(0.0, 1.0\]"),
        (dict(alpha=1.0), ValueError, "alpha must be below 1"),
        (dict(alpha="0.1"), TypeError, "alpha must be a finite real number"),
        (dict(alpha=float("nan")), ValueError, "alpha must be a finite real number, got nan"),
        (dict(beta=1.5), ValueError, "beta must be in"),
        (dict(rule="add", beta=0.8), ValueError, "beta must be <= 0.5 for rule 'add'"),
        (dict(features=[0, 1, 2]), ValueError, "rule 'and' needs 4 features, got 3"),
        (dict(features=[0, 1, 2, 2]), ValueError, "features must be distinct"),
        (dict(features=[0, 1, 2, 6]), ValueError, r"features\[3\] must be in \[0, 5\], got 6"),
        (dict(features=[0, 1, 2, 3.0]), TypeError, r"features\[3\] must be an integer"),
        (dict(features=3), TypeError, "features must be a sequence of column indices"),
    ],
)
def test_bad_input(kwargs, error, match):
    kwargs = {"X": np.random.RandomState(0).uniform(size=(10, 6)), **kwargs}
    with pytest.raises(error, match=match):
        make_boolean_response(**kwargs)
