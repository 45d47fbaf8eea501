#include "column_source.hpp"

#include <algorithm>
#include <stdexcept>

namespace pyinterp {

ArraySource::ArraySource(const MatrixView& X) : ColumnSource(X.n_rows, X.n_cols, X.type, X.layout), X_(X) {
  if (X.layout == MatrixView::Layout::csr) throw std::invalid_argument("the column encoding reads a sparse X as CSC");
}

MatrixView ArraySource::read(int64_t c0, int64_t c1, std::vector<uint8_t>&) const { return X_.columns(c0, c1); }

MappedSource::MappedSource(const MatrixView& X, const MappedFile& where)
    : ColumnSource(X.n_rows, X.n_cols, X.type, X.layout), file_(where, X) {
  if (packed()) {
    if (!X.indices) throw std::invalid_argument("packed calls of all the file's samples are read in place");
    by_panel_ = true;
    return;
  }
  by_rows_ = X.col_stride == 1 && X.row_stride >= X.n_cols;
  by_panel_ = by_rows_ || (X.row_stride == 1 && X.col_stride >= X.n_rows);
}

int64_t MappedSource::panel_end(int64_t c0, int n_threads) const {
  if (packed()) {  // about 8 MiB of calls a panel, a block of variants per thread at least
    const MatrixView& X = file_.X();
    if (c0 >= X.n_calls()) return n_cols();  // the values beside the calls, in memory
    const int64_t width = std::max<int64_t>(kColumnBlock * std::max(1, n_threads), (int64_t{8} << 20) / X.col_stride);
    return std::min(c0 + width, X.n_calls());
  }
  if (!by_panel_) return n_cols();
  // C order: one page of each row per panel; Fortran order: a block of columns per thread.
  const int64_t width = by_rows_ ? std::max<int64_t>(kColumnBlock, 4096 / item_size(type()))
                                 : kColumnBlock * std::max(1, n_threads);
  return std::min(c0 + width, n_cols());
}

MatrixView MappedSource::read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const {
  const MatrixView& X = file_.X();
  if (!by_panel_ || (packed() && c0 >= X.n_calls())) return X.columns(c0, c1);  // through the map, or in memory
  if (packed()) {  // the variants' calls in one read, then the panel views them where the file has them
    MatrixView panel = X.columns(c0, c1);
    const int64_t size = (c1 - c0 - 1) * X.col_stride + file_.packed_bytes();
    buffer.resize(static_cast<size_t>(size));
    file_.read(buffer.data(), size, c0 * X.col_stride);
    panel.data = buffer.data();
    return panel;
  }
  MatrixView panel = X;
  panel.n_cols = c1 - c0;
  const int64_t item = item_size(X.type), width = c1 - c0;
  buffer.resize(static_cast<size_t>(X.n_rows * width * item));
  panel.data = buffer.data();
  if (by_rows_) {
    panel.row_stride = width;
    panel.col_stride = 1;
    for (int64_t i = 0; i < X.n_rows; ++i)
      file_.read(buffer.data() + i * width * item, width * item, (i * X.row_stride + c0) * item);
  } else {
    panel.row_stride = 1;
    panel.col_stride = X.n_rows;
    for (int64_t j = c0; j < c1; ++j)
      file_.read(buffer.data() + (j - c0) * X.n_rows * item, X.n_rows * item, j * X.col_stride * item);
  }
  return panel;
}

std::unique_ptr<ColumnSource> column_source(const MatrixView& X, const MappedFile* file) {
  if (file && (X.layout != MatrixView::Layout::packed || X.indices)) return std::make_unique<MappedSource>(X, *file);
  return std::make_unique<ArraySource>(X);
}

}  // namespace pyinterp
