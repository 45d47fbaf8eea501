// A chosen split applied to a node's rows by its column's codes: the side each training and
// out-of-bag row takes, the threshold and missing side the tree records, a categorical split's
// left set in categories. The builder applies them to X's codes in its own process, a column
// block (column_blocks.hpp) to its own columns on a worker, so both record the same tree.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "split_search.hpp"
#include "tree.hpp"

namespace pyinterp {

// The side of a training row of code c (1: left): a categorical split's left set of codes, else
// code <= lo; a row missing the feature (code `missing`) takes the side the search chose for them.
inline int64_t row_goes_left(const Split& split, uint32_t c, uint32_t missing, bool categorical) {
  if (categorical) return c == missing ? split.missing_left : has_category(split.left_codes, c);
  return (c <= split.lo) | ((c == missing) & split.missing_left);
}

// Watches a node's rows as the split parts them: how many miss the feature, and the first rows
// with the split's codes lo and hi (hi is the missing code when the split parts the rows with a
// value from the rest: then no row is kept for it), whose values the threshold lies between.
struct SplitWatch {
  uint32_t lo, hi, missing;
  int64_t n_missing = 0, lo_row = -1, hi_row = -1;
  SplitWatch(const Split& split, uint32_t missing_code)
      : lo(split.lo), hi(split.hi == missing_code ? UINT32_MAX : split.hi), missing(missing_code) {}
  void see(uint32_t row, uint32_t c) {
    n_missing += c == missing;
    lo_row = (c == lo && lo_row < 0) ? row : lo_row;
    hi_row = (c == hi && hi_row < 0) ? row : hi_row;
  }
};

// The missing side the tree records: the split's when the node's rows missed the feature, else
// the larger child's (ties go right).
inline bool missing_side(int64_t n_missing, bool missing_left, int64_t n_left, int64_t n_right) {
  return n_missing > 0 ? missing_left : n_left > n_right;
}

// The threshold midway between the values of the rows with codes lo and hi (value(row)); +inf when
// the split parts the rows with a value (all left) from the missing ones.
template <class Value>
double threshold_between(const SplitWatch& watch, Value value) {
  if (watch.hi_row < 0) return std::numeric_limits<double>::infinity();
  const double low = value(watch.lo_row), high = value(watch.hi_row);
  // As halves so the sum cannot overflow; if rounding lands on the upper value, the lower one
  // keeps the training partition intact.
  const double t = low / 2.0 + high / 2.0;
  return (t < high && std::isfinite(t)) ? t : low;
}

// The side of an out-of-bag row of code c, by the codes where they decide: an out-of-bag row is a
// training row, and the threshold lies in [value of lo, value of hi), the codes around it among
// the node's in-bag rows. Only a row whose code falls between them (a value the node's in-bag rows
// lack) is compared with the threshold (value(): its value). A category the in-bag rows lack is in
// no left set: it goes right, as route_node sends it.
template <class Value>
int64_t oob_goes_left(const Split& split, uint32_t c, uint32_t missing, bool categorical, double threshold,
                      bool missing_go_to_left, Value value) {
  if (categorical) return c == missing ? missing_go_to_left : has_category(split.left_codes, c);
  if (c > split.lo && c < split.hi) return goes_left(value(), threshold, missing_go_to_left);
  return (c <= split.lo) | ((c == missing) & missing_go_to_left);
}

// Moves rows[begin, end) whose left(row) is 1 before those whose left(row) is 0, stably; returns
// the first of the others (right: scratch for them). Without branches, since a row's side is a coin
// flip to the predictor: each row is written to both sides and only its own side's count advances
// (n_left <= k, so row k is read before it is overwritten). The builder and each column block
// part their copies of a tree's rows with it, so the copies stay equal.
template <class Left>
inline int64_t stable_partition(uint32_t* rows, int64_t begin, int64_t end, uint32_t* right, Left left) {
  int64_t n_left = begin, n_right = 0;
  for (int64_t k = begin; k < end; ++k) {
    const uint32_t row = rows[k];
    const int64_t goes = left(row);
    rows[n_left] = row;
    right[n_right] = row;
    n_left += goes;
    n_right += 1 - goes;
  }
  std::copy(right, right + n_right, rows + n_left);
  return n_left;
}

// A categorical split's left set of codes as a set of categories (category[c]: code c's).
inline void left_categories(const Split& split, const std::vector<uint8_t>& category, uint64_t* set) {
  std::fill(set, set + kCategoryWords, uint64_t{0});
  for (uint32_t c = 0; c < category.size(); ++c)
    if (has_category(split.left_codes, c)) add_category(set, category[c]);
}

}  // namespace pyinterp
