// The seam between growing a tree and searching a node's split. TreeBuilder (builder.hpp) grows
// the tree: node order, stopping rules, partitions, thresholds and out-of-bag routing. A
// SplitSearch finds one node's best split from the column codes: candidate sampling, the scans,
// the side of the missing values and the criterion's per-node scratch. make_split_search is the one
// place a search is chosen, so a second one (histogram bins for large n, say) can be added and
// tested against the exact search on the same nodes.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>

#include "../common/rng.hpp"
#include "params.hpp"
#include "training_set.hpp"
#include "tree.hpp"

namespace pyinterp {

// Impurities at or below this are treated as pure (as scikit-learn does).
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

// A split in codes of its feature: rows with code <= lo go left; hi is the next code present among
// the node's rows (or the missing code), and missing_left the side of the rows missing the feature.
// On a categorical feature, the rows whose code is in left_codes (bit c of word c / 64) go left.
struct Split {
  double proxy;
  int64_t feature = -1;  // -1: no split
  uint32_t lo = 0, hi = 0;
  bool missing_left = false;
  uint64_t left_codes[kCategoryWords] = {};
};

// A node as a search sees it: its rows (in increasing order), its values (per output: mean,
// median or class fractions, as node_stats gives them), its monotonic bounds, and, when the tree
// grows depth-first (nodes numbered in preorder), its index and depth; depth -1 otherwise.
struct SearchNode {
  const uint32_t* rows;
  int64_t m;
  const double* value;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  int32_t node = -1;
  int32_t depth = -1;
};

class SplitSearch {
 public:
  virtual ~SplitSearch() = default;
  // Before each tree: the rows' weights (the bootstrap folded in; n entries) and the tree's
  // minimum leaf weight.
  virtual void begin_tree(const double* w, double min_weight_leaf) = 0;
  // The best split of the node among the always_features and up to max_features candidates that
  // vary in it, drawn with rng from the others; feature -1 when there is none.
  virtual Split find(const SearchNode& node, Rng& rng) = 0;
};

// The search the parameters ask for.
std::unique_ptr<SplitSearch> make_split_search(const TrainingSet& data, const ForestParams& params);

}  // namespace pyinterp
