"""pyinterp: interpretable tree ensembles and structure discovery for large-p data."""

from . import importance
from .forest import RandomForestClassifier, RandomForestRegressor, Tree
from .interactions import IterativeRandomForest, LocalLSSFind, LSSFind
from .itemsets import frequent_itemsets
from .partitioned import PartitionedRatio

__all__ = ["IterativeRandomForest", "LSSFind", "LocalLSSFind", "PartitionedRatio", "RandomForestClassifier", "RandomForestRegressor", "Tree", "frequent_itemsets",
           "importance"]
__version__ = "0.1.0"
