// The strongly convex row subproblem shared by DL-BCD (thesis 000, Algorithm 2) and the sharpness
// test (Algorithm 1, problem 5.3). For a row j and w in R^p with w_j = 1,
//
//   F(w) = (1/N) [ sum_i phi(z_i) + sum_{h != j} c_h sqrt(w_h^2 - 2 m_h w_h + 1) ],  z = sum_h w_h A_h,
//
// where A_h are the coefficient columns of the rows taking part (n_rows each), c_h the weights of
// the other atoms, m_h their cosines to atom j and phi = |.| (or, with delta > 0, the Huber
// smoothing |u| for |u| >= delta, u^2 / (2 delta) + delta / 2 below, the reference's thres1). The
// optimiser sees x = w without its j-th entry. sqrt(w^2 - 2 m w + 1) = ||w D_j - D_h|| for unit
// columns: the norm that Proposition 5.2.1 divides by.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace pyinterp {

class RowObjective {
 public:
  // A: column-major n_rows x p (column h at A + h * n_rows); m, c: length p (entry j unused).
  RowObjective(const double* A, int64_t n_rows, int p, int j, const double* m, const double* c, double delta,
               double scale)
      : A_(A), n_(n_rows), p_(p), j_(j), m_(m), c_(c), delta_(delta), inv_scale_(1.0 / scale),
        w_(p), z_(n_rows), dz_(n_rows), zt_(n_rows) {}

  int dim() const { return p_ - 1; }

  double eval(const double* x, double* g) {
    expand(x, w_);
    combine(w_, z_);
    return finish(z_, x, g);
  }

  // f(x + t d) costs O(n_rows + p) once z = A w and dz = A d are known; its gradient O(n_rows p).
  void line_start(const double* x, const double* d) {
    expand(x, w_);
    std::vector<double> dw(p_, 0.0);
    for (int h = 0, k = 0; h < p_; ++h)
      if (h != j_) dw[h] = d[k++];
    std::fill(z_.begin(), z_.end(), 0.0);
    std::fill(dz_.begin(), dz_.end(), 0.0);
    for (int h = 0; h < p_; ++h) {
      const double* col = A_ + static_cast<int64_t>(h) * n_;
      const double a = w_[h], b = dw[h];
      if (b == 0.0) {
        for (int64_t i = 0; i < n_; ++i) z_[i] += a * col[i];
      } else {
        for (int64_t i = 0; i < n_; ++i) {
          z_[i] += a * col[i];
          dz_[i] += b * col[i];
        }
      }
    }
  }

  double line_eval(double t, const double* x_t, double* g) {
    for (int64_t i = 0; i < n_; ++i) zt_[i] = z_[i] + t * dz_[i];
    return finish(zt_, x_t, g);
  }

  // The unsmoothed objective (what DL-BCD's monotonicity is about), whatever delta is.
  double exact_value(const double* x) {
    const double saved = delta_;
    delta_ = 0.0;
    const double f = eval(x, nullptr);
    delta_ = saved;
    return f;
  }

  // w: x with 1 inserted at position j.
  void expand(const double* x, std::vector<double>& w) const {
    for (int h = 0, k = 0; h < p_; ++h) w[h] = h == j_ ? 1.0 : x[k++];
  }

 private:
  void combine(const std::vector<double>& w, std::vector<double>& z) const {
    std::fill(z.begin(), z.end(), 0.0);
    for (int h = 0; h < p_; ++h) {
      const double* col = A_ + static_cast<int64_t>(h) * n_;
      const double a = w[h];
      if (a != 0.0)
        for (int64_t i = 0; i < n_; ++i) z[i] += a * col[i];
    }
  }

  // Value at the point with coefficients z and free coordinates x; gradient into g (length p - 1).
  double finish(std::vector<double>& z, const double* x, double* g) {
    double f = 0.0;
    if (delta_ > 0.0) {
      for (int64_t i = 0; i < n_; ++i) {
        const double u = z[i], a = std::fabs(u);
        f += a >= delta_ ? a : 0.5 * (u * u / delta_ + delta_);
        if (g) z[i] = a >= delta_ ? (u > 0.0 ? 1.0 : -1.0) : u / delta_;  // z now holds phi'
      }
    } else {
      for (int64_t i = 0; i < n_; ++i) {
        const double u = z[i];
        f += std::fabs(u);
        if (g) z[i] = u > 0.0 ? 1.0 : (u < 0.0 ? -1.0 : 0.0);
      }
    }
    for (int h = 0, k = 0; h < p_; ++h) {
      if (h == j_) continue;
      const double xh = x[k], q = std::sqrt(std::max(xh * xh - 2.0 * m_[h] * xh + 1.0, 0.0));
      f += c_[h] * q;
      if (g) {
        const double* col = A_ + static_cast<int64_t>(h) * n_;
        double acc = 0.0;
        for (int64_t i = 0; i < n_; ++i) acc += z[i] * col[i];
        g[k] = (acc + (q > 0.0 ? c_[h] * (xh - m_[h]) / q : 0.0)) * inv_scale_;
      }
      ++k;
    }
    return f * inv_scale_;
  }

  const double* A_;
  int64_t n_;
  int p_, j_;
  const double* m_;
  const double* c_;
  double delta_, inv_scale_;
  std::vector<double> w_, z_, dz_, zt_;
};

}  // namespace pyinterp
