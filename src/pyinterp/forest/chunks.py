"""A forest fitted in chunks of trees on a cluster's workers (see docs/user/cluster.md).

Tree t draws from the stream (seed, t) whatever chunk it is in, so the chunks joined in tree
order are the forest one process fits. X is on each worker once (``run_units``), read in place,
and its column encoding is built once per worker, on the first chunk that worker runs.
"""

from __future__ import annotations

import copy

from .. import _core
from .._distributed import PerObject, chunks, cluster_threads, run_units

# The ColumnCodes of X, built on the first chunk with this X object in this process. On a worker X
# is the one copy joblib's scatter put there, shared by the worker's tasks.
worker_codes = PerObject(lambda X: _core.ColumnCodes(X))


def _fit_chunk(X, y, classes, n_classes, sample_weight, feature_weights, params, first, count):
    """Trees [first, first + count) of the forest that ``params`` describes, on one thread."""
    chunk = copy.copy(params)
    chunk.first_tree = params.first_tree + first
    chunk.n_estimators = count
    chunk.n_threads = 1  # a worker runs as many chunks at once as it has threads
    return _core.fit_forest(X, y, classes, n_classes, sample_weight, feature_weights, chunk, codes=worker_codes(X))


def fit_forest_chunks(X, y, classes, n_classes, sample_weight, feature_weights, params):
    """_core.fit_forest's forest, fitted in chunks on the active distributed joblib backend; None
    when no such backend is active (the caller then fits in this process, on its threads)."""
    threads = cluster_threads()
    if threads == 0:
        return None
    parts = run_units(_fit_chunk, (X, y, classes, n_classes, sample_weight, feature_weights, params),
                      chunks(params.n_estimators, threads), in_place=(X,))
    return _core.join_forests(list(parts))
