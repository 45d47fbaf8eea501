"""`import pyinterp` loads none of the heavy optional modules: scikit-learn's ensemble module (the
scikit-learn forest adapter looks it up only when given such a forest), matplotlib, dask, shap, tqdm.
(pandas is not on the list: scikit-learn's validation imports it whenever it is installed.)"""

import subprocess
import sys


def test_import_pyinterp_loads_no_heavy_optional_module():
    code = ("import sys, pyinterp; print(sorted({m.split('.')[0] + ('.ensemble' if m.startswith('sklearn.ensemble') else '')"
            " for m in sys.modules if m.startswith(('sklearn.ensemble', 'matplotlib', 'dask', 'shap', 'tqdm'))}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
