"""One view of a fitted forest for the core, whichever library fitted it: pyinterp forests hand over
their core Forest; scikit-learn forests are imported into one (Forest.from_sklearn_trees), with their
in-bag counts regenerated the way scikit-learn's own ``oob_score_`` does when the training rows are
given (or, for pyinterp's exports, the counts they carry)."""

from __future__ import annotations

import inspect
import numbers
import operator
import sys
import weakref
from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .. import _core
from .._validation import FOREST_X, core_X, resolve_n_threads, validate_data
from ..io.packed import is_packed
from .estimators import _BaseForest
from .tree import derived_fields


@dataclass
class _ForestView:
    """What the core needs from either library's forest."""

    core: object  # _core.Forest
    estimator: object
    classes: np.ndarray | None
    float32: bool  # scikit-learn compares float32(x) <= threshold
    # A feature-parallel X's split columns (forest/split_columns.py) when core is the forest
    # renumbered to them: per-feature results are then widened to X's columns.
    columns: object = None


def _sklearn_criterion(forest):
    """The core criterion whose impurity the out-of-bag measures use for a scikit-learn forest: its
    own for classification; squared error (variance) for every regression criterion."""
    if not hasattr(forest, "classes_"):
        return "squared_error"
    return "entropy" if forest.criterion in ("entropy", "log_loss") else "gini"


def _is_sklearn_forest(forest) -> bool:
    # A fitted scikit-learn forest means sklearn.ensemble is imported already; importing it here
    # otherwise would cost every pyinterp process ~18 MB of modules it does not use.
    ensemble = sys.modules.get("sklearn.ensemble")
    return ensemble is not None and isinstance(forest, (ensemble.RandomForestRegressor, ensemble.RandomForestClassifier))


def _refuse_outputs(n_outputs):
    if n_outputs != 1:
        raise ValueError(f"forest has {n_outputs} outputs; this function reads single-output forests (it scores, "
                         "explains or prints one response per row or leaf): fit one forest per output, or use "
                         "what reads several (mdi / feature_importances_, signed paths, DWP, path prevalence "
                         "and their miners), whose node impurity is the mean of the outputs'")


def forest_view(forest, n_samples=None, *, multi_output=False, in_place=False) -> _ForestView:
    """n_samples: training rows, needed to recover scikit-learn's out-of-bag sets. multi_output:
    whether the caller reads forests of several outputs (else they are refused, naming why).
    in_place: the caller's core readings also take a scikit-learn forest's node arrays where they
    lie (``_core.SklearnTrees``: signed paths, the out-of-bag measures), so none is copied unless
    a copy is kept already. Making the copy (~0.05 ms and 160 KB a tree of 2,500 nodes) costs
    about what mining its paths does; walking in place costs a third more than walking the copy,
    so only a forest read three times or more would gain from one, and it would hold the memory
    while the forest lives."""
    if isinstance(forest, _BaseForest):
        check_is_fitted(forest, "_forest")
        if not multi_output:
            _refuse_outputs(forest._forest.n_outputs)
        classes = getattr(forest, "classes_", None)
        return _ForestView(forest._forest, forest, classes, False)
    if _is_sklearn_forest(forest):
        check_is_fitted(forest)
        if forest.n_outputs_ != 1:
            raise ValueError("multi-output scikit-learn forests are not supported")
        classes = getattr(forest, "classes_", None)
        if n_samples is not None:
            core = _sklearn_core(forest, n_samples, in_place)
        elif not in_place:
            core = _sklearn_structure(forest)
        elif (core := _kept_structure(forest)) is None:
            core = _sklearn_core(forest, None, in_place=True)
        return _ForestView(core, forest, classes, True)
    raise TypeError(
        "forest must be a fitted pyinterp RandomForestRegressor/RandomForestClassifier or scikit-learn "
        f"RandomForestRegressor/RandomForestClassifier, got {type(forest).__name__}"
    )


# scikit-learn forest -> (its trees, their core Forest): the structure-only import, kept while the
# forest holds the same tree objects (a refit replaces them). Reading 500 trees costs ~70 ms, more
# than explaining 128 rows of them (all_bioc's SHAP values). Trees edited in place are not noticed.
_SKLEARN_CORES = weakref.WeakKeyDictionary()
_TREE_OF = operator.attrgetter("tree_")


def _kept_structure(forest):
    """The structure-only import kept for forest, or None."""
    cached = _SKLEARN_CORES.get(forest)
    # element by element: identity (trees define no __eq__)
    if cached is not None and cached[0] == tuple(map(_TREE_OF, forest.estimators_)):
        return cached[1]
    return None


def _sklearn_structure(forest):
    core = _kept_structure(forest)
    if core is None:
        core = _sklearn_core(forest, None)
        _SKLEARN_CORES[forest] = (tuple(map(_TREE_OF, forest.estimators_)), core)
    return core


def check_rows(view, X):
    """X validated against the forest's training columns, in the dtype its thresholds compare."""
    X = validate_data(view.estimator, X, reset=False, **FOREST_X)
    if view.float32 and not is_packed(X):  # allele counts are exact in float32
        X = X.astype(np.float32, copy=False)
    return core_X(X)


