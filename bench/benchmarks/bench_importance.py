"""asv benchmarks of pyinterp.importance: MDI-oob, UFI and OOB permutation on a fitted forest, and
DSTUMP on a wide matrix."""

import numpy as np
from benchkit.data import oob_regression

from pyinterp import RandomForestRegressor
from pyinterp import importance as imp


class OobImportance:
    """500 trees on n=5000, p=100 (the issue's MDI-oob setting), 2 threads."""

    timeout = 300

    def setup(self):
        self.X, self.y = oob_regression(5000, 100)
        self.forest = RandomForestRegressor(n_estimators=500, n_jobs=2, random_state=0).fit(self.X, self.y)

    def time_mdi_oob(self):
        imp.mdi_oob(self.forest, self.X, self.y, n_jobs=2)

    def time_ufi(self):
        imp.ufi(self.forest, self.X, self.y, n_jobs=2)

    def time_oob_predict(self):
        """The pass oob_score=True runs inside fit."""
        self.forest.oob_predict(self.X)

    def time_permutation_oob(self):
        imp.permutation_oob(self.forest, self.X, self.y, n_repeats=1, random_state=0, n_jobs=2)


class DStump:
    """One stump per feature, n=1000, p=100000."""

    timeout = 300

    def setup(self):
        rng = np.random.RandomState(0)
        self.X = rng.rand(1000, 100000).astype(np.float32)
        self.y = self.X[:, :10].sum(axis=1) + 0.1 * rng.randn(1000)

    def time_dstump_best(self):
        imp.dstump(self.X, self.y, n_jobs=2)

    def peakmem_dstump_best(self):
        imp.dstump(self.X, self.y, n_jobs=2)
