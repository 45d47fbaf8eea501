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
  int32_t rule_size = 1;  // Gauss-Legendre nodes for the longest possible path: ceil(min(depth, features) / 2)
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
  info.rule_size = std::max(1, (std::min(info.max_depth, static_cast<int32_t>(info.features.size())) + 1) / 2);
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

// Gauss-Legendre rule with m nodes on [0, 1]: t, 1 - t and weights. Exact for polynomials of
// degree <= 2m - 1. Nodes come in pairs x, -x on [-1, 1], so 1 - t[q] is t[m - 1 - q] exactly.
struct Quadrature {
  std::vector<double> t, s, w, ws;  // ws = w / s
};

Quadrature gauss_legendre(int32_t m) {
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
    rule.ws.push_back(rule.w.back() / rule.s.back());
  }
  return rule;
}

// Path-dependent TreeSHAP as an integral (the identity behind Linear TreeShap, Yu et al. 2022). A
// leaf with value v whose path has distinct features 1..d, feature j with the product z_j of its
// splits' cover shares and the product o_j (0 or 1) of the row's agreement with them, adds to
// feature i
//   v (o_i - z_i) sum_k k! (d-1-k)! / d! e_k(others) = v (o_i - z_i) int_0^1 prod_{j != i} f_j(t) dt,
// f_j(t) = o_j t + z_j (1 - t), because k! (d-1-k)! / d! = int t^k (1-t)^(d-1-k) dt. The integrand
// is a polynomial of degree d - 1, so a Gauss-Legendre rule of ceil(d / 2) nodes gives it exactly;
// its terms are products of factors in [0, 1] with positive weights: no cancellation. The walk keeps
// P(t) = prod_j f_j(t) at the rule's nodes, per node on the path, and on the way up G(t), the sum of
// v P(t) over the leaves below; leaving node n adds (o_i - z_i) sum_q w_q G_n(t_q) / f_i(t_q) for the
// element of the edge into n. Where that feature already had an element above (it splits again),
// the leaves below n carry the merged element instead, so the outer element's term for G_n is taken
// back there. O(nodes x m) per tree and row against Algorithm 2's O(nodes x D + leaves x D^2).
class Walker {
 public:
  Walker(int32_t max_depth, int32_t max_m, int32_t n_values, int32_t max_features)
      : stride_(max_m), levels_(max_depth + 1), p_(static_cast<size_t>(max_depth + 1) * max_m),
        g_(p_.size() * n_values), where_(max_features, -1) {}

  // Adds the tree's SHAP values times `scale` to phi (local features x n_values). held >= 0: that
  // local feature is held known (present) or unknown (absent) rather than taking part, which gives
  // the conditioned values of the interaction index.
  template <class Row>
  void walk(const Tree& tree, const TreeInfo& info, const Quadrature& rule, const Row& x, int32_t held,
            bool present, double scale, double* phi) {
    if (tree.n_values == 1) {
      walk<1>(tree, info, rule, x, held, present, scale, phi);
    } else {
      walk<0>(tree, info, rule, x, held, present, scale, phi);
    }
  }

