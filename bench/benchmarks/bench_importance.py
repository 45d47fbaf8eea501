"""asv benchmarks of pyinterp.importance: MDI-oob, UFI and OOB permutation on a fitted forest,
DSTUMP on a wide matrix, SHAP against background rows, and path-dependent SHAP values and
interaction values by depth."""

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


class BackgroundShap:
    """SHAP against background rows: 100 trees of depth 6, p = 127, 3,000 rows against 5,000
    background rows (WOODELF's benchmark shape at 1/1,000), one thread: leaf pattern tables, and
    the grouped walk on 30 rows."""

    timeout = 300

    def setup(self):
        rng = np.random.default_rng(0)
        self.background = rng.standard_normal((5000, 127)).astype(np.float32)
        self.X = rng.standard_normal((3000, 127)).astype(np.float32)
        y = self.background[:, 0] * self.background[:, 1] + self.background[:, :20].sum(axis=1)
        self.forest = RandomForestRegressor(n_estimators=100, max_depth=6, max_features=0.3, n_jobs=2,
                                            random_state=0).fit(self.background, y)

    def time_values(self):
        imp.shap_values(self.forest, self.X, background=self.background)

    def time_values_walk(self):
        imp.shap_values(self.forest, self.X[:30], background=self.background, algorithm="walk")

    def time_interaction_values(self):
        imp.shap_interaction_values(self.forest, self.X[:300], background=self.background)

    def peakmem_values(self):
        imp.shap_values(self.forest, self.X, background=self.background)


class PathDependentShap:
    """Path-dependent values (100 rows, and one row) and interaction values (16 rows) of 50
    scikit-learn trees fitted on n = 20,000, p = 50, at depth 4, 8 and fully grown, one thread (the
    shapes of bench/compare_shap_depths.py, where shapiq, shap and woodelf-explainer run beside
    them). Later calls on a forest: the first keeps what it derives from the trees alone."""

    timeout = 300
    params = [4, 8, 0]
    param_names = ["max_depth"]

    def setup(self, max_depth):
        from sklearn.ensemble import RandomForestRegressor as SkRegressor

        rng = np.random.default_rng(0)
        X = rng.standard_normal((20000, 50))
        y = X[:, 0] * X[:, 1] + X[:, 2] + np.sin(X[:, 3]) + 0.5 * rng.standard_normal(20000)
        self.forest = SkRegressor(n_estimators=50, max_depth=max_depth or None, max_features=1 / 3, random_state=0,
                                  n_jobs=2).fit(X, y)
        self.X = X[:100]
        imp.shap_values(self.forest, self.X[:1], n_jobs=1)  # reads the forest once

    def time_values(self, max_depth):
        imp.shap_values(self.forest, self.X, n_jobs=1)

    def time_values_one_row(self, max_depth):
        imp.shap_values(self.forest, self.X[:1], n_jobs=1)

    def time_interaction_values(self, max_depth):
        imp.shap_interaction_values(self.forest, self.X[:16], n_jobs=1)
