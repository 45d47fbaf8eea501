// The exact split search: every boundary between distinct codes present in the node, for up to
// max_features candidates drawn without replacement (weighted when feature_weights are given),
// and the always_features at every node. A categorical feature's codes are ordered by the node's
// mean of y (Breiman's shortcut) and every boundary in that order is scored.
// A feature with few codes for the node's size is searched by per-code histograms, otherwise the
// node's rows are sorted by code; rows missing the feature are tried on both sides.
#pragma once
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "feature_sampler.hpp"
#include "split_search.hpp"

namespace pyinterp {

class ExactSplitSearch final : public SplitSearch {
 public:
  ExactSplitSearch(const TrainingSet& data, const ForestParams& params);
  void begin_tree(const double* w, double min_weight_leaf) override;
  Split find(const SearchNode& node) override;
  // For a column block (ColumnBlock, column_blocks.hpp): the given features' own best splits in
  // the node (out[k]; feature -1 when none is admissible) and whether each varies there
  // (varies[k]), drawing nothing. Returns the proxy at which the node's search stops (the best
  // its rows allow, in a node small enough to stop there), +inf when it does not stop early.
  double evaluate_features(const SearchNode& node, const int64_t* features, int64_t count, Split* out,
                           uint8_t* varies);

 private:
  // Takes the node's rows, bounds and place, and prepares its local arrays.
  void start_node(const SearchNode& node);
  // A node's rows missing the searched feature: how many, their code, and whether a scan puts
  // them on the left.
  struct MissingRows {
    int64_t rows = 0;
    uint32_t code = 0;
    bool left = false;
  };

