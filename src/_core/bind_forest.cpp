// Python bindings of the forest engine: fitting, prediction kernels, read-only tree views, pickling.
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "bindings.hpp"
#include "common/parallel.hpp"
#include "data/column_codes.hpp"
#include "forest/forest.hpp"
#include "forest/split_search.hpp"
#include "forest/sklearn_trees.hpp"
#include "py_sklearn_trees.hpp"
#include "py_forest_inputs.hpp"
#include "py_util.hpp"

namespace pyinterp {
namespace {

// Pickled state: a name-keyed mapping with a format version. Version 1 (pyinterp 0.1.0) was a
// tuple read by position; it still loads (classification as Gini: the estimator restores entropy).
// Version 2 had no missing_go_to_left; its trees never saw NaN, so the field is derived as for a
// node without missing training values (the child with more rows). Versions before 4 had one
// output.
constexpr int kStateVersion = 4;
const char* const kV1Fields[] = {"feature", "threshold", "left", "right", "parent", "depth", "n_node_samples",
                                 "weighted_n_node_samples", "impurity", "impurity_decrease", "value"};

py::dict tree_arrays(const Tree& t, py::handle owner) {
  py::dict d;
  Tree::for_each_field(t, [&](const char* name, const auto& field, int64_t columns) {
    std::vector<py::ssize_t> shape{t.node_count()};
    if (columns > 0) shape.push_back(columns);
    d[name] = view(field, shape, owner);
  });
  d["left_categories"] = view(t.left_categories, {category_set_count(t), kCategoryWords}, owner);
  return d;
}

// Refuses a state array whose values T cannot hold as they are: strings or objects, reals for an
// integer field, integers outside T's range (a cast would wrap -1 into a count of 2^32 - 1).
template <class T>
void check_state_values(const py::array& a, const std::string& name) {
  const char kind = a.dtype().kind();
  const bool integral = kind == 'b' || kind == 'i' || kind == 'u';
  if (std::is_integral_v<T> ? !integral : !(integral || kind == 'f'))
    throw std::invalid_argument("corrupt forest state: " + name + " must hold " +
                                (std::is_integral_v<T> ? "integers" : "numbers") + ", not dtype " +
                                std::string(py::str(a.dtype())));
  if constexpr (std::is_integral_v<T>) {
    if (a.size() == 0 || kind == 'b') return;
    const auto lowest = a.attr("min")().cast<py::int_>(), highest = a.attr("max")().cast<py::int_>();
    if (lowest < py::int_(std::numeric_limits<T>::min()) || highest > py::int_(std::numeric_limits<T>::max()))
      throw std::invalid_argument("corrupt forest state: " + name + " holds values outside [" +
                                  std::to_string(std::numeric_limits<T>::min()) + ", " +
                                  std::to_string(std::numeric_limits<T>::max()) + "]");
  }
}

// The left sets of a state's categorical splits: an (n_sets, kCategoryWords) array, or absent in
// the state of a tree without them (and of any tree pickled before them).
void read_category_sets(const py::dict& arrays, Tree& t) {
  if (!arrays.contains("left_categories")) return;
  const auto a = py::array::ensure(arrays["left_categories"]);
  if (!a || a.ndim() != 2 || a.shape(1) != kCategoryWords)
    throw std::invalid_argument("corrupt forest state: left_categories must have shape (n_sets, " +
                                std::to_string(kCategoryWords) + ")");
  check_state_values<uint64_t>(a, "left_categories");
  const auto flat = checked_array<uint64_t>(a.attr("reshape")(-1), {a.shape(0) * kCategoryWords}, "left_categories",
                                            /*convert=*/true);
  t.left_categories.assign(flat.data(), flat.data() + flat.size());
}

// Rebuilds a tree from its arrays, refusing anything that could make traversal go out of bounds
// or loop: children must be later nodes (preorder), features within range, parents and depths
// consistent with the children.
Tree tree_from_state(const py::handle& state, int64_t n_features, int32_t n_values, int version) {
  if (!py::isinstance<py::dict>(state)) throw std::invalid_argument("corrupt forest state: a tree is not a mapping");
  const auto arrays = py::reinterpret_borrow<py::dict>(state);
  Tree t;
  t.n_values = n_values;
  if (!arrays.contains("feature")) throw std::invalid_argument("corrupt forest state: tree has no feature");
  const int64_t n = py::len(arrays["feature"]);
  if (n == 0) throw std::invalid_argument("corrupt forest state: empty tree");
  const bool derive_missing = version < 3;
  // Trees pickled before categorical splits (and trees built elsewhere) have no category_split.
  const bool threshold_only = !arrays.contains("category_split");
  Tree::for_each_field(t, [&](const char* name, auto& field, int64_t columns) {
    if (derive_missing && std::string(name) == "missing_go_to_left") return;
    if (threshold_only && std::string(name) == "category_split") return;
    if (!arrays.contains(name)) throw std::invalid_argument(std::string("corrupt forest state: tree has no ") + name);
    using T = typename std::decay_t<decltype(field)>::value_type;
    // One entry per node, or for a matrix field (n, columns) or its n * columns entries flat.
    const int64_t size = n * std::max<int64_t>(columns, 1);
    const auto a = py::array::ensure(arrays[name]);
    const bool ok = a && (a.ndim() == 1 ? a.shape(0) == size
                                        : columns > 0 && a.ndim() == 2 && a.shape(0) == n && a.shape(1) == columns);
    if (!ok) throw std::invalid_argument(std::string("corrupt forest state: ") + name + " has the wrong shape");
    check_state_values<T>(a, name);
    const auto flat = checked_array<T>(a.attr("reshape")(-1), {size}, name, /*convert=*/true);
    field.assign(flat.data(), flat.data() + flat.size());
  });
  if (threshold_only) t.category_split.assign(n, -1);
  read_category_sets(arrays, t);
  const auto fault = [](int64_t k, const std::string& what) {
    return std::invalid_argument("corrupt forest state: node " + std::to_string(k) + ": " + what);
  };
  for (int64_t k = 0; k < n; ++k) {
    const int32_t l = t.left[k], r = t.right[k];
    if (l < 0) {
      if (r >= 0 || t.feature[k] != -1) throw fault(k, "a leaf (left -1) must have right -1 and feature -1");
      continue;
    }
    if (l <= k || r <= k || l >= n || r >= n)
      throw fault(k, "children must be later nodes of the tree, got " + std::to_string(l) + " and " + std::to_string(r));
    if (l == r) throw fault(k, "both children are node " + std::to_string(l));
    if (t.feature[k] < 0 || t.feature[k] >= n_features)
      throw fault(k, "feature " + std::to_string(t.feature[k]) + " is outside [0, " + std::to_string(n_features) + ")");
  }
  // Each node but the root is the child of exactly one node (a node shared by two parents would be
  // counted twice by whatever sums over paths), and its sizes are counts and weights.
  std::vector<int32_t> parents(n, 0);  // at most n - 1 links point to a node
  for (int64_t k = 0; k < n; ++k)
    if (t.left[k] >= 0) {
      ++parents[t.left[k]];
      ++parents[t.right[k]];
    }
  for (int64_t k = 1; k < n; ++k)
    if (parents[k] != 1) throw fault(k, "the child of " + std::to_string(parents[k]) + " nodes, not of one");
  for (int64_t k = 0; k < n; ++k)
    if (t.n_node_samples[k] < 0 || !(t.weighted_n_node_samples[k] >= 0.0))
      throw std::invalid_argument("corrupt forest state: node sizes must be counts and weights");
  // A threshold is a number, but at a categorical split (NaN there), which names one of the sets.
  const int64_t n_sets = category_set_count(t);
  for (int64_t k = 0; k < n; ++k) {
    const int32_t s = t.category_split[k];
    const bool ok = s < 0 ? s == -1 && !std::isnan(t.threshold[k])
                          : t.left[k] >= 0 && s < n_sets && std::isnan(t.threshold[k]);
    if (!ok)
      throw std::invalid_argument("corrupt forest state: node " + std::to_string(k) +
                                  ": a threshold must be a number, and a categorical split (threshold NaN, at an inner "
                                  "node) must name one of the tree's left_categories");
  }
  // Paths are walked upwards through parent and depth: both must agree with the child links.
  if (t.parent[0] != -1 || t.depth[0] != 0) throw std::invalid_argument("corrupt forest state: root");
  for (int64_t k = 0; k < n; ++k) {
    if (t.left[k] < 0) continue;
    for (const int32_t c : {t.left[k], t.right[k]})
      if (t.parent[c] != k || t.depth[c] != t.depth[k] + 1)
        throw std::invalid_argument("corrupt forest state: parent or depth");
  }
  if (derive_missing) {
    t.missing_go_to_left.assign(n, 0);
    for (int64_t k = 0; k < n; ++k)
      if (t.left[k] >= 0) t.missing_go_to_left[k] = t.n_node_samples[t.left[k]] > t.n_node_samples[t.right[k]];
  }
  return t;
}

py::dict forest_state(const Forest& f) {
  py::list trees;
  for (const Tree& t : f.trees) {
    py::dict arrays;
    Tree::for_each_field(t, [&](const char* name, const auto& field, int64_t columns) {
      arrays[name] = columns > 0 ? copy_array(field).attr("reshape")(t.node_count(), columns) : copy_array(field);
    });
    arrays["left_categories"] = copy_array(t.left_categories).attr("reshape")(category_set_count(t), kCategoryWords);
    trees.append(arrays);
  }
  py::dict s;
  s["version"] = kStateVersion;
  s["criterion"] = kCriterionNames[static_cast<int>(f.criterion)];
  s["n_features"] = f.n_features;
  s["n_classes"] = f.n_classes;
  s["n_outputs"] = f.n_outputs;
  s["n_samples"] = f.n_samples;
  s["trees"] = trees;
  s["inbag"] = copy_array(f.inbag);
  return s;
}

// Version 1's tuple (1, n_features, n_classes, n_samples, trees as 11-tuples, inbag) as a version 2 mapping.
py::dict upgrade_v1(const py::tuple& s) {
  if (s.size() != 6) throw std::invalid_argument("unsupported forest state");
  py::list trees;
  for (const auto& tree : s[4].cast<py::list>()) {
    const auto fields = tree.cast<py::tuple>();
    if (fields.size() != std::size(kV1Fields)) throw std::invalid_argument("corrupt forest state: tree");
    py::dict arrays;
    for (size_t k = 0; k < fields.size(); ++k) arrays[kV1Fields[k]] = fields[k];
    trees.append(arrays);
  }
  py::dict d;
  d["version"] = 2;
  d["criterion"] = s[2].cast<int32_t>() > 0 ? "gini" : "squared_error";
  d["n_features"] = s[1];
  d["n_classes"] = s[2];
  d["n_samples"] = s[3];
  d["trees"] = trees;
  d["inbag"] = s[5];
  return d;
}

Criterion criterion_named(const py::handle& name) {
  if (py::isinstance<py::str>(name))
    for (size_t c = 0; c < std::size(kCriterionNames); ++c)
      if (name.cast<std::string>() == kCriterionNames[c]) return static_cast<Criterion>(c);
  throw std::invalid_argument("forest state: unknown criterion " + std::string(py::repr(name)));
}

Forest forest_from_state(const py::object& state) {
  if (py::isinstance<py::tuple>(state)) {
    const auto t = state.cast<py::tuple>();
    if (t.size() > 0 && py::isinstance<py::int_>(t[0]) && t[0].cast<int>() == 1) return forest_from_state(upgrade_v1(t));
  }
  if (!py::isinstance<py::dict>(state)) throw std::invalid_argument("unsupported forest state: expected a mapping");
  const auto s = state.cast<py::dict>();
  for (const char* key : {"version", "criterion", "n_features", "n_classes", "n_samples", "trees", "inbag"})
    if (!s.contains(key)) throw std::invalid_argument(std::string("corrupt forest state: no ") + key);
  const int version = s["version"].cast<int>();
  if (version < 2 || version > kStateVersion)
    throw std::invalid_argument("forest state version " + std::to_string(version) + " is not supported by this pyinterp (it reads 1 to " +
                                std::to_string(kStateVersion) + ")");
  if (version >= 4 && !s.contains("n_outputs")) throw std::invalid_argument("corrupt forest state: no n_outputs");
  Forest f;
  f.criterion = criterion_named(s["criterion"]);
  f.n_features = s["n_features"].cast<int64_t>();
  f.n_classes = s["n_classes"].cast<int32_t>();
  f.n_outputs = version >= 4 ? s["n_outputs"].cast<int32_t>() : 1;
  f.n_samples = s["n_samples"].cast<int64_t>();
  if (f.n_features < 1 || f.n_classes < 0 || f.n_samples < 1 || f.n_outputs < 1 ||
      static_cast<int64_t>(f.n_outputs) * std::max(f.n_classes, 1) > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument("corrupt forest state");
  if ((f.n_classes > 0) != is_classification(f.criterion))
    throw std::invalid_argument("corrupt forest state: criterion does not match the number of classes");
  const auto trees = s["trees"].cast<py::list>();
  if (trees.empty()) throw std::invalid_argument("corrupt forest state: no trees");
  for (const auto& t : trees) f.trees.push_back(tree_from_state(t, f.n_features, f.n_values(), version));
  const int64_t n_inbag = static_cast<int64_t>(f.trees.size()) * f.n_samples;
  const auto given_inbag = py::array::ensure(s["inbag"]);
  if (!given_inbag) throw std::invalid_argument("corrupt forest state: inbag is not an array");
  check_state_values<uint32_t>(given_inbag, "inbag");
  const auto inbag = checked_array<uint32_t>(given_inbag, {-1}, "inbag", /*convert=*/true);
  if (inbag.size() != n_inbag) throw std::invalid_argument("corrupt forest state: inbag has the wrong size");
  f.inbag.assign(inbag.data(), inbag.data() + n_inbag);
  return f;
}

template <class T, class A>
Strided<T> strided(const A& a) {
  return {reinterpret_cast<const char*>(a.data()), static_cast<int64_t>(a.strides(0))};
}

SklearnTree sklearn_tree(const py::handle& item, int32_t k) {
  if (!py::isinstance<py::dict>(item))
    throw std::invalid_argument("scikit-learn trees: a tree is not a mapping of its node arrays by name");
  const auto arrays = py::reinterpret_borrow<py::dict>(item);
  auto field = [&](const char* name) -> py::object {
    if (!arrays.contains(name)) throw std::invalid_argument(std::string("scikit-learn trees: a tree has no ") + name);
    return arrays[name];
  };
  SklearnTree t{py::array_t<int64_t>::ensure(field("children_left")),
                py::array_t<int64_t>::ensure(field("children_right")),
                py::array_t<int64_t>::ensure(field("feature")),
                py::array_t<int64_t>::ensure(field("n_node_samples")),
                py::array_t<double>::ensure(field("threshold")),
                py::array_t<double>::ensure(field("weighted_n_node_samples")),
                py::array_t<double>::ensure(field("impurity")),
                py::array_t<double>::ensure(field("value")),
                py::array_t<uint8_t>::ensure(field("missing_go_to_left")),
                {}};
  if (!t.left || !t.right || !t.feature || !t.samples || !t.threshold || !t.weighted || !t.impurity || !t.value ||
      !t.missing)
    throw std::invalid_argument("scikit-learn trees: node arrays of the wrong type");
  const int64_t n = t.left.size();
  for (const py::array* arr : {static_cast<const py::array*>(&t.right), static_cast<const py::array*>(&t.feature),
                               static_cast<const py::array*>(&t.samples), static_cast<const py::array*>(&t.threshold),
                               static_cast<const py::array*>(&t.weighted), static_cast<const py::array*>(&t.impurity),
                               static_cast<const py::array*>(&t.missing)})
    if (arr->ndim() != 1 || arr->size() != n) throw std::invalid_argument("scikit-learn trees: node arrays differ in length");
  if (n == 0 || t.left.ndim() != 1 || t.value.ndim() != 2 || t.value.shape(0) != n || t.value.shape(1) != k)
    throw std::invalid_argument("scikit-learn trees: wrong node array shapes");
  if (n > std::numeric_limits<int32_t>::max()) throw std::invalid_argument("scikit-learn trees: more than 2^31 - 1 nodes");
  t.nodes.n_nodes = n;
  t.nodes.left = strided<int64_t>(t.left);
  t.nodes.right = strided<int64_t>(t.right);
  t.nodes.feature = strided<int64_t>(t.feature);
  t.nodes.n_node_samples = strided<int64_t>(t.samples);
  t.nodes.threshold = strided<double>(t.threshold);
  t.nodes.weighted_n_node_samples = strided<double>(t.weighted);
  t.nodes.impurity = strided<double>(t.impurity);
  t.nodes.value = strided<double>(t.value);
  t.nodes.value_column = t.value.strides(1);
  t.nodes.missing_go_to_left = strided<uint8_t>(t.missing);
  return t;
}

// A scikit-learn forest's trees (single output) as core trees, in one call for the whole forest:
// the arrays are checked with the GIL, then the trees are built on n_threads without it.
Forest forest_from_sklearn_trees(const py::handle& criterion, int64_t n_features, int32_t n_classes, int64_t n_samples,
                                 const py::list& trees, const py::handle& inbag, int n_threads) {
  if (n_threads < 1) throw std::invalid_argument("n_threads must be >= 1");
  SklearnTrees in_place = sklearn_oob_trees(criterion, n_features, n_classes, n_samples, trees, inbag);
  const SklearnForestNodes& nodes = in_place.nodes;
  Forest f;
  f.criterion = nodes.criterion;
  f.n_features = n_features;
  f.n_classes = n_classes;
  f.n_samples = n_samples;
  f.inbag = std::move(in_place.nodes.inbag);
  f.trees.resize(nodes.trees.size());
  {
    py::gil_scoped_release release;
    parallel_for(static_cast<int64_t>(nodes.trees.size()), n_threads, no_state, [&](int64_t i, int, NoState&) {
      f.trees[i] = tree_from_sklearn(nodes.trees[i], nodes.n_values, n_features);
    });
  }
  return f;
}

}  // namespace

std::unique_ptr<ColumnSource> x_source(const py::object& X, const py::object& mapped_file) {
  const MatrixView v = matrix_view(X);
  if (mapped_file.is_none()) return column_source(v);
  const auto where = mapped_file.cast<std::pair<std::string, int64_t>>();
  const MappedFile file{where.first, where.second};
  return column_source(v, &file);
}

FitTargets fit_targets(const py::object& y, const py::object& classes, int32_t n_classes, int64_t n_rows) {
  FitTargets t;
  const py::object& given = y.is_none() ? classes : y;
  const bool several = py::isinstance<py::array>(given) && py::reinterpret_borrow<py::array>(given).ndim() == 2;
  t.y = several ? optional_data<double>(y, {n_rows, -1}, "y") : optional_data<double>(y, {n_rows}, "y");
  t.classes = several ? optional_data<int32_t>(classes, {n_rows, -1}, "classes")
                      : optional_data<int32_t>(classes, {n_rows}, "classes");
  if ((t.y == nullptr) == (t.classes == nullptr)) throw std::invalid_argument("give exactly one of y and classes");
  if (several) {
    const py::ssize_t outputs = py::reinterpret_borrow<py::array>(given).shape(1);
    if (outputs < 1 || outputs * std::max(n_classes, 1) > std::numeric_limits<int32_t>::max())
      throw std::invalid_argument("the targets need between 1 and 2^31 - 1 values per node");
    t.n_outputs = static_cast<int32_t>(outputs);
  }
  t.n_classes = t.classes ? n_classes : 0;
  if (t.classes)
    for (int64_t i = 0; i < n_rows * t.n_outputs; ++i)
      if (t.classes[i] < 0 || t.classes[i] >= n_classes) throw std::invalid_argument("class index out of range");
  return t;
}

namespace {

// One node's split as the search the parameters choose finds it (make_split_search): the seam on
// which a second search is tested against the exact one, node for node. rows: the node's rows,
// increasing; the rows' weights are sample_weight's (or 1). Returns the feature (-1: none), the
// proxy and which of the node's rows go left.
py::dict find_split(const py::object& X, const py::object& y, const py::object& classes, int32_t n_classes,
                    const py::object& sample_weight, const py::object& rows, const ForestParams& params) {
  const MatrixView v = matrix_view(X);
  const FitTargets t = fit_targets(y, classes, n_classes, v.n_rows);
  if (t.n_outputs > 1) throw std::invalid_argument("find_split searches a node of one output");
  if ((t.n_classes > 0) != is_classification(params.criterion))
    throw std::invalid_argument("the criterion does not match the task");
  if (params.max_features < 1) throw std::invalid_argument("max_features must be at least 1");
  check_feature_params(params, v.n_cols);
  const double* wp = optional_data<double>(sample_weight, {v.n_rows}, "sample_weight");
  const auto node_rows = checked_array<uint32_t>(rows, {-1}, "rows", /*convert=*/true);
  const uint32_t* r = node_rows.data();
  const int64_t m = node_rows.size();
  if (m < 1) throw std::invalid_argument("rows must hold at least one row");
  for (int64_t k = 0; k < m; ++k)
    if (r[k] >= v.n_rows || (k > 0 && r[k] <= r[k - 1]))
      throw std::invalid_argument("rows must be increasing row indices of X");
  const auto source = x_source(X, py::none());
  const ColumnCodes codes(*source, std::max(params.n_threads, 1));
  TrainingSet data;
  data.codes = &codes;
  data.source = source.get();
  data.targets = t;
  data.sample_weight = wp;
  std::vector<double> w(v.n_rows, 0.0), value(t.n_values());
  double total = 0.0;
  for (int64_t k = 0; k < m; ++k) total += w[r[k]] = wp ? wp[r[k]] : 1.0;
  std::vector<std::pair<double, double>> median_scratch;
  node_stats(params.criterion, r, m, w.data(), t, value.data(), median_scratch);
  const auto search = make_split_search(data, params);
  search->begin_tree(w.data(), params.min_weight_fraction_leaf * total);
  const Split split = search->find({r, m, value.data(), root_stream(params.first_tree)});
  py::array_t<bool> left(m);
  for (int64_t k = 0; k < m && split.feature >= 0; ++k) {
    const uint32_t c = codes.code(split.feature, r[k]);
    left.mutable_data()[k] = c <= split.lo || (c == codes.missing_code(split.feature) && split.missing_left);
  }
  py::dict out;
  out["feature"] = split.feature;
  out["proxy"] = split.proxy;
  out["left"] = split.feature >= 0 ? py::object(left) : py::object(py::none());
  return out;
}

// ForestParams' pickled state: {"version": kParamsVersion, name: value for every parameter}, so a
// parameter added later loads from older states at its default. Version 1 (0.1.0) was a tuple of
// the parameters in kV1Params' order; it still loads.
constexpr int kParamsVersion = 2;
const char* const kV1Params[] = {"criterion", "n_estimators", "bootstrap", "n_draws", "max_features",
                                 "min_samples_split", "min_weight_split", "min_samples_leaf",
                                 "min_weight_fraction_leaf", "max_depth", "max_leaf_nodes", "ccp_alpha",
                                 "monotonic_cst", "min_impurity_decrease", "balanced_subsample", "seed",
                                 "first_tree", "n_threads", "record_oob_leaves"};

py::dict params_state(const ForestParams& p) {
  py::dict state;
  state["version"] = kParamsVersion;
  ForestParams::for_each_field(p, [&](const char* name, const auto& field) { state[name] = py::cast(field); });
  return state;
}

ForestParams params_from_state(const py::object& state) {
  py::dict fields;
  if (py::isinstance<py::tuple>(state)) {
    const auto t = py::reinterpret_borrow<py::tuple>(state);
    if (t.size() != std::size(kV1Params)) throw std::invalid_argument("corrupt ForestParams state");
    for (size_t k = 0; k < t.size(); ++k) fields[kV1Params[k]] = t[k];
  } else if (py::isinstance<py::dict>(state)) {
    fields = py::reinterpret_borrow<py::dict>(state).attr("copy")();
    const py::object version = fields.attr("pop")("version", py::none());
    if (!py::isinstance<py::int_>(version) || version.cast<int64_t>() < 2 || version.cast<int64_t>() > kParamsVersion)
      throw std::invalid_argument("ForestParams state of an unknown version (from a newer pyinterp?)");
  } else {
    throw std::invalid_argument("corrupt ForestParams state");
  }
  ForestParams p;
  size_t read = 0;
  ForestParams::for_each_field(p, [&](const char* name, auto& field) {
    if (!fields.contains(name)) return;
    try {
      field = fields[name].cast<std::decay_t<decltype(field)>>();
    } catch (const py::cast_error&) {
      throw std::invalid_argument(std::string("corrupt ForestParams state: ") + name);
    }
    ++read;
  });
  if (read != py::len(fields)) throw std::invalid_argument("corrupt ForestParams state: a parameter it does not know");
  return p;
}

// An (n_rows, n_trees) array of leaves from apply, or from apply_oob (oob).
py::array_t<int64_t> leaves_of(const Forest& f, const py::object& X, int n_threads, bool oob, bool training) {
  const MatrixView v = matrix_view(X);
  py::array_t<int64_t> out({v.n_rows, static_cast<int64_t>(f.trees.size())});
  int64_t* p = out.mutable_data();
  py::gil_scoped_release release;
  if (oob) {
    apply_oob(f, v, p, n_threads, training);
  } else {
    apply(f, v, p, n_threads);
  }
  return out;
}

}  // namespace

SklearnTrees sklearn_trees(int64_t n_features, int32_t n_values, const py::list& trees) {
  if (n_features < 1 || n_values < 1) throw std::invalid_argument("scikit-learn trees: need n_features, n_values >= 1");
  SklearnTrees out;
  out.arrays.reserve(trees.size());
  for (const auto& item : trees) out.arrays.push_back(sklearn_tree(item, n_values));
  out.nodes.n_features = n_features;
  out.nodes.n_values = n_values;
  for (const SklearnTree& t : out.arrays) out.nodes.trees.push_back(t.nodes);
  return out;
}

SklearnTrees sklearn_oob_trees(const py::handle& criterion, int64_t n_features, int32_t n_classes, int64_t n_samples,
                               const py::list& trees, const py::handle& inbag) {
  const Criterion c = criterion_named(criterion);
  if (n_features < 1 || n_classes < 0 || n_samples < 1 || (n_classes > 0) != is_classification(c))
    throw std::invalid_argument("scikit-learn trees: inconsistent criterion, features, classes or samples");
  SklearnTrees out = sklearn_trees(n_features, std::max(n_classes, 1), trees);
  out.nodes.criterion = c;
  out.nodes.n_classes = n_classes;
  out.nodes.n_samples = n_samples;
  const auto counts = checked_array<uint32_t>(inbag, {-1}, "inbag", /*convert=*/true);
  if (counts.size() != static_cast<int64_t>(out.nodes.trees.size()) * n_samples)
    throw std::invalid_argument("scikit-learn trees: inbag has the wrong size");
  out.nodes.inbag.assign(counts.data(), counts.data() + counts.size());
  return out;
}

void bind_forest(py::module_& m) {
  py::enum_<Criterion> criterion(m, "Criterion");
  for (size_t c = 0; c < std::size(kCriterionNames); ++c) criterion.value(kCriterionNames[c], static_cast<Criterion>(c));

  py::class_<ForestParams> params(m, "ForestParams");
  params.def(py::init<>());
#define PYINTERP_BIND(type, name, initial) params.def_readwrite(#name, &ForestParams::name);
  PYINTERP_FOREST_PARAMS(PYINTERP_BIND)
#undef PYINTERP_BIND
  // Pickled for chunks of a forest fitted on other processes (dask workers), and copied by
  // copy.copy through the same state: every parameter, or a worker grows another forest.
  params.def(py::pickle([](const ForestParams& p) { return params_state(p); },
                        [](const py::object& state) { return params_from_state(state); }));

  // X's column encoding, built once and handed to several fit_forest calls on the same X (the
  // chunks of a forest that one cluster worker fits). Not picklable on purpose: it is rebuilt
  // where X is, which is cheaper than shipping it next to X.
  py::class_<ColumnCodes>(m, "ColumnCodes")
      .def(py::init([](const py::object& X, int n_threads, const py::object& mapped_file) {
             const auto source = x_source(X, mapped_file);
             py::gil_scoped_release release;
             return std::make_unique<ColumnCodes>(*source, n_threads);
           }),
           py::arg("X"), py::arg("n_threads") = 1, py::arg("mapped_file") = py::none())
      .def_property_readonly("shape", [](const ColumnCodes& c) { return py::make_tuple(c.n_rows(), c.n_cols()); })
      .def_property_readonly("nbytes", &ColumnCodes::nbytes)
      .def_property_readonly("file_bytes", &ColumnCodes::file_bytes,
                             "Bytes of the codes kept in a temporary file (a memory-mapped X whose codes "
                             "would pass PYINTERP_CODES_MEMORY, by default half the memory available).");

  m.def(
      "repack_calls",
      [](const py::object& X, const py::object& mapped_file, int n_threads) {
        const MatrixView v = matrix_view(X);
        if (v.layout != MatrixView::Layout::packed || !v.indices)
          throw std::invalid_argument("repack_calls takes packed genotypes of a subset of their file's samples");
        py::array_t<uint8_t> out({v.n_calls(), (v.n_rows + 3) / 4});
        const auto source = x_source(X, mapped_file);
        py::gil_scoped_release release;
        repack_calls(*source, out.mutable_data(), n_threads);
        return out;
      },
      py::arg("X"), py::arg("mapped_file") = py::none(), py::arg("n_threads") = 1,
      "Packed genotypes' calls of their samples alone: (n_variants, (n_samples + 3) // 4) uint8.");

  py::class_<Forest>(m, "Forest")
      .def_property_readonly("criterion", [](const Forest& f) { return f.criterion; })
      .def_property_readonly("n_features", [](const Forest& f) { return f.n_features; })
      .def_property_readonly("n_classes", [](const Forest& f) { return f.n_classes; })
      .def_property_readonly("n_outputs", [](const Forest& f) { return f.n_outputs; })
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
          [](const Forest& f, const py::object& X, int n_threads) {
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
          [](const Forest& f, const py::object& X, int n_threads, bool training) {
            const MatrixView v = matrix_view(X);
            py::array_t<double> out({v.n_rows, static_cast<int64_t>(f.n_values())});
            py::array_t<int64_t> counts(v.n_rows);
            double* p = out.mutable_data();
            int64_t* c = counts.mutable_data();
            {
              py::gil_scoped_release release;
              predict_oob(f, v, p, c, n_threads, training);
            }
            return py::make_tuple(out, counts);
          },
          py::arg("X"), py::arg("n_threads") = 1, py::arg("training") = false)
      .def(
          "apply",
          [](const Forest& f, const py::object& X, int n_threads) { return leaves_of(f, X, n_threads, false, false); },
          py::arg("X"), py::arg("n_threads") = 1)
      .def(
          "apply_oob",
          [](const Forest& f, const py::object& X, int n_threads, bool training) {
            return leaves_of(f, X, n_threads, true, training);
          },
          py::arg("X"), py::arg("n_threads") = 1, py::arg("training") = false)
      .def(
          "record_oob_leaves",
          [](Forest& f, const py::object& X, int64_t start, int n_threads) {
            const MatrixView v = matrix_view(X);
            py::gil_scoped_release release;
            record_oob_leaves(f, v, start, n_threads);
          },
          py::arg("X"), py::arg("start"), py::arg("n_threads") = 1,
          "Records the out-of-bag leaves of training rows [start, start + len(X)), X being those rows (as a fit "
          "with record_oob_leaves does; then predict_oob, apply_oob and the out-of-bag measures read them).")
      .def(
          "leaf_sums",
          [](const Forest& f, const py::object& X, const py::handle& weight, int n_threads, bool oob, bool training) {
            const MatrixView v = matrix_view(X);
            const auto w = checked_array<double>(weight, {v.n_rows}, "weight");
            int64_t n_nodes = 0;
            for (const Tree& t : f.trees) n_nodes += t.node_count();
            py::array_t<double> count(n_nodes), sum(n_nodes);
            double *c = count.mutable_data(), *s = sum.mutable_data();
            {
              py::gil_scoped_release release;
              leaf_sums(f, v, w.data(), oob, training, c, s, n_threads);
            }
            return py::make_tuple(count, sum);
          },
          py::arg("X"), py::arg("weight"), py::arg("n_threads") = 1, py::arg("oob") = false,
          py::arg("training") = false,
          "Per node of every tree, trees in order: the rows of X reaching it as their leaf and the sum "
          "of their weights (oob: only in the trees they are out of bag for).")
      .def_property_readonly("node_counts",
                             [](const Forest& f) {
                               py::array_t<int64_t> out(static_cast<py::ssize_t>(f.trees.size()));
                               int64_t* p = out.mutable_data();
                               for (const Tree& t : f.trees) *p++ = t.node_count();
                               return out;
                             })
      .def(
          "node_values",
          [](const Forest& f, const py::handle& trees, const py::handle& nodes) {
            const auto t = checked_array<int64_t>(trees, {-1}, "trees");
            const auto k = checked_array<int64_t>(nodes, {t.shape(0)}, "nodes");
            const int32_t nv = f.n_values();
            py::array_t<double> out({static_cast<int64_t>(t.shape(0)), static_cast<int64_t>(nv)});
            double* p = out.mutable_data();
            for (py::ssize_t e = 0; e < t.shape(0); ++e) {
              const int64_t tree = t.data()[e], node = k.data()[e];
              if (tree < 0 || tree >= static_cast<int64_t>(f.trees.size()) || node < 0 ||
                  node >= f.trees[tree].node_count())
                throw std::invalid_argument("node_values: a (tree, node) pair is outside the forest");
              std::copy_n(f.trees[tree].value.data() + node * nv, nv, p + e * nv);
            }
            return out;
          },
          py::arg("trees"), py::arg("nodes"), "The values of the given (tree, node) pairs: (len, n_values).")
      .def_property_readonly("has_oob_leaves", [](const Forest& f) { return !f.oob_leaves.empty(); })
      .def(
          "drop_oob_leaves", [](Forest& f) { std::vector<int32_t>().swap(f.oob_leaves); },
          "Frees the out-of-bag leaves the fit recorded (then predict_oob and apply_oob run the rows down).")
      .def(
          "decision_path",
          [](const Forest& f, const py::object& X, int n_threads) {
            const MatrixView v = matrix_view(X);
            DecisionPaths paths;
            {
              py::gil_scoped_release release;
              paths = decision_path(f, v, n_threads);
            }
            return py::make_tuple(copy_array(paths.indptr), copy_array(paths.indices), copy_array(paths.node_offsets));
          },
          py::arg("X"), py::arg("n_threads") = 1)
      .def_property_readonly_static("state_version", [](const py::object&) { return kStateVersion; })
      .def_property_readonly_static("tree_fields",
                                    [](const py::object&) {
                                      py::list names;
                                      const Tree empty;
                                      Tree::for_each_field(empty, [&](const char* name, const auto&, int64_t) { names.append(name); });
                                      return py::tuple(names);
                                    })
      .def_static("from_state", &forest_from_state, py::arg("state"),
                  "Builds a forest from the mapping its pickle holds (also used to import other libraries' trees).")
      .def_static("from_sklearn_trees", &forest_from_sklearn_trees, py::arg("criterion"), py::arg("n_features"),
                  py::arg("n_classes"), py::arg("n_samples"), py::arg("trees"), py::arg("inbag"),
                  py::arg("n_threads") = 1,
                  "Builds a forest from scikit-learn trees' node arrays in one call (forest/view.py).")
      .def(py::pickle([](const Forest& f) { return forest_state(f); },
                      [](const py::object& s) { return forest_from_state(s); }));

  py::class_<SklearnTrees>(m, "SklearnTrees",
                           "A scikit-learn forest's node arrays, held for the core to read in place (signed paths; "
                           "with in-bag counts, the out-of-bag measures).")
      .def(py::init(&sklearn_trees), py::arg("n_features"), py::arg("n_values"), py::arg("trees"))
      .def_static("with_inbag", &sklearn_oob_trees, py::arg("criterion"), py::arg("n_features"), py::arg("n_classes"),
                  py::arg("n_samples"), py::arg("trees"), py::arg("inbag"),
                  "The trees with what the out-of-bag measures read beside them (as Forest.from_sklearn_trees).")
      .def_property_readonly("n_features", [](const SklearnTrees& t) { return t.nodes.n_features; })
      .def_property_readonly("n_trees", [](const SklearnTrees& t) { return t.nodes.trees.size(); })
      .def_property_readonly("n_samples", [](const SklearnTrees& t) { return t.nodes.n_samples; })
      .def_property_readonly("inbag", [](py::object self) {
        const SklearnForestNodes& f = self.cast<const SklearnTrees&>().nodes;
        return view(f.inbag, {static_cast<py::ssize_t>(f.trees.size()), f.n_samples}, self);
      });

  m.def(
      "sklearn_inbag",
      [](const py::handle& seeds, int64_t n_samples, int64_t n_draws, const py::object& cdf, int n_threads) {
        const auto s = checked_array<uint32_t>(seeds, {-1}, "seeds", /*convert=*/true);
        const double* c = optional_data<double>(cdf, {n_samples}, "cdf");
        if (n_threads < 1) throw std::invalid_argument("n_threads must be >= 1");
        std::vector<uint32_t> seed(s.data(), s.data() + s.size());
        std::vector<uint32_t> counts;
        {
          py::gil_scoped_release release;
          counts = sklearn_inbag(seed, n_samples, n_draws, c, n_threads);
        }
        return move_array(std::move(counts)).attr("reshape")(static_cast<py::ssize_t>(seed.size()), n_samples);
      },
      py::arg("seeds"), py::arg("n_samples"), py::arg("n_draws"), py::arg("cdf") = py::none(), py::arg("n_threads") = 1,
      "In-bag counts (n_trees, n_samples) of scikit-learn's bootstrap, regenerated from the trees' integer "
      "seeds bit for bit as its _generate_sample_indices draws them (forest/view.py).");

  m.def(
      "join_forests",
      [](const std::vector<const Forest*>& parts) {
        for (const Forest* part : parts)
          if (part == nullptr) throw std::invalid_argument("join_forests takes fitted core forests");
        return join_forests(parts);
      },
      py::arg("forests"), "The trees of forests fitted on the same rows, in order, as one forest.");

  m.def("find_split", &find_split, py::arg("X"), py::arg("y"), py::arg("classes"), py::arg("n_classes"),
        py::arg("sample_weight"), py::arg("rows"), py::arg("params"));

  m.def(
      "impurity_decreases",
      [](const py::handle& left, const py::handle& right, const py::handle& weighted, const py::handle& impurity) {
        const auto l = checked_array<int32_t>(left, {-1}, "left", /*convert=*/true);
        const int64_t n = l.size();
        const auto r = checked_array<int32_t>(right, {n}, "right", /*convert=*/true);
        const auto w = checked_array<double>(weighted, {n}, "weighted_n_node_samples", /*convert=*/true);
        const auto imp = checked_array<double>(impurity, {n}, "impurity", /*convert=*/true);
        if (n == 0) throw std::invalid_argument("a tree needs at least one node");
        for (int64_t k = 0; k < n; ++k) {
          const bool ok = l.data()[k] < 0 ? r.data()[k] < 0
                                          : l.data()[k] > k && r.data()[k] > k && l.data()[k] < n && r.data()[k] < n;
          if (!ok) throw std::invalid_argument("node links: children must be later nodes of the tree (-1 at leaves)");
        }
        py::array_t<double> out(n);
        impurity_decreases(n, l.data(), r.data(), w.data(), imp.data(), out.mutable_data());
        return out;
      },
      py::arg("left"), py::arg("right"), py::arg("weighted_n_node_samples"), py::arg("impurity"),
      "(N_t I_t - N_l I_l - N_r I_r) / N_root of every inner node (0 at leaves), as the engine records it.");

  m.def(
      "fit_forest",
      [](const py::object& X, const py::object& y, const py::object& classes, int32_t n_classes,
         const py::object& sample_weight, const py::object& feature_weights, const ForestParams& params,
         const py::object& mapped_file, const ColumnCodes* codes) {
        const MatrixView v = matrix_view(X);
        const FitTargets t = fit_targets(y, classes, n_classes, v.n_rows);
        const double* wp = optional_data<double>(sample_weight, {v.n_rows}, "sample_weight");
        std::vector<double> fw;
        if (const double* p = optional_data<double>(feature_weights, {v.n_cols}, "feature_weights")) fw.assign(p, p + v.n_cols);
        const auto source = x_source(X, mapped_file);
        py::gil_scoped_release release;
        return fit_forest(*source, t, wp, fw, params, codes);
      },
      py::arg("X"), py::arg("y"), py::arg("classes"), py::arg("n_classes"), py::arg("sample_weight"),
      py::arg("feature_weights"), py::arg("params"), py::arg("mapped_file") = py::none(),
      py::arg("codes") = nullptr);
}

}  // namespace pyinterp
