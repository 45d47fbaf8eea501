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
//
// As in the values walk, up to kRows rows walk a tree together (lanes: rule node, then row) and a
// row's values come from the same operations in the same order whatever rows walk with it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "../forest/tree.hpp"
#include "shap_parts.hpp"
#include "values_walker.hpp"

namespace pyinterp::shap_parts {

namespace lanes {

// dots[(v n_active + i) R + r] += sum_q a[(q nv + v) R + r] rs[(q slots + i) R + r]: a leaving
// element's terms against r of every active feature, rows side by side.
template <int R>
PYINTERP_LANES void pair_dots(int32_t m, int32_t nv, int32_t n_active, int32_t slots, const double* __restrict__ a,
                              const double* __restrict__ rs, double* __restrict__ dots) {
  std::fill_n(dots, static_cast<int64_t>(nv) * n_active * R, 0.0);
  for (int32_t q = 0; q < m; ++q)
    for (int32_t v = 0; v < nv; ++v) {
      const double* aq = a + (static_cast<int64_t>(q) * nv + v) * R;
      const double* rq = rs + static_cast<int64_t>(q) * slots * R;
      double* dv = dots + static_cast<int64_t>(v) * n_active * R;
      for (int h = 0; h < R; h += kWidth<R>) {
        const Vec<R> av = at<R>(aq + h);
        for (int32_t i = 0; i < n_active; ++i) at<R>(dv + i * R + h) += av * at<R>(rq + i * R + h);
      }
    }
}

// r = (o - z) / f of an element for R rows at each rule node, into rc and rs's slot: (1 - z) /
// (t + z s) where o = 1 and -1 / s where o = 0 (the form below gives both, without 0 / 0 at z = 0).
template <int R>
PYINTERP_LANES void ratios(int32_t m, const double* __restrict__ t, const double* __restrict__ s,
                           const double* __restrict__ inv_s, const double* __restrict__ o, double z,
                           double* __restrict__ rc, double* __restrict__ rs, int32_t slots, int32_t slot) {
  for (int32_t q = 0; q < m; ++q)
    for (int h = 0; h < R; h += kWidth<R>) {
      const Vec<R> ov = at<R>(o + h);
      const Vec<R> r = ov * (1.0 - z) / (ov * t[q] + z * s[q] + (1.0 - ov)) - (1.0 - ov) * inv_s[q];
      at<R>(rc + q * R + h) = r;
      at<R>(rs + (static_cast<int64_t>(q) * slots + slot) * R + h) = r;
    }
}

}  // namespace lanes

class PairsWalker {
 public:
  static constexpr int32_t kRows = 8;

  PairsWalker(int32_t max_depth, int32_t max_m, int32_t n_values, int32_t max_features)
      : m_(max_m), slots_(std::min(max_depth, max_features) + 1), levels_(max_depth + 1),
        o_(levels_.size() * kRows), row_left_(o_.size()), p_(levels_.size() * max_m * kRows), r_(p_.size()),
        inv_(levels_.size() * max_m), k_(p_.size() * n_values),
        a_(static_cast<size_t>(max_m) * n_values * kRows), sum_(static_cast<size_t>(n_values) * kRows),
        rs_(static_cast<size_t>(max_m) * slots_ * kRows), dots_(static_cast<size_t>(n_values) * slots_ * kRows),
        where_(max_features, -1) {}

  // Writes scale times the tree's values for rows[0..n) into out (zeros on entry; n tables of
  // `size` = local features x local features x n_values, entry(j) says where row j's are): off
  // the diagonal half the interaction index, on it the SHAP value. kRows rows a walk and the rest
  // in walks of 4, 2 and 1, the tables of a walk's R rows interleaved (entry e of row r at e R + r).
  template <class Row>
  void walk(const Tree& tree, const TreeInfo& info, const Quadrature& rule, const Row* rows, int32_t n, double scale,
            double* out, int64_t size) {
    in_walks(n, [&](auto width, int32_t done) {
      walk<decltype(width)::value>(tree, info, rule, rows + done, scale, out + done * size);
    });
  }

  // Where walk put row j of n: its first entry and the stride between entries.
  static std::pair<int64_t, int32_t> entry(int32_t n, int32_t j, int64_t size) {
    std::pair<int64_t, int32_t> at{-1, 0};
    in_walks(n, [&](auto width, int32_t done) {
      if (j >= done && j < done + width) at = {done * size + (j - done), width};
    });
    return at;
  }

