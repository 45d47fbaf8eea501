// Descending many rows through a forest's trees: how the rows are split among tasks, and how a
// descent reads X.
#pragma once
#include <algorithm>
#include <cstdint>

#include "../data/matrix.hpp"

namespace pyinterp {

// Rows a task descends, tree after tree, writing out_bytes a row: one block per thread, so a tree
// meets all of a thread's rows in turn and stays in that core's cache meanwhile (10 trees of
// 33,000 nodes, 40,000 rows, one thread: 0.209 s in blocks of 256 rows, which read every tree
// from L3 again, 0.101 s in one block), but no more rows than keep their output within 256 KiB:
// a block's every tree writes across all of it (apply writes a row's leaves side by side), and a
// first pass over a fresh output of 1 GB faulted in every page before any interrupt check.
// At least 256 rows. The tasks check for interrupts after each tree.
inline int64_t descent_block(int64_t n_rows, int n_threads, int64_t out_bytes) {
  constexpr int64_t kOutBudget = int64_t{256} << 10;
  const int64_t per_thread = (n_rows + n_threads - 1) / std::max(1, n_threads);
  return std::max<int64_t>(256, std::min(per_thread, kOutBudget / std::max<int64_t>(1, out_bytes)));
}

// fn(row) with row(i, j) reading X: dense float64 and float32 matrices by a direct load (the
// getter of every step of every descent), any other layout or type through MatrixView::at.
template <class Fn>
void with_row_reader(const MatrixView& X, Fn fn) {
  const void* data = X.data;
  const int64_t rs = X.row_stride, cs = X.col_stride;
  if (X.layout == MatrixView::Layout::dense && X.type == ValueType::float64) {
    fn([=](int64_t i, int64_t j) { return load<double>(data, i * rs + j * cs); });
  } else if (X.layout == MatrixView::Layout::dense && X.type == ValueType::float32) {
    fn([=](int64_t i, int64_t j) { return static_cast<double>(load<float>(data, i * rs + j * cs)); });
  } else {
    fn([&X](int64_t i, int64_t j) { return X.at(i, j); });
  }
}

}  // namespace pyinterp
