// Everything a tree is grown from; all pointers are read-only and outlive the fit.
#pragma once
#include <cstdint>
#include <vector>

#include "../data/column_codes.hpp"
#include "criterion.hpp"

namespace pyinterp {

class ColumnBlocks;

// X's columns are either here (codes and source) or held in blocks (a feature-parallel fit).
struct TrainingSet {
  const ColumnCodes* codes = nullptr;
  const ColumnSource* source = nullptr;  // the thresholds of chosen splits are read from it
  ColumnBlocks* blocks = nullptr;
  FitTargets targets;
  const double* sample_weight = nullptr;  // n values or nullptr
  std::vector<double> feature_weights;    // empty: uniform
  // Per feature: empty, or (a categorical feature) the category of each of its codes.
  std::vector<std::vector<uint8_t>> category_of_code;

  bool categorical(int64_t j) const { return !category_of_code.empty() && !category_of_code[j].empty(); }

  double x(int64_t i, int64_t j) const { return source->value(i, j); }
};

}  // namespace pyinterp
