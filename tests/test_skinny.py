"""Skinny Trees: kernels against finite differences and brute force, the training step, the
estimator contract, compressed inference, determinism and the feature-budget search."""

import itertools
import math
import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator

from pyinterp import SkinnyTreesClassifier, SkinnyTreesRegressor
from pyinterp._seeds import python_rng
from pyinterp.datasets import make_correlated_linear
from pyinterp.skinny import estimators as skinny_estimators
from pyinterp.skinny import fit_budget, kernels
import reference_skinny

FAST = dict(n_trees=4, depth=2, max_epochs=40, random_state=0)


def objective(X, y, W, b, O, depth, loss, lambda2, kind):
    return reference_skinny.objective_terms(X, y, W, b, O, depth, loss, lambda2, kind, gamma_s=2.0)


@pytest.mark.parametrize("kind", ["sigmoid", "smooth_step"])
@pytest.mark.parametrize("task", ["mse", "binary", "multiclass"])
def test_gradients_match_central_differences(kind, task):
    rng = np.random.default_rng(3)
    p, m, depth, n = 5, 3, 3, 11
    c = {"mse": 1, "binary": 2, "multiclass": 3}[task]
    X = rng.normal(size=(n, p))
    W, b, O = kernels.glorot_init(rng, p, m, depth, c, np.float64)
    W *= 3.0
    b = 0.3 * rng.normal(size=b.shape)
    y = rng.normal(size=n) if task == "mse" else rng.integers(0, c, n)
    loss = kernels.mse_loss if task == "mse" else kernels.cross_entropy_loss
    _, dW, db, dO = objective(X, y, W, b, O, depth, loss, 0.3, kind)
    h = 1e-6
    for arr, grad in ((W, dW), (b, db), (O, dO)):
        fd = np.empty_like(arr)
        for i in np.ndindex(arr.shape):
            old = arr[i]
            arr[i] = old + h
            up = objective(X, y, W, b, O, depth, loss, 0.3, kind)[0]
            arr[i] = old - h
            down = objective(X, y, W, b, O, depth, loss, 0.3, kind)[0]
            arr[i] = old
            fd[i] = (up - down) / (2 * h)
        assert np.abs(fd - grad).max() <= 1e-6 * np.abs(grad).max()


@pytest.mark.parametrize("kind", ["sigmoid", "smooth_step"])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_core_kernels_match_the_numpy_reference(kind, dtype, rtol):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(9, 6)).astype(dtype)
    W, b, O = kernels.glorot_init(rng, 6, 4, 3, 3, dtype)
    W *= 4
    b = rng.normal(size=b.shape).astype(dtype)
    y = rng.integers(0, 3, 9)
    F, cache = reference_skinny.forward(X, W, b, O, 3, kind, 1.5)
    Fc, cache_c = kernels.forward_core(X, W, b, O, 3, kind, 1.5)
    np.testing.assert_allclose(Fc, F, rtol=rtol)
    _, G = kernels.cross_entropy_loss(F, y)
    for got, want in zip(kernels.backward_core(X, G, cache_c, O, 3), reference_skinny.backward(X, G, cache, O, 3)):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_core_kernels_reject_bad_shapes_and_dtypes():
    from pyinterp import _core
    Z = np.zeros((4, 7))
    with pytest.raises(ValueError, match="multiple"):
        _core.softtree_forward(Z, None, 2)  # depth 2 has 3 nodes per tree
    with pytest.raises(ValueError, match="bias"):
        _core.softtree_forward(Z, np.zeros(6), 3)
    with pytest.raises(ValueError, match="dtype"):
        _core.softtree_forward(Z, np.zeros(7, dtype=np.float32), 3)
    with pytest.raises(ValueError, match="activation"):
        _core.softtree_forward(Z, None, 3, "relu")
    with pytest.raises(ValueError, match="depth"):
        _core.softtree_forward(Z, None, 0)
    with pytest.raises(ValueError, match="C-contiguous"):
        _core.softtree_forward(np.zeros((4, 14))[:, :7], None, 3)
    S, dS, P = _core.softtree_forward(Z, None, 3)
    with pytest.raises(ValueError, match="S"):
        _core.softtree_backward(P, S[:3], dS, 3)
    with pytest.raises(ValueError, match="C-contiguous"):
        _core.softtree_backward(P, np.asfortranarray(S), dS, 3)


