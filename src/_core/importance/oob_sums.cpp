#include "oob_sums.hpp"

#include <algorithm>
#include <stdexcept>

namespace pyinterp {

template <class Nodes>
void oob_node_sums(const Nodes tree, const uint32_t* counts, const MatrixView& X, const Targets& targets,
                   NodeSums& sums, const int32_t* leaves) {
  const int64_t n_nodes = tree.count();
  const int32_t nv = tree.n_values;
  sums.w.assign(n_nodes, 0.0);
  sums.wy.assign(n_nodes * nv, 0.0);
  sums.wyy.assign(n_nodes, 0.0);
  sums.n_rows = 0;
  for (int64_t i = 0; i < X.n_rows; ++i) {
    const double w = targets.weight(i);
    if (counts[i] != 0 || w <= 0.0) continue;
    const int32_t leaf = leaves ? leaves[i] : leaf_of(tree, [&](int32_t j) { return X.at(i, j); });
    if (leaf < 0 || leaf >= n_nodes || tree.inner(leaf)) throw std::invalid_argument("a recorded leaf is not a leaf");
    ++sums.n_rows;
    sums.w[leaf] += w;
    if (targets.classes) {
      sums.wy[leaf * nv + targets.classes[i]] += w;
      sums.wyy[leaf] += w;
    } else {
      sums.wy[leaf] += w * targets.y[i];
      sums.wyy[leaf] += w * targets.y[i] * targets.y[i];
    }
  }
  // Children come after their parent (preorder), so a reverse sweep sees every child complete.
  for (int64_t node = n_nodes - 1; node >= 0; --node) {
    if (!tree.inner(node)) continue;
    const int64_t l = tree.left(node), r = tree.right(node);
    sums.w[node] = sums.w[l] + sums.w[r];
    sums.wyy[node] = sums.wyy[l] + sums.wyy[r];
    for (int32_t v = 0; v < nv; ++v) sums.wy[node * nv + v] = sums.wy[l * nv + v] + sums.wy[r * nv + v];
  }
}

template void oob_node_sums(const CoreNodes, const uint32_t*, const MatrixView&, const Targets&, NodeSums&,
                            const int32_t*);
template void oob_node_sums(const SklearnReader, const uint32_t*, const MatrixView&, const Targets&, NodeSums&,
                            const int32_t*);

}  // namespace pyinterp
