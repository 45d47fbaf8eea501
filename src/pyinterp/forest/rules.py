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
    """``conditions``: ((feature, op, threshold), ...) with op "<=" or ">", or (feature, "in",
    codes) for a categorical feature (a tuple of category codes), all of which hold; ``value``:
    what the rule leads to - a number, or (class label, fraction) for a classifier; ``names``: the
    column names the conditions print with; ``categories``: {feature: its categories}, which a
    categorical condition prints (else its codes)."""

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
        """Whether each row of the numeric array X (categories as their codes) satisfies every
        condition (NaN satisfies none)."""
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
    """One :class:`Rule` per leaf of tree ``tree`` of a fitted pyinterp or scikit-learn forest, in
    depth-first order (left first): the path's conditions, one upper and one lower bound per
    feature at most (the tightest the path sets), in the order the path first sets them, and the
    leaf's value (the mean; for a classifier the majority class and its fraction).

    ``print(*tree_rules(forest), sep="\\n")`` prints the tree. Thresholds print with ``precision``
    significant digits. Missing values (NaN) follow each split's ``missing_go_to_left``, which the
    text does not show. A categorical feature (``categorical_features``) has one condition
    ``name in {categories}``: the training categories its path allows."""
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
