"""X as runs of columns in files every worker of a Dask cluster reads: the input of a
feature-parallel fit that no single machine's memory holds (docs/user/cluster.md)."""

from __future__ import annotations

import copy
import functools
import math
import os
import socket

import numpy as np

from .names import first_repeat
from .packed import checked_covariates
from .plink import read_plink


class ColumnFiles:
    """X's columns in files on storage every Dask worker reads, fitted feature-parallel.

    Each file holds all the samples at a run of X's columns: a PLINK 1 .bed fileset (its calls
    read in place, two bits each, a missing call a missing value, as :func:`read_plink` reads it)
    or a .npy file of a 2-d numeric array (rows the samples, read from the file in panels). X is
    their columns side by side, in the order given: per-chromosome .bed filesets, say, or one
    genome-wide .bed. ``RandomForestRegressor.fit`` and ``RandomForestClassifier.fit`` take it as
    X and fit it on the running Dask client's cluster: the files are cut into blocks of columns,
    each block opened by one worker, which encodes its columns once and answers the fit's split
    searches. No process reads all of X, and a worker holds only its blocks' codes (a byte a
    value, or the calls' two bits in place), so X may be larger than any worker's memory. The
    trees are those of the same values fitted in one process with the same ``random_state``.

    This process reads only the files' headers and sample and variant tables, here and now;
    each worker opens its files again when the fit starts and checks they still have the shape
    seen here.

    Parameters
    ----------
    paths : str, path-like or list of them
        The files, in X's column order: a .bed (its .bim and .fam beside it with the same stem)
        or a .npy of a 2-d array of a numeric dtype (bool, integers, floats; NaN a missing
        value). The .bed filesets must list the same samples (FID and IID) in the same order,
        and every file the same number of rows.
    rows : array-like of int or bool, optional
        The samples X is, as indices into the files' rows or a boolean mask over them (default
        all, in order): the samples with a phenotype, say. Selected .bed calls are read with
        pread into a copy of those calls alone; a .npy block is read in place for a run of
        consecutive rows and copied into its worker's memory (the selected rows of its columns,
        in its dtype) otherwise.
    block_columns : int, optional
        The most columns a block holds. By default each file is cut into about
        ``ceil(n_columns / n_workers)``-column blocks when the fit starts, so every worker holds
        one run of columns; more blocks than workers balance uneven workers, at a round trip
        per block and tree level.
    count_a2 : bool, default=False
        Count allele 2 in the .bed filesets (as :func:`read_plink`).

    Attributes
    ----------
    paths : list of str
        The files, as given.
    shape : tuple of int
        (n_samples, n_columns) of X.
    feature_names : ndarray of object or None
        The variant IDs when every file is a .bed fileset (the fitted estimators'
        ``feature_names_in_``), then any covariates' names; else None.
    covariate_names : ndarray of object
        The covariates' names (empty without covariates, see :meth:`with_covariates`).
    packed : bool
        Whether every file is a .bed fileset: the columns a forest's splits use are then read
        and held as packed calls, two bits each (then any covariates).
    sample_ids : ndarray of object or None
        The IIDs of X's samples when a file is a .bed fileset, else None.
    dtype : numpy.dtype
        float32 for genotypes (as ``np.asarray`` of :class:`PackedGenotypes`), else the .npy
        files' common numpy type.

    Raises
    ------
    FileNotFoundError
        When a file (or a .bed's .bim or .fam) is missing.
    ValueError
        When a path is neither a .bed nor a .npy, a .npy is not 2-d and numeric, the files'
        row counts or .bed samples differ (naming the file), ``rows`` are not indices of the
        rows or ``block_columns`` is not a positive integer.

    See Also
    --------
    read_plink : One .bed fileset in this process.

    Notes
    -----
    Covariates (:meth:`with_covariates`) are X's last columns, held in this process and sent to
    one worker: for ``always_split_features``, as with :class:`PackedGenotypes`.
    Only pyinterp's forests read a ColumnFiles: their ``fit``, and what runs rows down their
    trees (``predict``, ``apply``, ``pyinterp.importance``'s measures), which reads only the
    columns the trees split on, on the workers; every other use refuses it with a TypeError.
    A file must be at the same path on every worker (a shared file system) and must not change
    during the fit.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from pyinterp.io import ColumnFiles
    >>> folder = tempfile.mkdtemp()
    >>> for k in range(2):
    ...     np.save(os.path.join(folder, f"part{k}.npy"), np.zeros((50, 30 + k), dtype=np.float32))
    >>> X = ColumnFiles([os.path.join(folder, "part0.npy"), os.path.join(folder, "part1.npy")], rows=np.arange(40))
    >>> X.shape
    (40, 61)
    >>> [(b.path.endswith("part1.npy"), b.first, b.end) for b in X.blocks(n_workers=2)]
    [(False, 0, 30), (True, 30, 61)]
    """

    # Values after the files' columns (with_covariates): float64, one row per sample of X; None without.
    _covariates = None
    covariate_names = np.empty(0, dtype=object)

    def __init__(self, paths, *, rows=None, block_columns=None, count_a2=False):
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        self.paths = [os.fspath(p) for p in paths]
        if not self.paths:
            raise ValueError("paths must name at least one file")
        if block_columns is not None and (not isinstance(block_columns, (int, np.integer))
                                          or isinstance(block_columns, bool) or block_columns < 1):
            raise ValueError(f"block_columns must be a positive integer or None, got {block_columns!r}")
        self.block_columns = None if block_columns is None else int(block_columns)
        self.count_a2 = bool(count_a2)
        self._files = [_FileHead.read(path) for path in self.paths]
        n_file = self._files[0].n_rows
        for f in self._files[1:]:
            if f.n_rows != n_file:
                raise ValueError(f"{f.path} has {f.n_rows} rows (samples) where {self._files[0].path} has {n_file}: "
                                 "every file must hold the same samples")
        beds = [f for f in self._files if f.kind == "bed"]
        for f in beds[1:]:
            k = _first_difference(f.samples, beds[0].samples)
            if k is not None:
                there, first = (" ".join(s[k]).strip() for s in (f.samples, beds[0].samples))
                raise ValueError(f"{f.path}'s samples differ from {beds[0].path}'s: row {k} is {there!r} there "
                                 f"and {first!r} in the first (the .fam files must list the same samples, FID and "
                                 "IID, in the same order)")
        self.rows = None if rows is None else _row_indices(rows, n_file)
        n = n_file if self.rows is None else len(self.rows)
        if n < 1:
            raise ValueError("rows selects no sample")
        self.shape = (n, sum(f.n_cols for f in self._files))
        self.feature_names = None
        self.packed = len(beds) == len(self._files)
        if self.packed:
            self.feature_names = np.concatenate([f.names for f in self._files])
            repeat = first_repeat(self.feature_names)
            if repeat is not None:
                where = np.cumsum([f.n_cols for f in self._files])
                i, j = (self._files[np.searchsorted(where, k, side="right")].path for k in repeat)
                raise ValueError(f"variant {self.feature_names[repeat[1]]!r} is in {i} and again in {j}: a variant "
                                 "may be one column of X only")
        self.sample_ids = None if not beds else beds[0].samples[slice(None) if self.rows is None else self.rows, 1]
        numeric = [f.dtype for f in self._files if f.kind == "npy"]
        self.dtype = np.result_type(*numeric, *([np.float32] if beds else []))

    @property
    def ndim(self):
        """2: X is a matrix (samples x columns)."""
        return 2

    @property
    def n_file_columns(self):
        """X's columns that are the files' (the covariates' come after them)."""
        return self.shape[1] - len(self.covariate_names)

    def __repr__(self):
        return f"ColumnFiles({len(self.paths)} file(s), {self.shape[0]} samples x {self.shape[1]} columns)"

    def with_covariates(self, values, names=None):
        """These files' columns with covariate columns after them, for ``always_split_features``.

        Parameters
        ----------
        values : array-like of shape (n_samples, n_covariates)
            Numbers, one row per sample of X (after ``rows``), in its order; no NaN or infinity.
        names : list of str, optional
            The covariates' names, distinct from the variant IDs. Default: a DataFrame's column
            names (a Series' name), else ``c0``, ``c1``, ...

        Returns
        -------
        ColumnFiles
            The same files with the covariates as X's last columns (float64), fitted as one more
            block.

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> from pyinterp.io import ColumnFiles
        >>> path = os.path.join(tempfile.mkdtemp(), "X.npy")
        >>> np.save(path, np.zeros((4, 3), dtype=np.int8))
        >>> X = ColumnFiles(path).with_covariates([[0.1], [0.2], [0.3], [0.4]], names=["PC1"])
        >>> X.shape, [(b.first, b.end) for b in X.blocks(n_workers=1)]
        ((4, 4), [(0, 3), (3, 4)])
        """
        if self._covariates is not None:
            raise ValueError("these files have covariates already")
        ids = [] if self.feature_names is None else self.feature_names
        values, names = checked_covariates(values, names, self.shape[0], ids)
        out = copy.copy(self)
        out._covariates, out.covariate_names = values, names
        out.shape = (self.shape[0], self.shape[1] + values.shape[1])
        out.feature_names = None if self.feature_names is None else np.concatenate([self.feature_names, names])
        out.dtype = np.result_type(self.dtype, np.float64)
        return out

    def take_rows(self, rows):
        """These files at X's rows ``rows`` (of its rows, after any ``rows=`` of the files): as
        ``X[rows]`` would be, the files still read where they are.

        Parameters
        ----------
        rows : array-like of int or bool
            Row indices of X (repeats allowed, in any order), or a boolean mask of its rows.

        Returns
        -------
        ColumnFiles
            The same files and columns (covariates at the same rows), whose blocks read only
            those samples.

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> from pyinterp.io import ColumnFiles
        >>> path = os.path.join(tempfile.mkdtemp(), "X.npy")
        >>> np.save(path, np.arange(12.0).reshape(6, 2))
        >>> X = ColumnFiles(path, rows=[5, 4, 3, 2]).take_rows([0, 3, 3])
        >>> X.shape, X.rows.tolist()
        ((3, 2), [5, 2, 2])
        """
        picked = _row_indices(rows, self.shape[0], of="X's")
        if not len(picked):
            raise ValueError("rows selects no sample")
        out = copy.copy(self)
        out.rows = picked if self.rows is None else self.rows[picked]
        out.shape = (len(picked), self.shape[1])
        if self.sample_ids is not None:
            out.sample_ids = self.sample_ids[picked]
        if self._covariates is not None:
            out._covariates = self._covariates[picked]
        return out

    def blocks(self, n_workers):
        """The blocks a fit on n_workers workers opens: a list of :class:`FileBlock` in column order.

        Parameters
        ----------
        n_workers : int
            The workers the blocks are spread over (the default ``block_columns`` is sized by it).

        Returns
        -------
        list of FileBlock
            Block b holds X's columns [b.first, b.end), all within one file; a file is cut into
        blocks of as even widths as ``block_columns`` (or its default) allows.

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> from pyinterp.io import ColumnFiles
        >>> path = os.path.join(tempfile.mkdtemp(), "X.npy")
        >>> np.save(path, np.ones((10, 7)))
        >>> [(b.first, b.end) for b in ColumnFiles(path, block_columns=3).blocks(n_workers=1)]
        [(0, 2), (2, 5), (5, 7)]
        """
        if not isinstance(n_workers, (int, np.integer)) or n_workers < 1:
            raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}")
        most = self.block_columns or math.ceil(self.n_file_columns / n_workers)
        out, first = [], 0
        for f in self._files:
            cuts = np.linspace(0, f.n_cols, math.ceil(f.n_cols / most) + 1).round().astype(np.int64)
            for c0, c1 in zip(cuts[:-1], cuts[1:]):
                out.append(FileBlock(f.path, f.kind, int(c0), int(c1), f.n_rows, first + int(c0), self.rows,
                                     self.count_a2, f.dtype))
            first += f.n_cols
        if self._covariates is not None:
            out.append(ArrayBlock(self._covariates, first))
        return out


