"""AnnData (``.h5ad``) as X: the matrix the forests read, with ``var_names`` as feature names.

Every estimator and function that takes X takes an ``anndata.AnnData``: its ``X`` (a scipy.sparse
matrix or a dense array), named by ``var_names``, as a DataFrame's columns name its features. A
backed AnnData (``anndata.read_h5ad(path, backed="r")``) is read when X is validated: a dense X
stored contiguous and uncompressed is memory-mapped from the file (the forests then read it in
panels, as they read an ``np.load(..., mmap_mode="r")`` array), anything else is read into memory.
Nothing here imports anndata; AnnData is recognised by its type's name and module.
"""

from __future__ import annotations

import numpy as np


def is_anndata(X) -> bool:
    """Whether X is an ``anndata.AnnData`` (or a view of one)."""
    return any(t.__name__ == "AnnData" and t.__module__.split(".")[0] == "anndata" for t in type(X).__mro__)


def anndata_matrix(adata):
    """(matrix, feature names) of an AnnData: its X as an array or scipy.sparse matrix, and
    ``var_names`` as an object array of strings.

    Examples
    --------
    >>> import anndata, numpy as np, pandas as pd
    >>> from pyinterp.io.h5ad import anndata_matrix
    >>> adata = anndata.AnnData(np.eye(3, dtype=np.float32), var=pd.DataFrame(index=["CD3E", "MS4A1", "LYZ"]))
    >>> matrix, names = anndata_matrix(adata)
    >>> matrix.shape, list(names)
    ((3, 3), ['CD3E', 'MS4A1', 'LYZ'])
    """
    X = adata.X
    if X is None:
        raise ValueError("X: the AnnData has no X (adata.X is None); put the matrix to fit on in X, e.g. "
                         "anndata.AnnData(adata.layers['counts'], obs=adata.obs, var=adata.var)")
    names = np.asarray(adata.var_names, dtype=object)
    if not all(isinstance(v, str) for v in names):
        raise ValueError("X: the AnnData's var_names must be strings (they name the features)")
    if getattr(adata, "isbacked", False):
        X = _backed(adata, X)
    return X, names


def _backed(adata, X):
    """A backed AnnData's X in memory, or memory-mapped when the file holds it as one plain block."""
    import h5py  # anndata's own dependency: a backed AnnData means it is there

    if isinstance(X, h5py.Dataset) and not adata.is_view:
        offset = X.id.get_offset()
        if X.chunks is None and X.compression is None and offset is not None and X.dtype.isnative:
            return np.memmap(adata.filename, dtype=X.dtype, mode="r", offset=offset, shape=X.shape, order="C")
        return X[...]
    if hasattr(X, "to_memory"):  # a backed sparse dataset
        return X.to_memory()
    return np.asarray(X[...]) if isinstance(X, h5py.Dataset) else X
