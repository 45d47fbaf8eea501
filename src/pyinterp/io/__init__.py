"""Reading the files genomics users hold, into forms the forests read in place.

- :func:`read_plink`: a PLINK 1 .bed / .bim / .fam fileset, the .bed memory-mapped.
- :class:`PackedGenotypes`: genotype calls two bits each, which every forest, importance and
  interaction finder takes as ``X``.
"""

from .packed import PackedGenotypes
from .plink import read_plink

__all__ = ["PackedGenotypes", "read_plink"]
