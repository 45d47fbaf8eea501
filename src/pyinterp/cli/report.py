"""What a command shows: the lines it prints, its tables and figures; written with --out as one CSV
per table, one PNG per figure and a self-contained HTML page (figures embedded as base64 PNG).
Standard library only, so `pyinterp demo --out DIR` needs no pandas."""

from __future__ import annotations

import base64
import csv
import html
import io
from pathlib import Path
from typing import NamedTuple

HTML_ROWS = 100  # rows of a table shown on the page; the CSV file holds them all


class Table(NamedTuple):
    name: str  # the CSV file's stem
    title: str
    header: list
    rows: list  # tuples, one value per header column


class Report:
    """drawing: whether figures are drawn (only a written report shows them)."""

    def __init__(self, title, drawing=True):
        self.title, self.drawing = title, drawing
        self.lines, self.tables, self.figures = [], [], []

    def say(self, text=""):
        """Print a line and keep it for the page."""
        print(text, flush=True)
        self.lines.append(text)

    def add_table(self, name, title, header, rows):
        self.tables.append(Table(name, title, list(header), [tuple(r) for r in rows]))

    def add_figure(self, name, title, figure):
        """A matplotlib Figure, kept as PNG bytes."""
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        self.figures.append((name, title, buffer.getvalue()))

    def write(self, out) -> list:
        """Every table as CSV, every figure as PNG and report.html into the folder ``out`` (created
        if needed); returns the paths written."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for table in self.tables:
            path = out / f"{table.name}.csv"
            with open(path, "w", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(table.header)
                writer.writerows(table.rows)  # floats as repr: read back, they are the same numbers
            written.append(path)
        for name, _, png in self.figures:
            path = out / f"{name}.png"
            path.write_bytes(png)
            written.append(path)
        path = out / "report.html"
        path.write_text(self.html(), encoding="utf-8")
        return [*written, path]

    def html(self) -> str:
        e = html.escape
        parts = [f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{e(self.title)}</title>",
                 "<style>body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}"
                 "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#eee}"
                 "td:first-child,th:first-child{text-align:left}pre{background:#f6f6f6;padding:1em}</style>"
                 f"</head><body>\n<h1>{e(self.title)}</h1>\n<pre>{e(chr(10).join(self.lines))}</pre>"]
        for name, title, png in self.figures:
            data = base64.b64encode(png).decode("ascii")
            parts.append(f"<h2>{e(title)}</h2>\n<img alt='{e(title)}' src='data:image/png;base64,{data}'> "
                         f"<p>{e(name)}.png</p>")
        for table in self.tables:
            shown = table.rows[:HTML_ROWS]
            count = (f"all {len(table.rows)} rows" if len(shown) == len(table.rows)
                     else f"the first {len(shown)} of {len(table.rows)} rows")
            parts.append(f"<h2 id='{e(table.name)}'>{e(table.title)}</h2>\n<p>{count}; {e(table.name)}.csv holds "
                         "them all.</p>\n<table><tr>" + "".join(f"<th>{e(str(h))}</th>" for h in table.header) + "</tr>")
            parts.extend("<tr>" + "".join(f"<td>{e(_cell(v))}</td>" for v in row) + "</tr>" for row in shown)
            parts.append("</table>")
        parts.append("</body></html>\n")
        return "\n".join(parts)


def _cell(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
