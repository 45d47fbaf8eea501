"""Readable rules: a conjunction of threshold conditions and the value it leads to, printed with
feature names (``GENE12 <= 3.4 and GENE40 > 0.7 -> 2.31``); a tree's leaves as such rules."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._validation import check_int
from .tree import category_codes
from .view import forest_view

# Significant digits a float64 holds: more print the same number.
MAX_PRECISION = 17


def check_precision(precision) -> int:
    return check_int("precision", precision, 1, MAX_PRECISION)


def feature_labels(estimator, n_features, feature_names=None) -> list:
    """Column names: the given ones, else the estimator's ``feature_names_in_``, else 'x<k>'."""
    names = getattr(estimator, "feature_names_in_", None) if feature_names is None else feature_names
    if names is None:
        return [f"x{k}" for k in range(n_features)]
    if len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names for {n_features} features")
    return [str(n) for n in names]


class Rule:
    """A readable rule: a conjunction of conditions on features and the value it leads to.

    ``str(rule)`` prints it with feature names, ``GENE12 <= 3.4 and GENE40 > 0.7 -> 2.31``
    (``always -> ...`` without conditions; a classifier's value as ``label (fraction)``).
    :func:`~pyinterp.forest.tree_rules` gives a tree's leaves as rules, and the rules of
    :func:`~pyinterp.interactions.interaction_rule` give theirs as one.

    Parameters
    ----------
    conditions : iterable of tuple
        The conditions, all of which hold: ``(feature, op, threshold)`` with op "<=" or ">"
        (thresholds are stored as float), or ``(feature, "in", codes)`` for a categorical
        feature, codes being an iterable of category codes (stored as a tuple of int). Features
        are column indices.
    value : float or tuple
        What the rule leads to: a number, or ``(class label, fraction)`` for a classifier.
    names : sequence of str
        The column names the conditions print with, indexed by feature.
    precision : int, default 4
        The significant digits thresholds (and a numeric value) print with, 1 to 17.
    categories : dict or None, default None
        {feature: its categories}, which a categorical condition prints (else its codes).

    Attributes
    ----------
    conditions : tuple of tuple
        The conditions as given, normalised: ``(int, op, float)`` or ``(int, "in", tuple of int)``.
    value : float or tuple
        The value as given.
    names : sequence of str
        The column names as given.
    precision : int
        The significant digits of the printed numbers.
    categories : dict
        The categories as given ({} for None).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.forest import Rule
    >>> rule = Rule([(0, "<=", 0.5), (2, "in", [0, 2])], 1.25, ["age", "dose", "tissue"],
    ...             categories={2: ["blood", "brain", "liver"]})
    >>> print(rule)
    age <= 0.5 and tissue in {blood, liver} -> 1.25
    >>> rule.holds(np.array([[0.1, 7.0, 2], [0.1, 7.0, 1], [0.9, 7.0, 0]])).tolist()
    [True, False, False]
    >>> print(Rule([], ("case", 0.875), ["age"]))
    always -> case (0.88)
    """

    def __init__(self, conditions, value, names, precision=4, categories=None):
        self.conditions = tuple((int(k), op, tuple(int(c) for c in t) if op == "in" else float(t))
                                for k, op, t in conditions)
        self.value = value
        self.names = names
        self.precision = check_precision(precision)
        self.categories = categories or {}

    def _condition(self, k, op, t) -> str:
        if op != "in":
            return f"{self.names[k]} {op} {t:.{self.precision}g}"
        labels = self.categories.get(k)
        shown = [str(labels[c]) if labels is not None else str(c) for c in t]
        return f"{self.names[k]} in {{{', '.join(shown)}}}"

    def condition_text(self) -> str:
        """The conditions as text, joined by "and" (without the value).

        Thresholds print with ``precision`` significant digits, a categorical condition as
        ``name in {categories}``.

        Returns
        -------
        text : str
            The conditions, or "" for a rule without conditions.

        Examples
        --------
        >>> from pyinterp.forest import Rule
        >>> Rule([(0, ">", 1 / 3), (1, "<=", 2.0)], 0.5, ["age", "dose"], precision=3).condition_text()
        'age > 0.333 and dose <= 2'
        >>> Rule([], 0.5, ["age"]).condition_text()
        ''
        """
        return " and ".join(self._condition(k, op, t) for k, op, t in self.conditions)

    def __str__(self) -> str:
        if isinstance(self.value, tuple):
            label, fraction = self.value
            value = f"{label} ({fraction:.2f})"
        else:
            value = f"{self.value:.{self.precision}g}"
        return f"{self.condition_text() or 'always'} -> {value}"

    def __repr__(self) -> str:
        return f"Rule({self})"

    def holds(self, X) -> np.ndarray:
        """Whether each row of X satisfies every condition.

        A missing value (NaN) satisfies no condition, where the tree that made the rule sends it
        down one side (``missing_go_to_left``): rows with missing values in the rule's features
        may reach its leaf without holding.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric rows, read as float64, with categorical features as their category codes
            (``categories_`` of the forest orders them).

        Returns
        -------
        holds : ndarray of bool, shape (n_samples,)
            True where every condition holds (everywhere for a rule without conditions).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.forest import Rule
        >>> rule = Rule([(0, "<=", 0.5), (1, ">", 2.0)], 1.0, ["age", "dose"])
        >>> rule.holds(np.array([[0.0, 3.0], [1.0, 3.0], [0.0, 1.0], [np.nan, 3.0]])).tolist()
        [True, False, False, False]
        """
        X = np.asarray(X, dtype=np.float64)
        out = np.ones(X.shape[0], dtype=bool)
        for k, op, t in self.conditions:
            if op == "in":
                out &= np.isin(X[:, k], t)
            else:
                out &= X[:, k] <= t if op == "<=" else X[:, k] > t
        return out


