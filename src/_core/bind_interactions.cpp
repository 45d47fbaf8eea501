// Python bindings of interaction discovery: signed leaf paths, set matching, frequent itemsets.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "mining/itemsets.hpp"
#include "mining/rit.hpp"
#include "paths/set_matches.hpp"
#include "paths/signed_paths.hpp"
#include "py_util.hpp"

namespace pyinterp {
namespace {

using Int64Array = py::array_t<int64_t, py::array::c_style>;
using Int32Array = py::array_t<int32_t, py::array::c_style>;

// CSR arrays checked for shape and monotone bounds: the core trusts indptr.
template <class Codes>
void check_csr(const Int64Array& indptr, const Codes& codes, const char* name) {
  if (indptr.ndim() != 1 || indptr.shape(0) < 1 || codes.ndim() != 1)
    throw std::invalid_argument(std::string(name) + ": indptr and items must be 1-d, indptr non-empty");
  const int64_t* p = indptr.data();
  const int64_t n = indptr.shape(0) - 1;
  if (p[0] != 0 || p[n] != codes.shape(0)) throw std::invalid_argument(std::string(name) + ": indptr must run from 0 to len(items)");
  for (int64_t i = 0; i < n; ++i)
    if (p[i + 1] < p[i]) throw std::invalid_argument(std::string(name) + ": indptr must be non-decreasing");
}

CsrView csr_view(const Int64Array& indptr, const Int32Array& codes, const char* name) {
  check_csr(indptr, codes, name);
  return {indptr.data(), codes.data(), indptr.shape(0) - 1};
}

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

void append_row(const py::handle& row, std::vector<int64_t>& items) {
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

// Python iterable of iterables of integers -> CSR (indptr, items) in one pass, with the GIL.
py::tuple transactions_csr(const py::object& transactions) {
  if (!py::isinstance<py::iterable>(transactions)) throw py::type_error(kNotTransactions);
  std::vector<int64_t> indptr{0}, items;
  for (const py::handle row : transactions) {
    append_row(row, items);
    indptr.push_back(static_cast<int64_t>(items.size()));
  }
  return py::make_tuple(move_array(std::move(indptr)), move_array(std::move(items)));
}

}  // namespace

void bind_interactions(py::module_& m) {
  py::enum_<FirstOccurrence>(m, "FirstOccurrence")
      .value("after_filter", FirstOccurrence::after_filter)
      .value("literal", FirstOccurrence::literal)
      .value("every", FirstOccurrence::every);
  py::enum_<LeafWeight>(m, "LeafWeight").value("depth", LeafWeight::depth).value("samplesize", LeafWeight::samplesize);
  py::enum_<DecreaseScale>(m, "DecreaseScale")
      .value("weighted", DecreaseScale::weighted)
      .value("within_node", DecreaseScale::within_node);
  py::enum_<NodeCounts>(m, "NodeCounts").value("weighted", NodeCounts::weighted).value("distinct", NodeCounts::distinct);

  m.def(
      "signed_paths",
      [](const Forest& f, double epsilon, FirstOccurrence first, LeafWeight weight, DecreaseScale scale,
         NodeCounts counts, int n_threads) {
        const SignedPathOptions o{epsilon, first, weight, scale, counts};
        SignedPaths paths;
        {
          py::gil_scoped_release release;
          paths = signed_paths(f, o, n_threads);
        }
        py::dict d;
        d["indptr"] = move_array(std::move(paths.indptr));
        d["codes"] = move_array(std::move(paths.codes));
        d["weight"] = move_array(std::move(paths.weight));
        d["depth"] = move_array(std::move(paths.depth));
        d["tree"] = move_array(std::move(paths.tree));
        d["leaf"] = move_array(std::move(paths.leaf));
        return d;
      },
      py::arg("forest"), py::arg("epsilon"), py::arg("first_occurrence"), py::arg("weight"), py::arg("scale"),
      py::arg("counts"), py::arg("n_threads") = 1);
  m.def(
      "distinct_signed_paths",
      [](const Forest& f, double epsilon, FirstOccurrence first, LeafWeight weight, DecreaseScale scale,
         NodeCounts counts, int n_threads) {
        const SignedPathOptions o{epsilon, first, weight, scale, counts};
        WeightedRows rows;
        {
          py::gil_scoped_release release;
          rows = distinct_signed_paths(f, o, n_threads);
        }
        return py::make_tuple(move_array(std::move(rows.start)), move_array(std::move(rows.items)),
                              move_array(std::move(rows.weight)));
      },
      py::arg("forest"), py::arg("epsilon"), py::arg("first_occurrence"), py::arg("weight"), py::arg("scale"),
      py::arg("counts"), py::arg("n_threads") = 1);

  m.def(
      "match_sets",
      [](const Int64Array& indptr, const Int32Array& codes, const Int64Array& query_indptr,
         const Int32Array& query_codes) {
        const CsrView rows = csr_view(indptr, codes, "rows"), queries = csr_view(query_indptr, query_codes, "queries");
        SetMatches matches;
        {
          py::gil_scoped_release release;
          matches = match_sets(rows, queries);
        }
        return py::make_tuple(move_array(std::move(matches.indptr)), move_array(std::move(matches.rows)));
      },
      py::arg("indptr"), py::arg("codes"), py::arg("query_indptr"), py::arg("query_codes"));

  m.def(
      "match_sums",
      [](const Int64Array& indptr, const Int32Array& codes, const Int64Array& query_indptr,
         const Int32Array& query_codes, const py::array_t<double, py::array::c_style>& values, int n_threads) {
        const CsrView rows = csr_view(indptr, codes, "rows"), queries = csr_view(query_indptr, query_codes, "queries");
        if (values.ndim() != 2 || values.shape(0) != rows.n)
          throw std::invalid_argument("values must be 2-d with one row per set");
        const int64_t m = values.shape(1);
        std::vector<double> sums;
        {
          py::gil_scoped_release release;
          sums = match_sums(rows, queries, values.data(), m, n_threads);
        }
        return move_array(std::move(sums)).attr("reshape")(queries.n, m);
      },
      py::arg("indptr"), py::arg("codes"), py::arg("query_indptr"), py::arg("query_codes"), py::arg("values"),
      py::arg("n_threads") = 1);

  m.def(
      "random_intersection_trees",
      [](const Int64Array& indptr, const Int32Array& codes, const py::object& weights, int32_t depth,
         double n_children, int32_t min_size, int64_t n_trees, uint64_t seed, int n_threads, int32_t root_sets,
         bool all_nodes) {
        const CsrView sets = csr_view(indptr, codes, "sets");
        const double* w = vector_data<double>(weights, sets.n, "weights");
        if (!w) throw std::invalid_argument("weights are required");
        const RitOptions o{depth, n_children, min_size, n_trees, seed, root_sets, all_nodes};
        RitResult r;
        {
          py::gil_scoped_release release;
          r = random_intersection_trees(sets, w, o, n_threads);
        }
        return py::make_tuple(move_array(std::move(r.indptr)), move_array(std::move(r.codes)), move_array(std::move(r.found)));
      },
      py::arg("indptr"), py::arg("codes"), py::arg("weights"), py::arg("depth"), py::arg("n_children"),
      py::arg("min_size"), py::arg("n_trees"), py::arg("seed"), py::arg("n_threads") = 1, py::arg("root_sets") = 2,
      py::arg("all_nodes") = false);

  py::register_exception<TooManyItemsets>(m, "TooManyItemsets", PyExc_MemoryError);
  m.def(
      "transactions_csr", &transactions_csr, py::arg("transactions"),
      "Python iterable of iterables of integers -> CSR (indptr, items), both int64.");
  m.def(
      "frequent_itemsets",
      [](const Int64Array& indptr, const Int64Array& items, const py::object& weights, double min_support,
         int32_t max_size, int64_t max_itemsets, int n_threads) {
        check_csr(indptr, items, "transactions");
        TransactionsView tx{indptr.data(), items.data(), nullptr, indptr.shape(0) - 1};
        tx.weights = vector_data<double>(weights, tx.n, "weights");
        ItemsetOptions o{min_support, max_size, max_itemsets};
        Itemsets sets;
        {
          py::gil_scoped_release release;
          sets = frequent_itemsets(tx, o, n_threads);
        }
        return py::make_tuple(move_array(std::move(sets.indptr)), move_array(std::move(sets.items)), move_array(std::move(sets.support)));
      },
      py::arg("indptr"), py::arg("items"), py::arg("weights"), py::arg("min_support"), py::arg("max_size"),
      py::arg("max_itemsets"), py::arg("n_threads") = 1);
}

}  // namespace pyinterp
