#include "builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace pyinterp {
namespace {

// Moves rows[begin, end) whose left(row) is 1 before those whose left(row) is 0, stably; returns
// the first of the others (right: scratch for them). Without branches, since a row's side is a coin
// flip to the predictor: each row is written to both sides and only its own side's count advances
// (n_left <= k, so row k is read before it is overwritten).
template <class Left>
int64_t stable_partition(uint32_t* rows, int64_t begin, int64_t end, uint32_t* right, Left left) {
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

}  // namespace

TreeBuilder::TreeBuilder(const TrainingSet& data, const ForestParams& params)
    : data_(data), params_(params), search_(make_split_search(data, params)) {
  right_rows_.resize(data.codes->n_rows());
}

double TreeBuilder::threshold_between(int64_t feature, const Partition& part) const {
  // Every row with a value goes left, the missing ones right.
  if (part.hi_row < 0) return std::numeric_limits<double>::infinity();
  const double low = data_.x(part.lo_row, feature);
  const double high = data_.x(part.hi_row, feature);
  // Midway between the neighbouring values, as halves so the sum cannot overflow; if rounding
  // lands on the upper value, the lower one keeps the training partition intact.
  const double t = low / 2.0 + high / 2.0;
  return (t < high && std::isfinite(t)) ? t : low;
}

TreeBuilder::Partition TreeBuilder::partition_rows(int64_t start, int64_t end, const Split& split) {
  if (data_.categorical(split.feature)) return partition_categories(start, end, split);
  // Stable, so every node keeps its rows in increasing order: gathers from a column then move
  // forward through memory, sharing cache lines. The first rows with codes lo and hi are kept for
  // the threshold (hi is the missing code when the split parts the rows with a value from the rest).
  const ColumnCodes& codes = *data_.codes;
  const uint32_t missing = codes.missing_code(split.feature);
  const uint32_t hi = split.hi == missing ? UINT32_MAX : split.hi;
  int64_t n_missing = 0, lo_row = -1, hi_row = -1;
  const int64_t mid = codes.visit_column(split.feature, [&](auto col) {
    return stable_partition(samples_.data(), start, end, right_rows_.data(), [&](uint32_t row) -> int64_t {
      const uint32_t c = col[row];
      const bool is_missing = c == missing;
      n_missing += is_missing;
      lo_row = (c == split.lo && lo_row < 0) ? row : lo_row;
      hi_row = (c == hi && hi_row < 0) ? row : hi_row;
      return (c <= split.lo) | (is_missing & split.missing_left);
    });
  });
  return {mid, n_missing, lo_row, hi_row};
}

TreeBuilder::Partition TreeBuilder::partition_categories(int64_t start, int64_t end, const Split& split) {
  const ColumnCodes& codes = *data_.codes;
  const uint32_t missing = codes.missing_code(split.feature);
  int64_t n_missing = 0;
  const int64_t mid = codes.visit_column(split.feature, [&](auto col) {
    return stable_partition(samples_.data(), start, end, right_rows_.data(), [&](uint32_t row) -> int64_t {
      const uint32_t c = col[row];
      if (c == missing) {
        ++n_missing;
        return split.missing_left;
      }
      return has_category(split.left_codes, c);
    });
  });
  return {mid, n_missing, -1, -1};
}

int32_t TreeBuilder::left_categories(Tree& tree, const Split& split) const {
  const std::vector<uint8_t>& category = data_.category_of_code[split.feature];
  uint64_t set[kCategoryWords] = {};
  for (uint32_t c = 0; c < category.size(); ++c)
    if (has_category(split.left_codes, c)) add_category(set, category[c]);
  return tree.add_category_set(set);
}

Tree TreeBuilder::build(const std::vector<double>& w, int64_t tree_index, const uint32_t* counts, int32_t* oob_leaf) {
  w_ = w.data();
  const int64_t n = data_.codes->n_rows();
  samples_.clear();
  for (int64_t i = 0; i < n; ++i)
    if (w[i] > 0.0) samples_.push_back(static_cast<uint32_t>(i));
  oob_leaf_ = oob_leaf;
  oob_rows_.clear();
  if (oob_leaf) {
    std::fill(oob_leaf, oob_leaf + n, -1);
    for (int64_t i = 0; i < n; ++i)
      if (counts[i] == 0) oob_rows_.push_back(static_cast<uint32_t>(i));
  }
  if (samples_.empty())
    throw std::invalid_argument("a tree drew no row with positive weight; raise max_samples or the sample weights");
  double total_weight = 0.0;
  for (uint32_t i : samples_) total_weight += w[i];
  min_weight_leaf_ = params_.min_weight_fraction_leaf * total_weight;
  search_->begin_tree(w_, min_weight_leaf_);

  // Grown in the builder's own tree, whose vectors keep their capacity from tree to tree, then
  // copied out at its size: one copy instead of each field's chain of reallocations.
  Tree& tree = grown_;
  Tree::for_each_field(tree, [](const char*, auto& field, int64_t) { field.clear(); });
  tree.left_categories.clear();
  tree.n_values = data_.targets.n_values();
  value_.resize(tree.n_values);
  child_values_.clear();
  NodeRange root_range{0, static_cast<int64_t>(samples_.size()), 0, -1, false, root_stream(tree_index)};
  root_range.oob_end = static_cast<int64_t>(oob_rows_.size());
  const Grown root = grow_node(tree, root_range);
  if (params_.max_leaf_nodes > 0) {
    grow_best_first(tree, root);
  } else {
    grow_depth_first(tree, root);
  }
  return tree;
}

TreeBuilder::Grown TreeBuilder::grow_node(Tree& tree, const NodeRange& e) {
  checkpoint();  // a tree on many rows takes seconds: a user's interrupt stops it between nodes
  const int64_t m = e.end - e.start;
  const int64_t n_values = static_cast<int64_t>(value_.size());
  NodeStats stats = e.stats;  // a child's, as its parent's split found them (the same rows, the same order)
  if (e.values_at >= 0) {
    std::copy_n(child_values_.begin() + e.values_at, n_values, value_.begin());
    // Depth-first, children are grown in the reverse order of their values': these are on top.
    if (e.values_at + n_values == static_cast<int64_t>(child_values_.size())) child_values_.resize(e.values_at);
  } else {
    stats = node_stats(e.start, e.end, value_.data());
  }
  if (e.parent < 0) root_weight_ = stats.weight;
  if (tree.node_count() == std::numeric_limits<int32_t>::max()) throw std::length_error("tree exceeds 2^31 - 1 nodes");
  const int32_t node = tree.add_node();
  tree.parent[node] = e.parent;
  tree.depth[node] = e.depth;
  tree.n_node_samples[node] = static_cast<int32_t>(m);
  tree.weighted_n_node_samples[node] = stats.weight;
  tree.impurity[node] = stats.impurity;
  double* stored = &*(tree.value.end() - tree.n_values);
  std::copy(value_.begin(), value_.end(), stored);
  if (!params_.monotonic_cst.empty()) {
    // The stored value respects the node's bounds (its rows' own statistics do not change).
    stored[0] = std::min(std::max(stored[0], e.lower), e.upper);
    if (tree.n_values == 2) stored[1] = 1.0 - stored[0];
  }
  if (e.parent >= 0) (e.is_left ? tree.left : tree.right)[e.parent] = node;
  Grown out{node, e.stream, e.start, e.end, e.end, e.depth, 0.0, false, e.lower, e.upper, 0.0, {}, {}, -1};
  out.oob_start = e.oob_start;
  out.oob_mid = out.oob_end = e.oob_end;
  auto leaf_out = [&] {
    if (oob_leaf_) settle_oob(node, e.oob_start, e.oob_end);
    return out;
  };

  const bool leaf = (params_.max_depth >= 0 && e.depth >= params_.max_depth) || m < params_.min_samples_split ||
                    stats.weight < params_.min_weight_split || m < 2 * params_.min_samples_leaf ||
                    stats.weight < 2 * min_weight_leaf_ ||
                    stats.impurity <= kEpsilon;
  if (leaf) return leaf_out();
  // Depth-first, the search may skip candidates constant in an ancestor (best-first order is not
  // preorder: depth -1).
  const int32_t depth = params_.max_leaf_nodes > 0 ? -1 : e.depth;
  const Split split =
      search_->find({samples_.data() + e.start, m, value_.data(), e.stream, e.lower, e.upper, node, depth});
  if (split.feature < 0) return leaf_out();

  const Partition part = partition_rows(e.start, e.end, split);
  const int64_t mid = part.mid;
  const int64_t at = static_cast<int64_t>(child_values_.size());
  child_values_.resize(at + 2 * n_values);
  const NodeStats l = node_stats(e.start, mid, child_values_.data() + at + n_values);
  const NodeStats r = node_stats(mid, e.end, child_values_.data() + at);
  const double left_value = child_values_[at + n_values], right_value = child_values_[at];
  out.middle = params_.criterion == Criterion::absolute_error ? (left_value + right_value) / 2
                                                               : left_value / 2 + right_value / 2;
  const double decrease =
      impurity_decrease(stats.weight * stats.impurity, l.weight * l.impurity, r.weight * r.impurity, root_weight_);
  if (decrease + kEpsilon < params_.min_impurity_decrease) {
    child_values_.resize(at);
    return leaf_out();
  }

  tree.feature[node] = static_cast<int32_t>(split.feature);
  if (data_.categorical(split.feature)) {
    tree.threshold[node] = std::numeric_limits<double>::quiet_NaN();
    tree.category_split[node] = left_categories(tree, split);
  } else {
    tree.threshold[node] = threshold_between(split.feature, part);
  }
  // Without missing training rows, a missing value follows the larger child (ties go right).
  tree.missing_go_to_left[node] = part.n_missing > 0 ? split.missing_left : mid - e.start > e.end - mid;
  tree.impurity_decrease[node] = decrease;
  if (oob_leaf_)
    out.oob_mid = route_oob(split, tree.threshold[node], tree.missing_go_to_left[node] != 0, e.oob_start, e.oob_end);
  out.mid = mid;
  out.decrease = decrease;
  out.split = true;
  out.left = l;
  out.right = r;
  out.values_at = at;
  return out;
}

void TreeBuilder::grow_depth_first(Tree& tree, const Grown& root) {
  // Left children come off the stack first: nodes are numbered in preorder.
  std::vector<NodeRange> stack;
  auto push_children = [&](const Grown& g) {
    if (!g.split) return;
    stack.push_back(child_range(tree, g, false));
    stack.push_back(child_range(tree, g, true));
  };
  push_children(root);
  while (!stack.empty()) {
    const NodeRange e = stack.back();
    stack.pop_back();
    push_children(grow_node(tree, e));
  }
}

void TreeBuilder::grow_best_first(Tree& tree, const Grown& root) {
  // scikit-learn's best-first growth: each node's split is found when the node is made; the
  // frontier node with the largest decrease is split next, as long as max_leaf_nodes allows;
  // the rest stay leaves. Nodes are numbered in the order they are made.
  auto smaller = [](const Grown& a, const Grown& b) { return a.decrease < b.decrease; };
  std::vector<Grown> frontier{root};
  int64_t splits_left = params_.max_leaf_nodes - 1;
  while (!frontier.empty()) {
    std::pop_heap(frontier.begin(), frontier.end(), smaller);
    const Grown g = frontier.back();
    frontier.pop_back();
    if (!g.split) continue;
    if (splits_left <= 0) {
      make_leaf(tree, g);
      continue;
    }
    --splits_left;
    const Grown left = grow_node(tree, child_range(tree, g, true));
    const Grown right = grow_node(tree, child_range(tree, g, false));
    for (const Grown& child : {left, right}) {
      frontier.push_back(child);
      std::push_heap(frontier.begin(), frontier.end(), smaller);
    }
  }
}

TreeBuilder::NodeRange TreeBuilder::child_range(const Tree& tree, const Grown& g, bool left) const {
  NodeRange r{left ? g.start : g.mid, left ? g.mid : g.end, g.depth + 1, g.node, left, child_stream(g.stream, left),
              g.lower, g.upper, left ? g.left : g.right, g.values_at + (left ? static_cast<int64_t>(value_.size()) : 0)};
  r.oob_start = left ? g.oob_start : g.oob_mid;
  r.oob_end = left ? g.oob_mid : g.oob_end;
  const int8_t cst = params_.monotonic_cst.empty() ? 0 : params_.monotonic_cst[tree.feature[g.node]];
  // Increasing: the left child's values stay below the middle, the right child's above it.
  if (cst != 0) (left == (cst > 0) ? r.upper : r.lower) = g.middle;
  return r;
}

void TreeBuilder::make_leaf(Tree& tree, const Grown& g) {
  tree.feature[g.node] = -1;
  tree.threshold[g.node] = 0.0;
  tree.category_split[g.node] = -1;  // its set stays in the tree's table, unused
  tree.missing_go_to_left[g.node] = 0;
  tree.impurity_decrease[g.node] = 0.0;
  if (oob_leaf_) settle_oob(g.node, g.oob_start, g.oob_end);
}

void TreeBuilder::settle_oob(int32_t node, int64_t begin, int64_t end) {
  for (int64_t k = begin; k < end; ++k) oob_leaf_[oob_rows_[k]] = node;
}

int64_t TreeBuilder::route_oob(const Split& split, double threshold, bool missing_go_to_left, int64_t begin,
                               int64_t end) {
  // By the split column's codes where they decide: an out-of-bag row is a training row, and the
  // threshold lies in [value of lo, value of hi), where lo and hi are the codes around it among
  // the node's in-bag rows. Only a row whose code falls between them (a value the node's in-bag
  // rows lack) is compared with the threshold.
  const ColumnCodes& codes = *data_.codes;
  const int64_t f = split.feature;
  const uint32_t missing = codes.missing_code(f);
  const bool categorical = data_.categorical(f);
  return codes.visit_column(f, [&](auto col) {
    return stable_partition(oob_rows_.data(), begin, end, right_rows_.data(), [&](uint32_t row) -> int64_t {
      const uint32_t c = col[row];
      // A category the node's in-bag rows lack is in no left set: it goes right, as route_node sends it.
      if (categorical) return c == missing ? missing_go_to_left : has_category(split.left_codes, c);
      if (c > split.lo && c < split.hi) return goes_left(data_.x(row, f), threshold, missing_go_to_left);
      return (c <= split.lo) | ((c == missing) & missing_go_to_left);
    });
  });
}

}  // namespace pyinterp
