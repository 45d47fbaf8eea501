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
    from pyinterp import _knockoffs

    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    finder = doctest.DocTestFinder()
    tests = finder.find(significance, "significance", globs={}) + finder.find(_knockoffs, "_knockoffs", globs={})
    assert sum(len(t.examples) for t in tests) >= 16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for test in tests:
            runner.run(test)
    assert runner.failures == 0


def genotype_blocks(rng, n, p, block=10, correlation=0.8):
    """Packed genotypes of n samples at p SNPs in LD blocks: each haplotype thresholds an AR(1)
    latent (correlation within a block, none across), minor-allele frequencies 0.05-0.5."""
    from pyinterp.io import PackedGenotypes
    from pyinterp.io.packing import pack_counts

    latent = np.empty((2 * n, p))
    latent[:, 0] = rng.standard_normal(2 * n)
    for j in range(1, p):
        r = 0.0 if j % block == 0 else correlation
        latent[:, j] = r * latent[:, j - 1] + np.sqrt(1 - r * r) * rng.standard_normal(2 * n)
    alleles = latent < stats.norm.ppf(rng.uniform(0.05, 0.5, p))
    counts = (alleles[:n].astype(np.int8) + alleles[n:]).T
    return PackedGenotypes(pack_counts(counts), n)


def randomized(test, rng):
    """Janitza's p-values with their ties to the null broken at random: (#null > v + U (1 + #null
    == v)) / (1 + N), uniform when v is a draw from the null. A feature no tree splits on, or whose
    permutation moves no prediction, scores exactly 0, and the zeros are an atom of the null (half
    the features in the genotype design below): there the test's own p-values are discrete."""
    null, v = test.null, test.importances
    above = len(null) - np.searchsorted(null, v, side="right")
    equal = np.searchsorted(null, v, side="right") - np.searchsorted(null, v, side="left")
    return (above + rng.uniform(size=len(v)) * (1 + equal)) / (1 + len(null))


