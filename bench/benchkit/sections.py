"""Results documents (docs/*_results.md) made of marked sections, each rewritten by the bench part
that produced it; everything outside the markers is hand-written and kept byte-identical."""

from __future__ import annotations

import re
from pathlib import Path


def write_section(path: Path, name: str, lines: list[str] | str, header: str) -> None:
    """Replace the block `<!-- part name -->` ... `<!-- end name -->` of the file at path with lines
    (a list, or one text), appending the block if absent and creating the file with header if missing."""
    if isinstance(lines, str):
        lines = lines.rstrip("\n").split("\n")
    text = path.read_text() if path.exists() else header
    begin, end = f"<!-- part {name} -->", f"<!-- end {name} -->"
    block = "\n".join([begin, *lines, end])
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    # a function replacement: the tables hold backslashes ("\\|") that a template string would expand
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
