"""Wall-clock measurement: best of repeats, wall + CPU of a block, and the machine's load (the
machine is shared, so every printed time comes with the 1-minute load average)."""

from __future__ import annotations

import math
import os
import time


def best_of(fn, repeats=1):
    """(smallest wall seconds over repeats calls of fn, the last call's result)."""
    best, out = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


class Timer:
    """Wall and CPU (this process) seconds of a with-block: .wall, .cpu."""

    def __enter__(self):
        self.wall, self.cpu = -time.perf_counter(), -time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall += time.perf_counter()
        self.cpu += time.process_time()


def load() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def load_line() -> str:
    return f"load average {load():.2f} at the start ({os.cpu_count()} CPUs)"
