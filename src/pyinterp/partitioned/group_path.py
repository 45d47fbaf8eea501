"""Group-lasso path for a smooth convex loss: FISTA with backtracking, adaptive restart and group
soft-thresholding, warm-started along decreasing lambdas; L-BFGS-B for the smooth problems
(lambda = 0 and the unpenalised refit on a support).

``problem`` provides ``n_params``, ``b`` and ``n_groups`` (the first b * n_groups parameters form
the (b, n_groups) group block; the rest is unpenalised), ``value(theta)`` and
``value_and_grad(theta)``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, validate_params

from .._validation import IntInterval, check_weights_vector


def group_soft_threshold(v, thresholds, b):
    """prox of sum_g thresholds_g ||v_g||_2 over the (b, G) group block; other entries unchanged."""
    out = v.copy()
    G = thresholds.shape[0]
    V = out[: b * G].reshape(b, G)
    norms = np.sqrt(np.einsum("kg,kg->g", V, V))
    with np.errstate(divide="ignore", invalid="ignore"):
        V *= np.where(norms > thresholds, 1.0 - thresholds / norms, 0.0)
    return out


def group_norms(theta, b, G):
    V = theta[: b * G].reshape(b, G)
    return np.sqrt(np.einsum("kg,kg->g", V, V))


def fista(problem, x, fx, gx, lam, weights, step, tol, max_iter):
    """Minimise l(theta) + lam * sum_g weights_g ||theta_g|| from x (with l and grad l at x).

    Stops when the proximal-gradient residual ||prox step||_inf / step (a KKT violation in gradient
    units) is <= tol. Returns (x, l(x), grad l(x), step, iterations, converged)."""
    b = problem.b
    thresholds_per_step = lam * weights
    y, fy, gy = x, fx, gx
    momentum = 1.0
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):
        while True:
            x_new = group_soft_threshold(y - step * gy, step * thresholds_per_step, b)
            d = x_new - y
            f_new = problem.value(x_new)
            # Majorisation test; the slack absorbs rounding when the step d is tiny.
            if f_new - fy <= gy @ d + (d @ d) / (2.0 * step) + 1e-13 * (1.0 + abs(fy)):
                break
            step *= 0.5
            if step < 1e-30:
                raise FloatingPointError("backtracking line search failed (the loss is not finite near the iterate)")
        converged = float(np.max(np.abs(d), initial=0.0)) / step <= tol
        move = x_new - x
        if (y - x_new) @ move > 0.0:      # momentum points uphill: restart (O'Donoghue & Candes)
            momentum = 1.0
            beta = 0.0
        else:
            next_momentum = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum * momentum))
            beta = (momentum - 1.0) / next_momentum
            momentum = next_momentum
        x = x_new
        if converged:
            break
        y = x + beta * move if beta > 0.0 else x
        fy, gy = problem.value_and_grad(y)
    fx, gx = problem.value_and_grad(x)
    return x, fx, gx, step, iteration, converged


def minimize_smooth(problem, x0, free, tol, max_iter, bound=1e3):
    """Minimise l over the entries where ``free`` is True (others held at 0) with L-BFGS-B.

    Without a penalty the loss is unbounded below when the matched sample pairs can be separated
    from the mismatched ones (few samples for the support); the search stops once a coefficient
    exceeds ``bound`` (standardised scale). Returns (theta, iterations, converged, diverged)."""
    index = np.flatnonzero(free)
    full = np.zeros(problem.n_params)
    diverged = False

    def fun(z):
        full[index] = z
        value, grad = problem.value_and_grad(full)
        return value, grad[index]

    def stop_if_diverging(z):
        nonlocal diverged
        if np.max(np.abs(z), initial=0.0) > bound:
            diverged = True
            raise StopIteration

    result = minimize(fun, x0[index], jac=True, method="L-BFGS-B", callback=stop_if_diverging,
                      options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15, "maxcor": 20})
    out = np.zeros(problem.n_params)
    out[index] = result.x
    return out, int(result.nit), bool(result.success) and not diverged, diverged


def check_lambdas(lambdas):
    """A penalty grid as a 1-d float64 array (a scalar is a grid of one): non-empty, finite and
    non-negative."""
    try:
        grid = np.asarray(lambdas, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"lambdas must be an array of numbers, got {lambdas!r}") from exc
    if grid.ndim > 1:
        raise ValueError(f"lambdas must be a 1-d grid of penalties, got an array of shape {grid.shape}")
    grid = grid.ravel()
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
        raise ValueError(f"lambdas must be a non-empty array of finite non-negative values, got {lambdas!r}")
    return grid


@validate_params(
    {
        "problem": [HasMethods(["value", "value_and_grad"])],
        "lambdas": ["array-like"],
        "weights": ["array-like"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [IntInterval(Integral, 1, None, closed="left")],
        "progress": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def solve_path(problem, lambdas, weights, tol, max_iter, progress=None, start=None):
    """Warm-started solutions for each lambda (decreasing), from ``start`` (default 0, the solution at lambda_max).

    Minimises l(theta) + lambda * sum_g weights_g ||theta_g||_2 for each lambda in turn, each solve
    started from the previous solution: by FISTA with backtracking, adaptive restart and group
    soft-thresholding, or, for lambda = 0, by L-BFGS-B on the smooth loss alone.

    Parameters
    ----------
    problem : RatioProblem or object
        The loss: an object with ``n_params``, ``b`` and ``n_groups`` (the first b * n_groups
        parameters form the (b, n_groups) group block; the rest is unpenalised), ``value(theta)``
        and ``value_and_grad(theta)``, as :class:`RatioProblem` has.
    lambdas : array-like of float
        The penalties, finite and >= 0 (a scalar is a grid of one), solved in the order given:
        decreasing, so each solve starts near its solution.
    weights : array-like of shape (n_groups,)
        Scale each group's penalty (one per group, >= 0, not all 0; 0 leaves a group unpenalised).
    tol : float > 0
        A solve stops when the proximal-gradient residual (a KKT violation, in gradient units) is
        <= tol (for lambda = 0: L-BFGS-B's projected-gradient tolerance).
    max_iter : int >= 1
        Iterations per lambda.
    progress : object with an ``update()`` method, optional
        Hears of each lambda solved (a :class:`~pyinterp._progress.Progress`).
    start : ndarray of shape (n_params,), optional
        Where the first solve starts (copied). Default: 0, the solution at lambda_max.

    Returns
    -------
    path : ndarray of shape (n_params, n_lambdas)
        The solution at each lambda, as columns.
    grad_norms : ndarray of shape (n_groups, n_lambdas)
        Each group's gradient norm of the loss at each solution (a group enters the path where its
        norm exceeds lambda times its weight).
    n_iter : ndarray of int64 of shape (n_lambdas,)
        Iterations per lambda.

    Warns
    -----
    ConvergenceWarning
        When a solve does not reach ``tol`` within ``max_iter`` iterations.

    See Also
    --------
    RatioProblem : The partitioned ratio's loss.
    PartitionedRatio : The estimator, which makes the grid and selects lambda.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem, solve_path
    >>> X = np.random.default_rng(0).standard_normal((60, 3))
    >>> X[:, 1] += 0.8 * X[:, 0]
    >>> Z = (X - X.mean(axis=0)) / X.std(axis=0)
    >>> problem = RatioProblem(Z, [0], [1, 2], PAIR_FEATURES["xy"], UNARY_FEATURES["quadratic"])
    >>> lambda_max = np.sqrt((problem.cross_gradient_at_zero() ** 2).sum(axis=0)).max()
    >>> path, grad_norms, n_iter = solve_path(problem, lambda_max * np.array([1.0, 0.5, 0.1]),
    ...                                       np.ones(problem.n_groups), tol=1e-6, max_iter=500)
    >>> path.shape, grad_norms.shape, n_iter.shape
    ((9, 3), (3, 3), (3,))
    >>> (path[:problem.n_cross] != 0).tolist()  # cross pairs (0, 1) and (0, 2) at each lambda
    [[False, True, True], [False, False, True]]
    """
    lambdas = check_lambdas(lambdas)
    weights = check_weights_vector("weights", weights, problem.n_groups, what="group")
    b, G = problem.b, problem.n_groups
    x = np.zeros(problem.n_params) if start is None else start.copy()
    fx, gx = problem.value_and_grad(x)
    path = np.empty((problem.n_params, len(lambdas)))
    grad_norms = np.empty((G, len(lambdas)))
    n_iter = np.zeros(len(lambdas), dtype=np.int64)
    step = 1.0
    not_converged = []
    for k, lam in enumerate(lambdas):
        if lam == 0.0:
            x, n_iter[k], ok, _ = minimize_smooth(problem, x, np.ones(problem.n_params, bool), tol, max_iter)
            fx, gx = problem.value_and_grad(x)
        else:
            x, fx, gx, step, n_iter[k], ok = fista(problem, x, fx, gx, lam, weights, 2.0 * step, tol, max_iter)
        if not ok:
            not_converged.append(lam)
        path[:, k] = x
        grad_norms[:, k] = group_norms(gx, b, G)
        if progress is not None:
            progress.update()
    if not_converged:
        warnings.warn(f"the solver did not reach tol={tol} within max_iter={max_iter} at {len(not_converged)} "
                      f"lambda value(s), e.g. {not_converged[0]:.3g}; increase max_iter or tol", ConvergenceWarning,
                      stacklevel=3)
    return path, grad_norms, n_iter
