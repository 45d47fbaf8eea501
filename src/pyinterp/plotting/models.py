"""The other estimators' fits: the partitioned ratio's lambda path, DL-BCD's atoms and objective
history, Skinny Trees' selected features per epoch."""

from __future__ import annotations

import numpy as np

from ..dictionary import DLBCD
from ..partitioned import PartitionedRatio
from ..skinny import SkinnyTreesClassifier, SkinnyTreesRegressor
from ._base import axes, check_fitted, check_top, column_names


def plot_ratio_path(ratio, *, top=10, ax=None):
    """Plot the regularisation path of a partitioned ratio fit: cross pairs' group norms against lambda.

    The group norm of the ``top`` cross pairs that enter the path first (largest
    ``entry_lambda_``) against lambda, from lambda_max down (log scale when every lambda is
    positive), each pair's entry point marked on the axis and the selected ``lambda_`` dashed.
    Each line is labelled with the pair's two column names (``x<k>`` without names).

    Parameters
    ----------
    ratio : PartitionedRatio
        A fitted :class:`~pyinterp.partitioned.PartitionedRatio`.
    top : int or None, default=10
        Number of cross pairs drawn, those with the largest ``entry_lambda_`` (ties in pair order).
        None draws every cross pair.
    ax : matplotlib Axes or None, default=None
        The Axes to draw on. None draws on a new figure's.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on, its x axis inverted (lambda decreases to the right).

    Raises
    ------
    TypeError
        If ``ratio`` is not a :class:`~pyinterp.partitioned.PartitionedRatio`.
    sklearn.exceptions.NotFittedError
        If ``ratio`` is not fitted.
    ValueError
        If ``top`` is not a positive int or None.

    See Also
    --------
    pyinterp.partitioned.PartitionedRatio : The estimator whose path is drawn.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from pyinterp.partitioned import PartitionedRatio
    >>> from pyinterp.plotting import plot_ratio_path
    >>> X = np.random.RandomState(0).standard_normal((200, 6))
    >>> X[:, 3] += 0.8 * X[:, 0]  # one dependence across the blocks {0, 1, 2} and {3, 4, 5}
    >>> ratio = PartitionedRatio(partition=3, n_lambdas=10, n_permutations=20, random_state=0).fit(X)
    >>> fig, ax = plt.subplots()
    >>> plot_ratio_path(ratio, top=3, ax=ax) is ax
    True
    >>> ax.get_title()
    '3 of 9 cross pairs, by entry; 1 edge at the selection'
    >>> ax.get_xlabel(), ax.get_xscale()
    ('lambda', 'log')
    >>> plt.close("all")
    """
    check_fitted(ratio, PartitionedRatio, "ratio", "coef_path_")
    check_top(top)
    n_cross = ratio.n_cross_
    norms = np.sqrt(np.sum(ratio.coef_path_[:n_cross] ** 2, axis=1))  # (n_cross, n_lambdas)
    first = np.argsort(-ratio.entry_lambda_, kind="stable")[:top]
    names = column_names(ratio, ratio.n_features_in_)
    ax = axes(ax)
    for g in first:
        u, v = ratio.pairs_[g]
        line, = ax.plot(ratio.lambdas_, norms[g], label=f"{names[u]} – {names[v]}")
        ax.plot([ratio.entry_lambda_[g]], [0.0], marker="o", linestyle="none", color=line.get_color(), clip_on=False)
    ax.axvline(ratio.lambda_, color="black", linestyle="--", linewidth=1, label="selected lambda")
    if np.all(ratio.lambdas_ > 0):
        ax.set_xscale("log")
    ax.invert_xaxis()  # the path runs from lambda_max (no edge) to the smallest lambda
    ax.set_xlabel("lambda")
    ax.set_ylabel("||theta_uv|| (cross pair)")
    edges = len(ratio.cross_edges_)
    ax.set_title(f"{len(first)} of {n_cross} cross pairs, by entry; {edges} edge{'' if edges == 1 else 's'} at the "
                 "selection")
    ax.legend(fontsize=8)
    return ax


