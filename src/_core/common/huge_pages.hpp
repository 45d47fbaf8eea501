// Large buffers on 2 MiB pages where the kernel offers them (transparent huge pages in "madvise"
// mode, Linux's default; numpy advises its large arrays the same way). A fresh 4 KiB page costs a
// fault when first written, 3.5-36 us on these VMs: the 30 MB that a frequent-itemsets call on
// madelon's forest paths allocates cost about 8,000 faults a call, a fifth of its time. Blocks of
// at least kHugeFrom bytes are therefore 2 MiB-aligned, rounded up to whole 2 MiB pages (a page is
// only backed once written) and advised; smaller ones, and other systems, use operator new.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pyinterp {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeFrom = size_t{1} << 20;

inline void* huge_allocate(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugeFrom) {
    const size_t rounded = (bytes + kHugePage - 1) & ~(kHugePage - 1);
    void* p = nullptr;
    if (posix_memalign(&p, kHugePage, rounded) != 0) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // advice: where refused, the block is used on small pages
    return p;
  }
#endif
  return ::operator new(bytes);
}

inline void huge_free(void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugeFrom) return std::free(p);
#endif
  ::operator delete(p);
}

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(huge_allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { huge_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

// A vector whose large allocations are on huge pages.
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace pyinterp
