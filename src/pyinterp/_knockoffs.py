"""Model-X knockoffs with a forest's importance as the feature statistic (pyinterp.significance).

Candès, Fan, Janson & Lv (2018): a knockoff copy X~ of X has the same distribution as X with any
feature swapped for its copy, and carries no information on y beyond X. A forest fitted on
[X, X~] scores each feature and its copy; W_j = importance(X_j) - importance(X~_j) is as likely
positive as negative for a feature without effect, so the count of large negative W estimates the
count of false discoveries among the large positive ones. The knockoff+ filter (Barber & Candès
2015) selects W_j >= T, T the smallest ``|W|`` with (offset + #{W <= -T}) / max(1, #{W >= T}) <= q;
with offset 1 the FDR is at most q in finite samples, for any n and p, when the knockoffs are
exact.

Gaussian knockoffs (second order) take X's mean and covariance Sigma (given, or X's sample
covariance; Ledoit-Wolf's, with a warning, when there are too few rows for it), an S-matrix
(``s_method``: "equicorrelated" in closed form; "mvr", "maxent", "sdp" from knockpy, MIT), and
draw X~ = X - (X - mu) Sigma^-1 S + Z L with L'L = 2S - S Sigma^-1 S. Each pair (X_j, X~_j) is
swapped at random before the fit and swapped back after, so the forest's column order (its
candidate draw, its tie-breaking) cannot favour either side.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
from sklearn.covariance import ledoit_wolf

from ._seeds import draw_seeds, python_rng, seeded_fit
from ._validation import column_names
from .importance import mdi_oob, permutation_oob

# knockpy's methods for the S-matrix; "equicorrelated" needs no package
S_METHODS = ("mvr", "maxent", "sdp", "equicorrelated")
# Gaussian knockoffs of a feature with this many values or fewer are not exchangeable with it
FEW_LEVELS = 3
# Gaussian knockoffs hold five p x p matrices and factor two (p^3): 4 GB and minutes at 10^4
MAX_GAUSSIAN_FEATURES = 10_000


class KnockoffTest:
    """A knockoff filter's statistics and selection.

    What :func:`~pyinterp.significance.knockoff_filter` returns; the statistics and q-values are
    computed from the two importances here.

    Parameters
    ----------
    importances : ndarray of shape (n_features,)
        The importance of each feature, from the forest fitted on [X, X~].
    knockoff_importances : ndarray of shape (n_features,)
        The importance of each feature's knockoff, from the same forest.
    feature_names : ndarray of shape (n_features,)
        The features' names.
    offset : {0, 1}
        1: knockoff+ (FDR control); 0: the knockoff filter (modified FDR control).
    knockoffs : ndarray of shape (n_samples, n_features)
        The knockoff copy of X the forest was fitted beside.

    Attributes
    ----------
    statistics : ndarray of shape (n_features,)
        W_j = importance of feature j minus that of its knockoff.
    importances, knockoff_importances : ndarray of shape (n_features,)
        The two importances W is the difference of.
    qvalues : ndarray of shape (n_features,)
        The smallest FDR level q at which the knockoff filter (with this ``offset``) selects the
        feature (inf where W_j <= 0): ``selected(q)`` is the features with q-value <= q.
    feature_names : ndarray of shape (n_features,)
        The names of X's columns (``x0``, ``x1``, ... when X has none).
    offset : int
        1: knockoff+ (FDR control); 0: the knockoff filter (modified FDR control).
    knockoffs : ndarray of shape (n_samples, n_features)
        The knockoff copy of X the forest was fitted beside.

    See Also
    --------
    pyinterp.significance.knockoff_filter : The filter that makes it.
    pyinterp.significance.knockoff_qvalues : The q-values of the statistics.
    pyinterp.significance.ImportanceTest : The p-values and BH q-values of importances.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.significance import knockoff_filter
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 50))
    >>> y = X[:, :10] @ np.full(10, 0.8) + rng.standard_normal(300)
    >>> test = knockoff_filter(RandomForestRegressor(n_estimators=100, max_features=0.3), X, y,
    ...                        s_method="equicorrelated", random_state=0)
    >>> test
    KnockoffTest(n_features=50, offset=1, selected at q <= 0.1: 10)
    >>> np.round(test.statistics[:3], 3).tolist()
    [0.17, 0.164, 0.07]
    >>> np.round(test.qvalues[:3], 3).tolist(), test.knockoffs.shape
    ([0.1, 0.1, 0.1], (300, 50))
    """

    def __init__(self, importances, knockoff_importances, feature_names, offset, knockoffs):
        self.importances = importances
        self.knockoff_importances = knockoff_importances
        self.statistics = importances - knockoff_importances
        self.feature_names = feature_names
        self.offset = offset
        self.knockoffs = knockoffs
        self.qvalues = knockoff_qvalues(self.statistics, offset)

    def threshold(self, fdr=0.1):
        """The least statistic the filter selects at level fdr.

        Parameters
        ----------
        fdr : float, default=0.1
            The false-discovery rate to control.

        Returns
        -------
        float
            The threshold T: the features with statistic W_j >= T are selected (inf when the filter
            selects nothing).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.significance import knockoff_filter
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((300, 50))
        >>> y = X[:, :10] @ np.full(10, 0.8) + rng.standard_normal(300)
        >>> test = knockoff_filter(RandomForestRegressor(n_estimators=100, max_features=0.3), X, y,
        ...                        s_method="equicorrelated", random_state=0)
        >>> round(test.threshold(0.1), 3)
        0.061
        >>> test.threshold(0.01)    # knockoff+ selects at least 1 / q features, or none
        inf
        """
        chosen = self.statistics[self.qvalues <= fdr]
        return float(chosen.min()) if chosen.size else np.inf

    def selected(self, fdr=0.1):
        """Indices of the features the filter selects at level fdr, by decreasing statistic.

        With ``offset=1`` (knockoff+) and exact knockoffs, the expected false-discovery proportion
        of the selection is at most fdr.

        Parameters
        ----------
        fdr : float, default=0.1
            The false-discovery rate to control.

        Returns
        -------
        ndarray of int
            The selected features' column indices, by decreasing statistic (ties in column order).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.significance import knockoff_filter
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((300, 50))
        >>> y = X[:, :10] @ np.full(10, 0.8) + rng.standard_normal(300)
        >>> test = knockoff_filter(RandomForestRegressor(n_estimators=100, max_features=0.3), X, y,
        ...                        s_method="equicorrelated", random_state=0)
        >>> test.selected(0.1).tolist()
        [4, 7, 5, 0, 3, 1, 8, 9, 2, 6]
        """
        chosen = np.flatnonzero(self.qvalues <= fdr)
        return chosen[np.argsort(-self.statistics[chosen], kind="stable")]

    def to_frame(self):
        """The filter as a pandas DataFrame, one row per feature by decreasing statistic.

        Needs pandas.

        Returns
        -------
        pandas.DataFrame
            Columns ``feature``, ``importance``, ``knockoff_importance``, ``statistic`` and
            ``qvalue``.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.significance import knockoff_filter
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((300, 50))
        >>> y = X[:, :10] @ np.full(10, 0.8) + rng.standard_normal(300)
        >>> test = knockoff_filter(RandomForestRegressor(n_estimators=100, max_features=0.3), X, y,
        ...                        s_method="equicorrelated", random_state=0)
        >>> test.to_frame().head(3).round(3)
          feature  importance  knockoff_importance  statistic  qvalue
        0      x4       0.501                0.001      0.500     0.1
        1      x7       0.275                0.017      0.258     0.1
        2      x5       0.207               -0.006      0.213     0.1
        """
        import pandas as pd

        order = np.argsort(-self.statistics, kind="stable")
        return pd.DataFrame({"feature": self.feature_names[order], "importance": self.importances[order],
                             "knockoff_importance": self.knockoff_importances[order],
                             "statistic": self.statistics[order], "qvalue": self.qvalues[order]})

    def __repr__(self):
        return (f"KnockoffTest(n_features={len(self.statistics)}, offset={self.offset}, "
                f"selected at q <= 0.1: {len(self.selected(0.1))})")


def best_s_method() -> str:
    """knockpy's MVR when knockpy imports, else the equicorrelated S-matrix, which needs nothing."""
    try:
        import knockpy  # noqa: F401
    except ImportError:
        return "equicorrelated"
    return "mvr"


