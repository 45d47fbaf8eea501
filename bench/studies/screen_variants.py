"""Screening stage of screen_pairs (issue 49): where five ways of ranking p = 10^5-10^6 columns on
the screen rows put the two causal variants of a planted pair, and what each costs.

Each replicate writes genome_scale.py's marginal cohort (n samples x p variants, causal variants
10 and 20 at frequency 0.3, y = effect x 1(g_10 > 0) 1(g_20 > 0) + N(0, 1)), reads it with
read_plink, runs screen_pairs at its defaults (random_state=seed, n_jobs=2, top=100) and, on the
same screen rows, ranks the columns (1 = best) by:

    baseline           screen_pairs' own MDI-oob of its sqrt(p)-candidate forest (T trees:
                       n_estimators="auto", 300 up to 10^5, 949 at 10^6)
    reweighted         a second forest of T trees whose candidates are drawn with probability
                       proportional to max(baseline MDI-oob, 0), ranked by its own MDI-oob; the
                       columns of weight 0 (never drawn) come after, in the baseline's order
    reweighted_floor   the same with the weights plus 1% of the mean positive weight, so that
                       every column stays drawable
    double_trees       the compute-matched control of the two above: one forest of 2T trees
    stability          B = 5 forests of T / 5 trees, each on a bootstrap resample of the screen
                       rows; a column scores the number of them that rank it within
                       screen_width(p), ties broken by its mean MDI-oob over the five

A bootstrap resample is given to its forest as row weights (each screen row's count in the
resample), so that its trees draw their rows from the resample and MDI-oob is taken on the rows
each tree did not draw, the rows left out of the resample included: fitting on the resample's
duplicated rows would count copies of in-bag rows as out-of-bag. Every extra forest takes a seed
drawn from the replicate's seed. Seconds are wall-clock on 2 threads; baseline's are the whole
screen_pairs call (its forest, its MDI-oob and the scan of the kept pairs), the others' are their
own forests and MDI-oob only (reweighting's cost is its forest plus the baseline's). The 1-minute
load average is read before and after each timing.

    python bench/studies/screen_variants.py --p 100000 --effect 1.0 --seeds 0,1,2,3,4,5,6,7,8,9
        [--n 2000] [--budget-minutes M] [--folder /tmp/screen_variants]

writes one JSON line per replicate to FOLDER/p{p}_n{n}_e{effect}.jsonl (a replicate already
there is skipped), deletes each cohort's files after its replicate, starts no replicate after
--budget-minutes, and prints the table of every replicate in the file.

2026-11-30, n = 2,000, 2 threads, the machine shared with another study (1-minute load average
1.6-7.8 during the timings), 89 minutes in all:

    python bench/studies/screen_variants.py --p 100000 --effect 1.0 --seeds 0,1,2,3,4,5,6,7,8,9
    python bench/studies/screen_variants.py --p 100000 --effect 0.7 --seeds 0,1,2,3,4,5,6,7,8,9
    python bench/studies/screen_variants.py --p 1000000 --effect 1.0 --seeds 6,0,1,2,3,4,5 --budget-minutes 55

Per variant: the median and the largest over replicates of the worse causal rank, the replicates
with both causal columns within screen_width(p) (1000 at 10^5, 3163 at 10^6) and within 1000,
and the median seconds.

    p      effect  reps  variant           median  worst   in width  in 1000  seconds
    10^5   1.0     10    baseline          2       2       10        10       19.5 (whole call)
                         reweighted        2       2       10        10       14.2
                         reweighted_floor  2       2       10        10       15.7
                         double_trees      2       2       10        10       18.8
                         stability         60      34,864  8         8        8.6
    10^5   0.7     10    baseline          70.5    95,594  6         6        20.9 (whole call)
                         reweighted        2       95,594  6         6        14.5
                         reweighted_floor  2       82,437  6         6        15.4
                         double_trees      3.5     5,325   9         9        20.1
                         stability         4,327   93,791  5         5        8.7
    10^6   1.0     5     baseline          2       2,848   5         4        155 (whole call)
           (seeds        reweighted        2       2       5         5        150
           6, 0-3)       reweighted_floor  2       2       5         5        129
                         double_trees      2       2       5         5        149
                         stability         3       12,556  4         4        64

At 10^6 seed 6's causal variant 10 is again ranked 2,848th by the screen; every variant but
stability puts it 2nd. At effect 0.7 the default screen loses a causal column in 4 of 10
replicates (seeds 3, 4, 7, 9: ranked 64,339th-95,594th, with a negative MDI-oob, behind the
~37,600 columns of positive MDI-oob); reweighting gives such a column weight 0 (or the floor's
1%) and cannot bring it back, while it does lift a column ranked low but positive (101st and
40th to 2nd). Twice the trees keeps both columns within 1000 in 9 of 10 (its miss, seed 7, a
column the baseline had 7th). Stability's forests of T / 5 trees each lose a causal column too
often (60-tree forests on seed 9's screen rows at 10^5 ranked one 1,417th-96,911th in 4 of 6
fits, with or without the resample), so its count is worst. A forest with feature_weights took
about twice the time of one without at the same tree count (150 trees at 10^5 on 1,000 rows:
4.8-5.7 s with uniform weights, 2.7-2.8 s without), so reweighting's second forest costs about
what double_trees' 2T trees do.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.base import clone

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genome_scale import CAUSAL, write_cohort

VARIANTS = ("baseline", "reweighted", "reweighted_floor", "double_trees", "stability")
B = 5  # stability's forests
FLOOR = 0.01  # reweighted_floor's floor, as a share of the mean positive weight
WIDE = 1000  # the screen width up to p = 10^5, also counted at 10^6


def timed(function, *args, **kwargs):
    """(function's result, seconds, 1-minute load average before and after)."""
    before = os.getloadavg()[0]
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start, [before, os.getloadavg()[0]]


def causal_ranks(order) -> list[int]:
    """The causal columns' 1-based places in `order` (columns, best first)."""
    return [int(np.flatnonzero(order == j)[0]) + 1 for j in CAUSAL]


def fit_mdi_oob(template, X, y, seed, n_estimators, sample_weight=None, feature_weights=None):
    """MDI-oob on (X, y) of a forest with `template`'s settings, `n_estimators` trees and `seed`."""
    from pyinterp.importance import mdi_oob

    forest = clone(template).set_params(n_estimators=n_estimators, random_state=seed)
    forest.fit(X, y, sample_weight=sample_weight, feature_weights=feature_weights)
    return np.asarray(mdi_oob(forest, X, y, n_jobs=template.n_jobs), dtype=np.float64)


def reweighted_order(template, X, y, seed, base_importances, base_rank, floor):
    """Columns ranked by a forest drawing its candidates by max(base MDI-oob, 0) (+ `floor` x the
    mean positive weight): the drawable ones by its MDI-oob, then the rest, ties in the baseline's
    order; and the number of drawable columns."""
    weights = np.maximum(base_importances, 0.0)
    weights += floor * weights[weights > 0].mean()
    importances = fit_mdi_oob(template, X, y, seed, template.n_estimators, feature_weights=weights)
    return np.lexsort((base_rank, -importances, weights == 0)), int(np.count_nonzero(weights))


def stability_order(template, X, y, seeds, width):
    """Columns ranked by how many of B bootstrap forests (the trees split evenly among them) rank
    them within `width`, ties by their mean MDI-oob."""
    n_rows, n_columns = len(y), X.shape[1]
    counts, total = np.zeros(n_columns, dtype=np.int64), np.zeros(n_columns)
    for b in range(B):
        resample = np.random.RandomState(seeds[2 * b]).randint(n_rows, size=n_rows)
        trees = template.n_estimators // B + (b < template.n_estimators % B)
        importances = fit_mdi_oob(template, X, y, seeds[2 * b + 1], trees,
                                  sample_weight=np.bincount(resample, minlength=n_rows).astype(np.float64))
        counts[np.argsort(-importances, kind="stable")[:width]] += 1
        total += importances
    return np.lexsort((-total, -counts))


def entry(order, seconds, load, width, **extra) -> dict:
    """One variant's record: the causal ranks, whether both are within `width` and 1000, timing."""
    ranks = causal_ranks(order)
    return {"ranks": ranks, "in_width": max(ranks) <= width, "in_1000": max(ranks) <= WIDE,
            "seconds": round(seconds, 2), "load": [round(v, 2) for v in load], **extra}


def run_replicate(stem, seed) -> dict:
    """Every variant's record on one cohort."""
    from pyinterp._rows import take_rows
    from pyinterp.interactions import screen_pairs
    from pyinterp.interactions.screen import screen_width
    from pyinterp.io import read_plink

    X, y = read_plink(f"{stem}.bed", count_a2=True), np.load(f"{stem}.npy")
    width = screen_width(X.shape[1])
    found, seconds, load = timed(screen_pairs, X, y, random_state=seed, n_jobs=2, top=100)
    template, rows = found.forest, found.screen_rows
    X_screen, y_screen = take_rows(X, rows), y[rows]
    base_order = np.argsort(-found.importances, kind="stable")
    assert np.array_equal(base_order[:width], found.features)
    base_rank = np.empty(len(base_order), dtype=np.int64)
    base_rank[base_order] = np.arange(len(base_order))
    pairs = [k + 1 for k, f in enumerate(found.scan.interactions.features) if {f[0][0], f[1][0]} == set(CAUSAL)]
    seeds = [int(s) % 2**31 for s in np.random.SeedSequence([seed, 49]).generate_state(3 + 2 * B)]
    record = {"baseline": entry(base_order, seconds, load, width, pair_rank=pairs[0] if pairs else None)}
    for name, floor, s in (("reweighted", 0.0, seeds[0]), ("reweighted_floor", FLOOR, seeds[1])):
        (order, drawable), seconds, load = timed(reweighted_order, template, X_screen, y_screen, s,
                                                 found.importances, base_rank, floor)
        record[name] = entry(order, seconds, load, width, drawable=drawable)
    importances, seconds, load = timed(fit_mdi_oob, template, X_screen, y_screen, seeds[2], 2 * template.n_estimators)
    record["double_trees"] = entry(np.argsort(-importances, kind="stable"), seconds, load, width)
    order, seconds, load = timed(stability_order, template, X_screen, y_screen, seeds[3:], width)
    record["stability"] = entry(order, seconds, load, width)
    return {"seed": seed, "p": X.shape[1], "width": width, "trees": template.n_estimators, **record}


def remove_cohort(stem):
    """The replicate's .bed / .bim / .fam / .npy."""
    for suffix in (".bed", ".bim", ".fam", ".npy"):
        Path(f"{stem}{suffix}").unlink(missing_ok=True)


def summary(records) -> str:
    """A markdown table: per variant, the median and the worst of each replicate's worse causal
    rank, the replicates with both causal columns within screen_width(p) and within 1000, and the
    median seconds with the range of the load averages."""
    lines = ["| variant | median worse rank | worst rank | both within width | both within 1000 | median s | load |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name in VARIANTS:
        entries = [r[name] for r in records]
        worse = [max(e["ranks"]) for e in entries]
        loads = [v for e in entries for v in e["load"]]
        lines.append(f"| {name} | {np.median(worse):g} | {max(worse)} | {sum(e['in_width'] for e in entries)} of "
                     f"{len(entries)} | {sum(e['in_1000'] for e in entries)} of {len(entries)} | "
                     f"{np.median([e['seconds'] for e in entries]):.1f} | {min(loads):.1f}-{max(loads):.1f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--p", type=int, default=100_000)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--effect", type=float, default=1.0)
    parser.add_argument("--seeds", type=lambda s: [int(k) for k in s.split(",")], default=list(range(10)))
    parser.add_argument("--budget-minutes", type=float, default=float("inf"))
    parser.add_argument("--folder", default="/tmp/screen_variants")
    args = parser.parse_args()
    start = time.perf_counter()
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"p{args.p}_n{args.n}_e{args.effect}.jsonl"
    records = [json.loads(line) for line in out.read_text().splitlines()] if out.is_file() else []
    done = {r["seed"] for r in records}
    for seed in args.seeds:
        if seed in done:
            continue
        if time.perf_counter() - start > 60 * args.budget_minutes:
            print(f"# budget of {args.budget_minutes} minutes spent: seeds from {seed} on not run", flush=True)
            break
        stem = write_cohort(folder, args.n, args.p, "marginal", args.effect, seed)
        record = run_replicate(stem, seed)
        gc.collect()
        remove_cohort(stem)
        records.append(record)
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")
        print(json.dumps(record), flush=True)
    print(f"# p={args.p}, n={args.n}, effect {args.effect}: {len(records)} replicates (seeds "
          f"{[r['seed'] for r in records]}); {(time.perf_counter() - start) / 60:.1f} min")
    print(summary(records))


if __name__ == "__main__":
    main()
