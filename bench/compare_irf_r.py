"""pyinterp's IterativeRandomForest (style="R" and style="pyinterp", or --styles) next to the R iRF
3.0 package (ranger backend) on issue 24's three data sets and issue 53's fourth, each tool in its
own process, one thread each (``--threads N``: pyinterp's n_jobs and R's n.core):

1. lss50: make_lss(n=1000, p=50) (two order-2 rules, SNR 5);
2. mixed500: n=1000, p=500, one order-2 and one order-3 rule at SNR 2 (benchkit.data.lss_orders);
3. all_bioc: all_bioc.npz of benchkit.paths.SHARED_DATA, y_bcrabl (n=128, p=12625);
4. prostate_ge: prostate_ge.npz of the same folder (n=102, p=5966; not in the default list).

``--seeds`` runs each tool once per seed (R's set.seed, pyinterp's random_state) and reports each;
``--params`` passes IterativeRandomForest parameters as JSON, ``--no-r`` skips R, ``--dump`` writes
every run's table as JSON. On prostate_ge (2026-11-29, seeds 0-2) R's stabilities were far above
pyinterp's (0.93 against 0.26 on the common interactions, seed 0) because R iRF 3.0.0 refits one
resample in all its bootstraps (docs/user/interactions.md, "What still differs").

Both run the defaults: 5 iterations x 500 trees, mtry sqrt(p), RIT depth 5 x 500 trees x 2 children,
10 bootstraps, the lowest-OOB-error iteration (R: select.iter=TRUE). Per data set it prints each
tool's top interactions with stability / prevalence / precision / cpe, the rank agreement (Spearman
correlation of the table positions of the interactions both report, top-10 overlap), where the true
interactions rank, the time (wall seconds of the fit; CPU seconds of the whole process, R's forked
workers included, and of pyinterp's fit alone), the peak resident memory (R: its largest process),
the load average when each run started and ended (other jobs share the machine: read every figure
with it), and the ratios to R: R time / pyinterp time, the same in CPU seconds (which other jobs
disturb less), pyinterp peak / R peak. R is skipped when Rscript or the iRF package is absent
(install: apt-get install r-base-core r-base-dev r-cran-ranger r-cran-data.table r-cran-rcpp
r-cran-rcppeigen r-cran-matrix r-cran-dplyr r-cran-foreach r-cran-doparallel r-cran-dorng
r-cran-stringr r-cran-fastmatch r-cran-memoise r-cran-rcolorbrewer; AUC, which Debian lacks, and
iRF 3.0 by R CMD INSTALL of their sources: the cran/AUC and karlkumbier/iRF repositories on GitHub).

    python bench/compare_irf_r.py                    # all three
    python bench/compare_irf_r.py --data lss50 --top 10
    python bench/compare_irf_r.py --threads 2         # issue 20's setting
    python bench/compare_irf_r.py --threads 2 --repeats 3   # each tool 3 times, alternating: medians
    python bench/compare_irf_r.py --data prostate_ge --threads 2 --seeds 0 1 2 --styles R --top 10

R's own time moves by a quarter between quiet runs of the same day on this project's VMs, so one
run's ratio is a loose figure; with --repeats the times, CPU seconds and peaks are medians (the
runs' wall times are listed) and the ratios are of medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from benchkit.data import lss_orders, shared_npz
from benchkit.timing import Timer

IRF_R = r"""
suppressMessages(library(iRF))
args <- commandArgs(trailingOnly = TRUE)
d <- as.matrix(data.table::fread(args[1], header = FALSE))
y <- d[, 1]; x <- d[, -1, drop = FALSE]
colnames(x) <- paste0("X", seq_len(ncol(x)) - 1)
if (args[3] == "classification") y <- as.factor(y)
set.seed(as.integer(args[4]))
t0 <- proc.time()
fit <- iRF(x, y, n.iter = 5, ntree = 500, select.iter = TRUE, n.bootstrap = 10, type = "ranger",
           verbose = FALSE, n.core = as.integer(args[5]))
