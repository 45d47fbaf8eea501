"""Categorical features of a forest: which columns they are, and their values as the category codes
the core splits on (0, 1, ... in sorted order; missing and unseen values NaN), by scikit-learn's
OrdinalEncoder. Semantics as scikit-learn 1.10's ``DecisionTree*(categorical_features=...)``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import OrdinalEncoder
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _get_feature_names

from .._validation import column_indices, is_anndata, is_packed

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
        columns = column_indices("categorical_features", categorical_features, n_columns(X), _get_feature_names(X))
    return columns if len(columns) else None


class CategoryEncoder:
    """X's categorical columns encoded as category codes, the others as they are (float64).

    Fitted on the training X: each categorical column's categories are its distinct values
    (missing ones left out), sorted, at most 256. ``transform`` maps a value to its category's
    index and a missing or unseen value to NaN, which the trees route as missing."""

    def __init__(self, X, columns):
        if sp.issparse(X) or is_packed(X) or is_anndata(X):
            raise ValueError("categorical_features needs X as a dense array or a DataFrame: sparse matrices, packed "
                             "genotypes and AnnData are not encoded")
        self.columns = np.asarray(columns, dtype=np.int64)
        self.encoder = OrdinalEncoder(categories="auto", dtype=np.float64, handle_unknown="use_encoded_value",
                                      unknown_value=np.nan, encoded_missing_value=np.nan)
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
        against the fit's), anything else becomes a float64 array."""
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


def _is_missing(value):
    return value is None or (isinstance(value, float) and np.isnan(value))
