"""Which defaults let Skinny Trees and fit_budget meet a feature budget out of the box (issue 24).

Compares candidate default sets - the estimator's defaults and fit_budget's default search space -
on correlated-linear problems (paper 003, Table 1 design: 8 true features, correlation 0.5) over p,
N and the noise, and optionally (--real) on tox_171 and madelon at a 25 % budget. Per candidate:
the share of problems where fit_budget finds a model within the budget (2 x the true features),
the support F1, the held-out R^2 (AUC on real data) and the fit time; and the same for one plain
fit of the estimator's defaults with feature_budget. Everything runs on one core (n_jobs=1).

    python bench/studies/skinny_defaults.py [--trials 10] [--seeds 2] [--real tox_171 madelon]

``--lambda2`` runs the study behind ``lambda2="auto"`` instead: one plain ``fit(X, y)`` with
``feature_budget`` and otherwise the estimator's defaults, per lambda2 candidate (fixed values, and
the step-scaled rule lambda2 = E m(2^d-1) / (2 lr T), T the run's SGD steps, which fixes the ridge's
total shrink exp(-E) of an unused group), on correlated-linear problems (p {100, 300, 1000} x
N {300, 1000} x seeds, K = 16), on real data at K = p / 4 (stratified 80/20 splits, one per seed)
and on scikit-learn's diabetes (K = 5) and breast-cancer (K = 8) data; plus the no-budget fits of
the last two at the default lambda2. Per candidate: fits within the budget (1..K features, so no
warning), fits that dropped every feature, support F1, held-out R^2 / AUC.

    python bench/studies/skinny_defaults.py --lambda2 [--seeds 3] [--real colon glioma prostate_ge]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

import numpy as np
from benchkit.data import require_shared_npz, standardised_splits
from benchkit.timing import load
from scipy.stats import loguniform
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from pyinterp import SkinnyTreesClassifier, SkinnyTreesRegressor
from pyinterp.datasets import make_correlated_linear
from pyinterp.skinny import PAPER_SPACE, fit_budget

N_TEST = 500
REAL = ("tox_171", "madelon", "colon", "glioma", "prostate_ge")
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
        data = require_shared_npz(name)
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


# -- the lambda2="auto" study (--lambda2) -----------------------------------------------------------

def steps_rule(exponent):
    """lambda2 that shrinks a group the loss leaves alone by exp(-exponent) over the run's SGD steps."""
    def rule(est, n_rows, p=None, budget=None):
        steps = est.max_epochs * -(-n_rows // est.batch_size)
        return exponent * est.n_trees * (2**est.depth - 1) / (2 * est.learning_rate * steps)
    rule.__name__ = f"steps E={exponent:g}"
    return rule


def budget_rule(per_log):
    """steps_rule with E = per_log * ln(p / K): more shrink the more features the budget removes."""
    def rule(est, n_rows, p, budget):
        return steps_rule(per_log * np.log(p / max(budget, 1)))(est, n_rows, p, budget)
    rule.__name__ = f"budget E={per_log:g} ln(p/K)"
    return rule


LAMBDA2_CANDIDATES = [0.01, 1.0, 3.0, 10.0, 30.0, 100.0, steps_rule(10), steps_rule(20), steps_rule(40),
                      budget_rule(5), budget_rule(7)]


def candidate_name(c):
    return c.__name__ if callable(c) else f"{c:g}"


def sklearn_problems(seeds):
    from sklearn.datasets import load_breast_cancer, load_diabetes
    for name, loader, budget in (("diabetes", load_diabetes, 5), ("breast_cancer", load_breast_cancer, 8)):
        X, y = loader(return_X_y=True)
        for seed in range(seeds):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed,
                                                      stratify=y if name == "breast_cancer" else None)
            scaler = StandardScaler().fit(X_tr)
            yield (f"{name} seed={seed}", name, (scaler.transform(X_tr), y_tr, scaler.transform(X_te), y_te),
                   None, budget, name == "diabetes", seed)


