"""Interaction recovery scores (Behr et al., paper 001 eqs. 13-14; thesis 000 eq. 10.1).

An interaction is a set of signed features ``(k, sign)``: a column index ``k >= 0`` and a sign in
{-1, +1} (-1 for ``X_k <= t``, +1 for ``X_k > t``). It is passed as any iterable of such pairs, in
any order. A collection is an iterable of interactions. With S* the true (basic signed) interactions,
S the found ones and J(A, B) = ``|A & B|`` / ``|A | B|`` the Jaccard index:

- ``strict_score`` (eq. 13): J(S*, S) over sets of signed sets, so an interaction counts only if it
  matches a true one exactly, signs included. Subsets and sign flips get no credit.
- ``lenient_score`` (eq. 14): J(F*, F) with F* and F the unsigned features that appear anywhere in
  S* and S.
- ``proximity_score`` (eq. 10.1): (1/K) sum_j max_{i <= M} J(S*_j, S_i) for the K true interactions
  and the top M entries S_1, ..., S_M of a ranking. Elements are unsigned features by default, as
  in the thesis, or signed features with ``signed=True``. The score never decreases as M grows.

The true collection must be non-empty (so "both empty" is an error, not a perfect score). An empty
found collection or ranking scores 0. Repeated interactions count once.
"""

from __future__ import annotations

import numpy as np

from ._validation import INT32_MAX, check_array, check_int, check_real

__all__ = ["lenient_score", "proximity_curve", "proximity_score", "singleton_equivalent", "strict_score"]


def _iterate(obj, what):
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"{what}, got the string {obj!r}")
    try:
        return iter(obj)
    except TypeError:
        raise TypeError(f"{what}, got {obj!r}") from None


def _signed_feature(item, where):
    try:
        k, sign = item
    except (TypeError, ValueError):
        raise TypeError(f"{where}: a signed feature must be a pair (feature, sign), got {item!r}") from None
    for label, value in (("feature", k), ("sign", sign)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"{where}: the {label} must be an integer, got {value!r}")
    if k < 0:
        raise ValueError(f"{where}: a feature must be a column index >= 0, got {k}")
    if sign not in (-1, 1):
        raise ValueError(f"{where}: a sign must be -1 or +1, got {sign}")
    return int(k), int(sign)


def _interactions(collection, name):
    """The validated interactions of a collection as frozensets of (feature, sign), in input order."""
    out = []
    for i, interaction in enumerate(_iterate(collection, f"{name} must be an iterable of interactions")):
        where = f"{name}[{i}]"
        items = _iterate(interaction, f"{where} must be an iterable of (feature, sign) pairs")
        signed_set = frozenset(_signed_feature(item, where) for item in items)
        if not signed_set:
            raise ValueError(f"{where} is an empty interaction")
        out.append(signed_set)
    return out


def _true(true):
    """The distinct true interactions, in input order."""
    interactions = list(dict.fromkeys(_interactions(true, "true")))
    if not interactions:
        raise ValueError("true interactions must be non-empty")
    return interactions


def _unsigned(signed_set):
    return frozenset(k for k, _ in signed_set)


def _jaccard(a, b):
    return len(a & b) / len(a | b)


def _with_both_signs(interactions):
    out = {}
    for signed_set in interactions:
        out[signed_set] = None
        if len(signed_set) == 1:
            ((k, sign),) = signed_set
            out[frozenset({(k, -sign)})] = None
    return list(out)


def singleton_equivalent(interactions):
    """Add the opposite sign of every singleton interaction (spec seed001 section 7, Q11).

    1(X_k <= t) = 1 - 1(X_k > t), so {(k, -1)} and {(k, +1)} describe the same main effect.

    Parameters
    ----------
    interactions : iterable of interactions
        Each an iterable of (feature, sign) pairs, a feature an int >= 0 and a sign -1 or +1.

    Returns
    -------
    list of tuple
        The distinct interactions, each as a tuple of (feature, sign) sorted by feature, in input
        order. Each singleton is followed by its sign flip unless that flip was already listed.

    Raises
    ------
    TypeError
        If an interaction is not an iterable of (int, int) pairs.
    ValueError
        If an interaction is empty, a feature is negative or a sign is not -1 or +1.

    See Also
    --------
    strict_score : Applies it to both collections with ``singletons="either"``.

    Notes
    -----
    The sign ambiguity of singletons is noted with the LSS model of Behr, Wang, Li and Yu, "Provable
    Boolean interaction recovery from tree ensemble obtained via random forests" (paper 001).

    Examples
    --------
    >>> from pyinterp.metrics import singleton_equivalent
    >>> singleton_equivalent([[(3, 1)], [(2, -1), (0, -1)], [(3, -1)]])
    [((3, 1),), ((3, -1),), ((0, -1), (2, -1))]
    """
    return [tuple(sorted(s)) for s in _with_both_signs(_interactions(interactions, "interactions"))]


