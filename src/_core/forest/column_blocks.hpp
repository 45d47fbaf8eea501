// X's columns held apart in blocks of consecutive columns, in this process (LocalBlocks) or on
// other machines (the Python layer's blocks on Dask workers): the feature-parallel fit. A tree is
// then grown level by level (TreeBuilder with TrainingSet::blocks): per level the builder draws
// each node's candidates from the node's stream and asks every block for its candidates' own best
// splits at once (search), picks each node's split among the answers in draw order (CandidatePick,
// the exact search's rule), and asks the block holding a chosen split's column to part the node's
// rows and read its threshold (partition). The driver holds y; a block holds its columns' codes.
// Both keep each tree's rows in node order (a node's rows a range), parted alike: the block that
// parts a node parts its own copy, and the others make the same move (Moves, a bit a row) with
// their next ask, so asks name ranges, not rows. The trees are those the exact search grows on
// the whole X (tests/test_split_search.py), whatever the blocks.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "../data/column_source.hpp"
#include "exact_search.hpp"
#include "feature_sampler.hpp"
#include "split_search.hpp"
#include "training_set.hpp"

namespace pyinterp {

// The partitions a block has not applied to a tree's rows yet, oldest first. Move k parts the
// tree's rows [start[k], end[k]) and out-of-bag rows [oob_start[k], oob_end[k]) (as the builder
// and every block keep them: ColumnBlock::Slot) stably, those whose flag is 1 first; its flags
// follow the earlier moves' in row_left (oob_left). They cross as bits (bind_blocks.cpp): a
// level's partitions reach every block in about n / 8 bytes, not as row lists.
struct Moves {
  std::vector<int64_t> start, end, oob_start, oob_end;
  std::vector<uint8_t> row_left, oob_left;
  int64_t size() const { return static_cast<int64_t>(start.size()); }
  // Appends move k of `other`.
  void append(const Moves& other, int64_t k, int64_t row_at, int64_t oob_at);
  template <class Self, class Visit>
  static void for_each_array(Self& m, Visit&& visit) {
    visit("move_start", m.start), visit("move_end", m.end), visit("move_oob_start", m.oob_start);
    visit("move_oob_end", m.oob_end);
  }
};

// Nodes' questions to one block, after its moves: node k's rows are the tree's rows [start[k],
// end[k]), its values values[k * n_values, (k + 1) * n_values), its monotonic bounds lower[k] and
// upper[k] (none: unbounded, without monotonic constraints), and its candidates those the block
// holds among the always_features (when with_always[k]) and then among draws [draw_from[k],
// draw_to[k]) of the node's stream stream[k], in that order: the block draws them itself, as the
// builder does, so no candidate lists cross. It finds feature_begin[k + 1] - feature_begin[k] of them
// (the builder's count, checked).
struct SearchAsk {
  std::vector<int64_t> start, end;
  std::vector<double> values, lower, upper;
  std::vector<uint64_t> stream;
  std::vector<int64_t> draw_from, draw_to;
  std::vector<uint8_t> with_always;
  std::vector<int64_t> feature_begin{0};
  Moves moves;
  int64_t n_nodes() const { return static_cast<int64_t>(start.size()); }
  // visit(name, array) for every array but the moves' flags (the messages' one field list: the
  // bindings' dicts).
  template <class Self, class Visit>
  static void for_each_array(Self& m, Visit&& visit) {
    visit("start", m.start), visit("end", m.end), visit("values", m.values), visit("lower", m.lower);
    visit("upper", m.upper), visit("stream", m.stream), visit("draw_from", m.draw_from);
    visit("draw_to", m.draw_to), visit("with_always", m.with_always), visit("feature_begin", m.feature_begin);
    Moves::for_each_array(m.moves, visit);
  }
};

// Per candidate its own best split (its feature the block's index, -1: none admissible) and
// whether it varies in its node; per node the proxy at which its search stops
// (ExactSplitSearch::evaluate_features). It crosses between machines compacted (bind_blocks.cpp):
// its splits then hold only those the builder may take.
struct SearchAnswer {
  std::vector<Split> splits;
  std::vector<uint8_t> varies;
  std::vector<double> reachable;
};

// Chosen splits for the block to apply, after its moves: node k's rows the tree's rows [start[k],
// end[k]), its out-of-bag rows [oob_start[k], oob_end[k]), its split (feature: the block's index).
// The block parts its own copy of the rows as it answers.
struct PartitionAsk {
  std::vector<int64_t> start, end, oob_start, oob_end;
  std::vector<Split> splits;
  Moves moves;
  int64_t n_nodes() const { return static_cast<int64_t>(splits.size()); }
  template <class Self, class Visit>
  static void for_each_array(Self& m, Visit&& visit) {
    visit("start", m.start), visit("end", m.end), visit("oob_start", m.oob_start), visit("oob_end", m.oob_end);
    Moves::for_each_array(m.moves, visit);
  }
};

// The move the block made of the ask's nodes (their ranges, and per row and out-of-bag row 1 when
// it went left): the other blocks make it later, from the builder's log. Per node the threshold
// (NaN: a categorical split, whose left set of categories is categories[k * kCategoryWords, ...))
// and the missing side the tree records.
struct PartitionAnswer {
  Moves moves;
  std::vector<double> threshold;
  std::vector<uint8_t> missing_go_to_left;
  std::vector<uint64_t> categories;
  template <class Self, class Visit>
  static void for_each_array(Self& m, Visit&& visit) {
    visit("threshold", m.threshold), visit("missing_go_to_left", m.missing_go_to_left);
    visit("categories", m.categories);
  }
};

// The blocks as the builder sees them. Block b holds the whole matrix's columns [bounds[b],
// bounds[b + 1]). Each call takes one ask per block (an ask of no nodes asks nothing). Several
// trees grow at once, each builder under its own slot (0, 1, ...: the thread growing it), whose
// calls may come at the same time as another slot's; a block keeps each slot's row weights, rows
// in node order and search scratch apart.
class ColumnBlocks {
 public:
  ColumnBlocks(std::vector<int64_t> bounds, int64_t n_rows);
  virtual ~ColumnBlocks() = default;
  int64_t n_blocks() const { return static_cast<int64_t>(bounds_.size()) - 1; }
  int64_t n_rows() const { return n_rows_; }
  int64_t n_cols() const { return bounds_.back(); }
  int64_t first(int64_t b) const { return bounds_[b]; }
  // The block holding column j.
  int64_t owner(int64_t j) const;

