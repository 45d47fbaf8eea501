"""The columns of a feature-parallel X (a dask array, a ColumnFiles) that a fitted forest's
splits read, brought to this process a run of rows at a time, so that everything which runs rows
down the trees (predictions, leaves, contributions, SHAP values, permutation importance) runs
on them without X ever being here whole.

A descent reads a row's value only at the features its nodes split on. The forest is renumbered
to those features alone (in increasing order, so every walk visits them in the same order and
draws the same random numbers), and the rows read are their columns: the answers are those of
the whole X, the feature axes widened back to all of X's columns (zero where a feature is never
split on, as on the whole X). A ColumnFiles' columns are read by the workers (FileBlock.read,
each block's own files); a dask array's by its own graph."""

from __future__ import annotations

import functools

import numpy as np

from .. import _core
from .._distributed import _workers
from .._validation import check_output_size, physical_memory
from ..io.column_files import ColumnFiles, FileBlock
from ..io.packed import side_by_side
from .categories import bad_code_error, first_bad_code
from .tree import forest_state

# The most bytes of split columns a run of rows holds (at least one row a run).
RUN_BYTES = 64 << 20


def trees_bytes() -> int:
    """The most bytes of all rows' split columns that a measure reading a tree's together
    (permutation importance) holds at once, for several trees: a quarter of this machine's memory."""
    return physical_memory() // 4


# The dtypes the core reads as they are; others are read as float64 (as the fit read them).
_CORE_DTYPES = {np.dtype(t) for t in (np.float64, np.float32, np.int8, np.uint8, np.int16, np.bool_)}


def tree_split_features(tree) -> np.ndarray:
    """The features (increasing) some node of a tree (its node arrays, ``core.tree(k)``) splits on."""
    return np.unique(tree["feature"][tree["left"] >= 0])


def split_features(core) -> np.ndarray:
    """The features (int64, increasing) some node of the core forest splits on."""
    used = [tree_split_features(core.tree(k)) for k in range(core.n_trees)]
    return np.unique(np.concatenate(used)).astype(np.int64) if used else np.empty(0, dtype=np.int64)


def narrowed_forest(core, features):
    """The core forest with its splits' features renumbered to their positions in ``features``
    (all those it splits on, increasing): the forest a matrix of those columns alone descends
    as the whole X descends the original. At least one feature (a forest of stumps reads none)."""
    state = core.__getstate__()
    for tree in state["trees"]:
        inner = tree["left"] >= 0
        tree["feature"] = np.where(inner, np.searchsorted(features, tree["feature"]), -1).astype(np.int32)
    state["n_features"] = max(1, len(features))
    return _core.Forest.from_state(state)