def _leaf_value(value, classes):
    if classes is None:
        return float(value[0])
    c = int(np.argmax(value))
    return (classes[c].item() if hasattr(classes[c], "item") else classes[c], float(value[c]))


def tree_rules(forest, tree=0, *, feature_names=None, precision=4) -> list:
    """The leaves of one tree of a fitted forest as readable rules.

    One :class:`Rule` per leaf of tree ``tree`` of a fitted pyinterp or scikit-learn forest, in
    depth-first order (left first): the path's conditions, one upper and one lower bound per
    feature at most (the tightest the path sets), in the order the path first sets them, and the
    leaf's value (the mean; for a classifier the majority class and its fraction).

    ``print(*tree_rules(forest), sep="\\n")`` prints the tree. Missing values (NaN) follow each
    split's ``missing_go_to_left``, which the text does not show. A categorical feature
    (``categorical_features``) has one condition ``name in {categories}``: the training
    categories its path allows.

    Parameters
    ----------
    forest : RandomForestRegressor or RandomForestClassifier
        A fitted forest of one output: pyinterp's, or scikit-learn's
        :class:`~sklearn.ensemble.RandomForestRegressor` /
        :class:`~sklearn.ensemble.RandomForestClassifier`.
    tree : int, default 0
        The index of the tree, from 0 to the number of trees - 1.
    feature_names : sequence of str or None, default None
        The names the conditions print with, one per feature; None: the forest's
        ``feature_names_in_`` if it has them, else ``x0``, ``x1``, ...
    precision : int, default 4
        The significant digits thresholds and values print with, 1 to 17.

    Returns
    -------
    rules : list of Rule
        One rule per leaf, left first.

    Raises
    ------
    TypeError
        If ``forest`` is not one of those forests.
    ValueError
        If the forest has several outputs, ``tree`` is not a tree's index, ``feature_names`` has
        another length than the features or ``precision`` is outside [1, 17].

    See Also
    --------
    pyinterp.forest.Tree : The node arrays the rules are read from.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from pyinterp import RandomForestRegressor
    >>> from pyinterp.forest import tree_rules
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(100, 3)), columns=["age", "dose", "bmi"])
    >>> forest = RandomForestRegressor(5, max_depth=2, random_state=0).fit(X, X["age"])
    >>> print(*tree_rules(forest, 0, precision=3), sep="\\n")
    age <= -0.895 -> -1.5
    age <= 0.385 and age > -0.895 -> -0.201
    age > 0.385 and bmi <= -0.762 -> 2.91
    age > 0.385 and bmi > -0.762 -> 1.22
    >>> rule = tree_rules(forest, 0)[0]
    >>> rule.conditions[0][:2], rule.holds(X.to_numpy()[:4]).tolist()
    ((0, '<='), [False, False, False, True])
    """
    view = forest_view(forest)
    if not isinstance(tree, Integral) or isinstance(tree, bool) or not 0 <= tree < view.core.n_trees:
        raise ValueError(f"tree must be an index in [0, {view.core.n_trees}), got {tree!r}")
    names = feature_labels(view.estimator, view.core.n_features, feature_names)
    t = view.core.tree(int(tree))
    categories = _categories(view.estimator)
    rules = []
    stack = [(0, {})]  # node, {(feature, op): threshold or allowed codes} in first-split order
    while stack:
        node, bounds = stack.pop()
        left, right = int(t["left"][node]), int(t["right"][node])
        if left < 0:
            conditions = [(k, op, sorted(b) if op == "in" else b) for (k, op), b in bounds.items()]
            rules.append(Rule(conditions, _leaf_value(t["value"][node], view.classes), names, precision, categories))
            continue
        k, s = int(t["feature"][node]), int(t["category_split"][node])
        if s >= 0:
            allowed = bounds.get((k, "in"), frozenset(range(len(categories[k]))))
            left_set = frozenset(category_codes(t["left_categories"][s]).tolist())
            stack.append((right, {**bounds, (k, "in"): allowed - left_set}))
            stack.append((left, {**bounds, (k, "in"): allowed & left_set}))
            continue
        thr = float(t["threshold"][node])
        stack.append((right, _tighten(bounds, k, ">", thr)))
        stack.append((left, _tighten(bounds, k, "<=", thr)))
    return rules


def _categories(estimator) -> dict:
    """{feature: its categories} of a pyinterp forest fitted with categorical_features, else {}."""
    encoder = getattr(estimator, "_category_encoder", None)
    return {} if encoder is None else dict(zip(encoder.columns.tolist(), encoder.categories_))


def _tighten(bounds, k, op, threshold):
    """The bounds with (k op threshold) added: the smaller upper / larger lower bound is kept."""
    out = dict(bounds)
    old = out.get((k, op))
    if old is None:
        out[(k, op)] = threshold
    else:
        out[(k, op)] = min(old, threshold) if op == "<=" else max(old, threshold)
    return out
