#include "column_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "../common/job_control.hpp"
#include "forest.hpp"
#include "split_rules.hpp"

namespace pyinterp {

namespace {

MatrixView::Layout layout_of(const ColumnSource& s) {
  if (s.packed()) return MatrixView::Layout::packed;
  return s.sparse() ? MatrixView::Layout::csc : MatrixView::Layout::dense;
}

// Throws unless every node's range [start[k], end[k]) holds rows within [0, n) (non-empty unless
// may_be_empty).
void check_ranges(const std::vector<int64_t>& start, const std::vector<int64_t>& end, size_t n, bool may_be_empty,
                  const char* what) {
  if (start.size() != end.size()) throw std::invalid_argument(std::string("a block's ask has ") + what + " ranges of different lengths");
  for (size_t k = 0; k < start.size(); ++k)
    if (start[k] < 0 || end[k] > static_cast<int64_t>(n) || end[k] < start[k] + (may_be_empty ? 0 : 1))
      throw std::invalid_argument(std::string("a block's ask has a node whose ") + what +
                                  " are not a range of the tree's" + (may_be_empty ? "" : " (or none)"));
}

}  // namespace

void Moves::append(const Moves& other, int64_t k, int64_t row_at, int64_t oob_at) {
  start.push_back(other.start[k]);
  end.push_back(other.end[k]);
  oob_start.push_back(other.oob_start[k]);
  oob_end.push_back(other.oob_end[k]);
  row_left.insert(row_left.end(), other.row_left.begin() + row_at,
                  other.row_left.begin() + row_at + (other.end[k] - other.start[k]));
  oob_left.insert(oob_left.end(), other.oob_left.begin() + oob_at,
                  other.oob_left.begin() + oob_at + (other.oob_end[k] - other.oob_start[k]));
}

ColumnBlocks::ColumnBlocks(std::vector<int64_t> bounds, int64_t n_rows) : bounds_(std::move(bounds)), n_rows_(n_rows) {
  if (bounds_.size() < 2 || bounds_.front() != 0)
    throw std::invalid_argument("column blocks need bounds [0, ..., n_features] of at least one block");
  for (size_t b = 1; b < bounds_.size(); ++b)
    if (bounds_[b] <= bounds_[b - 1]) throw std::invalid_argument("every column block must hold at least one column");
  if (n_rows < 1 || n_rows > std::numeric_limits<uint32_t>::max())
    throw std::invalid_argument("column blocks need between 1 and 2^32 - 1 rows");
}

int64_t ColumnBlocks::owner(int64_t j) const {
  return std::upper_bound(bounds_.begin(), bounds_.end(), j) - bounds_.begin() - 1;
}

ColumnBlock::ColumnBlock(std::shared_ptr<const ColumnSource> source, const FitTargets& targets,
                         const ForestParams& params, int64_t first, int64_t n_features,
                         const std::vector<double>& feature_weights)
    : source_(std::move(source)),
      first_(first),
      n_features_(n_features),
      feature_weights_(feature_weights),
      always_(params.always_features),
      fit_(targets, source_->n_rows()),
      params_(params) {
  const int64_t p = source_->n_cols(), end = first + p;
  if (end > n_features) throw std::invalid_argument("a column block reaches past the whole matrix's columns");
  if (!feature_weights.empty() && static_cast<int64_t>(feature_weights.size()) != n_features)
    throw std::invalid_argument("feature_weights must have one entry per feature");
  for (const int64_t j : always_)
    if (j < 0 || j >= n_features) throw std::invalid_argument("always_features names a column X does not have");
  if (source_->csr_rows() != nullptr)
    throw std::invalid_argument("a column block needs its columns dense, CSC or packed (not CSR)");
  codes_ = std::make_unique<ColumnCodes>(*source_, std::max(params.n_threads, 1));
  // Its own columns' settings, in its own indices; it draws nothing.
  params_.always_features.clear();
  params_.categorical_features.clear();
  for (const int64_t j : params.categorical_features)
    if (j >= first && j < end) params_.categorical_features.push_back(j - first);
  if (!params.monotonic_cst.empty()) {
    if (static_cast<int64_t>(params.monotonic_cst.size()) < end)
      throw std::invalid_argument("monotonic_cst has fewer entries than the block's columns reach");
    params_.monotonic_cst.assign(params.monotonic_cst.begin() + first, params.monotonic_cst.begin() + end);
  }
  data_.codes = codes_.get();
  data_.source = source_.get();
  data_.targets = fit_.targets;
  data_.category_of_code = categories_of_codes(*source_, *codes_, params_.categorical_features, first);
}

ColumnBlock::Slot& ColumnBlock::slot(int k, bool begin) {
  if (k < 0 || k >= kMaxSlots)
    throw std::invalid_argument("a block's slot must be in [0, " + std::to_string(kMaxSlots) + ")");
  std::lock_guard<std::mutex> lock(slots_mutex_);
  if (slots_.size() <= static_cast<size_t>(k)) slots_.resize(k + 1);
  if (!slots_[k]) {
    if (!begin) throw std::invalid_argument("a block is searched before begin_tree");
    slots_[k] = std::make_unique<Slot>();
    slots_[k]->search = std::make_unique<ExactSplitSearch>(data_, params_);
    slots_[k]->sampler = std::make_unique<FeatureSampler>(n_features_, feature_weights_, always_);
  }
  return *slots_[k];
}

void ColumnBlock::begin_tree(int k, const double* w, double min_weight_leaf, const std::vector<uint32_t>& oob) {
  for (int64_t i = 0; i < n_rows(); ++i)
    if (!(w[i] >= 0.0) || !std::isfinite(w[i])) throw std::invalid_argument("a tree's row weights must be finite and >= 0");
  for (size_t i = 0; i < oob.size(); ++i)
    if (oob[i] >= n_rows() || (i > 0 && oob[i] <= oob[i - 1]))
      throw std::invalid_argument("a tree's out-of-bag rows must be increasing rows of X");
  Slot& s = slot(k, true);
  s.w.assign(w, w + n_rows());
  s.rows.clear();
  for (int64_t i = 0; i < n_rows(); ++i)
    if (w[i] > 0.0) s.rows.push_back(static_cast<uint32_t>(i));  // as TreeBuilder::build takes them
  s.oob = oob;
  s.right.resize(n_rows());
  s.search->begin_tree(s.w.data(), min_weight_leaf);
}

void ColumnBlock::apply(Slot& s, const Moves& moves) {
  check_ranges(moves.start, moves.end, s.rows.size(), true, "rows");
  check_ranges(moves.oob_start, moves.oob_end, s.oob.size(), true, "out-of-bag rows");
  int64_t n_flags = 0, n_oob_flags = 0;
  for (int64_t k = 0; k < moves.size(); ++k) {
    n_flags += moves.end[k] - moves.start[k];
    n_oob_flags += moves.oob_end[k] - moves.oob_start[k];
  }
  if (n_flags != static_cast<int64_t>(moves.row_left.size()) || n_oob_flags != static_cast<int64_t>(moves.oob_left.size()))
    throw std::invalid_argument("a block's ask has moves with other than one side per row");
  const uint8_t* left = moves.row_left.data();
  const uint8_t* oob_left = moves.oob_left.data();
  for (int64_t k = 0; k < moves.size(); ++k) {
    stable_partition(s.rows.data(), moves.start[k], moves.end[k], s.right.data(),
                     [&](uint32_t) -> int64_t { return *left++ & 1; });
    stable_partition(s.oob.data(), moves.oob_start[k], moves.oob_end[k], s.right.data(),
                     [&](uint32_t) -> int64_t { return *oob_left++ & 1; });
  }
}

void ColumnBlock::draw(Slot& s, const SearchAsk& ask) const {
  const int64_t n_nodes = ask.n_nodes(), last = first_ + n_cols();
  if (static_cast<int64_t>(ask.stream.size()) != n_nodes || static_cast<int64_t>(ask.draw_from.size()) != n_nodes ||
      static_cast<int64_t>(ask.draw_to.size()) != n_nodes || static_cast<int64_t>(ask.with_always.size()) != n_nodes ||
      static_cast<int64_t>(ask.feature_begin.size()) != n_nodes + 1 || ask.feature_begin.front() != 0)
    throw std::invalid_argument("a block's ask has draws of another size than its nodes");
  FeatureSampler& sampler = *s.sampler;
  s.features.clear();
  for (int64_t k = 0; k < n_nodes; ++k) {
    if (ask.draw_from[k] < 0 || ask.draw_to[k] < ask.draw_from[k] || ask.draw_to[k] > sampler.n_drawable())
      throw std::invalid_argument("a block's ask has draws beyond its columns'");
    if (ask.with_always[k])
      for (const int64_t f : always_)
        if (f >= first_ && f < last) s.features.push_back(f - first_);
    Rng rng(params_.seed, ask.stream[k]);
    for (int64_t d = 0; d < ask.draw_to[k]; ++d) {
      const int64_t f = sampler.next(rng);
      if (d >= ask.draw_from[k] && f >= first_ && f < last) s.features.push_back(f - first_);
    }
    sampler.reset();
    if (static_cast<int64_t>(s.features.size()) != ask.feature_begin[k + 1])
      throw std::invalid_argument("a block's ask counts other candidates than the block draws (another seed, "
                                  "feature_weights or always_features than the builder's?)");
  }
}

void ColumnBlock::search(int slot_index, const SearchAsk& ask, SearchAnswer& answer) {
  Slot& s = slot(slot_index, false);
  const int64_t n_nodes = ask.n_nodes(), nv = n_values();
  const bool bounded = !ask.lower.empty() || !ask.upper.empty();
  if (static_cast<int64_t>(ask.values.size()) != n_nodes * nv ||
      (bounded && (static_cast<int64_t>(ask.lower.size()) != n_nodes || static_cast<int64_t>(ask.upper.size()) != n_nodes)))
    throw std::invalid_argument("a block's ask has values or bounds of another size than its nodes");
  draw(s, ask);
  apply(s, ask.moves);
  check_ranges(ask.start, ask.end, s.rows.size(), false, "rows");
  const int64_t n_candidates = static_cast<int64_t>(s.features.size());
  answer.splits.assign(n_candidates, Split{kNoSplit});
  answer.varies.assign(n_candidates, 0);
  answer.reachable.assign(n_nodes, std::numeric_limits<double>::infinity());
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < n_nodes; ++k) {
    checkpoint();
    const SearchNode node{s.rows.data() + ask.start[k], ask.end[k] - ask.start[k], ask.values.data() + k * nv, 0,
                          bounded ? ask.lower[k] : -inf, bounded ? ask.upper[k] : inf};
    const int64_t f0 = ask.feature_begin[k];
    answer.reachable[k] = s.search->evaluate_features(node, s.features.data() + f0, ask.feature_begin[k + 1] - f0,
                                                        answer.splits.data() + f0, answer.varies.data() + f0);
  }
}

