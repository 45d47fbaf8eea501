// Grows one CART tree (depth-first, or best-first under max_leaf_nodes) on the rows with positive
// weight, partitioning row indices in place. Split search is exact: every boundary between distinct values present in the node.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "../common/job_control.hpp"
#include "../common/rank_sort.hpp"
#include "../common/rng.hpp"
#include "../data/column_codes.hpp"
#include "../data/radix.hpp"
#include "criterion.hpp"
#include "feature_sampler.hpp"
#include "params.hpp"
#include "tree.hpp"

namespace pyinterp {

// Everything a tree is grown from; all pointers are read-only and outlive the fit.
struct TrainingSet {
  const ColumnCodes* codes = nullptr;
  const ColumnSource* source = nullptr;  // the thresholds of chosen splits are read from it
  FitTargets targets;
  const double* sample_weight = nullptr;  // n values or nullptr
  std::vector<double> feature_weights;    // empty: uniform

  double x(int64_t i, int64_t j) const { return source->value(i, j); }
};

class TreeBuilder {
 public:
  TreeBuilder(const TrainingSet& data, const ForestParams& params);

  // Grows a tree on the rows whose weight w[i] is positive (w already folds in the bootstrap):
  // depth-first, or best-first under max_leaf_nodes. With oob_leaf (n entries), the rows drawn 0
  // times (counts) are routed with the tree as it grows: oob_leaf[i] is the leaf row i reaches,
  // -1 for the drawn rows.
  Tree build(const std::vector<double>& w, Rng& rng, const uint32_t* counts = nullptr, int32_t* oob_leaf = nullptr);

 private:
  // A node to grow: its rows samples_[start, end), depth and parent.
  struct NodeRange {
    int64_t start, end;
    int32_t depth, parent;
    bool is_left;
    double lower = -std::numeric_limits<double>::infinity();  // monotonic constraints' bounds
    double upper = std::numeric_limits<double>::infinity();   // on the node's value
    // A child's statistics and values (at child_values_[values_at]), found when its parent was
    // split; values_at < 0: not known yet (the root).
    NodeStats stats{};
    int64_t values_at = -1;
    int64_t oob_start = 0, oob_end = 0;  // its out-of-bag rows, oob_rows_[oob_start, oob_end)
  };
  // A grown node: its index, rows, and, if it was split, the first right row and its decrease.
  struct Grown {
    int32_t node;
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
  // Adds the node to the tree with its statistics and, unless a stopping rule or
  // min_impurity_decrease makes it a leaf, its best split (its rows partitioned at mid).
  Grown grow_node(Tree& tree, const NodeRange& range, Rng& rng);
  void grow_depth_first(Tree& tree, const Grown& root, Rng& rng);
  void grow_best_first(Tree& tree, const Grown& root, Rng& rng);
  // Undoes a split found for a node that max_leaf_nodes leaves unsplit.
  void make_leaf(Tree& tree, const Grown& g);

  struct Split {
    double proxy;
    int64_t feature = -1;
    uint32_t lo = 0, hi = 0;    // rows with code <= lo go left; hi is the next code present (or the missing code)
    bool missing_left = false;  // where the node's rows with a missing value go
  };
  // Out-of-bag rows: oob_rows_[begin, end) reach leaf `node` / are partitioned by a node's split as
  // route sends them past its threshold; route_oob returns the first that goes right.
  void settle_oob(int32_t node, int64_t begin, int64_t end);
  int64_t route_oob(const Split& split, double threshold, bool missing_go_to_left, int64_t begin, int64_t end);
  // A node's rows missing the searched feature: how many, their code, and whether a scan puts
  // them on the left.
  struct MissingRows {
    int64_t rows = 0;
    uint32_t code = 0;
    bool left = false;
  };