@pytest.mark.heavy
@pytest.mark.parametrize("null", ["gaussian", "genotypes_ld_cases"])
def test_janitza_pvalues_are_uniform_under_global_nulls(null):
    """y independent of X, 200 nulls at fixed seeds: the p-value of one feature, ties with the null
    broken at random, is uniform (KS), and the share of all features' p-values at or below 0.01,
    0.05 and 0.1 is at most that (binomial margin). X is Gaussian with a continuous y, or packed
    genotypes in LD blocks with a case/control y."""
    first, pooled = [], []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        if null == "gaussian":
            X, y = rng.standard_normal((80, 300)), rng.standard_normal(80)
            forest = RandomForestRegressor(n_estimators=20, max_features=0.3)
        else:
            X, y = genotype_blocks(rng, 120, 300), rng.integers(0, 2, 120)
            forest = RandomForestClassifier(n_estimators=20, max_features=0.3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a few nulls have fewer than 100 negative importances
            test = importance_pvalues(forest, X, y, random_state=seed)
        first.append(randomized(test, rng)[0])
        pooled.append(test.pvalues)
    assert stats.kstest(first, "uniform").pvalue > 0.01
    pooled = np.concatenate(pooled)
    for level in (0.01, 0.05, 0.1):
        assert np.mean(pooled <= level) <= level + 3 * np.sqrt(level * (1 - level) / 200)


@pytest.mark.heavy
@pytest.mark.parametrize("null", ["gaussian", "genotypes_ld"])
def test_altmann_pvalues_are_uniform_under_global_nulls(null):
    """Exact permutation p-values on the grid k / 20: P(p <= k / 20) <= k / 20 within sampling error,
    over 200 nulls, binary y; X Gaussian, or packed genotypes in LD (one block of 3 SNPs)."""
    pvalues = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((40, 3)) if null == "gaussian" else genotype_blocks(rng, 40, 3)
        y = rng.integers(0, 2, 40)
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
    table = read_csv_exact(tmp_path / "out" / "importances.csv").set_index("feature")
    assert table.loc[["a", "b"], "pvalue"].tolist() == [0.05, 0.05]  # 1 / (19 + 1): no refit reaches them


# ---------------------------------------------------------------- interaction tests


def brute_force_rule_test(values, y, signs, thresholds, cuts):
    """OLS of y on an intercept, the steps 1(x_j > c) for the cuts given, and the rule's indicator;
    HC2 standard errors summed row by row; the two-sided t-test of the indicator with Bell and
    McCaffrey's degrees of freedom from the eigenvalues of W M W, all as n x n matrices."""
    inside = np.ones(len(y), bool)
    for j, (s, t) in enumerate(zip(signs, thresholds)):
        inside &= values[:, j] > t if s > 0 else values[:, j] <= t
    D = np.column_stack([np.ones(len(y))] + [(values[:, j] > c).astype(float) for j, c in cuts] + [inside])
    beta = np.linalg.lstsq(D, y, rcond=None)[0]
    bread = np.linalg.inv(D.T @ D)
    H = D @ bread @ D.T
    M = np.eye(len(y)) - H
    meat = np.zeros((D.shape[1], D.shape[1]))
    for i in range(len(y)):
        e = y[i] - D[i] @ beta
        meat += np.outer(D[i], D[i]) * e ** 2 / (1 - H[i, i])
    se = np.sqrt((bread @ meat @ bread)[-1, -1])
    W = np.diag((bread @ D.T)[-1] / np.sqrt(1 - np.diag(H)))
    eigenvalues = np.linalg.eigvalsh(W @ M @ W)
    df = eigenvalues.sum() ** 2 / (eigenvalues ** 2).sum()
    return beta[-1], 2 * stats.t.sf(abs(beta[-1] / se), df)


def test_the_rule_test_is_least_squares_with_hc2_errors_and_bell_mccaffrey_df():
    from pyinterp.significance import _rule_test

    rng = np.random.default_rng(7)
    G = rng.binomial(2, 0.4, (300, 2)).astype(float)  # genotypes: a step at each level
    y = 0.5 * G[:, 0] + 1.0 * (G[:, 0] > 0) * (G[:, 1] == 2) + rng.standard_normal(300) * (1 + G[:, 1])
    effect, p, inside = _rule_test(G, y, np.array([1, 1]), np.array([0.5, 1.5]), n_bins=5)
    expected = brute_force_rule_test(G, y, [1, 1], [0.5, 1.5], [(0, 0.5), (0, 1.5), (1, 0.5), (1, 1.5)])
    np.testing.assert_allclose([effect, p], expected, rtol=1e-9)
    assert inside == int(np.sum((G[:, 0] > 0.5) & (G[:, 1] > 1.5)))
    # continuous columns: steps at the quartiles (n_bins=4) and at the rule's threshold
    X = rng.standard_normal((200, 2))
    z = X[:, 0] ** 2 + rng.standard_normal(200)
    effect, p, _ = _rule_test(X, z, np.array([-1, 1]), np.array([0.3, -0.5]), n_bins=4)
    cuts = [(j, c) for j, t in ((0, 0.3), (1, -0.5)) for c in sorted({*np.quantile(X[:, j], [0.25, 0.5, 0.75]), t})]
    np.testing.assert_allclose([effect, p], brute_force_rule_test(X, z, [-1, 1], [0.3, -0.5], cuts), rtol=1e-9)
    # a quantile within 5 rows of the threshold makes no step of its own (its bin would be fitted exactly)
    near = np.sort(X[:, 1])[np.searchsorted(np.sort(X[:, 1]), np.quantile(X[:, 1], 0.5)) + 2]
    effect, p, _ = _rule_test(X, z, np.array([-1, 1]), np.array([0.3, near]), n_bins=4)
    cuts = [(0, c) for c in sorted({*np.quantile(X[:, 0], [0.25, 0.5, 0.75]), 0.3})]
    cuts += [(1, c) for c in (np.quantile(X[:, 1], 0.25), near, np.quantile(X[:, 1], 0.75))]
    np.testing.assert_allclose([effect, p], brute_force_rule_test(X, z, [-1, 1], [0.3, near], cuts), rtol=1e-9)
    # a cell the additive model spans (no row inside) has no test
    assert np.isnan(_rule_test(X, z, np.array([1, 1]), np.array([9.0, 9.0]), n_bins=4)[1])


def test_a_rule_of_three_is_tested_beyond_its_pairs():
    """y holds the pair x0+ & x1+: the pair is significant, the triple adding x2 (no effect) is
    tested against the pair's rules too, and over 200 data sets its p-values are uniform."""
    from pyinterp.significance import _rule_test

    signs, thresholds = np.array([1, 1, -1]), np.array([0.0, 0.0, 0.3])
    pair, triple = [], []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((300, 3))
        y = 1.0 * (X[:, 0] > 0) * (X[:, 1] > 0) + rng.standard_normal(300)
        pair.append(_rule_test(X[:, :2], y, signs[:2], thresholds[:2], n_bins=5)[1])
        triple.append(_rule_test(X, y, signs, thresholds, n_bins=5)[1])
    assert np.median(pair) < 1e-3
    assert stats.kstest(triple, "uniform").pvalue > 0.01


def test_a_set_no_leaf_holds_is_kept_untested():
    """A set whose signed features no leaf's path of the finder's forest holds (iRF finds sets on
    its bootstrap forests) has no thresholds: its record says so with NaN, and the others are
    tested as they would be alone."""
    from pyinterp import LSSFind
    from pyinterp.interactions.rules import NoThresholdsError
    from pyinterp.significance import interaction_pvalues

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 6))
    y = 2.0 * (X[:, 0] > 0.5) * (X[:, 1] > 0.5) + 0.5 * rng.standard_normal(600)
    lss = LSSFind(n_estimators=10, max_depth=2, random_state=0).fit(X[:300], y[:300])
    absent = ((0, 1), (1, 1), (2, 1), (3, 1), (4, 1))  # five features: no path of depth 2 holds it
    with pytest.raises(NoThresholdsError, match="no leaf's path contains"):
        lss.rule(absent)
    pair = ((0, 1), (1, 1))
    both = interaction_pvalues(lss, X[300:], y[300:], interactions=[absent, pair])
    alone = interaction_pvalues(lss, X[300:], y[300:], interactions=[pair])
    assert both.features == [absent, pair]
    assert all(np.isnan(both[c][0]) for c in ("effect", "pvalue", "qvalue", "n_rule", "n_rows"))
    for c in ("effect", "pvalue", "qvalue", "n_rule", "n_rows"):
        assert both[c][1] == alone[c][0]
    assert alone["pvalue"][0] < 1e-10


