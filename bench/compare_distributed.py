"""One process against a Dask cluster of 2 local worker processes, in one run: fit time of a forest
and of iRF (results checked bit-identical), then the cost model for more workers.

    python bench/compare_distributed.py            # forest n = 2000, p = 1000, 300 trees; iRF n = 1000, p = 50
    python bench/compare_distributed.py --quick    # smaller, about a minute

It also reports, per worker, how many times X came in, all bytes that came in and the peak
memory a fit added (Linux: /proc/self/status), and the calling process's.

On a machine with few cores the cluster cannot win: its 2 workers x 1 thread use the same cores
as the process's 2 threads, and it adds the transfers and the task overhead. What this run
measures is that overhead, and the constants of the model below, from which the break-even
forest size for W machines follows:

    one machine (c threads):  E + T t / c
    W workers (c threads):    F + W X / B + E + T t / (W c) + T r / B

E: encoding X (once per worker, in parallel), t: one tree on one thread, F: fixed cost of a
distributed fit (tasks, scheduling), X: bytes of the training data (broadcast: one copy per
worker, sent from the client), r: bytes of a fitted tree coming back, B: bandwidth. The cluster
wins when T > (F + W X / B) / (t / c (1 - 1/W) - r / B).
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import joblib
import numpy as np
from benchkit.timing import best_of, load

from pyinterp import IterativeRandomForest, RandomForestRegressor, _core
from pyinterp.datasets import make_lss


class Arrivals:
    """A worker plugin logging the bytes of every key that comes into the worker's memory by
    broadcast or by transfer (not the results of its own tasks)."""

    def setup(self, worker):
        self.worker = worker
        worker.bench_arrivals = []

    def transition(self, key, start, finish, **kwargs):
        task = self.worker.state.tasks.get(key)
        if finish == "memory" and start not in ("executing", "long-running") and task is not None:  # not a result
            self.worker.bench_arrivals.append(task.nbytes)


def _status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))


def _start_watch(dask_worker=None):
    """On a worker (or here): forget the arrivals and the peak RSS so far (Linux), return the RSS."""
    if dask_worker is not None and hasattr(dask_worker, "bench_arrivals"):  # an Arrivals plugin's log
        dask_worker.bench_arrivals.clear()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status("VmRSS")


def traffic(client, fit, X):
    """fit() on the cluster; per worker: the copies of X that came in, all bytes that came in, and
    the peak RSS added; and the peak RSS the calling process added."""
    before = client.run(_start_watch)
    here = _start_watch()
    fit()
    added_here = _status("VmHWM") - here
    logs = client.run(lambda dask_worker: (dask_worker.bench_arrivals, _status("VmHWM")))
    rows = [(sum(b >= X.nbytes for b in log), sum(log), hwm - before[w]) for w, (log, hwm) in logs.items()]
    return rows, added_here


def print_traffic(rows, added_here, X):
    for k, (copies, total, added) in enumerate(rows):
        print(f"    worker {k}: X came {copies} time(s); {total / 1e6:7.1f} MB in; peak RSS +{added / 1e6:6.0f} MB "
              f"= {added / X.nbytes:4.2f} X")
    print(f"    calling process: peak RSS +{added_here / 1e6:.0f} MB (it also holds the scheduler here)")


def same_forest(a, b):
    return pickle.dumps(a) == pickle.dumps(b)


def irf_table(irf):
    return repr(irf.interactions_.to_frame().to_dict("list"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    n, p, trees = (1000, 300, 100) if args.quick else (2000, 1000, 300)
    rng = np.random.RandomState(0)
    X = rng.rand(n, p)
    y = X[:, 0] * X[:, 1] + X[:, 2] + 0.1 * rng.randn(n)
    irf_n, irf_params = (500, dict(n_iterations=2, n_estimators=100, n_bootstraps=4)) if args.quick else \
        (1000, dict(n_iterations=3, n_estimators=200, n_bootstraps=6))
    Xi, yi = make_lss(n_samples=irf_n, n_features=50, random_state=0)[:2]
    print(f"{os.cpu_count()} CPUs on this machine, shared with other jobs: the cluster's 2 workers x 1 thread and "
          f"the process's 2 threads use the same cores. Load average {load():.2f} at the start.\n", flush=True)

    forest = dict(n_estimators=trees, max_features="sqrt", random_state=0)
    t_local, local = best_of(lambda: RandomForestRegressor(**forest, n_jobs=2).fit(X, y))
    fifth = {**forest, "n_estimators": max(trees // 5, 1)}
    t_one, _ = best_of(lambda: RandomForestRegressor(**fifth, n_jobs=1).fit(X, y))
    t_tree = t_one / max(trees // 5, 1)
    t_encode, _ = best_of(lambda: _core.ColumnCodes(X), repeats=3)
    r_tree = len(pickle.dumps(local._forest)) / trees
    t_irf_local, irf_local = best_of(lambda: IterativeRandomForest(**irf_params, random_state=0, n_jobs=2).fit(Xi, yi))

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        with joblib.parallel_backend("dask"):
            RandomForestRegressor(4, random_state=0).fit(X[:50, :5], y[:50])  # workers warm: imports done
            t_fixed, _ = best_of(lambda: RandomForestRegressor(4, random_state=0).fit(X[:50, :5], y[:50]), repeats=3)
            t_cluster, remote = best_of(lambda: RandomForestRegressor(**forest).fit(X, y))
            t_irf_cluster, irf_remote = best_of(lambda: IterativeRandomForest(**irf_params, random_state=0).fit(Xi, yi))
        from distributed import WorkerPlugin
        client.register_plugin(type("Arrivals", (Arrivals, WorkerPlugin), {})(), name="arrivals")
        with joblib.parallel_backend("dask"):
            forest_traffic = traffic(client, lambda: RandomForestRegressor(**forest).fit(X, y), X)
            irf_traffic = traffic(client, lambda: IterativeRandomForest(**irf_params, random_state=0).fit(Xi, yi), Xi)
        start = time.perf_counter()
        futures = client.scatter([X], broadcast=True, hash=False, direct=True)
        t_scatter = time.perf_counter() - start
        del futures

    print(f"forest  n = {n}, p = {p}, {trees} trees, max_features sqrt")
    print(f"  one process, 2 threads        {t_local:8.2f} s")
    print(f"  2 workers x 1 thread          {t_cluster:8.2f} s   ratio {t_cluster / t_local:5.2f}   "
          f"identical: {same_forest(local._forest, remote._forest)}")
    print(f"iRF  n = {irf_n}, p = 50, {irf_params}")
    print(f"  one process, 2 threads        {t_irf_local:8.2f} s")
    print(f"  2 workers x 1 thread          {t_irf_cluster:8.2f} s   ratio {t_irf_cluster / t_irf_local:5.2f}   "
          f"identical: {irf_table(irf_local) == irf_table(irf_remote)}")
    print(f"  load average {load():.2f} at the end\n")
    print(f"data moved and worker memory (X {X.nbytes / 1e6:.1f} MB for the forest, {Xi.nbytes / 1e6:.1f} MB for iRF)")
    print("  forest")
    print_traffic(*forest_traffic, X)
    print("  iRF")
    print_traffic(*irf_traffic, Xi)
    print()

    bandwidth = 2 * X.nbytes / t_scatter  # the broadcast sent one copy per worker
    print("cost model constants (this machine)")
    print(f"  t   one tree, one thread            {t_tree * 1e3:9.2f} ms")
    print(f"  E   encoding X once                 {t_encode * 1e3:9.2f} ms")
    print(f"  F   fixed cost of a cluster fit     {t_fixed * 1e3:9.2f} ms   (4 trees of a 50 x 5 X: tasks, scheduling)")
    print(f"  X   training data                   {X.nbytes / 1e6:9.2f} MB   (per worker, once)")
    print(f"  r   one fitted tree back            {r_tree / 1e3:9.2f} kB")
    print(f"  B   loopback, measured broadcast    {bandwidth / 1e6:9.0f} MB/s\n")
    c = 8
    print(f"break-even forest size T* (cluster of W machines with c = {c} threads each, against one of them)")
    print(f"  {'W':>4} {'B = loopback':>14} {'B = 1 Gbit/s':>14} {'B = 10 Gbit/s':>14}")
    for W in (2, 4, 8, 16, 64):
        cells = []
        for B in (bandwidth, 125e6, 1.25e9):
            gain = t_tree / c * (1 - 1 / W) - r_tree / B
            cells.append(f"{(t_fixed + W * X.nbytes / B) / gain:14.0f}" if gain > 0 else f"{'never':>14}")
        print(f"  {W:>4} " + " ".join(cells))
    print("\n  (t measured on one thread of this machine; a tree costs t / c of a c-thread machine's time)")


if __name__ == "__main__":
    main()
