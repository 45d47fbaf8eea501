// Quasi-Newton minimisation for convex objectives that may have kinks: dense BFGS, or L-BFGS for
// large dimensions. BFGS with an inexact line search converges to nonsmooth minimisers in practice
// (Lewis & Overton 2013); it stops when an iteration no longer lowers f by more than a relative
// tolerance, when the gradient vanishes, after max_iter iterations, or when no trial point of a
// steepest-descent line search lowers f (the usual end at a kink).
//
// Obj must provide:
//   double eval(const double* x, double* g)          f(x), and its gradient into g unless g is null
//   void line_start(const double* x, const double* d)
//   double line_eval(double t, const double* x_t, double* g)
// PointwiseLine below supplies the last two for objectives without cheaper line evaluations.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "line_search.hpp"

namespace pyinterp::optim {

template <class Derived>
struct PointwiseLine {
  void line_start(const double*, const double*) {}
  double line_eval(double, const double* x_t, double* g) { return static_cast<Derived*>(this)->eval(x_t, g); }
};

struct Options {
  int max_iter = 1000;
  double tol = 1e-12;       // stop when an iteration lowers f by at most tol * max(1, |f|)
  double grad_tol = 1e-12;  // stop when max |g_i| <= grad_tol
  int memory = 0;           // 0: dense inverse Hessian; m > 0: L-BFGS keeping m pairs
  LineSearch line_search = LineSearch::armijo;
  LineSearchOptions line;
};

enum class Stop { tolerance, gradient, max_iter, line_search };

struct Result {
  double f = 0.0;
  int n_iter = 0;
  Stop stop = Stop::max_iter;
};

// The inverse-Hessian approximation H: dense (O(n^2) per update) or limited memory (two-loop
// recursion, O(m n)). Both start from the identity scaled by s'y / y'y after the first pair.
class InverseHessian {
 public:
  InverseHessian(size_t n, int memory) : n_(n), memory_(memory) {
    if (memory_ == 0) H_.assign(n_ * n_, 0.0);
    reset();
  }

  void reset() {
    fresh_ = true;
    gamma_ = 1.0;
    s_.clear();
    y_.clear();
    rho_.clear();
    if (memory_ == 0) {
      std::fill(H_.begin(), H_.end(), 0.0);
      for (size_t i = 0; i < n_; ++i) H_[i * n_ + i] = 1.0;
    }
  }

  bool fresh() const { return fresh_; }

  // d = -H g
  void direction(const std::vector<double>& g, std::vector<double>& d) const {
    if (memory_ == 0) {
      for (size_t i = 0; i < n_; ++i) {
        const double* row = &H_[i * n_];
        double s = 0.0;
        for (size_t k = 0; k < n_; ++k) s += row[k] * g[k];
        d[i] = -s;
      }
      return;
    }
    std::vector<double> q(g), alpha(s_.size());
    for (size_t k = s_.size(); k-- > 0;) {
      alpha[k] = rho_[k] * dot(s_[k], q);
      for (size_t i = 0; i < n_; ++i) q[i] -= alpha[k] * y_[k][i];
    }
    for (size_t i = 0; i < n_; ++i) q[i] *= gamma_;
    for (size_t k = 0; k < s_.size(); ++k) {
      const double beta = rho_[k] * dot(y_[k], q);
      for (size_t i = 0; i < n_; ++i) q[i] += (alpha[k] - beta) * s_[k][i];
    }
    for (size_t i = 0; i < n_; ++i) d[i] = -q[i];
  }

  // Skips pairs without positive curvature (possible under Armijo steps), keeping H positive definite.
  void update(const std::vector<double>& s, const std::vector<double>& y) {
    const double sy = dot(s, y), yy = dot(y, y);
    if (!(sy > 1e-14 * std::sqrt(dot(s, s) * yy))) return;
    const double rho = 1.0 / sy;
    if (fresh_) gamma_ = sy / yy;
    if (memory_ > 0) {
      if (static_cast<int>(s_.size()) == memory_) {
        s_.erase(s_.begin());
        y_.erase(y_.begin());
        rho_.erase(rho_.begin());
      }
      s_.push_back(s);
      y_.push_back(y);
      rho_.push_back(rho);
      fresh_ = false;
      return;
    }
    if (fresh_) {
      for (auto& h : H_) h *= gamma_;
    }
    fresh_ = false;
    // H+ = (I - rho s y') H (I - rho y s') + rho s s'
    std::vector<double> Hy(n_);
    for (size_t i = 0; i < n_; ++i) {
      const double* row = &H_[i * n_];
      double acc = 0.0;
      for (size_t k = 0; k < n_; ++k) acc += row[k] * y[k];
      Hy[i] = acc;
    }
    const double coef = rho * rho * dot(y, Hy) + rho;
    for (size_t i = 0; i < n_; ++i) {
      double* row = &H_[i * n_];
      for (size_t k = 0; k < n_; ++k) row[k] += coef * s[i] * s[k] - rho * (s[i] * Hy[k] + Hy[i] * s[k]);
    }
  }

 private:
  size_t n_;
  int memory_;
  bool fresh_ = true;
  double gamma_ = 1.0;
  std::vector<double> H_;
  std::vector<std::vector<double>> s_, y_;
  std::vector<double> rho_;
};

// Minimises obj from x (overwritten with the best point found).
template <class Obj>
Result minimize(Obj& obj, std::vector<double>& x, const Options& opt) {
  const size_t n = x.size();
  std::vector<double> g(n), d(n), x_new(n), g_new(n), s(n), y(n);
  Result res;
  double f = obj.eval(x.data(), g.data());
  InverseHessian H(n, opt.memory);
  for (res.n_iter = 0; res.n_iter < opt.max_iter; ++res.n_iter) {
    double g_max = 0.0;
    for (double gi : g) g_max = std::max(g_max, std::fabs(gi));
    if (n == 0 || g_max <= opt.grad_tol) {
      res.stop = Stop::gradient;
      break;
    }
    H.direction(g, d);
    double slope = dot(g, d);
    if (!(slope < 0.0)) {  // lost positive definiteness in rounding: restart from steepest descent
      H.reset();
      H.direction(g, d);
      slope = dot(g, d);
    }
    obj.line_start(x.data(), d.data());
    const LineStep step = opt.line_search == LineSearch::armijo
                              ? armijo(obj, x, f, d, slope, opt.line, x_new, g_new)
                              : weak_wolfe(obj, x, f, d, slope, opt.line, x_new, g_new);
    if (!step.ok) {
      if (H.fresh()) {
        res.stop = Stop::line_search;
        break;
      }
      H.reset();  // a quasi-Newton direction failed: try steepest descent before giving up
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      s[i] = x_new[i] - x[i];
      y[i] = g_new[i] - g[i];
    }
    H.update(s, y);
    const double decrease = f - step.f;
    x.swap(x_new);
    g.swap(g_new);
    f = step.f;
    if (decrease <= opt.tol * std::max(1.0, std::fabs(f))) {
      ++res.n_iter;
      res.stop = Stop::tolerance;
      break;
    }
  }
  res.f = f;
  return res;
}

}  // namespace pyinterp::optim
