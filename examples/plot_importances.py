"""
MDI, MDI-oob and permutation importance: the bias toward many-valued noise
==========================================================================

A random forest's usual importance, the mean decrease in impurity (MDI,
``feature_importances_``), is computed on the rows each tree was fitted on. A feature with many
distinct values offers many thresholds, and some of them always fit the training rows well, so
MDI credits such a feature even when it is pure noise. This example plants noise columns in a
real data set whose genes take three values each (the colon tumour set, discretised) and asks
three measures where they rank them: MDI, MDI-oob (the same decomposition scored on the
out-of-bag rows, :func:`pyinterp.importance.mdi_oob`) and the out-of-bag permutation
importance (:func:`pyinterp.importance.permutation_oob`). What to take from it: MDI ranks
continuous noise among the top genes; the out-of-bag measures do not, so use them to rank
features of mixed kinds.
"""

# %%
# The data, with noise columns planted
# ------------------------------------
# colon: 62 samples x 2,000 genes, each gene discretised to three levels (-2, 0, 2), and tumour
# against normal tissue. Beside the genes we put 20 columns of continuous Gaussian noise (62
# distinct values each) and 20 columns of noise with the genes' own three levels. None of them
# carries anything about y.
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import rankdata

from pyinterp import RandomForestClassifier, importance, plotting

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


def three_level_genes(seed=0):
    """62 x 2000 genes coded -2/0/2, 40 of them tied to the class: a stand-in for colon."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(62) < 40, -1, 1)
    latent = rng.standard_normal((62, 2000))
    latent[:, :40] += 1.2 * (y[:, None] > 0)
    X = np.select([latent < -0.5, latent > 0.5], [-2, 2], 0).astype(np.int16)
    return X, y


X_genes, y = load("colon", three_level_genes)
n, p_genes = X_genes.shape
rng = np.random.default_rng(0)
continuous_noise = rng.standard_normal((n, 20))
three_level_noise = rng.choice([-2, 0, 2], size=(n, 20))
X = np.column_stack([X_genes, continuous_noise, three_level_noise]).astype(np.float32)
groups = {"genes": np.arange(p_genes), "continuous noise": p_genes + np.arange(20),
          "3-level noise": p_genes + 20 + np.arange(20)}
print(f"{n} samples, {p_genes} genes with values {np.unique(X_genes).tolist()}, plus 40 noise columns")

# %%
# One forest, three measures
# --------------------------
# All three read the same fitted forest; the two out-of-bag measures also need the training
# X and y, since they score each tree on the rows it did not draw.
forest = RandomForestClassifier(n_estimators=500, oob_score=True, random_state=0).fit(X, y)
print(f"out-of-bag accuracy {forest.oob_score_:.3f}")
measures = {"MDI": importance.mdi(forest),
            "MDI-oob": importance.mdi_oob(forest, X, y),
            "permutation (oob)": importance.permutation_oob(forest, X, y, n_repeats=5, random_state=0)}

# %%
# Where each measure ranks the planted noise
# ------------------------------------------
# Rank 1 is the most important of the 2,040 columns (ties share their average rank, so the
# many columns no tree used share the last places).
p = X.shape[1]
ranks = {name: rankdata(-values, method="average") for name, values in measures.items()}
print(f"{'':18s}" + "".join(f"{g:>24s}" for g in groups))
for name, rank in ranks.items():
    cells = "".join(f"{np.median(rank[cols]):>12.0f} (top100:{np.sum(rank[cols] <= 100):>2d})"
                    for cols in groups.values())
    print(f"{name:18s}{cells}")
print("(median rank of each group, and how many of its columns are in the top 100)")
mdi = measures["MDI"]
used = mdi[:p_genes] > 0
print(f"genes no tree split on: {np.sum(~used)}; median MDI of the others {np.median(mdi[:p_genes][used]):.2e}, "
      f"of the 3-level noise {np.median(mdi[groups['3-level noise']]):.2e}, "
      f"of the continuous noise {np.median(mdi[groups['continuous noise']]):.2e}")

# %%
# MDI ranks the median continuous-noise column about 140th of the 2,040 columns, far above the
# median gene (about 1,040th), and lets 5 of the 20 into its top 100: its median MDI is about
# five times that of a gene some tree used. The three-level noise, which offers no more
# thresholds than a gene, gets the MDI of such a gene; it ranks above the median gene only
# because 564 genes were never split on and share the last places. Scored on out-of-bag rows, the
# thresholds that fitted noise in-bag stop paying: MDI-oob and the permutation importance rank
# the median continuous-noise column below the median gene (about 1,800th). Three of those
# columns still reach their top 100, a reminder that a rank is not a test (for that, see
# :ref:`sphx_glr_auto_examples_plot_importance_pvalues.py`). The box plots show the whole
# distributions.
fig, axes = plt.subplots(1, 3, figsize=(10, 3.5), sharey=True)
for ax, (name, rank) in zip(axes, ranks.items()):
    ax.boxplot([rank[cols] for cols in groups.values()], showfliers=False)
    ax.set_xticks([1, 2, 3], list(groups), rotation=20)
    ax.set_title(name)
axes[0].set_ylabel("rank of 2,040 (1 = most important)")
axes[0].invert_yaxis()
fig.tight_layout()

# %%
# The top of the MDI-oob ranking
# ------------------------------
# :func:`pyinterp.plotting.plot_importances` draws MDI-oob with its standard error across
# trees beside MDI (unnormalised, in the same units) for the top features. The first genes'
# MDI-oob is several standard errors above zero; further down the list it is two or three.
ax = plotting.plot_importances(forest, X, y, top=15)
ax.figure.set_size_inches(7, 5)
ax.figure.tight_layout()
plt.show()
