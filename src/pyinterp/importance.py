"""Feature importance from one forest engine: MDI, MDI-oob, naive-oob, UFI, OOB permutation,
Saabas contributions, TreeSHAP values and interaction values, and DSTUMP.

Every forest-based function takes a fitted pyinterp forest or a fitted scikit-learn
``RandomForestRegressor`` / ``RandomForestClassifier`` of one output (``mdi`` also reads pyinterp
forests of several outputs, whose impurity is the mean of the outputs'; the others refuse them,
since each weighs one response per row, and so does every function for scikit-learn forests of
several outputs). For scikit-learn forests,
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
  out-of-bag mean mu': ``E'|y|^2 - <mu, mu'>``, i.e. 1 - sum_k p_k p'_k for classes (entropy forests:
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

import dataclasses
import functools
import warnings
from numbers import Integral
from typing import NamedTuple

import numpy as np
from scipy import sparse
from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions, validate_params

from . import _core
from ._groups import check_feature_groups
from ._progress import Progress
from ._distributed import chunks, cluster_threads, run_units
from ._seeds import root_seed
from ._validation import (INT32_MAX, FOREST_FIT_X, IntInterval, check_array, check_consistent_length,
                          check_exact_integers, check_int, check_output_size, check_sample_weight, core_X,
                          extreme_exponent, refuse_extreme_targets, regression_target, resolve_n_threads,
                          mapped_file, scaled_weights, warn_missing_call_code)
from ._column_map import concatenated, map_columns
from .forest.estimators import reads_split_columns
from .forest.feature_parallel import check_columns_X, is_feature_parallel
from .forest.split_columns import SplitColumns
from .forest.view import check_rows as _check_X
from .forest.view import forest_view as _view

__all__ = [
    "banzhaf_values",
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


def _oob_inputs(forest, X, y, sample_weight, in_place=False, leaves_serve=False, n_jobs=None, by_trees=False):
    """(view, X, targets, sample_weight, recorded) checked. A feature-parallel X is read as its
    split columns of all rows, the view's forest renumbered to them (_split_view: widen the
    measures' results); or, for a measure of the out-of-bag leaves alone (leaves_serve), not read
    at all when the fit recorded them, else read a run of rows at a time to record them
    (SplitColumns.out_of_bag), X then a zero of its shape standing in and recorded True; or, for
    a measure that reads its trees apart (by_trees), not read yet: X is its SplitColumns."""
    view = _view(forest, n_samples=X.shape[0] if hasattr(X, "shape") else len(X), in_place=in_place)
    recorded = False
    if reads_split_columns(view.estimator, X) and leaves_serve:
        X, recorded, columns = view.estimator._oob_leaves_X(X, "an out-of-bag measure", resolve_n_threads(n_jobs))
        view = _narrowed(view, columns)
    elif reads_split_columns(view.estimator, X) and by_trees:
        X = view.estimator._split_columns(X)
    elif reads_split_columns(view.estimator, X):
        view, columns = _split_view(view, X)
        X = columns.read_all("an out-of-bag measure")
    else:
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
    return view, X, targets, sample_weight, recorded


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
    view, X, targets, sample_weight, recorded = _oob_inputs(forest, X, y, sample_weight, in_place=True,
                                                            leaves_serve=True, n_jobs=n_jobs)
    mean, std, _ = _core.oob_importance(
        view.core, X, targets, sample_weight, measure, resolve_n_threads(n_jobs), recorded=recorded
    )
    return _result(*_widened(view, mean, std), return_std)


def _split_view(view, X, name="X"):
    """(view of the forest renumbered to the features it splits on, SplitColumns of X) for a
    feature-parallel X and a pyinterp forest."""
    columns = view.estimator._split_columns(X, name)
    return _narrowed(view, columns), columns


def _narrowed(view, columns):
    """The view of the forest renumbered to ``columns``' split features (None: the view itself)."""
    return view if columns is None else dataclasses.replace(view, core=columns.core, columns=columns)


def _widened(view, *values):
    """Per-feature results of a view narrowed by _split_view widened to X's columns (others as they are)."""
    return values if view.columns is None else tuple(view.columns.widen(v, axes=(0,)) for v in values)


@validate_params(_OOB_CONSTRAINTS, prefer_skip_nested_validation=True)
def mdi_oob(forest, X, y, *, sample_weight=None, return_std=False, n_jobs=None):
    """MDI-oob: the debiased mean decrease in impurity, measured on out-of-bag rows.

    For each tree T, the mean over its out-of-bag rows i of f_{T,k}(x_i) . y_i, where f_{T,k} is the
    Saabas contribution of feature k along row i's path (see :func:`contributions`) and y_i the
    response (one-hot for classes); then the mean over trees (thesis eq. 8.20). The same sum over
    the in-bag rows is the unnormalised MDI (thesis Proposition 8.2.1); taken over rows the tree did
    not see, it reduces MDI's bias toward features the trees split on by chance, which grows with
    the trees' depth.

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output. For a
        scikit-learn forest the out-of-bag rows are recovered the way scikit-learn does for ``oob_score_``
        (from each tree's ``random_state``); pyinterp forests and their ``to_sklearn()`` exports carry
        their in-bag counts.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training rows, in the order the forest was fitted on them: each tree's out-of-bag rows
        are found by position.
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`: not read
        when the fit recorded the out-of-bag leaves (``keep_oob_leaves=True``), else read at the
        columns the trees split on a run of rows at a time, to record the leaves (4 bytes per
        tree and row; all rows' split columns at once when they are fewer bytes:
        docs/user/cluster.md).
    y : array-like of shape (n_samples,)
        The training target: real values for a regressor, labels the forest was trained on for a
        classifier (one-hot encoded inside).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights of the out-of-bag rows in each tree's sums and means (rows of weight 0
        are left out); None weighs every row alike.
    return_std : bool, default=False
        Also return the standard error of the mean across trees.
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    importances : ndarray of shape (n_features,)
        The mean over trees of each tree's score of every feature (0 in a tree that does not split on
        it); trees with no out-of-bag row are left out of the mean.
    std : ndarray of shape (n_features,)
        Only with ``return_std=True``: the standard error of that mean, the standard deviation of the
        per-tree scores over the square root of the number of trees used (0 with fewer than two).

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If X is not the training rows (another number of rows), if the forest has no out-of-bag row
        (``bootstrap=False`` on all rows), if y holds labels the forest was not trained on, or if the
        forest has several outputs.

    See Also
    --------
    mdi : The in-bag mean decrease in impurity.
    ufi, naive_oob : Other out-of-bag corrections of MDI.
    permutation_oob : Out-of-bag permutation importance.

    Notes
    -----
    MDI-oob is from Li, Wang, Basu, Kumbier & Yu, "A Debiased MDI Feature Importance Measure for
    Random Forests", NeurIPS 2019, and Yu Wang's thesis (UC Berkeley 2020), ch. 8, eq. 8.20:
    MDI-oob of feature k = 1 / ``|OOB_T|`` sum over i in OOB_T of f_{T,k}(x_i) . y_i, averaged over trees.
    Here it is summed node by node: each split on k adds, over the out-of-bag rows of each child c,
    <mu(c) - mu(t), y_i>, divided by the tree's out-of-bag weight. The cost is about that of
    predicting each tree's out-of-bag rows.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import mdi_oob
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> importances, std = mdi_oob(forest, X, y, return_std=True)
    >>> np.round(importances, 3).tolist()
    [3.67, 0.564, -0.016, 0.02]
    >>> np.round(std, 3).tolist()
    [0.106, 0.062, 0.019, 0.019]

    A scikit-learn forest is read the same way, its out-of-bag rows drawn again from its trees' seeds:

    >>> from sklearn.ensemble import RandomForestRegressor as SklearnForest
    >>> sklearn_forest = SklearnForest(n_estimators=20, random_state=0).fit(X, y)
    >>> np.round(mdi_oob(sklearn_forest, X, y), 3).tolist()
    [3.635, 0.62, 0.004, -0.025]
    """
    return _oob_measure(_core.OobMeasure.mdi_oob, forest, X, y, sample_weight, return_std, n_jobs)


