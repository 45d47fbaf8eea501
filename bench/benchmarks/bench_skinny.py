"""asv benchmarks of Skinny Trees: training epochs and prediction of a fitted model."""

import numpy as np
from pyinterp.datasets import make_correlated_linear

from pyinterp import SkinnyTreesRegressor


class Skinny:
    """Table 1's synthetic setting (p = 256, 160 rows), 10 trees of depth 3, 20 epochs."""

    timeout = 300

    def setup(self):
        self.X, self.y, _ = make_correlated_linear(160, 256, 0.5, random_state=np.random.RandomState(0))
        self.model = self._model().fit(self.X, self.y)

    def _model(self):
        return SkinnyTreesRegressor(n_trees=10, depth=3, max_epochs=20, random_state=0)

    def time_fit(self):
        self._model().fit(self.X, self.y)

    def time_predict(self):
        self.model.predict(self.X)