def knockoff_qvalues(statistics, offset=1):
    """Each feature's knockoff q-value: the smallest level q whose knockoff filter selects it.

    The filter at level q selects W_j >= T(q), T(q) the smallest t among the ``|W_k|`` > 0 with
    fdp(t) = (offset + #{W_k <= -t}) / max(1, #{W_k >= t}) <= q. So feature j (W_j > 0) is
    selected at q exactly when some t <= W_j has fdp(t) <= q: its q-value is the least fdp(t) over
    those t (it may exceed 1); a feature with W_j <= 0 is never selected (q-value inf).

    Parameters
    ----------
    statistics : array-like of shape (n_features,)
        The knockoff statistics W (finite), large positive for features that beat their knockoff.
    offset : {0, 1}, default=1
        1: knockoff+, which controls the FDR; 0: the knockoff filter, which controls the modified
        FDR E[V / (R + 1 / q)].

    Returns
    -------
    ndarray of shape (n_features,)
        The q-values, in the order of ``statistics``; inf where W_j <= 0.

    Raises
    ------
    ValueError
        If ``statistics`` is not a 1-d array of finite numbers, or ``offset`` is not 0 or 1.

    See Also
    --------
    knockoff_filter : Knockoff statistics from a forest, with these q-values.
    bh_qvalues : Benjamini-Hochberg q-values of p-values.

    Notes
    -----
    The knockoff and knockoff+ filters are from Barber & Candès, "Controlling the false discovery
    rate via knockoffs", Annals of Statistics 43 (2015); with offset 1 and exact knockoffs the FDR
    of the selection is at most q in finite samples.

    Examples
    --------
    >>> from pyinterp.significance import knockoff_qvalues
    >>> W = [5.0, 4.0, 3.0, -2.5, 2.0, 1.0, -0.5]
    >>> knockoff_qvalues(W, offset=0)   # at t = 3: no W <= -3, three W >= 3; at t = 1: one of five
    array([0. , 0. , 0. , inf, 0.2, 0.2, inf])
    >>> knockoff_qvalues(W, offset=1)
    array([0.33333333, 0.33333333, 0.33333333,        inf, 0.4       ,
           0.4       ,        inf])
    """
    W = np.asarray(statistics, dtype=np.float64)
    if W.ndim != 1 or not np.all(np.isfinite(W)):
        raise ValueError("statistics must be a 1-d array of finite numbers")
    if offset not in (0, 1):
        raise ValueError(f"offset must be 0 or 1, got {offset!r}")
    q = np.full(W.size, np.inf)
    t = np.unique(np.abs(W[W != 0]))  # the candidate thresholds, increasing
    if t.size == 0:
        return q
    ordered = np.sort(W)
    negatives = np.searchsorted(ordered, -t, side="right")         # #{W <= -t}
    positives = W.size - np.searchsorted(ordered, t, side="left")  # #{W >= t}
    fdp = (offset + negatives) / np.maximum(positives, 1)
    least = np.minimum.accumulate(fdp)  # least fdp over the thresholds up to each t
    up = W > 0
    q[up] = least[np.searchsorted(t, W[up])]
    return q


