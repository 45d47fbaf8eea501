// Conversions between numpy arrays and the core's views, shared by the binding files.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <new>
#include <memory>
#include <string>
#include <vector>

#include "data/matrix.hpp"

namespace pyinterp {
namespace py = pybind11;


// Value comparison of dtypes (a memmap's dtype is equal to, not the same object as, float64's);
// non-native byte order does not match.
template <class T>
inline bool has_dtype(const py::array& a) {
  return py::isinstance<py::array_t<T>>(a);
}

namespace detail {

inline bool aligned(const py::array& a) { return (a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0; }

// X's element type, or false if it has none the core reads.
inline bool value_type(const py::array& a, ValueType& type) {
  if (has_dtype<double>(a)) type = ValueType::float64;
  else if (has_dtype<float>(a)) type = ValueType::float32;
  else if (has_dtype<int8_t>(a)) type = ValueType::int8;
  else if (has_dtype<uint8_t>(a)) type = ValueType::uint8;
  else if (has_dtype<int16_t>(a)) type = ValueType::int16;
  else if (has_dtype<bool>(a)) type = ValueType::boolean;
  else return false;
  return true;
}

constexpr const char* kTypes = "float64, float32, int8, uint8, int16 or bool";

// A scipy.sparse CSR or CSC matrix (or array) in canonical form; every index is checked, so the
// core's reads stay in bounds whatever the caller built.
template <class Index>
void check_sparse_indices(const py::array& indptr, const py::array& indices, int64_t n_major, int64_t n_minor,
                          int64_t n_data) {
  const Index* p = static_cast<const Index*>(indptr.data());
  const Index* idx = static_cast<const Index*>(indices.data());
  if (indptr.shape(0) != n_major + 1 || p[0] != 0 || p[n_major] > indices.shape(0) || p[n_major] > n_data)
    throw std::invalid_argument("X (sparse) has inconsistent indptr, indices and data lengths");
  for (int64_t k = 0; k < n_major; ++k) {
    if (p[k + 1] < p[k]) throw std::invalid_argument("X (sparse) has a decreasing indptr");
    for (Index e = p[k]; e < p[k + 1]; ++e)
      if (idx[e] < 0 || idx[e] >= n_minor || (e > p[k] && idx[e] <= idx[e - 1]))
        throw std::invalid_argument("X (sparse) must have sorted indices in range without duplicates");
  }
}

inline MatrixView sparse_view(const py::handle& X) {
  const std::string format = py::str(X.attr("format"));
  if (format != "csr" && format != "csc") throw std::invalid_argument("X must be a CSR or CSC sparse matrix, got " + format);
  MatrixView v;
  v.layout = format == "csc" ? MatrixView::Layout::csc : MatrixView::Layout::csr;
  const auto shape = X.attr("shape").cast<std::pair<int64_t, int64_t>>();
  v.n_rows = shape.first;
  v.n_cols = shape.second;
  const py::object data_obj = X.attr("data"), indices_obj = X.attr("indices"), indptr_obj = X.attr("indptr");
  const auto data = py::reinterpret_borrow<py::array>(data_obj);
  const auto indices = py::reinterpret_borrow<py::array>(indices_obj);
  const auto indptr = py::reinterpret_borrow<py::array>(indptr_obj);
  for (const py::array* a : {&data, &indices, &indptr})
    if (!py::isinstance<py::array>(*a) || a->ndim() != 1 || !(a->flags() & py::array::c_style))
      throw std::invalid_argument("X (sparse) must hold 1-d contiguous data, indices and indptr arrays");
  if (!value_type(data, v.type)) throw std::invalid_argument(std::string("X's values must be ") + kTypes);
  const int64_t n_major = v.layout == MatrixView::Layout::csc ? v.n_cols : v.n_rows;
  const int64_t n_minor = v.layout == MatrixView::Layout::csc ? v.n_rows : v.n_cols;
  if (has_dtype<int64_t>(indptr) && has_dtype<int64_t>(indices)) {
    v.index64 = true;
    check_sparse_indices<int64_t>(indptr, indices, n_major, n_minor, data.shape(0));
  } else if (has_dtype<int32_t>(indptr) && has_dtype<int32_t>(indices)) {
    check_sparse_indices<int32_t>(indptr, indices, n_major, n_minor, data.shape(0));
  } else {
    throw std::invalid_argument("X (sparse) must have int32 or int64 indices and indptr of one dtype");
  }
  // The arrays are X's attributes, so they live as long as X, which outlives the call.
  v.data = data.data();
  v.indices = indices.data();
  v.indptr = indptr.data();
  return v;
}

// pyinterp.io.PackedGenotypes: its calls (a uint8 array, one row of ceil(n_file_samples / 4)
// contiguous bytes per variant, usually a map of the .bed or a slice of one), the file's sample
// count, the rows kept (int64 sample indices, or None for all), which allele is counted, and the
// covariates beside the calls (float64, one row per kept sample, Fortran order; or None). Every
// extent is checked against the arrays, so the core's reads stay in bounds whatever the object holds.
inline MatrixView packed_view(const py::handle& X) {
  const py::object calls_obj = X.attr("_calls"), rows_obj = X.attr("_rows");
  const auto n_file = X.attr("_n_file_samples").cast<int64_t>();
  if (!py::isinstance<py::array>(calls_obj)) throw std::invalid_argument("X's packed calls must be a numpy array");
  const auto calls = py::reinterpret_borrow<py::array>(calls_obj);
  if (!has_dtype<uint8_t>(calls) || calls.ndim() != 2 || calls.strides(1) != 1 || calls.strides(0) < calls.shape(1))
    throw std::invalid_argument("X's packed calls must be a 2-d uint8 array, each variant's bytes contiguous");
  if (n_file <= 0 || calls.shape(1) != (n_file + 3) / 4)
    throw std::invalid_argument("X's packed calls must have (n_file_samples + 3) // 4 bytes per variant");
  MatrixView v;
  v.layout = MatrixView::Layout::packed;
  v.type = ValueType::uint8;
  v.data = calls.data();
  v.n_cols = calls.shape(0);
  v.n_rows = n_file;
  v.col_stride = calls.strides(0);
  v.count_a2 = X.attr("count_a2").cast<bool>();
  if (!rows_obj.is_none()) {
    if (!py::isinstance<py::array>(rows_obj)) throw std::invalid_argument("X's rows must be a numpy array");
    const auto rows = py::reinterpret_borrow<py::array>(rows_obj);
    if (!has_dtype<int64_t>(rows) || rows.ndim() != 1 || !(rows.flags() & py::array::c_style) || !aligned(rows))
      throw std::invalid_argument("X's rows must be an aligned C-contiguous 1-d int64 array");
    const int64_t* r = static_cast<const int64_t*>(rows.data());
    for (py::ssize_t i = 0; i < rows.shape(0); ++i)
      if (r[i] < 0 || r[i] >= n_file) throw std::invalid_argument("X's rows must be sample indices of its file");
    v.indices = r;
    v.n_rows = rows.shape(0);
  }
  const py::object tail_obj = py::getattr(X, "_covariates", py::none());
  if (!tail_obj.is_none()) {
    if (!py::isinstance<py::array>(tail_obj)) throw std::invalid_argument("X's covariates must be a numpy array");
    const auto tail = py::reinterpret_borrow<py::array>(tail_obj);
    if (!has_dtype<double>(tail) || tail.ndim() != 2 || tail.shape(0) != v.n_rows || tail.shape(1) < 1 ||
        !(tail.flags() & py::array::f_style) || !aligned(tail))
      throw std::invalid_argument("X's covariates must be an aligned Fortran-ordered float64 array of one row per sample");
    v.tail = static_cast<const double*>(tail.data());
    v.tail_cols = tail.shape(1);
    v.n_cols += v.tail_cols;
  }
  return v;
}

}  // namespace detail

// The core's view of X: a numpy array of one of the value types, a scipy.sparse CSR / CSC matrix
// or array, or packed genotype calls (pyinterp.io.PackedGenotypes). X must outlive the view.
inline MatrixView matrix_view(const py::handle& X) {
  if (!py::isinstance<py::array>(X)) {
    if (py::hasattr(X, "indptr") && py::hasattr(X, "format")) return detail::sparse_view(X);
    if (py::hasattr(X, "_calls") && py::hasattr(X, "_n_file_samples")) return detail::packed_view(X);
    throw std::invalid_argument("X must be a numpy array, a scipy.sparse CSR / CSC matrix or packed genotypes");
  }
  const auto a = py::reinterpret_borrow<py::array>(X);
  if (a.ndim() != 2) throw std::invalid_argument("X must be a 2-d array");
  MatrixView v;
  if (!detail::value_type(a, v.type)) throw std::invalid_argument(std::string("X must be ") + detail::kTypes);
  const auto item = static_cast<int64_t>(a.itemsize());
  if (a.strides(0) % item != 0 || a.strides(1) % item != 0)
    throw std::invalid_argument("X strides must be multiples of its item size");
  // Not required aligned: the core loads X's values through memcpy (matrix.hpp).
  v.data = a.data();
  v.n_rows = a.shape(0);
  v.n_cols = a.shape(1);
  v.row_stride = a.strides(0) / item;
  v.col_stride = a.strides(1) / item;
  return v;
}

// The one check of arrays that cross into the core: dtype T, C-contiguous, the given shape (-1:
// any extent). Without `convert` the caller's memory is used as it is (never copied); with it, other
// dtypes, layouts and unaligned buffers are converted (pickled state). Errors name the argument.
template <class T>
py::array_t<T, py::array::c_style> checked_array(const py::handle& obj, std::initializer_list<int64_t> shape,
                                                 const char* name, bool convert = false) {
  using Array = py::array_t<T, py::array::c_style>;
  py::object a;  // null unless obj is (or, with convert, became) a C-contiguous array of dtype T
  if (convert) {
    a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(obj);
    if (!a) PyErr_Clear();
    // A pickled array can arrive at any byte offset (Dask places out-of-band buffers in one
    // message): an aligned copy, as numpy makes every new array.
    if (a && !detail::aligned(py::reinterpret_borrow<Array>(a)))
      a = py::module_::import("numpy").attr("array")(a, py::arg("copy") = true);
  } else if (py::isinstance<py::array>(obj) && has_dtype<T>(py::reinterpret_borrow<py::array>(obj)) &&
             (py::reinterpret_borrow<py::array>(obj).flags() & py::array::c_style)) {
    a = py::reinterpret_borrow<py::object>(obj);
  }
  if (!a)
    throw std::invalid_argument(std::string(name) + " must be a C-contiguous array of dtype " +
                                std::string(py::str(py::dtype::of<T>())));
  const auto arr = py::reinterpret_borrow<Array>(a);
  // The core loads T directly: an unaligned view (into a byte buffer) would be undefined behaviour.
  if (!detail::aligned(arr))
    throw std::invalid_argument(std::string(name) + " must be aligned in memory (Python passes an aligned copy)");
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
template <class T, class A>
py::array move_array(std::vector<T, A>&& data) {
  using Vector = std::vector<T, A>;
  auto owned = std::make_unique<Vector>(std::move(data));
  py::capsule free_when_done(owned.get(), [](void* p) { delete static_cast<Vector*>(p); });
  const Vector& v = *owned.release();
  return py::array(static_cast<py::ssize_t>(v.size()), v.data(), free_when_done);
}

// A C-ordered numpy array of zeros from calloc, freed by a capsule. Large blocks come from the
// kernel's zero pages, untouched until written (numpy.zeros would also madvise them into 2 MB huge
// pages, each zeroed whole by the first write into it): for outputs the core adds sparse entries to.
template <class T>
py::array_t<T> zeros_array(const std::vector<py::ssize_t>& shape) {
  size_t n = 1;
  for (const py::ssize_t d : shape) n *= static_cast<size_t>(d);
  void* data = std::calloc(std::max<size_t>(n, 1), sizeof(T));
  if (data == nullptr) throw std::bad_alloc();
  py::capsule free_when_done(data, [](void* q) { std::free(q); });
  return py::array_t<T>(shape, static_cast<T*>(data), free_when_done);
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
