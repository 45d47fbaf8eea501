"""Random intersection trees (Shah & Meinshausen 2014) in the form iRF uses."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .. import _core
from .._csr import to_tuples, unique_rows
from .._seeds import root_seed
from .._validation import INT32_MAX, IntInterval, check_budget, check_up_front, resolve_n_threads


TooManyIntersections = _core.TooManyIntersections

# Nodes RIT may grow over all its trees (iRF's defaults, 4 levels of 2 children, grow at most 500 x 15).
MAX_NODES = 10_000_000


def rit_csr(indptr, codes, weights, *, depth=5, n_children=2.0, min_size=2, n_trees=500, root_sets=2,
            report="leaves", seed=0, max_nodes=MAX_NODES, n_jobs=None):
    """The core RIT on CSR int32 sets -> (indptr, codes, found) of the distinct reported sets; the
    parameters are validated by the callers (random_intersection_trees, IterativeRandomForest)."""
    if n_trees <= max_nodes:  # else the core refuses it against the budget (TooManyIntersections)
        check_up_front("n_trees", n_trees, 24, "its trees' result lists")  # one std::vector per tree
    return _core.random_intersection_trees(indptr, codes, weights, depth, float(n_children), min_size, n_trees, seed,
                                           resolve_n_threads(n_jobs), root_sets, report == "nodes",
                                           check_budget(max_nodes))


@validate_params(
    {
        "sets": "no_validation",  # the core names what is wrong with them
        "weights": ["array-like", None],
        "depth": [IntInterval(Integral, 1, INT32_MAX, closed="both")],
        "n_children": [Interval(Real, 1, None, closed="left")],
        "min_size": [IntInterval(Integral, 1, INT32_MAX, closed="both")],
        "n_trees": [IntInterval(Integral, 0, 2**62, closed="both")],
        "max_nodes": [IntInterval(Integral, 1, 2**62, closed="both")],
        "root_sets": [IntInterval(Integral, 1, 2, closed="both")],
        "report": [StrOptions({"leaves", "nodes"})],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def random_intersection_trees(sets, weights=None, *, depth=5, n_children=2.0, min_size=2, n_trees=500, root_sets=2,
                              report="leaves", max_nodes=MAX_NODES, random_state=None, n_jobs=None) -> dict:
    """Candidate interactions as intersections of randomly drawn sets.

    Random intersection trees (Shah & Meinshausen 2014) in the form iRF uses. Each of ``n_trees``
    trees starts from the intersection of ``root_sets`` sets drawn with probability proportional
    to ``weights``; every node has ``n_children`` children, each the node intersected with one
    more drawn set; a node is a leaf at ``depth`` levels (the root is level 1) or when it has
    shrunk to ``min_size`` items, and smaller sets are dropped. Sets that survive many
    intersections are items that occur together often among the heavy sets.

    Parameters
    ----------
    sets : sequence of iterables of int
        The sets to draw from (e.g. the signed paths' codes of a forest's leaves). Items are
        non-negative integers below 2^31; repeats within a set count once.
    weights : array-like of shape (n_sets,), default=None
        Finite non-negative drawing weights, not all zero; None draws every set equally.
    depth : int, default=5
        Levels of a tree, the root included (>= 1).
    n_children : float, default=2.0
        Children of every inner node (>= 1); a fraction is honoured at random (2.5: 2 or 3
        children, 3 half the time).
    min_size : int, default=2
        A node of this many items is a leaf, and smaller intersections are dropped (>= 1).
    n_trees : int, default=500
        Trees grown (0 gives an empty result).
    root_sets : {1, 2}, default=2
        Sets intersected at a tree's root: 2 as in R iRF; 1, a single drawn set, as in the Python
        irf.
    report : {"leaves", "nodes"}, default="leaves"
        ``"leaves"`` reports the leaves (R iRF); ``"nodes"`` every node, the root included (the
        Python irf).
    max_nodes : int, default=10_000_000
        Work and output grow as n_children^depth: past ``max_nodes`` nodes drawn over all trees
        (kept or dropped for their size; each tree's root counts) the call raises
        :class:`TooManyIntersections` (a MemoryError).
    random_state : int, RandomState instance or None, default=None
        Seeds the draws. Tree t draws from its own stream of ``random_state``, so any ``n_jobs``
        gives the same result.
    n_jobs : int, default=None
        Threads (scikit-learn's convention); the result does not depend on it.

    Returns
    -------
    dict
        Maps each reported set (a sorted tuple of items) to the number of trees that reported it.

    Raises
    ------
    TooManyIntersections
        If the trees would draw more than ``max_nodes`` nodes.
    ValueError
        If an item is negative or not below 2^31, or the weights are not finite, non-negative, one
        per set and not all zero.

    See Also
    --------
    IterativeRandomForest : Runs these trees on the signed paths of its forests' leaves.

    Examples
    --------
    >>> from pyinterp.interactions import random_intersection_trees
    >>> sets = [[1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 6], [2, 3, 4]]
    >>> found = random_intersection_trees(sets, depth=3, n_trees=20, random_state=0)
    >>> sorted(found.items(), key=lambda kv: -kv[1])[:3]
    [((1, 2), 10), ((2, 3), 7), ((1, 2, 3), 2)]
    """
    indptr, items = _core.transactions_csr(sets)
    if items.size and (items.min() < 0 or items.max() >= 2**31):
        raise ValueError("RIT items must be integers in [0, 2^31)")
    n = len(indptr) - 1
    w = np.ones(n) if weights is None else np.array(weights, dtype=np.float64, copy=True)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or (n and not np.any(w > 0)):
        raise ValueError("weights must be finite, non-negative, one per set, and not all zero")
    indptr, codes = unique_rows(indptr, items)
    out_indptr, out_codes, found = rit_csr(indptr, codes, w, depth=depth, n_children=n_children, min_size=min_size,
                                           n_trees=n_trees, root_sets=root_sets, report=report,
                                           seed=root_seed(random_state), max_nodes=max_nodes, n_jobs=n_jobs)
    return dict(zip(to_tuples(out_indptr, out_codes), found.tolist()))
