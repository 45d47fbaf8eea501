// Attributions against background rows (interventional TreeSHAP and Banzhaf values): per tree either
// the leaf pattern tables (O(n + m) in the rows) or the grouped walk (O(n m)), chosen by their cost.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../common/parallel.hpp"
#include "shap.hpp"
#include "shap_parts.hpp"

namespace pyinterp {
namespace {

using namespace shap_parts;

// The weights of the game of one leaf against one background row. With U features that must come
// from x (x follows the leaf's splits on them, the background row r does not) and V from r, the
// leaf's value v is gained exactly by the coalitions holding the U and none of the V, so a feature of
// the U gets v weight(U - 1, V) and one of the V gets -v weight(U, V - 1), where weight(a, b) is
// a! b! / (a + b + 1)! (Shapley) or 2^-(a + b) (Banzhaf).
class GameWeights {
 public:
  GameWeights(int32_t max_players, Attribution kind) : stride_(max_players + 1) {
    table_.assign(static_cast<size_t>(stride_) * stride_, 0.0);
    for (int32_t a = 0; a < stride_; ++a) {
      double w = kind == Attribution::banzhaf ? std::ldexp(1.0, -a) : 1.0 / (a + 1);
      for (int32_t b = 0; a + b < stride_; ++b) {
        table_[a * stride_ + b] = w;
        w *= kind == Attribution::banzhaf ? 0.5 : (b + 1.0) / (a + b + 2.0);
      }
    }
  }
  double operator()(int32_t a, int32_t b) const { return table_[a * stride_ + b]; }

 private:
  int32_t stride_;
  std::vector<double> table_;
};

// What one leaf of value v adds against one background row: the game on U features from x (xs) and
// V from r (rs), gained (v) by exactly the coalitions holding xs and none of rs. Values: v
// weight(U - 1, V) to each of xs, -v weight(U, V - 1) to each of rs. Interactions: half the
// interaction index of a pair, v weight(U - 2, V) within xs, -v weight(U - 1, V - 1) across,
// v weight(U, V - 2) within rs (the index's single nonzero coalition), on the diagonal the value
// minus the pair entries of its row, so that rows sum to the values. out: features x n_values, or
// features x features x n_values (row stride p); features as the callers index them.
struct LeafGame {
  const GameWeights& weight;
  int32_t nv;
  int64_t p;  // the interactions' row stride; 0 for values

  void values(const double* v, const std::vector<int32_t>& xs, const std::vector<int32_t>& rs, double scale,
              double* out) const {
    const auto u = static_cast<int32_t>(xs.size()), r = static_cast<int32_t>(rs.size());
    if (u > 0) add(xs, scale * weight(u - 1, r), v, out);
    if (r > 0) add(rs, -scale * weight(u, r - 1), v, out);
  }

  void pairs(const double* v, const std::vector<int32_t>& xs, const std::vector<int32_t>& rs, double scale,
             double* out) const {
    const auto u = static_cast<int32_t>(xs.size()), r = static_cast<int32_t>(rs.size());
    if (u > 0) add_diagonal(xs, scale * weight(u - 1, r), v, out);
    if (r > 0) add_diagonal(rs, -scale * weight(u, r - 1), v, out);
    if (u > 1) within(xs, scale * weight(u - 2, r) / 2, v, out);
    if (r > 1) within(rs, scale * weight(u, r - 2) / 2, v, out);
    if (u > 0 && r > 0) {
      const double h = -scale * weight(u - 1, r - 1) / 2;
      for (const int32_t i : xs)
        for (const int32_t j : rs) pair(i, j, h, v, out);
    }
  }

 private:
  void add(const std::vector<int32_t>& features, double w, const double* v, double* out) const {
    for (const int32_t j : features)
      for (int32_t c = 0; c < nv; ++c) out[int64_t{j} * nv + c] += w * v[c];
  }
  void add_diagonal(const std::vector<int32_t>& features, double w, const double* v, double* out) const {
    for (const int32_t j : features)
      for (int32_t c = 0; c < nv; ++c) out[(j * p + j) * nv + c] += w * v[c];
  }
  void within(const std::vector<int32_t>& features, double h, const double* v, double* out) const {
    for (size_t a = 0; a < features.size(); ++a)
      for (size_t b = a + 1; b < features.size(); ++b) pair(features[a], features[b], h, v, out);
  }
  // Half the index h v to (i, j) and (j, i), taken from the diagonal of both.
  void pair(int64_t i, int64_t j, double h, const double* v, double* out) const {
    for (int32_t c = 0; c < nv; ++c) {
      const double e = h * v[c];
      out[(i * p + j) * nv + c] += e;
      out[(j * p + i) * nv + c] += e;
      out[(i * p + i) * nv + c] -= e;
      out[(j * p + j) * nv + c] -= e;
    }
  }
};

// Interventional attributions of one tree for row x against background rows (Lundberg et al. 2020,
// Algorithm 3), all background rows in one walk. For one background row r: where x and r take the
// same child nothing is decided; where they part, the walk follows both, x's child with the feature
// taken from x and r's with it taken from r, and a feature decided once follows that row in the
// subtree. A leaf reached with U features from x and V from r gets the game of those U + V
// features (LeafGame). Background rows that have made the same choices so far share that walk: it carries a
// group of rows (a range of rows_, partitioned in place as the rows part), and a leaf adds the
// group's size times one row's terms. Explicit stack: any depth. Cost O(n m depth) per tree.
class InterventionalWalker {
 public:
  InterventionalWalker(int32_t max_features, int64_t n_background) : from_(max_features, 0), rows_(n_background) {}

