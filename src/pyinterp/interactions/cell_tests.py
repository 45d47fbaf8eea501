"""The cell tests behind pair_scan and triple_scan: every combination of two or three columns,
each column cut into at most three levels, tested for interaction from the counts, sums of y and
sums of y^2 of its cells (3 x 3 for a pair, 3 x 3 x 3 for a triple).

For an interaction of `order` columns the test compares the model of every lower order (pairs:
the additive model, a step per level of each column; triples: one mean per cell of each of the
three pairs, so main effects and every pairwise interaction) with one mean per cell, as a score
test with heteroskedasticity-consistent (HC2) variance: the residual sums under the lower-order
fit of the cells whose levels are all above the first (where the interaction lives), over their
variance from each cell's squared residuals. F = T / df on (df, rows - cells) degrees of freedom.

The rule of a combination: the cuts (one per column) whose product of indicators, added to the
lower-order model, removes the most squared error. Every choice of sides of the same cuts removes
the same error (they differ by lower-order terms), so the sides are those whose cell alone,
without the lower-order model, explains most of y. Its coefficient on top of the lower-order
model is the table's ``effect``.

y is rounded to 2^16 steps over its range first, so every sum is an integer that float64 holds
exactly: the counts and sums, and so the results, do not depend on threads or the order of
additions.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations, product

import numpy as np
from scipy import stats
from threadpoolctl import threadpool_limits

from .._validation import read_columns
from .table import InteractionTable

# |y| after rounding: y^2 sums over up to 2^23 rows stay below 2^53, exact in float64.
Y_STEPS = 2**15
MAX_ROWS = 2**23
# A side of a cut: (sign, cut index, the levels it holds): x <= cut 1, x <= cut 2, x > cut 1, x > cut 2.
SIDES = [(-1, 0, (0,)), (-1, 1, (0, 1)), (1, 0, (1, 2)), (1, 1, (2,))]


@dataclass(frozen=True)
class CellModel:
    """The cells of `order` columns' levels and the lower-order model their test is against."""

    order: int
    cells: tuple  # level tuples, the first column's level varying slowest
    design: np.ndarray  # cells x k: the lower-order model's columns on each cell
    interaction: np.ndarray  # the cells whose levels are all >= 1
    rules: tuple  # per rule, a side (index into SIDES) per column
    rule_cells: np.ndarray  # rules x cells: the cells each rule holds
    same_cuts: np.ndarray  # groups x rules: the rules of one choice of cuts
    outer: np.ndarray  # cells x k^2: each cell's x x', so a combination's normal equations are counts @ outer
    rule_design: np.ndarray  # cells x (rules k): each cell's x times each rule's indicator
    chunk: int  # combinations tested at once: up to 8,192, fewer where their arrays (cells x k) pass 8 MB

    @property
    def n_cells(self):
        return len(self.cells)

    def cell_index(self, levels):
        """Each row's cell from its levels (rows x order, each 0-2)."""
        index = np.zeros(levels.shape[0], dtype=np.int64)
        for t in range(self.order):
            index = index * 3 + levels[:, t]
        return index


