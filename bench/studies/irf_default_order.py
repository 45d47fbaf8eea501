"""Which order of iRF's table ranks the true rules first (issue 53, item 1): the study that set
IterativeRandomForest's default, style="rules" (docs/results/irf_default_order.md has the tables).

Each data set is fitted once (iRF at its defaults with R's conventions and RIT on both sides of the
cut; the tables are cached under --cache, so every order is read off the same fits) with LSSFind's
rank mode beside it, and each true rule's rank is read under every order in ORDERS. The sets:

    tune    irf_recovery.py's grid at orders 2 and 3, replicates 0-3 (the orders were designed here)
    order4  the same grid at order 4
    fresh, fresh2, fresh3, fresh4
            LSS designs with rules of mixed orders, some lowering y (lss_signed), 18 data sets each;
            fresh-fresh3 were read while choosing, fresh4 only once the default was fixed; fresh5
            once the 2026-11-30 candidates were fixed (and then to set the sta_mip filter), fresh6
            only once that filter was fixed

    python bench/studies/irf_default_order.py --fit tune --cache C     # fit and cache (and the others)
    python bench/studies/irf_default_order.py --cache C --csv bench/results_data/irf_default_order.csv
"""

from __future__ import annotations

import argparse
import csv
import itertools
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.timing import load_line

from pyinterp import IterativeRandomForest, LSSFind
from pyinterp.datasets import make_lss
from pyinterp.interactions.rule_tiers import (FILTERED, MIP_SHARE, NESTED, RULE, order_keys, passes_filters,
                                              rule_tiers)


