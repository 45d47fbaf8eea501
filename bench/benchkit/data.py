"""The data sets bench measures on: pyinterp.datasets generators at bench's settings, the few
synthetic problems the package has no generator for, and the real sets of the shared folder
(benchkit.paths.SHARED_DATA: $PYINTERP_SHARED/data, by default shared/data beside the checkout)."""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

from pyinterp.datasets import make_dictionary_signals, make_gaussian_dictionary, make_lss, make_sparse_coefficients

from .paths import SHARED_DATA, absent

# Paper 001's Fig. 2 grid shape (LSSFind / siRF reproductions and their diagnosis).
FIG2_P, FIG2_N = 20, 1000


def two_rules(n, p, seed=0):
    """Regression on X ~ U[0,1]^p: y = 1(x0 < .5) 1(x1 < .5) + 1(x2 < .5) 1(x3 < .5) + N(0, 0.2^2)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, p))
    y = ((X[:, 0] < 0.5) & (X[:, 1] < 0.5)) + ((X[:, 2] < 0.5) & (X[:, 3] < 0.5)) + 0.2 * rng.randn(n)
    return X, y.astype(np.float64)


def write_snp(folder, n=5000, p=100_000, seed=0, n_test=1000, missing=0.05):
    """Genotypes at Hardy-Weinberg frequencies (minor allele frequency 0.05-0.5) for n + n_test
    rows, as int8 in snp.npy; y from three SNPs, one pair interacting, plus noise, in snp_y.npy.
    Also, unless missing is None, the float32 version with that share of calls missing (NaN) in
    snp_nan.npy (without it the genotypes drawn differ). Written in blocks of 2,000 columns."""
    rng = np.random.default_rng(seed)
    rows = n + n_test
    X = np.lib.format.open_memmap(folder / "snp.npy", mode="w+", dtype=np.int8, shape=(rows, p))
    if missing is not None:
        nan = np.lib.format.open_memmap(folder / "snp_nan.npy", mode="w+", dtype=np.float32, shape=(rows, p))
    for j in range(0, p, 2000):
        block = rng.binomial(2, rng.uniform(0.05, 0.5, size=min(2000, p - j)), size=(rows, min(2000, p - j)))
        X[:, j:j + block.shape[1]] = block
        if missing is not None:
            nan[:, j:j + block.shape[1]] = np.where(rng.random(block.shape) < missing, np.nan, block)
    y = 0.8 * X[:, 0] + 1.5 * (X[:, 1] > 0) * (X[:, 2] > 0) + rng.normal(0, 1, rows)
    np.save(folder / "snp_y.npy", y)


def counts_matrix(rng, n, p, density):
    """CSC float32 counts: per column, density * n rows drawn without replacement holding Poisson
    counts (>= 1)."""
    per_column = rng.binomial(n, density, size=p)
    indptr = np.concatenate([[0], np.cumsum(per_column)]).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in per_column]).astype(np.int32)
    data = (rng.poisson(2.0, size=indptr[-1]) + 1).astype(np.float32)
    return sp.csc_matrix((data, indices, indptr), shape=(n, p))


def write_cells(folder, name, n, p, density, seed=0, n_test=1000):
    """Single-cell counts (counts_matrix) of n + n_test cells as CSR float32 in <name>.npz; 5 cell
    types from the counts of six columns (the first of each pair and a pair's interaction) in
    <name>_y.npy."""
    rng = np.random.default_rng(seed)
    rows = n + n_test
    X = counts_matrix(rng, rows, p, density)
    cols = X[:, :6].toarray()
    score = cols[:, 0] + 2.0 * (cols[:, 1] > 0) * (cols[:, 2] > 0) - cols[:, 3] + cols[:, 4] * (cols[:, 5] > 0)
    y = np.digitize(score + rng.normal(0, 0.5, rows), np.quantile(score, [0.2, 0.4, 0.6, 0.8]))
    sp.save_npz(folder / f"{name}.npz", X.tocsr(), compressed=False)
    np.save(folder / f"{name}_y.npy", y)


def oob_regression(n, p, seed=0):
    """The MDI-oob timing problem: y = x0 + 2 1(x1 > .5) 1(x2 > .5) + N(0, 0.5^2), X ~ U[0,1]^p."""
    rng = np.random.RandomState(seed)
    X = rng.rand(n, p)
    return X, X[:, 0] + 2 * (X[:, 1] > 0.5) * (X[:, 2] > 0.5) + 0.5 * rng.randn(n)


def lss_orders(n, p, orders, snr, seed):
    """LSS regression with one rule per entry of ``orders`` (make_lss's form, rules of mixed
    order): blocks of consecutive features, rule j = all its features below tau_j with
    tau_j = (1 - (1/2)^(1/K))^(1/L_j), so about half the rows fall in the union of the K rules;
    Gaussian noise at var(signal) / snr. Returns (X, y, true interactions as (feature, -1) tuples)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, p))
    q = 1.0 - 0.5 ** (1.0 / len(orders))
    signal, true, start = np.zeros(n), [], 0
    for order in orders:
        block = range(start, start + order)
        signal += (X[:, list(block)] < q ** (1.0 / order)).all(axis=1)
        true.append(tuple((j, -1) for j in block))
        start += order
    y = signal + np.sqrt(signal.var() / snr) * rng.standard_normal(n)
    return X, y, true


