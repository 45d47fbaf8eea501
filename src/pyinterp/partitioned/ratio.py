"""The partitioned-ratio objective (spec seed004, corrected eq. 6*) in matrix form.

With standardised samples x^(i) = (x1^(i), x2^(i)) split by the partition {T1, T2}, separable pair
features f_k(x_u, x_v) = phi_k(x_u) psi_k(x_v) and unary features xi_c(x_u), the log-ratio of the
T1-part of sample i and the T2-part of sample j is

    L_ij = a_i + b_j + sum_k [Phi1_k Theta_k Psi2_k^T]_ij

where a_i (b_j) holds the within-T1 (within-T2) pair terms and the unary terms of sample i (j) and
Theta_k is the m1 x m2 cross block. The smooth loss is

    l(theta) = -(1/n) sum_i L_ii + log( c_n sum_{i != j} exp(L_ij) ),   c_n = 1/(n(n-1))

(``normalizer="binom"`` uses the paper's printed 1/C(n,2); it shifts l by -log 2 only). Its gradient
is "joint moments minus moments under W", W the softmax of L over the mismatched pairs i != j. The
cross products cost O(b n^2 min(m1, m2)) per evaluation; rows of L are formed in chunks so memory
stays O(n * chunk).

Parameters live in one flat vector: the penalised groups as a (b, G) block (G = m1*m2 cross pairs,
then the within-T1 and within-T2 pairs in ``np.triu_indices`` order), then the unary coefficients
(c, m1) and (c, m2), which are not penalised.
"""

from __future__ import annotations

import math

import numpy as np

# Target number of entries of L formed at once (2 MiB of float64): large enough for BLAS, small
# enough for the cache.
_CHUNK_ENTRIES = 1 << 18


def _he2(x):
    return x * x - 1.0


def _identity(x):
    return x


# Pair features as (phi, psi) pairs; "poly2" uses the probabilists' Hermite polynomials He1 = x and
# He2 = x^2 - 1, orthogonal for standardised Gaussian data, so the four products are well conditioned.
PAIR_FEATURES = {
    "xy": ((_identity, _identity),),
    "poly2": ((_identity, _identity), (_he2, _identity), (_identity, _he2), (_he2, _he2)),
}
UNARY_FEATURES = {"quadratic": (_identity, _he2)}


def _stack(funcs, Z, what):
    """Apply elementwise functions to Z (n, k) -> (len(funcs), n, k), checking shape and finiteness."""
    out = np.empty((len(funcs), *Z.shape))
    for k, f in enumerate(funcs):
        v = np.asarray(f(Z), dtype=np.float64)
        if v.shape != Z.shape:
            raise ValueError(f"{what} function {k} must map an array elementwise (shape {Z.shape}), got shape {v.shape}")
        if not np.all(np.isfinite(v)):
            with np.errstate(invalid="ignore"):
                largest = np.nanmax(np.abs(Z)) if Z.size else 0.0
            raise ValueError(f"{what} function {k} returned NaN or infinity on the standardised X "
                             f"(|values| up to {largest:.3g})")
        out[k] = v
    return out


def _chunk_terms(A, B, BT, s, e, out):
    """One block of rows of L = A @ B.T (a_i and b_j ride along as columns of A and B), masked on
    the diagonal and exponentiated relative to the block's maximum M. With ``out`` the block's rows
    of exp(L - M) @ B[:, :-1] (W @ B, then the row sums) are written there; returns M, the block
    total and its column sums (or None)."""
    L = A[s:e] @ BT
    L[np.arange(e - s), np.arange(s, e)] = -np.inf
    M = float(L.max())
    L -= M
    np.exp(L, out=L)
    if out is None:
        return M, float(L.sum()), None
    out[s:e] = L @ B[:, :-1]
    return M, float(out[s:e, -1].sum()), L.sum(axis=0)


