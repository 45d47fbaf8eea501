"""Plots of fitted pyinterp estimators and results (matplotlib, the optional [plot] extra: it is
imported only when a plot is drawn). Every function takes the fitted object, draws on ``ax=``
(or ``fig=`` for several panels; new ones by default) and returns the Axes or Figure; features
are labelled with the estimator's column names when it has them."""

from .importance import plot_importances
from .interactions import plot_interaction_network, plot_interaction_response, plot_irf_scores, plot_lssfind
from .models import plot_dictionary_atoms, plot_objective_history, plot_ratio_path, plot_skinny_path

__all__ = ["plot_dictionary_atoms", "plot_importances", "plot_interaction_network", "plot_interaction_response",
           "plot_irf_scores", "plot_lssfind", "plot_objective_history", "plot_ratio_path", "plot_skinny_path"]
