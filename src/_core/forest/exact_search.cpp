#include "exact_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "../common/rank_sort.hpp"
#include "../data/radix.hpp"

namespace pyinterp {
namespace {

// A feature is searched by per-code counting (over the codes between its minimum and maximum in
// the node) when its column has at most kCountingRatio times the node's rows distinct values;
// otherwise the node's rows are ordered by code, by rank_sort for nodes of at most kSmallNode
// rows and by radix sort above.
constexpr int64_t kCountingRatio = 64;
// A histogram per code holds a sum per class slot (outputs x classes), which each code visited
// adds and clears: past kFewSlots slots a code costs about its slots in row visits, so the ratio
// is taken over codes times slots (sorting touches a slot per row). 20 trees on 20,000 rows of
// continuous columns: 256 classes 28.8 -> 17.0 s, 16 classes 2.6 -> 2.3 s, 2-4 unchanged. It also
// bounds the histograms: 20,000 classes over 40,000 codes took 6.4 GB a thread.
constexpr int32_t kFewSlots = 4;
constexpr int64_t kSmallNode = 32;
// Nodes of at most this many rows find the best split of their rows up front (see
// stops_at_best): classification by scoring every bipartition, regression by scoring the cuts in
// y order. Above 8 rows a candidate seldom reaches that split (a tree of iRF's lss50 forests
// evaluated 6.4 of its 7 candidates in nodes of 8-15 rows, 6.9 in nodes of 16-31), so finding it
// cost more than the candidates it saved.
constexpr int64_t kBoundedRows = 8;
// Candidates drawn at a time in a node that may stop at its first ones (stops_at_best): in iRF's
// lss50 forests such nodes evaluated 1.4 (2-3 rows) and 3.6 (4-7 rows) candidates on average.
constexpr int64_t kEarlyDraws = 2;
// Rows ahead whose code is prefetched during a gather (columns are larger than cache).
constexpr int64_t kPrefetch = 32;
// Histograms larger than this many bytes (a miss per row on this machine: cost_model.py) have
// the bin of the row kBinAhead ahead prefetched during a counting gather.
constexpr int64_t kCachedBins = int64_t{1} << 20;
constexpr int64_t kBinAhead = 16;
// The radix search's digits: at most kMaxDigitBits bits, and histograms of at most kFreeBuckets
// bins (or 4 per row of the node) in all.
constexpr int kMaxDigitBits = 11;
constexpr int64_t kFreeBuckets = 1024;
// Rows of the next candidate features prefetched while the current one is evaluated.
constexpr int64_t kLookahead = 64;

}  // namespace

ExactSplitSearch::ExactSplitSearch(const TrainingSet& data, const ForestParams& params)
    : data_(data), params_(params), sampler_(data.codes->n_cols(), data.feature_weights, params.always_features) {
  const int64_t n = data.codes->n_rows();
  lw_.resize(n);
  keys_.resize(n);
  keys64_.resize(n);
  radix_tmp_.resize(n);
  radix_hist_.resize(size_t{32 / kRadixBits} << kMaxDigitBits);
  hist_n_.assign(data.codes->max_n_codes(), 0);
  constant_node_.assign(data.codes->n_cols(), -1);
  constant_depth_.assign(data.codes->n_cols(), -1);
  if (!data.category_of_code.empty()) code_mean_.resize(kMaxCategories);
  occupied_.assign(data.codes->max_n_codes() / 64 + 1, 0);
  csr_ = data.source ? data.source->csr_rows() : nullptr;
  // The node lists take their codes from the entries' codes in X's order: without them (codes built
  // from another matrix than X's CSR) the columns are read.
  if (csr_ && data.codes->n_csr_codes() != csr_->slice_begin(n)) csr_ = nullptr;
  if (csr_) {
    int64_t stored = 0, columns = 0;
    for (int64_t j = 0; j < data.codes->n_cols(); ++j) {
      if (!data.codes->stored_sparse(j)) continue;
      stored += data.codes->n_stored(j);
      ++columns;
    }
    if (columns == 0) {
      csr_ = nullptr;
    } else {
      entries_per_column_ = static_cast<double>(stored) / static_cast<double>(columns);
      column_begin_.assign(data.codes->n_cols(), 0);
      column_end_.assign(data.codes->n_cols(), 0);
    }
  }
  const FitTargets& t = data.targets;
  const size_t n_codes = data.codes->max_n_codes();
  if (t.n_classes > 0) {
    code_cost_ = t.n_values() <= kFewSlots ? 1 : t.n_values();
    hist_bytes_ = static_cast<int64_t>(sizeof(double)) * t.n_values();
    lc_.resize(n * t.n_outputs);
    if (t.n_outputs > 1) llabel_.resize(n);
    // The features a node of all n rows could count, categorical ones always, and a missing bin.
    size_t counted_codes = 0;
    for (int64_t f = 0; f < data.codes->n_cols(); ++f)
      if (data.categorical(f) || counts(data.codes->n_codes(f) + 1, n))
        counted_codes = std::max<size_t>(counted_codes, data.codes->n_codes(f) + 1);
    hist_s_.assign(std::min(counted_codes, n_codes) * t.n_values(), 0.0);
    hist_class_.assign(n_codes, kEmpty);
    class_left_.resize(t.n_values());
    class_total_.resize(t.n_values());
    taken_.resize(t.n_values());
  } else {
    lwy_.resize(n * t.n_outputs);
    // One output: (weight, sum) pairs in hist_s_ (RegressionStats); several: weights apart.
    hist_s_.assign(n_codes * std::max<int32_t>(t.n_outputs, 2), 0.0);
    if (t.n_outputs > 1) hist_w_.assign(n_codes, 0.0);
    hist_bytes_ = static_cast<int64_t>(sizeof(double)) * (t.n_outputs + 1);
    if (t.n_outputs > 1) {
      output_left_.resize(t.n_outputs);
      output_total_.resize(t.n_outputs);
    }
  }
  if (params.criterion == Criterion::absolute_error) {
    y_rank_.resize(n * t.n_outputs);
    sorted_y_.resize(n * t.n_outputs);
    for (auto* f : {&fenwick_full_w_, &fenwick_full_wy_, &fenwick_left_w_, &fenwick_left_wy_, &fenwick_right_w_,
                    &fenwick_right_wy_})
      f->resize((n + 1) * t.n_outputs);
    output_left_.resize(t.n_outputs);
    output_total_.resize(t.n_outputs);
  }
}

bool ExactSplitSearch::counts(int64_t n_codes, int64_t m) const { return n_codes * code_cost_ <= kCountingRatio * m; }

void ExactSplitSearch::begin_tree(const double* w, double min_weight_leaf) {
  w_ = w;
  min_weight_leaf_ = min_weight_leaf;
  leaf_limits_ = params_.min_samples_leaf > 1 || min_weight_leaf > 0.0;
  std::fill(constant_depth_.begin(), constant_depth_.end(), -1);
  gathered_depth_ = -1;
  double total = 0.0;
  whole_weights_ = true;
  for (int64_t i = 0, n = data_.codes->n_rows(); i < n && whole_weights_; ++i) {
    whole_weights_ = w[i] == std::floor(w[i]);
    total += w[i];
  }
  whole_weights_ = whole_weights_ && total < 0x1p53;
}

// Gathering reads the node rows' entries twice; without it, each draw of a column stored sparse
// reads min(m, its entries) codes, each a cursor step or a lookup several times a gathered
// entry's cost, and a node draws at least max_features (deep nodes, where most drawn columns are
// constant, many times more).
bool ExactSplitSearch::gather_node_entries() {
  // A column's code read, in gathered entries (one tree at 0.5 %, 10 trees at 5 % below, one thread:
  // 8 gave 6.4 s and 6.1 s, 4 gave 6.6 s and 9.1 s, 16 gave 6.9 s and 5.8 s).
  constexpr double kReadCost = 8.0;
  // A descendant of the gathered node with at least a quarter of its rows reads its lists,
  // skipping the rows that left: splits of sparse columns mostly peel a few rows off a node, so
  // trees grow long spines of nodes that would each gather almost the same entries (single-cell
  // counts, 200,000 x 20,000 at 0.5 %: depth 1,572, one tree 12.4 -> 6.2 s; a half 6.4, an eighth 8.0).
  if (gathered_depth_ >= 0 && node_depth_ > gathered_depth_ && path_[gathered_depth_] == gathered_node_ &&
      4 * m_ >= gathered_m_)
    return true;
  gathered_depth_ = -1;
  const MatrixView& X = *csr_;
  int64_t total = 0;
  for (int64_t pos = 0; pos < m_; ++pos) total += X.slice_begin(rows_[pos] + 1) - X.slice_begin(rows_[pos]);
  const double reads =
      static_cast<double>(params_.max_features) * std::min(static_cast<double>(m_), entries_per_column_);
  if (static_cast<double>(total) > kReadCost * reads) return false;
  for (uint32_t j : touched_) column_begin_[j] = column_end_[j] = 0;  // the last gathered node's lists
  touched_.clear();
  if (X.index64) {
    gather_node_entries(static_cast<const int64_t*>(X.indptr), static_cast<const int64_t*>(X.indices));
  } else {
    gather_node_entries(static_cast<const int32_t*>(X.indptr), static_cast<const int32_t*>(X.indices));
  }
  if (node_depth_ >= 0) {
    gathered_node_ = node_;
    gathered_depth_ = node_depth_;
    gathered_m_ = m_;
  }
  return true;
}

template <class Index>
void ExactSplitSearch::gather_node_entries(const Index* indptr, const Index* indices) {
  const ColumnCodes& codes = *data_.codes;
  const uint32_t* rows = rows_;
  const int64_t m = m_;
  // f(column, position, entry) for each entry of the node's rows in a column stored sparse.
  auto for_each_entry = [&](auto&& f) {
    for (int64_t pos = 0; pos < m; ++pos) {
      if (pos + 2 < m) {  // the next rows' entries lie elsewhere: start loading them
        const char* next = reinterpret_cast<const char*>(indices + indptr[rows[pos + 2]]);
        const char* next_end = reinterpret_cast<const char*>(indices + indptr[rows[pos + 2] + 1]);
        for (; next < next_end; next += 64) __builtin_prefetch(next);
      }
      for (Index e = indptr[rows[pos]], end = indptr[rows[pos] + 1]; e < end; ++e)
        if (codes.stored_sparse(indices[e])) f(indices[e], pos, e);
    }
  };
  uint32_t* __restrict end = column_end_.data();
  for_each_entry([&](int64_t j, int64_t, Index) {  // counts, in column_end_
    if (end[j]++ == 0) touched_.push_back(static_cast<uint32_t>(j));
  });
  uint32_t at = 0;
  for (uint32_t j : touched_) {
    column_begin_[j] = at;
    at += end[j];
    end[j] = column_begin_[j];
  }
  node_rows_.resize(at);
  node_codes_.resize(at);
  uint32_t* __restrict listed_rows = node_rows_.data();
  uint32_t* __restrict listed_codes = node_codes_.data();
  codes.visit_csr_codes([&](const auto* __restrict entry_codes) {
    for_each_entry([&](int64_t j, int64_t pos, Index e) {
      listed_rows[end[j]] = rows[pos];
      listed_codes[end[j]++] = entry_codes[e];
    });
  });
}

void ExactSplitSearch::occupied_range(uint32_t end, uint32_t& cmin, uint32_t& cmax) const {
  const uint64_t* occupied = occupied_.data();
  uint32_t first = 0, last = (end - 1) >> 6;
  while (occupied[first] == 0) ++first;
  while (occupied[last] == 0) --last;
  cmin = (first << 6) + static_cast<uint32_t>(__builtin_ctzll(occupied[first]));
  cmax = (last << 6) + 63 - static_cast<uint32_t>(__builtin_clzll(occupied[last]));
}

ExactSplitSearch::NodePositions ExactSplitSearch::map_node_rows() {
  if (mapped_) return {row_slot_.data(), stamp_};
  mapped_ = true;
  if (row_slot_.empty()) row_slot_.assign(data_.codes->n_rows(), 0);
  if (++stamp_ == 0) {  // wrapped: no entry may keep a stamp that could match again
    std::fill(row_slot_.begin(), row_slot_.end(), 0);
    stamp_ = 1;
  }
  const uint64_t stamp = uint64_t{stamp_} << 32;
  for (int64_t pos = 0; pos < m_; ++pos) row_slot_[rows_[pos]] = stamp | static_cast<uint64_t>(pos);
  return {row_slot_.data(), stamp_};
}

void ExactSplitSearch::start_node(const SearchNode& node) {
  rows_ = node.rows;
  m_ = node.m;
  node_ = node.node;
  node_depth_ = node.depth;
  mapped_ = false;
  node_entries_ = csr_ ? -1 : 0;
  if (node_depth_ >= 0) {
    if (path_.size() <= static_cast<size_t>(node_depth_)) path_.resize(node_depth_ + 1);
    path_[node_depth_] = node_;
  }
  lower_ = node.lower;
  upper_ = node.upper;
  prepare_node(node.value);
}

double ExactSplitSearch::evaluate_features(const SearchNode& node, const int64_t* features, int64_t count, Split* out,
                                           uint8_t* varies) {
  start_node(node);
  double reachable = std::numeric_limits<double>::infinity();
  visit_split_stats(params_.criterion, data_.targets.n_outputs > 1, [&](auto tag) {
    auto stats = split_stats(tag);
    if (stops_at_best<decltype(stats)>()) reachable = reachable_proxy(stats);
    for (int64_t k = 0; k < count; ++k) {
      out[k] = Split{kNoSplit};
      varies[k] = evaluate_feature(features[k], stats, out[k]);
    }
  });
  return reachable;
}

Split ExactSplitSearch::find(const SearchNode& node) {
  Rng rng(params_.seed, node.stream);
  start_node(node);
  Split best{kNoSplit};
  visit_split_stats(params_.criterion, data_.targets.n_outputs > 1, [&](auto tag) {
    auto stats = split_stats(tag);
    search_candidates(stats, rng, best);
  });
  sampler_.reset();
  return best;
}

std::unique_ptr<SplitSearch> make_split_search(const TrainingSet& data, const ForestParams& params) {
  return std::make_unique<ExactSplitSearch>(data, params);
}

void ExactSplitSearch::rank_node_targets() {
  const int64_t m = m_;
  const uint32_t* rows = rows_;
  for (int32_t k = 0; k < data_.targets.n_outputs; ++k) {
    order_by_y(k);
    uint32_t* rank = y_rank_.data() + k * m;
    double* sorted = sorted_y_.data() + k * m;
    double* full_w = fenwick_full_w_.data() + k * (m + 1);
    double* full_wy = fenwick_full_wy_.data() + k * (m + 1);
    full_w[0] = full_wy[0] = 0.0;
    for (int64_t r = 0; r < m; ++r) {
      const uint32_t pos = by_y_[r];
      rank[pos] = static_cast<uint32_t>(r);
      sorted[r] = data_.targets.y_at(rows[pos], k);
      full_w[r + 1] = lw_[pos];
      full_wy[r + 1] = lw_[pos] * sorted[r];
    }
    // Linear-time Fenwick construction: each entry passes its partial sum to its parent.
    for (int64_t i = 1; i <= m; ++i) {
      const int64_t parent = i + (i & -i);
      if (parent <= m) {
        full_w[parent] += full_w[i];
        full_wy[parent] += full_wy[i];
      }
    }
  }
}

void ExactSplitSearch::order_by_y(int32_t k) {
  by_y_.resize(m_);
  for (int64_t pos = 0; pos < m_; ++pos) by_y_[pos] = static_cast<uint32_t>(pos);
  const uint32_t* rows = rows_;
  const FitTargets& t = data_.targets;
  std::sort(by_y_.begin(), by_y_.end(), [&](uint32_t a, uint32_t b) { return t.y_at(rows[a], k) < t.y_at(rows[b], k); });
}

void ExactSplitSearch::prepare_node(const double* value) {
  const int64_t m = m_;
  const FitTargets& t = data_.targets;
  const int32_t K = t.n_outputs;
  const uint32_t* idx = rows_;
  if (t.n_classes == 0) {
    // Squared error centres each output on the node's mean: its proxy is then well conditioned.
    const bool centred = params_.criterion == Criterion::squared_error;
    mean_y_ = centred ? value[0] : 0.0;
    // With the sums split_stats needs for one output (in position order, as it would add them).
    double total_w = 0.0, total_s = 0.0;
    for (int64_t pos = 0; pos < m; ++pos) {
      const uint32_t i = idx[pos];
      lw_[pos] = w_[i];
      for (int32_t k = 0; k < K; ++k) lwy_[pos * K + k] = w_[i] * (t.y_at(i, k) - (centred ? value[k] : 0.0));
      total_w += lw_[pos];
      total_s += lwy_[pos * K];
    }
    node_total_w_ = total_w;
    node_total_s_ = total_s;
    if (params_.criterion == Criterion::absolute_error) rank_node_targets();
  } else {
    std::fill(class_total_.begin(), class_total_.end(), 0.0);
    for (int64_t pos = 0; pos < m; ++pos) {
      const uint32_t i = idx[pos];
      lw_[pos] = w_[i];
      for (int32_t k = 0; k < K; ++k) {
        const int32_t slot = k * t.n_classes + t.class_at(i, k);
        lc_[pos * K + k] = slot;
        class_total_[slot] += w_[i];
      }
      if (K > 1) llabel_[pos] = t.labels[i];
    }
  }
}

template <bool Missing, class Column, class Stats>
bool ExactSplitSearch::evaluate(Column col, Stats& stats, int64_t feature, Split& best) {
  const int64_t m = m_;
  const uint32_t* idx = rows_;
  const uint32_t n_codes = data_.codes->n_codes(feature) + Missing;
  MissingRows missing{0, data_.codes->n_codes(feature), false};
  uint32_t cmin = std::numeric_limits<uint32_t>::max(), cmax = 0;  // over the rows with a value

  if constexpr (is_sparse_column<Column>::value) {
    // A sparse column's entries in the node (position, code; positions increasing): from the
    // node's lists, or the column's entries looked up in the map of the node's rows when they are
    // fewer than kLookupRatio times its rows (a cursor step costs about that many lookups:
    // 20,000 x 20,000 counts at 5 %, 10 trees, one thread: 13.4 s at 1, 10.3 at 8, 9.1 at 32).
    constexpr int64_t kLookupRatio = 32;
    // for_each visits at most `bound` entries.
    auto run = [&](uint32_t bound, auto&& for_each) {
      constexpr bool rest =
          std::is_same_v<Stats, ClassStats<false, false>> || std::is_same_v<Stats, ClassStats<true, false>>;
      if constexpr (rest)
        if (whole_weights_ && counts(n_codes, m)) return evaluate_entries(col, stats, feature, best, for_each);
      if constexpr (std::is_same_v<Stats, RegressionStats> || std::is_same_v<Stats, PoissonStats>)
        if (counts(n_codes, m)) return evaluate_entry_sums(col, stats, feature, best, for_each);
      // Otherwise the node's rows are read as usual, their codes from the entries in order.
      using Code = std::remove_cv_t<std::remove_reference_t<decltype(col.codes[0])>>;
      entry_rows_.resize(bound);
      entry_codes_.resize(static_cast<size_t>(bound) * sizeof(Code));
      auto* codes = reinterpret_cast<Code*>(entry_codes_.data());
      uint32_t n = 0;
      for_each([&](uint32_t pos, uint32_t c) {
        entry_rows_[n] = rows_[pos];
        codes[n++] = static_cast<Code>(c);
      });
      return evaluate<false>(NodeEntryColumn<Code>{entry_rows_.data(), codes, n, col.zero}, stats, feature, best);
    };
    if (!Missing && node_entries_ > 0) {
      const NodePositions position = map_node_rows();
      const uint32_t *rows = node_rows_.data(), *codes = node_codes_.data();
      const uint32_t begin = column_begin_[feature], end = column_end_[feature];
      return run(end - begin, [&](auto&& visit) {
        for (uint32_t k = begin; k < end; ++k)
          if (const int64_t pos = position(rows[k]); pos >= 0) visit(static_cast<uint32_t>(pos), codes[k]);
      });
    }
    if (!Missing && col.n_stored < kLookupRatio * m) {
      const NodePositions position = map_node_rows();
      return run(col.n_stored, [&](auto&& visit) {
        for (uint32_t e = 0; e < col.n_stored; ++e)
          if (const int64_t pos = position(col.rows[e]); pos >= 0) visit(static_cast<uint32_t>(pos), col.codes[e]);
      });
    }
  }
  if constexpr (Stats::kCounting) {
  if (counts(n_codes, m)) {
    // Histograms by code, filled as the codes are gathered; the missing rows' bin is not in the
    // bitmap. The loop is kept short (a copy of stats, the row counts only with leaf limits, the
    // codes' range read from the bitmap after it): in a small node its registers are the cost.
    uint64_t* occupied = occupied_.data();
    auto gather = [&](auto count_rows, auto prefetch_bins) {
      Stats local = stats;  // hist_add changes the histograms only
      uint32_t* counts = hist_n_.data();
      for (int64_t pos = 0; pos < m; ++pos) {
        if (pos + kPrefetch < m) __builtin_prefetch(code_address(col, idx[pos + kPrefetch]));
        if constexpr (decltype(prefetch_bins)::value)
          if (pos + kBinAhead < m) __builtin_prefetch(local.hist_address(col[idx[pos + kBinAhead]]), 1);
        const uint32_t c = col[idx[pos]];
        local.hist_add(c, pos);
        if (Missing && c == missing.code) {
          ++missing.rows;
          continue;
        }
        if constexpr (decltype(count_rows)::value) ++counts[c];
        occupied[c >> 6] |= uint64_t{1} << (c & 63);
      }
    };
    auto gather_rows = [&](auto prefetch_bins) {
      if (leaf_limits_) {
        gather(std::true_type{}, prefetch_bins);
      } else {
        gather(std::false_type{}, prefetch_bins);
      }
    };
    if (n_codes * hist_bytes_ > kCachedBins) {
      gather_rows(std::true_type{});
    } else {
      gather_rows(std::false_type{});
    }
    if (missing.rows < m) occupied_range(missing.code, cmin, cmax);
    if (missing.rows == m || (cmin == cmax && missing.rows == 0)) {
      if (missing.rows < m) {
        hist_n_[cmin] = 0;
        occupied[cmin >> 6] = 0;
        stats.hist_clear(cmin);
      }
      if (Missing) stats.hist_clear(missing.code);
      return false;
    }
    if (!Missing || missing.rows == 0) {
      scan_counts<false>(cmin, cmax, m, stats, feature, best, missing);
      return true;
    }
    // The first scan keeps the histograms for the second, which clears them.
    search_missing_sides(
        stats, m, feature, cmax, missing, best,
        [&](const MissingRows& side) {
          if (side.left) {
            scan_counts<false>(cmin, cmax, m, stats, feature, best, side);
          } else {
            scan_counts<true>(cmin, cmax, m, stats, feature, best, side);
          }
        },
        [&](Stats& alone) { alone.hist_peek(missing.code); });
    stats.hist_clear(missing.code);
    return true;
  }
  }

  // Order the node's rows by code (the missing code is the largest): keys are (code << pos_bits) | position.
  const int pos_bits = bit_width(static_cast<uint64_t>(m - 1));
  const int code_bits = bit_width(n_codes - 1);
  auto note = [&](uint32_t c) {
    if (Missing && c == missing.code) {
      ++missing.rows;
    } else {
      cmin = std::min(cmin, c);
      cmax = std::max(cmax, c);
    }
  };
  auto constant = [&] { return missing.rows == m || (cmin == cmax && missing.rows == 0); };
  auto scan = [&](const auto* keys, int bits) {
    if (!Missing || missing.rows == 0) return scan_sorted(keys, m, bits, stats, feature, best, missing);
    const auto mask = (decltype(keys[0] + 0){1} << bits) - 1;
    search_missing_sides(
        stats, m, feature, cmax, missing, best,
        [&](const MissingRows& side) { scan_sorted(keys, m, bits, stats, feature, best, side); },
        [&](Stats& alone) {
          for (int64_t k = m - missing.rows; k < m; ++k) alone.add(static_cast<int64_t>(keys[k] & mask));
        });
  };
  if (pos_bits + code_bits > 32) {
    for (int64_t pos = 0; pos < m; ++pos) {
      const uint32_t c = col[idx[pos]];
      keys64_[pos] = (static_cast<uint64_t>(c) << 32) | static_cast<uint64_t>(pos);
      note(c);
    }
    if (constant()) return false;
    std::sort(keys64_.begin(), keys64_.begin() + m);
    scan(keys64_.data(), 32);
    return true;
  }
  uint32_t* keys = keys_.data();
  if (m <= kSmallNode) {
    uint32_t* unsorted = radix_tmp_.data();
    for (int64_t pos = 0; pos < m; ++pos) {
      const uint32_t c = col[idx[pos]];
      unsorted[pos] = (c << pos_bits) | static_cast<uint32_t>(pos);
      note(c);
    }
    if (constant()) return false;
    rank_sort(unsorted, m, keys);
  } else {
    // Digits of up to kMaxDigitBits bits, as few passes as that allows (18-bit codes: 2 of 9 bits
    // rather than 3 of 8), unless the histograms would outweigh the node's rows.
    int passes = std::max(1, (code_bits + kMaxDigitBits - 1) / kMaxDigitBits);
    int digit_bits = (code_bits + passes - 1) / passes;
    while (digit_bits > kRadixBits && (int64_t{passes} << digit_bits) > std::max<int64_t>(kFreeBuckets, 4 * m)) {
      ++passes;
      digit_bits = (code_bits + passes - 1) / passes;
    }
    const uint32_t buckets = 1u << digit_bits, mask = buckets - 1;
    uint32_t* hist = radix_hist_.data();
    std::fill(hist, hist + passes * buckets, 0u);
    for (int64_t pos = 0; pos < m; ++pos) {
      if (pos + kPrefetch < m) __builtin_prefetch(code_address(col, idx[pos + kPrefetch]));
      const uint32_t c = col[idx[pos]];
      keys[pos] = (c << pos_bits) | static_cast<uint32_t>(pos);
      note(c);
      for (int d = 0; d < passes; ++d) ++hist[d * buckets + ((c >> (d * digit_bits)) & mask)];
    }
    if (constant()) return false;
    keys = radix_sort(keys, radix_tmp_.data(), m, passes, buckets, hist,
                      [pos_bits, digit_bits, mask](uint32_t key, int d) { return (key >> (pos_bits + d * digit_bits)) & mask; });
  }
  scan(keys, pos_bits);
  return true;
}

template <class Code, class Stats, class ForEach>
bool ExactSplitSearch::evaluate_entries(const SparseColumn<Code>& col, Stats& stats, int64_t feature, Split& best,
                                        ForEach&& for_each) {
  const int64_t m = m_;
  uint64_t* occupied = occupied_.data();
  double* taken = taken_.data();
  std::fill(taken, taken + data_.targets.n_classes, 0.0);
  int64_t found = 0;
  auto gather = [&](auto count_rows) {
    Stats local = stats;  // hist_add changes the histograms only
    uint32_t* counts = hist_n_.data();
    for_each([&](uint32_t pos, uint32_t c) {
      local.hist_add(c, pos);
      taken[lc_[pos]] += lw_[pos];
      if constexpr (decltype(count_rows)::value) ++counts[c];
      occupied[c >> 6] |= uint64_t{1} << (c & 63);
      ++found;
    });
  };
  if (leaf_limits_) {
    gather(std::true_type{});
  } else {
    gather(std::false_type{});
  }
  if (found < m) {
    stats.hist_add_rest(col.zero, taken);
    if (leaf_limits_) hist_n_[col.zero] += static_cast<uint32_t>(m - found);
    occupied[col.zero >> 6] |= uint64_t{1} << (col.zero & 63);
  }
  return scan_entry_bins(stats, feature, best);
}

template <class Code, class Stats, class ForEach>
bool ExactSplitSearch::evaluate_entry_sums(const SparseColumn<Code>& col, Stats& stats, int64_t feature, Split& best,
                                           ForEach&& for_each) {
  const int64_t m = m_;
  const double *lw = lw_.data(), *lwy = lwy_.data();
  uint64_t* occupied = occupied_.data();
  uint32_t* counts = hist_n_.data();
  const uint32_t zero = col.zero;
  double w0 = 0.0, s0 = 0.0;  // the zero's bin, summed in position order as the gather adds to it
  int64_t next = 0, others = 0;  // the first position not yet read; the entries of other codes
  auto gather = [&](auto count_rows) {
    Stats local = stats;  // hist_add changes the histograms only
    for_each([&](uint32_t pos, uint32_t c) {
      for (; next < pos; ++next) {
        w0 += lw[next];
        s0 += lwy[next];
      }
      next = pos + 1;
      if (c == zero) {  // an explicit zero stored as an entry
        w0 += lw[pos];
        s0 += lwy[pos];
        return;
      }
      local.hist_add(c, pos);
      if constexpr (decltype(count_rows)::value) ++counts[c];
      occupied[c >> 6] |= uint64_t{1} << (c & 63);
      ++others;
    });
    for (; next < m; ++next) {
      w0 += lw[next];
      s0 += lwy[next];
    }
  };
  if (leaf_limits_) {
    gather(std::true_type{});
  } else {
    gather(std::false_type{});
  }
  if (others < m) {
    stats.hist[2 * zero] += w0;  // the bin is 0.0, so it becomes the gather's sum exactly
    stats.hist[2 * zero + 1] += s0;
    if (leaf_limits_) counts[zero] += static_cast<uint32_t>(m - others);
    occupied[zero >> 6] |= uint64_t{1} << (zero & 63);
  }
  return scan_entry_bins(stats, feature, best);
}

template <class Stats>
bool ExactSplitSearch::scan_entry_bins(Stats& stats, int64_t feature, Split& best) {
  const MissingRows none{0, data_.codes->n_codes(feature), false};
  uint32_t cmin = 0, cmax = 0;
  occupied_range(none.code, cmin, cmax);
  if (cmin == cmax) {
    hist_n_[cmin] = 0;
    occupied_[cmin >> 6] = 0;
    stats.hist_clear(cmin);
    return false;
  }
  scan_counts<false>(cmin, cmax, m_, stats, feature, best, none);
  return true;
}

template <bool Missing, class Column, class Stats>
bool ExactSplitSearch::evaluate_categories(Column col, Stats& stats, int64_t feature, Split& best) {
  const int64_t m = m_;
  const uint32_t* idx = rows_;
  const uint32_t n_codes = data_.codes->n_codes(feature);
  MissingRows missing{0, n_codes, false};
  uint64_t* occupied = occupied_.data();
  uint32_t* counts = hist_n_.data();
  {
    Stats local = stats;  // hist_add changes the histograms only
    for (int64_t pos = 0; pos < m; ++pos) {
      const uint32_t c = col[idx[pos]];
      local.hist_add(c, pos);
      if (Missing && c == missing.code) {
        ++missing.rows;
        continue;
      }
      ++counts[c];
      occupied[c >> 6] |= uint64_t{1} << (c & 63);
    }
  }
  order_.clear();
  for (uint32_t word = 0; word < (n_codes + 63) / 64; ++word) {
    for (uint64_t bits = occupied[word]; bits != 0; bits &= bits - 1)
      order_.push_back((word << 6) + static_cast<uint32_t>(__builtin_ctzll(bits)));
    occupied[word] = 0;
  }
  if (order_.empty() || (order_.size() == 1 && missing.rows == 0)) {
    for (const uint32_t c : order_) {
      counts[c] = 0;
      stats.hist_clear(c);
    }
    if (Missing) stats.hist_clear(missing.code);
    return false;
  }
  for (const uint32_t c : order_) code_mean_[c] = stats.bucket_mean(c);
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    return code_mean_[a] < code_mean_[b] || (code_mean_[a] == code_mean_[b] && a < b);
  });
  if (!Missing || missing.rows == 0) {
    scan_categories<false>(m, stats, feature, best, missing);
    return true;
  }
  scan_categories<true>(m, stats, feature, best, missing);
  missing.left = true;
  scan_categories<false>(m, stats, feature, best, missing);
  stats.hist_clear(missing.code);
  return true;
}

