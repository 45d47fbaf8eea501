"""
pyinterp's random forest beside scikit-learn's
==============================================

:class:`pyinterp.RandomForestClassifier` takes scikit-learn's parameters with their meaning,
so it can replace :class:`sklearn.ensemble.RandomForestClassifier` in existing code. This
example fits both, with the same parameters, on two gene-expression data sets with far more
genes than samples (prostate tumours against normal tissue, and a four-class toxicology set),
and compares their cross-validated accuracy and the time their fits took. It then exports the
pyinterp forest as a fitted scikit-learn forest with ``to_sklearn()``, for tools that only
read scikit-learn's trees. What to take from it: the two forests are equally accurate (they
grow the same kind of trees from different random streams), pyinterp's fits are faster on
such wide data, and the export predicts exactly what the pyinterp forest predicts.
"""

# %%
# The data
# --------
# The data sets live in ``../shared/data`` beside the checkout (or in the folder named by
# ``PYINTERP_DATA``). Where they are absent, a simulated stand-in of the same shape is used:
# Gaussian expression in which a few hundred genes shift with the class.
import os
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import RandomForestClassifier as SklearnForest
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import export_text

from pyinterp import RandomForestClassifier

# The checkout's sibling shared/data. sphinx-gallery sets sys.argv[0] to this script, not __file__.
DATA = Path(os.environ.get("PYINTERP_DATA") or Path(sys.argv[0]).resolve().parents[2] / "shared" / "data")


def load(name, stand_in):
    """X, y of DATA/<name>.npz, or a simulated stand-in of the same shape where it is absent."""
    path = DATA / f"{name}.npz"
    if not path.exists():
        print(f"{path} not found: using a simulated stand-in of the same shape")
        return stand_in()
    with np.load(path) as data:
        return data["X"], data["y"]


def expression(n, p, n_classes, seed):
    """Gaussian 'expression' in which 300 genes shift by class: a stand-in for a real set."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes + 1
    X = rng.standard_normal((n, p)).astype(np.float32)
    X[:, :300] += 0.3 * rng.standard_normal((n_classes, 300)).astype(np.float32)[y - 1]
    return X, y


sets = {"prostate_ge": load("prostate_ge", lambda: expression(102, 5966, 2, 0)),
        "tox_171": load("tox_171", lambda: expression(171, 5748, 4, 1))}
for name, (X, y) in sets.items():
    print(f"{name}: {X.shape[0]} samples x {X.shape[1]} genes, classes {np.unique(y).tolist()}")

# %%
# Five-fold cross-validation of both forests
# ------------------------------------------
# Both get 200 trees, the default ``max_features="sqrt"`` and one thread, and each fold's fit
# is timed. The folds are the same for both.
results = {}
for name, (X, y) in sets.items():
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    for label, Forest in (("pyinterp", RandomForestClassifier), ("scikit-learn", SklearnForest)):
        accuracy, seconds = [], 0.0
        for train, test in folds:
            forest = Forest(n_estimators=200, n_jobs=1, random_state=0)
            start = time.perf_counter()
            forest.fit(X[train], y[train])
            seconds += time.perf_counter() - start
            accuracy.append(np.mean(forest.predict(X[test]) == y[test]))
        results[name, label] = (np.mean(accuracy), np.std(accuracy), seconds)
        print(f"{name:12s} {label:13s} accuracy {np.mean(accuracy):.3f} ± {np.std(accuracy):.3f}   "
              f"fit time (5 folds) {seconds:5.2f} s")

# %%
# The accuracies differ by a few hundredths at most, well inside their spread across the
# folds: the forests are the same method. The fit times differ several-fold in pyinterp's
# favour on these wide matrices. The bars below show both.
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
at = np.arange(len(sets))
for k, label in enumerate(("pyinterp", "scikit-learn")):
    mean = [results[name, label][0] for name in sets]
    spread = [results[name, label][1] for name in sets]
    seconds = [results[name, label][2] for name in sets]
    left.bar(at + (k - 0.5) * 0.38, mean, width=0.38, yerr=spread, capsize=3, label=label, color=f"C{k}")
    right.bar(at + (k - 0.5) * 0.38, seconds, width=0.38, label=label, color=f"C{k}")
for ax, title in ((left, "cross-validated accuracy"), (right, "fit time, 5 folds (s)")):
    ax.set_xticks(at, list(sets))
    ax.set_title(title)
left.set_ylim(0, 1.05)
left.legend(loc="lower right")
fig.tight_layout()

# %%
# Export to scikit-learn
# ----------------------
# ``to_sklearn()`` returns a fitted :class:`sklearn.ensemble.RandomForestClassifier` holding the
# same trees, and the in-bag counts, so scikit-learn's out-of-bag machinery and tools such as
# ``sklearn.tree.export_text`` or shap's ``TreeExplainer`` read it. Its predicted probabilities
# equal pyinterp's (scikit-learn compares X as float32, as these data are).
X, y = sets["prostate_ge"]
forest = RandomForestClassifier(n_estimators=200, random_state=0).fit(X, y)
exported = forest.to_sklearn()
print(type(exported).__name__, "with", len(exported.estimators_), "trees")
print("largest difference of predicted probabilities:",
      np.abs(exported.predict_proba(X) - forest.predict_proba(X)).max())
print("same importances:", np.allclose(exported.feature_importances_, forest.feature_importances_))
print(export_text(exported.estimators_[0], max_depth=2))

# %%
# The difference is exactly 0 and the importances agree: the exported forest is the pyinterp
# forest, in scikit-learn's classes. The first tree reads as scikit-learn prints any tree.
plt.show()
