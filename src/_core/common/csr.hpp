// Compressed sparse rows, the one shape of signed paths, transactions, itemsets and RIT sets: row r
// holds items[indptr[r]:indptr[r + 1]], optionally weighted. CsrView reads caller memory;
// WeightedCsr owns its arrays and grows row by row.
#pragma once
#include <cstdint>
#include <vector>

#include "huge_pages.hpp"

namespace pyinterp {

template <class Item>
struct CsrView {
  const int64_t* indptr = nullptr;
  const Item* items = nullptr;
  int64_t n = 0;                    // rows
  const double* weights = nullptr;  // one per row, or nullptr: every row weighs 1

  const Item* begin(int64_t r) const { return items + indptr[r]; }
  const Item* end(int64_t r) const { return items + indptr[r + 1]; }
  double weight(int64_t r) const { return weights ? weights[r] : 1.0; }
};

struct WeightedCsr {
  HugeVector<int64_t> indptr{0};
  HugeVector<int32_t> items;
  HugeVector<double> weight;

  int64_t size() const { return static_cast<int64_t>(weight.size()); }
  void clear_rows() {
    items.clear();
    indptr.assign(1, 0);
    weight.clear();
  }
  void push(const int32_t* first, const int32_t* last, double w) {
    for (; first != last; ++first) items.push_back(*first);  // rows are short: no memmove call
    indptr.push_back(static_cast<int64_t>(items.size()));
    weight.push_back(w);
  }
  CsrView<int32_t> view() const { return {indptr.data(), items.data(), size(), weight.data()}; }
};

}  // namespace pyinterp
