// Python bindings of dictionary learning (DL-BCD, the sharpness statistic, the row subproblem).
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "dictionary/dlbcd.hpp"
#include "dictionary/row_objective.hpp"
#include "py_util.hpp"

namespace pyinterp {
namespace {

using Matrix = py::array_t<double, py::array::c_style>;

optim::Options solver_options(optim::LineSearch line_search, int memory, int max_iter, double tol) {
  if (memory < 0 || max_iter < 0) throw std::invalid_argument("memory and max_iter must be non-negative");
  optim::Options o;
  o.line_search = line_search;
  o.memory = memory;
  o.max_iter = max_iter;
  o.tol = tol;
  return o;
}

Matrix square(const std::vector<double>& data, int p) {
  Matrix out({p, p});
  std::copy(data.begin(), data.end(), out.mutable_data());
  return out;
}

}  // namespace

void bind_dictionary(py::module_& m) {
  py::enum_<optim::LineSearch>(m, "LineSearch")
      .value("armijo", optim::LineSearch::armijo)
      .value("wolfe", optim::LineSearch::wolfe);

  m.def(
      "dlbcd_fit",
      [](const py::array& X, const py::array& D0s, const py::array& Q0s, double tau, bool warm, int max_iter,
         double tol, double delta, double start_noise, uint64_t seed, optim::LineSearch line_search, int memory,
         int inner_max_iter, double inner_tol, int n_threads, int64_t first_restart) {
        if (first_restart < 0) throw std::invalid_argument("first_restart must be >= 0");
        if (X.ndim() != 2 || D0s.ndim() != 3) throw std::invalid_argument("X must be 2-d and D0s 3-d");
        const int64_t n = X.shape(0);
        const int p = static_cast<int>(X.shape(1));
        const int restarts = static_cast<int>(D0s.shape(0));
        const double* x = checked_array<double>(X, {n, p}, "X").data();
        const double* d0 = checked_array<double>(D0s, {restarts, p, p}, "D0s").data();
        const double* q0 = checked_array<double>(Q0s, {restarts, p, p}, "Q0s").data();
        if (p < 1 || n < p) throw std::invalid_argument("X must have at least as many rows as columns");
        DlbcdOptions opt;
        opt.tau = tau;
        opt.max_iter = max_iter;
        opt.tol = tol;
        opt.delta = delta;
        opt.start_noise = start_noise;
        opt.seed = seed;
        opt.solver = solver_options(line_search, memory, inner_max_iter, inner_tol);
        std::vector<DlbcdRun> runs;
        {
          py::gil_scoped_release release;
          runs = fit_dlbcd(x, n, p, d0, q0, restarts, warm, opt, n_threads, first_restart);
        }
        py::list out;
        for (const auto& r : runs) {
          py::object warm_D = r.warm_dictionary.empty() ? py::object(py::none()) : py::object(square(r.warm_dictionary, p));
          out.append(py::make_tuple(square(r.dictionary, p), copy_array(r.history), r.n_iter, r.n_iter_warm, warm_D,
                                    copy_array(r.warm_history)));
        }
        return out;
      },
      py::arg("X"), py::arg("D0s"), py::arg("Q0s"), py::arg("tau"), py::arg("warm"), py::arg("max_iter"),
      py::arg("tol"), py::arg("delta"), py::arg("start_noise"), py::arg("seed"), py::arg("line_search"),
      py::arg("memory"), py::arg("inner_max_iter"), py::arg("inner_tol"), py::arg("n_threads") = 1,
      py::arg("first_restart") = 0);

  m.def(
      "sharpness_statistic",
      [](const py::array& beta, const py::array& M, const py::array& W0, double delta, optim::LineSearch line_search,
         int memory, int inner_max_iter, double inner_tol, int n_threads) {
        if (beta.ndim() != 2) throw std::invalid_argument("beta must be 2-d");
        const int64_t n = beta.shape(0);
        const int p = static_cast<int>(beta.shape(1));
        const double* b = checked_array<double>(beta, {n, p}, "beta").data();
        const double* mm = checked_array<double>(M, {p, p}, "M").data();
        const double* w0 = checked_array<double>(W0, {p, p}, "W0").data();
        const optim::Options opt = solver_options(line_search, memory, inner_max_iter, inner_tol);
        std::vector<double> W;
        double r;
        {
          py::gil_scoped_release release;
          r = sharpness_statistic(b, n, p, mm, w0, delta, opt, n_threads, W);
        }
        return py::make_tuple(r, square(W, p));
      },
      py::arg("beta"), py::arg("M"), py::arg("W0"), py::arg("delta"), py::arg("line_search"), py::arg("memory"),
      py::arg("inner_max_iter"), py::arg("inner_tol"), py::arg("n_threads") = 1);

  m.def(
      "solve_row_subproblem",
      [](const py::array& A, int j, const py::array& cos, const py::array& weight, double delta,
         optim::LineSearch line_search, int memory, int inner_max_iter, double inner_tol) {
        if (A.ndim() != 2) throw std::invalid_argument("A must be 2-d");
        const int64_t n = A.shape(0);
        const int p = static_cast<int>(A.shape(1));
        checked_array<double>(A, {n, p}, "A").data();
        const double* mm = checked_array<double>(cos, {p}, "cos").data();
        const double* c = checked_array<double>(weight, {p}, "weight").data();
        if (j < 0 || j >= p) throw std::invalid_argument("j out of range");
        const optim::Options opt = solver_options(line_search, memory, inner_max_iter, inner_tol);
        auto cols = py::array_t<double, py::array::f_style>::ensure(A);  // column-major copy
        std::vector<double> x(p - 1, 0.0), w(p);
        optim::Result res;
        {
          py::gil_scoped_release release;
          RowObjective obj(cols.data(), n, p, j, mm, c, delta, 1.0);
          res = optim::minimize(obj, x, opt);
          obj.expand(x.data(), w);
          res.f = obj.exact_value(x.data());
        }
        return py::make_tuple(copy_array(w), res.f, res.n_iter);
      },
      py::arg("A"), py::arg("j"), py::arg("cos"), py::arg("weight"), py::arg("delta"), py::arg("line_search"),
      py::arg("memory"), py::arg("inner_max_iter"), py::arg("inner_tol"));
}

}  // namespace pyinterp
