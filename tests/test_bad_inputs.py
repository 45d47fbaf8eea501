"""Bad and extreme inputs at every public entry point (issue 22, point 2), table-driven: each entry
point meets each class of input and must raise a named exception whose message names the argument,
or give a correct result (equal to the result on a clean copy where the values are the same, finite
otherwise) - never crash, hang or return a non-finite result from finite input - and must leave its
inputs unmodified. Data is tiny and forests have few trees: CI runs this file under ASan too."""

from __future__ import annotations

import copy
import re
import sys
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils._param_validation import InvalidParameterError

from pyinterp import (DLBCD, IterativeRandomForest, LocalLSSFind, LSSFind, PartitionedRatio, RandomForestClassifier,
                      RandomForestRegressor, SkinnyTreesClassifier, SkinnyTreesRegressor, Tree, combine,
                      frequent_itemsets, sharpness_test)
from pyinterp import importance as imp
from pyinterp._validation import IntInterval
from pyinterp.datasets import (make_boolean_response, make_collinear_dictionary, make_correlated_linear,
                               make_dictionary_signals, make_gaussian_dictionary, make_lss, make_sparse_coefficients)
from pyinterp.forest import tree_rules
from pyinterp.interactions import (InteractionTable, TooManyPathCodes, decode, distinct_paths, dwp, encode,
                                   interaction_rule, minimal, path_prevalence, prevalent_sets,
                                   random_intersection_trees, signed_paths)
from pyinterp.metrics import (dictionary_nmse, dictionary_recovered, lenient_score, proximity_curve, proximity_score,
                              singleton_equivalent, strict_score)
from pyinterp.partitioned import solve_path
from pyinterp.skinny import fit_budget

# Dyadic values (k / 16): scaled by 2^990 or 2^-1060 (subnormal) they stay exact and distinct, so a
# forest grown on them must be the forest of the clean values.
RNG = np.random.RandomState(0)
N, P = 24, 4
X0 = RNG.randint(0, 16, size=(N, P)) / 16.0
Y_REG = X0[:, 0] + 2.0 * X0[:, 1] * (X0[:, 2] > 0.5) + RNG.randint(0, 4, N) / 8.0
Y_CLF = (X0[:, 0] + X0[:, 1] > 1.0).astype(np.int64)
W0 = np.ones(N)


def unaligned(X):
    raw = np.empty(X.nbytes + 1, dtype=np.uint8)
    out = np.frombuffer(raw.data, dtype=X.dtype, count=X.size, offset=1).reshape(X.shape)
    out[...] = X
    return out


def flipped(X):
    """The same values in memory with negative strides on every axis."""
    return np.ascontiguousarray(X[(slice(None, None, -1),) * X.ndim])[(slice(None, None, -1),) * X.ndim]


def with_value(X, i, j, value, dtype=None):
    X = X.astype(dtype or X.dtype, copy=True)
    X[i, j] = value
    return X


# -- results ---------------------------------------------------------------------------------------

def as_arrays(result):
    """A result as a list of float arrays (estimators by what they learnt, tables by their values)."""
    if isinstance(result, (tuple, list)):
        return [a for r in result for a in as_arrays(r)]
    if sp.issparse(result):
        return [result.toarray().astype(np.float64)]
    if hasattr(result, "scores") and hasattr(result, "threshold"):  # dstump's result
        return [np.asarray(result.scores, dtype=np.float64)]
    return [np.asarray(result, dtype=np.float64)]


def assert_finite(result):
    for a in as_arrays(result):
        assert np.all(np.isfinite(a)), "a non-finite result from finite input"


def assert_same(result, clean):
    a, b = as_arrays(result), as_arrays(clean)
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def frozen(values):
    """Deep copies of the arguments, to compare with them after the call."""
    return [(copy.deepcopy(v), v.flags.writeable if isinstance(v, np.ndarray) else None) for v in values]


def assert_unmodified(values, before):
    for v, (old, writeable) in zip(values, before):
        if isinstance(v, np.ndarray):
            assert v.dtype == old.dtype and v.shape == old.shape and v.flags.writeable == writeable
            if v.dtype.kind == "O":
                assert all(a is b or a == b or (a != a and b != b) for a, b in zip(v.flat, old.flat))
            else:
                np.testing.assert_array_equal(v, old)
        elif sp.issparse(v):
            assert (v != old).nnz == 0


# -- entry points over (X, y, sample_weight) ---------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    call: object  # (X, y, w) -> result
    task: str  # "reg" or "clf": the y it reads
    nan: bool  # NaN in X is a missing value (forests) rather than an error
    invariant: bool  # a positive scaling of X gives the same result (forests fitted on X, DSTUMP)
    weights: bool = True  # reads sample_weight
    rows: str = "any"  # "train": X must be the training rows (out-of-bag measures)
    fits: bool = True  # fits on X (else X goes to a model fitted on the clean data)


def _forest(cls, **kw):
    return cls(n_estimators=3, max_features=2, random_state=0, **kw)


# 20 trees: every training row is out of bag somewhere (with 3, some rows have no out-of-bag value).
RF_REG = RandomForestRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X0, Y_REG)
RF_CLF = RandomForestClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X0, Y_CLF)


LSS = LSSFind(n_estimators=3, random_state=0).fit(X0, Y_REG)
LOCAL = LocalLSSFind(n_estimators=3, random_state=0).fit(X0, Y_REG)
IRF_KW = dict(task="classification", n_iterations=1, n_estimators=3, n_bootstraps=1, rit_n_trees=5, random_state=0)
IRF = IterativeRandomForest(**IRF_KW).fit(X0, Y_CLF)
SKINNY_KW = dict(n_trees=2, depth=2, max_epochs=2, batch_size=8, random_state=0)
SKINNY_REG = SkinnyTreesRegressor(**SKINNY_KW).fit(X0, Y_REG)
SKINNY_CLF = SkinnyTreesClassifier(**SKINNY_KW).fit(X0, Y_CLF)
DL_KW = dict(max_iter=5, max_inner_iter=20, random_state=0)
DL = DLBCD(**DL_KW).fit(X0)
RATIO_KW = dict(n_lambdas=2, max_iter=20, random_state=0)
RATIO = PartitionedRatio(2, **RATIO_KW).fit(X0)

ENTRIES = {
    # fits
    "RandomForestRegressor.fit": Entry(lambda X, y, w: _forest(RandomForestRegressor).fit(X, y, w).predict(X),
                                       "reg", nan=True, invariant=True),
    "RandomForestClassifier.fit": Entry(
        lambda X, y, w: _forest(RandomForestClassifier).fit(X, y, w).predict_proba(X), "clf", nan=True, invariant=True),
    "LSSFind.fit": Entry(lambda X, y, w: LSSFind(n_estimators=3, random_state=0).fit(X, y, w).selected_["dwp"],
                         "reg", nan=True, invariant=True),
    "LocalLSSFind.fit": Entry(lambda X, y, w: LocalLSSFind(n_estimators=3, random_state=0).fit(X, y, w).predict(X),
                              "reg", nan=True, invariant=True),
    "IterativeRandomForest.fit": Entry(lambda X, y, w: IterativeRandomForest(**IRF_KW).fit(X, y).predict_proba(X),
                                       "clf", nan=True, invariant=True, weights=False),
    "SkinnyTreesRegressor.fit": Entry(lambda X, y, w: SkinnyTreesRegressor(**SKINNY_KW).fit(X, y).predict(X),
                                      "reg", nan=False, invariant=False, weights=False),
    "SkinnyTreesClassifier.fit": Entry(lambda X, y, w: SkinnyTreesClassifier(**SKINNY_KW).fit(X, y).predict_proba(X),
                                       "clf", nan=False, invariant=False, weights=False),
    "DLBCD.fit": Entry(lambda X, y, w: DLBCD(**DL_KW).fit(X).components_, "reg", nan=False, invariant=False,
                       weights=False),
    "PartitionedRatio.fit": Entry(lambda X, y, w: PartitionedRatio(2, **RATIO_KW).fit(X).coef_, "reg", nan=False,
                                  invariant=True, weights=False),
    "sharpness_test": Entry(lambda X, y, w: sharpness_test(DL.components_, X, random_state=0, max_inner_iter=20)[1],
                            "reg", nan=False, invariant=False, weights=False),
    "importance.dstump": Entry(lambda X, y, w: imp.dstump(X, y, sample_weight=w), "reg", nan=True, invariant=True),
    # read X with a model fitted on the clean data
    **{f"RandomForestRegressor.{m}": Entry(lambda X, y, w, m=m: getattr(RF_REG, m)(X), "reg", nan=True,
                                           invariant=False, weights=False, fits=False)
       for m in ("predict", "apply", "decision_path")},
    "RandomForestRegressor.oob_predict": Entry(lambda X, y, w: RF_REG.oob_predict(X), "reg", nan=True,
                                               invariant=False, weights=False, rows="train", fits=False),
    "RandomForestRegressor.score": Entry(lambda X, y, w: RF_REG.score(X, y, w), "reg", nan=True, invariant=False,
                                         fits=False),
    **{f"RandomForestClassifier.{m}": Entry(lambda X, y, w, m=m: getattr(RF_CLF, m)(X), "clf", nan=True,
                                            invariant=False, weights=False, fits=False)
       for m in ("predict", "predict_proba", "apply", "decision_path")},
    # exp: log 0 = -inf is predict_log_proba's value for a class no tree predicts, as in scikit-learn
    "RandomForestClassifier.predict_log_proba": Entry(lambda X, y, w: np.exp(RF_CLF.predict_log_proba(X)), "clf",
                                                      nan=True, invariant=False, weights=False, fits=False),
    "RandomForestClassifier.oob_predict_proba": Entry(lambda X, y, w: RF_CLF.oob_predict_proba(X), "clf", nan=True,
                                                      invariant=False, weights=False, rows="train", fits=False),
    "RandomForestClassifier.score": Entry(lambda X, y, w: RF_CLF.score(X, y, w), "clf", nan=True, invariant=False,
                                          fits=False),
    "LSSFind.predict": Entry(lambda X, y, w: LSS.predict(X), "reg", nan=True, invariant=False, weights=False,
                             fits=False),
    "LocalLSSFind.local_interactions": Entry(
        lambda X, y, w: [t["adjusted_dwp"] for t in LOCAL.local_interactions(X)], "reg", nan=True, invariant=False,
        weights=False, fits=False),
    "IterativeRandomForest.predict_proba": Entry(lambda X, y, w: IRF.predict_proba(X), "clf", nan=True,
                                                 invariant=False, weights=False, fits=False),
    "SkinnyTreesRegressor.predict": Entry(lambda X, y, w: SKINNY_REG.predict(X), "reg", nan=False, invariant=False,
                                          weights=False, fits=False),
    "SkinnyTreesClassifier.predict_proba": Entry(lambda X, y, w: SKINNY_CLF.predict_proba(X), "clf", nan=False,
                                                 invariant=False, weights=False, fits=False),
    "DLBCD.transform": Entry(lambda X, y, w: DL.transform(X), "reg", nan=False, invariant=False, weights=False,
                             fits=False),
    "PartitionedRatio.score": Entry(lambda X, y, w: RATIO.score(X), "reg", nan=False, invariant=False,
                                    weights=False, fits=False),
    # importance measures of a forest fitted on the clean data
    **{f"importance.{f.__name__}": Entry(lambda X, y, w, f=f: f(RF_REG, X, y, sample_weight=w), "reg", nan=True,
                                         invariant=False, rows="train", fits=False)
       for f in (imp.mdi_oob, imp.naive_oob, imp.ufi)},
    "importance.permutation_oob": Entry(
        lambda X, y, w: imp.permutation_oob(RF_REG, X, y, n_repeats=2, random_state=0, sample_weight=w), "reg",
        nan=True, invariant=False, rows="train", fits=False),
    **{f"importance.{f.__name__}": Entry(lambda X, y, w, f=f: f(RF_REG, X), "reg", nan=True, invariant=False,
                                         weights=False, fits=False)
       for f in (imp.contributions, imp.shap_values, imp.shap_interaction_values, imp.shap_interaction_importance)},
    "importance.shap_top_interactions": Entry(lambda X, y, w: imp.shap_top_interactions(RF_REG, X, k=3), "reg",
                                              nan=True, invariant=False, weights=False, fits=False),
}


