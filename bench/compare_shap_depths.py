"""Path-dependent TreeSHAP values by tree depth: pyinterp against shap's TreeExplainer,
woodelf-explainer (its path-dependent form, when installed) and, when a Python with them is given,
FastTreeSHAP v1 and v2 and shapiq's TreeExplainer (Quadrature-TreeSHAP), side by side in one run on
the same scikit-learn forest, with the ratios, the largest differences and the load average.

    python bench/compare_shap_depths.py                                  # depths 4, 8, 16, full
    python bench/compare_shap_depths.py --depths 8 --trees 200 --rows 10000 \
        --fasttreeshap-python /path/to/venv/bin/python                   # the issue's depth-8 case
    python bench/compare_shap_depths.py --depths 4 8 --trees 50 --rows 100 10000 --jobs 1 2 \
        --shapiq-python /path/to/venv312/bin/python --timeout 300        # a grid, peers capped
    python bench/compare_shap_depths.py --interactions --rows 16 100 \
        --shapiq-python /path/to/venv312/bin/python --timeout 300        # interaction values

FastTreeSHAP (0.1.6) does not import under numpy 2; the fork ``fasttreeshap-fixed`` (imported as
fasttreeshap_fixed, with numba, slicer, tqdm and cloudpickle) runs in its own environment, given by
--fasttreeshap-python, and shapiq (Python >= 3.12, with the scikit-learn version of this one, so
that the forest unpickles) in its own, given by --shapiq-python: the forest and rows go to each
through a temporary pickle, and it times its own calls (n_jobs as given). shapiq's values are
``TreeExplainer(forest, index="SV", max_order=1).explain_X(rows)``, a kernel call per row; its
n_jobs is joblib's (worker processes); its setup (reading the forest, the kernel's arrays at the
first row, and with n_jobs > 1 starting the workers on two rows each) is printed beside it. Each
library's time is its call on fitted objects; pyinterp's is its later call (the first also reads
the scikit-learn forest, printed beside it); a call under 0.2 s is timed as the best of 10, for
every library. shap and woodelf, which have no thread option, run at
one thread only, in a forked copy of this process; --timeout stops any peer (not pyinterp) after
that many seconds. --rows and --jobs take several values: each forest is fitted once per depth.

With --interactions the calls are interaction values: pyinterp's shap_interaction_values, shap's
shap_interaction_values and shapiq's ``TreeExplainer(forest, index="SII", max_order=2)`` (pairs
only, min_order 2). shap's off-diagonal entries are SII / 2, so shapiq's pairs are compared, halved,
with pyinterp's off-diagonal entries; FastTreeSHAP and woodelf are not run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from benchkit.peers import optional
from benchkit.timing import best_of, load
from sklearn.ensemble import RandomForestRegressor

from pyinterp import importance as imp

_FASTTREESHAP = """
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

_SHAPIQ = """
import json, pickle, sys, time
import numpy as np
import shapiq
forest, rows, jobs = pickle.load(open(sys.argv[1], "rb"))
pairs = sys.argv[3] == "pairs"
start = time.perf_counter()
if pairs:
    explainer = shapiq.TreeExplainer(forest, index="SII", max_order=2, min_order=2)
else:
    explainer = shapiq.TreeExplainer(forest, index="SV", max_order=1)
explainer.explain_X(rows[:2 * jobs], n_jobs=jobs) if jobs > 1 else explainer.explain(rows[0])
setup = time.perf_counter() - start
seconds = float("inf")
for _ in range(10):  # calls under 0.2 s: the best of 10
    start = time.perf_counter()
    batch = explainer.explain_X(rows, n_jobs=jobs if jobs > 1 else None)
    seconds = min(seconds, time.perf_counter() - start)
    if seconds >= 0.2:
        break
n, p = rows.shape
if pairs:  # SII / 2 off the diagonal, as shap and pyinterp give it
    values = np.zeros((n, p, p))
    for key, v in batch.values.items():
        if len(key) == 2:
            values[:, key[0], key[1]] = values[:, key[1], key[0]] = np.asarray(v) / 2
else:
    values = np.column_stack([batch.values.get((j,), np.zeros(n)) for j in range(p)])
np.save(sys.argv[2] + "shapiq.npy", values)
print(json.dumps({"shapiq": seconds, "setup": setup}))
"""


