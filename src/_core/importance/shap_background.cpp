// Attributions against background rows (interventional TreeSHAP and Banzhaf values): per tree either
// the leaf pattern tables (O(n + m) in the rows) or the grouped walk (O(n m)), chosen by their cost.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "../common/parallel.hpp"
#include "shap.hpp"
#include "leaf_patterns.hpp"
#include "shap_parts.hpp"

namespace pyinterp {
namespace {

using namespace shap_parts;

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

// Whether reading a tree from its tables costs less than walking it: with n rows explained against
// m background rows, the tables' work ((n + m) passes over the nodes, the tables, n reads of a
// table row per group) against the walk's (n m row pairs, each following at least half a path).
bool cheaper_as_patterns(const Tree& tree, const TreeInfo& info, const PatternTree& shape, int64_t n, int64_t m) {
  const double pattern_work = static_cast<double>(n + m) * static_cast<double>(tree.node_count()) +
                              shape.table_work() + static_cast<double>(n) * static_cast<double>(shape.row_reads());
  const double walk_work = static_cast<double>(n) * static_cast<double>(m) * std::max(1, info.max_depth / 2);
  return pattern_work < walk_work;
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
void patterns_and_walks(const Background& bg, const std::vector<std::shared_ptr<const PatternTree>>& shapes,
                        const MatrixView& X, double* out, int n_threads) {
  const Forest& forest = bg.forest;
  const Prepared& prep = bg.prep;
  const int64_t p = forest.n_features, n_trees = static_cast<int64_t>(forest.trees.size());
  const int64_t row_size = (bg.pairs ? p * p : p) * forest.n_values();
  const auto n_used = static_cast<int64_t>(prep.used.features.size());
  std::vector<int32_t> identity(p);
  for (int32_t j = 0; j < p; ++j) identity[j] = j;
  constexpr int64_t kTableBudget = int64_t{1} << 23;  // doubles, 64 MB
  std::vector<std::vector<double>> tables(n_trees);
  // Rows per task: a tree's tables (196 KB at depth 6) are read at one random row per leaf and
  // row, so each is read by many rows while it is in cache (32 rows a block took 2 us a row and
  // tree at depth 6, in L3 misses); at least 8 tasks.
  // Bounded by the gathered rows' size (1 MB), and a whole number of tiles.
  const int64_t wanted =
      std::clamp<int64_t>(std::min<int64_t>(X.n_rows / 8, (int64_t{1} << 17) / std::max<int64_t>(n_used, 1)), 1, 1024);
  const int64_t block = (wanted + kTile - 1) / kTile * kTile;
  for (int64_t first = 0; first < n_trees;) {
    int64_t last = first, budget = 0;
    for (; last < n_trees && (last == first || budget < kTableBudget); ++last)
      if (shapes[last]) budget += shapes[last]->table_size() + shapes[last]->count_size();
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
              if (shapes[t]) counts[t - first].assign(shapes[t]->count_size(), 0.0);
          }
          const int64_t end = std::min(bg.n_background, (blk + 1) * bg_block);
          for (int64_t r = blk * bg_block; r < end; r += kTile) {
            const double* tile = bg.rows.data() + r * n_used;
            const auto rows = static_cast<int32_t>(std::min(kTile, end - r));
            for (int64_t t = first; t < last; ++t) {
              if (!shapes[t]) continue;
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
      if (!shapes[t]) return;
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
            if (shapes[t]) {
              shapes[t]->add_rows(tree, tiles.data(), n_used, end - begin, tables[t].data(), p, out + begin * row_size,
                                  row_size, fail, index);
              continue;
            }
            for (int64_t i = begin; i < end; ++i)
              walker.walk(tree, prep.infos[t], tile_row(tiles.data(), n_used, prep.used.index.data(), i - begin),
                          bg.row_of(), identity.data(), bg.on_leaf(p, out + i * row_size));
          }
        });
    for (int64_t t = first; t < last; ++t) std::vector<double>().swap(tables[t]);
    first = last;
  }
}

// Checks, gathers the background rows, chooses each tree's form and fills out; returns the
// expected value, the mean prediction over the background rows.
std::vector<double> against_background(const Forest& forest, const MatrixView& X, const MatrixView& background,
                                       double* out, int n_threads, Attribution kind, ShapAlgorithm algorithm,
                                       bool pairs) {
  const auto kept = prepared(forest, X, n_threads);
  const Prepared& prep = *kept;
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
  const auto shapes = pattern_trees(forest, prep, pairs, algorithm, n_threads, [](const Tree&, const TreeInfo&) { return true; },
                                    [&](const Tree& tree, const TreeInfo& info, const PatternTree& shape) {
                                      return cheaper_as_patterns(tree, info, shape, X.n_rows, background.n_rows);
                                    });
  if (!pairs && std::none_of(shapes.begin(), shapes.end(), [](const auto& shape) { return shape != nullptr; })) {
    walk_every_tree(bg, X, out, n_threads);
  } else {
    if (!pairs) std::fill_n(out, X.n_rows * forest.n_features * nv, 0.0);
    patterns_and_walks(bg, shapes, X, out, n_threads);
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
                                               ShapAlgorithm algorithm) {
  return against_background(forest, X, background, out, n_threads, kind, algorithm, false);
}

std::vector<double> shap_interaction_values_interventional(const Forest& forest, const MatrixView& X,
                                                           const MatrixView& background, double* out, int n_threads,
                                                           Attribution kind, ShapAlgorithm algorithm) {
  return against_background(forest, X, background, out, n_threads, kind, algorithm, true);
}

}  // namespace pyinterp
