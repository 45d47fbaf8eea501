"""Results documents (docs/results/*_results.md) made of marked sections, each rewritten by the bench part
that produced it; everything outside the markers is hand-written and kept byte-identical."""

from __future__ import annotations

import re
from pathlib import Path

# The first lines of a results document that does not exist yet, by file name.
HEADERS = {
    "dlbcd_results.md": "# DL-BCD and the sharpness test: reproduced experiments\n\n"
                        "Written by `bench/reproduce_dlbcd.py` (one section per part, rewritten when that part runs).\n",
    "lssfind_results.md": "# LSSFind / LSSrank reproduction (bench/reproduce_lssfind.py)\n\n"
                          "Written by `bench/reproduce_lssfind.py`, one section per part (part 3: one per "
                          "`--irf-settings`), each rewritten when that part runs. Spec: seed001-lssfind.md.\n",
    "partitioned_results.md": "# Partitioned ratio (issue 7): measured results\n",
}


def write_section(path: Path, name: str, lines: list[str] | str) -> None:
    """Replace the block `<!-- part name -->` ... `<!-- end name -->` of the file at path with lines
    (a list, or one text), appending the block if absent and creating the file if missing."""
    if isinstance(lines, str):
        lines = lines.rstrip("\n").split("\n")
    text = path.read_text() if path.exists() else HEADERS.get(path.name, f"# {path.stem}\n")
    begin, end = f"<!-- part {name} -->", f"<!-- end {name} -->"
    block = "\n".join([begin, *lines, end])
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    # a function replacement: the tables hold backslashes ("\\|") that a template string would expand
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
