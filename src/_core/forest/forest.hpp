// A forest of CART trees with the in-bag count of every training row per tree, and the kernels
// that read it: predictions (averaged over trees), leaf ids, decision paths and out-of-bag values.
#pragma once
#include <cstdint>
#include <vector>

#include "../data/matrix.hpp"
#include "derived_data.hpp"
#include "params.hpp"
#include "tree.hpp"

namespace pyinterp {
class ColumnSource;
class ColumnCodes;
}

namespace pyinterp {

struct Forest {
  Criterion criterion = Criterion::squared_error;  // what the trees' impurities measure
  int64_t n_features = 0;
  int32_t n_classes = 0;  // 0 for regression; with several outputs, the most of any output
  int32_t n_outputs = 1;
  int64_t n_samples = 0;  // rows of the training set
  std::vector<Tree> trees;
  std::vector<uint32_t> inbag;  // n_trees x n_samples: times each row was drawn for each tree
  // n_trees x n_samples: the leaf each row reaches in each tree it is out of bag for, -1 in the
  // others; empty unless the fit recorded them (ForestParams::record_oob_leaves). Not pickled.
  std::vector<int32_t> oob_leaves;
  DerivedData derived;  // what readers derive from the trees and keep for later calls; not pickled

  // Values per node: per output, the mean (or median) or n_classes class fractions.
  int32_t n_values() const { return n_outputs * (n_classes > 0 ? n_classes : 1); }
};

// Fits a forest to targets (y or classes, n_outputs per row; labels are derived here) on the
// columns of X, which are only read; codes are built once and shared by every tree. codes: X's
// encoding built earlier (by the caller, for several fits on the same X: chunks of one forest on a
// cluster worker), or null.
Forest fit_forest(const ColumnSource& X, const FitTargets& targets, const double* sample_weight,
                  const std::vector<double>& feature_weights, const ForestParams& params,
                  const ColumnCodes* codes = nullptr);

class ColumnBlocks;
// The same fit on X's columns held in blocks (column_blocks.hpp): its trees are grown level by
// level, each node's candidates searched where their columns are. The trees equal fit_forest's on
// the whole X. Not under max_leaf_nodes (best-first growth takes one node at a time).
Forest fit_forest(ColumnBlocks& blocks, const FitTargets& targets, const double* sample_weight,
                  const std::vector<double>& feature_weights, const ForestParams& params);

// Per feature, the category each of a categorical feature's codes stands for (empty for the
// others); throws unless each is an integer in [0, kMaxCategories). first: X's first column in the
// whole matrix, for the messages.
std::vector<std::vector<uint8_t>> categories_of_codes(const ColumnSource& X, const ColumnCodes& codes,
                                                      const std::vector<int64_t>& categorical, int64_t first = 0);

// Throws unless the parameters' per-feature settings (monotonic_cst, always_features) fit n_features.
void check_feature_params(const ForestParams& params, int64_t n_features);

// The trees of forests fitted on the same rows, in order, as one forest (with their in-bag
// counts): a warm start's new trees after the old ones, or chunks grown apart.
Forest join_forests(const std::vector<const Forest*>& parts);

// Mean over trees of the leaf values: out is n_rows x n_values, row-major.
void predict(const Forest& forest, const MatrixView& X, double* out, int n_threads);

// Mean over the trees for which row i is out of bag; n_trees_out[i] counts them (0: out stays 0).
// X must have the training rows' count; training: X is the training matrix itself, so the leaves
// the fit recorded (if it did) are read instead of running X's rows down the trees.
void predict_oob(const Forest& forest, const MatrixView& X, double* out, int64_t* n_trees_out, int n_threads,
                 bool training = false);

// Leaf reached in every tree: out is n_rows x n_trees.
void apply(const Forest& forest, const MatrixView& X, int64_t* out, int n_threads);

// The same for the trees each row is out of bag for, -1 for the others (their rows are not run
// down). X and training as for predict_oob.
void apply_oob(const Forest& forest, const MatrixView& X, int64_t* out, int n_threads, bool training = false);

// Records the leaves rows [start, start + X.n_rows) of the training X reach in the trees they are
// out of bag for (Forest::oob_leaves, made on the first call, -1 where a row is in bag), X being
// those rows: the leaves a fit records with record_oob_leaves, from X read a run of rows at a time.
void record_oob_leaves(Forest& forest, const MatrixView& X, int64_t start, int n_threads);

// Per node of every tree (tree t's nodes from the sum of the earlier trees' node counts): the rows
// of X that reach it as their leaf, and the sum of their weights, in every tree or (oob) only in
// the trees each row is out of bag for. X, oob and training as for apply_oob.
void leaf_sums(const Forest& forest, const MatrixView& X, const double* weight, bool oob, bool training,
               double* count, double* sum, int n_threads);

// Nodes visited by each row, trees in order, node ids offset by node_offsets (CSR).
struct DecisionPaths {
  std::vector<int64_t> indptr, indices, node_offsets;
};
DecisionPaths decision_path(const Forest& forest, const MatrixView& X, int n_threads);

}  // namespace pyinterp
