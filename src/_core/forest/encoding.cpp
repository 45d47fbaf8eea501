#include "encoding.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "parallel.hpp"

namespace pyinterp {
namespace {

template <class Code>
void write_codes(std::vector<uint8_t>& out, const std::vector<uint32_t>& ranks) {
  out.resize(ranks.size() * sizeof(Code));
  Code* codes = reinterpret_cast<Code*>(out.data());
  for (size_t i = 0; i < ranks.size(); ++i) codes[i] = static_cast<Code>(ranks[i]);
}

struct EncodeScratch {
  std::vector<std::pair<double, uint32_t>> order;
  std::vector<uint32_t> ranks;
};

}  // namespace

ColumnCodes::ColumnCodes(const MatrixView& X, int n_threads)
    : n_rows_(X.n_rows), columns_(X.n_cols), width_(X.n_cols), n_codes_(X.n_cols) {
  if (X.n_rows <= 0 || X.n_cols <= 0) throw std::invalid_argument("X must have at least one row and one column");
  if (X.n_rows > static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
    throw std::invalid_argument("X has more than 2^32 - 1 rows, the engine's limit");

  const int64_t n = X.n_rows;
  parallel_for(
      X.n_cols, n_threads,
      [n](int) {
        EncodeScratch s;
        s.order.resize(n);
        s.ranks.resize(n);
        return s;
      },
      [&](int64_t j, int, EncodeScratch& s) {
        for (int64_t i = 0; i < n; ++i) {
          const double v = X.at(i, j);
          if (!std::isfinite(v))
            throw std::invalid_argument("X contains NaN or infinity (column " + std::to_string(j) + ")");
          s.order[i] = {v, static_cast<uint32_t>(i)};
        }
        std::sort(s.order.begin(), s.order.end());
        uint32_t rank = 0;
        for (int64_t k = 0; k < n; ++k) {
          if (k > 0 && s.order[k].first != s.order[k - 1].first) ++rank;
          s.ranks[s.order[k].second] = rank;
        }
        const uint32_t n_distinct = rank + 1;
        n_codes_[j] = n_distinct;
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
      });
  max_n_codes_ = *std::max_element(n_codes_.begin(), n_codes_.end());
}

}  // namespace pyinterp
