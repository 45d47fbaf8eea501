#include "shap.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <tuple>
#include <stdexcept>
#include <unordered_map>

#include "../common/parallel.hpp"
#include "leaf_patterns.hpp"
#include "shap_parts.hpp"
#include "pairs_walker.hpp"
#include "values_walker.hpp"

namespace pyinterp {
namespace {

using namespace shap_parts;

// Sums of n_values numbers per int64 key, open addressing: no allocation once grown, cleared in
// the time of its entries. keys() in first-insertion order.
class KeySums {
 public:
  explicit KeySums(int32_t n_values) : nv_(n_values) { rehash(64); }

  double* at(int64_t key) {
    size_t h = slot_of(key);
    while (slots_[h] >= 0 && keys_[slots_[h]] != key) h = (h + 1) & mask_;
    if (slots_[h] < 0) {
      if (2 * (keys_.size() + 1) > slots_.size()) {
        rehash(2 * slots_.size());
        return at(key);
      }
      slots_[h] = static_cast<int64_t>(keys_.size());
      keys_.push_back(key);
      sums_.resize(sums_.size() + nv_, 0.0);
    }
    return sums_.data() + slots_[h] * nv_;
  }
  const double* find(int64_t key) const {
    size_t h = slot_of(key);
    while (slots_[h] >= 0) {
      if (keys_[slots_[h]] == key) return sums_.data() + slots_[h] * nv_;
      h = (h + 1) & mask_;
    }
    return nullptr;
  }
  void clear() {
    for (const int64_t key : keys_) {
      size_t h = slot_of(key);
      while (slots_[h] >= 0) {
        slots_[h] = -1;
        h = (h + 1) & mask_;
      }
    }
    keys_.clear();
    sums_.clear();
  }
  const std::vector<int64_t>& keys() const { return keys_; }
  const double* sums(size_t entry) const { return sums_.data() + entry * nv_; }

 private:
  size_t slot_of(int64_t key) const { return static_cast<size_t>(static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull >> 20) & mask_; }
  void rehash(size_t n_slots) {
    slots_.assign(n_slots, -1);
    mask_ = n_slots - 1;
    for (size_t e = 0; e < keys_.size(); ++e) {
      size_t h = slot_of(keys_[e]);
      while (slots_[h] >= 0) h = (h + 1) & mask_;
      slots_[h] = static_cast<int64_t>(e);
    }
  }
  int32_t nv_;
  size_t mask_ = 0;
  std::vector<int64_t> slots_, keys_;
  std::vector<double> sums_;
};


// Rows grouped by the child they take at every split of a tree of at most 64 splits: the tree's
// values depend on a row only through those choices, so each group is walked once, for its first
// row, and serves every row of the group - bit-identical to walking each. Shallow forests share most
// walks (all_bioc: ~4 splits a tree, ~10 groups among 128 rows). Groups are numbered in the order of
// their first rows; a mask's group is found by open addressing (no sort, no allocation once grown).
class RowGroups {
 public:
  // Groups rows 0..n-1 (row_of(r) an accessor of row r) and returns the number of groups.
  template <class RowOf>
  int32_t group(const Tree& tree, const TreeInfo& info, int64_t n, const RowOf& row_of) {
    size_t n_slots = 16;
    while (n_slots < 2 * static_cast<size_t>(n)) n_slots *= 2;
    keys_.resize(n_slots);
    ids_.assign(n_slots, -1);
    of_row_.resize(n);
    first_.clear();
    for (int64_t r = 0; r < n; ++r) {
      const auto x = row_of(r);
      uint64_t mask = 0;
      for (size_t k = 0; k < info.splits.size(); ++k) {
        const int32_t node = info.splits[k];
        if (tree.child_of(node, x(tree.feature[node])) == tree.left[node]) mask |= uint64_t{1} << k;
      }
      size_t h = static_cast<size_t>(mask * 0x9E3779B97F4A7C15ull >> 32) & (n_slots - 1);
      while (ids_[h] >= 0 && keys_[h] != mask) h = (h + 1) & (n_slots - 1);
      if (ids_[h] < 0) {
        ids_[h] = static_cast<int32_t>(first_.size());
        keys_[h] = mask;
        first_.push_back(static_cast<int32_t>(r));
      }
      of_row_[r] = ids_[h];
    }
    return static_cast<int32_t>(first_.size());
  }
  int32_t of_row(int64_t r) const { return of_row_[r]; }
  int32_t first(int32_t g) const { return first_[g]; }

