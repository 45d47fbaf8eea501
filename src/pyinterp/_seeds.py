"""The one seed convention of the package (docs/dev/seeds.md)."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state

SEED_BOUND = np.iinfo(np.int32).max  # drawn seeds lie in [0, 2**31 - 1)


def root_seed(random_state) -> int:
    """The root seed of a call: an int ``random_state`` as is; for None or a RandomState, one draw
    below 2**31 - 1 from ``check_random_state(random_state)`` (a RandomState advances by that draw).
    The C++ core gives its task t the stream (root seed, t)."""
    rng = check_random_state(random_state)  # rejects anything else, as scikit-learn does
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(rng.randint(SEED_BOUND))


def python_rng(random_state) -> np.random.RandomState:
    """The Python-side generator of a call: ``RandomState(root_seed(random_state))``, which for an
    int k is ``RandomState(k)`` (scikit-learn's ``check_random_state(k)``)."""
    return np.random.RandomState(root_seed(random_state))


def draw_seeds(rng, size=None):
    """Seeds of work units (a forest, a bootstrap, a restart, a trial) drawn from ``python_rng`` up
    front, so that each unit's stream does not depend on which worker runs it."""
    return rng.randint(SEED_BOUND, size=size)


def seeded_fit(estimator, X, y, seed, n_jobs=None):
    """A clone of ``estimator`` fitted on (X, y) with its drawn seed as ``random_state`` (and
    ``n_jobs`` threads where it takes them): one unit of a test's refits."""
    model = clone(estimator)
    params = {"random_state": int(seed)}
    if "n_jobs" in model.get_params():
        params["n_jobs"] = n_jobs
    return model.set_params(**params).fit(X, y)
