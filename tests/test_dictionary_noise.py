"""DL-BCD's noise stage (pyinterp.dictionary.noise): the noise estimate, the pursuit, and the recovery
it adds on noisy signals without touching noiseless ones."""

import numpy as np
import pytest
from sklearn.linear_model import orthogonal_mp_gram

from pyinterp import DLBCD
from pyinterp.datasets import make_dictionary_signals, make_gaussian_dictionary, make_sparse_coefficients
from pyinterp.dictionary import noise
from pyinterp.metrics import dictionary_nmse


def grid_data(p, s, rep, snr=100):
    """The data of repetition rep of cell (p, s) of bench/dlbcd_grid.py (Fig. 5.10 at the thesis' 40 dB)."""
    seed = (100 * p + s) * 1000 + rep
    D = make_gaussian_dictionary(p, random_state=seed)
    A = make_sparse_coefficients(100 * p, p, "sg", sparsity=s, random_state=seed + 1)
    return D, make_dictionary_signals(D, A, snr=snr, random_state=seed + 2)


@pytest.mark.parametrize("sigma", [1e-3, 0.05])
def test_noise_level_finds_the_noise_of_sparse_signals(sigma):
    rng = np.random.default_rng(0)
    D = make_gaussian_dictionary(10, random_state=1)
    A = make_sparse_coefficients(4000, 10, "sg", sparsity=3, random_state=2)
    X = A @ D.T + sigma * rng.standard_normal((4000, 10))
    # a little high when the noise is large: nonzero coefficients fall into the zeros' cluster
    assert noise.noise_level(X, D)[0] == pytest.approx(sigma, rel=0.15)
    assert noise.noise_level(X, D)[0] >= sigma * 0.99
    assert noise.stage_applies(X, *noise.noise_level(X, D), smoothing=1e-5)
    clean = noise.noise_level(A @ D.T, D)
    assert clean[0] < 1e-14  # noiseless: a scale near rounding, the stage is skipped
    assert not noise.stage_applies(A @ D.T, *clean, smoothing=0.0)


def test_codes_without_zeros_give_no_noise_level():
    # s = p: the cluster around 0 is the coefficients themselves; the grid's cell (2, 2), where the
    # stage run on that estimate turned DL-BCD's 1.8e-3 into 3.5e-2
    D, X = grid_data(2, 2, 2)
    est = DLBCD(n_restarts=3, random_state=2).fit(X)
    sigma, scale = noise.noise_level(X, est.dlbcd_components_)
    assert sigma > 0.5
    assert not noise.stage_applies(X, sigma, scale, smoothing=1e-5)
    assert est.noise_start_ is None and est.components_ is est.dlbcd_components_


def test_pursuit_equals_scikit_learns_orthogonal_matching_pursuit():
    rng = np.random.default_rng(3)
    D = make_gaussian_dictionary(9, random_state=4)
    X = make_sparse_coefficients(300, 9, "sg", sparsity=3, random_state=5) @ D.T + 0.05 * rng.standard_normal((300, 9))
    sigma = 0.05
    ours = noise.pursuit(X, D, sigma)
    tol = (noise.RESIDUAL_FACTOR * sigma) ** 2 * 9
    theirs = orthogonal_mp_gram(D.T @ D, D.T @ X.T, tol=tol, norms_squared=np.einsum("ij,ij->i", X, X)).T
    np.testing.assert_array_equal(ours != 0, theirs != 0)
    np.testing.assert_allclose(ours, theirs, atol=1e-10)
    assert np.all(np.linalg.norm(X - ours @ D.T, axis=1) ** 2 <= tol * (1 + 1e-12))


@pytest.mark.heavy
def test_noise_stage_recovers_an_ill_conditioned_dictionary_that_algorithm_2_misses():
    D, X = grid_data(8, 2, 0)  # cond(D*) 1592: DL-BCD alone lands elsewhere, as scikit-learn does not
    alone = DLBCD(n_restarts=3, noise=0, random_state=0).fit(X)
    staged = DLBCD(n_restarts=3, random_state=0).fit(X)
    assert dictionary_nmse(alone.components_, D) > 0.1
    assert dictionary_nmse(staged.components_, D) < 1e-4
    np.testing.assert_array_equal(staged.dlbcd_components_, alone.components_)  # the stage starts from it
    assert staged.noise_start_ == "lasso"
    assert staged.noise_ == pytest.approx(np.sqrt(2) / (100 * np.sqrt(8)), rel=0.2)  # SNR 100 on ||D a|| ~ sqrt(s)
    assert np.allclose(np.linalg.norm(staged.components_, axis=0), 1.0)
    again = DLBCD(n_restarts=3, random_state=0, n_jobs=2).fit(X)
    np.testing.assert_array_equal(again.components_, staged.components_)


