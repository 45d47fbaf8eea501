"""The command itself: its parser, the data it reads and the jobs it runs (``main`` in
__init__.py imports this module under its Ctrl-C handler)."""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shlex
import sys
import warnings
from datetime import datetime
from pathlib import Path

from .._version import __version__
from .cells import h5ad_data, is_h5ad
from .data import DataError, read_table, split_target
from .genotypes import fileset_files, genotype_data, is_genotype_file
from .jobs import Truth, importances, irf, lssfind, pairs
from .report import Report

JOBS = {"importance": (importances,), "interactions": (pairs, lssfind, irf), "all": (importances, pairs, lssfind, irf)}


def demo_data(args):
    from ..datasets import make_lss
    from .data import Data

    X, y, interactions = make_lss(n_samples=args.n_samples, n_features=args.n_features, n_interactions=2, order=2,
                                  snr=5.0, random_state=args.random_state)
    rules = " + ".join("1(" + " & ".join(f"x{k} < tau" for k, _ in s) + ")" for s in interactions)
    description = f"Simulated LSS data: n={X.shape[0]}, p={X.shape[1]}, y = {rules} + noise (SNR 5)"
    return Data(X, y, [f"x{j}" for j in range(X.shape[1])], "regression", []), description, Truth(interactions)


def file_data(args):
    if is_genotype_file(args.file):
        if args.layer is not None:
            raise DataError(f"--layer is for AnnData (.h5ad); {args.file} is genotypes")
        data, description = genotype_data(args)
        return data, description, None
    if is_h5ad(args.file):
        if args.genes is not None:
            raise DataError(f"--genes names the genes of variants in genotype files; the variables of {args.file} "
                            "are named by its var_names already")
        data, description = h5ad_data(args)
        return data, description, None
    for option in ("pheno", "pheno_name", "covar", "covar_name", "keep", "remove", "extract", "exclude", "layer",
                   "covar_interactions", "genes"):
        if getattr(args, option) not in (None, False):
            files = ("AnnData (.h5ad)" if option == "layer" else "genotype files (.bed, ...)" if option == "genes"
                     else "genotype files (.bed, ...) and AnnData (.h5ad)")
            raise DataError(f"--{option.replace('_', '-')} is for {files}; {args.file} is a table: --target names its "
                            "column to explain")
    if args.target is None:
        raise DataError(f"give --target COLUMN: the column of {args.file} to explain")
    frame, notes = read_table(args.file, args.target, sep=args.sep, allow_pickle=args.allow_pickle)
    data = split_target(frame, args.target, task=args.task, index_col=args.index_col, drop=args.drop)
    description = (f"{args.file}: n={len(data.y)}, p={len(data.names)}, target {args.target!r} ({data.task}"
                   f"{', inferred; --task overrides' if args.task == 'auto' else ''})")
    return data._replace(notes=notes + data.notes), description, None


def run(args, argv=()) -> int:
    if args.command == "demo" and args.file is None and args.genes is not None:
        raise DataError("--genes names the genes of a genotype file's variants; the simulated data have none")
    if args.command == "demo" and args.file is None:
        data, description, truth = demo_data(args)
        job = "all"
    else:
        data, description, truth = file_data(args)
        job = "all" if args.command == "demo" else args.command
    report = Report(f"pyinterp {job}: {args.file or 'simulated data'}", drawing=args.out is not None,
                    about=[] if args.out is None else about(args, argv))
    report.say(description)
    for note in data.notes:
        report.say(f"Note: {note}.")
    for step in JOBS[job]:
        data = step(data, args, report, truth) or data  # a step may narrow the data for the next ones
    if args.out is None:
        report.say("\nNo files written: --out DIR writes the tables as CSV and report.html.")
    else:
        written = report.write(args.out)
        report.say(f"\nWrote {', '.join(p.name for p in written)} to {args.out}")
    return 0


# Input files up to this size get a SHA-256 on the page (a second or less); larger ones their size.
HASHED_BYTES = 256 * 2**20


