// Column encoding: every column becomes the ranks of its distinct values (0 = smallest), stored
// column-major in the narrowest unsigned type that holds them, or 2 bits a row (as a .bed holds
// calls) when a column has at most 4 codes, the missing one included: genotypes and binary columns. A missing value (NaN) gets the
// code after the largest value's, n_codes(j), so orderings by code put the missing rows last. Split search then counts or sorts
// small integers and never touches X again; thresholds are read back from X only for chosen splits.
// Packed genotype calls (a .bed) are not copied: a column is its 2-bit calls where X lies, and a
// 4-entry table per column turns a call into its code (repacked first when X's rows are a subset
// of the file's samples, so the hot loops never follow a row map).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "code_arena.hpp"
#include "column_source.hpp"

namespace pyinterp {

// A column of 2-bit calls read as codes: the code of row i is byte call(i) of table.
struct PackedColumn {
  const uint8_t* calls;
  uint32_t table;
  uint32_t operator[](int64_t i) const {
    const uint32_t call = (calls[i >> 2] >> ((i & 3) << 1)) & 3u;
    return (table >> (call << 3)) & 0xFFu;
  }
};

// A column stored sparse (a CSC column with few stored entries): the rows with an entry, in
// increasing order, and their codes; every other row has the code `zero`. It is indexed by row as
// a code pointer is. The scans, partitions and out-of-bag routes read a node's rows in increasing
// order, so a read moves a cursor forward (galloping over the entries between), and a pass over
// m rows costs O(m + entries), without a search per row; a read behind the cursor searches back.
template <class Code>
struct SparseColumn {
  const uint32_t* rows = nullptr;
  const Code* codes = nullptr;
  uint32_t n_stored = 0;
  uint32_t zero = 0;
  mutable uint32_t at = 0;  // the first entry whose row is not below the last row read

  uint32_t operator[](int64_t i) const {
    const auto row = static_cast<uint32_t>(i);
    if (at > 0 && rows[at - 1] >= row) at = static_cast<uint32_t>(std::lower_bound(rows, rows + at, row) - rows);
    if (at < n_stored && rows[at] < row) advance(row);
    return (at < n_stored && rows[at] == row) ? codes[at] : zero;
  }

 private:
  static constexpr uint32_t kNear = 8;  // entries stepped over one by one before galloping
  // Moves the cursor to the first entry whose row is not below row (rows[at] < row): a few steps
  // (a node's next row seldom passes many entries), then galloping, then a search between.
  void advance(uint32_t row) const {
    uint32_t k = at + 1;
    const uint32_t near = std::min(n_stored, at + kNear);
    while (k < near && rows[k] < row) ++k;
    if (k < near || k == n_stored) {
      at = k;
      return;
    }
    uint32_t step = kNear, hi = k;  // rows[k - 1] < row
    while (hi < n_stored && rows[hi] < row) {
      k = hi + 1;
      hi = k + step;
      step <<= 1;
    }
    hi = std::min(hi, n_stored);
    at = static_cast<uint32_t>(std::lower_bound(rows + k, rows + hi, row) - rows);
  }
};

// A sparse column's codes at a node's rows, read once each in increasing order (the split
// search's gathers): the node's entries (rows increasing, and their codes), every other row the
// zero's code. A read costs a comparison, where SparseColumn's cursor searches its entries.
template <class Code>
struct NodeEntryColumn {
  const uint32_t* rows = nullptr;
  const Code* codes = nullptr;
  uint32_t n = 0;
  uint32_t zero = 0;
  mutable uint32_t at = 0;
  uint32_t operator[](int64_t i) const { return (at < n && rows[at] == i) ? codes[at++] : zero; }
};

template <class Column>
struct is_sparse_column : std::false_type {};
template <class Code>
struct is_sparse_column<SparseColumn<Code>> : std::true_type {};

// Where row i's code lies, for prefetching, and the bytes a code has (radix digits).
template <class Code>
const void* code_address(const Code* col, int64_t i) { return col + i; }
inline const void* code_address(const PackedColumn& col, int64_t i) { return col.calls + (i >> 2); }
template <class Code>
const void* code_address(const SparseColumn<Code>& col, int64_t) { return col.rows + col.at; }
template <class Code>
const void* code_address(const NodeEntryColumn<Code>& col, int64_t) { return col.rows + col.at; }
template <class Code>
constexpr int code_bytes(const Code*) { return sizeof(Code); }
template <class Code>
constexpr int code_bytes(const NodeEntryColumn<Code>&) { return sizeof(Code); }
constexpr int code_bytes(const PackedColumn&) { return 1; }
template <class Code>
constexpr int code_bytes(const SparseColumn<Code>&) { return sizeof(Code); }

// ColumnCodes::width of a sparse column: kSparse plus its codes' bytes.
constexpr uint8_t kSparse = 16;

class ColumnCodes {
 public:
  // Reads the source's panels in turn, each encoded by n_threads threads.
  ColumnCodes(const ColumnSource& source, int n_threads);

