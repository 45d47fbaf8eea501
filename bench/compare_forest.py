"""pyinterp's random forests against scikit-learn, ranger (R), ydf, LightGBM and xgboost, side by side.

Each (library, case) runs in its own subprocess so its peak memory (max RSS) is its own, counted
from the end of loading the data (the data stay resident and count; ranger's from after R has read
them); all use 2 threads. Prints fit time, predict time, peak memory, held-out score (R^2, accuracy
for classification), what each library was given, the ratios peer / pyinterp, and the load average
at the start and the end. A library that fails, runs out of memory or passes the case's time limit
is reported as such; one not installed is named and skipped.

    python bench/compare_forest.py                          # all cases, all peers
    python bench/compare_forest.py --cases b n200k          # some cases
    python bench/compare_forest.py --peers lightgbm xgboost # some peers (pyinterp always runs)
    python bench/compare_forest.py --scale 0.01 --trees 5   # every case's n and p shrunk: a smoke test

Cases (n training rows, p features; y of two_rules has signal in 4 features, of the genotypes in 3):

    a, b          two_rules float64 regression (n=2000 p=10,000 mtry=100; n=20,000 p=500 mtry=166)
    c112, c4208   all_bioc.npz y_bcrabl classification, 500 trees (shared data; --scale leaves it)
    p1k..p100k    two_rules float32 regression n=1000 at p=1k, 10k, 100k, mtry=sqrt(p), 100 trees
    n200k, n1m    two_rules float32 regression n=200,000 / 1,000,000, p=50, mtry=p/3, 100 trees,
                  20,000 held out
    snp-nan       genotypes {0,1,2} as float32 with 2 % of calls NaN, n=5000 p=100,000,
                  mtry=sqrt(p), 50 trees, regression
    wide          int8 genotypes n=500 (+500 held out) p=1,000,000, mtry=1000, 50 trees,
                  regression; each library stopped after 10 minutes
    cells5        single-cell counts CSR float32 n=20,000 p=20,000 at 5 %, 5 classes, mtry=sqrt(p),
                  50 trees

The peers, each a fully grown random forest (bootstrap rows, mtry features drawn at every node,
leaves down to one row as scikit-learn's and pyinterp's defaults, the same number of trees):

    scikit-learn  RandomForest*(max_features=mtry), its defaults otherwise; exact thresholds;
                  takes NaN and CSR.
    ranger        ranger(mtry, min.node.size=1 -- its regression default is 5 --, num.threads=2),
                  exact thresholds; X reaches R as raw binary (CSR as a dgCMatrix). ranger 0.14
                  takes no NA: the NaN calls are replaced by the training column's mean, as the
                  row's input says (ranger >= 0.16 has na.action="na.learn").
    ydf           RandomForestLearner(num_candidate_attributes=mtry, max_depth=-1, min_examples=1,
                  bootstrap with replacement, compute_oob_performances=False); exact thresholds
                  (discretize_numerical_columns is off by default); draws mtry features among
                  those with a valid split. Dense only: CSR is densified before the fit. NaN is
                  imputed inside ydf by the column mean (missing_value_policy GLOBAL_IMPUTATION).
    LightGBM      boosting_type="rf", subsample=0.632 with subsample_freq=1 (rows drawn WITHOUT
                  replacement: a bootstrap's distinct share, no repeats), feature_fraction_bynode=
                  mtry/p, num_leaves=min(131072, 0.632 n) with max_depth=-1, min_child_samples=1,
                  min_child_weight=0, histogram_pool_size=1024 MB (num_leaves sizes its buffers up
                  front: 131072 leaves at p=50 need over 20 GB without a pool). Histograms of 255
                  bins per feature, not exact thresholds; 131072 leaves is its ceiling, fewer than
                  a fully grown tree on n1m's 632,000 rows. Drops features it cannot split (and
                  draws mtry/p of those left). NaN native; CSR as is. 5 classes: 5 trees a round.
    xgboost       XGBRF*(subsample=0.632 WITHOUT replacement, colsample_bynode=(mtry+0.5)/p
                  (truncated to mtry), max_depth=0 with grow_policy="lossguide" and max_leaves=0,
                  min_child_weight=1e-6 (any non-empty child), learning_rate=1, tree_method="hist",
                  max_cached_hist_node bounded to about 1 GB of histograms). Histograms of 256 bins.
                  NaN native; CSR as is, but its absent entries are read as missing, not 0 (for
                  counts >= 1 the learnt default direction makes the same "0 vs > 0" splits).
                  5 classes: 5 trees per forest tree.

LightGBM and xgboost are OpenMP programs: with 2 threads on 2 cores that another job also uses, their
spinning threads wait on each other (a 5-tree smoke fit: 0.3 s on one thread, 18 s on two), so their
times mean something only at a low load average; OMP_WAIT_POLICY=PASSIVE in the environment softens
it (0.7 s there). The data are written once per case to a temporary folder and each worker loads them.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.sparse as sp
from benchkit.data import shared_npz, two_rules, write_cells, write_snp
from benchkit.paths import SHARED_DATA
from benchkit.peers import FOREST_PEERS, forest_peer_missing, forest_sklearn
from benchkit.timing import load_line, peak_rss_mb, reset_peak_rss, run_isolated


def third(p):
    return max(1, p // 3)


def sqrt(p):
    return max(1, int(np.sqrt(p)))


@dataclass(frozen=True)
class Case:
    about: str
    task: str
    data: str  # two_rules, snp_nan, snp (int8), cells or all_bioc
    n: int = 0
    p: int = 0
    n_test: int = 0
    trees: int = 100
    mtry: Callable[[int], int] = third
    dtype: str = "float64"
    timeout: float | None = None  # seconds a library may take on the case


CASES = {
    "a": Case("regression, two_rules", "regression", "two_rules", 2000, 10_000, 2000, mtry=lambda p: max(1, p // 100)),
    "b": Case("regression, two_rules", "regression", "two_rules", 20_000, 500, 2000),
    "c112": Case("all_bioc.npz y_bcrabl", "classification", "all_bioc", trees=500, mtry=lambda p: 112),
    "c4208": Case("all_bioc.npz y_bcrabl", "classification", "all_bioc", trees=500, mtry=lambda p: 4208),
    # Width alone: the fixed cost of encoding X against per-tree work that barely grows with p.
    "p1k": Case("regression, two_rules", "regression", "two_rules", 1000, 1000, 500, mtry=sqrt, dtype="float32"),
    "p10k": Case("regression, two_rules", "regression", "two_rules", 1000, 10_000, 500, mtry=sqrt, dtype="float32"),
    "p100k": Case("regression, two_rules", "regression", "two_rules", 1000, 100_000, 500, mtry=sqrt, dtype="float32"),
    "n200k": Case("regression, two_rules", "regression", "two_rules", 200_000, 50, 20_000, dtype="float32"),
    "n1m": Case("regression, two_rules", "regression", "two_rules", 1_000_000, 50, 20_000, dtype="float32"),
    "snp-nan": Case("regression, genotypes with 2 % NaN", "regression", "snp_nan", 5000, 100_000, 1000, 50, sqrt),
    "wide": Case("regression, int8 genotypes", "regression", "snp", 500, 1_000_000, 500, 50,
                 lambda p: max(1, p // 1000), timeout=600),
    "cells5": Case("classification, 5 cell types, counts at 5 %", "classification", "cells", 20_000, 20_000, 1000, 50,
                   sqrt),
}
FILES = {"two_rules": ("X.npy", "y.npy"), "snp_nan": ("snp_nan.npy", "snp_y.npy"), "snp": ("snp.npy", "snp_y.npy"),
         "cells": ("cells.npz", "cells_y.npy")}


def shape(case, scale):
    """(n, p, n_test) of a synthetic case at --scale."""
    c = CASES[case]
    return max(100, round(c.n * scale)), max(10, round(c.p * scale)), max(50, round(c.n_test * scale))


def write_case(case, scale, folder):
    """Writes the case's X (training rows, then held-out ones) and y to folder (all_bioc: nothing)."""
    c = CASES[case]
    n, p, n_test = shape(case, scale)
    if c.data == "all_bioc":
        return
    if c.data == "two_rules":
        X, y = two_rules(n + n_test, p, seed=0)
        np.save(folder / "X.npy", X.astype(c.dtype))
        np.save(folder / "y.npy", y)
    elif c.data in ("snp", "snp_nan"):
        write_snp(folder, n, p, n_test=n_test, missing=0.02 if c.data == "snp_nan" else None)
    else:
        write_cells(folder, "cells", n, p, 0.05, n_test=n_test)


