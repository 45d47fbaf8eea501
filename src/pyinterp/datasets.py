"""Simulators with known signal."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln
from sklearn.utils import check_random_state

from ._validation import INT32_MAX, check_array, check_int, check_real

__all__ = ["make_boolean_response", "make_correlated_linear", "make_lss"]


def make_lss(n_samples=1000, n_features=20, n_interactions=2, order=2, snr=5.0, region=0.5, random_state=None):
    """Locally spiky sparse (LSS) regression data (Behr et al., paper 001 section 5.1, eq. 12).

    X is uniform on [0, 1]^p and ``y = sum_j prod_{k in S_j} 1(X_k < tau) + noise`` over
    ``n_interactions`` disjoint blocks S_j of ``order`` consecutive features (S_1 = {0..L-1}, ...).
    tau = (1 - (1 - region)^(1/K))^(1/L) puts about ``region`` of the rows in the union of the
    rule regions. The noise is Gaussian with variance var(signal) / snr (empirical variance).

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows n, at least 2.
    n_features : int, default=20
        Number of columns p, at least 1. The columns after the first K L carry no signal.
    n_interactions : int, default=2
        Number K of basic interactions (blocks), at least 1.
    order : int, default=2
        Order L, the number of features in each block, at least 1. K L must not exceed p.
    snr : float, default=5.0
        Signal-to-noise ratio var(signal) / var(noise), > 0.
    region : float, default=0.5
        Expected fraction of the rows in the union of the rule regions, in (0, 1).
    random_state : int, RandomState instance or None, default=None
        Draws X, then the noise (``check_random_state``: an int k and ``RandomState(k)`` give the
        same data).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
        The uniform features.
    y : ndarray of shape (n_samples,), float64
        The response: the number of rule regions a row lies in, plus the noise.
    interactions : list of tuple
        The K basic signed interactions, one tuple of (feature, sign) pairs per block, each with
        sign -1 (the rule is ``X_k < tau``), e.g. ``[((0, -1), (1, -1)), ((2, -1), (3, -1))]``.

    Raises
    ------
    ValueError
        If ``n_interactions * order`` exceeds ``n_features``, an argument is out of its range (a
        non-integer count or a non-finite ``snr`` or ``region`` is a TypeError), or every row lies
        in the same number of rule regions (y would hold neither signal nor noise).

    See Also
    --------
    pyinterp.interactions.LSSFind : Recovers the basic signed interactions of LSS data.
    pyinterp.metrics.strict_score : Scores the recovered interactions against ``interactions``.

    Notes
    -----
    The model (12) of section 5.1 of Behr, Wang, Li and Yu, "Provable Boolean interaction recovery
    from tree ensemble obtained via random forests" (paper 001), with every inequality ``<``, as the
    paper assumes without loss of generality. Under uniform X each block's region holds with
    probability tau^L = 1 - (1 - region)^(1/K), and the K blocks are independent, so the union holds
    with probability ``region`` exactly.

    Examples
    --------
    >>> from pyinterp.datasets import make_lss
    >>> X, y, interactions = make_lss(n_samples=200, n_features=10, random_state=0)
    >>> X.shape, y.shape
    ((200, 10), (200,))
    >>> interactions
    [((0, -1), (1, -1)), ((2, -1), (3, -1))]
    """
    n = check_int("n_samples", n_samples, 2, INT32_MAX)
    p = check_int("n_features", n_features, 1, INT32_MAX)
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
    if signal.var() == 0:  # noise of variance var(signal) / snr would be none: y without signal or noise
        raise ValueError(f"all {n} rows lie in {int(signal[0])} rule regions, so y has no signal (region={region} "
                         "expects that share of rows in them): raise n_samples, or bring region nearer 0.5")
    sigma = np.sqrt(signal.var() / snr)
    y = signal + sigma * rng.standard_normal(n)
    interactions = [tuple((j * order + i, -1) for i in range(order)) for j in range(k)]
    return X, y, interactions


# rule -> (regions as ((slot, sign), ...) with slot i standing for X_{i+1}, default beta)
_RULES = {
    "and": ((((0, 1), (1, 1), (2, 1), (3, 1)),), 0.8),
    "or": ((((0, -1), (1, -1), (2, 1), (3, 1)), ((0, 1), (1, 1), (2, -1), (3, -1))), 0.8),
    "add": ((((0, 1), (1, 1), (2, 1)), ((3, 1), (4, 1), (5, 1))), 0.4),
}


def make_boolean_response(X, rule="and", features=None, alpha=0.1**0.25, beta=None, random_state=None):
    """Binary response from an enhancer-style Boolean rule on the columns of X (thesis 000 section 10.4).

    With q_k(a) the a-quantile of column k (``np.quantile``), the signed feature (k, +1) holds where
    X_k > q_k(1 - alpha) and (k, -1) where X_k <= q_k(alpha). Y ~ Bernoulli(P(Y = 1 | X)) with

    - "and" (eq. 10.2): P = beta 1{X1+, X2+, X3+, X4+}
    - "or" (eq. 10.3): P = beta 1{X1-, X2-, X3+, X4+  or  X1+, X2+, X3-, X4-}
    - "add" (eq. 10.4): P = beta (1{X1+, X2+, X3+} + 1{X4+, X5+, X6+})

    where X1, X2, ... are the columns ``features``. On independent continuous columns each signed
    feature holds for a fraction alpha of the rows, so the default alpha = 0.1^(1/4) puts about 10% of
    the rows in a 4-feature region (the class balance of the enhancer data). The thesis prints ">=" for
    the '+' thresholds; the strict ">" of its code is used here, which matters only for ties. As
    alpha > 1/2, the '-' and '+' ranges of a column overlap, so both "or" regions can hold at once.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite feature matrix, e.g. a real data set. It needs at least 4 columns (6 for "add").
    rule : {"and", "or", "add"}, default="and"
        The Boolean rule: one region of 4 features ("and"), two regions of the same 4 features with
        opposite signs ("or"), or the sum of two regions of 3 features each ("add").
    features : sequence of int or None, default=None
        The distinct columns that play X1..X4 (X1..X6 for "add"). None draws them at random without
        replacement.
    alpha : float in (0, 1), default=0.1**0.25
        Quantile level of the thresholds: the fraction of the rows on which each signed feature holds.
    beta : float in (0, 1] or None, default=None
        P(Y = 1) inside a rule region. None uses the thesis text: 0.8 for "and" and "or", 0.4 for
        "add" (the thesis code uses 0.4 for all three). For "add", beta <= 0.5 so that P <= 1.
    random_state : int, RandomState instance or None, default=None
        Draws ``features`` (when None), then y.

    Returns
    -------
    y : ndarray of shape (n_samples,), int64 in {0, 1}
        The response.
    interactions : list of tuple
        One true signed interaction ((column, sign), ...) per rule region, with 0-based columns, each
        sorted by column.

    Raises
    ------
    ValueError
        If ``rule`` is unknown, X has too few columns, ``features`` has the wrong length, repeats a
        column or names one outside X, or ``alpha`` or ``beta`` is out of its range.
    TypeError
        If ``features`` is not a sequence of integers.

    Notes
    -----
    The enhancer simulations of Yu Wang's PhD thesis (University of California, Berkeley, 2020;
    thesis 000), section 10.4, equations (10.2)-(10.4).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.datasets import make_boolean_response
    >>> X = np.random.RandomState(0).uniform(size=(500, 8))
    >>> y, interactions = make_boolean_response(X, rule="and", features=[0, 1, 2, 3], random_state=0)
    >>> y.shape, y.dtype.name
    ((500,), 'int64')
    >>> interactions
    [((0, 1), (1, 1), (2, 1), (3, 1))]
    >>> print(round(float(y.mean()), 3))  # beta = 0.8 on about 10% of the rows
    0.088
    """
    X = check_array(X, dtype=np.float64, input_name="X")
    n, p = X.shape
    if not isinstance(rule, str) or rule not in _RULES:
        raise ValueError(f"rule must be 'and', 'or' or 'add', got {rule!r}")
    regions, default_beta = _RULES[rule]
    n_used = 1 + max(slot for region in regions for slot, _ in region)
    if p < n_used:
        raise ValueError(f"rule {rule!r} uses {n_used} columns, X has {p}")
    alpha = check_real("alpha", alpha, 0.0, 1.0, low_open=True)
    if alpha == 1.0:
        raise ValueError("alpha must be below 1")
    beta = default_beta if beta is None else check_real("beta", beta, 0.0, 1.0, low_open=True)
    if rule == "add" and beta > 0.5:
        raise ValueError(f"beta must be <= 0.5 for rule 'add' (P = 2 beta where both regions hold), got {beta}")
    rng = check_random_state(random_state)
    if features is None:
        cols = [int(k) for k in rng.choice(p, n_used, replace=False)]
    else:
        try:
            cols = list(features)
        except TypeError:
            raise TypeError(f"features must be a sequence of column indices, got {features!r}") from None
        if len(cols) != n_used:
            raise ValueError(f"rule {rule!r} needs {n_used} features, got {len(cols)}")
        cols = [check_int(f"features[{i}]", k, 0, p - 1) for i, k in enumerate(cols)]
        if len(set(cols)) != n_used:
            raise ValueError(f"features must be distinct, got {cols}")

    Z = X[:, cols]
    holds = {1: Z > np.quantile(Z, 1.0 - alpha, axis=0), -1: Z <= np.quantile(Z, alpha, axis=0)}
    fired = [np.all([holds[sign][:, slot] for slot, sign in region], axis=0) for region in regions]
    prob = beta * (np.sum(fired, axis=0) if rule == "add" else np.any(fired, axis=0))
    y = (rng.uniform(size=n) < prob).astype(np.int64)
    interactions = [tuple(sorted((cols[slot], sign) for slot, sign in region)) for region in regions]
    return y, interactions


def make_correlated_linear(n_samples=200, n_features=256, correlation=0.5, n_informative=8, noise=0.5,
                           random_state=None):
    """Sparse linear regression with Toeplitz-correlated Gaussian features (paper 003, Table 1).

    Rows of X are N(0, Sigma) with ``Sigma_ij = correlation^|i-j|`` (drawn as the stationary AR(1)
    recursion x_j = rho x_{j-1} + sqrt(1 - rho^2) z_j, which has exactly that covariance);
    ``y = X beta + noise * N(0, 1)`` with ``n_informative`` unit coefficients at the equi-spaced
    positions ``p // (2k), p // (2k) + p // k, ...`` (p = 256, k = 8: 16, 48, ..., 240, as the
    authors' code).

    Parameters
    ----------
    n_samples : int, default=200
        Number of rows n, at least 1.
    n_features : int, default=256
        Number of columns p, at least 1.
    correlation : float in (-1, 1), default=0.5
        rho, the correlation of neighbouring columns.
    n_informative : int, default=8
        Number k of nonzero coefficients, in [1, n_features].
    noise : float, default=0.5
        Standard deviation of the Gaussian noise, >= 0.
    random_state : int, RandomState instance or None, default=None
        Draws X, then the noise.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
        The correlated Gaussian features.
    y : ndarray of shape (n_samples,), float64
        The response.
    support : ndarray of shape (n_informative,), int
        The nonzero positions of beta, increasing.

    Raises
    ------
    ValueError
        If an argument is out of its range.

    See Also
    --------
    pyinterp.skinny.SkinnyTreesRegressor : The feature selector paper 003 evaluates on these data.

    Notes
    -----
    The synthetic regression data of Table 1 of Ibrahim, Behdin and Mazumder, "End-to-end feature
    selection approach for learning Skinny Trees" (AISTATS 2024; paper 003).

    Examples
    --------
    >>> from pyinterp.datasets import make_correlated_linear
    >>> X, y, support = make_correlated_linear(n_samples=50, n_features=32, n_informative=4, random_state=0)
    >>> X.shape, y.shape
    ((50, 32), (50,))
    >>> support.tolist()
    [4, 12, 20, 28]
    """
    n = check_int("n_samples", n_samples, 1, INT32_MAX)
    p = check_int("n_features", n_features, 1, INT32_MAX)
    k = check_int("n_informative", n_informative, 1, p)
    rho = check_real("correlation", correlation, -1.0, 1.0, low_open=True)
    if rho >= 1.0:
        raise ValueError("correlation must be below 1")
    sd = check_real("noise", noise, 0.0)
    rng = check_random_state(random_state)
    Z = rng.standard_normal((n, p))
    X = np.empty_like(Z)
    X[:, 0] = Z[:, 0]
    scale = np.sqrt(1.0 - rho * rho)
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + scale * Z[:, j]
    support = np.arange(p // (2 * k), p, max(1, p // k))[:k]
    y = X[:, support].sum(axis=1) + sd * rng.standard_normal(n)
    return X, y, support


# --- Dictionary learning (thesis 000, chapters 3 and 5) ---------------------------------------------
# Signals are rows: X = coefficients @ D^T + noise, D with the atoms as unit-norm columns.


__all__ += ["make_collinear_dictionary", "make_dictionary_signals", "make_gaussian_dictionary",
            "make_sparse_coefficients"]

_COEFFICIENT_MODELS = ("sg", "bg", "sl", "abs_sg")


def make_collinear_dictionary(n_components, coherence):
    """The constant-collinearity dictionary ((1 - mu) I + mu 11^T)^{1/2} (thesis 000, Corollary 4.1.1).

    Its atoms have unit norm and pairwise cosine ``coherence`` = mu in [0, 1). The symmetric square
    root is exact: sqrt(1 - mu) I + (sqrt(1 + (p - 1) mu) - sqrt(1 - mu)) / p 11^T.

    Parameters
    ----------
    n_components : int
        Number p of atoms (and of features), at least 1.
    coherence : float in [0, 1)
        mu, the cosine between any two atoms. 0 gives the identity.

    Returns
    -------
    D : ndarray of shape (n_components, n_components), float64
        The symmetric dictionary, atoms as columns.

    Raises
    ------
    ValueError
        If ``coherence`` is outside [0, 1) (1 would make the dictionary singular).

    See Also
    --------
    make_dictionary_signals : Signals from a dictionary and coefficients.
    pyinterp.dictionary.DLBCD : Learns such a dictionary back from its signals.

    Notes
    -----
    Corollary 4.1.1 of Yu Wang's PhD thesis (University of California, Berkeley, 2020; thesis 000)
    ties the sharpness of this dictionary to mu, the sparsity s of the coefficients and p.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.datasets import make_collinear_dictionary
    >>> D = make_collinear_dictionary(3, 0.5)
    >>> np.round(D.T @ D, 3).tolist()  # unit-norm atoms, pairwise cosine 0.5
    [[1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 1.0]]
    """
    p = check_int("n_components", n_components, 1, INT32_MAX)
    mu = check_real("coherence", coherence, 0.0, 1.0)
    if mu == 1.0:
        raise ValueError("coherence must be below 1 (the dictionary would be singular)")
    a, b = np.sqrt(1.0 - mu), np.sqrt(1.0 + (p - 1) * mu)
    return a * np.eye(p) + (b - a) / p * np.ones((p, p))


def make_gaussian_dictionary(n_components, random_state=None):
    """A random Gaussian dictionary with columns scaled to unit norm (the thesis' Fig. 5.10 setting).

    The entries are drawn N(0, 1), then each column (atom) is divided by its Euclidean norm.

    Parameters
    ----------
    n_components : int
        Number p of atoms (and of features), at least 1.
    random_state : int, RandomState instance or None, default=None
        Draws the entries.

    Returns
    -------
    D : ndarray of shape (n_components, n_components), float64
        The dictionary, atoms as unit-norm columns.

    See Also
    --------
    make_collinear_dictionary : A deterministic dictionary of given coherence.

    Notes
    -----
    The reference dictionaries of Fig. 5.10 of Yu Wang's PhD thesis (University of California,
    Berkeley, 2020; thesis 000).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.datasets import make_gaussian_dictionary
    >>> D = make_gaussian_dictionary(5, random_state=0)
    >>> D.shape
    (5, 5)
    >>> np.round(np.linalg.norm(D, axis=0), 6).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0]
    """
    p = check_int("n_components", n_components, 1, INT32_MAX)
    D = check_random_state(random_state).standard_normal((p, p))
    return D / np.linalg.norm(D, axis=0)


def make_sparse_coefficients(n_samples, n_components, model="sg", sparsity=None, probability=None,
                             random_state=None):
    """Reference coefficients, one row per signal (thesis 000, section 3.2).

    - "sg": sparse Gaussian SG(s), a uniformly random support of size s, N(0, 1) values;
    - "sl": sparse Laplacian SL(s), the same supports with standard Laplace values (density e^{-``|z|``}/2);
    - "abs_sg": non-negative sparse Gaussian ``|SG(s)|``;
    - "bg": Bernoulli Gaussian BG(probability), each entry nonzero with that probability, N(0, 1) values.

    ``sparsity`` (s in [1, n_components]) is needed by the exact sparse models, ``probability`` in
    (0, 1] by "bg".

    Parameters
    ----------
    n_samples : int
        Number n of signals (rows), at least 1.
    n_components : int
        Number p of atoms (columns), at least 1.
    model : {"sg", "bg", "sl", "abs_sg"}, default="sg"
        The coefficient model, as listed above.
    sparsity : int or None, default=None
        s, the number of nonzero entries in each row for "sg", "sl" and "abs_sg" (required there,
        ignored by "bg").
    probability : float in (0, 1] or None, default=None
        The chance that an entry is nonzero for "bg" (required there, ignored by the other models).
    random_state : int, RandomState instance or None, default=None
        Draws the supports and values.

    Returns
    -------
    coefficients : ndarray of shape (n_samples, n_components), float64
        One coefficient vector alpha_i per row.

    Raises
    ------
    ValueError
        If ``model`` is unknown, the parameter it needs is None, or an argument is out of its range.

    See Also
    --------
    make_dictionary_signals : Turns the coefficients into signals.

    Notes
    -----
    The coefficient models of section 3.2 of Yu Wang's PhD thesis (University of California,
    Berkeley, 2020; thesis 000).

    Examples
    --------
    >>> from pyinterp.datasets import make_sparse_coefficients
    >>> A = make_sparse_coefficients(6, 5, model="sg", sparsity=2, random_state=0)
    >>> A.shape
    (6, 5)
    >>> (A != 0).sum(axis=1).tolist()
    [2, 2, 2, 2, 2, 2]
    >>> B = make_sparse_coefficients(100, 5, model="bg", probability=0.3, random_state=0)
    >>> print(round(float((B != 0).mean()), 3))
    0.312
    """
    n = check_int("n_samples", n_samples, 1, INT32_MAX)
    p = check_int("n_components", n_components, 1, INT32_MAX)
    if not isinstance(model, str) or model not in _COEFFICIENT_MODELS:
        raise ValueError(f"model must be one of {_COEFFICIENT_MODELS}, got {model!r}")
    rng = check_random_state(random_state)
    if model == "bg":
        if probability is None:
            raise ValueError("model 'bg' needs probability")
        prob = check_real("probability", probability, 0.0, 1.0, low_open=True)
        return rng.standard_normal((n, p)) * (rng.uniform(size=(n, p)) < prob)
    if sparsity is None:
        raise ValueError(f"model {model!r} needs sparsity")
    s = check_int("sparsity", sparsity, 1, p)
    support = np.argsort(rng.uniform(size=(n, p)), axis=1)[:, :s]
    values = rng.laplace(size=(n, s)) if model == "sl" else rng.standard_normal((n, s))
    if model == "abs_sg":
        values = np.abs(values)
    coef = np.zeros((n, p))
    np.put_along_axis(coef, support, values, axis=1)
    return coef


def make_dictionary_signals(dictionary, coefficients, snr=None, random_state=None):
    """Signals x_i = D alpha_i + eps_i as the rows of X (n_samples x p).

    With ``snr`` the noise is N(0, sigma^2 I) with sigma set so that E||D alpha|| / E||eps|| = snr,
    the thesis' definition (section 5.3, SNR 100 there); E||D alpha|| is the sample mean and E||eps||
    the exact mean of a chi distribution. None adds no noise.

    Parameters
    ----------
    dictionary : array-like of shape (p, p)
        The square dictionary D, atoms as columns.
    coefficients : array-like of shape (n_samples, p)
        One coefficient vector alpha_i per row, e.g. from :func:`make_sparse_coefficients`.
    snr : float > 0 or None, default=None
        The signal-to-noise ratio E||D alpha|| / E||eps||. None: noiseless signals.
    random_state : int, RandomState instance or None, default=None
        Draws the noise (unused without ``snr``).

    Returns
    -------
    X : ndarray of shape (n_samples, p), float64
        The signals ``coefficients @ dictionary.T`` plus the noise.

    Raises
    ------
    ValueError
        If the dictionary is not square, the coefficients do not have p columns, or ``snr`` <= 0.

    See Also
    --------
    pyinterp.dictionary.DLBCD : Learns the dictionary back from X.

    Notes
    -----
    The signal model and SNR of section 5.3 of Yu Wang's PhD thesis (University of California,
    Berkeley, 2020; thesis 000).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
    >>> D = make_collinear_dictionary(4, 0.5)
    >>> A = make_sparse_coefficients(10, 4, sparsity=2, random_state=0)
    >>> X = make_dictionary_signals(D, A)
    >>> X.shape, bool(np.allclose(X, A @ D.T))
    ((10, 4), True)
    >>> noisy = make_dictionary_signals(D, A, snr=100, random_state=0)
    >>> bool(np.allclose(noisy, X, atol=0.1))
    True
    """
    D = check_array(dictionary, dtype=np.float64, input_name="dictionary")
    A = check_array(coefficients, dtype=np.float64, input_name="coefficients")
    if D.shape[0] != D.shape[1] or A.shape[1] != D.shape[1]:
        raise ValueError(f"dictionary must be p x p and coefficients n x p, got {D.shape} and {A.shape}")
    X = A @ D.T
    if snr is None:
        return X
    snr = check_real("snr", snr, 0.0, low_open=True)
    p = D.shape[0]
    chi_mean = np.sqrt(2.0) * np.exp(gammaln((p + 1) / 2.0) - gammaln(p / 2.0))
    sigma = np.linalg.norm(X, axis=1).mean() / (snr * chi_mean)
    return X + sigma * check_random_state(random_state).standard_normal(X.shape)
