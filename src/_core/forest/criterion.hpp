// The split criteria, one home for every impurity formula: the node impurity of the fitted tree
// (from its rows) and of out-of-bag sums (naive-oob), the mixed in-bag / out-of-bag impurity (UFI),
// and the running statistics of a candidate split with their proxy score (larger is better; equal
// to the impurity decrease up to terms that do not depend on the split). A new criterion is a
// value of Criterion, its cases in the functions below, its split statistics and its case in
// visit_split_stats. Positions index a node's local arrays; codes index the per-code histograms of
// the counting search.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace pyinterp {

// Regression: squared_error (variance). Classification: gini, entropy (log2). The out-of-bag
// measures read a regression forest's impurity as variance, which is also the one-hot Gini of
// classes (thesis eq. 8.19).
enum class Criterion { squared_error, gini, entropy };
// Names in enum order: the Python enum and the pickled state use them.
constexpr const char* kCriterionNames[] = {"squared_error", "gini", "entropy"};

inline bool is_classification(Criterion c) { return c != Criterion::squared_error; }

inline double plogp(double p) { return p > 0.0 ? p * std::log2(p) : 0.0; }

// Gini or entropy of the class fractions fraction(0), ..., fraction(n_classes - 1).
template <class Fraction>
double class_impurity(Criterion c, int32_t n_classes, Fraction fraction) {
  double h = c == Criterion::entropy ? 0.0 : 1.0;
  for (int32_t k = 0; k < n_classes; ++k) {
    const double p = fraction(k);
    h -= c == Criterion::entropy ? plogp(p) : p * p;
  }
  return std::max(h, 0.0);
}

// A node's weight, impurity and value (mean, or class fractions) from its rows: two passes for
// squared error, so a pure node is exactly 0.
struct NodeStats {
  double weight = 0.0;
  double impurity = 0.0;
};
inline NodeStats node_stats(Criterion c, const uint32_t* rows, int64_t m, const double* w, const double* y,
                            const int32_t* classes, int32_t n_values, double* value) {
  NodeStats s;
  if (!is_classification(c)) {
    double sum = 0.0;
    for (int64_t k = 0; k < m; ++k) {
      s.weight += w[rows[k]];
      sum += w[rows[k]] * y[rows[k]];
    }
    const double mean = sum / s.weight;
    double sq = 0.0;
    for (int64_t k = 0; k < m; ++k) {
      const double d = y[rows[k]] - mean;
      sq += w[rows[k]] * d * d;
    }
    s.impurity = sq / s.weight;
    value[0] = mean;
    return s;
  }
  std::fill(value, value + n_values, 0.0);
  for (int64_t k = 0; k < m; ++k) {
    value[classes[rows[k]]] += w[rows[k]];
    s.weight += w[rows[k]];
  }
  for (int32_t v = 0; v < n_values; ++v) value[v] /= s.weight;
  s.impurity = class_impurity(c, n_values, [value](int32_t k) { return value[k]; });
  return s;
}

// Impurity of a node from weighted sums over some rows (its out-of-bag rows): w their weight, wy
// the weighted sum of their targets (one-hot for classes, n_values entries), wyy of their squared
// norms.
inline double impurity_of_sums(Criterion c, double w, const double* wy, double wyy, int32_t n_values) {
  if (!is_classification(c)) {
    double sq = 0.0;
    for (int32_t v = 0; v < n_values; ++v) sq += (wy[v] / w) * (wy[v] / w);
    return std::max(wyy / w - sq, 0.0);
  }
  return class_impurity(c, n_values, [wy, w](int32_t k) { return wy[k] / w; });
}

// Zhou & Hooker's impurity mixing the in-bag node value mu with the mean of the sums (UFI): for
// variance and Gini E'|y|^2 - <mu, mu'> (= 1 - sum_k p_k p'_k for classes); for entropy the
// symmetrised cross-entropy -(1/2) sum_k (p_k log p'_k + p'_k log p_k) over classes present in both.
inline double mixed_impurity(Criterion c, const double* mu, double w, const double* wy, double wyy, int32_t n_values) {
  if (c == Criterion::entropy) {
    double h = 0.0;
    for (int32_t v = 0; v < n_values; ++v) {
      const double q = wy[v] / w;
      if (mu[v] > 0.0 && q > 0.0) h -= 0.5 * (mu[v] * std::log2(q) + q * std::log2(mu[v]));
    }
    return h;
  }
  double cross = 0.0;
  for (int32_t v = 0; v < n_values; ++v) cross += mu[v] * (wy[v] / w);
  return wyy / w - cross;
}

constexpr double kNoSplit = -std::numeric_limits<double>::infinity();

inline double xlogx(double x) { return x > 0.0 ? x * std::log(x) : 0.0; }

// Class signature of a group of rows with equal code: the class if all rows share one, else
// kMixed. Without leaf-size limits, classification scans skip boundaries between two groups pure
// in the same class: for Gini and entropy the best split never lies strictly inside such a run
// (Breiman et al. 1984, Fayyad & Irani 1992), so the optimum is unchanged and most candidates are
// never scored.
constexpr int32_t kEmpty = -2;
constexpr int32_t kMixed = -1;

