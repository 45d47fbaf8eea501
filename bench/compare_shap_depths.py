"""Path-dependent TreeSHAP values by tree depth: pyinterp against shap's TreeExplainer,
woodelf-explainer (its path-dependent form, when installed) and, when a Python with FastTreeSHAP
is given, FastTreeSHAP v1 and v2, side by side in one run on the same scikit-learn forest, with the
ratios, the largest differences and the load average.

    python bench/compare_shap_depths.py                                  # depths 4, 8, 16, full
    python bench/compare_shap_depths.py --depths 8 --trees 200 --rows 10000 \
        --fasttreeshap-python /path/to/venv/bin/python                   # the issue's depth-8 case

FastTreeSHAP (0.1.6) does not import under numpy 2; the fork ``fasttreeshap-fixed`` (imported as
fasttreeshap_fixed, with numba, slicer, tqdm and cloudpickle) runs in its own environment, given by
--fasttreeshap-python: the forest and rows go to it through a temporary pickle, and it times its
own calls (n_jobs as given). Each library's time is its call on fitted objects; pyinterp's is its
later call (the first also reads the scikit-learn forest, printed beside it).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from benchkit.peers import optional
from benchkit.timing import best_of, load
from sklearn.ensemble import RandomForestRegressor

from pyinterp import importance as imp

_PEER = """
import json, pickle, sys, time
import numpy as np
import fasttreeshap_fixed as fts
forest, rows, jobs = pickle.load(open(sys.argv[1], "rb"))
out = {}
for algorithm in ("v1", "v2"):
    explainer = fts.TreeExplainer(forest, algorithm=algorithm, n_jobs=jobs)
    start = time.perf_counter()
    values = explainer.shap_values(rows, check_additivity=False)
    out[algorithm] = time.perf_counter() - start
    np.save(sys.argv[2] + algorithm + ".npy", np.asarray(values))
print(json.dumps(out))
"""


def _peer_times(python, forest, rows, jobs, workdir):
    """FastTreeSHAP v1 and v2 in their own environment: {algorithm: (seconds, values)}."""
    path = Path(workdir) / "case.pkl"
    path.write_bytes(pickle.dumps((forest, rows, jobs)))
    done = subprocess.run([python, "-c", _PEER, str(path), str(Path(workdir) / "values_")], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    times = json.loads(done.stdout.strip().splitlines()[-1])
    return {a: (t, np.load(Path(workdir) / f"values_{a}.npy")) for a, t in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depths", type=int, nargs="+", default=[4, 8, 16, 0], help="0: fully grown")
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--train", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--fasttreeshap-python", default=None)
    args = parser.parse_args()
    shap, woodelf, pd = optional("shap"), optional("woodelf"), optional("pandas")
    print(f"load average {os.getloadavg()} ({os.cpu_count()} CPUs); shap "
          f"{'not installed' if shap is None else shap.__version__}; woodelf "
          f"{'not installed (pip install woodelf-explainer)' if woodelf is None else woodelf.__version__}; "
          f"FastTreeSHAP {args.fasttreeshap_python or 'not given'}; {args.jobs} thread(s) each")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.train, args.features))
    y = X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3]) + 0.5 * rng.standard_normal(args.train)
    rows = X[: args.rows]
    for depth in args.depths:
        forest = RandomForestRegressor(n_estimators=args.trees, max_depth=depth or None, min_samples_leaf=1,
                                       max_features=1 / 3, random_state=0, n_jobs=2).fit(X, y)
        real = max(e.tree_.max_depth for e in forest.estimators_)
        fresh = pickle.loads(pickle.dumps(forest))
        t_first, _ = best_of(lambda: imp.shap_values(fresh, rows, n_jobs=args.jobs))
        t_ours, ours = best_of(lambda: imp.shap_values(fresh, rows, n_jobs=args.jobs)[0])
        line = (f"depth {depth or 'full'} (max {real}), {args.trees} trees, {len(rows)} rows: pyinterp {t_ours:7.3f} s "
                f"(first {t_first:.3f})")
        if shap is not None:
            explainer = shap.TreeExplainer(forest)
            t_peer, theirs = best_of(lambda: explainer.shap_values(rows, check_additivity=False))
            diff = np.abs(theirs - ours).max()
            line += f" | shap {t_peer:7.3f} s, ratio {t_peer / t_ours:5.2f}, max |diff| {diff:.1e}"
        if woodelf is not None and pd is not None:
            frame = pd.DataFrame(rows, columns=[f"f{j}" for j in range(args.features)])
            t_peer, theirs = best_of(lambda: woodelf.WoodelfExplainer(forest).shap_values(frame, verbose=False))
            diff = np.abs(np.asarray(theirs) - ours).max()
            line += f" | woodelf {t_peer:7.3f} s, ratio {t_peer / t_ours:5.2f}, max |diff| {diff:.1e}"
        if args.fasttreeshap_python:
            with tempfile.TemporaryDirectory() as workdir:
                peers = _peer_times(args.fasttreeshap_python, forest, rows, args.jobs, workdir)
            if "error" in peers:
                line += f" | FastTreeSHAP: {peers['error']}"
            for algorithm, (t_peer, theirs) in ((a, v) for a, v in peers.items() if a != "error"):
                line += (f" | FastTreeSHAP {algorithm} {t_peer:7.3f} s, ratio {t_peer / t_ours:5.2f}, "
                         f"max |diff| {np.abs(theirs - ours).max():.1e}")
        print(f"{line}  load {load():.2f}", flush=True)


if __name__ == "__main__":
    main()