  // Walks the tree for row x with every background row (r_of(k): row k's accessor), calling
  // on_leaf(value, xs, rs, rows) at each leaf a group of rows reaches: xs the features decided from
  // x, rs from r (as slot[feature]), rows the group's size.
  template <class RowX, class RowOf, class OnLeaf>
  void walk(const Tree& tree, const TreeInfo& info, const RowX& x, const RowOf& r_of, const int32_t* slot,
            OnLeaf on_leaf) {
    const int32_t nv = tree.n_values;
    const auto n_background = static_cast<int32_t>(rows_.size());
    for (int32_t k = 0; k < n_background; ++k) rows_[k] = k;
    stack_.clear();
    stack_.push_back({0, -1, 0, 0, n_background});
    while (!stack_.empty()) {
      const Item it = stack_.back();
      stack_.pop_back();
      if (it.node < 0) {  // leaving the subtree where feature it.local was decided
        from_[it.local] = 0;
        (it.side == 1 ? xs_ : rs_).pop_back();
        continue;
      }
      if (it.local >= 0) {
        from_[it.local] = static_cast<int8_t>(it.side);
        (it.side == 1 ? xs_ : rs_).push_back(slot[info.features[it.local]]);
        stack_.push_back({-1, it.local, it.side, 0, 0});
      }
      const int32_t node = it.node;
      if (tree.is_leaf(node)) {
        on_leaf(tree.value.data() + static_cast<int64_t>(node) * nv, xs_, rs_, static_cast<double>(it.end - it.begin));
        continue;
      }
      const int32_t feature = tree.feature[node], local = info.local[node];
      const int32_t cx = tree.child_of(node, x(feature));
      if (from_[local] == 1) {
        stack_.push_back({cx, -1, 0, it.begin, it.end});
        continue;
      }
      // The group's rows taking x's child first, then the others (who all take the other child).
      const auto mid = static_cast<int32_t>(
          std::partition(rows_.data() + it.begin, rows_.data() + it.end,
                         [&](int32_t k) { return tree.child_of(node, r_of(k)(feature)) == cx; }) -
          rows_.data());
      const int32_t other = cx == tree.left[node] ? tree.right[node] : tree.left[node];
      if (mid > it.begin) stack_.push_back({cx, -1, 0, it.begin, mid});  // agree with x: nothing decided
      if (it.end == mid) continue;
      if (from_[local] == 2) {  // decided from r above: each row follows itself
        stack_.push_back({other, -1, 0, mid, it.end});
      } else {  // parting: both ways, the feature decided from r, and from x
        stack_.push_back({other, local, 2, mid, it.end});
        stack_.push_back({cx, local, 1, mid, it.end});
      }
    }
  }

 private:
  struct Item {
    int32_t node;        // -1: the exit marker of a decided feature
    int32_t local;       // the feature decided on entering node (-1: none)
    int32_t side;        // 1: from x, 2: from r
    int32_t begin, end;  // the group: rows_[begin, end)
  };
  std::vector<Item> stack_;
  std::vector<int8_t> from_;  // per local feature: 0 undecided, 1 from x, 2 from r
  std::vector<int32_t> xs_, rs_;
  std::vector<int32_t> rows_;  // background row indices, grouped in place by the walk
};

// A tree read as leaf patterns. A row meets leaf l's conditions on each of the d distinct features
// of l's path or not (a feature splitting twice must send it the leaf's way both times); its
// pattern at l is the set of path features it fails, a d-bit mask (bit k: the k-th distinct
// feature from the root). Against background row r, x's values from leaf l depend only on x's
// pattern z and r's pattern c: the leaf is reachable from hybrid points iff z and c are disjoint,
// then U = |c| features come from x and V = |z| from r (LeafGame). So the background enters
// through each leaf's counts of its patterns, M_l[c], and a table per leaf gives every pattern z
// its d values, T_l[z][k] = sum over c disjoint from z of M_l[c] times feature k's weight (3^d
// steps). A row then needs one pass over the splits and a table row per leaf: O(n + m) rows.
//
// Leaves are read in groups: below a node u of few splits, every leaf's pattern is fixed by the
// row's pattern at u and the sides it takes at the group's splits, so one table per group, indexed
// by those bits, holds the sum of its leaves' rows times their values. At depth 6, groups of 3
// splits make a row read 16 rows of <= 7 values instead of 64 rows of 6. A node heads a group
// when it has at most kGroupSplits splits below it and its table is at most twice its leaves'.
class PatternTree {
 public:
  static constexpr int32_t kGroupSplits = 3;