# -- classes of input: (X, y, w) of the clean data -> (X, y, w) and what must happen -----------------

@dataclass(frozen=True)
class Case:
    make: object  # (X, y, w) -> (X, y, w)
    outcome: object  # Entry -> ("same" | "finite" | (exception, message regex) | None: not applicable)


def error(exc, match):
    return lambda entry: (exc, match)


def same_values(entry):
    return "same"


def scaled(entry):
    return "same" if entry.invariant and entry.fits else "finite"


def nan_in_X(entry):
    return "finite" if entry.nan else (ValueError, "Input X contains NaN")


def rows_changed(entry):
    return (ValueError, "X has 1 rows.* training rows") if entry.rows == "train" else "finite"


def beyond_2_53(entry):
    """Fits refuse integers float64 cannot tell apart (issue 52: the continuous models read them as
    constant columns without a word); models fitted on the clean data route such values correctly
    (thresholds lie below 2^53)."""
    return (ValueError, r"X holds integers beyond") if entry.fits else "finite"


CASES = {
    # non-finite X
    "X_nan": Case(lambda X, y, w: (with_value(X, 1, 2, np.nan), y, w), nan_in_X),
    "X_inf": Case(lambda X, y, w: (with_value(X, 1, 2, np.inf), y, w), error(ValueError, "X contains infinity")),
    "X_neg_inf": Case(lambda X, y, w: (with_value(X, 3, 0, -np.inf), y, w),
                      error(ValueError, "X contains infinity")),
    # extreme magnitudes and subnormals (exact powers of two)
    "X_huge": Case(lambda X, y, w: (np.ldexp(X, 990), y, w), scaled),
    "X_tiny": Case(lambda X, y, w: (np.ldexp(X, -990), y, w), scaled),
    "X_subnormal": Case(lambda X, y, w: (np.ldexp(X, -1060), y, w), scaled),
    "X_max_float": Case(lambda X, y, w: (with_value(X, 0, 0, np.finfo(np.float64).max), y, w),
                        lambda e: "finite"),
    # empty and tiny
    "X_no_rows": Case(lambda X, y, w: (X[:0], y[:0], w[:0]),
                      error(ValueError, r"X: Found array with 0 sample\(s\)")),
    "X_no_columns": Case(lambda X, y, w: (X[:, :0], y, w), error(ValueError, r"X: Found array with 0 feature\(s\)")),
    "X_one_row": Case(lambda X, y, w: (X[:1], y[:1], w[:1]), rows_changed),
    # layouts
    "X_fortran": Case(lambda X, y, w: (np.asfortranarray(X), y, w), same_values),
    "X_negative_strides": Case(lambda X, y, w: (flipped(X), flipped(y), flipped(w)), same_values),
    "X_strided_slice": Case(lambda X, y, w: (np.repeat(X, 3, axis=1)[:, ::3], y, w), same_values),
    "X_unaligned": Case(lambda X, y, w: (unaligned(X), unaligned(y), unaligned(w)), same_values),
    "X_readonly": Case(lambda X, y, w: (np.frombuffer(X.tobytes()).reshape(X.shape), y, w), same_values),
    "X_sparse_csr": Case(lambda X, y, w: (sp.csr_array(X), y, w), lambda e: "same" if e.nan else None),
    # dtypes
    "X_float32": Case(lambda X, y, w: (X.astype(np.float32), y, w), same_values),
    "X_object_numbers": Case(lambda X, y, w: (X.astype(object), y, w), same_values),
    "X_strings": Case(lambda X, y, w: (np.full(X.shape, "a"), y, w),
                      error(ValueError, "X: could not convert string to float")),
    "X_complex": Case(lambda X, y, w: (X + 1j, y, w), error(ValueError, "X: Complex data not supported")),
    "X_int64_beyond_2_53": Case(lambda X, y, w: ((X * 16).astype(np.int64) + 2**62, y, w),
                                beyond_2_53),
    "X_uint64_2_63": Case(lambda X, y, w: ((X * 16).astype(np.uint64) + np.uint64(2**63), y, w),
                          beyond_2_53),
    "X_object_2_70": Case(lambda X, y, w: ((X * 16).astype(np.int64).astype(object) + 2**70, y, w),
                          beyond_2_53),
    # shapes
    "X_1d": Case(lambda X, y, w: (X[:, 0], y, w), error(ValueError, "X: Expected 2D array, got 1D array")),
    "X_3d": Case(lambda X, y, w: (X[:, :, None], y, w), error(ValueError, "X: Found array with dim 3")),
    "X_more_features": Case(lambda X, y, w: (np.hstack([X, X[:, :1]]), y, w),
                            lambda e: "finite" if e.fits else (ValueError, "X has 5 features")),
}


# Where an entry point's answer differs from its class's rule, and why that answer is right.
OVERRIDES = {
    # too few rows for the model, said so
    ("IterativeRandomForest.fit", "X_one_row"):
        (ValueError, r"X: Found array with 1 sample\(s\).* minimum of 2 .*IterativeRandomForest"),
    **{("SkinnyTreesClassifier.fit", c): (ValueError, "y: the classifier needs samples of at least 2 classes")
       for c in ("X_one_row", "y_one_class")},
    ("DLBCD.fit", "X_one_row"):
        (ValueError, "X: a complete dictionary needs at least as many signals as features: n_samples = 1"),
    ("sharpness_test", "X_one_row"):
        (ValueError, "X: a complete dictionary needs at least as many signals as features: n_samples = 1"),
    ("PartitionedRatio.fit", "X_one_row"):
        (ValueError, r"X: Found array with 1 sample\(s\).* minimum of 3 .*PartitionedRatio"),
    ("PartitionedRatio.score", "X_one_row"):
        (ValueError, r"X: Found array with 1 sample\(s\).* minimum of 3 .*PartitionedRatio"),
    ("importance.dstump", "X_one_row"): (ValueError, r"X: Found array with 1 sample\(s\).* minimum of 2"),
    # R^2 of one sample is undefined: NaN, as scikit-learn's r2_score (with its warning)
    ("RandomForestRegressor.score", "X_one_row"): lambda result: np.isnan(result),
    # spreads below the smallest normal double cannot be held in scale_
    ("PartitionedRatio.fit", "X_subnormal"): (ValueError, r"vary by less than 2.23e-308 \(subnormal"),
    # float32 training data holds |x| <= 3.4e38
    **{(f"SkinnyTrees{kind}.fit", c): (ValueError, "X has values beyond the range of dtype='float32'")
       for kind in ("Regressor", "Classifier") for c in ("X_huge", "X_max_float")},
    # the standardised values of the held-out X overflow the ratio's features
    **{("PartitionedRatio.score", c): (ValueError, r"function \d returned NaN or infinity on the standardised X")
       for c in ("X_huge", "X_max_float")},
    ("DLBCD.transform", "X_max_float"): (ValueError, "coefficients of X overflow float64"),
    ("sharpness_test", "X_more_features"): (ValueError, "X has 5 features, the dictionary has 4"),
}


# -- classes of y and sample_weight, for the entry points that read them ---------------------------

NO_TARGET = {"DLBCD.fit", "PartitionedRatio.fit", "sharpness_test", "PartitionedRatio.score"}


def _reads_target(name):
    return name not in NO_TARGET and (name.endswith((".fit", ".score", "dstump", "_oob", ".ufi")))


def for_task(reg, clf):
    return lambda e: reg if e.task == "reg" else clf


