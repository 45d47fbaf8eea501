"""p-values of feature importances (pyinterp.significance): Benjamini-Hochberg against brute force,
the hold-out permutation importance's invariants, p-values computed as defined, calibration under
simulated global nulls (Kolmogorov-Smirnov over 200 nulls) and the FDR of the selection with known
signal."""

import doctest
import warnings

import numpy as np
import pytest
from conftest import read_csv_exact
from scipy import stats
from sklearn.ensemble import RandomForestRegressor as SkForest

from pyinterp import RandomForestClassifier, RandomForestRegressor, significance
from pyinterp.importance import _held_out_permutation
from pyinterp.significance import bh_qvalues, importance_pvalues


def brute_force_bh(p):
    """q_i = min over the p-values p_j >= p_i of p_j m / (the number of p-values <= p_j)."""
    m = len(p)
    return np.array([min(1.0, min(pj * m / np.sum(p <= pj) for pj in p if pj >= pi)) for pi in p])


@pytest.mark.parametrize("seed", range(5))
def test_bh_qvalues_are_the_step_up_procedure(seed):
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(size=30), rng.uniform(0, 0.01, size=5), [0.02, 0.02]])
    q = bh_qvalues(p)
    np.testing.assert_allclose(q, brute_force_bh(p), rtol=1e-12)
    for alpha in (0.05, 0.1, 0.2):
        # the step-up rule: reject the k smallest, k the largest with p_(k) <= alpha k / m
        ranked = np.sort(p)
        passing = np.flatnonzero(ranked <= alpha * np.arange(1, len(p) + 1) / len(p))
        k = passing[-1] + 1 if len(passing) else 0
        assert np.sum(q <= alpha) == k


