// Forests fitted by scikit-learn, read into core trees (forest/view.py hands them over in one call,
// bind_forest.cpp checks the arrays): the node arrays read in place, and the in-bag counts of
// scikit-learn's bootstrap regenerated from each tree's seed as numpy's legacy RandomState draws them.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "criterion.hpp"
#include "tree.hpp"

namespace pyinterp {

// One node field in place: scikit-learn's node arrays are fields of one array of structs, so each
// is strided. Loads go through memcpy: a view need not be aligned.
template <class T>
struct Strided {
  const char* data = nullptr;
  int64_t stride = 0;  // bytes from one node to the next
  T operator[](int64_t i) const {
    T v;
    std::memcpy(&v, data + i * stride, sizeof(T));
    return v;
  }
};

// A scikit-learn tree's node arrays (single output): children_left, children_right, feature,
// n_node_samples (intp), threshold, weighted_n_node_samples, impurity (float64),
// missing_go_to_left (uint8), and value (n_nodes x n_values, column stride value_column).
struct SklearnNodes {
  int64_t n_nodes = 0;
  Strided<int64_t> left, right, feature, n_node_samples;
  Strided<double> threshold, weighted_n_node_samples, impurity, value;
  int64_t value_column = 0;  // bytes from one value of a node to the next
  Strided<uint8_t> missing_go_to_left;
};

// A scikit-learn forest read in place (single output), for what reads its trees without a core
// copy (signed paths, the out-of-bag measures): the arrays are trusted only as far as
// tree_from_sklearn trusts them (node_readers.hpp's SklearnReader checks them tree by tree).
struct SklearnForestNodes {
  int64_t n_features = 0;
  int32_t n_values = 1;  // values per node: 1 (the mean) or n_classes (fractions)
  std::vector<SklearnNodes> trees;
  // For the out-of-bag measures only (else unset): as Forest holds them.
  Criterion criterion = Criterion::squared_error;
  int32_t n_classes = 0;
  int64_t n_samples = 0;
  std::vector<uint32_t> inbag;  // n_trees x n_samples
};

// Whether split node `node` of an n-node tree may have children l and r and split feature f: later
// nodes inside the tree (so walks end), distinct and no other node's yet (parent[c] still -1, so
// none is reached twice), f within [0, n_features).
inline bool valid_split(int64_t node, int64_t l, int64_t r, int64_t f, double threshold, int64_t n,
                        int64_t n_features, const int32_t* parent) {
  return l > node && r > node && l < n && r < n && l != r && f >= 0 && f < n_features && parent[l] < 0 &&
         parent[r] < 0 && !std::isnan(threshold);
}

// What makes a split that valid_split refuses no tree's, for the error.
inline std::string split_fault(int64_t node, int64_t l, int64_t r, int64_t f, double threshold, int64_t n,
                               int64_t n_features, const int32_t* parent) {
  const std::string at = "scikit-learn trees: node " + std::to_string(node) + ": ";
  if (l <= node || r <= node || l >= n || r >= n)
    return at + "children must be later nodes of the tree (-1 at leaves), got " + std::to_string(l) + " and " +
           std::to_string(r);
  if (l == r) return at + "both children are node " + std::to_string(l);
  if (parent[l] >= 0 || parent[r] >= 0) return at + "a child is also another node's child";
  if (f < 0 || f >= n_features)
    return at + "feature " + std::to_string(f) + " is outside [0, " + std::to_string(n_features) + ")";
  if (std::isnan(threshold)) return at + "its threshold is NaN";
  return at + "a malformed split";
}

// Throws unless every node but the root has a parent (parent[c] >= 0): no node lies outside the tree.
inline void check_every_node_reached(const int32_t* parent, int64_t n) {
  for (int64_t node = 1; node < n; ++node)
    if (parent[node] < 0) throw std::invalid_argument("scikit-learn trees: node links (a node no split reaches)");
}

// The core tree of one scikit-learn tree in one pass over its nodes: every field copied (values as
// class fractions when n_values > 1; leaves' split fields at their leaf values) and parent, depth
// and impurity decrease derived, ((N_t I_t - N_l I_l - N_r I_r) / N_root as the builder records
// it). Throws std::invalid_argument unless every child is a later node and every feature within
// [0, n_features): links that could make a walk loop or leave the tree.
Tree tree_from_sklearn(const SklearnNodes& nodes, int32_t n_values, int64_t n_features);

// In-bag counts (n_seeds x n_samples, row t for seeds[t]) of scikit-learn's bootstrap: for each
// tree, n_draws rows drawn by numpy.random.RandomState(seed), bit for bit as
// sklearn.ensemble._forest._generate_sample_indices draws them: randint(0, n_samples, n_draws)
// (MT19937, masked rejection) or, given cdf (scikit-learn 1.7+ with sample weights, the
// normalised cumulative weights numpy's choice(p=...) builds), the first row whose cdf exceeds
// each random_sample(). n_samples <= 2^32; threads do not change the result.
std::vector<uint32_t> sklearn_inbag(const std::vector<uint32_t>& seeds, int64_t n_samples, int64_t n_draws,
                                    const double* cdf, int n_threads);

}  // namespace pyinterp
