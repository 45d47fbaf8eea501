"""triple_scan: every triple's three-way interaction test and Boolean rule, against least squares
on the rows; calibration under nulls holding pairwise interactions; pairs extended."""

from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from cell_scans import least_squares, rounded

from pyinterp.interactions import pair_scan, triple_scan
from pyinterp.interactions.cell_tests import SIDES, TRIPLES
from pyinterp.io import PackedGenotypes
from pyinterp.io.packing import pack_counts


def _brute(columns, cuts, y):
    """The HC2 score test's F, df1 and p against the pairwise model, and every rule's gain,
    coefficient and own fit, by least squares on the rows."""
    keep = ~np.isnan(columns).any(axis=1)
    columns, y = columns[keep], y[keep]
    lv = np.column_stack([np.searchsorted(c[~np.isnan(c)], x) for x, c in zip(columns.T, cuts)])
    one = [np.column_stack([lv[:, t] == 1, lv[:, t] == 2]) for t in range(3)]
    two = [np.column_stack([one[s][:, i] & one[t][:, j] for i in range(2) for j in range(2)])
           for s, t in combinations(range(3), 2)]
    pairwise = np.column_stack([np.ones(len(y)), *one, *two]).astype(float)
    rss_pairwise, _ = least_squares(pairwise, y)
    hat = pairwise @ np.linalg.pinv(pairwise.T @ pairwise) @ pairwise.T
    residual = y - hat @ y
    z = np.column_stack([one[0][:, i] & one[1][:, j] & one[2][:, k] for i in range(2) for j in range(2)
                         for k in range(2)]).astype(float)
    g = z - hat @ z
    leverage = np.diag(hat)
    fitted_exactly = leverage > 1 - 1e-12  # a cell the pairwise model fits alone: no variance to estimate
    rho = np.where(fitted_exactly, 0.0, residual**2 / np.where(fitted_exactly, 1.0, 1 - leverage))
    variance = (g * rho[:, None]).T @ g
    score = z.T @ residual
    df1 = np.linalg.matrix_rank(variance)
    cells = TRIPLES.cell_index(lv)
    assert df1 == len(np.unique(cells)) - np.linalg.matrix_rank(pairwise)
    f = score @ np.linalg.pinv(variance) @ score / df1
    p = stats.f.sf(f, df1, len(y) - len(np.unique(cells)))
    gains, coefs, alone = [], [], []
    for rule in TRIPLES.rule_cells:
        r = rule[cells]
        rss, coef = least_squares(np.column_stack([pairwise, r]), y)
        full_rank = np.linalg.matrix_rank(np.column_stack([pairwise, r])) > np.linalg.matrix_rank(pairwise)
        gains.append(rss_pairwise - rss if full_rank else 0.0)
        coefs.append(coef[-1])
        alone.append(((r - r.mean()) @ (y - y.mean())) ** 2 / max(((r - r.mean()) ** 2).sum(), 1e-300))
    return f, df1, p, np.array(gains), np.array(coefs), np.array(alone), len(y)


def _genotypes(n, p, rng, missing=0.0, maf=(0.1, 0.5)):
    G = rng.binomial(2, rng.uniform(*maf, p), size=(n, p)).astype(float)
    G[rng.random((n, p)) < missing] = np.nan
    return G


