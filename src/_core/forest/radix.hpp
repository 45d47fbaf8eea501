// Stable LSD radix sort of packed 32-bit keys on 8-bit digits. The caller counts the digit
// histograms while it builds the keys, so each pass is a single scatter; passes whose digit is
// the same for every key are skipped.
#pragma once
#include <cstdint>
#include <vector>

namespace pyinterp {

constexpr int kRadixBits = 8;
constexpr uint32_t kRadixBuckets = 1u << kRadixBits;

// Sorts keys[0..m) by bits [shift, shift + 8 * n_digits) using hist[d][bucket] (counts of digit d,
// which are consumed). tmp must hold m keys. Returns whichever buffer holds the result.
inline uint32_t* radix_sort(uint32_t* keys, uint32_t* tmp, int64_t m, int shift, int n_digits, uint32_t (*hist)[kRadixBuckets]) {
  uint32_t* src = keys;
  uint32_t* dst = tmp;
  for (int d = 0; d < n_digits; ++d) {
    const int s = shift + d * kRadixBits;
    uint32_t* count = hist[d];
    const uint32_t first = (src[0] >> s) & (kRadixBuckets - 1);
    if (count[first] == static_cast<uint32_t>(m)) continue;  // one digit value: already ordered
    uint32_t sum = 0;
    for (uint32_t b = 0; b < kRadixBuckets; ++b) {
      const uint32_t c = count[b];
      count[b] = sum;
      sum += c;
    }
    for (int64_t k = 0; k < m; ++k) {
      const uint32_t key = src[k];
      dst[count[(key >> s) & (kRadixBuckets - 1)]++] = key;
    }
    std::swap(src, dst);
  }
  return src;
}

}  // namespace pyinterp