def y_huge(entry, tiny=False):
    """y scaled by 2^600 (2^-600): its squares leave float64. Forests fit (predictions are exact;
    fit warns), measures made of sums of y^2 refuse it (DSTUMP once its scores leave float64),
    classifiers see a continuous target."""
    if entry.task == "clf":
        return (ValueError, "y: Unknown label type: continuous")
    if entry is ENTRIES["importance.dstump"]:  # its ranking is y's either way; scores underflow to 0
        return "finite" if tiny else (ValueError, r"DSTUMP's scores are in units of y\^2 and overflow float64")
    if entry.fits and not entry.rows == "train":
        if "Skinny" in repr(entry.call.__code__.co_names) and not tiny:
            return (ValueError, "its squares are beyond float32")
        return "finite"
    return (ValueError, r"max \|y\| = .*: its squares are beyond float64")


TARGET_CASES = {
    "y_nan": Case(lambda X, y, w: (X, with_value(y[:, None], 2, 0, np.nan, np.float64)[:, 0], w),
                  error(ValueError, "y contains NaN")),
    "y_inf": Case(lambda X, y, w: (X, with_value(y[:, None], 2, 0, np.inf, np.float64)[:, 0], w),
                  error(ValueError, "y contains (NaN or )?infinity")),
    "y_too_short": Case(lambda X, y, w: (X, y[:-1], w),
                        error(ValueError, r"y: Found input variables with inconsistent numbers of samples: "
                                          r"\[24, 23\]")),
    # estimators ravel a column y (with scikit-learn's warning); functions want 1-d y
    "y_column": Case(lambda X, y, w: (X, y[:, None], w),
                     lambda e: "same" if e.fits and e.task and e is not ENTRIES["importance.dstump"]
                     else (ValueError, r"y must be 1-d, got shape \(24, 1\)")),
    # scikit-learn's classifiers refuse object arrays of numbers as labels ("unknown" target type)
    "y_object_numbers": Case(lambda X, y, w: (X, y.astype(object), w),
                             for_task("same", (ValueError, "y: Unknown label type: unknown"))),
    "y_complex": Case(lambda X, y, w: (X, y + 1j, w),
                      error(ValueError, "y: Complex data not supported|y must hold numbers")),
    "y_words": Case(lambda X, y, w: (X, np.where(y > 0, "yes", "no"), w),
                    for_task((ValueError, "y must hold numbers for regression"), "finite")),
    "y_huge": Case(lambda X, y, w: (X, np.ldexp(y.astype(np.float64), 600), w), lambda e: y_huge(e)),
    "y_tiny": Case(lambda X, y, w: (X, np.ldexp(y.astype(np.float64), -600), w),
                   lambda e: y_huge(e, tiny=True) if e.task == "reg" else None),
    "y_one_class": Case(lambda X, y, w: (X, np.zeros_like(y), w), lambda e: "finite"),
    "y_bool": Case(lambda X, y, w: (X, y > np.median(y), w), lambda e: "finite"),
    "w_nan": Case(lambda X, y, w: (X, y, with_value(w[:, None], 0, 0, np.nan)[:, 0]),
                  error(ValueError, "sample_weight contains NaN|Input sample_weight contains NaN")),
    "w_inf": Case(lambda X, y, w: (X, y, with_value(w[:, None], 0, 0, np.inf)[:, 0]),
                  error(ValueError, "sample_weight contains (NaN or )?infinity")),
    "w_negative": Case(lambda X, y, w: (X, y, with_value(w[:, None], 0, 0, -1.0)[:, 0]),
                       error(ValueError, "sample_weight .*non-negative|Negative values in data passed to "
                                         "`sample_weight`")),
    "w_zero": Case(lambda X, y, w: (X, y, 0.0 * w),
                   error(ValueError, "sample_weight is zero everywhere|sample_weight: Sample weights must "
                                     "contain at least one non-zero")),
    "w_too_short": Case(lambda X, y, w: (X, y, w[:-1]), error(ValueError, r"sample_weight.*\(23,\)")),
    "w_2d": Case(lambda X, y, w: (X, y, w[:, None]),
                 error(ValueError, "sample_weight: Sample weights must be 1D|sample_weight must be a 1-d array")),
    "w_words": Case(lambda X, y, w: (X, y, np.full(w.shape, "a")),
                    error((ValueError, TypeError), "sample_weight: could not convert string to float|"
                                                   "sample_weight must be an array of real numbers, got <U1")),
    "w_huge": Case(lambda X, y, w: (X, y, np.ldexp(w, 1000)), lambda e: "same"),
    "w_subnormal": Case(lambda X, y, w: (X, y, np.ldexp(w, -1074)), lambda e: "same"),
    "w_bool": Case(lambda X, y, w: (X, y, w > 0), lambda e: "same"),
}


def _target_outcome(entry_name, case_name):
    entry = ENTRIES[entry_name]
    if not _reads_target(entry_name) or (case_name.startswith("w_") and not entry.weights):
        return None
    if entry_name.endswith(".score"):
        return "sklearn"  # scikit-learn's r2_score / accuracy_score of the predictions
    return CASES_ALL[case_name].outcome(entry)


CASES_ALL = {**CASES, **TARGET_CASES}


def _outcome(entry_name, case_name):
    if (entry_name, case_name) in OVERRIDES:
        return OVERRIDES[entry_name, case_name]
    if case_name in TARGET_CASES:
        return _target_outcome(entry_name, case_name)
    return CASES[case_name].outcome(ENTRIES[entry_name])


def assert_as_sklearn(entry_name, args):
    """score's result, or its error, is scikit-learn's metric's on the same predictions."""
    X, y, w = args
    model, metric = (RF_REG, r2_score) if entry_name.startswith("RandomForestRegressor") else (RF_CLF, accuracy_score)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = metric(y, model.predict(X), sample_weight=w)
    except Exception as exc:  # noqa: BLE001 - whatever scikit-learn raises, score must raise too
        with pytest.raises(type(exc), match=re.escape(str(exc))):
            ENTRIES[entry_name].call(*args)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(ENTRIES[entry_name].call(*args), expected)


# The argument each class of input spoils, as its error must name it (cases that drop rows drop them
# from y too, whose classes may be what is too few).
SPOILT = {"X": "X", "y": "y", "w": "sample_weight", "X_no_rows": "X|y", "X_one_row": "X|y"}


def assert_names_argument(exc, case_name):
    name = SPOILT.get(case_name) or SPOILT[case_name.split("_")[0]]
    assert re.search(rf"(?<![\w.])({name})(?!\w)", str(exc)), f"the message does not name {name}: {exc}"


def _clean(entry):
    return entry.call(X0, Y_REG if entry.task == "reg" else Y_CLF, W0 if entry.weights else None)


PAIRS = [(e, c) for e in ENTRIES for c in CASES_ALL if _outcome(e, c) is not None]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("entry_name, case_name", PAIRS)
def test_entry_point(entry_name, case_name):
    entry = ENTRIES[entry_name]
    y = Y_REG if entry.task == "reg" else Y_CLF
    X, y, w = CASES_ALL[case_name].make(X0, y, W0)
    args = [X, y, w if entry.weights else None]
    before = frozen(args)
    outcome = _outcome(entry_name, case_name)
    if outcome == "sklearn":
        assert_as_sklearn(entry_name, args)
    elif isinstance(outcome, tuple):
        with pytest.raises(outcome[0], match=outcome[1]) as raised:
            entry.call(*args)
        assert_names_argument(raised.value, case_name)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's warnings on the extreme values
            result = entry.call(*args)
        if callable(outcome):
            assert outcome(result)
        else:
            if outcome == "same":
                assert_same(result, _clean(entry))
            assert_finite(result)
    assert_unmodified(args, before)


# -- unfitted models ------------------------------------------------------------------------------

ESTIMATORS = [RandomForestRegressor(), RandomForestClassifier(), LSSFind(), LocalLSSFind(),
              IterativeRandomForest(task="classification"), SkinnyTreesRegressor(), SkinnyTreesClassifier(), DLBCD(),
              PartitionedRatio(2)]
METHODS = ("predict", "predict_proba", "predict_log_proba", "apply", "decision_path", "oob_predict", "oob_predict_proba", "score",
           "transform", "objective", "local_interactions", "decision_function", "dwp")


@pytest.mark.parametrize("estimator, method", [(e, m) for e in ESTIMATORS for m in METHODS if hasattr(e, m)],
                         ids=lambda v: v if isinstance(v, str) else type(v).__name__)
def test_unfitted_models_say_so(estimator, method):
    args = ([[(0, 1)]],) if method == "dwp" else (X0, Y_REG) if method == "score" else (X0,)
    with pytest.raises(NotFittedError):
        getattr(estimator, method)(*args)


# -- integer parameters: bools are not integers; beyond the core's int64 they are named or mean "never"

INT_PARAMS = [(type(e), name) for e in ESTIMATORS for name, constraints in e._parameter_constraints.items()
              if any(isinstance(c, IntInterval) for c in constraints)]


