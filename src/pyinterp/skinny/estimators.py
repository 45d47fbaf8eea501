"""SkinnyTreesRegressor / SkinnyTreesClassifier: soft tree ensembles with group-l0 feature selection."""

from __future__ import annotations

import copy
import dataclasses
import math
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d
from threadpoolctl import threadpool_limits

from .._progress import Progress, guarded_fit
from .._seeds import draw_seeds, python_rng
from .._validation import (IntInterval, check_classification_targets, check_up_front, regression_target,
                           validate_data)
from . import kernels
from .training import TrainConfig, predict_raw, train

__all__ = ["SkinnyTreesClassifier", "SkinnyTreesRegressor"]

_DTYPES = {"float32": np.float32, "float64": np.float64}

# lambda2="auto" (bench/studies/skinny_defaults.py --lambda2, docs/results/skinny_results.md "lambda2='auto'"):
# without a feature_budget the dense default; with one, the ridge that shrinks a group the loss
# leaves alone by (K/p)^AUTO_SHRINK_PER_LOG over the run's SGD steps.
AUTO_LAMBDA2_DENSE = 0.01
AUTO_SHRINK_PER_LOG = 5.0
# ... and when the model it trains misses the budget, trained again with another ridge (next_ridge),
# up to this many times (bench/studies/skinny_budget.py: budgets of 5-50 of thousands of genes).
AUTO_RIDGE_RETRIES = 4


def auto_lambda2(n_rows, n_features, *, feature_budget, n_trees, depth, learning_rate, batch_size, max_epochs):
    """The value lambda2="auto" resolves to (see SkinnyTreesRegressor)."""
    if feature_budget is None or feature_budget >= n_features:
        return AUTO_LAMBDA2_DENSE
    steps = max_epochs * math.ceil(n_rows / batch_size)
    exponent = AUTO_SHRINK_PER_LOG * math.log(n_features / max(feature_budget, 1))
    return exponent * n_trees * (2**depth - 1) / (2.0 * learning_rate * steps)



def next_ridge(tried, budget):
    """lambda2="auto"'s next ridge after the trainings `tried` ((ridge, features kept), in order),
    or None to stop: none when the first model is within the budget (1..K features) or one keeps
    K / 2 or more within it; else doubled while every model kept more than K, halved while every
    one kept at most K, then the geometric mean of the strongest ridge that kept more than K and
    the weakest that kept at most K (none, or too few)."""
    within = [kept for _, kept in tried if 1 <= kept <= budget]
    if (within and len(tried) == 1) or any(2 * kept >= budget for kept in within):
        return None
    weak = max((ridge for ridge, kept in tried if kept > budget), default=None)
    strong = min((ridge for ridge, kept in tried if kept <= budget), default=None)
    if weak is not None and strong is not None:
        return math.sqrt(weak * strong)
    return 2.0 * weak if weak is not None else 0.5 * strong


def _training_array(name, X, dtype):
    """X in the training dtype; float32 holds only ``|x|`` < 3.4e38, and an overflow to infinity would
    surface as a diverged fit, so that is an error naming the dtype."""
    out = np.ascontiguousarray(X, dtype=dtype)
    if out.dtype != X.dtype and not np.all(np.isfinite(out)):
        raise ValueError(f"{name} has values beyond the range of dtype={out.dtype.name!r} "
                         f"(|x| <= {np.finfo(out.dtype).max:.3g}); scale {name} or fit with dtype='float64'")
    return out