def _cell_model(order):
    cells = tuple(product(range(3), repeat=order))
    # the lower-order model: a product of level indicators (levels 1 or 2) for each set of fewer
    # than `order` columns, the empty set being the intercept
    terms = [(subset, levels) for size in range(order) for subset in combinations(range(order), size)
             for levels in product((1, 2), repeat=size)]
    design = np.array([[float(all(cell[t] == lv for t, lv in zip(subset, levels))) for subset, levels in terms]
                       for cell in cells])
    rules = tuple(product(range(4), repeat=order))
    rule_cells = np.array([[float(all(cell[t] in SIDES[rule[t]][2] for t in range(order))) for cell in cells]
                           for rule in rules])
    cut_choices = product((0, 1), repeat=order)
    same_cuts = np.array([[r for r, rule in enumerate(rules) if tuple(SIDES[s][1] for s in rule) == cuts]
                          for cuts in cut_choices])
    interaction = np.array([c for c, cell in enumerate(cells) if min(cell) >= 1])
    outer = np.einsum("ck,cl->ckl", design, design).reshape(len(cells), -1)
    rule_design = np.einsum("rc,ck->crk", rule_cells, design).reshape(len(cells), -1)
    chunk = min(1 << 13, (1 << 20) // design.size)
    return CellModel(order, cells, design, interaction, rules, rule_cells, same_cuts, outer, rule_design, chunk)


PAIRS = _cell_model(2)
TRIPLES = _cell_model(3)


@dataclass
class CellData:
    """The columns a scan reads and y: cut into levels, and y put on its grid, when first asked."""

    values: np.ndarray  # rows x scanned columns, float64, NaN missing
    features: np.ndarray  # the scanned columns, as indices into X
    names: object  # X's feature names, or None
    n_features: int  # X's columns
    y: np.ndarray

    @cached_property
    def levels(self):
        """(levels, cuts): see levels()."""
        return levels(self.values)

    @cached_property
    def grid(self):
        """(steps, scale): see steps()."""
        return steps(self.y)


def cell_data(X, y, features, what):
    """The columns `features` of X and y, checked for `what` (pair_scan, triple_scan): the scans'
    size is checked on it before the columns are cut into levels."""
    values, names, n_features, features = read_columns(X, features)
    n = values.shape[0]
    y = target(y, n, what)
    if n > MAX_ROWS:
        raise ValueError(f"{what} takes up to {MAX_ROWS} rows, X has {n}")
    return CellData(values, features, names, n_features, y)


def target(y, n, what):
    """y as float64 numbers (two classes: the second sorted label 1, the first 0), checked."""
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != n:
        raise ValueError(f"y must be 1-d with one value per row of X ({n}), got shape {y.shape}")
    labels = np.unique(y) if y.dtype.kind in "OUSb" else None
    if labels is not None:
        if len(labels) != 2:
            raise ValueError(f"y holds {len(labels)} classes; {what} takes numbers or two classes")
        return (y == labels[1]).astype(np.float64)
    y = y.astype(np.float64)
    if not np.isfinite(y).all():
        raise ValueError("y must be finite: leave out the rows where it is missing")
    return y


def levels(values):
    """Each column's level (0, 1, 2; -1 missing) per row, and its cuts (n_features, 2), NaN-padded:
    the midpoints between its values when it has at most three, else its tertiles."""
    n, k = values.shape
    found = np.full((n, k), -1, dtype=np.int8)
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
        found[present, j] = np.searchsorted(c, column[present], side="left")
    return found, cuts


def steps(y):
    """y centred and rounded to Y_STEPS steps of its largest deviation, and that deviation."""
    scale = np.abs(y - y.mean()).max()
    return (np.rint((y - y.mean()) / scale * Y_STEPS) if scale > 0 else np.zeros(len(y))), scale


def indicators(found):
    """The levels' indicator matrix (rows x 3k: level u of column j at u k + j), whose products with
    itself, weighted by 1, y's steps or their squares, count the rows and sum y and y^2 over cells."""
    return np.concatenate([found == u for u in range(3)], axis=1).astype(np.float64)


class Results:
    """The p-value of each of `count` combinations tested, in the order they were given, and the
    rows of the best `top` of each block: their columns, F, df, effect (in steps), rule and row
    count."""

    def __init__(self, model, top, count):
        self.model, self.top = model, top
        self.pvalues, self.done, self.kept = np.empty(count), 0, []

    def test(self, columns, cells_n, cells_s, cells_q):
        """Test a block of combinations: `columns` (m x order, positions into the scanned columns) and
        their cells' counts, sums and sums of squares (m x cells). Returns the block's p-values and
        its best `top` rows, for record(); blocks are independent, so threads may test several."""
        stat, df, p = cell_tests(self.model, cells_n, cells_s, cells_q)
        best = np.arange(len(p))
        if self.top is not None and len(p) > self.top:
            best = np.lexsort((best, np.where(np.isfinite(p), p, np.inf)))[: self.top]
        effect, rule = cell_rules(self.model, cells_n[best], cells_s[best])
        return p, (best, columns[best], stat[best], df[best], effect, rule, cells_n[best].sum(axis=1))

    def record(self, tested):
        """Keep a tested block (test()'s result), the blocks in the order the combinations are given."""
        p, (best, *rows) = tested
        first = self.done
        self.pvalues[first:first + len(p)] = p
        self.done += len(p)
        self.kept.append((first + best, *rows))

    def scan(self, blocks, block_cells, n_threads):
        """test(*block_cells(b)) for each b of `blocks` (None: nothing to test) on n_threads threads,
        BLAS on one thread each, recorded in the order of `blocks`: the results do not depend on
        the threads."""
        def work(block):
            cells = block_cells(block)
            return None if cells is None else self.test(*cells)

        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(n_threads) as pool:
            for tested in pool.map(work, blocks):
                if tested is not None:
                    self.record(tested)

    def table(self, data):
        """The `top` combinations over every block as an InteractionTable, sorted by p-value, with
        Benjamini-Hochberg q-values over every combination tested; and how many were tested."""
        from ..significance import bh_qvalues_at  # significance imports the interactions package

        features, (_, cuts), scale = data.features, data.levels, data.grid[1]
        p_all = self.pvalues[: self.done]
        index, columns, stat, df, effect, rule, count = (
            np.concatenate([part[f] for part in self.kept]) if self.kept else np.zeros(0, dtype=np.int64)
            for f in range(7))
        order = np.lexsort((index, np.where(np.isfinite(p_all[index]), p_all[index], np.inf)))
        if self.top is not None:
            order = order[: self.top]
        qvalues, n_tested = bh_qvalues_at(p_all, index[order])
        order_k = self.model.order
        found = {c: [] for c in ("effect", "statistic", "df", "pvalue", "qvalue",
                                 *(f"threshold_{t + 1}" for t in range(order_k)), "n")}
        signed = []
        for i, q in zip(order, qvalues):
            sides = [SIDES[s] for s in self.model.rules[rule[i]]]
            signed.append(tuple((int(features[columns[i][t]]), sides[t][0]) for t in range(order_k)))
            found["effect"].append(effect[i] * scale / Y_STEPS)
            found["statistic"].append(stat[i])
            found["df"].append(df[i])
            found["pvalue"].append(p_all[index[i]])
            found["qvalue"].append(q)
            for t in range(order_k):
                found[f"threshold_{t + 1}"].append(cuts[columns[i][t], sides[t][1]])
            found["n"].append(count[i])
        table = InteractionTable(signed, {c: np.asarray(v, dtype=np.float64) for c, v in found.items()}, data.names)
        return table, n_tested


def cell_tests(model, cells_n, cells_s, cells_q):
    """F, its numerator df and the p-value per combination, from its cells' counts, sums and sums of
    squares of y (in steps). The lower-order model's normal equations are solved by a Cholesky
    factorisation vectorised over the combinations that skips dependent columns (absent levels,
    columns in perfect LD)."""
    m = len(cells_n)
    stat, df, p = np.full(m, np.nan), np.zeros(m), np.full(m, np.nan)
    k = model.design.shape[1]
    for c0 in range(0, m, model.chunk):
        c1 = min(m, c0 + model.chunk)
        w, s, q = cells_n[c0:c1], cells_s[c0:c1], cells_q[c0:c1]
        chol, keep = _cholesky((w @ model.outer).reshape(-1, k, k))
        u = _forward(chol, keep, s @ model.design)  # L^-1 X'Wy
        fitted = _backward(chol, keep, u) @ model.design.T  # the lower-order model's value of each cell
        residual = s - w * fitted  # each cell's sum of residuals
        rows = w.sum(axis=1)
        f, df1 = _robust_score(model, chol, keep, w, q - 2 * fitted * s + w * fitted * fitted, residual)
        df2 = rows - (w > 0).sum(axis=1)
        ok = (df1 > 0) & (df2 > 0) & np.isfinite(f)
        stat[c0:c1], df[c0:c1] = np.where(ok, f, np.nan), df1
        p[c0:c1] = np.where(ok, stats.f.sf(np.where(ok, f, 0.0), np.maximum(df1, 1), np.maximum(df2, 1)), np.nan)
    return stat, df, p


def cell_rules(model, cells_n, cells_s):
    """The best rule's effect (in steps) and index per combination: the gain of each rule's indicator
    z on top of the lower-order fit, (z'W r)^2 / (z'W M z), picks the cuts; the rule's own fit (y on
    z alone) picks the sides among them."""
    m, k, n_rules = len(cells_n), model.design.shape[1], len(model.rules)
    effect, rule = np.zeros(m), np.zeros(m, dtype=np.int64)
    for c0 in range(0, m, model.chunk):
        c1 = min(m, c0 + model.chunk)
        w, s = cells_n[c0:c1], cells_s[c0:c1]
        chol, keep = _cholesky((w @ model.outer).reshape(-1, k, k))
        u = _forward(chol, keep, s @ model.design)
        t = _forward(chol, keep, (w @ model.rule_design).reshape(-1, n_rules, k))  # L^-1 X'Wz per rule
        zwz = w @ model.rule_cells.T
        zwr = s @ model.rule_cells.T - (t * u[:, None, :]).sum(axis=2)
        denominator = zwz - (t * t).sum(axis=2)
        usable = denominator > 1e-9 * np.maximum(zwz, 1.0)
        gain = np.where(usable, zwr * zwr / np.where(usable, denominator, 1.0), 0.0)
        picked = np.arange(c1 - c0)
        cuts = np.argmax(gain[:, model.same_cuts].max(axis=2), axis=1)
        rows = w.sum(axis=1)
        centred = s - w * (s.sum(axis=1) / np.maximum(rows, 1.0))[:, None]
        alone = ((centred @ model.rule_cells.T) ** 2
                 / np.maximum(zwz - zwz * zwz / np.maximum(rows, 1.0)[:, None], 1e-300))
        members = model.same_cuts[cuts]  # (combinations, 2^order) rule indices
        best = members[picked, np.argmax(alone[picked[:, None], members], axis=1)]
        chosen = usable[picked, best]
        effect[c0:c1] = np.where(chosen, zwr[picked, best] / np.where(chosen, denominator[picked, best], 1.0), 0.0)
        rule[c0:c1] = best
    return effect, rule


def _robust_score(model, chol, keep, w, squared_residuals, residual):
    """The interaction's score test with heteroskedasticity-consistent (HC2) variance, per
    combination: (F = T / df, df). The score of the interaction cells' indicators Z is their
    residual sums Z'r under the lower-order fit; its variance is G' diag(rho) G with G = M Z (Z with
    the model's projection removed) and rho a cell's squared residuals over 1 - its leverage."""
    design, cells = model.design, model.interaction
    leverage = (_forward(chol, keep, np.broadcast_to(design, (len(w), *design.shape)).copy()) ** 2).sum(axis=2)
    filled = (w > 0) & (leverage < 1.0 - 1e-12)
    rho = np.where(filled, np.maximum(squared_residuals, 0.0) / np.where(filled, 1.0 - leverage, 1.0), 0.0)
    # K = A^+ X'W Z: X'WZ's column i is n_c x_c at interaction cell c = cells[i]
    xwz = w[:, cells, None] * design[cells][None]  # (combinations, interaction cells, k)
    k = _backward(chol, keep, _forward(chol, keep, xwz))
    g = np.eye(model.n_cells)[:, cells][None] - np.einsum("ck,pjk->pcj", design, k)  # (m, cells, |cells|)
    variance = np.einsum("pc,pci,pcj->pij", rho, g, g)
    chol_z, keep_z = _cholesky(variance)
    t = _forward(chol_z, keep_z, residual[:, cells])
    df1 = keep_z.sum(axis=1)
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
        below = (a[:, j + 1:, j] - np.einsum("pik,pk->pi", chol[:, j + 1:, :j], chol[:, j, :j])) / root[:, None]
        chol[:, j + 1:, j] = np.where(kept[:, None], below, 0.0)
    return chol, keep


def _backward(chol, keep, b):
    """L'^-1 b for b of shape (m, k) or (m, r, k), skipped columns' entries zero: with _forward,
    the minimum-norm least-squares solution of the factorised system."""
    return _substitute(chol, keep, b, backward=True)


def _forward(chol, keep, b):
    """L^-1 b for b of shape (m, k) or (m, r, k), skipped columns' entries zero."""
    return _substitute(chol, keep, b, backward=False)


def _substitute(chol, keep, b, backward):
    """Triangular solves on every combination at once, one contiguous array per component."""
    k = chol.shape[-1]
    extra = (slice(None),) + (None,) * (b.ndim - 2)  # broadcast a factor over b's middle axis
    parts = [None] * k
    for j in (reversed(range(k)) if backward else range(k)):
        value = np.array(b[..., j])
        for i in (range(j + 1, k) if backward else range(j)):
            value -= parts[i] * (chol[:, i, j] if backward else chol[:, j, i])[extra]
        value /= chol[:, j, j][extra]
        parts[j] = np.where(keep[:, j][extra], value, 0.0)
    return np.stack(parts, axis=-1)
