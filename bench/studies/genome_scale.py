"""Interactions at genome scale (issue 49): how often screen_pairs ranks a planted pair in the top 5
of its pair table, its time and peak memory, at p = 10^5 and 10^6 variants.

Each replicate writes a PLINK .bed of n samples x p variants (minor allele frequencies uniform in
0.05-0.5, Hardy-Weinberg, independent variants; the two causal variants at frequency 0.3), with
y = effect x rule + N(0, 1):

    marginal  rule = 1(g_a > 0) 1(g_b > 0): each variant has an effect of its own too
    pure      rule = 1(g_a > 0) xor 1(g_b > 0): at frequency 0.3 neither has one (pure epistasis)

and runs screen_pairs on it, read in place by read_plink, in a fresh process (so its peak
resident memory, file pages included, is the pipeline's). A screen by importance needs marginal
signal, so the pure design measures what it misses.

    python bench/studies/genome_scale.py --p 100000 --reps 10 [--n 2000] [--design marginal]
        [--fraction 0.5] [--effect 1.0] [--folder /tmp/genome_scale]

2026-11-29 (n = 2,000, effect 1 SD, 2 threads, load average 1.3-1.6 from the study itself):

    p      design    screen   trees   planted pair in top 5   time (median)   peak RSS / anon
    10^5   marginal  0.5      300     10 of 10 (all 1st)      18.4 s          726 MB (bed 48 MB)
    10^5   marginal  0.3      300      8 of 10                19.3 s          688 MB
    10^5   pure      0.5      300      0 of 5                 19.3 s          729 MB
    10^6   marginal  0.5      300      0 of 1 (seed 0)        37 s            1490 MB
    10^6   marginal  0.5      auto     3 of 3 (all 1st)       82 s            1254 MB / 698 MB

2026-11-30, 10 replicates at 10^6 (default settings, top=1000 rows of the table; load 0.6-4.5,
the machine also running other studies): the pair first in 9 of 10; screen_pairs took 47-154 s,
median 80 s; peak RSS 1252 MB. The miss (seed 6) had one causal variant ranked 2,848th by the
screen; n_features=3000 on that replicate put the pair first (q = 3.3e-6, 74.5 s, 1480 MB).

2026-11-30, the same 10 replicates with n_features="auto" (3,163 columns at 10^6, 5.0 million
pairs; nothing else running, load 0.8-1.7): the pair first in 10 of 10, seed 6 included (its
causal variant again ranked 2,848th by the screen; q = 3.7e-6); q-values 4.6e-13 to 0.010;
screen_pairs took 67-76 s, median 70.9 s; peak RSS 1532-1578 MB (genotypes 477 MB packed).

2026-11-30, the same 10 replicates with main at d47d8d0 (the screen rows' calls and the scanned
variants read from the .bed with pread, not through its map; installed from a wheel; load 1.7-2.7,
tests or a Skinny Trees study beside some replicates): the pair first in 10 of 10, q 4.6e-13 to
0.010; screen_pairs 56.6-112.5 s, median 59.5 s (112.5 s: seed 6, with the other study beside it);
peak RSS 750-752 MB, 1.58x the packed genotypes (477 MB), down from 1,252-1,578 MB.

At 10^6, 300 trees tried each column too rarely (one causal variant ranked 68,250th by the
screen); n_estimators="auto" (949 trees there) keeps the tries per column at 10^5's. A screen on
30% of the rows lost the pair twice. Pure epistasis is missed: its variants have no importance of
their own to screen on. Where the memory goes: genome_scale_memory.py.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CAUSAL = (10, 20)
CHUNK = 20_000  # variants generated and packed at a time


def write_cohort(folder, n, p, design, effect, seed):
    """The replicate's .bed / .bim / .fam and y (.npy), generated a chunk of variants at a time."""
    from pyinterp.io.packing import pack_counts

    stem = folder / f"{design}_n{n}_p{p}_e{effect}_s{seed}"
    if Path(f"{stem}.npy").is_file():
        return stem
    rng = np.random.default_rng(seed)
    causal = {}
    with open(f"{stem}.bed", "wb") as bed:
        bed.write(bytes([0x6C, 0x1B, 0x01]))
        for j0 in range(0, p, CHUNK):
            j1 = min(p, j0 + CHUNK)
            maf = rng.uniform(0.05, 0.5, j1 - j0)
            for j in CAUSAL:
                if j0 <= j < j1:
                    maf[j - j0] = 0.3
            counts = rng.binomial(2, maf[:, None], size=(j1 - j0, n)).astype(np.int8)  # variant-major
            for j in CAUSAL:
                if j0 <= j < j1:
                    causal[j] = counts[j - j0].astype(np.float64)
            bed.write(pack_counts(2 - counts).tobytes())  # .bed counts allele 1: store the minor allele as allele 2
    with open(f"{stem}.bim", "w") as bim:
        bim.writelines(f"1\trs{j}\t0\t{j + 1}\tA\tG\n" for j in range(p))
    with open(f"{stem}.fam", "w") as fam:
        fam.writelines(f"F{i}\tS{i}\t0\t0\t0\t-9\n" for i in range(n))
    a, b = (causal[j] > 0 for j in CAUSAL)
    rule = (a & b) if design == "marginal" else (a ^ b)
    y = effect * rule + rng.standard_normal(n)
    np.save(f"{stem}.npy", y)
    return stem


