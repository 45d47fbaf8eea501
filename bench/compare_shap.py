"""TreeSHAP: pyinterp against shap's TreeExplainer, side by side in one run, on the same fitted
scikit-learn forest (pyinterp's time includes reading the forest through its view). Prints each
time, the ratio shap / pyinterp, the largest difference of the values and the load average.

    python bench/compare_shap.py                      # (a) 1000 rows, 500 trees, p = 100; (b) all_bioc
    python bench/compare_shap.py --trees 50 --rows 200 --interaction-rows 2   # quick look

(a) simulated regression, n = 1000 training rows, p = 100, fully grown trees; values for --rows rows
and interaction values for --interaction-rows rows. (b) all_bioc (p = 12,625, classes) from
../shared/data when present: values for every row. shap's interaction values there would be an
n x p x p tensor of 1.3 GB per row and class; pyinterp's mean-|interaction| form is timed alone.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from benchkit.data import shared_npz
from benchkit.peers import optional
from benchkit.timing import best_of
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from pyinterp import importance as imp


def _layout(values):
    """shap's output as (rows, ..., outputs): older versions return a list per class."""
    return np.stack(values, axis=-1) if isinstance(values, list) else np.asarray(values)


def compare(name, forest, rows, jobs, shap, interactions):
    ours_fn = imp.shap_interaction_values if interactions else imp.shap_values
    t_ours, ours = best_of(lambda: ours_fn(forest, rows, n_jobs=jobs))
    line = f"{name:<34} rows {len(rows):>5}  pyinterp ({jobs} threads) {t_ours:9.3f} s"
    if shap is not None:
        explainer = shap.TreeExplainer(forest)
        if interactions:
            t_peer, peer = best_of(lambda: explainer.shap_interaction_values(rows))
        else:
            t_peer, peer = best_of(lambda: explainer.shap_values(rows, check_additivity=False))
        ours = ours if interactions else ours[0]
        diff = np.abs(ours - _layout(peer)).max()
        line += f"  shap {t_peer:9.3f} s  ratio {t_peer / t_ours:6.2f}  max |diff| {diff:.1e}"
    print(f"{line}  load {os.getloadavg()[0]:.2f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--interaction-rows", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--skip-real", action="store_true", help="only (a)")
    args = parser.parse_args()
    shap = optional("shap")
    print(f"load average {os.getloadavg()} ({os.cpu_count()} CPUs); shap "
          f"{'not installed' if shap is None else shap.__version__}")

    rng = np.random.RandomState(0)
    X = rng.randn(1000, 100)
    y = X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3]) + 0.5 * rng.randn(1000)
    forest = RandomForestRegressor(n_estimators=args.trees, random_state=0, n_jobs=args.jobs).fit(X, y)
    depth = max(e.tree_.max_depth for e in forest.estimators_)
    print(f"(a) n=1000, p=100, {args.trees} fully grown trees (max depth {depth})")
    compare("(a) values", forest, X[: args.rows], args.jobs, shap, False)
    compare("(a) interaction values", forest, X[: args.interaction_rows], args.jobs, shap, True)

    data = None if args.skip_real else shared_npz("all_bioc")
    if data is None:
        print("(b) all_bioc: skipped")
        return
    Xb, yb = data["X"], data["y"]
    forest = RandomForestClassifier(n_estimators=args.trees, random_state=0, n_jobs=args.jobs).fit(Xb, yb)
    print(f"(b) all_bioc n={Xb.shape[0]}, p={Xb.shape[1]}, {args.trees} trees")
    compare("(b) values", forest, Xb, args.jobs, shap, False)
    t, light = best_of(lambda: imp.shap_interaction_importance(forest, Xb, n_jobs=args.jobs))
    print(f"{'(b) mean |interaction| per pair':<34} rows {len(Xb):>5}  pyinterp ({args.jobs} threads) {t:9.3f} s"
          f"  ({light[0].nnz} pairs; shap: no such form)  load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
