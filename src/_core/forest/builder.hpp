// Grows one CART tree (depth-first, or best-first under max_leaf_nodes) on the rows with positive
// weight, partitioning row indices in place: node order, stopping rules, partitions, thresholds and
// out-of-bag routing. Each node's split comes from a SplitSearch (split_search.hpp). When X's
// columns are held in blocks (TrainingSet::blocks, column_blocks.hpp), the tree grows level by
// level instead, the blocks searching and parting a whole level's nodes at once, and is then
// renumbered in preorder: the same tree.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "../common/job_control.hpp"
#include "column_blocks.hpp"
#include "criterion.hpp"
#include "feature_sampler.hpp"
#include "params.hpp"
#include "split_search.hpp"
#include "training_set.hpp"
#include "tree.hpp"

namespace pyinterp {

class TreeBuilder {
 public:
  // slot: the builder's slot in the column blocks (data.blocks), one per tree grown at once.
  TreeBuilder(const TrainingSet& data, const ForestParams& params, int slot = 0);

  // Grows tree number `tree` (its nodes' streams come from it: root_stream) on the rows whose
  // weight w[i] is positive (w already folds in the bootstrap): depth-first, or best-first under
  // max_leaf_nodes. With oob_leaf (n entries), the rows drawn 0 times (counts) are routed with the
  // tree as it grows: oob_leaf[i] is the leaf row i reaches, -1 for the drawn rows.
  Tree build(const std::vector<double>& w, int64_t tree, const uint32_t* counts = nullptr, int32_t* oob_leaf = nullptr);

 private:
  // A node to grow: its rows samples_[start, end), depth, parent and random stream.
  struct NodeRange {
    int64_t start, end;
    int32_t depth, parent;
    bool is_left;
    uint64_t stream;
    double lower = -std::numeric_limits<double>::infinity();  // monotonic constraints' bounds
    double upper = std::numeric_limits<double>::infinity();   // on the node's value
    // A child's statistics and values (at child_values_[values_at]), found when its parent was
    // split; values_at < 0: not known yet (the root).
    NodeStats stats{};
    int64_t values_at = -1;
    int64_t oob_start = 0, oob_end = 0;  // its out-of-bag rows, oob_rows_[oob_start, oob_end)
  };
  // A grown node: its index, rows, stream, and, if it was split, the first right row and its
  // decrease.
  struct Grown {
    int32_t node;
    uint64_t stream;
    int64_t start, mid, end;
    int32_t depth;
    double decrease;
    bool split;
    double lower, upper;  // the node's bounds
    double middle;        // between the children's values (the bound a monotonic split passes on)
    NodeStats left, right;  // the children's statistics
    int64_t values_at;      // the right child's values at child_values_[values_at], then the left's
    int64_t oob_start = 0, oob_mid = 0, oob_end = 0;  // its out-of-bag rows, the left child's first
  };
  // The left (left = true) or right child's range, with the bounds a monotonic constraint on the
  // split feature passes to it (scikit-learn's rule: the middle of the children's values).
  NodeRange child_range(const Tree& tree, const Grown& g, bool left) const;
  // A node added to the tree with its statistics and values (value_); may_split unless a stopping
  // rule makes it a leaf.
  struct Opened {
    Grown out;
    NodeStats stats;
    bool may_split;
  };
  Opened open_node(Tree& tree, const NodeRange& range);
  // A node's rows parted by its split: the first right row and out-of-bag row (rows and
  // out-of-bag rows moved in place, the left ones first), and what the tree records of the split.
  struct Partition {
    int64_t mid, oob_mid;
    bool missing_go_to_left;
    double threshold;  // NaN: a split by categories, its left set `categories`
    uint64_t categories[kCategoryWords];
  };
  // The opened node split as `part` parts its rows, or a leaf when the decrease falls below
  // min_impurity_decrease.
  Grown close_node(Tree& tree, const NodeRange& range, const Opened& opened, const Split& split,
                   const Partition& part);
  // An opened node as a leaf.
  Grown leaf(const Opened& opened);
  // Adds the node to the tree with its statistics and, unless a stopping rule or
  // min_impurity_decrease makes it a leaf, its best split (its rows partitioned at mid).
  Grown grow_node(Tree& tree, const NodeRange& range);
  void grow_depth_first(Tree& tree, const Grown& root);
  void grow_best_first(Tree& tree, const Grown& root);
  // Undoes a split found for a node that max_leaf_nodes leaves unsplit.
  void make_leaf(Tree& tree, const Grown& g);

