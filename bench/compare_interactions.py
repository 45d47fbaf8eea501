"""Interaction discovery cost: pyinterp's compiled DWP / FP-growth / iRF against their peers,
side by side in one process, reported as ratios (peer time / pyinterp time).

1. DWP extraction + mining (LSSFind) on one 300-tree forest, n=2000, p=50 (pyinterp's engine by
   default, scikit-learn's with --engine sklearn, which adds pyinterp's import of the trees):
   pyinterp.interactions.prevalent_sets against lssfind_python, the pure-Python reference in
   tests/reference_interactions.py written the way the lssfind package computes it.
   Target: >= 100x.
2. Frequent itemsets on unweighted transactions (the forest's signed leaf paths with epsilon=0,
   a synthetic Zipf market basket, and the paths of a 500-tree classifier on madelon, almost all
   distinct: about 141,700 paths, 99 % distinct; skipped without the shared madelon.npz):
   pyinterp.frequent_itemsets against pyfim (Borgelt's C FP-growth), mlxtend's fpgrowth and the
   pure-Python FP-growth of the reference module.
   Targets: pyinterp >= 3x pyfim (issue 54 item 5), >= 50x faster than mlxtend.
3. iRF: pyinterp.IterativeRandomForest wall time next to the published R iRF 3.0 figure.
   Target: <= 10 s.

Every output is checked against the peer's (itemsets and supports exactly, DWPs up to 1e-12).

    python bench/compare_interactions.py                     # everything
    python bench/compare_interactions.py --reference-only    # peers only, no pyinterp call
    python bench/compare_interactions.py --sections 2 --skip-mlxtend
    python bench/compare_interactions.py --sections 2 --skip-mlxtend --skip-python-fp \
        --madelon-supports 0.01,0.005,0.002    # the distinct paths at three supports
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from benchkit.data import shared_npz
from benchkit.peers import mlxtend_itemsets, not_installed, optional, reference
from benchkit.timing import best_of, load, load_line
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

import pyinterp
from pyinterp.datasets import make_lss

ref = reference("reference_interactions")

TOL = 1e-12
R_IRF_SECONDS = 107.0  # R iRF 3.0 reference figure for the section-3 problem (published, not measured here)


# ---------------------------------------------------------------------------------------------
# helpers


def pyinterp_api(dotted, args):
    """The pyinterp callable named by `dotted` ("interactions.prevalent_sets"), or None and why."""
    if args.reference_only:
        return None, "skipped (--reference-only)"
    obj = pyinterp
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj, None


class Table:
    def __init__(self):
        self.rows = []

    def add(self, task, impl, seconds=None, ratio=None, n_out=None, check="", note=""):
        self.rows.append((task, impl, seconds, ratio, n_out, check, note))

    def print(self):
        head = ("task", "implementation", "time s", "vs pyinterp", "results", "check", "")
        cells = [head]
        for task, impl, seconds, ratio, n_out, check, note in self.rows:
            cells.append((
                task, impl,
                "" if seconds is None else f"{seconds:.4g}",
                "" if ratio is None else f"{ratio:.3g}x",
                "" if n_out is None else str(n_out),
                check, note,
            ))
        widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
        for i, row in enumerate(cells):
            print("  ".join(c.ljust(w) if j < 2 or j >= 5 else c.rjust(w)
                            for j, (c, w) in enumerate(zip(row, widths))).rstrip())
            if i == 0:
                print("  ".join("-" * w for w in widths))


def compare_dicts(got, want, tol=TOL):
    """'' if got equals want (same keys, values within tol), else a short description."""
    missing = want.keys() - got.keys()
    extra = got.keys() - want.keys()
    worst = max((abs(float(got[k]) - float(want[k])) for k in got.keys() & want.keys()), default=0.0)
    if not missing and not extra and worst <= tol:
        return ""
    parts = []
    if missing:
        parts.append(f"{len(missing)} missing, e.g. {sorted(missing)[:3]}")
    if extra:
        parts.append(f"{len(extra)} extra, e.g. {sorted(extra)[:3]}")
    if worst > tol:
        parts.append(f"max value difference {worst:.3g}")
    return "; ".join(parts)


class Run:
    def __init__(self, args):
        self.args = args
        self.table = Table()
        self.failures = []
        self._forest = None

    def check(self, task, impl, got, want, tol=TOL):
        problem = compare_dicts(got, want, tol)
        if problem:
            self.failures.append(f"{task} / {impl}: {problem}")
            return "DIFFERS"
        return "same"

    def forest(self):
        """The section-1 forest (fitted once, shared with section 2)."""
        if self._forest is None:
            a = self.args
            X, y, truth = make_lss(n_samples=a.n, n_features=a.p, n_interactions=2, order=2, snr=5,
                                   random_state=0)
            start = time.perf_counter()
            Forest = RandomForestRegressor if a.engine == "sklearn" else pyinterp.RandomForestRegressor
            rf = Forest(n_estimators=a.trees, max_features=1.0, min_samples_leaf=1,
                        random_state=0, n_jobs=a.n_jobs).fit(X, y)
            fit = time.perf_counter() - start
            nodes = np.mean([t.node_count for t in ref.filtered_trees(rf)])
            print(f"forest: {a.engine} RandomForestRegressor, {a.trees} trees, n={a.n}, p={a.p}, "
                  f"max_features=1.0, min_samples_leaf=1, n_jobs={a.n_jobs}; fit {fit:.1f} s, "
                  f"mean {nodes:.0f} nodes per tree; planted interactions {truth}")
            self._forest = rf
        return self._forest

    # -----------------------------------------------------------------------------------------
    # 1. DWP extraction + mining

    def section_dwp(self):
        a = self.args
        task = "1 DWP+mining"
        rf = self.forest()
        start = time.perf_counter()
        reference = ref.lssfind_python(rf, epsilon=a.epsilon, min_adjusted=a.min_adjusted,
                                       max_order=a.max_order, counts=a.counts)
        t_ref = time.perf_counter() - start
        raw = {s: v / 2.0 ** len(s) for s, v in reference.items()}
        print(f"[1] LSSFind: epsilon={a.epsilon}, adjusted DWP >= {a.min_adjusted}, |S| <= {a.max_order}, "
              f"counts={a.counts!r}: {len(reference)} sets; top: "
              + ", ".join(f"{s} {v:.4f}" for s, v in sorted(reference.items(), key=lambda kv: -kv[1])[:4]))

        fn, why = pyinterp_api("interactions.prevalent_sets", a)
        t_py = None
        if fn is None:
            self.table.add(task, "pyinterp prevalent_sets", note=why)
        else:
            # The same query as lssfind: mine at min_adjusted / 2^max_order, keep 2^|S| DWP >= min_adjusted.
            def run():
                table = fn(rf, a.min_adjusted / 2.0**a.max_order, max_order=a.max_order, epsilon=a.epsilon,
                           node_counts=a.counts, n_jobs=a.n_jobs)
                return table.select(table["adjusted_dwp"] >= a.min_adjusted - TOL)

            t_py, table = best_of(run, a.repeats)
            got = {tuple(sorted((int(k), int(s)) for k, s in rec.features)): float(rec.dwp) for rec in table}
            # Sets exactly at the threshold differ only by float summation order (pyinterp keeps them
            # with a 1e-12 slack, the reference's plain >= may not): left out of the comparison.
            edge = {s for s, v in got.items() if abs(2.0 ** len(s) * v - a.min_adjusted) <= TOL}
            check = self.check(task, "pyinterp", {s: v for s, v in got.items() if s not in edge},
                               {s: v for s, v in raw.items() if s not in edge})
            self.table.add(task, "pyinterp prevalent_sets", t_py, None, len(got), check,
                           f"best of {a.repeats}, n_jobs={a.n_jobs}; {len(edge)} sets at the threshold")
        self.table.add(task, "lssfind_python (pure Python)", t_ref,
                       None if t_py is None else t_ref / t_py, len(reference), "reference",
                       "1 run; target >= 100x")

    # -----------------------------------------------------------------------------------------
    # 2. frequent itemsets, unweighted

    def path_transactions(self):
        """Signed leaf paths of the section-1 forest with epsilon=0, as codes 2k (left) / 2k+1."""
        paths = ref.filtered_paths(self.forest(), 0.0, counts=self.args.counts)
        tx = [sorted(2 * k + (sign > 0) for k, sign in items) for items, _ in paths]
        return [t for t in tx if t]

    def madelon_transactions(self):
        """Signed leaf paths (epsilon=0) of a 500-tree classifier on madelon, coded as in
        path_transactions; None when madelon.npz is absent. Fitted once."""
        if not hasattr(self, "_madelon"):
            data = shared_npz("madelon")
            self._madelon = None
            if data is not None:
                a = self.args
                Forest = (RandomForestClassifier if a.engine == "sklearn" or a.reference_only
                          else pyinterp.RandomForestClassifier)
                start = time.perf_counter()
                rf = Forest(n_estimators=500, random_state=0, n_jobs=a.n_jobs).fit(data["X"], data["y"])
                paths = ref.filtered_paths(rf, 0.0, counts=a.counts)
                tx = [sorted(2 * k + (sign > 0) for k, sign in items) for items, _ in paths]
                self._madelon = [t for t in tx if t]
                print(f"madelon: {type(rf).__module__.split('.')[0]} RandomForestClassifier, 500 trees, "
                      f"{time.perf_counter() - start:.1f} s to fit and read; "
                      f"{len(set(map(tuple, self._madelon)))} distinct of {len(self._madelon)} paths")
        return self._madelon

    def basket_transactions(self):
        """Synthetic market basket: items drawn without replacement with Zipf(1) frequencies."""
        a = self.args
        rng = np.random.default_rng(0)
        p = 1.0 / np.arange(1, a.basket_items + 1)
        p /= p.sum()
        lengths = np.minimum(1 + rng.poisson(a.basket_mean - 1, size=a.basket_n), a.basket_items)
        return [sorted(rng.choice(a.basket_items, size=int(k), replace=False, p=p).tolist()) for k in lengths]

    def section_itemsets(self):
        a = self.args
        datasets = [
            ("2 itemsets: forest paths", self.path_transactions, a.path_support),
            ("2 itemsets: Zipf basket", self.basket_transactions, a.basket_support),
        ] + [(f"2 itemsets: madelon paths {support:g}", self.madelon_transactions, support)
             for support in (float(x) for x in a.madelon_supports.split(",") if x.strip())]
        fim = optional("fim")
        fn, why = pyinterp_api("frequent_itemsets", a)

        for task, build, fraction in datasets:
            tx = build()
            if tx is None:
                self.table.add(task, "(all)", note="skipped: the shared madelon.npz is absent")
                continue
            n = len(tx)
            min_count = max(1, math.ceil(fraction * n))
            lengths = [len(t) for t in tx]
            print(f"[2] {task[2:]}: {n} transactions over {len(set(i for t in tx for i in t))} items, "
                  f"length mean {np.mean(lengths):.1f} max {max(lengths)}; "
                  f"min support {min_count} ({fraction:g} of transactions)")
            results = {}  # implementation -> (seconds, itemsets)

            t_py = None
            if fn is None:
                self.table.add(task, "pyinterp frequent_itemsets", note=why)
            else:
                t_one, got = best_of(lambda: fn(tx, weights=None, min_support=min_count, max_size=None), a.repeats)
                t_py, got = best_of(lambda: fn(tx, weights=None, min_support=min_count, max_size=None,
                                               n_jobs=a.n_jobs), a.repeats)
                got = {tuple(int(i) for i in s): v for s, v in got.items()}
                results["pyinterp"] = got

            rows = []
            if fim is None:
                rows.append(("pyfim fpgrowth (C)", None, None, not_installed("pyfim", "pyfim")))
            else:
                t, out = best_of(lambda: fim.fpgrowth(tx, target="s", supp=-min_count, report="a"), a.repeats)
                results["pyfim"] = {tuple(sorted(s)): v for s, v in out}
                rows.append(("pyfim fpgrowth (C)", t, results["pyfim"],
                             f"best of {a.repeats}; target >= 3x (issue 54 item 5)"))
            if a.skip_mlxtend:
                rows.append(("mlxtend fpgrowth", None, None, "skipped (--skip-mlxtend)"))
            elif (mined := mlxtend_itemsets(tx, min_count)) is None:
                rows.append(("mlxtend fpgrowth", None, None, not_installed("mlxtend", "mlxtend")))
            else:
                t, out, t_enc = mined
                results["mlxtend"] = out
                rows.append(("mlxtend fpgrowth", t, out,
                             f"1 run, one-hot encoding ({t_enc:.2f} s) not timed; target >= 50x"))
            if a.skip_python_fp:
                rows.append(("weighted_fpgrowth (pure Python)", None, None, "skipped (--skip-python-fp)"))
            else:
                t, out = best_of(lambda: ref.weighted_fpgrowth(tx, None, min_count), 1)
                results["python"] = out
                rows.append(("weighted_fpgrowth (pure Python)", t, out, "1 run"))

            truth_name = next((k for k in ("pyfim", "python", "mlxtend") if k in results), None)
            truth = results.get(truth_name)
            if "pyinterp" in results:
                check = self.check(task, "pyinterp", results["pyinterp"], truth) if truth is not None else ""
                self.table.add(task, f"pyinterp frequent_itemsets n_jobs={a.n_jobs}", t_py, None,
                               len(results["pyinterp"]), check, f"best of {a.repeats}; ratios below are against this")
                self.table.add(task, "pyinterp frequent_itemsets n_jobs=1", t_one, t_one / t_py, None, "",
                               f"best of {a.repeats}")
            for impl, t, out, note in rows:
                if t is None:
                    self.table.add(task, impl, note=note)
                    continue
                if impl.startswith("pyfim") and "pyinterp" in results:
                    note = f"{t / t_one:.2f}x pyinterp on one thread; {note}"
                if impl.startswith(("pyfim", "weighted_fpgrowth")) and truth is out:
                    check = "reference"
                else:
                    check = self.check(task, impl, out, truth)
                self.table.add(task, impl, t, None if t_py is None else t / t_py, len(out), check, note)

    # -----------------------------------------------------------------------------------------
    # 3. iRF

    def section_irf(self):
        a = self.args
        task = "3 iRF"
        X, y, _ = make_lss(n_samples=1000, n_features=50, n_interactions=2, order=2, random_state=0)
        cls, why = pyinterp_api("IterativeRandomForest", a)
        setting = "n=1000, p=50; 5 iterations x 500 trees, 10 bootstraps, n_jobs=2"
        if cls is None:
            self.table.add(task, "pyinterp IterativeRandomForest", note=f"{why}; {setting}")
        else:
            model = cls(n_iterations=5, n_estimators=500, n_bootstraps=10, random_state=0, n_jobs=a.n_jobs)
            start = time.perf_counter()
            model.fit(X, y)
            t = time.perf_counter() - start
            self.table.add(task, "pyinterp IterativeRandomForest", t, None, None, "",
                           f"1 run; target <= 10 s; {setting}")
        self.table.add(task, "R iRF 3.0", R_IRF_SECONDS, None, None, "",
                       "published figure, not measured here")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference-only", action="store_true", help="run the peers only, call no pyinterp API")
    parser.add_argument("--sections", default="1,2,3", help="comma-separated subset of 1,2,3")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--p", type=int, default=50)
    parser.add_argument("--trees", type=int, default=300)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many for pyinterp and pyfim")
    parser.add_argument("--epsilon", type=float, default=0.01)
    parser.add_argument("--min-adjusted", type=float, default=0.5, help="threshold on 2^|S| DWP(S)")
    parser.add_argument("--max-order", type=int, default=3)
    parser.add_argument("--engine", choices=("pyinterp", "sklearn"), default="pyinterp",
                        help="forest engine of sections 1-2 (sklearn adds pyinterp's import of its trees)")
    parser.add_argument("--counts", choices=("weighted", "distinct"), default="weighted",
                        help="node counts in the impurity decrease: weighted_n_node_samples or n_node_samples")
    parser.add_argument("--path-support", type=float, default=0.01,
                        help="min support of the forest-path itemsets, as a fraction of transactions")
    parser.add_argument("--basket-support", type=float, default=0.005)
    parser.add_argument("--madelon-supports", default="0.005",
                        help="min supports (fractions, comma-separated; empty skips madelon) of its paths")
    parser.add_argument("--basket-n", type=int, default=20000)
    parser.add_argument("--basket-items", type=int, default=200)
    parser.add_argument("--basket-mean", type=float, default=10.0, help="mean transaction length")
    parser.add_argument("--skip-mlxtend", action="store_true")
    parser.add_argument("--skip-python-fp", action="store_true", help="skip the pure-Python FP-growth in section 2")
    args = parser.parse_args()
    sections = {s.strip() for s in args.sections.split(",") if s.strip()}

    print(load_line())
    run = Run(args)
    if "1" in sections:
        run.section_dwp()
    if "2" in sections:
        run.section_itemsets()
    if "3" in sections:
        run.section_irf()
    print()
    run.table.print()
    print(f"\nload average {load():.2f} at the end")
    if run.failures:
        print("OUTPUTS DIFFER:")
        for line in run.failures:
            print("  " + line)
        return 1
    print("all compared outputs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
