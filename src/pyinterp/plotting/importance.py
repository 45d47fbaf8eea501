"""Importances: MDI-oob with its standard error beside MDI."""

from __future__ import annotations

import numpy as np

from .. import importance
from ..forest.view import forest_view
from ._base import axes, check_top, column_names


def plot_importances(forest, X, y, *, top=20, ax=None, n_jobs=None):
    """Plot the leading features' MDI-oob, with its standard error, beside their MDI.

    Horizontal bars of the ``top`` features by MDI-oob (thesis eq. 8.20), with its standard
    error across trees as error bars, beside MDI (eq. 8.4, ``normalize=False``: the same units of
    y^2, or impurity for classes). The features are ranked by MDI-oob, largest at the top, and
    labelled with the forest's column names (``x<k>`` without names).

    Parameters
    ----------
    forest : fitted forest
        A fitted pyinterp or scikit-learn ``RandomForestRegressor`` or ``RandomForestClassifier``
        (single output).
    X : array-like of shape (n_samples, n_features)
        The forest's training data: MDI-oob reads each tree's out-of-bag rows.
    y : array-like of shape (n_samples,)
        The training response.
    top : int or None, default=20
        Number of features drawn. None draws every feature.
    ax : matplotlib Axes or None, default=None
        The Axes to draw on. None draws on a new figure's.
    n_jobs : int or None, default=None
        Threads for MDI-oob, as in :func:`~pyinterp.importance.mdi_oob`.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on.

    Raises
    ------
    TypeError
        If ``forest`` is not a supported forest.
    sklearn.exceptions.NotFittedError
        If ``forest`` is not fitted.
    ValueError
        If ``top`` is not a positive int or None.

    See Also
    --------
    pyinterp.importance.mdi_oob : The importances drawn, with ``return_std=True``.
    pyinterp.importance.mdi : The importances drawn beside them.

    Notes
    -----
    MDI-oob (eq. 8.20) and MDI (eq. 8.4) are defined in chapter 8 of Yu Wang's PhD thesis
    (University of California, Berkeley, 2020; thesis 000).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from pyinterp.datasets import make_lss
    >>> from pyinterp.forest import RandomForestRegressor
    >>> from pyinterp.plotting import plot_importances
    >>> X, y, _ = make_lss(n_samples=300, n_features=6, snr=100, random_state=0)
    >>> forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> fig, ax = plt.subplots()
    >>> plot_importances(forest, X, y, top=4, ax=ax) is ax
    True
    >>> ax.get_title()
    'top 4 of 6 features by MDI-oob'
    >>> [label.get_text() for label in ax.get_yticklabels()]  # the 4 signal features
    ['x2', 'x0', 'x3', 'x1']
    >>> plt.close("all")
    """
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