def lss_signed(n, p, orders, signs, snr, seed):
    """LSS regression with one rule per order (consecutive blocks, all features below tau_j as in
    make_lss, about half the rows in the union) and coefficient signs[j] (+1 / -1)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, p))
    q = 1.0 - 0.5 ** (1.0 / len(orders))
    signal, truth, start = np.zeros(n), [], 0
    for order, sign in zip(orders, signs):
        block = list(range(start, start + order))
        signal += sign * (X[:, block] < q ** (1.0 / order)).all(axis=1)
        truth.append((tuple((j, -1) for j in block), sign))
        start += order
    y = signal + np.sqrt(signal.var() / snr) * rng.standard_normal(n)
    return X, y, truth


# (orders, coefficient signs, p, SNR) of the fresh designs; each set's n and first seed.
SHAPES = [((2, 3, 3), (1, 1, 1), 200, 2.0), ((2, 3, 3), (1, 1, -1), 200, 2.0), ((2, 2), (1, -1), 500, 2.0),
          ((3, 3), (1, 1), 50, 5.0), ((2, 4), (1, 1), 200, 2.0), ((2, 2, 3), (1, 1, 1), 1000, 5.0)]
FRESH = {
    "fresh": (2000, 7000, SHAPES),
    "fresh2": (2000, 8000, SHAPES),
    "fresh3": (1500, 9000, [((2, 3, 3), (1, 1, -1), 500, 1.0), ((2, 2), (1, -1), 200, 5.0),
                            ((3, 3), (1, -1), 200, 2.0), ((2, 3), (1, 1), 1000, 1.0),
                            ((2, 2, 2), (1, 1, 1), 200, 2.0), ((4, 2), (-1, 1), 100, 5.0)]),
    "fresh4": (1200, 10000, [((2, 2, 2), (1, -1, 1), 300, 2.0), ((3, 2), (1, 1), 50, 1.0),
                             ((3, 3, 3), (1, 1, 1), 200, 5.0), ((2, 4), (-1, 1), 500, 2.0),
                             ((2, 2), (1, 1), 1000, 2.0), ((3,), (-1,), 100, 2.0)]),
    # held out from the 2026-11-30 change (candidates from every bootstrap, stability order)
    "fresh5": (1600, 11000, [((2, 3), (1, -1), 400, 2.0), ((3, 3, 2), (1, 1, 1), 100, 2.0),
                             ((4,), (1,), 200, 5.0), ((2, 2, 2, 2), (1, 1, -1, 1), 300, 5.0),
                             ((3,), (-1,), 1000, 2.0), ((2, 4), (1, 1), 50, 1.0)]),
    # held out from the stricter sta_mip filter (rule_tiers.MIP_SHARE), which fresh5 was read for
    "fresh6": (1800, 12000, [((2, 2), (1, 1), 100, 2.0), ((3,), (1,), 500, 1.0), ((2, 3, 4), (1, 1, 1), 200, 5.0),
                             ((3, 3), (-1, 1), 300, 2.0), ((2,), (-1,), 50, 2.0), ((4, 2), (1, -1), 1000, 5.0)]),
}


def designs(which):
    """(key, X, y, truth): truth = [(signed set, direction)]."""
    if which in ("tune", "order4"):
        orders = (2, 3) if which == "tune" else (4,)
        for order, p, snr, rep in itertools.product(orders, (50, 200, 1000), (1.0, 2.0, 5.0, 10.0), range(4)):
            X, y, true = make_lss(n_samples=1000, n_features=p, n_interactions=2, order=order, snr=snr,
                                  random_state=1000 * order + rep)
            yield f"{which} o{order} p{p} snr{snr:g} r{rep}", X, y, [(t, 1) for t in true]
        return
    n, seed, shapes = FRESH[which]
    for (orders, signs, p, snr), rep in itertools.product(shapes, range(3)):
        X, y, truth = lss_signed(n, p, orders, signs, snr, seed + rep)
        name = ",".join(f"{o}{'+' if s > 0 else '-'}" for o, s in zip(orders, signs))
        yield f"{which} {name} p{p} snr{snr:g} r{rep}", X, y, truth


def fit(which, cache, n_jobs, **params):
    cache.mkdir(parents=True, exist_ok=True)
    print(load_line(), flush=True)
    for key, X, y, truth in designs(which):
        path = cache / (key.replace(" ", "_") + ".pkl")
        seed = int(key.rsplit("r", 1)[1])
        lss = cache / "lssrank" / path.name
        if not lss.exists():  # the peer: LSSFind's rank mode, as irf_recovery.py runs it (signed sets, any direction)
            lss.parent.mkdir(exist_ok=True)
            features = LSSFind(mode="rank", max_order=4, random_state=seed, n_jobs=n_jobs).fit(X, y).interactions_.features
            with lss.open("wb") as f:
                pickle.dump([features.index(t) + 1 if t in features else 0 for t, _ in truth], f)
        if path.exists():
            continue
        start = time.perf_counter()
        table = IterativeRandomForest(random_state=seed, n_jobs=n_jobs, **params).fit(X, y).interactions_
        seconds = time.perf_counter() - start
        with path.open("wb") as f:
            pickle.dump({"key": key, "truth": truth, "features": table.features,
                         "columns": {c: np.asarray(table[c]) for c in table.columns}, "seconds": seconds}, f)
        print(f"{key}: {len(table.features)} sets, {seconds:.0f} s", flush=True)


def load(cache):
    for path in sorted(Path(cache).glob("*.pkl")):
        with path.open("rb") as f:
            record = pickle.load(f)
        lss = path.parent / "lssrank" / path.name
        if lss.exists():
            with lss.open("rb") as f:
                record["lssrank"] = pickle.load(f)
        yield record


def ordered(tiers, c, within):
    """Indices in the order (tier, -c[within])."""
    return np.lexsort((-np.nan_to_num(c[within], nan=-np.inf), tiers))


def walked(features, c, tiers, within):
    """The tiers after a walk down tier 0 by ``within``: a set holding the other side of an item of
    a set kept before on the other side of the cut moves to tier 1 (the variant fresh3 rejected)."""
    tiers = tiers.copy()
    kept = {1: set(), -1: set()}
    for i in ordered(tiers, c, within):
        if tiers[i] == RULE:
            d = int(c["direction"][i])
            if any((k, -sign) in kept[-d] for k, sign in features[i]):
                tiers[i] = NESTED
            else:
                kept[d].update(features[i])
    return tiers


def gain_tiers(f, c):
    """The first try, nesting by precision: of passing S_i < S_j (same direction), S_i moves to tier
    1 when S_j's log precision gain over it, per added feature, is at least half mip(S_i), else S_j."""
    ok = passes_filters(c, mip_share=0.5)
    tiers = np.where(ok, RULE, FILTERED)
    for i, j in itertools.permutations(np.flatnonzero(ok), 2):
        if frozenset(f[i]) < frozenset(f[j]) and c["direction"][i] == c["direction"][j]:
            gain = np.log(c["precision"][j] / c["precision"][i]) / (len(f[j]) - len(f[i]))
            tiers[i if gain >= 0.5 * c["mip"][i] else j] = NESTED
    return tiers


def r_tiers(f, c, **kw):
    """The tiers with R's sta_mip filter (one half), as every order but the default's was read."""
    return rule_tiers(f, c, mip_share=0.5, **kw)


def rules_order(f, c, mip_share=MIP_SHARE):
    """The default's order (order_keys), with the tiers of the given sta_mip filter."""
    return np.lexsort(order_keys({**c, "tier": rule_tiers(f, c, mip_share=mip_share)})[::-1])