class SplitColumns:
    """A feature-parallel X's split columns for a fitted core forest.

    Parameters
    ----------
    core : _core.Forest
        The fitted forest (of X's columns).
    X : dask array or ColumnFiles
        Rows with the forest's training columns, whose values are on the cluster.
    name : str
        X's name in messages ("X", "background").

    Attributes
    ----------
    features : ndarray of int64
        The columns the forest splits on, increasing.
    core : _core.Forest
        The forest renumbered to them (:func:`narrowed_forest`).
    shape : tuple
        X's shape.
    """

    def __init__(self, core, X, name="X", codes=None):
        if X.shape[1] != core.n_features:
            raise ValueError(f"{name} has {X.shape[1]} features, but the forest was fitted on {core.n_features}")
        self.X, self.name, self._forest, self._codes = X, name, core, codes
        self.shape = self.n_rows, self.n_features = X.shape
        self.features = split_features(core)
        # CategoryCodes' columns among them (their places here) and their category counts
        self._coded, self._counts = np.empty(0, dtype=np.int64), []
        if codes is not None:
            counts = dict(zip(codes.columns.tolist(), (len(c) for c in codes.categories_)))
            self._coded = np.flatnonzero(np.isin(self.features, codes.columns))
            self._counts = [counts[j] for j in self.features[self._coded].tolist()]
        self._file_reads = None  # a ColumnFiles' reads, planned at the first (_plan_file_reads)
        self.dtype = np.dtype(X.dtype) if np.dtype(X.dtype) in _CORE_DTYPES else np.dtype(np.float64)

    @functools.cached_property
    def core(self):
        """The forest renumbered to its split columns (made at the first use: by_trees needs it not)."""
        return narrowed_forest(self._forest, self.features)

    @property
    def row_bytes(self):
        """Bytes a row of the split columns takes here: a value each, or, of .bed files alone
        (ColumnFiles.packed), two bits a call and eight bytes a covariate."""
        return self._row_bytes(*self._calls_and_others(self.features))

    def _calls_and_others(self, features):
        """(columns read packed, others) among features: (0, all) unless X is .bed files alone."""
        if not self._packed:
            return 0, len(features)
        calls = int(np.count_nonzero(features < self.X.n_file_columns))
        return calls, len(features) - calls

    def _row_bytes(self, calls, others):
        if not (self._packed and calls + others):
            return max(1, calls + others) * self.dtype.itemsize
        return -(-calls // 4) + 8 * others

    @property
    def _packed(self):
        return isinstance(self.X, ColumnFiles) and self.X.packed

    def by_trees(self, what, budget=None):
        """For runs of consecutive trees whose split columns of all rows take at most ``budget``
        bytes (default :func:`trees_bytes`; a tree alone may take more, up to this machine's
        memory), read one run after the other: (first tree, the forest of the run's trees, their
        split columns of all rows, those columns' places in X). For a measure that needs each
        tree's split columns of all rows together (permutation importance; what: the measure, for
        messages) without those of the whole forest. Each forest is cut from the whole (its trees
        and in-bag counts) and renumbered to its own split columns."""
        core = self._forest
        trees = [core.tree(t) for t in range(core.n_trees)]  # views of the core's arrays
        for first, stop in self._tree_runs(trees, trees_bytes() if budget is None else budget):
            cut = forest_state(core.criterion.name, core.n_features, core.n_classes, core.n_samples, trees[first:stop],
                               core.inbag[first:stop].ravel(), core.n_outputs)
            part = SplitColumns(_core.Forest.from_state(cut), self.X, self.name, self._codes)
            yield first, part.core, part.read_all(what), part.features

    def _tree_runs(self, trees, budget):
        """[(first, stop)]: consecutive trees cut greedily where their split columns pass budget."""
        runs, first, calls, others = [], 0, 0, 0
        seen = np.zeros(self.n_features, dtype=bool)
        for t, tree in enumerate(trees):
            new = tree_split_features(tree)
            more_calls, more_others = self._calls_and_others(new[~seen[new]])
            if t > first and self.n_rows * self._row_bytes(calls + more_calls, others + more_others) > budget:
                runs.append((first, t))
                first, calls, others = t, 0, 0
                seen[:] = False
                more_calls, more_others = self._calls_and_others(new)
            seen[new] = True
            calls, others = calls + more_calls, others + more_others
        return runs + [(first, len(trees))]

    def runs(self):
        """Runs of rows [start, stop) of at most RUN_BYTES of split columns each, in order."""
        step = max(1, RUN_BYTES // self.row_bytes)
        return [(a, min(a + step, self.n_rows)) for a in range(0, self.n_rows, step)]

    def read(self, start, stop):
        """The split columns of rows [start, stop): (stop - start, len(features)) in ``dtype``
        (one zero column when the forest splits on nothing); of .bed files alone
        (``ColumnFiles.packed``), packed genotypes of those calls, two bits each, which the core
        reads as they are (then any covariates' split columns)."""
        if not len(self.features):
            return np.zeros((stop - start, 1), dtype=self.dtype)
        if isinstance(self.X, ColumnFiles):
            values = self._read_files(start, stop)
        else:  # a dask array: its graph computes just these rows and columns
            values = np.ascontiguousarray(self.X[start:stop][:, self.features].compute(), dtype=self.dtype)
        if len(self._coded):  # categorical columns must hold codes, as at fit
            bad = first_bad_code(np.asarray(values[:, self._coded], dtype=np.float64), self._counts)
            if bad is not None:
                k, row, value = bad
                raise bad_code_error(int(self.features[self._coded[k]]), getattr(self.X, "feature_names", None),
                                     start + row, value, self._counts[k])
        return values

    def _read_files(self, start, stop):
        """The split columns of a ColumnFiles' rows [start, stop), each block's read by a Dask
        worker (any: the files are on storage all of them read), the covariates here; each
        block's part placed as it is fetched (this process holds the run and one part)."""
        if self._file_reads is None:
            self._file_reads = _plan_file_reads(self.X, self.features)
        client, reads = self._file_reads
        packed = self.X.packed
        out = None if packed else np.empty((stop - start, len(self.features)), dtype=self.dtype)
        fetched, held, parts = [], None, []
        for block, inside, where in reads:
            if isinstance(block, FileBlock):
                fetched.append((where, client.submit(block.read, inside, start, stop, pure=False)))
            else:  # covariates, held here (the last columns)
                held = block.read(inside, start, stop)
                if out is not None:
                    out[:, where] = held
        _wait(client, [f for _, f in fetched])
        for where, future in fetched:
            part = future.result()  # a .bed's: packed genotypes
            future.release()
            if packed:
                parts.append(part)
            else:
                out[:, where] = np.asarray(part, dtype=self.dtype)
        if packed:
            return side_by_side(parts, held) if parts else held
        return out

    def read_all(self, what):
        """The split columns of every row at once, for a measure that needs them together (the
        out-of-bag rows of each tree); refused when they exceed this machine's memory (what: the
        measure, for the message)."""
        check_output_size(f"{what} reads the split columns of all {self.name}'s rows: {self.n_rows} rows x "
                          f"{len(self.features)} columns", self.n_rows * self.row_bytes,
                          "grow shallower trees, or give this process more memory")
        return self.read(0, self.n_rows)

    def out_of_bag(self, what, n_threads):
        """(X, recorded) for a measure of the training rows' out-of-bag leaves (what: the measure,
        for messages). When the leaves (4 bytes per tree and row) take fewer bytes than all rows'
        split columns, they are recorded in ``core`` as a fit records them (keep_oob_leaves), the
        split columns read a run of rows at a time, and X is a zero of their shape standing in
        (recorded True); else X is all rows' split columns (read_all). The leaves are the same."""
        core = self.core
        if self.n_rows != core.n_samples:
            raise ValueError(f"{self.name} has {self.n_rows} rows but the forest was trained on {core.n_samples}: "
                             f"{what} needs the training rows")
        leaves = 4 * core.n_trees * self.n_rows
        if leaves > self.n_rows * self.row_bytes:
            return self.read_all(what), False
        check_output_size(f"{what} records the out-of-bag leaves of {self.n_rows} rows in {core.n_trees} trees",
                          leaves, "give this process more memory, or use fewer trees")
        for start, _, rows in self.each_run():
            core.record_oob_leaves(rows, start, n_threads)
        return np.broadcast_to(self.dtype.type(0), (self.n_rows, max(1, len(self.features)))), True

    def each_run(self):
        """(start, stop, split columns) for each run of rows."""
        for start, stop in self.runs():
            yield start, stop, self.read(start, stop)

    def widen(self, values, axes=(1,)):
        """values with their feature ``axes`` (of length len(features)) widened to all X's
        columns: zero at columns the forest never splits on."""
        out = np.zeros(self._wide_shape(values.shape, axes), dtype=values.dtype)
        self._place(out, values, axes)
        return out

    def gather(self, compute, axes=(1,)):
        """compute(split columns) on each run of rows, which returns an array (rows first, the
        split columns on its feature ``axes``) or a tuple of one and values the same for every
        run: (the arrays of all runs as one, widened to X's columns, the rest of the tuple)."""
        out, rest = None, ()
        for start, stop, rows in self.each_run():
            result = compute(rows)
            first, *more = result if isinstance(result, tuple) else (result,)
            if out is None:
                out = np.zeros(self._wide_shape((self.n_rows, *first.shape[1:]), axes), dtype=first.dtype)
                rest = tuple(more)
            self._place(out[start:stop], first, axes)
        return out, rest

    def _wide_shape(self, shape, axes):
        shape = list(shape)
        for a in axes:
            shape[a] = self.n_features
        return tuple(shape)

    def _place(self, out, values, axes):
        """out's entries at the split columns (on ``axes``) set to values, in place."""
        if axes and not len(self.features):
            return  # nothing is split on: the values of the stand-in column are not X's
        index = [slice(None)] * values.ndim
        for k, a in enumerate(axes):
            index[a] = self.features.reshape([-1 if j == k else 1 for j in range(len(axes))])
        out[tuple(index)] = values


def _plan_file_reads(X, features):
    """(client, [(block, its split columns within it, their places among features)]) for a
    ColumnFiles X cut into a run of columns a worker, the blocks without split columns left out."""
    from .feature_parallel import _client

    client = _client(X, "read by the Dask workers (its files are theirs)")
    reads, at = [], 0
    for block in X.blocks(max(1, len(_workers(client)))):
        inside = features[(features >= block.first) & (features < block.end)] - block.first
        if len(inside):
            reads.append((block, inside, slice(at, at + len(inside))))
            at += len(inside)
    return client, reads


def _wait(client, futures):
    """Waits for the futures. A read whose worker dies runs again elsewhere (Dask retries it);
    one that waits on workers Dask keeps paused (their memory past its pause fraction) would wait
    forever: while waiting, the workers are looked at every POLL seconds, and the read raises when
    all have been paused for PAUSED_PATIENCE."""
    from distributed import wait

    from . import feature_parallel as fp

    paused = fp.PausedClock()
    while True:
        try:
            wait(futures, timeout=fp.POLL)
            return
        except TimeoutError:
            info = _workers(client)
            if paused.too_long(bool(info) and all(w.get("status") == "paused" for w in info.values())):
                raise RuntimeError(f"the Dask workers reading X's split columns have all been paused for "
                                   f"{fp.PAUSED_PATIENCE:.0f} s: their memory passed Dask's pause fraction of "
                                   f"their limit ({fp._limits(info)}). Give the cluster more memory, or free "
                                   f"what the workers hold") from None
