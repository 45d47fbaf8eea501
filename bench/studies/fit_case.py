"""One pyinterp forest fit of a fixed case, for comparing two builds of pyinterp (a refactor's
before and after): run it under each build's Python in turn, several times, A B A B, and compare
the medians. Prints the fit's wall seconds, the process's peak memory and which pyinterp it ran.
The data are made once per case under --cache (default: a folder in the system's temp directory)
and loaded from there, so both builds read the same bytes.

    a        regression n=2000 p=10,000 float64, 100 trees, max_features=100 (compare_forest.py a)
    b        regression n=20,000 p=500 float64, 100 trees, max_features=166 (compare_forest.py b)
    snp      genotypes {0,1,2} int8 n=5000 p=100,000, 30 trees, max_features=sqrt
    snp-mm   the same .npy memory-mapped read-only (read from its file in panels)
    snp-na   genotypes as float32 with 2 % missing calls (NaN), n=5000 p=100,000, 50 trees, max_features=sqrt
             (issue 54's genotype shape; X is 2 GB)

    python bench/studies/fit_case.py a
    for i in 1 2 3; do before/bin/python bench/studies/fit_case.py snp; after/bin/python bench/studies/fit_case.py snp; done
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is
from benchkit.timing import Timer, load_line, peak_rss_mb  # noqa: E402

CASES = {"a": (2000, 10_000, 100, 100), "b": (20_000, 500, 100, 166), "snp": (5000, 100_000, 30, "sqrt"),
         "snp-na": (5000, 100_000, 50, "sqrt")}


def data(case, cache):
    """X and y of a case, made on first use and kept as .npy files under cache."""
    name = "snp" if case == "snp-mm" else case
    paths = cache / f"{name}_X.npy", cache / f"{name}_y.npy"
    if not all(p.exists() for p in paths):
        cache.mkdir(parents=True, exist_ok=True)
        n, p, _, _ = CASES[name]
        rng = np.random.default_rng(0)
        if name.startswith("snp"):
            X = rng.choice(np.array([0, 1, 2], dtype=np.int8), size=(n, p), p=[0.5, 0.35, 0.15])
            y = 1.5 * X[:, 0] - X[:, 1] * (X[:, 2] > 0) + 0.5 * rng.normal(size=n)
            if name == "snp-na":
                X = X.astype(np.float32)
                X[rng.random(size=(n, p), dtype=np.float32) < 0.02] = np.nan
        else:
            X = rng.normal(size=(n, p))
            y = X[:, 0] * X[:, 1] + X[:, 2] + 0.5 * rng.normal(size=n)
        np.save(paths[0], X)
        np.save(paths[1], y)
    return np.load(paths[0], mmap_mode="r" if case == "snp-mm" else None), np.load(paths[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", choices=[*CASES, "snp-mm"])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "pyinterp_fit_case")
    args = parser.parse_args()
    import pyinterp

    X, y = data(args.case, args.cache)
    _, _, trees, max_features = CASES["snp" if args.case == "snp-mm" else args.case]
    print(load_line())
    forest = pyinterp.RandomForestRegressor(n_estimators=trees, max_features=max_features, random_state=0,
                                            n_jobs=args.n_jobs)
    with Timer() as t:
        forest.fit(X, y)
    print(f"{args.case}: fit {t.wall:.3f} s wall, {t.cpu:.3f} s CPU; peak {peak_rss_mb():.0f} MB; {pyinterp.__file__}")


if __name__ == "__main__":
    main()