def strict_score(true, found, singletons="exact"):
    """Set Jaccard index of true and found signed interactions (paper 001 eq. 13).

    An interaction counts only if it matches a true one exactly, signs included: subsets and sign
    flips get no credit. Repeated interactions count once.

    Parameters
    ----------
    true : iterable of interactions
        The true basic signed interactions S*, each an iterable of (feature, sign) pairs. Must be
        non-empty.
    found : iterable of interactions
        The found interactions S. An empty collection scores 0.
    singletons : {"exact", "either"}, default="exact"
        "exact" compares singletons with their signs. "either" applies :func:`singleton_equivalent` to
        both collections, so either sign of a true singleton matches it. When ``found`` already
        lists both signs (as LSSFind does), this is the same as adding both signs to S* only.

    Returns
    -------
    float in [0, 1]
        ``|S* & S|`` / ``|S* | S|``.

    Raises
    ------
    ValueError
        If ``true`` is empty or ``singletons`` is unknown. An invalid interaction raises TypeError or
        ValueError as in :func:`singleton_equivalent`.

    See Also
    --------
    lenient_score : The Jaccard index of the features alone.
    proximity_score : Partial credit for each true interaction's best match.

    Notes
    -----
    The score (13) of Behr, Wang, Li and Yu, "Provable Boolean interaction recovery from tree ensemble
    obtained via random forests" (paper 001), used there for the LSSFind simulations.

    Examples
    --------
    >>> from pyinterp.metrics import strict_score
    >>> true = [((0, -1), (1, -1)), ((2, -1), (3, -1))]
    >>> found = [((0, -1), (1, -1)), ((2, 1), (3, -1)), ((5, -1),)]
    >>> strict_score(true, found)  # 1 match among 4 distinct interactions
    0.25
    >>> strict_score([((4, 1),)], [((4, -1),)]), strict_score([((4, 1),)], [((4, -1),)], singletons="either")
    (0.0, 1.0)
    """
    if singletons not in ("exact", "either"):
        raise ValueError(f"singletons must be 'exact' or 'either', got {singletons!r}")
    t, f = _true(true), _interactions(found, "found")
    if singletons == "either":
        t, f = _with_both_signs(t), _with_both_signs(f)
    return _jaccard(set(t), set(f))


def lenient_score(true, found):
    """Jaccard index of the unsigned features in the true and found interactions (paper 001 eq. 14).

    F* and F are the unsigned features that appear anywhere in the true and the found
    interactions; the score is ``|F* & F|`` / ``|F* | F|``, so it gives credit for the right features in
    the wrong sets or with the wrong signs.

    Parameters
    ----------
    true : iterable of interactions
        The true interactions, each an iterable of (feature, sign) pairs. Must be non-empty.
    found : iterable of interactions
        The found interactions. An empty collection scores 0.

    Returns
    -------
    float in [0, 1]
        ``|F* & F|`` / ``|F* | F|``.

    Raises
    ------
    ValueError
        If ``true`` is empty. An invalid interaction raises TypeError or ValueError as in
        :func:`singleton_equivalent`.

    See Also
    --------
    strict_score : The Jaccard index of the signed interactions themselves.

    Notes
    -----
    The relaxed score (14) of Behr, Wang, Li and Yu, "Provable Boolean interaction recovery from tree
    ensemble obtained via random forests" (paper 001).

    Examples
    --------
    >>> from pyinterp.metrics import lenient_score
    >>> true = [((0, -1), (1, -1)), ((2, -1), (3, -1))]
    >>> found = [((0, -1), (1, -1)), ((2, 1), (3, -1)), ((5, -1),)]
    >>> lenient_score(true, found)  # features {0, 1, 2, 3} against {0, 1, 2, 3, 5}
    0.8
    """
    features = [frozenset().union(*map(_unsigned, c)) for c in (_true(true), _interactions(found, "found"))]
    return _jaccard(*features)