 private:
  // NV: the number of values when known at compile time (regression), else 0.
  template <int NV, class Row>
  void walk(const Tree& tree, const TreeInfo& info, const Quadrature& rule, const Row& x, int32_t held,
            bool present, double scale, double* phi) {
    const int32_t nv = NV > 0 ? NV : tree.n_values;
    const auto m = static_cast<int32_t>(rule.w.size());
    const double *t = rule.t.data(), *s = rule.s.data(), *w = rule.w.data(), *ws = rule.ws.data();
    const auto P = [&](int32_t l) { return p_.data() + static_cast<size_t>(l) * stride_; };
    const auto G = [&](int32_t l) { return g_.data() + static_cast<size_t>(l) * stride_ * nv; };
    // (o - z) sum_q w_q g_q / f(t_q) into out: with o = 0 the factor z cancels (no division).
    const auto add_term = [&](double z, double o, const double* g, double sign, double* out) {
      for (int32_t c = 0; c < nv; ++c) {
        double sum = 0.0;
        if (o == 0.0) {
          for (int32_t q = 0; q < m; ++q) sum -= ws[q] * g[q * nv + c];
        } else {
          for (int32_t q = 0; q < m; ++q) sum += w[q] * g[q * nv + c] / (t[q] + z * s[q]);
          sum *= 1.0 - z;
        }
        out[c] += sign * sum;
      }
    };
    levels_[0] = {0, 0, -1, -1, 0.0, 0.0, {}};
    std::fill_n(P(0), m, scale);
    int32_t l = 0;
    while (true) {
      Level& L = levels_[l];
      if (L.state == 0) {
        const int32_t node = L.node;
        if (tree.is_leaf(node)) {
          const double* v = tree.value.data() + static_cast<int64_t>(node) * nv;
          double *g = G(l), *p = P(l);
          for (int32_t q = 0; q < m; ++q)
            for (int32_t c = 0; c < nv; ++c) g[q * nv + c] = p[q] * v[c];
          L.state = 3;
        } else {
          std::fill_n(G(l), m * nv, 0.0);
          L.child[0] = tree.child_of(node, x(tree.feature[node]));  // the row's child first
          L.child[1] = L.child[0] == tree.left[node] ? tree.right[node] : tree.left[node];
          L.state = 1;
        }
      }
      if (L.state < 3) {
        const int k = L.state - 1;  // 0: the row's child (o = 1), 1: the other (o = 0)
        ++L.state;
        const int32_t child = L.child[k], d = info.local[L.node];
        const double frac = info.fraction[child];
        const double* p = P(l);
        double* pc = P(l + 1);
        Level& C = levels_[l + 1];
        if (d == held) {
          // Held known: only the row's child, weight 1; held unknown: both, by cover.
          const double mul = present ? (k == 0 ? 1.0 : 0.0) : frac;
          if (mul == 0.0) continue;  // a branch that carries no weight adds nothing
          C = {child, 0, -1, -1, 0.0, 0.0, {}};
          for (int32_t q = 0; q < m; ++q) pc[q] = p[q] * mul;
        } else {
          const int32_t prev = where_[d];
          const double zp = prev >= 0 ? levels_[prev].z : 1.0, op = prev >= 0 ? levels_[prev].o : 1.0;
          const double z = zp * frac, o = k == 0 ? op : 0.0;
          if (z == 0.0 && o == 0.0) continue;  // no weight; also keeps zero factors out of divisions
          C = {child, 0, d, prev, z, o, {}};
          if (prev < 0) {
            for (int32_t q = 0; q < m; ++q) pc[q] = p[q] * (o * t[q] + z * s[q]);
          } else if (op == 0.0) {
            for (int32_t q = 0; q < m; ++q) pc[q] = p[q] * frac;  // z s / (zp s)
          } else {
            for (int32_t q = 0; q < m; ++q) pc[q] = p[q] * (o * t[q] + z * s[q]) / (t[q] + zp * s[q]);
          }
          where_[d] = l + 1;
        }
        ++l;
        continue;
      }
      if (l == 0) break;
      const double* g = G(l);
      if (L.feature >= 0) {
        double* out = phi + static_cast<int64_t>(L.feature) * nv;
        add_term(L.z, L.o, g, 1.0, out);
        where_[L.feature] = L.prev;
        if (L.prev >= 0) add_term(levels_[L.prev].z, levels_[L.prev].o, g, -1.0, out);
      }
      double* gp = G(l - 1);
      for (int32_t i = 0; i < m * nv; ++i) gp[i] += g[i];
      --l;
    }
  }

  // The node being walked at one depth: state 0 on entry, 1 and 2 before its row's child and the
  // other one, 3 when done; the element its parent's split added (feature -1: none) with its
  // merged z and o, and the level of the element of the same feature it replaces (or -1).
  struct Level {
    int32_t node, state, feature, prev;
    double z, o;
    int32_t child[2];
  };
  int64_t stride_;
  std::vector<Level> levels_;
  std::vector<double> p_, g_;
  std::vector<int32_t> where_;  // per local feature: the level of its element on the path, or -1
};

// Gauss-Legendre rules for the trees' node counts (TreeInfo::rule_size).
std::vector<Quadrature> quadratures(const std::vector<TreeInfo>& infos) {
  int32_t max_m = 1;
  for (const TreeInfo& info : infos) max_m = std::max(max_m, info.rule_size);
  std::vector<Quadrature> rules(max_m + 1);
  for (const TreeInfo& info : infos)
    if (rules[info.rule_size].w.empty()) rules[info.rule_size] = gauss_legendre(info.rule_size);
  return rules;
}

