#include "shap.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "../common/parallel.hpp"

namespace pyinterp {
namespace {

// What the walk needs of one tree, computed once: each split's feature as an index into the tree's
// own features (per-tree buffers are as small as the tree, whatever p is), each node's share of its
// parent's cover, and the depth (from the links).
struct TreeInfo {
  std::vector<int32_t> features;  // local index -> global feature, increasing
  std::vector<int32_t> local;     // per node: local index of its split feature; -1 at leaves
  std::vector<double> fraction;   // per node: cover(node) / cover(parent); 1 at the root
  int32_t max_depth = 0;
};

TreeInfo tree_info(const Tree& tree) {
  TreeInfo info;
  const int64_t n = tree.node_count();
  for (int64_t node = 0; node < n; ++node)
    if (!tree.is_leaf(node)) info.features.push_back(tree.feature[node]);
  std::sort(info.features.begin(), info.features.end());
  info.features.erase(std::unique(info.features.begin(), info.features.end()), info.features.end());
  info.local.assign(n, -1);
  info.fraction.assign(n, 1.0);
  std::vector<int32_t> depth(n, 0);
  const auto& cover = tree.weighted_n_node_samples;
  for (int64_t node = 0; node < n; ++node) {  // preorder: children come after their parent
    if (tree.is_leaf(node)) continue;
    const int32_t l = tree.left[node], r = tree.right[node];
    info.local[node] = static_cast<int32_t>(
        std::lower_bound(info.features.begin(), info.features.end(), tree.feature[node]) - info.features.begin());
    // A node without weight (only in hand-made states) splits its paths evenly.
    const bool weighted = cover[node] > 0.0;
    info.fraction[l] = weighted ? cover[l] / cover[node] : 0.5;
    info.fraction[r] = weighted ? cover[r] / cover[node] : 0.5;
    depth[l] = depth[r] = depth[node] + 1;
    info.max_depth = std::max(info.max_depth, depth[node] + 1);
  }
  return info;
}

std::vector<TreeInfo> tree_infos(const Forest& forest, const MatrixView& X, int n_threads) {
  if (X.n_cols != forest.n_features) throw std::invalid_argument("X has a different number of features than the forest");
  if (forest.trees.empty()) throw std::invalid_argument("the forest has no trees");
  std::vector<TreeInfo> infos(forest.trees.size());
  parallel_for(static_cast<int64_t>(infos.size()), n_threads, no_state,
               [&](int64_t t, int, NoState&) { infos[t] = tree_info(forest.trees[t]); });
  return infos;
}

// One element of the path of distinct features from the root: the fraction of the orderings'
// weight that flows through when the feature is unknown (zero: cover share) or known (one: 0 or 1),
// and `weight`, the path's weight of subsets of size equal to the element's position.
struct PathElem {
  int32_t feature;
  double zero, one, weight;
};

// 1 / k for the path lengths of the walk: the inner loops multiply instead of divide.
struct Inverses {
  explicit Inverses(int32_t n) : inv(n + 2) {
    for (int32_t k = 1; k < n + 2; ++k) inv[k] = 1.0 / k;
  }
  std::vector<double> inv;
};

// Algorithm 2's EXTEND: appends (feature, zero, one) to the path of length len.
void extend(PathElem* m, int32_t len, int32_t feature, double zero, double one, const double* inv) {
  m[len] = {feature, zero, one, len == 0 ? 1.0 : 0.0};
  const double scale = inv[len + 1];
  for (int32_t i = len - 1; i >= 0; --i) {
    const double w = m[i].weight * scale;
    m[i + 1].weight += one * w * (i + 1);
    m[i].weight = zero * w * (len - i);
  }
}

// Algorithm 2's UNWIND: removes element k from the path of length len (undoing its EXTEND). In the
// path-dependent algorithm `one` is 0 or 1.
void unwind(PathElem* m, int32_t len, int32_t k, const double* inv) {
  const int32_t l = len - 1;
  const double one = m[k].one, zero = m[k].zero;
  double next = m[l].weight;
  for (int32_t j = l - 1; j >= 0; --j) {
    if (one != 0.0) {
      const double w = m[j].weight;
      m[j].weight = next * (l + 1) * inv[j + 1];
      next = w - m[j].weight * zero * (l - j) * inv[l + 1];
    } else {
      m[j].weight = m[j].weight * (l + 1) * inv[l - j] / zero;
    }
  }
  for (int32_t j = k; j < l; ++j) {
    m[j].feature = m[j + 1].feature;
    m[j].zero = m[j + 1].zero;
    m[j].one = m[j + 1].one;
  }
}

// The total weight the path would have with element k unwound, without changing it.
double unwound_sum(const PathElem* m, int32_t len, int32_t k, const double* inv) {
  const int32_t l = len - 1;
  const double zero = m[k].zero;
  double total = 0.0;
  if (m[k].one != 0.0) {
    // next carries (l + 1) times Algorithm 2's next_one_portion.
    double next = m[l].weight * (l + 1);
    for (int32_t j = l - 1; j >= 0; --j) {
      const double w = next * inv[j + 1];
      total += w;
      next = m[j].weight * (l + 1) - w * zero * (l - j);
    }
  } else {
    for (int32_t j = l - 1; j >= 0; --j) total += m[j].weight * inv[l - j];
    total *= (l + 1) / zero;
  }
  return total;
}

// The recursion of Algorithm 2 run depth-first on an explicit stack (any depth): path level d holds
// the path at the node of depth d being walked, copied from level d - 1 on entry.
class Walker {
 public:
  Walker(int32_t max_depth, int32_t max_path)
      : cap_(max_path), paths_(static_cast<size_t>(max_depth + 1) * max_path), lengths_(max_depth + 1),
        inverses_(max_path) {}

