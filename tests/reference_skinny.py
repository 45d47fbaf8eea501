"""The numpy reference of the soft-tree kernels (pyinterp.skinny.kernels runs the tree recursion in
C++): forward/backward for a mini-batch and the smooth objective. Tests check the C++ kernels and
finite differences against it; bench/compare_skinny.py times training with it.

Shapes and node numbering as in pyinterp.skinny.kernels: ``W`` (p, m*I), ``b`` (m*I,), ``O`` (m, L, c),
nodes breadth first, node n sends a sample left with probability S(x.w_n + b_n).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from pyinterp.skinny import kernels


def activation(Z, kind="sigmoid", gamma_s=1.0):
    """S(Z) and S'(Z). Smooth-step: 0 below -gamma_s/2, 1 above, a cubic in between."""
    if kind == "sigmoid":
        S = expit(Z)
        return S, S * (1.0 - S)
    if kind == "smooth_step":
        half = 0.5 * gamma_s
        Zc = np.clip(Z, -half, half)
        S = Zc * (1.5 / gamma_s - (2.0 / gamma_s**3) * Zc * Zc) + 0.5
        dS = 1.5 / gamma_s - (6.0 / gamma_s**3) * Zc * Zc
        dS[np.abs(Z) >= half] = 0.0
        return S, dS
    raise ValueError(f"activation must be one of {kernels.ACTIVATIONS}, got {kind!r}")


def level_slice(k):
    """Breadth-first node indices of depth level k."""
    return slice(2**k - 1, 2 ** (k + 1) - 1)


def route(S3, depth):
    """Leaf probabilities (B, m, L) from split probabilities (B, m, I), plus the per-level reach."""
    A = np.ones(S3.shape[:2] + (1,), dtype=S3.dtype)
    reach = []
    for k in range(depth):
        reach.append(A)
        left = A * S3[:, :, level_slice(k)]
        nxt = np.empty(A.shape[:2] + (2 * A.shape[2],), dtype=S3.dtype)
        nxt[:, :, 0::2] = left
        np.subtract(A, left, out=nxt[:, :, 1::2])
        A = nxt
    return A, reach


def forward(X, W, b, O, depth, kind="sigmoid", gamma_s=1.0):
    """Ensemble outputs F (B, c) and the cache the backward pass needs."""
    m, L, c = O.shape
    Z = X @ W
    if b is not None:
        Z += b
    S, dS = activation(Z, kind, gamma_s)
    S3 = S.reshape(X.shape[0], m, L - 1)
    P, reach = route(S3, depth)
    P2 = P.reshape(X.shape[0], m * L)
    F = P2 @ O.reshape(m * L, c)
    return F, (S3, dS, reach, P2)


def backward(X, G, cache, O, depth):
    """Gradients (dW, db, dO) of sum(G * F) for the ensemble outputs F of ``forward``."""
    S3, dS, reach, P2 = cache
    m, L, c = O.shape
    B = X.shape[0]
    dO = (P2.T @ G).reshape(m, L, c)
    dA = (G @ O.reshape(m * L, c).T).reshape(B, m, L)
    dS3 = np.empty_like(S3)
    for k in range(depth - 1, -1, -1):
        dl, dr = dA[:, :, 0::2], dA[:, :, 1::2]
        diff = dl - dr
        dS3[:, :, level_slice(k)] = reach[k] * diff
        dA = dr + S3[:, :, level_slice(k)] * diff
    dZ = dS3.reshape(B, m * (L - 1))
    dZ *= dS
    return X.T @ dZ, dZ.sum(axis=0), dO


def objective_terms(X, y, W, b, O, depth, loss, lambda2, kind="sigmoid", gamma_s=1.0):
    """Smooth part of the objective (data loss + group ridge) and its gradients; the finite-difference target."""
    F, cache = forward(X, W, b, O, depth, kind, gamma_s)
    value, G = loss(F, y)
    dW, db, dO = backward(X, G, cache, O, depth)
    value += lambda2 / W.shape[1] * float(np.sum(W * W))
    dW += kernels.ridge_scale(lambda2, W.shape[1]) * W
    return value, dW, db, dO



# A (forward, backward) pair for ``TrainConfig.engine`` / ``predict_raw(engine=...)``.
ENGINE = (forward, backward)