// A walker sized for every tree, one per thread.
Walker make_walker(const std::vector<TreeInfo>& infos, int32_t n_values) {
  int32_t max_depth = 0, max_m = 1, max_features = 0;
  for (const TreeInfo& info : infos) {
    max_depth = std::max(max_depth, info.max_depth);
    max_m = std::max(max_m, info.rule_size);
    max_features = std::max(max_features, static_cast<int32_t>(info.features.size()));
  }
  return Walker(max_depth, max_m, n_values, max_features);
}

struct Scratch {
  Scratch(const std::vector<TreeInfo>& infos, int32_t n_values) : walker(make_walker(infos, n_values)) {}
  Walker walker;
  std::vector<double> base, on, off;
};

// Row i's interaction values, tree by tree: emit(a, b, c, value) for a != b with half the tree's
// Shapley interaction index (phi_b with a known minus phi_b with a unknown, halved), and for a == b
// the main effect (phi_a minus those halves). Values of a row sum over trees in tree order.
template <class Emit>
void row_interactions(const Forest& forest, const std::vector<TreeInfo>& infos,
                      const std::vector<Quadrature>& rules, const MatrixView& X, int64_t i,
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
    walker.walk(tree, info, rules[info.rule_size], x, -1, false, scale, base.data());
    for (int32_t a = 0; a < n_local; ++a) {
      on.assign(base.size(), 0.0);
      off.assign(base.size(), 0.0);
      walker.walk(tree, info, rules[info.rule_size], x, a, true, scale, on.data());
      walker.walk(tree, info, rules[info.rule_size], x, a, false, scale, off.data());
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
  const std::vector<Quadrature> rules = quadratures(infos);
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  const double scale = 1.0 / static_cast<double>(forest.trees.size());
  // A row costs many tree walks: each is its own task.
  parallel_for(X.n_rows, n_threads, [&](int) { return Scratch(infos, nv); }, [&](int64_t i, int, Scratch& s) {
    const auto x = [&](int32_t j) { return X.at(i, j); };
    double* row = out + i * p * nv;
    std::fill_n(row, p * nv, 0.0);  // by the row's own thread
    for (size_t t = 0; t < forest.trees.size(); ++t) {
      const TreeInfo& info = infos[t];
      s.base.assign(info.features.size() * nv, 0.0);
      s.walker.walk(forest.trees[t], info, rules[info.rule_size], x, -1, false, scale, s.base.data());
      for (size_t a = 0; a < info.features.size(); ++a)
        for (int32_t c = 0; c < nv; ++c) row[int64_t{info.features[a]} * nv + c] += s.base[a * nv + c];
    }
  });
}

void shap_interaction_values(const Forest& forest, const MatrixView& X, double* out, int n_threads) {
  const std::vector<TreeInfo> infos = tree_infos(forest, X, n_threads);
  const std::vector<Quadrature> rules = quadratures(infos);
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  parallel_for(X.n_rows, n_threads, [&](int) { return Scratch(infos, nv); }, [&](int64_t i, int, Scratch& s) {
    double* row = out + i * p * p * nv;
    std::fill_n(row, p * p * nv, 0.0);
    row_interactions(forest, infos, rules, X, i, s, [&](int32_t a, int32_t b, int32_t c, double v) {
      row[(a * p + b) * nv + c] += v;
    });
  });
}

PairMeans shap_interaction_mean_abs(const Forest& forest, const MatrixView& X, int n_threads) {
  const std::vector<TreeInfo> infos = tree_infos(forest, X, n_threads);
  const std::vector<Quadrature> rules = quadratures(infos);
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  // Sums of |value| per pair key a * p + b, per block of rows (each key's sum in row order), merged
  // in block order: the result does not depend on the thread count.
  using Sums = std::unordered_map<int64_t, std::vector<double>>;
  constexpr int64_t kBlock = 64;
  const int64_t n_blocks = (X.n_rows + kBlock - 1) / kBlock;
  std::vector<Sums> blocks(n_blocks);
  parallel_for(n_blocks, n_threads, [&](int) { return Scratch(infos, nv); }, [&](int64_t blk, int, Scratch& s) {
    Sums row_sums;
    for (int64_t i = blk * kBlock; i < std::min(X.n_rows, (blk + 1) * kBlock); ++i) {
      row_sums.clear();
      row_interactions(forest, infos, rules, X, i, s, [&](int32_t a, int32_t b, int32_t c, double v) {
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
