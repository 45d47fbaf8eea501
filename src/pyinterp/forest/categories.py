"""Categorical features of a forest or an interaction finder: which columns they are, and their
values as the category codes the core splits on (0, 1, ... in sorted order; missing and unseen
values NaN), by scikit-learn's OrdinalEncoder, or as codes X holds already (CategoryCodes: any
form of X, packed genotypes' covariates too). Semantics as scikit-learn 1.10's
``DecisionTree*(categorical_features=...)``."""

from __future__ import annotations

import copy
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import OrdinalEncoder
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _get_feature_names, check_is_fitted

from .._validation import check_output_size, column_indices, column_names, is_anndata, is_packed, read_columns

# A split's left set is a 256-bit set of codes (the core's kMaxCategories).
MAX_CATEGORIES = 256


def _is_frame(X):
    return hasattr(X, "iloc") and hasattr(X, "dtypes")


def n_columns(X) -> int:
    """Columns of a 2-d X: an array, a DataFrame or a list of rows."""
    return X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else len(X[0])


def categorical_columns(X, categorical_features):
    """The ascending indices of X's categorical columns (None: none): categorical_features as
    indices, names, a mask, or "from_dtype" (a DataFrame's ``category`` columns)."""
    if categorical_features is None:
        return None
    if isinstance(categorical_features, str) and categorical_features == "from_dtype":
        if not _is_frame(X):
            return None
        columns = np.flatnonzero([getattr(dtype, "name", "") == "category" for dtype in X.dtypes])
    else:
        names = _get_feature_names(X)
        columns = column_indices("categorical_features", categorical_features, n_columns(X),
                                 column_names(X) if names is None else names)
    return columns if len(columns) else None


def category_encoder(X, categorical_features):
    """The encoder of X's categorical columns (None without any): a CodeChecker for
    CategoryCodes, else a CategoryEncoder fitted on X."""
    if isinstance(categorical_features, CategoryCodes):
        return CodeChecker(X, categorical_features)
    columns = categorical_columns(X, categorical_features)
    return None if columns is None else CategoryEncoder(X, columns)


class CategoryCodes:
    """``categorical_features`` for an X whose categorical columns hold category codes already.

    Code k of a column stands for its k-th category. Every form of X takes them: arrays,
    DataFrames, sparse matrices, AnnData, and the covariate columns of packed genotypes
    (``PackedGenotypes.with_covariates``, which holds numbers only). The values of those columns
    must be codes, integers from 0 to (number of categories - 1), or missing (NaN): any other
    value is an error, at prediction as at fit. Interaction finders hand their forests the
    categories they encoded this way, so every forest of one fit reads the same codes.

    Parameters
    ----------
    categories : dict
        {column: its categories in code order}, a column by index or by name (of a named X), at
        most 256 distinct categories each.

    Attributes
    ----------
    categories : dict
        {column: ndarray of its categories}, in the order given.

    Raises
    ------
    TypeError
        If ``categories`` is not a mapping.
    ValueError
        If a column has no category, more than 256, or one twice.

    See Also
    --------
    RandomForestRegressor : Its ``categorical_features`` takes CategoryCodes.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp import CategoryCodes, RandomForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> batch = rng.integers(0, 3, 300)  # codes of the batches "a", "b", "c"
    >>> X = np.column_stack([rng.normal(size=300), batch])
    >>> y = 0.5 * X[:, 0] + 3.0 * (batch == 1)
    >>> codes = CategoryCodes({1: ["a", "b", "c"]})
    >>> forest = RandomForestRegressor(20, categorical_features=codes, random_state=0).fit(X, y)
    >>> forest.categories_[0].tolist()
    ['a', 'b', 'c']
    >>> tree = forest.trees_[0]
    >>> int(tree.feature[0]), forest.categories_[0][tree.left_set(0)].tolist()
    (1, ['a', 'c'])
    """

    def __init__(self, categories):
        if not isinstance(categories, Mapping):
            raise TypeError(f"CategoryCodes takes a dict {{column: its categories}}, got {type(categories).__name__}")
        self.categories = {}
        for column, values in categories.items():
            values = np.asarray(list(values))
            if values.ndim != 1 or not 1 <= len(values) <= MAX_CATEGORIES:
                raise ValueError(f"CategoryCodes: column {column!r} needs from 1 to {MAX_CATEGORIES} categories in a "
                                 f"list, got {len(values) if values.ndim == 1 else values.shape}")
            if len(set(values.tolist())) < len(values):
                raise ValueError(f"CategoryCodes: column {column!r} lists a category twice")
            self.categories[column] = values

    def __repr__(self):
        return f"CategoryCodes({ {k: v.tolist() for k, v in self.categories.items()} !r})"

    def __eq__(self, other):
        return (isinstance(other, CategoryCodes) and list(self.categories) == list(other.categories)
                and all(np.array_equal(v, other.categories[k]) for k, v in self.categories.items()))

    __hash__ = None


