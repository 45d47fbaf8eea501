"""pyinterp vs scikit-learn (and ranger when Rscript has it) random forests, side by side.

Each (library, case) runs in its own subprocess so its peak memory (max RSS) is its own, counted
from the end of loading the data (the data stay resident and count); all use 2 threads. Prints fit time, peak memory, held-out score and the ratios sklearn / pyinterp.

    python bench/compare_forest.py                 # all cases
    python bench/compare_forest.py --cases b c112  # some cases
    python bench/compare_forest.py --trees 20      # fewer trees, for a quick look
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np
from benchkit.data import shared_npz, two_rules
from benchkit.paths import SHARED_DATA
from benchkit.peers import ranger_available, run_ranger
from benchkit.timing import peak_rss_mb, reset_peak_rss, run_isolated

CASES = {
    "a": "regression n=2000 p=10000 max_features=100, 100 trees",
    "b": "regression n=20000 p=500 max_features=166, 100 trees",
    "c112": "all_bioc.npz y_bcrabl classification, 500 trees, max_features=112",
    "c4208": "all_bioc.npz y_bcrabl classification, 500 trees, max_features=4208",
    # Width alone: the fixed cost of encoding X against per-tree work that barely grows with p.
    "p1k": "regression n=1000 p=1,000 float32 max_features=sqrt, 100 trees",
    "p10k": "regression n=1000 p=10,000 float32 max_features=sqrt, 100 trees",
    "p100k": "regression n=1000 p=100,000 float32 max_features=sqrt, 100 trees",
}
WIDE = {"p1k": 1000, "p10k": 10_000, "p100k": 100_000}


def load_case(case):
    """Train/test split and forest settings of one case."""
    if case in ("a", "b"):
        n, p, mtry = (2000, 10000, 100) if case == "a" else (20000, 500, 166)
        X, y = two_rules(n + 2000, p, seed=0)
        return X[:n], y[:n], X[n:], y[n:], dict(task="regression", n_estimators=100, max_features=mtry)
    if case in WIDE:
        X, y = two_rules(1500, WIDE[case], seed=0)
        X = X.astype(np.float32)
        return X[:1000], y[:1000], X[1000:], y[1000:], dict(task="regression", n_estimators=100, max_features=int(np.sqrt(WIDE[case])))
    d = shared_npz("all_bioc")
    if d is None:
        return None
    X, y = d["X"], d["y_bcrabl"]
    rng = np.random.RandomState(0)
    test = np.zeros(len(y), bool)
    for label in np.unique(y):  # stratified 25% hold-out
        rows = np.flatnonzero(y == label)
        test[rng.choice(rows, len(rows) // 4, replace=False)] = True
    mtry = int(case[1:])
    return X[~test], y[~test], X[test], y[test], dict(task="classification", n_estimators=500, max_features=mtry)


def run_worker(lib, case, trees):
    loaded = load_case(case)
    Xtr, ytr, Xte, yte, cfg = loaded
    n_estimators = trees or cfg["n_estimators"]
    kw = dict(n_estimators=n_estimators, max_features=cfg["max_features"], n_jobs=2, random_state=0)
    if lib == "pyinterp":
        import pyinterp as mod

        Reg, Clf = mod.RandomForestRegressor, mod.RandomForestClassifier
    else:
        from sklearn import ensemble as mod

        Reg, Clf = mod.RandomForestRegressor, mod.RandomForestClassifier
    model = (Reg if cfg["task"] == "regression" else Clf)(**kw)
    reset_peak_rss()
    start = time.perf_counter()
    model.fit(Xtr, ytr)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    score = model.score(Xte, yte)
    predict_s = time.perf_counter() - start
    peak_mb = peak_rss_mb()
    return dict(fit_s=fit_s, predict_s=predict_s, peak_mb=peak_mb, score=score)


def ranger_case(case, trees, tmp):
    Xtr, ytr, Xte, yte, cfg = load_case(case)
    return run_ranger(Xtr, ytr, Xte, yte, cfg["task"], trees or cfg["n_estimators"], cfg["max_features"], tmp)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--trees", type=int, default=None, help="override the number of trees")
    parser.add_argument("--no-ranger", action="store_true", help="skip ranger (its CSV input is slow at p=100k)")
    parser.add_argument("--worker", nargs=2, metavar=("LIB", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_worker(*args.worker, args.trees)))
        return
    libs = ["pyinterp", "sklearn"]
    with_ranger = not args.no_ranger and ranger_available()
    print(f"2 threads each; ranger: {'yes' if with_ranger else ('skipped' if args.no_ranger else 'not installed, skipped')}")
    header = f"{'case':<6} {'library':<9} {'fit s':>8} {'predict s':>10} {'peak MB':>8} {'score':>7}"
    for case in args.cases:
        if case.startswith("c") and not (SHARED_DATA / "all_bioc.npz").exists():
            print(f"\n{case}: {CASES[case]} -- skipped, {SHARED_DATA} is absent")
            continue
        print(f"\n{case}: {CASES[case]}\n{header}")
        results = {}
        for lib in libs:
            results[lib] = run_isolated([__file__, "--worker", lib, case] + (["--trees", args.trees] if args.trees else []))
        if with_ranger:
            with tempfile.TemporaryDirectory() as tmp:
                results["ranger"] = ranger_case(case, args.trees, tmp)
        for lib, r in results.items():
            print(f"{case:<6} {lib:<9} {r['fit_s']:>8.2f} {r['predict_s']:>10.3f} {r['peak_mb']:>8.0f} {r['score']:>7.3f}")
        base = results["pyinterp"]
        for lib, r in results.items():
            if lib != "pyinterp":
                print(f"{'':<6} {lib}/pyinterp: fit time x{r['fit_s'] / base['fit_s']:.1f}, "
                      f"peak memory x{r['peak_mb'] / base['peak_mb']:.2f}")


if __name__ == "__main__":
    main()
