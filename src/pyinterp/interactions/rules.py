"""A signed interaction as a rule on the forest's thresholds: an indicator feature and the R iRF
package's interaction prediction (``interactPredict``), from the leaves whose path contains it."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy import sparse

from .._validation import FOREST_X, validate_data
from ..forest.rules import Rule, check_precision, feature_labels
from ..forest.view import forest_view
from .dwp import matches
from .paths import SignedPaths, decode, encode


class NoThresholdsError(ValueError):
    """No leaf's path of the forest contains the set (``features``, feature indices): it has no
    thresholds there. iRF finds sets on its bootstrap forests, which its ``forest_`` need not hold."""

    def __init__(self, features):
        self.features = features
        super().__init__(f"no leaf's path contains the interaction {features}: it has no thresholds in this forest")


class InteractionRule:
    """A signed interaction S with thresholds from the forest's splits.

    Each leaf whose signed path contains S (in the finder's reading of the paths) gives, per
    signed feature of S, the tightest bound its path sets in that direction: for (k, -) the
    smallest threshold t of a split on k the path leaves to the left (x_k <= t), for (k, +) the
    largest of one it leaves to the right (x_k > t). That leaf's region, seen through S, is the box
    of those half-spaces. Every split on the leaf's path counts for the bounds, not only those of
    its signed path.

    Made by :func:`interaction_rule` and by the finders' ``rule`` methods
    (:meth:`LSSFind.rule <pyinterp.interactions.LSSFind.rule>`,
    :meth:`IterativeRandomForest.rule <pyinterp.interactions.IterativeRandomForest.rule>`) rather
    than directly. ``str(rule)`` reads as ``GENE12 <= 3.4 and GENE40 > 0.7 -> 2.31`` (the
    thresholds and value to ``precision`` significant digits); ``repr`` adds the number of leaves.

    Parameters
    ----------
    features : sequence of (int, int)
        The signed set S: pairs (feature index, sign), sign -1 for ``x <= threshold`` and +1 for
        ``x > threshold``.
    leaf_bounds : ndarray of shape (n_leaves, ``|S|``)
        Per leaf containing S and signed feature, the tightest bound the leaf's path sets.
    leaf_values : ndarray of shape (n_leaves,)
        Each such leaf's value (its mean response, or a class fraction).
    leaf_weights : ndarray of shape (n_leaves,)
        Each such leaf's in-bag size (weighted sample count).
    names : list of str
        The column labels of all the forest's features, which the rule prints.
    estimator : fitted forest
        The forest the rule comes from: :meth:`columns` checks X against its training columns.
    precision : int, default=4
        Significant digits of the printed thresholds and value, from 1 to 17.

    Attributes
    ----------
    features : tuple of (int, int)
        The signed set S, as given.
    thresholds : ndarray of shape (``|S|``,)
        Per signed feature, the weighted median of the leaves' bounds, each leaf weighted by its
        in-bag size: one threshold where a feature is split at many values across the forest. A
        median, not a mean, so it is a threshold some tree uses, and bounds of a few leaves far off
        (deep splits on small nodes) do not move it. :meth:`indicator` uses these.
    value : float
        The size-weighted mean of the leaves' values (for a classifier, of the fraction of
        ``class_id``): the forest's estimate of the mean response in the rule's cell.
    leaf_bounds : ndarray of shape (n_leaves, ``|S|``)
        The leaves containing S: their bounds (what :meth:`predict` uses).
    leaf_values : ndarray of shape (n_leaves,)
        Their values.
    leaf_weights : ndarray of shape (n_leaves,)
        Their in-bag sizes.
    names : list of str
        The column labels the rule prints with.
    precision : int
        Significant digits of the printed numbers.

    See Also
    --------
    interaction_rule : Makes the rule of a signed set on a forest.
    pyinterp.forest.Rule : The plain rule (:attr:`rule`).

    Examples
    --------
    y is high when x0 and x1 are low (``make_lss``); the forest's leaves give the rule its
    thresholds:

    >>> import numpy as np
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.datasets import make_lss
    >>> from pyinterp.interactions import interaction_rule, signed_paths
    >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
    >>> truth[0]
    ((0, -1), (1, -1))
    >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
    >>> rule = interaction_rule(forest, signed_paths(forest), truth[0])
    >>> print(rule)
    x0 <= 0.3889 and x1 <= 0.5243 -> 1.357
    >>> rule
    InteractionRule(x0 <= 0.3889 and x1 <= 0.5243 -> 1.357; 997 leaves)
    >>> inside = rule.indicator(X)
    >>> round(float(y[inside].mean()), 3), round(float(y[~inside].mean()), 3)
    (1.371, 0.344)
    """

    def __init__(self, features, leaf_bounds, leaf_values, leaf_weights, names, estimator, precision=4):
        self.features = tuple(features)
        self.leaf_bounds = leaf_bounds
        self.leaf_values = leaf_values
        self.leaf_weights = leaf_weights
        self.thresholds = np.array([_weighted_median(leaf_bounds[:, j], leaf_weights)
                                    for j in range(len(self.features))])
        self.value = float(np.average(leaf_values, weights=leaf_weights))
        self.names = names
        self._estimator = estimator
        self.precision = check_precision(precision)

    @property
    def rule(self) -> Rule:
        """The rule with the median thresholds, as a :class:`pyinterp.forest.rules.Rule`.

        Its conditions are ``(feature, "<=", threshold)`` for a sign -1 and ``(feature, ">",
        threshold)`` for +1, with :attr:`thresholds`; its value is :attr:`value`. A new object on
        each access.

        Examples
        --------
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.datasets import make_lss
        >>> from pyinterp.interactions import interaction_rule, signed_paths
        >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
        >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
        >>> rule = interaction_rule(forest, signed_paths(forest), truth[0]).rule
        >>> rule
        Rule(x0 <= 0.3889 and x1 <= 0.5243 -> 1.357)
        >>> [(k, op, round(t, 3)) for k, op, t in rule.conditions]
        [(0, '<=', 0.389), (1, '<=', 0.524)]
        """
        return Rule([(k, "<=" if s < 0 else ">", t) for (k, s), t in zip(self.features, self.thresholds)],
                    self.value, self.names, self.precision)

    def __str__(self) -> str:
        return str(self.rule)

    def __repr__(self) -> str:
        return f"InteractionRule({self}; {len(self.leaf_weights)} leaves)"

    def columns(self, X) -> np.ndarray:
        """(n, ``|S|``) float64: X's columns of S, X checked against the forest's training columns.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows with the forest's training columns (count, and names when it was fitted on
            named columns); NaN is allowed.

        Returns
        -------
        ndarray of float64 of shape (n_samples, ``|S|``)
            The columns of S's features, in the order of :attr:`features` (dense, also for a
            sparse X).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.datasets import make_lss
        >>> from pyinterp.interactions import interaction_rule, signed_paths
        >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
        >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
        >>> rule = interaction_rule(forest, signed_paths(forest), truth[1])
        >>> rule.features
        ((2, -1), (3, -1))
        >>> rule.columns(np.arange(12.0).reshape(2, 6)).tolist()
        [[2.0, 3.0], [8.0, 9.0]]
        """
        X = validate_data(self._estimator, X, reset=False, **FOREST_X)
        columns = X[:, [k for k, _ in self.features]]
        return (columns.toarray() if sparse.issparse(columns) else np.asarray(columns)).astype(np.float64)

    def indicator(self, X) -> np.ndarray:
        """Whether each row of X lies in the rule's cell: x_k <= t_k for every (k, -) and
        x_k > t_k for every (k, +), with the median thresholds. A missing value is outside.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows with the forest's training columns (checked as :meth:`columns` checks them).

        Returns
        -------
        ndarray of bool of shape (n_samples,)
            True where the row satisfies every condition with :attr:`thresholds`: an indicator
            feature of the interaction.

        See Also
        --------
        predict : The forest's view of the cell, leaf by leaf.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.datasets import make_lss
        >>> from pyinterp.interactions import interaction_rule, signed_paths
        >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
        >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
        >>> rule = interaction_rule(forest, signed_paths(forest), truth[0])
        >>> print(rule)
        x0 <= 0.3889 and x1 <= 0.5243 -> 1.357
        >>> new = np.array([[0.2, 0.2, 0.9, 0.9, 0.5, 0.5],
        ...                 [0.9, 0.2, 0.9, 0.9, 0.5, 0.5],
        ...                 [np.nan, 0.2, 0.9, 0.9, 0.5, 0.5]])
        >>> rule.indicator(new).tolist()
        [True, False, False]
        """
        return _inside(self.columns(X), self.thresholds, self._signs())

    def predict(self, X) -> np.ndarray:
        """The R iRF package's interaction prediction (``interactPredict``): the size-weighted mean,
        over the leaves containing S, of the leaf's value times whether x lies in that leaf's own
        box through S (its bounds, not the medians). Every leaf is used (the R package samples up to
        ``nrule`` of them); for a classifier the value is the fraction of ``class_id`` in every such
        leaf (the R package takes the class-1 leaves as 1). A missing value is outside every box.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows with the forest's training columns (checked as :meth:`columns` checks them).

        Returns
        -------
        ndarray of float64 of shape (n_samples,)
            Per row, sum over the leaves of weight x value x (row in the leaf's box), divided by
            the leaves' total weight: 0 for a row outside every box, :attr:`value` for a row
            inside all of them.

        See Also
        --------
        indicator : The cell with the median thresholds.

        Notes
        -----
        Leaves with the same box are merged first, and the rows are processed in blocks of about
        16 MB of comparisons, so memory stays bounded for many rows and leaves.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> from pyinterp.datasets import make_lss
        >>> from pyinterp.interactions import interaction_rule, signed_paths
        >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
        >>> forest = RandomForestRegressor(20, random_state=0).fit(X, y)
        >>> rule = interaction_rule(forest, signed_paths(forest), truth[0])
        >>> new = np.array([[0.2, 0.2, 0.9, 0.9, 0.5, 0.5],
        ...                 [0.45, 0.2, 0.9, 0.9, 0.5, 0.5],
        ...                 [0.9, 0.2, 0.9, 0.9, 0.5, 0.5]])
        >>> np.round(rule.predict(new), 3).tolist()
        [1.06, 0.416, 0.0]
        >>> rule.indicator(new).tolist()  # x0 = 0.45 is above the median threshold, inside some leaves' boxes
        [True, False, False]
        """
        columns, signs = self.columns(X), self._signs()
        # Leaves below one split share their box: each distinct box once, with its leaves' mass.
        boxes, inverse = np.unique(self.leaf_bounds, axis=0, return_inverse=True)
        mass = np.bincount(inverse.ravel(), weights=self.leaf_weights * self.leaf_values, minlength=len(boxes))
        out = np.empty(columns.shape[0])
        batch_size = max(1, 2**24 // boxes.size)  # ~16 MB of (rows, boxes, |S|) booleans at a time
        for start in range(0, columns.shape[0], batch_size):
            block = columns[start:start + batch_size, None, :]
            out[start:start + batch_size] = _inside(block, boxes[None], signs) @ mass
        return out / self.leaf_weights.sum()

    def _signs(self) -> np.ndarray:
        return np.array([s for _, s in self.features])


def _inside(columns, thresholds, signs) -> np.ndarray:
    """All over the last axis: column <= threshold where sign < 0, column > threshold where > 0."""
    return np.where(signs < 0, columns <= thresholds, columns > thresholds).all(axis=-1)


def _weighted_median(values, weights) -> float:
    """The smallest value whose cumulative weight (values sorted) reaches half the total."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, 0.5 * cumulative[-1])])


def _node_bounds(trees, features):
    """(bounds, offsets): bounds (total nodes, ``|S|``) holds, per node of the concatenated trees and
    signed feature (k, s) of S, the tightest bound the node's path sets on x_k in direction s
    (+inf / -inf where none); offsets[t] is tree t's first node."""
    feature = np.concatenate([t["feature"] for t in trees])
    threshold = np.concatenate([t["threshold"] for t in trees])
    on_categories = np.concatenate([t["category_split"] for t in trees]) >= 0
    if on_categories.any() and np.isin(feature[on_categories], [k for k, _ in features]).any():
        raise ValueError("the interaction holds a categorical feature (categorical_features): its splits send sets of "
                         "categories, not a side of a threshold, so the rule has no threshold for it")
    depth = np.concatenate([t["depth"] for t in trees])
    offsets = np.cumsum([0] + [len(t["feature"]) for t in trees[:-1]])
    parent = np.concatenate([np.where(t["parent"] >= 0, t["parent"] + o, -1) for t, o in zip(trees, offsets)])
    is_left = np.zeros(len(feature), dtype=bool)
    for t, o in zip(trees, offsets):
        split = t["left"] >= 0
        is_left[t["left"][split] + o] = True
    bounds = np.empty((len(feature), len(features)))
    signs = np.array([s for _, s in features])
    bounds[:] = np.where(signs < 0, np.inf, -np.inf)
    order = np.argsort(depth, kind="stable")
    starts = np.searchsorted(depth[order], np.arange(1, depth.max() + 2))
    for level in range(len(starts) - 1):  # parents before children: one vectorised step per depth
        nodes = order[starts[level]:starts[level + 1]]
        q = parent[nodes]
        for j, (k, s) in enumerate(features):
            inherited = bounds[q, j]
            here = (feature[q] == k) & (is_left[nodes] == (s < 0))
            tighter = np.minimum(inherited, threshold[q]) if s < 0 else np.maximum(inherited, threshold[q])
            bounds[nodes, j] = np.where(here, tighter, inherited)
    return bounds, offsets


def resolve_interaction(interaction, table, names) -> tuple:
    """The signed set of ``interaction``: a record of ``table`` (anything with ``features``), an
    index into ``table``, or a signed set [(k or name, sign), ...]."""
    if hasattr(interaction, "features"):
        return tuple(interaction.features)
    if isinstance(interaction, Integral) and not isinstance(interaction, bool):
        if not -len(table) <= interaction < len(table):
            raise IndexError(f"interaction {interaction} is not a row of the table's {len(table)} interactions")
        return tuple(table[interaction].features)
    if isinstance(interaction, (list, tuple)):
        return decode(encode(interaction, names))
    raise TypeError("interaction must be a record of the interactions table, an index into it, or a signed set "
                    f"[(feature, sign), ...]; got {type(interaction).__name__}")


FOREIGN_PATHS = "the signed paths do not belong to this forest: read them with signed_paths(forest, ...)"


def _check_paths_of(paths, trees):
    """Refuse signed paths whose trees or leaves lie outside the forest's (another forest's)."""
    sizes = np.array([len(t["left"]) for t in trees])
    tree, leaf = np.asarray(paths.tree, dtype=np.int64), np.asarray(paths.leaf, dtype=np.int64)
    if not (len(paths) > 0 and tree.min() >= 0 and tree.max() + 1 == len(trees) and leaf.min() >= 0
            and np.all(leaf < sizes[tree])):
        raise ValueError(FOREIGN_PATHS)


def interaction_rule(forest, paths: SignedPaths, features, *, class_id=None, precision=4) -> InteractionRule:
    """The :class:`InteractionRule` of the signed set ``features`` on ``forest`` (pyinterp or
    scikit-learn), whose leaves contain S where their row of ``paths`` (from
    ``signed_paths(forest, ...)``, one row per leaf) does. ``class_id``: for a classifier, the
    class whose fraction the leaves' values are (default: the last class).

    Parameters
    ----------
    forest : fitted forest
        A fitted pyinterp or scikit-learn random forest (regressor or classifier).
    paths : SignedPaths
        The forest's signed paths, ``signed_paths(forest, ...)``, one row per leaf: the reading
        (epsilon, first occurrence) that decides which leaves contain S. Paths of another
        forest are refused.
    features : sequence of (int or str, int)
        The signed set S: pairs (feature, sign) with sign -1 or +1; a feature is its index, or
        its name when the forest was fitted on named columns.
    class_id : label, default=None
        For a classifier, the class whose fraction the leaves' values are; None: the last of
        ``classes_``. Ignored for a regressor.
    precision : int, default=4
        Significant digits of the printed thresholds and value, from 1 to 17.

    Returns
    -------
    InteractionRule
        The rule: median thresholds, the leaves' bounds, values and in-bag sizes.

    Raises
    ------
    ValueError
        If S is empty or unsigned (a sign 0), names a feature the forest does not have, no leaf's
        path contains it, it holds a categorical feature (no threshold), ``paths`` are not this
        forest's, or ``class_id`` is not one of the classes.

    See Also
    --------
    signed_paths : The paths.
    LSSFind.rule : The rule of an interaction LSSFind found.
    IterativeRandomForest.rule : The rule of an interaction iRF found.

    Examples
    --------
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from pyinterp.datasets import make_lss
    >>> from pyinterp.interactions import interaction_rule, signed_paths
    >>> X, y, truth = make_lss(n_samples=300, n_features=6, random_state=0)
    >>> truth
    [((0, -1), (1, -1)), ((2, -1), (3, -1))]
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> rule = interaction_rule(forest, signed_paths(forest), truth[1], precision=2)
    >>> print(rule)
    x2 <= 0.53 and x3 <= 0.54 -> 1.4
    >>> rule.thresholds.round(3).tolist(), round(rule.value, 3)
    ([0.532, 0.539], 1.402)
    """
    features = tuple(features)
    if not features:
        raise ValueError("the interaction is empty")
    if any(s == 0 for _, s in features):
        raise ValueError(f"the interaction {features} is unsigned: a rule needs signs (fit with signed=True)")
    view = forest_view(forest)
    names = getattr(view.estimator, "feature_names_in_", None)
    features = decode(encode(features, None if names is None else list(names), view.core.n_features))  # names -> k
    trees = [view.core.tree(t) for t in range(view.core.n_trees)]
    _check_paths_of(paths, trees)
    rows = matches(paths, [features])[1]
    if len(rows) == 0:
        raise NoThresholdsError(features)
    bounds, offsets = _node_bounds(trees, features)
    nodes = offsets[paths.tree[rows]] + paths.leaf[rows]
    # the matched nodes must be leaves, whose paths holding S have a split on each (k, s) of it
    is_leaf = np.concatenate([t["left"] for t in trees])[nodes] < 0
    if not (is_leaf.all() and np.isfinite(bounds[nodes]).all()):
        raise ValueError(FOREIGN_PATHS)
    value = np.concatenate([t["value"] for t in trees])[nodes]
    weight = np.concatenate([t["weighted_n_node_samples"] for t in trees])[nodes]
    if view.classes is None:
        column = 0
    else:
        target = view.classes[-1] if class_id is None else class_id
        where = np.flatnonzero(view.classes == target)
        if len(where) == 0:
            raise ValueError(f"class_id {target!r} is not one of the classes {view.classes.tolist()}")
        column = int(where[0])
    names = feature_labels(view.estimator, view.core.n_features)
    return InteractionRule(features, bounds[nodes], value[:, column], weight, names, view.estimator, precision)


__all__ = ["InteractionRule", "interaction_rule", "resolve_interaction"]