@validate_params(_OOB_CONSTRAINTS, prefer_skip_nested_validation=True)
def naive_oob(forest, X, y, *, sample_weight=None, return_std=False, n_jobs=None):
    """Naive-oob: node impurity decreases recomputed on each tree's out-of-bag rows.

    Each split t of the tree on feature k scores (W_t I_t - W_l I_l - W_r I_r) / W_root, where W is
    the out-of-bag weight reaching a node and I the impurity of those out-of-bag rows (the forest's
    criterion: variance, Gini or entropy); a tree's score of k is the sum over its splits on k, and
    the result the mean over trees. A split with no out-of-bag row on one side contributes nothing.

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output. For a
        scikit-learn forest the out-of-bag rows are recovered the way scikit-learn does for ``oob_score_``
        (from each tree's ``random_state``); pyinterp forests and their ``to_sklearn()`` exports carry
        their in-bag counts.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training rows, in the order the forest was fitted on them: each tree's out-of-bag rows
        are found by position.
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`: not read
        when the fit recorded the out-of-bag leaves (``keep_oob_leaves=True``), else read at the
        columns the trees split on a run of rows at a time, to record the leaves (4 bytes per
        tree and row; all rows' split columns at once when they are fewer bytes:
        docs/user/cluster.md).
    y : array-like of shape (n_samples,)
        The training target: real values for a regressor, labels the forest was trained on for a
        classifier (one-hot encoded inside).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights of the out-of-bag rows in each tree's sums and means (rows of weight 0
        are left out); None weighs every row alike.
    return_std : bool, default=False
        Also return the standard error of the mean across trees.
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    importances : ndarray of shape (n_features,)
        The mean over trees of each tree's score of every feature (0 in a tree that does not split on
        it); trees with no out-of-bag row are left out of the mean.
    std : ndarray of shape (n_features,)
        Only with ``return_std=True``: the standard error of that mean, the standard deviation of the
        per-tree scores over the square root of the number of trees used (0 with fewer than two).

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If X is not the training rows (another number of rows), if the forest has no out-of-bag row
        (``bootstrap=False`` on all rows), if y holds labels the forest was not trained on, or if the
        forest has several outputs.

    See Also
    --------
    mdi_oob : The debiased MDI this baseline is compared with.
    ufi : Zhou & Hooker's mixed in-bag / out-of-bag impurity.

    Notes
    -----
    This is the "naive-oob" baseline of Li, Wang, Basu, Kumbier & Yu, "A Debiased MDI Feature
    Importance Measure for Random Forests", NeurIPS 2019 (Yu Wang's thesis, UC Berkeley 2020,
    section 8.2): an impurity decrease on out-of-bag rows is still positive unless their responses
    are constant in the node, so features without effect keep a positive score in deep trees.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import naive_oob
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> np.round(naive_oob(forest, X, y), 3).tolist()
    [3.689, 0.801, 0.054, 0.073]
    """
    return _oob_measure(_core.OobMeasure.naive_oob, forest, X, y, sample_weight, return_std, n_jobs)


@validate_params(_OOB_CONSTRAINTS, prefer_skip_nested_validation=True)
def ufi(forest, X, y, *, sample_weight=None, return_std=False, n_jobs=None):
    """UFI: Zhou & Hooker's unbiased feature importance, from an in-bag / out-of-bag mixed impurity.

    Each split t of the tree on feature k scores (N_t I'_t - N_l I'_l - N_r I'_r) / N_root, with N the
    in-bag node mass and I' an impurity that mixes the in-bag node value mu with the out-of-bag mean
    mu': ``E'|y|^2 - <mu, mu'>`` (E' the out-of-bag mean), which is 1 - sum_c p_c p'_c for classes
    (forests grown with entropy: the symmetrised cross-entropy). A tree's score of k is the sum over
    its splits on k, the result the mean over trees; a split with no out-of-bag row on one side
    contributes nothing.

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output. For a
        scikit-learn forest the out-of-bag rows are recovered the way scikit-learn does for ``oob_score_``
        (from each tree's ``random_state``); pyinterp forests and their ``to_sklearn()`` exports carry
        their in-bag counts.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training rows, in the order the forest was fitted on them: each tree's out-of-bag rows
        are found by position.
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`: not read
        when the fit recorded the out-of-bag leaves (``keep_oob_leaves=True``), else read at the
        columns the trees split on a run of rows at a time, to record the leaves (4 bytes per
        tree and row; all rows' split columns at once when they are fewer bytes:
        docs/user/cluster.md).
    y : array-like of shape (n_samples,)
        The training target: real values for a regressor, labels the forest was trained on for a
        classifier (one-hot encoded inside).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights of the out-of-bag rows in each tree's sums and means (rows of weight 0
        are left out); None weighs every row alike.
    return_std : bool, default=False
        Also return the standard error of the mean across trees.
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    importances : ndarray of shape (n_features,)
        The mean over trees of each tree's score of every feature (0 in a tree that does not split on
        it); trees with no out-of-bag row are left out of the mean.
    std : ndarray of shape (n_features,)
        Only with ``return_std=True``: the standard error of that mean, the standard deviation of the
        per-tree scores over the square root of the number of trees used (0 with fewer than two).

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If X is not the training rows (another number of rows), if the forest has no out-of-bag row
        (``bootstrap=False`` on all rows), if y holds labels the forest was not trained on, or if the
        forest has several outputs.

    See Also
    --------
    mdi_oob : The debiased MDI of Li et al.
    naive_oob : Impurity decreases on out-of-bag rows alone.

    Notes
    -----
    From Zhou & Hooker, "Unbiased Measurement of Feature Importance in Tree-Based Methods", ACM
    Transactions on Knowledge Discovery from Data 15(2), 2021 (arXiv:1903.05179). The class form is
    their modified Gini impurity; the squared-error form is its analogue for a real y (one-hot
    targets give back the Gini form), not a formula quoted from their paper.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import ufi
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> np.round(ufi(forest, X, y), 3).tolist()
    [3.716, 0.645, 0.023, -0.032]

    For classes y holds the labels:

    >>> from pyinterp import RandomForestClassifier
    >>> labels = np.where(X[:, 0] + 0.5 * rng.standard_normal(200) > 0, "case", "control")
    >>> classifier = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, labels)
    >>> np.round(ufi(classifier, X, labels), 3).tolist()
    [0.299, 0.019, -0.006, -0.009]
    """
    return _oob_measure(_core.OobMeasure.ufi, forest, X, y, sample_weight, return_std, n_jobs)


