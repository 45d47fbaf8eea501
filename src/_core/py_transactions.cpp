#include "py_transactions.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "common/huge_pages.hpp"
#include "py_util.hpp"

namespace pyinterp {
namespace {

const char* const kNotTransactions = "transactions must be a sequence of iterables of integer items";

// One Python item as an int64: Python and numpy integers only (floats, strings and bools would
// be silently converted by numpy, so they are refused here).
int64_t item_value(PyObject* o) {
  py::object index;
  if (!PyLong_CheckExact(o)) {
    if (PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o))
      throw py::type_error(std::string("transaction items must be integers, got ") + Py_TYPE(o)->tp_name);
    index = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!index) throw py::error_already_set();
    o = index.ptr();
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) throw py::value_error("transaction items must fit in a signed 64-bit integer");
  return v;
}

void append_row(const py::handle& row, HugeVector<int64_t>& items) {
  if (py::isinstance<py::array>(row)) {
    const auto a = py::reinterpret_borrow<py::array>(row);
    const char kind = a.dtype().kind();
    if (a.ndim() != 1) throw py::type_error(kNotTransactions);
    if (kind != 'i' && kind != 'u')
      throw py::type_error("transaction items must be integers, got an array of dtype " + std::string(py::str(a.dtype())));
    if (kind == 'u' && a.itemsize() == 8) {
      const auto u = py::array_t<uint64_t, py::array::forcecast>::ensure(a);
      for (py::ssize_t j = 0; j < u.shape(0); ++j)
        if (u.at(j) > static_cast<uint64_t>(INT64_MAX))
          throw py::value_error("transaction items must fit in a signed 64-bit integer");
    }
    const auto v = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    items.insert(items.end(), v.data(), v.data() + v.shape(0));
    return;
  }
  py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(row.ptr(), kNotTransactions));
  if (!seq) {
    PyErr_Clear();
    throw py::type_error(kNotTransactions);
  }
  PyObject** elems = PySequence_Fast_ITEMS(seq.ptr());
  const py::ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
  for (py::ssize_t j = 0; j < n; ++j) items.push_back(item_value(elems[j]));
}

// One exact Python int as an int64; ints of one digit (any item below 2^30) read in place.
int64_t exact_int(PyObject* o) {
#if PY_VERSION_HEX >= 0x030C0000
  if (PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(o)))
    return static_cast<int64_t>(PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(o)));
#elif !defined(PYPY_VERSION)
  const py::ssize_t size = Py_SIZE(o);
  if (size >= -1 && size <= 1) return size * static_cast<int64_t>(reinterpret_cast<PyLongObject*>(o)->ob_digit[0]);
#endif
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) throw py::value_error("transaction items must fit in a signed 64-bit integer");
  return v;
}

// Items of a list or tuple row appended. Exact Python ints (the common case) are written straight
// into place; from the first other item on, item by item: item_value may run Python code
// (__index__) that changes the row, so its items are re-read after each such call.
void append_ints(PyObject* row, HugeVector<int64_t>& items) {
  const py::ssize_t n = PySequence_Fast_GET_SIZE(row);
  PyObject* const* elems = PySequence_Fast_ITEMS(row);
  const size_t first = items.size();
  items.resize(first + static_cast<size_t>(n));
  int64_t* out = items.data() + first;
  py::ssize_t j = 0;
  for (; j < n && PyLong_CheckExact(elems[j]); ++j) out[j] = exact_int(elems[j]);
  if (j == n) return;
  items.resize(first + static_cast<size_t>(j));
  for (; j < PySequence_Fast_GET_SIZE(row); ++j) {
    const auto held = py::reinterpret_borrow<py::object>(PySequence_Fast_ITEMS(row)[j]);
    items.push_back(PyLong_CheckExact(held.ptr()) ? exact_int(held.ptr()) : item_value(held.ptr()));
  }
}

}  // namespace

