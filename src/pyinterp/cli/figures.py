"""The report's figures, from pyinterp.plotting, drawn on matplotlib Figures that pyplot never sees
(no window, no global state), grown until no two labels overlap. Without matplotlib the report
holds the tables and says why."""

from __future__ import annotations

import itertools
import textwrap

from ..plotting._base import LABEL_WIDTH, shortened

# Times a figure is grown to part overlapping labels, and the size it stops at (inches).
GROWTHS = 4
LARGEST = (16.0, 24.0)


def draw(report, name, title, plot, *args, panels=False, size=(7.0, 4.5), labels=None, wrap=None, **kwargs):
    """``plot(*args, ax=...)`` (``fig=`` for a plot of several ``panels``) into the report as ``name``.png,
    when the report is written (a figure can take longer than the fit), grown until no labels overlap.
    labels: the whole labels of the first Axes' y ticks, in their order (the plots shorten an
    interaction's label as a whole, which can drop its last features; here they are in lines of at
    most LABEL_WIDTH characters). wrap: characters a line of the Axes' texts (the network's node
    names, which would otherwise squeeze its circle)."""
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
    if labels is not None:
        ax = figure.axes[0]
        ax.set_yticks(ax.get_yticks(), [_lines(label) for label in labels])
    if wrap is not None:
        for text in (t for ax in figure.axes for t in ax.texts):
            text.set_text(textwrap.fill(text.get_text(), wrap))
    spread(figure)
    report.add_figure(name, title, figure)


def _lines(label) -> str:
    """An interaction's label in lines of at most LABEL_WIDTH characters, each feature shortened to
    fit one."""
    lines = []
    for feature in label.split(" & "):
        feature = shortened(feature)
        if lines and len(lines[-1]) + len(feature) + 3 <= LABEL_WIDTH:
            lines[-1] += f" & {feature}"
        else:
            lines.append(feature)
    return " &\n".join(lines)


def overlaps(figure) -> list:
    """The pairs of texts (as strings) that overlap once the figure is drawn: tick labels of one axis,
    or texts (annotations) of one Axes."""
    return [(a.get_text(), b.get_text()) for a, b, _, _ in _overlapping(figure)]


def spread(figure):
    """Grow the figure, up to LARGEST, until no two labels overlap: text keeps its size in points, so
    a larger figure parts them. Each pair asks the growth that parts it along the cheaper direction;
    a growth that parts none (texts at a fixed offset from one point) is undone."""
    found = _overlapping(figure)
    for _ in range(GROWTHS):
        if not found:
            return
        wide = tall = 1.0
        for _, _, a, b in found:
            x, y = _parting(a.x0, a.x1, b.x0, b.x1), _parting(a.y0, a.y1, b.y0, b.y1)
            wide, tall = (max(wide, x), tall) if x < y else (wide, max(tall, y))
        width, height = size = tuple(figure.get_size_inches())
        grown = (min(width * min(wide, 3.0), LARGEST[0]), min(height * min(tall, 3.0), LARGEST[1]))
        if grown == size:
            return
        figure.set_size_inches(grown)
        before, found = found, _overlapping(figure)
        if len(found) >= len(before):
            figure.set_size_inches(size)
            return


def _overlapping(figure) -> list:
    """(text, text, box, box) of each two overlapping texts, drawn by Agg."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    found = []
    for ax in figure.axes:
        for group in (_tick_labels(ax.xaxis), _tick_labels(ax.yaxis), ax.texts):
            # Text's own extent: an annotation's would hold its arrow
            boxes = [(t, Text.get_window_extent(t, renderer)) for t in group if t.get_visible() and t.get_text()]
            found += [(a, b, box_a, box_b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2)
                      if box_a.overlaps(box_b)]
    return found


def _parting(a0, a1, b0, b1) -> float:
    """The growth of the distance between two boxes' centres (along one direction) that parts them,
    with a tenth to spare; inf for boxes on one centre."""
    distance = abs((a0 + a1) - (b0 + b1)) / 2
    needed = ((a1 - a0) + (b1 - b0)) / 2
    return 1.1 * needed / distance if distance > 0 else float("inf")


def _tick_labels(axis) -> list:
    """The axis' major tick labels that are drawn: those of ticks inside the view."""
    transform = axis.get_transform()
    low, high = sorted(transform.transform(axis.get_view_interval()))
    slack = 1e-10 * (high - low)
    inside = [t for t in axis.get_major_ticks() if low - slack <= transform.transform(t.get_loc()) <= high + slack]
    return [label for tick in inside for label in (tick.label1, tick.label2) if label.get_visible()]
