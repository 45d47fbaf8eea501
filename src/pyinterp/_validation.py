"""Checks that scikit-learn's parameter validation does not cover.

- ``validate_data``, ``check_array``, ``check_sample_weight``, ``check_consistent_length``,
  ``check_classification_targets``:
  scikit-learn's, with every error message naming the argument it is about ("X: Found array with 0
  sample(s) ..."); the package calls these rather than scikit-learn's own. With a forest's
  keywords (FOREST_X / FOREST_FIT_X), packed genotypes (``pyinterp.io.PackedGenotypes``) pass
  through as they are, checked as scikit-learn checks an array (sample count, feature count and
  names: the variant IDs), for the core to read in place; with any other keywords they are
  decoded to float32 like any array-like. An ``anndata.AnnData`` is its matrix (validated as any
  matrix) named by its ``var_names``, with any keywords (``pyinterp.io.h5ad``).

Estimators and public functions declare scikit-learn constraints (``_parameter_constraints``,
``validate_params``) and check sample weights with ``_check_sample_weight``. What remains here:

- ``resolve_n_threads``: n_jobs as a thread count for the C++ core.
- ``check_int`` / ``check_real``: short messages ("top must be >= 1, got 0") for code without a
  constraint table: metrics.py and datasets.py (whose tests assert these messages),
  ``dstump(...).select`` and the resolvers below.
- ``column_indices``: columns given by index, name or mask (partitions, always-split features).
- ``count_or_fraction``, ``resolve_max_features``, ``resolve_n_draws``: the forests' parameters
  resolved against the data (fractions to counts, max_features against the drawable features),
  after their constraints are checked.
- ``check_weights_vector``: the forests' sample and feature weights, with the zero-sum check and
  the messages tests/test_sk.py asserts (``_check_sample_weight`` has neither).
- ``FOREST_X`` / ``FOREST_FIT_X``, ``core_X``, ``block_values``, ``mapped_file`` and ``ForestInputMixin``: what X
  a forest reads, as ``check_array`` / ``validate_data`` keywords (dense float64, float32, int8,
  uint8, int16 or bool, read as they are; scipy.sparse CSR / CSC; NaN is a missing value in dense
  X, infinity an error), the form the core reads it in, where a memory-mapped X lies in its file,
  and the ``allow_nan`` and ``sparse`` tags of every estimator whose X goes to a forest.
- ``share_feature_names``, ``check_columns``: an inner forest (LSSFind's, iRF's) gets its
  estimator's column names; X is checked against them by the estimator before the forest reads it.
- ``IntInterval``: the integer constraint of every estimator and function (scikit-learn's takes bool).
- ``check_up_front``, ``check_forest_size``, ``clamp_iterations``: work sizes and iteration limits
  of any size (issue 22): refused by name where they size arrays beyond memory, clamped where the core counts in int32.
- ``OutputTooLarge``, ``check_output_size``: a result (a forest's node values, SHAP interaction
  values, a solution path) whose size, known before the work starts, exceeds this machine's memory.
- ``squares_leave_float64`` / ``refuse_extreme_targets``, ``extreme_exponent``, ``scaled_weights``:
  targets and weights at scales where sums of squares leave float64.
"""

from __future__ import annotations

import contextlib
import functools
import math
import mmap
import numbers
import os
import re
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import multiclass as _multiclass
from sklearn.utils import validation as _sk
from sklearn.utils._param_validation import Interval, InvalidParameterError
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from .io.column_files import ColumnFiles
from .io.h5ad import anndata_matrix, is_anndata
from .io.packed import is_packed

# The core's integer types: parameters are range-checked (or, for budgets, clamped) against these.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# Other dtypes (int32, int64, ...) are converted to the first.
FOREST_DTYPES = (np.float64, np.float32, np.int8, np.uint8, np.int16, np.bool_)
FOREST_X = {"dtype": list(FOREST_DTYPES), "ensure_all_finite": "allow-nan", "accept_sparse": ["csc", "csr"]}
# X to fit on: the column encoding rejects infinity itself while it reads each value, so no
# separate pass reads the whole of X first (a memory-mapped X would become resident).
FOREST_FIT_X = {**FOREST_X, "ensure_all_finite": False}