# The parameter's constraint, for scikit-learn's validation.
CATEGORICAL_CONSTRAINT = ["array-like", StrOptions({"from_dtype"}), CategoryCodes, None]


def _coded_columns(X, codes):
    """CategoryCodes' columns as ascending indices into X, and their categories in that order."""
    names = column_names(X)
    pairs = sorted(((int(column_indices("categorical_features", [key], n_columns(X), names)[0]), key)
                    for key in codes.categories), key=lambda pair: pair[0])
    columns = np.array([j for j, _ in pairs], dtype=np.int64)
    if len(np.unique(columns)) < len(columns):
        raise ValueError("categorical_features: CategoryCodes names a column twice (by index and by name)")
    return columns, [codes.categories[key] for _, key in pairs]


class _Encoding:
    """What the two encoders share: ``columns`` and ``categories_``, given back as CategoryCodes."""

    def codes(self):
        """The CategoryCodes of the encoded X (its columns by index)."""
        return CategoryCodes(dict(zip(self.columns.tolist(), self.categories_)))


def first_bad_code(values, n_categories):
    """(column k, row i, value) of the first entry of values[:, k] that is neither a code of
    n_categories[k] categories (an integer from 0 to n - 1) nor missing, or None."""
    for k, n in enumerate(n_categories):
        v = values[:, k]
        bad = ~(np.isnan(v) | ((v >= 0) & (v < n) & (v == np.floor(v))))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return k, i, float(v[i])
    return None


def bad_code_error(column, names, row, value, n_categories):
    """The error of a value of categorical column `column` (X's index) that is not a code."""
    where = f"column {column}" + ("" if names is None else f" ({names[column]!r})")
    return ValueError(f"categorical_features: {where} holds {value!r} in row {row}, not a code of its "
                      f"{n_categories} categories (an integer from 0 to {n_categories - 1}) nor a missing value")


class CodeChecker(_Encoding):
    """The encoder of CategoryCodes: X holds the codes already, so ``transform`` checks that the
    categorical columns hold codes (or NaN) and returns X itself. A feature-parallel X (a dask
    array or ColumnFiles) is returned unchecked: its codes are checked where they are read (its
    blocks at fit, its split columns after)."""

    def __init__(self, X, codes):
        self.columns, self.categories_ = _coded_columns(X, codes)
        self.transform(X)

    def transform(self, X):
        from .feature_parallel import is_feature_parallel

        if is_feature_parallel(X):
            return X
        try:
            values = read_columns(X, self.columns)[0]  # those columns alone, of any form of X
        except (TypeError, ValueError) as error:
            raise ValueError(f"categorical_features is CategoryCodes, so columns {self.columns.tolist()} must hold "
                             f"category codes (numbers), which they do not ({error}); name the columns instead "
                             "to have their values encoded") from None
        bad = first_bad_code(values, [len(c) for c in self.categories_])
        if bad is not None:
            k, i, value = bad
            raise bad_code_error(int(self.columns[k]), column_names(X), i, value, len(self.categories_[k]))
        return X


