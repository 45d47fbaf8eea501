"""pyinterp.plotting: each plot drawn to a PNG on the Agg backend, and checked by what it drew
(bars, tick labels, lines, markers, edges), not by pixels."""

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection, PathCollection, QuadMesh  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402
from sklearn.ensemble import RandomForestRegressor as SkRegressor  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from pyinterp import (DLBCD, IterativeRandomForest, LSSFind, PartitionedRatio, RandomForestRegressor,  # noqa: E402
                      SkinnyTreesRegressor, importance)
from pyinterp import plotting  # noqa: E402
from pyinterp.datasets import (make_collinear_dictionary, make_correlated_linear, make_dictionary_signals,  # noqa: E402
                               make_lss, make_sparse_coefficients)
from pyinterp.interactions import InteractionTable, prevalent_sets  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def save(artist, tmp_path):
    fig = artist if isinstance(artist, plt.Figure) else artist.figure
    path = tmp_path / "plot.png"
    fig.savefig(path)
    assert path.stat().st_size > 0


def bars(ax):
    return [p for p in ax.patches if isinstance(p, matplotlib.patches.Rectangle)]


def tick_labels(ax, axis="y"):
    ticks = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
    return [t.get_text() for t in ticks]


@pytest.fixture(scope="module")
def lss_data():
    X, y, truth = make_lss(n_samples=400, n_features=8, n_interactions=1, order=2, snr=5, random_state=0)
    return pd.DataFrame(X, columns=[f"GENE{j}" for j in range(8)]), y, truth