ORDERS = {
    # The table before: the class of interest's sets only, by cpe, then stability.
    "R (one side)": lambda f, c: np.lexsort((-c["stability"], -np.nan_to_num(c["cpe"], nan=-np.inf),
                                             c["direction"] < 0)),
    "R, both sides": lambda f, c: np.lexsort((-c["stability"], -np.nan_to_num(c["cpe"], nan=-np.inf))),
    # irf_table_order.py's filt_stab: the sets passing R's filters first, by stability, then cpe
    "filter, stability": lambda f, c: np.lexsort((-np.nan_to_num(c["cpe"], nan=-np.inf), -c["stability"],
                                                  ~((c["sta_fsd"] > 0.5) & (c["sta_mip"] > 0.5)))),
    "gain tiers, mip": lambda f, c: ordered(gain_tiers(f, c), c, "mip"),
    "tiers, prevalence": lambda f, c: ordered(r_tiers(f, c, other_sides=False), c, "prevalence"),
    "tiers+walk, prev.": lambda f, c: ordered(walked(f, c, r_tiers(f, c, other_sides=False), "prevalence"), c,
                                              "prevalence"),
    "tiers, cpe": lambda f, c: ordered(r_tiers(f, c, other_sides=False), c, "cpe"),
    "rules, cpe": lambda f, c: ordered(r_tiers(f, c), c, "cpe"),
    "rules, stability": lambda f, c: np.lexsort((-np.nan_to_num(c["cpe"], nan=-np.inf), -c["stability"],
                                                r_tiers(f, c))),
    "rules, R's mip filter": lambda f, c: rules_order(f, c, mip_share=0.5),
    "rules (default)": lambda f, c: rules_order(f, c),
    "rules, closure 0.6": lambda f, c: ordered(r_tiers(f, c, closure=0.6), c, "cpe"),
    "rules, closure 0.8": lambda f, c: ordered(r_tiers(f, c, closure=0.8), c, "cpe"),
}


def ranks(record, order):
    if order == "LSSrank":
        return record.get("lssrank", [-1] * len(record["truth"]))
    features, c = record["features"], {k: np.asarray(v, float) for k, v in record["columns"].items()}
    idx = ORDERS[order](features, c)
    position = {(tuple(features[i]), int(c["direction"][i])): r + 1 for r, i in enumerate(idx)}
    return [position.get((tuple(t), d), 0) for t, d in record["truth"]]


def report(cache, shown, out=None):
    """Prints the table of every cached design by set, order and direction; with ``out``, writes
    each true rule's rank under every order (and LSSrank's) as CSV."""
    records = list(load(cache))
    if out is not None:
        with open(out, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["design", "rule", "order", "direction", *ORDERS, "LSSrank"])
            for r in records:
                table = {name: ranks(r, name) for name in [*ORDERS, "LSSrank"]}
                for j, (t, d) in enumerate(r["truth"]):
                    writer.writerow([r["key"], j, len(t), d, *(table[name][j] for name in table)])
    groups = {}
    for r in records:
        which = r["key"].split(" ")[0]
        for j, (t, d) in enumerate(r["truth"]):
            group = f"{which} order {len(t)}" + (" (lowers y)" if d < 0 else "")
            groups.setdefault(group, []).append((r, j))
    print("share of true rules in the top 5 / top k (k = the number of true rules) / median rank (0: absent)")
    print(f"{'group':28s} {'n':>4s}  " + "  ".join(f"{o:>17s}" for o in shown))
    for group in sorted(groups):
        cells = []
        for order in shown:
            rk = np.array([ranks(r, order)[j] for r, j in groups[group]])
            if (rk < 0).any():
                cells.append("-")
                continue
            k = np.array([len(r["truth"]) for r, j in groups[group]])
            found = rk > 0
            cells.append(f"{np.mean(found & (rk <= 5)):.2f}/{np.mean(found & (rk <= k)):.2f}/"
                         f"{np.median(np.where(found, rk, 999)):g}")
        print(f"{group:28s} {len(groups[group]):4d}  " + "  ".join(f"{x:>17s}" for x in cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", choices=["tune", "order4", *FRESH])
    parser.add_argument("--cache", default="irf_default_order_cache")
    parser.add_argument("--csv", help="also write each true rule's ranks here (bench/results_data/irf_default_order.csv)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--default", action="store_true",
                        help="fit iRF at its defaults, not with style='R' and RIT on both sides (the first fits)")
    parser.add_argument("--orders", nargs="+", choices=[*ORDERS, "LSSrank"], help="the columns to print (all)")
    args = parser.parse_args()
    if args.fit:
        fit(args.fit, Path(args.cache), args.n_jobs, **({} if args.default else {"style": "R", "rit_leaves": "both"}))
    else:
        report(args.cache, args.orders or [*ORDERS, "LSSrank"], args.csv)


if __name__ == "__main__":
    main()
