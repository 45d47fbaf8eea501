"""A user's control of long computations in Python: their progress, stopping the threads they run
on, and what a stopped fit leaves.

Progress follows scikit-learn's ``verbose`` convention: 0 says nothing; 1 or more reports each
computation's units (trees, iterations, bootstraps, restarts, epochs, trials, lambdas) as they
finish - a tqdm bar on stderr when tqdm is installed, otherwise a plain line every few seconds and
at the end. Every report also goes to the ``pyinterp`` logger (INFO), so ``logging`` configuration
can route it. Estimators made of other fits pass ``verbose - 1`` to them (``inner``).

The core's loops that report progress (``report_progress`` in parallel.hpp) tell it through
``_core.set_progress_callback``; Python loops call :meth:`Progress.update`."""

from __future__ import annotations

import collections
import functools
import logging
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager

from . import _core

_END = object()

logger = logging.getLogger("pyinterp")

# The callbacks installed by the Progress objects open in this process, innermost last.
_installed: list = []


class Progress:
    """``with Progress(verbose, total, "trees", core=True):`` around one computation of ``total``
    units. core: the units are counted by the core's loop (installs the callback for this thread);
    otherwise call update() as units finish."""

    PLAIN_EVERY = 5.0  # seconds between plain lines

    def __init__(self, verbose, total, what, *, core=False):
        self.active = bool(verbose) and total > 0
        self.total, self.what, self.core = int(total), what, core
        self.done = 0
        self._bar = None
        self._start = self._last_line = time.perf_counter()

    def __enter__(self):
        if not self.active:
            return self
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            self._bar = tqdm(total=self.total, desc=f"pyinterp {self.what}", unit=self.what.rstrip("s") or None,
                             leave=False, file=sys.stderr)
        if self.core:
            _installed.append(self._core_update)
            _core.set_progress_callback(self._core_update)
        return self

    def __exit__(self, kind, error, trace):
        if not self.active:
            return False
        if self.core:
            _installed.remove(self._core_update)
            _core.set_progress_callback(_installed[-1] if _installed else None)
        if self._bar is not None:
            self._bar.close()
        if kind is None:
            self._report(final=True)
        else:
            logger.info("%s stopped after %d of %d (%s)", self.what, self.done, self.total, kind.__name__)
        return False

    def update(self, n=1):
        """n more units finished."""
        if self.active:
            self._set(self.done + n)

    def _core_update(self, done, total):
        self._set(done)

    def _set(self, done):
        if done == self.done:
            return
        step, self.done = done - self.done, done
        if self._bar is not None:
            self._bar.update(step)
        now = time.perf_counter()
        if now - self._last_line >= self.PLAIN_EVERY and done < self.total:
            self._last_line = now
            self._report(final=False)

    def _report(self, final):
        elapsed = time.perf_counter() - self._start
        line = f"{self.what}: {self.done}/{self.total} in {elapsed:.1f} s"
        logger.info(line)
        if self._bar is None and (final or self.done < self.total):
            print(f"pyinterp {line}", file=sys.stderr, flush=True)


def inner(verbose):
    """The verbose of the fits inside one that reports its own units: quiet at 1, on at 2."""
    return max(0, int(verbose) - 1)


# id(estimator) -> [the thread fitting it, how many of its fits that thread is in].
_fitting = {}
_fitting_lock = threading.Lock()


def guarded_fit(fit):
    """Decorates a fit method with two guarantees.

    - A fit that does not finish (Ctrl-C, a failing progress report, an error) leaves the
      estimator's attributes as they were before it began, so a fit interrupted half-way never
      looks fitted. The fits assign new objects to their attributes rather than changing them in
      place, so a shallow copy of them is enough.
    - One fit of an object at a time: a fit called while another thread fits the same object is
      refused (RuntimeError) before it changes anything. Two fits interleaving their attributes
      could leave one fit's shapes beside the other's core forest. A fit may call fit on its own
      object in its thread."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        me = threading.get_ident()
        with _fitting_lock:
            entry = _fitting.setdefault(id(self), [me, 0])
            if entry[0] != me:
                raise RuntimeError(f"{type(self).__name__}.fit was called while another thread fits the same "
                                   "object; fit one object in one thread at a time (sklearn.base.clone gives each "
                                   "thread its own copy)")
            entry[1] += 1
        before = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        finally:
            with _fitting_lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del _fitting[id(self)]

    return wrapper


@contextmanager
def worker_threads(n_threads):
    """``with worker_threads(n) as imap:`` - ``imap(function, items)`` yields function(item) in
    order, computed on n threads that stop with the thread that opened them. Only the main thread
    sees Ctrl-C, and only when it runs Python code: it waits in short steps. When the block fails
    (KeyboardInterrupt or any error), the core's loops running in the workers stop at their next
    checkpoint, tasks not yet started are dropped, and the workers are joined before the error goes
    on: no thread is left running."""
    executor = ThreadPoolExecutor(n_threads)

    def imap(function, items):
        # A few tasks ahead of the consumer, and each result let go once yielded: results that
        # are large (iRF's bootstrap leaves, spilled to disk by the caller) never pile up.
        items = iter(items)
        pending = collections.deque()
        while True:
            while len(pending) < 2 * n_threads and (item := next(items, _END)) is not _END:
                pending.append(executor.submit(function, item))
            if not pending:
                return
            future = pending.popleft()
            while not wait([future], timeout=0.05).done:
                pass
            yield future.result()

    try:
        yield imap
    except BaseException:
        _core.stop_worker_threads(True)
        try:
            executor.shutdown(wait=True, cancel_futures=True)
        finally:
            _core.stop_worker_threads(False)
        raise
    executor.shutdown(wait=True)