# The argument a scikit-learn validation function checks, by the function raising (innermost first):
# a name or, for functions taking input_name, None (read that local).
_ARGUMENT_OF = {
    _sk.check_array.__code__: None,
    _sk.column_or_1d.__code__: None,
    _sk._check_y.__code__: "y",
    _sk.check_consistent_length.__code__: "y",  # the package checks y (or weights) against X
    _sk._check_sample_weight.__code__: "sample_weight",
    _multiclass.check_classification_targets.__code__: "y",
    _sk.validate_data.__code__: "X",  # feature count and names
}


def _failed_argument(exc):
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        if frame.f_code in _ARGUMENT_OF:
            name = _ARGUMENT_OF[frame.f_code] or frame.f_locals.get("input_name")
            if name:
                return name
    return None


@contextlib.contextmanager
def _naming_argument():
    """scikit-learn's errors about an input, prefixed by the argument's name where they do not name it
    ("Found array with 0 sample(s)", "Expected 2D array", "Complex data not supported", numpy's
    "could not convert string to float"); the exception and its type are the same."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        name = _failed_argument(exc)
        if (name and len(exc.args) == 1 and isinstance(exc.args[0], str)
                and not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", exc.args[0])):
            exc.args = (f"{name}: {exc.args[0]}",)
        raise


def _named(function):
    @functools.wraps(function)
    def checked(*args, **kwargs):
        with _naming_argument():
            return function(*args, **kwargs)
    return checked


_validate_data = _named(_sk.validate_data)
_check_array = _named(_sk.check_array)


def _forest_reads(kwargs):
    # FOREST_FIT_X is a copy of FOREST_X: both hold the one dtype list, which no other caller passes.
    return kwargs.get("dtype") is FOREST_X["dtype"]


def _plain_rows(estimator, X, y, reset, kwargs):
    """True when scikit-learn's validate_data would hand X back as it is, with no warning: rows to
    predict or explain (FOREST_X), a plain ndarray of a dtype the forests read, of the fitted width,
    for an estimator fitted without feature names or categories, with no infinity. Its checks take
    about 0.6 ms a call, the whole of a small call's core time (TreeSHAP of 100 rows)."""
    if reset or not (isinstance(y, str) and y == "no_validation") or kwargs != FOREST_X:
        return False
    if type(X) is not np.ndarray or X.ndim != 2 or X.dtype.type not in FOREST_DTYPES or X.shape[0] < 1:
        return False
    if (X.shape[1] != getattr(estimator, "n_features_in_", None) or hasattr(estimator, "feature_names_in_")
            or getattr(estimator, "_category_encoder", None) is not None):
        return False
    return X.dtype.kind != "f" or bool(np.isfinite(X.sum())) or not np.isinf(X).any()


def validate_data(estimator, X="no_validation", y="no_validation", reset=True, **kwargs):
    """scikit-learn's validate_data, naming the argument in its errors, for every form of X the package
    reads; a fit (reset) also refuses integers float64 cannot hold (check_exact_integers)."""
    if _plain_rows(estimator, X, y, reset, kwargs):
        return X
    if not (isinstance(X, str) and X == "no_validation"):
        refuse_silent_casts(X, "X")
        if reset:
            check_exact_integers(X)
    # A masked or dask y is refused; a y of dates is a classifier's labels, or refused by regression.
    if isinstance(y, np.ma.MaskedArray) or hasattr(y, "__dask_graph__"):
        refuse_silent_casts(y, "y")
    # A forest with categorical features reads X's categories as the codes it was fitted on.
    encoder = getattr(estimator, "_category_encoder", None)
    if encoder is not None and not reset and not (isinstance(X, str) and X == "no_validation"):
        X = encoder.transform(X)
    if is_packed(X) and _forest_reads(kwargs):
        return _validate_packed(estimator, X, y, reset, kwargs)
    if is_anndata(X):
        return _validate_anndata(estimator, X, y, reset, kwargs)
    return _validate_data(estimator, X, y, reset=reset, **kwargs)


def check_array(array, **kwargs):
    refuse_silent_casts(array, kwargs.get("input_name") or "X")
    if is_packed(array) and _forest_reads(kwargs):
        _check_packed_samples(array, kwargs.get("ensure_min_samples", 1))
        return array
    if is_anndata(array):
        array = anndata_matrix(array)[0]
    return _check_array(array, **kwargs)


