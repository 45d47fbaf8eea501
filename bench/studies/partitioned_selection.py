"""Which rule should PartitionedRatio use to select lambda? (issue 53, item 3)

The held-out MLMI rule (validation_fraction=0.2, the default before this study) ranks the cross
edges well but selects far too many: the held-out likelihood keeps rising while false edges enter.
This study fits one path per data set and reads the selected cross support at the lambda each rule
picks, against the truth:

- ``default (fdr 0.1)``: the estimator at its defaults (selection="permutation", fdr=0.1: the
  ``fdr q`` rule below on the estimator's own 30-value grid);
- ``held-out``: selection="validation", the held-out MLMI rule (the default before this study);
- ``theory c``: lambda = c sqrt(log C(m, 2) / n), the paper's rate (meaningful for features "xy" on
  standardised data only: the gradient of a cross pair at theta = 0 is then about a correlation);
- ``null e``: the permutation null. Permuting the rows of block 2 against block 1 keeps each block's
  own law and removes every cross dependence; the cross gradient at theta = 0 (closed form, one
  O(b n m1 m2) product per permutation) is then pure noise. lambda is set so that, on average over
  the permutations, ``e`` cross pairs have a gradient norm above it: at that lambda an all-null
  problem enters about e edges. It adapts to the pair features, the marginals and n without a
  constant to tune per feature set;
- ``qut a``: lambda = the (1 - a) quantile of the null lambda_max over the permutations (the
  quantile universal threshold of Giacobino et al. 2017: an all-null problem selects nothing with
  probability 1 - a);
- ``fdr q``: SAM's permutation false discovery rate (Tusher, Tibshirani & Chu 2001) along the path:
  at each lambda the mean number of null pairs above it over the number of cross edges the path
  selects there; the smallest lambda whose estimate is <= q;
- GraphicalLassoCV (scikit-learn's default cross-validated graphical lasso) on the same data: its
  non-zero cross entries of the precision.

Designs. Tuning ("tune", the rules' constants are chosen on these): blocks 25/25 of m = 50,
n = 300 and 1000, 6 graphs each, of two families: Erdos-Renyi (edge probability 0.06, weights +-0.4,
benchkit.data.random_precision) and chain-plus-hub (a chain of weight 0.3 through all m variables,
crossing the partition once, and 3 hubs in block 1 each joined to 5 variables of block 2 with
weights +-0.3). Held out ("fresh", never used to choose): new graph seeds of both families, and two
new families: unbalanced blocks 12/28 with an Erdos-Renyi graph (probability 0.08, weights +-0.35),
and the truncated Gaussian bridge of paper 004's E3 (m = 40, |x_u| <= 3 sd_u).

Beyond "xy" ("features", after the two sets, the default rule only): 60 global nulls whose blocks
are 4 Student t (5 df) and 4 uniform columns, n = 200, with features="poly2" (the chance of
selecting any edge is then the FDR); and 10 data sets of 8 Gaussian columns, n = 400, with one
quadratic cross dependence (x5 = 0.6 (x0^2 - 1) + 0.8 e) and one linear (x6 = 0.6 x1 + 0.8 e),
fitted with "xy" and "poly2".

    python bench/studies/partitioned_selection.py                 # both sets, n = 300 and 1000
    python bench/studies/partitioned_selection.py --quick         # 2 graphs, n = 300 only
    python bench/studies/partitioned_selection.py --set features  # the poly2 checks

2026-11-29 (load about 1), --set features: poly2 null, some edge selected in 6 of 60 (FDR 0.10);
quadratic edge found 10 of 10 with poly2, 0 of 10 with xy; linear edge 10 of 10 with both; no false
edge in either.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np
from sklearn.covariance import GraphicalLassoCV
from sklearn.exceptions import ConvergenceWarning

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchkit.data import random_precision, sample

from pyinterp import PartitionedRatio
from pyinterp.partitioned.ratio import PAIR_FEATURES, UNARY_FEATURES, RatioProblem

THEORY = (1.0, 1.1, 1.2, 1.3, 1.5)
NULL = (0.5, 1.0, 2.0, 4.0)
QUT = (0.05, 0.5, 0.9)
FDR = (0.05, 0.1, 0.2)
N_PERMUTATIONS = 100


def chain_hub(m, m1, rng, hubs=3, degree=5, weight=0.3):
    theta = np.zeros((m, m))
    for k in range(m - 1):
        theta[k, k + 1] = theta[k + 1, k] = weight
    for h in rng.choice(m1, hubs, replace=False):
        for v in rng.choice(np.arange(m1, m), degree, replace=False):
            theta[h, v] = theta[v, h] = rng.choice([-weight, weight])
    return theta + np.eye(m) * (max(0.0, -np.linalg.eigvalsh(theta).min()) + 0.5)


def bridge(m, d=3, cross=0.45, chain=0.3):
    theta, h = np.eye(m), m // 2
    for k in range(d):
        theta[k, h + k] = theta[h + k, k] = cross
    for start in (0, h):
        for k in range(start, start + h - 1):
            theta[k, k + 1] = theta[k + 1, k] = chain
    return theta + np.eye(m) * (max(0.0, -np.linalg.eigvalsh(theta).min()) + 0.5)


def design(family, seed, n):
    rng = np.random.default_rng(seed)
    if family == "er":
        m, m1 = 50, 25
        theta = random_precision(m, 0.06, 0.4, rng)
    elif family == "chain-hub":
        m, m1 = 50, 25
        theta = chain_hub(m, m1, rng)
    elif family == "er-unbalanced":
        m, m1 = 40, 12
        theta = random_precision(m, 0.08, 0.35, rng)
    elif family == "bridge-truncated":
        m, m1 = 40, 20
        theta = bridge(m)
        return sample(theta, n, rng, truncate=3.0), theta, m1
    return sample(theta, n, rng), theta, m1


def rules(X, m1, seed):
    """lambda by each rule, all from one set of permutations."""
    n, m = X.shape
    scale = math.sqrt(math.log(math.comb(m, 2)) / n)
    lam = {f"theory {c}": c * scale for c in THEORY}
    problem = RatioProblem((X - X.mean(0)) / X.std(0), np.arange(m1), np.arange(m1, m), PAIR_FEATURES["xy"],
                           UNARY_FEATURES["quadratic"])
    rng = np.random.RandomState(seed)
    null = np.array([np.sqrt((problem.cross_gradient_at_zero(rng.permutation(n)) ** 2).sum(0)).ravel()
                     for _ in range(N_PERMUTATIONS)])
    pooled = np.sort(null.ravel())[::-1]
    for e in NULL:
        lam[f"null {e}"] = float(pooled[round(e * N_PERMUTATIONS) - 1])
    for a in QUT:
        lam[f"qut {a}"] = float(np.quantile(null.max(1), 1 - a))
    return lam, np.sort(null.ravel())


def fdr_index(lambdas, support, pooled_null, q):
    """SAM's permutation FDR (Tusher, Tibshirani & Chu 2001) along the path: at each lambda the
    mean number of null pairs whose gradient norm exceeds it, over the number of cross pairs the
    path selects there; the smallest lambda whose estimate is <= q."""
    expected = (pooled_null.size - np.searchsorted(pooled_null, lambdas, side="right")) / N_PERMUTATIONS
    fdr = expected / np.maximum(support.sum(0), 1)
    ok = np.flatnonzero(fdr <= q)
    return int(ok.max()) if ok.size else 0


def precision_recall(selected, truth):
    tp = int(np.sum(selected & truth))
    return (tp / selected.sum() if selected.sum() else 1.0), tp / truth.sum(), int(selected.sum())


def selected(est, m, m1):
    chosen = np.zeros(m1 * (m - m1), bool)
    chosen[[u * (m - m1) + v - m1 for u, v in est.cross_edges_]] = True
    return chosen


def one(family, seed, n):
    X, theta, m1 = design(family, seed, n)
    m = X.shape[1]
    truth = theta[:m1, m1:].ravel() != 0
    out, seconds = {}, {}
    for name, selection in (("default (fdr 0.1)", "permutation"), ("held-out", "validation")):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # "selected no cross edge" is counted below
            est = PartitionedRatio(m1, selection=selection, random_state=seed).fit(X)
        seconds[name] = time.perf_counter() - t0
        out[name] = precision_recall(selected(est, m, m1), truth)
    lam, pooled_null = rules(X, m1, seed)
    probe = PartitionedRatio(m1, lambdas=[1e9], selection="smallest", refit=False).fit(X)
    grid = np.unique(np.r_[probe.lambda_max_ * np.logspace(0, -2, 30), list(lam.values())])[::-1]
    path = PartitionedRatio(m1, lambdas=grid, selection="smallest", refit=False).fit(X)
    support = np.sqrt((path.coef_path_[: path.n_cross_] ** 2).sum(1)) > 0
    for name, value in lam.items():
        out[name] = precision_recall(support[:, int(np.argmin(np.abs(path.lambdas_ - value)))], truth)
    for q in FDR:
        out[f"fdr {q}"] = precision_recall(support[:, fdr_index(path.lambdas_, support, pooled_null, q)], truth)
    # the best any lambda on this path can do (by the smaller of precision and recall): what is reachable
    out["best on path"] = max((precision_recall(s, truth) for s in support.T), key=lambda r: min(r[0], r[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            gl = GraphicalLassoCV(n_jobs=1).fit((X - X.mean(0)) / X.std(0))
            out["GraphicalLassoCV"] = precision_recall(np.abs(gl.precision_[:m1, m1:]).ravel() > 1e-10, truth)
        except FloatingPointError:
            out["GraphicalLassoCV"] = (np.nan, np.nan, 0)
    return out, seconds


def features_checks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        any_edge = 0
        for seed in range(60):
            rng = np.random.default_rng(2000 + seed)
            X = np.c_[rng.standard_t(5, (200, 4)), rng.uniform(size=(200, 4))]
            any_edge += len(PartitionedRatio(4, features="poly2", random_state=seed).fit(X).cross_edges_) > 0
        print(f"poly2, independent t / uniform blocks: some edge selected in {any_edge} of 60 (the FDR)", flush=True)
        for features in ("xy", "poly2"):
            quadratic = linear = false = 0
            for seed in range(10):
                rng = np.random.default_rng(3000 + seed)
                Z = rng.standard_normal((400, 8))
                Z[:, 5] = 0.6 * (Z[:, 0] ** 2 - 1) + 0.8 * Z[:, 5]
                Z[:, 6] = 0.6 * Z[:, 1] + 0.8 * Z[:, 6]
                edges = {tuple(e) for e in PartitionedRatio(4, features=features, random_state=seed).fit(Z).cross_edges_}
                quadratic += (0, 5) in edges
                linear += (1, 6) in edges
                false += len(edges - {(0, 5), (1, 6)})
            print(f"{features}: quadratic edge found {quadratic} of 10, linear {linear} of 10, false edges {false}",
                  flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--set", choices=["tune", "fresh", "both", "features"], default="both")
    args = ap.parse_args()
    graphs = 2 if args.quick else 6
    ns = (300,) if args.quick else (300, 1000)
    sets = {"tune": [("er", s) for s in range(graphs)] + [("chain-hub", s) for s in range(graphs)],
            "fresh": [(f, 100 + s) for f in ("er", "chain-hub", "er-unbalanced", "bridge-truncated")
                      for s in range(graphs)]}
    print(f"load average at start {os.getloadavg()}", flush=True)
    if args.set == "features":
        features_checks()
        print(f"load average at end {os.getloadavg()}")
        return
    for name in (("tune", "fresh") if args.set == "both" else (args.set,)):
        for n in ns:
            cells = {}
            for family, seed in sets[name]:
                res, seconds = one(family, seed, n)
                cells.setdefault(family, []).append(res)
                print(f"{name} n={n} {family} seed={seed}: fit s " + " ".join(f"{k} {v:.1f}" for k, v in
                                                                            seconds.items()) + "; " +
                      " ".join(f"[{k}] {v[0]:.2f}/{v[1]:.2f}/{v[2]}" for k, v in res.items()), flush=True)
            for family, runs in cells.items():
                print(f"\n## {name} n={n} {family}: mean precision / recall (min precision, min recall) "
                      f"over {len(runs)} graphs")
                for rule in runs[0]:
                    p = np.array([r[rule][0] for r in runs])
                    r = np.array([r[rule][1] for r in runs])
                    print(f"  {rule:18s} {np.nanmean(p):.2f} / {np.nanmean(r):.2f}  ({np.nanmin(p):.2f}, "
                          f"{np.nanmin(r):.2f})")
                print(flush=True)
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
