"""Interactions: LSSFind's DWP picture, iRF's scores, an interaction network, and the response on
an interaction's cells."""

from __future__ import annotations

import itertools

import numpy as np

from .._validation import check_array
from ..interactions import InteractionRule, InteractionTable, IterativeRandomForest, LSSFind, prevalent_sets
from ._base import LABEL_WIDTH, axes, check_fitted, check_threshold, check_top, figure, shortened


def plot_lssfind(lss, *, top=10, ax=None):
    """Plot the depth-weighted prevalence of every set LSSFind mined against the set's order.

    Every set LSSFind mined: its DWP (log2 scale) against its order ``|S|``, beside the bound
    ``2^-|S|`` (Theorem 1: no set exceeds it; a union signed interaction of the LSS model attains it)
    and the find test's (1 - eta) ``2^-|S|``. Sets passing the test are filled, the minimal ones
    (``minimal_``, the basic interactions) are stars, and the ``top`` first of them are labelled.
    Within an order, sets are spread sideways by rank.

    Parameters
    ----------
    lss : LSSFind
        A fitted :class:`~pyinterp.interactions.LSSFind`. Its sets are mined again from its
        ``paths_`` at its own threshold and ``max_order``.
    top : int or None, default=10
        Number of minimal sets labelled with their names. None labels all of them.
    ax : matplotlib Axes or None, default=None
        The Axes to draw on. None draws on a new figure's.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on.

    Raises
    ------
    TypeError
        If ``lss`` is not an :class:`~pyinterp.interactions.LSSFind`.
    sklearn.exceptions.NotFittedError
        If ``lss`` is not fitted.
    ValueError
        If ``top`` is not a positive int or None.

    See Also
    --------
    pyinterp.interactions.LSSFind : The finder whose sets are drawn.
    plot_interaction_network : The selected sets as a graph of features.

    Notes
    -----
    DWP, the bound ``2^-|S|`` (Theorem 1) and the test ``2^|S|`` DWP >= 1 - eta of LSSFind are defined in
    Behr, Wang, Li and Yu, "Provable Boolean interaction recovery from tree ensemble obtained via
    random forests" (paper 001).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from pyinterp.datasets import make_lss
    >>> from pyinterp.interactions import LSSFind
    >>> from pyinterp.plotting import plot_lssfind
    >>> X, y, truth = make_lss(n_samples=300, n_features=6, snr=100, random_state=0)
    >>> lss = LSSFind(n_estimators=30, max_order=2, random_state=0).fit(X, y)
    >>> fig, ax = plt.subplots()
    >>> plot_lssfind(lss, ax=ax) is ax
    True
    >>> ax.get_title()
    'LSSFind: 9 sets mined, 1 minimal'
    >>> [text.get_text() for text in ax.texts]  # the minimal sets, labelled
    ['x0- & x1-']
    >>> plt.close("all")
    """
    check_fitted(lss, LSSFind, "lss", "paths_")
    check_top(top)
    mined = prevalent_sets(lss.paths_, lss._mining_threshold(), lss.max_order)
    order, value = np.array([len(f) for f in mined.features]), mined["dwp"]
    x = order.astype(float)
    for k in np.unique(order):  # spread each order's points over [k - 0.3, k + 0.3] by rank
        at = np.flatnonzero(order == k)
        x[at] += np.linspace(-0.3, 0.3, len(at)) if len(at) > 1 else 0.0
    passing = set(lss.selected_.features)
    minimal = lss.minimal_.features
    is_minimal = np.array([f in set(minimal) for f in mined.features], dtype=bool)
    is_passing = np.array([f in passing for f in mined.features], dtype=bool)
    ax = axes(ax)
    ax.scatter(x[~is_passing], value[~is_passing], s=12, facecolors="none", edgecolors="C7", label="mined")
    ax.scatter(x[is_passing & ~is_minimal], value[is_passing & ~is_minimal], s=16, color="C0", label="passes the test")
    ax.scatter(x[is_minimal], value[is_minimal], s=90, marker="*", color="C3", zorder=3, label="minimal (basic)")
    orders = np.arange(1, lss.max_order + 1)
    ax.hlines(2.0 ** -orders, orders - 0.4, orders + 0.4, color="black", label="2^-|S|")
    ax.hlines((1 - lss.eta) * 2.0 ** -orders, orders - 0.4, orders + 0.4, color="black", linestyle="--",
              label="(1 - eta) 2^-|S|")
    for rank, i in enumerate(np.flatnonzero(is_minimal)[:top]):  # minimal sets often share a DWP: stagger
        ax.annotate(shortened(mined.label(mined.features[i])), (x[i], value[i]), xytext=(20, -14 * (rank + 1)),
                    textcoords="offset points", fontsize=8, arrowprops={"arrowstyle": "-", "color": "C3"})
    ax.set_yscale("log", base=2)
    ax.set_xticks(orders)
    ax.set_xlabel("order |S|")
    ax.set_ylabel("DWP")
    ax.set_title(f"LSSFind: {len(mined)} sets mined, {len(minimal)} minimal")
    ax.legend(fontsize=8)
    return ax