def knockoff_test(forest, X, y, *, knockoffs, covariance, offset, importance, s_method, random_state, n_jobs):
    """The work of significance.knockoff_filter, its arguments checked."""
    p = X.shape[1] if hasattr(X, "shape") else len(np.asarray(X[0]))
    if isinstance(knockoffs, str) and p > MAX_GAUSSIAN_FEATURES:  # before X is read whole
        raise ValueError(f"Gaussian knockoffs of {p} features need {p} x {p} covariances ({5 * 8 * p**2 / 1e9:.0f} "
                         f"GB) and their p^3 factorizations; above {MAX_GAUSSIAN_FEATURES} features pass knockoffs "
                         "made by a sampler that scales (for genotypes, an HMM's) as knockoffs=, or screen the "
                         "features first")
    names = column_names(X)
    names = np.asarray([f"x{k}" for k in range(p)] if names is None else names, dtype=object)
    values = _complete(X, "X")
    constant = np.flatnonzero(np.ptp(values, axis=0) == 0) if len(values) else []
    if len(constant):
        raise ValueError(f"X's column {constant[0]} is constant: it has no Gaussian knockoff; drop it")
    seeds = draw_seeds(python_rng(random_state), 4)
    if isinstance(knockoffs, str):
        _warn_if_discrete(values)
        copy = gaussian_knockoffs(values, covariance=covariance, s_method=s_method, random_state=int(seeds[0]))
    else:
        copy = _complete(knockoffs, "knockoffs")
        if copy.shape != values.shape:
            raise ValueError(f"knockoffs has shape {copy.shape}; X has shape {values.shape}")
    swap = np.random.default_rng(int(seeds[1])).random(p) < 0.5
    both = np.hstack([np.where(swap, copy, values), np.where(swap, values, copy)]).astype(np.float32)
    model = seeded_fit(forest, both, y, seeds[2], n_jobs)
    if importance == "mdi_oob":
        scores = mdi_oob(model, both, y, n_jobs=n_jobs)
    else:
        scores = permutation_oob(model, both, y, random_state=int(seeds[3]), n_jobs=n_jobs)
    first, second = scores[:p], scores[p:]
    return KnockoffTest(np.where(swap, second, first), np.where(swap, first, second), names, offset, copy)


