"""Feature importance from one forest engine: MDI, MDI-oob, naive-oob, UFI, OOB permutation,
Saabas contributions, TreeSHAP values and interaction values, and DSTUMP.

Every forest-based function takes a fitted pyinterp forest or a fitted scikit-learn
``RandomForestRegressor`` / ``RandomForestClassifier`` of one output (``mdi`` also reads forests of
several outputs, whose impurity is the mean of the outputs'; the others refuse them, since each
weighs one response per row). For scikit-learn forests,
the out-of-bag sets are recovered the way scikit-learn itself does for ``oob_score_`` (from each
tree's ``random_state``), which is why those functions need the training X; pyinterp forests store
their in-bag counts, and their ``to_sklearn()`` exports carry them.

Definitions (thesis ch. 8, with T trees and f_{T,k} the Saabas contribution of feature k):

- ``mdi``: sum over the nodes split on k of (N_t I_t - N_l I_l - N_r I_r) / N_root, averaged over
  trees (``normalize=False``, eq. 8.4), or scikit-learn's normalised ``feature_importances_``.
- ``mdi_oob``: for each tree, the mean over its out-of-bag rows of f_{T,k}(x_i) . y_i (one-hot y
  for classes), averaged over trees (eq. 8.20).
- ``naive_oob``: node impurity decreases recomputed on each tree's out-of-bag rows.
- ``ufi``: Zhou & Hooker's decrease of an impurity that mixes the in-bag node value mu with the
  out-of-bag mean mu': E'|y|^2 - <mu, mu'>, i.e. 1 - sum_k p_k p'_k for classes (entropy forests:
  the symmetrised cross-entropy), weighted by in-bag node mass. The class form is Zhou & Hooker's
  modified Gini; the squared-error form is its analogue for real y (one-hot targets give back the
  Gini form), not a formula quoted from their paper.
- ``permutation_oob``: increase of each tree's out-of-bag loss when feature k is permuted among
  that tree's out-of-bag rows (squared error, or misclassification), averaged over trees.

For naive-oob and UFI a split with no out-of-bag row on one side contributes nothing. Trees with no
out-of-bag row are left out of the means. With ``return_std=True`` the standard error across trees
is returned too.
"""

from __future__ import annotations

import functools
import warnings
from numbers import Integral
from typing import NamedTuple

import numpy as np
from scipy import sparse
from sklearn.utils import Bunch
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from . import _core
from ._groups import check_feature_groups
from ._progress import Progress
from ._distributed import chunks, cluster_threads, run_units
from ._seeds import root_seed
from ._validation import (INT32_MAX, FOREST_FIT_X, IntInterval, check_array, check_consistent_length,
                          check_exact_integers, check_int, check_output_size, check_sample_weight, core_X,
                          extreme_exponent, refuse_extreme_targets, regression_target, resolve_n_threads,
                          scaled_weights, warn_missing_call_code)
from .forest.view import check_rows as _check_X
from .forest.view import forest_view as _view

__all__ = [
    "contributions",
    "dstump",
    "group",
    "mdi",
    "mdi_oob",
    "naive_oob",
    "permutation_oob",
    "shap_interaction_importance",
    "shap_interaction_values",
    "shap_top_interactions",
    "shap_values",
    "ufi",
]


class GroupedValues(NamedTuple):
    """Values summed per feature group: the group names and the sums (see :func:`group`)."""

    names: tuple
    values: np.ndarray


def _check_targets(view, y, n_samples):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y.shape}")
    check_consistent_length(np.empty(n_samples), y)
    if view.classes is None:
        y = regression_target(y)
        refuse_extreme_targets(y, "out-of-bag impurities and errors")
        return y
    index = np.searchsorted(view.classes, y)
    index[index == len(view.classes)] = 0
    unknown = view.classes[index] != y
    if np.any(unknown):
        raise ValueError(f"y contains labels the forest was not trained on, e.g. {y[unknown][0]!r}")
    return index.astype(np.int32)


def _oob_inputs(forest, X, y, sample_weight, in_place=False):
    view = _view(forest, n_samples=X.shape[0] if hasattr(X, "shape") else len(X), in_place=in_place)
    X = _check_X(view, X)
    if view.core.n_samples != X.shape[0]:
        raise ValueError(
            f"X has {X.shape[0]} rows but the forest was trained on {view.core.n_samples}: "
            "out-of-bag measures need the training rows"
        )
    if not np.any(view.core.inbag == 0):
        raise ValueError("the forest has no out-of-bag rows (fitted with bootstrap=False and all rows)")
    targets = _check_targets(view, y, X.shape[0])
    if sample_weight is not None:
        sample_weight = scaled_weights(check_sample_weight(sample_weight, X, dtype=np.float64,
                                                            ensure_non_negative=True))
    return view, X, targets, sample_weight