def _match_matrix(true, ranked, signed):
    """J(S*_j, S_i) for the true interactions j (rows) and the ranked ones i (columns)."""
    t, r = _true(true), _interactions(ranked, "ranked")
    if not signed:
        t, r = [_unsigned(s) for s in t], [_unsigned(s) for s in r]
    return np.array([[_jaccard(a, b) for b in r] for a in t], dtype=np.float64).reshape(len(t), len(r))


def proximity_score(true, ranked, top=None, signed=False):
    """Mean over the true interactions of the best Jaccard match among the top ranked ones (thesis eq. 10.1).

    (1/K) sum_j max_{i <= M} J(S*_j, S_i) for the K true interactions S*_j and the top M entries
    S_1, ..., S_M of a ranking, J the Jaccard index of two sets of features. The score never
    decreases as M grows.

    Parameters
    ----------
    true : iterable of interactions
        The K true interactions, each an iterable of (feature, sign) pairs. Must be non-empty.
        Repeated ones count once.
    ranked : iterable of interactions
        Found interactions, best first.
    top : int >= 1 or None, default=None
        M, the number of ranked interactions used. None (or a number beyond the ranking) uses all.
    signed : bool, default=False
        Compare signed features instead of unsigned ones (the thesis uses unsigned).

    Returns
    -------
    float in [0, 1]
        0 for an empty ranking.

    Raises
    ------
    ValueError
        If ``true`` is empty or ``top`` < 1. An invalid interaction raises TypeError or ValueError
        as in :func:`singleton_equivalent`.

    See Also
    --------
    proximity_curve : The score for every M up to a bound.

    Notes
    -----
    The score (10.1) of Yu Wang's PhD thesis (University of California, Berkeley, 2020; thesis 000),
    used there to evaluate LSSrank. The thesis text compares unsigned features; the public code of its
    experiments (github.com/Yu-Group/interaction_selection) compares signed ones (``signed=True``).

    Examples
    --------
    >>> from pyinterp.metrics import proximity_score
    >>> true = [((0, -1), (1, -1)), ((2, -1), (3, -1))]
    >>> ranked = [((0, -1),), ((0, -1), (1, -1), (5, 1)), ((2, 1), (3, 1))]
    >>> print(round(proximity_score(true, ranked, top=1), 3))  # {0} matches {0, 1} with J = 1/2
    0.25
    >>> print(round(proximity_score(true, ranked), 3))  # J = 2/3 and 1
    0.833
    >>> print(round(proximity_score(true, ranked, signed=True), 3))  # (2, +1), (3, +1) match nothing
    0.333
    """
    scores = _match_matrix(true, ranked, signed)
    if top is not None:
        scores = scores[:, : check_int("top", top, 1)]
    return float(scores.max(axis=1, initial=0.0).mean())


def proximity_curve(true, ranked, max_top, signed=False):
    """:func:`proximity_score` for M = 1, ..., max_top.

    The ranking is read once: one Jaccard index per pair of a true and a ranked interaction, then
    a running maximum along the ranking.

    Parameters
    ----------
    true : iterable of interactions
        The K true interactions, as in :func:`proximity_score`. Must be non-empty.
    ranked : iterable of interactions
        Found interactions, best first, as in :func:`proximity_score`.
    max_top : int >= 1
        The largest M.
    signed : bool, default=False
        Compare signed features instead of unsigned ones, as in :func:`proximity_score`.

    Returns
    -------
    ndarray of shape (max_top,)
        Entry M - 1 is the score of the top M. The curve never decreases, and it stays flat
        beyond the length of the ranking.

    Raises
    ------
    ValueError
        If ``true`` is empty or ``max_top`` < 1. An invalid interaction raises TypeError or
        ValueError as in :func:`singleton_equivalent`.

    Notes
    -----
    The score (10.1) of Yu Wang's PhD thesis (University of California, Berkeley, 2020; thesis 000),
    plotted there against M.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.metrics import proximity_curve
    >>> true = [((0, -1), (1, -1)), ((2, -1), (3, -1))]
    >>> ranked = [((0, -1),), ((0, -1), (1, -1), (5, 1)), ((2, 1), (3, 1))]
    >>> np.round(proximity_curve(true, ranked, 5), 3).tolist()
    [0.25, 0.333, 0.833, 0.833, 0.833]
    """
    m = check_int("max_top", max_top, 1, INT32_MAX)  # a curve of max_top floats is allocated
    scores = _match_matrix(true, ranked, signed)[:, :m]
    scores = np.pad(scores, ((0, 0), (0, m - scores.shape[1])))  # zero columns leave the running max alone
    return np.maximum.accumulate(scores, axis=1).mean(axis=0)