@validate_params(
    {**_OOB_CONSTRAINTS, "n_repeats": [IntInterval(Integral, 1, INT32_MAX, closed="both")],
     "random_state": ["random_state"], "verbose": ["verbose"]},
    prefer_skip_nested_validation=True,
)
def permutation_oob(forest, X, y, *, n_repeats=5, random_state=None, sample_weight=None, return_std=False,
                    n_jobs=None, verbose=0):
    """Out-of-bag permutation importance (mean decrease in accuracy).

    Per tree and feature k, the increase of the tree's out-of-bag loss (squared error, or the
    misclassification rate for classes, weighted by ``sample_weight``) when k is permuted among that
    tree's out-of-bag rows, averaged over ``n_repeats`` permutations; then the mean over trees. Only
    the features a tree splits on can change its predictions: the others score 0 in that tree.

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output. For a
        scikit-learn forest the out-of-bag rows are recovered the way scikit-learn does for ``oob_score_``
        (from each tree's ``random_state``); pyinterp forests and their ``to_sklearn()`` exports carry
        their in-bag counts.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The training rows, in the order the forest was fitted on them: each tree's out-of-bag rows
        are found by position. For a pyinterp forest also a dask array or
        :class:`~pyinterp.io.ColumnFiles`, read at the columns the trees split on, for runs of
        trees whose columns of all rows take at most a quarter of this machine's memory at a time
        (docs/user/cluster.md).
    y : array-like of shape (n_samples,)
        The training target: real values for a regressor, labels the forest was trained on for a
        classifier.
    n_repeats : int, default=5
        Permutations of each feature in each tree; their mean increase is the tree's score.
    random_state : int, RandomState instance or None, default=None
        Seeds the permutations (each tree draws its own stream from it). Results depend only on it,
        not on ``n_jobs`` nor on whether the trees are scored on a cluster.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights of the out-of-bag rows in each tree's loss (rows of weight 0 are left
        out); None weighs every row alike.
    return_std : bool, default=False
        Also return the standard error of the mean across trees.
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores).
    verbose : int or bool, default=0
        0 says nothing; 1 or more reports the trees as they are scored (on a cluster, when they are
        back): a tqdm bar on stderr when tqdm is installed, else a line every few seconds; each report
        also goes to the ``pyinterp`` logger.

    Returns
    -------
    importances : ndarray of shape (n_features,)
        The mean over trees of each tree's score (0 in a tree that does not split on the feature);
        trees with no out-of-bag row are left out of the mean. It can be negative.
    std : ndarray of shape (n_features,)
        Only with ``return_std=True``: the standard error of that mean, the standard deviation of the
        per-tree scores over the square root of the number of trees used (0 with fewer than two).

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If X is not the training rows (another number of rows), if the forest has no out-of-bag row
        (``bootstrap=False`` on all rows), if y holds labels the forest was not trained on, or if the
        forest has several outputs.

    See Also
    --------
    mdi_oob : The debiased MDI, with no permutations to draw.
    pyinterp.significance.importance_pvalues : Tests of permutation importances, with p-values.

    Notes
    -----
    The permutation importance of Breiman, "Random Forests", Machine Learning 45 (2001), computed tree
    by tree on each tree's out-of-bag rows. Permuting k moves only the out-of-bag rows whose path
    splits on k, so only those are routed again.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import permutation_oob
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> importances, std = permutation_oob(forest, X, y, random_state=0, return_std=True)
    >>> np.round(importances, 3).tolist()
    [7.008, 1.392, -0.002, -0.0]
    >>> np.round(std, 3).tolist()
    [0.228, 0.068, 0.009, 0.012]
    """
    view, X, targets, sample_weight, _ = _oob_inputs(forest, X, y, sample_weight, by_trees=True)
    seed = root_seed(random_state)
    threads = cluster_threads()
    # The trees as forests with their X: the whole; or, of a feature-parallel X, runs of trees
    # whose split columns of all rows fit, cut from it and read in turn (each tree still draws
    # from its own stream, at its place in the whole forest).
    pieces = X.by_trees("permutation importance") if isinstance(X, SplitColumns) else [(0, view.core, X, None)]
    parts = []
    # On a cluster the trees are scored elsewhere: the report comes when they are back.
    with Progress(verbose, view.core.n_trees, "trees", core=True) as progress:
        for offset, core, values, features in pieces:
            if threads:  # chunks of trees on the workers; per-tree scores reduced here in tree order
                scored = list(run_units(_core.permutation_tree_scores,
                                        (core, values, targets, sample_weight, n_repeats, seed),
                                        [(*chunk, 1, False, offset) for chunk in chunks(core.n_trees, threads)],
                                        in_place=(values,)))
                progress.update(core.n_trees)
            else:
                scored = [_core.permutation_tree_scores(core, values, targets, sample_weight, n_repeats, seed, 0,
                                                        core.n_trees, resolve_n_threads(n_jobs), stream_offset=offset)]
            # a cut forest's features are its split columns' places: back to X's
            parts += scored if features is None else [(i, features[f].astype(np.int32), s, u) for i, f, s, u in scored]
    mean, std, _ = _core.reduce_tree_scores(*_concatenate_csr(parts), view.core.n_features)
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
    """Mean decrease in impurity (MDI), from the impurity decreases the trees recorded at fit time.

    With ``normalize=True``, scikit-learn's convention: each tree's importances sum to one
    (single-node trees are skipped) and their mean is renormalised to sum to one, which equals
    ``feature_importances_``. With ``normalize=False``, the mean over trees of the sum, over the
    nodes t split on the feature, of the node-mass-weighted impurity decrease
    (N_t I_t - N_l I_l - N_r I_r) / N_root (thesis eq. 8.4), in the units of the impurity
    (variance of y for regression).

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``. Unlike the other
        measures of this module, pyinterp forests of several outputs are read too (their node
        impurity is the mean of the outputs'); scikit-learn forests of several outputs are refused.
    normalize : bool, default=True
        Whether to normalise as scikit-learn does (see above).

    Returns
    -------
    ndarray of shape (n_features,)
        The mean decrease in impurity of each feature; with ``normalize=True`` they sum to one (all
        zero when no tree splits).

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If a scikit-learn forest has several outputs, or if a tree has splits but a root impurity that
        is not finite and positive: the forest was fitted on a y whose squares are beyond float64 (max
        abs(y) above about 1e154 or below about 1e-154), so its impurity decreases are inf or 0; refit
        on a rescaled y, as MDI does not depend on its scale.

    See Also
    --------
    mdi_oob : MDI measured on out-of-bag rows, with less bias toward features split on by chance.

    Notes
    -----
    MDI is the importance of Breiman, Friedman, Olshen & Stone, "Classification and Regression
    Trees" (1984), as random forests report it. Yu Wang's thesis (UC Berkeley 2020, ch. 8; Li, Wang,
    Basu, Kumbier & Yu, NeurIPS 2019) bounds its bias toward features without effect, which grows
    with the trees' depth; :func:`mdi_oob` reduces it. Reading the recorded decreases costs one pass
    over the nodes.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import mdi
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> np.round(mdi(forest), 3).tolist()
    [0.81, 0.17, 0.008, 0.012]
    >>> bool(np.allclose(mdi(forest), forest.feature_importances_))
    True
    >>> np.round(mdi(forest, normalize=False), 3).tolist()
    [3.927, 0.815, 0.037, 0.06]
    """
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
    """Saabas decomposition of the forest's predictions into a bias and one contribution per feature.

    Along row i's path in a tree, each split on feature k moves the prediction from value(node) to
    value(child); the contribution of k is the sum of those moves, averaged over trees, and the bias
    is the mean root value. So bias + the contributions summed over features equals the forest's
    prediction (``predict``, or ``predict_proba`` for classes).

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows to explain (any rows, with the forest's training columns), routed as ``predict``
        routes them (missing values by each split's ``missing_go_to_left``).
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`, read at
        the columns the trees split on, a run of rows at a time (docs/user/cluster.md).
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    contributions : ndarray of shape (n_samples, n_features) or (n_samples, n_features, n_classes)
        ``contributions[i, k]`` (regression) or ``contributions[i, k, c]`` (classification, classes
        in the order of ``classes_``): the mean over trees of the sum, over the nodes on row i's path
        that split on feature k, of value(child) - value(node).
    bias : float or ndarray of shape (n_classes,)
        The mean over trees of the root value: a float for regression, the class fractions for
        classification.

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If X does not have the forest's training columns, or if the forest has several outputs.

    See Also
    --------
    shap_values : Shapley values of the same predictions, which share credit among the features
        of a path.
    mdi_oob : An importance built from these contributions on out-of-bag rows.

    Notes
    -----
    From Saabas, "Interpreting random forests" (2014, the ``treeinterpreter`` package). Yu Wang's
    thesis (UC Berkeley 2020, ch. 8) writes MDI through these functions f_{T,k}: the in-bag MDI of
    feature k is the mean of f_{T,k}(x_i) . y_i over the tree's in-bag rows, which
    :func:`mdi_oob` takes over its out-of-bag rows instead. The cost is one walk of each row down
    each tree.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import contributions
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> contrib, bias = contributions(forest, X[:3])
    >>> contrib.shape, round(bias, 3)
    ((3, 4), -0.12)
    >>> np.round(contrib[0], 3).tolist()
    [0.191, 0.047, 0.061, 0.02]
    >>> bool(np.allclose(bias + contrib.sum(axis=1), forest.predict(X[:3])))
    True
    """
    view, X = _rows_view(forest, X)
    threads = resolve_n_threads(n_jobs)
    if view.columns is None:
        return _attribution(view, *_core.contributions(view.core, X, threads))
    values, (bias,) = view.columns.gather(lambda rows: _core.contributions(view.core, rows, threads))
    return _attribution(view, values, bias)


