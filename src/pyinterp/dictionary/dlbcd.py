"""DL-BCD (thesis 000 Algorithm 2): the complete dictionary minimising the truncated l1 objective."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _core
from . import noise as noise_stage
from .._distributed import chunks, cluster_threads, run_units
from .._progress import Progress, guarded_fit
from .._seeds import draw_seeds, python_rng
from .._validation import IntInterval, check_up_front, clamp_iterations, resolve_n_threads, validate_data
from .sharpness import (_LINE_SEARCHES, _SHARPNESS_START_NOISE, PARAMETER_CONSTRAINTS, _check_dictionary,
                        _check_signals, _memory, _sharpness)

__all__ = ["DLBCD"]

_INITS = ("l1", "orth", "random")
# Above this condition number of the learned dictionary, fit warns that the answer may be a local
# minimum: bench/studies/dlbcd_conditioning.py (noiseless, p = 12, s = 3, n = 2000) recovered every
# reference below 100 (40 of 40), 5 of 10 at 144-192 and 2 of 10 at 305-558, and the wrong answers'
# condition numbers (118-473) overlap the right ones'.
TRUSTED_CONDITION = 100.0


def _random_orthogonal(p, rng):
    q, r = np.linalg.qr(rng.standard_normal((p, p)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def _random_gaussian(p, rng):
    D = rng.standard_normal((p, p))
    return D / np.linalg.norm(D, axis=0)



def _fit_restarts(X, D0s, Q0s, options, first, count):
    """Restarts [first, first + count) of a fit, as one dlbcd_fit call with all of them gives them."""
    return _core.dlbcd_fit(X, D0s[first:first + count], Q0s[first:first + count], *options, n_threads=1,
                           first_restart=first)


class DLBCD(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Dictionary learning by block coordinate descent (DL-BCD, thesis 000 Algorithm 2).

    Learns a complete dictionary D (p x p, unit-norm atoms as columns) for the signals in the rows
    of X by minimising the truncated l1 objective ``f(D) = (1/n) sum_i sum_h min(|(D^{-1} x_i)_h|, tau)``.
    Each sweep updates every row j of D^{-1} in turn: the new row is w^T D^{-1} with w_j = 1 the
    solution of a strongly convex problem (BFGS), the other rows are rescaled so that every atom keeps
    unit norm (Proposition 5.2.1), and D and D^{-1} are updated in O(p^2) without inverting. The
    objective never increases (Proposition 5.2.2).

    Parameters
    ----------
    tau : float > 0 or np.inf, default=0.5
        Truncation of the coefficients; np.inf minimises the plain l1 objective. The thesis uses 0.5
        for coefficients of unit scale (it is on the scale of the coefficients).
    init : {"l1", "orth", "random"} or array of shape (p, p), default="l1"
        "orth": a random orthogonal dictionary; "random": Gaussian with normalised columns; "l1": the
        thesis' two-stage procedure, a tau = inf run from "orth" whose result starts the tau run.
        An array is used as given (columns scaled to unit norm).
    n_restarts : int, default=1
        Independent runs; the best is kept: among those the sharpness test declares sharp the lowest
        objective, else the lowest objective.
    max_iter : int, default=500
        Sweeps per stage.
    tol : float, default=1e-9
        A stage stops when a sweep lowers the objective by at most tol times its value.
    line_search : {"wolfe", "armijo"}, default="wolfe"
        Weak Wolfe bracketing (Lewis & Overton), or backtracking Armijo as the reference implementation
        uses. Armijo steps tend to land exactly on kinks, where BFGS can stall short of the minimum
        (relative gaps around 1e-8); combine it with ``smoothing`` as the reference does.
    smoothing : float >= 0, default=1e-5
        Huber smoothing of ``|.|`` below this value in the subproblems (the reference's thres1 = 1e-5);
        0 solves the exact nonsmooth subproblems. Either way a row is only replaced when the exact
        subproblem objective decreases, so the objective never increases. Smoothing makes the
        subproblems smooth (BFGS converges fast) and keeps block coordinate descent from stalling on
        kinks: on bench/compare_dlbcd.py it reaches lower final objectives than exact subproblems;
        noiseless dictionaries are still recovered to NMSE ~1e-12 (~1e-16 with 0).
    max_inner_iter : int, default=1000
        BFGS iterations per subproblem.
    lbfgs_memory : int >= 0 or None, default=None
        The subproblems' quasi-Newton solver: None uses dense BFGS (O(p^2) memory and work per
        iteration) for p <= 200 and L-BFGS keeping 10 pairs (O(10 p)) above; 0 forces dense BFGS,
        m > 0 forces L-BFGS keeping m pairs. Also used by the sharpness test of the restarts.
    inner_tol : float, default=1e-10
        A subproblem's BFGS stops when an iteration lowers its objective by at most inner_tol times
        its value (rows are solved again every sweep, so moderate accuracy suffices).
    start_noise : float >= 0, default=1e-3
        A subproblem's BFGS starts at w = e_j, unless e_j sits on a kink (some coefficient exactly
        zero, as in noiseless sparse data): then at e_j plus Gaussian noise of this standard
        deviation, since BFGS started on a kink can stop there. The row still changes only if the
        solution beats e_j.
    rho, sharpness_threshold : float, default=0.01, 1e-6
        Parameters of the sharpness test applied to every restart's result.
    noise : "auto" or float >= 0, default="auto"
        The noise stage (``pyinterp.dictionary.noise``): with noisy signals, the l1 objective on
        D^{-1} x sees the noise amplified by up to cond(D) and its minimiser can miss an
        ill-conditioned reference; the stage refits the noisy model X = A D^T + noise from DL-BCD's
        dictionary (least-squares dictionary steps from two starts, a third when those disagree,
        more steps for the results whose scores are too close to rank, then the one with the lowest
        penalised misfit of that model at the noise level). The value is the standard deviation of
        the noise per entry of X; "auto" estimates it
        from DL-BCD's coefficients and skips the stage when the signals are noiseless (the zero
        coefficients no wider than ``smoothing`` leaves them, or the noise below 1e-8 of X's root mean
        square), so exact recovery stays exact, and when the estimate would hold a tenth of X's
        energy or more (codes without zeros: no noise level to read); 0 switches it off (thesis
        Algorithm 2 alone).
    random_state : int, RandomState instance or None, default=None
        Draws the random initial dictionaries, the sharpness test's perturbations and start points,
        the start noise of the subproblems and the noise stage's draws. An int makes fit reproducible.
    n_jobs : int or None, default=None
        Threads over restarts; results do not depend on it.
    verbose : int, default=0
        Reports the sweeps as they finish, out of at most ``max_iter`` per restart (twice that with
        the warm start): a restart that converges counts the sweeps it did not need as done.

    Attributes
    ----------
    components_ : ndarray of shape (p, p)
        The learned dictionary, atoms as unit-norm columns: DL-BCD's, refined by the noise stage when
        it ran.
    dlbcd_components_ : ndarray of shape (p, p)
        DL-BCD's dictionary, before the noise stage (``components_`` when the stage did not run).
    noise_ : float
        The noise level the stage used (given or estimated; 0 when it did not run).
    noise_start_ : {"dlbcd", "lasso", "light"} or None
        The start the noise stage kept (None when it did not run).
    objective_history_ : ndarray
        f before the first sweep and after each sweep of the final (tau) stage of the kept restart.
    objective_ : float
        Final objective of DL-BCD's dictionary.
    n_iter_ : int
        Sweeps of the final stage of the kept restart.
    l1_components_, l1_objective_history_ : ndarray
        Only with init="l1" and finite tau: the result of the plain l1 (tau = inf) stage and its
        objective history, from the restart that the same criterion (sharp first, then lowest l1
        objective) keeps. They equal ``components_`` and ``objective_history_`` of
        ``DLBCD(tau=np.inf, init="orth")`` with the same ``n_restarts`` and ``random_state``, bit for
        bit: that fit is the first stage of this one.
    is_sharp_ : bool
        Whether the sharpness test (Algorithm 1, on the plain l1 objective whatever tau is, with
        ``rho`` and ``sharpness_threshold``) declares DL-BCD's dictionary (``dlbcd_components_``,
        before the noise stage) a sharp local minimum: the local identifiability the thesis tests
        on well-conditioned dictionaries (its Fig. 5.3: constant collinearity, condition number
        1.7-3.6 at p = 12). It is not a verdict on the answer: in bench/studies/dlbcd_conditioning.py
        (references U diag(s) V^T with geometric singular values) those of condition number 14
        and above were never sharp for plain l1, even where DL-BCD recovered them exactly (4-5
        were), while of 12 random Gaussian dictionaries (p = 10, s = 3, n = 1,000) 8 were sharp, at
        condition numbers 10-38, and 4 were not (13-212): whether a dictionary is sharp depends on
        more than its condition number. See ``condition_number_``.
    sharpness_ : float
        The test's statistic r.
    restart_objectives_ : ndarray of shape (n_restarts,)
        The final objective of every restart (of its final stage), in restart order.
    condition_number_ : float
        The condition number of ``components_``. Above 100 fit warns that the answer may be a
        local minimum, not the dictionary behind the signals: noiseless references were recovered
        every time below 100 and about half the time at 150-200 (``TRUSTED_CONDITION``;
        docs/user/dictionary.md has the figure). More restarts then help only where they find a
        lower objective.
    n_features_in_ : int
        Number of features (p) seen during ``fit``.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen during ``fit``; only when X has string column names (a DataFrame).

    See Also
    --------
    sharpness_test : Algorithm 1 on any dictionary and signals.
    pyinterp.datasets.make_dictionary_signals : Signals x_i = D a_i (+ noise) from a known dictionary.
    pyinterp.metrics.dictionary_nmse : The error of a learned dictionary up to signed permutations of its atoms.

    Notes
    -----
    The objective is on the coefficients D^{-1} x, so noise in x reaches them amplified by up to the
    condition number of D. With noisy signals an ill-conditioned reference dictionary can stop being
    the minimiser: on the thesis' Fig. 5.10 data at 40 dB (docs/results/dlbcd_results.md), DL-BCD alone
    recovered the sparse cases whose reference has condition number above 80 in about a third of the
    repetitions, those below 40 in all. The noise stage (``noise``) is for those cases.

    Examples
    --------
    Noiseless signals of a known dictionary, each a combination of 2 of its 4 atoms:

    >>> import numpy as np
    >>> from pyinterp.dictionary import DLBCD
    >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
    >>> from pyinterp.metrics import dictionary_nmse
    >>> D = make_collinear_dictionary(4, 0.3)  # 4 unit-norm atoms, pairwise cosine 0.3
    >>> A = make_sparse_coefficients(200, 4, "sg", sparsity=2, random_state=0)
    >>> X = make_dictionary_signals(D, A)  # 200 signals x_i = D a_i, as rows
    >>> est = DLBCD(random_state=0).fit(X)
    >>> est.components_.shape
    (4, 4)
    >>> dictionary_nmse(est.components_, D) < 1e-9  # recovered, up to the atoms' order and signs
    True
    >>> est.is_sharp_, est.noise_  # a sharp minimum; noiseless signals skip the noise stage
    (True, 0.0)
    >>> round(est.condition_number_, 3)
    1.648
    """

    _parameter_constraints = {
        **PARAMETER_CONSTRAINTS,
        "tau": [Interval(Real, 0, None, closed="right")],  # np.inf: the plain l1 objective
        "init": [str, "array-like"],  # the names are checked in _initial_dictionaries, naming the options
        "n_restarts": [IntInterval(Integral, 1, None, closed="left")],
        "max_iter": [IntInterval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="both")],  # inf: stop after the first sweep
        "smoothing": [Interval(Real, 0, None, closed="left")],
        "inner_tol": [Interval(Real, 0, None, closed="left")],
        "sharpness_threshold": [Interval(Real, 0, None, closed="neither")],
        "noise": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, tau=0.5, init="l1", n_restarts=1, max_iter=500, tol=1e-9, line_search="wolfe", smoothing=1e-5,
                 max_inner_iter=1000, lbfgs_memory=None, inner_tol=1e-10, start_noise=1e-3, rho=0.01,
                 sharpness_threshold=1e-6, noise="auto", random_state=None, n_jobs=None, verbose=0):
        self.tau = tau
        self.init = init
        self.n_restarts = n_restarts
        self.max_iter = max_iter
        self.tol = tol
        self.line_search = line_search
        self.smoothing = smoothing
        self.max_inner_iter = max_inner_iter
        self.lbfgs_memory = lbfgs_memory
        self.inner_tol = inner_tol
        self.start_noise = start_noise
        self.rho = rho
        self.sharpness_threshold = sharpness_threshold
        self.noise = noise
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _initial_dictionaries(self, p, rng):
        n_restarts = self.n_restarts
        if isinstance(self.init, str):
            if self.init not in _INITS:
                raise ValueError(f"init must be 'l1', 'orth', 'random' or an array, got {self.init!r}")
            make = _random_gaussian if self.init == "random" else _random_orthogonal
            check_up_front("n_restarts", n_restarts, 16 * p * p + 16, "its restarts' initial dictionaries")
            seeds = draw_seeds(rng, n_restarts)
            return [make(p, np.random.RandomState(s)) for s in seeds], self.init == "l1"
        if n_restarts != 1:
            raise ValueError("an array init gives identical restarts: use n_restarts=1")
        D0 = _check_dictionary(self.init, "init")
        if D0.shape[0] != p:
            raise ValueError(f"init has shape {D0.shape}, X has {p} features")
        return [D0], False

    @guarded_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the dictionary from the signals in the rows of X.

        Runs ``n_restarts`` restarts of DL-BCD (each two stages with ``init="l1"`` and a finite
        ``tau``), keeps the best one (sharp first, then the lowest objective), then the noise stage
        (``noise``). Warns (UserWarning) when the learned dictionary's condition number is above 100.

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            The signals, one a row; finite, with n_samples >= p (a complete dictionary).
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self : DLBCD
            The fitted estimator.

        Raises
        ------
        ValueError
            When n_samples < p, X holds NaN or infinity, or ``init`` is an unknown name, an array of
            the wrong shape or singular, or an array with ``n_restarts`` other than 1.

        Examples
        --------
        >>> from pyinterp.dictionary import DLBCD
        >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
        >>> X = make_dictionary_signals(make_collinear_dictionary(4, 0.3),
        ...                             make_sparse_coefficients(200, 4, "sg", sparsity=2, random_state=0))
        >>> est = DLBCD(tau=0.5, random_state=0).fit(X)
        >>> est.objective_history_.round(4).tolist()  # f before the first sweep and after each sweep
        [0.784, 0.784, 0.784]
        >>> est.l1_objective_history_.round(3).tolist()  # the first stage (tau = inf), from "orth"
        [2.013, 1.823, 1.707, 1.513, 1.513, 1.513]
        """
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=True, order="C")
        X = _check_signals(X)
        p = X.shape[1]
        tau, tol, smoothing = float(self.tau), float(self.tol), float(self.smoothing)
        max_iter = clamp_iterations(self.max_iter)
        line_search = _LINE_SEARCHES[self.line_search]
        inner_tol, start_noise = float(self.inner_tol), float(self.start_noise)
        max_inner_iter = clamp_iterations(self.max_inner_iter)
        memory = _memory(p, self.lbfgs_memory)
        rho, threshold = self.rho, self.sharpness_threshold
        n_threads = resolve_n_threads(self.n_jobs)
        rng = python_rng(self.random_state)
        inits, warm = self._initial_dictionaries(p, rng)
        warm = warm and np.isfinite(tau)
        sharp_seeds = draw_seeds(rng, len(inits))
        seed = int(draw_seeds(rng))
        noise_seed = int(draw_seeds(rng))  # drawn last: the earlier stages' seeds are those of noise=0

        D0s = np.ascontiguousarray(np.stack(inits))
        Q0s = np.ascontiguousarray(np.linalg.inv(D0s))
        options = (tau, warm, max_iter, tol, smoothing, start_noise, seed, line_search, memory, max_inner_iter, inner_tol)
        threads = cluster_threads()
        sweeps = max_iter * (2 if warm else 1)  # at most, per restart
        with Progress(self.verbose, len(D0s) * sweeps, "sweeps", core=True) as progress:
            if threads:  # chunks of restarts on the workers, one thread each
                runs = []
                for part in run_units(_fit_restarts, (X, D0s, Q0s, options), chunks(len(D0s), threads)):
                    runs += part
                    progress.update(len(part) * sweeps)
            else:
                runs = _core.dlbcd_fit(X, D0s, Q0s, *options, n_threads)

        def keep_best(dictionaries, histories):
            """Index of the restart to keep (sharp first, then the lowest objective, first on ties), and the stats."""
            objectives = np.array([history[-1] for history in histories])
            stats = np.array([
                _sharpness(D, X, rho, np.random.RandomState(s), start_noise=_SHARPNESS_START_NOISE,
                           line_search=line_search, max_inner_iter=max_inner_iter, memory=memory, n_threads=n_threads)[0]
                for D, s in zip(dictionaries, sharp_seeds)
            ])
            sharp = stats < threshold
            return int(np.lexsort((objectives, ~sharp))[0]), objectives, stats, sharp

        best, objectives, stats, sharp = keep_best([run[0] for run in runs], [run[1] for run in runs])
        D, history, n_iter = runs[best][:3]
        self.dlbcd_components_ = D
        self.components_, self.noise_, self.noise_start_ = self._noise_stage(X, D, noise_seed)
        self.objective_history_ = history
        self.objective_ = float(history[-1])
        self.n_iter_ = int(n_iter)
        self.is_sharp_ = bool(sharp[best])
        self.sharpness_ = float(stats[best])
        self.restart_objectives_ = objectives
        self.condition_number_ = float(np.linalg.cond(self.components_))
        if self.condition_number_ > TRUSTED_CONDITION:
            warnings.warn(
                f"the learned dictionary's condition number is {self.condition_number_:.0f}: DL-BCD recovered noiseless "
                f"references below {TRUSTED_CONDITION:.0f} every time, but about half of those at 150-200 and a fifth "
                "at 300-560 (bench/studies/dlbcd_conditioning.py), so this answer may be a local minimum. is_sharp_ "
                "cannot tell: it tests the plain l1 objective, for which such dictionaries are not sharp even when "
                "recovered exactly.", UserWarning, stacklevel=4)
        if warm:
            best_l1 = keep_best([run[4] for run in runs], [run[5] for run in runs])[0]
            self.l1_components_ = runs[best_l1][4]
            self.l1_objective_history_ = runs[best_l1][5]
        return self

    def _noise_stage(self, X, D, seed):
        """(dictionary, noise level, start) after the noise stage, or (D, 0.0, None) when it does not run."""
        if self.noise != "auto" and not np.isfinite(self.noise):
            raise ValueError(f"noise must be 'auto' or a finite number >= 0, got {self.noise!r}")
        if self.noise == 0:
            return D, 0.0, None
        return noise_stage.run(X, D, None if self.noise == "auto" else float(self.noise), self.smoothing, seed)

    def transform(self, X):
        """Coefficients D^{-1} x of every signal (rows of X), shape (n_samples, p).

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Signals as rows, finite, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, p)
            Row i holds the coefficients beta_i = D^{-1} x_i of signal i on the atoms of
            ``components_`` (column h on atom h; :meth:`get_feature_names_out` names them
            ``dlbcd0``, ``dlbcd1``, ...).

        Raises
        ------
        ValueError
            When the coefficients overflow float64 (``|X|`` near the largest double).

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.dictionary import DLBCD
        >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
        >>> A = make_sparse_coefficients(200, 4, "sg", sparsity=2, random_state=0)
        >>> X = make_dictionary_signals(make_collinear_dictionary(4, 0.3), A)
        >>> codes = DLBCD(random_state=0).fit(X).transform(X)
        >>> codes.shape
        (200, 4)
        >>> np.allclose(np.sort(np.abs(codes), axis=1), np.sort(np.abs(A), axis=1), atol=1e-4)  # the codes A
        True
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=True, reset=False)
        with np.errstate(over="ignore", invalid="ignore"):
            codes = np.linalg.solve(self.components_, X.T).T
        if not np.all(np.isfinite(codes)):
            raise ValueError("the coefficients of X overflow float64 (|X| near the largest double); scale X")
        return codes

    @property
    def _n_features_out(self):
        """Coefficients per signal, one per atom: get_feature_names_out gives dlbcd0, dlbcd1, ..."""
        return self.components_.shape[1]

    def score(self, X, y=None):
        """Minus the truncated l1 objective of the fitted dictionary on X (higher is better).

        As scikit-learn's decompositions score, so model selection can compare dictionaries (fits
        with the same tau: the objective's scale depends on it).

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Signals as rows.
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        float
            ``-self.objective(X)``, with the fitted ``tau``.

        See Also
        --------
        objective : The truncated l1 objective, at any tau.

        Examples
        --------
        >>> from pyinterp.dictionary import DLBCD
        >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
        >>> X = make_dictionary_signals(make_collinear_dictionary(4, 0.3),
        ...                             make_sparse_coefficients(200, 4, "sg", sparsity=2, random_state=0))
        >>> est = DLBCD(random_state=0).fit(X)
        >>> round(est.score(X), 3)
        -0.784
        """
        return -self.objective(X)

    def objective(self, X, tau=None):
        """The truncated l1 objective ``(1/n) sum_i sum_h min(|beta_ih|, tau)`` of the fitted dictionary on X.

        beta_i = D^{-1} x_i are the coefficients :meth:`transform` gives, D is ``components_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, p)
            Signals as rows.
        tau : float > 0 or np.inf, optional
            The truncation (default: the estimator's ``tau``); np.inf gives the plain l1 objective.

        Returns
        -------
        float
            The objective, the mean over the signals of their truncated l1 norms (lower is better).

        Raises
        ------
        ValueError
            When ``tau`` is not a positive number.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp.dictionary import DLBCD
        >>> from pyinterp.datasets import make_collinear_dictionary, make_dictionary_signals, make_sparse_coefficients
        >>> A = make_sparse_coefficients(200, 4, "sg", sparsity=2, random_state=0)
        >>> X = make_dictionary_signals(make_collinear_dictionary(4, 0.3), A)
        >>> est = DLBCD(tau=0.5, random_state=0).fit(X)
        >>> round(est.objective(X), 3)  # tau = 0.5, as fitted: objective_
        0.784
        >>> round(est.objective(X, tau=np.inf), 3), round(float(np.abs(A).sum(axis=1).mean()), 3)  # plain l1
        (1.513, 1.513)
        """
        tau = self.tau if tau is None else tau
        if not isinstance(tau, Real) or isinstance(tau, bool) or not tau > 0:  # inf: the plain l1 objective
            raise ValueError(f"tau must be a positive number (or inf), got {tau!r}")
        return float(np.minimum(np.abs(self.transform(X)), tau).sum() / X.shape[0])
