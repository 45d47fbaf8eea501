#include "column_codes.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../common/parallel.hpp"
#include "radix.hpp"

namespace pyinterp {
namespace {

// A CSC column is kept as its entries when they take at most 1/kSparseGain of its dense codes'
// memory. The split search reads a node's entries alone, or its rows' codes in order from them
// (ExactSplitSearch::evaluate). It used to read them through the entries' cursor (SparseColumn),
// several times a dense load's cost, and this was 8: single-cell counts of 20,000 x 20,000 at 5 %
// (1,000 entries a column), 10 trees, took 10-11 CPU s with half the columns kept as entries
// against 8 with dense codes. Now, one thread: classification 6.8 s with entries against 10.5
// dense, peak 636 MB against 922 (scikit-learn 678); regression 17.9 s against 15.7 (its search
// reads every row's code, the zero's included).
constexpr int64_t kSparseGain = 2;

// Columns read together, so a C-ordered X is read row by row rather than one strided column.
constexpr int64_t kBlock = kColumnBlock;

// Columns per task for 1-byte X: a task reads that many bytes of each row (several cache lines of
// one page, where kBlock's 32 bytes would cost a TLB miss each when X lies on 4 KiB pages) and
// writes as many columns, about 4 MiB in all.
int64_t byte_block(int64_t n_rows) { return std::clamp<int64_t>((int64_t{1} << 22) / n_rows / 16 * 16, kBlock, 256); }

// Bytes of a dense code of a column with n_distinct codes (the missing one included): 0 for 2 bits
// a row (at most 4 codes), else the narrowest unsigned type's.
int dense_width(uint32_t n_distinct) {
  return n_distinct <= 4 ? 0 : (n_distinct <= 256 ? 1 : (n_distinct <= 65536 ? 2 : 4));
}

// The call -> code table of a column whose codes are stored 2 bits a row: a code is its own call.
constexpr uint32_t kOwnCodes = 0x03020100u;

// Codes below 4 (ranks, or bytes) stored 2 bits a row, four rows a byte from the low bits, as a
// .bed holds calls: a genotype or binary column then takes a quarter of a byte a row.
template <class Code>
void write_quarter_codes(uint8_t* out, const Code* codes, int64_t n) {
  std::fill(out, out + (n + 3) / 4, uint8_t{0});
  for (int64_t i = 0; i < n; ++i) out[i >> 2] |= static_cast<uint8_t>(codes[i] << ((i & 3) << 1));
}

template <class Code>
void write_codes(uint8_t* out, const uint32_t* ranks, int64_t n) {
  Code* codes = reinterpret_cast<Code*>(out);
  for (int64_t i = 0; i < n; ++i) codes[i] = static_cast<Code>(ranks[i]);
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
  std::vector<uint32_t> by_row;  // sparse columns: ranks by row
  std::vector<uint8_t> bytes;    // 1-byte X: a block's columns, transposed and ranked
};

// Columns j0..j1 of dense X, as doubles, into block (column after column), kTile rows at a time:
// each column's values of a tile go out as whole cache lines. Row by row, every store of a
// row-major X's row went to another column's line, and the block's lines were fetched to be
// written (copying 5,000 x 100,000 float32 by 32 columns: 5.7 s row by row, 1.2 s in tiles).
template <class T>
void copy_block(const MatrixView& X, int64_t j0, int64_t j1, double* block) {
  constexpr int64_t kTile = 32;
  const int64_t n = X.n_rows, width = j1 - j0;
  for (int64_t i0 = 0; i0 < n; i0 += kTile) {
    const int64_t i1 = std::min(n, i0 + kTile);
    for (int64_t k = 0; k < width; ++k) {
      const int64_t column = (j0 + k) * X.col_stride;
      double* out = block + k * n;
      for (int64_t i = i0; i < i1; ++i) out[i] = static_cast<double>(load<T>(X.data, i * X.row_stride + column));
    }
  }
}

void copy_block(const MatrixView& X, int64_t j0, int64_t j1, double* block) {
  switch (X.type) {
    case ValueType::float64: return copy_block<double>(X, j0, j1, block);
    case ValueType::float32: return copy_block<float>(X, j0, j1, block);
    default: return copy_block<int16_t>(X, j0, j1, block);  // int16; 1-byte X takes encode_bytes
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

// Ranks by counting when every value of the column is an integer in [-128, 255] or NaN (genotype
// codes held as floats; NaN ranked last, as rank_column does); false, without ranks, otherwise.
constexpr int kSmallOffset = 128, kSmallValues = 384;
bool rank_small_values(const double* values, int64_t n, EncodeScratch& s, Ranked& r) {
  bool seen[kSmallValues] = {};
  for (int64_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!(v >= -kSmallOffset && v < kSmallValues - kSmallOffset)) {
      if (!std::isnan(v)) return false;
      r.missing = true;
      continue;
    }
    const int k = static_cast<int>(v);
    if (k != v) return false;
    seen[k + kSmallOffset] = true;
  }
  uint32_t rank_of[kSmallValues];
  uint32_t rank = 0;
  for (int v = 0; v < kSmallValues; ++v)
    if (seen[v]) rank_of[v] = rank++;
  for (int64_t i = 0; i < n; ++i)
    s.ranks[i] = std::isnan(values[i]) ? rank : rank_of[static_cast<int>(values[i]) + kSmallOffset];
  r.n_distinct = rank + r.missing;
  return true;
}

#if defined(__SSE2__)
// 16 consecutive bytes of 8 rows (stride apart) transposed: column c's 8 bytes, xor flips, go to
// out + c * out_stride.
inline void transpose_8x16(const uint8_t* in, int64_t stride, uint64_t flips, uint8_t* out, int64_t out_stride) {
  __m128i r[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + k * stride));
  __m128i a[8], b[8];
  for (int k = 0; k < 4; ++k) {  // byte pairs of rows 2k, 2k + 1: columns 0-7, then 8-15
    a[2 * k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
    a[2 * k + 1] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3 (h = 0) or 4-7 for columns 0-3, 4-7, 8-11, 12-15
    b[4 * h + 0] = _mm_unpacklo_epi16(a[4 * h + 0], a[4 * h + 2]);
    b[4 * h + 1] = _mm_unpackhi_epi16(a[4 * h + 0], a[4 * h + 2]);
    b[4 * h + 2] = _mm_unpacklo_epi16(a[4 * h + 1], a[4 * h + 3]);
    b[4 * h + 3] = _mm_unpackhi_epi16(a[4 * h + 1], a[4 * h + 3]);
  }
  const __m128i x = _mm_set1_epi64x(static_cast<long long>(flips));
  for (int q = 0; q < 4; ++q) {  // columns 4q .. 4q + 3
    const __m128i lo = _mm_xor_si128(_mm_unpacklo_epi32(b[q], b[4 + q]), x);
    const __m128i hi = _mm_xor_si128(_mm_unpackhi_epi32(b[q], b[4 + q]), x);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (4 * q + 0) * out_stride), lo);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (4 * q + 1) * out_stride), _mm_unpackhi_epi64(lo, lo));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (4 * q + 2) * out_stride), hi);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (4 * q + 3) * out_stride), _mm_unpackhi_epi64(hi, hi));
  }
}
#endif

