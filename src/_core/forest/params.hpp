// Forest hyperparameters, already validated and resolved to counts by the Python layer.
#pragma once
#include <cstdint>
#include <vector>

#include "criterion.hpp"

namespace pyinterp {

// The parameters, declared once: FIELD(type, name, default). ForestParams' members, the Python
// attributes and the pickled state (by name) are generated from this list, so a new parameter is
// one line here plus the code that reads it.
#define PYINTERP_FOREST_PARAMS(FIELD)                                                                     \
  FIELD(Criterion, criterion, Criterion::squared_error)                                                  \
  FIELD(int64_t, n_estimators, 100)                                                                      \
  /* draw with replacement; false = subsample without replacement */                                     \
  FIELD(bool, bootstrap, true)                                                                           \
  /* rows drawn per tree; with bootstrap off, n_draws == n means all rows */                             \
  FIELD(int64_t, n_draws, 0)                                                                             \
  /* features evaluated per node (non-constant ones counted) */                                          \
  FIELD(int64_t, max_features, 1)                                                                        \
  FIELD(int64_t, min_samples_split, 2)                                                                   \
  /* Nodes whose in-bag weight is below it are leaves. With unweighted rows the weight counts draws,     \
     repeats included, as ranger's min.node.size counts a node's samples (its value + 1 here). */        \
  FIELD(double, min_weight_split, 0.0)                                                                   \
  FIELD(int64_t, min_samples_leaf, 1)                                                                    \
  /* of the tree's total in-bag weight */                                                                \
  FIELD(double, min_weight_fraction_leaf, 0.0)                                                           \
  /* -1: unlimited */                                                                                    \
  FIELD(int64_t, max_depth, -1)                                                                          \
  /* -1: unlimited (depth-first growth); else best-first growth */                                       \
  FIELD(int64_t, max_leaf_nodes, -1)                                                                     \
  /* minimal cost-complexity pruning of each tree (0: none) */                                           \
  FIELD(double, ccp_alpha, 0.0)                                                                          \
  /* Per feature -1, 0 or +1: the node values (mean, median, class-0 fraction) must decrease / may do    \
     anything / must increase with the feature. Empty: no constraints. */                                \
  FIELD(std::vector<int8_t>, monotonic_cst, {})                                                          \
  FIELD(double, min_impurity_decrease, 0.0)                                                              \
  /* Features searched at every node besides the max_features drawn from the others (ranger's            \
     always.split.variables: covariates every split is weighed against). Ascending, distinct. */         \
  FIELD(std::vector<int64_t>, always_features, {})                                                        \
  /* Features whose values are category codes (integers in [0, 256); NaN missing), split into two sets    \
     of categories by Breiman's ordering rather than at a threshold. Ascending, distinct. Regression      \
     (squared error, Poisson) or two classes, one output. */                                             \
  FIELD(std::vector<int64_t>, categorical_features, {})                                                   \
  /* reweight classes per tree by their in-bag frequency */                                              \
  FIELD(bool, balanced_subsample, false)                                                                 \
  FIELD(uint64_t, seed, 0)                                                                               \
  /* Index of the first tree: tree t draws its rows from stream (seed, first_tree + t) and its nodes'     \
     candidates from streams derived from first_tree + t, so a forest grown in parts (warm start, chunks \
     on several machines) equals the forest grown at once. */                                            \
  FIELD(int64_t, first_tree, 0)                                                                          \
  FIELD(int, n_threads, 1)                                                                               \
  /* Route each tree's out-of-bag rows (drawn 0 times) with the tree as it grows and keep the leaf       \
     each reaches (Forest::oob_leaves): the out-of-bag predictions and leaves of the training rows       \
     then need no descent. Off under ccp_alpha, whose pruning renumbers the nodes. */                    \
  FIELD(bool, record_oob_leaves, false)                                                                  \
  /* >0: fit over this many blocks of consecutive columns in this process (LocalBlocks), each encoded,   \
     searched and parted apart, the trees grown level by level: the feature-parallel fit's test bed.    \
     The trees are those of 0 (one encoding of X, depth-first). Not with max_leaf_nodes. */             \
  FIELD(int64_t, column_blocks, 0)

struct ForestParams {
#define PYINTERP_DECLARE(type, name, initial) type name = initial;
  PYINTERP_FOREST_PARAMS(PYINTERP_DECLARE)
#undef PYINTERP_DECLARE

  // visit(name, field) for every parameter, in declaration order.
  template <class Self, class Visit>
  static void for_each_field(Self& params, Visit&& visit) {
#define PYINTERP_VISIT(type, name, initial) visit(#name, params.name);
    PYINTERP_FOREST_PARAMS(PYINTERP_VISIT)
#undef PYINTERP_VISIT
  }
};

}  // namespace pyinterp
