// Python bindings of the importance measures.
#include <pybind11/stl.h>

#include <limits>
#include <type_traits>
#include <string>

#include "bindings.hpp"
#include "importance/dstump.hpp"
#include "importance/importance.hpp"
#include "importance/shap.hpp"
#include "py_forest_inputs.hpp"
#include "py_sklearn_trees.hpp"
#include "py_util.hpp"

namespace pyinterp {
namespace {

int32_t n_outputs(const Forest& f) { return f.n_outputs; }
int32_t n_outputs(const SklearnForestNodes&) { return 1; }

template <class Trees>
Targets targets_of(const Trees& f, const py::object& y, const py::object& sample_weight, int64_t n) {
  if (n_outputs(f) != 1)
    throw std::invalid_argument("out-of-bag measures read one output; the forest has " + std::to_string(n_outputs(f)));
  Targets t;
  if (f.n_classes > 0) {
    t.classes = checked_array<int32_t>(y, {n}, "y (class indices)").data();
    for (int64_t i = 0; i < n; ++i)
      if (t.classes[i] < 0 || t.classes[i] >= f.n_classes) throw std::invalid_argument("class index out of range");
  } else {
    t.y = checked_array<double>(y, {n}, "y").data();
  }
  t.sample_weight = optional_data<double>(sample_weight, {n}, "sample_weight");
  return t;
}

ShapAlgorithm shap_algorithm(const std::string& name) {
  if (name == "auto") return ShapAlgorithm::automatic;
  if (name == "patterns") return ShapAlgorithm::patterns;
  if (name == "walk") return ShapAlgorithm::walk;
  throw std::invalid_argument("algorithm must be 'auto', 'patterns' or 'walk', not '" + name + "'");
}

py::tuple importance_arrays(const Importance& imp) {
  return py::make_tuple(copy_array(imp.mean), copy_array(imp.std_error), imp.n_trees);
}

// The out-of-bag measures of a Trees (Forest, or SklearnTrees with their in-bag counts).
template <class Trees>
void def_oob_importance(py::module_& m) {
  m.def(
      "oob_importance",
      [](const Trees& trees, const py::object& X, const py::object& y, const py::object& sample_weight,
         OobMeasure measure, int n_threads, bool recorded) {
        const auto& f = trees_of(trees);
        const MatrixView v = matrix_view(X);
        const Targets t = targets_of(f, y, sample_weight, v.n_rows);
        Importance imp;
        {
          py::gil_scoped_release release;
          if constexpr (std::is_same_v<Trees, Forest>) {
            imp = oob_importance(f, v, t, measure, n_threads, recorded);
          } else {
            if (recorded) throw std::invalid_argument("a scikit-learn forest has no recorded out-of-bag leaves");
            imp = oob_importance(f, v, t, measure, n_threads);
          }
        }
        return importance_arrays(imp);
      },
      py::arg("forest"), py::arg("X"), py::arg("y"), py::arg("sample_weight"), py::arg("measure"),
      py::arg("n_threads") = 1, py::arg("recorded") = false,
      "recorded: the out-of-bag rows' leaves recorded by the fit (keep_oob_leaves), X's shape alone read");
}

}  // namespace

void bind_importance(py::module_& m) {
  py::enum_<OobMeasure>(m, "OobMeasure")
      .value("mdi_oob", OobMeasure::mdi_oob)
      .value("naive_oob", OobMeasure::naive_oob)
      .value("ufi", OobMeasure::ufi);
  py::enum_<StumpSplit>(m, "StumpSplit").value("best", StumpSplit::best).value("median", StumpSplit::median);
  py::enum_<StumpSide>(m, "StumpSide")
      .value("sum", StumpSide::sum)
      .value("left", StumpSide::left)
      .value("max", StumpSide::max);

  def_oob_importance<Forest>(m);
  def_oob_importance<SklearnTrees>(m);

  m.def(
      "mdi", [](const Forest& f, bool normalize) { return move_array(mdi(f, normalize)); }, py::arg("forest"),
      py::arg("normalize"));

  m.def(
      "permutation_importance",
      [](const Forest& f, const py::object& X, const py::object& y, const py::object& sample_weight, int n_repeats,
         uint64_t seed, int n_threads, bool held_out) {
        const MatrixView v = matrix_view(X);
        const Targets t = targets_of(f, y, sample_weight, v.n_rows);
        Importance imp;
        {
          py::gil_scoped_release release;
          imp = permutation_importance(f, v, t, n_repeats, seed, n_threads, held_out);
        }
        return importance_arrays(imp);
      },
      py::arg("forest"), py::arg("X"), py::arg("y"), py::arg("sample_weight"), py::arg("n_repeats"), py::arg("seed"),
      py::arg("n_threads") = 1, py::arg("held_out") = false);

  // permutation_importance in chunks of trees (a cluster's workers score a chunk each): the
  // per-tree scores as CSR (indptr, features, scores) and whether each tree had out-of-bag rows.
  m.def(
      "permutation_tree_scores",
      [](const Forest& f, const py::object& X, const py::object& y, const py::object& sample_weight, int n_repeats,
         uint64_t seed, int64_t first_tree, int64_t n_trees, int n_threads, bool held_out, int64_t stream_offset) {
        const MatrixView v = matrix_view(X);
        const Targets t = targets_of(f, y, sample_weight, v.n_rows);
        std::vector<TreeScores> trees;
        {
          py::gil_scoped_release release;
          trees = permutation_tree_scores(f, v, t, n_repeats, seed, first_tree, n_trees, n_threads, held_out,
                                          stream_offset);
        }
        std::vector<int64_t> indptr{0};
        std::vector<int32_t> features;
        std::vector<double> scores;
        std::vector<uint8_t> used;
        for (const TreeScores& tree : trees) {
          for (const auto& [feature, score] : tree.scores) {
            features.push_back(feature);
            scores.push_back(score);
          }
          indptr.push_back(static_cast<int64_t>(features.size()));
          used.push_back(tree.used);
        }
        return py::make_tuple(copy_array(indptr), copy_array(features), copy_array(scores), copy_array(used));
      },
      py::arg("forest"), py::arg("X"), py::arg("y"), py::arg("sample_weight"), py::arg("n_repeats"), py::arg("seed"),
      py::arg("first_tree"), py::arg("n_trees"), py::arg("n_threads") = 1, py::arg("held_out") = false,
      py::arg("stream_offset") = 0);

  m.def(
      "reduce_tree_scores",
      [](const py::object& indptr, const py::object& features, const py::object& scores, const py::object& used,
         int64_t n_features) {
        const auto u = checked_array<uint8_t>(used, {-1}, "used");
        const int64_t n_trees = u.size();
        const auto ip = checked_array<int64_t>(indptr, {n_trees + 1}, "indptr");
        const auto f = checked_array<int32_t>(features, {-1}, "features");
        const auto s = checked_array<double>(scores, {f.size()}, "scores");
        if (ip.data()[0] != 0 || ip.data()[n_trees] != f.size()) throw std::invalid_argument("indptr does not span features");
        std::vector<TreeScores> trees(n_trees);
        for (int64_t t = 0; t < n_trees; ++t) {
          if (ip.data()[t + 1] < ip.data()[t]) throw std::invalid_argument("indptr must not decrease");
          trees[t].used = u.data()[t] != 0;
          for (int64_t k = ip.data()[t]; k < ip.data()[t + 1]; ++k) {
            if (f.data()[k] < 0 || f.data()[k] >= n_features) throw std::invalid_argument("feature index out of range");
            trees[t].scores.emplace_back(f.data()[k], s.data()[k]);
          }
        }
        return importance_arrays(reduce_tree_scores(trees, n_features));
      },
      py::arg("indptr"), py::arg("features"), py::arg("scores"), py::arg("used"), py::arg("n_features"));

  m.def(
      "contributions",
      [](const Forest& f, const py::object& X, int n_threads) {
        const MatrixView v = matrix_view(X);
        const int64_t nv = f.n_values();
        py::array_t<double> out({v.n_rows, f.n_features, nv});
        py::array_t<double> bias(nv);
        double* o = out.mutable_data();
        double* b = bias.mutable_data();
        {
          py::gil_scoped_release release;
          contributions(f, v, o, b, n_threads);
        }
        return py::make_tuple(out, bias);
      },
      py::arg("forest"), py::arg("X"), py::arg("n_threads") = 1);

  m.def(
      "shap_values",
      [](const Forest& f, const py::object& X, int n_threads, bool banzhaf, const std::string& algorithm) {
        const MatrixView v = matrix_view(X);
        py::array_t<double> out({v.n_rows, f.n_features, static_cast<int64_t>(f.n_values())});
        double* o = out.mutable_data();
        std::vector<double> expected;
        {
          py::gil_scoped_release release;
          shap_values(f, v, o, n_threads, banzhaf ? Attribution::banzhaf : Attribution::shapley,
                      shap_algorithm(algorithm));
          expected = shap_expected_value(f);
        }
        return py::make_tuple(out, copy_array(expected));
      },
      py::arg("forest"), py::arg("X"), py::arg("n_threads") = 1, py::arg("banzhaf") = false,
      py::arg("algorithm") = "auto");

  m.def("shap_kept_table_bytes", &shap_kept_table_bytes, py::arg("forest"),
        "The bytes of leaf pattern tables shap_values keeps with the forest (at most 32 MB).");

  m.def(
      "shap_interaction_values",
      [](const Forest& f, const py::object& X, int n_threads) {
        const MatrixView v = matrix_view(X);
        // Zeros whose pages are written only where the trees put an entry: a row of all_bioc is
        // 2.5 GB, of which its trees reach a few MB.
        py::array_t<double> out = zeros_array<double>({v.n_rows, f.n_features, f.n_features, f.n_values()});
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          shap_interaction_values(f, v, o, n_threads);
        }
        return out;
      },
      py::arg("forest"), py::arg("X"), py::arg("n_threads") = 1);

