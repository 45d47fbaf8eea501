"""The one matplotlib setup of bench: a file backend, figures saved and closed."""

from __future__ import annotations


def pyplot():
    """matplotlib.pyplot on the Agg backend (raises ImportError without matplotlib: pip install '.[plot]')."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path, dpi=120, rect=None, **savefig_kw):
    """Lay out (within rect, the figure fraction left to the axes), write and close fig."""
    fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=dpi, **savefig_kw)
    pyplot().close(fig)
