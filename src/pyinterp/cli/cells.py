"""The command line on AnnData (.h5ad): X (or a layer) named by var_names, the target an obs
column (``--target obs:cell_type``) or a phenotype file matched by cell name, covariates from obs
or a file, and cell and gene lists. The file is opened backed, so only the cells and genes kept
are read."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.h5ad import anndata_matrix
from ..io.phenotypes import Phenotypes, match_phenotype, read_pheno
from .data import Data, DataError, _target, listing
from .genotypes import selections, with_covariates


def is_h5ad(path) -> bool:
    return Path(path).name.lower().endswith(".h5ad")


def h5ad_data(args):
    """Data for the command's jobs, and the description line, from an .h5ad file and the options."""
    try:
        import anndata
    except ImportError:
        raise DataError(f"reading {args.file} needs anndata: pip install 'interptrees[h5ad]'") from None
    if not Path(args.file).is_file():
        raise DataError(f"{args.file}: no such file")
    try:
        adata = anndata.read_h5ad(args.file, backed="r")
    except Exception as error:  # h5py and anndata raise many types for a file that is not AnnData
        raise DataError(f"{args.file}: not an AnnData .h5ad file ({type(error).__name__}: {error})") from None
    try:
        return _data(args, adata)
    finally:
        adata.file.close()


def _data(args, adata):
    cells = {"iid": np.asarray(adata.obs_names, dtype=object)}
    genes = np.asarray(adata.var_names, dtype=object)
    notes = []
    keep, chosen = selections(args, cells, genes, notes, units=("cells", "genes"), source="var_names")
    name = _target_name(args)
    if args.pheno is not None:
        table = read_pheno(args.pheno)
        name = name or next(iter(table.columns))
        try:
            phenotype = match_phenotype(cells, table, name, args.pheno)
        except ValueError as error:
            raise DataError(str(error)) from None
        rows, values, task, where = phenotype.rows, phenotype.values, phenotype.task, args.pheno
        notes.extend(phenotype.notes)
        task = task if args.task == "auto" else args.task
    else:
        if name is None:
            raise DataError(f"give --target obs:COLUMN, the obs column of {args.file} to explain; its obs columns are "
                            f"{listing(adata.obs.columns) or 'none'}")
        rows, values, task = _obs_target(adata.obs, name, args.task, args.file, notes)
        where = "obs"
    rows, values = rows[keep[rows]], values[keep[rows]]
    if not len(rows):
        raise DataError(f"no cell with {name} is left after --keep / --remove")
    covariates = None
    if args.covar is not None or args.covar_name:
        table, covar_where = ((read_pheno(args.covar), args.covar) if args.covar is not None
                              else (_obs_table(adata.obs, args.covar_name, args.file), "obs"))
        names = None if args.covar is None else args.covar_name  # obs: the table holds just those named
        rows, values, task, covariates = with_covariates(cells, table, names, covar_where, args, rows, values, task,
                                                         name, notes, units=("cells", "genes"))
    if task == "classification" and len(np.unique(values)) < 2:
        raise DataError(f"the target {name!r} has one class ({listing(np.unique(values))}) among the cells kept")
    X = _matrix(adata, rows, np.flatnonzero(chosen), args.layer, args.file)
    n, p = X.shape
    form = f"{'sparse ' + X.X.format.upper() if hasattr(X.X, 'format') else 'dense'} {X.X.dtype}"
    source = f"layer {args.layer!r}" if args.layer else "X"
    description = (f"{args.file}: n={n} cells, p={p} genes ({source}, {form}), target {name!r} from {where} "
                   f"({task}{', inferred; --task overrides' if args.task == 'auto' else ''})")
    always, categories = (), None
    if covariates is not None:
        design, covariate_names, categories = covariates
        X = _beside(X, design, covariate_names, args.file)
        always = tuple(range(p, X.shape[1]))
    return Data(X, values, list(X.var_names), task, [_of_cells(note) for note in notes], always,
                categories=categories), description


