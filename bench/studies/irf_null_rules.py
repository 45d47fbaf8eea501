"""How often iRF's default reports a rule (tier 0) where there is none (issue 53: no method returns a
degenerate answer silently).

Data without interactions, n rows of p uniform features: y pure noise, or y additive in two
features (x0 + x1 + noise, SNR 2). IterativeRandomForest at its defaults, seeds 0..S-1; printed per
design: the fits with at least one set in tier 0 and the number of such sets per fit, with the
default's sta_mip filter (rule_tiers.MIP_SHARE) and with R's (one half) on the same tables; and
the held-out check the command line offers (--holdout): the same fit on half the rows, its tier-0
sets tested on the other half with interaction_pvalues, and how many of them have q <= 0.1.

    python bench/studies/irf_null_rules.py [--seeds 5] [--n 1000] [--p 10 50 200]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.timing import load_line

from pyinterp import IterativeRandomForest
from pyinterp.interactions import NoInteractionWarning
from pyinterp.interactions.rule_tiers import rule_tiers
from pyinterp.significance import interaction_pvalues


def design(kind, n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    if kind == "noise":
        return X, rng.random(n)
    signal = X[:, 0] + X[:, 1]
    return X, signal + np.sqrt(signal.var() / 2.0) * rng.standard_normal(n)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--p", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--n-jobs", type=int, default=1)
    args = parser.parse_args()
    print(load_line(), flush=True)
    for kind in ("noise", "additive"):
        for p in args.p:
            rules, r_rules, tested, passed, seconds = [], [], 0, 0, []
            for seed in range(args.seeds):
                X, y = design(kind, args.n, p, seed)
                start = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", NoInteractionWarning)
                    table = IterativeRandomForest(random_state=seed, n_jobs=args.n_jobs).fit(X, y).interactions_
                    seconds.append(time.process_time() - start)
                    rules.append(int((table["tier"] == 0).sum()) if len(table) else 0)
                    columns = {c: table[c] for c in table.columns}
                    r_rules.append(int((rule_tiers(table.features, columns, mip_share=0.5) == 0).sum())
                                   if len(table) else 0)
                    half = args.n // 2
                    model = IterativeRandomForest(random_state=seed, n_jobs=args.n_jobs).fit(X[:half], y[:half])
                found = model.interactions_
                if len(found) and (found["tier"] == 0).any():
                    rules_found = found.select(found["tier"] == 0)
                    result = interaction_pvalues(model, X[half:], y[half:], interactions=rules_found)
                    tested += len(result)
                    passed += int((np.asarray(result["qvalue"]) <= 0.1).sum())
            print(f"{kind:8s} n={args.n} p={p:4d}: fits with a rule {sum(r > 0 for r in rules)} of {args.seeds}, "
                  f"rules per fit {rules} (R's sta_mip filter: {r_rules}); held out (half the rows each): "
                  f"{passed} of {tested} tier-0 sets with q <= 0.1; {np.mean(seconds):.1f} CPU s a fit", flush=True)


if __name__ == "__main__":
    main()
