"""Random-forest estimators on pyinterp's C++ engine, following scikit-learn's estimator contract."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from .. import _core
from .._progress import Progress, guarded_fit
from .._seeds import root_seed
from .._validation import (
    INT32_MAX,
    FOREST_X,
    ForestInputMixin,
    IntInterval,
    check_classification_targets,
    core_X,
    mapped_file,
    check_forest_size,
    check_output_size,
    check_weights_vector,
    count_or_fraction,
    column_indices,
    resolve_max_features,
    resolve_n_draws,
    regression_target,
    resolve_n_threads,
    squares_leave_float64,
    validate_data,
    validate_fit_data,
)
from .categories import CATEGORICAL_CONSTRAINT, CategoricalMixin
from .chunks import fit_forest_chunks
from .export import TreeEstimators, to_sklearn
from .feature_parallel import check_columns_X, fit_forest_columns, is_feature_parallel, validate_columns_data
from .split_columns import SplitColumns
from .tree import Tree

__all__ = ["RandomForestClassifier", "RandomForestRegressor"]


def _check_node_values(params, n_samples, n_values):
    """Every node holds n_values values (each output's mean, or its class fractions at the stride
    of the most classes): with many classes or outputs they dominate a tree and can exceed memory,
    which is known before the trees grow. A tree has fewer leaves than the distinct rows drawn
    (for bootstrap draws, their expected number and 6 standard deviations), max_leaf_nodes or
    2^max_depth."""
    n, draws = n_samples, params.n_draws
    leaves = min(n, draws)
    if params.bootstrap:
        distinct = -n * math.expm1(draws * math.log1p(-1.0 / n)) if n > 1 else 1.0
        leaves = min(leaves, math.ceil(distinct + 6.0 * math.sqrt(distinct)))
    if params.max_leaf_nodes > 0:
        leaves = min(leaves, params.max_leaf_nodes)
    if 0 <= params.max_depth < 63:
        leaves = min(leaves, 2**params.max_depth)
    nodes = 2 * leaves - 1
    check_output_size(f"{params.n_estimators} trees of up to {nodes:,} nodes, each holding {n_values:,} values,",
                      params.n_estimators * nodes * 8 * n_values,
                      "grow smaller trees (max_leaf_nodes, max_depth, min_samples_leaf), fewer at a time, or on "
                      "fewer classes (merge rare ones)")


class _BaseForest(CategoricalMixin, ForestInputMixin, BaseEstimator):
    """Shared fit/predict machinery; subclasses define the task and their criteria."""

    # Criterion names accepted by the estimator -> the core's Criterion they select.
    _criteria: dict = {}
    # scikit-learn's declarations; the data-dependent checks (max_features against the number of
    # features, max_samples against the rows, fractions resolved to counts) are in _params.
    _parameter_constraints: dict = {
        "n_estimators": [IntInterval(Integral, 1, INT32_MAX, closed="both")],
        "max_depth": [IntInterval(Integral, 1, None, closed="left"), None],
        "min_samples_split": [IntInterval(Integral, 2, None, closed="left"),
                              Interval(RealNotInt, 0.0, 1.0, closed="right")],
        "min_samples_leaf": [IntInterval(Integral, 1, None, closed="left"),
                             Interval(RealNotInt, 0.0, 0.5, closed="right")],
        "min_weight_fraction_leaf": [Interval(Real, 0.0, 0.5, closed="both")],
        "max_features": [IntInterval(Integral, 1, None, closed="left"), Interval(RealNotInt, 0.0, 1.0, closed="right"),
                         StrOptions({"sqrt", "log2"}), None],
        "max_leaf_nodes": [IntInterval(Integral, 2, None, closed="left"), None],
        "min_impurity_decrease": [Interval(Real, 0.0, None, closed="left")],
        "bootstrap": ["boolean"],
        "oob_score": ["boolean", callable],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "max_samples": [None, Interval(RealNotInt, 0.0, None, closed="neither"),
                        IntInterval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
        "monotonic_cst": ["array-like", None],
        "min_node_size": [IntInterval(Integral, 1, None, closed="left"), None],
        "keep_oob_leaves": ["boolean"],
        "always_split_features": ["array-like", str, Integral, None],
        "categorical_features": CATEGORICAL_CONSTRAINT,
    }

    def __init__(
        self,
        n_estimators,
        *,
        criterion,
        max_depth,
        min_samples_split,
        min_samples_leaf,
        min_weight_fraction_leaf,
        max_features,
        max_leaf_nodes,
        min_impurity_decrease,
        bootstrap,
        oob_score,
        n_jobs,
        random_state,
        verbose,
        warm_start,
        ccp_alpha,
        max_samples,
        monotonic_cst,
        min_node_size,
        keep_oob_leaves,
        always_split_features,
        categorical_features,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.ccp_alpha = ccp_alpha
        self.max_samples = max_samples
        self.monotonic_cst = monotonic_cst
        self.min_node_size = min_node_size
        self.keep_oob_leaves = keep_oob_leaves
        self.always_split_features = always_split_features
        self.categorical_features = categorical_features

    # -- fitting -------------------------------------------------------------------------------

    def _params(self, n_samples, n_features, n_drawable, weight_sum=None, always=()):
        """weight_sum: the sum of the row weights (class weights included), None when unweighted;
        always: the always-split columns, whose count max_features's fractions leave out."""
        p = _core.ForestParams()
        p.criterion = self._criteria[self.criterion]
        p.n_estimators = self.n_estimators
        p.bootstrap = bool(self.bootstrap)
        p.n_draws = resolve_n_draws(self.max_samples, n_samples, self.bootstrap, weight_sum)
        p.max_features = resolve_max_features(self.max_features, n_features, n_drawable, basis=n_features - len(always))
        p.always_features = [int(j) for j in always]
        # Node sizes and depths never exceed the rows drawn: larger limits mean the same ("never split",
        # "no limit") and are clamped there, so the core's arithmetic on them (2 * min_samples_leaf)
        # cannot overflow.
        most = max(n_samples, p.n_draws) + 1
        p.min_samples_split = min(count_or_fraction("min_samples_split", self.min_samples_split, n_samples,
                                                    min_count=2), most)
        p.min_samples_leaf = min(count_or_fraction("min_samples_leaf", self.min_samples_leaf, n_samples,
                                                   fraction_max=0.5), most)
        p.min_weight_fraction_leaf = float(self.min_weight_fraction_leaf)
        # A node of min_node_size draws or fewer stays a leaf (a single draw always does).
        size = self.min_node_size
        p.min_weight_split = size + 1.0 if size is not None and size > 1 else 0.0
        p.max_depth = -1 if self.max_depth is None else min(self.max_depth, most)
        # A tree has fewer than 2^31 nodes: larger budgets are the same as that one (still best-first).
        p.max_leaf_nodes = -1 if self.max_leaf_nodes is None else min(self.max_leaf_nodes, INT32_MAX)
        p.min_impurity_decrease = float(self.min_impurity_decrease)
        p.ccp_alpha = float(self.ccp_alpha)
        p.seed = root_seed(self.random_state)
        p.n_threads = resolve_n_threads(self.n_jobs)
        # The out-of-bag rows ride along as the trees grow, so oob_score's predictions need no
        # descent; keep_oob_leaves keeps the leaves they reach after the fit.
        p.record_oob_leaves = bool(self.oob_score) or bool(self.keep_oob_leaves)
        if self.oob_score and not p.bootstrap and p.n_draws == n_samples:
            raise ValueError("Out of bag estimation only available if bootstrap=True (or, in pyinterp, with "
                             "max_samples below the number of rows: subsampling without replacement)")
        return p

    def _fit(self, X, y, targets, n_classes, sample_weight, feature_weights, class_weight_rows=None,
             balanced_subsample=False):
        """class_weight_rows: per-row class weights, multiplied into the validated sample weights."""
        n_samples, n_features = X.shape
        if sample_weight is not None:
            sample_weight = check_weights_vector("sample_weight", sample_weight, n_samples, what="row")
        if class_weight_rows is not None:
            sample_weight = class_weight_rows if sample_weight is None else sample_weight * class_weight_rows
        always = self._always_split(n_features)
        if feature_weights is not None:
            feature_weights = check_weights_vector("feature_weights", feature_weights, n_features, what="feature")
            feature_weights /= feature_weights.max()
            n_drawable = int(np.count_nonzero(np.delete(feature_weights, always)))
        else:
            n_drawable = n_features - len(always)
        weight_sum = None if sample_weight is None else float(sample_weight.sum())
        params = self._params(n_samples, n_features, n_drawable, weight_sum, always)
        params.balanced_subsample = balanced_subsample
        params.monotonic_cst = self._monotonic_cst(X, n_classes, 1 if targets.ndim == 1 else targets.shape[1])
        if self._category_encoder is not None:
            params.categorical_features = self._category_encoder.columns.tolist()
        grown = self._grown_trees(n_samples, n_features)
        if grown:
            # The new trees continue the streams of the old ones: the result is the forest that
            # fitting n_estimators trees at once gives.
            params.seed = getattr(self, "_seed", params.seed)  # pickles of 0.1.0 lack it: random_state's
            params.first_tree = grown
            params.n_estimators = self.n_estimators - grown
        check_forest_size("n_estimators", params.n_estimators, n_samples)
        n_outputs = 1 if targets.ndim == 1 else targets.shape[1]
        _check_node_values(params, n_samples, n_outputs * max(n_classes, 1))
        self._seed = params.seed
        X = core_X(X)
        if params.n_estimators > 0:
            regression = n_classes == 0
            data = (X, targets if regression else None, None if regression else targets, n_classes, sample_weight,
                    feature_weights, params)
            # On a cluster the trees grow elsewhere: the report comes when they are back.
            with Progress(self.verbose, params.n_estimators, "trees", core=True):
                if is_feature_parallel(X):
                    forest = fit_forest_columns(*data, codes=self._category_encoder)
                else:
                    forest = fit_forest_chunks(*data)  # None without a distributed joblib backend
                if forest is None:
                    forest = _core.fit_forest(*data, mapped_file=mapped_file(X))
            self._forest = _core.join_forests([self._forest, forest]) if grown else forest
        if self.oob_score:
            # A feature-parallel X's values are not read: the leaves the fit recorded serve (only the shape is).
            self._set_oob_score(np.broadcast_to(np.float32(0), X.shape) if is_feature_parallel(X) else X, y)
        if not self.keep_oob_leaves:
            self._forest.drop_oob_leaves()  # as large as the in-bag counts
        return self

    def _always_split(self, n_features):
        """always_split_features as sorted column indices (names need a fit on named columns)."""
        if self.always_split_features is None:
            return np.empty(0, dtype=np.int64)
        return column_indices("always_split_features", self.always_split_features, n_features,
                              getattr(self, "feature_names_in_", None))

    def _monotonic_cst(self, X, n_classes, n_outputs):
        """The constraints as the core reads them, with scikit-learn's checks and messages; a
        classifier's are flipped, as the core constrains the fraction of the first class."""
        if self.monotonic_cst is None:
            return []
        if n_outputs > 1:
            raise ValueError("Monotonicity constraints are not supported with multiple outputs.")
        cst = np.asarray(self.monotonic_cst)
        if cst.shape != (X.shape[1],):
            raise ValueError(f"monotonic_cst has shape {cst.shape[0] if cst.ndim else cst.shape} but the input data X "
                             f"has {X.shape[1]} features.")
        if not np.all(np.isin(cst, (-1, 0, 1))):
            raise ValueError(f"monotonic_cst must be None or an array-like of -1, 0 or 1, but got {np.unique(cst)}")
        if n_classes > 2:
            raise ValueError("monotonic_cst: Monotonicity constraints are not supported with multiclass classification")
        values = X.data if sp.issparse(X) else X
        # (a feature-parallel X's blocks are asked once made: feature_parallel._refuse_missing)
        if not is_feature_parallel(X) and np.issubdtype(values.dtype, np.floating) and np.isnan(values).any():
            raise ValueError("X contains NaN: monotonic_cst does not support missing values (as in scikit-learn)")
        cst = cst.astype(np.int8)
        return (-cst if n_classes else cst).tolist()

    def _grown_trees(self, n_samples, n_features):
        """With warm_start, the trees fitted already (0 without), after scikit-learn's checks."""
        if not (self.warm_start and hasattr(self, "_forest")):
            return 0
        grown = self._forest.n_trees
        if self.n_estimators < grown:
            raise ValueError(f"n_estimators={self.n_estimators} must be larger or equal to "
                             f"len(estimators_)={grown} when warm_start==True")
        if (n_samples, n_features) != (self._forest.n_samples, self._forest.n_features):
            raise ValueError(f"warm_start adds trees fitted on the same rows: X has shape {(n_samples, n_features)}, "
                             f"the forest was fitted on {(self._forest.n_samples, self._forest.n_features)}")
        if self.n_estimators == grown:
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit new trees.", UserWarning,
                          stacklevel=4)
        return grown

    def _targets(self, X, y):
        """X and y validated for fit, y as scikit-learn's forests take it: 1-d, or 2-d with one
        column per output (a single column warns as scikit-learn does and is one output)."""
        if is_feature_parallel(X):
            X, y = self._column_targets(X, y)
        else:
            X = self._encode_categories(X)
            X, y = validate_fit_data(self, X, y, multi_output=True)
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                          "to (n_samples,), for example using ravel().", DataConversionWarning, stacklevel=3)
            y = y[:, 0]
        return X, y

    def _column_targets(self, X, y):
        """A dask array or ColumnFiles X, fitted feature-parallel: checked by its shape and dtype,
        never loaded here (a ColumnFiles' variant IDs name the features; categorical columns to
        encode alone are read, CategoryEncoder); y checked as validate_data checks it."""
        check_columns_X(X)
        X = self._encode_categories(X)  # the codes are checked by the blocks (feature_parallel._refuse_bad_codes)
        return X, validate_columns_data(self, X, y)

    def _check_encoding(self, encoder):
        old = getattr(self, "_category_encoder", None)
        if self.warm_start and hasattr(self, "_forest") and not _same_encoding(old, encoder):
            raise ValueError("warm_start adds trees on the same categories: categorical_features or the categories of "
                             "X differ from the first fit's")

    def _oob_values(self, X, training=False, core=None):
        """(values, has_oob): each training row's mean over the trees that did not draw it; X
        validated already (by fit, or by the public methods through _oob_rows). training: X
        is fit's own X, so the leaves fit recorded may serve. core: the forest X's columns are
        of (default the fitted one)."""
        core = self._forest if core is None else core
        n_samples = core.n_samples
        if X.shape[0] != n_samples:
            raise ValueError(f"X has {X.shape[0]} rows; out-of-bag predictions are for the {n_samples} training "
                             "rows, in the order fit saw them")
        values, n_trees = core.predict_oob(X, self._threads(), training=training)
        missing = n_trees == 0
        if missing.any():
            # scikit-learn's words, then where pyinterp differs: it predicts 0 for these rows and
            # scores them, which can swamp oob_score_ (a row of y near 1000 predicted 0).
            warnings.warn(
                "Some inputs do not have OOB scores. This probably means too few trees were used to compute "
                f"any reliable OOB estimates. {int(missing.sum())} of {n_samples} rows were in the bag of every "
                "tree: their out-of-bag predictions are NaN and left out of oob_score_.",
                UserWarning,
                stacklevel=3,
            )
            values[missing] = np.nan
        return values, ~missing

    def _checked_rows(self, X):
        """X validated for a fitted forest (prediction, leaves, paths, out-of-bag values)."""
        check_is_fitted(self, "_forest")
        return core_X(validate_data(self, X, reset=False, **FOREST_X))

    def _check_split_X(self, X, name="X"):
        """A feature-parallel X checked for the fitted forest: its form, and its names against the
        training columns' as validate_data checks a data frame's."""
        check_is_fitted(self, "_forest")
        check_columns_X(X, name)
        names, fitted = getattr(X, "feature_names", None), getattr(self, "feature_names_in_", None)
        if names is not None and fitted is not None and X.shape[1] == len(fitted) and not np.array_equal(names,
                                                                                                          fitted):
            k = int(np.flatnonzero(names != fitted)[0])
            raise ValueError(f"{name}'s column {k} is {names[k]!r}, where the forest was fitted on {fitted[k]!r}: "
                             "the feature names should match those that were passed during fit")

    def _split_columns(self, X, name="X"):
        """A feature-parallel X's columns the forest splits on (forest/split_columns.py), X
        checked (_check_split_X)."""
        self._check_split_X(X, name)
        encoder = getattr(self, "_category_encoder", None)
        X = X if encoder is None else encoder.transform(X)  # still feature-parallel, categories as codes
        return SplitColumns(self._forest, X, name, codes=encoder)

    def _recorded_leaves_serve(self, X):
        """Whether the out-of-bag leaves the fit recorded (``keep_oob_leaves=True``) stand for the
        training rows X (feature-parallel, checked): then X's values are not read at all, a
        broadcast zero of its shape standing in; else its split columns are read."""
        self._check_split_X(X)
        core = self._forest
        if not core.has_oob_leaves:
            return False
        if X.shape != (core.n_samples, core.n_features):
            fitted = (core.n_samples, core.n_features)
            raise ValueError(f"X has shape {X.shape}, but the forest was fitted on {fitted}: the recorded out-of-bag "
                             "leaves are of the training X")
        return True

    def _descended(self, X, descend):
        """[descend(core forest, rows)] for X: X validated here; or for a feature-parallel X one
        result per run of rows, their split columns descending the forest renumbered to them."""
        check_is_fitted(self, "_forest")
        if not is_feature_parallel(X):
            return [descend(self._forest, self._checked_rows(X))]
        columns = self._split_columns(X)
        return [descend(columns.core, values) for _, _, values in columns.each_run()]

    def _oob_rows(self, X):
        """(X, training, core) for the out-of-bag values of the training rows X: X validated; a
        feature-parallel X through the leaves the fit recorded (keep_oob_leaves=True: X's values
        are not read), else through leaves recorded now from its split columns (or those columns
        of all rows, when fewer bytes: SplitColumns.out_of_bag), the forest renumbered to them."""
        if not is_feature_parallel(X):
            return self._checked_rows(X), False, None
        values, recorded, columns = self._oob_leaves_X(X, "an out-of-bag prediction", self._threads())
        return values, recorded, None if columns is None else columns.core

    def _oob_leaves_X(self, X, what, n_threads):
        """(X, recorded, columns) for a measure of a feature-parallel X's out-of-bag leaves alone
        (what: the measure, for messages): a zero of X's shape standing in for the leaves the fit
        recorded (columns None), else SplitColumns.out_of_bag's answer and those columns."""
        if self._recorded_leaves_serve(X):
            return np.broadcast_to(np.float32(0), X.shape), True, None
        columns = self._split_columns(X)
        return (*columns.out_of_bag(what, n_threads), columns)

    # -- fitted structure ----------------------------------------------------------------------

    @property
    def trees_(self) -> list[Tree]:
        """The fitted trees, each a set of read-only node arrays (see :class:`~pyinterp.forest.Tree`).

        One :class:`~pyinterp.forest.Tree` per tree, in tree order, built on each read from the
        core's arrays (not copies of them): besides scikit-learn's node arrays they hold each
        node's ``parent``, ``depth`` and ``impurity_decrease`` and the categorical splits' left
        sets. scikit-learn's forests have no such attribute (their trees' ``tree_`` holds the arrays).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3))
        >>> forest = RandomForestRegressor(5, max_depth=2, random_state=0).fit(X, X[:, 0])
        >>> tree = forest.trees_[0]
        >>> tree
        Tree(node_count=7, n_leaves=4, max_depth=2)
        >>> int(tree.feature[0]), tree.depth.tolist()
        (0, [0, 1, 2, 2, 1, 2, 2])
        """
        check_is_fitted(self, "_forest")
        return [Tree(self._forest.tree(t)) for t in range(self._forest.n_trees)]

    @property
    def inbag_counts_(self) -> np.ndarray:
        """How often each training row was drawn for each tree: uint32 of shape (n_estimators, n_samples).

        Row i is out of bag for tree t where ``inbag_counts_[t, i] == 0``. Recorded as the trees
        grow (scikit-learn's forests regenerate their draws from the trees' random states
        instead, and have no such attribute); the out-of-bag measures read it. Without bootstrap
        the counts are 0 or 1 (all 1 without ``max_samples``).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3))
        >>> forest = RandomForestRegressor(5, random_state=0).fit(X, X[:, 0])
        >>> forest.inbag_counts_.shape, forest.inbag_counts_.dtype.name
        ((5, 100), 'uint32')
        >>> forest.inbag_counts_.sum(axis=1).tolist()  # n draws per tree
        [100, 100, 100, 100, 100]
        """
        check_is_fitted(self, "_forest")
        return self._forest.inbag

    @property
    def estimators_samples_(self) -> list:
        """The rows each tree drew (scikit-learn's attribute), from ``inbag_counts_``.

        A list with one int64 array per tree: the training row indices, each repeated as often as
        it was drawn, in increasing order (scikit-learn's lists them in draw order).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3))
        >>> forest = RandomForestRegressor(5, random_state=0).fit(X, X[:, 0])
        >>> rows = forest.estimators_samples_[0]
        >>> len(rows), bool(np.all(np.diff(rows) >= 0))
        (100, True)
        >>> bool(np.array_equal(np.bincount(rows, minlength=100), forest.inbag_counts_[0]))
        True
        """
        check_is_fitted(self, "_forest")
        rows = np.arange(self._forest.n_samples)
        return [np.repeat(rows, counts) for counts in self._forest.inbag]

    @property
    def n_outputs_(self) -> int:
        """The number of outputs of y: its columns when fit was given a 2-d y, else 1.

        A 2-d y of one column is one output (fit warns, as scikit-learn does).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3))
        >>> RandomForestRegressor(5, random_state=0).fit(X, X[:, 0]).n_outputs_
        1
        >>> RandomForestRegressor(5, random_state=0).fit(X, X[:, :2]).n_outputs_
        2
        """
        check_is_fitted(self, "_forest")
        return self._forest.n_outputs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean decrease in impurity (MDI), normalised as scikit-learn does: float64 of shape (n_features,).

        Each tree's importances (the sums of its nodes' ``impurity_decrease`` per feature) are
        normalised to sum to one, trees with a single node are skipped, and the mean over the
        trees is renormalised to sum to one. The impurity is the criterion's. MDI favours
        features with many distinct values; :func:`~pyinterp.importance.mdi_oob` and the other
        out-of-bag measures of :mod:`pyinterp.importance` correct that bias.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 4))
        >>> y = 3 * X[:, 2] + X[:, 0] + rng.normal(scale=0.1, size=200)
        >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
        >>> np.argsort(-forest.feature_importances_).tolist()[:2]
        [2, 0]
        >>> print(round(float(forest.feature_importances_.sum()), 6))
        1.0
        """
        check_is_fitted(self, "_forest")
        return _core.mdi(self._forest, True)

    @property
    def estimators_(self):
        """The trees as fitted scikit-learn decision trees, for tools that walk ``estimators_``.

        A read-only sequence (indexing, slicing, ``len``, iteration) of
        :class:`~sklearn.tree.DecisionTreeRegressor` or :class:`~sklearn.tree.DecisionTreeClassifier`,
        each built from the node arrays when first read and kept. ``len(forest)``, ``forest[i]``
        and ``iter(forest)`` read it too. scikit-learn's trees compare X as float32, so their
        predictions equal pyinterp's on float32-representable X. Forests with categorical splits
        have no scikit-learn form: reading a tree raises ``ValueError``.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3)).astype(np.float32)
        >>> forest = RandomForestRegressor(5, random_state=0).fit(X, X[:, 0])
        >>> len(forest.estimators_), type(forest[0]).__name__
        (5, 'DecisionTreeRegressor')
        >>> mean = np.mean([tree.predict(X) for tree in forest.estimators_], axis=0)
        >>> bool(np.allclose(mean, forest.predict(X)))
        True
        """
        check_is_fitted(self, "_forest")
        return TreeEstimators(self)

    def __len__(self):
        return len(self.estimators_)

    def __getitem__(self, index):
        return self.estimators_[index]

    def __iter__(self):
        return iter(self.estimators_)

    def to_sklearn(self):
        """The forest as a fitted scikit-learn forest of the same trees, node for node.

        For the tools that read scikit-learn's forests: shap's ``TreeExplainer``,
        :func:`sklearn.tree.export_text` and :func:`sklearn.tree.plot_tree`, treeinterpreter (its
        classifiers; its regressor path fails under numpy 2 on scikit-learn's own forests too).
        The export has this forest's parameters (``friedman_mse`` as ``squared_error``) and
        fitted attributes (``n_features_in_``, ``feature_names_in_``, ``n_outputs_``,
        ``classes_``, ``n_classes_``, the out-of-bag ones), and carries its in-bag counts, so its
        ``estimators_samples_`` and pyinterp's out-of-bag measures of it are this forest's (until
        it is refitted). Its predict, apply and decision_path equal this forest's on
        float32-representable X (scikit-learn's trees compare X as float32).

        Returns
        -------
        forest : sklearn.ensemble.RandomForestRegressor or sklearn.ensemble.RandomForestClassifier
            A fitted scikit-learn forest of this forest's kind.

        Raises
        ------
        ValueError
            If the forest splits on categories (``categorical_features``): scikit-learn's forests
            cannot hold such splits.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from sklearn import ensemble
        >>> from sklearn.tree import export_text
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3)).astype(np.float32)
        >>> forest = RandomForestRegressor(5, max_depth=2, random_state=0).fit(X, X[:, 0])
        >>> exported = forest.to_sklearn()
        >>> isinstance(exported, ensemble.RandomForestRegressor)
        True
        >>> bool(np.allclose(exported.predict(X), forest.predict(X)))
        True
        >>> print(export_text(exported.estimators_[0], decimals=2))  # doctest: +ELLIPSIS
        |--- feature_0 <= ...
        ...
        """
        check_is_fitted(self, "_forest")
        return to_sklearn(self)

    def __setstate__(self, state):
        # Parameters added after 0.1.0, at their defaults in older pickles.
        state = {"min_node_size": None, "keep_oob_leaves": False, "always_split_features": None,
                 "categorical_features": None, "_category_encoder": None, "is_categorical_": None, **state}
        super().__setstate__(state)
        if "_forest" not in state:
            return
        core = state["_forest"]
        self._check_loaded_state(core)
        # A pyinterp 0.1.0 pickle did not record the criterion; the core reads it as Gini.
        if core.criterion != self._criteria[self.criterion]:
            arrays = core.__getstate__()
            arrays["criterion"] = self._criteria[self.criterion].name
            self._forest = _core.Forest.from_state(arrays)

    def _check_loaded_state(self, core):
        """The Python attributes of a loaded forest agree with its core trees (the core proved its
        own structure in from_state), or ValueError names the first that does not."""
        def corrupt(what):
            raise ValueError(f"corrupt {type(self).__name__} state: {what}")

        if not isinstance(core, _core.Forest):
            corrupt(f"_forest is {type(core).__name__}, not a core forest")
        if self.criterion not in self._criteria:
            corrupt(f"criterion {self.criterion!r} is not one of this estimator's")
        if (core.n_classes > 0) != isinstance(self, ClassifierMixin):
            corrupt("its trees are " + ("classification" if core.n_classes else "regression") + " trees")
        n_features = getattr(self, "n_features_in_", None)
        if not isinstance(n_features, Integral) or n_features != core.n_features:
            corrupt(f"n_features_in_ = {n_features!r}, but its trees read {core.n_features} features")
        names = getattr(self, "feature_names_in_", None)
        if names is not None and (not isinstance(names, np.ndarray) or names.shape != (n_features,)):
            corrupt(f"feature_names_in_ does not hold one name per feature ({n_features})")
        categorical = self.is_categorical_
        if categorical is not None and (not isinstance(categorical, np.ndarray) or categorical.dtype != bool
                                        or categorical.shape != (n_features,)):
            corrupt(f"is_categorical_ is not a mask of the {n_features} features")
        seed = getattr(self, "_seed", 0)  # 0.1.0 had no _seed
        if not isinstance(seed, Integral) or seed < 0:
            corrupt(f"_seed = {seed!r}")

    # -- prediction ----------------------------------------------------------------------------

    def _threads(self):
        """Threads for a prediction: n_jobs as it is now (set_params after fit applies), as in scikit-learn."""
        return resolve_n_threads(self.n_jobs)

    def _predict_values(self, X):
        return _stacked(self._descended(X, lambda core, rows: core.predict(rows, self._threads())))

    def apply(self, X):
        """The leaf each row reaches in each tree.

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, ColumnFiles} of shape (n_samples, n_features)
            The rows, in any form ``fit`` reads, with the training X's columns (and names, checked
            as scikit-learn checks them). Missing values follow each split's
            ``missing_go_to_left``.
            A dask array or :class:`~pyinterp.io.ColumnFiles` is read only at the columns the
            trees split on, on its cluster, a run of rows at a time (docs/user/cluster.md).

        Returns
        -------
        leaves : ndarray of int64, shape (n_samples, n_estimators)
            ``leaves[i, t]`` is the index of the leaf of ``trees_[t]`` (a node index, as
            scikit-learn's ``apply`` gives it) that row i reaches.

        See Also
        --------
        decision_path : Every node each row visits.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3))
        >>> forest = RandomForestRegressor(5, random_state=0).fit(X, X[:, 0])
        >>> leaves = forest.apply(X[:4])
        >>> leaves.shape
        (4, 5)
        >>> bool(np.all(forest.trees_[0].left[leaves[:, 0]] == -1))  # leaves have no children
        True
        """
        return _stacked(self._descended(X, lambda core, rows: core.apply(rows, self._threads())))

    def decision_path(self, X):
        """The nodes each row visits in each tree, as scikit-learn returns them.

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, ColumnFiles} of shape (n_samples, n_features)
            The rows, in any form ``fit`` reads, with the training X's columns.
            A dask array or :class:`~pyinterp.io.ColumnFiles` is read only at the columns the
            trees split on, on its cluster, a run of rows at a time (docs/user/cluster.md).

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of int8, shape (n_samples, n_nodes)
            ``indicator[i, n_nodes_ptr[t] + k]`` is 1 where row i passes through node k of tree t;
            n_nodes is the number of nodes of all the trees.
        n_nodes_ptr : ndarray of int64, shape (n_estimators + 1,)
            The column where each tree's nodes begin (and, last, n_nodes).

        See Also
        --------
        apply : The leaf each row reaches.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 3))
        >>> forest = RandomForestRegressor(5, max_depth=3, random_state=0).fit(X, X[:, 0])
        >>> indicator, n_nodes_ptr = forest.decision_path(X[:4])
        >>> indicator.shape == (4, n_nodes_ptr[-1])
        True
        >>> [t.node_count for t in forest.trees_] == np.diff(n_nodes_ptr).tolist()
        True
        >>> np.asarray(indicator[:, :n_nodes_ptr[1]].sum(axis=1)).ravel().tolist()  # depth 3: 4 nodes a path
        [4, 4, 4, 4]
        """
        parts = self._descended(X, lambda core, rows: core.decision_path(rows, self._threads()))
        offsets = parts[0][2]
        if len(parts) == 1:
            indptr, indices = parts[0][:2]
        else:  # runs of rows: each run's row pointers continue from the last run's end
            ends = np.cumsum([0] + [p[1].shape[0] for p in parts[:-1]])
            indptr = np.concatenate([[0]] + [p[0][1:] + end for p, end in zip(parts, ends)])
            indices = np.concatenate([p[1] for p in parts])
        data = np.ones(indices.shape[0], dtype=np.int8)
        indicator = sp.csr_matrix((data, indices, indptr), shape=(indptr.shape[0] - 1, int(offsets[-1])))
        return indicator, offsets


def reads_split_columns(forest, X) -> bool:
    """Whether a measure reads X at the forest's split columns (forest/split_columns.py): a
    feature-parallel X and a pyinterp forest (any other forest refuses it where X is checked)."""
    return is_feature_parallel(X) and isinstance(forest, _BaseForest)


def _stacked(parts):
    """Results per run of rows, stacked (one run: as it is)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


