#include "set_matches.hpp"

#include <algorithm>
#include <numeric>

namespace pyinterp {

SetMatches match_sets(const CsrView& rows, const CsrView& queries) {
  int32_t n_codes = 0;
  const int64_t n_entries = rows.n > 0 ? rows.indptr[rows.n] : 0;
  for (int64_t j = 0; j < n_entries; ++j) n_codes = std::max(n_codes, rows.codes[j] + 1);
  // Posting lists: rows holding each code, ascending, by a counting sort.
  std::vector<int64_t> begin(static_cast<size_t>(n_codes) + 1, 0);
  for (int64_t j = 0; j < n_entries; ++j) ++begin[rows.codes[j] + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<int64_t> posting(static_cast<size_t>(n_entries)), next(begin.begin(), begin.end() - 1);
  for (int64_t r = 0; r < rows.n; ++r)
    for (int64_t j = rows.indptr[r]; j < rows.indptr[r + 1]; ++j) posting[next[rows.codes[j]]++] = r;

  SetMatches out;
  std::vector<int32_t> query;
  std::vector<int64_t> current, merged;
  for (int64_t q = 0; q < queries.n; ++q) {
    query.assign(queries.codes + queries.indptr[q], queries.codes + queries.indptr[q + 1]);
    std::sort(query.begin(), query.end());
    query.erase(std::unique(query.begin(), query.end()), query.end());
    const bool unknown = std::any_of(query.begin(), query.end(), [&](int32_t c) { return c < 0 || c >= n_codes; });
    if (query.empty()) {
      current.resize(static_cast<size_t>(rows.n));
      std::iota(current.begin(), current.end(), int64_t{0});
    } else if (unknown) {
      current.clear();
    } else {
      std::sort(query.begin(), query.end(),
                [&](int32_t a, int32_t b) { return begin[a + 1] - begin[a] < begin[b + 1] - begin[b]; });
      current.assign(posting.begin() + begin[query[0]], posting.begin() + begin[query[0] + 1]);
      for (size_t i = 1; i < query.size() && !current.empty(); ++i) {
        merged.clear();
        std::set_intersection(current.begin(), current.end(), posting.begin() + begin[query[i]],
                              posting.begin() + begin[query[i] + 1], std::back_inserter(merged));
        current.swap(merged);
      }
    }
    out.rows.insert(out.rows.end(), current.begin(), current.end());
    out.indptr.push_back(static_cast<int64_t>(out.rows.size()));
  }
  return out;
}

}  // namespace pyinterp