template <bool Keep, class Stats>
void ExactSplitSearch::scan_categories(int64_t m, Stats stats, int64_t feature, Split& best,
                                       const MissingRows& missing) {
  uint32_t* counts = hist_n_.data();
  stats.reset();
  int64_t n_left = 0;
  if (missing.left) {
    stats.hist_peek(missing.code);
    n_left = missing.rows;
  }
  uint64_t prefix[kCategoryWords] = {};
  auto offer = [&] {
    if (!admissible(n_left, m, stats)) return;
    const double q = stats.proxy();
    if (q > best.proxy) {
      best = {q, feature, 0, 0, missing.left};
      std::copy(prefix, prefix + kCategoryWords, best.left_codes);
    }
  };
  for (size_t k = 0; k < order_.size(); ++k) {
    const uint32_t c = order_[k];
    if (k > 0) offer();
    n_left += counts[c];
    if (Keep) {
      stats.hist_peek(c);
    } else {
      stats.hist_take(c);
      counts[c] = 0;
    }
    add_category(prefix, c);
  }
  // Every code left, the missing rows right.
  if (missing.rows > 0 && !missing.left) offer();
}

template <class Stats, class Scan, class TakeMissing>
void ExactSplitSearch::search_missing_sides(const Stats& stats, int64_t m, int64_t feature, uint32_t cmax,
                                            MissingRows missing, Split& best, Scan&& scan,
                                            TakeMissing&& take_missing) {
  missing.left = false;
  scan(missing);
  // Observed | missing, scored with the missing rows as the left side (the proxies are symmetric).
  Stats alone = stats;
  alone.reset();
  take_missing(alone);
  if (admissible(missing.rows, m, alone)) {
    const double q = alone.proxy();
    if (q > best.proxy) best = {q, feature, cmax, missing.code, false};
  }
  missing.left = true;
  scan(missing);
}