def about(args, argv) -> list:
    """What the page records to redo the run: (name, text) of the version, the command line, the
    seed, every input file and the date."""
    files = [f"{Path(f).resolve()} ({_size_and_hash(Path(f))})" for f in _inputs(args)]
    return [("pyinterp", f"{__version__} (Python {platform.python_version()}, {platform.system()})"),
            ("command", shlex.join(["pyinterp", *argv])),
            ("directory", os.getcwd()),
            ("seed", f"{args.random_state} (--random-state; the same seed gives the same tables)"),
            *(("input", f) for f in files or ["simulated (make_lss), from the seed and --n-samples, --n-features"]),
            ("date", datetime.now().astimezone().isoformat(timespec="seconds"))]


def _inputs(args) -> list:
    """The files the command reads: the data (a genotype fileset's every file) and the options' files."""
    files = [] if args.file is None else fileset_files(args.file)
    return files + [getattr(args, o) for o in ("pheno", "covar", "genes", "keep", "remove", "extract", "exclude")
                    if getattr(args, o) is not None]


def _size_and_hash(path) -> str:
    size = path.stat().st_size
    if size > HASHED_BYTES:
        return f"{size:,} bytes"
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return f"{size:,} bytes, SHA-256 {digest.hexdigest()}"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="pyinterp", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"pyinterp {__version__} (distribution interptrees)")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    reading = argparse.ArgumentParser(add_help=False)
    group = reading.add_argument_group("reading the file")
    group.add_argument("--target", help="the column to explain (for .npz with a 2-D X: the array)")
    group.add_argument("--task", choices=["auto", "regression", "classification"], default="auto",
                       help="what the target is; auto: classes when it is text or at most 20 distinct integers")
    group.add_argument("--index-col", metavar="COLUMN", help="a column of row names, not a feature (a first "
                       "column without a header, as pandas' to_csv writes it, is read as row names anyway)")
    group.add_argument("--drop", metavar="COLUMNS", type=lambda s: [c for c in s.split(",") if c], action="extend",
                       default=[], help="columns to leave out, comma-separated; may repeat")
    group.add_argument("--sep", help="field separator (default: from the name: .csv comma, .tsv/.tab tab, "
                       "otherwise detected)")
    group.add_argument("--allow-pickle", action="store_true",
                       help=".npz: read arrays stored as Python objects (e.g. feature_names); only for files you trust")
    group = reading.add_argument_group("genotype files (PLINK 1 and 2 filesets, VCF / BCF, BGEN) and AnnData (.h5ad)",
                                       "For an .h5ad, --target obs:COLUMN names the obs column to explain; "
                                       "samples are cells (obs_names), variants genes (var_names), and "
                                       "--covar-name without --covar names obs columns.")
    group.add_argument("--pheno", metavar="FILE", help="phenotypes by sample: FID IID then columns, with a header "
                       "'FID IID ...' or '#IID ...' or none (PLINK's format; -9, NA and nan are missing); default: "
                       "the .fam's sixth column")
    group.add_argument("--pheno-name", metavar="COLUMN", help="the phenotype to explain (default: the first; --target "
                       "is the same)")
    group.add_argument("--covar", metavar="FILE", help="covariates by sample (PCs, age, sex, batch), in --pheno's "
                       "format; samples without every covariate are left out")
    group.add_argument("--covar-name", metavar="A,B", type=lambda s: [c for c in s.split(",") if c],
                       help="the covariates to use (default: every column of --covar)")
    group.add_argument("--covar-mode", choices=["always", "adjust"], default="always",
                       help="always: the covariates are columns every split of every tree is weighed against "
                       "(ranger's always.split.variables; any phenotype); adjust: the phenotype's residuals after "
                       "least squares on them are explained instead (numeric phenotypes). "
                       "bench/studies/covariate_default.py measures both (default: always)")
    group.add_argument("--covar-interactions", action="store_true",
                       help="with --covar-mode always, also list the interactions that hold a covariate (by "
                       "default only those among the genotypes or genes)")
    group.add_argument("--genes", metavar="FILE",
                       help="genotype files: a gene range list ('chrom start end name' per line, 1-based "
                       "inclusive, as PLINK's glist-hg19 / glist-hg38): every table names the genes its variants "
                       "lie in")
    group.add_argument("--layer", metavar="NAME", help=".h5ad: fit on this layer instead of X")
    for option, what in (("--keep", "keep only the samples listed (FID IID, or IID, per line)"),
                         ("--remove", "leave out the samples listed"),
                         ("--extract", "keep only the variants listed (one ID per line)"),
                         ("--exclude", "leave out the variants listed")):
        group.add_argument(option, metavar="FILE", help=what)

    running = argparse.ArgumentParser(add_help=False)
    group = running.add_argument_group("fitting and output")
    group.add_argument("--out", metavar="DIR", help="write each table as CSV and report.html into DIR")
    group.add_argument("--n-estimators", type=_positive, default=300,
                       help="trees of the forest and of each iRF forest (LSSFind: --lss-estimators)")
    group.add_argument("--n-jobs", type=int, default=-1, help="threads (-1: all cores); results do not depend on it")
    group.add_argument("--random-state", type=int, default=0, help="seed: the same seed gives the same tables")
    group.add_argument("--max-features", type=_max_features, default=None, metavar="K",
                       help="features tried per split by the forest and iRF's forests: sqrt, log2, a count or a "
                       "fraction (default: each estimator's; sqrt pays at p in the thousands and more)")
    group.add_argument("--class-of-interest", metavar="LABEL", help="classification: the class whose interactions "
                       "iRF reports (default: the last class in sorted order); always printed")
    group.add_argument("--pvalues", choices=["auto", "janitza", "altmann", "none"], default="auto",
                       help="p-values and BH q-values of the importances: janitza (two forests on halves; the null "
                       "from the features without effect), altmann (refits on permuted targets); auto: janitza "
                       "with 200 features or more, else none")
    group.add_argument("--n-permutations", type=_positive, default=100, help="--pvalues altmann: refits")
    group.add_argument("--knockoffs", action="store_true",
                       help="add the model-X knockoff filter's statistic and q-value of each feature (FDR control "
                       "without p-values; Gaussian knockoffs, for complete numeric data)")
    group.add_argument("--holdout", type=_fraction, default=None, metavar="F",
                       help="fit LSSFind and iRF on the other rows and test their interactions on this share of "
                       "the rows (p-values and BH q-values of each rule against the additive model); default: "
                       "all rows fit, no interaction p-values")
    group.add_argument("--screen", type=_screen_width, default="auto", metavar="K",
                       help="interactions: with more columns than K, a forest ranks them on half the rows and "
                       "every pair of the first K is tested on the other half (default auto: 1000, 499,500 pairs, "
                       "seconds; past 10^5 columns 1000 sqrt(p / 10^5), 3,163 at 10^6)")
    group.add_argument("--max-pairs", type=_positive, default=20_000_000, metavar="N",
                       help="interactions: the most pairs the pair scan tests (8 bytes each for their p-values; "
                       "default 20,000,000); every pair of 10^4 columns, 5.0 x 10^7, needs more")
    group.add_argument("--triples", type=_non_negative, default=20, metavar="N",
                       help="interactions: extend the first N pairs of the pair scan by every other scanned column "
                       "and test the triples for a three-way interaction (default 20; 0: none)")
    group.add_argument("--fit-columns", type=_at_least_two, default=1000, metavar="M",
                       help="after a screen, LSSFind and iRF fit on the first M of the screened columns (default "
                       "1000)")
    group.add_argument("--verbose", action="store_true", help="progress of each fit on stderr")
    group.add_argument("--top", type=_positive, default=10, help="rows of each table to print")
    group = running.add_argument_group(
        "interaction budgets", "what LSSFind and iRF spend: more finds higher orders and steadier tables, "
        "at a cost about proportional to each")
    group.add_argument("--max-order", type=_positive, default=3, metavar="N",
                       help="LSSFind: the largest interaction it mines (default 3; the mining grows about as "
                       "p^N at worst)")
    group.add_argument("--lss-estimators", type=_positive, default=100, metavar="N",
                       help="LSSFind: trees of its forest (default 100)")
    group.add_argument("--lss-mode", choices=["find", "rank"], default="find",
                       help="LSSFind: find, the sets passing its test (2^|S| DWP >= 0.99, the LSS model's "
                       "signature); rank, every mined set ranked by rho = log2(DWP) / |S|, for a response "
                       "the test finds nothing in (default find)")
    group.add_argument("--n-iterations", type=_positive, default=5, metavar="N",
                       help="iRF: reweighted forests, each fitted on the last one's importances (default 5)")
    group.add_argument("--n-bootstraps", type=_positive, default=None, metavar="N",
                       help="iRF: bootstrap replicates behind each interaction's stability (default 50, each "
                       "a forest of a fifth of --n-estimators trees and its RITs)")
    group.add_argument("--rit-depth", type=_positive, default=5, metavar="N",
                       help="iRF: depth of each random intersection tree, which bounds the interactions' order "
                       "(default 5)")
    group.add_argument("--rit-trees", type=_positive, default=500, metavar="N",
                       help="iRF: random intersection trees per replicate (default 500)")

    for name, text in (("importance", "fit a forest and report MDI-oob (with its SE) beside MDI"),
                       ("interactions", "find interactions with LSSFind (regression) and iRF"),
                       ("all", "importances and interactions")):
        command = sub.add_parser(name, parents=[reading, running], help=text, description=text)
        command.add_argument("file", help="CSV / TSV (optionally compressed), Parquet or .npz file; or genotypes: "
                             "a PLINK 1 .bed (with its .bim and .fam), a PLINK 2 .pgen (with .pvar and .psam), a "
                             ".vcf, .vcf.gz or .bcf, a .bgen (with its .sample); or AnnData: an .h5ad")
    demo = sub.add_parser("demo", parents=[reading, running], help="'all' on simulated data with known signal, "
                          "or on FILE", description="Fit a forest on simulated LSS data (two interactions of two "
                          "features) and report importances and interactions, each marked true or not; with "
                          "FILE, the same as 'pyinterp all FILE'.")
    demo.add_argument("file", nargs="?", help="a data file instead of the simulated data")
    demo.add_argument("--n-samples", type=_positive, default=1000, help="rows of simulated data")
    demo.add_argument("--n-features", type=_positive, default=50, help="features of simulated data")
    return top


def _warn(message, category, *_, **__):
    """A library warning (such as rows without out-of-bag predictions) as one line, without source."""
    print(f"pyinterp: warning: {' '.join(str(message).split())}", file=sys.stderr)


def _max_features(text):
    if text in ("sqrt", "log2"):
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be sqrt, log2, a count or a fraction, not {text}") from None
    if value <= 0 or (value != int(value) and value > 1):
        raise argparse.ArgumentTypeError(f"must be a positive count or a fraction in (0, 1], not {text}")
    return int(value) if "." not in text and "e" not in text.lower() else value


def _fraction(text) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a fraction in (0, 1), not {text}")
    return value


def _screen_width(text):
    return "auto" if text == "auto" else _at_least_two(text)


def _at_least_two(text) -> int:
    value = _positive(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be at least 2 (a pair), got {text!r}")
    return value


def _non_negative(text) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or a positive integer, not {text}")
    return value


def _positive(text) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text}")
    return value


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    args = parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warn
            # a dependency's deprecations are for developers (anndata's under pandas 3, say)
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            return run(args, argv)
    except (DataError, ValueError, OSError) as error:  # the user's data or paths: no traceback
        print(f"pyinterp: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("pyinterp: interrupted", file=sys.stderr)
        return 130
