"""The report's figures, from pyinterp.plotting, drawn on matplotlib Figures that pyplot never sees
(no window, no global state). Without matplotlib the report holds the tables and says why."""

from __future__ import annotations


def draw(report, name, title, plot, *args, panels=False, size=(7.0, 4.5), **kwargs):
    """``plot(*args, ax=...)`` (``fig=`` for a plot of several ``panels``) into the report as ``name``.png,
    when the report is written (a figure can take longer than the fit)."""
    if not report.drawing:
        return
    try:
        from matplotlib.figure import Figure
    except ImportError:
        if not any(line.startswith("Figures skipped") for line in report.lines):
            report.say("Figures skipped: matplotlib is not installed (pip install 'interptrees[plot]'); the report "
                       "holds the tables.")
        return
    figure = Figure(figsize=size, layout="constrained")
    plot(*args, **kwargs, **({"fig": figure} if panels else {"ax": figure.subplots()}))
    report.add_figure(name, title, figure)