elapsed <- (proc.time() - t0)[["elapsed"]]
write.csv(fit$interaction, args[2], row.names = FALSE)
cat(elapsed, fit$selected.iter, "\n")
"""

SCORES = ("stability", "prevalence", "precision", "cpe")
SHARED_TARGETS = {"all_bioc": "y_bcrabl", "prostate_ge": "y"}  # the shared folder's data sets: their targets


def datasets(names):
    for name in names:
        if name == "lss50":
            from pyinterp.datasets import make_lss
            X, y, true = make_lss(n_samples=1000, n_features=50, random_state=0)
            yield name, X, y, true, "regression"
        elif name == "mixed500":
            X, y, true = lss_orders(1000, 500, (2, 3), snr=2.0, seed=0)
            yield name, X, y, true, "regression"
        else:
            data = shared_npz(name)
            if data is None:
                print(f"{name}.npz is absent: skipped")
                continue
            yield name, data["X"].astype(np.float64), data[SHARED_TARGETS[name]], [], "classification"


def r_available():
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "suppressMessages(library(iRF))"], capture_output=True).returncode == 0


def timed(cmd):
    """Run cmd under /usr/bin/time -v: (stdout, peak resident MB of its largest process, its CPU
    seconds (user + system, the children it reaped included: R's forked workers), load averages
    (1, 5, 15 min) at the start and at the end)."""
    load = os.getloadavg()
    out = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    usage = {line.split(":")[0].strip(): line.split()[-1] for line in out.stderr.splitlines() if ":" in line}
    cpu = float(usage["User time (seconds)"]) + float(usage["System time (seconds)"])
    return out.stdout, int(usage["Maximum resident set size (kbytes)"]) / 1024, cpu, (load, os.getloadavg())


def parse_r_name(name):
    """R's 'X3-_X7+' -> ((3, -1), (7, 1))."""
    items = [(int(part[1:-1]), 1 if part[-1] == "+" else -1) for part in name.split("_")]
    return tuple(sorted(items))


def write_r_inputs(X, y, tmp):
    """R's data (y, then X's columns, as CSV) and script in tmp, once for all its runs."""
    data, script = Path(tmp) / "data.csv", Path(tmp) / "irf.R"
    np.savetxt(data, np.column_stack([y, X]), delimiter=",", fmt="%.10g")
    script.write_text(IRF_R)
    return data, script


def run_r(data, script, task, tmp, threads, seed=0):
    table = Path(tmp) / "r_table.csv"
    stdout, peak, cpu, load = timed(["Rscript", str(script), str(data), str(table), task, str(seed), str(threads)])
    elapsed, selected = stdout.split()[-2:]
    rows = []
    lines = table.read_text().splitlines()
    header = [h.strip('"') for h in lines[0].split(",")]
    for line in lines[1:]:
        values = dict(zip(header, (v.strip('"') for v in line.split(","))))
        rows.append((parse_r_name(values["int"]), {s: float(values[s].replace("NA", "nan")) for s in SCORES}))
    return dict(rows=rows, seconds=float(elapsed), cpu=cpu, peak_mb=peak, load=load, selected=int(selected))


def run_pyinterp(data_file, style, threads, seed=0, extra="{}"):
    stdout, peak, cpu, load = timed([sys.executable, __file__, "--worker", str(data_file), style, str(threads),
                                     str(seed), extra])
    out = json.loads(stdout.splitlines()[-1])
    out["rows"] = [(tuple(map(tuple, f)), s) for f, s in out["rows"]]
    out["peak_mb"], out["cpu"], out["load"] = peak, cpu, load
    return out


def worker(data_file, style, threads, seed="0", extra="{}"):
    import pyinterp
    with np.load(data_file) as d:
        X, y, task = d["X"], d["y"], str(d["task"])
    with Timer() as timer:
        model = pyinterp.IterativeRandomForest(task=task, style=style, random_state=int(seed),
                                              n_jobs=int(threads), **json.loads(extra)).fit(X, y)
    seconds, cpu = timer.wall, timer.cpu
    table = model.interactions_
    rows = [(r.features, {s: float(getattr(r, s)) for s in SCORES}) for r in table]
    print(json.dumps(dict(rows=rows, seconds=seconds, fit_cpu=cpu, selected=model.selected_iteration_ + 1,
                          oob_errors=model.oob_errors_.tolist())))


def merged(runs):
    """One tool's runs as one result: the first run's table (the seeds are fixed), the median of
    each timing and peak, every run's wall seconds, the load at the first start and the last end."""
    out = dict(runs[0])
    for key in ("seconds", "cpu", "fit_cpu", "peak_mb"):
        if key in out:
            out[key] = float(np.median([r[key] for r in runs]))
    out["runs"] = [r["seconds"] for r in runs]
    out["load"] = (runs[0]["load"][0], runs[-1]["load"][1])
    return out


def spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 2 else float("nan")


def label(features):
    return " ".join(f"{k}{'+' if s > 0 else '-'}" for k, s in features)


def loads(load):
    start, end = load
    return f"load {start[0]:.1f}/{start[1]:.1f} -> {end[0]:.1f}/{end[1]:.1f}"


def report(name, results, true, top, threads):
    print(f"\n=== {name} ({threads} thread{'s' if threads > 1 else ''}) ===")
    for tool, res in results.items():
        in_fit = f" ({res['fit_cpu']:.1f} in fit)" if "fit_cpu" in res else ""
        runs = res.get("runs", [])
        if len(runs) > 1:
            in_fit += f", medians of {len(runs)} runs (wall {', '.join(f'{t:.1f}' for t in runs)} s)"
        print(f"{tool:<16} {len(res['rows']):>4} interactions, {res['seconds']:7.1f} s, "
              f"{res['cpu']:6.1f} CPU-s{in_fit}, peak {res['peak_mb']:6.0f} MB, selected iteration {res['selected']}, "
              f"{loads(res['load'])} (1/5 min, start -> end)")
    r = results.get("R iRF 3.0")
    if r is not None:
        for tool, res in results.items():
            if tool != "R iRF 3.0":
                print(f"{tool:<16} vs R: {r['seconds'] / res['seconds']:5.1f}x faster "
                      f"({r['cpu'] / res['cpu']:.1f}x fewer CPU-seconds), "
                      f"peak {res['peak_mb'] / r['peak_mb']:.2f}x R's")
    for tool, res in results.items():
        print(f"\n{tool}: top {top} (table order)")
        print(f"  {'interaction':<28}" + "".join(f"{s:>11}" for s in SCORES))
        for features, scores in res["rows"][:top]:
            print(f"  {label(features):<28}" + "".join(f"{scores[s]:11.3f}" for s in SCORES))
    if true:
        print("\nrank of the true interactions (1-based; - = not reported):")
        for t in true:
            ranks = {tool: next((i + 1 for i, (f, _) in enumerate(res["rows"]) if f == tuple(sorted(t))), "-")
                     for tool, res in results.items()}
            print(f"  {label(t):<20}" + "".join(f"  {tool} {r}" for tool, r in ranks.items()))
    tools = list(results)
    for i, a in enumerate(tools):
        for b in tools[i + 1:]:
            pos_a = {f: k for k, (f, _) in enumerate(results[a]["rows"])}
            pos_b = {f: k for k, (f, _) in enumerate(results[b]["rows"])}
            common = [f for f in pos_a if f in pos_b]
            top_a = {f for f, _ in results[a]["rows"][:10]}
            top_b = {f for f, _ in results[b]["rows"][:10]}
            rho = spearman([pos_a[f] for f in common], [pos_b[f] for f in common])
            print(f"{a} vs {b}: {len(common)} interactions in both, Spearman of their positions {rho:.2f}, "
                  f"top-10 overlap {len(top_a & top_b)}")
            for score in ("stability", "prevalence", "precision"):
                if common:
                    va = np.array([results[a]["rows"][pos_a[f]][1][score] for f in common])
                    vb = np.array([results[b]["rows"][pos_b[f]][1][score] for f in common])
                    print(f"    {score:<10} mean over both: {np.nanmean(va):.3f} vs {np.nanmean(vb):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", default=["lss50", "mixed500", "all_bioc"],
                        choices=["lss50", "mixed500", *SHARED_TARGETS])
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1, help="pyinterp's n_jobs and R's n.core (default 1)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each tool, alternating (default 1)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds (R's set.seed, pyinterp's "
                        "random_state); each seed is one run of each tool (default 0)")
    parser.add_argument("--styles", nargs="+", default=["R", "pyinterp"], help="pyinterp styles to run")
    parser.add_argument("--no-r", action="store_true", help="skip R iRF")
    parser.add_argument("--params", default="{}", help="JSON of extra IterativeRandomForest parameters")
    parser.add_argument("--dump", help="write every run's table (JSON) to this file")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(*args.worker)
    with_r = not args.no_r and r_available()
    if not with_r and not args.no_r:
        print("Rscript with the iRF package not found: R iRF skipped")
    for name, X, y, true, task in datasets(args.data):
        with tempfile.TemporaryDirectory(prefix="irf-r-") as tmp:
            data_file = Path(tmp) / "data.npz"
            np.savez(data_file, X=X, y=y, task=task)
            r_inputs = write_r_inputs(X, y, tmp) if with_r else None
            dump = []
            for seed in args.seeds:
                runs = {}
                for _ in range(max(1, args.repeats)):
                    if with_r:
                        runs.setdefault("R iRF 3.0", []).append(run_r(*r_inputs, task, tmp, args.threads, seed))
                    for style in args.styles:
                        runs.setdefault(f"pyinterp {style}", []).append(
                            run_pyinterp(data_file, style, args.threads, seed, args.params))
                merged_runs = {tool: merged(r) for tool, r in runs.items()}
                print(f"\n##### seed {seed}")
                report(name, merged_runs, true, args.top, args.threads)
                dump.append(dict(data=name, seed=seed, params=args.params, runs=merged_runs))
                sys.stdout.flush()
                if args.dump:
                    Path(args.dump).write_text(json.dumps(dump, default=list))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