  NodeStats node_stats(int64_t start, int64_t end, double* value) {
    return pyinterp::node_stats(params_.criterion, samples_.data() + start, end - start, w_, data_.targets, value,
                                median_scratch_);
  }
  // Fills the node's local arrays (weights, targets centred on the node's means for squared error,
  // or class slots) that the split search reads; value: the node's values.
  void prepare_node(int64_t start, int64_t end, const double* value);
  // by_y_: the node's positions ordered by output k of y.
  void order_by_y(int64_t start, int64_t m, int32_t k);
  // absolute_error: per output, the rank of each position's y, y by rank, and the node's Fenwick
  // arrays.
  void rank_node_targets(int64_t start, int64_t m);
  // The best split of the node among up to max_features non-constant candidates (feature -1: none).
  Split find_split(int64_t start, int64_t end, Rng& rng);
  // The criterion's running statistics over the node's local arrays.
  RegressionStats split_stats(StatsTag<RegressionStats>, int64_t m);
  PoissonStats split_stats(StatsTag<PoissonStats>, int64_t m);
  MultiRegressionStats split_stats(StatsTag<MultiRegressionStats>, int64_t m);
  MultiPoissonStats split_stats(StatsTag<MultiPoissonStats>, int64_t m);
  AbsoluteErrorStats split_stats(StatsTag<AbsoluteErrorStats>, int64_t m);
  template <bool Entropy, bool Multi>
  ClassStats<Entropy, Multi> split_stats(StatsTag<ClassStats<Entropy, Multi>>, int64_t m);
  template <class Stats>
  void search_candidates(Stats& stats, int64_t start, int64_t end, Rng& rng, Split& best);
  // Draws up to `need` candidates into candidates_; false once the sampler has none left.
  bool draw_candidates(int64_t need, Rng& rng);
  // Whether a node of m rows stops at the first candidate reaching the best split its rows allow,
  // and that split's proxy.
  template <class Stats>
  bool stops_at_best(int64_t m) const;
  template <class Stats>
  double reachable_proxy(Stats& stats, int64_t start, int64_t m);
  // evaluate() on feature f's codes at their stored width.
  template <class Stats>
  bool evaluate_feature(int64_t f, int64_t start, int64_t end, Stats& stats, Split& best);
  // Whether a candidate leaves enough rows and weight on both sides.
  // Whether the children's values respect the searched feature's monotonic constraint and the
  // node's bounds.
  template <class Stats>
  bool monotone(const Stats& stats) const {
    if constexpr (!Stats::kMonotonic) {
      return true;  // constraints are refused with several outputs
    } else {
      const double vl = stats.side_value(true), vr = stats.side_value(false);
      return vl >= lower_ && vr >= lower_ && vl <= upper_ && vr <= upper_ && (vl - vr) * cst_ <= 0;
    }
  }
  template <class Stats>
  bool admissible(int64_t n_left, int64_t m, const Stats& stats) const {
    const int64_t msl = params_.min_samples_leaf;
    return n_left >= msl && m - n_left >= msl && stats.wl >= min_weight_leaf_ &&
           stats.total_w - stats.wl >= min_weight_leaf_;
  }
  // Offers feature's best split in the node to `best`; false if the feature is constant there
  // (one value and no missing rows, or none but missing rows). Missing: the column has missing
  // values.
  template <bool Missing, class Code, class Stats>
  bool evaluate(const Code* col, int64_t start, int64_t end, Stats& stats, int64_t feature, Split& best);
  // A column's search with missing rows in the node, in scikit-learn's order: scan(side) over the
  // boundaries with them right, the split of the rows with a value (largest code cmax) from them,
  // scan(side) with them left. take_missing(stats) adds the missing rows to a left side.
  template <class Stats, class Scan, class TakeMissing>
  void search_missing_sides(const Stats& stats, int64_t m, int64_t feature, uint32_t cmax, MissingRows missing,
                            Split& best, Scan&& scan, TakeMissing&& take_missing);
  // The largest proxy of any split of the node's m rows (m small: all 2^m subsets are scored).
  template <class Stats>
  double best_bipartition(Stats& stats, int64_t m);
  // The same for regression in O(m log m): the best cut of the node's rows ordered by y.
  double best_threshold_split(RegressionStats& stats, int64_t start, int64_t m);
  // Scans the per-code histograms that evaluate filled for codes [cmin, cmax], and clears them
  // unless Keep. The scans take stats by value so its running sums stay in registers (through a
  // reference, every histogram store could alias them).
  template <bool Keep, class Stats>
  void scan_counts(uint32_t cmin, uint32_t cmax, int64_t m, Stats stats, int64_t feature, Split& best,
                   const MissingRows& missing);
  // Scans keys ordered by code, the missing rows last.
  template <class Key, class Stats>
  void scan_sorted(const Key* keys, int64_t m, int pos_bits, Stats stats, int64_t feature, Split& best,
                   const MissingRows& missing);
  // A node's rows partitioned by its split: the first right row, the rows missing the feature, and
  // the first rows with the split's codes lo and hi (-1: hi is the missing code).
  struct Partition {
    int64_t mid, n_missing;
    int64_t lo_row, hi_row;
  };
  // Moves the rows going left (code <= lo, or missing when missing_left) before the others.
  Partition partition_rows(int64_t start, int64_t end, const Split& split);
  // The threshold midway between the values of the rows with codes lo and hi.
  double threshold_between(int64_t feature, const Partition& part) const;

