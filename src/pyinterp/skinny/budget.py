"""Feature-budget search (paper 003, section 7.3): random search over training hyperparameters,
keeping the model with the best validation score among those with at most K features."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.stats import loguniform
from sklearn.base import clone, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import ParameterSampler, train_test_split
from sklearn.utils import Bunch
from sklearn.utils._param_validation import Interval, RealNotInt, validate_params
from sklearn.utils.parallel import Parallel, delayed
from threadpoolctl import threadpool_limits

from .._distributed import cluster_threads, run_units
from .._progress import Progress
from .._seeds import draw_seeds, python_rng
from .._validation import IntInterval, check_up_front
from .estimators import _SkinnyTrees

# Bytes a trial's drawn settings (a dict of a few numbers) and its seed take at least.
_TRIAL_BYTES = 256

__all__ = ["DEFAULT_SPACE", "PAPER_SPACE", "fit_budget"]

# The authors' real-data ranges for the schedule, step size and ridge (spec section 3.1).
PAPER_SPACE = {
    "temperature": loguniform(1e-4, 1e-1),
    "learning_rate": loguniform(1e-2, 10.0),
    "lambda2": loguniform(1e-3, 1.0),
}
# fit_budget's default, chosen by bench/studies/skinny_defaults.py: around the estimator's defaults, with
# the ridge high enough to sparsify (with PAPER_SPACE no trial met the budget on the study's
# correlated-linear problems) and learning rates below PAPER_SPACE's top, where SGD diverges.
DEFAULT_SPACE = {
    "temperature": loguniform(1e-3, 1e-1),
    "learning_rate": loguniform(1e-2, 0.3),
    "lambda2": loguniform(1.0, 1e2),
}


def _budget(max_features, n_features):
    if isinstance(max_features, Integral):
        return int(max_features)
    return max(1, math.floor(max_features * n_features))


def _trial(estimator, params, seed, budget, data):
    X, y, X_val, y_val = data
    model = clone(estimator).set_params(**params, feature_budget=budget, random_state=seed)
    try:
        # a trial above the budget is reported in budget_search_ (n_selected -1), not warned of
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y, X_val, y_val)
    except FloatingPointError:
        return None
    if model.best_epoch_ is None or not 0 < model.n_selected_features_ <= budget:
        return None
    return model


def _cluster_trial(estimator, budget, data, params, seed):
    """A trial on a cluster worker, with single-threaded BLAS as joblib's local processes give it."""
    with threadpool_limits(1, user_api="blas"):
        return _trial(estimator, params, seed, budget, data)


