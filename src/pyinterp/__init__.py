"""pyinterp: interpretable tree ensembles and structure discovery for large-p data."""

from . import importance
from .dictionary import DLBCD, sharpness_test
from .forest import RandomForestClassifier, RandomForestRegressor, Tree
from .interactions import IterativeRandomForest, LocalLSSFind, LSSFind
from .itemsets import frequent_itemsets

__all__ = ["DLBCD", "IterativeRandomForest", "LSSFind", "LocalLSSFind", "RandomForestClassifier", "RandomForestRegressor", "Tree", "frequent_itemsets",
           "importance", "sharpness_test"]
__version__ = "0.1.0"
