"""Depth-weighted prevalence (paper 001 Def. 3): DWP(S) = sum over leaves of w_leaf * 1{S in F_eps}.

With the default leaf weight 2^-D / n_trees this is the exact finite-forest estimator of
eq. (7): every leaf of every tree is enumerated, nothing is resampled."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, validate_params

from .. import _core
from .._csr import to_csr
from .._validation import IntInterval, resolve_n_threads
from .itemsets import mine_csr
from .paths import PATH_CONSTRAINTS, SignedPaths, encode, named_distinct_paths
from .table import InteractionTable

# Sets at the bound 2^-|S| are summed from many leaf weights: compare thresholds with this slack.
FLOAT_SLACK = 1e-12


def _weighted_paths(forest, epsilon, path_options):
    """(indptr, codes, weight, names, n): given SignedPaths as they are, else the forest's distinct
    paths; names: what the codes index, if known; n: how many features or groups they index, if known."""
    if isinstance(forest, SignedPaths):
        ignored = sorted(set(path_options) - {"n_jobs"})
        if ignored:  # they shape the reading of a forest's paths, done already
            raise ValueError(f"{', '.join(ignored)} applied when the SignedPaths were read: pass them to "
                             "signed_paths, or give the forest")
        return forest.indptr, forest.codes, forest.weight, forest.names, forest.n_indexed
    (indptr, codes, weight), names, n = named_distinct_paths(forest, epsilon, **path_options)
    return indptr, codes, weight, names, n


def match_codes(paths: SignedPaths, code_sets):
    """(indptr, rows): the path rows whose codes contain each set of integer codes, CSR over sets."""
    return _core.match_sets(paths.indptr, paths.codes, *to_csr(code_sets))


def sum_codes(indptr, codes, code_sets, values, n_jobs=None) -> np.ndarray:
    """(n_sets, m): per set of integer codes, the sum of ``values`` (n_rows, m) over the CSR path
    rows (indptr, codes) containing it, summed in row order."""
    values = np.ascontiguousarray(values, dtype=np.float64).reshape(len(indptr) - 1, -1)
    return _core.match_sums(indptr, codes, *to_csr(code_sets), values, resolve_n_threads(n_jobs))


def matches(paths: SignedPaths, sets):
    """(indptr, rows): the path rows whose F_eps contains each signed set (features by index or
    by the paths' names), as CSR over the sets."""
    return match_codes(paths, [encode(s, paths.names) for s in sets])


def dwp(forest, sets, epsilon=0.01, **path_options) -> np.ndarray:
    """Depth-weighted prevalence of each given signed set in a fitted forest.

    DWP(S) (paper 001 Def. 3) is the sum over all leaves of the leaf's weight times whether S is
    contained in the leaf's signed path F_eps. With the default leaf weight 2^-D / n_trees this is
    the exact finite-forest estimator of eq. (7): every leaf of every tree is enumerated, nothing
    is resampled. A set holding both signs of a feature has DWP 0; the empty set has DWP 1.

    Parameters
    ----------
    forest : fitted estimator or SignedPaths
        A fitted pyinterp or scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``,
        or precomputed :class:`SignedPaths` (then ``epsilon`` and the path options are those the
        paths were made with: another path option than ``n_jobs`` is an error).
    sets : list of signed sets
        ``[[(k, sign), ...], ...]``: each set a list of (feature, sign) pairs, sign -1 for
        ``x <= threshold`` and +1 for ``x > threshold``; k is a feature index or name (a group
        index or name with ``feature_groups``). One set alone still needs the outer list.
    epsilon : float, default=0.01
        A node enters its leaves' paths when its impurity decrease exceeds ``epsilon``.
    **path_options
        Passed to the path reading, as for :func:`signed_paths`: ``weight``,
        ``first_occurrence``, ``impurity_scale``, ``node_counts``, ``feature_groups``,
        ``max_codes``, ``n_jobs``.

    Returns
    -------
    ndarray of float64 of shape (len(sets),)
        The DWP of each set, in [0, 1].

    Raises
    ------
    ValueError
        If a set is not a list of (k, sign) pairs or names an unknown feature.

    See Also
    --------
    prevalent_sets : Every signed set whose DWP passes a threshold.
    signed_paths : The leaves' paths, which can be read once and passed as ``forest``.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.forest import RandomForestRegressor
    >>> from pyinterp.interactions import dwp
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> y = 1.0 * ((X[:, 0] > 0) & (X[:, 1] > 0))
    >>> forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> np.round(dwp(forest, [[(0, 1), (1, 1)], [(0, 1)], [(0, 1), (0, -1)], []]), 3).tolist()
    [0.25, 0.45, 0.0, 1.0]

    Features by group name, with ``feature_groups`` passed on to the path reading:

    >>> np.round(dwp(forest, [[("a", 1)]], feature_groups=["a", "a", "b", "b"]), 3).tolist()
    [0.5]
    """
    indptr, codes, weight, names, n = _weighted_paths(forest, epsilon, path_options)
    return sum_codes(indptr, codes, [encode(s, names, n) for s in sets], weight, path_options.get("n_jobs"))[:, 0]


def rank_key(x):
    """Scores rounded to 10 decimals for ranking: sets at the bound ``2^-|S|`` differ only by float
    summation noise and then tie, so the documented tie-break decides."""
    return np.round(np.asarray(x, dtype=np.float64), 10)


def score_table(indptr, codes, values, feature_names=None) -> InteractionTable:
    """DWP records of the code sets (CSR) ranked by rho = log2(DWP) / ``|S|`` (LSSrank), largest
    first; ties by DWP, then by the signed features, so the order is deterministic. Ranked and
    decoded with numpy: a mining run can report millions of sets."""
    values = np.asarray(values, dtype=np.float64)
    sizes = np.diff(indptr)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    codes = np.asarray(codes, dtype=np.int64)[np.lexsort((codes, owner))]  # ascending within each set
    with np.errstate(divide="ignore"):
        rho = np.log2(values) / np.maximum(sizes, 1)
    # The code 2k + (sign > 0) orders like (k, sign), and a padding below every code puts a set
    # before its extensions: comparing padded rows compares the signed features as tuples.
    padded = np.full((len(sizes), int(sizes.max(initial=0))), -1, dtype=np.int64)
    padded[owner, np.arange(len(codes)) - indptr[owner]] = codes
    order = np.lexsort([*padded.T[::-1], -rank_key(values), -rank_key(rho)])
    pairs = list(zip((codes >> 1).tolist(), np.where(codes & 1, 1, -1).tolist()))
    bounds = indptr.tolist()
    features = [tuple(pairs[bounds[i]:bounds[i + 1]]) for i in order.tolist()]
    return InteractionTable(features, {"dwp": values[order], "adjusted_dwp": np.exp2(sizes[order]) * values[order],
                                       "rho": rho[order]}, feature_names)


@validate_params(
    {"min_dwp": [Interval(Real, 0, 1, closed="right")], "max_order": [IntInterval(Integral, 1, None, closed="left")],
     "epsilon": PATH_CONSTRAINTS["epsilon"], "max_itemsets": [IntInterval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=False,  # path_options are checked by named_distinct_paths
)
def prevalent_sets(forest, min_dwp, max_order=3, epsilon=0.01, *, max_itemsets=2_000_000,
                   **path_options) -> InteractionTable:
    """Every signed set S with 1 <= ``|S|`` <= max_order and DWP(S) >= min_dwp, exactly.

    Mining is weighted frequent-itemset mining (:func:`frequent_itemsets`) over the leaves' F_eps
    with the leaf weights as transaction weights (identical paths merged first). DWP is
    anti-monotone, so the threshold prunes without loss.

    Parameters
    ----------
    forest : fitted estimator or SignedPaths
        A fitted pyinterp or scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``,
        or precomputed :class:`SignedPaths` (then ``epsilon`` and the path options are those the
        paths were made with: another path option than ``n_jobs`` is an error).
    min_dwp : float
        The DWP threshold, in (0, 1]; compared with a slack of 1e-12 for float summation.
    max_order : int, default=3
        The largest set size reported (>= 1).
    epsilon : float, default=0.01
        A node enters its leaves' paths when its impurity decrease exceeds ``epsilon``.
    max_itemsets : int, default=2_000_000
        More sets passing the threshold than this raise :class:`TooManyItemsets` (a MemoryError):
        raise ``min_dwp`` or lower ``max_order``.
    **path_options
        Passed to the path reading, as for :func:`signed_paths`: ``weight``,
        ``first_occurrence``, ``impurity_scale``, ``node_counts``, ``feature_groups``,
        ``max_codes``, ``n_jobs`` (also the miner's threads).

    Returns
    -------
    InteractionTable
        One row per set, with columns ``dwp``, ``adjusted_dwp`` = ``2^|S|`` DWP (at most 1,
        Theorem 1) and ``rho`` = log2(DWP) / ``|S|`` (LSSrank), ranked by rho, largest first; ties by
        DWP, then by the signed features, so the order is deterministic. Features are named by
        the paths' names (groups or the forest's feature names) when known.

    Raises
    ------
    TooManyItemsets
        If more than ``max_itemsets`` sets pass the threshold.

    See Also
    --------
    dwp : The DWP of given sets.
    LSSFind : The estimator that mines, filters and ranks these sets.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.forest import RandomForestRegressor
    >>> from pyinterp.interactions import prevalent_sets
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> y = 1.0 * ((X[:, 0] > 0) & (X[:, 1] > 0))
    >>> forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> table = prevalent_sets(forest, min_dwp=0.2, max_order=2)
    >>> len(table), table.features[0], table.label(table.features[0])
    (6, ((0, 1), (1, 1)), 'x0+ & x1+')
    >>> np.round(table["dwp"], 3).tolist()
    [0.25, 0.45, 0.45, 0.2, 0.325, 0.325]
    """
    indptr, codes, weight, names, _ = _weighted_paths(forest, epsilon, path_options)
    indptr, items, support = mine_csr(indptr, codes.astype(np.int64), weight,
                                      max(min_dwp - FLOAT_SLACK, min_dwp / 2), max_order, max_itemsets,
                                      path_options.get("n_jobs"))
    return score_table(indptr, items, support, names)