  // Level by level over the column blocks: the tree in the order the levels make its nodes.
  void grow_level_wise(Tree& tree, const NodeRange& root);
  // The nodes of `ranges` made at once over the blocks (opened, searched and parted in one round
  // of asks each): grown[r] for ranges[r]. level_wise: no node made before needs its values.
  void grow_together(Tree& tree, const std::vector<NodeRange>& ranges, bool level_wise, std::vector<Grown>& grown);
  // A node of a level being searched: its range, what opening it found, its values at
  // level_values_[k * n_values], the pick among its candidates' answers so far and its draws.
  struct LevelNode {
    NodeRange range;
    Opened opened;
    CandidatePick pick;
    int64_t drawn = 0;       // candidates drawn and asked so far
    bool done = false;
    int64_t first = 0, end = 0;  // this round's candidates, asked_[first, end)
  };
  // The splits of the level's nodes (their picks' best): rounds of asks, each node drawing more
  // candidates until its pick is done or its draws run out.
  void search_level(std::vector<LevelNode>& level);
  // Parts the rows of the level's nodes whose split exists, as their columns' blocks say.
  void partition_level(std::vector<LevelNode>& level, std::vector<Partition>& parts);

  // Out-of-bag rows: oob_rows_[begin, end) reach leaf `node`.
  void settle_oob(int32_t node, int64_t begin, int64_t end);
  // The statistics and values of the node of rows samples_[start, end).
  NodeStats node_stats(int64_t start, int64_t end, double* value) {
    return pyinterp::node_stats(params_.criterion, samples_.data() + start, end - start, w_, data_.targets, value,
                                median_scratch_);
  }
  // Parts a node's rows (and out-of-bag rows) by its split on X's codes in this process.
  Partition partition_here(const NodeRange& range, const Split& split);

  const TrainingSet& data_;
  const ForestParams& params_;
  int slot_;
  std::unique_ptr<SplitSearch> search_;
  const double* w_ = nullptr;
  double min_weight_leaf_ = 0.0;
  double root_weight_ = 0.0;
  std::vector<double> value_;         // a node's values
  // The values of children not yet grown, the right child's then the left's per split: a stack
  // depth-first (children are grown left first), at most two per leaf best-first (max_leaf_nodes).
  std::vector<double> child_values_;
  std::vector<uint32_t> samples_, right_rows_;
  Tree grown_;                      // the tree being grown (build returns a copy)
  std::vector<uint32_t> oob_rows_;  // the tree's out-of-bag rows, in node order as they are routed
  int32_t* oob_leaf_ = nullptr;     // build's oob_leaf
  std::vector<std::pair<double, double>> median_scratch_;  // absolute_error's node medians (node_stats)
  // Level-wise growth: the level's node values, its asks and answers, each round's candidates in
  // draw order (asked_) with where their answers are (answer_at_), and whether each was drawn (not
  // an always_feature).
  struct AnswerAt {
    int64_t block, at, place;  // the block, the candidate's index in its ask, its node's there
  };
  std::unique_ptr<FeatureSampler> sampler_;
  std::vector<double> level_values_;
  std::vector<LevelNode> level_;  // grow_together's nodes searched at once, and their partitions
  std::vector<Partition> parts_;
  std::vector<SearchAsk> search_asks_;
  std::vector<SearchAnswer> search_answers_;
  std::vector<PartitionAsk> partition_asks_;
  std::vector<PartitionAnswer> partition_answers_;
  // The tree's partitions so far that some block has not made (its rows kept as the builder's):
  // each made by the block that answered it (log_owner_), its flags from log_row_at_[k] and
  // log_oob_at_[k] on, and the log's moves each block's asks have taken (delivered_[b]).
  Moves log_;
  std::vector<int64_t> log_owner_, log_row_at_, log_oob_at_, delivered_;
  // Each block asked something takes the moves logged since its last ask (all but those it made).
  template <class Ask>
  void deliver(std::vector<Ask>& asks);
  std::vector<int64_t> asked_;
  std::vector<AnswerAt> answer_at_;
  std::vector<uint8_t> asked_drawn_;
};

}  // namespace pyinterp
