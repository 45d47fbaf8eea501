"""Exhaustive tests of every pair of columns for interaction: the confirmation stage after a screen
(issue 49), where a forest's importance has narrowed p = 10^5-10^6 variants to a few thousand.

Each column is cut into at most three levels: a column of at most three values (genotypes 0, 1,
2) keeps one level per value, cut at the midpoints; any other at its tertiles. A pair's rows (those
with both values) then fall into the 3 x 3 cells of its levels, and everything below comes from
each cell's row count, sum of y and sum of y^2 (cell_tests.py):

- the interaction test: the additive model (a step per level of each column: no assumption on
  the shape of either column's own effect, dominance included) against the saturated one (one
  mean a cell: none on the interaction's), the two-locus test of the epistasis literature, as a
  score test with heteroskedasticity-consistent (HC2) variance. Measured under nulls
  (tests/test_pair_scan.py): uniform at n = 2,000 with common alleles, with a 0/1 target and with
  noise whose variance depends on a genotype (where the pooled-variance F test gave 2-3 times too
  many p-values below 0.01); conservative with rare alleles at n = 500 (3.1% below 0.05), whose
  cells hold few rows;
- the pair's Boolean rule: the cuts (one per column) whose rule 1(x_a on a side of its cut)
  1(x_b on a side of its cut), added to the additive model, removes the most squared error, on
  the sides whose cell alone explains most of y: the cell where the interaction lives, as in the
  LSS model. The rule's coefficient on top of the additive model is the table's ``effect``.

The counts and sums of all pairs at once are three matrix products of the levels' indicator
matrices (BLAS): L_u' L_v counts the rows of cell (u, v) of every pair, (y L_u)' L_v and
(y^2 L_u)' L_v sum y and y^2 over it; as integers in float64, exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._validation import IntInterval, resolve_n_threads
from .cell_tests import PAIRS, Results, cell_data, indicators
from .table import InteractionTable

__all__ = ["PairScan", "pair_scan"]

# pair_scan's default refusal: 8 bytes a pair for the p-values.
MAX_PAIRS = 20_000_000


@dataclass
class PairScan:
    """What :func:`pair_scan` found.

    A dataclass made by :func:`pair_scan`: each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    interactions : InteractionTable
        The ``top`` pairs by p-value: each pair's Boolean rule as signed features (sign -1:
        ``x <= threshold``, +1: ``x > threshold``) with columns ``effect`` (the rule's
        coefficient on top of the additive model), ``statistic`` (F), ``df`` (its numerator
        degrees of freedom), ``pvalue``, ``qvalue`` (Benjamini-Hochberg over every pair tested),
        ``threshold_1``, ``threshold_2`` (the rule's cuts, in X's units) and ``n`` (the rows with
        both values).
    n_pairs : int
        Pairs tested (those with a finite p-value): the count the q-values adjust for.
    features : ndarray of int
        The columns scanned.
    cuts : ndarray of shape (n_features, 2)
        Each scanned column's cuts between its levels (NaN where it has fewer).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.interactions import pair_scan
    >>> X = np.random.default_rng(0).standard_normal((300, 4))
    >>> scan = pair_scan(X, X[:, 0] * X[:, 1])
    >>> scan.n_pairs, scan.cuts.shape, scan.interactions[0].features[0][0]
    (6, (4, 2), 0)
    """

    interactions: InteractionTable
    n_pairs: int
    features: np.ndarray
    cuts: np.ndarray


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "features": ["array-like", None],
        "top": [IntInterval(Integral, 1, None, closed="left"), None],
        "max_pairs": [IntInterval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def pair_scan(X, y, *, features=None, top=1000, max_pairs=MAX_PAIRS, n_jobs=None):
    """Test every pair of the given columns for interaction, and find each pair's Boolean rule.

    See the module's description for the test and the rule. Exhaustive: at 1,000 columns
    (about 5 x 10^5 pairs) and 2,000 rows it takes seconds, so it confirms what a screen keeps
    (a forest's top features by importance, on other rows than the scan's to keep its p-values
    valid).

    Parameters
    ----------
    X : array-like, sparse matrix, packed genotypes or AnnData of shape (n_samples, n_features)
        Missing values (NaN, missing calls) leave the row out of the pairs of that column.
    y : array-like of shape (n_samples,)
        Numbers, or two classes (the second of the sorted labels is 1, the first 0: a linear
        probability model).
    features : array-like of int or str, or bool mask, optional
        The columns to scan (by index, name or mask); default all.
    top : int or None, default=1000
        Rows of the table: the pairs with the smallest p-values (None: every pair tested).
    max_pairs : int, default=20,000,000
        Refuse to scan more pairs (memory grows with them: 8 bytes a pair for the p-values).
    n_jobs : int, optional
        Threads, each testing a block of pairs at a time (its matrix products and tests); results
        do not depend on it.

    Returns
    -------
    PairScan
        The ``top`` pairs' table, the number of pairs tested, the columns scanned and their cuts.

    Raises
    ------
    ValueError
        If fewer than two columns are given, they make more than ``max_pairs`` pairs, X has more
        than 2**23 rows, or y is not finite numbers or two classes with one value per row.

    See Also
    --------
    screen_pairs : Screens the columns with a forest first, then scans the kept ones.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.interactions import pair_scan
    >>> rng = np.random.default_rng(0)
    >>> G = rng.binomial(2, 0.4, size=(2000, 30)).astype(float)
    >>> y = 1.0 * ((G[:, 3] > 0) & (G[:, 7] > 1)) + rng.standard_normal(2000)
    >>> scan = pair_scan(G, y)
    >>> scan.n_pairs
    435
    >>> best = scan.interactions[0]
    >>> best.features, round(best.effect, 2), best.pvalue < 1e-6
    (((3, 1), (7, 1)), 0.93, True)
    """
    return scan_pairs(cell_data(X, y, features, "pair_scan"), top, max_pairs, n_jobs)


def scan_pairs(data, top, max_pairs, n_jobs):
    """pair_scan on the columns of a CellData (screen_pairs scans their triples from it too)."""
    k = len(data.features)
    if k < 2:
        raise ValueError(f"pair_scan needs at least two columns to pair, got {k}")
    if k * (k - 1) // 2 > max_pairs:
        raise ValueError(f"{k} columns make {k * (k - 1) // 2} pairs, above max_pairs={max_pairs}: scan fewer "
                         "columns (a screen's top features) or raise max_pairs")
    found, cuts = data.levels
    results = _scan(found, data.grid[0], top, resolve_n_threads(n_jobs))
    table, n_pairs = results.table(data)
    return PairScan(table, n_pairs, data.features, cuts)


def _scan(found, steps_y, top, n_threads):
    """Every pair a < b of the columns' levels tested, in the order of a, then b."""
    n, k = found.shape
    level = indicators(found)
    results = Results(PAIRS, top, k * (k - 1) // 2)
    # a's per block: the three 3B x 3k products take 216 B k bytes, kept near 16 MB, and the block's
    # pairs' cells about as much
    block = max(1, min(k, (1 << 24) // (216 * k)))
    weights = (None, steps_y[:, None], (steps_y * steps_y)[:, None])  # count, sum y, sum y^2

    def block_cells(a0):
        a1 = min(k, a0 + block)
        pick = np.concatenate([np.arange(a0, a1) + u * k for u in range(3)])
        a_idx, b_idx = np.nonzero(np.arange(a0, k)[None, :] > np.arange(a0, a1)[:, None])
        # only the columns b >= a0 (views of level, one per b's level), which halves the products
        right = [level[:, u * k + a0:(u + 1) * k] for u in range(3)]
        chosen, cells = level[:, pick], []
        for weight in weights:
            left = (chosen if weight is None else chosen * weight).T
            products = np.stack([(left @ part).reshape(3, a1 - a0, k - a0) for part in right])  # (b's, a's, a, b)
            cells.append(products.transpose(2, 3, 1, 0)[a_idx, b_idx].reshape(-1, 9))
        return np.column_stack([a_idx + a0, b_idx + a0]), *cells

    results.scan(range(0, k - 1, block), block_cells, n_threads)
    return results
