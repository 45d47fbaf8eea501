"""Independent units of work on a cluster through joblib's active backend (Dask's
``parallel_backend("dask")``, or any backend that is not one of joblib's local ones).

Without such a backend nothing here dispatches anything and the estimators keep their threads in
one process. Nothing here imports dask: the backend object the user activated is only inspected.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import CancelledError
import weakref
from contextlib import contextmanager

import numpy as np

from joblib import parallel_config
from joblib.parallel import (LokyBackend, MultiprocessingBackend, SequentialBackend, ThreadingBackend,
                             get_active_backend)
from sklearn.utils.parallel import Parallel, delayed

_LOCAL_BACKENDS = (LokyBackend, MultiprocessingBackend, SequentialBackend, ThreadingBackend)


def cluster_threads() -> int:
    """Threads the active distributed joblib backend runs tasks on (Dask: its workers' threads),
    0 when the backend is one of joblib's local ones, and 0 inside a task on a Dask worker (a unit
    of ours, or the user's: a fold of a cross-validation the backend distributes), which fits with
    the worker's threads rather than sending its data on from there."""
    backend, _ = get_active_backend()
    if isinstance(backend, _LOCAL_BACKENDS):
        return 0
    distributed = sys.modules.get("distributed")  # imported if a Dask backend can be active
    if distributed is not None:
        try:
            distributed.get_worker()
            return 0
        except ValueError:  # not in a worker's task
            pass
    return max(1, int(backend.effective_n_jobs(-1)))


# Chunks per cluster thread when a job is cut into chunks (trees of a forest): enough for the
# scheduler to balance uneven chunks and to lose little work with a worker, few enough that the
# per-task cost (milliseconds) stays small.
CHUNKS_PER_THREAD = 2


def chunks(n, threads) -> list:
    """(first, count) of the chunks that [0, n) is cut into for ``threads`` cluster threads."""
    n_chunks = min(n, CHUNKS_PER_THREAD * threads)
    bounds = [n * k // n_chunks for k in range(n_chunks + 1)]
    return [(a, b - a) for a, b in zip(bounds[:-1], bounds[1:])]


class _Unit:
    """function, run under joblib's threading backend so that estimators inside it use their
    threads (joblib's Dask tasks otherwise see the Dask backend again and would dispatch from the
    worker)."""

    def __init__(self, function):
        # Not named "function": scikit-learn's delayed wraps this object with functools.update_wrapper,
        # which copies its __dict__ onto the wrapper, whose own "function" it would then replace.
        self.unit = function

    def __call__(self, *args):
        with parallel_config(backend="threading"):
            return self.unit(*(_aligned(a) for a in args))


class PerObject:
    """make(obj), made once per live object in this process: keyed by the object's identity and
    dropped with it. On a worker, the units that share an object share what is made from it."""

    def __init__(self, make):
        self._make = make
        self._entries: dict = {}  # id(obj) -> (weak reference to obj, make(obj))
        self._lock = threading.Lock()

    def __call__(self, obj):
        key = id(obj)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0]() is not obj:
                entry = (weakref.ref(obj, lambda _: self._entries.pop(key, None)), self._make(obj))
                self._entries[key] = entry
            return entry[1]


_aligned_copy = PerObject(np.array)


def _aligned(a):
    """A worker may receive an array at any byte offset (a deserialised buffer) and the core reads
    only aligned memory: then an aligned copy, made once per array and process, so the units that
    share the array share the copy (and what is cached on it, as a forest's column encoding)."""
    return a if not isinstance(a, np.ndarray) or a.flags.aligned else _aligned_copy(a)


# Reruns of the units left when the cluster lost the data they read (see data_on_workers).
LOST_DATA_RETRIES = 3


def run_units(function, shared, units):
    """function(*shared, *unit) for unit in units, as tasks of the active backend: a generator of
    the results in order, each yielded as soon as it and those before it are done. ``shared`` (the
    data every unit reads) is on every worker once (:func:`data_on_workers`); a unit's own
    arguments should be small: Dask's backend scatters an argument above 1 kB to a single worker.
    When the cluster loses the shared data with a worker, it is sent again and the units not yet
    yielded run again: they are seeded, so the results are the same."""
    units = list(units)
    done = 0
    for attempt in range(LOST_DATA_RETRIES + 1):
        try:
            with data_on_workers(*shared, again=attempt > 0):
                for result in Parallel(return_as="generator")(delayed(_Unit(function))(*shared, *unit)
                                                              for unit in units[done:]):
                    done += 1
                    yield result
            return
        except CancelledError:  # Dask cancels the tasks whose inputs were lost
            if attempt == LOST_DATA_RETRIES:
                raise


@contextmanager
def data_on_workers(*objects, again=False):
    """Within: with Dask's backend active, ``objects`` are sent to every worker once (joblib's
    ``scatter``, as one broadcast), and every task of every joblib call that takes one of these
    objects as an argument reads a worker's copy. Dask's active memory manager drops the copies
    that few waiting tasks need, so a worker's death can still lose the data: :func:`run_units`
    then sends it ``again`` (also the objects an outer call sent). Other backends: nothing changes."""
    backend, n_jobs = get_active_backend()
    objects = [o for o in objects if not isinstance(o, (type(None), bool, int, float, str))
               and (again or id(o) not in getattr(backend, "data_futures", {}))]  # else sent by an outer call
    if isinstance(backend, _LOCAL_BACKENDS) or not hasattr(backend, "data_futures") or not objects:
        yield
        return
    scattered = type(backend)(client=backend.client, wait_for_workers_timeout=backend.wait_for_workers_timeout,
                              **backend.submit_kwargs)
    # As joblib's scatter argument does, but with keys of their own (hash=False): a content key
    # would be shared with an earlier fit's copy that the cluster may be forgetting right now.
    futures = backend.client.scatter(objects, broadcast=True, hash=False)
    scattered._scatter = objects  # the ids below stay those of these objects
    scattered.data_futures = {**backend.data_futures, **{id(o): f for o, f in zip(objects, futures)}}
    with parallel_config(backend=scattered, n_jobs=n_jobs):
        yield