// Bytes of a 1-byte X in its type's order (int8: the sign bit flipped), columns j0..j1 transposed
// into codes (column after column, n rows each).
void transpose_bytes(const MatrixView& X, int64_t j0, int64_t j1, uint8_t* __restrict codes) {
  const int64_t n = X.n_rows, width = j1 - j0, row_stride = X.row_stride, col_stride = X.col_stride;
  const uint8_t flip = X.type == ValueType::int8 ? 0x80 : 0;
  const uint8_t* __restrict first = static_cast<const uint8_t*>(X.data) + j0 * col_stride;
  if (row_stride == 1) {  // Fortran order: columns are contiguous
    for (int64_t k = 0; k < width; ++k)
      for (int64_t i = 0; i < n; ++i) codes[k * n + i] = first[k * col_stride + i] ^ flip;
    return;
  }
  // Eight rows at a time: each column's eight bytes go out as one 8-byte store.
  const uint64_t flips = flip * 0x0101010101010101ULL;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint8_t* __restrict row = first + i * row_stride;
    // Rows lie a row of X apart, too far for the hardware prefetcher: ask for the group after next.
    if (i + 24 <= n)
      for (int r = 16; r < 24; ++r) __builtin_prefetch(row + r * row_stride);
    int64_t k = 0;
#if defined(__SSE2__)
    if (col_stride == 1) {
      for (; k + 16 <= width; k += 16) transpose_8x16(row + k, row_stride, flips, codes + k * n + i, n);
    }
#endif
    for (; k < width; ++k) {
      uint64_t word = 0;
      for (int r = 0; r < 8; ++r) word |= uint64_t{row[r * row_stride + k * col_stride]} << (8 * r);
      word ^= flips;
      std::memcpy(codes + k * n + i, &word, sizeof word);
    }
  }
  for (; i < n; ++i)
    for (int64_t k = 0; k < width; ++k) codes[k * n + i] = first[i * row_stride + k * col_stride] ^ flip;
}

