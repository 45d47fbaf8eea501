"""Why a true LSS interaction does or does not reach stability 0.5 under given iRF settings.

For one replicate of the paper 001 grid (make_lss, p = 20, n = 1000, seed) it fits
pyinterp.IterativeRandomForest with the settings of bench/reproduce_lssfind.py (benchkit.peers.IRF_SETTINGS) (``paper`` by
default, overridable as key=value), redoes each bootstrap exactly as ``fit`` did (``bootstrap``), and
computes by enumeration over leaf pairs the exact probability that two drawn paths meet in exactly
the true set S. From that it derives the chance that one RIT tree and one bootstrap report S, and
the expected stability (the mean over bootstraps), printed beside the fitted stability. Exact for
RIT trees of depth 2 (the Python irf default): a root path and its children.

With --int-weights it also prints what the Python irf package's literal regression path weight,
int(leaf mean of y), would be on the first bootstrap forest.

    python bench/studies/diagnose_irf_stability.py 1 3 5 100
    python bench/studies/diagnose_irf_stability.py 1 3 5 100 rit_leaves=class
    python bench/studies/diagnose_irf_stability.py 1 2 0.5 100 --int-weights
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.data import lss_fig2
from benchkit.peers import IRF_SETTINGS

import pyinterp
from pyinterp.interactions import encode


def leaf_pair_odds(leaves, est, target):
    """(rows drawn from, their normalised weights, paths, P(two draws meet in exactly target) per leaf)."""
    p = leaves.paths
    weight = leaves.size if est.rit_leaf_weight == "size" else leaves.positive
    keep = (weight > 0) & (leaves.size >= est.min_node_size)
    if est.rit_leaves == "class":
        keep &= leaves.is1
    rows = np.flatnonzero(keep)
    w = weight[rows] / weight[rows].sum()
    paths = [frozenset(p.codes[p.indptr[r]:p.indptr[r + 1]].tolist()) for r in rows]
    holders = [i for i, q in enumerate(paths) if target <= q]
    meet = np.zeros(len(paths))
    for i in holders:
        meet[i] = w[[j for j in holders if paths[i] & paths[j] == target]].sum()
    return rows, w, paths, meet


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("K", type=int)
    parser.add_argument("L", type=int)
    parser.add_argument("snr", type=float)
    parser.add_argument("seed", type=int)
    parser.add_argument("overrides", nargs="*", help="key=value settings on top of --settings")
    parser.add_argument("--settings", choices=sorted(IRF_SETTINGS), default="paper")
    parser.add_argument("--int-weights", action="store_true")
    args = parser.parse_args()
    overrides = {}
    for item in args.overrides:
        key, value = item.split("=", 1)
        try:
            overrides[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            overrides[key] = value
    X, y, true = lss_fig2(args.K, args.L, args.snr, args.seed)
    est = pyinterp.IterativeRandomForest(**{**IRF_SETTINGS[args.settings], **overrides}, random_state=args.seed,
                                         n_jobs=1).fit(X, y)
    if est.rit_depth != 2:
        parser.error("the enumeration is exact for rit_depth=2 only")
    stability = dict(zip(est.interactions_.features, est.interactions_["stability"]))
    print(f"K={args.K} L={args.L} SNR={args.snr:g} seed={args.seed} {args.settings} {overrides or ''}")
    print(f"  highest stability of any set: {est.interactions_['stability'].max():.1f}")
    runs = [est.bootstrap(X, y, b) for b in range(est.n_bootstraps)]  # each bootstrap redone as fit() did it
    for S in true:
        target = frozenset(encode(S).tolist())
        expected = []
        for b, (_, _, leaves, found) in enumerate(runs):
            rows, w, paths, meet = leaf_pair_odds(leaves, est, target)
            exact = np.array([q == target for q in paths])
            holds = np.array([target <= q for q in paths])
            per_tree = (w * np.where(exact, 1.0, 1 - (1 - meet) ** 2)).sum()  # root == S, or one of 2 children
            expected.append(1 - (1 - per_tree) ** est.rit_n_trees)
            if b == 0:
                extra = {}
                for q, wi in zip(paths, w):
                    if target <= q:
                        for c in q - target:
                            extra[c] = extra.get(c, 0.0) + wi
                top = sorted(extra.items(), key=lambda kv: -kv[1])[:4]
                print(f"  S = {S}, bootstrap 0: {len(rows)} leaves drawn from; leaf mass of paths containing S "
                      f"{w[holds].sum():.2f}, equal to S {w[exact].sum():.3f}; P(two drawn paths meet in exactly S) "
                      f"{(w * meet).sum():.3f}; P(a RIT tree reports S) {per_tree:.3f}; P(the bootstrap reports S) "
                      f"{expected[-1]:.2f}; reported: {tuple(sorted(target)) in set(map(tuple, found))}")
                print("    other codes with most mass on paths containing S: "
                      + ", ".join(f"({c >> 1},{'+' if c & 1 else '-'}) {m:.2f}" for c, m in top))
        print(f"  S = {S}: expected stability {np.mean(expected):.2f} (P(report) per bootstrap "
              f"{min(expected):.2f}-{max(expected):.2f}), fitted stability {stability.get(S, 0.0):.1f}")
    if args.int_weights:
        forest = runs[0].forest
        means = np.concatenate([t.value[t.left < 0, 0] for t in forest.trees_])
        values, counts = np.unique(np.trunc(means).astype(int), return_counts=True)
        print(f"  int(leaf mean) on bootstrap 0's {len(means)} leaves: "
              + ", ".join(f"{v}: {c}" for v, c in zip(values, counts)))


if __name__ == "__main__":
    main()