  // Nodes in an order with parents before children (the engine's and scikit-learn's preorder).
  // used[j]: feature j's column in the gathered rows. pairs: tables of interaction values.
  PatternTree(const Tree& tree, const int32_t* used, bool pairs) : nv_(tree.n_values), pairs_(pairs) {
    const int64_t n = tree.node_count();
    std::vector<int32_t> parent(n, -1), n_path(n, 0), position(n, -1);
    for (int64_t node = 0; node < n; ++node) {
      if (tree.is_leaf(node)) continue;
      // The feature's position on the path: an ancestor's splitting on it, else the next one free.
      int32_t pos = -1;
      for (int32_t a = parent[node]; a >= 0 && pos < 0; a = parent[a])
        if (tree.feature[a] == tree.feature[node]) pos = position[a];
      position[node] = pos < 0 ? n_path[node] : pos;
      for (const int32_t child : {tree.left[node], tree.right[node]}) {
        parent[child] = static_cast<int32_t>(node);
        n_path[child] = pos < 0 ? n_path[node] + 1 : n_path[node];
      }
    }
    // Per node, bottom-up: the splits below it and the sum of 2^d over its leaves.
    std::vector<int32_t> splits_below(n, 0);
    std::vector<double> leaf_rows(n, 0.0);
    for (int64_t node = n - 1; node >= 0; --node) {
      if (tree.is_leaf(node)) {
        leaf_rows[node] = std::ldexp(1.0, n_path[node]);
        max_width_ = std::max(max_width_, n_path[node]);
      } else {
        splits_below[node] = 1 + splits_below[tree.left[node]] + splits_below[tree.right[node]];
        leaf_rows[node] = leaf_rows[tree.left[node]] + leaf_rows[tree.right[node]];
      }
    }
    if (max_width_ > kMaxPatternWidth) return;  // not read as patterns: only max_width() is asked
    // The groups, top-down; the splits above them carry patterns down, the groups' record sides.
    std::vector<int32_t> group_of(n, -1), stack{0};
    while (!stack.empty()) {
      const int32_t u = stack.back();
      stack.pop_back();
      if (splits_below[u] <= kGroupSplits && std::ldexp(1.0, n_path[u] + splits_below[u]) <= 2 * leaf_rows[u]) {
        group_of[u] = static_cast<int32_t>(groups_.size());
        groups_.push_back({u, n_path[u], 0, 0, 0, 0, {}});
        continue;
      }
      upper_.push_back(split_of(tree, used, u, uint32_t{1} << position[u]));
      stack.push_back(tree.right[u]);
      stack.push_back(tree.left[u]);
    }
    std::sort(upper_.begin(), upper_.end(), [](const Split& a, const Split& b) { return a.node < b.node; });
    std::vector<uint32_t> side(n, 0);  // a group split's side bit
    for (int64_t node = 0; node < n; ++node) {  // preorder: a node is in its parent's group, if not heading one
      if (group_of[node] < 0 && node > 0) group_of[node] = group_of[parent[node]];
      const int32_t g = group_of[node];
      if (g < 0) continue;
      if (tree.is_leaf(node)) {
        add_leaf(tree, static_cast<int32_t>(node), g, n_path[node], parent, position, side);
      } else {
        side[node] = uint32_t{1} << groups_[g].splits++;
        Split sp = split_of(tree, used, static_cast<int32_t>(node), side[node]);
        sp.group = g;
        inner_.push_back(sp);
      }
    }
    for (Group& g : groups_) {
      g.bits = g.prefix + g.splits;
      g.counts = count_size_;
      count_size_ += int64_t{1} << g.bits;
      g.table = table_size_;
      const auto slots = static_cast<int64_t>(g.features.size());
      table_size_ += (int64_t{1} << g.bits) * (pairs ? slots * slots : slots) * nv_;
      row_reads_ += (pairs ? slots * slots : slots) * nv_;
    }
  }

  int32_t max_width() const { return max_width_; }     // the most distinct features of a leaf's path
  int64_t count_size() const { return count_size_; }   // the background counts: 2^bits per group
  int64_t table_size() const { return table_size_; }   // the groups' tables
  int64_t row_reads() const { return row_reads_; }     // table values a row reads
  int64_t group_count() const { return static_cast<int64_t>(groups_.size()); }
  // Work to fill the tables: per leaf 3^d pairs of x's pattern z and a background pattern c
  // disjoint from it, each adding to its |c| features (|c|^2 pairs), d / 3 on average; then the
  // groups' tables.
  double table_work() const {
    double total = static_cast<double>(table_size_);
    for (const Leaf& l : leaves_)
      total += std::pow(3.0, l.width) * (1.0 + (pairs_ ? l.width * l.width / 9.0 : l.width / 3.0));
    return total;
  }

  // Rows are indexed kBatch at a time: each split's test runs over the batch's values of its
  // feature (contiguous, so vectorised), not split by split for one row.
  static constexpr int32_t kBatch = 8;

  // The table index in every group of kBatch rows (index: group_count() x kBatch; fail: node_count()
  // x kBatch scratch). columns[j * stride + b]: row b's value of the j-th used feature.
  void index(const Tree& tree, const double* columns, int64_t stride, uint32_t* fail, uint32_t* index) const {
    std::fill_n(fail, kBatch, 0u);
    uint32_t left[kBatch];
    for (const Split& s : upper_) {
      sides(tree, s, columns + s.column * stride, left);
      const uint32_t* here = fail + static_cast<int64_t>(s.node) * kBatch;
      uint32_t* to_left = fail + static_cast<int64_t>(s.left) * kBatch;
      uint32_t* to_right = fail + static_cast<int64_t>(s.right) * kBatch;
      for (int32_t b = 0; b < kBatch; ++b) {
        const uint32_t right_fails = s.bit & (0u - left[b]);
        to_left[b] = here[b] | (s.bit ^ right_fails);
        to_right[b] = here[b] | right_fails;
      }
    }
    for (size_t g = 0; g < groups_.size(); ++g)
      for (int32_t b = 0; b < kBatch; ++b)
        index[g * kBatch + b] = fail[static_cast<int64_t>(groups_[g].root) * kBatch + b] << groups_[g].splits;
    for (const Split& s : inner_) {
      sides(tree, s, columns + s.column * stride, left);
      for (int32_t b = 0; b < kBatch; ++b) index[s.group * kBatch + b] |= s.bit & (0u - left[b]);
    }
  }

