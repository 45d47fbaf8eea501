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

    def begin_tree(self, slot, w, min_weight_leaf):
        for block in self.blocks:
            block.begin_tree(w, min_weight_leaf, slot)

    def _ask(self, method, asks, **slot):
        self.asked[method] += 1
        answers = [None if ask is None else getattr(block, method)(ask, **slot)
                   for block, ask in zip(self.blocks, asks)]
        return self.tamper(method, answers) if self.tamper else answers

    def search(self, slot, asks):
        return self._ask("search", asks, slot=slot)

    def partition(self, asks):
        return self._ask("partition", asks)


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


def test_a_block_checks_each_ask_before_it_reads_its_columns():
    X, y, classes, n_classes, params = data("regression", n=50)
    X = X[:, :4].copy()
    block = _core.ColumnBlock(X, y, None, 0, params, 0)
    ask = {"rows": np.arange(50, dtype=np.uint32), "row_begin": np.array([0, 50]), "values": np.array([y.mean()]),
           "lower": np.array([-np.inf]), "upper": np.array([np.inf]), "features": np.array([0, 3]),
           "feature_begin": np.array([0, 2])}
    with pytest.raises(ValueError, match="before begin_tree"):
        block.search(ask)
    block.begin_tree(np.ones(50), 0.0)
    answer = block.search(ask)
    assert np.unpackbits(answer["varies"], bitorder="little").tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    for key, value, message in [("rows", np.array([0, 60] + list(range(2, 50)), dtype=np.uint32), "increasing rows"),
                                ("features", np.array([0, 4]), "does not hold"),
                                ("row_begin", np.array([0, 49]), "inconsistent row offsets"),
                                ("values", np.zeros(2), "values or bounds")]:
        with pytest.raises(ValueError, match=message):
            block.search({**ask, key: value})
    with pytest.raises(ValueError, match="one weight per row"):
        block.begin_tree(np.ones(49), 0.0)
    with pytest.raises(ValueError, match="finite and >= 0"):
        block.begin_tree(np.full(50, np.nan), 0.0)
    with pytest.raises(TypeError):
        pickle.dumps(block)


def test_a_search_answer_carries_only_the_candidates_that_raise_their_nodes_best():
    """Each candidate's bit (varies) and, per node, the splits of the candidates whose proxy beats
    every earlier one of the node's in the ask (best_at: the prefix maxima), each as that
    candidate's search alone finds it: the builder's pick never takes any other."""
    X, y, classes, n_classes, params = data("regression", n=120)
    X[:, 5] = 0.25  # a candidate that does not vary
    block = _core.ColumnBlock(np.ascontiguousarray(X), y, None, 0, params, 0)
    block.begin_tree(np.ones(len(X)), 0.0)
    features = [[2, 5, 9, 17, 3, 0, 11, 4, 8], [3, 17, 9, 1]]
    nodes = [np.arange(0, 120, dtype=np.uint32), np.arange(0, 120, 2, dtype=np.uint32)]

    def ask_of(nodes, features):
        return {"rows": np.concatenate(nodes), "row_begin": np.cumsum([0] + [len(r) for r in nodes]),
                "values": np.array([y[r].mean() for r in nodes]), "lower": np.full(len(nodes), -np.inf),
                "upper": np.full(len(nodes), np.inf), "features": np.concatenate(features),
                "feature_begin": np.cumsum([0] + [len(f) for f in features])}

    answer = block.search(ask_of(nodes, features))
    varies, best_at, offset = [], [], 0
    proxies = {}
    for rows, fs in zip(nodes, features):
        top = -np.inf
        for k, f in enumerate(fs):
            alone = block.search(ask_of([rows], [[f]]))
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
