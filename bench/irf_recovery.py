"""Which settings recover order-2, -3 and -4 interactions: LSSFind (LSSrank), iRF with
style="R" and iRF with style="pyinterp", on make_lss data (two rules of the given order, n rows)
over a grid of p and SNR, with replicates. For each true rule it records its rank in the
method's own table order (LSSrank's rho; R style's cpe; pyinterp style's stability, then
prevalence), and writes one CSV row per (cell, replicate, method, rule).

A rule counts as recovered when it ranks within the top 2 (the number of true rules), and as found
when it appears at all. docs/results/irf_recovery.md reports the run.

    python bench/irf_recovery.py --out bench/results_data/irf_recovery.csv
    python bench/irf_recovery.py --orders 3 --p 50 --snr 2 --replicates 2    # one small cell
    python bench/irf_recovery.py --summary bench/results_data/irf_recovery.csv
"""

from __future__ import annotations

import argparse
import csv
import itertools
from collections import defaultdict
from pathlib import Path

import numpy as np
from benchkit.paths import RESULTS_DATA
from benchkit.timing import Timer, load_line

import pyinterp
from pyinterp.datasets import make_lss

K = 2  # true rules per data set
FIELDS = ["order", "p", "snr", "replicate", "method", "rule", "rank", "n_reported", "seconds"]


def methods(args, seed):
    irf = dict(n_iterations=args.iterations, n_estimators=args.trees, n_bootstraps=args.bootstraps,
               rit_n_trees=args.rit_trees, random_state=seed, n_jobs=args.n_jobs)
    return {
        "lssfind": pyinterp.LSSFind(mode="rank", max_order=args.max_order, random_state=seed, n_jobs=args.n_jobs),
        "irf_R": pyinterp.IterativeRandomForest(**irf, style="R"),
        "irf_pyinterp": pyinterp.IterativeRandomForest(**irf, style="pyinterp"),
    }


def run(args):
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists() and not args.fresh:
        with out.open() as f:
            done = {(int(r["order"]), int(r["p"]), float(r["snr"]), int(r["replicate"]), r["method"])
                    for r in csv.DictReader(f)}
    new = not out.exists() or args.fresh
    print(load_line(), flush=True)
    with out.open("w" if new else "a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if new:
            writer.writeheader()
        for order, p, snr, rep in itertools.product(args.orders, args.p, args.snr, range(args.replicates)):
            seed = 1000 * order + rep
            X, y, true = make_lss(n_samples=args.n, n_features=p, n_interactions=K, order=order, snr=snr,
                                  random_state=seed)
            for name, est in methods(args, seed).items():
                if (order, p, float(snr), rep, name) in done or name not in args.methods:
                    continue
                with Timer() as timer:
                    est.fit(X, y)
                seconds = timer.wall
                features = est.interactions_.features
                for j, t in enumerate(true):
                    rank = features.index(t) + 1 if t in features else 0
                    writer.writerow(dict(order=order, p=p, snr=snr, replicate=rep, method=name, rule=j, rank=rank,
                                         n_reported=len(features), seconds=round(seconds, 3)))
                f.flush()
                print(f"order {order} p {p} snr {snr} rep {rep} {name}: ranks "
                      f"{[features.index(t) + 1 if t in features else '-' for t in true]} ({seconds:.1f} s)", flush=True)


def summary(path):
    rows = list(csv.DictReader(open(path)))
    cells = defaultdict(list)
    for r in rows:
        cells[(int(r["order"]), r["method"])].append(r)
        cells[(int(r["order"]), int(r["p"]), float(r["snr"]), r["method"])].append(r)
    names = sorted({r["method"] for r in rows})

    def rates(rs):
        ranks = np.array([int(r["rank"]) for r in rs])
        found = ranks[ranks >= 1]
        return (np.mean((ranks >= 1) & (ranks <= K)), np.mean(ranks >= 1), np.mean([float(r["seconds"]) for r in rs]),
                len({(r["p"], r["snr"], r["replicate"]) for r in rs}), np.median(found) if len(found) else np.nan)

    print("| order | p | SNR | replicates | " + " | ".join(f"{m} top-{K} / found / median rank" for m in names) + " |")
    print("|---|---|---|---|" + "---|" * len(names))
    keys = sorted({k[:3] for k in cells if len(k) == 4})
    for order, p, snr in keys:
        got = [rates(cells[(order, p, snr, m)]) if cells[(order, p, snr, m)] else None for m in names]
        reps = max(g[3] for g in got if g)
        print(f"| {order} | {p} | {snr:g} | {reps} | " +
              " | ".join("-" if g is None else f"{g[0]:.2f} / {g[1]:.2f} / {g[4]:g}" for g in got) + " |")
    print("\nBy order (all cells): share of true rules in the top 2 / found / median rank when found; mean seconds a fit")
    for order in sorted({k[0] for k in cells if len(k) == 2}):
        print(f"  order {order}: " + ", ".join(
            "{} {:.2f} / {:.2f} / {:g} ({:.1f} s)".format(m, *(rates(cells[(order, m)])[i] for i in (0, 1, 4, 2)))
            for m in names if cells[(order, m)]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(RESULTS_DATA / "irf_recovery.csv"))
    parser.add_argument("--summary", help="print the tables of a CSV written before, and exit")
    parser.add_argument("--orders", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--p", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--snr", type=float, nargs="+", default=[1.0, 2.0, 5.0, 10.0])
    parser.add_argument("--replicates", type=int, default=20)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--bootstraps", type=int, default=10)
    parser.add_argument("--rit-trees", type=int, default=500)
    parser.add_argument("--max-order", type=int, default=4, help="LSSFind's largest mined set")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--fresh", action="store_true", help="overwrite --out instead of resuming it")
    parser.add_argument("--methods", nargs="+", default=["lssfind", "irf_R", "irf_pyinterp"],
                        help="the methods to run (rows of a method's earlier runs are kept: delete them to redo it)")
    args = parser.parse_args()
    if args.summary:
        return summary(args.summary)
    run(args)
    summary(args.out)


if __name__ == "__main__":
    main()
