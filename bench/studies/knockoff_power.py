"""FDR and power of the knockoff filter against Janitza's p-values with BH, on the same data.

Designs (n = 300, p = 500, y = amplitude x the sum of the first k features + N(0, 1), 100 trees,
max_features 0.3, q = 0.1): independent Gaussian features (the design of
bench/compare_pvalues_ranger.py), AR(1) Gaussian features (rho 0.6), and genotypes in LD blocks
(0/1/2 counts; Gaussian knockoffs of them are not exact, which the filter's FDR there measures).
Each simulation fits every method on the same X and y.

    python bench/studies/knockoff_power.py --sims 20 --out bench/results_data/knockoff_power.csv
    python bench/studies/knockoff_power.py --sims 100 --designs "AR(1) 0.6, k=20" \
        --methods "knockoff+ mvr mdi_oob" --n 1000 --covariance sample --out fdr.csv

The first table of docs/user/significance.md ran at n = 300, p = 500, where the default
covariance is Ledoit-Wolf's; the covariance table beside it was measured with --covariance.
"""

import argparse
import csv
import os
import time
import warnings

import numpy as np

from pyinterp import RandomForestRegressor
from pyinterp.significance import importance_pvalues, knockoff_filter

DESIGNS = {  # name: (features, k, amplitude)
    "independent, k=0": ("gaussian", 0, 0.0),
    "independent, k=5": ("gaussian", 5, 0.7),
    "independent, k=20": ("gaussian", 20, 0.7),
    "AR(1) 0.6, k=20": ("ar1", 20, 0.7),
    "genotypes in LD, k=0": ("genotypes", 0, 0.0),
    "genotypes in LD, k=20": ("genotypes", 20, 0.5),
}
METHODS = ("janitza+BH", "knockoff+ mvr mdi_oob", "knockoff+ mvr permutation", "knockoff+ equicorrelated mdi_oob",
           "knockoff mvr mdi_oob")


def features(kind, n, p, rng):
    if kind == "gaussian":
        return rng.standard_normal((n, p))
    if kind == "ar1":
        X = np.empty((n, p))
        X[:, 0] = rng.standard_normal(n)
        for j in range(1, p):
            X[:, j] = 0.6 * X[:, j - 1] + np.sqrt(1 - 0.36) * rng.standard_normal(n)
        return X
    # genotypes: blocks of 10 SNPs, each haplotype a thresholded AR(1) latent (r 0.8), MAF 0.1-0.5
    latent = np.empty((2 * n, p))
    latent[:, 0] = rng.standard_normal(2 * n)
    for j in range(1, p):
        r = 0.0 if j % 10 == 0 else 0.8
        latent[:, j] = r * latent[:, j - 1] + np.sqrt(1 - r * r) * rng.standard_normal(2 * n)
    maf = rng.uniform(0.1, 0.5, p)
    from scipy.stats import norm

    alleles = latent < norm.ppf(maf)
    return (alleles[:n] + alleles[n:]).astype(np.float64)


def standardized(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def true_covariance(design, p):
    kind = DESIGNS[design][0]
    if kind == "gaussian":
        return np.eye(p)
    if kind == "ar1":
        return 0.6 ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))
    raise ValueError(f"{design}: no known covariance")


def simulate(design, seed, n=300, p=500):
    kind, k, amplitude = DESIGNS[design]
    rng = np.random.default_rng(seed)
    X = features(kind, n, p, rng)
    causes = rng.choice(p, k, replace=False) if kind != "gaussian" else np.arange(k)
    y = amplitude * standardized(X)[:, causes].sum(axis=1) + rng.standard_normal(n)
    return X, y, causes


def selections(X, y, seed, methods, covariance="auto"):
    forest = RandomForestRegressor(n_estimators=100, max_features=0.3)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        if "janitza+BH" in methods:
            out["janitza+BH"] = (importance_pvalues(forest, X, y, random_state=seed).selected(0.1),
                                 time.perf_counter() - start)
        for method in (m for m in methods if m != "janitza+BH"):
            plus, s_method, importance = method.split()
            start = time.perf_counter()
            test = knockoff_filter(forest, X, y, s_method=s_method, importance=importance, covariance=covariance,
                                   offset=1 if plus == "knockoff+" else 0, random_state=seed)
            out[method] = (test.selected(0.1), time.perf_counter() - start)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=20)
    parser.add_argument("--out", default="knockoff_power.csv")
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=list(DESIGNS))
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--p", type=int, default=500)
    parser.add_argument("--covariance", choices=["auto", "sample", "ledoit_wolf", "true"], default="auto",
                        help="the knockoffs' covariance (true: the design's own)")
    args = parser.parse_args()
    rows = []
    for design in args.designs:
        covariance = true_covariance(design, args.p) if args.covariance == "true" else args.covariance
        for s in range(args.sims):
            X, y, causes = simulate(design, 7000 + s, n=args.n, p=args.p)
            for method, (chosen, seconds) in selections(X, y, s, args.methods, covariance).items():
                false = int(np.sum(~np.isin(chosen, causes)))
                rows.append((design, s, method, len(chosen), false, int(len(chosen) - false), len(causes), seconds))
        print(f"{design}: done ({time.strftime('%H:%M:%S')}, load {os.getloadavg()[0]:.1f})", flush=True)
        summarize(rows, design, args.methods)
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["design", "sim", "method", "selected", "false", "true", "causes", "seconds"])
        writer.writerows(rows)


def summarize(rows, design, methods):
    print("| method | discoveries | FDR | P(any false) | power | s a test |")
    print("|---|---|---|---|---|---|")
    for method in methods:
        mine = [r for r in rows if r[0] == design and r[2] == method]
        fdp = [r[4] / max(r[3], 1) for r in mine]
        power = [r[5] / r[6] for r in mine if r[6]]
        print(f"| {method} | {np.mean([r[3] for r in mine]):.2f} | {np.mean(fdp):.3f} | "
              f"{np.mean([r[4] > 0 for r in mine]):.2f} | {np.mean(power) if power else float('nan'):.2f} | "
              f"{np.mean([r[7] for r in mine]):.2f} |", flush=True)


if __name__ == "__main__":
    main()
