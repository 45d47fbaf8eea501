// Attributions against background rows (interventional TreeSHAP and Banzhaf values): per tree either
// the leaf pattern tables (O(n + m) in the rows) or the grouped walk (O(n m)), chosen by their cost.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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
// then U = |c| features come from x and V = |z| from r (GameWeights). So the background enters
// through each leaf's counts of its patterns, M_l[c], and a table per leaf gives every pattern z
// its d values, T_l[z][k] = sum over c disjoint from z of M_l[c] times feature k's weight. A row
// then costs one pass over the splits (its patterns at every leaf) and d reads per leaf: O(n + m)
// rows per tree, at O(3^d) per leaf for the tables.
class PatternTree {
 public:
  // Nodes in an order with parents before children (the engine's and scikit-learn's preorder).
  // used[j]: feature j's column in the gathered rows.
  PatternTree(const Tree& tree, const int32_t* used) {
    const int64_t n = tree.node_count();
    std::vector<int32_t> parent(n, -1), n_path(n, 0), position(n, -1);
    for (int64_t node = 0; node < n; ++node) {
      if (tree.is_leaf(node)) {
        leaf_nodes_.push_back(static_cast<int32_t>(node));
        continue;
      }
      // The feature's position on the path: an ancestor's splitting on it, else the next one free.
      int32_t pos = -1;
      for (int32_t a = parent[node]; a >= 0 && pos < 0; a = parent[a])
        if (tree.feature[a] == tree.feature[node]) pos = position[a];
      const int32_t below = pos < 0 ? n_path[node] + 1 : n_path[node];
      position[node] = pos < 0 ? n_path[node] : pos;
      for (const int32_t child : {tree.left[node], tree.right[node]}) {
        parent[child] = static_cast<int32_t>(node);
        n_path[child] = below;
      }
      const bool categorical = std::isnan(tree.threshold[node]);
      splits_.push_back({static_cast<int32_t>(node), tree.left[node], tree.right[node], used[tree.feature[node]],
                         uint32_t{1} << std::min(position[node], 31), tree.threshold[node],
                         tree.missing_go_to_left[node] != 0, categorical});
    }
    for (const int32_t leaf : leaf_nodes_) {
      const int32_t d = n_path[leaf];
      max_width_ = std::max(max_width_, d);
      Leaf l{d, static_cast<int64_t>(features_.size()), patterns_, values_, pairs_};
      values_ += (int64_t{1} << d) * d;
      pairs_ += (int64_t{1} << d) * d * d;
      features_.resize(features_.size() + d, -1);
      for (int32_t a = parent[leaf]; a >= 0; a = parent[a])
        features_[l.features + position[a]] = tree.feature[a];
      patterns_ += int64_t{1} << std::min(d, 62);
      leaves_.push_back(l);
    }
  }

  int32_t max_width() const { return max_width_; }  // the most distinct features of a leaf's path
  int64_t pattern_count() const { return patterns_; }  // sum over leaves of 2^d
  // The tables' length: 2^d x d values per leaf, or 2^d x d x d interaction values.
  int64_t table_values(bool pairs) const { return pairs ? pairs_ : values_; }
  // Work to fill the tables: per leaf 3^d pairs of x's pattern z and a background pattern c
  // disjoint from it, each adding to its |c| features (|c|^2 pairs), d / 3 on average.
  double table_work(bool pairs) const {
    double total = 0.0;
    for (const Leaf& l : leaves_) total += std::pow(3.0, l.width) * (1.0 + (pairs ? l.width * l.width / 9.0 : l.width / 3.0));
    return total;
  }
  int64_t split_count() const { return static_cast<int64_t>(splits_.size()); }
  int64_t leaf_count() const { return static_cast<int64_t>(leaves_.size()); }

  // The row's pattern at every leaf, into fail (node_count long; read at the leaves). x: the row
  // gathered at the used features. Numeric splits without branches (every split is visited, and
  // half would mispredict).
  void patterns(const Tree& tree, const double* x, uint32_t* fail) const {
    fail[0] = 0;
    for (const Split& s : splits_) {
      const uint32_t here = fail[s.node];
      const double v = x[s.column];
      const bool left = s.categorical ? tree.child_of(s.node, v) == s.left : goes_left(v, s.threshold, s.missing_left);
      const uint32_t right_fails = s.bit & (0u - static_cast<uint32_t>(left));
      fail[s.left] = here | (s.bit ^ right_fails);
      fail[s.right] = here | right_fails;
    }
  }

