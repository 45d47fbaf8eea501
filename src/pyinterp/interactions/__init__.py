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
from .triples import TripleScan, triple_scan

# The budget errors are made by the compiled core (MemoryError subclasses registered by pybind11),
# which gives them no docstring: they are documented here, where they are exported.
TooManyPathCodes.__doc__ = """Raised when a forest's signed paths would hold more codes than ``max_codes``.

A :class:`MemoryError`: the codes of all the leaves' paths grow as leaves x depth in deep trees, so
a reading counts them first and raises this before building any output. :func:`signed_paths`,
:func:`distinct_paths`, :func:`dwp` and :func:`prevalent_sets` take the budget as ``max_codes``
(default 2**31 codes, 8 GiB); :class:`LSSFind` and :class:`IterativeRandomForest` read their
forests' paths with the default. Raise ``epsilon``, grow shallower trees (``max_depth``,
``min_samples_leaf``) or raise ``max_codes``.

See Also
--------
signed_paths : Reads the paths, within ``max_codes``.

Examples
--------
>>> import numpy as np
>>> from pyinterp.forest import RandomForestRegressor
>>> from pyinterp.interactions import TooManyPathCodes, signed_paths
>>> X = np.random.default_rng(0).standard_normal((200, 4))
>>> forest = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, X[:, 0])
>>> try:
...     signed_paths(forest, max_codes=10)
... except TooManyPathCodes as error:
...     print(type(error).__name__, isinstance(error, MemoryError))
TooManyPathCodes True
"""

TooManyItemsets.__doc__ = """Raised when more itemsets are frequent than ``max_itemsets``.

A :class:`MemoryError`: a low support threshold can make the frequent itemsets explode, so the
miner stops at the budget before memory runs out. :func:`frequent_itemsets` and
:func:`prevalent_sets` take the budget as ``max_itemsets`` (default 2,000,000), which
:class:`LSSFind` and :class:`LocalLSSFind` mine with. Raise the threshold (``min_support``,
``min_dwp``), lower the largest size (``max_size``, ``max_order``) or raise ``max_itemsets``.

See Also
--------
frequent_itemsets : Mines the itemsets, within ``max_itemsets``.

Examples
--------
>>> from pyinterp.interactions import TooManyItemsets, frequent_itemsets
>>> try:
...     frequent_itemsets([[1, 2, 3], [1, 2, 3]], max_itemsets=3)  # 7 itemsets are frequent
... except TooManyItemsets as error:
...     print(type(error).__name__, isinstance(error, MemoryError))
TooManyItemsets True
"""

TooManyIntersections.__doc__ = """Raised when random intersection trees would draw more nodes than ``max_nodes``.

A :class:`MemoryError`: work and output grow as n_children^depth, so every node drawn over all
trees (kept or dropped for its size; each tree's root counts) is counted against the budget.
:func:`random_intersection_trees` takes it as ``max_nodes`` (default 10,000,000), which
:class:`IterativeRandomForest` runs its trees with. Lower ``depth``, ``n_children`` or ``n_trees``,
or raise ``max_nodes``.

See Also
--------
random_intersection_trees : Grows the trees, within ``max_nodes``.

Examples
--------
>>> from pyinterp.interactions import TooManyIntersections, random_intersection_trees
>>> sets = [[1, 2, 3, 4], [1, 2, 3, 5], [2, 3, 4]]
>>> try:
...     random_intersection_trees(sets, n_trees=20, max_nodes=10, random_state=0)
... except TooManyIntersections as error:
...     print(type(error).__name__, isinstance(error, MemoryError))
TooManyIntersections True
"""

__all__ = ["InteractionRule", "InteractionTable", "IterativeRandomForest", "LSSFind", "LocalLSSFind",
           "NoInteractionWarning", "PairScan", "PairScreen", "SignedPaths", "TooManyIntersections", "TooManyItemsets",
           "TooManyPathCodes", "TripleScan", "decode", "distinct_paths", "dwp", "encode", "frequent_itemsets",
           "interaction_rule", "minimal", "pair_scan", "path_prevalence", "prevalent_sets",
           "random_intersection_trees", "screen_pairs", "signed_paths", "triple_scan"]
