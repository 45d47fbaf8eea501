// Path-dependent SHAP interaction values of one tree for one row in one walk (shap.cpp).
//
// A leaf of value v whose path has distinct features with merged elements (z_j, o_j) adds to the
// pair (a, b) the Shapley interaction index
//   v (o_a - z_a) (o_b - z_b) int_0^1 prod_{k != a, b} f_k(t) dt
// (the index's weights |S|! (d-2-|S|)! / (d-1)! are int t^|S| (1-t)^(d-2-|S|) dt, as the values'
// are in values_walker.hpp), and to a its SHAP value. With r_j(t) = (o_j - z_j) / f_j(t) and P_L
// the leaf's product of its path's factors, the index is int v P_L r_a r_b.
//
// Where a feature splits several times on the path, its elements form a chain (each merged into
// the one above); r of the final element is the sum over the chain of r(element) - r(outer), so
// the index is a double sum over pairs of chain links, one of a and one of b. Each such pair of
// links is charged at the deeper one, F, for all the leaves below it; the links of a above F sum
// to r of a's element current at F. So leaving node F, whose edge's element belongs to b, adds to
// (a, b) for every other feature a on the path above
//   sum_q w_q P_parent(t_q) K_F(t_q) c_F(t_q) r_a(t_q),
// the summand of F's term in the values walk (values_walker.hpp: K_F the sum over the leaves below
// F of v times the edge factors below F, c_F = o - z for a new element and the merged correction
// otherwise) times r_a. O(nodes x d x m) per tree and row, d the distinct features on the path,
// against O(leaves x d^2 x m) per leaf; O(nodes x m) more for the SHAP values on the diagonal.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "../forest/tree.hpp"
#include "shap_parts.hpp"
#include "values_walker.hpp"

namespace pyinterp::shap_parts {

class PairsWalker {
 public:
  PairsWalker(int32_t max_depth, int32_t max_m, int32_t n_values, int32_t max_features)
      : m_(max_m), levels_(max_depth + 1), p_(levels_.size() * max_m), r_(p_.size()), inv_(p_.size()),
        k_(p_.size() * n_values), a_(static_cast<size_t>(max_m) * n_values), where_(max_features, -1) {}

