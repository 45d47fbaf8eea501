"""The command line on real files: every format reads the same table, and each way a file broke
the old hand-written reader (issue 23) is either read or refused with one line naming the column
and row at fault, exit status 1; usage errors exit 2."""

import bz2
import gzip
import lzma
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import read_csv_exact

from pyinterp import __version__, cli


@pytest.fixture
def frame():
    rng = np.random.RandomState(0)
    X = rng.rand(150, 4)
    data = pd.DataFrame(X, columns=["GENE1", "GENE2", "GENE3", "GENE4"], index=[f"s{i}" for i in range(150)])
    data["y"] = X[:, 0] + (X[:, 1] > 0.5) + 0.1 * rng.randn(150)
    return data


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def importances(capsys, path, *options, out):
    code, stdout, err = run(capsys, "importance", path, "--target", "y", "--n-estimators", 20, "--out", out, *options)
    assert (code, err) == (0, ""), err
    return (out / "importances.csv").read_text(), stdout


def test_a_row_name_column_from_pandas_to_csv_is_read_as_row_names(frame, tmp_path, capsys):
    frame.to_csv(tmp_path / "data.csv")  # pandas' default: the index first, under an empty header
    table, out = importances(capsys, tmp_path / "data.csv", out=tmp_path / "out")
    assert "first column has no header: read as row names" in out
    assert sorted(pd.read_csv(tmp_path / "out" / "importances.csv")["feature"]) == ["GENE1", "GENE2", "GENE3", "GENE4"]


def test_every_format_reads_the_same_table(frame, tmp_path, capsys):
    frame.to_csv(tmp_path / "data.csv")
    expected, _ = importances(capsys, tmp_path / "data.csv", out=tmp_path / "csv")
    plain = frame.reset_index(drop=True)
    writers = {
        "data.tsv": lambda p: frame.to_csv(p, sep="\t"),
        "data.csv.gz": lambda p: frame.to_csv(p),
        "data.tsv.bz2": lambda p: frame.to_csv(p, sep="\t"),
        "data.parquet": lambda p: frame.to_parquet(p),
        "data.txt": lambda p: frame.to_csv(p, sep=";"),  # separator detected
        "columns.npz": lambda p: np.savez(p, **{c: plain[c].to_numpy() for c in plain}),
        "matrix.npz": lambda p: np.savez(p, X=plain.drop(columns="y").to_numpy(), y=plain["y"].to_numpy(),
                                         feature_names=np.array(list(plain.columns[:4]))),
    }
    for name, write in writers.items():
        write(tmp_path / name)
        table, _ = importances(capsys, tmp_path / name, out=tmp_path / name.replace(".", "_"))
        assert table == expected, name
    frame.to_csv(tmp_path / "data.dat", sep="|")
    table, _ = importances(capsys, tmp_path / "data.dat", "--sep", "|", out=tmp_path / "dat")
    assert table == expected


