"""Feature groups (several probes or SNPs of one gene; the R iRF package's ``varnames.grp``): one
name per column of X. Interaction finders then treat a group as one feature, and importances
are summed per group; every function that takes groups calls the argument ``feature_groups``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class FeatureGroups(NamedTuple):
    names: tuple  # the distinct group names, in order of first appearance among the columns
    index: np.ndarray  # int32 per column: its group's position in names


def check_feature_groups(feature_groups, n_features) -> FeatureGroups | None:
    """``feature_groups`` (a sequence of hashable names, one per column, or None) checked
    against the number of columns."""
    if feature_groups is None or isinstance(feature_groups, FeatureGroups):
        return feature_groups
    if isinstance(feature_groups, (str, bytes)) or not hasattr(feature_groups, "__len__"):
        raise TypeError(f"feature_groups must be a sequence with one group name per column, got {feature_groups!r}")
    values = np.asarray(feature_groups, dtype=object).tolist()
    if np.ndim(feature_groups) != 1 or len(values) != n_features:
        raise ValueError(f"feature_groups must have one group name per column ({n_features}), "
                         f"got shape {np.shape(feature_groups)}")
    unequal = [j for j, name in enumerate(values) if isinstance(name, (float, np.floating)) and name != name]
    if unequal:
        raise ValueError(f"feature_groups holds NaN at column(s) {unequal[:10]}: NaN is equal to no name, not even "
                         "another NaN, so it names no group; give those columns a group name")
    position: dict = {}
    try:
        index = [position.setdefault(name, len(position)) for name in values]
    except TypeError as exc:
        raise TypeError(f"feature_groups must hold hashable group names: {exc}") from None
    return FeatureGroups(tuple(position), np.array(index, dtype=np.int32))
