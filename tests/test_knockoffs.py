"""Model-X knockoffs (pyinterp.significance.knockoff_filter): the filter's q-values against a brute
force scan and against knockpy's threshold, the Gaussian knockoffs' moments, the swaps undone,
determinism, the FDR over 100 simulations with known signal, and named errors."""

import sys

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor as SkForest

from pyinterp import RandomForestClassifier, RandomForestRegressor, _knockoffs
from pyinterp.significance import knockoff_filter, knockoff_qvalues

try:
    import knockpy  # noqa: F401

    HAVE_KNOCKPY = True
except ImportError:
    HAVE_KNOCKPY = False
needs_knockpy = pytest.mark.skipif(not HAVE_KNOCKPY, reason="knockpy is not installed")


def brute_force_selection(W, q, offset):
    """The knockoff filter by definition: T = the least t in {|W_j| > 0} with
    (offset + #{W <= -t}) / max(1, #{W >= t}) <= q; select W_j >= T."""
    feasible = [t for t in np.abs(W[W != 0]) if (offset + np.sum(W <= -t)) / max(1, np.sum(W >= t)) <= q]
    return set(np.flatnonzero(W >= min(feasible)).tolist()) if feasible else set()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("offset", [0, 1])
def test_qvalues_select_what_the_filter_selects_at_every_level(seed, offset):
    rng = np.random.default_rng(seed)
    W = np.concatenate([rng.normal(0, 1, 60), rng.uniform(2, 5, rng.integers(0, 25)), [0.0, 0.0]])
    W[:5] = np.round(W[:5])  # ties and zeros
    q = knockoff_qvalues(W, offset)
    assert np.all(q[W <= 0] == np.inf) and np.all(q[W > 0] >= 0) and np.all(np.isfinite(q[W > 0]))
    for level in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9, 1.0, 1.5, 10.0):
        assert set(np.flatnonzero(q <= level).tolist()) == brute_force_selection(W, level, offset)


@needs_knockpy
@pytest.mark.parametrize("seed", range(4))
def test_the_threshold_is_knockpys(seed):
    from knockpy.knockoff_stats import data_dependent_threshhold

    rng = np.random.default_rng(seed)
    W = np.concatenate([rng.normal(0, 1, 200), rng.uniform(1, 6, 30)])  # no zeros, no ties
    for offset in (0, 1):
        q = knockoff_qvalues(W, offset)
        for level in (0.05, 0.1, 0.2):
            T = data_dependent_threshhold(W, fdr=level, offset=offset)
            np.testing.assert_array_equal(q <= level, W >= T)


@pytest.mark.parametrize("s_method", ["equicorrelated", pytest.param("mvr", marks=needs_knockpy)])
@pytest.mark.parametrize("given", [False, True])
def test_gaussian_knockoffs_have_the_knockoff_moments(s_method, given):
    """cov(X~) = Sigma and cov(X, X~) = Sigma - S, S diagonal and 0 <= S <= 2 Sigma's scale; Sigma
    estimated from X or given."""
    rng = np.random.default_rng(0)
    sigma = np.array([[1.0, 0.6, 0.2, 0.0], [0.6, 1.0, 0.5, 0.1], [0.2, 0.5, 1.0, 0.3], [0.0, 0.1, 0.3, 1.0]])
    sigma *= np.outer([1, 2, 0.5, 3], [1, 2, 0.5, 3])
    X = rng.multivariate_normal(np.arange(4.0), sigma, size=60_000)
    K = _knockoffs.gaussian_knockoffs(X, covariance=sigma if given else "auto", s_method=s_method, random_state=1)
    joint = np.cov(np.hstack([X, K]).T)
    scale = np.sqrt(np.outer(np.diag(sigma), np.diag(sigma)))
    np.testing.assert_allclose(joint[4:, 4:] / scale, sigma / scale, atol=0.03)
    off = joint[:4, 4:] / scale
    np.testing.assert_allclose(off - np.diag(np.diag(off)), (sigma / scale) - np.eye(4), atol=0.03)
    assert np.all(np.diag(off) < 0.95)  # a knockoff is not its feature
    np.testing.assert_allclose(K.mean(axis=0), np.arange(4.0), atol=0.05)