# The forest is checked by forest_view (TypeError naming it), X and y against the forest.
_OOB_CONSTRAINTS = {
    "X": ["array-like", "sparse matrix"],
    "y": ["array-like"],
    "sample_weight": ["array-like", None],
    "return_std": ["boolean"],
    "n_jobs": [Integral, None],
}


def _result(mean, std, return_std):
    return (mean, std) if return_std else mean


def _oob_measure(measure, forest, X, y, sample_weight, return_std, n_jobs):
    view, X, targets, sample_weight = _oob_inputs(forest, X, y, sample_weight, in_place=True)
    mean, std, _ = _core.oob_importance(
        view.core, X, targets, sample_weight, measure, resolve_n_threads(n_jobs)
    )
    return _result(mean, std, return_std)


@validate_params(_OOB_CONSTRAINTS, prefer_skip_nested_validation=True)
def mdi_oob(forest, X, y, *, sample_weight=None, return_std=False, n_jobs=None):
    """MDI-oob (thesis eq. 8.20): per tree, the mean over out-of-bag rows of f_{T,k}(x_i) . y_i,
    averaged over trees. X, y: the training data. Returns (p,) or, with return_std, also the
    standard error across trees."""
    return _oob_measure(_core.OobMeasure.mdi_oob, forest, X, y, sample_weight, return_std, n_jobs)


@validate_params(_OOB_CONSTRAINTS, prefer_skip_nested_validation=True)
def naive_oob(forest, X, y, *, sample_weight=None, return_std=False, n_jobs=None):
    """Impurity decreases recomputed on each tree's out-of-bag rows (the thesis' "naive-oob")."""
    return _oob_measure(_core.OobMeasure.naive_oob, forest, X, y, sample_weight, return_std, n_jobs)


@validate_params(_OOB_CONSTRAINTS, prefer_skip_nested_validation=True)
def ufi(forest, X, y, *, sample_weight=None, return_std=False, n_jobs=None):
    """Zhou & Hooker's unbiased feature importance: decreases of the in-bag/out-of-bag mixed impurity."""
    return _oob_measure(_core.OobMeasure.ufi, forest, X, y, sample_weight, return_std, n_jobs)


@validate_params(
    {**_OOB_CONSTRAINTS, "n_repeats": [IntInterval(Integral, 1, INT32_MAX, closed="both")],
     "random_state": ["random_state"], "verbose": ["verbose"]},
    prefer_skip_nested_validation=True,
)
def permutation_oob(forest, X, y, *, n_repeats=5, random_state=None, sample_weight=None, return_std=False,
                    n_jobs=None, verbose=0):
    """Mean decrease in accuracy on out-of-bag rows: per tree and feature the increase of the
    out-of-bag loss (squared error, or misclassification rate) when the feature is permuted among
    that tree's out-of-bag rows, averaged over n_repeats permutations and over trees. Results depend
    only on random_state, not on n_jobs. verbose reports the trees as they are scored."""
    view, X, targets, sample_weight = _oob_inputs(forest, X, y, sample_weight)
    seed = root_seed(random_state)
    threads = cluster_threads()
    # On a cluster the trees are scored elsewhere: the report comes when they are back.
    with Progress(verbose, view.core.n_trees, "trees", core=True) as progress:
        if threads:  # chunks of trees on the workers; per-tree scores reduced here in tree order
            parts = list(run_units(_core.permutation_tree_scores,
                                   (view.core, X, targets, sample_weight, n_repeats, seed),
                                   chunks(view.core.n_trees, threads)))
            progress.update(view.core.n_trees)
            mean, std, _ = _core.reduce_tree_scores(*_concatenate_csr(parts), view.core.n_features)
        else:
            mean, std, _ = _core.permutation_importance(view.core, X, targets, sample_weight, n_repeats, seed,
                                                        resolve_n_threads(n_jobs))
    return _result(mean, std, return_std)


def _held_out_permutation(forest, X, y, *, n_repeats, random_state, n_jobs):
    """Permutation importance on rows the forest was not fitted on (Janitza et al.'s hold-out
    importance, pyinterp.significance): per tree and feature the increase of the loss on all of X's
    rows when the feature is permuted among them, averaged over n_repeats and trees."""
    view = _view(forest)
    X = _check_X(view, X)
    targets = _check_targets(view, y, X.shape[0])
    mean, _, _ = _core.permutation_importance(view.core, X, targets, None, n_repeats, root_seed(random_state),
                                              resolve_n_threads(n_jobs), held_out=True)
    return mean