@pytest.fixture(scope="module")
def lss(lss_data):
    X, y, _ = lss_data
    return LSSFind(n_estimators=20, max_order=3, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def irf(lss_data):
    X, y, _ = lss_data
    return IterativeRandomForest(2, 30, n_bootstraps=3, rit_n_trees=20, rit_report="nodes", rit_min_size=1,
                                 random_state=0).fit(X, y)


def test_importances_bars_error_bars_and_names(lss_data, tmp_path):
    X, y, _ = lss_data
    forest = RandomForestRegressor(30, random_state=0).fit(X, y)
    ax = plotting.plot_importances(forest, X, y, top=5)
    save(ax, tmp_path)
    mean, se = importance.mdi_oob(forest, X, y, return_std=True)
    top = np.argsort(-mean, kind="stable")[:5]
    assert tick_labels(ax) == [f"GENE{k}" for k in top]
    drawn = bars(ax)
    assert len(drawn) == 10  # MDI-oob and MDI per feature, never p bars
    np.testing.assert_allclose([b.get_width() for b in drawn[:5]], mean[top])
    np.testing.assert_allclose([b.get_width() for b in drawn[5:]], importance.mdi(forest, normalize=False)[top])
    errors = [c for c in ax.collections if isinstance(c, LineCollection)]
    segments = errors[0].get_segments()
    assert len(segments) == 5
    np.testing.assert_allclose([s[1, 0] - s[0, 0] for s in segments], 2 * se[top])
    # a scikit-learn forest: all 8 features when top exceeds them
    sk = SkRegressor(20, random_state=0).fit(X, y)
    assert len(bars(plotting.plot_importances(sk, X, y, top=100))) == 16


def test_lssfind_picture(lss, tmp_path):
    ax = plotting.plot_lssfind(lss, top=1)
    save(ax, tmp_path)
    mined = prevalent_sets(lss.paths_, lss._mining_threshold(), lss.max_order)
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert sum(len(c.get_offsets()) for c in points) == len(mined)
    stars = points[2].get_offsets()
    assert len(stars) == len(lss.minimal_) == 1
    np.testing.assert_allclose(stars[:, 1], lss.minimal_["dwp"])
    assert [t.get_text() for t in ax.texts] == ["GENE0- & GENE1-"]
    bounds = [c for c in ax.collections if isinstance(c, LineCollection)][0]
    np.testing.assert_allclose([s[0, 1] for s in bounds.get_segments()], [0.5, 0.25, 0.125])
    assert ax.get_yscale() == "log"


def test_irf_scores_three_panels(irf, tmp_path):
    fig = plotting.plot_irf_scores(irf, top=4)
    save(fig, tmp_path)
    panels = fig.axes
    assert [ax.get_title() for ax in panels] == ["stability", "prevalence", "precision"]
    table = irf.interactions_[:4]
    assert tick_labels(panels[0]) == [table.label(f) for f in table.features]
    for ax in panels:
        assert len(bars(ax)) == 4
        np.testing.assert_allclose([b.get_width() for b in bars(ax)], np.nan_to_num(table[ax.get_title()]))


def test_interaction_network_edges_nodes_and_widths(tmp_path):
    table = InteractionTable([((0, 1), (1, -1)), ((1, 1), (2, 1), (3, -1)), ((0, -1), (4, 1))],
                             {"stability": np.array([0.9, 0.6, 0.3])}, ["a", "b", "c", "d", "e"])
    ax = plotting.plot_interaction_network(table)
    save(ax, tmp_path)
    edges = [c for c in ax.collections if isinstance(c, LineCollection)][0]
    assert len(edges.get_segments()) == 4  # a-b, and b-c, b-d, c-d from the order-3 set; e is below 0.5
    np.testing.assert_allclose(edges.get_linewidths(), [5.0, 1.0, 1.0, 1.0])
    assert [t.get_text() for t in ax.texts] == ["a", "b", "c", "d"]
    nodes = [c for c in ax.collections if isinstance(c, PathCollection)][0]
    assert len(nodes.get_offsets()) == 4
    # no label lies on a dot: every label's box is farther from every dot's centre than its radius
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    radius = np.sqrt(nodes.get_sizes()[0]) / 2 * ax.figure.dpi / 72  # marker size in points^2, to pixels
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        for x, y in ax.transData.transform(nodes.get_offsets()):
            nearest = (np.clip(x, box.x0, box.x1), np.clip(y, box.y0, box.y1))
            assert np.hypot(x - nearest[0], y - nearest[1]) > radius, text.get_text()
    one = plotting.plot_interaction_network(table, top=1)
    assert len([c for c in one.collections if isinstance(c, LineCollection)][0].get_segments()) == 1
    everything = plotting.plot_interaction_network(table, threshold=0.0)
    assert len([c for c in everything.collections if isinstance(c, LineCollection)][0].get_segments()) == 5


def test_interaction_network_of_fitted_finders(lss, irf, tmp_path):
    ax = plotting.plot_interaction_network(lss)  # its selected sets, weighted by adjusted DWP
    save(ax, tmp_path)
    pairs = {tuple(sorted({k for k, _ in f})) for f in lss.selected_.features if len(f) > 1}
    assert len([c for c in ax.collections if isinstance(c, LineCollection)][0].get_segments()) == len(pairs)
    stable = irf.interactions_.select(irf.interactions_["stability"] >= 0.5)
    names = {irf.feature_names_in_[k] for f in stable.features for k, _ in f}
    assert {t.get_text() for t in plotting.plot_interaction_network(irf).texts} == names


def test_interaction_response_cells_and_surface(tmp_path):
    # Four quadrants of 0.25-spaced points, y the quadrant's number: cell means are exact.
    grid = np.array([(a, b) for a in (0.1, 0.3, 0.6, 0.8) for b in (0.1, 0.3, 0.6, 0.8)])
    y = 1.0 * (grid[:, 0] > 0.5) + 2.0 * (grid[:, 1] > 0.5)
    X = np.vstack([grid] * 5)
    y = np.tile(y, 5)
    lss = LSSFind(n_estimators=10, bootstrap=False, max_order=2, random_state=0).fit(X, y)
    rule = lss.rule([(0, 1), (1, 1)])
    np.testing.assert_allclose(rule.thresholds, [0.45, 0.45])
    ax = plotting.plot_interaction_response(rule, X, y, kind="cells")
    save(ax, tmp_path)
    assert [b.get_height() for b in bars(ax)] == [0.0, 2.0, 1.0, 3.0]
    assert tick_labels(ax, "x") == ["x0- & x1-", "x0- & x1+", "x0+ & x1-", "x0+ & x1+"]
    assert [t.get_text() for t in ax.texts] == ["n=20"] * 4
    assert [b.get_facecolor() == bars(ax)[3].get_facecolor() for b in bars(ax)] == [False, False, False, True]
    ax = plotting.plot_interaction_response(rule, X, y, bins=2)  # auto: the surface for order 2
    mesh = [c for c in ax.collections if isinstance(c, QuadMesh)][0]
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(2, 2), [[0.0, 1.0], [2.0, 3.0]])
    assert (ax.lines[0].get_xdata()[0], ax.lines[1].get_ydata()[0]) == tuple(rule.thresholds)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x0", "x1")
    with pytest.raises(ValueError, match="order 2"):
        plotting.plot_interaction_response(lss.rule([(0, 1)]), X, y, kind="surface")
    with pytest.raises(ValueError, match="y has"):
        plotting.plot_interaction_response(rule, X, y[:-1])
    with pytest.raises(TypeError, match="rule must be"):
        plotting.plot_interaction_response(lss, X, y)
    missing = X.copy()
    missing[:, 1] = np.nan
    with pytest.raises(ValueError, match="no row to draw"):
        plotting.plot_interaction_response(rule, missing, y, kind="surface")