template <class Stats>
double ExactSplitSearch::best_bipartition(Stats& stats, int64_t m) {
  // Every subset as the left side, so both orientations of each split are scored (their
  // proxies can differ by rounding).
  double best = kNoSplit;
  const uint32_t all = (1u << m) - 1;
  for (uint32_t left = 1; left < all; ++left) {
    stats.reset();
    for (int64_t pos = 0; pos < m; ++pos)
      if ((left >> pos) & 1u) stats.add(pos);
    best = std::max(best, stats.proxy());
  }
  return best;
}

double ExactSplitSearch::best_threshold_split(RegressionStats& stats, int64_t m) {
  // The best two-group split of weighted points on a line under squared error is a threshold
  // (Fisher 1958: each point belongs to the group with the nearer mean), so the best split of
  // any feature is at most the best cut of the rows ordered by y. Both orientations are scored.
  order_by_y(0);
  double best = kNoSplit;
  stats.reset();
  for (int64_t k = 0; k + 1 < m; ++k) {
    stats.add(by_y_[k]);
    best = std::max(best, stats.proxy());
  }
  stats.reset();
  for (int64_t k = m - 1; k > 0; --k) {
    stats.add(by_y_[k]);
    best = std::max(best, stats.proxy());
  }
  return best;
}

template <bool Keep, class Stats>
void ExactSplitSearch::scan_counts(uint32_t cmin, uint32_t cmax, int64_t m, Stats stats, int64_t feature, Split& best,
                                   const MissingRows& missing) {
  uint64_t* occupied = occupied_.data();
  stats.reset();
  int64_t n_left = 0;
  if (missing.left) {
    stats.hist_peek(missing.code);
    n_left = missing.rows;
  }
  uint32_t prev = cmin;
  int32_t prev_class = kMixed;
  // Visit the occupied codes through the bitmap: most codes in the range are absent from a small
  // node, and testing each one costs a hard-to-predict branch.
  for (uint32_t word = cmin >> 6; word <= cmax >> 6; ++word) {
    uint64_t bits = occupied[word];
    if (!Keep) occupied[word] = 0;
    while (bits != 0) {
      const uint32_t c = (word << 6) + static_cast<uint32_t>(__builtin_ctzll(bits));
      bits &= bits - 1;
      const int32_t cls = stats.bucket_class(c);
      if (c != cmin && (every_boundary() || cls == kMixed || cls != prev_class) &&
          (!leaf_limits_ || admissible(n_left, m, stats)) && (cst_ == 0 || monotone(stats))) {
        const double q = stats.proxy();
        if (q > best.proxy) best = {q, feature, prev, c, missing.left};
      }
      if (leaf_limits_) {
        n_left += hist_n_[c];
        if (!Keep) hist_n_[c] = 0;
      }
      if (Keep) {
        stats.hist_peek(c);
      } else {
        stats.hist_take(c);
      }
      prev = c;
      prev_class = cls;
    }
  }
}

