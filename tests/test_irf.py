"""Random intersection trees and iterative random forests."""

import warnings

import numpy as np
import pytest

import pyinterp
from pyinterp.datasets import make_boolean_response, make_lss
from pyinterp.interactions import IterativeRandomForest, NoInteractionWarning, encode, random_intersection_trees
from pyinterp.interactions.irf import BootstrapLeaves


def random_sets(seed, n=60, items=12):
    rng = np.random.default_rng(seed)
    return [tuple(sorted(rng.choice(items, size=rng.integers(2, 8), replace=False).tolist())) for _ in range(n)], rng


@pytest.mark.parametrize("seed", range(4))
def test_rit_reports_only_true_intersections(seed):
    sets, rng = random_sets(seed)
    weights = rng.random(len(sets))
    weights[:10] = 0.0
    found = random_intersection_trees(sets, weights, depth=4, n_children=2.5, min_size=2, n_trees=300,
                                      random_state=seed)
    assert found
    positive = [frozenset(s) for s, w in zip(sets, weights) if w > 0]
    for s, count in found.items():
        assert len(s) >= 2 and list(s) == sorted(s) and 1 <= count <= 300
        containing = [t for t in positive if set(s) <= t]
        assert len(containing) >= 1
        # Items of zero-weight sets only never appear.
        assert set(s) <= set().union(*positive)


def test_rit_exact_small_cases():
    assert random_intersection_trees([(1, 2, 3)] * 4, n_trees=50, random_state=0) == {(1, 2, 3): 50}
    # depth 1: the root, the intersection of two drawn sets.
    found = random_intersection_trees([(1, 2, 3), (1, 2, 4)], depth=1, n_trees=400, random_state=0)
    assert set(found) == {(1, 2, 3), (1, 2, 4), (1, 2)} and sum(found.values()) == 400
    # A node that shrinks to min_size is reported at once; smaller ones are dropped.
    assert random_intersection_trees([(1, 2), (3, 4)], depth=5, n_trees=100, random_state=1).keys() <= {(1, 2), (3, 4)}
    assert random_intersection_trees([(1,), (1,)], min_size=2, n_trees=10) == {}


def test_rit_thread_independent_and_seeded():
    sets, rng = random_sets(7, n=200, items=20)
    w = rng.random(len(sets))
    one = random_intersection_trees(sets, w, n_trees=500, random_state=3, n_jobs=1)
    two = random_intersection_trees(sets, w, n_trees=500, random_state=3, n_jobs=2)
    assert list(one.items()) == list(two.items())
    assert random_intersection_trees(sets, w, n_trees=500, random_state=4) != one


def test_rit_single_set_root_and_every_node():
    # Root = one drawn set, reported as it is at depth 1.
    assert random_intersection_trees([(1, 2, 3)] * 3, depth=1, root_sets=1, n_trees=20, random_state=0) == \
        {(1, 2, 3): 20}
    sets = [(1, 2, 3), (1, 2, 4)]
    leaves = random_intersection_trees(sets, depth=2, n_children=1, min_size=1, root_sets=1, n_trees=400,
                                       random_state=0)
    nodes = random_intersection_trees(sets, depth=2, n_children=1, min_size=1, root_sets=1, n_trees=400,
                                      report="nodes", random_state=0)
    # One leaf per tree: its root or (1, 2); every tree also reports its root, exactly one full set.
    assert set(leaves) <= {(1, 2, 3), (1, 2, 4), (1, 2)} and sum(leaves.values()) == 400
    assert nodes[(1, 2, 3)] + nodes[(1, 2, 4)] == 400
    assert nodes[(1, 2)] == leaves[(1, 2)] and 100 < nodes[(1, 2)] < 300


