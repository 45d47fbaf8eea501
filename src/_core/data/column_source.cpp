#include "column_source.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace pyinterp {

ArraySource::ArraySource(const MatrixView& X) : ColumnSource(X.n_rows, X.n_cols, X.type, X.layout), X_(X) {
  if (X.layout != MatrixView::Layout::csr) return;
  column_starts_.assign(X.n_cols + 1, 0);
  for (int64_t e = 0, nnz = X.slice_begin(X.n_rows); e < nnz; ++e) ++column_starts_[X.minor_index(e) + 1];
  for (int64_t j = 0; j < X.n_cols; ++j) column_starts_[j + 1] += column_starts_[j];
}

int64_t ArraySource::panel_end(int64_t c0, int n_threads) const {
  if (X_.layout == MatrixView::Layout::packed && c0 < X_.n_calls()) return X_.n_calls();
  if (X_.layout != MatrixView::Layout::csr) return n_cols();
  // At least a block of columns per thread, then as many as keep the panel's entries in budget.
  int64_t c1 = std::min(n_cols(), c0 + kColumnBlock * std::max(1, n_threads));
  const auto budget = std::max(kCsrPanelEntries, column_starts_[c1] - column_starts_[c0]);
  const auto end = std::upper_bound(column_starts_.begin() + c1, column_starts_.end(), column_starts_[c0] + budget);
  return std::max(c1, static_cast<int64_t>(end - column_starts_.begin()) - 1);
}

namespace {

// Copies the entries of columns [c0, c1) of a CSR matrix into a CSC panel: column by column, rows
// in increasing order (each row's entries are found by a search from c0).
template <class Index>
MatrixView csr_panel(const MatrixView& X, int64_t c0, int64_t c1, const int64_t* starts, std::vector<uint8_t>& buffer) {
  const int64_t width = c1 - c0, nnz = starts[c1] - starts[c0], item = item_size(X.type);
  const int64_t data_bytes = (nnz * item + 7) / 8 * 8;  // values first: every part stays aligned
  buffer.resize(static_cast<size_t>(data_bytes + (width + 1 + nnz) * static_cast<int64_t>(sizeof(Index))));
  uint8_t* data = buffer.data();
  auto* indptr = reinterpret_cast<Index*>(buffer.data() + data_bytes);
  Index* rows = indptr + width + 1;
  for (int64_t k = 0; k <= width; ++k) indptr[k] = static_cast<Index>(starts[c0 + k] - starts[c0]);
  std::vector<int64_t> fill(indptr, indptr + width);
  const auto* cols = static_cast<const Index*>(X.indices);
  const auto* values = static_cast<const uint8_t*>(X.data);
  for (int64_t i = 0; i < X.n_rows; ++i) {
    const Index* last = cols + X.slice_begin(i + 1);
    const Index* e = std::lower_bound(cols + X.slice_begin(i), last, static_cast<Index>(c0));
    for (; e < last && *e < c1; ++e) {
      const int64_t at = fill[*e - c0]++;
      rows[at] = static_cast<Index>(i);
      std::memcpy(data + at * item, values + (e - cols) * item, static_cast<size_t>(item));
    }
  }
  MatrixView panel = X;
  panel.layout = MatrixView::Layout::csc;
  panel.n_cols = width;
  panel.data = data;
  panel.indptr = indptr;
  panel.indices = rows;
  return panel;
}

}  // namespace

MatrixView ArraySource::read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const {
  if (X_.layout != MatrixView::Layout::csr) return X_.columns(c0, c1);
  return X_.index64 ? csr_panel<int64_t>(X_, c0, c1, column_starts_.data(), buffer)
                    : csr_panel<int32_t>(X_, c0, c1, column_starts_.data(), buffer);
}

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
  // C order: one page of each row per panel, or fewer columns when that would pass kRowPanelBytes
  // (many rows: the page cache then serves a row's page to several panels); Fortran order: a
  // block of columns per thread.
  const int64_t item = item_size(type());
  const int64_t page = 4096 / item, budget = kRowPanelBytes / (item * std::max<int64_t>(1, n_rows()));
  const int64_t width = by_rows_ ? std::max<int64_t>(kColumnBlock, std::min(page, budget))
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