def _peer_times(python, code, forest, rows, jobs, workdir, timeout, what="values"):
    """A peer's calls in its own environment (`what`: "values" or "pairs"): {name: (seconds,
    values)}, its "setup" seconds when it gives them, or {"error": what happened} (after timeout
    seconds it and its workers are killed)."""
    path = Path(workdir) / "case.pkl"
    path.write_bytes(pickle.dumps((forest, rows, jobs)))
    with subprocess.Popen([python, "-c", code, str(path), str(Path(workdir) / "values_"), what], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the peer and its joblib workers only
            proc.communicate()
            return {"error": f"stopped after the {timeout:g} s limit"}
    if proc.returncode != 0:
        return {"error": stderr.strip().splitlines()[-1] if stderr.strip() else "failed"}
    times = json.loads(stdout.strip().splitlines()[-1])
    return {a: t if a == "setup" else (t, np.load(Path(workdir) / f"values_{a}.npy")) for a, t in times.items()}


def _best(fn):
    """best_of(fn), and for a call under 0.2 s the best of 10: single calls of a few ms are noise."""
    seconds, values = best_of(fn)
    return (min(seconds, best_of(fn, repeats=9)[0]), values) if seconds < 0.2 else (seconds, values)


def _timed_to(fn, path):
    seconds, values = _best(fn)
    np.save(path, np.asarray(values))
    path.with_suffix(".txt").write_text(str(seconds))


def _capped(fn, timeout):
    """best_of(fn) in a forked copy of this process: (seconds, values), or what went wrong (after
    timeout seconds it is killed)."""
    with tempfile.TemporaryDirectory() as workdir:
        path = Path(workdir) / "values.npy"
        child = multiprocessing.get_context("fork").Process(target=_timed_to, args=(fn, path))
        child.start()
        child.join(timeout)
        if child.is_alive():
            child.kill()
            child.join()
            return f"stopped after the {timeout:g} s limit"
        if child.exitcode != 0:
            return f"failed (exit code {child.exitcode})"
        return float(path.with_suffix(".txt").read_text()), np.load(path)


def _peer(name, timed, ours, t_ours, off_diagonal=False):
    """The line's part for one peer: its time, the ratio to pyinterp's and the largest difference
    (of the off-diagonal entries only, with off_diagonal)."""
    if isinstance(timed, str):
        return f" | {name}: {timed}"
    t_peer, theirs = timed
    diff = np.abs(theirs - ours)
    if off_diagonal:
        diff = diff[:, ~np.eye(ours.shape[1], dtype=bool)]
    return f" | {name} {t_peer:9.5f} s, ratio {t_peer / t_ours:5.2f}, max |diff| {diff.max():.1e}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depths", type=int, nargs="+", default=[4, 8, 16, 0], help="0: fully grown")
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--rows", type=int, nargs="+", default=[2000])
    parser.add_argument("--train", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1])
    parser.add_argument("--fasttreeshap-python", default=None)
    parser.add_argument("--shapiq-python", default=None)
    parser.add_argument("--timeout", type=float, default=None, help="seconds any peer may take on a case")
    parser.add_argument("--interactions", action="store_true", help="interaction values instead of values")
    args = parser.parse_args()
    shap, woodelf, pd = optional("shap"), optional("woodelf"), optional("pandas")
    print(f"load average {os.getloadavg()} ({os.cpu_count()} CPUs); shap "
          f"{'not installed' if shap is None else shap.__version__}; woodelf "
          f"{'not installed (pip install woodelf-explainer)' if woodelf is None else woodelf.__version__}; "
          f"FastTreeSHAP {args.fasttreeshap_python or 'not given'}; shapiq {args.shapiq_python or 'not given'}; "
          f"timeout {args.timeout or 'none'}")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.train, args.features))
    y = X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3]) + 0.5 * rng.standard_normal(args.train)
    envs = [("FastTreeSHAP ", args.fasttreeshap_python, _FASTTREESHAP), ("", args.shapiq_python, _SHAPIQ)]
    ours_of = lambda forest, rows, jobs: imp.shap_values(forest, rows, n_jobs=jobs)[0]  # noqa: E731
    if args.interactions:
        envs = [("", args.shapiq_python, _SHAPIQ)]
        ours_of = lambda forest, rows, jobs: imp.shap_interaction_values(forest, rows, n_jobs=jobs)  # noqa: E731
        woodelf = None
    for depth in args.depths:
        forest = RandomForestRegressor(n_estimators=args.trees, max_depth=depth or None, min_samples_leaf=1,
                                       max_features=1 / 3, random_state=0, n_jobs=2).fit(X, y)
        real = max(e.tree_.max_depth for e in forest.estimators_)
        for n_rows, jobs in ((r, j) for r in args.rows for j in args.jobs):
            rows = X[:n_rows]
            fresh = pickle.loads(pickle.dumps(forest))
            t_first, _ = best_of(lambda: ours_of(fresh, rows, jobs))
            t_ours, ours = _best(lambda: ours_of(fresh, rows, jobs))
            line = (f"depth {depth or 'full'} (max {real}), {args.trees} trees, {len(rows)} rows, {jobs} thread(s): "
                    f"pyinterp {t_ours:9.5f} s (first {t_first:.4f})")
            if shap is not None and jobs == 1:
                explainer = shap.TreeExplainer(forest)
                call = explainer.shap_interaction_values if args.interactions else explainer.shap_values
                timed = _capped(lambda: call(rows) if args.interactions else call(rows, check_additivity=False),
                                args.timeout)
                line += _peer("shap", timed, ours, t_ours)
            if woodelf is not None and pd is not None and jobs == 1:
                frame = pd.DataFrame(rows, columns=[f"f{j}" for j in range(args.features)])
                timed = _capped(lambda: woodelf.WoodelfExplainer(forest).shap_values(frame, verbose=False),
                                args.timeout)
                line += _peer("woodelf", timed, ours, t_ours)
            for label, python, code in ((label, python, code) for label, python, code in envs if python):
                with tempfile.TemporaryDirectory() as workdir:
                    peers = _peer_times(python, code, forest, rows, jobs, workdir, args.timeout,
                                        "pairs" if args.interactions else "values")
                if "error" in peers:
                    line += _peer(label.strip() or "shapiq", peers["error"], ours, t_ours)
                for name, timed in ((a, v) for a, v in peers.items() if a not in ("error", "setup")):
                    line += _peer(label + name, timed, ours, t_ours, off_diagonal=args.interactions)
                if "setup" in peers:
                    line += f" (setup {peers['setup']:.3f})"
            print(f"{line}  load {load():.2f}", flush=True)


if __name__ == "__main__":
    main()
