"""p-values for feature importances, and false-discovery control over them.

- ``method="janitza"`` (Janitza, Celik & Boulesteix 2018): two forests, each fitted on one half of
  the rows; each feature's importance is the mean of each forest's permutation importance on the
  half it did not see (the hold-out importance). A feature without effect has a hold-out importance
  symmetric about zero, so the negative importances, mirrored, with the zeros, form a null
  sample of N values: p = (1 + the null values at least the importance) / (1 + N), the
  permutation-test form, never below 1 / (N + 1). Two fits whatever p is, so it serves at p = 10^5
  and more; it needs many features without effect (ranger warns below 100 negative importances,
  and so does this). ranger's importance_pvalues takes p = the share of the null at or above the
  importance, 0 beyond the null's largest value; measured side by side
  (bench/compare_pvalues_ranger.py, docs/user/significance.md), that form let the BH selection
  exceed its FDR (ranger 0.108, on pyinterp's fits 0.17-0.18, at q = 0.1) where this one keeps it
  (0.00-0.05), at a loss of power.
- ``method="altmann"`` (Altmann, Tolosi, Sander & Lengauer 2010): the forest refitted on
  ``n_permutations`` permutations of y; p = (1 + the refits whose importance is at least the
  observed one) / (1 + n_permutations), ranger's formula. Valid for any p, at the cost of the refits.
- q-values: Benjamini-Hochberg adjusted p-values; the features with q <= alpha are a selection
  whose expected false-discovery proportion is at most alpha (under independence or positive
  dependence of the p-values).
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import StrOptions, validate_params

from ._seeds import draw_seeds, python_rng
from ._validation import IntInterval
from .importance import _held_out_permutation, mdi_oob, permutation_oob
from .io.h5ad import is_anndata
from .io.packed import is_packed

__all__ = ["ImportanceTest", "bh_qvalues", "importance_pvalues"]

# ranger's importance_pvalues warns below this many negative importances
FEW_NEGATIVE = 100


class ImportanceTest:
    """Feature importances with their p-values and Benjamini-Hochberg q-values.

    Attributes
    ----------
    importances : ndarray of shape (n_features,)
        The importance tested: the hold-out permutation importance (janitza) or the forest's
        importance on the data as given (altmann).
    pvalues, qvalues : ndarray of shape (n_features,)
        p-values, and Benjamini-Hochberg adjusted p-values over all features.
    feature_names : ndarray of shape (n_features,)
        The names of X's columns (``x0``, ``x1``, ... when X has none).
    method : str
        ``"janitza"`` or ``"altmann"``.
    null : ndarray
        janitza: the null sample (negative importances, their mirror images, the zeros); altmann:
        the importances of the refits on permuted y, shape (n_permutations, n_features).
    """

    def __init__(self, importances, pvalues, feature_names, method, null):
        self.importances = importances
        self.pvalues = pvalues
        self.qvalues = bh_qvalues(pvalues)
        self.feature_names = feature_names
        self.method = method
        self.null = null

    def selected(self, alpha=0.1):
        """Indices of the features with q-value at most alpha, by increasing p-value."""
        chosen = np.flatnonzero(self.qvalues <= alpha)
        return chosen[np.argsort(self.pvalues[chosen], kind="stable")]

    def to_frame(self):
        """A pandas DataFrame, one row per feature by increasing p-value (pandas needed)."""
        import pandas as pd

        order = np.lexsort((-self.importances, self.pvalues))
        return pd.DataFrame({"feature": self.feature_names[order], "importance": self.importances[order],
                             "pvalue": self.pvalues[order], "qvalue": self.qvalues[order]})

    def __repr__(self):
        return (f"ImportanceTest(method={self.method!r}, n_features={len(self.pvalues)}, "
                f"selected at q <= 0.1: {len(self.selected(0.1))})")


def bh_qvalues(pvalues):
    """Benjamini-Hochberg adjusted p-values: q_(i) = min over k >= i of p_(k) m / k, at most 1.

    Examples
    --------
    >>> from pyinterp.significance import bh_qvalues
    >>> bh_qvalues([0.01, 0.04, 0.03, 0.5])
    array([0.04      , 0.05333333, 0.05333333, 0.5       ])
    """
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "method": [StrOptions({"janitza", "altmann"})],
        "importance": [StrOptions({"permutation", "mdi_oob"})],
        "n_permutations": [IntInterval(Integral, 1, None, closed="left")],
        "n_repeats": [IntInterval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def importance_pvalues(forest, X, y, *, method="janitza", importance="permutation", n_permutations=100,
                       n_repeats=1, random_state=None, n_jobs=None):
    """p-values of feature importances: Janitza's hold-out null or Altmann's permutation null.

    Parameters
    ----------
    forest : estimator
        A pyinterp or scikit-learn random forest (regressor or classifier), fitted or not: its
        parameters are cloned for the fits this test makes (the fits' seeds come from
        ``random_state``). For janitza it should grow trees deep enough to overfit noise, as
        forests do by default.
    X : array-like, sparse matrix, packed genotypes or AnnData of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    method : {"janitza", "altmann"}, default="janitza"
        janitza: two fits on halves of the rows, the null from the negative hold-out
        importances (needs many features without effect). altmann: ``n_permutations`` refits
        on permuted y.
    importance : {"permutation", "mdi_oob"}, default="permutation"
        altmann only: the importance tested (out-of-bag permutation, or MDI-oob). janitza always
        tests the hold-out permutation importance.
    n_permutations : int, default=100
        altmann: refits on permuted y; the smallest p-value is 1 / (n_permutations + 1).
    n_repeats : int, default=1
        Permutations of each feature per tree (ranger permutes once).
    random_state : int, RandomState or None
        The halves, the permutations of y and the fits' seeds.
    n_jobs : int or None
        Threads of each fit and importance; results do not depend on it.

    Returns
    -------
    ImportanceTest
        importances, pvalues, qvalues (Benjamini-Hochberg) and feature_names.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.significance import importance_pvalues
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 500))
    >>> y = X[:, 0] + X[:, 1] + rng.standard_normal(300)
    >>> test = importance_pvalues(RandomForestRegressor(n_estimators=100, max_features=0.3), X, y,
    ...                           random_state=0)
    >>> len(test.null), test.pvalues[:2].round(5)         # the two causes: above the whole null
    (534, array([0.00187, 0.00187]))
    >>> round(float(np.mean(test.pvalues[2:] <= 0.05)), 3)  # the 498 others: about 5% at 0.05
    0.054

    Two discoveries among 500 features are beyond what BH can certify from a null of 534
    values (q = 0.47 here): the smallest p-value, 1 / 535, would have to be below 0.1 x 2 / 500.
    """
    y = np.asarray(y)
    n = y.shape[0]
    if _n_rows(X) != n:
        raise ValueError(f"y has {n} entries for {_n_rows(X)} rows of X")
    rng = python_rng(random_state)
    if method == "janitza":
        importances, null = _janitza(forest, X, y, n_repeats, rng, n_jobs)
        at_least = len(null) - np.searchsorted(null, importances, side="left")
        pvalues = (1.0 + at_least) / (1.0 + len(null))
    else:
        importances, null = _altmann(forest, X, y, importance, n_permutations, n_repeats, rng, n_jobs)
        pvalues = (1.0 + (null >= importances).sum(axis=0)) / (1.0 + n_permutations)
    return ImportanceTest(importances, pvalues, _feature_names(X, len(importances)), method, null)


def _janitza(forest, X, y, n_repeats, rng, n_jobs):
    halves = _halves(y, is_classifier(forest), rng)
    fit_seeds, permutation_seeds = draw_seeds(rng, 2), draw_seeds(rng, 2)
    held_out = []
    for k, (fit_rows, test_rows) in enumerate((halves, halves[::-1])):
        model = _fit(forest, _take(X, fit_rows), y[fit_rows], fit_seeds[k], n_jobs)
        held_out.append(_held_out_permutation(model, _take(X, test_rows), y[test_rows], n_repeats=n_repeats,
                                              random_state=int(permutation_seeds[k]), n_jobs=n_jobs))
    importances = (held_out[0] + held_out[1]) / 2.0
    negative = importances[importances < 0]
    if negative.size == 0:
        raise ValueError("no feature has a negative hold-out importance, so Janitza's null is empty: it needs many "
                         "features without effect (hundreds or more); use method='altmann'")
    if negative.size < FEW_NEGATIVE:
        warnings.warn(f"only {negative.size} features have a negative hold-out importance, so the tail of Janitza's "
                      f"null rests on {negative.size} values and p-values beyond it are coarse; method='altmann' "
                      "does not need features without effect", UserWarning, stacklevel=4)
    null = np.sort(np.concatenate([negative, importances[importances == 0], -negative]))
    return importances, null


def _altmann(forest, X, y, importance, n_permutations, n_repeats, rng, n_jobs):
    measure = {"permutation": lambda m, X_, y_, seed: permutation_oob(m, X_, y_, n_repeats=n_repeats,
                                                                       random_state=seed, n_jobs=n_jobs),
               "mdi_oob": lambda m, X_, y_, seed: mdi_oob(m, X_, y_, n_jobs=n_jobs)}[importance]
    seeds = draw_seeds(rng, (n_permutations + 1, 2))
    orders = [rng.permutation(len(y)) for _ in range(n_permutations)]
    observed = measure(_fit(forest, X, y, seeds[0, 0], n_jobs), X, y, int(seeds[0, 1]))
    null = np.empty((n_permutations, len(observed)))
    for s, order in enumerate(orders, 1):
        permuted = y[order]
        null[s - 1] = measure(_fit(forest, X, permuted, seeds[s, 0], n_jobs), X, permuted, int(seeds[s, 1]))
    return observed, null


def _fit(forest, X, y, seed, n_jobs):
    model = clone(forest)
    params = {"random_state": int(seed)}
    if "n_jobs" in model.get_params():
        params["n_jobs"] = n_jobs
    return model.set_params(**params).fit(X, y)


def _halves(y, classification, rng):
    """Two halves of the rows, each holding about half of every class when classifying."""
    n = len(y)
    if not classification:
        order = rng.permutation(n)
        return np.sort(order[: n // 2]), np.sort(order[n // 2:])
    first = []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        if len(rows) < 2:
            raise ValueError(f"y: class {c.item() if hasattr(c, 'item') else c!r} has {len(rows)} row: Janitza's halves "
                             "need at least 2 rows of each class")
        first.append(rng.permutation(rows)[: len(rows) // 2])
    first = np.sort(np.concatenate(first))
    return first, np.setdiff1d(np.arange(n), first)


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _take(X, rows):
    if is_packed(X) or is_anndata(X):
        return X[rows]
    return _safe_indexing(X, rows)


def _feature_names(X, p):
    if is_packed(X):
        return np.asarray(X.variant_ids, dtype=object)
    if is_anndata(X):
        return np.asarray(X.var_names, dtype=object)
    columns = getattr(X, "columns", None)
    if columns is not None:
        return np.asarray([str(c) for c in columns], dtype=object)
    return np.array([f"x{j}" for j in range(p)], dtype=object)