def test_interactions_found_on_one_half_are_tested_on_the_other():
    pd = pytest.importorskip("pandas")
    from pyinterp import IterativeRandomForest, LSSFind
    from pyinterp.significance import interaction_pvalues

    rng = np.random.default_rng(8)
    X = pd.DataFrame(rng.uniform(size=(1600, 8)), columns=[f"g{j}" for j in range(8)])
    y = 2.0 * (X["g2"] > 0.5) * (X["g5"] <= 0.4) + X["g0"] + 0.5 * rng.standard_normal(1600)
    train, test = slice(0, 800), slice(800, 1600)
    lss = LSSFind(n_estimators=40, max_features=0.5, mode="rank", random_state=0).fit(X[train], y[train])
    tested = interaction_pvalues(lss, X[test], y[test])
    assert all(len(f) >= 2 for f in tested.features)
    assert tested.features == [f for f in lss.interactions_.features if len(f) >= 2]
    top = tested[0]
    assert tested.label(top.features) == "g2+ & g5-" and top.qvalue < 1e-10 and top.n_rows == 800
    tested_p = ~np.isnan(tested["pvalue"])
    assert tested_p.sum() >= len(tested) - 2 and np.isnan(tested["qvalue"][~tested_p]).all()
    np.testing.assert_array_equal(tested["qvalue"][tested_p], bh_qvalues(tested["pvalue"][tested_p]))
    # missing values leave their rows out of the tests of the sets they touch
    holed = X[test].copy()
    holed.iloc[:50, 2] = np.nan
    again = interaction_pvalues(lss, holed, y[test], interactions=[top.features, ((0, 1), (7, 1))])
    assert again["n_rows"].tolist() == [750, 800]
    # iRF of classes: the class of interest's indicator
    classes = np.where(y > 1.5, "high", "low")
    irf = IterativeRandomForest(n_estimators=30, n_bootstraps=3, class_id="high", random_state=0)
    irf.fit(X[train], classes[train])
    result = interaction_pvalues(irf, X[test], classes[test])
    pair = [i for i, f in enumerate(result.features) if {k for k, _ in f} == {2, 5}]
    assert pair and result["pvalue"][pair[0]] < 1e-6


def test_interaction_test_errors_are_named():
    from pyinterp import LSSFind
    from pyinterp.significance import interaction_pvalues

    X, y = data(200, 4, 2, seed=9)
    with pytest.raises(Exception, match="not fitted"):
        interaction_pvalues(LSSFind(), X, y)
    lss = LSSFind(n_estimators=10, mode="rank", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="y has 199 entries for 200 rows of X"):
        interaction_pvalues(lss, X, y[:-1], interactions=[((0, 1), (1, 1))])
    with pytest.raises(ValueError, match="y must hold numbers"):
        interaction_pvalues(lss, X, np.array(["a"] * 200), interactions=[((0, 1), (1, 1))])
    with pytest.raises(ValueError, match="n_bins"):
        interaction_pvalues(lss, X, y, n_bins=1)