@pytest.fixture(scope="module")
def ratio():
    rng = np.random.RandomState(0)
    precision = np.eye(6) + np.diag([0.4] * 5, 1) + np.diag([0.4] * 5, -1)
    X = rng.multivariate_normal(np.zeros(6), np.linalg.inv(precision), size=200)
    return PartitionedRatio(3, n_lambdas=8, random_state=0).fit(pd.DataFrame(X, columns=list("abcdef")))


def test_ratio_path_lines_and_entry_points(ratio, tmp_path):
    ax = plotting.plot_ratio_path(ratio, top=4)
    save(ax, tmp_path)
    first = np.argsort(-ratio.entry_lambda_, kind="stable")[:4]
    paths, entries = ax.lines[0:8:2], ax.lines[1:8:2]
    norms = np.sqrt((ratio.coef_path_[:ratio.n_cross_] ** 2).sum(axis=1))
    for line, entry, g in zip(paths, entries, first):
        np.testing.assert_allclose(line.get_ydata(), norms[g])
        assert entry.get_xdata()[0] == ratio.entry_lambda_[g] and entry.get_marker() == "o"
    assert ax.lines[8].get_xdata()[0] == ratio.lambda_
    u, v = ratio.pairs_[first[0]]
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == f"{'abcdef'[u]} – {'abcdef'[v]}"
    assert ax.get_xscale() == "log" and ax.xaxis_inverted()


@pytest.fixture(scope="module")
def dlbcd():
    D = make_collinear_dictionary(5, 0.5)
    X = make_dictionary_signals(D, make_sparse_coefficients(200, 5, "sg", sparsity=2, random_state=0))
    return DLBCD(tau=0.5, random_state=0).fit(X)


def test_dictionary_atoms_and_objective_history(dlbcd, tmp_path):
    ax = plotting.plot_dictionary_atoms(dlbcd, top=3)
    save(ax, tmp_path)
    image = [a for a in ax.get_children() if isinstance(a, AxesImage)][0]
    np.testing.assert_array_equal(image.get_array(), dlbcd.components_[:, :3])
    assert tick_labels(ax) == [f"x{k}" for k in range(5)]
    ax = plotting.plot_objective_history(dlbcd)
    save(ax, tmp_path)
    assert len(ax.lines) == 2
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), dlbcd.l1_objective_history_)
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), dlbcd.objective_history_)
    assert np.all(np.diff(ax.lines[1].get_ydata()) <= 0)  # the objective never increases


@pytest.fixture(scope="module")
def skinny():
    X, y, _ = make_correlated_linear(120, 20, correlation=0.5, random_state=0)
    return SkinnyTreesRegressor(n_trees=3, depth=2, lambda2=2.0, learning_rate=0.1, temperature=0.01, batch_size=32,
                                max_epochs=20, random_state=0).fit(X[:90], y[:90], X[90:], y[90:])


def test_skinny_path(skinny, tmp_path):
    model = skinny
    ax = plotting.plot_skinny_path(model)
    save(ax, tmp_path)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), model.history_["n_selected"])
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), np.arange(1, len(model.history_["n_selected"]) + 1))
    star = ax.lines[1]
    assert star.get_marker() == "*"
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (model.best_epoch_ + 1,
                                                         model.history_["n_selected"][model.best_epoch_])
    twin = [a for a in ax.figure.axes if a is not ax]
    assert len(twin) == 1
    np.testing.assert_array_equal(twin[0].lines[0].get_ydata(), model.history_["val_score"])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["selected features", "returned epoch",
                                                                   "validation score"]


