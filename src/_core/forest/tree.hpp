// A fitted tree as a struct of arrays, one entry per node, every child after its parent: nodes
// numbered in depth-first preorder (left child first), or in the order best-first growth made them.
// A leaf has left == right == feature == -1 and threshold 0. Rows go left when x <= threshold; a
// missing value (NaN) goes left when missing_go_to_left: the side that scored better where the
// node's training rows had missing values, else the side with more of its rows (scikit-learn's
// rule). A split on a categorical feature has threshold NaN and category_split s >= 0: rows whose
// category (an integer code in [0, 256)) is in the tree's left set s go left, every other value
// right (a category the node's training rows lacked included); missing values as above.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pyinterp {

// The node fields, declared once: FIELD(type, name, value of a new node, columns), columns 0 for
// one entry per node and k for a node_count x k matrix (row-major). Tree's
// members, add_node, the Python views, the pickled state and its checks on loading are generated
// from this list, so a new field is one line here plus the builder code that sets it.
#define PYINTERP_TREE_FIELDS(FIELD)                  \
  FIELD(int32_t, feature, -1, 0)                     \
  FIELD(double, threshold, 0.0, 0)                   \
  FIELD(uint8_t, missing_go_to_left, 0, 0)           \
  FIELD(int32_t, category_split, -1, 0)              \
  FIELD(int32_t, left, -1, 0)                        \
  FIELD(int32_t, right, -1, 0)                       \
  FIELD(int32_t, parent, -1, 0)                      \
  FIELD(int32_t, depth, 0, 0)                        \
  FIELD(int32_t, n_node_samples, 0, 0)               \
  FIELD(double, weighted_n_node_samples, 0.0, 0)     \
  FIELD(double, impurity, 0.0, 0)                    \
  FIELD(double, impurity_decrease, 0.0, 0)           \
  FIELD(double, value, 0.0, n_values)

// Inner node t's impurity decrease (N_t I_t - N_l I_l - N_r I_r) / N_root from its own and its
// children's weighted size N times impurity I: the one formula of the builder and of trees read
// from elsewhere (scikit-learn's, hand-written ones), so all agree bit for bit.
inline double impurity_decrease(double own, double left, double right, double n_root) {
  return (own - left - right) / n_root;
}

// impurity_decrease of every inner node of a tree given by its n nodes' child links (-1 at leaves,
// children within [0, n)), weighted sizes and impurities, into out (0 at leaves).
inline void impurity_decreases(int64_t n, const int32_t* left, const int32_t* right, const double* weighted,
                               const double* impurity, double* out) {
  const double root = weighted[0];
  for (int64_t node = 0; node < n; ++node) {
    const int32_t l = left[node], r = right[node];
    out[node] = l < 0 ? 0.0
                      : impurity_decrease(weighted[node] * impurity[node], weighted[l] * impurity[l],
                                          weighted[r] * impurity[r], root);
  }
}

// The child a row whose split value is v takes: left when v <= threshold, right when above, and
// for NaN the side missing_go_to_left names. The one routing rule of every tree reader.
inline int32_t route(double v, double threshold, bool missing_go_to_left, int32_t left, int32_t right) {
  if (v <= threshold) return left;
  if (v > threshold) return right;
  return missing_go_to_left ? left : right;  // NaN
}

// Words of a set of categories: bit c of word c / 64 is category c, for codes in [0, 256).
constexpr int kCategoryWords = 4;
constexpr int kMaxCategories = 64 * kCategoryWords;

// Set operations on kCategoryWords words: whether code c (< kMaxCategories) is in, and adding it.
inline bool has_category(const uint64_t* set, uint32_t c) { return ((set[c >> 6] >> (c & 63)) & 1u) != 0; }
inline void add_category(uint64_t* set, uint32_t c) { set[c >> 6] |= uint64_t{1} << (c & 63); }

