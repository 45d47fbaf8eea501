"""Reading the files genomics users hold, into forms the forests read in place.

- :func:`read_plink`: a PLINK 1 .bed / .bim / .fam fileset, the .bed memory-mapped.
- :func:`read_pgen`: a PLINK 2 .pgen / .pvar / .psam fileset's hardcalls (pgenlib, an optional
  dependency), packed.
- :class:`PackedGenotypes`: genotype calls two bits each, which every forest, importance and
  interaction finder takes as ``X``.
- :func:`read_vcf`: a VCF or BCF file's GT calls (cyvcf2, an optional dependency), packed.
- :func:`read_bgen`: a BGEN file's probabilities as PLINK 2's hardcalls (the bgen package, an
  optional dependency), packed.
- :class:`ColumnFiles`: X's columns in .bed or .npy files every Dask worker reads, which the
  forests fit feature-parallel without any process holding all of X.
- :func:`read_pheno`: a phenotype or covariate file in PLINK's format (FID, IID, columns).
- AnnData (``.h5ad``) needs no reader here: every estimator takes an ``anndata.AnnData`` as X,
  named by its ``var_names`` (:mod:`pyinterp.io.h5ad`).
"""

from .bgen import read_bgen
from .column_files import ColumnFiles
from .packed import PackedGenotypes
from .pgen import read_pgen
from .phenotypes import read_pheno
from .plink import read_plink
from .vcf import read_vcf

__all__ = ["ColumnFiles", "PackedGenotypes", "read_bgen", "read_pgen", "read_pheno", "read_plink", "read_vcf"]