def plot_dictionary_atoms(dlbcd, *, top=None, ax=None):
    """Plot DL-BCD's learned dictionary as an image, one column per atom.

    The learned dictionary ``components_`` as an image: the first ``top`` atoms (all by
    default) as columns, one row per feature, a diverging colour scale (``RdBu_r``) centred at 0,
    with a colour bar. The rows are labelled with the column names (``x<k>`` without names) when
    there are at most 40 features; beyond, the labels would overlap.

    Parameters
    ----------
    dlbcd : DLBCD
        A fitted :class:`~pyinterp.dictionary.DLBCD`.
    top : int or None, default=None
        Number of atoms drawn, the first ones of ``components_``. None draws every atom.
    ax : matplotlib Axes or None, default=None
        The Axes to draw on. None draws on a new figure's.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on (the colour bar is added to its figure as a second Axes).

    Raises
    ------
    TypeError
        If ``dlbcd`` is not a :class:`~pyinterp.dictionary.DLBCD`.
    sklearn.exceptions.NotFittedError
        If ``dlbcd`` is not fitted.
    ValueError
        If ``top`` is not a positive int or None.

    See Also
    --------
    plot_objective_history : The objective of the same fit, sweep by sweep.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
    >>> from pyinterp.dictionary import DLBCD
    >>> from pyinterp.plotting import plot_dictionary_atoms
    >>> D = make_collinear_dictionary(4, 0.5)
    >>> X = make_dictionary_signals(D, make_sparse_coefficients(100, 4, sparsity=2, random_state=0))
    >>> dlbcd = DLBCD(random_state=0).fit(X)
    >>> fig, ax = plt.subplots()
    >>> ax = plot_dictionary_atoms(dlbcd, ax=ax)
    >>> ax.get_title(), ax.get_xlabel(), ax.get_ylabel()
    ('4 of 4 atoms', 'atom', 'feature')
    >>> ax.images[0].get_array().shape  # features x atoms
    (4, 4)
    >>> plt.close("all")
    """
    check_fitted(dlbcd, DLBCD, "dlbcd", "components_")
    check_top(top)
    D = dlbcd.components_[:, :top]
    ax = axes(ax)
    limit = np.abs(D).max()
    image = ax.imshow(D, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    ax.figure.colorbar(image, ax=ax)
    ax.set_xlabel("atom")
    if D.shape[0] <= 40:  # beyond, tick labels overlap
        ax.set_yticks(np.arange(D.shape[0]), column_names(dlbcd, D.shape[0]))
    ax.set_ylabel("feature")
    ax.set_title(f"{D.shape[1]} of {dlbcd.components_.shape[1]} atoms")
    return ax


def plot_objective_history(dlbcd, *, ax=None):
    """Plot DL-BCD's objective after each sweep of its block coordinate descent.

    DL-BCD's objective before the first sweep and after each sweep of the kept restart: the
    final (tau) stage and, with ``init="l1"``, the plain l1 stage before it (drawn when the fit
    has ``l1_objective_history_``), one line each, against the sweep number.

    Parameters
    ----------
    dlbcd : DLBCD
        A fitted :class:`~pyinterp.dictionary.DLBCD`.
    ax : matplotlib Axes or None, default=None
        The Axes to draw on. None draws on a new figure's.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on, titled with the final ``objective_`` and ``n_iter_``.

    Raises
    ------
    TypeError
        If ``dlbcd`` is not a :class:`~pyinterp.dictionary.DLBCD`.
    sklearn.exceptions.NotFittedError
        If ``dlbcd`` is not fitted.

    See Also
    --------
    plot_dictionary_atoms : The dictionary the fit learned.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
    >>> from pyinterp.dictionary import DLBCD
    >>> from pyinterp.plotting import plot_objective_history
    >>> D = make_collinear_dictionary(4, 0.5)
    >>> X = make_dictionary_signals(D, make_sparse_coefficients(100, 4, sparsity=2, random_state=0))
    >>> dlbcd = DLBCD(tau=0.5, random_state=0).fit(X)
    >>> fig, ax = plt.subplots()
    >>> ax = plot_objective_history(dlbcd, ax=ax)
    >>> [text.get_text() for text in ax.get_legend().get_texts()]
    ['l1 stage (tau = inf)', 'tau = 0.5']
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('sweep', 'objective')
    >>> plt.close("all")
    """
    check_fitted(dlbcd, DLBCD, "dlbcd", "objective_history_")
    ax = axes(ax)
    if hasattr(dlbcd, "l1_objective_history_"):
        history = dlbcd.l1_objective_history_
        ax.plot(np.arange(len(history)), history, marker=".", label="l1 stage (tau = inf)")
    history = dlbcd.objective_history_
    ax.plot(np.arange(len(history)), history, marker=".", label=f"tau = {dlbcd.tau:g}")
    ax.set_xlabel("sweep")
    ax.set_ylabel("objective")
    ax.set_title(f"DL-BCD: final objective {dlbcd.objective_:.4g} after {dlbcd.n_iter_} sweeps")
    ax.legend()
    return ax


def plot_skinny_path(skinny, *, ax=None):
    """Plot the number of features Skinny Trees kept after each training epoch.

    Skinny Trees' selected features after each epoch (``history_["n_selected"]``, the group-L0
    path from dense to sparse, epochs counted from 1), the returned epoch (``best_epoch_``)
    starred; the validation score on a second axis when there were validation rows.

    Parameters
    ----------
    skinny : SkinnyTreesRegressor or SkinnyTreesClassifier
        A fitted :class:`~pyinterp.skinny.SkinnyTreesRegressor` or
        :class:`~pyinterp.skinny.SkinnyTreesClassifier`.
    ax : matplotlib Axes or None, default=None
        The Axes to draw on. None draws on a new figure's.

    Returns
    -------
    ax : matplotlib Axes
        The Axes of the features (the validation score, when drawn, is on a twin Axes added to
        its figure).

    Raises
    ------
    TypeError
        If ``skinny`` is not a Skinny Trees estimator.
    sklearn.exceptions.NotFittedError
        If ``skinny`` is not fitted.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from pyinterp.datasets import make_correlated_linear
    >>> from pyinterp.plotting import plot_skinny_path
    >>> from pyinterp.skinny import SkinnyTreesRegressor
    >>> X, y, support = make_correlated_linear(100, 20, n_informative=2, random_state=0)
    >>> skinny = SkinnyTreesRegressor(n_trees=4, depth=2, lambda2=1.0, batch_size=32, max_epochs=50,
    ...                               random_state=0).fit(X[:80], y[:80], X[80:], y[80:])
    >>> fig, ax = plt.subplots()
    >>> ax = plot_skinny_path(skinny, ax=ax)
    >>> ax.get_title()
    '2 of 20 features selected'
    >>> [axes.get_ylabel() for axes in fig.axes]  # the validation rows give a second axis
    ['selected features', 'validation score']
    >>> plt.close("all")
    """
    check_fitted(skinny, (SkinnyTreesRegressor, SkinnyTreesClassifier), "skinny", "history_")
    history = skinny.history_
    epochs = np.arange(1, len(history["n_selected"]) + 1)
    ax = axes(ax)
    ax.step(epochs, history["n_selected"], where="mid", color="C0", label="selected features")
    if skinny.best_epoch_ is not None:
        e = skinny.best_epoch_
        ax.plot([e + 1], [history["n_selected"][e]], marker="*", markersize=14, color="C3", linestyle="none",
                label="returned epoch")
    ax.set_xlabel("epoch")
    ax.set_ylabel("selected features")
    ax.set_title(f"{skinny.n_selected_features_} of {skinny.n_features_in_} features selected")
    handles = ax.get_legend_handles_labels()[0]
    score = np.asarray(history["val_score"], dtype=float)
    if np.isfinite(score).any():
        other = ax.twinx()
        handles += other.plot(epochs, score, color="C2", linestyle=":", label="validation score")
        other.set_ylabel("validation score", color="C2")
    ax.legend(handles=handles, loc="center right")  # one legend for the lines of both axes
    return ax