template <class Key, class Stats>
void ExactSplitSearch::scan_sorted(const Key* keys, int64_t m, int pos_bits, Stats stats, int64_t feature,
                                   Split& best, const MissingRows& missing) {
  const int64_t msl = params_.min_samples_leaf;
  const Key pos_mask = (Key{1} << pos_bits) - 1;
  const int64_t n_valued = m - missing.rows;  // rows with a value come first
  stats.reset();
  if (missing.left)
    for (int64_t k = n_valued; k < m; ++k) stats.add(static_cast<int64_t>(keys[k] & pos_mask));
  const int64_t left_missing = missing.left ? missing.rows : 0, right_missing = missing.rows - left_missing;
  int64_t k = 0;
  int32_t prev_class = kMixed;
  while (k < n_valued) {
    const Key c = keys[k] >> pos_bits;
    int64_t group_end = k;
    int32_t cls = kEmpty;
    do {
      if constexpr (Stats::kClasses)
        cls = merge_class(cls, stats.row_class(static_cast<int64_t>(keys[group_end] & pos_mask)));
      ++group_end;
    } while (group_end < n_valued && (keys[group_end] >> pos_bits) == c);
    if (!Stats::kClasses) cls = kMixed;
    // Boundary between the previous group and this one (rows [0, k) on the left).
    if (k > 0 && (every_boundary() || cls == kMixed || cls != prev_class) && admissible(k + left_missing, m, stats) &&
        (cst_ == 0 || monotone(stats))) {
      const double q = stats.proxy();
      if (q > best.proxy)
        best = {q, feature, static_cast<uint32_t>(keys[k - 1] >> pos_bits), static_cast<uint32_t>(c), missing.left};
    }
    if (n_valued - k + right_missing < msl) break;
    for (; k < group_end; ++k) stats.add(static_cast<int64_t>(keys[k] & pos_mask));
    prev_class = cls;
  }
}

