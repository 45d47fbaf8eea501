"""Interactions at genome scale (issue 49): a forest screens p = 10^5-10^6 columns down to a few
thousand by MDI-oob, and pair_scan tests every pair of those on rows the screen did not see, so
the pairs' p-values stay valid after the selection."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .._rows import split_rows, take_rows
from .._seeds import draw_seeds, python_rng
from .._validation import IntInterval, column_indices, column_names, read_columns
from ..forest import RandomForestClassifier, RandomForestRegressor
from ..forest.categories import CATEGORICAL_CONSTRAINT, category_encoder
from ..importance import mdi_oob
from ..io.packed import is_packed
from ..io.phenotypes import adjust_for_covariates
from .cell_tests import cell_data, target
from .pairs import MAX_PAIRS, PairScan, scan_pairs
from .triples import TripleScan, scan_triples

__all__ = ["PairScreen", "screen_pairs"]

# A screen of this many columns or more on fewer rows warns: measured to fail at 60-200 rows and
# 10^4 columns, to work at 2,000 rows; not measured between (bench/studies/genome_scale_real.py,
# genome_scale.py)
FEW_ROWS, MANY_COLUMNS = 500, 5000


@dataclass
class PairScreen:
    """What :func:`screen_pairs` found.

    A dataclass made by :func:`screen_pairs`: each parameter is kept as the attribute of the same
    name.

    Parameters
    ----------
    features : ndarray of int
        The screened columns, by decreasing MDI-oob (all columns when there were at most
        ``n_features``).
    importances : ndarray of shape (n_features_in,) or None
        The screening forest's MDI-oob of every column (None without a screen).
    scan : PairScan
        Every pair of the screened columns tested on the scan rows.
    screen_rows, scan_rows : ndarray of int
        The rows the forest was fitted on and the rows the pairs were tested on (without a
        screen: no screen rows, every row scanned).
    forest : RandomForestRegressor, RandomForestClassifier or None
        The screening forest.
    triples : TripleScan or None
        The ``triples`` best pairs each extended by every other screened column, tested for a
        three-way interaction on the scan rows (None with ``triples=0``).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.interactions import screen_pairs
    >>> X = np.random.default_rng(0).standard_normal((400, 60))
    >>> found = screen_pairs(X, X[:, 0] * X[:, 1], n_features=10, n_estimators=50, random_state=0)
    >>> len(found.features), len(found.screen_rows), found.scan.n_pairs, found.triples.n_triples
    (10, 200, 45, 101)
    """

    features: np.ndarray
    importances: np.ndarray | None
    scan: PairScan
    screen_rows: np.ndarray
    scan_rows: np.ndarray
    forest: object | None
    triples: TripleScan | None


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "n_features": [IntInterval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "screen_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_estimators": [IntInterval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_features": "no_validation",  # the forest checks it
        "always_split_features": "no_validation",
        "categorical_features": CATEGORICAL_CONSTRAINT,
        "triples": [IntInterval(Integral, 0, None, closed="left")],
        "top": [IntInterval(Integral, 1, None, closed="left"), None],
        "max_pairs": [IntInterval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    },
    prefer_skip_nested_validation=True,
)
def screen_pairs(X, y, *, n_features="auto", screen_fraction=0.5, n_estimators="auto", max_features="sqrt",
                 always_split_features=None, categorical_features=None, triples=20, top=100, max_pairs=MAX_PAIRS,
                 random_state=None, n_jobs=None, verbose=0):
    """Screen the columns with a forest, then test every pair of the kept ones.

    With more than ``n_features`` columns: a forest (``max_features`` candidates a split, sqrt of
    p by default: the cost of a fit at p = 10^6) is fitted on ``screen_fraction`` of the rows
    (drawn within each class for two classes), its MDI-oob on them ranks the columns, and
    :func:`pair_scan` tests every pair of the ``n_features`` first on the other rows. With at
    most ``n_features`` columns every pair is scanned on every row, without a forest. Then the
    ``triples`` best pairs are each extended by every other kept column, and
    :func:`triple_scan` tests those triples for a three-way interaction on the same rows. A screen
    by importance keeps columns with marginal effects, or that a forest's splits reach through an
    interaction; a pair whose columns have no effect of their own (pure epistasis) it may miss.

    Parameters
    ----------
    X : array-like, sparse matrix, packed genotypes or AnnData of shape (n_samples, n_features_in)
        The columns to screen and pair (genotypes as 0, 1, 2, or any numbers; see
        :func:`pair_scan` for how they are cut into levels).
    y : array-like of shape (n_samples,)
        Numbers or two classes (see :func:`pair_scan`).
    n_features : int or "auto", default="auto"
        Columns kept by the screen: n_features (n_features - 1) / 2 pairs (1000: 499,500 pairs,
        seconds at n = 2,000). "auto": 1000 up to p = 10^5 candidate columns, then
        1000 sqrt(p / 10^5) (3,163 at 10^6: 5.0 million pairs), at most as many as make
        ``max_pairs`` pairs. At 10^6 a causal column the
        screen ranks in the thousands is still scanned: with 1,000 one replicate of ten missed its
        pair (a causal column ranked 2,848th), which 3,000 put first
        (bench/studies/genome_scale.py).
    screen_fraction : float, default=0.5
        The share of the rows the screening forest is fitted on; the pairs are tested on the rest.
    n_estimators : int or "auto", default="auto"
        The screening forest's trees. "auto": 300 up to p = 10^5 columns, then 300 sqrt(p / 10^5)
        (949 at 10^6). With sqrt(p) candidates a split, a column is tried about trees x nodes /
        sqrt(p) times in the forest; "auto" keeps that count at p = 10^5's, where 300 trees put a
        planted pair of 1 SD first in 10 of 10 replicates (bench/studies/genome_scale.py) and 300
        at 10^6 missed one. For weaker signals give more: at 0.7 SD (SNR about 0.09) 600 trees kept
        both causal columns in 9 of 10 replicates, 300 in 6 (bench/studies/screen_variants.py).
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Candidates a split of the screening forest (see :class:`pyinterp.RandomForestRegressor`).
    always_split_features : array-like of int, str or bool, default=None
        The screening forest's always-split columns (see :class:`pyinterp.RandomForestRegressor`),
        by index, name or mask: covariates (principal components, age, sex, batch), offered at
        every split of the forest, left out of the pairs, and removed from y by least squares on
        the scan rows before the pairs are tested (y's residuals: a 0/1 y's of a linear
        probability model).
    categorical_features : array-like of int, str or bool, "from_dtype" or CategoryCodes, default None
        Columns of categories (batch, sex; see :class:`pyinterp.RandomForestRegressor`): the
        forest splits them as categories, y is adjusted for an always-split one through
        indicators of its categories, and they are left out of the pairs, whose tests take
        ordered levels.
    triples : int, default=20
        Pairs (the first of the pairs' table) extended to triples by every other kept column:
        about ``triples`` x ``n_features`` triples (63,260 at p = 10^6), each tested for a
        three-way interaction (see :func:`triple_scan`); 0 for none.
    top : int or None, default=100
        Rows of the pairs' and the triples' tables (see :func:`pair_scan`).
    max_pairs : int, default=20,000,000
        The most pairs scanned (8 bytes a pair for their p-values): more raises ValueError. Every
        pair of p = 10^4 columns (``n_features`` at least p, 5.0 x 10^7 pairs) needs it raised:
        that took 3 minutes and 1.8 GB at n = 2,000 on 2 threads, and found a pair without marginal effects
        that no screen ranks (docs/user/genome_scale.md).
    random_state : int, RandomState or None, default=None
        Seeds the split of the rows and the forest.
    n_jobs : int, optional
        Threads of the forest and the scan; results do not depend on it.
    verbose : int, default=0
        Reports the forest's trees as they are grown.

    Returns
    -------
    PairScreen
        The screened columns, the forest's importances, the pairs' scan, the rows of each stage,
        the forest and the triples' scan.

    Raises
    ------
    ValueError
        If y does not have one value per row, holds more than two classes, or ``screen_fraction``
        leaves fewer than 10 rows to screen on or to test on.

    Warns
    -----
    UserWarning
        When 5,000 columns or more are screened on fewer than 500 rows: with few rows the forest
        cannot rank a pair's columns, so the table is exploratory.

    See Also
    --------
    pair_scan : The scan alone, on columns chosen otherwise.

    Examples
    --------
    Genotypes (0, 1, 2 copies of an allele; a :class:`~pyinterp.io.PackedGenotypes` read from a
    PLINK file works the same) at 50 variants, with an interaction of variants 3 and 7:

    >>> import numpy as np
    >>> from pyinterp.interactions import screen_pairs
    >>> rng = np.random.default_rng(0)
    >>> G = rng.binomial(2, 0.4, size=(1000, 50)).astype(np.int8)
    >>> y = 2.0 * ((G[:, 3] > 0) & (G[:, 7] > 0)) + rng.standard_normal(1000)
    >>> found = screen_pairs(G, y, n_features=10, n_estimators=50, random_state=0)
    >>> found.features[:2].tolist(), len(found.screen_rows), len(found.scan_rows), found.scan.n_pairs
    ([3, 7], 500, 500, 45)
    >>> best = found.scan.interactions[0]
    >>> best.features, best.pvalue < 1e-6
    (((3, 1), (7, 1)), True)
    """
    encoder = category_encoder(X, categorical_features)
    categorical = np.zeros(0, dtype=np.int64) if encoder is None else encoder.columns
    if encoder is not None:
        X = encoder.transform(X)
    if not hasattr(X, "shape"):
        X = np.asarray(X, dtype=np.float64)
    values_y = np.asarray(y)
    n, p = X.shape
    if len(values_y) != n:
        raise ValueError(f"y must have one value per row of X ({n}), got {len(values_y)}")
    always = (np.zeros(0, dtype=np.int64) if always_split_features is None else
              column_indices("always_split_features", always_split_features, p, column_names(X)))
    candidates = np.setdiff1d(np.arange(p), np.union1d(always, categorical))
    coded = np.flatnonzero(np.isin(always, categorical))  # among the always-split columns
    if n_features == "auto":
        n_features = min(screen_width(len(candidates)), int((1 + math.isqrt(1 + 8 * max_pairs)) // 2))
    if len(candidates) <= n_features:
        scan, found = _scans(X, _adjusted(X, values_y, always, coded), candidates, triples, top, max_pairs, n_jobs)
        return PairScreen(candidates, None, scan, np.zeros(0, dtype=np.int64), np.arange(n), None, found)
    labels = np.unique(values_y)
    classes = values_y.dtype.kind in "OUSb" or len(labels) == 2
    if classes and len(labels) != 2:
        raise ValueError(f"y holds {len(labels)} classes; screen_pairs takes numbers or two classes")
    split_seed, forest_seed = (int(s) for s in draw_seeds(python_rng(random_state), 2))
    screen_rows, scan_rows = split_rows(values_y, lambda m: int(round(screen_fraction * m)), classes,
                                        np.random.RandomState(split_seed))
    if min(len(screen_rows), len(scan_rows)) < 10:
        raise ValueError(f"screen_fraction={screen_fraction} leaves {len(screen_rows)} rows to screen on and "
                         f"{len(scan_rows)} to test on; both need 10 or more")
    if n < FEW_ROWS and p >= MANY_COLUMNS:
        warnings.warn(f"screening {p} columns on {len(screen_rows)} rows: with few rows the forest cannot rank a "
                      "pair's columns (real data with 60-200 rows and a planted pair of 3 SD: the pair in the top 5 "
                      "in 0 of 30 replicates, its columns ranked in the thousands; 10 of 10 at 2,000 rows), so "
                      "read the table as exploratory (bench/studies/genome_scale_real.py)", UserWarning, stacklevel=3)
    if n_estimators == "auto":
        n_estimators = max(300, math.ceil(300 * math.sqrt(p / 1e5)))
    Forest = RandomForestClassifier if classes else RandomForestRegressor
    forest = Forest(n_estimators, max_features=max_features, oob_score=False, random_state=forest_seed,
                    n_jobs=n_jobs, verbose=verbose, always_split_features=always if len(always) else None,
                    categorical_features=None if encoder is None else encoder.codes())
    X_screen, y_screen = take_rows(X, screen_rows), values_y[screen_rows]
    if is_packed(X_screen):  # read in place by the forest and MDI-oob, never through the file's map
        X_screen = X_screen.copy(n_jobs)
    forest.fit(X_screen, y_screen)
    importances = np.asarray(mdi_oob(forest, X_screen, y_screen, n_jobs=n_jobs), dtype=np.float64)
    del X_screen  # its repacked calls
    ranked = candidates[np.argsort(-importances[candidates], kind="stable")]
    features = ranked[:n_features]
    X_scan = take_rows(X, scan_rows)
    scan, found = _scans(X_scan, _adjusted(X_scan, values_y[scan_rows], always, coded), np.sort(features), triples,
                         top, max_pairs, n_jobs)
    return PairScreen(features, importances, scan, screen_rows, scan_rows, forest, found)


def _scans(X, y, features, triples, top, max_pairs, n_jobs):
    """Every pair of the columns `features`, then the first `triples` pairs of its table extended by
    the others (None without them), from one reading of the columns."""
    data = cell_data(X, y, features, "pair_scan")
    scan = scan_pairs(data, top, max_pairs, n_jobs)
    pairs = [[k for k, _ in row.features] for row in scan.interactions[:triples] if np.isfinite(row.pvalue)]
    if not pairs or len(features) < 3:
        return scan, None
    return scan, scan_triples(data, pairs, top, len(pairs) * len(features), n_jobs)


def screen_width(p) -> int:
    """screen_pairs' n_features="auto" for p candidate columns: 1000, growing as sqrt(p) past 10^5."""
    return 1000 if p <= 100_000 else math.ceil(1000 * math.sqrt(p / 1e5))


def _adjusted(X, y, always, coded):
    """y without the covariates' linear share (least squares with an intercept; `coded`: those
    of them, by position in `always`, that hold category codes), as numbers; y itself without
    covariates."""
    if not len(always):
        return y
    covariates = read_columns(X, always)[0]
    if np.isnan(covariates).any():
        raise ValueError("the always-split columns (covariates) hold missing values; leave those rows out")
    return adjust_for_covariates(target(y, len(y), "screen_pairs"), covariates, coded)
