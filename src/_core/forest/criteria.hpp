// Running left-side statistics of a candidate split and its proxy score (larger is better; equal to
// the impurity decrease up to terms that do not depend on the split). Positions index the node's
// local arrays; codes index the per-code histograms of the counting search.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

namespace pyinterp {

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
  void hist_take(uint32_t c) {
    wl += hist_w[c];
    sl += hist_s[c];
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
  void hist_take(uint32_t c) {
    hist_class[c] = kEmpty;
    // Restrict-qualified locals let the compiler keep the running sum in a register.
    double* __restrict h = hist + static_cast<int64_t>(c) * n_classes;
    double* __restrict l = left;
    double taken = 0.0;
    for (int32_t k = 0; k < n_classes; ++k) {
      l[k] += h[k];
      taken += h[k];
      h[k] = 0.0;
    }
    wl += taken;
  }
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

}  // namespace pyinterp
