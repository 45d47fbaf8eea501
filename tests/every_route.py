"""One check that every estimator and measure taking X gives on a named X (packed genotypes, an
AnnData) exactly what it gives on the same values as an unnamed array, with the names in every
fit and table (tests/test_packed_genotypes.py, tests/test_h5ad.py)."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import RandomForestRegressor as SkForest

from pyinterp import IterativeRandomForest, LocalLSSFind, LSSFind, RandomForestClassifier, RandomForestRegressor
from pyinterp import importance as imp


def assert_same_forest(a, b, *, inbag=False):
    """Two fitted forests hold the same trees, field by field (and the same draws with inbag)."""
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for name in ta.__slots__:
            np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name), err_msg=name)
    if inbag:
        np.testing.assert_array_equal(a.inbag_counts_, b.inbag_counts_)


def assert_same(a, b):
    """Equal results: arrays, or tuples of them (values and expected value, ...)."""
    if isinstance(a, tuple):
        for ea, eb in zip(a, b, strict=True):
            assert_same(ea, eb)
    elif sp.issparse(a):
        assert (a != b).nnz == 0
    else:
        np.testing.assert_array_equal(a, b)


def assert_same_table(a, b, names):
    assert a.features == b.features and a.columns == b.columns
    # named by X's feature names, where the unnamed copy's labels say x0, x1, ...
    assert [a.label(f) for f in a.features] == [re.sub(r"x(\d+)", lambda m: names[int(m[1])], b.label(f))
                                                for f in b.features]
    for name in a.columns:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def check_every_route(X, D, y, yc, names):
    """Every estimator and measure taking X, on X (packed genotypes, an AnnData) and on D, the same
    values as an unnamed array: equal results, and X's feature `names` in every fit and table."""
    kw = dict(n_estimators=12, random_state=3, oob_score=True, max_features=0.3)
    for Forest, target in ((RandomForestRegressor, y), (RandomForestClassifier, yc)):
        a, b = Forest(**kw).fit(X, target), Forest(**kw).fit(D, target)
        assert_same_forest(a, b)
        assert a.oob_score_ == b.oob_score_
        assert list(a.feature_names_in_) == list(names)
        np.testing.assert_array_equal(a.predict(X), b.predict(D))
        np.testing.assert_array_equal(a.apply(X), b.apply(D))
        assert (a.decision_path(X)[0] != b.decision_path(D)[0]).nnz == 0
        if Forest is RandomForestClassifier:
            np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(D))
            np.testing.assert_array_equal(a.oob_predict_proba(X), b.oob_predict_proba(D))
        else:
            np.testing.assert_array_equal(a.oob_predict(X), b.oob_predict(D))
        for measure in (imp.mdi_oob, imp.naive_oob, imp.ufi):
            assert_same(measure(a, X, target), measure(b, D, target))
        np.testing.assert_array_equal(imp.permutation_oob(a, X, target, random_state=0),
                                      imp.permutation_oob(b, D, target, random_state=0))
        np.testing.assert_array_equal(imp.mdi(a), imp.mdi(b))
    a, b = RandomForestRegressor(**kw).fit(X, y), RandomForestRegressor(**kw).fit(D, y)
    assert_same(imp.contributions(a, X), imp.contributions(b, D))
    assert_same(imp.shap_values(a, X), imp.shap_values(b, D))
    assert_same(imp.shap_values(a, X[:7], background=X[7:20]), imp.shap_values(b, D[:7], background=D[7:20]))
    assert_same(imp.shap_interaction_values(a, X[:9]), imp.shap_interaction_values(b, D[:9]))
    assert_same(imp.shap_interaction_importance(a, X), imp.shap_interaction_importance(b, D))
    assert_same(imp.shap_top_interactions(a, X, k=5), imp.shap_top_interactions(b, D, k=5))
    sa, sb = imp.dstump(X, y), imp.dstump(D, y)
    assert set(sa) == set(sb)
    for field in set(sa) - {"select"}:
        np.testing.assert_array_equal(sa[field], sb[field], err_msg=field)
    # scikit-learn's forest (fitted on the unnamed copy) measured on X
    sk = SkForest(n_estimators=5, random_state=0, max_features=0.3).fit(D, y)
    with pytest.warns(UserWarning, match="fitted without feature names"):
        np.testing.assert_array_equal(imp.mdi_oob(sk, X, y), imp.mdi_oob(sk, D, y))
    kw_lss = dict(n_estimators=15, max_features=0.5, random_state=0, mode="rank", max_order=2, min_dwp=0.02)
    la, lb = LSSFind(**kw_lss).fit(X, y), LSSFind(**kw_lss).fit(D, y)
    assert_same_forest(la.forest_, lb.forest_)
    assert len(la.interactions_) > 0
    assert_same_table(la.interactions_, lb.interactions_, names)
    np.testing.assert_array_equal(la.predict(X), lb.predict(D))
    loc_a = LocalLSSFind(**kw_lss).fit(X, y).local_interactions(X[:5])
    loc_b = LocalLSSFind(**kw_lss).fit(D, y).local_interactions(D[:5])
    for ta, tb in zip(loc_a, loc_b, strict=True):
        assert_same_table(ta, tb, names)
    rule_a, rule_b = la.rule(la.interactions_.features[0]), lb.rule(lb.interactions_.features[0])
    np.testing.assert_array_equal(rule_a.indicator(X), rule_b.indicator(D))
    kw_irf = dict(n_iterations=2, n_estimators=15, n_bootstraps=2, random_state=0, max_features=0.5)
    ia, ib = IterativeRandomForest(**kw_irf).fit(X, yc), IterativeRandomForest(**kw_irf).fit(D, yc)
    assert_same_forest(ia.forest_, ib.forest_)
    np.testing.assert_array_equal(ia.feature_weights_, ib.feature_weights_)
    assert len(ia.interactions_) > 0
    assert_same_table(ia.interactions_, ib.interactions_, names)
    np.testing.assert_array_equal(ia.predict(X), ib.predict(D))
