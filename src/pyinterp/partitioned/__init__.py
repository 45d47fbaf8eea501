"""The partitioned ratio (Liu, Suzuki & Sugiyama; spec seed004): cross-block Markov-random-field edges.

``PartitionedRatio`` (``estimator.py``) is the estimator. The advanced API below is public and
documented for callers that drive the objective or the path solver directly (bench/ does):

- ``RatioProblem`` (``ratio.py``): the smooth MLMI loss and its gradient on standardised samples.
- ``PAIR_FEATURES``, ``UNARY_FEATURES`` (``ratio.py``): the named feature sets of ``features`` and
  ``unary``, as (phi, psi) pairs and elementwise functions.
- ``solve_path`` (``group_path.py``): the warm-started group-lasso path of a problem over a lambda grid.
"""

from .estimator import PartitionedRatio
from .group_path import solve_path
from .ratio import PAIR_FEATURES, UNARY_FEATURES, RatioProblem

__all__ = ["PAIR_FEATURES", "UNARY_FEATURES", "PartitionedRatio", "RatioProblem", "solve_path"]
