// A fitted tree as a struct of arrays, one entry per node, nodes numbered in depth-first preorder
// (left child first). A leaf has left == right == feature == -1 and threshold 0.
#pragma once
#include <cstdint>
#include <vector>

namespace pyinterp {

struct Tree {
  int32_t n_values = 1;  // 1 for regression (the mean), n_classes for classification (fractions)
  std::vector<int32_t> feature, left, right, parent, depth, n_node_samples;
  std::vector<double> threshold, weighted_n_node_samples, impurity, impurity_decrease;
  std::vector<double> value;  // node_count x n_values, row-major

  int64_t node_count() const { return static_cast<int64_t>(feature.size()); }
  bool is_leaf(int64_t node) const { return left[node] < 0; }

  // Leaf reached by row i of a matrix accessor `x(i, feature)`: x <= threshold goes left.
  template <class Getter>
  int32_t leaf_of(const Getter& x) const {
    int32_t node = 0;
    while (left[node] >= 0) node = x(feature[node]) <= threshold[node] ? left[node] : right[node];
    return node;
  }
};

}  // namespace pyinterp