@validate_params(
    {
        "max_features": [IntInterval(Integral, 1, None, closed="left"), Interval(RealNotInt, 0, 1, closed="right")],
        "n_trials": [IntInterval(Integral, 1, None, closed="left")],
        "param_distributions": [dict, list, None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=False,  # the trials' estimators carry user parameters
)
def fit_budget(
    estimator,
    X,
    y,
    max_features,
    *,
    n_trials=20,
    param_distributions=None,
    X_val=None,
    y_val=None,
    validation_fraction=0.2,
    n_jobs=None,
    random_state=None,
    verbose=0,
):
    """Best Skinny Trees model with at most ``max_features`` features, by random search.

    Each trial clones ``estimator`` with hyperparameters drawn from ``param_distributions``,
    ``feature_budget=K`` and its own seed, and fits it with the same validation rows (``X_val,
    y_val``, or a ``validation_fraction`` split of X, stratified for classifiers). Within a trial
    the returned snapshot is its best epoch with 1..K features (the dense-to-sparse path makes one
    run trace many sparsity levels; an extension of the paper, which tuned the epoch count instead).
    The winner has the highest validation score; ties go to fewer features, then to the earlier
    trial. Trials run in parallel processes (``n_jobs``), each with single-threaded BLAS, or on the
    workers of a distributed joblib backend (Dask); the result does not depend on where they run.

    Parameters
    ----------
    estimator : SkinnyTreesRegressor or SkinnyTreesClassifier
        The model whose clones are fitted; its other parameters are kept in every trial.
    X : array-like of shape (n_samples, n_features)
        Training rows (the validation rows too, without ``X_val``).
    y : array-like of shape (n_samples,)
        Targets.
    max_features : int >= 1 or float in (0, 1]
        The budget: an int K, or a fraction of the features (K = floor(fraction * p), at least 1).
    n_trials : int, default=20
        Settings drawn; a grid of lists with fewer points than ``n_trials`` runs each point once.
    param_distributions : dict, list of dicts or None, default=None
        Where the settings are drawn from, in scikit-learn's ``ParameterSampler`` format (each key a
        parameter of the estimator, each value a distribution or a list). Default ``DEFAULT_SPACE``:
        temperature log-U[1e-3, 1e-1], learning rate log-U[1e-2, 0.3], lambda2 log-U[1, 100], the
        space that met the budget on every problem of bench/studies/skinny_defaults.py with the
        estimator's defaults and holds the values the estimator's ``lambda2="auto"`` took with a
        budget in its study, 4-52. A space that does not draw lambda2 leaves it to the estimator,
        whose ``"auto"`` then resolves in each trial with that trial's K, learning rate and
        training rows. ``PAPER_SPACE`` holds the authors' real-data ranges, whose lambda2 <= 1
        rarely sparsifies such models.
    X_val : array-like of shape (n_val, n_features), optional
        Validation rows, given together with ``y_val``; default: a split of X.
    y_val : array-like of shape (n_val,), optional
        Their targets.
    validation_fraction : float in (0, 1), default=0.2
        Share of X held out for validation when ``X_val`` is not given.
    n_jobs : int or None, default=None
        Processes over trials (joblib: None is 1, -1 all cores).
    random_state : int, RandomState instance or None, default=None
        Draws the validation split, the settings and each trial's seed.
    verbose : int, default=0
        Reports the trials as they finish (each trial's epochs follow the estimator's own
        ``verbose``).

    Returns
    -------
    SkinnyTreesRegressor or SkinnyTreesClassifier
        The winning fitted estimator, with ``budget_search_``: a Bunch of ``params``,
        ``val_score`` and ``n_selected`` per trial (NaN / -1 for trials that diverged or never met
        the budget) and ``best_trial``, the index of the winner.

    Raises
    ------
    ValueError
        When no trial meets the budget (raise lambda2, lambda0, max_epochs or n_trials), or only
        one of ``X_val, y_val`` is given.
    TypeError
        When ``estimator`` is not a Skinny Trees estimator.

    See Also
    --------
    SkinnyTreesRegressor : The model, and its ``feature_budget`` and ``lambda2="auto"``.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.skinny import SkinnyTreesRegressor, fit_budget
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 10))
    >>> y = X[:, 0] + 2 * X[:, 3] + 0.1 * rng.standard_normal(200)
    >>> best = fit_budget(SkinnyTreesRegressor(n_trees=10, depth=2, max_epochs=30), X, y, max_features=2,
    ...                   n_trials=5, random_state=0)
    >>> best.selected_features_.tolist()
    [0, 3]
    >>> best.budget_search_.n_selected.tolist(), best.budget_search_.best_trial  # -1: missed the budget
    ([1, -1, -1, -1, 2], 4)
    """
    if not isinstance(estimator, _SkinnyTrees):
        raise TypeError("estimator must be a SkinnyTreesRegressor or SkinnyTreesClassifier")
    rng = python_rng(random_state)
    if (X_val is None) != (y_val is None):
        raise ValueError("X_val and y_val must be given together")
    if X_val is None:
        y_arr = np.asarray(y)
        stratify = y_arr if is_classifier(estimator) else None
        X, X_val, y, y_val = train_test_split(
            X, y, test_size=validation_fraction, random_state=int(draw_seeds(rng)), stratify=stratify
        )
    budget = _budget(max_features, np.shape(X)[1])
    space = DEFAULT_SPACE if param_distributions is None else param_distributions
    check_up_front("n_trials", n_trials, _TRIAL_BYTES, "its trials' settings and seeds")
    # A grid of lists smaller than n_trials is run once per point (ParameterSampler warns).
    draws = list(ParameterSampler(space, n_trials, random_state=int(draw_seeds(rng))))
    seeds = draw_seeds(rng, n_trials).tolist()[:len(draws)]
    data = (X, y, X_val, y_val)
    if cluster_threads():
        results = run_units(_cluster_trial, (estimator, budget, data), list(zip(draws, seeds)))
    else:
        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_trial)(estimator, params, seed, budget, data) for params, seed in zip(draws, seeds)
        )
    scores = np.full(len(draws), np.nan)
    counts = np.full(len(draws), -1)
    best, best_key = None, None
    with Progress(verbose, len(draws), "trials") as progress:
        for i, model in enumerate(results):
            progress.update()
            if model is None:
                continue
            scores[i] = model.history_["val_score"][model.best_epoch_]
            counts[i] = model.n_selected_features_
            key = (scores[i], -counts[i])
            if best is None or key > best_key:
                best, best_key, best_trial = model, key, i
    if best is None:
        raise ValueError(
            f"no trial reached a model with 1..{budget} features; raise lambda2 (the ridge that shrinks "
            "unused features' weights until the l0 prox drops them) in param_distributions or the "
            "estimator, or lambda0, max_epochs or n_trials"
        )
    best.budget_search_ = Bunch(params=draws, val_score=scores, n_selected=counts, best_trial=best_trial)
    return best
