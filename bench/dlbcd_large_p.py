"""A full DL-BCD fit above p = 200, where the subproblems switch to L-BFGS (10 pairs), against the
same fit forced to dense BFGS (lbfgs_memory=0): seconds, sweeps, final objective, NMSE to D* and
peak memory. Each fit runs in its own process so that its peak resident set size is its own.

    python bench/dlbcd_large_p.py [--p 250] [--n 1000] [--s 5] [--solvers lbfgs dense] [--write]

--write puts the table in docs/results/dlbcd_results.md (section large_p).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource

import numpy as np
from benchkit.data import gaussian_dictionary_problem
from benchkit.paths import DOCS
from benchkit.sections import write_section
from benchkit.timing import Timer, load

from pyinterp import DLBCD
from pyinterp.metrics import dictionary_nmse


def fit_once(p, n, s, lbfgs_memory, queue):
    D, X = gaussian_dictionary_problem(p, n, s, seed=p)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    with Timer() as timer:
        est = DLBCD(tau=0.5, init="l1", n_restarts=1, lbfgs_memory=lbfgs_memory, noise=0, random_state=0, n_jobs=1).fit(X)
    history = est.objective_history_
    queue.put(dict(wall=timer.wall, cpu=timer.cpu, n_iter=est.n_iter_, n_iter_l1=len(est.l1_objective_history_) - 1,
                   objective=est.objective_, monotone=bool(np.all(np.diff(history) <= 0)),
                   unit=float(np.abs(np.linalg.norm(est.components_, axis=0) - 1).max()),
                   nmse=float(dictionary_nmse(est.components_, D)), rss_before=rss_before,
                   rss_peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))


SOLVERS = {"lbfgs": ("L-BFGS, 10 pairs (default above p = 200)", None), "dense": ("dense BFGS (lbfgs_memory=0)", 0)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=250)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--s", type=int, default=5)
    parser.add_argument("--solvers", nargs="+", choices=list(SOLVERS), default=list(SOLVERS))
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    load_start = load()
    rows = {}
    for label, memory in (SOLVERS[name] for name in args.solvers):
        queue = ctx.Queue()
        child = ctx.Process(target=fit_once, args=(args.p, args.n, args.s, memory, queue))
        child.start()
        rows[label] = queue.get()
        child.join()
        print(label, rows[label], flush=True)
    lines = [f"## A full fit above the L-BFGS switch (p = {args.p})", "",
             f"`python bench/dlbcd_large_p.py --p {args.p} --n {args.n} --s {args.s} --solvers {' '.join(args.solvers)}`: random Gaussian D*, SG({args.s}), "
             f"n = {args.n}, SNR 100; DLBCD(tau=0.5, init='l1', n_restarts=1, noise=0, n_jobs=1), each fit in its own process. "
             f"Load average {load_start:.2f} at the start, {load():.2f} at the end ({os.cpu_count()} CPUs; "
             "another long job of this project ran on one core meanwhile).", "",
             "| subproblem solver | wall s | CPU s | sweeps (l1 stage + tau stage) | final objective | objective "
             "never increased | max abs(norm - 1) | NMSE to D* | peak RSS (MiB) | peak RSS growth during the fit (MiB) |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for label, r in rows.items():
        lines.append(f"| {label} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['n_iter_l1']} + {r['n_iter']} | "
                     f"{r['objective']:.10g} | {r['monotone']} | {r['unit']:.1e} | {r['nmse']:.2e} | "
                     f"{r['rss_peak'] / 1024:.0f} | {(r['rss_peak'] - r['rss_before']) / 1024:.1f} |")
    if len(rows) == 2:
        lbfgs, dense = rows.values()
        lines += ["", f"CPU time L-BFGS / dense: {lbfgs['cpu'] / dense['cpu']:.2f}; relative objective difference "
                  f"{(lbfgs['objective'] - dense['objective']) / dense['objective']:.2e}."]
    print("\n".join(lines))
    if args.write:
        write_section(DOCS / "dlbcd_results.md", "large_p", lines)


if __name__ == "__main__":
    main()
