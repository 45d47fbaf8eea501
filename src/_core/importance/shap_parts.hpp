// Pieces the TreeSHAP forms share (shap.cpp: path-dependent; shap_background.cpp: against
// background rows): what a walk reads of each tree, the features the forest uses, and rows gathered
// at those features.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../common/parallel.hpp"
#include "../data/matrix.hpp"
#include "../forest/forest.hpp"

namespace pyinterp::shap_parts {

// What the walk needs of one tree, computed once: each split's feature as an index into the tree's
// own features (per-tree buffers are as small as the tree, whatever p is), each node's share of its
// parent's cover, and the depth (from the links).
struct TreeInfo {
  std::vector<int32_t> features;  // local index -> global feature, increasing
  std::vector<int32_t> local;     // per node: local index of its split feature; -1 at leaves
  std::vector<double> fraction;   // per node: cover(node) / cover(parent); 1 at the root
  std::vector<int32_t> splits;    // the split nodes, when at most 64 (see for_row_groups); else empty
  int32_t max_depth = 0;
  int32_t rule_size = 1;    // Gauss-Legendre nodes for the widest path: ceil(its distinct features / 2)
  double leaf_tables = 0.0;  // leaf_table_work summed over the leaves: the least work of path tables
};

// Work to fill a leaf's path tables from the covers (PatternTree::path_tables): per pattern of its
// d distinct features, ceil(d / 2) rule nodes of about 3 d products (3 d^2 for pairs).
inline double leaf_table_work(int32_t width, bool pairs) {
  const double d = width;
  return std::ldexp(1.0, width) * std::ceil(d / 2) * 3 * (pairs ? d * d : d);
}

// The rule size and leaf tables' work from the distinct features of each root-to-leaf path (info.local
// set). The walks' integrands are polynomials of degree one less than the widest path's count:
// fully grown trees of depth 40-50 on 50 features have 26-34, against min(depth, features) = 50.
inline void path_widths(const Tree& tree, TreeInfo& info) {
  std::vector<int32_t> on_path(info.features.size(), 0);
  std::vector<std::pair<int32_t, bool>> stack{{0, false}};  // (node, leaving it)
  int32_t distinct = 0, widest = 0;
  while (!stack.empty()) {
    const auto [node, leaving] = stack.back();
    stack.pop_back();
    if (tree.is_leaf(node)) {
      widest = std::max(widest, distinct);
      info.leaf_tables += leaf_table_work(distinct, false);
      continue;
    }
    const int32_t f = info.local[node];
    if (leaving) {
      distinct -= --on_path[f] == 0;
      continue;
    }
    distinct += on_path[f]++ == 0;
    stack.push_back({node, true});
    stack.push_back({tree.left[node], false});
    stack.push_back({tree.right[node], false});
  }
  info.rule_size = std::max(1, (widest + 1) / 2);
}

// cover(child) / cover(node); a node without weight (only in hand-made states) splits its paths
// evenly.
inline double child_fraction(const Tree& tree, int64_t node, int32_t child) {
  const auto& cover = tree.weighted_n_node_samples;
  return cover[node] > 0.0 ? cover[child] / cover[node] : 0.5;
}

inline TreeInfo tree_info(const Tree& tree) {
  TreeInfo info;
  const int64_t n = tree.node_count();
  for (int64_t node = 0; node < n; ++node)
    if (!tree.is_leaf(node)) info.features.push_back(tree.feature[node]);
  std::sort(info.features.begin(), info.features.end());
  info.features.erase(std::unique(info.features.begin(), info.features.end()), info.features.end());
  info.local.assign(n, -1);
  info.fraction.assign(n, 1.0);
  std::vector<int32_t> depth(n, 0);
  for (int64_t node = 0; node < n; ++node) {  // preorder: children come after their parent
    if (tree.is_leaf(node)) continue;
    const int32_t l = tree.left[node], r = tree.right[node];
    info.local[node] = static_cast<int32_t>(
        std::lower_bound(info.features.begin(), info.features.end(), tree.feature[node]) - info.features.begin());
    info.fraction[l] = child_fraction(tree, node, l);
    info.fraction[r] = child_fraction(tree, node, r);
    depth[l] = depth[r] = depth[node] + 1;
    info.max_depth = std::max(info.max_depth, depth[node] + 1);
  }
  path_widths(tree, info);
  for (int64_t node = 0; node < n && info.splits.size() <= 64; ++node)
    if (!tree.is_leaf(node)) info.splits.push_back(static_cast<int32_t>(node));
  if (info.splits.size() > 64) info.splits.clear();
  return info;
}

// Gauss-Legendre rule with m nodes on [0, 1]: t, 1 - t and weights. Exact for polynomials of
// degree <= 2m - 1. Nodes come in pairs x, -x on [-1, 1], so 1 - t[q] is t[m - 1 - q] exactly.
struct Quadrature {
  std::vector<double> t, s, w, inv_s;  // inv_s = 1 / s
};

// The one-node rule of Banzhaf values: the Shapley integrand taken at t = 1/2 (weight 1).
inline Quadrature banzhaf_rule() { return {{0.5}, {0.5}, {1.0}, {2.0}}; }

inline Quadrature gauss_legendre(int32_t m) {
  constexpr double kPi = 3.14159265358979323846;
  std::vector<double> x(m), w(m);
  for (int32_t i = 0; i < (m + 1) / 2; ++i) {
    double r = std::cos(kPi * (i + 0.75) / (m + 0.5)), dp = 1.0;
    for (int iter = 0; iter < 100; ++iter) {  // Newton on P_m; converges in a few steps
      double p0 = 1.0, p1 = r;
      for (int32_t k = 2; k <= m; ++k) {
        const double p2 = ((2 * k - 1) * r * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = m * (r * p1 - p0) / (r * r - 1.0);
      const double step = p1 / dp;
      r -= step;
      if (std::abs(step) <= 1e-16) break;
    }
    if (m % 2 == 1 && i == m / 2) r = 0.0;
    x[i] = r;
    x[m - 1 - i] = -r;
    w[i] = w[m - 1 - i] = 2.0 / ((1.0 - r) * (1.0 + r) * dp * dp);
  }
  Quadrature rule;
  for (int32_t q = 0; q < m; ++q) {
    rule.t.push_back((1.0 + x[q]) / 2.0);
    rule.s.push_back((1.0 - x[q]) / 2.0);
    rule.w.push_back(w[q] / 2.0);
    rule.inv_s.push_back(1.0 / rule.s.back());
  }
  return rule;
}

// Gauss-Legendre rules for the trees' node counts (TreeInfo::rule_size).
inline std::vector<Quadrature> quadratures(const std::vector<TreeInfo>& infos) {
  int32_t max_m = 1;
  for (const TreeInfo& info : infos) max_m = std::max(max_m, info.rule_size);
  std::vector<Quadrature> rules(max_m + 1);
  for (const TreeInfo& info : infos)
    if (rules[info.rule_size].w.empty()) rules[info.rule_size] = gauss_legendre(info.rule_size);
  return rules;
}

// The largest tree of the forest, by what the walkers' buffers need: one walker per thread serves
// every tree.
struct Extent {
  int32_t max_depth = 0, max_m = 1, max_features = 0;
};

inline Extent extent_of(const std::vector<TreeInfo>& infos) {
  Extent e;
  for (const TreeInfo& info : infos) {
    e.max_depth = std::max(e.max_depth, info.max_depth);
    e.max_m = std::max(e.max_m, info.rule_size);
    e.max_features = std::max(e.max_features, static_cast<int32_t>(info.features.size()));
  }
  return e;
}

// The features the forest splits on (increasing) and each feature's index among them (-1: unused).
// Rows are gathered at these features only, in row-major blocks read in X's own order: a column-major
// X (all_bioc's) is read down its columns instead of one strided value per split.
struct UsedFeatures {
  std::vector<int32_t> features;
  std::vector<int32_t> index;  // n_features long
};

inline UsedFeatures used_features(const Forest& forest, const std::vector<TreeInfo>& infos) {
  UsedFeatures used;
  used.index.assign(forest.n_features, -1);
  for (const TreeInfo& info : infos)
    for (const int32_t j : info.features) used.index[j] = 0;
  for (int32_t j = 0; j < forest.n_features; ++j)
    if (used.index[j] == 0) {
      used.index[j] = static_cast<int32_t>(used.features.size());
      used.features.push_back(j);
    }
  return used;
}

// Rows [begin, end) of X at the used features into out: (end - begin) x n_used, row-major.
inline void gather_rows(const MatrixView& X, const UsedFeatures& used, int64_t begin, int64_t end, double* out) {
  const auto n_used = static_cast<int64_t>(used.features.size());
  std::fill_n(out, (end - begin) * n_used, 0.0);
  if (X.layout == MatrixView::Layout::csr) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t e = X.slice_begin(i); e < X.slice_begin(i + 1); ++e) {
        const int32_t u = used.index[X.minor_index(e)];
        if (u >= 0) out[(i - begin) * n_used + u] = X.value(e);
      }
  } else if (X.layout == MatrixView::Layout::csc || X.col_stride > X.row_stride) {
    for (int64_t u = 0; u < n_used; ++u)
      for (int64_t i = begin; i < end; ++i) out[(i - begin) * n_used + u] = X.at(i, used.features[u]);
  } else {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t u = 0; u < n_used; ++u) out[(i - begin) * n_used + u] = X.at(i, used.features[u]);
  }
}

