#include "feature_sampler.hpp"

#include <algorithm>
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
  int bits = 0;
  for (leaves_ = 1; leaves_ < n_features; leaves_ *= 2) ++bits;
  double largest = 0.0;
  for (double w : weights) {
    if (!(w >= 0.0) || !std::isfinite(w)) throw std::invalid_argument("feature_weights must be finite and non-negative");
    largest = std::max(largest, w);
  }
  units_.resize(n_features);
  tree_.assign(2 * leaves_, 0);
  for (int64_t j = 0; j < n_features; ++j) {
    const double w = weights[j];
    units_[j] = w > 0.0 ? std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(std::ldexp(w / largest, 62 - bits)))) : 0;
    tree_[leaves_ + j] = units_[j];
    n_drawable_ += w > 0.0;
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
  uint64_t u = rng.below(tree_[1]);
  const uint64_t* tree = tree_.data();
  int64_t k = 1;
  while (k < leaves_) {  // u < tree[k] throughout, so the subtree entered has mass above u
    const uint64_t left = tree[2 * k];
    const bool right = u >= left;
    u -= right ? left : 0;
    k = 2 * k + right;
  }
  const int64_t feature = k - leaves_;
  take_from_path(feature, units_[feature]);
  drawn_.push_back(static_cast<int32_t>(feature));
  ++n_drawn_;
  return feature;
}

void FeatureSampler::take_from_path(int64_t feature, uint64_t units) {
  for (int64_t k = leaves_ + feature; k >= 1; k /= 2) tree_[k] -= units;
}

void FeatureSampler::add_to_path(int64_t feature, uint64_t units) {
  for (int64_t k = leaves_ + feature; k >= 1; k /= 2) tree_[k] += units;
}

void FeatureSampler::reset() {
  if (weighted_) {
    for (int32_t f : drawn_) add_to_path(f, units_[f]);
    drawn_.clear();
  }
  n_drawn_ = 0;
}

void FeatureSampler::begin_tree() {
  reset();
  if (!weighted_) std::iota(pool_.begin(), pool_.end(), 0);
}

}  // namespace pyinterp