def test_training_engines_agree_in_float64():
    X, y, _ = make_correlated_linear(60, 10, random_state=0)
    a = SkinnyTreesRegressor(**FAST, dtype="float64").fit(X, y)
    from pyinterp.skinny import training
    cfg = a._config(*X.shape)
    cfg.engine = reference_skinny.ENGINE
    rng = python_rng(0)
    ref = training.train(cfg, X, y, kernels.mse_loss, 1, rng)
    np.testing.assert_allclose(a.split_weights_.reshape(10, -1), ref.W, rtol=1e-9, atol=1e-12)


def test_leaf_probabilities_are_products_along_paths():
    rng = np.random.default_rng(0)
    S = rng.uniform(size=(4, 2, 7))  # depth 3
    P, _ = reference_skinny.route(S, 3)
    for leaf in range(8):
        node, expected = 0, np.ones((4, 2))
        for level in range(3):
            go_right = (leaf >> (2 - level)) & 1
            expected = expected * (1 - S[:, :, node] if go_right else S[:, :, node])
            node = 2 * node + 1 + go_right
        np.testing.assert_allclose(P[:, :, leaf], expected, rtol=1e-12)
    np.testing.assert_allclose(P.sum(axis=2), 1.0, rtol=1e-14)


def test_smooth_step_shape():
    z = np.array([-2.0, -0.5, -0.25, 0.0, 0.25, 0.5, 2.0])
    S, dS = reference_skinny.activation(z, "smooth_step", 1.0)
    np.testing.assert_allclose(S, [0, 0, 0.15625, 0.5, 0.84375, 1, 1], atol=1e-15)
    np.testing.assert_allclose(dS, [0, 0, 1.125, 1.5, 1.125, 0, 0], atol=1e-15)


def l0_objective(V, Z, eta, lam):
    return np.sum((V - Z) ** 2) / (2 * eta) + lam * np.count_nonzero(np.any(V != 0, axis=1))


@pytest.mark.parametrize("seed", range(5))
def test_hard_threshold_is_the_exact_prox(seed):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(5, 3)) * rng.uniform(0.1, 2, size=(5, 1))
    eta, lam = 0.3, 0.4
    V = Z.copy()
    kernels.hard_threshold(V, math.sqrt(2 * eta * lam))
    # Brute force over every support: for a fixed support the minimiser keeps Z there.
    best = min(
        (l0_objective(np.where(np.array(keep)[:, None], Z, 0.0), Z, eta, lam), keep)
        for keep in itertools.product([False, True], repeat=5)
    )
    assert l0_objective(V, Z, eta, lam) == pytest.approx(best[0], rel=1e-15)
    np.testing.assert_array_equal(V, np.where(np.array(best[1])[:, None], Z, 0.0))


def test_hard_threshold_boundary_drops_the_group():
    Z = np.array([[3.0, 4.0], [0.0, 6.0]])
    keep = kernels.hard_threshold(Z, 5.0)
    np.testing.assert_array_equal(keep, [False, True])
    np.testing.assert_array_equal(Z, [[0.0, 0.0], [0.0, 6.0]])


@pytest.mark.parametrize("seed", range(3))
def test_soft_threshold_is_the_group_lasso_prox(seed):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(4, 3))
    tau = 1.2
    V = Z.copy()
    kernels.soft_threshold(V, tau)
    for k in range(4):
        res = minimize(lambda v: 0.5 * np.sum((v - Z[k]) ** 2) + tau * np.linalg.norm(v), Z[k], method="Powell",
                       options={"xtol": 1e-10, "ftol": 1e-14})
        np.testing.assert_allclose(V[k], res.x, atol=1e-5)


def test_dsl_schedule_formula():
    for t in (1, 10, 1000):
        assert kernels.dsl_lambda0(t, 2.5, 0.01) == pytest.approx(2.5 * (1 - math.exp(-0.01 * t)), rel=1e-15)
    assert kernels.dsl_lambda0(10**9, 2.5, 0.01) == 2.5


