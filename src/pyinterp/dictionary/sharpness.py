"""The sharpness test (thesis 000 Algorithm 1) and the checks it shares with DL-BCD."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .. import _core
from .._seeds import python_rng
from .._validation import IntInterval, check_array, check_exact_integers, clamp_iterations, resolve_n_threads

__all__ = ["sharpness_test"]

_LINE_SEARCHES = {"armijo": _core.LineSearch.armijo, "wolfe": _core.LineSearch.wolfe}
_SHARPNESS_INNER_TOL = 1e-12  # relative decrease at which the sharpness test's BFGS stops
_DENSE_MAX_P = 200  # by default, above this the subproblems use L-BFGS with _LBFGS_MEMORY pairs
_LBFGS_MEMORY = 10
_SINGULAR_COND = 1e12
_SHARPNESS_START_NOISE = 1e-3


def _memory(p, lbfgs_memory=None):
    """Pairs kept by the subproblems' quasi-Newton solver (0: dense BFGS)."""
    if lbfgs_memory is None:
        return 0 if p <= _DENSE_MAX_P else _LBFGS_MEMORY
    return clamp_iterations(lbfgs_memory)  # pairs are kept as iterations make them


def _check_signals(X, p=None):
    n, n_features = X.shape
    if n < n_features:
        raise ValueError(
            f"X: a complete dictionary needs at least as many signals as features: n_samples = {n} < n_features = "
            f"{n_features}")
    if p is not None and n_features != p:
        raise ValueError(f"X has {n_features} features, the dictionary has {p}")
    return np.require(X, requirements=["C_CONTIGUOUS", "ALIGNED"])  # as the core reads it


def _check_dictionary(D, name="D"):
    """A float64 copy of a square, finite, nonsingular D with its columns scaled to unit norm."""
    D = check_array(D, dtype=np.float64, ensure_all_finite=True, input_name=name, copy=True)
    if D.shape[0] != D.shape[1]:
        raise ValueError(f"{name} must be square (a complete dictionary), got shape {D.shape}")
    norms = np.linalg.norm(D, axis=0)
    if np.any(norms == 0) or np.linalg.cond(D) > _SINGULAR_COND:
        raise ValueError(f"{name} is singular (condition number above {_SINGULAR_COND:g})")
    return np.ascontiguousarray(D / norms)


def _perturbed_collinearity(D, rho, rng):
    """M~ of Algorithm 1: the Gram matrix of D with N(0, rho^2) noise added to every entry, zero diagonal."""
    Dp = D + rho * rng.standard_normal(D.shape)
    M = Dp.T @ Dp
    np.fill_diagonal(M, 0.0)
    return np.ascontiguousarray(M)


def _sharpness(D, X, rho, rng, *, start_noise, line_search, max_inner_iter, memory, n_threads):
    """(r, W, M~): the statistic, the solutions w^(k) as rows of W, and the perturbed collinearity."""
    p = D.shape[0]
    beta = np.ascontiguousarray(np.linalg.solve(D, X.T).T)
    M = _perturbed_collinearity(D, rho, rng)
    W0 = np.ascontiguousarray(np.eye(p) + start_noise * rng.standard_normal((p, p)))
    r, W = _core.sharpness_statistic(beta, M, W0, 0.0, line_search, memory, max_inner_iter, _SHARPNESS_INNER_TOL,
                                     n_threads)
    return float(r), W, M


# Constraints sharpness_test and DLBCD share.
PARAMETER_CONSTRAINTS = {
    "rho": [Interval(Real, 0, None, closed="neither")],
    "start_noise": [Interval(Real, 0, None, closed="left")],
    "line_search": [StrOptions(set(_LINE_SEARCHES))],
    "max_inner_iter": [IntInterval(Integral, 1, None, closed="left")],
    "lbfgs_memory": [IntInterval(Integral, 0, None, closed="left"), None],
    "random_state": ["random_state"],
    "n_jobs": [Integral, None],
}


