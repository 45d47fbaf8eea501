// One function per area registers that area's classes and functions on the module.
#pragma once
#include <pybind11/pybind11.h>

namespace pyinterp {

void bind_forest(pybind11::module_& m);
void bind_blocks(pybind11::module_& m);
void bind_importance(pybind11::module_& m);
void bind_interactions(pybind11::module_& m);
void bind_skinny(pybind11::module_& m);
void bind_dictionary(pybind11::module_& m);

}  // namespace pyinterp