class _SkinnyTrees(BaseEstimator):
    """Shared parameters, fitting and inference; see SkinnyTreesRegressor for the documentation."""

    _parameter_constraints = {
        "n_trees": [IntInterval(Integral, 1, None, closed="left")],
        "depth": [IntInterval(Integral, 1, 12, closed="both")],
        "activation": [StrOptions(set(kernels.ACTIVATIONS))],
        "gamma_s": [Interval(Real, 0, None, closed="neither")],
        "penalty": [StrOptions({"l0", "group_lasso", "none"})],
        "lambda0": [Interval(Real, 0, None, closed="left")],
        "temperature": [Interval(Real, 0, None, closed="left"), None],
        "lambda2": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"sgd", "adam"})],
        "batch_size": [IntInterval(Integral, 1, None, closed="left")],
        "max_epochs": [IntInterval(Integral, 1, None, closed="left")],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [IntInterval(Integral, 1, None, closed="left")],
        "feature_budget": [IntInterval(Integral, 0, None, closed="left"), None],
        "dtype": [StrOptions(set(_DTYPES))],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_trees=20,
        depth=4,
        *,
        activation="sigmoid",
        gamma_s=1.0,
        penalty="l0",
        lambda0=100.0,
        temperature=0.01,
        lambda2="auto",
        learning_rate=0.1,
        solver="sgd",
        batch_size=64,
        max_epochs=200,
        early_stopping=False,
        validation_fraction=0.2,
        n_iter_no_change=20,
        feature_budget=None,
        dtype="float32",
        random_state=None,
        verbose=0,
    ):
        self.n_trees = n_trees
        self.depth = depth
        self.activation = activation
        self.gamma_s = gamma_s
        self.penalty = penalty
        self.lambda0 = lambda0
        self.temperature = temperature
        self.lambda2 = lambda2
        self.learning_rate = learning_rate
        self.solver = solver
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.feature_budget = feature_budget
        self.dtype = dtype
        self.random_state = random_state
        self.verbose = verbose

    # -- parameters ---------------------------------------------------------------------------

    def _lambda2(self, n_rows, n_features):
        if self.lambda2 != "auto":
            return float(self.lambda2)
        return auto_lambda2(n_rows, n_features, feature_budget=self.feature_budget, n_trees=self.n_trees,
                            depth=self.depth, learning_rate=float(self.learning_rate), batch_size=self.batch_size,
                            max_epochs=self.max_epochs)

    def _config(self, n_rows, n_features):
        """Training settings for n_rows training rows (after any validation split) of n_features."""
        return TrainConfig(
            n_trees=self.n_trees,
            depth=self.depth,
            activation=self.activation,
            gamma_s=float(self.gamma_s),
            penalty=self.penalty,
            lambda0=float(self.lambda0) / n_features,
            temperature=None if self.temperature is None else float(self.temperature),
            lambda2=self._lambda2(n_rows, n_features),
            learning_rate=float(self.learning_rate),
            solver=self.solver,
            batch_size=self.batch_size,
            max_epochs=self.max_epochs,
            early_stopping=bool(self.early_stopping),
            n_iter_no_change=self.n_iter_no_change,
            feature_budget=self.feature_budget,
            dtype=_DTYPES[self.dtype],
        )

    # -- fitting ------------------------------------------------------------------------------

    @guarded_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None):
        """Fit on (X, y).

        Validation rows come from ``X_val, y_val`` or, with ``early_stopping``, from a
        ``validation_fraction`` split of X; with validation rows the fitted model is the epoch with
        the best validation score (R^2 for the regressor, ROC AUC for the classifier) among epochs
        within ``feature_budget``. Without them it is the last epoch's.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, best on a unit scale (standardised columns).
        y : array-like of shape (n_samples,)
            Targets: numbers for :class:`SkinnyTreesRegressor`, class labels (at least 2 classes)
            for :class:`SkinnyTreesClassifier`.
        X_val : array-like of shape (n_val, n_features), optional
            Validation rows, given together with ``y_val``.
        y_val : array-like of shape (n_val,), optional
            Their targets: finite numbers, or labels that are in ``y``.

        Returns
        -------
        self : SkinnyTreesRegressor or SkinnyTreesClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            When only one of ``X_val, y_val`` is given, ``y_val`` does not fit them, y has one
            class (classifier), or X or y has values beyond the training dtype's range.
        FloatingPointError
            When training diverges (non-finite loss) before any epoch could be kept.

        Warns
        -----
        ConvergenceWarning
            When the model returned selects more than ``feature_budget`` features, or, with a
            budget, none.
        UserWarning
            When, without ``feature_budget``, the model keeps every feature (selects nothing).

        Examples
        --------
        With validation rows, the model kept is the best epoch with at most ``feature_budget``
        features:

        >>> import numpy as np
        >>> from pyinterp.skinny import SkinnyTreesRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((200, 10))
        >>> y = X[:, 0] + 2 * X[:, 3] + 0.1 * rng.standard_normal(200)
        >>> model = SkinnyTreesRegressor(n_trees=4, depth=2, max_epochs=50, feature_budget=2, random_state=0)
        >>> model = model.fit(X[:150], y[:150], X_val=X[150:], y_val=y[150:])
        >>> model.selected_features_.tolist(), model.best_epoch_, model.n_iter_
        ([0, 3], 10, 50)
        >>> round(model.lambda2_, 3)  # lambda2="auto" with a budget: from K, p and the run's steps
        3.219
        """
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        if self._is_regressor:
            y = regression_target(y)
        # split weights (n_features, n_trees, 2^depth - 1), allocated as training starts
        check_up_front("n_trees", self.n_trees, X.itemsize * X.shape[1] * (2**self.depth - 1), "its split weights")
        target, n_outputs, loss = self._encode_targets(y)
        rng = python_rng(self.random_state)
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together")
        if X_val is not None:
            X_val = validate_data(self, X_val, reset=False, dtype=[np.float64, np.float32])
            y_val = self._encode_validation_targets(column_or_1d(y_val), len(X_val))
        elif self.early_stopping:
            X, X_val, target, y_val = self._split(X, target, rng)
        cfg = self._config(*X.shape)
        X = _training_array("X", X, cfg.dtype)
        validation = None
        if X_val is not None:
            validation = (_training_array("X_val", X_val, cfg.dtype), self._scorer(y_val))
        budget = cfg.feature_budget
        retries = AUTO_RIDGE_RETRIES if self.lambda2 == "auto" and budget and budget < X.shape[1] else 0
        start = copy.deepcopy(rng)  # each training from the same initial weights and mini-batches
        fits = []  # (features kept, training result, its config)
        for _ in range(retries + 1):
            # Divergence is detected (non-finite loss) and reported by train; numpy's overflow
            # warnings on the way there add nothing.
            with (threadpool_limits(limits=1, user_api="blas"), np.errstate(over="ignore", invalid="ignore"),
                  Progress(self.verbose, cfg.max_epochs, "epochs") as progress):
                trained = train(cfg, X, target, loss, n_outputs, copy.deepcopy(start), validation, progress)
            fits.append((int(np.count_nonzero(kernels.group_sq_norms(trained.W))), trained, cfg))
            ridge = next_ridge([(f[2].lambda2, f[0]) for f in fits], budget) if retries else None
            if ridge is None:
                break
            cfg = dataclasses.replace(cfg, lambda2=ridge)
        # the model within the budget with most features; else the one closest above it; else the first
        _, result, used = min(fits, key=lambda f: (f[0] == 0, f[0] > budget, abs(f[0] - budget))) if retries else fits[0]
        self._store(result, used)
        return self

    def _split(self, X, target, rng):
        n_val = int(np.ceil(self.validation_fraction * len(X)))
        if n_val < 1 or n_val >= len(X):
            raise ValueError(f"validation_fraction={self.validation_fraction} leaves no training or no validation rows")
        seed = int(draw_seeds(rng))
        stratify = target if not self._is_regressor and np.bincount(target).min() >= 2 else None
        try:
            return train_test_split(X, target, test_size=n_val, random_state=seed, stratify=stratify)
        except ValueError:  # too few rows per class for a stratified split
            return train_test_split(X, target, test_size=n_val, random_state=seed)

    def _store(self, result, cfg):
        p = result.W.shape[0]
        m, L, _ = result.O.shape
        self.split_weights_ = result.W.reshape(p, m, L - 1)
        self.split_bias_ = result.b.reshape(m, L - 1)
        self.leaf_values_ = result.O
        norms = np.sqrt(kernels.group_sq_norms(result.W).astype(np.float64))
        self.feature_importances_ = norms
        self.selected_features_ = np.flatnonzero(norms > 0)
        self.n_selected_features_ = int(self.selected_features_.size)
        if cfg.feature_budget is not None and self.n_selected_features_ > cfg.feature_budget:
            warnings.warn(f"no epoch kept within feature_budget={cfg.feature_budget}: the model returned selects "
                          f"{self.n_selected_features_} features; raise lambda2 (the ridge that shrinks unused "
                          f"features' weights until the l0 prox drops them; this fit used {cfg.lambda2:.3g}), "
                          "lambda0 or max_epochs, or give validation rows so an earlier epoch within the budget "
                          "can be kept",
                          ConvergenceWarning, stacklevel=5)  # the caller of fit
        if cfg.feature_budget is not None and cfg.penalty != "none" and self.n_selected_features_ == 0:
            warnings.warn(f"Skinny Trees dropped every feature: the model predicts a constant; lower lambda2 (this "
                          f"fit used {cfg.lambda2:.3g}) or lambda0", ConvergenceWarning, stacklevel=5)
        if cfg.feature_budget is None and cfg.penalty != "none" and self.n_selected_features_ == p and p > 1:
            warnings.warn(f"Skinny Trees kept all {p} features: without feature_budget, lambda2='auto' is "
                          f"{cfg.lambda2:.3g}, a dense soft-tree ensemble; give feature_budget=K to select about K "
                          "features (lambda2 then follows the run's length; docs/results/skinny_results.md)",
                          UserWarning, stacklevel=5)
        self.lambda2_ = cfg.lambda2
        self.history_ = result.history
        self.best_epoch_ = result.best_epoch
        self.n_iter_ = result.n_epochs
        # Inference runs in float64 whatever the training dtype, so a row's output does not depend
        # on the batch it is predicted in (float32 GEMM rounding would).
        self._W_selected = np.ascontiguousarray(result.W[self.selected_features_], dtype=np.float64)
        self._b, self._O = result.b.astype(np.float64), result.O.astype(np.float64)
        self._depth, self._activation, self._gamma_s = cfg.depth, cfg.activation, cfg.gamma_s

    # -- inference ----------------------------------------------------------------------------

    def _raw(self, X):
        """Outputs of the compressed model: only the selected columns of X are read."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return predict_raw(
            X[:, self.selected_features_].astype(np.float64), self._W_selected, self._b, self._O, self._depth,
            self._activation, self._gamma_s,
        )

    def _raw_dense(self, X):
        """Outputs of the uncompressed model (every column and every, even zero, group)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        W = self.split_weights_.reshape(self.n_features_in_, -1).astype(np.float64)
        return predict_raw(X.astype(np.float64), W, self._b, self._O, self._depth, self._activation, self._gamma_s)


