// Trees read as leaf patterns (PatternTree), for TreeSHAP's forms that read shallow trees by tables
// (shap_background.cpp against background rows, shap.cpp path-dependent), and rows gathered in
// tiles for them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../common/parallel.hpp"
#include "../forest/forest.hpp"
#include "shap.hpp"
#include "shap_parts.hpp"

namespace pyinterp::shap_parts {

// The error of algorithm="patterns" on a tree too wide for the tables.
[[noreturn]] inline void throw_too_wide(int32_t width) {
  throw std::invalid_argument("a tree has a leaf with " + std::to_string(width) +
                              " distinct features on its path; leaf patterns take at most " +
                              std::to_string(kMaxPatternWidth));
}

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
  // Work to fill the tables, then the groups'. From background counts (tables): per leaf 3^d
  // pairs of x's pattern z and a background pattern c disjoint from it, each adding to its |c|
  // features (|c|^2 pairs), d / 3 on average. From the covers (path_tables): per leaf and pattern,
  // ceil(d / 2) rule nodes of about 3 d products.
  double table_work(bool from_covers = false) const {
    double total = static_cast<double>(table_size_);
    for (const Leaf& l : leaves_) {
      const double d = l.width;
      total += from_covers ? leaf_table_work(l.width, pairs_) : std::pow(3.0, d) * (1.0 + (pairs_ ? d * d / 9.0 : d / 3.0));
    }
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
    group_tables(tree, leaf_table.data(), out);
  }

  // The groups' tables (table_size() long) of path-dependent TreeSHAP (Banzhaf: the integrand at
  // t = 1/2), times scale. A leaf whose path has features with cover shares z_k (their splits'
  // products) gives a row failing the features in z (o_k = 0 there, 1 elsewhere) the values
  // v (o_k - z_k) int prod_{j != k} (o_j t + z_k (1 - t)) dt (see values_walker.hpp): per pattern,
  // by Gauss-Legendre with ceil(d / 2) nodes and products on either side of k (no division);
  // interactions by r_k = (o_k - z_k) / f_k (pairs_walker.hpp).
  void path_tables(const Tree& tree, Attribution kind, double scale, double* out) const {
    std::vector<double> leaf_table(leaf_table_size_), f, before, r;
    std::vector<Quadrature> rules(max_width_ + 1);  // by leaf width, each made once
    for (const Leaf& l : leaves_) {
      const int32_t d = l.width;
      if (rules[d].w.empty()) rules[d] = kind == Attribution::banzhaf ? banzhaf_rule() : gauss_legendre(std::max(1, (d + 1) / 2));
      const Quadrature& rule = rules[d];
      const auto m = static_cast<int32_t>(rule.w.size());
      const double* z = shares_.data() + l.slots;
      f.resize(d);
      before.resize(d + 1);
      r.resize(d);
      for (uint32_t pattern = 0; pattern < (uint32_t{1} << d); ++pattern) {
        double* t = leaf_table.data() + l.table + static_cast<int64_t>(pattern) * (pairs_ ? d * d : d);
        std::fill_n(t, pairs_ ? d * d : d, 0.0);
        for (int32_t q = 0; q < m; ++q) {
          for (int32_t k = 0; k < d; ++k) f[k] = ((pattern >> k) & 1) ? z[k] * rule.s[q] : rule.t[q] + z[k] * rule.s[q];
          if (!pairs_) {
            before[0] = 1.0;
            for (int32_t k = 0; k < d; ++k) before[k + 1] = before[k] * f[k];
            double after = rule.w[q];
            for (int32_t k = d - 1; k >= 0; --k) {
              t[k] += before[k] * after;
              after *= f[k];
            }
            continue;
          }
          double product = rule.w[q];
          for (int32_t k = 0; k < d; ++k) product *= f[k];
          for (int32_t k = 0; k < d; ++k)
            r[k] = ((pattern >> k) & 1) ? -1.0 / rule.s[q] : (1.0 - z[k]) / (rule.t[q] + z[k] * rule.s[q]);
          for (int32_t k = 0; k < d; ++k) {
            t[k * d + k] += product * r[k];
            for (int32_t j = k + 1; j < d; ++j) t[k * d + j] += product * r[k] * r[j] / 2;
          }
        }
        if (!pairs_) {
          for (int32_t k = 0; k < d; ++k) t[k] *= (((pattern >> k) & 1) ? -z[k] : 1.0 - z[k]) * scale;
          continue;
        }
        for (int32_t k = 0; k < d; ++k)
          for (int32_t j = k + 1; j < d; ++j) {
            t[j * d + k] = t[k * d + j];
            t[k * d + k] -= t[k * d + j];
            t[j * d + j] -= t[k * d + j];
          }
        for (int32_t k = 0; k < d * d; ++k) t[k] *= scale;
      }
    }
    group_tables(tree, leaf_table.data(), out);
  }

