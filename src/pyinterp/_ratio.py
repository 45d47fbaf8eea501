"""pyinterp 0.1.0 pickled a fitted PartitionedRatio's feature functions under this module's name;
they now live in partitioned/ratio.py. This module only lets those pickles load."""

from .partitioned.ratio import _he2, _identity

__all__ = ["_he2", "_identity"]
