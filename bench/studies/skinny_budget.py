"""Does Skinny Trees' default meet small feature budgets on wide data (issue 53)? lambda2="auto"
sets the ridge from p, K and the run's steps; this measures it on budgets far below the K = p / 4
it was chosen on, with and without the search that trains again with the ridge doubled when the
model keeps more than K features, halved when it keeps none (then the geometric mean of the last
too weak and too strong), up to AUTO_RIDGE_RETRIES times.

Real data (standardised on the training rows): colon (62 x 2000), glioma (50 x 4434),
prostate_ge (102 x 5966), tox_171 (171 x 5748); budgets K = 5, 10, 20, 50; three stratified
70/30 splits; per fit a quarter of the training rows validates (the model returned is the best
epoch within K), or none (``--plain``: the last epoch). Per (data, K) and setting: fits within
the budget (1..K features, no warning) / fits, mean features kept, mean test AUC, the lambda2
range and the mean CPU time of a fit; and as a reference, a 500-tree forest's K most important
features (MDI) with a forest refitted on them. One thread.

    python bench/studies/skinny_budget.py [--data colon glioma prostate_ge tox_171] [--budgets 5 10 20 50]
        [--splits 3] [--plain]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.data import standardised_splits
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

import pyinterp.skinny.estimators as skinny
from pyinterp import RandomForestClassifier, SkinnyTreesClassifier

RETRIES = skinny.AUTO_RIDGE_RETRIES  # the default, before fit() sets the module's for a setting


def splits(name, count):
    """(X_fit, X_val, X_test, y_fit, y_val, y_test) per split, standardised on the training rows."""
    for seed, (X_train, X_test, y_train, y_test) in enumerate(standardised_splits(name, count, 0.3)):
        X_fit, X_val, y_fit, y_val = train_test_split(X_train, y_train, test_size=0.25, stratify=y_train,
                                                      random_state=seed)
        yield X_fit, X_val, X_test, y_fit, y_val, y_test


def auc(model, X, y):
    if model.n_selected_features_ == 0:
        return 0.5
    proba = model.predict_proba(X)
    if proba.shape[1] == 2:
        return roc_auc_score(y, proba[:, 1])
    return roc_auc_score(y, proba, multi_class="ovr", labels=model.classes_)


def fit(part, budget, retries, plain, seed):
    X_fit, X_val, X_test, y_fit, y_val, y_test = part
    skinny.AUTO_RIDGE_RETRIES = retries
    start = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SkinnyTreesClassifier(feature_budget=budget, random_state=seed)
        if plain:
            model.fit(np.vstack([X_fit, X_val]), np.concatenate([y_fit, y_val]))
        else:
            model.fit(X_fit, y_fit, X_val, y_val)
    return {"kept": model.n_selected_features_, "auc": auc(model, X_test, y_test), "lambda2": model.lambda2_,
            "seconds": time.process_time() - start, "warned": bool(caught)}


def forest_top(part, budget, seed):
    """The reference: a 500-tree forest's K most important features (MDI on the training rows),
    then a forest refitted on them alone."""
    X_fit, X_val, X_test, y_fit, y_val, y_test = part
    X_train, y_train = np.vstack([X_fit, X_val]), np.concatenate([y_fit, y_val])
    start = time.process_time()
    ranked = RandomForestClassifier(500, random_state=seed).fit(X_train, y_train).feature_importances_
    top = np.argsort(-ranked, kind="stable")[:budget]
    model = RandomForestClassifier(500, random_state=seed).fit(X_train[:, top], y_train)
    proba = model.predict_proba(X_test[:, top])
    score = (roc_auc_score(y_test, proba[:, 1]) if proba.shape[1] == 2 else
             roc_auc_score(y_test, proba, multi_class="ovr", labels=model.classes_))
    return {"kept": budget, "auc": score, "lambda2": np.nan, "seconds": time.process_time() - start}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", default=["colon", "glioma", "prostate_ge", "tox_171"])
    parser.add_argument("--budgets", nargs="+", type=int, default=[5, 10, 20, 50])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--plain", action="store_true", help="no validation rows: the last epoch is returned")
    args = parser.parse_args()
    print(f"# {'plain fits' if args.plain else 'with validation rows'}; load average {os.getloadavg()[0]:.2f}")
    print("| data | K | setting | within K | kept | test AUC | lambda2 | CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.data:
        parts = list(splits(name, args.splits))
        for budget in args.budgets:
            for setting, retries in (("no search", 0), ("search (default)", RETRIES)):
                rows = [fit(part, budget, retries, args.plain, seed) for seed, part in enumerate(parts)]
                row(name, budget, setting, rows)
            row(name, budget, "forest top K, refitted", [forest_top(part, budget, seed)
                                                          for seed, part in enumerate(parts)])
    print(f"# load average {os.getloadavg()[0]:.2f}")


def row(name, budget, setting, rows):
    """A markdown row of the table."""
    within = sum(1 <= r["kept"] <= budget for r in rows)
    lambdas = [r["lambda2"] for r in rows]
    ridge = "" if np.isnan(lambdas).all() else f"{min(lambdas):.0f}-{max(lambdas):.0f}"
    print(f"| {name} | {budget} | {setting} | {within}/{len(rows)} | {np.mean([r['kept'] for r in rows]):.1f} | "
          f"{np.mean([r['auc'] for r in rows]):.3f} | {ridge} | {np.mean([r['seconds'] for r in rows]):.1f} |",
          flush=True)


if __name__ == "__main__":
    main()