inline int32_t merge_class(int32_t signature, int32_t k) {
  return (signature == kEmpty || signature == k) ? k : kMixed;
}

// Squared error. lwy holds w * (y - node mean): centring keeps the proxy well conditioned.
struct RegressionStats {
  static constexpr bool kClasses = false;
  const double* lw;
  const double* lwy;
  double* hist_w;
  double* hist_s;
  double total_w = 0.0, total_s = 0.0;
  double wl = 0.0, sl = 0.0;

  void reset() { wl = sl = 0.0; }
  void add(int64_t pos) {
    wl += lw[pos];
    sl += lwy[pos];
  }
  void hist_add(uint32_t c, int64_t pos) {
    hist_w[c] += lw[pos];
    hist_s[c] += lwy[pos];
  }
  void hist_peek(uint32_t c) {
    wl += hist_w[c];
    sl += hist_s[c];
  }
  void hist_take(uint32_t c) {
    hist_peek(c);
    hist_w[c] = hist_s[c] = 0.0;
  }
  void hist_clear(uint32_t c) { hist_w[c] = hist_s[c] = 0.0; }
  int32_t bucket_class(uint32_t) const { return kMixed; }
  int32_t row_class(int64_t) const { return kMixed; }
  double proxy() const {
    const double wr = total_w - wl;
    if (wr <= 0.0 || wl <= 0.0) return kNoSplit;
    const double sr = total_s - sl;
    return sl * sl / wl + sr * sr / wr;
  }
};

// Gini (Entropy = false) or Shannon entropy (Entropy = true) over n_classes classes.
template <bool Entropy>
struct ClassStats {
  static constexpr bool kClasses = true;
  const double* lw;
  const int32_t* lc;
  int32_t* hist_class;  // per code: class signature (kEmpty when unused)
  double* hist;         // n_codes x n_classes
  double* left;         // n_classes
  const double* total;  // n_classes
  int32_t n_classes;
  double total_w = 0.0, wl = 0.0;

  void reset() {
    wl = 0.0;
    for (int32_t k = 0; k < n_classes; ++k) left[k] = 0.0;
  }
  void add(int64_t pos) {
    left[lc[pos]] += lw[pos];
    wl += lw[pos];
  }
  void hist_add(uint32_t c, int64_t pos) {
    hist[static_cast<int64_t>(c) * n_classes + lc[pos]] += lw[pos];
    hist_class[c] = merge_class(hist_class[c], lc[pos]);
  }
  int32_t bucket_class(uint32_t c) const { return hist_class[c]; }
  int32_t row_class(int64_t pos) const { return lc[pos]; }
  // Adds bin c to the left side; Clear also empties the bin.
  template <bool Clear = false>
  void hist_peek(uint32_t c) {
    if (Clear) hist_class[c] = kEmpty;
    // Restrict-qualified locals let the compiler keep the running sum in a register.
    double* __restrict h = hist + static_cast<int64_t>(c) * n_classes;
    double* __restrict l = left;
    double taken = 0.0;
    for (int32_t k = 0; k < n_classes; ++k) {
      l[k] += h[k];
      taken += h[k];
      if (Clear) h[k] = 0.0;
    }
    wl += taken;
  }
  void hist_take(uint32_t c) { hist_peek<true>(c); }
  void hist_clear(uint32_t c) {
    hist_class[c] = kEmpty;
    double* h = hist + static_cast<int64_t>(c) * n_classes;
    for (int32_t k = 0; k < n_classes; ++k) h[k] = 0.0;
  }
  double proxy() const {
    const double wr = total_w - wl;
    if (wr <= 0.0 || wl <= 0.0) return kNoSplit;
    double score = 0.0;
    if (Entropy) {
      for (int32_t k = 0; k < n_classes; ++k) score += xlogx(left[k]) + xlogx(total[k] - left[k]);
      return score - xlogx(wl) - xlogx(wr);
    }
    double sq_left = 0.0, sq_right = 0.0;
    for (int32_t k = 0; k < n_classes; ++k) {
      const double r = total[k] - left[k];
      sq_left += left[k] * left[k];
      sq_right += r * r;
    }
    return sq_left / wl + sq_right / wr;
  }
};

// fn(tag) with tag.type the split statistics of criterion c, so the split search is compiled once
// per criterion.
template <class T>
struct StatsTag {
  using type = T;
};
template <class Fn>
void visit_split_stats(Criterion c, Fn&& fn) {
  switch (c) {
    case Criterion::squared_error: return fn(StatsTag<RegressionStats>{});
    case Criterion::gini: return fn(StatsTag<ClassStats<false>>{});
    case Criterion::entropy: return fn(StatsTag<ClassStats<true>>{});
  }
  throw std::invalid_argument("unknown criterion");
}

}  // namespace pyinterp