  // Fills the node's local arrays (weights, targets centred on the node's means for squared error,
  // or class slots) that the scans read; value: the node's values.
  void prepare_node(const double* value);
  // by_y_: the node's positions ordered by output k of y.
  void order_by_y(int32_t k);
  // absolute_error: per output, the rank of each position's y, y by rank, and the node's Fenwick
  // arrays.
  void rank_node_targets();
  // The criterion's running statistics over the node's local arrays.
  RegressionStats split_stats(StatsTag<RegressionStats>);
  PoissonStats split_stats(StatsTag<PoissonStats>);
  MultiRegressionStats split_stats(StatsTag<MultiRegressionStats>);
  MultiPoissonStats split_stats(StatsTag<MultiPoissonStats>);
  AbsoluteErrorStats split_stats(StatsTag<AbsoluteErrorStats>);
  template <bool Entropy, bool Multi>
  ClassStats<Entropy, Multi> split_stats(StatsTag<ClassStats<Entropy, Multi>>);
  // Several outputs: output_total_[k] = the sum of output(pos, k) over the node's positions;
  // returns the node's weight.
  template <class Output>
  double output_totals(Output output);
  template <class Stats>
  void search_candidates(Stats& stats, Rng& rng, Split& best);
  // Draws up to `need` candidates into candidates_; false once the sampler has none left.
  bool draw_candidates(int64_t need, Rng& rng);
  // Whether a node of m rows stops at the first candidate reaching the best split its rows allow,
  // and that split's proxy.
  template <class Stats>
  bool stops_at_best() const;
  template <class Stats>
  double reachable_proxy(Stats& stats);
  // evaluate() on feature f, unless it is known constant in the node (then false); a feature
  // found constant is recorded as such (known_constant).
  template <class Stats>
  bool evaluate_feature(int64_t f, Stats& stats, Split& best);
  // evaluate() on feature f's codes at their stored width.
  template <class Stats>
  bool evaluate_feature_codes(int64_t f, Stats& stats, Split& best);
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
  // Whether a candidate leaves enough rows and weight on both sides.
  template <class Stats>
  bool admissible(int64_t n_left, int64_t m, const Stats& stats) const {
    const int64_t msl = params_.min_samples_leaf;
    return n_left >= msl && m - n_left >= msl && stats.wl >= min_weight_leaf_ &&
           stats.total_w - stats.wl >= min_weight_leaf_;
  }
  // Offers feature's best split in the node to `best`; false if the feature is constant there
  // (one value and no missing rows, or none but missing rows). Missing: the column has missing
  // values.
  // col: a const Code* or a PackedColumn (ColumnCodes::visit_column).
  template <bool Missing, class Column, class Stats>
  bool evaluate(Column col, Stats& stats, int64_t feature, Split& best);
  // evaluate() for a sparse column (no missing values) in a node with more rows than the column
  // has entries, reading the entries only: those in the node are found through row_slot_, and the
  // code of the others gets the rest of the node's weight per class. Classification with whole
  // weights (whole_weights_), where that rest is exact: the histograms, and so the trees, are
  // those of the gather over the node's rows. (A regression rest would round differently from the
  // gather, and sparse X would then grow other trees than the same values dense.)
  // The node's entries come from for_each(visit), which calls visit(position, code) for each of
  // them in the node, positions increasing.
  template <class Code, class Stats, class ForEach>
  bool evaluate_entries(const SparseColumn<Code>& col, Stats& stats, int64_t feature, Split& best, ForEach&& for_each);
  // The same for one output's squared error or Poisson deviance, at any weights: the rows between
  // the node's entries (the zero's) are summed in registers in position order, which is the order
  // the gather adds them to the zero's bin in, so the sums are its own bit for bit; the entries
  // go to their bins as the gather's would.
  // After either: the split among the occupied codes' bins, or false when one code holds all rows.
  template <class Stats>
  bool scan_entry_bins(Stats& stats, int64_t feature, Split& best);
  template <class Code, class Stats, class ForEach>
  bool evaluate_entry_sums(const SparseColumn<Code>& col, Stats& stats, int64_t feature, Split& best,
                           ForEach&& for_each);
  // A row's position in the node, or -1 when it is not one of its rows: a copy of row_slot_'s
  // address and the node's stamp, so the loops that call it keep both in registers.
  struct NodePositions {
    const uint64_t* slot;
    uint32_t stamp;
    int64_t operator()(uint32_t i) const {
      const uint64_t s = slot[i];
      return (s >> 32) == stamp ? static_cast<int64_t>(static_cast<uint32_t>(s)) : -1;
    }
  };
  // Records each node row's position in row_slot_, once per node (on its first call), and
  // returns the lookup.
  NodePositions map_node_rows();
  // The smallest and largest codes below `end` set in occupied_ (at least one is).
  void occupied_range(uint32_t end, uint32_t& cmin, uint32_t& cmax) const;
  // Whether this node's columns stored sparse are read through node_entries_; decided (and the
  // entries gathered) at the node's first draw of such a column.
  bool use_node_entries() {
    if (node_entries_ < 0) node_entries_ = gather_node_entries();
    return node_entries_ > 0;
  }
  // Lists the node's entries by column (node_rows_, node_codes_) from X's rows (CSR) when that
  // costs less than reading the columns.
  bool gather_node_entries();
  template <class Index>
  void gather_node_entries(const Index* indptr, const Index* indices);
  // evaluate() for a categorical feature: the node's codes by their mean of y (or share of class
  // 1), ties by code, and every prefix in that order as the left side; with missing rows, first
  // with them right (the last prefix being every code), then left. Breiman (1984, sec. 4.2.2):
  // for one output under squared error, Poisson deviance or two classes, the best split of the
  // codes into two groups is such a prefix.
  template <bool Missing, class Column, class Stats>
  bool evaluate_categories(Column col, Stats& stats, int64_t feature, Split& best);
  // One scan of evaluate_categories over the codes in order_; Keep leaves the histograms filled.
  template <bool Keep, class Stats>
  void scan_categories(int64_t m, Stats stats, int64_t feature, Split& best, const MissingRows& missing);
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
  double best_threshold_split(RegressionStats& stats, int64_t m);
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
  // The node being searched: its rows and their count.
  const uint32_t* rows_ = nullptr;
  int64_t m_ = 0;
  // Features known constant in the node: found so in an ancestor. A feature constant in a node is
  // constant in its descendants, so a draw of it there is not evaluated again (the draws stay the
  // same, so the trees do). Depth-first, a feature's latest finding (node and depth) is in an
  // ancestor of the node whenever any is: a node's descendants never find it, and the nodes after
  // its subtree are not its descendants. path_[d] is the node's ancestor at depth d (itself at its
  // depth), node_depth_ -1 when the tree does not grow depth-first. Sparse single-cell and genotype
  // columns are mostly constant in deep nodes, which draw many candidates to find max_features
  // that vary.
  std::vector<int32_t> constant_node_, constant_depth_, path_;
  int32_t node_ = -1, node_depth_ = -1;
  bool known_constant(int64_t f) const {
    const int32_t d = constant_depth_[f];
    return node_depth_ >= 0 && d >= 0 && d < node_depth_ && path_[d] == constant_node_[f];
  }
  // row_slot_[i] = (stamp_ << 32) | row i's position in the node, for the rows of the node that
  // last mapped them; stamp_ changes per mapped node, so older entries never match.
  std::vector<uint64_t> row_slot_;
  uint32_t stamp_ = 0;
  bool mapped_ = false;
  bool whole_weights_ = false;  // the tree's weights are whole numbers summing below 2^53
  std::vector<double> taken_;   // evaluate_entries: weight per class of the entries in the node
  std::vector<uint32_t> entry_rows_;  // a sparse column's entries in the node
  std::vector<uint8_t> entry_codes_;  // and their codes at the column's width
  // A small node of a CSR X lists, per column stored sparse, its rows with an entry in that column
  // and their codes (from the rows' entries and ColumnCodes' codes of them: counted, then placed),
  // and so do its descendants of at least a quarter of its rows, which skip the rows not theirs: a
  // draw of a column with none is constant at once, and one with some reads only them. Column j's
  // rows are node_rows_[column_begin_[j], column_end_[j]) (codes in node_codes_); both are 0 for
  // the columns not touched (those of the last gathered node are reset by the next gathering).
  // The gathered node (depth-first growth only) is gathered_node_.
  const MatrixView* csr_ = nullptr;
  double entries_per_column_ = 0.0;  // mean entries of the columns stored sparse
  std::vector<uint32_t> column_begin_, column_end_, touched_, node_rows_, node_codes_;
  int32_t gathered_node_ = -1, gathered_depth_ = -1;
  int64_t gathered_m_ = 0;
  int8_t node_entries_ = -1;  // -1: not decided in this node; 0: columns read; 1: the lists
  double mean_y_ = 0.0;  // what prepare_node centred the node's targets on (one output)
  double node_total_w_ = 0.0, node_total_s_ = 0.0;  // and the sums of lw_ and lwy_ (first output)
  std::vector<int64_t> candidates_;  // features drawn at the current node, in draw order
  std::vector<uint32_t> order_;      // a categorical feature's codes in the node, in Breiman's order
  std::vector<double> code_mean_;    // and their means (by code)
  std::vector<uint32_t> by_y_;       // node positions ordered by y (best_threshold_split)
  // Per-node scratch, indexed by position within the node.
  std::vector<double> lw_, lwy_;  // lwy_: n_outputs per position
  std::vector<int32_t> lc_;       // class slots, n_outputs per position
  std::vector<int32_t> llabel_;   // several outputs: label ids
  std::vector<uint32_t> keys_, radix_tmp_;  // (code << position bits) | position (sorting search)
  std::vector<uint32_t> radix_hist_;        // the sorting search's digit histograms
  std::vector<uint64_t> keys64_;           // the same when 32 bits are too few
  // Per-code histograms for the counting split search, chosen for a feature of n_codes codes in a
  // node of m rows when the codes (times code_cost_, a code's cost in class slots) are few enough.
  int64_t code_cost_ = 1;
  // Bytes of one code's histogram bin.
  int64_t hist_bytes_ = 0;
  bool counts(int64_t n_codes, int64_t m) const;
  std::vector<uint32_t> hist_n_;
  std::vector<uint64_t> occupied_;  // bitmap of the codes present in the node
  std::vector<double> hist_w_, hist_s_;
  std::vector<int32_t> hist_class_;
  std::vector<double> class_left_, class_total_;
  std::vector<double> output_left_, output_total_;  // several outputs: per-output sums
  // absolute_error: y ranks and Fenwick arrays (AbsoluteErrorStats), n_outputs blocks each.
  std::vector<uint32_t> y_rank_;
  std::vector<double> sorted_y_, fenwick_full_w_, fenwick_full_wy_, fenwick_left_w_, fenwick_left_wy_,
      fenwick_right_w_, fenwick_right_wy_;
};

}  // namespace pyinterp