@pytest.mark.parametrize("root_sets", [1, 2])
def test_rit_every_node_contains_the_leaves(root_sets):
    sets, rng = random_sets(3, n=80, items=15)
    w = rng.random(len(sets))
    kw = dict(depth=4, n_children=2.0, min_size=2, n_trees=200, root_sets=root_sets, random_state=5)
    leaves = random_intersection_trees(sets, w, **kw)
    nodes = random_intersection_trees(sets, w, report="nodes", **kw)
    # The same draws: every leaf is also a node; nodes add the inner ones.
    assert set(leaves) < set(nodes)
    assert all(leaves[s] <= nodes[s] for s in leaves)
    members = [set(t) for t in sets]
    assert all(any(set(s) <= t for t in members) for s in nodes)
    if root_sets == 1:  # the roots: whole drawn sets
        assert any(s in sets for s in nodes)


def test_rit_bad_input():
    with pytest.raises(ValueError, match="weights"):
        random_intersection_trees([(1, 2)], [0.0])
    with pytest.raises(ValueError, match="depth"):
        random_intersection_trees([(1, 2)], depth=0)
    with pytest.raises(ValueError, match="n_children"):
        random_intersection_trees([(1, 2)], n_children=0.5)
    with pytest.raises(ValueError, match="2\\^31"):
        random_intersection_trees([(-1, 2)])
    with pytest.raises(ValueError, match="root_sets"):
        random_intersection_trees([(1, 2)], root_sets=3)
    with pytest.raises(ValueError, match="report"):
        random_intersection_trees([(1, 2)], report="all")


SMALL = dict(n_iterations=3, n_estimators=60, n_bootstraps=4, rit_n_trees=100, max_features=None)


def fit_on_one_and_two_threads(params, X, y):
    """The fit with n_jobs=1, after checking that n_jobs=2 gives the same table."""
    one = IterativeRandomForest(**params, random_state=0, n_jobs=1).fit(X, y)
    two = IterativeRandomForest(**params, random_state=0, n_jobs=2).fit(X, y)
    assert one.interactions_.features == two.interactions_.features
    for c in one.interactions_.columns:
        np.testing.assert_array_equal(one.interactions_[c], two.interactions_[c])
    return one


@pytest.mark.parametrize("style", ["pyinterp", "R"])
def test_irf_recovers_lss_interaction_and_is_thread_independent(style):
    X, y, true = make_lss(n_samples=600, n_features=10, n_interactions=1, order=2, snr=5, random_state=0)
    one = fit_on_one_and_two_threads({**SMALL, "style": style}, X, y)
    if style == "R":  # ordered by cpe, where supersets of the pair score higher; the pair is stable
        record = one.interactions_[one.interactions_.features.index(true[0])]
        assert record.stability == 1.0 and record.sta_cpe == 1.0
        assert np.all(np.diff(np.nan_to_num(one.interactions_["cpe"], nan=-np.inf)) <= 0)
        return
    assert one.interactions_[0].features == true[0]
    assert one.interactions_[0].stability == 1.0
    stability = one.interactions_["stability"]
    assert np.all((stability >= 0) & (stability <= 1)) and np.all(np.diff(stability) <= 0)
    # Iteration bookkeeping: uniform first weights, then floored normalised importances.
    np.testing.assert_array_equal(one.feature_weights_[0], np.ones(10))
    imp = one.importances_[0] / one.importances_[0].sum()
    np.testing.assert_allclose(one.feature_weights_[1], np.maximum(imp, 1e-5))
    errors = one.oob_errors_
    assert one.selected_iteration_ == len(errors) - 1 - int(np.argmin(errors[::-1]))
    np.testing.assert_array_equal(one.predict(X), one.forest_.predict(X))


def test_irf_classification_unsigned():
    rng = np.random.default_rng(0)
    X = rng.random((800, 8))
    y, true = make_boolean_response(X, rule="and", features=[0, 1, 2, 3], beta=1.0, random_state=0)
    model = IterativeRandomForest(**SMALL, signed=False, random_state=1).fit(X, y)
    assert model.class_id_ == 1
    table = model.interactions_
    stable = [f for f, s in zip(table.features, table["stability"]) if s == 1.0]
    assert ((0, 0), (1, 0), (2, 0), (3, 0)) in stable  # the full AND rule, unsigned
    for features in stable[:5]:
        assert {k for k, _ in features} <= {0, 1, 2, 3}
    assert not any(c in table.label(table.features[0]) for c in "+-")


