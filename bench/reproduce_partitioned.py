"""Paper 004's synthetic experiments with pyinterp.PartitionedRatio, beside scikit-learn's GraphicalLasso.

Spec: shared/specs/seed004-partitioned-ratio.md (sections 4, 4.1, 6). The paper gives figures
only (no numbers, graph generators, weights, m, d, K, lambda constants or trial counts); every choice
below is ours.

E1 (paper Fig. 3a, spec ACCEPT-2): 50-variable zero-mean Gaussian MRF on an Erdos-Renyi graph
  (edge probability 0.06, weights +-0.4, diagonal shifted so the smallest eigenvalue is 0.5), blocks
  of 25/25, n = 300, 10 graphs. PartitionedRatio defaults (features "xy", unary "quadratic", 30
  lambdas down to 1e-2 lambda_max, all pairs penalised). Score: the ROC AUC of entry_lambda_ for
  the true cross edges (E_v = non-zero entries of Theta_12), and precision at |E_v|. Baseline:
  GraphicalLasso on the standardised data over 30 alphas from the largest off-diagonal |corr| down
  to 1e-2 of it; a cross pair's score is the largest alpha at which Theta_12 is non-zero (ties
  broken by |Theta_12| at the smallest alpha); also |Theta_12| of the inverse sample covariance.
  Plot: docs/results/partitioned_path.png (cross-pair group norms on graph 0; true edges black).

E3 (paper Fig. 3c, spec ACCEPT-3): exact recovery of the cross edges against n for m in
  {20, 40, 60} and n in {100, 200, 400, 800} on a truncated Gaussian MRF (rejection to |x_u| <= 3 sd_u) with a fixed bridge
  structure: d = 3 cross edges (weight 0.45) between the first variables of each block, and a
  chain (weight 0.3) inside each block. lambda_n = c sqrt(log C(m,2) / n) (the paper's scaling); c is
  fixed from the grid C_GRID by the best mean success over all cells (reported). "Success" = the
  cross support at lambda_n equals E_v exactly (within-block pairs are ignored). Also "oracle": some
  lambda on the path gives E_v exactly, and the same two for GraphicalLasso (alpha_n = c' sqrt(...),
  c' fixed the same way; oracle over the same kind of grid). x axis: beta = n / (d^2 log C(m,2)).
  Plot: docs/results/partitioned_recovery.png.

Results go to docs/results/partitioned_results.md (E1/E3 sections, rewritten by this script).

    python bench/reproduce_partitioned.py                # E1 (10 graphs) and E3 (20 trials per point)
    python bench/reproduce_partitioned.py --quick        # 2 graphs, 3 trials, small grid, no files
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import warnings

import numpy as np
from benchkit.data import random_precision, sample
from benchkit.paths import DOCS
from benchkit.plotting import pyplot, save
from benchkit.sections import write_section
from sklearn.covariance import GraphicalLasso
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

import pyinterp
from pyinterp import PartitionedRatio

C_GRID = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)


def bridge_precision(m, d=3, cross_weight=0.45, chain_weight=0.3):
    """Blocks of m/2; cross edges (k, m/2 + k) for k < d; a chain inside each block."""
    h = m // 2
    theta = np.zeros((m, m))
    for start in (0, h):
        for k in range(start, start + h - 1):
            theta[k, k + 1] = theta[k + 1, k] = chain_weight
    for k in range(d):
        theta[k, h + k] = theta[h + k, k] = cross_weight
    return theta + np.eye(m) * (max(0.0, -np.linalg.eigvalsh(theta).min()) + 0.5)


def glasso_path(X, m1, n_alphas=30, alphas=None):
    """Cross-block supports of GraphicalLasso over a decreasing alpha grid (standardised data)."""
    Z = (X - X.mean(0)) / X.std(0)
    corr = Z.T @ Z / len(Z)
    if alphas is None:
        top = np.abs(corr - np.diag(np.diag(corr))).max()
        alphas = top * np.logspace(0, -2, n_alphas)
    blocks = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for a in alphas:
            try:
                prec = GraphicalLasso(alpha=a, max_iter=200, tol=1e-4).fit(Z).precision_
            except FloatingPointError:
                prec = np.full((X.shape[1],) * 2, np.nan)
            blocks.append(prec[:m1, m1:].ravel())
    return np.asarray(alphas), np.array(blocks)


def entry_scores(alphas, blocks):
    nonzero = np.abs(blocks) > 1e-10
    first = np.where(nonzero.any(0), np.argmax(nonzero, 0), len(alphas))
    entry = np.where(first < len(alphas), alphas[np.minimum(first, len(alphas) - 1)], 0.0)
    last = np.nan_to_num(np.abs(blocks[-1]))
    return entry + 1e-9 * alphas[-1] * last / max(last.max(), 1e-300)    # ties by |Theta_12| at the end


def precision_at_k(scores, truth):
    k = int(truth.sum())
    return truth[np.argsort(-scores)[:k]].mean()


def run_e1(n_graphs, out, plot):
    m, m1, n = 50, 25, 300
    rows = []
    for g in range(n_graphs):
        rng = np.random.default_rng(1000 + g)
        theta = random_precision(m, 0.06, 0.4, rng)
        X = sample(theta, n, rng)
        truth = theta[:m1, m1:].ravel() != 0
        t = time.perf_counter()
        est = PartitionedRatio(m1, random_state=g).fit(X)
        seconds = time.perf_counter() - t
        alphas, blocks = glasso_path(X, m1)
        gl = entry_scores(alphas, blocks)
        inv = np.abs(np.linalg.inv(np.cov(X.T))[:m1, m1:].ravel())
        rows.append(dict(graph=g, edges=int(truth.sum()), auc=roc_auc_score(truth, est.entry_lambda_),
                         p_at_k=precision_at_k(est.entry_lambda_, truth), gl_auc=roc_auc_score(truth, gl),
                         gl_p_at_k=precision_at_k(gl, truth), inv_auc=roc_auc_score(truth, inv),
                         selected=len(est.cross_edges_), tp=int(truth[_cross_index(est)].sum()), seconds=seconds))
        print(f"E1 graph {g}: |E_v|={rows[-1]['edges']} AUC={rows[-1]['auc']:.4f} (glasso {rows[-1]['gl_auc']:.4f}, "
              f"inv-cov {rows[-1]['inv_auc']:.4f}) P@|E_v|={rows[-1]['p_at_k']:.3f} selected={rows[-1]['selected']} "
              f"(TP {rows[-1]['tp']}) {seconds:.1f}s", flush=True)
        if g == 0 and plot:
            plot_path(est, truth)
    mean = {k: float(np.mean([r[k] for r in rows])) for k in rows[0] if k != "graph"}
    out.append(f"## E1: regularisation path, 50-variable Gaussian MRF, blocks 25/25, n = 300 ({n_graphs} graphs)\n")
    out.append("Erdos-Renyi graphs (p = 0.06, weights +-0.4, min eigenvalue 0.5), PartitionedRatio defaults "
               "(the permutation FDR at 0.1 selects lambda; refit). AUC / P@|E_v| rank the 625 cross pairs by "
               "entry_lambda_ (pyinterp) or by the entry alpha on a 30-alpha GraphicalLasso path (ties by "
               "|Theta_12|); 'inv-cov' ranks by |inverse sample covariance|. 'selected' = cross_edges_ at the "
               "selected lambda.\n")
    out.append("| graph | \\|E_v\\| | AUC pyinterp | P@\\|E_v\\| pyinterp | AUC GraphicalLasso | P@\\|E_v\\| GraphicalLasso "
               "| AUC inv-cov | selected (TP) | fit s |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        out.append(f"| {r['graph']} | {r['edges']} | {r['auc']:.4f} | {r['p_at_k']:.3f} | {r['gl_auc']:.4f} | "
                   f"{r['gl_p_at_k']:.3f} | {r['inv_auc']:.4f} | {r['selected']} ({r['tp']}) | {r['seconds']:.1f} |")
    out.append(f"| **mean** | {mean['edges']:.1f} | **{mean['auc']:.4f}** | {mean['p_at_k']:.3f} | {mean['gl_auc']:.4f} | "
               f"{mean['gl_p_at_k']:.3f} | {mean['inv_auc']:.4f} | {mean['selected']:.1f} ({mean['tp']:.1f}) | "
               f"{mean['seconds']:.1f} |\n")
    verdict = "PASS" if mean["auc"] >= 0.95 else "FAIL"
    out.append(f"Acceptance (issue 7): mean AUC >= 0.95 -> {mean['auc']:.4f}: **{verdict}**\n")
    print(f"E1 mean AUC {mean['auc']:.4f} (glasso {mean['gl_auc']:.4f}) -> {verdict}")


def _cross_index(est):
    norms = np.sqrt((est.coef_path_[: est.n_cross_, :, est.best_index_] ** 2).sum(1))
    return norms > 0


def plot_path(est, truth):
    plt = pyplot()
    norms = np.sqrt((est.coef_path_ ** 2).sum(axis=1))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for g in range(est.n_cross_, len(norms)):
        ax.plot(est.lambdas_, norms[g], color="0.8", lw=0.5)
    for g in np.flatnonzero(~truth):
        ax.plot(est.lambdas_, norms[g], color="tab:red", lw=0.7)
    for g in np.flatnonzero(truth):
        ax.plot(est.lambdas_, norms[g], color="black", lw=1.2)
    ax.axvline(est.lambda_, color="tab:blue", ls="--", lw=1, label="selected lambda")
    ax.set_xscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("lambda (decreasing)")
    ax.set_ylabel("||theta_uv||")
    ax.set_title("PartitionedRatio path, m = 50 (25/25), n = 300: true cross edges black,\n"
                 "other cross pairs red, within-block pairs grey")
    ax.legend(loc="upper left")
    save(fig, DOCS / "partitioned_path.png")


def run_e3(ms, ns, trials, out, plot, d=3):
    success = {}   # (m, n) -> arrays over trials: [c index] for pyinterp / glasso, and oracle flags
    t0 = time.perf_counter()
    for m in ms:
        theta = bridge_precision(m, d)
        m1 = m // 2
        truth = theta[:m1, m1:].ravel() != 0
        log_pairs = math.log(math.comb(m, 2))
        for n in ns:
            scale = math.sqrt(log_pairs / n)
            pr, gl, pr_oracle, gl_oracle = [], [], [], []
            for trial in range(trials):
                rng = np.random.default_rng(10_000 * m + 10 * n + trial)
                X = sample(theta, n, rng, truncate=3.0)
                probe = PartitionedRatio(m1, lambdas=[1e9], selection="smallest", refit=False).fit(X)
                top = probe.lambda_max_
                grid = np.unique(np.r_[top * np.logspace(0, -1.3, 12), [c * scale for c in C_GRID]])[::-1]
                est = PartitionedRatio(m1, lambdas=grid, selection="smallest", refit=False).fit(X)
                supports = np.sqrt((est.coef_path_[: est.n_cross_] ** 2).sum(1)) > 0
                exact = np.all(supports == truth[:, None], axis=0)
                pr.append([exact[np.flatnonzero(np.isclose(est.lambdas_, c * scale))[0]] for c in C_GRID])
                pr_oracle.append(exact.any())
                alphas = np.unique(np.r_[np.logspace(0, -1.3, 12) * 0.8, [c * scale for c in C_GRID]])[::-1]
                _, blocks = glasso_path(X, m1, alphas=alphas)
                gexact = np.all((np.abs(blocks) > 1e-10) == truth[None, :], axis=1)
                gl.append([gexact[np.flatnonzero(np.isclose(alphas, c * scale))[0]] for c in C_GRID])
                gl_oracle.append(gexact.any())
            success[m, n] = (np.array(pr), np.array(gl), np.array(pr_oracle), np.array(gl_oracle))
            print(f"E3 m={m} n={n}: pyinterp success by c {np.array(pr).mean(0).round(2)} oracle "
                  f"{np.mean(pr_oracle):.2f}; glasso {np.array(gl).mean(0).round(2)} oracle {np.mean(gl_oracle):.2f} "
                  f"[{time.perf_counter() - t0:.0f}s]", flush=True)
    best_c = int(np.argmax(np.mean([v[0].mean(0) for v in success.values()], axis=0)))
    best_cg = int(np.argmax(np.mean([v[1].mean(0) for v in success.values()], axis=0)))
    out.append(f"## E3: exact recovery of the cross edges against n ({trials} trials per point)\n")
    out.append(f"Truncated Gaussian MRF (|x_u| <= 3 sd_u), fixed bridge structure: d = {d} cross edges (0.45), "
               "chains (0.3) inside the blocks of m/2. lambda_n = c sqrt(log C(m,2)/n); c chosen from "
               f"{list(C_GRID)} by best mean success: pyinterp c = {C_GRID[best_c]}, GraphicalLasso c' = "
               f"{C_GRID[best_cg]} (alpha on standardised data). 'oracle' = some lambda (alpha) on the 20-value path "
               "(12 log-spaced values from lambda_max (0.8 for alpha) to 0.05 of it, plus the lambda_n) recovers E_v exactly. beta = n / (d^2 log C(m,2)).\n")
    out.append("| m | n | beta | pyinterp at lambda_n | pyinterp oracle | GraphicalLasso at alpha_n | GraphicalLasso oracle |")
    out.append("|---|---|---|---|---|---|---|")
    for (m, n), (pr, gl, pro, glo) in success.items():
        beta = n / (d * d * math.log(math.comb(m, 2)))
        out.append(f"| {m} | {n} | {beta:.2f} | {pr[:, best_c].mean():.2f} | {pro.mean():.2f} | "
                   f"{gl[:, best_cg].mean():.2f} | {glo.mean():.2f} |")
    out.append("")
    if plot:
        plot_recovery(success, ms, ns, d, best_c, best_cg)


def plot_recovery(success, ms, ns, d, best_c, best_cg):
    fig, axes = pyplot().subplots(1, 2, figsize=(10, 4), sharey=True)
    for m, color in zip(ms, ["tab:blue", "tab:orange", "tab:green", "tab:purple"]):
        beta = [n / (d * d * math.log(math.comb(m, 2))) for n in ns]
        pr = [success[m, n][0][:, best_c].mean() for n in ns]
        gl = [success[m, n][1][:, best_cg].mean() for n in ns]
        axes[0].plot(ns, pr, "o-", color=color, label=f"pyinterp m={m}")
        axes[0].plot(ns, gl, "s:", color=color, alpha=0.6, label=f"GraphicalLasso m={m}")
        axes[1].plot(beta, pr, "o-", color=color, label=f"pyinterp m={m}")
        axes[1].plot(beta, gl, "s:", color=color, alpha=0.6, label=f"GraphicalLasso m={m}")
    axes[0].set_xlabel("n")
    axes[1].set_xlabel("beta = n / (d^2 log C(m,2))")
    axes[0].set_ylabel("P(cross support exact)")
    axes[1].legend(fontsize=7)
    fig.suptitle(f"Exact recovery of the cross edges at lambda_n = c sqrt(log C(m,2)/n) "
                 f"(c = {C_GRID[best_c]}; GraphicalLasso c' = {C_GRID[best_cg]})")
    save(fig, DOCS / "partitioned_recovery.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--graphs", type=int, default=10)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--parts", default="e1,e3")
    args = parser.parse_args()
    graphs, trials = (2, 3) if args.quick else (args.graphs, args.trials)
    ms, ns = ((20, 40), (200, 800)) if args.quick else ((20, 40, 60), (100, 200, 400, 800))
    write = not args.quick
    load = os.getloadavg()
    out = [f"Generated by `python bench/reproduce_partitioned.py`. pyinterp {pyinterp.__version__}, numpy {np.__version__}, "
           f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average at start "
           f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}.\n"]
    t = time.perf_counter()
    if "e1" in args.parts:
        run_e1(graphs, out, write)
    if "e3" in args.parts:
        run_e3(ms, ns, trials, out, write)
    out.append(f"Total run time {time.perf_counter() - t:.0f} s; load average at end "
               f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}.\n")
    text = "\n".join(out)
    print(text)
    if write:
        write_section(DOCS / "partitioned_results.md", "reproduce", text)


if __name__ == "__main__":
    sys.exit(main())
