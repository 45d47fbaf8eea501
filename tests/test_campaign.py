"""Issue 52's campaign: hostile inputs and situations the other tables do not hold, one row per case,
by the issue's classes of failure (1 crash, 2 corrupted state accepted, 4 stale state, 6 hangs on
small inputs, 7 silent casts, 8 outputs that cannot fit, 9 valid input refused, 10 the command line's
tracebacks, 11 costs that grow badly, 12 documented equalities; classes 3 and 5 are
tests/test_threads.py and tests/test_interrupts.py). Every case either gives the result the
mathematics or the clean input gives, or raises a named error; none may crash, hang or return
numbers without a word. The input classes of tests/test_bad_inputs.py's table meet its entry points
here too. Data are tiny: CI runs this file under the sanitizers."""

from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor as SkForestRegressor

from pyinterp import (DLBCD, IterativeRandomForest, LocalLSSFind, LSSFind, PartitionedRatio, RandomForestClassifier,
                      RandomForestRegressor, SkinnyTreesClassifier, SkinnyTreesRegressor, _core, frequent_itemsets)
from pyinterp import importance as imp
from pyinterp.interactions import (decode, dwp, encode, interaction_rule, minimal, pair_scan, prevalent_sets,
                                   random_intersection_trees, signed_paths)
from pyinterp.metrics import singleton_equivalent, strict_score

from test_bad_inputs import (DL_KW, ENTRIES, IRF_KW, N, RATIO_KW, SKINNY_KW, W0, X0, Y_CLF, Y_REG, _clean,
                             assert_same)


def raises(exc, match):
    return ("raises", exc, match)


def equals(expected):
    """The result equals expected() (arrays by value, other objects by ==)."""
    return ("equals", expected)


def holds(predicate):
    return ("holds", predicate)


def check(call, outcome):
    kind = outcome[0]
    if kind == "raises":
        with pytest.raises(outcome[1], match=outcome[2]):
            call()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = call()
    if kind == "equals":
        expected = outcome[1]()
        if isinstance(expected, (bool, int, float, str, bytes)):
            assert result == expected
        else:
            assert_same(_values(result), _values(expected))
    else:
        assert outcome[1](result), result


def _values(result):
    """A result's numbers as test_bad_inputs compares them, a mapping by its values in key order."""
    if isinstance(result, dict):
        return [_values(result[k]) for k in sorted(result) if not callable(result[k])]
    if isinstance(result, (tuple, list)):
        return [_values(r) for r in result]
    return result


rng = np.random.RandomState(0)
X = rng.rand(60, 4)
Y = X[:, 0] + X[:, 1] * (X[:, 2] > 0.5)
L = (Y > np.median(Y)).astype(np.int64)
FITTED = {  # one fitted object of every estimator kind, and what it computes from X
    "RandomForestRegressor": (RandomForestRegressor(5, random_state=0).fit(X, Y), "predict"),
    "RandomForestClassifier": (RandomForestClassifier(5, random_state=0).fit(X, L), "predict_proba"),
    "LSSFind": (LSSFind(n_estimators=3, random_state=0).fit(X, Y), "predict"),
    "LocalLSSFind": (LocalLSSFind(n_estimators=3, random_state=0).fit(X, Y), "predict"),
    "IterativeRandomForest": (IterativeRandomForest(**IRF_KW).fit(X, L), "predict_proba"),
    "SkinnyTreesRegressor": (SkinnyTreesRegressor(**SKINNY_KW).fit(X, Y), "predict"),
    "SkinnyTreesClassifier": (SkinnyTreesClassifier(**SKINNY_KW).fit(X, L), "predict_proba"),
    "DLBCD": (DLBCD(**DL_KW).fit(X), "transform"),
    "PartitionedRatio": (PartitionedRatio(2, **RATIO_KW).fit(X), "score"),
}
RF, RC = FITTED["RandomForestRegressor"][0], FITTED["RandomForestClassifier"][0]
PATHS = signed_paths(RF)
RULE = interaction_rule(RF, PATHS, [(0, 1), (1, 1)])
TABLE = prevalent_sets(RF, 0.05)
STUMPS = imp.dstump(X, Y)
SCAN = pair_scan(X, Y, top=5)


