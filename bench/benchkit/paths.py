"""Where bench reads and writes."""

from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
DOCS = ROOT / "docs"  # results documents and their figures
TESTS = ROOT / "tests"  # the plain-Python reference implementations the peers load
RESULTS_DATA = BENCH / "results_data"  # tracked raw outcomes (bench/results/ is asv's and ignored)
SHARED_DATA = ROOT.parent / "shared" / "data"  # real data sets beside the checkout, absent on most machines
