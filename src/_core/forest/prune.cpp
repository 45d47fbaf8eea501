#include "prune.hpp"

#include <vector>

namespace pyinterp {

Tree prune_tree(const Tree& tree, double alpha) {
  const int64_t n = tree.node_count();
  const double root_weight = tree.weighted_n_node_samples[0];
  // Children come after their parents, so one reverse sweep sees every subtree complete: a node
  // is cut to a leaf when its own cost is no more than its best subtree's (ties prune, as the
  // weakest-link sequence prunes a branch whose effective alpha equals alpha).
  std::vector<double> cost(n);
  std::vector<uint8_t> cut(n, 0);
  for (int64_t node = n - 1; node >= 0; --node) {
    const double as_leaf = tree.weighted_n_node_samples[node] * tree.impurity[node] / root_weight + alpha;
    if (tree.is_leaf(node)) {
      cost[node] = as_leaf;
      continue;
    }
    const double subtree = cost[tree.left[node]] + cost[tree.right[node]];
    cut[node] = as_leaf <= subtree;
    cost[node] = cut[node] ? as_leaf : subtree;
  }

  return copy_in_preorder(tree, cut);
}

Tree copy_in_preorder(const Tree& tree, const std::vector<uint8_t>& cut, std::vector<int32_t>* index) {
  Tree out;
  out.n_values = tree.n_values;
  const int64_t nv = tree.n_values;
  if (index) index->assign(tree.node_count(), -1);
  struct Entry {
    int32_t node, parent;
    bool is_left;
  };
  std::vector<Entry> stack{{0, -1, false}};
  while (!stack.empty()) {
    const Entry e = stack.back();
    stack.pop_back();
    const int32_t k = out.add_node();
    if (index) (*index)[e.node] = k;
    out.parent[k] = e.parent;
    if (e.parent >= 0) (e.is_left ? out.left : out.right)[e.parent] = k;
    out.depth[k] = tree.depth[e.node];
    out.n_node_samples[k] = tree.n_node_samples[e.node];
    out.weighted_n_node_samples[k] = tree.weighted_n_node_samples[e.node];
    out.impurity[k] = tree.impurity[e.node];
    std::copy(tree.value.begin() + e.node * nv, tree.value.begin() + (e.node + 1) * nv, out.value.end() - nv);
    if (tree.is_leaf(e.node) || (!cut.empty() && cut[e.node])) continue;
    out.feature[k] = tree.feature[e.node];
    out.threshold[k] = tree.threshold[e.node];
    const int32_t s = tree.category_split[e.node];
    if (s >= 0) out.category_split[k] = out.add_category_set(tree.left_categories.data() + int64_t{s} * kCategoryWords);
    out.missing_go_to_left[k] = tree.missing_go_to_left[e.node];
    out.impurity_decrease[k] = tree.impurity_decrease[e.node];
    stack.push_back({tree.right[e.node], k, false});
    stack.push_back({tree.left[e.node], k, true});
  }
  return out;
}

}  // namespace pyinterp