_BACKGROUND_CONSTRAINTS = {**_ROWS_CONSTRAINTS, "background": ["array-like", "sparse matrix", None],
                           "algorithm": [StrOptions({"auto", "patterns", "walk"})]}


def _check_background(view, background):
    """background checked as X is (the messages name it), or None (path-dependent); for a view
    narrowed to a feature-parallel X's split columns (_split_view), their columns of background
    (itself feature-parallel, or rows in memory)."""
    if background is None:
        return None
    if view.columns is not None:
        if is_feature_parallel(background):  # a pyinterp forest (view.columns)
            return view.estimator._split_columns(background, "background").read_all("background")
        wide = dataclasses.replace(view, core=view.estimator._forest, columns=None)
        background = _check_background(wide, background)
        return core_X(background[:, view.columns.features] if len(view.columns.features) else
                      np.zeros((background.shape[0], 1), dtype=np.float32))
    try:
        return _check_X(view, background)
    except ValueError as error:  # the messages (and their "X: " prefix) call every array X
        message = str(error).removeprefix("X: ").replace("Input X", "background").replace("X has", "background has")
        raise ValueError(f"background: {message}") from None


def _values(forest, X, background, algorithm, n_jobs, banzhaf):
    view, X = _rows_view(forest, X)
    background = _check_background(view, background)
    threads = resolve_n_threads(n_jobs)

    def values(rows):
        if background is None:
            return _core.shap_values(view.core, rows, threads, banzhaf, algorithm)
        return _core.shap_values_interventional(view.core, rows, background, threads, banzhaf, algorithm)

    if view.columns is None:
        return _attribution(view, *values(X))
    values, (base,) = view.columns.gather(values)
    return _attribution(view, values, base)


def _rows_view(forest, X):
    """(view, X): X checked against the forest; a feature-parallel X as (the view narrowed to
    its split columns, their SplitColumns: view.columns), whose runs of rows the caller reads."""
    view = _view(forest)
    if reads_split_columns(view.estimator, X):
        return _split_view(view, X)
    return view, _check_X(view, X)