// Whether v is a category code in the set: anything but an integer in [0, kMaxCategories) is in no set.
inline bool in_category_set(const uint64_t* set, double v) {
  if (!(v >= 0.0 && v < kMaxCategories)) return false;
  const auto c = static_cast<uint32_t>(v);
  return static_cast<double>(c) == v && has_category(set, c);
}

// The child a row takes at a node that may split by categories (left_sets: the tree's sets, s the
// node's category_split). The threshold comparisons come first: a categorical node's threshold is
// NaN, so both fail there as they do for a missing value, and threshold splits pay nothing more.
inline int32_t route_node(double v, double threshold, bool missing_go_to_left, const int32_t* category_split,
                          const uint64_t* left_sets, int64_t node, int32_t left, int32_t right) {
  if (v <= threshold) return left;
  if (v > threshold) return right;
  if (threshold != threshold && v == v)
    return in_category_set(left_sets + int64_t{category_split[node]} * kCategoryWords, v) ? left : right;
  return missing_go_to_left ? left : right;
}

// route's rule as bitwise logic (whether the row goes left), for loops that partition many rows
// at one node: there a branch per row mispredicts half the time. A descent keeps route's
// branches: predicted right, they let it load the next node early (branch-free, 25 % slower).
inline bool goes_left(double v, double threshold, bool missing_go_to_left) {
  return (v <= threshold) | (!(v > threshold) & missing_go_to_left);
}

struct Tree {
  int32_t n_values = 1;  // 1 for regression (the mean), n_classes for classification (fractions)
#define PYINTERP_DECLARE(type, name, initial, columns) std::vector<type> name;
  PYINTERP_TREE_FIELDS(PYINTERP_DECLARE)
#undef PYINTERP_DECLARE
  // The left sets of the categorical splits, kCategoryWords words each (set s at s *
  // kCategoryWords); a tree without them has none.
  std::vector<uint64_t> left_categories;

  // Appends a left set (its kCategoryWords words); returns its index.
  int32_t add_category_set(const uint64_t* words) {
    const auto s = static_cast<int32_t>(left_categories.size() / kCategoryWords);
    left_categories.insert(left_categories.end(), words, words + kCategoryWords);
    return s;
  }

  int64_t node_count() const { return static_cast<int64_t>(feature.size()); }
  bool is_leaf(int64_t node) const { return left[node] < 0; }

  // Appends a leaf with every field at its initial value; returns its index. push_back where one
  // entry is added: its fast path is inline, where resize and insert call out (12 calls a node,
  // 3 % of an iRF fit's profile).
  int32_t add_node() {
    const auto node = static_cast<int32_t>(node_count());
#define PYINTERP_APPEND(type, name, initial, columns) \
  if ((columns) <= 1)                                 \
    name.push_back(initial);                          \
  else                                                \
    name.insert(name.end(), static_cast<size_t>(columns), initial);
    PYINTERP_TREE_FIELDS(PYINTERP_APPEND)
#undef PYINTERP_APPEND
    return node;
  }

  // visit(name, field vector, columns) for every field, in declaration order.
  template <class Self, class Visit>
  static void for_each_field(Self& tree, Visit&& visit) {
    const int64_t n_values = tree.n_values;
#define PYINTERP_VISIT(type, name, initial, columns) visit(#name, tree.name, static_cast<int64_t>(columns));
    PYINTERP_TREE_FIELDS(PYINTERP_VISIT)
#undef PYINTERP_VISIT
  }

  // Child of internal node `node` taken by a row whose value of its feature is v.
  int32_t child_of(int64_t node, double v) const {
    return route_node(v, threshold[node], missing_go_to_left[node] != 0, category_split.data(),
                      left_categories.data(), node, left[node], right[node]);
  }

  // Leaf reached by a row given as an accessor `x(feature)`.
  template <class Getter>
  int32_t leaf_of(const Getter& x) const {
    int32_t node = 0;
    while (left[node] >= 0) node = child_of(node, x(feature[node]));
    return node;
  }
};

inline int64_t category_set_count(const Tree& t) {
  return static_cast<int64_t>(t.left_categories.size()) / kCategoryWords;
}

}  // namespace pyinterp