def test_history_lambda0_follows_the_schedule_per_global_step():
    X, y, _ = make_correlated_linear(50, 20, random_state=0)
    model = SkinnyTreesRegressor(n_trees=2, depth=2, batch_size=16, max_epochs=6, lambda0=3.0, temperature=0.05,
                                 random_state=0).fit(X, y)
    steps = np.arange(1, 7) * 4  # ceil(50 / 16) = 4 steps per epoch, t counted across epochs
    np.testing.assert_allclose(model.history_["lambda0"], 3.0 / 20 * (1 - np.exp(-0.05 * steps)), rtol=1e-12)
    fixed = SkinnyTreesRegressor(n_trees=2, depth=2, max_epochs=3, lambda0=3.0, temperature=None, random_state=0)
    np.testing.assert_array_equal(fixed.fit(X, y).history_["lambda0"], 3.0 / 20)


def test_one_training_step_is_sgd_then_prox():
    X, y, _ = make_correlated_linear(30, 12, random_state=1)
    params = dict(n_trees=3, depth=2, learning_rate=0.2, lambda0=70.0, temperature=0.5, lambda2=0.4, batch_size=30,
                  max_epochs=1, dtype="float64", random_state=7)
    model = SkinnyTreesRegressor(**params).fit(X, y)
    rng = python_rng(7)
    W, b, O = kernels.glorot_init(rng, 12, 3, 2, 1, np.float64)
    rows = rng.permutation(30)
    _, dW, db, dO = reference_skinny.objective_terms(X[rows], y[rows], W, b, O, 2, kernels.mse_loss, 0.4)
    W, b, O = W - 0.2 * dW, b - 0.2 * db, O - 0.2 * dO
    threshold = math.sqrt(2 * 0.2 * 70.0 / 12 * (1 - math.exp(-0.5)))
    W[np.linalg.norm(W, axis=1) <= threshold] = 0.0
    assert 0 < np.count_nonzero(np.linalg.norm(W, axis=1)) < 12  # the prox bites but keeps some
    np.testing.assert_allclose(model.split_weights_.reshape(12, -1), W, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.split_bias_.ravel(), b, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.leaf_values_, O, rtol=1e-12, atol=1e-15)


@pytest.fixture(scope="module")
def sparse_fit():
    X, y, support = make_correlated_linear(200, 64, correlation=0.5, random_state=0)
    model = SkinnyTreesRegressor(n_trees=10, depth=3, lambda2=2.0, learning_rate=0.1, temperature=0.01,
                                 batch_size=32, max_epochs=150, random_state=0)
    return model.fit(X[:160], y[:160], X[160:], y[160:]), X, support


def test_dropped_features_have_exactly_zero_groups(sparse_fit):
    model, _, support = sparse_fit
    assert 0 < model.n_selected_features_ < 64
    np.testing.assert_array_equal(model.selected_features_, support)
    dropped = np.setdiff1d(np.arange(64), model.selected_features_)
    assert np.all(model.split_weights_[dropped] == 0.0)
    assert np.all(model.feature_importances_[dropped] == 0.0)
    assert np.all(model.feature_importances_[model.selected_features_] > 0.0)
    np.testing.assert_allclose(model.feature_importances_,
                               np.linalg.norm(model.split_weights_.reshape(64, -1).astype(np.float64), axis=1))


def test_compressed_model_predicts_as_the_dense_model(sparse_fit):
    model, X, _ = sparse_fit
    compressed = model.predict(X)
    np.testing.assert_allclose(compressed, model._raw_dense(X)[:, 0], rtol=1e-13, atol=1e-13)
    scrambled = X.copy()
    dropped = np.setdiff1d(np.arange(64), model.selected_features_)
    scrambled[:, dropped] = np.random.default_rng(0).normal(size=(len(X), dropped.size)) * 1e6
    np.testing.assert_array_equal(model.predict(scrambled), compressed)


