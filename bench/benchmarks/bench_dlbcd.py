"""asv benchmarks of dictionary learning: a two-stage DL-BCD fit (Algorithm 2 alone, and with the
noise stage, the default) and Algorithm 1 (sharpness_test)."""

from benchkit.data import gaussian_dictionary_problem

from pyinterp import DLBCD, sharpness_test


class DictionaryLearning:
    """p = 12 atoms, SG(4) coefficients, n = 100 p signals at SNR 100."""

    timeout = 300

    def setup(self):
        self.D, self.X = gaussian_dictionary_problem(12, 1200, 4, seed=0)

    def time_fit(self):
        DLBCD(tau=0.5, init="l1", noise=0, random_state=0, n_jobs=1).fit(self.X)

    def time_fit_with_noise_stage(self):
        DLBCD(tau=0.5, init="l1", random_state=0, n_jobs=1).fit(self.X)

    def time_sharpness_test(self):
        sharpness_test(self.D, self.X, random_state=0)
