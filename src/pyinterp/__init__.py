"""pyinterp: interpretable tree ensembles and structure discovery for large-p data."""

from . import importance
from .forest import RandomForestClassifier, RandomForestRegressor, Tree

__all__ = ["RandomForestClassifier", "RandomForestRegressor", "Tree", "importance"]
__version__ = "0.1.0"
