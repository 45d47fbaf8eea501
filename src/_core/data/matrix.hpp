// Read-only views of caller-owned arrays: the core never copies or writes them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace pyinterp {

// The element types X may have; every value is read as a double (exactly: none has more digits).
enum class ValueType : uint8_t { float64, float32, int8, uint8, int16, boolean };

// Bytes of one value of the type.
inline int64_t item_size(ValueType type) {
  switch (type) {
    case ValueType::float64: return 8;
    case ValueType::float32: return 4;
    case ValueType::int16: return 2;
    default: return 1;
  }
}

// Element k of an array of T, loaded through memcpy (one plain load): X need not be aligned, as a
// Dask worker's copy of it, deserialised into a shared buffer at any offset, is not.
template <class T>
inline T load(const void* data, int64_t k) {
  T v;
  std::memcpy(&v, static_cast<const char*>(data) + k * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// Element k of an array of the type, as a double.
inline double value_at(ValueType type, const void* data, int64_t k) {
  switch (type) {
    case ValueType::float64: return load<double>(data, k);
    case ValueType::float32: return static_cast<double>(load<float>(data, k));
    case ValueType::int8: return static_cast<const int8_t*>(data)[k];
    case ValueType::int16: return load<int16_t>(data, k);
    default: return static_cast<const uint8_t*>(data)[k];  // uint8, boolean
  }
}

// PLINK 1 .bed genotype calls, 2 bits each: homozygous for allele 1, missing, heterozygous,
// homozygous for allele 2.
constexpr uint32_t kMissingCall = 1;

// A call as the count of allele 1 (or with count_a2 of allele 2), NaN when missing.
inline double call_value(uint32_t call, bool count_a2) {
  static constexpr double kAllele1[4] = {2.0, NAN, 1.0, 0.0}, kAllele2[4] = {0.0, NAN, 1.0, 2.0};
  return (count_a2 ? kAllele2 : kAllele1)[call];
}

// A 2-d matrix, dense with arbitrary (element) strides (C, Fortran or sliced), compressed sparse
// (CSC: the major axis is columns; CSR: rows) with sorted indices and no duplicates, whose absent
// entries are zeros, or packed genotype calls as a PLINK 1 .bed holds them. at(i, j) is the one way
// the core reads a value.
struct MatrixView {
  enum class Layout : uint8_t { dense, csc, csr, packed };

  const void* data = nullptr;  // dense values, or the stored values of a sparse matrix
  ValueType type = ValueType::float64;
  Layout layout = Layout::dense;
  int64_t n_rows = 0;
  int64_t n_cols = 0;
  int64_t row_stride = 0;  // dense only, in elements
  int64_t col_stride = 0;  // dense only, in elements
  const void* indptr = nullptr;  // sparse only: major slice k is entries [indptr[k], indptr[k + 1])
  const void* indices = nullptr;  // sparse only: the minor index of each entry
  bool index64 = false;           // sparse indptr and indices are int64 (else int32)
  // Packed (type uint8): column j's calls start at data + j * col_stride bytes, four samples a byte
  // from the low bits; row i is the file's sample indices[i] (int64), or i when indices is null.
  bool count_a2 = false;  // packed: a call reads as its count of allele 2 (else allele 1)
  // Packed: the last tail_cols columns are not calls but float64 values beside them (covariates),
  // column-major by the view's rows: row i of column n_calls() + t is tail[t * n_rows + i].
  const double* tail = nullptr;
  int64_t tail_cols = 0;

  bool sparse() const { return layout == Layout::csc || layout == Layout::csr; }
  // Packed: the columns that are calls (the first ones).
  int64_t n_calls() const { return n_cols - tail_cols; }

  // The k-th element of data.
  double value(int64_t k) const { return value_at(type, data, k); }

  // Sparse only: entries [begin, end) of major slice k, and the minor index of entry e.
  int64_t slice_begin(int64_t k) const {
    return index64 ? static_cast<const int64_t*>(indptr)[k] : static_cast<const int32_t*>(indptr)[k];
  }
  int64_t minor_index(int64_t e) const {
    return index64 ? static_cast<const int64_t*>(indices)[e] : static_cast<const int32_t*>(indices)[e];
  }

  // Packed only: the 2-bit call of row i in column j.
  uint32_t call(int64_t i, int64_t j) const {
    const int64_t r = file_sample(i);
    return call_in_byte(static_cast<const uint8_t*>(data)[j * col_stride + (r >> 2)], r);
  }
  // Packed only: the file's sample that row i is.
  int64_t file_sample(int64_t i) const { return indices ? static_cast<const int64_t*>(indices)[i] : i; }
  // Packed only: file sample r's call in the byte of its column that holds it.
  static uint32_t call_in_byte(uint8_t byte, int64_t r) { return (byte >> ((r & 3) << 1)) & 3u; }

  // Columns [c0, c1) of a dense, packed or CSC matrix as a view of the same memory (column 0 is c0).
  // Packed, they must be all calls or all tail columns (a dense view).
  MatrixView columns(int64_t c0, int64_t c1) const {
    MatrixView v = *this;
    v.n_cols = c1 - c0;
    if (layout == Layout::packed && c0 >= n_calls()) {
      v = MatrixView{};
      v.data = tail + (c0 - n_calls()) * n_rows;
      v.n_rows = n_rows;
      v.n_cols = c1 - c0;
      v.row_stride = 1;
      v.col_stride = n_rows;
      return v;
    }
    if (layout == Layout::packed) {
      v.tail = nullptr;
      v.tail_cols = 0;
    }
    if (layout == Layout::csc) {  // indptr holds absolute entry offsets: values and indices stay as they are
      v.indptr = static_cast<const uint8_t*>(indptr) + c0 * (index64 ? 8 : 4);
    } else {
      v.data = static_cast<const uint8_t*>(data) + c0 * col_stride * item_size(type);
    }
    return v;
  }

  double at(int64_t i, int64_t j) const {
    if (layout == Layout::dense) return value(i * row_stride + j * col_stride);
    if (layout == Layout::packed)
      return j < n_calls() ? call_value(call(i, j), count_a2) : tail[(j - n_calls()) * n_rows + i];
    const int64_t major = layout == Layout::csc ? j : i, minor = layout == Layout::csc ? i : j;
    const int64_t e = index64 ? find(static_cast<const int64_t*>(indices), major, minor)
                              : find(static_cast<const int32_t*>(indices), major, minor);
    return e < 0 ? 0.0 : value(e);
  }

 private:
  template <class Index>
  int64_t find(const Index* idx, int64_t major, int64_t minor) const {
    const Index* first = idx + slice_begin(major);
    const Index* last = idx + slice_begin(major + 1);
    const Index* it = std::lower_bound(first, last, static_cast<Index>(minor));
    return (it != last && *it == minor) ? it - idx : -1;
  }
};

}  // namespace pyinterp
