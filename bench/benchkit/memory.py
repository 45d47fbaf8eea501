"""This process's memory as /proc/self/status reports it, and the peak of its anonymous memory over
a with-block, sampled every 20 ms: what a computation's heap takes, apart from the file pages of a
memory-mapped X (which RSS counts too)."""

from __future__ import annotations

import threading


def status(key) -> int:
    """Bytes of a /proc/self/status entry ("RssAnon", "VmHWM", ...); 0 where there is none."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


class AnonPeak:
    """RssAnon at the start of a with-block (.before) and its largest sample during it (.peak)."""

    def __enter__(self):
        self.before = self.peak = status("RssAnon")
        self._done = threading.Event()
        self._watcher = threading.Thread(target=self._sample, daemon=True)
        self._watcher.start()
        return self

    def _sample(self):
        while not self._done.wait(0.02):
            self.peak = max(self.peak, status("RssAnon"))

    def __exit__(self, *exc):
        self._done.set()
        self._watcher.join()
        self.peak = max(self.peak, status("RssAnon"))
        return False
