"""DSTUMP of X in memory, memory-mapped, and feature-parallel (a ColumnFiles of a .npy and of a
.bed, measured block by block here, and on a LocalCluster of 2 workers x 1 thread): each route in
a process of its own, with its time, peak anonymous memory (RssAnon, sampled every 20 ms) and
peak RSS (VmHWM, which counts the resident pages of a memory-mapped file too); the tables must
be identical. Genotypes 0/1/2 in float32 with 2 % missing (NaN), y = 0.5 x_0 + noise.

    python bench/dstump_columns.py                    # n = 20,000, p = 10,000 (763 MiB of float32)
    python bench/dstump_columns.py --n 5000 --p 2000
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

FIELDS = ("scores", "threshold", "impurity_decrease", "sign", "n_left")


def route(folder, name):
    from pyinterp.importance import dstump
    from pyinterp.io import ColumnFiles, read_plink

    y = np.load(folder / "y.npy")
    npy, bed = str(folder / "X.npy"), str(folder / "X.bed")
    client = None
    if name == "cluster":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    with AnonPeak() as anon:
        start = time.perf_counter()
        X = {"in memory": lambda: np.load(npy), "memory-mapped": lambda: np.load(npy, mmap_mode="r"),
             ".bed packed": lambda: read_plink(bed), "files here": lambda: ColumnFiles(npy),
             ".bed files here": lambda: ColumnFiles(bed), "cluster": lambda: ColumnFiles(npy)}[name]()
        table = dstump(X, y, n_jobs=1)
        seconds = time.perf_counter() - start
    if client is not None:
        client.close()
        cluster.close()
    np.savez(folder / f"{name}.npz", **{f: table[f] for f in FIELDS})
    print(json.dumps({"seconds": seconds, "anon": anon.peak - anon.before, "hwm": status("VmHWM")}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--p", type=int, default=10_000)
    parser.add_argument("--route", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.route:
        return route(Path(args.route[0]), args.route[1])
    import bed_reader

    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        folder = Path(tmp)
        rng = np.random.default_rng(0)
        X = np.lib.format.open_memmap(folder / "X.npy", mode="w+", dtype=np.float32, shape=(args.n, args.p))
        for a in range(0, args.p, 1_000):
            b = min(args.p, a + 1_000)
            block = rng.binomial(2, rng.uniform(0.05, 0.5, b - a), size=(args.n, b - a)).astype(np.float32)
            block[rng.random(block.shape) < 0.02] = np.nan
            X[:, a:b] = block
        X.flush()
        y = 0.5 * np.nan_to_num(X[:, 0]) + rng.standard_normal(args.n)
        np.save(folder / "y.npy", y)
        bed_reader.to_bed(folder / "X.bed", np.load(folder / "X.npy"))
        del X
        print(f"n = {args.n:,}, p = {args.p:,}: float32 {args.n * args.p * 4 / 2**20:,.0f} MiB, .bed "
              f"{os.path.getsize(folder / 'X.bed') / 2**20:,.0f} MiB; one thread a process; load average "
              f"{os.getloadavg()[0]:.2f}")
        print(f"{'route':>16} {'seconds':>8} {'peak anon MiB':>14} {'peak RSS MiB':>13}")
        tables = {}
        for name in ("in memory", "memory-mapped", "files here", ".bed packed", ".bed files here", "cluster"):
            out = subprocess.run([sys.executable, __file__, "--route", str(folder), name], capture_output=True,
                                 text=True, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"{name:>16} {r['seconds']:>8.2f} {r['anon'] / 2**20:>14,.0f} {r['hwm'] / 2**20:>13,.0f}")
            tables[name] = np.load(folder / f"{name}.npz")
        same = all(np.array_equal(t[f], tables["in memory"][f]) for t in tables.values() for f in FIELDS)
        print(f"tables identical: {same}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
