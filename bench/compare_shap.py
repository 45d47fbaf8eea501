"""TreeSHAP: pyinterp against shap's TreeExplainer, side by side in one run, on the same fitted
scikit-learn forest. Each line gives pyinterp's first call (which reads the scikit-learn forest
into the engine; later calls on the same forest reuse it) and a later call, shap's explainer
construction and its call, the ratios (shap call / pyinterp later call; shap construction + call /
pyinterp first call), the largest difference of the values and the load average.

    python bench/compare_shap.py                      # (a) 1000 rows, 500 trees, p = 100; (b) all_bioc
    python bench/compare_shap.py --trees 50 --rows 200 --interaction-rows 2   # quick look

(a) simulated regression, n = 1000 training rows, p = 100, fully grown trees: path-dependent values
for --rows rows, interaction values for --interaction-rows rows, interventional values for
--interventional-rows rows against --background training rows. (b) all_bioc (p = 12,625, classes)
from benchkit.paths.SHARED_DATA when present: values and interventional values for every row,
interaction values for --real-interaction-rows rows (an n x p x p tensor of 1.3 GB per row and
class, both libraries), and pyinterp's memory-light forms (mean |interaction| per pair, top-k pairs
per row), which shap does not have, alone.
"""

from __future__ import annotations

import argparse
import os
import pickle

import numpy as np
from benchkit.data import shared_npz
from benchkit.peers import optional
from benchkit.timing import best_of, load
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from pyinterp import importance as imp


def _layout(values):
    """shap's output as (rows, ..., outputs): older versions return a list per class."""
    return np.stack(values, axis=-1) if isinstance(values, list) else np.asarray(values)


def _max_diff(ours, peer):
    """max |ours - peer|, a (row, feature) slice at a time: all_bioc's interaction values are 2.5 GB
    a row."""
    peer = _layout(peer)
    return max(float(np.abs(a - b).max()) for a, b in zip(ours.reshape(-1, *ours.shape[2:]),
                                                          peer.reshape(-1, *peer.shape[2:])))


def _load():
    return f"load {load():.2f}"


def compare(name, forest, rows, jobs, shap, kind, background=None):
    """kind: "values", "interactions" or "interventional" (against background)."""
    if kind == "interactions":
        ours_fn = lambda f: imp.shap_interaction_values(f, rows, n_jobs=jobs)  # noqa: E731
    else:
        ours_fn = lambda f: imp.shap_values(f, rows, background=background, n_jobs=jobs)[0]  # noqa: E731
    fresh = pickle.loads(pickle.dumps(forest))  # not yet read by pyinterp
    t_first, ours = best_of(lambda: ours_fn(fresh))
    repeats = 5 if t_first < 1 else 1  # the machine is shared: quick calls get the best of several
    t_ours, _ = best_of(lambda: ours_fn(fresh), repeats=repeats)
    line = f"{name:<30} rows {len(rows):>5}  pyinterp ({jobs} thr) first {t_first:8.3f} s, then {t_ours:8.3f} s"
    if shap is not None:
        args = {} if background is None else {"data": background, "feature_perturbation": "interventional"}
        t_build, explainer = best_of(lambda: shap.TreeExplainer(forest, **args))
        if kind == "interactions":
            t_peer, peer = best_of(lambda: explainer.shap_interaction_values(rows), repeats=repeats)
        else:
            t_peer, peer = best_of(lambda: explainer.shap_values(rows, check_additivity=False), repeats=repeats)
        diff = _max_diff(ours, peer)
        line += (f" | shap build {t_build:7.3f} s, call {t_peer:8.3f} s | ratio {t_peer / t_ours:6.2f} "
                 f"(with build and first read {(t_build + t_peer) / t_first:5.2f})  max |diff| {diff:.1e}")
    print(f"{line}  {_load()}", flush=True)


def alone(name, rows, jobs, fn, what):
    t, out = best_of(fn, repeats=3)
    print(f"{name:<30} rows {len(rows):>5}  pyinterp ({jobs} thr) {t:8.3f} s  ({what(out)}; shap: no such form)"
          f"  {_load()}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--interaction-rows", type=int, default=5)
    parser.add_argument("--interventional-rows", type=int, default=100)
    parser.add_argument("--real-interaction-rows", type=int, default=1,
                        help="all_bioc rows of interaction values (2.5 GB a row in each library)")
    parser.add_argument("--background", type=int, default=100, help="background rows of interventional SHAP")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--skip-simulated", action="store_true", help="only (b)")
    parser.add_argument("--skip-real", action="store_true", help="only (a)")
    args = parser.parse_args()
    shap = optional("shap")
    print(f"load average {os.getloadavg()} ({os.cpu_count()} CPUs); shap "
          f"{'not installed' if shap is None else shap.__version__}")

    if not args.skip_simulated:
        rng = np.random.RandomState(0)
        X = rng.randn(1000, 100)
        y = X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3]) + 0.5 * rng.randn(1000)
        forest = RandomForestRegressor(n_estimators=args.trees, random_state=0, n_jobs=args.jobs).fit(X, y)
        depth = max(e.tree_.max_depth for e in forest.estimators_)
        print(f"(a) n=1000, p=100, {args.trees} fully grown trees (max depth {depth})")
        compare("(a) values", forest, X[: args.rows], args.jobs, shap, "values")
        compare("(a) interaction values", forest, X[: args.interaction_rows], args.jobs, shap, "interactions")
        compare(f"(a) interventional ({args.background} bg)", forest, X[: args.interventional_rows], args.jobs, shap,
                "interventional", background=X[-args.background:])

    data = None if args.skip_real else shared_npz("all_bioc")
    if data is None:
        print("(b) all_bioc: skipped")
        return
    Xb, yb = data["X"], data["y"]
    forest = RandomForestClassifier(n_estimators=args.trees, random_state=0, n_jobs=args.jobs).fit(Xb, yb)
    print(f"(b) all_bioc n={Xb.shape[0]}, p={Xb.shape[1]}, {args.trees} trees "
          f"(max depth {max(e.tree_.max_depth for e in forest.estimators_)})")
    compare("(b) values", forest, Xb, args.jobs, shap, "values")
    background = Xb[np.random.RandomState(0).choice(len(Xb), min(args.background, len(Xb)), replace=False)]
    compare(f"(b) interventional ({len(background)} bg)", forest, Xb, args.jobs, shap, "interventional", background)
    if args.real_interaction_rows > 0:
        compare("(b) interaction values", forest, Xb[: args.real_interaction_rows], args.jobs, shap, "interactions")
    alone("(b) mean |interaction| per pair", Xb, args.jobs,
          lambda: imp.shap_interaction_importance(forest, Xb, n_jobs=args.jobs), lambda out: f"{out[0].nnz} pairs")
    alone(f"(b) top-{args.top_k} pairs per row", Xb, args.jobs,
          lambda: imp.shap_top_interactions(forest, Xb, k=args.top_k, n_jobs=args.jobs),
          lambda out: f"pairs {out[0].shape}")


if __name__ == "__main__":
    main()
