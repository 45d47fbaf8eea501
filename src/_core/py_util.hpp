// Conversions between numpy arrays and the core's views, shared by the binding files.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "common/matrix.hpp"

namespace pyinterp {
namespace py = pybind11;


// Value comparison of dtypes (a memmap's dtype is equal to, not the same object as, float64's);
// non-native byte order does not match.
template <class T>
inline bool has_dtype(const py::array& a) {
  return py::isinstance<py::array_t<T>>(a);
}

inline MatrixView matrix_view(const py::array& X) {
  if (X.ndim() != 2) throw std::invalid_argument("X must be a 2-d array");
  MatrixView v;
  if (has_dtype<float>(X)) {
    v.is_float32 = true;
  } else if (!has_dtype<double>(X)) {
    throw std::invalid_argument("X must be float32 or float64");
  }
  const auto item = static_cast<int64_t>(X.itemsize());
  if (X.strides(0) % item != 0 || X.strides(1) % item != 0)
    throw std::invalid_argument("X strides must be multiples of its item size");
  v.data = X.data();
  v.n_rows = X.shape(0);
  v.n_cols = X.shape(1);
  v.row_stride = X.strides(0) / item;
  v.col_stride = X.strides(1) / item;
  return v;
}

// The one check of arrays that cross into the core: dtype T, C-contiguous, the given shape (-1:
// any extent). Without `convert` the caller's memory is used as it is (never copied); with it, other
// dtypes and layouts are converted (pickled state). Errors name the argument.
template <class T>
py::array_t<T, py::array::c_style> checked_array(const py::handle& obj, std::initializer_list<int64_t> shape,
                                                 const char* name, bool convert = false) {
  using Array = py::array_t<T, py::array::c_style>;
  py::object a;  // null unless obj is (or, with convert, became) a C-contiguous array of dtype T
  if (convert) {
    a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(obj);
    if (!a) PyErr_Clear();
  } else if (py::isinstance<py::array>(obj) && has_dtype<T>(py::reinterpret_borrow<py::array>(obj)) &&
             (py::reinterpret_borrow<py::array>(obj).flags() & py::array::c_style)) {
    a = py::reinterpret_borrow<py::object>(obj);
  }
  if (!a)
    throw std::invalid_argument(std::string(name) + " must be a C-contiguous array of dtype " +
                                std::string(py::str(py::dtype::of<T>())));
  const auto arr = py::reinterpret_borrow<Array>(a);
  bool ok = arr.ndim() == static_cast<py::ssize_t>(shape.size());
  int d = 0;
  for (const int64_t want : shape) ok = ok && (want < 0 || arr.shape(d++) == want);
  if (!ok) {
    std::string want = "(";
    for (const int64_t e : shape) want += (e < 0 ? std::string("any") : std::to_string(e)) + ", ";
    want.resize(want.size() - 2);
    throw std::invalid_argument(std::string(name) + " must have shape " + want + (shape.size() == 1 ? ",)" : ")"));
  }
  return arr;
}

// checked_array's data, or nullptr for None (an optional argument).
template <class T>
const T* optional_data(const py::object& obj, std::initializer_list<int64_t> shape, const char* name) {
  return obj.is_none() ? nullptr : checked_array<T>(obj, shape, name).data();
}

// A 1-d numpy copy of a core vector (for results the core hands over and forgets).
template <class T>
py::array copy_array(const std::vector<T>& data) {
  return py::array(static_cast<py::ssize_t>(data.size()), data.data());
}

// A 1-d numpy array that takes over a core vector's buffer (no copy; a capsule frees it).
template <class T>
py::array move_array(std::vector<T>&& data) {
  auto owned = std::make_unique<std::vector<T>>(std::move(data));
  py::capsule free_when_done(owned.get(), [](void* p) { delete static_cast<std::vector<T>*>(p); });
  const std::vector<T>& v = *owned.release();
  return py::array(static_cast<py::ssize_t>(v.size()), v.data(), free_when_done);
}

// A read-only numpy view of core memory that keeps `owner` alive.
template <class T>
py::array view(const std::vector<T>& data, std::vector<py::ssize_t> shape, py::handle owner) {
  std::vector<py::ssize_t> strides(shape.size(), sizeof(T));
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  py::array a(py::dtype::of<T>(), shape, strides, data.data(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

}  // namespace pyinterp
