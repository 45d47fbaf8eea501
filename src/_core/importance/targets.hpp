// The responses an importance measure is evaluated against: a real y (regression) or class
// indices read as one-hot vectors (classification), with optional row weights.
#pragma once
#include <cstdint>

namespace pyinterp {

struct Targets {
  const double* y = nullptr;         // regression: n values
  const int32_t* classes = nullptr;  // classification: class index per row
  const double* sample_weight = nullptr;

  double weight(int64_t i) const { return sample_weight ? sample_weight[i] : 1.0; }
  // Inner product of row i's target with a node value vector of n_values entries.
  double dot(int64_t i, const double* value) const { return classes ? value[classes[i]] : y[i] * value[0]; }
};

}  // namespace pyinterp
