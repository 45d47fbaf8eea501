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
#include <utility>
#include <vector>

namespace pyinterp {

// Regression: squared_error (variance), poisson (half Poisson deviance against the mean; y >= 0),
// absolute_error (mean absolute deviation from the weighted median, which is the node's value).
// Classification: gini, entropy (log2). The out-of-bag measures read every regression forest's
// impurity as variance, which is also the one-hot Gini of classes (thesis eq. 8.19).
enum class Criterion { squared_error, gini, entropy, poisson, absolute_error };
// Names in enum order: the Python enum and the pickled state use them.
constexpr const char* kCriterionNames[] = {"squared_error", "gini", "entropy", "poisson", "absolute_error"};

inline bool is_classification(Criterion c) { return c == Criterion::gini || c == Criterion::entropy; }

// The power of y's scale in the criterion's impurity: 2 for variance, 1 for the deviances
// measured in y's units, 0 for classes.
inline int impurity_power(Criterion c) {
  if (is_classification(c)) return 0;
  return c == Criterion::squared_error ? 2 : 1;
}

// Sums below this count as zero for the Poisson deviance (scikit-learn's tolerance): a child
// whose targets sum to no more cannot be split off, since its mean prediction would be 0.
constexpr double kPoissonEpsilon = 10 * std::numeric_limits<double>::epsilon();

inline double xlogy(double x, double y) { return x == 0.0 ? 0.0 : x * std::log(y); }

// The weighted median of (y, w) pairs sorted by y, as scikit-learn takes it: the first y at which
// the cumulative weight exceeds half the total, or the midpoint of the two y around an exact half.
inline double weighted_median(const std::pair<double, double>* yw, int64_t m, double total_w) {
  const double half = 0.5 * total_w;
  double cum = 0.0;
  for (int64_t k = 0; k < m; ++k) {
    if (cum + yw[k].second > half) return (cum == half && k > 0) ? (yw[k - 1].first + yw[k].first) / 2 : yw[k].first;
    cum += yw[k].second;
  }
  return yw[m - 1].first;
}

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
// scratch: absolute_error's (y, w) pairs, resized as needed.
inline NodeStats node_stats(Criterion c, const uint32_t* rows, int64_t m, const double* w, const double* y,
                            const int32_t* classes, int32_t n_values, double* value,
                            std::vector<std::pair<double, double>>& scratch) {
  NodeStats s;
  if (c == Criterion::absolute_error) {
    scratch.resize(m);
    for (int64_t k = 0; k < m; ++k) {
      scratch[k] = {y[rows[k]], w[rows[k]]};
      s.weight += w[rows[k]];
    }
    std::sort(scratch.begin(), scratch.end());
    const double median = weighted_median(scratch.data(), m, s.weight);
    double deviation = 0.0;
    for (int64_t k = 0; k < m; ++k) deviation += scratch[k].second * std::abs(scratch[k].first - median);
    s.impurity = deviation / s.weight;
    value[0] = median;
    return s;
  }
  if (c == Criterion::poisson) {
    double sum = 0.0;
    for (int64_t k = 0; k < m; ++k) {
      s.weight += w[rows[k]];
      sum += w[rows[k]] * y[rows[k]];
    }
    const double mean = sum / s.weight;
    value[0] = mean;
    // Targets summing to zero are all zero: their deviance from the mean 0 is 0.
    if (sum <= kPoissonEpsilon) return s;
    double deviance = 0.0;
    for (int64_t k = 0; k < m; ++k) deviance += w[rows[k]] * xlogy(y[rows[k]], y[rows[k]] / mean);
    s.impurity = std::max(deviance / s.weight, 0.0);
    return s;
  }
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

// Every split statistics type declares: kClasses (rows carry classes), kCounting (the counting
// search over per-code histograms applies; else rows are always sorted by code) and kBounded (the
// builder can bound the best proxy a small node's rows allow, see TreeBuilder::stops_at_best).

// Squared error. lwy holds w * (y - node mean): centring keeps the proxy well conditioned.
struct RegressionStats {
  static constexpr bool kClasses = false;
  static constexpr bool kCounting = true;
  static constexpr bool kBounded = true;
  const double* lw;
  const double* lwy;
  double* hist_w;
  double* hist_s;
  double total_w = 0.0, total_s = 0.0;
  double wl = 0.0, sl = 0.0;
  double mean = 0.0;  // what lwy is centred on

  void reset() { wl = sl = 0.0; }
  // The mean of y on the left or right side (monotonic constraints compare them).
  double side_value(bool left) const { return mean + (left ? sl / wl : (total_s - sl) / (total_w - wl)); }
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

// Poisson: the sums as for squared error but lwy uncentred (w * y). The proxy is the deviance
// decrease up to terms fixed by the node: sum_side S log(S / W) over both sides.
struct PoissonStats : RegressionStats {
  static constexpr bool kBounded = false;
  double side_value(bool left) const { return left ? sl / wl : (total_s - sl) / (total_w - wl); }
  double proxy() const {
    const double wr = total_w - wl, sr = total_s - sl;
    if (wr <= 0.0 || wl <= 0.0 || sl <= kPoissonEpsilon || sr <= kPoissonEpsilon) return kNoSplit;
    return sl * std::log(sl / wl) + sr * std::log(sr / wr);
  }
};

// Absolute error: each side's weighted median and absolute deviation from it, read from Fenwick
// trees over the node's rows ranked by y (weights and weighted targets per rank); a row moving
// left leaves the right tree. O(log m) per row and per proxy, so a feature costs O(m log m), as
// in scikit-learn; histograms of codes cannot hold medians, so rows are always sorted.
struct AbsoluteErrorStats {
  static constexpr bool kClasses = false;
  static constexpr bool kCounting = false;
  static constexpr bool kBounded = false;
  struct Fenwick {
    double* w;   // 1-based, size + 1 entries
    double* wy;
    int64_t size;
    void add(int64_t rank, double dw, double dwy) {
      for (int64_t i = rank + 1; i <= size; i += i & -i) {
        w[i] += dw;
        wy[i] += dwy;
      }
    }
    // The first rank whose cumulative weight exceeds `target` (Strict: reaches it), with the
    // weight and weighted target of the ranks before it.
    template <bool Strict = false>
    int64_t search(double target, double& w_before, double& wy_before) const {
      int64_t pos = 0;
      w_before = wy_before = 0.0;
      int64_t step = int64_t{1} << (63 - __builtin_clzll(static_cast<unsigned long long>(size)));
      for (; step > 0; step >>= 1) {
        const int64_t next = pos + step;
        if (next <= size && (Strict ? w_before + w[next] < target : w_before + w[next] <= target)) {
          pos = next;
          w_before += w[next];
          wy_before += wy[next];
        }
      }
      return std::min(pos, size - 1);
    }
  };
  const double* lw;       // per position: weight
  const uint32_t* rank;   // per position: rank of its y in the node
  const double* sorted_y; // per rank
  Fenwick left, right;
  const double* full_w;   // the whole node's Fenwick arrays (right's state after reset)
  const double* full_wy;
  double total_w = 0.0, total_wy = 0.0;
  double wl = 0.0, wyl = 0.0;

  void reset() {
    wl = wyl = 0.0;
    std::fill(left.w, left.w + left.size + 1, 0.0);
    std::fill(left.wy, left.wy + left.size + 1, 0.0);
    std::copy(full_w, full_w + right.size + 1, right.w);
    std::copy(full_wy, full_wy + right.size + 1, right.wy);
  }
  void add(int64_t pos) {
    const double w = lw[pos], wy = w * sorted_y[rank[pos]];
    left.add(rank[pos], w, wy);
    right.add(rank[pos], -w, -wy);
    wl += w;
    wyl += wy;
  }
  // The weighted median of one side of total weight tw, with the weight and weighted target of
  // the ranks below the median's.
  double median(const Fenwick& f, double tw, double& w_below, double& wy_below) const {
    const int64_t r = f.search(0.5 * tw, w_below, wy_below);
    if (w_below == 0.5 * tw && w_below > 0.0) {
      double w_prev, wy_prev;
      return (sorted_y[f.search<true>(w_below, w_prev, wy_prev)] + sorted_y[r]) / 2;
    }
    return sorted_y[r];
  }
  // Sum of w |y - median| over one side of total weight tw and weighted target twy.
  double deviation(const Fenwick& f, double tw, double twy) const {
    double w_below, wy_below;
    const double m = median(f, tw, w_below, wy_below);
    return (twy - wy_below - m * (tw - w_below)) + (m * w_below - wy_below);
  }
  double side_value(bool left) const {
    double w_below, wy_below;
    return left ? median(this->left, wl, w_below, wy_below) : median(right, total_w - wl, w_below, wy_below);
  }
  double proxy() const {
    const double wr = total_w - wl;
    if (wr <= 0.0 || wl <= 0.0) return kNoSplit;
    // As scikit-learn rounds it (each side's mean deviation times its weight), so that the many
    // exact ties of integer targets break the same way.
    return -wr * (deviation(right, wr, total_wy - wyl) / wr) - wl * (deviation(left, wl, wyl) / wl);
  }
};

// Gini (Entropy = false) or Shannon entropy (Entropy = true) over n_classes classes.
template <bool Entropy>
struct ClassStats {
  static constexpr bool kClasses = true;
  static constexpr bool kCounting = true;
  static constexpr bool kBounded = true;
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
  // The fraction of class 0 on one side: monotonic constraints of binary classification are
  // constraints on it (scikit-learn's convention; the Python layer flips their signs).
  double side_value(bool left) const { return left ? this->left[0] / wl : (total[0] - this->left[0]) / (total_w - wl); }
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
    case Criterion::poisson: return fn(StatsTag<PoissonStats>{});
    case Criterion::absolute_error: return fn(StatsTag<AbsoluteErrorStats>{});
  }
  throw std::invalid_argument("unknown criterion");
}

}  // namespace pyinterp
