"""
LSSFind: Boolean interactions from depth-weighted prevalence
============================================================

:class:`pyinterp.LSSFind` finds interactions of the form "y is high when x0 is low and x1 is
low" from a random forest's decision paths (Behr et al., paper 001). Every leaf's path is read
as a set of signed features (x0- for a split it leaves to the left, x_0 <= t; x0+ to the
right), each leaf weighted by 2^-depth, and a signed set S's depth-weighted prevalence (DWP) is
the weight of the leaves whose path holds S. Under the locally spiky sparse (LSS) model, a true
interaction of k features has DWP exactly 2^-k and every other set less, so the find test
keeps the sets with 2^k DWP >= 1 - eta. This example runs it on data simulated from that
model, where the answer is known, then on noisier data. What to take from it: at a good
signal-to-noise ratio the minimal sets found are exactly the true interactions; when the
signal is weak the find test returns nothing (and says so), and ``mode="rank"`` still ranks
the true sets at or near the top.
"""

# %%
# Data from the LSS model
# -----------------------
# :func:`pyinterp.datasets.make_lss`: 50 features uniform on [0, 1]; y is 1 when x0 and x1
# are both below a threshold tau, 1 more when x2 and x3 are, plus noise at signal-to-noise
# ratio 5. The true interactions are x0- & x1- and x2- & x3-.
import warnings

import matplotlib.pyplot as plt

from pyinterp import LSSFind, plotting
from pyinterp.datasets import make_lss
from pyinterp.interactions import NoInteractionWarning, prevalent_sets

X, y, truth = make_lss(n_samples=1000, n_features=50, n_interactions=2, order=2, snr=5, random_state=0)
print("true interactions:", truth)

# %%
# The find test
# -------------
# LSSFind fits 100 trees that consider every feature at each split (the paper's setting), mines
# every signed set of up to ``max_order`` features whose DWP is high enough, and keeps those
# passing the test. ``minimal_`` holds the passing sets with no passing subset: the basic
# interactions.
lss = LSSFind(max_order=3, random_state=0).fit(X, y)
print("minimal sets found:", lss.minimal_.features)
print("equal to the truth:", sorted(lss.minimal_.features) == sorted(truth))
columns = ["interaction", "order", "dwp", "adjusted_dwp"]
print(lss.interactions_.to_frame()[columns].to_string(index=False))
print("DWP of the true sets:", lss.dwp(truth))

# %%
# Both true interactions pass with DWP 0.25 = 2^-2, so 2^k DWP (``adjusted_dwp``) is 1, the
# most Theorem 1 allows; no other set passes. The figure places every mined set by its order
# and DWP against the bound 2^-k for k features (solid) and the test's (1 - eta) 2^-k (dashed); the
# minimal sets are the stars.
ax = plotting.plot_lssfind(lss)
ax.figure.set_size_inches(7, 4.5)

# %%
# The circles closest to the bounds are sets that nearly pass.
# :func:`~pyinterp.interactions.prevalent_sets` mines every set above a DWP (here 0.1) from the
# same paths; here they are ordered by 2^k DWP:
near = prevalent_sets(lss.paths_, min_dwp=0.1, max_order=3).to_frame()
print(near.sort_values("adjusted_dwp", ascending=False)[columns].head(8).to_string(index=False))

# %%
# Below the two rules come partial or padded views of them: a single feature of a rule (x2+ and
# x2-, each in half the paths' weight), a rule plus one more feature (x0- & x1- & x2-), and
# x0+ & x2+, a feature of each rule with the opposite sign: where both rules fail, y is low, so
# the forest's paths isolate that region too. The find test's bar of 0.99 leaves them out, and
# minimality would drop the padded ones anyway.
#
# Weaker signal: the find test and the rank mode
# ----------------------------------------------
# With half the rows and a signal-to-noise ratio of 1, noise splits cut into the true sets'
# paths and no set reaches the test's bar. LSSFind then warns with a
# :class:`~pyinterp.interactions.NoInteractionWarning` that names the closest set. LSSrank
# (``mode="rank"``) orders every mined set by rho = log2(DWP) / k instead.
X, y, truth = make_lss(n_samples=500, n_features=50, n_interactions=2, order=2, snr=1, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", NoInteractionWarning)
    weak = LSSFind(max_order=3, random_state=0).fit(X, y)
print(f"find mode: {len(weak.interactions_)} sets found")
for warning in caught:
    print(f"{warning.category.__name__}: {str(warning.message).split(' Either')[0]}")
ranked = LSSFind(max_order=3, mode="rank", random_state=0).fit(X, y)
table = ranked.interactions_.to_frame()
table["true"] = [f in truth for f in ranked.interactions_.features]
print(table[columns + ["rho", "true"]].head(6).to_string(index=False))

# %%
# The rank mode puts x0- & x1- first and x2- & x3- third. The set between them, x0+ & x2- &
# x3-, adds a feature to the second rule; sets of that kind are what to expect right below a
# true rule. The two panels compare the mined sets of the two fits: at SNR 1 the true pairs'
# DWP drops below the dashed line.
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
plotting.plot_lssfind(lss, ax=left)
left.set_title("SNR 5, n = 1000: " + left.get_title())
plotting.plot_lssfind(ranked, ax=right)
right.set_title("SNR 1, n = 500: " + right.get_title())
fig.tight_layout()
plt.show()
