"""asv benchmarks of the forest engine: fit (time and peak memory) and predict."""

import numpy as np
from benchkit.data import two_rules

from pyinterp import RandomForestClassifier, RandomForestRegressor, _core


class RegressionFit:
    """Tall (n=20000, p=500) and wide (n=2000, p=10000) regression forests, 20 trees, 2 threads."""

    params = [("tall", "wide")]
    param_names = ["shape"]
    timeout = 300

    def setup(self, shape):
        n, p, self.mtry = (20000, 500, 166) if shape == "tall" else (2000, 10000, 100)
        self.X, self.y = two_rules(n, p)

    def _forest(self):
        return RandomForestRegressor(n_estimators=20, max_features=self.mtry, n_jobs=2, random_state=0)

    def time_fit(self, shape):
        self._forest().fit(self.X, self.y)

    def peakmem_fit(self, shape):
        self._forest().fit(self.X, self.y)


class GenotypeFit:
    """Genotypes {0, 1, 2} as int8, n=2000 x p=50000 (C order, as np.load gives them): encoding
    alone (the fixed cost of every fit) and a 2-tree fit, 2 threads."""

    timeout = 300

    def setup(self):
        rng = np.random.default_rng(0)
        self.X = rng.binomial(2, rng.uniform(0.05, 0.5, size=50_000), size=(2000, 50_000)).astype(np.int8)
        self.y = self.X[:, 0] + (self.X[:, 1] > 0) * (self.X[:, 2] > 0) + rng.normal(0, 1, 2000)

    def time_encode(self):
        _core.ColumnCodes(self.X, 2)

    def time_fit_2_trees(self):
        RandomForestRegressor(n_estimators=2, max_features="sqrt", n_jobs=2, random_state=0).fit(self.X, self.y)

    def peakmem_fit_2_trees(self):
        RandomForestRegressor(n_estimators=2, max_features="sqrt", n_jobs=2, random_state=0).fit(self.X, self.y)


class PackedGenotypeFit(GenotypeFit):
    """GenotypeFit with its genotypes as a PLINK 1 .bed read in place (pyinterp.io.read_plink): the
    column codes (two bits a call, no copy) and a 2-tree fit, 2 threads. Same trees as GenotypeFit's."""

    def setup(self):
        import tempfile
        from pathlib import Path

        from pyinterp.io import read_plink
        from pyinterp.io.packing import pack_counts

        super().setup()
        self.folder = tempfile.TemporaryDirectory()
        prefix = Path(self.folder.name) / "g"
        (prefix.with_suffix(".bed")).write_bytes(bytes([0x6C, 0x1B, 0x01]) + pack_counts(self.X.T).tobytes())
        prefix.with_suffix(".fam").write_text("".join(f"f{i} s{i} 0 0 0 -9\n" for i in range(self.X.shape[0])))
        prefix.with_suffix(".bim").write_text("".join(f"1 v{k} 0 {k + 1} A G\n" for k in range(self.X.shape[1])))
        self.X = read_plink(prefix)

    def teardown(self):
        self.folder.cleanup()


class ClassificationFit:
    """Genotype-like 3-level features (n=500, p=20000), 100 trees."""

    timeout = 300

    def setup(self):
        rng = np.random.RandomState(0)
        self.X = rng.randint(0, 3, size=(500, 20000)).astype(np.float32)
        self.y = (self.X[:, 0] + self.X[:, 1] > 2).astype(int)

    def time_fit(self):
        RandomForestClassifier(n_estimators=100, n_jobs=2, random_state=0).fit(self.X, self.y)


class SparseCountsFit:
    """Single-cell counts as CSR float32 (n=20,000 cells x p=5,000 genes), 5 cell types, 5 trees,
    max_features sqrt, 2 threads: at 0.5 % density (sparse splits peel a few cells off a node,
    so trees grow long spines) and 5 %; the classifier and a regressor on the same counts."""

    params = [(0.005, 0.05), ("classifier", "regressor")]
    param_names = ["density", "task"]
    timeout = 300

    def setup(self, density, task):
        import scipy.sparse as sp

        rng = np.random.default_rng(0)
        n, p = 20_000, 5_000
        self.X = sp.random(n, p, density=density, format="csr", dtype=np.float32, random_state=0,
                           data_rvs=lambda k: rng.poisson(2.0, k) + 1.0)
        first = self.X[:, :4].toarray()
        score = first[:, 0] + 2.0 * (first[:, 1] > 0) * (first[:, 2] > 0) - first[:, 3] + rng.normal(0, 0.5, n)
        self.y = np.digitize(score, np.quantile(score, [0.2, 0.4, 0.6, 0.8])) if task == "classifier" else score
        self.Forest = RandomForestClassifier if task == "classifier" else RandomForestRegressor

    def time_fit(self, density, task):
        self.Forest(n_estimators=5, max_features="sqrt", n_jobs=2, random_state=0).fit(self.X, self.y)

    def peakmem_fit(self, density, task):
        self.Forest(n_estimators=5, max_features="sqrt", n_jobs=2, random_state=0).fit(self.X, self.y)


class WeightedFeatureSampling:
    """iRF-style skewed feature weights on p = 200000: per-node draws must not cost O(p)."""

    timeout = 300

    def setup(self):
        rng = np.random.RandomState(0)
        self.X = rng.rand(200, 200_000).astype(np.float32)
        self.y = self.X[:, 0] + 0.1 * rng.rand(200)
        self.w = np.full(200_000, 1e-5)
        self.w[:50] = 1.0

    def time_fit_weighted(self):
        RandomForestRegressor(n_estimators=50, max_features=500, n_jobs=2, random_state=0).fit(
            self.X, self.y, feature_weights=self.w)


class Predict:
    """Predict 20000 rows with a 100-tree forest grown to purity."""

    timeout = 300

    def setup(self):
        X, y = two_rules(5000, 50)
        self.forest = RandomForestRegressor(n_estimators=100, max_features=10, n_jobs=2, random_state=0).fit(X, y)
        self.X, _ = two_rules(20000, 50, seed=1)

    def time_predict(self):
        self.forest.predict(self.X)

    def time_apply(self):
        self.forest.apply(self.X)