def ld_genotypes(rng, n, correlation=0.8):
    """Two SNPs in linkage disequilibrium: binomial(2, 0.3) calls thresholded from correlated normals."""
    latent = rng.multivariate_normal([0, 0], [[1, correlation], [correlation, 1]], size=(n, 2))
    cut = stats.norm.ppf(0.7)
    return (latent > cut).sum(axis=1).astype(float)


@pytest.mark.heavy
@pytest.mark.parametrize("null", ["gaussian", "binary", "additive", "logistic", "genotypes_ld"])
def test_interaction_pvalues_are_uniform_under_nulls_without_interaction(null):
    """200 simulated data sets per null, the rule x0+ & x1- at fixed thresholds: Kolmogorov-Smirnov
    does not reject uniformity at 0.01, and P(p <= 0.05) stays within sampling error of 0.05."""
    from pyinterp.significance import _rule_test

    pvalues = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((400, 2))
        thresholds = np.array([0.0, 0.5])
        if null == "gaussian":
            y = rng.standard_normal(400)
        elif null == "binary":
            y = rng.integers(0, 2, 400).astype(float)
        elif null == "additive":  # nonlinear main effects, unequal noise
            y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.5 * rng.standard_normal(400) * (1 + np.abs(X[:, 0]))
        elif null == "logistic":  # additive on the logit scale
            y = (rng.random(400) < 1 / (1 + np.exp(-(2 * X[:, 0] + X[:, 1] ** 2 - 1)))).astype(float)
        else:  # two SNPs in LD, a dominant and an additive effect
            X = ld_genotypes(rng, 400)
            y = 0.6 * (X[:, 0] > 0) + 0.4 * X[:, 1] + rng.standard_normal(400)
            thresholds = np.array([0.5, 1.5])
        pvalues.append(_rule_test(X, y, np.array([1, -1]), thresholds, n_bins=5)[1])
    pvalues = np.array(pvalues)
    pvalues = pvalues[~np.isnan(pvalues)]  # LD can leave the cell or a step with one row or none
    assert len(pvalues) >= 150  # in strong LD, 27 of 200 here
    assert stats.kstest(pvalues, "uniform").pvalue > 0.01
    assert np.mean(pvalues <= 0.05) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 200)


def test_the_command_line_tests_interactions_on_held_out_rows(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    from pyinterp import LSSFind
    from pyinterp.datasets import make_lss
    from pyinterp.significance import interaction_pvalues

    X, y, _ = make_lss(n_samples=600, n_features=10, n_interactions=1, order=2, snr=5.0, random_state=0)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(10)]).assign(response=y)
    frame.to_csv(tmp_path / "lss.csv", index=False)
    code, out, err = run(capsys, "interactions", tmp_path / "lss.csv", "--target", "response", "--holdout", 0.4,
                         "--n-estimators", 30, "--n-jobs", 1, "--random-state", 2, "--out", tmp_path / "out")
    assert (code, err) == (0, ""), err
    assert "on 360 rows" in out and "on the 240 held-out rows it was not fitted on" in out
    held = np.sort(np.random.RandomState(2).permutation(600)[:240])
    kept = np.setdiff1d(np.arange(600), held)
    features = frame.drop(columns="response")
    lss = LSSFind(random_state=2, n_jobs=1).fit(features.iloc[kept], y[kept])
    expected = interaction_pvalues(lss, features.iloc[held], y[held], interactions=lss.selected_)
    table = read_csv_exact(tmp_path / "out" / "lssfind.csv")
    assert table.columns[6:9].tolist() == ["effect", "pvalue", "qvalue"]
    pairs = table[table["order"] >= 2]
    assert list(pairs["interaction"]) == [expected.label(f) for f in expected.features]
    np.testing.assert_array_equal(pairs["pvalue"], expected["pvalue"])
    assert table[table["order"] == 1]["pvalue"].isna().all()
    irf = read_csv_exact(tmp_path / "out" / "irf.csv")
    assert {"effect", "pvalue", "qvalue"} <= set(irf.columns)
    code, out, err = run(capsys, "interactions", tmp_path / "lss.csv", "--target", "response", "--n-estimators", 10)
    assert "No p-values for interactions: --holdout 0.5" in out
    with pytest.raises(SystemExit):
        run(capsys, "interactions", tmp_path / "lss.csv", "--target", "response", "--holdout", 1.5)