RegressionStats ExactSplitSearch::split_stats(StatsTag<RegressionStats>) {
  RegressionStats stats{lw_.data(), lwy_.data(), hist_s_.data()};
  stats.mean = mean_y_;
  stats.total_w = node_total_w_;
  stats.total_s = node_total_s_;
  return stats;
}

PoissonStats ExactSplitSearch::split_stats(StatsTag<PoissonStats>) {
  return {split_stats(StatsTag<RegressionStats>{})};
}

template <class Output>
double ExactSplitSearch::output_totals(Output output) {
  const int32_t K = data_.targets.n_outputs;
  std::fill(output_total_.begin(), output_total_.end(), 0.0);
  double total_w = 0.0;
  for (int64_t pos = 0; pos < m_; ++pos) {
    total_w += lw_[pos];
    for (int32_t k = 0; k < K; ++k) output_total_[k] += output(pos, k);
  }
  return total_w;
}

MultiRegressionStats ExactSplitSearch::split_stats(StatsTag<MultiRegressionStats>) {
  const int32_t K = data_.targets.n_outputs;
  MultiRegressionStats stats{lw_.data(), lwy_.data(), hist_w_.data(), hist_s_.data(), output_total_.data(),
                             output_left_.data(), K};
  stats.total_w = output_totals([&](int64_t pos, int32_t k) { return lwy_[pos * K + k]; });
  return stats;
}

