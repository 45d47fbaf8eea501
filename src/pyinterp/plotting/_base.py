"""What every plot shares: matplotlib on demand (the optional extra), the argument checks, names."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted


def pyplot():
    """matplotlib.pyplot, imported only when a plot is drawn: pyinterp itself does not need it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("pyinterp.plotting needs matplotlib, the [plot] extra: pip install 'interptrees[plot]'") \
            from exc
    return plt


def axes(ax):
    """The given Axes, or a new figure's."""
    return pyplot().subplots()[1] if ax is None else ax


def figure(fig, **kwargs):
    """The given Figure, or a new one."""
    return pyplot().figure(**kwargs) if fig is None else fig


def check_fitted(obj, types, name, attribute):
    """TypeError naming the argument unless obj is one of types; NotFittedError unless fitted."""
    if not isinstance(obj, types):
        expected = " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise TypeError(f"{name} must be a fitted {expected}, got {type(obj).__name__}")
    check_is_fitted(obj, attribute)


def check_top(top, name="top", *, allow_none=True):
    if (top is None and not allow_none) or (
            top is not None and (not isinstance(top, Integral) or isinstance(top, bool) or top < 1)):
        raise ValueError(f"{name} must be a positive int{' or None' if allow_none else ''}, got {top!r}")
    return top


def check_threshold(threshold, default):
    """A score threshold: a real number (inf allowed: nothing is kept) or None (the default)."""
    if threshold is None:
        return default
    if not isinstance(threshold, Real) or isinstance(threshold, bool) or threshold != threshold:
        raise ValueError(f"threshold must be a real number or None, got {threshold!r}")
    return float(threshold)


# Characters of a label drawn on a figure: a 100,000-character column name took matplotlib's layout
# 45 s and 1.8 GB.
LABEL_WIDTH = 40


def shortened(label, width=LABEL_WIDTH) -> str:
    """A label of at most ``width`` characters: longer ones keep their start and end around '…'."""
    label = str(label)
    if len(label) <= width:
        return label
    head = (width - 1) // 2
    return f"{label[:head]}…{label[len(label) - (width - 1 - head):]}"


def column_names(estimator, n_features) -> np.ndarray:
    """The estimator's ``feature_names_in_`` (shortened for a figure), else 'x<k>'."""
    names = getattr(estimator, "feature_names_in_", None)
    return np.array([f"x{k}" for k in range(n_features)] if names is None else [shortened(n) for n in names],
                    dtype=object)
