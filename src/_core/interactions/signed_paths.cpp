#include "signed_paths.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../common/parallel.hpp"
#include "../common/rank_sort.hpp"
#include "../forest/node_readers.hpp"
#include "distinct_rows.hpp"

namespace pyinterp {
namespace {

// Paths of at most this many codes are sorted by rank_sort.
constexpr int64_t kRankSorted = 32;

// A node to visit (its edge from the parent is read from the parent: carrying the edge's feature,
// side and test on the stack made the walk slower).
struct Step {
  int32_t node, depth;
};

// State of the depth-first walk: per depth, the feature marked as seen there (or -1) and whether
// a code was appended; the codes of the current path's first occurrences in `active`.
struct Scratch {
  std::vector<uint8_t> seen;  // per feature: already met on the current path
  std::vector<int32_t> marked;
  std::vector<uint8_t> pushed;
  std::vector<int32_t> active;
  std::vector<Step> stack;
  std::vector<int32_t> parent;          // per node of a tree read in place
  std::vector<double> product, decrease;  // per node, where decreases are derived
};

template <class Nodes>
double node_size(const Nodes& tree, int64_t node, NodeCounts counts) {
  return counts == NodeCounts::weighted ? tree.weighted(node) : tree.distinct(node);
}

// Each inner node's decrease (N_t I_t - N_l I_l - N_r I_r) / N_root with sizes N as `counts`
// says: the one a core tree records for weighted sizes, else derived from N I per node (gathered in
// one pass first: a right child's fields, read where its parent is, would be a cache miss per
// split in a tree read in place) by the formula the copy records.
template <class Nodes>
const double* decreases(const Nodes& tree, NodeCounts counts, Scratch& s) {
  if (counts == NodeCounts::weighted && tree.recorded_decreases() != nullptr) return tree.recorded_decreases();
  const int64_t n = tree.count();
  s.product.resize(static_cast<size_t>(n));
  s.decrease.resize(static_cast<size_t>(n));
  for (int64_t node = 0; node < n; ++node) s.product[node] = node_size(tree, node, counts) * tree.impurity(node);
  const double root = node_size(tree, 0, counts);
  for (int64_t node = 0; node < n; ++node)
    if (tree.inner(node))
      s.decrease[node] = impurity_decrease(s.product[node], s.product[tree.left(node)], s.product[tree.right(node)], root);
  return s.decrease.data();
}

// Upper bounds on the codes of all leaves' paths of tree t, per_path at most per path. From the
// node count alone: (n + 1) / 2 leaves each below fewer than n nodes (children follow parents).
int64_t count_bound(int64_t n, int64_t per_path) { return (n + 1) / 2 * std::min<int64_t>(n - 1, per_path); }
int64_t count_bound(const Forest& forest, int64_t t, int64_t per_path) {
  return count_bound(forest.trees[t].node_count(), per_path);
}
int64_t count_bound(const SklearnForestNodes& forest, int64_t t, int64_t per_path) {
  return count_bound(forest.trees[t].n_nodes, per_path);
}
// From the leaves' depths, which the engine's trees record (one code per level at most).
int64_t depth_bound(const Forest& forest, int64_t t, int64_t per_path) {
  const Tree& tree = forest.trees[t];
  int64_t codes = 0;
  for (int64_t node = 0; node < tree.node_count(); ++node)
    if (tree.is_leaf(node)) codes += std::min<int64_t>(tree.depth[node], per_path);
  return codes;
}

// The impurity decrease of inner node t (dec: decreases()) as the options scale it.
template <class Nodes>
double decrease(const Nodes& tree, const double* dec, int64_t t, const SignedPathOptions& o) {
  return o.scale == DecreaseScale::within_node ? dec[t] * node_size(tree, 0, o.counts) / node_size(tree, t, o.counts)
                                               : dec[t];
}

// One depth-first walk per tree, so each node is visited once; at each leaf, on_leaf(node, depth)
// reads its path's codes (in path order, unsorted) in s.active. A walk that would visit more
// nodes than the tree has (links that join, possible only in arrays read in place) throws.
template <class Nodes, class OnLeaf>
void walk(const Nodes tree, const SignedPathOptions& o, Scratch& s, OnLeaf on_leaf) {
  const double* dec = decreases(tree, o.counts, s);
  int32_t current = 0;  // depth of the path state
  int64_t visits = 0;
  s.stack.assign(1, {0, 0});
  s.active.clear();
  while (!s.stack.empty()) {
    const Step step = s.stack.back();
    const int32_t node = step.node, depth = step.depth;
    s.stack.pop_back();
    if (++visits > tree.count()) throw std::invalid_argument("scikit-learn trees: node links");
    for (; current >= depth && current > 0; --current) {  // leave the previous branch
      if (s.marked[current] >= 0) s.seen[s.marked[current]] = 0;
      if (s.pushed[current]) s.active.pop_back();
    }
    current = depth;
    if (depth > 0) {  // the edge from the parent: its split's first occurrence, if any
      if (static_cast<size_t>(depth) >= s.marked.size()) {
        s.marked.resize(depth + 1);
        s.pushed.resize(depth + 1);
      }
      const int32_t parent = tree.parent(node);
      const int32_t k = o.groups ? o.groups[tree.feature(parent)] : tree.feature(parent);
      const int32_t code = 2 * k + (node == tree.right(parent) ? 1 : 0);
      const int32_t key = o.first_occurrence == FirstOccurrence::every ? code : k;  // what may occur once
      const bool passes = decrease(tree, dec, parent, o) > o.epsilon;
      const bool first = !s.seen[key] && (passes || o.first_occurrence == FirstOccurrence::literal);
      s.marked[depth] = first ? key : -1;
      s.pushed[depth] = first && passes;
      if (first) s.seen[key] = 1;
      if (first && passes) s.active.push_back(code);
    }
    if (tree.inner(node)) {
      s.stack.push_back({tree.right(node), depth + 1});
      s.stack.push_back({tree.left(node), depth + 1});
      continue;
    }
    on_leaf(node, depth);
  }
  for (; current > 0; --current)
    if (s.marked[current] >= 0) s.seen[s.marked[current]] = 0;
}

template <class Nodes>
void tree_paths(const Nodes tree, int32_t t, int64_t n_trees, const SignedPathOptions& o, Scratch& s,
                SignedPaths& out) {
  const double root_w = tree.weighted(0);
  const size_t n_leaves = static_cast<size_t>(tree.count() + 1) / 2;
  out.indptr.reserve(n_leaves + 1);
  out.weight.reserve(n_leaves);
  out.depth.reserve(n_leaves);
  out.tree.reserve(n_leaves);
  out.leaf.reserve(n_leaves);
  walk(tree, o, s, [&](int32_t node, int32_t depth) {
    // A path's codes are distinct (each key is pushed once): a short path is sorted by rank.
    const auto n_codes = static_cast<int64_t>(s.active.size());
    const size_t at = out.codes.size();
    out.codes.resize(at + static_cast<size_t>(n_codes));
    if (n_codes <= kRankSorted) {
      rank_sort(s.active.data(), n_codes, out.codes.data() + at);
    } else {
      std::copy(s.active.begin(), s.active.end(), out.codes.begin() + static_cast<std::ptrdiff_t>(at));
      std::sort(out.codes.begin() + static_cast<std::ptrdiff_t>(at), out.codes.end());
    }
    out.indptr.push_back(static_cast<int64_t>(out.codes.size()));
    out.depth.push_back(depth);
    out.tree.push_back(t);
    out.leaf.push_back(node);
    out.weight.push_back(o.weight == LeafWeight::depth
                             ? std::ldexp(1.0, -depth) / static_cast<double>(n_trees)
                             : tree.weighted(node) / (root_w * static_cast<double>(n_trees)));
  });
}

// Rows in leaf-id order (the walk emits preorder, which is node order for trees numbered in
// preorder, as pyinterp's and scikit-learn's are; other numberings are reordered here).
void sort_by_leaf(SignedPaths& p) {
  const size_t n = p.leaf.size();
  if (std::is_sorted(p.leaf.begin(), p.leaf.end())) return;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p.leaf[a] < p.leaf[b]; });
  SignedPaths q;
  for (const size_t r : order) {
    q.codes.insert(q.codes.end(), p.codes.begin() + p.indptr[r], p.codes.begin() + p.indptr[r + 1]);
    q.indptr.push_back(static_cast<int64_t>(q.codes.size()));
    q.weight.push_back(p.weight[r]);
    q.depth.push_back(p.depth[r]);
    q.tree.push_back(p.tree[r]);
    q.leaf.push_back(p.leaf[r]);
  }
  p = std::move(q);
}