def _concatenate_csr(parts):
    """(indptr, features, scores, used) chunks of trees as one, trees in order."""
    offsets = np.cumsum([0] + [part[0][-1] for part in parts[:-1]])
    indptr = np.concatenate([[0]] + [part[0][1:] + offset for part, offset in zip(parts, offsets)])
    return (indptr.astype(np.int64), *(np.concatenate([part[k] for part in parts]) for k in (1, 2, 3)))


@validate_params({"normalize": ["boolean"]}, prefer_skip_nested_validation=True)
def mdi(forest, normalize=True):
    """Mean decrease in impurity. normalize=True: scikit-learn's convention (each tree's
    importances sum to one, single-node trees skipped, mean renormalised) -- equal to
    ``feature_importances_``. normalize=False: the mean over trees of the sum of node-mass-weighted
    impurity decreases (N_t I_t - N_l I_l - N_r I_r) / N_root (thesis eq. 8.4)."""
    core = _view(forest, multi_output=True).core
    for t in range(core.n_trees):
        tree = core.tree(t)
        root = tree["impurity"][0]
        if len(tree["impurity"]) > 1 and not (np.isfinite(root) and root > 0):
            raise ValueError(f"tree {t} has splits but its root impurity is {root:g}: the forest was fitted on a y "
                             "whose squares are beyond float64 (max |y| above ~1e154 or below ~1e-154), so its "
                             "impurity decreases are inf or 0. Refit on a rescaled y: MDI does not depend on its "
                             "scale.")
    return _core.mdi(core, bool(normalize))


_ROWS_CONSTRAINTS = {"X": ["array-like", "sparse matrix"], "n_jobs": [Integral, None]}


def _per_output(view, values):
    """A core array with the outputs last, as the forest predicts them: the output axis dropped for
    regression."""
    return values[..., 0] if view.classes is None else values


def _attribution(view, values, base):
    """(values, base) of an additive attribution per output: base a float for regression."""
    return _per_output(view, values), (float(base[0]) if view.classes is None else base)


@validate_params(_ROWS_CONSTRAINTS, prefer_skip_nested_validation=True)
def contributions(forest, X, *, n_jobs=None):
    """Saabas decomposition. Returns (contributions, bias): contributions[i, k] (regression) or
    contributions[i, k, c] (classification, classes in the order of ``classes_``) is the mean over
    trees of the sum, over the nodes on row i's path that split on feature k, of
    value(child) - value(node); bias is the mean root value. bias + contributions summed over
    features equals the forest's prediction (predict / predict_proba)."""
    view = _view(forest)
    X = _check_X(view, X)
    return _attribution(view, *_core.contributions(view.core, X, resolve_n_threads(n_jobs)))


@validate_params({**_ROWS_CONSTRAINTS, "background": ["array-like", "sparse matrix", None]},
                 prefer_skip_nested_validation=True)
def shap_values(forest, X, *, background=None, n_jobs=None):
    """Exact TreeSHAP values of the forest's mean prediction (Lundberg et al. 2020).

    background=None: path-dependent TreeSHAP (their Algorithm 2): unknown features are averaged
    over each split's children by the node covers (weighted training rows), as shap's
    ``TreeExplainer(forest)``. background given (rows like X): interventional TreeSHAP (their
    Algorithm 3), the Shapley values of v(S) = mean over the background rows r of f(x_S, r_rest), as
    ``TreeExplainer(forest, data=background, feature_perturbation="interventional")``; cost
    proportional to the number of background rows (shap suggests 100 or so).
    Rows (and background rows) are routed as predict routes them (missing values by each split's
    missing_go_to_left).

    Returns (values, expected_value): values[i, k] (regression) or values[i, k, c] (classification,
    classes in the order of ``classes_``); expected_value is a float (regression) or (n_classes,):
    the cover-weighted mean leaf value, or the mean prediction over the background rows.
    expected_value + values summed over features equals predict / predict_proba. Results do not
    depend on n_jobs."""
    view = _view(forest)
    X = _check_X(view, X)
    if background is None:
        return _attribution(view, *_core.shap_values(view.core, X, resolve_n_threads(n_jobs)))
    try:
        background = _check_X(view, background)
    except ValueError as error:  # the messages (and their "X: " prefix) call every array X
        message = str(error).removeprefix("X: ").replace("Input X", "background").replace("X has", "background has")
        raise ValueError(f"background: {message}") from None
    return _attribution(view, *_core.shap_values_interventional(view.core, X, background, resolve_n_threads(n_jobs)))


