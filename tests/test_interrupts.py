"""Ctrl-C during every long fit: a SIGINT sent to the process 0.3 s in (from a timer thread)
raises KeyboardInterrupt within a generous 5 s (the runs would take minutes), leaves no thread
running and the estimator as it was (unfitted, or with its previous fit), and a later fit works.
`pytest -s` prints the seconds from the signal to the exception."""

import logging
import sys
import threading
import time

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from pyinterp import (DLBCD, IterativeRandomForest, LSSFind, PartitionedRatio, RandomForestRegressor,
                      SkinnyTreesRegressor, importance)
from pyinterp.datasets import make_correlated_linear
from pyinterp.interactions import dwp, frequent_itemsets, pair_scan, path_prevalence, signed_paths
from pyinterp.skinny import fit_budget

from ctrl_c import ctrl_c_after

AFTER = 0.3  # seconds from the call to the signal
BOUND = 5.0  # seconds from the signal to KeyboardInterrupt; the issue asks for under 2 (measured: about 0.1)

rng = np.random.RandomState(0)
X = rng.rand(1000, 20)
y = X[:, 0] * (X[:, 1] > 0.5) + 0.05 * rng.randn(1000)
LABELS = (y > np.median(y)).astype(int)
XS, YS, _ = make_correlated_linear(1000, 40, correlation=0.5, random_state=5)
SIGNALS = rng.laplace(size=(3000, 20))
MRF = rng.randn(800, 20)
HUGE = 10**6
TREES = 20_000  # a minute of trees (the in-bag counts of all are allocated up front)


def interrupted(call, after=AFTER):
    """Seconds from a Ctrl-C sent ``after`` seconds into call() to its KeyboardInterrupt, after
    checking that no thread was left running."""
    threads = threading.active_count()
    with ctrl_c_after(after) as start, pytest.raises(KeyboardInterrupt):
        call()
    elapsed = time.perf_counter() - start - after
    assert threading.active_count() <= threads
    assert elapsed < BOUND
    return elapsed


def _report(name, elapsed):
    print(f"\n{name}: KeyboardInterrupt {elapsed:.3f} s after the signal")


# name -> (estimator with small settings that fit quickly, the parameters that make its fit long, fit)
ESTIMATORS = {
    "forest": (RandomForestRegressor(n_estimators=20, oob_score=True, random_state=0), {"n_estimators": TREES},
               lambda e: e.fit(X, y)),
    "irf iterations": (IterativeRandomForest(n_iterations=2, n_estimators=20, n_bootstraps=2, rit_n_trees=20,
                                             random_state=0), {"n_estimators": TREES}, lambda e: e.fit(X, LABELS)),
    "irf bootstraps": (IterativeRandomForest(n_iterations=1, n_estimators=20, n_bootstraps=4, rit_n_trees=20,
                                             random_state=0), {"bootstrap_n_estimators": TREES},
                       lambda e: e.fit(X, LABELS)),
    "lssfind": (LSSFind(n_estimators=20, random_state=0), {"n_estimators": TREES}, lambda e: e.fit(X, y)),
    "dlbcd": (DLBCD(n_restarts=2, max_iter=3, random_state=0), {"max_iter": HUGE, "tol": 0.0},
              lambda e: e.fit(SIGNALS)),
    "skinny": (SkinnyTreesRegressor(n_trees=3, depth=2, max_epochs=2, random_state=0), {"max_epochs": HUGE},
               lambda e: e.fit(XS, YS)),
    "partitioned ratio": (PartitionedRatio(10, n_lambdas=3, max_iter=50, random_state=0),
                          {"n_lambdas": 5000, "tol": 1e-14, "max_iter": HUGE}, lambda e: e.fit(MRF)),
}


