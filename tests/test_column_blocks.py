"""The feature-parallel fit through Python (_core.fit_forest_blocks and _core.ColumnBlock): the
blocks' asks and answers cross as dicts of arrays, as Dask ships them. The trees equal the fit on
the whole X; a malformed answer or ask is refused by name before it is read."""

import pickle

import numpy as np
import pytest

from pyinterp import _core


class InProcess:
    """Blocks answering in this process, each made from its own columns only; `tamper` may change
    an answer before the builder reads it."""

    def __init__(self, X, y, classes, n_classes, params, bounds, tamper=None, feature_weights=None):
        self.blocks = [_core.ColumnBlock(np.ascontiguousarray(X[:, a:b]), y, classes, n_classes, params, a,
                                         X.shape[1], feature_weights)
                       for a, b in zip(bounds[:-1], bounds[1:])]
        self.tamper = tamper
        self.asked = {"search": 0, "partition": 0}

    def begin_tree(self, slot, w, min_weight_leaf, oob):
        for block in self.blocks:
            block.begin_tree(w, min_weight_leaf, slot, oob)

    def _ask(self, method, asks, **slot):
        self.asked[method] += 1
        answers = [None if ask is None else getattr(block, method)(ask, **slot)
                   for block, ask in zip(self.blocks, asks)]
        return self.tamper(method, answers) if self.tamper else answers

    def search(self, slot, asks):
        return self._ask("search", asks, slot=slot)

    def partition(self, slot, asks):
        return self._ask("partition", asks, slot=slot)


def data(task, n=300, p=23, seed=0):
    rng = np.random.RandomState(seed)
    X = np.round(rng.rand(n, p) * 8) / 8
    X[rng.rand(n, p) < 0.03] = np.nan
    signal = np.nan_to_num(X[:, 3]) + np.nan_to_num(X[:, 17]) * np.nan_to_num(X[:, 9]) + 0.2 * rng.randn(n)
    params = _core.ForestParams()
    params.n_estimators, params.n_draws, params.max_features, params.seed = 4, n, 6, 11
    params.record_oob_leaves = True
    if task == "regression":
        return X, signal, None, 0, params
    params.criterion = _core.Criterion.entropy
    return X, None, np.digitize(signal, np.quantile(signal, [0.3, 0.7])).astype(np.int32), 3, params


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("bounds", [[0, 23], [0, 1, 12, 23], [0, 5, 6, 7, 20, 23]])
def test_blocks_answering_through_python_grow_the_forest_of_the_whole_X(task, bounds):
    X, y, classes, n_classes, params = data(task)
    whole = _core.fit_forest(X, y, classes, n_classes, None, None, params)
    blocks = InProcess(X, y, classes, n_classes, params, bounds)
    parted = _core.fit_forest_blocks(blocks, bounds, len(X), y, classes, n_classes, None, None, params)
    for a, b in zip(whole.__getstate__()["trees"], parted.__getstate__()["trees"]):
        for field in a:
            np.testing.assert_array_equal(a[field], b[field], err_msg=field)
    np.testing.assert_array_equal(whole.apply_oob(X, 1, True), parted.apply_oob(X, 1, True))
    np.testing.assert_array_equal(whole.predict(X, 1), parted.predict(X, 1))
    # One round of searches per level that splits, seldom more: far fewer asks than nodes.
    levels = sum(int(t["depth"].max()) for t in whole.__getstate__()["trees"])
    assert levels <= blocks.asked["search"] < 2 * levels
    assert levels <= blocks.asked["partition"] <= blocks.asked["search"]


def tampered(method_name, change):
    def tamper(method, answers):
        if method == method_name:
            for answer in answers:
                if answer is not None:
                    change(answer)
                    break
        return answers
    return tamper


@pytest.mark.parametrize("method, change, message", [
    ("search", lambda a: a.__setitem__("varies", a["varies"][:-1]), "does not match its ask"),
    ("search", lambda a: a.__setitem__("best_at", a["best_at"] + 10**6), "no candidate it was asked about"),
    ("search", lambda a: a.__setitem__("best_at", a["best_at"][::-1].copy()), "no candidate it was asked about"),
    ("search", lambda a: a.pop("proxy"), "lacks 'proxy'"),
    ("search", lambda a: a.__setitem__("lo", a["lo"][:-1]), "different lengths"),
    ("partition", lambda a: a.__setitem__("row_left", a["row_left"][:-1]), "one bit per row"),
    ("partition", lambda a: a.__setitem__("oob_left", np.append(a["oob_left"], np.uint8(0))), "one bit per row"),
    ("partition", lambda a: a["missing_go_to_left"].__setitem__(0, 2), "sides other than 0 and 1"),
    ("partition", lambda a: a.__setitem__("threshold", np.zeros(0)), "does not match its ask"),
])
def test_a_malformed_answer_is_refused_before_it_is_read(method, change, message):
    X, y, classes, n_classes, params = data("regression")
    bounds = [0, 10, 23]
    blocks = InProcess(X, y, classes, n_classes, params, bounds, tampered(method, change))
    with pytest.raises(ValueError, match=message):
        _core.fit_forest_blocks(blocks, bounds, len(X), y, classes, n_classes, None, None, params)


