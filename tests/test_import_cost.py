"""`import pyinterp` loads none of the heavy optional modules: scikit-learn's ensemble module (the
scikit-learn forest adapter looks it up only when given such a forest), matplotlib, pandas, dask."""

import subprocess
import sys


def test_import_pyinterp_loads_no_heavy_optional_module():
    code = ("import sys, pyinterp; print(sorted({m.split('.')[0] + ('.ensemble' if m.startswith('sklearn.ensemble') else '')"
            " for m in sys.modules if m.startswith(('sklearn.ensemble', 'matplotlib', 'pandas', 'dask', 'shap', 'tqdm'))}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