_IRF_SCORES = ("stability", "prevalence", "precision")


def plot_irf_scores(irf, *, top=20, fig=None):
    """Plot iRF's stability, prevalence and precision of its leading interactions, a panel each.

    iRF's stability, prevalence and precision of the ``top`` first interactions (in the order of
    ``interactions_``: by tier, then cpe, for ``style="rules"``; by cpe, then stability, for
    ``"R"``; by stability, then prevalence, for ``"pyinterp"``), one panel each, sharing the
    interaction labels. The three panels are drawn on ``fig`` (a matplotlib Figure, e.g. a
    subfigure; a new one if None), so this plot takes ``fig=``, not ``ax=``. Each panel's x axis
    runs from 0 to 1; a missing (NaN) score is drawn as 0.

    Parameters
    ----------
    irf : IterativeRandomForest
        A fitted :class:`~pyinterp.interactions.IterativeRandomForest`.
    top : int or None, default=20
        Number of interactions drawn, the first rows of ``interactions_``. None draws all of them.
    fig : matplotlib Figure, SubFigure or None, default=None
        Where the three panels are drawn. None makes a new Figure, 10 inches wide and
        1.5 + 0.3 inch an interaction high.

    Returns
    -------
    fig : matplotlib Figure or SubFigure
        The figure drawn on, with three Axes (stability, prevalence, precision).

    Raises
    ------
    TypeError
        If ``irf`` is not an :class:`~pyinterp.interactions.IterativeRandomForest`.
    sklearn.exceptions.NotFittedError
        If ``irf`` is not fitted.
    ValueError
        If ``top`` is not a positive int or None.

    See Also
    --------
    pyinterp.interactions.IterativeRandomForest : The estimator whose scores are drawn.
    plot_interaction_network : The same interactions as a graph of features.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from pyinterp.datasets import make_lss
    >>> from pyinterp.interactions import IterativeRandomForest
    >>> from pyinterp.plotting import plot_irf_scores
    >>> X, y, truth = make_lss(n_samples=300, n_features=6, snr=100, random_state=0)
    >>> irf = IterativeRandomForest(n_iterations=2, n_estimators=20, n_bootstraps=2, rit_n_trees=20,
    ...                             random_state=0).fit(X, y)
    >>> fig = plt.figure()
    >>> plot_irf_scores(irf, top=3, fig=fig) is fig
    True
    >>> [ax.get_title() for ax in fig.axes]
    ['stability', 'prevalence', 'precision']
    >>> [label.get_text() for label in fig.axes[0].get_yticklabels()]
    ['x0- & x1-', 'x2- & x3-', 'x0- & x2- & x3-']
    >>> plt.close("all")
    """
    check_fitted(irf, IterativeRandomForest, "irf", "interactions_")
    check_top(top)
    table = irf.interactions_[:top]
    fig = figure(fig, figsize=(10, 1.5 + 0.3 * max(len(table), 1)))
    panels = fig.subplots(1, len(_IRF_SCORES), sharey=True)
    at = np.arange(len(table))
    for ax, name in zip(panels, _IRF_SCORES):
        ax.barh(at, np.nan_to_num(table[name]), color="C0")
        ax.set_xlim(0, 1)
        ax.set_title(name)
    panels[0].set_yticks(at, [shortened(table.label(f)) for f in table.features])
    panels[0].invert_yaxis()
    fig.suptitle(f"iRF: top {len(table)} of {len(irf.interactions_)} interactions")
    return fig