// Python iterable of iterables of integers -> CSR (indptr, items) in one pass, with the GIL.
// A list or tuple of lists and tuples (what callers pass) is read in place, its size known up front.
py::tuple transactions_csr(const py::object& transactions) {
  HugeVector<int64_t> indptr{0}, items;  // 1.4 M items of madelon's forest paths: 11 MB
  PyObject* outer = transactions.ptr();
  if (PyList_CheckExact(outer) || PyTuple_CheckExact(outer)) {
    const py::ssize_t n = PySequence_Fast_GET_SIZE(outer);
    PyObject* const* rows = PySequence_Fast_ITEMS(outer);
    indptr.reserve(static_cast<size_t>(n) + 1);
    int64_t total = 0;
    for (py::ssize_t t = 0; t < n; ++t)
      if (PyList_CheckExact(rows[t]) || PyTuple_CheckExact(rows[t])) total += PySequence_Fast_GET_SIZE(rows[t]);
    items.reserve(static_cast<size_t>(total));
    for (py::ssize_t t = 0; t < n; ++t) {
      // The row is held while it is read, and the outer items re-read: item_value may run Python
      // code (__index__) that changes them.
      if (PySequence_Fast_GET_SIZE(outer) != n) throw py::value_error("transactions changed size while being read");
      const auto row = py::reinterpret_borrow<py::object>(PySequence_Fast_ITEMS(outer)[t]);
      if (PyList_CheckExact(row.ptr()) || PyTuple_CheckExact(row.ptr()))
        append_ints(row.ptr(), items);
      else
        append_row(row, items);
      indptr.push_back(static_cast<int64_t>(items.size()));
    }
  } else {
    if (!py::isinstance<py::iterable>(transactions)) throw py::type_error(kNotTransactions);
    for (const py::handle row : transactions) {
      append_row(row, items);
      indptr.push_back(static_cast<int64_t>(items.size()));
    }
  }
  return py::make_tuple(move_array(std::move(indptr)), move_array(std::move(items)));
}

// CSR rows and one value per row -> {tuple of Python ints: float}, in row order, built here
// rather than through numpy's tolist and a Python zip. Small items share their int objects.
py::dict csr_dict(const py::array& indptr_, const py::array& items_, const py::array& values_) {
  const auto ip = checked_array<int64_t>(indptr_, {-1}, "indptr");
  const auto it = checked_array<int64_t>(items_, {-1}, "items");
  const int64_t n = ip.shape(0) - 1;
  const auto values = checked_array<double>(values_, {n}, "values");
  const int64_t* p = ip.data();
  if (n < 0 || p[0] != 0 || p[n] != it.shape(0)) throw std::invalid_argument("indptr must run from 0 to len(items)");
  for (int64_t i = 0; i < n; ++i)
    if (p[i + 1] < p[i]) throw std::invalid_argument("indptr must be non-decreasing");
  constexpr int64_t kCached = 1024;
  std::vector<py::object> small(kCached);
  auto as_int = [&](int64_t v) {
    if (v >= 0 && v < kCached) {
      py::object& o = small[static_cast<size_t>(v)];
      if (!o) o = py::reinterpret_steal<py::object>(PyLong_FromLongLong(v));
      if (!o) throw py::error_already_set();
      return o.inc_ref().ptr();
    }
    PyObject* o = PyLong_FromLongLong(v);
    if (!o) throw py::error_already_set();
    return o;
  };
  // Tuples of ints cannot form cycles: the cyclic collector is held off while thousands of them
  // are made (it would otherwise run every 700 allocations, walking every young object), and each
  // is untracked once full (as the collector itself would on its first visit), so the dict of them
  // stays untracked too and later collections do not walk the output at all.
  struct HoldGc {
    int was_enabled = PyGC_Disable();
    ~HoldGc() {
      if (was_enabled) PyGC_Enable();
    }
  } hold_gc;
#if PY_VERSION_HEX < 0x030D0000 && !defined(PYPY_VERSION)
  auto out = py::reinterpret_steal<py::dict>(_PyDict_NewPresized(static_cast<py::ssize_t>(n)));  // no regrowth
  if (!out) throw py::error_already_set();
#else
  py::dict out;
#endif
  // Values repeat (supports are often small whole numbers): equal ones share one float, found
  // through a direct-mapped cache of the last float made per slot (fewer to make and to free).
  constexpr size_t kFloatSlots = 1024;
  std::vector<py::object> floats(kFloatSlots);
  std::vector<uint64_t> float_bits(kFloatSlots);
  auto as_float = [&](double x) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    const size_t s = static_cast<size_t>((b * 0x9e3779b97f4a7c15ULL) >> 54);
    py::object& o = floats[s];
    if (!o || float_bits[s] != b) {
      o = py::reinterpret_steal<py::object>(PyFloat_FromDouble(x));
      if (!o) throw py::error_already_set();
      float_bits[s] = b;
    }
    return o.ptr();
  };
  const int64_t* items = it.data();
  const double* v = values.data();
  for (int64_t r = 0; r < n; ++r) {
    auto key = py::reinterpret_steal<py::object>(PyTuple_New(static_cast<py::ssize_t>(p[r + 1] - p[r])));
    if (!key) throw py::error_already_set();
    for (int64_t j = p[r]; j < p[r + 1]; ++j) PyTuple_SET_ITEM(key.ptr(), static_cast<py::ssize_t>(j - p[r]), as_int(items[j]));
    PyObject_GC_UnTrack(key.ptr());
    if (PyDict_SetItem(out.ptr(), key.ptr(), as_float(v[r])) != 0) throw py::error_already_set();
  }
  return out;
}

}  // namespace pyinterp