def test_noise_stage_keeps_and_sharpens_a_good_dlbcd_answer():
    D, X = grid_data(8, 2, 1)  # cond(D*) 6: DL-BCD alone recovers it
    staged = DLBCD(n_restarts=3, random_state=1).fit(X)
    before, after = dictionary_nmse(staged.dlbcd_components_, D), dictionary_nmse(staged.components_, D)
    assert before < 1e-4 and after < before
    assert staged.noise_start_ == "dlbcd"


@pytest.mark.heavy
def test_the_penalised_misfit_picks_the_right_start_where_the_atom_count_did_not():
    # grid cell (9, 2) rep 9, cond(D*) 59: DL-BCD's debiased dictionary is wrong (NMSE 0.04) yet
    # explains the signals to the noise level with fewer pursuit atoms than D* itself
    D, X = grid_data(9, 2, 9)
    staged = DLBCD(n_restarts=3, random_state=9).fit(X)
    assert dictionary_nmse(staged.dlbcd_components_, D) > 0.01
    assert dictionary_nmse(staged.components_, D) < 1e-4
    assert staged.noise_start_ == "lasso"
    scale = 2.0 ** -np.frexp(np.max(np.abs(X)))[1]  # the stage's scaling of X
    Xs, sigma = scale * X, scale * staged.noise_
    wrong = noise._mod(Xs, staged.dlbcd_components_, sigma)
    assert np.count_nonzero(noise.pursuit(Xs, wrong, sigma)) < np.count_nonzero(noise.pursuit(Xs, D, sigma))
    assert noise.penalised_misfit(Xs, D, sigma) < noise.penalised_misfit(Xs, wrong, sigma)


def test_penalised_misfit_refits_each_lasso_support_by_least_squares():
    from sklearn.linear_model import Lasso

    rng = np.random.default_rng(6)
    D = make_gaussian_dictionary(7, random_state=7)
    X = make_sparse_coefficients(50, 7, "sg", sparsity=2, random_state=8) @ D.T + 0.02 * rng.standard_normal((50, 7))
    sigma = 0.02
    weight = sigma * np.sqrt(2 * np.log(7))
    support = Lasso(alpha=weight / 7, fit_intercept=False, max_iter=1000, tol=1e-8).fit(D, X.T).coef_ != 0
    expected = 0.0
    for x, S in zip(X, support):
        r = x - D[:, S] @ np.linalg.lstsq(D[:, S], x, rcond=None)[0]
        expected += r @ r / (2 * sigma**2) + np.log(7) * S.sum()
    assert noise.penalised_misfit(X, D, sigma) == pytest.approx(expected, rel=1e-9)


def test_noiseless_signals_skip_the_stage():
    D, X = grid_data(6, 2, 0, snr=None)
    est = DLBCD(n_restarts=2, random_state=0).fit(X)
    assert est.noise_ == 0.0 and est.noise_start_ is None
    assert est.components_ is est.dlbcd_components_
    assert dictionary_nmse(est.components_, D) < 1e-10


def test_a_given_noise_level_is_used_and_bad_ones_are_refused():
    D, X = grid_data(6, 2, 2)
    est = DLBCD(n_restarts=1, noise=0.004, random_state=0).fit(X)
    assert est.noise_ == 0.004 and est.noise_start_ in ("dlbcd", "lasso", "light")
    for bad in ("loud", -1.0, np.inf):
        with pytest.raises(ValueError, match="noise"):
            DLBCD(noise=bad).fit(X)