def test_text_columns_are_categories_and_can_be_dropped(frame, tmp_path, capsys):
    """Text columns are split as categories: the importances are those of a forest given their
    codes as CategoryCodes. A column mixing text and numbers is refused by name."""
    from pyinterp import CategoryCodes, RandomForestRegressor
    from pyinterp.importance import mdi_oob

    tissue = np.array(["lung", "blood", "brain", "liver"])[np.arange(150) % 4]
    frame = frame.assign(tissue=tissue, site="x")
    frame["y"] = frame["y"] + 2.0 * np.isin(tissue, ["lung", "brain"])
    frame.to_csv(tmp_path / "data.csv")
    code, out, err = run(capsys, "importance", tmp_path / "data.csv", "--target", "y", "--n-estimators", 20,
                         "--n-jobs", 1, "--out", tmp_path / "categories")
    assert (code, err) == (0, ""), err
    assert ("text columns split as categories (a set of levels to each side): tissue (4 levels: blood, brain, liver, "
            "lung); site (1 level: x)") in out
    X = frame.drop(columns="y").assign(tissue=np.searchsorted(["blood", "brain", "liver", "lung"], tissue), site=0.0)
    forest = RandomForestRegressor(20, oob_score=True, random_state=0, n_jobs=1, categorical_features=CategoryCodes(
        {"tissue": ["blood", "brain", "liver", "lung"], "site": ["x"]})).fit(X, frame["y"])
    table = read_csv_exact(tmp_path / "categories" / "importances.csv").set_index("feature")
    np.testing.assert_array_equal(table.loc[list(X.columns), "mdi_oob"].to_numpy(), mdi_oob(forest, X, frame["y"]))
    assert table.loc["tissue", "rank"] == 1
    frame.assign(tissue=np.where(np.arange(150) == 3, "7", tissue)).to_csv(tmp_path / "mixed.csv")
    code, out, err = run(capsys, "importance", tmp_path / "mixed.csv", "--target", "y")
    assert code == 1 and out == ""
    assert err == ("pyinterp: error: column 'tissue' is not numeric (row 's0' of 'tissue' holds 'lung' beside numbers "
                   "such as '7'); correct those cells, or leave the column out with --drop tissue\n")
    three = frame.assign(y=np.array(["a", "b", "c"])[np.arange(150) % 3])  # no split of categories serves 3 classes
    three.to_csv(tmp_path / "three.csv")
    code, out, err = run(capsys, "importance", tmp_path / "three.csv", "--target", "y", "--n-estimators", 20,
                         "--out", tmp_path / "three")
    assert (code, err) == (0, ""), err
    assert "text columns as indicators of their levels (a split on a set of levels needs a number or two classes)" in out
    assert {"tissue=brain", "tissue=liver", "tissue=lung", "GENE1"} <= set(
        read_csv_exact(tmp_path / "three" / "importances.csv")["feature"])
    frame = frame.drop(columns=["tissue", "site"])
    frame.assign(batch=["A", "B"] * 75, site="x").to_csv(tmp_path / "data.csv")
    frame.to_csv(tmp_path / "plain.csv")
    expected, _ = importances(capsys, tmp_path / "plain.csv", out=tmp_path / "plain")
    table, _ = importances(capsys, tmp_path / "data.csv", "--drop", "batch,site", out=tmp_path / "dropped")
    assert table == expected
    table, _ = importances(capsys, tmp_path / "data.csv", "--drop", "batch", "--drop", "site", out=tmp_path / "again")
    assert table == expected


def test_a_named_row_name_column_is_refused_until_given_with_index_col(frame, tmp_path, capsys):
    frame.rename_axis("sample").to_csv(tmp_path / "data.csv")
    code, _, err = run(capsys, "importance", tmp_path / "data.csv", "--target", "y")
    assert code == 1 and ("column 'sample' is not numeric and holds a different text on every row (data row 1 holds "
                          "'s0'): row names? name them with --index-col sample") in err
    table, _ = importances(capsys, tmp_path / "data.csv", "--index-col", "sample", out=tmp_path / "out")
    frame.to_csv(tmp_path / "plain.csv")
    assert table == importances(capsys, tmp_path / "plain.csv", out=tmp_path / "plain")[0]


def test_empty_cells_are_missing_values_the_forest_routes(frame, tmp_path, capsys):
    from pyinterp import RandomForestRegressor
    from pyinterp.importance import mdi_oob

    frame.iloc[3, 1] = np.nan
    frame.iloc[[7, 9], 2] = np.nan
    frame.to_csv(tmp_path / "data.csv")
    assert ",," in (tmp_path / "data.csv").read_text()  # written as empty cells
    _, out = importances(capsys, tmp_path / "data.csv", out=tmp_path / "out")
    assert "Note: 3 missing cells, in GENE2 (1), GENE3 (2): the trees send them down the side" in out
    X, y = frame.drop(columns="y"), frame["y"].to_numpy()
    forest = RandomForestRegressor(n_estimators=20, oob_score=True, random_state=0).fit(X, y)
    table = read_csv_exact(tmp_path / "out" / "importances.csv").set_index("feature").loc[X.columns]
    np.testing.assert_array_equal(table["mdi_oob"], mdi_oob(forest, X, y))