def all_bioc_split():
    d = shared_npz("all_bioc")
    X, y = d["X"], d["y_bcrabl"]
    rng = np.random.RandomState(0)
    test = np.zeros(len(y), bool)
    for label in np.unique(y):  # stratified 25% hold-out
        rows = np.flatnonzero(y == label)
        test[rng.choice(rows, len(rows) // 4, replace=False)] = True
    return X[~test], y[~test], X[test], y[test]


def load_case(case, scale, folder):
    """(Xtr, ytr, Xte, yte) of a case, written by write_case (all_bioc: from the shared folder)."""
    c = CASES[case]
    if c.data == "all_bioc":
        return all_bioc_split()
    x_file, y_file = FILES[c.data]
    X = sp.load_npz(folder / x_file) if x_file.endswith(".npz") else np.load(folder / x_file)
    y = np.load(folder / y_file)
    n = shape(case, scale)[0]
    return X[:n], y[:n], X[n:], y[n:]


def score(task, y, pred):
    if task == "classification":
        return float(np.mean(pred == y))
    return float(1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))


def run_worker(lib, case, folder, scale, trees):
    c = CASES[case]
    Xtr, ytr, Xte, yte = load_case(case, scale, folder)
    if c.task == "classification":  # class codes 0..K-1 for every library (xgboost wants them)
        classes, ytr = np.unique(ytr, return_inverse=True)
        yte = np.searchsorted(classes, yte)
    run = FOREST_PEERS.get(lib) or (lambda *a: forest_sklearn(*a, module="pyinterp"))
    reset_peak_rss()
    r = run(Xtr, ytr, Xte, c.task, trees or c.trees, c.mtry(Xtr.shape[1]))
    r.setdefault("peak_mb", peak_rss_mb())
    return dict(r, pred=None, score=score(c.task, yte, r["pred"]))


def print_row(case, lib, r):
    if "error" in r:
        print(f"{case:<7} {lib:<9} failed: {' '.join(r['error'].split())[-300:]}", flush=True)
    else:
        print(f"{case:<7} {lib:<9} {r['fit_s']:>8.2f} {r['predict_s']:>10.3f} {r['peak_mb']:>8.0f} "
              f"{r['score']:>7.3f}  {r['input']}", flush=True)


def print_ratios(results):
    base = results["pyinterp"]
    if "error" in base:
        return
    for lib, r in results.items():
        if lib != "pyinterp" and "error" not in r:
            print(f"{'':<7} {lib}/pyinterp: fit time x{r['fit_s'] / base['fit_s']:.2f}, predict time "
                  f"x{r['predict_s'] / base['predict_s']:.2f}, peak memory x{r['peak_mb'] / base['peak_mb']:.2f}")


def case_line(case, scale, trees):
    c = CASES[case]
    if c.data == "all_bioc":
        return f"{case}: {c.about}, {trees or c.trees} trees, max_features={c.mtry(0)}"
    n, p, n_test = shape(case, scale)
    return (f"{case}: {c.about}, n={n:,} p={p:,}, {n_test:,} held out, max_features={c.mtry(p)}, "
            f"{trees or c.trees} trees")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--peers", nargs="+", default=list(FOREST_PEERS), choices=list(FOREST_PEERS))
    parser.add_argument("--no-ranger", action="store_true", help="skip ranger (same as leaving it out of --peers)")
    parser.add_argument("--trees", type=int, default=None, help="override the number of trees")
    parser.add_argument("--scale", type=float, default=1.0, help="n, p, held-out rows of synthetic cases times this")
    parser.add_argument("--timeout", type=float, default=None, help="seconds any library may take on a case "
                        "(default: none, 600 for wide)")
    parser.add_argument("--worker", nargs=3, metavar=("LIB", "CASE", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        lib, case, folder = args.worker
        print(json.dumps(run_worker(lib, case, Path(folder), args.scale, args.trees)))
        return
    if args.no_ranger and "ranger" in args.peers:
        args.peers.remove("ranger")
        print("ranger: skipped (--no-ranger)")
    libs = ["pyinterp"]
    for peer in args.peers:
        missing = forest_peer_missing(peer)
        if missing:
            print(missing)
        else:
            libs.append(peer)
    print(f"2 threads each; {load_line()}")
    header = f"{'case':<7} {'library':<9} {'fit s':>8} {'predict s':>10} {'peak MB':>8} {'score':>7}  input"
    for case in args.cases:
        if CASES[case].data == "all_bioc" and not (SHARED_DATA / "all_bioc.npz").exists():
            print(f"\n{case}: {CASES[case].about} -- skipped, {SHARED_DATA} is absent")
            continue
        print(f"\n{case_line(case, args.scale, args.trees)}\n{header}", flush=True)
        results = {}
        with tempfile.TemporaryDirectory() as folder:
            write_case(case, args.scale, Path(folder))
            for lib in libs:
                worker = [__file__, "--worker", lib, case, folder, "--scale", args.scale]
                worker += ["--trees", args.trees] if args.trees else []
                results[lib] = run_isolated(worker, may_fail=True, timeout=args.timeout or CASES[case].timeout)
                print_row(case, lib, results[lib])
        print_ratios(results)
    print(f"\n{load_line('the end')}")


if __name__ == "__main__":
    main()