def _state(estimator):
    """What a fit leaves, comparable: the fitted attributes' reprs."""
    return {k: repr(v) for k, v in vars(estimator).items() if k.endswith("_")}


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("name", ESTIMATORS)
def test_ctrl_c_stops_a_fit_and_leaves_the_estimator_as_it_was(name, n_jobs):
    small, long_params, fit = ESTIMATORS[name]
    if "n_jobs" in small.get_params():
        small = clone(small).set_params(n_jobs=n_jobs)
    elif n_jobs == 2:
        pytest.skip("no n_jobs")
    fresh = clone(small).set_params(**long_params)
    _report(f"{name} n_jobs={n_jobs} (unfitted)", interrupted(lambda: fit(fresh)))
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    assert vars(fresh) == vars(clone(fresh))  # only the parameters, as before the fit
    fitted = fit(clone(small))
    before = _state(fitted)
    _report(f"{name} n_jobs={n_jobs} (refit)", interrupted(lambda: fit(fitted.set_params(**long_params))))
    assert _state(fitted) == before
    fit(fresh.set_params(**small.get_params()))  # a later fit works
    assert _state(fresh) == before


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_stops_permutation_importance(n_jobs):
    forest = RandomForestRegressor(n_estimators=50, random_state=0).fit(X, y)
    _report(f"permutation_oob n_jobs={n_jobs}",
            interrupted(lambda: importance.permutation_oob(forest, X, y, n_repeats=2**31 - 1, n_jobs=n_jobs)))
    assert importance.permutation_oob(forest, X, y, n_repeats=2, random_state=0).shape == (X.shape[1],)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_stops_a_budget_search(n_jobs):
    """Trials run in processes with n_jobs=2 (joblib's loky, whose pool and its threads joblib keeps
    between calls: a search before the interrupted one starts them)."""
    base = SkinnyTreesRegressor(n_trees=3, depth=2, batch_size=32, max_epochs=30, lambda2=0.5)

    def search():
        best = fit_budget(base, XS[:200], YS[:200], 10, n_trials=2, n_jobs=n_jobs, random_state=0,
                          param_distributions={"temperature": [0.03], "learning_rate": [0.05, 0.1]})
        assert 0 < best.n_selected_features_ <= 10
        return best.budget_search_.val_score

    scores = search()
    long = clone(base).set_params(max_epochs=HUGE)
    _report(f"fit_budget n_jobs={n_jobs}",
            interrupted(lambda: fit_budget(long, XS, YS, 10, n_trials=4, n_jobs=n_jobs, random_state=0)))
    np.testing.assert_array_equal(search(), scores)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_stops_itemset_mining_in_the_core(n_jobs):
    """760,000 sets of up to 5 of 40 items, each in half of 400,000 transactions: about 30 s of
    counting in one core call (measured), far beyond the bound."""
    order = np.argsort(np.random.RandomState(0).rand(400_000, 40), axis=1)
    transactions = np.sort(order[:, :20], axis=1)
    _report(f"frequent_itemsets n_jobs={n_jobs}",
            interrupted(lambda: frequent_itemsets(transactions, min_support=1.0, max_size=5, n_jobs=n_jobs)))
    assert len(frequent_itemsets(transactions[:50], min_support=20.0, max_size=2)) > 0  # a later call works


def test_ctrl_c_stops_lssfind_while_it_mines(caplog, monkeypatch):
    """Mining and ranking 1.4 million sets of up to 4 features from every split (epsilon=0) of 20
    deep trees takes about 5 s; the forest is grown in well under the 2 s before the signal (the
    log says so)."""
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # tqdm's monitor thread would outlive the fit
    rng = np.random.RandomState(0)
    X = rng.rand(2000, 40)
    y = X.sum(axis=1) + rng.rand(2000)
    lss = LSSFind(n_estimators=20, epsilon=0.0, max_order=4, min_dwp=1e-7, random_state=0, verbose=1)
    with caplog.at_level(logging.INFO, logger="pyinterp"):
        _report("lssfind mining", interrupted(lambda: lss.fit(X, y), after=2.0))
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("trees: 20/20 in ")
    assert messages[1] == "mining stopped after 0 of 1 (KeyboardInterrupt)"
    with pytest.raises(NotFittedError):
        check_is_fitted(lss)


@pytest.fixture(scope="module")
def explained():
    """A 100-tree forest and inputs that each call below needs 6 to over 40 s for (measured), a
    wide X for the pair scan (74 s) and a tall one for DSTUMP (about 1 s on its 24,000 rows: DSTUMP
    is fast, and at 6,000 rows it once finished before the signal). The inputs are built here, not
    in the timed call: numpy's repeat of DSTUMP's 384 MB took 3.5 s on a fresh VM, where the signal
    waited for it (CI measured 6.7 s)."""
    rng = np.random.RandomState(0)
    X = rng.rand(2000, 30)
    y = X[:, 0] * (X[:, 1] > 0.5) + 0.1 * rng.randn(2000)
    wide = rng.rand(1500, 2000)
    return (RandomForestRegressor(n_estimators=100, random_state=0).fit(X, y), X,
            np.repeat(X.astype(np.float32), 600, 0), wide, np.repeat(wide, 16, 0))


# issue 52, item 5: every public call that can take long, not only the fits
LONG_CALLS = {
    "predict": lambda f, X, many, wide, tall: f.predict(many),
    "apply": lambda f, X, many, wide, tall: f.apply(many),
    "decision_path": lambda f, X, many, wide, tall: f.decision_path(many[:300_000]),
    "contributions": lambda f, X, many, wide, tall: importance.contributions(f, many),
    "shap_values": lambda f, X, many, wide, tall: importance.shap_values(f, many[:30_000]),
    "shap_interaction_importance": lambda f, X, many, wide, tall: importance.shap_interaction_importance(f, X),
    "shap_top_interactions": lambda f, X, many, wide, tall: importance.shap_top_interactions(f, X),
    "dwp": lambda f, X, many, wide, tall: dwp(f, [[(0, 1), (1, 1)]] * 200_000, epsilon=0.0),
    "path_prevalence": lambda f, X, many, wide, tall: path_prevalence(f, signed_paths(f), many[:200_000],
                                                                [[(0, 1), (1, 1)]] * 20),
    "pair_scan": lambda f, X, many, wide, tall: pair_scan(wide, wide[:, 0], top=10),
    "dstump": lambda f, X, many, wide, tall: importance.dstump(tall, tall[:, 0]),
}


@pytest.mark.parametrize("name", LONG_CALLS)
def test_ctrl_c_stops_every_long_public_call(name, explained):
    _report(name, interrupted(lambda: LONG_CALLS[name](*explained)))
