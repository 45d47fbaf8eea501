"""A forest fitted with X's columns spread over Dask workers: the feature-parallel fit (see
docs/user/cluster.md and docs/dev/distributed.md).

X is a ``dask.array`` chunked by columns. Each worker turns the chunks it computed into
``_core.ColumnBlock`` objects (its columns' codes and an exact split search), which stay where
they were made. This process holds y, the rows of every node and the trees, and grows each tree
level by level (``_core.fit_forest_blocks``): per level it sends each block the level's nodes'
rows and the candidates the block holds, takes back their best splits, picks each node's split
in draw order, and asks the block holding a chosen column which rows go left. X itself never
leaves the workers that computed it; the trees equal those one process grows on the whole X.
"""

from __future__ import annotations

import copy
import threading
import time

import numpy as np

from .. import _core
from .._distributed import aligned


def is_dask_array(X) -> bool:
    """Whether X is a dask array (recognised without importing dask)."""
    return hasattr(X, "__dask_graph__") and type(X).__module__.startswith("dask.array")


def check_columns_X(X, name="X"):
    """A dask array X checked for a feature-parallel fit: 2-d, of a numeric dtype the core reads."""
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (rows x features), got a dask array of shape {X.shape}")
    if any(np.isnan(s) for s in X.shape):
        raise ValueError(f"{name} has unknown chunk sizes (NaN in its shape): call {name}.compute_chunk_sizes() first")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{name} holds {X.dtype} values; a feature-parallel fit reads numbers (bool, integers, floats)")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} has shape {X.shape}: a fit needs at least one row and one column")


def _client():
    try:
        from distributed import get_client
    except ImportError as e:  # dask.array installed without distributed
        raise ImportError("a dask array X is fitted feature-parallel on a Dask cluster: pip install "
                          "'interptrees[dask]' and create a dask.distributed Client first") from e
    try:
        return get_client()
    except ValueError as e:
        raise ValueError("a dask array X is fitted feature-parallel on a Dask cluster, and no Client is running: "
                         "create one first (dask.distributed.Client(...)), or fit X.compute() in this process") from e


class BlockActor:
    """One block on the worker that made it, as a Dask actor: its methods are called from this
    process directly (not through the scheduler: a round trip costs about a millisecond, not a
    task's tens), and an actor never moves. Arrays arrive at any byte offset; the block reads X
    through memcpy and copies the asks, so only its targets are aligned here."""

    def __init__(self, chunk, y, classes, n_classes, params, first):
        params = copy.copy(params)
        params.n_threads = 1  # a worker runs as many blocks' asks at once as it has threads
        self.block = _core.ColumnBlock(chunk, aligned(y), aligned(classes), n_classes, params, first)

    def codes_nbytes(self):
        return self.block.codes_nbytes

    def begin_tree(self, slot, w, min_weight_leaf):
        self.block.begin_tree(w, min_weight_leaf, slot)

    def search(self, slot, ask):
        return self.block.search(ask, slot)

    def partition(self, ask):
        return self.block.partition(ask)


# Trees a feature-parallel fit grows at once (at least): each waits on the blocks' answers most of
# the time, so more trees than cores keep the workers busy.
TREES_IN_FLIGHT = 8


def _nbytes(message) -> int:
    return sum(a.nbytes for a in message.values())


