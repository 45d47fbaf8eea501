"""Independent units of work on a cluster through joblib's active backend (Dask's
``parallel_backend("dask")``, or any backend that is not one of joblib's local ones).

Without such a backend nothing here dispatches anything and the estimators keep their threads in
one process. Nothing here imports dask unless the user activated its backend, which is inspected.
"""

from __future__ import annotations

import contextvars
import sys
import threading
import uuid
import weakref
from concurrent.futures import CancelledError
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

from joblib import parallel_config
from joblib.parallel import (LokyBackend, MultiprocessingBackend, SequentialBackend, ThreadingBackend,
                             get_active_backend)
from sklearn.utils.parallel import Parallel, delayed

from .io.packed import is_packed

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
    worker), on the worker's copies of the shared objects. Arrays arrive at any byte offset (Dask
    deserialises into shared buffers): those at the ``in_place`` positions (a forest's X, which the
    core reads whatever its alignment) are used as they are, other arrays through an aligned copy
    made once per array and process."""

    def __init__(self, function, in_place):
        # Not named "function": scikit-learn's delayed wraps this object with functools.update_wrapper,
        # which copies its __dict__ onto the wrapper, whose own "function" it would then replace.
        self.unit = function
        self.in_place = in_place

    def __call__(self, *args):
        args = [a.resolve() if isinstance(a, Pinned) else a for a in args]
        args = [a if k in self.in_place else aligned(a) for k, a in enumerate(args)]
        with parallel_config(backend="threading"):
            return self.unit(*args)


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


def aligned(a):
    """a, or for an unaligned array an aligned copy made once per array and process (for the core
    functions that read only aligned memory), shared by the units that share the array."""
    return a if not isinstance(a, np.ndarray) or a.flags.aligned else _aligned_copy(a)


# -- the shared objects, held by every worker for a whole fit ---------------------------------------

class LostData(RuntimeError):
    """A unit's worker holds no copy of a shared object (it joined, or was restarted, after the data
    were sent): :func:`run_units` sends the data again."""


# On a worker: key -> the worker's copy of a shared object, held until the fit that sent it ends
# (client.run(_unpin)). Copies arrive only while the fit sends them, so none arrives after.
_pins: dict = {}
_pins_lock = threading.Lock()

# The keys of the shared objects begin so: a worker pins what arrives under them.
PIN_PREFIX = "pyinterp-shared-"


def pin(key, data):
    """On a worker, as its copy of a shared object arrives under ``key`` (the worker plugin
    _pin_plugin.PinOnArrival calls this): keep a reference to it, under the object's key (``key``
    without its ``@k``). Dask's active memory manager drops the replicas that no
    waiting task needs (between the stages of an iRF fit, every one but one), and a dropped replica
    would be sent again for the next stage, and encoded again. A pinned copy stays with the worker
    (Dask counts it as unmanaged memory), and the units find it by key, not as a task input, so
    Dask never sends it again. Pinned on arrival, in the worker's own state machine: a pin asked
    for after the broadcast could come after the manager dropped the copy."""
    with _pins_lock:
        if key in data:
            _pins[key.rpartition("@")[0]] = data[key]


def _unpin(keys):
    with _pins_lock:
        for key in keys:
            _pins.pop(key, None)


# The clients whose workers have the plugin (a worker that joins later gets it from the scheduler).
_planted: weakref.WeakSet = weakref.WeakSet()


class Pinned:
    """A shared object as a unit's argument: the key each worker pins its copy under. A worker
    without the pin (one started or restarted after the data were sent) raises LostData, and
    run_units sends the data again. In the calling process (joblib runs the units there when the
    cluster has a single thread left) it is the object itself, which is not pickled."""

    def __init__(self, key, obj):
        self.key, self._obj = key, obj

    def __getstate__(self):
        return {"key": self.key, "_obj": None}

    def resolve(self):
        if self._obj is not None:
            return self._obj
        with _pins_lock:
            if self.key in _pins:
                return _pins[self.key]
        raise LostData(f"this worker holds no copy of a shared object ({self.key}): it joined or restarted after the "
                       f"data were sent")


# The shared objects the calling process has sent, context-local (nested calls, as iRF's forests,
# reuse what an outer call sent): id(obj) -> (obj, Pinned).
_sent = contextvars.ContextVar("pyinterp_sent", default={})

# Reruns of the units left when the cluster lost the data they read (see data_on_workers).
LOST_DATA_RETRIES = 3


def run_units(function, shared, units, *, in_place=()):
    """function(*shared, *unit) for unit in units, as tasks of the active backend: a generator of
    the results in order, each yielded as soon as it and those before it are done. ``shared`` (the
    data every unit reads) is on every worker once for the whole fit (:func:`data_on_workers`;
    ``in_place``: those of them that the units read whatever their alignment, and that the workers
    encode as a forest's X); a unit's own arguments should be small: Dask's backend scatters an
    argument above 1 kB to a single worker. When a unit's worker has no copy of the shared data (it
    joined or restarted after they were sent), they are sent again and the units not yet yielded
    run again: they are seeded, so the results are the same."""
    units = list(units)
    positions = tuple(k for k, o in enumerate(shared) if any(o is x for x in in_place))
    done = 0
    for attempt in range(LOST_DATA_RETRIES + 1):
        try:
            with data_on_workers(*shared, in_place=in_place, again=attempt > 0):
                sent = _sent.get()
                args = [sent[id(o)][1] if id(o) in sent else o for o in shared]
                for result in Parallel(return_as="generator")(delayed(_Unit(function, positions))(*args, *unit)
                                                              for unit in units[done:]):
                    done += 1
                    yield result
            return
        except (LostData, CancelledError):  # CancelledError: Dask cancelled tasks whose inputs were lost
            if attempt == LOST_DATA_RETRIES:
                raise


@contextmanager
def data_on_workers(*objects, in_place=(), again=False):
    """Within: with Dask's backend active, ``objects`` are on every worker once (a copy sent to
    each, pinned by the worker as it arrives: :func:`pin`), and the units of :func:`run_units` given
    one of them read the worker's copy. Before sending, refuses data that cannot fit a worker's
    memory limit (:func:`check_fits_workers`; ``in_place``: the objects a worker also encodes).
    When a worker has no copy, :func:`run_units` sends the objects ``again`` (those an outer call
    sent too, which keep their handles). Other backends: nothing changes."""
    backend, _ = get_active_backend()
    client = getattr(backend, "client", None)
    sent = _sent.get()
    objects = [o for o in objects if not isinstance(o, (type(None), bool, int, float, str))]
    fresh = [o for o in objects if id(o) not in sent]
    resent = [sent[id(o)] for o in objects if again and id(o) in sent]  # (object, its handle)
    if isinstance(backend, _LOCAL_BACKENDS) or client is None or not (fresh or resent):
        yield
        return
    objects = fresh + [o for o, _ in resent]
    workers = _workers(client)
    check_fits_workers(workers, objects, [o for o in objects if any(o is x for x in in_place)])
    # Keys of their own, not the content's: a content key would be shared with an earlier fit's copy
    # that the cluster may be forgetting right now. Each worker's copy has a key of its own (one
    # replica each): a broadcast's replicas are what the active memory manager reduces, and under
    # load it dropped one between the broadcast's copies, which Dask then sent again. Sent by the
    # client to each worker (direct): through the scheduler, the scheduler would hold a copy of X
    # while sending, unless the user's client says that it cannot reach the workers
    # (direct_to_workers=False).
    if client not in _planted:
        from ._pin_plugin import PinOnArrival  # imports distributed

        client.register_plugin(PinOnArrival(), name=PinOnArrival.name)
        _planted.add(client)
    keys = [f"{PIN_PREFIX}{uuid.uuid4().hex}" for _ in objects]
    futures = [client.scatter({f"{key}@{k}": o for key, o in zip(keys, objects)}, workers=[worker],
                              direct=client.direct_to_workers is not False)
               for k, worker in enumerate(sorted(workers))]
    # Objects sent again keep their handles (an outer call's, which unpins them when it ends), now
    # with the new keys; their old copies go.
    replaced = [handle.key for _, handle in resent]
    for (_, handle), key in zip(resent, keys[len(fresh):]):
        handle.key = key
    if replaced:
        client.run(_unpin, replaced, on_error="ignore")
    handles = [Pinned(key, o) for o, key in zip(fresh, keys)]
    token = _sent.set({**sent, **{id(o): (o, h) for o, h in zip(fresh, handles)}})
    try:
        yield
    finally:
        _sent.reset(token)
        client.run(_unpin, [h.key for h in handles], on_error="ignore")  # a dead worker's pins went with it
        del futures  # the pins hold the copies, the outer calls' too


def _workers(client) -> dict:
    """The cluster's workers: address -> the scheduler's information on it. Asked of the scheduler
    each time: Client.scheduler_info() returns the client's cached copy, which its periodic
    refresh may have just replaced by one without workers (seen: a fit polling the workers read
    "all gone" from it)."""
    try:
        return client.sync(client.scheduler.identity, n_workers=-1)["workers"]  # all (2025.4 on: 5 by default)
    except TypeError:  # an older distributed lists every worker
        return client.sync(client.scheduler.identity)["workers"]


def _payload_bytes(obj) -> int:
    """Bytes an object's arrays take (a dense or sparse matrix, packed calls and covariates)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if sp.issparse(obj):
        return obj.data.nbytes + obj.indices.nbytes + obj.indptr.nbytes
    if is_packed(obj):
        return obj._calls.nbytes + (0 if obj._covariates is None else obj._covariates.nbytes)
    return 0


