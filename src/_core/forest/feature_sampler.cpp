#include "feature_sampler.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace pyinterp {

FeatureSampler::FeatureSampler(int64_t n_features, const std::vector<double>& weights) {
  if (weights.empty()) {
    pool_.resize(n_features);
    std::iota(pool_.begin(), pool_.end(), 0);
    n_drawable_ = n_features;
    return;
  }
  if (static_cast<int64_t>(weights.size()) != n_features)
    throw std::invalid_argument("feature_weights must have one entry per feature");
  weighted_ = true;
  weights_ = weights;
  leaves_ = 1;
  while (leaves_ < n_features) leaves_ *= 2;
  tree_.assign(2 * leaves_, 0.0);
  for (int64_t j = 0; j < n_features; ++j) {
    if (!(weights[j] >= 0.0) || !std::isfinite(weights[j]))
      throw std::invalid_argument("feature_weights must be finite and non-negative");
    tree_[leaves_ + j] = weights[j];
    n_drawable_ += weights[j] > 0.0;
  }
  for (int64_t k = leaves_ - 1; k >= 1; --k) tree_[k] = tree_[2 * k] + tree_[2 * k + 1];
}

int64_t FeatureSampler::next(Rng& rng) {
  if (n_drawn_ >= n_drawable_) return -1;
  if (weighted_) return draw_weighted(rng);
  const int64_t j = n_drawn_ + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n_drawable_ - n_drawn_)));
  std::swap(pool_[n_drawn_], pool_[j]);
  return pool_[n_drawn_++];
}

int64_t FeatureSampler::draw_weighted(Rng& rng) {
  double u = rng.uniform() * tree_[1];
  int64_t k = 1;
  while (k < leaves_) {
    const double left = tree_[2 * k];
    const double right = tree_[2 * k + 1];
    // Rounding can leave u at or past the last positive mass: never descend into an empty subtree.
    if (right <= 0.0 || (left > 0.0 && u < left)) {
      k = 2 * k;
    } else {
      u -= left;
      k = 2 * k + 1;
    }
  }
  const int64_t feature = k - leaves_;
  set_leaf(feature, 0.0);
  drawn_.push_back(static_cast<int32_t>(feature));
  ++n_drawn_;
  return feature;
}

void FeatureSampler::set_leaf(int64_t leaf, double value) {
  int64_t k = leaves_ + leaf;
  tree_[k] = value;
  // Recomputing parents as sums of children (never by adding a difference) makes a restore exact.
  for (k /= 2; k >= 1; k /= 2) tree_[k] = tree_[2 * k] + tree_[2 * k + 1];
}

void FeatureSampler::reset() {
  if (weighted_) {
    for (int32_t f : drawn_) set_leaf(f, weights_[f]);
    drawn_.clear();
  }
  n_drawn_ = 0;
}

void FeatureSampler::begin_tree() {
  reset();
  if (!weighted_) std::iota(pool_.begin(), pool_.end(), 0);
}

}  // namespace pyinterp