# --- Dictionary recovery (thesis 000, section 5.3) ---------------------------------------------------

from scipy.optimize import linear_sum_assignment  # noqa: E402

__all__ += ["dictionary_nmse", "dictionary_recovered"]


def dictionary_nmse(estimate, reference):
    """min over signed permutations J of ||D_hat J - D*||_F^2 / ||D*||_F^2 (atoms as columns).

    A dictionary is identifiable only up to the order and the signs of its atoms, so the estimate
    is matched to the reference over every signed permutation J.

    Parameters
    ----------
    estimate : array-like of shape (n_features, n_components)
        The learned dictionary D_hat, atoms as columns (e.g. ``DLBCD().components_``).
    reference : array-like of shape (n_features, n_components)
        The true dictionary D*, of the same shape. It must not be zero.

    Returns
    -------
    float >= 0
        The normalised mean squared error of the best signed matching of the atoms.

    Raises
    ------
    ValueError
        If the shapes differ or ``reference`` is zero.

    See Also
    --------
    dictionary_recovered : Whether the error is below the thesis' threshold.

    Notes
    -----
    The error measure of section 5.3 of Yu Wang's PhD thesis (University of California, Berkeley, 2020;
    thesis 000). The cost splits over matched column pairs e (of D_hat) and r (of D*), each taking
    its better sign, ``||e||^2 + ||r||^2 - 2 |e . r|``, so the minimum is an assignment problem,
    solved exactly by scipy's ``linear_sum_assignment`` in O(k^3) for k atoms.

    Examples
    --------
    >>> from pyinterp.datasets import make_gaussian_dictionary
    >>> from pyinterp.metrics import dictionary_nmse
    >>> D = make_gaussian_dictionary(4, random_state=0)
    >>> print(round(dictionary_nmse(-D[:, [2, 0, 3, 1]], D), 6))  # atoms reordered and flipped
    0.0
    """
    E = check_array(estimate, dtype=np.float64, input_name="estimate")
    R = check_array(reference, dtype=np.float64, input_name="reference")
    if E.shape != R.shape:
        raise ValueError(f"estimate and reference must have the same shape, got {E.shape} and {R.shape}")
    total = np.sum(R * R)
    if total == 0:
        raise ValueError("reference is zero")
    e2, r2 = np.sum(E * E, axis=0), np.sum(R * R, axis=0)
    cross = E.T @ R
    cost = e2[:, None] + r2[None, :] - 2.0 * np.abs(cross)
    rows, cols = linear_sum_assignment(cost)
    return float(max(cost[rows, cols].sum(), 0.0) / total)


def dictionary_recovered(estimate, reference, threshold=0.01):
    """Successful recovery: dictionary_nmse below ``threshold`` (0.01 in the thesis).

    Parameters
    ----------
    estimate : array-like of shape (n_features, n_components)
        The learned dictionary, atoms as columns.
    reference : array-like of shape (n_features, n_components)
        The true dictionary, of the same shape, not zero.
    threshold : float > 0, default=0.01
        The largest :func:`dictionary_nmse` (exclusive) that counts as a recovery.

    Returns
    -------
    bool
        Whether ``dictionary_nmse(estimate, reference) < threshold``.

    Raises
    ------
    ValueError
        If the shapes differ, ``reference`` is zero or ``threshold`` <= 0.

    See Also
    --------
    dictionary_nmse : The error compared with the threshold.

    Notes
    -----
    The success criterion of the recovery experiments of section 5.3 of Yu Wang's PhD thesis (University
    of California, Berkeley, 2020; thesis 000).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.datasets import make_gaussian_dictionary
    >>> from pyinterp.metrics import dictionary_nmse, dictionary_recovered
    >>> D = make_gaussian_dictionary(4, random_state=0)
    >>> estimate = D + 0.1 * np.random.RandomState(1).standard_normal(D.shape)
    >>> print(round(dictionary_nmse(estimate, D), 3))
    0.059
    >>> dictionary_recovered(estimate, D), dictionary_recovered(estimate, D, threshold=0.1)
    (False, True)
    """
    return dictionary_nmse(estimate, reference) < check_real("threshold", threshold, 0.0, low_open=True)
