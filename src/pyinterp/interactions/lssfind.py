"""LSSFind and LSSrank (paper 001 Algorithm 1; thesis section 10.1) and LocalLSSFind."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._groups import check_feature_groups
from .._progress import Progress, guarded_fit
from .._validation import (ForestInputMixin, IntInterval, check_columns, column_indices, core_X, regression_target,
                           share_feature_names, validate_fit_data)
from ..forest import RandomForestRegressor
from ..forest.categories import CATEGORICAL_CONSTRAINT, CategoricalMixin
from ..forest.feature_parallel import is_feature_parallel, validate_columns_data
from .dwp import FLOAT_SLACK, dwp, prevalent_sets, rank_key
from .itemsets import frequent_itemsets
from .local import prevalence_at, sample_rows
from .paths import PATH_CONSTRAINTS, decode, signed_paths
from .rules import interaction_rule, resolve_interaction
from .table import InteractionTable


def minimal(sets) -> list:
    """The sets with no proper subset in the collection (the basic interactions; the spec's
    erratum: paper 001 writes maximal), in their given order, a set given twice once (at its first
    place).

    Under the LSS model the union signed interactions and every superset of them pass LSSFind's
    find test; the minimal ones are the basic interactions (``LSSFind.minimal_``).

    Parameters
    ----------
    sets : iterable of iterables of hashable items
        The sets, e.g. signed sets ``((k, sign), ...)`` or plain sets of features. Two sets are
        compared as ``frozenset``: their order and repeated items do not matter.

    Returns
    -------
    list
        The given objects (not copies) that have no proper subset among ``sets``, in their order;
        of equal sets only the first.

    Raises
    ------
    TypeError
        If ``sets`` is a string or bytes.

    Notes
    -----
    Each set is compared with every other: O(m^2) subset tests for m sets.

    Examples
    --------
    >>> from pyinterp.interactions import minimal
    >>> found = [((0, -1), (1, -1)), ((0, -1), (1, -1), (4, 1)), ((2, -1), (3, -1))]
    >>> minimal(found)
    [((0, -1), (1, -1)), ((2, -1), (3, -1))]
    >>> minimal([{1, 2}, {1}, {2, 3}, (3, 2)])
    [{1}, {2, 3}]
    """
    if isinstance(sets, (str, bytes)):
        raise TypeError(f"sets must be a collection of sets, got the string {sets!r}")
    frozen = [frozenset(s) for s in sets]
    seen, out = set(), []
    for s, f in zip(sets, frozen):
        if f not in seen and not any(g < f for g in frozen):
            seen.add(f)
            out.append(s)
    return out


class NoInteractionWarning(UserWarning):
    """An interaction finder found nothing (LSSFind's find test passed no set; iRF's table is
    empty): the message says why and what to try. ``best``: for LSSFind, the set that came closest
    (label, ``2^|S|`` DWP), None when no set was mined or for iRF.

    A :class:`UserWarning`: filter it with ``warnings.filterwarnings("ignore",
    category=NoInteractionWarning)``, or turn it into an error with ``"error"``.

    Parameters
    ----------
    message : str
        Why nothing was found and what to try.
    best : tuple of (str, float) or None, default=None
        The set that came closest, as ``(label, adjusted DWP)``.

    Attributes
    ----------
    best : tuple of (str, float) or None
        For :class:`LSSFind`, the mined set with the highest ``2^|S|`` DWP (its label, such as
        ``'x0- & x1-'``, and that value); None when no set reached even the mining threshold, and
        for :class:`IterativeRandomForest`.

    See Also
    --------
    LSSFind : Warns when ``mode="find"`` passes no set.
    IterativeRandomForest : Warns when its table is empty.

    Examples
    --------
    On noise no set passes the find test:

    >>> import warnings
    >>> import numpy as np
    >>> from pyinterp import LSSFind
    >>> from pyinterp.interactions import NoInteractionWarning
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.uniform(size=(300, 10)), rng.normal(size=300)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     lss = LSSFind(n_estimators=20, random_state=0).fit(X, y)
    >>> len(lss.interactions_), caught[0].category is NoInteractionWarning
    (0, True)
    >>> print(str(caught[0].message).split(" (")[0])
    LSSFind found no set: none of up to 3 signed features reached 2^|S| DWP >= 1 - eta = 0.99
    >>> label, value = caught[0].message.best
    >>> label, round(value, 3)
    ('x2-', 0.372)
    """

    def __init__(self, message, best=None):
        super().__init__(message)
        self.best = best


def nothing_found(mined, eta, max_order) -> NoInteractionWarning:
    """Why LSSFind's find mode returned no set, and what to try."""
    best = None
    if not len(mined):
        closest = (f"no set reached even the mining threshold, (1 - eta) 2^-{max_order} of the trees' weight: the "
                   "trees' paths share no feature often enough")
    else:
        k = int(np.argmax(mined["adjusted_dwp"]))
        best = (mined.label(mined.features[k]), float(mined["adjusted_dwp"][k]))
        closest = f"the highest was {best[1]:.3f}, of {best[0]}"
    return NoInteractionWarning(f"LSSFind found no set: none of up to {max_order} signed features reached 2^|S| DWP >= 1 - eta = "
            f"{1 - eta:g} ({closest}). Either y is not a union of Boolean interactions at the forest's thresholds (the LSS "
            "model), or noise or too few trees keep DWP below it: mode='rank' ranks every mined set by rho instead, and "
            "a larger eta accepts sets whose 2^|S| DWP falls short of 1 by up to eta.", best)