// 1-byte columns j0..j1 (int8, uint8, bool: genotypes), transposed straight from X into their
// codes (column j at out + (j - j0) n) and ranked in place by counting: one read of X, no
// conversion, no copy. When the values present are consecutive (0/1/2 genotypes) a column's codes
// are its bytes minus the smallest; otherwise a table maps them. record(j, ranked) follows.
template <class Record>
void encode_bytes(const MatrixView& X, int64_t j0, int64_t j1, uint8_t* out, Record record) {
  const int64_t n = X.n_rows;
  transpose_bytes(X, j0, j1, out);
  for (int64_t j = j0; j < j1; ++j) {
    uint8_t* __restrict column = out + (j - j0) * n;
    uint8_t lowest = 255, highest = 0;
    for (int64_t i = 0; i < n; ++i) {
      lowest = std::min(lowest, column[i]);
      highest = std::max(highest, column[i]);
    }
    // Which values of [lowest, highest] occur: a scan per value while the range is short.
    bool seen[256] = {};
    if (highest - lowest < 8) {
      for (int v = lowest; v <= highest; ++v) seen[v] = std::memchr(column, v, static_cast<size_t>(n)) != nullptr;
    } else {
      for (int64_t i = 0; i < n; ++i) seen[column[i]] = true;
    }
    uint8_t rank_of[256];
    int rank = 0;
    for (int v = lowest; v <= highest; ++v)
      if (seen[v]) rank_of[v] = static_cast<uint8_t>(rank++);
    if (rank == highest - lowest + 1) {
      if (lowest != 0)
        for (int64_t i = 0; i < n; ++i) column[i] = static_cast<uint8_t>(column[i] - lowest);
    } else {
      for (int64_t i = 0; i < n; ++i) column[i] = rank_of[column[i]];
    }
    Ranked ranked;
    ranked.n_distinct = static_cast<uint32_t>(rank);
    record(j, ranked);
  }
}

// Bit k set for each call k among the four calls of a byte.
struct CallsInByte {
  uint8_t mask[256];
  constexpr CallsInByte() : mask() {
    for (int b = 0; b < 256; ++b)
      for (int s = 0; s < 8; s += 2) mask[b] |= static_cast<uint8_t>(1u << ((b >> s) & 3));
  }
};
constexpr CallsInByte kCallsInByte;