class FileBlock:
    """A run of one file's columns, which a worker opens (:meth:`open`) as the array or genotypes
    a ``ColumnBlock`` encodes. Picklable and small: the path and the run, not the values.

    Parameters
    ----------
    path : str
        The .bed or .npy file.
    kind : {"bed", "npy"}
        What the file is.
    c0, c1 : int
        The file's columns [c0, c1).
    n_file_rows : int
        The rows the file had when the ColumnFiles was made (checked on opening).
    first : int
        The block's first column in X (``end`` is ``first + c1 - c0``).
    rows : ndarray of int or None
        The file rows X is (None: all).
    count_a2 : bool
        Count allele 2 in a .bed.
    dtype : numpy.dtype, optional
        A .npy's values' type (None for a .bed).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from pyinterp.io.column_files import FileBlock
    >>> path = os.path.join(tempfile.mkdtemp(), "X.npy")
    >>> np.save(path, np.arange(12.0).reshape(3, 4))
    >>> block = FileBlock(path, "npy", 1, 3, 3, 1, None, False, np.dtype(np.float64))
    >>> np.asarray(block.open())
    array([[ 1.,  2.],
           [ 5.,  6.],
           [ 9., 10.]])
    >>> block.least_memory()  # its codes: 2 bits a value at least
    2
    """

    def __init__(self, path, kind, c0, c1, n_file_rows, first, rows, count_a2, dtype=None):
        self.path, self.kind, self.c0, self.c1 = path, kind, c0, c1
        self.n_file_rows, self.first, self.rows, self.count_a2, self.dtype = n_file_rows, first, rows, count_a2, dtype

    @property
    def end(self):
        return self.first + self.c1 - self.c0

    def least_memory(self):
        """The fewest bytes the block takes in its worker's memory once opened and encoded: a
        .npy's codes (2 bits a value at least) and, for rows that are not a run, the copy of
        those rows; a .bed's selected calls (none when all samples are read in place)."""
        n = self.n_file_rows if self.rows is None else len(self.rows)
        width = self.c1 - self.c0
        if self.kind == "bed":
            return 0 if self.rows is None else (n + 3) // 4 * width
        copied = 0 if self._row_run() is not None else n * width * self.dtype.itemsize
        return (n + 3) // 4 * width + copied

    def _row_run(self):
        """The rows as a slice when they are all rows or a run of consecutive ones, else None."""
        if self.rows is None:
            return slice(None)
        first = self.rows[0]
        return slice(first, first + len(self.rows)) if np.array_equal(self.rows, first + np.arange(len(self.rows))) \
            else None

    def _head(self, kept=False):
        """The file's head as read here (kept: read once per worker and file version, see
        _kept_head), checked against the shape it had; OSError and ValueError name the file and
        this machine when it cannot be read or no longer has that shape."""
        try:
            head = _kept_head(self.path, self.count_a2) if kept else _FileHead.read(self.path, self.count_a2)
        except OSError as e:
            raise type(e)(f"{self.path} cannot be read on {socket.gethostname()}: {e}. A ColumnFiles' files must "
                          f"be at the same path on every Dask worker (a shared file system)") from e
        if head.kind != self.kind or head.n_rows != self.n_file_rows or head.n_cols < self.c1:
            raise ValueError(f"{self.path} changed since the ColumnFiles was made: it now holds {head.n_rows} rows x "
                             f"{head.n_cols} columns on {socket.gethostname()}")
        return head

    def read(self, columns, start, stop):
        """The values of the block's columns ``columns`` (indices within the block, increasing) at
        X's rows [start, stop): a .bed's as :class:`~pyinterp.io.PackedGenotypes` of their own (two
        bits a call, ``np.asarray`` gives the allele counts as float32, NaN where missing), a .npy's
        as an array in its dtype. Only those columns and rows are read: the columns a forest's
        splits use, brought to the process that explains or predicts rows
        (forest/split_columns.py).

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> from pyinterp.io.column_files import FileBlock
        >>> path = os.path.join(tempfile.mkdtemp(), "X.npy")
        >>> np.save(path, np.arange(12.0).reshape(3, 4))
        >>> FileBlock(path, "npy", 1, 4, 3, 0, None, False, np.dtype(np.float64)).read(np.array([0, 2]), 1, 3)
        array([[ 5.,  7.],
               [ 9., 11.]])
        """
        head = self._head(kept=True)
        columns = self.c0 + np.asarray(columns, dtype=np.int64)
        file_rows = np.arange(start, stop) if self.rows is None else self.rows[start:stop]
        if self.kind == "bed":  # with pread, the bytes of the variants' calls that hold these rows
            return head.opened._calls_at(file_rows, columns)
        return _read_npy(head.opened, file_rows, columns)

    def open(self):
        """The block's columns of X's rows: packed genotypes (a .bed's) or an array (a .npy's),
        read from the file in place where they can be; OSError and ValueError name the file and
        this machine when it cannot be read or no longer has the shape it had."""
        head = self._head()
        if self.kind == "bed":
            return head.opened[slice(None) if self.rows is None else self.rows, self.c0:self.c1]
        X = head.opened[:, self.c0:self.c1]
        run = self._row_run()
        return X[run] if run is not None else np.ascontiguousarray(X[self.rows])  # a run: still a map


