// Python bindings of interaction discovery: signed leaf paths, set matching, frequent itemsets, RIT.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "interactions/itemsets.hpp"
#include "interactions/rit.hpp"
#include "interactions/set_matches.hpp"
#include "interactions/signed_paths.hpp"
#include "py_sklearn_trees.hpp"
#include "py_transactions.hpp"
#include "py_util.hpp"

namespace pyinterp {
namespace {

// CSR arrays: checked_array, plus indptr running from 0 to len(items) without decreasing (the core
// trusts it). weights: one per row, or None.
template <class Item>
CsrView<Item> csr_view(const py::handle& indptr, const py::handle& items, const py::object& weights, const char* name) {
  const auto ip = checked_array<int64_t>(indptr, {-1}, name);
  const auto it = checked_array<Item>(items, {-1}, name);
  const int64_t n = ip.shape(0) - 1;
  const int64_t* p = ip.data();
  if (n < 0 || p[0] != 0 || p[n] != it.shape(0))
    throw std::invalid_argument(std::string(name) + ": indptr must run from 0 to len(items)");
  for (int64_t i = 0; i < n; ++i)
    if (p[i + 1] < p[i]) throw std::invalid_argument(std::string(name) + ": indptr must be non-decreasing");
  return {p, it.data(), n, optional_data<double>(weights, {n}, "weights")};
}

// A binding of a signed-path reading of a Trees (Forest or SklearnTrees): the options as
// arguments, `read` without the GIL, then `convert` its result to Python objects.
template <class Trees, class Read, class Convert>
auto path_binding(Read read, Convert convert) {
  return [read, convert](const Trees& trees, double epsilon, FirstOccurrence first, LeafWeight weight, DecreaseScale scale,
                         NodeCounts counts, int n_threads, const py::object& groups, int32_t n_groups,
                         int64_t max_codes) {
    const auto& f = trees_of(trees);
    SignedPathOptions o{epsilon, first, weight, scale, counts};
    o.groups = optional_data<int32_t>(groups, {f.n_features}, "feature_groups");
    o.n_groups = n_groups;
    o.max_codes = max_codes;
    decltype(read(f, o, n_threads)) out;
    {
      py::gil_scoped_release release;
      out = read(f, o, n_threads);
    }
    return convert(std::move(out));
  };
}

template <class Binding>
void def_path_reading(py::module_& m, const char* name, Binding binding) {
  m.def(name, binding, py::arg("forest"), py::arg("epsilon"), py::arg("first_occurrence"), py::arg("weight"),
        py::arg("scale"), py::arg("counts"), py::arg("n_threads") = 1, py::arg("groups") = py::none(),
        py::arg("n_groups") = 0, py::arg("max_codes") = INT64_MAX);
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
  py::register_exception<TooManyPathCodes>(m, "TooManyPathCodes", PyExc_MemoryError);

  const auto paths_dict = [](SignedPaths&& paths) {
    py::dict d;
    d["indptr"] = move_array(std::move(paths.indptr));
    d["codes"] = move_array(std::move(paths.codes));
    d["weight"] = move_array(std::move(paths.weight));
    d["depth"] = move_array(std::move(paths.depth));
    d["tree"] = move_array(std::move(paths.tree));
    d["leaf"] = move_array(std::move(paths.leaf));
    return d;
  };
  const auto csr_tuple = [](WeightedCsr&& rows) {
    return py::make_tuple(move_array(std::move(rows.indptr)), move_array(std::move(rows.items)),
                          move_array(std::move(rows.weight)));
  };
  const auto read_paths = [](const auto& f, const SignedPathOptions& o, int n) { return signed_paths(f, o, n); };
  const auto read_distinct = [](const auto& f, const SignedPathOptions& o, int n) {
    return distinct_signed_paths(f, o, n);
  };
  // Each reading takes a core Forest, or a scikit-learn forest's arrays (SklearnTrees) in place.
  def_path_reading(m, "signed_paths", path_binding<Forest>(read_paths, paths_dict));
  def_path_reading(m, "signed_paths", path_binding<SklearnTrees>(read_paths, paths_dict));
  def_path_reading(m, "distinct_signed_paths", path_binding<Forest>(read_distinct, csr_tuple));
  def_path_reading(m, "distinct_signed_paths", path_binding<SklearnTrees>(read_distinct, csr_tuple));

  m.def(
      "match_sets",
      [](const py::array& indptr, const py::array& codes, const py::array& query_indptr, const py::array& query_codes) {
        const auto rows = csr_view<int32_t>(indptr, codes, py::none(), "rows");
        const auto queries = csr_view<int32_t>(query_indptr, query_codes, py::none(), "queries");
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
      [](const py::array& indptr, const py::array& codes, const py::array& query_indptr, const py::array& query_codes,
         const py::array& values_, int n_threads) {
        const auto rows = csr_view<int32_t>(indptr, codes, py::none(), "rows");
        const auto queries = csr_view<int32_t>(query_indptr, query_codes, py::none(), "queries");
        const auto values = checked_array<double>(values_, {rows.n, -1}, "values");
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
      [](const py::array& indptr, const py::array& codes, const py::object& weights, int32_t depth,
         double n_children, int32_t min_size, int64_t n_trees, uint64_t seed, int n_threads, int32_t root_sets,
         bool all_nodes, int64_t max_nodes) {
        if (weights.is_none()) throw std::invalid_argument("weights are required");
        const auto sets = csr_view<int32_t>(indptr, codes, weights, "sets");
        const RitOptions o{depth, n_children, min_size, n_trees, seed, root_sets, all_nodes, max_nodes};
        RitResult r;
        {
          py::gil_scoped_release release;
          r = random_intersection_trees(sets, o, n_threads);
        }
        return py::make_tuple(move_array(std::move(r.indptr)), move_array(std::move(r.codes)), move_array(std::move(r.found)));
      },
      py::arg("indptr"), py::arg("codes"), py::arg("weights"), py::arg("depth"), py::arg("n_children"),
      py::arg("min_size"), py::arg("n_trees"), py::arg("seed"), py::arg("n_threads"), py::arg("root_sets"),
      py::arg("all_nodes"), py::arg("max_nodes"));
  py::register_exception<TooManyIntersections>(m, "TooManyIntersections", PyExc_MemoryError);

  py::register_exception<TooManyItemsets>(m, "TooManyItemsets", PyExc_MemoryError);
  m.def(
      "transactions_csr", &transactions_csr, py::arg("transactions"),
      "Python iterable of iterables of integers -> CSR (indptr, items), both int64.");
  m.def("csr_dict", &csr_dict, py::arg("indptr"), py::arg("items"), py::arg("values"),
        "CSR rows (int64) and one float per row -> dict of {tuple of ints: float}, in row order.");
  m.def(
      "frequent_itemsets",
      [](const py::array& indptr, const py::array& items, const py::object& weights, double min_support,
         int32_t max_size, int64_t max_itemsets, int n_threads) {
        const auto tx = csr_view<int64_t>(indptr, items, weights, "transactions");
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
