"""AnnData as X (pyinterp.io.h5ad): every estimator and measure gives on an AnnData exactly what it
gives on the same matrix unnamed, with var_names as the feature names; files written by anndata's
own writer and read back in memory and backed."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import read_csv_exact
from every_route import assert_same_forest, check_every_route

from pyinterp import RandomForestClassifier, RandomForestRegressor
from pyinterp.importance import mdi_oob
from pyinterp.io.h5ad import anndata_matrix

anndata = pytest.importorskip("anndata", reason="anndata (the test extras) writes and reads the .h5ad files")
pd = pytest.importorskip("pandas")


@pytest.fixture(autouse=True)
def _strings_written():
    # anndata 0.12 writes pandas 3's default string columns only when told to
    if hasattr(anndata.settings, "allow_write_nullable_strings"):
        with anndata.settings.override(allow_write_nullable_strings=True):
            yield
    else:
        yield


def counts(n, p, seed):
    """Counts with most entries zero, as single-cell matrices are, and a response on two genes."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.6, size=(n, p)).astype(np.float32) * (rng.random((n, p)) < 0.4)
    y = 1.0 * (X[:, 0] > 0) * (X[:, 1] > 0) + 0.3 * rng.standard_normal(n)
    return X, y


def cells(X, y=None, names=None):
    n, p = X.shape
    names = [f"G{j}-AS1" for j in range(p)] if names is None else names
    obs = pd.DataFrame(index=[f"cell{i}" for i in range(n)])
    if y is not None:
        obs["score"] = y
        obs["cell_type"] = pd.Categorical(np.where(y > 0.5, "T-cell", "B-cell"))
    return anndata.AnnData(X, obs=obs, var=pd.DataFrame(index=names))


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
@pytest.mark.parametrize("sparse", [True, False])
def test_every_estimator_and_measure_equals_the_unnamed_matrix(sparse):
    D, y = counts(180, 30, seed=1)
    adata = cells(sp.csr_matrix(D) if sparse else D, y)
    yc = adata.obs["cell_type"].to_numpy()
    check_every_route(adata, D, y, yc, list(adata.var_names))
    # a view (cells and genes selected) carries its own names
    view = adata[::2, 3:]
    forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(view, y[::2])
    assert list(forest.feature_names_in_) == [f"G{j}-AS1" for j in range(3, 30)]
    assert_same_forest(forest, RandomForestRegressor(n_estimators=5, random_state=0).fit(D[::2, 3:], y[::2]))


@pytest.mark.parametrize("layout", ["dense", "dense-gzip", "csr", "csc"])
def test_backed_files_fit_as_in_memory(tmp_path, layout):
    D, y = counts(120, 12, seed=2)
    D[5, 3] = np.nan if layout.startswith("dense") else D[5, 3]
    X = {"csr": sp.csr_matrix, "csc": sp.csc_matrix}.get(layout, np.asarray)(D)
    path = tmp_path / "cells.h5ad"
    cells(X, y).write_h5ad(path, compression="gzip" if layout == "dense-gzip" else None)
    backed = anndata.read_h5ad(path, backed="r")
    matrix, names = anndata_matrix(backed)
    # a plain dense block is memory-mapped from the file, as np.load(mmap_mode="r") maps a .npy
    assert isinstance(matrix, np.memmap) == (layout == "dense")
    assert sp.issparse(matrix) == (layout in ("csr", "csc"))
    kw = dict(n_estimators=8, random_state=0)
    expected = RandomForestRegressor(**kw).fit(D, y)
    fitted = RandomForestRegressor(**kw).fit(backed, backed.obs["score"])
    assert_same_forest(fitted, expected)
    assert list(fitted.feature_names_in_) == list(names)
    np.testing.assert_array_equal(fitted.predict(backed), expected.predict(D))
    # a backed view reads only its selection
    view = backed[10:60, [0, 1, 5]]
    assert_same_forest(RandomForestRegressor(**kw).fit(view, y[10:60]), RandomForestRegressor(**kw).fit(D[10:60][:, [0, 1, 5]], y[10:60]))
    backed.file.close()


def test_names_are_checked_as_a_dataframe_s_columns():
    D, y = counts(60, 5, seed=3)
    adata = cells(D, y)
    forest = RandomForestClassifier(n_estimators=3, random_state=0).fit(adata, adata.obs["cell_type"])
    assert forest.classes_.tolist() == ["B-cell", "T-cell"]
    other = cells(D, names=["G0-AS1", "G1-AS1", "CD3E", "G3-AS1", "G4-AS1"])
    with pytest.raises(ValueError, match="var_names should match .* column 2 is 'CD3E' where fit had 'G2-AS1'"):
        forest.predict(other)
    with pytest.raises(ValueError, match="X has 4 features, but RandomForestClassifier is expecting 5"):
        forest.predict(adata[:, :4])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        forest.predict(D)
    plain = RandomForestClassifier(n_estimators=3, random_state=0).fit(D, adata.obs["cell_type"])
    with pytest.warns(UserWarning, match="X has feature names, but RandomForestClassifier was fitted without"):
        plain.predict(adata)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(forest.predict(adata), plain.predict(D))