 private:
  std::vector<uint64_t> keys_;
  std::vector<int32_t> ids_, of_row_, first_;
};

struct Scratch {
  Scratch(const Extent& e, int32_t n_values)
      : walker(e.max_depth, e.max_m, n_values, e.max_features), pair_walker(e.max_depth, e.max_m, n_values, e.max_features),
        pairs(n_values) {}
  ValuesWalker walker;
  PairsWalker pair_walker;
  KeySums pairs;
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<double> rows, acc, base;
  std::vector<Block::Row> firsts;  // a tree's groups' first rows
  struct Group {
    int64_t first;
    const int32_t *begin, *end;  // its rows, in group_order
  };
  std::vector<Group> walked_groups;  // a tree's groups of a block (interactions)
  RowGroups groups;
  std::vector<int32_t> group_order, group_offset, group_fill;
  std::vector<size_t> order;
  std::vector<std::pair<int64_t, double>> emitted;  // one tree's interaction entries: (key * nv + c, value)
};


// Calls fn(block, scratch) over blocks of row_block rows, each block on one thread.
template <class Fn>
void for_blocks(const Prepared& prep, const MatrixView& X, int32_t n_values, int n_threads, Fn fn) {
  const int64_t size = row_block(X.n_rows), n_blocks = (X.n_rows + size - 1) / size;
  parallel_for(n_blocks, n_threads, [&](int) { return Scratch(prep.extent, n_values); },
               [&](int64_t blk, int, Scratch& s) {
                 const int64_t begin = blk * size, end = std::min(X.n_rows, begin + size);
                 gather_rows(X, prep.used, begin, end, s.rows);
                 fn(Block{begin, end, s.rows.data(), static_cast<int64_t>(prep.used.features.size()),
                          prep.used.index.data()},
                    s);
               });
}

// fn(first row, the group's rows as [begin, end) of int32 row indices) per group of a block's rows
// (RowGroups); a tree of more than 64 splits, or a block of one row, row by row (groups of one).
template <class Fn>
void for_row_groups(const Tree& tree, const TreeInfo& info, const Block& block, Scratch& s, Fn fn) {
  checkpoint();  // a block's rows through every tree is one task: interaction values take seconds
  const int64_t nb = block.end - block.begin;
  auto& order = s.group_order;
  order.resize(nb);
  if (info.splits.empty() || nb == 1) {
    for (int64_t r = 0; r < nb; ++r) order[r] = static_cast<int32_t>(r);
    for (int64_t r = 0; r < nb; ++r) fn(r, order.data() + r, order.data() + r + 1);
    return;
  }
  const int32_t n_groups = s.groups.group(tree, info, nb, [&](int64_t r) { return block.row(r); });
  // The rows by group (counting sort, rows increasing within a group).
  auto& offset = s.group_offset;
  offset.assign(n_groups + 1, 0);
  for (int64_t r = 0; r < nb; ++r) ++offset[s.groups.of_row(r) + 1];
  for (int32_t g = 0; g < n_groups; ++g) offset[g + 1] += offset[g];
  auto& fill = s.group_fill;
  fill.assign(offset.begin(), offset.end() - 1);
  for (int64_t r = 0; r < nb; ++r) order[fill[s.groups.of_row(r)]++] = static_cast<int32_t>(r);
  for (int32_t g = 0; g < n_groups; ++g) fn(s.groups.first(g), order.data() + offset[g], order.data() + offset[g + 1]);
}

// Tree t's interaction tables (PairsWalker) for rows[0..n) into s.base (PairsWalker::entry says
// where each row's is); returns a table's size.
template <class Row>
int64_t tree_tables(const Forest& forest, const Prepared& prep, size_t t, const Row* rows, int32_t n, Scratch& s) {
  const TreeInfo& info = prep.infos[t];
  const auto n_local = static_cast<int64_t>(info.features.size());
  const int64_t size = n_local * n_local * forest.n_values();
  s.base.assign(n * size, 0.0);
  s.pair_walker.walk(forest.trees[t], info, prep.rules[info.rule_size], rows, n,
                     1.0 / static_cast<double>(forest.trees.size()), s.base.data(), size);
  return size;
}

// A tree's table for one row (entries `stride` apart) as emit(a, b, c, value): for a != b half the
// tree's Shapley interaction index (phi_b with a known minus phi_b with a unknown, halved), and for
// a == b the main effect (phi_a minus those halves).
template <class Emit>
void emit_table(const TreeInfo& info, int32_t nv, const double* table, int32_t stride, Emit emit) {
  const auto n_local = static_cast<int32_t>(info.features.size());
  for (int32_t a = 0; a < n_local; ++a)
    for (int32_t c = 0; c < nv; ++c) {
      const double* row = table + static_cast<size_t>(a) * n_local * nv * stride;
      double main = row[(static_cast<size_t>(a) * nv + c) * stride];
      for (int32_t b = 0; b < n_local; ++b) {
        if (b == a) continue;
        const double half = row[(static_cast<size_t>(b) * nv + c) * stride];
        main -= half;
        emit(info.features[a], info.features[b], c, half);
      }
      emit(info.features[a], info.features[a], c, main);
    }
}

// Tree t's interaction values for row x, as emit_table gives them.
template <class Row, class Emit>
void tree_interactions(const Forest& forest, const Prepared& prep, size_t t, const Row& x, Scratch& s, Emit emit) {
  tree_tables(forest, prep, t, &x, 1, s);
  emit_table(prep.infos[t], forest.n_values(), s.base.data(), 1, emit);
}

// Every row's interaction values of a block, tree by tree in tree order: emit(r, a, b, c, value)
// (r the row within the block), each tree's entries computed once per group of rows
// (for_row_groups), the groups' first rows walked kRows at a time (fewer where a tree's tables
// for kRows rows would pass 128 MB). keep(a, b) selects the entries wanted.
template <class Keep, class Emit>
void block_interactions(const Forest& forest, const Prepared& prep, const Block& block, Scratch& s, Keep keep,
                        Emit emit) {
  const int32_t nv = forest.n_values();
  for (size_t t = 0; t < forest.trees.size(); ++t) {
    auto& groups = s.walked_groups;
    groups.clear();
    for_row_groups(forest.trees[t], prep.infos[t], block, s,
                   [&](int64_t first, const int32_t* g, const int32_t* h) { groups.push_back({first, g, h}); });
    constexpr int64_t kTables = int64_t{1} << 24;  // doubles
    const auto n_local = static_cast<int64_t>(prep.infos[t].features.size());
    const auto batch = static_cast<size_t>(std::clamp<int64_t>(kTables / (n_local * n_local * nv + 1), 1, PairsWalker::kRows));
    std::array<Block::Row, PairsWalker::kRows> rows;
    for (size_t b0 = 0; b0 < groups.size(); b0 += batch) {
      const auto n = static_cast<int32_t>(std::min(batch, groups.size() - b0));
      for (int32_t j = 0; j < n; ++j) rows[j] = block.row(groups[b0 + j].first);
      const int64_t size = tree_tables(forest, prep, t, rows.data(), n, s);
      for (int32_t j = 0; j < n; ++j) {
        const auto [at, stride] = PairsWalker::entry(n, j, size);
        const Scratch::Group& group = groups[b0 + j];
        emit_table(prep.infos[t], nv, s.base.data() + at, stride, [&](int32_t a, int32_t b, int32_t c, double v) {
          if (keep(a, b))
            for (const int32_t* r = group.begin; r != group.end; ++r) emit(*r, a, b, c, v);
        });
      }
    }
  }
}


// The trees shap_values reads from leaf pattern tables (PatternTree::path_tables), null for the
// walked ones: under automatic, when the tables' work and n rows' reads (one pass over the splits,
// a table row per group) cost less than walking the n rows, and within 256 MB of tables over the
// forest, in tree order (they are all held at once). In units of the tables' work (about 2 ns
// here), a row's walk costs 3 + m / 4 per node for a rule of m nodes, 8 rows walking together
// (measured 7.2 ns at m = 4 on depth-8 trees, 12.5 ns at m = 15 on fully grown ones); the leaves'
// least table work (TreeInfo::leaf_tables) decides whether a tree's tables are worth sizing.
std::vector<std::shared_ptr<const PatternTree>> path_patterns(const Forest& forest, const Prepared& prep, int64_t n,
                                                              ShapAlgorithm algorithm, int n_threads) {
  const auto rows = static_cast<double>(n);
  const auto walks = [rows](const Tree& tree, const TreeInfo& info) {
    return rows * static_cast<double>(tree.node_count()) * (3 + info.rule_size / 4.0);
  };
  const auto reads = [rows](const Tree& tree, double row_reads) {
    return rows * (static_cast<double>(tree.node_count()) / 4 + row_reads);
  };
  auto shapes = pattern_trees(
      forest, prep, false, algorithm, n_threads,
      [&](const Tree& tree, const TreeInfo& info) { return info.leaf_tables + reads(tree, 0) < walks(tree, info); },
      [&](const Tree& tree, const TreeInfo& info, const PatternTree& shape) {
        return shape.table_work(true) + reads(tree, static_cast<double>(shape.row_reads())) < walks(tree, info);
      });
  int64_t budget = int64_t{1} << 25;
  for (auto& shape : shapes)
    if (shape && algorithm != ShapAlgorithm::patterns && (budget -= shape->table_size()) < 0) shape.reset();
  return shapes;
}
}  // namespace

std::vector<double> shap_expected_value(const Forest& forest) {
  const int32_t nv = forest.n_values();
  std::vector<double> expected(nv, 0.0), e;
  for (const Tree& tree : forest.trees) {
    e.assign(tree.value.begin(), tree.value.end());
    for (int64_t node = tree.node_count() - 1; node >= 0; --node) {  // children before parents
      if (tree.is_leaf(node)) continue;
      const int32_t l = tree.left[node], r = tree.right[node];
      for (int32_t c = 0; c < nv; ++c)
        e[node * nv + c] = child_fraction(tree, node, l) * e[int64_t{l} * nv + c] +
                           child_fraction(tree, node, r) * e[int64_t{r} * nv + c];
    }
    for (int32_t c = 0; c < nv; ++c) expected[c] += e[c];
  }
  for (double& v : expected) v /= static_cast<double>(forest.trees.size());
  return expected;
}

// Rows explained together by shap_values: their groups (RowGroups) are formed over all of them, so
// a tree is walked once per group of the chunk rather than of each thread's block. Bounded so the
// chunk's gathered rows and per-tree group indices stay within ~64 MB.
int64_t chunk_rows(int64_t n_rows, int64_t n_used, int64_t n_trees) {
  constexpr int64_t kBytes = int64_t{1} << 26, kMaxRows = 1024;
  return std::clamp<int64_t>(kBytes / (8 * n_used + 4 * n_trees + 1), 1, std::min(kMaxRows, std::max<int64_t>(n_rows, 1)));
}

int64_t shap_kept_table_bytes(const Forest& forest) {
  const auto kept = kept_patterns(forest);
  std::lock_guard<std::mutex> lock(kept->mutex);
  return kept->kept_tables * static_cast<int64_t>(sizeof(double));
}

void shap_values(const Forest& forest, const MatrixView& X, double* out, int n_threads, Attribution kind,
                 ShapAlgorithm algorithm) {
  const auto kept = prepared(forest, X, n_threads);
  const Prepared& prep = *kept;
  const Quadrature half = banzhaf_rule();
  const auto rule_of = [&](const TreeInfo& info) -> const Quadrature& {
    return kind == Attribution::banzhaf ? half : prep.rules[info.rule_size];
  };
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  const auto n_used = static_cast<int64_t>(prep.used.features.size());
  const auto n_trees = static_cast<int64_t>(forest.trees.size());
  const int64_t width = n_used * nv;
  const double scale = 1.0 / static_cast<double>(n_trees);
  const auto shapes = path_patterns(forest, prep, X.n_rows, algorithm, n_threads);
  const bool any_patterned = std::any_of(shapes.begin(), shapes.end(), [](const auto& shape) { return shape != nullptr; });
  const auto tables = kept_path_tables(forest, shapes, kind, n_threads);
  // A tree's walks are stored per group when they fit its share of 2^22 values (32 MB); otherwise
  // its rows are walked one by one. The choice depends on the tree and the chunk only.
  const int64_t tree_budget = std::max<int64_t>((int64_t{1} << 22) / n_trees, 64);
  const int64_t chunk = chunk_rows(X.n_rows, n_used, n_trees);
  std::vector<double> rows;
  std::vector<int32_t> group(n_trees * chunk);    // per tree and chunk row: the row's group, or -1 (walked alone)
  std::vector<std::vector<double>> stored(n_trees);  // per tree: groups x its features x nv
  for (int64_t c0 = 0; c0 < X.n_rows; c0 += chunk) {
    const int64_t nc = std::min(X.n_rows - c0, chunk), size = row_block(nc), n_blocks = (nc + size - 1) / size;
    rows.resize(nc * n_used);
    parallel_for(n_blocks, n_threads, no_state, [&](int64_t blk, int, NoState&) {
      const int64_t begin = blk * size, end = std::min(nc, begin + size);
      gather_rows(X, prep.used, c0 + begin, c0 + end, rows.data() + begin * n_used);
    });
    const Block whole{c0, c0 + nc, rows.data(), n_used, prep.used.index.data()};
    // Each tree's groups, and one walk per group (the walk of the group's first row).
    parallel_for(
        n_trees, n_threads, [&](int) { return Scratch(prep.extent, nv); },
        [&](int64_t t, int, Scratch& s) {
          ValuesWalker& walker = s.walker;
          RowGroups& groups = s.groups;
          const TreeInfo& info = prep.infos[t];
          int32_t* of_row = group.data() + t * chunk;
          stored[t].clear();
          if (shapes[t]) return;  // read from its tables below
          const int32_t n_groups = info.splits.empty() ? 0 : groups.group(forest.trees[t], info, nc, [&](int64_t r) { return whole.row(r); });
          const auto n_values = static_cast<int64_t>(n_groups) * static_cast<int64_t>(info.features.size()) * nv;
          if (n_groups == 0 || n_values > tree_budget) {
            std::fill_n(of_row, nc, -1);
            return;
          }
          stored[t].assign(n_values, 0.0);
          const auto n_local = static_cast<int64_t>(info.features.size()) * nv;
          s.firsts.resize(n_groups);
          for (int32_t g = 0; g < n_groups; ++g) s.firsts[g] = whole.row(groups.first(g));
          walker.walk(forest.trees[t], info, rule_of(info), s.firsts.data(), n_groups, scale, stored[t].data(), n_local);
          for (int64_t r = 0; r < nc; ++r) of_row[r] = groups.of_row(r);
        });
    // Every row's sum over the trees in tree order, a block of rows tree by tree (a deep tree stays in
    // cache for the block), then each output row written once.
    parallel_for(n_blocks, n_threads, [&](int) { return Scratch(prep.extent, nv); }, [&](int64_t blk, int, Scratch& s) {
      const int64_t begin = blk * size, end = std::min(nc, begin + size);
      s.acc.assign((end - begin) * width, 0.0);
      for (int64_t t = 0; t < n_trees; ++t) {
        checkpoint();
        if (shapes[t]) continue;
        const TreeInfo& info = prep.infos[t];
        const auto n_local = static_cast<int64_t>(info.features.size());
        const auto add = [&](int64_t r, const double* values) {
          double* acc = s.acc.data() + (r - begin) * width;
          for (int64_t a = 0; a < n_local; ++a)
            for (int32_t c = 0; c < nv; ++c) acc[int64_t{prep.used.index[info.features[a]]} * nv + c] += values[a * nv + c];
        };
        // Rows outside the tree's groups are walked kRows at a time.
        std::array<int64_t, ValuesWalker::kRows> walked;
        std::array<Block::Row, ValuesWalker::kRows> batch;
        int32_t n = 0;
        const auto walk = [&] {
          s.base.assign(n * n_local * nv, 0.0);
          s.walker.walk(forest.trees[t], info, rule_of(info), batch.data(), n, scale, s.base.data(), n_local * nv);
          for (int32_t j = 0; j < n; ++j) add(walked[j], s.base.data() + j * n_local * nv);
          n = 0;
        };
        for (int64_t r = begin; r < end; ++r) {
          if (const int32_t g = group[t * chunk + r]; g >= 0) {
            add(r, stored[t].data() + g * n_local * nv);
            continue;
          }
          walked[n] = r;
          batch[n++] = whole.row(r);
          if (n == ValuesWalker::kRows) walk();
        }
        if (n > 0) walk();
      }
      for (int64_t r = begin; r < end; ++r) write_row(s.acc.data() + (r - begin) * width, prep.used, nv, p, out + (c0 + r) * p * nv);
    });
    // Then the trees read from tables, in tree order: rows in tiles of kTile, up to 128 rows a task
    // (a tree's tables stay in cache across them), fewer when that leaves a thread idle. A row's
    // values do not depend on its task.
    constexpr int64_t kPatternRows = 128;
    if (!any_patterned) continue;
    const int64_t threads = std::max(n_threads, 1), per_thread = (nc + threads - 1) / threads;
    const int64_t task_rows = std::clamp<int64_t>((per_thread + kTile - 1) / kTile * kTile, kTile, kPatternRows);
    parallel_for(
        (nc + task_rows - 1) / task_rows, n_threads,
        [&](int) { return std::make_tuple(std::vector<double>(), std::vector<uint32_t>(), std::vector<uint32_t>()); },
        [&](int64_t blk, int, auto& state) {
          auto& [tiles, fail, index] = state;
          const int64_t begin = blk * task_rows, end = std::min(nc, begin + task_rows);
          tiles.resize((task_rows + kTile - 1) / kTile * kTile * n_used);
          to_tiles(rows.data() + begin * n_used, end - begin, n_used, tiles.data());  // the chunk's rows, gathered above
          for (int64_t t = 0; t < n_trees; ++t) {
            if (!shapes[t]) continue;
            checkpoint();
            shapes[t]->add_rows(forest.trees[t], tiles.data(), n_used, end - begin, tables[t]->data(), p,
                                out + (c0 + begin) * p * nv, p * nv, fail, index);
          }
        });
  }
}

void shap_interaction_values(const Forest& forest, const MatrixView& X, double* out, int n_threads) {
  const auto kept = prepared(forest, X, n_threads);
  const Prepared& prep = *kept;
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  for_blocks(prep, X, nv, n_threads, [&](const Block& block, Scratch& s) {
    block_interactions(
        forest, prep, block, s, [](int32_t, int32_t) { return true; },
        [&](int64_t r, int32_t a, int32_t b, int32_t c, double v) {
          out[(((block.begin + r) * p + a) * p + b) * nv + c] += v;
        });
  });
}

// Every row's interaction entries (keep(a, b) of them) summed over trees per pair: on_row(r, sums)
// for each row of the block in turn, sums reused from row to row (one small, cache-resident map).
// A tree whose rows fall in few groups (for_row_groups) has its entries computed once per group and
// stored for the rows (up to kStored entries a block); other trees are walked per row.
template <class Keep, class OnRow>
void block_pair_sums(const Forest& forest, const Prepared& prep, const Block& block, Scratch& s, Keep keep,
                     OnRow on_row) {
  constexpr size_t kStored = size_t{1} << 22;
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  const int64_t nb = block.end - block.begin;
  const size_t n_trees = forest.trees.size();
  s.spans.assign(n_trees * nb, {-1, 0});  // per (tree, row): its entries in s.emitted, or -1
  s.emitted.clear();
  for (size_t t = 0; t < n_trees && nb > 1 && s.emitted.size() < kStored; ++t) {
    if (prep.infos[t].splits.empty()) continue;
    int64_t n_groups = 0;
    for_row_groups(forest.trees[t], prep.infos[t], block, s, [&](int64_t, const int32_t*, const int32_t*) { ++n_groups; });
    if (2 * n_groups > nb) continue;  // little to share
    for_row_groups(forest.trees[t], prep.infos[t], block, s, [&](int64_t first, const int32_t* g, const int32_t* h) {
      const auto begin = static_cast<int64_t>(s.emitted.size());
      tree_interactions(forest, prep, t, block.row(first), s, [&](int32_t a, int32_t b, int32_t c, double v) {
        if (keep(a, b)) s.emitted.emplace_back((a * p + b) * nv + c, v);
      });
      for (const int32_t* r = g; r != h; ++r) s.spans[t * nb + *r] = {begin, static_cast<int64_t>(s.emitted.size()) - begin};
    });
  }
  KeySums& sums = s.pairs;
  for (int64_t r = 0; r < nb; ++r) {
    sums.clear();
    for (size_t t = 0; t < n_trees; ++t) {
      checkpoint();  // a row's interactions in every tree of a large forest take a second or more
      const auto [begin, size] = s.spans[t * nb + r];
      if (begin >= 0) {
        for (int64_t e = begin; e < begin + size; ++e) sums.at(s.emitted[e].first / nv)[s.emitted[e].first % nv] += s.emitted[e].second;
      } else {
        tree_interactions(forest, prep, t, block.row(r), s, [&](int32_t a, int32_t b, int32_t c, double v) {
          if (keep(a, b)) sums.at(a * p + b)[c] += v;
        });
      }
    }
    on_row(r, sums);
  }
}

PairMeans shap_interaction_mean_abs(const Forest& forest, const MatrixView& X, int n_threads) {
  const auto kept = prepared(forest, X, n_threads);
  const Prepared& prep = *kept;
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  // Sums of |value| per pair key a * p + b, per block of rows (each key's sum in row order), merged
  // in block order: the result does not depend on the thread count.
  const int64_t size = row_block(X.n_rows);
  std::vector<KeySums> blocks((X.n_rows + size - 1) / size, KeySums(nv));
  for_blocks(prep, X, nv, n_threads, [&](const Block& block, Scratch& s) {
    KeySums& sums = blocks[block.begin / size];
    block_pair_sums(forest, prep, block, s, [](int32_t, int32_t) { return true; }, [&](int64_t, const KeySums& row) {
      for (size_t e = 0; e < row.keys().size(); ++e) {
        double* to = sums.at(row.keys()[e]);
        for (int32_t c = 0; c < nv; ++c) to[c] += std::abs(row.sums(e)[c]);
      }
    });
  });
  KeySums total(nv);
  for (const KeySums& block : blocks)
    for (size_t e = 0; e < block.keys().size(); ++e) {
      double* sums = total.at(block.keys()[e]);
      for (int32_t c = 0; c < nv; ++c) sums[c] += block.sums(e)[c];
    }
  std::vector<size_t> order(total.keys().size());
  for (size_t e = 0; e < order.size(); ++e) order[e] = e;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return total.keys()[a] < total.keys()[b]; });
  PairMeans means;
  for (const size_t e : order) {
    means.a.push_back(static_cast<int32_t>(total.keys()[e] / p));
    means.b.push_back(static_cast<int32_t>(total.keys()[e] % p));
    for (int32_t c = 0; c < nv; ++c) means.mean_abs.push_back(total.sums(e)[c] / static_cast<double>(X.n_rows));
  }
  return means;
}