@pytest.mark.parametrize("missing", [0.0, 0.04])
def test_every_triple_equals_least_squares_on_its_rows(missing):
    rng = np.random.default_rng(3)
    G = _genotypes(600, 5, rng, missing)
    x = rng.standard_normal(600)  # cut at its tertiles
    X = np.column_stack([G, x])
    g = np.nan_to_num(G)
    y = 2.0 * (g[:, 0] > 0) * (g[:, 1] > 0) * (x > 0.4) + 0.5 * (g[:, 2] > 0) * (g[:, 3] > 1) + g[:, 4] \
        + rng.standard_normal(600)
    scan = triple_scan(X, y, top=None)
    assert scan.n_triples == 20
    yr = rounded(y)
    for row in scan.interactions:
        columns = [k for k, _ in row.features]
        assert columns == sorted(columns)
        f, df1, p, gains, coefs, alone, count = _brute(X[:, columns], scan.cuts[columns], yr)
        assert row.n == count and row.df == df1
        np.testing.assert_allclose([row.statistic, row.pvalue], [f, p], rtol=1e-7)
        thresholds = [row.threshold_1, row.threshold_2, row.threshold_3]
        r = next(i for i, rule in enumerate(TRIPLES.rules)
                 if all(SIDES[s][0] == sign and scan.cuts[c, SIDES[s][1]] == t
                        for s, (c, sign), t in zip(rule, row.features, thresholds)))
        group = next(g for g in TRIPLES.same_cuts if r in g)
        assert gains[r] == pytest.approx(gains.max(), rel=1e-7, abs=1e-9)
        assert alone[r] == pytest.approx(alone[group].max(), rel=1e-9)
        if gains[r] > 1e-9:
            assert row.effect == pytest.approx(coefs[r], rel=1e-6)
    best = scan.interactions[0]
    assert [k for k, _ in best.features] == [0, 1, 5]  # the planted triple, first (q 0.75 at 600 rows)


def test_a_pair_and_a_third_columns_own_effect_make_no_triple():
    """The pairwise model absorbs a pair's interaction and any column's effect: the triple holding
    them scores as chance, where pair_scan finds the pair."""
    rng = np.random.default_rng(5)
    G = _genotypes(3000, 6, rng, maf=(0.2, 0.5))
    y = 1.5 * ((G[:, 0] > 0) & (G[:, 1] > 0)) + 0.8 * G[:, 2] + rng.standard_normal(3000)
    assert pair_scan(G, y).interactions[0].features[:2] == ((0, 1), (1, 1))
    triples = triple_scan(G, y, top=None)
    row = next(r for r in triples.interactions if [k for k, _ in r.features] == [0, 1, 2])
    assert row.pvalue > 0.01


def _null_pvalues(target, n, rng, replicates, extend):
    """Triples' p-values without a three-way interaction: pairwise interactions, effects of any
    dominance, LD and unequal noise; with `extend`, the best pair of each data set (found on the
    same rows) extended by every other column."""
    pvalues = []
    for _ in range(replicates):
        G = rng.binomial(2, rng.uniform(0.2, 0.5, 6), size=(n, 6)).astype(float)
        G[:, 5] = np.where(rng.random(n) < 0.7, G[:, 4], G[:, 5])  # LD
        effects = 0.4 * ((G[:, 0] > 0) & (G[:, 1] > 0)) + 0.2 * G[:, 2] - 0.3 * (G[:, 3] == 2) \
            + 0.3 * (G[:, 1] > 1) * (G[:, 4] > 0)
        if target == "gaussian":
            y = effects + rng.standard_normal(n) * (1 + 0.5 * (G[:, 5] > 0))
        else:
            y = rng.random(n) < 0.2 + 0.5 * effects
        pairs = [[k for k, _ in pair_scan(G, y, top=1).interactions[0].features]] if extend else None
        pvalues.extend(triple_scan(G, y, pairs=pairs, top=None).interactions["pvalue"])
    pvalues = np.array(pvalues)
    return pvalues[np.isfinite(pvalues)]


@pytest.mark.parametrize("target", ["gaussian", "binary"])
def test_p_values_are_uniform_under_pairwise_nulls(target):
    pvalues = _null_pvalues(target, 2000, np.random.default_rng(17), 60, extend=False)
    assert len(pvalues) == 1200
    assert stats.kstest(pvalues, "uniform").pvalue > 1e-3
    assert 0.035 < np.mean(pvalues < 0.05) < 0.065


def test_p_values_stay_uniform_when_the_pairs_extended_were_chosen_on_the_same_rows():
    pvalues = _null_pvalues("gaussian", 2000, np.random.default_rng(19), 150, extend=True)
    assert len(pvalues) == 600
    assert stats.kstest(pvalues, "uniform").pvalue > 1e-3
    assert np.mean(pvalues < 0.05) < 0.07