def computes(name):
    model, method = FITTED[name]
    return lambda m: getattr(m, method)(X)


CASES = {}


def case(klass, name, call, outcome):
    assert name not in CASES, name
    CASES[f"{klass}-{name}"] = (call, outcome)


# -- 1. crash: every public object round-trips at every pickle protocol and through copy --------------

def _roundtrip(obj, protocol):
    return pickle.loads(pickle.dumps(obj, protocol=protocol))


PICKLED = {  # object, what must survive the round trip
    **{name: (model, computes(name)) for name, (model, _) in FITTED.items()},
    "unfitted RandomForestRegressor": (RandomForestRegressor(7, max_depth=3), lambda m: m.get_params()),
    "InteractionTable": (TABLE, lambda t: (t.features, [t[c] for c in t.columns])),
    "SignedPaths": (PATHS, lambda p: (p.codes, p.indptr)),
    "InteractionRule": (RULE, lambda r: r.predict(X)),
    "dstump result": (STUMPS, lambda s: (s.scores, s.threshold, s.ranking, s.select(2))),
    "pair scan": (SCAN, lambda s: (s.features, s.cuts, s.interactions["pvalue"], s.n_pairs)),
    "exported scikit-learn forest": (RF.to_sklearn(), lambda m: m.predict(X)),
}


def _same_after(obj, what, transform):
    got, expected = what(transform(obj)), what(obj)
    if isinstance(expected, dict):
        return got == expected
    assert_same(got, expected)
    return True


for name, (obj, what) in PICKLED.items():
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        case(1, f"pickle {name} protocol {protocol}",
             lambda obj=obj, what=what, p=protocol: _same_after(obj, what, lambda o: _roundtrip(o, p)), holds(bool))
    case(1, f"deepcopy {name}", lambda obj=obj, what=what: _same_after(obj, what, copy.deepcopy), holds(bool))
    case(1, f"copy {name}", lambda obj=obj, what=what: _same_after(obj, what, copy.copy), holds(bool))

CORE_OBJECTS = {"Forest": RF._forest, "Criterion": _core.Criterion.gini, "ForestParams": _core.ForestParams(),
                **{name: next(iter(getattr(_core, name).__members__.values()))
                   for name in ("OobMeasure", "StumpSplit", "StumpSide", "FirstOccurrence", "LeafWeight",
                                "DecreaseScale", "NodeCounts", "LineSearch")}}


def _rebuilt(obj):
    make, args, state = obj.__reduce__()
    rebuilt = make(*args)
    rebuilt.__setstate__(state)
    return rebuilt


for name, obj in CORE_OBJECTS.items():
    # object.__reduce__ is protocol 0's reduction, which aborted the interpreter for a pybind11 class
    case(1, f"core {name} rebuilt from __reduce__", lambda obj=obj: pickle.dumps(_rebuilt(obj), 2),
         equals(lambda obj=obj: pickle.dumps(obj, 2)))
for name in ("ColumnCodes", "SklearnTrees"):  # no pickled state: refused, at any protocol and by __reduce__
    cls = getattr(_core, name)
    case(1, f"core {name}.__reduce__ without an instance's state", lambda cls=cls: cls.__reduce__(cls.__new__(cls)),
         raises(TypeError, f"cannot pickle '{name}' object"))


# -- 2. corrupted state: a loaded forest proves it is one, and its attributes agree with its trees ---

def _tampered(model, **attributes):
    """A pickle of model whose attributes were changed, loaded."""
    other = copy.copy(model)
    vars(other).update(attributes)
    return pickle.loads(pickle.dumps(other))