void ColumnBlock::partition(int slot_index, const PartitionAsk& ask, PartitionAnswer& answer) {
  Slot& s = slot(slot_index, false);
  const int64_t n_nodes = ask.n_nodes();
  if (static_cast<int64_t>(ask.start.size()) != n_nodes || static_cast<int64_t>(ask.oob_start.size()) != n_nodes)
    throw std::invalid_argument("a block's ask has ranges of another size than its splits");
  for (const Split& split : ask.splits) {
    if (split.feature < 0 || split.feature >= n_cols())
      throw std::invalid_argument("a block's ask names a column the block does not hold");
    const uint32_t codes = codes_->n_codes(split.feature) + (codes_->has_missing(split.feature) ? 1 : 0);
    if (!data_.categorical(split.feature) && (split.lo >= codes || split.hi >= codes || split.hi <= split.lo))
      throw std::invalid_argument("a block's ask holds a split outside its column's codes");
  }
  apply(s, ask.moves);
  check_ranges(ask.start, ask.end, s.rows.size(), false, "rows");
  check_ranges(ask.oob_start, ask.oob_end, s.oob.size(), true, "out-of-bag rows");
  // The nodes' rows go into the answer as they are parted here: this block's own move.
  Moves& own = answer.moves;
  own = Moves{ask.start, ask.end, ask.oob_start, ask.oob_end, {}, {}};
  answer.threshold.assign(n_nodes, 0.0);
  answer.missing_go_to_left.assign(n_nodes, 0);
  answer.categories.assign(n_nodes * kCategoryWords, 0);
  for (int64_t k = 0; k < n_nodes; ++k) {
    const Split& split = ask.splits[k];
    const int64_t f = split.feature;
    const bool categorical = data_.categorical(f);
    const uint32_t missing = codes_->missing_code(f);
    SplitWatch watch(split, missing);
    int64_t n_left = 0;
    codes_->visit_column(f, [&](auto col) {
      for (int64_t i = ask.start[k]; i < ask.end[k]; ++i) {
        const uint32_t row = s.rows[i], c = col[row];
        watch.see(row, c);
        const uint8_t left = static_cast<uint8_t>(row_goes_left(split, c, missing, categorical));
        own.row_left.push_back(left);
        n_left += left;
      }
    });
    const bool missing_left = missing_side(watch.n_missing, split.missing_left, n_left, ask.end[k] - ask.start[k] - n_left);
    answer.missing_go_to_left[k] = missing_left;
    double threshold = std::numeric_limits<double>::quiet_NaN();
    if (categorical) {
      left_categories(split, data_.category_of_code[f], answer.categories.data() + k * kCategoryWords);
    } else {
      threshold = threshold_between(watch, [&](int64_t row) { return source_->value(row, f); });
    }
    answer.threshold[k] = threshold;
    codes_->visit_column(f, [&](auto col) {
      for (int64_t i = ask.oob_start[k]; i < ask.oob_end[k]; ++i) {
        const uint32_t row = s.oob[i];
        own.oob_left.push_back(static_cast<uint8_t>(oob_goes_left(split, col[row], missing, categorical, threshold,
                                                                  missing_left, [&] { return source_->value(row, f); })));
      }
    });
  }
  apply(s, own);
}