def _check_packed_samples(X, need):
    if X.shape[0] < need:
        raise ValueError(f"X: Found array with {X.shape[0]} sample(s) (shape={X.shape}) while a minimum of {need} is "
                         "required.")


def _validate_packed(estimator, X, y, reset, kwargs):
    """validate_data for packed genotypes: what scikit-learn checks of an array X and sets on the
    estimator, with the variant IDs as feature names (as a DataFrame's columns would be)."""
    _check_packed_samples(X, kwargs.get("ensure_min_samples", 1))
    _check_names(estimator, X.shape[1], X.feature_names, reset, "variant IDs")
    if isinstance(y, str) and y == "no_validation":
        return X
    if y is None:
        if get_tags(estimator).target_tags.required:
            raise ValueError(f"This {type(estimator).__name__} estimator requires y to be passed, but the target y is "
                             "None.")
        return X
    with _naming_argument():
        y = _sk._check_y(y, multi_output=kwargs.get("multi_output", False), y_numeric=kwargs.get("y_numeric", False),
                         estimator=estimator)
        _sk.check_consistent_length(X, y)
    return X, y


def _check_names(estimator, n_features, names, reset, what):
    """What scikit-learn's validate_data sets (reset) or checks of a DataFrame's columns, for the
    feature names of packed genotypes and of AnnData."""
    if reset:
        estimator.n_features_in_ = n_features
        estimator.feature_names_in_ = names
        return
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and n_features != expected:
        raise ValueError(f"X has {n_features} features, but {type(estimator).__name__} is expecting {expected} "
                         "features as input.")
    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is None:
        warnings.warn(f"X has feature names, but {type(estimator).__name__} was fitted without feature names",
                      UserWarning, stacklevel=4)
    elif fitted is not names and not np.array_equal(fitted, names):  # the same names array: no pass over p
        k = int(np.flatnonzero(fitted != names)[0])
        raise ValueError(f"X: the {what} should match those that were passed during fit; column {k} is "
                         f"{names[k]!r} where fit had {fitted[k]!r}")


def _validate_anndata(estimator, adata, y, reset, kwargs):
    """validate_data for an AnnData: its X validated as any matrix, named by its var_names."""
    X, names = anndata_matrix(adata)
    if not reset:  # names first: a mismatch is the clearer error
        _check_names(estimator, X.shape[1], names, reset, "var_names")
    with warnings.catch_warnings():  # the matrix has no names; they are set or checked here
        warnings.filterwarnings("ignore", "X does not have valid feature names", UserWarning)
        out = _validate_data(estimator, X, y, reset=reset, **kwargs)
    if reset:
        _check_names(estimator, X.shape[1], names, reset, "var_names")
    return out


check_sample_weight = _named(_sk._check_sample_weight)
check_consistent_length = _named(_sk.check_consistent_length)
check_classification_targets = _named(_multiclass.check_classification_targets)


_BEYOND_2_53 = ("X holds integers beyond +-2**53, which float64 cannot tell apart; recode them (ranks, or an "
                "offset) before fitting")


class IntInterval(Interval):
    """scikit-learn's Interval of integers, without bool: True is not read as 1."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


def refuse_silent_casts(X, name):
    """A dask array or data frame is refused: numpy would compute it whole, silently; a
    ColumnFiles is read only by pyinterp's forests, iRF, LSSFind and DSTUMP. And numpy
    casts datetime64 and timedelta64 values to counts of their unit (days, nanoseconds) without a
    word, and reads a masked array's hidden values as values: which number a date is, and what a
    masked entry means, are the user's choices to make."""
    if hasattr(X, "__dask_graph__"):  # a dask collection
        raise TypeError(f"{name} is a dask {type(X).__name__}, which pyinterp would load whole into this process; "
                        f"pyinterp fits in-memory, memory-mapped or packed data (with joblib's Dask backend it "
                        f"sends that data to every worker); only pyinterp's forests take a dask array X: their fit, "
                        f"split by columns across its cluster (feature-parallel), what runs rows down their "
                        f"trees (predict, apply, pyinterp.importance's measures), the forest-based "
                        f"IterativeRandomForest, LSSFind and LocalLSSFind, and pyinterp.importance.dstump. Call "
                        f"{name}.compute() if it fits in memory, or write it to a .npy file (np.load(path, "
                        f"mmap_mode='r')) or a PLINK .bed (pyinterp.io.read_plink) and fit that")
    if isinstance(X, ColumnFiles):
        raise TypeError(f"{name} is a ColumnFiles, which only pyinterp's forests read (their fit, feature-parallel on "
                        f"a Dask cluster, and what runs rows down their trees: predict, apply, pyinterp.importance's "
                        f"measures), the forest-based IterativeRandomForest, LSSFind and LocalLSSFind, and "
                        f"pyinterp.importance.dstump; open its files in this process instead: "
                        f"pyinterp.io.read_plink(path) for a "
                        f".bed, np.load(path, mmap_mode='r') for a .npy")
    if isinstance(X, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array, whose masked entries would be read as the values under the "
                        f"mask; fill them first: np.ma.filled({name}, np.nan) makes them missing values")
    dtypes = X.dtypes if hasattr(X, "dtypes") and not hasattr(X, "dtype") else [getattr(X, "dtype", None)]
    for dtype in dtypes:
        if getattr(dtype, "kind", "") in ("m", "M"):
            raise TypeError(f"{name} holds {dtype} values, which are numbers only once a unit and an origin are "
                            f"chosen; convert them first, e.g. days since the first: (t - t.min()) / "
                            f"np.timedelta64(1, 'D')")


