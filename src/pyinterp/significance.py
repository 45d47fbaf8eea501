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

``knockoff_filter`` selects features with FDR control and no p-values: the forest fitted beside a
model-X knockoff copy of X, each feature's importance against its copy's (pyinterp/_knockoffs.py).

``interaction_pvalues`` tests interactions a finder (LSSFind, iRF) reported, on rows it was not
fitted on: per signed interaction S, the rule's indicator r = prod_k 1(x_k on its side of t_k)
against the additive model of S's features. The additive model gives each feature a step function
with a step at the rule's threshold and at its quantiles (n_bins bins; a feature of few values,
such as genotypes, one level each), all fitted by least squares together; the p-value is the
two-sided test of r's coefficient added to it, with heteroskedasticity-consistent (HC2) standard
errors and Bell and McCaffrey's degrees of freedom, so a 0/1 target (a linear probability model),
unequal noise and contrasts carried by few rows (rare genotypes in LD) keep it valid. For three
features or more the null model holds the rules of S's proper subsets (of two features or more)
too. The null is "S's rule adds nothing to its features' own effects, whatever their shapes (to
the resolution of the steps), and to its sub-rules": a rule that restates main effects is not
rejected, nor a superset of a true pair that only adds a feature without effect. Measured under
nulls (docs/user/significance.md): uniform p-values with y independent of X (Gaussian and binary),
with nonlinear additive effects (sin, square, logistic), and with additive genotype effects of any
dominance.
"""

from __future__ import annotations

import warnings
from itertools import combinations
from numbers import Integral

import numpy as np
from scipy import stats
from sklearn.base import is_classifier
from sklearn.utils._param_validation import StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from ._knockoffs import S_METHODS, KnockoffTest, knockoff_qvalues, knockoff_test
from ._rows import split_rows, take_rows
from ._seeds import draw_seeds, python_rng, seeded_fit
from ._validation import IntInterval
from .forest.rules import feature_labels
from .importance import _held_out_permutation, mdi_oob, permutation_oob
from .interactions.rules import NoThresholdsError
from .interactions.table import InteractionTable

__all__ = ["ImportanceTest", "KnockoffTest", "bh_qvalues", "importance_pvalues", "interaction_pvalues",
           "knockoff_filter", "knockoff_qvalues"]

# ranger's importance_pvalues warns below this many negative importances
FEW_NEGATIVE = 100
# Each bin of the additive model's steps holds this many rows or more: a bin of one row is fitted
# exactly (leverage 1), which leaves no residual to estimate the variance from.
MIN_STEP_ROWS = 5


class ImportanceTest:
    """Feature importances with their p-values and Benjamini-Hochberg q-values.

    What :func:`importance_pvalues` returns; the q-values are computed from the p-values here.

    Parameters
    ----------
    importances : ndarray of shape (n_features,)
        The importance tested.
    pvalues : ndarray of shape (n_features,)
        Its p-values.
    feature_names : ndarray of shape (n_features,)
        The features' names.
    method : {"janitza", "altmann"}
        The test that gave the p-values.
    null : ndarray
        The null the p-values were read from (see Attributes).

    Attributes
    ----------
    importances : ndarray of shape (n_features,)
        The importance tested: the hold-out permutation importance (janitza) or the forest's
        importance on the data as given (altmann).
    pvalues : ndarray of shape (n_features,)
        p-values.
    qvalues : ndarray of shape (n_features,)
        Benjamini-Hochberg adjusted p-values over all features (:func:`bh_qvalues`).
    feature_names : ndarray of shape (n_features,)
        The names of X's columns (``x0``, ``x1``, ... when X has none).
    method : str
        ``"janitza"`` or ``"altmann"``.
    null : ndarray
        janitza: the null sample (negative importances, their mirror images, the zeros), sorted;
        altmann: the importances of the refits on permuted y, shape (n_permutations, n_features).

    See Also
    --------
    importance_pvalues : The test that makes it.
    KnockoffTest : The knockoff filter's selection, without p-values.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.significance import importance_pvalues
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 5))
    >>> y = 2 * X[:, 0] + X[:, 1] + rng.standard_normal(100)
    >>> test = importance_pvalues(RandomForestRegressor(n_estimators=10), X, y, method="altmann",
    ...                           n_permutations=39, random_state=0)
    >>> test
    ImportanceTest(method='altmann', n_features=5, selected at q <= 0.1: 2)
    >>> test.pvalues.tolist()        # the smallest possible is 1 / (n_permutations + 1)
    [0.025, 0.025, 0.4, 0.375, 0.55]
    >>> np.round(test.qvalues, 3).tolist(), test.null.shape
    ([0.062, 0.062, 0.5, 0.5, 0.55], (39, 5))
    """

    def __init__(self, importances, pvalues, feature_names, method, null):
        self.importances = importances
        self.pvalues = pvalues
        self.qvalues = bh_qvalues(pvalues)
        self.feature_names = feature_names
        self.method = method
        self.null = null

    def selected(self, alpha=0.1):
        """Indices of the features with q-value at most alpha, by increasing p-value.

        The Benjamini-Hochberg selection: its expected false-discovery proportion is at most alpha
        (under independence or positive dependence of the p-values).

        Parameters
        ----------
        alpha : float, default=0.1
            The false-discovery rate to control.

        Returns
        -------
        ndarray of int
            The selected features' column indices, by increasing p-value (ties in column order).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.significance import importance_pvalues
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((100, 5))
        >>> y = 2 * X[:, 0] + X[:, 1] + rng.standard_normal(100)
        >>> test = importance_pvalues(RandomForestRegressor(n_estimators=10), X, y, method="altmann",
        ...                           n_permutations=39, random_state=0)
        >>> test.selected(0.1).tolist()
        [0, 1]
        >>> test.feature_names[test.selected(0.1)].tolist()
        ['x0', 'x1']
        """
        chosen = np.flatnonzero(self.qvalues <= alpha)
        return chosen[np.argsort(self.pvalues[chosen], kind="stable")]

    def to_frame(self):
        """The test as a pandas DataFrame, one row per feature by increasing p-value.

        Ties in p-value are ordered by decreasing importance. Needs pandas.

        Returns
        -------
        pandas.DataFrame
            Columns ``feature``, ``importance``, ``pvalue`` and ``qvalue``.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.significance import importance_pvalues
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((100, 5))
        >>> y = 2 * X[:, 0] + X[:, 1] + rng.standard_normal(100)
        >>> test = importance_pvalues(RandomForestRegressor(n_estimators=10), X, y, method="altmann",
        ...                           n_permutations=39, random_state=0)
        >>> test.to_frame().round(3)
          feature  importance  pvalue  qvalue
        0      x0       5.676   0.025   0.062
        1      x1       2.036   0.025   0.062
        2      x3      -0.003   0.375   0.500
        3      x2       0.026   0.400   0.500
        4      x4      -0.076   0.550   0.550
        """
        import pandas as pd

        order = np.lexsort((-self.importances, self.pvalues))
        return pd.DataFrame({"feature": self.feature_names[order], "importance": self.importances[order],
                             "pvalue": self.pvalues[order], "qvalue": self.qvalues[order]})

    def __repr__(self):
        return (f"ImportanceTest(method={self.method!r}, n_features={len(self.pvalues)}, "
                f"selected at q <= 0.1: {len(self.selected(0.1))})")


def bh_qvalues(pvalues):
    """Benjamini-Hochberg adjusted p-values (q-values).

    q_(i) = min over k >= i of p_(k) m / k, at most 1, for the p-values sorted increasingly
    p_(1) <= ... <= p_(m). The features with q <= alpha are the Benjamini-Hochberg selection at
    level alpha, whose expected false-discovery proportion is at most alpha under independence or
    positive dependence of the p-values.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        The p-values.

    Returns
    -------
    ndarray of shape (m,)
        The q-values, in the order of ``pvalues``.

    See Also
    --------
    importance_pvalues : Tests of feature importances, with p-values and these q-values.
    knockoff_qvalues : The knockoff filter's counterpart.

    Notes
    -----
    Benjamini & Hochberg, "Controlling the false discovery rate: a practical and powerful approach
    to multiple testing", Journal of the Royal Statistical Society B 57 (1995).

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


