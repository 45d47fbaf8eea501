"""Does an order of iRF's table by its own filter scores put the true rules ahead of their
supersets? (issue 53, item 1: the first look, not yet the study that sets a default)

iRF (style="R", its defaults) ranks by cpe, so a union of true rules (x0- & x1- & x2- & x3- when
y = 1(x0, x1 low) + 1(x2, x3 low)) comes first: its leaves are the purest. R iRF 3.0 also reports,
per set S and bootstrap, fsd = log prev(S) - sum_j log prev({j}) (S co-occurs on paths more than its
features would alone) and mip = the smallest log precision gain of S over its (|S|-1)-subsets, and
sta_fsd / sta_mip, the share of bootstraps where each is positive. This fits iRF once per data set
and reads the rank of each true rule under four orders of the same table:

    R          cpe, then stability (the table as it is)
    filt_cpe   sets with sta_fsd > 0.5 and sta_mip > 0.5 first, each part by cpe
    filt_stab  the same filter first, each part by stability, then cpe
    filt_max   the filter, and among passing sets those with a passing superset of stability
               >= 0.5 after the others

Designs (benchkit.data.lss_orders / pyinterp.datasets.make_lss, 3 seeds each): rules of orders
2, 3, 3 at p = 200, n = 2000, SNR 2 (issue 53's example); the demo's two pairs at p = 50, n = 1000,
SNR 5; two triples at p = 50, SNR 5; a pair and a quadruple at p = 200, SNR 2.

    python bench/studies/irf_table_order.py

2026-11-29 (2 threads, load about 1; ranks of the true rules, seeds 0/1/2):

    design            R                      filt_stab               filt_max
    orders 2,3,3      [2,3,5] [5,7,4] [6,8,15]  [1,2,3] [2,9,1] [1,2,10]  [1,2,3] [2,3,1] [12,1,3]
    demo 2 x order 2  [6,7] [6,8] [8,6]         [1,2] [1,2] [2,1]         [1,2] [1,2] [2,1]
    2 x order 3       [17,15] [13,15] [18,13]   [7,6] [7,9] [7,6]         [15,14] [11,13] [16,15]
    orders 2,4        [10,14] [17,28] [11,20]   [2,3] [3,4] [3,4]         [14,1] [27,1] [17,1]

filt_cpe moved little (cpe still prefers supersets that pass). The filter ordered by stability puts
pairs and the order-2/4 mix in the top 4 and the demo's pairs first, but true triples stay 6th-9th,
behind sets of 4 mixing the two triples' features (seed 0: 5 of them, stability 1, precision 0.98,
passing the filter with a small steady precision gain, mip 0.02, against the true triples' 0.11);
putting maximal passing sets first buries the triples and pairs under such supersets. The default
still needs a rule for triples (the size of the gain, not only its sign, is one lead): the study
that sets it runs on irf_recovery.py's grid and fresh designs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.data import lss_orders

from pyinterp import IterativeRandomForest
from pyinterp.datasets import make_lss


def _passing(columns, i):
    return columns["sta_fsd"][i] > 0.5 and columns["sta_mip"][i] > 0.5


ORDERS = {
    "R": lambda c, i, covered: (-c["cpe"][i], -c["stability"][i]),
    "filt_cpe": lambda c, i, covered: (not _passing(c, i), -c["cpe"][i], -c["stability"][i]),
    "filt_stab": lambda c, i, covered: (not _passing(c, i), -c["stability"][i], -c["cpe"][i]),
    "filt_max": lambda c, i, covered: (not _passing(c, i), covered[i], -c["stability"][i], -c["cpe"][i]),
}


def ranks(table, truth):
    """The 1-based rank of each true rule under each order (0: not in the table)."""
    features = [tuple(f) for f in table.features]
    columns = {name: np.asarray(table[name], float) for name in table.columns}
    sets = [frozenset(f) for f in features]
    strong = [i for i in range(len(sets)) if _passing(columns, i) and columns["stability"][i] >= 0.5]
    covered = [any(sets[i] < sets[j] for j in strong) for i in range(len(sets))]
    out = {}
    for name, key in ORDERS.items():
        order = [features[i] for i in sorted(range(len(features)), key=lambda i: key(columns, i, covered))]
        out[name] = [order.index(t) + 1 if t in order else 0 for t in truth]
    return out


def designs():
    for seed in range(3):
        yield ("orders 2,3,3 p=200 SNR 2", seed, *lss_orders(2000, 200, (2, 3, 3), 2.0, seed))
    for seed in range(3):
        X, y, truth = make_lss(1000, 50, 2, 2, snr=5.0, random_state=seed)
        yield ("demo 2 x order 2 p=50 SNR 5", seed, X, y, [tuple(t) for t in truth])
    for seed in range(3):
        yield ("2 x order 3 p=50 SNR 5", seed, *lss_orders(1000, 50, (3, 3), 5.0, seed))
    for seed in range(3):
        yield ("orders 2,4 p=200 SNR 2", seed, *lss_orders(1000, 200, (2, 4), 2.0, seed))


def main():
    for name, seed, X, y, truth in designs():
        start = time.perf_counter()
        table = IterativeRandomForest(random_state=seed, n_jobs=2).fit(X, y).interactions_
        result = ranks(table, truth)
        print(f"{name} seed {seed} ({time.perf_counter() - start:.0f} s, {len(table.features)} sets): "
              + "  ".join(f"{k} {v}" for k, v in result.items()), flush=True)


if __name__ == "__main__":
    main()
