#include "itemsets.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <deque>
#include <memory>
#include <numeric>
#include <string>

#include "../common/huge_pages.hpp"
#include "../common/parallel.hpp"
#include "distinct_rows.hpp"

namespace pyinterp {
namespace {

// The bytes the vectors hold (their capacity), for the limit on what a thread keeps.
template <class... Vectors>
size_t capacity_bytes(const Vectors&... v) {
  return (size_t{0} + ... + (v.capacity() * sizeof(typename Vectors::value_type)));
}

// Transactions over local labels 0..n_labels-1, ordered by decreasing support in the root
// database: transaction t holds the ascending labels items[start[t]:start[t + 1]].
struct Database : WeightedCsr {
  std::vector<double> support;    // per label
  std::vector<int64_t> item_of;   // per label: the caller's item

  int32_t n_labels() const { return static_cast<int32_t>(support.size()); }
  void clear() {
    clear_rows();
    support.clear();
    item_of.clear();
  }
  size_t bytes() const { return capacity_bytes(items, indptr, weight, support, item_of); }
};

// For each label, where it occurs: (transaction, position within the transaction), grouped by
// label via a counting sort, so one pass over a database yields every conditional database.
// An array whose resize does not zero it (every entry is written before it is read).
template <class T>
class Scratch {
 public:
  void resize(size_t n) {
    if (n > capacity_) {
      release();
      data_ = std::unique_ptr<T[], Free>(static_cast<T*>(huge_allocate(n * sizeof(T))), Free{n * sizeof(T)});
      capacity_ = n;
    }
  }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t bytes() const { return capacity_ * sizeof(T); }
  void release() {
    data_.reset();
    capacity_ = 0;
  }

 private:
  struct Free {
    size_t bytes = 0;
    void operator()(T* p) const { huge_free(p, bytes); }
  };
  std::unique_ptr<T[], Free> data_;
  size_t capacity_ = 0;
};

struct Occurrences {
  std::vector<int64_t> begin;  // per label + 1
  Scratch<int32_t> transaction;  // 32 bits: half the bytes to write and to read back per occurrence
  Scratch<int32_t> position;

  size_t bytes() const { return transaction.bytes() + position.bytes(); }
  void release() {
    transaction.release();
    position.release();
  }

  // Without positions (with_position false) only what extend_bits and extend_pairs read is built.
  void build(const Database& db, bool with_position = true) {
    if (db.size() > INT32_MAX) throw std::length_error("more than 2^31 - 1 distinct transactions");
    const int32_t m = db.n_labels();
    begin.assign(static_cast<size_t>(m) + 1, 0);
    for (const int32_t e : db.items) ++begin[e + 1];
    std::partial_sum(begin.begin(), begin.end(), begin.begin());
    transaction.resize(db.items.size());
    if (!with_position) {
      std::vector<int64_t>& next = fill_;
      next.assign(begin.begin(), begin.end() - 1);
      for (int64_t t = 0; t < db.size(); ++t)
        for (int64_t j = db.indptr[t]; j < db.indptr[t + 1]; ++j) transaction[next[db.items[j]]++] = static_cast<int32_t>(t);
      return;
    }
    position.resize(db.items.size());
    std::vector<int64_t>& next = fill_;
    next.assign(begin.begin(), begin.end() - 1);
    for (int64_t t = 0; t < db.size(); ++t)
      for (int64_t j = db.indptr[t]; j < db.indptr[t + 1]; ++j) {
        const int64_t slot = next[db.items[j]]++;
        transaction[slot] = static_cast<int32_t>(t);
        position[slot] = static_cast<int32_t>(j - db.indptr[t]);
      }
  }

 private:
  std::vector<int64_t> fill_;
};

// The weight of the root's rows holding each pair of labels: pairs_of(e)[r], r < e, is the support
// of {r, e} (a triangle, e's row at e (e - 1) / 2). A branch reads its frequent labels off it; one
// with none needs no pass over its rows. With at most kMaxBitLabels labels, the root is also kept as
// one bit set per row (n_words words, bit r = label r), so a branch projects a row by masking,
// instead of walking and copying every row's labels before e. Up to kMaxPairLabels, counts (whole
// weights) get the table alone: on a 500-tree forest's paths on madelon (142,405 rows over 925
// labels, 52 with a frequent pair) most branches then end at the table.
constexpr int32_t kMaxBitLabels = 256;
constexpr int32_t kMaxPairLabels = 2048;

inline int64_t triangle(int64_t e) { return e * (e - 1) / 2; }

struct RootBits {
  int32_t n_words = 0;  // 0: no bit sets, the pair table alone
  HugeVector<uint64_t> bits;  // row t: bits[t * n_words : (t + 1) * n_words]
  HugeVector<double> pair;
  bool whole = false;  // every row's weight a whole number, their total below 2^53: exact bit counts

  bool has_rows() const { return n_words > 0; }
  const double* pairs_of(int32_t e) const { return pair.data() + triangle(e); }
  const uint64_t* row(int64_t t) const { return bits.data() + t * n_words; }
  size_t bytes() const { return capacity_bytes(bits, pair); }
  void release() {
    HugeVector<uint64_t>().swap(bits);
    HugeVector<double>().swap(pair);
  }
  // A branch reads one root row in ten or so, each a miss: its loops fetch rows kAhead occurrences
  // ahead of the one they read (transactions of occurrences [o, end)), with the rows' weights.
  static constexpr int64_t kAhead = 16;
  void prefetch(const Occurrences& occ, int64_t o, int64_t end, const double* weight) const {
    if (o + kAhead >= end) return;
    const int64_t ahead = occ.transaction[o + kAhead];
    __builtin_prefetch(row(ahead));
    __builtin_prefetch(weight + ahead);
  }