def lss_fig2(K, L, snr, seed):
    """One replicate of paper 001's Fig. 2 grid: (X, y, true interactions)."""
    return make_lss(FIG2_N, FIG2_P, K, L, snr, region=0.5, random_state=seed)


def gaussian_dictionary_problem(p, n, s, seed, snr=100):
    """(D*, X): a random Gaussian dictionary (seed), SG(s) coefficients (seed + 1) and n signals at
    the given SNR (seed + 2) -- the DL-BCD comparison, grid and large-p settings."""
    D = make_gaussian_dictionary(p, random_state=seed)
    A = make_sparse_coefficients(n, p, "sg", sparsity=s, random_state=seed + 1)
    return D, make_dictionary_signals(D, A, snr=snr, random_state=seed + 2)


def random_precision(m, edge_prob, weight, rng):
    """Erdos-Renyi Gaussian MRF precision: edges +-weight, diagonal shifted to a minimum eigenvalue 0.5."""
    upper = np.triu(rng.random((m, m)) < edge_prob, 1)
    theta = np.where(upper, rng.choice([-weight, weight], size=(m, m)), 0.0)
    theta = theta + theta.T
    return theta + np.eye(m) * (max(0.0, -np.linalg.eigvalsh(theta).min()) + 0.5)


def sample(theta, n, rng, truncate=None):
    """n rows of N(0, theta^-1), optionally by rejection to |x_u| <= truncate sd_u."""
    cov = np.linalg.inv(theta)
    if truncate is None:
        return rng.multivariate_normal(np.zeros(len(theta)), cov, size=n)
    box = truncate * np.sqrt(np.diag(cov))
    rows = []
    while sum(len(r) for r in rows) < n:
        draw = rng.multivariate_normal(np.zeros(len(theta)), cov, size=2 * n)
        rows.append(draw[np.all(np.abs(draw) <= box, axis=1)])
    return np.concatenate(rows)[:n]


def shared_npz(name):
    """The arrays of SHARED_DATA/<name>.npz, or None where that file is absent."""
    path = SHARED_DATA / f"{name}.npz"
    return np.load(path, allow_pickle=True) if path.exists() else None


def require_shared_npz(name):
    """shared_npz(name), or an exit that says which file is missing and how to point bench at it."""
    data = shared_npz(name)
    if data is None:
        sys.exit(absent(SHARED_DATA / f"{name}.npz"))
    return data


def standardised_splits(name, seeds, test_size):
    """Per seed 0..seeds-1, a stratified split of the shared set `name` standardised on its training
    rows: (X_train, X_test, y_train, y_test), X as float64."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    data = require_shared_npz(name)
    X, y = data["X"].astype(np.float64), data["y"]
    for seed in range(seeds):
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_size, stratify=y, random_state=seed)
        scaler = StandardScaler().fit(X_train)
        yield scaler.transform(X_train), scaler.transform(X_test), y_train, y_test
