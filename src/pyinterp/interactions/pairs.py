"""Exhaustive tests of every pair of columns for interaction: the confirmation stage after a screen
(issue 49), where a forest's importance has narrowed p = 10^5-10^6 variants to a few thousand.

Each column is cut into at most three levels: a column of at most three values (genotypes 0, 1,
2) keeps one level per value, cut at the midpoints; any other at its tertiles. A pair's rows (those
with both values) then fall into the 3 x 3 cells of its levels, and everything below comes from
each cell's row count, sum of y and sum of y^2:

- the interaction test: the additive model (a step per level of each column: no assumption on
  the shape of either column's own effect, dominance included) against the saturated one (one
  mean a cell: none on the interaction's), the two-locus test of the epistasis literature, as a
  score test with heteroskedasticity-consistent (HC2) variance: the interaction cells' residual
  sums under the additive fit, over their variance from each cell's squared residuals. F = T /
  df on (df, rows - cells) degrees of freedom, df = cells - the additive model's rank. Measured
  under nulls (tests/test_pair_scan.py): uniform at n = 2,000 with common alleles, with a 0/1
  target and with noise whose variance depends on a genotype (where the pooled-variance F test
  gave 2-3 times too many p-values below 0.01); conservative with rare alleles at n = 500 (3.1%
  below 0.05), whose cells hold few rows;
- the pair's Boolean rule: the cuts (one per column) whose rule 1(x_a on a side of its cut)
  1(x_b on a side of its cut), added to the additive model, removes the most squared error. The
  four rules of a pair of cuts remove the same error (they differ by additive terms), so the
  sides are those whose cell alone, without the additive model, explains most of y: the cell
  where the interaction lives, as in the LSS model. The rule's coefficient on top of the additive
  model is the table's ``effect``.

The counts and sums of all pairs at once are three matrix products of the levels' indicator
matrices (BLAS): L_u' L_v counts the rows of cell (u, v) of every pair, (y L_u)' L_v and
(y^2 L_u)' L_v sum y and y^2 over it. y is rounded to 2^16 steps over its range first, so every
sum is an integer that float64 holds exactly: the products, and so the results, do not depend on
the threads or the order of the additions.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy import stats
from sklearn.utils._param_validation import validate_params
from threadpoolctl import threadpool_limits

from .._validation import IntInterval, check_array, read_columns, resolve_n_threads
from .table import InteractionTable

__all__ = ["PairScan", "pair_scan"]

# |y| after rounding: y^2 sums over up to 2^23 rows stay below 2^53, exact in float64.
_Y_STEPS = 2**15
_MAX_ROWS = 2**23
# The additive model's design on the 9 cells (u, v), u the first column's level: intercept, steps.
_CELLS = [(u, v) for u in range(3) for v in range(3)]
_ADDITIVE = np.array([[1.0, u == 1, u == 2, v == 1, v == 2] for u, v in _CELLS])
# A side of a cut: (sign, cut index, the levels it holds): x <= cut 1, x <= cut 2, x > cut 1, x > cut 2.
_SIDES = [(-1, 0, (0,)), (-1, 1, (0, 1)), (1, 0, (1, 2)), (1, 1, (2,))]
_RULES = [(sa, sb) for sa in range(4) for sb in range(4)]
_RULE_CELLS = np.array([[float(u in _SIDES[sa][2] and v in _SIDES[sb][2]) for u, v in _CELLS] for sa, sb in _RULES])
# The rules of one pair of cuts: the four sides' products differ from each other by additive terms
# (1 - a)(1 - b) = 1 - a - b + ab), so on top of the additive model they remove the same error.
_SAME_CUTS = np.array([[r for r, (sa, sb) in enumerate(_RULES) if (_SIDES[sa][1], _SIDES[sb][1]) == cuts]
                       for cuts in ((0, 0), (0, 1), (1, 0), (1, 1))])
# Cell c's x_c x_c' (flattened), and per rule r x_c z_rc (flattened r, k): the normal equations of
# every pair are then products with its cell counts.
_OUTER = np.einsum("ck,cl->ckl", _ADDITIVE, _ADDITIVE).reshape(9, 25)
_RULE_DESIGN = np.einsum("rc,ck->crk", _RULE_CELLS, _ADDITIVE).reshape(9, 80)
# The interaction cells (u, v >= 1) and their indicators (9 cells x 4).
_INTERACTION = np.array([c for c, (u, v) in enumerate(_CELLS) if u and v])
_INTERACTION_CELLS = np.eye(9)[:, _INTERACTION]
# Pairs whose rules are searched at once (arrays of pairs x 16 rules x 5).
_CHUNK = 1 << 13


@dataclass
class PairScan:
    """What :func:`pair_scan` found.

    A dataclass made by :func:`pair_scan`: each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    interactions : InteractionTable
        The ``top`` pairs by p-value: each pair's Boolean rule as signed features (sign -1:
        ``x <= threshold``, +1: ``x > threshold``) with columns ``effect`` (the rule's
        coefficient on top of the additive model), ``statistic`` (F), ``df`` (its numerator
        degrees of freedom), ``pvalue``, ``qvalue`` (Benjamini-Hochberg over every pair tested),
        ``threshold_1``, ``threshold_2`` (the rule's cuts, in X's units) and ``n`` (the rows with
        both values).
    n_pairs : int
        Pairs tested (those with a finite p-value): the count the q-values adjust for.
    features : ndarray of int
        The columns scanned.
    cuts : ndarray of shape (n_features, 2)
        Each scanned column's cuts between its levels (NaN where it has fewer).

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.interactions import pair_scan
    >>> X = np.random.default_rng(0).standard_normal((300, 4))
    >>> scan = pair_scan(X, X[:, 0] * X[:, 1])
    >>> scan.n_pairs, scan.cuts.shape, scan.interactions[0].features[0][0]
    (6, (4, 2), 0)
    """

    interactions: InteractionTable
    n_pairs: int
    features: np.ndarray
    cuts: np.ndarray


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "features": ["array-like", None],
        "top": [IntInterval(Integral, 1, None, closed="left"), None],
        "max_pairs": [IntInterval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
    },
    prefer_skip_nested_validation=True,
)
def pair_scan(X, y, *, features=None, top=1000, max_pairs=20_000_000, n_jobs=None):
    """Test every pair of the given columns for interaction, and find each pair's Boolean rule.

    See the module's description for the test and the rule. Exhaustive: at 1,000 columns
    (about 5 x 10^5 pairs) and 2,000 rows it takes seconds, so it confirms what a screen keeps
    (a forest's top features by importance, on other rows than the scan's to keep its p-values
    valid).

    Parameters
    ----------
    X : array-like, sparse matrix, packed genotypes or AnnData of shape (n_samples, n_features)
        Missing values (NaN, missing calls) leave the row out of the pairs of that column.
    y : array-like of shape (n_samples,)
        Numbers, or two classes (the second of the sorted labels is 1, the first 0: a linear
        probability model).
    features : array-like of int or str, or bool mask, optional
        The columns to scan (by index, name or mask); default all.
    top : int or None, default=1000
        Rows of the table: the pairs with the smallest p-values (None: every pair tested).
    max_pairs : int, default=20,000,000
        Refuse to scan more pairs (memory grows with them: 8 bytes a pair for the p-values).
    n_jobs : int, optional
        Threads of the matrix products; results do not depend on it.

    Returns
    -------
    PairScan
        The ``top`` pairs' table, the number of pairs tested, the columns scanned and their cuts.

    Raises
    ------
    ValueError
        If fewer than two columns are given, they make more than ``max_pairs`` pairs, X has more
        than 2**23 rows, or y is not finite numbers or two classes with one value per row.

    See Also
    --------
    screen_pairs : Screens the columns with a forest first, then scans the kept ones.

    Examples
    --------
    >>> import numpy as np
    >>> from pyinterp.interactions import pair_scan
    >>> rng = np.random.default_rng(0)
    >>> G = rng.binomial(2, 0.4, size=(2000, 30)).astype(float)
    >>> y = 1.0 * ((G[:, 3] > 0) & (G[:, 7] > 1)) + rng.standard_normal(2000)
    >>> scan = pair_scan(G, y)
    >>> scan.n_pairs
    435
    >>> best = scan.interactions[0]
    >>> best.features, round(best.effect, 2), best.pvalue < 1e-6
    (((3, 1), (7, 1)), 0.93, True)
    """
    values, names, n_features, features = read_columns(X, features)
    n = values.shape[0]
    y = _target(y, n)
    if n > _MAX_ROWS:
        raise ValueError(f"pair_scan takes up to {_MAX_ROWS} rows, X has {n}")
    k = len(features)
    if k < 2:
        raise ValueError(f"pair_scan needs at least two columns to pair, got {k}")
    if k * (k - 1) // 2 > max_pairs:
        raise ValueError(f"{k} columns make {k * (k - 1) // 2} pairs, above max_pairs={max_pairs}: scan fewer "
                         "columns (a screen's top features) or raise max_pairs")
    levels, cuts = _levels(values)
    scale = np.abs(y - y.mean()).max()
    steps = np.rint((y - y.mean()) / scale * _Y_STEPS) if scale > 0 else np.zeros(n)
    with threadpool_limits(limits=resolve_n_threads(n_jobs), user_api="blas"):
        found = _scan(levels, steps, top)
    p_all, rows = found
    tested = np.isfinite(p_all)
    q_all = np.full(p_all.shape, np.nan)
    q_all[tested] = _bh(p_all[tested])
    pair_index, a, b, stat, df, effect, rule, count = rows
    order = np.lexsort((pair_index, np.where(np.isfinite(p_all[pair_index]), p_all[pair_index], np.inf)))
    if top is not None:
        order = order[:top]
    table_features, columns = [], {c: [] for c in ("effect", "statistic", "df", "pvalue", "qvalue", "threshold_1",
                                                    "threshold_2", "n")}
    for i in order:
        sa, sb = _RULES[rule[i]]
        (sign_a, cut_a, _), (sign_b, cut_b, _) = _SIDES[sa], _SIDES[sb]
        table_features.append(((int(features[a[i]]), sign_a), (int(features[b[i]]), sign_b)))
        columns["effect"].append(effect[i] * scale / _Y_STEPS)
        columns["statistic"].append(stat[i])
        columns["df"].append(df[i])
        columns["pvalue"].append(p_all[pair_index[i]])
        columns["qvalue"].append(q_all[pair_index[i]])
        columns["threshold_1"].append(cuts[a[i], cut_a])
        columns["threshold_2"].append(cuts[b[i], cut_b])
        columns["n"].append(count[i])
    table = InteractionTable(table_features, {c: np.asarray(v, dtype=np.float64) for c, v in columns.items()}, names)
    return PairScan(table, int(tested.sum()), features, cuts)


def _target(y, n):
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != n:
        raise ValueError(f"y must be 1-d with one value per row of X ({n}), got shape {y.shape}")
    labels = np.unique(y) if y.dtype.kind in "OUSb" else None
    if labels is not None:
        if len(labels) != 2:
            raise ValueError(f"y holds {len(labels)} classes; pair_scan takes numbers or two classes")
        return (y == labels[1]).astype(np.float64)
    y = y.astype(np.float64)
    if not np.isfinite(y).all():
        raise ValueError("y must be finite: leave out the rows where it is missing")
    return y


def _levels(values):
    """Each column's level (0, 1, 2; -1 missing) per row, and its cuts (n_features, 2), NaN-padded:
    the midpoints between its values when it has at most three, else its tertiles."""
    n, k = values.shape
    levels = np.full((n, k), -1, dtype=np.int8)
    cuts = np.full((k, 2), np.nan)
    for j in range(k):
        column = values[:, j]
        present = ~np.isnan(column)
        distinct = np.unique(column[present])
        if len(distinct) <= 3:
            c = (distinct[1:] + distinct[:-1]) / 2
        else:
            c = np.unique(np.quantile(column[present], [1 / 3, 2 / 3]))
            c = c[c < distinct[-1]]  # a cut at the largest value would leave its upper level empty
        cuts[j, : len(c)] = c
        levels[present, j] = np.searchsorted(c, column[present], side="left")
    return levels, cuts


def _bh(p):
    from ..significance import bh_qvalues  # significance imports the interactions package

    return bh_qvalues(p)


def _scan(levels, steps, top):
    """p-values of every pair a < b (in the order of a, then b) and, for the best `top` of each
    block of a's (all with top None), their rows: pair index, a, b, F, df, effect (in steps),
    rule and row count."""
    n, k = levels.shape
    indicators = np.concatenate([levels == u for u in range(3)], axis=1).astype(np.float64)  # n x 3k
    weighted = indicators * steps[:, None]
    squared = indicators * (steps * steps)[:, None]
    # a's per block: the three 3B x 3k products take 216 B k bytes, kept near 16 MB, and the block's
    # pairs' cells about as much
    block = max(1, min(k, (1 << 24) // (216 * k)))
    p_parts, kept = [], []
    first_pair = 0
    for a0 in range(0, k, block):
        a1 = min(k, a0 + block)
        pick = np.concatenate([np.arange(a0, a1) + u * k for u in range(3)])
        counts = (indicators[:, pick].T @ indicators).reshape(3, a1 - a0, 3, k)
        sums = (weighted[:, pick].T @ indicators).reshape(3, a1 - a0, 3, k)
        squares = (squared[:, pick].T @ indicators).reshape(3, a1 - a0, 3, k)
        a_idx, b_idx = np.nonzero(np.arange(k)[None, :] > np.arange(a0, a1)[:, None])
        cells_n = counts.transpose(1, 3, 0, 2)[a_idx, b_idx].reshape(-1, 9)  # cell u * 3 + v
        cells_s = sums.transpose(1, 3, 0, 2)[a_idx, b_idx].reshape(-1, 9)
        cells_q = squares.transpose(1, 3, 0, 2)[a_idx, b_idx].reshape(-1, 9)
        a_idx = a_idx + a0
        stat, df, p, effect, rule = _test_pairs(cells_n, cells_s, cells_q)
        p_parts.append(p)
        index = np.arange(first_pair, first_pair + len(p))
        best = np.arange(len(p))
        if top is not None and len(p) > top:
            best = np.lexsort((best, np.where(np.isfinite(p), p, np.inf)))[:top]
        kept.append((index[best], a_idx[best], b_idx[best], stat[best], df[best], effect[best], rule[best],
                     cells_n[best].sum(axis=1)))
        first_pair += len(p)
    p_all = np.concatenate(p_parts)
    rows = tuple(np.concatenate([part[f] for part in kept]) for f in range(8))
    return p_all, rows


def _test_pairs(cells_n, cells_s, cells_q):
    """F, its numerator df, the p-value, and the best rule's effect and index, per pair, from the 9
    cells' counts, sums and sums of squares of y (in steps). The additive model's normal equations
    are 5 x 5 per pair, solved by a Cholesky factorisation vectorised over the pairs that skips
    dependent columns (absent levels, columns in perfect LD)."""
    m = len(cells_n)
    stat, df, p = np.full(m, np.nan), np.zeros(m), np.full(m, np.nan)
    effect, rule = np.zeros(m), np.zeros(m, dtype=np.int64)
    for c0 in range(0, m, _CHUNK):
        c1 = min(m, c0 + _CHUNK)
        w, s, q = cells_n[c0:c1], cells_s[c0:c1], cells_q[c0:c1]
        chol, keep = _cholesky((w @ _OUTER).reshape(-1, 5, 5))
        u = _forward(chol, keep, s @ _ADDITIVE)  # L^-1 X'Wy
        fitted = _backward(chol, keep, u) @ _ADDITIVE.T  # the additive model's value of each cell
        residual = s - w * fitted  # each cell's sum of residuals
        rows = w.sum(axis=1)
        f, df1 = _robust_score(chol, keep, w, q - 2 * fitted * s + w * fitted * fitted, residual)
        df2 = rows - (w > 0).sum(axis=1)
        ok = (df1 > 0) & (df2 > 0) & np.isfinite(f)
        stat[c0:c1], df[c0:c1] = np.where(ok, f, np.nan), df1
        p[c0:c1] = np.where(ok, stats.f.sf(np.where(ok, f, 0.0), np.maximum(df1, 1), np.maximum(df2, 1)), np.nan)
        # the rules: the gain of each indicator z on top of the additive fit, (z'W r)^2 / (z'W M z)
        t = _forward(chol, keep, (w @ _RULE_DESIGN).reshape(-1, 16, 5))  # L^-1 X'Wz per rule
        zwz = w @ _RULE_CELLS.T
        zwr = s @ _RULE_CELLS.T - (t * u[:, None, :]).sum(axis=2)
        denominator = zwz - (t * t).sum(axis=2)
        usable = denominator > 1e-9 * np.maximum(zwz, 1.0)
        gain = np.where(usable, zwr * zwr / np.where(usable, denominator, 1.0), 0.0)
        picked = np.arange(c1 - c0)
        cuts = np.argmax(gain[:, _SAME_CUTS].max(axis=2), axis=1)
        # the sides: the rule's own fit, y on its indicator alone
        centred = s - w * (s.sum(axis=1) / np.maximum(rows, 1.0))[:, None]
        alone = (centred @ _RULE_CELLS.T) ** 2 / np.maximum(zwz - zwz * zwz / np.maximum(rows, 1.0)[:, None], 1e-300)
        members = _SAME_CUTS[cuts]  # (pairs, 4) rule indices
        best = members[picked, np.argmax(alone[picked[:, None], members], axis=1)]
        chosen = usable[picked, best]
        effect[c0:c1] = np.where(chosen, zwr[picked, best] / np.where(chosen, denominator[picked, best], 1.0), 0.0)
        rule[c0:c1] = best
    return stat, df, p, effect, rule


def _robust_score(chol, keep, w, squared_residuals, residual):
    """The interaction's score test with heteroskedasticity-consistent (HC2) variance, per pair:
    (F = T / df, df). The score of the four interaction cells' indicators Z is their residual sums
    Z'r under the additive fit; its variance is G' diag(rho) G with G = M Z (Z with the additive
    model's projection removed) and rho a cell's squared residuals over 1 - its leverage."""
    leverage = (_forward(chol, keep, np.broadcast_to(_ADDITIVE, (len(w), 9, 5)).copy()) ** 2).sum(axis=2)
    filled = (w > 0) & (leverage < 1.0 - 1e-12)
    rho = np.where(filled, np.maximum(squared_residuals, 0.0) / np.where(filled, 1.0 - leverage, 1.0), 0.0)
    # K = A^+ X'W Z: X'WZ's column k is n_c x_c at interaction cell c = _INTERACTION[k]
    xwz = w[:, _INTERACTION, None] * _ADDITIVE[_INTERACTION][None]  # (pairs, 4, 5)
    k = _backward(chol, keep, _forward(chol, keep, xwz))
    g = _INTERACTION_CELLS[None] - np.einsum("ck,pjk->pcj", _ADDITIVE, k)  # (pairs, 9 cells, 4)
    variance = np.einsum("pc,pci,pcj->pij", rho, g, g)
    chol4, keep4 = _cholesky(variance)
    t = _forward(chol4, keep4, residual[:, _INTERACTION])
    df1 = keep4.sum(axis=1)
    return (t * t).sum(axis=1) / np.maximum(df1, 1), df1


def _cholesky(a):
    """Lower Cholesky factors of a stack of symmetric positive semi-definite matrices, a column
    whose pivot is below 1e-9 of its diagonal (dependent on the columns before it) skipped: a unit
    pivot and a zero column below it; and which columns were kept."""
    k = a.shape[-1]
    chol = np.zeros_like(a)
    keep = np.zeros(a.shape[:-1], dtype=bool)
    for j in range(k):
        pivot = a[:, j, j] - (chol[:, j, :j] ** 2).sum(axis=1)
        kept = pivot > 1e-9 * np.maximum(a[:, j, j], 1.0)
        keep[:, j] = kept
        root = np.sqrt(np.where(kept, pivot, 1.0))
        chol[:, j, j] = root
        for i in range(j + 1, k):
            below = (a[:, i, j] - (chol[:, i, :j] * chol[:, j, :j]).sum(axis=1)) / root
            chol[:, i, j] = np.where(kept, below, 0.0)
    return chol, keep


def _backward(chol, keep, b):
    """L'^-1 b for b of shape (pairs, 5) or (pairs, r, 5), skipped columns' entries zero: with
    _forward, the minimum-norm least-squares solution of the factorised system."""
    return _substitute(chol, keep, b, backward=True)


def _forward(chol, keep, b):
    """L^-1 b for b of shape (pairs, 5) or (pairs, r, 5), skipped columns' entries zero."""
    return _substitute(chol, keep, b, backward=False)


def _substitute(chol, keep, b, backward):
    """Triangular solves on every pair at once, one contiguous array per component."""
    k = chol.shape[-1]
    extra = (slice(None),) + (None,) * (b.ndim - 2)  # broadcast a pair's factor over b's middle axis
    parts = [None] * k
    for j in (reversed(range(k)) if backward else range(k)):
        value = np.array(b[..., j])
        for i in (range(j + 1, k) if backward else range(j)):
            value -= parts[i] * (chol[:, i, j] if backward else chol[:, j, i])[extra]
        value /= chol[:, j, j][extra]
        parts[j] = np.where(keep[:, j][extra], value, 0.0)
    return np.stack(parts, axis=-1)
