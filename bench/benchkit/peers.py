"""The implementations pyinterp is measured against. Optional ones (ranger via Rscript, ydf,
LightGBM, xgboost, pyfim, mlxtend, SPAMS, shap) are looked up at run time; a driver reports a
missing one as not installed and goes on without it.

The plain-Python reference implementations live in tests/ (tests/reference_*.py), where pytest
checks them; ``reference`` is the one place bench puts tests/ on sys.path to load them.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

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


# ---- random forests: compare_forest.py's peers -------------------------------------------------------
# Each forest_<peer>(Xtr, ytr, Xte, task, n_trees, mtry) fits with 2 threads and returns fit_s,
# predict_s, pred (class codes 0..K-1 for classification, as ytr holds them) and input (what the
# peer was given). Every forest is a fully grown random forest: bootstrap rows, mtry features drawn
# at every node, leaves down to one row. compare_forest.py's docstring gives each peer's caveats.

BAG = 0.632  # LightGBM's and xgboost's row share per tree, drawn without replacement (a bootstrap's distinct share)
HIST_CACHE_MB = 1024  # histogram cache given to LightGBM (histogram_pool_size) and xgboost (max_cached_hist_node)
LGBM_MAX_LEAVES = 131072  # LightGBM's ceiling on num_leaves
FOREST_PIP = {"sklearn": "scikit-learn", "ydf": "ydf", "lightgbm": "lightgbm", "xgboost": "xgboost"}


def forest_peer_missing(name):
    """None when the forest peer `name` can run here, else the line saying it is not installed."""
    if name == "ranger":
        return None if ranger_available() else "ranger: not installed (apt-get install r-base-core r-cran-ranger)"
    return None if importlib.util.find_spec(name) else f"{name}: {not_installed(name, FOREST_PIP[name])}"


def has_nan(X):
    """Whether a dense float X holds NaN (by blocks of rows: no full-size temporary)."""
    return X.dtype.kind == "f" and any(np.isnan(X[i:i + 1024]).any() for i in range(0, X.shape[0], 1024))


def describe(X):
    """'CSR float32', 'dense int8', 'dense float32 with NaN', ..."""
    if sp.issparse(X):
        return f"{X.format.upper()} {X.dtype}"
    return f"dense {X.dtype}" + (" with NaN" if has_nan(X) else "")


def _timed(fit, predict):
    start = time.perf_counter()
    model = fit()
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    pred = predict(model)
    return dict(fit_s=fit_s, predict_s=time.perf_counter() - start, pred=np.asarray(pred))


def forest_sklearn(Xtr, ytr, Xte, task, n_trees, mtry, module="sklearn.ensemble"):
    """scikit-learn's forests (or, by module="pyinterp", pyinterp's): bootstrap, max_features=mtry,
    min_samples_leaf=1; NaN and CSR taken as they are."""
    mod = importlib.import_module(module)
    Forest = mod.RandomForestRegressor if task == "regression" else mod.RandomForestClassifier
    model = Forest(n_estimators=n_trees, max_features=mtry, n_jobs=2, random_state=0)
    return dict(_timed(lambda: model.fit(Xtr, ytr), lambda m: m.predict(Xte)), input=describe(Xtr))


def forest_ydf(Xtr, ytr, Xte, task, n_trees, mtry):
    """ydf's RandomForestLearner: bootstrap with replacement, num_candidate_attributes=mtry, no depth
    limit, min_examples=1, exact thresholds (its default), no out-of-bag evaluation. Dense input only;
    NaN is imputed by ydf with the column's mean (its missing_value_policy GLOBAL_IMPUTATION)."""
    import ydf

    ydf.verbose(0)
    given = describe(Xtr)
    if sp.issparse(Xtr):
        Xtr, Xte = Xtr.toarray(), Xte.toarray()
        given = f"dense {Xtr.dtype} (densified: ydf takes no sparse input)"
    elif "NaN" in given:
        given += " (ydf imputes the column mean)"
    learner = ydf.RandomForestLearner(
        label="y", task=ydf.Task.REGRESSION if task == "regression" else ydf.Task.CLASSIFICATION,
        num_trees=n_trees, num_candidate_attributes=mtry, max_depth=-1, min_examples=1,
        bootstrap_training_dataset=True, sampling_with_replacement=True, bootstrap_size_ratio=1.0,
        compute_oob_performances=False, num_threads=2, random_seed=0)

    def predict(model):
        out = model.predict({"x": Xte})
        if task == "regression":
            return out
        classes = np.asarray(model.label_classes()).astype(int)
        return classes[(out >= 0.5).astype(int)] if out.ndim == 1 else classes[out.argmax(axis=1)]

    return dict(_timed(lambda: learner.train({"x": Xtr, "y": ytr}), predict), input=given)