class LSSFind(CategoricalMixin, ForestInputMixin, RegressorMixin, BaseEstimator):
    """Boolean interactions of a random forest by depth-weighted prevalence (paper 001).

    Fits a regression forest, computes every leaf's signed path F_eps (nodes whose node-mass
    weighted impurity decrease exceeds ``epsilon``) and mines, exactly, every signed set S with
    ``|S|`` <= ``max_order`` whose DWP is at least ``min_dwp``. Under the LSS model a union signed
    interaction attains DWP = ``2^-|S|`` and any other set falls short (Theorem 2), so
    ``mode="find"`` (Algorithm 1) returns the sets with ``2^|S|`` DWP >= 1 - eta, and
    ``mode="rank"`` (LSSrank) returns every mined set ranked by rho = log2(DWP) / ``|S|``.

    With pandas X, records and frames name the columns (``record.names``, ``to_frame()``), the
    inner forest has ``feature_names_in_`` and :meth:`dwp` takes sets by column (or group) name.
    A find that passes no set warns (:class:`NoInteractionWarning`, with the closest set).

    Parameters
    ----------
    n_estimators : int, default=100
        Trees (the paper's 100). DWP's only error is the finite number of trees.
    max_features : {"sqrt", "log2"}, int, float or None, default=1.0
        m_try. All features, as the paper's scikit-learn runs: smaller m_try makes noise splits
        that cut true interactions' DWP below the eta test (spec section 8).
    bootstrap : bool, default=True
        Whether each tree is grown on a bootstrap sample, as for
        :class:`~pyinterp.RandomForestRegressor`. Bootstrap is the trees' only diversity when
        m_try = p, so it stays on by default.
    max_samples : int, float or None, default=None
        Rows drawn per tree (a count, or a fraction of n), as for
        :class:`~pyinterp.RandomForestRegressor`; None: n.
    min_samples_leaf : int or float, default=1
        Smallest leaf (a count, or a fraction of n), as for
        :class:`~pyinterp.RandomForestRegressor`; 1 grows the trees to purity.
    max_depth : int or None, default=None
        Deepest tree, as for :class:`~pyinterp.RandomForestRegressor`; None: no limit.
    epsilon : float, default=0.01
        Absolute impurity-decrease cut in units of y^2 (strict >): a split enters its leaves'
        signed paths F_eps only when its decrease exceeds it.
    eta : float in [0, 1), default=0.01
        Prevalence slack of the find test ``2^|S|`` DWP >= 1 - eta, compared with a 1e-12 float
        tolerance.
    max_order : int, default=3
        Largest interaction size (the paper uses the true order + 1).
    mode : {"find", "rank"}, default="find"
        ``interactions_`` holds the sets passing the find test (Algorithm 1), or every mined set
        (LSSrank).
    min_dwp : float in (0, 1] or None, default=None
        Mining threshold: sets with a smaller DWP are not mined. None: (1 - eta) 2^-max_order in
        find mode (eq. 11; lossless for the find test) and 2^-(max_order + 1) in rank mode (the
        thesis' n_paths / 2^(L+1)).
    first_occurrence : {"after_filter", "literal", "every"}, default="after_filter"
        Which node of a feature a path keeps, passed to :func:`pyinterp.interactions.signed_paths`:
        its first among the nodes passing epsilon (the paper), its first on the path
        (``"literal"``: absent if that node fails epsilon), or every (feature, side) passing
        epsilon (``"every"``: a path may hold both signs of a feature).
    impurity_scale : {"weighted", "within_node"}, default="weighted"
        The impurity decrease epsilon is compared with, passed to
        :func:`pyinterp.interactions.signed_paths`: node-mass weighted (N_t I_t - N_l I_l -
        N_r I_r) / N_root, or that divided by N_t / N_root (eq. 5).
    random_state : int, RandomState instance or None, default=None
        Seed of the forest (its bootstrap samples and candidate features).
    n_jobs : int or None, default=None
        Threads of the forest and the path extraction (None: 1, -1: all cores); results do not
        depend on n_jobs.
    verbose : int, default=0
        Reports the forest's trees as they are grown, then the mining (see
        :class:`~pyinterp.RandomForestRegressor`).
    always_split_features : array-like of int or str, or bool mask, default=None
        Columns searched at every node besides the ``max_features`` drawn (covariates), as for
        :class:`~pyinterp.RandomForestRegressor`: it matters when max_features leaves columns
        out.
    categorical_features : array-like of int, str or bool, "from_dtype" or CategoryCodes, default=None
        Columns split as categories (batch, sex, tissue), as for
        :class:`~pyinterp.RandomForestRegressor`. They are encoded once, and ``forest_`` is
        fitted on their codes (``CategoryCodes``): pass it ``X`` with those columns as codes, or
        use this estimator's own methods, which take X as fit did. :meth:`rule` refuses a set
        holding one.

    Attributes
    ----------
    forest_ : RandomForestRegressor
        The fitted forest whose paths are read.
    interactions_ : InteractionTable
        Columns dwp, adjusted_dwp (``2^|S|`` DWP), rho; ordered by rho, largest first (ties by DWP,
        then by the signed features).
    selected_ : InteractionTable
        The sets passing the find test (equal to ``interactions_`` in find mode).
    minimal_ : InteractionTable
        The rows of ``selected_`` whose set is minimal (:func:`minimal`): the basic signed
        interactions under the LSS model (``minimal_.features`` lists them as tuples of
        (feature, sign)).
    paths_ : SignedPaths
        The forest's leaf paths; with ``feature_groups`` their codes index the groups.
    feature_groups_ : FeatureGroups or None
        With ``feature_groups``: the group names (``names``, in order of first appearance) and
        each column's group (``index``), as for iRF.
    n_features_in_ : int
        Number of columns seen at fit.
    feature_names_in_ : ndarray of str of shape (``n_features_in_``,)
        Column names seen at fit, when X had string column names (a pandas DataFrame).

    See Also
    --------
    LocalLSSFind : The same, plus each sample's own interactions.
    IterativeRandomForest : Interactions by random intersection trees and bootstrap stability.
    dwp : DWP of given sets in any fitted forest.
    prevalent_sets : The mining step on any fitted forest.

    Notes
    -----
    Behr et al. (paper 001), Algorithm 1 and Theorems 1-2; LSSrank from the thesis, section
    10.1. DWP(S) is the sum over the leaves of every tree of 2^-depth / n_trees for the
    leaves whose F_eps contains S, computed exactly (every leaf enumerated); mining is weighted
    frequent-itemset mining over the leaves' paths, pruned without loss by ``min_dwp``.

    Examples
    --------
    y is high when x0 and x1 are low or when x2 and x3 are (``make_lss``):

    >>> from pyinterp import LSSFind
    >>> from pyinterp.datasets import make_lss
    >>> X, y, truth = make_lss(n_samples=500, n_features=10, random_state=0)
    >>> lss = LSSFind(n_estimators=30, random_state=0).fit(X, y)
    >>> lss.interactions_
    InteractionTable with 2 interactions
    x0- & x1-  dwp=0.25, adjusted_dwp=1, rho=-1
    x2- & x3-  dwp=0.25, adjusted_dwp=1, rho=-1
    >>> lss.minimal_.features == truth
    True

    ``mode="rank"`` ranks every mined set by rho, the true ones first:

    >>> rank = LSSFind(n_estimators=30, mode="rank", random_state=0).fit(X, y)
    >>> len(rank.interactions_), rank.interactions_.features[:2] == truth
    (40, True)
    >>> [round(v, 3) for v in rank.interactions_["adjusted_dwp"][:3].tolist()]
    [1.0, 1.0, 0.817]
    """

    _parameter_constraints = {
        # the forest's parameters: RandomForestRegressor checks them
        **dict.fromkeys(("n_estimators", "max_features", "bootstrap", "max_samples", "min_samples_leaf", "max_depth",
                         "random_state", "always_split_features"), "no_validation"),
        **{name: PATH_CONSTRAINTS[name] for name in ("epsilon", "first_occurrence", "impurity_scale", "n_jobs")},
        "eta": [Interval(Real, 0, 1, closed="left")],
        "max_order": [IntInterval(Integral, 1, None, closed="left")],
        "mode": [StrOptions({"find", "rank"})],
        "min_dwp": [Interval(Real, 0, 1, closed="right"), None],
        "verbose": ["verbose"],
        "categorical_features": CATEGORICAL_CONSTRAINT,
    }

    def __init__(self, n_estimators=100, *, max_features=1.0, bootstrap=True, max_samples=None, min_samples_leaf=1,
                 max_depth=None, epsilon=0.01, eta=0.01, max_order=3, mode="find", min_dwp=None,
                 first_occurrence="after_filter", impurity_scale="weighted", random_state=None, n_jobs=None,
                 verbose=0, always_split_features=None, categorical_features=None):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.epsilon = epsilon
        self.eta = eta
        self.max_order = max_order
        self.mode = mode
        self.min_dwp = min_dwp
        self.first_occurrence = first_occurrence
        self.impurity_scale = impurity_scale
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.always_split_features = always_split_features
        self.categorical_features = categorical_features

    def __setstate__(self, state):
        state.setdefault("categorical_features", None)  # older pickles predate the parameter
        super().__setstate__(state)

    def _mining_threshold(self):
        if self.min_dwp is not None:
            return float(self.min_dwp)
        find = self.mode == "find"
        threshold = (1.0 - self.eta) * 2.0 ** -self.max_order if find else 2.0 ** -(self.max_order + 1)
        if threshold == 0.0:
            raise ValueError(f"max_order={self.max_order} makes the default mining threshold 2^-max_order underflow "
                             "to 0; give min_dwp, or a max_order of at most 1000")
        return threshold

    def _path_options(self):
        return dict(first_occurrence=self.first_occurrence, impurity_scale=self.impurity_scale, n_jobs=self.n_jobs)

    @guarded_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, feature_groups=None):
        """Fit the forest, read its signed paths and mine the prevalent signed sets.

        feature_groups: one group name per column (e.g. each probe's gene); interactions are then
        found between groups, a group counting as one feature (see :func:`signed_paths`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; NaN marks a missing value. Also packed genotypes
            (:class:`~pyinterp.io.PackedGenotypes`), and categorical columns as strings or
            categories with ``categorical_features``. Also a dask array or a
            :class:`~pyinterp.io.ColumnFiles`: the forest is fitted feature-parallel on the
            running Dask client's cluster (:class:`~pyinterp.RandomForestRegressor`), and the
            paths need no X.
        y : array-like of shape (n_samples,)
            Regression target: finite numbers.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the forest's fit; None: equal.
        feature_groups : array-like of str of shape (n_features,), default=None
            One group name per column; the paths, DWP, the tables and :meth:`dwp` are then over
            groups (indices into ``feature_groups_.names``), and :meth:`rule` is unavailable.

        Returns
        -------
        self : LSSFind
            The fitted estimator.

        Raises
        ------
        ValueError
            If the default mining threshold underflows to 0 (a ``max_order`` above about 1000
            without ``min_dwp``), or y or X is invalid.

        Warns
        -----
        NoInteractionWarning
            In find mode when no set passes the find test; ``best`` holds the closest one.

        Examples
        --------
        >>> from pyinterp import LSSFind
        >>> from pyinterp.datasets import make_lss
        >>> X, y, truth = make_lss(n_samples=500, n_features=10, random_state=0)
        >>> genes = ["g0", "g1", "g2", "g3", "g4", "g4", "g4", "g5", "g5", "g5"]
        >>> lss = LSSFind(n_estimators=30, random_state=0).fit(X, y, feature_groups=genes)
        >>> lss.feature_groups_.names
        ('g0', 'g1', 'g2', 'g3', 'g4', 'g5')
        >>> [lss.interactions_.label(f) for f in lss.minimal_.features]
        ['g0- & g1-', 'g2- & g3-']
        """
        parted = is_feature_parallel(X)  # fitted where its columns are: the paths need no X
        X = self._encode_categories(X)
        if parted:
            y = validate_columns_data(self, X, y)
        else:
            X, y = validate_fit_data(self, X, y)
            X = core_X(X)
        y = regression_target(y)
        threshold = self._mining_threshold()
        always = (None if self.always_split_features is None else  # by index: X's names are gone
                  column_indices("always_split_features", self.always_split_features, X.shape[1],
                                 getattr(self, "feature_names_in_", None)))
        self.forest_ = RandomForestRegressor(
            self.n_estimators, max_features=self.max_features, bootstrap=self.bootstrap, max_samples=self.max_samples,
            min_samples_leaf=self.min_samples_leaf, max_depth=self.max_depth, random_state=self.random_state,
            n_jobs=self.n_jobs, verbose=self.verbose, always_split_features=always,
            categorical_features=self._inner_categories()).fit(X, y, sample_weight)
        share_feature_names(self, self.forest_)  # before the paths, which take their names from it
        self.feature_groups_ = check_feature_groups(feature_groups, X.shape[1])
        with Progress(self.verbose, 1, "mining") as progress:
            self.paths_ = signed_paths(self.forest_, self.epsilon, feature_groups=self.feature_groups_,
                                       **self._path_options())
            mined = prevalent_sets(self.paths_, threshold, self.max_order)
            progress.update()
        self.selected_ = mined.select(mined["adjusted_dwp"] >= 1.0 - self.eta - FLOAT_SLACK)
        self.interactions_ = self.selected_ if self.mode == "find" else mined
        if self.mode == "find" and not len(self.selected_):
            warnings.warn(nothing_found(mined, self.eta, self.max_order), stacklevel=4)
        features = self.selected_.features
        basic = set(minimal(features))
        self.minimal_ = self.selected_.select([f in basic for f in features])
        return self

    def predict(self, X):
        """The fitted forest's prediction.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows with the training columns (count and names, checked); categorical columns as at
            fit.

        Returns
        -------
        ndarray of float64 of shape (n_samples,)
            ``forest_``'s prediction: the mean of the trees' leaf values.

        Examples
        --------
        >>> from pyinterp import LSSFind
        >>> from pyinterp.datasets import make_lss
        >>> X, y, truth = make_lss(n_samples=500, n_features=10, random_state=0)
        >>> lss = LSSFind(n_estimators=30, random_state=0).fit(X, y)
        >>> lss.predict(X[:3]).shape
        (3,)
        >>> round(float(lss.score(X, y)), 3)
        0.969
        """
        check_columns(self, X)
        return self.forest_.predict(self._as_codes(X))

    def dwp(self, sets) -> np.ndarray:
        """DWP of arbitrary signed sets in the fitted forest, features (or groups) by index or name.

        Parameters
        ----------
        sets : iterable of sequences of (int or str, int)
            Signed sets ``[((k, sign), ...), ...]``, k a feature index or column name (a group
            index or name when fitted with ``feature_groups``), sign -1 or +1.

        Returns
        -------
        ndarray of float64 of shape (n_sets,)
            DWP of each set in ``paths_`` (the fit's epsilon and path options). A set holding
            both signs of a feature has DWP 0; the empty set has DWP 1. Multiply by ``2^|S|`` for the
            find test's adjusted DWP.

        See Also
        --------
        pyinterp.interactions.dwp : The same for any fitted forest.

        Examples
        --------
        >>> import numpy as np
        >>> from pyinterp import LSSFind
        >>> from pyinterp.datasets import make_lss
        >>> X, y, truth = make_lss(n_samples=500, n_features=10, random_state=0)
        >>> lss = LSSFind(n_estimators=30, random_state=0).fit(X, y)
        >>> np.round(lss.dwp([[(0, -1), (1, -1)], [(0, -1)], [(0, -1), (0, 1)], []]), 3).tolist()
        [0.25, 0.365, 0.0, 1.0]
        """
        check_is_fitted(self, "paths_")
        return dwp(self.paths_, sets)

    def rule(self, interaction, *, precision=4):
        """The :class:`~pyinterp.interactions.InteractionRule` of an interaction - a record of
        ``interactions_`` (or of ``minimal_``), an index into ``interactions_``, or a signed set by
        index or name - with thresholds from the forest's leaves whose F_eps contains it:
        ``print(lss.rule(0))``, ``lss.rule(0).indicator(X)``, ``lss.rule(0).predict(X)``.

        Parameters
        ----------
        interaction : record, int or sequence of (int or str, int)
            A record of ``interactions_`` or ``minimal_``, an index into ``interactions_``
            (negative ones count from the end), or a signed set ``[(k, sign), ...]`` with k a
            feature index or column name.
        precision : int, default=4
            Significant digits of the printed thresholds and value, from 1 to 17.

        Returns
        -------
        InteractionRule
            The rule, from ``forest_``'s leaves whose path in ``paths_`` contains the set.

        Raises
        ------
        ValueError
            If fitted with ``feature_groups``, or no leaf's path contains the set, or it holds a
            categorical feature.
        IndexError
            If an index is not a row of ``interactions_``.

        See Also
        --------
        interaction_rule : The same for any forest and paths.

        Examples
        --------
        >>> from pyinterp import LSSFind
        >>> from pyinterp.datasets import make_lss
        >>> X, y, truth = make_lss(n_samples=500, n_features=10, random_state=0)
        >>> lss = LSSFind(n_estimators=30, random_state=0).fit(X, y)
        >>> print(lss.rule(0))
        x0 <= 0.5241 and x1 <= 0.5223 -> 1.301
        >>> print(lss.rule(lss.minimal_[1], precision=2))
        x2 <= 0.54 and x3 <= 0.52 -> 1.3
        >>> int(lss.rule(0).indicator(X).sum())
        146
        """
        check_is_fitted(self, "paths_")
        if getattr(self, "feature_groups_", None) is not None:
            raise ValueError("interactions between feature groups have no thresholds: fit without feature_groups "
                             "for rules")
        features = resolve_interaction(interaction, self.interactions_, self.paths_.names)
        return interaction_rule(self.forest_, self.paths_, features, precision=precision)


