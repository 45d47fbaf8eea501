"""Iterative random forests (Basu, Kumbier, Brown & Yu 2018): reweighted forests, signed random
intersection trees over the leaves of the class of interest, and bootstrap stability scores."""

from __future__ import annotations

import contextlib
import copy
import itertools
import math
import os
import tempfile
import threading
import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted

from .. import importance
from .._csr import take_rows, to_tuples
from .._rows import take_rows as take_X_rows
from .._distributed import cluster_threads, data_on_workers, run_units
from .._seeds import SEED_BOUND, draw_seeds, python_rng
from .._groups import check_feature_groups
from .._progress import Progress, inner, guarded_fit, worker_threads
from .._validation import (INT32_MAX, FOREST_FIT_X, ForestInputMixin, IntInterval, check_array,
                           check_classification_targets, check_columns, check_forest_size, check_up_front,
                           column_indices, core_X, regression_target, resolve_n_threads, share_feature_names,
                           validate_data, validate_fit_data)
from ..forest import RandomForestClassifier, RandomForestRegressor
from ..forest.categories import CATEGORICAL_CONSTRAINT, CategoricalMixin
from ..forest.feature_parallel import check_columns_X, is_feature_parallel, validate_columns_data
from ..forest.view import forest_view
from .dwp import sum_codes
from .lssfind import NoInteractionWarning
from .paths import SignedPaths, decode, signed_paths
from .rit import rit_csr
from .rule_tiers import FILTERS, order_keys, rule_tiers
from .rules import interaction_rule, resolve_interaction
from .table import InteractionTable

_SCORES = ("prevalence", "precision", "cpe", "fsd", "mip")
# The columns interactions_ is ordered by (descending but the tier, then by the direction and the
# features), per style: the rules' tiers, then stability (but in tier 0), then cpe
# (rule_tiers.order_keys); R iRF 3.0's order by cpe; or pyinterp's by stability.
TABLE_ORDER = {"rules": ("tier", "stability", "cpe"), "R": ("cpe", "stability"),
               "pyinterp": ("stability", "prevalence")}
# n_bootstraps and bootstrap_n_estimators when None: the default style's 50 bootstraps of a fifth of
# the trees (bench/studies/irf_seed_stability.py: two seeds then share 4.3 and 4.0 of their top 5 on
# prostate_ge and arcene, against 0.4 and 0.8 with 10 bootstraps of 500); the R vignette's 10
# bootstraps of full forests under the other styles.
RULES_BOOTSTRAPS, RULES_BOOTSTRAP_TREES_DIVISOR = 50, 5
_LOG_SCORES = ("cpe", "fsd", "mip")  # their sta_* columns: share of bootstraps with a positive score


def _query_index(candidates) -> dict:
    """Row of every set a score looks up, in a fixed order: the empty set, then per candidate its
    (``|S|``-1)-subsets, singletons and itself."""
    index = {(): 0}
    for s in candidates:
        for r in {len(s) - 1, len(s)} | {1}:
            for sub in itertools.combinations(s, r):
                index.setdefault(sub, len(index))
    return index


def _fsd(prev1, index, candidates):
    """fsd(S) = log prev(S) - sum_j log prev({j})."""
    return np.array([np.log(prev1[index[s]]) - sum(np.log(prev1[index[(j,)]]) for j in s) for s in candidates])


def _mip(log_prec, index, candidates):
    """mip(S) = min over the (``|S|``-1)-subsets S' of log prec(S) - log prec(S')."""
    return np.array([min(log_prec[index[s]] - log_prec[index[sub]] for sub in itertools.combinations(s, len(s) - 1))
                     for s in candidates])


class _Scoring:
    """The candidates in the table's order (size, then items) and the sets their scores look up."""

    def __init__(self, candidates):
        self.candidates = sorted(set(candidates), key=lambda s: (len(s), s))
        self.index = _query_index(self.candidates)
        self.queries = list(self.index)

    def scores(self, prev1, prev0, prec) -> dict:
        """The five scores of the candidates on one bootstrap forest, from the prevalences and
        precisions of ``queries``."""
        index, candidates = self.index, self.candidates
        rows = np.array([index[s] for s in candidates], dtype=np.intp)
        with np.errstate(divide="ignore", invalid="ignore"):
            return {
                "prevalence": prev1[rows],
                "precision": prec[rows],
                "cpe": np.log(prev1[rows]) - np.log(prev0[rows]),
                "fsd": _fsd(prev1, index, candidates),
                "mip": _mip(np.log(prec), index, candidates),
            }


