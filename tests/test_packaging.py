"""The installed distribution: its name, one version everywhere, the command line entry point."""

import importlib.metadata as metadata
import re
from pathlib import Path

import pyinterp

DIST = "interptrees"  # "pyinterp" on PyPI is an unrelated project


def test_distribution_version_is_the_package_version():
    assert metadata.version(DIST) == pyinterp.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", pyinterp.__version__)


def test_distribution_provides_the_pyinterp_package_and_command():
    dist = metadata.distribution(DIST)
    assert dist.metadata["Name"] == DIST
    scripts = {e.name: e.value for e in dist.entry_points if e.group == "console_scripts"}
    assert scripts == {"pyinterp": "pyinterp.cli:main"}
    assert dist.metadata["License-Expression"] == "BSD-3-Clause"


def test_typing_marker_ships_beside_the_package():
    assert (Path(pyinterp.__file__).parent / "py.typed").is_file()