@validate_params(_BACKGROUND_CONSTRAINTS, prefer_skip_nested_validation=True)
def shap_values(forest, X, *, background=None, algorithm="auto", n_jobs=None):
    """Exact TreeSHAP values of the forest's mean prediction.

    With ``background=None``, path-dependent TreeSHAP (Lundberg et al. 2020, Algorithm 2): a feature
    outside the coalition is averaged over each split's children by the node covers (weighted
    training rows), as shap's ``TreeExplainer(forest)`` does. With ``background`` rows,
    interventional TreeSHAP (their Algorithm 3): the Shapley values of v(S) = the mean over the
    background rows r of f(x_S, r_rest), as ``TreeExplainer(forest, data=background,
    feature_perturbation="interventional")``. Against n rows and m background rows, each tree is read
    either as leaf pattern tables, in time proportional to n + m, or by a walk of every pair, in time
    proportional to n * m, whichever the tree's shape makes cheaper (``algorithm``). expected_value
    + values summed over features equals ``predict`` (``predict_proba`` for classes).

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows to explain (any rows, with the forest's training columns), routed as ``predict``
        routes them (missing values by each split's ``missing_go_to_left``).
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`, read at
        the columns the trees split on, a run of rows at a time (docs/user/cluster.md).
    background : {array-like, sparse matrix} of shape (n_background, n_features), default=None
        Rows like X (routed as ``predict`` routes them) that stand for the features left out of a
        coalition: interventional TreeSHAP. None: path-dependent TreeSHAP.
        With a dask array or ColumnFiles X, rows in memory or of the same kind.
    algorithm : {"auto", "patterns", "walk"}, default="auto"
        How each tree is read; the values agree to rounding. "patterns": a row's pattern at every
        leaf (which of the leaf path's distinct features it follows) and, per leaf, a table over
        patterns built once (from the background rows, or from the covers without them): 2^d x d
        values for d distinct features on the leaf's path, at most 14. "walk": each row walks the
        tree (with the background rows, grouped where they take the same children). "auto": per
        tree, the one of less work for these row counts, so a row's values can differ in the last
        bits with the number of rows in the call (never with ``n_jobs``).
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    values : ndarray of shape (n_samples, n_features) or (n_samples, n_features, n_classes)
        ``values[i, k]`` (regression) or ``values[i, k, c]`` (classification, classes in the order of
        ``classes_``): the Shapley value of feature k in row i's prediction.
    expected_value : float or ndarray of shape (n_classes,)
        The cover-weighted mean leaf value (path-dependent), or the mean prediction over the
        background rows (interventional): a float for regression.

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If X or ``background`` does not have the forest's training columns, if the forest has
        several outputs, or if ``algorithm`` is "patterns" and a leaf's path has more than 14
        distinct features.

    See Also
    --------
    contributions : The Saabas decomposition, which credits each split to its own feature.
    shap_interaction_values : The pairwise SHAP interaction values.
    banzhaf_values : Banzhaf values of the same games.

    Notes
    -----
    From Lundberg, Erion, Chen, DeGrave, Prutkin, Nair, Katz, Himmelfarb, Bansal & Lee, "From local
    explanations to global understanding with explainable AI for trees", Nature Machine Intelligence
    2 (2020). The values are exact, not sampled; the cost grows with the trees' depth. Reading a
    tree's background once per leaf pattern, so that a row's cost does not grow with the background,
    is the idea of Nadel & Wettenstein's WOODELF and of PLTreeSHAP; the tables here are pyinterp's own
    (docs/dev/treeshap.md). The first call on a forest keeps what it derived from the trees alone
    with the forest (each tree's summary, and up to 32 MB of path-dependent leaf tables), so later
    calls on it, a few rows at a time included, skip that work; the values do not change.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import shap_values
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> values, expected_value = shap_values(forest, X[:3])
    >>> values.shape, round(expected_value, 3)
    ((3, 4), -0.12)
    >>> bool(np.allclose(expected_value + values.sum(axis=1), forest.predict(X[:3])))
    True

    Against background rows, the expected value is their mean prediction:

    >>> values, expected_value = shap_values(forest, X[:3], background=X[:50])
    >>> round(expected_value, 3), round(float(forest.predict(X[:50]).mean()), 3)
    (0.092, 0.092)
    """
    return _values(forest, X, background, algorithm, n_jobs, banzhaf=False)


@validate_params(_BACKGROUND_CONSTRAINTS, prefer_skip_nested_validation=True)
def banzhaf_values(forest, X, *, background=None, algorithm="auto", n_jobs=None):
    """Exact Banzhaf values of the forest's mean prediction, path-dependent or against background rows.

    The games are those of :func:`shap_values`; a feature's Banzhaf value is its marginal
    contribution v(S + i) - v(S) averaged over all 2^(p-1) coalitions S of the other features with
    equal weight, where its Shapley value weights each coalition size equally. Banzhaf values are not
    efficient: a row's values need not sum to its prediction minus ``expected_value``. Among the
    semivalues, Banzhaf's is the most robust to noise in the game's values (Wang & Jia, "Data
    Banzhaf", AISTATS 2023).

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows to explain, routed as ``predict`` routes them.
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`, read at
        the columns the trees split on, a run of rows at a time (docs/user/cluster.md).
    background : {array-like, sparse matrix} of shape (n_background, n_features), default=None
        Rows that stand for the features left out of a coalition (interventional, as in
        :func:`shap_values`). None: path-dependent (the features left out are averaged over each
        split's children by the node covers).
    algorithm : {"auto", "patterns", "walk"}, default="auto"
        How each tree is read, as in :func:`shap_values`.
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    values : ndarray of shape (n_samples, n_features) or (n_samples, n_features, n_classes)
        ``values[i, k]`` (``values[i, k, c]`` for class c): the Banzhaf value of feature k in row i.
    expected_value : float or ndarray of shape (n_classes,)
        v of the empty coalition: the cover-weighted mean leaf value (path-dependent), or the mean
        prediction over the background rows.

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        As :func:`shap_values`.

    See Also
    --------
    shap_values : The Shapley values of the same games.

    Notes
    -----
    Banzhaf, "Weighted voting doesn't work", Rutgers Law Review 19 (1965). Path-dependent: for a leaf
    whose path has features with cover shares z_j and row agreement o_j, the Shapley value is the
    integral over t in [0, 1] of a product of factors o_j t + z_j (1 - t), and the Banzhaf value is
    that integrand at t = 1/2, so both come from the same walk. Against background rows: a leaf's
    game against one background row is gained exactly by the coalitions that hold the U features
    only x satisfies and none of the V only the background row satisfies, giving each of them
    +-v / 2^(U + V - 1). As with :func:`shap_values`, what the first call derives from the trees
    alone is kept with the forest for later calls (up to 32 MB of leaf tables).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import banzhaf_values
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> values, expected_value = banzhaf_values(forest, X[:3], background=X[:50])
    >>> values.shape, round(expected_value, 3)
    ((3, 4), 0.092)
    >>> int(np.argmax(np.abs(values).mean(axis=0)))
    0
    """
    return _values(forest, X, background, algorithm, n_jobs, banzhaf=True)