def test_validation_snapshot_is_the_best_epoch_within_budget(sparse_fit):
    model, _, _ = sparse_fit
    h = model.history_
    assert model.best_epoch_ == int(np.nanargmax(h["val_score"]))
    # lambda2 = 1 ends at 14 features after passing 17 and 16 on its way down
    budgeted = SkinnyTreesRegressor(**{**model.get_params(), "lambda2": 1.0, "feature_budget": 16})
    X, y, _ = make_correlated_linear(200, 64, correlation=0.5, random_state=0)
    budgeted.fit(X[:160], y[:160], X[160:], y[160:])
    n_selected = budgeted.history_["n_selected"]
    assert n_selected.max() > 16 and n_selected.min() <= 16
    inside = np.where(n_selected <= 16, budgeted.history_["val_score"], -np.inf)
    assert budgeted.best_epoch_ == int(np.argmax(inside))
    assert budgeted.n_selected_features_ == n_selected[budgeted.best_epoch_] <= 16


def test_early_stopping_stops_after_patience():
    X, y, _ = make_correlated_linear(120, 10, random_state=2)
    model = SkinnyTreesRegressor(n_trees=3, depth=2, lambda0=0.0, learning_rate=0.05, max_epochs=500,
                                 early_stopping=True, n_iter_no_change=5, random_state=0).fit(X, y)
    assert model.n_iter_ < 500
    assert model.n_iter_ == model.best_epoch_ + 1 + 5
    assert np.isfinite(model.history_["val_score"]).all()


def test_same_seed_is_bit_identical_and_other_seed_differs():
    X, y, _ = make_correlated_linear(80, 15, random_state=3)
    a = SkinnyTreesRegressor(**FAST).fit(X, y)
    b = SkinnyTreesRegressor(**FAST).fit(X, y)
    np.testing.assert_array_equal(a.split_weights_, b.split_weights_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    for key in a.history_:
        np.testing.assert_array_equal(a.history_[key], b.history_[key])
    c = SkinnyTreesRegressor(**{**FAST, "random_state": 1}).fit(X, y)
    assert not np.array_equal(a.predict(X), c.predict(X))


def test_adam_solver_and_group_lasso_train():
    X, y, _ = make_correlated_linear(150, 20, random_state=4)
    for kw in (dict(solver="adam", learning_rate=0.01), dict(penalty="group_lasso", lambda0=20.0)):
        model = SkinnyTreesRegressor(n_trees=4, depth=2, max_epochs=60, random_state=0, **kw).fit(X, y)
        assert model.history_["loss"][-1] < 0.5 * model.history_["loss"][0]


def test_classifier_binary_and_multiclass():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y3 = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)]
    clf = SkinnyTreesClassifier(n_trees=5, depth=2, learning_rate=0.5, lambda0=2.0, max_epochs=80,
                                random_state=0).fit(X, y3)
    assert clf.score(X, y3) > 0.9
    assert set(clf.selected_features_) >= {0, 1}
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    assert clf.leaf_values_.shape == (5, 4, 3)
    y2 = X[:, 2] > 0
    binary = SkinnyTreesClassifier(n_trees=3, depth=2, learning_rate=0.5, lambda0=1.0, max_epochs=40,
                                   random_state=0).fit(X, y2)
    d = binary.decision_function(X)
    assert d.shape == (300,)
    np.testing.assert_array_equal(binary.predict(X), d > 0)
    proba = binary.predict_proba(X)[:, 1]
    np.testing.assert_allclose(proba, 1 / (1 + np.exp(-d)), rtol=1e-12)


def test_classifier_validation_score_is_auc():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(int)
    clf = SkinnyTreesClassifier(n_trees=3, depth=2, lambda0=1.0, max_epochs=10, random_state=0)
    clf.fit(X[:150], y[:150], X[150:], y[150:])
    from sklearn.metrics import roc_auc_score
    best = clf.history_["val_score"][clf.best_epoch_]
    assert best == pytest.approx(roc_auc_score(y[150:], clf.predict_proba(X[150:])[:, 1]), rel=1e-6)


@pytest.mark.parametrize(
    "Estimator, params",
    [(SkinnyTreesRegressor, dict(learning_rate=0.05)), (SkinnyTreesClassifier, dict(learning_rate=0.5))],
)
def test_check_estimator(Estimator, params):
    check_estimator(Estimator(n_trees=3, depth=2, max_epochs=50, lambda0=0.1, random_state=0, **params))


