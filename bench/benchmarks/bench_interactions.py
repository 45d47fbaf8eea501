"""asv benchmarks of interaction discovery: signed paths, DWP, prevalent sets (DWP + mining),
frequent itemsets, LSSFind and iRF, on one LSS problem (n=1000, p=20) and a 100-tree forest, and
frequent itemsets on the almost-distinct paths of a 500-tree forest on madelon."""

from benchkit.data import lss_fig2, shared_npz

from pyinterp import (IterativeRandomForest, LSSFind, RandomForestClassifier, RandomForestRegressor,
                      frequent_itemsets)
from pyinterp.interactions import dwp, prevalent_sets, signed_paths


class Paths:
    """Path extraction and mining on a 100-tree forest grown to purity."""

    timeout = 300

    def setup(self):
        X, y, self.true = lss_fig2(2, 2, 5.0, seed=0)
        self.forest = RandomForestRegressor(n_estimators=100, max_features=1.0, n_jobs=2, random_state=0).fit(X, y)
        paths = signed_paths(self.forest, 0.0)
        self.transactions = [paths.codes[paths.indptr[i]:paths.indptr[i + 1]].tolist()
                             for i in range(len(paths.indptr) - 1)]

    def time_signed_paths(self):
        signed_paths(self.forest, 0.01, n_jobs=2)

    def time_dwp(self):
        dwp(self.forest, self.true)

    def time_prevalent_sets(self):
        prevalent_sets(self.forest, 2.0**-3, max_order=3, n_jobs=2)

    def time_frequent_itemsets(self):
        frequent_itemsets(self.transactions, min_support=0.01 * len(self.transactions), n_jobs=2)


class Estimators:
    """LSSFind with its defaults and a small iRF (2 iterations x 100 trees, 5 bootstraps)."""

    timeout = 300

    def setup(self):
        self.X, self.y, _ = lss_fig2(2, 2, 5.0, seed=0)

    def time_lssfind(self):
        LSSFind(max_order=3, random_state=0, n_jobs=2).fit(self.X, self.y)

    def time_irf(self):
        IterativeRandomForest(n_iterations=2, n_estimators=100, n_bootstraps=5, random_state=0,
                              n_jobs=2).fit(self.X, self.y)


class DistinctPaths:
    """frequent_itemsets on one thread over the signed paths (epsilon 0) of a 500-tree classifier
    on madelon: 142,405 paths, 141,469 distinct (issue 54 item 5). Skipped without the shared
    madelon.npz."""

    timeout = 600
    params = [0.01, 0.005, 0.002]
    param_names = ["support"]

    def setup_cache(self):
        data = shared_npz("madelon")
        if data is None:
            return None
        forest = RandomForestClassifier(n_estimators=500, random_state=0, n_jobs=2).fit(data["X"], data["y"])
        paths = signed_paths(forest, 0.0)
        return [paths.codes[paths.indptr[i]:paths.indptr[i + 1]].tolist() for i in range(len(paths.indptr) - 1)]

    def setup(self, transactions, support):
        if transactions is None:
            raise NotImplementedError("the shared madelon.npz is absent")

    def time_frequent_itemsets(self, transactions, support):
        frequent_itemsets(transactions, min_support=support * len(transactions), n_jobs=1)