TAMPERED = {
    "classes_ longer than the trees'": (RC, {"classes_": np.arange(3)}, "classes_ and n_classes_ do not hold"),
    "n_classes_ beyond the trees'": (RC, {"n_classes_": 3}, "classes_ and n_classes_ do not hold"),
    "classes_ 2-d": (RC, {"classes_": np.array([[0, 1]])}, "classes_ and n_classes_ do not hold"),
    "classes_ a list of labels": (RC, {"classes_": [0, 1]}, "classes_ and n_classes_ do not hold"),
    "classifier trees under a regressor": (RF, {"_forest": RC._forest}, "its trees are classification trees"),
    "regression trees under a classifier": (RC, {"_forest": RF._forest}, "its trees are regression trees"),
    "n_features_in_ beyond the trees'": (RF, {"n_features_in_": 5}, r"n_features_in_ = 5, but its trees read 4"),
    "n_features_in_ as text": (RF, {"n_features_in_": "4"}, r"n_features_in_ = '4'"),
    "trees as text": (RF, {"_forest": "trees"}, "_forest is str, not a core forest"),
    "trees as None": (RF, {"_forest": None}, "_forest is NoneType"),
    "seed as text": (RF, {"_seed": "0"}, "_seed = '0'"),
    "negative seed": (RF, {"_seed": -1}, "_seed = -1"),
    "feature names too few": (RF, {"feature_names_in_": np.array(["a"], dtype=object)}, "feature_names_in_ does not"),
    "categorical mask too short": (RF, {"is_categorical_": np.array([True])}, "is_categorical_ is not a mask"),
    "categorical mask of numbers": (RF, {"is_categorical_": np.zeros(4)}, "is_categorical_ is not a mask"),
    "unknown criterion": (RF, {"criterion": "gini"}, "criterion 'gini' is not one of"),
}
for name, (model, attributes, message) in TAMPERED.items():
    case(2, f"pickled forest with {name}", lambda m=model, a=attributes: _tampered(m, **a),
         raises(ValueError, f"corrupt {type(model).__name__} state: {message}"))
# a finder's forest is checked as it loads inside the finder
case(2, "pickled LSSFind whose forest has a classifier's classes",
     lambda: _tampered(FITTED["LSSFind"][0], forest_=_tampered_forest_in_place()), raises(ValueError, "corrupt"))


def _tampered_forest_in_place():
    forest = copy.copy(FITTED["LSSFind"][0].forest_)
    vars(forest)["n_features_in_"] = 9
    return forest


def _core_state(mutate, forest=RF):
    state = copy.deepcopy(forest._forest.__getstate__())
    mutate(state)
    return _core.Forest.from_state(state)


def _tree(state, k=0):
    return state["trees"][k]


def _set(field, index, value, tree=0):
    def mutate(state):
        array = _tree(state, tree)[field]
        array[index] = value
    return mutate


def _internal(forest=RF):
    left = forest._forest.__getstate__()["trees"][0]["left"]
    return np.flatnonzero(left >= 0)


