// Python bindings of Skinny Trees' soft-tree kernels: shape checks here, the recursion in skinny/.
#include <string>

#include "bindings.hpp"
#include "py_util.hpp"
#include "skinny/softtree.hpp"

namespace pyinterp {
namespace {

template <class T>
using Array = py::array_t<T, py::array::c_style>;

SoftTreeShape shape_of(int depth, int64_t n_rows, int64_t width, int64_t per_tree, const char* name) {
  if (depth < 1 || depth > 20) throw std::invalid_argument("depth must be in [1, 20]");
  if (width % per_tree != 0)
    throw std::invalid_argument(std::string(name) + "'s width must be a multiple of 2**depth - 1 (Z) or 2**depth (dP)");
  SoftTreeShape s;
  s.n_rows = n_rows;
  s.n_trees = width / per_tree;
  s.depth = depth;
  return s;
}

Activation activation_of(const std::string& name) {
  if (name == "sigmoid") return Activation::sigmoid;
  if (name == "smooth_step") return Activation::smooth_step;
  throw std::invalid_argument("activation must be 'sigmoid' or 'smooth_step'");
}

template <class T>
py::tuple forward(const py::array& Z_, const py::object& bias_, int depth, const std::string& activation,
                  double gamma_s) {
  if (Z_.ndim() != 2) throw std::invalid_argument("Z must be 2-d");
  const int64_t width = Z_.shape(1);
  const SoftTreeShape s = shape_of(depth, Z_.shape(0), width, (int64_t{1} << depth) - 1, "Z");
  auto Z = checked_array<T>(Z_, {s.n_rows, width}, "Z");
  const T* bias = nullptr;
  Array<T> b;
  if (!bias_.is_none()) {
    b = checked_array<T>(bias_, {width}, "bias");
    bias = b.data();
  }
  const Activation act = activation_of(activation);
  if (!(gamma_s > 0)) throw std::invalid_argument("gamma_s must be positive");
  Array<T> S({s.n_rows, width}), dS({s.n_rows, width}), P({s.n_rows, s.n_trees * s.leaves()});
  {
    py::gil_scoped_release release;
    softtree_forward<T>(s, Z.data(), bias, act, static_cast<T>(gamma_s), S.mutable_data(), dS.mutable_data(),
                        P.mutable_data());
  }
  return py::make_tuple(S, dS, P);
}

template <class T>
py::tuple backward(const py::array& dP_, const py::array& S_, const py::array& dS_, int depth) {
  if (dP_.ndim() != 2) throw std::invalid_argument("dP must be 2-d");
  const SoftTreeShape s = shape_of(depth, dP_.shape(0), dP_.shape(1), int64_t{1} << depth, "dP");
  const int64_t width = s.n_trees * s.internal();
  auto dP = checked_array<T>(dP_, {s.n_rows, s.n_trees * s.leaves()}, "dP");
  auto S = checked_array<T>(S_, {s.n_rows, width}, "S");
  auto dS = checked_array<T>(dS_, {s.n_rows, width}, "dS");
  Array<T> dZ({s.n_rows, width}), db(width);
  {
    py::gil_scoped_release release;
    softtree_backward<T>(s, dP.data(), S.data(), dS.data(), dZ.mutable_data(), db.mutable_data());
  }
  return py::make_tuple(dZ, db);
}

}  // namespace

void bind_skinny(py::module_& m) {
  m.def(
      "softtree_forward",
      [](const py::array& Z, const py::object& bias, int depth, const std::string& activation, double gamma_s) {
        if (has_dtype<float>(Z)) return forward<float>(Z, bias, depth, activation, gamma_s);
        if (has_dtype<double>(Z)) return forward<double>(Z, bias, depth, activation, gamma_s);
        throw std::invalid_argument("Z must be float32 or float64");
      },
      py::arg("Z"), py::arg("bias"), py::arg("depth"), py::arg("activation") = "sigmoid", py::arg("gamma_s") = 1.0,
      "S, dS and leaf probabilities P (B x n_trees*2^depth) from split pre-activations Z (B x n_trees*(2^depth-1)).");
  m.def(
      "softtree_backward",
      [](const py::array& dP, const py::array& S, const py::array& dS, int depth) {
        if (has_dtype<float>(dP)) return backward<float>(dP, S, dS, depth);
        if (has_dtype<double>(dP)) return backward<double>(dP, S, dS, depth);
        throw std::invalid_argument("dP must be float32 or float64");
      },
      py::arg("dP"), py::arg("S"), py::arg("dS"), py::arg("depth"),
      "dZ and db (its column sums) from dP = dLoss/dP and the forward pass's S, dS.");
}

}  // namespace pyinterp
