"""The command line on genotype files (a PLINK 1 fileset read in place; PLINK 2 hardcalls, VCF /
BCF calls and BGEN hardcalls packed): the phenotype from the .fam / .psam / .sample or a phenotype
file matched by sample ID, covariates, and PLINK's sample and variant lists."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..forest import CategoryCodes
from ..io.genes import genes_of_variants, read_gene_ranges
from ..io.lists import read_sample_list, read_variant_list, samples_in
from ..io.phenotypes import (Phenotypes, adjust_for_covariates, as_indicators, indicator_names, match_covariates,
                              match_phenotype, read_pheno)
from ..io.bgen import read_bgen
from ..io.pgen import read_pgen
from ..io.plink import read_plink
from ..io.vcf import read_vcf
from .data import Data, DataError, listing, listing_levels

PLINK1 = (".bed", ".bim", ".fam")
PLINK2 = (".pgen", ".pvar", ".psam", ".pvar.zst")
VCF = (".vcf", ".bcf", ".vcf.gz")
BGEN = (".bgen",)
# Sample-table columns that are not phenotypes (.fam's, .psam's and an Oxford .sample's names).
NOT_PHENOTYPES = {"fid", "iid", "sid", "father", "mother", "pat", "mat", "sex", "missing"}


def is_genotype_file(path) -> bool:
    return Path(path).name.lower().endswith(PLINK1 + PLINK2 + VCF + BGEN)


def _is_vcf(path) -> bool:
    return Path(path).name.lower().endswith(VCF)


def genotype_data(args):
    """Data for the command's jobs, and the description line, from a fileset and the options."""
    name = Path(args.file).name.lower()
    plink2, vcf, bgen = name.endswith(PLINK2), _is_vcf(args.file), name.endswith(BGEN)
    if args.covar_name and args.covar is None:
        raise DataError("--covar-name names columns of the covariate file: give it with --covar FILE")
    if vcf and args.pheno is None:
        raise DataError(f"{args.file}: a VCF holds no phenotypes: give them with --pheno FILE (samples matched by "
                        "IID, the VCF's sample names)")
    G = (read_vcf(args.file) if vcf else _read_bgen(args.file) if bgen else read_pgen(args.file) if plink2
         else read_plink(args.file))
    notes = []
    keep, variants = selections(args, G.sample_table, G.variant_ids, notes)
    if args.pheno is not None:
        table, where = read_pheno(args.pheno), args.pheno
    else:
        samples = G.sample_table
        columns = {name: column for name, column in samples.items() if name not in NOT_PHENOTYPES}
        where = _stem(args.file) + (".psam" if plink2 else ".sample" if bgen else ".fam")
        if not columns:
            raise DataError(f"{where} has no phenotype column: give the phenotypes with --pheno FILE")
        table = Phenotypes(samples["fid"], samples["iid"], columns)
    name = args.pheno_name or args.target or next(iter(table.columns))
    if args.pheno_name and args.target and args.pheno_name != args.target:
        raise DataError(f"--target {args.target!r} and --pheno-name {args.pheno_name!r} disagree; give one")
    try:
        phenotype = match_phenotype(G.sample_table, table, name, where)
    except ValueError as error:
        hint = "" if args.pheno else "; give the phenotypes with --pheno FILE"
        raise DataError(f"{error}{hint}") from None
    rows = phenotype.rows[keep[phenotype.rows]]
    values = phenotype.values[keep[phenotype.rows]]
    if not len(rows):
        raise DataError(f"no sample with {name} is left after --keep / --remove")
    notes.extend(phenotype.notes)
    if len(rows) < len(phenotype.rows):
        notes.append(f"{len(rows)} samples are left after --keep / --remove")
    task = phenotype.task if args.task == "auto" else args.task
    if task == "regression" and values.dtype.kind not in "fiu":
        raise DataError(f"the phenotype {name!r} is not numeric ({values[0]!r}); regression needs numbers")
    covariates = None
    if args.covar is not None:
        rows, values, task, covariates = with_covariates(G.sample_table, read_pheno(args.covar), args.covar_name,
                                                         args.covar, args, rows, values, task, name, notes)
    selected = G[rows] if len(rows) < G.shape[0] else G
    if not variants.all():
        selected = selected[:, np.flatnonzero(variants)]
    if task == "classification":
        classes = np.unique(values)
        if len(classes) < 2:
            raise DataError(f"the phenotype {name!r} has one class ({listing(classes)}) among the samples kept")
    n, p = selected.shape
    genes = None if args.genes is None else variant_genes(selected, args.genes, notes)
    always = ()
    if covariates is not None:
        design, covariate_names, categories = covariates
        selected = selected.with_covariates(design, covariate_names)
        always = tuple(range(p, selected.shape[1]))
    data = Data(selected, values, list(selected.feature_names), task, notes, always, genes,
                None if covariates is None else covariates[2])
    read = "hardcalls packed" if plink2 or bgen else "GT calls packed" if vcf else "read in place"
    description = (f"{args.file}: n={n} samples, p={p} variants ({read}), phenotype {name!r} from {where} "
                   f"({task}{', inferred; --task overrides' if args.task == 'auto' else ''})")
    return data, description


