// The conversions of a fit's inputs that the forest bindings and the column blocks' share.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>

#include "data/column_source.hpp"
#include "forest/criterion.hpp"

namespace pyinterp {

// X's columns: read in place, or from its file (mapped_file: (path, offset of X[0, 0]) or None).
std::unique_ptr<ColumnSource> x_source(const pybind11::object& X, const pybind11::object& mapped_file);

// The targets of a fit: y (real) or classes (indices below n_classes), one per row (n,) or
// n_outputs per row (n, n_outputs).
FitTargets fit_targets(const pybind11::object& y, const pybind11::object& classes, int32_t n_classes,
                       int64_t n_rows);

}  // namespace pyinterp
