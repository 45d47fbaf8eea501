"""
p-values and q-values of importances (Janitza's test)
=====================================================

A ranking says which genes a forest used most, not which of them it would be surprising to see
used by chance. :func:`pyinterp.significance.importance_pvalues` gives every feature's
importance a p-value with Janitza, Celik & Boulesteix's (2018) test: two forests, each fitted
on half of the rows, each scoring every feature's permutation importance on the half it did not
see. A feature without effect then has a hold-out importance symmetric about zero, so the
negative importances, mirrored, form the null distribution. Two fits answer for all 5,966
genes of the prostate data set, and Benjamini-Hochberg q-values control the false discovery
rate. What to take from it: many genes separate tumour from normal tissue at q <= 0.1, and the
same test on shuffled labels selects none.
"""

# %%
# The data
# --------
# prostate_ge: 102 samples (tumour or normal) x 5,966 genes.
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from pyinterp import RandomForestClassifier
from pyinterp.significance import importance_pvalues

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


def expression(n=102, p=5966, seed=0):
    """Gaussian 'expression' in which the first 100 genes shift with the class (a stand-in)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2 + 1
    X = rng.standard_normal((n, p)).astype(np.float32)
    X[:, :100] += 0.8 * (y[:, None] == 2)
    return X, y


X, y = load("prostate_ge", expression)
print(f"{X.shape[0]} samples x {X.shape[1]} genes, classes {np.unique(y).tolist()}")

# %%
# The test
# --------
# The forest passed is a template: its parameters are cloned for the two half-sample fits,
# whose seeds come from ``random_state``.
test = importance_pvalues(RandomForestClassifier(n_estimators=500), X, y, random_state=0)
print(test)
n_negative = int(np.sum(test.importances < 0))
n_zero = int(np.sum(test.importances == 0))
print(f"null sample: {len(test.null)} values ({n_negative} negative importances, their mirror "
      f"images, and {n_zero} zeros)")
print(f"genes with p <= 0.01: {np.sum(test.pvalues <= 0.01)}; q <= 0.1: {len(test.selected(0.1))}")
print(test.to_frame().head(8).to_string(index=False))

# %%
# Several hundred genes pass q <= 0.1. The smallest p-value the null allows is
# 1 / (1 + its size), a little below 2e-4 here, and the top genes all reach it: their
# hold-out importance is above every null value. The null holds thousands of values because
# most genes carry nothing a forest on 51 samples can use, so their held-out importance is 0 or
# falls on either side of it.
#
# The same test on shuffled labels
# --------------------------------
# Shuffling y breaks every gene's association with it while keeping the genes' correlations:
# the selections should vanish, and they do.
shuffled = np.random.default_rng(1).permutation(y)
null_test = importance_pvalues(RandomForestClassifier(n_estimators=500), X, shuffled, random_state=0)
print(null_test)
print(f"share of p-values <= 0.05 on shuffled labels: {np.mean(null_test.pvalues <= 0.05):.3f}")
for title, result in (("real", test), ("shuffled", null_test)):
    shared = np.unique(result.pvalues[result.importances == 0])
    print(f"{title} labels: the {np.sum(result.importances == 0)} genes of importance 0 "
          f"all have p = {shared[0]:.3f}")

# %%
# No gene is selected, and about 5 % or fewer of the p-values fall at or below 0.05, as a
# valid test allows. The histograms show both runs. Under the real labels the p-values pile up
# near 0 (the genes that matter). The tall bar on the right of each is the genes whose
# importance is exactly 0 (no tree split on them, or permuting them moved no prediction):
# all of them get the same p-value, the share of the null at or above 0 (printed above).
# Such ties make the p-values discrete, not invalid.
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
for ax, (title, result) in zip(axes, (("real labels", test), ("shuffled labels", null_test))):
    ax.hist(result.pvalues, bins=40, range=(0, 1), color="C0")
    ax.set_title(f"{title}: {len(result.selected(0.1))} genes at q <= 0.1")
    ax.set_xlabel("p-value")
axes[0].set_ylabel("genes")
fig.tight_layout()
plt.show()