  // The pair table's values do not depend on the number of threads. Whole-number weights below
  // 2^32 in total are counted in integers (exact in any order, and faster to add); other weights
  // are summed over fixed blocks of rows (fixed by the row count alone), the blocks added in order.
  // Without with_rows (no bit sets) only counts are tabled: false, nothing built, for other weights.
  bool build(const Database& db, int n_threads, bool with_rows) {
    const int32_t m = db.n_labels();
    const int64_t n = db.size();
    double total = 0.0;
    whole = true;
    for (const double w : db.weight) {
      whole = whole && w < 0x1p53 && w == std::floor(w);
      total += w;
    }
    whole = whole && total < 0x1p53;
    const bool counts = whole && total < 0x1p32;
    if (!with_rows && !counts) return false;
    n_words = with_rows ? (m + 63) / 64 : 0;
    bits.resize(static_cast<size_t>(n) * n_words);  // each row zeroed when its bits are set
    const auto cells = static_cast<size_t>(triangle(m));
    if (counts) {
      // One table per worker, over small blocks handed out as workers free up, added at the end.
      constexpr int64_t kCountBlock = 1024;
      std::vector<HugeVector<uint32_t>> per_worker(static_cast<size_t>(std::max(1, n_threads)));
      parallel_for((n + kCountBlock - 1) / kCountBlock, n_threads, no_state, [&](int64_t b, int worker, NoState&) {
        HugeVector<uint32_t>& c = per_worker[worker];
        if (c.empty()) c.assign(cells, 0);
        add_pairs(db, b * kCountBlock, std::min(n, (b + 1) * kCountBlock), c,
                  [&](int64_t t) { return static_cast<uint32_t>(db.weight[t]); });
      });
      HugeVector<uint32_t>& c = per_worker[0];
      c.resize(cells);  // no rows: no task ran
      for (size_t w = 1; w < per_worker.size(); ++w)
        for (size_t k = 0; k < per_worker[w].size(); ++k) c[k] += per_worker[w][k];
      pair.assign(c.begin(), c.end());
      return true;
    }
    const int64_t block = std::max<int64_t>(int64_t{1} << 13, (n + 15) / 16);
    const int64_t n_blocks = std::max<int64_t>(1, (n + block - 1) / block);
    std::vector<HugeVector<double>> partial(static_cast<size_t>(n_blocks));
    parallel_for(n_blocks, n_threads, no_state, [&](int64_t b, int, NoState&) {
      partial[b].assign(cells, 0.0);
      add_pairs(db, b * block, std::min(n, (b + 1) * block), partial[b], [&](int64_t t) { return db.weight[t]; });
    });
    pair = std::move(partial[0]);
    for (int64_t b = 1; b < n_blocks; ++b)
      for (size_t k = 0; k < pair.size(); ++k) pair[k] += partial[b][k];
    return true;
  }

 private:
  // Rows [begin, end): their bits (with rows), and their weights added to c[triangle(e) + r] for
  // each pair r < e.
  template <class T, class Weight>
  void add_pairs(const Database& db, int64_t begin, int64_t end, HugeVector<T>& c, Weight weight) {
    for (int64_t t = begin; t < end; ++t) {
      const int32_t* a = db.items.data() + db.indptr[t];
      const auto len = static_cast<int32_t>(db.indptr[t + 1] - db.indptr[t]);
      const T w = weight(t);
      if (has_rows()) {
        uint64_t* row = bits.data() + t * n_words;
        std::fill(row, row + n_words, 0);
        for (int32_t j = 0; j < len; ++j) row[a[j] >> 6] |= uint64_t{1} << (a[j] & 63);
      }
      for (int32_t j = 1; j < len; ++j) {
        T* ce = c.data() + triangle(a[j]);
        for (int32_t i = 0; i < j; ++i) ce[a[i]] += w;
      }
      if ((t & 0xffff) == 0) checkpoint();
    }
  }
};

// A conditional database of at most 64 labels: each row one bit mask, so projecting is masking,
// counting walks set bits and merging hashes one word. Bit r is label r of the database the masks
// were made from (Miner::mask_item_), so deeper mask levels need no relabelling.
struct Masks {
  std::vector<uint64_t> rows;
  std::vector<double> weight;
  std::array<double, 64> support{};
  uint64_t active = 0;                 // the frequent labels
  std::array<int32_t, 65> begin{};     // rows holding bit b: holding[begin[b]:begin[b + 1]]
  std::vector<int32_t> holding;

  void index() {
    std::array<int32_t, 65> next{};
    for (uint64_t x : rows)
      for (; x; x &= x - 1) ++next[__builtin_ctzll(x) + 1];
    for (int b = 0; b < 64; ++b) next[b + 1] += next[b];
    begin = next;
    holding.resize(static_cast<size_t>(begin[64]));
    for (int32_t i = 0; i < static_cast<int32_t>(rows.size()); ++i)
      for (uint64_t x = rows[i]; x; x &= x - 1) holding[next[__builtin_ctzll(x)]++] = i;
  }

  // Appends mask x with weight w, merged into an identical earlier row (slot: open addressing).
  void add(uint64_t x, double w, std::vector<int32_t>& slot) {
    const uint64_t h = x * 0x9e3779b97f4a7c15ULL;
    const size_t mask = slot.size() - 1;
    for (size_t s = (h ^ (h >> 32)) & mask;; s = (s + 1) & mask) {
      if (slot[s] < 0) {
        slot[s] = static_cast<int32_t>(rows.size());
        rows.push_back(x);
        weight.push_back(w);
        return;
      }
      if (rows[slot[s]] == x) {
        weight[slot[s]] += w;
        return;
      }
    }
  }
};

int lowest_bit(uint64_t x) { return __builtin_ctzll(x); }

// count[b] = sum over i < n of popcount(bits[i] & vert[cand[b] * words + word[i]]), b < n_cand: the
// supports of a node's extensions when every row stands for its weight in bits (Miner::vertical_).
// The x86-64 baseline has no popcnt instruction: a copy compiled for it is picked at run time.
#define PYINTERP_COUNT_BODY                                                                         \
  for (int32_t b = 0; b < n_cand; ++b) {                                                            \
    const uint64_t* v = vert + static_cast<int64_t>(cand[b]) * words;                               \
    uint64_t c0 = 0, c1 = 0;                                                                        \
    int32_t i = 0;                                                                                  \
    for (; i + 1 < n; i += 2) {                                                                     \
      c0 += static_cast<uint64_t>(__builtin_popcountll(bits[i] & v[word[i]]));                      \
      c1 += static_cast<uint64_t>(__builtin_popcountll(bits[i + 1] & v[word[i + 1]]));              \
    }                                                                                               \
    if (i < n) c0 += static_cast<uint64_t>(__builtin_popcountll(bits[i] & v[word[i]]));             \
    count[b] = c0 + c1;                                                                             \
  }

using CountFn = void (*)(const int32_t* word, const uint64_t* bits, int32_t n, const uint64_t* vert, int64_t words,
                         const int32_t* cand, int32_t n_cand, uint64_t* count);

void count_and(const int32_t* word, const uint64_t* bits, int32_t n, const uint64_t* vert, int64_t words,
               const int32_t* cand, int32_t n_cand, uint64_t* count) {
  PYINTERP_COUNT_BODY
}

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__POPCNT__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("popcnt"))) void count_and_popcnt(const int32_t* word, const uint64_t* bits, int32_t n,
                                                         const uint64_t* vert, int64_t words, const int32_t* cand,
                                                         int32_t n_cand, uint64_t* count) {
  PYINTERP_COUNT_BODY
}
CountFn pick_count_and() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("popcnt") ? count_and_popcnt : count_and;
}
#else
CountFn pick_count_and() { return count_and; }
#endif
#undef PYINTERP_COUNT_BODY

