"""frequent_itemsets against brute-force enumeration, published examples, peers and bad input."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyinterp import frequent_itemsets
from pyinterp.interactions.itemsets import TooManyItemsets


def brute_force(transactions, weights, min_support, max_size):
    support = {}
    for t, w in zip(transactions, weights):
        items = sorted(set(t))
        for k in range(1, min(len(items), max_size) + 1):
            for c in itertools.combinations(items, k):
                support[c] = support.get(c, 0.0) + w
    return {c: s for c, s in support.items() if s >= min_support}


def test_weighted_example():
    got = frequent_itemsets([(1, 2), (1, 3), (1,), (2, 3), (1, 2, 3)], [.2, .15, .1, .5, .05], .3)
    assert got.keys() == {(1,), (2,), (3,), (2, 3)}
    for key, value in {(1,): .5, (2,): .75, (3,): .7, (2, 3): .55}.items():
        assert got[key] == pytest.approx(value, abs=1e-15)


def test_unweighted_example_and_threshold_is_inclusive():
    tx = [(1, 2)] * 3 + [(1, 3)] * 2 + [(1,)] + [(2, 3)] * 5
    assert frequent_itemsets(tx, min_support=2) == {(2, 3): 5, (1, 2): 3, (2,): 8, (3,): 7, (1, 3): 2, (1,): 6}
    assert (1, 3) not in frequent_itemsets(tx, min_support=2.0001)


# Weights are multiples of 1/8 so every sum is exact and the threshold comparison is unambiguous.
transactions = st.lists(st.lists(st.integers(-3, 9), max_size=7), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(transactions, st.data())
def test_equals_brute_force(tx, data):
    weights = data.draw(st.lists(st.integers(0, 16), min_size=len(tx), max_size=len(tx)))
    weights = [w / 8 for w in weights]
    min_support = data.draw(st.integers(1, 24)) / 8
    max_size = data.draw(st.integers(1, 8))
    assert frequent_itemsets(tx, weights, min_support, max_size) == brute_force(tx, weights, min_support, max_size)
    unit = [1.0] * len(tx)
    assert frequent_itemsets(tx, None, 2, max_size) == brute_force(tx, unit, 2, max_size)


def test_merging_repeats_and_item_types():
    # Repeated items count once; duplicated transactions merge; numpy and large integers work.
    big = 2**62
    tx = [np.array([big, 5, 5]), [5, big], (np.int32(5),)]
    assert frequent_itemsets(tx, [1.0, 2.0, 0.5], 1.0) == {(5,): 3.5, (big,): 3.0, (5, big): 3.0}
    assert frequent_itemsets([(), (), (1,)], None, 1) == {(1,): 1.0}
    assert frequent_itemsets([], None, 1) == {}


def test_random_baskets_match_brute_force_and_are_deterministic():
    rng = np.random.default_rng(3)
    tx = [tuple(rng.choice(30, size=rng.integers(1, 12), replace=False)) for _ in range(400)]
    w = rng.random(400)
    got = frequent_itemsets(tx, w, 8.0, 4)
    ref = brute_force(tx, w, 8.0, 4)
    assert got.keys() == ref.keys()
    np.testing.assert_allclose([got[k] for k in ref], list(ref.values()), rtol=1e-12)
    assert list(frequent_itemsets(tx, w, 8.0, 4).items()) == list(got.items())


def test_wide_conditional_databases_match_brute_force():
    """Conditional databases with more than 64 frequent items (mined as rows, not bit masks),
    nested two deep: e and r share 70 transactions, each with one more item x_i."""
    rng = np.random.default_rng(11)
    x = list(range(100, 170))
    e, r = 7, 8
    tx = [(e, r, xi) for xi in x] + [(xi,) for xi in x] + [(r,)]
    w = [1.0] * 70 + [100.0] * 70 + [5.0]
    for _ in range(200):  # light noise among the x_i, weights in eighths so sums are exact
        tx.append(tuple(rng.choice(x + [e, r], size=rng.integers(1, 5), replace=False)))
        w.append(rng.integers(1, 4) / 8)
    for max_size in (3, 4, 5):
        want = brute_force(tx, w, 1.0, max_size)
        assert sum(len(k) == 3 and {e, r} <= set(k) for k in want) == 70
        for n_jobs in (1, 2):
            assert frequent_itemsets(tx, w, 1.0, max_size, n_jobs=n_jobs) == want


@pytest.mark.parametrize("n_labels, max_size", [(3000, 2), (3000, 3), (400, 3)])
def test_many_labels_that_rarely_meet_match_brute_force(n_labels, max_size):
    """Labels far more numerous than the transactions holding each (the sparse count: only the
    labels e's transactions hold are zeroed and listed), beside a few dense ones; exact sums in
    eighths. 100,000 one-item transactions mine in well under a second instead of 14 s (issue 52)."""
    rng = np.random.default_rng(n_labels + max_size)
    tx = [tuple(rng.choice(n_labels, size=rng.integers(1, 4), replace=False)) for _ in range(2500)]
    tx += [(1, 2, 3)] * 40 + [(2, 3)] * 30
    w = list(rng.integers(1, 9, len(tx)) / 8)
    want = brute_force(tx, w, 0.25, max_size)
    for n_jobs in (1, 2):
        assert frequent_itemsets(tx, w, 0.25, max_size, n_jobs=n_jobs) == want
    single = frequent_itemsets([(i,) for i in range(100_000)], min_support=0.5)
    assert len(single) == 100_000 and set(single.values()) == {1.0}


def test_matches_mlxtend_counts():
    mlxtend = pytest.importorskip("mlxtend.frequent_patterns")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    tx = [tuple(rng.choice(15, size=rng.integers(1, 8), replace=False)) for _ in range(300)]
    onehot = pd.DataFrame([[i in t for i in range(15)] for t in tx])
    ref = mlxtend.fpgrowth(onehot, min_support=30 / 300)
    expected = {tuple(sorted(s)): round(v * 300) for s, v in zip(ref["itemsets"], ref["support"])}
    assert frequent_itemsets(tx, None, 30) == expected


def test_explosion_guard():
    tx = [tuple(range(25))] * 3  # 2^25 - 1 frequent itemsets
    with pytest.raises(TooManyItemsets, match="max_itemsets"):
        frequent_itemsets(tx, None, 1, max_itemsets=10_000)
    assert issubclass(TooManyItemsets, MemoryError)
    assert len(frequent_itemsets(tx, None, 1, max_size=2)) == 25 + 300


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(transactions=[(1.5, 2)]), TypeError, "integers"),
    (dict(transactions=[1, 2]), TypeError, "iterables"),
    (dict(transactions=[("a",)]), TypeError, "integers"),
    (dict(transactions=[(True, 2)]), TypeError, "integers, got bool"),
    (dict(transactions=[(np.float64(2.0),)]), TypeError, "integers, got numpy.float64"),
    (dict(transactions=[np.array([1.0, 2.0])]), TypeError, "dtype float64"),
    (dict(transactions=[np.array([[1, 2]])]), TypeError, "iterables"),
    (dict(transactions=[(None,)]), TypeError, "integers"),
    (dict(transactions=5), TypeError, "iterables"),
    (dict(transactions=[(2**63,)]), ValueError, "64-bit"),
    (dict(transactions=[np.array([2**63], dtype=np.uint64)]), ValueError, "64-bit"),
    (dict(transactions=[(1,)], weights=[1.0, 2.0]), ValueError, "one entry per transaction"),
    (dict(transactions=[(1,)], weights=[np.nan]), ValueError, "finite"),
    (dict(transactions=[(1,)], weights=[-1.0]), ValueError, "non-negative"),
    (dict(transactions=[(1,)], min_support=0), ValueError, "min_support"),
    (dict(transactions=[(1,)], max_size=0), ValueError, "max_size"),
    (dict(transactions=[(1,)], max_itemsets=0), ValueError, "max_itemsets"),
])
def test_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        frequent_itemsets(**kwargs)


def test_any_integer_rows():
    """Lists, tuples, ranges, sets, generators and integer arrays of any width are the same rows."""
    want = frequent_itemsets([[1, 2], [2, 3]])
    rows = [([1, 2], (2, 3)), (range(1, 3), {2, 3}), (np.array([1, 2], np.uint8), np.array([2, 3], np.int32)),
            ([np.int64(1), np.uint16(2)], iter([2, 3])), (np.array([1, 0, 2])[::2], np.array([[2, 3]]).T[:, 0])]
    for a, b in rows:
        assert frequent_itemsets(x for x in (a, b)) == want


def test_caller_data_untouched():
    tx = [np.array([3, 1, 3])]
    w = np.array([2.0])
    frequent_itemsets(tx, w, 1)
    np.testing.assert_array_equal(tx[0], [3, 1, 3])
    np.testing.assert_array_equal(w, [2.0])


def test_list_outer_reads_like_any_iterable():
    """A list or tuple of rows is read in place (lists and tuples of exact ints directly, anything
    else row by row): the same CSR as a generator of the same rows."""
    import enum

    from pyinterp import _core

    class Code(enum.IntEnum):
        A = 7

    class Evil:  # an item whose __index__ empties the outer list while it is read
        def __init__(self, outer):
            self.outer = outer

        def __index__(self):
            self.outer.clear()
            return 1

    rows = [[3, -1, 2**62], (4, Code.A, 5), np.array([5, 6]), {8}, [], (np.int16(9), 10), range(2), [-(2**63)],
            [1, np.int64(2), 3, Code.A]]
    want = _core.transactions_csr(iter(rows))
    for outer in (rows, tuple(rows)):
        got = _core.transactions_csr(outer)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == np.int64
    np.testing.assert_array_equal(_core.transactions_csr([[1, 2], [3]])[0], [0, 2, 3])
    for bad, error in (([[1, True]], TypeError), ([(1,), [2**63]], ValueError), ([[1], 2], TypeError)):
        with pytest.raises(error):
            _core.transactions_csr(bad)
    outer = [[1]]
    outer.append([Evil(outer)])
    outer.append([2])
    with pytest.raises(ValueError, match="changed size"):
        _core.transactions_csr(outer)


def test_csr_dict():
    from pyinterp import _core

    indptr = np.array([0, 2, 2, 5], np.int64)
    items = np.array([1, 2000, -3, 0, 2**62], np.int64)
    got = _core.csr_dict(indptr, items, np.array([1.5, 2.0, 0.25]))
    assert list(got.items()) == [((1, 2000), 1.5), ((), 2.0), ((-3, 0, 2**62), 0.25)]
    assert all(type(i) is int for k in got for i in k) and all(type(v) is float for v in got.values())
    with pytest.raises(ValueError):
        _core.csr_dict(np.array([0, 3], np.int64), items, np.array([1.0]))
    with pytest.raises(ValueError):
        _core.csr_dict(indptr, items, np.array([1.0]))
    import gc  # the collector, held off while the tuples are made, is left as it was found

    assert not gc.is_tracked(got) and not any(gc.is_tracked(k) for k in got)  # tuples of ints: no cycles
    got[(7,)] = []  # a dict that later holds a container is tracked again
    assert gc.is_tracked(got)

    assert gc.isenabled()
    _core.csr_dict(indptr, items, np.array([1.5, 2.0, 0.25]))
    assert gc.isenabled()
    gc.disable()
    try:
        _core.csr_dict(indptr, items, np.array([1.5, 2.0, 0.25]))
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("n_items, n_tx, max_size", [
    (40, 600, 8),    # at most 64 labels: one word per row, masks keep the root's bits
    (150, 1500, 4),  # 65-256 labels: branches past label 64 renumber their frequent labels
    (300, 1500, 3),  # more than 256 labels: no bit sets, rows walked per branch
])
def test_root_bit_sets_match_brute_force(n_items, n_tx, max_size):
    rng = np.random.default_rng(n_items)
    p = 1.0 / np.arange(1, n_items + 1) ** 0.3
    tx = [tuple(rng.choice(n_items, size=rng.integers(1, 10), replace=False, p=p / p.sum()) * 3 - 50)
          for _ in range(n_tx)]
    w = rng.integers(1, 9, n_tx) / 8  # sums exact
    for min_support in (2.0, 6.0):
        want = brute_force(tx, w, min_support, max_size)
        for n_jobs in (1, 2):
            assert frequent_itemsets(tx, w, min_support, max_size, n_jobs=n_jobs) == want
    # 2-itemsets only: supports straight from the pair table
    assert frequent_itemsets(tx, w, 2.0, 2) == brute_force(tx, w, 2.0, 2)


@pytest.mark.parametrize("max_size", [2, 3, None])
def test_pair_table_alone_matches_brute_force(max_size):
    """Counts over 257-2048 labels: the root keeps a pair table without bit sets. A branch whose
    label has no frequent pair ends at the table, and so does every branch when sets stop at
    pairs. The others are mined from their rows. The result is brute force's, in the same order
    for any n_jobs."""
    rng = np.random.default_rng(11)
    p = 1.0 / np.arange(1, 601) ** 0.4
    tx = [tuple(rng.choice(600, size=rng.integers(1, 12), replace=False, p=p / p.sum())) for _ in range(3000)]
    groups = rng.choice(600, size=(10, 3), replace=False)  # planted triples: pairs and triples recur
    tx = [t + tuple(set(groups[k]) - set(t)) if k < 10 else t for t, k in zip(tx, rng.integers(0, 25, len(tx)))]
    want = brute_force(tx, [1.0] * len(tx), 12.0, max_size or 99)
    got = frequent_itemsets(tx, None, 12.0, max_size)
    assert got == want
    assert sum(len(k) == 1 for k in got) > 256 and sum(len(k) == 2 for k in got) > 20
    if max_size != 2:
        assert any(len(k) == 3 for k in got)
    assert list(frequent_itemsets(tx, None, 12.0, max_size, n_jobs=2).items()) == list(got.items())


@pytest.mark.parametrize("partners", [40, 90])
def test_pair_table_branches_of_few_and_many_frequent_pairs_match_brute_force(partners):
    """Counts over more than 256 labels: a branch with at most 64 frequent pairs cuts its rows to
    them by scanning each row up to its label (the root keeps no positions then); with one label
    of more than 64 (partners=90), every branch may be mined from its rows, which read positions.
    Either way the result is brute force's, in the same order for any n_jobs."""
    rng = np.random.default_rng(partners)
    tx = [tuple(rng.choice(400, size=rng.integers(1, 10), replace=False)) for _ in range(2500)]
    # the hub meets each friend often, and each friend is more frequent than the hub: the hub's
    # label comes after theirs, so its branch has them all before it
    hub, friends = 399, rng.choice(399, size=partners, replace=False)
    tx += [(hub, *rng.choice(friends, size=6, replace=False)) for _ in range(6 * partners)]
    tx += [tuple(rng.choice(friends, size=8, replace=False)) for _ in range(80 * partners)]
    tx += [(hub, friends[0], friends[1])] * 30  # a triple
    want = brute_force(tx, [1.0] * len(tx), 25.0, 3)
    got = frequent_itemsets(tx, None, 25.0, 3)
    assert got == want
    assert min(got[(f,)] for f in friends) > got[(hub,)]
    hub_pairs = sum(len(k) == 2 and hub in k for k in got)
    assert sum(len(k) == 1 for k in got) > 256 and (hub_pairs > 64) == (partners > 64)
    assert any(len(k) == 3 and hub in k for k in got)
    assert list(frequent_itemsets(tx, None, 25.0, 3, n_jobs=2).items()) == list(got.items())


def test_many_root_rows_thread_independent():
    """More than 65536 distinct rows: the pair table is summed over blocks of rows; the result
    (values and order) is the same for any n_jobs, and equals brute force."""
    rng = np.random.default_rng(7)
    tx = [tuple(rng.choice(100, size=3, replace=False)) for _ in range(140_000)]
    w = rng.random(len(tx))
    one = frequent_itemsets(tx, w, 60.0, 2, n_jobs=1)
    assert list(frequent_itemsets(tx, w, 60.0, 2, n_jobs=2).items()) == list(one.items())
    assert list(frequent_itemsets(tx, w, 60.0, None, n_jobs=2).items()) == list(frequent_itemsets(tx, w, 60.0).items())
    ref = brute_force(tx, w, 60.0, 2)
    ref = {k: v for k, v in ref.items() if abs(v - 60.0) > 1e-9}
    assert ref.keys() <= one.keys() and len(one) >= len(ref) > 100
    np.testing.assert_allclose([one[k] for k in ref], list(ref.values()), rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_dense_databases_match_brute_force(data):
    """Dense transactions over few items: branches mined by superset sums (every subset's support at
    once), beside bit-mask recursion where items are many; any max_size."""
    n_items = data.draw(st.integers(2, 22))
    n_tx = data.draw(st.integers(1, 70))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    tx = [tuple(rng.choice(n_items, size=rng.integers(0, min(n_items, 10) + 1), replace=False) - 5)
          for _ in range(n_tx)]
    w = rng.integers(0, 9, n_tx) / 8
    min_support = data.draw(st.integers(1, 16)) / 8
    max_size = data.draw(st.sampled_from([1, 2, 3, 5, None]))
    want = brute_force(tx, w, min_support, max_size or 99)
    got = frequent_itemsets(tx, w, min_support, max_size)
    assert got == want
    assert list(frequent_itemsets(tx, w, min_support, max_size, n_jobs=2).items()) == list(got.items())


@pytest.mark.parametrize("n_items, n_tx, weights, max_size", [
    (40, 600, None, None),     # unit weights: branches of 14+ labels mined from vertical bit sets
    (40, 600, "few", 4),       # whole weights 0-3: a row takes as many bit positions as it weighs
    (100, 700, None, 5),       # more than 64 labels: label words past the first
    (40, 600, "heavy", None),  # whole weights averaging over 2: bit masks and superset sums instead
])
def test_whole_weight_branches_match_brute_force(n_items, n_tx, weights, max_size):
    """Whole-number weights: supports counted as set bits of vertical bit sets (Eclat); the same
    sets, supports and order as brute force and for any n_jobs."""
    rng = np.random.default_rng(n_items + n_tx)
    p = 1.0 / np.arange(1, n_items + 1) ** 0.5
    tx = [tuple(rng.choice(n_items, size=rng.integers(1, 9), replace=False, p=p / p.sum()) * 7 - 30)
          for _ in range(n_tx)]
    w = {None: None, "few": rng.integers(0, 4, n_tx).astype(float),
         "heavy": rng.integers(1, 10, n_tx).astype(float)}[weights]
    for min_support in (3.0, 8.0):
        want = brute_force(tx, [1.0] * n_tx if w is None else w, min_support, max_size or 99)
        got = frequent_itemsets(tx, w, min_support, max_size)
        assert got == want and len(got) > 100
        assert list(frequent_itemsets(tx, w, min_support, max_size, n_jobs=2).items()) == list(got.items())


def test_many_rows_parallel_root_thread_independent():
    """More than 4096 rows: with 2 threads the root's rows are relabelled in parallel blocks and
    merged in order afterwards; duplicated rows merge into rows of weight 2."""
    rng = np.random.default_rng(21)
    p = 1.0 / np.arange(1, 61)
    tx = [tuple(rng.choice(60, size=rng.integers(1, 8), replace=False, p=p / p.sum())) for _ in range(9000)]
    tx += tx[:700]
    one = frequent_itemsets(tx, None, 25)
    assert list(frequent_itemsets(tx, None, 25, n_jobs=2).items()) == list(one.items())
    assert one == brute_force(tx, [1.0] * len(tx), 25, 99)


def test_int_items_around_one_digit():
    """Ints of one 30-bit digit are read in place; larger and negative ones as before, bools refused."""
    from pyinterp import _core

    row = [0, 1, -1, 2**30 - 1, -(2**30 - 1), 2**30, -(2**30), 2**62, -(2**63), 2**63 - 1]
    indptr, items = _core.transactions_csr([row, tuple(row)])
    assert indptr.tolist() == [0, 10, 20] and items.tolist() == row * 2
    with pytest.raises(TypeError, match="bool"):
        _core.transactions_csr([[1, True]])


def test_calls_in_turn_reuse_the_root_scratch():
    """The root database (with its merging table and, with 2 threads, the relabelled rows), its bit
    sets and occurrence index are kept by the calling thread between calls: calls on other
    databases in between (no bit sets, positions, fewer or more rows, the parallel root) leave no
    trace."""
    rng = np.random.default_rng(4)
    small = [tuple(rng.choice(30, size=rng.integers(1, 8), replace=False)) for _ in range(300)]
    wide = [tuple(rng.choice(300, size=rng.integers(1, 6), replace=False)) for _ in range(900)]
    many = [tuple(rng.choice(40, size=rng.integers(1, 6), replace=False)) for _ in range(6000)]
    calls = [(small, 4, None, 1), (many, 60, None, 2), (wide, 3, 3, 1), (small[:50], 2, None, 2), (many, 90, 3, 1),
             (small, 6, 4, 1)]
    for tx, min_support, max_size, n_jobs in calls:
        got = frequent_itemsets(tx, None, min_support, max_size, n_jobs=n_jobs)
        assert got == brute_force(tx, [1.0] * len(tx), min_support, max_size or 99)