# The Python irf package's run_iRF defaults (see the class docstring), smaller forests.
PYTHON_IRF = dict(n_iterations=4, iteration="last", n_estimators=40, max_features=None, weight_floor=0.0,
                  n_bootstraps=10, bootstrap_n_estimators=5, bootstrap_max_samples=0.2, rit_n_trees=4, rit_depth=2,
                  rit_n_children=2.0, rit_root_sets=1, rit_report="nodes", rit_min_size=1, rit_leaf_weight="size",
                  rit_leaves="all", first_split=False, style="pyinterp")


def test_irf_python_irf_settings_recover_and_are_thread_independent():
    X, y, true = make_lss(n_samples=600, n_features=10, n_interactions=1, order=2, snr=5, random_state=0)
    one = fit_on_one_and_two_threads(PYTHON_IRF, X, y)
    table = one.interactions_
    # Recovery: no interaction of two or more distinct features is more stable than the true pair
    # (its stability itself, 0.3-0.9 over seeds at these small settings, is no fixed bar).
    stability = dict(zip(table.features, table["stability"]))
    interactions = [s for f, s in stability.items() if len({k for k, _ in f}) >= 2]
    assert stability[true[0]] == max(interactions) > 0
    assert one.selected_iteration_ == PYTHON_IRF["n_iterations"] - 1
    # weight_floor 0: the weights are the previous importances, normalised.
    np.testing.assert_allclose(one.feature_weights_[1], one.importances_[0] / one.importances_[0].sum())
    # Every node is reported: singletons and whole paths with both signs of a feature appear.
    assert any(len(f) == 1 for f in table.features)
    assert any(len({k for k, _ in f}) < len(f) for f in table.features)
    first = IterativeRandomForest(**{**PYTHON_IRF, "first_split": True}, random_state=0).fit(X, y)
    assert all(len({k for k, _ in f}) == len(f) for f in first.interactions_.features)


@pytest.mark.parametrize("max_samples, rows", [(None, 200), (0.2, 40), (0.33, 66), (1.0, 200), (7, 7), (500, 500)])
def test_irf_bootstrap_size_and_trees(max_samples, rows):
    rng = np.random.default_rng(0)
    X = rng.random((200, 4))
    y = (X[:, 0] > 0.3).astype(int)
    model = IterativeRandomForest(n_iterations=1, n_estimators=20, n_bootstraps=1, bootstrap_n_estimators=3,
                                  bootstrap_max_samples=max_samples, style="pyinterp", random_state=0).fit(X, y)
    assert model._bootstrap_rows == rows
    drawn = model._resample(y, 11)
    assert len(drawn) == rows
    counts = np.bincount(y[drawn], minlength=2)
    exact = rows * np.bincount(y) / 200  # classes keep their shares, up to rounding
    assert counts.sum() == rows and np.all(np.abs(counts - exact) < 1)
    np.testing.assert_array_equal(drawn, model._resample(y, 11))
    run = model.bootstrap(X, y, 0)
    leaves = run.leaves
    assert len(run.rows) == rows and run.forest.n_estimators == 3
    assert leaves.paths.tree.max() + 1 == 3  # bootstrap_n_estimators trees
    assert leaves.size.sum() == rows * 3  # each resampled row in one leaf per tree
    # Regression draws plain rows.
    reg = IterativeRandomForest(n_iterations=1, n_estimators=20, n_bootstraps=1, bootstrap_max_samples=max_samples,
                                random_state=0).fit(X, X[:, 0])
    assert len(reg._resample(X[:, 0], 3)) == rows
    # The default style's bootstraps: 50 forests of a fifth of n_estimators; R's: 10 full-size ones.
    assert (reg.n_bootstraps_, reg.bootstrap_n_estimators_) == (1, 4)
    assert reg.bootstrap(X, X[:, 0], 0).forest.n_estimators == 4