MultiPoissonStats ExactSplitSearch::split_stats(StatsTag<MultiPoissonStats>) {
  return {split_stats(StatsTag<MultiRegressionStats>{})};
}

AbsoluteErrorStats ExactSplitSearch::split_stats(StatsTag<AbsoluteErrorStats>) {
  const int64_t m = m_;
  const int32_t K = data_.targets.n_outputs;
  AbsoluteErrorStats stats{lw_.data(),
                           y_rank_.data(),
                           sorted_y_.data(),
                           fenwick_left_w_.data(),
                           fenwick_left_wy_.data(),
                           fenwick_right_w_.data(),
                           fenwick_right_wy_.data(),
                           fenwick_full_w_.data(),
                           fenwick_full_wy_.data(),
                           output_total_.data(),
                           output_left_.data(),
                           m,
                           K};
  stats.total_w =
      output_totals([&](int64_t pos, int32_t k) { return lw_[pos] * sorted_y_[k * m + y_rank_[k * m + pos]]; });
  return stats;
}

template <bool Entropy, bool Multi>
ClassStats<Entropy, Multi> ExactSplitSearch::split_stats(StatsTag<ClassStats<Entropy, Multi>>) {
  const FitTargets& t = data_.targets;
  ClassStats<Entropy, Multi> stats{lw_.data(),         lc_.data(),         llabel_.data(),     hist_class_.data(),
                                   hist_s_.data(),     class_left_.data(), class_total_.data(), t.n_values(),
                                   t.n_outputs};
  // The first output's class sums hold each row once.
  for (int32_t k = 0; k < t.n_classes; ++k) stats.total_w += class_total_[k];
  return stats;
}