ColumnRangeSource::ColumnRangeSource(const ColumnSource& whole, int64_t first, int64_t n_cols)
    : ColumnSource(whole.n_rows(), n_cols, whole.type(), layout_of(whole)), whole_(whole), first_(first) {}

int64_t ColumnRangeSource::panel_end(int64_t c0, int n_threads) const {
  return std::min(whole_.panel_end(first_ + c0, n_threads) - first_, n_cols());
}

MatrixView ColumnRangeSource::read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const {
  return whole_.read(first_ + c0, first_ + c1, buffer);
}

namespace {

std::vector<int64_t> even_bounds(int64_t p, int64_t blocks) {
  const int64_t k = std::max<int64_t>(std::min(blocks, p), 1);
  std::vector<int64_t> bounds(k + 1);
  for (int64_t b = 0; b <= k; ++b) bounds[b] = p * b / k;
  return bounds;
}

}  // namespace

LocalBlocks::LocalBlocks(const ColumnSource& X, const FitTargets& targets, const ForestParams& params,
                         const std::vector<double>& feature_weights)
    : ColumnBlocks(even_bounds(X.n_cols(), params.column_blocks), X.n_rows()) {
  if (X.csr_rows() != nullptr) throw std::invalid_argument("column_blocks needs X dense, CSC or packed (not CSR)");
  for (int64_t b = 0; b < n_blocks(); ++b) {
    auto source = std::make_shared<ColumnRangeSource>(X, first(b), first(b + 1) - first(b));
    blocks_.push_back(
        std::make_unique<ColumnBlock>(std::move(source), targets, params, first(b), X.n_cols(), feature_weights));
  }
}

void LocalBlocks::begin_tree(int slot, const std::vector<double>& w, double min_weight_leaf,
                             const std::vector<uint32_t>& oob) {
  for (auto& block : blocks_) block->begin_tree(slot, w.data(), min_weight_leaf, oob);
}

void LocalBlocks::search(int slot, const std::vector<SearchAsk>& asks, std::vector<SearchAnswer>& answers) {
  answers.resize(blocks_.size());
  for (size_t b = 0; b < blocks_.size(); ++b)
    if (asks[b].n_nodes() > 0) blocks_[b]->search(slot, asks[b], answers[b]);
}

void LocalBlocks::partition(int slot, const std::vector<PartitionAsk>& asks, std::vector<PartitionAnswer>& answers) {
  answers.resize(blocks_.size());
  for (size_t b = 0; b < blocks_.size(); ++b)
    if (asks[b].n_nodes() > 0) blocks_[b]->partition(slot, asks[b], answers[b]);
}

}  // namespace pyinterp
