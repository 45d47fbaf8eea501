#include "sklearn_trees.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "../common/parallel.hpp"

namespace pyinterp {

Tree tree_from_sklearn(const SklearnNodes& nodes, int32_t k, int64_t n_features) {
  const int64_t n = nodes.n_nodes;
  Tree t;
  t.n_values = k;
  const int64_t n_values = k;  // read by the field list's value entry
#define PYINTERP_SIZE(type, name, initial, columns) t.name.assign(n * std::max<int64_t>(columns, 1), initial);
  PYINTERP_TREE_FIELDS(PYINTERP_SIZE)
#undef PYINTERP_SIZE
  // Raw pointers: stores through a vector's own pointer (uint8_t aliases it) would reload it.
  int32_t *feature = t.feature.data(), *left = t.left.data(), *right = t.right.data();
  int32_t *parent = t.parent.data(), *depth = t.depth.data(), *samples = t.n_node_samples.data();
  double *threshold = t.threshold.data(), *weighted = t.weighted_n_node_samples.data();
  double *impurity = t.impurity.data(), *value = t.value.data(), *decrease = t.impurity_decrease.data();
  uint8_t* missing = t.missing_go_to_left.data();
  // One pass in node order, reading each node's struct once (in place, sequentially: a child's
  // fields read from its parent would be a cache miss per split, the old code's main cost). The
  // structs come from memory, not cache: the pass waits on them unless they are asked for ahead.
  const SklearnNodes a = nodes;  // a local copy: its strides stay in registers
  constexpr int64_t kAhead = 16;
  for (int64_t node = 0; node < n; ++node) {
    if (node + kAhead < n) {
      __builtin_prefetch(a.left.data + (node + kAhead) * a.left.stride);
      __builtin_prefetch(a.n_node_samples.data + (node + kAhead) * a.n_node_samples.stride);
    }
    const int64_t l = a.left[node], r = a.right[node];
    samples[node] = static_cast<int32_t>(a.n_node_samples[node]);
    weighted[node] = a.weighted_n_node_samples[node];
    impurity[node] = a.impurity[node];
    const char* v = a.value.data + node * a.value.stride;
    // The mean, or the class fractions as scikit-learn >= 1.4 stores them, taken as they are (its
    // predict_proba does not renormalise them either).
    for (int32_t c = 0; c < k; ++c) std::memcpy(value + node * k + c, v + c * a.value_column, sizeof(double));
    if (l < 0) {
      if (r >= 0)
        throw std::invalid_argument("scikit-learn trees: node " + std::to_string(node) + ": a leaf (left child -1) with "
                                    "a right child");
      continue;
    }
    const int64_t f = a.feature[node];
    threshold[node] = a.threshold[node];
    if (!valid_split(node, l, r, f, threshold[node], n, n_features, parent))
      throw std::invalid_argument(split_fault(node, l, r, f, threshold[node], n, n_features, parent));
    feature[node] = static_cast<int32_t>(f);
    missing[node] = a.missing_go_to_left[node] != 0;
    left[node] = static_cast<int32_t>(l);
    right[node] = static_cast<int32_t>(r);
    parent[l] = parent[r] = static_cast<int32_t>(node);
    depth[l] = depth[r] = depth[node] + 1;  // preorder: the node's depth is set before its children's
  }
  check_every_node_reached(parent, n);
  // Impurity decreases from the core's own compact copies (cache-resident by now).
  impurity_decreases(n, left, right, weighted, impurity, decrease);
  return t;
}

std::vector<uint32_t> sklearn_inbag(const std::vector<uint32_t>& seeds, int64_t n_samples, int64_t n_draws,
                                    const double* cdf, int n_threads) {
  if (n_samples < 1 || n_samples > (int64_t{1} << 32) || n_draws < 0)
    throw std::invalid_argument("scikit-learn in-bag counts: need 1 <= n_samples <= 2^32 and n_draws >= 0");
  std::vector<uint32_t> counts(seeds.size() * static_cast<size_t>(n_samples), 0u);
  // numpy's randint(0, n) draws masked 32-bit words below the smallest all-ones mask >= n - 1.
  const auto top = static_cast<uint32_t>(n_samples - 1);
  uint32_t mask = top;
  for (int shift = 1; shift < 32; shift <<= 1) mask |= mask >> shift;
  parallel_for(static_cast<int64_t>(seeds.size()), n_threads, no_state, [&](int64_t t, int, NoState&) {
    std::mt19937 gen(seeds[t]);  // numpy's legacy seeding of an integer (init_genrand)
    uint32_t* c = counts.data() + t * n_samples;
    if (cdf != nullptr) {
      for (int64_t d = 0; d < n_draws; ++d) {
        const uint32_t hi = gen() >> 5, lo = gen() >> 6;  // numpy's legacy random_sample()
        const double u = (hi * 67108864.0 + lo) / 9007199254740992.0;
        const int64_t row = std::upper_bound(cdf, cdf + n_samples, u) - cdf;  // searchsorted side='right'
        if (row >= n_samples) throw std::invalid_argument("scikit-learn in-bag counts: cdf must end at 1");
        ++c[row];
      }
    } else if (top == 0) {
      c[0] = static_cast<uint32_t>(n_draws);  // numpy draws nothing for a range of one value
    } else {
      for (int64_t d = 0; d < n_draws; ++d) {
        uint32_t row;
        while ((row = static_cast<uint32_t>(gen()) & mask) > top) {
        }
        ++c[row];
      }
    }
  });
  return counts;
}

}  // namespace pyinterp
