"""The tiers iRF's default table is ordered by (``style="rules"``; the rules by cpe, R's order, the
other tiers by stability): the rules first, then the sets nested in or around them or on their
other side, then the rest (issue 53; bench/studies/irf_default_order.py measures it).

R iRF 3.0 orders its table by cpe, which puts a rule with a noise split added above the rule, and
its filters (sta_fsd, sta_mip above one half) pass the sub-sets of a rule as well as the rule. What
separates them is how the forest's paths nest: the paths of the class-1 leaves that hold a sub-set
of a true rule nearly always hold the rule's other features too (each splits the rows the rule
needs), while a feature added by chance is on a minority of them. So, between two passing sets
S < T of the same direction, prevalence(T) >= CLOSURE x prevalence(S) puts S below T (S is part
of the rule T) and a smaller ratio puts T below S (T adds a feature the paths do not need).

With both sides of the cut searched, the other side of the rules is found too: if y is high when
x0 and x1 are low or when x2 and x3 are low, it is low when x0 and x2 are high (De Morgan), as
pure a region. Such a set is made of the other sides of items of the rules of the other
direction, and so is each of those rules of its items: the two cannot be told apart by their
precision or enrichment, but by how their features co-occur on the paths. A rule needs all its
features on one path (fsd, the log ratio of the set's prevalence to its features' product, well
above 0), while the other side of two rules draws one feature from each, independently (fsd near
0). So, between two such sets of opposite directions holding a feature with opposite signs, the
one with the smaller fsd per added feature leaves tier 0.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

# The prevalence ratio above which a passing superset takes its passing subset's place. In the
# study's tables the ratio was about 0.9 for a true rule over its sub-sets and at most about 0.6 for
# a set with an added feature; 0.6 and 0.8 ranked fewer true triples in the top 5 (0.84 and 0.85
# against 1.00 at 0.7 on the tuning grid).
CLOSURE = 0.7
RULE, NESTED, FILTERED = 0, 1, 2  # the tiers
# The share of bootstraps in which a rule must gain precision over each of its parts (sta_mip).
# R iRF asks one half, which let 11-26 sets per fit into tier 0 on pure noise (p = 10, n = 1,000)
# and 9-18 where y is additive in two features; 0.95 let 0-1 (bench/studies/irf_null_rules.py). A
# true rule gains precision in nearly every bootstrap: on the recovery designs of
# irf_default_order.py the top-5 share of the true rules was the same or higher in every set of
# designs (all sets: 0.906 against 0.900).
MIP_SHARE = 0.95
FILTERS = f"stability >= 0.5, sta_fsd > 0.5, sta_mip > {MIP_SHARE}"  # passes_filters, in words


def passes_filters(columns, mip_share=MIP_SHARE) -> np.ndarray:
    """R iRF's filters, sta_fsd above one half and sta_mip above ``mip_share`` (R's: one half),
    and a stability of at least one half; NaN scores fail."""
    with np.errstate(invalid="ignore"):
        return (np.asarray(columns["sta_fsd"]) > 0.5) & (np.asarray(columns["sta_mip"]) > mip_share) & (
            np.asarray(columns["stability"]) >= 0.5)


def order_keys(columns) -> list:
    """The default table's sort keys, first key first, all ascending: the tier; then the rules of
    tier 0 by cpe alone (R's order, which ranks a rule above its noise extensions when all are
    found in every bootstrap) and the other tiers by stability, then cpe."""
    tiers = np.asarray(columns["tier"])
    stability = -np.nan_to_num(np.asarray(columns["stability"], dtype=float), nan=-np.inf)
    return [tiers, np.where(tiers == RULE, 0.0, stability),
            -np.nan_to_num(np.asarray(columns["cpe"], dtype=float), nan=-np.inf)]


def rule_tiers(features, columns, closure=CLOSURE, other_sides=True, mip_share=MIP_SHARE) -> np.ndarray:
    """Each set's tier: ``FILTERED`` (2) when it fails the filters; ``NESTED`` (1) when a passing
    set of its direction nested in or around it takes its place, or when it is the other side of
    a rule (above); ``RULE`` (0) otherwise. ``features``: the signed sets; ``columns``: the
    table's columns (stability, sta_fsd, sta_mip, prevalence, fsd, direction). ``closure`` (the
    prevalence ratio), ``other_sides`` (False: nesting only) and ``mip_share`` (the filter) are
    for the studies that set them."""
    ok = passes_filters(columns, mip_share)
    tiers = np.where(ok, RULE, FILTERED)
    prevalence = np.nan_to_num(np.asarray(columns["prevalence"], dtype=float), nan=0.0)
    direction = np.asarray(columns["direction"]).astype(int)
    holding = defaultdict(set)  # (direction, item) -> the passing sets holding it
    for i in np.flatnonzero(ok):
        for item in features[i]:
            holding[direction[i], item].add(i)
    for i in np.flatnonzero(ok):
        for j in set.intersection(*(holding[direction[i], item] for item in features[i])) - {i}:
            tiers[i if prevalence[j] >= closure * prevalence[i] else j] = NESTED  # i < j: the sets differ
    if other_sides:
        _other_sides(features, columns, direction, tiers)
    return tiers


def _other_sides(features, columns, direction, tiers):
    """Moves to ``NESTED`` the rules that lose a conflict with a rule of the other direction: both
    made only of the other sides of the other direction's rules' items (unsigned sets have no
    other side), holding a feature with opposite signs, the smaller fsd per added feature losing."""
    rules = np.flatnonzero(tiers == RULE)
    items = {1: set(), -1: set()}
    for i in rules:
        items[direction[i]].update(features[i])
    pure = [i for i in rules if all(sign and (k, -sign) in items[-direction[i]] for k, sign in features[i])]
    sizes = np.array([max(len(f) - 1, 1) for f in features])
    fsd = np.nan_to_num(np.asarray(columns["fsd"], dtype=float), nan=-np.inf) / sizes
    holding = defaultdict(list)  # (direction, item) -> the pure sets holding it
    for i in pure:
        for item in features[i]:
            holding[direction[i], item].append(i)
    lost = [i for i in pure
            if any(fsd[i] < fsd[j] for k, sign in features[i] for j in holding[-direction[i], (k, -sign)])]
    tiers[lost] = NESTED
