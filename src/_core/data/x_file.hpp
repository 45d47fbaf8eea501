// A memory-mapped X read from its file with pread rather than through the map: a map's pages stay
// resident once touched, and the kernel maps large folios around each fault, so even scattered
// reads through the map would soon make the whole matrix resident. X is dense, or packed calls
// (a .bed's) whose tail columns, if any, are in memory.
#pragma once
#include <cstdint>
#include <string>

#include "matrix.hpp"

namespace pyinterp {

// Where a memory-mapped X lies in its file: the byte offset of X[0, 0]; X's strides apply.
struct MappedFile {
  std::string path;
  int64_t offset = 0;
};

// Thread-safe.
class XFile {
 public:
  XFile(const MappedFile& where, const MatrixView& X);
  ~XFile();
  XFile(const XFile&) = delete;
  XFile& operator=(const XFile&) = delete;

  const MatrixView& X() const { return X_; }
  // Packed: the bytes of a column that hold calls of X's rows (a column's last ones may lie at
  // the end of the file, short of col_stride).
  int64_t packed_bytes() const { return packed_bytes_; }
  // size bytes starting `from` bytes after X[0, 0].
  void read(void* out, int64_t size, int64_t from) const;
  double at(int64_t i, int64_t j) const;

 private:
  MatrixView X_;
  int64_t packed_bytes_ = 0;
  int fd_ = -1;
  MappedFile where_;
};

}  // namespace pyinterp
