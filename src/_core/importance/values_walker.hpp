// Path-dependent TreeSHAP and Banzhaf values of one tree for a few rows at once (shap.cpp).
//
// The identity (behind Linear TreeShap, Yu et al. 2022): a leaf with value v whose path has distinct
// features 1..d, feature j with the product z_j of its splits' cover shares and the product o_j
// (0 or 1) of the row's agreement with them, adds to feature i
//   v (o_i - z_i) sum_k k! (d-1-k)! / d! e_k(others) = v (o_i - z_i) int_0^1 prod_{j != i} f_j(t) dt,
// f_j(t) = o_j t + z_j (1 - t), because k! (d-1-k)! / d! = int t^k (1-t)^(d-1-k) dt. The integrand
// is a polynomial of degree d - 1, so a Gauss-Legendre rule of ceil(d / 2) nodes gives it exactly;
// its terms are products of factors in [0, 1] with positive weights: no cancellation. Banzhaf
// values are the integrand at t = 1/2 (a one-node rule).
//
// The walk keeps, at the rule's nodes, P(t) = prod_j f_j(t) down the path and, on the way up, K_n(t),
// the sum over the leaves below node n of v times the edge factors below n (the leaves' sum of v P
// is P_n K_n). An edge into n whose feature is new on the path has factor f_n, and the leaves below
// add to its feature (o - z) sum_q w_q P_n K_n / f_n = (o - z) sum_q w_q P_parent K_n: no division.
// Where the feature split above already (element z', o', f'), the leaves below carry the merged
// element: the edge's factor is e = f_n / f', and with the outer element's term for them taken back
// the feature gains sum_q w_q P_parent K_n ((o - z) - (o' - z') e) / f', which is zero for o' = 0
// (then e = z / z'); 1 / f' is formed once per outer element. Terms are summed per feature and
// rule node and weighted once per walk: no reduction per node. O(nodes x m) per tree and row against
// Algorithm 2's O(nodes x D + leaves x D^2).
//
// Rows walk a tree together, in the tree's order (left child first), up to kRows at a time: the
// tree's structure, covers and merges are the same for all of them, only o differs, so a node's
// bookkeeping is paid once for the rows and its arithmetic runs over lanes (rule node q, row r),
// lane q R + r for R rows. A row's values come from the same operations in the same order whatever
// rows walk with it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../forest/tree.hpp"
#include "shap_parts.hpp"

