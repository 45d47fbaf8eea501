"""Where bench reads and writes."""

import os
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
DOCS = ROOT / "docs" / "results"  # results documents and their figures
TESTS = ROOT / "tests"  # the plain-Python reference implementations the peers load
RESULTS_DATA = BENCH / "results_data"  # tracked raw outcomes (bench/results/ is asv's and ignored)
# The project's shared folder (data/ real data sets, specs/ the papers' specs): $PYINTERP_SHARED, by
# default the folder `shared` beside the checkout; absent on most machines.
SHARED = Path(os.environ.get("PYINTERP_SHARED") or ROOT.parent / "shared").expanduser()
SHARED_DATA = SHARED / "data"


def absent(path) -> str:
    """What to print when a file or folder of SHARED is not there."""
    return f"{path} is absent (set PYINTERP_SHARED to the folder that holds data/; default {ROOT.parent / 'shared'})"
