"""The regression criteria beside squared error: poisson, absolute_error, and friedman_mse as
scikit-learn 1.9 maps it. Tree-for-tree equality with scikit-learn is in test_sklearn_parity.py."""

import pickle

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.model_selection import train_test_split

from pyinterp import RandomForestRegressor
from pyinterp.importance import mdi, mdi_oob, naive_oob, ufi

CRITERIA = ["poisson", "absolute_error"]


@pytest.fixture(scope="module")
def counts():
    rng = np.random.RandomState(0)
    X = rng.rand(300, 6)
    y = rng.poisson(np.exp(2 * X[:, 0] + (X[:, 1] > 0.5))).astype(float)
    return X, y


def test_friedman_mse_warns_as_scikit_learn_and_fits_squared_error(counts):
    X, y = counts
    kw = dict(n_estimators=5, max_features=0.5, random_state=0)
    with pytest.warns(FutureWarning, match='Value `"friedman_mse"` for `criterion` is deprecated') as ours:
        friedman = RandomForestRegressor(criterion="friedman_mse", **kw).fit(X, y)
    with pytest.warns(FutureWarning) as theirs:
        ensemble.RandomForestRegressor(criterion="friedman_mse")
    assert str(ours[0].message) == str(theirs[0].message)
    assert friedman.get_params()["criterion"] == "friedman_mse"
    np.testing.assert_array_equal(friedman.predict(X), RandomForestRegressor(**kw).fit(X, y).predict(X))
    assert friedman.to_sklearn().criterion == "squared_error"


@pytest.mark.parametrize("y, message", [([1.0, -1.0, 2.0, 3.0], "Some value\\(s\\) of y are negative"),
                                        ([0.0, 0.0, 0.0, 0.0], "Sum of y is not strictly positive")])
def test_poisson_refuses_targets_as_scikit_learn(y, message):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=message):
        RandomForestRegressor(criterion="poisson").fit(X, y)
    with pytest.raises(ValueError, match=message):
        ensemble.RandomForestRegressor(criterion="poisson").fit(X, y)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_leaf_values_are_the_criterion_minimisers(counts, criterion):
    """Each leaf predicts the weighted mean (poisson) or weighted median (absolute_error) of the
    in-bag rows that reach it, weighted by their bootstrap counts."""
    X, y = counts
    forest = RandomForestRegressor(n_estimators=3, criterion=criterion, min_samples_leaf=5, random_state=1).fit(X, y)
    leaves = forest.apply(X)
    for t, tree in enumerate(forest.trees_):
        counts_t = forest.inbag_counts_[t]
        for leaf in np.flatnonzero(tree.left < 0)[:20]:
            rows = (leaves[:, t] == leaf) & (counts_t > 0)
            w, v = counts_t[rows].astype(float), y[rows]
            if criterion == "poisson":
                expected = np.sum(w * v) / w.sum()
            else:
                order = np.argsort(v, kind="stable")
                cum = np.cumsum(w[order])
                k = int(np.searchsorted(cum, cum[-1] / 2, side="right"))
                vs = v[order]
                expected = (vs[k - 1] + vs[k]) / 2 if k > 0 and cum[k - 1] == cum[-1] / 2 else vs[k]
            assert tree.value[leaf, 0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_deterministic_for_any_n_jobs_and_pickled(counts, criterion):
    X, y = counts
    one = RandomForestRegressor(n_estimators=6, criterion=criterion, max_features=0.5, random_state=3, n_jobs=1)
    two = RandomForestRegressor(n_estimators=6, criterion=criterion, max_features=0.5, random_state=3, n_jobs=2)
    one.fit(X, y)
    two.fit(X, y)
    for a, b in zip(one.trees_, two.trees_):
        np.testing.assert_array_equal(a.threshold, b.threshold)
        np.testing.assert_array_equal(a.impurity, b.impurity)
    again = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(again.predict(X), one.predict(X))
    assert again._forest.criterion.name == criterion


@pytest.mark.parametrize("criterion", CRITERIA)
def test_scaled_targets_give_the_same_trees(counts, criterion):
    """Both impurities are in y's units: scaling y by 2^k scales values, impurities and their
    decreases by 2^k exactly, also beyond the range where the core rescales y itself."""
    X, y = counts
    kw = dict(n_estimators=3, criterion=criterion, max_features=0.5, random_state=0)
    base = RandomForestRegressor(**kw).fit(X, y)
    for k in (-700, 600):
        scaled = RandomForestRegressor(**kw).fit(X, np.ldexp(y, k))
        for a, b in zip(base.trees_, scaled.trees_):
            np.testing.assert_array_equal(a.feature, b.feature)
            np.testing.assert_array_equal(np.ldexp(a.value, k), b.value)
            np.testing.assert_array_equal(np.ldexp(a.impurity, k), b.impurity)
            np.testing.assert_array_equal(np.ldexp(a.impurity_decrease, k), b.impurity_decrease)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_importances_and_export(counts, criterion):
    """MDI sums each tree's recorded deviance decreases; the out-of-bag measures read variance and
    stay finite; the exported scikit-learn forest predicts and weighs features the same."""
    X, y = counts
    forest = RandomForestRegressor(n_estimators=20, criterion=criterion, max_features=0.5, random_state=0).fit(X, y)
    scores = mdi(forest, normalize=True)
    np.testing.assert_allclose(scores, forest.feature_importances_, rtol=1e-12)
    assert scores[:2].sum() > 0.6  # the two features y depends on
    for measure in (mdi_oob, naive_oob, ufi):
        assert np.all(np.isfinite(measure(forest, X, y)))
    sk = forest.to_sklearn()
    assert sk.criterion == criterion
    np.testing.assert_allclose(sk.predict(X), forest.predict(X), rtol=1e-12)
    np.testing.assert_allclose(sk.feature_importances_, forest.feature_importances_, rtol=1e-10)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_held_out_deviance_within_noise_of_scikit_learn(criterion):
    """Same algorithm, other random streams: held-out loss over five splits within two standard
    errors of the paired difference."""
    rng = np.random.RandomState(0)
    X = rng.rand(500, 8)
    y = rng.poisson(np.exp(1 + 2 * X[:, 0] * X[:, 1] + X[:, 2])).astype(float)
    kw = dict(n_estimators=40, criterion=criterion, max_features=0.33, min_samples_leaf=3, n_jobs=2)

    def loss(model, Xte, yte):
        pred = model.predict(Xte)
        if criterion == "absolute_error":
            return np.mean(np.abs(yte - pred))
        return np.mean(pred - yte * np.log(pred))  # Poisson deviance up to a constant

    diffs = []
    for seed in range(5):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
        ours = RandomForestRegressor(random_state=seed, **kw).fit(Xtr, ytr)
        theirs = ensemble.RandomForestRegressor(random_state=seed, **kw).fit(Xtr, ytr)
        diffs.append(loss(ours, Xte, yte) - loss(theirs, Xte, yte))
    diffs = np.array(diffs)
    assert diffs.mean() <= 2 * diffs.std(ddof=1) / np.sqrt(len(diffs)), diffs

