"""pyinterp: interpretable tree ensembles and structure discovery for large-p data.

The public names load with the module that defines them, when first used (PEP 562): ``import
pyinterp`` alone loads nothing heavy, so the command line answers Ctrl-C from its first moment."""

import importlib
import importlib.util
from typing import TYPE_CHECKING

from ._version import __version__

if TYPE_CHECKING:  # what type checkers and editors read; at run time __getattr__ loads these
    from . import importance, significance, skinny
    from ._validation import OutputTooLarge
    from .dictionary import DLBCD, sharpness_test
    from .forest import CategoryCodes, RandomForestClassifier, RandomForestRegressor, Tree, combine
    from .interactions import IterativeRandomForest, LocalLSSFind, LSSFind, frequent_itemsets
    from .partitioned import PartitionedRatio
    from .skinny import SkinnyTreesClassifier, SkinnyTreesRegressor

# public name -> the module that defines it (submodules load by their own names)
_HOMES = {
    "CategoryCodes": "forest", "RandomForestClassifier": "forest", "RandomForestRegressor": "forest",
    "Tree": "forest", "combine": "forest",
    "DLBCD": "dictionary", "sharpness_test": "dictionary",
    "IterativeRandomForest": "interactions", "LocalLSSFind": "interactions", "LSSFind": "interactions",
    "frequent_itemsets": "interactions",
    "OutputTooLarge": "_validation",
    "PartitionedRatio": "partitioned",
    "SkinnyTreesClassifier": "skinny", "SkinnyTreesRegressor": "skinny",
}

__all__ = ["CategoryCodes", "DLBCD", "IterativeRandomForest", "LSSFind", "LocalLSSFind", "OutputTooLarge",
           "PartitionedRatio", "RandomForestClassifier", "RandomForestRegressor", "SkinnyTreesClassifier",
           "SkinnyTreesRegressor", "Tree", "__version__", "combine", "frequent_itemsets", "importance",
           "sharpness_test", "skinny"]


def __getattr__(name):
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(f".{home}", __name__), name)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f".{name}", __name__)  # pyinterp.importance, pyinterp.io, ...
    else:
        raise AttributeError(f"module 'pyinterp' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
