from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.utils.fixes import parse_version

# scikit-learn 1.8 changed how its trees split nodes with missing values (scikit-learn#32274) and made
# decision_path follow the missing-value routing apply() uses; on data with NaN, pyinterp's trees
# equal scikit-learn's from 1.8 on.
SKLEARN_NAN_TREES = parse_version(sklearn.__version__) >= parse_version("1.8")
# Pickles written under numpy 2 name numpy._core, which numpy 1.x has from 1.26 on.
NUMPY_READS_NUMPY2_PICKLES = parse_version(np.__version__) >= parse_version("1.26")

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def read_csv_exact(path, **kwargs):
    """A CSV of floats read back bit for bit with pandas: 3.0 does so by default (and deprecates
    asking), earlier versions round the last bit of some unless asked."""
    import pandas as pd

    if parse_version(pd.__version__) < parse_version("3"):
        kwargs.setdefault("float_precision", "round_trip")
    return pd.read_csv(path, **kwargs)


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


def mapped_kb(path):
    """Resident KiB of this process's maps of `path` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in open("/proc/self/smaps"):
        if line[0] in "0123456789abcdef" and "-" in line.split()[0]:
            inside = line.rstrip().endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total
