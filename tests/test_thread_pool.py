"""The core's pool of helper threads (common/thread_pool.hpp): loops from many Python threads at
once share it and give the results of one thread; a forked child, where the parent's helpers do not
exist, makes its own pool and still runs its loops on several threads."""

import multiprocessing
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from pyinterp import RandomForestRegressor
from pyinterp import importance as imp

rng = np.random.RandomState(0)
X = rng.rand(400, 8)
Y = X[:, 0] * X[:, 1] + X[:, 2] + 0.1 * rng.randn(400)


def _fit_and_explain(n_jobs):
    forest = RandomForestRegressor(n_estimators=12, max_depth=6, random_state=0, n_jobs=n_jobs).fit(X, Y)
    return forest.predict(X), imp.shap_values(forest, X[:64], n_jobs=n_jobs)[0]


def test_loops_from_many_threads_at_once_equal_one_thread():
    # more loops than helpers: helpers queue behind other loops' and are withdrawn once their
    # caller has done every task itself
    want = _fit_and_explain(1)
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(_fit_and_explain, [2, 3, 4, 2, 3, 4]))
    for predictions, values in results:
        np.testing.assert_array_equal(predictions, want[0])
        np.testing.assert_array_equal(values, want[1])


def _in_child(n_jobs):
    """The results, and the threads of the forked child after them (its pool's helper among them)."""
    return _fit_and_explain(n_jobs), len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(sys.platform != "linux", reason="fork, /proc")
def test_a_forked_child_makes_its_own_pool():
    want = _fit_and_explain(2)  # the parent's pool has a helper now
    with multiprocessing.get_context("fork").Pool(1) as children:
        (predictions, values), threads = children.apply_async(_in_child, (2,)).get(timeout=120)
    np.testing.assert_array_equal(predictions, want[0])
    np.testing.assert_array_equal(values, want[1])
    assert threads >= 2  # a child that kept the parent's pool would have no helper running
