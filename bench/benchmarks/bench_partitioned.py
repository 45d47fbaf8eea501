"""asv benchmarks of the partitioned ratio: a lambda path, and one loss-and-gradient evaluation of
the matrix form."""

import numpy as np
from benchkit.data import random_precision, sample

from pyinterp import PartitionedRatio
from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem


class Ratio:
    """m = 20 variables (blocks 10/10) of an Erdos-Renyi Gaussian MRF, n = 400."""

    timeout = 300

    def setup(self):
        rng = np.random.default_rng(7)
        self.X = sample(random_precision(20, 0.1, 0.4, rng), 400, rng)
        Z = (self.X - self.X.mean(0)) / self.X.std(0)
        self.problem = RatioProblem(Z, np.arange(10), np.arange(10, 20), PAIR_FEATURES["xy"],
                                    UNARY_FEATURES["quadratic"])
        self.theta = np.zeros(self.problem.n_params)

    def time_path(self):
        PartitionedRatio(10, selection="smallest", refit=False, n_jobs=2).fit(self.X)

    def time_value_and_grad(self):
        self.problem.value_and_grad(self.theta)
