"""Interactions at genome scale over a simulation grid (issue 49): how often screen_pairs ranks a
planted pair in the top 5 of its pair table, one factor at a time around n = 2,000 rows,
p = 10^5 variants, causal minor-allele frequency 0.3, SNR 1, a pair with marginal effects.

Each cohort is a PLINK .bed of n samples x p variants (minor-allele frequencies uniform in
0.05-0.5, Hardy-Weinberg, independent variants; the causal variants 10 and 20 at the cell's
frequency m), seeded by (n, p, m, seed) only, so cells differing in design or SNR share genotypes
and noise. With q = 1 - (1 - m)^2 = P(g > 0) and y = effect x rule + N(0, 1):

    marginal  rule = 1(g_a > 0) 1(g_b > 0)                 Var(rule) = q^2 (1 - q^2)
    pure      rule = (1(g_a > 0) - q) (1(g_b > 0) - q)     Var(rule) = q^2 (1 - q)^2
    triple    rule = 1(g_a > 0) 1(g_b > 0) 1(g_c > 0)      Var(rule) = q^3 (1 - q^3)

pure is a product of centred indicators: neither variant has a marginal effect at any frequency.
triple adds variant 30 at the same frequency (its cohorts apart, "_o3"); its replicates record the
triple's rank in the triples' table (the first 20 pairs extended by every kept column) and the
best rank of its three pairs in the pairs' table.
effect = sqrt(SNR / Var(rule)), Var(rule) the population variance, so SNR = Var(signal) / Var(noise).
Each replicate runs screen_pairs at its defaults (random_state=seed, n_jobs=2, top=1000) on the
.bed read in place by read_plink, in a fresh process (its peak RSS is the pipeline's), and appends
a JSON line to bench/results_data/genome_scale_grid.jsonl: the pair's rank in the table (None if
absent), its p and q, the causal columns' screen ranks by MDI-oob (None without a screen), the
seconds of screen_pairs, peak RSS, whether it warned, and the load average at its end.

    python bench/studies/genome_scale_grid.py [--cells centre n1000 ...] [--reps 10]
        [--budget 110] [--folder /tmp/genome_grid]
    python bench/studies/genome_scale_grid.py --summary

Past --budget minutes the remaining cells run 5 replicates. Cohorts are written to --folder and
deleted once no later cell of the run needs them.

2026-11-30, all 17 cells x 10 replicates (seeds 0-9) in 61 minutes, no cell cut; pyinterp 0.1.0 as
installed in a snapshot of main; 2 threads, load average 2.5-8.1 (another study running beside):

    python bench/studies/genome_scale_grid.py
    python bench/studies/genome_scale_grid.py --summary

"worse screen rank": per replicate the larger of the two causal columns' MDI-oob ranks (the pair
is scanned only when both are in the first 1,000); median q counts a pair absent from the table as 1.

| cell | top 5 | first | median q | worse screen rank, median / worst | median s | max peak MB | load (1 min) | warned |
|---|---|---|---|---|---|---|---|---|
| centre | 10/10 | 10/10 | 5.9e-43 | 2 / 2 | 22.3 | 491 | 2.5-5.1 | 0/10 |
| snr0.25 | 10/10 | 10/10 | 6.6e-12 | 2 / 6 | 20.8 | 491 | 4.5-5.6 | 0/10 |
| snr4 | 10/10 | 10/10 | 1.3e-89 | 2 / 2 | 23.3 | 491 | 5.1-6.5 | 0/10 |
| snr10 | 10/10 | 10/10 | 1.3e-114 | 2 / 2 | 19.7 | 490 | 4.7-6.9 | 0/10 |
| pure1 | 0/10 | 0/10 | 1 | 75700 / 99930 | 23.6 | 490 | 4.8-6.5 | 0/10 |
| pure4 | 0/10 | 0/10 | 1 | 66956 / 88448 | 21.6 | 490 | 4.5-6.3 | 0/10 |
| pure10 | 0/10 | 0/10 | 1 | 68467 / 93660 | 22.6 | 492 | 4.7-5.7 | 0/10 |
| n1000 | 10/10 | 10/10 | 5.7e-18 | 2 / 2 | 15.2 | 407 | 4.5-5.5 | 0/10 |
| n5000 | 10/10 | 10/10 | 4.4e-114 | 2 / 2 | 52.8 | 735 | 4.8-8.1 | 0/10 |
| n500 | 9/10 | 9/10 | 4.8e-06 | 5 / 97710 | 7.7 | 366 | 4.8-7.1 | 0/10 |
| maf0.05 | 1/10 | 1/10 | 1 | 24050 / 99939 | 21.2 | 490 | 4.5-6.9 | 0/10 |
| maf0.1 | 10/10 | 10/10 | 7.5e-08 | 2 / 2 | 19.1 | 490 | 4.7-7.2 | 0/10 |
| maf0.5 | 10/10 | 10/10 | 6e-10 | 2 / 2 | 12.9 | 490 | 4.0-5.4 | 0/10 |
| p1e4 | 10/10 | 10/10 | 9e-41 | 2 / 2 | 8.7 | 417 | 3.8-4.0 | 0/10 |
| p1e4_n1000 | 10/10 | 10/10 | 1.5e-17 | 2 / 2 | 7.7 | 359 | 3.8-3.9 | 0/10 |
| p1e4_n500 | 10/10 | 10/10 | 8.1e-06 | 2 / 5 | 6.9 | 331 | 3.5-3.9 | 0/10 |
| p1e4_n200 | 5/10 | 2/10 | 0.93 | 24 / 9814 | 6.9 | 314 | 3.2-3.5 | 10/10 |

The triple cells, 2026-11-30 with main at a643297 (triple_scan; the forest's repack in one
buffer), 2 threads, load 2.5-3.7 (another study beside), "top 5" and "first" counting the triple
in the triples' table:

    python bench/studies/genome_scale_grid.py --cells triple1 triple0.25

| cell | top 5 | first | median q | worst screen rank of 3, median / worst | median s | peak MB | load | warned |
|---|---|---|---|---|---|---|---|---|
| triple1 | 10/10 | 10/10 | 1.8e-17 | 3 / 6 | 12.5 | 376 | 2.7-3.7 | 0/10 |
| triple0.25 | 6/10 | 3/10 | 0.98 | 586 / 79815 | 12.2 | 382 | 3.3-3.7 | 0/10 |

At SNR 1 one of its pairs was first in the pairs' table and the triple first in the triples' in
10 of 10; at SNR 0.25 the screen lost a column in 4 of 10, and where all three were kept the
triple came first at q 0.007-0.98 (its three-way part is a small share of the AND's variance).

Every pair instead of a screen, at p = 10^4 (cells pure1_all, pure0.25_all: pair_scan of all 5.0 x
10^7 pairs on every row, max_pairs raised), 2026-11-30: the pure pair first in seeds 0-2 at SNR 1
(q 4e-164 to 4e-169) and seed 0 at SNR 0.25 (q 1e-75); 170 s and 1.75 GB peak RSS a replicate on 2
threads, nothing else running (236 s before the blocks' tests ran on both threads, 352-888 s before
pair_scan's products were halved or with other jobs beside it). Seeds 1, 2 and SNR 0.25 ran from a script of the same cohorts and y outside this
file; seed 0 at SNR 1 ran here.

With marginal effects the pair is first whenever both columns pass the screen, down to SNR 0.25
and 500 rows (n500's miss: one column ranked 97,710th, the other 1st); screen_pairs warns only
below 500 rows, and at 200 rows (p = 10^4) the pair's q is 0.93 even when first. Pure epistasis
is never found, at SNR 10 too: its columns' MDI-oob is at the noise level (the worse rank of two
random ones, about 2/3 p), although scanning the pair alone gives p ~ 1e-136. At MAF 0.05 (about
1% of rows in the rule's cell) the screen loses a column in 8 of 10, and the pair test itself
fails: its HC2 score statistic is bounded by the rows in the interaction cells, so its p-value
stops falling as the effect grows (2 rows: p >= 0.14, 15 rows: p >= 1.2e-6, whatever the effect).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

CAUSAL = (10, 20)
CAUSAL3 = (10, 20, 30)
CENTRE = {"n": 2000, "p": 100_000, "maf": 0.3, "snr": 1.0, "design": "marginal", "scan": "screen"}
# In run order: the cells sharing the centre's cohorts (n, p, m) come first, together.
CELLS = {
    "centre": {},
    "snr0.25": {"snr": 0.25},
    "snr4": {"snr": 4.0},
    "snr10": {"snr": 10.0},
    "pure1": {"design": "pure"},
    "pure4": {"design": "pure", "snr": 4.0},
    "pure10": {"design": "pure", "snr": 10.0},
    "n1000": {"n": 1000},
    "n5000": {"n": 5000},
    "n500": {"n": 500},
    "maf0.05": {"maf": 0.05},
    "maf0.1": {"maf": 0.1},
    "maf0.5": {"maf": 0.5},
    "p1e4": {"p": 10_000},
    "p1e4_n1000": {"p": 10_000, "n": 1000},
    "p1e4_n500": {"p": 10_000, "n": 500},
    "p1e4_n200": {"p": 10_000, "n": 200},
    "triple1": {"design": "triple"},
    "triple0.25": {"design": "triple", "snr": 0.25},
    # every pair of the 10^4 columns, no screen (pair_scan): what pure epistasis needs
    "pure1_all": {"design": "pure", "p": 10_000, "scan": "all"},
    "pure0.25_all": {"design": "pure", "p": 10_000, "snr": 0.25, "scan": "all"},
}
RESULTS = Path(__file__).resolve().parents[1] / "results_data" / "genome_scale_grid.jsonl"
DRAWS = 1 << 24  # genotypes drawn and packed at a time


def settings(cell):
    return {**CENTRE, **CELLS[cell]}


def write_cohort(folder, n, p, maf, seed, causal_variants=CAUSAL):
    """The cohort's .bed / .bim / .fam and .npz (the causal genotypes, the noise), unless written."""
    from pyinterp.io.packing import pack_counts

    stem = Path(folder) / f"n{n}_p{p}_m{maf}_s{seed}{'_o3' if len(causal_variants) == 3 else ''}"
    if Path(f"{stem}.npz").is_file():
        return stem
    rng = np.random.default_rng([seed, n, p, round(maf * 10_000)])
    chunk = max(max(causal_variants) + 1, DRAWS // n)
    with open(f"{stem}.bed", "wb") as bed:
        bed.write(bytes([0x6C, 0x1B, 0x01]))
        for j0 in range(0, p, chunk):
            frequencies = rng.uniform(0.05, 0.5, min(chunk, p - j0))
            if j0 == 0:
                frequencies[list(causal_variants)] = maf
            counts = hardy_weinberg(rng, frequencies, n)  # variant-major minor-allele counts
            if j0 == 0:
                causal = counts[list(causal_variants)]
            bed.write(pack_counts(2 - counts).tobytes())  # read with count_a2=True: allele 2 is the minor
    with open(f"{stem}.bim", "w") as bim:
        bim.writelines(f"1\trs{j}\t0\t{j + 1}\tA\tG\n" for j in range(p))
    with open(f"{stem}.fam", "w") as fam:
        fam.writelines(f"F{i}\tS{i}\t0\t0\t0\t-9\n" for i in range(n))
    np.savez(f"{stem}.npz", causal=causal, noise=rng.standard_normal(n))
    return stem


def hardy_weinberg(rng, frequencies, n):
    """Minor-allele counts (int8, variants x samples) at Hardy-Weinberg equilibrium."""
    u = rng.random((len(frequencies), n), dtype=np.float32)
    f = frequencies[:, None].astype(np.float32)
    return (u >= (1 - f) ** 2).astype(np.int8) + (u >= 1 - f**2)


def rule_and_variance(causal, design, maf):
    """The rule's values on the samples, and its population variance at frequency maf."""
    q = 1 - (1 - maf) ** 2
    if design == "triple":
        return np.all(causal > 0, axis=0).astype(np.float64), q**3 * (1 - q**3)
    a, b = causal > 0
    if design == "marginal":
        return (a & b).astype(np.float64), q**2 * (1 - q**2)
    return (a - q) * (b - q), (q * (1 - q)) ** 2


def run_one(stem, design, maf, snr, seed, scan="screen"):
    """screen_pairs on one cohort (scan "all": pair_scan of every pair), in this process: prints
    the planted pair's ranks and statistics."""
    from pyinterp.interactions import pair_scan, screen_pairs
    from pyinterp.io import read_plink

    X = read_plink(f"{stem}.bed", count_a2=True)
    saved = np.load(f"{stem}.npz")
    rule, variance = rule_and_variance(saved["causal"], design, maf)
    effect = math.sqrt(snr / variance)
    y = effect * rule + saved["noise"]
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if scan == "all":
            found = SimpleNamespace(scan=pair_scan(X, y, max_pairs=60_000_000, n_jobs=2, top=1000), importances=None)
        else:
            found = screen_pairs(X, y, random_state=seed, n_jobs=2, top=1000)
    seconds = time.perf_counter() - start
    outcome = triple_outcome(found) if design == "triple" else pair_outcome(found)
    print(json.dumps({"effect": effect, **outcome, "seconds": seconds,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "warnings": [str(w.message)[:80] for w in caught]}))


def pair_outcome(found):
    """The planted pair's rank, p and q in the pair table, and its columns' screen ranks."""
    table = found.scan.interactions
    rows = [k for k, f in enumerate(table.features) if {f[0][0], f[1][0]} == set(CAUSAL)]
    row = rows[0] if rows else None
    outcome = {"rank": None if row is None else row + 1,
               "pvalue": None if row is None else float(table["pvalue"][row]),
               "qvalue": None if row is None else float(table["qvalue"][row]), "screen_ranks": None}
    if found.importances is not None:
        order = np.argsort(-found.importances, kind="stable")
        outcome["screen_ranks"] = [int(np.flatnonzero(order == j)[0]) + 1 for j in CAUSAL]
    return outcome


def triple_outcome(found):
    """The planted triple's rank, p and q in the triples' table, the best rank of its pairs in the
    pairs' table, and its columns' screen ranks."""
    table = found.triples.interactions
    rows = [k for k, f in enumerate(table.features) if {c for c, _ in f} == set(CAUSAL3)]
    row = rows[0] if rows else None
    pairs = [k + 1 for k, f in enumerate(found.scan.interactions.features) if {c for c, _ in f} < set(CAUSAL3)]
    outcome = {"rank": None if row is None else row + 1,
               "pvalue": None if row is None else float(table["pvalue"][row]),
               "qvalue": None if row is None else float(table["qvalue"][row]),
               "pair_rank": min(pairs) if pairs else None, "screen_ranks": None}
    if found.importances is not None:
        order = np.argsort(-found.importances, kind="stable")
        outcome["screen_ranks"] = [int(np.flatnonzero(order == j)[0]) + 1 for j in CAUSAL3]
    return outcome


def replicate(cell, seed, folder):
    """One replicate of a cell in a fresh process; returns its JSON record."""
    s = settings(cell)
    stem = write_cohort(folder, s["n"], s["p"], s["maf"], seed, CAUSAL3 if s["design"] == "triple" else CAUSAL)
    out = subprocess.run([sys.executable, __file__, "--run", str(stem), "--design", s["design"], "--maf",
                          str(s["maf"]), "--snr", str(s["snr"]), "--seed", str(seed), "--scan", s["scan"]],
                         capture_output=True, text=True, check=True)
    record = json.loads(out.stdout.strip().splitlines()[-1])
    return {"cell": cell, **s, "seed": seed, **record, "loadavg": os.getloadavg(),
            "date": time.strftime("%Y-%m-%d %H:%M")}


def cohort_key(cell):
    """What a cell's cohorts depend on besides the seed."""
    s = settings(cell)
    return s["n"], s["p"], s["maf"], s["design"] == "triple"


def delete_unneeded(folder, cell, later):
    """Delete the cell's cohorts when none of the later cells shares them."""
    if all(cohort_key(c) != cohort_key(cell) for c in later):
        n, p, maf, triple = cohort_key(cell)
        for path in Path(folder).glob(f"n{n}_p{p}_m{maf}_s*"):
            if path.stem.endswith("_o3") == triple:
                path.unlink()


def run_grid(cells, reps, budget, folder):
    """The cells in turn, each replicate appended to RESULTS as it finishes."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    for k, cell in enumerate(cells):
        count = reps if time.monotonic() - start < 60 * budget else min(reps, 5)
        print(f"# {cell}: {settings(cell)}, {count} replicates, load {os.getloadavg()[0]:.2f}", flush=True)
        for seed in range(count):
            record = replicate(cell, seed, folder)
            with open(RESULTS, "a") as out:
                out.write(json.dumps(record) + "\n")
            print(json.dumps(record), flush=True)
        delete_unneeded(folder, cell, cells[k + 1:])


def cell_row(cell, records):
    """A markdown row: top-5 and first counts, median q, screen ranks, seconds, peak RSS, load."""
    ranks = [r["rank"] for r in records]
    q = [1.0 if r["qvalue"] is None else r["qvalue"] for r in records]  # absent from the table: q = 1
    worse = [max(r["screen_ranks"]) for r in records if r["screen_ranks"]]
    loads = [r["loadavg"][0] for r in records]
    screen = f"{np.median(worse):.0f} / {max(worse)}" if worse else "no screen"
    warned = sum(bool(r["warnings"]) for r in records)
    return (f"| {cell} | {sum(k is not None and k <= 5 for k in ranks)}/{len(records)} | "
            f"{sum(k == 1 for k in ranks)}/{len(records)} | {np.median(q):.2g} | {screen} | "
            f"{np.median([r['seconds'] for r in records]):.1f} | {max(r['peak_mb'] for r in records):.0f} | "
            f"{min(loads):.1f}-{max(loads):.1f} | {warned}/{len(records)} |")


def summary():
    """The table of RESULTS by cell (the last record of each cell and seed)."""
    latest = {}
    for line in RESULTS.read_text().splitlines():
        record = json.loads(line)
        latest[record["cell"], record["seed"]] = record
    print("| cell | top 5 | first | median q | worse screen rank, median / worst | median s | max peak MB | "
          "load (1 min) | warned |")
    print("|---|---|---|---|---|---|---|---|---|")
    for cell in CELLS:
        records = [r for (c, _), r in sorted(latest.items()) if c == cell]
        if records:
            print(cell_row(cell, records))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", nargs="+", choices=list(CELLS), default=list(CELLS))
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--budget", type=float, default=110, help="minutes before cells are cut to 5 replicates")
    parser.add_argument("--folder", default="/tmp/genome_grid")
    parser.add_argument("--summary", action="store_true", help="print the table of the results file")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # a cohort's stem, in the child process
    parser.add_argument("--design", help=argparse.SUPPRESS)
    parser.add_argument("--maf", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--snr", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--scan", default="screen", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_one(args.run, args.design, args.maf, args.snr, args.seed, args.scan)
    elif args.summary:
        summary()
    else:
        run_grid(args.cells, args.reps, args.budget, args.folder)


if __name__ == "__main__":
    main()
