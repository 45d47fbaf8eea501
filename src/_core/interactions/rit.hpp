// Random intersection trees (Shah & Meinshausen 2014) over weighted sets, as iRF runs them: the
// root of each tree is the intersection of root_sets (2 in R iRF, 1 in the Python irf) sampled
// sets, every node has n_children children, each the node's set intersected with one more sampled
// set; a node is a leaf when it reaches depth or shrinks to min_size, and sets smaller than
// min_size are dropped. The leaves are reported (R iRF) or every node (all_nodes, the Python irf).
// Sets are sampled with probability proportional to their weight.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "set_matches.hpp"

namespace pyinterp {

struct RitOptions {
  int32_t depth = 5;        // levels including the root
  double n_children = 2.0;  // a fractional count is floor or ceil at random with the matching odds
  int32_t min_size = 2;
  int64_t n_trees = 500;
  uint64_t seed = 0;
  int32_t root_sets = 2;   // 1 or 2
  bool all_nodes = false;  // report every node, not only the leaves
  int64_t max_nodes = 0;  // nodes drawn (kept or dropped) over all trees before TooManyIntersections (>= 1)
};

// RIT's output and work grow as n_children^depth: past max_nodes the call stops with this error.
struct TooManyIntersections : std::length_error {
  using std::length_error::length_error;
};

// Distinct reported intersections, sorted lexicographically, each sorted ascending; found[i] is
// the number of RIT trees that reported intersection i.
struct RitResult {
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> codes;
  std::vector<int64_t> found;
};

// Tree t draws from its own stream (seed, t), so the result does not depend on n_threads.
RitResult random_intersection_trees(const CsrView<int32_t>& sets, const RitOptions& options,
                                    int n_threads);

}  // namespace pyinterp