  // Before each tree: the rows' weights (n entries; the tree's rows are those of positive
  // weight, in increasing order), the tree's minimum leaf weight and its out-of-bag rows
  // (increasing; none unless the fit routes them).
  virtual void begin_tree(int slot, const std::vector<double>& w, double min_weight_leaf,
                          const std::vector<uint32_t>& oob) = 0;
  virtual void search(int slot, const std::vector<SearchAsk>& asks, std::vector<SearchAnswer>& answers) = 0;
  virtual void partition(int slot, const std::vector<PartitionAsk>& asks, std::vector<PartitionAnswer>& answers) = 0;

 private:
  std::vector<int64_t> bounds_;
  int64_t n_rows_;
};

// The targets as a fit uses them: y scaled by 2^-y_exp when its magnitudes are extreme (so no
// sum of w y^2 overflows; see forest.cpp), label ids of several outputs' classes. Not copyable:
// targets points into the vectors.
struct FitData {
  FitTargets targets;
  int y_exp = 0;
  std::vector<double> y_scaled;
  std::vector<int32_t> labels;
  FitData(const FitTargets& raw, int64_t n);
  FitData(const FitData&) = delete;
  FitData& operator=(const FitData&) = delete;
};

// One block: its columns' source and codes and an exact search over them. On a worker it answers
// the driver's asks; its search and partitions read its own columns only.
class ColumnBlock {
 public:
  // params: the fit's (criterion, leaf limits, n_threads, seed), with monotonic_cst,
  // categorical_features and always_features those of the whole matrix; first: the block's first
  // column in it, of n_features; feature_weights: the fit's (empty: uniform), to draw candidates.
  ColumnBlock(std::shared_ptr<const ColumnSource> source, const FitTargets& targets, const ForestParams& params,
              int64_t first, int64_t n_features, const std::vector<double>& feature_weights);
  int64_t n_rows() const { return source_->n_rows(); }
  int64_t n_cols() const { return source_->n_cols(); }
  int64_t n_values() const { return fit_.targets.n_values(); }
  int64_t codes_nbytes() const { return codes_->nbytes(); }
  // The first of the block's columns (its index) with a missing value, or -1.
  int64_t first_missing() const {
    for (int64_t j = 0; j < n_cols(); ++j)
      if (codes_->has_missing(j)) return j;
    return -1;
  }