@pytest.mark.parametrize("cls, name", INT_PARAMS, ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_bool_is_not_an_integer_parameter(cls, name):
    """scikit-learn's Interval(Integral) takes True as 1 (max_itemsets=True was read as 1)."""
    estimator = cls(2) if cls is PartitionedRatio else cls()
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        estimator.set_params(**{name: True}).fit(X0, Y_CLF)


@pytest.mark.parametrize("value", [2**31, 2**63, 2**70])
@pytest.mark.parametrize("name, unlimited", [("max_depth", None), ("min_samples_split", 10**6),
                                             ("min_samples_leaf", 10**6)])
def test_forest_limits_beyond_int64_mean_never(name, unlimited, value):
    """They reached pybind11 as 'incompatible function arguments' from 2^63 on."""
    expected = _forest(RandomForestRegressor, **{name: unlimited}).fit(X0, Y_REG).predict(X0)
    np.testing.assert_array_equal(_forest(RandomForestRegressor, **{name: value}).fit(X0, Y_REG).predict(X0), expected)


# -- functions over sets, forests and parameters ---------------------------------------------------

FW = np.array([1.0, 2.0, 3.0, 4.0])
TABLE = InteractionTable([((0, 1),), ((1, -1), (2, 1)), ((0, -1), (2, 1))], {"dwp": np.array([0.9, 0.5, np.nan])},
                         ["a", "b", "c"])
PATHS = signed_paths(RF_REG)
FUNCTION_CASES = {
    # dwp: indices must lie below the forest's feature count, with names or without
    "dwp_feature_beyond_p": (lambda: dwp(RF_REG, [[(4, 1)]]), (ValueError, "names feature 4, but there are 4")),
    "dwp_feature_2_29": (lambda: dwp(RF_REG, [[(2**29, 1)]]), (ValueError, "names feature 536870912, but there are 4")),
    "dwp_feature_2_30": (lambda: dwp(RF_REG, [[(2**30, 1)]]), (ValueError, "feature 1073741824")),
    "dwp_negative_feature": (lambda: dwp(RF_REG, [[(-1, 1)]]), (ValueError, "a signed feature is")),
    "dwp_sign_0": (lambda: dwp(RF_REG, [[(0, 0)]]), (ValueError, "a signed feature is")),
    "dwp_bool_feature": (lambda: dwp(RF_REG, [[(True, 1)]]), (ValueError, "a signed feature is")),
    "dwp_flat_set": (lambda: dwp(RF_REG, [(0, 1)]), (ValueError, r"sets must hold signed sets")),
    "dwp_empty_set": (lambda: dwp(RF_REG, [[]]), lambda r: np.allclose(r, 1.0)),
    "dwp_no_sets": (lambda: dwp(RF_REG, []), lambda r: r.shape == (0,)),
    "dwp_negative_epsilon": (lambda: dwp(RF_REG, [[(0, 1)]], epsilon=-1.0), (InvalidParameterError, "'epsilon'")),
    "dwp_nan_epsilon": (lambda: dwp(RF_REG, [[(0, 1)]], epsilon=np.nan), (InvalidParameterError, "'epsilon'")),
    "dwp_unfitted": (lambda: dwp(RandomForestRegressor(), [[(0, 1)]]), (NotFittedError, "not fitted")),
    "dwp_not_a_forest": (lambda: dwp(object(), [[(0, 1)]]), (TypeError, "forest must be")),
    "prevalent_sets_min_dwp_0": (lambda: prevalent_sets(RF_REG, 0.0), (InvalidParameterError, "'min_dwp'")),
    "prevalent_sets_min_dwp_nan": (lambda: prevalent_sets(RF_REG, np.nan), (InvalidParameterError, "'min_dwp'")),
    "prevalent_sets_max_order_2_70": (lambda: prevalent_sets(RF_REG, 0.05, max_order=2**70).features,
                                      lambda r: r == prevalent_sets(RF_REG, 0.05, max_order=P).features),
    "prevalent_sets_max_order_true": (lambda: prevalent_sets(RF_REG, 0.05, max_order=True),
                                      (InvalidParameterError, "'max_order'")),
    "signed_paths_groups_short": (lambda: signed_paths(RF_REG, feature_groups=["a"]), (ValueError, "feature_groups")),
    "signed_paths_n_jobs_true": (lambda: signed_paths(RF_REG, n_jobs=True), (ValueError, "n_jobs")),
    "distinct_paths_weight_typo": (lambda: distinct_paths(RF_REG, weight="dept"), (InvalidParameterError, "'weight'")),
    # max_codes: a positive int; a budget below the paths' codes raises TooManyPathCodes naming it
    "signed_paths_max_codes_1": (lambda: signed_paths(RF_REG, max_codes=1),
                                 (TooManyPathCodes, "more than max_codes = 1; ")),
    "distinct_paths_max_codes_1": (lambda: distinct_paths(RF_REG, max_codes=1),
                                   (TooManyPathCodes, "more than max_codes = 1; ")),
    "dwp_max_codes_1": (lambda: dwp(RF_REG, [[(0, 1)]], max_codes=1), (TooManyPathCodes, "max_codes = 1; ")),
    "signed_paths_max_codes_0": (lambda: signed_paths(RF_REG, max_codes=0), (InvalidParameterError, "'max_codes'")),
    "signed_paths_max_codes_true": (lambda: signed_paths(RF_REG, max_codes=True),
                                    (InvalidParameterError, "'max_codes'")),
    "signed_paths_max_codes_float": (lambda: signed_paths(RF_REG, max_codes=1e9),
                                     (InvalidParameterError, "'max_codes'")),
    "signed_paths_max_codes_2_70": (lambda: signed_paths(RF_REG, max_codes=2**70).codes,
                                    lambda r: np.array_equal(r, signed_paths(RF_REG).codes)),
    "path_prevalence_more_features": (lambda: path_prevalence(RF_REG, signed_paths(RF_REG), np.hstack([X0, X0]),
                                                              [[(0, 1)]]), (ValueError, "features")),
    "path_prevalence_nan_X": (lambda: path_prevalence(RF_REG, signed_paths(RF_REG), with_value(X0, 0, 0, np.nan),
                                                      [[(0, 1)]]), lambda r: np.all((r >= 0) & (r <= 1))),
    # RIT and frequent itemsets
    "rit_no_sets": (lambda: random_intersection_trees([]), lambda r: r == {}),
    "rit_depth_true": (lambda: random_intersection_trees([[1, 2]] * 2, depth=True), (InvalidParameterError, "'depth'")),
    "rit_negative_item": (lambda: random_intersection_trees([[-1, 2]] * 2),
                          (ValueError, r"RIT items must be integers in \[0, 2\^31\)")),
    "rit_item_2_70": (lambda: random_intersection_trees([[2**70, 2]] * 2),
                      (ValueError, "items must fit in a signed 64-bit")),
    "rit_nan_weights": (lambda: random_intersection_trees([[1, 2]] * 2, weights=[1.0, np.nan]),
                        (ValueError, "weights")),
    "rit_string_items": (lambda: random_intersection_trees([["a", "b"]] * 2), (TypeError, "items must be integers")),
    "itemsets_min_support_nan": (lambda: frequent_itemsets([[1, 2]], min_support=np.nan),
                                 (InvalidParameterError, "'min_support'")),
    "itemsets_negative_weight": (lambda: frequent_itemsets([[1, 2]], weights=[-1.0]), (ValueError, "weights")),
    "itemsets_inf_weight": (lambda: frequent_itemsets([[1, 2]], weights=[np.inf]), (ValueError, "weights")),
    "itemsets_item_2_70": (lambda: frequent_itemsets([[2**70]]),
                           (ValueError, "items must fit in a signed 64-bit integer")),
    "itemsets_empty": (lambda: frequent_itemsets([]), lambda r: r == {}),
    "itemsets_max_size_true": (lambda: frequent_itemsets([[1, 2]], max_size=True),
                               (InvalidParameterError, "'max_size'")),
    # metrics
    "strict_score_empty_truth": (lambda: strict_score([], [[(0, 1)]]), (ValueError, "true")),
    "strict_score_sign_2": (lambda: strict_score([[(0, 2)]], [[(0, 1)]]), (ValueError, "sign")),
    "lenient_score_string": (lambda: lenient_score("ab", [[(0, 1)]]), (TypeError, "string")),
    "proximity_score_top_0": (lambda: proximity_score([[(0, 1)]], [[(0, 1)]], top=0), (ValueError, "top")),
    "proximity_score_top_true": (lambda: proximity_score([[(0, 1)]], [[(0, 1)]], top=True), (TypeError, "top")),
    "proximity_curve_max_top_2_70": (lambda: proximity_curve([[(0, 1)]], [[(0, 1)]], max_top=2**70),
                                     (ValueError, r"max_top must be in \[1, 2147483647\]")),
    "proximity_curve_max_top_beyond_ranking": (lambda: proximity_curve([[(0, 1)]], [[(1, 1)], [(0, 1)]], max_top=4),
                                               lambda r: np.array_equal(r, [0.0, 1.0, 1.0, 1.0])),
    "singleton_equivalent_string": (lambda: singleton_equivalent("ab"),
                                    (TypeError, "interactions must be an iterable of interactions")),
    "singleton_equivalent_none": (lambda: singleton_equivalent(None),
                                  (TypeError, "interactions must be an iterable of interactions")),
    "singleton_equivalent_flat_set": (lambda: singleton_equivalent([(0, 1)]),
                                      (TypeError, r"interactions\[0\]: a signed feature must be a pair")),
    "singleton_equivalent_sign_0": (lambda: singleton_equivalent([[(0, 0)]]),
                                    (ValueError, r"interactions\[0\]: a sign must be -1 or \+1")),
    "singleton_equivalent_negative_feature": (lambda: singleton_equivalent([[(1, 1)], [(-1, 1)]]),
                                              (ValueError, r"interactions\[1\]: a feature must be a column index")),
    "singleton_equivalent_float_feature": (lambda: singleton_equivalent([[(1.0, 1)]]),
                                           (TypeError, r"interactions\[0\]: the feature must be an integer")),
    "singleton_equivalent_bool_feature": (lambda: singleton_equivalent([[(True, 1)]]),
                                          (TypeError, r"interactions\[0\]: the feature must be an integer")),
    "singleton_equivalent_empty_set": (lambda: singleton_equivalent([[]]),
                                       (ValueError, r"interactions\[0\] is an empty interaction")),
    "singleton_equivalent_nothing": (lambda: singleton_equivalent([]), lambda r: r == []),
    "singleton_equivalent_numpy_ints": (lambda: singleton_equivalent([[(np.int64(2), np.int8(1))]]),
                                        lambda r: r == [((2, 1),), ((2, -1),)]),
    "dictionary_nmse_nan": (lambda: dictionary_nmse(np.full((3, 3), np.nan), np.eye(3)),
                            (ValueError, "Input estimate contains NaN")),
    "dictionary_nmse_shapes": (lambda: dictionary_nmse(np.eye(3), np.eye(4)),
                               (ValueError, "estimate and reference must have the same shape")),
    "dictionary_recovered_nan": (lambda: dictionary_recovered(np.eye(3), np.eye(3), threshold=np.nan),
                                 (TypeError, "threshold")),
    # simulators
    "make_lss_2_70_rows": (lambda: make_lss(n_samples=2**70), (ValueError, "n_samples must be in")),
    "make_gaussian_dictionary_2_63": (lambda: make_gaussian_dictionary(2**63), (ValueError, "n_components must be in")),
    "make_lss_true_rows": (lambda: make_lss(n_samples=True), (TypeError, "n_samples")),
    "make_lss_nan_snr": (lambda: make_lss(snr=np.nan), (TypeError, "snr")),
    "make_lss_order_beyond_p": (lambda: make_lss(n_features=3, order=4), (ValueError, "order")),
    "make_lss_no_signal": (lambda: make_lss(n_samples=5, region=0.001, random_state=0),
                           (ValueError, "all 5 rows lie in 0 rule regions, so y has no signal")),
    "make_correlated_linear_rho_2": (lambda: make_correlated_linear(correlation=2.0), (ValueError, "correlation")),
    "make_boolean_response_1d": (lambda: make_boolean_response(X0[:, 0]), (ValueError, "X: Expected 2D array")),
    "make_boolean_response_nan": (lambda: make_boolean_response(with_value(X0, 0, 0, np.nan)), (ValueError, "X")),
    "make_sparse_coefficients_model": (lambda: make_sparse_coefficients(5, 3, model="zz"), (ValueError, "model")),
    "make_gaussian_dictionary_0": (lambda: make_gaussian_dictionary(0), (ValueError, "n_components")),
    "make_collinear_dictionary_nan": (lambda: make_collinear_dictionary(3, np.nan), (TypeError, "coherence")),
    "make_dictionary_signals_shapes": (lambda: make_dictionary_signals(np.eye(3), np.ones((4, 2))),
                                       (ValueError, "dictionary must be p x p and coefficients n x p")),
    "sharpness_test_singular": (lambda: sharpness_test(np.zeros((P, P)), X0), (ValueError, "D is singular")),
    # estimators' other arguments and methods
    "feature_weights_nan": (lambda: _forest(RandomForestRegressor).fit(X0, Y_REG, feature_weights=[np.nan] * P),
                            (ValueError, "feature_weights contains NaN")),
    "feature_weights_short": (lambda: _forest(RandomForestRegressor).fit(X0, Y_REG, feature_weights=[1.0] * 3),
                              (ValueError, r"feature_weights must be a 1-d array with one entry per feature \(4\)")),
    # feature weights enter relative to each other: scaled by 2^k they give the same forest
    **{f"feature_weights_times_2^{k}": (
        lambda k=k: _forest(RandomForestRegressor).fit(X0, Y_REG, feature_weights=np.ldexp(FW, k)).predict(X0),
        lambda r: np.array_equal(r, _forest(RandomForestRegressor).fit(X0, Y_REG, feature_weights=FW).predict(X0)))
       for k in (-1072, 1020)},
    "feature_groups_short": (lambda: LSSFind(n_estimators=2).fit(X0, Y_REG, feature_groups=["a"]),
                             (ValueError, "feature_groups must have one group name per column")),
    "LSSFind.dwp_feature_beyond_p": (lambda: LSS.dwp([[(P, 1)]]), (ValueError, "names feature 4, but there are 4")),
    "LSSFind.dwp_flat_set": (lambda: LSS.dwp([(0, 1)]), (ValueError, "sets must hold signed sets")),
    "IterativeRandomForest.bootstrap_index": (lambda: IRF.bootstrap(X0, Y_CLF, 10**6),
                                              (ValueError, "index must be in")),
    "IterativeRandomForest.bootstrap_bool": (lambda: IRF.bootstrap(X0, Y_CLF, True), (ValueError, "index must be in")),
    "to_sklearn_unfitted": (lambda: RandomForestRegressor().to_sklearn(), (NotFittedError, "not fitted")),
    "SkinnyTrees_X_val_nan": (lambda: SkinnyTreesRegressor(**SKINNY_KW).fit(X0, Y_REG, X_val=np.full((3, P), np.nan),
                                                                           y_val=np.ones(3)),
                              (ValueError, "Input X contains NaN")),
    "SkinnyTrees_X_val_without_y_val": (lambda: SkinnyTreesRegressor(**SKINNY_KW).fit(X0, Y_REG, X_val=X0),
                                        (ValueError, "X_val and y_val must be given together")),
    "fit_budget_nan_X": (lambda: fit_budget(SkinnyTreesRegressor(**SKINNY_KW), with_value(X0, 0, 0, np.nan), Y_REG, 2,
                                            n_trials=1), (ValueError, "Input X contains NaN")),
    "fit_budget_n_trials_true": (lambda: fit_budget(SkinnyTreesRegressor(**SKINNY_KW), X0, Y_REG, 2, n_trials=True),
                                 (InvalidParameterError, "'n_trials'")),
    "fit_budget_max_features_0": (lambda: fit_budget(SkinnyTreesRegressor(**SKINNY_KW), X0, Y_REG, 0, n_trials=1),
                                  (InvalidParameterError, "'max_features'")),
    "DLBCD_init_nan": (lambda: DLBCD(**DL_KW, init=np.full((P, P), np.nan)).fit(X0),
                       (ValueError, "Input init contains NaN")),
    "DLBCD_init_shape": (lambda: DLBCD(**DL_KW, init=np.eye(3)).fit(X0), (ValueError, "init has shape")),
    "DLBCD.objective_tau_nan": (lambda: DL.objective(X0, tau=np.nan), (ValueError, "tau must be a positive number")),
    "PartitionedRatio_partition_beyond_p": (lambda: PartitionedRatio(7).fit(X0), (ValueError, "partition=7 must put")),
    "PartitionedRatio_partition_bool": (lambda: PartitionedRatio(True).fit(X0),
                                        (TypeError, "partition must be an int")),
    "PartitionedRatio_lambdas_nan": (lambda: PartitionedRatio(2, lambdas=[np.nan]).fit(X0),
                                     (ValueError, "lambdas must be a non-empty array of finite")),
    "Tree_missing_fields": (lambda: Tree({}), (ValueError, "arrays lacks the node fields")),
    "InteractionTable_column_length": (lambda: InteractionTable([((0, 1),)], {"dwp": np.ones(2)}),
                                       (ValueError, "column 'dwp' must have one value per interaction")),
    # select: one boolean per row, or integer indices in [-len, len)
    "InteractionTable.select_short_mask": (lambda: TABLE.select([True]),
                                           (ValueError, "mask has 1 booleans for a table of 3 interactions")),
    "InteractionTable.select_long_mask": (lambda: TABLE.select([True] * 4),
                                          (ValueError, "mask has 4 booleans for a table of 3 interactions")),
    "InteractionTable.select_index_beyond": (lambda: TABLE.select([3]),
                                             (IndexError, r"mask holds indices outside \[-3, 3\)")),
    "InteractionTable.select_index_2_70": (lambda: TABLE.select(np.array([2**63], dtype=np.uint64)),
                                           (IndexError, "mask holds indices outside")),
    "InteractionTable.select_float_indices": (lambda: TABLE.select([0.7]),
                                              (TypeError, "mask must hold booleans or integer indices")),
    "InteractionTable.select_nan": (lambda: TABLE.select([np.nan]), (TypeError, "mask must hold booleans")),
    "InteractionTable.select_strings": (lambda: TABLE.select(["a"]), (TypeError, "mask must hold booleans")),
    "InteractionTable.select_none": (lambda: TABLE.select(None), (ValueError, "mask must be a 1-d sequence")),
    "InteractionTable.select_scalar_true": (lambda: TABLE.select(True), (ValueError, "mask must be a 1-d sequence")),
    "InteractionTable.select_2d": (lambda: TABLE.select([[True, False, True]]),
                                   (ValueError, "mask must be a 1-d sequence")),
    "InteractionTable.select_ragged": (lambda: TABLE.select([[0], [0, 1]]), (ValueError, "mask must be a 1-d")),
    "InteractionTable.select_nothing": (lambda: TABLE.select([]), lambda r: len(r) == 0 and r.columns == ["dwp"]),
    "InteractionTable.select_negative_index": (lambda: TABLE.select([-1, 0]),
                                               lambda r: r.features == [TABLE.features[2], TABLE.features[0]]),
    "InteractionTable.select_mask": (lambda: TABLE.select(TABLE["dwp"] > 0.3),  # NaN is not above
                                     lambda r: r.features == TABLE.features[:2] and np.array_equal(r["dwp"], [0.9, 0.5])),
    # to_frame: every row and column, NaN scores kept, an empty table gives the columns
    "InteractionTable.to_frame_nan_score": (lambda: TABLE.to_frame(),
                                            lambda f: f.shape == (3, 5) and np.isnan(f["dwp"][2])
                                            and list(f["interaction"]) == ["a+", "b- & c+", "a- & c+"]),
    "InteractionTable.to_frame_empty": (lambda: TABLE.select([]).to_frame(),
                                        lambda f: f.shape == (0, 5) and list(f.columns) == ["interaction", "order",
                                                                                            "features", "names",
                                                                                            "dwp"]),
    "InteractionTable.to_frame_without_names": (lambda: InteractionTable([((1, 1),)], {"s": [1.0]}).to_frame(),
                                                lambda f: f["names"][0] == (("x1", 1),)),
    # SignedPaths.path: an integer row in [-len, len)
    "SignedPaths.path_beyond": (lambda: PATHS.path(len(PATHS)),
                                (IndexError, f"row {len(PATHS)} is outside \\[-{len(PATHS)}, {len(PATHS)}\\)")),
    "SignedPaths.path_below": (lambda: PATHS.path(-len(PATHS) - 1), (IndexError, "is outside")),
    "SignedPaths.path_2_70": (lambda: PATHS.path(2**70), (IndexError, "row 1180591620717411303424 is outside")),
    "SignedPaths.path_float": (lambda: PATHS.path(1.0), (TypeError, "row must be an integer index")),
    "SignedPaths.path_bool": (lambda: PATHS.path(True), (TypeError, "row must be an integer index")),
    "SignedPaths.path_string": (lambda: PATHS.path("0"), (TypeError, "row must be an integer index")),
    "SignedPaths.path_last": (lambda: PATHS.path(-1), lambda r: r == decode(PATHS.codes[PATHS.indptr[-2]:])),
    "SignedPaths.path_numpy_int": (lambda: PATHS.path(np.int32(0)), lambda r: r == PATHS.path(0)),
    "encode_sign_3": (lambda: encode([(0, 3)]), (ValueError, "a signed feature is")),
    "encode_unknown_name": (lambda: encode([("x", 1)], names=("a", "b")), (ValueError, "names 'x', which is not")),
    "decode_negative": (lambda: decode([-1]), (ValueError, "codes must be integers from 0 to")),
    "decode_float": (lambda: decode([1.5]), (ValueError, "codes must be integers from 0 to 4294967295")),
    # issue 52, item 7: no silent casts or duplicates
    "decode_2_63": (lambda: decode([2**63]), (ValueError, r"codes must be integers from 0 to 4294967295 \(2k")),
    "minimal_set_given_twice": (lambda: minimal([[(0, 1), (1, -1)], [(1, -1), (0, 1)], [(2, 1)]]),
                                lambda r: r == [[(0, 1), (1, -1)], [(2, 1)]]),
    "shap_top_k_bool": (lambda: imp.shap_top_interactions(RF_REG, X0, k=True), (InvalidParameterError, "'k'")),
    "forest_complex_weights": (lambda: RandomForestRegressor(3).fit(X0, Y_REG, sample_weight=W0 + 0j),
                               (TypeError, "sample_weight must be an array of real numbers, got complex128 values "
                                           r"\(casting them would drop their imaginary parts\)")),
    "forest_date_weights": (lambda: RandomForestRegressor(3).fit(X0, Y_REG, sample_weight=W0.astype("datetime64[D]")),
                            (TypeError, "sample_weight must be an array of real numbers, got datetime64")),
    "forest_text_weights": (lambda: RandomForestRegressor(3).fit(X0, Y_REG, sample_weight=W0.astype(str)),
                            (TypeError, "sample_weight must be an array of real numbers, got <U")),
    "forest_object_real_weights": (lambda: RandomForestRegressor(3, random_state=0).fit(
        X0, Y_REG, sample_weight=W0.astype(object)).n_estimators, lambda r: r == 3),
    "lssfind_complex_weights": (lambda: LSSFind(3).fit(X0, Y_REG, sample_weight=W0 + 1j),
                                (TypeError, "sample_weight must be an array of real numbers")),
    "classifier_complex_feature_weights": (lambda: RandomForestClassifier(3).fit(X0, Y_CLF, feature_weights=np.ones(P) * 1j),
                                           (TypeError, "feature_weights must be an array of real numbers")),
    "partitioned_lambdas_2d": (lambda: PartitionedRatio(2, lambdas=np.ones((2, 2))).fit(X0),
                               (ValueError, r"lambdas must be a 1-d grid of penalties, got an array of shape \(2, 2\)")),
    # issue 52, item 9: valid input accepted
    "dlbcd_tol_inf": (lambda: DLBCD(2, tol=np.inf, random_state=0).fit(X0).n_iter_, lambda r: r == 1),
    "minimal_string": (lambda: minimal("ab"), (TypeError, "sets must be a collection of sets")),
    "minimal_sets": (lambda: minimal([[(0, 1)], [(0, 1), (1, -1)], [(2, 1)]]), lambda r: r == [[(0, 1)], [(2, 1)]]),
    "group_wrong_length": (lambda: imp.group(np.ones(P), ["a"]), (ValueError, "feature_groups")),
    "mdi_not_a_forest": (lambda: imp.mdi("forest"), (TypeError, "forest must be")),
}


@pytest.mark.parametrize("name", FUNCTION_CASES)
def test_function(name):
    call, outcome = FUNCTION_CASES[name]
    if isinstance(outcome, tuple):
        with pytest.raises(outcome[0], match=outcome[1]):
            call()
    else:
        assert outcome(call())


def test_to_frame_without_pandas_says_it_needs_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails, as where it is not installed
    with pytest.raises(ImportError, match="InteractionTable.to_frame needs pandas: pip install pandas"):
        TABLE.to_frame()


# -- impurity-based results at extreme target scales -------------------------------------------------

def test_dstump_ranks_targets_whose_scores_underflow_as_the_unscaled_targets():
    base, tiny = imp.dstump(X0, Y_REG), imp.dstump(X0, np.ldexp(Y_REG, -600))
    np.testing.assert_array_equal(tiny.ranking, base.ranking)
    with np.errstate(under="ignore"):
        np.testing.assert_array_equal(tiny.scores, np.ldexp(base.scores, -1200))  # 0: correctly rounded


@pytest.mark.parametrize("k", [-400, -300, 300, 400])
def test_dstump_at_extreme_target_scales_scales_its_scores_exactly(k):
    """Sums of y^2 overflowed (scores -inf: 'no admissible split') or underflowed (0) from |y| ~ 1e154
    on; y is now fitted scaled by a power of two, and scores in units of y^2 scale back exactly."""
    base, scaled = imp.dstump(X0, Y_REG), imp.dstump(X0, np.ldexp(Y_REG, k))
    np.testing.assert_array_equal(scaled.scores, np.ldexp(base.scores, 2 * k))
    np.testing.assert_array_equal(scaled.impurity_decrease, np.ldexp(base.impurity_decrease, 2 * k))
    np.testing.assert_array_equal(scaled.ranking, base.ranking)
    np.testing.assert_array_equal(scaled.threshold, base.threshold)


@pytest.mark.parametrize("k", [-600, 600])
def test_mdi_of_a_forest_whose_impurities_left_float64_is_refused(k):
    """MDI was NaN (normalised) or inf / 0 for a forest fitted on y whose squares leave float64;
    predictions stay exact."""
    with pytest.warns(RuntimeWarning, match="its squares are beyond float64"):
        forest = _forest(RandomForestRegressor).fit(X0, np.ldexp(Y_REG, k))
    base = _forest(RandomForestRegressor).fit(X0, Y_REG)
    np.testing.assert_array_equal(forest.predict(X0), np.ldexp(base.predict(X0), k))
    for normalize in (True, False):
        with pytest.raises(ValueError, match="root impurity is (inf|0).*Refit on a rescaled y"):
            imp.mdi(forest, normalize=normalize)


# -- parameters added since the suite was written, rules, combine, solve_path, work sizes ----------

def _inbag(**kw):
    return _forest(RandomForestRegressor, max_samples=2.0, **kw)


RULE = interaction_rule(RF_REG, signed_paths(RF_REG), [(0, 1), (1, 1)])
RF_CLF3 = _forest(RandomForestClassifier).fit(X0, np.digitize(Y_REG, [0.8, 1.6]))
RATIO_PROBLEM = RATIO._problem(RATIO._standardise(X0, RATIO.mean_, RATIO.scale_), None)
GROUP_WEIGHTS = np.ones(RATIO_PROBLEM.n_groups)
HUGE = 2**60  # sizes arrays beyond any machine's memory

NEW_CASES = {
    # forests' newer parameters
    "max_leaf_nodes_1": (lambda: _forest(RandomForestRegressor, max_leaf_nodes=1).fit(X0, Y_REG),
                         (InvalidParameterError, "'max_leaf_nodes'")),
    "max_leaf_nodes_true": (lambda: _forest(RandomForestRegressor, max_leaf_nodes=True).fit(X0, Y_REG),
                            (InvalidParameterError, "'max_leaf_nodes'")),
    "ccp_alpha_negative": (lambda: _forest(RandomForestRegressor, ccp_alpha=-1.0).fit(X0, Y_REG),
                           (InvalidParameterError, "'ccp_alpha'")),
    "ccp_alpha_nan": (lambda: _forest(RandomForestRegressor, ccp_alpha=np.nan).fit(X0, Y_REG),
                      (InvalidParameterError, "'ccp_alpha'")),
    # an alpha above every subtree's cost prunes each tree to its root
    "ccp_alpha_1e300": (lambda: _forest(RandomForestRegressor, ccp_alpha=1e300).fit(X0, Y_REG),
                        lambda f: all(t.tree_.node_count == 1 for t in f.estimators_)),
    "monotonic_cst_short": (lambda: _forest(RandomForestRegressor, monotonic_cst=[1, 0]).fit(X0, Y_REG),
                            (ValueError, "monotonic_cst has shape 2 but the input data X has 4 features")),
    "monotonic_cst_2": (lambda: _forest(RandomForestRegressor, monotonic_cst=[2, 0, 0, 0]).fit(X0, Y_REG),
                        (ValueError, "monotonic_cst must be None or an array-like of -1, 0 or 1")),
    "monotonic_cst_nan": (lambda: _forest(RandomForestRegressor, monotonic_cst=[np.nan, 0, 0, 0]).fit(X0, Y_REG),
                          (ValueError, "monotonic_cst must be None or an array-like of -1, 0 or 1")),
    "monotonic_cst_multiclass": (lambda: _forest(RandomForestClassifier, monotonic_cst=[1, 0, 0, 0]).fit(
        X0, np.digitize(Y_REG, [0.8, 1.6])), (ValueError, "monotonic_cst: Monotonicity constraints are not supported "
                                                         "with multiclass")),
    "verbose_negative": (lambda: _forest(RandomForestRegressor, verbose=-1).fit(X0, Y_REG),
                         (InvalidParameterError, "'verbose'")),
    "verbose_float": (lambda: _forest(RandomForestRegressor, verbose=1.5).fit(X0, Y_REG),
                      (InvalidParameterError, "'verbose'")),
    "criterion_poisson_negative_y": (lambda: _forest(RandomForestRegressor, criterion="poisson").fit(X0, Y_REG - 1),
                                     (ValueError, r"Some value\(s\) of y are negative")),
    "criterion_poisson_zero_y": (lambda: _forest(RandomForestRegressor, criterion="poisson").fit(X0, 0 * Y_REG),
                                 (ValueError, "Sum of y is not strictly positive")),
    "criterion_for_the_other_task": (lambda: _forest(RandomForestClassifier, criterion="poisson").fit(X0, Y_CLF),
                                     (InvalidParameterError, "'criterion'")),
    # leaf medians of y: predictions within y's range
    "criterion_absolute_error": (lambda: _forest(RandomForestRegressor, criterion="absolute_error").fit(
        X0, Y_REG).predict(X0), lambda r: np.all((r >= Y_REG.min()) & (r <= Y_REG.max()))),
    "max_samples_2.0": (lambda: _inbag().fit(X0, Y_REG).inbag_counts_,
                        lambda c: np.array_equal(c.sum(axis=1), [2 * N] * 3)),
    # draws in proportion to the weights (rows of weight 0 never drawn), twice their sum (scikit-learn 1.9)
    "max_samples_2.0_weights": (lambda: _inbag().fit(X0, Y_REG, np.r_[np.zeros(4), np.ones(N - 4)]).inbag_counts_,
                                lambda c: np.array_equal(c.sum(axis=1), [2 * (N - 4)] * 3) and not c[:, :4].any()),
    "max_samples_2.0_without_bootstrap": (lambda: _inbag(bootstrap=False).fit(X0, Y_REG),
                                          (ValueError, r"max_samples must be in \(0.0, 1.0\], got 2.0")),
    "max_samples_2_40": (lambda: _forest(RandomForestRegressor, max_samples=2**40).fit(X0, Y_REG),
                         (ValueError, r"max_samples must be in \[1, 2147483647\]")),
    # combine
    "combine_nothing": (lambda: combine(), (ValueError, "combine needs at least one forest")),
    "combine_other_data": (lambda: combine(RF_REG, _forest(RandomForestRegressor).fit(X0[:, :3], Y_REG)),
                           (ValueError, "forest 1 was fitted on 24 rows x 3 features, forest 0 on 24 x 4")),
    "combine_kinds": (lambda: combine(RF_REG, RF_CLF), (TypeError, "combine takes forests of one kind")),
    "combine_classes": (lambda: combine(RF_CLF, RF_CLF3), (ValueError, r"forest 1 has classes \[0, 1, 2\]")),
    "combine_unfitted": (lambda: combine(RF_REG, RandomForestRegressor()), (NotFittedError, "not fitted")),
    "combine_list": (lambda: combine([RF_REG, RF_REG]), (TypeError, "argument 0 is list")),
    # readable rules
    "tree_rules_tree_true": (lambda: tree_rules(RF_REG, tree=True), (ValueError, "tree must be an index")),
    "tree_rules_tree_nan": (lambda: tree_rules(RF_REG, tree=np.nan), (ValueError, "tree must be an index")),
    "tree_rules_tree_beyond": (lambda: tree_rules(RF_REG, tree=20),
                               (ValueError, r"tree must be an index in \[0, 20\)")),
    "tree_rules_unfitted": (lambda: tree_rules(RandomForestRegressor()), (NotFittedError, "not fitted")),
    "tree_rules_names_short": (lambda: tree_rules(RF_REG, feature_names=["a"]),
                               (ValueError, "feature_names has 1 names for 4 features")),
    "tree_rules_precision_0": (lambda: tree_rules(RF_REG, precision=0),
                               (ValueError, r"precision must be in \[1, 17\]")),
    "tree_rules_precision_2_70": (lambda: tree_rules(RF_REG, precision=2**70), (ValueError, "precision must be in")),
    "tree_rules_precision_true": (lambda: tree_rules(RF_REG, precision=True), (TypeError, "precision must be an int")),
    "interaction_rule_precision_nan": (lambda: interaction_rule(RF_REG, signed_paths(RF_REG), [(0, 1)],
                                                                precision=np.nan), (TypeError, "precision")),
    "InteractionRule.indicator_columns": (lambda: RULE.indicator(X0[:, :3]), (ValueError, "X has 3 features")),
    "InteractionRule.indicator_inf": (lambda: RULE.indicator(with_value(X0, 0, 0, np.inf)),
                                      (ValueError, "X contains infinity")),
    # a missing value is outside the cell; other rows as on clean X
    "InteractionRule.indicator_nan": (lambda: RULE.indicator(with_value(X0, 0, 0, np.nan)),
                                      lambda r: not r[0] and np.array_equal(r[1:], RULE.indicator(X0)[1:])),
    "InteractionRule.predict_1d": (lambda: RULE.predict(X0[0]), (ValueError, "X: Expected 2D array")),
    "InteractionRule.predict_strings": (lambda: RULE.predict(np.full(X0.shape, "a")),
                                        (ValueError, "X: could not convert string to float")),
    "InteractionRule.predict_nan": (lambda: RULE.predict(with_value(X0, 0, 0, np.nan)),
                                    lambda r: np.all(np.isfinite(r)) and np.array_equal(r[1:], RULE.predict(X0)[1:])),
    # solve_path and feature groups
    "solve_path_negative_lambda": (lambda: solve_path(RATIO_PROBLEM, [1.0, -0.5], GROUP_WEIGHTS, 1e-6, 10),
                                   (ValueError, "lambdas must be a non-empty array of finite non-negative")),
    "solve_path_nan_lambda": (lambda: solve_path(RATIO_PROBLEM, [np.nan], GROUP_WEIGHTS, 1e-6, 10),
                              (ValueError, "lambdas must be")),
    "solve_path_no_lambdas": (lambda: solve_path(RATIO_PROBLEM, [], GROUP_WEIGHTS, 1e-6, 10),
                              (ValueError, "lambdas must be")),
    "solve_path_weights_short": (lambda: solve_path(RATIO_PROBLEM, [1.0], GROUP_WEIGHTS[1:], 1e-6, 10),
                                 (ValueError, "weights must be a 1-d array with one entry per group")),
    "solve_path_negative_weight": (lambda: solve_path(RATIO_PROBLEM, [1.0], -GROUP_WEIGHTS, 1e-6, 10),
                                   (ValueError, "weights must be non-negative")),
    "solve_path_tol_0": (lambda: solve_path(RATIO_PROBLEM, [1.0], GROUP_WEIGHTS, 0.0, 10),
                         (InvalidParameterError, "'tol'")),
    "solve_path_max_iter_true": (lambda: solve_path(RATIO_PROBLEM, [1.0], GROUP_WEIGHTS, 1e-6, True),
                                 (InvalidParameterError, "'max_iter'")),
    "solve_path_not_a_problem": (lambda: solve_path(X0, [1.0], GROUP_WEIGHTS, 1e-6, 10),
                                 (InvalidParameterError, "'problem'")),
    "IterativeRandomForest_nan_group": (lambda: IterativeRandomForest(**IRF_KW).fit(
        X0, Y_CLF, feature_groups=["a", np.nan, "b", np.nan]), (ValueError, r"feature_groups holds NaN at column\(s\) "
                                                                            r"\[1, 3\]")),
    "LSSFind_nan_group": (lambda: LSSFind(n_estimators=2).fit(X0, Y_REG, feature_groups=[np.nan] * P),
                          (ValueError, "feature_groups holds NaN")),
    # work sizes whose up-front arrays exceed memory are refused by name (issue 22.3) ...
    "RandomForestRegressor_n_estimators_2_31": (
        lambda: RandomForestRegressor(n_estimators=2**31 - 1).fit(X0, Y_REG) if _memory() < 2**31 * (4 * N + 1024)
        else pytest.skip("this machine has the memory"), (ValueError, "n_estimators=2147483647 needs")),
    **{f"IterativeRandomForest_{name}_huge": (
        lambda name=name: IterativeRandomForest(**{**IRF_KW, name: HUGE}).fit(X0, Y_CLF),
        (ValueError, f"{name}={HUGE} needs .* GiB for .* more than this machine's"))
       for name in ("n_iterations", "n_bootstraps", "n_estimators", "bootstrap_n_estimators",
                    "bootstrap_max_samples")},
    "SkinnyTrees_n_trees_huge": (lambda: SkinnyTreesRegressor(**{**SKINNY_KW, "n_trees": HUGE}).fit(X0, Y_REG),
                                 (ValueError, f"n_trees={HUGE} needs")),
    "DLBCD_n_restarts_huge": (lambda: DLBCD(**DL_KW, n_restarts=HUGE).fit(X0),
                              (ValueError, f"n_restarts={HUGE} needs")),
    "fit_budget_n_trials_huge": (lambda: fit_budget(SkinnyTreesRegressor(**SKINNY_KW), X0, Y_REG, 2, n_trials=HUGE),
                                 (ValueError, f"n_trials={HUGE} needs")),
    "PartitionedRatio_n_lambdas_huge": (lambda: PartitionedRatio(2, n_lambdas=HUGE).fit(X0),
                                        (ValueError, f"n_lambdas={HUGE} needs")),
    "rit_n_trees_huge": (lambda: random_intersection_trees([[1, 2], [2, 3]], n_trees=HUGE, max_nodes=2**62),
                         (ValueError, f"n_trees={HUGE} needs")),
    # ... while iteration limits beyond the core's int32 are never reached: the same result
    **{f"DLBCD_{name}_2_40": (
        lambda name=name: DLBCD(**{**DL_KW, name: 2**40}).fit(X0).components_,
        lambda r, name=name: np.array_equal(r, DLBCD(**{**DL_KW, name: 2**31 - 1}).fit(X0).components_))
       for name in ("max_iter", "max_inner_iter", "lbfgs_memory")},
    "sharpness_test_max_inner_iter_2_40": (
        lambda: sharpness_test(DL.components_, X0, random_state=0, max_inner_iter=2**40)[1],
        lambda r: np.array_equal(r, sharpness_test(DL.components_, X0, random_state=0, max_inner_iter=2**31 - 1)[1])),
}


def _memory():
    from pyinterp._validation import physical_memory
    return physical_memory()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", NEW_CASES)
def test_new_parameter(name):
    call, outcome = NEW_CASES[name]
    if isinstance(outcome, tuple):
        with pytest.raises(outcome[0], match=outcome[1]):
            call()
    else:
        assert outcome(call())


def test_friedman_mse_warns_and_is_squared_error():
    with pytest.warns(FutureWarning, match="friedman_mse"):
        forest = _forest(RandomForestRegressor, criterion="friedman_mse").fit(X0, Y_REG)
    np.testing.assert_array_equal(forest.predict(X0), _forest(RandomForestRegressor).fit(X0, Y_REG).predict(X0))


# -- plots: unfitted models, wrong objects, wrong shapes ---------------------------------------------

def _plots():
    from pyinterp import plotting as pl
    return {
        "plot_importances_unfitted": (lambda: pl.plot_importances(RandomForestRegressor(), X0, Y_REG),
                                      (NotFittedError, "not fitted")),
        "plot_importances_not_a_forest": (lambda: pl.plot_importances("forest", X0, Y_REG), (TypeError, "forest must")),
        "plot_importances_columns": (lambda: pl.plot_importances(RF_REG, X0[:, :3], Y_REG),
                                     (ValueError, "X has 3 features")),
        "plot_importances_y_short": (lambda: pl.plot_importances(RF_REG, X0, Y_REG[:-1]),
                                     (ValueError, "y: Found input variables with inconsistent numbers")),
        "plot_importances_top_0": (lambda: pl.plot_importances(RF_REG, X0, Y_REG, top=0), (ValueError, "top must")),
        "plot_lssfind_unfitted": (lambda: pl.plot_lssfind(LSSFind()), (NotFittedError, "not fitted")),
        "plot_irf_scores_unfitted": (lambda: pl.plot_irf_scores(IterativeRandomForest()),
                                     (NotFittedError, "not fitted")),
        "plot_irf_scores_not_irf": (lambda: pl.plot_irf_scores(LSS), (TypeError, "irf must be")),
        "plot_interaction_network_int": (lambda: pl.plot_interaction_network(3), (TypeError, "result must be")),
        "plot_interaction_network_score": (lambda: pl.plot_interaction_network(IRF, score="zz"),
                                           (ValueError, "score must be one of")),
        "plot_interaction_network_threshold_nan": (lambda: pl.plot_interaction_network(IRF, threshold=np.nan),
                                                   (ValueError, "threshold must be a real number")),
        "plot_interaction_network_threshold_string": (lambda: pl.plot_interaction_network(IRF, threshold="a"),
                                                      (ValueError, "threshold must be a real number")),
        "plot_ratio_path_unfitted": (lambda: pl.plot_ratio_path(PartitionedRatio(2)), (NotFittedError, "not fitted")),
        "plot_dictionary_atoms_unfitted": (lambda: pl.plot_dictionary_atoms(DLBCD()), (NotFittedError, "not fitted")),
        "plot_objective_history_not_dlbcd": (lambda: pl.plot_objective_history(RF_REG), (TypeError, "dlbcd must be")),
        "plot_skinny_path_unfitted": (lambda: pl.plot_skinny_path(SkinnyTreesRegressor()),
                                      (NotFittedError, "not fitted")),
        "plot_interaction_response_not_a_rule": (lambda: pl.plot_interaction_response("r", X0, Y_REG),
                                                 (TypeError, "rule must be an InteractionRule")),
        "plot_interaction_response_columns": (lambda: pl.plot_interaction_response(RULE, X0[:, :3], Y_REG),
                                              (ValueError, "X has 3 features")),
        "plot_interaction_response_y_short": (lambda: pl.plot_interaction_response(RULE, X0, Y_REG[:-1]),
                                              (ValueError, "y has 23 values for 24 rows")),
        "plot_interaction_response_y_words": (lambda: pl.plot_interaction_response(RULE, X0, np.full(N, "a")),
                                              (ValueError, "y: could not convert string to float")),
        "plot_interaction_response_y_nan": (lambda: pl.plot_interaction_response(RULE, X0, with_value(
            Y_REG[:, None], 0, 0, np.nan)), (ValueError, "Input y contains NaN")),
        "plot_interaction_response_bins_none": (lambda: pl.plot_interaction_response(RULE, X0, Y_REG, bins=None),
                                                (ValueError, "bins must be a positive int, got None")),
        "plot_interaction_response_kind": (lambda: pl.plot_interaction_response(RULE, X0, Y_REG, kind="zz"),
                                           (ValueError, "kind must be")),
    }


PLOT_CASES = ["plot_importances_unfitted", "plot_importances_not_a_forest", "plot_importances_columns",
              "plot_importances_y_short", "plot_importances_top_0", "plot_lssfind_unfitted", "plot_irf_scores_unfitted",
              "plot_irf_scores_not_irf", "plot_interaction_network_int", "plot_interaction_network_score",
              "plot_interaction_network_threshold_nan", "plot_interaction_network_threshold_string",
              "plot_ratio_path_unfitted", "plot_dictionary_atoms_unfitted", "plot_objective_history_not_dlbcd",
              "plot_skinny_path_unfitted", "plot_interaction_response_not_a_rule", "plot_interaction_response_columns",
              "plot_interaction_response_y_short", "plot_interaction_response_y_words",
              "plot_interaction_response_y_nan", "plot_interaction_response_bins_none",
              "plot_interaction_response_kind"]


@pytest.mark.parametrize("name", PLOT_CASES)
def test_plot(name):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    call, (exc, match) = _plots()[name]
    try:
        with pytest.raises(exc, match=match):
            call()
    finally:
        plt.close("all")


def test_plot_cases_are_all_listed():
    pytest.importorskip("matplotlib")
    assert sorted(_plots()) == sorted(PLOT_CASES)


def test_plot_bins_beyond_the_rows_draw_the_one_bin_per_row_surface():
    """bins = 2^70 allocated its grid ('Maximum allowed size exceeded'); beyond the rows, bins are empty."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from pyinterp.plotting import plot_interaction_response
    try:
        huge = plot_interaction_response(RULE, X0, Y_REG, bins=2**70).collections[0].get_array()
        rows = plot_interaction_response(RULE, X0, Y_REG, bins=N).collections[0].get_array()
        np.testing.assert_array_equal(huge, rows)
    finally:
        plt.close("all")


# -- the command line: an exit status and one line on stderr, never a traceback ----------------------

CLI_CASES = {
    "missing_file": (["importance", "{dir}/nonexistent.csv", "--target", "y"], 1, "pyinterp: error: .*no such file"),
    "no_target": (["importance", "{dir}/t.csv"], 1, "give --target COLUMN"),
    "unknown_target": (["importance", "{dir}/t.csv", "--target", "zz"], 1, "--target: no column named 'zz'"),
    "unknown_index_col": (["importance", "{dir}/t.csv", "--target", "y", "--index-col", "zz"], 1,
                          "--index-col: no column named 'zz'"),
    "text_column": (["importance", "{dir}/words.csv", "--target", "y"], 1, "column 'b' is not numeric"),
    "nothing_left": (["importance", "{dir}/t.csv", "--target", "y", "--drop", "a,b"], 1, "no feature columns are left"),
    "n_estimators_0": (["importance", "{dir}/t.csv", "--target", "y", "--n-estimators", "0"], 2,
                       "argument --n-estimators: must be a positive integer, not 0"),
    "n_estimators_word": (["importance", "{dir}/t.csv", "--target", "y", "--n-estimators", "abc"], 2,
                          "argument --n-estimators: invalid"),
    "n_estimators_2_40": (["importance", "{dir}/t.csv", "--target", "y", "--n-estimators", str(2**40)], 1,
                          "'n_estimators' parameter"),
    "n_jobs_0": (["importance", "{dir}/t.csv", "--target", "y", "--n-jobs", "0"], 1, "n_jobs must be"),
    "random_state_negative": (["importance", "{dir}/t.csv", "--target", "y", "--random-state", "-1"], 1,
                              "'random_state' parameter"),
    "out_unwritable": (["importance", "{dir}/t.csv", "--target", "y", "--out", "{dir}/t.csv/sub"], 1,
                       "pyinterp: error: "),
    "task_typo": (["importance", "{dir}/t.csv", "--target", "y", "--task", "clf"], 2, "argument --task: invalid"),
    "demo_one_sample": (["demo", "--n-samples", "1", "--n-estimators", "3"], 1, r"n_samples must be in \[2,"),
    "unknown_command": (["bogus"], 2, "invalid choice: 'bogus'"),
    "no_command": ([], 2, "the following arguments are required: COMMAND"),
}


@pytest.mark.parametrize("name", CLI_CASES)
def test_cli(name, tmp_path, capsys):
    pytest.importorskip("pandas")
    from pyinterp.cli import main
    (tmp_path / "t.csv").write_text("a,b,y\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(12)))
    (tmp_path / "words.csv").write_text("a,b,y\n1,x,3\n2,y,4\n")
    argv, status, message = CLI_CASES[name]
    argv = [a.format(dir=tmp_path) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        code = exit_.code
    err = capsys.readouterr().err
    assert code == status
    assert re.search(message, err), err
    assert "Traceback" not in err
