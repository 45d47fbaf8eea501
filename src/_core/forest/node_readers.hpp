// Node readers: the one interface through which walks that serve both kinds of forest read a tree
// (signed paths, the out-of-bag sums), from a core Tree or from a scikit-learn tree's node arrays
// in place. Readers hold raw pointers and are passed by value, so the pointers stay in registers
// (read through a reference, every store to a walk's output vectors could change them: the
// signed-path walk was 20 % slower).
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "forest.hpp"
#include "sklearn_trees.hpp"
#include "tree.hpp"

namespace pyinterp {

// A core tree (links checked when it was built or loaded).
struct CoreNodes {
  const int32_t *left_, *right_, *feature_, *parent_, *samples_;
  const double *threshold_, *weighted_, *impurity_, *decrease_, *value_;
  const uint8_t* missing_;
  const int32_t* category_split_;
  const uint64_t* left_categories_;
  int64_t n;
  int32_t n_values;

  explicit CoreNodes(const Tree& t)
      : left_(t.left.data()), right_(t.right.data()), feature_(t.feature.data()), parent_(t.parent.data()),
        samples_(t.n_node_samples.data()), threshold_(t.threshold.data()), weighted_(t.weighted_n_node_samples.data()),
        impurity_(t.impurity.data()), decrease_(t.impurity_decrease.data()), value_(t.value.data()),
        missing_(t.missing_go_to_left.data()), category_split_(t.category_split.data()),
        left_categories_(t.left_categories.data()), n(t.node_count()), n_values(t.n_values) {}
  int64_t count() const { return n; }
  bool inner(int64_t node) const { return left_[node] >= 0; }
  int32_t left(int64_t node) const { return left_[node]; }
  int32_t right(int64_t node) const { return right_[node]; }
  int32_t parent(int64_t node) const { return parent_[node]; }
  int32_t feature(int64_t node) const { return feature_[node]; }
  double threshold(int64_t node) const { return threshold_[node]; }
  bool missing_go_to_left(int64_t node) const { return missing_[node] != 0; }
  // The child a row whose value of the node's feature is v takes.
  int32_t child(int64_t node, double v) const {
    return route_node(v, threshold_[node], missing_[node] != 0, category_split_, left_categories_, node, left_[node],
                      right_[node]);
  }
  double weighted(int64_t node) const { return weighted_[node]; }
  double distinct(int64_t node) const { return samples_[node]; }
  double impurity(int64_t node) const { return impurity_[node]; }
  double value(int64_t node, int32_t v) const { return value_[node * n_values + v]; }
  // The node's n_values values, in place (scratch unused).
  const double* values(int64_t node, double*) const { return value_ + node * n_values; }
  // The recorded (N_t I_t - N_l I_l - N_r I_r) / N_root with weighted sizes, or null: derive it.
  const double* recorded_decreases() const { return decrease_; }
};

// A scikit-learn tree's node arrays, read where they lie. Constructing it makes one pass over
// the node structs in order: it checks every node's links and feature (what tree_from_sklearn
// checks: children after their parent and inside the tree, so walks end) and gathers the
// parents (into the caller's buffer, reused from tree to tree).
struct SklearnReader {
  SklearnNodes a;
  const int32_t* parent_;
  int32_t n_values;

  SklearnReader(const SklearnNodes& nodes, int64_t n_features, int32_t n_values, std::vector<int32_t>& parent)
      : a(nodes), n_values(n_values) {
    const int64_t n = a.n_nodes;
    parent.assign(static_cast<size_t>(n), -1);
    for (int64_t node = 0; node < n; ++node) {
      const int64_t l = a.left[node], r = a.right[node];
      if (l < 0 && r < 0) continue;
      const int64_t f = a.feature[node];
      const double threshold = a.threshold[node];
      if (!valid_split(node, l, r, f, threshold, n, n_features, parent.data()))
        throw std::invalid_argument(split_fault(node, l, r, f, threshold, n, n_features, parent.data()));
      parent[l] = parent[r] = static_cast<int32_t>(node);
    }
    check_every_node_reached(parent.data(), n);
    parent_ = parent.data();
  }
  int64_t count() const { return a.n_nodes; }
  bool inner(int64_t node) const { return a.left[node] >= 0; }
  int32_t left(int64_t node) const { return static_cast<int32_t>(a.left[node]); }
  int32_t right(int64_t node) const { return static_cast<int32_t>(a.right[node]); }
  int32_t parent(int64_t node) const { return parent_[node]; }
  int32_t feature(int64_t node) const { return static_cast<int32_t>(a.feature[node]); }
  double threshold(int64_t node) const { return a.threshold[node]; }
  bool missing_go_to_left(int64_t node) const { return a.missing_go_to_left[node] != 0; }
  int32_t child(int64_t node, double v) const {
    return route(v, a.threshold[node], a.missing_go_to_left[node] != 0, left(node), right(node));
  }
  double weighted(int64_t node) const { return a.weighted_n_node_samples[node]; }
  double distinct(int64_t node) const { return static_cast<double>(a.n_node_samples[node]); }
  double impurity(int64_t node) const { return a.impurity[node]; }
  // The mean, or the class fractions as scikit-learn >= 1.4 stores them (as the copy takes them).
  double value(int64_t node, int32_t v) const {
    double out;
    std::memcpy(&out, a.value.data + node * a.value.stride + v * a.value_column, sizeof(double));
    return out;
  }
  // The node's n_values values, gathered into scratch (strided in place).
  const double* values(int64_t node, double* scratch) const {
    for (int32_t v = 0; v < n_values; ++v) scratch[v] = value(node, v);
    return scratch;
  }
  const double* recorded_decreases() const { return nullptr; }
};

// Tree t of either kind of forest, and how many trees it has. parent: the reader's buffer.
inline CoreNodes nodes(const Forest& forest, int64_t t, std::vector<int32_t>&) { return CoreNodes(forest.trees[t]); }
inline SklearnReader nodes(const SklearnForestNodes& forest, int64_t t, std::vector<int32_t>& parent) {
  return {forest.trees[t], forest.n_features, forest.n_values, parent};
}
inline int64_t tree_count(const Forest& forest) { return static_cast<int64_t>(forest.trees.size()); }
inline int64_t tree_count(const SklearnForestNodes& forest) { return static_cast<int64_t>(forest.trees.size()); }

// Child of inner node `node` taken by a row whose value of its feature is v.
template <class Nodes>
int32_t child_of(const Nodes& tree, int64_t node, double v) {
  return tree.child(node, v);
}

// Leaf reached by a row given as an accessor `x(feature)`.
template <class Nodes, class Getter>
int32_t leaf_of(const Nodes& tree, const Getter& x) {
  int32_t node = 0;
  while (tree.inner(node)) node = child_of(tree, node, x(tree.feature(node)));
  return node;
}

}  // namespace pyinterp
