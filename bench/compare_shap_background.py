"""SHAP against background rows (interventional): pyinterp against woodelf-explainer (WOODELF,
O(n + m) per tree) and shap's TreeExplainer (O(n m)), side by side in one run on the same
scikit-learn forest, with the ratios, the largest differences and the load average.

WOODELF's own benchmark (its README and arXiv:2511.09376): 3,000,000 rows x 127 features explained
against 5,000,000 background rows, 100 trees of depth 6 (XGBoost; here a scikit-learn random forest
of the same shape, which all three read). The defaults scale it by 1/100; --scale 0.1 is 1/10.

    python bench/compare_shap_background.py                     # 30,000 x 50,000, 1 thread each
    python bench/compare_shap_background.py --scale 0.1         # 300,000 x 500,000
    python bench/compare_shap_background.py --depth 8 --interactions 2000

shap is O(n m) per tree: it runs on --shap-rows rows against --shap-background background rows
(given as a masker of all of them: with a DataFrame or array as data= it keeps only 100), and each
library's values on those rows are compared with its. woodelf reads pandas data frames and takes
no thread count (numpy, one core); pyinterp runs with --jobs threads (default 1, so the ratios put
one thread against one).
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from benchkit.peers import optional
from benchkit.timing import best_of, load
from sklearn.ensemble import RandomForestRegressor

from pyinterp import importance as imp


def _line(name, seconds, extra=""):
    print(f"  {name:<34} {seconds:9.3f} s  {extra}  load {load():.2f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.01, help="of WOODELF's 3,000,000 x 5,000,000 rows")
    parser.add_argument("--features", type=int, default=127)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--interactions", type=int, default=0, help="rows of interaction values (0: skip)")
    parser.add_argument("--shap-rows", type=int, default=50)
    parser.add_argument("--shap-background", type=int, default=500)
    args = parser.parse_args()
    woodelf, shap, pd = optional("woodelf"), optional("shap"), optional("pandas")
    n, m = int(3_000_000 * args.scale), int(5_000_000 * args.scale)
    print(f"load average {os.getloadavg()} ({os.cpu_count()} CPUs); woodelf "
          f"{'not installed (pip install woodelf-explainer)' if woodelf is None else woodelf.__version__}; shap "
          f"{'not installed' if shap is None else shap.__version__}")
    rng = np.random.default_rng(0)
    background = rng.standard_normal((m, args.features)).astype(np.float32)
    X = rng.standard_normal((n, args.features)).astype(np.float32)
    y = (background @ rng.standard_normal(args.features) * 0.1 + np.sin(3 * background[:, 0])
         + background[:, 1] * background[:, 2] + 0.1 * rng.standard_normal(m))
    forest = RandomForestRegressor(n_estimators=args.trees, max_depth=args.depth, max_features=0.3, random_state=0,
                                   n_jobs=2).fit(background, y)
    print(f"{args.trees} trees of depth {args.depth} (scikit-learn, fitted on the background), p = {args.features}, "
          f"n = {n:,} rows against m = {m:,} background rows")

    t_ours, ours = best_of(lambda: imp.shap_values(forest, X, background=background, n_jobs=args.jobs)[0])
    _line(f"pyinterp values ({args.jobs} thr)", t_ours)
    t_walk = None
    if n * m <= 10**9:
        t_walk, _ = best_of(lambda: imp.shap_values(forest, X[:1000], background=background, algorithm="walk",
                                                    n_jobs=args.jobs))
        _line("pyinterp walk, 1,000 rows", t_walk, f"(O(n m): x{n / 1000:.0f} for all rows)")
    if woodelf is not None and pd is not None:
        columns = [f"f{j}" for j in range(args.features)]
        frame_x, frame_bg = pd.DataFrame(X, columns=columns), pd.DataFrame(background, columns=columns)
        t_peer, theirs = best_of(
            lambda: woodelf.WoodelfExplainer(forest, frame_bg).shap_values(frame_x, verbose=False))
        _line("woodelf values (construction + call)", t_peer,
              f"ratio {t_peer / t_ours:6.2f}  max |diff| {np.abs(np.asarray(theirs) - ours).max():.1e}")
        if args.interactions:
            rows = X[: args.interactions]
            t_pairs, pairs = best_of(lambda: imp.shap_interaction_values(forest, rows, background=background,
                                                                         n_jobs=args.jobs))
            _line(f"pyinterp interactions, {len(rows):,} rows", t_pairs)
            t_peer, theirs = best_of(lambda: woodelf.WoodelfExplainer(forest, frame_bg).shap_interaction_values(
                frame_x.iloc[: args.interactions], verbose=False))
            _line("woodelf interactions", t_peer,
                  f"ratio {t_peer / t_pairs:6.2f}  max |diff| {np.abs(np.asarray(theirs) - pairs).max():.1e}")
    if shap is not None:
        rows, bg = X[: args.shap_rows], background[: args.shap_background]
        t_small, small = best_of(lambda: imp.shap_values(forest, rows, background=bg, n_jobs=args.jobs)[0])
        explainer = shap.TreeExplainer(forest, data=shap.maskers.Independent(bg, max_samples=len(bg)),
                                       feature_perturbation="interventional")
        t_peer, theirs = best_of(lambda: explainer.shap_values(rows, check_additivity=False))
        _line(f"shap, {len(rows)} rows x {len(bg)} background", t_peer,
              f"pyinterp {t_small:.3f} s, ratio {t_peer / t_small:6.2f}  max |diff| {np.abs(theirs - small).max():.1e} "
              "(shap keeps float32 nodes)")


if __name__ == "__main__":
    main()
