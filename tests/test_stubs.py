"""The shipped _core.pyi declares exactly what the extension exports."""

import re
from pathlib import Path

from pyinterp import _core


def test_stub_names_match_extension():
    stub = (Path(_core.__file__).parent / "_core.pyi").read_text()
    declared = set(re.findall(r"^(?:def|class) (\w+)", stub, flags=re.M))
    exported = {name for name in dir(_core) if not name.startswith("_")}
    assert declared == exported
