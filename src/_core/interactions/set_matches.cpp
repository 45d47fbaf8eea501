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
  const PostingIndex index(rows);
  std::vector<double> sums(static_cast<size_t>(queries.n * n_values), 0.0);
  parallel_for(queries.n, n_threads, [](int) { return Scratch{}; }, [&](int64_t q, int, Scratch& s) {
    index.match(queries, q, s.query, s.rows, s.merged);
    double* out = sums.data() + q * n_values;
    for (const int64_t r : s.rows)
      for (int64_t j = 0; j < n_values; ++j) out[j] += values[r * n_values + j];
  });
  return sums;
}

}  // namespace pyinterp
