"""scikit-learn's estimator checks, pandas input and pickling."""

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator

from pyinterp import RandomForestClassifier, RandomForestRegressor

# As for scikit-learn's own forests (sklearn/utils/_test_common/instance_generator.py):
# a bootstrap draws rows, so weight 2 is not the same as a repeated row.
EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": "bootstrap: weights are not repetitions",
    "check_sample_weight_equivalence_on_sparse_data": "bootstrap: weights are not repetitions",
}


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_check_estimator(Forest):
    check_estimator(Forest(n_estimators=10, random_state=0), expected_failed_checks=EXPECTED_FAILURES)


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_sample_weights_equal_repetitions_without_bootstrap(Forest):
    rng = np.random.RandomState(0)
    X = rng.rand(50, 3)
    y = (X[:, 0] > 0.5).astype(int) if Forest is RandomForestClassifier else X[:, 0] + rng.rand(50)
    w = rng.randint(1, 3, 50)
    kw = dict(n_estimators=3, bootstrap=False, max_features=None, random_state=0)
    weighted = Forest(**kw).fit(X, y, sample_weight=w)
    repeated = Forest(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.trees_[0].impurity[0], repeated.trees_[0].impurity[0])
    assert weighted.trees_[0].threshold[0] == repeated.trees_[0].threshold[0]


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_pickle_round_trip_is_exact(Forest, regression_data, classification_data):
    X, y = regression_data if Forest is RandomForestRegressor else classification_data
    forest = Forest(n_estimators=30, oob_score=True, random_state=0).fit(X, y)
    clone = pickle.loads(pickle.dumps(forest))
    for a, b in zip(forest.trees_, clone.trees_):
        for field in a.__slots__:
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(forest.inbag_counts_, clone.inbag_counts_)
    np.testing.assert_array_equal(forest.predict(X), clone.predict(X))
    assert forest.oob_score_ == clone.oob_score_


def test_pickled_state_at_any_byte_offset_loads_as_it_was(regression_data):
    """Dask deserialises a pickle's out-of-band buffers at any byte offset within its message:
    every array of the state unaligned, the forest loads (from aligned copies) as it was."""
    X, y = regression_data
    core = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)._forest

    def unaligned(a):
        raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
        out = raw[1:].view(a.dtype).reshape(a.shape)
        out[...] = a
        assert not out.flags.aligned or a.dtype.itemsize == 1 or a.size == 0
        return out

    state = core.__getstate__()
    moved = dict(state, inbag=unaligned(state["inbag"]),
                 trees=[{k: unaligned(v) for k, v in tree.items()} for tree in state["trees"]])
    clone = type(core).__new__(type(core))
    clone.__setstate__(moved)
    np.testing.assert_array_equal(clone.predict(X), core.predict(X))
    for a, b in zip(clone.__getstate__()["trees"], state["trees"]):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])


