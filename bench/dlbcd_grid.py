"""Fig. 5.10 of thesis 000 as a resumable grid: recovery rate over (p, s), n = 100 p, SNR 100, random
Gaussian D*, success = NMSE < 0.01, for DL-BCD tau = 0.5 (two-stage init) and tau = inf (orthogonal
init), 3 restarts each as in the thesis, against scikit-learn's DictionaryLearning (coordinate
descent, 200 iterations) and SPAMS trainDL (spams-bin, when installed; 1000 iterations as in the
thesis), each peer fitted at the l1 weights PEER_LAMBDAS and counted a success when one fit succeeds.

Every outcome is appended as one JSON line to RESULTS_FILE, keyed by (p, s, rep, method). The data
of a repetition depend only on (p, s, rep) (seed_of), so reruns skip what the file holds (but for
noise-stage fits of an earlier choice between the stage's starts: `current`) and the grid
accumulates across sessions, in any order or subset; a single-process run also skips what another
process writes to the same file while it runs. A run goes repetition by repetition over the
whole grid (rep 0 of every cell, then rep 1, ...): stopped at any point, every cell has about the
same number of repetitions. SIGTERM or Ctrl-C stops it; every finished fit is kept.

Two savings that leave every method's outcome unchanged (check-cell verifies both on one cell):
the tau = inf result is the first stage of the tau = 0.5 fit (DLBCD.l1_components_, bit-identical to
DLBCD(tau=inf, init="orth") with the same seeds), and a peer's second l1 weight is not fitted when
the first already succeeded.

    python bench/dlbcd_grid.py run --reps 10              # p = 2..20, s = 2..p, 1 process, 1 thread
    python bench/dlbcd_grid.py run --reps 10 --workers 2  # two processes
    python bench/dlbcd_grid.py report                      # docs section and plot from the file
    python bench/dlbcd_grid.py --results bench/results_data/dlbcd_cell_2_2.jsonl run --grid-p 2 --reps 100
                                                           # one cell widened, in its own file (tables printed only)
    python bench/dlbcd_grid.py noise-stage --workers 2     # DL-BCD's noise stage where a peer won
    python bench/dlbcd_grid.py noise-report                # its docs section
    python bench/dlbcd_grid.py check-cell 20 10 0          # old vs new protocol on one cell
    python bench/dlbcd_grid.py noise-check 8,2 17,3        # DL-BCD on those cells at the reference code's 100 dB
    python bench/dlbcd_grid.py weight-check 4,2 20,12      # the peers there at the reference code's l1 weight
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from benchkit.data import gaussian_dictionary_problem
from benchkit.paths import DOCS, RESULTS_DATA, ROOT
from benchkit.peers import optional, sklearn_dictionary, spams_dictionary
from benchkit.plotting import pyplot, save
from benchkit.sections import write_section
from benchkit.timing import Timer, load, load_line

from pyinterp import DLBCD
from pyinterp.datasets import make_gaussian_dictionary
from pyinterp.metrics import dictionary_nmse

RESULTS_FILE = RESULTS_DATA / "dlbcd_fig5_10.jsonl"  # committed: the grid accumulates across sessions
SUCCESS_NMSE = 0.01
TAU = 0.5
# E||D a|| / E||eps|| as the thesis text defines it (section 5.3; "40 dB"). The reference code behind its
# figures (simulation/trial_DL_new.m) sets the noise power to 10^(-SNR/10) of the signal's with SNR = 100,
# i.e. 100 dB, an amplitude ratio of 1e5: that is REFERENCE_CODE_SNR (see noise-check).
SNR = 100
REFERENCE_CODE_SNR = 1e5
# Sparse cells are split by the condition number of D* at these edges in the report: the coefficients
# D^{-1} x carry the noise amplified by up to cond(D*).
COND_EDGES = (0, 20, 40, 80, np.inf)
RESTARTS = 3
# The peers' l1 weight (per signal, as both write their objective). The thesis gives 0.1/sqrt(N); its
# reference code uses N = p, the number of atoms (weight-check compares it with these on chosen cells).
# Each peer is fitted at these values and scored by its best fit -- an oracle choice in its favour.
PEER_LAMBDAS = (0.1, 1.0)
DLBCD_TAU, DLBCD_INF, SKLEARN, SPAMS = "DL-BCD tau=0.5", "DL-BCD tau=inf", "sklearn DictionaryLearning", "SPAMS trainDL"
# DL-BCD tau = 0.5 followed by its noise stage (DLBCD(noise="auto"), the default since the grid's first four
# sessions, which ran Algorithm 2 alone: noise=0). Fitted by `noise-stage` on chosen cells only.
DLBCD_NOISE = "DL-BCD tau=0.5 + noise stage"
# How the noise stage picks between its debiased starts, recorded with each of its fits: records without
# it were fitted when the stage kept the start needing the fewest pursuit atoms ("fewest atoms"), records
# with "penalised misfit" when it had two starts only (no light-penalty third start when they disagree).
SELECTION = "penalised misfit, third start on disagreement, near ties polished (50 + 350 MOD steps)"
GRID_METHODS = (DLBCD_TAU, DLBCD_INF, SKLEARN, SPAMS)


def seed_of(p, s, rep):
    """The data seed of one repetition of cell (p, s): distinct for s < 100, rep < 1000."""
    return (100 * p + s) * 1000 + rep


def reference_dictionary(p, s, rep):
    return make_gaussian_dictionary(p, random_state=seed_of(p, s, rep))


def make_data(p, s, rep, snr=SNR):
    return gaussian_dictionary_problem(p, 100 * p, s, seed_of(p, s, rep), snr=snr)


def nmse(E, D):
    return float(dictionary_nmse(E / np.linalg.norm(E, axis=0), D))


def methods_available():
    return [DLBCD_TAU, DLBCD_INF, SKLEARN] + ([SPAMS] if optional("spams") else [])


# ---- the fits ---------------------------------------------------------------------------------------


def fit_dlbcd_two_stage(X, rep, threads, noise=0):
    """The DL-BCD results of one two-stage fit: (tau = 0.5 dictionary, tau = inf dictionary) and,
    with noise="auto", the fitted estimator last (its components_ are the noise stage's)."""
    est = DLBCD(tau=TAU, init="l1", n_restarts=RESTARTS, noise=noise, random_state=rep, n_jobs=threads).fit(X)
    return (est.dlbcd_components_, est.l1_components_) + ((est,) if noise else ())


PEERS = {SKLEARN: sklearn_dictionary, SPAMS: spams_dictionary}


def fit_peer(name, X, D, rep, *, skip_after_success=True):
    """NMSE per l1 weight (in PEER_LAMBDAS order, stopping at the first success unless told not to), and the Timer."""
    out = {}
    with Timer() as timer:
        for lam in PEER_LAMBDAS:
            out[str(lam)] = nmse(PEERS[name](X, D.shape[0], rep, lam), D)
            if skip_after_success and out[str(lam)] < SUCCESS_NMSE:
                break
    return out, timer


def run_unit(p, s, rep, methods, threads):
    """Records for the given methods on repetition rep of cell (p, s)."""
    D, X = make_data(p, s, rep)
    base = dict(p=p, s=s, rep=rep, seed=seed_of(p, s, rep), load=round(load(), 2), threads=threads)
    records = []
    if DLBCD_NOISE in methods:
        with Timer() as timer:
            _, _, est = fit_dlbcd_two_stage(X, rep, threads, noise="auto")
        value = nmse(est.components_, D)
        records.append(dict(base, method=DLBCD_NOISE, nmse=value, success=value < SUCCESS_NMSE, seconds=timer.wall,
                            cpu_seconds=timer.cpu, dlbcd_nmse=nmse(est.dlbcd_components_, D), noise=est.noise_,
                            start=est.noise_start_, cond=float(np.linalg.cond(D)), selection=SELECTION))
    if DLBCD_TAU in methods or DLBCD_INF in methods:
        with Timer() as timer:
            E_tau, E_inf = fit_dlbcd_two_stage(X, rep, threads)
        for name, E, t in ((DLBCD_TAU, E_tau, timer), (DLBCD_INF, E_inf, None)):
            if name in methods:
                value = nmse(E, D)
                records.append(dict(base, method=name, nmse=value, success=value < SUCCESS_NMSE,
                                    seconds=t and t.wall, cpu_seconds=t and t.cpu))
    for name in PEERS:
        if name in methods:
            per_lambda, t = fit_peer(name, X, D, rep)
            value = min(per_lambda.values())
            records.append(dict(base, method=name, nmse=value, success=value < SUCCESS_NMSE, seconds=t.wall,
                                cpu_seconds=t.cpu, nmse_per_lambda=per_lambda))
    return records


def _run_unit_star(args):
    return run_unit(*args)


# ---- the results file --------------------------------------------------------------------------------


def load_records(path=RESULTS_FILE):
    """The file's records, later ones replacing earlier ones with the same key; a torn last line is skipped."""
    records = {}
    if path.exists():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                print(f"{path.name}:{number}: skipping an unreadable line")
                continue
            records[r["p"], r["s"], r["rep"], r["method"]] = r
    return records


def append_records(records, path=RESULTS_FILE):
    """Appends whole lines: a stop signal arriving meanwhile waits until they are on disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stops = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        with path.open("a") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
            f.flush()
            os.fsync(f.fileno())
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)


def cells_of(grid_p, s_step=1):
    return [(p, s) for p in grid_p for s in range(2, p + 1, s_step)]


def current(records):
    """The keys of the records today's code would not change: all but the noise-stage fits of an earlier
    choice between the stage's starts (refitted; where the stage did not run the choice never arose)."""
    return {k for k, r in records.items()
            if k[3] != DLBCD_NOISE or r["start"] is None or r.get("selection") == SELECTION}


def pending_units(cells, reps, methods, done):
    """(p, s, rep, missing methods), repetition-major so that every cell gains a repetition in turn."""
    done = current(done)
    units = []
    for rep in range(reps):
        for p, s in cells:
            missing = [m for m in methods if (p, s, rep, m) not in done]
            if missing:
                units.append((p, s, rep, missing))
    return units


def still_missing(jobs, path):
    """Drops, just before each fit, what another process has meanwhile added to the file."""
    for p, s, rep, missing, threads in jobs:
        done = current(load_records(path))
        missing = [m for m in missing if (p, s, rep, m) not in done]
        if missing:
            yield p, s, rep, missing, threads


def _stop(signum, frame):
    raise KeyboardInterrupt


def run(cells, reps, workers, threads, path=RESULTS_FILE, methods=None):
    if methods is None:
        methods = methods_available()
        if SPAMS not in methods:
            print("spams not installed: SPAMS left out")
    units = pending_units(cells, reps, methods, load_records(path))
    print(f"{len(units)} (p, s, rep) units to fit, {workers} process(es), {threads} thread(s) per DL-BCD fit",
          flush=True)
    signal.signal(signal.SIGTERM, _stop)
    t0, finished = time.perf_counter(), 0
    jobs = [(p, s, rep, missing, threads) for p, s, rep, missing in units]
    pool = multiprocessing.get_context("spawn").Pool(workers) if workers > 1 else None
    try:
        results = pool.imap(_run_unit_star, jobs) if pool else map(_run_unit_star, still_missing(jobs, path))
        for records in results:
            append_records(records, path)
            finished += 1
            r = records[0]
            print(f"rep {r['rep']} p = {r['p']:2d}, s = {r['s']:2d}: "
                  + ", ".join(f"{x['method']} {x['nmse']:.2g}" for x in records)
                  + f" ({time.perf_counter() - t0:.0f} s, {finished}/{len(units)})", flush=True)
    except KeyboardInterrupt:
        print(f"stopped after {finished} of {len(units)} units; finished fits are kept in {path}", flush=True)
    finally:
        if pool:
            pool.terminate()
            pool.join()
    return finished


# ---- the report ----------------------------------------------------------------------------------------


def summarise(records, methods=GRID_METHODS):
    """Per cell the repetitions every method has (complete reps), and per method the rate over them."""
    methods = [m for m in methods if any(k[3] == m for k in records)]
    reps_by = defaultdict(set)
    for p, s, rep, m in records:
        reps_by[p, s, m].add(rep)
    cells = sorted({(p, s) for p, s, _, _ in records})
    complete = {c: set.intersection(*(reps_by[c + (m,)] for m in methods)) for c in cells}
    complete = {c: sorted(r) for c, r in complete.items() if r}
    rates = {m: {c: np.mean([records[c + (r, m)]["success"] for r in reps]) for c, reps in complete.items()}
             for m in methods}
    return methods, complete, rates


def shown_path(path):
    path = path.resolve()
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def report(records, path=RESULTS_FILE):
    records = {k: r for k, r in records.items() if k[3] in GRID_METHODS}
    methods, complete, rates = summarise(records)
    cells = sorted(complete)
    if not cells:
        print("no complete repetitions in the results file yet")
        return
    n_reps = np.array([len(complete[c]) for c in cells])
    histogram = ", ".join(f"{np.sum(n_reps == k)} cells with {k}" for k in np.unique(n_reps))
    loads = [r["load"] for r in records.values()]
    threads = sorted({r["threads"] for r in records.values()})
    grid_p = sorted({p for p, _ in cells})
    lines = ["## Fig. 5.10: recovery rate over (p, s)", "",
             f"Generated by `bench/dlbcd_grid.py report` from `{shown_path(path)}` ({len(records)} fits). "
             f"{len(cells)} cells (p in {grid_p[0]}..{grid_p[-1]}, s = 2..p); repetitions per cell (the thesis: 100; "
             f"only repetitions every method finished count): {histogram}. n = 100 p, SNR {SNR:g} (E||D a|| / "
             f"E||eps||, the thesis text's definition), random Gaussian D*; "
             f"success = NMSE < {SUCCESS_NMSE}. DL-BCD: {RESTARTS} restarts; tau = inf is the first stage of the "
             f"tau = 0.5 fit (identical to fitting it alone), and its seconds are counted in the tau = 0.5 fit. The "
             f"peers are fitted with l1 weights {list(PEER_LAMBDAS)} (the second only when the first fails) and "
             f"succeed when either fit does (oracle tuning). One-minute load average at the start of the fits: "
             f"{min(loads):.2f} to {max(loads):.2f}, median {np.median(loads):.2f} ({os.cpu_count()} CPUs); DL-BCD "
             f"threads: {threads}.",
             "", "| method | cells with rate >= 0.5 | mean rate | fits | wall seconds | CPU seconds | CPU seconds per fit |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for m in methods:
        values = np.array([rates[m][c] for c in cells])
        timed = [r for r in records.values() if r["method"] == m and r["seconds"] is not None]
        wall = f"{sum(r['seconds'] for r in timed):.0f}" if timed else "(in tau=0.5)"
        cpu = [r["cpu_seconds"] for r in timed]
        cpu_cols = f"{sum(cpu):.0f} | {np.mean(cpu):.2f}" if cpu else "(in tau=0.5) | -"
        n_fits = sum(r["method"] == m for r in records.values())
        lines.append(f"| {m} | {np.sum(values >= 0.5)}/{len(cells)} | {values.mean():.2f} | {n_fits} | {wall} | {cpu_cols} |")

    ref = DLBCD_TAU
    lines += ["", f"Head to head with {ref}, cell by cell (rates over the same repetitions):", "",
              "| method | cells where tau=0.5 is higher | equal | lower | lower by one success | lower, sparse "
              "(s <= p/3) | in its region (>= 0.5) but not in tau=0.5's | in tau=0.5's region but not in its |",
              "|---|---:|---:|---:|---:|---:|---|---|"]
    is_sparse = np.array([3 * s <= p for p, s in cells])
    for m in methods:
        if m == ref:
            continue
        a = np.array([rates[ref][c] for c in cells])
        b = np.array([rates[m][c] for c in cells])
        lower = a < b
        by_one = lower & np.isclose((b - a) * n_reps, 1)
        only_peer = [f"({p}, {s})" for (p, s), x, y in zip(cells, a, b) if y >= 0.5 > x]
        lines.append(f"| {m} | {np.sum(a > b)} | {np.sum(a == b)} | {np.sum(lower)} | {np.sum(by_one)} | "
                     f"{np.sum(lower & is_sparse)} | {' '.join(only_peer) or '-'} | {np.sum((a >= 0.5) & (b < 0.5))} cells |")

    lines += ["", "Largest s with rate >= 0.5 per p (the edge of each success region; '-' if none):", "",
              "| p | " + " | ".join(methods) + " |", "|---:|" + "---:|" * len(methods)]
    for p in grid_p:
        row = []
        for m in methods:
            good = [s for (q, s) in cells if q == p and rates[m][q, s] >= 0.5]
            row.append(str(max(good)) if good else "-")
        lines.append(f"| {p} | " + " | ".join(row) + " |")

    lines += ["", "Sparse cells (s <= p/3) by the condition number of D*: success rate over their repetitions "
              "(DL-BCD minimises the l1 norm of D^{-1} x, whose noise grows with cond(D*); the peers fit x ~ D a "
              "and do not invert D):", "",
              "| cond(D*) | data sets | " + " | ".join(methods) + " |", "|---|---:|" + "---:|" * len(methods)]
    sparse = [(p, s, r) for (p, s), keep in zip(cells, is_sparse) if keep for r in complete[p, s]]
    conds = np.array([np.linalg.cond(reference_dictionary(*key)) for key in sparse])
    for lo, hi in zip(COND_EDGES[:-1], COND_EDGES[1:]):
        keys = [key for key, c in zip(sparse, conds) if lo <= c < hi]
        if keys:
            rates_here = [np.mean([records[key + (m,)]["success"] for key in keys]) for m in methods]
            lines.append(f"| [{lo:g}, {hi:g}) | {len(keys)} | " + " | ".join(f"{v:.2f}" for v in rates_here) + " |")

    s_max = max(grid_p)
    for m in methods:
        lines += ["", f"{m}: rate per cell (rows p, columns s; blank: no complete repetition)", "",
                  "| p \\ s | " + " | ".join(str(s) for s in range(2, s_max + 1)) + " |",
                  "|---:|" + "---:|" * (s_max - 1)]
        for p in grid_p:
            row = [f"{rates[m][p, s]:.1f}" if (p, s) in complete else "" for s in range(2, s_max + 1)]
            lines.append(f"| {p} | " + " | ".join(row) + " |")
    print("\n".join(lines))
    if Path(path).resolve() != RESULTS_FILE.resolve():  # another file (one cell widened): printed only
        return

    plt = pyplot()
    from matplotlib.ticker import MaxNLocator  # after pyplot(), which picks the backend

    fig, axes = plt.subplots(1, len(methods), figsize=(3.2 * len(methods), 3.4), sharey=True)
    top = max(grid_p)
    for ax, m in zip(np.atleast_1d(axes), methods):
        image = np.full((top + 1, top + 1), np.nan)
        for (p, s), v in rates[m].items():
            image[p, s] = v
        ax.imshow(image, origin="lower", vmin=0, vmax=1, cmap="viridis_r")
        ax.set(title=m, xlabel="s", xlim=(1.5, top + 0.5), ylim=(min(grid_p) - 0.5, top + 0.5))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    np.atleast_1d(axes)[0].set_ylabel("p")
    reps_shown = f"{n_reps.min()}" if n_reps.min() == n_reps.max() else f"{n_reps.min()} to {n_reps.max()}"
    fig.suptitle(f"Recovery rate (dark = 1); repetitions per cell: {reps_shown}", fontsize=9)
    save(fig, DOCS / "dlbcd_fig5_10.png", dpi=110, bbox_inches="tight")
    lines += ["", "![Fig. 5.10](dlbcd_fig5_10.png)"]
    write_section(DOCS / "dlbcd_results.md", "fig5_10", lines)


# ---- the noise stage -----------------------------------------------------------------------------------


def peer_won_cells(records):
    """Cells where scikit-learn's or SPAMS' rate is above DL-BCD tau = 0.5's (Algorithm 2 alone)."""
    methods, complete, rates = summarise({k: r for k, r in records.items() if k[3] in GRID_METHODS})
    peers = [m for m in (SKLEARN, SPAMS) if m in methods]
    return [c for c in sorted(complete) if any(rates[m][c] > rates[DLBCD_TAU][c] for m in peers)]


def selection_line(cells, keys, records):
    """Which cells' noise-stage fits used today's choice between the stage's starts (SELECTION)."""
    def criterion(k):
        record = records[k + (DLBCD_NOISE,)]
        # where the stage did not run the choice never arose: any code gives the same result
        return SELECTION if record["start"] is None else record.get("selection", "fewest atoms")
    old = [c for c in cells if any(criterion(k) != SELECTION for k in keys[c])]
    if not old:
        return f"The stage chose between its starts by {SELECTION} in every cell."
    earlier = sorted({criterion(k) for c in old for k in keys[c]} - {SELECTION})
    return (f"The stage chose between its starts by {SELECTION} in {len(cells) - len(old)} cells; the other "
            f"{len(old)} hold fits of an earlier choice ({'; '.join(earlier)}), not refitted: {' '.join(map(str, old))}.")


def noise_report(records, path=RESULTS_FILE):
    """The noise stage beside Algorithm 2 alone and the peers, on the cells it was fitted on."""
    peers = [m for m in (SKLEARN, SPAMS) if any(k[3] == m for k in records)]
    methods = [DLBCD_TAU, DLBCD_NOISE] + peers
    # columns: (label, success of a data set (p, s, rep))
    columns = [(f"{DLBCD_TAU} (grid)", lambda k: records[k + (DLBCD_TAU,)]["success"]),
               (f"{DLBCD_TAU} (stage's input)", lambda k: records[k + (DLBCD_NOISE,)]["dlbcd_nmse"] < SUCCESS_NMSE),
               (DLBCD_NOISE, lambda k: records[k + (DLBCD_NOISE,)]["success"])]
    columns += [(m, lambda k, m=m: records[k + (m,)]["success"]) for m in peers]

    def recovered(keys):
        return [sum(bool(success(k)) for k in keys) for _, success in columns]

    cells = sorted({(p, s) for p, s, _, m in records if m == DLBCD_NOISE})
    keys = {c: [c + (r,) for r in range(1000) if all(c + (r, m) in records for m in methods)] for c in cells}
    cells = [c for c in cells if keys[c]]
    if not cells:
        print("no noise-stage results yet")
        return
    every = [k for c in cells for k in keys[c]]
    fits = [records[k + (DLBCD_NOISE,)] for k in every]
    same = sum(f["dlbcd_nmse"] == records[k + (DLBCD_TAU,)]["nmse"] for k, f in zip(every, fits))
    same_outcome = sum((f["dlbcd_nmse"] < SUCCESS_NMSE) == records[k + (DLBCD_TAU,)]["success"] for k, f in zip(every, fits))
    loads = [f["load"] for f in fits]
    per_cell = {c: recovered(keys[c]) for c in cells}
    behind = [c for c, n in per_cell.items() if peers and n[2] < max(n[3:])]
    header = "| | data sets | " + " | ".join(label for label, _ in columns) + " |"
    rule = "|---|---:|" + "---:|" * len(columns)
    lines = ["## Noise: DL-BCD's noise stage on the cells a peer won", "",
             f"Generated by `bench/dlbcd_grid.py noise-report` from `{shown_path(path)}`: the Fig. 5.10 cells "
             f"(SNR {SNR:g}, the thesis' 40 dB) where scikit-learn or SPAMS had a higher rate than DL-BCD tau = 0.5 "
             f"alone, refitted with `DLBCD(noise=\"auto\")` on the same data and seeds; {len(cells)} cells, "
             f"{len(every)} data sets; success = NMSE < {SUCCESS_NMSE}. \"Stage's input\" is the same fit's "
             f"`dlbcd_components_` (Algorithm 2 alone with today's code); it has the NMSE the grid recorded in "
             f"{same} of {len(every)} data sets (the grid's sessions ran earlier versions of the core) and the same "
             f"outcome in {same_outcome}. The stage kept the lasso start in {sum(f['start'] == 'lasso' for f in fits)} "
             f"data sets, the light-penalty start in {sum(f['start'] == 'light' for f in fits)} and DL-BCD's "
             f"dictionary in {sum(f['start'] == 'dlbcd' for f in fits)}, and did not run in "
             f"{sum(f['start'] is None for f in fits)} (no noise level: codes without zeros). "
             f"{selection_line(cells, keys, records)} CPU seconds per fit with the stage "
             f"{np.mean([f['cpu_seconds'] for f in fits if f.get('selection') == SELECTION] or [np.nan]):.2f} "
             f"(fits with today's selection), Algorithm 2 alone in the grid "
             f"{np.mean([records[k + (DLBCD_TAU,)]['cpu_seconds'] for k in every]):.2f}. Load average at the start "
             f"of the fits {min(loads):.2f} to {max(loads):.2f} ({os.cpu_count()} CPUs).", "",
             f"Cells where the noise stage recovers fewer data sets than a peer: "
             f"{' '.join(map(str, behind)) or 'none'} (of {len(cells)}).", "",
             header, rule, f"| all cells | {len(every)} | " + " | ".join(map(str, recovered(every))) + " |"]
    conds = {k: records[k + (DLBCD_NOISE,)]["cond"] for k in every}
    for lo, hi in zip(COND_EDGES[:-1], COND_EDGES[1:]):
        here = [k for k in every if lo <= conds[k] < hi]
        if here:
            lines.append(f"| cond(D*) in [{lo:g}, {hi:g}) | {len(here)} | " + " | ".join(map(str, recovered(here))) + " |")
    lines += ["", "Per cell (data sets recovered; bold where the noise stage is below a peer):", "",
              header.replace("| |", "| (p, s) |", 1).replace("data sets", "reps", 1), rule]
    for c in cells:
        shown = [str(v) for v in per_cell[c]]
        if c in behind:
            shown[2] = f"**{shown[2]}**"
        lines.append(f"| {c} | {len(keys[c])} | " + " | ".join(shown) + " |")
    print("\n".join(lines))
    write_section(DOCS / "dlbcd_results.md", "noise", lines)


# ---- one cell, old protocol against the new ------------------------------------------------------------


def check_cell(p, s, rep, threads):
    """Fits every method as before (tau = inf on its own, both peer weights always) and as run() does;
    asserts identical outcomes and prints the seconds of each."""
    D, X = make_data(p, s, rep)
    print(f"cell p = {p}, s = {s}, rep {rep}; {load_line()}; {threads} thread(s)")
    old, new = {}, {}
    with Timer() as old[DLBCD_TAU]:
        tau_alone = DLBCD(tau=TAU, init="l1", n_restarts=RESTARTS, random_state=rep, n_jobs=threads).fit(X).components_
    with Timer() as old[DLBCD_INF]:
        inf_alone = DLBCD(tau=np.inf, init="orth", n_restarts=RESTARTS, random_state=rep, n_jobs=threads).fit(X).components_
    with Timer() as new[DLBCD_TAU]:
        tau_shared, inf_shared = fit_dlbcd_two_stage(X, rep, threads)
    with Timer() as new[DLBCD_INF]:
        pass
    assert np.array_equal(tau_alone, tau_shared) and np.array_equal(inf_alone, inf_shared)
    print(f"DL-BCD: tau = 0.5 and tau = inf dictionaries bit-identical; NMSE {nmse(tau_shared, D):.3g}, "
          f"{nmse(inf_shared, D):.3g}")
    for name in [m for m in (SKLEARN, SPAMS) if m in methods_available()]:
        every, old[name] = fit_peer(name, X, D, rep, skip_after_success=False)
        some, new[name] = fit_peer(name, X, D, rep)
        assert all(every[k] == v for k, v in some.items())
        assert (min(every.values()) < SUCCESS_NMSE) == (min(some.values()) < SUCCESS_NMSE)
        print(f"{name}: NMSE per l1 weight {every}; fitted now: {sorted(some)}")
    print(f"load average {load():.2f} at the end")
    print("| method | wall s before | wall s now | CPU s before | CPU s now |\n|---|---:|---:|---:|---:|")
    for name in old:
        print(f"| {name} | {old[name].wall:.1f} | {new[name].wall:.1f} | {old[name].cpu:.1f} | {new[name].cpu:.1f} |")
    cpu_old, cpu_new = sum(t.cpu for t in old.values()), sum(t.cpu for t in new.values())
    print(f"| all | {sum(t.wall for t in old.values()):.1f} | {sum(t.wall for t in new.values()):.1f} | {cpu_old:.1f} | "
          f"{cpu_new:.1f} |  CPU ratio before/now {cpu_old / cpu_new:.2f}")


def noise_check(cells, reps, snr, threads):
    """DL-BCD alone on the grid's data of some cells (same seeds) at another noise level."""
    print(f"DL-BCD tau = {TAU} (two-stage, {RESTARTS} restarts) at SNR {snr:g} (E||D a|| / E||eps||), reps 0..{reps - 1}")
    print("| (p, s) | tau = 0.5 successes | tau = inf successes | NMSE tau = 0.5 / cond(D*) per rep |\n|---|---:|---:|---|")
    for p, s in cells:
        out = []
        for rep in range(reps):
            D, X = make_data(p, s, rep, snr)
            tau_fit, inf_fit = fit_dlbcd_two_stage(X, rep, threads)
            out.append((nmse(tau_fit, D), nmse(inf_fit, D), np.linalg.cond(D)))
        print(f"| ({p}, {s}) | {sum(o[0] < SUCCESS_NMSE for o in out)}/{reps} | {sum(o[1] < SUCCESS_NMSE for o in out)}/"
              f"{reps} | " + " ".join(f"{o[0]:.1e} / {o[2]:.0f}" for o in out) + " |", flush=True)


def weight_check(cells, reps, path=RESULTS_FILE):
    """The peers at the reference code's l1 weight 0.1/sqrt(p) on some cells, beside the grid's outcomes."""
    records = load_records(path)
    peers = [m for m in PEERS if m in methods_available()]
    print(f"peers at l1 weight 0.1/sqrt(p), reps 0..{reps - 1}; 'grid': the best of {list(PEER_LAMBDAS)} from the "
          f"results file\n| (p, s, rep) | weight | " + " | ".join(f"{m} | grid" for m in peers) + " |\n|---|---:|"
          + "---:|---:|" * len(peers))
    for p, s in cells:
        lam = 0.1 / np.sqrt(p)
        for rep in range(reps):
            D, X = make_data(p, s, rep)
            row = [f"{nmse(PEERS[m](X, p, rep, lam), D):.2g} | "
                   + (f"{records[p, s, rep, m]['nmse']:.2g}" if (p, s, rep, m) in records else "-")
                   for m in peers]
            print(f"| ({p}, {s}, {rep}) | {lam:.3f} | " + " | ".join(row) + " |", flush=True)


def cell(text):
    """A command-line cell "p,s"."""
    p, s = map(int, text.split(","))
    return p, s


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="fit the missing (p, s, rep, method) results, then write the report")
    r.add_argument("--grid-p", type=int, nargs="+", default=list(range(2, 21)))
    r.add_argument("--s-step", type=int, default=1)
    r.add_argument("--reps", type=int, default=10, help="target repetitions per cell")
    r.add_argument("--workers", type=int, default=1, help="processes (default 1: the machine is shared)")
    r.add_argument("--threads", type=int, default=1, help="threads of each DL-BCD fit (over its restarts)")
    sub.add_parser("report", help="write the docs section and plot from the results file")
    ns = sub.add_parser("noise-stage", help="DL-BCD with its noise stage on the cells a peer won (or --cells)")
    ns.add_argument("--cells", type=cell, nargs="+", help="cells as p,s (default: where a peer's rate is higher)")
    ns.add_argument("--reps", type=int, default=10)
    ns.add_argument("--workers", type=int, default=1)
    ns.add_argument("--threads", type=int, default=1)
    sub.add_parser("noise-report", help="write the noise stage's docs section from the results file")
    c = sub.add_parser("check-cell", help="old vs new protocol on one cell")
    c.add_argument("p", type=int)
    c.add_argument("s", type=int)
    c.add_argument("rep", type=int)
    c.add_argument("--threads", type=int, default=1)
    nc = sub.add_parser("noise-check", help="DL-BCD alone on some cells at another SNR (default: the reference "
                        "code's 100 dB)")
    nc.add_argument("cells", type=cell, nargs="+", help="cells as p,s")
    nc.add_argument("--reps", type=int, default=5)
    nc.add_argument("--snr", type=float, default=REFERENCE_CODE_SNR)
    nc.add_argument("--threads", type=int, default=1)
    wc = sub.add_parser("weight-check", help="the peers at the reference code's l1 weight 0.1/sqrt(p) on some cells")
    wc.add_argument("cells", type=cell, nargs="+", help="cells as p,s")
    wc.add_argument("--reps", type=int, default=3)
    parser.add_argument("--results", type=Path, default=RESULTS_FILE, help="the results file (JSON lines)")
    args = parser.parse_args()
    if args.command == "run":
        run(cells_of(args.grid_p, args.s_step), args.reps, args.workers, args.threads, args.results)
        report(load_records(args.results), args.results)
    elif args.command == "noise-stage":
        cells = args.cells or peer_won_cells(load_records(args.results))
        run(cells, args.reps, args.workers, args.threads, args.results, methods=[DLBCD_NOISE])
        noise_report(load_records(args.results), args.results)
    elif args.command == "noise-report":
        noise_report(load_records(args.results), args.results)
    elif args.command == "report":
        report(load_records(args.results), args.results)
    elif args.command == "weight-check":
        weight_check(args.cells, args.reps, args.results)
    elif args.command == "noise-check":
        noise_check(args.cells, args.reps, args.snr, args.threads)
    else:
        check_cell(args.p, args.s, args.rep, args.threads)


if __name__ == "__main__":
    main()