# Each single-axes plot with what it draws from (fixtures by name).
SINGLE_AXES = {
    "plot_importances": lambda f: (plotting.plot_importances, (RandomForestRegressor(10, random_state=0).fit(
        *f("lss_data")[:2]), *f("lss_data")[:2])),
    "plot_lssfind": lambda f: (plotting.plot_lssfind, (f("lss"),)),
    "plot_interaction_network": lambda f: (plotting.plot_interaction_network, (f("irf"),)),
    "plot_interaction_response": lambda f: (plotting.plot_interaction_response,
                                            (f("lss").rule(f("lss").minimal_.features[0]), *f("lss_data")[:2])),
    "plot_ratio_path": lambda f: (plotting.plot_ratio_path, (f("ratio"),)),
    "plot_dictionary_atoms": lambda f: (plotting.plot_dictionary_atoms, (f("dlbcd"),)),
    "plot_objective_history": lambda f: (plotting.plot_objective_history, (f("dlbcd"),)),
    "plot_skinny_path": lambda f: (plotting.plot_skinny_path, (f("skinny"),)),
}


@pytest.mark.parametrize("name", SINGLE_AXES)
def test_a_plot_given_ax_draws_there_and_returns_it(name, request):
    plot, args = SINGLE_AXES[name](request.getfixturevalue)
    fig, (other, ax) = plt.subplots(1, 2)
    assert plot(*args, ax=ax) is ax
    assert ax.has_data() and not other.has_data()
    assert plt.get_fignums() == [fig.number]  # no figure of its own


def test_every_single_axes_plot_takes_ax():
    import inspect

    takes_ax = {name for name in plotting.__all__ if "ax" in inspect.signature(getattr(plotting, name)).parameters}
    assert takes_ax == set(SINGLE_AXES)


def test_irf_scores_draw_their_three_panels_on_the_given_figure(irf):
    fig = plt.figure()
    assert plotting.plot_irf_scores(irf, top=3, fig=fig) is fig
    assert [ax.get_title() for ax in fig.axes] == ["stability", "prevalence", "precision"]
    assert all(len(bars(ax)) == 3 for ax in fig.axes)
    assert plt.get_fignums() == [fig.number]
    assert "drawn on ``fig``" in " ".join(plotting.plot_irf_scores.__doc__.split())  # its docstring says so


@pytest.mark.parametrize("plot, argument, unfitted, args", [
    (plotting.plot_importances, "forest", RandomForestRegressor(), ([[0.0]], [0.0])),
    (plotting.plot_lssfind, "lss", LSSFind(), ()),
    (plotting.plot_irf_scores, "irf", IterativeRandomForest(), ()),
    (plotting.plot_interaction_network, "result", IterativeRandomForest(), ()),
    (plotting.plot_ratio_path, "ratio", PartitionedRatio(2), ()),
    (plotting.plot_dictionary_atoms, "dlbcd", DLBCD(), ()),
    (plotting.plot_objective_history, "dlbcd", DLBCD(), ()),
    (plotting.plot_skinny_path, "skinny", SkinnyTreesRegressor(), ()),
])
def test_bad_input_names_the_argument(plot, argument, unfitted, args):
    with pytest.raises(NotFittedError):
        plot(unfitted, *args)
    with pytest.raises(TypeError, match=f"^{argument} must be"):
        plot("not an estimator", *args)


def test_bad_top(irf):
    with pytest.raises(ValueError, match="top must be a positive int"):
        plotting.plot_irf_scores(irf, top=0)


def test_no_matplotlib_import_until_a_plot_and_then_an_error_naming_the_extra():
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "import numpy as np\n"
            "from pyinterp.plotting import plot_interaction_network\n"
            "from pyinterp.interactions import InteractionTable\n"
            "table = InteractionTable([((0, 1), (1, 1))], {'stability': np.array([1.0])})\n"
            "try:\n    plot_interaction_network(table)\n"
            "except ImportError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'interptrees[plot]'" in out
