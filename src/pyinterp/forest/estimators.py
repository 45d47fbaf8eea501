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
        self._n_threads = params.n_threads
        X = core_X(X, by_columns=True)
        if params.n_estimators > 0:
            regression = n_classes == 0
            data = (X, targets if regression else None, None if regression else targets, n_classes, sample_weight,
                    feature_weights, params)
            # On a cluster the trees grow elsewhere: the report comes when they are back.
            with Progress(self.verbose, params.n_estimators, "trees", core=True):
                forest = fit_forest_chunks(*data)  # None without a distributed joblib backend
                if forest is None:
                    forest = _core.fit_forest(*data, mapped_file=mapped_file(X))
            self._forest = _core.join_forests([self._forest, forest]) if grown else forest
        if self.oob_score:
            self._set_oob_score(X, y)
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
        if np.issubdtype(values.dtype, np.floating) and np.isnan(values).any():
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
        X = self._encode_categories(X)
        X, y = validate_fit_data(self, X, y, multi_output=True)
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                          "to (n_samples,), for example using ravel().", DataConversionWarning, stacklevel=3)
            y = y[:, 0]
        return X, y

    def _check_encoding(self, encoder):
        old = getattr(self, "_category_encoder", None)
        if self.warm_start and hasattr(self, "_forest") and not _same_encoding(old, encoder):
            raise ValueError("warm_start adds trees on the same categories: categorical_features or the categories of "
                             "X differ from the first fit's")

    def _oob_values(self, X, training=False):
        """(values, has_oob): each training row's mean over the trees that did not draw it; X
        validated already (by fit, or by the public methods through _checked_rows). training: X
        is fit's own X, so the leaves fit recorded may serve."""
        n_samples = self._forest.n_samples
        if X.shape[0] != n_samples:
            raise ValueError(f"X has {X.shape[0]} rows; out-of-bag predictions are for the {n_samples} training "
                             "rows, in the order fit saw them")
        values, n_trees = self._forest.predict_oob(X, self._n_threads, training=training)
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

    # -- fitted structure ----------------------------------------------------------------------

    @property
    def trees_(self) -> list[Tree]:
        """The fitted trees, each a set of read-only node arrays (see :class:`Tree`)."""
        check_is_fitted(self, "_forest")
        return [Tree(self._forest.tree(t)) for t in range(self._forest.n_trees)]

    @property
    def inbag_counts_(self) -> np.ndarray:
        """(n_estimators, n_samples) uint32: how often each training row was drawn for each tree."""
        check_is_fitted(self, "_forest")
        return self._forest.inbag

    @property
    def estimators_samples_(self) -> list:
        """The rows each tree drew (scikit-learn's attribute): per tree, the training row indices,
        each repeated as often as it was drawn, in increasing order."""
        check_is_fitted(self, "_forest")
        rows = np.arange(self._forest.n_samples)
        return [np.repeat(rows, counts) for counts in self._forest.inbag]

    @property
    def n_outputs_(self) -> int:
        """Outputs of y: its columns when fit was given a 2-d y, else 1."""
        check_is_fitted(self, "_forest")
        return self._forest.n_outputs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean decrease in impurity, normalised as scikit-learn does: each tree's importances
        sum to one, trees with a single node are skipped, and the mean is renormalised."""
        check_is_fitted(self, "_forest")
        return _core.mdi(self._forest, True)

    @property
    def estimators_(self):
        """The trees as fitted scikit-learn decision trees (a list-like; each tree is built from
        the node arrays when first read from it), for tools that walk ``estimators_``."""
        check_is_fitted(self, "_forest")
        return TreeEstimators(self)

    def __len__(self):
        return len(self.estimators_)

    def __getitem__(self, index):
        return self.estimators_[index]

    def __iter__(self):
        return iter(self.estimators_)

    def to_sklearn(self):
        """A fitted scikit-learn RandomForestRegressor / RandomForestClassifier of the same trees,
        node for node (same parameters), for shap's TreeExplainer, sklearn.tree.export_text /
        plot_tree, treeinterpreter. Its predict, apply and decision_path equal this forest's on
        float32-representable X (scikit-learn's trees compare X as float32)."""
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
        seed, threads = getattr(self, "_seed", 0), getattr(self, "_n_threads", None)  # 0.1.0 had no _seed
        if not isinstance(seed, Integral) or seed < 0:
            corrupt(f"_seed = {seed!r}")
        if not isinstance(threads, Integral) or threads < 1:
            corrupt(f"_n_threads = {threads!r}")

    # -- prediction ----------------------------------------------------------------------------

    def _predict_values(self, X):
        X = self._checked_rows(X)
        return self._forest.predict(X, self._n_threads)

    def apply(self, X):
        """Leaf index reached by every row in every tree, shape (n_samples, n_estimators)."""
        X = self._checked_rows(X)
        return self._forest.apply(X, self._n_threads)

    def decision_path(self, X):
        """Nodes visited by every row, as scikit-learn returns them: a CSR indicator matrix of
        shape (n_samples, total nodes) and the column offset of each tree (n_estimators + 1)."""
        X = self._checked_rows(X)
        indptr, indices, offsets = self._forest.decision_path(X, self._n_threads)
        data = np.ones(indices.shape[0], dtype=np.int8)
        indicator = sp.csr_matrix((data, indices, indptr), shape=(X.shape[0], int(offsets[-1])))
        return indicator, offsets


class RandomForestRegressor(RegressorMixin, _BaseForest):
    """Random forest of CART regression trees, grown to purity by default.

    ``criterion``: "squared_error" (leaves predict the mean), "poisson" (half Poisson deviance,
    for counts: y >= 0 with a positive sum; leaves predict the mean), "absolute_error" (leaves
    predict the weighted median; O(m log m) per feature and node, so slower), "friedman_mse"
    (deprecated as in scikit-learn 1.9: the same splits as squared_error, mapped to it). The
    impurity each tree records (MDI, ``feature_importances_``, DWP's node weights) is the
    criterion's; the out-of-bag measures (MDI-oob, naive-oob, UFI) read node impurity on the
    out-of-bag rows as variance for every regression criterion.

    ``max_leaf_nodes`` grows each tree best-first (the frontier node with the largest impurity
    decrease is split next; nodes are numbered as they are made); ``ccp_alpha`` prunes each tree
    to its minimal cost-complexity subtree (renumbered in preorder); ``monotonic_cst`` (per
    feature -1, 0, 1) keeps the prediction monotonic in the constrained features (splits whose
    children break the order or the node's bounds are not taken; node values are clipped to their
    bounds). All as scikit-learn does.

    Parameters follow :class:`sklearn.ensemble.RandomForestRegressor`. Differences:
    ``max_samples`` also works with ``bootstrap=False`` (subsampling without replacement, a
    fraction of the rows); out-of-bag values of rows that every tree drew are NaN and left out of
    ``oob_score_`` (scikit-learn predicts 0 for them and scores that);
    ``max_features`` counts features that are not constant in the node, so a node evaluates
    ``max_features`` real candidates whenever that many exist; ``fit`` takes ``feature_weights``
    (probabilities, up to scale, of drawing each feature as a candidate; zero = never).

    Parameters beyond scikit-learn's:

    min_node_size : int or None, default None
        ranger's ``min.node.size``: a node of at most this many in-bag draws (repeats counted, as
        ranger counts them; with ``sample_weight``, of at most this in-bag weight) is not split.
        None: no such limit.
    keep_oob_leaves : bool, default False
        Keep the leaf each out-of-bag training row reaches in each tree, recorded as the trees
        grow (4 bytes per tree and row): later out-of-bag readings of the training rows then need
        no descent. IterativeRandomForest's R style reads its forests' leaves so.
    always_split_features : array-like of int or str, or bool mask, default None
        ranger's ``always.split.variables``: columns (indices, names of a named X, or a mask)
        searched at every node besides the ``max_features`` drawn from the other columns, which
        "sqrt", "log2" and fractions then count. Offer covariates (principal components, age,
        sex, batch) so: each split on a genotype is weighed against the best split on every
        covariate in that node, so a genotype that only tags a covariate loses to it. Among equal
        splits an always-split column wins.
    categorical_features : array-like of int, str or bool, "from_dtype" or CategoryCodes, default None
        Columns (indices, names of a named X, or a mask; "from_dtype": a DataFrame's ``category``
        columns) split as categories rather than at a threshold, as scikit-learn 1.10's decision
        trees split them (its forests do not yet): a node sends a set of categories left. The
        node orders its categories by their mean of y (or share of the second class) and tries
        every prefix of that order (Breiman's shortcut, which finds the best of all splits of
        the categories for one output and squared error, Poisson or two classes, so those only).
        At most 256 categories per column, taken from the training X (strings, numbers, pandas
        categories). At prediction a category the training X lacked is a missing value, and one
        the node's training rows lacked goes right. X must then be a dense array or a
        DataFrame, unless its columns hold codes already: ``CategoryCodes({column: its
        categories})`` then names them, for any form of X (packed genotypes' covariates too).
        ``categories_`` lists each categorical column's categories and
        ``is_categorical_`` marks the columns; ``Tree.left_set(node)`` gives a split's left
        categories as indices into them. Categories have no order, so ``monotonic_cst`` must be
        0 on them.

    Examples
    --------
    A tissue effect that no threshold on the category codes finds in one split:

    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
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
        """Out-of-bag prediction of every training row: the mean over the trees that did not draw
        it, NaN (with a warning) where every tree did. X is the training matrix, rows in the order
        fit saw them; ``oob_score=True`` stores the same values as ``oob_prediction_``."""
        return self._outputs(self._oob_values(self._checked_rows(X))[0])

    def predict(self, X):
        """Mean of the trees' leaf values: shape (n,), or (n, n_outputs) for a 2-d y."""
        return self._outputs(self._predict_values(X))


class RandomForestClassifier(ClassifierMixin, _BaseForest):
    """Random forest of CART classification trees (Gini or entropy), grown to purity by default.

    Parameters follow :class:`sklearn.ensemble.RandomForestClassifier`, with the differences
    listed for :class:`RandomForestRegressor`. ``class_weight`` takes None, a dict, "balanced"
    or "balanced_subsample" (classes reweighted per tree by their in-bag counts).
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
        balanced_subsample = self.class_weight == "balanced_subsample"
        class_weight_rows = None
        if self.class_weight is not None and not balanced_subsample:
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
        """Out-of-bag class probabilities of every training row (see
        :meth:`RandomForestRegressor.oob_predict`), per output as :meth:`predict_proba` gives them;
        ``oob_score=True`` stores them as ``oob_decision_function_``."""
        return self._per_output(self._oob_values(self._checked_rows(X))[0])

    def predict_proba(self, X):
        """Mean over trees of the leaf class fractions, columns in the order of ``classes_``; for
        a 2-d y, a list with one such array per output."""
        return self._per_output(self._predict_values(X))

    def predict_log_proba(self, X):
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return np.log(proba) if isinstance(proba, np.ndarray) else [np.log(p) for p in proba]

    def predict(self, X):
        """The most probable class: shape (n,), or (n, n_outputs) for a 2-d y."""
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


def _same_classes(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