def test_blocks_that_answer_other_than_a_list_per_block_are_refused():
    X, y, classes, n_classes, params = data("regression")
    bounds = [0, 10, 23]
    blocks = InProcess(X, y, classes, n_classes, params, bounds, lambda method, answers: answers[:1])
    with pytest.raises(ValueError, match="one answer per block"):
        _core.fit_forest_blocks(blocks, bounds, len(X), y, classes, n_classes, None, None, params)
    for bad in ([0], [0, 5, 5, 23], [1, 23]):
        with pytest.raises(ValueError, match="bounds|at least one column"):
            _core.fit_forest_blocks(blocks, bad, len(X), y, classes, n_classes, None, None, params)


NO_MOVES = {"move_start": np.zeros(0, np.int64), "move_end": np.zeros(0, np.int64),
            "move_oob_start": np.zeros(0, np.int64), "move_oob_end": np.zeros(0, np.int64),
            "move_row_left": np.zeros(0, np.uint8), "move_oob_left": np.zeros(0, np.uint8)}


def search_ask(ranges, values, n_candidates, draws=(0, 0), with_always=1, **moves):
    """A search ask of nodes over the tree's rows [a, b) for (a, b) in ranges, after moves: each
    node's candidates the block's always_features (with_always) and then draws [draws) of stream
    7 + k, n_candidates[k] of them in the block."""
    k = len(ranges)
    return {"start": np.array([a for a, _ in ranges]), "end": np.array([b for _, b in ranges]),
            "values": np.asarray(values, dtype=np.float64), "lower": np.zeros(0), "upper": np.zeros(0),
            "stream": np.arange(7, 7 + k, dtype=np.uint64), "draw_from": np.full(k, draws[0]),
            "draw_to": np.full(k, draws[1]), "with_always": np.full(k, with_always, dtype=np.uint8),
            "feature_begin": np.cumsum([0, *n_candidates]), **NO_MOVES, **moves}


def block_of(X, y, params, first=0, always=(), p=None):
    """A block of X's columns, the whole matrix's [first, ...) of p, whose nodes' candidates are
    `always` (the whole matrix's indices) before any draws."""
    params.always_features = list(always)
    return _core.ColumnBlock(np.ascontiguousarray(X), y, None, 0, params, first, p or first + X.shape[1])


def test_a_block_checks_each_ask_before_it_reads_its_columns():
    X, y, classes, n_classes, params = data("regression", n=50)
    X = X[:, :4].copy()
    block = block_of(X, y, params, always=[0, 3])
    ask = search_ask([(0, 50)], [y.mean()], [2])
    with pytest.raises(ValueError, match="before begin_tree"):
        block.search(ask)
    block.begin_tree(np.ones(50), 0.0)
    answer = block.search(ask)
    assert np.unpackbits(answer["varies"], bitorder="little").tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    assert set(answer["feature"]) <= {0, 3}
    for key, value, message in [("end", np.array([51]), "not a range of the tree's"),
                                ("start", np.array([50]), "not a range of the tree's"),
                                ("feature_begin", np.array([0, 1]), "counts other candidates"),
                                ("draw_to", np.array([5]), "draws beyond its columns'"),
                                ("draw_from", np.array([-1]), "draws beyond its columns'"),
                                ("stream", np.zeros(2, np.uint64), "draws of another size"),
                                ("values", np.zeros(2), "values or bounds"),
                                ("lower", np.zeros(1), "values or bounds"),
                                ("move_start", np.array([0]), "ranges of different lengths"),
                                ("move_row_left", np.array([1], np.uint8), "not one bit per row")]:
        with pytest.raises(ValueError, match=message):
            block.search({**ask, key: value})
    # moves are ranges of the tree's rows, one bit a row
    far = dict(move_start=np.array([40]), move_end=np.array([60]), move_oob_start=np.array([0]),
               move_oob_end=np.array([0]), move_row_left=np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match="rows are not a range of the tree's"):
        block.search({**ask, **far})
    with pytest.raises(ValueError, match="a range of rows that is not one"):
        block.search({**ask, **far, "move_end": np.array([30])})
    with pytest.raises(ValueError, match="one weight per row"):
        block.begin_tree(np.ones(49), 0.0)
    with pytest.raises(ValueError, match="finite and >= 0"):
        block.begin_tree(np.full(50, np.nan), 0.0)
    with pytest.raises(ValueError, match="out-of-bag rows must be increasing"):
        block.begin_tree(np.ones(50), 0.0, 0, np.array([3, 2], np.uint32))
    with pytest.raises(ValueError, match="out-of-bag rows must be increasing"):
        block.begin_tree(np.ones(50), 0.0, 0, np.array([50], np.uint32))
    with pytest.raises(ValueError, match="past the whole matrix's columns"):
        _core.ColumnBlock(X, y, None, 0, params, 2, 5)
    with pytest.raises(ValueError, match="feature_weights"):
        _core.ColumnBlock(X, y, None, 0, params, 0, 4, np.ones(3))
    with pytest.raises(TypeError):
        pickle.dumps(block)


