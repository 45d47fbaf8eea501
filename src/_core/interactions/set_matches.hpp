// Which rows of a CSR collection of sorted code sets contain each query set: posting lists per
// code, intersected from the shortest. Used for DWP of given sets, per-sample path prevalence and
// iRF's leaf scores.
#pragma once
#include <cstdint>
#include <vector>

#include "../common/csr.hpp"

namespace pyinterp {

// For query q, the ascending rows r with queries[q] a subset of rows[r] are out.rows[out.indptr[q]:
// out.indptr[q + 1]]; the empty query matches every row. Queries need not be sorted.
struct SetMatches {
  std::vector<int64_t> indptr{0};
  std::vector<int64_t> rows;
};

SetMatches match_sets(const CsrView<int32_t>& rows, const CsrView<int32_t>& queries);

// sums[q * n_values + j] = sum over the rows matching query q of values[row * n_values + j], the
// rows taken in ascending order (so the result does not depend on n_threads).
std::vector<double> match_sums(const CsrView<int32_t>& rows, const CsrView<int32_t>& queries, const double* values, int64_t n_values,
                               int n_threads);

}  // namespace pyinterp