// Which calls (bit k: call k) the first n calls of a packed column hold.
uint32_t calls_present(const uint8_t* calls, int64_t n) {
  uint32_t seen = 0;
  const int64_t full = n >> 2;
  constexpr int64_t kChunk = 256;  // bytes between checks for all four calls
  for (int64_t b = 0; b < full && seen != 15; b += kChunk) {
    const int64_t end = std::min(full, b + kChunk);
    for (int64_t k = b; k < end; ++k) seen |= kCallsInByte.mask[calls[k]];
  }
  for (int64_t i = full << 2; i < n; ++i) seen |= 1u << ((calls[i >> 2] >> ((i & 3) << 1)) & 3);
  return seen;
}

// Column k of packed X with its rows in order (X's rows are a subset of the file's samples), into
// out's (n_rows + 3) / 4 bytes.
void repack(const MatrixView& X, int64_t k, uint8_t* out) {
  std::fill(out, out + (X.n_rows + 3) / 4, uint8_t{0});
  for (int64_t i = 0; i < X.n_rows; ++i) out[i >> 2] |= static_cast<uint8_t>(X.call(i, k) << ((i & 3) << 1));
}

// Encodes dense columns j0..j1, handing each to store(j, ranked, ranks by row).
template <class Store>
void encode_dense(const MatrixView& X, int64_t j0, int64_t j1, EncodeScratch& s, Store store) {
  const int64_t n = X.n_rows;
  copy_block(X, j0, j1, s.block.data());
  for (int64_t j = j0; j < j1; ++j) {
    const double* values = s.block.data() + (j - j0) * n;
    Ranked ranked;
    if (!rank_small_values(values, n, s, ranked)) ranked = rank_column(values, n, X.type != ValueType::float64, s);
    store(j, ranked, s.ranks.data());
  }
}

// CSC columns: the stored values are ranked with one zero standing for the absent entries, so
// the codes equal those of the same column dense. A column whose entries take less memory than its
// dense codes goes to store_sparse(j, ranked, entries begin and count, ranks of the entries then of
// the zero), which keeps them and no code per row; the others to store(j, ranked, ranks by row).
template <class Store, class StoreSparse>
void encode_sparse(const MatrixView& X, int64_t j0, int64_t j1, EncodeScratch& s, Store store,
                   StoreSparse store_sparse) {
  for (int64_t j = j0; j < j1; ++j) {
    const int64_t begin = X.slice_begin(j), stored = X.slice_begin(j + 1) - begin;
    double* values = s.block.data();
    for (int64_t e = 0; e < stored; ++e) values[e] = X.value(begin + e);
    const bool absent = stored < X.n_rows;
    if (absent) values[stored] = 0.0;
    const Ranked ranked = rank_column(values, stored + absent, X.type != ValueType::float64, s);
    if (!ranked.infinite && absent && store_sparse(j, ranked, begin, stored, s.ranks.data())) continue;
    if (!ranked.infinite) {
      std::fill(s.by_row.begin(), s.by_row.end(), absent ? s.ranks[stored] : 0);
      for (int64_t e = 0; e < stored; ++e) s.by_row[X.minor_index(begin + e)] = s.ranks[e];
    }
    store(j, ranked, s.by_row.data());
  }
}

}  // namespace

uint8_t* ColumnCodes::column_bytes(int64_t j, int64_t bytes) {
  uint8_t* out = arena_ ? arena_->allocate(bytes) : (owned_[j].resize(static_cast<size_t>(bytes)), owned_[j].data());
  columns_[j] = out;
  return out;
}

