#include "blocked_search.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace pyinterp {

namespace {

MatrixView::Layout layout_of(const ColumnSource& s) {
  if (s.packed()) return MatrixView::Layout::packed;
  return s.sparse() ? MatrixView::Layout::csc : MatrixView::Layout::dense;
}

}  // namespace

ColumnRangeSource::ColumnRangeSource(const ColumnSource& whole, int64_t first, int64_t n_cols)
    : ColumnSource(whole.n_rows(), n_cols, whole.type(), layout_of(whole)), whole_(whole), first_(first) {}

int64_t ColumnRangeSource::panel_end(int64_t c0, int n_threads) const {
  return std::min(whole_.panel_end(first_ + c0, n_threads) - first_, n_cols());
}

MatrixView ColumnRangeSource::read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const {
  return whole_.read(first_ + c0, first_ + c1, buffer);
}

BlockedSplitSearch::BlockedSplitSearch(const TrainingSet& data, const ForestParams& params)
    : params_(params), sampler_(data.codes->n_cols(), data.feature_weights, params.always_features) {
  const int64_t p = data.codes->n_cols();
  const int64_t k = std::min<int64_t>(params.column_blocks, p);
  if (data.source == nullptr || data.source->csr_rows() != nullptr)
    throw std::invalid_argument("column_blocks needs X dense, CSC or packed (not CSR)");
  owner_.resize(p);
  blocks_.resize(k);
  for (int64_t b = 0; b < k; ++b) {
    Block& block = blocks_[b];
    block.first = p * b / k;
    const int64_t end = p * (b + 1) / k, width = end - block.first;
    std::fill(owner_.begin() + block.first, owner_.begin() + end, static_cast<int32_t>(b));
    block.source = std::make_unique<ColumnRangeSource>(*data.source, block.first, width);
    block.codes = std::make_unique<ColumnCodes>(*block.source, std::max(params.n_threads, 1));
    block.data = data;
    block.data.codes = block.codes.get();
    block.data.source = block.source.get();
    block.data.feature_weights.clear();  // the blocks draw nothing
    if (!data.category_of_code.empty())
      block.data.category_of_code.assign(data.category_of_code.begin() + block.first,
                                         data.category_of_code.begin() + end);
    block.params = params;
    block.params.always_features.clear();
    block.params.categorical_features.clear();
    for (int64_t j : params.categorical_features)
      if (j >= block.first && j < end) block.params.categorical_features.push_back(j - block.first);
    if (!params.monotonic_cst.empty())
      block.params.monotonic_cst.assign(params.monotonic_cst.begin() + block.first,
                                        params.monotonic_cst.begin() + end);
    block.search = std::make_unique<ExactSplitSearch>(block.data, block.params);
  }
}

void BlockedSplitSearch::begin_tree(const double* w, double min_weight_leaf) {
  for (Block& block : blocks_) block.search->begin_tree(w, min_weight_leaf);
}

double BlockedSplitSearch::answer(const SearchNode& node, const std::vector<int64_t>& features) {
  const size_t count = features.size();
  splits_.assign(count, Split{kNoSplit});
  varies_.assign(count, 0);
  double reachable = std::numeric_limits<double>::infinity();
  for (size_t b = 0; b < blocks_.size(); ++b) {
    positions_.clear();
    local_.clear();
    for (size_t k = 0; k < count; ++k)
      if (owner_[features[k]] == static_cast<int32_t>(b)) {
        positions_.push_back(static_cast<int64_t>(k));
        local_.push_back(features[k] - blocks_[b].first);
      }
    if (positions_.empty()) continue;
    block_splits_.resize(local_.size());
    block_varies_.resize(local_.size());
    reachable = blocks_[b].search->evaluate_features(node, local_.data(), static_cast<int64_t>(local_.size()),
                                                     block_splits_.data(), block_varies_.data());
    for (size_t k = 0; k < positions_.size(); ++k) {
      Split& s = splits_[positions_[k]] = block_splits_[k];
      if (s.feature >= 0) s.feature += blocks_[b].first;
      varies_[positions_[k]] = block_varies_[k];
    }
  }
  return reachable;
}

Split BlockedSplitSearch::find(const SearchNode& node) {
  Rng rng(params_.seed, node.stream);
  SearchNode asked = node;
  asked.node = asked.depth = -1;  // the blocks keep no record of ancestors
  CandidatePick pick{params_.max_features, std::numeric_limits<double>::infinity(), node.m == 2};
  // Offers the batch's answers in order; true when the search is over.
  auto offer = [&](bool drawn) {
    pick.reachable = answer(asked, batch_);
    for (size_t k = 0; k < batch_.size(); ++k)
      if (pick.offer(varies_[k] != 0, splits_[k], drawn)) return true;
    return false;
  };
  batch_ = params_.always_features;
  bool done = !batch_.empty() && offer(false);
  while (!done) {
    batch_.clear();
    for (int64_t need = params_.max_features - pick.n_varying; need > 0; --need) {
      const int64_t f = sampler_.next(rng);
      if (f < 0) break;
      batch_.push_back(f);
    }
    if (batch_.empty()) break;
    done = offer(true);
  }
  sampler_.reset();
  return pick.best;
}

}  // namespace pyinterp