def masked_logsumexp(a, b, A, B, chunk, with_grad, executor=None, n_workers=1):
    """log sum_{i != j} exp(a_i + b_j + A_i . B_j), stable; with_grad also returns the softmax W's
    row sums, column sums and W @ B. Rows of L are formed ``chunk`` at a time (memory O(n chunk) per
    worker); blocks run on ``executor`` if given and are always combined in block order, so the
    result does not depend on the number of threads."""
    n, K = A.shape
    ones = np.ones((n, 1))
    A = np.concatenate([A, a[:, None], ones], axis=1)     # L_ij = [A_i, a_i, 1] . [B_j, 1, b_j]
    B = np.concatenate([B, ones, b[:, None]], axis=1)
    BT = np.ascontiguousarray(B.T)
    starts = list(range(0, n, chunk))
    out = np.empty((n, K + 1)) if with_grad else None
    col = np.zeros(n) if with_grad else None
    col_ref = -np.inf
    maxima, totals = np.empty(len(starts)), np.empty(len(starts))
    width = 4 * n_workers   # blocks in flight: bounds the column-sum buffers
    for w in range(0, len(starts), width):
        args = [(A, B, BT, s, min(n, s + chunk), out) for s in starts[w:w + width]]
        results = executor.map(lambda x: _chunk_terms(*x), args) if executor else (_chunk_terms(*x) for x in args)
        for c, (M, total, cs) in enumerate(results, start=w):
            maxima[c], totals[c] = M, total
            if cs is None:
                continue
            if M > col_ref:
                col *= math.exp(col_ref - M)
                col_ref = M
            else:
                cs *= math.exp(M - col_ref)
            col += cs
    top = maxima.max()
    log_z = top + math.log(float(np.exp(maxima - top) @ totals))
    if not with_grad:
        return log_z
    for c, s in enumerate(starts):
        out[s:s + chunk] *= math.exp(maxima[c] - log_z)
    col *= math.exp(col_ref - log_z)
    return log_z, out[:, K], col, out[:, :K]