class LocalLSSFind(LSSFind):
    """LSSFind plus per-sample interactions (Vuk, Ihlo & Behr 2025).

    For a sample x, the path prevalence PP_x(S) is the fraction of trees whose leaf reached by x
    has S in F_eps. :meth:`local_interactions` combines it with the global adjusted DWP:
    ``combine="intersection"`` keeps the sets passing the global find test whose PP_x >=
    ``min_path_prevalence``; ``"union"`` also adds every set with PP_x >= min_path_prevalence
    (mined from x's own paths). Records carry adjusted_dwp, path_prevalence and their product
    ``score``, by which they are ranked.

    The fit is :class:`LSSFind`'s, with the same attributes. The global sets are always
    ``selected_``, the sets passing the find test, whatever ``mode`` is.

    Parameters
    ----------
    n_estimators : int, default=100
        Trees of the forest (the paper's 100).
    max_features : {"sqrt", "log2"}, int, float or None, default=1.0
        m_try; all features by default, as for :class:`LSSFind`.
    bootstrap : bool, default=True
        Whether each tree is grown on a bootstrap sample (the trees' only diversity when
        m_try = p).
    max_samples : int, float or None, default=None
        Rows drawn per tree (a count, or a fraction of n); None: n.
    min_samples_leaf : int or float, default=1
        Smallest leaf; 1 grows the trees to purity.
    max_depth : int or None, default=None
        Deepest tree; None: no limit.
    epsilon : float, default=0.01
        Absolute impurity-decrease cut of the signed paths F_eps, in units of y^2 (strict >).
    eta : float in [0, 1), default=0.01
        Prevalence slack of the global find test ``2^|S|`` DWP >= 1 - eta.
    max_order : int, default=3
        Largest interaction size, globally and per sample.
    mode : {"find", "rank"}, default="find"
        What ``interactions_`` holds, as for :class:`LSSFind`; :meth:`local_interactions` does
        not depend on it.
    min_dwp : float in (0, 1] or None, default=None
        Mining threshold of the global sets; None: as for :class:`LSSFind`.
    first_occurrence : {"after_filter", "literal", "every"}, default="after_filter"
        Which node of a feature a path keeps (see :func:`pyinterp.interactions.signed_paths`).
    impurity_scale : {"weighted", "within_node"}, default="weighted"
        The impurity decrease epsilon is compared with (see
        :func:`pyinterp.interactions.signed_paths`).
    min_path_prevalence : float in (0, 1], default=0.5
        Smallest path prevalence PP_x(S) (fraction of the trees) for a set to be one of x's
        interactions, compared with a 1e-12 float tolerance.
    combine : {"intersection", "union"}, default="intersection"
        ``"intersection"``: the global sets with PP_x >= min_path_prevalence; ``"union"``: also
        every set of at most ``max_order`` signed features with PP_x >= min_path_prevalence,
        mined from x's own paths (their adjusted_dwp is their global ``2^|S|`` DWP, whatever it is).
    random_state : int, RandomState instance or None, default=None
        Seed of the forest.
    n_jobs : int or None, default=None
        Threads of the forest, the path extraction and the descent of the samples (None: 1,
        -1: all cores); results do not depend on n_jobs.
    verbose : int, default=0
        Reports the forest's trees as they are grown, then the mining.
    always_split_features : array-like of int or str, or bool mask, default=None
        Columns searched at every node besides the ``max_features`` drawn (covariates), as for
        :class:`~pyinterp.RandomForestRegressor`.
    categorical_features : array-like of int, str or bool, "from_dtype" or CategoryCodes, default=None
        Columns split as categories, as for :class:`LSSFind`; :meth:`local_interactions` takes X
        as fit did.

    Attributes
    ----------
    forest_ : RandomForestRegressor
        The fitted forest whose paths are read.
    interactions_ : InteractionTable
        Columns dwp, adjusted_dwp (``2^|S|`` DWP), rho; ordered by rho, largest first.
    selected_ : InteractionTable
        The sets passing the find test: the global sets of :meth:`local_interactions`.
    minimal_ : InteractionTable
        The rows of ``selected_`` whose set is minimal.
    paths_ : SignedPaths
        The forest's leaf paths.
    feature_groups_ : FeatureGroups or None
        With ``feature_groups``: the group names and each column's group.
    n_features_in_ : int
        Number of columns seen at fit.
    feature_names_in_ : ndarray of str of shape (``n_features_in_``,)
        Column names seen at fit, when X had string column names.

    See Also
    --------
    LSSFind : The global interactions alone.
    path_prevalence : PP_x of given sets for any fitted forest.

    Notes
    -----
    Vuk, Ihlo and Behr (2025). Each sample is sent down every tree; its path prevalence of S is
    the share of the leaves it reaches whose F_eps contains S.

    Examples
    --------
    A sample with x0 and x1 low has the rule x0- & x1-; one outside both rules has none:

    >>> from pyinterp.datasets import make_lss
    >>> from pyinterp.interactions import LocalLSSFind
    >>> X, y, truth = make_lss(n_samples=500, n_features=10, random_state=0)
    >>> local = LocalLSSFind(n_estimators=30, random_state=0).fit(X, y)
    >>> X[[4, 0], :4].round(2).tolist()
    [[0.36, 0.44, 0.7, 0.06], [0.55, 0.72, 0.6, 0.54]]
    >>> inside, outside = local.local_interactions(X[[4, 0]])
    >>> inside
    InteractionTable with 1 interactions
    x0- & x1-  adjusted_dwp=1, path_prevalence=0.9667, score=0.9667
    >>> len(outside)
    0
    """

    _parameter_constraints = {
        **LSSFind._parameter_constraints,
        "min_path_prevalence": [Interval(Real, 0, 1, closed="right")],
        "combine": [StrOptions({"intersection", "union"})],
    }

    def __init__(self, n_estimators=100, *, max_features=1.0, bootstrap=True, max_samples=None, min_samples_leaf=1,
                 max_depth=None, epsilon=0.01, eta=0.01, max_order=3, mode="find", min_dwp=None,
                 first_occurrence="after_filter", impurity_scale="weighted", min_path_prevalence=0.5,
                 combine="intersection", random_state=None, n_jobs=None, verbose=0, always_split_features=None,
                 categorical_features=None):
        super().__init__(n_estimators, max_features=max_features, bootstrap=bootstrap, max_samples=max_samples,
                         min_samples_leaf=min_samples_leaf, max_depth=max_depth, epsilon=epsilon, eta=eta,
                         max_order=max_order, mode=mode, min_dwp=min_dwp, first_occurrence=first_occurrence,
                         impurity_scale=impurity_scale, random_state=random_state, n_jobs=n_jobs, verbose=verbose,
                         always_split_features=always_split_features, categorical_features=categorical_features)
        self.min_path_prevalence = min_path_prevalence
        self.combine = combine

    def local_interactions(self, X) -> list:
        """One InteractionTable per row of X.

        Each row is sent down every tree of ``forest_``; its interactions are the sets whose path
        prevalence PP_x (the fraction of trees whose leaf reached by x has the set in its F_eps) is
        at least ``min_path_prevalence``: among ``selected_`` (``combine="intersection"``), or also
        among the sets mined from x's own paths (``"union"``). The parameters are read at the call,
        so ``set_params(min_path_prevalence=..., combine=...)`` needs no refit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows with the training columns (count and names, checked); categorical columns as at
            fit.

        Returns
        -------
        list of InteractionTable
            One table per row of X, with columns ``adjusted_dwp`` (global ``2^|S|`` DWP),
            ``path_prevalence`` (PP_x) and ``score`` (their product), ordered by score, largest
            first (ties by the signed features). A table may be empty.

        Examples
        --------
        >>> from pyinterp.datasets import make_lss
        >>> from pyinterp.interactions import LocalLSSFind
        >>> X, y, truth = make_lss(n_samples=500, n_features=10, random_state=0)
        >>> local = LocalLSSFind(n_estimators=30, random_state=0).fit(X, y)
        >>> tables = local.local_interactions(X[:8])
        >>> [table.features for table in tables if len(table)]
        [[((0, -1), (1, -1))], [((0, -1), (1, -1))]]
        >>> record = tables[4][0]
        >>> record.names, round(record.path_prevalence, 3)
        ((('x0', -1), ('x1', -1)), 0.967)

        ``combine="union"`` adds the sets prevalent on x's own paths (here single features):

        >>> local.set_params(combine="union").local_interactions(X[:1])[0]
        InteractionTable with 2 interactions
        x2+  adjusted_dwp=0.7792, path_prevalence=0.6, score=0.4675
        x0+  adjusted_dwp=0.7292, path_prevalence=0.5333, score=0.3889
        """
        check_columns(self, X)
        self._validate_params()  # the parameters may have changed since fit
        min_pp = self.min_path_prevalence
        global_sets = self.selected_.features
        known = set(global_sets)
        rows = sample_rows(self.forest_, self.paths_, self._as_codes(X), self.n_jobs)
        pp_global = prevalence_at(self.paths_, rows, global_sets)
        adjusted_global = self.selected_["adjusted_dwp"]
        names = self.paths_.names
        tables = []
        for i in range(pp_global.shape[0]):
            keep = pp_global[i] >= min_pp - FLOAT_SLACK
            features = [f for f, k in zip(global_sets, keep) if k]
            adjusted, pp = list(adjusted_global[keep]), list(pp_global[i, keep])
            if self.combine == "union":
                local = self._local_sets(rows[i], min_pp)
                extra = [f for f in local if f not in known]
                sizes = np.array([len(f) for f in extra])
                adjusted += list(self.dwp(extra) * 2.0**sizes) if extra else []
                pp += [local[f] for f in extra]
                features += extra
            adjusted, pp = np.array(adjusted, dtype=float), np.array(pp, dtype=float)
            score = adjusted * pp
            key = rank_key(score)
            order = sorted(range(len(features)), key=lambda j: (-key[j], features[j]))
            tables.append(InteractionTable([features[j] for j in order],
                                           {"adjusted_dwp": adjusted[order], "path_prevalence": pp[order],
                                            "score": score[order]}, names))
        return tables

    def _local_sets(self, rows, min_pp) -> dict:
        p = self.paths_
        transactions = [p.codes[p.indptr[r]:p.indptr[r + 1]] for r in rows]
        mined = frequent_itemsets(transactions, None, max(1.0, min_pp * len(rows) - FLOAT_SLACK), self.max_order)
        return {decode(codes): count / len(rows) for codes, count in mined.items()}


__all__ = ["LSSFind", "LocalLSSFind", "minimal"]
