#include "signed_paths.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../forest/parallel.hpp"

namespace pyinterp {
namespace {

struct Scratch {
  std::vector<int32_t> path;      // nodes from the leaf up to the root's child
  std::vector<uint8_t> seen;      // per feature: already met on the current path
  std::vector<int32_t> touched;   // features to unmark
};

double node_size(const Tree& tree, int32_t node, NodeCounts counts) {
  return counts == NodeCounts::weighted ? tree.weighted_n_node_samples[node] : tree.n_node_samples[node];
}

// The impurity decrease of inner node t compared with epsilon.
double decrease(const Tree& tree, int32_t t, const SignedPathOptions& o) {
  const double root = node_size(tree, 0, o.counts), own = node_size(tree, t, o.counts);
  double d = tree.impurity_decrease[t];
  if (o.counts == NodeCounts::distinct) {
    const int32_t l = tree.left[t], r = tree.right[t];
    d = (own * tree.impurity[t] - node_size(tree, l, o.counts) * tree.impurity[l] -
         node_size(tree, r, o.counts) * tree.impurity[r]) / root;
  }
  return o.scale == DecreaseScale::within_node ? d * root / own : d;
}

void tree_paths(const Tree& tree, int32_t t, int64_t n_trees, const SignedPathOptions& o, Scratch& s,
                SignedPaths& out) {
  const double root_w = tree.weighted_n_node_samples[0];
  for (int32_t leaf = 0; leaf < tree.node_count(); ++leaf) {
    if (!tree.is_leaf(leaf)) continue;
    s.path.clear();
    for (int32_t node = leaf; tree.parent[node] >= 0; node = tree.parent[node]) s.path.push_back(node);
    const int64_t start = static_cast<int64_t>(out.codes.size());
    // Root first: the first occurrence of a feature is the one nearest the root.
    for (auto it = s.path.rbegin(); it != s.path.rend(); ++it) {
      const int32_t child = *it, node = tree.parent[child];
      const int32_t k = tree.feature[node];
      const bool passes = decrease(tree, node, o) > o.epsilon;
      if (s.seen[k] || (!passes && o.first_occurrence == FirstOccurrence::after_filter)) continue;
      s.seen[k] = 1;
      s.touched.push_back(k);
      if (passes) out.codes.push_back(2 * k + (child == tree.right[node] ? 1 : 0));
    }
    for (const int32_t k : s.touched) s.seen[k] = 0;
    s.touched.clear();
    std::sort(out.codes.begin() + start, out.codes.end());
    out.indptr.push_back(static_cast<int64_t>(out.codes.size()));
    const int32_t depth = static_cast<int32_t>(s.path.size());
    out.depth.push_back(depth);
    out.tree.push_back(t);
    out.leaf.push_back(leaf);
    out.weight.push_back(o.weight == LeafWeight::depth
                             ? std::ldexp(1.0, -depth) / static_cast<double>(n_trees)
                             : tree.weighted_n_node_samples[leaf] / (root_w * static_cast<double>(n_trees)));
  }
}

}  // namespace

SignedPaths signed_paths(const Forest& forest, const SignedPathOptions& options, int n_threads) {
  if (!(options.epsilon >= 0.0)) throw std::invalid_argument("epsilon must be >= 0");
  if (forest.n_features > (int64_t{1} << 30)) throw std::invalid_argument("too many features for signed codes");
  const int64_t n_trees = static_cast<int64_t>(forest.trees.size());
  std::vector<SignedPaths> per_tree(n_trees);
  parallel_for(
      n_trees, n_threads,
      [&](int) { return Scratch{{}, std::vector<uint8_t>(forest.n_features, 0), {}}; },
      [&](int64_t t, int, Scratch& s) {
        tree_paths(forest.trees[t], static_cast<int32_t>(t), n_trees, options, s, per_tree[t]);
      });
  SignedPaths all;
  for (const SignedPaths& p : per_tree) {
    const int64_t offset = all.indptr.back();
    for (size_t r = 1; r < p.indptr.size(); ++r) all.indptr.push_back(offset + p.indptr[r]);
    all.codes.insert(all.codes.end(), p.codes.begin(), p.codes.end());
    all.weight.insert(all.weight.end(), p.weight.begin(), p.weight.end());
    all.depth.insert(all.depth.end(), p.depth.begin(), p.depth.end());
    all.tree.insert(all.tree.end(), p.tree.begin(), p.tree.end());
    all.leaf.insert(all.leaf.end(), p.leaf.begin(), p.leaf.end());
  }
  return all;
}

}  // namespace pyinterp
