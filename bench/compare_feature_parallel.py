"""The feature-parallel fit (a dask array X split by columns over the workers) against one process,
in one run: fit time, the bytes each block received and sent back, the memory the fit added on
each worker and here, and the trees checked bit-identical to the one-process fit.

    python bench/compare_feature_parallel.py            # genotypes n = 5,000, p = 20,000, 10 trees
    python bench/compare_feature_parallel.py --quick    # n = 2,000, p = 4,000, 4 trees
    python bench/compare_feature_parallel.py --n 50000 --p 2000 --blocks-per-worker 4
    python bench/compare_feature_parallel.py --files      # X (1 GB .npy) on workers of 0.5 GB each
    python bench/compare_feature_parallel.py --files --bed  # the same X as a PLINK .bed (62.5 MB)

With --files, the 2-worker forest then predicts every row and explains --explain rows (SHAP) from
the same files, their split columns read by the workers, beside the same from X memory-mapped here.

With --files, X is written to a .npy file (n = 50,000 x p = 5,000 float32 by default, 1 GB) and
fitted as a pyinterp.io.ColumnFiles on workers whose memory limit (--worker-memory, 0.5 GB) is
below X's size: each worker reads its columns from the file in panels and keeps their codes.
With --bed, the fit, predictions, SHAP values and MDI-oob read X from a .bed written from that
.npy (bed-reader), which this process still maps for the one-process comparisons.

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
import tempfile
import time

import numpy as np
from benchkit.timing import load
from compare_distributed import _start_watch, _status

from pyinterp import _core
from pyinterp._distributed import _workers
from pyinterp._validation import mapped_file


def genotypes_on_workers(da, n, p, chunk, seed=0):
    """Genotypes (0/1/2 in float32, 2 % missing as NaN) made chunk by chunk on the workers (the
    values depend on the chunks: keep them the same to compare fits)."""
    X = da.random.RandomState(seed).binomial(2, 0.3, size=(n, p), chunks=(n, chunk)).astype(np.float32)
    miss = da.random.RandomState(seed + 1).random_sample((n, p), chunks=(n, chunk)) < 0.02
    X = da.where(miss, np.float32(np.nan), X)
    return X


def write_genotypes(path, n, p, seed=0, rows=2_000):
    """Genotypes as above written to a .npy file a slab of rows at a time (never whole here)."""
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, p))
    rng = np.random.default_rng(seed)
    for start in range(0, n, rows):
        slab = rng.binomial(2, 0.3, size=(min(rows, n - start), p)).astype(np.float32)
        slab[rng.random(slab.shape) < 0.02] = np.nan
        X[start:start + len(slab)] = slab
    X.flush()
    del X
    return np.load(path, mmap_mode="r")


def files_run(args):
    """X in a .npy file, fitted as ColumnFiles on workers whose limit is below X's size."""
    import distributed

    from pyinterp.forest.feature_parallel import fit_forest_columns
    from pyinterp.io import ColumnFiles

    n, p, trees = args.n or 50_000, args.p or 5_000, args.trees
    folder = tempfile.mkdtemp(dir=args.folder)
    path = os.path.join(folder, "X.npy")
    X = write_genotypes(path, n, p)
    source = path
    if args.bed:
        import bed_reader

        source = os.path.join(folder, "X.bed")
        bed_reader.to_bed(source, np.array(X), properties={"sid": [f"v{j}" for j in range(p)]})
    y = np.nan_to_num(X[:, 10]) * np.nan_to_num(X[:, 20]) + np.nan_to_num(X[:, 30]) + np.random.RandomState(0).randn(n)
    print(f"feature-parallel fit from a {os.path.splitext(source)[1]} file: n = {n}, p = {p} float32 genotypes "
          f"(2 % NaN; X {X.nbytes / 1e9:.2f} GB), {trees} trees, mtry sqrt(p), workers limited to "
          f"{args.worker_memory} each; load average {load()}")
    params = _core.ForestParams()
    params.n_estimators, params.n_draws, params.seed, params.max_features = trees, n, 1, int(np.sqrt(p))
    params.n_threads = 2
    here = _start_watch()
    t = time.perf_counter()
    one = _core.fit_forest(X, y, None, 0, None, None, params, mapped_file=mapped_file(X))
    local = time.perf_counter() - t
    added = (_status("VmHWM") - here) / 2**20
    print(f"  one process, 2 threads, X memory-mapped: {local:.2f} s, peak RSS added {added:.0f} MB")
    params.n_threads = 1
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, memory_limit=args.worker_memory) as cluster, \
                distributed.Client(cluster) as client:
            started = set(_workers(client))
            before = client.run(lambda: _status("VmRSS"))
            client.run(_start_watch)
            made = []
            t = time.perf_counter()
            try:
                forest = fit_forest_columns(ColumnFiles(source), y, None, 0, None, None, params, client=client,
                                            blocks_out=made)
            except (MemoryError, RuntimeError) as e:
                print(f"  {workers} worker(s): {type(e).__name__}: {e}")
                continue
            took = time.perf_counter() - t
            peaks = client.run(lambda: _status("VmHWM"))
            restarted = set(_workers(client)) != started
            same = all(np.array_equal(a[k], b[k]) for a, b in zip(one.__getstate__()["trees"],
                                                                  forest.__getstate__()["trees"]) for k in a)
            blocks = made[0]
            print(f"  {workers} worker(s) x 1 thread: {took:.2f} s ({took / local:.1f}x one process), trees identical: "
                  f"{same}, a worker restarted: {restarted}; codes per block "
                  f"{blocks.codes_nbytes.mean() / 2**20:.0f} MB")
            for w, peak in peaks.items():
                print(f"    worker {w}: RSS before the fit {before[w] / 2**20:.0f} MB, peak {peak / 2**20:.0f} MB")
            if workers == 2:
                after_fit(forest, one, ColumnFiles(source), X, y, args.explain)
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    os.rmdir(folder)
    print(f"load average after: {load()}; {os.cpu_count()} cores")