class SkinnyTreesRegressor(RegressorMixin, _SkinnyTrees):
    """Ensemble of soft oblique trees that selects features while it learns (Skinny Trees).

    Ibrahim, Behdin & Mazumder, "End-to-end Feature Selection Approach for Learning Skinny Trees",
    AISTATS 2024. ``n_trees`` perfect binary soft trees of ``depth`` levels; node n of tree j sends
    x left with probability S(x.w + b) (``activation``: the logistic ``"sigmoid"`` as in all the
    paper's experiments, or ``"smooth_step"`` with width ``gamma_s``, the setting of its theory).
    Leaves hold vectors; tree outputs are summed. Training minimises, by proximal mini-batch SGD
    with constant ``learning_rate`` (``solver="adam"``: Adam steps, the same prox; not the paper's
    method), ``loss + lambda0(t) * #(nonzero feature groups) + lambda2/(m(2^d-1)) * ||W||^2``. A
    feature's group is every split weight on it across all nodes and trees; after every step a group
    is zeroed when its norm is not above ``sqrt(2 * learning_rate * lambda0(t))``.

    Penalty schedule (dense to sparse): ``lambda0(t) = (lambda0 / p) * (1 - exp(-temperature * t))``
    with t the 1-based mini-batch step over all epochs; ``temperature=None`` keeps lambda0 / p fixed.
    ``lambda0`` is in the authors' code's units (their default 100, applied divided by p).
    ``penalty="group_lasso"`` uses the group soft-threshold of ``lambda0(t)/sqrt(m(2^d-1)) *
    sum_k ||W_k||`` instead; ``"none"`` trains dense soft trees.

    Sparsity comes from the ridge (bench/studies/skinny_defaults.py, docs/results/skinny_results.md "Defaults"): at
    Glorot initialisation a feature's group norm is far above the prox threshold, and only the ridge
    shrinks the groups of unused features below it within the run; each SGD step multiplies a group
    the loss leaves alone by ``1 - 2 lr lambda2 / (m(2^d-1))``. The ridge is applied as
    ``lambda2 / (m (2^d - 1))``. ``lambda2="auto"`` (the default) resolves at fit time, in
    ``lambda2_``:

    - without ``feature_budget`` (or with one of at least p): 0.01, a dense soft-tree ensemble that
      fits small problems (a ridge of 10 dropped all but 1-2 of the 30 breast-cancer features);
    - with ``feature_budget=K < p``: ``lambda2 = E m(2^d-1) / (2 lr T)`` with ``E = 5 ln(p / K)``
      and ``T = max_epochs * ceil(n / batch_size)`` the run's SGD steps on its n training rows, so
      the ridge alone shrinks an unused group by ``(K/p)^5`` over the run: more shrink the more
      features the budget removes, and the same shrink however many steps the data make.

    In the study (``python bench/studies/skinny_defaults.py --lambda2``: plain fits with ``feature_budget``
    and no validation rows) this rule met the budget on all 18 correlated-linear problems (p = 100,
    300, 1000; N = 300, 1000; 8 true features, K = 16; support F1 0.99) and on colon, glioma,
    prostate_ge (K = p / 4) and breast cancer (K = 8), where every fixed value failed somewhere: 10
    stayed dense on colon and glioma (62 and 50 rows: few steps), 30 dropped every breast-cancer
    feature. No candidate, fixed or scaled, reached K = 5 on the 10 diabetes features (all 10
    kept). The rule assumes SGD; with ``solver="adam"`` it is a starting point. On budgets far
    below p / 4 it can miss: when its model keeps more than K features, or none, ``fit`` trains
    again from the same initial weights and mini-batches with the ridge doubled, or halved, then
    at the geometric mean of the strongest ridge that kept more than K and the weakest that kept
    at most K, until a model within the budget keeps K / 2 features or more, up to 4 times
    (``next_ridge``); it returns the model within the budget with most features, or else the one
    closest above it. On prostate_ge a budget of 20 genes went from 39 kept to 19; budgets of 5-50
    genes on four expression data sets were met in 48 of 48 fits, 15 before
    (``bench/studies/skinny_budget.py``, docs/results/skinny_results.md). ``lambda2_`` is the ridge
    of the model returned, ``history_`` its training. A model that ends above its
    ``feature_budget`` warns (ConvergenceWarning) and names the lambda2 it used, as does one that
    drops every feature.

    Loss: mean squared error without 1/2 (as the authors' code). Validation rows (``X_val, y_val``
    in ``fit``, or a ``validation_fraction`` split when ``early_stopping``) are scored after each
    epoch (R^2); the fitted model is the best-scoring epoch among those with at most
    ``feature_budget`` selected features (all epochs if None), and ``early_stopping`` stops after
    ``n_iter_no_change`` such epochs without improvement. BLAS runs single-threaded inside ``fit``.
    ``verbose`` reports the epochs as they finish (out of ``max_epochs``).

    Parameters
    ----------
    n_trees : int, default=20
        Number of soft trees m (at least 1); their outputs are summed.
    depth : int, default=4
        Levels d of every perfect binary tree, 1 to 12: 2^d - 1 split nodes and 2^d leaves a tree.
    activation : {"sigmoid", "smooth_step"}, default="sigmoid"
        The node's routing function S: the logistic function, as in all the paper's experiments,
        or the smooth step of width ``gamma_s``, the setting of its theory.
    gamma_s : float > 0, default=1.0
        Width of the smooth step (``activation="smooth_step"``).
    penalty : {"l0", "group_lasso", "none"}, default="l0"
        The group penalty on the split weights: the count of nonzero feature groups (hard
        threshold), the sum of their norms (group soft-threshold), or none (dense soft trees).
    lambda0 : float >= 0, default=100.0
        The penalty weight in the authors' code's units, applied divided by p (the features).
    temperature : float >= 0 or None, default=0.01
        Rate s of the dense-to-sparse schedule ``lambda0(t) = (lambda0 / p) * (1 - exp(-s t))``;
        None keeps lambda0 / p fixed.
    lambda2 : float >= 0 or "auto", default="auto"
        The ridge on the split weights, applied as ``lambda2 / (m (2^d - 1))``; what makes unused
        features' groups shrink below the prox threshold. ``"auto"`` resolves at fit time (see
        above; the value used is in ``lambda2_``).
    learning_rate : float > 0, default=0.1
        The constant step size.
    solver : {"sgd", "adam"}, default="sgd"
        Proximal mini-batch SGD (the paper's method) or Adam steps with the same prox.
    batch_size : int, default=64
        Rows per mini-batch.
    max_epochs : int, default=200
        Passes over the training rows.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows when ``fit`` gets no ``X_val, y_val``, and stop
        after ``n_iter_no_change`` epochs within ``feature_budget`` without a better validation
        score.
    validation_fraction : float in (0, 1), default=0.2
        Share of the rows held out with ``early_stopping`` (stratified for a classifier when every
        class has 2 rows).
    n_iter_no_change : int, default=20
        Epochs without improvement that stop training with ``early_stopping``.
    feature_budget : int >= 0 or None, default=None
        K: with validation rows the model kept is the best epoch with at most K selected features;
        it also sets ``lambda2="auto"``, which trains again with another ridge while the model
        keeps more than K features or none. A model above K at the end warns (ConvergenceWarning).
    dtype : {"float32", "float64"}, default="float32"
        Precision of training; prediction runs in float64 whatever it is.
    random_state : int, RandomState instance or None, default=None
        Draws the initial weights (Glorot-uniform, as the authors' Keras code), the mini-batches
        and the validation split.
    verbose : int, default=0
        Reports the epochs as they finish (out of ``max_epochs``).

    Attributes
    ----------
    selected_features_ : ndarray of int
        Indices of the features with a nonzero group; ``predict`` reads only these columns.
    n_selected_features_ : int
        Their number.
    feature_importances_ : ndarray of shape (n_features,)
        Group L2 norms (exactly 0 for dropped features).
    split_weights_ : ndarray of shape (n_features, n_trees, 2^depth - 1)
        The split weights w of every node of every tree, by feature (in the training dtype).
    split_bias_ : ndarray of shape (n_trees, 2^depth - 1)
        The split biases b.
    leaf_values_ : ndarray of shape (n_trees, 2^depth, n_outputs)
        The leaves' vectors (n_outputs is 1 here, the number of classes for the classifier).
    lambda2_ : float
        The ridge weight the fit used (``lambda2``, or the value ``"auto"`` resolved to).
    history_ : dict of ndarray
        Per-epoch arrays: loss (training), val_loss, val_score (NaN without validation),
        n_selected, lambda0 (penalty weight at the epoch's last step).
    best_epoch_ : int or None
        The epoch returned (0-based), or None for the last state (no validation rows, or no epoch
        within the budget).
    n_iter_ : int
        Epochs run.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen during ``fit``; only when X has string column names (a DataFrame).

    See Also
    --------
    SkinnyTreesClassifier : The same model for classification.
    fit_budget : Random search for the best model with at most K features.

    Notes
    -----
    Soft trees are fitted by gradients, so the columns of X should be on a unit scale (standardise
    them, e.g. with ``sklearn.preprocessing.StandardScaler``): a fit that diverges (non-finite loss)
    raises FloatingPointError naming the largest ``|x|``.

    References
    ----------
    Ibrahim, S., Behdin, K. & Mazumder, R. (2024). End-to-end feature selection approach for
    learning skinny trees. AISTATS 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.skinny import SkinnyTreesRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 10))
    >>> y = X[:, 0] + 2 * X[:, 3] + 0.1 * rng.standard_normal(200)
    >>> model = SkinnyTreesRegressor(n_trees=4, depth=2, lambda2=1.0, learning_rate=0.03, max_epochs=50,
    ...                              random_state=0).fit(X, y)
    >>> model.selected_features_.tolist()  # the two features y depends on
    [0, 3]
    >>> model.feature_importances_.round(1).tolist()
    [1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    >>> model.history_["n_selected"][[0, 20, 49]].tolist()  # dense to sparse over the epochs
    [10, 8, 2]
    >>> round(model.score(X, y), 2)
    0.97
    """

    _is_regressor = True

    def _encode_targets(self, y):
        dtype = np.dtype(_DTYPES[self.dtype])
        largest = float(np.abs(y).max()) if len(y) else 0.0
        if largest > np.sqrt(np.finfo(dtype).max):  # the squared error would overflow: a diverged fit
            raise ValueError(f"max |y| = {largest:g}: its squares are beyond {dtype.name}, so the squared-error loss "
                             f"overflows; rescale y" + (" or fit with dtype='float64'" if dtype != np.float64 else ""))
        return np.asarray(y, dtype=dtype), 1, kernels.mse_loss

    def _encode_validation_targets(self, y_val, n):
        y_val = np.asarray(y_val, dtype=np.float64)
        if len(y_val) != n or not np.all(np.isfinite(y_val)):
            raise ValueError("y_val must be finite with one value per row of X_val")
        return y_val

    def _scorer(self, y_val):
        def score(F):
            pred = F[:, 0].astype(np.float64)
            return float(np.mean((pred - y_val) ** 2)), float(r2_score(y_val, pred)) if len(y_val) > 1 else np.nan

        return score

    def predict(self, X):
        """Predicted values: the sum of the trees' outputs.

        Only the selected columns of X are read (``selected_features_``); computed in float64.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.skinny import SkinnyTreesRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((200, 10))
        >>> y = X[:, 0] + 2 * X[:, 3] + 0.1 * rng.standard_normal(200)
        >>> model = SkinnyTreesRegressor(n_trees=4, depth=2, lambda2=1.0, learning_rate=0.03, max_epochs=50,
        ...                              random_state=0).fit(X, y)
        >>> model.predict(X[:3]).round(1).tolist(), y[:3].round(1).tolist()
        ([0.3, -1.1, 0.6], [0.4, -1.1, 0.5])
        """
        return self._raw(X)[:, 0]


