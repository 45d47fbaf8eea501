"""Exhaustive tests of triples of columns for a three-way interaction: after pair_scan, which
triples hold an interaction that no pair of their columns explains (issue 49).

Each column is cut into at most three levels as in pair_scan, a triple's rows fall into the
3 x 3 x 3 cells of its levels, and its test compares one mean per cell of each of its three pairs
(main effects and every pairwise interaction) with one mean per cell of the 27, by the HC2 score
test of cell_tests.py (df up to 8). So a triple whose signal is a pair's interaction plus a third
column's own effect scores nothing; a Boolean rule of three columns (an AND of three genotypes)
has a three-way part, which it finds. Its rule: the cuts and sides of the product of three
indicators that, on top of the pairwise model, removes the most error.

The cells of a triple (a, b, c) are products of a pair's 9 cell indicators with c's 3 level
indicators: for a block of pairs, one matrix product with every column's level indicators.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._validation import IntInterval, column_indices, resolve_n_threads
from .cell_tests import TRIPLES, Results, cell_data, indicators
from .table import InteractionTable

__all__ = ["TripleScan", "triple_scan"]

# Cells of a triple computed in the orientation (a, b, c) of its pair (a, b) and third column c,
# put in the order of its sorted columns: where c falls relative to a < b, the axes to take.
_TO_SORTED = {0: (2, 0, 1), 1: (0, 2, 1), 2: (0, 1, 2)}  # c < a, a < c < b, b < c


@dataclass
class TripleScan:
    """What :func:`triple_scan` found.

    A dataclass made by :func:`triple_scan`: each parameter is kept as the attribute of the same
    name.

    Parameters
    ----------
    interactions : InteractionTable
        The ``top`` triples by p-value: each triple's Boolean rule as signed features (sign -1:
        ``x <= threshold``, +1: ``x > threshold``), with columns ``effect`` (the rule's
        coefficient on top of the pairwise model), ``statistic`` (F), ``df`` (its numerator
        degrees of freedom, up to 8), ``pvalue``, ``qvalue`` (Benjamini-Hochberg over every
        triple tested), ``threshold_1`` to ``threshold_3`` (the rule's cuts, in X's units) and
        ``n`` (the rows with all three values).
    n_triples : int
        Triples tested (those with a finite p-value): the count the q-values adjust for.
    features : ndarray of int
        The columns scanned.
    cuts : ndarray of shape (n_features, 2)
        Each scanned column's cuts between its levels (NaN where it has fewer).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.interactions import triple_scan
    >>> X = np.random.default_rng(0).standard_normal((300, 5))
    >>> scan = triple_scan(X, X[:, 0] * X[:, 1] * X[:, 2])
    >>> scan.n_triples, scan.cuts.shape, [k for k, _ in scan.interactions[0].features]
    (10, (5, 2), [0, 1, 2])
    """

    interactions: InteractionTable
    n_triples: int
    features: np.ndarray
    cuts: np.ndarray


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "features": ["array-like", None],
        "pairs": ["array-like", None],
        "top": [IntInterval(Integral, 1, None, closed="left"), None],
        "max_triples": [IntInterval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def triple_scan(X, y, *, features=None, pairs=None, top=1000, max_triples=2_000_000, n_jobs=None):
    """Test triples of columns for a three-way interaction, and find each triple's Boolean rule.

    Every triple of ``features``, or, given ``pairs``, each pair with every other column of
    ``features`` as its third: the way to reach triples among thousands of screened columns,
    from the pairs :func:`pair_scan` ranks first (an AND of three columns makes each of its pairs
    interact too). Each triple's test is its three pairs' model (main effects and pairwise
    interactions) against one mean per cell: see the module's description. With ``pairs`` chosen
    on the same rows the p-values stay valid: the three-way score is orthogonal to the pairwise
    model, which holds every pair statistic of the triple.

    Parameters
    ----------
    X : array-like, sparse matrix, packed genotypes or AnnData of shape (n_samples, n_features)
        Missing values (NaN, missing calls) leave the row out of the triples of that column.
    y : array-like of shape (n_samples,)
        Numbers, or two classes (the second of the sorted labels is 1, the first 0: a linear
        probability model).
    features : array-like of int or str, or bool mask, optional
        The columns to scan (by index, name or mask); default all.
    pairs : array-like of shape (n_pairs, 2), optional
        Pairs of columns (by index or name) to extend by every other column of ``features``;
        default every triple of ``features``. A triple reached from several pairs is tested once.
    top : int or None, default=1000
        Rows of the table: the triples with the smallest p-values (None: every triple tested).
    max_triples : int, default=2,000,000
        Refuse to scan more triples (time and memory grow with them: 8 bytes a triple for the
        p-values; 550,947 triples took 26.5 CPU seconds on one thread at 1,000 rows).
    n_jobs : int, optional
        Threads, each testing a block of triples at a time (its matrix products and tests);
        results do not depend on it.

    Returns
    -------
    TripleScan
        The ``top`` triples' table, the number tested, the columns scanned and their cuts.

    Raises
    ------
    ValueError
        If fewer than three columns are given, ``pairs`` is not pairs of two distinct columns,
        the triples exceed ``max_triples``, X has more than 2**23 rows, or y is not finite numbers
        or two classes with one value per row.

    See Also
    --------
    pair_scan : Every pair, tested against the additive model.
    screen_pairs : Screens the columns with a forest, scans their pairs, then extends the best.

    Examples
    --------
    An AND of three genotypes, beside a pair's interaction and a column's own effect:

    >>> import numpy as np
    >>> from pyinterp.interactions import triple_scan
    >>> rng = np.random.default_rng(0)
    >>> G = rng.binomial(2, 0.4, size=(2000, 12)).astype(float)
    >>> y = (2.0 * ((G[:, 1] > 0) & (G[:, 4] > 0) & (G[:, 9] > 0)) + ((G[:, 2] > 0) & (G[:, 3] > 0))
    ...      + 0.5 * G[:, 7] + rng.standard_normal(2000))
    >>> scan = triple_scan(G, y)
    >>> scan.n_triples
    220
    >>> best = scan.interactions[0]
    >>> best.features, round(best.effect, 1), best.qvalue < 1e-4
    (((1, 1), (4, 1), (9, 1)), 1.7, True)

    Extending pairs instead: each with the other 11 columns.

    >>> triple_scan(G, y, pairs=[(1, 4), (2, 3)]).n_triples
    20
    """
    return scan_triples(cell_data(X, y, features, "triple_scan"), pairs, top, max_triples, n_jobs)


def scan_triples(data, pairs, top, max_triples, n_jobs):
    """triple_scan on the columns of a CellData (screen_pairs' after its pair scan)."""
    k = len(data.features)
    if k < 3:
        raise ValueError(f"triple_scan needs at least three columns, got {k}")
    if pairs is None:
        count = k * (k - 1) * (k - 2) // 6
        if count > max_triples:
            raise ValueError(f"{k} columns make {count} triples, above max_triples={max_triples}: scan fewer columns, "
                             "extend pairs instead, or raise max_triples")
        first, third = _every_triple(k)
    else:
        first, third = _extensions(pairs, data.features, data.n_features, data.names)
        if len(third) > max_triples:
            raise ValueError(f"the pairs' extensions make {len(third)} triples, above max_triples={max_triples}: "
                             "extend fewer pairs, scan fewer columns, or raise max_triples")
    found, cuts = data.levels
    results = _scan(found, data.grid[0], top, first, third, resolve_n_threads(n_jobs))
    table, n_triples = results.table(data)
    return TripleScan(table, n_triples, data.features, cuts)


def _every_triple(k):
    """Every triple a < b < c of k columns, as its pair (a, b) (pairs x 2) and, per triple, the
    index of its pair and c."""
    a, b = np.nonzero(np.arange(k)[None, :] > np.arange(k)[:, None])
    first = np.column_stack([a, b])
    room = k - 1 - b  # the c's after b
    pair = np.repeat(np.arange(len(first)), room)
    start = np.cumsum(room) - room
    third = b[pair] + 1 + np.arange(len(pair)) - start[pair]
    return first, np.column_stack([pair, third])


def _extensions(pairs, features, n_features, names):
    """The given pairs, as positions among the scanned columns, and each distinct triple they make
    with a third column: the index of the first pair that reaches it, and its third column."""
    given = np.asarray(pairs)
    if given.ndim != 2 or given.shape[1] != 2:
        raise ValueError(f"pairs must be of shape (n_pairs, 2), got shape {given.shape}")
    columns = np.array([column_indices("pairs", [item], n_features, names)[0] for item in given.ravel()],
                       dtype=np.int64).reshape(-1, 2)
    if np.any(columns[:, 0] == columns[:, 1]):
        raise ValueError("pairs must pair two distinct columns")
    position = np.full(n_features, -1)
    position[features] = np.arange(len(features))
    first = position[columns]
    if np.any(first < 0):
        raise ValueError(f"pairs names column {int(columns[first < 0][0])}, which is not among the features scanned")
    first = np.sort(first, axis=1)
    k = len(features)
    pair = np.repeat(np.arange(len(first)), k)
    third = np.tile(np.arange(k), len(first))
    apart = (third != first[pair, 0]) & (third != first[pair, 1])
    pair, third = pair[apart], third[apart]
    triple = np.sort(np.column_stack([first[pair], third]), axis=1)
    _, once = np.unique(triple, axis=0, return_index=True)
    once = np.sort(once)  # in the order the pairs were given
    return first, np.column_stack([pair[once], third[once]])


def _scan(found, steps_y, top, first, third, n_threads):
    """Each triple (pair `first[i]`, third column c) for (i, c) in `third` tested, in that order."""
    n, k = found.shape
    level = indicators(found)
    by_level = level.reshape(n, 3, k)  # column j's level u at [:, u, j]
    results = Results(TRIPLES, top, len(third))
    # pairs per block: the three 9B x 3k products take 648 B k bytes, kept near 16 MB
    block = max(1, (1 << 24) // (648 * k))
    starts = np.searchsorted(third[:, 0], np.arange(0, len(first) + block, block))
    weights = (None, steps_y[:, None], (steps_y * steps_y)[:, None])  # count, sum y, sum y^2

    def block_cells(b):
        b0, t0, t1 = b * block, starts[b], starts[b + 1]
        if t0 == t1:
            return None
        pairs = first[b0:b0 + block]
        cells9 = by_level[:, :, None, pairs[:, 0]] * by_level[:, None, :, pairs[:, 1]]  # n x u x v x pairs
        cells9 = cells9.transpose(0, 3, 1, 2).reshape(n, -1)  # pair i's cell (u, v) at 9 i + 3 u + v
        pair, c = third[t0:t1, 0] - b0, third[t0:t1, 1]
        cells = [(cells9 if weight is None else cells9 * weight).T @ level for weight in weights]
        cells = [m.reshape(len(pairs), 9, 3, k)[pair, :, :, c].reshape(-1, 27) for m in cells]
        columns = np.column_stack([pairs[pair], c])
        order = np.argsort(columns, axis=1, kind="stable")
        where = (c > columns[:, 0]).astype(int) + (c > columns[:, 1])
        for case, axes in _TO_SORTED.items():
            rows = where == case
            for m in cells:
                m[rows] = m[rows].reshape(-1, 3, 3, 3).transpose(0, *(1 + np.array(axes))).reshape(-1, 27)
        return np.take_along_axis(columns, order, axis=1), *cells

    results.scan(range((len(first) + block - 1) // block), block_cells, n_threads)
    return results
