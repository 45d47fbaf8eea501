"""Where screen_pairs' memory goes at genome scale (issue 49): resident memory, anonymous and
file-backed (the .bed's mapped pages), after each stage and the peak of anonymous memory within
it, sampled every 50 ms from /proc/self/status.

Runs one replicate of bench/studies/genome_scale.py's design (n = 2,000, a planted pair of 1 SD,
seed 6: the replicate whose causal column the screen ranks 2,848th at 10^6) at its defaults:

    python bench/studies/genome_scale_memory.py [--p 1000000] [--folder /tmp/genome_scale]

2026-11-30, p = 10^6 (packed calls 477 MB), 2 threads; anonymous memory in MB, its peak within
each stage and what stays after it, and the file-backed memory it added beyond the libraries' 78 MB
(pread column): main at 2635fc0 and a643297 (another study running beside), then with the .bed
read by pread (nothing beside):

    stage            2635fc0        a643297        pread
                     peak   after   peak   after   peak   after  +file
    read_plink        388*   332*    349    288     348    288     0
    forest fit        692    692     671    432     671    671     0       (screen rows' calls repacked)
    MDI-oob           (with the fit)                679    440     0
    pair scan         973    706     600    489     600    490     2       (5.0 million pairs)
    triple scan       850    746     592    519     598    525     2       (63,260 triples)
    peak RSS         1532           1226            758                    (1.59x the packed calls)

Then with main at 18f7da3 (the .bim parsed leaner, pair_scan's products halved; nothing beside):
read_plink 233 MB after (peak 288), the forest fit 610, the pair scan's peak 534, the triple
scan's 536; peak RSS 689 MB, 1.44x the packed calls; screen_pairs 54.4 s. At 3014c45 (the scans
test two blocks at a time on 2 threads): the pair scan's peak 562, the triple scan's 583; peak
RSS 696 MB, 1.46x; screen_pairs 49.6 s.

(* that run wrote the cohort in the same process first; read_plink did not change.) The repacked
calls of the 1,000 screen rows (250 MB) lived in a vector per column, whose frees stayed in the
threads' malloc arenas; one buffer goes back to the system when the fit ends. The pair scan's
peak was its q-values (six arrays of its 5 million p-values, now two); the triple scan's, its HC2
step on 8,192 triples at a time (now 2,048). Then the .bed's 556 MB of pages: the forest's repack,
MDI-oob's reads of the screen rows and the scan's copy of its 3,163 variants each went through the
map, where the kernel maps the pages around each one read (64 KiB); now the screen rows' calls are
read once with pread into memory (PackedGenotypes.copy), which the forest and MDI-oob read in
place, and a selection of variants is read with pread. (The .bed's pages stay in the page cache,
which is the system's, shared and reclaimable.)
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genome_scale import write_cohort  # noqa: E402

STAGES = ("take_rows", "mdi_oob", "scan_pairs", "scan_triples")


def memory():
    """Resident memory in MB: total, anonymous and file-backed."""
    fields = dict(line.split(":", 1) for line in open("/proc/self/status")
                  if line.startswith(("VmRSS", "RssAnon", "RssFile")))
    return {k: int(v.split()[0]) // 1024 for k, v in fields.items()}


class Watch:
    """The peak of anonymous memory since the last report, sampled every 50 ms."""

    def __init__(self):
        self.peak = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            self.peak = max(self.peak, memory()["RssAnon"])
            time.sleep(0.05)

    def report(self, what):
        now = memory()
        print(f"{what:<20} anon peak {max(self.peak, now['RssAnon']):>5} MB, now {now}", flush=True)
        self.peak = now["RssAnon"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--p", type=int, default=1_000_000)
    parser.add_argument("--folder", default="/tmp/genome_scale")
    args = parser.parse_args()
    Path(args.folder).mkdir(parents=True, exist_ok=True)
    existed = Path(args.folder, f"marginal_n2000_p{args.p}_e1.0_s6.npy").is_file()
    stem = write_cohort(Path(args.folder), 2000, args.p, "marginal", 1.0, 6)
    if not existed:  # measure in a process that did not write the cohort
        os.execv(sys.executable, [sys.executable, *sys.argv])
    import pyinterp.interactions.screen as screen
    from pyinterp.io import read_plink

    watch = Watch()
    watch.report("start")
    X = read_plink(f"{stem}.bed", count_a2=True)
    y = np.load(f"{stem}.npy")
    watch.report("read_plink")
    for name in STAGES:  # screen_pairs' own stages, reported as they end
        def stage(*a, _run=getattr(screen, name), _name=name, **k):
            if _name == "mdi_oob":
                watch.report("after the forest fit")
            out = _run(*a, **k)
            watch.report(f"after {_name}")
            return out
        setattr(screen, name, stage)
    start = time.perf_counter()
    screen.screen_pairs(X, y, random_state=6, n_jobs=2, top=1000)
    peak = next(int(line.split()[1]) // 1024 for line in open("/proc/self/status") if line.startswith("VmHWM"))
    print(f"screen_pairs {time.perf_counter() - start:.1f} s, peak RSS {peak} MB")  # VmHWM: since the exec


if __name__ == "__main__":
    main()
