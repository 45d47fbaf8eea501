"""PartitionedRatio: the edges of a Markov random field that cross between two given blocks of
variables, learnt from the partitioned ratio p(x) / (p(x1) p(x2)) (Liu, Suzuki & Sugiyama; spec
seed004) without the joint's partition function.

The log-ratio is modelled as sum_{u<v} theta_uv^T f(x_u, x_v) + sum_u eta_u^T xi(x_u) and fitted by
the MLMI criterion with a U-statistic normaliser over the mismatched sample pairs i != j (the
spec's corrected eq. 6*), with a group-lasso penalty lam * sum ||theta_uv||_2 over the pair groups
(unary terms unpenalised). A cross pair u in T1, v in T2 with theta_uv = 0 means X_u and X_v are
conditionally independent given the rest; within-block pairs are nuisance terms, not edges.

Fitting (``fit``):

1. Columns are standardised (mean 0, variance 1) with the fitting rows' statistics.
2. lambda_max = max over cross pairs of ||grad_uv l(0)|| (closed form; within-block and unary
   gradients vanish at theta = 0), so theta = 0 exactly for lambda >= lambda_max. The default grid
   is ``n_lambdas`` log-spaced values from lambda_max down to ``lambda_min_ratio * lambda_max``.
3. lambda is selected by ``selection``:
   - "permutation" (default): a permutation estimate of the false discovery rate along the path
     (as SAM does for genes). Pairing block 2's rows with block 1's in a random order removes every
     cross dependence and keeps each block's own law; the cross gradient at theta = 0 is then pure
     noise (closed form, one O(b n m1 m2) product per permutation), and a cross pair enters the path
     where its gradient norm exceeds lambda. ``null_edges_`` counts, for each lambda, the null pairs
     that would enter (a mean over ``n_permutations`` permutations); over the cross edges the path
     selects there it estimates the false discovery rate, ``fdr_path_``. The smallest grid lambda
     whose estimate is <= ``fdr`` is chosen, then the smallest passing one among 3 values inserted
     between it and the next grid value (solved warm from it). With no edge selected a warning says
     so. It adapts to the number of true edges, the pair features, the marginals and n
     (bench/studies/partitioned_selection.py, docs/user/partitioned.md).
   - "validation": a random part of the rows (``validation_fraction``) is held out, the path is
     fitted on the others, each solution is scored on the held-out rows by ``score`` (their own
     U-statistic, standardised with the training rows' statistics) and the lambda with the highest
     score is selected; the path is then fitted again on all rows over the same grid. The held-out
     likelihood ranks well but keeps rising as false edges enter: it over-selects (see above).
   - "smallest": the smallest lambda of the grid.
   ``coef_path_``, ``entry_lambda_`` and ``cross_edges_`` come from the path on all rows.
4. With ``refit=True`` the loss is minimised without penalty over the groups that are non-zero at
   the selected lambda (and the unary terms) by L-BFGS-B; ``coef_`` holds the result. With too few
   samples for the support the unpenalised loss is unbounded below (the matched pairs separate from
   the mismatched ones); then a ConvergenceWarning says so and ``coef_`` keeps the path solution.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from numbers import Integral, Real
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._progress import Progress, guarded_fit
from .._seeds import python_rng
from .._validation import (IntInterval, check_output_size, check_up_front, column_indices, resolve_n_threads,
                           validate_data)
from .group_path import check_lambdas, group_norms, minimize_smooth, solve_path
from .ratio import PAIR_FEATURES, UNARY_FEATURES, RatioProblem, permutation_null_counts

__all__ = ["PartitionedRatio"]


def _resolve_partition(partition, n_features, feature_names):
    """(T1, T2) as sorted column-index arrays from an int, a boolean mask or a pair of column lists."""
    if isinstance(partition, Integral) and not isinstance(partition, bool):
        if not 1 <= partition < n_features:
            raise ValueError(f"partition={partition} must put between 1 and {n_features - 1} of the "
                             f"{n_features} columns in the first block")
        return np.arange(partition), np.arange(partition, n_features)
    arr = np.asarray(partition, dtype=object) if not isinstance(partition, np.ndarray) else partition
    if arr.ndim == 1 and arr.dtype == bool:
        if arr.shape[0] != n_features:
            raise ValueError(f"a boolean partition mask needs one entry per column ({n_features}), got {arr.shape[0]}")
        t1, t2 = np.flatnonzero(arr), np.flatnonzero(~arr)
    elif isinstance(partition, (list, tuple)) and len(partition) == 2:
        t1, t2 = (column_indices(f"block {k + 1}", block, n_features, feature_names)
                  for k, block in enumerate(partition))
        overlap = np.intersect1d(t1, t2)
        if overlap.size:
            raise ValueError(f"the two blocks share columns {overlap.tolist()}")
        missing = np.setdiff1d(np.arange(n_features), np.concatenate([t1, t2]))
        if missing.size:
            raise ValueError(f"the partition does not cover columns {missing.tolist()}: every column must be in a block")
    else:
        raise TypeError("partition must be an int (the first block's size), a boolean mask over the columns, "
                        f"or a pair (block1, block2) of column lists; got {partition!r}")
    for k, t in enumerate((t1, t2)):
        if t.size == 0:
            raise ValueError(f"block {k + 1} of the partition is empty")
    return t1, t2


def _resolve_functions(spec, table, name):
    if spec is None and name == "unary":
        return ()
    if isinstance(spec, str):
        if spec not in table:
            raise ValueError(f"{name}={spec!r} is not one of {sorted(table)}" + (" or None" if name == "unary" else ""))
        return table[spec]
    if callable(spec):
        raise TypeError(f"{name} must be a name or a sequence of " + ("(phi, psi) pairs of " if name == "features"
                        else "") + "elementwise functions, not a single callable")
    try:
        funcs = tuple(tuple(item) if name == "features" else item for item in spec)
    except TypeError as exc:
        raise TypeError(f"{name} must be a name or a sequence of functions, got {spec!r}") from exc
    ok = all(len(f) == 2 and callable(f[0]) and callable(f[1]) for f in funcs) if name == "features" \
        else all(callable(f) for f in funcs)
    if not funcs or not ok:
        raise ValueError(f"{name} must be a non-empty sequence of " + ("(phi, psi) pairs of functions"
                         if name == "features" else "functions"))
    return funcs


def _column_moments(X):
    """Per-column (mean, standard deviation, largest ``|value|``); the moments are computed on the
    columns scaled by a power of two (exact: the same bits for ordinary X) so that no square
    overflows or underflows for finite X."""
    largest = np.abs(X).max(axis=0)
    exponent = np.frexp(largest)[1]
    Z = np.ldexp(X, -exponent)
    return np.ldexp(Z.mean(axis=0), exponent), np.ldexp(Z.std(axis=0), exponent), largest


@contextlib.contextmanager
def _workers(n_threads):
    """Threads over blocks of rows of the n x n ratio matrix, each with single-threaded BLAS (small
    products run faster that way, and results do not depend on the thread count)."""
    with threadpool_limits(limits=1, user_api="blas"):
        if n_threads == 1:
            yield None
        else:
            with ThreadPoolExecutor(n_threads) as executor:
                yield executor


# selection="permutation" refines its choice among this many values between the chosen grid value
# and the next (geometric, solved warm from the chosen one), so that the answer does not hinge on the
# grid's spacing (x1.17 at the defaults): on chain-plus-hub graphs at n = 300 the coarse grid alone
# lost 5 points of recall (bench/studies/partitioned_selection.py).
_REFINE = 3

# Parameter-sized vectors a solve holds at once (iterate, gradient, step, previous iterate, ...).
_WORK_VECTORS = 8


def _check_problem_size(m1, m2, b, c, n):
    """The model has b parameters per pair of features: at p = 10^6 that is terabytes, known before
    the problem is built (then its pair indices alone took 233 GiB)."""
    pairs = m1 * m2 + m1 * (m1 - 1) // 2 + m2 * (m2 - 1) // 2
    n_params = b * pairs + c * (m1 + m2)
    n_bytes = 8 * _WORK_VECTORS * n_params + 16 * pairs + 8 * b * n * (m1 + m2) * 2
    check_output_size(f"PartitionedRatio's {n_params:,} parameters ({b} per pair of {m1 + m2:,} features) and its "
                      "work", n_bytes, "fit fewer features (screen them first, e.g. with importance.dstump), or "
                      "fewer pair functions (features=...)")


class PartitionedRatio(BaseEstimator):
    """Cross-block Markov-random-field edges from a group-sparse partitioned-ratio model.

    Learns which pairs (u in T1, v in T2) of variables are conditionally dependent given the rest,
    from the partitioned ratio p(x) / (p(x1) p(x2)) of the two given blocks, without the joint's
    partition function: a group lasso over the pair terms of the log-ratio, fitted along a path of
    penalties, with lambda selected by a permutation estimate of the false discovery rate (by
    default). :meth:`fit` lists the steps.

    Parameters
    ----------
    partition : int, boolean mask of length n_features, or pair (block1, block2) of column lists
        The two blocks T1, T2. An int k puts the first k columns in T1. Column lists may hold indices
        or, for pandas input, column names; together they must cover every column exactly once.
    features : {"xy", "poly2"} or sequence of (phi, psi) pairs of elementwise functions, default="xy"
        Pair features f_k(x_u, x_v) = phi_k(x_u) psi_k(x_v) on standardised data (u in T1 for a cross
        pair, u < v within a block). "xy": x_u x_v (exact for Gaussians). "poly2": the products
        He_a(x_u) He_c(x_v), 1 <= a, c <= 2, of Hermite polynomials He1 = x, He2 = x^2 - 1.
        Separability is what makes one loss evaluation cost O(b n^2 min(m1, m2)).
    unary : "quadratic", None or sequence of elementwise functions, default="quadratic"
        Unpenalised one-variable features; "quadratic" is (x, x^2 - 1); None: none.
    lambdas : array-like of non-negative floats or None, default=None
        The penalty grid (sorted decreasing). None: see ``n_lambdas``.
    n_lambdas, lambda_min_ratio : int, float, default=30, 1e-2
        Default grid: n_lambdas log-spaced values from lambda_max to lambda_min_ratio * lambda_max.
    penalize_within : bool, default=True
        Penalise the within-block pair groups too (the paper's choice); False leaves them free.
    selection : {"permutation", "validation", "smallest"}, default="permutation"
        How lambda is selected (:meth:`fit`, step 3): the smallest lambda whose permutation
        estimate of the false discovery rate is <= ``fdr``, the held-out MLMI log-likelihood, or the
        smallest lambda of the grid.
    fdr : float in (0, 1), default=0.1
        For selection="permutation": the false discovery rate allowed among the selected cross edges.
    n_permutations : int >= 1, default=100
        For selection="permutation": permutations of block 2's rows drawn with ``random_state``.
    validation_fraction : float in (0, 1), default=0.2
        For selection="validation": share of rows held out (at least 3 rows are held out and at
        least 3 kept; needs n_samples >= 6).
    refit : bool, default=True
        Refit the selected support without penalty (``coef_``); else ``coef_`` is the path solution.
    tol : float, default=1e-4
        Stop when the proximal-gradient residual (KKT violation, gradient units) is <= tol.
    max_iter : int, default=2000
        Iteration cap per lambda (FISTA) and for the L-BFGS-B refit.
    n_jobs : int or None, default=None
        Threads for the n x n products (None: 1, -1: all cores). Results do not depend on it.
    random_state : int, RandomState or None, default=None
        Draws the permutations (selection="permutation") or the validation rows (selection="validation").
    verbose : int, default=0
        Reports the lambdas solved (the held-out path's too, when there is one).

    Attributes
    ----------
    block1_, block2_ : ndarray of int
        The column indices of T1 and T2 (sorted).
    pairs_ : ndarray (n_groups, 2)
        The pair groups: the m1*m2 cross pairs (T1 column, T2 column) first, then the within-T1 and
        the within-T2 pairs.
    n_cross_ : int
        Number of cross pairs (the first rows of ``pairs_``).
    lambdas_ : ndarray (n_lambdas,), or (n_lambdas + 3,)
        The grid; selection="permutation" inserts 3 values after the chosen grid value (:meth:`fit`, step 3).
    coef_path_ : ndarray (n_groups, b, ``len(lambdas_)``)
        Pair coefficients along the path (standardised scale).
    unary_path_ : ndarray (n_features, c, ``len(lambdas_)``)
        The c unary coefficients of every column along the path (standardised scale).
    entry_lambda_ : ndarray (``n_cross_``,)
        Where each cross pair enters the path: for a pair first non-zero at lambdas_[k], its group
        gradient norm at lambdas_[k-1] (where its KKT condition ||grad|| <= lambda binds) clipped to
        [lambdas_[k], lambdas_[k-1]]; lambdas_[0] if non-zero there; for a pair that never enters its
        gradient norm at the last lambda (< lambdas_[-1]). A ranking score for cross edges.
    null_edges_, fdr_path_ : ndarray (``len(lambdas_)``,) or None
        For selection="permutation": the mean number of cross pairs entering at each lambda under
        the permutation null, and that over the number of cross edges the path selects there (0
        where it selects none, at most 1): the estimated false discovery rate along the path.
    validation_scores_ : ndarray (n_lambdas,) or None
        The held-out scores along the grid (selection="validation").
    best_index_ : int
        The index of the selected lambda in ``lambdas_``.
    lambda_ : float
        The selected lambda.
    cross_edges_ : ndarray (n_edges, 2)
        The cross pairs non-zero at the selected lambda.
    coef_, unary_coef_ : ndarray (n_groups, b), (n_features, c)
        The model used by ``score``: the pair coefficients (rows in the order of ``pairs_``) and the
        unary coefficients of every column, on the standardised scale.
    mean_, scale_ : ndarray (n_features,)
        The columns' means and standard deviations on the fitting rows, which standardise X.
    lambda_max_ : float
        The smallest lambda at which every coefficient is 0: the largest cross-pair gradient norm at 0.
    n_iter_ : ndarray (``len(lambdas_)``,)
        Solver iterations at each lambda of the path.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen during ``fit``; only when X has string column names (a DataFrame).

    See Also
    --------
    RatioProblem : The smooth loss and its gradient, for driving the solver directly.
    solve_path : The warm-started group-lasso path the fit runs.

    Notes
    -----
    Liu, Suzuki & Sugiyama's partitioned ratio (spec seed004, with the corrected eq. 6*): the
    log-ratio is modelled as sum_{u<v} theta_uv^T f(x_u, x_v) + sum_u eta_u^T xi(x_u) and fitted by
    the MLMI criterion with a U-statistic normaliser over the mismatched sample pairs i != j, with
    the group-lasso penalty lam * sum ||theta_uv||_2 over the pair groups (unary terms unpenalised).
    One loss evaluation costs O(b n^2 min(m1, m2)) time, in O(n) memory per block of rows.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import PartitionedRatio
    >>> X = np.random.default_rng(0).standard_normal((200, 6))
    >>> X[:, 3] += 0.8 * X[:, 0]          # one edge across the blocks {0, 1, 2} and {3, 4, 5}
    >>> est = PartitionedRatio(3, n_lambdas=15, random_state=0).fit(X)
    >>> est.cross_edges_.tolist(), len(est.lambdas_)  # 15 grid values, 3 inserted by the selection
    ([[0, 3]], 18)
    >>> est.pairs_[:est.n_cross_].tolist()  # the 9 cross pairs (T1 column, T2 column)
    [[0, 3], [0, 4], [0, 5], [1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]]
    >>> int(np.argmax(est.entry_lambda_))  # the pair that enters the path first: (0, 3)
    0
    """

    _parameter_constraints = {
        # partition, features and unary: _resolve_partition / _resolve_functions name what is wrong
        "partition": "no_validation",
        "features": "no_validation",
        "unary": "no_validation",
        "lambdas": ["array-like", None],
        "n_lambdas": [IntInterval(Integral, 1, None, closed="left")],
        "lambda_min_ratio": [Interval(Real, 0, 1, closed="right")],
        "penalize_within": ["boolean"],
        "selection": [StrOptions({"permutation", "validation", "smallest"})],
        "fdr": [Interval(Real, 0, 1, closed="neither")],
        "n_permutations": [IntInterval(Integral, 1, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "refit": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [IntInterval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, partition, features="xy", unary="quadratic", lambdas=None, n_lambdas=30, lambda_min_ratio=1e-2,
                 penalize_within=True, selection="permutation", fdr=0.1, n_permutations=100, validation_fraction=0.2,
                 refit=True, tol=1e-4, max_iter=2000, n_jobs=None, random_state=None, verbose=0):
        self.partition = partition
        self.features = features
        self.unary = unary
        self.lambdas = lambdas
        self.n_lambdas = n_lambdas
        self.lambda_min_ratio = lambda_min_ratio
        self.penalize_within = penalize_within
        self.selection = selection
        self.fdr = fdr
        self.n_permutations = n_permutations
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- helpers --------------------------------------------------------------------------------
    def _problem(self, Z, executor, normalizer="pairs"):
        return RatioProblem(Z, self.block1_, self.block2_, self._pair_funcs, self._unary_funcs, normalizer,
                            executor=executor, n_workers=self._n_threads)

    def _standardise(self, X, mean, scale):
        return (X - mean) / scale

    def _lambdas(self):
        """The given grid sorted decreasing (None: the default grid, made in _fit)."""
        if self.lambdas is None:
            return None
        return np.sort(check_lambdas(self.lambdas))[::-1]

    # -- fit ------------------------------------------------------------------------------------
    @guarded_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the regularisation path on X (n_samples, n_features), select lambda, refit.

        1. Columns are standardised (mean 0, variance 1) with the fitting rows' statistics.
        2. lambda_max = max over cross pairs of ||grad_uv l(0)|| (closed form; within-block and
           unary gradients vanish at theta = 0), so theta = 0 exactly for lambda >= lambda_max. The
           default grid is ``n_lambdas`` log-spaced values from lambda_max down to
           ``lambda_min_ratio * lambda_max``; the path is solved warm-started along it
           (:func:`solve_path`).
        3. lambda is selected by ``selection``:

           - "permutation" (default): a permutation estimate of the false discovery rate along the
             path (as SAM does for genes). Pairing block 2's rows with block 1's in a random order
             removes every cross dependence and keeps each block's own law; the cross gradient at
             theta = 0 is then pure noise (closed form, one O(b n m1 m2) product per permutation),
             and a cross pair enters the path where its gradient norm exceeds lambda.
             ``null_edges_`` counts, for each lambda, the null pairs that would enter (a mean over
             ``n_permutations`` permutations); over the cross edges the path selects there it
             estimates the false discovery rate, ``fdr_path_``. The smallest grid lambda whose
             estimate is <= ``fdr`` is chosen, then the smallest passing one among 3 values
             inserted between it and the next grid value (solved warm from it). With no edge
             selected a warning says so. It adapts to the number of true edges, the pair features,
             the marginals and n (bench/studies/partitioned_selection.py, docs/user/partitioned.md).
           - "validation": a random part of the rows (``validation_fraction``) is held out, the
             path is fitted on the others, each solution is scored on the held-out rows by
             ``score`` (their own U-statistic, standardised with the training rows' statistics)
             and the lambda with the highest score is selected; the path is then fitted again on
             all rows over the same grid. The held-out likelihood ranks well but keeps rising as
             false edges enter: it over-selects.
           - "smallest": the smallest lambda of the grid.

           ``coef_path_``, ``entry_lambda_`` and ``cross_edges_`` come from the path on all rows.
        4. With ``refit=True`` the loss is minimised without penalty over the groups that are
           non-zero at the selected lambda (and the unary terms) by L-BFGS-B; ``coef_`` holds the
           result. With too few samples for the support the unpenalised loss is unbounded below
           (the matched pairs separate from the mismatched ones); then a ConvergenceWarning says so
           and ``coef_`` keeps the path solution.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples as rows (at least 3, and 2 features); finite, with no constant column.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self : PartitionedRatio
            The fitted estimator.

        Raises
        ------
        ValueError
            When a column is constant, the partition leaves a block empty or does not cover every
            column once, or ``selection="validation"`` has fewer than 6 samples.
        MemoryError
            When the model's parameters and work would not fit in this machine's memory (raised
            before any work starts).

        Warns
        -----
        UserWarning
            With ``selection="permutation"``, when no edge is selected or no lambda of the grid
            meets ``fdr``.
        ConvergenceWarning
            When the unpenalised refit is unbounded on the selected support (too few samples), or
            the solver does not reach ``tol`` within ``max_iter`` at some lambda.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import PartitionedRatio
        >>> X = np.random.default_rng(0).standard_normal((200, 6))
        >>> X[:, 3] += 0.8 * X[:, 0]
        >>> est = PartitionedRatio([[0, 1, 2], [3, 4, 5]], n_lambdas=15, random_state=0).fit(X)
        >>> est.block1_.tolist(), est.block2_.tolist(), est.cross_edges_.tolist()
        ([0, 1, 2], [3, 4, 5], [[0, 3]])
        >>> est.coef_path_.shape  # (pair groups, pair features, lambdas)
        (15, 1, 18)
        >>> round(float(est.coef_[0, 0]), 3)  # the refitted coefficient of (0, 3), standardised scale
        0.851
        """
        X = validate_data(self, X, dtype=np.float64, order="C", ensure_min_samples=3, ensure_min_features=2)
        lambdas = self._lambdas()
        m = X.shape[1]
        self.block1_, self.block2_ = _resolve_partition(self.partition, m, getattr(self, "feature_names_in_", None))
        self._pair_funcs = _resolve_functions(self.features, PAIR_FEATURES, "features")
        self._unary_funcs = _resolve_functions(self.unary, UNARY_FEATURES, "unary")
        b, c = len(self._pair_funcs), len(self._unary_funcs)
        self._n_threads = resolve_n_threads(self.n_jobs)
        paths = 2 if self.selection == "validation" else 1  # the held-out path, then the full one
        n_solves = (self.n_lambdas if lambdas is None else len(lambdas)) * paths
        _check_problem_size(len(self.block1_), len(self.block2_), b, c, X.shape[0])
        with _workers(self._n_threads) as executor, Progress(self.verbose, n_solves, "lambdas") as progress:
            return self._fit(X, lambdas, b, c, executor, progress)

    def _fit(self, X, lambdas, b, c, executor, progress):
        m = X.shape[1]
        self.mean_, self.scale_, largest = _column_moments(X)
        # Constant up to rounding, relative to the column's own magnitude (any scale is allowed).
        constant = np.flatnonzero(self.scale_ <= 1e-12 * largest)
        if constant.size:
            raise ValueError(f"column(s) {constant.tolist()} of X are constant; the ratio needs varying columns")
        # A spread below the smallest normal double cannot be stored exactly in scale_ (and mean_).
        subnormal = np.flatnonzero(self.scale_ < np.finfo(np.float64).tiny)
        if subnormal.size:
            raise ValueError(f"column(s) {subnormal.tolist()} of X vary by less than {np.finfo(np.float64).tiny:.3g} "
                             "(subnormal numbers); scale X")
        problem = self._problem(self._standardise(X, self.mean_, self.scale_), executor)
        G, n_cross = problem.n_groups, problem.n_cross
        self.lambda_max_ = float(np.sqrt(np.sum(problem.cross_gradient_at_zero() ** 2, axis=0)).max())
        if lambdas is None:
            check_up_front("n_lambdas", self.n_lambdas, 8 * (problem.n_params + G), "the solution path")
            lambdas = self.lambda_max_ * np.logspace(0.0, math.log10(self.lambda_min_ratio), self.n_lambdas)
        self.lambdas_ = lambdas
        weights = np.ones(G) if self.penalize_within else np.r_[np.ones(n_cross), np.zeros(G - n_cross)]
        self.validation_scores_ = self.null_edges_ = self.fdr_path_ = None
        if self.selection == "validation":
            self.validation_scores_ = self._validation_scores(X, lambdas, weights, executor, progress)

        path, grad_norms, self.n_iter_ = solve_path(problem, lambdas, weights, self.tol, self.max_iter, progress)
        if self.selection == "permutation":
            lambdas, path, grad_norms, self.n_iter_, self.best_index_ = self._select_by_permutation(
                problem, lambdas, path, grad_norms, self.n_iter_, weights)
            self.lambdas_ = lambdas
        elif self.selection == "validation":
            self.best_index_ = int(np.argmax(self.validation_scores_))
        else:
            self.best_index_ = len(lambdas) - 1
        n_pair_params = b * G
        self.coef_path_ = path[:n_pair_params].reshape(b, G, -1).transpose(1, 0, 2)
        self.unary_path_ = self._unary_columns(path[n_pair_params:], c, m)
        self.pairs_ = self._pairs()
        self.n_cross_ = n_cross
        norms = np.sqrt(np.sum(self.coef_path_ ** 2, axis=1))
        self.entry_lambda_ = self._entry_lambda(norms[:n_cross], grad_norms[:n_cross], lambdas)
        self.lambda_ = float(lambdas[self.best_index_])
        selected = path[:, self.best_index_]
        support = group_norms(selected, b, G) > 0
        self.cross_edges_ = self.pairs_[:n_cross][support[:n_cross]]
        if self.refit:
            free = np.r_[np.tile(support, b), np.ones(c * m, bool)]
            refitted, _, _, diverged = minimize_smooth(problem, selected, free, self.tol * 1e-2, self.max_iter)
            if diverged:
                warnings.warn("the unpenalised refit is unbounded on the selected support (the matched sample pairs "
                              "are separable from the mismatched ones: too few samples); coef_ keeps the penalised "
                              "solution", ConvergenceWarning, stacklevel=5)
            else:
                selected = refitted
        self.coef_ = selected[:n_pair_params].reshape(b, G).T.copy()
        self.unary_coef_ = self._unary_columns(selected[n_pair_params:, None], c, m)[:, :, 0]
        return self

    def _validation_scores(self, X, lambdas, weights, executor, progress):
        n = X.shape[0]
        if n < 6:
            raise ValueError(f"selecting lambda on held-out rows needs at least 6 samples (3 to fit, 3 to score), "
                             f"got {n}; use selection='permutation'")
        n_val = min(max(3, int(math.ceil(self.validation_fraction * n))), n - 3)
        order = python_rng(self.random_state).permutation(n)
        val, train = X[order[:n_val]], X[order[n_val:]]
        mean, scale, _ = _column_moments(train)
        scale = np.where(scale > 0, scale, 1.0)
        path, _, _ = solve_path(self._problem(self._standardise(train, mean, scale), executor), lambdas, weights,
                                self.tol, self.max_iter, progress)
        held_out = self._problem(self._standardise(val, mean, scale), executor)
        return np.array([-held_out.value(path[:, k]) for k in range(len(lambdas))])

    def _select_by_permutation(self, problem, lambdas, path, grad_norms, n_iter, weights):
        """The smallest lambda whose permutation estimate of the false discovery rate is <= fdr:
        first on the grid, then among _REFINE values between the chosen grid value and the next,
        solved warm from the chosen one and inserted into the path. Returns the path's arrays (with
        those values) and the selected index."""
        n_cross, b, G = problem.n_cross, problem.b, problem.n_groups
        # _REFINE geometric values inside each interval of the grid (zeros in one ending at 0, which
        # is never refined); the null is counted at all of them with the same permutations
        between = lambdas[:-1, None] * (lambdas[1:] / lambdas[:-1])[:, None] ** (
            np.arange(1, _REFINE + 1) / (_REFINE + 1))
        counts = permutation_null_counts(problem, python_rng(self.random_state), self.n_permutations,
                                         np.concatenate([lambdas, between.ravel()]))
        null, null_between = counts[: len(lambdas)], counts[len(lambdas):].reshape(between.shape)

        def estimate(null_edges, solutions):
            cross = solutions[: b * G].reshape(b, G, -1)[:, :n_cross]
            selected = np.count_nonzero(np.any(cross != 0, axis=0), axis=0)
            # no edge selected, no false one: 0 where the path selects none (as FDR = E[V / max(R, 1)]);
            # more null entries than selections is an estimate of 1, as SAM caps it (fdr < 1 selects alike)
            return np.where(selected > 0, np.minimum(1.0, null_edges / np.maximum(selected, 1)), 0.0), selected

        fdr, selected = estimate(null, path)
        passing = np.flatnonzero(fdr <= self.fdr)
        if passing.size == 0:
            warnings.warn(f"no lambda of the grid has an estimated false discovery rate <= fdr={self.fdr} (lowest "
                          f"{fdr.min():.2g}); the largest, {lambdas[0]:.4g}, is selected: give a grid that "
                          f"reaches lambda_max_ = {self.lambda_max_:.4g}", UserWarning, stacklevel=7)
            k = 0
        else:
            k = int(passing[-1])
            if k + 1 < len(lambdas) and lambdas[k + 1] > 0:
                x, g, it = solve_path(problem, between[k], weights, self.tol, self.max_iter, start=path[:, k])
                fdr_extra, selected_extra = estimate(null_between[k], x)
                at = [k + 1] * _REFINE
                lambdas, path, n_iter = np.insert(lambdas, at, between[k]), np.insert(path, at, x, axis=1), \
                    np.insert(n_iter, at, it)
                grad_norms, null = np.insert(grad_norms, at, g, axis=1), np.insert(null, at, null_between[k])
                fdr, selected = np.insert(fdr, at, fdr_extra), np.insert(selected, at, selected_extra)
                k = int(np.flatnonzero(fdr[: k + 1 + _REFINE] <= self.fdr)[-1])
            if selected[k] == 0:
                why = ("the path selects none down to its smallest lambda" if not selected.any() else
                       f"wherever the path selects some, their estimated false discovery rate exceeds fdr={self.fdr} "
                       f"(lowest {fdr[selected > 0].min():.2g}): the blocks look independent at this n")
                warnings.warn(f"PartitionedRatio selected no cross edge: {why}. entry_lambda_ still ranks the cross "
                              "pairs; raise fdr (or lower lambda_min_ratio) to select some", UserWarning, stacklevel=7)
        self.null_edges_, self.fdr_path_ = null, fdr
        return lambdas, path, grad_norms, n_iter, k

    def _unary_columns(self, unary, c, m):
        """(c*m1 + c*m2, L) flat unary block -> (m, c, L) in column order."""
        m1 = len(self.block1_)
        out = np.empty((m, c, unary.shape[1]))
        out[self.block1_] = unary[: c * m1].reshape(c, m1, -1).transpose(1, 0, 2)
        out[self.block2_] = unary[c * m1:].reshape(c, m - m1, -1).transpose(1, 0, 2)
        return out

    def _pairs(self):
        t1, t2 = self.block1_, self.block2_
        cross = np.stack(np.meshgrid(t1, t2, indexing="ij"), axis=-1).reshape(-1, 2)
        iu1, iu2 = np.triu_indices(len(t1), 1), np.triu_indices(len(t2), 1)
        within1 = np.stack([t1[iu1[0]], t1[iu1[1]]], axis=1)
        within2 = np.stack([t2[iu2[0]], t2[iu2[1]]], axis=1)
        return np.concatenate([cross, within1, within2]).astype(np.intp)

    @staticmethod
    def _entry_lambda(norms, grad_norms, lambdas):
        entry = grad_norms[:, -1].copy()
        nonzero = norms > 0
        entered = nonzero.any(axis=1)
        first = np.argmax(nonzero, axis=1)
        for g in np.flatnonzero(entered):
            k = first[g]
            entry[g] = lambdas[0] if k == 0 else np.clip(grad_norms[g, k - 1], lambdas[k], lambdas[k - 1])
        return entry

    # -- scoring --------------------------------------------------------------------------------
    def score(self, X, y=None):
        """Held-out MLMI log-likelihood of the fitted ratio on X (higher is better).

        The mean log-ratio of X's rows minus the log of its U-statistic normaliser over the
        mismatched pairs i != j, with X standardised by the fitting rows' ``mean_`` and ``scale_``.
        It estimates KL[p || p1 p2] under the model (the mutual information between the blocks).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples as rows (at least 3), with the columns seen in ``fit``.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        float
            The held-out log-likelihood, minus the model's loss on X.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import PartitionedRatio
        >>> rng = np.random.default_rng(1)
        >>> X = rng.standard_normal((300, 4))
        >>> X[:, 2] += 0.8 * X[:, 0]
        >>> est = PartitionedRatio(2, n_lambdas=15, random_state=0).fit(X[:200])
        >>> round(float(est.score(X[200:])), 3)  # rows the fit did not see
        0.229
        >>> round(float(est.score(rng.standard_normal((100, 4)))), 3)  # independent blocks: the model does worse
        -0.413
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False, ensure_min_samples=3)
        theta = np.concatenate([self.coef_.T.ravel(), self.unary_coef_[self.block1_].T.ravel(),
                                self.unary_coef_[self.block2_].T.ravel()])
        with _workers(self._n_threads) as executor:
            return -self._problem(self._standardise(X, self.mean_, self.scale_), executor).value(theta)