@validate_params(_BACKGROUND_CONSTRAINTS, prefer_skip_nested_validation=True)
def shap_interaction_values(forest, X, *, background=None, algorithm="auto", n_jobs=None):
    """SHAP interaction values of :func:`shap_values`, path-dependent or against background rows.

    Off the diagonal, ``[i, a, b] = [i, b, a]`` is half the Shapley interaction index of features a
    and b in row i's prediction; the diagonal holds the main effects, so ``[i, a, :]`` sums to
    ``shap_values(forest, X, background=background)[0][i, a]``. Memory is n * p * p values: beyond the machine's memory,
    :class:`~pyinterp.OutputTooLarge` is raised before any work; only the entries the trees reach
    are written, the rest staying the system's untouched zero pages. For large p see
    :func:`shap_interaction_importance` and :func:`shap_top_interactions`, which never hold the
    p x p tensor.

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows to explain (any rows, with the forest's training columns), routed as ``predict``
        routes them (missing values by each split's ``missing_go_to_left``).
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`, read at
        the columns the trees split on, a run of rows at a time (docs/user/cluster.md).
    background : {array-like, sparse matrix} of shape (n_background, n_features), default=None
        Rows that stand for the features left out of a coalition (interventional, as in
        :func:`shap_values`). None: path-dependent.
    algorithm : {"auto", "patterns", "walk"}, default="auto"
        How each tree is read against background rows, as in :func:`shap_values`; a leaf's pattern
        table holds its d x d interaction values per pattern. Without background rows the trees are
        walked ("patterns" is refused).
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    ndarray of shape (n_samples, n_features, n_features) or (n_samples, n_features, n_features, n_classes)
        The SHAP interaction values, the last axis the classes (in the order of ``classes_``) for
        classification.

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If X or ``background`` does not have the forest's training columns, if the forest has
        several outputs, or for ``algorithm`` as in :func:`shap_values`.
    pyinterp.OutputTooLarge
        If the n * p * p (* n_classes) values would not fit in the machine's memory: explain fewer
        rows at a time, or use :func:`shap_interaction_importance` or :func:`shap_top_interactions`.

    See Also
    --------
    shap_values : The SHAP values these split into pairs.
    shap_interaction_importance : Their mean absolute value per pair, without the tensor.
    shap_top_interactions : Each row's strongest pairs, without the tensor.

    Notes
    -----
    From Lundberg, Erion, Chen, DeGrave, Prutkin, Nair, Katz, Himmelfarb, Bansal & Lee, "From local
    explanations to global understanding with explainable AI for trees", Nature Machine Intelligence
    2 (2020), Section 4.2 (SHAP interaction values, from the Shapley interaction index). Against
    background rows, the games are those of their Algorithm 3; each leaf's game against one
    background row has one coalition where a pair's interaction is not zero, which gives the index
    in closed form (docs/dev/treeshap.md).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import shap_interaction_values
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> interactions = shap_interaction_values(forest, X[:3])
    >>> interactions.shape
    (3, 4, 4)
    >>> bool(np.allclose(interactions, interactions.transpose(0, 2, 1)))
    True
    >>> from pyinterp.importance import shap_values
    >>> bool(np.allclose(interactions.sum(axis=2), shap_values(forest, X[:3])[0]))
    True

    Against background rows:

    >>> against = shap_interaction_values(forest, X[:3], background=X[:50])
    >>> bool(np.allclose(against.sum(axis=2), shap_values(forest, X[:3], background=X[:50])[0]))
    True
    """
    view, X = _rows_view(forest, X)
    background = _check_background(view, background)
    if background is None and algorithm == "patterns":
        raise ValueError("algorithm='patterns' reads background rows; path-dependent interaction values are "
                         "walked: leave algorithm='auto' (or 'walk')")
    n, p = X.shape if view.columns is None else (view.columns.n_rows, view.columns.n_features)
    n_values = 1 if view.classes is None else len(view.classes)
    check_output_size(f"X's {n} rows x {p} x {p} features' interaction values"
                      + (f" x {n_values} classes" if n_values > 1 else ""), n * p * p * n_values * 8,
                      "explain fewer rows at a time, or use shap_interaction_importance / shap_top_interactions, "
                      "which never hold the p x p tensor")
    threads = resolve_n_threads(n_jobs)

    def values(rows):
        if background is None:
            return _core.shap_interaction_values(view.core, rows, threads)
        return _core.shap_interaction_values_interventional(view.core, rows, background, threads, algorithm)[0]

    if view.columns is None:
        return _per_output(view, values(X))
    return _per_output(view, view.columns.gather(values, axes=(1, 2))[0])


@validate_params(_ROWS_CONSTRAINTS, prefer_skip_nested_validation=True)
def shap_interaction_importance(forest, X, *, n_jobs=None):
    """Mean absolute SHAP interaction value per pair of features, as a sparse p x p array.

    The mean over the rows of X of abs(:func:`shap_interaction_values`) for each pair of features
    (main effects on the diagonal), holding only the pairs that share a tree. Computed row by row:
    memory grows with the pairs, never with n * p * p, so it serves where the full tensor would not
    fit.

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows to explain (any rows, with the forest's training columns), routed as ``predict``
        routes them (missing values by each split's ``missing_go_to_left``).
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`, read at
        the columns the trees split on, a run of rows at a time (docs/user/cluster.md).
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    scipy.sparse.csr_array of shape (n_features, n_features) or list of them
        Symmetric; for classification, one array per class, in a list in the order of ``classes_``.

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If X does not have the forest's training columns, or if the forest has several outputs.

    See Also
    --------
    shap_interaction_values : The per-row tensor this averages.
    shap_top_interactions : Each row's strongest pairs.

    Notes
    -----
    The global interaction summary of Lundberg, Erion, Chen, DeGrave, Prutkin, Nair, Katz, Himmelfarb,
    Bansal & Lee, "From local explanations to global understanding with explainable AI for trees",
    Nature Machine Intelligence 2 (2020), Section 4.2.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import shap_interaction_importance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> importance = shap_interaction_importance(forest, X[:20])
    >>> importance.shape, importance.format
    ((4, 4), 'csr')
    >>> np.round(importance.diagonal(), 3).tolist()   # main effects
    [1.252, 0.561, 0.029, 0.015]
    >>> round(float(importance[0, 1]), 3)             # features 0 and 1
    0.087
    """
    view, X = _rows_view(forest, X)
    threads = resolve_n_threads(n_jobs)
    if view.columns is None:
        a, b, mean_abs = _core.shap_interaction_mean_abs(view.core, X, threads)
        p = view.core.n_features
        arrays = [sparse.csr_array((mean_abs[:, c], (a, b)), shape=(p, p)) for c in range(mean_abs.shape[1])]
    else:
        arrays = _split_mean_abs(view, threads)
    return arrays[0] if view.classes is None else arrays


