"""The command line on a PLINK 1 fileset: genotypes read in place, the phenotype from the .fam or a
phenotype file matched by sample ID, and PLINK's sample and variant lists."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.lists import read_sample_list, read_variant_list, samples_in
from ..io.phenotypes import Phenotypes, match_phenotype, read_pheno
from ..io.plink import read_plink
from .data import Data, DataError, listing

GENOTYPE_SUFFIXES = (".bed", ".bim", ".fam")


def is_genotype_file(path) -> bool:
    return Path(path).suffix.lower() in GENOTYPE_SUFFIXES


def genotype_data(args):
    """Data for the command's jobs, and the description line, from a fileset and the options."""
    G = read_plink(args.file)
    notes = []
    keep = np.ones(G.shape[0], dtype=bool)
    for option, path, wanted in (("--keep", args.keep, True), ("--remove", args.remove, False)):
        if path is not None:
            named = samples_in(G.sample_table, read_sample_list(path))
            notes.append(f"{option} {path}: {int(named.sum())} of the {G.shape[0]} samples named")
            keep &= named if wanted else ~named
    variants = np.ones(G.shape[1], dtype=bool)
    for option, path, wanted in (("--extract", args.extract, True), ("--exclude", args.exclude, False)):
        if path is not None:
            ids = read_variant_list(path)
            named = np.isin(G.variant_ids.astype(str), ids.astype(str))
            unknown = len(set(ids) - set(G.variant_ids))
            notes.append(f"{option} {path}: {int(named.sum())} of the {G.shape[1]} variants named"
                         + (f" ({unknown} of its IDs are not in the .bim)" if unknown else ""))
            variants &= named if wanted else ~named
    if not variants.any():
        raise DataError("no variant is left after --extract / --exclude")

    if args.pheno is not None:
        table, where = read_pheno(args.pheno), args.pheno
    else:
        samples = G.sample_table
        table = Phenotypes(samples["fid"], samples["iid"], {"phenotype": samples["phenotype"]})
        where = Path(args.file).with_suffix(".fam").name
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
    selected = G[rows] if len(rows) < G.shape[0] else G
    if not variants.all():
        selected = selected[:, np.flatnonzero(variants)]
    task = phenotype.task if args.task == "auto" else args.task
    if task == "regression" and values.dtype.kind not in "fiu":
        raise DataError(f"the phenotype {name!r} is not numeric ({values[0]!r}); regression needs numbers")
    if task == "classification":
        classes = np.unique(values)
        if len(classes) < 2:
            raise DataError(f"the phenotype {name!r} has one class ({listing(classes)}) among the samples kept")
    data = Data(selected, values, list(selected.variant_ids), task, notes)
    n, p = selected.shape
    description = (f"{args.file}: n={n} samples, p={p} variants (read in place), phenotype {name!r} from {where} "
                   f"({task}{', inferred; --task overrides' if args.task == 'auto' else ''})")
    return data, description