INTERNAL = _internal()
CORE_TAMPERED = {
    "both children one node": (_set("right", INTERNAL[0], int(_tree(RF._forest.__getstate__())["left"][INTERNAL[0]])),
                               "children"),
    "a child pointing at the root": (_set("left", INTERNAL[-1], 0), "child|parent"),
    "a child beyond the tree": (_set("left", INTERNAL[0], 10**6), "child|node"),
    "a feature beyond p": (_set("feature", INTERNAL[0], 4), "feature"),
    "a negative feature": (_set("feature", INTERNAL[0], -2), "feature"),
    "a NaN threshold": (_set("threshold", INTERNAL[0], np.nan), "threshold"),
    "a negative node size": (_set("n_node_samples", 0, -5), "n_node_samples|size"),
    "a NaN node weight": (_set("weighted_n_node_samples", 0, np.nan), "weight"),
    "a negative node weight": (_set("weighted_n_node_samples", 0, -1.0), "weight"),
    "features as text": (lambda s: _tree(s).__setitem__("feature", _tree(s)["feature"].astype(str)), "feature"),
    "thresholds as text": (lambda s: _tree(s).__setitem__("threshold", _tree(s)["threshold"].astype(str)),
                           "threshold"),
    "a field missing": (lambda s: _tree(s).pop("impurity"), "impurity"),
    "fields of unequal length": (lambda s: _tree(s).__setitem__("depth", _tree(s)["depth"][:-1]), "depth|length"),
    "values of another shape": (lambda s: _tree(s).__setitem__("value", np.zeros((len(_tree(s)["value"]), 3))),
                                "value"),
    "negative in-bag counts": (lambda s: s.__setitem__("inbag", s["inbag"].astype(np.int64) - 5), "inbag"),
    "in-bag counts of another length": (lambda s: s.__setitem__("inbag", s["inbag"][:-1]), "inbag"),
    "no trees": (lambda s: s.__setitem__("trees", []), "tree"),
    "a tree that is not a mapping": (lambda s: s["trees"].__setitem__(0, "tree"), "tree"),
    "no features": (lambda s: s.__setitem__("n_features", 0), "n_features|corrupt"),
    "negative classes": (lambda s: s.__setitem__("n_classes", -1), "n_classes|corrupt"),
    "an unknown version": (lambda s: s.__setitem__("version", 99), "version"),
    "an unknown criterion": (lambda s: s.__setitem__("criterion", "entropy_squared"), "criterion"),
    "classes for regression trees": (lambda s: s.__setitem__("n_classes", 2), "classes|criterion"),
}
for name, (mutate, message) in CORE_TAMPERED.items():
    case(2, f"core forest state with {name}", lambda m=mutate: _core_state(m),
         raises((ValueError, TypeError), message))


# scikit-learn forests are read in place by the out-of-bag measures, DWP and SHAP: malformed trees
# are refused by name, whichever reads them
def _sklearn_tampered(mutate):
    forest = SkForestRegressor(3, max_depth=3, random_state=0).fit(X, Y)
    tree = forest.estimators_[0].tree_
    state = tree.__getstate__()
    nodes = state["nodes"].copy()
    mutate(nodes)
    state["nodes"] = nodes
    tree.__setstate__(state)
    return forest


def _sk_set(field, value, node=None):
    def mutate(nodes):
        internal = np.flatnonzero(nodes["left_child"] >= 0)
        nodes[field][internal[0] if node is None else node] = value
    return mutate


SK_TAMPERED = {
    "both children one node": lambda nodes: nodes["right_child"].__setitem__(0, nodes["left_child"][0]),
    "a child pointing at the root": lambda nodes: nodes["left_child"].__setitem__(
        np.flatnonzero(nodes["left_child"] >= 0)[-1], 0),
    "a child beyond the tree": _sk_set("left_child", 10**6),
    "a feature beyond p": _sk_set("feature", 4),
    "a NaN threshold": _sk_set("threshold", np.nan),
}
SK_READS = {
    "mdi_oob": lambda f: imp.mdi_oob(f, X, Y),
    "dwp": lambda f: dwp(f, [[(0, 1)]]),
    "signed_paths": lambda f: signed_paths(f),
    "shap_values": lambda f: imp.shap_values(f, X[:2]),
    "ufi": lambda f: imp.ufi(f, X, Y),
}
for name, mutate in SK_TAMPERED.items():
    for read, call in SK_READS.items():
        case(2, f"scikit-learn tree with {name}: {read}", lambda m=mutate, c=call: c(_sklearn_tampered(m)),
             raises(ValueError, r"tree|node|feature|threshold"))


# -- 4. stale state: what a later call changes is only what it owns ----------------------------------

def _refit_export():
    exported = RF.to_sklearn()
    exported.set_params(random_state=7).fit(X, Y)
    return exported


def _oob_of_refitted_export():
    return imp.mdi_oob(_refit_export(), X, Y)


