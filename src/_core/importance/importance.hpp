// Feature importances computed from a fitted forest: Saabas contributions, the out-of-bag
// impurity measures (MDI-oob, naive-oob, UFI) and OOB permutation importance (MDA). Per-tree
// scores are reduced in tree order, so results are bit-identical for any number of threads.
#pragma once
#include <cstdint>
#include <vector>

#include "../forest/data.hpp"
#include "../forest/forest.hpp"
#include "targets.hpp"

namespace pyinterp {

enum class OobMeasure { mdi_oob, naive_oob, ufi };
// Impurity family used by naive-oob and UFI; variance is also the one-hot Gini (thesis eq. 8.19).
enum class Impurity { variance, gini, entropy };

struct Importance {
  std::vector<double> mean;       // per feature: mean over the trees used
  std::vector<double> std_error;  // per feature: standard deviation across those trees / sqrt(count)
  int64_t n_trees = 0;            // trees with at least one out-of-bag row
};

// X and targets are the training rows (out-of-bag sets come from forest.inbag).
Importance oob_importance(const Forest& forest, const MatrixView& X, const Targets& targets, OobMeasure measure,
                          Impurity impurity, int n_threads);

// Mean over trees and repeats of (OOB loss with feature k permuted among the tree's OOB rows) -
// (OOB loss); squared error for regression, misclassification for classes.
Importance permutation_importance(const Forest& forest, const MatrixView& X, const Targets& targets, int n_repeats,
                                  uint64_t seed, int n_threads);

// out: n_rows x n_features x n_values, the mean over trees of the sum, over the path nodes split on
// each feature, of value(child) - value(node); bias: the mean root value. Caller zero-fills out.
void contributions(const Forest& forest, const MatrixView& X, double* out, double* bias, int n_threads);

}  // namespace pyinterp