// Mines the branches (itemsets whose first label in root order is e) of the root database; each
// branch is one task, written to its own output so the concatenation is in label order.
class Miner {
 public:
  Miner(const ItemsetOptions& options, std::atomic<int64_t>& emitted, CountFn count_and)
      : options_(options), emitted_(emitted), count_and_(count_and) {}

  void branch(const Database& root, const Occurrences& occ, const RootBits* bits, int32_t e, Itemsets& out) {
    out_ = &out;
    prefix_.assign(1, root.item_of[e]);
    emit(root.support[e]);
    if (bits && (bits->has_rows() ? extend_bits(root, occ, *bits, e) : extend_pairs(root, occ, *bits, e))) return;
    extend(root, occ, e, 0);
  }

 private:
  size_t max_size() const { return static_cast<size_t>(options_.max_size); }

  template <class Level>
  static Level& at(std::deque<Level>& levels, size_t d) {
    while (levels.size() <= d) levels.emplace_back();
    return levels[d];
  }

  // kept_ = the labels r < e whose pair with e is frequent, read off the root's pair table. True
  // when that settles e's branch: sets stop at pairs (reported here), or no pair is frequent.
  bool keep_frequent_pairs(const Database& root, const double* pair, int32_t e) {
    kept_.clear();
    for (int32_t r = 0; r < e; ++r)
      if (pair[r] >= options_.min_support) kept_.push_back(r);
    if (prefix_.size() + 1 == max_size()) {
      for (const int32_t r : kept_) emit_with(root.item_of[r], pair[r]);
      return true;
    }
    return kept_.empty();
  }

  // extend() at the root from the pair table alone: done when e has no frequent pair or sets stop
  // at pairs; with 1 to 64 frequent pairs, e's rows are cut to them with the table's supports, no
  // count; false (nothing done) when more stay frequent: extend() counts and builds rows then.
  static constexpr int64_t kRowsAhead = 8;
  bool extend_pairs(const Database& root, const Occurrences& occ, const RootBits& rb, int32_t e) {
    if (e == 0 || prefix_.size() >= max_size()) return true;
    const double* pair = rb.pairs_of(e);
    if (keep_frequent_pairs(root, pair, e)) return true;
    if (kept_.size() > 64) return false;
    Masks& mk = open_kept_masks(root, occ, pair, e, 0);
    const int32_t last = kept_.back();
    const int64_t end = occ.begin[e + 1];
    for (int64_t o = occ.begin[e]; o < end; ++o) {
      // e's rows are scattered over the root: each one's start fetched ahead, as its offset before
      if (o + 2 * kRowsAhead < end) __builtin_prefetch(root.indptr.data() + occ.transaction[o + 2 * kRowsAhead]);
      if (o + kRowsAhead < end) __builtin_prefetch(root.items.data() + root.indptr[occ.transaction[o + kRowsAhead]]);
      const int64_t t = occ.transaction[o];
      const int32_t* a = root.items.data() + root.indptr[t];
      uint64_t x = 0;
      // rows ascend: the scan stops past the last kept label, at the latest at e
      for (int32_t j = 0; a[j] <= last; ++j) x |= mask_of_[a[j]];
      if (x) mk.add(x, root.weight[t], mask_slot_);
    }
    grow_masks(mk, 0);
    return true;
  }

  // extend() at the root from its bit sets: the supports of the labels before e from the pair
  // table, each row of e cut to the frequent ones by masking. False (nothing done) when more than
  // 64 labels stay frequent: extend() builds a row database then.
  bool extend_bits(const Database& root, const Occurrences& occ, const RootBits& rb, int32_t e) {
    if (e == 0 || prefix_.size() >= max_size()) return true;
    checkpoint();
    const double* pair = rb.pairs_of(e);
    if (keep_frequent_pairs(root, pair, e)) return true;
    const auto n_occ = occ.begin[e + 1] - occ.begin[e];
    if (rb.whole && !(kept_.size() <= kSmallZeta && dense(static_cast<int>(kept_.size()), n_occ)) &&
        vertical(root, occ, rb, e))
      return true;
    if (kept_.size() > 64) return false;
    if (dense(static_cast<int>(kept_.size()), n_occ)) {
      const auto k = static_cast<int>(kept_.size());
      std::array<double, kZetaBits> first{};
      keep_words_.assign(static_cast<size_t>(rb.n_words), 0);
      relabel_.assign(static_cast<size_t>(e), -1);
      for (int j = 0; j < k; ++j) {
        relabel_[kept_[j]] = j;
        zeta_item_[j] = root.item_of[kept_[j]];
        first[j] = pair[kept_[j]];
        keep_words_[kept_[j] >> 6] |= uint64_t{1} << (kept_[j] & 63);
      }
      const int32_t used_words = (kept_.back() >> 6) + 1;
      const bool contiguous = kept_.back() == k - 1;  // labels 0..k-1: bits already in place
      zeta_open(k);
      for (int64_t o = occ.begin[e]; o < occ.begin[e + 1]; ++o) {
        rb.prefetch(occ, o, occ.begin[e + 1], root.weight.data());
        const int64_t t = occ.transaction[o];
        const uint64_t* row = rb.row(t);
        uint32_t x = 0;
        if (contiguous) {
          x = static_cast<uint32_t>(row[0] & keep_words_[0]);
        } else {
          for (int32_t w = 0; w < used_words; ++w)
            for (uint64_t y = row[w] & keep_words_[w]; y; y &= y - 1) x |= uint32_t{1} << relabel_[64 * w + lowest_bit(y)];
        }
        zeta_[x] += root.weight[t];
      }
      zeta_sum(k);
      zeta_grow(0, static_cast<uint32_t>((uint64_t{1} << k) - 1), first.data());
      return true;
    }
    Masks& mk = at(mask_levels_, 0);
    // Labels below 64 keep their bit; otherwise the kept labels are renumbered 0, 1, ... in order.
    const bool same_bits = kept_.back() < 64;
    mask_item_.assign(64, 0);
    keep_words_.assign(static_cast<size_t>(rb.n_words), 0);
    relabel_.assign(static_cast<size_t>(e), -1);
    mk.active = 0;
    for (size_t k = 0; k < kept_.size(); ++k) {
      const int32_t r = kept_[k];
      const int b = same_bits ? r : static_cast<int>(k);
      relabel_[r] = b;
      mk.support[b] = pair[r];
      mask_item_[b] = root.item_of[r];
      mk.active |= uint64_t{1} << b;
      keep_words_[r >> 6] |= uint64_t{1} << (r & 63);
    }
    const int32_t used_words = (kept_.back() >> 6) + 1;
    open_masks(mk, n_occ);
    const uint64_t keep0 = keep_words_[0];
    for (int64_t o = occ.begin[e]; o < occ.begin[e + 1]; ++o) {
      rb.prefetch(occ, o, occ.begin[e + 1], root.weight.data());
      const int64_t t = occ.transaction[o];
      const uint64_t* row = rb.row(t);
      uint64_t x;
      if (same_bits) {
        x = row[0] & keep0;
      } else {
        x = 0;
        for (int32_t k = 0; k < used_words; ++k)
          for (uint64_t y = row[k] & keep_words_[k]; y; y &= y - 1) x |= uint64_t{1} << relabel_[64 * k + lowest_bit(y)];
      }
      if (x) mk.add(x, root.weight[t], mask_slot_);
    }
    grow_masks(mk, 0);
    return true;
  }

