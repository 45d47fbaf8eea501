"""verbose: progress as units finish (tqdm bar or plain lines, and the 'pyinterp' logger), silence
at 0, the same results either way, and a failing progress report that stops the computation."""

import logging
import sys

import numpy as np
import pytest
from sklearn.base import clone

from pyinterp import (DLBCD, IterativeRandomForest, LSSFind, PartitionedRatio, RandomForestClassifier,
                      RandomForestRegressor, SkinnyTreesRegressor, _core, importance)
from pyinterp.datasets import make_correlated_linear
from pyinterp.skinny import fit_budget


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    return rng.rand(300, 5), rng.rand(300)


@pytest.mark.parametrize("Forest", [RandomForestRegressor, RandomForestClassifier])
def test_verbose_reports_every_tree_to_the_logger(data, Forest, caplog):
    X, y = data
    y = y if Forest is RandomForestRegressor else (y > 0.5).astype(int)
    with caplog.at_level(logging.INFO, logger="pyinterp"):
        Forest(n_estimators=7, verbose=1, random_state=0).fit(X, y)
    assert caplog.records[-1].getMessage().startswith("trees: 7/7 in ")


def test_verbose_zero_is_silent(data, caplog, capsys):
    X, y = data
    with caplog.at_level(logging.DEBUG, logger="pyinterp"):
        RandomForestRegressor(n_estimators=5, verbose=0, random_state=0).fit(X, y)
    assert caplog.records == []
    assert capsys.readouterr().err == ""


def test_a_bar_with_tqdm_and_plain_lines_without(data, capsys, monkeypatch):
    pytest.importorskip("tqdm")
    X, y = data
    forest = RandomForestRegressor(n_estimators=6, verbose=1, random_state=0)
    forest.fit(X, y)
    assert "pyinterp trees" in capsys.readouterr().err  # tqdm draws on stderr
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails: no tqdm
    forest.fit(X, y)
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("pyinterp trees: 6/6 in ")


def test_progress_is_the_same_forest(data):
    X, y = data
    quiet = RandomForestRegressor(n_estimators=5, random_state=0, n_jobs=2).fit(X, y)
    loud = RandomForestRegressor(n_estimators=5, random_state=0, n_jobs=2, verbose=2).fit(X, y)
    np.testing.assert_array_equal(quiet.predict(X), loud.predict(X))


def test_a_failing_progress_callback_stops_the_fit_with_its_error(data):
    X = np.random.RandomState(1).rand(20_000, 8)
    y = X[:, 0]

    def broken(done, total):
        raise RuntimeError("the display went away")

    _core.set_progress_callback(broken)
    try:
        with pytest.raises(RuntimeError, match="the display went away"):
            RandomForestRegressor(n_estimators=50, max_features=1.0, random_state=0).fit(X, y)
    finally:
        _core.set_progress_callback(None)
    assert len(RandomForestRegressor(n_estimators=2, random_state=0).fit(X[:500], y[:500])) == 2


def test_dlbcd_reports_sweeps_from_inside_a_restart():
    """One restart, so only the sweeps move the count: reports in between, never backwards, up to
    n_restarts x max_iter x 2 stages, a restart's unneeded sweeps counted when it converges."""
    X = np.random.RandomState(0).laplace(size=(3000, 16))
    reports = []
    _core.set_progress_callback(lambda done, total: reports.append((done, total)))
    try:
        fit = DLBCD(n_restarts=1, max_iter=30, tol=0.0, random_state=0).fit(X)
    finally:
        _core.set_progress_callback(None)
    done = [d for d, _ in reports]
    assert {t for _, t in reports} == {60} and done[-1] == 60 and done == sorted(done)
    assert any(0 < d < 60 for d in done) and fit.n_iter_ <= 30


