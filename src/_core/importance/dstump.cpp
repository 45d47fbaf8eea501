#include "dstump.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "../data/column_codes.hpp"
#include "../common/parallel.hpp"

namespace pyinterp {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

struct Sums {
  double w = 0.0, s = 0.0, q = 0.0;  // weight, weighted sum and weighted sum of squares of centred y
  int64_t n = 0;
};

// Frequency-weighted variance with ddof 1, or NaN when undefined.
double variance_ddof1(const Sums& a) {
  if (a.w <= 1.0) return std::numeric_limits<double>::quiet_NaN();
  return std::max(a.q - a.s * a.s / a.w, 0.0) / (a.w - 1.0);
}

struct Worker {
  std::vector<Sums> bins;
  std::vector<int64_t> rep;  // a row holding each code, to read thresholds back from X
};

template <class Column>
void stump(Column col, uint32_t n_codes, int64_t j, const ColumnSource& X, const std::vector<double>& yc,
           const double* sw, StumpSplit split, StumpSide side, Worker& wk, StumpTable& out) {
  const int64_t n = X.n_rows();
  auto& bins = wk.bins;
  // Rows missing the feature (code n_codes) fill a last bin that the stump leaves out.
  bins.assign(n_codes + 1, Sums{});
  wk.rep.resize(n_codes + 1);
  Sums total;
  for (int64_t i = 0; i < n; ++i) {
    const double w = sw ? sw[i] : 1.0;
    Sums& b = bins[col[i]];
    b.w += w;
    b.s += w * yc[i];
    b.q += w * yc[i] * yc[i];
    ++b.n;
    wk.rep[col[i]] = i;
  }
  for (uint32_t c = 0; c < n_codes; ++c) {
    const Sums& b = bins[c];
    total.w += b.w;
    total.s += b.s;
    total.q += b.q;
    total.n += b.n;
  }
  auto decrease = [&](const Sums& l) {
    const double wr = total.w - l.w, sr = total.s - l.s;
    return (l.s * l.s / l.w + sr * sr / wr - total.s * total.s / total.w) / total.w;
  };
  // Choose the boundary: after code `best_code`, with left sums `left`.
  int64_t best_code = -1;
  Sums left, running;
  double best_value = kNone;
  for (uint32_t c = 0; c + 1 < n_codes; ++c) {
    running.w += bins[c].w;
    running.s += bins[c].s;
    running.q += bins[c].q;
    running.n += bins[c].n;
    if (running.w <= 0.0 || total.w - running.w <= 0.0) continue;
    const double value = split == StumpSplit::best ? decrease(running) : -std::abs(running.w - total.w / 2.0);
    if (value > best_value) {
      best_value = value;
      best_code = c;
      left = running;
    }
  }
  if (best_code < 0) {
    out.score[j] = kNone;
    out.threshold[j] = std::numeric_limits<double>::quiet_NaN();
    out.impurity_decrease[j] = 0.0;
    out.sign[j] = 0.0;
    out.n_left[j] = 0;
    return;
  }
  Sums right{total.w - left.w, total.s - left.s, total.q - left.q, total.n - left.n};
  const double gain = decrease(left);
  double score = gain;
  if (side != StumpSide::sum) {
    const double vl = variance_ddof1(left), vr = variance_ddof1(right);
    const double v = side == StumpSide::left ? vl : std::max(vl, vr);
    score = std::isnan(v) ? kNone : -v;
  }
  const double lo = X.value(wk.rep[best_code], j), hi = X.value(wk.rep[best_code + 1], j);
  const double t = lo / 2.0 + hi / 2.0;
  const double mean_gap = right.s / right.w - left.s / left.w;
  out.score[j] = score;
  out.threshold[j] = (t < hi && std::isfinite(t)) ? t : lo;
  out.impurity_decrease[j] = gain;
  out.sign[j] = mean_gap > 0.0 ? 1.0 : (mean_gap < 0.0 ? -1.0 : 0.0);
  out.n_left[j] = left.n;
}

}  // namespace

StumpTable dstump(const ColumnSource& X, const double* y, const double* sample_weight, StumpSplit split, StumpSide side,
                  int n_threads) {
  const int64_t n = X.n_rows(), p = X.n_cols();
  if (n < 2) throw std::invalid_argument("DSTUMP needs at least 2 rows");
  double sw = 0.0, sy = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double w = sample_weight ? sample_weight[i] : 1.0;
    sw += w;
    sy += w * y[i];
  }
  // Centring y keeps the sums of squares well conditioned.
  std::vector<double> yc(n);
  for (int64_t i = 0; i < n; ++i) yc[i] = y[i] - sy / sw;
  const ColumnCodes codes(X, n_threads);
  StumpTable out;
  out.score.resize(p);
  out.threshold.resize(p);
  out.impurity_decrease.resize(p);
  out.sign.resize(p);
  out.n_left.resize(p);
  parallel_for(
      p, n_threads, [](int) { return Worker{}; },
      [&](int64_t j, int, Worker& wk) {
        codes.visit_column(j, [&](auto col) {
          stump(col, codes.n_codes(j), j, X, yc, sample_weight, split, side, wk, out);
        });
      });
  return out;
}

}  // namespace pyinterp