def test_an_empty_target_or_an_infinite_value_is_refused_naming_rows_and_columns(frame, tmp_path, capsys):
    gaps = frame.copy()
    gaps.iloc[[4, 11], 4] = np.nan
    gaps.to_csv(tmp_path / "named.csv")
    gaps.to_csv(tmp_path / "numbered.csv", index=False)
    code, _, err = run(capsys, "importance", tmp_path / "named.csv", "--target", "y")
    assert code == 1 and "the target 'y' is empty in rows 's4', 's11': every row needs a target value" in err
    code, _, err = run(capsys, "importance", tmp_path / "numbered.csv", "--target", "y")
    assert code == 1 and "the target 'y' is empty in data rows 5, 12:" in err
    frame.iloc[2, 0] = np.inf
    frame.to_csv(tmp_path / "inf.csv", index=False)
    code, _, err = run(capsys, "importance", tmp_path / "inf.csv", "--target", "y")
    assert code == 1 and "infinite values in column 'GENE1' (data row 3)" in err


def test_a_compressed_file_without_its_suffix_is_one_line_not_a_traceback(frame, tmp_path, capsys):
    with gzip.open(tmp_path / "data.csv", "wt") as f:  # gzip bytes named .csv
        frame.to_csv(f)
    code, out, err = run(capsys, "all", tmp_path / "data.csv", "--target", "y")
    assert code == 1 and out == ""
    assert err.startswith(f"pyinterp: error: {tmp_path / 'data.csv'}: not text in UTF-8") and err.count("\n") == 1
    assert ".gz" in err


@pytest.mark.parametrize("suffix, compress", [(".gz", gzip.compress), (".xz", lzma.compress), (".bz2", bz2.compress)])
def test_a_damaged_compressed_file_is_one_line(frame, tmp_path, capsys, suffix, compress):
    path = tmp_path / f"data.csv{suffix}"
    path.write_bytes(compress(frame.to_csv().encode())[:-12])  # cut short
    code, out, err = run(capsys, "all", path, "--target", "y")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.startswith(f"pyinterp: error: {path}: cannot be read as csv: ")


def test_an_npz_whose_x_is_not_2_d_lists_its_arrays(tmp_path, capsys):
    np.savez(tmp_path / "x3.npz", X=np.zeros((4, 3, 2)), y=np.zeros(4))
    code, out, err = run(capsys, "all", tmp_path / "x3.npz", "--target", "y")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "found X (4, 3, 2), y (4,)" in err


def test_a_ragged_or_empty_file_is_one_line(tmp_path, capsys):
    (tmp_path / "ragged.csv").write_text("a,b,y\n1,2,3\n4,5,6,7\n")
    code, _, err = run(capsys, "all", tmp_path / "ragged.csv", "--target", "y")
    assert code == 1 and err == (f"pyinterp: error: {tmp_path / 'ragged.csv'}: cannot be read as csv: Error tokenizing "
                                 "data. C error: Expected 3 fields in line 3, saw 4\n")
    (tmp_path / "empty.tsv").write_text("")
    code, _, err = run(capsys, "all", tmp_path / "empty.tsv", "--target", "y")
    assert code == 1 and err.startswith(f"pyinterp: error: {tmp_path / 'empty.tsv'}: cannot be read as tsv: ")


@pytest.mark.parametrize("argv, message", [
    (["--target", "z"], "--target: no column named 'z'; the columns are GENE1, GENE2, GENE3, GENE4, y"),
    ([], "give --target COLUMN"),
    (["--target", "y", "--drop", "GENE9"], "--drop: no column named 'GENE9'"),
    (["--target", "y", "--drop", "y"], "--drop names the target 'y'"),
    (["--target", "y", "--index-col", "id"], "--index-col: no column named 'id'"),
    (["--target", "y", "--task", "regression", "--drop", "GENE1,GENE2,GENE3,GENE4"], "no feature columns are left"),
])
def test_argument_errors_about_the_file_exit_1(frame, tmp_path, capsys, argv, message):
    frame.to_csv(tmp_path / "data.csv")
    code, _, err = run(capsys, "importance", tmp_path / "data.csv", *argv)
    assert code == 1 and message in err and err.count("\n") == 1
    code, _, err = run(capsys, "importance", tmp_path / "missing.csv", "--target", "y")
    assert code == 1 and err == f"pyinterp: error: {tmp_path / 'missing.csv'}: no such file\n"


