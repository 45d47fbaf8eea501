"""pair_scan: every pair's interaction F test and Boolean rule, against least squares on the rows."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cell_scans import least_squares, rounded

from pyinterp.interactions import pair_scan, triple_scan
from pyinterp.interactions.cell_tests import PAIRS, SIDES
from pyinterp.io import PackedGenotypes
from pyinterp.io.packing import pack_counts


def _brute(a, b, y, cuts_a, cuts_b):
    """The HC2 score test's F, df1 and p, and every rule's gain, coefficient and own fit, by least
    squares on the rows."""
    keep = ~np.isnan(a) & ~np.isnan(b)
    a, b, y = a[keep], b[keep], y[keep]
    la = np.searchsorted(cuts_a[~np.isnan(cuts_a)], a)
    lb = np.searchsorted(cuts_b[~np.isnan(cuts_b)], b)
    cell = la * 3 + lb
    additive = np.column_stack([np.ones(len(y)), la == 1, la == 2, lb == 1, lb == 2]).astype(float)
    rss_add, _ = least_squares(additive, y)
    hat = additive @ np.linalg.pinv(additive.T @ additive) @ additive.T
    residual = y - hat @ y
    z = np.column_stack([(la == u) & (lb == v) for u in (1, 2) for v in (1, 2)]).astype(float)
    g = z - hat @ z
    variance = (g * (residual**2 / (1 - np.diag(hat)))[:, None]).T @ g
    score = z.T @ residual
    df1 = np.linalg.matrix_rank(variance)
    assert df1 == len(np.unique(cell)) - np.linalg.matrix_rank(additive)
    df2 = len(y) - len(np.unique(cell))
    f = score @ np.linalg.pinv(variance) @ score / df1
    gains, coefs, alone = [], [], []
    for r in range(16):
        z = PAIRS.rule_cells[r][cell]
        rss, coef = least_squares(np.column_stack([additive, z]), y)
        full_rank = np.linalg.matrix_rank(np.column_stack([additive, z])) > np.linalg.matrix_rank(additive)
        gains.append(rss_add - rss if full_rank else 0.0)
        coefs.append(coef[-1])
        alone.append(((z - z.mean()) @ (y - y.mean())) ** 2 / max(((z - z.mean()) ** 2).sum(), 1e-300))
    return f, df1, stats.f.sf(f, df1, df2), np.array(gains), np.array(coefs), np.array(alone), len(y)


def _genotypes(n, p, rng, missing=0.0):
    G = rng.binomial(2, rng.uniform(0.05, 0.5, p), size=(n, p)).astype(float)
    G[rng.random((n, p)) < missing] = np.nan
    return G


@pytest.mark.parametrize("missing", [0.0, 0.05])
def test_every_pair_equals_least_squares_on_its_rows(missing):
    rng = np.random.default_rng(1)
    G = _genotypes(400, 6, rng, missing)
    G[:, 5] = np.where(np.isnan(G[:, 5]), np.nan, G[:, 4])  # perfect LD: no interaction is testable
    x = rng.standard_normal(400)  # a continuous column: cut at its tertiles
    X = np.column_stack([G, x])
    y = 0.8 * (np.nan_to_num(G[:, 0]) > 0) * (x > 0.3) + np.nan_to_num(G[:, 1]) + rng.standard_normal(400)
    scan = pair_scan(X, y, top=None)
    assert scan.n_pairs == 20  # 21 pairs, the perfect-LD one without a test
    np.testing.assert_allclose(scan.cuts[6], np.quantile(x, [1 / 3, 2 / 3]))
    np.testing.assert_array_equal(scan.cuts[0], [0.5, 1.5])
    yr = rounded(y)
    seen = set()
    for row in scan.interactions:
        (a, sa), (b, sb) = row.features
        seen.add((a, b))
        if (a, b) == (4, 5):
            assert np.isnan(row.pvalue) and np.isnan(row.qvalue) and row.df == 0
            continue
        f, df1, p, gains, coefs, alone, count = _brute(X[:, a], X[:, b], yr, scan.cuts[a], scan.cuts[b])
        assert row.n == count and row.df == df1
        np.testing.assert_allclose([row.statistic, row.pvalue], [f, p], rtol=1e-7)
        # the rule: cuts of the largest gain, sides of the best own fit among those cuts' rules
        r = next(k for k, (ra, rb) in enumerate(PAIRS.rules) if SIDES[ra][0] == sa and SIDES[rb][0] == sb
                 and scan.cuts[a, SIDES[ra][1]] == row.threshold_1 and scan.cuts[b, SIDES[rb][1]] == row.threshold_2)
        group = next(g for g in PAIRS.same_cuts if r in g)
        assert gains[r] == pytest.approx(gains.max(), rel=1e-7, abs=1e-9)
        assert alone[r] == pytest.approx(alone[group].max(), rel=1e-9)
        if gains[r] > 1e-9:
            assert row.effect == pytest.approx(coefs[r], rel=1e-6)
    assert len(seen) == 21
    # against y itself rather than its rounding: the same to about 1e-5
    f_exact = _brute(X[:, 0], X[:, 6], y, scan.cuts[0], scan.cuts[6])[0]
    row = next(r for r in scan.interactions if (r.features[0][0], r.features[1][0]) == (0, 6))
    assert row.statistic == pytest.approx(f_exact, rel=1e-4)


def test_the_planted_rule_is_found_with_its_sides_and_ranked_first():
    rng = np.random.default_rng(0)
    G = _genotypes(2000, 40, rng)
    y = -1.0 * ((G[:, 3] < 1) & (G[:, 17] > 0)) + 0.5 * G[:, 9] + rng.standard_normal(2000)
    scan = pair_scan(G, y, top=5)
    best = scan.interactions[0]
    assert best.features == ((3, -1), (17, 1))
    assert (best.threshold_1, best.threshold_2) == (0.5, 0.5)
    assert best.effect == pytest.approx(-1.0, abs=0.2) and best.qvalue < 1e-4
    assert len(scan.interactions) == 5 and scan.n_pairs == 780
    assert np.all(np.diff(scan.interactions["pvalue"]) >= 0)


def test_packed_genotypes_names_features_threads_and_classes():
    rng = np.random.default_rng(2)
    G = _genotypes(300, 12, rng, missing=0.03)
    cases = rng.random(300) < 0.2 + 0.3 * ((np.nan_to_num(G[:, 1]) > 0) & (np.nan_to_num(G[:, 2]) > 0))
    labels = np.where(cases, "case", "control")
    packed = PackedGenotypes(pack_counts(np.where(np.isnan(G), -9, G).T.astype(np.int8)), 300,
                             variant_ids=[f"rs{k}" for k in range(12)])
    a = pair_scan(packed, labels, features=["rs1", "rs2", "rs5", "rs7"], n_jobs=1)
    b = pair_scan(pd.DataFrame(G, columns=[f"rs{k}" for k in range(12)]), labels == "case", features=[1, 2, 5, 7],
                  n_jobs=2)
    assert list(a.features) == [1, 2, 5, 7] and a.n_pairs == 6
    for name in ("statistic", "pvalue", "qvalue"):
        np.testing.assert_array_equal(a.interactions[name], b.interactions[name])  # 0/1 either way round
    # a: the second sorted label ("control") is 1; b: the cases
    np.testing.assert_array_equal(a.interactions["effect"], -b.interactions["effect"])
    assert a.interactions[0].names[0][0] == "rs1"


def test_bad_input_is_named():
    X = np.zeros((10, 3))
    with pytest.raises(ValueError, match="3 classes"):
        pair_scan(X, np.array(list("abcabcabca"), dtype=object))
    with pytest.raises(ValueError, match="at least two columns"):
        pair_scan(X, np.arange(10.0), features=[0])
    with pytest.raises(ValueError, match="above max_pairs=2"):
        pair_scan(X, np.arange(10.0), max_pairs=2)
    with pytest.raises(ValueError, match="one value per row"):
        pair_scan(X, np.arange(9.0))
    with pytest.raises(ValueError, match="y must be finite"):
        pair_scan(X, np.r_[np.nan, np.arange(9.0)])
    with pytest.raises(ValueError, match="features names column 7"):
        pair_scan(X, np.arange(10.0), features=[0, 7])


def _null_pvalues(target, n, maf, rng, replicates):
    """p-values of all 15 pairs of 6 genotype columns without interaction: additive effects of any
    dominance, LD, unequal noise (a variance QTL) or a 0/1 target additive in probability."""
    pvalues = []
    for _ in range(replicates):
        G = rng.binomial(2, rng.uniform(*maf, 6), size=(n, 6)).astype(float)
        G[:, 1] = np.where(rng.random(n) < 0.8, G[:, 0], G[:, 1])  # LD
        effects = 0.3 * (G[:, 0] == 2) + 0.2 * G[:, 2] - 0.3 * (G[:, 3] > 0)
        if target == "gaussian":
            y = effects + rng.standard_normal(n) * (1 + 0.5 * (G[:, 4] > 0))
        else:
            y = rng.random(n) < 0.3 + 0.5 * effects / 1.2
        pvalues.extend(pair_scan(G, y, top=None).interactions["pvalue"])
    pvalues = np.array(pvalues)
    return pvalues[np.isfinite(pvalues)]


@pytest.mark.parametrize("target", ["gaussian", "binary"])
def test_p_values_are_uniform_under_additive_nulls(target):
    """Common alleles, n = 2,000: uniform over 100 data sets (a pooled-variance F test is not with
    the variance QTL: 2-3 times too many p-values below 0.01)."""
    pvalues = _null_pvalues(target, 2000, (0.2, 0.5), np.random.default_rng(11), 100)
    assert stats.kstest(pvalues, "uniform").pvalue > 1e-3
    assert 0.035 < np.mean(pvalues < 0.05) < 0.065


@pytest.mark.parametrize("target", ["gaussian", "binary"])
def test_p_values_stay_valid_with_rare_alleles(target):
    """Minor allele frequencies from 0.05, n = 500: cells of a few rows make the test conservative
    (measured 0.031-0.035 below 0.05), never liberal."""
    pvalues = _null_pvalues(target, 500, (0.05, 0.5), np.random.default_rng(7), 150)
    for alpha in (0.001, 0.01, 0.05):
        assert np.mean(pvalues < alpha) <= 1.3 * alpha + 0.001


def test_screen_keeps_the_top_columns_and_scans_them_on_the_other_rows():
    from pyinterp.importance import mdi_oob
    from pyinterp.interactions import screen_pairs

    rng = np.random.default_rng(4)
    G = rng.binomial(2, 0.4, size=(600, 200)).astype(float)
    pcs = rng.standard_normal((600, 2))
    X = np.column_stack([G, pcs])
    y = 1.5 * ((G[:, 5] > 0) & (G[:, 50] > 0)) + pcs[:, 0] + rng.standard_normal(600)
    kw = dict(n_features=20, n_estimators=60, random_state=3, always_split_features=[200, 201], top=None)
    found = screen_pairs(X, y, **kw, n_jobs=1)
    again = screen_pairs(X, y, **kw, n_jobs=2)
    np.testing.assert_array_equal(found.features, again.features)
    np.testing.assert_array_equal(found.scan.interactions["pvalue"], again.scan.interactions["pvalue"])
    assert len(found.screen_rows) == 300 and np.intersect1d(found.screen_rows, found.scan_rows).size == 0
    assert len(found.scan_rows) == 300
    importances = mdi_oob(found.forest, X[found.screen_rows], y[found.screen_rows])
    np.testing.assert_array_equal(found.importances, importances)
    ranked = np.argsort(-importances[:200], kind="stable")  # the covariates are not screened
    np.testing.assert_array_equal(found.features, ranked[:20])
    design = np.column_stack([np.ones(300), pcs[found.scan_rows]])  # the covariates' share removed first
    rest = y[found.scan_rows] - design @ np.linalg.lstsq(design, y[found.scan_rows], rcond=None)[0]
    direct = pair_scan(X[found.scan_rows], rest, features=np.sort(found.features), top=None)
    np.testing.assert_array_equal(found.scan.interactions["pvalue"], direct.interactions["pvalue"])
    assert found.scan.n_pairs == 190 and found.scan.interactions[0].features == ((5, 1), (50, 1))
    # the triples: the first 20 pairs extended by the other kept columns, on the same rows and y
    pairs = [[k for k, _ in row.features] for row in direct.interactions[:20]]
    triples = triple_scan(X[found.scan_rows], rest, features=np.sort(found.features), pairs=pairs, top=None)
    assert found.triples.n_triples == triples.n_triples
    np.testing.assert_array_equal(found.triples.interactions["pvalue"], triples.interactions["pvalue"])
    assert found.triples.interactions.features == triples.interactions.features
    assert screen_pairs(X, y, **{**kw, "triples": 0}).triples is None
    # at most n_features columns: every pair, every row, no forest
    small = screen_pairs(X[:, :30], y, n_features=40, triples=3)
    assert small.forest is None and small.scan.n_pairs == 435 and len(small.scan_rows) == 600
    first = [[k for k, _ in r.features] for r in small.scan.interactions[:3]]
    assert small.triples.n_triples == len({tuple(sorted({*p, c})) for p in first for c in range(30) if c not in p})
    cases = np.where(y > np.median(y), "case", "control")
    split = screen_pairs(X, cases, n_features=20, n_estimators=20, random_state=0)
    assert np.sum(cases[split.screen_rows] == "case") == 150  # drawn within each class
    with pytest.raises(ValueError, match="3 classes"):
        screen_pairs(X, np.array(["a", "b", "c"])[np.arange(600) % 3], n_features=20)


def test_the_screen_width_grows_as_the_square_root_past_ten_to_the_five():
    from pyinterp.interactions import screen_pairs
    from pyinterp.interactions.screen import screen_width

    assert [screen_width(p) for p in (10, 1000, 10**5, 10**5 + 1, 4 * 10**5, 10**6)] == [1000, 1000, 1000, 1001,
                                                                                       2000, 3163]
    X = np.random.default_rng(0).integers(0, 3, (60, 30)).astype(np.int8)
    found = screen_pairs(X, X[:, 0] * X[:, 1] + 0.0)  # "auto": 30 columns <= 1000, every pair, no forest
    assert found.forest is None and found.scan.n_pairs == 435
    # "auto" keeps as many columns as make at most max_pairs pairs: 9 make 36 <= 44, 10 make 45
    capped = screen_pairs(X, X[:, 0] * X[:, 1] + 0.0, max_pairs=44, n_estimators=5, triples=0, random_state=0)
    assert len(capped.features) == 9 and capped.scan.n_pairs == 36 and capped.forest is not None
    with pytest.raises(ValueError, match="30 columns make 435 pairs, above max_pairs=434"):
        screen_pairs(X, X[:, 0] * X[:, 1] + 0.0, n_features=30, max_pairs=434)


def test_a_screen_of_many_columns_on_few_rows_warns():
    from pyinterp.interactions import screen_pairs

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (120, 5000)).astype(np.int8)
    with pytest.warns(UserWarning, match="screening 5000 columns on 60 rows: with few rows the forest cannot rank"):
        screen_pairs(X, rng.standard_normal(120), n_features=20, n_estimators=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        screen_pairs(X[:, :4999], rng.standard_normal(120), n_features=20, n_estimators=5, random_state=0)


def test_q_values_of_the_kept_rows_equal_bh_over_every_pair():
    from pyinterp.significance import bh_qvalues, bh_qvalues_at

    rng = np.random.default_rng(0)
    for m in (1, 7, 1000, 100_000):
        p = rng.random(m) ** 3
        p[rng.random(m) < 0.1] = np.nan  # pairs without a test
        p[: m // 3] = np.round(p[: m // 3], 2)  # ties share the q-value of the last of them
        index = rng.permutation(m)[: max(1, m // 10)]
        q, tested = bh_qvalues_at(p, index)
        finite = np.isfinite(p)
        expected = np.full(m, np.nan)
        expected[finite] = bh_qvalues(p[finite])
        assert tested == finite.sum()
        np.testing.assert_array_equal(q, expected[index])