ColumnCodes::ColumnCodes(const ColumnSource& source, int n_threads)
    : n_rows_(source.n_rows()),
      columns_(source.n_cols()),
      owned_(source.n_cols()),
      width_(source.n_cols()),
      n_codes_(source.n_cols()),
      has_missing_(source.n_cols()) {
  const int64_t n = source.n_rows(), p = source.n_cols();
  if (n <= 0 || p <= 0) throw std::invalid_argument("X must have at least one row and one column");
  if (n > static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
    throw std::invalid_argument("X has more than 2^32 - 1 rows, the engine's limit");

  const bool bytes = !source.sparse() && !source.packed() && item_size(source.type()) == 1;
  if (source.mapped() && !source.sparse()) {  // codes (or repacked calls) of a file larger than memory go to a file
    const int64_t column = source.packed() ? (n + 3) / 4 : n * std::min<int64_t>(4, item_size(source.type()));
    arena_ = code_arena_for((column + 63) / 64 * 64 * p);
  }
  tables_.resize(p);
  if (source.sparse()) {
    n_stored_.resize(p);
    zero_code_.resize(p);
  }
  auto store_quarters = [&](int64_t j, const auto* codes) {
    width_[j] = 0;
    tables_[j] = kOwnCodes;
    write_quarter_codes(column_bytes(j, (n + 3) / 4), codes, n);
  };
  auto store = [&](int64_t j, const Ranked& ranked, const uint32_t* ranks) {
    if (ranked.infinite) throw std::invalid_argument("X contains infinity (column " + std::to_string(j) + ")");
    n_codes_[j] = ranked.n_distinct - ranked.missing;
    has_missing_[j] = ranked.missing;
    const int width = dense_width(ranked.n_distinct);
    width_[j] = static_cast<uint8_t>(width);
    switch (width) {
      case 0: store_quarters(j, ranks); break;
      case 1: write_codes<uint8_t>(column_bytes(j, n), ranks, n); break;
      case 2: write_codes<uint16_t>(column_bytes(j, 2 * n), ranks, n); break;
      default: write_codes<uint32_t>(column_bytes(j, 4 * n), ranks, n);
    }
  };
  // Column j of the CSC panel X kept as its entries (rows then codes, in owned_[j]) when they take
  // at most a kSparseGain-th of the memory its dense codes would; false otherwise.
  auto store_sparse = [&](const MatrixView& X, int64_t j, const Ranked& ranked, int64_t begin, int64_t stored,
                          const uint32_t* ranks) {
    const int64_t dense_w = dense_width(ranked.n_distinct), w = std::max<int64_t>(dense_w, 1);
    const int64_t dense = dense_w == 0 ? (n + 3) / 4 : n * dense_w;
    if (stored * (4 + w) * kSparseGain > dense) return false;
    n_codes_[j] = ranked.n_distinct - ranked.missing;
    has_missing_[j] = ranked.missing;
    width_[j] = static_cast<uint8_t>(kSparse + w);
    n_stored_[j] = static_cast<uint32_t>(stored);
    zero_code_[j] = ranks[stored];
    auto* rows = reinterpret_cast<uint32_t*>(column_bytes(j, stored * (4 + w)));
    for (int64_t e = 0; e < stored; ++e) rows[e] = static_cast<uint32_t>(X.minor_index(begin + e));
    auto write = [&](auto* codes) {
      for (int64_t e = 0; e < stored; ++e) codes[e] = static_cast<std::remove_pointer_t<decltype(codes)>>(ranks[e]);
    };
    if (w == 1) write(reinterpret_cast<uint8_t*>(rows + stored));
    if (w == 2) write(reinterpret_cast<uint16_t*>(rows + stored));
    if (w == 4) write(reinterpret_cast<uint32_t*>(rows + stored));
    return true;
  };
  auto store_byte_column = [&](int64_t j, const Ranked& ranked, const uint8_t* codes) {
    n_codes_[j] = ranked.n_distinct;
    if (dense_width(ranked.n_distinct) == 0) {
      store_quarters(j, codes);
    } else {
      width_[j] = 1;
      std::copy(codes, codes + n, column_bytes(j, n));
    }
  };
  // Column c0 + k of packed calls, read in place: codes are the ranks of the call values present.
  auto record_packed_column = [&](const MatrixView& panel, int64_t c0, int64_t k) {
    const int64_t j = c0 + k;
    const uint8_t* calls = static_cast<const uint8_t*>(panel.data) + k * panel.col_stride;
    if (panel.indices) {
      uint8_t* out = repacked_ + j * ((n + 3) / 4);
      repack(panel, k, out);
      calls = out;
    }
    const uint32_t seen = calls_present(calls, n);
    static constexpr uint32_t kAscendingA1[3] = {3, 2, 0}, kAscendingA2[3] = {0, 2, 3};
    uint32_t table = 0, rank = 0;
    for (const uint32_t call : panel.count_a2 ? kAscendingA2 : kAscendingA1)
      if (seen & (1u << call)) table |= rank++ << (call << 3);
    has_missing_[j] = (seen >> kMissingCall) & 1u;
    if (has_missing_[j]) table |= rank << (kMissingCall << 3);
    n_codes_[j] = rank;
    width_[j] = 0;
    tables_[j] = table;
    columns_[j] = calls;
  };
  // Columns c0..c1 of the source, which panel holds (its column 0 is column c0).
  auto encode = [&](const MatrixView& panel, int64_t c0, int64_t c1) {
    const bool packed = panel.layout == MatrixView::Layout::packed;
    if (packed && panel.indices && !repacked_) {
      repacked_ = arena_ ? arena_->allocate((n + 3) / 4 * p) : new uint8_t[static_cast<size_t>((n + 3) / 4 * p)];
      own_repacked_.reset(arena_ ? nullptr : repacked_);
    }
    const int64_t block = bytes ? byte_block(n) : kBlock;
    parallel_for(
        (c1 - c0 + block - 1) / block, n_threads,
        [&](int) {
          EncodeScratch s;
          if (bytes) s.bytes.resize(static_cast<size_t>(block * n));
          if (bytes || packed) return s;
          s.block.resize(panel.sparse() ? n : kBlock * n);
          s.a.resize(n);
          s.b.resize(n);
          s.keys.resize(n);
          s.ranks.resize(n);
          if (panel.sparse()) s.by_row.resize(n);
          return s;
        },
        [&](int64_t b, int, EncodeScratch& s) {
          const int64_t j0 = b * block, j1 = std::min(c1 - c0, j0 + block);
          auto store_in_X = [&](int64_t j, const Ranked& ranked, const uint32_t* ranks) { store(c0 + j, ranked, ranks); };
          if (packed) {
            for (int64_t k = j0; k < j1; ++k) record_packed_column(panel, c0, k);
          } else if (bytes) {
            encode_bytes(panel, j0, j1, s.bytes.data(), [&](int64_t j, const Ranked& ranked) {
              store_byte_column(c0 + j, ranked, s.bytes.data() + (j - j0) * n);
            });
          } else if (panel.sparse()) {
            encode_sparse(panel, j0, j1, s, store_in_X,
                          [&](int64_t j, const Ranked& ranked, int64_t begin, int64_t stored, const uint32_t* ranks) {
                            return store_sparse(panel, c0 + j, ranked, begin, stored, ranks);
                          });
          } else {
            encode_dense(panel, j0, j1, s, store_in_X);
          }
        });
  };
  std::vector<uint8_t> buffer;
  for (int64_t c0 = 0, c1; c0 < p; c0 = c1) {
    c1 = source.panel_end(c0, n_threads);
    encode(source.read(c0, c1, buffer), c0, c1);
  }
  for (int64_t j = 0; j < p; ++j) max_n_codes_ = std::max(max_n_codes_, n_codes_[j] + has_missing_[j]);
  if (const MatrixView* csr = source.csr_rows()) code_csr_entries(*csr, n_threads);
}

// By blocks of rows: each column's cursor starts at its first entry in the block, and the block's
// rows, in order, meet each column's entries in the column's order. A column's entries are those
// of its CSC panel, copied from X's rows (ArraySource::read), so its next entry is X's.
void ColumnCodes::code_csr_entries(const MatrixView& X, int n_threads) {
  const int64_t p = n_cols();
  int width = 0;
  for (int64_t j = 0; j < p; ++j)
    if (stored_sparse(j)) width = std::max(width, width_[j] - kSparse);
  if (width == 0) return;
  csr_code_width_ = width;
  csr_codes_.assign(static_cast<size_t>(X.slice_begin(n_rows_) * width), 0);
  auto code_block = [&](auto* out, const auto* indices, int64_t r0, int64_t r1, std::vector<uint32_t>& cursor) {
    for (int64_t j = 0; j < p; ++j) {
      if (!stored_sparse(j)) continue;
      const uint32_t* rows = sparse<uint8_t>(j).rows;  // the rows do not depend on the codes' width
      cursor[j] = static_cast<uint32_t>(std::lower_bound(rows, rows + n_stored_[j], static_cast<uint32_t>(r0)) - rows);
    }
    using Code = std::remove_pointer_t<decltype(out)>;
    for (int64_t e = X.slice_begin(r0), end = X.slice_begin(r1); e < end; ++e) {
      const auto j = indices[e];
      if (!stored_sparse(j)) continue;
      const uint32_t at = cursor[j]++;
      out[e] = static_cast<Code>(width_[j] == kSparse + 1   ? sparse<uint8_t>(j).codes[at]
                                 : width_[j] == kSparse + 2 ? sparse<uint16_t>(j).codes[at]
                                                            : sparse<uint32_t>(j).codes[at]);
    }
  };
  const int64_t blocks = std::min<int64_t>(n_rows_, 4 * std::max(1, n_threads));
  parallel_for(
      blocks, n_threads, [&](int) { return std::vector<uint32_t>(static_cast<size_t>(p)); },
      [&](int64_t b, int, std::vector<uint32_t>& cursor) {
        const int64_t r0 = n_rows_ * b / blocks, r1 = n_rows_ * (b + 1) / blocks;
        auto with_indices = [&](auto* out) {
          if (X.index64) {
            code_block(out, static_cast<const int64_t*>(X.indices), r0, r1, cursor);
          } else {
            code_block(out, static_cast<const int32_t*>(X.indices), r0, r1, cursor);
          }
        };
        uint8_t* out = csr_codes_.data();
        if (width == 1) with_indices(out);
        if (width == 2) with_indices(reinterpret_cast<uint16_t*>(out));
        if (width == 4) with_indices(reinterpret_cast<uint32_t*>(out));
      });
}

void repack_calls(const ColumnSource& source, uint8_t* out, int n_threads) {
  const int64_t n = source.n_rows(), width = (n + 3) / 4;
  std::vector<uint8_t> buffer;
  for (int64_t c0 = 0, c1; c0 < source.n_cols(); c0 = c1) {
    c1 = source.panel_end(c0, n_threads);
    const MatrixView panel = source.read(c0, c1, buffer);
    if (panel.layout != MatrixView::Layout::packed || !panel.indices) break;  // the values beside the calls
    parallel_for((c1 - c0 + kBlock - 1) / kBlock, n_threads, no_state, [&](int64_t b, int, NoState&) {
      for (int64_t k = b * kBlock; k < std::min(c1 - c0, (b + 1) * kBlock); ++k) repack(panel, k, out + (c0 + k) * width);
    });
  }
}

int64_t ColumnCodes::file_bytes() const { return arena_ ? arena_->used() : 0; }

int64_t ColumnCodes::nbytes() const {
  int64_t total = 0;
  if (own_repacked_) total += (n_rows_ + 3) / 4 * n_cols();
  for (const auto& column : owned_) total += static_cast<int64_t>(column.size());
  if (arena_) total += arena_->used();
  return total + static_cast<int64_t>(csr_codes_.size());
}

}  // namespace pyinterp
