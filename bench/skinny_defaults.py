"""Which defaults let Skinny Trees and fit_budget meet a feature budget out of the box (issue 24).

Compares candidate default sets - the estimator's defaults and fit_budget's default search space -
on correlated-linear problems (paper 003, Table 1 design: 8 true features, correlation 0.5) over p,
N and the noise, and optionally (--real) on tox_171 and madelon at a 25 % budget. Per candidate:
the share of problems where fit_budget finds a model within the budget (2 x the true features),
the support F1, the held-out R^2 (AUC on real data) and the fit time; and the same for one plain
fit of the estimator's defaults with feature_budget. Everything runs on one core (n_jobs=1).

    python bench/skinny_defaults.py [--trials 10] [--seeds 2] [--real tox_171 madelon]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import loguniform
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from pyinterp import SkinnyTreesClassifier, SkinnyTreesRegressor
from pyinterp.datasets import make_correlated_linear
from pyinterp.skinny import PAPER_SPACE, fit_budget

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
N_TEST = 500
REAL = ("tox_171", "madelon")
OLD = dict(n_trees=20, depth=4, lambda2=0.01, learning_rate=0.1, batch_size=64, max_epochs=200)
SMALL = dict(n_trees=10, depth=3, learning_rate=0.1, batch_size=32, max_epochs=300)
README_SPACE = {"learning_rate": loguniform(1e-3, 1e-1), "lambda2": loguniform(1e-2, 1e2),
                "temperature": loguniform(1e-4, 1e-1)}
RIDGE_SPACE = {"learning_rate": loguniform(1e-2, 0.3), "lambda2": loguniform(1.0, 1e2),
               "temperature": loguniform(1e-3, 1e-1)}
# name: (estimator parameters, fit_budget's param_distributions)
CANDIDATES = {
    "old defaults + PAPER_SPACE": (OLD, PAPER_SPACE),
    "README settings + its space": ({**SMALL, "lambda2": 0.01}, README_SPACE),
    "old sizes, lambda2=10 + ridge space": ({**OLD, "lambda2": 10.0}, RIDGE_SPACE),
    "small, lambda2=10 + ridge space": ({**SMALL, "lambda2": 10.0}, RIDGE_SPACE),
}


def f1(selected, support):
    tp = len(np.intersect1d(selected, support))
    return 0.0 if tp == 0 else 2 * tp / (len(selected) + len(support))


def synthetic_problems(seeds):
    for p in (100, 300, 1000):
        for n in (200, 1000):
            for noise in (0.5, 1.0):
                for seed in range(seeds):
                    X, y, support = make_correlated_linear(n + N_TEST, p, noise=noise, random_state=seed)
                    yield f"p={p} N={n} noise={noise} seed={seed}", (X[:n], y[:n], X[n:], y[n:]), support, 16


def real_problems(names):
    for name in names:
        data = np.load(DATA / f"{name}.npz")
        X, y = data["X"].astype(np.float64), data["y"]
        X, X_test, y, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=8)
        scaler = StandardScaler().fit(X)
        yield name, (scaler.transform(X), y, scaler.transform(X_test), y_test), None, X.shape[1] // 4


def score(model, X_test, y_test):
    if isinstance(model, SkinnyTreesRegressor):
        return r2_score(y_test, model.predict(X_test))
    proba = model.predict_proba(X_test)
    if proba.shape[1] == 2:
        return roc_auc_score(y_test, proba[:, 1])
    return roc_auc_score(y_test, proba, multi_class="ovo", labels=model.classes_)


def run(problem, params, space, n_trials, seed):
    (X, y, X_test, y_test), support, budget = problem
    est = (SkinnyTreesRegressor if support is not None else SkinnyTreesClassifier)(**params)
    row = {}
    start = time.perf_counter()
    try:
        model = fit_budget(est, X, y, max_features=budget, n_trials=n_trials, param_distributions=space,
                           n_jobs=1, random_state=seed)
        row["ok"] = 1.0
        row["score"] = score(model, X_test, y_test)
        row["k"] = model.n_selected_features_
        row["f1"] = f1(model.selected_features_, support) if support is not None else np.nan
    except ValueError:
        row.update(ok=0.0, score=np.nan, k=np.nan, f1=np.nan)
    row["time"] = time.perf_counter() - start
    # one plain fit of the estimator's defaults, validation rows split off as fit_budget does
    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.2, random_state=seed,
                                                  stratify=None if support is not None else y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = clone_with(est, feature_budget=budget, random_state=seed).fit(X_fit, y_fit, X_val, y_val)
    row["single_ok"] = float(single.best_epoch_ is not None and 0 < single.n_selected_features_ <= budget)
    row["single_f1"] = f1(single.selected_features_, support) if support is not None else np.nan
    return row


def clone_with(est, **params):
    return type(est)(**{**est.get_params(), **params})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--real", nargs="*", default=[], choices=REAL, help="real data sets at a 25 %% budget")
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)  # trials above the budget; counted in the table
    print(f"load average at the start: {os.getloadavg()[0]:.2f}; {args.trials} trials per fit_budget, n_jobs=1")
    problems = list(synthetic_problems(args.seeds)) + (list(real_problems(args.real)))
    rows = {name: [] for name in CANDIDATES}
    for label, data, support, budget in problems:
        for name, (params, space) in CANDIDATES.items():
            row = run((data, support, budget), params, space, args.trials, seed=0)
            row["problem"] = label
            rows[name].append(row)
            print(f"{label:32s} {name:38s} ok={row['ok']:.0f} k={row['k']} F1={row['f1']:.2f} "
                  f"score={row['score']:.3f} single_ok={row['single_ok']:.0f} {row['time']:.1f}s", flush=True)
    print()
    print("| candidate | problems within budget | support F1 | held-out R^2 | real-data AUC | "
          "plain fit within budget | plain fit F1 | fit_budget time s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, rs in rows.items():
        syn = [r for r in rs if not r["problem"] in REAL]
        real = [r for r in rs if r["problem"] in REAL]
        ok = sum(r["ok"] for r in rs)
        mean = lambda key, sel: np.nanmean([r[key] for r in sel]) if sel and not all(np.isnan([r[key] for r in sel])) else np.nan
        auc = ", ".join(f"{r['problem']} {r['score']:.3f}" for r in real) or "-"
        print(f"| {name} | {ok:.0f}/{len(rs)} | {mean('f1', syn):.2f} | {mean('score', syn):.3f} | {auc} | "
              f"{sum(r['single_ok'] for r in rs):.0f}/{len(rs)} | {mean('single_f1', syn):.2f} | "
              f"{sum(r['time'] for r in rs):.0f} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