def forest_lightgbm(Xtr, ytr, Xte, task, n_trees, mtry):
    """LightGBM in random-forest mode: BAG of the rows without replacement per tree, mtry features per
    node (feature_fraction_bynode), leaves down to one row, 255-bin histograms (its default). NaN
    and CSR taken as they are. Several classes: one tree per class in each of the n_trees rounds."""
    import lightgbm as lgb

    n, p = Xtr.shape
    Forest = lgb.LGBMRegressor if task == "regression" else lgb.LGBMClassifier
    # LightGBM sizes its per-leaf arrays by num_leaves up front: no more leaves than BAG * n rows can fill
    leaves = min(LGBM_MAX_LEAVES, max(2, math.ceil(BAG * n)))
    model = Forest(boosting_type="rf", n_estimators=n_trees, num_leaves=leaves, max_depth=-1, min_child_samples=1,
                   min_child_weight=0.0, min_split_gain=0.0, reg_lambda=0.0, subsample=BAG, subsample_freq=1,
                   colsample_bytree=1.0, feature_fraction_bynode=mtry / p, histogram_pool_size=HIST_CACHE_MB,
                   n_jobs=2, random_state=0, verbose=-1)
    return dict(_timed(lambda: model.fit(Xtr, ytr), lambda m: m.predict(Xte)), input=describe(Xtr))


def _bins_bound(X, max_bin=256):
    """An upper bound on xgboost's histogram bins per feature of X."""
    values = X.data if sp.issparse(X) else X
    if values.dtype.kind in "iu":
        return min(max_bin, int(values.max()) - int(values.min()) + 2)
    return min(max_bin, X.shape[0] + 1)


