#include "softtree/softtree.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pyinterp {
namespace {

template <class T>
inline void activate(T z, Activation act, T gamma_s, T& s, T& ds) {
  if (act == Activation::sigmoid) {
    const T e = std::exp(-std::abs(z));  // one exp, no overflow
    const T r = T(1) / (T(1) + e);
    s = z >= 0 ? r : e * r;
    ds = e * r * r;  // s (1 - s)
    return;
  }
  const T half = T(0.5) * gamma_s;
  if (z <= -half || z >= half) {
    s = z > 0 ? T(1) : T(0);
    ds = T(0);
  } else {
    const T g3 = gamma_s * gamma_s * gamma_s;
    s = z * (T(1.5) / gamma_s - (T(2) / g3) * z * z) + T(0.5);
    ds = T(1.5) / gamma_s - (T(6) / g3) * z * z;
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
    for (int64_t k = 0; k < width; ++k) activate(bias ? z[k] + bias[k] : z[k], act, gamma_s, s[k], ds[k]);
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