def gaussian_knockoffs(X, *, covariance="auto", s_method="mvr", random_state=None):
    """Second-order Gaussian model-X knockoffs of X (float64, n x p, no constant column).

    mu = X's column means, Sigma = ``covariance`` (a matrix, or how to estimate it from X), S from
    ``s_method``, then X~ = X - (X - mu) Sigma^-1 S + Z L, Z standard normal,
    L'L = 2S - S Sigma^-1 S.
    """
    X = np.asarray(X, dtype=np.float64)
    rng = np.random.default_rng(random_state)
    mu = X.mean(axis=0)
    sigma = (_estimated_covariance(X, covariance) if isinstance(covariance, str)
             else _checked_covariance(covariance, X.shape[1]))
    S = _s_matrix(sigma, s_method, int(rng.integers(2**32)))
    inverse_s = np.linalg.solve(sigma, S)  # Sigma^-1 S
    V = 2.0 * S - S @ inverse_s
    V = (V + V.T) / 2.0
    lower = _cholesky(V)
    return X - (X - mu) @ inverse_s + rng.standard_normal(X.shape) @ lower.T


def _s_matrix(sigma, method, seed):
    if method == "equicorrelated":
        scale = np.sqrt(np.diag(sigma))
        correlation = sigma / np.outer(scale, scale)
        s = min(1.0, 2.0 * float(np.linalg.eigvalsh(correlation)[0]))
        return np.diag(s * scale**2)
    try:
        from knockpy import smatrix
    except ImportError as error:
        raise ImportError(f"s_method={method!r} needs knockpy (pip install 'interptrees[knockoffs]'); "
                          "s_method='equicorrelated' needs nothing") from error
    # knockpy draws coordinate orders from numpy's global stream and prints its block sizes: both
    # are held here, so the S-matrix follows random_state and the caller's stream is untouched
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            S = smatrix.compute_smatrix(sigma, method=method)
    finally:
        np.random.set_state(state)
    return (S + S.T) / 2.0