def run_one(stem, fraction, seed):
    """screen_pairs on the replicate, in this process: the planted pair's rank and statistics."""
    from pyinterp.interactions import screen_pairs
    from pyinterp.io import read_plink

    X = read_plink(f"{stem}.bed", count_a2=True)
    y = np.load(f"{stem}.npy")
    start = time.perf_counter()
    found = screen_pairs(X, y, screen_fraction=fraction, random_state=seed, n_jobs=2, top=1000)
    elapsed = time.perf_counter() - start
    table = found.scan.interactions
    ranks = [k + 1 for k, f in enumerate(table.features) if {f[0][0], f[1][0]} == set(CAUSAL)]
    order = np.argsort(-found.importances, kind="stable")
    record = {"rank": ranks[0] if ranks else None, "pvalue": float(table["pvalue"][ranks[0] - 1]) if ranks else None,
              "qvalue": float(table["qvalue"][ranks[0] - 1]) if ranks else None,
              "screen_ranks": [int(np.flatnonzero(order == j)[0]) + 1 for j in CAUSAL],
              "seconds": elapsed, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              "genotypes_mb": os.path.getsize(f"{stem}.bed") / 2**20}
    print(json.dumps(record))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--p", type=int, default=100_000)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--design", choices=["marginal", "pure"], default="marginal")
    parser.add_argument("--fraction", type=float, default=0.5)
    parser.add_argument("--effect", type=float, default=1.0)
    parser.add_argument("--folder", default="/tmp/genome_scale")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # a replicate's stem, in the child process
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_one(args.run, args.fraction, args.seed)
        return
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    print(f"# {args.design}, n={args.n}, p={args.p}, effect {args.effect}, screen fraction {args.fraction}; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    records = []
    for seed in range(args.reps):
        stem = write_cohort(folder, args.n, args.p, args.design, args.effect, seed)
        out = subprocess.run([sys.executable, __file__, "--run", str(stem), "--fraction", str(args.fraction),
                              "--seed", str(seed)], capture_output=True, text=True, check=True)
        record = json.loads(out.stdout.strip().splitlines()[-1])
        records.append(record)
        print(json.dumps({"seed": seed, **record}), flush=True)
    top5 = sum(r["rank"] is not None and r["rank"] <= 5 for r in records)
    print(f"# planted pair in the top 5: {top5} of {len(records)}; median time "
          f"{np.median([r['seconds'] for r in records]):.1f} s, max peak {max(r['peak_mb'] for r in records):.0f} MB "
          f"(genotypes {records[0]['genotypes_mb']:.0f} MB); load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