def data(n, p, signal, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = X[:, :signal].sum(axis=1) * 0.7 + rng.standard_normal(n)
    return X, y


def test_held_out_importance_invariants():
    X, y = data(200, 30, 2, seed=0)
    forest = RandomForestRegressor(n_estimators=20, max_features=0.5, random_state=0).fit(X[:100], y[:100])
    a = _held_out_permutation(forest, X[100:], y[100:], n_repeats=2, random_state=3, n_jobs=1)
    b = _held_out_permutation(forest, X[100:], y[100:], n_repeats=2, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(a, b)  # thread count does not matter
    used = np.zeros(30, bool)
    for tree in forest.trees_:
        used[tree.feature[tree.feature >= 0]] = True
    assert np.all(a[~used] == 0.0)  # a feature no tree splits on changes no prediction
    assert set(np.argsort(-a)[:2]) == {0, 1}
    # one tree, a feature that alone decides y: permuting it on held-out rows costs about 2 var(y)
    Z = np.random.default_rng(1).standard_normal((400, 3))
    stump = RandomForestRegressor(n_estimators=1, bootstrap=False, max_features=None, random_state=0)
    stump.fit(Z[:200], (Z[:200, 0] > 0).astype(float))
    z = (Z[200:, 0] > 0).astype(float)
    imp = _held_out_permutation(stump, Z[200:], z, n_repeats=50, random_state=0, n_jobs=1)
    assert abs(imp[0] - 2 * z.var()) < 0.05 and imp[1] == imp[2] == 0.0
    # scikit-learn's forests are read too
    sk = SkForest(n_estimators=10, random_state=0).fit(X[:100], y[:100])
    assert _held_out_permutation(sk, X[100:], y[100:], n_repeats=1, random_state=0, n_jobs=1).shape == (30,)


def test_pvalues_follow_their_definitions():
    X, y = data(300, 400, 3, seed=1)
    forest = RandomForestRegressor(n_estimators=60, max_features=0.3)
    test = importance_pvalues(forest, X, y, random_state=0)
    v = test.importances
    null = np.sort(np.concatenate([v[v < 0], v[v == 0], -v[v < 0]]))
    np.testing.assert_array_equal(test.null, null)
    expected = np.array([(1 + np.sum(null >= x)) / (1 + len(null)) for x in v])
    np.testing.assert_array_equal(test.pvalues, expected)
    np.testing.assert_array_equal(test.qvalues, bh_qvalues(expected))
    assert np.all(test.pvalues[:3] == 1 / (1 + len(null)))
    # the same seed gives the same test, whatever the thread count
    again = importance_pvalues(forest, X, y, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(again.pvalues, test.pvalues)

    small = X[:, :6]
    alt = importance_pvalues(RandomForestRegressor(n_estimators=20), small, y, method="altmann", n_permutations=9,
                             random_state=0)
    assert alt.null.shape == (9, 6)
    np.testing.assert_array_equal(alt.pvalues, (1 + (alt.null >= alt.importances).sum(axis=0)) / 10)
    assert np.all(alt.pvalues[:3] == 0.1)  # no refit on permuted y reaches the causes' importance


def test_names_and_tables():
    pd = pytest.importorskip("pandas")
    X, y = data(200, 300, 2, seed=2)
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(300)])
    test = importance_pvalues(RandomForestRegressor(n_estimators=30, max_features=0.3), frame, y, random_state=0)
    table = test.to_frame()
    assert list(table.columns) == ["feature", "importance", "pvalue", "qvalue"]
    assert set(table["feature"][:2]) == {"gene0", "gene1"} and table["pvalue"].is_monotonic_increasing
    assert "janitza" in repr(test)


def test_classification_halves_keep_every_class():
    X, y = data(200, 300, 2, seed=3)
    yc = np.where(y > 0, "case", "control")
    test = importance_pvalues(RandomForestClassifier(n_estimators=30), X, yc, random_state=0)
    assert test.pvalues.shape == (300,) and set(np.argsort(test.pvalues)[:2]) == {0, 1}
    with pytest.raises(ValueError, match="y: class 'rare' has 1 row"):
        importance_pvalues(RandomForestClassifier(), X, np.where(np.arange(200) == 0, "rare", yc))


def test_bad_input_is_named():
    X, y = data(100, 4, 2, seed=4)
    with pytest.raises(ValueError, match="Janitza's null is empty"):  # every feature a cause
        importance_pvalues(RandomForestRegressor(n_estimators=10), X[:, :2], 10 * X[:, :2].sum(axis=1), random_state=0)
    with pytest.warns(UserWarning, match="only .* features have a negative hold-out importance, so the tail"):
        importance_pvalues(RandomForestRegressor(n_estimators=10), np.random.default_rng(0).standard_normal((100, 40)),
                           y, random_state=0)
    with pytest.raises(ValueError, match="y has 99 entries for 100 rows of X"):
        importance_pvalues(RandomForestRegressor(), X, y[:-1])
    with pytest.raises(ValueError, match="method"):
        importance_pvalues(RandomForestRegressor(), X, y, method="ranger")
    with pytest.raises(ValueError, match="n_permutations"):
        importance_pvalues(RandomForestRegressor(), X, y, method="altmann", n_permutations=0)


def test_the_docstring_examples_run():
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = doctest.DocTestFinder().find(significance, "significance", globs={})
    assert sum(len(t.examples) for t in tests) >= 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for test in tests:
            runner.run(test)
    assert runner.failures == 0


@pytest.mark.heavy
def test_janitza_pvalues_are_uniform_under_global_nulls():
    """y independent of X, 200 nulls at fixed seeds: the p-value of one feature is uniform (KS), and
    the share of all features' p-values at or below 0.05 is at most 0.05 (binomial margin)."""
    first, pooled = [], []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        X, y = rng.standard_normal((80, 300)), rng.standard_normal(80)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a few nulls have fewer than 100 negative importances
            test = importance_pvalues(RandomForestRegressor(n_estimators=20, max_features=0.3), X, y, random_state=seed)
        first.append(test.pvalues[0])
        pooled.append(test.pvalues)
    assert stats.kstest(first, "uniform").pvalue > 0.01
    pooled = np.concatenate(pooled)
    assert np.mean(pooled <= 0.05) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 200)