  // prefix_ ends with the item of label e of db and has been reported: reports its extensions by
  // the labels before e. The last level needs only their supports, not a conditional database.
  void extend(const Database& db, const Occurrences& occ, int32_t e, size_t d) {
    if (e == 0 || prefix_.size() >= max_size()) return;
    checkpoint();  // one branch of a dense database can run for minutes
    const bool last = prefix_.size() + 1 == max_size();
    const int64_t n_gathered = count_before(db, occ, e, !last);
    kept_.clear();
    if (sparse_) {
      std::sort(touched_.begin(), touched_.end());
      for (const int32_t r : touched_)
        if (support_[r] >= options_.min_support) kept_.push_back(r);
    } else {
      for (int32_t r = 0; r < e; ++r)
        if (support_[r] >= options_.min_support) kept_.push_back(r);
    }
    if (last) {
      for (const int32_t r : kept_) emit_with(db.item_of[r], support_[r]);
    } else if (kept_.size() <= 64) {
      if (!kept_.empty()) grow_masks(to_masks(db, occ, e, d), d);
    } else {
      grow(to_rows(db, occ, e, d, n_gathered), d);
    }
  }

  // Reports prefix + {e} for every label e of db and extends it while sets may grow.
  void grow(const Database& db, size_t d) {
    const bool deeper = prefix_.size() + 1 < max_size();
    if (deeper) at(occ_, d).build(db);
    for (int32_t e = 0; e < db.n_labels(); ++e) {
      prefix_.push_back(db.item_of[e]);
      emit(db.support[e]);
      if (deeper) extend(db, occ_[d], e, d + 1);
      prefix_.pop_back();
    }
  }

  // support_[r] = the weight of the transactions of db holding both r < e and e. With gather, the
  // cut rows are also copied in order to gathered_, so building the projection reads memory in order.
  // Returns the number of items gathered.
  // When e's transactions hold few items beside e (sparse_), only the labels they hold are
  // zeroed and listed (touched_), in a pass that does not grow with e: many labels that rarely
  // meet, as one-item transactions, would otherwise cost the square of the labels.
  int64_t count_before(const Database& db, const Occurrences& occ, int32_t e, bool gather) {
    // The items are counted only where they may be few against e (never in a dense database).
    const int64_t n_occ = occ.begin[e + 1] - occ.begin[e];
    const bool may_be_sparse = n_occ * kSparseRatio < e;
    int64_t n_items = 0;
    if (gather || may_be_sparse)
      for (int64_t o = occ.begin[e]; o < occ.begin[e + 1]; ++o) n_items += occ.position[o];
    sparse_ = may_be_sparse && n_items * kSparseRatio < e;
    if (gather && static_cast<int64_t>(gathered_.size()) < n_items) gathered_.resize(static_cast<size_t>(n_items));
    if (sparse_) {
      if (support_.size() < static_cast<size_t>(e)) support_.resize(static_cast<size_t>(e));
      if (stamp_.size() < static_cast<size_t>(e)) stamp_.resize(static_cast<size_t>(e), 0);
      ++current_stamp_;
      touched_.clear();
    } else {
      support_.assign(static_cast<size_t>(e), 0.0);
    }
    int32_t* out = gathered_.data();
    for (int64_t o = occ.begin[e]; o < occ.begin[e + 1]; ++o) {
      const double w = db.weight[occ.transaction[o]];
      const int32_t* a = db.items.data() + db.indptr[occ.transaction[o]];
      if (sparse_) {
        for (int32_t j = 0; j < occ.position[o]; ++j) {
          const int32_t r = a[j];
          if (stamp_[r] != current_stamp_) {
            stamp_[r] = current_stamp_;
            support_[r] = 0.0;
            touched_.push_back(r);
          }
          support_[r] += w;
        }
      } else {
        for (int32_t j = 0; j < occ.position[o]; ++j) support_[a[j]] += w;
      }
      if (gather)
        for (int32_t j = 0; j < occ.position[o]; ++j) *out++ = a[j];
    }
    return gather ? n_items : 0;
  }

  // The gathered rows cut to the kept labels (relabelled in order), merged: a row database...
  Database& to_rows(const Database& db, const Occurrences& occ, int32_t e, size_t d, int64_t n_gathered) {
    Database& cond = at(levels_, d);
    cond.clear();
    relabel_.assign(static_cast<size_t>(e), -1);
    for (const int32_t r : kept_) {
      relabel_[r] = cond.n_labels();
      cond.support.push_back(support_[r]);
      cond.item_of.push_back(db.item_of[r]);
    }
    writer_.open(cond, occ.begin[e + 1] - occ.begin[e], n_gathered);
    const int32_t* a = gathered_.data();
    for (int64_t o = occ.begin[e]; o < occ.begin[e + 1]; ++o) {
      row_.clear();
      for (const int32_t* end = a + occ.position[o]; a != end; ++a)
        if (relabel_[*a] >= 0) row_.push_back(relabel_[*a]);
      if (!row_.empty()) writer_.add(row_.data(), static_cast<int64_t>(row_.size()), db.weight[occ.transaction[o]]);
    }
    return cond;
  }

  // ...or, for 1 to 64 kept labels, a mask database (mask_item_ maps its bits to items).
  Masks& to_masks(const Database& db, const Occurrences& occ, int32_t e, size_t d) {
    Masks& m = open_kept_masks(db, occ, support_.data(), e, d);
    const int32_t* a = gathered_.data();
    for (int64_t o = occ.begin[e]; o < occ.begin[e + 1]; ++o) {
      uint64_t x = 0;
      for (const int32_t* end = a + occ.position[o]; a != end; ++a) x |= mask_of_[*a];
      if (x) m.add(x, db.weight[occ.transaction[o]], mask_slot_);
    }
    return m;
  }

