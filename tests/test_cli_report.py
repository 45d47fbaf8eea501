"""What the command line writes: its CSV tables are the Python API's results on the same data and
seed, report.html holds them (and embeds figures) with a sentence for every column and a record of
the run, sorts and searches them without fetching anything, its figures' labels do not overlap,
each skipped step says why, and the installed entry point runs."""

import base64
import hashlib
import html
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import read_csv_exact

from pyinterp import IterativeRandomForest, LSSFind, RandomForestRegressor, __version__, cli
from pyinterp.cli import figures, jobs, report
from pyinterp.cli.glossary import COLUMNS, explain
from pyinterp.cli.report import HTML_ROWS, Report
from pyinterp.datasets import make_lss
from pyinterp.importance import mdi_oob
from pyinterp.interactions import NoInteractionWarning
from pyinterp.io.packing import pack_counts


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
    assert "(2 iterations, 20 trees, 3 bootstraps of 4 trees, 60 RITs of depth 3" in text
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
    assert "Wrote importances.csv, pairs.csv, triples.csv, lssfind.csv, irf.csv, " in out
    assert f"report.html to {tmp_path}\n" in out
    page = (tmp_path / "report.html").read_text()
    assert "Top 8 of 8 features by MDI-oob" in page  # the printed lines are on the page
    html_tables = Tables(page).tables
    assert len(html_tables) == 5
    for name, shown in zip(("importances", "pairs", "triples", "lssfind", "irf"), html_tables):
        table = pd.read_csv(tmp_path / f"{name}.csv", keep_default_na=False)
        assert shown[0] == table.columns.tolist()
        rows = table.head(HTML_ROWS).itertuples(index=False)
        assert shown[1:] == [[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row] for row in rows]
        assert re.search(rf"(All {len(table)} rows; {name}\.csv holds them all|One row; {name}\.csv holds it)", page)


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