def test_bad_anndata_is_named():
    D, y = counts(20, 3, seed=4)
    empty = anndata.AnnData(obs=pd.DataFrame(index=[f"c{i}" for i in range(20)]),
                            var=pd.DataFrame(index=["a", "b", "c"]))
    with pytest.raises(ValueError, match=r"X: the AnnData has no X \(adata.X is None\)"):
        RandomForestRegressor().fit(empty, y)
    with pytest.raises(ValueError, match="y"):
        RandomForestRegressor().fit(cells(D), y[:-1])
    with pytest.raises(ValueError, match="X is sparse and holds NaN"):
        RandomForestRegressor().fit(cells(sp.csr_matrix(np.where(D > 0, np.nan, 0.0))), y)
    with pytest.raises(ValueError, match="Input X contains infinity|infinit"):
        RandomForestRegressor().fit(cells(np.where(D > 0, np.inf, 0.0).astype(np.float32)), y)


def run(capsys, *argv):
    from pyinterp import cli

    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def pbmc(tmp_path):
    """Counts of 3 cell types told apart by marker genes, log-normalised in X, raw in a layer,
    with a batch, a count covariate and a score in obs (two cells without a type)."""
    rng = np.random.default_rng(5)
    n, p = 240, 20
    kind = rng.choice(["T-cell", "B-cell", "Monocyte"], n)
    rate = np.full((n, p), 0.5)
    for j, label in enumerate(["T-cell", "B-cell", "Monocyte"]):
        rate[kind == label, j] += 4
    raw = rng.poisson(rate).astype(np.float32)
    names = ["CD3E", "MS4A1", "LYZ", *[f"GENE{j}" for j in range(3, p)]]
    batch = rng.choice(["b1", "b2"], n)
    score = 1.0 * (raw[:, 0] > 2) * (raw[:, 3] > 0) + 0.5 * (batch == "b2") + 0.1 * rng.standard_normal(n)
    obs = pd.DataFrame({"cell_type": pd.Categorical(kind), "batch": pd.Categorical(batch),
                        "n_counts": raw.sum(1), "score": score}, index=[f"AAAC-{i}" for i in range(n)])
    obs.loc[obs.index[:2], "cell_type"] = np.nan
    adata = anndata.AnnData(sp.csr_matrix(np.log1p(raw)), obs=obs, var=pd.DataFrame(index=names))
    adata.layers["counts"] = sp.csr_matrix(raw)
    adata.write_h5ad(tmp_path / "pbmc.h5ad")
    return tmp_path, adata


def test_an_obs_column_is_the_target_and_var_names_name_every_table(pbmc, capsys):
    folder, adata = pbmc
    code, out, err = run(capsys, "all", folder / "pbmc.h5ad", "--target", "obs:cell_type", "--class-of-interest",
                         "T-cell", "--n-estimators", 30, "--n-jobs", 1, "--out", folder / "out")
    assert (code, err) == (0, ""), err
    assert "n=238 cells, p=20 genes (X, sparse CSR float32), target 'cell_type' from obs (classification" in out
    assert "238 of the 240 cells have cell_type; 2 have it missing and are left out" in out
    assert "Iterative random forest, class of interest: T-cell" in out
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    y = adata.obs["cell_type"].to_numpy()[2:].astype(str)
    forest = RandomForestClassifier(n_estimators=30, oob_score=True, random_state=0).fit(adata.X[2:], y)
    np.testing.assert_array_equal(table.loc[list(adata.var_names), "mdi_oob"].to_numpy(), mdi_oob(forest, adata.X[2:], y))
    assert set(table.index[:3]) == {"CD3E", "MS4A1", "LYZ"}
    irf = read_csv_exact(folder / "out" / "irf.csv")
    assert all(set(label.replace("+", "").replace("-", "").split(" & ")) <= set(adata.var_names)
               for label in irf["interaction"])