 private:
  struct Level {
    int32_t node, side, feature, prev;  // side: the child to open next (0 left, 1 right, 2 done)
    int32_t slot;                       // the feature's place in active_ and rs_
    double z;                           // the merged element's z (its o per row in o_)
    bool left;                          // the node is its parent's left child
    bool inv_ready;                     // inv_ holds 1 / (t + z s) for its element
  };

  template <int R, class Row>
  void walk(const Tree& tree, const TreeInfo& info, const Quadrature& rule, const Row* rows, double scale, double* out) {
    const int32_t nv = tree.n_values;
    const auto n_local = static_cast<int64_t>(info.features.size());
    const auto m = static_cast<int32_t>(rule.w.size());
    const double *t = rule.t.data(), *s = rule.s.data(), *w = rule.w.data();
    const auto P = [&](int32_t l) { return p_.data() + static_cast<size_t>(l) * m_ * kRows; };
    const auto K = [&](int32_t l) { return k_.data() + static_cast<size_t>(l) * m_ * nv * kRows; };
    const auto O = [&](int32_t l) { return o_.data() + static_cast<size_t>(l) * kRows; };
    const auto directions = [&](int32_t l) {  // per row, 1 where it goes left at level l's node
      const int32_t node = levels_[l].node, f = tree.feature[node];
      double* left = row_left_.data() + static_cast<size_t>(l) * kRows;
      for (int r = 0; r < R; ++r) left[r] = tree.child_of(node, rows[r](f)) == tree.left[node];
    };
    // 1 / f' of the element at level l for o' = 1, formed once.
    const auto inv_of = [&](int32_t l) {
      double* inv = inv_.data() + static_cast<size_t>(l) * m_;
      if (!levels_[l].inv_ready) {
        for (int32_t q = 0; q < m; ++q) inv[q] = 1.0 / (t[q] + levels_[l].z * s[q]);
        levels_[l].inv_ready = true;
      }
      return inv;
    };
    // lanes::up for the element's kind, its summands into a_ and their sums into sum_.
    const auto up = [&](const lanes::Element& el, const double* p, const double* k, bool leaf, bool first, double* kp) {
      lanes::with_kind(el.inv != nullptr, leaf, first, [&](auto merged, auto on_leaf, auto is_first) {
        lanes::up<R, 0, decltype(merged)::value, decltype(on_leaf)::value, decltype(is_first)::value, true>(
            m, nv, t, s, w, el, p, k, kp, sum_.data(), a_.data());
      });
    };
    // Leaving F (element d, z, o per row, outer level prev) into its parent's level `to`: F's share
    // of the parent's K from k (F's K, or with `leaf` a leaf's values), its terms, their sums into
    // the diagonal and, times r_a, into (a, d) for the path's other features a (both orders are
    // summed into the pair when the walk ends).
    const auto leave = [&](int32_t to, int32_t d, double z, const double* o, int32_t prev, const double* k, bool leaf,
                           bool first) {
      lanes::Element el{o, z};
      if (prev >= 0) {
        const double zp = levels_[prev].z;
        el = {o, z, inv_of(prev), O(prev), zp, zp > 0.0 ? z / zp : 0.0};
      }
      up(el, P(to), k, leaf, first, K(to));
      double scale_terms[kRows];  // a new element's o - z, applied to the sums
      for (int r = 0; r < R; ++r) scale_terms[r] = prev < 0 ? o[r] - z : 1.0;
      for (int32_t v = 0; v < nv; ++v) {
        double* diagonal = out + ((d * n_local + d) * nv + v) * R;
        for (int r = 0; r < R; ++r) diagonal[r] += scale_terms[r] * sum_[v * R + r];
      }
      const auto n_active = static_cast<int32_t>(active_.size());
      lanes::pair_dots<R>(m, nv, n_active, slots_, a_.data(), rs_.data(), dots_.data());
      for (int32_t i = 0; i < n_active; ++i) {
        const int64_t a = active_[i];
        if (a == d) continue;
        for (int32_t v = 0; v < nv; ++v) {
          double* pair = out + ((a * n_local + d) * nv + v) * R;
          const double* dot = dots_.data() + (static_cast<int64_t>(v) * n_active + i) * R;
          for (int r = 0; r < R; ++r) pair[r] += scale_terms[r] * dot[r];
        }
      }
    };
    if (tree.is_leaf(0)) return;
    levels_[0] = {0, 0, -1, -1, -1, 1.0, false, false};
    std::fill_n(P(0), m * R, scale);
    directions(0);
    const auto spare = static_cast<int32_t>(levels_.size()) - 1;  // never a node's level: a leaf edge's o
    active_.clear();
    int32_t l = 0;
    while (true) {
      Level& L = levels_[l];
      if (L.side < 2) {
        const int side = L.side++;
        const int32_t child = side == 0 ? tree.left[L.node] : tree.right[L.node], d = info.local[L.node];
        const int32_t prev = where_[d];
        const double zp = prev >= 0 ? levels_[prev].z : 1.0, z = zp * info.fraction[child];
        const bool leaf = tree.is_leaf(child);
        double* o = O(leaf ? spare : l + 1);
        const double* left = row_left_.data() + static_cast<size_t>(l) * kRows;
        for (int r = 0; r < R; ++r) o[r] = (prev >= 0 ? O(prev)[r] : 1.0) * (side == 0 ? left[r] : 1.0 - left[r]);
        if (leaf) {
          leave(l, d, z, o, prev, tree.value.data() + static_cast<int64_t>(child) * nv, true, side == 0);
          continue;
        }
        // The child's level: P one edge further (the element's factor, or for a merged one its
        // ratio to the outer element's) and r of its element.
        lanes::Element el{o, z};
        if (prev >= 0) el = {o, z, inv_of(prev), O(prev), zp, zp > 0.0 ? z / zp : 0.0};
        lanes::down<R>(m, t, s, el, P(l), P(l + 1));
        const int32_t slot = prev >= 0 ? levels_[prev].slot : static_cast<int32_t>(active_.size());
        lanes::ratios<R>(m, t, s, rule.inv_s.data(), o, z, r_.data() + static_cast<size_t>(l + 1) * m_ * kRows,
                         rs_.data(), slots_, slot);
        levels_[l + 1] = {child, 0, d, prev, slot, z, side == 0, false};
        if (prev < 0) active_.push_back(d);
        where_[d] = ++l;
        directions(l);
        continue;
      }
      if (l == 0) break;
      where_[L.feature] = L.prev;
      if (L.prev < 0) {
        active_.pop_back();
      } else {  // the outer element's r back in its slot
        const double* r = r_.data() + static_cast<size_t>(L.prev) * m_ * kRows;
        for (int32_t q = 0; q < m; ++q)
          for (int j = 0; j < R; ++j) rs_[(static_cast<size_t>(q) * slots_ + L.slot) * R + j] = r[q * R + j];
      }
      leave(l - 1, L.feature, L.z, O(l), L.prev, K(l), false, L.left);
      --l;
    }
    // Each pair's two orders summed, half to each.
    for (int64_t a = 0; a < n_local; ++a)
      for (int64_t b = a + 1; b < n_local; ++b)
        for (int32_t v = 0; v < nv; ++v) {
          double *ab = out + ((a * n_local + b) * nv + v) * R, *ba = out + ((b * n_local + a) * nv + v) * R;
          for (int r = 0; r < R; ++r) ab[r] = ba[r] = (ab[r] + ba[r]) / 2.0;
        }
  }

  int32_t m_, slots_;
  std::vector<Level> levels_;         // the path
  std::vector<double> o_, row_left_;  // per level and row: its element's o (a leaf edge's in the last level's); 1 where the row goes left
  std::vector<double> p_, r_;         // per level, rule node and row: P(t), r(t) of the level's element
  std::vector<double> inv_;           // per level and rule node: 1 / (t + z s), formed when first needed
  std::vector<double> k_;             // per level, rule node, value and row: K(t)
  std::vector<double> a_;             // per rule node, value and row: the terms of the element being left
  std::vector<double> sum_;           // per value and row: their sums over the rule's nodes
  std::vector<double> rs_;            // per rule node, active slot and row: r of the feature's current element
  std::vector<double> dots_;          // per value, active slot and row: sum_q a_ r
  std::vector<int32_t> where_;        // per local feature: the level of its element on the path, or -1
  std::vector<int32_t> active_;       // the path's distinct features, by slot
};

}  // namespace pyinterp::shap_parts