void shap_interaction_top_k(const Forest& forest, const MatrixView& X, int64_t k, int32_t* pairs, double* values,
                            int n_threads) {
  const auto kept = prepared(forest, X, n_threads);
  const Prepared& prep = *kept;
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  if (k < 0 || k > p * (p - 1) / 2) throw std::invalid_argument("k must be in [0, p (p - 1) / 2]");
  for_blocks(prep, X, nv, n_threads, [&](const Block& block, Scratch& s) {
    // The rows' entries [a, b] with a < b, summed over trees.
    const auto keep = [](int32_t a, int32_t b) { return a < b; };
    block_pair_sums(forest, prep, block, s, keep, [&](int64_t in_block, const KeySums& sums_of) {
      const int64_t i = block.begin + in_block;
      const std::vector<int64_t>& keys = sums_of.keys();
      for (int32_t c = 0; c < nv; ++c) {
        int32_t* pair = pairs + (i * nv + c) * k * 2;
        double* value = values + (i * nv + c) * k;
        // By |value| (largest first), ties by (a, b); pairs of value 0 (most never share a tree)
        // follow in (a, b) order.
        s.order.clear();
        for (size_t e = 0; e < keys.size(); ++e)
          if (sums_of.sums(e)[c] != 0.0) s.order.push_back(e);
        const auto before = [&](size_t e, size_t f) {
          const double ve = std::abs(sums_of.sums(e)[c]), vf = std::abs(sums_of.sums(f)[c]);
          return ve != vf ? ve > vf : keys[e] < keys[f];
        };
        const auto n_top = static_cast<int64_t>(std::min<size_t>(k, s.order.size()));
        std::partial_sort(s.order.begin(), s.order.begin() + n_top, s.order.end(), before);
        for (int64_t r = 0; r < n_top; ++r) {
          pair[2 * r] = static_cast<int32_t>(keys[s.order[r]] / p);
          pair[2 * r + 1] = static_cast<int32_t>(keys[s.order[r]] % p);
          value[r] = sums_of.sums(s.order[r])[c];
        }
        int64_t r = n_top;
        for (int64_t a = 0; a < p && r < k; ++a)
          for (int64_t b = a + 1; b < p && r < k; ++b) {
            const double* sums = sums_of.find(a * p + b);
            if (sums != nullptr && sums[c] != 0.0) continue;
            pair[2 * r] = static_cast<int32_t>(a);
            pair[2 * r + 1] = static_cast<int32_t>(b);
            value[r++] = sums != nullptr ? sums[c] : 0.0;
          }
      }
    });
  });
}


}  // namespace pyinterp