  // Adds the first `rows` of a batch's indices to the counts (count_size() long).
  void count(const uint32_t* index, int32_t rows, double* counts) const {
    for (size_t g = 0; g < groups_.size(); ++g)
      for (int32_t b = 0; b < rows; ++b) counts[groups_[g].counts + index[g * kBatch + b]] += 1.0;
  }

  // The groups' tables (table_size() long) from the background counts, times scale: the leaves'
  // pattern counts, their tables (leaf_tables), then each group's rows.
  void tables(const Tree& tree, const double* counts, const GameWeights& weight, double scale, double* out) const {
    std::vector<double> leaf_counts(leaf_count_size_, 0.0), leaf_table(leaf_table_size_);
    for (const Leaf& l : leaves_) {
      const Group& g = groups_[l.group];
      for (uint32_t i = 0; i < (uint32_t{1} << g.bits); ++i)
        if (const double c = counts[g.counts + i]; c != 0.0) leaf_counts[l.patterns + pattern(l, g, i)] += c;
    }
    leaf_tables(leaf_counts.data(), weight, scale, leaf_table.data());
    std::fill_n(out, table_size_, 0.0);
    for (const Leaf& l : leaves_) {
      const Group& g = groups_[l.group];
      const auto slots = static_cast<int64_t>(g.features.size());
      const int32_t d = l.width, size = pairs_ ? d * d : d;
      const int64_t row = (pairs_ ? slots * slots : slots) * nv_;
      const double* value = tree.value.data() + static_cast<int64_t>(l.node) * nv_;
      const int32_t* slot = leaf_slots_.data() + l.slots;
      for (uint32_t i = 0; i < (uint32_t{1} << g.bits); ++i) {
        const double* t = leaf_table.data() + l.table + static_cast<int64_t>(pattern(l, g, i)) * size;
        double* o = out + g.table + static_cast<int64_t>(i) * row;
        for (int32_t k = 0; k < size; ++k) {
          const int64_t at = pairs_ ? slot[k / d] * slots + slot[k % d] : slot[k];
          for (int32_t c = 0; c < nv_; ++c) o[at * nv_ + c] += t[k] * value[c];
        }
      }
    }
  }

  // Adds the values (interaction values) of row b of a batch, from the batch's indices and the
  // tables, to phi (n_features x n_values, or n_features x n_features x n_values; p: the features).
  void add(const uint32_t* index, int32_t b, const double* tables, int64_t p, double* phi) const {
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      const Group& g = groups_[gi];
      const auto slots = static_cast<int32_t>(g.features.size());
      const int32_t* feature = g.features.data();
      if (!pairs_) {
        const double* t = tables + g.table + static_cast<int64_t>(index[gi * kBatch + b]) * slots * nv_;
        if (nv_ == 1) {
          for (int32_t k = 0; k < slots; ++k) phi[feature[k]] += t[k];
        } else {
          for (int32_t k = 0; k < slots; ++k)
            for (int32_t c = 0; c < nv_; ++c) phi[int64_t{feature[k]} * nv_ + c] += t[k * nv_ + c];
        }
        continue;
      }
      const double* t = tables + g.table + static_cast<int64_t>(index[gi * kBatch + b]) * slots * slots * nv_;
      for (int32_t a = 0; a < slots; ++a)
        for (int32_t b = 0; b < slots; ++b)
          for (int32_t c = 0; c < nv_; ++c) phi[(feature[a] * p + feature[b]) * nv_ + c] += t[(a * slots + b) * nv_ + c];
    }
  }

 private:
  struct Split {
    int32_t node, left, right, column;  // column: the feature's, in the gathered rows
    uint32_t bit;  // above the groups: the feature's pattern bit; in a group: the split's side bit
    int32_t group;
    double threshold;
    bool missing_left, categorical;
  };
  struct Group {
    int32_t root, prefix;           // prefix: the distinct features above the root (its pattern's bits)
    int32_t splits, bits;           // bits = prefix + splits: the width of a row's index
    int64_t counts, table;          // offsets
    std::vector<int32_t> features;  // the global features of its leaves' paths, by slot
  };
  struct Side {
    uint32_t side;  // the group split's side bit in an index
    bool left;      // the leaf is below its left child
    uint32_t bit;   // the leaf's pattern bit of its feature
  };
  struct Leaf {
    int32_t node, group, width;  // width d: the distinct features of its path
    int64_t slots;               // its d group slots in leaf_slots_, by pattern bit
    int64_t patterns, table;     // offsets of its 2^d counts and of its table
    std::vector<Side> sides;     // the group's splits on its path
  };

  static Split split_of(const Tree& tree, const int32_t* used, int32_t node, uint32_t bit) {
    return {node, tree.left[node], tree.right[node], used[tree.feature[node]], bit, -1,
            tree.threshold[node], tree.missing_go_to_left[node] != 0, std::isnan(tree.threshold[node])};
  }
  // left[b]: 1 if value[b] goes to the split's left child. A numeric split sends v left when
  // v <= threshold, and NaN by missing_left: so left is !(v > threshold) when missing values go
  // left, else v <= threshold, one comparison (two rows a time with SSE2, which gcc does not
  // vectorise from the scalar loop).
  static void sides(const Tree& tree, const Split& s, const double* value, uint32_t* left) {
    if (s.categorical) {
      for (int32_t b = 0; b < kBatch; ++b) left[b] = tree.child_of(s.node, value[b]) == s.left;
      return;
    }
#if defined(__SSE2__)
    const __m128d threshold = _mm_set1_pd(s.threshold);
    for (int32_t b = 0; b < kBatch; b += 2) {
      const __m128d v = _mm_loadu_pd(value + b);
      const int mask = _mm_movemask_pd(s.missing_left ? _mm_cmpngt_pd(v, threshold) : _mm_cmple_pd(v, threshold));
      left[b] = static_cast<uint32_t>(mask & 1);
      left[b + 1] = static_cast<uint32_t>(mask >> 1);
    }
#else
    for (int32_t b = 0; b < kBatch; ++b) left[b] = goes_left(value[b], s.threshold, s.missing_left);
#endif
  }