  m.def(
      "shap_interaction_mean_abs",
      [](const Forest& f, const py::object& X, int n_threads) {
        const MatrixView v = matrix_view(X);
        PairMeans means;
        {
          py::gil_scoped_release release;
          means = shap_interaction_mean_abs(f, v, n_threads);
        }
        py::array mean_abs = copy_array(means.mean_abs);
        return py::make_tuple(copy_array(means.a), copy_array(means.b),
                              mean_abs.reshape({static_cast<int64_t>(means.a.size()), int64_t{f.n_values()}}));
      },
      py::arg("forest"), py::arg("X"), py::arg("n_threads") = 1);

  m.def(
      "shap_interaction_top_k",
      [](const Forest& f, const py::object& X, int64_t k, int n_threads) {
        const MatrixView v = matrix_view(X);
        const int64_t nv = f.n_values();
        py::array_t<int32_t> pairs({v.n_rows, nv, k, int64_t{2}});
        py::array_t<double> values({v.n_rows, nv, k});
        int32_t* pp = pairs.mutable_data();
        double* vp = values.mutable_data();
        {
          py::gil_scoped_release release;
          shap_interaction_top_k(f, v, k, pp, vp, n_threads);
        }
        return py::make_tuple(pairs, values);
      },
      py::arg("forest"), py::arg("X"), py::arg("k"), py::arg("n_threads") = 1);

