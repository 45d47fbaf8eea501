"""The implementations pyinterp is measured against. Optional ones (ranger via Rscript, pyfim,
mlxtend, SPAMS, shap, LightGBM) are looked up at run time; a driver reports a missing one as not
installed and goes on without it.

The plain-Python reference implementations live in tests/ (tests/reference_*.py), where pytest
checks them; ``reference`` is the one place bench puts tests/ on sys.path to load them.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from .paths import TESTS


def reference(name):
    """The module tests/<name>.py (e.g. "reference_interactions")."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    return importlib.import_module(name)


def optional(module):
    """The imported module, or None when it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def not_installed(what, pip):
    return f"not installed (pip install {pip})" if pip else f"{what} not installed"


# ---- ranger (R), through Rscript -------------------------------------------------------------------

RANGER_SCRIPT = r"""
suppressMessages(library(ranger)); a <- commandArgs(TRUE)
d <- read.csv(a[1]); test <- read.csv(a[2]); cls <- a[3] == "classification"
if (cls) { d$y <- factor(d$y); test$y <- factor(test$y, levels = levels(d$y)) }
t0 <- Sys.time()
fit <- ranger(dependent.variable.name = "y", data = d, num.trees = as.integer(a[4]), mtry = as.integer(a[5]),
              min.node.size = 1, num.threads = 2, seed = 0)
fit_s <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
t0 <- Sys.time()
pred <- predict(fit, test, num.threads = 2)$predictions
predict_s <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
score <- if (cls) mean(pred == test$y) else 1 - sum((test$y - pred)^2) / sum((test$y - mean(test$y))^2)
cat(fit_s, predict_s, score, "\n")
"""


def ranger_available():
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(ranger)"], capture_output=True).returncode == 0


def run_ranger(Xtr, ytr, Xte, yte, task, n_trees, mtry, tmp):
    """ranger with 2 threads in its own Rscript process: fit_s, predict_s, peak_mb (max RSS), score."""
    header = ",".join([f"x{j}" for j in range(Xtr.shape[1])] + ["y"])
    paths = []
    for name, X, y in (("train", Xtr, ytr), ("test", Xte, yte)):
        paths.append(Path(tmp) / f"{name}.csv")
        np.savetxt(paths[-1], np.column_stack([X, y]), delimiter=",", comments="", header=header)
    script = Path(tmp) / "ranger.R"
    script.write_text(RANGER_SCRIPT)
    out = subprocess.run(["/usr/bin/time", "-v", "Rscript", str(script), *map(str, paths), task, str(n_trees), str(mtry)],
                         capture_output=True, text=True, check=True)
    peak_kb = next(int(line.split()[-1]) for line in out.stderr.splitlines() if "Maximum resident" in line)
    fit_s, predict_s, score = map(float, out.stdout.split()[-3:])
    return dict(fit_s=fit_s, predict_s=predict_s, peak_mb=peak_kb / 1024, score=score)


# ---- frequent itemsets: mlxtend (pyfim is one call: optional("fim").fpgrowth) -----------------------------------------------


def mlxtend_itemsets(transactions, min_count):
    """(seconds of the mining alone, {sorted itemset: count}, seconds of the one-hot encoding) by
    mlxtend's fpgrowth, or None when mlxtend (or pandas) is not installed."""
    try:
        import pandas as pd
        from mlxtend.frequent_patterns import fpgrowth
        from mlxtend.preprocessing import TransactionEncoder
    except ImportError:
        return None
    n = len(transactions)
    start = time.perf_counter()
    encoder = TransactionEncoder()
    onehot = pd.DataFrame(encoder.fit_transform(transactions), columns=encoder.columns_)
    t_encode = time.perf_counter() - start
    start = time.perf_counter()
    # (count - 0.5) / n: mlxtend compares fractions and takes ceil(min_support * n)
    frame = fpgrowth(onehot, min_support=(min_count - 0.5) / n, use_colnames=True)
    t_mine = time.perf_counter() - start
    out = {tuple(sorted(int(i) for i in s)): int(round(v * n)) for s, v in zip(frame["itemsets"], frame["support"])}
    return t_mine, out, t_encode


# ---- dictionary learning: scikit-learn and SPAMS ------------------------------------------------------


def sklearn_dictionary(X, p, seed, lam):
    """scikit-learn DictionaryLearning (coordinate descent, 200 iterations), atoms as columns."""
    from sklearn.decomposition import DictionaryLearning

    model = DictionaryLearning(n_components=p, alpha=lam, max_iter=200, fit_algorithm="cd",
                               transform_algorithm="lasso_cd", random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lasso ConvergenceWarnings
        return model.fit(X).components_.T


def spams_dictionary(X, p, seed, lam):
    """SPAMS trainDL (1000 iterations, one thread), atoms as columns."""
    import spams

    np.random.seed(seed)
    return spams.trainDL(np.asfortranarray(X.T), K=p, lambda1=lam, iter=1000, numThreads=1, verbose=False)


# ---- iRF: the peers' settings in IterativeRandomForest's terms ------------------------------------------

# "r": the estimator's defaults, R iRF 3.0's. "paper": Python irf run_iRF(K=7, B=10, M=4, max_depth=2,
# num_splits=2, propn_n_samples=0.2, n_estimators_bootstrap=5, signed=True, bin_class_type=None) with
# scikit-learn's RandomForestRegressor defaults (100 trees, all features). Its bootstraps use the
# importance of the 7th forest: the weights the 8th one is fitted with here.
IRF_SETTINGS = {
    "r": dict(signed=True),
    "paper": dict(signed=True, n_iterations=8, iteration="last", n_estimators=100, max_features=None,
                  weight_floor=0.0, n_bootstraps=10, bootstrap_n_estimators=5, bootstrap_max_samples=0.2,
                  rit_n_trees=4, rit_depth=2, rit_n_children=2.0, rit_root_sets=1, rit_report="nodes",
                  rit_min_size=1, rit_leaves="all", rit_leaf_weight="size", first_split=False, style="pyinterp"),
}
