#include "feature_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pyinterp {

FeatureSampler::FeatureSampler(int64_t n_features, const std::vector<double>& weights,
                               const std::vector<int64_t>& excluded) {
  std::vector<uint8_t> out(excluded.empty() ? 0 : n_features, 0);
  for (int64_t j : excluded) {
    if (j < 0 || j >= n_features) throw std::invalid_argument("an excluded feature is out of range");
    out[j] = 1;
  }
  if (weights.empty()) {
    pool_.reserve(n_features - excluded.size());
    for (int64_t j = 0; j < n_features; ++j)
      if (out.empty() || !out[j]) pool_.push_back(static_cast<int32_t>(j));
    n_drawable_ = static_cast<int64_t>(pool_.size());
    return;
  }
  if (static_cast<int64_t>(weights.size()) != n_features)
    throw std::invalid_argument("feature_weights must have one entry per feature");
  weighted_ = true;
  int64_t leaves = 8;
  for (levels_ = 1; leaves < n_features; leaves *= 8) ++levels_;
  internal_ = (leaves - 1) / 7;
  double largest = 0.0;
  for (int64_t j = 0; j < n_features; ++j) {
    const double w = weights[j];
    if (!(w >= 0.0) || !std::isfinite(w)) throw std::invalid_argument("feature_weights must be finite and non-negative");
    if (out.empty() || !out[j]) largest = std::max(largest, w);
  }
  units_.resize(n_features);
  // Only the entries up to the last feature's leaf and its 7 right neighbours are read: a descent
  // enters only nodes with mass, and the last such node of a level holds the last feature's
  // ancestor (8 * internal_ entries would be up to 9p when p is just above a power of 8).
  sums_.assign(internal_ + n_features + 7, 0);
  const int unit_bits = 62 - 3 * levels_;  // the largest weight's units: 2^unit_bits
  for (int64_t j = 0; j < n_features; ++j) {
    const double w = out.empty() || !out[j] ? weights[j] : 0.0;
    units_[j] = w > 0.0 ? std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(std::ldexp(w / largest, unit_bits)))) : 0;
    add_to_path(j, units_[j]);
    n_drawable_ += w > 0.0;
  }
}

int64_t FeatureSampler::next(Rng& rng) {
  if (n_drawn_ >= n_drawable_) return -1;
  if (weighted_) return draw_weighted(rng);
  const int64_t j = n_drawn_ + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n_drawable_ - n_drawn_)));
  std::swap(pool_[n_drawn_], pool_[j]);
  drawn_.push_back(static_cast<int32_t>(j));
  return pool_[n_drawn_++];
}

int64_t FeatureSampler::draw_weighted(Rng& rng) {
  uint64_t u = rng.below(total_);
  const uint64_t* sums = sums_.data();
  int64_t node = 0;
  for (int level = 0; level < levels_; ++level) {
    // The child whose mass holds u: the number of children whose running sum is <= u. u stays below
    // the mass of the node entered, so a child without mass is never the one.
    const uint64_t* child = sums + 8 * node;
    uint64_t running = 0, before = 0;
    int64_t c = 0;
    for (int k = 0; k < 8; ++k) {
      running += child[k];
      const bool past = running <= u;
      c += past;
      before = past ? running : before;
    }
    u -= before;
    node = 8 * node + 1 + c;
  }
  const int64_t feature = node - internal_;
  take_from_path(feature, units_[feature]);
  drawn_.push_back(static_cast<int32_t>(feature));
  ++n_drawn_;
  return feature;
}

// sums_[node - 1] is the mass below `node` (node > 0): child (node - 1) % 8 of (node - 1) / 8.
void FeatureSampler::take_from_path(int64_t feature, uint64_t units) {
  total_ -= units;
  for (int64_t node = internal_ + feature; node > 0; node = (node - 1) / 8) sums_[node - 1] -= units;
}

void FeatureSampler::add_to_path(int64_t feature, uint64_t units) {
  total_ += units;
  for (int64_t node = internal_ + feature; node > 0; node = (node - 1) / 8) sums_[node - 1] += units;
}

void FeatureSampler::reset() {
  if (weighted_) {
    for (int32_t f : drawn_) add_to_path(f, units_[f]);
  } else {
    for (int64_t k = n_drawn_ - 1; k >= 0; --k) std::swap(pool_[k], pool_[drawn_[k]]);
  }
  drawn_.clear();
  n_drawn_ = 0;
}

}  // namespace pyinterp
