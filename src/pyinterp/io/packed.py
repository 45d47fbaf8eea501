"""Genotype calls packed two bits each, as a PLINK 1 .bed holds them, that the forests read in place."""

from __future__ import annotations

import numbers
import os

import numpy as np

# A byte's four calls (low bits first) as counts of allele 1 / allele 2; NaN for a missing call.
_CALLS = np.array([[(b >> s) & 3 for s in (0, 2, 4, 6)] for b in range(256)], dtype=np.uint8)
_ALLELE_1 = np.array([2.0, np.nan, 1.0, 0.0], dtype=np.float32)
_ALLELE_2 = np.array([0.0, np.nan, 1.0, 2.0], dtype=np.float32)


class PackedGenotypes:
    """Genotypes of n samples at p variants, two bits a call, read where they lie.

    The forests, importances and interaction finders of pyinterp take it as ``X`` and read its
    calls in place (from a memory-mapped .bed, never expanded to one byte or a float a call): a
    call is the count of allele 1 (0, 1 or 2; allele 2 with ``count_a2``) and a missing call is a
    missing value, routed as the forests route NaN. Fits equal those on the same genotypes given as
    a float32 array with NaN for missing calls (``np.asarray(G)``), tree for tree. Anything else
    that takes an array (scikit-learn, numpy) gets that float32 array from ``np.asarray``.

    Made by :func:`pyinterp.io.read_plink` (the calls memory-mapped from the .bed), and by
    :func:`~pyinterp.io.read_pgen`, :func:`~pyinterp.io.read_vcf` and :func:`~pyinterp.io.read_bgen`
    (the calls packed in memory). ``G[rows]`` and ``G[rows, variants]`` (each a slice,
    integers or a boolean mask) select samples without copying calls, so scikit-learn's splitters
    work, and variants by a slice of the map or a packed copy of the chosen variants.

    Parameters
    ----------
    calls : ndarray of uint8, shape (n_variants, (n_file_samples + 3) // 4)
        Each variant's calls, four samples a byte from the low bits (a .bed's layout after its
        3-byte header): 0b00 homozygous for allele 1, 0b01 missing, 0b10 heterozygous, 0b11
        homozygous for allele 2.
    n_file_samples : int
        Samples the calls hold (the .fam's rows).
    rows : array of int, optional
        The samples these genotypes are, as indices into the file's samples (default all, in order).
    count_a2 : bool, default=False
        Count allele 2 instead of allele 1 (PLINK's and bed-reader's default counts allele 1).
    variant_ids : array of str, optional
        One name per variant (the .bim's IDs): the feature names of every fitted estimator.
    sample_ids : array of str, optional
        One name per sample of the file (the .fam's IIDs).
    sample_table : dict of arrays, optional
        What the file says of each of its samples (the .fam's columns: "fid", "iid", ...), one
        entry per file sample; "fid" may be None for a file without family IDs.
    variant_table : dict of arrays, optional
        What the file says of each variant (the .bim's columns: "chrom", "id", "pos", "allele_1",
        "allele_2", ...), one entry per variant.

    Attributes
    ----------
    shape : tuple of int
        (n_samples, n_variants), or (n_samples, n_variants + n_covariates) with covariates.
    variant_ids : ndarray of object
        Names of the variants, or ``x0``, ``x1``, ... when none were given.
    sample_ids : ndarray of object
        Names of the samples these genotypes are (after any row selection), or ``sample0``,
        ``sample1``, ... when none were given.
    feature_names : ndarray of object
        The columns' names: the variant IDs, then the covariates' names.
    file_rows : ndarray of int
        The samples these genotypes are, as indices into the file's samples.
    count_a2 : bool
        Whether a call counts allele 2 (settable: ``G.count_a2 = True`` counts the other allele).
    covariate_names : ndarray of object
        The covariates' names (empty without covariates, see :meth:`with_covariates`).
    sample_table, variant_table : dict of arrays
        The tables given (empty dicts otherwise); sample_table covers the file's samples
        (``file_rows`` says which these genotypes are), variant_table follows variant selections.

    Raises
    ------
    ValueError
        When ``calls`` is not a uint8 array of shape (n_variants >= 1, (n_file_samples + 3) // 4),
        ``n_file_samples`` is not a positive integer, ``rows`` are not indices of the file's
        samples, or the names or tables do not have one entry per variant or sample.

    See Also
    --------
    read_plink : Opens a PLINK 1 fileset as PackedGenotypes.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.io import PackedGenotypes
    >>> calls = np.array([[0b11100100], [0b00000000]], dtype=np.uint8)  # 2 variants x 4 samples
    >>> G = PackedGenotypes(calls, 4, variant_ids=["rs1", "rs2"])
    >>> G.shape
    (4, 2)
    >>> np.asarray(G)
    array([[ 2.,  2.],
           [nan,  2.],
           [ 1.,  2.],
           [ 0.,  2.]], dtype=float32)
    >>> np.asarray(G[[3, 0]])[:, 0]
    array([0., 2.], dtype=float32)
    >>> G[1:3].file_rows, list(G[:, [1]].variant_ids)
    (array([1, 2]), ['rs2'])
    """

    # Values beside the calls (covariates: with_covariates), float64 Fortran-ordered, one row per
    # sample of these genotypes; None without.
    _covariates = None
    covariate_names = np.empty(0, dtype=object)

    def __init__(self, calls, n_file_samples, *, rows=None, count_a2=False, variant_ids=None, sample_ids=None,
                 sample_table=None, variant_table=None):
        if not isinstance(n_file_samples, numbers.Integral) or isinstance(n_file_samples, bool) or n_file_samples < 1:
            raise ValueError(f"n_file_samples must be a positive integer, got {n_file_samples!r}")
        calls = np.asanyarray(calls)
        width = (int(n_file_samples) + 3) // 4
        if calls.dtype != np.uint8 or calls.ndim != 2 or calls.shape[1] != width or calls.shape[0] < 1:
            raise ValueError(f"calls must be a uint8 array of shape (n_variants >= 1, {width}) for {n_file_samples} "
                             f"samples, got {calls.dtype} of shape {calls.shape}")
        if calls.strides[1] != 1 or calls.strides[0] < calls.shape[1]:  # each variant's bytes contiguous
            calls = np.ascontiguousarray(calls)
        self._calls = calls
        # A memory map's file (path, inode) and the bytes it needs: reading a mapped page past a
        # file's end kills the process (SIGBUS), so a file cut short in place since is refused before
        # the core reads it. (A file deleted or replaced by another leaves the mapped one readable.)
        mapped = isinstance(calls, np.memmap) and calls.filename is not None
        self._mapped_file = ((calls.filename, os.stat(calls.filename).st_ino, calls.offset + calls.nbytes)
                             if mapped else None)
        self._n_file_samples = int(n_file_samples)
        self._rows = None if rows is None else _sample_indices(rows, self._n_file_samples)
        self.count_a2 = bool(count_a2)
        p = calls.shape[0]
        self.variant_ids = _names(variant_ids, p, "variant_ids", "x")
        self._file_sample_ids = _names(sample_ids, self._n_file_samples, "sample_ids", "sample")
        self.sample_table = _table(sample_table, self._n_file_samples, "sample_table")
        self.variant_table = _table(variant_table, p, "variant_table")

    @property
    def shape(self):
        """(n_samples, n_columns): the samples these genotypes are, and the variants then any covariates."""
        n = self._n_file_samples if self._rows is None else len(self._rows)
        return (n, self._calls.shape[0] + len(self.covariate_names))

    @property
    def feature_names(self):
        """The columns' names: the variant IDs, then the covariates' names."""
        return np.concatenate([self.variant_ids, self.covariate_names])

    def with_covariates(self, values, names=None):
        """These genotypes with covariate columns after the variants, for ``always_split_features``.

        The forests read the calls in place and the covariates as float64 numbers, as they read
        ``np.asarray`` of the result (float64: the genotypes, then the covariates).

        Parameters
        ----------
        values : array-like of shape (n_samples, n_covariates)
            Numbers, one row per sample of these genotypes, in their order; no NaN or infinity.
        names : list of str, optional
            The covariates' names, distinct from the variant IDs. Default: a DataFrame's column
            names (a Series' name), else ``c0``, ``c1``, ...

        Returns
        -------
        PackedGenotypes
            The same calls (not copied) with the covariates as its last columns. Selecting samples
            selects their covariates; selecting columns keeps the variants before the covariates
            (covariate columns alone are a float64 array).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.io import PackedGenotypes
        >>> G = PackedGenotypes(np.array([[0b11100100]], dtype=np.uint8), 4, variant_ids=["rs1"])
        >>> X = G.with_covariates([[0.1], [0.2], [0.3], [0.4]], names=["PC1"])
        >>> X.shape, list(X.feature_names)
        ((4, 2), ['rs1', 'PC1'])
        >>> np.asarray(X)[:, 1]
        array([0.1, 0.2, 0.3, 0.4])
        """
        if self._covariates is not None:
            raise ValueError("these genotypes have covariates already")
        values, names = checked_covariates(values, names, self.shape[0], self.variant_ids)
        out = object.__new__(PackedGenotypes)
        out.__dict__.update(self.__dict__)
        out._covariates = values
        out.covariate_names = names
        return out

    ndim = 2

    def __len__(self):
        return self.shape[0]

    @property
    def sample_ids(self):
        """Names of the samples these genotypes are: the file's sample IDs after any row selection."""
        return self._file_sample_ids if self._rows is None else self._file_sample_ids[self._rows]

    @property
    def file_rows(self):
        """The samples these genotypes are, as indices into the file's samples."""
        return np.arange(self._n_file_samples) if self._rows is None else self._rows.copy()

    def __repr__(self):
        n, p = self.shape[0], self._calls.shape[0]
        allele = 2 if self.count_a2 else 1
        beside = f" and {len(self.covariate_names)} covariates" if self._covariates is not None else ""
        return f"PackedGenotypes({n} samples x {p} variants{beside}, counting allele {allele})"

    def __getitem__(self, key):
        rows, variants = key if isinstance(key, tuple) and len(key) == 2 else (key, slice(None))
        if isinstance(key, tuple) and len(key) != 2:
            raise IndexError("PackedGenotypes takes G[samples] or G[samples, variants]")
        rows, variants = (slice(None) if k is Ellipsis else k for k in (rows, variants))
        out = object.__new__(PackedGenotypes)
        out.__dict__.update(self.__dict__)
        if not (isinstance(rows, slice) and rows == slice(None)):
            picked = _picked(rows, self.shape[0], "sample")
            out._rows = np.ascontiguousarray(picked if self._rows is None else self._rows[picked], dtype=np.int64)
            if self._covariates is not None:
                out._covariates = np.asfortranarray(self._covariates[picked])
        if self._covariates is not None and not (isinstance(variants, slice) and variants == slice(None)):
            picked = _picked(variants, self.shape[1], "column")
            p = self._calls.shape[0]
            if np.any(np.diff((picked >= p).astype(np.int8)) < 0):
                raise IndexError("the covariate columns come after the variants: select variants before covariates")
            variants = picked[picked < p]
            kept = picked[picked >= p] - p
            if variants.size == 0:  # covariates alone are numbers
                return np.array(out._covariates[:, kept])
            if kept.size == 0:
                out._covariates, out.covariate_names = None, PackedGenotypes.covariate_names
            else:
                out._covariates = np.asfortranarray(out._covariates[:, kept])
                out.covariate_names = self.covariate_names[kept]
        if not (isinstance(variants, slice) and variants == slice(None)):
            # a slice of a memory map stays a map; other selections copy those variants' calls
            picked = variants if isinstance(variants, slice) else _picked(variants, self.shape[1], "variant")
            out._calls = self._calls[picked] if isinstance(variants, slice) else self._take_variants(picked)
            if not isinstance(variants, slice):  # a copy in memory
                out._mapped_file = None
            if out._calls.shape[0] == 0:
                raise IndexError("a selection of no variants")
            out.variant_ids = self.variant_ids[picked]
            out.variant_table = {name: column[picked] for name, column in self.variant_table.items()}
        return out

    def check_mapped_file(self):
        """Raise ValueError when the file the calls are mapped from was cut short in place since it was opened.

        Another program rewrote it: reading a mapped page past a file's end would kill the process
        (SIGBUS), so this is called before every read of the calls (by the estimators, by
        :meth:`to_numpy` and ``np.asarray``). Calls held in memory, and a mapped file deleted or
        replaced by another file since (the mapped one stays readable), pass.

        Raises
        ------
        ValueError
            When the mapped file is now shorter than the calls read from it; open it again.

        Examples
        --------
        A PLINK 1 fileset of 4 samples and 1 variant, written by hand, then cut short in place:

        >>> from pyinterp.io import read_plink
        >>> with open("toy.fam", "w") as f:
        ...     _ = f.write("f1 s1 0 0 1 -9\\nf2 s2 0 0 2 -9\\nf3 s3 0 0 1 -9\\nf4 s4 0 0 2 -9\\n")
        >>> with open("toy.bim", "w") as f:
        ...     _ = f.write("1 rs1 0 1000 A G\\n")
        >>> with open("toy.bed", "wb") as f:  # magic bytes, variant-major, then one byte: 4 calls
        ...     _ = f.write(bytes([0x6C, 0x1B, 0x01, 0b11100100]))
        >>> G = read_plink("toy")
        >>> G.check_mapped_file()  # the file is whole: nothing happens
        >>> with open("toy.bed", "r+b") as f:
        ...     _ = f.truncate(3)
        >>> G.check_mapped_file()
        Traceback (most recent call last):
            ...
        ValueError: ...toy.bed: 3 bytes now, 4 when it was opened: the file was rewritten under the genotypes mapped ...
        """
        if self._mapped_file is None:
            return
        path, inode, needed = self._mapped_file
        try:
            now = os.stat(path)
        except OSError:
            return  # deleted: the mapped file lives on until the map is closed
        if now.st_ino == inode and now.st_size < needed:
            raise ValueError(f"{path}: {now.st_size} bytes now, {needed} when it was opened: the file was rewritten "
                             "under the genotypes mapped from it; open it again")

    def _calls_position(self):
        """(path, byte offset of the first variant's calls) while the calls are mapped from the
        file still at that path, for the core to read them with pread; else None (held in memory,
        or the file replaced: the map holds the old one)."""
        from .._validation import _map_position

        if self._mapped_file is None:
            return None
        path, inode, _ = self._mapped_file
        try:
            if os.stat(path).st_ino != inode:
                return None
        except OSError:
            return None
        return _map_position(self._calls)

    def _take_variants(self, picked, first=0, last=None):
        """The calls of variants `picked` (indices), bytes [first, last) of each (all by default),
        copied: from a mapped file with pread, a run of consecutive whole variants a read, because
        copying through the map would make the pages the kernel maps around each one (64 KiB) the
        process's: 3,163 variants of a million made 0.44 GB of the file resident."""
        width, stride = self._calls.shape[1], self._calls.strides[0]
        last = width if last is None else last
        position = self._calls_position()
        if position is None or not len(picked):
            return np.ascontiguousarray(self._calls[picked, first:last])
        self.check_mapped_file()
        path, offset = position
        out = np.empty((len(picked), last - first), dtype=np.uint8)
        # runs of consecutive variants, when each variant's calls read follow the last's in the file
        whole = stride == width == last - first
        starts = np.flatnonzero(np.diff(picked) != 1) + 1 if whole else np.arange(1, len(picked))
        bounds = np.concatenate([[0], starts, [len(picked)]])
        with open(path, "rb", buffering=0) as f:
            for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
                where = offset + int(picked[a]) * stride + first
                if os.preadv(f.fileno(), [out[a:b]], where) != (b - a) * (last - first):
                    raise ValueError(f"{path}: shorter than the genotypes mapped from it; open it again")
        return out

    def _calls_at(self, file_rows, variants):
        """The file's samples ``file_rows`` at ``variants`` (indices), as packed genotypes of their
        own: of each variant's calls only the bytes holding those samples are read, so a run of
        rows of a large file costs its share of the file, not every sample's calls, and stays two
        bits a call (what a Dask worker sends of a .bed's split columns: forest/split_columns.py)."""
        file_rows = np.asarray(file_rows, dtype=np.int64)
        first, last = int(file_rows.min()) // 4, int(file_rows.max()) // 4 + 1
        calls = self._take_variants(np.asarray(variants, dtype=np.int64), first, last)
        return PackedGenotypes(calls, 4 * (last - first), rows=file_rows - 4 * first, count_a2=self.count_a2)

    def copy(self, n_jobs=None):
        """These genotypes with their calls in memory: only these samples' and variants' calls,
        packed two bits each.

        The calls of a memory-mapped .bed are read with pread, never through the map: a subset of
        the samples (``G[rows]``) a panel of variants at a time, repacked on ``n_jobs`` threads; all
        of them in one read. Predictions and OOB measures read a mapped subset through the map,
        where the kernel maps 64 KiB around every page read, so the file's pages become the
        process's; a copy of the subset (a quarter of a byte per call) avoids that, and is read
        without a row map. The copy's samples are its own: ``file_rows`` counts from 0, while
        ``sample_ids`` and ``sample_table`` keep theirs.

        Parameters
        ----------
        n_jobs : int, optional
            Threads that repack a subset's calls (scikit-learn's convention: None is 1).

        Returns
        -------
        PackedGenotypes
            The same genotypes, covariates and names, the calls held in memory.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.io import PackedGenotypes
        >>> G = PackedGenotypes(np.array([[0b11100100]], dtype=np.uint8), 4, sample_ids=["a", "b", "c", "d"])
        >>> H = G[[3, 0]].copy()
        >>> np.asarray(H).ravel(), list(H.sample_ids), H.file_rows
        (array([0., 2.], dtype=float32), ['d', 'a'], array([0, 1]))
        """
        from .. import _core
        from .._validation import mapped_file, resolve_n_threads

        self.check_mapped_file()
        out = object.__new__(PackedGenotypes)
        out.__dict__.update(self.__dict__)
        if self._covariates is not None:
            out._covariates = self._covariates.copy(order="F")
        out._mapped_file = None
        if self._rows is None:
            out._calls = self._take_variants(np.arange(self._calls.shape[0]))  # a copy, read with pread if mapped
            return out
        out._calls = _core.repack_calls(self, mapped_file(self), resolve_n_threads(n_jobs))
        out._rows, out._n_file_samples = None, self.shape[0]
        out._file_sample_ids = self.sample_ids
        out.sample_table = {name: None if column is None else column[self._rows] for name, column in
                            self.sample_table.items()}
        return out

    def to_numpy(self, dtype=None):
        """The genotypes as an (n_samples, n_variants) array of allele counts, NaN where missing
        (then any covariates' columns).

        Parameters
        ----------
        dtype : float dtype, optional
            The array's dtype (a float, to hold NaN); default float32, or float64 with covariates.

        Returns
        -------
        ndarray of shape (n_samples, n_variants + n_covariates)
            Four (float32) or eight bytes a call: for data that fits in memory as numbers.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.io import PackedGenotypes
        >>> G = PackedGenotypes(np.array([[0b00011011]], dtype=np.uint8), 4)
        >>> G.to_numpy(np.float64).ravel()
        array([ 0.,  1., nan,  2.])
        """
        dtype = np.dtype(self._default_dtype if dtype is None else dtype)
        if dtype.kind != "f":
            raise ValueError(f"dtype must be a float dtype (missing calls are NaN), got {dtype}")
        self.check_mapped_file()
        values = _ALLELE_2 if self.count_a2 else _ALLELE_1
        p = self._calls.shape[0]
        out = np.empty(self.shape, dtype=dtype)
        if self._covariates is not None:
            out[:, p:] = self._covariates
        rows = self._rows
        # variants decoded at a time: about 4 MB of one-byte calls, 16 MB as float32 (besides out)
        step = max(1, (1 << 22) // max(1, self._calls.shape[1] * 4))
        for j0 in range(0, p, step):
            codes = _CALLS[self._calls[j0:j0 + step]].reshape(min(step, p - j0), -1)[:, :self._n_file_samples]
            if rows is not None:
                codes = codes[:, rows]
            out[:, j0:min(j0 + step, p)] = values[codes].T
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("PackedGenotypes cannot be viewed as an array without a copy")
        if dtype is not None and np.dtype(dtype).kind != "f":
            return self.to_numpy().astype(dtype)
        return self.to_numpy(dtype)

    @property
    def _default_dtype(self):
        """float32 holds allele counts exactly; covariates need float64."""
        return np.float32 if self._covariates is None else np.float64


def side_by_side(parts, covariates=None):
    """Packed genotypes of the same samples (their calls' bytes cut alike, the same rows) side by
    side, their variants in order, then ``covariates`` (float64 values; NaN is missing) as the
    last columns, unchecked: the split columns of .bed files read in parts by the Dask workers
    (forest/split_columns.py), which the core then reads as they are, two bits a call."""
    first = parts[0]
    if any(p._calls.shape[1] != first._calls.shape[1] or not np.array_equal(p._rows, first._rows) for p in parts):
        raise ValueError("side_by_side takes packed genotypes of the same samples")
    calls = np.concatenate([p._calls for p in parts]) if len(parts) > 1 else first._calls
    out = PackedGenotypes(calls, first._n_file_samples, rows=first._rows, count_a2=first.count_a2)
    if covariates is not None:
        out._covariates = np.asfortranarray(covariates, dtype=np.float64)
        out.covariate_names = np.array([f"c{k}" for k in range(covariates.shape[1])], dtype=object)
    return out


def checked_covariates(values, names, n_samples, variant_ids):
    """Covariates as with_covariates takes them: (values as float64 Fortran-ordered, one row per
    sample; names, by default a DataFrame's columns or a Series' name, else ``c0``, ``c1``, ...),
    checked; variant_ids the names they must not take."""
    if names is None and hasattr(values, "iloc"):  # pandas: its own names, as scikit-learn reads them
        named = list(values.columns) if hasattr(values, "columns") else [values.name]
        names = [str(v) for v in named] if all(v is not None for v in named) else None
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2 or values.shape[0] != n_samples or values.shape[1] < 1:
        raise ValueError(f"covariates must have one row per sample ({n_samples}) and at least one column, "
                         f"got shape {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("covariates must be finite numbers (drop the samples missing one first)")
    names = _names(names, values.shape[1], "names", "c")
    clash = sorted(set(names) & set(variant_ids))
    if clash or len(set(names)) < len(names):
        raise ValueError(f"covariate names must be distinct and not variant IDs: {clash or list(names)}")
    return np.asfortranarray(values), names


def is_packed(X) -> bool:
    """Whether X is packed genotype calls (:class:`PackedGenotypes`)."""
    return isinstance(X, PackedGenotypes)


def _picked(key, n, what):
    """Indices selected by a slice, integers (negative from the end) or a boolean mask of n."""
    if isinstance(key, slice):
        return np.arange(n)[key]
    key = np.asarray(key)
    if key.dtype == bool:
        if key.shape != (n,):
            raise IndexError(f"a boolean {what} mask must have {n} entries, got shape {key.shape}")
        return np.flatnonzero(key)
    if key.dtype.kind not in "iu" or key.ndim > 1:
        raise IndexError(f"PackedGenotypes selects {what}s by a slice, integers or a boolean mask")
    picked = np.atleast_1d(key).astype(np.int64)
    if picked.size and (picked.min() < -n or picked.max() >= n):
        raise IndexError(f"{what} index out of range for {n} {what}s")
    return np.where(picked < 0, picked + n, picked)


def _sample_indices(rows, n_file):
    rows = np.asarray(rows)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ValueError("rows must be a 1-d array of sample indices")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= n_file):
        raise ValueError(f"rows must be sample indices in [0, {n_file})")
    return rows


def _table(table, count, argument):
    table = {} if table is None else dict(table)
    for name, column in table.items():
        if column is not None and len(column) != count:
            raise ValueError(f"{argument}[{name!r}] has {len(column)} entries for {count}")
    return table


def _names(names, count, argument, prefix):
    if names is None:
        return np.array([f"{prefix}{k}" for k in range(count)], dtype=object)
    names = np.asarray(names, dtype=object)
    if names.shape != (count,):
        raise ValueError(f"{argument} must have one entry per {'variant' if prefix == 'x' else 'sample'} ({count}), "
                         f"got shape {names.shape}")
    if not all(isinstance(v, str) for v in names):
        raise ValueError(f"{argument} must be strings")
    return names