def test_a_block_draws_the_candidates_the_builder_draws():
    """Draws [from, to) of a node's stream, those of the block's columns, after the always_features
    it holds: the candidates answered are those; the count the ask gives is checked."""
    X, y, classes, n_classes, params = data("regression", n=60)
    params.seed = 5
    whole = block_of(X, y, params)
    whole.begin_tree(np.ones(60), 0.0)
    ask = search_ask([(0, 60)], [y.mean()], [23], draws=(0, 23), with_always=0)
    everything = whole.search(ask)  # every column drawn: the answer's best is the node's best
    assert len(everything["best_at"]) >= 1
    best = everything["feature"][-1]
    # a block of columns [10, 23) holding the best column, drawing the same stream
    part = block_of(X[:, 10:], y, params, first=10, p=23)
    part.begin_tree(np.ones(60), 0.0)
    answer = part.search(search_ask([(0, 60)], [y.mean()], [13], draws=(0, 23), with_always=0))
    if best >= 10:
        assert answer["feature"][-1] == best - 10 and answer["proxy"][-1] == everything["proxy"][-1]
    with pytest.raises(ValueError, match="counts other candidates"):
        part.search(search_ask([(0, 60)], [y.mean()], [12], draws=(0, 23), with_always=0))
    # draws [0, 11) of the stream: how many fall in [10, 23) is the builder's business; a wrong
    # count is refused whichever it is
    counts = []
    for n in range(0, 12):
        try:
            part.search(search_ask([(0, 60)], [y.mean()], [n], draws=(0, 11), with_always=0))
            counts.append(n)
        except ValueError as e:
            assert "counts other candidates" in str(e)
    assert len(counts) == 1 and 0 < counts[0] < 11


def test_blocks_drawing_with_another_seed_are_refused():
    X, y, classes, n_classes, params = data("regression")
    bounds = [0, 10, 23]
    other = _core.ForestParams()
    other.n_estimators, other.n_draws, other.max_features, other.seed = 4, len(X), 6, 12
    blocks = InProcess(X, y, classes, n_classes, other, bounds)
    with pytest.raises(ValueError, match="other candidates|not asked about"):
        _core.fit_forest_blocks(blocks, bounds, len(X), y, classes, n_classes, None, None, params)
    with pytest.raises(ValueError, match="other candidates|not asked about"):
        _core.fit_forest_blocks(InProcess(X, y, classes, n_classes, other, [0, 23]), [0, 23], len(X), y, classes,
                                n_classes, None, None, params)