def _bootstrap_keeps_cut():
    irf = clone(FITTED["IterativeRandomForest"][0]).set_params(task="regression").fit(X, Y)
    cut = copy.deepcopy(irf.cut_)
    irf.bootstrap(X, Y[::-1].copy(), 0)
    return irf.cut_ == cut


def _refit_on_other_classes():
    forest = clone(RC).fit(X, L)
    return forest.fit(X, np.where(L > 0, "b", "c")).classes_.tolist()


def _refit_without_names():
    pd = pytest.importorskip("pandas")
    forest = clone(RF).fit(pd.DataFrame(X, columns=list("abcd")), Y)
    return hasattr(forest.fit(X, Y), "feature_names_in_")


def _predict_after_the_source_is_refitted():
    source = copy.deepcopy(RF)
    loaded = pickle.loads(pickle.dumps(source))
    source.fit(X[:, :2], Y)
    return loaded.predict(X)


def _refit_fewer_features_then_predict():
    forest = clone(RF).fit(X, Y)
    forest.fit(X[:, :3], Y)
    return forest.predict(X)


case(4, "a refitted export's out-of-bag rows are its own draws", _oob_of_refitted_export,
     equals(lambda: imp.mdi_oob(SkForestRegressor(**_refit_export().get_params()).fit(X, Y), X, Y)))
case(4, "iRF's bootstrap with another y keeps the fitted cut", _bootstrap_keeps_cut, holds(bool))
case(4, "a classifier refitted on other labels has those classes", _refit_on_other_classes,
     holds(lambda r: r == ["b", "c"]))
case(4, "a forest refitted without names forgets the names", _refit_without_names, holds(lambda r: r is False))
case(4, "a forest refitted on fewer features reads that many", _refit_fewer_features_then_predict,
     raises(ValueError, "X has 4 features, but RandomForestRegressor is expecting 3"))
case(4, "a pickled forest predicts after its source object is refitted", _predict_after_the_source_is_refitted,
     equals(lambda: RF.predict(X)))
case(4, "an LSSFind refitted on other data reports that data's forest",
     lambda: clone(FITTED["LSSFind"][0]).fit(X, Y).fit(X[:, :3], Y).forest_.n_features_in_, equals(lambda: 3))
case(4, "set_params after a fit leaves the fitted trees",
     lambda: copy.deepcopy(RF).set_params(n_estimators=50, max_depth=1).predict(X), equals(lambda: RF.predict(X)))


# -- 6 and 11. small inputs that hung or cost too much are fast or refused by their cost -----------------

# the settings (the defaults): 145 s and 110 s before, under a second now
case(6, "frequent itemsets of 100,000 one-item transactions",
     lambda: len(frequent_itemsets([[i] for i in range(100_000)])), equals(lambda: 100_000))
case(6, "RIT on one set of 10^6 items", lambda: random_intersection_trees([list(range(10**6))]),
     holds(lambda r: list(r.values()) == [500] and list(r)[0] == tuple(range(10**6))))
case(6, "dstump on a zero-stride column",
     lambda: imp.dstump(np.lib.stride_tricks.as_strided(np.ones(1), (N, 1), (0, 0)), Y_REG).scores,
     holds(lambda s: np.isneginf(s).all()))
case(6, "minimal of 3,000 sets", lambda: len(minimal([[(i, 1), (i + 1, -1)] for i in range(3000)])),
     equals(lambda: 3000))
case(6, "singleton_equivalent of 3,000 interactions",
     lambda: len(singleton_equivalent([[(i, 1)] for i in range(3000)])), equals(lambda: 6000))
case(6, "decode of 10^6 codes", lambda: len(decode(np.arange(2, 2 * 10**6 + 2, 2, dtype=np.uint32))),
     equals(lambda: 10**6))
case(6, "encode of a set of 10^5 signed features", lambda: len(encode([(i, 1) for i in range(10**5)])),
     equals(lambda: 10**5))