def test_a_layer_cell_and_gene_lists_and_obs_covariates(pbmc, capsys):
    folder, adata = pbmc
    (folder / "cells.txt").write_text("".join(f"AAAC-{i}\n" for i in range(0, 240, 2)))
    (folder / "genes.txt").write_text("CD3E\nGENE3\nGENE4\nLYZ\nNOT-A-GENE\n")
    code, out, err = run(capsys, "importance", folder / "pbmc.h5ad", "--target", "score", "--layer", "counts",
                         "--keep", folder / "cells.txt", "--extract", folder / "genes.txt", "--covar-name",
                         "obs:batch,n_counts", "--covar-mode", "adjust", "--n-estimators", 20, "--n-jobs", 1,
                         "--out", folder / "out")
    assert (code, err) == (0, ""), err
    assert "n=120 cells, p=4 genes (layer 'counts', sparse CSR float32), target 'score' from obs (regression" in out
    assert "4 of the 20 genes named (1 of its IDs are not in var_names)" in out
    assert "120 of the 240 cells named" in out
    assert ("adjusted for 2 covariate columns (batch, n_counts; batch as indicators of its levels) by least squares, "
            "on the 120 cells") in out
    rows = np.arange(0, 240, 2)
    design = np.column_stack([np.ones(120), adata.obs["batch"].to_numpy()[rows] == "b2",
                              adata.obs["n_counts"].to_numpy()[rows]]).astype(float)
    score = adata.obs["score"].to_numpy()[rows]
    residuals = score - design @ np.linalg.lstsq(design, score, rcond=None)[0]
    X = adata.layers["counts"][rows][:, [0, 2, 3, 4]]
    forest = RandomForestRegressor(n_estimators=20, oob_score=True, random_state=0).fit(X, residuals)
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    np.testing.assert_allclose(table.loc[["CD3E", "LYZ", "GENE3", "GENE4"], "mdi_oob"].to_numpy(),
                               mdi_oob(forest, X, residuals), rtol=1e-12, atol=1e-15)


def test_obs_covariates_at_every_split_of_a_cell_type_forest(pbmc, capsys):
    """The default --covar-mode always takes a class target (adjust refuses one): the covariates are
    columns after the genes (sparse stays sparse), searched at every split; the text one (batch)
    as indicators of its levels, since no split of categories serves three classes."""
    folder, adata = pbmc
    code, out, err = run(capsys, "importance", folder / "pbmc.h5ad", "--target", "obs:cell_type", "--covar-name",
                         "batch,n_counts", "--n-estimators", 20, "--n-jobs", 1, "--max-features", 2,
                         "--out", folder / "out")
    assert (code, err) == (0, ""), err
    assert ("2 covariate columns (batch=b2, n_counts) are searched at every split beside the genes (ranger's "
            "always.split.variables), on the 238 cells with cell_type and every covariate") in out
    assert "batch enter as indicators of their levels: a split on a set of levels needs a number or two classes, and cell_type has 3" in out
    rows = np.arange(2, 240)
    covariates = np.column_stack([adata.obs["batch"].to_numpy()[rows] == "b2", adata.obs["n_counts"].to_numpy()[rows]])
    X = sp.hstack([adata.X[rows], sp.csr_matrix(covariates.astype(float))], format="csr")
    y = adata.obs["cell_type"].to_numpy()[rows].astype(str)
    forest = RandomForestClassifier(n_estimators=20, oob_score=True, random_state=0, max_features=2,
                                    always_split_features=[20, 21]).fit(X, y)
    table = read_csv_exact(folder / "out" / "importances.csv").set_index("feature")
    names = [*adata.var_names, "batch=b2", "n_counts"]
    np.testing.assert_array_equal(table.loc[names, "mdi_oob"].to_numpy(), mdi_oob(forest, X, y))


@pytest.mark.parametrize("argv, message", [
    (["--target", "obs:cell_typo"], "pbmc.h5ad: no obs column 'cell_typo'; its obs columns are cell_type, batch"),
    ([], "give --target obs:COLUMN, the obs column of"),
    (["--target", "score", "--layer", "raw"], "pbmc.h5ad: no layer 'raw'; its layers are counts"),
    (["--target", "score", "--covar-name", "obs:age"], "pbmc.h5ad: no obs column 'age' for --covar-name"),
    (["--target", "cell_type", "--covar-name", "batch", "--covar-mode", "adjust"],
     "--covar-mode adjust adjusts a numeric phenotype; 'cell_type' is text"),
])
def test_bad_options_are_named(pbmc, capsys, argv, message):
    folder, _ = pbmc
    code, _, err = run(capsys, "importance", folder / "pbmc.h5ad", "--n-estimators", 5, *argv)
    assert code == 1 and message in err, err


def test_a_file_that_is_not_anndata_is_named(tmp_path, capsys):
    (tmp_path / "x.h5ad").write_text("not hdf5")
    code, _, err = run(capsys, "importance", tmp_path / "x.h5ad", "--target", "y")
    assert code == 1 and "x.h5ad: not an AnnData .h5ad file" in err


def test_the_docstring_example_runs():
    import doctest

    from pyinterp.io import h5ad

    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = doctest.DocTestFinder().find(h5ad, "h5ad", globs={})
    assert sum(len(t.examples) for t in tests) >= 4
    for test in tests:
        runner.run(test)
    assert runner.failures == 0
