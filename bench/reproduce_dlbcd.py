"""Reproduce the thesis' dictionary-learning experiments (thesis 000, section 5.3) with pyinterp.

Parts (each prints its numbers, saves a plot in docs/results/ and rewrites its own section of
docs/results/dlbcd_results.md):

  fig5_1      Algorithm 1 (pyinterp.sharpness_test) run time: p = 20, n = 500..5000 and n = 400,
              p = 5..50; D* constant collinearity mu = 0.5, coefficients BG(0.7) (D* not a local
              minimum: the slow case). Expect time linear in n and quadratic in p.
  fig5_3      Share of repetitions in which Algorithm 1 declares D* sharp against n, p = 12, 16, 20,
              rho = 0.01, T = 1e-6, and the n at 50% from a logistic fit (thesis: 253, 316, 375).
              Settings of the reference script (simulation/sim2.m of shifwang/DL-BCD): s = p / 2,
              mu = ((p - s)/(p - 1) - 0.2)/sqrt(s) (Corollary 4.1.1 holds with margin 0.2), n = 50..1000.
              The thesis text states s = 5, mu = 0.5, where Corollary 4.1.1 fails; that setting is
              checked too.
  single_run  p = 10, mu = 0.7, SG(4), n = 400, tau = 0.5, one run per data set: recovered (NMSE <
              0.01) with the two-stage init ("l1") vs a random init (thesis: 70/100 vs 5/100).
  fig5_10     Recovery rate over (p, s), n = 100 p, SNR 100, random Gaussian D*: DL-BCD tau = 0.5
              and tau = inf against scikit-learn's DictionaryLearning and SPAMS trainDL. Runs the
              resumable grid of bench/dlbcd_grid.py (results kept in bench/results_data/dlbcd_fig5_10.jsonl,
              reruns fit only what is missing; see there for the settings and for two processes).

    python bench/reproduce_dlbcd.py --parts fig5_1 fig5_3 single_run
    python bench/reproduce_dlbcd.py --parts fig5_10 --grid-p 4 8 12 16 20 --s-step 4 --reps 2
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np
from benchkit.paths import BENCH, DOCS
from benchkit.plotting import pyplot, save
from benchkit.sections import write_section
from benchkit.timing import load_line

from pyinterp import DLBCD, sharpness_test
from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
from pyinterp.metrics import dictionary_recovered

RESULTS = DOCS / "dlbcd_results.md"


def signals(D, n, model, seed, *, sparsity=None, probability=None, snr=None):
    A = make_sparse_coefficients(n, D.shape[0], model, sparsity=sparsity, probability=probability, random_state=seed)
    return make_dictionary_signals(D, A, snr=snr, random_state=seed + 1)


# ---- Fig. 5.1 ------------------------------------------------------------------------------------


def fig5_1(reps):
    D20 = make_collinear_dictionary(20, 0.5)
    lines = ["## Fig. 5.1: run time of Algorithm 1", "", load_line() + f"; median of {reps} runs, one thread.", ""]

    def timed(D, n, seed):
        X = signals(D, n, "bg", seed, probability=0.7)
        times = []
        for r in range(reps):
            t = time.perf_counter()
            sharpness_test(D, X, random_state=r)
            times.append(time.perf_counter() - t)
        return float(np.median(times))

    ns = np.arange(500, 5001, 500)
    t_n = np.array([timed(D20, n, int(n)) for n in ns])
    ps = np.arange(5, 51, 5)
    t_p = np.array([timed(make_collinear_dictionary(int(p), 0.5), 400, int(p)) for p in ps])
    slope, intercept = np.polyfit(ns, t_n, 1)
    r2 = 1 - np.sum((t_n - (slope * ns + intercept)) ** 2) / np.sum((t_n - t_n.mean()) ** 2)
    exponent = np.polyfit(np.log(ps), np.log(t_p), 1)[0]
    exponent10 = np.polyfit(np.log(ps[ps >= 10]), np.log(t_p[ps >= 10]), 1)[0]
    lines += ["| n (p = 20) | seconds |", "|---:|---:|"] + [f"| {n} | {t:.4f} |" for n, t in zip(ns, t_n)]
    lines += ["", f"Linear fit in n: R^2 = {r2:.3f}.", "", "| p (n = 400) | seconds |", "|---:|---:|"]
    lines += [f"| {p} | {t:.4f} |" for p, t in zip(ps, t_p)]
    lines += ["", f"log-log slope in p: {exponent:.2f} over p = 5..50, {exponent10:.2f} over p = 10..50 (thesis: "
              "quadratic, O(n p^2) per test when the BFGS iterations per row stay bounded).", ""]
    print("\n".join(lines))

    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    a.plot(ns, t_n, "o-")
    a.set(xlabel="n", ylabel="seconds", title="Algorithm 1, p = 20")
    b.plot(ps, t_p, "o-")
    b.set(xlabel="p", ylabel="seconds", title="Algorithm 1, n = 400")
    save(fig, DOCS / "dlbcd_fig5_1.png", dpi=110)
    lines += ["![Fig. 5.1](dlbcd_fig5_1.png)"]
    write_section(RESULTS, "fig5_1", lines)


# ---- Fig. 5.3 ------------------------------------------------------------------------------------

FIG5_3_PAPER = {12: 253, 16: 316, 20: 375}


def n_at_half(ns, hits, reps):
    """n where a logistic regression of success on n crosses 1/2 (unpenalised maximum likelihood)."""
    from sklearn.linear_model import LogisticRegression

    x = np.repeat(ns, reps).astype(float)
    y = np.concatenate([[1] * h + [0] * (reps - h) for h in hits])
    if y.min() == y.max():
        return float("nan"), None
    scale = 100.0
    model = LogisticRegression(C=1e6, max_iter=1000).fit(x[:, None] / scale, y)
    a, b = model.coef_[0, 0] / scale, model.intercept_[0]
    return -b / a, (a, b)


def fig5_3(reps):
    ns = np.arange(50, 1001, 50)
    lines = ["## Fig. 5.3: sample size at which D* is declared sharp", "",
             load_line() + f"; {reps} repetitions per n (the thesis: 20), rho = 0.01, T = 1e-6.", "",
             "Settings of the reference script (s = p/2, mu = ((p - s)/(p - 1) - 0.2)/sqrt(s)).", "",
             "| p | s | mu | n at 50% (pyinterp) | thesis | ratio |", "|---:|---:|---:|---:|---:|---:|"]
    curves = {}
    t0 = time.perf_counter()
    for p, paper in FIG5_3_PAPER.items():
        s = round(p / 2)
        mu = ((p - s) / (p - 1) - 0.2) / np.sqrt(s)
        D = make_collinear_dictionary(p, mu)
        hits = [sum(sharpness_test(D, signals(D, int(n), "sg", 1000 * r + int(n), sparsity=s), random_state=r)[0]
                    for r in range(reps)) for n in ns]
        n50, fit = n_at_half(ns, hits, reps)
        curves[p] = (hits, fit)
        lines.append(f"| {p} | {s} | {mu:.4f} | {n50:.0f} | {paper} | {n50 / paper:.2f} |")
        print(lines[-1], f"({time.perf_counter() - t0:.0f} s)", flush=True)
    lines += ["", "Share declared sharp per n:", "", "| n | " + " | ".join(f"p = {p}" for p in curves) + " |",
              "|---:|" + "---:|" * len(curves)]
    lines += [f"| {n} | " + " | ".join(f"{curves[p][0][i] / reps:.2f}" for p in curves) + " |"
              for i, n in enumerate(ns)]
    # the thesis text's setting: Corollary 4.1.1 fails (mu sqrt(s) > (p - s)/(p - 1)), never sharp
    lines += ["", "The thesis text's setting (s = 5, mu = 0.5; mu sqrt(s) = 1.12 > (p - s)/(p - 1), Corollary "
              "4.1.1 fails):", "", "| p | n | share sharp |", "|---:|---:|---:|"]
    for p in FIG5_3_PAPER:
        D = make_collinear_dictionary(p, 0.5)
        for n in (400, 1000):
            share = np.mean([sharpness_test(D, signals(D, n, "sg", 7 * r + n, sparsity=5), random_state=r)[0]
                             for r in range(5)])
            lines.append(f"| {p} | {n} | {share:.2f} |")
    print("\n".join(lines))

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    grid = np.linspace(0, 1000, 400)
    for p, (hits, fit) in curves.items():
        (line,) = ax.plot(ns, np.array(hits) / reps, "o", label=f"p = {p}")
        if fit is not None:
            ax.plot(grid, 1 / (1 + np.exp(-(fit[0] * grid + fit[1]))), color=line.get_color())
    ax.set(xlabel="n", ylabel="share declared sharp", title="Algorithm 1 on D* (Fig. 5.3)")
    ax.legend()
    save(fig, DOCS / "dlbcd_fig5_3.png", dpi=110)
    lines += ["", "![Fig. 5.3](dlbcd_fig5_3.png)"]
    write_section(RESULTS, "fig5_3", lines)


# ---- single-run recovery ---------------------------------------------------------------------------


def single_run(reps):
    p, mu, s, n = 10, 0.7, 4, 400
    D = make_collinear_dictionary(p, mu)
    stats = {}
    for init in ("l1", "random"):
        ok, sweeps, seconds = 0, [], []
        for r in range(reps):
            X = signals(D, n, "sg", 10 * r, sparsity=s)
            t = time.perf_counter()
            est = DLBCD(tau=0.5, init=init, noise=0, random_state=r).fit(X)
            seconds.append(time.perf_counter() - t)
            ok += dictionary_recovered(est.components_, D)
            sweeps.append(est.n_iter_)
        stats[init] = (ok, sweeps, seconds)
    lines = ["## Single-run recovery (p = 10, mu = 0.7, SG(4), n = 400, tau = 0.5)", "", load_line() + ".", "",
             "| init | recovered | thesis | mean sweeps (tau stage) | mean seconds per fit |",
             "|---|---:|---:|---:|---:|"]
    for init, paper in (("l1", 70), ("random", 5)):
        ok, sweeps, seconds = stats[init]
        lines.append(f"| {init} | {ok}/{reps} | {paper}/100 | {np.mean(sweeps):.1f} | {np.mean(seconds):.3f} |")
    print("\n".join(lines))

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    top = max(max(v[1]) for v in stats.values())
    for init, (ok, sweeps, _) in stats.items():
        ax.hist(sweeps, bins=np.arange(0.5, top + 1.5), alpha=0.6, label=f"{init}: {ok}/{reps} recovered")
    ax.set(xlabel="sweeps of the tau = 0.5 stage", ylabel="data sets", title="DL-BCD single runs (Figs 5.5-5.6)")
    ax.legend()
    save(fig, DOCS / "dlbcd_single_run.png", dpi=110)
    lines += ["", "![single runs](dlbcd_single_run.png)"]
    write_section(RESULTS, "single_run", lines)


# ---- Fig. 5.10 -----------------------------------------------------------------------------------


def fig5_10(grid_p, reps, s_step):
    """The resumable grid, run by its own driver (1 process, 1 thread): fits what its results file
    lacks, then reports."""
    subprocess.run([sys.executable, str(BENCH / "dlbcd_grid.py"), "run", "--grid-p", *map(str, grid_p),
                    "--reps", str(reps), "--s-step", str(s_step)], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["fig5_1", "fig5_3", "single_run", "fig5_10"],
                        choices=["fig5_1", "fig5_3", "single_run", "fig5_10"])
    parser.add_argument("--reps", type=int, default=None, help="repetitions (defaults: 3, 20, 100, 10 by part)")
    parser.add_argument("--grid-p", type=int, nargs="+", default=list(range(2, 21)))
    parser.add_argument("--s-step", type=int, default=1)
    args = parser.parse_args()
    DOCS.mkdir(exist_ok=True)
    for part in args.parts:
        t = time.perf_counter()
        if part == "fig5_1":
            fig5_1(args.reps or 3)
        elif part == "fig5_3":
            fig5_3(args.reps or 20)
        elif part == "single_run":
            single_run(args.reps or 100)
        else:
            fig5_10(args.grid_p, args.reps or 10, args.s_step)
        print(f"[{part}: {time.perf_counter() - t:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
