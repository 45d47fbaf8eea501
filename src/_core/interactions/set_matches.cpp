#include "set_matches.hpp"

#include <algorithm>
#include <numeric>

#include "../common/parallel.hpp"

namespace pyinterp {
namespace {

// Posting lists: the rows holding each code, ascending (a counting sort over the rows).
class PostingIndex {
 public:
  explicit PostingIndex(const CsrView<int32_t>& rows) : n_rows_(rows.n) {
    const int64_t n_entries = rows.n > 0 ? rows.indptr[rows.n] : 0;
    for (int64_t j = 0; j < n_entries; ++j) n_codes_ = std::max(n_codes_, rows.items[j] + 1);
    begin_.assign(static_cast<size_t>(n_codes_) + 1, 0);
    for (int64_t j = 0; j < n_entries; ++j) ++begin_[rows.items[j] + 1];
    std::partial_sum(begin_.begin(), begin_.end(), begin_.begin());
    posting_.resize(static_cast<size_t>(n_entries));
    std::vector<int64_t> next(begin_.begin(), begin_.end() - 1);
    for (int64_t r = 0; r < rows.n; ++r)
      for (int64_t j = rows.indptr[r]; j < rows.indptr[r + 1]; ++j) posting_[next[rows.items[j]]++] = r;
  }

  // The ascending rows containing every code of query q (scratch vectors reused by the caller).
  void match(const CsrView<int32_t>& queries, int64_t q, std::vector<int32_t>& query, std::vector<int64_t>& out,
             std::vector<int64_t>& merged) const {
    query.assign(queries.items + queries.indptr[q], queries.items + queries.indptr[q + 1]);
    std::sort(query.begin(), query.end());
    query.erase(std::unique(query.begin(), query.end()), query.end());
    out.clear();
    if (query.empty()) {
      out.resize(static_cast<size_t>(n_rows_));
      std::iota(out.begin(), out.end(), int64_t{0});
      return;
    }
    if (std::any_of(query.begin(), query.end(), [&](int32_t c) { return c < 0 || c >= n_codes_; })) return;
    std::sort(query.begin(), query.end(), [&](int32_t a, int32_t b) { return length(a) < length(b); });
    out.assign(posting_.begin() + begin_[query[0]], posting_.begin() + begin_[query[0] + 1]);
    for (size_t i = 1; i < query.size() && !out.empty(); ++i) {
      merged.clear();
      std::set_intersection(out.begin(), out.end(), posting_.begin() + begin_[query[i]],
                            posting_.begin() + begin_[query[i] + 1], std::back_inserter(merged));
      out.swap(merged);
    }
  }

 private:
  int64_t length(int32_t code) const { return begin_[code + 1] - begin_[code]; }

  int64_t n_rows_;
  int32_t n_codes_ = 0;
  std::vector<int64_t> begin_, posting_;
};

// For queries that use at most 64 distinct codes (iRF's candidates and their subsets): a bit per
// such code, each row's bits, and posting lists of those codes only, built in one pass over the
// rows' codes and one over their bits. A query's rows are its rarest code's rows whose bits cover
// the query's, ascending as the merge of the posting lists gives them, without merging long lists.
class QueryIndex {
 public:
  // usable() is false when the queries use more than 64 codes.
  QueryIndex(const CsrView<int32_t>& rows, const CsrView<int32_t>& queries) {
    int32_t largest = -1;
    for (int64_t j = 0; j < queries.indptr[queries.n]; ++j) largest = std::max(largest, queries.items[j]);
    slot_.assign(static_cast<size_t>(largest) + 1, -1);
    for (int64_t j = 0; j < queries.indptr[queries.n]; ++j) {
      const int32_t c = queries.items[j];
      if (c < 0 || slot_[c] >= 0) continue;
      if (n_slots_ == 64) {
        n_slots_ = -1;
        return;
      }
      slot_[c] = static_cast<int8_t>(n_slots_++);
    }
    bits_.assign(static_cast<size_t>(rows.n), 0);
    begin_.assign(static_cast<size_t>(n_slots_) + 1, 0);
    for (int64_t r = 0; r < rows.n; ++r)
      for (int64_t j = rows.indptr[r]; j < rows.indptr[r + 1]; ++j) {
        const int32_t c = rows.items[j];
        if (c < 0 || c > largest || slot_[c] < 0) continue;
        bits_[r] |= uint64_t{1} << slot_[c];
        ++begin_[slot_[c] + 1];
      }
    std::partial_sum(begin_.begin(), begin_.end(), begin_.begin());
    posting_.resize(static_cast<size_t>(begin_.back()));
    std::vector<int64_t> next(begin_.begin(), begin_.end() - 1);
    for (int64_t r = 0; r < rows.n; ++r)
      for (uint64_t b = bits_[r]; b != 0; b &= b - 1) posting_[next[__builtin_ctzll(b)]++] = r;
  }