  // Slots 0 to kMaxSlots - 1; different slots may be used at once, one slot by one thread at a
  // time. w: n weights, oob: the out-of-bag rows (both copied).
  static constexpr int kMaxSlots = 256;
  void begin_tree(int slot, const double* w, double min_weight_leaf, const std::vector<uint32_t>& oob);
  // Each ask is checked (moves, ranges, features and bounds in range) before it is read; its moves
  // are applied first.
  void search(int slot, const SearchAsk& ask, SearchAnswer& answer);
  void partition(int slot, const PartitionAsk& ask, PartitionAnswer& answer);

 private:
  // A tree's weights, its rows and out-of-bag rows in node order (each node's rows a range, kept
  // as the builder keeps them: the same stable partitions) and the search's scratch, per slot.
  struct Slot {
    std::vector<double> w;
    std::vector<uint32_t> rows, oob, right;
    std::unique_ptr<ExactSplitSearch> search;
    std::unique_ptr<FeatureSampler> sampler;
    std::vector<int64_t> features;  // an ask's candidates, node after node (the block's indices)
  };
  Slot& slot(int k, bool begin);
  static void apply(Slot& s, const Moves& moves);
  // The ask's candidates the block holds, into s.features, checked against its feature_begin.
  void draw(Slot& s, const SearchAsk& ask) const;

  std::shared_ptr<const ColumnSource> source_;
  std::unique_ptr<ColumnCodes> codes_;
  int64_t first_, n_features_;
  std::vector<double> feature_weights_;
  std::vector<int64_t> always_;  // the whole matrix's always_features
  FitData fit_;
  ForestParams params_;
  TrainingSet data_;
  std::mutex slots_mutex_;  // guards the table of slots, not a slot's contents
  std::vector<std::unique_ptr<Slot>> slots_;
};

// Columns [first, first + n_cols) of another source, as a source of their own.
class ColumnRangeSource final : public ColumnSource {
 public:
  ColumnRangeSource(const ColumnSource& whole, int64_t first, int64_t n_cols);
  int64_t panel_end(int64_t c0, int n_threads) const override;
  MatrixView read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const override;
  double value(int64_t i, int64_t j) const override { return whole_.value(i, first_ + j); }
  bool mapped() const override { return whole_.mapped(); }

 private:
  const ColumnSource& whole_;
  int64_t first_;
};

// params.column_blocks blocks of X's consecutive columns in this process, each encoded apart (its
// codes beside nothing else: the whole X is not encoded). The feature-parallel fit's test bed.
class LocalBlocks final : public ColumnBlocks {
 public:
  LocalBlocks(const ColumnSource& X, const FitTargets& targets, const ForestParams& params,
              const std::vector<double>& feature_weights);
  void begin_tree(int slot, const std::vector<double>& w, double min_weight_leaf,
                  const std::vector<uint32_t>& oob) override;
  void search(int slot, const std::vector<SearchAsk>& asks, std::vector<SearchAnswer>& answers) override;
  void partition(int slot, const std::vector<PartitionAsk>& asks, std::vector<PartitionAnswer>& answers) override;

 private:
  std::vector<std::unique_ptr<ColumnBlock>> blocks_;
};

}  // namespace pyinterp