def test_corrupt_pickled_state_is_refused(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    state = forest._forest.__getstate__()
    left = state["trees"][0]["left"]
    left[0] = 0  # a node that points to itself would loop forever
    clone = type(forest._forest).__new__(type(forest._forest))
    with pytest.raises(ValueError, match="corrupt forest state: node 0: children must be later nodes"):
        clone.__setstate__(state)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_pickled_state_is_a_versioned_mapping_with_the_criterion(classification_data, criterion):
    X, y = classification_data
    forest = RandomForestClassifier(n_estimators=2, criterion=criterion, random_state=0).fit(X, y)
    state = forest._forest.__getstate__()
    assert state["version"] == type(forest._forest).state_version
    assert state["criterion"] == criterion
    # the node fields, and the tree's table of category sets
    fields = {*type(forest._forest).tree_fields, "left_categories"}
    assert set(state["trees"][0]) == fields == set(forest.trees_[0].__slots__)
    assert pickle.loads(pickle.dumps(forest))._forest.criterion.name == criterion


def shared_child(tree):
    """The second split node's right child replaced by a later node that another node already has."""
    left, right = tree["left"].copy(), tree["right"].copy()
    inner = np.flatnonzero(left >= 0)
    a, b = inner[0], inner[1]
    right[a] = max(left[b], right[b])  # later than a, and already b's child
    tree.update(left=left, right=right)


@pytest.mark.parametrize("edit, match", [
    (lambda s: s.update(version=99), "version 99 is not supported"),
    (lambda s: s["trees"][0].pop("impurity"), "tree has no impurity"),
    (lambda s: s.update(criterion="gini"), "criterion does not match"),
    (lambda s: s.update(criterion="huber"), "unknown criterion"),
    (lambda s: s["trees"][0].update(value=np.zeros(3)), "value has the wrong shape"),
    (lambda s: s.update(inbag=s["inbag"][:-1]), "inbag has the wrong size"),
    # values that a cast would have made into something else: -1 into 2^32 - 1 draws, "1" into 1
    (lambda s: s.update(inbag=s["inbag"].astype(np.int64) - 1), r"inbag holds values outside \[0, 4294967295\]"),
    (lambda s: s.update(inbag=s["inbag"] + 0.5), "inbag must hold integers, not dtype float64"),
    (lambda s: s["trees"][0].update(feature=s["trees"][0]["feature"].astype(str)), "feature must hold integers"),
    (lambda s: s["trees"][0].update(feature=s["trees"][0]["feature"].astype(np.int64) + 2**32),
     "feature holds values outside"),
    (lambda s: s["trees"][0].update(threshold=np.where(s["trees"][0]["left"] >= 0, np.nan, 0.0)),
     "a threshold must be a number"),
    (lambda s: s["trees"][0].update(n_node_samples=-s["trees"][0]["n_node_samples"]), "sizes must be counts"),
    (lambda s: s["trees"][0].update(weighted_n_node_samples=-s["trees"][0]["weighted_n_node_samples"]),
     "sizes must be counts"),
    (lambda s: s["trees"][0].update(right=np.where(np.arange(len(s["trees"][0]["left"])) == 0, s["trees"][0]["left"][0],
                                                   s["trees"][0]["right"])), "node 0: both children are node"),
    (lambda s: shared_child(s["trees"][0]), r"the child of \d+ nodes, not of one"),
])
def test_bad_state_is_refused_with_a_message_naming_the_problem(regression_data, edit, match):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    state = forest._forest.__getstate__()
    edit(state)
    with pytest.raises(ValueError, match=match):
        type(forest._forest).from_state(state)


def test_fitted_arrays_are_read_only(regression_data):
    X, y = regression_data
    forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    tree = forest.trees_[0]
    with pytest.raises(ValueError, match="read-only"):
        tree.threshold[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        forest.inbag_counts_[0, 0] = 3
    with pytest.raises(AttributeError):
        tree.threshold = None


def test_pandas_input_carries_feature_names():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    df = pd.DataFrame(rng.rand(50, 3), columns=["gene_a", "gene_b", "gene_c"])
    y = pd.Series(rng.rand(50))
    forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(df, y)
    assert list(forest.feature_names_in_) == ["gene_a", "gene_b", "gene_c"]
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(forest.predict(df), forest.predict(df.to_numpy()))
    labels = pd.Series(np.where(rng.rand(50) > 0.5, "tumour", "normal"))
    clf = RandomForestClassifier(n_estimators=5, random_state=0).fit(df, labels)
    assert set(clf.predict(df)) <= {"tumour", "normal"}


def test_decision_path_and_apply_agree(classification_data):
    X, y = classification_data
    forest = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    indicator, offsets = forest.decision_path(X)
    leaves = forest.apply(X)
    assert indicator.shape == (len(X), offsets[-1]) and len(offsets) == 5
    for t, tree in enumerate(forest.trees_):
        block = indicator[:, offsets[t]:offsets[t + 1]].toarray()
        assert np.all(block[np.arange(len(X)), leaves[:, t]] == 1)
        assert np.all(block.sum(axis=1) == tree.depth[leaves[:, t]] + 1)
        assert np.all(block[:, 0] == 1)


def test_class_weights(classification_data):
    X, y = classification_data
    for cw in ("balanced", "balanced_subsample", {0: 1.0, 1: 2.0, 2: 5.0}):
        forest = RandomForestClassifier(n_estimators=20, class_weight=cw, random_state=0).fit(X, y)
        assert forest.score(X, y) > 0.95
    tree = RandomForestClassifier(n_estimators=1, bootstrap=False, class_weight="balanced",
                                  random_state=0).fit(X, y).trees_[0]
    np.testing.assert_allclose(tree.value[0], np.full(3, 1 / 3))  # balanced root
    sub = RandomForestClassifier(n_estimators=5, class_weight="balanced_subsample", random_state=0).fit(X, y)
    for tree in sub.trees_:
        np.testing.assert_allclose(tree.value[0], np.full(3, 1 / 3))


def test_balanced_class_weights_sum_sample_weights_as_scikit_learn_does(classification_data):
    """scikit-learn 1.9's "balanced" divides by each class's summed sample weight (pyinterp counted
    rows before); without bootstrap "balanced_subsample" is "balanced". The root's class fractions
    and weighted size are scikit-learn's."""
    import sklearn
    from sklearn.ensemble import RandomForestClassifier as SkForest
    from sklearn.utils.fixes import parse_version

    X, y = classification_data
    weight = np.random.default_rng(0).uniform(0.1, 3.0, len(y)) * np.where(y == 0, 4.0, 1.0)
    for class_weight in ("balanced", "balanced_subsample"):
        ours = RandomForestClassifier(3, bootstrap=False, class_weight=class_weight, random_state=0)
        root = ours.fit(X, y, sample_weight=weight).trees_[0]
        np.testing.assert_allclose(root.value[0], np.full(3, 1 / 3), rtol=1e-12)
        np.testing.assert_allclose(root.weighted_n_node_samples[0], weight.sum(), rtol=1e-12)
        if parse_version(sklearn.__version__) >= parse_version("1.9"):
            peer = SkForest(3, bootstrap=False, class_weight=class_weight, random_state=0).fit(X, y, sample_weight=weight)
            np.testing.assert_allclose(peer.estimators_[0].tree_.weighted_n_node_samples[0], weight.sum(), rtol=1e-12)
    # with bootstrap, balanced_subsample balances each tree's weighted draws, as scikit-learn 1.9 does
    sub = RandomForestClassifier(3, class_weight="balanced_subsample", random_state=0).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(sub.trees_[0].value[0], np.full(3, 1 / 3), rtol=1e-12)
    with pytest.raises(ValueError, match="sample_weight"):
        RandomForestClassifier(3, class_weight="balanced").fit(X, y, sample_weight=weight[:-1])


@pytest.mark.parametrize("bootstrap, max_samples", [(True, None), (True, 0.5), (True, 2.5), (True, 700), (False, 0.6)])
def test_estimators_samples_as_scikit_learn_defines_them(regression_data, bootstrap, max_samples):
    """Per tree, the drawn row indices with repeats: as long as scikit-learn's for the same
    settings (max_samples above 1 from scikit-learn 1.9), and counting what inbag_counts_ records."""
    import sklearn
    from sklearn import ensemble
    from sklearn.utils.fixes import parse_version

    X, y = regression_data
    kw = dict(n_estimators=4, bootstrap=bootstrap, max_samples=max_samples, random_state=0)
    forest = RandomForestRegressor(**kw).fit(X, y)
    above_n = max_samples is not None and max_samples > (1 if isinstance(max_samples, float) else len(y))
    peer_has_it = bootstrap and (not above_n or parse_version(sklearn.__version__) >= parse_version("1.9"))
    peer = ensemble.RandomForestRegressor(**kw).fit(X, y) if peer_has_it else None
    assert forest.n_outputs_ == 1 and len(forest.estimators_samples_) == 4
    for t, rows in enumerate(forest.estimators_samples_):
        np.testing.assert_array_equal(np.bincount(rows, minlength=len(y)), forest.inbag_counts_[t])
        if peer is not None:
            assert len(rows) == len(peer.estimators_samples_[t])
