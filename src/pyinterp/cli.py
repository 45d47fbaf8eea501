"""The ``pyinterp`` command. ``pyinterp demo`` fits a forest on simulated data with known signal
(or on a CSV file) and prints a report: fit time, out-of-bag score, top features by importance,
and the interactions found by LSSFind (regression) and iterative random forests."""

from __future__ import annotations

import argparse
import csv
import sys
import time

import numpy as np

from .datasets import make_lss
from .forest import RandomForestClassifier, RandomForestRegressor
from .importance import mdi_oob
from .interactions import IterativeRandomForest, LSSFind


def _read_csv(path, target):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 3:
        raise SystemExit(f"{path}: need a header row and at least two data rows")
    header, body = rows[0], rows[1:]
    if target not in header:
        raise SystemExit(f"{path}: no column named {target!r}; columns are {', '.join(header)}")
    t = header.index(target)
    names = [h for j, h in enumerate(header) if j != t]
    X = np.empty((len(body), len(names)))
    for i, row in enumerate(body):
        if len(row) != len(header):
            raise SystemExit(f"{path}: row {i + 2} has {len(row)} fields, the header has {len(header)}")
        values = [v for j, v in enumerate(row) if j != t]
        try:
            X[i] = [float(v) for v in values]
        except ValueError:
            bad = next(n for n, v in zip(names, values) if not _is_number(v))
            raise SystemExit(f"{path}: row {i + 2}, column {bad!r} is not a number") from None
    return X, np.array([row[t] for row in body]), names


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _as_target(labels, task):
    numeric = all(_is_number(v) for v in labels)
    if task == "auto":
        values = np.array([float(v) for v in labels]) if numeric else None
        few_integers = numeric and np.all(values == np.round(values)) and len(np.unique(values)) <= 20
        task = "classification" if not numeric or few_integers else "regression"
    if task == "regression":
        if not numeric:
            raise SystemExit("the target column is not numeric; use --task classification")
        return np.array([float(v) for v in labels]), task
    return labels, task


def demo(args):
    if args.csv is None:
        X, y, interactions = make_lss(
            n_samples=args.n_samples, n_features=args.n_features, n_interactions=2, order=2, snr=5.0,
            random_state=args.random_state,
        )
        names = [f"x{j}" for j in range(X.shape[1])]
        relevant = {k for s in interactions for k, _ in s}
        task = "regression"
        rules = " + ".join("1(" + " & ".join(f"x{k} < tau" for k, _ in s) + ")" for s in interactions)
        print(f"Simulated LSS data: n={X.shape[0]}, p={X.shape[1]}, y = {rules} + noise (SNR 5)")
    else:
        if args.target is None:
            raise SystemExit("give --target COLUMN with a CSV file")
        X, labels, names = _read_csv(args.csv, args.target)
        y, task = _as_target(labels, args.task)
        relevant = None
        print(f"{args.csv}: n={X.shape[0]}, p={X.shape[1]}, target {args.target!r} ({task})")

    Forest = RandomForestRegressor if task == "regression" else RandomForestClassifier
    forest = Forest(
        n_estimators=args.n_estimators, oob_score=True, n_jobs=args.n_jobs, random_state=args.random_state
    )
    start = time.perf_counter()
    forest.fit(X, y)
    elapsed = time.perf_counter() - start
    score_name = "R^2" if task == "regression" else "accuracy"
    print(f"Fitted {args.n_estimators} trees in {elapsed:.2f} s; out-of-bag {score_name} = {forest.oob_score_:.3f}")

    mdi = forest.feature_importances_
    start = time.perf_counter()
    debiased = mdi_oob(forest, X, y, n_jobs=args.n_jobs)
    oob_elapsed = time.perf_counter() - start
    order = np.argsort(-debiased, kind="stable")[: args.top]
    print(f"\nTop {len(order)} features by MDI-oob (debiased with out-of-bag rows, {oob_elapsed:.3f} s), with MDI:")
    print(f"  {'rank':>4}  {'feature':<20} {'MDI-oob':>9} {'MDI':>8}" + ("  truth" if relevant is not None else ""))
    for rank, j in enumerate(order, 1):
        truth = ("  relevant" if j in relevant else "  noise") if relevant is not None else ""
        print(f"  {rank:>4}  {names[j]:<20} {debiased[j]:>9.4f} {mdi[j]:>8.4f}{truth}")
    if relevant is not None:
        k = len(relevant)
        for label, scores in (("MDI-oob", debiased), ("MDI", mdi)):
            found = len(relevant & set(np.argsort(-scores, kind="stable")[:k].tolist()))
            print(f"{found} of the {k} relevant features are the top {k} by {label}.")
    _interactions(X, y, task, names, interactions if args.csv is None else None, args)
    return 0


def _label(features, names):
    return " & ".join(f"{names[k]}{'+' if s > 0 else '-' if s < 0 else ''}" for k, s in features)


def _interactions(X, y, task, names, truth, args):
    true_sets = set(truth) if truth is not None else None
    mark = (lambda f: "  true" if f in true_sets else "") if truth is not None else (lambda f: "")
    if truth is not None:
        print("\nTrue interactions: " + "; ".join(_label(f, names) for f in truth))
    if task == "regression":
        start = time.perf_counter()
        lss = LSSFind(random_state=args.random_state, n_jobs=args.n_jobs).fit(X, y)
        print(f"\nLSSFind (100 trees, all features per split, eps 0.01, eta 0.01, order <= 3) in "
              f"{time.perf_counter() - start:.2f} s: {len(lss.selected_)} sets with 2^|S| DWP >= 0.99, "
              f"minimal ones:")
        for record in lss.minimal_:
            print(f"  {_label(record.features, names):<40} 2^|S| DWP = {record.adjusted_dwp:.4f}{mark(record.features)}")
    start = time.perf_counter()
    irf = IterativeRandomForest(n_estimators=args.n_estimators, random_state=args.random_state,
                                n_jobs=args.n_jobs).fit(X, y)
    table = irf.interactions_
    print(f"\nIterative random forest (5 iterations, {args.n_estimators} trees, 10 bootstraps) in "
          f"{time.perf_counter() - start:.2f} s, iteration {irf.selected_iteration_ + 1} selected; "
          f"top {min(args.top, len(table))} of {len(table)} by stability:")
    print(f"  {'interaction':<40} {'stability':>9} {'prevalence':>10} {'precision':>9}")
    for r in table[: args.top]:
        print(f"  {_label(r.features, names):<40} {r.stability:>9.2f} {r.prevalence:>10.3f} {r.precision:>9.3f}"
              f"{mark(r.features)}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="pyinterp", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="fit a forest and print a report (simulated data unless a CSV is given)")
    d.add_argument("csv", nargs="?", help="CSV file with a header row (default: simulated LSS data)")
    d.add_argument("--target", help="name of the target column in the CSV")
    d.add_argument("--task", choices=["auto", "regression", "classification"], default="auto")
    d.add_argument("--n-samples", type=int, default=1000, help="rows of simulated data")
    d.add_argument("--n-features", type=int, default=50, help="features of simulated data")
    d.add_argument("--n-estimators", type=int, default=300)
    d.add_argument("--n-jobs", type=int, default=-1)
    d.add_argument("--random-state", type=int, default=0)
    d.add_argument("--top", type=int, default=10, help="how many features to list")
    args = parser.parse_args(argv)
    return demo(args)


if __name__ == "__main__":
    sys.exit(main())
