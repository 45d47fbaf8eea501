"""What importing a scikit-learn forest costs next to the work that follows it (issue 24, point 4):
for a 100- and a 500-tree RandomForestRegressor (make_lss n=2000, p=50, max_features=1.0, as
bench/compare_interactions.py section 1), the best-of time of

- the conversion alone (pyinterp.forest.view.forest_view: the trees' arrays into one core Forest),
  with and without the in-bag counts the out-of-bag measures regenerate;
- LSSFind-style mining (interactions.prevalent_sets, |S| <= 3, adjusted DWP >= 0.5) on the
  scikit-learn forest, conversion included; the work is that time less the conversion.

Times are CPU seconds of this single-threaded process (best of --repeats): on the shared machine
the wall clock mostly measures waiting for a core.

    python bench/forest_adapter.py [--trees 100 500] [--repeats 5]
"""

from __future__ import annotations

import argparse

from benchkit.timing import best_cpu_of, load_line
from sklearn.ensemble import RandomForestRegressor

from pyinterp.datasets import make_lss
from pyinterp.forest.view import forest_view
from pyinterp.interactions import prevalent_sets


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    X, y, _ = make_lss(n_samples=2000, n_features=50, n_interactions=2, order=2, snr=5, random_state=0)
    print(load_line())
    print(f"{'trees':>6} {'nodes/tree':>10} {'convert ms':>11} {'per tree':>9} {'+inbag ms':>10} "
          f"{'mining ms':>10} {'convert / work':>15}")
    for n_trees in args.trees:
        rf = RandomForestRegressor(n_trees, max_features=1.0, random_state=0, n_jobs=2).fit(X, y)
        nodes = sum(e.tree_.node_count for e in rf.estimators_) / n_trees
        convert, _ = best_cpu_of(lambda: forest_view(rf), args.repeats)
        with_inbag, _ = best_cpu_of(lambda: forest_view(rf, len(y)), args.repeats)
        mining, _ = best_cpu_of(lambda: prevalent_sets(rf, 0.5 / 8, max_order=3, n_jobs=1), args.repeats)
        print(f"{n_trees:>6} {nodes:>10.0f} {convert * 1e3:>11.1f} {convert / n_trees * 1e3:>9.3f} "
              f"{with_inbag * 1e3:>10.1f} {mining * 1e3:>10.1f} {convert / (mining - convert):>15.0%}")


if __name__ == "__main__":
    main()
