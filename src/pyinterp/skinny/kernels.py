"""Soft-tree ensemble kernels: forward/backward for a mini-batch (tree recursion in C++), losses,
proxes, schedule, initialisation. tests/reference_skinny.py holds the plain numpy forward/backward.

Shapes (paper 003, tensor formulation): ``p`` features, ``m`` perfect trees of depth ``d`` with
``I = 2^d - 1`` internal nodes and ``L = 2^d`` leaves, ``c`` outputs.

- ``W``: (p, m*I) split weights; row k is feature k's group, column ``tree*I + node``.
- ``b``: (m*I,) split biases (not in the group, not in the ridge).
- ``O``: (m, L, c) leaf vectors, leaves left to right.

Nodes are numbered breadth first (children of n are 2n+1, 2n+2); node n sends a sample left with
probability S(x.w_n + b_n). Tree outputs are summed (no global bias).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_softmax, softmax

from .. import _core

ACTIVATIONS = ("sigmoid", "smooth_step")


def forward_core(X, W, b, O, depth, kind="sigmoid", gamma_s=1.0):
    """Ensemble outputs F (B, c) of X (B, p) and the cache ``backward_core`` needs; the tree
    recursion runs in C++ (``_core.softtree_forward``)."""
    m, L, c = O.shape
    S, dS, P2 = _core.softtree_forward(X @ W, b, depth, kind, gamma_s)
    return P2 @ O.reshape(m * L, c), (S, dS, P2)


def backward_core(X, G, cache, O, depth):
    """Gradients (dW, db, dO) of sum(G * F) for the outputs F of ``forward_core``; the tree recursion
    runs in C++ (``_core.softtree_backward``)."""
    S, dS, P2 = cache
    m, L, c = O.shape
    G = G.astype(S.dtype, copy=False)
    dZ, db = _core.softtree_backward(G @ O.reshape(m * L, c).T, S, dS, depth)
    return X.T @ dZ, db, (P2.T @ G).reshape(m, L, c)


# The (forward, backward) pair training runs; tests/reference_skinny.py holds the numpy reference pair.
CORE = (forward_core, backward_core)


def mse_loss(F, y):
    """Mean squared error without the 1/2 (Keras' MeanSquaredError) and its gradient wrt F."""
    r = F[:, 0] - y
    return float(np.mean(r * r)), (2.0 / len(y)) * r[:, None]


def cross_entropy_loss(F, y):
    """Mean softmax cross-entropy of integer labels y on logits F, and its gradient wrt F."""
    rows = np.arange(len(y))
    loss = -float(np.mean(log_softmax(F, axis=1)[rows, y]))
    G = softmax(F, axis=1)
    G[rows, y] -= 1.0
    G /= len(y)
    return loss, G


def ridge_scale(lambda2, W_shape_cols):
    """The ridge term is (lambda2 / (m*I)) * ||W||^2; this is its per-weight gradient factor."""
    return 2.0 * lambda2 / W_shape_cols


def group_sq_norms(W):
    """Squared L2 norm of every row (feature group) without temporaries of W's size."""
    return np.einsum("ij,ij->i", W, W)


def hard_threshold(W, threshold):
    """Group hard-threshold prox in place: zero each row whose norm is not above ``threshold``.

    This is argmin_V (1/2 eta)||V - W||^2 + lambda0 #(nonzero rows of V) for
    threshold = sqrt(2 eta lambda0). Returns the boolean mask of surviving rows.
    """
    keep = group_sq_norms(W) > threshold * threshold
    W[~keep] = 0.0
    return keep


def soft_threshold(W, tau):
    """Group soft-threshold prox in place (group lasso): rows shrink by tau in norm, or vanish."""
    norms = np.sqrt(group_sq_norms(W))
    keep = norms > tau
    scale = np.zeros_like(norms)
    scale[keep] = 1.0 - tau / norms[keep]
    W *= scale[:, None]
    return keep


def dsl_lambda0(t, gamma, temperature):
    """Dense-to-sparse schedule lambda0(t) = gamma (1 - exp(-s t)); t is the 1-based global step."""
    return gamma * -math.expm1(-temperature * t)


def glorot_init(rng, n_features, n_trees, depth, n_outputs, dtype):
    """Keras-default initialisation of the authors' code: Glorot-uniform W and O, zero biases."""
    n_internal = 2**depth - 1
    a = math.sqrt(6.0 / (n_features + n_trees * n_internal))
    W = rng.uniform(-a, a, size=(n_features, n_trees * n_internal)).astype(dtype)
    a_leaf = math.sqrt(6.0 / (n_outputs + n_trees))
    O = rng.uniform(-a_leaf, a_leaf, size=(n_trees, 2**depth, n_outputs)).astype(dtype)
    return W, np.zeros(n_trees * n_internal, dtype=dtype), O