  // Adds scale times the tree's values to out (local features x local features x n_values): off
  // the diagonal half the interaction index, on it the SHAP value.
  template <class Row>
  void walk(const Tree& tree, const TreeInfo& info, const Quadrature& rule, const Row& x, double scale, double* out) {
    const int32_t nv = tree.n_values;
    const auto n_local = static_cast<int64_t>(info.features.size());
    const auto m = static_cast<int32_t>(rule.w.size());
    const double *t = rule.t.data(), *s = rule.s.data(), *w = rule.w.data();
    const auto P = [&](int32_t l) { return p_.data() + static_cast<size_t>(l) * m_; };
    const auto K = [&](int32_t l) { return k_.data() + static_cast<size_t>(l) * m_ * nv; };
    const auto goes_left = [&](int32_t node) { return tree.child_of(node, x(tree.feature[node])) == tree.left[node]; };
    // 1 / f' of the element at level l for o' = 1, formed once.
    const auto inv_of = [&](int32_t l) {
      double* inv = inv_.data() + static_cast<size_t>(l) * m_;
      if (!levels_[l].inv_ready) {
        for (int32_t q = 0; q < m; ++q) inv[q] = 1.0 / (t[q] + levels_[l].z * s[q]);
        levels_[l].inv_ready = true;
      }
      return inv;
    };
    // Leaving F (element d, z, o, outer level prev) into its parent's level `up`: F's share of the
    // parent's K from k (F's K, or a leaf's values with k_stride 0), its terms a_ per rule node and
    // value, and their sums into the diagonal and, times r_a, into the pairs with the path's other
    // features.
    const auto leave = [&](int32_t up, int32_t d, double z, double o, int32_t prev, const double* k, int64_t k_stride,
                           bool first) {
      const double* p = P(up);
      double* kp = K(up);
      double scale_terms = o - z;  // a new element's o - z, applied to the sums
      if (prev < 0) {
        for (int32_t q = 0; q < m; ++q) {
          const double e = o * t[q] + z * s[q], wp = w[q] * p[q];
          for (int32_t v = 0; v < nv; ++v) {
            const double kv = k[q * k_stride + v];
            a_[q * nv + v] = wp * kv;
            kp[q * nv + v] = first ? e * kv : kp[q * nv + v] + e * kv;
          }
        }
      } else {
        const Level& outer = levels_[prev];
        const double* inv = inv_of(prev);
        const double ratio = outer.z > 0.0 ? z / outer.z : 0.0;
        for (int32_t q = 0; q < m; ++q) {
          const double hot = (o * t[q] + z * s[q]) * inv[q];
          const double e = outer.o * hot + (1.0 - outer.o) * ratio;
          const double wpc = w[q] * p[q] * (outer.o * ((o - z) - (1.0 - outer.z) * hot) * inv[q]);
          for (int32_t v = 0; v < nv; ++v) {
            const double kv = k[q * k_stride + v];
            a_[q * nv + v] = wpc * kv;
            kp[q * nv + v] = first ? e * kv : kp[q * nv + v] + e * kv;
          }
        }
        scale_terms = 1.0;
      }
      for (int32_t v = 0; v < nv; ++v) {
        double sum = 0.0;
        for (int32_t q = 0; q < m; ++q) sum += a_[q * nv + v];
        out[(d * n_local + d) * nv + v] += scale_terms * sum;
      }
      for (const int32_t a : active_) {
        if (a == d) continue;
        const double* r = r_.data() + static_cast<size_t>(where_[a]) * m_;
        for (int32_t v = 0; v < nv; ++v) {
          double sum = 0.0;
          for (int32_t q = 0; q < m; ++q) sum += a_[q * nv + v] * r[q];
          const double half = scale_terms * sum / 2.0;
          out[(a * n_local + d) * nv + v] += half;
          out[(d * n_local + a) * nv + v] += half;
        }
      }
    };
    if (tree.is_leaf(0)) return;
    levels_[0] = {0, 0, -1, -1, 1.0, 1.0, false, goes_left(0), false};
    std::fill_n(P(0), m, scale);
    active_.clear();
    int32_t l = 0;
    while (true) {
      Level& L = levels_[l];
      if (L.side < 2) {
        const int side = L.side++;
        const int32_t child = side == 0 ? tree.left[L.node] : tree.right[L.node], d = info.local[L.node];
        const int32_t prev = where_[d];
        const double zp = prev >= 0 ? levels_[prev].z : 1.0, op = prev >= 0 ? levels_[prev].o : 1.0;
        const double z = zp * info.fraction[child], o = op * ((side == 0) == L.row_left ? 1.0 : 0.0);
        if (tree.is_leaf(child)) {
          leave(l, d, z, o, prev, tree.value.data() + static_cast<int64_t>(child) * nv, 0, side == 0);
          continue;
        }
        // The child's level: P one edge further (the element's factor, or for a merged one its
        // ratio to the outer element's) and r of its element.
        const double *p = P(l), *inv = prev >= 0 ? inv_of(prev) : nullptr;
        double *pc = P(l + 1), *r = r_.data() + static_cast<size_t>(l + 1) * m_;
        const double ratio = prev >= 0 && zp > 0.0 ? z / zp : 0.0;
        for (int32_t q = 0; q < m; ++q) {
          const double f = o * t[q] + z * s[q];
          pc[q] = p[q] * (prev < 0 ? f : op * (f * inv[q]) + (1.0 - op) * ratio);
          r[q] = o != 0.0 ? (1.0 - z) / f : -1.0 / s[q];
        }
        levels_[l + 1] = {child, 0, d, prev, z, o, side == 0, goes_left(child), false};
        if (prev < 0) active_.push_back(d);
        where_[d] = ++l;
        continue;
      }
      if (l == 0) break;
      where_[L.feature] = L.prev;
      if (L.prev < 0) active_.pop_back();
      leave(l - 1, L.feature, L.z, L.o, L.prev, K(l), nv, L.left);
      --l;
    }
  }

 private:
  struct Level {
    int32_t node, side, feature, prev;  // side: the child to open next (0 left, 1 right, 2 done)
    double z, o;                        // the merged element of the edge into the node
    bool left;                          // the node is its parent's left child
    bool row_left;                      // the row goes left at the node
    bool inv_ready;                     // inv_ holds 1 / (t + z s) for its element
  };

  int32_t m_;
  std::vector<Level> levels_;    // the path
  std::vector<double> p_, r_;    // per level and rule node: P(t), r(t) of the level's element
  std::vector<double> inv_;      // per level and rule node: 1 / (t + z s), formed when first needed
  std::vector<double> k_;        // per level, rule node and value: K(t)
  std::vector<double> a_;        // per rule node and value: the terms of the element being left
  std::vector<int32_t> where_;   // per local feature: the level of its element on the path, or -1
  std::vector<int32_t> active_;  // the path's distinct features
};

}  // namespace pyinterp::shap_parts