@validate_params(_ROWS_CONSTRAINTS, prefer_skip_nested_validation=True)
def shap_interaction_values(forest, X, *, n_jobs=None):
    """SHAP interaction values (Lundberg et al. 2020, Section 4.2) of the path-dependent TreeSHAP
    of :func:`shap_values`: (n, p, p) for regression, (n, p, p, n_classes) for classification.
    Off the diagonal [i, a, b] = [i, b, a] is half the Shapley interaction index of features a and
    b; the diagonal holds the main effects, so [i, a, :] sums to shap_values[i, a]. Memory is
    n * p * p values (beyond the machine's memory, :class:`pyinterp.OutputTooLarge` before any work;
    only the entries the trees reach are written, the rest staying the system's untouched zero
    pages): for large p see :func:`shap_interaction_importance` and :func:`shap_top_interactions`."""
    view = _view(forest)
    X = _check_X(view, X)
    p, n_values = view.core.n_features, 1 if view.classes is None else len(view.classes)
    check_output_size(f"X's {X.shape[0]} rows x {p} x {p} features' interaction values"
                      + (f" x {n_values} classes" if n_values > 1 else ""), X.shape[0] * p * p * n_values * 8,
                      "explain fewer rows at a time, or use shap_interaction_importance / shap_top_interactions, "
                      "which never hold the p x p tensor")
    return _per_output(view, _core.shap_interaction_values(view.core, X, resolve_n_threads(n_jobs)))


@validate_params(_ROWS_CONSTRAINTS, prefer_skip_nested_validation=True)
def shap_interaction_importance(forest, X, *, n_jobs=None):
    """The mean over the rows of X of |SHAP interaction value| per pair of features (main effects
    on the diagonal), as a scipy.sparse CSR array (p, p) -- one per class, in a list, for
    classification -- holding only the pairs that share a tree. Computed row by row: memory grows
    with the pairs, never with n * p * p."""
    view = _view(forest)
    X = _check_X(view, X)
    a, b, mean_abs = _core.shap_interaction_mean_abs(view.core, X, resolve_n_threads(n_jobs))
    p = view.core.n_features
    arrays = [sparse.csr_array((mean_abs[:, c], (a, b)), shape=(p, p)) for c in range(mean_abs.shape[1])]
    return arrays[0] if view.classes is None else arrays


