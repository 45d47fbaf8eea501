"""Forests on genomic inputs as users hold them, pyinterp beside scikit-learn: fit time, peak memory
and held-out score (R^2; accuracy for the cell types), each (input, library) in a process of its
own, 2 threads each.

    snp      n=5000 p=100,000 genotypes {0,1,2} as int8, 30 trees, max_features=sqrt
             pyinterp: the int8 array, and the same .npy memory-mapped read-only;
             scikit-learn: the int8 array (it converts X to a float32 copy itself)
    snp2     the same with 2 trees (the fixed cost of reading X)
    snp-nan  the genotypes as float32 with 5% missing calls (NaN), 30 trees, both libraries
    sparse   n=50,000 p=20,000 counts at 2% density as CSR float32 (a small single-cell matrix;
             dense float32 it would take 4 GB), 100 trees, max_features=sqrt, both libraries
    cells    single-cell counts as issue 54 measured them: CSR float32 n=200,000 p=20,000 at 0.5%
             density (20 M non-zeros), 5 cell types, a classifier of 50 trees, max_features=sqrt
    cells5   the same at n=20,000 and 5% density
    bed      n=20,000 p=200,000 genotypes with 1% missing calls in a PLINK 1 .bed (1 GB), 10 trees:
             pyinterp on the .bed read in place (read_plink), pyinterp on bed-reader's int8 read
             (4 GB; a missing call is -127 there), scikit-learn on bed-reader's float32 read (16 GB,
             NaN for missing); held-out R^2 on a second .bed of 1,000 samples

    python bench/compare_genomic_inputs.py                   # every case
    python bench/compare_genomic_inputs.py --cases snp2 --trees 5
    python bench/compare_genomic_inputs.py --cases bed --rounds 1 --bed-shape 2000 20000
    python bench/compare_genomic_inputs.py --cases bed --rounds 1 --data-dir /tmp/bed --libs pyinterp

--data-dir keeps the data between runs (written when absent); --libs runs one library's rows only.
A run that fails (the kernel's out-of-memory killer leaves no message) is reported and skipped.

The data are written once to a temporary directory; "data MB" is the worker's resident memory
after loading them (the memory map: nothing), "peak MB" its high-water mark during the fit (the
data included; the mark is reset after loading, whose temporaries can peak higher). Each
(library, input) runs --rounds times in turn; the table gives the median fit time (every time in
brackets) and the largest peak.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from benchkit.data import counts_matrix, write_cells, write_snp
from benchkit.timing import load_line, peak_rss_mb, reset_peak_rss, rss_mb, run_isolated

N_TEST = 1000
CASES = {
    "snp": dict(data="snp", trees=30, runs=[("pyinterp", "int8"), ("pyinterp", "int8 memmap"), ("sklearn", "int8")]),
    "snp2": dict(data="snp", trees=2, runs=[("pyinterp", "int8"), ("pyinterp", "int8 memmap"), ("sklearn", "int8")]),
    "snp-nan": dict(data="snp", trees=30, runs=[("pyinterp", "float32 NaN"), ("sklearn", "float32 NaN")]),
    "sparse": dict(data="sparse", trees=100, runs=[("pyinterp", "CSR"), ("sklearn", "CSR")]),
    "cells": dict(data="cells", trees=50, runs=[("pyinterp", "cells"), ("sklearn", "cells")]),
    "cells5": dict(data="cells5", trees=50, runs=[("pyinterp", "cells5"), ("sklearn", "cells5")]),
    "bed": dict(data="bed", trees=10, runs=[("pyinterp", "bed"), ("pyinterp", "bed int8"), ("sklearn", "bed float32")]),
}
# PLINK 1 .bed calls by allele-1 count 0, 1, 2, and missing (see pyinterp.io.PackedGenotypes).
_BED_CODE = np.array([0b11, 0b10, 0b00, 0b01], dtype=np.uint8)


def write_sparse(folder, n=50_000, p=20_000, density=0.02, seed=0):
    """Counts (counts_matrix); y from three columns, one pair interacting."""
    rng = np.random.default_rng(seed)
    rows_total = n + N_TEST
    X = counts_matrix(rng, rows_total, p, density)
    cols = X[:, :3].toarray()
    y = cols[:, 0] + 2.0 * (cols[:, 1] > 0) * (cols[:, 2] > 0) + rng.normal(0, 0.5, rows_total)
    sp.save_npz(folder / "sparse.npz", X.tocsr(), compressed=False)
    np.save(folder / "sparse_y.npy", y)


CELLS = {"cells": (200_000, 20_000, 0.005), "cells5": (20_000, 20_000, 0.05)}


def write_bed(folder, n=20_000, p=200_000, missing=0.01, seed=0):
    """bed_train (n samples) and bed_test (N_TEST samples) filesets of the same p variants at
    Hardy-Weinberg frequencies (minor allele frequency 0.05-0.5), a call missing with probability
    `missing`; y from three variants as in write_snp (missing calls as 0), in bed_y.npy."""
    rng = np.random.default_rng(seed)
    total = n + N_TEST
    names = {"train": range(n), "test": range(n, total)}
    files = {part: open(folder / f"bed_{part}.bed", "wb") for part in names}
    for f in files.values():
        f.write(bytes([0x6C, 0x1B, 0x01]))
    y = None
    for j in range(0, p, 2000):
        width = min(2000, p - j)
        calls = rng.binomial(2, rng.uniform(0.05, 0.5, size=width), size=(total, width)).astype(np.uint8)
        if y is None:
            g = calls[:, :3].astype(float)
            y = 0.8 * g[:, 0] + 1.5 * (g[:, 1] > 0) * (g[:, 2] > 0) + rng.normal(0, 1, total)
        calls[rng.random(calls.shape) < missing] = 3
        for part, rows in names.items():
            codes = _BED_CODE[calls[rows.start:rows.stop].T]  # variant-major
            codes = np.pad(codes, ((0, 0), (0, -codes.shape[1] % 4)), constant_values=0)
            quads = codes.reshape(width, -1, 4)
            files[part].write((quads[..., 0] | quads[..., 1] << 2 | quads[..., 2] << 4 | quads[..., 3] << 6).tobytes())
    for part, rows in names.items():
        files[part].close()
        with open(folder / f"bed_{part}.fam", "w") as f:
            f.writelines(f"f{i} s{i} 0 0 0 -9\n" for i in rows)
        with open(folder / f"bed_{part}.bim", "w") as f:
            f.writelines(f"1\trs{k}\t0\t{1000 + 10 * k}\tA\tG\n" for k in range(p))
    np.save(folder / "bed_y.npy", y)


def load_bed(folder, form):
    from pyinterp.io import read_plink
    y = np.load(folder / "bed_y.npy")
    n = len(y) - N_TEST
    if form == "bed":
        return read_plink(folder / "bed_train.bed"), y[:n], read_plink(folder / "bed_test.bed"), y[n:]
    import bed_reader
    dtype = "int8" if form == "bed int8" else "float32"
    read = [bed_reader.open_bed(folder / f"bed_{part}.bed").read(dtype=dtype, num_threads=2)
            for part in ("train", "test")]
    return read[0], y[:n], read[1], y[n:]


def load(folder, form):
    if form.startswith("bed"):
        return load_bed(folder, form)
    if form == "CSR":
        X, y = sp.load_npz(folder / "sparse.npz"), np.load(folder / "sparse_y.npy")
    elif form in CELLS:
        X, y = sp.load_npz(folder / f"{form}.npz"), np.load(folder / f"{form}_y.npy")
    else:
        name = "snp_nan.npy" if form == "float32 NaN" else "snp.npy"
        X, y = np.load(folder / name, mmap_mode="r" if form == "int8 memmap" else None), np.load(folder / "snp_y.npy")
    n = X.shape[0] - N_TEST
    return X[:n], y[:n], X[n:], y[n:]


def run_worker(folder, lib, form, trees):
    Xtr, ytr, Xte, yte = load(Path(folder), form)
    data_mb = rss_mb()
    reset_peak_rss()  # loading an .npz peaks above the data it leaves (cells5: 570 MB for 439)
    classify = form in CELLS
    if lib == "pyinterp":
        from pyinterp import RandomForestClassifier, RandomForestRegressor
    else:
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    Forest = RandomForestClassifier if classify else RandomForestRegressor
    model = Forest(n_estimators=trees, max_features="sqrt", n_jobs=2, random_state=0)
    start = time.perf_counter()
    model.fit(Xtr, ytr)
    fit_s = time.perf_counter() - start
    return dict(fit_s=fit_s, data_mb=data_mb, peak_mb=peak_rss_mb(), score=model.score(Xte, yte))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--trees", type=int, default=None, help="override the number of trees")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each (library, input), alternating")
    parser.add_argument("--bed-shape", nargs=2, type=int, default=(20_000, 200_000), metavar=("N", "P"),
                        help="samples and variants of the bed case's training file")
    parser.add_argument("--data-dir", type=Path, help="where the data are kept (default: a temporary folder)")
    parser.add_argument("--libs", nargs="+", choices=["pyinterp", "sklearn"], default=["pyinterp", "sklearn"])
    parser.add_argument("--worker", nargs=4, metavar=("FOLDER", "LIB", "FORM", "TREES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        folder, lib, form, trees = args.worker
        print(json.dumps(run_worker(folder, lib, form, int(trees))))
        return
    print(f"2 threads each; {load_line()}")
    header = f"{'library':<9} {'input':<12} {'fit s':>8} {'data MB':>8} {'peak MB':>8} {'score':>6}"
    with tempfile.TemporaryDirectory() as tmp:
        folder, written = args.data_dir or Path(tmp), set()
        folder.mkdir(parents=True, exist_ok=True)
        for case in args.cases:
            spec = CASES[case]
            marker = folder / f"{spec['data']}_y.npy"  # written last
            if spec["data"] not in written and not marker.exists():
                if spec["data"] == "bed":
                    write_bed(folder, *args.bed_shape)
                    print(f"\nbed_train.bed: {(folder / 'bed_train.bed').stat().st_size / 2**20:.0f} MB")
                elif spec["data"] in CELLS:
                    write_cells(folder, spec["data"], *CELLS[spec["data"]], n_test=N_TEST)
                elif spec["data"] == "snp":
                    write_snp(folder, n_test=N_TEST)
                else:
                    write_sparse(folder)
                written.add(spec["data"])
                os.sync()  # the written pages' writeback would otherwise run during the first fits
            trees = args.trees or spec["trees"]
            print(f"\n{case}: {trees} trees\n{header}")
            # Rounds of every run in turn; the median fit time and the largest peak of each. The
            # first fits after the data are written were slower (0.8-1.1 s against 0.4 s later).
            runs = {key: [] for key in spec["runs"] if key[0] in args.libs}
            for _ in range(args.rounds):
                for lib, form in runs:
                    r = run_isolated([__file__, "--worker", folder, lib, form, trees], may_fail=True)
                    print(f"  ran {lib} {form}: {r}", flush=True)
                    if "error" not in r:
                        runs[lib, form].append(r)
            results = {}
            for (lib, form), rs in runs.items():
                if not rs:
                    continue
                r = results[lib, form] = dict(rs[0], fit_s=float(np.median([x["fit_s"] for x in rs])),
                                              peak_mb=max(x["peak_mb"] for x in rs))
                times = " ".join(f"{x['fit_s']:.2f}" for x in rs)
                print(f"{lib:<9} {form:<12} {r['fit_s']:>8.2f} {r['data_mb']:>8.0f} {r['peak_mb']:>8.0f} "
                      f"{r['score']:>6.3f}   ({times})")
            peer = next((r for (lib, _), r in results.items() if lib == "sklearn"), None)
            for (lib, form), r in results.items():
                if lib == "pyinterp" and peer is not None:
                    print(f"  sklearn / pyinterp ({form}): fit time x{peer['fit_s'] / r['fit_s']:.1f}, "
                          f"peak memory x{peer['peak_mb'] / r['peak_mb']:.2f}")
            print(f"  ({load_line()})")


if __name__ == "__main__":
    main()
