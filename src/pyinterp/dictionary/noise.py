"""DL-BCD's noise stage: from its dictionary to the one that best explains noisy signals.

DL-BCD minimises the l1 norm of the coefficients D^{-1} x. Noise reaches them amplified by up to
cond(D), so with noisy signals an ill-conditioned reference stops being the minimiser (on the thesis'
Fig. 5.10 data at 40 dB, DL-BCD recovers a third of the sparse cases with cond(D*) > 80). The model
the noise obeys is x = D a + e, so this stage fits that model, starting from DL-BCD's answer:

1. the noise level sigma, from DL-BCD's coefficients: where a_h = 0, beta_h = (D^{-1} e)_h has
   standard deviation sigma ||row h of D^{-1}||; the zeros form a cluster around 0 whose scale a
   clipped median absolute deviation finds (noiseless data give a scale near rounding, and the stage
   is skipped, so exact recovery stays exact);
2. a second candidate, the l1-penalised noisy model (scikit-learn's dict_learning, the objective of
   the peers that win those cases) started from DL-BCD's dictionary, with the penalty LASSO_WEIGHT
   sigma: it escapes the wrong minimum but shrinks the coefficients, a bias that costs accuracy
   where DL-BCD was right and wrecks dense codes;
3. from each start, MOD steps (Engan et al. 1999) until the dictionary settles: codes by orthogonal
   matching pursuit to a residual of (RESIDUAL_FACTOR sigma)^2 p per signal (the stopping rule of
   K-SVD denoising, Elad & Aharon 2006), then the least-squares dictionary for them, which removes
   the penalty's bias;
3b. when the two debiased starts disagree (one of them, at least, sits in a wrong minimum), a third
   start, the penalised model at the lighter weight LIGHT_WEIGHT sigma from DL-BCD's dictionary (the
   heavy weight's shrinkage can carry the refit into another wrong minimum, and it does when the
   noise estimate is high), debiased the same way. When they agree nothing more runs. (More MOD
   steps are no help: run to convergence, a wrong dictionary can fit the noise to a lower misfit
   than D*, docs/dev/dlbcd_noise.md);
4. of the results, the one with the lowest penalised misfit of the noisy sparse model: each
   signal's support from a lasso at weight sigma sqrt(2 log p) (convex, so not the greedy
   pursuit's choices), its coefficients refitted by least squares on it (no shrinkage to favour a
   shrunk dictionary), scored ||x - D a||^2 / (2 sigma^2) + log p per atom (the Gaussian
   log-likelihood with the risk-inflation penalty of Foster & George 1994);
4b. when distinct results score within NEAR_TIE standard deviations of the misfit's sampling noise
   (sqrt(n p / 2) for n signals of p features) of the best, 50 MOD steps cannot rank them: those
   alone take up to POLISH_MAX_ITER steps and are scored again. (On the grid's (6, 2) rep 3, the
   right start trailed a wrong one by 1.5 of them after 50 steps and led by 5.8 after 200.) Results
   further behind are not polished: given enough steps, a wrong dictionary can fit the noise below
   D*'s misfit ((8, 2) rep 3 does, from 7 standard deviations behind).

On the Fig. 5.10 data this keeps DL-BCD's answer where it was right (and makes it more accurate) and
takes the penalised model's where DL-BCD fell for the noise (docs/results/dlbcd_results.md, "Noise").
"""

from __future__ import annotations

import warnings

import numpy as np

LASSO_WEIGHT = 10.0
LIGHT_WEIGHT = 3.0  # the third start's weight, run only when the first two disagree
AGREEMENT = 1e-4  # dictionary NMSE below which two debiased starts are the same dictionary
RESIDUAL_FACTOR = 1.15
LASSO_MAX_ITER = 100
MOD_MAX_ITER = 50
NEAR_TIE = 3.0  # standard deviations of the misfit within which results are polished (4b)
POLISH_MAX_ITER = 400  # MOD steps of a polished result, counting its first MOD_MAX_ITER
SCORE_LASSO_MAX_ITER = 1000
SCORE_BLOCK_BYTES = 1 << 26  # the scoring's least-squares systems at a time (64 MiB)
_NOISELESS = 1e-8  # sigma below this fraction of X's root mean square: nothing to refine
_IMPLAUSIBLE = 0.1  # noise power above this fraction of X's (SNR below 10 dB): no cluster of zeros
_SINGULAR_COND = 1e12
_CLIP = 3.0
_MAD_TO_SD = 0.6744897501960817  # the median of |N(0, 1)|