class RandomForestRegressor(RegressorMixin, _BaseForest):
    """Random forest of CART regression trees (Breiman 2001), grown to purity by default.

    pyinterp's forest engine, in C++: each tree is grown on a bootstrap sample of the rows, each
    node split at the best threshold among ``max_features`` candidate features drawn at random
    (all of them by default), and the forest predicts the mean of its trees. It follows
    scikit-learn's estimator contract and takes scikit-learn 1.9's parameters with their meaning
    (it passes ``sklearn.utils.estimator_checks.check_estimator``), and keeps its trees as
    read-only node arrays (``trees_``) that every measure of pyinterp reads: MDI and the
    out-of-bag importances, SHAP, signed paths, the interaction finders. Each parameter below
    says where it differs from :class:`sklearn.ensemble.RandomForestRegressor`; the Notes sum the
    differences up.

    Parameters
    ----------
    n_estimators : int, default 100
        The number of trees, from 1 to 2^31 - 1. As scikit-learn's; in addition a forest whose
        in-bag counts and trees (4 bytes per tree and training row, and about a kilobyte per
        tree) or node values could not fit in this machine's memory is refused before it grows
        (``ValueError``, or :class:`~pyinterp.OutputTooLarge`).
    criterion : {"squared_error", "poisson", "absolute_error", "friedman_mse"}, default "squared_error"
        The impurity a split lowers. "squared_error": the variance; leaves predict the mean.
        "poisson": half the Poisson deviance, for counts (y >= 0 with a positive sum); leaves
        predict the mean. "absolute_error": the absolute deviation from the median; leaves
        predict the weighted median, and a node costs O(m log m) per candidate feature for its m
        rows, so it is slower. "friedman_mse": deprecated as in scikit-learn 1.9 (a
        ``FutureWarning``): it gives the same splits as "squared_error", to which it is mapped.
        The impurity each tree records (``impurity_decrease``, MDI, ``feature_importances_``,
        DWP's node weights) is the criterion's; the out-of-bag measures (MDI-oob, naive-oob, UFI)
        read node impurity on the out-of-bag rows as the variance for every criterion. As
        scikit-learn's.
    max_depth : int or None, default None
        The greatest depth of a tree (the root has depth 0), an int >= 1. None: nodes are split
        until they are pure or another limit below stops them. As scikit-learn's.
    min_samples_split : int or float, default 2
        The fewest in-bag rows a node needs to be split: an int >= 2, or a fraction in (0, 1] of
        the training rows, rounded up (at least 2). A row drawn several times counts once. As
        scikit-learn's.
    min_samples_leaf : int or float, default 1
        The fewest in-bag rows each child of a split must hold: an int >= 1, or a fraction in
        (0, 0.5] of the training rows, rounded up. As scikit-learn's.
    min_weight_fraction_leaf : float, default 0.0
        The smallest fraction, in [0, 0.5], of the tree's total row weight (its draw counts, or
        the sample weights of its rows without bootstrap; see :meth:`fit`) that each child of a
        split must hold. As scikit-learn's.
    max_features : {"sqrt", "log2"}, int, float or None, default 1.0
        The candidate features each node draws at random and searches: an int (1 to
        n_features), a fraction in (0, 1] of the features (``int(max_features * n_features)``,
        at least 1), "sqrt" (``int(sqrt(n_features))``), "log2" (``int(log2(n_features))``) or
        None (all of them). Differs from scikit-learn's: pyinterp counts only candidates that are
        not constant in the node (scikit-learn counts the constant ones it finds as visited), so
        a node searches that many real candidates where they exist; deep nodes of genotype data
        hold many constant columns. The fractions, "sqrt" and "log2" are of the columns not in
        ``always_split_features``, and the count is at most the number of those columns to which
        :meth:`fit`'s ``feature_weights`` give a positive weight (both pyinterp's parameters).
    max_leaf_nodes : int or None, default None
        With an int >= 2, each tree is grown best-first to at most that many leaves: the
        frontier node whose split lowers the impurity most is split next, and nodes are numbered
        in the order they are made rather than in preorder. None: depth-first growth without a
        limit on the leaves. As scikit-learn's, node for node.
    min_impurity_decrease : float, default 0.0
        A node is split only if the split lowers the weighted impurity by at least this much:
        ``(N_t * I_t - N_l * I_l - N_r * I_r) / N_root``, with weighted row counts N and
        impurities I of the node and its children, the quantity each tree records per node as
        ``impurity_decrease``. As scikit-learn's.
    bootstrap : bool, default True
        Whether each tree draws its rows with replacement (``max_samples`` draws, n_samples by
        default). False: each tree fits every row or, in pyinterp only, a subsample drawn without
        replacement (see ``max_samples``).
    oob_score : bool or callable, default False
        Whether fit scores the forest on the rows each tree did not draw, setting ``oob_score_``
        (R^2, or ``oob_score(y_true, y_pred)`` for a callable) and ``oob_prediction_``. The
        out-of-bag rows ride down each tree as it grows, so the scores take no second pass over
        X. Differs from scikit-learn's: it also works without bootstrap when ``max_samples``
        leaves rows out (scikit-learn needs ``bootstrap=True``), and rows that every tree drew
        get NaN out-of-bag predictions, left out of ``oob_score_``, after scikit-learn's warning
        (scikit-learn predicts 0 for them and scores that, which can swamp ``oob_score_``: a row
        of y near 1000 predicted 0).
    n_jobs : int or None, default None
        Threads of the C++ core for fit and for the predictions, leaves, paths and out-of-bag
        values: None is 1, -1 every core this process may use, -2 all but one, and so on; 0 is an
        error, and more than four threads per core are not started. Each call reads n_jobs as it
        is then, so ``set_params(n_jobs=...)`` after fit applies to the predictions, as in
        scikit-learn. The result does not depend on it, bit for bit. Differs from scikit-learn's:
        None means one thread even inside a ``joblib.parallel_backend`` context, and inside a
        distributed joblib backend (``joblib.parallel_backend("dask")``) fit grows the trees in
        chunks on the cluster's workers, with the same result.
    random_state : int, RandomState instance or None, default None
        The seed of the rows and candidate features each tree draws: an int gives the same
        forest on every run, machine and thread count; None (or a RandomState, which advances by
        one draw) takes a seed from numpy's global generator (or that RandomState). Differs from
        scikit-learn's: pyinterp's generator is its own, tree t drawing from the stream
        (seed, t), so the same int gives other trees than scikit-learn's, and a forest grown in
        steps (``warm_start``) or in chunks equals the forest grown at once.
    verbose : int or bool, default 0
        0 says nothing; 1 or more reports the trees as they finish: a tqdm bar on stderr when
        tqdm is installed, otherwise a plain line every few seconds and at the end, and INFO
        records of the ``pyinterp`` logger either way. Differs from scikit-learn's, whose
        verbose prints joblib's messages.
    warm_start : bool, default False
        With True, :meth:`fit` on a fitted forest keeps its trees and adds new ones up to
        ``n_estimators`` (fewer than it has is an error, as many a warning and no new tree), as in
        scikit-learn. Differs from scikit-learn's: the new trees continue the random streams of
        the old ones, so the forest equals, tree for tree, the forest of ``n_estimators`` trees
        fitted at once (in any steps, with any n_jobs), and the new trees must be fitted on the
        same rows in the same order: fit refuses an X of another shape or other categories
        (it cannot check the rows themselves).
    ccp_alpha : float, default 0.0
        The complexity parameter of minimal cost-complexity pruning: each tree is pruned to the
        subtree that minimal cost-complexity pruning (Breiman et al. 1984) keeps for this alpha,
        renumbered in preorder; 0 prunes nothing. As scikit-learn's, node for node. Pruning
        renumbers the nodes, so the out-of-bag leaves are not recorded as the trees grow
        (``keep_oob_leaves`` keeps none) and out-of-bag values descend the trees.
    max_samples : int, float or None, default None
        The rows each tree draws. None: n_samples. With bootstrap, as scikit-learn 1.9's: an int
        (which may exceed n_samples, up to 2^31 - 1) or a float > 0, a fraction of n_samples or,
        with sample (or class) weights, of the sum of the weights, truncated, at least 1, with
        scikit-learn's warning when that leaves few draws. Differs from scikit-learn's, which
        refuses it without bootstrap: with ``bootstrap=False`` each tree fits a subsample of
        max_samples rows drawn without replacement (an int up to n_samples, or a fraction in
        (0, 1] of them), uniformly (sample weights then weight the rows drawn), so its trees see
        no duplicated rows and still leave rows out of bag.
    monotonic_cst : array-like of int of shape (n_features,) or None, default None
        Per feature 1 (the prediction may only increase with it), -1 (only decrease) or 0 (no
        constraint): a split whose children break the order or the node's bounds is not taken,
        and node values are clipped to their bounds. None: no constraints. As scikit-learn's:
        refused with several outputs or with missing values in X. Categories have no order, so it
        must be 0 on categorical features.
    min_node_size : int or None, default None
        Not in scikit-learn: ranger's ``min.node.size``, which iRF's forests use. A node of at
        most this many in-bag draws (repeats counted, as ranger counts them) is not split; with
        weighted rows, a node whose in-bag weight (see :meth:`fit`) is below
        ``min_node_size + 1``. None (or 1): no such limit.
    keep_oob_leaves : bool, default False
        Not in scikit-learn. Keep, after fit, the leaf each out-of-bag training row reached in
        each tree, recorded as the trees grow (4 bytes per tree and training row; not pickled;
        none under ``ccp_alpha > 0``). Code that knows it holds the training rows reads them
        instead of running the rows down the trees, as pyinterp's
        :class:`~pyinterp.IterativeRandomForest` does with its R conventions; the public
        methods, :meth:`oob_predict` included, run the X they are given down the trees. Without
        it the recorded leaves are freed after fit (``oob_score`` records them for its own
        predictions).
    always_split_features : array-like of int or str, bool mask, int, str or None, default None
        Not in scikit-learn: ranger's ``always.split.variables``. Columns (indices, names of a
        named X, or a mask) searched at every node besides the ``max_features`` drawn from the
        other columns, which "sqrt", "log2" and fractions then count. Offer covariates
        (principal components, age, sex, batch) so: each split on a genotype is weighed against
        the best split on every covariate in that node, so a genotype that only tags a covariate
        loses to it. Among equal splits an always-split column wins. None: none.
    categorical_features : array-like of int, str or bool, "from_dtype", CategoryCodes or None, default None
        Columns (indices, names of a named X, or a mask; "from_dtype": a DataFrame's
        ``category`` columns) split into two sets of categories rather than at a threshold on
        arbitrary codes, as scikit-learn 1.10's decision trees split them (scikit-learn's
        forests do not take the parameter): a node sends a set of categories left. The node
        orders the categories present by their weighted mean of y (ties by code) and tries every
        prefix of that order as the left set (Breiman's shortcut, which finds the best of all
        2^(K-1) - 1 splits of K categories for squared error and Poisson deviance, so one output
        and those criteria only: "absolute_error" and several outputs are refused). At most 256
        categories per column, found in the training X (strings, numbers, pandas categories) and
        coded 0, 1, ... in sorted order. Missing values are tried on both sides, as for a
        threshold. At prediction a category the training X lacked is a missing value, and one
        the node's training rows lacked goes right (scikit-learn 1.10 sends some of those left,
        depending on the scale of y). X must then be a dense array or a DataFrame, unless its
        columns hold codes already: :class:`~pyinterp.forest.CategoryCodes` then names their
        categories, for any form of X (packed genotypes' covariates too). ``categories_`` lists
        each categorical column's categories and ``is_categorical_`` marks the columns;
        :meth:`Tree.left_set <pyinterp.forest.Tree.left_set>` gives a split's left categories as
        indices into them, and ``to_sklearn`` refuses such forests. None: no categorical columns.

    Attributes
    ----------
    trees_ : list of Tree
        The fitted trees as read-only node arrays (:class:`~pyinterp.forest.Tree`).
    estimators_ : sequence of sklearn.tree.DecisionTreeRegressor
        The trees as fitted scikit-learn decision trees, each built when first read (also
        ``len(forest)``, ``forest[i]``, ``iter(forest)``).
    estimators_samples_ : list of ndarray
        Per tree, the training rows it drew, each repeated as often as drawn, in increasing order.
    inbag_counts_ : ndarray of uint32, shape (n_estimators, n_samples)
        How often each tree drew each training row (not in scikit-learn).
    feature_importances_ : ndarray of shape (n_features,)
        The mean decrease in impurity, normalised as scikit-learn normalises it.
    n_features_in_ : int
        The number of features of the training X.
    feature_names_in_ : ndarray of str, shape (n_features,)
        The training X's column names (a DataFrame's columns, an AnnData's ``var_names``, packed
        genotypes' variant IDs); defined only when they are all strings.
    n_outputs_ : int
        The number of outputs: the columns of a 2-d y, else 1.
    oob_score_ : float
        The score of ``oob_prediction_`` (R^2 by default) over the rows with an out-of-bag
        prediction; only with ``oob_score``.
    oob_prediction_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Each training row's mean over the trees that did not draw it, NaN for rows that every
        tree drew; only with ``oob_score``.
    is_categorical_ : ndarray of bool, shape (n_features,), or None
        Which columns are categorical; None without ``categorical_features``.
    categories_ : list of ndarray or None
        Per categorical column (in column order), its categories in code order; None without
        categorical columns.

    See Also
    --------
    RandomForestClassifier : The same forest for classification.
    pyinterp.forest.tree_rules : A tree's leaves as readable rules.
    pyinterp.forest.combine : One forest of forests fitted apart on the same rows.
    pyinterp.importance.mdi_oob : Feature importance on the out-of-bag rows, free of MDI's bias.

    Notes
    -----
    Differences from :class:`sklearn.ensemble.RandomForestRegressor`, each for a reason:

    - **Inputs.** X may be numpy or pandas, C or Fortran order, strided, read-only. float64,
      float32, int8, uint8, int16 and bool X (genotype codes) are read as they are, never
      copied, other dtypes as float64; thresholds are midpoints of the values as given
      (scikit-learn converts X to float32 first, and its trees compare X as float32). NaN is a
      missing value, with scikit-learn's semantics: a split searched over rows with missing
      values sends them to the side that scores better, and one whose training rows had none
      sends them to the child with more rows. scipy.sparse CSR and CSC X (single-cell counts) is read without
      densifying (missing values only in dense X). A read-only memory map
      (``np.load(path, mmap_mode="r")``) is read from its file in panels of columns, so it never
      has to fit in memory. Packed genotypes (:func:`pyinterp.io.read_plink`, ``read_pgen``,
      ``read_vcf``, ``read_bgen``) are split on their 2-bit calls where they lie, with the
      variant IDs as feature names, and an AnnData is read through its ``X`` with its
      ``var_names``. The trees are the same for every form of the same values, and X is never
      modified. What has no one number is refused by name rather than cast: dates and
      durations (datetime64, timedelta64), masked arrays (``np.ma.filled(X, np.nan)`` makes the
      masked entries missing), and integers beyond +-2^53, which float64 cannot tell apart;
      infinity is refused, and an int8 X holding -127 (bed-reader's missing call) warns.
    - **Determinism.** Tree t draws its rows and candidates from the stream (seed, t), so the
      forest is bit-identical for every ``n_jobs``, fitted at once or in ``warm_start`` steps,
      in one process or in chunks on a cluster; predictions average the trees in tree order.
    - **What is recorded.** Each node records scikit-learn's arrays (``feature``,
      ``threshold``, ``left``, ``right``, ``impurity``, ``n_node_samples``,
      ``weighted_n_node_samples``, ``missing_go_to_left``, ``value``) and also its ``parent``,
      its ``depth``, its ``impurity_decrease`` (the MDI term) and, for a split on categories,
      its left set; and the forest records each tree's in-bag counts (``inbag_counts_``), which
      scikit-learn regenerates from random states. The trees are grown to purity by default,
      so a forest on many rows is large: ``max_leaf_nodes``, ``max_depth`` or
      ``min_samples_leaf`` make it smaller.
    - **Parameters.** ``max_features`` counts non-constant candidates; ``max_samples`` also
      subsamples without bootstrap; out-of-bag values of rows every tree drew are NaN; the
      parameters ``min_node_size``, ``keep_oob_leaves``, ``always_split_features`` and
      ``categorical_features`` and :meth:`fit`'s ``feature_weights`` are pyinterp's; y must hold
      finite numbers. ``estimator_`` (scikit-learn's template tree) is not an attribute.

    Several outputs (a 2-d y) are fitted as in scikit-learn: a split lowers the mean of the
    outputs' impurities and the leaves hold each output's mean. MDI and
    ``feature_importances_`` read such forests, and so do signed paths, DWP, path prevalence and
    their miners; the measures that score or explain one response per row (MDI-oob, naive-oob,
    UFI, permutation, contributions, SHAP, rules) refuse them: fit one forest per output.

    References: L. Breiman, "Random forests", Machine Learning 45, 5-32 (2001); L. Breiman,
    J. Friedman, R. Olshen and C. Stone, *Classification and Regression Trees* (1984).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 6))
    >>> y = 2 * X[:, 0] + X[:, 1] * (X[:, 2] > 0) + rng.normal(scale=0.1, size=300)
    >>> forest = RandomForestRegressor(n_estimators=50, oob_score=True, random_state=0).fit(X, y)
    >>> print(round(forest.oob_score_, 3))  # out-of-bag R^2
    0.943
    >>> np.argsort(-forest.feature_importances_)[:2].tolist()
    [0, 1]
    >>> forest.predict(X[:3]).round(2).tolist()
    [0.23, 2.64, -4.53]
    >>> forest.trees_[0]  # read-only node arrays
    Tree(node_count=373, n_leaves=187, max_depth=12)
    >>> forest.inbag_counts_.shape  # (n_estimators, n_samples) draws per row
    (50, 300)

    The same trees for any number of threads, and iRF-style reweighting of the candidates:

    >>> threads = RandomForestRegressor(n_estimators=50, oob_score=True, random_state=0, n_jobs=2).fit(X, y)
    >>> bool(np.array_equal(threads.predict(X), forest.predict(X)))
    True
    >>> weighted = RandomForestRegressor(n_estimators=50, random_state=0)
    >>> weighted = weighted.fit(X, y, feature_weights=forest.feature_importances_ + 1e-5)

    Missing values need no imputation:

    >>> X_missing = np.where(rng.random(X.shape) < 0.1, np.nan, X)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X_missing, y)
    >>> forest.predict(X_missing[:2]).shape
    (2,)

    A tissue effect that no threshold on the category codes finds in one split:

    >>> rng = np.random.default_rng(0)
    >>> tissue = rng.choice(["blood", "brain", "liver", "lung"], size=200)
    >>> X = np.column_stack([tissue, rng.normal(size=200)]).astype(object)
    >>> y = np.isin(tissue, ["blood", "liver"]) + rng.normal(scale=0.1, size=200)
    >>> forest = RandomForestRegressor(20, categorical_features=[0], random_state=0).fit(X, y)
    >>> forest.categories_[0].tolist()
    ['blood', 'brain', 'liver', 'lung']
    >>> tree = forest.trees_[0]
    >>> int(tree.feature[0]), forest.categories_[0][tree.left_set(0)].tolist()
    (0, ['brain', 'lung'])
    >>> forest.predict(np.array([["liver", 0.0], ["lung", 0.0]], dtype=object)).round().tolist()
    [1.0, 0.0]
    """

    # friedman_mse: deprecated in scikit-learn 1.9 as the same splits as squared_error, mapped to it.
    _criteria = {"squared_error": _core.Criterion.squared_error, "friedman_mse": _core.Criterion.squared_error,
                 "poisson": _core.Criterion.poisson, "absolute_error": _core.Criterion.absolute_error}
    _parameter_constraints = {**_BaseForest._parameter_constraints, "criterion": [StrOptions(set(_criteria))]}

    def __init__(
        self,
        n_estimators=100,
        *,
        criterion="squared_error",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=1.0,
        max_leaf_nodes=None,
        min_impurity_decrease=0.0,
        bootstrap=True,
        oob_score=False,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
        ccp_alpha=0.0,
        max_samples=None,
        monotonic_cst=None,
        min_node_size=None,
        keep_oob_leaves=False,
        always_split_features=None,
        categorical_features=None,
    ):
        super().__init__(
            n_estimators,
            criterion=criterion,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_features=max_features,
            max_leaf_nodes=max_leaf_nodes,
            min_impurity_decrease=min_impurity_decrease,
            bootstrap=bootstrap,
            oob_score=oob_score,
            n_jobs=n_jobs,
            random_state=random_state,
            verbose=verbose,
            warm_start=warm_start,
            ccp_alpha=ccp_alpha,
            max_samples=max_samples,
            monotonic_cst=monotonic_cst,
            min_node_size=min_node_size,
            keep_oob_leaves=keep_oob_leaves,
            always_split_features=always_split_features,
            categorical_features=categorical_features,
        )

    @guarded_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, feature_weights=None):
        """Grow the forest on the training rows X and their targets y.

        With ``warm_start`` on a fitted forest, the trees it has are kept and new ones added (see
        the class's ``warm_start``).

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, dask array, ColumnFiles} of shape (n_samples, p)
            The training rows: a numpy array or DataFrame (float64, float32, int8, uint8, int16
            and bool read as they are, other dtypes as float64), a scipy.sparse CSR or CSC
            matrix, a read-only memory map, packed genotypes or an AnnData (see the class's
            Notes). NaN is a missing value; infinity is refused. With ``categorical_features``,
            a dense array (of objects, for strings) or a DataFrame. A dask array or a
            :class:`~pyinterp.io.ColumnFiles` (.bed / .npy files of X's columns) is fitted
            feature-parallel on the running Dask client's cluster: each column chunk or file
            block stays on one worker, and the trees are those of the same values in memory
            (docs/user/cluster.md; categorical columns to encode: a dask array's, or a
            ColumnFiles' covariates).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            The targets: finite real numbers (strings, None, NaN and infinity are refused, where
            scikit-learn converts numeric strings). A 2-d y fits several outputs at once, each
            split lowering the mean of their impurities; a 2-d y of one column is one output,
            with scikit-learn's ``DataConversionWarning``. A y whose squares are beyond float64
            (``max |y|`` outside about [1e-154, 1e154]) warns: the predictions are exact, but
            the impurities and what is computed from them are not.
        sample_weight : array-like of shape (n_samples,) or None, default None
            Non-negative finite row weights with a positive sum. With bootstrap they choose the
            rows, as in scikit-learn 1.9: row i is drawn with probability ``w_i / sum(w)`` and the
            trees weight the rows by their draw counts. Without bootstrap the trees weight each
            row (of the subsample, with ``max_samples``) by its weight. None: all 1.
        feature_weights : array-like of shape (n_features,) or None, default None
            Not in scikit-learn (iRF's reweighting, Basu et al. 2018): each node draws its
            candidate features with probability proportional to these weights (non-negative,
            finite, with a positive sum; their scale does not matter). A feature of weight 0 is
            never a candidate (the ``always_split_features`` are searched whatever their
            weight), and ``max_features`` is at most the number of positive weights. None:
            uniform draws.

        Returns
        -------
        self : RandomForestRegressor
            The fitted forest.

        Raises
        ------
        ValueError
            If y is negative somewhere or sums to 0 under ``criterion="poisson"``; if
            ``oob_score`` is set while every tree fits every row (no bootstrap and no
            ``max_samples`` below n_samples); if ``warm_start`` meets fewer ``n_estimators``
            than trees, an X of another shape or other categories; if ``monotonic_cst`` does
            not fit X (its length, its values, NaN in X, several outputs).
        OutputTooLarge
            If the trees' node values could not fit in this machine's memory.

        Examples
        --------
        >>> import numpy as np
        >>> import pandas as pd
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.normal(size=(200, 4)), columns=["age", "dose", "bmi", "sex"])
        >>> y = X["age"] + rng.normal(scale=0.1, size=200)
        >>> forest = RandomForestRegressor(20, random_state=0)
        >>> forest.fit(X, y) is forest
        True
        >>> forest.feature_names_in_.tolist()
        ['age', 'dose', 'bmi', 'sex']

        Candidate features drawn by weight (iRF's reweighting), here never "bmi" or "sex":

        >>> forest.fit(X, y, feature_weights=[1, 1, 0, 0])  # doctest: +ELLIPSIS
        RandomForestRegressor(n_estimators=20, random_state=0)
        >>> sorted({int(f) for tree in forest.trees_ for f in tree.feature if f >= 0})
        [0, 1]
        """
        X, y = self._targets(X, y)
        y = regression_target(y)
        if self.criterion == "friedman_mse":
            warnings.warn('Value `"friedman_mse"` for `criterion` is deprecated and will be removed in 1.11. It maps '
                          'to `"squared_error"` as both were always equivalent. Use `criterion="squared_error"` to '
                          "remove this warning.", FutureWarning, stacklevel=2)
        if self.criterion == "poisson":
            if np.any(y < 0):
                raise ValueError("Some value(s) of y are negative which is not allowed for Poisson regression.")
            if np.sum(y) <= 0:
                raise ValueError("Sum of y is not strictly positive which is necessary for Poisson regression.")
        squares = self._criteria[self.criterion] == _core.Criterion.squared_error
        if squares and squares_leave_float64(y):
            warnings.warn(f"max |y| = {np.abs(y).max():g}: its squares are beyond float64, so node impurities and "
                          "what is computed from them (feature_importances_, MDI, signed paths, oob_score_) are "
                          "inf, NaN or 0; predictions are exact. Rescale y: none of those depend on its scale.",
                          RuntimeWarning, stacklevel=2)
        return self._fit(X, y, y, 0, sample_weight, feature_weights)

    def _set_oob_score(self, X, y):
        values, has_oob = self._oob_values(X, training=True)
        self.oob_prediction_ = self._outputs(values)
        scorer = self.oob_score if callable(self.oob_score) else r2_score
        self.oob_score_ = float(scorer(y[has_oob], self.oob_prediction_[has_oob]))

    def _outputs(self, values):
        """The core's values per row as scikit-learn returns predictions: (n,) for one output,
        (n, n_outputs) for several."""
        return values[:, 0] if values.shape[1] == 1 else values

    def oob_predict(self, X):
        """Out-of-bag prediction of every training row: the mean over the trees that did not draw it.

        Not in scikit-learn, whose forests offer these only as ``oob_prediction_`` after a fit
        with ``oob_score``. Rows that every tree drew have no out-of-bag prediction: they get NaN,
        with scikit-learn's warning. X is run down the trees (the leaves recorded at fit are not
        read, since X could be other rows).

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, ColumnFiles} of shape (n_samples, n_features)
            The training X, its rows in the order fit saw them (``inbag_counts_`` says which
            trees drew each).
            A dask array or :class:`~pyinterp.io.ColumnFiles` is read only at the columns the
            trees split on, on its cluster, a run of rows at a time (docs/user/cluster.md).

        Returns
        -------
        oob_prediction : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Each row's mean over the trees that left it out of bag, NaN where there is none;
            ``oob_score=True`` stores the same values as ``oob_prediction_``.

        Raises
        ------
        ValueError
            If X has another number of rows than the training X.

        See Also
        --------
        predict : The prediction of all the trees, for new rows.
        pyinterp.importance.mdi_oob : Feature importance on the out-of-bag rows.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 4))
        >>> y = X[:, 0] + rng.normal(scale=0.1, size=200)
        >>> forest = RandomForestRegressor(20, oob_score=True, random_state=0).fit(X, y)
        >>> oob = forest.oob_predict(X)
        >>> oob.shape, bool(np.array_equal(oob, forest.oob_prediction_))
        ((200,), True)
        >>> from sklearn.metrics import r2_score
        >>> bool(np.isclose(r2_score(y, oob), forest.oob_score_))  # oob_score_ is the R^2 of these
        True
        """
        return self._outputs(self._oob_values(*self._oob_rows(X))[0])

    def predict(self, X):
        """Predict y for X: the mean of the trees' leaf values.

        Each tree's leaf value is the mean of y over the leaf's in-bag rows (weighted by the row
        weights), or their weighted median under ``criterion="absolute_error"``. The trees are
        averaged in tree order, so the result does not depend on ``n_jobs``.

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, ColumnFiles} of shape (n_samples, n_features)
            The rows to predict, in any form ``fit`` reads, with the training X's columns (and
            names, checked as scikit-learn checks them). Missing values follow each split's
            ``missing_go_to_left``; with ``categorical_features``, a category the training X
            lacked is a missing value.
            A dask array or :class:`~pyinterp.io.ColumnFiles` is read only at the columns the
            trees split on, on its cluster, a run of rows at a time (docs/user/cluster.md).

        Returns
        -------
        y_pred : ndarray of float64, shape (n_samples,) or (n_samples, n_outputs)
            The predictions; one column per output for a forest fitted on a 2-d y.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 4))
        >>> y = X[:, 0] + rng.normal(scale=0.1, size=200)
        >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
        >>> forest.predict(X[:3]).round(2).tolist()
        [0.1, -0.53, -0.73]
        >>> y[:3].round(2).tolist()
        [0.05, -0.47, -0.71]
        >>> RandomForestRegressor(20, random_state=0).fit(X, np.column_stack([y, -y])).predict(X[:3]).shape
        (3, 2)
        """
        return self._outputs(self._predict_values(X))


