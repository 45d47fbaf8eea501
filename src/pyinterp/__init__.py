"""pyinterp: interpretable tree ensembles and structure discovery for large-p data."""

from . import importance, significance, skinny
from ._validation import OutputTooLarge
from ._version import __version__
from .dictionary import DLBCD, sharpness_test
from .forest import CategoryCodes, RandomForestClassifier, RandomForestRegressor, Tree, combine
from .interactions import IterativeRandomForest, LocalLSSFind, LSSFind, frequent_itemsets
from .partitioned import PartitionedRatio
from .skinny import SkinnyTreesClassifier, SkinnyTreesRegressor

__all__ = ["CategoryCodes", "DLBCD", "IterativeRandomForest", "LSSFind", "LocalLSSFind", "OutputTooLarge",
           "PartitionedRatio", "RandomForestClassifier", "RandomForestRegressor", "SkinnyTreesClassifier",
           "SkinnyTreesRegressor", "Tree", "__version__", "combine", "frequent_itemsets", "importance",
           "sharpness_test", "skinny"]
