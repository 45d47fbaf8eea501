"""Accuracy parity with scikit-learn: mean held-out R^2 / accuracy over 5 seeds (same split per
seed for both libraries, identical hyperparameters), with the standard error of each mean and
whether pyinterp's mean lies within one standard error of scikit-learn's.

    python bench/parity_forest.py             # 5 seeds, as the acceptance criterion says
    python bench/parity_forest.py --seeds 40  # tighter comparison
    python bench/parity_forest.py --trees 500 # less forest noise: differences left are the algorithms'
"""

from __future__ import annotations

import argparse

import numpy as np
from benchkit.data import shared_npz, two_rules
from sklearn import datasets, ensemble
from sklearn.model_selection import train_test_split

import pyinterp


def sets():
    yield "diabetes (reg)", *datasets.load_diabetes(return_X_y=True), "regression"
    yield "friedman1 (reg)", *datasets.make_friedman1(n_samples=1000, noise=1.0, random_state=0), "regression"
    yield "two rules (reg)", *two_rules(2000, 50), "regression"
    yield "breast_cancer", *datasets.load_breast_cancer(return_X_y=True), "classification"
    yield "digits", *datasets.load_digits(return_X_y=True), "classification"
    for name in ("allaml", "colon", "prostate_ge", "all_bioc"):
        d = shared_npz(name)
        if d is not None:
            yield f"{name}.npz", d["X"], d["y"], "classification"


def main(n_seeds=5, n_trees=100):
    print(f"{n_trees} trees, {n_seeds} seeds")
    print(f"{'data set':<18} {'n x p':>12} {'pyinterp':>16} {'scikit-learn':>16} {'within 1 SE':>12}")
    for name, X, y, task in sets():
        kw = dict(n_estimators=n_trees, n_jobs=2)
        if task == "regression":
            kw["max_features"] = 0.33
            ours, theirs = pyinterp.RandomForestRegressor, ensemble.RandomForestRegressor
        else:
            ours, theirs = pyinterp.RandomForestClassifier, ensemble.RandomForestClassifier
        a, b = [], []
        for seed in range(n_seeds):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
            a.append(ours(random_state=seed, **kw).fit(Xtr, ytr).score(Xte, yte))
            b.append(theirs(random_state=seed, **kw).fit(Xtr, ytr).score(Xte, yte))
        a, b = np.array(a), np.array(b)
        se_a, se_b = a.std(ddof=1) / np.sqrt(n_seeds), b.std(ddof=1) / np.sqrt(n_seeds)
        within = abs(a.mean() - b.mean()) <= se_b
        print(f"{name:<18} {f'{X.shape[0]}x{X.shape[1]}':>12} {a.mean():>8.3f} ± {se_a:.3f} "
              f"{b.mean():>8.3f} ± {se_b:.3f} {'yes' if within else 'NO':>12}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args()
    main(args.seeds, args.trees)