// In a node of a few rows, a candidate often makes the best of all splits of those rows; a later
// candidate could at most tie (and ties keep the first), so the search stops there and the split
// is the one the full search would pick (each node draws from its own stream, so the draws it
// skips change no other node's). Leaf-size limits may exclude that split, so
// they turn this off. A candidate's proxy sums the same rows in another order than this bound
// did, so regression accepts it within that rounding (4 m ulps).
template <class Stats>
bool ExactSplitSearch::stops_at_best() const {
  return Stats::kBounded && m_ <= kBoundedRows && !leaf_limits_;
}

template <class Stats>
double ExactSplitSearch::reachable_proxy(Stats& stats) {
  const int64_t m = m_;
  if constexpr (Stats::kClasses) {
    return best_bipartition(stats, m);
  } else if constexpr (std::is_same_v<Stats, RegressionStats>) {
    return best_threshold_split(stats, m) * (1.0 - 4.0 * static_cast<double>(m) * kEpsilon);
  } else {
    return std::numeric_limits<double>::infinity();
  }
}

bool ExactSplitSearch::draw_candidates(int64_t need, Rng& rng) {
  candidates_.clear();
  for (; need > 0; --need) {
    const int64_t f = sampler_.next(rng);
    if (f < 0) return false;
    candidates_.push_back(f);
  }
  return true;
}

