// The extension module: the only translation units that know about Python are bindings.cpp and
// bind_*.cpp; they convert numpy arrays to core views and release the GIL around every core call.
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "pyinterp's C++ core: random-forest engine and the measures computed from it.";
  pyinterp::bind_forest(m);
  pyinterp::bind_importance(m);
  pyinterp::bind_interactions(m);
  pyinterp::bind_skinny(m);
  pyinterp::bind_dictionary(m);
}
