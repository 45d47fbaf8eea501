// Python bindings of interaction discovery: signed leaf paths.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "paths/signed_paths.hpp"
#include "py_util.hpp"

namespace pyinterp {

void bind_interactions(py::module_& m) {
  py::enum_<FirstOccurrence>(m, "FirstOccurrence")
      .value("after_filter", FirstOccurrence::after_filter)
      .value("literal", FirstOccurrence::literal);
  py::enum_<LeafWeight>(m, "LeafWeight").value("depth", LeafWeight::depth).value("samplesize", LeafWeight::samplesize);
  py::enum_<DecreaseScale>(m, "DecreaseScale")
      .value("weighted", DecreaseScale::weighted)
      .value("within_node", DecreaseScale::within_node);

  m.def(
      "signed_paths",
      [](const Forest& f, double epsilon, FirstOccurrence first, LeafWeight weight, DecreaseScale scale,
         int n_threads) {
        SignedPathOptions o;
        o.epsilon = epsilon;
        o.first_occurrence = first;
        o.weight = weight;
        o.scale = scale;
        SignedPaths paths;
        {
          py::gil_scoped_release release;
          paths = signed_paths(f, o, n_threads);
        }
        py::dict d;
        d["indptr"] = copy_array(paths.indptr);
        d["codes"] = copy_array(paths.codes);
        d["weight"] = copy_array(paths.weight);
        d["depth"] = copy_array(paths.depth);
        d["tree"] = copy_array(paths.tree);
        d["leaf"] = copy_array(paths.leaf);
        return d;
      },
      py::arg("forest"), py::arg("epsilon"), py::arg("first_occurrence"), py::arg("weight"), py::arg("scale"),
      py::arg("n_threads") = 1);
}

}  // namespace pyinterp