case(6, "strict_score of 2,000 found sets against 2,000 true ones",
     lambda: strict_score([[(i, 1)] for i in range(2000)], [[(i, 1)] for i in range(1000, 3000)]),
     holds(lambda r: np.isfinite(r)))
case(6, "frequent itemsets of one transaction of 64 items without a budget",
     lambda: frequent_itemsets([list(range(64))], min_support=0.5), raises(Exception, "max_itemsets|itemsets"))
case(11, "a classifier of 2,000 classes on 4,000 rows",
     lambda: RandomForestClassifier(2, random_state=0).fit(np.tile(X, (67, 1))[:4000], np.arange(4000) % 2000)
     .n_classes_, equals(lambda: 2000))
case(11, "a classifier of 20,000 classes is refused by its size",
     lambda: RandomForestClassifier(10, random_state=0).fit(np.random.RandomState(0).rand(40_000, 4),
                                                            np.arange(40_000) % 20_000),
     raises(MemoryError, "GiB"))

# -- 7. silent casts: dates, masked entries and byte strings are not numbers without a word ----------

X_CASTS = {
    "X of datetime64": (lambda X_, y, w: ((X_ * 16).astype(np.int64).astype("datetime64[D]"), y, w),
                        raises(TypeError, r"X holds datetime64\[D\] values")),
    "X of timedelta64": (lambda X_, y, w: ((X_ * 16).astype(np.int64).astype("timedelta64[s]"), y, w),
                         raises(TypeError, r"X holds timedelta64\[s\] values")),
    "X masked": (lambda X_, y, w: (np.ma.masked_greater(X_, 0.9), y, w), raises(TypeError, "X is a masked array")),
}
X_READ_AS_GIVEN = {  # numbers written as text are read as the numbers they write, as scikit-learn reads them
    "X of byte strings": lambda X_: X_.astype("S8"),
    "X of unicode strings": lambda X_: X_.astype("U8"),
}


def _on_clean_data(entry, make):
    """The call of entry on the clean (X, y, w) as make changes them."""
    def call():
        X_, y, w = make(X0, Y_REG if entry.task == "reg" else Y_CLF, W0)
        return entry.call(X_, y, w if entry.weights else None)
    return call


for entry_name, entry in ENTRIES.items():
    for case_name, (make, outcome) in X_CASTS.items():
        case(7, f"{entry_name}: {case_name}", _on_clean_data(entry, make), outcome)
    for case_name, text in X_READ_AS_GIVEN.items():  # X0's values k/16 are written exactly
        case(7, f"{entry_name}: {case_name}", _on_clean_data(entry, lambda X_, y, w, text=text: (text(X_), y, w)),
             equals(lambda entry=entry: _clean(entry)))
REGRESSION_FITS = [name for name, e in ENTRIES.items() if e.fits and e.task == "reg" and name not in
                   ("DLBCD.fit", "PartitionedRatio.fit", "sharpness_test")]
for entry_name in REGRESSION_FITS:
    entry = ENTRIES[entry_name]
    case(7, f"{entry_name}: y of datetime64",
         lambda e=entry: e.call(X0, (Y_REG * 16).astype(np.int64).astype("datetime64[D]"), None),
         raises((TypeError, ValueError), "y"))
    case(7, f"{entry_name}: y masked", lambda e=entry: e.call(X0, np.ma.masked_greater(Y_REG, 2.0), None),
         raises(TypeError, "y is a masked array"))


# -- 8. outputs that cannot fit are refused before any work, with their size and the way out ---------

WIDE = np.random.RandomState(1).rand(20, 60_000)  # 3 x 60,000^2 doubles: 86 GB
case(8, "SHAP interaction values of 60,000 features",
     lambda: imp.shap_interaction_values(RandomForestRegressor(1, random_state=0).fit(WIDE, WIDE[:, 0]), WIDE[:3]),
     raises(MemoryError, r"GiB.*shap_top_interactions|shap_top_interactions.*GiB"))