@pytest.mark.heavy
def test_a_light_penalty_start_recovers_where_both_starts_land_wrong(monkeypatch):
    # a fresh p = 8 dictionary of bench/dlbcd_noise_fresh.py (cond(D*) 130): DL-BCD's answer and the
    # refit at weight 10 sigma (sigma estimated 1.35 times too high) both debias to wrong dictionaries
    # (NMSE 0.24, 0.25), apart from each other; the refit at 3 sigma reaches D*, and its misfit is lowest
    seed = 100008042
    D = make_gaussian_dictionary(8, random_state=seed)
    A = make_sparse_coefficients(800, 8, "sg", sparsity=2, random_state=seed + 1)
    X = make_dictionary_signals(D, A, snr=100, random_state=seed + 2)
    staged = DLBCD(n_restarts=3, random_state=0).fit(X)
    assert dictionary_nmse(staged.dlbcd_components_, D) > 0.1
    assert dictionary_nmse(staged.components_, D) < 1e-4
    assert staged.noise_start_ == "light"
    monkeypatch.setattr(noise, "AGREEMENT", np.inf)  # the two starts alone: both wrong
    two = DLBCD(n_restarts=3, random_state=0).fit(X)
    assert two.noise_start_ in ("dlbcd", "lasso") and dictionary_nmse(two.components_, D) > 0.1


def test_agreeing_starts_run_no_third_one(monkeypatch):
    D, X = grid_data(8, 2, 1)  # cond(D*) 6: DL-BCD's answer and the lasso refit debias to the same dictionary
    weights = []
    original = noise._lasso_candidate

    def counted(X, D, sigma, seed, weight=noise.LASSO_WEIGHT):
        weights.append(weight)
        return original(X, D, sigma, seed, weight)

    monkeypatch.setattr(noise, "_lasso_candidate", counted)
    staged = DLBCD(n_restarts=3, random_state=1).fit(X)
    assert weights == [noise.LASSO_WEIGHT]
    assert staged.noise_start_ in ("dlbcd", "lasso") and dictionary_nmse(staged.components_, D) < 1e-4


@pytest.mark.heavy
def test_disagreeing_starts_still_keep_the_right_one():
    # grid cell (8, 2) rep 3, cond(D*) 48: DL-BCD's answer is wrong (0.16), the lasso start right; the
    # third start runs and is not kept. (With 200 MOD steps per start instead of 50, DL-BCD's wrong
    # dictionary fitted the noise to a lower misfit than D* and was kept.)
    D, X = grid_data(8, 2, 3)
    staged = DLBCD(n_restarts=3, random_state=3).fit(X)
    assert dictionary_nmse(staged.dlbcd_components_, D) > 0.1
    assert dictionary_nmse(staged.components_, D) < 1e-4
    assert staged.noise_start_ == "lasso"


@pytest.mark.heavy
def test_near_tied_results_are_polished_before_the_choice(monkeypatch):
    # grid cell (6, 2) rep 3: after 50 MOD steps the light start's wrong dictionary (NMSE 0.097) scores
    # 1.5 standard deviations of the misfit below the lasso start's right one; polished, the right one leads
    D, X = grid_data(6, 2, 3)
    staged = DLBCD(n_restarts=3, random_state=3).fit(X)
    assert dictionary_nmse(staged.components_, D) < 1e-4
    assert staged.noise_start_ == "lasso"
    monkeypatch.setattr(noise, "NEAR_TIE", 0.0)  # no polishing: the 50-step scores decide
    unpolished = DLBCD(n_restarts=3, random_state=3).fit(X)
    assert unpolished.noise_start_ == "light" and dictionary_nmse(unpolished.components_, D) > 0.05


@pytest.mark.heavy
def test_results_far_behind_are_not_polished(monkeypatch):
    # grid cell (8, 2) rep 3 (above): DL-BCD's wrong result trails by 7 standard deviations after 50 steps;
    # polished for 200 it would fit the noise below D*'s misfit and be kept
    D, X = grid_data(8, 2, 3)
    polished = []
    original = noise._mod

    def counted(X, D, sigma, max_iter=noise.MOD_MAX_ITER):
        polished.append(max_iter > noise.MOD_MAX_ITER)
        return original(X, D, sigma, max_iter)

    monkeypatch.setattr(noise, "_mod", counted)
    staged = DLBCD(n_restarts=3, random_state=3).fit(X)
    assert staged.noise_start_ == "lasso" and not any(polished)
    monkeypatch.setattr(noise, "NEAR_TIE", np.inf)  # every result polished: the wrong one wins
    everything = DLBCD(n_restarts=3, random_state=3).fit(X)
    assert dictionary_nmse(everything.components_, D) > 0.1
