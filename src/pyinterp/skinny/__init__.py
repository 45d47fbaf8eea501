"""Skinny Trees (paper 003): soft tree ensembles that select features while they learn."""

from .budget import DEFAULT_SPACE, PAPER_SPACE, fit_budget
from .estimators import SkinnyTreesClassifier, SkinnyTreesRegressor

__all__ = ["DEFAULT_SPACE", "PAPER_SPACE", "SkinnyTreesClassifier", "SkinnyTreesRegressor", "fit_budget"]
