"""A measure of each feature alone (DSTUMP), run where a feature-parallel X's columns are.

X is a ``dask.array`` (each chunk of columns computed and measured where Dask puts it: on the
running ``distributed`` client's cluster, else on Dask's local threads) or a
``pyinterp.io.ColumnFiles`` (its blocks opened and measured by the client's workers, else here
one after the other). No process holds more than a block's columns and their codes, and since a
feature's result reads only its own column, the results are those of the whole X in memory,
column for column.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ._distributed import _workers, aligned
from ._validation import block_values, holds_missing_call_code, mapped_file, missing_call_code_warning
from .forest.feature_parallel import block_owners, is_dask_array

# The most bytes a ColumnFiles block takes once opened and encoded (its codes at 4 bytes a value
# at most, and a copy of its rows when they are not a run): several run at once on a worker.
BLOCK_BYTES = 256 << 20


def map_columns(X, measure, *args, n_threads=1):
    """[measure(values, mapped, n_threads, *args) for each block of X's columns], in column order.

    values is the block's columns in the form the core reads (an array, possibly memory-mapped, or
    packed genotypes), mapped its ``mapped_file`` position or None; measure runs with n_threads
    threads here and with one on a Dask worker. Each block is checked as an X in memory is
    (block_values: as validate_data converts it); int8 blocks holding bed-reader's missing-call code
    -127 warn once."""
    if is_dask_array(X):
        import dask

        shared = dask.delayed(args, traverse=False)  # one key for every chunk's task
        chunks = X.rechunk({0: -1}).to_delayed().ravel()
        answers = dask.compute(*[dask.delayed(_on_values)(measure, chunk, shared) for chunk in chunks])
    else:
        answers = _on_blocks(X, measure, args, n_threads)
    if any(coded for _, coded in answers):
        missing_call_code_warning(stacklevel=5)
    return [result for result, _ in answers]


def _on_values(measure, values, args, n_threads=1, mapped=None):
    """(measure's result, whether the values hold -127 as int8) for one block's values."""
    values = block_values(values)
    args = [aligned(a) for a in args]  # a worker receives arrays at any byte offset
    return measure(values, mapped, n_threads, *args), holds_missing_call_code(values)


def _on_block(measure, block, args, n_threads=1):
    values = block.open()
    return _on_values(measure, values, args, n_threads, mapped_file(values))


def _client():
    """The running distributed client, or None (none runs unless distributed was imported: it is
    not imported here for nothing, which takes a fifth of a second)."""
    if "distributed" not in sys.modules:
        return None
    try:
        return sys.modules["distributed"].get_client()
    except ValueError:
        return None


def _block_bytes(X) -> int:
    """An upper bound of one column's bytes in a block once opened and encoded."""
    n = X.shape[0]
    return n * 4 + (0 if X.rows is None else n * 8)


def _on_blocks(X, measure, args, n_threads):
    """A ColumnFiles X's blocks, each at most BLOCK_BYTES (or as X.block_columns says), measured
    by the running client's workers (a worker's run of blocks, as the feature-parallel fit gives
    them) or, without a client, here one after the other."""
    client = _client()
    width = max(1, BLOCK_BYTES // _block_bytes(X))
    blocks = X.blocks(max(1, math.ceil(X.n_file_columns / width)))
    if client is None:
        return [_on_block(measure, b, args, n_threads) for b in blocks]
    client.wait_for_workers(1)
    owners = block_owners(sorted(_workers(client)), blocks, X.shape[1])
    shared = client.scatter([args], broadcast=True)[0]
    futures = [client.submit(_on_block, measure, b, shared, pure=False, allow_other_workers=True, workers=[w])
               for b, w in zip(blocks, owners)]
    return client.gather(futures)


def concatenated(tables):
    """Per-block tables (dicts of arrays, one entry per column) as one table of X's columns."""
    return {key: np.concatenate([t[key] for t in tables]) for key in tables[0]}