  // The empty mask database of level d for the kept labels (bit k = kept_[k]; mask_of_ maps labels
  // to their bit, 0 for the others, so a row's mask is an OR of lookups without a branch), with
  // their supports support[kept_[k]], sized for e's occurrences.
  Masks& open_kept_masks(const Database& db, const Occurrences& occ, const double* support, int32_t e, size_t d) {
    Masks& m = at(mask_levels_, d);
    mask_of_.assign(static_cast<size_t>(e), 0);
    mask_item_.clear();
    for (const int32_t r : kept_) {
      mask_of_[r] = uint64_t{1} << mask_item_.size();
      m.support[mask_item_.size()] = support[r];
      mask_item_.push_back(db.item_of[r]);
    }
    m.active = kept_.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << kept_.size()) - 1;
    open_masks(m, occ.begin[e + 1] - occ.begin[e]);
    return m;
  }

  void open_masks(Masks& m, int64_t max_rows) {
    m.rows.clear();
    m.weight.clear();
    size_t cap = 4;
    while (cap < 2 * static_cast<size_t>(max_rows)) cap <<= 1;
    mask_slot_.assign(cap, -1);
  }

  // grow() for a mask database.
  void grow_masks(Masks& m, size_t d) {
    const bool deeper = prefix_.size() + 1 < max_size();
    if (deeper) m.index();
    for (uint64_t bits = m.active; bits; bits &= bits - 1) {
      const int e = lowest_bit(bits);
      prefix_.push_back(mask_item_[e]);
      emit(m.support[e]);
      if (deeper && e > 0) extend_masks(m, e, d + 1);
      prefix_.pop_back();
    }
  }

  // extend() for a mask database.
  void extend_masks(const Masks& m, int e, size_t d) {
    checkpoint();  // a branch of up to 64 labels is all masks: seconds on many transactions
    const uint64_t bit = uint64_t{1} << e, below = bit - 1;
    std::array<double, 64> support{};
    for (int32_t k = m.begin[e]; k < m.begin[e + 1]; ++k) {
      const int32_t i = m.holding[k];
      for (uint64_t rest = m.rows[i] & below; rest; rest &= rest - 1) support[lowest_bit(rest)] += m.weight[i];
    }
    uint64_t keep = 0;
    for (uint64_t bits = m.active & below; bits; bits &= bits - 1)
      if (support[lowest_bit(bits)] >= options_.min_support) keep |= uint64_t{1} << lowest_bit(bits);
    if (prefix_.size() + 1 == max_size()) {
      for (; keep; keep &= keep - 1) emit_with(mask_item_[lowest_bit(keep)], support[lowest_bit(keep)]);
      return;
    }
    if (!keep) return;
    const int k = __builtin_popcountll(keep);
    if (dense(k, m.begin[e + 1] - m.begin[e])) {
      std::array<int8_t, 64> index{};
      std::array<double, kZetaBits> first{};
      int j = 0;
      for (uint64_t bits = keep; bits; bits &= bits - 1, ++j) {
        index[lowest_bit(bits)] = static_cast<int8_t>(j);
        zeta_item_[j] = mask_item_[lowest_bit(bits)];
        first[j] = support[lowest_bit(bits)];
      }
      zeta_open(k);
      for (int32_t r = m.begin[e]; r < m.begin[e + 1]; ++r) {
        const int32_t i = m.holding[r];
        uint32_t x = 0;
        for (uint64_t y = m.rows[i] & keep; y; y &= y - 1) x |= uint32_t{1} << index[lowest_bit(y)];
        zeta_[x] += m.weight[i];
      }
      zeta_sum(k);
      zeta_grow(0, static_cast<uint32_t>((uint64_t{1} << k) - 1), first.data());
      return;
    }
    Masks& c = at(mask_levels_, d);
    c.active = keep;
    c.support = support;
    open_masks(c, m.begin[e + 1] - m.begin[e]);
    for (int32_t k = m.begin[e]; k < m.begin[e + 1]; ++k) {
      const int32_t i = m.holding[k];
      if (m.rows[i] & keep) c.add(m.rows[i] & keep, m.weight[i], mask_slot_);
    }
    grow_masks(c, d);
  }

  // A branch of a root whose weights are whole numbers, mined from vertical bit sets (Eclat): bit
  // positions are the branch's rows, a row of weight w taking w of them, so a support is a count
  // of set bits, exact and independent of any order of summation. Kept label j (kept_[j]) is the
  // bit set vert_[j * vwords_ : (j + 1) * vwords_]; a node (an itemset of the branch) keeps only the
  // nonzero words of its rows' set, so deep, sparse nodes cost their rows, not the branch's.
  // False (nothing done) when the bit sets would be large (many rows of large weight, or more
  // than kMaxVertWords words): the branch is then mined by masks or rows.
  static constexpr int64_t kMaxVertWords = int64_t{1} << 22;
  struct Node {
    std::vector<int32_t> word;   // the nonzero words of the node's row set...
    std::vector<uint64_t> bits;  // ...and their bits
    std::vector<int32_t> cand;   // its frequent extensions (kept labels, ascending) and their supports
    std::vector<double> support;
  };
  bool vertical(const Database& root, const Occurrences& occ, const RootBits& rb, int32_t e) {
    const auto k = static_cast<int32_t>(kept_.size());
    const int64_t o0 = occ.begin[e], o1 = occ.begin[e + 1];
    const auto n_bits = static_cast<uint64_t>(root.support[e]);  // the weight of e's rows, exactly
    if (n_bits > 2 * static_cast<uint64_t>(o1 - o0) + 64) return false;
    const auto words = static_cast<int64_t>((n_bits + 63) / 64);
    if (words * k > kMaxVertWords) return false;
    vwords_ = words;
    vert_.assign(static_cast<size_t>(words * k), 0);
    keep_words_.assign(static_cast<size_t>(rb.n_words), 0);
    relabel_.assign(static_cast<size_t>(e), -1);
    vitem_.resize(static_cast<size_t>(k));
    Node& top = at(nodes_, 0);
    top.cand.resize(static_cast<size_t>(k));
    top.support.resize(static_cast<size_t>(k));
    const double* pair = rb.pairs_of(e);
    for (int32_t j = 0; j < k; ++j) {
      const int32_t r = kept_[j];
      relabel_[r] = j;
      vitem_[j] = root.item_of[r];
      top.cand[j] = j;
      top.support[j] = pair[r];
      keep_words_[r >> 6] |= uint64_t{1} << (r & 63);
    }
    // Row t's bits go to position pos of the kept labels' sets (w positions for weight w).
    vrow_.resize(static_cast<size_t>(e));
    for (int32_t j = 0; j < k; ++j) vrow_[kept_[j]] = vert_.data() + static_cast<int64_t>(j) * words;
    uint64_t** const vrow = vrow_.data();
    const int32_t used_words = (kept_.back() >> 6) + 1;
    uint64_t pos = 0;
    for (int64_t o = o0; o < o1; ++o) {
      rb.prefetch(occ, o, o1, root.weight.data());
      const int64_t t = occ.transaction[o];
      const auto w = static_cast<uint64_t>(root.weight[t]);
      const uint64_t* row = rb.row(t);
      if (w == 1) {
        const int64_t at = static_cast<int64_t>(pos >> 6);
        const uint64_t bit = uint64_t{1} << (pos & 63);
        for (int32_t q = 0; q < used_words; ++q)
          for (uint64_t y = row[q] & keep_words_[q]; y; y &= y - 1) vrow[64 * q + lowest_bit(y)][at] |= bit;
      } else {
        for (int32_t q = 0; q < used_words; ++q)
          for (uint64_t y = row[q] & keep_words_[q]; y; y &= y - 1)
            for (uint64_t b = pos; b < pos + w; ++b) vrow[64 * q + lowest_bit(y)][b >> 6] |= uint64_t{1} << (b & 63);
      }
      pos += w;
    }
    // The branch's own node: every row (all words, all bits: bits past the last row are 0 in vert_).
    top.word.resize(static_cast<size_t>(words));
    std::iota(top.word.begin(), top.word.end(), 0);
    top.bits.assign(static_cast<size_t>(words), ~uint64_t{0});
    vertical_grow(top, 1);
    return true;
  }

  // Reports prefix_ + {c} for each candidate c of node (ascending), each followed by its extensions
  // by the candidates before it, in grow_masks' order.
  void vertical_grow(const Node& node, size_t d) {
    checkpoint();
    const auto n_cand = static_cast<int32_t>(node.cand.size());
    const auto n = static_cast<int32_t>(node.word.size());
    for (int32_t a = 0; a < n_cand; ++a) {
      const int32_t c = node.cand[a];
      prefix_.push_back(vitem_[c]);
      emit(node.support[a]);
      if (a > 0 && prefix_.size() < max_size()) {
        Node& child = at(nodes_, d);
        child.word.resize(static_cast<size_t>(n));
        child.bits.resize(static_cast<size_t>(n));
        const uint64_t* v = vert_.data() + static_cast<int64_t>(c) * vwords_;
        int32_t m = 0;
        for (int32_t i = 0; i < n; ++i) {
          const uint64_t x = node.bits[i] & v[node.word[i]];
          child.word[m] = node.word[i];
          child.bits[m] = x;
          m += x != 0;
        }
        child.word.resize(static_cast<size_t>(m));
        child.bits.resize(static_cast<size_t>(m));
        count_.resize(static_cast<size_t>(a));
        count_and_(child.word.data(), child.bits.data(), m, vert_.data(), vwords_, node.cand.data(), a, count_.data());
        child.cand.clear();
        child.support.clear();
        for (int32_t b = 0; b < a; ++b) {
          const auto s = static_cast<double>(count_[b]);
          if (s >= options_.min_support) {
            child.cand.push_back(node.cand[b]);
            child.support.push_back(s);
          }
        }
        if (!child.cand.empty()) vertical_grow(child, d + 1);
      }
      prefix_.pop_back();
    }
  }

  // A conditional database of k <= kZetaBits labels is mined at once when rows outnumber its
  // subsets enough: zeta_[x] sums the weights of the rows equal to x (bit b = its b-th label),
  // superset sums (k 2^(k-1) additions) turn it into the support of every subset, and zeta_grow
  // reports them in grow_masks' order, with no projection, indexing or merging below.
  static constexpr int kZetaBits = 16;
  static constexpr size_t kSmallZeta = 13;  // up to this, superset sums beat vertical bit sets
  static bool dense(int k, int64_t n_rows) { return k <= kZetaBits && (k <= 8 || (int64_t{1} << k) <= 16 * n_rows); }

  void zeta_open(int k) { zeta_.assign(size_t{1} << k, 0.0); }

  void zeta_sum(int k) {
    double* g = zeta_.data();
    const size_t n = size_t{1} << k;
    for (size_t bit = 1; bit < n; bit <<= 1)
      for (size_t base = 0; base < n; base += 2 * bit)
        for (size_t x = base; x < base + bit; ++x) g[x] += g[x + bit];
  }

  // Reports prefix_ + s + {b} for each b of cand (each frequent with s; their supports first[b] if
  // given, else from zeta_), each followed by its extensions by the labels of cand before b.
  void zeta_grow(uint32_t s, uint32_t cand, const double* first) {
    checkpoint();
    for (uint32_t bits = cand; bits; bits &= bits - 1) {
      const int b = __builtin_ctz(bits);
      const uint32_t t = s | (uint32_t{1} << b);
      prefix_.push_back(zeta_item_[b]);
      emit(first ? first[b] : zeta_[t]);
      if (prefix_.size() < max_size()) {
        uint32_t next = 0;
        for (uint32_t c = cand & ((uint32_t{1} << b) - 1); c; c &= c - 1)
          if (zeta_[t | (c & (0u - c))] >= options_.min_support) next |= c & (0u - c);
        if (next) zeta_grow(t, next, nullptr);
      }
      prefix_.pop_back();
    }
  }

  void emit_with(int64_t item, double support) {
    prefix_.push_back(item);
    emit(support);
    prefix_.pop_back();
  }

  void emit(double support) {
    if (++emitted_ > options_.max_itemsets)
      throw TooManyItemsets("more than max_itemsets = " + std::to_string(options_.max_itemsets) +
                            " frequent itemsets; raise min_support, lower max_size or raise max_itemsets");
    // The prefix copied in ascending item order (an insertion sort: a few items).
    const size_t first = out_->items.size(), k = prefix_.size();
    out_->items.resize(first + k);
    int64_t* const dst = out_->items.data() + first;
    for (size_t i = 0; i < k; ++i) {
      const int64_t v = prefix_[i];
      size_t j = i;
      for (; j > 0 && dst[j - 1] > v; --j) dst[j] = dst[j - 1];
      dst[j] = v;
    }
    out_->indptr.push_back(static_cast<int64_t>(out_->items.size()));
    out_->support.push_back(support);
  }

  const ItemsetOptions& options_;
  std::atomic<int64_t>& emitted_;
  Itemsets* out_ = nullptr;
  std::deque<Database> levels_;  // levels_[d]: a row database conditional on prefix_[:d + 1]
  std::deque<Occurrences> occ_;
  std::deque<Masks> mask_levels_;  // mask_levels_[d]: a mask database conditional on prefix_[:d + 1]
  std::vector<int64_t> mask_item_;
  std::vector<int64_t> prefix_;
  std::vector<double> support_;
  std::vector<int32_t> gathered_, kept_, relabel_, row_, mask_slot_, touched_;
  std::vector<uint64_t> mask_of_;
  // count_before's sparse pass: the labels it touched, stamped with the pass's number.
  static constexpr int64_t kSparseRatio = 8;
  bool sparse_ = false;
  std::vector<int64_t> stamp_;
  int64_t current_stamp_ = 0;
  std::vector<uint64_t> keep_words_;
  std::vector<double> zeta_;
  std::array<int64_t, kZetaBits> zeta_item_{};
  MergingWriter writer_;
  CountFn count_and_;
  std::deque<Node> nodes_;  // nodes_[d]: a node of d + 1 items in the vertical branch
  std::vector<uint64_t> vert_;
  int64_t vwords_ = 0;
  std::vector<int64_t> vitem_;
  std::vector<uint64_t*> vrow_;  // label -> its set in vert_
  std::vector<uint64_t> count_;
};