  // Adds the tree's SHAP values times `scale` to phi (local features x n_values). held >= 0: that
  // local feature is held known (present) or unknown (absent) rather than taking part, which gives
  // the conditioned values of the interaction index.
  template <class Row>
  void walk(const Tree& tree, const TreeInfo& info, const Row& x, int32_t held, bool present, double scale,
            double* phi) {
    const int32_t nv = tree.n_values;
    const double* inv = inverses_.inv.data();
    stack_.clear();
    stack_.push_back({0, 0, -1, 1.0, 1.0, scale});
    while (!stack_.empty()) {
      const Frame f = stack_.back();
      stack_.pop_back();
      PathElem* m = paths_.data() + static_cast<size_t>(f.depth) * cap_;
      int32_t len = 0;
      if (f.depth > 0) {
        len = lengths_[f.depth - 1];
        std::copy_n(m - cap_, len, m);
      }
      if (held < 0 || f.feature != held) extend(m, len++, f.feature, f.zero, f.one, inv);
      const int32_t node = f.node;
      if (tree.is_leaf(node)) {
        const double* v = tree.value.data() + static_cast<int64_t>(node) * nv;
        for (int32_t i = 1; i < len; ++i) {
          const double s = unwound_sum(m, len, i, inv) * (m[i].one - m[i].zero) * f.scale;
          double* o = phi + static_cast<int64_t>(m[i].feature) * nv;
          for (int32_t c = 0; c < nv; ++c) o[c] += s * v[c];
        }
        continue;
      }
      const int32_t d = info.local[node];
      const int32_t hot = tree.child_of(node, x(tree.feature[node]));
      const int32_t cold = hot == tree.left[node] ? tree.right[node] : tree.left[node];
      double zero = 1.0, one = 1.0, hot_scale = f.scale, cold_scale = f.scale;
      if (d == held) {
        if (present) {
          cold_scale = 0.0;
        } else {
          hot_scale *= info.fraction[hot];
          cold_scale *= info.fraction[cold];
        }
      } else {
        for (int32_t k = 1; k < len; ++k) {
          if (m[k].feature != d) continue;
          zero = m[k].zero;
          one = m[k].one;
          unwind(m, len--, k, inv);
          break;
        }
      }
      lengths_[f.depth] = len;
      const double hot_zero = zero * info.fraction[hot], cold_zero = zero * info.fraction[cold];
      // A branch that carries no weight adds nothing; skipping it also keeps zero fractions out of
      // the unwinding's divisions.
      if (cold_scale != 0.0 && (d == held || cold_zero != 0.0))
        stack_.push_back({cold, f.depth + 1, d, cold_zero, 0.0, cold_scale});
      if (hot_scale != 0.0 && (d == held || hot_zero != 0.0 || one != 0.0))
        stack_.push_back({hot, f.depth + 1, d, hot_zero, one, hot_scale});
    }
  }

