// Weighted frequent itemsets: every set of items whose transactions weigh at least min_support in
// total, by recursive projection over merged transaction databases (the occurrence-deliver scheme
// of LCM; each conditional database holds the transactions containing the prefix, cut to the items
// that are still frequent in it, identical transactions merged with their weights summed).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "../common/csr.hpp"

namespace pyinterp {

struct ItemsetOptions {
  double min_support = 1.0;  // absolute total weight; an itemset is frequent when support >= it
  int32_t max_size = 0;      // largest itemset reported
  int64_t max_itemsets = 0;  // more frequent itemsets than this raise TooManyItemsets
};

// CSR itemsets, each sorted ascending, with their total transaction weight.
struct Itemsets {
  std::vector<int64_t> indptr{0};
  std::vector<int64_t> items;
  std::vector<double> support;
};

struct TooManyItemsets : std::length_error {
  using std::length_error::length_error;
};

// Branches (itemsets by their most frequent item) are mined in parallel; the output, in
// depth-first order, does not depend on n_threads.
// Transactions: CSR rows of items in any order (repeats are ignored), weights finite and >= 0.
Itemsets frequent_itemsets(const CsrView<int64_t>& transactions, const ItemsetOptions& options, int n_threads);

}  // namespace pyinterp