// The number of features (or groups) the codes index.
template <class Trees>
int64_t check(const Trees& forest, const SignedPathOptions& options) {
  if (!(options.epsilon >= 0.0)) throw std::invalid_argument("epsilon must be >= 0");
  if (options.max_codes < 1) throw std::invalid_argument("max_codes must be >= 1");
  if (forest.n_features > (int64_t{1} << 30)) throw std::invalid_argument("too many features for signed codes");
  if (!options.groups) return forest.n_features;
  if (options.n_groups > (int64_t{1} << 30)) throw std::invalid_argument("too many feature groups for signed codes");
  for (int64_t k = 0; k < forest.n_features; ++k)
    if (options.groups[k] < 0 || options.groups[k] >= options.n_groups)
      throw std::invalid_argument("feature_groups must map every feature to a group in [0, n_groups)");
  return options.n_groups;
}

Scratch scratch(int64_t n_keys) {
  Scratch s;
  s.seen.assign(2 * static_cast<size_t>(n_keys), 0);  // by feature (group) or by code
  return s;
}

int64_t saturated_sum(const std::vector<int64_t>& values) {
  int64_t sum = 0;
  for (const int64_t v : values) sum = v > INT64_MAX - sum ? INT64_MAX : sum + v;
  return sum;
}

// Refuses, before any output is built, a reading whose paths hold more than max_codes codes. A
// path holds at most one code per level and per feature (group), or per (feature, side) with
// `every`: a bound from the node counts decides for most forests, else one from the leaves'
// depths where the trees record them (the engine's; scikit-learn's do not). Only a forest above
// the budget by these is walked once more, without output, to count its codes (epsilon may filter
// most of them); the walk costs one step per node however long the paths are.
template <class Trees>
void check_size(const Trees& forest, const SignedPathOptions& o, int64_t n_keys, int n_threads) {
  const int64_t n = tree_count(forest);
  const int64_t per_path = o.first_occurrence == FirstOccurrence::every ? 2 * n_keys : n_keys;
  std::vector<int64_t> codes(n, 0);
  for (int64_t t = 0; t < n; ++t) codes[t] = count_bound(forest, t, per_path);
  if (saturated_sum(codes) <= o.max_codes) return;
  if constexpr (std::is_same_v<Trees, Forest>) {
    parallel_for(n, n_threads, no_state, [&](int64_t t, int, NoState&) { codes[t] = depth_bound(forest, t, per_path); });
    if (saturated_sum(codes) <= o.max_codes) return;
  }
  parallel_for(
      n, n_threads, [&](int) { return scratch(n_keys); },
      [&](int64_t t, int, Scratch& s) {
        codes[t] = 0;
        walk(nodes(forest, t, s.parent), o, s, [&](int32_t, int32_t) { codes[t] += static_cast<int64_t>(s.active.size()); });
      });
  const int64_t total = saturated_sum(codes);
  if (total > o.max_codes)
    throw TooManyPathCodes("the signed paths hold " + std::to_string(total) + " codes, more than max_codes = " +
                           std::to_string(o.max_codes) + "; raise epsilon, grow shallower trees (max_depth, "
                           "min_samples_leaf) or raise max_codes");
}

