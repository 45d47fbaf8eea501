// Forest hyperparameters, already validated and resolved to counts by the Python layer.
#pragma once
#include <cstdint>
#include <vector>

#include "criterion.hpp"

namespace pyinterp {

struct ForestParams {
  Criterion criterion = Criterion::squared_error;
  int64_t n_estimators = 100;
  bool bootstrap = true;         // draw with replacement; false = subsample without replacement
  int64_t n_draws = 0;           // rows drawn per tree; with bootstrap off, n_draws == n means all rows
  int64_t max_features = 1;      // features evaluated per node (non-constant ones counted)
  int64_t min_samples_split = 2;
  // Nodes whose in-bag weight is below it are leaves. With unweighted rows the weight counts draws,
  // repeats included, as ranger's min.node.size counts a node's samples (its value + 1 here).
  double min_weight_split = 0.0;
  int64_t min_samples_leaf = 1;
  double min_weight_fraction_leaf = 0.0;  // of the tree's total in-bag weight
  int64_t max_depth = -1;        // -1: unlimited
  int64_t max_leaf_nodes = -1;   // -1: unlimited (depth-first growth); else best-first growth
  double ccp_alpha = 0.0;        // minimal cost-complexity pruning of each tree (0: none)
  // Per feature -1, 0 or +1: the node values (mean, median, class-0 fraction) must decrease /
  // may do anything / must increase with the feature. Empty: no constraints.
  std::vector<int8_t> monotonic_cst;
  double min_impurity_decrease = 0.0;
  bool balanced_subsample = false;  // reweight classes per tree by their in-bag frequency
  uint64_t seed = 0;
  // Index of the first tree: tree t draws from stream (seed, first_tree + t), so a forest grown in
  // parts (warm start, chunks on several machines) equals the forest grown at once.
  int64_t first_tree = 0;
  int n_threads = 1;
  // Route each tree's out-of-bag rows (drawn 0 times) with the tree as it grows and keep the leaf
  // each reaches (Forest::oob_leaves): the out-of-bag predictions and leaves of the training rows
  // then need no descent. Off under ccp_alpha, whose pruning renumbers the nodes.
  bool record_oob_leaves = false;
};

}  // namespace pyinterp
