"""A forest fitted with X's columns spread over Dask workers: the feature-parallel fit (see
docs/user/cluster.md and docs/dev/distributed.md).

X is a ``dask.array`` chunked by columns, or a ``pyinterp.io.ColumnFiles`` (runs of columns in
files every worker reads). Each worker turns the chunks it computed, or the file blocks it is
given, into ``_core.ColumnBlock`` objects (its columns' codes and an exact split search), which
stay where they were made. This process holds y, the rows of every node and the trees, and grows
each tree level by level (``_core.fit_forest_blocks``): per level it sends each block the level's
nodes' rows and the candidates the block holds, takes back their best splits, picks each node's
split in draw order, and asks the block holding a chosen column which rows go left. X itself
never reaches this process; the trees equal those one process grows on the whole X.
"""

from __future__ import annotations

import copy
import threading
import time

import numpy as np

from .. import _core
from .._distributed import _gb, _workers, aligned, codes_bytes, memory_room
from .._validation import block_values, check_array, mapped_file, refuse_silent_casts
from ..io.column_files import ArrayBlock, ColumnFiles, FileBlock
from .categories import bad_code_error, first_bad_code


def is_dask_array(X) -> bool:
    """Whether X is a dask array (recognised without importing dask)."""
    return hasattr(X, "__dask_graph__") and type(X).__module__.startswith("dask.array")


def is_feature_parallel(X) -> bool:
    """Whether a fit reads X feature-parallel: a dask array or ColumnFiles."""
    return is_dask_array(X) or isinstance(X, ColumnFiles)


def check_columns_X(X, name="X"):
    """A dask array X checked for a feature-parallel fit: 2-d, of a numeric dtype the core reads
    (a ColumnFiles checked its files when made)."""
    if isinstance(X, ColumnFiles):
        return
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (rows x features), got a dask array of shape {X.shape}")
    if any(np.isnan(s) for s in X.shape):
        raise ValueError(f"{name} has unknown chunk sizes (NaN in its shape): call {name}.compute_chunk_sizes() first")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"{name} holds {X.dtype} values; a feature-parallel fit reads numbers (bool, integers, floats)")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} has shape {X.shape}: a fit needs at least one row and one column")


def validate_columns_data(estimator, X, y, ensure_min_samples=1):
    """y for a fit on a feature-parallel X, checked as validate_data checks it (X is checked by
    its shape and dtype, never loaded); sets the estimator's ``n_features_in_`` and, when X
    names its columns (a ColumnFiles' variant IDs), ``feature_names_in_``."""
    check_columns_X(X)
    if X.shape[0] < ensure_min_samples:
        raise ValueError(f"X has {X.shape[0]} sample(s), while a minimum of {ensure_min_samples} is required")
    refuse_silent_casts(y, "y")
    y = check_array(y, ensure_2d=False, dtype=None, input_name="y")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {[X.shape[0], y.shape[0]]}")
    estimator.n_features_in_ = X.shape[1]
    names = getattr(X, "feature_names", None)
    if names is not None:
        estimator.feature_names_in_ = names
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    return y


