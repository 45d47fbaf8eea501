// A writer that merges identical rows of a WeightedCsr as they arrive: the distinct signed paths
// (DWP) and the merged transaction databases (frequent itemsets).
#pragma once
#include <cstdint>
#include <vector>

#include "../common/csr.hpp"

namespace pyinterp {

// Row hash: one multiply per item, avalanched once at the end.
inline uint64_t row_hash(const int32_t* a, int64_t len) {
  uint64_t h = static_cast<uint64_t>(len);
  for (int64_t j = 0; j < len; ++j) h = (h ^ static_cast<uint32_t>(a[j])) * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 32);
}

// Appends rows to a WeightedCsr, merging each into an identical earlier row (weights summed, in
// arrival order), so no unmerged copy is ever stored.
class MergingWriter {
 public:
  // Empties rows and prepares for at most max_rows rows of at most max_items items in total.
  void open(WeightedCsr& rows, int64_t max_rows, int64_t max_items) {
    rows_ = &rows;
    rows.clear_rows();
    rows.items.reserve(static_cast<size_t>(max_items));
    rows.indptr.reserve(static_cast<size_t>(max_rows) + 1);
    rows.weight.reserve(static_cast<size_t>(max_rows));
    size_t cap = 4;
    while (cap < 2 * static_cast<size_t>(max_rows)) cap <<= 1;
    slot_.assign(cap, -1);
  }

  size_t bytes() const { return slot_.capacity() * sizeof(int64_t); }

  void add(const int32_t* a, int64_t len, double w) { add(a, len, w, row_hash(a, len)); }

  // The first slot row hash h probes: touched ahead of add(..., h) it is in cache by then (a
  // table of millions of rows misses on nearly every first probe).
  void prefetch(uint64_t h) const { __builtin_prefetch(slot_.data() + (h & (slot_.size() - 1))); }

  // add() with the row's hash already computed (row_hash(a, len)).
  void add(const int32_t* a, int64_t len, double w, uint64_t h) {
    WeightedCsr& rows = *rows_;
    const size_t mask = slot_.size() - 1;
    for (size_t s = h & mask;; s = (s + 1) & mask) {
      const int64_t u = slot_[s];
      if (u < 0) {
        slot_[s] = rows.size();
        rows.push(a, a + len, w);
        return;
      }
      if (rows.indptr[u + 1] - rows.indptr[u] == len && same(a, rows.items.data() + rows.indptr[u], len)) {
        rows.weight[u] += w;
        return;
      }
    }
  }

 private:
  static bool same(const int32_t* a, const int32_t* b, int64_t len) {
    for (int64_t j = 0; j < len; ++j)
      if (a[j] != b[j]) return false;
    return true;
  }

  WeightedCsr* rows_ = nullptr;
  HugeVector<int64_t> slot_;
};

}  // namespace pyinterp
