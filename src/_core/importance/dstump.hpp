// DSTUMP (Kazemitabar et al., NeurIPS 2017): every feature scored by a single stump on that
// feature alone over all rows. Columns are rank-encoded once; each feature is then one pass over
// its rows (per-code sums) and one over its distinct values, in parallel over features.
#pragma once
#include <cstdint>
#include <vector>

#include "../data/column_source.hpp"

namespace pyinterp {

enum class StumpSplit { best, median };
// sum: CART impurity decrease (higher is better); left: minus the left part's variance (the
// paper's analysed score, ddof 1); max: minus the larger of the two parts' variances (ddof 1).
enum class StumpSide { sum, left, max };

struct StumpTable {
  std::vector<double> score;              // -inf where the feature has no admissible split
  std::vector<double> threshold;          // NaN where there is no split
  std::vector<double> impurity_decrease;  // CART decrease of the chosen split (0 if none)
  std::vector<double> sign;               // sign of mean(right) - mean(left)
  std::vector<int64_t> n_left;
};

// Regression stumps with weighted variance. split=median puts the boundary at the edge of a tie
// run nearest to half the total weight (lower edge on ties; n // 2 rows for unit weights).
StumpTable dstump(const ColumnSource& X, const double* y, const double* sample_weight, StumpSplit split, StumpSide side,
                  int n_threads);

}  // namespace pyinterp
