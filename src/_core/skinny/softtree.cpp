#include "softtree.hpp"

// Floating-point exceptions are never inspected here; without this GCC keeps the selects in the
// activation loops as branches and does not vectorise them. Results are unchanged.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace pyinterp {
namespace {

// expf(x) for x <= 0 without branches or library calls, so the float activation loop vectorises:
// x = n ln2 + r with |r| <= ln2/2, e^r by its degree-7 Taylor polynomial (truncation below 1e-8
// relative), 2^n assembled in the exponent bits; x below -87 gives 0. Within 2 ulp of expf.
// (For double, glibc's scalar exp was faster than a degree-13 polynomial that does not vectorise.)
inline float exp_nonpositive(float x) {
  constexpr float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float under = x < -87.0f ? 0.0f : 1.0f;
  x = x < -87.0f ? -87.0f : x;
  const float shifted = x * 1.44269504f + shifter;
  const float n = shifted - shifter;
  const float r = (x - n * 0.693145751953125f) - n * 1.42860677e-06f;  // ln2 split hi + lo
  const float poly =
      1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r / 5040))))));
  // Unsigned, so a NaN x (whose bits make the exponent negative) is no undefined shift; its
  // result is NaN through poly either way.
  uint32_t bits, shifter_bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  std::memcpy(&shifter_bits, &shifter, sizeof bits);
  const uint32_t scale_bits = (bits - shifter_bits + 127u) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return poly * scale * under;
}

inline double exp_nonpositive(double x) { return std::exp(x); }

// S and S' of one row of pre-activations (plus bias), in loops free of branches so they vectorise.
template <class T>
void activate_row(const T* z, const T* bias, int64_t width, Activation act, T gamma_s, T* s, T* ds) {
  if (bias) {
    for (int64_t k = 0; k < width; ++k) s[k] = z[k] + bias[k];
  } else {
    std::copy(z, z + width, s);
  }
  if (act == Activation::sigmoid) {
    for (int64_t k = 0; k < width; ++k) {
      const T v = s[k];
      const T e = exp_nonpositive(-std::abs(v));  // e^-|v|: never overflows
      const T r = T(1) / (T(1) + e);
      const T er = e * r;  // computed unconditionally: a select, not a branch, so the loop vectorises
      s[k] = v >= 0 ? r : er;
      ds[k] = er * r;  // s (1 - s)
    }
    return;
  }
  const T half = T(0.5) * gamma_s, a = T(1.5) / gamma_s, b2 = T(2) / (gamma_s * gamma_s * gamma_s);
  for (int64_t k = 0; k < width; ++k) {
    const T v = s[k];
    const T lo = v < -half ? -half : v;
    const T c = lo > half ? half : lo;
    s[k] = c * (a - b2 * c * c) + T(0.5);
    const T slope = a - T(3) * b2 * c * c;
    ds[k] = std::abs(v) < half ? slope : T(0);
  }
}

// reach[n] of every node n = 0 .. 2I (internal nodes first, then the leaves at I .. 2I).
template <class T>
inline void fill_reach(const T* s, int64_t internal, T* reach) {
  reach[0] = T(1);
  for (int64_t n = 0; n < internal; ++n) {
    const T left = reach[n] * s[n];
    reach[2 * n + 1] = left;
    reach[2 * n + 2] = reach[n] - left;
  }
}

}  // namespace

template <class T>
void softtree_forward(const SoftTreeShape& sh, const T* Z, const T* bias, Activation act, T gamma_s, T* S, T* dS,
                      T* P) {
  const int64_t I = sh.internal(), L = sh.leaves(), width = sh.n_trees * I;
  std::vector<T> reach(static_cast<size_t>(2 * L - 1));
  for (int64_t b = 0; b < sh.n_rows; ++b) {
    const T* z = Z + b * width;
    T* s = S + b * width;
    T* ds = dS + b * width;
    activate_row(z, bias, width, act, gamma_s, s, ds);
    for (int64_t j = 0; j < sh.n_trees; ++j) {
      fill_reach(s + j * I, I, reach.data());
      std::copy(reach.begin() + I, reach.end(), P + (b * sh.n_trees + j) * L);
    }
  }
}

template <class T>
void softtree_backward(const SoftTreeShape& sh, const T* dP, const T* S, const T* dS, T* dZ, T* db) {
  const int64_t I = sh.internal(), L = sh.leaves(), width = sh.n_trees * I;
  std::vector<T> reach(static_cast<size_t>(2 * L - 1)), up(static_cast<size_t>(2 * L - 1));
  std::fill(db, db + width, T(0));
  for (int64_t b = 0; b < sh.n_rows; ++b) {
    for (int64_t j = 0; j < sh.n_trees; ++j) {
      const int64_t col = b * width + j * I;
      const T* s = S + col;
      const T* ds = dS + col;
      T* dz = dZ + col;
      T* dbj = db + j * I;
      fill_reach(s, I, reach.data());
      std::copy(dP + (b * sh.n_trees + j) * L, dP + (b * sh.n_trees + j + 1) * L, up.begin() + I);
      for (int64_t n = I - 1; n >= 0; --n) {  // children before parents
        const T diff = up[2 * n + 1] - up[2 * n + 2];
        dz[n] = reach[n] * diff * ds[n];
        up[n] = up[2 * n + 2] + s[n] * diff;
        dbj[n] += dz[n];
      }
    }
  }
}

template void softtree_forward<float>(const SoftTreeShape&, const float*, const float*, Activation, float, float*,
                                      float*, float*);
template void softtree_forward<double>(const SoftTreeShape&, const double*, const double*, Activation, double,
                                       double*, double*, double*);
template void softtree_backward<float>(const SoftTreeShape&, const float*, const float*, const float*, float*,
                                       float*);
template void softtree_backward<double>(const SoftTreeShape&, const double*, const double*, const double*, double*,
                                        double*);

}  // namespace pyinterp