def test_a_text_target_is_classes_and_regression_on_it_is_refused(frame, tmp_path, capsys):
    frame.assign(y=np.where(frame["GENE2"] > 0.5, "tumour", "normal")).to_csv(tmp_path / "data.csv")
    code, out, _ = run(capsys, "importance", tmp_path / "data.csv", "--target", "y", "--n-estimators", 10)
    assert code == 0 and "target 'y' (classification, inferred; --task overrides)" in out
    assert "out-of-bag accuracy" in out
    code, _, err = run(capsys, "importance", tmp_path / "data.csv", "--target", "y", "--task", "regression")
    assert code == 1 and "the target 'y' is not numeric ('tumour' in row 's0'); regression needs numbers" in err


@pytest.mark.parametrize("argv", [[], ["importance"], ["importance", "f.csv", "--task", "survival"],
                                  ["all", "f.csv", "--n-estimators", "0"], ["demo", "--top", "x"], ["fit"]])
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as exit:
        cli.main(argv)
    assert exit.value.code == 2 and "usage: pyinterp" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out == f"pyinterp {__version__} (distribution interptrees)\n"


def test_npz_object_arrays_are_read_only_when_allowed(frame, tmp_path, capsys):
    plain = frame.reset_index(drop=True)
    np.savez(tmp_path / "data.npz", X=plain.iloc[:, :4].to_numpy(), y=plain["y"].to_numpy(), batch=np.arange(150),
             feature_names=np.array(plain.columns[:4], dtype=object))
    _, out = importances(capsys, tmp_path / "data.npz", out=tmp_path / "a")
    assert "Note: not read: feature_names, stored as Python objects (pickles); --allow-pickle" in out
    assert "Note: not used as features: batch (the features are X's columns)" in out
    assert set(pd.read_csv(tmp_path / "a" / "importances.csv")["feature"]) == {"x0", "x1", "x2", "x3"}
    importances(capsys, tmp_path / "data.npz", "--allow-pickle", out=tmp_path / "b")
    assert set(pd.read_csv(tmp_path / "b" / "importances.csv")["feature"]) == set(plain.columns[:4])
    code, _, err = run(capsys, "importance", tmp_path / "data.npz", "--target", "label")
    assert code == 1 and "no array named 'label' for --target; its arrays are X, y, batch, feature_names" in err


BLOCK_PANDAS = """
import sys
class NoPandas:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "pandas":
            raise ModuleNotFoundError("No module named 'pandas'", name="pandas")
sys.meta_path.insert(0, NoPandas())
from pyinterp.cli import main
code = main(sys.argv[1:])
assert "pandas" not in sys.modules
sys.exit(code)
"""


def test_without_pandas_a_file_names_the_extra_and_demo_still_runs(frame, tmp_path):
    frame.to_csv(tmp_path / "data.csv")
    run = lambda *argv: subprocess.run([sys.executable, "-c", BLOCK_PANDAS, *map(str, argv)], capture_output=True,
                                       text=True, cwd=tmp_path)
    done = run("importance", "data.csv", "--target", "y")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "pyinterp: error: reading data.csv needs pandas: pip install 'interptrees[cli]'\n"
    done = run("demo", "--n-samples", 200, "--n-features", 6, "--n-estimators", 20, "--out", "demo")
    assert done.returncode == 0, done.stderr
    assert "out-of-bag R^2" in done.stdout and (tmp_path / "demo" / "report.html").is_file()


def test_parquet_without_pyarrow_names_the_extra(frame, tmp_path, capsys, monkeypatch):
    frame.to_parquet(tmp_path / "data.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    code, _, err = run(capsys, "importance", tmp_path / "data.parquet", "--target", "y")
    assert code == 1 and err == "pyinterp: error: reading Parquet needs pyarrow: pip install 'interptrees[parquet]'\n"


def test_a_genomic_npz_with_probe_names(tmp_path, capsys):
    from conftest import DATA, load_shared

    load_shared("all_bioc.npz")  # skips when ../shared/data is absent
    table, out = importances(capsys, DATA / "all_bioc.npz", "--allow-pickle", out=tmp_path)
    assert "n=128, p=12625, target 'y' (classification, inferred" in out
    assert "Note: not used as features: y_bcrabl (the features are X's columns)" in out
    features = pd.read_csv(tmp_path / "importances.csv")["feature"]
    assert len(features) == 12625 and features.str.endswith("_at").mean() > 0.9  # Affymetrix probe ids