inline void gather_rows(const MatrixView& X, const UsedFeatures& used, int64_t begin, int64_t end, std::vector<double>& out) {
  out.resize((end - begin) * used.features.size());
  gather_rows(X, used, begin, end, out.data());
}

// A row's output (p x nv) from its sums over the used features (n_used x nv), zeros elsewhere: each
// entry written once.
inline void write_row(const double* acc, const UsedFeatures& used, int32_t nv, int64_t p, double* row) {
  int64_t next = 0;  // the first feature not yet written
  for (size_t u = 0; u < used.features.size(); ++u) {
    const int64_t j = used.features[u];
    std::fill(row + next * nv, row + j * nv, 0.0);
    std::copy_n(acc + u * nv, nv, row + j * nv);
    next = j + 1;
  }
  std::fill(row + next * nv, row + p * nv, 0.0);
}

// What every call reads of the forest, made by the first call and kept with it (prepared).
struct Prepared {
  Prepared(const Forest& forest, int n_threads) {
    infos.resize(forest.trees.size());
    parallel_for(static_cast<int64_t>(infos.size()), n_threads, no_state,
                 [&](int64_t t, int, NoState&) { infos[t] = tree_info(forest.trees[t]); });
    rules = quadratures(infos);
    used = used_features(forest, infos);
    extent = extent_of(infos);
  }
  std::vector<TreeInfo> infos;
  Extent extent;
  std::vector<Quadrature> rules;
  UsedFeatures used;
};

