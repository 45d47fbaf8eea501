"""Skinny Trees speed: time per training epoch with the C++ tree recursion vs the plain numpy
reference kernels (tests/reference_skinny.py), both through pyinterp's own training loop (GEMMs in
BLAS, in-place update, prox), which takes the (forward, backward) pair as ``TrainConfig.engine``;
and inference of the compressed model (selected columns only) vs the dense model (every column).

Both sides run in this process, interleaved, single-threaded BLAS; ratios > 1 favour pyinterp's
default path. Usage: python bench/compare_skinny.py [--repeats 5]   (quick look: --repeats 1 --epochs 1)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from benchkit.peers import reference
from benchkit.timing import load
from threadpoolctl import threadpool_limits

from pyinterp.skinny import kernels, training

ref = reference("reference_skinny")

# (name, rows, p, trees, depth, classes (0: regression), batch, epochs timed)
TRAIN_CASES = [
    ("synthetic small", 160, 256, 10, 3, 0, 32, 100),
    ("synthetic large", 160, 256, 50, 5, 0, 16, 20),
    ("churn-like", 3200, 33, 15, 4, 2, 64, 5),
    ("mice-like", 691, 77, 50, 4, 8, 64, 10),
    ("madelon-like", 1664, 500, 20, 4, 2, 64, 3),
    ("arcene-like", 128, 10000, 50, 4, 2, 64, 3),
]


def make_data(rng, n, p, n_classes):
    X = rng.standard_normal((n, p)).astype(np.float32)
    if n_classes == 0:
        return X, (X[:, 0] + X[:, 1]).astype(np.float32), kernels.mse_loss, 1
    return X, rng.integers(0, n_classes, n), kernels.cross_entropy_loss, n_classes


def epoch_time(cfg, engine, X, y, loss, n_outputs, epochs):
    """Seconds per epoch of pyinterp's training loop with the given (forward, backward) pair."""
    cfg.max_epochs, cfg.engine = epochs, engine
    start = time.perf_counter()
    training.train(cfg, X, y, loss, n_outputs, np.random.default_rng(0))
    return (time.perf_counter() - start) / epochs


def bench_training(repeats, epochs_cap):
    print("## Time per epoch: C++ recursion vs numpy reference kernels (float32, lambda0 = 0: all groups stay)\n")
    print("| case | n_train | p | m | d | batch | numpy ms/epoch | pyinterp ms/epoch | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for name, n, p, m, d, n_classes, batch, epochs in TRAIN_CASES:
        X, y, loss, c = make_data(rng, n, p, n_classes)
        cfg = training.TrainConfig(
            n_trees=m, depth=d, activation="sigmoid", gamma_s=1.0, penalty="l0", lambda0=0.0, temperature=None,
            lambda2=0.01, learning_rate=0.01, solver="sgd", batch_size=batch, max_epochs=1, early_stopping=False,
            n_iter_no_change=1, feature_budget=None, dtype=np.float32,
        )
        epochs = min(epochs, epochs_cap or epochs)
        times = {"numpy": [], "core": []}
        for _ in range(repeats):
            times["numpy"].append(epoch_time(cfg, ref.ENGINE, X, y, loss, c, epochs))
            times["core"].append(epoch_time(cfg, kernels.CORE, X, y, loss, c, epochs))
        numpy_ms, core_ms = np.median(times["numpy"]) * 1e3, np.median(times["core"]) * 1e3
        print(f"| {name} | {n} | {p} | {m} | {d} | {batch} | {numpy_ms:.2f} | {core_ms:.2f} | {numpy_ms / core_ms:.2f} |")


def bench_inference(repeats):
    print("\n## Inference: compressed (selected columns only) vs dense model, 1000 rows, float64\n")
    print("| p | m | d | selected | dense ms | compressed ms | speed-up | max abs diff |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for p, m, d, k in [(10000, 50, 4, 2500), (10000, 50, 4, 500), (10000, 50, 4, 35), (500, 20, 4, 20)]:
        X = rng.standard_normal((1000, p))
        W, b, O = kernels.glorot_init(rng, p, m, d, 2, np.float64)
        W[rng.choice(p, p - k, replace=False)] = 0.0
        sel = np.flatnonzero(np.any(W != 0, axis=1))
        W_sel = np.ascontiguousarray(W[sel])
        dense_t, comp_t = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            dense = training.predict_raw(X, W, b, O, d, "sigmoid", 1.0)
            dense_t.append(time.perf_counter() - start)
            start = time.perf_counter()
            comp = training.predict_raw(X[:, sel], W_sel, b, O, d, "sigmoid", 1.0)
            comp_t.append(time.perf_counter() - start)
        td, tc = np.median(dense_t) * 1e3, np.median(comp_t) * 1e3
        diff = np.abs(dense - comp).max()
        print(f"| {p} | {m} | {d} | {k} | {td:.2f} | {tc:.2f} | {td / tc:.1f} | {diff:.1e} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=None, help="cap on the epochs timed per case")
    args = parser.parse_args()
    print(f"load average at start: {load():.2f}\n")
    with threadpool_limits(limits=1, user_api="blas"):
        bench_training(args.repeats, args.epochs)
        bench_inference(args.repeats)
    print(f"\nload average at end: {load():.2f}")


if __name__ == "__main__":
    main()