def _cluster_scale(values):
    """Standard deviation of the cluster of values around 0: the MAD, recomputed on the values
    within _CLIP of it until it stops changing (large coefficients drop out, the zeros' noise stays)."""
    magnitudes = np.abs(values)
    scale = np.median(magnitudes) / _MAD_TO_SD
    for _ in range(100):
        inside = magnitudes[magnitudes <= _CLIP * scale]
        new = np.median(inside) / _MAD_TO_SD if inside.size else 0.0
        if new == scale:
            break
        scale = new
    return scale


def noise_level(X, D):
    """(sigma, scale): the estimated standard deviation of the noise per entry of X, if X = A D^T +
    noise with sparse A, and the median scale of the zero coefficients' cluster it comes from."""
    W = np.linalg.inv(D)
    coefficients = X @ W.T
    scales = np.array([_cluster_scale(coefficients[:, h]) for h in range(D.shape[1])])
    return float(np.median(scales / np.linalg.norm(W, axis=1))), float(np.median(scales))


def stage_applies(X, sigma, scale, smoothing):
    """Whether the noise stage has something to do. Not when the zero coefficients are as small as
    DL-BCD's own precision leaves them (its Huber smoothing width, or rounding): the signals are
    noiseless. Nor when the estimate would put more than _IMPLAUSIBLE of X's energy in noise: then
    the cluster around 0 is not made of zeros (codes with no zeros, s = p) and the estimate is not
    a noise level."""
    energy = np.mean(X * X)
    return scale > smoothing and sigma**2 > _NOISELESS**2 * energy and sigma**2 < _IMPLAUSIBLE * energy


def pursuit(X, D, sigma):
    """Orthogonal matching pursuit of every signal (rows of X) at once: atoms are added by largest
    correlation with the residual, the coefficients refitted by least squares, until the residual's
    squared norm is at most (RESIDUAL_FACTOR sigma)^2 p. Codes A with X ~ A D^T."""
    n, p = X.shape
    tol = (RESIDUAL_FACTOR * sigma) ** 2 * p
    gram = D.T @ D
    correlations = X @ D
    A = np.zeros((n, p))
    chosen = np.zeros((n, p), dtype=bool)
    support = np.empty((n, 0), dtype=np.intp)
    residual = X.copy()
    active = np.einsum("ij,ij->i", X, X) > tol
    for _ in range(p):
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        score = np.abs(residual[rows] @ D)
        score[chosen[rows]] = -1.0
        pick = score.argmax(axis=1)
        chosen[rows, pick] = True
        support = np.concatenate([support, np.zeros((n, 1), dtype=np.intp)], axis=1)
        support[rows, -1] = pick
        S = support[rows]
        coef = np.linalg.solve(gram[S[:, :, None], S[:, None, :]], correlations[rows[:, None], S][..., None])[..., 0]
        A[rows] = 0.0
        A[rows[:, None], S] = coef
        residual[rows] = X[rows] - A[rows] @ D.T
        active[rows] = np.einsum("ij,ij->i", residual[rows], residual[rows]) > tol
    return A


def _lasso_candidate(X, D, sigma, seed, weight=LASSO_WEIGHT):
    from sklearn.decomposition import dict_learning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the lasso's ConvergenceWarnings: this is only a starting point
        _, atoms, _ = dict_learning(X, D.shape[1], alpha=weight * sigma, max_iter=LASSO_MAX_ITER, tol=1e-8,
                                    method="cd", dict_init=D.T.copy(), code_init=X @ np.linalg.inv(D).T,
                                    random_state=seed)
    atoms = atoms.T
    usable = np.all(np.isfinite(atoms)) and np.linalg.cond(atoms) < _SINGULAR_COND
    return np.ascontiguousarray(atoms) if usable else None


