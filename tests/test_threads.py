"""One estimator object used from several threads (issue 52, item 3): a second fit while another
thread fits the object is refused before it changes anything, and the first fit ends as if alone;
predictions, scores and explanations of one fitted forest from many threads at once equal those
of one thread."""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.base import clone

from pyinterp import (DLBCD, IterativeRandomForest, LocalLSSFind, LSSFind, PartitionedRatio, RandomForestClassifier,
                      RandomForestRegressor, SkinnyTreesClassifier, SkinnyTreesRegressor, importance)

rng = np.random.RandomState(0)
X = rng.rand(300, 6)
Y = X[:, 0] * (X[:, 1] > 0.5) + 0.05 * rng.randn(300)
LABELS = (Y > np.median(Y)).astype(int)
SIGNALS = rng.laplace(size=(300, 6))

# name -> (estimator, its fit's arguments)
FITS = {
    "forest regressor": (RandomForestRegressor(n_estimators=10, random_state=0), (X, Y)),
    "forest classifier": (RandomForestClassifier(n_estimators=10, random_state=0), (X, LABELS)),
    "lssfind": (LSSFind(n_estimators=5, random_state=0), (X, Y)),
    "local lssfind": (LocalLSSFind(n_estimators=5, random_state=0), (X, Y)),
    "irf": (IterativeRandomForest(n_iterations=2, n_estimators=10, n_bootstraps=2, rit_n_trees=10, random_state=0),
            (X, LABELS)),
    "skinny regressor": (SkinnyTreesRegressor(n_trees=2, depth=2, max_epochs=2, random_state=0), (X, Y)),
    "skinny classifier": (SkinnyTreesClassifier(n_trees=2, depth=2, max_epochs=2, random_state=0), (X, LABELS)),
    "dlbcd": (DLBCD(n_restarts=2, max_iter=3, random_state=0), (SIGNALS,)),
    "partitioned ratio": (PartitionedRatio(3, n_lambdas=3, max_iter=30, random_state=0), (X,)),
}


class _Gate(logging.Handler):
    """Holds the thread of the first progress record until released: a fit paused half-way."""

    def __init__(self):
        super().__init__()
        self.entered, self.opened = threading.Event(), threading.Event()

    def emit(self, record):
        if not self.entered.is_set():
            self.entered.set()
            self.opened.wait(60)


def _learnt(estimator):
    return {k: repr(v) for k, v in vars(estimator).items() if k.endswith("_")}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", FITS)
def test_a_second_fit_from_another_thread_is_refused_and_the_first_ends_as_if_alone(name):
    template, args = FITS[name]
    estimator = clone(template).set_params(verbose=1)
    alone = clone(estimator).fit(*args)
    gate, logger = _Gate(), logging.getLogger("pyinterp")
    logger.addHandler(gate)
    level = logger.level
    logger.setLevel(logging.INFO)
    first = ThreadPoolExecutor(1)
    try:
        fitting = first.submit(estimator.fit, *args)
        assert gate.entered.wait(60), "the first fit reported no progress"
        during = dict(vars(estimator))
        with pytest.raises(RuntimeError, match=rf"^{type(estimator).__name__}\.fit was called while another "
                                               r"thread fits the same object; .*\(sklearn\.base\.clone"):
            estimator.fit(*args)
        assert vars(estimator) == during  # the refused fit changed nothing
    finally:
        gate.opened.set()
        first.shutdown(wait=True)
        logger.removeHandler(gate)
        logger.setLevel(level)
    assert fitting.result() is estimator
    assert _learnt(estimator) == _learnt(alone)
    estimator.fit(*args)  # the object is free again, for this thread as for any other
    ThreadPoolExecutor(1).submit(estimator.fit, *args).result()
    assert _learnt(estimator) == _learnt(alone)


def test_fits_of_clones_run_at_once_and_equal_one_thread():
    template, args = FITS["irf"]
    alone = _learnt(clone(template).fit(*args))
    with ThreadPoolExecutor(4) as pool:
        fitted = list(pool.map(lambda _: clone(template).fit(*args), range(4)))
    assert all(_learnt(f) == alone for f in fitted)


def test_many_threads_read_one_fitted_forest_as_one_thread_does():
    forest = RandomForestClassifier(n_estimators=30, oob_score=True, random_state=0).fit(X, LABELS)
    reads = {
        "predict_proba": lambda: forest.predict_proba(X),
        "apply": lambda: forest.apply(X),
        "score": lambda: np.array(forest.score(X, LABELS)),
        "mdi_oob": lambda: importance.mdi_oob(forest, X, LABELS),
        "shap_values": lambda: importance.shap_values(forest, X[:40]),
        "shap_interaction_values": lambda: importance.shap_interaction_values(forest, X[:5]),
    }
    expected = {name: read() for name, read in reads.items()}
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda name: (name, reads[name]()), list(reads) * 6))
    for name, value in results:
        for got, want in zip(_arrays(value), _arrays(expected[name]), strict=True):
            np.testing.assert_array_equal(got, want, err_msg=name)


def _arrays(result):
    return [a for r in result for a in _arrays(r)] if isinstance(result, (tuple, list)) else [np.asarray(result)]
