"""asv benchmarks of interaction discovery: signed paths, DWP, prevalent sets (DWP + mining),
frequent itemsets, LSSFind and iRF, on one LSS problem (n=1000, p=20) and a 100-tree forest."""

import numpy as np
from benchkit.data import lss_fig2

from pyinterp import IterativeRandomForest, LSSFind, RandomForestRegressor, frequent_itemsets
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
