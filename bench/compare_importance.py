"""MDI-oob cost: pyinterp's C++ kernel against one out-of-bag prediction pass of the same forest
(the pass oob_score=True runs inside fit; no public API runs it alone, so it is timed through the
core forest -- a fit with minus a fit without is noise-dominated, the fit being ~50x longer),
and against a straightforward numpy/Python implementation of thesis eq. (8.20) written the way
prior tools (treeinterpreter and the thesis' own code) compute it: per tree, the Saabas
contribution vector of every leaf from its root path, the OOB rows routed to their leaves, and the
mean of f(x_i) * y_i.

    python bench/compare_importance.py                  # n=5000, p=100, 500 trees, 2 threads
    python bench/compare_importance.py --trees 100
    python bench/compare_importance.py --n 500 --trees 20 --repeats 1   # quick look
"""

from __future__ import annotations

import argparse

import numpy as np
from benchkit.data import oob_regression
from benchkit.timing import best_of, load

import pyinterp
from pyinterp import importance as imp


def leaves_numpy(tree, X):
    """Leaf of every row, one vectorised step per tree level."""
    node = np.zeros(len(X), dtype=np.int64)
    active = tree.left[node] >= 0
    while active.any():
        n = node[active]
        go_left = X[active, tree.feature[n]] <= tree.threshold[n]
        node[active] = np.where(go_left, tree.left[n], tree.right[n])
        active = tree.left[node] >= 0
    return node


def mdi_oob_numpy(forest, X, y):
    p = X.shape[1]
    inbag = forest.inbag_counts_
    per_tree = []
    for t, tree in enumerate(forest.trees_):
        oob = np.flatnonzero(inbag[t] == 0)
        if len(oob) == 0:
            continue
        leaf_ids = np.flatnonzero(tree.left < 0)
        row_of_leaf = np.empty(tree.node_count, dtype=np.int64)
        row_of_leaf[leaf_ids] = np.arange(len(leaf_ids))
        index = row_of_leaf[leaves_numpy(tree, X[oob])]
        contrib = np.zeros((len(leaf_ids), p))
        for row, leaf in enumerate(leaf_ids):  # every leaf's path, walked up to the root
            node = leaf
            while tree.parent[node] >= 0:
                parent = tree.parent[node]
                contrib[row, tree.feature[parent]] += tree.value[node, 0] - tree.value[parent, 0]
                node = parent
        per_tree.append(contrib[index].T @ y[oob] / len(oob))
    return np.mean(per_tree, axis=0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--p", type=int, default=100)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    X, y = oob_regression(args.n, args.p)

    forest = pyinterp.RandomForestRegressor(n_estimators=args.trees, random_state=0, n_jobs=args.n_jobs).fit(X, y)
    t_pred, _ = best_of(lambda: forest.oob_predict(X), args.repeats)
    print(f"n={args.n} p={args.p} trees={args.trees} n_jobs={args.n_jobs}; "
          f"mean nodes per tree {np.mean([t.node_count for t in forest.trees_]):.0f}; load average {load():.2f}")

    t_oob, ours = best_of(lambda: imp.mdi_oob(forest, X, y, n_jobs=args.n_jobs), args.repeats)
    t_py, theirs = best_of(lambda: mdi_oob_numpy(forest, X, y), 1)
    assert np.allclose(ours, theirs, rtol=1e-9, atol=1e-12), "implementations disagree"

    print(f"{'one OOB predict pass (C++)':<36}{t_pred:9.4f} s")
    print(f"{'MDI-oob, pyinterp (C++)':<36}{t_oob:9.4f} s")
    print(f"{'MDI-oob, numpy/Python (eq. 8.20)':<36}{t_py:9.4f} s")
    print(f"MDI-oob / OOB predict: x{t_oob / t_pred:.2f} (target <= 2)")
    print(f"numpy / pyinterp:      x{t_py / t_oob:.0f} (target >= 50)")
    print(f"max |difference| between the two MDI-oob results: {np.abs(ours - theirs).max():.2e}")


if __name__ == "__main__":
    main()
