"""screen_pairs on real large-p data with a planted interaction (issue 49, item 3): how often the
planted pair is in the top 5 of the pair table, at screen_pairs' defaults.

X is a real data set of ../shared/data as it is (its own correlations and marginal
distributions); y replaces the labels: y = effect x 1(x_a > its median) 1(x_b > its median) +
N(0, 1) (for 3-level codes, above the lowest level), a and b drawn at random per replicate among
the columns with at least 20% of rows on each side of the cut. Each column of the pair has a
marginal effect too (the rule's cell is a quarter of the rows or so).

    python bench/studies/genome_scale_real.py --data all_bioc nci9 --effect 2 3 --reps 10
"""

import argparse
import os
import resource
import time
import warnings
from pathlib import Path

import numpy as np

from pyinterp.interactions import screen_pairs

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def cut_of(column):
    """The rule's cut of a column: its median, or its lowest level for a column of 3 values."""
    levels = np.unique(column)
    return levels[0] if len(levels) <= 3 else np.median(column)


def cut_sides(X):
    """Each row's side of each column's cut, and the columns with 20-80% of rows above it."""
    above = X > np.array([cut_of(c) for c in X.T])
    share = above.mean(axis=0)
    return above, np.flatnonzero((share >= 0.2) & (share <= 0.8))


def replicate(X, above, usable, effect, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.choice(usable, 2, replace=False)
    y = effect * (above[:, a] & above[:, b]) + rng.standard_normal(len(X))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = screen_pairs(X, y, random_state=seed, n_jobs=2, top=1000)
    seconds = time.perf_counter() - start
    ranks = [k + 1 for k, f in enumerate(found.scan.interactions.features) if {f[0][0], f[1][0]} == {a, b}]
    order = np.argsort(-found.importances, kind="stable")
    return (ranks[0] if ranks else None, [int(np.flatnonzero(order == j)[0]) + 1 for j in (a, b)], seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["all_bioc", "nci9"])
    parser.add_argument("--effect", nargs="+", type=float, default=[2.0, 3.0])
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    print("| data | n x p | effect | pair in top 5 | pair ranks | screen ranks of a, b (median) | s (median) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.data:
        X = np.load(DATA / f"{name}.npz")["X"].astype(np.float64)
        above, usable = cut_sides(X)
        for effect in args.effect:
            results = [replicate(X, above, usable, effect, seed) for seed in range(args.reps)]
            ranks = [r[0] for r in results]
            top5 = sum(r is not None and r <= 5 for r in ranks)
            screen = np.median([max(r[1]) for r in results])
            shown = ", ".join("-" if r is None else str(r) for r in ranks)
            print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {effect:g} | {top5} of {args.reps} | {shown} | "
                  f"{screen:g} | {np.median([r[2] for r in results]):.2f} |", flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; load average "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
