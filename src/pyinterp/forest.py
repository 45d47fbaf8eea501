"""Random-forest estimators on pyinterp's C++ engine, following scikit-learn's estimator contract."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _core
from ._validation import (
    check_int,
    check_real,
    check_weights_vector,
    count_or_fraction,
    resolve_max_features,
    resolve_n_draws,
    resolve_n_threads,
)

__all__ = ["RandomForestClassifier", "RandomForestRegressor", "Tree"]

TREE_FIELDS = tuple(
    "feature threshold left right parent depth n_node_samples weighted_n_node_samples "
    "impurity impurity_decrease value".split()
)


class Tree:
    """One fitted tree as read-only arrays, one entry per node in depth-first preorder.

    A leaf has ``left == right == feature == -1``. Rows with ``x[feature] <= threshold`` go left.
    ``impurity_decrease`` is ``(N_t I_t - N_l I_l - N_r I_r) / N_root`` with weighted node sizes N.
    ``value`` has shape (node_count, 1) for regression (the mean) and (node_count, n_classes) for
    classification (weighted class fractions).
    """

    __slots__ = TREE_FIELDS

    def __init__(self, arrays):
        for name in TREE_FIELDS:
            object.__setattr__(self, name, arrays[name])

    def __setattr__(self, name, value):
        raise AttributeError("Tree is read-only")

    @property
    def node_count(self) -> int:
        return int(self.feature.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(np.count_nonzero(self.left < 0))

    @property
    def max_depth(self) -> int:
        return int(self.depth.max())

    def __repr__(self):
        return f"Tree(node_count={self.node_count}, n_leaves={self.n_leaves}, max_depth={self.max_depth})"


def mdi_from_trees(trees, n_features, normalize=True):
    """Mean decrease in impurity from per-tree node-array dicts; see ``pyinterp.importance.mdi``."""
    per_tree = []
    for arrays in trees:
        split = arrays["left"] >= 0
        imp = np.bincount(arrays["feature"][split], weights=arrays["impurity_decrease"][split], minlength=n_features)
        if normalize:
            if not split.any():
                continue
            total = imp.sum()
            imp = imp / total if total > 0 else imp
        per_tree.append(imp)
    if not per_tree:
        return np.zeros(n_features)
    mean = np.mean(per_tree, axis=0)
    if normalize:
        total = mean.sum()
        return mean / total if total > 0 else mean
    return mean


def _check_X(estimator, X, *, reset):
    return validate_data(estimator, X, reset=reset, dtype=[np.float64, np.float32], ensure_all_finite=True)


class _BaseForest(BaseEstimator):
    """Shared fit/predict machinery; subclasses define the task."""

    _criteria: tuple = ()

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
        min_impurity_decrease,
        bootstrap,
        oob_score,
        n_jobs,
        random_state,
        max_samples,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_samples = max_samples

    # -- fitting -------------------------------------------------------------------------------

    def _params(self, n_samples, n_features, n_drawable):
        if self.criterion not in self._criteria:
            raise ValueError(f"criterion must be one of {self._criteria}, got {self.criterion!r}")
        if not isinstance(self.bootstrap, (bool, np.bool_)):
            raise TypeError(f"bootstrap must be a bool, got {self.bootstrap!r}")
        p = _core.ForestParams()
        p.criterion = getattr(_core.Criterion, "entropy" if self.criterion == "log_loss" else self.criterion)
        p.n_estimators = check_int("n_estimators", self.n_estimators, 1)
        p.bootstrap = bool(self.bootstrap)
        p.n_draws = resolve_n_draws(self.max_samples, n_samples, self.bootstrap)
        p.max_features = resolve_max_features(self.max_features, n_features, n_drawable)
        p.min_samples_split = count_or_fraction("min_samples_split", self.min_samples_split, n_samples, min_count=2)
        p.min_samples_leaf = count_or_fraction("min_samples_leaf", self.min_samples_leaf, n_samples, fraction_max=0.5)
        p.min_weight_fraction_leaf = check_real("min_weight_fraction_leaf", self.min_weight_fraction_leaf, 0.0, 0.5)
        p.max_depth = -1 if self.max_depth is None else check_int("max_depth", self.max_depth, 1)
        p.min_impurity_decrease = check_real("min_impurity_decrease", self.min_impurity_decrease, 0.0)
        rng = check_random_state(self.random_state)
        if isinstance(self.random_state, numbers.Integral):
            p.seed = int(self.random_state)
        else:
            p.seed = int(rng.randint(np.iinfo(np.int32).max))
        p.n_threads = resolve_n_threads(self.n_jobs)
        if self.oob_score and not callable(self.oob_score) and not isinstance(self.oob_score, (bool, np.bool_)):
            raise TypeError(f"oob_score must be a bool or a callable, got {self.oob_score!r}")
        if self.oob_score and not p.bootstrap and p.n_draws == n_samples:
            raise ValueError("out-of-bag estimation needs bootstrap=True or max_samples below the number of rows")
        return p

    def _fit(self, X, y, targets, n_classes, sample_weight, feature_weights, class_weight_rows=None,
             balanced_subsample=False):
        """class_weight_rows: per-row class weights, multiplied into the validated sample weights."""
        n_samples, n_features = X.shape
        if sample_weight is not None:
            sample_weight = check_weights_vector("sample_weight", sample_weight, n_samples, what="row")
        if class_weight_rows is not None:
            sample_weight = class_weight_rows if sample_weight is None else sample_weight * class_weight_rows
        if feature_weights is not None:
            feature_weights = check_weights_vector("feature_weights", feature_weights, n_features, what="feature")
            feature_weights /= feature_weights.max()
            n_drawable = int(np.count_nonzero(feature_weights))
        else:
            n_drawable = n_features
        params = self._params(n_samples, n_features, n_drawable)
        params.balanced_subsample = balanced_subsample
        if not X.flags.aligned:
            X = np.array(X)
        regression = n_classes == 0
        self._forest = _core.fit_forest(
            X,
            targets if regression else None,
            None if regression else targets,
            n_classes,
            sample_weight,
            feature_weights,
            params,
        )
        self._n_threads = params.n_threads
        if self.oob_score:
            self._set_oob_score(X, y)
        return self

    def _oob_values(self, X):
        values, n_trees = self._forest.predict_oob(X, self._n_threads)
        missing = n_trees == 0
        if missing.any():
            warnings.warn(
                f"{int(missing.sum())} rows were in the bag of every tree and have no out-of-bag "
                "prediction; they are NaN and left out of oob_score_. Use more trees.",
                UserWarning,
                stacklevel=3,
            )
            values[missing] = np.nan
        return values, ~missing

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
    def feature_importances_(self) -> np.ndarray:
        """Mean decrease in impurity, normalised as scikit-learn does: each tree's importances
        sum to one, trees with a single node are skipped, and the mean is renormalised."""
        check_is_fitted(self, "_forest")
        return mdi_from_trees((self._forest.tree(t) for t in range(self._forest.n_trees)), self.n_features_in_)

    # -- prediction ----------------------------------------------------------------------------

    def _predict_values(self, X):
        check_is_fitted(self, "_forest")
        X = _check_X(self, X, reset=False)
        return self._forest.predict(X, self._n_threads)

    def apply(self, X):
        """Leaf index reached by every row in every tree, shape (n_samples, n_estimators)."""
        check_is_fitted(self, "_forest")
        X = _check_X(self, X, reset=False)
        return self._forest.apply(X, self._n_threads)

    def decision_path(self, X):
        """Nodes visited by every row, as scikit-learn returns them: a CSR indicator matrix of
        shape (n_samples, total nodes) and the column offset of each tree (n_estimators + 1)."""
        check_is_fitted(self, "_forest")
        X = _check_X(self, X, reset=False)
        indptr, indices, offsets = self._forest.decision_path(X, self._n_threads)
        data = np.ones(indices.shape[0], dtype=np.int8)
        indicator = sp.csr_matrix((data, indices, indptr), shape=(X.shape[0], int(offsets[-1])))
        return indicator, offsets


class RandomForestRegressor(RegressorMixin, _BaseForest):
    """Random forest of CART regression trees (squared error), grown to purity by default.

    Parameters follow :class:`sklearn.ensemble.RandomForestRegressor`. Differences:
    ``max_samples`` also works with ``bootstrap=False`` (subsampling without replacement);
    ``max_features`` counts features that are not constant in the node, so a node evaluates
    ``max_features`` real candidates whenever that many exist; ``fit`` takes ``feature_weights``
    (probabilities, up to scale, of drawing each feature as a candidate; zero = never).
    """

    _criteria = ("squared_error",)

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
        min_impurity_decrease=0.0,
        bootstrap=True,
        oob_score=False,
        n_jobs=None,
        random_state=None,
        max_samples=None,
    ):
        super().__init__(
            n_estimators,
            criterion=criterion,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_features=max_features,
            min_impurity_decrease=min_impurity_decrease,
            bootstrap=bootstrap,
            oob_score=oob_score,
            n_jobs=n_jobs,
            random_state=random_state,
            max_samples=max_samples,
        )

    def fit(self, X, y, sample_weight=None, feature_weights=None):
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], y_numeric=True, ensure_all_finite=True)
        y = np.ascontiguousarray(y, dtype=np.float64)
        return self._fit(X, y, y, 0, sample_weight, feature_weights)

    def _set_oob_score(self, X, y):
        values, has_oob = self._oob_values(X)
        self.oob_prediction_ = values[:, 0]
        scorer = self.oob_score if callable(self.oob_score) else r2_score
        self.oob_score_ = float(scorer(y[has_oob], self.oob_prediction_[has_oob]))

    def predict(self, X):
        """Mean of the trees' leaf values."""
        return self._predict_values(X)[:, 0]