def test_pickle_and_pandas(sparse_fit):
    pd = pytest.importorskip("pandas")
    model, X, _ = sparse_fit
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict(X), model.predict(X))
    frame = pd.DataFrame(X[:100], columns=[f"g{i}" for i in range(64)])
    y = X[:100, 0] - X[:100, 5]
    fitted = SkinnyTreesRegressor(**FAST).fit(frame, y)
    assert list(fitted.feature_names_in_) == list(frame.columns)
    np.testing.assert_array_equal(fitted.predict(frame), SkinnyTreesRegressor(**FAST).fit(X[:100], y).predict(X[:100]))


@pytest.mark.parametrize(
    "params, error, match",
    [
        (dict(activation="relu"), ValueError, "activation"),
        (dict(penalty="l1"), ValueError, "penalty"),
        (dict(solver="lbfgs"), ValueError, "solver"),
        (dict(depth=0), ValueError, "depth"),
        (dict(learning_rate=0.0), ValueError, "learning_rate"),
        (dict(lambda0=-1.0), ValueError, "lambda0"),
        (dict(lambda2="max"), ValueError, "lambda2"),
        (dict(lambda2=-1.0), ValueError, "lambda2"),
        (dict(temperature=-0.1), ValueError, "temperature"),
        (dict(batch_size=1.5), TypeError, "batch_size"),
        (dict(dtype="float16"), ValueError, "dtype"),
        (dict(early_stopping=True, validation_fraction=1.5), ValueError, "validation_fraction"),
        (dict(early_stopping=True, validation_fraction=1.0), ValueError, "validation_fraction"),
    ],
)
def test_invalid_parameters_are_named(params, error, match):
    X, y, _ = make_correlated_linear(30, 4, n_informative=2, random_state=0)
    with pytest.raises(error, match=match):
        SkinnyTreesRegressor(**params).fit(X, y)


def test_bad_validation_input():
    X, y, _ = make_correlated_linear(30, 4, n_informative=2, random_state=0)
    with pytest.raises(ValueError, match="together"):
        SkinnyTreesRegressor(**FAST).fit(X, y, X_val=X)
    with pytest.raises(ValueError, match="features"):
        SkinnyTreesRegressor(**FAST).fit(X, y, X[:, :3], y)
    labels = (y > 0).astype(int)
    with pytest.raises(ValueError, match="not in y"):
        SkinnyTreesClassifier(**FAST).fit(X, labels, X, labels + 5)
    with pytest.raises(FloatingPointError, match=r"diverged at epoch \d+ \(non-finite loss\); standardise X's columns "
                                                 r"\(the largest \|x\| is [\d.]+; sklearn.preprocessing.StandardScaler\) "
                                                 "or lower learning_rate"):
        SkinnyTreesRegressor(n_trees=3, depth=2, learning_rate=1e3, max_epochs=50, random_state=0).fit(X, 1e3 * y)


def test_a_fit_that_keeps_every_feature_says_so():
    """Without feature_budget the default ridge is a dense ensemble: the fit warns that it kept all
    features, at the caller's line; a budget it meets, or penalty="none", does not warn."""
    X, y, _ = make_correlated_linear(200, 12, n_informative=3, random_state=0)
    with pytest.warns(UserWarning, match="Skinny Trees kept all 12 features: without feature_budget, "
                                         "lambda2='auto' is 0.01, a dense soft-tree ensemble; give "
                                         "feature_budget=K") as caught:
        model = SkinnyTreesRegressor(max_epochs=50, random_state=0).fit(X, y)
    assert model.n_selected_features_ == 12 and caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SkinnyTreesRegressor(n_trees=4, depth=2, max_epochs=20, penalty="none", random_state=0).fit(X, y)
        budget = SkinnyTreesRegressor(n_trees=4, depth=2, max_epochs=100, feature_budget=6, random_state=0).fit(X, y)
    assert budget.n_selected_features_ <= 6


def test_make_correlated_linear_matches_the_table1_design():
    X, y, support = make_correlated_linear(20000, 256, correlation=0.7, noise=0.5, random_state=0)
    np.testing.assert_array_equal(support, np.arange(16, 256, 32))
    cov = np.cov(X[:, :6], rowvar=False)
    np.testing.assert_allclose(cov, 0.7 ** np.abs(np.subtract.outer(np.arange(6), np.arange(6))), atol=0.03)
    resid = y - X[:, support].sum(axis=1)
    assert resid.std() == pytest.approx(0.5, rel=0.02)


