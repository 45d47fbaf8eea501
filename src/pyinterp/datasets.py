"""Simulators with known signal."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ._validation import check_int, check_real

__all__ = ["make_lss"]


def make_lss(n_samples=1000, n_features=20, n_interactions=2, order=2, snr=5.0, region=0.5, random_state=None):
    """Locally spiky sparse (LSS) regression data (Behr et al., paper 001 section 5.1, eq. 12).

    X is uniform on [0, 1]^p and ``y = sum_j prod_{k in S_j} 1(X_k < tau) + noise`` over
    ``n_interactions`` disjoint blocks S_j of ``order`` consecutive features (S_1 = {0..L-1}, ...).
    tau = (1 - (1 - region)^(1/K))^(1/L) puts about ``region`` of the rows in the union of the
    rule regions. The noise is Gaussian with variance var(signal) / snr (empirical variance).

    Returns
    -------
    X : (n_samples, n_features) float64
    y : (n_samples,) float64
    interactions : list of tuples of (feature, sign) with sign -1 (the rule is ``X_k < tau``)
    """
    n = check_int("n_samples", n_samples, 2)
    p = check_int("n_features", n_features, 1)
    k = check_int("n_interactions", n_interactions, 1)
    order = check_int("order", order, 1)
    if k * order > p:
        raise ValueError(f"n_interactions * order ({k * order}) exceeds n_features ({p})")
    snr = check_real("snr", snr, 0.0, low_open=True)
    region = check_real("region", region, 0.0, 1.0, low_open=True)
    if region >= 1.0:
        raise ValueError("region must be below 1")
    rng = check_random_state(random_state)
    tau = (1.0 - (1.0 - region) ** (1.0 / k)) ** (1.0 / order)
    X = rng.uniform(size=(n, p))
    below = X[:, : k * order] < tau
    signal = below.reshape(n, k, order).all(axis=2).sum(axis=1).astype(np.float64)
    sigma = np.sqrt(signal.var() / snr)
    y = signal + sigma * rng.standard_normal(n)
    interactions = [tuple((j * order + i, -1) for i in range(order)) for j in range(k)]
    return X, y, interactions
