// Per-node sums over the out-of-bag rows of one tree: each OOB row is routed to its leaf once and
// the sums are then carried up to the root, so every node holds the statistics of the OOB rows
// that pass through it. MDI-oob, naive-oob and UFI are all functions of these sums.
#pragma once
#include <cstdint>
#include <vector>

#include "../data/matrix.hpp"
#include "../forest/node_readers.hpp"
#include "targets.hpp"

namespace pyinterp {

struct NodeSums {
  std::vector<double> w;    // per node: OOB weight
  std::vector<double> wy;   // per node x n_values: weighted sum of targets (one-hot for classes)
  std::vector<double> wyy;  // per node: weighted sum of squared target norms (= w for classes)
  int64_t n_rows = 0;       // OOB rows of the tree with positive weight
};

// counts: the tree's in-bag count per training row; rows with count 0 are out of bag. Nodes: a
// node reader (node_readers.hpp), a core tree's or a scikit-learn tree's in place. leaves: the
// leaf each out-of-bag row reaches, as the fit recorded them (Forest::oob_leaves, the tree's
// row), or null: the rows of X are descended (with leaves, only X's row count is read).
template <class Nodes>
void oob_node_sums(const Nodes tree, const uint32_t* counts, const MatrixView& X, const Targets& targets,
                   NodeSums& sums, const int32_t* leaves = nullptr);

}  // namespace pyinterp
