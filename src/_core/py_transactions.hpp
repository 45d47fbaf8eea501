// Python rows of items <-> CSR arrays: the binding code whose loops visit every item of a call (a
// Python object each), compiled at the core's -O3 rather than the bindings' -Os.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace pyinterp {

// Python iterable of iterables of integers -> CSR (indptr, items), both int64.
pybind11::tuple transactions_csr(const pybind11::object& transactions);

// CSR rows (int64) and one float per row -> {tuple of Python ints: float}, in row order.
pybind11::dict csr_dict(const pybind11::array& indptr, const pybind11::array& items, const pybind11::array& values);

}  // namespace pyinterp
