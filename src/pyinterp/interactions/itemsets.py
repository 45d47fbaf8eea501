"""Weighted frequent itemset mining: general purpose, and the miner behind DWP mining (``dwp.py``)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, validate_params

from .. import _core
from .._validation import INT32_MAX, IntInterval, check_budget, resolve_n_threads

__all__ = ["TooManyItemsets", "frequent_itemsets"]

TooManyItemsets = _core.TooManyItemsets


def mine_csr(indptr, items, weights, min_support, max_size, max_itemsets, n_jobs=None):
    """The core miner on validated CSR input -> (indptr, items, support) arrays. Sizes and budgets
    beyond the core's integers mean no limit and are clamped."""
    return _core.frequent_itemsets(indptr, items, weights, min_support, min(int(max_size), INT32_MAX),
                                   check_budget(max_itemsets), resolve_n_threads(n_jobs))


@validate_params(
    {
        "transactions": "no_validation",  # the core names what is wrong with them
        "weights": ["array-like", None],
        "min_support": [Interval(Real, 0, None, closed="neither")],
        "max_size": [IntInterval(Integral, 1, None, closed="left"), None],
        "max_itemsets": [IntInterval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def frequent_itemsets(transactions, weights=None, min_support=1.0, max_size=None, *, max_itemsets=2_000_000,
                      n_jobs=None):
    """Every itemset whose transactions weigh at least ``min_support`` in total.

    Parameters
    ----------
    transactions : sequence of iterables of int
        Items are any 64-bit integers; repeats within a transaction count once.
    weights : array-like of shape (n_transactions,), default=None
        Finite non-negative transaction weights; None weighs every transaction 1 (plain counts).
    min_support : float, default=1.0
        Absolute support threshold (total weight, not a fraction), inclusive: an itemset is
        reported when its support >= min_support. Must be > 0.
    max_size : int, default=None
        Largest itemset reported (None: no cap).
    max_itemsets : int, default=2_000_000
        Guard against output explosion: more frequent itemsets than this raise
        :class:`TooManyItemsets` (a MemoryError) before memory runs out.
    n_jobs : int, default=None
        Threads (scikit-learn's convention); the result, including its order, does not depend on it.

    Returns
    -------
    dict
        Maps each frequent itemset (a tuple of items in ascending order) to its support (a float).

    Raises
    ------
    TooManyItemsets
        If more than ``max_itemsets`` itemsets are frequent.
    ValueError
        If ``weights`` do not hold one finite non-negative value per transaction.

    See Also
    --------
    prevalent_sets : The same mining over a forest's signed paths, weighted by the leaves' weights.

    Notes
    -----
    Identical transactions are merged (weights summed) and infrequent items dropped before the
    recursive projection, so the cost follows the distinct transactions, not their count.

    Examples
    --------
    >>> from pyinterp.interactions import frequent_itemsets
    >>> frequent_itemsets([[1, 2, 3], [1, 2], [2, 3]], min_support=2)
    {(2,): 3.0, (1,): 2.0, (1, 2): 2.0, (3,): 2.0, (2, 3): 2.0}

    With transaction weights and only single items:

    >>> frequent_itemsets([[1, 2, 3], [1, 2], [2, 3]], weights=[0.5, 1.0, 2.0], min_support=1.5, max_size=1)
    {(2,): 3.5, (3,): 2.5, (1,): 1.5}
    """
    indptr, items = _core.transactions_csr(transactions)
    n = len(indptr) - 1
    if weights is not None:
        weights = np.array(weights, dtype=np.float64, copy=True)
        if weights.ndim != 1 or weights.shape[0] != n:
            raise ValueError(f"weights must be 1-d with one entry per transaction ({n}), got shape {weights.shape}")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("weights must be finite and non-negative")
    out_indptr, out_items, support = mine_csr(indptr, items, weights, float(min_support),
                                              INT32_MAX if max_size is None else max_size, max_itemsets, n_jobs)
    return _core.csr_dict(out_indptr, out_items, support)
