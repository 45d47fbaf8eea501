"""Proximal mini-batch training of a soft-tree ensemble with a group penalty (paper 003, Alg. 1).

Each step: gradient of the smooth part (data loss + group ridge) on one mini-batch, an SGD (or
Adam) step on every parameter, then the group prox on W with the penalty weight of that step:
lambda0(t) = gamma (1 - exp(-s t)) under the dense-to-sparse schedule (t is the 1-based global
mini-batch step), or a constant. The backward pass covers all p features so a zeroed group can come
back; the forward pass reads only the surviving columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import kernels

ADAM_BETA1, ADAM_BETA2, ADAM_EPS = 0.9, 0.999, 1e-7  # Keras' defaults


@dataclass
class TrainConfig:
    n_trees: int
    depth: int
    activation: str
    gamma_s: float
    penalty: str  # "l0", "group_lasso" or "none"
    lambda0: float  # penalty weight actually applied (already divided by p)
    temperature: float | None  # None: constant lambda0
    lambda2: float
    learning_rate: float
    solver: str  # "sgd" or "adam"
    batch_size: int
    max_epochs: int
    early_stopping: bool
    n_iter_no_change: int
    feature_budget: int | None
    dtype: type
    engine: tuple = kernels.CORE  # (forward, backward); tests/reference_skinny.py has the numpy pair


@dataclass
class TrainResult:
    W: np.ndarray
    b: np.ndarray
    O: np.ndarray
    history: dict
    best_epoch: int | None  # 0-based epoch of the returned snapshot (None: the last state)
    n_epochs: int


def penalty_at(cfg, t):
    if cfg.temperature is None:
        return cfg.lambda0
    return kernels.dsl_lambda0(t, cfg.lambda0, cfg.temperature)


def apply_prox(cfg, W, t):
    """The prox of the step: returns the mask of nonzero groups."""
    lam = penalty_at(cfg, t)
    if cfg.penalty == "l0":
        return kernels.hard_threshold(W, math.sqrt(2.0 * cfg.learning_rate * lam))
    if cfg.penalty == "group_lasso":
        return kernels.soft_threshold(W, cfg.learning_rate * lam / math.sqrt(W.shape[1]))
    return kernels.group_sq_norms(W) > 0


class _Adam:
    def __init__(self, params):
        self.m = [np.zeros_like(a) for a in params]
        self.v = [np.zeros_like(a) for a in params]

    def step(self, params, grads, lr, t):
        c1 = 1.0 - ADAM_BETA1**t
        c2 = 1.0 - ADAM_BETA2**t
        for a, g, m, v in zip(params, grads, self.m, self.v):
            m *= ADAM_BETA1
            m += (1.0 - ADAM_BETA1) * g
            v *= ADAM_BETA2
            v += (1.0 - ADAM_BETA2) * g * g
            a -= (lr / c1) * m / (np.sqrt(v / c2) + ADAM_EPS)


def predict_raw(X, W, b, O, depth, activation, gamma_s, active=None, chunk=4096, engine=kernels.CORE):
    """Ensemble outputs (n, c), reading only the columns in ``active`` (all if None)."""
    if active is not None:
        X, W = X[:, active], W[active]
    forward = engine[0]
    out = np.empty((X.shape[0], O.shape[2]), dtype=O.dtype)
    for start in range(0, X.shape[0], chunk):
        out[start : start + chunk] = forward(X[start : start + chunk], W, b, O, depth, activation, gamma_s)[0]
    return out


def train(cfg, X, target, loss, n_outputs, rng, validation=None, progress=None):
    """Fit from Glorot initialisation.

    ``loss(F, target_batch) -> (value, dL/dF)``. ``validation = (X_val, scorer)`` with
    ``scorer(F_val) -> (val_loss, val_score)`` (higher score is better): the result is then the
    epoch snapshot with the best validation score among epochs with at most ``feature_budget``
    selected features, and early stopping counts only epochs within that budget. ``progress``
    (a :class:`~pyinterp._progress.Progress`) hears of each epoch.
    """
    n, p = X.shape
    W, b, O = kernels.glorot_init(rng, p, cfg.n_trees, cfg.depth, n_outputs, cfg.dtype)
    ridge = kernels.ridge_scale(cfg.lambda2, W.shape[1])
    adam = _Adam((W, b, O)) if cfg.solver == "adam" else None
    lr = cfg.learning_rate
    forward, backward = cfg.engine
    active = np.ones(p, dtype=bool)
    hist = {key: [] for key in ("loss", "val_loss", "val_score", "n_selected", "lambda0")}
    best = None  # (score, epoch, active indices, W rows, b, O)
    since_best = 0
    t = 0
    for epoch in range(cfg.max_epochs):
        order = rng.permutation(n)
        total = 0.0
        for start in range(0, n, cfg.batch_size):
            rows = order[start : start + cfg.batch_size]
            Xb = X[rows]
            t += 1
            if active.all():
                F, cache = forward(Xb, W, b, O, cfg.depth, cfg.activation, cfg.gamma_s)
            else:
                F, cache = forward(Xb[:, active], W[active], b, O, cfg.depth, cfg.activation, cfg.gamma_s)
            value, G = loss(F, target[rows])
            total += value * len(rows)
            dW, db, dO = backward(Xb, G, cache, O, cfg.depth)
            if adam is None:
                O -= lr * dO
                b -= lr * db
                # W - lr (dW + ridge W) in place: W is the largest array (p x m*I)
                if ridge:
                    W *= 1.0 - lr * ridge
                dW *= lr
                W -= dW
            else:
                if ridge:
                    dW += ridge * W
                adam.step((W, b, O), (dW, db, dO), lr, t)
            active = apply_prox(cfg, W, t)
        mean_loss = total / n
        hist["loss"].append(mean_loss)
        hist["n_selected"].append(int(active.sum()))
        hist["lambda0"].append(penalty_at(cfg, t))
        if progress is not None:
            progress.update()
        if not math.isfinite(mean_loss) or not np.all(np.isfinite(O)):
            if best is None:
                scale = float(np.max(np.abs(X)))
                raise FloatingPointError(
                    f"training diverged at epoch {epoch} (non-finite loss); standardise X's columns (the "
                    f"largest |x| is {scale:.3g}; sklearn.preprocessing.StandardScaler) or lower learning_rate"
                )
            hist["val_loss"].append(math.nan)
            hist["val_score"].append(math.nan)
            break
        if validation is None:
            hist["val_loss"].append(math.nan)
            hist["val_score"].append(math.nan)
            continue
        X_val, scorer = validation
        F_val = predict_raw(X_val, W, b, O, cfg.depth, cfg.activation, cfg.gamma_s, active, engine=cfg.engine)
        val_loss, score = scorer(F_val)
        hist["val_loss"].append(val_loss)
        hist["val_score"].append(score)
        if not math.isfinite(score) or (cfg.feature_budget is not None and active.sum() > cfg.feature_budget):
            continue
        if best is None or score > best[0]:
            idx = np.flatnonzero(active)
            best = (score, epoch, idx, W[idx].copy(), b.copy(), O.copy())
            since_best = 0
        else:
            since_best += 1
            if cfg.early_stopping and since_best >= cfg.n_iter_no_change:
                break
    history = {key: np.asarray(val) for key, val in hist.items()}
    if best is None:
        return TrainResult(W, b, O, history, None, len(hist["loss"]))
    _, epoch, idx, rows, b, O = best
    W = np.zeros_like(W)
    W[idx] = rows
    return TrainResult(W, b, O, history, epoch, len(hist["loss"]))

