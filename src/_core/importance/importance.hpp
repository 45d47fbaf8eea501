// Feature importances computed from a fitted forest: Saabas contributions, the out-of-bag
// impurity measures (MDI-oob, naive-oob, UFI) and OOB permutation importance (MDA). Per-tree
// scores are reduced in tree order, so results are bit-identical for any number of threads.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "../data/matrix.hpp"
#include "../forest/forest.hpp"
#include "../forest/sklearn_trees.hpp"
#include "targets.hpp"

namespace pyinterp {

enum class OobMeasure { mdi_oob, naive_oob, ufi };

struct Importance {
  std::vector<double> mean;       // per feature: mean over the trees used
  std::vector<double> std_error;  // per feature: standard deviation across those trees / sqrt(count)
  int64_t n_trees = 0;            // trees with at least one out-of-bag row
};

// X and targets are the training rows (out-of-bag sets come from forest.inbag). naive-oob and UFI
// measure impurity with the forest's criterion. recorded: the out-of-bag rows' leaves are those
// the fit recorded (Forest::oob_leaves), and only X's shape is read (a feature-parallel fit's X).
Importance oob_importance(const Forest& forest, const MatrixView& X, const Targets& targets, OobMeasure measure,
                          int n_threads, bool recorded = false);
// The same of a scikit-learn forest read in place (its in-bag counts set), the copy's bit for bit.
Importance oob_importance(const SklearnForestNodes& forest, const MatrixView& X, const Targets& targets,
                          OobMeasure measure, int n_threads);

// Mean decrease in impurity: per feature, the sum of its nodes' impurity_decrease averaged over the
// trees. normalize: each tree's sums scaled to one (trees with a single node skipped) and the mean
// renormalised, as scikit-learn's feature_importances_.
std::vector<double> mdi(const Forest& forest, bool normalize);

// One tree's nonzero scores, (feature, score) sorted by feature; `used` is false for a tree with
// no out-of-bag row, which then takes no part in the mean.
struct TreeScores {
  std::vector<std::pair<int32_t, double>> scores;
  bool used = false;
};

// Mean and standard error across the used trees, summed in tree order.
Importance reduce_tree_scores(const std::vector<TreeScores>& trees, int64_t n_features);

// Mean over trees and repeats of (OOB loss with feature k permuted among the tree's OOB rows) -
// (OOB loss); squared error for regression, misclassification for classes. held_out: X's rows are
// not the training rows but rows none of the trees saw (Janitza et al.'s hold-out importance), all
// of them scored by every tree.
Importance permutation_importance(const Forest& forest, const MatrixView& X, const Targets& targets, int n_repeats,
                                  uint64_t seed, int n_threads, bool held_out = false);

// The per-tree scores permutation_importance reduces, of trees [first_tree, first_tree + n_trees)
// only (tree t permutes with stream (seed, stream_offset + t)): chunks of trees scored apart (on a
// cluster's workers, or as forests of a few trees cut from the whole, stream_offset their first
// tree's place in it), concatenated in tree order and reduced, give permutation_importance.
std::vector<TreeScores> permutation_tree_scores(const Forest& forest, const MatrixView& X, const Targets& targets,
                                                int n_repeats, uint64_t seed, int64_t first_tree, int64_t n_trees,
                                                int n_threads, bool held_out = false, int64_t stream_offset = 0);

// out: n_rows x n_features x n_values, the mean over trees of the sum, over the path nodes split on
// each feature, of value(child) - value(node); bias: the mean root value. Every element of out is written.
void contributions(const Forest& forest, const MatrixView& X, double* out, double* bias, int n_threads);

}  // namespace pyinterp