  // Adds the row's patterns to each leaf's counts (pattern_count() long, zeros at first).
  void count(const uint32_t* fail, double* counts) const {
    for (size_t l = 0; l < leaves_.size(); ++l) counts[leaves_[l].patterns + fail[leaf_nodes_[l]]] += 1.0;
  }

  // Each leaf's table (table_values(pairs) long), times scale: per pattern z of x, T[z][k] =
  // sum over background patterns c disjoint from z of M[c] times feature k's LeafGame value, or its
  // d x d interaction values (LeafGame::pairs).
  void tables(const double* counts, const GameWeights& weight, double scale, bool pairs, double* out) const {
    std::vector<double> across;
    for (const Leaf& l : leaves_) {
      const int64_t at = pairs ? l.pairs_at : l.values_at;
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

  // Adds the row's values (pairs: interaction values), from its patterns and the tables, to phi
  // (n_features x n_values, or n_features x n_features x n_values).
  void add(const Tree& tree, const uint32_t* fail, const double* tables, bool pairs, int64_t p, double* phi) const {
    const int32_t nv = tree.n_values;
    for (size_t l = 0; l < leaves_.size(); ++l) {
      const Leaf& leaf = leaves_[l];
      const int32_t d = leaf.width, size = pairs ? d * d : d;
      const double* t = tables + (pairs ? leaf.pairs_at : leaf.values_at) + static_cast<int64_t>(fail[leaf_nodes_[l]]) * size;
      const int32_t* feature = features_.data() + leaf.features;
      const double* value = tree.value.data() + static_cast<int64_t>(leaf_nodes_[l]) * nv;
      if (!pairs && nv == 1) {
        for (int32_t k = 0; k < d; ++k) phi[feature[k]] += t[k] * value[0];
        continue;
      }
      for (int32_t k = 0; k < size; ++k) {
        const int64_t j = pairs ? feature[k / d] * p + feature[k % d] : feature[k];
        for (int32_t c = 0; c < nv; ++c) phi[j * nv + c] += t[k] * value[c];
      }
    }
  }

 private:
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

  struct Split {
    int32_t node, left, right, column;  // column: the feature's, in the gathered rows
    uint32_t bit;                       // the feature's bit in the patterns of the leaves below
    double threshold;
    bool missing_left, categorical;
  };
  struct Leaf {
    int32_t width;     // d: the distinct features of its path
    int64_t features;  // its d features (global indices) in features_, by bit
    int64_t patterns;  // its 2^d counts' offset
    int64_t values_at, pairs_at;  // its table's offset, values or interactions
  };
  std::vector<Split> splits_;
  std::vector<int32_t> leaf_nodes_;
  std::vector<Leaf> leaves_;
  std::vector<int32_t> features_;
  int32_t max_width_ = 0;
  int64_t patterns_ = 0, values_ = 0, pairs_ = 0;
};

// Whether a tree is read as patterns: when its tables are narrow enough (leaves at most
// kMaxPatternWidth wide, tables within a budget) and, with n rows explained against m background
// rows, the pattern form's work ((n + m) passes over the nodes, the tables, n reads of a table row
// per leaf) is below the walk's (n m row pairs, each following at least half a path).
bool use_patterns(const Tree& tree, const TreeInfo& info, const int32_t* used, int64_t n, int64_t m, bool pairs,
                  BackgroundAlgorithm algorithm) {
  constexpr int64_t kTreeTables = int64_t{1} << 25;  // doubles, 256 MB
  if (info.max_depth == 0 || algorithm == BackgroundAlgorithm::walk) return false;
  if (algorithm == BackgroundAlgorithm::automatic && info.max_depth > 3 * kMaxPatternWidth) return false;
  const PatternTree patterns(tree, used);
  if (patterns.max_width() > kMaxPatternWidth) {
    if (algorithm == BackgroundAlgorithm::patterns)
      throw std::invalid_argument("a tree has a leaf with " + std::to_string(patterns.max_width()) +
                                  " distinct features on its path; leaf patterns take at most " +
                                  std::to_string(kMaxPatternWidth));
    return false;
  }
  if (algorithm == BackgroundAlgorithm::patterns) return true;
  if (patterns.table_values(pairs) > kTreeTables) return false;
  const double row_reads = static_cast<double>(patterns.table_values(pairs)) / static_cast<double>(patterns.pattern_count()) *
                           static_cast<double>(patterns.leaf_count());
  const double pattern_work = static_cast<double>(n + m) * static_cast<double>(tree.node_count()) +
                              patterns.table_work(pairs) + static_cast<double>(n) * row_reads;
  const double walk_work = static_cast<double>(n) * static_cast<double>(m) * std::max(1, info.max_depth / 2);
  return pattern_work < walk_work;
}

// One call's inputs: the forest, the background rows gathered at the used features, the game's
// weights and the output's form (values, or interactions when pairs).
struct Background {
  const Forest& forest;
  const Prepared& prep;
  const std::vector<double>& rows;  // n_background x n_used
  int64_t n_background;
  GameWeights weights;
  double scale;  // 1 / (trees x background rows)
  bool pairs;

  auto row(int64_t r) const {
    const double* xr = rows.data() + r * static_cast<int64_t>(prep.used.features.size());
    const int32_t* index = prep.used.index.data();
    return [xr, index](int32_t j) { return xr[index[j]]; };
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
  const int64_t block = std::clamp<int64_t>(X.n_rows / 8, 1, 1024);
  for (int64_t first = 0; first < n_trees;) {
    int64_t last = first, budget = 0;
    while (last < n_trees && (last == first || budget < kTableBudget)) {
      if (patterned[last]) {
        shapes[last] = std::make_unique<PatternTree>(forest.trees[last], prep.used.index.data());
        budget += shapes[last]->table_values(bg.pairs) + shapes[last]->pattern_count();
      }
      ++last;
    }
    parallel_for(last - first, n_threads, no_state, [&](int64_t task, int, NoState&) {
      const int64_t t = first + task;
      if (!patterned[t]) return;
      const PatternTree& shape = *shapes[t];
      std::vector<double> counts(shape.pattern_count(), 0.0);
      std::vector<uint32_t> fail(forest.trees[t].node_count());
      for (int64_t r = 0; r < bg.n_background; ++r) {
        if (r % 4096 == 0) checkpoint();
        shape.patterns(forest.trees[t], bg.rows.data() + r * n_used, fail.data());
        shape.count(fail.data(), counts.data());
      }
      tables[t].resize(shape.table_values(bg.pairs));
      shape.tables(counts.data(), bg.weights, bg.scale, bg.pairs, tables[t].data());
    });
    parallel_for(
        (X.n_rows + block - 1) / block, n_threads,
        [&](int) {
          return std::make_pair(InterventionalWalker(prep.extent.max_features, bg.n_background), std::vector<uint32_t>());
        },
        [&](int64_t blk, int, auto& state) {
          auto& [walker, fail] = state;
          const int64_t begin = blk * block, end = std::min(X.n_rows, begin + block);
          std::vector<double> x_rows;
          gather_rows(X, prep.used, begin, end, x_rows);
          const Block rows_x{begin, end, x_rows.data(), n_used, prep.used.index.data()};
          for (int64_t t = first; t < last; ++t) {
            checkpoint();
            const Tree& tree = forest.trees[t];
            for (int64_t i = begin; i < end; ++i) {
              double* row_out = out + i * row_size;
              if (patterned[t]) {
                fail.resize(tree.node_count());
                shapes[t]->patterns(tree, x_rows.data() + (i - begin) * n_used, fail.data());
                shapes[t]->add(tree, fail.data(), tables[t].data(), bg.pairs, p, row_out);
              } else {
                walker.walk(tree, prep.infos[t], rows_x.row(i - begin), bg.row_of(), identity.data(),
                            bg.on_leaf(p, row_out));
              }
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
  gather_rows(background, prep.used, 0, background.n_rows, rows);
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
  std::vector<double> expected(nv, 0.0), row(nv);
  for (int64_t r = 0; r < background.n_rows; ++r) {
    std::fill(row.begin(), row.end(), 0.0);
    for (const Tree& tree : forest.trees) {
      const double* v = tree.value.data() + int64_t{tree.leaf_of(bg.row(r))} * nv;
      for (int32_t c = 0; c < nv; ++c) row[c] += v[c];
    }
    for (int32_t c = 0; c < nv; ++c) expected[c] += row[c] / static_cast<double>(n_trees);
  }
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
