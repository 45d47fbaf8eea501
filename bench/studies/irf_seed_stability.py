"""How stable iRF's top interactions are across seeds on real data (issue 53, item 1: "make the
default stable enough that two seeds agree on the top 5").

Fits IterativeRandomForest at its defaults (style="rules"), with style="R" (R iRF 3.0's
conventions and order) and style="pyinterp" with random_state 0..S-1 on two-class data sets of the
shared folder, and prints, per style, the selected iterations, the mean over seed pairs of the
overlap of their top-5 and top-10 interactions (signed sets with their direction), and how many
sets each table holds and how many are of tier 0 (the rules, tiers computed in every style).

    python bench/studies/irf_seed_stability.py [prostate_ge colon allaml] [--seeds 5] [--n-jobs 2]
        [--styles rules R pyinterp] [--n-bootstraps B] [--bootstrap-n-estimators T]

2026-11-29 (2 threads, load about 1.2; seeds 0-4; top-5 / top-10 overlap, mean over seed pairs):

    data                  rules (default)   R            pyinterp     sets of tier 0 per seed (rules)
    prostate_ge 102x5966  0.4 / 1.9         1.2 / 3.6    3.3 / 5.5    1, 0, 0, 1, 0
    colon 62x2000         1.0 / 2.9         0.6 / 0.6    1.2 / 2.7    1, 0, 0, 1, 0
    allaml 72x7129        empty in 4 of 5 seeds (single splits nearly separate the classes; it warns)

No style gave two seeds the same top 5. The default's candidates (one RIT over the selected
forest), its stability (over the bootstraps that could score a set) and its order (cpe) changed
with the seed. Since 2026-11-30 the default takes every bootstrap's sets, divides stability by
every bootstrap, runs 50 bootstraps of 100 trees and orders tiers 1-2 by stability
(--n-jobs 1, load 1.5-2.7 from other jobs):

    data                  rules (default)   R            pyinterp     CPU s a fit (default, R)
    prostate_ge 102x5966  4.3 / 6.8         1.2 / 3.6    3.3 / 5.5    2.0, 1.0
    colon 62x2000         3.0 / 6.1         0.6 / 0.6    1.2 / 2.7    1.0, 0.3
    arcene 200x10000      4.0 / 7.2         0.6 / 1.1    1.5 / 3.1    5.3, 4.0
    allaml 72x7129        0.0 / 0.0: no rule, stability at most 0.04 (it warns)

docs/results/irf_default_order.md has the study and its recovery on LSS designs.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.data import require_shared_npz
from benchkit.timing import load_line

from pyinterp import IterativeRandomForest
from pyinterp.interactions import NoInteractionWarning


def top_sets(table, k):
    direction = table["direction"]
    return [(f, int(d)) for f, d in zip(table.features[:k], direction[:k])]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", default=["prostate_ge", "colon", "allaml"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--styles", nargs="+", default=["rules", "R", "pyinterp"], choices=["rules", "R", "pyinterp"])
    parser.add_argument("--n-bootstraps", type=int, help="IterativeRandomForest's n_bootstraps (its default)")
    parser.add_argument("--bootstrap-n-estimators", type=int, help="its bootstrap_n_estimators (its default)")
    args = parser.parse_args()
    print(load_line(), flush=True)
    for name in args.names:
        data = require_shared_npz(name)
        X, y = data["X"], data["y"]
        for style in args.styles:
            tops, iterations, seconds, cpu, rules = [], [], [], [], []
            for seed in range(args.seeds):
                start, start_cpu = time.perf_counter(), time.process_time()
                with warnings.catch_warnings():  # an empty table is counted below
                    warnings.simplefilter("ignore", NoInteractionWarning)
                    model = IterativeRandomForest(style=style, random_state=seed, n_jobs=args.n_jobs,
                                                  n_bootstraps=args.n_bootstraps,
                                                  bootstrap_n_estimators=args.bootstrap_n_estimators).fit(X, y)
                seconds.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
                tops.append(model.interactions_)
                rules.append(int((model.interactions_["tier"] == 0).sum()) if len(model.interactions_) else 0)
                iterations.append(model.selected_iteration_ + 1)
            overlap = {k: np.mean([len(set(top_sets(a, k)) & set(top_sets(b, k)))
                                   for a, b in itertools.combinations(tops, 2)]) for k in (5, 10)}
            first = [tuple(top_sets(t, 1)) for t in tops]
            print(f"{name} ({X.shape[0]} x {X.shape[1]}) style={style}: iterations {iterations}, "
                  f"top-5 overlap {overlap[5]:.1f} of 5, top-10 {overlap[10]:.1f} of 10 (mean over seed pairs), "
                  f"same first set in {max(first.count(f) for f in first)} of {len(first)} seeds; "
                  f"sets {[len(t) for t in tops]}, of tier 0 {rules}; "
                  f"{np.mean(seconds):.1f} s ({np.mean(cpu):.1f} CPU s) a fit", flush=True)
            print(f"  seed 0's top 5: {[tops[0].label(f) + (' (-)' if d < 0 else '') for f, d in top_sets(tops[0], 5)]}",
                  flush=True)


if __name__ == "__main__":
    main()