class ArrayBlock:
    """Columns of X held in memory (a ColumnFiles' covariates), sent to the worker that fits them
    as one block: the same interface as :class:`FileBlock`.

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_columns)
        The columns, one row per sample of X.
    first : int
        The block's first column in X.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.io.column_files import ArrayBlock
    >>> block = ArrayBlock(np.ones((8, 2)), first=5)
    >>> block.end, block.least_memory(), block.open().shape
    (7, 132, (8, 2))
    """

    def __init__(self, values, first):
        self.values, self.first = values, first

    @property
    def end(self):
        return self.first + self.values.shape[1]

    def least_memory(self):
        """The values and their codes (2 bits a value at least)."""
        n, width = self.values.shape
        return self.values.nbytes + (n + 3) // 4 * width

    def open(self):
        """The values."""
        return self.values

    def read(self, columns, start, stop):
        """The values of columns ``columns`` (within the block) at X's rows [start, stop)."""
        return self.values[start:stop, columns]


class _FileHead:
    """What a file's header and tables say: its kind, rows and columns, and for a .bed its
    samples (FID, IID pairs) and variant IDs; ``opened`` the file as read (a .bed's genotypes,
    a .npy's memory map), which a block slices rather than reading the file again."""

    def __init__(self, path, kind, opened, dtype=None, samples=None, names=None):
        self.path, self.kind, self.opened = path, kind, opened
        self.n_rows, self.n_cols = opened.shape
        self.dtype, self.samples, self.names = dtype, samples, names

    @classmethod
    def read(cls, path, count_a2=False):
        lower = path.lower()
        if lower.endswith(".npy"):
            X = np.load(path, mmap_mode="r")
            if X.ndim != 2 or X.dtype.kind not in "biuf":
                raise ValueError(f"{path} holds a {X.ndim}-d array of {X.dtype}: a ColumnFiles .npy must hold a 2-d "
                                 "array of numbers (bool, integers, floats)")
            if X.shape[0] < 1 or X.shape[1] < 1:
                raise ValueError(f"{path} holds an array of shape {X.shape}: it needs rows and columns")
            return cls(path, "npy", X, dtype=X.dtype)
        if lower.endswith(".bed"):
            G = read_plink(path, count_a2=count_a2)
            table = G.sample_table
            fid = table["fid"] if table.get("fid") is not None else np.full(G.shape[0], "", dtype=object)
            samples = np.stack([np.asarray(fid, dtype=object), np.asarray(table["iid"], dtype=object)], axis=1)
            return cls(path, "bed", G, samples=samples, names=G.variant_ids)
        raise ValueError(f"{path} is neither a PLINK .bed nor a .npy file: ColumnFiles reads those two")


