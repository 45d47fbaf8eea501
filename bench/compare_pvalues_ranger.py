"""pyinterp.significance.importance_pvalues next to R ranger's importance_pvalues on the same
simulated data: the false-discovery rate and power of a Benjamini-Hochberg selection at q = 0.1
(``--q``) over each tool's p-values, each tool in its own process, one thread each.

Data (docs/user/significance.md's design): n = 300 rows, X standard normal with p columns,
y = 0.7 (x_0 + ... + x_{k-1}) + N(0, 1); simulation r draws its data from
numpy.random.default_rng(100 + r) and seeds both tools with 100 + r (R: set.seed). 100 trees,
mtry 0.3 p (pyinterp max_features=0.3; ranger mtry = floor(0.3 p)); every other setting is each
tool's default (ranger's regression min.node.size is 5, pyinterp's forest has none:
``--min-node-size N`` sets both). Designs (``--designs``):

- ``kK`` (k0, k5, k20, ...): Janitza's hold-out test at p = ``--p`` (default 500), ``--sims``
  simulations (default 20). pyinterp: importance_pvalues(RandomForestRegressor(n_estimators=100,
  max_features=0.3), X, y, method="janitza"); ranger: importance_pvalues(holdoutRF(
  dependent.variable.name = "y", data = df, num.trees = 100, mtry = floor(0.3 p), num.threads = 1),
  method = "janitza").
- ``altmann``: Altmann's permutation test, 100 refits on permuted y (``--permutations``), at
  p = ``--altmann-p`` (50), k = ``--altmann-k`` (5), ``--altmann-sims`` simulations (10).
  pyinterp: method="altmann"; ranger: importance_pvalues(ranger(y ~ ., data = df, importance =
  "permutation", num.trees = 100, mtry = ..., num.threads = 1), method = "altmann", formula = y ~ .,
  data = df, num.permutations = 100, num.threads = 1).

The two tools differ in the Janitza p-value's form: ranger's is the share of the null sample (the
negative hold-out importances, mirrored, and the zeros; N values) at or above the importance, 0
beyond the null's largest value; pyinterp's is (1 + that count) / (1 + N). So besides each tool's
own p-values ("own") each Janitza design has two rows computed from the same fits' importances with
the other tool's form ("ranger form", "pyinterp form"): forest and importance on one axis, the
p-value's form on the other. (Altmann's form is the same in both.) Every selection is BH by
pyinterp.significance.bh_qvalues; for ranger's own p-values it is checked against R's
p.adjust(p, "BH"), and the ranger-form recomputation against ranger's own p-values.

Per design and row: the mean number of discoveries; the FDR (mean over simulations of false
discoveries / max(1, discoveries)); P(V > 0), the share of simulations with any false discovery
(the FDR itself when k = 0); the power (mean of true discoveries / k); over all features without
effect pooled, the shares with p <= 0.01 and p <= 0.05 and the mean number per simulation with
p = 0; and the median wall and CPU seconds of one test (both fits, or all refits, and the
importances; reading the data excluded). The load average is printed at the start, around each
tool's run and at the end: the machine may be shared, so read the times with it. ranger is skipped,
with the reason, when Rscript or the ranger package is absent (apt-get install r-base-core
r-cran-ranger).

    python bench/compare_pvalues_ranger.py                       # k0, k5, k20 at p = 500, and altmann
    python bench/compare_pvalues_ranger.py --p 2000 --designs k10
    python bench/compare_pvalues_ranger.py --sims 5 --designs k5 altmann --altmann-sims 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
from benchkit.timing import Timer, run_isolated

N_SAMPLES, N_TREES, MTRY_FRACTION, EFFECT = 300, 100, 0.3, 0.7

RANGER_R = r"""
suppressMessages(library(ranger)); a <- commandArgs(TRUE)
sims <- read.csv(a[1], stringsAsFactors = FALSE); method <- a[3]
num.trees <- as.integer(a[4]); num.permutations <- as.integer(a[5])
extra <- if (a[6] == "NA") list() else list(min.node.size = as.integer(a[6]))
seen <- character(0)
for (i in seq_len(nrow(sims))) {
  df <- read.csv(sims$path[i]); mtry <- floor(0.3 * (ncol(df) - 1))
  set.seed(sims$seed[i]); t0 <- proc.time()
  res <- withCallingHandlers({
    if (method == "janitza") {
      rf <- do.call(holdoutRF, c(list(dependent.variable.name = "y", data = df, num.trees = num.trees, mtry = mtry,
                                      num.threads = 1), extra))
      importance_pvalues(rf, method = "janitza")
    } else {
      rf <- do.call(ranger, c(list(y ~ ., data = df, importance = "permutation", num.trees = num.trees, mtry = mtry,
                                   num.threads = 1), extra))
      importance_pvalues(rf, method = "altmann", formula = y ~ ., data = df, num.permutations = num.permutations,
                         num.threads = 1)
    }
  }, warning = function(w) { seen <<- c(seen, conditionMessage(w)); invokeRestart("muffleWarning") })
  t <- proc.time() - t0
  out <- data.frame(importance = res[, "importance"], pvalue = res[, "pvalue"],
                    qvalue = p.adjust(res[, "pvalue"], method = "BH"))
  write.csv(out, file.path(a[2], sprintf("ranger_%d.csv", i - 1)), row.names = FALSE)
  cat("TIME", i - 1, t[["elapsed"]], t[["user.self"]] + t[["sys.self"]], "\n")
}
for (w in unique(seen)) cat("WARNING", sum(seen == w), "x", gsub("\n", " ", w), "\n")
cat("VERSION", R.version.string, "| ranger", as.character(packageVersion("ranger")), "\n")
"""


def ranger_missing():
    """None when Rscript and ranger are there, else why not."""
    if shutil.which("Rscript") is None:
        return "Rscript not found"
    out = subprocess.run(["Rscript", "-e", "suppressMessages(library(ranger))"], capture_output=True, text=True)
    if out.returncode != 0:
        return f"the R package ranger is not installed ({out.stderr.strip().splitlines()[-1]})"
    return None


def simulate(p, k, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N_SAMPLES, p))
    y = EFFECT * X[:, :k].sum(axis=1) + rng.standard_normal(N_SAMPLES)
    return X, y


def write_sims(p, k, sims, tmp):
    """One CSV per simulation (header y, x0, ...: R's data frame), and the list of them."""
    rows = []
    for r in range(sims):
        X, y = simulate(p, k, 100 + r)
        path = Path(tmp) / f"sim_{r}.csv"
        np.savetxt(path, np.column_stack([y, X]), delimiter=",", fmt="%.17g", comments="",
                   header=",".join(["y"] + [f"x{j}" for j in range(p)]))
        rows.append((str(path), 100 + r))
    manifest = Path(tmp) / "sims.csv"
    manifest.write_text("path,seed\n" + "".join(f"{path},{seed}\n" for path, seed in rows))
    return manifest


def read_manifest(manifest):
    lines = Path(manifest).read_text().splitlines()[1:]
    return [(path, int(seed)) for path, seed in (line.split(",") for line in lines)]


def worker(manifest, method, n_permutations, min_node_size):
    """pyinterp's tests of every simulation of a design, in this process: one JSON line."""
    from pyinterp import RandomForestRegressor
    from pyinterp.significance import importance_pvalues

    params = dict(n_estimators=N_TREES, max_features=MTRY_FRACTION)
    if min_node_size != "NA":
        params["min_node_size"] = int(min_node_size)
    out = dict(importances=[], pvalues=[], wall=[], cpu=[], warnings={})
    for path, seed in read_manifest(manifest):
        data = np.loadtxt(path, delimiter=",", skiprows=1)
        y, X = data[:, 0], np.ascontiguousarray(data[:, 1:])
        with warnings.catch_warnings(record=True) as caught, Timer() as timer:
            warnings.simplefilter("always")
            test = importance_pvalues(RandomForestRegressor(**params), X, y, method=method,
                                      n_permutations=int(n_permutations), random_state=seed, n_jobs=1)
        for w in caught:
            key = str(w.message).split(":")[0]
            out["warnings"][key] = out["warnings"].get(key, 0) + 1
        out["importances"].append(test.importances.tolist())
        out["pvalues"].append(test.pvalues.tolist())
        out["wall"].append(timer.wall)
        out["cpu"].append(timer.cpu)
    print(json.dumps(out))


def run_pyinterp(manifest, method, args):
    load0 = os.getloadavg()
    out = run_isolated([__file__, "--worker", manifest, method, args.permutations, args.min_node_size], threads=1)
    out["load"] = (load0, os.getloadavg())
    return out


def run_ranger(manifest, method, args, tmp):
    script = Path(tmp) / "pvalues.R"
    script.write_text(RANGER_R)
    load0 = os.getloadavg()
    proc = subprocess.run(["Rscript", str(script), str(manifest), str(tmp), method, str(N_TREES),
                           str(args.permutations), str(args.min_node_size)],
                          capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    load1 = os.getloadavg()
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[-1000:]}
    out = dict(importances=[], pvalues=[], qvalues=[], wall=[], cpu=[], warnings={}, load=(load0, load1))
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word == "TIME":
            i, wall, cpu = rest.split()
            table = np.loadtxt(Path(tmp) / f"ranger_{i}.csv", delimiter=",", skiprows=1, ndmin=2)
            for key, column in (("importances", 0), ("pvalues", 1), ("qvalues", 2)):
                out[key].append(table[:, column].tolist())
            out["wall"].append(float(wall))
            out["cpu"].append(float(cpu))
        elif word == "WARNING":
            count, _, message = rest.partition(" x ")
            out["warnings"][message.strip()] = int(count)
        elif word == "VERSION":
            out["version"] = rest.strip()
    return out


def janitza_null(importances):
    """The null sample both tools build: the negative importances, mirrored, and the zeros; sorted."""
    negative = importances[importances < 0]
    return np.sort(np.concatenate([negative, -negative, importances[importances == 0]]))


def pvalue_form(importances, form):
    """Janitza p-values of the importances in ranger's form (share of the null at or above) or
    pyinterp's ((1 + that count) / (1 + N))."""
    imp = np.asarray(importances)
    null = janitza_null(imp)
    at_least = len(null) - np.searchsorted(null, imp, side="left")
    return at_least / len(null) if form == "ranger" else (1.0 + at_least) / (1.0 + len(null))


def scores(pvalues, k, q):
    """Per-design summary of one row's p-values (a list of per-simulation vectors)."""
    from pyinterp.significance import bh_qvalues

    fdp, power, any_false, discoveries, null_p, zeros = [], [], [], [], [], []
    for p in map(np.asarray, pvalues):
        chosen = np.flatnonzero(bh_qvalues(p) <= q)
        false = int((chosen >= k).sum())
        discoveries.append(len(chosen))
        fdp.append(false / max(1, len(chosen)))
        any_false.append(false > 0)
        if k:
            power.append((len(chosen) - false) / k)
        null_p.append(p[k:])
        zeros.append(int((p[k:] == 0).sum()))
    null_p = np.concatenate(null_p)
    return dict(disc=np.mean(discoveries), fdr=np.mean(fdp), any=np.mean(any_false),
                power=np.mean(power) if power else float("nan"), p01=np.mean(null_p <= 0.01),
                p05=np.mean(null_p <= 0.05), zeros=np.mean(zeros))


def loads(load):
    (a, b, _), (c, d, _) = load
    return f"{a:.2f}/{b:.2f} -> {c:.2f}/{d:.2f}"


def design_settings(name, args):
    """(method, p, k, simulations) of a design name."""
    if name == "altmann":
        return "altmann", args.altmann_p, args.altmann_k, args.altmann_sims
    if name.startswith("k") and name[1:].isdigit():
        return "janitza", args.p, int(name[1:]), args.sims
    raise SystemExit(f"unknown design {name!r}: kK (k0, k5, k20, ...) or altmann")


HEADER = (f"{'tool':<9} {'p-value form':<14} {'disc':>5} {'FDR':>6} {'P(V>0)':>6} {'power':>6} "
          f"{'null p<=.01':>11} {'p<=.05':>7} {'p=0/sim':>7} {'s/test':>7} {'CPU s':>7}")


def row(tool, form, s, res=None):
    timing = f"{np.median(res['wall']):7.2f} {np.median(res['cpu']):7.2f}" if res else f"{'(same fits)':>15}"
    power = "     -" if np.isnan(s["power"]) else f"{s['power']:6.3f}"
    return (f"{tool:<9} {form:<14} {s['disc']:5.2f} {s['fdr']:6.3f} {s['any']:6.2f} {power} "
            f"{s['p01']:11.4f} {s['p05']:7.4f} {s['zeros']:7.2f} {timing}")


def report(name, method, p, k, sims, results, q):
    print(f"\n=== {name}: {method}, n = {N_SAMPLES}, p = {p}, k = {k}, {sims} simulations, "
          f"{N_TREES} trees, mtry {int(MTRY_FRACTION * p)}, BH at q = {q} ===")
    print(HEADER)
    py, rg = results.get("pyinterp"), results.get("ranger")
    if py is not None:
        print(row("pyinterp", "own", scores(py["pvalues"], k, q), py))
        if method == "janitza":
            own = np.array(py["pvalues"])
            mine = np.array([pvalue_form(np.array(i), "pyinterp") for i in py["importances"]])
            assert np.allclose(own, mine, rtol=0, atol=1e-12), "pyinterp's p-values are not (1 + count) / (1 + N)"
            print(row("pyinterp", "ranger form", scores([pvalue_form(np.array(i), "ranger") for i in py["importances"]],
                                                        k, q)))
    if rg is not None and "error" not in rg:
        print(row("ranger", "own", scores(rg["pvalues"], k, q), rg))
        if method == "janitza":
            print(row("ranger", "pyinterp form",
                      scores([pvalue_form(np.array(i), "pyinterp") for i in rg["importances"]], k, q)))
    for tool, res in results.items():
        if "error" in res:
            print(f"{tool}: failed: {res['error']}")
            continue
        print(f"{tool:<9} load {loads(res['load'])} (1/5 min, start -> end of its process); wall s/test "
              f"{min(res['wall']):.2f}-{max(res['wall']):.2f}")
        for message, count in res["warnings"].items():
            print(f"{tool:<9} warned {count} x: {message}")
    if rg is not None and "error" not in rg:
        from pyinterp.significance import bh_qvalues

        q_diff = max(np.max(np.abs(bh_qvalues(np.array(p_)) - np.array(q_))) for p_, q_ in zip(rg["pvalues"], rg["qvalues"]))
        line = f"checks: bh_qvalues vs R's p.adjust(BH) on ranger's p-values, max |diff| {q_diff:.1e}"
        if method == "janitza":
            p_diff = max(np.max(np.abs(pvalue_form(np.array(i), "ranger") - np.array(p_)))
                         for i, p_ in zip(rg["importances"], rg["pvalues"]))
            line += f"; ranger form recomputed from ranger's importances vs its p-values, max |diff| {p_diff:.1e}"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--designs", nargs="+", default=["k0", "k5", "k20", "altmann"],
                        help="kK: Janitza at --p with k causes; altmann: the small Altmann design")
    parser.add_argument("--p", type=int, default=500, help="features of the Janitza designs (default 500)")
    parser.add_argument("--sims", type=int, default=20, help="simulations per Janitza design (default 20)")
    parser.add_argument("--altmann-p", type=int, default=50)
    parser.add_argument("--altmann-k", type=int, default=5)
    parser.add_argument("--altmann-sims", type=int, default=10)
    parser.add_argument("--permutations", type=int, default=100, help="Altmann's refits (default 100)")
    parser.add_argument("--q", type=float, default=0.1, help="BH's level (default 0.1)")
    parser.add_argument("--min-node-size", default="NA",
                        help="ranger's min.node.size and pyinterp's min_node_size (default: each tool's own)")
    parser.add_argument("--no-ranger", action="store_true", help="pyinterp alone")
    parser.add_argument("--workdir", default=None, help="where the simulations' CSVs go (default: the system's tmp)")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(*args.worker)
    print(f"load average {os.getloadavg()} at the start ({os.cpu_count()} CPUs); one thread per tool")
    missing = "--no-ranger" if args.no_ranger else ranger_missing()
    if missing:
        print(f"ranger skipped: {missing}")
    versions = set()
    for name in args.designs:
        method, p, k, sims = design_settings(name, args)
        with tempfile.TemporaryDirectory(prefix="pvalues-ranger-", dir=args.workdir) as tmp:
            manifest = write_sims(p, k, sims, tmp)
            results = {}
            if not missing:
                results["ranger"] = run_ranger(manifest, method, args, tmp)
                versions.add(results["ranger"].get("version"))
            results["pyinterp"] = run_pyinterp(manifest, method, args)
        report(name, method, p, k, sims, results, args.q)
        sys.stdout.flush()
    for version in sorted(v for v in versions if v):
        print(f"\n{version}")
    print(f"load average {os.getloadavg()} at the end")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
