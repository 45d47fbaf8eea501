"""What reading a scikit-learn forest costs next to the work that follows it (issue 24, point 4):
for a 100- and a 500-tree RandomForestRegressor (make_lss n=2000, p=50, max_features=1.0, as
bench/compare_interactions.py section 1), the best-of time of

- view: what LSSFind-style mining reads (pyinterp.forest.view.forest_view(rf, in_place=True)): the trees' node
  arrays held for the core to walk in place, no copy; mining: that mining
  (interactions.prevalent_sets, |S| <= 3, adjusted DWP >= 0.5) from the forest itself, its view
  included;
- copy: the structure-only import into one core Forest (forest_view(rf)), which prediction, SHAP,
  rules and permutation importance read. It is kept per forest object (_SKLEARN_CORES), and a
  kept copy is walked instead of the arrays, so that cache is cleared before every timed call;
- oob view: what the out-of-bag measures read (forest_view(rf, n, in_place=True)): the arrays in
  place with the in-bag counts regenerated; mdi_oob: MDI-oob (importance.mdi_oob) less that view,
  which it makes itself on every call.

The forest, the measures and the import run on --n-jobs threads (the forest's own n_jobs is what
the import uses). Times are CPU seconds of this process (all its threads; best of --repeats): on
the shared machine the wall clock mostly measures waiting for a core; with --wall, wall seconds.

    python bench/studies/forest_adapter.py [--trees 100 500] [--n-jobs 1 2] [--repeats 7] [--wall]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, where benchkit is

from benchkit.timing import best_of, load, load_line
from sklearn.ensemble import RandomForestRegressor

from pyinterp.datasets import make_lss
from pyinterp.forest import view
from pyinterp.importance import mdi_oob
from pyinterp.interactions import prevalent_sets


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--wall", action="store_true", help="wall-clock seconds instead of CPU seconds")
    args = parser.parse_args()
    clock = time.perf_counter if args.wall else time.process_time

    def best(fn):
        def run():
            view._SKLEARN_CORES.clear()  # every call cold: no copy kept from the one before
            return fn()
        return best_of(run, args.repeats, clock=clock)[0] * 1e3

    X, y, _ = make_lss(n_samples=2000, n_features=50, n_interactions=2, order=2, snr=5, random_state=0)
    print(load_line(), "|", "wall" if args.wall else "CPU", "ms, best of", args.repeats)
    print(f"{'trees':>5} {'jobs':>4} {'nodes/tree':>10} {'view':>6} {'mining':>7} {'ratio':>6} {'copy':>6} "
          f"{'oob view':>8} {'mdi_oob':>8} {'ratio':>6} {'load':>5}")
    for n_trees in args.trees:
        rf = RandomForestRegressor(n_trees, max_features=1.0, random_state=0, n_jobs=2).fit(X, y)
        nodes = sum(e.tree_.node_count for e in rf.estimators_) / n_trees
        for n_jobs in args.n_jobs:
            rf.set_params(n_jobs=n_jobs)
            structure = best(lambda: view.forest_view(rf, in_place=True))
            mining = best(lambda: prevalent_sets(rf, 0.5 / 8, max_order=3, n_jobs=n_jobs))
            copy = best(lambda: view.forest_view(rf))
            oob_view = best(lambda: view.forest_view(rf, len(y), in_place=True))
            oob = best(lambda: mdi_oob(rf, X, y, n_jobs=n_jobs)) - oob_view
            print(f"{n_trees:>5} {n_jobs:>4} {nodes:>10.0f} {structure:>6.2f} {mining:>7.2f} {structure / mining:>6.0%} "
                  f"{copy:>6.2f} {oob_view:>8.2f} {oob:>8.2f} {oob_view / oob:>6.0%} {load():>5.2f}")

if __name__ == "__main__":
    main()
