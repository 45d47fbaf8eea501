"""Checks that scikit-learn's parameter validation does not cover.

Estimators and public functions declare scikit-learn constraints (``_parameter_constraints``,
``validate_params``) and check sample weights with ``_check_sample_weight``. What remains here:

- ``resolve_n_threads``: n_jobs as a thread count for the C++ core.
- ``check_int`` / ``check_real``: short messages ("top must be >= 1, got 0") for code without a
  constraint table: metrics.py and datasets.py (whose tests assert these messages),
  ``dstump(...).select`` and the resolvers below.
- ``count_or_fraction``, ``resolve_max_features``, ``resolve_n_draws``: the forests' parameters
  resolved against the data (fractions to counts, max_features against the drawable features),
  after their constraints are checked.
- ``check_weights_vector``: the forests' sample and feature weights, with the zero-sum check and
  the messages tests/test_validation.py asserts (``_check_sample_weight`` has neither).
- ``FOREST_X`` and ``MissingValuesMixin``: what X a forest reads, as ``check_array`` /
  ``validate_data`` keywords (float64 or float32; NaN is a missing value, infinity an error), and
  the ``allow_nan`` tag of every estimator whose X goes to a forest.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np


FOREST_X = {"dtype": [np.float64, np.float32], "ensure_all_finite": "allow-nan"}


class MissingValuesMixin:
    """Declares that X may hold missing values (NaN); place before BaseEstimator."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def resolve_n_threads(n_jobs) -> int:
    """scikit-learn's n_jobs convention: None -> 1, -1 -> all cores, -2 -> all but one, ..."""
    if n_jobs is None:
        return 1
    if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    n_cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return int(n_jobs) if n_jobs > 0 else max(1, n_cpus + 1 + int(n_jobs))


def check_int(name, value, low, high=None):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


def check_real(name, value, low, high=None, *, low_open=False):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
        raise TypeError(f"{name} must be a finite real number, got {value!r}")
    if value < low or (low_open and value == low) or (high is not None and value > high):
        left = "(" if low_open else "["
        raise ValueError(f"{name} must be in {left}{low}, {high if high is not None else 'inf'}], got {value}")
    return float(value)


def count_or_fraction(name, value, n, *, min_count=1, fraction_max=1.0):
    """An int count, or a float fraction of n rounded up (scikit-learn's convention)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return check_int(name, value, min_count)
    check_real(name, value, 0.0, fraction_max, low_open=True)
    return max(min_count, int(math.ceil(value * n)))


def resolve_max_features(max_features, n_features, n_drawable):
    if max_features is None:
        k = n_features
    elif isinstance(max_features, str):
        if max_features == "sqrt":
            k = int(math.sqrt(n_features))
        elif max_features == "log2":
            k = int(math.log2(n_features))
        else:
            raise ValueError(f"max_features must be an int, a float, 'sqrt', 'log2' or None, got {max_features!r}")
    elif isinstance(max_features, numbers.Integral) and not isinstance(max_features, bool):
        k = check_int("max_features", max_features, 1, n_features)
    else:
        k = int(check_real("max_features", max_features, 0.0, 1.0, low_open=True) * n_features)
    return max(1, min(k, n_drawable))


def resolve_n_draws(max_samples, n_samples, bootstrap):
    if max_samples is None:
        return n_samples
    if isinstance(max_samples, numbers.Integral) and not isinstance(max_samples, bool):
        return check_int("max_samples", max_samples, 1, n_samples)
    check_real("max_samples", max_samples, 0.0, 1.0, low_open=True)
    return max(1, int(round(max_samples * n_samples)))


def check_weights_vector(name, weights, length, *, what):
    """A finite, non-negative float64 copy with one entry per `what` and a positive sum."""
    try:
        w = np.array(weights, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers") from exc
    if w.ndim != 1 or w.shape[0] != length:
        raise ValueError(f"{name} must be a 1-d array with one entry per {what} ({length}), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} contains NaN or infinity")
    if np.any(w < 0):
        raise ValueError(f"{name} must be non-negative")
    if not np.any(w > 0):
        raise ValueError(f"{name} is zero everywhere: at least one value must be positive")
    return w
