"""verbose: progress as trees finish (tqdm bar or plain lines, and the 'pyinterp' logger), silence
at 0, and a failing progress report that stops the computation."""

import logging
import sys

import numpy as np
import pytest

from pyinterp import RandomForestClassifier, RandomForestRegressor, _core


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
