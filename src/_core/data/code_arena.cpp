#include "code_arena.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#define PYINTERP_CODE_ARENA 1
#endif

namespace pyinterp {
namespace {

std::string gb(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

// Bytes the system could give without swapping: Linux's MemAvailable, else the physical memory.
int64_t memory_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
#if defined(PYINTERP_CODE_ARENA)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return static_cast<int64_t>(pages) * page;
#endif
  return INT64_MAX;
}

}  // namespace

#if defined(PYINTERP_CODE_ARENA)

CodeArena::CodeArena(const std::string& folder, int64_t capacity) : capacity_(capacity) {
  std::string name = folder + "/pyinterp-codes-XXXXXX";
  std::vector<char> path(name.begin(), name.end());
  path.push_back('\0');
  fd_ = mkstemp(path.data());
  if (fd_ < 0)
    throw std::runtime_error("cannot make a file for X's codes in " + folder + " (" + std::strerror(errno) +
                             "): set TMPDIR to a writable folder on a disk, or PYINTERP_CODES_MEMORY to keep them "
                             "in memory");
  unlink(path.data());
  int failed = capacity > 0 ? posix_fallocate(fd_, 0, capacity) : 0;
  if (failed == EINVAL || failed == EOPNOTSUPP) failed = ftruncate(fd_, capacity) == 0 ? 0 : errno;
  if (failed != 0) {
    close(fd_);
    throw std::runtime_error("X's codes need " + gb(capacity) + " in " + folder + " for a memory-mapped X: " +
                             std::strerror(failed) + "; set TMPDIR to a folder on a disk with room for them");
  }
  if (capacity > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(capacity), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
      close(fd_);
      throw std::runtime_error("cannot map the file of X's codes (" + gb(capacity) + "): " + std::strerror(errno));
    }
    base_ = static_cast<uint8_t*>(p);
  }
}

CodeArena::~CodeArena() {
  if (base_) munmap(base_, static_cast<size_t>(capacity_));
  if (fd_ >= 0) close(fd_);
}

#else

CodeArena::CodeArena(const std::string&, int64_t) {
  throw std::runtime_error("codes in a file are not supported on this system");
}
CodeArena::~CodeArena() = default;

#endif

uint8_t* CodeArena::allocate(int64_t bytes) {
  const int64_t rounded = (bytes + 63) / 64 * 64;
  const int64_t at = used_.fetch_add(rounded);
  if (at + rounded > capacity_) throw std::logic_error("the codes' file is smaller than their bound");
  return base_ + at;
}

std::unique_ptr<CodeArena> code_arena_for(int64_t bound) {
#if defined(PYINTERP_CODE_ARENA)
  int64_t budget = memory_available() / 2;
  if (const char* set = std::getenv("PYINTERP_CODES_MEMORY")) {
    char* end = nullptr;
    const long long v = std::strtoll(set, &end, 10);
    if (end == set || *end != '\0' || v < 0)
      throw std::invalid_argument(std::string("PYINTERP_CODES_MEMORY must be a number of bytes, not '") + set + "'");
    budget = v;
  }
  if (bound <= budget) return nullptr;
  const char* tmp = std::getenv("TMPDIR");
  return std::make_unique<CodeArena>(tmp && *tmp ? tmp : "/tmp", bound);
#else
  (void)bound;
  return nullptr;
#endif
}

}  // namespace pyinterp