 private:
  // A node to walk, with the element its parent's split appends to the path.
  struct Frame {
    int32_t node, depth, feature;
    double zero, one, scale;
  };
  int64_t cap_;
  std::vector<PathElem> paths_;
  std::vector<int32_t> lengths_;
  std::vector<Frame> stack_;
  Inverses inverses_;
};

// A walker sized for every tree (a path holds the root element and at most one element per
// distinct feature above a leaf) and per-tree value buffers, one per thread.
Walker make_walker(const std::vector<TreeInfo>& infos) {
  int32_t max_depth = 0, max_path = 1;
  for (const TreeInfo& info : infos) {
    max_depth = std::max(max_depth, info.max_depth);
    max_path = std::max(max_path, std::min(info.max_depth, static_cast<int32_t>(info.features.size())) + 1);
  }
  return Walker(max_depth, max_path);
}

struct Scratch {
  explicit Scratch(const std::vector<TreeInfo>& infos) : walker(make_walker(infos)) {}
  Walker walker;
  std::vector<double> base, on, off;
};

// Row i's interaction values, tree by tree: emit(a, b, c, value) for a != b with half the tree's
// Shapley interaction index (phi_b with a known minus phi_b with a unknown, halved), and for a == b
// the main effect (phi_a minus those halves). Values of a row sum over trees in tree order.
template <class Emit>
void row_interactions(const Forest& forest, const std::vector<TreeInfo>& infos, const MatrixView& X, int64_t i,
                      Scratch& s, Emit emit) {
  auto& base = s.base;
  auto& on = s.on;
  auto& off = s.off;
  Walker& walker = s.walker;
  const int32_t nv = forest.n_values();
  const double scale = 1.0 / static_cast<double>(forest.trees.size());
  const auto x = [&](int32_t j) { return X.at(i, j); };
  for (size_t t = 0; t < forest.trees.size(); ++t) {
    const Tree& tree = forest.trees[t];
    const TreeInfo& info = infos[t];
    const auto n_local = static_cast<int32_t>(info.features.size());
    base.assign(static_cast<size_t>(n_local) * nv, 0.0);
    walker.walk(tree, info, x, -1, false, scale, base.data());
    for (int32_t a = 0; a < n_local; ++a) {
      on.assign(base.size(), 0.0);
      off.assign(base.size(), 0.0);
      walker.walk(tree, info, x, a, true, scale, on.data());
      walker.walk(tree, info, x, a, false, scale, off.data());
      for (int32_t c = 0; c < nv; ++c) {
        double main = base[static_cast<size_t>(a) * nv + c];
        for (int32_t b = 0; b < n_local; ++b) {
          if (b == a) continue;
          const size_t k = static_cast<size_t>(b) * nv + c;
          const double half = (on[k] - off[k]) / 2.0;
          main -= half;
          emit(info.features[a], info.features[b], c, half);
        }
        emit(info.features[a], info.features[a], c, main);
      }
    }
  }
}

}  // namespace

std::vector<double> shap_expected_value(const Forest& forest) {
  const int32_t nv = forest.n_values();
  std::vector<double> expected(nv, 0.0), e;
  for (const Tree& tree : forest.trees) {
    const TreeInfo info = tree_info(tree);
    e.assign(tree.value.begin(), tree.value.end());
    for (int64_t node = tree.node_count() - 1; node >= 0; --node) {  // children before parents
      if (tree.is_leaf(node)) continue;
      const int32_t l = tree.left[node], r = tree.right[node];
      for (int32_t c = 0; c < nv; ++c)
        e[node * nv + c] = info.fraction[l] * e[int64_t{l} * nv + c] + info.fraction[r] * e[int64_t{r} * nv + c];
    }
    for (int32_t c = 0; c < nv; ++c) expected[c] += e[c];
  }
  for (double& v : expected) v /= static_cast<double>(forest.trees.size());
  return expected;
}

void shap_values(const Forest& forest, const MatrixView& X, double* out, int n_threads) {
  const std::vector<TreeInfo> infos = tree_infos(forest, X, n_threads);
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  const double scale = 1.0 / static_cast<double>(forest.trees.size());
  // A row costs many tree walks: each is its own task.
  parallel_for(X.n_rows, n_threads, [&](int) { return Scratch(infos); }, [&](int64_t i, int, Scratch& s) {
    const auto x = [&](int32_t j) { return X.at(i, j); };
    double* row = out + i * p * nv;
    for (size_t t = 0; t < forest.trees.size(); ++t) {
      const TreeInfo& info = infos[t];
      s.base.assign(info.features.size() * nv, 0.0);
      s.walker.walk(forest.trees[t], info, x, -1, false, scale, s.base.data());
      for (size_t a = 0; a < info.features.size(); ++a)
        for (int32_t c = 0; c < nv; ++c) row[int64_t{info.features[a]} * nv + c] += s.base[a * nv + c];
    }
  });
}

void shap_interaction_values(const Forest& forest, const MatrixView& X, double* out, int n_threads) {
  const std::vector<TreeInfo> infos = tree_infos(forest, X, n_threads);
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  parallel_for(X.n_rows, n_threads, [&](int) { return Scratch(infos); }, [&](int64_t i, int, Scratch& s) {
    double* row = out + i * p * p * nv;
    row_interactions(forest, infos, X, i, s, [&](int32_t a, int32_t b, int32_t c, double v) {
      row[(a * p + b) * nv + c] += v;
    });
  });
}

PairMeans shap_interaction_mean_abs(const Forest& forest, const MatrixView& X, int n_threads) {
  const std::vector<TreeInfo> infos = tree_infos(forest, X, n_threads);
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  // Sums of |value| per pair key a * p + b, per block of rows (each key's sum in row order), merged
  // in block order: the result does not depend on the thread count.
  using Sums = std::unordered_map<int64_t, std::vector<double>>;
  constexpr int64_t kBlock = 64;
  const int64_t n_blocks = (X.n_rows + kBlock - 1) / kBlock;
  std::vector<Sums> blocks(n_blocks);
  parallel_for(n_blocks, n_threads, [&](int) { return Scratch(infos); }, [&](int64_t blk, int, Scratch& s) {
    Sums row_sums;
    for (int64_t i = blk * kBlock; i < std::min(X.n_rows, (blk + 1) * kBlock); ++i) {
      row_sums.clear();
      row_interactions(forest, infos, X, i, s, [&](int32_t a, int32_t b, int32_t c, double v) {
        auto& s = row_sums[a * p + b];
        s.resize(nv, 0.0);
        s[c] += v;
      });
      for (const auto& [key, values] : row_sums) {
        auto& s = blocks[blk][key];
        s.resize(nv, 0.0);
        for (int32_t c = 0; c < nv; ++c) s[c] += std::abs(values[c]);
      }
    }
  });
  Sums total;
  for (const Sums& block : blocks) {
    for (const auto& [key, values] : block) {
      auto& s = total[key];
      s.resize(nv, 0.0);
      for (int32_t c = 0; c < nv; ++c) s[c] += values[c];
    }
  }
  std::vector<int64_t> keys;
  keys.reserve(total.size());
  for (const auto& entry : total) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  PairMeans means;
  for (const int64_t key : keys) {
    means.a.push_back(static_cast<int32_t>(key / p));
    means.b.push_back(static_cast<int32_t>(key % p));
    for (const double s : total[key]) means.mean_abs.push_back(s / static_cast<double>(X.n_rows));
  }
  return means;
}

}  // namespace pyinterp
