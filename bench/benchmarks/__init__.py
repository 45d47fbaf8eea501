"""The asv suites. They share bench/benchkit with the driver scripts; asv imports this package
without bench/ on sys.path, so it is added here (a script run as `python bench/x.py` has it already)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