  void add_leaf(const Tree& tree, int32_t node, int32_t g, int32_t d, const std::vector<int32_t>& parent,
                const std::vector<int32_t>& position, const std::vector<uint32_t>& side) {
    Group& group = groups_[g];
    Leaf l{node, g, d, static_cast<int64_t>(leaf_slots_.size()), leaf_count_size_, leaf_table_size_, {}};
    leaf_count_size_ += int64_t{1} << d;
    leaf_table_size_ += (int64_t{1} << d) * (pairs_ ? d * d : d);
    leaf_slots_.resize(leaf_slots_.size() + d, -1);
    bool inside = node != group.root;  // the parent's split is one of the group's
    for (int32_t child = node, a = parent[node]; a >= 0; child = a, a = parent[a]) {
      auto it = std::find(group.features.begin(), group.features.end(), tree.feature[a]);
      if (it == group.features.end()) it = group.features.insert(group.features.end(), tree.feature[a]);
      leaf_slots_[l.slots + position[a]] = static_cast<int32_t>(it - group.features.begin());
      if (inside) l.sides.push_back({side[a], child == tree.left[a], uint32_t{1} << position[a]});
      if (a == group.root) inside = false;
    }
    leaves_.push_back(std::move(l));
  }

  // Leaf l's pattern for its group's index i: the root's pattern, and the pattern bit of each group
  // split where the index's side is not the leaf's.
  static uint32_t pattern(const Leaf& l, const Group& g, uint32_t i) {
    uint32_t z = i >> g.splits;
    for (const Side& s : l.sides) z |= ((i & s.side) != 0) == s.left ? 0u : s.bit;
    return z;
  }

  // Each leaf's table times scale: per pattern z of x, T[z][k] =
  // sum over background patterns c disjoint from z of M[c] times feature k's LeafGame value, or its
  // d x d interaction values (LeafGame::pairs).
  void leaf_tables(const double* counts, const GameWeights& weight, double scale, double* out) const {
    const bool pairs = pairs_;
    std::vector<double> across;
    for (const Leaf& l : leaves_) {
      const int64_t at = l.table;
      const int32_t d = l.width, size = pairs ? d * d : d;
      const uint32_t all = (uint32_t{1} << d) - 1;
      const double* m = counts + l.patterns;
      across.assign(d, 0.0);
      for (uint32_t z = 0;; ++z) {
        double* t = out + at + static_cast<int64_t>(z) * size;
        std::fill_n(t, size, 0.0);
        const uint32_t a = all & ~z;
        const int32_t v = __builtin_popcount(z);
        double from_r = 0.0, within_r = 0.0;
        std::fill(across.begin(), across.end(), 0.0);
        const int32_t diagonal = pairs ? d + 1 : 1;  // the stride of feature k's value in t
        for (uint32_t c = a;; c = (c - 1) & a) {  // the subsets of a, a first, down to the empty set
          if (m[c] != 0.0) {
            const int32_t u = __builtin_popcount(c);
            if (u > 0) {
              const double w = m[c] * weight(u - 1, v);
              for (uint32_t bits = c; bits; bits &= bits - 1) t[__builtin_ctz(bits) * diagonal] += w;
            }
            if (v > 0) from_r += m[c] * weight(u, v - 1);
            if (pairs) {
              if (u > 1) {
                const double h = m[c] * weight(u - 2, v) / 2;
                for (uint32_t bits = c; bits; bits &= bits - 1)
                  for (uint32_t rest = bits & (bits - 1); rest; rest &= rest - 1)
                    t[__builtin_ctz(bits) * d + __builtin_ctz(rest)] += h;
              }
              if (u > 0 && v > 0) {
                const double w = m[c] * weight(u - 1, v - 1);
                for (uint32_t bits = c; bits; bits &= bits - 1) across[__builtin_ctz(bits)] += w;
              }
              if (v > 1) within_r += m[c] * weight(u, v - 2);
            }
          }
          if (c == 0) break;
        }
        for (uint32_t bits = z; bits; bits &= bits - 1) t[__builtin_ctz(bits) * diagonal] = -from_r;
        if (pairs) finish_pairs(z, d, across, within_r, t);
        for (int32_t k = 0; k < size; ++k) t[k] *= scale;
        if (z == all) break;
      }
    }
  }

  // A pattern's interaction table from its sums: the upper triangle within x's features (t), the
  // across sums per x feature, the within-r sum, and the values on the diagonal; then the pairs
  // across and within r, the lower triangle, and each diagonal less its row's pairs.
  static void finish_pairs(uint32_t z, int32_t d, const std::vector<double>& across, double within_r, double* t) {
    for (int32_t k = 0; k < d; ++k)
      for (int32_t j = k + 1; j < d; ++j) {
        const bool rk = (z >> k) & 1, rj = (z >> j) & 1;
        if (rk && rj) t[k * d + j] = within_r / 2;
        else if (rk != rj) t[k * d + j] = -across[rk ? j : k] / 2;
        t[j * d + k] = t[k * d + j];
      }
    for (int32_t k = 0; k < d; ++k)
      for (int32_t j = 0; j < d; ++j)
        if (j != k) t[k * d + k] -= t[k * d + j];
  }

