#include "x_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace pyinterp {

XFile::XFile(const MappedFile& where, const MatrixView& X) : X_(X), where_(where) {
  if (X.layout == MatrixView::Layout::packed) {
    int64_t last = X.n_rows - 1;  // the largest file sample read
    if (X.indices) last = *std::max_element(static_cast<const int64_t*>(X.indices), static_cast<const int64_t*>(X.indices) + X.n_rows);
    packed_bytes_ = (last >> 2) + 1;
  } else if (X.layout != MatrixView::Layout::dense) {
    throw std::invalid_argument("only a dense or packed X is read from its mapped file");
  }
  fd_ = ::open(where.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("cannot open X's file " + where.path + ": " + std::strerror(errno));
}

XFile::~XFile() { ::close(fd_); }

void XFile::read(void* out, int64_t size, int64_t from) const {
  auto* bytes = static_cast<uint8_t*>(out);
  while (size > 0) {
    const ssize_t got = ::pread(fd_, bytes, static_cast<size_t>(size), static_cast<off_t>(where_.offset + from));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw std::runtime_error("reading X from " + where_.path + ": " + (got < 0 ? std::strerror(errno) : "file too short"));
    bytes += got;
    size -= got;
    from += got;
  }
}

double XFile::at(int64_t i, int64_t j) const {
  if (X_.layout == MatrixView::Layout::packed) {
    if (j >= X_.n_calls()) return X_.at(i, j);  // a value beside the calls, in memory
    const int64_t r = X_.file_sample(i);
    uint8_t byte;
    read(&byte, 1, j * X_.col_stride + (r >> 2));
    return call_value(MatrixView::call_in_byte(byte, r), X_.count_a2);
  }
  alignas(8) uint8_t value[8];
  const int64_t item = item_size(X_.type);
  read(value, item, (i * X_.row_stride + j * X_.col_stride) * item);
  return value_at(X_.type, value, 0);
}

}  // namespace pyinterp
