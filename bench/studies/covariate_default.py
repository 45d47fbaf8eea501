"""Which default for covariates (issue 48, item 3): a forest on genotypes whose phenotype is
confounded by population structure, with the covariates (principal components) used three ways.

    none     the forest on the genotypes, the phenotype as it is
    adjust   the phenotype's residuals after least squares on the PCs (the PCs' share removed first)
    columns  the PCs as features beside the genotypes, drawn as any other (max_features sqrt)
    always   the PCs beside the genotypes, searched at every node (always_split_features, ranger's
             always.split.variables); max_features sqrt of the genotypes

Two populations (Balding-Nichols, Fst 0.05), n = 2,000, p = 2,000 SNPs; the phenotype is 1 SD
per population + an interacting pair (SNP 0 and SNP 1 both carried) + an additive SNP 2 + noise.
For each arm: the ranks of the causal SNPs by MDI-oob (of the genotype columns), and how many of
the 20 top-ranked genotype columns are null SNPs among the 5% most differentiated between the
populations (the false hits stratification makes).

    python bench/studies/covariate_default.py [--seeds 5] [--trees 300] [--binary]

2026-11-29 (commit 405dc07, 5 seeds, 300 trees). Differentiated nulls among the top 20 genotype
columns, mean over seeds, and the worst rank of a causal SNP:

    phenotype      none         adjust      columns       always
    continuous     13.0 / 557   1.0 / 3     13.8 / 121    0.4 / 3
    case/control   12.8 / 258   1.8 / 3     13.2 / 258    0.8 / 4

PCs offered as ordinary columns do not adjust: a tree splits on a SNP that tags the population as
readily as on a PC. Offered at every node they do, slightly better than adjusting the phenotype,
and they work where adjusting does not fit: a case/control phenotype (adjust's residuals there
are a linear probability model's), covariates acting non-linearly or in interaction. The command
line's default is therefore always (--covar-mode), adjust the alternative.
"""

from __future__ import annotations

import argparse

import numpy as np

from pyinterp import RandomForestClassifier, RandomForestRegressor
from pyinterp.importance import mdi_oob

CAUSAL = (0, 1, 2)


def simulate(seed, n=2000, p=2000, fst=0.05, shift=1.0):
    rng = np.random.default_rng(seed)
    ancestral = rng.uniform(0.1, 0.9, p)
    a, b = ancestral * (1 - fst) / fst, (1 - ancestral) * (1 - fst) / fst
    freqs = rng.beta(a, b, size=(2, p))
    pop = np.repeat([0, 1], n // 2)
    G = rng.binomial(2, freqs[pop]).astype(np.float64)
    signal = 1.0 * ((G[:, 0] > 0) & (G[:, 1] > 0)) + 0.4 * G[:, 2]
    y = signal / signal.std() + shift * pop + rng.standard_normal(n)
    Z = (G - G.mean(0)) / np.maximum(G.std(0), 1e-12)
    pcs = np.linalg.svd(Z, full_matrices=False)[0][:, :4] * np.sqrt(n)
    differentiated = np.abs(freqs[0] - freqs[1])
    nulls = np.setdiff1d(np.argsort(-differentiated)[: p // 20], CAUSAL)
    return G, y, pcs, nulls


def arm(name, G, y, pcs, trees, seed, binary):
    """MDI-oob of the genotype columns. binary: y is 0/1, fitted by a classifier except in the
    adjust arm, whose residuals are continuous (a linear probability model's)."""
    if name == "adjust":
        design = np.column_stack([np.ones(len(y)), pcs])
        y = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    X = np.column_stack([G, pcs]) if name in ("columns", "always") else G
    always = np.arange(G.shape[1], X.shape[1]) if name == "always" else None
    Forest = RandomForestClassifier if binary and name != "adjust" else RandomForestRegressor
    forest = Forest(n_estimators=trees, max_features="sqrt", oob_score=True, n_jobs=2, random_state=seed,
                    always_split_features=always).fit(X, y)
    return mdi_oob(forest, X, y)[: G.shape[1]]  # the genotype columns


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--trees", type=int, default=300)
    parser.add_argument("--binary", action="store_true", help="a case/control phenotype: the top half of the "
                        "continuous one")
    args = parser.parse_args()
    arms = ("none", "adjust", "columns", "always")
    print(f"{'seed':>4} {'arm':<8} {'ranks of SNPs 0, 1, 2':<24} {'differentiated nulls in top 20':>30}")
    summary = {name: [] for name in arms}
    for seed in range(args.seeds):
        G, y, pcs, nulls = simulate(seed)
        if args.binary:
            y = (y > np.median(y)).astype(np.float64)
        for name in arms:
            score = arm(name, G, y, pcs, args.trees, seed, args.binary)
            order = np.argsort(-score, kind="stable")
            ranks = [int(np.flatnonzero(order == k)[0]) + 1 for k in CAUSAL]
            false_hits = int(np.isin(order[:20], nulls).sum())
            summary[name].append((ranks, false_hits))
            print(f"{seed:>4} {name:<8} {str(ranks):<24} {false_hits:>30}", flush=True)
    print("\nmedian rank of each causal SNP, and differentiated nulls in the top 20 (mean), over seeds:")
    for name in arms:
        ranks = np.array([r for r, _ in summary[name]])
        hits = np.mean([h for _, h in summary[name]])
        print(f"  {name:<8} ranks {np.median(ranks, axis=0).tolist()}  false hits {hits:.1f}")


if __name__ == "__main__":
    main()
