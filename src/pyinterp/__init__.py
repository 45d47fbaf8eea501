"""pyinterp: interpretable tree ensembles and structure discovery for large-p data."""

from .forest import RandomForestClassifier, RandomForestRegressor, Tree

__all__ = ["RandomForestClassifier", "RandomForestRegressor", "Tree"]
__version__ = "0.1.0"