  m.def(
      "shap_interaction_values_interventional",
      [](const Forest& f, const py::object& X, const py::object& background, int n_threads,
         const std::string& algorithm) {
        const MatrixView v = matrix_view(X);
        const MatrixView b = matrix_view(background);
        py::array_t<double> out = zeros_array<double>({v.n_rows, f.n_features, f.n_features, f.n_values()});
        double* o = out.mutable_data();
        std::vector<double> expected;
        {
          py::gil_scoped_release release;
          expected = shap_interaction_values_interventional(f, v, b, o, n_threads, Attribution::shapley,
                                                            shap_algorithm(algorithm));
        }
        return py::make_tuple(out, copy_array(expected));
      },
      py::arg("forest"), py::arg("X"), py::arg("background"), py::arg("n_threads") = 1, py::arg("algorithm") = "auto");

  m.def(
      "shap_values_interventional",
      [](const Forest& f, const py::object& X, const py::object& background, int n_threads, bool banzhaf,
         const std::string& algorithm) {
        const MatrixView v = matrix_view(X);
        const MatrixView b = matrix_view(background);
        py::array_t<double> out({v.n_rows, f.n_features, static_cast<int64_t>(f.n_values())});
        double* o = out.mutable_data();
        std::vector<double> expected;
        {
          py::gil_scoped_release release;
          expected = shap_values_interventional(f, v, b, o, n_threads, banzhaf ? Attribution::banzhaf : Attribution::shapley,
                                                shap_algorithm(algorithm));
        }
        return py::make_tuple(out, copy_array(expected));
      },
      py::arg("forest"), py::arg("X"), py::arg("background"), py::arg("n_threads") = 1, py::arg("banzhaf") = false,
      py::arg("algorithm") = "auto");

  m.def(
      "dstump",
      [](const py::object& X, const py::object& y, const py::object& sample_weight, StumpSplit split, StumpSide side,
         int n_threads, const py::object& mapped_file) {
        const auto source = x_source(X, mapped_file);  // a memory-mapped X is read in panels
        const double* yp = checked_array<double>(y, {source->n_rows()}, "y").data();
        const double* wp = optional_data<double>(sample_weight, {source->n_rows()}, "sample_weight");
        StumpTable table;
        {
          py::gil_scoped_release release;
          table = dstump(*source, yp, wp, split, side, n_threads);
        }
        py::dict d;
        d["score"] = copy_array(table.score);
        d["threshold"] = copy_array(table.threshold);
        d["impurity_decrease"] = copy_array(table.impurity_decrease);
        d["sign"] = copy_array(table.sign);
        d["n_left"] = copy_array(table.n_left);
        return d;
      },
      py::arg("X"), py::arg("y"), py::arg("sample_weight"), py::arg("split"), py::arg("side"), py::arg("n_threads") = 1,
      py::arg("mapped_file") = py::none());
}

}  // namespace pyinterp