def _masked_mean(values, mask):
    """Per column, the mean over the bootstraps (rows) where mask holds; NaN if it holds in none."""
    count = mask.sum(axis=0)
    total = np.where(mask, values, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


class IterativeRandomForest(CategoricalMixin, ForestInputMixin, BaseEstimator):
    """iRF: interactions that are prevalent on the decision paths of a reweighted forest and
    stable across bootstrap samples.

    1. ``n_iterations`` forests, each drawing its split candidates with probability proportional
       to the previous forest's feature importance (floored at ``weight_floor``; max_features is
       capped at the number of positive weights). The iteration with the lowest out-of-bag error
       is kept (``iteration="oob"``; ties go to the later one), or the given one.
    2. ``n_bootstraps`` times: refit a forest of ``bootstrap_n_estimators`` trees with that
       iteration's feature weights on a resample of ``bootstrap_max_samples`` rows drawn with
       replacement (class-stratified for classification), take the signed paths (the first split
       of each feature, or every (feature, side) with ``first_split=False``; unsigned with
       ``signed=False``) of the leaves predicting the class of interest - ``class_id`` for
       classification, y above ``cut`` (the median by default) for regression - or of every leaf
       (``rit_leaves="all"``), and run random intersection trees over them; with
       ``rit_leaves="both"`` (style ``"rules"``'s default) one more RIT runs over the other leaves,
       the other rows playing the class of interest, so that rules that lower y (or predict
       another class) are found with their own signs, reported with ``direction`` -1. A leaf is
       drawn with probability size x precision (its count of class-1 rows) or size
       (``rit_leaf_weight``).
       The RIT root intersects ``rit_root_sets`` drawn paths; a RIT leaf intersects
       ``rit_depth`` paths (R's ``depth``: the root's included); the RIT leaves are reported, or
       every node (``rit_report="nodes"``).
    3. The candidate interactions are scored on every bootstrap forest and the scores averaged:
       ``stability`` (fraction of bootstraps whose RIT found it), ``prevalence`` (prev1),
       ``precision`` (class-1 fraction of the rows in leaves containing S), ``cpe`` =
       log prev1 - log prev0, ``fsd`` = log prev(S) - sum_j log prev({j}), ``mip`` = min over
       (``|S|``-1)-subsets S' of log prec(S) - log prec(S'); ``sta_cpe``/``sta_fsd``/``sta_mip`` =
       fraction of bootstraps with a positive score; ``direction`` (+1: found on the leaves of the
       class of interest, -1: on the other leaves, its scores read with the sides swapped);
       ``tier`` (0: a rule, 1: nested in or around a rule or its other side, 2: fails R's
       filters; below).

    ``style`` chooses among three sets of conventions for steps 2-3:

    - ``"rules"`` (default): R's scores and conventions (next item), with three differences: RIT on
      both sides (``rit_leaves="both"``); every bootstrap's sets as candidates and stability over
      every bootstrap, as the method defines them, from 50 bootstraps of 100 trees; and the table
      ordered by ``tier``, then stability, then cpe (the rules of tier 0 by cpe alone, R's order,
      which ranks them first on LSS data). On real data the scores of the top candidates are close,
      and R's candidates (one RIT over the selected forest) and order (cpe, averaged over the
      bootstraps that could score a set) changed with the seed: two seeds shared 0.4 of their top 5
      on prostate_ge (102 x 5,966) with R's candidates, cpe order and 10 bootstraps of 500 trees;
      4.3 with these settings, at 2.0 CPU s a fit instead of 0.9
      (bench/studies/irf_seed_stability.py). A set passes the filters when its stability is at least
      one half, its sta_fsd exceeds one half and its sta_mip 0.95 (R's filters ask one half of both;
      on data without interactions that passed 11-26 sets per fit at p = 10,
      bench/studies/irf_null_rules.py). Between two passing sets S < T of the same direction, the
      forest's paths tell a rule from its parts and extensions: the class-1 paths holding a part of
      a true rule nearly always hold the rule's other features, so prevalence(T) >= 0.7 x
      prevalence(S) moves S to tier 1, and a smaller ratio (T adds a feature the paths do not need)
      moves T there. Both sides also find the other side of the rules (y high when x0 and x1 are low
      or when x2 and x3 are low is y low when x0 and x2 are high): of two passing sets of opposite
      directions, each made only of the other sides of the other direction's items and holding a
      feature with opposite signs, the one whose features co-occur less on the paths (smaller fsd
      per added feature) moves to tier 1 (rule_tiers.py says why).
      bench/studies/irf_default_order.py measures it on LSS data at orders 2 and 3 (p 50-1000, SNR
      1-10, 4 replicates): the true rules in the top 5 in 1.00 / 1.00 of cases and in the top 2 in
      0.97 / 1.00, against 0.23 / 0.02 and 0.00 / 0.01 for R's order and 1.00 / 0.96 and 0.79 / 0.83
      for :class:`LSSFind` (``mode="rank"``) on the same data sets; and on designs kept out of the
      choice (docs/results/irf_default_order.md).
    - ``"R"`` does what R iRF 3.0 does (``iRF(..., oob.importance=TRUE)``): the forests
      stop at ranger's node size (``forest_min_node_size``); the
      candidates are the sets one RIT finds on the selected forest (seed ``rit_seed_``); each
      bootstrap forest is fitted on the resample's distinct rows; a leaf's size, class-1 count
      and precision count only the rows out-of-bag for its tree, and leaves below
      ``min_node_size`` count none; prev1 / prev0 are the shares of the class-1 / other rows
      (leaf memberships) in leaves containing S; a regression row is class 1 when y >= ``cut``
      (y > ``cut`` when ``cut`` is y's minimum, where R would leave no class 0), a leaf when its
      mean is > ``cut``; each interaction's columns average the bootstraps whose RIT found
      something and where its cpe, fsd and mip are finite (a set none of them keeps has no row);
      the table is ordered by cpe, then stability.
    - ``"pyinterp"`` (the behaviour before the R conventions): trees grown to purity; every set
      any bootstrap's RIT found is a candidate; bootstrap forests see the resample with its repeats; sizes count all
      the rows in the leaf; prev1 / prev0 are the shares of the row mass of the leaves predicting
      the class of interest / of the other leaves in leaves containing S; y > ``cut`` is class 1;
      stability divides by every bootstrap, each log score averages the bootstraps where it is
      finite; the table is ordered by stability, then prevalence. Keep it to rank by stability:
      R's filter drops exactly the bootstraps whose forest holds no path with S (its cpe is then
      -inf or undefined), where RIT cannot find S, so R's stability overstates rare sets; and
      R's order by cpe puts supersets of a rule (rule & a noise split) above the rule.
      docs/results/irf_recovery.md measures ``"R"`` and ``"pyinterp"`` on LSS data:
      ``"pyinterp"`` ranked every true order-2 rule in the top 2, ``"R"`` 8% of them; at orders
      3 and 4 neither ranked the rules near the top (median rank 7-15).

    Styles ``"rules"`` and ``"R"`` score their candidates inside each bootstrap, which keeps only
    the scores. With ``style="pyinterp"``, until every bootstrap is done, each finished
    bootstrap's leaves wait in a temporary directory (``TMPDIR``; about 20 MB per bootstrap at
    n = 1000), so memory does not grow with ``n_bootstraps``. Inside
    ``joblib.parallel_backend("dask")`` the forests and the bootstraps run on the cluster's
    workers, with the same result (docs/user/cluster.md).

    Parameters
    ----------
    n_iterations : int, default=5
        Reweighted forests of step 1 (R iRF 3.0's 5): the first draws its split candidates
        uniformly, each later one in proportion to the previous forest's importances (floored
        at ``weight_floor``).
    n_estimators : int, default=500
        Trees of each iteration's forest (R iRF 3.0's 500), and of each bootstrap forest unless
        ``bootstrap_n_estimators`` is given.
    task : {"auto", "classification", "regression"}, default="auto"
        What y is. "auto" decides from y's values at fit (integer labels and two-valued y are
        classes). "classification" / "regression" say it, and declare it to scikit-learn, so
        cross_val_score stratifies folds and scorers such as "roc_auc" find ``predict_proba``
        (available only with ``task="classification"``).
    max_features : {"sqrt", "log2"}, int, float or None, default="sqrt"
        m_try of every forest, as R iRF's mtry (see :class:`~pyinterp.RandomForestRegressor`);
        capped at the number of features with a positive weight.
    min_samples_leaf : int or float, default=1
        Smallest leaf of every forest (a count, or a fraction of n).
    max_depth : int or None, default=None
        Deepest tree of every forest; None: no limit.
    forest_min_node_size : int or None, default=None
        ranger's ``min.node.size`` for every forest: a node of at most this many in-bag draws
        (repeats counted, as ranger counts them) is not split. None: what R iRF 3.0's forests use
        under styles ``"R"`` and ``"rules"`` (ranger's defaults: 5 for regression, 1 for
        classification) and 1, trees grown to purity, under ``style="pyinterp"``.
    importance : {"mdi", "mdi_oob"}, default="mdi"
        The feature importance that reweights the next iteration (``importances_``): MDI
        (``feature_importances_``, as in the paper) or :func:`~pyinterp.importance.mdi_oob` (the
        debiased version of issue 3; slower, it reads the out-of-bag rows).
    weight_floor : float in [0, 1], default=1e-5
        The importances, negative ones set to 0 and normalised to sum to 1 (equal weights when
        none is positive), are floored at this, so a feature without importance stays drawable
        (unless the floor is 0). R floors ranger's unnormalised importance at 1e-5 and then
        normalises; pyinterp normalises and then floors.
    iteration : {"oob", "last"} or int, default="oob"
        The iteration whose forest becomes ``forest_`` and whose feature weights the bootstrap
        forests are fitted with: the lowest out-of-bag error (ties go to the later one), the
        last, or the given 0-based index (below ``n_iterations``).
    n_bootstraps : int or None, default=None
        Bootstrap resamples of step 2, each with its own forest and RIT. None: 50 under
        ``style="rules"`` (two seeds then agree on about 4 of their top 5 on real data, above),
        10 under the others, the R vignette's setting (R's default of 1 gives no stability
        information).
    signed : bool, default=True
        Whether paths hold signed features (feature, side) or features alone; unsigned tables
        carry sign 0 and have no :meth:`rule`.
    cut : float or None, default=None
        Regression only: the value of y that splits the rows into the class of interest and the
        other rows; None: the median of y. Under styles ``"rules"`` and ``"R"`` a row is class 1
        when y >= cut (y > cut when cut is y's minimum, where R would leave no class 0); under
        ``"pyinterp"`` when y > cut. A leaf predicts the class of interest when its mean is
        above cut. A cut that leaves either side empty is an error at fit.
    class_id : label or None, default=None
        Classification only: the class of interest; None: the last of the sorted classes.
    min_node_size : int, default=1
        Leaves with fewer rows than this (the resample's rows in the leaf; under styles
        ``"rules"`` and ``"R"`` its out-of-bag rows) are not drawn by RIT; under those styles
        they also count no rows in the scores, as R drops them before scoring.
    rit_depth : int, default=5
        R's ``depth``: the number of paths a RIT leaf intersects, the root's ``rit_root_sets``
        included (so ``rit_depth - rit_root_sets + 1`` levels, at least the root).
    rit_n_trees : int, default=500
        Trees of each RIT run (per bootstrap and side, and for the candidates of styles
        ``"rules"`` and ``"R"``); 0 finds nothing.
    rit_n_children : float >= 1, default=2.0
        Children of each RIT node, each the node intersected with one more drawn path; a
        fraction is honoured at random.
    rit_min_size : int, default=2
        A RIT node that has shrunk to this many items is a leaf, and smaller sets are dropped:
        the smallest interaction reported.
    bootstrap_n_estimators : int or None, default=None
        Trees in each bootstrap forest. None: a fifth of ``n_estimators`` (at least 1) under
        ``style="rules"``, whose 50 bootstraps then cost as many trees as 10 full-size ones;
        ``n_estimators`` under the others (R iRF refits a full-size forest). With few trees
        (``n_estimators=30`` gives bootstrap forests of 6) a rule's fsd and mip are noisy and it
        can fail the filters: pass 30 or more here.
    bootstrap_max_samples : float, int or None, default=None
        Rows in each bootstrap resample: a fraction in (0, 1] of n (rounded up), a count >= 1, or
        None = n. Classes keep their proportions (largest remainders) when classifying.
    first_split : bool, default=True
        True keeps each feature's first split on a path (R's ``first.split``); False every
        (feature, side), so a path may hold both signs of a feature. Unsigned paths are the same
        either way.
    rit_leaves : {"class", "all", "both"} or None, default=None
        The leaves RIT draws from: those predicting the class of interest (above ``cut`` in
        regression), all of them (scored with the class of interest), or each side by itself
        ("both": the sets found on the other leaves are scored with the other rows as the class
        of interest and reported with ``direction`` -1). None: "both" under ``style="rules"``,
        "class" under the others (R's RIT runs on the class of interest's leaves only).
    rit_leaf_weight : {"size_precision", "size"}, default="size_precision"
        Leaf drawing weight: its class-1 row count (size x precision, R iRF's) or its row count,
        counting the resample's rows that fall in the leaf (its out-of-bag rows under styles
        ``"rules"`` and ``"R"``).
    rit_root_sets : {1, 2}, default=2
        Paths intersected at each RIT root: 2 as in R iRF, 1 (a single drawn path) as in the
        Python irf package.
    rit_report : {"leaves", "nodes"}, default="leaves"
        Sets a RIT reports: its leaves (R iRF) or every node, root included (the Python irf
        package).
    style : {"rules", "R", "pyinterp"}, default="rules"
        The conventions of the candidates, out-of-bag counts, prevalence, cut, stability and the
        table's order (above). How each differs from R's iRF package:

        - ``"R"`` with ``rit_leaves=None`` is R iRF 3.0 (``oob.importance=TRUE``); what still
          differs is listed in docs/user/interactions.md: one resample per bootstrap (R 3.0.0
          refits the same resample in every bootstrap), pyinterp's trees and random streams (any
          ``n_jobs`` gives the same table; R's RIT depends on its threads), the feature weights
          floored after normalising, non-finite scores left out (R's means become NaN), no
          observation weights, a classification leaf counting as the class of interest when it
          ties for the largest fraction, and 10 bootstraps by default where R runs 1.
        - ``"rules"`` computes R's scores with R's conventions, but also runs RIT on the other
          side (``rit_leaves="both"``, rules that lower y, ``direction`` -1), takes every
          bootstrap's sets as candidates where R takes one RIT's over the selected forest,
          divides stability by every bootstrap where R divides by those that could score the
          set, runs 50 bootstraps of ``n_estimators / 5`` trees, and orders by ``tier``, then
          stability (not in tier 0), then cpe, where R orders by cpe.
        - ``"pyinterp"`` keeps the conventions before R's: trees grown to purity, every
          bootstrap's sets as candidates, bootstrap forests fitted on the resample with its
          repeats, leaf sizes counting all its rows, prevalence as leaf mass, y > cut as
          class 1, stability over every bootstrap, and the order by stability.
    random_state : int, RandomState instance or None, default=None
        Seeds every forest, resample and RIT: the seeds are drawn once at fit
        (``bootstrap_seeds_``, ``rit_seed_``), so each bootstrap can be redone
        (:meth:`bootstrap`).
    n_jobs : int or None, default=None
        Threads (None: 1, -1: all cores): each iteration's forest uses them, and the bootstraps
        run this many at a time, one thread each. The table does not depend on n_jobs.
    verbose : int, default=0
        Reports the iterations and the bootstraps as they finish (with tqdm if installed); at 2
        also each iteration forest's trees.
    always_split_features : array-like of int or str, or bool mask, default=None
        Columns searched at every node of every forest (ranger's ``always.split.variables``, see
        :class:`pyinterp.RandomForestRegressor`): covariates such as principal components.
        Interactions that hold them are found as any other; the command line reports only those
        among the other columns unless asked.
    categorical_features : array-like of int, str or bool, "from_dtype" or CategoryCodes, default=None
        Columns split as categories (batch, sex, tissue; see
        :class:`pyinterp.RandomForestRegressor`). They are encoded once, and every forest of the
        fit (``forest_``, the bootstraps') is fitted on their codes (``CategoryCodes``): pass those
        forests X with the columns as codes, or use this estimator's methods, which take X as fit
        did.

    Attributes
    ----------
    interactions_ : InteractionTable
        The scored candidates, columns ``stability``, ``prevalence``, ``precision``, ``cpe``,
        ``sta_cpe``, ``fsd``, ``sta_fsd``, ``mip``, ``sta_mip``, ``direction`` and ``tier``
        (step 3). Ordered by tier, stability (not in tier 0), then cpe (``style="rules"``), by
        cpe, then stability (``"R"``), or by stability, then prevalence (``"pyinterp"``):
        ``TABLE_ORDER[style]`` (descending but the tier), then the direction and the features.
        With ``feature_groups`` the indices point into the group names. An empty table, and under
        ``style="rules"`` a table without a rule (tier 0), warns (:class:`NoInteractionWarning`,
        saying why).
    forest_ : RandomForestRegressor or RandomForestClassifier
        The selected iteration's forest; :meth:`predict` uses it.
    selected_iteration_ : int
        The selected iteration (0-based).
    oob_errors_ : ndarray of shape (n_iterations,)
        Per iteration, 1 - the forest's out-of-bag R^2 (regression) or accuracy.
    importances_ : ndarray of shape (n_iterations, n_features)
        Per iteration, the importances computed (``importance``).
    feature_weights_ : ndarray of shape (n_iterations, n_features)
        Per iteration, the weights its forest was fitted with (all ones for the first).
    n_bootstraps_ : int
        The bootstraps run (``n_bootstraps``, or its default for the style).
    bootstrap_n_estimators_ : int
        Trees in each bootstrap forest (``bootstrap_n_estimators``, or its default).
    bootstrap_seeds_ : ndarray of shape (``n_bootstraps_``, 2)
        Each bootstrap's resample seed and forest (and RIT) seed; :meth:`bootstrap` redoes one.
    rit_seed_ : int
        Seed of the RIT over the selected forest (the candidates of ``style="R"``).
    classification_ : bool
        Whether y was read as classes (``task``).
    classes_ : ndarray of shape (n_classes,)
        The classes, when y was read as classes.
    class_id_ : label
        The class of interest, when y was read as classes.
    cut_ : float
        The cut of y, in regression.
    feature_groups_ : FeatureGroups or None
        With ``feature_groups``: the group names (``names``, in order of first appearance; the
        interactions' indices point into it) and each column's group (``index``).
    n_features_in_ : int
        Number of columns seen at fit.
    feature_names_in_ : ndarray of str of shape (``n_features_in_``,)
        Column names seen at fit, when X had string column names (a pandas DataFrame).

    See Also
    --------
    LSSFind : Interactions by depth-weighted prevalence, on one forest.
    random_intersection_trees : The RIT of step 2 on any sets.
    pair_scan : Every pair of given columns, tested exhaustively.

    Notes
    -----
    Defaults and why: 5 iterations, 500 trees, RIT depth 5 with 500 trees, 2 children and
    minimum size 2, signed paths and R's scores - the R iRF 3.0 defaults the method was published
    with - but ordered by ``style="rules"``, which ranks the true rules first where R's order does
    not (above), and with RIT on both sides, since a rule that lowers y has no class-1 leaves;
    ``max_features="sqrt"`` as R iRF's mtry; 50 bootstraps of 100 trees, where the R vignette
    runs 10 of 500 (R's default of 1 gives no stability information), so that two seeds agree
    (above); MDI importance as in the paper (``"mdi_oob"`` for the debiased version of issue 3).
    The bootstrap stage follows R iRF otherwise: each bootstrap resamples n rows
    (``bootstrap_max_samples=None``), first split per feature (R's ``first.split``), class-1
    leaves weighted by size x precision, RIT root = two paths, leaves reported.

    The Python ``irf`` package's ``run_iRF`` defaults (``K=7, B=10, M=4, max_depth=2,
    num_splits=2, propn_n_samples=0.2, n_estimators_bootstrap=5``, scikit-learn forest defaults,
    stability from every RIT node) are, in these terms: ``n_iterations=8, iteration="last"``
    (its bootstraps use the importance of the 7th forest, which is what the 8th forest is fitted
    with), ``n_estimators=100, max_features=None`` for regression (``"sqrt"`` for
    classification), ``weight_floor=0``, ``n_bootstraps=10, bootstrap_n_estimators=5,
    bootstrap_max_samples=0.2, rit_n_trees=4, rit_depth=2, rit_n_children=2, rit_root_sets=1,
    rit_report="nodes", rit_min_size=1, rit_leaf_weight="size", style="pyinterp"``, with
    ``first_split=False`` for its signed paths and, for regression with ``bin_class_type=None``,
    ``rit_leaves="all"``.
    (Its regression path weights are the leaf means cast to int, which we take as the leaf size
    they were meant to be; docs/results/lssfind_results.md, Part 3b, measures these settings.)

    References
    ----------
    Basu, S., Kumbier, K., Brown, J. B. and Yu, B. (2018). Iterative random forests to discover
    predictive and stable high-order interactions. PNAS 115(8), 1943-1948.

    Examples
    --------
    y is high when x0 and x1 are low or when x2 and x3 are (``make_lss``); the default puts both
    rules first, in tier 0, found on the leaves above the median (direction +1):

    >>> from pyinterp import IterativeRandomForest
    >>> from pyinterp.datasets import make_lss
    >>> X, y, truth = make_lss(n_samples=300, n_features=6, snr=5.0, random_state=0)
    >>> irf = IterativeRandomForest(n_iterations=2, n_estimators=30, n_bootstraps=3, rit_n_trees=50,
    ...                             random_state=0).fit(X, y)
    >>> table = irf.interactions_
    >>> [table.label(f) for f in table.features[:2]], sorted(table.features[:2]) == truth
    (['x2- & x3-', 'x0- & x1-'], True)
    >>> table["tier"][:2].tolist(), table["direction"][:2].tolist(), table["stability"][:2].tolist()
    ([0, 0], [1, 1], [1.0, 1.0])
    >>> record = table[0]
    >>> round(record.precision, 3), round(record.cpe, 3)
    (0.931, 2.697)

    After them come the sets found on the leaves below the median (direction -1): y is low where
    a feature of each rule is high, as on x1+ & x3+. Here they pass R's filters with a rule nested
    in or around them, or on their other side (tier 1); the sets the filters drop come last (tier 2):

    >>> [(table.label(f), t, d) for f, t, d in zip(table.features[2:5], table["tier"][2:5].tolist(),
    ...                                           table["direction"][2:5].tolist())]
    [('x1+ & x3+', 1, -1), ('x0+ & x3+', 1, -1), ('x1+ & x2+', 1, -1)]
    """

    _parameter_constraints = {
        "n_iterations": [IntInterval(Integral, 1, None, closed="left")],
        "n_estimators": [IntInterval(Integral, 1, None, closed="left")],
        # max_features, min_samples_leaf, max_depth, always_split_features: passed to the forests, which
        # check them
        "max_features": "no_validation",
        "min_samples_leaf": "no_validation",
        "max_depth": "no_validation",
        "always_split_features": "no_validation",
        "forest_min_node_size": [IntInterval(Integral, 1, None, closed="left"), None],
        "importance": [StrOptions({"mdi", "mdi_oob"})],
        "weight_floor": [Interval(Real, 0, 1, closed="both")],
        "iteration": [StrOptions({"oob", "last"}), IntInterval(Integral, 0, None, closed="left")],
        "n_bootstraps": [IntInterval(Integral, 1, None, closed="left"), None],
        "signed": ["boolean"],
        "cut": [Interval(Real, None, None, closed="neither"), None],
        "class_id": "no_validation",  # any label; checked against the classes in fit
        "min_node_size": [IntInterval(Integral, 1, None, closed="left")],
        "rit_depth": [IntInterval(Integral, 1, INT32_MAX, closed="both")],
        "rit_n_trees": [IntInterval(Integral, 0, 2**62, closed="both")],
        "rit_n_children": [Interval(Real, 1, None, closed="left")],
        "rit_min_size": [IntInterval(Integral, 1, INT32_MAX, closed="both")],
        "bootstrap_n_estimators": [IntInterval(Integral, 1, None, closed="left"), None],
        "bootstrap_max_samples": [IntInterval(Integral, 1, None, closed="left"),
                                  Interval(RealNotInt, 0, 1, closed="right"),
                                  None],
        "first_split": ["boolean"],
        "rit_leaves": [StrOptions({"class", "all", "both"}), None],
        "rit_leaf_weight": [StrOptions({"size_precision", "size"})],
        "rit_root_sets": [IntInterval(Integral, 1, 2, closed="both")],
        "rit_report": [StrOptions({"leaves", "nodes"})],
        "task": [StrOptions({"auto", "classification", "regression"})],
        "style": [StrOptions({"rules", "R", "pyinterp"})],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "categorical_features": CATEGORICAL_CONSTRAINT,
    }

    def __init__(self, n_iterations=5, n_estimators=500, *, task="auto", max_features="sqrt", min_samples_leaf=1,
                 max_depth=None, forest_min_node_size=None, importance="mdi", weight_floor=1e-5, iteration="oob",
                 n_bootstraps=None, signed=True, cut=None,
                 class_id=None, min_node_size=1, rit_depth=5, rit_n_trees=500, rit_n_children=2.0, rit_min_size=2,
                 bootstrap_n_estimators=None, bootstrap_max_samples=None, first_split=True, rit_leaves=None,
                 rit_leaf_weight="size_precision", rit_root_sets=2, rit_report="leaves", style="rules",
                 random_state=None, n_jobs=None, verbose=0, always_split_features=None, categorical_features=None):
        self.n_iterations = n_iterations
        self.n_estimators = n_estimators
        self.task = task
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.forest_min_node_size = forest_min_node_size
        self.importance = importance
        self.weight_floor = weight_floor
        self.iteration = iteration
        self.n_bootstraps = n_bootstraps
        self.signed = signed
        self.cut = cut
        self.class_id = class_id
        self.min_node_size = min_node_size
        self.rit_depth = rit_depth
        self.rit_n_trees = rit_n_trees
        self.rit_n_children = rit_n_children
        self.rit_min_size = rit_min_size
        self.bootstrap_n_estimators = bootstrap_n_estimators
        self.bootstrap_max_samples = bootstrap_max_samples
        self.first_split = first_split
        self.rit_leaves = rit_leaves
        self.rit_leaf_weight = rit_leaf_weight
        self.rit_root_sets = rit_root_sets
        self.rit_report = rit_report
        self.style = style
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.always_split_features = always_split_features
        self.categorical_features = categorical_features

    # -- fitting -------------------------------------------------------------------------------

    def _forest(self, seed, n_jobs, n_estimators, oob_score=False, verbose=0):
        Forest = RandomForestClassifier if self.classification_ else RandomForestRegressor
        size = self.forest_min_node_size
        if size is None:
            size = 5 if r_conventions(self) and not self.classification_ else 1
        return Forest(n_estimators, max_features=self.max_features, min_samples_leaf=self.min_samples_leaf,
                      max_depth=self.max_depth, oob_score=oob_score, random_state=seed, n_jobs=n_jobs,
                      verbose=verbose, min_node_size=size, always_split_features=self._always,
                      categorical_features=self._inner_categories(),
                      keep_oob_leaves=r_conventions(self))  # recorded as the trees grow, for BootstrapLeaves

    def _resolve_params(self, n_samples, n_features):
        """What the constraints cannot say: ``iteration`` below ``n_iterations``, the trees and
        rows of a bootstrap forest, and the always-split columns by index (X's names are gone
        once it is validated)."""
        self._always = (None if self.always_split_features is None else
                        column_indices("always_split_features", self.always_split_features, n_features,
                                       getattr(self, "feature_names_in_", None)))
        if isinstance(self.iteration, Integral) and self.iteration >= self.n_iterations:
            raise ValueError(f"iteration must be below n_iterations ({self.n_iterations}), got {self.iteration}")
        rules = self.style == "rules"
        self.n_bootstraps_ = self.n_bootstraps or (RULES_BOOTSTRAPS if rules else 10)
        self.bootstrap_n_estimators_ = self.bootstrap_n_estimators or (
            max(1, self.n_estimators // RULES_BOOTSTRAP_TREES_DIVISOR) if rules else self.n_estimators)
        m = self.bootstrap_max_samples
        if m is None:
            self._bootstrap_rows = n_samples
        elif isinstance(m, Integral):
            self._bootstrap_rows = int(m)
        else:
            self._bootstrap_rows = max(1, math.ceil(m * n_samples))
        check_up_front("bootstrap_max_samples", self._bootstrap_rows, 8, "each bootstrap's drawn rows")
        check_forest_size("n_estimators", self.n_estimators, n_samples)
        check_forest_size("bootstrap_n_estimators", self.bootstrap_n_estimators_, self._bootstrap_rows)

    @guarded_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, feature_groups=None):
        """Grow the reweighted forests, then the bootstraps, and score their interactions.

        feature_groups: one group name per column (e.g. each SNP's gene, R iRF's
        ``varnames.grp``); the paths RIT intersects and every score are then over groups, a group
        counting as one feature. The forests and their importances stay per column. verbose
        reports the iterations and the bootstraps as they finish (at 2 also each iteration
        forest's trees).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; NaN marks a missing value. Also packed genotypes
            (:class:`~pyinterp.io.PackedGenotypes`) and int8 genotypes without a float copy, and
            categorical columns as strings or categories with ``categorical_features``. Also a
            dask array (persist it first: each bootstrap takes its rows) or a
            :class:`~pyinterp.io.ColumnFiles` (each bootstrap reads the files at its rows): every
            forest is then fitted feature-parallel on the running Dask client's cluster, one after
            the other, with the tables of the same values in memory.
        y : array-like of shape (n_samples,)
            Class labels or a numeric target (``task``); at least 2 rows.
        feature_groups : array-like of str of shape (n_features,), default=None
            One group name per column; the table's indices then point into
            ``feature_groups_.names``, and :meth:`rule` is unavailable.

        Returns
        -------
        self : IterativeRandomForest
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``iteration`` is not below ``n_iterations``, ``class_id`` is not one of the
            classes, the cut leaves no rows on one side of y, or X or y is invalid.

        Warns
        -----
        NoInteractionWarning
            When the table is empty, saying why (e.g. every path splits on one feature) and what
            to try; under ``style="rules"`` also when no set is a rule (tier 0), naming the most
            stable set and its filter scores.

        Examples
        --------
        >>> from pyinterp import IterativeRandomForest
        >>> from pyinterp.datasets import make_lss
        >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
        >>> irf = IterativeRandomForest(n_iterations=2, n_estimators=30, n_bootstraps=3, rit_n_trees=50,
        ...                             random_state=0)
        >>> irf.fit(X, y) is irf
        True
        >>> irf.selected_iteration_, irf.oob_errors_.round(3).tolist(), round(irf.cut_, 3)
        (1, [0.295, 0.279], 0.52)

        With groups of columns (here x4 and x5 in one group), a group counts as one feature:

        >>> genes = ["g0", "g1", "g2", "g3", "g4", "g4"]
        >>> grouped = IterativeRandomForest(n_iterations=2, n_estimators=30, n_bootstraps=3, rit_n_trees=50,
        ...                                 random_state=0).fit(X, y, feature_groups=genes)
        >>> grouped.feature_groups_.names
        ('g0', 'g1', 'g2', 'g3', 'g4')
        >>> [grouped.interactions_.label(f) for f in grouped.interactions_.features[:2]]
        ['g2- & g3-', 'g0- & g1-']
        """
        parted = is_feature_parallel(X)  # its forests fitted where its columns are
        X = self._encode_categories(X)
        if parted:
            y = validate_columns_data(self, X, y, ensure_min_samples=2)
        else:
            X, y = validate_fit_data(self, X, y, ensure_min_samples=2)
            X = core_X(X)
        self.feature_groups_ = check_feature_groups(feature_groups, X.shape[1])
        self._resolve_params(len(y), X.shape[1])
        if self.task == "auto":
            self.classification_ = type_of_target(y) in ("binary", "multiclass")
        else:
            self.classification_ = self.task == "classification"
            if self.classification_:
                check_classification_targets(y)
        if not self.classification_:
            y = regression_target(y)
        z = self._positive(y)
        check_up_front("n_iterations", self.n_iterations, 8, "its forests' seeds")
        check_up_front("n_bootstraps", self.n_bootstraps_, 16, "its bootstraps' seeds")
        seeds = draw_seeds(python_rng(self.random_state), self.n_iterations + 2 * self.n_bootstraps_ + 1)
        n_jobs = resolve_n_threads(self.n_jobs)

        # With a distributed joblib backend, X and y reach each worker once for the whole fit (a
        # feature-parallel X stays where its columns are).
        with contextlib.nullcontext() if parted else data_on_workers(X, y, in_place=(X,)):
            with Progress(self.verbose, self.n_iterations, "iterations") as progress:
                self._iterate(X, y, seeds[:self.n_iterations], n_jobs, progress)
            self.bootstrap_seeds_ = seeds[self.n_iterations:-1].reshape(self.n_bootstraps_, 2)
            self.rit_seed_ = int(seeds[-1])
            with Progress(self.verbose, self.n_bootstraps_, "bootstraps") as progress:
                self.interactions_ = self._bootstrap_stage(X, y, z, n_jobs, progress)
        table = self.interactions_
        if not len(table):
            warnings.warn(NoInteractionWarning(f"IterativeRandomForest found no interaction: {why_none(self)}"),
                          stacklevel=4)
        elif self.style == "rules" and not (table["tier"] == 0).any():
            top = int(np.argmax(table["stability"]))
            warnings.warn(NoInteractionWarning(
                f"IterativeRandomForest found no rule (tier 0): no set passed the filters ({FILTERS}): the "
                "table ranks sets that are not rules. The most stable, "
                f"{table.label(table.features[top])}, has stability {table['stability'][top]:.2f} over "
                f"{self.n_bootstraps_} bootstraps, sta_fsd {table['sta_fsd'][top]:.2f} and sta_mip "
                f"{table['sta_mip'][top]:.2f}."), stacklevel=4)
        return self

    def _iterate(self, X, y, seeds, n_jobs, progress):
        """The reweighted forests; only the selected one is kept (the others' trees are let go as
        soon as a later iteration is selected over them)."""
        weights = np.ones(X.shape[1])
        self.oob_errors_, self.importances_, self.feature_weights_ = [], [], []
        for k in range(self.n_iterations):
            forest = self._forest(int(seeds[k]), n_jobs, self.n_estimators, oob_score=True, verbose=inner(self.verbose))
            forest.fit(X, y, feature_weights=weights)
            imp = forest.feature_importances_ if self.importance == "mdi" else importance.mdi_oob(forest, X, y)
            self.oob_errors_.append(1.0 - forest.oob_score_)
            self.importances_.append(np.asarray(imp, dtype=np.float64))
            self.feature_weights_.append(weights)
            if self.iteration == "oob":  # lowest error, ties to the later iteration
                selected = k == 0 or self.oob_errors_[k] <= self.oob_errors_[self.selected_iteration_]
            else:
                selected = k == (self.n_iterations - 1 if self.iteration == "last" else int(self.iteration))
            if selected:
                self.selected_iteration_, self.forest_ = k, forest
            del forest
            imp = np.clip(imp, 0.0, None)
            weights = np.maximum(imp / imp.sum() if imp.sum() > 0 else np.ones_like(imp), self.weight_floor)
            progress.update()
        self.oob_errors_ = np.array(self.oob_errors_)
        self.importances_ = np.array(self.importances_)
        self.feature_weights_ = np.array(self.feature_weights_)
        if self.classification_:
            self.classes_ = self.forest_.classes_
        share_feature_names(self, self.forest_)

    def _bootstrap_stage(self, X, y, z, n_jobs, progress) -> InteractionTable:
        """One unit of work per bootstrap: on the cluster's workers with a distributed joblib
        backend, else on threads here (the forest, paths and RIT release the GIL). Each draws from
        its own seeds, so the result does not depend on where it runs. R style scores its
        candidates, known before the bootstraps, in each unit. Otherwise a bootstrap's scores need
        the sets every other bootstrap finds, so its leaves wait for them: on disk (a temporary
        directory), not in memory, which then does not grow with the number of bootstraps."""
        units = [(b,) for b in range(self.n_bootstraps_)]
        lean = copy.copy(self)  # what a bootstrap reads, without the forest (sent to the workers)
        del lean.forest_
        scorings = [None if c is None else _Scoring(c) for c in self._candidates(X, z)]
        n_sides = len(scorings)
        parted = is_feature_parallel(X)
        with contextlib.ExitStack() as stack:
            if cluster_threads() and not parted:
                runs = run_units(_bootstrap_unit, (lean, X, y, z, scorings), units, in_place=(X,))
            else:  # threads that stop with the fit on Ctrl-C; a feature-parallel X's fits one at a time
                runs = stack.enter_context(worker_threads(1 if parted else n_jobs))(
                    lambda unit: _bootstrap_unit(lean, X, y, z, scorings, *unit), units)
            found, results = [[] for _ in range(n_sides)], [[] for _ in range(n_sides)]
            spill = None
            if scorings[0] is None:
                spill = stack.enter_context(tempfile.TemporaryDirectory(prefix="pyinterp-irf-"))
            for b, sides in enumerate(runs):
                for side, (result, sets) in enumerate(sides):
                    if spill is not None:  # the leaves to disk: one file of .npy records (an .npz checksums every byte)
                        path = os.path.join(spill, f"bootstrap{b}-side{side}.npy")
                        with open(path, "wb") as file:
                            for array in result.values():
                                np.save(file, array)
                        result = (path, tuple(result))
                    results[side].append(result)
                    found[side].append(sets)
                progress.update()
            scored = []
            for side in range(n_sides):
                if scorings[side] is None:
                    scorings[side] = _Scoring(set().union(*found[side]))
                    prevalences = Parallel(n_jobs=n_jobs, backend="threading")(
                        delayed(_spilled_prevalences)(*spilled, scorings[side].queries) for spilled in results[side])
                    results[side] = [scorings[side].scores(*p) for p in prevalences]
                scored.append(self._score(found[side], results[side], scorings[side].candidates))
            return self._table(scored)

    def _candidates(self, X, z) -> list:
        """Per side (the class of interest; the other rows too with ``rit_leaves="both"``), R
        style: the sets one RIT finds on the selected forest's out-of-bag leaves, the only ones
        scored; the other styles (None) score every set any bootstrap found."""
        candidates = [None] * (2 if rit_leaves(self) == "both" else 1)
        if self.style == "R":
            candidates = BootstrapLeaves(self.forest_, X, z, self).rits(self, self.rit_seed_)
        if r_conventions(self):
            self.forest_._forest.drop_oob_leaves()  # forest_ is kept: let its recorded leaves go
        return candidates

    def bootstrap(self, X, y, index):
        """Bootstrap ``index`` of the fit, redone exactly as ``fit`` did it, for diagnosing why a
        set is or is not stable (bench/studies/diagnose_irf_stability.py does).

        X, y must be the training data. Returns a :class:`BootstrapRun`: the resampled rows, the
        bootstrap forest (fitted on them with the selected iteration's feature weights), the leaves
        RIT drew from and the sets it reported (tuples of ``encode``'s signed codes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training data, as given to :meth:`fit` (checked against its columns; a dask
            array or ColumnFiles too).
        y : array-like of shape (n_samples,)
            The training target, as given to :meth:`fit`.
        index : int
            The bootstrap, from 0 to ``n_bootstraps - 1``.

        Returns
        -------
        BootstrapRun
            A named tuple: ``rows`` (the resampled row indices; under styles ``"rules"`` and
            ``"R"`` the distinct ones the forest was fitted on), ``forest``, ``leaves`` (a
            ``BootstrapLeaves``: each leaf's path, size, class-1 count and side), ``interactions``
            (the sets RIT found on the class of interest's leaves) and ``other_interactions``
            (with ``rit_leaves="both"``, those found on the other leaves, else empty). The sets
            are tuples of integer codes: :func:`~pyinterp.interactions.decode` reads them
            (unsigned paths hold feature indices instead).

        Raises
        ------
        ValueError
            If ``index`` is out of range.

        Examples
        --------
        >>> from pyinterp import IterativeRandomForest
        >>> from pyinterp.datasets import make_lss
        >>> from pyinterp.interactions import decode
        >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
        >>> irf = IterativeRandomForest(n_iterations=2, n_estimators=30, n_bootstraps=3, rit_n_trees=50,
        ...                             random_state=0).fit(X, y)
        >>> run = irf.bootstrap(X, y, 0)
        >>> run.rows.shape, run.forest.n_estimators  # the distinct rows drawn; a fifth of n_estimators
        ((183,), 6)
        >>> sorted(decode(s) for s in run.interactions)[:2]
        [((0, -1), (1, -1)), ((0, -1), (1, -1), (2, 1))]
        """
        check_is_fitted(self, "bootstrap_seeds_")
        if is_feature_parallel(X):
            check_columns_X(X)
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                                 f"{self.n_features_in_} features as input")
            y = check_array(y, ensure_2d=False, dtype=None, input_name="y")
        else:
            X, y = validate_data(self, X, y, reset=False, **FOREST_FIT_X)
            X = core_X(X)
        if not isinstance(index, Integral) or not 0 <= index < self.n_bootstraps_:
            raise ValueError(f"index must be in [0, {self.n_bootstraps_}), got {index}")
        return self._bootstrap(X, y, self._positive(y, fitted=True), index)

    def _positive(self, y, fitted=False):
        """z = 1 for rows of the class of interest (classification) or above the cut (regression),
        which fit sets (``class_id_``, ``cut_``) and a later call (fitted) only reads."""
        if self.classification_:
            classes = np.unique(y)
            target = self.class_id_ if fitted else classes[-1] if self.class_id is None else self.class_id
            if target not in classes:
                raise ValueError(f"class_id {target!r} is not one of the classes {classes.tolist()}")
            self.class_id_ = target
            return (y == target).astype(np.float64)
        y = y.astype(np.float64)
        cut = self.cut_ if fitted else float(np.median(y)) if self.cut is None else float(self.cut)
        z = ((y >= cut) if r_conventions(self) else (y > cut)).astype(np.float64)
        if r_conventions(self) and z.all():  # the cut is y's minimum: R would have no class 0; the ties go there
            z = (y > cut).astype(np.float64)
        if not 0 < z.sum() < len(z):
            raise ValueError(f"the cut {cut} leaves no rows on one side of y")
        self.cut_ = cut
        return z

    def _resample(self, y, seed):
        """Rows of one bootstrap: ``_bootstrap_rows`` drawn with replacement, per class in
        proportion to its size (largest remainders) when classifying."""
        rng = np.random.RandomState(seed)
        m = self._bootstrap_rows
        if not self.classification_:
            return rng.randint(len(y), size=m)
        groups = [np.flatnonzero(y == c) for c in np.unique(y)]
        exact = m * np.array([len(g) for g in groups]) / len(y)
        sizes = np.floor(exact).astype(np.intp)
        sizes[np.argsort(sizes - exact, kind="stable")[:m - sizes.sum()]] += 1
        return np.concatenate([rng.choice(g, size=k) for g, k in zip(groups, sizes)])

    def _bootstrap(self, X, y, z, index) -> BootstrapRun:
        sample_seed, forest_seed = (int(s) for s in self.bootstrap_seeds_[index])
        rows = self._resample(y, sample_seed)
        if r_conventions(self):  # R's oob.importance: the forest sees each drawn row once
            rows = np.unique(rows)
        forest = self._forest(forest_seed, 1, self.bootstrap_n_estimators_)
        X = take_X_rows(X, rows)  # a feature-parallel X's files or chunks read at those rows
        forest.fit(X, y[rows], feature_weights=self.feature_weights_[self.selected_iteration_])
        leaves = BootstrapLeaves(forest, X, z[rows], self)
        share_feature_names(self, forest)  # after the leaves, which read the validated array
        sets = leaves.rits(self, forest_seed)
        return BootstrapRun(rows, forest, leaves, sets[0], sets[1] if len(sets) > 1 else [])

    # -- scoring -------------------------------------------------------------------------------

    def _score(self, found, per_run, candidates) -> tuple:
        """The candidates and their columns from their scores on every bootstrap forest (per_run,
        one dict of score arrays per bootstrap) and the sets each bootstrap's RIT found."""
        found = [set(f) for f in found]
        scores = {name: np.array([run[name] for run in per_run]).reshape(len(per_run), len(candidates))
                  for name in _SCORES}
        recovered = np.array([[s in f for s in candidates] for f in found], dtype=float).reshape(scores["cpe"].shape)
        if r_conventions(self):
            # R's summary keeps, per interaction, the bootstraps whose RIT found something and where
            # cpe, fsd and mip are all finite; every column averages those bootstraps only.
            kept = np.isfinite(scores["cpe"]) & np.isfinite(scores["fsd"]) & np.isfinite(scores["mip"])
            kept &= np.array([len(f) > 0 for f in found])[:, None]
            masks = dict.fromkeys(_SCORES, kept)
        else:
            kept = np.ones_like(recovered, dtype=bool)
            masks = {name: np.isfinite(values) for name, values in scores.items()}
        # Stability over every bootstrap, as the method defines it, but R's over those it keeps: a
        # set found once, where no other bootstrap could score it, has R stability 1.
        columns = {"stability": _masked_mean(recovered, kept) if self.style == "R" else recovered.mean(axis=0)}
        for name in _SCORES:
            columns[name] = _masked_mean(scores[name], masks[name])
            if name in _LOG_SCORES:
                columns[f"sta_{name}"] = _masked_mean(scores[name] > 0, kept)
        scored = kept.any(axis=0)  # R's summary has no row for a set no bootstrap kept
        return [s for s, k in zip(candidates, scored) if k], {name: v[scored] for name, v in columns.items()}

    def _table(self, scored) -> InteractionTable:
        """One table of the sides' (candidates, columns), with their ``direction`` (+1: the class
        of interest, -1: the other rows) and ``tier`` (rule_tiers), ordered by ``TABLE_ORDER``,
        then the direction and the features."""
        features = [decode(s) if self.signed else tuple((k, 0) for k in s) for c, _ in scored for s in c]
        columns = {name: np.concatenate([cols[name] for _, cols in scored]) for name in scored[0][1]}
        columns["direction"] = np.concatenate([np.full(len(c), 1 - 2 * side) for side, (c, _) in enumerate(scored)])
        columns["tier"] = rule_tiers(features, columns)
        keys = order_keys(columns) if self.style == "rules" else [
            -np.nan_to_num(columns[c], nan=-np.inf) for c in TABLE_ORDER[self.style]]
        order = sorted(range(len(features)),
                       key=lambda i: (*(k[i] for k in keys), -columns["direction"][i], features[i]))
        groups = getattr(self, "feature_groups_", None)  # absent in pickles of 0.1.0
        names = groups.names if groups is not None else getattr(self, "feature_names_in_", None)
        return InteractionTable([features[i] for i in order], {c: v[order] for c, v in columns.items()}, names)

    def rule(self, interaction, *, precision=4):
        """The :class:`~pyinterp.interactions.InteractionRule` of an interaction - a record of
        ``interactions_``, an index into it, or a signed set by index or name - with thresholds from
        the leaves of ``forest_`` (the selected iteration's forest) whose signed path, read as the
        bootstraps read them (``first_split``), contains it. For a classifier the rule's values are
        fractions of ``class_id_``. Needs ``signed=True`` and no ``feature_groups``.

        Parameters
        ----------
        interaction : record, int or sequence of (int or str, int)
            A record of ``interactions_``, an index into it (negative ones count from the end),
            or a signed set ``[(k, sign), ...]`` with k a feature index or column name.
        precision : int, default=4
            Significant digits of the printed thresholds and value, from 1 to 17.

        Returns
        -------
        InteractionRule
            The rule: median thresholds, and the leaves' bounds, values and in-bag sizes.

        Raises
        ------
        ValueError
            If fitted with ``feature_groups`` or ``signed=False``, no leaf's path contains the
            set, or it holds a categorical feature.
        IndexError
            If an index is not a row of ``interactions_``.

        See Also
        --------
        interaction_rule : The same for any forest and paths.

        Examples
        --------
        >>> from pyinterp import IterativeRandomForest
        >>> from pyinterp.datasets import make_lss
        >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
        >>> irf = IterativeRandomForest(n_iterations=2, n_estimators=30, n_bootstraps=3, rit_n_trees=50,
        ...                             random_state=0).fit(X, y)
        >>> print(irf.rule(0))
        x2 <= 0.5061 and x3 <= 0.5386 -> 1.372
        >>> print(irf.rule([(0, -1), (1, -1)], precision=2))
        x0 <= 0.41 and x1 <= 0.52 -> 1.3
        >>> int(irf.rule(0).indicator(X).sum())
        80
        """
        check_is_fitted(self, "interactions_")
        if getattr(self, "feature_groups_", None) is not None:
            raise ValueError("interactions between feature groups have no thresholds: fit without feature_groups "
                             "for rules")
        names = getattr(self, "feature_names_in_", None)
        features = resolve_interaction(interaction, self.interactions_, None if names is None else tuple(names))
        every = self.signed and not self.first_split
        paths = signed_paths(self.forest_, 0.0, first_occurrence="every" if every else "after_filter")
        return interaction_rule(self.forest_, paths, features, class_id=getattr(self, "class_id_", None),
                                precision=precision)

    # -- prediction ----------------------------------------------------------------------------

    def __setstate__(self, state):
        state.setdefault("task", "auto")  # pickles of 0.1.0 predate the parameter
        state.setdefault("style", "pyinterp")  # earlier pickles were fitted in this style
        state.setdefault("forest_min_node_size", 1)  # and grew their trees to purity
        state.setdefault("categorical_features", None)
        if "bootstrap_seeds_" in state:  # fitted before n_bootstraps could be None
            state.setdefault("n_bootstraps_", len(state["bootstrap_seeds_"]))
        if "_bootstrap_trees" in state:
            state["bootstrap_n_estimators_"] = state.pop("_bootstrap_trees")
        super().__setstate__(state)

    def __sklearn_tags__(self):
        # The task parameter says what cross-validation and scorers may assume (stratified folds,
        # predict_proba); "auto" decides only at fit, so it declares neither.
        tags = super().__sklearn_tags__()
        if self.task == "classification":
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags()
        elif self.task == "regression":
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
        return tags

    def _declared_classifier(self):
        return self.task == "classification"

    @available_if(_declared_classifier)
    def predict_proba(self, X):
        """Class probabilities of the selected iteration's forest, columns in the order of
        ``classes_``; with ``task="classification"`` (what the tags declare), not "auto".

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows with the training columns (count and names, checked); categorical columns as at
            fit.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            ``forest_``'s class probabilities.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import IterativeRandomForest
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(400, 6))
        >>> y = ((X[:, 0] > 0.5) & (X[:, 1] > 0.5)).astype(int)
        >>> irf = IterativeRandomForest(n_iterations=2, n_estimators=30, n_bootstraps=3, rit_n_trees=50,
        ...                             task="classification", random_state=0).fit(X, y)
        >>> irf.predict_proba(X[:3]).shape
        (3, 2)
        """
        check_columns(self, X)
        return self.forest_.predict_proba(self._as_codes(X))

    def score(self, X, y, sample_weight=None):
        """Accuracy (classification) or R^2 (regression) of :meth:`predict`, as scikit-learn's
        classifiers and regressors score.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Test rows with the training columns.
        y : array-like of shape (n_samples,)
            Their true labels or values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the score; None: equal.

        Returns
        -------
        float
            Accuracy when y was read as classes (``classification_``), else R^2.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import IterativeRandomForest
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(400, 6))
        >>> y = ((X[:, 0] > 0.5) & (X[:, 1] > 0.5)) ^ (rng.uniform(size=400) < 0.1)
        >>> irf = IterativeRandomForest(n_iterations=2, n_estimators=30, n_bootstraps=3, rit_n_trees=50,
        ...                             random_state=0).fit(X[:300], y[:300].astype(int))
        >>> irf.classification_, irf.interactions_.label(irf.interactions_.features[0])
        (True, 'x0+ & x1+')
        >>> round(float(irf.score(X[300:], y[300:].astype(int))), 3)
        0.86
        """
        check_is_fitted(self, "forest_")
        metric = accuracy_score if self.classification_ else r2_score
        return metric(y, self.predict(X), sample_weight=sample_weight)

    def predict(self, X):
        """Prediction of the selected iteration's forest; X's columns are checked against the
        training columns (count and names).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows with the training columns; categorical columns as at fit.

        Returns
        -------
        ndarray of shape (n_samples,)
            ``forest_``'s prediction: class labels when y was read as classes, else values.

        Examples
        --------
        >>> from pyinterp import IterativeRandomForest
        >>> from pyinterp.datasets import make_lss
        >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
        >>> irf = IterativeRandomForest(n_iterations=2, n_estimators=30, n_bootstraps=3, rit_n_trees=50,
        ...                             random_state=0).fit(X, y)
        >>> irf.predict(X[:3]).round(3).tolist()
        [-0.289, 0.046, 0.889]
        """
        check_columns(self, X)
        return self.forest_.predict(self._as_codes(X))


class BootstrapRun(NamedTuple):
    """One bootstrap of :class:`IterativeRandomForest` (see its ``bootstrap`` method)."""

    rows: np.ndarray
    forest: RandomForestClassifier | RandomForestRegressor
    leaves: BootstrapLeaves
    interactions: list
    other_interactions: list  # with rit_leaves="both": the sets RIT found on the other rows' leaves, else []


class BootstrapLeaves:
    """The leaves of one bootstrap forest, one row per leaf in the order of ``paths``.

    Rows are counted in every tree (style "pyinterp"), or only in the trees they are out-of-bag
    for (style "R", R's ``oob.importance``).

    Attributes
    ----------
    paths : SignedPaths
        Each leaf's path items (signed codes, or feature indices when ``signed=False``).
    size : ndarray of float
        Rows falling in the leaf.
    positive : ndarray of float
        Of those, rows of the class of interest (size x precision).
    is1 : ndarray of bool
        Whether the leaf predicts the class of interest (above ``cut_`` in regression).
    mass1, mass0 : ndarray of float
        What prevalence shares out: style "R", the leaf's rows of the class of interest and its
        other rows (R counts rows; leaves below ``min_node_size`` count none, in ``size`` too);
        style "pyinterp",
        the size of the leaves predicting the class of interest and of the other leaves.
    """

    def __init__(self, forest, X, z, params):
        # Unsigned paths hold the same features under either first-occurrence rule.
        every = params.signed and not params.first_split
        paths = signed_paths(forest, 0.0, weight="samplesize", first_occurrence="every" if every else "after_filter",
                             feature_groups=getattr(params, "feature_groups_", None))
        codes = paths.codes if params.signed else paths.codes >> 1
        self.paths = SignedPaths(paths.indptr, codes.astype(np.int32, copy=False), paths.weight, paths.depth,
                                 paths.tree, paths.leaf, paths.names)
        # X is the fit's validated array (the forest's training X in R style: its rows in the trees
        # they are out of bag for): the rows and class-1 rows per leaf through the core, without
        # the column-name check (the selected forest carries the estimator's names, which an array
        # lacks).
        core, oob = forest_view(forest).core, r_conventions(params)
        size, positive = _leaf_sums(forest, core, X, np.ascontiguousarray(z, dtype=np.float64), oob)
        tree, leaf = paths.tree.astype(np.int64), paths.leaf.astype(np.int64)
        node = (np.cumsum(core.node_counts) - core.node_counts)[tree] + leaf
        self.size, self.positive = size[node], positive[node]
        value = core.node_values(tree, leaf)
        if params.classification_:  # leaves predicting the class of interest (none if a small resample lacks it)
            column = int(np.searchsorted(forest.classes_, params.class_id_))
            present = column < len(forest.classes_) and forest.classes_[column] == params.class_id_
            self.is1 = (value[:, column] == value.max(axis=1)) if present else np.zeros(len(paths), dtype=bool)
        else:
            self.is1 = value[:, 0] > params.cut_
        if r_conventions(params):  # R drops the leaves below min_node_size before scoring
            small = self.size < params.min_node_size
            self.size[small], self.positive[small] = 0.0, 0.0
            self.mass1, self.mass0 = self.positive, self.size - self.positive
        else:
            self.mass1, self.mass0 = self.size * self.is1, self.size * ~self.is1

    def flipped(self) -> BootstrapLeaves:
        """The same leaves seen from the other side: the other rows as the class of interest."""
        other = copy.copy(self)
        other.positive = self.size - self.positive
        other.is1 = ~self.is1
        other.mass1, other.mass0 = self.mass0, self.mass1
        return other

    def sides(self, params) -> list:
        """These leaves, and with ``rit_leaves="both"`` the same leaves seen from the other side."""
        return [self, self.flipped()] if rit_leaves(params) == "both" else [self]

    def rits(self, params, seed) -> list:
        """Each side's RIT sets, the other side's from its own seed (``other_side_seed``)."""
        return [leaves.rit(params, s) for leaves, s in zip(self.sides(params), (seed, other_side_seed(seed)))]

    def rit(self, params, seed) -> list:
        # size x precision = the leaf's class-1 count
        weight = self.positive if params.rit_leaf_weight == "size_precision" else self.size
        keep = (self.size >= params.min_node_size) & (weight > 0)
        if rit_leaves(params) != "all":
            keep &= self.is1
        rows = np.flatnonzero(keep)
        if len(rows) == 0:
            return []
        p = self.paths
        indptr, codes = take_rows(p.indptr, p.codes, rows)
        depth = rit_levels(params.rit_depth, params.rit_root_sets)
        out_indptr, out_codes, _ = rit_csr(indptr, codes, weight[rows], depth=depth,
                                           n_children=params.rit_n_children, min_size=params.rit_min_size,
                                           n_trees=params.rit_n_trees, root_sets=params.rit_root_sets,
                                           report=params.rit_report, seed=seed, n_jobs=1)
        return to_tuples(out_indptr, out_codes)

    def scoring_arrays(self) -> dict:
        """What the scores read: the paths' items and the leaves' masses and class-1 counts."""
        return {"indptr": self.paths.indptr, "codes": self.paths.codes, "mass1": self.mass1, "mass0": self.mass0,
                "positive": self.positive}

    def prevalences(self, queries):
        """prev1, prev0 (shares of ``mass1`` / ``mass0`` in leaves whose path contains S) and the
        precision of S (class-1 fraction of the rows in those leaves)."""
        return _prevalences(queries, **self.scoring_arrays())


def _leaf_sums(forest, core, X, z, oob):
    """core.leaf_sums of X's rows (in R style their out-of-bag leaves, which the fit recorded: X
    is not read). A feature-parallel X without recorded leaves is read at the forest's split
    columns a run of rows at a time; the sums are of counts and 0/1, so exact in any order."""
    threads = resolve_n_threads(forest.n_jobs)
    if not is_feature_parallel(X):
        return core.leaf_sums(core_X(X), z, threads, oob=oob, training=oob)
    if oob:
        return core.leaf_sums(np.broadcast_to(np.float32(0), X.shape), z, threads, oob=True, training=True)
    columns = forest._split_columns(X)
    size, positive = 0.0, 0.0
    for start, stop, values in columns.each_run():
        s, p = columns.core.leaf_sums(values, z[start:stop], threads)
        size, positive = size + s, positive + p
    return size, positive


def rit_levels(rit_depth, root_sets) -> int:
    """RIT levels of the core (the root is level 1) for ``rit_depth``, R's depth: the number of
    paths a RIT leaf intersects, the root's ``root_sets`` included (at least the root)."""
    return max(rit_depth - root_sets + 1, 1)


def _prevalences(queries, indptr, codes, mass1, mass0, positive):
    mass1_s, mass0_s, pos = sum_codes(indptr, codes, queries, np.column_stack([mass1, mass0, positive])).T
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = pos / (mass1_s + mass0_s)
    return mass1_s / max(mass1.sum(), 1e-300), mass0_s / max(mass0.sum(), 1e-300), prec


# np.load parses each header with ast.literal_eval, and CPython 3.11 can fail parsing in two threads
# at once ("AST constructor recursion depth mismatch", gh-106905): the threads read one at a time.
_LOAD_LOCK = threading.Lock()


def _spilled_prevalences(path, names, queries):
    with _LOAD_LOCK, open(path, "rb") as file:
        arrays = {name: np.load(file) for name in names}
    return _prevalences(queries, **arrays)


def why_none(irf) -> str:
    """Why a fitted iRF's table is empty, and what to try."""
    paths = signed_paths(irf.forest_, 0.0)
    longest = int(np.diff(paths.indptr).max(initial=0))
    if longest < 2:
        return (f"every decision path of the selected forest splits on {'one feature' if longest else 'no feature'}: "
                "single splits separate the target, and an interaction needs two features on one path.")
    where = "the selected forest's out-of-bag leaves" if irf.style == "R" else "the bootstraps' leaves"
    side = {"class": "the class of interest's paths", "both": "the paths of either side", "all": "the paths"}
    scored = ", or no bootstrap could score those it found" if r_conventions(irf) else ""
    wider = ", or the default style, whose candidates are every bootstrap's sets," if irf.style == "R" else ""
    return (f"the selected forest's paths hold up to {longest} features, but random intersection trees over "
            f"{where} found no {irf.rit_min_size} or more features that recur together on "
            f"{side[rit_leaves(irf)]}{scored} (more rit_n_trees{wider} search wider).")


def r_conventions(params) -> bool:
    """Whether a fit counts, cuts and scores as R iRF 3.0 does: under styles "R" and "rules"."""
    return params.style != "pyinterp"


def rit_leaves(params) -> str:
    """``rit_leaves`` resolved: None is "both" under style "rules" and "class" under the others."""
    if params.rit_leaves is not None:
        return params.rit_leaves
    return "both" if params.style == "rules" else "class"


def other_side_seed(seed) -> int:
    """The seed of the RIT over the other side's leaves (``rit_leaves="both"``), from the seed of
    the class of interest's RIT, which stays what it is without the other side."""
    return (int(seed) + SEED_BOUND // 2) % SEED_BOUND


def _bootstrap_unit(irf, X, y, z, scorings, index):
    """Per side, bootstrap ``index``'s candidate scores (scoring given) or scoring arrays, and the
    sets its RIT found; the forest stays here."""
    run = irf._bootstrap(X, y, z, index)
    found = (run.interactions, run.other_interactions)
    return [(leaves.scoring_arrays() if scoring is None else scoring.scores(*leaves.prevalences(scoring.queries)),
             sets) for scoring, leaves, sets in zip(scorings, run.leaves.sides(irf), found)]
