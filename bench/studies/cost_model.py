"""How far one tree's growth is from what this machine's memory allows (issue 20, point 3).

1. Compiles bench/studies/cost_model/kernels.cpp (c++ -O3, as the package) and runs it: load latency per
   buffer size, the sequential-read floor per 2-byte code, and per code of a node of m rows the
   gather alone and the counting search's update (two layouts of its histograms).
2. Fits cases (a) n=2000 p=10000 mtry 100 and (b) n=20000 p=500 mtry 166 (two_rules data, as
   bench/compare_forest.py) on one thread, and counts from the fitted trees the codes the split search
   touched: every split node reads its m rows' codes of mtry candidates (an upper bound: nodes of
   at most 32 rows may stop at their first candidates), split by the search each node's size selects
   (counting over the column's codes when n_codes <= 64 m, radix sort above 32 rows, rank sort below).
3. Prices each node's codes at the kernels' cost for its size (gather alone: the floor of reading
   the codes; counting: the floor of the search's own update) and prints measured ns per code beside
   those bounds, with the load average.
4. Sizes a node-local block of codes (all p columns of a small subtree's rows, copied once at its
   root): the share of the codes read in split nodes of at most B rows, and what the blocks would
   copy against it.

    python bench/studies/cost_model.py                 # both cases, 10 trees
    python bench/studies/cost_model.py --cases b --trees 20
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.data import two_rules
from benchkit.timing import load_line

from pyinterp import RandomForestRegressor

CASES = {"a": (2000, 10_000, 100), "b": (20_000, 500, 166)}
KERNELS = Path(__file__).parent / "cost_model" / "kernels.cpp"
NODE_SIZES = (16, 32, 64, 128, 256, 512, 1024, 4096, 16384)


def run_kernels(n, p):
    compiler = shutil.which("c++") or shutil.which("g++")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "kernels"
        subprocess.run([compiler, "-O3", "-std=c++17", "-o", str(exe), str(KERNELS)], check=True)
        out = subprocess.run([str(exe), str(n), str(p), *map(str, NODE_SIZES)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def touched(forest, n_codes_of, mtry):
    """Codes read per search kind, summed over the forest's split nodes: {kind: (codes, nodes)}."""
    out = {"counting": [0, 0], "radix": [0, 0], "rank": [0, 0]}
    sizes = []
    for tree in forest.trees_:
        split = tree.feature >= 0
        m = tree.n_node_samples[split].astype(np.int64)
        sizes.append(m)
        for kind, mask in (("counting", n_codes_of <= 64 * m), ("radix", (n_codes_of > 64 * m) & (m > 32)),
                           ("rank", (n_codes_of > 64 * m) & (m <= 32))):
            out[kind][0] += int(m[mask].sum()) * mtry
            out[kind][1] += int(mask.sum())
    return out, np.concatenate(sizes)


def block_shares(forest, p, mtry, limits=(32, 64, 128, 256)):
    """Per row limit B: the share of all codes read that split nodes of at most B rows read, and the
    codes a node-local block (its m rows' codes of all p columns, made at the root of each subtree of
    nodes of at most B rows) would copy, as a multiple of those."""
    read = 0
    small_read, copied = dict.fromkeys(limits, 0), dict.fromkeys(limits, 0)
    for tree in forest.trees_:
        m = tree.n_node_samples.astype(np.int64)
        split = tree.feature >= 0
        parent_m = np.where(tree.parent < 0, np.iinfo(np.int64).max, m[np.maximum(tree.parent, 0)])
        read += int(m[split].sum()) * mtry
        for limit in limits:
            small = split & (m <= limit)
            small_read[limit] += int(m[small].sum()) * mtry
            copied[limit] += int(m[small & (parent_m > limit)].sum()) * p
    return {limit: (small_read[limit] / read, copied[limit] / max(small_read[limit], 1)) for limit in limits}


def bound_seconds(sizes, mtry, kernels, column):
    """Seconds to read every split node's codes at the kernels' per-code cost for its size (column 0:
    gather alone, 1: gather + counting update)."""
    measured = np.array(sorted(int(m) for m in kernels["nodes"]))
    cost = np.array([kernels["nodes"][str(m)][column] for m in measured])
    per_code = np.interp(np.log(np.maximum(sizes, 1)), np.log(measured), cost)  # ns, by node size
    return float((per_code * sizes).sum()) * mtry * 1e-9


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--trees", type=int, default=10)
    args = parser.parse_args()
    print(load_line())
    for case in args.cases:
        n, p, mtry = CASES[case]
        X, y = two_rules(n, p, seed=0)
        kernels = run_kernels(n, p)
        if case == args.cases[0]:
            lat = ", ".join(f"{int(size) >> 10} KiB {ns:.1f}" for size, ns in kernels["latency_ns"].items())
            print(f"load latency (ns): {lat}; sequential read {kernels['stream_ns']:.3f} ns per 2-byte code")
        print(f"\ncase {case}: n={n} p={p} mtry={mtry}, {args.trees} trees, 1 thread ({load_line()})")
        print(f"{'node rows':>10} {'gather':>8} {'counting':>9} {'interleaved':>12}   (ns per code, {p} columns in turn)")
        for m, (g, c, ci) in kernels["nodes"].items():
            print(f"{m:>10} {g:>8.2f} {c:>9.2f} {ci:>12.2f}")
        forest = RandomForestRegressor(n_estimators=args.trees, max_features=mtry, n_jobs=1, random_state=0)
        cpu = -time.process_time()
        forest.fit(X, y)
        cpu += time.process_time()
        n_codes = np.array([len(np.unique(X[:, j])) for j in range(p)])
        kinds, sizes = touched(forest, int(np.median(n_codes)), mtry)
        total = sum(c for c, _ in kinds.values())
        split = ", ".join(f"{k} {c / total:.0%} of codes in {nodes} nodes" for k, (c, nodes) in kinds.items())
        floor, counting = bound_seconds(sizes, mtry, kernels, 0), bound_seconds(sizes, mtry, kernels, 1)
        print(f"codes touched: {total / 1e6:.0f} M ({total / args.trees / 1e6:.1f} M a tree; {split})")
        print(f"fit: {cpu:.2f} CPU s = {cpu / total * 1e9:.2f} ns per code")
        print(f"bound, reading the codes alone: {floor:.2f} s ({cpu / floor:.1f}x from it); "
              f"with the counting update on every code: {counting:.2f} s ({cpu / counting:.1f}x)")
        shares = "; ".join(f"<= {b} rows: {share:.0%} of the codes, a block copies {copies:.2f}x them"
                           for b, (share, copies) in block_shares(forest, p, mtry).items())
        print(f"node-local blocks (split nodes of at most B rows): {shares}")


if __name__ == "__main__":
    main()
