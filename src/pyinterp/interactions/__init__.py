"""Interaction discovery from a forest's decision paths (paper 001, thesis ch. 9-10).

Signed features are (feature k, sign): sign -1 for the left branch (x <= threshold), +1 for the
right. Internally a signed feature is the integer code 2k (left) or 2k + 1 (right)."""

from .dwp import dwp, prevalent_sets
from .irf import IterativeRandomForest
from .itemsets import TooManyItemsets, frequent_itemsets
from .local import path_prevalence
from .lssfind import LocalLSSFind, LSSFind, NoInteractionWarning, minimal
from .pairs import PairScan, pair_scan
from .paths import SignedPaths, TooManyPathCodes, decode, distinct_paths, encode, signed_paths
from .screen import PairScreen, screen_pairs
from .rit import TooManyIntersections, random_intersection_trees
from .rules import InteractionRule, interaction_rule
from .table import InteractionTable

__all__ = ["InteractionRule", "InteractionTable", "IterativeRandomForest", "LSSFind", "LocalLSSFind", "NoInteractionWarning", "PairScan", "PairScreen", "SignedPaths", "TooManyIntersections",
           "TooManyItemsets", "TooManyPathCodes", "decode",
           "distinct_paths", "dwp", "encode", "frequent_itemsets", "interaction_rule", "minimal", "pair_scan", "path_prevalence", "prevalent_sets",
           "random_intersection_trees", "screen_pairs", "signed_paths"]