def test_irf_bootstraps_by_style():
    rng = np.random.default_rng(1)
    X = rng.random((60, 4))
    y = X[:, 0] + X[:, 1]
    fitted = {style: IterativeRandomForest(n_iterations=1, n_estimators=12, rit_n_trees=5, style=style,
                                           random_state=0).fit(X, y) for style in ("rules", "R", "pyinterp")}
    assert (fitted["rules"].n_bootstraps_, fitted["rules"].bootstrap_n_estimators_) == (50, 2)
    for style in ("R", "pyinterp"):
        assert (fitted[style].n_bootstraps_, fitted[style].bootstrap_n_estimators_) == (10, 12)
    assert fitted["rules"].bootstrap_seeds_.shape == (50, 2)
    tiny = IterativeRandomForest(n_iterations=1, n_estimators=3, n_bootstraps=2, rit_n_trees=5,
                                 random_state=0).fit(X, y)
    assert tiny.bootstrap_n_estimators_ == 1  # a fifth, at least one tree


def test_irf_bootstrap_redoes_the_fit():
    """Stability recomputed from the redone bootstraps equals the fitted one, for every set."""
    X, y, _ = make_lss(n_samples=300, n_features=6, n_interactions=1, order=2, snr=5, random_state=1)
    model = IterativeRandomForest(n_iterations=2, n_estimators=20, n_bootstraps=4, rit_n_trees=30,
                                  style="pyinterp", random_state=3, n_jobs=2).fit(X, y)
    runs = [model.bootstrap(X, y, b) for b in range(4)]
    assert [len(set(r.rows.tolist())) < 300 for r in runs] == [True] * 4
    found = [set(r.interactions) for r in runs]
    table = model.interactions_
    assert len(table) == len(set().union(*found)) > 0
    for features, stability in zip(table.features, table["stability"]):
        codes = tuple(int(c) for c in encode(features))
        assert stability == np.mean([codes in f for f in found])
    for index in (-1, 4, 1.0):
        with pytest.raises(ValueError, match="index"):
            model.bootstrap(X, y, index)


def test_irf_default_candidates_and_stability_come_from_every_bootstrap():
    """The default style scores every set any bootstrap's RIT found, on either side, and its
    stability is the share of all bootstraps that found it (R's divides by those that could score
    it); the rules come first, by cpe, the other tiers by stability."""
    X, y, _ = make_lss(n_samples=300, n_features=6, n_interactions=1, order=2, snr=5, random_state=1)
    model = IterativeRandomForest(n_iterations=2, n_estimators=20, n_bootstraps=6, bootstrap_n_estimators=10,
                                  rit_n_trees=30, random_state=3, n_jobs=2).fit(X, y)
    runs = [model.bootstrap(X, y, b) for b in range(6)]
    found = {1: [set(r.interactions) for r in runs], -1: [set(r.other_interactions) for r in runs]}
    table = model.interactions_
    rows = {(tuple(int(c) for c in encode(f)), int(d)) for f, d in zip(table.features, table["direction"])}
    assert rows <= {(s, d) for d in (1, -1) for s in set().union(*found[d])}
    assert len(rows) > 0.9 * sum(len(set().union(*found[d])) for d in (1, -1))  # nearly all are scored
    for features, direction, stability in zip(table.features, table["direction"], table["stability"]):
        codes = tuple(int(c) for c in encode(features))
        assert stability == np.mean([codes in f for f in found[int(direction)]])
    assert (table["stability"] < 0.5).any()  # rare sets are kept, with their low stability
    lower = table["tier"] > 0
    assert (np.diff(table["tier"]) >= 0).all()
    assert (np.diff(table["stability"][lower & (table["tier"] == 2)]) <= 0).all()


