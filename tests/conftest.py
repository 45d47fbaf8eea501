from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load_shared(name):
    """A real data set from ../shared/data, or skip the test when the folder is absent."""
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return np.load(path)


@pytest.fixture
def regression_data():
    rng = np.random.RandomState(0)
    X = rng.rand(300, 6)
    y = 2 * X[:, 0] + np.sin(6 * X[:, 1]) + 0.1 * rng.randn(300)
    return X, y


@pytest.fixture
def classification_data():
    rng = np.random.RandomState(1)
    X = rng.rand(300, 6)
    y = (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.7)
    return X, y
