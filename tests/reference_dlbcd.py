"""Plain-Python reference solvers of DL-BCD (thesis 000), the peers of bench/compare_dlbcd.py
(loaded through bench/benchkit/peers.py).

``port_stage`` follows Algorithm 2 line by line, as the thesis and its MATLAB reference do: every
row update recomputes the coefficients B = X Q^T, solves the row subproblem with
scipy.optimize.minimize(method="BFGS") and its (sub)gradient, and re-inverts Q. ``lp_row_problem``
solves Algorithm 1's subproblem (5.3) as a sequence of linear programs (HiGHS).
Nothing here is meant to be fast: it is what pyinterp's compiled code is measured against.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import linprog, minimize
from scipy.sparse import csr_matrix, hstack, identity, vstack


def truncated_objective(D, X, tau):
    return float(np.minimum(np.abs(np.linalg.solve(D, X.T)), tau).sum() / X.shape[0])


def port_stage(X, D, tau, max_iter=500, tol=1e-9):
    """One stage of Algorithm 2 in numpy/scipy; returns the dictionary and the sweeps made."""
    n, p = X.shape
    Q = np.linalg.inv(D)
    f = truncated_objective(D, X, tau)
    for sweep in range(1, max_iter + 1):
        for j in range(p):
            B = X @ Q.T
            absB = np.abs(B)
            rows = B[absB[:, j] <= tau]
            weight = np.where(absB <= tau, absB, 0.0).sum(axis=0) / n
            cos = D.T @ D[:, j]
            others = np.arange(p) != j
            m, c = cos[others], weight[others]

            def fun(x):
                z = rows @ np.insert(x, j, 1.0)
                q = np.sqrt((x - m) ** 2 + 1 - m ** 2)
                grad = (rows.T @ np.sign(z))[others] / n + c * (x - m) / q
                return np.abs(z).sum() / n + c @ q, grad

            x0 = np.zeros(p - 1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = minimize(fun, x0, jac=True, method="BFGS")
            if not res.fun < fun(x0)[0]:
                continue
            w = np.insert(res.x, j, 1.0)
            scale = np.ones(p)
            scale[others] = np.sqrt((res.x - m) ** 2 + 1 - m ** 2)
            row = w @ Q
            Q = scale[:, None] * Q
            Q[j] = row
            D = np.linalg.inv(Q)
        f_new = truncated_objective(D, X, tau)
        done = not f - f_new > tol * f
        f = f_new
        if done:
            break
    return D, sweep


def lp_row_problem(beta, k, m, weight, tol=1e-8, max_lps=60):
    """Problem (5.3) for row k by linear programming (HiGHS): |.| by epigraph variables, each
    sqrt((x - m)^2 + 1 - m^2) by tangent cuts added at the current solution until every cut is
    tight to tol (Kelley's method, exact in the limit). Returns w and the number of LPs solved."""
    n, p = beta.shape
    free = np.arange(p) != k
    B, b0, mm, c = beta[:, free], beta[:, k], m[free], weight[free]
    q = p - 1
    # variables: x (q), t (n), u (q); minimise sum t + c . u
    cost = np.concatenate([np.zeros(q), np.ones(n), c])
    abs_rows = vstack([hstack([csr_matrix(B), -identity(n), csr_matrix((n, q))]),
                       hstack([csr_matrix(-B), -identity(n), csr_matrix((n, q))])])
    abs_rhs = np.concatenate([-b0, b0])
    cuts_A, cuts_b = [], []

    def add_cuts(x):
        value = np.sqrt((x - mm) ** 2 + 1 - mm ** 2)
        slope = (x - mm) / value
        rows = np.zeros((q, 2 * q + n))
        rows[np.arange(q), np.arange(q)] = slope
        rows[np.arange(q), q + n + np.arange(q)] = -1.0
        cuts_A.append(rows)
        cuts_b.append(slope * x - value)

    for start in (np.zeros(q), mm, mm - 1, mm + 1):
        add_cuts(start)
    bounds = [(None, None)] * q + [(0, None)] * n + [(None, None)] * q
    for n_lp in range(1, max_lps + 1):
        res = linprog(cost, A_ub=vstack([abs_rows, csr_matrix(np.vstack(cuts_A))]),
                      b_ub=np.concatenate([abs_rhs, *cuts_b]), bounds=bounds, method="highs")
        x, u = res.x[:q], res.x[q + n:]
        gap = np.sqrt((x - mm) ** 2 + 1 - mm ** 2) - u
        if gap.max() <= tol:
            break
        add_cuts(x)
    return np.insert(x, k, 1.0), n_lp
