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

    def __init__(self, X, y, classes, n_classes, params, bounds, tamper=None):
        self.blocks = [_core.ColumnBlock(np.ascontiguousarray(X[:, a:b]), y, classes, n_classes, params, a)
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


def search_ask(ranges, values, features, **moves):
    """A search ask of nodes over the tree's rows [a, b) for (a, b) in ranges, after moves."""
    return {"start": np.array([a for a, _ in ranges]), "end": np.array([b for _, b in ranges]),
            "values": np.asarray(values, dtype=np.float64), "lower": np.full(len(ranges), -np.inf),
            "upper": np.full(len(ranges), np.inf), "features": np.concatenate(features).astype(np.int64),
            "feature_begin": np.cumsum([0] + [len(f) for f in features]), **NO_MOVES, **moves}


def test_a_block_checks_each_ask_before_it_reads_its_columns():
    X, y, classes, n_classes, params = data("regression", n=50)
    X = X[:, :4].copy()
    block = _core.ColumnBlock(X, y, None, 0, params, 0)
    ask = search_ask([(0, 50)], [y.mean()], [[0, 3]])
    with pytest.raises(ValueError, match="before begin_tree"):
        block.search(ask)
    block.begin_tree(np.ones(50), 0.0)
    answer = block.search(ask)
    assert np.unpackbits(answer["varies"], bitorder="little").tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    for key, value, message in [("end", np.array([51]), "not a range of the tree's"),
                                ("start", np.array([50]), "not a range of the tree's"),
                                ("features", np.array([0, 4]), "does not hold"),
                                ("feature_begin", np.array([0, 1]), "inconsistent feature offsets"),
                                ("values", np.zeros(2), "values or bounds"),
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
    with pytest.raises(TypeError):
        pickle.dumps(block)


def test_a_block_keeps_the_trees_rows_in_node_order_as_the_builder_parts_them():
    """The block that parts a node parts its own copy of the rows; another block makes the same
    move when its next ask brings it (as bits), so both then search the same children. The rows
    are those of positive weight, the out-of-bag rows those begin_tree names."""
    X, y, classes, n_classes, params = data("regression", n=80)
    owner = _core.ColumnBlock(np.ascontiguousarray(X[:, :12]), y, None, 0, params, 0)
    other = _core.ColumnBlock(np.ascontiguousarray(X[:, 12:]), y, None, 0, params, 12)
    w = np.ones(80)
    w[::5] = 0.0
    rows = np.flatnonzero(w > 0)
    oob = np.flatnonzero(w == 0).astype(np.uint32)
    for block in (owner, other):
        block.begin_tree(w, 0.0, 3, oob)
    root = owner.search(search_ask([(0, len(rows))], [y[rows].mean()], [[3]]), 3)
    split = {k: root[k] for k in ("proxy", "lo", "hi", "missing_left", "with_codes", "left_codes")}
    parted = owner.partition({"start": np.array([0]), "end": np.array([len(rows)]), "oob_start": np.array([0]),
                              "oob_end": np.array([len(oob)]), "feature": np.array([3]), **split, **NO_MOVES}, 3)
    left = np.unpackbits(parted["row_left"], count=len(rows), bitorder="little")
    oob_left = np.unpackbits(parted["oob_left"], count=len(oob), bitorder="little")
    x, t = X[:, 3], parted["threshold"][0]
    goes_left = np.where(np.isnan(x), parted["missing_go_to_left"][0] == 1, x <= t)
    np.testing.assert_array_equal(left, goes_left[rows])
    np.testing.assert_array_equal(oob_left, goes_left[oob])
    mid = int(left.sum())
    children = [rows[left == 1], rows[left == 0]]
    values = [y[c].mean() for c in children]
    move = dict(move_start=np.array([0]), move_end=np.array([len(rows)]), move_oob_start=np.array([0]),
                move_oob_end=np.array([len(oob)]), move_row_left=parted["row_left"], move_oob_left=parted["oob_left"])
    moved = other.search(search_ask([(0, mid), (mid, len(rows))], values, [[0, 5], [2]], **move), 3)
    # the owner searches the other's columns in a block of the same columns that made no move
    fresh = _core.ColumnBlock(np.ascontiguousarray(X[:, 12:]), y, None, 0, params, 12)
    w_left = np.zeros(80)
    w_left[children[0]] = 1.0
    fresh.begin_tree(w_left, 0.0)
    alone = fresh.search(search_ask([(0, mid)], values[:1], [[0, 5]]))
    for key in ("proxy", "lo", "hi", "best_at"):
        np.testing.assert_array_equal(moved[key][:len(alone[key])], alone[key], err_msg=key)
    # a second partition of the same node by a block that has made the move would part its
    # children: the owner's copy is already parted, so its children are what it searches
    again = owner.search(search_ask([(0, mid)], values[:1], [[3, 7]]), 3)
    fresh_owner = _core.ColumnBlock(np.ascontiguousarray(X[:, :12]), y, None, 0, params, 0)
    fresh_owner.begin_tree(w_left, 0.0)
    np.testing.assert_array_equal(again["proxy"], fresh_owner.search(search_ask([(0, mid)], values[:1],
                                                                                [[3, 7]]))["proxy"])


def test_a_search_answer_carries_only_the_candidates_that_raise_their_nodes_best():
    """Each candidate's bit (varies) and, per node, the splits of the candidates whose proxy beats
    every earlier one of the node's in the ask (best_at: the prefix maxima), each as that
    candidate's search alone finds it: the builder's pick never takes any other."""
    X, y, classes, n_classes, params = data("regression", n=120)
    X[:, 5] = 0.25  # a candidate that does not vary
    block = _core.ColumnBlock(np.ascontiguousarray(X), y, None, 0, params, 0)
    block.begin_tree(np.ones(len(X)), 0.0)
    features = [[2, 5, 9, 17, 3, 0, 11, 4, 8], [3, 17, 9, 1]]
    nodes = [(0, 120), (30, 90)]
    values = [y[a:b].mean() for a, b in nodes]
    answer = block.search(search_ask(nodes, values, features))
    varies, best_at, offset = [], [], 0
    proxies = {}
    for node, value, fs in zip(nodes, values, features):
        top = -np.inf
        for k, f in enumerate(fs):
            alone = block.search(search_ask([node], [value], [[f]]))
            varies.append(np.unpackbits(alone["varies"], bitorder="little")[0])
            proxy = alone["proxy"][0] if len(alone["best_at"]) else -np.inf
            if proxy > top:
                top = proxy
                best_at.append(offset + k)
                proxies[offset + k] = (proxy, alone["lo"][0], alone["hi"][0])
        offset += len(fs)
    assert varies[1] == 0 and sum(varies) == offset - 1
    np.testing.assert_array_equal(np.unpackbits(answer["varies"], bitorder="little")[:offset], varies)
    assert answer["best_at"].tolist() == best_at
    assert 2 < len(best_at) < offset - 3
    for c, at in enumerate(best_at):
        assert (answer["proxy"][c], answer["lo"][c], answer["hi"][c]) == proxies[at]
    assert "feature" not in answer