def _gb(n) -> str:
    return f"{n / 1e9:.2f} GB"


def memory_room(workers) -> dict:
    """Per worker of ``workers`` (``_workers``) with a memory limit: (limit, room), room the bytes
    its data may take before Dask acts on it: the smallest of the spill, pause and terminate
    fractions of the limit (``distributed.worker.memory.*``: 0.7, 0.8, 0.95 by default). Empty
    when no worker has a limit, or Dask manages no memory."""
    import dask.config  # a distributed client is running: dask is installed

    fractions = [dask.config.get(f"distributed.worker.memory.{k}") for k in ("spill", "pause", "terminate")]
    fractions = [f for f in fractions if f]
    if not fractions:
        return {}
    limits = {w: info.get("memory_limit") or 0 for w, info in workers.items()}
    return {w: (limit, min(fractions) * limit) for w, limit in limits.items() if limit > 0}


def codes_bytes(n_rows, n_cols) -> int:
    """The least memory the column codes of an n_rows x n_cols matrix take: 2 bits a value."""
    return (n_rows + 3) // 4 * n_cols


def check_fits_workers(workers, objects, encoded):
    """Refuses, before anything is sent, shared data that cannot fit the smallest of ``workers``'
    memory limits (``_workers``, ``memory_room``): every worker holds it for the whole fit, with
    the column codes of each ``encoded`` object (packed calls are read in place). Data above that
    would only be spilled and sent again while the workers restart, and the fit would fail with
    errors that do not say why."""
    room = memory_room(workers)
    if not room:
        return
    data = sum(_payload_bytes(o) for o in objects)
    codes = sum(codes_bytes(*o.shape) for o in encoded if not is_packed(o))
    worker, (limit, usable) = min(room.items(), key=lambda item: item[1][1])
    if data + codes <= usable:
        return
    raise MemoryError(
        f"The training data ({_gb(data)}) and its column codes (at least {_gb(codes)}) do not fit the memory of "
        f"Dask worker {worker}: its limit is {_gb(limit)}, and Dask acts on its data (spills, pauses or restarts "
        f"it) at {usable / limit:.0%} of it ({_gb(usable)}). Every worker holds the whole X for the whole fit (the "
        f"units are trees and bootstraps, not columns). Give each worker more memory (one worker per machine, "
        f"with all its threads, holds X once per machine), or fit a PLINK .bed read by pyinterp.io.read_plink "
        f"(2 bits a genotype, read in place without codes). A forest fits X split by columns across the "
        f"workers instead (feature-parallel: X as a dask array or a pyinterp.io.ColumnFiles of .bed or .npy "
        f"files, docs/user/cluster.md), each worker holding only its columns.")
