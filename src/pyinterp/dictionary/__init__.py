"""Complete dictionary learning by l1 minimisation (thesis 000, chapters 3-5).

Signals are the rows x_i of X (n_samples x p); a dictionary D is p x p with unit-norm columns (the
atoms) and codes a signal by its coefficients beta = D^{-1} x. DL-BCD (Algorithm 2, ``dlbcd.py``)
minimises

    f(D) = (1/n) sum_i sum_h min(``|beta_ih|``, tau)

by block coordinate descent on the rows of D^{-1}, each a strongly convex problem solved by BFGS;
f never increases (Proposition 5.2.2). The sharpness test (Algorithm 1, ``sharpness.py``) decides
whether D is a sharp local minimum of the l1 objective, which singles out the reference dictionary
(Theorem 4.2.1).
"""

from .dlbcd import DLBCD
from .sharpness import sharpness_test

__all__ = ["DLBCD", "sharpness_test"]