class SkinnyTreesClassifier(ClassifierMixin, _SkinnyTrees):
    """Skinny Trees for classification: softmax cross-entropy on one logit per class (also for two).

    Everything else as :class:`SkinnyTreesRegressor`, whose docstring describes the model, the
    penalty schedule, the ridge and ``lambda2="auto"``. The validation score is the ROC AUC
    (binary: probability of ``classes_[1]``; multiclass: one-vs-one macro average, as the paper),
    or the negative cross-entropy when the validation rows do not contain every class.

    Parameters
    ----------
    n_trees : int, default=20
        Number of soft trees m (at least 1); their outputs are summed.
    depth : int, default=4
        Levels d of every perfect binary tree, 1 to 12: 2^d - 1 split nodes and 2^d leaves a tree.
    activation : {"sigmoid", "smooth_step"}, default="sigmoid"
        The node's routing function S: the logistic function, as in all the paper's experiments,
        or the smooth step of width ``gamma_s``, the setting of its theory.
    gamma_s : float > 0, default=1.0
        Width of the smooth step (``activation="smooth_step"``).
    penalty : {"l0", "group_lasso", "none"}, default="l0"
        The group penalty on the split weights: the count of nonzero feature groups (hard
        threshold), the sum of their norms (group soft-threshold), or none (dense soft trees).
    lambda0 : float >= 0, default=100.0
        The penalty weight in the authors' code's units, applied divided by p (the features).
    temperature : float >= 0 or None, default=0.01
        Rate s of the dense-to-sparse schedule ``lambda0(t) = (lambda0 / p) * (1 - exp(-s t))``;
        None keeps lambda0 / p fixed.
    lambda2 : float >= 0 or "auto", default="auto"
        The ridge on the split weights, applied as ``lambda2 / (m (2^d - 1))``; what makes unused
        features' groups shrink below the prox threshold. ``"auto"`` resolves at fit time (see
        :class:`SkinnyTreesRegressor`; the value used is in ``lambda2_``).
    learning_rate : float > 0, default=0.1
        The constant step size.
    solver : {"sgd", "adam"}, default="sgd"
        Proximal mini-batch SGD (the paper's method) or Adam steps with the same prox.
    batch_size : int, default=64
        Rows per mini-batch.
    max_epochs : int, default=200
        Passes over the training rows.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows when ``fit`` gets no ``X_val, y_val``, and stop
        after ``n_iter_no_change`` epochs within ``feature_budget`` without a better validation
        score.
    validation_fraction : float in (0, 1), default=0.2
        Share of the rows held out with ``early_stopping`` (stratified for a classifier when every
        class has 2 rows).
    n_iter_no_change : int, default=20
        Epochs without improvement that stop training with ``early_stopping``.
    feature_budget : int >= 0 or None, default=None
        K: with validation rows the model kept is the best epoch with at most K selected features;
        it also sets ``lambda2="auto"``, which trains again with another ridge while the model
        keeps more than K features or none. A model above K at the end warns (ConvergenceWarning).
    dtype : {"float32", "float64"}, default="float32"
        Precision of training; prediction runs in float64 whatever it is.
    random_state : int, RandomState instance or None, default=None
        Draws the initial weights (Glorot-uniform, as the authors' Keras code), the mini-batches
        and the validation split.
    verbose : int, default=0
        Reports the epochs as they finish (out of ``max_epochs``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels (at least 2), sorted; the leaves hold one logit per class.
    selected_features_ : ndarray of int
        Indices of the features with a nonzero group; ``predict`` reads only these columns.
    n_selected_features_ : int
        Their number.
    feature_importances_ : ndarray of shape (n_features,)
        Group L2 norms (exactly 0 for dropped features).
    split_weights_ : ndarray of shape (n_features, n_trees, 2^depth - 1)
        The split weights w of every node of every tree, by feature (in the training dtype).
    split_bias_ : ndarray of shape (n_trees, 2^depth - 1)
        The split biases b.
    leaf_values_ : ndarray of shape (n_trees, 2^depth, n_classes)
        The leaves' logits.
    lambda2_ : float
        The ridge weight the fit used (``lambda2``, or the value ``"auto"`` resolved to).
    history_ : dict of ndarray
        Per-epoch arrays: loss (training cross-entropy), val_loss, val_score (NaN without
        validation), n_selected, lambda0 (penalty weight at the epoch's last step).
    best_epoch_ : int or None
        The epoch returned (0-based), or None for the last state (no validation rows, or no epoch
        within the budget).
    n_iter_ : int
        Epochs run.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen during ``fit``; only when X has string column names (a DataFrame).

    See Also
    --------
    SkinnyTreesRegressor : The same model for regression, and its full description.
    fit_budget : Random search for the best model with at most K features.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.skinny import SkinnyTreesClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 10))
    >>> y = np.where(X[:, 0] + X[:, 3] > 0, "yes", "no")
    >>> clf = SkinnyTreesClassifier(n_trees=10, depth=2, lambda2=0.3, max_epochs=50, random_state=0).fit(X, y)
    >>> clf.classes_.tolist(), clf.selected_features_.tolist()
    (['no', 'yes'], [0, 3])
    >>> clf.predict(X[:3]).tolist(), y[:3].tolist()
    (['yes', 'no', 'yes'], ['yes', 'no', 'yes'])
    >>> round(clf.score(X, y), 2)
    0.97
    """

    _is_regressor = False

    def _encode_targets(self, y):
        check_classification_targets(y)
        self.classes_, target = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"y: the classifier needs samples of at least 2 classes, got 1 class: "
                             f"{self.classes_[0]!r}")
        return target.astype(np.intp), len(self.classes_), kernels.cross_entropy_loss

    def _encode_validation_targets(self, y_val, n):
        if len(y_val) != n:
            raise ValueError("y_val must have one label per row of X_val")
        index = np.searchsorted(self.classes_, y_val)
        index[index == len(self.classes_)] = 0
        if np.any(self.classes_[index] != y_val):
            raise ValueError("y_val contains labels that are not in y")
        return index

    def _scorer(self, y_val):
        n_classes = len(self.classes_)
        all_present = np.unique(y_val).size == n_classes

        def score(F):
            loss, _ = kernels.cross_entropy_loss(F.astype(np.float64), y_val)
            if not all_present:
                return loss, -loss
            proba = softmax(F.astype(np.float64), axis=1)
            if n_classes == 2:
                return loss, float(roc_auc_score(y_val, proba[:, 1]))
            return loss, float(roc_auc_score(y_val, proba, multi_class="ovo", labels=np.arange(n_classes)))

        return score

    def decision_function(self, X):
        """The ensemble's logits: one per class, or for two classes their difference.

        Only the selected columns of X are read (``selected_features_``); computed in float64.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes the logit of ``classes_[1]`` minus that of ``classes_[0]`` (positive:
            ``classes_[1]`` is predicted); otherwise the logits of every class.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.skinny import SkinnyTreesClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((200, 10))
        >>> y = (X[:, 0] + X[:, 3] > 0).astype(int)
        >>> clf = SkinnyTreesClassifier(n_trees=10, depth=2, lambda2=0.3, max_epochs=50, random_state=0).fit(X, y)
        >>> clf.decision_function(X[:2]).round(3).tolist()
        [0.474, -0.977]
        """
        F = self._raw(X)
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F

    def predict_proba(self, X):
        """Class probabilities: the softmax of the logits.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The probability of each class, in the order of ``classes_``; rows sum to 1.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.skinny import SkinnyTreesClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((200, 10))
        >>> y = (X[:, 0] + X[:, 3] > 0).astype(int)
        >>> clf = SkinnyTreesClassifier(n_trees=10, depth=2, lambda2=0.3, max_epochs=50, random_state=0).fit(X, y)
        >>> clf.predict_proba(X[:2]).round(3).tolist()
        [[0.384, 0.616], [0.727, 0.273]]
        """
        return softmax(self._raw(X), axis=1)

    def predict(self, X):
        """Predicted classes: the class of the largest logit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.skinny import SkinnyTreesClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((200, 10))
        >>> y = (X[:, 0] + X[:, 3] > 0).astype(int)
        >>> clf = SkinnyTreesClassifier(n_trees=10, depth=2, lambda2=0.3, max_epochs=50, random_state=0).fit(X, y)
        >>> clf.predict(X[:5]).tolist(), y[:5].tolist()
        ([1, 0, 1, 0, 0], [1, 0, 1, 0, 0])
        """
        F = self._raw(X)
        return self.classes_[np.argmax(F, axis=1)]
