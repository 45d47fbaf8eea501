"""Ctrl-C in tests: a real SIGINT sent to this process from a timer thread."""

import gc
import os
import signal
import threading
import time
from contextlib import contextmanager


@contextmanager
def ctrl_c_after(seconds):
    """Within: a SIGINT reaches the process ``seconds`` in, unless the block ended first. Yields
    the time.perf_counter() at which the timer started: latencies are measured from there, since the
    collection before it takes a large part of a second late in a long test session under load.

    Python ignores a KeyboardInterrupt raised in code the garbage collector runs (a finalizer, or a
    gc.callbacks entry: hypothesis installs one), printing "Exception ignored", so there is no
    automatic collection within (CI lost the signal twice in hypothesis' callback). Python's own
    handler is in place within: a test run started in the background of a shell script inherits
    SIGINT ignored, and Python then installs none."""
    gc.collect()
    gc.disable()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    started = time.perf_counter()
    timer.start()
    try:
        yield started
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)
        gc.enable()