// What building the root database writes, kept with the rest of a thread's scratch (RootScratch).
struct RootBuffers {
  Database db;
  MergingWriter writer;
  HugeVector<int32_t> rows, len;  // with 2+ threads: the relabelled rows before merging, and hashes
  HugeVector<uint64_t> hash;

  size_t bytes() const { return db.bytes() + writer.bytes() + capacity_bytes(rows, len, hash); }
};

// The root database: supports counted on the caller's rows (a repeated item once per row), then
// each row cut to its frequent items, relabelled in decreasing support and merged with identical
// rows in one pass (forest paths filtered by epsilon collapse to a few distinct rows). Rows over at
// most kBitsetLabels labels are sorted and deduplicated by setting bits and reading them back.
// Items are read through dense ids: id_at(j) for occurrence j, value_of(id) its item, n_ids ids,
// ascending with the items (so ties in support keep item order).
template <class IdAt, class ValueOf>
void root_database(const CsrView<int64_t>& tx, double min_support, int64_t n_ids, IdAt id_at, ValueOf value_of,
                   int n_threads, RootBuffers& out) {
  const int64_t n_occ = tx.n > 0 ? tx.indptr[tx.n] : 0;
  std::vector<double> support(static_cast<size_t>(n_ids), 0.0);
  {
    std::vector<int64_t> seen(static_cast<size_t>(n_ids), -1);  // the last row counting each id
    if (tx.weights) {
      for (int64_t t = 0; t < tx.n; ++t) {
        const double w = tx.weights[t];
        for (int64_t j = tx.indptr[t]; j < tx.indptr[t + 1]; ++j) {
          const int32_t id = id_at(j);
          if (seen[id] != t) {
            seen[id] = t;
            support[id] += w;
          }
        }
      }
    } else {  // counts: integer additions, no branch
      std::vector<int64_t> count(static_cast<size_t>(n_ids), 0);
      for (int64_t t = 0; t < tx.n; ++t)
        for (int64_t j = tx.indptr[t]; j < tx.indptr[t + 1]; ++j) {
          const int32_t id = id_at(j);
          count[id] += seen[id] != t;
          seen[id] = t;
        }
      std::copy(count.begin(), count.end(), support.begin());
    }
  }
  std::vector<int32_t> order;
  for (int32_t id = 0; id < n_ids; ++id)
    if (support[id] >= min_support) order.push_back(id);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return support[a] > support[b]; });
  Database& db = out.db;
  db.clear();
  std::vector<int32_t> label(static_cast<size_t>(n_ids), -1);
  for (const int32_t id : order) {
    label[id] = db.n_labels();
    db.support.push_back(support[id]);
    db.item_of.push_back(value_of(id));
  }

  // Row t relabelled (frequent labels only, ascending, once each) into out, its hash into *hash;
  // returns the end. Rows over at most kBitsetLabels labels are sorted and deduplicated by setting
  // bits and reading them back, and hashed by their words (equal rows have equal words).
  constexpr int32_t kBitsetLabels = 1024;
  static_assert(kBitsetLabels < 64 * 64, "a row's words and the infrequent ids' are flagged in one 64-bit word");
  const int32_t n_words = (db.n_labels() + 63) / 64;
  // For the bit sets, the infrequent ids' label is a bit on the word past the labels' (n_words),
  // set and dropped: no branch per item on whether it is frequent.
  if (db.n_labels() <= kBitsetLabels) std::replace(label.begin(), label.end(), -1, 64 * n_words);
  auto relabel = [&](int64_t t, int32_t* out, uint64_t* bits, uint64_t* hash) {
    int32_t* const first = out;
    if (db.n_labels() <= kBitsetLabels) {
      uint64_t words = 0;  // the words holding a label: only they are read back, hashed and cleared
      for (int64_t j = tx.indptr[t]; j < tx.indptr[t + 1]; ++j) {
        const int32_t b = label[id_at(j)];
        bits[b >> 6] |= uint64_t{1} << (b & 63);
        words |= uint64_t{1} << (b >> 6);
      }
      words &= ~(uint64_t{1} << n_words);
      bits[n_words] = 0;
      uint64_t h = words;
      for (; words; words &= words - 1) {
        const int k = __builtin_ctzll(words);
        h = (h ^ bits[k]) * 0x9e3779b97f4a7c15ULL;
        for (uint64_t x = bits[k]; x; x &= x - 1) *out++ = 64 * k + __builtin_ctzll(x);
        bits[k] = 0;
      }
      h ^= h >> 29;
      h *= 0xbf58476d1ce4e5b9ULL;
      *hash = h ^ (h >> 32);
    } else {
      for (int64_t j = tx.indptr[t]; j < tx.indptr[t + 1]; ++j)
        if (label[id_at(j)] >= 0) *out++ = label[id_at(j)];
      std::sort(first, out);
      out = std::unique(first, out);
      *hash = row_hash(first, out - first);
    }
    return out;
  };

  MergingWriter& writer = out.writer;
  writer.open(db, tx.n, n_occ);
  constexpr int64_t kBlock = 4096;
  if (n_threads > 1 && tx.n > kBlock) {
    // Rows relabelled and hashed in parallel, each in place of its input (a row only shrinks),
    // then merged in order, each row's first hash slot fetched kAhead rows before it is merged.
    HugeVector<int32_t>& rows = out.rows;
    HugeVector<int32_t>& len = out.len;
    HugeVector<uint64_t>& hash = out.hash;
    rows.resize(static_cast<size_t>(n_occ));
    len.resize(static_cast<size_t>(tx.n));
    hash.resize(static_cast<size_t>(tx.n));
    parallel_for((tx.n + kBlock - 1) / kBlock, n_threads, [&](int) { return std::vector<uint64_t>(n_words + 1, 0); },
                 [&](int64_t b, int, std::vector<uint64_t>& bits) {
                   for (int64_t t = b * kBlock; t < std::min(tx.n, (b + 1) * kBlock); ++t) {
                     int32_t* first = rows.data() + tx.indptr[t];
                     len[t] = static_cast<int32_t>(relabel(t, first, bits.data(), &hash[t]) - first);
                   }
                 });
    constexpr int64_t kAhead = 16;
    for (int64_t t = 0; t < tx.n; ++t) {
      if (t + kAhead < tx.n) writer.prefetch(hash[t + kAhead]);
      if (len[t] > 0) writer.add(rows.data() + tx.indptr[t], len[t], tx.weight(t), hash[t]);
    }
    return;
  }
  // One thread: rows are relabelled a batch at a time (in cache) and their first hash slots
  // prefetched before merging.
  constexpr int64_t kBatch = 32;
  std::vector<int32_t> batch;
  std::array<int64_t, kBatch + 1> bound{};
  std::array<uint64_t, kBatch> hash{};
  std::vector<uint64_t> bits(static_cast<size_t>(n_words) + 1, 0);
  for (int64_t t0 = 0; t0 < tx.n; t0 += kBatch) {
    const int64_t n_batch = std::min(kBatch, tx.n - t0);
    batch.resize(static_cast<size_t>(tx.indptr[t0 + n_batch] - tx.indptr[t0]));
    int32_t* out = batch.data();
    for (int64_t b = 0; b < n_batch; ++b) {
      out = relabel(t0 + b, out, bits.data(), &hash[b]);
      bound[b + 1] = out - batch.data();
      writer.prefetch(hash[b]);
    }
    for (int64_t b = 0; b < n_batch; ++b)
      if (bound[b + 1] > bound[b])
        writer.add(batch.data() + bound[b], bound[b + 1] - bound[b], tx.weight(t0 + b), hash[b]);
  }
}