def test_irf_default_warns_when_no_set_is_a_rule():
    rng = np.random.default_rng(0)
    X = rng.random((300, 6))
    y = rng.random(300)  # noise: these small forests find no rule in it
    kw = dict(n_iterations=2, n_estimators=30, n_bootstraps=5, rit_n_trees=30, random_state=0)
    with pytest.warns(NoInteractionWarning, match=r"found no rule \(tier 0\).*The most stable, x\d[+-] & x\d[+-], has "
                      r"stability [01]\.\d\d over 5 bootstraps, sta_fsd [01]\.\d\d and sta_mip [01]\.\d\d"):
        model = IterativeRandomForest(**kw).fit(X, y)
    assert len(model.interactions_) and not (model.interactions_["tier"] == 0).any()
    X, y, _ = make_lss(n_samples=300, n_features=6, n_interactions=1, order=2, snr=5, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoInteractionWarning)
        assert (IterativeRandomForest(**kw).fit(X, y).interactions_["tier"] == 0).any()


@pytest.mark.parametrize("style", ["R", "pyinterp"])
def test_irf_on_a_data_frame_warns_of_nothing_and_equals_the_array_fit(style):
    """The selected forest carries the frame's column names; the leaves of the R style's candidate
    RIT were read from it with the validated array, which warned "X does not have valid feature
    names" on every fit (and every command line run on a file)."""
    import warnings

    pd = pytest.importorskip("pandas")
    X, y, _ = make_lss(n_samples=200, n_features=5, n_interactions=1, order=2, snr=5, random_state=0)
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(5)])
    kw = dict(n_iterations=2, n_estimators=20, n_bootstraps=2, rit_n_trees=20, style=style, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = IterativeRandomForest(**kw).fit(frame, y)
        predicted = model.predict(frame)
    plain = IterativeRandomForest(**kw).fit(X, y)
    assert len(model.interactions_) > 0
    assert model.interactions_.features == plain.interactions_.features
    np.testing.assert_array_equal(model.interactions_["cpe"], plain.interactions_["cpe"])
    np.testing.assert_array_equal(predicted, plain.predict(X))
    assert model.interactions_[0].names[0][0].startswith("gene")


def test_irf_small_resample_without_the_class_of_interest():
    rng = np.random.default_rng(0)
    X = rng.random((200, 4))
    y = np.zeros(200, dtype=int)
    y[:5] = 1  # 10 rows per resample: 9.75 / 0.25 rounds to 10 / 0
    model = IterativeRandomForest(n_iterations=1, n_estimators=20, n_bootstraps=3, bootstrap_max_samples=10,
                                  random_state=0).fit(X, y)
    assert np.bincount(y[model._resample(y, 0)], minlength=2).tolist() == [10, 0]
    assert len(model.interactions_) == 0


def test_irf_rit_leaves_and_weights():
    X, y, _ = make_lss(n_samples=400, n_features=5, n_interactions=1, order=2, snr=5, random_state=3)
    model = IterativeRandomForest(n_iterations=1, n_estimators=30, n_bootstraps=1, rit_n_trees=300,
                                  random_state=0).fit(X, y)
    forest = pyinterp.RandomForestRegressor(10, random_state=0).fit(X, y)
    z = (y > model.cut_).astype(float)
    leaves = BootstrapLeaves(forest, X, z, model)
    paths = [set(leaves.paths.codes[a:b].tolist()) for a, b in zip(leaves.paths.indptr[:-1], leaves.paths.indptr[1:])]

    def found(**kw):
        model.set_params(**kw)
        return leaves.rit(model, seed=1)

    def within(sets, mask):
        return all(any(set(s) <= paths[r] for r in np.flatnonzero(mask)) for s in sets)

    class_leaves = found(rit_leaves="class", rit_leaf_weight="size_precision")
    assert within(class_leaves, leaves.is1 & (leaves.positive > 0))
    assert within(found(rit_leaves="class", rit_leaf_weight="size"), leaves.is1)
    all_leaves = found(rit_leaves="all", rit_leaf_weight="size")
    assert within(all_leaves, leaves.size > 0) and not within(all_leaves, leaves.is1)
    # The weight only changes which leaves are drawn: zero-weight leaves never are.
    assert within(found(rit_leaves="all", rit_leaf_weight="size_precision"), leaves.positive > 0)


def test_leaf_scores_match_direct_counts():
    X, y, _ = make_lss(n_samples=300, n_features=5, n_interactions=1, order=2, snr=5, random_state=2)
    model = IterativeRandomForest(n_iterations=1, n_estimators=5, n_bootstraps=1, style="pyinterp", random_state=0)
    model.classification_ = False
    model.cut_ = float(np.median(y))
    z = (y > model.cut_).astype(float)
    forest = pyinterp.RandomForestRegressor(5, random_state=0).fit(X, y)
    leaves = BootstrapLeaves(forest, X, z, model)
    paths = leaves.paths
    applied = forest.apply(X)
    query = tuple(paths.codes[paths.indptr[0]:paths.indptr[1]][:2].tolist())
    prev1, prev0, prec = leaves.prevalences([(), query])
    mass = {1: [0.0, 0.0], 0: [0.0, 0.0]}
    pos = [0.0, 0.0]
    for t, tree in enumerate(forest.trees_):
        for leaf in np.flatnonzero(tree.left < 0):
            r = np.flatnonzero((paths.tree == t) & (paths.leaf == leaf))[0]
            inside = applied[:, t] == leaf
            is1 = tree.value[leaf, 0] > model.cut_
            contains = set(query) <= set(paths.codes[paths.indptr[r]:paths.indptr[r + 1]].tolist())
            mass[int(is1)][0] += inside.sum()
            if contains:
                mass[int(is1)][1] += inside.sum()
                pos[1] += z[inside].sum()
            pos[0] += z[inside].sum()
    np.testing.assert_allclose(prev1, [1.0, mass[1][1] / mass[1][0]])
    np.testing.assert_allclose(prev0, [1.0, mass[0][1] / mass[0][0]])
    np.testing.assert_allclose(prec, [pos[0] / (mass[0][0] + mass[1][0]), pos[1] / (mass[0][1] + mass[1][1])])


@pytest.mark.parametrize("kwargs, match", [
    (dict(importance="gini"), "importance"),
    (dict(n_iterations=0), "n_iterations"),
    (dict(iteration=7), "iteration"),
    (dict(class_id=5), "class_id"),
    (dict(cut=100.0), "cut"),
    (dict(bootstrap_n_estimators=0), "bootstrap_n_estimators"),
    (dict(bootstrap_max_samples=0.0), "bootstrap_max_samples"),
    (dict(bootstrap_max_samples=1.5), "bootstrap_max_samples"),
    (dict(bootstrap_max_samples=0), "bootstrap_max_samples"),
    (dict(rit_leaves="class1"), "rit_leaves"),
    (dict(rit_leaf_weight="precision"), "rit_leaf_weight"),
    (dict(rit_root_sets=3), "rit_root_sets"),
    (dict(rit_report="all"), "rit_report"),
    (dict(style="ranger"), "style"),
])
def test_irf_bad_input(kwargs, match):
    X, y, _ = make_lss(n_samples=100, n_features=4, n_interactions=1, order=2, snr=5, random_state=0)
    if "class_id" in kwargs:
        y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match=match):
        IterativeRandomForest(n_iterations=kwargs.pop("n_iterations", 2), n_estimators=5, n_bootstraps=1,
                              **kwargs).fit(X, y)