@validate_params({**_ROWS_CONSTRAINTS, "k": [IntInterval(Integral, 1, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def shap_top_interactions(forest, X, k=10, *, n_jobs=None):
    """Each row's k strongest SHAP interactions, without the p x p per-row tensor: the entries
    [i, a, b] (a < b) of :func:`shap_interaction_values` of largest |value|, ties (and the pairs of
    value 0 that fill a row with fewer than k nonzero pairs) in (a, b) order. Memory: the output
    and, per thread, the pairs of features that share a tree.

    Returns (pairs, values): pairs (n, k, 2) int32 feature indices (a < b) and values (n, k) for
    regression; for classification ranked per class, pairs (n, k, 2, n_classes) and values
    (n, k, n_classes), classes in the order of ``classes_``."""
    view = _view(forest)
    X = _check_X(view, X)
    p = view.core.n_features
    if k > p * (p - 1) // 2:
        raise ValueError(f"k must be at most p (p - 1) / 2 = {p * (p - 1) // 2} (the pairs of {p} features), got {k}")
    pairs, values = _core.shap_interaction_top_k(view.core, X, k, resolve_n_threads(n_jobs))
    return _per_output(view, pairs.transpose(0, 2, 3, 1)), _per_output(view, values.transpose(0, 2, 1))


_SPLITS = {"best": _core.StumpSplit.best, "median": _core.StumpSplit.median}
_SIDES = {"sum": _core.StumpSide.sum, "left": _core.StumpSide.left, "max": _core.StumpSide.max}


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "split": [StrOptions(set(_SPLITS))],
        "side": [StrOptions(set(_SIDES))],
        "sample_weight": ["array-like", None],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def dstump(X, y, *, split="best", side="sum", sample_weight=None, n_jobs=None):
    """DSTUMP feature scores (Kazemitabar et al. 2017): one regression stump per feature, fitted
    on that feature alone over the rows where it is observed (missing values, NaN, are left out
    of that feature's stump).

    split: "best" (the CART split) or "median" (the boundary between tie runs nearest to half the
    total weight; n // 2 rows on the left for distinct values and unit weights).
    side: "sum" (CART impurity decrease of the split), "left" (minus the ddof-1 variance of the
    left part: with split="median" this is the paper's analysed estimator) or "max" (minus the
    larger of the two parts' variances).

    Returns a Bunch: ``scores`` (higher = more important; -inf for a feature with no admissible
    split), ``ranking`` (feature indices by decreasing score, ties by index), ``threshold``,
    ``impurity_decrease``, ``sign`` (of mean(right) - mean(left)), ``n_left``, and ``select(s)``,
    the top s features. y is a real response; a 0/1 class indicator gives the Gini stump.
    """
    check_exact_integers(X)
    X = check_array(X, **FOREST_FIT_X, ensure_min_samples=2, input_name="X")
    warn_missing_call_code(X)
    if np.ndim(y) != 1:
        raise ValueError(f"y must be 1-d, got shape {np.shape(y)}")
    y = regression_target(y)
    check_consistent_length(X, y)
    if sample_weight is not None:
        sample_weight = scaled_weights(check_sample_weight(sample_weight, X, dtype=np.float64,
                                                            ensure_non_negative=True))
    X = core_X(X, by_columns=True)
    exponent = extreme_exponent(y)  # stumps of y scaled by a power of two are y's; no square overflows
    table = _core.dstump(X, np.ldexp(y, -exponent), sample_weight, _SPLITS[split], _SIDES[side],
                         resolve_n_threads(n_jobs))
    unsplit = np.flatnonzero(np.isneginf(table["score"]))
    if len(unsplit):
        warnings.warn(f"dstump: {len(unsplit)} of {len(table['score'])} features have no admissible split (constant, "
                      f"or observed on too few rows; columns {unsplit[:8].tolist()}{' ...' if len(unsplit) > 8 else ''}): "
                      "their score is -inf, ranked last", UserWarning, stacklevel=3)
    # ranked before scaling back, where scores that underflow to 0 in y's units still differ
    ranking = np.lexsort((np.arange(len(table["score"])), -table["score"]))
    scores, decrease = _unscaled_squares(table["score"], exponent), _unscaled_squares(table["impurity_decrease"],
                                                                                       exponent)
    return Bunch(
        scores=scores,
        ranking=ranking,
        threshold=table["threshold"],
        impurity_decrease=decrease,
        sign=table["sign"],
        n_left=table["n_left"],
        select=functools.partial(_top, ranking),  # a partial, not a lambda: the result pickles
    )


def _top(ranking, s):
    return ranking[: check_int("s", s, 0, len(ranking))]


def _unscaled_squares(values, exponent):
    """Values in units of y^2 computed on y * 2^-exponent, scaled back (correctly rounded: tiny ones
    may become 0); an error where they overflow."""
    if not exponent:
        return values
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(values, 2 * exponent)
    if np.any(np.isfinite(values) & ~np.isfinite(out)):
        raise ValueError(f"DSTUMP's scores are in units of y^2 and overflow float64 for this y (|y| up to "
                         f"2^{exponent}); rescale y: the ranking does not depend on its scale")
    return out


@validate_params({"values": ["array-like"], "feature_groups": ["array-like"]}, prefer_skip_nested_validation=True)
def group(values, feature_groups):
    """Importances summed per feature group (e.g. the probes or SNPs of each gene).

    values: any measure of this module per feature, (p,), or contributions, (n, p) or (n, p, C)
    (features on axis 1). feature_groups: one group name per feature, as LSSFind, iRF and the
    signed-path functions take it. Returns a Bunch: ``names`` (the groups in order of first
    appearance) and ``values`` with the feature axis replaced by the groups (sums in column order).
    """
    values = np.asarray(values, dtype=np.float64)
    axis = 0 if values.ndim == 1 else 1
    groups = check_feature_groups(feature_groups, values.shape[axis])
    missing = np.flatnonzero(np.isnan(values).any(axis=tuple(a for a in range(values.ndim) if a != axis)))
    if len(missing):
        names = sorted({groups.names[g] for g in groups.index[missing]})
        warnings.warn(f"group: the values of {len(missing)} features are NaN (features {missing[:8].tolist()}"
                      f"{' ...' if len(missing) > 8 else ''}), so the sums of their groups are NaN: "
                      f"{', '.join(map(str, names[:8]))}{' ...' if len(names) > 8 else ''}", UserWarning, stacklevel=3)
    out = np.zeros(values.shape[:axis] + (len(groups.names),) + values.shape[axis + 1:])
    np.add.at(out, (slice(None),) * axis + (groups.index,), values)
    return GroupedValues(groups.names, out)