def check_exact_integers(X):
    """8-byte integer X (or Python integers in an object array) is read as float64, which holds
    integers exactly only up to 2^53: beyond, distinct values would merge silently, so that is an
    error."""
    if is_packed(X):
        return
    if is_anndata(X):
        if getattr(X, "isbacked", False):  # read once, by validate_data
            return
        X = X.X
    if hasattr(X, "dtypes") and not hasattr(X, "dtype"):  # a DataFrame: its 8-byte integer columns
        arrays = [X.iloc[:, j].to_numpy() for j, d in enumerate(X.dtypes)
                  if getattr(d, "kind", "") in "iu" and getattr(d, "itemsize", 0) == 8]
    else:
        if not hasattr(X, "dtype"):  # nested lists: as numpy reads them (validate_data names other problems)
            try:
                X = np.asarray(X)
            except (TypeError, ValueError):
                return
        dtype = getattr(X, "dtype", None)
        if dtype is not None and dtype.kind == "O" and not sp.issparse(X):  # Python ints of any size
            if any(isinstance(v, numbers.Integral) and abs(int(v)) > 2**53 for v in np.asarray(X).flat):
                raise ValueError(_BEYOND_2_53)
            return
        if dtype is None or dtype.kind not in "iu" or dtype.itemsize != 8:
            return
        arrays = [X.data if sp.issparse(X) else np.asarray(X)]
    for a in arrays:
        if a.size and (a.max() > 2**53 or a.min() < -(2**53)):
            raise ValueError(_BEYOND_2_53)


def validate_fit_data(estimator, X, y, **kwargs):
    """validate_data for a fit on X that the forest reads (FOREST_FIT_X), and warn_missing_call_code
    on the result."""
    out = validate_data(estimator, X, y, **FOREST_FIT_X, **kwargs)
    warn_missing_call_code(out[0] if isinstance(out, tuple) else out)
    return out


def holds_missing_call_code(X) -> bool:
    """Whether X is int8 in memory holding -127, bed-reader's code for a missing genotype call (a
    memory-mapped X is not read here: that would make it all resident; after validation it is a
    plain view of the map, which _map_position still finds)."""
    return bool(isinstance(X, np.ndarray) and X.dtype == np.int8 and X.size and _map_position(X) is None
                and X.min() == -127)


def warn_missing_call_code(X):
    """Genotypes read by bed-reader as int8 mark a missing call -127, which the trees would split on as
    a value (thresholds such as -63.5): warn when X holds it (holds_missing_call_code)."""
    if holds_missing_call_code(X):
        missing_call_code_warning(stacklevel=5)


def missing_call_code_warning(stacklevel):
    """The warning of warn_missing_call_code, naming the way to missing values."""
    warnings.warn("X is int8 and holds -127, bed-reader's code for a missing genotype call: it is split on as a "
                  "value below 0. Read the .bed with pyinterp.io.read_plink (missing calls become missing "
                  "values), or give X as float with NaN for the missing calls.", UserWarning, stacklevel=stacklevel)


