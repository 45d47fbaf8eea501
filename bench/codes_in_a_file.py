"""A forest fitted on a memory-mapped float32 .npy of real values, its column codes on the heap
against in a temporary file (PYINTERP_CODES_MEMORY=0), each in a process of its own: fit time,
peak RSS (VmHWM) and the peak of anonymous memory (RssAnon, sampled every 20 ms), which is what
the codes in a file take off; the trees must be identical.

With more than 65,536 distinct values a column's codes take 4 bytes a value, X's size: on the
heap they are a second copy of X in memory; in the file the kernel writes them out and drops them
under memory pressure, as it does X's pages.

    python bench/codes_in_a_file.py                       # n = 100,000, p = 2,000 (800 MB)
    python bench/codes_in_a_file.py --n 20000 --p 500 --trees 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchkit.memory import AnonPeak, status


def worker(folder, trees):
    from pyinterp import RandomForestRegressor

    X = np.load(folder / "X.npy", mmap_mode="r")
    y = np.load(folder / "y.npy")
    before_hwm = status("VmHWM")
    with AnonPeak() as anon:
        t = time.perf_counter()
        forest = RandomForestRegressor(trees, max_features="sqrt", n_jobs=2, random_state=0).fit(X, y)
        took = time.perf_counter() - t
    fingerprint = float(np.sum(forest.predict(X[:2000]) * np.arange(1, 2001)))
    print(json.dumps(dict(time=took, hwm=status("VmHWM"), hwm_before=before_hwm, anon_before=anon.before,
                          anon_peak=anon.peak, fingerprint=fingerprint)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--p", type=int, default=2_000)
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--folder", type=Path, default=None, help="where X is written (default: TMPDIR)")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(Path(args.worker[0]), int(args.worker[1]))
    with tempfile.TemporaryDirectory(dir=args.folder) as d:
        folder = Path(d)
        rng = np.random.RandomState(0)
        X = np.lib.format.open_memmap(folder / "X.npy", mode="w+", dtype=np.float32, shape=(args.n, args.p))
        for c in range(0, args.p, 100):
            X[:, c:c + 100] = rng.standard_normal((args.n, min(100, args.p - c)))
        y = X[:, 0] * X[:, 1] + X[:, 2] + rng.standard_normal(args.n)
        np.save(folder / "y.npy", y.astype(np.float64))
        X.flush()
        del X
        print(f"memory-mapped float32 X: n = {args.n:,}, p = {args.p:,} ({args.n * args.p * 4 / 1e9:.2f} GB), "
              f"{args.trees} trees, max_features sqrt, 2 threads; load average {os.getloadavg()[0]:.2f}")
        results = {}
        for where, env in (("heap", {}), ("file", {"PYINTERP_CODES_MEMORY": "0", "TMPDIR": str(folder)})):
            environ = {k: v for k, v in os.environ.items() if k != "PYINTERP_CODES_MEMORY"}
            out = subprocess.run([sys.executable, __file__, "--worker", str(folder), str(args.trees)],
                                 env={**environ, **env}, capture_output=True, text=True, check=True)
            r = results[where] = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"  codes in {where}: fit {r['time']:.2f} s, peak RSS {r['hwm'] / 1e6:.0f} MB, peak anonymous "
                  f"memory {r['anon_peak'] / 1e6:.0f} MB (before the fit {r['anon_before'] / 1e6:.0f} MB)")
        same = results["heap"]["fingerprint"] == results["file"]["fingerprint"]
        print(f"  predictions identical: {same}; load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