def test_irf_bad_types():
    X, y, _ = make_lss(n_samples=100, n_features=4, n_interactions=1, order=2, snr=5, random_state=0)
    for kwargs in (dict(first_split="yes"), dict(bootstrap_max_samples="all"), dict(bootstrap_n_estimators=2.5)):
        with pytest.raises(TypeError, match=next(iter(kwargs))):
            IterativeRandomForest(n_iterations=1, n_estimators=5, n_bootstraps=1, **kwargs).fit(X, y)


def test_irf_estimator_contract_and_pickle():
    import pickle
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # tiny forests leave rows without OOB trees
        check_estimator(IterativeRandomForest(n_iterations=2, n_estimators=10, n_bootstraps=2, rit_n_trees=20,
                                              random_state=0))
        check_estimator(IterativeRandomForest(**{**PYTHON_IRF, "n_iterations": 2, "n_estimators": 10},
                                              random_state=0))
        for task in ("classification", "regression"):  # declared: scikit-learn's classifier / regressor checks
            check_estimator(IterativeRandomForest(task=task, n_iterations=2, n_estimators=10, n_bootstraps=2,
                                                  rit_n_trees=20, random_state=0))
    X, y, _ = make_lss(n_samples=300, n_features=6, n_interactions=1, order=2, snr=5, random_state=0)
    model = IterativeRandomForest(**SMALL, random_state=0).fit(X, y)
    clone = pickle.loads(pickle.dumps(model))
    assert clone.interactions_.features == model.interactions_.features
    np.testing.assert_array_equal(clone.predict(X), model.predict(X))


