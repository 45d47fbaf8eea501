// scikit-learn trees crossing into the core (forest/view.py hands them over as mappings of node
// arrays by name): checked with the GIL, kept alive, and described for the core to read in place
// (forest/sklearn_trees.hpp), whether it copies them (Forest.from_sklearn_trees) or walks them as
// they are (SklearnTrees: signed paths).
#pragma once
#include <vector>

#include "forest/forest.hpp"
#include "forest/sklearn_trees.hpp"
#include "py_util.hpp"

namespace pyinterp {

// One tree's node arrays (their own dtypes, or converted copies) and their description.
struct SklearnTree {
  py::array_t<int64_t> left, right, feature, samples;
  py::array_t<double> threshold, weighted, impurity, value;
  py::array_t<uint8_t> missing;
  SklearnNodes nodes;
};

// A forest's trees, each a mapping of its node arrays by their names in scikit-learn's tree_:
// children_left, children_right, feature, threshold, missing_go_to_left, n_node_samples,
// weighted_n_node_samples, impurity, and value (n, n_values), one output's. Shapes and dtypes are
// checked here; links and features by whoever reads them.
struct SklearnTrees {
  std::vector<SklearnTree> arrays;
  SklearnForestNodes nodes;  // views of `arrays`
};

SklearnTrees sklearn_trees(int64_t n_features, int32_t n_values, const py::list& trees);

// The same with what the out-of-bag measures read beside the trees: criterion (a name),
// n_classes (0 for regression), the training rows and their in-bag counts (n_trees x n_samples).
SklearnTrees sklearn_oob_trees(const py::handle& criterion, int64_t n_features, int32_t n_classes, int64_t n_samples,
                               const py::list& trees, const py::handle& inbag);

// What a core reading walks of a binding's forest argument: a core Forest, or SklearnTrees' arrays
// in place. Bindings taking either are one template over the argument's type.
inline const Forest& trees_of(const Forest& f) { return f; }
inline const SklearnForestNodes& trees_of(const SklearnTrees& t) { return t.nodes; }

}  // namespace pyinterp