class RandomForestClassifier(ClassifierMixin, _BaseForest):
    """Random forest of CART classification trees (Gini or entropy), grown to purity by default.

    Parameters follow :class:`sklearn.ensemble.RandomForestClassifier`, with the differences
    listed for :class:`RandomForestRegressor`. ``class_weight`` takes None, a dict, "balanced"
    or "balanced_subsample" (classes reweighted per tree by their in-bag counts).
    """

    _criteria = ("gini", "entropy", "log_loss")

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
        min_impurity_decrease=0.0,
        bootstrap=True,
        oob_score=False,
        n_jobs=None,
        random_state=None,
        max_samples=None,
        class_weight=None,
    ):
        super().__init__(
            n_estimators,
            criterion=criterion,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_features=max_features,
            min_impurity_decrease=min_impurity_decrease,
            bootstrap=bootstrap,
            oob_score=oob_score,
            n_jobs=n_jobs,
            random_state=random_state,
            max_samples=max_samples,
        )
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None, feature_weights=None):
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], ensure_all_finite=True)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        self.n_classes_ = len(self.classes_)
        encoded = np.ascontiguousarray(encoded, dtype=np.int32)
        balanced_subsample = self.class_weight == "balanced_subsample"
        class_weight_rows = None
        if self.class_weight is not None and not balanced_subsample:
            if not isinstance(self.class_weight, (dict, str)) or (
                isinstance(self.class_weight, str) and self.class_weight != "balanced"
            ):
                raise ValueError(
                    "class_weight must be None, a dict, 'balanced' or 'balanced_subsample', "
                    f"got {self.class_weight!r}"
                )
            class_weight_rows = compute_sample_weight(self.class_weight, y)
        return self._fit(X, y, encoded, self.n_classes_, sample_weight, feature_weights, class_weight_rows,
                         balanced_subsample)

    def _set_oob_score(self, X, y):
        values, has_oob = self._oob_values(X)
        self.oob_decision_function_ = values
        scorer = self.oob_score if callable(self.oob_score) else accuracy_score
        predicted = self.classes_.take(np.argmax(values[has_oob], axis=1))
        self.oob_score_ = float(scorer(y[has_oob], predicted))

    def predict_proba(self, X):
        """Mean over trees of the leaf class fractions, columns in the order of ``classes_``."""
        return self._predict_values(X)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        proba = self.predict_proba(X)
        return self.classes_.take(np.argmax(proba, axis=1))