  int32_t nv_;
  bool pairs_;
  std::vector<Split> upper_, inner_;
  std::vector<Group> groups_;
  std::vector<Leaf> leaves_;
  std::vector<int32_t> leaf_slots_;
  int32_t max_width_ = 0;
  int64_t count_size_ = 0, table_size_ = 0, row_reads_ = 0, leaf_count_size_ = 0, leaf_table_size_ = 0;
};

// Whether a tree is read as patterns: when its tables are narrow enough (leaves at most
// kMaxPatternWidth wide, tables within a budget) and, with n rows explained against m background
// rows, the pattern form's work ((n + m) passes over the nodes, the tables, n reads of a table row
// per group) is below the walk's (n m row pairs, each following at least half a path).
bool use_patterns(const Tree& tree, const TreeInfo& info, const int32_t* used, int64_t n, int64_t m, bool pairs,
                  BackgroundAlgorithm algorithm) {
  constexpr int64_t kTreeTables = int64_t{1} << 25;  // doubles, 256 MB
  if (info.max_depth == 0 || algorithm == BackgroundAlgorithm::walk) return false;
  if (algorithm == BackgroundAlgorithm::automatic && info.max_depth > 3 * kMaxPatternWidth) return false;
  const PatternTree patterns(tree, used, pairs);
  if (patterns.max_width() > kMaxPatternWidth) {
    if (algorithm == BackgroundAlgorithm::patterns)
      throw std::invalid_argument("a tree has a leaf with " + std::to_string(patterns.max_width()) +
                                  " distinct features on its path; leaf patterns take at most " +
                                  std::to_string(kMaxPatternWidth));
    return false;
  }
  if (algorithm == BackgroundAlgorithm::patterns) return true;
  if (patterns.table_size() > kTreeTables) return false;
  const double pattern_work = static_cast<double>(n + m) * static_cast<double>(tree.node_count()) +
                              patterns.table_work() + static_cast<double>(n) * static_cast<double>(patterns.row_reads());
  const double walk_work = static_cast<double>(n) * static_cast<double>(m) * std::max(1, info.max_depth / 2);
  return pattern_work < walk_work;
}

// Rows gathered at the used features in tiles of PatternTree::kBatch rows, column by column within
// a tile (value j of row r at ((r / kBatch) * n_used + j) * kBatch + r % kBatch): a batch's values of
// a feature are contiguous for the pattern tests, and a row is still one accessor for the walk.
// Rows past the end of the last tile are zeros.
constexpr int64_t kTile = PatternTree::kBatch;

void gather_tiles(const MatrixView& X, const UsedFeatures& used, int64_t begin, int64_t end, std::vector<double>& out) {
  const auto n_used = static_cast<int64_t>(used.features.size());
  std::vector<double> rows;
  out.assign((end - begin + kTile - 1) / kTile * kTile * n_used, 0.0);
  for (int64_t at = begin; at < end; at += kTile) {
    const int64_t stop = std::min(end, at + kTile);
    gather_rows(X, used, at, stop, rows);
    double* tile = out.data() + (at - begin) * n_used;
    for (int64_t r = 0; r < stop - at; ++r)
      for (int64_t j = 0; j < n_used; ++j) tile[j * kTile + r] = rows[r * n_used + j];
  }
}

// Row r of tiles (the accessor the walk reads): x(j) is its value of feature j.
inline auto tile_row(const double* tiles, int64_t n_used, const int32_t* index, int64_t r) {
  const double* xr = tiles + (r / kTile) * n_used * kTile + r % kTile;
  return [xr, index](int32_t j) { return xr[index[j] * kTile]; };
}

// One call's inputs: the forest, the background rows gathered at the used features, the game's
// weights and the output's form (values, or interactions when pairs).
struct Background {
  const Forest& forest;
  const Prepared& prep;
  const std::vector<double>& rows;  // the background rows in tiles (gather_tiles)
  int64_t n_background;
  GameWeights weights;
  double scale;  // 1 / (trees x background rows)
  bool pairs;

  auto row(int64_t r) const {
    return tile_row(rows.data(), static_cast<int64_t>(prep.used.features.size()), prep.used.index.data(), r);
  }
  auto row_of() const {
    return [this](int64_t r) { return row(r); };
  }
  // What a walk's leaf adds to out (one row's output, features as the walk's slots index them).
  auto on_leaf(int64_t p, double* out) const {
    return [this, p, out, game = LeafGame{weights, forest.n_values(), p}](const double* v, const std::vector<int32_t>& xs,
                                                                         const std::vector<int32_t>& rs, double rows) {
      if (pairs) {
        game.pairs(v, xs, rs, scale * rows, out);
      } else {
        game.values(v, xs, rs, scale * rows, out);
      }
    };
  }
};

// Values by the grouped walk for every tree, when no tree is read as patterns (few rows or few
// background rows): tasks are (row, chunk of kTreeChunk trees), a few rows at a time, a row's sums
// per chunk added in chunk order, so even one row spreads over the threads and nothing depends on
// them.
void walk_every_tree(const Background& bg, const MatrixView& X, double* out, int n_threads) {
  const Prepared& prep = bg.prep;
  const int32_t nv = bg.forest.n_values();
  const int64_t p = bg.forest.n_features, n_trees = static_cast<int64_t>(bg.forest.trees.size());
  const auto n_used = static_cast<int64_t>(prep.used.features.size());
  const int32_t* index = prep.used.index.data();
  constexpr int64_t kRows = 4, kTreeChunk = 16;
  const int64_t n_chunks = (n_trees + kTreeChunk - 1) / kTreeChunk, width = n_used * nv;
  std::vector<double> x_rows, partial, acc(width);
  for (int64_t begin = 0; begin < X.n_rows; begin += kRows) {
    const int64_t end = std::min(X.n_rows, begin + kRows), nb = end - begin;
    gather_rows(X, prep.used, begin, end, x_rows);
    const Block block{begin, end, x_rows.data(), n_used, index};
    partial.assign(nb * n_chunks * width, 0.0);
    parallel_for(
        nb * n_chunks, n_threads,
        [&](int) { return InterventionalWalker(prep.extent.max_features, bg.n_background); },
        [&](int64_t task, int, InterventionalWalker& walker) {
          const int64_t i = task / n_chunks, chunk = task % n_chunks;
          const int64_t last = std::min(n_trees, (chunk + 1) * kTreeChunk);
          for (int64_t t = chunk * kTreeChunk; t < last; ++t)
            walker.walk(bg.forest.trees[t], prep.infos[t], block.row(i), bg.row_of(), index,
                        bg.on_leaf(0, partial.data() + task * width));
        });
    for (int64_t i = 0; i < nb; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t chunk = 0; chunk < n_chunks; ++chunk) {
        const double* part = partial.data() + (i * n_chunks + chunk) * width;
        for (int64_t k = 0; k < width; ++k) acc[k] += part[k];
      }
      write_row(acc.data(), prep.used, nv, p, out + (begin + i) * p * nv);
    }
  }
}