template <class Trees>
SignedPaths all_paths(const Trees& forest, const SignedPathOptions& options, int n_threads) {
  const int64_t n_keys = check(forest, options);
  check_size(forest, options, n_keys, n_threads);
  const int64_t n_trees = tree_count(forest);
  std::vector<SignedPaths> per_tree(n_trees);
  parallel_for(
      n_trees, n_threads, [&](int) { return scratch(n_keys); },
      [&](int64_t t, int, Scratch& s) {
        tree_paths(nodes(forest, t, s.parent), static_cast<int32_t>(t), n_trees, options, s, per_tree[t]);
        sort_by_leaf(per_tree[t]);
      });
  SignedPaths all;
  size_t rows = 0, codes = 0;
  for (const SignedPaths& p : per_tree) rows += p.weight.size(), codes += p.codes.size();
  all.indptr.reserve(rows + 1);
  all.codes.reserve(codes);
  all.weight.reserve(rows);
  all.depth.reserve(rows);
  all.tree.reserve(rows);
  all.leaf.reserve(rows);
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

template <class Trees>
WeightedCsr distinct_paths(const Trees& forest, const SignedPathOptions& options, int n_threads) {
  const int64_t n_keys = check(forest, options);
  check_size(forest, options, n_keys, n_threads);
  const int64_t n_trees = tree_count(forest);
  std::vector<WeightedCsr> per_tree(n_trees);
  struct Worker {
    Scratch scratch;
    SignedPaths leaves;  // one tree's rows, reused
    MergingWriter writer;
  };
  parallel_for(
      n_trees, n_threads,
      [&](int) {
        Worker w;
        w.scratch = scratch(n_keys);
        return w;
      },
      [&](int64_t t, int, Worker& w) {
        SignedPaths& p = w.leaves;
        p.clear();
        tree_paths(nodes(forest, t, w.scratch.parent), static_cast<int32_t>(t), n_trees, options, w.scratch,
                   p);
        sort_by_leaf(p);
        w.writer.open(per_tree[t], p.weight.size(), p.codes.size());
        for (size_t r = 0; r < p.weight.size(); ++r)
          w.writer.add(p.codes.data() + p.indptr[r], p.indptr[r + 1] - p.indptr[r], p.weight[r]);
      });
  int64_t rows = 0, codes = 0;
  for (const WeightedCsr& p : per_tree) rows += p.size(), codes += static_cast<int64_t>(p.items.size());
  WeightedCsr all;
  MergingWriter writer;
  writer.open(all, rows, codes);
  for (const WeightedCsr& p : per_tree)
    for (int64_t r = 0; r < p.size(); ++r)
      writer.add(p.items.data() + p.indptr[r], p.indptr[r + 1] - p.indptr[r], p.weight[r]);
  return all;
}

}  // namespace

SignedPaths signed_paths(const Forest& forest, const SignedPathOptions& options, int n_threads) {
  return all_paths(forest, options, n_threads);
}
SignedPaths signed_paths(const SklearnForestNodes& forest, const SignedPathOptions& options, int n_threads) {
  return all_paths(forest, options, n_threads);
}
WeightedCsr distinct_signed_paths(const Forest& forest, const SignedPathOptions& options, int n_threads) {
  return distinct_paths(forest, options, n_threads);
}
WeightedCsr distinct_signed_paths(const SklearnForestNodes& forest, const SignedPathOptions& options, int n_threads) {
  return distinct_paths(forest, options, n_threads);
}

}  // namespace pyinterp