def core_X(X):
    """X validated with FOREST_X, in the form the core reads: a sparse X as canonical CSR (sorted
    indices, no duplicates), which the fits' column encoding reads in panels and the split search
    and the descents by rows. Copies only what has to change (a CSC X is converted)."""
    if is_packed(X):
        X.check_mapped_file()
        return X
    if not sp.issparse(X):
        return X  # read in place whatever its alignment (a Dask worker's copy is at any offset)
    if X.format != "csr":
        X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.dtype.kind == "f" and np.isnan(X.data).any():
        raise ValueError("X is sparse and holds NaN: missing values are supported in dense X only")
    return X


def block_values(values):
    """A block of a feature-parallel X's columns (a dask chunk, a file block opened) in the form
    the core reads, converted as validate_data converts an X in memory (FOREST_X: other dtypes
    as float64, 8-byte integers beyond 2^53 refused); packed genotypes as they are."""
    check_exact_integers(values)
    if not is_packed(values) and np.dtype(values.dtype) not in FOREST_DTYPES:
        values = values.astype(np.float64)
    return core_X(values)


def mapped_file(X):
    """(path, byte offset of X[0, 0]) when X's memory is a read-only np.memmap of a file
    (np.load(..., mmap_mode="r")), else None. The core then reads X's columns from the file in
    panels rather than through the map, whose pages would otherwise all become resident. Packed
    genotypes: the calls' position when they are mapped from their file (still the one at that
    path); the core reads a subset of the samples from it (column_source)."""
    if is_packed(X):
        return X._calls_position()
    position = _map_position(X)
    return position if position is not None and _maps_file(X.ctypes.data, position[0]) else None


def _maps_file(address, path):
    """Whether the memory map holding `address` is of the file now at `path`: a file replaced at
    that path (np.save to a new file renamed over it) would otherwise be read with pread in place
    of the mapped one. Read from /proc/self/maps (device and inode of each mapping); False where
    that cannot be read, and X is then read through its map."""
    try:
        now = os.stat(path)
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(maxsplit=5)
                start, end = (int(a, 16) for a in fields[0].split("-"))
                if start <= address < end:
                    major, minor = (int(d, 16) for d in fields[3].split(":"))
                    return (int(fields[4]) == now.st_ino and major == os.major(now.st_dev)
                            and minor == os.minor(now.st_dev))
    except (OSError, ValueError, IndexError):
        pass
    return False


def _map_position(X):
    """mapped_file of an array: (path, byte offset of X[0, 0]) or None."""
    view = X
    while isinstance(view, np.ndarray) and not isinstance(view, np.memmap):
        view = view.base
    if not isinstance(view, np.memmap) or view.mode != "r" or view.filename is None:
        return None
    root = view  # the memmap that owns the map: its offset is the file position of its first byte
    while isinstance(root.base, np.memmap):
        root = root.base
    if not isinstance(root.base, mmap.mmap):
        return None
    return str(root.filename), int(root.offset) + (X.ctypes.data - root.ctypes.data)


def check_columns(estimator, X):
    """X checked against a fitted estimator's training columns (count and names) so errors name
    that estimator, for estimators that then hand the caller's X to their inner forest (a
    feature-parallel X: by the forest, which shares the estimator's names)."""
    check_is_fitted(estimator, "forest_")
    from .forest.feature_parallel import is_feature_parallel  # it imports this module

    if is_feature_parallel(X):  # checked by the forest, which reads its split columns where they are
        return
    validate_data(estimator, X, reset=False, **FOREST_X)


def share_feature_names(estimator, forest):
    """Gives an inner forest, fitted on the validated array, the estimator's column names (if
    any), so its predictions and importances check names as the estimator does."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        forest.feature_names_in_ = names


class ForestInputMixin:
    """Declares that X may hold missing values (NaN) and be sparse; place before BaseEstimator."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags


def resolve_n_threads(n_jobs) -> int:
    """scikit-learn's n_jobs convention: None -> 1, -1 -> all cores, -2 -> all but one, ..."""
    if n_jobs is None:
        return 1
    if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    n_cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # Results never depend on the thread count, and threads beyond a few per core only cost.
    return min(int(n_jobs), 4 * n_cpus) if n_jobs > 0 else max(1, n_cpus + 1 + int(n_jobs))