def _mod(X, D, sigma, max_iter=MOD_MAX_ITER):
    """MOD steps from D: pursuit codes, then the least-squares dictionary (unused atoms kept)."""
    for _ in range(max_iter):
        A = pursuit(X, D, sigma)
        used = np.any(A != 0, axis=0)
        new = D.copy()
        new[:, used] = np.linalg.lstsq(A[:, used], X, rcond=None)[0].T
        new /= np.linalg.norm(new, axis=0)
        if np.linalg.cond(new) > _SINGULAR_COND:
            break
        change = np.max(np.abs(new - D))
        D = new
        if change <= 1e-12:
            break
    return D


def penalised_misfit(X, D, sigma):
    """The noisy sparse model's penalised misfit of D on signals X at noise level sigma (4 above)."""
    from sklearn.linear_model import Lasso

    n, p = X.shape
    weight = sigma * np.sqrt(2.0 * np.log(p))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning: only the supports are used
        # scikit-learn's Lasso divides the squared error by the rows of its design (p): alpha = weight / p
        lasso = Lasso(alpha=weight / p, fit_intercept=False, precompute=True, max_iter=SCORE_LASSO_MAX_ITER, tol=1e-8)
        support = lasso.fit(D, X.T).coef_ != 0
    # least squares on each support at once: the Gram matrix restricted to it, the identity outside;
    # in blocks of signals whose p x p systems take at most SCORE_BLOCK_BYTES
    gram, correlations = D.T @ D, X @ D
    codes = np.empty_like(correlations)
    block = max(1, SCORE_BLOCK_BYTES // (8 * p * p))
    for start in range(0, n, block):
        s = support[start:start + block]
        systems = np.where(s[:, :, None] & s[:, None, :], gram, 0.0) + np.where(s, 0.0, 1.0)[:, :, None] * np.eye(p)
        right = np.where(s, correlations[start:start + block], 0.0)[..., None]
        codes[start:start + block] = np.linalg.solve(systems, right)[..., 0]
    residual = X - codes @ D.T
    return float(np.sum(residual * residual) / (2.0 * sigma * sigma) + np.log(p) * np.count_nonzero(support))


def refine(X, D, sigma, seed):
    """The dictionary of the noise stage (1-4 above) and which start it came from ("dlbcd", "lasso" or
    "light"). Each start is debiased first and then compared: the lasso start's shrinkage would
    otherwise make it look worse than it is. The atoms the pursuit needs are not the comparison: a
    wrong dictionary can explain the signals to the noise level with fewer of them than D* itself."""
    from ..metrics import dictionary_nmse

    lasso = _lasso_candidate(X, D, sigma, seed)
    fits = {"dlbcd": _mod(X, D, sigma)}
    if lasso is not None:
        fits["lasso"] = _mod(X, lasso, sigma)
    if "lasso" not in fits or dictionary_nmse(fits["lasso"], fits["dlbcd"]) > AGREEMENT:
        light = _lasso_candidate(X, D, sigma, seed, LIGHT_WEIGHT)
        if light is not None:
            fits["light"] = _mod(X, light, sigma)
    misfit = {start: penalised_misfit(X, fit, sigma) for start, fit in fits.items()}
    best = min(misfit.values())
    near = [start for start in fits if misfit[start] <= best + NEAR_TIE * np.sqrt(X.size / 2.0)]
    if any(dictionary_nmse(fits[start], fits[near[0]]) > AGREEMENT for start in near[1:]):
        for start in near:
            fits[start] = _mod(X, fits[start], sigma, POLISH_MAX_ITER - MOD_MAX_ITER)
            misfit[start] = penalised_misfit(X, fits[start], sigma)
    start = min(fits, key=misfit.get)  # the first of dlbcd, lasso, light on ties
    return fits[start], start


def run(X, D, sigma, smoothing, seed):
    """The noise stage on signals X from DL-BCD's D, at noise level sigma (None: estimated):
    (dictionary, sigma, start), or (D, 0.0, None) when it does not apply. X is scaled by a power of
    two (exact) so that its largest entry lies in [1/2, 1): no square over- or underflows."""
    exponent = np.frexp(np.max(np.abs(X)))[1]
    X = np.ldexp(X, -exponent)
    if sigma is None:
        sigma, scale = noise_level(X, D)
        if not stage_applies(X, sigma, scale, np.ldexp(smoothing, -exponent)):
            return D, 0.0, None
    else:
        sigma = np.ldexp(sigma, -exponent)
    refined, start = refine(X, D, sigma, seed)
    return refined, float(np.ldexp(sigma, exponent)), start