def block_owners(addresses, blocks, n_columns):
    """The worker (of ``addresses``, sorted) given each of a ColumnFiles' blocks: runs of
    consecutive blocks per worker, as even in columns as the blocks allow."""
    return [addresses[min(len(addresses) - 1, len(addresses) * b.first // n_columns)] for b in blocks]


def _client(X, done="fitted feature-parallel"):
    """The running Dask client, for X (a dask array or ColumnFiles) to be ``done`` on its cluster."""
    what, here = (("a ColumnFiles X", "or read the files in this process (pyinterp.io.read_plink, "
                   "np.load(path, mmap_mode='r'))") if isinstance(X, ColumnFiles)
                  else ("a dask array X", "or fit X.compute() in this process"))
    try:
        from distributed import get_client
    except ImportError as e:  # dask installed without distributed, or neither
        raise ImportError(f"{what} is {done} on a Dask cluster: pip install "
                          "'interptrees[dask]' and create a dask.distributed Client first") from e
    try:
        return get_client()
    except ValueError as e:
        raise ValueError(f"{what} is {done} on a Dask cluster, and no Client is running: "
                         f"create one first (dask.distributed.Client(...)), {here}") from e


class BlockActor:
    """One block on the worker that made it, as a Dask actor: its methods are called from this
    process directly (not through the scheduler: a round trip costs about a millisecond, not a
    task's tens), and an actor never moves. Arrays arrive at any byte offset; the block reads X
    through memcpy and copies the asks, so only its targets are aligned here. chunk: the block's
    columns, or a FileBlock opened here (read from its file in panels, as a memory-mapped X)."""

    def __init__(self, chunk, y, classes, n_classes, params, first, n_features, feature_weights):
        params = copy.copy(params)
        params.n_threads = 1  # a worker runs as many blocks' asks at once as it has threads
        X = block_values(chunk.open() if isinstance(chunk, (FileBlock, ArrayBlock)) else chunk)
        self.chunk = chunk
        self.block = _core.ColumnBlock(X, aligned(y), aligned(classes), n_classes, params, first, n_features,
                                       aligned(feature_weights), mapped_file=mapped_file(X))

    def codes_nbytes(self):
        return self.block.codes_nbytes

    def first_missing(self):
        return self.block.first_missing

    def bad_code(self, columns, n_categories):
        """(column k, row, value) of the first value of the block's columns ``columns`` that is
        not a code of n_categories[k] categories, or None (a file block's read with pread)."""
        chunk, n = self.chunk, self.block.shape[0]
        values = chunk.read(columns, 0, n) if isinstance(chunk, (FileBlock, ArrayBlock)) else chunk[:, columns]
        return first_bad_code(np.asarray(values, dtype=np.float64), n_categories)

    def begin_tree(self, slot, w, min_weight_leaf, oob):
        self.block.begin_tree(w, min_weight_leaf, slot, oob)

    def search(self, slot, ask):
        return self.block.search(ask, slot)

    def partition(self, slot, ask):
        return self.block.partition(ask, slot)


# How often (seconds) a call not yet answered has its block's worker looked at, and how long a
# block's worker may stay paused by Dask's memory manager before the fit gives up.
POLL = 5.0
PAUSED_PATIENCE = 60.0


class _Stalled(RuntimeError):
    """A block's worker cannot answer (paused for lack of memory)."""


class PausedClock:
    """How long workers have stayed paused, from one poll to the next."""

    def __init__(self):
        self.since = None

    def too_long(self, paused) -> bool:
        """Whether they have been paused for more than PAUSED_PATIENCE (paused: at this poll)."""
        if not paused:
            self.since = None
            return False
        self.since = self.since or time.monotonic()
        return time.monotonic() - self.since > PAUSED_PATIENCE


def _limits(workers):
    """The workers' memory limits as a phrase ("2.00 GB", "1.00 GB to 4.00 GB", "none")."""
    limits = sorted({info.get("memory_limit") or 0 for info in workers.values()})
    shown = ["none" if v == 0 else _gb(v) for v in (limits[0], limits[-1])]
    return shown[0] if len(limits) == 1 else " to ".join(shown)


def _search_bytes(n_rows, n_features, weighted, trees):
    """The least memory a block's searches take beside its codes: per tree in flight the tree's
    weights, rows, out-of-bag rows and scratch (20 bytes a row) and the sampler its nodes'
    candidates are drawn with, over all X's columns (4 bytes a column; about 17 with
    feature_weights: a sum tree)."""
    return trees * (20 * n_rows + (17 if weighted else 4) * n_features)


def _check_blocks_fit(workers, need):
    """Refuses, before any block is made, blocks whose least memory (need: per worker, bytes)
    exceeds the room Dask leaves on their worker (memory_room)."""
    room = memory_room(workers)
    for w, needed in need.items():
        if w in room and needed > room[w][1]:
            limit, usable = room[w]
            raise MemoryError(f"X's blocks given to Dask worker {w} need at least {_gb(needed)} of its memory (their "
                              f"columns' codes, 2 bits a value at least, any rows copied and the searches' scratch "
                              f"for the trees in flight), and Dask acts on its "
                              f"data at {_gb(usable)} ({usable / limit:.0%} of its {_gb(limit)} limit): give the "
                              f"cluster more workers or memory")


def _check_chunks_fit(workers, X, search):
    """Refuses, before anything is computed, a dask array X whose chunks and their codes cannot
    fit the room Dask leaves on all the workers together (memory_room): a block keeps its chunk's
    values beside their codes, and its searches' scratch (search bytes a block)."""
    room = memory_room(workers)
    if len(room) < len(workers):  # a worker without a limit
        return
    need = X.nbytes + codes_bytes(*X.shape) + search * len(X.chunks[1])
    usable = sum(r for _, r in room.values())
    if need > usable:
        raise MemoryError(f"X ({_gb(X.nbytes)}) and its column codes (at least {_gb(codes_bytes(*X.shape))}) do not "
                          f"fit the {len(workers)} Dask workers: they may hold {_gb(usable)} in all before Dask acts "
                          f"on their data. A dask array's chunks stay in their workers' memory beside their codes; "
                          f"write X to .npy or PLINK .bed files and fit a pyinterp.io.ColumnFiles of them (read in "
                          f"panels, only the codes stay), or give the cluster more workers or memory")


# Trees a feature-parallel fit grows at once (at least): each waits on the blocks' answers most of
# the time, so more trees than cores keep the workers busy.
TREES_IN_FLIGHT = 8


def _nbytes(message) -> int:
    return sum(a.nbytes for a in message.values())


class DaskBlocks:
    """X's column chunks as blocks (BlockActor) on the workers that computed them, or a
    ColumnFiles' blocks in runs of columns over the workers, answering the builder's asks
    (begin_tree, search, partition: one ask per block, all sent before any answer is awaited).

    feature_weights: the fit's (None: uniform); each block draws its nodes' candidates with them
    as the builder does (so no candidate lists cross). trees: how many grow at once (each block
    keeps a search's scratch for each: counted in the memory checks).

    ``bytes_sent`` / ``bytes_received`` count the asks' and answers' arrays per block (the messages'
    payload; Dask's framing adds a few hundred bytes a call); ``codes_nbytes`` each block's codes."""

    def __init__(self, client, X, y, classes, n_classes, params, feature_weights=None, trees=1):
        self.client = client
        client.wait_for_workers(1)
        workers = _workers(client)
        search = _search_bytes(X.shape[0], X.shape[1], feature_weights is not None, trees)
        if isinstance(X, ColumnFiles):
            addresses = sorted(workers)
            parts = X.blocks(len(addresses))
            self.bounds = [0, *(b.end for b in parts)]
            # Each worker's run of blocks checked against its memory (a worker lost meanwhile fails the fit).
            owner = block_owners(addresses, parts, X.shape[1])
            _check_blocks_fit(workers, {w: sum(b.least_memory() + search for b, o in zip(parts, owner) if o == w)
                                        for w in owner})
            where = [dict(workers=[w], allow_other_workers=False) for w in owner]
        else:
            X = X.rechunk({0: -1})  # a block holds all rows of its columns
            _check_chunks_fit(workers, X, search)
            self.bounds = [0, *np.cumsum(X.chunks[1]).tolist()]
            parts = client.compute(list(X.to_delayed().ravel()))
            where = [{}] * len(parts)  # made where its chunk was computed: the task follows its data
        # The chunks' futures are let go once the blocks are made; a block keeps its array.
        made = [client.submit(BlockActor, part, y, classes, n_classes, params, first, X.shape[1], feature_weights,
                              actor=True, pure=False, **at)
                for part, first, at in zip(parts, self.bounds[:-1], where)]
        del parts
        self.actors = self._made_blocks(made, set(workers))
        self._made = made  # the actors live as long as their futures
        held = client.who_has(made)
        self.workers = [sorted(held[f.key]) for f in made]  # where each block is
        self.codes_nbytes = np.array(self._run("codes_nbytes", [()] * len(self.actors)))
        self.bytes_sent = np.zeros(len(self.actors), dtype=np.int64)
        self.bytes_received = np.zeros(len(self.actors), dtype=np.int64)
        self._counting = threading.Lock()  # trees in flight count from several threads

    def _made_blocks(self, made, started):
        """The actors of the futures ``made`` (the blocks being made), raising a block's error (a
        category value, an unread file) here. Dask may never finish a block whose worker died as
        it was made (out of memory: the nanny restarts it under a new address), nor say so: while
        waiting, the workers there were at the start (``started``) are looked at every POLL
        seconds, and the fit raises when one has gone."""
        from distributed import wait

        while True:
            try:
                wait(made, timeout=POLL)
                return self.client.gather(made)
            except TimeoutError:
                gone = started - set(_workers(self.client))
                if gone:
                    waiting = [b for b, f in enumerate(made) if not f.done()]
                    columns = ", ".join(f"[{self.bounds[b]}, {self.bounds[b + 1]})" for b in waiting[:3])
                    columns += " ..." if len(waiting) > 3 else ""
                    limits = _limits(_workers(self.client))
                    raise RuntimeError(f"{len(gone)} of the {len(started)} Dask workers left the cluster while X's "
                                       f"blocks were made (out of memory? the limits are {limits}); the blocks of "
                                       f"columns {columns} were not made. Give the cluster more workers or memory, "
                                       f"or X in more, smaller blocks") from None

    def _run(self, method, args):
        """actor b's method(*args[b]) for each b whose args are not None, all sent before any is
        awaited; the results (None where nothing ran). A block whose worker died raises."""
        calls, results = {}, {}
        try:
            for b, a in enumerate(args):
                if a is not None:
                    calls[b] = getattr(self.actors[b], method)(*a)
            for b, call in calls.items():
                results[b] = self._answer(b, call)
        except (ValueError, TypeError, _Stalled):  # a block refused its ask, or its worker stalls: said
            raise
        except Exception as e:
            # Dask reports a lost actor in several ways (a closed connection, a missing key, the
            # proxy's own AttributeError), sometimes before the scheduler has seen the worker go:
            # its absence, within a few seconds, is what tells.
            lost = self._lost_block()
            if lost is None:
                raise
            raise self._lost(lost) from e
        return [results.get(b) for b in range(len(args))]

    def _answer(self, b, call):
        """The call's result. A call to a worker that was restarted, or that Dask keeps paused,
        may never answer: while waiting, the block's worker is looked at every POLL seconds."""
        paused = PausedClock()
        while True:
            try:
                return call.result(timeout=POLL)
            except TimeoutError:
                info = _workers(self.client)
                held = [info[w] for w in self.workers[b] if w in info]
                if not held:
                    raise self._lost(b) from None
                if paused.too_long(all(w.get("status") == "paused" for w in held)):
                    first, end = self.bounds[b], self.bounds[b + 1]
                    raise _Stalled(f"the Dask worker holding columns [{first}, {end}) of X has been paused for "
                                   f"{PAUSED_PATIENCE:.0f} s: its memory passed Dask's pause fraction of its "
                                   f"limit ({_limits(info)}) and its blocks' codes stay there. Give the cluster "
                                   f"more workers or memory, or X in more, smaller blocks") from None

    def _lost_block(self, patience=10.0):
        """The first block whose worker has left the cluster (waiting up to `patience` seconds for
        the scheduler to notice), or None."""
        deadline = time.monotonic() + patience
        while True:
            alive = set(_workers(self.client))
            for b, held in enumerate(self.workers):
                if not set(held) & alive:
                    return b
            if time.monotonic() > deadline:
                return None
            time.sleep(0.2)

    def _lost(self, b):
        first, end = self.bounds[b], self.bounds[b + 1]
        return RuntimeError(f"the worker holding columns [{first}, {end}) of X left the cluster during a "
                            f"feature-parallel fit (killed, out of memory or restarted); its columns' codes went "
                            f"with it. Fit again")

    def _count(self, counts, messages):
        with self._counting:
            for b, message in enumerate(messages):
                if message is not None:
                    counts[b] += _nbytes(message)

    def begin_tree(self, slot, w, min_weight_leaf, oob):
        with self._counting:
            self.bytes_sent += w.nbytes + oob.nbytes
        self._run("begin_tree", [(slot, w, min_weight_leaf, oob)] * len(self.actors))

    def _ask(self, method, slot, asks):
        self._count(self.bytes_sent, asks)
        answers = self._run(method, [None if ask is None else (slot, ask) for ask in asks])
        self._count(self.bytes_received, answers)
        return answers

    def search(self, slot, asks):
        return self._ask("search", slot, asks)

    def partition(self, slot, asks):
        return self._ask("partition", slot, asks)

    def close(self):
        self.client.cancel(self._made)
        self.actors, self._made = [], []


def _refuse_missing(blocks):
    """monotonic_cst with missing values is refused, as in scikit-learn (and in memory, where X is
    looked at first): here each block says whether its columns' codes have a missing one."""
    for b, j in enumerate(blocks._run("first_missing", [()] * len(blocks.actors))):
        if j >= 0:
            raise ValueError(f"X contains NaN (column {blocks.bounds[b] + j} first): monotonic_cst does not support "
                             "missing values (as in scikit-learn)")


def _refuse_bad_codes(blocks, codes, names):
    """CategoryCodes' columns must hold codes of their categories (or NaN), as CodeChecker checks
    an X here: each block reads its categorical columns and says where the first that does not is."""
    columns = codes.columns
    n_categories = np.array([len(c) for c in codes.categories_])
    asks = []
    for b in range(len(blocks.actors)):
        inside = (columns >= blocks.bounds[b]) & (columns < blocks.bounds[b + 1])
        asks.append((columns[inside] - blocks.bounds[b], n_categories[inside]) if inside.any() else None)
    for b, (ask, bad) in enumerate(zip(asks, blocks._run("bad_code", asks))):
        if bad is not None:
            k, row, value = bad
            raise bad_code_error(int(blocks.bounds[b] + ask[0][k]), names, row, value, int(ask[1][k]))


def fit_forest_columns(X, y, classes, n_classes, sample_weight, feature_weights, params, *, client=None,
                       blocks_out=None, codes=None):
    """_core.fit_forest's forest on a dask array or ColumnFiles X, fitted feature-parallel on the
    default Dask client's cluster (client: that client, or None).

    blocks_out: a list that receives the DaskBlocks (its bytes counts), for measurements.
    codes: the CodeChecker of X's categorical columns (CategoryCodes), or None."""
    check_columns_X(X)
    default = _client(X)
    if client is not None and client is not default:
        # The blocks are Dask actors, whose calls go through the default client.
        raise ValueError("a feature-parallel fit runs on the default Dask client: create the Client with "
                         "set_as_default=True (the default), or call within client.as_current()")
    client = default
    # The driver's threads mostly wait for answers: several trees in flight hide the round trips.
    driver = copy.copy(params)
    driver.n_threads = min(params.n_estimators, max(params.n_threads, TREES_IN_FLIGHT))
    blocks = DaskBlocks(client, X, y, classes, n_classes, params, feature_weights, driver.n_threads)
    try:
        if params.monotonic_cst:
            _refuse_missing(blocks)
        if codes is not None:
            _refuse_bad_codes(blocks, codes, getattr(X, "feature_names", None))
        forest = _core.fit_forest_blocks(blocks, blocks.bounds, X.shape[0], y, classes, n_classes, sample_weight,
                                         feature_weights, driver)
    finally:
        if blocks_out is not None:
            blocks_out.append(blocks)
        blocks.close()
    return forest