def test_statistics_are_unswapped_and_reproducible():
    """Knockoffs given as noise: every cause scores above its knockoff, swapped or not (about half
    of the pairs are swapped for the fit); same seed, same statistics for any thread count; the
    caller's arrays and numpy's global stream untouched."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 40))
    y = X[:, :10].sum(axis=1) + 0.5 * rng.standard_normal(300)
    noise = rng.standard_normal(X.shape)
    before, state = X.copy(), np.random.get_state()[1].copy()
    forest = RandomForestRegressor(n_estimators=60, max_features=0.3)
    a = knockoff_filter(forest, X, y, knockoffs=noise, random_state=4, n_jobs=1)
    assert np.all(a.importances[:10] > a.knockoff_importances[:10])
    np.testing.assert_array_equal(a.statistics, a.importances - a.knockoff_importances)
    b = knockoff_filter(forest, X, y, knockoffs=noise, random_state=4, n_jobs=2)
    np.testing.assert_array_equal(a.statistics, b.statistics)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    assert a.knockoffs is not noise and np.array_equal(a.knockoffs, noise)


@needs_knockpy
def test_mvr_knockoffs_follow_random_state_and_leave_numpys_stream_alone():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((200, 30)) @ rng.standard_normal((30, 30)) * 0.3 + rng.standard_normal((200, 30))
    y = X[:, 0] - X[:, 1] + rng.standard_normal(200)
    np.random.seed(11)
    state = np.random.get_state()[1].copy()
    forest = RandomForestRegressor(n_estimators=30)
    a = knockoff_filter(forest, X, y, random_state=2)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    b = knockoff_filter(forest, X, y, random_state=2)
    np.testing.assert_array_equal(a.knockoffs, b.knockoffs)
    np.testing.assert_array_equal(a.statistics, b.statistics)
    assert not np.array_equal(a.knockoffs, knockoff_filter(forest, X, y, random_state=3).knockoffs)


def test_other_forests_and_tables():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    X = pd.DataFrame(rng.standard_normal((240, 50)), columns=[f"g{j}" for j in range(50)])
    classes = (X["g0"] + X["g1"] > 0).astype(int)
    a = knockoff_filter(RandomForestClassifier(n_estimators=40), X, classes, s_method="equicorrelated",
                        importance="permutation", random_state=0)
    b = knockoff_filter(SkForest(n_estimators=40), X, X["g0"] * 2 + rng.standard_normal(240),
                        s_method="equicorrelated", random_state=0)
    for test in (a, b):
        frame = test.to_frame()
        assert list(frame.columns) == ["feature", "importance", "knockoff_importance", "statistic", "qvalue"]
        assert frame["feature"].iloc[0] in ("g0", "g1") and set(frame["feature"]) == set(X.columns)
        assert frame["statistic"].is_monotonic_decreasing
    assert "selected at q <= 0.1" in repr(a)
    assert b.threshold(0.1) == (np.inf if not len(b.selected(0.1)) else b.statistics[b.selected(0.1)].min())


@pytest.mark.heavy
def test_knockoff_plus_keeps_its_false_discovery_rate():
    """100 simulations, 15 causes among 100 independent Gaussian features: the mean false-discovery
    proportion of knockoff+ at q = 0.1 stays at or below 0.1, with power; under the global null (y
    independent of X, 100 simulations) it selects nothing in at least 90%. (With 10 causes at
    q = 0.1 knockoff+ selects only when all ten causes outrank every negative statistic: it must
    select 1 / q features or none.)"""
    proportions, power, any_null = [], [], []
    forest = RandomForestRegressor(n_estimators=100, max_features=0.3)
    for seed in range(100):
        rng = np.random.default_rng(2000 + seed)
        X = rng.standard_normal((300, 100))
        y = X[:, :15].sum(axis=1) * 0.8 + rng.standard_normal(300)
        chosen = knockoff_filter(forest, X, y, s_method="equicorrelated", random_state=seed).selected(0.1)
        proportions.append(np.mean(chosen >= 15) if len(chosen) else 0.0)
        power.append(np.sum(chosen < 15) / 15)
        null = knockoff_filter(forest, X, rng.standard_normal(300), s_method="equicorrelated", random_state=seed)
        any_null.append(len(null.selected(0.1)) > 0)
    assert np.mean(proportions) <= 0.1
    assert np.mean(power) > 0.5
    assert np.mean(any_null) <= 0.1


def test_bad_input_is_named(monkeypatch):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((50, 6)), rng.standard_normal(50)
    forest = RandomForestRegressor(n_estimators=5)
    with pytest.raises(ValueError, match="y has 49 entries for 50 rows"):
        knockoff_filter(forest, X, y[:49])
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X has a missing or infinite value \(row 3, column 2\)"):
        knockoff_filter(forest, bad, y)
    with pytest.raises(ValueError, match="X's column 4 is constant"):
        knockoff_filter(forest, np.hstack([X[:, :4], np.ones((50, 1))]), y, s_method="equicorrelated")
    with pytest.raises(ValueError, match=r"knockoffs has shape \(50, 5\); X has shape \(50, 6\)"):
        knockoff_filter(forest, X, y, knockoffs=X[:, :5])
    with pytest.raises(ValueError, match="knockoffs has a missing"):
        knockoff_filter(forest, X, y, knockoffs=bad)
    with pytest.raises(ValueError, match=r"covariance has shape \(5, 5\); X has 6 features"):
        knockoff_filter(forest, X, y, covariance=np.eye(5))
    with pytest.raises(ValueError, match="covariance must be a symmetric matrix of finite numbers"):
        knockoff_filter(forest, X, y, covariance=np.eye(6) + np.triu(np.ones((6, 6)), 1) * 0.1)
    with pytest.raises(ValueError, match="covariance is not positive definite"):
        knockoff_filter(forest, X, y, covariance=np.ones((6, 6)))
    with pytest.raises(ValueError, match="offset"):
        knockoff_filter(forest, X, y, offset=2)
    with pytest.raises(ValueError, match="s_method"):
        knockoff_filter(forest, X, y, s_method="ridge")
    with pytest.raises(ValueError, match="statistics must be a 1-d array of finite numbers"):
        knockoff_qvalues([1.0, np.nan])
    genotypes = rng.integers(0, 3, (50, 6)).astype(float)
    with pytest.warns(UserWarning, match="6 of X's 6 columns take 3 values or fewer"):
        knockoff_filter(forest, genotypes, y, s_method="equicorrelated")
    wide = rng.standard_normal((30, 40))
    with pytest.warns(UserWarning, match="estimated from 30 rows for 40 features, too few for the sample covariance"):
        knockoff_filter(forest, wide, y[:30], s_method="equicorrelated")
    with pytest.raises(ValueError, match="sample covariance from 30 rows for 40 features is singular"):
        knockoff_filter(forest, wide, y[:30], covariance="sample")
    with pytest.raises(ValueError, match="covariance"):
        knockoff_filter(forest, X, y, covariance="graphical_lasso")
    monkeypatch.setattr(_knockoffs, "MAX_GAUSSIAN_FEATURES", 5)
    with pytest.raises(ValueError, match="Gaussian knockoffs of 6 features need 6 x 6 covariances .* above 5 features pass knockoffs"):
        knockoff_filter(forest, X, y)
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "knockpy", None)
    with pytest.raises(ImportError, match=r"s_method='mvr' needs knockpy .*'equicorrelated' needs nothing"):
        knockoff_filter(forest, X, y)


def test_the_command_line_adds_the_knockoff_columns(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    from conftest import read_csv_exact

    from pyinterp import cli

    rng = np.random.default_rng(8)
    X = rng.standard_normal((200, 60))
    y = X[:, :12] @ np.full(12, 0.9) + rng.standard_normal(200)
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(60)])
    frame.assign(response=y).to_csv(tmp_path / "expression.csv", index=False)
    code = cli.main(["importance", str(tmp_path / "expression.csv"), "--target", "response", "--knockoffs",
                     "--n-estimators", "40", "--n-jobs", "1", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    s_method = "mvr" if HAVE_KNOCKPY else "equicorrelated"
    assert "Knockoffs (" in out and f"({s_method} S-matrix" in out and "knockoff_qvalue: the least FDR level" in out
    assert "No p-values" in out  # 60 features: Janitza's test is left out, the knockoffs are not
    table = read_csv_exact(tmp_path / "out" / "importances.csv").set_index("feature")
    expected = knockoff_filter(RandomForestRegressor(n_estimators=40), frame, y, s_method=s_method, random_state=0)
    names = list(expected.feature_names)
    np.testing.assert_array_equal(table.loc[names, "knockoff_statistic"], expected.statistics)
    np.testing.assert_array_equal(table.loc[names, "knockoff_qvalue"], expected.qvalues)
    assert "KO q" in out and "knockoff_qvalue" in (tmp_path / "out" / "report.html").read_text()


def test_the_command_line_says_why_it_has_no_knockoffs(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    from pyinterp import cli

    rng = np.random.default_rng(9)
    frame = pd.DataFrame(rng.standard_normal((80, 12)), columns=[f"g{j}" for j in range(12)])
    frame.iloc[5, 3] = np.nan
    frame.assign(response=rng.standard_normal(80)).to_csv(tmp_path / "holes.csv", index=False)
    code = cli.main(["importance", str(tmp_path / "holes.csv"), "--target", "response", "--knockoffs",
                     "--n-estimators", "10", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    assert "No knockoffs: X has a missing or infinite value (row 5, column 3)" in out
    assert "knockoff_qvalue" not in (tmp_path / "out" / "importances.csv").read_text()
