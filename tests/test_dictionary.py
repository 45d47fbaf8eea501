"""DL-BCD, its row subproblem, the sharpness test, and the dictionary generators and metrics."""

import itertools
import pickle
import warnings
from functools import reduce
from operator import add

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.utils.estimator_checks import check_estimator

from pyinterp import DLBCD, _core, sharpness_test
from pyinterp.datasets import (make_collinear_dictionary, make_dictionary_signals, make_gaussian_dictionary,
                               make_sparse_coefficients)
from pyinterp.metrics import dictionary_nmse, dictionary_recovered


def signals(p, n, s, seed, dictionary=None, snr=None):
    D = make_gaussian_dictionary(p, random_state=seed) if dictionary is None else dictionary
    A = make_sparse_coefficients(n, p, "sg", sparsity=s, random_state=seed + 1)
    return D, A, make_dictionary_signals(D, A, snr=snr, random_state=seed + 2)


# --- the row subproblem -------------------------------------------------------------------------


def row_objective(w, A, j, cos, weight):
    others = np.arange(len(w)) != j
    return np.abs(A @ w).sum() + np.sum(weight[others] * np.sqrt((w[others] - cos[others]) ** 2 + 1 - cos[others] ** 2))


def reference_solve(A, j, cos, weight):
    """The subproblem as a smooth program (epigraph t_i >= |<a_i, w>|) solved by scipy's SLSQP."""
    n, p = A.shape
    free = np.arange(p) != j

    def w_of(v):
        return np.insert(v[: p - 1], j, 1.0)

    def obj(v):
        x = v[: p - 1]
        return v[p - 1:].sum() + np.sum(weight[free] * np.sqrt((x - cos[free]) ** 2 + 1 - cos[free] ** 2))

    cons = [{"type": "ineq", "fun": lambda v: v[p - 1:] - A @ w_of(v)},
            {"type": "ineq", "fun": lambda v: v[p - 1:] + A @ w_of(v)}]
    v0 = np.concatenate([np.zeros(p - 1), np.abs(A[:, j]) + 1])
    res = minimize(obj, v0, constraints=cons, method="SLSQP", options=dict(maxiter=2000, ftol=1e-14))
    w = w_of(res.x)
    return w, row_objective(w, A, j, cos, weight)


@pytest.mark.parametrize("line_search", [_core.LineSearch.armijo, _core.LineSearch.wolfe])
@pytest.mark.parametrize("case", range(4))
def test_subproblem_matches_scipy_reference(line_search, case):
    rng = np.random.RandomState(case)
    p = 3 + case
    D = make_gaussian_dictionary(p, random_state=case)
    sparse = rng.randn(50, p) * (rng.rand(50, p) < 0.4)
    A = np.ascontiguousarray(sparse @ np.linalg.inv(D).T if case % 2 else rng.randn(50, p))
    j = case % p
    cos = np.ascontiguousarray(D.T @ D[:, j])
    weight = np.abs(A).sum(axis=0) * 0.7
    w, f, _ = _core.solve_row_subproblem(A, j, cos, weight, 0.0, line_search, 0, 1000, 1e-12)
    assert w[j] == 1.0
    assert f == pytest.approx(row_objective(w, A, j, cos, weight), rel=1e-12)
    _, f_ref = reference_solve(A, j, cos, weight)
    assert f <= f_ref * (1 + 1e-6)
    assert f == pytest.approx(f_ref, rel=1e-6)


def test_subproblem_smoothing_and_lbfgs_stay_close():
    rng = np.random.RandomState(7)
    A = np.ascontiguousarray(rng.randn(80, 5))
    cos = np.full(5, 0.3)
    weight = np.abs(A).sum(axis=0)
    _, exact, _ = _core.solve_row_subproblem(A, 2, cos, weight, 0.0, _core.LineSearch.armijo, 0, 1000, 1e-12)
    _, smooth, _ = _core.solve_row_subproblem(A, 2, cos, weight, 1e-5, _core.LineSearch.armijo, 0, 1000, 1e-12)
    _, limited, _ = _core.solve_row_subproblem(A, 2, cos, weight, 0.0, _core.LineSearch.wolfe, 3, 1000, 1e-12)
    assert smooth == pytest.approx(exact, rel=1e-6)
    assert limited == pytest.approx(exact, rel=1e-6)