// The forest's Prepared, kept with it (Forest::derived) after the first call, once X is checked.
inline std::shared_ptr<const Prepared> prepared(const Forest& forest, const MatrixView& X, int n_threads) {
  if (X.n_cols != forest.n_features) throw std::invalid_argument("X has a different number of features than the forest");
  if (forest.trees.empty()) throw std::invalid_argument("the forest has no trees");
  return forest.derived.get<Prepared>([&] { return std::make_shared<Prepared>(forest, n_threads); });
}

// A block of rows gathered at the used features: row(r)(j) is row r's value of feature j.
struct Block {
  int64_t begin, end;
  const double* rows;
  int64_t n_used;
  const int32_t* index;
  struct Row {
    const double* xr = nullptr;
    const int32_t* idx = nullptr;
    double operator()(int32_t j) const { return xr[idx[j]]; }
  };
  Row row(int64_t r) const { return {rows + r * n_used, index}; }
};

// Rows per task: up to 32, enough that a column-major gather reads whole cache lines and that rows
// of a shallow tree share walks (for_row_groups); fewer when X has under 256 rows, so that there are
// more tasks for the threads, but whole walks of 8 rows (values_walker.hpp, pairs_walker.hpp: 8 rows
// walk a tree in about the time of 3 alone). A function of the row count only: block sums (the
// mean |interaction|) do not depend on the threads.
inline int64_t row_block(int64_t n_rows) { return std::clamp<int64_t>((n_rows / 8 + 7) / 8 * 8, 8, 32); }

}  // namespace pyinterp::shap_parts