@pytest.mark.heavy
def test_altmann_pvalues_are_uniform_under_global_nulls():
    """Exact permutation p-values on the grid k / 20: P(p <= k / 20) <= k / 20 within sampling error,
    over 200 nulls, binary y."""
    pvalues = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        X, y = rng.standard_normal((40, 3)), rng.integers(0, 2, 40)
        test = importance_pvalues(RandomForestClassifier(n_estimators=10), X, y, method="altmann", n_permutations=19,
                                  random_state=seed)
        pvalues.append(test.pvalues[0])
    pvalues = np.array(pvalues)
    for k in (1, 2, 5, 10):
        assert np.mean(pvalues <= k / 20) <= k / 20 + 3 * np.sqrt(k / 20 * (1 - k / 20) / 200)
    assert stats.kstest(pvalues + np.random.default_rng(0).uniform(-1 / 20, 0, 200), "uniform").pvalue > 0.01


@pytest.mark.heavy
def test_janitza_selection_keeps_its_false_discovery_rate():
    """100 simulations with 20 causes among 500 features: the mean false-discovery proportion of the
    BH selection at q = 0.1 stays at or below 0.1."""
    proportions = []
    for seed in range(100):
        X, y = data(150, 500, 20, seed=1000 + seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            test = importance_pvalues(RandomForestRegressor(n_estimators=30, max_features=0.3), X, y, random_state=seed)
        chosen = test.selected(0.1)
        proportions.append(np.mean(chosen >= 20) if len(chosen) else 0.0)
    assert np.mean(proportions) <= 0.1


def run(capsys, *argv):
    from pyinterp import cli

    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_tables_carry_the_pvalues(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    X, y = data(200, 250, 3, seed=5)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(250)]).assign(response=y)
    frame.to_csv(tmp_path / "wide.csv", index=False)
    code, out, err = run(capsys, "importance", tmp_path / "wide.csv", "--target", "response", "--n-estimators", 30,
                         "--n-jobs", 1, "--out", tmp_path / "out")
    assert (code, err) == (0, ""), err
    assert "p-values (" in out and "Janitza's hold-out test" in out and "q-values: Benjamini-Hochberg" in out
    table = read_csv_exact(tmp_path / "out" / "importances.csv").set_index("feature")
    expected = importance_pvalues(RandomForestRegressor(n_estimators=30), frame.drop(columns="response"), y,
                                  random_state=0)
    names = list(expected.feature_names)
    np.testing.assert_array_equal(table.loc[names, "janitza_importance"], expected.importances)
    np.testing.assert_array_equal(table.loc[names, "pvalue"], expected.pvalues)
    np.testing.assert_array_equal(table.loc[names, "qvalue"], expected.qvalues)
    assert "janitza_importance" in (tmp_path / "out" / "report.html").read_text()

    code, out, err = run(capsys, "importance", tmp_path / "wide.csv", "--target", "response", "--n-estimators", 10,
                         "--pvalues", "none", "--out", tmp_path / "plain")
    assert code == 0 and "p-value" not in out
    assert "pvalue" not in pd.read_csv(tmp_path / "plain" / "importances.csv").columns


def test_few_features_get_no_janitza_test_unless_asked_for_altmann(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    X, y = data(120, 6, 2, seed=6)
    pd.DataFrame(X, columns=list("abcdef")).assign(y=y).to_csv(tmp_path / "narrow.csv", index=False)
    code, out, err = run(capsys, "importance", tmp_path / "narrow.csv", "--target", "y", "--n-estimators", 30)
    assert code == 0 and "No p-values: Janitza's test draws its null from the features without effect" in out
    code, out, err = run(capsys, "importance", tmp_path / "narrow.csv", "--target", "y", "--n-estimators", 30,
                         "--pvalues", "altmann", "--n-permutations", 19, "--out", tmp_path / "out")
    assert (code, err) == (0, ""), err
    assert "Altmann's test" in out and "19 refits on permuted targets" in out
    table = pd.read_csv(tmp_path / "out" / "importances.csv").set_index("feature")
    assert table.loc[["a", "b"], "pvalue"].tolist() == [0.05, 0.05]  # 1 / (19 + 1): no refit reaches them