namespace pyinterp::shap_parts {

namespace lanes {

// The loops over lanes, compiled also for AVX2 where the compiler can (GCC on x86-64 Linux) and
// chosen when the CPU has it. No FMA: the two give the same bits.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define PYINTERP_LANES __attribute__((target_clones("avx2", "default")))
#else
#define PYINTERP_LANES
#endif

// A row's lanes at one rule node are adjacent; the kernels work on up to 4 rows at once, as GCC and
// Clang vectors (element-wise IEEE arithmetic: the bits of the scalar loop).
template <int W>
struct VecOf {
  typedef double type __attribute__((vector_size(8 * W), aligned(8), may_alias));
};
template <int R>
constexpr int kWidth = R < 4 ? R : 4;
template <int R>
using Vec = typename VecOf<kWidth<R>>::type;
template <int R>
inline Vec<R>& at(double* a) {
  return *reinterpret_cast<Vec<R>*>(a);
}
template <int R>
inline const Vec<R>& at(const double* a) {
  return *reinterpret_cast<const Vec<R>*>(a);
}

// An element at a node, for R rows: its z, and for a merged one (inv non-null) the outer element's
// z', o' per row and 1 / f' per rule node, and z / z' (0 when z' = 0: then P = 0 below it).
struct Element {
  const double* o;
  double z;
  const double* inv = nullptr;
  const double* op = nullptr;
  double zp = 1.0, ratio = 0.0;
};

// P of the child: p times the element's factor, o t + z s for a new element, f / f' for a merged
// one with o' = 1 and z / z' with o' = 0. Lanes q R + r.
template <int R>
PYINTERP_LANES void down(int32_t m, const double* __restrict__ t, const double* __restrict__ s, Element el,
                         const double* __restrict__ p, double* __restrict__ pc) {
  for (int32_t q = 0; q < m; ++q)
    for (int h = 0; h < R; h += kWidth<R>) {
      const int64_t i = q * R + h;
      const Vec<R> f = at<R>(el.o + h) * t[q] + el.z * s[q];
      if (el.inv == nullptr) {
        at<R>(pc + i) = at<R>(p + i) * f;
      } else {
        const Vec<R> op = at<R>(el.op + h), hot = f * el.inv[q];
        at<R>(pc + i) = at<R>(p + i) * (op * hot + (1.0 - op) * el.ratio);
      }
    }
}

// An element's share of the parent's K and its term per row and value. K's lanes are (q nv + v) R
// + r; k is the child's K, or with `leaf` the leaf's values (one per value for all lanes). kp = (or
// with `first` +=) e k, and sum (lanes v R + r) = sum_q w_q P_parent k c, c = 1 for a new element
// (whose o - z the caller applies), ((o - z) - (1 - z') f / f') / f' for a merged one with o' = 1,
// 0 with o' = 0. With Terms, the summands w_q P_parent k c also go to terms (lanes as K's).
template <int R, int NV, bool Merged, bool Leaf, bool First, bool Terms = false>
PYINTERP_LANES void up(int32_t m, int32_t nv, const double* __restrict__ t, const double* __restrict__ s,
                       const double* __restrict__ w, Element el, const double* __restrict__ p,
                       const double* __restrict__ k, double* __restrict__ kp, double* __restrict__ sum,
                       double* __restrict__ terms = nullptr) {
  const int32_t n_v = NV > 0 ? NV : nv;
  std::fill_n(sum, R * n_v, 0.0);
  for (int32_t q = 0; q < m; ++q)
    for (int h = 0; h < R; h += kWidth<R>) {
      const Vec<R> o = at<R>(el.o + h), f = o * t[q] + el.z * s[q];
      Vec<R> e = f, wpc = w[q] * at<R>(p + q * R + h);
      if constexpr (Merged) {
        const Vec<R> op = at<R>(el.op + h), hot = f * el.inv[q];
        e = op * hot + (1.0 - op) * el.ratio;
        wpc = wpc * (op * ((o - el.z) - (1.0 - el.zp) * hot) * el.inv[q]);
      }
      for (int32_t v = 0; v < n_v; ++v) {
        const int64_t i = (q * n_v + v) * int64_t{R} + h;
        Vec<R> kv;
        if constexpr (Leaf) {
          kv = k[v] - Vec<R>{};  // broadcast (x - 0 is x, signed zeros included)
        } else {
          kv = at<R>(k + i);
        }
        const Vec<R> term = wpc * kv;
        at<R>(sum + v * R + h) += term;
        if constexpr (Terms) at<R>(terms + i) = term;
        if constexpr (First) {
          at<R>(kp + i) = e * kv;
        } else {
          at<R>(kp + i) += e * kv;
        }
      }
    }
}

// fn(merged, leaf, first), each a std::bool_constant: up's template arguments from run-time flags.
template <class Fn>
void with_kind(bool merged, bool leaf, bool first, Fn fn) {
  const auto third = [&](auto m, auto l) { first ? fn(m, l, std::true_type()) : fn(m, l, std::false_type()); };
  const auto second = [&](auto m) { leaf ? third(m, std::true_type()) : third(m, std::false_type()); };
  merged ? second(std::true_type()) : second(std::false_type());
}

}  // namespace lanes

// fn(width, done) for walks of 8, then 4, 2 and 1 rows (width a std::integral_constant) covering
// rows [0, n) in order, `done` the first row of each.
template <class Fn>
void in_walks(int32_t n, Fn fn) {
  int32_t done = 0;
  const auto run = [&](auto width) {
    for (; n - done >= decltype(width)::value; done += decltype(width)::value) fn(width, done);
  };
  run(std::integral_constant<int, 8>());
  run(std::integral_constant<int, 4>());
  run(std::integral_constant<int, 2>());
  run(std::integral_constant<int, 1>());
}

class ValuesWalker {
 public:
  static constexpr int32_t kRows = 8;