// Trees in chunks whose tables fit a budget: first each patterned tree's background counts and
// tables (a tree a task; counts are whole numbers, so exact in any order), then blocks of rows,
// each row adding the chunk's trees in tree order, patterned or walked, into out (zeros on entry).
void patterns_and_walks(const Background& bg, const std::vector<char>& patterned, const MatrixView& X, double* out,
                        int n_threads) {
  const Forest& forest = bg.forest;
  const Prepared& prep = bg.prep;
  const int64_t p = forest.n_features, n_trees = static_cast<int64_t>(forest.trees.size());
  const int64_t row_size = (bg.pairs ? p * p : p) * forest.n_values();
  const auto n_used = static_cast<int64_t>(prep.used.features.size());
  std::vector<int32_t> identity(p);
  for (int32_t j = 0; j < p; ++j) identity[j] = j;
  constexpr int64_t kTableBudget = int64_t{1} << 23;  // doubles, 64 MB
  std::vector<std::unique_ptr<PatternTree>> shapes(n_trees);
  std::vector<std::vector<double>> tables(n_trees);
  // Rows per task: a tree's tables (196 KB at depth 6) are read at one random row per leaf and
  // row, so each is read by many rows while it is in cache (32 rows a block took 2 us a row and
  // tree at depth 6, in L3 misses); at least 8 tasks.
  // Bounded by the gathered rows' size (1 MB), and a whole number of tiles.
  const int64_t rows = std::clamp<int64_t>(std::min<int64_t>(X.n_rows / 8, (int64_t{1} << 17) / std::max<int64_t>(n_used, 1)), 1, 1024);
  const int64_t block = (rows + kTile - 1) / kTile * kTile;
  for (int64_t first = 0; first < n_trees;) {
    int64_t last = first, budget = 0;
    while (last < n_trees && (last == first || budget < kTableBudget)) {
      if (patterned[last]) {
        shapes[last] = std::make_unique<PatternTree>(forest.trees[last], prep.used.index.data(), bg.pairs);
        budget += shapes[last]->table_size() + shapes[last]->count_size();
      }
      ++last;
    }
    // The background counts: blocks of background rows, each tile read once for all the chunk's
    // trees (in cache), counted per thread and summed (whole numbers: exact in any order).
    const int64_t n_chunk = last - first, bg_block = 64 * kTile;
    std::vector<std::vector<std::vector<double>>> thread_counts(std::max(n_threads, 1));
    parallel_for(
        (bg.n_background + bg_block - 1) / bg_block, n_threads,
        [&](int) { return std::make_pair(std::vector<uint32_t>(), std::vector<uint32_t>()); },
        [&](int64_t blk, int thread, auto& scratch) {
          auto& [fail, index] = scratch;
          auto& counts = thread_counts[thread];
          if (counts.empty()) {
            counts.resize(n_chunk);
            for (int64_t t = first; t < last; ++t)
              if (patterned[t]) counts[t - first].assign(shapes[t]->count_size(), 0.0);
          }
          const int64_t end = std::min(bg.n_background, (blk + 1) * bg_block);
          for (int64_t r = blk * bg_block; r < end; r += kTile) {
            const double* tile = bg.rows.data() + r * n_used;
            const auto rows = static_cast<int32_t>(std::min(kTile, end - r));
            for (int64_t t = first; t < last; ++t) {
              if (!patterned[t]) continue;
              const PatternTree& shape = *shapes[t];
              fail.resize(forest.trees[t].node_count() * kTile);
              index.resize(shape.group_count() * kTile);
              shape.index(forest.trees[t], tile, kTile, fail.data(), index.data());
              shape.count(index.data(), rows, counts[t - first].data());
            }
          }
        });
    parallel_for(n_chunk, n_threads, no_state, [&](int64_t task, int, NoState&) {
      const int64_t t = first + task;
      if (!patterned[t]) return;
      const PatternTree& shape = *shapes[t];
      std::vector<double> counts(shape.count_size(), 0.0);
      for (const auto& per_thread : thread_counts)
        if (!per_thread.empty())
          for (int64_t i = 0; i < shape.count_size(); ++i) counts[i] += per_thread[task][i];
      tables[t].resize(shape.table_size());
      shape.tables(forest.trees[t], counts.data(), bg.weights, bg.scale, tables[t].data());
    });
    parallel_for(
        (X.n_rows + block - 1) / block, n_threads,
        [&](int) {
          return std::make_tuple(InterventionalWalker(prep.extent.max_features, bg.n_background), std::vector<uint32_t>(),
                                 std::vector<uint32_t>());
        },
        [&](int64_t blk, int, auto& state) {
          auto& [walker, fail, index] = state;
          const int64_t begin = blk * block, end = std::min(X.n_rows, begin + block);
          std::vector<double> tiles;
          gather_tiles(X, prep.used, begin, end, tiles);
          for (int64_t t = first; t < last; ++t) {
            checkpoint();
            const Tree& tree = forest.trees[t];
            if (!patterned[t]) {
              for (int64_t i = begin; i < end; ++i)
                walker.walk(tree, prep.infos[t], tile_row(tiles.data(), n_used, prep.used.index.data(), i - begin),
                            bg.row_of(), identity.data(), bg.on_leaf(p, out + i * row_size));
              continue;
            }
            const PatternTree& shape = *shapes[t];
            fail.resize(tree.node_count() * kTile);
            index.resize(shape.group_count() * kTile);
            for (int64_t at = begin; at < end; at += kTile) {
              shape.index(tree, tiles.data() + (at - begin) * n_used, kTile, fail.data(), index.data());
              for (int64_t i = at; i < std::min(end, at + kTile); ++i)
                shape.add(index.data(), static_cast<int32_t>(i - at), tables[t].data(), p, out + i * row_size);
            }
          }
        });
    for (int64_t t = first; t < last; ++t) {
      shapes[t].reset();
      std::vector<double>().swap(tables[t]);
    }
    first = last;
  }
}