  // Adds the values (interaction values) of `rows` rows in tiles (gather_tiles' layout, from a
  // tile's start), row r's to out + r * row_size; fail and index: scratch.
  void add_rows(const Tree& tree, const double* tiles, int64_t n_used, int64_t rows, const double* tables, int64_t p,
                double* out, int64_t row_size, std::vector<uint32_t>& fail, std::vector<uint32_t>& index) const {
    fail.resize(tree.node_count() * kBatch);
    index.resize(groups_.size() * kBatch);
    for (int64_t at = 0; at < rows; at += kBatch) {
      this->index(tree, tiles + at * n_used, kBatch, fail.data(), index.data());
      for (int64_t r = at; r < std::min(rows, at + kBatch); ++r)
        add(index.data(), static_cast<int32_t>(r - at), tables, p, out + r * row_size);
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
      for (int32_t i = 0; i < slots; ++i)
        for (int32_t j = 0; j < slots; ++j)
          for (int32_t c = 0; c < nv_; ++c) phi[(feature[i] * p + feature[j]) * nv_ + c] += t[(i * slots + j) * nv_ + c];
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

  // The groups' tables from the leaves' (scalar per pattern and feature): each group row the sum
  // of its leaves' rows at their patterns, times their values, at the group's slots.
  void group_tables(const Tree& tree, const double* leaf_table, double* out) const {
    std::fill_n(out, table_size_, 0.0);
    for (const Leaf& l : leaves_) {
      const Group& g = groups_[l.group];
      const auto slots = static_cast<int64_t>(g.features.size());
      const int32_t d = l.width, size = pairs_ ? d * d : d;
      const int64_t row = (pairs_ ? slots * slots : slots) * nv_;
      const double* value = tree.value.data() + static_cast<int64_t>(l.node) * nv_;
      const int32_t* slot = leaf_slots_.data() + l.slots;
      for (uint32_t i = 0; i < (uint32_t{1} << g.bits); ++i) {
        const double* t = leaf_table + l.table + static_cast<int64_t>(pattern(l, g, i)) * size;
        double* o = out + g.table + static_cast<int64_t>(i) * row;
        for (int32_t k = 0; k < size; ++k) {
          const int64_t at = pairs_ ? slot[k / d] * slots + slot[k % d] : slot[k];
          for (int32_t c = 0; c < nv_; ++c) o[at * nv_ + c] += t[k] * value[c];
        }
      }
    }
  }

  void add_leaf(const Tree& tree, int32_t node, int32_t g, int32_t d, const std::vector<int32_t>& parent,
                const std::vector<int32_t>& position, const std::vector<uint32_t>& side) {
    Group& group = groups_[g];
    Leaf l{node, g, d, static_cast<int64_t>(leaf_slots_.size()), leaf_count_size_, leaf_table_size_, {}};
    leaf_count_size_ += int64_t{1} << d;
    leaf_table_size_ += (int64_t{1} << d) * (pairs_ ? d * d : d);
    leaf_slots_.resize(leaf_slots_.size() + d, -1);
    shares_.resize(shares_.size() + d, 1.0);
    bool inside = node != group.root;  // the parent's split is one of the group's
    const auto& cover = tree.weighted_n_node_samples;
    for (int32_t child = node, a = parent[node]; a >= 0; child = a, a = parent[a]) {
      // As TreeInfo::fraction: a node without weight (hand-made states only) splits evenly.
      shares_[l.slots + position[a]] *= cover[a] > 0.0 ? cover[child] / cover[a] : 0.5;
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
    std::vector<double> across;
    for (const Leaf& l : leaves_) {
      const int32_t d = l.width, size = pairs_ ? d * d : d;
      const uint32_t all = (uint32_t{1} << d) - 1;
      const double* m = counts + l.patterns;
      across.assign(d, 0.0);
      for (uint32_t z = 0;; ++z) {
        double* t = out + l.table + static_cast<int64_t>(z) * size;
        std::fill_n(t, size, 0.0);
        const uint32_t a = all & ~z;
        const int32_t v = __builtin_popcount(z);
        double from_r = 0.0, within_r = 0.0;
        std::fill(across.begin(), across.end(), 0.0);
        const int32_t diagonal = pairs_ ? d + 1 : 1;  // the stride of feature k's value in t
        for (uint32_t c = a;; c = (c - 1) & a) {  // the subsets of a, a first, down to the empty set
          if (m[c] != 0.0) {
            const int32_t u = __builtin_popcount(c);
            if (u > 0) {
              const double w = m[c] * weight(u - 1, v);
              for (uint32_t bits = c; bits; bits &= bits - 1) t[__builtin_ctz(bits) * diagonal] += w;
            }
            if (v > 0) from_r += m[c] * weight(u, v - 1);
            if (pairs_) {
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
        if (pairs_) finish_pairs(z, d, across, within_r, t);
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
  std::vector<double> shares_;  // per leaf and pattern bit: the product of its splits' cover shares
  int32_t max_width_ = 0;
  int64_t count_size_ = 0, table_size_ = 0, row_reads_ = 0, leaf_count_size_ = 0, leaf_table_size_ = 0;
};

// Rows gathered at the used features in tiles of PatternTree::kBatch rows, column by column within
// a tile (value j of row r at ((r / kBatch) * n_used + j) * kBatch + r % kBatch): a batch's values of
// a feature are contiguous for the pattern tests, and a row is still one accessor for the walk.
// Rows past the end of the last tile are zeros.
constexpr int64_t kTile = PatternTree::kBatch;

// Rows (n_rows x n_used, row-major) into tiles.
inline void to_tiles(const double* rows, int64_t n_rows, int64_t n_used, double* tiles) {
  std::fill_n(tiles, (n_rows + kTile - 1) / kTile * kTile * n_used, 0.0);
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t j = 0; j < n_used; ++j) tiles[((r / kTile) * n_used + j) * kTile + r % kTile] = rows[r * n_used + j];
}

// Rows [begin, end) of X at the used features into tiles, a tile at a time.
inline void gather_tiles(const MatrixView& X, const UsedFeatures& used, int64_t begin, int64_t end, std::vector<double>& out) {
  const auto n_used = static_cast<int64_t>(used.features.size());
  std::vector<double> rows;
  out.resize((end - begin + kTile - 1) / kTile * kTile * n_used);
  for (int64_t at = begin; at < end; at += kTile) {
    const int64_t stop = std::min(end, at + kTile);
    gather_rows(X, used, at, stop, rows);
    to_tiles(rows.data(), stop - at, n_used, out.data() + (at - begin) * n_used);
  }
}

// Row r of tiles (the accessor the walk reads): x(j) is its value of feature j.
inline auto tile_row(const double* tiles, int64_t n_used, const int32_t* index, int64_t r) {
  const double* xr = tiles + (r / kTile) * n_used * kTile + r % kTile;
  return [xr, index](int32_t j) { return xr[index[j] * kTile]; };
}

// Each tree's PatternTree (of values, and of interactions), made when a call first needs it, and
// the path-dependent tables of values (PatternTree::path_tables, per Attribution) up to kKeptTables
// doubles over the forest, kept with the forest (Forest::derived): later calls on the same forest
// read them. A call holds the lock while it fills what it needs.
struct KeptPatterns {
  static constexpr int64_t kKeptTables = int64_t{1} << 22;  // 32 MB
  explicit KeptPatterns(size_t n_trees) {
    for (int i = 0; i < 2; ++i) {
      shapes[i].resize(n_trees);
      tables[i].resize(n_trees);
    }
  }
  std::mutex mutex;
  std::vector<std::shared_ptr<const PatternTree>> shapes[2];  // by pairs; null: not made (a shape too wide is kept too)
  std::vector<std::shared_ptr<const std::vector<double>>> tables[2];  // by Attribution; null: not kept
  int64_t kept_tables = 0;  // doubles
};

inline std::shared_ptr<KeptPatterns> kept_patterns(const Forest& forest) {
  return forest.derived.get<KeptPatterns>([&] { return std::make_shared<KeptPatterns>(forest.trees.size()); });
}

// The trees read as leaf pattern tables (null: walked) by one call: none for algorithm=walk; every
// tree for patterns (std::invalid_argument for one whose leaves are wider than kMaxPatternWidth);
// for automatic, the narrow trees of at most 256 MB of tables that cheaper(tree, info, shape)
// prefers to read from tables, made (or taken from KeptPatterns) only where may_be_cheaper(tree,
// info) allows. Made on the threads, one tree a task. The choice does not depend on what is kept.
template <class MayBeCheaper, class Cheaper>
std::vector<std::shared_ptr<const PatternTree>> pattern_trees(const Forest& forest, const Prepared& prep, bool pairs,
                                                              ShapAlgorithm algorithm, int n_threads,
                                                              MayBeCheaper may_be_cheaper, Cheaper cheaper) {
  constexpr int64_t kTreeTables = int64_t{1} << 25;  // doubles
  const auto n_trees = static_cast<int64_t>(forest.trees.size());
  std::vector<std::shared_ptr<const PatternTree>> shapes(n_trees);
  if (algorithm == ShapAlgorithm::walk) return shapes;
  const bool forced = algorithm == ShapAlgorithm::patterns;
  const auto kept = kept_patterns(forest);
  std::lock_guard<std::mutex> lock(kept->mutex);
  auto& kept_shapes = kept->shapes[pairs];
  parallel_for(n_trees, n_threads, no_state, [&](int64_t t, int, NoState&) {
    const Tree& tree = forest.trees[t];
    const TreeInfo& info = prep.infos[t];
    // A leaf's width is at most its depth; far deeper trees are not made to be measured.
    if (info.max_depth == 0 || (!forced && (info.max_depth > 3 * kMaxPatternWidth || !may_be_cheaper(tree, info))))
      return;
    if (!kept_shapes[t]) kept_shapes[t] = std::make_shared<const PatternTree>(tree, prep.used.index.data(), pairs);
    const PatternTree& shape = *kept_shapes[t];
    if (shape.max_width() > kMaxPatternWidth) {
      if (forced) throw_too_wide(shape.max_width());
      return;
    }
    if (forced || (shape.table_size() <= kTreeTables && cheaper(tree, info, shape))) shapes[t] = kept_shapes[t];
  });
  return shapes;
}

// The path-dependent tables (PatternTree::path_tables, times 1 / trees) of the trees shapes holds:
// those kept read in place, the others made on the threads (a tree a task) and kept, in tree order,
// while the forest's kept tables stay within KeptPatterns::kKeptTables.
inline std::vector<std::shared_ptr<const std::vector<double>>> kept_path_tables(
    const Forest& forest, const std::vector<std::shared_ptr<const PatternTree>>& shapes, Attribution kind, int n_threads) {
  const auto n_trees = static_cast<int64_t>(forest.trees.size());
  std::vector<std::shared_ptr<const std::vector<double>>> tables(n_trees);
  if (std::none_of(shapes.begin(), shapes.end(), [](const auto& shape) { return shape != nullptr; })) return tables;
  const auto kept = kept_patterns(forest);
  std::lock_guard<std::mutex> lock(kept->mutex);
  auto& kept_tables = kept->tables[static_cast<int>(kind)];
  const double scale = 1.0 / static_cast<double>(n_trees);
  parallel_for(n_trees, n_threads, no_state, [&](int64_t t, int, NoState&) {
    if (!shapes[t]) return;
    if (kept_tables[t]) {
      tables[t] = kept_tables[t];
      return;
    }
    auto table = std::make_shared<std::vector<double>>(shapes[t]->table_size());
    shapes[t]->path_tables(forest.trees[t], kind, scale, table->data());
    tables[t] = std::move(table);
  });
  for (int64_t t = 0; t < n_trees; ++t) {
    if (!tables[t] || kept_tables[t]) continue;
    const auto size = static_cast<int64_t>(tables[t]->size());
    if (kept->kept_tables + size > KeptPatterns::kKeptTables) break;
    kept_tables[t] = tables[t];
    kept->kept_tables += size;
  }
  return tables;
}

}  // namespace pyinterp::shap_parts