def forest_xgboost(Xtr, ytr, Xte, task, n_trees, mtry):
    """xgboost's XGBRF*: BAG of the rows without replacement (subsample), mtry features per node
    (colsample_bynode), no depth or leaf limit (lossguide, max_depth=0, max_leaves=0), any non-empty
    child (min_child_weight 1e-6), 256-bin histograms (its default hist method). NaN taken as
    missing; CSR taken as it is, its absent entries read as missing rather than 0. Several classes:
    one tree per class in each forest."""
    import xgboost as xgb

    p = Xtr.shape[1]
    Forest = xgb.XGBRFRegressor if task == "regression" else xgb.XGBRFClassifier
    cached_nodes = max(8, HIST_CACHE_MB * 2**20 // (p * _bins_bound(Xtr) * 16))  # 16 bytes a bin
    # colsample_bynode * p is truncated (in float32): the half keeps it at mtry
    model = Forest(n_estimators=n_trees, learning_rate=1.0, subsample=BAG, colsample_bynode=min(1.0, (mtry + 0.5) / p),
                   max_depth=0, grow_policy="lossguide", max_leaves=0, min_child_weight=1e-6, tree_method="hist",
                   max_cached_hist_node=cached_nodes, n_jobs=2, random_state=0)
    given = describe(Xtr) + (", absent entries read as missing" if sp.issparse(Xtr) else "")
    return dict(_timed(lambda: model.fit(Xtr, ytr), lambda m: m.predict(Xte)), input=given)


# ---- ranger (R), through Rscript -------------------------------------------------------------------

# X comes as raw column-major values (int8, float32 or float64) or as CSC arrays (a dgCMatrix);
# peak memory is counted from after the data are read, as compare_forest.py's Python workers count it.
RANGER_SCRIPT = r"""
suppressMessages({library(ranger); library(Matrix)}); a <- commandArgs(TRUE)
dir <- a[1]; cls <- a[2] == "classification"; n <- as.integer(a[5]); n_test <- as.integer(a[6])
p <- as.integer(a[7]); kind <- a[8]
read_x <- function(part, rows) {
  f <- file.path(dir, part)
  if (kind == "sparse") {
    ptr <- readBin(paste0(f, ".indptr"), "integer", p + 1)
    return(sparseMatrix(i = readBin(paste0(f, ".indices"), "integer", ptr[p + 1]), p = ptr,
                        x = readBin(paste0(f, ".data"), "numeric", ptr[p + 1], size = 4),
                        dims = c(rows, p), index1 = FALSE, dimnames = list(NULL, paste0("x", seq_len(p)))))
  }
  size <- c(int8 = 1, float32 = 4, float64 = 8)[[kind]]
  values <- readBin(f, if (kind == "int8") "integer" else "numeric", rows * p, size = size)
  matrix(values, rows, p, dimnames = list(NULL, paste0("x", seq_len(p))))
}
x <- read_x("train", n); xt <- read_x("test", n_test); y <- readBin(file.path(dir, "y"), "numeric", n)
if (cls) y <- factor(y)
writeLines("5", "/proc/self/clear_refs")
t0 <- Sys.time()
fit <- ranger(x = x, y = y, num.trees = as.integer(a[3]), mtry = as.integer(a[4]), min.node.size = 1,
              num.threads = 2, seed = 0)
fit_s <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
t0 <- Sys.time()
pred <- predict(fit, xt, num.threads = 2)$predictions
predict_s <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
if (cls) pred <- as.numeric(as.character(pred))
writeBin(as.numeric(pred), file.path(dir, "pred"))
hwm <- as.numeric(gsub("\\D", "", grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)))
cat(fit_s, predict_s, hwm / 1024, "\n")
"""


def ranger_available():
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(ranger)"], capture_output=True).returncode == 0


def _ranger_input(X, folder, part):
    """Writes X for RANGER_SCRIPT; returns its kind."""
    if sp.issparse(X):
        X = X.tocsc()
        X.indptr.astype(np.int32).tofile(folder / f"{part}.indptr")
        X.indices.astype(np.int32).tofile(folder / f"{part}.indices")
        X.data.astype(np.float32).tofile(folder / f"{part}.data")
        return "sparse"
    kind = X.dtype.name if X.dtype.name in ("int8", "float64") else "float32"
    np.ascontiguousarray(X.T, dtype=kind).tofile(folder / part)  # tofile writes C order: X column by column
    return kind


def forest_ranger(Xtr, ytr, Xte, task, n_trees, mtry):
    """ranger in an Rscript process of its own: bootstrap with replacement, mtry, min.node.size=1
    (a node of one row is not split), exact thresholds; also returns peak_mb, R's own from after
    reading the data. CSR goes as a dgCMatrix. ranger 0.14 takes no NA (na.learn came in 0.16):
    NaN is replaced by its training column's mean, as the input column says."""
    given = "dgCMatrix" if sp.issparse(Xtr) else describe(Xtr)
    if "NaN" in given:
        means = np.nanmean(Xtr, axis=0).astype(Xtr.dtype)
        Xtr, Xte = (np.where(np.isnan(X), means, X) for X in (Xtr, Xte))
        given = f"dense {Xtr.dtype}, NaN replaced by the training column's mean (ranger takes no NA)"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        kind = _ranger_input(Xtr, folder, "train")
        _ranger_input(Xte, folder, "test")
        np.asarray(ytr, dtype=np.float64).tofile(folder / "y")
        (folder / "ranger.R").write_text(RANGER_SCRIPT)
        args = [folder, task, n_trees, mtry, Xtr.shape[0], Xte.shape[0], Xtr.shape[1], kind]
        out = subprocess.run(["Rscript", folder / "ranger.R", *map(str, args)], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip()[-500:])
        fit_s, predict_s, peak_mb = map(float, out.stdout.split()[-3:])
        pred = np.fromfile(folder / "pred", dtype=np.float64)
    return dict(fit_s=fit_s, predict_s=predict_s, peak_mb=peak_mb, pred=pred, input=given)


FOREST_PEERS = {"sklearn": forest_sklearn, "ranger": forest_ranger, "ydf": forest_ydf,
                "lightgbm": forest_lightgbm, "xgboost": forest_xgboost}


# ---- frequent itemsets: mlxtend (pyfim is one call: optional("fim").fpgrowth) -------------------------------


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
