"""What the command line writes: its CSV tables are the Python API's results on the same data and
seed, report.html holds them (and embeds figures), each skipped step says why, and the installed
entry point runs."""

import base64
import os
import re
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import read_csv_exact

from pyinterp import IterativeRandomForest, LSSFind, RandomForestRegressor, cli
from pyinterp.cli import jobs
from pyinterp.cli.report import HTML_ROWS, Report
from pyinterp.datasets import make_lss
from pyinterp.importance import mdi_oob
from pyinterp.interactions import NoInteractionWarning


@pytest.fixture(scope="module")
def lss_file(tmp_path_factory):
    X, y, _ = make_lss(n_samples=400, n_features=8, n_interactions=1, order=2, snr=5, random_state=1)
    path = tmp_path_factory.mktemp("data") / "lss.csv"
    pd.DataFrame(X, columns=[f"G{j}" for j in range(8)]).assign(response=y).to_csv(path, index=False)
    return path


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


class Tables(HTMLParser):
    """The <table> cells of a page, per table, and the data: URIs of its images."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.images, self._cell = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "img":
            self.images.append(dict(attrs)["src"])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None


def test_the_csv_tables_are_the_python_apis_results(lss_file, tmp_path, capsys):
    out = tmp_path / "out"
    run(capsys, "all", lss_file, "--target", "response", "--n-estimators", 30, "--random-state", 3, "--n-jobs", 2,
        "--out", out)
    data = read_csv_exact(lss_file)  # as the command reads it, under pandas 2 too
    X, y = data.drop(columns="response"), data["response"].to_numpy()

    forest = RandomForestRegressor(n_estimators=30, oob_score=True, random_state=3, n_jobs=1).fit(X, y)
    value, se = mdi_oob(forest, X, y, return_std=True)
    table = read_csv_exact(out / "importances.csv")
    order = np.argsort(-value, kind="stable")
    np.testing.assert_array_equal(table["rank"], np.arange(1, 9))
    assert list(table["feature"]) == list(X.columns[order])
    np.testing.assert_array_equal(table["mdi_oob"], value[order])
    np.testing.assert_array_equal(table["mdi_oob_se"], se[order])
    np.testing.assert_array_equal(table["mdi"], forest.feature_importances_[order])

    lss = LSSFind(random_state=3).fit(X, y)
    table = read_csv_exact(out / "lssfind.csv")
    assert len(lss.selected_) > 0
    assert list(table["interaction"]) == [lss.selected_.label(f) for f in lss.selected_.features]
    assert list(table["order"]) == [len(f) for f in lss.selected_.features]
    for column in ("dwp", "adjusted_dwp", "rho"):
        np.testing.assert_array_equal(table[column], lss.selected_[column])
    assert list(table["minimal"]) == [f in lss.minimal_.features for f in lss.selected_.features]

    irf = IterativeRandomForest(n_estimators=30, task="regression", random_state=3).fit(X, y)
    table = read_csv_exact(out / "irf.csv")
    assert len(irf.interactions_) > 0
    assert list(table["interaction"]) == [irf.interactions_.label(f) for f in irf.interactions_.features]
    assert table.columns[2:].tolist() == irf.interactions_.columns
    for column in irf.interactions_.columns:
        np.testing.assert_array_equal(table[column], irf.interactions_[column])


def test_the_interaction_budgets_reach_the_finders(lss_file, tmp_path, capsys):
    """--max-order, --lss-estimators, --n-iterations, --n-bootstraps, --rit-depth and --rit-trees
    are the finders' parameters: the tables equal the Python API's fits with them, and the report
    says what was spent."""
    out = tmp_path / "out"
    text = run(capsys, "interactions", lss_file, "--target", "response", "--n-estimators", 20, "--random-state", 4,
               "--max-order", 2, "--lss-estimators", 40, "--n-iterations", 2, "--n-bootstraps", 3, "--rit-depth", 3,
               "--rit-trees", 60, "--out", out)
    assert "LSSFind (40 trees" in text and "order <= 2" in text
    assert "(2 iterations, 20 trees, 3 bootstraps, 60 RITs of depth 3" in text
    data = read_csv_exact(lss_file)
    X, y = data.drop(columns="response"), data["response"].to_numpy()
    lss = LSSFind(40, max_order=2, random_state=4).fit(X, y)
    table = read_csv_exact(out / "lssfind.csv")
    assert list(table["interaction"]) == [lss.selected_.label(f) for f in lss.selected_.features]
    np.testing.assert_array_equal(table["dwp"], lss.selected_["dwp"])
    irf = IterativeRandomForest(2, 20, task="regression", n_bootstraps=3, rit_depth=3, rit_n_trees=60,
                                random_state=4).fit(X, y)
    table = read_csv_exact(out / "irf.csv")
    assert list(table["interaction"]) == [irf.interactions_.label(f) for f in irf.interactions_.features]
    np.testing.assert_array_equal(table["stability"], irf.interactions_["stability"])


def test_the_html_report_holds_every_table(lss_file, tmp_path, capsys):
    out = run(capsys, "all", lss_file, "--target", "response", "--n-estimators", 20, "--out", tmp_path)
    assert "Wrote importances.csv, pairs.csv, lssfind.csv, irf.csv, " in out and f"report.html to {tmp_path}\n" in out
    page = (tmp_path / "report.html").read_text()
    assert "Top 8 of 8 features by MDI-oob" in page  # the printed lines are on the page
    html_tables = Tables(page).tables
    assert len(html_tables) == 4
    for name, shown in zip(("importances", "pairs", "lssfind", "irf"), html_tables):
        table = pd.read_csv(tmp_path / f"{name}.csv", keep_default_na=False)
        assert shown[0] == table.columns.tolist()
        rows = table.head(HTML_ROWS).itertuples(index=False)
        assert shown[1:] == [[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row] for row in rows]
        assert f"{name}.csv holds them all" in page


@pytest.mark.parametrize("style, keys", [("R", ("cpe", "stability")), ("pyinterp", ("stability", "prevalence"))])
def test_irf_says_the_order_of_its_table(style, keys, lss_file, tmp_path, capsys, monkeypatch):
    """The heading and the page's table title name the order of the fitted style (R iRF's cpe by
    default, not stability), the printed columns start with the sort keys, and the rows follow them."""
    monkeypatch.setattr(jobs, "IterativeRandomForest", lambda **kw: IterativeRandomForest(style=style, **kw))
    out = run(capsys, "interactions", lss_file, "--target", "response", "--n-estimators", 20, "--top", 5,
              "--out", tmp_path)
    order = ", then ".join(keys)
    assert re.search(rf"selected; top 5 of \d+ by {order}:\n", out)
    lines = out.split(f"by {order}:\n")[1].splitlines()
    header = lines[0].split()
    assert header[0] == "interaction" and header[1:3] == list(keys) and ("cpe" in header) == (style == "R")
    printed = [[float(v) for v in line.split()[-len(header) + 1:]] for line in lines[1:6]]
    assert printed == sorted(printed, key=lambda row: (-row[0], -row[1]))
    page = (tmp_path / "report.html").read_text()
    assert f"<h2 id='irf'>Iterative random forest: interactions by {order}</h2>" in page
    assert "by stability across bootstraps" not in page


def test_interactions_on_a_file_write_nothing_to_stderr(lss_file):
    """Every run on a file (a DataFrame of named columns) warned, from iRF, "X does not have valid
    feature names, but RandomForestRegressor was fitted with feature names"."""
    command = Path(sys.executable).parent / "pyinterp"  # 30 trees: every row is out of bag in some tree
    done = subprocess.run([command, "interactions", lss_file, "--target", "response", "--n-estimators", "30",
                           "--n-jobs", "1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Iterative random forest" in done.stdout
    assert done.stderr == ""


def test_a_long_table_shows_its_first_rows_on_the_page(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = rng.rand(60, HTML_ROWS + 20)
    pd.DataFrame(X).add_prefix("g").assign(y=X[:, 0]).to_csv(tmp_path / "wide.csv", index=False)
    run(capsys, "importance", tmp_path / "wide.csv", "--target", "y", "--n-estimators", 10, "--out", tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert len(Tables(page).tables[0]) == 1 + HTML_ROWS
    assert f"the first {HTML_ROWS} of {HTML_ROWS + 20} rows; importances.csv holds them all" in page
    assert len(pd.read_csv(tmp_path / "importances.csv")) == HTML_ROWS + 20


def test_classification_says_it_skips_lssfind(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = rng.rand(200, 5)
    label = np.where((X[:, 0] > 0.5) & (X[:, 1] > 0.5), "tumour", "normal")
    pd.DataFrame(X, columns=list("abcde")).assign(status=label).to_csv(tmp_path / "data.csv", index=False)
    out = run(capsys, "interactions", tmp_path / "data.csv", "--target", "status", "--n-estimators", 20,
              "--out", tmp_path / "out")
    assert ("LSSFind skipped: it finds interactions of a continuous response (regression); the target is classes. "
            "iRF below takes classes.") in out
    assert [p.name for p in sorted((tmp_path / "out").glob("*.csv"))] == ["irf.csv", "pairs.csv"]
    assert (tmp_path / "out" / "report.html").is_file()
    assert "a+ & b+" in pd.read_csv(tmp_path / "out" / "irf.csv")["interaction"].tolist()


def test_a_target_single_splits_separate_says_why_no_interaction(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = rng.rand(300, 20)
    data = pd.DataFrame(X).add_prefix("g").assign(y=np.where(X[:, 0] > 0.5, "tumour", "normal"))
    data.to_csv(tmp_path / "data.csv", index=False)
    out = run(capsys, "interactions", tmp_path / "data.csv", "--target", "y", "--n-estimators", 50, "--out", tmp_path)
    assert "iteration 5 selected; no interaction.\n  Every decision path of the selected forest splits on one " \
           "feature: single splits separate the target, and an interaction needs two features on one path." in out
    assert "top 0 of 0" not in out
    assert len(pd.read_csv(tmp_path / "irf.csv")) == 0


def test_a_response_without_boolean_structure_says_why_lssfind_finds_nothing(tmp_path, capsys):
    """The report names the set that came closest (the warning's, which does not reach stderr
    again) and offers rank mode, whose table is LSSFind(mode="rank")'s."""
    rng = np.random.RandomState(0)
    frame = pd.DataFrame(rng.rand(200, 5), columns=list("abcde")).assign(y=rng.randn(200))
    frame.to_csv(tmp_path / "noise.csv")
    code = cli.main([str(a) for a in ("interactions", tmp_path / "noise.csv", "--target", "y", "--n-estimators", 10)])
    out, err = capsys.readouterr()
    assert code == 0 and "LSSFind found no set" not in err
    X, y = frame.drop(columns="y"), frame["y"].to_numpy()
    with pytest.warns(NoInteractionWarning, match="LSSFind found no set") as caught:
        LSSFind(100, random_state=0).fit(X, y)
    label, best = caught[0].message.best
    assert "order <= 3) in " in out and (" s: no set.\n  No set of up to 3 signed features holds 2^|S| DWP >= 0.99 "
                                         f"(the highest is {best:.3f}, of {label}): the response") in out
    assert "--lss-mode rank ranks every mined set by rho instead" in out
    text = run(capsys, "interactions", tmp_path / "noise.csv", "--target", "y", "--n-estimators", 10, "--lss-mode",
               "rank", "--out", tmp_path / "rank")
    ranked = LSSFind(100, random_state=0, mode="rank").fit(X, y).interactions_
    assert f"{len(ranked)} mined sets ranked by rho = log2(DWP) / |S|, 0 with 2^|S| DWP >= 0.99" in text
    table = read_csv_exact(tmp_path / "rank" / "lssfind.csv")
    assert list(table["interaction"]) == [ranked.label(f) for f in ranked.features][:1000]
    np.testing.assert_array_equal(table["rho"], ranked["rho"][:1000])
    assert (np.diff(table["rho"]) <= 1e-12).all()  # ties to float rounding


def test_demo_writes_its_report_with_the_truth(tmp_path, capsys):
    out = run(capsys, "demo", "--n-samples", 500, "--n-features", 10, "--n-estimators", 30, "--out", tmp_path)
    assert "Wrote importances.csv, pairs.csv, lssfind.csv, irf.csv, " in out
    table = pd.read_csv(tmp_path / "importances.csv")
    assert sorted(table["feature"][table["truth"] == "relevant"]) == ["x0", "x1", "x2", "x3"]
    lss = pd.read_csv(tmp_path / "lssfind.csv")
    assert sorted(lss["interaction"][lss["truth"]]) == ["x0- & x1-", "x2- & x3-"]
    irf = pd.read_csv(tmp_path / "irf.csv")
    assert sorted(irf["interaction"][irf["truth"]]) == ["x0- & x1-", "x2- & x3-"]
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    assert sorted(pairs["interaction"][:2]) == ["x0- & x1-", "x2- & x3-"] and pairs["truth"][:2].all()
    assert pairs["qvalue"][1] < 1e-3 and not pairs["truth"][2:].any() and len(pairs) == 45
    assert "Simulated LSS data: n=500, p=10" in (tmp_path / "report.html").read_text()


def test_a_figure_is_written_as_png_and_embedded_in_the_page(tmp_path):
    pyplot = pytest.importorskip("matplotlib.pyplot")
    figure, ax = pyplot.subplots()
    ax.bar(["a", "b"], [1, 2])
    report = Report("figures")
    report.add_figure("bars", "Two bars", figure)
    pyplot.close(figure)
    written = report.write(tmp_path)
    assert [p.name for p in written] == ["bars.png", "report.html"]
    png = (tmp_path / "bars.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    page = Tables((tmp_path / "report.html").read_text())
    assert page.images == ["data:image/png;base64," + base64.b64encode(png).decode()]


def test_the_report_embeds_the_figures_of_pyinterp_plotting(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = run(capsys, "demo", "--n-samples", 500, "--n-features", 10, "--n-estimators", 30, "--out", tmp_path)
    figures = ["importances", "lssfind", "lssfind_response", "irf_scores", "irf_network"]
    assert f"{', '.join(f + '.png' for f in figures)}, report.html" in out
    page = Tables((tmp_path / "report.html").read_text())
    assert page.images == ["data:image/png;base64," + base64.b64encode((tmp_path / f"{f}.png").read_bytes()).decode()
                           for f in figures]


BLOCK_MATPLOTLIB = """
import sys
class NoMatplotlib:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "matplotlib":
            raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")
sys.meta_path.insert(0, NoMatplotlib())
from pyinterp.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_matplotlib_the_report_says_it_holds_the_tables(tmp_path):
    done = subprocess.run([sys.executable, "-c", BLOCK_MATPLOTLIB, "demo", "--n-samples", "300", "--n-features", "6",
                           "--n-estimators", "20", "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Figures skipped: matplotlib is not installed (pip install 'interptrees[plot]'); the "
                             "report holds the tables.") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["importances.csv", "irf.csv", "lssfind.csv", "pairs.csv",
                                                               "report.html"]


def test_the_installed_command(lss_file, tmp_path):
    command = Path(sys.executable).parent / "pyinterp"
    done = subprocess.run([command, "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and re.fullmatch(r"pyinterp \d+\.\d+\.\d+ \(distribution interptrees\)\n", done.stdout)
    done = subprocess.run([command, "importance", lss_file, "--target", "response", "--n-estimators", "10",
                           "--out", tmp_path], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "report.html").is_file() and (tmp_path / "importances.csv").is_file()
    done = subprocess.run([command, "importance", lss_file, "--target", "G"], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("pyinterp: error: --target: no column named 'G'") and done.stderr.count("\n") == 1


def test_ctrl_c_exits_with_130_and_one_line(tmp_path):
    """SIGINT (Ctrl-C) while `pyinterp all` fits: exit status 130 (128 + SIGINT, as shells report
    it), one line on stderr, no traceback; the installed command, seconds into a minute's work."""
    rng = np.random.RandomState(0)
    X = rng.rand(3000, 30)
    path = tmp_path / "big.csv"
    pd.DataFrame(X, columns=[f"G{j}" for j in range(30)]).assign(y=X[:, 0] + rng.rand(3000)).to_csv(path, index=False)
    command = Path(sys.executable).parent / "pyinterp"
    process = subprocess.Popen([command, "all", path, "--target", "y", "--n-estimators", "5000", "--out", tmp_path],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"},
                               # A test run started in the background of a shell script ignores
                               # SIGINT, and so would the command it starts.
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert "n=3000, p=30" in process.stdout.readline()  # the data are read: the fit begins
    time.sleep(0.5)
    sent = time.perf_counter()
    process.send_signal(signal.SIGINT)
    message = process.stderr.readline()
    stopped = time.perf_counter() - sent
    out, err = process.communicate(timeout=60)
    print(f"\npyinterp all: stopped {stopped:.3f} s, exited {time.perf_counter() - sent:.3f} s after SIGINT")
    assert process.returncode == 130
    assert message + err == "pyinterp: interrupted\n"
    assert not (tmp_path / "report.html").exists()


def test_ctrl_c_while_the_command_loads_exits_with_130_and_one_line():
    """issue 52, item 10: a Ctrl-C in the command's first second, while numpy and scikit-learn load,
    printed a traceback from inside their imports. The signal is sent once numpy's extension is
    mapped into the process, so the imports are under way (scikit-learn's take longer)."""
    command = Path(sys.executable).parent / "pyinterp"
    process = subprocess.Popen([command, "demo", "--n-estimators", "3000"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    maps = Path(f"/proc/{process.pid}/maps")
    if not maps.exists():
        process.kill()
        pytest.skip("no /proc to see the imports")
    deadline = time.monotonic() + 60
    while "_multiarray_umath" not in maps.read_text() and time.monotonic() < deadline:
        time.sleep(0.002)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, err, out) == (130, "pyinterp: interrupted\n", "")


def test_a_long_column_name_is_shortened_where_shown_and_whole_in_the_files(tmp_path, capsys, monkeypatch):
    """issue 52, items 6 and 11: one 100,000-character column name took 48 s and 1.8 GB, drawing
    figures that no file held (without --out) around the whole name."""
    long = "g" * 50_000 + "h" * 50_000
    rng = np.random.default_rng(0)
    X = rng.random((300, 5))
    path = tmp_path / "long.csv"
    pd.DataFrame(X, columns=[long, "b", "c", "d", "e"]).assign(y=X[:, 0] + 0.1 * rng.random(300)).to_csv(path,
                                                                                                       index=False)

    def drawn(*args):
        raise AssertionError("a figure was drawn without --out")

    with monkeypatch.context() as patched:
        patched.setattr(Report, "add_figure", drawn)
        out = run(capsys, "all", path, "--target", "y", "--n-estimators", 10)
    assert max(map(len, out.splitlines())) < 1000  # the longest prose lines hold about 270
    assert "g" * 29 + "…" + "h" * 30 in out
    out = run(capsys, "all", path, "--target", "y", "--n-estimators", 10, "--out", tmp_path / "out")
    assert read_csv_exact(tmp_path / "out" / "importances.csv")["feature"].iloc[0] == long
    assert max(map(len, out.splitlines())) < 1000
