// Sorting a few distinct keys by rank.
#pragma once
#include <cstdint>

namespace pyinterp {

// Sorts m distinct keys by counting, for each, the keys below it: m^2 comparisons without
// branches, which the compiler vectorises. For a few keys this beats a comparison sort, whose
// branches mostly mispredict. sorted must not overlap unsorted.
template <class T>
void rank_sort(const T* unsorted, int64_t m, T* sorted) {
  for (int64_t i = 0; i < m; ++i) {
    const T key = unsorted[i];
    uint32_t rank = 0;
    for (int64_t j = 0; j < m; ++j) rank += unsorted[j] < key;
    sorted[rank] = key;
  }
}

}  // namespace pyinterp