def test_fit_budget_respects_the_budget_and_is_deterministic_across_jobs():
    X, y, support = make_correlated_linear(200, 40, correlation=0.5, random_state=5)
    base = SkinnyTreesRegressor(n_trees=5, depth=2, batch_size=32, max_epochs=60, lambda2=0.5)
    kw = dict(max_features=10, n_trials=4, random_state=0,
              param_distributions={"temperature": [0.01, 0.03], "learning_rate": [0.05, 0.1]})
    best = fit_budget(base, X, y, n_jobs=1, **kw)
    assert 0 < best.n_selected_features_ <= 10
    search = best.budget_search_
    assert search.val_score[search.best_trial] == np.nanmax(search.val_score)
    assert best.feature_budget == 10 and best.get_params()["learning_rate"] == search.params[search.best_trial][
        "learning_rate"]
    again = fit_budget(base, X, y, n_jobs=2, **kw)
    np.testing.assert_array_equal(again.predict(X), best.predict(X))
    np.testing.assert_array_equal(again.budget_search_.val_score, search.val_score)


def test_fit_budget_runs_a_small_grid_once_per_point():
    """4 points asked for 6 trials: scikit-learn's sampler warns and draws 4; the search reports 4
    trials, each the trial the 4-trial search runs (the same seeds), with no padding."""
    X, y, _ = make_correlated_linear(200, 40, correlation=0.5, random_state=5)
    base = SkinnyTreesRegressor(n_trees=5, depth=2, batch_size=32, max_epochs=60, lambda2=0.5)
    grid = {"temperature": [0.01, 0.03], "learning_rate": [0.05, 0.1]}
    with pytest.warns(UserWarning, match="smaller than n_iter=6"):
        search = fit_budget(base, X, y, 10, n_trials=6, param_distributions=grid, random_state=0).budget_search_
    four = fit_budget(base, X, y, 10, n_trials=4, param_distributions=grid, random_state=0).budget_search_
    assert len(search.params) == len(search.val_score) == len(search.n_selected) == 4
    assert not np.isnan(search.val_score).all()
    np.testing.assert_array_equal(search.n_selected, four.n_selected)
    np.testing.assert_array_equal(search.val_score, four.val_score)


def test_fit_budget_fails_clearly_when_no_trial_is_sparse_enough():
    X, y, _ = make_correlated_linear(60, 12, random_state=0)
    with pytest.raises(ValueError, match=r"no trial reached a model with 1..3 features; raise lambda2 .*lambda0"):
        fit_budget(SkinnyTreesRegressor(n_trees=2, depth=2, lambda0=0.0, max_epochs=5), X, y, max_features=3,
                   n_trials=2, random_state=0)
    with pytest.raises(TypeError, match="SkinnyTrees"):
        fit_budget(object(), X, y, max_features=3)