  ValuesWalker(int32_t max_depth, int32_t max_m, int32_t n_values, int32_t max_features)
      : stride_(static_cast<int64_t>(max_m) * kRows), max_m_(max_m), levels_(max_depth + 1),
        o_((levels_.size() + 1) * kRows), left_(levels_.size() * kRows), p_(levels_.size() * stride_),
        inv_(levels_.size() * max_m), k_(p_.size() * n_values), sum_(kRows * n_values),
        out_(static_cast<size_t>(max_features) * kRows * n_values), stamp_(max_features, 0),
        where_(max_features, -1) {}

  // Adds the tree's values times `scale` for rows[0..n) to phi + r * phi_stride (local features x
  // n_values), kRows rows a walk and the rest in walks of 4, 2 and 1.
  template <class Row>
  void walk(const Tree& tree, const TreeInfo& info, const Quadrature& rule, const Row* rows, int32_t n, double scale,
            double* phi, int64_t phi_stride) {
    in_walks(n, [&](auto width, int32_t done) {
      constexpr int R = decltype(width)::value;
      if (tree.n_values == 1) {
        walk<R, 1>(tree, info, rule, rows + done, scale, phi + done * phi_stride, phi_stride);
      } else {
        walk<R, 0>(tree, info, rule, rows + done, scale, phi + done * phi_stride, phi_stride);
      }
    });
  }

 private:
  struct Level {
    int32_t node, side, feature, prev;  // side: the child to open next (0 left, 1 right, 2 done)
    double z;
    bool left;       // the node is its parent's left child
    bool inv_ready;  // inv_ holds 1 / (t + z s) for its element
  };

