"""Estimators pickled by pyinterp 0.1.0 (tests/data/pickles_0.1.0.pkl, written before the forest state
became a name-keyed mapping) still load and give the same results."""

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import NUMPY_READS_NUMPY2_PICKLES

from pyinterp import importance

PICKLES = Path(__file__).parent / "data" / "pickles_0.1.0.pkl"
pytestmark = pytest.mark.skipif(not NUMPY_READS_NUMPY2_PICKLES, reason="the pickles were written under numpy 2")


@pytest.fixture(scope="module")
def legacy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns when its own version differs
        return pickle.loads(PICKLES.read_bytes())


def outputs(est, X, expected):
    """What the estimator computes now, for the keys that were recorded."""
    y = expected.get("y")
    compute = {
        "predict": lambda: est.predict(X),
        "predict_proba": lambda: est.predict_proba(X),
        "apply": lambda: est.apply(X),
        "transform": lambda: est.transform(X),
        "score": lambda: est.score(X),
        "oob_score": lambda: est.oob_score_,
        "mdi_oob": lambda: importance.mdi_oob(est, X, y),
        "ufi": lambda: importance.ufi(est, X, y),
        "naive_oob": lambda: importance.naive_oob(est, X, y),
        "minimal": lambda: est.minimal_,
        "interactions": lambda: [tuple(r) for r in est.interactions_],
        "y": lambda: y,
    }
    return {key: compute[key]() for key in expected}


# Their outputs pass through numpy's matrix products, whose last bit depends on the BLAS kernel
# OpenBLAS picks for the CPU (the pickles' values were recorded on another processor): equal to
# rounding. The others are computed by the core alone and must be bit-identical.
THROUGH_BLAS = {"dlbcd", "skinny_regressor", "skinny_classifier", "partitioned"}


@pytest.mark.parametrize("name", ["forest_regressor", "forest_classifier_entropy", "forest_classifier_gini", "lssfind",
                                  "irf", "dlbcd", "skinny_regressor", "skinny_classifier", "partitioned"])
def test_legacy_pickle_loads_and_reproduces(legacy, name):
    record = legacy[name]
    got = outputs(record["estimator"], record["X"], record["expected"])
    for key, want in record["expected"].items():
        if isinstance(want, list):
            assert repr(got[key]) == repr(want), key
        elif name in THROUGH_BLAS:
            np.testing.assert_allclose(np.asarray(got[key]), np.asarray(want), rtol=1e-12, atol=1e-15, err_msg=key)
        else:
            np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want), err_msg=key)


def test_legacy_forest_keeps_its_criterion(legacy):
    """A 0.1.0 state did not record the criterion; loading takes it from the estimator."""
    forest = legacy["forest_classifier_entropy"]["estimator"]
    assert forest._forest.criterion.name == "entropy"