class CategoryEncoder(_Encoding):
    """X's categorical columns encoded as category codes, the others as they are (float64).

    Fitted on the training X: each categorical column's categories are its distinct values
    (missing ones left out), sorted, at most 256. ``transform`` maps a value to its category's
    index and a missing or unseen value to NaN, which the trees route as missing.

    A feature-parallel X (a dask array, or a ColumnFiles' covariates) is fitted on its
    categorical columns alone, read here, and ``transform`` gives it back feature-parallel with
    those columns as codes (``_feature_parallel_codes``): the codes its values have in memory."""

    def __init__(self, X, columns):
        from .feature_parallel import is_feature_parallel

        if sp.issparse(X) or is_packed(X) or is_anndata(X):
            raise ValueError("categorical_features needs X as a dense array or a DataFrame: sparse matrices, packed "
                             "genotypes and AnnData are not encoded")
        self.columns = np.asarray(columns, dtype=np.int64)
        self.encoder = OrdinalEncoder(categories="auto", dtype=np.float64, handle_unknown="use_encoded_value",
                                      unknown_value=np.nan, encoded_missing_value=np.nan)
        if is_feature_parallel(X):
            self.encoder.fit(_read_categorical_columns(X, self.columns))
        else:
            self.encoder.fit(_safe_indexing(self._indexable(X), self.columns, axis=1))
        for j, values in zip(self.columns, self.categories_):
            if len(values) > MAX_CATEGORIES:
                raise ValueError(f"categorical_features: feature {j} has {len(values)} categories; at most "
                                 f"{MAX_CATEGORIES} are supported")

    @property
    def categories_(self):
        """Per categorical column, its categories in code order (missing values left out)."""
        return [c[:-1] if len(c) and _is_missing(c[-1]) else c for c in self.encoder.categories_]

    @staticmethod
    def _indexable(X):
        return X if _is_frame(X) or isinstance(X, np.ndarray) else np.asarray(X, dtype=object)

    def transform(self, X):
        """X with its categorical columns as codes: a DataFrame stays one (its names are checked
        against the fit's), a feature-parallel X stays one, anything else becomes a float64 array."""
        from .feature_parallel import is_feature_parallel

        if is_feature_parallel(X):
            return _feature_parallel_codes(X, self.columns, self.categories_)
        if sp.issparse(X) or is_packed(X) or is_anndata(X):
            raise ValueError("this forest has categorical features: X must be a dense array or a DataFrame")
        X = self._indexable(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
        codes = self.encoder.transform(_safe_indexing(X, self.columns, axis=1))
        if _is_frame(X):
            out = X.copy(deep=False)
            for k, j in enumerate(self.columns):
                out.isetitem(int(j), codes[:, k])
            return out
        other = np.setdiff1d(np.arange(X.shape[1]), self.columns)
        out = np.empty(X.shape, dtype=np.float64)
        out[:, other] = np.asarray(X[:, other], dtype=np.float64) if len(other) else 0.0
        out[:, self.columns] = codes
        return out


def _read_categorical_columns(X, columns):
    """A feature-parallel X's categorical columns read here (n x len(columns) values), to find
    their categories: a dask array's computed by its graph; a ColumnFiles' must be covariates
    (held here), its files' columns being read by the workers alone."""
    from ..io import ColumnFiles

    if isinstance(X, ColumnFiles):
        return X._covariates[:, _covariate_places(X, columns)]
    check_output_size(f"categorical_features reads columns {columns.tolist()} of X here to find their categories: "
                      f"{X.shape[0]} rows x {len(columns)} columns", X.shape[0] * len(columns) * X.dtype.itemsize,
                      "give those columns as codes with categorical_features=CategoryCodes({column: its categories})")
    return np.asarray(X[:, columns].compute())


def _covariate_places(X, columns):
    """The places among a ColumnFiles' covariates of X's columns ``columns``, which must be
    covariates (ValueError naming the first that is a file's column)."""
    n_files = X.n_file_columns
    in_files = columns[columns < n_files]
    if len(in_files):
        j = int(in_files[0])
        name = "" if X.feature_names is None else f" ({X.feature_names[j]!r})"
        raise ValueError(f"categorical_features: column {j}{name} is a column of X's files, which the Dask workers "
                         f"read; columns to encode must be covariates (ColumnFiles.with_covariates), held here. "
                         f"Give the files' categorical columns as codes with "
                         f"categorical_features=CategoryCodes({{column: its categories}})")
    return columns - n_files


def _codes_of(values, categories):
    """Each value's index among the sorted ``categories``; NaN for a missing or unseen value (as
    OrdinalEncoder encodes them)."""
    at = np.minimum(np.searchsorted(categories, values), len(categories) - 1)
    return np.where(categories[at] == values, at, np.nan)


def _feature_parallel_codes(X, columns, categories):
    """A feature-parallel X with its categorical ``columns`` as codes of their ``categories``,
    still feature-parallel: a dask array encoded chunk by chunk where its chunks are computed (in
    X's float dtype, which holds the codes exactly; float64 for integers), a ColumnFiles with its
    covariates encoded."""
    from ..io import ColumnFiles

    if isinstance(X, ColumnFiles):
        out = copy.copy(X)
        out._covariates = X._covariates.copy()
        for place, cats in zip(_covariate_places(X, columns), categories):
            out._covariates[:, place] = _codes_of(X._covariates[:, place], cats)
        return out
    dtype = X.dtype if X.dtype.kind == "f" else np.dtype(np.float64)

    def encode(chunk, block_info=None):
        first = block_info[0]["array-location"][1][0]
        inside = [(j - first, cats) for j, cats in zip(columns.tolist(), categories)
                  if first <= j < first + chunk.shape[1]]
        if not inside:
            return chunk.astype(dtype, copy=False)
        out = np.array(chunk, dtype=dtype)
        for k, cats in inside:
            out[:, k] = _codes_of(chunk[:, k], cats)
        return out

    return X.map_blocks(encode, dtype=dtype)


def _is_missing(value):
    return value is None or (isinstance(value, float) and np.isnan(value))


class CategoricalMixin:
    """The ``categorical_features`` parameter of an estimator: ``_encode_categories`` at fit
    encodes X (the encoder is kept, and ``validate_data(reset=False)`` applies it to the X of
    later calls), ``_inner_categories`` is what its inner forests take, ``categories_`` and
    ``is_categorical_`` describe the columns."""

    def _encode_categories(self, X):
        encoder = category_encoder(X, self.categorical_features)
        self._check_encoding(encoder)
        self._category_encoder = encoder
        self.is_categorical_ = None if encoder is None else np.isin(np.arange(n_columns(X)), encoder.columns)
        return X if encoder is None else encoder.transform(X)

    def _check_encoding(self, encoder):
        """Refuses an encoding the fit cannot take (a forest's warm start)."""

    def _inner_categories(self):
        """categorical_features of the forests fitted on the encoded X: the codes, by index."""
        encoder = getattr(self, "_category_encoder", None)
        return None if encoder is None else encoder.codes()

    def _as_codes(self, X):
        """X as the inner forests read it (its categorical columns as codes)."""
        encoder = getattr(self, "_category_encoder", None)
        return X if encoder is None else encoder.transform(X)

    @property
    def categories_(self) -> list | None:
        """Per categorical feature (in column order), its categories: a list of arrays, or None.

        Code k in the trees' left sets (``Tree.left_categories``, ``Tree.left_set``) stands for
        ``categories_[i][k]``, i counting the categorical columns (``is_categorical_`` marks
        them). The categories are the training X's distinct values, sorted (missing values left
        out), or those ``CategoryCodes`` gave. None without categorical features.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import RandomForestRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = np.column_stack([rng.choice(["lung", "blood"], 50), rng.normal(size=50)]).astype(object)
        >>> forest = RandomForestRegressor(5, categorical_features=[0], random_state=0).fit(X, rng.normal(size=50))
        >>> forest.categories_[0].tolist(), forest.is_categorical_.tolist()
        (['blood', 'lung'], [True, False])
        >>> print(RandomForestRegressor(5, random_state=0).fit(X[:, 1:], rng.normal(size=50)).categories_)
        None
        """
        check_is_fitted(self)
        encoder = getattr(self, "_category_encoder", None)
        return None if encoder is None else encoder.categories_
