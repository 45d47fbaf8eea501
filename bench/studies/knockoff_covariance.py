"""The knockoff filter's FDR and power on AR(1) features by the covariance its knockoffs are built
from: the design's own, the sample covariance, Ledoit-Wolf's or OAS's shrinkage, or the sample
covariance plus a ridge (the covariance table of docs/user/significance.md).

X has AR(1) columns (rho 0.6, unit variance), y = 0.7 x the sum of k random columns + N(0, 1);
100 trees, max_features 0.3, MVR knockoffs, MDI-oob, knockoff+ at q = 0.1; simulation s uses seed
--seed + s. The table's rows:

    python bench/studies/knockoff_covariance.py --n 300 --p 500 --k 20 --sims 100 --covariance ledoit_wolf \
        --seed 7000 --standardized
    python bench/studies/knockoff_covariance.py --n 300 --p 500 --k 20 --sims 50 --covariance true \
        --seed 7000 --standardized
    python bench/studies/knockoff_covariance.py --n 300 --p 500 --k 20 --sims 30 --covariance ridge --ridge 0.01
    python bench/studies/knockoff_covariance.py --n 1000 --p 500 --k 20 --sims 50 --covariance sample
    python bench/studies/knockoff_covariance.py --n 1000 --p 100 --k 10 --sims 50 --covariance oas
    ...

The rows at --seed 7000 add --standardized (y from standardized columns: knockoff_power.py's
AR(1) design, simulation for simulation).
"""

import argparse
import contextlib
import os
import warnings
from unittest import mock

import numpy as np
from sklearn.covariance import oas

from pyinterp import RandomForestRegressor, _knockoffs
from pyinterp.significance import knockoff_filter

RHO = 0.6


def simulate(n, p, k, seed, standardized):
    rng = np.random.default_rng(seed)
    X = np.empty((n, p))
    X[:, 0] = rng.standard_normal(n)
    for j in range(1, p):
        X[:, j] = RHO * X[:, j - 1] + np.sqrt(1 - RHO**2) * rng.standard_normal(n)
    causes = rng.choice(p, k, replace=False)
    signal = (X - X.mean(axis=0)) / X.std(axis=0) if standardized else X
    return X, 0.7 * signal[:, causes].sum(axis=1) + rng.standard_normal(n), causes


def estimator(how, ridge):
    """A stand-in for the package's estimate, for the ways it does not offer."""
    if how == "oas":
        return lambda X, _: oas(X)[0]
    if how == "ridge":
        def sample_plus_ridge(X, _):
            C = np.cov(X, rowvar=False)
            return C + ridge * np.mean(np.diag(C)) * np.eye(len(C))
        return sample_plus_ridge
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--p", type=int, default=500)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--sims", type=int, default=50)
    parser.add_argument("--seed", type=int, default=9000)
    parser.add_argument("--covariance", choices=["true", "sample", "ledoit_wolf", "oas", "ridge"], default="sample")
    parser.add_argument("--ridge", type=float, default=0.01, help="--covariance ridge: the ridge / mean variance")
    parser.add_argument("--standardized", action="store_true", help="y from standardized columns")
    args = parser.parse_args()
    true = RHO ** np.abs(np.subtract.outer(np.arange(args.p), np.arange(args.p)))
    given = {"true": true, "sample": "sample", "ledoit_wolf": "ledoit_wolf"}.get(args.covariance, "sample")
    patch = estimator(args.covariance, args.ridge)
    proportions, power = [], []
    for s in range(args.sims):
        X, y, causes = simulate(args.n, args.p, args.k, args.seed + s, args.standardized)
        with warnings.catch_warnings(), (mock.patch.object(_knockoffs, "_estimated_covariance", patch) if patch
                                         else contextlib.nullcontext()):
            warnings.simplefilter("ignore")
            chosen = knockoff_filter(RandomForestRegressor(n_estimators=100, max_features=0.3), X, y,
                                     covariance=given, random_state=s).selected(0.1)
        false = int(np.sum(~np.isin(chosen, causes)))
        proportions.append(false / max(len(chosen), 1))
        power.append((len(chosen) - false) / args.k)
    print(f"n={args.n} p={args.p} k={args.k} covariance={args.covariance} sims={args.sims}: FDR "
          f"{np.mean(proportions):.3f} (se {np.std(proportions) / np.sqrt(args.sims):.3f}), power {np.mean(power):.3f}; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