def _network_table(result, score):
    if isinstance(result, IterativeRandomForest):
        check_fitted(result, IterativeRandomForest, "result", "interactions_")
        return result.interactions_, score or "stability"
    if isinstance(result, LSSFind):
        check_fitted(result, LSSFind, "result", "paths_")
        return result.selected_, score or "adjusted_dwp"
    if isinstance(result, InteractionTable):
        return result, score or ("stability" if "stability" in result.columns else result.columns[0])
    raise TypeError(f"result must be a fitted IterativeRandomForest, LSSFind or an InteractionTable, "
                    f"got {type(result).__name__}")


def plot_interaction_network(result, *, score=None, threshold=None, top=50, ax=None):
    """Plot found interactions as a network of features, an edge for each pair in an interaction.

    Features as nodes on a circle (in index order), an edge between two features when a kept
    interaction holds both (an interaction of order 3 or more gives every pair); the edge's width
    is the largest score of such an interaction (from 1 to 5 points, linear in the score).
    Signs are not drawn: x3+ and x3- are one node. The Axes is drawn without axis lines and
    titled with the number of edges and of kept interactions.

    Parameters
    ----------
    result : IterativeRandomForest, LSSFind or InteractionTable
        A fitted :class:`~pyinterp.interactions.IterativeRandomForest` (its ``interactions_``), a
        fitted :class:`~pyinterp.interactions.LSSFind` (its ``selected_``) or an
        :class:`~pyinterp.interactions.InteractionTable`.
    score : str or None, default=None
        The table column that keeps interactions and sets edge widths. None: ``"stability"`` for
        an iRF, ``"adjusted_dwp"`` for LSSFind, and for a table ``"stability"`` when it has that
        column, else its first column.
    threshold : float or None, default=None
        Interactions with ``score >= threshold`` are kept (inf keeps none). None: 0.5 when the
        score is ``"stability"``, else -inf (every interaction kept, as for LSSFind's
        ``selected_``, which passed its test already).
    top : int or None, default=50
        At most this many of the first kept interactions (in table order) are drawn. None draws
        all of them.
    ax : matplotlib Axes or None, default=None
        The Axes to draw on. None draws on a new figure's.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on.

    Raises
    ------
    TypeError
        If ``result`` is none of the accepted types.
    sklearn.exceptions.NotFittedError
        If ``result`` is an unfitted estimator.
    ValueError
        If ``score`` is not a column of the table, ``threshold`` is not a real number (NaN
        included) or ``top`` is not a positive int or None.

    See Also
    --------
    plot_irf_scores : iRF's scores of each interaction.
    plot_lssfind : LSSFind's mined sets and its test.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from pyinterp.datasets import make_lss
    >>> from pyinterp.interactions import LSSFind
    >>> from pyinterp.plotting import plot_interaction_network
    >>> X, y, truth = make_lss(n_samples=300, n_features=6, snr=100, random_state=0)
    >>> lss = LSSFind(n_estimators=30, max_order=2, random_state=0).fit(X, y)
    >>> fig, ax = plt.subplots()
    >>> plot_interaction_network(lss, ax=ax) is ax
    True
    >>> ax.get_title()
    '1 edges from 1 interactions'
    >>> [text.get_text() for text in ax.texts]  # the nodes
    ['x0', 'x1']
    >>> plt.close("all")
    """
    table, score = _network_table(result, score)
    check_top(top)
    if score not in table.columns:
        raise ValueError(f"score must be one of the table's columns {table.columns}, got {score!r}")
    threshold = check_threshold(threshold, 0.5 if score == "stability" else -np.inf)
    values = table[score]
    kept = np.flatnonzero(values >= threshold)[:top]
    edges: dict = {}
    nodes = set()
    for i in kept:
        features = sorted({k for k, _ in table.features[i]})
        nodes.update(features)
        for pair in itertools.combinations(features, 2):
            edges[pair] = max(edges.get(pair, -np.inf), values[i])
    nodes = sorted(nodes)
    angle = 2 * np.pi * np.arange(len(nodes)) / max(len(nodes), 1)
    where = {k: (np.cos(a), np.sin(a)) for k, a in zip(nodes, angle)}
    ax = axes(ax)
    from matplotlib.collections import LineCollection

    strengths = np.array(list(edges.values()), dtype=float)
    if len(edges):
        span = np.ptp(strengths) or 1.0
        widths = 1.0 + 4.0 * (strengths - strengths.min()) / span
        ax.add_collection(LineCollection([[where[a], where[b]] for a, b in edges], linewidths=widths, color="C0",
                                         alpha=0.7, zorder=1))
    if nodes:
        xy = np.array([where[k] for k in nodes])
        ax.scatter(xy[:, 0], xy[:, 1], s=120, color="C3", zorder=2)
        for (px, py), name in zip(xy, (table.named(((k, 0),))[0][0] for k in nodes)):
            # outward from the circle, clear of the dot (radius ~5.5 points at s=120): anchored by the
            # label's side facing the dot, so labels at the top and bottom do not sit on their dots
            ax.annotate(shortened(name), (px, py), xytext=(12 * px, 12 * py), textcoords="offset points", fontsize=9,
                        ha="center" if abs(px) < 0.5 else "left" if px > 0 else "right",
                        va="bottom" if py > 0.5 else "top" if py < -0.5 else "center")
    ax.set_xlim(-1.4, 1.4)
    ax.set_ylim(-1.4, 1.4)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(f"{len(edges)} edges from {len(kept)} interactions ({score} >= {threshold:.3g})"
                 if np.isfinite(threshold) else f"{len(edges)} edges from {len(kept)} interactions")
    return ax