def test_task_declares_the_estimator_type_for_model_selection():
    """With task="classification", cross_val_score stratifies and roc_auc reads predict_proba, as
    for any scikit-learn classifier; the same folds by hand give the same scores."""
    from sklearn.base import is_classifier, is_regressor
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score

    X, y, _ = make_lss(n_samples=240, n_features=8, n_interactions=1, order=2, snr=5, random_state=0)
    labels = (y > np.median(y)).astype(int)
    kw = dict(n_iterations=1, n_estimators=15, n_bootstraps=1, rit_n_trees=5, random_state=0)
    clf = IterativeRandomForest(task="classification", **kw)
    assert is_classifier(clf) and not is_classifier(IterativeRandomForest(**kw))
    assert is_regressor(IterativeRandomForest(task="regression", **kw))
    scores = cross_val_score(clf, X, labels, cv=3, scoring="roc_auc")
    by_hand = [roc_auc_score(labels[te], IterativeRandomForest(task="classification", **kw)
                             .fit(X[tr], labels[tr]).predict_proba(X[te])[:, 1])
               for tr, te in StratifiedKFold(3).split(X, labels)]
    np.testing.assert_allclose(scores, by_hand)
    fitted = clf.fit(X, labels)
    np.testing.assert_array_equal(fitted.classes_, [0, 1])
    assert fitted.score(X, labels) == np.mean(fitted.predict(X) == labels)
    search = GridSearchCV(clf, {"n_estimators": [5, 15]}, cv=2).fit(X, labels)
    assert search.best_params_["n_estimators"] in (5, 15)
    # Integer y read as a regression target when told so; "auto" would make 14 classes of it.
    counts = np.round(y * 3).astype(int)
    reg = IterativeRandomForest(task="regression", **kw).fit(X, counts)
    assert not reg.classification_ and not hasattr(reg, "predict_proba")
    assert reg.score(X, counts) == pytest.approx(1 - ((counts - reg.predict(X)) ** 2).sum()
                                                 / ((counts - counts.mean()) ** 2).sum())
    with pytest.raises(ValueError, match="y must hold numbers for regression"):
        IterativeRandomForest(task="regression", **kw).fit(X, np.where(labels, "a", "b"))


def test_irf_pickled_before_resolved_bootstraps_still_redoes_them():
    """Fits pickled before n_bootstraps could be None stored the trees as _bootstrap_trees and no
    n_bootstraps_; loading them fills both, and bootstrap() works."""
    import pickle

    X, y, _ = make_lss(n_samples=200, n_features=5, random_state=0)
    model = IterativeRandomForest(n_iterations=2, n_estimators=20, n_bootstraps=3, rit_n_trees=20, style="R",
                                  random_state=0).fit(X, y)
    expected = model.bootstrap(X, y, 2)
    state = model.__dict__
    state["_bootstrap_trees"] = state.pop("bootstrap_n_estimators_")
    del state["n_bootstraps_"]
    loaded = pickle.loads(pickle.dumps(model))
    assert (loaded.n_bootstraps_, loaded.bootstrap_n_estimators_) == (3, 20)
    run = loaded.bootstrap(X, y, 2)
    np.testing.assert_array_equal(run.rows, expected.rows)
    assert sorted(run.interactions) == sorted(expected.interactions)