def lambda2_problems(seeds, real):
    for p in (100, 300, 1000):
        for n in (300, 1000):
            for seed in range(seeds):
                X, y, support = make_correlated_linear(n + N_TEST, p, random_state=seed)
                yield (f"p={p} N={n} seed={seed}", f"linear p={p}", (X[:n], y[:n], X[n:], y[n:]), support, 16,
                       True, seed)
    for name in real:
        for seed, (X_tr, X_te, y_tr, y_te) in enumerate(standardised_splits(name, seeds, 0.2)):
            yield (f"{name} seed={seed}", name, (np.nan_to_num(X_tr), y_tr, np.nan_to_num(X_te), y_te), None,
                   X_tr.shape[1] // 4, False, seed)
    yield from sklearn_problems(seeds)


def lambda2_study(seeds, real):
    rows = []
    for label, group, (X, y, X_test, y_test), support, budget, regression, seed in lambda2_problems(seeds, real):
        Est = SkinnyTreesRegressor if regression else SkinnyTreesClassifier
        for cand in LAMBDA2_CANDIDATES:
            lambda2 = cand(Est(), *X.shape, budget) if callable(cand) else cand
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                model = Est(lambda2=lambda2, feature_budget=budget, random_state=seed).fit(X, y)
            k = model.n_selected_features_
            row = dict(problem=label, group=group, cand=candidate_name(cand), lambda2=lambda2, k=k, budget=budget,
                       within=0 < k <= budget, empty=k == 0, warned=any(w.category is ConvergenceWarning for w in caught),
                       f1=f1(model.selected_features_, support) if support is not None else np.nan,
                       score=score(model, X_test, y_test) if k > 0 or regression else 0.5,
                       time=time.perf_counter() - start)
            rows.append(row)
            print(f"{label:26s} {row['cand']:20s} lambda2={lambda2:8.3g} k={k:5d}/{budget:<5d} F1={row['f1']:.2f} "
                  f"score={row['score']:.3f} {row['time']:.1f}s", flush=True)
    print("\nwithout a budget, lambda2 = 0.01 (the default) against 10:")
    for label, group, (X, y, X_test, y_test), _, _, regression, seed in sklearn_problems(seeds):
        Est = SkinnyTreesRegressor if regression else SkinnyTreesClassifier
        for lambda2 in (0.01, 10.0):
            model = Est(lambda2=lambda2, random_state=seed).fit(X, y)
            print(f"{label:26s} lambda2={lambda2:g} k={model.n_selected_features_} "
                  f"score={score(model, X_test, y_test) if model.n_selected_features_ else 0.5:.3f}", flush=True)
    groups = list(dict.fromkeys(r["group"] for r in rows))
    print("\nper candidate and problem group: fits within the budget (1..K) / fits | fits with 0 features | "
          "mean features | mean support F1 | mean held-out R^2 (linear, diabetes) or AUC")
    print("| lambda2 | " + " | ".join(groups) + " |")
    print("|---|" + "---|" * len(groups))
    for cand in dict.fromkeys(r["cand"] for r in rows):
        cells = []
        for g in groups:
            sel = [r for r in rows if r["cand"] == cand and r["group"] == g]
            cell = (f"{sum(r['within'] for r in sel)}/{len(sel)}, {sum(r['empty'] for r in sel)} empty, "
                    f"k {np.mean([r['k'] for r in sel]):.0f}")
            if not np.isnan(sel[0]["f1"]):
                cell += f", F1 {np.mean([r['f1'] for r in sel]):.2f}"
            cell += f", {np.mean([r['score'] for r in sel]):.3f}"
            if not cand[0].isdigit():
                cell += f" (lambda2 {min(r['lambda2'] for r in sel):.3g}-{max(r['lambda2'] for r in sel):.3g})"
            cells.append(cell)
        print(f"| {cand} | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--real", nargs="*", default=[], choices=REAL, help="real data sets at a 25 %% budget")
    parser.add_argument("--lambda2", action="store_true", help="the lambda2='auto' study instead")
    args = parser.parse_args()
    if args.lambda2:
        print(f"load average at the start: {load():.2f}; one core")
        lambda2_study(args.seeds, args.real)
        print(f"\nload average at the end: {load():.2f}")
        return
    warnings.simplefilter("ignore", ConvergenceWarning)  # trials above the budget; counted in the table
    print(f"load average at the start: {load():.2f}; {args.trials} trials per fit_budget, n_jobs=1")
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
    print(f"\nload average at the end: {load():.2f}")


if __name__ == "__main__":
    main()