// Items spanning a small range are their own ids (item - smallest); others are numbered through a
// sorted copy.
void root_database(const CsrView<int64_t>& tx, double min_support, int n_threads, RootBuffers& out) {
  const int64_t n_occ = tx.n > 0 ? tx.indptr[tx.n] : 0;
  if (n_occ == 0)
    return root_database(tx, min_support, 0, [](int64_t) { return 0; }, [](int32_t) { return int64_t{0}; }, 1, out);
  const int64_t* items = tx.items;
  // Four independent minima and maxima: one pair would wait on each comparison in turn.
  std::array<int64_t, 4> lo4{}, hi4{};
  lo4.fill(items[0]);
  hi4.fill(items[0]);
  int64_t j = 0;
  for (; j + 4 <= n_occ; j += 4)
    for (int k = 0; k < 4; ++k) {
      lo4[k] = std::min(lo4[k], items[j + k]);
      hi4[k] = std::max(hi4[k], items[j + k]);
    }
  for (; j < n_occ; ++j) {
    lo4[0] = std::min(lo4[0], items[j]);
    hi4[0] = std::max(hi4[0], items[j]);
  }
  const int64_t lo = *std::min_element(lo4.begin(), lo4.end()), hi = *std::max_element(hi4.begin(), hi4.end());
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span < static_cast<uint64_t>(std::max<int64_t>(n_occ, int64_t{1} << 16)))
    return root_database(
        tx, min_support, static_cast<int64_t>(span) + 1,
        [&](int64_t j) { return static_cast<int32_t>(static_cast<uint64_t>(items[j]) - static_cast<uint64_t>(lo)); },
        [&](int32_t id) { return static_cast<int64_t>(static_cast<uint64_t>(lo) + static_cast<uint64_t>(id)); }, n_threads,
        out);
  HugeVector<int64_t> values(items, items + n_occ);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  HugeVector<int32_t> ids(static_cast<size_t>(n_occ));
  for (int64_t j = 0; j < n_occ; ++j)
    ids[j] = static_cast<int32_t>(std::lower_bound(values.begin(), values.end(), items[j]) - values.begin());
  return root_database(
      tx, min_support, static_cast<int64_t>(values.size()), [&](int64_t j) { return ids[j]; },
      [&](int32_t id) { return values[id]; }, n_threads, out);
}