def _long_fits():
    """Per fit that can take long: a small run as a function of verbose, returning what it
    computed, and the final reports verbose=1 makes (in order)."""
    rng = np.random.RandomState(0)
    X = rng.rand(200, 6)
    y = X[:, 0] * (X[:, 1] > 0.5) + 0.05 * rng.randn(200)
    labels = (y > np.median(y)).astype(int)
    forest = RandomForestRegressor(n_estimators=12, random_state=0).fit(X, y)
    Xs, ys, _ = make_correlated_linear(200, 40, correlation=0.5, random_state=5)

    def irf(verbose):
        fit = IterativeRandomForest(n_iterations=3, n_estimators=25, n_bootstraps=4, rit_n_trees=10, random_state=0,
                                    verbose=verbose).fit(X, labels)
        return repr(list(fit.interactions_)), fit.oob_errors_

    def lssfind(verbose):
        return repr(list(LSSFind(n_estimators=15, random_state=0, verbose=verbose).fit(X, y).interactions_))

    def permutation(verbose):
        return importance.permutation_oob(forest, X, y, n_repeats=2, random_state=0, verbose=verbose)

    def dlbcd(verbose):
        return DLBCD(n_restarts=3, max_iter=5, random_state=0, verbose=verbose).fit(X).components_

    def skinny(verbose):
        skinny = SkinnyTreesRegressor(n_trees=3, depth=2, max_epochs=4, random_state=0, verbose=verbose)
        return skinny.fit(Xs, ys).predict(Xs)

    def budget(verbose):
        base = SkinnyTreesRegressor(n_trees=5, depth=2, batch_size=32, max_epochs=30, lambda2=0.5)
        search = fit_budget(base, Xs, ys, 10, n_trials=3, random_state=0, n_jobs=1, verbose=verbose,
                            param_distributions={"temperature": [0.03], "learning_rate": [0.05, 0.1, 0.2]})
        return search.budget_search_.val_score

    def ratio(verbose):
        return PartitionedRatio(3, n_lambdas=4, max_iter=50, random_state=0, verbose=verbose).fit(X).coef_path_

    return {
        "irf": (irf, ["iterations: 3/3", "bootstraps: 4/4"]),
        "lssfind": (lssfind, ["trees: 15/15", "mining: 1/1"]),
        "permutation_oob": (permutation, ["trees: 12/12"]),
        "dlbcd": (dlbcd, ["sweeps: 30/30"]),  # at most 5 per restart and stage (warm start, then tau)
        "skinny": (skinny, ["epochs: 4/4"]),
        "fit_budget": (budget, ["trials: 3/3"]),
        "partitioned_ratio": (ratio, ["lambdas: 4/4"]),
    }


LONG_FITS = _long_fits()


def _same(a, b):
    for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        if isinstance(u, str):
            assert u == v
        else:
            np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("name", LONG_FITS)
def test_every_long_fit_reports_its_units_and_computes_the_same(name, caplog, capsys):
    fit, reports = LONG_FITS[name]
    with caplog.at_level(logging.INFO, logger="pyinterp"):
        quiet = fit(0)
    assert caplog.records == [] and "pyinterp" not in capsys.readouterr().err
    with caplog.at_level(logging.INFO, logger="pyinterp"):
        loud = fit(1)
    assert [r.getMessage().split(" in ")[0] for r in caplog.records] == reports
    _same(quiet, loud)


@pytest.mark.parametrize("name", LONG_FITS)
def test_every_long_fit_prints_plain_lines_without_tqdm(name, capsys, monkeypatch):
    fit, reports = LONG_FITS[name]
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails: no tqdm
    fit(1)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pyinterp ")]
    assert [line.split(" in ")[0] for line in lines] == [f"pyinterp {r}" for r in reports]


def test_inner_fits_report_at_verbose_2(caplog):
    """iRF's forests tell their trees only when asked for more than the iterations."""
    fit, reports = LONG_FITS["irf"]
    with caplog.at_level(logging.INFO, logger="pyinterp"):
        fit(2)
    messages = [r.getMessage().split(" in ")[0] for r in caplog.records]
    assert messages == ["trees: 25/25"] * 3 + ["iterations: 3/3", "bootstraps: 4/4"]


@pytest.mark.parametrize("Estimator", [IterativeRandomForest, LSSFind, DLBCD, SkinnyTreesRegressor])
def test_verbose_is_a_parameter_clone_keeps(Estimator):
    est = Estimator(verbose=3)
    assert est.get_params()["verbose"] == 3 and clone(est).verbose == 3
    with pytest.raises(ValueError, match="verbose"):
        Estimator(verbose="loud").fit(np.random.rand(20, 3), np.arange(20.0) % 2)
