"""Type stubs for pyinterp's C++ extension."""

import enum
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .io.packed import PackedGenotypes

# What the forest engine reads as X: a 2-d array of float64, float32, int8, uint8, int16 or bool,
# a CSR / CSC matrix in canonical form (CSC to fit), or packed genotype calls.
ForestX = (
    npt.NDArray[np.floating] | npt.NDArray[np.integer] | npt.NDArray[np.bool_] | sp.csr_matrix | sp.csc_matrix | sp.sparray
    | PackedGenotypes
)

class Criterion(enum.Enum):
    squared_error = 0
    gini = 1
    entropy = 2
    poisson = 3
    absolute_error = 4

class ForestParams:
    criterion: Criterion
    n_estimators: int
    bootstrap: bool
    n_draws: int
    max_features: int
    min_samples_split: int
    min_weight_split: float
    min_samples_leaf: int
    min_weight_fraction_leaf: float
    max_depth: int
    max_leaf_nodes: int
    ccp_alpha: float
    monotonic_cst: list[int]
    min_impurity_decrease: float
    always_features: list[int]
    categorical_features: list[int]
    balanced_subsample: bool
    seed: int
    first_tree: int
    n_threads: int
    record_oob_leaves: bool
    column_blocks: int
    def __init__(self) -> None: ...
    def __getstate__(self) -> dict[str, Any]: ...
    def __setstate__(self, state: dict[str, Any] | tuple[Any, ...]) -> None: ...

class ColumnCodes:
    def __init__(self, X: ForestX, n_threads: int = 1, mapped_file: tuple[str, int] | None = None) -> None: ...
    @property
    def shape(self) -> tuple[int, int]: ...
    @property
    def nbytes(self) -> int: ...

class ColumnBlock:
    def __init__(
        self,
        X: ForestX,  # the block's columns, all rows
        y: npt.NDArray[np.float64] | None,
        classes: npt.NDArray[np.int32] | None,
        n_classes: int,
        params: ForestParams,
        first: int,  # the block's first column in the whole X
        mapped_file: tuple[str, int] | None = None,
    ) -> None: ...
    @property
    def shape(self) -> tuple[int, int]: ...
    @property
    def codes_nbytes(self) -> int: ...
    def begin_tree(self, w: npt.NDArray[np.float64], min_weight_leaf: float, slot: int = 0) -> None: ...
    def search(self, ask: dict[str, npt.NDArray[Any]], slot: int = 0) -> dict[str, npt.NDArray[Any]]: ...
    def partition(self, ask: dict[str, npt.NDArray[Any]]) -> dict[str, npt.NDArray[Any]]: ...

def fit_forest_blocks(
    blocks: Any,  # begin_tree(slot, w, min_weight_leaf), search(slot, asks), partition(asks): one entry per block
    bounds: list[int],  # block b holds columns [bounds[b], bounds[b + 1])
    n_rows: int,
    y: npt.NDArray[np.float64] | None,
    classes: npt.NDArray[np.int32] | None,
    n_classes: int,
    sample_weight: npt.NDArray[np.float64] | None,
    feature_weights: npt.NDArray[np.float64] | None,
    params: ForestParams,
) -> Forest: ...

def repack_calls(X: ForestX, mapped_file: tuple[str, int] | None = None, n_threads: int = 1) -> npt.NDArray[np.uint8]: ...