def variant_genes(G, path, notes):
    """{variant ID: its genes} of --genes' list for the variants of G that lie in a gene, and a note
    of how many do."""
    try:
        ranges = read_gene_ranges(path)
    except OSError as error:
        raise DataError(f"--genes {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise DataError(str(error)) from None
    table = G.variant_table
    if "chrom" not in table or "pos" not in table:
        raise DataError("--genes: the genotype file gives no chromosome and position of its variants")
    genes = genes_of_variants(table["chrom"], table["pos"], ranges)
    inside = np.flatnonzero(genes != "")
    notes.append(f"--genes: {len(inside)} of the {len(genes)} variants lie in a gene of {path}")
    return {G.variant_ids[k]: genes[k] for k in inside}


def selections(args, samples, ids, notes, units=("samples", "variants"), source="the .bim"):
    """Masks of the samples kept by --keep / --remove (by FID and IID, or IID) and of the
    variants (genes) kept by --extract / --exclude (by ID), with a note of what each list named."""
    keep = np.ones(len(samples["iid"]), dtype=bool)
    for option, path, wanted in (("--keep", args.keep, True), ("--remove", args.remove, False)):
        if path is not None:
            named = samples_in(samples, read_sample_list(path))
            notes.append(f"{option} {path}: {int(named.sum())} of the {len(keep)} {units[0]} named")
            keep &= named if wanted else ~named
    chosen = np.ones(len(ids), dtype=bool)
    for option, path, wanted in (("--extract", args.extract, True), ("--exclude", args.exclude, False)):
        if path is not None:
            listed = read_variant_list(path)
            named = np.isin(np.asarray(ids).astype(str), listed.astype(str))
            unknown = len(set(listed) - set(ids))
            notes.append(f"{option} {path}: {int(named.sum())} of the {len(chosen)} {units[1]} named"
                         + (f" ({unknown} of its IDs are not in {source})" if unknown else ""))
            chosen &= named if wanted else ~named
    if not chosen.any():
        raise DataError(f"no {units[1][:-1]} is left after --extract / --exclude")
    return keep, chosen


def with_covariates(samples, covariate_table, names, where, args, rows, values, task, name, notes,
                    units=("samples", "genotypes")):
    """The covariates of `covariate_table` (a Phenotypes; `names`: those to use, None every column)
    by --covar-mode, on the samples that have the phenotype and every covariate: (rows, values,
    task, covariates). always: the phenotype as it is and covariates = (values, names, categories)
    for those rows, the columns to search at every split (categories: the CategoryCodes of the
    text ones, or None). adjust: the phenotype's residuals (see
    pyinterp.io.phenotypes.adjust_for_covariates), regression, and covariates None."""
    adjust = args.covar_mode == "adjust"
    if adjust and args.task == "classification":
        raise DataError("--covar-mode adjust leaves a continuous residual: leave out --task classification, or "
                        "offer the covariates at every split (--covar-mode always)")
    if adjust and values.dtype.kind not in "fiu":
        raise DataError(f"--covar-mode adjust adjusts a numeric phenotype; {name!r} is text ({values[0]!r}): "
                        "offer the covariates at every split (--covar-mode always)")
    try:
        covariates = match_covariates(samples, covariate_table, names, where)
    except ValueError as error:
        raise DataError(str(error)) from None
    notes.extend(covariates.notes)
    both = np.isin(rows, covariates.rows)
    if not both.any():
        raise DataError(f"no {units[0][:-1]} with {name} has every covariate of {where}")
    rows, values = rows[both], values[both]
    design = covariates.design[np.searchsorted(covariates.rows, rows)]
    columns = _counted(covariates.names)
    coded = [covariates.names.index(n) for n in covariates.categories]
    if not adjust:
        return rows, values, task, _offered(covariates, design, coded, args, task, values, name, notes, units)
    try:
        residuals = adjust_for_covariates(values, design, coded)
    except ValueError as error:
        raise DataError(str(error)) from None
    kind = "a linear probability model of the cases" if task == "classification" else "least squares"
    if coded:
        its = "its" if len(coded) == 1 else "their"
        columns = columns[:-1] + f"; {listing(covariates.categories)} as indicators of {its} levels)"
    notes.append(f"{name} adjusted for {columns} by {kind}, on the {len(rows)} {units[0]} with both: the forests "
                 f"explain the residuals (regression), and every interaction is among {units[1]}")
    return rows, residuals, "regression", None


def _counted(names):
    return f"{len(names)} covariate column{'' if len(names) == 1 else 's'} ({listing(names)})"


def _offered(covariates, design, coded, args, task, values, name, notes, units):
    """(design, names, categories) of the covariates searched at every split (--covar-mode
    always), with the notes saying so: a text covariate as the codes of its levels, split as
    categories (categories: their CategoryCodes), unless the target has more than two classes,
    which no split of categories by their mean serves: then as indicators of its levels."""
    names, categories = covariates.names, covariates.categories
    classes = len(np.unique(values)) if task == "classification" else 0
    if coded and classes > 2:
        design, origin = as_indicators(design, coded)
        names = indicator_names(names, categories, origin)
    columns = _counted(names)
    listed = "listed too (--covar-interactions)" if args.covar_interactions else \
        "left out of the interaction tables (--covar-interactions lists them)"
    verb = "is" if len(names) == 1 else "are"
    notes.append(f"{columns} {verb} searched at every split beside the {units[1]} (ranger's always.split.variables), "
                 f"on the {len(values)} {units[0]} with {name} and every covariate; interactions holding one are "
                 f"{listed}")
    if not coded:
        return design, names, None
    text = listing(categories)
    if classes > 2:
        notes.append(f"{text} enter as indicators of their levels: a split on a set of levels needs a number or two "
                     f"classes, and {name} has {classes}")
        return design, names, None
    notes.append(f"covariates split as categories (a set of levels to each side): {listing_levels(categories)}")
    return design, names, CategoryCodes(categories)


def fileset_files(path) -> list:
    """The files of the genotype fileset ``path`` belongs to that exist beside it, ``path`` first
    (a PLINK 1 or 2 fileset's three files, a .bgen's .sample); a VCF or other file alone."""
    path = Path(path)
    name = path.name.lower()
    for fileset in (PLINK1, PLINK2, (*BGEN, ".sample")):
        if name.endswith(fileset):
            beside = (path.with_name(_stem(path) + suffix) for suffix in fileset)
            return [path, *(f for f in beside if f.is_file() and f.name != path.name)]
    return [path]


def _read_bgen(path):
    """A .bgen with the .sample beside it when there is one: its columns are the phenotypes (the
    BGEN's embedded IDs name the samples only)."""
    beside = Path(path).with_suffix(".sample")
    return read_bgen(path, sample_path=beside if beside.is_file() else None)


def _stem(path):
    """The fileset's name without the suffix of the file given (a prefix may hold dots)."""
    name = Path(path).name
    for suffix in (*PLINK2, *PLINK1, *BGEN):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name
