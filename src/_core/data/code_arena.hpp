// Columns' codes in a temporary file rather than on the heap, for an X memory-mapped from a file
// larger than this machine's memory: the file is mapped shared, so the kernel writes its pages out
// and drops them under memory pressure as it does X's own, where heap codes (1 to 4 bytes a value:
// as large as a float32 X once a column has more than 65,536 distinct values) would stay resident
// or be swapped. The file is unlinked as soon as it is made (nothing is left behind) and its disk
// is reserved up front, so a full disk is an error here, not a fault later.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace pyinterp {

class CodeArena {
 public:
  // capacity bytes in a new file in `folder`.
  CodeArena(const std::string& folder, int64_t capacity);
  ~CodeArena();
  CodeArena(const CodeArena&) = delete;
  CodeArena& operator=(const CodeArena&) = delete;

  // bytes of the file's (64-byte aligned), never handed out twice. Thread-safe.
  uint8_t* allocate(int64_t bytes);
  // Bytes handed out.
  int64_t used() const { return used_.load(); }

 private:
  int fd_ = -1;
  uint8_t* base_ = nullptr;
  int64_t capacity_ = 0;
  std::atomic<int64_t> used_{0};
};

// The arena for codes of at most `bound` bytes of a memory-mapped X, or nullptr to keep them on the
// heap: an arena in $TMPDIR (else /tmp) when bound exceeds the environment's PYINTERP_CODES_MEMORY
// (bytes), or by default half the memory the system has available. Results do not depend on it.
std::unique_ptr<CodeArena> code_arena_for(int64_t bound);

}  // namespace pyinterp