def _read_npy(mapped, file_rows, columns):
    """A .npy's values at file_rows x columns (increasing), read with pread, never through its
    memory map: the map's pages would stay resident in the process, whose memory Dask watches (a
    0.5 GB worker reading 1 GB of X through it was paused, then restarted). mapped: np.load's map
    of the whole array (its filename and header offset). C order: per row the span of the
    columns; Fortran order: per column the span of the rows."""
    n, p = mapped.shape
    item = mapped.dtype.itemsize
    out = np.empty((len(file_rows), len(columns)), dtype=mapped.dtype)
    if not out.size:
        return out
    by_column = mapped.flags.f_contiguous and not mapped.flags.c_contiguous
    outer, inner = (columns, file_rows) if by_column else (file_rows, columns)
    stride = n if by_column else p
    lo = int(inner.min())
    span = np.empty(int(inner.max()) + 1 - lo, dtype=mapped.dtype)
    picked = inner - lo
    with open(mapped.filename, "rb", buffering=0) as f:
        for k, o in enumerate(outer.tolist()):
            where = mapped.offset + (o * stride + lo) * item
            if os.preadv(f.fileno(), [span], where) != span.nbytes:
                raise ValueError(f"{mapped.filename}: shorter than its header says")
            if by_column:
                out[:, k] = span[picked]
            else:
                out[k] = span[picked]
    return out