# --- DL-BCD -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tau", [np.inf, 0.5])
@pytest.mark.parametrize("options", [dict(), dict(line_search="armijo"), dict(smoothing=0.0), dict(init="random")])
def test_objective_never_increases(tau, options):
    # noisy, collinear: many sweeps, so the history is long enough to test
    _, _, X = signals(8, 200, 4, seed=3, dictionary=make_collinear_dictionary(8, 0.6), snr=20)
    est = DLBCD(tau=tau, tol=1e-12, max_iter=40, noise=0, random_state=0, **options).fit(X)
    history = est.objective_history_
    assert len(history) == est.n_iter_ + 1 >= 3
    assert np.all(np.diff(history) <= 1e-12 * history[:-1])
    assert est.objective(X) == pytest.approx(history[-1], rel=1e-10)


@pytest.mark.parametrize("max_iter", [1, 2, 30])
def test_atoms_keep_unit_norm(max_iter):
    _, _, X = signals(6, 120, 3, seed=5, snr=50)
    init = make_gaussian_dictionary(6, random_state=11) * np.arange(1, 7)  # columns rescaled on entry
    est = DLBCD(tau=0.5, init=init, max_iter=max_iter, tol=0.0).fit(X)
    np.testing.assert_allclose(np.linalg.norm(est.components_, axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(est.transform(X) @ est.components_.T, X, atol=1e-10)


def reference_sweep(D, X, tau):
    """One sweep of Algorithm 2 written from the thesis: SLSQP subproblems, explicit inverses."""
    p = D.shape[0]
    for j in range(p):
        Q = np.linalg.inv(D)
        B = X @ Q.T
        keep = np.abs(B[:, j]) <= tau
        weight = np.where(np.abs(B) <= tau, np.abs(B), 0).sum(axis=0)
        w, _ = reference_solve(B[keep], j, D.T @ D[:, j], weight)
        scale = np.sqrt((w - D.T @ D[:, j]) ** 2 + 1 - (D.T @ D[:, j]) ** 2)
        scale[j] = 1.0
        Q = scale[:, None] * Q
        Q[j] = w @ np.linalg.inv(D)
        D = np.linalg.inv(Q)  # Proposition 5.2.1: unit columns without normalising
        np.testing.assert_allclose(np.linalg.norm(D, axis=0), 1.0, atol=1e-10)
    return D


@pytest.mark.parametrize("tau", [np.inf, 0.7])
def test_one_sweep_matches_the_thesis_update(tau):
    _, _, X = signals(3, 60, 2, seed=2, snr=10)
    D0 = make_gaussian_dictionary(3, random_state=8)
    est = DLBCD(tau=tau, init=D0, max_iter=1, tol=0.0, inner_tol=1e-14, smoothing=0.0, noise=0).fit(X)
    np.testing.assert_allclose(est.components_, reference_sweep(D0, X, tau), atol=1e-5)


@pytest.mark.parametrize("smoothing, nmse, rel", [(0.0, 1e-14, 1e-9), (1e-5, 1e-10, 1e-5)])
@pytest.mark.parametrize("p", [2, 3, 4, 5, 6])
def test_noiseless_small_dictionaries_are_recovered_exactly(p, smoothing, nmse, rel):
    # coherence 0.3 and s = 2 (s = 1 at p = 2): 10/10 seeds recovered for every p when this was written
    D, A, X = signals(p, 80 * p, 1 if p == 2 else 2, seed=10 + p, dictionary=make_collinear_dictionary(p, 0.3))
    est = DLBCD(tau=0.5, n_restarts=4, smoothing=smoothing, random_state=0).fit(X)
    assert dictionary_nmse(est.components_, D) < nmse
    assert est.is_sharp_
    assert est.objective_ == pytest.approx(np.minimum(np.abs(A), 0.5).sum() / len(A), rel=rel)


def test_two_stage_init_beats_random_init():
    # the thesis' single-run experiment (p = 10, mu = 0.7, SG(4), n = 400) on a few repetitions
    D = make_collinear_dictionary(10, 0.7)
    hits = {"l1": 0, "random": 0}
    for rep in range(6):
        _, _, X = signals(10, 400, 4, seed=100 + rep, dictionary=D)
        for init in hits:
            hits[init] += dictionary_recovered(DLBCD(tau=0.5, init=init, random_state=rep).fit(X).components_, D)
    assert hits["l1"] >= 3 and hits["random"] <= 1


@pytest.mark.heavy
def test_restarts_are_deterministic_for_any_n_jobs():
    _, _, X = signals(6, 150, 3, seed=9, snr=30)
    fits = [DLBCD(tau=0.5, n_restarts=4, random_state=4, n_jobs=j).fit(X) for j in (1, 2, 3)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.components_, fits[0].components_)
        np.testing.assert_array_equal(other.objective_history_, fits[0].objective_history_)
        np.testing.assert_array_equal(other.restart_objectives_, fits[0].restart_objectives_)
    assert fits[0].objective_ == fits[0].restart_objectives_.min() or fits[0].is_sharp_


def test_l1_stage_is_the_tau_inf_fit_bit_for_bit():
    # the two-stage fit's first stage is DLBCD(tau=inf, init="orth") with the same seeds, including
    # which restart is kept, so bench/reproduce_dlbcd.py takes the tau = inf result from it
    _, _, X = signals(7, 210, 3, seed=13, snr=40)
    two_stage = DLBCD(tau=0.5, init="l1", n_restarts=3, random_state=5).fit(X)
    plain = DLBCD(tau=np.inf, init="orth", n_restarts=3, random_state=5).fit(X)
    np.testing.assert_array_equal(two_stage.l1_components_, plain.dlbcd_components_)
    np.testing.assert_array_equal(two_stage.l1_objective_history_, plain.objective_history_)
    assert not np.array_equal(two_stage.dlbcd_components_, plain.dlbcd_components_)
    assert not hasattr(plain, "l1_components_")


@pytest.mark.parametrize("tau", [np.inf, 0.5])
def test_full_fit_through_lbfgs(tau):
    # lbfgs_memory forces the L-BFGS path used by default above p = 200; 5 pairs for 13 free
    # coordinates per subproblem, so the memory limit binds. Noiseless data: both solvers reach D*,
    # and their objectives agree to 1e-7 relative (measured: about 1e-9).
    D, _, X = signals(14, 700, 3, seed=2)
    lbfgs = DLBCD(tau=tau, lbfgs_memory=5, random_state=0).fit(X)
    dense = DLBCD(tau=tau, lbfgs_memory=0, random_state=0).fit(X)
    history = lbfgs.objective_history_
    assert len(history) == lbfgs.n_iter_ + 1 >= 2
    assert np.all(np.diff(history) <= 0)
    np.testing.assert_allclose(np.linalg.norm(lbfgs.components_, axis=0), 1.0, rtol=1e-12)
    assert lbfgs.objective_ == pytest.approx(dense.objective_, rel=1e-7)
    assert dictionary_nmse(lbfgs.components_, D) < 1e-8
    assert not np.array_equal(lbfgs.objective_history_, dense.objective_history_)  # another solver ran


def test_one_feature():
    X = np.arange(1.0, 6.0)[:, None]
    est = DLBCD().fit(X)
    np.testing.assert_array_equal(np.abs(est.components_), [[1.0]])


@pytest.mark.parametrize(
    "params, X, match",
    [
        (dict(init=np.ones((3, 2))), None, "square"),
        (dict(init=np.ones((3, 3))), None, "singular"),
        (dict(init=np.eye(4)), None, "features"),
        (dict(init=np.eye(3), n_restarts=2), None, "n_restarts"),
        (dict(init="pca"), None, "init must be"),
        (dict(tau=0), None, "tau"),
        (dict(tau=-1.0), None, "tau"),
        (dict(line_search="exact"), None, "line_search"),
        (dict(lbfgs_memory=-1), None, "lbfgs_memory"),
        (dict(), np.ones((2, 3)), "n_samples = 2 < n_features = 3"),
        (dict(), np.array([[1.0, np.nan, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]]), "NaN"),
    ],
)
def test_bad_input(params, X, match):
    X = np.random.RandomState(0).randn(20, 3) if X is None else X
    with pytest.raises(ValueError, match=match):
        DLBCD(**params).fit(X)


def test_estimator_contract_pickle_and_pandas():
    check_estimator(DLBCD(max_iter=5, random_state=0))
    pd = pytest.importorskip("pandas")
    _, _, X = signals(4, 80, 2, seed=1)
    frame = pd.DataFrame(X, columns=list("abcd"))
    est = DLBCD(random_state=0).fit(frame)
    np.testing.assert_array_equal(est.feature_names_in_, list("abcd"))
    np.testing.assert_array_equal(DLBCD(random_state=0).fit(X).components_, est.components_)
    clone = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(clone.transform(frame), est.transform(frame))


# --- the sharpness test -----------------------------------------------------------------------


@pytest.mark.parametrize("lbfgs_memory", [None, 4])  # None: dense BFGS at this p; 4: L-BFGS
def test_sharpness_follows_corollary_4_1_1(lbfgs_memory):
    p, s = 10, 2
    # mu sqrt(s) < (p - s) / (p - 1) holds clearly: the reference dictionary is sharp with ample samples
    D = make_collinear_dictionary(p, 0.2)
    _, _, X = signals(p, 3000, s, seed=1, dictionary=D)
    sharp, r = sharpness_test(D, X, random_state=0, lbfgs_memory=lbfgs_memory)
    assert sharp and r < 1e-10
    # mu = 0.8 fails it clearly (0.8 * sqrt(4) = 1.6 > 6 / 9): not sharp, the minimiser moves far
    D = make_collinear_dictionary(p, 0.8)
    _, _, X = signals(p, 3000, 4, seed=2, dictionary=D)
    sharp, r = sharpness_test(D, X, random_state=0, lbfgs_memory=lbfgs_memory)
    assert not sharp and r > 1e-2


def test_sharpness_test_does_not_stop_on_the_kink():
    # Corollary 4.1.1 holds but n = 300 is too few at p = 20: I_k is not the minimiser of (5.3) for
    # some k. Started exactly on I_k (a kink) BFGS stays there and would call D* sharp.
    p, s = 20, 10
    D = make_collinear_dictionary(p, ((p - s) / (p - 1) - 0.2) / np.sqrt(s))
    _, _, X = signals(p, 300, s, seed=0, dictionary=D)
    sharp, r = sharpness_test(D, X, random_state=0)
    assert not sharp
    assert sharpness_test(D, X, random_state=0, start_noise=0.0)[0]
    again, r_again, W, M = sharpness_test(D, X, random_state=0, return_solutions=True)
    assert (again, r_again) == (sharp, r)
    # r = max_k ||w^(k) - I_k||^2, the squares summed in column order as the core does (numpy's
    # pairwise sum may round the last bit differently)
    assert r == max(reduce(add, (v * v for h, v in enumerate(W[k]) if h != k), 0.0) for k in range(p))
    np.testing.assert_array_equal(np.diag(M), 0.0)
    np.testing.assert_array_equal(M, M.T)
    assert 0 < np.abs(M - (D.T @ D - np.eye(p))).max() < 0.1  # perturbed with rho = 0.01
    beta = np.linalg.solve(D, X.T).T
    k = int(np.argmax(((W - np.eye(p)) ** 2).sum(axis=1)))
    weight = np.abs(beta).sum(axis=0)
    assert row_objective(W[k], beta, k, M[k], weight) < row_objective(np.eye(p)[k], beta, k, M[k], weight) - 1e-3


def test_sharpness_test_is_deterministic_and_checks_input():
    D = make_collinear_dictionary(5, 0.3)
    _, _, X = signals(5, 300, 2, seed=4, dictionary=D)
    results = {sharpness_test(D, X, random_state=3, n_jobs=j) for j in (1, 2)}
    assert len(results) == 1
    with pytest.raises(ValueError, match="square"):
        sharpness_test(D[:, :4], X)
    with pytest.raises(ValueError, match="singular"):
        sharpness_test(np.ones((5, 5)), X)
    with pytest.raises(ValueError, match="features"):
        sharpness_test(D, X[:, :4])
    with pytest.raises(ValueError, match="rho"):
        sharpness_test(D, X, rho=0)
    with pytest.raises(TypeError, match="lbfgs_memory"):
        sharpness_test(D, X, lbfgs_memory=2.5)


# --- generators and metrics -------------------------------------------------------------------


def test_collinear_dictionary_has_unit_atoms_with_constant_cosine():
    D = make_collinear_dictionary(6, 0.7)
    M = D.T @ D
    np.testing.assert_allclose(M, 0.3 * np.eye(6) + 0.7, atol=1e-14)
    np.testing.assert_allclose(D, D.T)
    np.testing.assert_allclose(np.linalg.norm(make_gaussian_dictionary(7, random_state=0), axis=0), 1.0)


@pytest.mark.parametrize("model", ["sg", "sl", "abs_sg"])
def test_exact_sparse_coefficients(model):
    A = make_sparse_coefficients(2000, 8, model, sparsity=3, random_state=0)
    assert np.all((A != 0).sum(axis=1) == 3)
    np.testing.assert_allclose((A != 0).mean(axis=0), 3 / 8, atol=0.04)  # uniform supports
    if model == "abs_sg":
        assert np.all(A >= 0)
    nz = A[A != 0]
    assert np.mean(np.abs(nz)) == pytest.approx(1.0 if model == "sl" else np.sqrt(2 / np.pi), rel=0.05)


def test_bernoulli_gaussian_and_snr():
    A = make_sparse_coefficients(4000, 10, "bg", probability=0.3, random_state=0)
    assert (A != 0).mean() == pytest.approx(0.3, abs=0.01)
    D = make_gaussian_dictionary(10, random_state=0)
    clean = make_dictionary_signals(D, A)
    noisy = make_dictionary_signals(D, A, snr=100, random_state=1)
    ratio = np.linalg.norm(clean, axis=1).mean() / np.linalg.norm(noisy - clean, axis=1).mean()
    assert ratio == pytest.approx(100, rel=0.02)
    with pytest.raises(ValueError, match="probability"):
        make_sparse_coefficients(10, 3, "bg")
    with pytest.raises(ValueError, match="sparsity"):
        make_sparse_coefficients(10, 3, "sg", sparsity=4)


def test_nmse_is_invariant_to_sign_permutation():
    D = make_gaussian_dictionary(6, random_state=0)
    J = np.eye(6)[:, [3, 0, 5, 1, 2, 4]] * np.array([1, -1, -1, 1, 1, -1])
    assert dictionary_nmse(D @ J, D) == pytest.approx(0.0, abs=1e-15)
    E = D.copy()
    E[:, 2] = make_gaussian_dictionary(6, random_state=1)[:, 0]
    brute = min(
        np.sum((E @ np.eye(6)[:, list(perm)] * signs - D) ** 2) / 6
        for perm in itertools.permutations(range(6))
        for signs in [np.sign(np.sum(E[:, list(perm)] * D, axis=0)) + (np.sum(E[:, list(perm)] * D, axis=0) == 0)]
    )
    assert dictionary_nmse(E, D) == pytest.approx(brute, rel=1e-12)
    assert dictionary_recovered(D @ J, D) and not dictionary_recovered(E, D, threshold=1e-3)


@pytest.mark.heavy
def test_score_and_feature_names_for_model_selection():
    """score is minus the objective (higher is better) and the coefficients are named dlbcd0..,
    so set_output(transform="pandas") and GridSearchCV work as on scikit-learn's decompositions."""
    pd = pytest.importorskip("pandas")
    from sklearn.model_selection import GridSearchCV

    D = make_gaussian_dictionary(4, random_state=0)
    A = make_sparse_coefficients(300, 4, "sg", sparsity=2, random_state=1)
    X = make_dictionary_signals(D, A, snr=100, random_state=2)
    model = DLBCD(max_iter=30, random_state=0).fit(X)
    assert model.score(X) == -model.objective(X)
    assert list(model.get_feature_names_out()) == ["dlbcd0", "dlbcd1", "dlbcd2", "dlbcd3"]
    frame = DLBCD(max_iter=30, random_state=0).set_output(transform="pandas").fit_transform(X)
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["dlbcd0", "dlbcd1", "dlbcd2", "dlbcd3"]
    np.testing.assert_array_equal(frame.to_numpy(), model.transform(X))
    search = GridSearchCV(DLBCD(max_iter=30, random_state=0), {"init": ["l1", "orth"]}, cv=2).fit(X)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_an_ill_conditioned_answer_warns_and_a_well_conditioned_one_does_not():
    # The learned dictionary's condition number decides (TRUSTED_CONDITION = 100; the study behind
    # it: bench/studies/dlbcd_conditioning.py). A reference of condition number about 300, the
    # study's construction (singular values geometric from 1 to 1/500, unit-norm atoms).
    rng = np.random.RandomState(5)
    U, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    V, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    D = U @ np.diag(np.geomspace(1.0, 1.0 / 500, 8)) @ V.T
    D /= np.linalg.norm(D, axis=0)
    X = make_sparse_coefficients(600, 8, "sg", sparsity=2, random_state=0) @ D.T
    with pytest.warns(UserWarning, match=r"condition number is \d+: .* may be a local minimum\. is_sharp_ cannot tell"):
        est = DLBCD(random_state=0).fit(X)
    assert est.condition_number_ == np.linalg.cond(est.components_) > 100
    _, _, X = signals(6, 300, 2, 3, dictionary=make_collinear_dictionary(6, 0.3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = DLBCD(random_state=0).fit(X)
    assert est.condition_number_ == np.linalg.cond(est.components_) < 100
