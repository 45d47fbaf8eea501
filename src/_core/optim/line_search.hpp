// Line searches that behave on kinks. Both only need function values and gradients where the
// function happens to be differentiable; neither ever returns a point with a higher value.
//
// The objective supplies line_start(x, d) (called once per direction, so it may cache A*x and A*d)
// and line_eval(t, x_t, g) = f(x + t d), also writing the gradient into g unless g is null.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace pyinterp::optim {

enum class LineSearch { armijo, wolfe };

struct LineSearchOptions {
  double c1 = 1e-4;     // sufficient decrease: f(t) <= f(0) + c1 t f'(0)
  double c2 = 0.9;      // weak Wolfe curvature: f'(t) >= c2 f'(0)
  double shrink = 0.5;  // Armijo backtracking factor
  int max_steps = 60;   // trial points per search
};

struct LineStep {
  bool ok = false;  // false: no trial point lowered f
  double t = 0.0;
  double f = 0.0;
};

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

inline void step_point(const std::vector<double>& x, const std::vector<double>& d, double t, std::vector<double>& out) {
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] + t * d[i];
}

// Backtracking from t = 1 until the Armijo condition holds; then one gradient evaluation at the
// accepted point. x_new and g_new receive the point and its gradient.
template <class Obj>
LineStep armijo(Obj& obj, const std::vector<double>& x, double f, const std::vector<double>& d, double slope,
                const LineSearchOptions& o, std::vector<double>& x_new, std::vector<double>& g_new) {
  double t = 1.0;
  for (int k = 0; k < o.max_steps; ++k, t *= o.shrink) {
    step_point(x, d, t, x_new);
    const double ft = obj.line_eval(t, x_new.data(), nullptr);
    if (ft <= f + o.c1 * t * slope && ft < f) {
      obj.line_eval(t, x_new.data(), g_new.data());
      return {true, t, ft};
    }
  }
  return {};
}

// Weak Wolfe bracketing by doubling and bisection (Lewis & Overton 2013, "Nonsmooth optimization
// via quasi-Newton methods", sec. 4.2). On nonsmooth functions the curvature condition may never
// hold near a kink; the search then falls back to the largest point with sufficient decrease.
template <class Obj>
LineStep weak_wolfe(Obj& obj, const std::vector<double>& x, double f, const std::vector<double>& d, double slope,
                    const LineSearchOptions& o, std::vector<double>& x_new, std::vector<double>& g_new) {
  double lo = 0.0, hi = INFINITY, t = 1.0;
  LineStep best;
  std::vector<double> x_best, g_best;
  for (int k = 0; k < o.max_steps; ++k) {
    step_point(x, d, t, x_new);
    const double ft = obj.line_eval(t, x_new.data(), nullptr);  // the gradient only where it is needed
    if (!(ft <= f + o.c1 * t * slope) || !(ft < f)) {
      hi = t;
    } else if (obj.line_eval(t, x_new.data(), g_new.data()), dot(g_new, d) < o.c2 * slope) {
      lo = t;
      best = {true, t, ft};
      x_best = x_new;
      g_best = g_new;
    } else {
      return {true, t, ft};
    }
    t = std::isinf(hi) ? 2.0 * lo : 0.5 * (lo + hi);
    if (t == lo || t == hi) break;  // the bracket collapsed in floating point
  }
  if (best.ok) {
    x_new = x_best;
    g_new = g_best;
  }
  return best;
}

}  // namespace pyinterp::optim