def _beside(X, values, names, path):
    """The AnnData X with the covariates as columns after the genes (--covar-mode always): sparse
    stays sparse (CSR), a dense X is read into memory."""
    import anndata
    import scipy.sparse as sp

    clash = sorted(set(names) & set(X.var_names))
    if clash:
        raise DataError(f"{path}: covariates {listing(clash)} have the names of genes; rename them in the "
                        "covariate file")
    matrix = X.X
    matrix = (sp.hstack([matrix, sp.csr_matrix(values)], format="csr") if sp.issparse(matrix)
              else np.hstack([np.asarray(matrix, dtype=np.float64), values]))
    return anndata.AnnData(matrix, var=X.var[[]].reindex(list(X.var_names) + list(names)))


def _of_cells(note):
    """A note of the phenotype and covariate matching (written for genotype files) in cells' terms."""
    for genotype_word, cell_word in (("genotyped samples", "cells"), ("are not genotyped", "are not in the .h5ad"),
                                     ("samples", "cells"), ("among genotypes", "among genes")):
        note = note.replace(genotype_word, cell_word)
    return note


def _target_name(args):
    if args.pheno_name and args.target and args.pheno_name != args.target:
        raise DataError(f"--target {args.target!r} and --pheno-name {args.pheno_name!r} disagree; give one")
    name = args.pheno_name or args.target
    return name[len("obs:"):] if name and name.startswith("obs:") else name


def _obs_target(obs, name, task, path, notes):
    """rows, values and task of the obs column `name`: cells where it is missing are left out (and
    counted); classes for text, categories and at most 20 distinct integers, as for a table."""
    if name not in obs.columns:
        raise DataError(f"{path}: no obs column {name!r}; its obs columns are {listing(obs.columns) or 'none'}")
    column = obs[name]
    present = column.notna().to_numpy()
    if not present.any():
        raise DataError(f"{path}: obs column {name!r} is missing for every cell")
    if not present.all():
        notes.append(f"{int(present.sum())} of the {len(obs)} cells have {name}; {int((~present).sum())} have it "
                     "missing and are left out")
    rows = np.flatnonzero(present)
    column = column.iloc[rows]
    if hasattr(column, "cat"):  # categories: the labels, without the unused ones
        column = column.astype(column.cat.categories.dtype)
    values, task = _target(column, name, task, obs.iloc[rows])
    return rows, values, task


def _obs_table(obs, names, path):
    """obs columns as a covariate table (text, as a covariate file holds it: numbers and levels)."""
    names = [n[len("obs:"):] if n.startswith("obs:") else n for n in names]
    unknown = [n for n in names if n not in obs.columns]
    if unknown:
        raise DataError(f"{path}: no obs column {listing(map(repr, unknown))} for --covar-name; its obs columns are "
                        f"{listing(obs.columns) or 'none'}")
    columns = {n: np.array(["nan" if v is None or v != v else repr(v) if isinstance(v, float) else str(v)
                            for v in obs[n].to_numpy(dtype=object)], dtype=object) for n in names}
    return Phenotypes(None, np.asarray(obs.index, dtype=object), columns)


def _matrix(adata, rows, genes, layer, path):
    """The kept cells and genes of X (or of a layer) in memory, as an AnnData named by var_names."""
    import anndata

    subset = adata[rows, genes] if len(rows) < adata.n_obs or len(genes) < adata.n_vars else adata
    if layer is None:
        if adata.X is None:
            raise DataError(f"{path} has no X: name a layer with --layer")
        matrix = anndata_matrix(subset)[0]  # a whole dense X stays in the file, memory-mapped
    elif layer not in adata.layers:
        raise DataError(f"{path}: no layer {layer!r}; its layers are {listing(adata.layers.keys()) or 'none'}")
    else:
        matrix = subset.layers[layer]  # anndata reads layers into memory
    return anndata.AnnData(matrix, var=subset.var[[]])