class RandomForestClassifier(ClassifierMixin, _BaseForest):
    """Random forest of CART classification trees (Breiman 2001), grown to purity by default.

    pyinterp's forest engine, in C++: each tree is grown on a bootstrap sample of the rows, each
    node split at the best threshold among ``max_features`` candidate features drawn at random
    (the square root of their number by default), and the forest predicts the class of highest
    mean probability over its trees. It follows scikit-learn's estimator contract and takes
    scikit-learn 1.9's parameters with their meaning (it passes
    ``sklearn.utils.estimator_checks.check_estimator``), and keeps its trees as read-only node
    arrays (``trees_``) that every measure of pyinterp reads: MDI and the out-of-bag importances,
    SHAP, signed paths, the interaction finders. Each parameter below says where it differs from
    :class:`sklearn.ensemble.RandomForestClassifier`; the Notes sum the differences up.

    Parameters
    ----------
    n_estimators : int, default 100
        The number of trees, from 1 to 2^31 - 1. As scikit-learn's; in addition a forest whose
        in-bag counts and trees (4 bytes per tree and training row, and about a kilobyte per
        tree) or node values (one per class in every node: many classes make large trees) could
        not fit in this machine's memory is refused before it grows (``ValueError``, or
        :class:`~pyinterp.OutputTooLarge`).
    criterion : {"gini", "entropy", "log_loss"}, default "gini"
        The impurity a split lowers: the Gini impurity, or the Shannon entropy (in bits) of
        the weighted class fractions; "log_loss" is "entropy". The impurity each tree records
        (``impurity_decrease``, MDI, ``feature_importances_``) is the criterion's. As
        scikit-learn's.
    max_depth : int or None, default None
        The greatest depth of a tree (the root has depth 0), an int >= 1. None: nodes are split
        until they are pure or another limit below stops them. As scikit-learn's.
    min_samples_split : int or float, default 2
        The fewest in-bag rows a node needs to be split: an int >= 2, or a fraction in (0, 1] of
        the training rows, rounded up (at least 2). A row drawn several times counts once. As
        scikit-learn's.
    min_samples_leaf : int or float, default 1
        The fewest in-bag rows each child of a split must hold: an int >= 1, or a fraction in
        (0, 0.5] of the training rows, rounded up. As scikit-learn's.
    min_weight_fraction_leaf : float, default 0.0
        The smallest fraction, in [0, 0.5], of the tree's total row weight (its draw counts with
        bootstrap, else the sample and class weights of its rows; see :meth:`fit`) that each
        child of a split must hold. As scikit-learn's.
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
        The candidate features each node draws at random and searches: an int (1 to
        n_features), a fraction in (0, 1] of the features (``int(max_features * n_features)``,
        at least 1), "sqrt" (``int(sqrt(n_features))``), "log2" (``int(log2(n_features))``) or
        None (all of them). Differs from scikit-learn's: pyinterp counts only candidates that are
        not constant in the node (scikit-learn counts the constant ones it finds as visited), so
        a node searches that many real candidates where they exist; deep nodes of genotype data
        hold many constant columns. The fractions, "sqrt" and "log2" are of the columns not in
        ``always_split_features``, and the count is at most the number of those columns to which
        :meth:`fit`'s ``feature_weights`` give a positive weight (both pyinterp's parameters).
    max_leaf_nodes : int or None, default None
        With an int >= 2, each tree is grown best-first to at most that many leaves: the
        frontier node whose split lowers the impurity most is split next, and nodes are numbered
        in the order they are made rather than in preorder. None: depth-first growth without a
        limit on the leaves. As scikit-learn's, node for node.
    min_impurity_decrease : float, default 0.0
        A node is split only if the split lowers the weighted impurity by at least this much:
        ``(N_t * I_t - N_l * I_l - N_r * I_r) / N_root``, with weighted row counts N and
        impurities I of the node and its children, the quantity each tree records per node as
        ``impurity_decrease``. As scikit-learn's.
    bootstrap : bool, default True
        Whether each tree draws its rows with replacement (``max_samples`` draws, n_samples by
        default). False: each tree fits every row or, in pyinterp only, a subsample drawn without
        replacement (see ``max_samples``).
    oob_score : bool or callable, default False
        Whether fit scores the forest on the rows each tree did not draw, setting ``oob_score_``
        (the accuracy, or ``oob_score(y_true, y_pred)`` for a callable, of the most probable
        class) and ``oob_decision_function_``. Refused for several outputs of more than two
        classes (multiclass-multioutput), as in scikit-learn. The out-of-bag rows ride down each
        tree as it grows, so the scores take no second pass over X. Differs from scikit-learn's:
        it also works without bootstrap when ``max_samples`` leaves rows out (scikit-learn needs
        ``bootstrap=True``), and rows that every tree drew get NaN out-of-bag probabilities,
        left out of ``oob_score_``, after scikit-learn's warning (scikit-learn gives them
        probability 0 for every class and scores that).
    n_jobs : int or None, default None
        Threads of the C++ core for fit and for the predictions, leaves, paths and out-of-bag
        values: None is 1, -1 every core this process may use, -2 all but one, and so on; 0 is an
        error, and more than four threads per core are not started. Each call reads n_jobs as it
        is then, so ``set_params(n_jobs=...)`` after fit applies to the predictions, as in
        scikit-learn. The result does not depend on it, bit for bit. Differs from scikit-learn's:
        None means one thread even inside a ``joblib.parallel_backend`` context, and inside a
        distributed joblib backend (``joblib.parallel_backend("dask")``) fit grows the trees in
        chunks on the cluster's workers, with the same result.
    random_state : int, RandomState instance or None, default None
        The seed of the rows and candidate features each tree draws: an int gives the same
        forest on every run, machine and thread count; None (or a RandomState, which advances by
        one draw) takes a seed from numpy's global generator (or that RandomState). Differs from
        scikit-learn's: pyinterp's generator is its own, tree t drawing from the stream
        (seed, t), so the same int gives other trees than scikit-learn's, and a forest grown in
        steps (``warm_start``) or in chunks equals the forest grown at once.
    verbose : int or bool, default 0
        0 says nothing; 1 or more reports the trees as they finish: a tqdm bar on stderr when
        tqdm is installed, otherwise a plain line every few seconds and at the end, and INFO
        records of the ``pyinterp`` logger either way. Differs from scikit-learn's, whose
        verbose prints joblib's messages.
    warm_start : bool, default False
        With True, :meth:`fit` on a fitted forest keeps its trees and adds new ones up to
        ``n_estimators`` (fewer than it has is an error, as many a warning and no new tree), as in
        scikit-learn. Differs from scikit-learn's: the new trees continue the random streams of
        the old ones, so the forest equals, tree for tree, the forest of ``n_estimators`` trees
        fitted at once (in any steps, with any n_jobs), and the new trees must be fitted on the
        same rows in the same order: fit refuses an X of another shape, a y of other classes or
        other categories (it cannot check the rows themselves).
    ccp_alpha : float, default 0.0
        The complexity parameter of minimal cost-complexity pruning: each tree is pruned to the
        subtree that minimal cost-complexity pruning (Breiman et al. 1984) keeps for this alpha,
        renumbered in preorder; 0 prunes nothing. As scikit-learn's, node for node. Pruning
        renumbers the nodes, so the out-of-bag leaves are not recorded as the trees grow
        (``keep_oob_leaves`` keeps none) and out-of-bag values descend the trees.
    max_samples : int, float or None, default None
        The rows each tree draws. None: n_samples. With bootstrap, as scikit-learn 1.9's: an int
        (which may exceed n_samples, up to 2^31 - 1) or a float > 0, a fraction of n_samples or,
        with sample (or class) weights, of the sum of the weights, truncated, at least 1, with
        scikit-learn's warning when that leaves few draws. Differs from scikit-learn's, which
        refuses it without bootstrap: with ``bootstrap=False`` each tree fits a subsample of
        max_samples rows drawn without replacement (an int up to n_samples, or a fraction in
        (0, 1] of them), uniformly (sample and class weights then weight the rows drawn), so its
        trees see no duplicated rows and still leave rows out of bag.
    class_weight : dict, list of dict, "balanced", "balanced_subsample" or None, default None
        Weights of the classes, multiplied into ``sample_weight``: a dict {class: weight}
        (finite, >= 0; a class it leaves out weighs 1), one such dict per output (a list) for a
        2-d y, "balanced" (class c weighs ``W / (n_classes * W_c)``, W_c the sum of its rows'
        ``sample_weight`` and W the total; without ``sample_weight`` its row count and
        n_samples), or "balanced_subsample" (for each tree, from the class counts of its in-bag
        draws, repeats counted; without bootstrap nor ``max_samples``, the same as "balanced").
        With several outputs, the outputs' weights multiply. None: every class weighs 1. As
        scikit-learn 1.9's (scikit-learn before 1.9 counted rows even with ``sample_weight``).
    monotonic_cst : array-like of int of shape (n_features,) or None, default None
        Per feature 1 (the probability of the second class, ``classes_[1]``, may only increase
        with it), -1 (only decrease) or 0 (no constraint): a split whose children break the
        order or the node's bounds is not taken, and node values are clipped to their bounds.
        None: no constraints. As scikit-learn's: two classes only, and refused with several
        outputs or with missing values in X. Categories have no order, so it must be 0 on
        categorical features.
    min_node_size : int or None, default None
        Not in scikit-learn: ranger's ``min.node.size``, which iRF's forests use. A node of at
        most this many in-bag draws (repeats counted, as ranger counts them) is not split; with
        weighted rows, a node whose in-bag weight (see :meth:`fit`) is below
        ``min_node_size + 1``. None (or 1): no such limit.
    keep_oob_leaves : bool, default False
        Not in scikit-learn. Keep, after fit, the leaf each out-of-bag training row reached in
        each tree, recorded as the trees grow (4 bytes per tree and training row; not pickled;
        none under ``ccp_alpha > 0``). Code that knows it holds the training rows reads them
        instead of running the rows down the trees, as pyinterp's
        :class:`~pyinterp.IterativeRandomForest` does with its R conventions; the public
        methods, :meth:`oob_predict_proba` included, run the X they are given down the trees.
        Without it the recorded leaves are freed after fit (``oob_score`` records them for its
        own predictions).
    always_split_features : array-like of int or str, bool mask, int, str or None, default None
        Not in scikit-learn: ranger's ``always.split.variables``. Columns (indices, names of a
        named X, or a mask) searched at every node besides the ``max_features`` drawn from the
        other columns, which "sqrt", "log2" and fractions then count. Offer covariates
        (principal components, age, sex, batch) so: each split on a genotype is weighed against
        the best split on every covariate in that node, so a genotype that only tags a covariate
        loses to it. Among equal splits an always-split column wins. None: none.
    categorical_features : array-like of int, str or bool, "from_dtype", CategoryCodes or None, default None
        Columns (indices, names of a named X, or a mask; "from_dtype": a DataFrame's
        ``category`` columns) split into two sets of categories rather than at a threshold on
        arbitrary codes, as scikit-learn 1.10's decision trees split them (scikit-learn's
        forests do not take the parameter): a node sends a set of categories left. The node
        orders the categories present by their weighted share of the second class (ties by
        code) and tries every prefix of that order as the left set (Breiman's shortcut, which
        finds the best of all 2^(K-1) - 1 splits of K categories for two classes, so two classes
        and one output only: more classes and several outputs are refused). At most 256
        categories per column, found in the training X (strings, numbers, pandas categories) and
        coded 0, 1, ... in sorted order. Missing values are tried on both sides, as for a
        threshold. At prediction a category the training X lacked is a missing value, and one
        the node's training rows lacked goes right. X must then be a dense array or a
        DataFrame, unless its columns hold codes already: :class:`~pyinterp.forest.CategoryCodes`
        then names their categories, for any form of X (packed genotypes' covariates too).
        ``categories_`` lists each categorical column's categories and ``is_categorical_`` marks
        the columns; :meth:`Tree.left_set <pyinterp.forest.Tree.left_set>` gives a split's left
        categories as indices into them, and ``to_sklearn`` refuses such forests. None: no
        categorical columns.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,), or list of ndarray
        The class labels, sorted (one array per output for a 2-d y).
    n_classes_ : int or list of int
        The number of classes (per output for a 2-d y).
    trees_ : list of Tree
        The fitted trees as read-only node arrays (:class:`~pyinterp.forest.Tree`); their
        ``value`` holds the weighted class fractions of each node.
    estimators_ : sequence of sklearn.tree.DecisionTreeClassifier
        The trees as fitted scikit-learn decision trees, each built when first read (also
        ``len(forest)``, ``forest[i]``, ``iter(forest)``).
    estimators_samples_ : list of ndarray
        Per tree, the training rows it drew, each repeated as often as drawn, in increasing order.
    inbag_counts_ : ndarray of uint32, shape (n_estimators, n_samples)
        How often each tree drew each training row (not in scikit-learn).
    feature_importances_ : ndarray of shape (n_features,)
        The mean decrease in impurity, normalised as scikit-learn normalises it.
    n_features_in_ : int
        The number of features of the training X.
    feature_names_in_ : ndarray of str, shape (n_features,)
        The training X's column names (a DataFrame's columns, an AnnData's ``var_names``, packed
        genotypes' variant IDs); defined only when they are all strings.
    n_outputs_ : int
        The number of outputs: the columns of a 2-d y, else 1.
    oob_score_ : float
        The score of the out-of-bag predictions (the accuracy by default) over the rows that
        have one; only with ``oob_score``.
    oob_decision_function_ : ndarray of shape (n_samples, n_classes) or (n_samples, n_classes, n_outputs)
        Each training row's class probabilities over the trees that did not draw it, NaN for
        rows that every tree drew; only with ``oob_score``.
    is_categorical_ : ndarray of bool, shape (n_features,), or None
        Which columns are categorical; None without ``categorical_features``.
    categories_ : list of ndarray or None
        Per categorical column (in column order), its categories in code order; None without
        categorical columns.

    See Also
    --------
    RandomForestRegressor : The same forest for regression.
    pyinterp.forest.tree_rules : A tree's leaves as readable rules.
    pyinterp.forest.combine : One forest of forests fitted apart on the same rows.
    pyinterp.importance.mdi_oob : Feature importance on the out-of-bag rows, free of MDI's bias.

    Notes
    -----
    Differences from :class:`sklearn.ensemble.RandomForestClassifier`, each for a reason:

    - **Inputs.** X may be numpy or pandas, C or Fortran order, strided, read-only. float64,
      float32, int8, uint8, int16 and bool X (genotype codes) are read as they are, never
      copied, other dtypes as float64; thresholds are midpoints of the values as given
      (scikit-learn converts X to float32 first, and its trees compare X as float32). NaN is a
      missing value, with scikit-learn's semantics: a split searched over rows with missing
      values sends them to the side that scores better, and one whose training rows had none
      sends them to the child with more rows. scipy.sparse CSR and CSC X (single-cell counts)
      is read without densifying (missing values only in dense X). A read-only memory map
      (``np.load(path, mmap_mode="r")``) is read from its file in panels of columns, so it never
      has to fit in memory. Packed genotypes (:func:`pyinterp.io.read_plink`, ``read_pgen``,
      ``read_vcf``, ``read_bgen``) are split on their 2-bit calls where they lie, with the
      variant IDs as feature names, and an AnnData is read through its ``X`` with its
      ``var_names``. The trees are the same for every form of the same values, and X is never
      modified. What has no one number is refused by name rather than cast: dates and
      durations (datetime64, timedelta64), masked arrays (``np.ma.filled(X, np.nan)`` makes the
      masked entries missing), and integers beyond +-2^53, which float64 cannot tell apart;
      infinity is refused, and an int8 X holding -127 (bed-reader's missing call) warns.
    - **Determinism.** Tree t draws its rows and candidates from the stream (seed, t), so the
      forest is bit-identical for every ``n_jobs``, fitted at once or in ``warm_start`` steps,
      in one process or in chunks on a cluster; predictions average the trees in tree order.
    - **What is recorded.** Each node records scikit-learn's arrays (``feature``,
      ``threshold``, ``left``, ``right``, ``impurity``, ``n_node_samples``,
      ``weighted_n_node_samples``, ``missing_go_to_left``, ``value``) and also its ``parent``,
      its ``depth``, its ``impurity_decrease`` (the MDI term) and, for a split on categories,
      its left set; and the forest records each tree's in-bag counts (``inbag_counts_``), which
      scikit-learn regenerates from random states. Every node holds one value per class, so
      trees grown to purity on many rows and classes are large: ``max_leaf_nodes``,
      ``max_depth`` or ``min_samples_leaf`` make them smaller.
    - **Parameters.** ``max_features`` counts non-constant candidates; ``max_samples`` also
      subsamples without bootstrap; out-of-bag values of rows every tree drew are NaN; the
      parameters ``min_node_size``,
      ``keep_oob_leaves``, ``always_split_features`` and ``categorical_features`` and
      :meth:`fit`'s ``feature_weights`` are pyinterp's. ``estimator_`` (scikit-learn's template
      tree) is not an attribute.

    Several outputs (a 2-d y) are fitted as in scikit-learn: a split lowers the mean of the
    outputs' impurities, :meth:`predict_proba` gives a list with one array per output, and
    ``class_weight`` takes a list of dicts (or "balanced", "balanced_subsample", whose outputs'
    weights multiply). MDI and ``feature_importances_`` read such forests, and so do signed
    paths, DWP, path prevalence and their miners; the measures that score or explain one
    response per row (MDI-oob, naive-oob, UFI, permutation, contributions, SHAP, rules) refuse
    them: fit one forest per output.

    References: L. Breiman, "Random forests", Machine Learning 45, 5-32 (2001); L. Breiman,
    J. Friedman, R. Olshen and C. Stone, *Classification and Regression Trees* (1984).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 6))
    >>> y = np.where((X[:, 0] > 0) & (X[:, 1] > 0), "case", "control")  # an interaction
    >>> forest = RandomForestClassifier(n_estimators=50, oob_score=True, random_state=0).fit(X, y)
    >>> forest.classes_.tolist()
    ['case', 'control']
    >>> print(round(forest.oob_score_, 3))  # out-of-bag accuracy
    0.993
    >>> np.argsort(-forest.feature_importances_)[:2].tolist()
    [0, 1]
    >>> forest.predict(X[:4]).tolist()
    ['control', 'case', 'control', 'case']
    >>> forest.predict_proba(X[:2]).round(2).tolist()
    [[0.02, 0.98], [1.0, 0.0]]

    Rare classes weighed up in each tree's own draws:

    >>> balanced = RandomForestClassifier(50, class_weight="balanced_subsample", random_state=0).fit(X, y)
    >>> balanced.trees_[0].value[0].round(3).tolist()  # the root's weighted class fractions
    [0.5, 0.5]
    """

    _criteria = {"gini": _core.Criterion.gini, "entropy": _core.Criterion.entropy, "log_loss": _core.Criterion.entropy}
    _parameter_constraints = {
        **_BaseForest._parameter_constraints,
        "criterion": [StrOptions(set(_criteria))],
        "class_weight": [StrOptions({"balanced", "balanced_subsample"}), dict, list, None],
    }

    def __init__(
        self,
        n_estimators=100,
        *,
        criterion="gini",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features="sqrt",
        max_leaf_nodes=None,
        min_impurity_decrease=0.0,
        bootstrap=True,
        oob_score=False,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
        ccp_alpha=0.0,
        max_samples=None,
        class_weight=None,
        monotonic_cst=None,
        min_node_size=None,
        keep_oob_leaves=False,
        always_split_features=None,
        categorical_features=None,
    ):
        super().__init__(
            n_estimators,
            criterion=criterion,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_features=max_features,
            max_leaf_nodes=max_leaf_nodes,
            min_impurity_decrease=min_impurity_decrease,
            bootstrap=bootstrap,
            oob_score=oob_score,
            n_jobs=n_jobs,
            random_state=random_state,
            verbose=verbose,
            warm_start=warm_start,
            ccp_alpha=ccp_alpha,
            max_samples=max_samples,
            monotonic_cst=monotonic_cst,
            min_node_size=min_node_size,
            keep_oob_leaves=keep_oob_leaves,
            always_split_features=always_split_features,
            categorical_features=categorical_features,
        )
        self.class_weight = class_weight

    def _check_loaded_state(self, core):
        super()._check_loaded_state(core)
        one = core.n_outputs == 1
        classes = [self.classes_] if one else self.classes_
        counts = [self.n_classes_] if one else self.n_classes_
        if not (isinstance(classes, list) and isinstance(counts, list) and len(classes) == len(counts) == core.n_outputs
                and all(isinstance(c, np.ndarray) and c.ndim == 1 for c in classes)
                and [len(c) for c in classes] == counts and max(counts) == core.n_classes):
            raise ValueError(f"corrupt {type(self).__name__} state: classes_ and n_classes_ do not hold the classes of "
                             f"its trees' {core.n_outputs} output(s), at most {core.n_classes} classes each")

    @guarded_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, feature_weights=None):
        """Grow the forest on the training rows X and their classes y.

        With ``warm_start`` on a fitted forest, the trees it has are kept and new ones added (see
        the class's ``warm_start``).

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, dask array, ColumnFiles} of shape (n_samples, p)
            The training rows: a numpy array or DataFrame (float64, float32, int8, uint8, int16
            and bool read as they are, other dtypes as float64), a scipy.sparse CSR or CSC
            matrix, a read-only memory map, packed genotypes or an AnnData (see the class's
            Notes). NaN is a missing value; infinity is refused. With ``categorical_features``,
            a dense array (of objects, for strings) or a DataFrame. A dask array or a
            :class:`~pyinterp.io.ColumnFiles` (.bed / .npy files of X's columns) is fitted
            feature-parallel on the running Dask client's cluster: each column chunk or file
            block stays on one worker, and the trees are those of the same values in memory
            (docs/user/cluster.md; categorical columns to encode: a dask array's, or a
            ColumnFiles' covariates).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            The class labels (numbers, strings, booleans); a continuous y is refused, as in
            scikit-learn. A 2-d y fits several outputs at once,
            each split lowering the mean of their impurities; a 2-d y of one column is one
            output, with scikit-learn's ``DataConversionWarning``.
        sample_weight : array-like of shape (n_samples,) or None, default None
            Non-negative finite row weights with a positive sum, multiplied by the
            ``class_weight`` of each row's class. With bootstrap these weights choose the rows, as
            in scikit-learn 1.9: row i is drawn with probability ``w_i / sum(w)`` and the trees
            weight the rows by their draw counts. Without bootstrap the trees weight each row (of
            the subsample, with ``max_samples``) by its weight. "balanced_subsample" then
            multiplies each tree's row weights by its class balance. None: all 1.
        feature_weights : array-like of shape (n_features,) or None, default None
            Not in scikit-learn (iRF's reweighting, Basu et al. 2018): each node draws its
            candidate features with probability proportional to these weights (non-negative,
            finite, with a positive sum; their scale does not matter). A feature of weight 0 is
            never a candidate (the ``always_split_features`` are searched whatever their
            weight), and ``max_features`` is at most the number of positive weights. None:
            uniform draws.

        Returns
        -------
        self : RandomForestClassifier
            The fitted forest.

        Raises
        ------
        ValueError
            If y is continuous; if ``oob_score`` is set for a multiclass-multioutput y or while
            every tree fits every row (no bootstrap and no ``max_samples`` below n_samples); if
            a ``class_weight`` is negative, not finite or names a class y lacks; if
            ``warm_start`` meets fewer ``n_estimators`` than trees, an X of another shape, other
            classes or other categories; if ``monotonic_cst`` does not fit X and y (its length,
            its values, NaN in X, more than two classes, several outputs).
        OutputTooLarge
            If the trees' node values (one per class in every node) could not fit in this
            machine's memory.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 4))
        >>> y = np.where(X[:, 0] > 0.5, "case", "control")
        >>> forest = RandomForestClassifier(20, random_state=0)
        >>> forest.fit(X, y) is forest
        True
        >>> forest.classes_.tolist(), forest.n_classes_
        (['case', 'control'], 2)

        Weighing up the rarer class, and drawing candidates by weight (iRF's reweighting):

        >>> forest = RandomForestClassifier(20, class_weight="balanced", random_state=0)
        >>> forest = forest.fit(X, y, feature_weights=[1, 1, 0, 0])
        >>> {int(f) for tree in forest.trees_ for f in tree.feature if f >= 0} <= {0, 1}
        True
        """
        X, y = self._targets(X, y)
        check_classification_targets(y)
        if self.oob_score and type_of_target(y) == "multiclass-multioutput":
            raise ValueError("The type of target cannot be used to compute OOB estimates. Got multiclass-multioutput "
                             "while only the following are supported: continuous, continuous-multioutput, binary, "
                             "multiclass, multilabel-indicator.")
        # Each output's classes, encoded as indices into them.
        columns = [np.unique(column, return_inverse=True) for column in (y.T if y.ndim == 2 else [y])]
        classes = [c for c, _ in columns]
        if self.warm_start and hasattr(self, "_forest") and not _same_classes(classes, self._classes_per_output()):
            raise ValueError(f"warm_start adds trees for the same classes: y has {[c.tolist() for c in classes]}, "
                             f"the forest was fitted on {[c.tolist() for c in self._classes_per_output()]}")
        self.classes_ = classes[0] if y.ndim == 1 else classes
        self.n_classes_ = len(classes[0]) if y.ndim == 1 else [len(c) for c in classes]
        encoded = np.stack([e.ravel() for _, e in columns], axis=1)
        encoded = np.ascontiguousarray(encoded if y.ndim == 2 else encoded[:, 0], dtype=np.int32)
        for weights in (self.class_weight if isinstance(self.class_weight, list) else [self.class_weight]):
            if isinstance(weights, dict):
                bad = {c: w for c, w in weights.items()
                       if not (isinstance(w, Real) and not isinstance(w, bool) and np.isfinite(w) and w >= 0)}
                if bad:
                    raise ValueError(f"class_weight must give every class a finite weight >= 0, got {bad}")
        # balanced_subsample over every row (no bootstrap, no max_samples) is "balanced", as in scikit-learn
        every_row = not self.bootstrap and self.max_samples is None
        balanced_subsample = self.class_weight == "balanced_subsample" and not every_row
        class_weight_rows = None
        if self.class_weight in ("balanced", "balanced_subsample") and not balanced_subsample:
            if sample_weight is not None:
                sample_weight = check_weights_vector("sample_weight", sample_weight, len(encoded), what="row")
            class_weight_rows = _balanced_rows(encoded, sample_weight)
        elif self.class_weight is not None and not balanced_subsample:
            class_weight_rows = compute_sample_weight(self.class_weight, y)
        return self._fit(X, y, encoded, max(len(c) for c in classes), sample_weight, feature_weights,
                         class_weight_rows, balanced_subsample)

    def _classes_per_output(self):
        return [self.classes_] if self._forest.n_outputs == 1 else self.classes_

    def _per_output(self, values):
        """The core's values per row (each output's classes at a stride of the most classes) as
        scikit-learn returns probabilities: an array for one output, a list of arrays for several."""
        classes = self._classes_per_output()
        if len(classes) == 1:
            return values
        stride = values.shape[1] // len(classes)
        return [values[:, k * stride:k * stride + len(c)] for k, c in enumerate(classes)]

    def _labels(self, proba):
        """Each output's most probable class: (n,) for one output, (n, n_outputs) for several."""
        if isinstance(proba, np.ndarray):
            return self.classes_.take(np.argmax(proba, axis=1))
        out = np.empty((proba[0].shape[0], len(proba)), dtype=self.classes_[0].dtype)
        for k, (c, p) in enumerate(zip(self.classes_, proba)):
            out[:, k] = c.take(np.argmax(p, axis=1))
        return out

    def _set_oob_score(self, X, y):
        values, has_oob = self._oob_values(X, training=True)
        proba = self._per_output(values)
        # scikit-learn's layout: (n, n_classes) for one output, (n, n_classes, n_outputs) for several
        # (fit refuses out-of-bag scores when outputs could differ in their number of classes).
        self.oob_decision_function_ = proba if isinstance(proba, np.ndarray) else np.stack(proba, axis=-1)
        scorer = self.oob_score if callable(self.oob_score) else accuracy_score
        predicted = self._labels(proba)
        self.oob_score_ = float(scorer(y[has_oob], predicted[has_oob]))

    def oob_predict_proba(self, X):
        """Out-of-bag class probabilities of every training row: the mean over the trees that did not draw it.

        Not in scikit-learn, whose forests offer these only as ``oob_decision_function_`` after a
        fit with ``oob_score``. Rows that every tree drew have no out-of-bag probabilities: they
        get NaN, with scikit-learn's warning. X is run down the trees (the leaves recorded at fit
        are not read, since X could be other rows).

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, ColumnFiles} of shape (n_samples, n_features)
            The training X, its rows in the order fit saw them (``inbag_counts_`` says which
            trees drew each).
            A dask array or :class:`~pyinterp.io.ColumnFiles` is read only at the columns the
            trees split on, on its cluster, a run of rows at a time (docs/user/cluster.md).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), or list of such arrays
            Each row's class probabilities over the trees that left it out of bag, columns in
            the order of ``classes_``, NaN where there is none; for a 2-d y, one array per
            output, as :meth:`predict_proba` gives them. With ``oob_score=True``, fit stores
            them as ``oob_decision_function_`` (stacked on a last axis for several outputs).

        Raises
        ------
        ValueError
            If X has another number of rows than the training X.

        See Also
        --------
        predict_proba : The probabilities of all the trees, for new rows.
        RandomForestRegressor.oob_predict : The same for regression.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 4))
        >>> y = (X[:, 0] > 0.5).astype(int)
        >>> forest = RandomForestClassifier(20, oob_score=True, random_state=0).fit(X, y)
        >>> proba = forest.oob_predict_proba(X)
        >>> proba.shape, bool(np.array_equal(proba, forest.oob_decision_function_))
        ((200, 2), True)
        >>> predicted = forest.classes_[proba.argmax(axis=1)]
        >>> bool(np.mean(predicted == y) == forest.oob_score_)  # oob_score_ is their accuracy
        True
        """
        return self._per_output(self._oob_values(*self._oob_rows(X))[0])

    def predict_proba(self, X):
        """Class probabilities of X: the mean over the trees of their leaves' class fractions.

        A leaf's class fractions are weighted by the row weights of its in-bag rows (class
        weights included). The trees are averaged in tree order, so the result does not depend
        on ``n_jobs``.

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, ColumnFiles} of shape (n_samples, n_features)
            The rows, in any form ``fit`` reads, with the training X's columns (and names,
            checked as scikit-learn checks them). Missing values follow each split's
            ``missing_go_to_left``; with ``categorical_features``, a category the training X
            lacked is a missing value.
            A dask array or :class:`~pyinterp.io.ColumnFiles` is read only at the columns the
            trees split on, on its cluster, a run of rows at a time (docs/user/cluster.md).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), or list of such arrays
            The probabilities, columns in the order of ``classes_``; for a 2-d y, a list with one
            such array per output (each with its output's classes).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 4))
        >>> y = np.where(X[:, 0] > 0.5, "case", "control")
        >>> forest = RandomForestClassifier(20, random_state=0).fit(X, y)
        >>> forest.classes_.tolist()
        ['case', 'control']
        >>> forest.predict_proba(np.array([[2.0, 0, 0, 0], [-2.0, 0, 0, 0]])).round(2).tolist()
        [[1.0, 0.0], [0.05, 0.95]]
        """
        return self._per_output(self._predict_values(X))

    def predict_log_proba(self, X):
        """The natural logarithm of :meth:`predict_proba`'s class probabilities.

        A probability of 0 gives ``-inf``, without a warning.

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, ColumnFiles} of shape (n_samples, n_features)
            The rows, in any form ``fit`` reads, with the training X's columns.
            A dask array or :class:`~pyinterp.io.ColumnFiles` is read only at the columns the
            trees split on, on its cluster, a run of rows at a time (docs/user/cluster.md).

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes), or list of such arrays
            The log-probabilities, columns in the order of ``classes_``; for a 2-d y, a list with
            one such array per output.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 4))
        >>> forest = RandomForestClassifier(20, random_state=0).fit(X, X[:, 0] > 0.5)
        >>> forest.classes_.tolist()
        [False, True]
        >>> forest.predict_log_proba(np.array([[-2.0, 1.0, 1.0, 1.0]])).tolist()  # log 0 = -inf
        [[0.0, -inf]]
        """
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return np.log(proba) if isinstance(proba, np.ndarray) else [np.log(p) for p in proba]

    def predict(self, X):
        """Predict the class of X: the class of highest mean probability over the trees.

        As in scikit-learn, the trees vote with their leaves' class fractions
        (:meth:`predict_proba`), not with their majority classes; a tie goes to the first of
        the tied classes in ``classes_``.

        Parameters
        ----------
        X : {array-like, sparse matrix, PackedGenotypes, AnnData, ColumnFiles} of shape (n_samples, n_features)
            The rows, in any form ``fit`` reads, with the training X's columns (and names,
            checked as scikit-learn checks them).
            A dask array or :class:`~pyinterp.io.ColumnFiles` is read only at the columns the
            trees split on, on its cluster, a run of rows at a time (docs/user/cluster.md).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The predicted labels, of the type of ``classes_``; one column per output for a 2-d y.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 4))
        >>> y = np.where(X[:, 0] > 0.5, "case", "control")
        >>> forest = RandomForestClassifier(20, random_state=0).fit(X, y)
        >>> forest.predict(np.array([[2.0, 0, 0, 0], [-2.0, 0, 0, 0]])).tolist()
        ['case', 'control']
        >>> Y = np.column_stack([y, np.where(X[:, 1] > 0, "high", "low")])  # two outputs
        >>> RandomForestClassifier(20, random_state=0).fit(X, Y).predict(np.array([[2.0, 1, 0, 0]])).tolist()
        [['case', 'high']]
        """
        return self._labels(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags


def _same_encoding(a, b):
    """Whether two category encoders (or None) encode the same columns with the same categories."""
    if a is None or b is None:
        return a is b
    return np.array_equal(a.columns, b.columns) and all(
        len(x) == len(y) and all(u == v for u, v in zip(x, y)) for x, y in zip(a.categories_, b.categories_))


def _balanced_rows(encoded, sample_weight):
    """Each row's "balanced" class weight: per output, the total weight over (classes x the class's
    weight), sample weights summed as scikit-learn 1.9 sums them (rows counted without them); the
    outputs' weights multiply. A class of zero total weight weighs 0. ``encoded``: each output's
    labels as indices into its classes, every class present."""
    rows = np.ones(len(encoded))
    for codes in (encoded.T if encoded.ndim == 2 else [encoded]):
        totals = np.bincount(codes, weights=sample_weight).astype(np.float64)
        with np.errstate(divide="ignore"):
            weight = np.where(totals > 0, totals.sum() / (len(totals) * totals), 0.0)
        rows *= weight[codes]
    return rows


def _same_classes(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