template <class Stats>
bool ExactSplitSearch::evaluate_feature(int64_t f, Stats& stats, Split& best) {
  if (known_constant(f)) return false;
  const bool no_entries = node_entries_ != 0 && data_.codes->stored_sparse(f) && use_node_entries() &&
                          column_end_[f] == column_begin_[f];
  const bool varies = !no_entries && evaluate_feature_codes(f, stats, best);
  if (!varies && node_depth_ >= 0) {
    constant_node_[f] = node_;
    constant_depth_[f] = node_depth_;
  }
  return varies;
}

template <class Stats>
bool ExactSplitSearch::evaluate_feature_codes(int64_t f, Stats& stats, Split& best) {
  const ColumnCodes& codes = *data_.codes;
  cst_ = params_.monotonic_cst.empty() ? 0 : params_.monotonic_cst[f];
  if constexpr (Stats::kCategorical) {
    if (data_.categorical(f))
      return codes.visit_column(f, [&](auto col) {
        return codes.has_missing(f) ? evaluate_categories<true>(col, stats, f, best)
                                    : evaluate_categories<false>(col, stats, f, best);
      });
  }
  return codes.visit_column(f, [&](auto col) {
    return codes.has_missing(f) ? evaluate<true>(col, stats, f, best) : evaluate<false>(col, stats, f, best);
  });
}

template <class Stats>
void ExactSplitSearch::search_candidates(Stats& stats, Rng& rng, Split& best) {
  const int64_t m = m_;
  const uint32_t* idx = rows_;
  const int64_t n_ahead = std::min<int64_t>(m, kLookahead);
  const bool stop_at_best = stops_at_best<Stats>();
  const double reachable = stop_at_best ? reachable_proxy(stats) : std::numeric_limits<double>::infinity();
  // Gathers are cache misses. Candidates are drawn in batches of as many as are still needed, and
  // the rows of the next candidates are prefetched while one is evaluated: about kLookahead rows
  // in flight, which in a small node spans several candidates. Nodes that tend to stop at their
  // first candidates draw them kEarlyDraws at a time and prefetch little ahead: a draw they do not
  // use is wasted (weighted, a descent of the sampler's tree and its undoing).
  const size_t depth = stop_at_best ? 1 : static_cast<size_t>(std::max<int64_t>(1, kLookahead / m));
  const int64_t batch = stop_at_best ? kEarlyDraws : params_.max_features;
  // The features searched at every node come first (a tie keeps them) and do not count against
  // max_features.
  // With two rows every separating candidate makes the same split; the proxies of its two
  // orientations may differ in the last bit, so that case does not rely on `reachable`. (A
  // monotonic constraint may refuse a candidate's split, so the search stops at a split taken.)
  CandidatePick pick{params_.max_features, reachable, m == 2};
  auto offer = [&](int64_t f, bool drawn) {
    Split own{kNoSplit};
    const bool varies = evaluate_feature(f, stats, own);
    return pick.offer(varies, own, drawn);
  };
  const std::vector<int64_t>& always = params_.always_features;
  bool done = false;
  for (size_t a = 0; a < always.size() && !done; ++a) {
    if (a + 1 < always.size()) data_.codes->prefetch(always[a + 1], idx, n_ahead);
    done = offer(always[a], false);
  }
  bool exhausted = false;
  candidates_.clear();
  size_t k = 0, prefetched = 0;
  while (!done) {
    if (k == candidates_.size()) {
      if (exhausted) break;
      exhausted = !draw_candidates(std::min(batch, params_.max_features - pick.n_varying), rng);
      k = prefetched = 0;
      if (candidates_.empty()) break;
    }
    for (; prefetched < candidates_.size() && prefetched <= k + depth; ++prefetched)
      data_.codes->prefetch(candidates_[prefetched], idx, n_ahead);
    done = offer(candidates_[k++], true);
  }
  best = pick.best;
}

}  // namespace pyinterp
