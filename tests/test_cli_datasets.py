"""The demo command and the simulator behind it (the command on files: test_cli_files.py)."""

import re

import numpy as np
import pytest

from pyinterp import cli
from pyinterp.datasets import make_lss


def test_make_lss_threshold_and_signal():
    X, y, interactions = make_lss(n_samples=20000, n_features=10, n_interactions=2, order=2, snr=1e12,
                                  random_state=0)
    tau = (1 - 0.5 ** 0.5) ** 0.5  # 0.5412 for K = L = 2 (spec table)
    assert tau == pytest.approx(0.5412, abs=1e-4)
    assert interactions == [((0, -1), (1, -1)), ((2, -1), (3, -1))]
    signal = ((X[:, 0] < tau) & (X[:, 1] < tau)).astype(float) + ((X[:, 2] < tau) & (X[:, 3] < tau))
    np.testing.assert_allclose(y, signal, atol=1e-4)
    assert np.mean(signal > 0) == pytest.approx(0.5, abs=0.02)  # half the rows in the union


def test_make_lss_snr():
    _, y, _ = make_lss(n_samples=20000, n_features=4, n_interactions=1, order=2, snr=2.0, random_state=1)
    # Var(y) = Var(signal) (1 + 1/SNR) = 0.25 * 1.5
    assert np.var(y) == pytest.approx(0.375, rel=0.05)
    with pytest.raises(ValueError, match="exceeds n_features"):
        make_lss(n_features=3, n_interactions=2, order=2)


def test_demo_reports_fit_oob_and_true_features(capsys):
    assert cli.main(["demo", "--n-samples", "1000", "--n-estimators", "50"]) == 0
    out = capsys.readouterr().out
    assert "out-of-bag R^2" in out
    assert "4 of the 4 relevant features are the top 4 by MDI" in out
    for k in range(4):
        assert f"x{k} " in out
    # Interactions: both true pairs found by LSSFind and listed by iRF, each marked as true.
    lss = out[out.index("LSSFind"):out.index("Iterative random forest")]
    assert lss.count("  true") == 2 and "x0- & x1-" in lss and "x2- & x3-" in lss
    assert out[out.index("Iterative random forest"):].count("  true") == 2


def test_demo_at_its_defaults_prints_the_truth_first(capsys):
    # The README's `pyinterp demo` (issue 53, item 5): in each table the true features or
    # interactions come first, and iRF's default keeps them alone in its tier of rules.
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    sections = re.split(r"\n(?=Top 10 of|Pair scan|LSSFind \(|Iterative random forest \()", out)
    tables = {name: next(s for s in sections if s.startswith(name)).splitlines()
              for name in ("Top 10 of", "Pair scan", "LSSFind (", "Iterative random forest (")}
    truth = {"Top 10 of": "relevant", "Pair scan": "true", "LSSFind (": "true", "Iterative random forest (": "true"}
    for name, lines in tables.items():
        rows = [line for line in lines if re.match(r"\s+(\d+\s+x\d|x\d+[+-] &)", line)]
        n_true = 4 if name == "Top 10 of" else 2
        expected = [True] * n_true + [False] * (len(rows) > n_true)
        assert [line.endswith(truth[name]) for line in rows[:n_true + 1]] == expected, name
    irf = [line.split() for line in tables["Iterative random forest ("] if re.match(r"\s+x\d+[+-] &", line)]
    assert [row[3] for row in irf[:2]] == ["0", "0"]  # the tier column: both are rules
    assert "\n  (tier 0: rules, passing R iRF's filters" in out  # and the page says what the tiers are
    assert "class of interest: y >= " in out and "direction -1: rules that lower y" in out


def test_demo_on_a_csv_file_is_the_all_command(tmp_path, capsys):
    rng = np.random.RandomState(0)
    X = rng.rand(120, 3)
    label = np.where(X[:, 1] > 0.5, "tumour", "normal")
    path = tmp_path / "data.csv"
    lines = ["a,b,c,status"] + [f"{r[0]},{r[1]},{r[2]},{s}" for r, s in zip(X, label)]
    path.write_text("\n".join(lines) + "\n")
    assert cli.main(["demo", str(path), "--target", "status", "--n-estimators", "30"]) == 0
    out = capsys.readouterr().out
    assert "classification" in out and "out-of-bag accuracy" in out
    assert out.index("     1  b ") > 0
    assert cli.main(["all", str(path), "--target", "status", "--n-estimators", "30"]) == 0
    untimed = lambda text: re.sub(r"[0-9.]+ s\b", "", text)
    assert untimed(capsys.readouterr().out) == untimed(out)
