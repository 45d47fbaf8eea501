// Python bindings of the forest engine: fitting, prediction kernels, read-only tree views, pickling.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "forest/forest.hpp"
#include "py_util.hpp"

namespace pyinterp {
namespace {

py::dict tree_arrays(const Tree& t, py::handle owner) {
  const py::ssize_t n = t.node_count();
  py::dict d;
  d["feature"] = view(t.feature, {n}, owner);
  d["threshold"] = view(t.threshold, {n}, owner);
  d["left"] = view(t.left, {n}, owner);
  d["right"] = view(t.right, {n}, owner);
  d["parent"] = view(t.parent, {n}, owner);
  d["depth"] = view(t.depth, {n}, owner);
  d["n_node_samples"] = view(t.n_node_samples, {n}, owner);
  d["weighted_n_node_samples"] = view(t.weighted_n_node_samples, {n}, owner);
  d["impurity"] = view(t.impurity, {n}, owner);
  d["impurity_decrease"] = view(t.impurity_decrease, {n}, owner);
  d["value"] = view(t.value, {n, t.n_values}, owner);
  return d;
}

// Rebuilds a tree from pickled arrays, refusing anything that could make traversal go out of
// bounds or loop: children must be later nodes (preorder), features within range, parents and
// depths consistent with the children.
Tree tree_from_state(const py::tuple& s, int64_t n_features, int32_t n_values) {
  if (s.size() != 11) throw std::invalid_argument("corrupt forest state: tree");
  Tree t;
  t.n_values = n_values;
  const size_t n = static_cast<size_t>(py::len(s[0]));
  t.feature = to_vector<int32_t>(s[0], n, "feature");
  t.threshold = to_vector<double>(s[1], n, "threshold");
  t.left = to_vector<int32_t>(s[2], n, "left");
  t.right = to_vector<int32_t>(s[3], n, "right");
  t.parent = to_vector<int32_t>(s[4], n, "parent");
  t.depth = to_vector<int32_t>(s[5], n, "depth");
  t.n_node_samples = to_vector<int32_t>(s[6], n, "n_node_samples");
  t.weighted_n_node_samples = to_vector<double>(s[7], n, "weighted_n_node_samples");
  t.impurity = to_vector<double>(s[8], n, "impurity");
  t.impurity_decrease = to_vector<double>(s[9], n, "impurity_decrease");
  t.value = to_vector<double>(s[10], n * n_values, "value");
  if (n == 0) throw std::invalid_argument("corrupt forest state: empty tree");
  for (size_t k = 0; k < n; ++k) {
    const bool leaf = t.left[k] < 0;
    const bool ok = leaf ? (t.right[k] < 0 && t.feature[k] == -1)
                         : (t.left[k] > static_cast<int32_t>(k) && t.right[k] > static_cast<int32_t>(k) &&
                            static_cast<size_t>(t.left[k]) < n && static_cast<size_t>(t.right[k]) < n &&
                            t.feature[k] >= 0 && t.feature[k] < n_features);
    if (!ok) throw std::invalid_argument("corrupt forest state: node links");
  }
  // Paths are walked upwards through parent and depth: both must agree with the child links.
  if (t.parent[0] != -1 || t.depth[0] != 0) throw std::invalid_argument("corrupt forest state: root");
  for (size_t k = 0; k < n; ++k) {
    if (t.left[k] < 0) continue;
    for (const int32_t c : {t.left[k], t.right[k]})
      if (t.parent[c] != static_cast<int32_t>(k) || t.depth[c] != t.depth[k] + 1)
        throw std::invalid_argument("corrupt forest state: parent or depth");
  }
  return t;
}

py::tuple forest_state(const Forest& f) {
  py::list trees;
  for (const Tree& t : f.trees) {
    trees.append(py::make_tuple(copy_array(t.feature), copy_array(t.threshold), copy_array(t.left), copy_array(t.right),
                                copy_array(t.parent), copy_array(t.depth), copy_array(t.n_node_samples),
                                copy_array(t.weighted_n_node_samples), copy_array(t.impurity),
                                copy_array(t.impurity_decrease), copy_array(t.value)));
  }
  return py::make_tuple(1, f.n_features, f.n_classes, f.n_samples, trees, copy_array(f.inbag));
}

Forest forest_from_state(const py::tuple& s) {
  if (s.size() != 6 || s[0].cast<int>() != 1) throw std::invalid_argument("unsupported forest state");
  Forest f;
  f.n_features = s[1].cast<int64_t>();
  f.n_classes = s[2].cast<int32_t>();
  f.n_samples = s[3].cast<int64_t>();
  if (f.n_features < 1 || f.n_classes < 0 || f.n_samples < 1) throw std::invalid_argument("corrupt forest state");
  for (const auto& t : s[4].cast<py::list>()) f.trees.push_back(tree_from_state(t.cast<py::tuple>(), f.n_features, f.n_values()));
  f.inbag = to_vector<uint32_t>(s[5], f.trees.size() * static_cast<size_t>(f.n_samples), "inbag");
  return f;
}

}  // namespace

void bind_forest(py::module_& m) {
  py::enum_<Criterion>(m, "Criterion")
      .value("squared_error", Criterion::squared_error)
      .value("gini", Criterion::gini)
      .value("entropy", Criterion::entropy);

  py::class_<ForestParams>(m, "ForestParams")
      .def(py::init<>())
      .def_readwrite("criterion", &ForestParams::criterion)
      .def_readwrite("n_estimators", &ForestParams::n_estimators)
      .def_readwrite("bootstrap", &ForestParams::bootstrap)
      .def_readwrite("n_draws", &ForestParams::n_draws)
      .def_readwrite("max_features", &ForestParams::max_features)
      .def_readwrite("min_samples_split", &ForestParams::min_samples_split)
      .def_readwrite("min_samples_leaf", &ForestParams::min_samples_leaf)
      .def_readwrite("min_weight_fraction_leaf", &ForestParams::min_weight_fraction_leaf)
      .def_readwrite("max_depth", &ForestParams::max_depth)
      .def_readwrite("min_impurity_decrease", &ForestParams::min_impurity_decrease)
      .def_readwrite("balanced_subsample", &ForestParams::balanced_subsample)
      .def_readwrite("seed", &ForestParams::seed)
      .def_readwrite("n_threads", &ForestParams::n_threads);

  py::class_<Forest>(m, "Forest")
      .def_property_readonly("n_features", [](const Forest& f) { return f.n_features; })
      .def_property_readonly("n_classes", [](const Forest& f) { return f.n_classes; })
      .def_property_readonly("n_samples", [](const Forest& f) { return f.n_samples; })
      .def_property_readonly("n_trees", [](const Forest& f) { return static_cast<int64_t>(f.trees.size()); })
      .def(
          "tree",
          [](py::object self, int64_t t) {
            const Forest& f = self.cast<const Forest&>();
            if (t < 0 || t >= static_cast<int64_t>(f.trees.size())) throw py::index_error("tree index out of range");
            return tree_arrays(f.trees[t], self);
          },
          py::arg("index"))
      .def_property_readonly("inbag",
                             [](py::object self) {
                               const Forest& f = self.cast<const Forest&>();
                               return view(f.inbag, {static_cast<py::ssize_t>(f.trees.size()), f.n_samples}, self);
                             })
      .def(
          "predict",
          [](const Forest& f, const py::array& X, int n_threads) {
            const MatrixView v = matrix_view(X);
            py::array_t<double> out({v.n_rows, static_cast<int64_t>(f.n_values())});
            double* p = out.mutable_data();
            py::gil_scoped_release release;
            predict(f, v, p, n_threads);
            return out;
          },
          py::arg("X"), py::arg("n_threads") = 1)
      .def(
          "predict_oob",
          [](const Forest& f, const py::array& X, int n_threads) {
            const MatrixView v = matrix_view(X);
            py::array_t<double> out({v.n_rows, static_cast<int64_t>(f.n_values())});
            py::array_t<int64_t> counts(v.n_rows);
            double* p = out.mutable_data();
            int64_t* c = counts.mutable_data();
            {
              py::gil_scoped_release release;
              predict_oob(f, v, p, c, n_threads);
            }
            return py::make_tuple(out, counts);
          },
          py::arg("X"), py::arg("n_threads") = 1)
      .def(
          "apply",
          [](const Forest& f, const py::array& X, int n_threads) {
            const MatrixView v = matrix_view(X);
            py::array_t<int64_t> out({v.n_rows, static_cast<int64_t>(f.trees.size())});
            int64_t* p = out.mutable_data();
            py::gil_scoped_release release;
            apply(f, v, p, n_threads);
            return out;
          },
          py::arg("X"), py::arg("n_threads") = 1)
      .def(
          "decision_path",
          [](const Forest& f, const py::array& X, int n_threads) {
            const MatrixView v = matrix_view(X);
            DecisionPaths paths;
            {
              py::gil_scoped_release release;
              paths = decision_path(f, v, n_threads);
            }
            return py::make_tuple(copy_array(paths.indptr), copy_array(paths.indices), copy_array(paths.node_offsets));
          },
          py::arg("X"), py::arg("n_threads") = 1)
      .def_static("from_state", &forest_from_state, py::arg("state"),
                  "Builds a forest from the tuple its pickle holds (also used to import other libraries' trees).")
      .def(py::pickle([](const Forest& f) { return forest_state(f); },
                      [](const py::tuple& s) { return forest_from_state(s); }));

  m.def(
      "fit_forest",
      [](const py::array& X, const py::object& y, const py::object& classes, int32_t n_classes,
         const py::object& sample_weight, const py::object& feature_weights, const ForestParams& params) {
        const MatrixView v = matrix_view(X);
        const double* yp = vector_data<double>(y, v.n_rows, "y");
        const int32_t* cp = vector_data<int32_t>(classes, v.n_rows, "classes");
        const double* wp = vector_data<double>(sample_weight, v.n_rows, "sample_weight");
        std::vector<double> fw;
        if (!feature_weights.is_none()) {
          const double* p = vector_data<double>(feature_weights, v.n_cols, "feature_weights");
          fw.assign(p, p + v.n_cols);
        }
        if ((yp == nullptr) == (cp == nullptr)) throw std::invalid_argument("give exactly one of y and classes");
        if (cp)
          for (int64_t i = 0; i < v.n_rows; ++i)
            if (cp[i] < 0 || cp[i] >= n_classes) throw std::invalid_argument("class index out of range");
        py::gil_scoped_release release;
        return fit_forest(v, yp, cp, cp ? n_classes : 0, wp, fw, params);
      },
      py::arg("X"), py::arg("y"), py::arg("classes"), py::arg("n_classes"), py::arg("sample_weight"),
      py::arg("feature_weights"), py::arg("params"));
}

}  // namespace pyinterp