def _estimated_covariance(X, how):
    """X's covariance by ``how``: "ledoit_wolf"; "sample", which must be positive definite; "auto",
    the sample covariance when it is positive definite (more rows than features), else
    Ledoit-Wolf's with a warning. Shrinkage biases the correlations the knockoffs must reproduce:
    on AR(1) features (rho 0.6) Ledoit-Wolf's let knockoff+ exceed its level (0.12-0.25 at q = 0.1
    for n / p from 0.6 to 10; 0.08 at 30) where the sample covariance kept it (0.02-0.07); at
    n < p a ridge small enough to keep the FDR left no power (docs/user/significance.md)."""
    n, p = X.shape
    if how == "ledoit_wolf":
        return ledoit_wolf(X)[0]
    if n > p:
        sigma = np.cov(X, rowvar=False)
        try:
            np.linalg.cholesky(sigma)
            return sigma
        except np.linalg.LinAlgError:
            pass
    if how == "sample":
        raise ValueError(f"X's sample covariance from {n} rows for {p} features is singular: covariance='sample' "
                         "needs more rows than features (and no column a combination of others)")
    warnings.warn(f"X's covariance is estimated from {n} rows for {p} features, too few for the sample covariance, "
                  "so by Ledoit-Wolf's shrinkage: with correlated features the knockoffs are then approximate and "
                  "the FDR can exceed its level (0.14 at q = 0.1 in simulations with AR(1) features, n = 300, "
                  "p = 500); pass covariance= estimated from more rows (samples without y, a reference panel)",
                  UserWarning, stacklevel=6)
    return ledoit_wolf(X)[0]


def _checked_covariance(covariance, p):
    sigma = np.array(covariance, dtype=np.float64)
    if sigma.shape != (p, p):
        raise ValueError(f"covariance has shape {sigma.shape}; X has {p} features, so it must be ({p}, {p})")
    if not np.all(np.isfinite(sigma)) or not np.allclose(sigma, sigma.T, rtol=1e-10, atol=0.0):
        raise ValueError("covariance must be a symmetric matrix of finite numbers")
    smallest = float(np.linalg.eigvalsh(sigma)[0])
    if smallest <= 0:
        raise ValueError(f"covariance is not positive definite (smallest eigenvalue {smallest:.3g}): knockoffs need "
                         "an invertible covariance; shrink it first (sklearn.covariance.ledoit_wolf)")
    return sigma


def _cholesky(V):
    """Cholesky factor of V, raised to positive definite by the least shift that allows it (an
    S-matrix at the edge of feasibility leaves V with eigenvalues of rounding size)."""
    shift = 0.0
    scale = float(np.mean(np.diag(V))) or 1.0
    for _ in range(60):
        try:
            return np.linalg.cholesky(V + shift * np.eye(len(V)))
        except np.linalg.LinAlgError:
            shift = max(2 * shift, 1e-12 * scale)
    raise ValueError("the knockoffs' conditional covariance 2S - S Sigma^-1 S is not positive semi-definite")


def _complete(X, argument):
    """A float64 copy of X, every value finite."""
    values = np.array(X, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"{argument} must be 2-d, got shape {values.shape}")
    bad = ~np.isfinite(values)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise ValueError(f"{argument} has a missing or infinite value (row {row}, column {column}): knockoffs need "
                         "complete data; impute first")
    return values


def _warn_if_discrete(values):
    few = sum(len(np.unique(column)) <= FEW_LEVELS for column in values.T)
    if few:
        warnings.warn(f"{few} of X's {values.shape[1]} columns take {FEW_LEVELS} values or fewer (genotypes?): "
                      "Gaussian knockoffs of them are continuous and not exchangeable with them, so the FDR is not guaranteed; pass knockoffs "
                      "made for the data (for genotypes, an HMM sampler such as KnockoffZoom's) as knockoffs=",
                      UserWarning, stacklevel=5)
