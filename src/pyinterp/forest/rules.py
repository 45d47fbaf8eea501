"""Readable rules: a conjunction of threshold conditions and the value it leads to, printed with
feature names (``GENE12 <= 3.4 and GENE40 > 0.7 -> 2.31``); a tree's leaves as such rules."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._validation import check_int
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
    """``conditions``: ((feature, op, threshold), ...) with op "<=" or ">", all of which hold;
    ``value``: what the rule leads to - a number, or (class label, fraction) for a classifier;
    ``names``: the column names the conditions print with."""

    def __init__(self, conditions, value, names, precision=4):
        self.conditions = tuple((int(k), op, float(t)) for k, op, t in conditions)
        self.value = value
        self.names = names
        self.precision = check_precision(precision)

    def condition_text(self) -> str:
        return " and ".join(f"{self.names[k]} {op} {t:.{self.precision}g}" for k, op, t in self.conditions)

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
        """Whether each row of the numeric array X satisfies every condition (NaN satisfies none)."""
        X = np.asarray(X, dtype=np.float64)
        out = np.ones(X.shape[0], dtype=bool)
        for k, op, t in self.conditions:
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
    text does not show."""
    view = forest_view(forest)
    if not isinstance(tree, Integral) or isinstance(tree, bool) or not 0 <= tree < view.core.n_trees:
        raise ValueError(f"tree must be an index in [0, {view.core.n_trees}), got {tree!r}")
    names = feature_labels(view.estimator, view.core.n_features, feature_names)
    t = view.core.tree(int(tree))
    rules = []
    stack = [(0, {})]  # node, {(feature, op): threshold} in first-split order
    while stack:
        node, bounds = stack.pop()
        left, right = int(t["left"][node]), int(t["right"][node])
        if left < 0:
            rules.append(Rule([(k, op, thr) for (k, op), thr in bounds.items()],
                              _leaf_value(t["value"][node], view.classes), names, precision))
            continue
        k, thr = int(t["feature"][node]), float(t["threshold"][node])
        stack.append((right, _tighten(bounds, k, ">", thr)))
        stack.append((left, _tighten(bounds, k, "<=", thr)))
    return rules


def _tighten(bounds, k, op, threshold):
    """The bounds with (k op threshold) added: the smaller upper / larger lower bound is kept."""
    out = dict(bounds)
    old = out.get((k, op))
    if old is None:
        out[(k, op)] = threshold
    else:
        out[(k, op)] = min(old, threshold) if op == "<=" else max(old, threshold)
    return out
