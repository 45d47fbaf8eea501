"""The other estimators' fits: the partitioned ratio's lambda path, DL-BCD's atoms and objective
history, Skinny Trees' selected features per epoch."""

from __future__ import annotations

import numpy as np

from ..dictionary import DLBCD
from ..partitioned import PartitionedRatio
from ..skinny import SkinnyTreesClassifier, SkinnyTreesRegressor
from ._base import axes, check_fitted, check_top, column_names


def plot_ratio_path(ratio, *, top=10, ax=None):
    """The group norm of the ``top`` cross pairs that enter the path first (largest
    ``entry_lambda_``) against lambda, from lambda_max down (log scale when every lambda is
    positive), each pair's entry point marked on the axis and the selected ``lambda_`` dashed.
    Returns the Axes."""
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
    ax.set_title(f"{len(first)} of {n_cross} cross pairs, by entry; {len(ratio.cross_edges_)} edges at the selection")
    ax.legend(fontsize=8)
    return ax


def plot_dictionary_atoms(dlbcd, *, top=None, ax=None):
    """The learned dictionary ``components_`` as an image: the first ``top`` atoms (all by
    default) as columns, one row per feature, a diverging colour scale centred at 0. Returns the
    Axes."""
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
    """DL-BCD's objective before the first sweep and after each sweep of the kept restart: the
    final (tau) stage and, with ``init="l1"``, the plain l1 stage before it. Returns the Axes."""
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
    """Skinny Trees' selected features after each epoch (the group-L0 path from dense to sparse),
    the returned epoch starred; the validation score on a second axis when there were
    validation rows. Returns the Axes of the features."""
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
    ax.legend(loc="center right")
    score = np.asarray(history["val_score"], dtype=float)
    if np.isfinite(score).any():
        other = ax.twinx()
        other.plot(epochs, score, color="C2", linestyle=":", label="validation score")
        other.set_ylabel("validation score", color="C2")
    return ax
