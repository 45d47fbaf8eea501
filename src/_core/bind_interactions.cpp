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
        auto arr = [](const auto& a) { return py::array(static_cast<py::ssize_t>(a.size()), a.data()); };
        py::dict d;
        d["indptr"] = arr(paths.indptr);
        d["codes"] = arr(paths.codes);
        d["weight"] = arr(paths.weight);
        d["depth"] = arr(paths.depth);
        d["tree"] = arr(paths.tree);
        d["leaf"] = arr(paths.leaf);
        return d;
      },
      py::arg("forest"), py::arg("epsilon"), py::arg("first_occurrence"), py::arg("weight"), py::arg("scale"),
      py::arg("n_threads") = 1);
}

}  // namespace pyinterp
