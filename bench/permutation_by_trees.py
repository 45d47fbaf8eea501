"""Permutation importance of a feature-parallel X (a dask array over a memory-mapped float32 .npy)
read for runs of trees whose split columns of all rows fit a budget, against all the forest's
split columns at once (the budget above them, as before runs of trees): each budget in a process
of its own, with its time, the peak of anonymous memory (RssAnon, sampled every 20 ms), the runs
read and the values read; the importances must be identical.

    python bench/permutation_by_trees.py                 # n = 50,000, p = 4,000 (800 MB)
    python bench/permutation_by_trees.py --n 5000 --p 500 --trees 10
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchkit.memory import AnonPeak


def worker(folder, budget):
    import dask
    import dask.array as da

    from pyinterp.forest import split_columns
    from pyinterp.importance import permutation_oob

    forest = pickle.loads((folder / "forest.pkl").read_bytes())
    X = da.from_array(np.load(folder / "X.npy", mmap_mode="r"), chunks=(-1, 500))
    y = np.load(folder / "y.npy")
    split_columns.trees_bytes = lambda: budget
    runs, read = [], [0]
    real_read_all = split_columns.SplitColumns.read_all

    def counted(self, what):
        values = real_read_all(self, what)
        runs.append(len(self.features))
        read[0] += values.nbytes
        return values

    split_columns.SplitColumns.read_all = counted
    with AnonPeak() as anon, dask.config.set(scheduler="threads", num_workers=1):
        start = time.perf_counter()
        importances = permutation_oob(forest, X, y, n_repeats=2, random_state=0, n_jobs=1)
        seconds = time.perf_counter() - start
    np.save(folder / f"imp_{budget}.npy", importances)
    print(json.dumps({"seconds": seconds, "peak_anon": anon.peak - anon.before, "runs": runs, "read": read[0]}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--p", type=int, default=4_000)
    parser.add_argument("--trees", type=int, default=60)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(Path(args.worker[0]), int(args.worker[1]))
    from pyinterp import RandomForestRegressor

    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        folder = Path(tmp)
        rng = np.random.default_rng(0)
        X = np.lib.format.open_memmap(folder / "X.npy", mode="w+", dtype=np.float32, shape=(args.n, args.p))
        for a in range(0, args.n, 5_000):
            X[a:a + 5_000] = rng.standard_normal((min(5_000, args.n - a), args.p), dtype=np.float32)
        y = X[:, 0] + X[:, 1] * X[:, 2] + rng.standard_normal(args.n).astype(np.float32)
        np.save(folder / "y.npy", y)
        forest = RandomForestRegressor(args.trees, max_depth=args.depth, max_features=0.05, random_state=0,
                                       n_jobs=2).fit(X, y)
        (folder / "forest.pkl").write_bytes(pickle.dumps(forest))
        whole = args.n * args.p * 4
        print(f"n = {args.n:,}, p = {args.p:,} float32 ({whole / 2**20:,.0f} MiB), {args.trees} trees of depth "
              f"{args.depth}, n_repeats 2, one thread; load average {os.getloadavg()[0]:.2f}")
        print(f"{'budget':>12} {'runs':>5} {'columns (max run)':>18} {'read MiB':>9} {'peak anon MiB':>14} "
              f"{'seconds':>8}")
        results = {}
        for budget in (2**62, whole // 8, whole // 32):
            out = subprocess.run([sys.executable, __file__, "--worker", str(folder), str(budget)],
                                 capture_output=True, text=True, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            label = "all at once" if budget == 2**62 else f"{budget / 2**20:,.0f} MiB"
            print(f"{label:>12} {len(r['runs']):>5} {max(r['runs']):>18,} {r['read'] / 2**20:>9,.0f} "
                  f"{r['peak_anon'] / 2**20:>14,.0f} {r['seconds']:>8.1f}")
            results[budget] = np.load(folder / f"imp_{budget}.npy")
        same = all(np.array_equal(v, results[2**62]) for v in results.values())
        print(f"importances identical: {same}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
