"""pyinterp vs scikit-learn (and ranger when Rscript has it) random forests, side by side.

Each (library, case) runs in its own subprocess so its peak memory (max RSS) is its own; all
use 2 threads. Prints fit time, peak memory, held-out score and the ratios sklearn / pyinterp.

    python bench/compare_forest.py                 # all cases
    python bench/compare_forest.py --cases b c112  # some cases
    python bench/compare_forest.py --trees 20      # fewer trees, for a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CASES = {
    "a": "regression n=2000 p=10000 max_features=100, 100 trees",
    "b": "regression n=20000 p=500 max_features=166, 100 trees",
    "c112": "all_bioc.npz y_bcrabl classification, 500 trees, max_features=112",
    "c4208": "all_bioc.npz y_bcrabl classification, 500 trees, max_features=4208",
}


def two_rules(n, p, seed):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, p))
    y = ((X[:, 0] < 0.5) & (X[:, 1] < 0.5)) + ((X[:, 2] < 0.5) & (X[:, 3] < 0.5)) + 0.2 * rng.randn(n)
    return X, y.astype(np.float64)


def load_case(case):
    """Train/test split and forest settings of one case."""
    if case in ("a", "b"):
        n, p, mtry = (2000, 10000, 100) if case == "a" else (20000, 500, 166)
        X, y = two_rules(n + 2000, p, seed=0)
        return X[:n], y[:n], X[n:], y[n:], dict(task="regression", n_estimators=100, max_features=mtry)
    path = DATA / "all_bioc.npz"
    if not path.exists():
        return None
    d = np.load(path)
    X, y = d["X"], d["y_bcrabl"]
    rng = np.random.RandomState(0)
    test = np.zeros(len(y), bool)
    for label in np.unique(y):  # stratified 25% hold-out
        rows = np.flatnonzero(y == label)
        test[rng.choice(rows, len(rows) // 4, replace=False)] = True
    mtry = int(case[1:])
    return X[~test], y[~test], X[test], y[test], dict(task="classification", n_estimators=500, max_features=mtry)


def peak_rss_mb():
    """This process's own peak resident memory (ru_maxrss would include the parent's at fork)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


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
    start = time.perf_counter()
    model.fit(Xtr, ytr)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    score = model.score(Xte, yte)
    predict_s = time.perf_counter() - start
    peak_mb = peak_rss_mb()
    return dict(fit_s=fit_s, predict_s=predict_s, peak_mb=peak_mb, score=score)


RANGER_SCRIPT = r"""
suppressMessages(library(ranger)); a <- commandArgs(TRUE)
d <- read.csv(a[1]); test <- read.csv(a[2]); cls <- a[3] == "classification"
if (cls) { d$y <- factor(d$y); test$y <- factor(test$y, levels = levels(d$y)) }
t0 <- Sys.time()
fit <- ranger(dependent.variable.name = "y", data = d, num.trees = as.integer(a[4]), mtry = as.integer(a[5]),
              min.node.size = 1, num.threads = 2, seed = 0)
fit_s <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
t0 <- Sys.time()
pred <- predict(fit, test, num.threads = 2)$predictions
predict_s <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
score <- if (cls) mean(pred == test$y) else 1 - sum((test$y - pred)^2) / sum((test$y - mean(test$y))^2)
cat(fit_s, predict_s, score, "\n")
"""


def ranger_available():
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(ranger)"], capture_output=True)
    return probe.returncode == 0


def run_ranger(case, trees, tmp):
    Xtr, ytr, Xte, yte, cfg = load_case(case)
    header = ",".join([f"x{j}" for j in range(Xtr.shape[1])] + ["y"])
    paths = []
    for name, X, y in (("train", Xtr, ytr), ("test", Xte, yte)):
        paths.append(Path(tmp) / f"{case}_{name}.csv")
        np.savetxt(paths[-1], np.column_stack([X, y]), delimiter=",", comments="", header=header)
    script = Path(tmp) / "ranger.R"
    script.write_text(RANGER_SCRIPT)
    out = subprocess.run(
        ["/usr/bin/time", "-v", "Rscript", str(script), *map(str, paths), cfg["task"], str(trees or cfg["n_estimators"]),
         str(cfg["max_features"])], capture_output=True, text=True, check=True)
    peak_kb = next(int(line.split()[-1]) for line in out.stderr.splitlines() if "Maximum resident" in line)
    fit_s, predict_s, score = map(float, out.stdout.split()[-3:])
    return dict(fit_s=fit_s, predict_s=predict_s, peak_mb=peak_kb / 1024, score=score)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--trees", type=int, default=None, help="override the number of trees")
    parser.add_argument("--worker", nargs=2, metavar=("LIB", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_worker(*args.worker, args.trees)))
        return
    libs = ["pyinterp", "sklearn"]
    with_ranger = ranger_available()
    print(f"2 threads each; Rscript with ranger: {'yes' if with_ranger else 'not installed, skipped'}")
    header = f"{'case':<6} {'library':<9} {'fit s':>8} {'predict s':>10} {'peak MB':>8} {'score':>7}"
    for case in args.cases:
        if case.startswith("c") and not (DATA / "all_bioc.npz").exists():
            print(f"\n{case}: {CASES[case]} -- skipped, {DATA} is absent")
            continue
        print(f"\n{case}: {CASES[case]}\n{header}")
        results = {}
        for lib in libs:
            cmd = [sys.executable, __file__, "--worker", lib, case] + (["--trees", str(args.trees)] if args.trees else [])
            out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "2"})
            if out.returncode != 0:
                sys.exit(f"{lib} failed on case {case}:\n{out.stderr}")
            results[lib] = json.loads(out.stdout.strip().splitlines()[-1])
        if with_ranger:
            with tempfile.TemporaryDirectory() as tmp:
                results["ranger"] = run_ranger(case, args.trees, tmp)
        for lib, r in results.items():
            print(f"{case:<6} {lib:<9} {r['fit_s']:>8.2f} {r['predict_s']:>10.3f} {r['peak_mb']:>8.0f} {r['score']:>7.3f}")
        base = results["pyinterp"]
        for lib, r in results.items():
            if lib != "pyinterp":
                print(f"{'':<6} {lib}/pyinterp: fit time x{r['fit_s'] / base['fit_s']:.1f}, "
                      f"peak memory x{r['peak_mb'] / base['peak_mb']:.2f}")


if __name__ == "__main__":
    main()
