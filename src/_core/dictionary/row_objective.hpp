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
        w_(p), z_(n_rows), dz_(n_rows), zt_(n_rows), x_known_(p > 0 ? p - 1 : 0, NAN) {}

  int dim() const { return p_ - 1; }

  double eval(const double* x, double* g) {
    expand(x, w_);
    combine(w_, z_);
    if (g) remember(x, z_);
    return finish(z_, x, g);
  }

  // f(x + t d) costs O(n_rows + p) once z = A w and dz = A d are known; its gradient O(n_rows p).
  // z is reused from the last gradient evaluation when x is that point (the accepted step).
  void line_start(const double* x, const double* d) {
    if (std::equal(x, x + p_ - 1, x_known_.begin())) {
      z_ = z_known_;
    } else {
      expand(x, w_);
      combine(w_, z_);
    }
    std::fill(dz_.begin(), dz_.end(), 0.0);
    for (int h = 0, k = 0; h < p_; ++h) {
      if (h == j_) continue;
      const double b = d[k++];
      const double* col = A_ + static_cast<int64_t>(h) * n_;
      if (b != 0.0)
        for (int64_t i = 0; i < n_; ++i) dz_[i] += b * col[i];
    }
  }

  double line_eval(double t, const double* x_t, double* g) {
    for (int64_t i = 0; i < n_; ++i) zt_[i] = z_[i] + t * dz_[i];
    if (g) remember(x_t, zt_);
    return finish(zt_, x_t, g);
  }

  // Whether some coefficient vanishes at x: a kink of |.|, where BFGS should not start.
  bool on_kink(const double* x) {
    expand(x, w_);
    combine(w_, z_);
    return std::any_of(z_.begin(), z_.end(), [](double v) { return v == 0.0; });
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
  void remember(const double* x, const std::vector<double>& z) {
    x_known_.assign(x, x + p_ - 1);
    z_known_ = z;
  }

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
  std::vector<double> x_known_, z_known_;  // the last point evaluated with its gradient, and its z
};

}  // namespace pyinterp
