// Stable LSD radix sort (8-bit digits, or as wide as the caller counts). Callers count the digit
// histograms while they build the items (one pass), so each sorting pass is a single scatter;
// passes whose digit is the same for every item are skipped.
#pragma once
#include <cstdint>
#include <utility>

namespace pyinterp {

constexpr int kRadixBits = 8;

// Bits needed to write x (0 for 0).
inline int bit_width(uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }

constexpr uint32_t kRadixBuckets = 1u << kRadixBits;

// Sorts items a[0..n) by digits 0..n_digits-1 (digit(item, d) in [0, buckets), d = 0 least
// significant), using and consuming hist[d * buckets + v] = count of items whose digit d is v.
// b must hold n items. Returns whichever of a and b holds the result.
template <class T, class Digit>
T* radix_sort(T* a, T* b, int64_t n, int n_digits, uint32_t buckets, uint32_t* hist, Digit digit) {
  for (int d = 0; d < n_digits; ++d) {
    uint32_t* count = hist + static_cast<int64_t>(d) * buckets;
    if (count[digit(a[0], d)] == static_cast<uint32_t>(n)) continue;  // one digit value: already ordered
    uint32_t sum = 0;
    for (uint32_t v = 0; v < buckets; ++v) {
      const uint32_t c = count[v];
      count[v] = sum;
      sum += c;
    }
    for (int64_t k = 0; k < n; ++k) b[count[digit(a[k], d)]++] = a[k];
    std::swap(a, b);
  }
  return a;
}

// The same on 8-bit digits, hist[d][v].
template <class T, class Digit>
T* radix_sort(T* a, T* b, int64_t n, int n_digits, uint32_t (*hist)[kRadixBuckets], Digit digit) {
  return radix_sort(a, b, n, n_digits, kRadixBuckets, &hist[0][0], digit);
}

}  // namespace pyinterp
