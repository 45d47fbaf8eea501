"""Reproduce the simulated columns of the thesis' Table 8.1 (MDI-oob, ch. 8) and Figs 8.1-8.3.

Table 8.1 (simulated): n = 1000 rows, 50 independent discrete features, feature j (1-based) taking
the j + 1 values 0..j; S = 5 relevant features drawn from the first ten.
  classification: P(Y = 1 | X) = logistic(2/5 * sum_{j in S} X_j / j - 1)
  regression:     Y = 1/5 * sum_{j in S} X_j / j + eps,  eps ~ N(0, 100 * Var(1/5 * sum X_j / j))
100 trees, mtry 10, min leaf size 1 (deep) or 100 (shallow), 40 repetitions. Each measure's AUC
for separating the relevant features (label 1) from the noise (label 0) is averaged.

Figs 8.1-8.3: n = 200, X1 ~ N(0, 1), X2 ~ Bernoulli(0.5), X3, X4, X5 uniform over 4, 10, 20
categories, P(Y = 1) = (1 + X2) / 3; 300 trees; MDI against min leaf size (8.1) and max depth (8.2),
MDI-oob against min leaf size (8.3). Saved under docs/results/ when matplotlib is installed. SHAP is the
mean |TreeSHAP value| (pyinterp.importance.shap_values, path-dependent, class 1 for classification)
of the same forest on --shap-rows random training rows.

    python bench/reproduce_mdi_oob.py                 # the full table (40 repetitions) and figures
    python bench/reproduce_mdi_oob.py --reps 5 --no-figures
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from benchkit.paths import DOCS
from benchkit.plotting import pyplot, save
from sklearn.metrics import roc_auc_score

import pyinterp
from pyinterp import importance as imp

# Table 8.1, simulated columns: (deep C, deep R, shallow C, shallow R).
PAPER = {
    "MDI-oob": (0.76, 0.52, 0.75, 0.58),
    "UFI": (0.72, 0.54, 0.75, 0.56),
    "naive-oob": (0.18, 0.10, 0.60, 0.39),
    "SHAP": (0.55, 0.33, 0.68, 0.46),
    "MDA": (0.49, 0.51, 0.50, 0.58),
    "MDI": (0.12, 0.09, 0.63, 0.40),
}
COLUMNS = [("classification", 1), ("regression", 1), ("classification", 100), ("regression", 100)]


def simulate(task, rng, n=1000, p=50):
    levels = np.arange(1, p + 1)
    X = np.column_stack([rng.randint(0, j + 1, n) for j in levels]).astype(np.float64)
    relevant = rng.choice(10, 5, replace=False)
    signal = (X[:, relevant] / levels[relevant]).sum(axis=1) / 5
    if task == "classification":
        y = (rng.rand(n) < 1 / (1 + np.exp(-(2 * signal - 1)))).astype(int)
    else:
        y = signal + rng.randn(n) * np.sqrt(100 * signal.var())
    truth = np.zeros(p, dtype=int)
    truth[relevant] = 1
    return X, y, truth


def one_run(task, leaf, seed, shap_rows):
    rng = np.random.RandomState(seed)
    X, y, truth = simulate(task, rng)
    Forest = pyinterp.RandomForestClassifier if task == "classification" else pyinterp.RandomForestRegressor
    f = Forest(n_estimators=100, max_features=10, min_samples_leaf=leaf, random_state=seed, n_jobs=2).fit(X, y)
    scores = {
        "MDI-oob": imp.mdi_oob(f, X, y, n_jobs=2),
        "UFI": imp.ufi(f, X, y, n_jobs=2),
        "naive-oob": imp.naive_oob(f, X, y, n_jobs=2),
        "MDA": imp.permutation_oob(f, X, y, n_repeats=1, random_state=seed, n_jobs=2),
        "MDI": imp.mdi(f),
    }
    subset = np.random.RandomState(seed).choice(len(X), min(shap_rows, len(X)), replace=False)
    values = imp.shap_values(f, X[subset], n_jobs=2)[0]
    scores["SHAP"] = np.abs(values[..., 1] if task == "classification" else values).mean(axis=0)
    return {name: roc_auc_score(truth, s) for name, s in scores.items()}


def table(reps, shap_rows):
    results = {}
    for task, leaf in COLUMNS:
        runs = [one_run(task, leaf, seed, shap_rows) for seed in range(reps)]
        results[(task, leaf)] = {
            name: (np.mean([r[name] for r in runs]), np.std([r[name] for r in runs], ddof=1) / np.sqrt(reps))
            for name in runs[0]
        }
    header = "measure     " + "".join(f"{'deep' if leaf == 1 else 'shallow'} {task[0].upper():<14}" for task, leaf in COLUMNS)
    print(f"Table 8.1, simulated columns: mean AUC (SE) over {reps} repetitions [paper]")
    print(header)
    for name in PAPER:
        cells = []
        for col, key in enumerate(COLUMNS):
            if name in results[key]:
                mean, se = results[key][name]
                cells.append(f"{mean:.2f}({se:.2f}) [{PAPER[name][col]:.2f}]")
            else:
                cells.append(f"{'n/a':>10} [{PAPER[name][col]:.2f}]")
        print(f"{name:<12}" + "".join(f"{c:<23}" for c in cells))
    deep_c = results[COLUMNS[0]]
    checks = {
        "MDI-oob >= 0.70 (deep C)": deep_c["MDI-oob"][0] >= 0.70,
        "MDI <= 0.25 (deep C)": deep_c["MDI"][0] <= 0.25,
        "MDI-oob > MDI in all four columns": all(results[k]["MDI-oob"][0] > results[k]["MDI"][0] for k in COLUMNS),
    }
    for text, ok in checks.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {text}")


def strobl_data(rng, n=200):
    X = np.column_stack(
        [rng.randn(n), rng.randint(0, 2, n), rng.randint(0, 4, n), rng.randint(0, 10, n), rng.randint(0, 20, n)]
    ).astype(np.float64)
    y = (rng.rand(n) < (1 + X[:, 1]) / 3).astype(int)
    return X, y


def figures(reps):
    plt = pyplot()
    leaves, depths = np.arange(1, 51, 3), np.arange(1, 21)
    curves = {"mdi_leaf": [], "mdi_depth": [], "oob_leaf": []}
    for seed in range(reps):
        X, y = strobl_data(np.random.RandomState(seed))
        rows = {"mdi_leaf": [], "mdi_depth": [], "oob_leaf": []}
        for leaf in leaves:
            f = pyinterp.RandomForestClassifier(n_estimators=300, min_samples_leaf=int(leaf), random_state=seed, n_jobs=2)
            f.fit(X, y)
            rows["mdi_leaf"].append(imp.mdi(f, normalize=False))
            rows["oob_leaf"].append(imp.mdi_oob(f, X, y, n_jobs=2))
        for depth in depths:
            f = pyinterp.RandomForestClassifier(n_estimators=300, max_depth=int(depth), random_state=seed, n_jobs=2)
            rows["mdi_depth"].append(imp.mdi(f.fit(X, y), normalize=False))
        for key in curves:
            curves[key].append(rows[key])
    specs = [
        ("mdi_leaf", leaves, "min leaf size", "MDI", "fig8_1_mdi_vs_min_leaf.png"),
        ("mdi_depth", depths, "max depth", "MDI", "fig8_2_mdi_vs_depth.png"),
        ("oob_leaf", leaves, "min leaf size", "MDI-oob", "fig8_3_mdi_oob_vs_min_leaf.png"),
    ]
    DOCS.mkdir(exist_ok=True)
    for key, xs, xlabel, ylabel, name in specs:
        mean = np.mean(curves[key], axis=0)
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for k, label in enumerate(["X1 N(0,1)", "X2 Bernoulli (relevant)", "X3 4 cat.", "X4 10 cat.", "X5 20 cat."]):
            ax.plot(xs, mean[:, k], marker="o", ms=3, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.axhline(0, color="grey", lw=0.5)
        ax.legend(fontsize=7)
        save(fig, DOCS / name)
        print(f"saved docs/results/{name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--figure-reps", type=int, default=5)
    parser.add_argument("--shap-rows", type=int, default=200, help="rows explained per run for SHAP")
    parser.add_argument("--no-figures", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    table(args.reps, args.shap_rows)
    if not args.no_figures:
        try:
            figures(args.figure_reps)
        except ImportError:
            print("matplotlib is not installed: figures skipped (pip install '.[plot]')")
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