  // R rows; NV: the number of values when known at compile time (regression), else 0.
  template <int R, int NV, class Row>
  void walk(const Tree& tree, const TreeInfo& info, const Quadrature& rule, const Row* rows, double scale, double* phi,
            int64_t phi_stride) {
    const int32_t nv = NV > 0 ? NV : tree.n_values;
    const auto m = static_cast<int32_t>(rule.w.size());
    const double *t = rule.t.data(), *s = rule.s.data(), *w = rule.w.data();
    const auto P = [&](int32_t l) { return p_.data() + static_cast<size_t>(l) * stride_; };
    const auto K = [&](int32_t l) { return k_.data() + static_cast<size_t>(l) * stride_ * nv; };
    const auto o_of = [&](int32_t l) { return o_.data() + static_cast<size_t>(l) * kRows; };
    const auto directions = [&](int32_t l) {  // per row, 1 where it goes left at level l's node
      const int32_t node = levels_[l].node, f = tree.feature[node];
      double* left = left_.data() + static_cast<size_t>(l) * kRows;
      for (int r = 0; r < R; ++r) left[r] = tree.child_of(node, rows[r](f)) == tree.left[node];
    };
    // The element level l's node adds for the edge into `child` (o in level `to`'s row slots).
    const auto element = [&](int32_t l, int side, int32_t to, double fraction) {
      const int32_t prev = where_[info.local[levels_[l].node]];
      const double* left = left_.data() + static_cast<size_t>(l) * kRows;
      double* o = o_of(to);
      for (int r = 0; r < R; ++r) o[r] = side == 0 ? left[r] : 1.0 - left[r];
      if (prev < 0) return lanes::Element{o, fraction};
      Level& outer = levels_[prev];
      double* inv = inv_.data() + static_cast<size_t>(prev) * max_m_;
      if (!outer.inv_ready) {  // 1 / f' for o' = 1, once per outer element
        for (int32_t q = 0; q < m; ++q) inv[q] = 1.0 / (t[q] + outer.z * s[q]);
        outer.inv_ready = true;
      }
      const double* op = o_of(prev);
      for (int r = 0; r < R; ++r) o[r] *= op[r];
      const double z = outer.z * fraction;
      return lanes::Element{o, z, inv, op, outer.z, outer.z > 0.0 ? z / outer.z : 0.0};
    };
    // lanes::up for the element's kind; k: the child's K, or with `leaf` the leaf's values.
    const auto up = [&](const lanes::Element& el, const double* p, const double* k, bool leaf, bool first, double* kp) {
      lanes::with_kind(el.inv != nullptr, leaf, first, [&](auto merged, auto on_leaf, auto is_first) {
        lanes::up<R, NV, decltype(merged)::value, decltype(on_leaf)::value, decltype(is_first)::value>(
            m, nv, t, s, w, el, p, k, kp, sum_.data());
      });
    };
    // Adds a term, sum_ per row and value times (o - z) for a new element, to the feature's row sums.
    const auto add = [&](int32_t d, const lanes::Element& el) {
      double* out = out_.data() + static_cast<size_t>(d) * kRows * nv;
      if (stamp_[d] != walk_) {
        stamp_[d] = walk_;
        touched_.push_back(d);
        std::fill_n(out, R * nv, 0.0);
      }
      for (int r = 0; r < R; ++r) {
        const double c = el.inv == nullptr ? el.o[r] - el.z : 1.0;
        for (int32_t v = 0; v < nv; ++v) out[r * nv + v] += c * sum_[v * R + r];
      }
    };
    ++walk_;
    touched_.clear();
    if (tree.is_leaf(0)) return;
    levels_[0] = {0, 0, -1, -1, 1.0, false, false};
    std::fill_n(P(0), m * R, scale);
    directions(0);
    const auto spare = static_cast<int32_t>(levels_.size());  // o's slot for a leaf's element
    int32_t l = 0;
    while (true) {
      Level& L = levels_[l];
      if (L.side < 2) {
        const int side = L.side++;
        const int32_t child = side == 0 ? tree.left[L.node] : tree.right[L.node], d = info.local[L.node];
        const bool leaf = tree.is_leaf(child);
        const lanes::Element el = element(l, side, leaf ? spare : l + 1, info.fraction[child]);
        if (leaf) {
          up(el, P(l), tree.value.data() + static_cast<int64_t>(child) * nv, true, side == 0, K(l));
          add(d, el);
          continue;
        }
        levels_[l + 1] = {child, 0, d, where_[d], el.z, side == 0, false};
        lanes::down<R>(m, t, s, el, P(l), P(l + 1));
        where_[d] = ++l;
        directions(l);
        continue;
      }
      if (l == 0) break;
      where_[L.feature] = L.prev;
      lanes::Element el{o_of(l), L.z};
      if (L.prev >= 0) {
        const Level& outer = levels_[L.prev];
        el = {o_of(l), L.z, inv_.data() + static_cast<size_t>(L.prev) * max_m_, o_of(L.prev), outer.z,
              outer.z > 0.0 ? L.z / outer.z : 0.0};
      }
      up(el, P(l - 1), K(l), false, L.left, K(l - 1));
      add(L.feature, el);
      --l;
    }
    for (const int32_t d : touched_) {
      const double* out = out_.data() + static_cast<size_t>(d) * kRows * nv;
      for (int r = 0; r < R; ++r)
        for (int32_t v = 0; v < nv; ++v) phi[r * phi_stride + static_cast<int64_t>(d) * nv + v] += out[r * nv + v];
    }
  }

  int64_t stride_;  // lanes a level's arrays hold: max_m x kRows
  int32_t max_m_;
  std::vector<Level> levels_;     // the path
  std::vector<double> o_, left_;  // per level and row: its element's o (a leaf's in a last slot); 1 where the row goes left
  std::vector<double> p_;         // per level and lane: P(t)
  std::vector<double> inv_;       // per level and rule node: 1 / (t + z s), formed when first needed
  std::vector<double> k_;         // per level, rule node, value and row: K(t)
  std::vector<double> sum_;       // per value and row: an element's term
  std::vector<double> out_;       // per local feature, row and value: the walk's values
  std::vector<int64_t> stamp_;    // per local feature: the walk that last zeroed its values
  std::vector<int32_t> touched_;
  std::vector<int32_t> where_;  // per local feature: the level of its element on the path, or -1
  int64_t walk_ = 0;
};

}  // namespace pyinterp::shap_parts