case(8, "the partitioned ratio of 10^6 features",
     lambda: PartitionedRatio(500_000).fit(np.random.RandomState(0).rand(3, 10**6)), raises(MemoryError, "GiB"))


# -- 9. valid input in every form a user holds is read as the same numbers ------------------------------

VALID_FORMS = {
    "X as nested lists": lambda X_, y, w: (X_.tolist(), y, w),
    "X read-only in column order": lambda X_, y, w: (_readonly(np.asfortranarray(X_)), y, w),
    "y as a list": lambda X_, y, w: (X_, y.tolist(), w),
    "sample_weight as a list": lambda X_, y, w: (X_, y, w.tolist()),
    "y as a read-only view": lambda X_, y, w: (X_, _readonly(y), w),
}


def _readonly(a):
    a = a.copy(order="K")
    a.flags.writeable = False
    return a


for entry_name, entry in ENTRIES.items():
    if not entry.fits:
        continue
    for form, make in VALID_FORMS.items():
        if form.startswith("sample_weight") and not entry.weights:
            continue
        case(9, f"{entry_name}: {form}", _on_clean_data(entry, make), equals(lambda entry=entry: _clean(entry)))


# -- 12. documented equalities hold --------------------------------------------------------------------

for seed in range(3):
    X32 = np.random.RandomState(seed).rand(300, 5).astype(np.float32).astype(np.float64)
    y32 = X32[:, 0] * 3 + np.sin(7 * X32[:, 1])
    for Forest, target in ((RandomForestRegressor, y32), (RandomForestClassifier, (y32 > np.median(y32)) * 1)):
        forest = Forest(20, random_state=seed).fit(X32, target)
        method = "predict" if Forest is RandomForestRegressor else "predict_proba"
        case(12, f"{Forest.__name__} seed {seed}: to_sklearn().{method} equals {method}",
             lambda f=forest, m=method, X_=X32: getattr(f.to_sklearn(), m)(X_),
             equals(lambda f=forest, m=method, X_=X32: getattr(f, m)(X_)))


# -- the table --------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", CASES)
def test_case(name):
    check(*CASES[name])


# -- 10. the command line ends every failure in one line and its exit status ------------------------------

def _write_cli_inputs(tmp_path):
    import gzip
    table = "a,b,y\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(12))
    (tmp_path / "t.csv").write_text(table)
    (tmp_path / "cut.csv.gz").write_bytes(gzip.compress(table.encode())[:40])
    np.savez(tmp_path / "cube.npz", X=np.zeros((4, 3, 2)), y=np.zeros(4))
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("a,b,y\n")
    (tmp_path / "twice.csv").write_text("a,a,y\n1,2,3\n4,5,6\n")
    (tmp_path / "dir.csv").mkdir()


CLI_CASES = {
    "a compressed file cut short": (["importance", "{dir}/cut.csv.gz", "--target", "y"], 1, "cut.csv.gz"),
    "an npz whose X has 3 dimensions": (["importance", "{dir}/cube.npz"], 1, "cube.npz"),
    "a binary file named .csv": (["importance", "{dir}/binary.csv", "--target", "y"], 1, "binary.csv"),
    "an empty file": (["importance", "{dir}/empty.csv", "--target", "y"], 1, "empty.csv"),
    "a header and no rows": (["importance", "{dir}/header.csv", "--target", "y"], 1, "header.csv|rows"),
    "a column name twice": (["importance", "{dir}/twice.csv", "--target", "y"], 1, "'a'"),
    "a directory named .csv": (["importance", "{dir}/dir.csv", "--target", "y"], 1, "dir.csv"),
}


@pytest.mark.parametrize("name", CLI_CASES)
def test_command_line(name, tmp_path, capsys):
    pytest.importorskip("pandas")
    from pyinterp.cli import main
    _write_cli_inputs(tmp_path)
    argv, status, message = CLI_CASES[name]
    try:
        code = main([a.format(dir=tmp_path) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == status, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert re.search(message, err), err