def regression_target(y) -> np.ndarray:
    """A regression y (validated by validate_data without y_numeric) as contiguous float64.
    scikit-learn converts numeric strings and turns None into NaN; both are refused here, as is
    any value that is not finite."""
    refuse_silent_casts(y, "y")
    y = np.asarray(y)
    numbers_only = y.dtype.kind in "biuf" or (
        y.dtype.kind == "O" and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in y.flat))
    if not numbers_only:
        example = next((v for v in y.flat if not isinstance(v, numbers.Real)), y.flat[0] if y.size else None)
        raise ValueError(f"y must hold numbers for regression, got {y.dtype} values such as {example!r}")
    y = np.require(y, np.float64, ["C_CONTIGUOUS", "ALIGNED"])
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    return y


def squares_leave_float64(y) -> bool:
    """Whether the squares of the largest ``|y|`` overflow or underflow float64 (``|y|`` outside about
    [1e-154, 1e154]): impurities, and every measure made of sums of w y^2, are then inf, NaN or 0."""
    largest = np.abs(y).max() if len(y) else 0.0
    return bool(largest > 0 and abs(int(np.frexp(largest)[1])) > 511)


def refuse_extreme_targets(y, what):
    """A clear error instead of inf, NaN or 0 from sums of squares of y (see squares_leave_float64)."""
    if squares_leave_float64(y):
        raise ValueError(f"max |y| = {np.abs(y).max():g}: its squares are beyond float64, so {what} would be inf, "
                         "NaN or 0. Rescale y: the measure's ranking does not depend on its scale.")


def extreme_exponent(v) -> int:
    """The binary exponent of max ``|v|`` when it lies outside [2^-256, 2^256], else 0 (as the core's
    forest fit): v scaled by 2^-exponent (exact) then has no sum of squares that overflows or
    underflows."""
    exponent = int(np.frexp(np.abs(v).max())[1]) if len(v) else 0
    return exponent if abs(exponent) > 256 else 0


def scaled_weights(w):
    """Sample weights scaled by a power of two (exact) by their extreme_exponent, so no weighted sum
    overflows or underflows (subnormal weights lose their bits in products). For measures that
    weights enter only relative to each other; None stays None."""
    return w if w is None else np.ldexp(w, -extreme_exponent(w))


def physical_memory() -> int:
    """Bytes of memory this machine has (a bound no up-front allocation can pass)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 2**63


def check_up_front(name, value, bytes_each, what):
    """A work size (n_iterations, n_restarts, n_trials, ...) whose arrays, allocated before any work
    starts, would exceed this machine's memory is refused by name, instead of a MemoryError or
    std::bad_alloc. Sizes within memory are accepted: their loops stop on Ctrl-C."""
    need = int(value) * int(bytes_each)
    have = physical_memory()
    if need > have:
        raise ValueError(f"{name}={value} needs {need / 2**30:.3g} GiB for {what} before any work starts, more than "
                         f"this machine's {have / 2**30:.3g} GiB of memory; lower {name}")


class OutputTooLarge(MemoryError):
    """A result that would not fit in this machine's memory, refused before any work starts.

    The message names the size and the ways to a smaller result. A ``MemoryError``, so code that
    handles running out of memory handles it too. Raised where the size of a result is known
    before the work starts and exceeds the machine's physical memory: the node values of a
    forest's trees (one per class in every node, so many classes and deep trees), the p x p
    interaction values of :func:`~pyinterp.importance.shap_interaction_values`, and the
    parameters of :class:`~pyinterp.partitioned.PartitionedRatio`.

    See Also
    --------
    pyinterp.importance.shap_interaction_importance : Interaction importances without the p x p
        tensor.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import OutputTooLarge, RandomForestClassifier
    >>> X, y = np.arange(40_000.0).reshape(-1, 1), np.arange(40_000) // 2  # 20,000 classes
    >>> try:
    ...     RandomForestClassifier(n_estimators=10_000).fit(X, y)
    ... except OutputTooLarge as error:
    ...     print(str(error).split(" take ")[0])
    10000 trees of up to 52,479 nodes, each holding 20,000 values,
    """


OutputTooLarge.__module__ = "pyinterp"  # where users import it from


def check_output_size(what, n_bytes, way_out):
    """Refuse a result of ``n_bytes`` bytes beyond this machine's memory: OutputTooLarge naming
    ``what`` it holds, its size and ``way_out``."""
    have = physical_memory()
    if n_bytes > have:
        raise OutputTooLarge(f"{what} take {n_bytes / 2**30:.3g} GiB, more than this machine's {have / 2**30:.3g} GiB "
                             f"of memory; {way_out}")


# Bytes of the smallest tree in the core (one leaf: its node arrays' entries and their headers).
_TREE_BYTES = 1024


def check_forest_size(name, n_trees, n_rows):
    """A forest's trees and their (n_trees, n_rows) uint32 in-bag counts, allocated as it starts."""
    check_up_front(name, n_trees, 4 * n_rows + _TREE_BYTES, "its trees and in-bag counts")