// Checks, gathers the background rows, chooses each tree's form and fills out; returns the
// expected value, the mean prediction over the background rows.
std::vector<double> against_background(const Forest& forest, const MatrixView& X, const MatrixView& background,
                                       double* out, int n_threads, Attribution kind, BackgroundAlgorithm algorithm,
                                       bool pairs) {
  const Prepared prep(forest, X, n_threads);
  if (background.n_cols != forest.n_features)
    throw std::invalid_argument("background has a different number of features than the forest");
  if (background.n_rows == 0) throw std::invalid_argument("background has no rows");
  if (background.n_rows > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument("background has more than 2^31 - 1 rows");
  const int32_t nv = forest.n_values();
  const auto n_trees = static_cast<int64_t>(forest.trees.size());
  std::vector<double> rows;
  gather_tiles(background, prep.used, 0, background.n_rows, rows);
  const Background bg{forest, prep, rows, background.n_rows, GameWeights(std::max(prep.extent.max_depth, 1), kind),
                      1.0 / (static_cast<double>(n_trees) * static_cast<double>(background.n_rows)), pairs};
  std::vector<char> patterned(n_trees);
  parallel_for(n_trees, n_threads, no_state, [&](int64_t t, int, NoState&) {
    patterned[t] = use_patterns(forest.trees[t], prep.infos[t], prep.used.index.data(), X.n_rows, background.n_rows,
                                pairs, algorithm);
  });
  if (!pairs && std::none_of(patterned.begin(), patterned.end(), [](char c) { return c != 0; })) {
    walk_every_tree(bg, X, out, n_threads);
  } else {
    if (!pairs) std::fill_n(out, X.n_rows * forest.n_features * nv, 0.0);
    patterns_and_walks(bg, patterned, X, out, n_threads);
  }
  // The expected value, the mean prediction over the background rows: sums per block of rows,
  // added in block order.
  constexpr int64_t kRows = 4096;
  const int64_t n_blocks = (background.n_rows + kRows - 1) / kRows;
  std::vector<double> sums(n_blocks * nv, 0.0), expected(nv, 0.0);
  parallel_for(n_blocks, n_threads, no_state, [&](int64_t blk, int, NoState&) {
    std::vector<double> row(nv);
    for (int64_t r = blk * kRows; r < std::min(background.n_rows, (blk + 1) * kRows); ++r) {
      std::fill(row.begin(), row.end(), 0.0);
      for (const Tree& tree : forest.trees) {
        const double* v = tree.value.data() + int64_t{tree.leaf_of(bg.row(r))} * nv;
        for (int32_t c = 0; c < nv; ++c) row[c] += v[c];
      }
      for (int32_t c = 0; c < nv; ++c) sums[blk * nv + c] += row[c] / static_cast<double>(n_trees);
    }
  });
  for (int64_t blk = 0; blk < n_blocks; ++blk)
    for (int32_t c = 0; c < nv; ++c) expected[c] += sums[blk * nv + c];
  for (double& v : expected) v /= static_cast<double>(background.n_rows);
  return expected;
}

}  // namespace

std::vector<double> shap_values_interventional(const Forest& forest, const MatrixView& X, const MatrixView& background,
                                               double* out, int n_threads, Attribution kind,
                                               BackgroundAlgorithm algorithm) {
  return against_background(forest, X, background, out, n_threads, kind, algorithm, false);
}

std::vector<double> shap_interaction_values_interventional(const Forest& forest, const MatrixView& X,
                                                           const MatrixView& background, double* out, int n_threads,
                                                           Attribution kind, BackgroundAlgorithm algorithm) {
  return against_background(forest, X, background, out, n_threads, kind, algorithm, true);
}

}  // namespace pyinterp
