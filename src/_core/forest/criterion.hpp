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

// What a tree is grown to predict: n_outputs targets per row, row-major. Regression: y (n x
// n_outputs). Classification: classes (n x n_outputs), each output's class index below n_classes
// (the largest number of classes of any output: the stride of a node's values), and with several
// outputs labels, one id per distinct row of classes.
struct FitTargets {
  const double* y = nullptr;
  const int32_t* classes = nullptr;
  const int32_t* labels = nullptr;
  int32_t n_classes = 0;  // 0 for regression
  int32_t n_outputs = 1;

  int32_t stride() const { return n_classes > 0 ? n_classes : 1; }
  int32_t n_values() const { return n_outputs * stride(); }
  double y_at(uint32_t row, int32_t k) const { return y[static_cast<int64_t>(row) * n_outputs + k]; }
  int32_t class_at(uint32_t row, int32_t k) const { return classes[static_cast<int64_t>(row) * n_outputs + k]; }
};

// A node's weight, impurity and value from its rows: per output the mean, the weighted median
// (absolute_error) or the class fractions (stride values per output); the impurity is the mean of
// the outputs' impurities (scikit-learn's multi-output criteria). Two passes for squared error, so
// a pure node is exactly 0.
struct NodeStats {
  double weight = 0.0;
  double impurity = 0.0;
};
// scratch: absolute_error's (y, w) pairs, resized as needed.
inline NodeStats node_stats(Criterion c, const uint32_t* rows, int64_t m, const double* w, const FitTargets& t,
                            double* value, std::vector<std::pair<double, double>>& scratch) {
  NodeStats s;
  // Squared error's first output's weighted sum is taken with the weight, in the same pass (each
  // still summed in row order).
  const bool fused = c == Criterion::squared_error;
  double first_sum = 0.0;
  if (fused) {
    for (int64_t k = 0; k < m; ++k) {
      const double wk = w[rows[k]];
      s.weight += wk;
      first_sum += wk * t.y_at(rows[k], 0);
    }
  } else {
    for (int64_t k = 0; k < m; ++k) s.weight += w[rows[k]];
  }
  double impurity = 0.0;
  for (int32_t out = 0; out < t.n_outputs; ++out) {
    if (c == Criterion::absolute_error) {
      scratch.resize(m);
      for (int64_t k = 0; k < m; ++k) scratch[k] = {t.y_at(rows[k], out), w[rows[k]]};
      std::sort(scratch.begin(), scratch.end());
      const double median = weighted_median(scratch.data(), m, s.weight);
      double deviation = 0.0;
      for (int64_t k = 0; k < m; ++k) deviation += scratch[k].second * std::abs(scratch[k].first - median);
      impurity += deviation / s.weight;
      value[out] = median;
    } else if (c == Criterion::poisson) {
      double sum = 0.0;
      for (int64_t k = 0; k < m; ++k) sum += w[rows[k]] * t.y_at(rows[k], out);
      const double mean = sum / s.weight;
      value[out] = mean;
      // FitTargets summing to zero are all zero: their deviance from the mean 0 is 0.
      if (sum <= kPoissonEpsilon) continue;
      double deviance = 0.0;
      for (int64_t k = 0; k < m; ++k) {
        const double y = t.y_at(rows[k], out);
        deviance += w[rows[k]] * xlogy(y, y / mean);
      }
      impurity += std::max(deviance / s.weight, 0.0);
    } else if (!is_classification(c)) {
      double sum = 0.0;
      if (fused && out == 0) {
        sum = first_sum;
      } else {
        for (int64_t k = 0; k < m; ++k) sum += w[rows[k]] * t.y_at(rows[k], out);
      }
      const double mean = sum / s.weight;
      double sq = 0.0;
      for (int64_t k = 0; k < m; ++k) {
        const double d = t.y_at(rows[k], out) - mean;
        sq += w[rows[k]] * d * d;
      }
      impurity += sq / s.weight;
      value[out] = mean;
    } else {
      double* fractions = value + static_cast<int64_t>(out) * t.n_classes;
      std::fill(fractions, fractions + t.n_classes, 0.0);
      for (int64_t k = 0; k < m; ++k) fractions[t.class_at(rows[k], out)] += w[rows[k]];
      for (int32_t v = 0; v < t.n_classes; ++v) fractions[v] /= s.weight;
      impurity += class_impurity(c, t.n_classes, [fractions](int32_t k) { return fractions[k]; });
    }
  }
  s.impurity = impurity / t.n_outputs;
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
// search over per-code histograms applies; else rows are always sorted by code), kBounded (the
// search can bound the best proxy a small node's rows allow, see ExactSplitSearch::stops_at_best) and
// kMonotonic (side_value gives the value a monotonic constraint orders; single output only) and
// kCategorical (bucket_mean gives a code's mean of y, or share of class 1, by which Breiman's
// ordering sorts a categorical feature's codes: one output, two classes at most).

// Squared error. lwy holds w * (y - node mean): centring keeps the proxy well conditioned.
struct RegressionStats {
  static constexpr bool kClasses = false;
  static constexpr bool kCounting = true;
  static constexpr bool kBounded = true;
  static constexpr bool kMonotonic = true;
  static constexpr bool kCategorical = true;
  const double* lw;
  const double* lwy;
  // Per code c, its weight at hist[2c] and its sum of weighted y at hist[2c + 1]: one cache line
  // per row a counting search adds (with 200,000 codes, 3.2 MB of histograms, a miss each).
  double* hist;
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
    hist[2 * c] += lw[pos];
    hist[2 * c + 1] += lwy[pos];
  }
  void hist_peek(uint32_t c) {
    wl += hist[2 * c];
    sl += hist[2 * c + 1];
  }
  void hist_take(uint32_t c) {
    hist_peek(c);
    hist_clear(c);
  }
  void hist_clear(uint32_t c) { hist[2 * c] = hist[2 * c + 1] = 0.0; }
  const void* hist_address(uint32_t c) const { return hist + 2 * c; }
  int32_t bucket_class(uint32_t) const { return kMixed; }
  // Centred or not, the order of the codes' means is that of their means of y.
  double bucket_mean(uint32_t c) const { return hist[2 * c + 1] / hist[2 * c]; }
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

// Squared error summed over n_outputs targets (scikit-learn's multi-output criterion): lwy and
// hist_s hold n_outputs sums per position / code, sl the left side's sums (shared scratch).
struct MultiRegressionStats {
  static constexpr bool kClasses = false;
  static constexpr bool kCounting = true;
  static constexpr bool kBounded = false;
  static constexpr bool kMonotonic = false;
  static constexpr bool kCategorical = false;
  const double* lw;
  const double* lwy;
  double* hist_w;
  double* hist_s;
  const double* total_s;
  double* sl;
  int32_t n_outputs;
  double total_w = 0.0, wl = 0.0;

  void reset() {
    wl = 0.0;
    std::fill(sl, sl + n_outputs, 0.0);
  }
  void add(int64_t pos) {
    wl += lw[pos];
    const double* s = lwy + pos * n_outputs;
    for (int32_t k = 0; k < n_outputs; ++k) sl[k] += s[k];
  }
  const void* hist_address(uint32_t c) const { return hist_s + static_cast<int64_t>(c) * n_outputs; }
  void hist_add(uint32_t c, int64_t pos) {
    hist_w[c] += lw[pos];
    double* h = hist_s + static_cast<int64_t>(c) * n_outputs;
    const double* s = lwy + pos * n_outputs;
    for (int32_t k = 0; k < n_outputs; ++k) h[k] += s[k];
  }
  void hist_peek(uint32_t c) {
    wl += hist_w[c];
    const double* h = hist_s + static_cast<int64_t>(c) * n_outputs;
    for (int32_t k = 0; k < n_outputs; ++k) sl[k] += h[k];
  }
  void hist_clear(uint32_t c) {
    hist_w[c] = 0.0;
    std::fill(hist_s + static_cast<int64_t>(c) * n_outputs, hist_s + static_cast<int64_t>(c + 1) * n_outputs, 0.0);
  }
  void hist_take(uint32_t c) {
    hist_peek(c);
    hist_clear(c);
  }
  int32_t bucket_class(uint32_t) const { return kMixed; }
  int32_t row_class(int64_t) const { return kMixed; }
  double proxy() const {
    const double wr = total_w - wl;
    if (wr <= 0.0 || wl <= 0.0) return kNoSplit;
    double score = 0.0;
    for (int32_t k = 0; k < n_outputs; ++k) {
      const double sr = total_s[k] - sl[k];
      score += sl[k] * sl[k] / wl + sr * sr / wr;
    }
    return score;
  }
};

// Poisson summed over outputs: uncentred sums; no split leaves a side whose sum of any output is
// (near) zero.
struct MultiPoissonStats : MultiRegressionStats {
  double proxy() const {
    const double wr = total_w - wl;
    if (wr <= 0.0 || wl <= 0.0) return kNoSplit;
    double score = 0.0;
    for (int32_t k = 0; k < n_outputs; ++k) {
      const double sr = total_s[k] - sl[k];
      if (sl[k] <= kPoissonEpsilon || sr <= kPoissonEpsilon) return kNoSplit;
      score += sl[k] * std::log(sl[k] / wl) + sr * std::log(sr / wr);
    }
    return score;
  }
};

// Absolute error: each side's weighted median and absolute deviation from it, read from Fenwick
// trees over the node's rows ranked by y (weights and weighted targets per rank); a row moving
// left leaves the right tree. O(log m) per row and per proxy, so a feature costs O(m log m), as
// in scikit-learn; histograms of codes cannot hold medians, so rows are always sorted. With
// several outputs, each has its ranks and trees (arrays of n_outputs blocks) and the deviations
// are summed.
struct AbsoluteErrorStats {
  static constexpr bool kClasses = false;
  static constexpr bool kCounting = false;
  static constexpr bool kBounded = false;
  static constexpr bool kMonotonic = true;
  static constexpr bool kCategorical = false;
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
  const uint32_t* rank;   // per output and position: rank of its y in the node
  const double* sorted_y; // per output and rank
  // Per output, size + 1 entries each: the left and right sides' trees and the whole node's
  // (right's state after reset).
  double *left_w, *left_wy, *right_w, *right_wy;
  const double* full_w;
  const double* full_wy;
  const double* total_wy;  // per output
  double* wyl;             // per output, the left side's weighted targets (shared scratch)
  int64_t size;            // the node's rows
  int32_t n_outputs;
  double total_w = 0.0, wl = 0.0;

  Fenwick left(int32_t k) const { return {left_w + k * (size + 1), left_wy + k * (size + 1), size}; }
  Fenwick right(int32_t k) const { return {right_w + k * (size + 1), right_wy + k * (size + 1), size}; }
  void reset() {
    wl = 0.0;
    const int64_t n = n_outputs * (size + 1);
    std::fill(left_w, left_w + n, 0.0);
    std::fill(left_wy, left_wy + n, 0.0);
    std::copy(full_w, full_w + n, right_w);
    std::copy(full_wy, full_wy + n, right_wy);
    std::fill(wyl, wyl + n_outputs, 0.0);
  }
  void add(int64_t pos) {
    const double w = lw[pos];
    for (int32_t k = 0; k < n_outputs; ++k) {
      const uint32_t r = rank[k * size + pos];
      const double wy = w * sorted_y[k * size + r];
      left(k).add(r, w, wy);
      right(k).add(r, -w, -wy);
      wyl[k] += wy;
    }
    wl += w;
  }
  // The weighted median of output k on one side of total weight tw, with the weight and
  // weighted target of the ranks below the median's.
  double median(int32_t k, const Fenwick& f, double tw, double& w_below, double& wy_below) const {
    const double* y = sorted_y + k * size;
    const int64_t r = f.search(0.5 * tw, w_below, wy_below);
    if (w_below == 0.5 * tw && w_below > 0.0) {
      double w_prev, wy_prev;
      return (y[f.search<true>(w_below, w_prev, wy_prev)] + y[r]) / 2;
    }
    return y[r];
  }
  // Sum of w |y - median| of output k over one side of total weight tw and weighted target twy.
  double deviation(int32_t k, const Fenwick& f, double tw, double twy) const {
    double w_below, wy_below;
    const double m = median(k, f, tw, w_below, wy_below);
    return (twy - wy_below - m * (tw - w_below)) + (m * w_below - wy_below);
  }
  // The first output's median (monotonic constraints: single output).
  double side_value(bool is_left) const {
    double w_below, wy_below;
    return is_left ? median(0, left(0), wl, w_below, wy_below) : median(0, right(0), total_w - wl, w_below, wy_below);
  }
  double proxy() const {
    const double wr = total_w - wl;
    if (wr <= 0.0 || wl <= 0.0) return kNoSplit;
    double dl = 0.0, dr = 0.0;
    for (int32_t k = 0; k < n_outputs; ++k) {
      dr += deviation(k, right(k), wr, total_wy[k] - wyl[k]);
      dl += deviation(k, left(k), wl, wyl[k]);
    }
    // As scikit-learn rounds it (each side's mean deviation per output times its weight), so that
    // the many exact ties of integer targets break the same way.
    return -wr * (dr / (wr * n_outputs)) - wl * (dl / (wl * n_outputs));
  }
};

// Gini (Entropy = false) or Shannon entropy (Entropy = true). A row's class is a slot of the
// node's class sums; with several outputs (Multi) a row holds one slot per output (output k's
// classes at k * stride + class), the impurity is summed over outputs, and a group of rows is pure
// when its rows share one label id (one vector of classes): the proxy is convex along such a run
// for each output, so the boundary argument above still holds.
template <bool Entropy, bool Multi = false>
struct ClassStats {
  static constexpr bool kClasses = true;
  static constexpr bool kCounting = true;
  static constexpr bool kBounded = true;
  static constexpr bool kMonotonic = !Multi;
  static constexpr bool kCategorical = !Multi;
  const double* lw;
  const int32_t* lc;      // per position: its n_outputs slots
  const int32_t* llabel;  // Multi: per position, its label id
  int32_t* hist_class;    // per code: class (label) signature (kEmpty when unused)
  double* hist;           // n_codes x n_slots
  double* left;           // n_slots
  const double* total;    // n_slots
  int32_t n_slots;        // n_outputs x stride
  int32_t n_outputs;
  double total_w = 0.0, wl = 0.0;

  int32_t outputs() const {
    if constexpr (Multi) return n_outputs;
    return 1;
  }
  void reset() {
    wl = 0.0;
    for (int32_t k = 0; k < n_slots; ++k) left[k] = 0.0;
  }
  void add(int64_t pos) {
    for (int32_t k = 0; k < outputs(); ++k) left[lc[pos * outputs() + k]] += lw[pos];
    wl += lw[pos];
  }
  const void* hist_address(uint32_t c) const { return hist + static_cast<int64_t>(c) * n_slots; }
  void hist_add(uint32_t c, int64_t pos) {
    double* h = hist + static_cast<int64_t>(c) * n_slots;
    for (int32_t k = 0; k < outputs(); ++k) h[lc[pos * outputs() + k]] += lw[pos];
    hist_class[c] = merge_class(hist_class[c], row_class(pos));
  }
  int32_t bucket_class(uint32_t c) const { return hist_class[c]; }
  // Bin c's share of class 1 (two classes; with one, 0).
  double bucket_mean(uint32_t c) const {
    const double* h = hist + static_cast<int64_t>(c) * n_slots;
    return n_slots < 2 ? 0.0 : h[1] / (h[0] + h[1]);
  }
  // The fraction of class 0 on one side: monotonic constraints of binary classification are
  // constraints on it (scikit-learn's convention; the Python layer flips their signs).
  double side_value(bool left) const { return left ? this->left[0] / wl : (total[0] - this->left[0]) / (total_w - wl); }
  int32_t row_class(int64_t pos) const {
    if constexpr (Multi) return llabel[pos];
    return lc[pos];
  }
  // Adds bin c to the left side; Clear also empties the bin.
  template <bool Clear = false>
  void hist_peek(uint32_t c) {
    if (Clear) hist_class[c] = kEmpty;
    // Restrict-qualified locals let the compiler keep the running sum in a register.
    double* __restrict h = hist + static_cast<int64_t>(c) * n_slots;
    double* __restrict l = left;
    double taken = 0.0;
    // The first output's slots hold each row once: the bin's weight.
    const int32_t first = Multi ? n_slots / n_outputs : n_slots;
    for (int32_t k = 0; k < first; ++k) {
      l[k] += h[k];
      taken += h[k];
      if (Clear) h[k] = 0.0;
    }
    for (int32_t k = first; k < n_slots; ++k) {
      l[k] += h[k];
      if (Clear) h[k] = 0.0;
    }
    wl += taken;
  }
  void hist_take(uint32_t c) { hist_peek<true>(c); }
  // Adds to bin c the node's weight per class beyond `taken` (the weight other calls put in bins):
  // the rows a sparse column leaves implicit. A class with weight left is in the bin (node rows
  // have positive weight). Exact when the weights are whole numbers below 2^53.
  void hist_add_rest(uint32_t c, const double* taken) {
    static_assert(!Multi, "a label's outputs are not in per-slot sums");
    double* h = hist + static_cast<int64_t>(c) * n_slots;
    for (int32_t k = 0; k < n_slots; ++k) {
      const double rest = total[k] - taken[k];
      if (rest > 0.0) {
        h[k] += rest;
        hist_class[c] = merge_class(hist_class[c], k);
      }
    }
  }
  void hist_clear(uint32_t c) {
    hist_class[c] = kEmpty;
    double* h = hist + static_cast<int64_t>(c) * n_slots;
    for (int32_t k = 0; k < n_slots; ++k) h[k] = 0.0;
  }
  double proxy() const {
    const double wr = total_w - wl;
    if (wr <= 0.0 || wl <= 0.0) return kNoSplit;
    double score = 0.0;
    if (Entropy) {
      for (int32_t k = 0; k < n_slots; ++k) score += xlogx(left[k]) + xlogx(total[k] - left[k]);
      if constexpr (Multi) return score - n_outputs * (xlogx(wl) + xlogx(wr));
      return score - xlogx(wl) - xlogx(wr);
    }
    double sq_left = 0.0, sq_right = 0.0;
    for (int32_t k = 0; k < n_slots; ++k) {
      const double r = total[k] - left[k];
      sq_left += left[k] * left[k];
      sq_right += r * r;
    }
    return sq_left / wl + sq_right / wr;
  }
};

// fn(tag) with tag.type the split statistics of criterion c for one or several outputs, so the
// split search is compiled once per criterion and kind (one output keeps its scalar sums).
template <class T>
struct StatsTag {
  using type = T;
};
template <class Fn>
void visit_split_stats(Criterion c, bool multi_output, Fn&& fn) {
  switch (c) {
    case Criterion::squared_error:
      return multi_output ? fn(StatsTag<MultiRegressionStats>{}) : fn(StatsTag<RegressionStats>{});
    case Criterion::gini:
      return multi_output ? fn(StatsTag<ClassStats<false, true>>{}) : fn(StatsTag<ClassStats<false>>{});
    case Criterion::entropy:
      return multi_output ? fn(StatsTag<ClassStats<true, true>>{}) : fn(StatsTag<ClassStats<true>>{});
    case Criterion::poisson:
      return multi_output ? fn(StatsTag<MultiPoissonStats>{}) : fn(StatsTag<PoissonStats>{});
    case Criterion::absolute_error: return fn(StatsTag<AbsoluteErrorStats>{});
  }
  throw std::invalid_argument("unknown criterion");
}

}  // namespace pyinterp