class RatioProblem:
    """The smooth loss l(theta) for standardised data Z split into columns t1 / t2.

    The MLMI loss of the partitioned ratio (Notes: the formula and the layout of theta) and its
    gradient, for callers that drive the objective or the path solver (:func:`solve_path`)
    directly; :class:`PartitionedRatio` builds one from its standardised X. Every feature function
    is applied once, here: an evaluation costs O(b n^2 min(m1, m2)) time and O(n * chunk) memory.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features)
        The samples as rows, standardised (each column of mean 0 and variance 1, as
        :class:`PartitionedRatio` makes them).
    t1, t2 : array-like of int
        The columns of Z in the blocks T1 and T2 (m1 and m2 of them).
    pair_funcs : sequence of (phi, psi) pairs of elementwise functions
        The b separable pair features f_k(x_u, x_v) = phi_k(x_u) psi_k(x_v), e.g.
        ``PAIR_FEATURES["xy"]`` or ``PAIR_FEATURES["poly2"]``.
    unary_funcs : sequence of elementwise functions
        The c unpenalised one-variable features, e.g. ``UNARY_FEATURES["quadratic"]``, or ``()``.
    normalizer : {"pairs", "binom"}, default="pairs"
        c_n = 1/(n(n-1)), the U-statistic over the mismatched pairs; any other value uses the
        paper's printed 1/C(n,2), which shifts l by -log 2 only.
    chunk : int or None, default=None
        Rows of the n x n ratio matrix L formed at once (None: 2^18 // n rows, a block of about
        2^18 entries, 2 MiB of float64); clipped to [1, n].
    executor : concurrent.futures.Executor or None, default=None
        Runs the blocks of rows (None: in this thread); blocks are combined in block order, so the
        result does not depend on it.
    n_workers : int, default=1
        The executor's workers: at most 4 * n_workers blocks are in flight at once.

    Attributes
    ----------
    n, m1, m2 : int
        Samples and the sizes of T1 and T2.
    b, c : int
        Pair and unary features.
    n_cross : int
        Cross pairs, m1 * m2.
    n_groups : int
        Penalised groups: the cross pairs, then the within-T1 and within-T2 pairs.
    n_params : int
        Length of theta: b * n_groups + c * (m1 + m2).
    B : ndarray of shape (n, b * min(m1, m2))
        The fixed side of the cross products (the smaller block's features), see :meth:`kernel_inputs`.
    joint_cross : ndarray of shape (b, m1, m2)
        (1/n) sum_i phi_k(x1^(i)) psi_k(x2^(i))^T, the joint moments of the cross features.
    n_evaluations : int
        Calls of :meth:`value` and :meth:`value_and_grad` so far.

    Raises
    ------
    ValueError
        When a feature function does not map an array elementwise (to the same shape) or returns
        NaN or infinity on Z.

    See Also
    --------
    solve_path : Its group-lasso path over a grid of penalties.
    PartitionedRatio : The estimator that builds and solves these problems.

    Notes
    -----
    With standardised samples x^(i) = (x1^(i), x2^(i)) split by the partition {T1, T2}, separable
    pair features f_k(x_u, x_v) = phi_k(x_u) psi_k(x_v) and unary features xi_c(x_u), the
    log-ratio of the T1-part of sample i and the T2-part of sample j is::

        L_ij = a_i + b_j + sum_k [Phi1_k Theta_k Psi2_k^T]_ij

    where a_i (b_j) holds the within-T1 (within-T2) pair terms and the unary terms of sample i (j)
    and Theta_k is the m1 x m2 cross block. The smooth loss is::

        l(theta) = -(1/n) sum_i L_ii + log( c_n sum_{i != j} exp(L_ij) ),   c_n = 1/(n(n-1))

    (spec seed004, corrected eq. 6*). Its gradient is "joint moments minus moments under W", W the
    softmax of L over the mismatched pairs i != j. Rows of L are formed in chunks, so memory stays
    O(n * chunk).

    theta is one flat vector: the penalised groups as a (b, G) block (G = m1*m2 cross pairs, then
    the within-T1 and within-T2 pairs in ``np.triu_indices`` order), then the unary coefficients
    (c, m1) and (c, m2), which are not penalised (:meth:`split` gives the views).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem
    >>> X = np.random.default_rng(0).standard_normal((60, 3))
    >>> X[:, 1] += 0.8 * X[:, 0]
    >>> Z = (X - X.mean(axis=0)) / X.std(axis=0)
    >>> problem = RatioProblem(Z, [0], [1, 2], PAIR_FEATURES["xy"], UNARY_FEATURES["quadratic"])
    >>> problem.n_cross, problem.n_groups, problem.n_params  # (0, 1), (0, 2), then (1, 2); 2 x 3 unary
    (2, 3, 9)
    >>> value, grad = problem.value_and_grad(np.zeros(problem.n_params))
    >>> abs(float(value)) < 1e-12, grad.round(3).tolist()  # at 0 only the cross pairs have a gradient
    (True, [-0.76, -0.143, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    """

    def __init__(self, Z, t1, t2, pair_funcs, unary_funcs, normalizer="pairs", chunk=None, executor=None, n_workers=1):
        if normalizer not in ("pairs", "binom"):
            raise ValueError(f"normalizer must be 'pairs' or 'binom', got {normalizer!r}")
        n = Z.shape[0]
        self.n, self.m1, self.m2 = n, len(t1), len(t2)
        X1, X2 = Z[:, t1], Z[:, t2]
        self.P1, self.Q1 = _stack([f for f, _ in pair_funcs], X1, "pair"), _stack([g for _, g in pair_funcs], X1, "pair")
        self.P2, self.Q2 = _stack([f for f, _ in pair_funcs], X2, "pair"), _stack([g for _, g in pair_funcs], X2, "pair")
        self.U1, self.U2 = _stack(unary_funcs, X1, "unary"), _stack(unary_funcs, X2, "unary")
        self.b, self.c = len(pair_funcs), len(unary_funcs)
        self.iu1, self.iu2 = np.triu_indices(self.m1, 1), np.triu_indices(self.m2, 1)
        self.n_cross = self.m1 * self.m2
        self.n_groups = self.n_cross + len(self.iu1[0]) + len(self.iu2[0])
        self.n_params = self.b * self.n_groups + self.c * (self.m1 + self.m2)
        # Cross products go through the smaller block: L's rank-(b*min(m1, m2)) part is A @ B.T.
        self.swap = self.m1 < self.m2
        fixed = self.P1 if self.swap else self.Q2
        self.B = np.ascontiguousarray(np.concatenate(list(fixed), axis=1))
        self.joint_cross = np.einsum("kip,kiq->kpq", self.P1, self.Q2) / n
        pairs = n * (n - 1) if normalizer == "pairs" else n * (n - 1) / 2
        self.offset = -math.log(pairs)
        self.chunk = max(1, min(n, chunk or _CHUNK_ENTRIES // n))
        self.executor, self.n_workers = executor, n_workers
        self.n_evaluations = 0

    # -- layout ---------------------------------------------------------------------------------
    def split(self, theta):
        """Views (cross (b, m1, m2), within1 (b, P1), within2 (b, P2), unary1 (c, m1), unary2 (c, m2)).

        Parameters
        ----------
        theta : ndarray of shape (n_params,)
            The flat parameter vector: the (b, n_groups) group block, then the unary coefficients.

        Returns
        -------
        cross : ndarray of shape (b, m1, m2)
            The cross block Theta_k of each pair feature.
        within1, within2 : ndarray of shape (b, P1), (b, P2)
            The within-T1 and within-T2 pair coefficients, P1 = m1 (m1 - 1) / 2 pairs in
            ``np.triu_indices`` order (and P2 alike).
        unary1, unary2 : ndarray of shape (c, m1), (c, m2)
            The unary coefficients of T1's and T2's columns.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem
        >>> Z = np.random.default_rng(0).standard_normal((60, 3))
        >>> problem = RatioProblem(Z, [0], [1, 2], PAIR_FEATURES["xy"], UNARY_FEATURES["quadratic"])
        >>> [part.tolist() for part in problem.split(np.arange(9.0))]
        [[[[0.0, 1.0]]], [[]], [[2.0]], [[3.0], [4.0]], [[5.0, 6.0], [7.0, 8.0]]]
        """
        b, G, m1, m2 = self.b, self.n_groups, self.m1, self.m2
        groups = theta[: b * G].reshape(b, G)
        p1 = len(self.iu1[0])
        unary = theta[b * G:]
        return (groups[:, : self.n_cross].reshape(b, m1, m2), groups[:, self.n_cross: self.n_cross + p1],
                groups[:, self.n_cross + p1:], unary[: self.c * m1].reshape(self.c, m1),
                unary[self.c * m1:].reshape(self.c, m2))

    def _one_sided(self, P, Q, U, w, u, iu):
        """Within-block pair terms plus unary terms, per sample."""
        m = P.shape[2]
        s = np.einsum("kip,kp->i", U, u) if self.c else np.zeros(self.n)
        for k in range(self.b):
            if iu[0].size and np.any(w[k]):
                W = np.zeros((m, m))
                W[iu] = w[k]
                s += np.einsum("ip,ip->i", P[k] @ W, Q[k])
        return s

    def _one_sided_grad(self, P, Q, U, d, iu):
        gw = np.stack([(P[k].T @ (d[:, None] * Q[k]))[iu] for k in range(self.b)]) if iu[0].size else \
            np.zeros((self.b, 0))
        return gw, np.einsum("kip,i->kp", U, d)

    def kernel_inputs(self, theta):
        """(a, b, A, cross): the log-sum-exp kernel's inputs at theta.

        Entry (i, j) of the kernel is a_i + b_j + (A @ self.B.T)_ij over sample pairs (transposed when
        the first block is the smaller): a and b hold the within-block and unary terms, A @ B.T the
        cross terms through the smaller block; cross is the (b, m1, m2) view of theta's cross
        coefficients.

        Parameters
        ----------
        theta : ndarray of shape (n_params,)
            The flat parameter vector.

        Returns
        -------
        a : ndarray of shape (n,)
            The row terms of the kernel (T1's within-block and unary terms of sample i; T2's when
            transposed).
        b : ndarray of shape (n,)
            The column terms (T2's of sample j; T1's when transposed).
        A : ndarray of shape (n, b * min(m1, m2))
            The rows' side of the cross products, against ``self.B``.
        cross : ndarray of shape (b, m1, m2)
            The cross block of theta (a view, as :meth:`split` gives it).

        Examples
        --------
        The loss is the mean of the kernel's diagonal, negated, plus the log of its normalised sum
        off the diagonal:

        >>> import numpy as np
        >>> from scipy.special import logsumexp
        >>> from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem
        >>> Z = np.random.default_rng(0).standard_normal((60, 3))
        >>> problem = RatioProblem(Z, [0], [1, 2], PAIR_FEATURES["xy"], UNARY_FEATURES["quadratic"])
        >>> theta = 0.1 * np.arange(problem.n_params)
        >>> a, b, A, cross = problem.kernel_inputs(theta)
        >>> L = a[:, None] + b[None, :] + A @ problem.B.T
        >>> off = ~np.eye(problem.n, dtype=bool)
        >>> loss = -np.trace(L) / problem.n + logsumexp(L[off]) - np.log(problem.n * (problem.n - 1))
        >>> bool(np.isclose(loss, problem.value(theta)))
        True
        """
        cross, w1, w2, u1, u2 = self.split(theta)
        a = self._one_sided(self.P1, self.Q1, self.U1, w1, u1, self.iu1)
        bb = self._one_sided(self.P2, self.Q2, self.U2, w2, u2, self.iu2)
        if self.swap:   # L^T_ji = b_j + a_i + (Psi2_k Theta_k^T)_j . Phi1_k(i)
            A = np.concatenate([self.Q2[k] @ cross[k].T for k in range(self.b)], axis=1)
            return bb, a, A, cross
        A = np.concatenate([self.P1[k] @ cross[k] for k in range(self.b)], axis=1)
        return a, bb, A, cross

    def _data_term(self, a, bb, cross):
        return -float(np.vdot(cross, self.joint_cross)) - a.mean() - bb.mean()

    # -- evaluation -----------------------------------------------------------------------------
    def value(self, theta):
        """The loss l(theta) (the negated MLMI log-likelihood of the samples).

        Parameters
        ----------
        theta : ndarray of shape (n_params,)
            The flat parameter vector.

        Returns
        -------
        float
            l(theta) = -(1/n) sum_i L_ii + log(c_n sum_{i != j} exp(L_ij)), computed stably.

        See Also
        --------
        value_and_grad : The loss with its gradient.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem
        >>> Z = np.random.default_rng(0).standard_normal((60, 3))
        >>> problem = RatioProblem(Z, [0], [1, 2], PAIR_FEATURES["xy"], UNARY_FEATURES["quadratic"])
        >>> abs(float(problem.value(np.zeros(problem.n_params)))) < 1e-12  # every L_ij is 0: l = log 1
        True
        """
        self.n_evaluations += 1
        a, bb, A, cross = self.kernel_inputs(theta)
        log_z = masked_logsumexp(a, bb, A, self.B, self.chunk, False, self.executor, self.n_workers)
        return self._data_term(a, bb, cross) + log_z + self.offset

    def value_and_grad(self, theta):
        """The loss l(theta) and its gradient.

        The gradient is "joint moments minus moments under W", W the softmax of L over the
        mismatched pairs i != j, formed in the same pass over the blocks of rows of L as the loss.

        Parameters
        ----------
        theta : ndarray of shape (n_params,)
            The flat parameter vector.

        Returns
        -------
        value : float
            l(theta).
        grad : ndarray of shape (n_params,)
            The gradient, in theta's layout.

        Examples
        --------
        The gradient agrees with finite differences:

        >>> import numpy as np
        >>> from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem
        >>> Z = np.random.default_rng(0).standard_normal((60, 3))
        >>> problem = RatioProblem(Z, [0], [1, 2], PAIR_FEATURES["xy"], UNARY_FEATURES["quadratic"])
        >>> theta = 0.1 * np.arange(problem.n_params)
        >>> value, grad = problem.value_and_grad(theta)
        >>> step = 1e-6 * np.eye(problem.n_params)[0]
        >>> numeric = (problem.value(theta + step) - problem.value(theta - step)) / 2e-6
        >>> bool(np.isclose(grad[0], numeric, rtol=1e-5)), grad.shape
        (True, (9,))
        """
        self.n_evaluations += 1
        a, bb, A, cross = self.kernel_inputs(theta)
        log_z, row, col, WB = masked_logsumexp(a, bb, A, self.B, self.chunk, True, self.executor, self.n_workers)
        value = self._data_term(a, bb, cross) + log_z + self.offset
        m1, m2 = self.m1, self.m2
        if self.swap:   # the kernel saw L^T: its rows are T2 samples, W B = W^T Phi1
            row, col = col, row
            g_cross = np.stack([WB[:, k * m1:(k + 1) * m1].T @ self.Q2[k] for k in range(self.b)])
        else:
            g_cross = np.stack([self.P1[k].T @ WB[:, k * m2:(k + 1) * m2] for k in range(self.b)])
        g_cross -= self.joint_cross
        gw1, gu1 = self._one_sided_grad(self.P1, self.Q1, self.U1, row - 1.0 / self.n, self.iu1)
        gw2, gu2 = self._one_sided_grad(self.P2, self.Q2, self.U2, col - 1.0 / self.n, self.iu2)
        groups = np.concatenate([g_cross.reshape(self.b, -1), gw1, gw2], axis=1)
        grad = np.concatenate([groups.ravel(), gu1.ravel(), gu2.ravel()])
        return value, grad

    def cross_gradient_at_zero(self, order=None):
        """Closed form of the cross block of the gradient at theta = 0 (W uniform over i != j).

        -(1/n) sum_i f(x^(i)) + (sum_i phi(x1^(i)) sum_j psi(x2^(j)) - sum_i f(x^(i))) / (n(n-1)).
        With ``order`` (a permutation of the rows), block 2's rows are paired with block 1's in that
        order: every cross dependence is gone while each block keeps its own law (the permutation
        null). The within-block and unary gradients vanish at 0, so the largest cross-pair norm of
        this gradient is lambda_max, the smallest penalty at which every coefficient is 0.

        Parameters
        ----------
        order : array-like of int of shape (n,), optional
            A permutation of the rows: block 2's row order[i] is paired with block 1's row i.
            Default: the rows as they are.

        Returns
        -------
        ndarray of shape (b, m1, m2)
            The gradient of the loss in the cross block at theta = 0; the norm over the b pair
            features of entry (u, v) is the gradient norm of cross pair (u, v).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem
        >>> X = np.random.default_rng(0).standard_normal((60, 3))
        >>> X[:, 1] += 0.8 * X[:, 0]
        >>> Z = (X - X.mean(axis=0)) / X.std(axis=0)
        >>> problem = RatioProblem(Z, [0], [1, 2], PAIR_FEATURES["xy"], UNARY_FEATURES["quadratic"])
        >>> problem.cross_gradient_at_zero().round(3).tolist()  # pair (0, 1) is the dependent one
        [[[-0.76, -0.143]]]
        >>> order = np.random.default_rng(1).permutation(problem.n)
        >>> problem.cross_gradient_at_zero(order).round(3).tolist()  # the permutation null: both small
        [[[0.108, 0.137]]]
        """
        n = self.n
        joint = self.joint_cross if order is None else np.matmul(self.P1.transpose(0, 2, 1), self.Q2[:, order]) / n
        s1, s2 = self.P1.sum(axis=1), self.Q2.sum(axis=1)
        outer = np.einsum("kp,kq->kpq", s1, s2)
        return (outer - n * joint) / (n * (n - 1)) - joint


def permutation_null_counts(problem, rng, n_permutations, lambdas):
    """For each lambda, the mean number over ``n_permutations`` permutations of block 2's rows of
    cross pairs whose gradient norm at theta = 0 exceeds it. A cross pair enters the path where its
    gradient norm exceeds lambda, so this is how many edges would enter at lambda on data whose
    blocks are independent but keep their own laws: the expected false edges of a
    permutation-based false discovery rate (SAM, Tusher, Tibshirani & Chu 2001)."""
    counts = np.zeros(len(lambdas))
    for _ in range(n_permutations):
        grad = problem.cross_gradient_at_zero(rng.permutation(problem.n))
        norms = np.sort(np.sqrt(np.sum(grad ** 2, axis=0)).ravel())
        counts += norms.size - np.searchsorted(norms, lambdas, side="right")
    return counts / n_permutations
