"""The feature-parallel fit (a dask array X split by columns over the workers) against one process,
in one run: fit time, the bytes each block received and sent back, the memory the fit added on
each worker and here, and the trees checked bit-identical to the one-process fit.

    python bench/compare_feature_parallel.py            # genotypes n = 5,000, p = 20,000, 10 trees
    python bench/compare_feature_parallel.py --quick    # n = 2,000, p = 4,000, 4 trees
    python bench/compare_feature_parallel.py --n 50000 --p 2000 --blocks-per-worker 4

One process fits on its 2 threads; the cluster is 1 or 2 local worker processes of 1 thread, each
holding the column chunks it computed (X is made on the workers: this process never holds it,
except for the one-process fit and the check). The blocks' messages are what the model below
counts; Dask adds a few hundred bytes a call.

Cost model per tree level, W blocks, n rows, mtry candidates a node: the driver sends each block
the rows of the nodes it has candidates in (4 bytes a row: at most 4 n per block per round, W 4 n
in all), and each chosen split's block returns a byte per row of its node (n in all); a block
scans its candidates' codes over their nodes' rows (mtry / W candidates a node, n rows a level).
So a level moves about 4 W n + n bytes through the driver and computes mtry n / W code reads per
block; a tree of depth D repeats it D times (plus a round per level in which a node finds fewer
than mtry varying candidates, rare at biobank n).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from benchkit.timing import load
from compare_distributed import _start_watch, _status

from pyinterp import _core


def genotypes_on_workers(da, n, p, chunk, seed=0):
    """Genotypes (0/1/2 in float32, 2 % missing as NaN) made chunk by chunk on the workers (the
    values depend on the chunks: keep them the same to compare fits)."""
    X = da.random.RandomState(seed).binomial(2, 0.3, size=(n, p), chunks=(n, chunk)).astype(np.float32)
    miss = da.random.RandomState(seed + 1).random_sample((n, p), chunks=(n, chunk)) < 0.02
    X = da.where(miss, np.float32(np.nan), X)
    return X


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--p", type=int, default=20000)
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--blocks-per-worker", type=int, default=1,
                        help="column chunks (blocks) per worker; each is asked apart")
    args = parser.parse_args()
    n, p, trees = (2000, 4000, 4) if args.quick else (args.n, args.p, args.trees)
    import dask.array as da
    import distributed

    from pyinterp.forest.feature_parallel import fit_forest_columns

    print(f"feature-parallel fit: n = {n}, p = {p} float32 genotypes (2 % NaN), {trees} trees, mtry sqrt(p); "
          f"load average {load()}")
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, memory_limit="4GB") as cluster, \
                distributed.Client(cluster) as client:
            # Made in 4 chunks whatever the workers (the values depend on the chunks), then cut
            # into the blocks asked for.
            X = genotypes_on_workers(da, n, p, chunk=-(-p // 4))
            X = X.rechunk({1: -(-p // (workers * args.blocks_per_worker))}).persist()
            distributed.wait(X)
            values = X.compute()
            y = np.nan_to_num(values[:, 10]) * np.nan_to_num(values[:, 20]) + np.nan_to_num(values[:, 30])
            y = y + np.random.RandomState(0).randn(n)
            params = _core.ForestParams()
            params.n_estimators, params.n_draws, params.seed = trees, n, 1
            params.max_features = int(np.sqrt(p))
            if workers == 1:
                local = dict(params=params)
                params.n_threads = 2
                here = _start_watch()
                t = time.perf_counter()
                one = _core.fit_forest(values, y, None, 0, None, None, params)
                local["time"] = time.perf_counter() - t
                local["rss"] = _status("VmHWM") - here
                print(f"  one process, 2 threads: {local['time']:.2f} s, peak RSS added {local['rss'] / 2**20:.0f} MB "
                      f"(X {values.nbytes / 2**20:.0f} MB)")
                params.n_threads = 1
            before = client.run(_start_watch)
            here = _start_watch()
            made = []
            t = time.perf_counter()
            forest = fit_forest_columns(X, y, None, 0, None, None, params, client=client, blocks_out=made)
            took = time.perf_counter() - t
            added_here = _status("VmHWM") - here
            peaks = client.run(lambda: _status("VmHWM"))
            blocks = made[0]
            same = all(np.array_equal(a[k], b[k]) for a, b in zip(one.__getstate__()["trees"],
                                                                  forest.__getstate__()["trees"]) for k in a)
            levels = sum(int(t["depth"].max()) for t in forest.__getstate__()["trees"])
            print(f"  {workers} worker(s) x 1 thread, {len(blocks.bounds) - 1} blocks: {took:.2f} s "
                  f"({took / local['time']:.1f}x one process), trees identical: {same}; {levels} levels")
            print(f"    per block and tree: sent {blocks.bytes_sent.mean() / trees / 2**10:.0f} kB, "
                  f"received {blocks.bytes_received.mean() / trees / 2**10:.0f} kB "
                  f"(X per block {values.nbytes / (len(blocks.bounds) - 1) / 2**20:.1f} MB, codes "
                  f"{blocks.codes_nbytes.mean() / 2**20:.1f} MB); per level and block "
                  f"{blocks.bytes_sent.mean() / levels / 2**10:.0f} kB sent (4 n = {4 * n / 2**10:.0f} kB)")
            for w, peak in peaks.items():
                print(f"    worker {w}: peak RSS added by the fit {(peak - before[w]) / 2**20:.0f} MB")
            print(f"    this process: peak RSS added by the fit {added_here / 2**20:.0f} MB")
            del values
    print(f"load average after: {load()}; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
