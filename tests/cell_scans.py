"""What the pair and triple scans' tests share: y as the scans sum it, and least squares on rows."""

import numpy as np


def rounded(y):
    """y as the scans sum it: 2^16 steps over its range."""
    centre = y.mean()
    scale = np.abs(y - centre).max()
    return np.rint((y - centre) / scale * 2**15) * scale / 2**15 + centre


def least_squares(design, y):
    """The residual sum of squares of y's least-squares fit on design's columns, and the fit."""
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return float(((y - design @ coef) ** 2).sum()), coef
