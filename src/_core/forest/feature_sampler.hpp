// Draws candidate features at a node without replacement. Uniform weights use a persistent partial
// Fisher-Yates shuffle (O(1) per draw); general weights use a sum tree (O(log p) per draw, and the
// drawn leaves are restored when the node is done), so a node never costs O(p).
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
  void set_leaf(int64_t leaf, double value);

  int64_t n_drawable_ = 0;
  int64_t n_drawn_ = 0;
  // Uniform mode.
  std::vector<int32_t> pool_;
  // Weighted mode: heap-ordered sum tree with `leaves_` leaves (a power of two), node 1 the root.
  bool weighted_ = false;
  int64_t leaves_ = 0;
  std::vector<double> tree_;
  std::vector<double> weights_;
  std::vector<int32_t> drawn_;
};

}  // namespace pyinterp