def after_fit(forest, one, files, X, y, n_explain):
    """Predictions of all rows, SHAP values of the first n_explain and MDI-oob, from the files
    (their split columns read by the workers, forest/split_columns.py; MDI-oob through the
    out-of-bag leaves recorded a run of rows at a time) and from X memory-mapped in this process:
    time, this process's peak, equal results."""
    from pyinterp.forest.split_columns import SplitColumns

    here = _start_watch()
    t = time.perf_counter()
    columns = SplitColumns(forest, files)
    predicted = np.concatenate([columns.core.predict(rows, 2) for _, _, rows in columns.each_run()])
    took = time.perf_counter() - t
    added = (_status("VmHWM") - here) / 2**20
    t = time.perf_counter()
    mapped = one.predict(X, 2)
    took_mapped = time.perf_counter() - t
    read = columns.n_rows * len(columns.features) * columns.dtype.itemsize / 2**20
    print(f"  predict all {columns.n_rows} rows from the files: {took:.2f} s ({len(columns.features)} split columns, "
          f"{read:.0f} MB as values, from the workers in {len(columns.runs())} runs"
          f"{f' (a .bed: sent and read here packed, about {read / 16:.0f} MB)' if files.packed else ''}; "
          f"peak RSS added here {added:.0f} MB); "
          f"memory-mapped here: {took_mapped:.2f} s; equal: {np.array_equal(predicted, mapped)}")
    small = files.__class__(files.paths, rows=np.arange(n_explain))
    t = time.perf_counter()
    columns = SplitColumns(forest, small)
    values = np.zeros((n_explain, X.shape[1]))
    explained = _core.shap_values(columns.core, columns.read(0, n_explain), 2, False, "auto")[0]
    values[:, columns.features] = explained[..., 0]
    took = time.perf_counter() - t
    t = time.perf_counter()
    want = _core.shap_values(one, np.ascontiguousarray(X[:n_explain]), 2, False, "auto")[0][..., 0]
    took_mapped = time.perf_counter() - t
    print(f"  SHAP values of {n_explain} rows from the files: {took:.2f} s; from X memory-mapped here: "
          f"{took_mapped:.2f} s; largest difference {np.abs(values - want).max():.1e}")
    here = _start_watch()
    t = time.perf_counter()
    columns = SplitColumns(forest, files)
    stand_in, recorded = columns.out_of_bag("MDI-oob", 2)
    mean = np.zeros(X.shape[1])
    mean[columns.features] = _core.oob_importance(columns.core, stand_in, y, None, _core.OobMeasure.mdi_oob, 2,
                                                  recorded=recorded)[0]
    took = time.perf_counter() - t
    added = (_status("VmHWM") - here) / 2**20
    t = time.perf_counter()
    want = _core.oob_importance(one, X, y, None, _core.OobMeasure.mdi_oob, 2)[0]
    took_mapped = time.perf_counter() - t
    leaves = 4 * columns.core.n_trees * columns.n_rows / 2**20
    print(f"  MDI-oob from the files: {took:.2f} s (leaves recorded: {recorded}, {leaves:.0f} MB of them against "
          f"{columns.n_rows * columns.row_bytes / 2**20:.0f} MB of split columns; peak RSS added here {added:.0f} MB); "
          f"memory-mapped here: {took_mapped:.2f} s; largest difference {np.abs(mean - want).max():.1e}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None, help="rows (5,000; 50,000 with --files)")
    parser.add_argument("--p", type=int, default=None, help="columns (20,000; 5,000 with --files)")
    parser.add_argument("--files", action="store_true", help="X in a .npy file, as a ColumnFiles")
    parser.add_argument("--bed", action="store_true", help="with --files, X as a PLINK .bed")
    parser.add_argument("--worker-memory", default="0.5GB", help="each worker's memory limit with --files")
    parser.add_argument("--folder", default=None, help="where --files writes X (default: the temporary folder)")
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--explain", type=int, default=1_000, help="rows --files explains with SHAP after the fit")
    parser.add_argument("--blocks-per-worker", type=int, default=1,
                        help="column chunks (blocks) per worker; each is asked apart")
    args = parser.parse_args()
    if args.files:
        return files_run(args)
    n, p, trees = (2000, 4000, 4) if args.quick else (args.n or 5000, args.p or 20000, args.trees)
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
