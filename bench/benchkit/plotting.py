"""The one matplotlib setup of bench: a file backend, figures saved and closed."""

from __future__ import annotations


def pyplot():
    """matplotlib.pyplot on the Agg backend (raises ImportError without matplotlib: pip install '.[plot]')."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path, dpi=120, **savefig_kw):
    """Lay out, write and close fig."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi, **savefig_kw)
    pyplot().close(fig)
