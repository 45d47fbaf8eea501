// Read-only views of caller-owned arrays: the core never copies or writes them.
#pragma once
#include <cstdint>

namespace pyinterp {

// A 2-d float32 or float64 matrix with arbitrary (element) strides: C, Fortran or sliced.
struct MatrixView {
  const void* data = nullptr;
  bool is_float32 = false;
  int64_t n_rows = 0;
  int64_t n_cols = 0;
  int64_t row_stride = 0;  // in elements
  int64_t col_stride = 0;  // in elements

  double at(int64_t i, int64_t j) const {
    const int64_t k = i * row_stride + j * col_stride;
    return is_float32 ? static_cast<double>(static_cast<const float*>(data)[k])
                      : static_cast<const double*>(data)[k];
  }
};

}  // namespace pyinterp
