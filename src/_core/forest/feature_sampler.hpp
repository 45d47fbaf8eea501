// Draws candidate features at a node without replacement. Uniform weights use a persistent partial
// Fisher-Yates shuffle (O(1) per draw); general weights use a sum tree (O(log p) per draw, and the
// drawn leaves are restored when the node is done), so a node never costs O(p).
//
// The sum tree holds the weights as 64-bit fixed-point integers: integer sums are exact, so a drawn
// weight is taken out of its path and put back by subtraction and addition alone, and a uniform
// integer below the root always lands on a positive leaf -- the descent needs no guard and no branch
// (a draw costs ~1/4 of the former double tree's, whose restores recomputed every path from children
// and whose descent mispredicted half its levels). The largest weight gets 2^(62 - log2 leaves)
// units (2^53 at p <= 512, 2^42 at p <= 10^6): the total stays below 2^62, each weight keeps about
// as many bits relative to the largest, and a positive weight below one unit is given one.
#pragma once
#include <cstdint>
#include <vector>

#include "../common/rng.hpp"

namespace pyinterp {

class FeatureSampler {
 public:
  // weights empty: uniform over all n_features. Otherwise one non-negative weight per feature;
  // zero-weight features are never drawn.
  FeatureSampler(int64_t n_features, const std::vector<double>& weights);

  // Number of features that can be drawn at all (positive weight).
  int64_t n_drawable() const { return n_drawable_; }
  // Next feature of the current node, or -1 once every drawable feature was drawn.
  int64_t next(Rng& rng);
  // Ends the node: all features become drawable again.
  void reset();
  // Starts a tree: the draws of a tree depend only on its own stream, not on earlier trees.
  void begin_tree();

 private:
  int64_t draw_weighted(Rng& rng);
  void add_to_path(int64_t feature, uint64_t units);
  void take_from_path(int64_t feature, uint64_t units);

  int64_t n_drawable_ = 0;
  int64_t n_drawn_ = 0;
  // Uniform mode.
  std::vector<int32_t> pool_;
  // Weighted mode: heap-ordered sum tree with `leaves_` leaves (a power of two), node 1 the root,
  // node k's children 2k and 2k + 1; units_[j] is feature j's weight in fixed point.
  bool weighted_ = false;
  int64_t leaves_ = 0;
  std::vector<uint64_t> tree_;
  std::vector<uint64_t> units_;
  std::vector<int32_t> drawn_;
};

}  // namespace pyinterp