  bool usable() const { return n_slots_ >= 0; }

  // f(row) for the ascending rows holding every code of the non-empty query [first, last).
  template <class F>
  void for_each_match(const int32_t* first, const int32_t* last, F f) const {
    uint64_t want = 0;
    int rarest = -1;
    for (const int32_t* c = first; c != last; ++c) {
      if (*c < 0) return;  // no row holds a negative code
      const int s = slot_[*c];
      want |= uint64_t{1} << s;
      if (rarest < 0 || begin_[s + 1] - begin_[s] < begin_[rarest + 1] - begin_[rarest]) rarest = s;
    }
    for (int64_t k = begin_[rarest]; k < begin_[rarest + 1]; ++k)
      if ((bits_[posting_[k]] & want) == want) f(posting_[k]);
  }

 private:
  int n_slots_ = 0;
  std::vector<int8_t> slot_;  // per code up to the queries' largest: its bit, or -1
  std::vector<uint64_t> bits_;  // per row
  std::vector<int64_t> begin_, posting_;  // per bit: the rows holding its code, ascending
};

struct Scratch {
  std::vector<int32_t> query;
  std::vector<int64_t> rows, merged;
};

}  // namespace

SetMatches match_sets(const CsrView<int32_t>& rows, const CsrView<int32_t>& queries) {
  const PostingIndex index(rows);
  SetMatches out;
  Scratch s;
  for (int64_t q = 0; q < queries.n; ++q) {
    index.match(queries, q, s.query, s.rows, s.merged);
    out.rows.insert(out.rows.end(), s.rows.begin(), s.rows.end());
    out.indptr.push_back(static_cast<int64_t>(out.rows.size()));
  }
  return out;
}

std::vector<double> match_sums(const CsrView<int32_t>& rows, const CsrView<int32_t>& queries, const double* values, int64_t n_values,
                               int n_threads) {
  std::vector<double> sums(static_cast<size_t>(queries.n * n_values), 0.0);
  auto add = [&](double* out, int64_t r) {
    for (int64_t j = 0; j < n_values; ++j) out[j] += values[r * n_values + j];
  };
  const QueryIndex few(rows, queries);
  if (few.usable()) {
    parallel_for(queries.n, n_threads, no_state, [&](int64_t q, int, NoState&) {
      double* out = sums.data() + q * n_values;
      const int32_t *first = queries.items + queries.indptr[q], *last = queries.items + queries.indptr[q + 1];
      if (first == last) {  // the empty set: every row
        for (int64_t r = 0; r < rows.n; ++r) add(out, r);
      } else {
        few.for_each_match(first, last, [&](int64_t r) { add(out, r); });
      }
    });
    return sums;
  }
  const PostingIndex index(rows);
  parallel_for(queries.n, n_threads, [](int) { return Scratch{}; }, [&](int64_t q, int, Scratch& s) {
    index.match(queries, q, s.query, s.rows, s.merged);
    for (const int64_t r : s.rows) add(sums.data() + q * n_values, r);
  });
  return sums;
}

}  // namespace pyinterp
