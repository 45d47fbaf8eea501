"""Wall-clock measurement: best of repeats, wall + CPU of a block, and the machine's load (the
machine is shared, so every printed time comes with the 1-minute load average)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time


def best_of(fn, repeats=1, clock=time.perf_counter):
    """(smallest seconds over repeats calls of fn by ``clock``, wall by default; the last call's
    result)."""
    best, out = math.inf, None
    for _ in range(repeats):
        start = clock()
        out = fn()
        best = min(best, clock() - start)
    return best, out


def best_cpu_of(fn, repeats=1):
    """best_of in CPU seconds of this process: for single-threaded work on a loaded machine, where
    the wall clock mostly measures waiting for a core."""
    return best_of(fn, repeats, clock=time.process_time)


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


def load_line(when="the start") -> str:
    return f"load average {load():.2f} at {when} ({os.cpu_count()} CPUs)"


def _status_mb(field) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field)) / 1024


def peak_rss_mb() -> float:
    """This process's own peak resident memory (ru_maxrss would include the parent's at fork)."""
    return _status_mb("VmHWM")


def rss_mb() -> float:
    """This process's resident memory now."""
    return _status_mb("VmRSS")


def reset_peak_rss():
    """Starts peak_rss_mb's high-water mark again at the current resident memory (Linux), so a
    worker's peak is its fit's and not that of making its data."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def run_isolated(args, threads=2, *, may_fail=False, timeout=None) -> dict:
    """Runs `python *args` in a process of its own (so its peak memory is its own) and returns the
    JSON object its last output line holds. A failure exits, or with may_fail returns {"error":
    what happened} (a process killed by the kernel's out-of-memory killer leaves no message). After
    timeout seconds the process and any it started (an Rscript) are killed: a failure too."""
    with subprocess.Popen([sys.executable, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env={**os.environ, "OMP_NUM_THREADS": str(threads)},
                          start_new_session=timeout is not None) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
            what = None
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the worker and its children only
            proc.communicate()
            what = f"stopped after the {timeout:g} s limit"
    if what is None and proc.returncode != 0:
        killed = proc.returncode < 0 and not stderr
        what = f"killed by signal {-proc.returncode} (out of memory?)" if killed else stderr.strip()[-500:]
    if what is not None:
        if may_fail:
            return {"error": what}
        sys.exit(f"{' '.join(map(str, args))} failed: {what}")
    return json.loads(stdout.strip().splitlines()[-1])