def test_a_block_keeps_the_trees_rows_in_node_order_as_the_builder_parts_them():
    """The block that parts a node parts its own copy of the rows; another block makes the same
    move when its next ask brings it (as bits), so both then search the same children. The rows
    are those of positive weight, the out-of-bag rows those begin_tree names."""
    X, y, classes, n_classes, params = data("regression", n=80)
    owner = block_of(X[:, :12], y, params, always=[3, 7, 0, 5, 2], p=23)
    other = block_of(X[:, 12:], y, params, first=12, always=[3, 7, 0, 5, 2, 12, 17], p=23)
    w = np.ones(80)
    w[::5] = 0.0
    rows = np.flatnonzero(w > 0)
    oob = np.flatnonzero(w == 0).astype(np.uint32)
    for block in (owner, other):
        block.begin_tree(w, 0.0, 3, oob)
    root = owner.search(search_ask([(0, len(rows))], [y[rows].mean()], [5]), 3)
    top = len(root["best_at"]) - 1
    split = {k: root[k][top:top + 1] for k in ("proxy", "feature", "lo", "hi", "missing_left")}
    split.update(with_codes=np.zeros(0, np.int64), left_codes=np.zeros(0, np.uint64))
    parted = owner.partition({"start": np.array([0]), "end": np.array([len(rows)]), "oob_start": np.array([0]),
                              "oob_end": np.array([len(oob)]), **split, **NO_MOVES}, 3)
    left = np.unpackbits(parted["row_left"], count=len(rows), bitorder="little")
    oob_left = np.unpackbits(parted["oob_left"], count=len(oob), bitorder="little")
    x, t = X[:, split["feature"][0]], parted["threshold"][0]
    goes_left = np.where(np.isnan(x), parted["missing_go_to_left"][0] == 1, x <= t)
    np.testing.assert_array_equal(left, goes_left[rows])
    np.testing.assert_array_equal(oob_left, goes_left[oob])
    assert 0 < left.sum() < len(rows)
    mid = int(left.sum())
    children = [rows[left == 1], rows[left == 0]]
    values = [y[c].mean() for c in children]
    move = dict(move_start=np.array([0]), move_end=np.array([len(rows)]), move_oob_start=np.array([0]),
                move_oob_end=np.array([len(oob)]), move_row_left=parted["row_left"], move_oob_left=parted["oob_left"])
    moved = other.search(search_ask([(0, mid), (mid, len(rows))], values, [2, 2], **move), 3)
    # the owner made its own move as it answered: it is asked about its rows' ranges alone
    owned = owner.search(search_ask([(0, mid), (mid, len(rows))], values, [5, 5]), 3)
    for answer, columns, first, n in ((moved, X[:, 12:], 12, 2), (owned, X[:, :12], 0, 5)):
        for k, child in enumerate(children):  # as blocks whose only rows are the child's find it
            w_child = np.zeros(80)
            w_child[child] = 1.0
            fresh = block_of(columns, y, params, first=first, always=[3, 7, 0, 5, 2, 12, 17], p=23)
            fresh.begin_tree(w_child, 0.0)
            assert node_answer(answer, k, n) == node_answer(fresh.search(search_ask([(0, len(child))],
                                                                                    values[k:k + 1], [n])), 0, n)


def node_answer(answer, k, n):
    """Node k's part of a search answer of n candidates per node: its bits and its splits."""
    bits = np.unpackbits(answer["varies"], bitorder="little")[k * n:(k + 1) * n].tolist()
    at = [c for c, i in enumerate(answer["best_at"]) if k * n <= i < (k + 1) * n]
    return bits, [(answer["best_at"][c] - k * n, answer["proxy"][c], answer["feature"][c], answer["lo"][c],
                   answer["hi"][c]) for c in at]


def test_a_search_answer_carries_only_the_candidates_that_raise_their_nodes_best():
    """Each candidate's bit (varies) and, per node, the splits of the candidates whose proxy beats
    every earlier one of the node's in the ask (best_at: the prefix maxima), each as that
    candidate's search alone finds it: the builder's pick never takes any other."""
    X, y, classes, n_classes, params = data("regression", n=120)
    X[:, 5] = 0.25  # a candidate that does not vary
    features = [2, 5, 9, 17, 3, 0, 11, 4, 8]
    block = block_of(X, y, params, always=features)
    block.begin_tree(np.ones(len(X)), 0.0)
    nodes = [(0, 120), (30, 90)]
    values = [y[a:b].mean() for a, b in nodes]
    answer = block.search(search_ask(nodes, values, [9, 9]))
    varies, best_at, offset = [], [], 0
    splits = {}
    for node, value in zip(nodes, values):
        top = -np.inf
        for k, f in enumerate(features):
            alone = block_of(X, y, params, always=[f])
            alone.begin_tree(np.ones(len(X)), 0.0)
            own = alone.search(search_ask([node], [value], [1]))
            varies.append(np.unpackbits(own["varies"], bitorder="little")[0])
            proxy = own["proxy"][0] if len(own["best_at"]) else -np.inf
            if proxy > top:
                top = proxy
                best_at.append(offset + k)
                splits[offset + k] = (proxy, f, own["lo"][0], own["hi"][0])
        offset += len(features)
    assert varies[1] == 0 and varies[10] == 0 and sum(varies) == offset - 2
    np.testing.assert_array_equal(np.unpackbits(answer["varies"], bitorder="little")[:offset], varies)
    assert answer["best_at"].tolist() == best_at
    assert 2 < len(best_at) < offset - 3
    for c, at in enumerate(best_at):
        assert (answer["proxy"][c], answer["feature"][c], answer["lo"][c], answer["hi"][c]) == splits[at]
