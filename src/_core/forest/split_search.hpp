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

// A node's random stream: the root's from its tree's index, a child's from its parent's and its
// side. A node draws its candidates from Rng(seed, stream) alone, so its split does not depend on
// the order nodes are grown in (depth-first, best-first, level by level, or by another process).
inline uint64_t root_stream(int64_t tree) {
  uint64_t state = static_cast<uint64_t>(tree) ^ 0x6A09E667F3BCC909ULL;
  return splitmix64(state);
}
inline uint64_t child_stream(uint64_t parent, bool left) {
  uint64_t state = parent ^ (left ? 0xBB67AE8584CAA73BULL : 0x3C6EF372FE94F82BULL);
  return splitmix64(state);
}

// A node as a search sees it: its rows (in increasing order), its values (per output: mean,
// median or class fractions, as node_stats gives them), its random stream, its monotonic bounds,
// and, when the tree grows depth-first (nodes numbered in preorder), its index and depth; depth -1
// otherwise.
struct SearchNode {
  const uint32_t* rows;
  int64_t m;
  const double* value;
  uint64_t stream = 0;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  int32_t node = -1;
  int32_t depth = -1;
};

// The split a node takes from its candidates, each offered with its own best split (feature -1:
// none admissible) in search order: the always_features, then the drawn ones. The best proxy
// wins, ties to the first offered; the search ends after max_features drawn candidates that
// vary, or at a varying candidate once the best split reaches `reachable` (the best the node's
// rows allow: no later one could beat it) or, in a node of two rows, exists. The exact search
// offers as it evaluates; a search split over column blocks offers the blocks' answers in draw
// order, so both take the same split.
struct CandidatePick {
  int64_t max_features;
  double reachable;
  bool two_rows;
  Split best{kNoSplit};
  int64_t n_varying = 0;

  // Offers one candidate; true when the search is over.
  bool offer(bool varies, const Split& split, bool drawn) {
    if (split.feature >= 0 && split.proxy > best.proxy) best = split;
    n_varying += varies && drawn;
    return (varies && best.feature >= 0 && (two_rows || best.proxy >= reachable)) || n_varying >= max_features;
  }
};

class SplitSearch {
 public:
  virtual ~SplitSearch() = default;
  // Before each tree: the rows' weights (the bootstrap folded in; n entries) and the tree's
  // minimum leaf weight.
  virtual void begin_tree(const double* w, double min_weight_leaf) = 0;
  // The best split of the node among the always_features and up to max_features candidates that
  // vary in it, drawn from the others with the node's stream; feature -1 when there is none.
  virtual Split find(const SearchNode& node) = 0;
};

// The search the parameters ask for.
std::unique_ptr<SplitSearch> make_split_search(const TrainingSet& data, const ForestParams& params);

}  // namespace pyinterp
