"""PartitionedRatio and its objective (spec seed004 eq. 6*) against direct evaluation, finite
differences, the closed-form lambda_max, KKT conditions and the Gaussian ground truth."""

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator

from pyinterp import PartitionedRatio
from pyinterp.partitioned import PAIR_FEATURES, UNARY_FEATURES, RatioProblem, solve_path
from pyinterp.partitioned.group_path import group_norms
from pyinterp.partitioned.ratio import permutation_null_counts

pytestmark = pytest.mark.no_core   # the partitioned ratio is numpy only


def gaussian_mrf(m, edge_prob, weight, seed):
    """A precision matrix with random +-weight edges, made positive definite by its diagonal."""
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((m, m)) < edge_prob, 1)
    theta = np.where(upper, rng.choice([-weight, weight], size=(m, m)), 0.0)
    theta = theta + theta.T
    theta += np.eye(m) * (max(0.0, -np.linalg.eigvalsh(theta).min()) + 0.5)
    return theta


def sample(theta, n, seed):
    return np.random.default_rng(seed).multivariate_normal(np.zeros(len(theta)), np.linalg.inv(theta), size=n)


def standardise(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def direct_log_ratios(Z, t1, t2, pair_funcs, unary_funcs, theta_pairs, theta_unary):
    """R[i, j]: the log-ratio of block 1 from sample i joined with block 2 from sample j, by its
    definition, one column pair (u, v) at a time. theta_pairs maps (u, v) (u in T1 for cross pairs,
    u < v within a block) to a length-b vector, theta_unary maps u to a length-c vector."""
    n = Z.shape[0]
    block = {u: 1 for u in t1} | {v: 2 for v in t2}

    def log_ratio(x1_row, x2_row):
        x = np.where([block[u] == 1 for u in range(Z.shape[1])], x1_row, x2_row)
        s = 0.0
        for (u, v), th in theta_pairs.items():
            s += sum(t * f(x[u]) * g(x[v]) for t, (f, g) in zip(th, pair_funcs))
        for u, th in theta_unary.items():
            s += sum(t * f(x[u]) for t, f in zip(th, unary_funcs))
        return s

    return np.array([[log_ratio(Z[i], Z[j]) for j in range(n)] for i in range(n)])


def direct_loss(*args):
    """l(theta) by its definition: the joint samples against every mismatched pair i != j."""
    R = direct_log_ratios(*args)
    return -np.mean(np.diag(R)) + math.log(np.mean(np.exp(R[~np.eye(len(R), dtype=bool)])))


def random_theta(problem, seed, scale=0.2):
    return np.random.default_rng(seed).normal(scale=scale, size=problem.n_params)


def as_dicts(problem, theta, t1, t2):
    cross, w1, w2, u1, u2 = problem.split(theta)
    pairs = {(int(t1[p]), int(t2[q])): cross[:, p, q] for p in range(len(t1)) for q in range(len(t2))}
    for w, t, iu in ((w1, t1, problem.iu1), (w2, t2, problem.iu2)):
        pairs |= {(int(t[p]), int(t[q])): w[:, g] for g, (p, q) in enumerate(zip(*iu))}
    unary = {int(t1[p]): u1[:, p] for p in range(len(t1))} | {int(t2[q]): u2[:, q] for q in range(len(t2))}
    return pairs, unary


# Both kernel orientations (m1 < m2 runs on L^T), interleaved blocks, both feature sets.
CASES = [("xy", [0, 2], [1, 3, 4]), ("poly2", [0, 1, 3], [2, 4]), ("xy", [1, 2, 3], [0, 4])]


@pytest.mark.parametrize("features,t1,t2", CASES)
def test_loss_matches_direct_evaluation(features, t1, t2):
    Z = standardise(sample(gaussian_mrf(5, 0.5, 0.3, 0), 12, 1))
    pair, unary = PAIR_FEATURES[features], UNARY_FEATURES["quadratic"]
    problem = RatioProblem(Z, np.array(t1), np.array(t2), pair, unary, chunk=5)
    theta = random_theta(problem, 2)
    expected = direct_loss(Z, t1, t2, pair, unary, *as_dicts(problem, theta, t1, t2))
    assert problem.value(theta) == pytest.approx(expected, rel=0, abs=1e-12)
    assert problem.value_and_grad(theta)[0] == pytest.approx(expected, rel=0, abs=1e-12)


@pytest.mark.parametrize("features,t1,t2", CASES)
def test_kernel_inputs_give_every_pair_log_ratio(features, t1, t2):
    Z = standardise(sample(gaussian_mrf(5, 0.5, 0.3, 0), 9, 1))
    pair, unary = PAIR_FEATURES[features], UNARY_FEATURES["quadratic"]
    problem = RatioProblem(Z, np.array(t1), np.array(t2), pair, unary)
    theta = random_theta(problem, 2)
    a, b, A, cross = problem.kernel_inputs(theta)
    R = direct_log_ratios(Z, t1, t2, pair, unary, *as_dicts(problem, theta, t1, t2))
    kernel = a[:, None] + b[None, :] + A @ problem.B.T
    np.testing.assert_allclose(kernel, R.T if len(t1) < len(t2) else R, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(cross, problem.split(theta)[0])


@pytest.mark.parametrize("features,t1,t2", CASES)
def test_gradient_matches_finite_differences(features, t1, t2):
    Z = standardise(sample(gaussian_mrf(5, 0.5, 0.3, 3), 30, 4))
    problem = RatioProblem(Z, np.array(t1), np.array(t2), PAIR_FEATURES[features], UNARY_FEATURES["quadratic"],
                           chunk=7)
    theta = random_theta(problem, 5)
    _, grad = problem.value_and_grad(theta)
    h = 1e-6
    numeric = np.array([(problem.value(theta + h * e) - problem.value(theta - h * e)) / (2 * h)
                        for e in np.eye(problem.n_params)])
    np.testing.assert_allclose(grad, numeric, rtol=0, atol=1e-7 * max(1.0, np.abs(grad).max()))


def test_chunking_and_large_values_do_not_change_the_result():
    Z = standardise(sample(gaussian_mrf(6, 0.4, 0.3, 6), 23, 7))
    args = (Z, np.arange(3), np.arange(3, 6), PAIR_FEATURES["poly2"], UNARY_FEATURES["quadratic"])
    theta = random_theta(RatioProblem(*args), 8, scale=30.0)   # log-ratios in the hundreds: exp overflows
    ref_value, ref_grad = RatioProblem(*args, chunk=23).value_and_grad(theta)
    assert np.isfinite(ref_value) and np.all(np.isfinite(ref_grad))
    for chunk in (1, 4, 7):
        value, grad = RatioProblem(*args, chunk=chunk).value_and_grad(theta)
        assert value == pytest.approx(ref_value, rel=1e-13)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-10, atol=1e-12 * np.abs(ref_grad).max())


@pytest.mark.parametrize("features", ["xy", "poly2"])
def test_within_block_and_unary_gradients_vanish_at_zero(features):
    Z = standardise(sample(gaussian_mrf(7, 0.5, 0.4, 9), 40, 10))
    problem = RatioProblem(Z, np.array([0, 3, 5]), np.array([1, 2, 4, 6]), PAIR_FEATURES[features],
                           UNARY_FEATURES["quadratic"])
    value, grad = problem.value_and_grad(np.zeros(problem.n_params))
    assert value == pytest.approx(0.0, abs=1e-14)
    cross, w1, w2, u1, u2 = problem.split(grad)
    for block in (w1, w2, u1, u2):
        np.testing.assert_allclose(block, 0.0, rtol=0, atol=1e-14)
    assert np.abs(cross).max() > 1e-3
    np.testing.assert_allclose(cross, problem.cross_gradient_at_zero(), rtol=0, atol=1e-14)


def test_lambda_max_gives_zero_and_the_top_cross_pair_enters_just_below():
    X = sample(gaussian_mrf(8, 0.4, 0.4, 11), 150, 12)
    est = PartitionedRatio(4, n_lambdas=3, selection="smallest", refit=False).fit(X)
    assert np.all(est.coef_path_[:, :, 0] == 0)             # exact zeros from the group prox
    assert np.abs(est.unary_path_[:, :, 0]).max() < 1e-20   # unpenalised: zero up to rounding of W = 1/(n(n-1))
    problem = RatioProblem(standardise(X), np.arange(4), np.arange(4, 8), PAIR_FEATURES["xy"],
                           UNARY_FEATURES["quadratic"])
    norms0 = np.sqrt((problem.cross_gradient_at_zero() ** 2).sum(axis=0)).ravel()
    assert est.lambda_max_ == pytest.approx(norms0.max(), rel=1e-15)
    top, runner_up = np.sort(norms0)[::-1][:2]
    just_below = PartitionedRatio(4, lambdas=[top * (1 - 1e-3)], selection="smallest", refit=False).fit(X)
    assert runner_up < top * (1 - 1e-3)
    nonzero = np.flatnonzero(np.abs(just_below.coef_path_[:, 0, 0]) > 0)
    assert nonzero.tolist() == [int(np.argmax(norms0))]      # exactly one group, the top cross pair
    above = PartitionedRatio(4, lambdas=[top * (1 + 1e-9)], selection="smallest", refit=False).fit(X)
    assert np.all(above.coef_path_ == 0)


@pytest.mark.parametrize("penalize_within", [True, False])
def test_path_solutions_satisfy_the_kkt_conditions(penalize_within):
    X = sample(gaussian_mrf(8, 0.4, 0.4, 13), 120, 14)
    tol = 1e-7
    est = PartitionedRatio(4, n_lambdas=8, penalize_within=penalize_within, selection="smallest",
                           refit=False, tol=tol).fit(X)
    problem = RatioProblem(standardise(X), np.arange(4), np.arange(4, 8), PAIR_FEATURES["xy"],
                           UNARY_FEATURES["quadratic"])
    n_cross, G = est.n_cross_, problem.n_groups
    for k, lam in enumerate(est.lambdas_):
        theta = np.r_[est.coef_path_[:, :, k].T.ravel(), est.unary_path_[:4, :, k].T.ravel(),
                      est.unary_path_[4:, :, k].T.ravel()]
        grad = problem.value_and_grad(theta)[1]
        penalised = np.r_[np.ones(n_cross, bool), np.full(G - n_cross, penalize_within)]
        g, th = grad[:G], theta[:G]
        zero = th == 0
        assert np.all(np.abs(g[zero & penalised]) <= lam + 1e-5)
        active = ~zero & penalised
        np.testing.assert_allclose(g[active] + lam * np.sign(th[active]), 0.0, atol=1e-5)
        np.testing.assert_allclose(g[~penalised], 0.0, atol=1e-5)
        np.testing.assert_allclose(grad[G:], 0.0, atol=1e-5)   # unary terms are never penalised
    if not penalize_within:
        assert np.any(est.coef_path_[n_cross:, 0, -1] != 0)


def test_normaliser_convention_does_not_change_the_solution():
    Z = standardise(sample(gaussian_mrf(8, 0.4, 0.4, 15), 100, 16))
    args = (Z, np.arange(4), np.arange(4, 8), PAIR_FEATURES["xy"], UNARY_FEATURES["quadratic"])
    pairs, binom = RatioProblem(*args, normalizer="pairs"), RatioProblem(*args, normalizer="binom")
    with pytest.raises(ValueError, match="normalizer must be 'pairs' or 'binom', got 'binomial'"):
        RatioProblem(*args, normalizer="binomial")
    theta = random_theta(pairs, 17)
    assert binom.value(theta) - pairs.value(theta) == pytest.approx(math.log(2.0), abs=1e-14)
    lam_max = np.sqrt((pairs.cross_gradient_at_zero() ** 2).sum(axis=0)).max()
    lambdas = lam_max * np.logspace(0, -1.5, 6)
    weights = np.ones(pairs.n_groups)
    path_a, _, _ = solve_path(pairs, lambdas, weights, 1e-8, 5000)
    path_b, _, _ = solve_path(binom, lambdas, weights, 1e-8, 5000)
    np.testing.assert_allclose(path_a, path_b, rtol=0, atol=1e-9)
    for k in range(len(lambdas)):
        assert np.array_equal(group_norms(path_a[:, k], 1, pairs.n_groups) > 0,
                              group_norms(path_b[:, k], 1, pairs.n_groups) > 0)


def test_unpenalised_fit_recovers_minus_the_precision_cross_block():
    """Gaussian ground truth: the log partitioned ratio's cross block is exactly -Theta_12."""
    theta = np.array([[1.5, 0.4, 0.0, 0.5, 0.0],
                      [0.4, 1.5, 0.0, 0.0, -0.4],
                      [0.0, 0.0, 1.5, 0.4, 0.0],
                      [0.5, 0.0, 0.4, 1.5, 0.3],
                      [0.0, -0.4, 0.0, 0.3, 1.5]])
    X = sample(theta, 3000, 18)
    est = PartitionedRatio(3, lambdas=[0.0], selection="smallest", refit=False).fit(X)
    scale = X.std(axis=0)
    cross = est.coef_[: est.n_cross_, 0].reshape(3, 2) / np.outer(scale[:3], scale[3:])
    # 4 standard errors of the Gaussian MLE of a precision entry, sqrt((T_uu T_vv + T_uv^2) / n)
    se = np.sqrt((np.outer(np.diag(theta)[:3], np.diag(theta)[3:]) + theta[:3, 3:] ** 2) / len(X))
    assert np.all(np.abs(cross + theta[:3, 3:]) <= 4 * se)
    # within-block truth from Phi = -Theta + blockdiag(Sigma11^-1, Sigma22^-1): -Theta12 Theta22^-1 Theta21
    within1 = -theta[:3, 3:] @ np.linalg.solve(theta[3:, 3:], theta[3:, :3])
    iu = np.triu_indices(3, 1)
    got = est.coef_[est.n_cross_: est.n_cross_ + 3, 0] / (scale[iu[0]] * scale[iu[1]])
    np.testing.assert_allclose(got, within1[iu], rtol=0, atol=0.05)


def test_entry_lambda_ranks_the_true_cross_edges_first():
    theta = gaussian_mrf(12, 0.25, 0.45, 19)
    X = sample(theta, 600, 20)
    est = PartitionedRatio(6, n_lambdas=15, selection="smallest", refit=False).fit(X)
    truth = theta[:6, 6:].ravel() != 0
    assert truth.sum() >= 3
    order = np.argsort(-est.entry_lambda_)
    assert set(order[: truth.sum()]) == set(np.flatnonzero(truth))
    # entry values sit in the grid interval where each pair first becomes non-zero
    norms = np.sqrt((est.coef_path_[: est.n_cross_] ** 2).sum(axis=1))
    for g in range(est.n_cross_):
        ks = np.flatnonzero(norms[g] > 0)
        if ks.size == 0:
            assert est.entry_lambda_[g] < est.lambdas_[-1]
        elif ks[0] > 0:
            assert est.lambdas_[ks[0]] <= est.entry_lambda_[g] <= est.lambdas_[ks[0] - 1]
    assert set(map(tuple, est.cross_edges_)) == {tuple(p) for p in est.pairs_[: est.n_cross_][norms[:, -1] > 0]}


def test_validation_selects_a_lambda_and_score_is_the_held_out_likelihood():
    X = sample(gaussian_mrf(10, 0.3, 0.4, 21), 200, 22)
    est = PartitionedRatio(5, n_lambdas=8, selection="validation", random_state=0).fit(X)
    assert est.validation_scores_.shape == (8,) and est.fdr_path_ is None
    assert est.best_index_ == int(np.argmax(est.validation_scores_))
    assert est.lambda_ == est.lambdas_[est.best_index_]
    # the refit minimises the loss over a subspace containing 0, so its training score is >= 0
    assert est.score(X) >= 0.0
    problem = RatioProblem(standardise(X), np.arange(5), np.arange(5, 10), PAIR_FEATURES["xy"],
                           UNARY_FEATURES["quadratic"])
    theta = np.r_[est.coef_.T.ravel(), est.unary_coef_[:5].T.ravel(), est.unary_coef_[5:].T.ravel()]
    assert est.score(X) == pytest.approx(-problem.value(theta), rel=1e-12)
    support = np.flatnonzero(np.abs(est.coef_path_[:, 0, est.best_index_]) > 0)
    assert np.array_equal(np.flatnonzero(est.coef_[:, 0] != 0), support)


def test_the_permutation_null_counts_are_the_null_gradient_norms_above_each_lambda_by_definition():
    """Brute force: block 2's rows paired in each permuted order, each cross pair's gradient at
    theta = 0 by definition (matched pairs against the mismatched i != j), poly2 features (b = 4)."""
    Z = standardise(sample(gaussian_mrf(6, 0.4, 0.4, 31), 40, 32))
    n, R = len(Z), 7
    problem = RatioProblem(Z, np.arange(3), np.arange(3, 6), PAIR_FEATURES["poly2"], UNARY_FEATURES["quadratic"])
    rng, norms, mismatched = np.random.RandomState(5), [], ~np.eye(n, dtype=bool)
    for _ in range(R):
        order = rng.permutation(n)
        for u in range(3):
            for v in range(3, 6):
                grad = [-np.mean(np.diag(f)) + f[mismatched].mean()
                        for f in (np.outer(phi(Z[:, u]), psi(Z[order, v])) for phi, psi in PAIR_FEATURES["poly2"])]
                norms.append(np.linalg.norm(grad))
    norms = np.array(norms)
    lambdas = np.r_[np.quantile(norms, [0.99, 0.9, 0.5, 0.1]), norms.max() * 2, 0.0]
    got = permutation_null_counts(problem, np.random.RandomState(5), R, lambdas)
    np.testing.assert_array_equal(got, [(norms > lam).sum() / R for lam in lambdas])
    assert got[-2] == 0 and got[-1] == 9


def test_on_independent_blocks_the_permutation_rule_selects_no_edge_and_says_so():
    counts = []
    for s in range(8):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = PartitionedRatio(4, random_state=s).fit(np.random.default_rng(s).standard_normal((150, 8)))
        counts.append(len(est.cross_edges_))
        if not counts[-1]:
            assert any("selected no cross edge" in str(w.message) for w in caught)
            assert est.best_index_ == np.flatnonzero(est.fdr_path_ <= 0.1)[-1]
    assert counts.count(0) >= 6 and max(counts) <= 2            # measured: none in 6 of 8, one edge in 2
    np.testing.assert_array_less(-1e-300, est.null_edges_)
    assert np.all(np.diff(est.null_edges_) >= 0)                # more null pairs enter as lambda falls


@pytest.mark.heavy
def test_under_independent_blocks_the_false_discovery_rate_is_about_fdr():
    """With no cross edge every selection is false, so the FDR is the chance of selecting any:
    100 data sets of independent Gaussian blocks (4/4 columns, n = 150). Measured 0.12 (12 of 100;
    a standard error of 0.03 at 0.1), and 0.06 at 10/10 columns and n = 300."""
    selected = [len(PartitionedRatio(4, random_state=s).fit(np.random.default_rng(1000 + s).standard_normal(
        (150, 8))).cross_edges_) for s in range(100)]
    assert np.mean(np.array(selected) > 0) <= 0.1 + 2 * 0.03


@pytest.mark.parametrize("seed", [19, 41, 43])
def test_the_permutation_rule_selects_the_true_cross_edges_where_the_held_out_rule_over_selects(seed):
    theta = gaussian_mrf(12, 0.25, 0.45, seed)
    X = sample(theta, 600, seed + 1)
    truth = {(u, v) for u, v in zip(*np.nonzero(theta[:6, 6:]))}
    est = PartitionedRatio(6, random_state=0).fit(X)
    found = {(u, v - 6) for u, v in est.cross_edges_}
    held_out = PartitionedRatio(6, selection="validation", random_state=0).fit(X).cross_edges_
    assert truth <= found and len(found) <= len(truth) + 1     # measured: all true edges and at most 1 other
    assert len(held_out) >= len(truth) + 10                    # measured: 10-20 false edges
    n_selected = np.count_nonzero(np.sqrt((est.coef_path_[: est.n_cross_] ** 2).sum(1)) > 0, axis=0)
    expected = np.where(n_selected > 0, np.minimum(1, est.null_edges_ / np.maximum(n_selected, 1)), 0)
    np.testing.assert_array_equal(est.fdr_path_, expected)
    assert est.fdr_path_.max() <= 1
    assert est.fdr_path_[est.best_index_] <= 0.1 and est.validation_scores_ is None
    assert est.lambda_ == est.lambdas_[est.best_index_]


def test_the_permutation_rule_refines_between_the_chosen_grid_value_and_the_next():
    X = sample(gaussian_mrf(12, 0.25, 0.45, 19), 600, 20)
    est = PartitionedRatio(6, n_lambdas=10, random_state=0).fit(X)
    grid = est.lambda_max_ * np.logspace(0, -2, 10)
    lam = est.lambdas_
    assert len(lam) == 13 and np.all(np.diff(lam) < 0) and est.coef_path_.shape[2] == est.n_iter_.size == 13
    on_grid = np.isin(lam, grid)
    inserted = np.flatnonzero(~on_grid)
    j = inserted[0] - 1                                          # the chosen grid value
    assert inserted.tolist() == [j + 1, j + 2, j + 3]
    np.testing.assert_allclose(lam[inserted], lam[j] * (lam[j + 4] / lam[j]) ** (np.arange(1, 4) / 4), rtol=1e-12)
    below = np.flatnonzero(on_grid)[np.flatnonzero(on_grid) > j]
    assert est.fdr_path_[j] <= 0.1 and np.all(est.fdr_path_[below] > 0.1)
    assert est.best_index_ == max(i for i in range(j, j + 4) if est.fdr_path_[i] <= 0.1)
    # the inserted solutions continue the path from the chosen one: a path over the refined grid
    # (warm-started through every value above) has the same supports
    again = PartitionedRatio(6, lambdas=lam, selection="smallest", refit=False).fit(X)
    np.testing.assert_array_equal(again.coef_path_ != 0, est.coef_path_ != 0)
    np.testing.assert_allclose(again.coef_path_, est.coef_path_, atol=1e-3)


def test_a_grid_below_every_passing_lambda_selects_its_largest_and_says_so():
    X = sample(gaussian_mrf(10, 0.3, 0.4, 33), 300, 34)
    est = PartitionedRatio(5, random_state=0).fit(X)
    low = est.lambdas_[-3:]
    assert np.all(est.fdr_path_[-3:] > 0.1)
    with pytest.warns(UserWarning, match="no lambda of the grid has an estimated false discovery rate"):
        below = PartitionedRatio(5, lambdas=low, random_state=0).fit(X)
    assert below.best_index_ == 0


@pytest.mark.parametrize("selection", ["permutation", "validation"])
def test_deterministic_and_independent_of_threads(selection):
    X = sample(gaussian_mrf(10, 0.3, 0.4, 23), 400, 24)
    a = PartitionedRatio(5, n_lambdas=6, selection=selection, random_state=3, n_jobs=1).fit(X)
    b = PartitionedRatio(5, n_lambdas=6, selection=selection, random_state=3, n_jobs=2).fit(X)
    c = PartitionedRatio(5, n_lambdas=6, selection=selection, random_state=3, n_jobs=1).fit(X)
    for name in ("lambdas_", "coef_path_", "unary_path_", "entry_lambda_", "validation_scores_", "fdr_path_", "coef_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert np.array_equal(getattr(a, name), getattr(c, name)), name


def test_partition_forms_pandas_names_and_pickling():
    pd = pytest.importorskip("pandas")
    X = sample(gaussian_mrf(6, 0.4, 0.4, 25), 80, 26)
    cols = [f"g{k}" for k in range(6)]
    frame = pd.DataFrame(X, columns=cols)
    by_names = PartitionedRatio((["g0", "g2", "g4"], ["g1", "g3", "g5"]), n_lambdas=5, random_state=0).fit(frame)
    by_mask = PartitionedRatio(np.array([True, False] * 3), n_lambdas=5, random_state=0).fit(X)
    np.testing.assert_array_equal(by_names.block1_, [0, 2, 4])
    np.testing.assert_array_equal(by_names.coef_path_, by_mask.coef_path_)
    assert by_names.pairs_[0].tolist() == [0, 1]
    clone = pickle.loads(pickle.dumps(by_names))
    assert clone.score(frame) == by_names.score(frame)


def test_user_features_equal_the_builtin_ones():
    X = sample(gaussian_mrf(6, 0.4, 0.4, 27), 60, 28)
    builtin = PartitionedRatio(3, features="xy", n_lambdas=4, selection="smallest").fit(X)
    user = PartitionedRatio(3, features=[(np.negative, np.negative)], unary=[lambda x: x, lambda x: x * x - 1],
                            n_lambdas=4, selection="smallest").fit(X)
    np.testing.assert_allclose(user.coef_path_, builtin.coef_path_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("partition,message", [
    (([0, 1], [2]), "does not cover columns \\[3\\]"),
    (([0, 1, 2], [2, 3]), "share columns \\[2\\]"),
    (([], [0, 1, 2, 3]), "block 1 of the partition is empty"),
    (np.ones(4, bool), "block 2 of the partition is empty"),
    (np.ones(3, bool), "one entry per column \\(4\\)"),
    (4, "between 1 and 3"),
    (([0, 1], [2, 7]), "names column 7"),
    (([0, 0, 1], [2, 3]), "names a column twice"),
    ("ab", "partition must be"),
])
def test_bad_partitions(partition, message):
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises((ValueError, TypeError), match=message):
        PartitionedRatio(partition).fit(X)


@pytest.mark.parametrize("change,message", [
    (lambda X: X[:2], "2 sample"),
    (lambda X: np.where(np.arange(4) == 1, np.nan, X), "NaN"),
    (lambda X: np.where(np.arange(4) == 1, np.inf, X), "infinity"),
    (lambda X: np.c_[X[:, :3], np.ones(len(X))], "constant"),
])
def test_bad_data(change, message):
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(ValueError, match=message):
        PartitionedRatio(2, selection="smallest").fit(change(X))


@pytest.mark.parametrize("params,message", [
    ({"features": "cubic"}, "features='cubic' is not one of"),
    ({"features": np.multiply}, "not a single callable"),
    ({"unary": "cubic"}, "unary='cubic'"),
    ({"lambdas": [0.1, -1.0]}, "non-negative"),
    ({"n_lambdas": 0}, "n_lambdas"),
    ({"lambda_min_ratio": 0.0}, "lambda_min_ratio"),
    ({"validation_fraction": 1.0}, "validation_fraction"),
    ({"validation_fraction": None}, "validation_fraction"),
    ({"selection": "cv"}, "selection"),
    ({"fdr": 1.0}, "fdr"),
    ({"n_permutations": 0}, "n_permutations"),
    ({"features": [(np.sum, np.negative)]}, "elementwise"),
])
def test_bad_parameters(params, message):
    X = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises((ValueError, TypeError), match=message):
        PartitionedRatio(2, **params).fit(X)


def test_validation_needs_six_rows_and_score_needs_three():
    X = np.random.default_rng(0).normal(size=(5, 4))
    with pytest.raises(ValueError, match="at least 6 samples"):
        PartitionedRatio(2, selection="validation").fit(X)
    with pytest.warns(ConvergenceWarning, match="refit is unbounded"):   # 5 rows: matched pairs separate
        est = PartitionedRatio(2, selection="smallest", n_lambdas=2, lambda_min_ratio=0.5).fit(X)
    np.testing.assert_array_equal(est.coef_[:, 0], est.coef_path_[:, 0, -1])
    with pytest.raises(ValueError, match="2 sample"):
        est.score(X[:2])
    with pytest.raises(ValueError, match="4 features"):
        est.score(X[:, :3])


def test_check_estimator():
    check_estimator(PartitionedRatio(1, n_lambdas=4, random_state=0))


@pytest.mark.parametrize("k", [-600, 530])
def test_columns_at_extreme_scales_give_the_fit_of_the_unscaled_columns(k):
    """X * 1e160 standardised to zeros (the squares overflowed) and found no edge. Columns scaled by
    powers of two must give the same path and edges, with mean_ and scale_ scaled exactly."""
    X = sample(gaussian_mrf(8, 0.4, 0.4, 5), 150, 6)
    kw = dict(n_lambdas=5, selection="smallest")
    base = PartitionedRatio(4, **kw).fit(X)
    scaled = PartitionedRatio(4, **kw).fit(np.ldexp(X, k))
    np.testing.assert_array_equal(scaled.scale_, np.ldexp(base.scale_, k))
    np.testing.assert_array_equal(scaled.mean_, np.ldexp(base.mean_, k))
    np.testing.assert_array_equal(scaled.coef_path_, base.coef_path_)
    assert base.cross_edges_.size and np.array_equal(scaled.cross_edges_, base.cross_edges_)
