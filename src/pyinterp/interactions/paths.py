"""Signed leaf paths F_eps of a fitted forest (paper 001 eq. 6)."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .. import _core
from .._groups import check_feature_groups
from .._validation import INT32_MAX, IntInterval, check_budget, resolve_n_threads
from ..forest.view import forest_view

TooManyPathCodes = _core.TooManyPathCodes

# Codes a reading's paths may hold over all leaves (4 bytes each; ~8 GiB): hundreds of times what the
# forests of LSSFind and iRF hold on thousands of rows, far below the leaves x depth of a deep forest
# on many rows and features.
MAX_CODES = 2**31

_FIRST = {"after_filter": _core.FirstOccurrence.after_filter, "literal": _core.FirstOccurrence.literal,
          "every": _core.FirstOccurrence.every}
_WEIGHT = {"depth": _core.LeafWeight.depth, "samplesize": _core.LeafWeight.samplesize}
_SCALE = {"weighted": _core.DecreaseScale.weighted, "within_node": _core.DecreaseScale.within_node}
_COUNTS = {"weighted": _core.NodeCounts.weighted, "distinct": _core.NodeCounts.distinct}

# The options of signed_paths / distinct_paths; LSSFind declares the ones it passes on.
PATH_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="left")],
    "weight": [StrOptions(set(_WEIGHT))],
    "first_occurrence": [StrOptions(set(_FIRST))],
    "impurity_scale": [StrOptions(set(_SCALE))],
    "node_counts": [StrOptions(set(_COUNTS))],
    "feature_groups": ["array-like", None],
    "max_codes": [IntInterval(Integral, 1, None, closed="left")],
    "n_jobs": [Integral, None],
}


# Codes 2k + 1 are int32 in the core.
MAX_FEATURE = 2**30


def encode(features, names=None, n_features=None) -> np.ndarray:
    """Signed features [(k, sign), ...] -> sorted integer codes (2k for sign -1, 2k + 1 for +1).

    The integer code is how the core stores a signed feature: ``2k`` for ``(k, -1)`` (the left
    branch, ``x <= threshold``) and ``2k + 1`` for ``(k, +1)`` (the right branch). Sorting the
    codes sorts the signed features by ``(k, sign)``. :func:`decode` is the inverse.

    Parameters
    ----------
    features : iterable of (k, sign)
        One signed set: pairs of a feature k and a sign in {-1, +1}. k is a non-negative index
        (below 2**30), or a name among ``names`` (the features' or groups' names).
    names : sequence of str, default=None
        The names a k may be given by (position i names feature i); with names the indices are
        also checked against ``len(names)``.
    n_features : int, default=None
        Indices are checked against ``n_features`` (else the number of names) when given.

    Returns
    -------
    ndarray of int32 of shape (len(features),)
        The codes in ascending order (a repeated signed feature stays repeated).

    Raises
    ------
    ValueError
        If an item is not a pair (k, sign), a sign is not -1 or +1, k is negative, not an integer
        or an unknown name, or k is out of range.

    See Also
    --------
    decode : The inverse: codes -> ((k, sign), ...).

    Examples
    --------
    >>> from pyinterp.interactions import encode
    >>> encode([(1, 1), (0, -1)]).tolist()
    [0, 3]
    >>> encode([("bmi", -1), ("age", 1)], names=["age", "bmi"]).tolist()
    [1, 2]
    """
    codes = []
    for item in features:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ValueError(f"sets must hold signed sets [(k, sign), ...]; got {item!r} in the set {features!r} "
                             "(one set alone still needs the outer list: [[(k, sign), ...]])")
        k, sign = item
        if not isinstance(k, (Integral, np.integer)) and names is not None:
            position = {name: i for i, name in enumerate(names)}
            if k not in position:
                raise ValueError(f"the signed set names {k!r}, which is not among the features (or groups): "
                                 f"{list(names)[:10]}{' ...' if len(names) > 10 else ''}")
            k = position[k]
        if sign not in (-1, 1) or not isinstance(k, (Integral, np.integer)) or isinstance(k, bool) or k < 0:
            raise ValueError(f"a signed feature is (k >= 0 or a name, sign in {{-1, +1}}), got {(k, sign)!r}")
        bound = len(names) if names is not None else n_features
        if bound is not None and k >= bound:
            raise ValueError(f"the signed set names feature {k}, but there are {bound} features (or groups)")
        if k >= MAX_FEATURE:
            raise ValueError(f"the signed set names feature {k}; feature indices are below 2**30")
        codes.append(2 * int(k) + (sign > 0))
    return np.array(sorted(codes), dtype=np.int32)


# The largest code: two codes a feature, whose indices are 32-bit.
MAX_CODE = 2 * INT32_MAX + 1


def decode(codes) -> tuple:
    """Integer codes -> ((k, sign), ...) sorted by k.

    The inverse of :func:`encode`: code ``2k`` is ``(k, -1)`` and ``2k + 1`` is ``(k, +1)``.

    Parameters
    ----------
    codes : iterable of int
        Integer codes from 0 to ``2 * (2**31 - 1) + 1`` (k a 32-bit feature index), in any order.

    Returns
    -------
    tuple of (int, int)
        The signed features ``(k, sign)`` sorted by k (then sign), as Python ints.

    Raises
    ------
    ValueError
        If a code is not an integer (booleans included) or is outside that range.

    See Also
    --------
    encode : The inverse: signed features -> codes.

    Examples
    --------
    >>> from pyinterp.interactions import decode
    >>> decode([3, 0])
    ((0, -1), (1, 1))
    """
    codes = list(codes)
    if any(not isinstance(c, (Integral, np.integer)) or isinstance(c, bool) or not 0 <= c <= MAX_CODE for c in codes):
        raise ValueError(f"codes must be integers from 0 to {MAX_CODE} (2k: (k, -1), 2k + 1: (k, +1), k a 32-bit "
                         f"feature index), got {codes!r}")
    return tuple((int(c) >> 1, 1 if c & 1 else -1) for c in sorted(int(c) for c in codes))


@dataclass(frozen=True)
class SignedPaths:
    """The signed paths F_eps of a forest's leaves, as CSR arrays: what :func:`signed_paths` returns.

    One row per leaf, trees in order: the codes of row r are ``codes[indptr[r]:indptr[r + 1]]``
    (sorted; see :func:`encode` for the codes), with the leaf's weight, depth, tree index and node
    id. ``len(paths)`` is the number of leaves, and ``paths.path(r)`` decodes row r. The object is
    frozen (a dataclass): each parameter below is kept as the attribute of the same name.
    :func:`dwp` and :func:`prevalent_sets` take it in place of a forest, and :func:`path_prevalence`
    beside the forest it was read from.

    Parameters
    ----------
    indptr : ndarray of int64 of shape (n_leaves + 1,)
        Row r's codes are ``codes[indptr[r]:indptr[r + 1]]``.
    codes : ndarray of int32 of shape (indptr[-1],)
        The signed features of every leaf's path, as integer codes, sorted within each row.
    weight : ndarray of float64 of shape (n_leaves,)
        Each leaf's weight (see ``weight`` of :func:`signed_paths`); each tree's weights sum to 1 / n_trees.
    depth : ndarray of int32 of shape (n_leaves,)
        Each leaf's depth in its tree (the root at depth 0).
    tree : ndarray of int32 of shape (n_leaves,)
        The index of each leaf's tree.
    leaf : ndarray of int32 of shape (n_leaves,)
        Each leaf's node id in its tree (as the forest's ``apply`` reports it).
    names : tuple of str, default=None
        What the codes' indices name - the feature groups, or the forest's feature names - when
        known.
    n_indexed : int, default=None
        How many features (or groups) the indices run over, when known.

    See Also
    --------
    signed_paths : Reads them from a fitted forest.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.forest import RandomForestRegressor
    >>> from pyinterp.interactions import signed_paths
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> y = 1.0 * ((X[:, 0] > 0) & (X[:, 1] > 0))
    >>> forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> paths = signed_paths(forest)
    >>> len(paths), paths.n_indexed, paths.names is None
    (44, 4, True)
    >>> paths.codes[paths.indptr[0]:paths.indptr[1]].tolist(), paths.path(0)
    ([0], ((0, -1),))
    >>> int(paths.depth[0]), round(float(paths.weight[0]), 3), int(paths.tree[0]), int(paths.leaf[0])
    (2, 0.025, 0, 2)
    """

    indptr: np.ndarray
    codes: np.ndarray
    weight: np.ndarray
    depth: np.ndarray
    tree: np.ndarray
    leaf: np.ndarray
    names: tuple | None = None
    n_indexed: int | None = None

    def __len__(self) -> int:
        return len(self.weight)

    def __repr__(self) -> str:  # the arrays' contents would fill a screen
        trees = int(self.tree.max()) + 1 if len(self) else 0
        return (f"SignedPaths({len(self)} leaves of {trees} trees, {len(self.codes)} signed features"
                f"{'' if self.names is None else ', named'})")

    def path(self, row) -> tuple:
        """The signed features of one leaf as ((k, sign), ...).

        Parameters
        ----------
        row : int
            The leaf's row, an index in [-len, len) (negative ones count from the end).

        Returns
        -------
        tuple of (int, int)
            The leaf's F_eps, decoded by :func:`decode`: ``(k, sign)`` sorted by k.

        Raises
        ------
        TypeError
            If ``row`` is not an integer.
        IndexError
            If ``row`` is outside [-len, len).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.forest import RandomForestRegressor
        >>> from pyinterp.interactions import signed_paths
        >>> X = np.random.default_rng(0).standard_normal((200, 4))
        >>> y = 1.0 * ((X[:, 0] > 0) & (X[:, 1] > 0))
        >>> forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
        >>> paths = signed_paths(forest)
        >>> paths.path(0)
        ((0, -1),)
        >>> paths.path(-1)
        ((0, 1), (1, 1))
        """
        n = len(self)
        if not isinstance(row, (Integral, np.integer)) or isinstance(row, (bool, np.bool_)):
            raise TypeError(f"row must be an integer index, got {row!r}")
        if not -n <= row < n:
            raise IndexError(f"row {row} is outside [-{n}, {n}): the paths have {n} leaves")
        row = int(row) % n
        return decode(self.codes[self.indptr[row] : self.indptr[row + 1]])


@validate_params(PATH_CONSTRAINTS, prefer_skip_nested_validation=True)
def signed_paths(forest, epsilon=0.01, *, weight="depth", first_occurrence="after_filter",
                 impurity_scale="weighted", node_counts="weighted", feature_groups=None, max_codes=MAX_CODES,
                 n_jobs=None) -> SignedPaths:
    """Read F_eps, the signed path, of every leaf of a fitted pyinterp or scikit-learn forest.

    The signed path F_eps of a leaf (paper 001 eq. 6) is the set of signed features (feature k,
    sign -1 for the left branch ``x <= threshold``, +1 for the right) of the inner nodes on its
    path from the root whose impurity decrease exceeds ``epsilon``. Every leaf of every tree is
    read, trees in order and leaves in node order within a tree.

    Parameters
    ----------
    forest : fitted estimator
        A fitted pyinterp or scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``.
        A pyinterp forest of several outputs (2-d y) gives the same: paths read only the splits,
        their recorded impurity decrease (of the criterion, the mean of the outputs') and the
        in-bag weights. Multi-output scikit-learn forests are refused.
    epsilon : float, default=0.01
        A node enters its leaves' paths when its impurity decrease exceeds ``epsilon`` (>= 0).
    weight : {"depth", "samplesize"}, default="depth"
        Leaf weights: ``"depth"`` = 2^-D / n_trees (depth-weighted prevalence, D the leaf's depth)
        or ``"samplesize"`` = the leaf's share of the in-bag weight / n_trees. Weights of each
        tree sum to 1 / n_trees.
    first_occurrence : {"after_filter", "literal", "every"}, default="after_filter"
        Each feature appears once per path, at its first occurrence from the root: among the nodes
        passing epsilon (``"after_filter"``, the paper's text and code) or among all nodes
        (``"literal"``: if the feature's first node fails epsilon, the feature is absent).
        ``"every"`` drops the first-occurrence rule: each (feature, side) of the nodes passing
        epsilon appears once, so a path can hold both signs of a feature (the Python irf
        package's signed paths).
    impurity_scale : {"weighted", "within_node"}, default="weighted"
        The decrease compared with ``epsilon``: the recorded (N_t I_t - N_l I_l - N_r I_r) / N_root
        (``"weighted"``, scikit-learn's min_impurity_decrease quantity), or that divided by
        N_t / N_root (``"within_node"``, eq. 5).
    node_counts : {"weighted", "distinct"}, default="weighted"
        The node sizes N in the decrease: in-bag weights (``"weighted"``, what the impurities were
        computed with) or distinct in-bag row counts (``"distinct"``, as the lssfind and irf
        packages compute it; their published values need it).
    feature_groups : array-like of shape (n_features,), default=None
        One group name per feature (e.g. the gene of each probe); the codes then index the groups
        (in order of first appearance), a group counts as one feature - its first split on a path
        decides, by that split's direction - and ``names`` are the group names.
    max_codes : int, default=2**31
        The signed features a reading may hold over all its leaves' paths (``len(codes)``; 4 bytes
        each, so 8 GiB at the default), which grow as leaves x depth in deep trees. Past it the
        call raises :class:`TooManyPathCodes` (a MemoryError) before building any output: raise
        ``epsilon``, grow shallower trees or raise ``max_codes``.
    n_jobs : int, default=None
        Threads (scikit-learn's convention: None is 1, -1 all cores).

    Returns
    -------
    SignedPaths
        One row per leaf: its codes, weight, depth, tree and node id; ``names`` are the group
        names with ``feature_groups``, else the forest's ``feature_names_in_`` when it has them.

    Raises
    ------
    TooManyPathCodes
        If the paths would hold more than ``max_codes`` codes.

    See Also
    --------
    distinct_paths : The distinct paths with their weights summed, without one row per leaf.
    dwp : The depth-weighted prevalence of given signed sets.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.forest import RandomForestRegressor
    >>> from pyinterp.interactions import signed_paths
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> y = 1.0 * ((X[:, 0] > 0) & (X[:, 1] > 0))
    >>> forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> paths = signed_paths(forest)
    >>> len(paths), paths.path(-1), round(float(paths.weight.sum()), 3)
    (44, ((0, 1), (1, 1)), 1.0)

    With feature groups the codes index the groups:

    >>> grouped = signed_paths(forest, feature_groups=["a", "a", "b", "b"])
    >>> grouped.names, grouped.path(-1)
    (('a', 'b'), ((0, 1),))
    """
    args, names = _core_args(forest, epsilon, weight, first_occurrence, impurity_scale, node_counts, feature_groups,
                             max_codes, n_jobs)
    return SignedPaths(**_core.signed_paths(*args), names=names, n_indexed=_n_indexed(args))


@validate_params(PATH_CONSTRAINTS, prefer_skip_nested_validation=True)
def distinct_paths(forest, epsilon=0.01, *, weight="depth", first_occurrence="after_filter",
                   impurity_scale="weighted", node_counts="weighted", feature_groups=None, max_codes=MAX_CODES,
                   n_jobs=None):
    """The distinct F_eps of the forest's leaves with their weights summed, as CSR arrays.

    What any sum of leaf weights over paths needs (DWP, mining), without one row per leaf: far
    smaller than :func:`signed_paths` once epsilon has filtered the paths. Rows are in order of
    first occurrence (trees in order); the output does not depend on ``n_jobs``.

    Parameters
    ----------
    forest : fitted estimator
        A fitted pyinterp or scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``.
    epsilon : float, default=0.01
        A node enters its leaves' paths when its impurity decrease exceeds ``epsilon``.
    weight : {"depth", "samplesize"}, default="depth"
        Leaf weights, as for :func:`signed_paths`.
    first_occurrence : {"after_filter", "literal", "every"}, default="after_filter"
        Which node of a feature enters a path, as for :func:`signed_paths`.
    impurity_scale : {"weighted", "within_node"}, default="weighted"
        The decrease compared with ``epsilon``, as for :func:`signed_paths`.
    node_counts : {"weighted", "distinct"}, default="weighted"
        The node sizes in the decrease, as for :func:`signed_paths`.
    feature_groups : array-like of shape (n_features,), default=None
        One group name per feature; the codes then index the groups, as for :func:`signed_paths`.
    max_codes : int, default=2**31
        Bounds the codes of all the leaves' paths, before identical paths are merged; past it the
        call raises :class:`TooManyPathCodes`.
    n_jobs : int, default=None
        Threads (scikit-learn's convention); the output does not depend on it.

    Returns
    -------
    indptr : ndarray of int64 of shape (n_distinct + 1,)
        Path r's codes are ``codes[indptr[r]:indptr[r + 1]]``.
    codes : ndarray of int32
        The signed features of each distinct path as integer codes (see :func:`encode`), sorted
        within a path.
    weight : ndarray of float64 of shape (n_distinct,)
        The summed weights of the leaves with that path (all sum to 1).

    Raises
    ------
    TooManyPathCodes
        If the leaves' paths would hold more than ``max_codes`` codes.

    See Also
    --------
    signed_paths : One row per leaf, with its depth, tree and node id.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.forest import RandomForestRegressor
    >>> from pyinterp.interactions import decode, distinct_paths
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> y = 1.0 * ((X[:, 0] > 0) & (X[:, 1] > 0))
    >>> forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> indptr, codes, weight = distinct_paths(forest)
    >>> len(weight), round(float(weight.sum()), 3)
    (6, 1.0)
    >>> decode(codes[indptr[0]:indptr[1]]), round(float(weight[0]), 3)
    (((0, -1),), 0.35)
    """
    return named_distinct_paths(forest, epsilon, weight=weight, first_occurrence=first_occurrence,
                                impurity_scale=impurity_scale, node_counts=node_counts,
                                feature_groups=feature_groups, max_codes=max_codes, n_jobs=n_jobs)[0]


@validate_params(PATH_CONSTRAINTS, prefer_skip_nested_validation=True)
def named_distinct_paths(forest, epsilon=0.01, *, weight="depth", first_occurrence="after_filter",
                         impurity_scale="weighted", node_counts="weighted", feature_groups=None, max_codes=MAX_CODES,
                         n_jobs=None):
    """(:func:`distinct_paths`, the names its codes index or None, how many features or groups they
    index), from one reading of the forest."""
    args, names = _core_args(forest, epsilon, weight, first_occurrence, impurity_scale, node_counts, feature_groups,
                             max_codes, n_jobs)
    return _core.distinct_signed_paths(*args), names, _n_indexed(args)


def _n_indexed(core_args):
    """How many features (no groups) or groups the codes of a path reading index."""
    n_groups = core_args[-2]
    return core_args[0].n_features if n_groups == 0 else n_groups


def _core_args(forest, epsilon, weight, first_occurrence, impurity_scale, node_counts, feature_groups, max_codes,
               n_jobs):
    """The core's arguments, and what the codes will index: the group names with
    ``feature_groups``, else the forest's feature names, else None."""
    view = forest_view(forest, multi_output=True, in_place=True)  # no node values or responses are read
    groups = check_feature_groups(feature_groups, view.core.n_features)
    if groups is not None:
        names = groups.names
    else:
        names = getattr(view.estimator, "feature_names_in_", None)
        names = None if names is None else tuple(names)
    return (view.core, float(epsilon), _FIRST[first_occurrence], _WEIGHT[weight], _SCALE[impurity_scale],
            _COUNTS[node_counts], resolve_n_threads(n_jobs), None if groups is None else groups.index,
            0 if groups is None else len(groups.names), check_budget(max_codes)), names