def bh_qvalues_at(pvalues, index):
    """Benjamini-Hochberg q-values over the finite p-values, at `index` (NaN where the p-value is
    not finite), and how many were finite: bh_qvalues(finite)[...] in two arrays of
    the p-values' size rather than six (the pair scan's 5 million pairs: 80 MB, not 280)."""
    finite = pvalues[np.isfinite(pvalues)]
    m = len(finite)
    finite.sort()
    wanted = pvalues[index]
    present = np.isfinite(wanted)
    # tied p-values share the q-value of the last of them
    rank = np.searchsorted(finite, wanted[present], side="right") - 1
    finite *= m
    finite /= np.arange(1, m + 1, dtype=np.float64)
    backwards = finite[::-1]
    np.minimum.accumulate(backwards, out=backwards)
    q = np.full(len(index), np.nan)
    q[present] = np.minimum(finite[rank], 1.0)
    return q, m


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

    Every feature's importance gets a p-value and a Benjamini-Hochberg q-value; ``selected(alpha)``
    of the result is the features with q-value at most alpha.

    - ``method="janitza"``: two forests, each fitted on one half of the rows (halves stratified by
      class), and each feature's permutation importance on the half its forest did not see,
      averaged (the hold-out importance). A feature without effect has a hold-out importance
      symmetric about zero, so the negative importances, mirrored, with the zeros, form a null
      sample of N values: p = (1 + the null values at least the importance) / (1 + N), never below
      1 / (N + 1). Two fits whatever p is, so it serves at p = 10^5 and more; it needs many features
      without effect.
    - ``method="altmann"``: the forest refitted on ``n_permutations`` permutations of y; p = (1 + the
      refits whose importance is at least the observed one) / (1 + n_permutations), ranger's
      formula. Valid for any p, at the cost of the refits.

    Parameters
    ----------
    forest : estimator
        A pyinterp or scikit-learn random forest (regressor or classifier), fitted or not: its
        parameters are cloned for the fits this test makes (the fits' seeds come from
        ``random_state``). For janitza it should grow trees deep enough to overfit noise, as
        forests do by default.
    X : array-like, sparse matrix, packed genotypes or AnnData of shape (n_samples, n_features)
        The data: any X the forests take; its column names (a DataFrame's, AnnData's) name the
        features.
    y : array-like of shape (n_samples,)
        The target: real values for a regressor, class labels for a classifier (janitza needs at
        least 2 rows of each class).
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
    random_state : int, RandomState instance or None, default=None
        The halves, the permutations of y and the fits' seeds.
    n_jobs : int or None, default=None
        Threads of each fit and importance, in scikit-learn's convention; results do not depend on
        it.

    Returns
    -------
    ImportanceTest
        The test: importances, pvalues, qvalues (Benjamini-Hochberg), feature_names and the null;
        ``selected(alpha)`` and ``to_frame()``.

    Raises
    ------
    ValueError
        If y does not have one entry per row of X; janitza: if no feature has a negative hold-out
        importance (the null is empty: use ``method="altmann"``), or if a class has fewer than 2 rows.

    Warns
    -----
    UserWarning
        janitza: when fewer than 100 features have a negative hold-out importance (as ranger warns),
        so the tail of the null rests on few values and p-values beyond it are coarse.

    See Also
    --------
    knockoff_filter : FDR control without p-values, with more power when few features matter.
    bh_qvalues : The q-values.
    pyinterp.importance.permutation_oob : The out-of-bag permutation importance altmann tests.

    Notes
    -----
    Janitza, Celik & Boulesteix, "A computationally fast variable importance test for random forests
    for high-dimensional data", Advances in Data Analysis and Classification 12 (2018); Altmann,
    Tolosi, Sander & Lengauer, "Permutation importance: a corrected feature importance measure",
    Bioinformatics 26 (2010); q-values of Benjamini & Hochberg (1995).

    ranger's ``importance_pvalues`` takes, for janitza, p = the share of the null at or above the
    importance, which is 0 beyond the null's largest value; measured side by side
    (bench/compare_pvalues_ranger.py, docs/user/significance.md), that form let the BH selection
    exceed its FDR (ranger 0.108, on pyinterp's fits 0.17-0.18, at q = 0.1) where the
    permutation-test form used here keeps it (0.00-0.05), at a loss of power.

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
    (494, array([0.00202, 0.00202]))
    >>> round(float(np.mean(test.pvalues[2:] <= 0.05)), 3)  # the 498 others: about 5% at 0.05
    0.028

    Two discoveries among 500 features are beyond what BH can certify from a null of 494
    values (q = 0.34 here): the smallest p-value, 1 / 495, would have to be below 0.1 x 2 / 500.
    """
    y = np.asarray(y)
    n = y.shape[0]
    if _n_rows(X) != n:
        raise ValueError(f"y has {n} entries for {_n_rows(X)} rows of X")
    rng = python_rng(random_state)
    if method == "janitza":
        importances, null, model = _janitza(forest, X, y, n_repeats, rng, n_jobs)
        at_least = len(null) - np.searchsorted(null, importances, side="left")
        pvalues = (1.0 + at_least) / (1.0 + len(null))
    else:
        importances, null, model = _altmann(forest, X, y, importance, n_permutations, n_repeats, rng, n_jobs)
        pvalues = (1.0 + (null >= importances).sum(axis=0)) / (1.0 + n_permutations)
    names = np.asarray(feature_labels(model, len(importances)), dtype=object)  # as the fits read X's columns
    return ImportanceTest(importances, pvalues, names, method, null)


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "knockoffs": [StrOptions({"gaussian"}), "array-like"],
        "covariance": [StrOptions({"auto", "sample", "ledoit_wolf"}), "array-like"],
        "offset": [IntInterval(Integral, 0, 1, closed="both")],
        "importance": [StrOptions({"mdi_oob", "permutation"})],
        "s_method": [StrOptions(set(S_METHODS))],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def knockoff_filter(forest, X, y, *, knockoffs="gaussian", covariance="auto", offset=1, importance="mdi_oob",
                    s_method="mvr", random_state=None, n_jobs=None):
    """Model-X knockoff selection with a forest's importances: FDR control without p-values.

    The forest is fitted once on [X, X~], X~ a knockoff copy of X; each feature's statistic is its
    importance minus its knockoff's, and the knockoff+ filter selects the features whose statistic
    clears a threshold set by the negative statistics. With offset 1 and exact knockoffs the FDR
    of ``selected(q)`` is at most q for any n and p (Candès et al. 2018), and unlike BH on
    permutation p-values it needs no null sample: five causes among 500 features can be selected
    at q = 0.1 (the filter selects at least 1 / q features, or none).

    Parameters
    ----------
    forest : estimator
        A pyinterp or scikit-learn random forest, fitted or not: its parameters are cloned for the
        one fit on [X, X~] (2 n_features columns; a max_features given as a share or "sqrt" is
        of those).
    X : array-like of shape (n_samples, n_features)
        Complete numeric data (a DataFrame or packed genotypes name the features).
    y : array-like of shape (n_samples,)
        The target: real values for a regressor, class labels for a classifier.
    knockoffs : "gaussian" or array-like of shape (n_samples, n_features), default="gaussian"
        "gaussian": second-order Gaussian knockoffs from X's mean and covariance
        (exact when X is multivariate normal; an approximation otherwise, and a poor one for
        discrete features such as genotypes, which warn). An array: knockoffs made elsewhere for
        X's distribution (for genotypes, an HMM sampler such as KnockoffZoom's), used as given.
    covariance : {"auto", "sample", "ledoit_wolf"} or array-like of shape (n_features, n_features), \
