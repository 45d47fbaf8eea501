"""DSTUMP support recovery on the paper's linear model, as n grows.

y = sum_{k in S} beta_k x_k + w, X i.i.d. Uniform[0, 1] (n x p), S = the first s features,
beta_k = 1 / sqrt(s), w ~ N(0, sigma^2). Each variant selects its top s features; printed: the mean
fraction of S recovered and the exact-recovery rate over the repetitions (p = 200, s = 10,
sigma = 0.1 as in the spec's illustration; the supplement gives no parameters).

    python bench/dstump_recovery.py
    python bench/dstump_recovery.py --reps 20 --n 128 1024
"""

from __future__ import annotations

import argparse

import numpy as np
from benchkit.timing import Timer, load_line

from pyinterp.importance import dstump

VARIANTS = [
    ("median / left (paper)", "median", "left"),
    ("median / sum", "median", "sum"),
    ("median / max", "median", "max"),
    ("best / sum (default)", "best", "sum"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[128, 1024, 10000])
    parser.add_argument("--p", type=int, default=200)
    parser.add_argument("--s", type=int, default=10)
    parser.add_argument("--sigma", type=float, default=0.1)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()

    support = set(range(args.s))
    print(load_line())
    print(f"p={args.p} s={args.s} sigma={args.sigma}, {args.reps} repetitions: fraction recovered / exact rate")
    print(f"{'variant':<24}" + "".join(f"{'n=' + str(n):>20}" for n in args.n))
    results = {name: [] for name, _, _ in VARIANTS}
    with Timer() as total:
        for n in args.n:
            hits = {name: [] for name, _, _ in VARIANTS}
            for rep in range(args.reps):
                rng = np.random.RandomState(rep)
                X = rng.rand(n, args.p)
                y = X[:, : args.s].sum(axis=1) / np.sqrt(args.s) + args.sigma * rng.randn(n)
                for name, split, side in VARIANTS:
                    chosen = set(dstump(X, y, split=split, side=side, n_jobs=args.n_jobs).select(args.s))
                    hits[name].append(len(chosen & support) / args.s)
            for name in hits:
                h = np.array(hits[name])
                results[name].append(f"{h.mean():.3f} / {np.mean(h == 1):.2f}")
    for name, _, _ in VARIANTS:
        print(f"{name:<24}" + "".join(f"{cell:>20}" for cell in results[name]))
    print(f"total {total.wall:.1f} s")


if __name__ == "__main__":
    main()
