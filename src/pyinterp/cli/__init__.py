"""The ``pyinterp`` command: fit a forest on a table and report its feature importances
(``importance``), the interactions LSSFind and iRF find (``interactions``), or both (``all``);
``demo`` does both on simulated data with known signal. Files: CSV, TSV (also compressed: .gz,
.bz2, .xz, .zst, .zip), Parquet, .npz; genotypes (PLINK 1 .bed read in place, PLINK 2 .pgen, VCF /
BCF, BGEN; the phenotype from the .fam / .psam or --pheno); AnnData .h5ad (the target an obs
column). With --out DIR each table is written as CSV beside one self-contained HTML report. Exit status: 0 done, 1 a problem with the data (one line on stderr),
2 a usage error."""

import sys


def main(argv=None) -> int:
    """Run the ``pyinterp`` command with argv (default: the process's arguments); return its exit
    status. A Ctrl-C ends it with status 130 and one line, also while numpy, scikit-learn and
    the package load, the command's first seconds (the package's __init__ loads nothing).

    Examples
    --------
    >>> from pyinterp.cli import main
    >>> main(["importance", "no-such-file.csv", "--target", "y"])  # one line on stderr
    1
    """
    try:
        from .command import main as command
    except KeyboardInterrupt:
        print("pyinterp: interrupted", file=sys.stderr)
        return 130
    return command(argv)


if __name__ == "__main__":
    sys.exit(main())
