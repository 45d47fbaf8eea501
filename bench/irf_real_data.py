"""iRF with its defaults on a real genomic data set of benchkit.paths.SHARED_DATA (p = 12625 for
all_bioc), end to end: prints the time, the peak resident memory and the most stable interactions.

    python bench/irf_real_data.py [all_bioc] [--target y] [--n-jobs 2]
"""

import argparse

import numpy as np
from benchkit.data import require_shared_npz
from benchkit.timing import Timer, load_line, peak_rss_mb

import pyinterp


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", default="all_bioc")
    parser.add_argument("--target", default="y")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    data = require_shared_npz(args.name)
    X, y = data["X"], data[args.target]
    names = data["feature_names"] if "feature_names" in data.files else None
    print(load_line())
    before = peak_rss_mb()
    with Timer() as timer:
        model = pyinterp.IterativeRandomForest(random_state=0, n_jobs=args.n_jobs).fit(X, y)
    elapsed = timer.wall
    peak = peak_rss_mb()
    print(f"{args.name}: n={X.shape[0]}, p={X.shape[1]}, classes {np.unique(y).tolist()}")
    print(f"iRF defaults (5 iterations x 500 trees, max_features=sqrt, 10 bootstraps, RIT 500 trees depth 5), "
          f"n_jobs={args.n_jobs}: {elapsed:.1f} s, peak RSS {peak:.0f} MB (before fit {before:.0f} MB)")
    print(f"OOB error per iteration: {np.round(model.oob_errors_, 3).tolist()}, "
          f"selected iteration {model.selected_iteration_ + 1}")
    print(f"{len(model.interactions_)} interactions; the {args.top} most stable:")
    table = model.interactions_
    for r in table[: args.top]:
        label = " & ".join(f"{names[k] if names is not None else k}{'+' if s > 0 else '-'}" for k, s in r.features)
        print(f"  {label:<50} stability {r.stability:.2f}  prevalence {r.prevalence:.3f}  "
              f"precision {r.precision:.3f}")


if __name__ == "__main__":
    main()