  const TrainingSet& data_;
  const ForestParams& params_;
  FeatureSampler sampler_;
  const double* w_ = nullptr;
  double min_weight_leaf_ = 0.0;
  // min_samples_leaf > 1 or a minimum leaf weight. Without them every boundary is admissible, so
  // the counting search need not count rows per code; a boundary between two groups pure in the
  // same class cannot be optimal (see criterion.hpp), so such boundaries are skipped; and a small
  // node may stop at the best split its rows allow. With limits the optimum may sit at the edge
  // of the admissible range inside a pure run, so every boundary is scored.
  bool leaf_limits_ = true;
  // The searched feature's monotonic constraint and the node's bounds; a constrained feature
  // scores every boundary (constraints, like leaf limits, can exclude the unconstrained optimum).
  int8_t cst_ = 0;
  double lower_ = -std::numeric_limits<double>::infinity(), upper_ = std::numeric_limits<double>::infinity();
  bool every_boundary() const { return leaf_limits_ || cst_ != 0; }
  double root_weight_ = 0.0;
  double mean_y_ = 0.0;  // what prepare_node centred the node's targets on (one output)
  double node_total_w_ = 0.0, node_total_s_ = 0.0;  // and the sums of lw_ and lwy_ (first output)
  std::vector<double> value_;         // a node's values
  // The values of children not yet grown, the right child's then the left's per split: a stack
  // depth-first (children are grown left first), at most two per leaf best-first (max_leaf_nodes).
  std::vector<double> child_values_;
  std::vector<uint32_t> samples_, right_rows_;
  Tree grown_;                      // the tree being grown (build returns a copy)
  std::vector<uint32_t> oob_rows_;  // the tree's out-of-bag rows, in node order as they are routed
  int32_t* oob_leaf_ = nullptr;     // build's oob_leaf
  std::vector<int64_t> candidates_;  // features drawn at the current node, in draw order
  std::vector<uint32_t> by_y_;       // node positions ordered by y (best_threshold_split)
  // Per-node scratch, indexed by position within the node.
  std::vector<double> lw_, lwy_;  // lwy_: n_outputs per position
  std::vector<int32_t> lc_;       // class slots, n_outputs per position
  std::vector<int32_t> llabel_;   // several outputs: label ids
  std::vector<uint32_t> keys_, radix_tmp_;  // (code << position bits) | position (sorting search)
  std::vector<uint64_t> keys64_;           // the same when 32 bits are too few
  // Per-code histograms for the counting split search.
  std::vector<uint32_t> hist_n_;
  std::vector<uint64_t> occupied_;  // bitmap of the codes present in the node
  std::vector<double> hist_w_, hist_s_;
  std::vector<int32_t> hist_class_;
  std::vector<double> class_left_, class_total_;
  std::vector<double> output_left_, output_total_;  // several outputs: per-output sums
  // absolute_error: node medians (node_stats), y ranks and Fenwick arrays (AbsoluteErrorStats),
  // n_outputs blocks each.
  std::vector<std::pair<double, double>> median_scratch_;
  std::vector<uint32_t> y_rank_;
  std::vector<double> sorted_y_, fenwick_full_w_, fenwick_full_wy_, fenwick_left_w_, fenwick_left_wy_,
      fenwick_right_w_, fenwick_right_wy_;
};

}  // namespace pyinterp