def clamp_iterations(value) -> int:
    """An iteration limit the core counts in int32: any positive int is accepted, and limits beyond
    int32 are never reached, so they are clamped (the result is the same)."""
    return min(int(value), INT32_MAX)


def check_budget(value) -> int:
    """An output budget (a positive integer, checked by its IntInterval constraint); budgets above
    what the core counts in mean no limit and are clamped."""
    return min(int(value), INT64_MAX)


def check_int(name, value, low, high=None):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


def check_real(name, value, low, high=None, *, low_open=False):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a finite real number, got {value!r}")
    if not math.isfinite(value):  # a number, but no value: scikit-learn's error, a ValueError and a TypeError
        raise InvalidParameterError(f"{name} must be a finite real number, got {value!r}")
    if value < low or (low_open and value == low) or (high is not None and value > high):
        left = "(" if low_open else "["
        raise ValueError(f"{name} must be in {left}{low}, {high if high is not None else 'inf'}], got {value}")
    return float(value)


def count_or_fraction(name, value, n, *, min_count=1, fraction_max=1.0):
    """An int count, or a float fraction of n rounded up (scikit-learn's convention)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return check_int(name, value, min_count)
    check_real(name, value, 0.0, fraction_max, low_open=True)
    return max(min_count, int(math.ceil(value * n)))


def column_indices(name, columns, n_features, feature_names):
    """Columns given by index, by name (of ``feature_names``) or as a boolean mask over the
    columns, as sorted distinct indices; errors name the argument ``name``."""
    if isinstance(columns, (str, numbers.Integral)):
        columns = [columns]
    items = np.asarray(columns) if isinstance(columns, np.ndarray) else np.asarray(list(columns), dtype=object)
    if items.ndim != 1:
        raise ValueError(f"{name} must be a 1-d list of columns or a boolean mask, got shape {items.shape}")
    if items.dtype == bool or (items.size and all(isinstance(v, (bool, np.bool_)) for v in items)):
        if items.shape[0] != n_features:
            raise ValueError(f"{name}: a boolean mask needs one entry per column ({n_features}), got {items.shape[0]}")
        return np.flatnonzero(items.astype(bool))
    out = []
    for item in items:
        if isinstance(item, numbers.Integral) and not isinstance(item, (bool, np.bool_)):
            if not 0 <= item < n_features:
                raise ValueError(f"{name} names column {item}, but X has {n_features} columns")
            out.append(int(item))
        elif isinstance(item, str) and feature_names is not None and item in feature_names:
            out.append(int(np.flatnonzero(feature_names == item)[0]))
        else:
            raise ValueError(f"{name} names column {item!r}, which is not a column index"
                             + ("" if feature_names is None else " or name") + " of X")
    t = np.unique(np.asarray(out, dtype=np.int64))
    if t.size != len(out):
        raise ValueError(f"{name} names a column twice")
    return t


def column_names(X):
    """X's column names (AnnData's var_names, packed genotypes' feature names, a DataFrame's
    columns) when they are strings, else None."""
    if is_anndata(X):
        names = X.var_names
    elif is_packed(X):
        names = X.feature_names
    elif hasattr(X, "columns") and hasattr(X, "iloc"):
        names = X.columns
    elif isinstance(X, ColumnFiles) and X.feature_names is not None:
        names = X.feature_names
    else:
        return None
    names = np.asarray(names, dtype=object)
    return names if all(isinstance(v, str) for v in names) else None


def read_columns(X, features):
    """The chosen columns of X as float64 (NaN missing), X's feature names (or None), its column
    count and the chosen indices; only those columns are read (never all of a wide X)."""
    names = column_names(X)
    if is_anndata(X):
        X = anndata_matrix(X)[0]
    if not hasattr(X, "shape"):
        X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
    if len(X.shape) != 2:
        raise ValueError(f"X must be 2-d, got shape {X.shape}")
    p = X.shape[1]
    chosen = np.arange(p) if features is None else column_indices("features", features, p, names)
    if hasattr(X, "iloc"):
        part = X.iloc[:, chosen]
    elif sp.issparse(X):
        part = sp.csc_matrix(X)[:, chosen].toarray()
    else:
        part = X[:, chosen]
    values = check_array(np.asarray(part, dtype=np.float64), ensure_all_finite="allow-nan")
    return values, names, p, chosen


def resolve_max_features(max_features, n_features, n_drawable, *, basis=None):
    """Candidates drawn per node: an int (at most n_features), or "sqrt", "log2", a fraction or
    None (all) of `basis` features (default n_features; the forests pass the features not split
    on at every node), at least 1 and at most the n_drawable."""
    basis = n_features if basis is None else basis
    if max_features is None:
        k = basis
    elif isinstance(max_features, str):
        if max_features == "sqrt":
            k = int(math.sqrt(basis))
        elif max_features == "log2":
            k = int(math.log2(basis)) if basis > 0 else 0
        else:
            raise ValueError(f"max_features must be an int, a float, 'sqrt', 'log2' or None, got {max_features!r}")
    elif isinstance(max_features, numbers.Integral) and not isinstance(max_features, bool):
        k = check_int("max_features", max_features, 1, n_features)
    else:
        k = int(check_real("max_features", max_features, 0.0, 1.0, low_open=True) * basis)
    return max(1, min(k, n_drawable))


def resolve_n_draws(max_samples, n_samples, bootstrap, weight_sum=None):
    """Rows drawn per tree, as scikit-learn 1.9 counts them. With bootstrap (draws with
    replacement) an int may exceed n, and a fraction is of n or, when weighted (weight_sum), of the
    sum of the weights, truncated, with scikit-learn's warning when that leaves few draws; up to
    the core's int32 count. Without bootstrap (pyinterp's subsampling), a fraction of n, at most
    all rows."""
    if max_samples is None:
        return n_samples
    most = INT32_MAX if bootstrap else n_samples
    if isinstance(max_samples, numbers.Integral) and not isinstance(max_samples, bool):
        return check_int("max_samples", max_samples, 1, most)
    of = weight_sum if bootstrap and weight_sum is not None else n_samples
    check_real("max_samples", max_samples, 0.0, most / of, low_open=True)
    n_draws = max(int(max_samples * of), 1)
    if bootstrap and n_draws < max(10, n_samples ** (1 / 3)):
        total = (f"the number of samples is {n_samples} " if weight_sum is None
                 else f"the total sum of sample weights is {weight_sum} ")
        warnings.warn(f"Using the fractional value {max_samples=} when {total}results in a low number ({n_draws}) of "
                      "bootstrap samples. We recommend passing `max_samples` as an integer instead.", UserWarning,
                      stacklevel=7)  # the caller of fit
    return n_draws


def _real_objects(values) -> bool:
    """Whether an object array holds real numbers only (a list of Python floats and ints)."""
    array = np.asarray(values)
    return array.dtype.kind == "O" and all(isinstance(v, numbers.Real) for v in array.flat)


def check_weights_vector(name, weights, length, *, what):
    """A finite, non-negative float64 copy with one entry per `what` and a positive sum."""
    if np.asarray(weights).dtype.kind in "cmMUSO" and not _real_objects(weights):
        kind = np.asarray(weights).dtype
        raise TypeError(f"{name} must be an array of real numbers, got {kind} values (casting them would "
                        f"{'drop their imaginary parts' if kind.kind == 'c' else 'read dates or text as weights'})")
    try:
        w = np.array(weights, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers") from exc
    if w.ndim != 1 or w.shape[0] != length:
        raise ValueError(f"{name} must be a 1-d array with one entry per {what} ({length}), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} contains NaN or infinity")
    if np.any(w < 0):
        raise ValueError(f"{name} must be non-negative")
    if not np.any(w > 0):
        raise ValueError(f"{name} is zero everywhere: at least one value must be positive")
    return w
