#include "encoding.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "../common/parallel.hpp"
#include "radix.hpp"

namespace pyinterp {
namespace {

// Columns read together, so a C-ordered X is read row by row rather than one strided column.
constexpr int64_t kBlock = 32;

template <class Code>
void write_codes(std::vector<uint8_t>& out, const std::vector<uint32_t>& ranks) {
  out.resize(ranks.size() * sizeof(Code));
  Code* codes = reinterpret_cast<Code*>(out.data());
  for (size_t i = 0; i < ranks.size(); ++i) codes[i] = static_cast<Code>(ranks[i]);
}

// Unsigned integers that sort like the floats they come from (-0.0 and 0.0 map to the same key).
inline uint64_t order_key(double v) {
  if (v == 0.0) v = 0.0;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits & 0x8000000000000000ULL) ? ~bits : bits | 0x8000000000000000ULL;
}
inline uint32_t order_key(float v) {
  if (v == 0.0f) v = 0.0f;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

struct EncodeScratch {
  std::vector<double> block;  // kBlock columns x n rows
  std::vector<uint64_t> a, b;  // radix sort buffers
  std::vector<uint64_t> keys;  // order keys by row
  std::vector<uint32_t> ranks;
};

// Columns j0..j1 of X, as doubles, into block (column after column).
template <class T>
void copy_block(const MatrixView& X, int64_t j0, int64_t j1, double* block) {
  const T* data = static_cast<const T*>(X.data);
  const int64_t n = X.n_rows, width = j1 - j0;
  for (int64_t i = 0; i < n; ++i) {
    const T* row = data + i * X.row_stride + j0 * X.col_stride;
    for (int64_t k = 0; k < width; ++k) block[k * n + i] = static_cast<double>(row[k * X.col_stride]);
  }
}

// Sort words hold a 32-bit key half above a row index; their sorts run over the key half's digits.
constexpr uint64_t kRowMask = 0xFFFFFFFFULL;
constexpr int kKeyDigits = 4;
inline uint32_t key_digit(uint64_t word, int d) {
  return static_cast<uint32_t>(word >> (32 + d * kRadixBits)) & (kRadixBuckets - 1);
}
// Runs up to this long are ordered by comparison sort, longer ones by radix sort.
constexpr int64_t kShortRun = 64;

// Orders a run of sorted words (top key half above the row) whose top key halves are equal by
// the low halves of their rows' full keys; spare is scratch for len words.
void order_run(uint64_t* run, uint64_t* spare, int64_t len, const uint64_t* keys) {
  if (len <= kShortRun) {
    std::sort(run, run + len, [keys](uint64_t x, uint64_t y) { return keys[x & kRowMask] < keys[y & kRowMask]; });
    return;
  }
  uint32_t hist[kKeyDigits][kRadixBuckets] = {};
  for (int64_t i = 0; i < len; ++i) {
    const uint64_t row = run[i] & kRowMask;
    spare[i] = (keys[row] << 32) | row;
    for (int d = 0; d < kKeyDigits; ++d) ++hist[d][key_digit(spare[i], d)];
  }
  const uint64_t* out = radix_sort(spare, run, len, kKeyDigits, hist, key_digit);
  if (out != run) std::copy(out, out + len, run);
}

// Ranks of column values (0 = smallest distinct value), NaN ranked after every value.
// Rows are sorted as single 64-bit words, the top 32 bits of the value's order key above the row
// index, by LSD radix sort over those 4 key digits (half the data of sorting (key, row) pairs, and
// few passes). Float32 keys fit whole; float64 values equal in their top 32 key bits are then
// ordered by full keys. Such values differ by less than 2^-20 relatively, so these runs are
// short unless a column crowds many distinct values into a narrow range.
struct Ranked {
  uint32_t n_distinct = 0;  // distinct ranks, the NaN rank included
  bool missing = false;     // some value is NaN
  bool infinite = false;    // some value is infinite
};
// Above every finite or infinite value's order key (whose top bits are at most 0xFFF0...).
constexpr uint64_t kMissingKey = ~uint64_t{0};

Ranked rank_column(const double* values, int64_t n, bool is_float32, EncodeScratch& s) {
  uint32_t hist[kKeyDigits][kRadixBuckets] = {};
  uint64_t* words = s.a.data();
  uint64_t* keys = s.keys.data();
  Ranked r;
  for (int64_t i = 0; i < n; ++i) {
    const double v = values[i];
    uint64_t key;
    if (std::isnan(v)) {
      r.missing = true;
      key = kMissingKey;
    } else {
      r.infinite |= std::isinf(v);
      key = is_float32 ? uint64_t{order_key(static_cast<float>(v))} << 32 : order_key(v);
    }
    keys[i] = key;
    words[i] = (key & ~kRowMask) | static_cast<uint64_t>(i);
    for (int d = 0; d < kKeyDigits; ++d) ++hist[d][key_digit(words[i], d)];
  }
  if (r.infinite) return r;
  uint64_t* sorted = radix_sort(words, s.b.data(), n, kKeyDigits, hist, key_digit);

  uint64_t* spare = sorted == s.a.data() ? s.b.data() : s.a.data();
  uint32_t rank = 0;
  for (int64_t k = 0; k < n;) {
    int64_t end = k + 1;
    while (end < n && (sorted[end] >> 32) == (sorted[k] >> 32)) ++end;
    if (end - k > 1) {
      bool one_value = true;
      for (int64_t i = k + 1; i < end && one_value; ++i) one_value = keys[sorted[i] & kRowMask] == keys[sorted[k] & kRowMask];
      if (!one_value) order_run(sorted + k, spare + k, end - k, keys);
    }
    // A new run's top key bits, hence its values, differ from the last run's; inside it, keys decide.
    if (k > 0) ++rank;
    s.ranks[sorted[k] & kRowMask] = rank;
    for (int64_t i = k + 1; i < end; ++i) {
      if (keys[sorted[i] & kRowMask] != keys[sorted[i - 1] & kRowMask]) ++rank;
      s.ranks[sorted[i] & kRowMask] = rank;
    }
    k = end;
  }
  r.n_distinct = rank + 1;
  return r;
}

}  // namespace

ColumnCodes::ColumnCodes(const MatrixView& X, int n_threads)
    : n_rows_(X.n_rows), columns_(X.n_cols), width_(X.n_cols), n_codes_(X.n_cols), has_missing_(X.n_cols) {
  if (X.n_rows <= 0 || X.n_cols <= 0) throw std::invalid_argument("X must have at least one row and one column");
  if (X.n_rows > static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
    throw std::invalid_argument("X has more than 2^32 - 1 rows, the engine's limit");

  const int64_t n = X.n_rows;
  const int64_t n_blocks = (X.n_cols + kBlock - 1) / kBlock;
  parallel_for(
      n_blocks, n_threads,
      [&](int) {
        EncodeScratch s;
        s.block.resize(kBlock * n);
        s.a.resize(n);
        s.b.resize(n);
        s.keys.resize(n);
        s.ranks.resize(n);
        return s;
      },
      [&](int64_t b, int, EncodeScratch& s) {
        const int64_t j0 = b * kBlock, j1 = std::min(X.n_cols, j0 + kBlock);
        if (X.is_float32) {
          copy_block<float>(X, j0, j1, s.block.data());
        } else {
          copy_block<double>(X, j0, j1, s.block.data());
        }
        for (int64_t j = j0; j < j1; ++j) {
          const double* values = s.block.data() + (j - j0) * n;
          const Ranked ranked = rank_column(values, n, X.is_float32, s);
          if (ranked.infinite)
            throw std::invalid_argument("X contains infinity (column " + std::to_string(j) + ")");
          const uint32_t n_distinct = ranked.n_distinct;
          n_codes_[j] = n_distinct - ranked.missing;
          has_missing_[j] = ranked.missing;
          if (n_distinct <= 256) {
            width_[j] = 1;
            write_codes<uint8_t>(columns_[j], s.ranks);
          } else if (n_distinct <= 65536) {
            width_[j] = 2;
            write_codes<uint16_t>(columns_[j], s.ranks);
          } else {
            width_[j] = 4;
            write_codes<uint32_t>(columns_[j], s.ranks);
          }
        }
      });
  for (int64_t j = 0; j < X.n_cols; ++j) max_n_codes_ = std::max(max_n_codes_, n_codes_[j] + has_missing_[j]);
}

}  // namespace pyinterp