default="auto"
        Gaussian knockoffs: X's covariance when it is known (from the design, a reference panel
        or more rows without y, as model-X assumes), or how to estimate it from X. "sample": the
        sample covariance, which kept the FDR in every simulation but gives little power below
        about 3 rows a feature. "ledoit_wolf": shrunk toward independence, more power, but on
        correlated features the FDR exceeded its level (0.12-0.25 at q = 0.1;
        docs/user/significance.md). "auto": "sample" with more rows than features, else
        "ledoit_wolf" and a warning.
    offset : {0, 1}, default=1
        1: knockoff+, which controls the FDR; 0: the knockoff filter, which controls the modified
        FDR E[V / (R + 1 / q)] and selects more when few features matter.
    importance : {"mdi_oob", "permutation"}, default="mdi_oob"
        The importance compared: MDI-oob, or the out-of-bag permutation importance.
    s_method : {"mvr", "maxent", "sdp", "equicorrelated"}, default="mvr"
        How far each knockoff is from its feature (the S-matrix); all but "equicorrelated" need
        knockpy (``pip install 'interptrees[knockoffs]'``). knockpy solves above 1,000 features
        on blocks of the covariance, and its cost grows as n_features^3 within a block.
    random_state : int, RandomState instance or None, default=None
        The knockoff draw, the swaps and the forest's seed.
    n_jobs : int or None, default=None
        Threads of the fit and the importance, in scikit-learn's convention; results do not depend
        on it.

    Returns
    -------
    KnockoffTest
        The filter: statistics, importances, knockoff_importances, qvalues (the least level
        selecting each feature), feature_names, knockoffs; ``selected(fdr)``, ``threshold(fdr)``,
        ``to_frame()``.

    Raises
    ------
    ValueError
        If y does not have one entry per row of X; if X (or ``knockoffs``) has a missing or infinite
        value, or X a constant column; if ``knockoffs`` is not of X's shape; if ``covariance`` is not
        a symmetric positive definite (n_features, n_features) matrix, or is "sample" with too few
        rows; or for Gaussian knockoffs of more than 10,000 features (their p x p covariances: pass
        knockoffs made by a sampler that scales, or screen the features first).
    ImportError
        If ``s_method`` needs knockpy and it is not installed.

    Warns
    -----
    UserWarning
        For Gaussian knockoffs of columns with 3 values or fewer (genotypes?), which are not
        exchangeable with them; and when ``covariance="auto"`` falls back to Ledoit-Wolf's estimate
        (too few rows for the sample covariance).

    See Also
    --------
    KnockoffTest : The result.
    knockoff_qvalues : The q-values of the statistics.
    importance_pvalues : Tests of importances by p-values, with Benjamini-Hochberg selection.

    Notes
    -----
    Model-X knockoffs are from Candès, Fan, Janson & Lv, "Panning for gold: 'model-X' knockoffs for
    high dimensional controlled variable selection", Journal of the Royal Statistical Society B 80
    (2018); the knockoff+ filter from Barber & Candès, "Controlling the false discovery rate via
    knockoffs", Annals of Statistics 43 (2015). Here W_j = importance(X_j) - importance(X~_j), the
    forest fitted once on [X, X~] with each pair swapped at random for the fit (so column order
    cannot favour a side) and swapped back after; the knockoff+ filter selects W_j >= T, the least T
    with (offset + #{W <= -T}) / max(1, #{W >= T}) <= q. Gaussian knockoffs are
    X~ = X - (X - mu) Sigma^-1 S + Z L, Z standard normal, L'L = 2S - S Sigma^-1 S. The cost is one
    forest on 2 n_features columns, plus the S-matrix (an eigenvalue problem for "equicorrelated").

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
    >>> sorted(test.selected(0.1).tolist())   # the ten causes
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    if _n_rows(X) != _n_rows(y):
        raise ValueError(f"y has {_n_rows(y)} entries for {_n_rows(X)} rows of X")
    return knockoff_test(forest, X, np.asarray(y), knockoffs=knockoffs, covariance=covariance, offset=offset,
                         importance=importance, s_method=s_method, random_state=random_state, n_jobs=n_jobs)


def _janitza(forest, X, y, n_repeats, rng, n_jobs):
    halves = _halves(y, is_classifier(forest), rng)
    fit_seeds, permutation_seeds = draw_seeds(rng, 2), draw_seeds(rng, 2)
    held_out = []
    for k, (fit_rows, test_rows) in enumerate((halves, halves[::-1])):
        model = seeded_fit(forest, take_rows(X, fit_rows), y[fit_rows], fit_seeds[k], n_jobs)
        held_out.append(_held_out_permutation(model, take_rows(X, test_rows), y[test_rows], n_repeats=n_repeats,
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
    return importances, null, model


def _altmann(forest, X, y, importance, n_permutations, n_repeats, rng, n_jobs):
    measure = {"permutation": lambda m, X_, y_, seed: permutation_oob(m, X_, y_, n_repeats=n_repeats,
                                                                       random_state=seed, n_jobs=n_jobs),
               "mdi_oob": lambda m, X_, y_, seed: mdi_oob(m, X_, y_, n_jobs=n_jobs)}[importance]
    seeds = draw_seeds(rng, (n_permutations + 1, 2))
    orders = [rng.permutation(len(y)) for _ in range(n_permutations)]
    model = seeded_fit(forest, X, y, seeds[0, 0], n_jobs)
    observed = measure(model, X, y, int(seeds[0, 1]))
    null = np.empty((n_permutations, len(observed)))
    for s, order in enumerate(orders, 1):
        permuted = y[order]
        null[s - 1] = measure(seeded_fit(forest, X, permuted, seeds[s, 0], n_jobs), X, permuted, int(seeds[s, 1]))
    return observed, null, model


def _halves(y, classification, rng):
    """Two halves of the rows, each holding about half of every class when classifying."""
    if classification:
        for c in np.unique(y):
            rows = int(np.sum(y == c))
            if rows < 2:
                raise ValueError(f"y: class {c.item() if hasattr(c, 'item') else c!r} has {rows} row: Janitza's "
                                 "halves need at least 2 rows of each class")
    return split_rows(y, lambda m: m // 2, classification, rng)


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _rule_or_set(finder, item):
    """The finder's rule of a record or signed set, or the NoThresholdsError saying it has none."""
    try:
        return finder.rule(getattr(item, "features", item))
    except NoThresholdsError as error:
        return error


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "interactions": [list, tuple, InteractionTable, None],
        "n_bins": [IntInterval(Integral, 2, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def interaction_pvalues(finder, X, y, *, interactions=None, n_bins=5):
    """p-values of a finder's interactions on held-out rows.

    Each interaction's Boolean rule is tested against the additive model of its features.

    Parameters
    ----------
    finder : LSSFind, LocalLSSFind or IterativeRandomForest
        Fitted on other rows than X's (fit it on one part of the data, test on the other: tested
        on its own training rows the p-values are not valid). Its ``rule`` gives each
        interaction's thresholds.
    X : array-like, sparse matrix, packed genotypes or AnnData of shape (n_samples, n_features)
        Held-out rows, with the finder's training columns. Rows missing a value of S's features
        are left out of S's test.
    y : array-like of shape (n_samples,)
        Their target; for an iRF of classes, the test is of 1(y = ``class_id_``).
    interactions : InteractionTable, list of signed sets, or None
        What to test (records, signed sets by index or name); default the finder's
        ``interactions_``. Sets of one feature are not interactions and are left out.
    n_bins : int, default=5
        The additive model's resolution: steps at the quantiles of each feature (besides the
        rule's threshold); features with at most n_bins values get a step at every level.

    Returns
    -------
    InteractionTable
        One record per interaction tested, in the order given: ``effect`` (r's coefficient: how
        much the rule's cell adds to the additive prediction), ``pvalue``, ``qvalue`` (Benjamini-
        Hochberg over the interactions tested), ``n_rule`` (held-out rows in the cell) and
        ``n_rows`` (rows tested). A rule whose cell is empty, that the additive model already
        spans, or whose fit rests on one row (a step or cell of one row) has p-value NaN (and no
        q-value); so has a set without a rule, no leaf of the finder's forest holding it (iRF
        finds sets on its bootstrap forests), its ``n_rule`` and ``n_rows`` NaN as well.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``finder`` is not fitted.
    ValueError
        If y does not have one entry per row of X, or (LSSFind) does not hold numbers.

    See Also
    --------
    importance_pvalues : Tests of single features' importances.
    pyinterp.LSSFind, pyinterp.IterativeRandomForest : Finders whose interactions this tests.

    Notes
    -----
    Finding interactions on one part of the data and testing them on the other is epiTree's idea.
    For a signed set S the rule's indicator r = prod_k 1(x_k on its side of t_k) is added to the
    null model, which gives each feature of S a step function (steps at the rule's threshold and at
    its quantiles, each bin of at least 5 rows; a feature of at most ``n_bins`` values one step per
    level) and, for three features or more, the rules of S's proper subsets of two features or
    more, all fitted by least squares together. The p-value is the two-sided test of r's
    coefficient with HC2 standard errors and Student's t with the degrees of freedom of Bell &
    McCaffrey, "Bias reduction in standard errors for linear regression with multi-stage samples",
    Survey Methodology 28 (2002), as Imbens & Kolesar, "Robust standard errors in small samples:
    some practical advice", Review of Economics and Statistics 98 (2016), advise; so a 0/1 target
    (a linear probability model), unequal noise and contrasts carried by few rows (rare genotypes in
    LD) keep it valid. The q-values are Benjamini-Hochberg's over the interactions tested.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import LSSFind
    >>> from pyinterp.significance import interaction_pvalues
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(1200, 10))
    >>> y = 2.0 * (X[:, 0] > 0.5) * (X[:, 1] > 0.5) + 0.5 * rng.standard_normal(1200)
    >>> lss = LSSFind(n_estimators=50, max_features=0.5, mode="rank", random_state=0).fit(X[:600], y[:600])
    >>> tested = interaction_pvalues(lss, X[600:], y[600:])
    >>> first = tested[0]
    >>> tested.label(first.features), bool(first.qvalue < 1e-10), round(float(first.effect), 1)
    ('x0+ & x1+', True, 2.0)

    The test is of an interaction among S's features; the signs say which cell's effect is
    estimated, so the other cells of the same pair are significant too (here x0+ & x1-, whose
    cell lacks the 2). Pairs of features without effect are not:

    >>> bool(np.all(tested.select([{k for k, _ in f} == {0, 1} for f in tested.features])["pvalue"] < 1e-10))
    True
    >>> noise = interaction_pvalues(lss, X[600:], y[600:], interactions=[((4, 1), (7, -1)), ((5, 1), (6, -1))])
    >>> bool(np.all(noise["pvalue"] > 0.01))
    True
    """
    check_is_fitted(finder, "interactions_")
    table = finder.interactions_ if interactions is None else interactions
    rules = [rule for item in table if len((rule := _rule_or_set(finder, item)).features) >= 2]
    features = [rule.features for rule in rules]
    target = _tested_target(finder, np.asarray(y))
    if rules and _n_rows(X) != len(target):
        raise ValueError(f"y has {len(target)} entries for {_n_rows(X)} rows of X")
    effect, pvalue, n_rule, n_rows = (np.full(len(features), np.nan) for _ in range(4))
    for i, rule in enumerate(rules):
        if isinstance(rule, NoThresholdsError):
            continue
        values = rule.columns(X)
        complete = ~np.isnan(values).any(axis=1)
        signs = np.array([s for _, s in rule.features])
        effect[i], pvalue[i], n_rule[i] = _rule_test(values[complete], target[complete], signs, rule.thresholds,
                                                     n_bins)
        n_rows[i] = complete.sum()
    qvalue = np.full(len(features), np.nan)
    tested = ~np.isnan(pvalue)
    qvalue[tested] = bh_qvalues(pvalue[tested])
    columns = {"effect": effect, "pvalue": pvalue, "qvalue": qvalue, "n_rule": n_rule, "n_rows": n_rows}
    names = getattr(finder, "feature_names_in_", None)
    return InteractionTable(features, columns, names)


def _tested_target(finder, y):
    if getattr(finder, "classification_", False):  # an iRF of classes: its class of interest
        return (y == finder.class_id_).astype(np.float64)
    if y.dtype.kind not in "biuf":
        raise ValueError(f"y must hold numbers for {type(finder).__name__}'s rules, got {y.dtype} values")
    return y.astype(np.float64)


def _rule_test(values, y, signs, thresholds, n_bins):
    """(effect, two-sided p-value, rows in the cell) of the rule's indicator added to the null model
    (the additive step functions of the columns and the sub-rules); (effect or nan, nan, count) when
    the null model spans it or a row is fitted exactly."""
    sides = np.where(signs > 0, values > thresholds, values <= thresholds)
    inside = np.all(sides, axis=1)
    null = _independent([_additive_design(values, thresholds, n_bins),
                         *(np.all(sides[:, list(sub)], axis=1, keepdims=True).astype(np.float64)
                           for size in range(2, len(signs)) for sub in combinations(range(len(signs)), size))])
    design = np.column_stack([null, inside.astype(np.float64)])
    diagonal = np.abs(np.diag(np.linalg.qr(design)[1]))
    if diagonal[-1] <= 1e-9 * max(1.0, diagonal.max()) or len(y) <= design.shape[1]:
        return np.nan, np.nan, int(inside.sum())
    q = np.linalg.qr(design)[0]
    inverse = np.linalg.inv(design.T @ design)
    beta = inverse @ (design.T @ y)
    residuals = y - design @ beta
    leverage = np.einsum("ij,ij->i", q, q)
    if leverage.max() > 1.0 - 1e-6:  # a row fitted exactly (a cell of one row): no variance to read
        return float(beta[-1]), np.nan, int(inside.sum())
    # HC2 variance of r's coefficient, sum_i w_i^2 e_i^2 with w_i = a_i / sqrt(1 - h_i), a the row of
    # (D'D)^-1 D' giving it; its t statistic against Student's t with Bell and McCaffrey's degrees of
    # freedom (Imbens & Kolesar 2016): (tr G)^2 / tr G^2 for G = W M W. Where a few rows (a small
    # cell, rare genotypes in LD) carry the contrast it stays valid; HC3 with n - k degrees of freedom
    # was measured at 5% below 0.01 there (docs/user/significance.md).
    w2 = (design @ inverse[:, -1]) ** 2 / (1.0 - leverage)
    variance = float(w2 @ residuals ** 2)
    if not variance > 0:
        return float(beta[-1]), np.nan, int(inside.sum())
    spread = q.T @ (w2[:, None] * q)
    trace = float(w2 @ (1.0 - leverage))
    trace_squared = float(w2 ** 2 @ (1.0 - 2.0 * leverage) + np.sum(spread ** 2))
    df = trace ** 2 / trace_squared
    t = beta[-1] / np.sqrt(variance)
    return float(beta[-1]), float(2.0 * stats.t.sf(abs(t), df)), int(inside.sum())


def _additive_design(values, thresholds, n_bins):
    """An intercept and, per column, 0/1 steps at the rule's threshold and the quantiles (every
    level of a column with at most n_bins values), a quantile left out where it would make a bin of
    fewer than MIN_STEP_ROWS rows; independent columns only."""
    n = len(values)
    steps = [np.ones(n)]
    for j in range(values.shape[1]):
        x = values[:, j]
        levels = np.unique(x)
        if len(levels) <= n_bins:
            cuts = (levels[:-1] + levels[1:]) / 2
        else:
            cuts = np.quantile(x, np.arange(1, n_bins) / n_bins)
        kept = []  # the rule's threshold first: it is the step the rule's own feature takes
        for cut in [thresholds[j], *cuts]:
            bounds = [-np.inf, *kept, np.inf]
            if all(np.sum((x > min(cut, b)) & (x <= max(cut, b))) >= MIN_STEP_ROWS for b in bounds):
                kept.append(cut)
                steps.append((x > cut).astype(np.float64))
    return _independent(steps)


def _independent(columns):
    """The columns (arrays of one or more columns) side by side, each kept only when it is not a
    linear combination of those before it."""
    design = np.column_stack(columns)
    _, r = np.linalg.qr(design)
    diagonal = np.abs(np.diag(r))
    return design[:, diagonal > 1e-9 * diagonal.max()]