@pytest.mark.heavy
def test_fit_budget_defaults_meet_the_budget_of_issue_24():
    """The issue's call (p = N = 300, 8 true features, correlation 0.5, K = 16) with the default
    estimator and search space; with PAPER_SPACE, the former default, no trial got below 300
    features. 10 trials instead of the issue's 30 keep the test short: 5 of those 10 meet the
    budget (measured: F1 1.0)."""
    X, y, support = make_correlated_linear(300, 300, correlation=0.5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # trials above the budget are not warned of
        best = fit_budget(SkinnyTreesRegressor(), X, y, max_features=16, n_trials=10, random_state=0)
    assert 0 < best.n_selected_features_ <= 16
    true_positives = np.intersect1d(best.selected_features_, support).size
    assert 2 * true_positives / (best.n_selected_features_ + support.size) >= 0.9
    assert (best.budget_search_.n_selected > 0).sum() >= 5


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 4 epochs: only the value counts
def test_auto_lambda2_is_the_dense_default_without_a_budget_and_the_budget_rule_with_one(monkeypatch):
    """lambda2="auto": 0.01 without a budget (or a budget of p or more); with K < p,
    5 ln(p/K) m(2^d-1) / (2 lr T), T = max_epochs * ceil(n_train / batch_size), by hand (the
    value its first training uses; no search after it here)."""
    monkeypatch.setattr(skinny_estimators, "AUTO_RIDGE_RETRIES", 0)
    X, y, _ = make_correlated_linear(100, 20, random_state=0)
    params = dict(n_trees=3, depth=2, max_epochs=4, batch_size=32, learning_rate=0.1, random_state=0)
    assert SkinnyTreesRegressor(**params).get_params()["lambda2"] == "auto"
    assert SkinnyTreesRegressor(**params).fit(X, y).lambda2_ == 0.01
    assert SkinnyTreesRegressor(**params, feature_budget=20).fit(X, y).lambda2_ == 0.01
    # 100 rows in batches of 32: 4 steps an epoch, 16 in all; 3 trees of 3 splits
    by_hand = 5 * math.log(20 / 4) * 9 / (2 * 0.1 * 16)
    assert SkinnyTreesRegressor(**params, feature_budget=4).fit(X, y).lambda2_ == pytest.approx(by_hand, rel=1e-12)
    # the rule counts the training rows left after early stopping's split: 80 rows, 3 steps an epoch
    split = SkinnyTreesRegressor(**params, feature_budget=4, early_stopping=True).fit(X, y)
    assert split.lambda2_ == pytest.approx(by_hand * 4 / 3, rel=1e-12)
    assert SkinnyTreesClassifier(**params, feature_budget=0).fit(X, y > 0).lambda2_ == pytest.approx(
        5 * math.log(20) * 9 / (2 * 0.1 * 16), rel=1e-12)
    assert SkinnyTreesRegressor(**params, lambda2=0.3, feature_budget=4).fit(X, y).lambda2_ == 0.3


def test_a_plain_fit_with_a_budget_meets_it_on_the_issue_24_problem():
    """The estimator's defaults with feature_budget=16 on p = N = 300 with 8 true features (lambda2
    = 0.01, the former default, kept all 300; bench/studies/skinny_defaults.py --lambda2 measured 8
    features, F1 1.0, on seeds 0-2)."""
    X, y, support = make_correlated_linear(300, 300, correlation=0.5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = SkinnyTreesRegressor(feature_budget=16, random_state=0).fit(X, y)
    assert 0 < model.n_selected_features_ <= 16
    true_positives = np.intersect1d(model.selected_features_, support).size
    assert 2 * true_positives / (model.n_selected_features_ + support.size) >= 0.9


@pytest.mark.parametrize("Estimator", [SkinnyTreesRegressor, SkinnyTreesClassifier])
def test_auto_lambda2_without_a_budget_fits_exactly_as_lambda2_0_01(Estimator):
    X, y, _ = make_correlated_linear(120, 15, random_state=1)
    target = y if Estimator is SkinnyTreesRegressor else y > np.median(y)
    auto = Estimator(**FAST).fit(X, target)
    fixed = Estimator(**FAST, lambda2=0.01).fit(X, target)
    out = "predict" if Estimator is SkinnyTreesRegressor else "predict_proba"
    np.testing.assert_array_equal(getattr(auto, out)(X), getattr(fixed, out)(X))
    np.testing.assert_array_equal(auto.split_weights_, fixed.split_weights_)


def test_fit_budget_leaves_lambda2_to_the_auto_rule_when_its_space_does_not_draw_it():
    X, y, _ = make_correlated_linear(200, 40, correlation=0.5, random_state=5)
    base = SkinnyTreesRegressor(n_trees=5, depth=2, batch_size=32, max_epochs=60)
    best = fit_budget(base, X, y, max_features=10, n_trials=2, random_state=0,
                      param_distributions={"learning_rate": [0.05, 0.1]})
    assert best.lambda2 == "auto" and 0 < best.n_selected_features_ <= 10
    # 160 training rows (fit_budget's 20 % validation split): 5 steps an epoch
    assert best.lambda2_ == pytest.approx(5 * math.log(40 / 10) * 15 / (2 * best.learning_rate * 60 * 5), rel=1e-12)


def test_auto_lambda2_trains_again_with_a_stronger_ridge_until_the_budget_is_met(monkeypatch):
    """Above the budget the ridge doubles, with no feature it halves, from the same initial weights
    and mini-batches: the model equals a fit at the ridge the search ended on. Without the search
    the same fits kept 14 of 40 features (warned), and none of 50 (now warned too)."""
    X, y, _ = make_correlated_linear(120, 40, n_informative=20, random_state=0)
    params = dict(n_trees=4, depth=2, max_epochs=40, feature_budget=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = SkinnyTreesRegressor(**params).fit(X, y)
    rule = skinny_estimators.auto_lambda2(120, 40, feature_budget=2, n_trees=4, depth=2, learning_rate=0.1,
                                          batch_size=64, max_epochs=40)
    assert model.n_selected_features_ == 2 and model.lambda2_ == pytest.approx(4 * rule, rel=1e-12)
    fixed = SkinnyTreesRegressor(**{**params, "lambda2": model.lambda2_}).fit(X, y)
    np.testing.assert_array_equal(model.split_weights_, fixed.split_weights_)
    rng = np.random.default_rng(0)
    G = rng.standard_normal((200, 50))
    labels = (G[:, 0] + G[:, 1] + 0.5 * rng.standard_normal(200) > 0).astype(int)
    found = SkinnyTreesClassifier(feature_budget=2, random_state=0).fit(G, labels)
    assert found.selected_features_.tolist() == [0, 1] and found.lambda2_ == pytest.approx(
        skinny_estimators.auto_lambda2(200, 50, feature_budget=2, n_trees=20, depth=4, learning_rate=0.1,
                                       batch_size=64, max_epochs=200) / 2, rel=1e-12)
    monkeypatch.setattr(skinny_estimators, "AUTO_RIDGE_RETRIES", 0)
    with pytest.warns(ConvergenceWarning, match=r"feature_budget=2: the model returned selects 14 "):
        SkinnyTreesRegressor(**params).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="Skinny Trees dropped every feature: the model predicts a constant"):
        SkinnyTreesClassifier(feature_budget=2, random_state=0).fit(G, labels)


def test_the_ridge_search_doubles_halves_then_bisects_until_half_the_budget_is_used():
    next_ridge = skinny_estimators.next_ridge
    assert next_ridge([(10.0, 3)], 5) is None  # the rule's model within the budget: no search
    assert next_ridge([(10.0, 30)], 5) == 20.0 and next_ridge([(10.0, 0)], 5) == 5.0
    assert next_ridge([(10.0, 30), (20.0, 0)], 5) == pytest.approx(math.sqrt(200))
    assert next_ridge([(10.0, 30), (20.0, 1)], 5) == pytest.approx(math.sqrt(200))  # 1 of 5: too few
    assert next_ridge([(10.0, 30), (20.0, 1), (14.0, 3)], 5) is None
    assert next_ridge([(10.0, 0), (5.0, 1)], 10) == 2.5
    assert next_ridge([(10.0, 30), (20.0, 12), (40.0, 0)], 10) == pytest.approx(math.sqrt(800))


def test_a_model_above_its_budget_says_what_to_change():
    X, y, _ = make_correlated_linear(60, 12, random_state=0)
    model = SkinnyTreesRegressor(n_trees=2, depth=2, lambda2=0.01, max_epochs=3, feature_budget=2, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"feature_budget=2: the model returned selects 12 .*raise lambda2"):
        model.fit(X, y)
    assert model.n_selected_features_ == 12


def test_a_model_with_every_group_dropped_predicts_a_constant():
    X, y, _ = make_correlated_linear(50, 5, n_informative=1, random_state=0)
    model = SkinnyTreesRegressor(n_trees=2, depth=2, lambda0=1e6, temperature=None, max_epochs=3,
                                 random_state=0).fit(X, y)
    assert model.n_selected_features_ == 0 and model.selected_features_.size == 0
    pred = model.predict(X)
    np.testing.assert_allclose(pred, pred[0], rtol=1e-14)  # BLAS may round rows of P @ O differently
    np.testing.assert_allclose(pred, model._raw_dense(X)[:, 0], rtol=1e-14)