class DaskBlocks:
    """X's column chunks as blocks (BlockActor) on the workers that computed them, answering the
    builder's asks (begin_tree, search, partition: one ask per block, all sent before any answer
    is awaited).

    ``bytes_sent`` / ``bytes_received`` count the asks' and answers' arrays per block (the messages'
    payload; Dask's framing adds a few hundred bytes a call); ``codes_nbytes`` each block's codes."""

    def __init__(self, client, X, y, classes, n_classes, params):
        self.client = client
        X = X.rechunk({0: -1})  # a block holds all rows of its columns
        widths = X.chunks[1]
        self.bounds = [0, *np.cumsum(widths).tolist()]
        chunks = client.compute(list(X.to_delayed().ravel()))
        # Made where its chunk was computed (the task follows its data); the chunk's future is let
        # go, the block keeps the array.
        made = [client.submit(BlockActor, chunk, y, classes, n_classes, params, first, actor=True, pure=False)
                for chunk, first in zip(chunks, self.bounds[:-1])]
        self.actors = client.gather(made)  # raises a block's error (a category value, say) here
        self._made = made  # the actors live as long as their futures
        held = client.who_has(made)
        self.workers = [sorted(held[f.key]) for f in made]  # where each block is
        del chunks
        self.codes_nbytes = np.array(self._run("codes_nbytes", [()] * len(self.actors)))
        self.bytes_sent = np.zeros(len(self.actors), dtype=np.int64)
        self.bytes_received = np.zeros(len(self.actors), dtype=np.int64)
        self._counting = threading.Lock()  # trees in flight count from several threads

    def _run(self, method, args):
        """actor b's method(*args[b]) for each b whose args are not None, all sent before any is
        awaited; the results (None where nothing ran). A block whose worker died raises."""
        calls, results = {}, {}
        try:
            for b, a in enumerate(args):
                if a is not None:
                    calls[b] = getattr(self.actors[b], method)(*a)
            for b, call in calls.items():
                results[b] = call.result()
        except (ValueError, TypeError):  # a block refused its ask: the error is its own
            raise
        except Exception as e:
            # Dask reports a lost actor in several ways (a closed connection, a missing key, the
            # proxy's own AttributeError), sometimes before the scheduler has seen the worker go:
            # its absence, within a few seconds, is what tells.
            lost = self._lost_block()
            if lost is None:
                raise
            first, end = self.bounds[lost], self.bounds[lost + 1]
            raise RuntimeError(f"the worker holding columns [{first}, {end}) of X left the cluster during a "
                               f"feature-parallel fit (killed, out of memory or restarted); its columns' codes went "
                               f"with it. Fit again") from e
        return [results.get(b) for b in range(len(args))]

    def _lost_block(self, patience=10.0):
        """The first block whose worker has left the cluster (waiting up to `patience` seconds for
        the scheduler to notice), or None."""
        deadline = time.monotonic() + patience
        while True:
            alive = set(self.client.scheduler_info()["workers"])
            for b, held in enumerate(self.workers):
                if not set(held) & alive:
                    return b
            if time.monotonic() > deadline:
                return None
            time.sleep(0.2)

    def _count(self, counts, messages):
        with self._counting:
            for b, message in enumerate(messages):
                if message is not None:
                    counts[b] += _nbytes(message)

    def begin_tree(self, slot, w, min_weight_leaf):
        with self._counting:
            self.bytes_sent += w.nbytes
        self._run("begin_tree", [(slot, w, min_weight_leaf)] * len(self.actors))

    def _ask(self, method, asks, *slot):
        self._count(self.bytes_sent, asks)
        answers = self._run(method, [None if ask is None else (*slot, ask) for ask in asks])
        self._count(self.bytes_received, answers)
        return answers

    def search(self, slot, asks):
        return self._ask("search", asks, slot)

    def partition(self, asks):
        return self._ask("partition", asks)

    def close(self):
        self.client.cancel(self._made)
        self.actors, self._made = [], []


def fit_forest_columns(X, y, classes, n_classes, sample_weight, feature_weights, params, *, client=None,
                       blocks_out=None):
    """_core.fit_forest's forest on a dask array X, fitted feature-parallel on the default Dask
    client's cluster (client: that client, or None).

    blocks_out: a list that receives the DaskBlocks (its bytes counts), for measurements."""
    check_columns_X(X)
    default = _client()
    if client is not None and client is not default:
        # The blocks are Dask actors, whose calls go through the default client.
        raise ValueError("a feature-parallel fit runs on the default Dask client: create the Client with "
                         "set_as_default=True (the default), or call within client.as_current()")
    client = default
    blocks = DaskBlocks(client, X, y, classes, n_classes, params)
    # The driver's threads mostly wait for answers: several trees in flight hide the round trips.
    driver = copy.copy(params)
    driver.n_threads = min(params.n_estimators, max(params.n_threads, TREES_IN_FLIGHT))
    try:
        forest = _core.fit_forest_blocks(blocks, blocks.bounds, X.shape[0], y, classes, n_classes, sample_weight,
                                         feature_weights, driver)
    finally:
        if blocks_out is not None:
            blocks_out.append(blocks)
        blocks.close()
    return forest
