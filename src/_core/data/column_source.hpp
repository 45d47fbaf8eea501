// Where the columns of X come from. The encoder (ColumnCodes) reads a source in panels of
// consecutive columns, each a read-only dense, CSC or packed view (a packed panel is read in
// place: the codes point into it, so its memory outlives them); the split search reads single values
// back for the thresholds of chosen splits. Everything that fits a forest or a stump sees X only
// through this interface, so a new input format that only fitting reads (an HDF5 or Zarr panel)
// is one new source; one that prediction reads too is a MatrixView layout (packed genotypes).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "matrix.hpp"
#include "x_file.hpp"

namespace pyinterp {

// Columns the encoder ranks in one task; sources size their panels in multiples of it.
constexpr int64_t kColumnBlock = 32;

class ColumnSource {
 public:
  virtual ~ColumnSource() = default;

  int64_t n_rows() const { return n_rows_; }
  int64_t n_cols() const { return n_cols_; }
  // The element type of every panel, and whether panels are CSC or packed genotype calls (with
  // maybe a dense float64 panel of the values beside them).
  ValueType type() const { return type_; }
  bool sparse() const { return sparse_; }
  bool packed() const { return packed_; }

  // The end of the panel that starts at column c0 when the encoder runs n_threads threads: n_cols()
  // when X is in memory, except that packed calls and the values beside them are apart.
  virtual int64_t panel_end(int64_t c0, int n_threads) const = 0;
  // Columns [c0, c1) as a view (its column 0 is column c0), valid while the source and buffer
  // live and buffer is not reused; buffer is the caller's scratch the source may read them into.
  virtual MatrixView read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const = 0;
  // Row i's value in column j. Thread-safe.
  virtual double value(int64_t i, int64_t j) const = 0;
  // X as CSR in memory, whose rows list the columns they have entries in (the split search
  // gathers a small node's sparse columns from them), or nullptr.
  virtual const MatrixView* csr_rows() const { return nullptr; }
  // Whether X is memory-mapped from a file (its codes may then go to a file too: code_arena.hpp).
  virtual bool mapped() const { return false; }

 protected:
  ColumnSource(int64_t n_rows, int64_t n_cols, ValueType type, MatrixView::Layout layout)
      : n_rows_(n_rows),
        n_cols_(n_cols),
        type_(type),
        sparse_(layout == MatrixView::Layout::csc || layout == MatrixView::Layout::csr),
        packed_(layout == MatrixView::Layout::packed) {}

 private:
  int64_t n_rows_, n_cols_;
  ValueType type_;
  bool sparse_, packed_;
};

// X in memory: a dense array of any supported type and strides, CSC, CSR, or packed genotype
// calls (a memory-mapped .bed; values beside them are a second panel). One panel of every column,
// read in place; a CSR X in panels of about kCsrPanelEntries entries, each copied out as CSC (so
// a fit holds no column-major copy of X, and keeps the rows for the search).
class ArraySource final : public ColumnSource {
 public:
  explicit ArraySource(const MatrixView& X);
  int64_t panel_end(int64_t c0, int n_threads) const override;
  MatrixView read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const override;
  double value(int64_t i, int64_t j) const override { return X_.at(i, j); }
  const MatrixView* csr_rows() const override { return X_.layout == MatrixView::Layout::csr ? &X_ : nullptr; }

 private:
  static constexpr int64_t kCsrPanelEntries = int64_t{1} << 22;
  MatrixView X_;
  std::vector<int64_t> column_starts_;  // CSR: entries of columns [0, j) at j
};

// X memory-mapped from a file. Dense with its rows (C order, maybe sliced) or columns (Fortran
// order) contiguous, panels are read from the file with pread, so peak memory is the codes plus a
// panel rather than the matrix; otherwise X is read through the map in one panel. Packed calls of
// a subset of the file's samples (which the encoder repacks) are read a panel of variants at a
// time with pread too, so the file's pages never become the process's. Values are read with pread
// (see XFile).
class MappedSource final : public ColumnSource {
 public:
  MappedSource(const MatrixView& X, const MappedFile& where);
  int64_t panel_end(int64_t c0, int n_threads) const override;
  MatrixView read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const override;
  double value(int64_t i, int64_t j) const override { return file_.at(i, j); }
  bool mapped() const override { return true; }

 private:
  XFile file_;
  // The most a C-order panel holds (but kColumnBlock columns): 64 MiB.
  static constexpr int64_t kRowPanelBytes = int64_t{64} << 20;
  bool by_rows_ = false;   // rows are contiguous: a panel is a slice of every row
  bool by_panel_ = false;  // rows or columns are contiguous: panels are read from the file
};

// The source of X: MappedSource when X is memory-mapped from `file` (packed calls: only for a subset
// of the file's samples; all of them are read in place), else ArraySource.
std::unique_ptr<ColumnSource> column_source(const MatrixView& X, const MappedFile* file = nullptr);

}  // namespace pyinterp