def _split_mean_abs(view, threads):
    """shap_interaction_importance's arrays for a view narrowed to a feature-parallel X's split
    columns: each run's means weighted by its share of the rows, the pairs renumbered
    to X's columns."""
    columns = view.columns
    u, n, total = view.core.n_features, columns.n_rows, None
    for start, stop, rows in columns.each_run():
        a, b, mean_abs = _core.shap_interaction_mean_abs(view.core, rows, threads)
        share = (stop - start) / n  # 1.0 for one run, which leaves the means as they are
        part = [sparse.csr_array((mean_abs[:, c] * share, (a, b)), shape=(u, u)) for c in range(mean_abs.shape[1])]
        total = part if total is None else [t + q for t, q in zip(total, part)]
    p, features = columns.n_features, columns.features
    if not len(features):  # no split: every value is 0
        return [sparse.csr_array((p, p)) for _ in total]
    return [sparse.csr_array((t.data, (features[t.row], features[t.col])), shape=(p, p))
            for t in (t.tocoo() for t in total)]


@validate_params({**_ROWS_CONSTRAINTS, "k": [IntInterval(Integral, 1, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def shap_top_interactions(forest, X, k=10, *, n_jobs=None):
    """Each row's k strongest SHAP interactions, without the p x p per-row tensor.

    The entries ``[i, a, b]`` (a < b) of :func:`shap_interaction_values` of largest absolute value,
    ties (and the pairs of value 0 that fill a row with fewer than k nonzero pairs) in (a, b) order.
    Memory: the output and, per thread, the pairs of features that share a tree.

    Parameters
    ----------
    forest : fitted forest
        A pyinterp :class:`~pyinterp.RandomForestRegressor` or :class:`~pyinterp.RandomForestClassifier`,
        or a scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``, of one output.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows to explain (any rows, with the forest's training columns), routed as ``predict``
        routes them (missing values by each split's ``missing_go_to_left``).
        For a pyinterp forest also a dask array or :class:`~pyinterp.io.ColumnFiles`, read at
        the columns the trees split on, a run of rows at a time (docs/user/cluster.md).
    k : int, default=10
        Pairs kept per row (per class), at most p (p - 1) / 2.
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    pairs : ndarray of int32 of shape (n_samples, k, 2) or (n_samples, k, 2, n_classes)
        Feature indices (a < b) of each row's pairs, strongest first; for classification ranked per
        class, classes in the order of ``classes_``.
    values : ndarray of shape (n_samples, k) or (n_samples, k, n_classes)
        Their SHAP interaction values (signed).

    Raises
    ------
    TypeError
        If ``forest`` is not one of the forests above.
    ValueError
        If k exceeds p (p - 1) / 2, if X does not have the forest's training columns, or if the forest
        has several outputs.

    See Also
    --------
    shap_interaction_values : The full per-row tensor.
    shap_interaction_importance : The mean absolute value per pair.

    Notes
    -----
    The SHAP interaction values of Lundberg, Erion, Chen, DeGrave, Prutkin, Nair, Katz, Himmelfarb,
    Bansal & Lee, "From local explanations to global understanding with explainable AI for trees",
    Nature Machine Intelligence 2 (2020), Section 4.2.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import shap_top_interactions
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> pairs, values = shap_top_interactions(forest, X[:3], k=2)
    >>> pairs.shape, values.shape
    ((3, 2, 2), (3, 2))
    >>> pairs[0].tolist(), np.round(values[0], 3).tolist()
    ([[0, 1], [1, 2]], [0.056, 0.017])
    """
    view, X = _rows_view(forest, X)
    p = view.core.n_features
    if k > p * (p - 1) // 2:
        if view.columns is not None:  # the pairs beyond those of split features are all ties at 0
            raise ValueError(f"k must be at most {p * (p - 1) // 2}, the pairs of the {p} features the forest splits "
                             f"on (X is {type(X).__name__}, read at those columns only), got {k}")
        raise ValueError(f"k must be at most p (p - 1) / 2 = {p * (p - 1) // 2} (the pairs of {p} features), got {k}")
    threads = resolve_n_threads(n_jobs)
    if view.columns is None:
        pairs, values = _core.shap_interaction_top_k(view.core, X, k, threads)
    else:
        parts = [_core.shap_interaction_top_k(view.core, rows, k, threads) for _, _, rows in view.columns.each_run()]
        pairs = view.columns.features[np.concatenate([q for q, _ in parts])]
        values = np.concatenate([v for _, v in parts])
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
    """DSTUMP feature scores: one regression stump per feature, fitted on that feature alone.

    Each feature's stump splits its observed rows in two (missing values, NaN, are left out of that
    feature's stump) and is scored by ``side``; the features ranked by decreasing score are the
    selection, ``select(s)`` keeping the top s. It needs no forest: one pass over each column,
    features in parallel. y is a real response; a 0/1 class indicator gives the Gini stump.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The features, at least 2 rows; NaN marks a missing value. Also a dask array or a
        :class:`~pyinterp.io.ColumnFiles`, never loaded whole: each chunk or block of columns is
        measured where it is (a running ``distributed`` client's workers; without one, Dask's
        threads for a dask array, and this process block by block for files, each block's codes
        at most 256 MiB), with the table of the same values in memory, to the bit.
    y : array-like of shape (n_samples,)
        The real response (finite).
    split : {"best", "median"}, default="best"
        "best": the CART split (the largest impurity decrease). "median": the boundary between tie
        runs nearest to half the total weight (n // 2 rows on the left for distinct values and unit
        weights).
    side : {"sum", "left", "max"}, default="sum"
        The score of the chosen split: "sum", the CART impurity decrease of the split; "left", minus
        the ddof-1 variance of the left part (with ``split="median"`` this is the paper's analysed
        estimator); "max", minus the larger of the two parts' variances.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative row weights (frequency weights in the variances); None weighs every row alike.
    n_jobs : int, default=None
        Threads, in scikit-learn's convention (None: 1, -1: all cores); results do not depend on it.

    Returns
    -------
    sklearn.utils.Bunch
        With the fields, each of length n_features unless said otherwise:

        - ``scores``: higher means more important; -inf for a feature with no admissible split
          (constant, or observed on too few rows), and with ``side="left"`` or ``"max"`` for one
          whose chosen split leaves a part of total weight 1 or less (its ddof-1 variance is
          undefined); either warns.
        - ``ranking``: feature indices by decreasing score, ties by index.
        - ``threshold``: the split (rows with a value at most the threshold go left); NaN without a
          split.
        - ``impurity_decrease``: the CART decrease of y's weighted variance by the chosen split (0
          without a split).
        - ``sign``: the sign of mean(right) - mean(left) (0 without a split).
        - ``n_left``: the rows on the left.
        - ``select(s)``: the top s features, ``ranking[:s]`` (0 <= s <= n_features); a partial, not
          a lambda, so the result pickles.

    Raises
    ------
    ValueError
        If y is not 1-d or not finite, if X and y have different numbers of rows, or if the scores
        (in units of y squared) overflow float64 for an extreme y; rescale y, as the ranking does
        not depend on its scale.

    See Also
    --------
    mdi, mdi_oob : Importances of a whole forest.

    Notes
    -----
    From Kazemitabar, Amini, Bloniarz & Talwalkar, "Variable Importance Using Decision Trees",
    NeurIPS 2017 (their DSTUMP), where the median split scored by the left part's variance is the
    estimator analysed for support recovery. The columns are rank-encoded once; each feature is then
    one pass over its rows and one over its distinct values.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.importance import dstump
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> stumps = dstump(X, y)
    >>> stumps.ranking.tolist(), stumps.select(2).tolist()
    ([0, 1, 2, 3], [0, 1])
    >>> np.round(stumps.scores, 3).tolist()
    [2.577, 0.799, 0.117, 0.053]
    >>> np.round(stumps.threshold[:2], 3).tolist(), stumps.sign[:2].tolist()
    ([0.35, -0.962], [1.0, 1.0])

    The paper's analysed estimator, the median split scored by minus the left part's variance:

    >>> paper = dstump(X, y, split="median", side="left")
    >>> paper.n_left.tolist(), paper.select(2).tolist()
    ([100, 100, 100, 100], [0, 1])
    """
    parted = is_feature_parallel(X)
    if parted:  # measured where its columns are (_column_map), never read here
        check_columns_X(X)
        if X.shape[0] < 2:
            raise ValueError(f"X has {X.shape[0]} row(s): DSTUMP needs at least 2")
    else:
        check_exact_integers(X)
        X = check_array(X, **FOREST_FIT_X, ensure_min_samples=2, input_name="X")
        warn_missing_call_code(X)
    if np.ndim(y) != 1:
        raise ValueError(f"y must be 1-d, got shape {np.shape(y)}")
    y = regression_target(y)
    if not parted:
        check_consistent_length(X, y)
    elif len(y) != X.shape[0]:
        raise ValueError(f"y: Found input variables with inconsistent numbers of samples: {[X.shape[0], len(y)]}")
    if sample_weight is not None:
        sample_weight = scaled_weights(check_sample_weight(sample_weight, np.empty((X.shape[0], 0)),
                                                            dtype=np.float64, ensure_non_negative=True))
    exponent = extreme_exponent(y)  # stumps of y scaled by a power of two are y's; no square overflows
    args = (np.ldexp(y, -exponent), sample_weight, split, side)
    if parted:
        table = concatenated(map_columns(X, _stumps, *args, n_threads=resolve_n_threads(n_jobs)))
    else:
        X = core_X(X)
        table = _stumps(X, mapped_file(X), resolve_n_threads(n_jobs), *args)
    unscored = np.isneginf(table["score"])
    unsplit = np.flatnonzero(unscored & np.isnan(table["threshold"]))
    lone = np.flatnonzero(unscored & ~np.isnan(table["threshold"]))
    for columns, why in ((unsplit, "have no admissible split (constant, or observed on too few rows"),
                         (lone, f"split with a part of total weight 1 or less, whose variance side={side!r} scores is "
                                "undefined (ddof 1")):
        if len(columns):
            warnings.warn(f"dstump: {len(columns)} of {len(table['score'])} features {why}; columns "
                          f"{columns[:8].tolist()}{' ...' if len(columns) > 8 else ''}): their score is -inf, ranked "
                          "last", UserWarning, stacklevel=3)
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


def _stumps(X, mapped, n_threads, y, sample_weight, split, side):
    """The core's stump table of X's columns (X as core_X gives it, mapped its mapped_file)."""
    return _core.dstump(X, y, sample_weight, _SPLITS[split], _SIDES[side], n_threads, mapped)


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

    Parameters
    ----------
    values : array-like of shape (n_features,), (n_samples, n_features) or (n_samples, n_features, n_classes)
        Any measure of this module per feature, (p,), or per-row attributions such as
        :func:`contributions` or :func:`shap_values`, (n, p) or (n, p, C), features on axis 1.
    feature_groups : array-like of shape (n_features,)
        One hashable group name per feature, as LSSFind, iRF and the signed-path functions take it.

    Returns
    -------
    GroupedValues
        A named tuple ``(names, values)``: ``names``, a tuple of the groups in order of first
        appearance, and ``values``, a float64 ndarray with the feature axis replaced by the groups
        (each group's sum, added in column order).

    Raises
    ------
    TypeError
        If ``feature_groups`` is not a sequence of hashable names.
    ValueError
        If ``feature_groups`` does not have one name per feature, or holds NaN.

    Warns
    -----
    UserWarning
        When some features' values are NaN, naming them and the groups whose sums are NaN.

    See Also
    --------
    contributions, shap_values : Per-row attributions, which can be grouped as well.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.importance import contributions, group, mdi
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = 2 * X[:, 0] + X[:, 1] + 0.5 * rng.standard_normal(200)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> genes = ["gene1", "gene1", "gene2", "gene2"]
    >>> grouped = group(mdi(forest), genes)
    >>> grouped.names, np.round(grouped.values, 3).tolist()
    (('gene1', 'gene2'), [0.98, 0.02])
    >>> group(contributions(forest, X)[0], genes).values.shape   # per row and gene
    (200, 2)
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