def plot_interaction_response(rule, X, y, *, kind="auto", bins=10, ax=None):
    """Plot the mean of y on an interaction's cells, as the LSS papers show the response surface.

    ``kind="cells"``: one bar per cell of the rule's thresholds (each feature at or below / above
    its threshold; ``2^|S|`` cells, ``|S|`` <= 6), the rule's own cell highlighted, each bar labelled with
    its row count (an empty cell's bar has height 0). ``kind="surface"`` (``|S|`` = 2): the mean of y
    over a grid of ``bins`` x ``bins`` quantile bins of the two features, with the thresholds as
    lines and a colour bar. ``"auto"``: the surface for ``|S|`` = 2, else the cells.

    Parameters
    ----------
    rule : InteractionRule
        An :class:`~pyinterp.interactions.InteractionRule` (``lss.rule(...)``, ``irf.rule(...)``).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Data with the forest's training columns (see :meth:`InteractionRule.columns
        <pyinterp.interactions.InteractionRule.columns>`). Rows with a missing value in the
        rule's columns are left out.
    y : array-like of shape (n_samples,)
        The response, averaged over each cell.
    kind : {"auto", "cells", "surface"}, default="auto"
        What is drawn, as above.
    bins : int, default=10
        Quantile bins per feature of the surface, at most one per row (ignored by the cells).
        Tied quantiles merge bins.
    ax : matplotlib Axes or None, default=None
        The Axes to draw on. None draws on a new figure's.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on, titled with the rule's conditions.

    Raises
    ------
    TypeError
        If ``rule`` is not an :class:`~pyinterp.interactions.InteractionRule`.
    ValueError
        If ``kind`` is unknown, y does not have a value per row of X, ``kind="surface"`` is asked of
        an interaction of order other than 2 (or its ``bins`` is not a positive int), or the cells
        of one of order above 6.

    See Also
    --------
    pyinterp.interactions.LSSFind.rule : A rule from LSSFind's sets.
    pyinterp.interactions.IterativeRandomForest.rule : A rule from iRF's interactions.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from pyinterp.datasets import make_lss
    >>> from pyinterp.interactions import LSSFind
    >>> from pyinterp.plotting import plot_interaction_response
    >>> X, y, truth = make_lss(n_samples=300, n_features=6, snr=100, random_state=0)
    >>> lss = LSSFind(n_estimators=30, max_order=2, random_state=0).fit(X, y)
    >>> rule = lss.rule(lss.minimal_[0])
    >>> fig, ax = plt.subplots()
    >>> ax = plot_interaction_response(rule, X, y, kind="cells", ax=ax)
    >>> [label.get_text() for label in ax.get_xticklabels()]
    ['x0- & x1-', 'x0- & x1+', 'x0+ & x1-', 'x0+ & x1+']
    >>> ax = plot_interaction_response(rule, X, y, ax=plt.subplots()[1])  # order 2: the surface
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('x0', 'x1')
    >>> plt.close("all")
    """
    if not isinstance(rule, InteractionRule):
        raise TypeError(f"rule must be an InteractionRule (LSSFind.rule, IterativeRandomForest.rule), "
                        f"got {type(rule).__name__}")
    if kind not in ("auto", "cells", "surface"):
        raise ValueError(f"kind must be 'auto', 'cells' or 'surface', got {kind!r}")
    columns = rule.columns(X)
    y = check_array(y, ensure_2d=False, dtype=np.float64, ensure_min_samples=0, input_name="y").ravel()
    if y.shape[0] != columns.shape[0]:
        raise ValueError(f"y has {y.shape[0]} values for {columns.shape[0]} rows of X")
    observed = ~np.isnan(columns).any(axis=1)
    columns, y = columns[observed], y[observed]
    order = len(rule.features)
    if kind == "auto":
        kind = "surface" if order == 2 else "cells"
    names = [shortened(rule.names[k]) for k, _ in rule.features]
    ax = axes(ax)
    if kind == "surface":
        if order != 2:
            raise ValueError(f"kind='surface' needs an interaction of order 2, this one has order {order}")
        if len(y) == 0:
            raise ValueError("kind='surface' has no row to draw: every row of X misses a value in the rule's columns")
        # quantile bins beyond the rows would be empty: at most one per row
        bins = min(check_top(bins, "bins", allow_none=False), max(1, len(y)))
        return _surface(ax, columns, y, rule, names, bins)
    if order > 6:
        raise ValueError(f"kind='cells' draws 2^|S| cells, |S| <= 6; this interaction has order {order}")
    above = columns > rule.thresholds  # (n, |S|): the '+' side of each threshold
    patterns = list(itertools.product((False, True), repeat=order))
    means, counts = [], []
    for pattern in patterns:
        inside = (above == np.array(pattern)).all(axis=1)
        counts.append(int(inside.sum()))
        means.append(y[inside].mean() if inside.any() else np.nan)
    own = tuple(s > 0 for _, s in rule.features)
    colors = ["C3" if p == own else "C0" for p in patterns]
    at = np.arange(len(patterns))
    bars = ax.bar(at, np.nan_to_num(means), color=colors)
    ax.bar_label(bars, [f"n={c}" for c in counts], fontsize=8)
    labels = [" & ".join(f"{n}{'+' if up else '-'}" for n, up in zip(names, p)) for p in patterns]
    ax.set_xticks(at, labels, rotation=30 if order > 1 else 0, ha="right" if order > 1 else "center")
    ax.set_ylabel("mean of y")
    ax.set_title(shortened(rule.rule.condition_text(), 2 * LABEL_WIDTH))
    return ax


def _surface(ax, columns, y, rule, names, bins):
    edges = [np.unique(np.quantile(columns[:, j], np.linspace(0, 1, bins + 1))) for j in range(2)]
    cell = [np.clip(np.searchsorted(e, columns[:, j], side="right") - 1, 0, len(e) - 2)
            for j, e in enumerate(edges)]
    shape = (len(edges[1]) - 1, len(edges[0]) - 1)  # rows: the second feature, columns: the first
    flat = cell[1] * shape[1] + cell[0]
    sums = np.bincount(flat, weights=y, minlength=shape[0] * shape[1])
    counts = np.bincount(flat, minlength=shape[0] * shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, sums / counts, np.nan).reshape(shape)
    mesh = ax.pcolormesh(edges[0], edges[1], mean, cmap="viridis")
    ax.figure.colorbar(mesh, ax=ax, label="mean of y")
    ax.axvline(rule.thresholds[0], color="white", linestyle="--")
    ax.axhline(rule.thresholds[1], color="white", linestyle="--")
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    ax.set_title(shortened(rule.rule.condition_text(), 2 * LABEL_WIDTH))
    return ax