def test_pairs_extended_test_each_distinct_triple_once_as_the_full_scan_does():
    rng = np.random.default_rng(2)
    G = _genotypes(800, 7, rng)
    y = 1.0 * ((G[:, 1] > 0) & (G[:, 3] > 0) & (G[:, 6] > 0)) + rng.standard_normal(800)
    full = triple_scan(G, y, top=None)
    by_columns = {tuple(k for k, _ in r.features): r for r in full.interactions}
    extended = triple_scan(G, y, pairs=[(3, 1), (1, 6), (0, 2), (1, 3)], top=None)
    # (1, 3) twice, then 5 thirds each; {1, 3, 6} reached from (1, 3) and (1, 6): 5 + 5 - 1 + 5
    assert extended.n_triples == 14
    seen = [tuple(k for k, _ in r.features) for r in extended.interactions]
    assert len(set(seen)) == 14
    for r in extended.interactions:
        same = by_columns[tuple(k for k, _ in r.features)]
        assert (r.statistic, r.df, r.effect, r.features) == (same.statistic, same.df, same.effect, same.features)
    # q-values over the 14 triples tested
    np.testing.assert_allclose(extended.interactions["qvalue"],
                               stats.false_discovery_control(extended.interactions["pvalue"]), rtol=1e-12)
    assert seen[0] == (1, 3, 6)


def test_packed_genotypes_names_and_threads():
    rng = np.random.default_rng(4)
    G = _genotypes(500, 8, rng, missing=0.02)
    cases = rng.random(500) < 0.2 + 0.4 * ((np.nan_to_num(G[:, 1]) > 0) & (np.nan_to_num(G[:, 2]) > 0)
                                           & (np.nan_to_num(G[:, 5]) > 0))
    names = [f"rs{k}" for k in range(8)]
    packed = PackedGenotypes(pack_counts(np.where(np.isnan(G), -9, G).T.astype(np.int8)), 500, variant_ids=names)
    a = triple_scan(packed, np.where(cases, "case", "control"), features=names[:6], n_jobs=1)
    b = triple_scan(G, cases, features=range(6), n_jobs=2, pairs=None)
    assert a.n_triples == b.n_triples == 20
    for column in ("statistic", "pvalue", "qvalue"):
        np.testing.assert_array_equal(a.interactions[column], b.interactions[column])
    np.testing.assert_array_equal(a.interactions["effect"], -b.interactions["effect"])  # "control" is 1 in a
    assert a.interactions.label(a.interactions[0].features).count("rs") == 3
    named = triple_scan(packed, cases, features=names[:6], pairs=[("rs1", "rs2")])
    assert named.n_triples == 4


def test_bad_input_is_named():
    X = np.random.default_rng(0).binomial(2, 0.4, (30, 5)).astype(float)
    y = np.arange(30.0)
    with pytest.raises(ValueError, match="at least three columns"):
        triple_scan(X, y, features=[0, 1])
    with pytest.raises(ValueError, match="10 triples, above max_triples=9"):
        triple_scan(X, y, max_triples=9)
    with pytest.raises(ValueError, match="6 triples, above max_triples=5"):
        triple_scan(X, y, pairs=[(0, 1), (2, 3)], max_triples=5)
    with pytest.raises(ValueError, match=r"pairs must be of shape \(n_pairs, 2\)"):
        triple_scan(X, y, pairs=[0, 1])
    with pytest.raises(ValueError, match="two distinct columns"):
        triple_scan(X, y, pairs=[(1, 1)])
    with pytest.raises(ValueError, match="not among the features scanned"):
        triple_scan(X, y, features=[0, 1, 2], pairs=[(0, 4)])
    with pytest.raises(ValueError, match="pairs names column 9"):
        triple_scan(X, y, pairs=[(0, 9)])
    with pytest.raises(ValueError, match="3 classes"):
        triple_scan(X, np.array(list("abc") * 10, dtype=object))
    with pytest.raises(ValueError, match="one value per row"):
        triple_scan(X, y[:-1])
