"""Random forests on the C++ engine (estimators.py), the fitted trees' node arrays (tree.py), and one
view of a fitted forest, pyinterp's or scikit-learn's, for the measures that read it (view.py), and
its trees as readable rules (rules.py), and combine (combine.py) of forests fitted apart."""

from .categories import CategoryCodes
from .combine import combine
from .estimators import RandomForestClassifier, RandomForestRegressor
from .rules import Rule, tree_rules
from .tree import Tree

__all__ = ["CategoryCodes", "RandomForestClassifier", "RandomForestRegressor", "Rule", "Tree", "combine", "tree_rules"]