def test_a_long_table_shows_its_first_rows_on_the_page(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(report, "HTML_ROWS", 30)
    rng = np.random.RandomState(0)
    X = rng.rand(60, 50)
    pd.DataFrame(X).add_prefix("g").assign(y=X[:, 0]).to_csv(tmp_path / "wide.csv", index=False)
    run(capsys, "importance", tmp_path / "wide.csv", "--target", "y", "--n-estimators", 10, "--out", tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert len(Tables(page).tables[0]) == 1 + 30
    assert "The first 30 of 50 rows (sorting and search act on these); importances.csv holds them all." in page
    assert len(pd.read_csv(tmp_path / "importances.csv")) == 50


def test_a_table_of_wide_rows_is_cut_at_its_byte_budget(tmp_path, monkeypatch):
    """The page holds up to HTML_ROWS rows of a table, fewer when they would take more than
    HTML_BYTES (a page of many MB opens slowly); the CSV holds every row."""
    monkeypatch.setattr(report, "HTML_BYTES", 2000)
    page = Report("wide")
    page.add_table("wide", "Wide rows", ["name", "value"], [("g" * 90, float(k)) for k in range(100)])
    page.write(tmp_path)
    text = (tmp_path / "report.html").read_text()
    shown = len(Tables(text).tables[0]) - 1
    assert 10 <= shown < 20 and f"The first {shown} of 100 rows" in text
    assert len(pd.read_csv(tmp_path / "wide.csv")) == 100


def test_classification_says_it_skips_lssfind(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = rng.rand(200, 5)
    label = np.where((X[:, 0] > 0.5) & (X[:, 1] > 0.5), "tumour", "normal")
    pd.DataFrame(X, columns=list("abcde")).assign(status=label).to_csv(tmp_path / "data.csv", index=False)
    out = run(capsys, "interactions", tmp_path / "data.csv", "--target", "status", "--n-estimators", 20,
              "--out", tmp_path / "out")
    assert ("LSSFind skipped: it finds interactions of a continuous response (regression); the target is classes. "
            "iRF below takes classes.") in out
    assert [p.name for p in sorted((tmp_path / "out").glob("*.csv"))] == ["irf.csv", "pairs.csv", "triples.csv"]
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
    assert "Wrote importances.csv, pairs.csv, triples.csv, lssfind.csv, irf.csv, " in out
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
                                                               "report.html", "triples.csv"]


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


def test_a_printed_interaction_keeps_every_feature_and_its_sign():
    long_a, long_b = "GENE_A_" + "a" * 60 + "+", "GENE_B_" + "b" * 60 + "-"
    printed = jobs._printed(f"{long_a} & {long_b}")
    assert len(printed) <= jobs.SHOWN and printed.count(" & ") == 1
    first, second = printed.split(" & ")
    assert first.startswith("GENE_A") and first.endswith("a+") and second.startswith("GENE_B") and second.endswith("b-")
    assert jobs._printed("x1+ & x2-") == "x1+ & x2-"
    assert jobs._printed(long_a) == long_a[:29] + "…" + long_a[-30:]


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


def write_plink(stem, G, trait):
    """A PLINK 1 fileset by hand: G counts allele 1 (the .bim's fifth column), 2 bits a call."""
    p = G.shape[1]
    Path(f"{stem}.bed").write_bytes(bytes([0x6C, 0x1B, 0x01]) + pack_counts(G.T).tobytes())
    Path(f"{stem}.bim").write_text("".join(f"1 rs{k} 0 {1000 * (k + 1)} A G\n" for k in range(p)))
    Path(f"{stem}.fam").write_text("".join(f"F{i} S{i} 0 0 0 {t:.4f}\n" for i, t in enumerate(trait)))


class About(HTMLParser):
    """The page's record of the run: (name, text) of each <dt> and <dd> of its dl.about."""

    def __init__(self, text):
        super().__init__()
        self.entries, self._inside, self._tag = [], False, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "dl":
            self._inside = dict(attrs).get("class") == "about"
        elif self._inside and tag in ("dt", "dd"):
            self._tag = tag
            if tag == "dt":
                self.entries.append(["", ""])

    def handle_endtag(self, tag):
        self._inside = self._inside and tag != "dl"
        self._tag = None if tag in ("dt", "dd") else self._tag

    def handle_data(self, data):
        if self._tag:
            self.entries[-1][self._tag == "dd"] += data


def test_every_column_of_every_table_is_explained_on_the_page(lss_file, tmp_path, capsys):
    """Every header the commands write (the demo's truth, both p-value tests, knockoffs, --holdout's
    tests, --genes) has its sentence under its table, and every sentence is of a header some
    command writes. The page of the genotype run records its fileset and gene list."""
    rng = np.random.default_rng(0)
    G = rng.binomial(2, 0.4, size=(200, 12))
    write_plink(tmp_path / "cohort", G, 2.0 * (G[:, 1] > 0) * (G[:, 2] > 0) + rng.standard_normal(200))
    (tmp_path / "glist.txt").write_text("1 1 5500 GENE_A\n")
    fast = ["--n-estimators", 15, "--lss-estimators", 20, "--n-iterations", 2, "--n-bootstraps", 2, "--rit-trees", 50]
    runs = {"demo": ["demo", "--n-samples", 300, "--n-features", 8],
            "tests": ["all", lss_file, "--target", "response", "--pvalues", "altmann", "--n-permutations", 5,
                      "--knockoffs", "--holdout", 0.5],
            "janitza": ["importance", lss_file, "--target", "response", "--pvalues", "janitza"],
            "genes": ["all", tmp_path / "cohort.bed", "--genes", tmp_path / "glist.txt", "--pvalues", "none"]}
    written = set()
    for name, argv in runs.items():
        run(capsys, *argv, *fast, "--out", tmp_path / name)
        page = (tmp_path / name / "report.html").read_text()
        for path in (tmp_path / name).glob("*.csv"):
            header = path.read_text().splitlines()[0].split(",")
            for column in header:
                assert explain(path.stem, column), f"{path.stem}.csv: {column} is not explained"
                assert f"<dt>{column}</dt><dd>{html.escape(explain(path.stem, column))}</dd>" in page
            written.update((path.stem, column) for column in header)
    assert {"genes", "knockoff_qvalue", "janitza_importance", "altmann_importance", "truth", "cpe"} <= \
        {column for _, column in written}
    for key in COLUMNS:
        table, _, column = key.rpartition(":")
        assert any(column == c and table in ("", t) for t, c in written), f"{key} is in no table"
    inputs = [text for name, text in About((tmp_path / "genes" / "report.html").read_text()).entries
              if name == "input"]
    assert [Path(text.split(" (")[0]).name for text in inputs] == ["cohort.bed", "cohort.bim", "cohort.fam",
                                                                  "glist.txt"]
    glist = (tmp_path / "glist.txt").read_bytes()
    assert inputs[-1].endswith(f" ({len(glist)} bytes, SHA-256 {hashlib.sha256(glist).hexdigest()})")


def test_the_page_records_the_version_command_seed_inputs_and_date(lss_file, tmp_path, capsys):
    argv = ["importance", str(lss_file), "--target", "response", "--n-estimators", "10", "--random-state", "7",
            "--out", str(tmp_path)]
    before = datetime.now(timezone.utc).replace(microsecond=0)
    run(capsys, *argv)
    about = About((tmp_path / "report.html").read_text()).entries
    assert [name for name, _ in about] == ["pyinterp", "command", "directory", "seed", "input", "date"]
    about = dict(about)
    assert about["pyinterp"].startswith(f"{__version__} (Python ")
    assert about["command"] == shlex.join(["pyinterp", *argv])
    assert about["directory"] == os.getcwd()
    assert about["seed"].startswith("7 (--random-state")
    data = lss_file.read_bytes()
    assert about["input"] == f"{lss_file.resolve()} ({len(data):,} bytes, SHA-256 {hashlib.sha256(data).hexdigest()})"
    assert before <= datetime.fromisoformat(about["date"]) <= datetime.now(timezone.utc) + timedelta(seconds=1)


def test_the_page_fetches_nothing_and_fits_its_width(lss_file, tmp_path, capsys):
    """Sorting and search are an inline script; nothing is fetched (no script, style, font or image
    from elsewhere); text wraps and figures scale to the window instead of running off it."""
    run(capsys, "all", lss_file, "--target", "response", "--n-estimators", 10, "--out", tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert page.count("<script>") == 1 and "<script src" not in page and "<link" not in page
    assert not re.search(r"(src|href)=['\"]?(https?:|//)", page) and "@import" not in page and "url(" not in page
    assert re.search(r"pre\{[^}]*white-space:pre-wrap", page) and re.search(r"img\{[^}]*max-width:100%", page)
    assert re.search(r"td\.t\{[^}]*overflow-wrap:anywhere", page) and re.search(r"\.box\{[^}]*overflow:auto", page)
    assert "<td class='t'>G" in page  # names and rules are text cells, which wrap


CHECK = """<script>
const box = document.querySelector(".box"), heads = box.querySelectorAll("th");
const shown = k => [...box.querySelectorAll("tbody tr")].filter(r => !r.hidden).map(r => r.cells[k].textContent);
const seen = {};
heads[2].click(); seen.up = shown(2); seen.upSort = heads[2].getAttribute("aria-sort");
heads[2].click(); seen.down = shown(2); seen.downSort = heads[2].getAttribute("aria-sort");
heads[1].click(); seen.names = shown(1);
const search = document.querySelector("input[type=search]");
search.value = "G1 "; search.dispatchEvent(new Event("input")); seen.found = shown(1);
seen.count = search.nextElementSibling.textContent;
const out = document.createElement("pre"); out.id = "seen"; out.textContent = JSON.stringify(seen);
document.body.append(out);
</script>"""


def test_the_tables_sort_and_search_in_a_browser(lss_file, tmp_path, capsys):
    """A header click sorts (numbers as numbers; again, the other way), the search box hides the
    rows without every word; run in headless Chromium where it is installed."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium to run the page's script")
    run(capsys, "importance", lss_file, "--target", "response", "--n-estimators", 10, "--out", tmp_path)
    page = tmp_path / "check.html"
    page.write_text((tmp_path / "report.html").read_text().replace("</body>", CHECK + "</body>"))
    # the browser without the sanitizer job's preloaded runtimes (under them Chromium hangs)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}
    done = subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120, env=env)
    seen = json.loads(html.unescape(re.search(r'<pre id="seen">(.*?)</pre>', done.stdout).group(1)))
    values = [float(v) for v in seen["up"]]
    assert values == sorted(values) and len(values) == 8 and seen["upSort"] == "ascending"
    assert [float(v) for v in seen["down"]] == sorted(values, reverse=True) and seen["downSort"] == "descending"
    assert seen["names"] == [f"G{j}" for j in range(8)]
    assert seen["found"] == ["G1"] and seen["count"] == "1 of 8 rows match"


def test_figure_labels_do_not_overlap(tmp_path, capsys, monkeypatch):
    """Long names on every figure, 12 bars: drawn by Agg, no two tick labels of an axis nor two
    texts of an Axes overlap, and iRF's bars name each feature of their interaction on a line."""
    pytest.importorskip("matplotlib")
    X, y, _ = make_lss(n_samples=300, n_features=12, n_interactions=2, order=2, snr=5, random_state=1)
    names = [f"ENSG{j:011d}_a_long_transcript_name_of_gene_{j}_variant_{j}" for j in range(12)]
    pd.DataFrame(X, columns=names).assign(y=y).to_csv(tmp_path / "long.csv", index=False)
    drawn = {}
    monkeypatch.setattr(Report, "add_figure", lambda self, name, title, figure: drawn.setdefault(name, figure))
    run(capsys, "all", tmp_path / "long.csv", "--target", "y", "--n-estimators", 30, "--top", 12, "--n-iterations", 2,
        "--n-bootstraps", 3, "--rit-trees", 100, "--out", tmp_path / "out")
    assert {"importances", "irf_scores", "irf_network"} <= set(drawn)
    for name, figure in drawn.items():
        assert figures.overlaps(figure) == [], name
    labels = [t.get_text() for t in drawn["irf_scores"].axes[0].get_yticklabels()]
    assert len(labels) == 12 and all(len(line.removesuffix(" &")) <= 40 for label in labels
                                     for line in label.split("\n"))
    assert all(len(label.split(" &\n")) == len(label.split("&")) for label in labels)  # a feature a line here


def test_a_crowded_figure_grows_until_its_labels_part():
    Figure = pytest.importorskip("matplotlib.figure").Figure
    figure = Figure(figsize=(4, 2), layout="constrained")
    ax = figure.subplots()
    ax.barh(range(40), np.arange(40))
    ax.set_yticks(range(40), [f"feature {k}" for k in range(40)])
    assert figures.overlaps(figure)
    figures.spread(figure)
    assert figures.overlaps(figure) == [] and figure.get_size_inches()[1] > 6
