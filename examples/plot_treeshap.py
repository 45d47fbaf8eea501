"""
TreeSHAP values and SHAP interaction values
===========================================

:func:`pyinterp.importance.shap_values` computes exact TreeSHAP values (Lundberg et al. 2020)
of a forest's prediction: for each row, how much each feature moves the prediction away from
the average one, with the parts adding up exactly to the prediction.
:func:`pyinterp.importance.shap_interaction_values` splits each of those further into a main
effect and pairwise interaction effects. This example uses Friedman's benchmark function,
whose answer is known: y = 10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4 + noise, with
three more features that do nothing. What to take from it: the values add up to the
predictions to rounding error, a beeswarm plot shows each feature's effect and its direction,
and the interaction values single out the one true interaction, x0 with x1.
"""

# %%
# Data and forest
# ---------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_friedman1

from pyinterp import RandomForestRegressor, importance

X, y = make_friedman1(n_samples=1000, n_features=8, noise=1.0, random_state=0)
names = np.array([f"x{k}" for k in range(X.shape[1])])
forest = RandomForestRegressor(n_estimators=200, max_features=0.5, min_samples_leaf=5, oob_score=True,
                               random_state=0).fit(X, y)
print(f"out-of-bag R^2 {forest.oob_score_:.3f}")

# %%
# SHAP values, and their additivity
# ---------------------------------
# Path-dependent TreeSHAP needs no background data (it averages over each split's children by
# the training rows that reached them). We explain 300 rows. ``expected`` is the forest's
# average prediction, and for every row expected + the sum of its SHAP values is the forest's
# prediction.
rows = X[:300]
phi, expected = importance.shap_values(forest, rows)
gap = np.abs(expected + phi.sum(axis=1) - forest.predict(rows)).max()
print(f"values {phi.shape}; expected value {expected:.3f}")
print(f"largest |expected + sum of SHAP values - prediction| over the rows: {gap:.2e}")
mean_abs = np.abs(phi).mean(axis=0)
print("mean |SHAP value| per feature:", "  ".join(f"{name} {v:.3f}" for name, v in zip(names, mean_abs)))

# %%
# The gap is at the level of float64 rounding: the decomposition is exact. The mean absolute
# values rank x3, x0, x1 and x4 first; x2's bowl-shaped effect comes next; the three features
# without effect (x5, x6, x7) get values near 0.
#
# A beeswarm plot
# ---------------
# One row of dots per feature, ordered by mean absolute SHAP value; each dot is one explained row,
# placed at its SHAP value and coloured by the feature's value there (blue low, red high).
# Dots are spread vertically where they crowd, as shap's beeswarm does.
order = np.argsort(mean_abs)
fig, ax = plt.subplots(figsize=(7, 4.5))
rng = np.random.default_rng(0)
for at, k in enumerate(order):
    values = phi[:, k]
    bins = np.round((values - values.min()) / (np.ptp(values) + 1e-12) * 60).astype(int)
    crowd = np.bincount(bins)[bins]  # dots sharing a horizontal bin: spread them more
    jitter = rng.uniform(-1, 1, len(values)) * np.minimum(0.4, 0.02 * crowd)
    dots = ax.scatter(values, at + jitter, c=rows[:, k], cmap="coolwarm", s=8)
ax.set_yticks(np.arange(len(order)), names[order])
ax.axvline(0, color="black", linewidth=0.6)
ax.set_xlabel("SHAP value (effect on the prediction)")
fig.colorbar(dots, ax=ax, label="feature value (low to high)")
ax.set_title("TreeSHAP values of 300 rows")
fig.tight_layout()

# %%
# Reading the plot: high x3 and x4 (red) push the prediction up and low ones push it down, in
# proportion, as linear effects do; for x2 both ends (red and blue) push it up and the middle
# (grey) down, the bowl of 20 (x2 - 0.5)^2. x0 and x1 also push up when high and down when low,
# but a high x0 adds anywhere from about 0.5 to 2: how much depends on x1, since the two enter
# as a product, sin(pi x0 x1). The interaction values make that explicit.
#
# SHAP interaction values
# -----------------------
# ``shap_interaction_values`` returns, per row, a p x p matrix: the main effects on the
# diagonal, half of each pair's interaction on either side of it, each row of the matrix
# adding up to that feature's SHAP value.
interactions = importance.shap_interaction_values(forest, rows)
print(f"interaction values {interactions.shape}; largest |row sum - SHAP value|: "
      f"{np.abs(interactions.sum(axis=2) - phi).max():.2e}")
strength = np.abs(interactions).mean(axis=0)
off = strength.copy()
np.fill_diagonal(off, 0)
a, b = np.unravel_index(np.argmax(off), off.shape)
print(f"strongest pair: {names[a]} x {names[b]} (mean |value| {off[a, b]:.3f}); "
      f"next strongest off-diagonal value {np.sort(off[np.triu_indices_from(off, 1)])[-2]:.3f}")

# %%
# The strongest pair is x0 x x1, the sine's product, nearly three times the next pair. The heat
# map of the mean absolute interaction values shows it as the one clear off-diagonal cell beside
# the main effects. The right-hand panel shows what it means for the rows: x0's SHAP value against
# x0, coloured by x1. For x0 above about 0.5 it is near 2 when x1 is high (red) and near 1 when
# x1 is low (blue): the same x0 is worth twice as much with a high x1.
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
image = left.imshow(strength, cmap="viridis")
left.set_xticks(np.arange(len(names)), names)
left.set_yticks(np.arange(len(names)), names)
left.set_title("mean absolute SHAP interaction value\n(main effects on the diagonal)")
fig.colorbar(image, ax=left)
dots = right.scatter(rows[:, 0], phi[:, 0], c=rows[:, 1], cmap="coolwarm", s=10)
right.set_xlabel("x0")
right.set_ylabel("SHAP value of x0")
right.set_title("x0's effect depends on x1")
fig.colorbar(dots, ax=right, label="x1")
fig.tight_layout()
plt.show()
