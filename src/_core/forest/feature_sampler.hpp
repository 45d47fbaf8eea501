// Draws candidate features at a node without replacement. Uniform weights use a partial
// Fisher-Yates shuffle (O(1) per draw, its swaps undone when the node is done); general weights use
// a sum tree (O(log p) per draw, the drawn leaves restored when the node is done). So a node never
// costs O(p), and every node starts from the same state: its draws depend on its stream alone.
//
// The sum tree holds the weights as 64-bit fixed-point integers: integer sums are exact, so a drawn
// weight is taken out of its path and put back by subtraction and addition alone, and a uniform
// integer below the total always lands on a positive leaf -- the descent needs no guard and no
// branch. Its nodes have 8 children, whose sums fill one 64-byte line: a draw reads log8(p) lines
// (3 at p <= 512), not log2(p), and the tree is cold by then (the split search between draws
// evicts it). The largest weight gets 2^(62 - 3 levels) units (2^53 at p <= 512, 2^41 at p <=
// 2^21): the total stays below 2^62, each weight keeps about as many bits relative to the largest,
// and a positive weight below one unit is given one.
#pragma once
#include <cstdint>
#include <vector>

#include "../common/rng.hpp"

namespace pyinterp {

class FeatureSampler {
 public:
  // weights empty: uniform over all n_features. Otherwise one non-negative weight per feature;
  // zero-weight features are never drawn. Nor are the features of `excluded` (ascending).
  FeatureSampler(int64_t n_features, const std::vector<double>& weights, const std::vector<int64_t>& excluded = {});

  // Number of features that can be drawn at all (positive weight).
  int64_t n_drawable() const { return n_drawable_; }
  // Next feature of the current node, or -1 once every drawable feature was drawn.
  int64_t next(Rng& rng);
  // Ends the node: all features become drawable again, in the state the sampler was made in.
  void reset();

 private:
  int64_t draw_weighted(Rng& rng);
  void add_to_path(int64_t feature, uint64_t units);
  void take_from_path(int64_t feature, uint64_t units);

  int64_t n_drawable_ = 0;
  int64_t n_drawn_ = 0;
  // Uniform mode: the features not drawn yet from pool_[n_drawn_] on (ascending before a node's
  // draws); draw k swapped pool_[k] with pool_[drawn_[k]].
  std::vector<int32_t> pool_;
  // Weighted mode: an 8-ary sum tree, nodes numbered breadth first (node i's children 8i+1..8i+8),
  // the first `internal_` nodes internal and node internal_ + j feature j's leaf; sums_[8i + c] is
  // the mass below node i's child c, total_ the root's. units_[j] is feature j's weight in fixed point.
  bool weighted_ = false;
  int64_t internal_ = 0;
  int levels_ = 0;
  uint64_t total_ = 0;
  std::vector<uint64_t> sums_;
  std::vector<uint64_t> units_;
  std::vector<int32_t> drawn_;  // the features drawn (weighted) or the swaps' positions (uniform)
};

}  // namespace pyinterp