@functools.lru_cache(maxsize=16)
def _head_of_version(path, count_a2, version):
    return _FileHead.read(path, count_a2)


def _kept_head(path, count_a2):
    """_FileHead.read(path, count_a2), kept while the file is the same (its inode, size and
    modification time): reading a block's columns a run of rows at a time would otherwise parse
    a .bed's .bim and .fam once per run."""
    st = os.stat(path)
    return _head_of_version(path, count_a2, (st.st_ino, st.st_size, st.st_mtime_ns))


def _row_indices(rows, n, of="the files'"):
    """rows (integers or a boolean mask over `of` n rows) as int64 indices."""
    rows = np.asarray(rows)
    if rows.dtype == bool:
        if rows.shape != (n,):
            raise ValueError(f"rows as a boolean mask must have one entry per row of {of} {n} rows, got shape "
                             f"{rows.shape}")
        return np.flatnonzero(rows)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ValueError(f"rows must be a 1-d array of row indices or a boolean mask, got {rows.dtype} of shape "
                         f"{rows.shape}")
    rows = rows.astype(np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"rows must be indices of {of} {n} rows, got values in [{rows.min()}, {rows.max()}]")
    return rows


def _first_difference(a, b):
    """The first row where two (FID, IID) tables differ, or None."""
    differ = np.flatnonzero((a != b).any(axis=1))
    return int(differ[0]) if differ.size else None