class Forest:
    tree_fields: tuple[str, ...]  # the node fields, in declaration order (src/_core/forest/tree.hpp)
    state_version: int
    @property
    def criterion(self) -> Criterion: ...
    @property
    def n_features(self) -> int: ...
    @property
    def n_classes(self) -> int: ...
    @property
    def n_outputs(self) -> int: ...
    @property
    def n_samples(self) -> int: ...
    @property
    def n_trees(self) -> int: ...
    @property
    def inbag(self) -> npt.NDArray[np.uint32]: ...
    def tree(self, index: int) -> dict[str, npt.NDArray[Any]]: ...
    def predict(self, X: ForestX, n_threads: int = 1) -> npt.NDArray[np.float64]: ...
    def predict_oob(
        self, X: ForestX, n_threads: int = 1, training: bool = False
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]: ...
    def apply(self, X: ForestX, n_threads: int = 1) -> npt.NDArray[np.int64]: ...
    def apply_oob(self, X: ForestX, n_threads: int = 1, training: bool = False) -> npt.NDArray[np.int64]: ...
    def leaf_sums(
        self, X: ForestX, weight: npt.NDArray[np.float64], n_threads: int = 1, oob: bool = False,
        training: bool = False
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
    @property
    def node_counts(self) -> npt.NDArray[np.int64]: ...
    def node_values(self, trees: npt.NDArray[np.int64], nodes: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]: ...
    @property
    def has_oob_leaves(self) -> bool: ...
    def drop_oob_leaves(self) -> None: ...
    def decision_path(
        self, X: ForestX, n_threads: int = 1
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
    @staticmethod
    def from_state(state: dict[str, Any]) -> Forest: ...
    @staticmethod
    def from_sklearn_trees(criterion: str, n_features: int, n_classes: int, n_samples: int,
                           trees: list[dict[str, Any]], inbag: Any, n_threads: int = 1) -> Forest: ...
    def __getstate__(self) -> dict[str, Any]: ...
    def __setstate__(self, state: dict[str, Any] | tuple[Any, ...]) -> None: ...

def set_progress_callback(callback: Callable[[int, int], object] | None) -> None: ...
def stop_worker_threads(stop: bool) -> None: ...
def join_forests(forests: list[Forest]) -> Forest: ...
def sklearn_inbag(seeds: npt.NDArray[np.uint32], n_samples: int, n_draws: int,
                  cdf: npt.NDArray[np.float64] | None = None, n_threads: int = 1) -> npt.NDArray[np.uint32]: ...
def find_split(
    X: ForestX,
    y: npt.NDArray[np.float64] | None,
    classes: npt.NDArray[np.int32] | None,
    n_classes: int,
    sample_weight: npt.NDArray[np.float64] | None,
    rows: npt.NDArray[np.uint32],
    params: ForestParams,
) -> dict[str, Any]: ...
def impurity_decreases(left: npt.ArrayLike, right: npt.ArrayLike, weighted_n_node_samples: npt.ArrayLike,
                       impurity: npt.ArrayLike) -> npt.NDArray[np.float64]: ...
def fit_forest(
    X: ForestX,
    y: npt.NDArray[np.float64] | None,  # (n,) or (n, n_outputs)
    classes: npt.NDArray[np.int32] | None,  # (n,) or (n, n_outputs); each output's below n_classes
    n_classes: int,
    sample_weight: npt.NDArray[np.float64] | None,
    feature_weights: npt.NDArray[np.float64] | None,
    params: ForestParams,
    mapped_file: tuple[str, int] | None = None,
    codes: ColumnCodes | None = None,
) -> Forest: ...

class OobMeasure(enum.Enum):
    mdi_oob = 0
    naive_oob = 1
    ufi = 2

class StumpSplit(enum.Enum):
    best = 0
    median = 1

class StumpSide(enum.Enum):
    sum = 0
    left = 1
    max = 2

def oob_importance(
    forest: Forest | SklearnTrees,
    X: ForestX,
    y: npt.NDArray[np.float64] | npt.NDArray[np.int32],
    sample_weight: npt.NDArray[np.float64] | None,
    measure: OobMeasure,
    n_threads: int = 1,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int]: ...
def mdi(forest: Forest, normalize: bool) -> npt.NDArray[np.float64]: ...
def permutation_importance(
    forest: Forest,
    X: ForestX,
    y: npt.NDArray[np.float64] | npt.NDArray[np.int32],
    sample_weight: npt.NDArray[np.float64] | None,
    n_repeats: int,
    seed: int,
    n_threads: int = 1,
    held_out: bool = False,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int]: ...
def permutation_tree_scores(
    forest: Forest,
    X: ForestX,
    y: npt.NDArray[np.float64] | npt.NDArray[np.int32],
    sample_weight: npt.NDArray[np.float64] | None,
    n_repeats: int,
    seed: int,
    first_tree: int,
    n_trees: int,
    n_threads: int = 1,
    held_out: bool = False,
    stream_offset: int = 0,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.float64], npt.NDArray[np.uint8]]: ...
def reduce_tree_scores(
    indptr: npt.NDArray[np.int64],
    features: npt.NDArray[np.int32],
    scores: npt.NDArray[np.float64],
    used: npt.NDArray[np.uint8],
    n_features: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int]: ...
def contributions(
    forest: Forest, X: ForestX, n_threads: int = 1
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def shap_values(
    forest: Forest, X: ForestX, n_threads: int = 1, banzhaf: bool = False, algorithm: str = "auto"
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def shap_kept_table_bytes(forest: Forest) -> int: ...
def shap_interaction_values(forest: Forest, X: ForestX, n_threads: int = 1) -> npt.NDArray[np.float64]: ...
def shap_interaction_mean_abs(
    forest: Forest, X: ForestX, n_threads: int = 1
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.float64]]: ...
def shap_interaction_top_k(
    forest: Forest, X: ForestX, k: int, n_threads: int = 1
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]: ...
def shap_values_interventional(
    forest: Forest, X: ForestX, background: ForestX, n_threads: int = 1, banzhaf: bool = False, algorithm: str = "auto"
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def shap_interaction_values_interventional(
    forest: Forest, X: ForestX, background: ForestX, n_threads: int = 1, algorithm: str = "auto"
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def dstump(
    X: ForestX,
    y: npt.NDArray[np.float64],
    sample_weight: npt.NDArray[np.float64] | None,
    split: StumpSplit,
    side: StumpSide,
    n_threads: int = 1,
    mapped_file: tuple[str, int] | None = None,
) -> dict[str, npt.NDArray[Any]]: ...

class FirstOccurrence(enum.Enum):
    after_filter = 0
    literal = 1
    every = 2

class LeafWeight(enum.Enum):
    depth = 0
    samplesize = 1

class DecreaseScale(enum.Enum):
    weighted = 0
    within_node = 1

class NodeCounts(enum.Enum):
    weighted = 0
    distinct = 1

class SklearnTrees:
    """A scikit-learn forest's node arrays, held for the core to read in place (signed paths; with
    in-bag counts, the out-of-bag measures)."""
    def __init__(self, n_features: int, n_values: int, trees: list[dict[str, npt.NDArray[Any]]]) -> None: ...
    @staticmethod
    def with_inbag(
        criterion: str,
        n_features: int,
        n_classes: int,
        n_samples: int,
        trees: list[dict[str, npt.NDArray[Any]]],
        inbag: npt.NDArray[np.uint32],
    ) -> SklearnTrees: ...
    @property
    def n_features(self) -> int: ...
    @property
    def n_trees(self) -> int: ...
    @property
    def n_samples(self) -> int: ...
    @property
    def inbag(self) -> npt.NDArray[np.uint32]: ...

def signed_paths(
    forest: Forest | SklearnTrees,
    epsilon: float,
    first_occurrence: FirstOccurrence,
    weight: LeafWeight,
    scale: DecreaseScale,
    counts: NodeCounts,
    n_threads: int = 1,
    groups: npt.NDArray[np.int32] | None = None,
    n_groups: int = 0,
    max_codes: int = ...,
) -> dict[str, npt.NDArray[Any]]: ...

def distinct_signed_paths(
    forest: Forest | SklearnTrees,
    epsilon: float,
    first_occurrence: FirstOccurrence,
    weight: LeafWeight,
    scale: DecreaseScale,
    counts: NodeCounts,
    n_threads: int = 1,
    groups: npt.NDArray[np.int32] | None = None,
    n_groups: int = 0,
    max_codes: int = ...,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.float64]]: ...

def match_sets(
    indptr: npt.NDArray[np.int64],
    codes: npt.NDArray[np.int32],
    query_indptr: npt.NDArray[np.int64],
    query_codes: npt.NDArray[np.int32],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...

def match_sums(
    indptr: npt.NDArray[np.int64],
    codes: npt.NDArray[np.int32],
    query_indptr: npt.NDArray[np.int64],
    query_codes: npt.NDArray[np.int32],
    values: npt.NDArray[np.float64],
    n_threads: int = 1,
) -> npt.NDArray[np.float64]: ...

def random_intersection_trees(
    indptr: npt.NDArray[np.int64],
    codes: npt.NDArray[np.int32],
    weights: npt.NDArray[np.float64],
    depth: int,
    n_children: float,
    min_size: int,
    n_trees: int,
    seed: int,
    n_threads: int,
    root_sets: int,
    all_nodes: bool,
    max_nodes: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int64]]: ...

class TooManyIntersections(MemoryError): ...
class TooManyItemsets(MemoryError): ...
class TooManyPathCodes(MemoryError): ...

def transactions_csr(transactions: Iterable[Iterable[int]]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def csr_dict(
    indptr: npt.NDArray[np.int64], items: npt.NDArray[np.int64], values: npt.NDArray[np.float64]
) -> dict[tuple[int, ...], float]: ...

def frequent_itemsets(
    indptr: npt.NDArray[np.int64],
    items: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64] | None,
    min_support: float,
    max_size: int,
    max_itemsets: int,
    n_threads: int = 1,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...

# Skinny Trees: the soft-tree recursion between the GEMMs (float32 or float64, C-contiguous).
def softtree_forward(
    Z: npt.NDArray[np.floating],
    bias: npt.NDArray[np.floating] | None,
    depth: int,
    activation: str = "sigmoid",
    gamma_s: float = 1.0,
) -> tuple[npt.NDArray[np.floating], npt.NDArray[np.floating], npt.NDArray[np.floating]]: ...
def softtree_backward(
    dP: npt.NDArray[np.floating],
    S: npt.NDArray[np.floating],
    dS: npt.NDArray[np.floating],
    depth: int,
) -> tuple[npt.NDArray[np.floating], npt.NDArray[np.floating]]: ...
# dictionary learning (bind_dictionary.cpp)

class LineSearch(enum.Enum):
    armijo = 0
    wolfe = 1

def dlbcd_fit(
    X: npt.NDArray[np.float64],
    D0s: npt.NDArray[np.float64],
    Q0s: npt.NDArray[np.float64],
    tau: float,
    warm: bool,
    max_iter: int,
    tol: float,
    delta: float,
    start_noise: float,
    seed: int,
    line_search: LineSearch,
    memory: int,
    inner_max_iter: int,
    inner_tol: float,
    n_threads: int = 1,
    first_restart: int = 0,
) -> list[
    tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int, int, npt.NDArray[np.float64] | None,
          npt.NDArray[np.float64]]
]: ...

def sharpness_statistic(
    beta: npt.NDArray[np.float64],
    M: npt.NDArray[np.float64],
    W0: npt.NDArray[np.float64],
    delta: float,
    line_search: LineSearch,
    memory: int,
    inner_max_iter: int,
    inner_tol: float,
    n_threads: int = 1,
) -> tuple[float, npt.NDArray[np.float64]]: ...

def solve_row_subproblem(
    A: npt.NDArray[np.float64],
    j: int,
    cos: npt.NDArray[np.float64],
    weight: npt.NDArray[np.float64],
    delta: float,
    line_search: LineSearch,
    memory: int,
    inner_max_iter: int,
    inner_tol: float,
) -> tuple[npt.NDArray[np.float64], float, int]: ...
