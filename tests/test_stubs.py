"""The shipped _core.pyi declares exactly what the extension exports."""

import re
from pathlib import Path

import pyinterp
from pyinterp import _core


def test_stub_names_match_extension():
    # The package's own stub: in a wheel it is the shipped one beside the extension; an editable
    # install builds the extension elsewhere and reads the package from the source tree.
    stub = (Path(pyinterp.__file__).parent / "_core.pyi").read_text()
    declared = set(re.findall(r"^(?:def|class) (\w+)", stub, flags=re.M))
    exported = {name for name in dir(_core) if not name.startswith("_")}
    assert declared == exported