def sklearn_tree_arrays(tree):
    """A fitted scikit-learn tree's node arrays under the core's field names (single output)."""
    t = tree.tree_
    _refuse_categories(t)
    split = t.children_left >= 0
    value = t.value[:, 0, :]  # the mean, or the class fractions (as scikit-learn >= 1.4 stores them)
    arrays = {
        "feature": np.where(split, t.feature, -1).astype(np.int32),
        "threshold": np.where(split, t.threshold, 0.0),
        "missing_go_to_left": (split & (t.missing_go_to_left != 0)).astype(np.uint8),
        "left": t.children_left.astype(np.int32),
        "right": t.children_right.astype(np.int32),
        "n_node_samples": t.n_node_samples.astype(np.int32),
        "weighted_n_node_samples": t.weighted_n_node_samples.astype(np.float64),
        "impurity": t.impurity.astype(np.float64),
        "value": np.ascontiguousarray(value, dtype=np.float64),
        "category_split": np.full(t.node_count, -1, dtype=np.int32),
        "left_categories": np.zeros((0, 4), dtype=np.uint64),
    }
    arrays.update(derived_fields(arrays["left"], arrays["right"], arrays["weighted_n_node_samples"], arrays["impurity"]))
    return arrays


def _sklearn_inbag(forest, n_samples, n_threads=1):
    """(n_trees, n_samples) in-bag counts of the rows each tree was fitted on: those a pyinterp
    export carries (``_pyinterp_inbag``), else scikit-learn's draws regenerated as its own
    ``oob_score_`` does (private helpers, whose signature gained sample_weight in 1.7); what does not
    depend on the tree is worked out once. Trees seeded by integers (as scikit-learn seeds them)
    are drawn in the core (_core.sklearn_inbag, numpy's legacy RandomState bit for bit: ~14 us a
    tree of 2,000 draws where scikit-learn's helper costs ~150 us); any other random_state by
    scikit-learn's helper. Without bootstrap scikit-learn fits every row."""
    from sklearn.ensemble import _forest as skf

    trained_on = getattr(forest, "_n_samples", n_samples)
    if trained_on != n_samples:
        raise ValueError(
            f"X has {n_samples} rows but the forest was trained on {trained_on}: "
            "out-of-bag measures need the training rows"
        )
    carried = getattr(forest, "_pyinterp_inbag", None)
    inbag = None if carried is None else carried.of(forest)
    if inbag is not None:
        return inbag
    n_trees = len(forest.estimators_)
    if not forest.bootstrap:
        return np.ones((n_trees, n_samples), dtype=np.uint32)
    weights = getattr(forest, "_sample_weight", None)
    extra = (weights,) if "sample_weight" in inspect.signature(skf._generate_sample_indices).parameters else ()
    n_draws = getattr(forest, "_n_samples_bootstrap", None)
    if n_draws is None:
        n_draws = skf._get_n_samples_bootstrap(n_samples, forest.max_samples, *extra)
    seeds = [est.random_state for est in forest.estimators_]
    if n_samples <= 2**32 and all(isinstance(s, numbers.Integral) and 0 <= s < 2**32 for s in seeds):
        cdf = None
        if extra and weights is not None:  # numpy's choice(n, p=w / sum(w)) draws from this cdf
            cdf = (weights / np.sum(weights)).astype(np.float64, copy=False).cumsum()
            cdf /= cdf[-1]
        return _core.sklearn_inbag(np.array(seeds, dtype=np.uint32), n_samples, int(n_draws), cdf, n_threads)
    inbag = np.empty((n_trees, n_samples), dtype=np.uint32)
    for t, est in enumerate(forest.estimators_):
        inbag[t] = np.bincount(skf._generate_sample_indices(est.random_state, n_samples, n_draws, *extra),
                               minlength=n_samples)
    return inbag


_SKLEARN_NODE_FIELDS = ("children_left", "children_right", "feature", "threshold", "missing_go_to_left",
                        "n_node_samples", "weighted_n_node_samples", "impurity")


def _refuse_categories(t):
    """scikit-learn >= 1.10's trees may split on categories, which the readers here do not read."""
    n_categories = getattr(t, "_n_categories", None)
    if n_categories is not None and np.any(np.asarray(n_categories) > 0):
        raise ValueError("a scikit-learn tree with categorical features: its category splits are not read; fit "
                         "pyinterp's forest with categorical_features instead")


def sklearn_node_arrays(t):
    """The node arrays of a scikit-learn ``tree_`` by their names there, as
    ``_core.Forest.from_sklearn_trees`` reads them (in place; ``value`` is one output's)."""
    _refuse_categories(t)
    return {**{name: getattr(t, name) for name in _SKLEARN_NODE_FIELDS}, "value": t.value[:, 0, :]}


def _sklearn_core(forest, n_samples, in_place=False):
    """The core forest of a scikit-learn forest: one core call reads every tree's node arrays in
    place (per node work in Python cost ~0.3 ms a tree, more than the mining that follows), on the
    forest's own n_jobs threads; or, in_place, the arrays held as they are (with the in-bag counts
    beside them when n_samples is given)."""
    trees = [sklearn_node_arrays(est.tree_) for est in forest.estimators_]
    n_classes = len(forest.classes_) if hasattr(forest, "classes_") else 0
    if in_place and n_samples is None:
        return _core.SklearnTrees(forest.n_features_in_, max(n_classes, 1), trees)
    n_trees, n_threads = len(trees), resolve_n_threads(forest.n_jobs)
    if n_samples is None:  # only the tree structure is needed
        n_samples, inbag = 1, np.zeros(n_trees, dtype=np.uint32)
    else:
        inbag = _sklearn_inbag(forest, n_samples, n_threads)
    args = (_sklearn_criterion(forest), forest.n_features_in_, n_classes, n_samples, trees, inbag.ravel())
    if in_place:
        return _core.SklearnTrees.with_inbag(*args)
    return _core.Forest.from_sklearn_trees(*args, n_threads)
