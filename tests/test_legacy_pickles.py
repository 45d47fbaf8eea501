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
# A forest's mean over its trees divides the sum by their number since issue 52.12 (0.1.0
# multiplied by the reciprocal, as scikit-learn does not): the same to within an ulp.
AVERAGED = {"predict", "predict_proba"}


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
        elif key in AVERAGED:
            np.testing.assert_array_max_ulp(np.asarray(got[key]), np.asarray(want), maxulp=1)
        else:
            np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want), err_msg=key)


def test_legacy_forest_keeps_its_criterion(legacy):
    """A 0.1.0 state did not record the criterion; loading takes it from the estimator."""
    forest = legacy["forest_classifier_entropy"]["estimator"]
    assert forest._forest.criterion.name == "entropy"


def test_forest_params_state_of_version_1_loads_by_position():
    """0.1.0 pickled ForestParams as a tuple in declaration order; it loads into the named fields."""
    from pyinterp import _core

    old = (_core.Criterion.entropy, 5, False, 10, 3, 4, 6.0, 2, 0.01, 7, 9, 1e-3, [1, -1], 1e-4, True, 42, 3, 2, True)
    params = _core.ForestParams.__new__(_core.ForestParams)
    params.__setstate__(old)
    v1 = ["criterion", "n_estimators", "bootstrap", "n_draws", "max_features", "min_samples_split",
          "min_weight_split", "min_samples_leaf", "min_weight_fraction_leaf", "max_depth", "max_leaf_nodes",
          "ccp_alpha", "monotonic_cst", "min_impurity_decrease", "balanced_subsample", "seed", "first_tree",
          "n_threads", "record_oob_leaves"]
    assert [getattr(params, name) for name in v1] == list(old)
    later = [name for name in params.__getstate__() if name not in v1 and name != "version"]
    # parameters added since: defaults
    assert later == ["always_features", "categorical_features", "column_blocks"]
    assert params.always_features == [] and params.categorical_features == [] and params.column_blocks == 0


def test_forest_params_state_is_read_by_name():
    """A state lacking a parameter (from before it existed) loads it at its default; an unknown
    parameter, a value of the wrong type, an unknown version or another shape is refused by name."""
    from pyinterp import _core

    state = _core.ForestParams().__getstate__()
    assert state["version"] == 2
    del state["max_depth"]
    state["n_estimators"] = 11
    params = _core.ForestParams.__new__(_core.ForestParams)
    params.__setstate__(state)
    assert (params.n_estimators, params.max_depth) == (11, _core.ForestParams().max_depth)
    for bad, message in [({**state, "unknown": 1}, "does not know"), ({**state, "seed": "x"}, "seed"),
                         ({**state, "version": 3}, "unknown version"), ((1, 2), "corrupt"), (5, "corrupt")]:
        with pytest.raises(ValueError, match=message):
            _core.ForestParams.__new__(_core.ForestParams).__setstate__(bad)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_estimator_round_trips_at_every_pickle_protocol(legacy, protocol):
    """Protocols 0 and 1 rebuild objects through object.__new__, which aborted the interpreter on
    the core's objects (a forest, its parameters, an enum); every estimator now round-trips at every
    protocol and computes what it computed before."""
    for name, record in legacy.items():
        if not isinstance(record, dict) or "estimator" not in record:
            continue
        est = record["estimator"]
        again = pickle.loads(pickle.dumps(est, protocol=protocol))
        before, after = outputs(est, record["X"], record["expected"]), outputs(again, record["X"], record["expected"])
        for key in before:
            assert repr(after[key]) == repr(before[key]), (name, key)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_core_objects_round_trip_or_refuse_at_every_protocol(protocol):
    from pyinterp import _core

    assert pickle.loads(pickle.dumps(_core.Criterion.entropy, protocol=protocol)) == _core.Criterion.entropy
    params = _core.ForestParams()
    params.n_estimators, params.monotonic_cst = 7, [1, 0]
    again = pickle.loads(pickle.dumps(params, protocol=protocol))
    assert (again.n_estimators, again.monotonic_cst) == (7, [1, 0])
    with pytest.raises(TypeError, match="cannot pickle"):
        pickle.dumps(_core.ColumnCodes(np.eye(3)), protocol=protocol)
