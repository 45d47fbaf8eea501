"""Interaction recovery scores: paper 001 eqs. 13-14 and thesis eq. 10.1."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyinterp.metrics import lenient_score, proximity_curve, proximity_score, singleton_equivalent, strict_score

# Paper 001's example E(Y|X) = 1(X1 <= .5) + 1(X2 < .5, X3 < .5): two basic signed interactions and
# five union signed interactions (spec seed001 section 1.1).
BASIC = [((1, -1),), ((2, -1), (3, -1))]
UNION = [((1, -1),), ((1, 1),), ((2, -1), (3, -1)), ((1, -1), (2, -1), (3, -1)), ((1, 1), (2, -1), (3, -1))]
MINIMAL = UNION[:3]


def test_strict_score_paper_example():
    assert strict_score(BASIC, BASIC) == 1.0
    assert strict_score(BASIC, UNION) == pytest.approx(2 / 5)
    assert strict_score(BASIC, MINIMAL) == pytest.approx(2 / 3)  # (1, +1) is a false positive
    # Spec Q11: with both signs of the singleton counted as true
    assert strict_score(BASIC, MINIMAL, singletons="either") == 1.0
    assert strict_score(BASIC, UNION, singletons="either") == pytest.approx(3 / 5)


def test_strict_score_needs_exact_signed_sets():
    true = [((0, -1), (1, -1))]
    assert strict_score(true, [((1, -1), (0, -1))]) == 1.0  # order within a tuple is irrelevant
    assert strict_score(true, [[(1, -1), (0, -1)], ((0, -1), (1, -1))]) == 1.0  # repeats count once
    assert strict_score(true, [((0, -1), (1, 1))]) == 0.0  # a sign flip gets no credit
    assert strict_score(true, [((0, -1),)]) == 0.0  # nor does a subset
    assert strict_score(true, [((0, -1), (1, -1), (2, 1))]) == 0.0  # nor a superset
    assert strict_score(true, []) == 0.0
    assert strict_score(true, [((0, -1), (1, -1)), ((5, 1),)]) == 0.5


def test_strict_score_either_sign_of_a_singleton():
    true = [((0, -1),), ((1, 1), (2, 1))]
    assert strict_score(true, [((0, 1),), ((1, 1), (2, 1))]) == pytest.approx(1 / 3)
    assert strict_score(true, [((0, 1),), ((1, 1), (2, 1))], singletons="either") == 1.0
    # only singletons are affected
    assert strict_score(true, [((0, -1),), ((1, -1), (2, 1))], singletons="either") == pytest.approx(2 / 4)


def test_singleton_equivalent():
    assert singleton_equivalent(BASIC) == [((1, -1),), ((1, 1),), ((2, -1), (3, -1))]
    assert singleton_equivalent(MINIMAL) == singleton_equivalent(BASIC)
    assert singleton_equivalent([[(3, -1), (0, 1)], [(4, 1)]]) == [((0, 1), (3, -1)), ((4, 1),), ((4, -1),)]
    assert singleton_equivalent([]) == []


def test_lenient_score():
    assert lenient_score(BASIC, UNION) == 1.0
    assert lenient_score(BASIC, [((1, 1), (2, -1))]) == pytest.approx(2 / 3)  # signs are ignored
    assert lenient_score(BASIC, [((1, -1), (2, 1), (3, 1), (5, -1))]) == pytest.approx(3 / 4)
    assert lenient_score(BASIC, [((4, 1),)]) == 0.0
    assert lenient_score(BASIC, []) == 0.0


# K = 2 true interactions and a ranking whose top entries match them partly
TRUE = [((0, -1), (1, -1)), ((2, -1), (3, -1), (4, -1))]
RANKED = [((0, -1), (1, 1)), ((2, -1), (3, -1)), ((0, -1), (1, -1)), ((2, -1), (3, -1), (4, -1))]


def test_proximity_hand_example():
    # unsigned: M=1 matches {0,1} fully; M=2 adds 2/3 for {2,3,4}; M=4 matches both
    unsigned = [1 / 2, 5 / 6, 5 / 6, 1.0, 1.0, 1.0]
    # signed: {0-,1+} vs {0-,1-} scores 1/3 until the exact match at M=3
    signed = [1 / 6, 1 / 2, 5 / 6, 1.0, 1.0, 1.0]
    np.testing.assert_allclose(proximity_curve(TRUE, RANKED, 6), unsigned)
    np.testing.assert_allclose(proximity_curve(TRUE, RANKED, 6, signed=True), signed)
    for m in range(1, 7):
        assert proximity_score(TRUE, RANKED, top=m) == pytest.approx(unsigned[m - 1])
        assert proximity_score(TRUE, RANKED, top=m, signed=True) == pytest.approx(signed[m - 1])
    assert proximity_score(TRUE, RANKED) == 1.0
    assert proximity_score(TRUE, RANKED[:2]) == pytest.approx(5 / 6)


def test_proximity_or_rule_signs_coincide_unsigned():
    # Thesis section 10.4: the two OR interactions are the same unsigned set
    true = [((0, -1), (1, -1), (2, 1), (3, 1)), ((0, 1), (1, 1), (2, -1), (3, -1))]
    assert proximity_score(true, true[:1]) == 1.0
    assert proximity_score(true, true[:1], signed=True) == 0.5


def test_proximity_empty_ranking_scores_zero():
    assert proximity_score(TRUE, []) == 0.0
    np.testing.assert_array_equal(proximity_curve(TRUE, [], 3), np.zeros(3))


signed_feature = st.tuples(st.integers(0, 6), st.sampled_from([-1, 1]))
interaction = st.lists(signed_feature, min_size=1, max_size=4).map(tuple)
collection = st.lists(interaction, max_size=6)


@settings(max_examples=200, deadline=None)
@given(true=st.lists(interaction, min_size=1, max_size=4), found=collection, data=st.data())
def test_score_invariants(true, found, data):
    shuffle = lambda c: [tuple(data.draw(st.permutations(s))) for s in data.draw(st.permutations(c))]
    for score in (strict_score, lenient_score):
        value = score(true, found)
        assert 0.0 <= value <= 1.0
        assert score(shuffle(true), shuffle(found)) == value
        assert score(true, true) == 1.0
    assert strict_score(true, found, singletons="either") == strict_score(
        singleton_equivalent(true), singleton_equivalent(found))
    if found:
        assert strict_score(found, true) == strict_score(true, found)
    for signed in (False, True):
        curve = proximity_curve(true, found, 8, signed=signed)
        assert np.all((curve >= 0) & (curve <= 1))
        assert np.all(np.diff(curve) >= 0)
        assert curve[-1] == pytest.approx(proximity_score(true, found, top=8, signed=signed))
        assert curve[0] == pytest.approx(proximity_score(true, found, top=1, signed=signed))
        # within-tuple order is irrelevant; the ranking order is kept
        ranked = [tuple(data.draw(st.permutations(s))) for s in found]
        np.testing.assert_allclose(proximity_curve(shuffle(true), ranked, 8, signed=signed), curve)
        assert proximity_score(true, true, signed=signed) == 1.0


def test_numpy_integers_are_accepted():
    true = [np.array([[0, -1], [1, -1]])]
    assert strict_score(true, [((np.int64(1), np.int8(-1)), (0, -1))]) == 1.0


@pytest.mark.parametrize(
    "true, found, error, match",
    [
        ([], [((0, -1),)], ValueError, "true interactions must be non-empty"),
        ([], [], ValueError, "true interactions must be non-empty"),
        (BASIC, [((0, 0),)], ValueError, r"found\[0\]: a sign must be -1 or \+1, got 0"),
        (BASIC, [((0, 1),), ((0, 2),)], ValueError, r"found\[1\]: a sign must be -1 or \+1, got 2"),
        ([((-1, 1),)], BASIC, ValueError, r"true\[0\]: a feature must be a column index >= 0, got -1"),
        (BASIC, [()], ValueError, r"found\[0\] is an empty interaction"),
        (5, BASIC, TypeError, "true must be an iterable of interactions"),
        (BASIC, None, TypeError, "found must be an iterable of interactions"),
        ("(0, -1)", BASIC, TypeError, "true must be an iterable of interactions, got the string"),
        (BASIC, [5], TypeError, r"found\[0\] must be an iterable of \(feature, sign\) pairs"),
        (BASIC, [((0, -1, 2),)], TypeError, "a signed feature must be a pair"),
        # a single interaction where a collection is expected
        (((0, -1), (1, -1)), BASIC, TypeError, r"true\[0\]: a signed feature must be a pair \(feature, sign\), got 0"),
        (BASIC, [((0.5, -1),)], TypeError, "the feature must be an integer, got 0.5"),
        (BASIC, [((0, True),)], TypeError, "the sign must be an integer, got True"),
        (BASIC, [((0, "+"),)], TypeError, "the sign must be an integer"),
    ],
)
def test_bad_interactions(true, found, error, match):
    for score, name in ((strict_score, "found"), (lenient_score, "found"), (proximity_score, "ranked")):
        with pytest.raises(error, match=match.replace("found", name)):
            score(true, found)


def test_bad_options():
    with pytest.raises(ValueError, match="singletons must be 'exact' or 'either', got 'both'"):
        strict_score(BASIC, BASIC, singletons="both")
    with pytest.raises(ValueError, match="top must be >= 1, got 0"):
        proximity_score(BASIC, BASIC, top=0)
    with pytest.raises(TypeError, match="top must be an integer"):
        proximity_score(BASIC, BASIC, top=1.5)
    with pytest.raises(ValueError, match="max_top must be in \\[1, 2147483647\\], got 0"):
        proximity_curve(BASIC, BASIC, 0)
    with pytest.raises(ValueError, match=r"interactions\[0\]: a sign"):
        singleton_equivalent([((0, 3),)])