// The root database with what built it, its bit sets and occurrence index, kept by the calling
// thread from one call to the next when at most kKeptBytes: repeated calls then reuse their pages.
// Freed and allocated afresh, they were faulted in again on every call whenever the allocator had
// handed the freed top of the heap back to the system: about 900 page faults, 20% of a basket call
// from Python, for the bit sets and index; with those kept, 820 a call (a quarter of it) still came
// from the database and the caller's rows in a process that had fitted a forest since.
struct RootScratch {
  RootBuffers root;
  RootBits bits;
  Occurrences occ;
  static constexpr size_t kKeptBytes = size_t{16} << 20;

  static RootScratch& of_this_thread() {
    static thread_local RootScratch scratch;
    return scratch;
  }
  // Releases everything when over the limit as a call ends (however it ends).
  struct Trim {
    RootScratch& s;
    ~Trim() {
      if (s.root.bytes() + s.bits.bytes() + s.occ.bytes() > kKeptBytes) {
        s.root = RootBuffers{};
        s.bits.release();
        s.occ.release();
      }
    }
  };
};

}  // namespace

Itemsets frequent_itemsets(const CsrView<int64_t>& tx, const ItemsetOptions& options, int n_threads) {
  if (!(options.min_support > 0.0)) throw std::invalid_argument("min_support must be > 0");
  if (options.max_size < 1) throw std::invalid_argument("max_size must be >= 1");
  RootScratch& scratch = RootScratch::of_this_thread();  // workers see it through these references
  const RootScratch::Trim trim{scratch};
  root_database(tx, options.min_support, n_threads, scratch.root);
  const Database& root = scratch.root.db;
  RootBits& bits = scratch.bits;
  const bool use_bits = root.n_labels() <= kMaxBitLabels && options.max_size >= 2;
  const bool use_pairs = use_bits || (root.n_labels() <= kMaxPairLabels && options.max_size >= 2 &&
                                      bits.build(root, n_threads, false));
  if (use_bits) bits.build(root, n_threads, true);
  // Positions within rows are read only by branches mined from rows: without the pair table, or
  // those keeping more than 64 labels with itemsets of 3 or more wanted.
  bool positions = !use_pairs;
  for (int32_t e = 0, m = root.n_labels(); use_pairs && options.max_size > 2 && !positions && e < m; ++e)
    positions = std::count_if(bits.pairs_of(e), bits.pairs_of(e) + e,
                              [&](double v) { return v >= options.min_support; }) > 64;
  Occurrences& occ = scratch.occ;
  occ.build(root, positions);
  std::vector<Itemsets> branches(static_cast<size_t>(root.n_labels()));
  std::atomic<int64_t> emitted{0};
  const CountFn count_and = pick_count_and();
  // Rarer labels (larger e) project more of each transaction: hand them out first.
  parallel_for(
      root.n_labels(), n_threads, [&](int) { return Miner(options, emitted, count_and); },
      [&](int64_t task, int, Miner& miner) {
        const auto e = static_cast<int32_t>(root.n_labels() - 1 - task);
        miner.branch(root, occ, use_pairs ? &bits : nullptr, e, branches[e]);
      });
  Itemsets out;
  for (const Itemsets& b : branches) {
    const int64_t offset = out.indptr.back();
    for (size_t i = 1; i < b.indptr.size(); ++i) out.indptr.push_back(offset + b.indptr[i]);
    out.items.insert(out.items.end(), b.items.begin(), b.items.end());
    out.support.insert(out.support.end(), b.support.begin(), b.support.end());
  }
  return out;
}

}  // namespace pyinterp
