"""What a command shows: the lines it prints, its tables and figures; written with --out as one CSV
per table, one PNG per figure and a self-contained HTML page (figures embedded as base64 PNG, a
short inline script to sort and search the tables: nothing is fetched when it is viewed).
Standard library only, so `pyinterp demo --out DIR` needs no pandas."""

from __future__ import annotations

import base64
import csv
import html
import io
from pathlib import Path
from typing import NamedTuple

from .glossary import explain

# Rows of a table on the page: at most HTML_ROWS, and no more than HTML_BYTES of HTML (a page of
# several MB is slow to open); the CSV file holds them all.
HTML_ROWS = 1000
HTML_BYTES = 250_000


class Table(NamedTuple):
    name: str  # the CSV file's stem
    title: str
    header: list
    rows: list  # tuples, one value per header column


class Report:
    """drawing: whether figures are drawn (only a written report shows them). about: (name, text)
    pairs the page opens with: the version, command line, seed, input files and date of the run."""

    def __init__(self, title, drawing=True, about=()):
        self.title, self.drawing, self.about = title, drawing, list(about)
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
        about = "".join(f"<dt>{e(name)}</dt><dd>{e(text)}</dd>" for name, text in self.about)
        contents = [("log", "log"), *((f"figure-{n}", f"{n}.png") for n, _, _ in self.figures),
                    *((t.name, f"{t.name}.csv") for t in self.tables)]
        parts = [(f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
                  f"<meta name='viewport' content='width=device-width'><title>{e(self.title)}</title>"),
                 f"<style>{STYLE}</style></head><body>\n<h1>{e(self.title)}</h1>",
                 f"<dl class='about'>{about}</dl>" if about else "",
                 "<p>Contents: " + " · ".join(f"<a href='#{e(i)}'>{e(t)}</a>" for i, t in contents) + "</p>",
                 f"<h2 id='log'>What the command printed</h2>\n<pre>{e(chr(10).join(self.lines))}</pre>"]
        for name, title, png in self.figures:
            data = base64.b64encode(png).decode("ascii")
            parts.append(f"<h2 id='figure-{e(name)}'>{e(title)}</h2>\n<img alt='{e(title)}' "
                         f"src='data:image/png;base64,{data}'>\n<p>{e(name)}.png</p>")
        parts.extend(_table_html(table) for table in self.tables)
        parts.append(f"<script>{SCRIPT}</script>\n</body></html>\n")
        return "\n".join(p for p in parts if p)


def _table_html(table) -> str:
    e = html.escape
    text = {k for row in table.rows[:HTML_ROWS] for k, v in enumerate(row) if isinstance(v, str)}
    rows, size = [], 0
    for row in table.rows[:HTML_ROWS]:
        cells = "".join(f"<td class='t'>{e(v)}</td>" if k in text else f"<td>{e(_cell(v))}</td>"
                        for k, v in enumerate(row))
        size += len(cells) + 9
        if size > HTML_BYTES and rows:
            break
        rows.append(f"<tr>{cells}</tr>")
    total, csv_file = len(table.rows), f"{table.name}.csv"
    count = (f"No rows ({csv_file} holds the header only)." if not total else
             f"One row; {csv_file} holds it too." if total == 1 else
             f"All {total} rows; {csv_file} holds them all." if len(rows) == total else
             f"The first {len(rows)} of {total} rows (sorting and search act on these); {csv_file} holds them all.")
    explained = ((h, explain(table.name, h)) for h in table.header)
    glossary = "".join(f"<dt>{e(str(h))}</dt><dd>{e(line)}</dd>" for h, line in explained if line)
    return (f"<h2 id='{e(table.name)}'>{e(table.title)}</h2>\n<p>{e(count)}</p>\n"
            "<div class='box'><table><thead><tr>"
            + "".join(f"<th class='t'>{e(str(h))}</th>" if k in text else f"<th>{e(str(h))}</th>"
                      for k, h in enumerate(table.header))
            + "</tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>\n"
            + (f"<dl class='glossary'>{glossary}</dl>" if glossary else ""))


def _cell(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


# Text cells wrap anywhere (rules, long names), numbers never; a table wider than the page scrolls in
# its box, whose header stays in view.
STYLE = """
body{font-family:sans-serif;margin:1.5em auto;padding:0 1.5em;max-width:80em;line-height:1.4}
h1,h2,p,dd{overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em}
dt{font-family:monospace;font-weight:bold}
dd{margin:0}
dl.glossary{font-size:.9em;color:#333}
pre{background:#f6f6f6;padding:1em;white-space:pre-wrap;overflow-wrap:anywhere}
img{max-width:100%;height:auto}
.box{max-height:36em;overflow:auto;border:1px solid #ccc}
table{border-collapse:collapse;font-size:.9em}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right;white-space:nowrap}
th.t{text-align:left}
td.t{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:15em}
th{background:#eee;position:sticky;top:0;cursor:pointer}
th[aria-sort=ascending]::after{content:" \\25B2";color:#000}
th[aria-sort=descending]::after{content:" \\25BC";color:#000}
input[type=search]{width:24em;margin:.3em .5em .3em 0}
"""

# Sorting (click a header, again to reverse; numbers as numbers, nan last) and search (the words
# typed, each in some cell of the row) over the rows on the page.
SCRIPT = """
const number = text => {
  const t = text.trim().toLowerCase();
  return t === "inf" ? Infinity : t === "-inf" ? -Infinity : t === "" || t === "nan" ? NaN : Number(t);
};
for (const box of document.querySelectorAll(".box")) {
  const body = box.querySelector("tbody"), rows = [...body.rows];
  if (!rows.length) continue;
  const cells = rows.map(row => [...row.cells].map(cell => cell.textContent));
  const search = document.createElement("input"), count = document.createElement("span");
  search.type = "search";
  search.placeholder = "Search these rows (every word)";
  const hint = "Click a column's name to sort by it, again to reverse.";
  count.textContent = hint;
  box.before(search, count);
  search.oninput = () => {
    const words = search.value.toLowerCase().split(/\\s+/).filter(Boolean);
    let shown = 0;
    rows.forEach((row, i) => {
      row.hidden = !words.every(w => cells[i].some(c => c.toLowerCase().includes(w)));
      shown += !row.hidden;
    });
    count.textContent = words.length ? `${shown} of ${rows.length} rows match` : hint;
  };
  const heads = [...box.querySelectorAll("th")];
  heads.forEach((th, k) => {
    const numeric = cells.every(c => !Number.isNaN(number(c[k])) || /^\\s*(nan)?\\s*$/i.test(c[k]));
    const key = i => numeric ? number(cells[i][k]) : cells[i][k];
    th.tabIndex = 0;
    th.title = "Click to sort";
    th.onkeydown = event => { if (event.key === "Enter") th.click(); };
    th.onclick = () => {
      const up = th.getAttribute("aria-sort") !== "ascending";
      heads.forEach(h => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      const order = rows.map((_, i) => i).sort((a, b) => {
        const x = key(a), y = key(b);
        if (!numeric) return x.localeCompare(y, undefined, {numeric: true}) * (up ? 1 : -1);
        if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) - Number.isNaN(y);
        return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
      });
      body.append(...order.map(i => rows[i]));
    };
  });
}
"""
