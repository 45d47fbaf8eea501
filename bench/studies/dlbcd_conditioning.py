"""How DL-BCD's recovery depends on the reference dictionary's condition number, and which of the
fit's own numbers tell a user that a result cannot be trusted (issue 53, item 1: the sharpness
test reported "not sharp" both for an exact recovery at condition 50 and for a failure at 500).

Reference dictionaries D* = U diag(s) V^T with U, V random orthogonal and s geometric from 1 to
1/kappa, columns scaled to unit norm (the printed condition number is the scaled one); sparse
Gaussian coefficients SG(s), noiseless signals X = A D*^T. Each fit (DLBCD defaults but n_restarts)
records the NMSE to D*, the learned dictionary's condition number, the sharpness statistic of the
learned dictionary and of D*, the restarts' objectives, both dictionaries' truncated l1 objectives,
and the share of the learned codes that are zero (below 1e-6 of max |X|; 1 - s/p for D*).

    python bench/studies/dlbcd_conditioning.py [--p 12] [--s 3] [--n 2000] [--reps 10] [--restarts 1]
        [--figure docs/results/dlbcd_conditioning.png]

2026-11-29 (2 threads, load 3-4): every reference below condition number 100 recovered (40 of
40), 5 of 10 at 144-192, 2 of 10 at 305-558; the sharpness test called D* sharp only at 4-5
(r ~1e-17) and never from 14 on (r 0.02-1.7), recovered or not. The table and the figure:
docs/results/dlbcd_results.md (Notes), the basis of DLBCD's warning above condition number 100.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.timing import load_line

from pyinterp import DLBCD
from pyinterp.datasets import make_sparse_coefficients
from pyinterp.dictionary import sharpness_test
from pyinterp.metrics import dictionary_nmse

CONDITIONS = (5, 20, 50, 100, 200, 500)


def conditioned_dictionary(p, kappa, rng):
    """U diag(s) V^T, s geometric from 1 to 1/kappa, columns scaled to unit norm."""
    U, _ = np.linalg.qr(rng.standard_normal((p, p)))
    V, _ = np.linalg.qr(rng.standard_normal((p, p)))
    D = U @ np.diag(np.geomspace(1.0, 1.0 / kappa, p)) @ V.T
    return D / np.linalg.norm(D, axis=0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--p", type=int, default=12)
    parser.add_argument("--s", type=int, default=3)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--restarts", type=int, default=1)
    parser.add_argument("--conditions", type=float, nargs="+", default=CONDITIONS)
    parser.add_argument("--figure", help="also draw NMSE and the sharpness statistic against cond(D*) here")
    args = parser.parse_args()
    rows = []
    print(load_line(), flush=True)
    print("kappa rep | cond(D*) cond(D^) | NMSE | r(D^) r(D*) | restart objectives | f(D^) f(D*) | zeros")
    for kappa in args.conditions:
        for rep in range(args.reps):
            rng = np.random.RandomState(1000 * int(kappa) + rep)
            D = conditioned_dictionary(args.p, kappa, rng)
            A = make_sparse_coefficients(args.n, args.p, "sg", sparsity=args.s, random_state=rng.randint(2**31 - 1))
            X = A @ D.T
            start = time.perf_counter()
            model = DLBCD(n_restarts=args.restarts, random_state=rep, n_jobs=2).fit(X)
            seconds = time.perf_counter() - start
            E = model.components_
            truth_sharp = sharpness_test(D, X, random_state=rep)[1]
            rows.append((np.linalg.cond(D), dictionary_nmse(E, D), model.sharpness_, truth_sharp))
            print(f"{kappa:5g} {rep:3d} | {np.linalg.cond(D):8.1f} {np.linalg.cond(E):8.1f} | "
                  f"{dictionary_nmse(E, D):.2e} | {model.sharpness_:.2e} {truth_sharp:.2e} | "
                  f"{np.array2string(model.restart_objectives_, precision=5)} | "
                  f"{model.objective(X):.5f} {_objective(D, X, model.tau):.5f} | "
                  f"{np.mean(np.abs(model.transform(X)) < 1e-6 * np.abs(X).max()):.3f} | {seconds:.1f} s", flush=True)
    if args.figure:
        figure(np.array(rows), args)


def figure(rows, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cond, nmse, r_learned, r_truth = rows.T
    ok = nmse < 0.01
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.scatter(cond[ok], np.maximum(nmse[ok], 1e-16), color="C0", label="recovered (NMSE < 0.01)")
    left.scatter(cond[~ok], nmse[~ok], color="C3", marker="x", label="not recovered")
    left.set(xscale="log", yscale="log", xlabel="condition number of D*", ylabel="NMSE of DL-BCD's dictionary",
             title=f"DL-BCD, noiseless, p = {args.p}, s = {args.s}, n = {args.n}")
    left.axvline(100, color="grey", linestyle="--", linewidth=1)
    left.legend(fontsize=8)
    right.scatter(cond, np.maximum(r_truth, 1e-18), color="C2", label="r of D*")
    right.scatter(cond[ok], np.maximum(r_learned[ok], 1e-18), color="C0", marker=".", label="r of a recovered D")
    right.scatter(cond[~ok], r_learned[~ok], color="C3", marker="x", label="r of a wrong D")
    right.axhline(1e-6, color="grey", linestyle="--", linewidth=1)
    right.set(xscale="log", yscale="log", xlabel="condition number of D*", ylabel="sharpness statistic r",
              title="Algorithm 1 (plain l1): sharp below the dashed line")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.figure, dpi=90)


def _objective(D, X, tau):
    codes = np.abs(np.linalg.solve(D, X.T).T)
    return float(np.minimum(codes, tau).sum(axis=1).mean())


if __name__ == "__main__":
    main()