@validate_params(
    {**PARAMETER_CONSTRAINTS, "D": ["array-like"], "X": ["array-like"],
     "threshold": [Interval(Real, 0, None, closed="neither")], "return_solutions": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def sharpness_test(D, X, rho=0.01, threshold=1e-6, random_state=None, *, start_noise=1e-3, line_search="wolfe",
                   max_inner_iter=1000, lbfgs_memory=None, n_jobs=None, return_solutions=False):
    """Algorithm 1: is D a sharp local minimum of the l1 objective on the signals X?

    The collinearity matrix M = D^T D is perturbed (``rho`` times standard Gaussian noise added to
    every entry of D, then the Gram matrix), and for every atom k the strongly convex problem (5.3)::

        min_w  sum_i ``|<beta_i, w>|`` + sum_{h != k} sqrt((w_h - M~_kh)^2 + 1 - M~_kh^2) sum_i ``|beta_ih|``,  w_k = 1,

    is solved by BFGS. D is declared sharp when r = max_k ||w^(k) - I_k||^2 < threshold (Proposition
    5.1.1: a sharp minimum stays the minimiser under small perturbations). BFGS starts near I_k, not
    on it: I_k is a kink of (5.3) whenever some beta_ik = 0, and a quasi-Newton method started on a
    kink can stop there although I_k is not the minimiser, which would report non-sharp dictionaries
    as sharp.

    Parameters
    ----------
    D : array-like of shape (p, p)
        Dictionary with the atoms as columns; columns are scaled to unit norm. It must be finite and
        nonsingular (condition number at most 1e12).
    X : array-like of shape (n_samples, p)
        Signals as rows, n_samples >= p, finite.
    rho : float > 0, default=0.01
        Perturbation level.
    threshold : float > 0, default=1e-6
        Decision threshold T on r.
    random_state : int, RandomState instance or None, default=None
        Draws the perturbation and the start points.
    start_noise : float >= 0, default=1e-3
        Standard deviation of the Gaussian offset of the start points from I_k (the reference
        implementation's 1e-3; it must stay below sqrt(threshold) to let sharp minima pass).
    line_search : {"wolfe", "armijo"}, default="wolfe"
        The BFGS line search: weak Wolfe bracketing (Lewis & Overton) or backtracking Armijo, as in
        :class:`DLBCD`.
    max_inner_iter : int, default=1000
        BFGS iterations per problem.
    lbfgs_memory : int >= 0 or None, default=None
        The quasi-Newton solver of the problems: None uses dense BFGS for p <= 200 and L-BFGS keeping
        10 pairs above; 0 forces dense BFGS, m > 0 L-BFGS keeping m pairs.
    n_jobs : int or None, default=None
        Threads over the p problems (the result does not depend on it).
    return_solutions : bool, default=False
        Also return the problems' solutions and the perturbed collinearity they were solved with.

    Returns
    -------
    is_sharp : bool
        Whether r < ``threshold``: D is declared a sharp local minimum.
    r : float
        The statistic max_k ||w^(k) - I_k||^2.
    W : ndarray of shape (p, p)
        Row k is the solution w^(k) of problem k (only with ``return_solutions=True``).
    M : ndarray of shape (p, p)
        The perturbed collinearity M~, zero diagonal (only with ``return_solutions=True``).

    Raises
    ------
    ValueError
        When D is not square, singular or not finite, X has fewer rows than D's p or another number
        of columns, or X is not finite.

    See Also
    --------
    DLBCD : Learns the dictionary, and applies this test to every restart's result (``is_sharp_``).

    Examples
    --------
    The dictionary behind noiseless sparse signals is sharp; the identity, on the same signals, is not:

    >>> import numpy as np
    >>> from pyinterp.dictionary import sharpness_test
    >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
    >>> D = make_collinear_dictionary(4, 0.3)
    >>> X = make_dictionary_signals(D, make_sparse_coefficients(200, 4, "sg", sparsity=2, random_state=0))
    >>> is_sharp, r = sharpness_test(D, X, random_state=0)
    >>> is_sharp, r < 1e-6
    (True, True)
    >>> is_sharp, r = sharpness_test(np.eye(4), X, random_state=0)
    >>> is_sharp, round(r, 3)
    (False, 0.036)
    >>> is_sharp, r, W, M = sharpness_test(D, X, random_state=0, return_solutions=True)
    >>> W.shape, np.diag(M).tolist()
    ((4, 4), [0.0, 0.0, 0.0, 0.0])
    """
    D = _check_dictionary(D)
    check_exact_integers(X)  # the test fits coefficients on X, as DLBCD does
    X = _check_signals(check_array(X, dtype=np.float64, ensure_all_finite=True, input_name="X"), D.shape[0])
    r, W, M = _sharpness(D, X, rho, python_rng(random_state), start_noise=start_noise,
                         line_search=_LINE_SEARCHES[line_search], max_inner_iter=clamp_iterations(max_inner_iter),
                         memory=_memory(D.shape[0], lbfgs_memory), n_threads=resolve_n_threads(n_jobs))
    return (bool(r < threshold), r, W, M) if return_solutions else (bool(r < threshold), r)
