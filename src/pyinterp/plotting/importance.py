"""Importances: MDI-oob with its standard error beside MDI."""

from __future__ import annotations

import numpy as np

from .. import importance
from ..forest.view import forest_view
from ._base import axes, check_top, column_names


def plot_importances(forest, X, y, *, top=20, ax=None, n_jobs=None):
    """Horizontal bars of the ``top`` features by MDI-oob (thesis eq. 8.20), with its standard
    error across trees as error bars, beside MDI (eq. 8.4, ``normalize=False``: the same units of
    y^2, or impurity for classes). ``forest``: a fitted pyinterp or scikit-learn forest; X, y: its
    training data (MDI-oob reads the out-of-bag rows). Returns the Axes."""
    check_top(top)
    view = forest_view(forest)  # TypeError naming forest, NotFittedError
    mean, se = importance.mdi_oob(forest, X, y, return_std=True, n_jobs=n_jobs)
    mdi = importance.mdi(forest, normalize=False)
    order = np.argsort(-mean, kind="stable")[:top]
    ax = axes(ax)
    at = np.arange(len(order))
    ax.barh(at - 0.2, mean[order], height=0.4, xerr=se[order], label="MDI-oob ± SE", color="C0")
    ax.barh(at + 0.2, mdi[order], height=0.4, label="MDI", color="C7")
    ax.set_yticks(at, column_names(view.estimator, len(mean))[order])
    ax.invert_yaxis()
    ax.axvline(0.0, color="black", linewidth=0.5)
    ax.set_xlabel("importance")
    ax.set_title(f"top {len(order)} of {len(mean)} features by MDI-oob")
    ax.legend(loc="lower right")
    return ax