  int64_t n_rows() const { return n_rows_; }
  int64_t n_cols() const { return static_cast<int64_t>(n_codes_.size()); }
  // Bytes per code of column j: 1, 2 or 4; 0 for 2-bit codes (packed calls, or at most 4 codes);
  // kSparse plus the bytes of a code for a column stored sparse.
  int width(int64_t j) const { return width_[j]; }
  // Bytes the codes hold beyond X (packed calls read in place hold none), and of those the bytes
  // in a file (a memory-mapped X larger than memory: code_arena.hpp).
  int64_t nbytes() const;
  int64_t file_bytes() const;
  // Whether column j is stored sparse (its entries alone), and how many entries it stores.
  bool stored_sparse(int64_t j) const { return width_[j] >= kSparse; }
  uint32_t n_stored(int64_t j) const { return n_stored_[j]; }
  // Number of distinct values (NaN excluded) in column j.
  uint32_t n_codes(int64_t j) const { return n_codes_[j]; }
  // Whether column j has missing values; their code is n_codes(j).
  bool has_missing(int64_t j) const { return has_missing_[j] != 0; }
  // The code of column j's missing values, or a value no code takes when it has none.
  uint32_t missing_code(int64_t j) const { return has_missing(j) ? n_codes(j) : UINT32_MAX; }
  // The number of codes of the widest column, missing code included (histogram size).
  uint32_t max_n_codes() const { return max_n_codes_; }
  // Code of row i in column j (for occasional lookups; hot loops use visit_column).
  uint32_t code(int64_t j, int64_t i) const {
    switch (width_[j]) {
      case kSparse + 1: return sparse<uint8_t>(j)[i];
      case kSparse + 2: return sparse<uint16_t>(j)[i];
      case kSparse + 4: return sparse<uint32_t>(j)[i];
      case 0: return packed(j)[i];
      case 1: return column<uint8_t>(j)[i];
      case 2: return column<uint16_t>(j)[i];
      default: return column<uint32_t>(j)[i];
    }
  }
  // Hints the cache to load the codes of rows[0..count) in column j.
  void prefetch(int64_t j, const uint32_t* rows, int64_t count) const {
    const uint8_t* base = columns_[j];
    if (width_[j] >= kSparse) return;  // its entries are few, and read in order
    if (width_[j] == 0) {
      for (int64_t k = 0; k < count; ++k) __builtin_prefetch(base + (rows[k] >> 2));
      return;
    }
    const int shift = width_[j] == 1 ? 0 : (width_[j] == 2 ? 1 : 2);
    for (int64_t k = 0; k < count; ++k) __builtin_prefetch(base + (static_cast<size_t>(rows[k]) << shift));
  }
  // A CSR X's entries' codes in X's order (those of the columns stored sparse; 0 for the others),
  // csr_code_width() bytes each (0: none are kept): the split search lists a node's entries from its
  // rows with their codes, where looking each up in its column would cost a search. n_csr_codes()
  // is the count, X's entries when the codes were built from X.
  int csr_code_width() const { return csr_code_width_; }
  int64_t n_csr_codes() const { return csr_code_width_ ? static_cast<int64_t>(csr_codes_.size()) / csr_code_width_ : 0; }
  template <class F>
  decltype(auto) visit_csr_codes(F&& f) const {
    switch (csr_code_width_) {
      case 1: return f(csr_codes_.data());
      case 2: return f(reinterpret_cast<const uint16_t*>(csr_codes_.data()));
      default: return f(reinterpret_cast<const uint32_t*>(csr_codes_.data()));
    }
  }
  template <class Code>
  const Code* column(int64_t j) const {
    return reinterpret_cast<const Code*>(columns_[j]);
  }
  PackedColumn packed(int64_t j) const { return {columns_[j], tables_[j]}; }
  template <class Code>
  SparseColumn<Code> sparse(int64_t j) const {
    const auto* rows = reinterpret_cast<const uint32_t*>(columns_[j]);
    return {rows, reinterpret_cast<const Code*>(rows + n_stored_[j]), n_stored_[j], zero_code_[j]};
  }
  // f(column j): a const Code* at the column's width, a PackedColumn or a SparseColumn; all index
  // codes by row.
  template <class F>
  decltype(auto) visit_column(int64_t j, F&& f) const {
    switch (width_[j]) {
      case 0: return f(packed(j));
      case 1: return f(column<uint8_t>(j));
      case 2: return f(column<uint16_t>(j));
      case 4: return f(column<uint32_t>(j));
      case kSparse + 1: return f(sparse<uint8_t>(j));
      case kSparse + 2: return f(sparse<uint16_t>(j));
      default: return f(sparse<uint32_t>(j));
    }
  }

 private:
  int64_t n_rows_;
  std::vector<const uint8_t*> columns_;      // column j's codes, in a buffer per column (or the calls)
  std::vector<std::vector<uint8_t>> owned_;
  // The codes (and repacked calls) of a memory-mapped X larger than memory, in a file instead of
  // owned_ (code_arena.hpp); their pointers are in columns_.
  std::unique_ptr<CodeArena> arena_;
  // Packed calls of a subset of the file's samples, repacked in one buffer (freed as one piece, so
  // its pages go back to the system when the fit ends), (n_rows + 3) / 4 bytes apart: in the
  // arena, or owned here.
  uint8_t* repacked_ = nullptr;
  std::unique_ptr<uint8_t[]> own_repacked_;
  // Column j's buffer of `bytes` (in the arena, or owned_[j]), its pointer in columns_[j].
  uint8_t* column_bytes(int64_t j, int64_t bytes);
  std::vector<uint8_t> width_;
  std::vector<uint32_t> tables_;             // 2-bit columns' call -> code tables
  // Sparse columns (from CSC panels): their entries (rows, then codes, in owned_) and the other rows' code.
  std::vector<uint32_t> n_stored_, zero_code_;
  std::vector<uint32_t> n_codes_;
  std::vector<uint8_t> has_missing_;
  uint32_t max_n_codes_ = 0;
  std::vector<uint8_t> csr_codes_;
  int csr_code_width_ = 0;
  void code_csr_entries(const MatrixView& X, int n_threads);
};

// The packed calls of source (its rows a subset of the file's samples) repacked with those rows
// alone, into out: (n_rows + 3) / 4 bytes a variant, the variants (not any values beside them) in
// order. So a subset read many times is read in place, as a file of its own would be.
void repack_calls(const ColumnSource& source, uint8_t* out, int n_threads);

}  // namespace pyinterp
